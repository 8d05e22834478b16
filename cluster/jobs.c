#include "cluster/jobs.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cluster/jobsInt.h"
#include "common/units.h"

static char *trim(char *s)
{
    while (isspace((unsigned char)*s))
        s++;
    size_t n = strlen(s);
    while (n > 0 && isspace((unsigned char)s[n - 1]))
        s[--n] = '\0';
    if (n >= 2 && s[0] == '"' && s[n - 1] == '"') { /* "name" -> name */
        s[n - 1] = '\0';
        s++;
    }
    return s;
}

/* Split line at commas. false when it has more than MAX_FIELDS. */
static bool split(char *line, fields_t *out)
{
    out->n = 0;
    for (char *p = line;;) {
        if (out->n == MAX_FIELDS)
            return false;
        char *c = strchr(p, ',');
        if (c)
            *c = '\0';
        out->f[out->n++] = trim(p);
        if (!c)
            return true;
        p = c + 1;
    }
}

static int bad(const rd_t *r, const char *field, const char *fmt, const char *value)
{
    char where[64];
    snprintf(where, sizeof where, "line %d", r->line);
    char reason[256];
    snprintf(reason, sizeof reason, fmt, value);
    return err_set(r->err, ERR_INPUT, "%s: %s: %s: %s", r->path, where, field, reason);
}

/* A number in [lo, hi] from text; names the field when it is not one. */
static int num(const rd_t *r, const char *field, const char *text, double lo, double hi,
               double *out)
{
    if (!text || !*text)
        return bad(r, field, "empty%s",
                   r->last_unterminated ? " (the file ends mid-line: cut short?)" : "");
    char *end;
    errno = 0;
    double v = strtod(text, &end);
    if (end == text || *end || !isfinite(v))
        return bad(r, field, "not a number (got '%s')", text);
    if (v < lo || v > hi) {
        char msg[160];
        snprintf(msg, sizeof msg, "out of range [%g, %g] (got '%%s')", lo, hi);
        return bad(r, field, msg, text);
    }
    *out = v;
    return ERR_OK;
}

/* A token count: 20B, 1.5T, 3e11 (common/units.h), at least 1. */
static int count(const rd_t *r, const char *field, const char *text, double *out)
{
    err_t e;
    if (units_parse_count(text, field, out, &e) || !(*out >= 1) || *out > 1e18)
        return bad(r, field, "not a token count of 1 to 1e18 (got '%s'; 20B, 1.5T, 3e11)", text);
    return ERR_OK;
}

/* text, a count of units of unit_ms milliseconds, as milliseconds. */
static int units_to_ms(const rd_t *r, const char *field, const char *text, bool positive,
                       double unit_ms, int64_t *out)
{
    double x;
    int rc = num(r, field, text, 0, (double)CJOBS_MAX_MS / unit_ms, &x);
    if (rc)
        return rc;
    *out = (int64_t)llround(x * unit_ms);
    if (positive && *out <= 0)
        return bad(r, field, "must be above 0 (got '%s')", text);
    return ERR_OK;
}

static int to_ms(const rd_t *r, const char *field, const char *text, bool positive, int64_t *out)
{
    return units_to_ms(r, field, text, positive, 1000.0, out);
}

static int yes_no(const rd_t *r, const char *field, const char *text, bool *out)
{
    static const char *yes[] = {"yes", "y", "1", "true"}, *no[] = {"no", "n", "0", "false"};
    for (int i = 0; i < 4; i++) {
        if (strcasecmp(text, yes[i]) == 0)
            return *out = true, ERR_OK;
        if (strcasecmp(text, no[i]) == 0)
            return *out = false, ERR_OK;
    }
    return bad(r, field, "must be yes or no (got '%s')", text);
}

int cjobs_add(cjobs_t *l, const cjob_t *j, err_t *err)
{
    if (l->n == l->cap) {
        int cap = l->cap ? 2 * l->cap : 64;
        cjob_t *g = realloc(l->jobs, (size_t)cap * sizeof *g);
        if (!g)
            return err_set(err, ERR_RUNTIME, "out of memory reading %d jobs", l->n);
        l->jobs = g;
        l->cap = cap;
    }
    cjob_t *d = &l->jobs[l->n];
    *d = *j;
    d->name = strdup(j->name ? j->name : "");
    d->model = j->model ? strdup(j->model) : NULL;
    d->gpu_type = j->gpu_type ? strdup(j->gpu_type) : NULL;
    d->vc = j->vc ? strdup(j->vc) : NULL;
    d->team = j->team ? strdup(j->team) : NULL;
    if (!d->name || (j->model && !d->model) || (j->gpu_type && !d->gpu_type) ||
        (j->vc && !d->vc) || (j->team && !d->team)) {
        free(d->name);
        free(d->model);
        free(d->gpu_type);
        free(d->vc);
        free(d->team);
        return err_set(err, ERR_RUNTIME, "out of memory reading %d jobs", l->n);
    }
    l->n++;
    return ERR_OK;
}

void cjobs_free(cjobs_t *l)
{
    if (!l)
        return;
    for (int i = 0; i < l->n; i++) {
        free(l->jobs[i].name);
        free(l->jobs[i].model);
        free(l->jobs[i].gpu_type);
        free(l->jobs[i].vc);
        free(l->jobs[i].team);
    }
    free(l->jobs);
    free(l->path);
    memset(l, 0, sizeof *l);
}

static int column_index(const fields_t *hdr, const char *name)
{
    for (int i = 0; i < hdr->n; i++)
        if (strcasecmp(hdr->f[i], name) == 0)
            return i;
    return -1;
}

static const char *cell(const fields_t *row, const fields_t *hdr, const char *name)
{
    int i = column_index(hdr, name);
    return i < 0 || i >= row->n ? NULL : row->f[i];
}

static int need(const rd_t *r, const fields_t *row, const fields_t *hdr, const char *name,
                const char **out)
{
    int i = column_index(hdr, name);
    if (i < 0)
        return bad(r, name, "missing: the header has no such column%s", "");
    if (i >= row->n)
        return bad(r, name, "missing: the row has %s fields", r->last_unterminated
                       ? "too few (the file ends mid-line: cut short?)" : "too few");
    *out = row->f[i];
    if (!**out)
        return bad(r, name, "empty%s", "");
    return ERR_OK;
}

static int gpus_of(const rd_t *r, const char *field, const char *text, int *out)
{
    double g;
    int rc = num(r, field, text, 1, CJOBS_MAX_GPUS, &g);
    if (!rc && g != floor(g))
        rc = bad(r, field, "must be a whole number of GPUs (got '%s')", text);
    if (!rc)
        *out = (int)g;
    return rc;
}

/* The optional min_gpus, max_gpus of a row (each defaults to gpus):
 * min <= gpus <= max. */
static int gpu_range(const rd_t *r, const fields_t *row, const fields_t *hdr, cjob_t *j)
{
    const char *lo = cell(row, hdr, "min_gpus"), *hi = cell(row, hdr, "max_gpus");
    int rc;
    j->min_gpus = j->max_gpus = j->gpus;
    if ((lo && *lo && (rc = gpus_of(r, "min_gpus", lo, &j->min_gpus))) ||
        (hi && *hi && (rc = gpus_of(r, "max_gpus", hi, &j->max_gpus))))
        return rc;
    if (j->min_gpus > j->gpus)
        return bad(r, "min_gpus", "above gpus (got '%s')", lo);
    if (j->max_gpus < j->gpus)
        return bad(r, "max_gpus", "below gpus (got '%s')", hi);
    return ERR_OK;
}

/* One row of the jobs format. */
static int row_jobs(const rd_t *r, const fields_t *row, const fields_t *hdr, cjob_t *j,
                    char **scratch)
{
    (void)scratch;
    const char *name, *gpus, *submit, *v;
    int rc;
    if ((rc = need(r, row, hdr, "name", &name)) || (rc = need(r, row, hdr, "gpus", &gpus)) ||
        (rc = need(r, row, hdr, "submit_s", &submit)))
        return rc;
    j->name = (char *)name;
    if ((rc = gpus_of(r, "gpus", gpus, &j->gpus)) ||
        (rc = to_ms(r, "submit_s", submit, false, &j->submit_ms)))
        return rc;
    const char *dur = cell(row, hdr, "duration_s"), *model = cell(row, hdr, "model"),
               *tokens = cell(row, hdr, "tokens");
    if (dur && *dur) {
        if ((rc = to_ms(r, "duration_s", dur, true, &j->duration_ms)))
            return rc;
    } else if (model && *model) {
        j->model = (char *)model;
        if ((rc = need(r, row, hdr, "tokens", &tokens)))
            return rc;
    } else {
        return bad(r, "duration_s", "empty: give duration_s, or model and tokens%s", "");
    }
    if (tokens && *tokens && (rc = count(r, "tokens", tokens, &j->tokens)))
        return rc;
    double prio = 0;
    if ((v = cell(row, hdr, "priority")) && *v && (rc = num(r, "priority", v, -1e6, 1e6, &prio)))
        return rc;
    if (prio != floor(prio))
        return bad(r, "priority", "must be a whole number (got '%s')", v);
    j->priority = (int)prio;
    j->preemptible = true;
    if ((v = cell(row, hdr, "preemptible")) && *v &&
        (rc = yes_no(r, "preemptible", v, &j->preemptible)))
        return rc;
    if ((v = cell(row, hdr, "gpu")) && *v)
        j->gpu_type = (char *)v;
    if ((v = cell(row, hdr, "team")) && *v)
        j->team = (char *)v;
    if ((v = cell(row, hdr, "deadline_s")) && *v &&
        (rc = to_ms(r, "deadline_s", v, false, &j->deadline_ms)))
        return rc;
    if (v && *v && j->deadline_ms <= j->submit_ms)
        return bad(r, "deadline_s", "in the past: not after the job's submit_s (got '%s')", v);
    if ((v = cell(row, hdr, "checkpoint_s")) && *v &&
        (rc = to_ms(r, "checkpoint_s", v, true, &j->checkpoint_ms)))
        return rc;
    return gpu_range(r, row, hdr, j);
}

/* One row of the Tiresias simulator's trace, its times in units of unit_ms:
 * the columns its README lists. */
static int row_tiresias_in(const rd_t *r, const fields_t *row, const fields_t *hdr, cjob_t *j,
                           char **scratch, double unit_ms)
{
    const char *id, *gpus, *submit, *dur, *model;
    int rc;
    if ((rc = need(r, row, hdr, "job_id", &id)) || (rc = need(r, row, hdr, "num_gpu", &gpus)) ||
        (rc = need(r, row, hdr, "submit_time", &submit)) ||
        (rc = need(r, row, hdr, "duration", &dur)) ||
        (rc = need(r, row, hdr, "model_name", &model)))
        return rc;
    if ((rc = gpus_of(r, "num_gpu", gpus, &j->gpus)) ||
        (rc = units_to_ms(r, "submit_time", submit, false, unit_ms, &j->submit_ms)) ||
        (rc = units_to_ms(r, "duration", dur, true, unit_ms, &j->duration_ms)))
        return rc;
    size_t n = strlen(id) + strlen(model) + 2;
    char *nm = malloc(n);
    if (!nm)
        return err_set(r->err, ERR_RUNTIME, "out of memory");
    snprintf(nm, n, "%s-%s", id, model); /* "7-resnet152": the id and what it trains */
    *scratch = nm;
    j->name = nm;
    j->preemptible = true; /* Tiresias preempts every job */
    return ERR_OK;
}

/* The Tiresias simulator's own trace: seconds. */
static int row_tiresias(const rd_t *r, const fields_t *row, const fields_t *hdr, cjob_t *j,
                        char **scratch)
{
    return row_tiresias_in(r, row, hdr, j, scratch, 1000.0);
}

/* Muri's simulator (Rivendile/Muri, adapted from Tiresias's) reads the same
 * columns in milliseconds: its simulator/jobs.py divides submit_time and
 * duration by 1000 (@ 4e69a78). */
static int row_muri(const rd_t *r, const fields_t *row, const fields_t *hdr, cjob_t *j,
                    char **scratch)
{
    return row_tiresias_in(r, row, hdr, j, scratch, 1.0);
}

/* The header's required columns, checked before any row. */
static int check_header(const char *path, const fields_t *hdr, const char *const *required,
                        err_t *err)
{
    for (int i = 0; required[i]; i++)
        if (column_index(hdr, required[i]) < 0)
            return err_setf(err, ERR_INPUT, path, "line 1",
                            "the header has no column '%s' (required)", required[i]);
    return ERR_OK;
}

/* The header line t: kept in *text (owned) and split into hdr. */
static int read_header(const rd_t *r, const char *t, char **text, fields_t *hdr,
                       const char *const *required)
{
    if (!(*text = strdup(t)))
        return err_set(r->err, ERR_RUNTIME, "out of memory");
    if (!split(*text, hdr))
        return bad(r, "header", "more than %s columns", "32");
    return check_header(r->path, hdr, required, r->err);
}

/* One data line t: its fields checked against the header, read by fn and
 * added to out. */
static int read_row(const rd_t *r, char *t, const fields_t *hdr, row_fn fn, cjobs_t *out)
{
    fields_t row;
    if (!split(t, &row) || row.n > hdr->n)
        return bad(r, "row", "more fields than the header's %s", "columns");
    if (row.n < hdr->n && r->last_unterminated)
        return bad(r, hdr->f[row.n], "missing: the file ends mid-line (%s)", "cut short?");
    cjob_t j = {0};
    char *scratch = NULL;
    j.line = r->line;
    j.trace_start_ms = -1;
    int rc = fn(r, &row, hdr, &j, &scratch);
    if (rc == CJOBS_ROW_SKIP) /* a trace record that is not replayed */
        out->skipped++, rc = ERR_OK;
    else if (!rc)
        rc = cjobs_add(out, &j, r->err);
    free(scratch);
    return rc;
}

/* Read every row of path with fn after checking the header. */
static int read_rows(const char *path, const char *const *required, row_fn fn, cjobs_t *out,
                     err_t *err)
{
    memset(out, 0, sizeof *out);
    FILE *f = fopen(path, "r");
    if (!f)
        return err_setf(err, ERR_INPUT, path, NULL, "cannot open: %s", strerror(errno));
    char *line = NULL, *hdr_text = NULL;
    size_t cap = 0;
    ssize_t len;
    fields_t hdr = {0};
    rd_t r = {path, 0, false, err};
    long declared = -1;
    int rc = ERR_OK;
    while (!rc && (len = getline(&line, &cap, f)) >= 0) {
        r.line++;
        r.last_unterminated = len == 0 || line[len - 1] != '\n';
        line[strcspn(line, "\r\n")] = '\0';
        char *t = trim(line);
        if (!hdr_text && sscanf(t, "# jobs: %ld", &declared) == 1)
            continue;
        if (!*t || *t == '#')
            continue;
        rc = hdr_text ? read_row(&r, t, &hdr, fn, out)
                      : read_header(&r, t, &hdr_text, &hdr, required);
    }
    if (!rc && ferror(f))
        rc = err_setf(err, ERR_INPUT, path, NULL, "read error");
    if (!rc && !hdr_text)
        rc = err_setf(err, ERR_INPUT, path, NULL, "no header line: the file is empty");
    if (!rc && declared >= 0 && declared != out->n)
        rc = err_setf(err, ERR_INPUT, path, "# jobs",
                      "the file declares %ld jobs but has %d: cut short?", declared, out->n);
    if (!rc && out->n == 0)
        rc = err_setf(err, ERR_INPUT, path, NULL, "no jobs after the header");
    free(line);
    free(hdr_text);
    fclose(f);
    if (!rc && !(out->path = strdup(path)))
        rc = err_set(err, ERR_RUNTIME, "out of memory");
    if (rc)
        cjobs_free(out);
    return rc;
}

int cjobs_read_jobs(const char *path, cjobs_t *out, err_t *err)
{
    static const char *const req[] = {"name", "gpus", "submit_s", NULL};
    return read_rows(path, req, row_jobs, out, err);
}

int cjobs_read_tiresias(const char *path, cjobs_t *out, err_t *err)
{
    static const char *const req[] = {"job_id", "num_gpu", "submit_time", "model_name",
                                      "duration", NULL};
    return read_rows(path, req, row_tiresias, out, err);
}

int cjobs_read_muri(const char *path, cjobs_t *out, err_t *err)
{
    static const char *const req[] = {"job_id", "num_gpu", "submit_time", "model_name",
                                      "duration", NULL};
    return read_rows(path, req, row_muri, out, err);
}

/* The shared row machinery, for the trace readers (cluster/jobsInt.h). */
int cjobs_int_read_rows(const char *path, const char *const *required, cjobs_row_fn fn,
                        cjobs_t *out, err_t *err)
{
    return read_rows(path, required, fn, out, err);
}

bool cjobs_int_split(char *line, cjobs_fields_t *out)
{
    return split(line, out);
}

int cjobs_int_bad(const cjobs_rd_t *r, const char *field, const char *fmt, const char *value)
{
    return bad(r, field, fmt, value);
}

int cjobs_int_num(const cjobs_rd_t *r, const char *field, const char *text, double lo,
                  double hi, double *out)
{
    return num(r, field, text, lo, hi, out);
}

int cjobs_int_need(const cjobs_rd_t *r, const cjobs_fields_t *row, const cjobs_fields_t *hdr,
                   const char *name, const char **out)
{
    return need(r, row, hdr, name, out);
}

const char *cjobs_int_cell(const cjobs_fields_t *row, const cjobs_fields_t *hdr,
                           const char *name)
{
    return cell(row, hdr, name);
}
