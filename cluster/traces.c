#include "cluster/traces.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cluster/jobsInt.h"
#include "common/fileio.h"
#include "common/json.h"

/* ------------------------------------------------------------ times */

/* Days from 1970-01-01 to y-m-d in the proleptic Gregorian calendar (the
 * civil-from-days arithmetic of era = 400 years, 146097 days). */
static int64_t days_from_civil(int64_t y, int m, int d)
{
    y -= m <= 2;
    int64_t era = (y >= 0 ? y : y - 399) / 400;
    int64_t yoe = y - era * 400;
    int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
    int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + doe - 719468;
}

/* The UTC offset at s ("+08:00", "-05:30", "Z" or nothing) in seconds;
 * false when s holds anything else. */
static bool utc_offset(const char *s, int64_t *off_s)
{
    int oh, om, used = 0;
    *off_s = 0;
    if (!*s || strcmp(s, "Z") == 0)
        return true;
    if ((*s != '+' && *s != '-') || sscanf(s + 1, "%2d:%2d%n", &oh, &om, &used) != 2 ||
        s[1 + used] || oh > 23 || om > 59)
        return false;
    *off_s = (*s == '-' ? -1 : 1) * (oh * 3600 + om * 60);
    return true;
}

int ctrace_parse_time_ms(const char *text, int64_t *out_ms)
{
    int y, mo, d, h, mi, used = 0;
    double sec;
    if (!text || sscanf(text, "%4d-%2d-%2d%*1[ T]%2d:%2d:%lf%n", &y, &mo, &d, &h, &mi, &sec,
                        &used) != 6)
        return -1;
    /* %lf would also take an exponent; the seconds are plain digits */
    for (const char *p = text + used - 1; p > text && *p != ':'; p--)
        if (!isdigit((unsigned char)*p) && *p != '.')
            return -1;
    int64_t off_s;
    if (mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || !(sec >= 0 && sec < 61) ||
        !utc_offset(text + used, &off_s))
        return -1;
    int64_t s = days_from_civil(y, mo, d) * 86400 + h * 3600 + mi * 60 - off_s;
    *out_ms = s * 1000 + (int64_t)llround(sec * 1000);
    return 0;
}

/* Move every time so that the first submission is at 0. */
static void rebase(cjobs_t *l)
{
    if (l->n == 0)
        return;
    int64_t t0 = l->jobs[0].submit_ms;
    for (int i = 1; i < l->n; i++)
        if (l->jobs[i].submit_ms < t0)
            t0 = l->jobs[i].submit_ms;
    for (int i = 0; i < l->n; i++) {
        l->jobs[i].submit_ms -= t0;
        if (l->jobs[i].trace_start_ms >= 0)
            l->jobs[i].trace_start_ms -= t0;
    }
}

/* A date-time field of row r (required when need is true). */
static int time_field(const rd_t *r, const char *field, const char *text, int64_t *ms)
{
    if (ctrace_parse_time_ms(text, ms))
        return cjobs_int_bad(r, field, "not a time YYYY-MM-DD HH:MM:SS[+HH:MM] (got '%s')",
                             text);
    /* 1900..2200: a trace from another era or a misread field */
    if (*ms < -2208988800000LL || *ms > 7258118400000LL)
        return cjobs_int_bad(r, field, "out of range 1900-2200 (got '%s')", text);
    return ERR_OK;
}

/* ------------------------------------------------- helios and acme */

/* One row of a Slurm-style log (Helios, Acme): the columns both share. */
static int row_slurm(const rd_t *r, const fields_t *row, const fields_t *hdr, cjob_t *j,
                     char **scratch)
{
    (void)scratch;
    const char *id, *gpus, *submit, *dur, *start = cjobs_int_cell(row, hdr, "start_time");
    double g, d;
    int rc;
    if (r->last_unterminated && row->n > 0 && !*row->f[row->n - 1]) /* "...,36848," */
        return cjobs_int_bad(r, hdr->f[row->n - 1], "empty: the file ends mid-line (%s)",
                             "cut short?");
    if ((rc = cjobs_int_need(r, row, hdr, "job_id", &id)) ||
        (rc = cjobs_int_need(r, row, hdr, "gpu_num", &gpus)) ||
        (rc = cjobs_int_need(r, row, hdr, "submit_time", &submit)) ||
        (rc = cjobs_int_need(r, row, hdr, "duration", &dur)) ||
        (rc = cjobs_int_num(r, "gpu_num", gpus, 0, CJOBS_MAX_GPUS, &g)) ||
        (rc = cjobs_int_num(r, "duration", dur, 0, (double)CJOBS_MAX_MS / 1000, &d)) ||
        (rc = time_field(r, "submit_time", submit, &j->submit_ms)))
        return rc;
    if (g != floor(g))
        return cjobs_int_bad(r, "gpu_num", "must be a whole number of GPUs (got '%s')", gpus);
    if (start && *start && (rc = time_field(r, "start_time", start, &j->trace_start_ms)))
        return rc;
    if (start && *start && j->trace_start_ms < j->submit_ms)
        return cjobs_int_bad(r, "start_time", "before submit_time (got '%s')", start);
    j->name = (char *)id;
    j->vc = (char *)cjobs_int_cell(row, hdr, "vc"); /* Helios has one; Acme none */
    if (j->vc && !*j->vc)
        j->vc = NULL;
    j->gpus = (int)g;
    j->duration_ms = (int64_t)llround(d * 1000);
    j->preemptible = true;
    if (j->gpus == 0 || j->duration_ms <= 0) /* a CPU job, or one that never ran */
        return CJOBS_ROW_SKIP;
    return ERR_OK;
}

static int read_slurm(const char *path, cjobs_t *out, err_t *err)
{
    static const char *const req[] = {"job_id", "gpu_num", "submit_time", "duration", NULL};
    int rc = cjobs_int_read_rows(path, req, row_slurm, out, err);
    if (!rc)
        rebase(out);
    return rc;
}

int ctrace_read_helios(const char *path, cjobs_t *out, err_t *err)
{
    return read_slurm(path, out, err);
}

int ctrace_read_acme(const char *path, cjobs_t *out, err_t *err)
{
    return read_slurm(path, out, err);
}

/* ------------------------------------------------------------ philly */

/* A time string member of o, named by ctx for messages. */
static int json_time(const cJSON *o, const char *key, const json_ctx_t *ctx, int64_t *ms,
                     err_t *err)
{
    char s[64];
    int rc = json_get_string(o, key, ctx, JSON_REQUIRED, s, sizeof s, err);
    if (rc)
        return rc;
    if (ctrace_parse_time_ms(s, ms)) {
        json_ctx_t c = json_ctx_member(ctx, key);
        return err_setf(err, ERR_INPUT, c.file, c.path,
                        "not a time YYYY-MM-DD HH:MM:SS (got '%s')", s);
    }
    return ERR_OK;
}

/* The GPUs one attempt held: the gpus lists of its detail. */
static int attempt_gpus(const cJSON *at, const json_ctx_t *ctx, int *gpus, err_t *err)
{
    const cJSON *detail = NULL;
    int rc = json_get_array(at, "detail", ctx, JSON_REQUIRED, &detail, err);
    *gpus = 0;
    for (int k = 0; !rc && k < cJSON_GetArraySize(detail); k++) {
        json_ctx_t dc = json_ctx_index(ctx, k);
        const cJSON *g = NULL;
        rc = json_get_array(cJSON_GetArrayItem(detail, k), "gpus", &dc, JSON_REQUIRED, &g, err);
        if (!rc)
            *gpus += cJSON_GetArraySize(g);
    }
    return rc;
}

/* One attempt: its GPUs and run time; *ran false when it has no end (a
 * job still running when the trace was cut, or never placed). */
static int philly_attempt(const cJSON *at, const json_ctx_t *ctx, cjob_t *j, bool first,
                          bool *ran, err_t *err)
{
    int64_t s_ms, e_ms;
    int gpus, rc;
    const cJSON *end = cJSON_GetObjectItemCaseSensitive(at, "end_time");
    const cJSON *st = cJSON_GetObjectItemCaseSensitive(at, "start_time");
    if (!cJSON_IsObject(at))
        return err_setf(err, ERR_INPUT, ctx->file, ctx->path, "must be an object");
    if (!end || cJSON_IsNull(end) || !st || cJSON_IsNull(st)) {
        *ran = false;
        return ERR_OK;
    }
    if ((rc = json_time(at, "start_time", ctx, &s_ms, err)) ||
        (rc = json_time(at, "end_time", ctx, &e_ms, err)) ||
        (rc = attempt_gpus(at, ctx, &gpus, err)))
        return rc;
    if (e_ms < s_ms) {
        json_ctx_t c = json_ctx_member(ctx, "end_time");
        return err_setf(err, ERR_INPUT, c.file, c.path, "before start_time");
    }
    if (first)
        j->trace_start_ms = s_ms;
    j->duration_ms += e_ms - s_ms;
    if (gpus > j->gpus)
        j->gpus = gpus;
    return ERR_OK;
}

/* One job record; *keep false when it never ran on a GPU. */
static int philly_job(const cJSON *o, const json_ctx_t *ctx, cjob_t *j, char *id, size_t id_cap,
                      char *vc, size_t vc_cap, bool *keep, err_t *err)
{
    const cJSON *atts = NULL;
    int rc;
    *vc = '\0';
    if ((rc = json_expect_object(o, ctx, err)) ||
        (rc = json_get_string(o, "jobid", ctx, JSON_REQUIRED, id, id_cap, err)) ||
        (rc = json_get_string(o, "vc", ctx, JSON_OPTIONAL, vc, vc_cap, err)) ||
        (rc = json_time(o, "submitted_time", ctx, &j->submit_ms, err)) ||
        (rc = json_get_array(o, "attempts", ctx, JSON_REQUIRED, &atts, err)))
        return rc;
    j->name = (char *)id;
    j->vc = *vc ? vc : NULL;
    j->preemptible = true;
    bool ran = cJSON_GetArraySize(atts) > 0;
    json_ctx_t ac = json_ctx_member(ctx, "attempts");
    for (int k = 0; !rc && ran && k < cJSON_GetArraySize(atts); k++) {
        json_ctx_t c = json_ctx_index(&ac, k);
        rc = philly_attempt(cJSON_GetArrayItem(atts, k), &c, j, k == 0, &ran, err);
    }
    if (!rc && ran && j->trace_start_ms < j->submit_ms) {
        json_ctx_t c = json_ctx_member(&ac, "[0].start_time");
        return err_setf(err, ERR_INPUT, c.file, c.path, "before submitted_time");
    }
    *keep = ran && j->gpus > 0 && j->duration_ms > 0;
    return rc;
}

/* The line on which each element of the top-level array of text starts
 * (lines[i] for element i, up to n_max; JSON strings and nesting skipped),
 * so that a bad record is named by its line as well as its index. */
static void record_lines(const char *text, size_t len, int *lines, int n_max)
{
    int depth = 0, line = 1, k = 0;
    bool in_str = false, esc = false, want = false;
    for (size_t i = 0; i < len && k < n_max; i++) {
        char ch = text[i];
        line += ch == '\n';
        if (in_str) {
            esc = !esc && ch == '\\';
            in_str = esc || ch != '"';
            continue;
        }
        if (depth == 1 && want && !strchr(" \t\r\n,]", ch))
            lines[k++] = line, want = false;
        if (ch == '"')
            in_str = true, esc = false;
        else if (ch == '[' || ch == '{')
            want = ++depth == 1 && ch == '[';
        else if (ch == ']' || ch == '}')
            depth--;
        else if (ch == ',' && depth == 1)
            want = true;
    }
}

/* Every record of the parsed array root into out; file names each
 * record's line in messages. */
static int philly_records(const char *path, const cJSON *root, const int *lines, cjobs_t *out,
                          err_t *err)
{
    int rc = ERR_OK;
    for (int i = 0; !rc && i < cJSON_GetArraySize(root); i++) {
        char where[4200];
        snprintf(where, sizeof where, "%s: line %d", path, lines[i]);
        json_ctx_t ctx = json_ctx_root(where), c = json_ctx_index(&ctx, i);
        cjob_t j = {.line = lines[i], .trace_start_ms = -1};
        char id[128], vc[64];
        bool keep = false;
        rc = philly_job(cJSON_GetArrayItem(root, i), &c, &j, id, sizeof id, vc, sizeof vc, &keep,
                        err);
        if (!rc && keep)
            rc = cjobs_add(out, &j, err);
        else if (!rc)
            out->skipped++;
    }
    return rc;
}

int ctrace_read_philly(const char *path, cjobs_t *out, err_t *err)
{
    memset(out, 0, sizeof *out);
    cJSON *root = NULL;
    char *text = NULL;
    size_t len = 0;
    int *lines = NULL, n = 0;
    int rc = fileio_read_all(path, &text, &len, err);
    if (!rc) /* says "ends early" with the line for a cut file */
        rc = json_parse_text(text, len, path, &root, err);
    if (!rc && !cJSON_IsArray(root))
        rc = err_setf(err, ERR_INPUT, path, NULL, "must be a JSON array of jobs "
                      "(Philly's cluster_job_log)");
    if (!rc && (n = cJSON_GetArraySize(root)) > 0 && !(lines = calloc((size_t)n, sizeof *lines)))
        rc = err_set(err, ERR_RUNTIME, "out of memory");
    if (!rc && n > 0)
        record_lines(text, len, lines, n);
    if (!rc)
        rc = philly_records(path, root, lines, out, err);
    if (!rc && out->n == 0)
        rc = err_setf(err, ERR_INPUT, path, NULL, "no job that ran on a GPU");
    if (!rc && !(out->path = strdup(path)))
        rc = err_set(err, ERR_RUNTIME, "out of memory");
    cJSON_Delete(root);
    free(text);
    free(lines);
    if (rc)
        cjobs_free(out);
    else
        rebase(out);
    return rc;
}

/* --------------------------------------------------------------- pai */

/* One task of the PAI task table, before its job's tasks are merged. */
typedef struct {
    char *job;        /* owned */
    double gpu_pct;   /* inst_num x plan_gpu (100 = one GPU) */
    int64_t start_ms, end_ms;
    int line;
} pai_task_t;

typedef struct {
    pai_task_t *t;
    int n, cap;
    long skipped;     /* tasks that never ran */
} pai_tasks_t;

#define PAI_COLS 10 /* pai_task_table.header's columns */

static int pai_num(const rd_t *r, const char *field, const char *text, double hi, double *v)
{
    if (!*text)
        return *v = 0, ERR_OK;
    return cjobs_int_num(r, field, text, 0, hi, v);
}

/* One task row into ts (a task that never ran is counted, not kept). */
static int pai_row(const rd_t *r, char *line, pai_tasks_t *ts)
{
    fields_t f;
    static const char *const col[PAI_COLS] = {"job_name", "task_name", "inst_num", "status",
                                              "start_time", "end_time", "plan_cpu", "plan_mem",
                                              "plan_gpu", "gpu_type"};
    if (!cjobs_int_split(line, &f) || f.n > PAI_COLS)
        return cjobs_int_bad(r, "row", "more than %s fields (pai_task_table has 10)", "10");
    if (f.n < PAI_COLS)
        return cjobs_int_bad(r, col[f.n], "missing: %s", r->last_unterminated
                             ? "the file ends mid-line (cut short?)" : "the row has too few fields");
    if (r->last_unterminated && !*f.f[PAI_COLS - 1])
        return cjobs_int_bad(r, col[PAI_COLS - 1], "empty: the file ends mid-line (%s)",
                             "cut short?");
    double inst, gpu, s, e;
    int rc;
    if (!*f.f[0])
        return cjobs_int_bad(r, "job_name", "empty%s", "");
    if ((rc = pai_num(r, "inst_num", f.f[2], 1e6, &inst)) ||
        (rc = pai_num(r, "plan_gpu", f.f[8], 1e8, &gpu)) ||
        (rc = pai_num(r, "start_time", f.f[4], (double)CJOBS_MAX_MS / 1000, &s)) ||
        (rc = pai_num(r, "end_time", f.f[5], (double)CJOBS_MAX_MS / 1000, &e)))
        return rc;
    if (!*f.f[4] || !*f.f[5] || e <= s) /* waiting or running when the trace ended */
        return ts->skipped++, ERR_OK;
    if (ts->n == ts->cap) {
        int cap = ts->cap ? 2 * ts->cap : 256;
        pai_task_t *g = realloc(ts->t, (size_t)cap * sizeof *g);
        if (!g)
            return err_set(r->err, ERR_RUNTIME, "out of memory reading %d tasks", ts->n);
        ts->t = g, ts->cap = cap;
    }
    char *job = strdup(f.f[0]);
    if (!job)
        return err_set(r->err, ERR_RUNTIME, "out of memory");
    ts->t[ts->n++] = (pai_task_t){job, inst * gpu, (int64_t)llround(s * 1000),
                                  (int64_t)llround(e * 1000), r->line};
    return ERR_OK;
}

static int cmp_task(const void *a, const void *b)
{
    const pai_task_t *x = a, *y = b;
    int c = strcmp(x->job, y->job);
    return c ? c : (x->line > y->line) - (x->line < y->line);
}

/* Tasks of one job (sorted together) into one job of out. */
static int pai_merge(pai_tasks_t *ts, cjobs_t *out, err_t *err)
{
    if (ts->n > 1) /* no tasks: no array to sort (qsort of NULL is undefined) */
        qsort(ts->t, (size_t)ts->n, sizeof *ts->t, cmp_task);
    int rc = ERR_OK;
    for (int i = 0; !rc && i < ts->n;) {
        int k = i;
        double pct = 0;
        int64_t s = ts->t[i].start_ms, e = ts->t[i].end_ms;
        for (; k < ts->n && strcmp(ts->t[k].job, ts->t[i].job) == 0; k++) {
            pct += ts->t[k].gpu_pct;
            s = ts->t[k].start_ms < s ? ts->t[k].start_ms : s;
            e = ts->t[k].end_ms > e ? ts->t[k].end_ms : e;
        }
        double g = ceil(pct / 100 - 1e-9); /* 50% of a GPU takes a whole one */
        if (g < 1 || g > CJOBS_MAX_GPUS) {
            out->skipped++; /* a CPU job (or an impossible one) */
        } else {
            cjob_t j = {.name = ts->t[i].job, .gpus = (int)g, .submit_ms = s,
                        .duration_ms = e - s, .preemptible = true, .line = ts->t[i].line,
                        .trace_start_ms = -1};
            rc = cjobs_add(out, &j, err);
        }
        i = k;
    }
    return rc;
}

/* The task rows of f into ts. */
static int pai_lines(FILE *f, const char *path, pai_tasks_t *ts, err_t *err)
{
    char *line = NULL;
    size_t cap = 0;
    ssize_t len;
    rd_t r = {path, 0, false, err};
    int rc = ERR_OK;
    while (!rc && (len = getline(&line, &cap, f)) >= 0) {
        r.line++;
        r.last_unterminated = len == 0 || line[len - 1] != '\n';
        line[strcspn(line, "\r\n")] = '\0';
        if (!*line || *line == '#' || (r.line == 1 && strncmp(line, "job_name,", 9) == 0))
            continue; /* blank, a comment, or the header put back */
        rc = pai_row(&r, line, ts);
    }
    if (!rc && ferror(f))
        rc = err_setf(err, ERR_INPUT, path, NULL, "read error");
    free(line);
    return rc;
}

int ctrace_read_pai(const char *path, cjobs_t *out, err_t *err)
{
    memset(out, 0, sizeof *out);
    FILE *f = fopen(path, "r");
    if (!f)
        return err_setf(err, ERR_INPUT, path, NULL, "cannot open: %s", strerror(errno));
    pai_tasks_t ts = {0};
    int rc = pai_lines(f, path, &ts, err);
    fclose(f);
    if (!rc)
        rc = pai_merge(&ts, out, err);
    out->skipped += ts.skipped;
    for (int i = 0; i < ts.n; i++)
        free(ts.t[i].job);
    free(ts.t);
    if (!rc && out->n == 0)
        rc = err_setf(err, ERR_INPUT, path, NULL, "no task that ran on a GPU");
    if (!rc && !(out->path = strdup(path)))
        rc = err_set(err, ERR_RUNTIME, "out of memory");
    if (rc)
        cjobs_free(out);
    else
        rebase(out);
    return rc;
}

/* ------------------------------------------------------------ openb */

/* A count of seconds in field (0 up to the replay's longest time). */
static int openb_s(const rd_t *r, const char *field, const char *text, int64_t *ms)
{
    double s;
    int rc = cjobs_int_num(r, field, text, 0, (double)CJOBS_MAX_MS / 1000, &s);
    if (!rc)
        *ms = (int64_t)llround(s * 1000);
    return rc;
}

/* One pod of Alibaba's cluster-trace-gpu-v2023 pod list. A pod sharing a
 * GPU (num_gpu 1, gpu_milli below 1000) is given the whole GPU, as PAI's
 * fractions are; a pod never scheduled (empty scheduled_time) or without
 * a GPU is not replayed. */
static int row_openb(const rd_t *r, const fields_t *row, const fields_t *hdr, cjob_t *j,
                     char **scratch)
{
    (void)scratch;
    const char *name, *gpus, *created, *deleted, *sched = cjobs_int_cell(row, hdr,
                                                                       "scheduled_time");
    double g;
    int64_t end_ms;
    int rc;
    if (r->last_unterminated && row->n < hdr->n)
        return cjobs_int_bad(r, hdr->f[row->n > 0 ? row->n - 1 : 0], "missing: the file ends "
                             "mid-line (%s)", "cut short?");
    if ((rc = cjobs_int_need(r, row, hdr, "name", &name)) ||
        (rc = cjobs_int_need(r, row, hdr, "num_gpu", &gpus)) ||
        (rc = cjobs_int_need(r, row, hdr, "creation_time", &created)) ||
        (rc = cjobs_int_need(r, row, hdr, "deletion_time", &deleted)) ||
        (rc = cjobs_int_num(r, "num_gpu", gpus, 0, CJOBS_MAX_GPUS, &g)) ||
        (rc = openb_s(r, "creation_time", created, &j->submit_ms)) ||
        (rc = openb_s(r, "deletion_time", deleted, &end_ms)))
        return rc;
    if (g != floor(g))
        return cjobs_int_bad(r, "num_gpu", "must be a whole number of GPUs (got '%s')", gpus);
    j->name = (char *)name;
    j->gpus = (int)g;
    j->preemptible = true;
    if (!sched || !*sched || j->gpus == 0) /* never scheduled, or a CPU pod */
        return CJOBS_ROW_SKIP;
    if ((rc = openb_s(r, "scheduled_time", sched, &j->trace_start_ms)))
        return rc;
    if (j->trace_start_ms < j->submit_ms)
        return cjobs_int_bad(r, "scheduled_time", "before creation_time (got '%s')", sched);
    j->duration_ms = end_ms - j->trace_start_ms;
    return j->duration_ms > 0 ? ERR_OK : CJOBS_ROW_SKIP;
}

int ctrace_read_openb(const char *path, cjobs_t *out, err_t *err)
{
    static const char *const req[] = {"name", "num_gpu", "creation_time", "deletion_time",
                                      "scheduled_time", NULL};
    int rc = cjobs_int_read_rows(path, req, row_openb, out, err);
    if (!rc)
        rebase(out);
    return rc;
}

/* ---------------------------------------------------- recorded figures */

void ctrace_recorded(const cjobs_t *l, int pool_gpus, ctrace_recorded_t *out)
{
    memset(out, 0, sizeof *out);
    double wait_s = 0, gpu_ms = 0;
    int64_t first = 0, last = 0;
    for (int i = 0; i < l->n; i++) {
        const cjob_t *j = &l->jobs[i];
        if (j->trace_start_ms < 0)
            continue;
        int64_t end = j->trace_start_ms + j->duration_ms;
        if (out->n == 0 || j->submit_ms < first)
            first = j->submit_ms;
        if (out->n == 0 || end > last)
            last = end;
        out->n++;
        wait_s += (double)(j->trace_start_ms - j->submit_ms) / 1000;
        gpu_ms += (double)j->gpus * (double)j->duration_ms;
    }
    if (out->n == 0)
        return;
    out->queue_delay_mean_s = wait_s / out->n;
    if (last > first && pool_gpus > 0)
        out->utilization = gpu_ms / ((double)pool_gpus * (double)(last - first));
}

/* ------------------------------------------------ virtual clusters */

/* One row of cluster_gpu_number.csv into out: per VC the count on date,
 * or (date NULL) the largest over the rows. *hit says the row was used. */
static int vc_row(const rd_t *r, const fields_t *row, const fields_t *hdr, const char *date,
                  ctrace_vcs_t *out, bool *hit)
{
    if (row->n != hdr->n)
        return cjobs_int_bad(r, "row", "has a different number of fields than the header%s",
                             r->last_unterminated ? " (the file ends mid-line: cut short?)" : "");
    if (date && strcmp(row->f[0], date) != 0)
        return ERR_OK;
    *hit = true;
    for (int k = 1, v = 0; k < hdr->n; k++) {
        if (strcmp(hdr->f[k], "total") == 0)
            continue;
        double g;
        int rc = cjobs_int_num(r, hdr->f[k], row->f[k], 0, CJOBS_MAX_GPUS, &g);
        if (rc)
            return rc;
        if (g > out->gpus[v])
            out->gpus[v] = (int)g;
        v++;
    }
    return ERR_OK;
}

/* The header's VC names into out. */
static int vc_header(const rd_t *r, const fields_t *hdr, ctrace_vcs_t *out)
{
    if (hdr->n < 2 || strcmp(hdr->f[0], "date") != 0)
        return cjobs_int_bad(r, "header", "must be date,<vc>...[,total] (got '%s')", hdr->f[0]);
    for (int k = 1; k < hdr->n; k++) {
        if (strcmp(hdr->f[k], "total") == 0)
            continue;
        if (out->n == CTRACE_MAX_VCS)
            return cjobs_int_bad(r, "header", "more than %s VCs", "64");
        snprintf(out->name[out->n], sizeof out->name[0], "%s", hdr->f[k]);
        out->gpus[out->n++] = 0;
    }
    return ERR_OK;
}

int ctrace_read_vc_gpus(const char *path, const char *date, ctrace_vcs_t *out, err_t *err)
{
    memset(out, 0, sizeof *out);
    FILE *f = fopen(path, "r");
    if (!f)
        return err_setf(err, ERR_INPUT, path, NULL, "cannot open: %s", strerror(errno));
    char *line = NULL, *hdr_text = NULL;
    size_t cap = 0;
    ssize_t len;
    fields_t hdr = {0}, row;
    rd_t r = {path, 0, false, err};
    bool hit = false;
    int rc = ERR_OK;
    while (!rc && (len = getline(&line, &cap, f)) >= 0) {
        r.line++;
        r.last_unterminated = len == 0 || line[len - 1] != '\n';
        line[strcspn(line, "\r\n")] = '\0';
        if (!*line || *line == '#')
            continue;
        if (hdr_text) {
            rc = cjobs_int_split(line, &row) ? vc_row(&r, &row, &hdr, date, out, &hit)
                                             : cjobs_int_bad(&r, "row", "too many %s", "fields");
        } else if (!(hdr_text = strdup(line))) {
            rc = err_set(err, ERR_RUNTIME, "out of memory");
        } else {
            rc = cjobs_int_split(hdr_text, &hdr) ? vc_header(&r, &hdr, out)
                                                 : cjobs_int_bad(&r, "header", "more than %s "
                                                                 "columns", "32");
        }
    }
    if (!rc && !hit)
        rc = err_setf(err, ERR_INPUT, path, date ? date : NULL, date ? "no row of that date"
                                                                   : "no rows after the header");
    free(line);
    free(hdr_text);
    fclose(f);
    return rc;
}
