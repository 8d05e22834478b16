/* The plain forms, for any trainer scaleplan has no reader for: one row
 * per step with its seconds and, optionally, its tokens (or samples), the
 * peak memory and the GPU count.
 *
 *   CSV (a header, then rows; '#' lines are comments):
 *       step,seconds,tokens
 *       1,9.84,1572864
 *   JSON Lines (one object per line) or one JSON array of the same objects:
 *       {"step": 1, "seconds": 9.84, "tokens": 1572864}
 *
 * Columns: step, seconds (required), tokens, samples, memory_gib, gpus.
 */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/json.h"
#include "inputs/trainlogInt.h"

enum { COL_STEP, COL_SECONDS, COL_TOKENS, COL_SAMPLES, COL_MEMORY, COL_GPUS, N_COLS };
static const char *const col_names[N_COLS] = {"step",    "seconds",    "tokens",
                                              "samples", "memory_gib", "gpus"};

/* One row's figures (NAN where absent) into a record. */
static int add_row(const tlog_text_t *t, int line, const double *v, trainlog_t *out, err_t *err)
{
    if (!(v[COL_SECONDS] > 0))
        return tlog_bad(t, line, err, "seconds must be a positive number");
    long step = isfinite(v[COL_STEP]) && v[COL_STEP] >= 0 && v[COL_STEP] < 1e15
                    ? (long)v[COL_STEP]
                    : (long)out->n_records + 1;
    tlog_record_t *r = tlog_add_record(out, step, line);
    if (!r)
        return err_set(err, ERR_RUNTIME, "out of memory reading %s", t->file);
    r->step_time_s = v[COL_SECONDS];
    if (v[COL_TOKENS] > 0)
        r->tokens_per_s = v[COL_TOKENS] / v[COL_SECONDS];
    if (v[COL_SAMPLES] > 0)
        r->samples_per_s = v[COL_SAMPLES] / v[COL_SECONDS];
    if (v[COL_MEMORY] >= 0) {
        r->memory_gib = v[COL_MEMORY];
        if (!(v[COL_MEMORY] <= out->memory_gib)) {
            out->memory_gib = v[COL_MEMORY];
            out->memory_line = line;
            snprintf(out->memory_kind, sizeof out->memory_kind, "peak (as given)");
        }
    }
    if (isfinite(v[COL_GPUS])) {
        if (!(v[COL_GPUS] >= 1 && v[COL_GPUS] <= (1 << 24) && v[COL_GPUS] == floor(v[COL_GPUS])))
            return tlog_bad(t, line, err, "gpus must be a whole number from 1");
        if (out->n_gpus && out->n_gpus != (int)v[COL_GPUS])
            return tlog_bad(t, line, err, "gpus changes from %d to %.0f; one log is one run",
                            out->n_gpus, v[COL_GPUS]);
        if (!out->n_gpus) {
            out->n_gpus = (int)v[COL_GPUS];
            char text[32];
            snprintf(text, sizeof text, "%d", out->n_gpus);
            return tlog_add_setting(out, "--gpus", text, line, err);
        }
    }
    return ERR_OK;
}

/* Tokens (and samples) per step when every row gives the same. */
static void batch_from_rows(trainlog_t *out)
{
    double tokens = NAN, samples = NAN;
    bool same_t = true, same_s = true;
    for (int i = 0; i < out->n_records; i++) {
        const tlog_record_t *r = &out->records[i];
        double tk = r->tokens_per_s * r->step_time_s, sm = r->samples_per_s * r->step_time_s;
        same_t = same_t && isfinite(tk) && (isnan(tokens) || fabs(tk - tokens) <= 1e-6 * tokens);
        same_s = same_s && isfinite(sm) && (isnan(samples) || fabs(sm - samples) <= 1e-6 * samples);
        tokens = tk;
        samples = sm;
    }
    if ((same_t && isfinite(tokens)) || (same_s && isfinite(samples)))
        out->batch_line = out->records[0].line;
    if (same_t && isfinite(tokens))
        out->tokens_per_step = tokens;
    if (same_s && isfinite(samples))
        out->samples_per_step = samples;
}

/* ------------------------------------------------------------ CSV */

static const tlog_line_t *first_content(const tlog_text_t *t)
{
    for (int i = 0; i < t->n; i++) {
        const char *s = tlog_skip_blanks(t->lines[i].s);
        if (*s && *s != '#')
            return &t->lines[i];
    }
    return NULL;
}

/* Column index of each header cell (-1 for one scaleplan does not use). */
static int csv_header(const tlog_text_t *t, const tlog_line_t *l, int *cols, int *n, err_t *err)
{
    *n = 0;
    bool have[N_COLS] = {false};
    for (const char *p = l->s;; p++) {
        const char *c = tlog_skip_blanks(p);
        size_t len = strcspn(c, ",");
        while (len > 0 && isspace((unsigned char)c[len - 1]))
            len--;
        if (*n == 64)
            return tlog_bad(t, l->line, err, "header: more than 64 columns");
        int k = -1;
        for (int j = 0; j < N_COLS; j++)
            if (strlen(col_names[j]) == len && strncmp(c, col_names[j], len) == 0)
                k = j;
        if (k >= 0 && have[k])
            return tlog_bad(t, l->line, err, "header: column '%s' given twice", col_names[k]);
        if (k >= 0)
            have[k] = true;
        cols[(*n)++] = k;
        p = strchr(c, ',');
        if (!p)
            break;
    }
    if (!have[COL_SECONDS])
        return tlog_bad(t, l->line, err, "header: no 'seconds' column (expected step,seconds[,tokens])");
    return ERR_OK;
}

static bool csv_detect(const tlog_text_t *t)
{
    const tlog_line_t *l = first_content(t);
    return l && strchr(l->s, ',') && strstr(l->s, "seconds") && strstr(l->s, "step") &&
           !strchr(l->s, '{');
}

static int csv_parse(const tlog_text_t *t, trainlog_t *out, err_t *err)
{
    const tlog_line_t *h = first_content(t);
    if (!h)
        return err_setf(err, ERR_INPUT, t->file, NULL, "empty: expected a step,seconds header");
    int cols[64], n;
    int rc = csv_header(t, h, cols, &n, err);
    for (int i = (int)(h - t->lines) + 1; i < t->n && !rc; i++) {
        const tlog_line_t *l = &t->lines[i];
        const char *s = tlog_skip_blanks(l->s);
        if (!*s || *s == '#')
            continue;
        double v[N_COLS];
        for (int k = 0; k < N_COLS; k++)
            v[k] = NAN;
        int cell = 0;
        for (const char *p = s;; cell++) {
            if (cell == n)
                return tlog_bad(t, l->line, err, "more cells than the header's %d", n);
            const char *end;
            double x;
            if (!tlog_number(p, false, &x, &end)) {
                x = NAN;
                end = tlog_skip_blanks(p);
                if (*end && *end != ',')
                    return tlog_bad(t, l->line, err, "%s: not a number", cols[cell] >= 0 ? col_names[cols[cell]] : "cell");
            }
            end = tlog_skip_blanks(end);
            if (*end && *end != ',')
                return tlog_bad(t, l->line, err, "%s: not a number",
                                cols[cell] >= 0 ? col_names[cols[cell]] : "cell");
            if (cols[cell] >= 0)
                v[cols[cell]] = x;
            if (!*end)
                break;
            p = end + 1;
        }
        if (cell + 1 < n)
            return tlog_bad(t, l->line, err, "%d cells, the header has %d%s", cell + 1, n,
                            tlog_is_cut(t, l) ? " (cut short)" : "");
        rc = add_row(t, l->line, v, out, err);
    }
    if (!rc) {
        batch_from_rows(out);
        snprintf(out->framework, sizeof out->framework, "CSV");
    }
    return rc;
}

/* ------------------------------------------------------------ JSON */

static bool json_detect(const tlog_text_t *t)
{
    const tlog_line_t *l = first_content(t);
    if (!l)
        return false;
    const char *s = tlog_skip_blanks(l->s);
    if (*s != '{' && *s != '[')
        return false;
    for (int i = 0; i < t->n; i++)
        if (strstr(t->lines[i].s, "\"seconds\""))
            return true;
    return false;
}

/* One step's object; where names it in messages. */
static int json_row(const tlog_text_t *t, const cJSON *o, int line, const char *where,
                    trainlog_t *out, err_t *err)
{
    double v[N_COLS];
    for (int k = 0; k < N_COLS; k++) {
        v[k] = NAN;
        const cJSON *x = cJSON_GetObjectItemCaseSensitive(o, col_names[k]);
        if (!x || cJSON_IsNull(x))
            continue;
        if (!cJSON_IsNumber(x) || !isfinite(x->valuedouble))
            return line ? tlog_bad(t, line, err, "%s: not a number", col_names[k])
                        : err_setf(err, ERR_INPUT, t->file, where, "%s: not a number",
                                   col_names[k]);
        v[k] = x->valuedouble;
    }
    if (!(v[COL_SECONDS] > 0) && !line)
        return err_setf(err, ERR_INPUT, t->file, where, "seconds: missing or not positive");
    return add_row(t, line, v, out, err);
}

static int json_parse(const tlog_text_t *t, trainlog_t *out, err_t *err)
{
    const tlog_line_t *first = first_content(t);
    if (!first)
        return err_setf(err, ERR_INPUT, t->file, NULL, "empty: expected step objects");
    int rc = ERR_OK;
    if (*tlog_skip_blanks(first->s) == '[') {
        /* one array: rebuild the text from the lines (they are cleaned in
         * place, and JSON does not care about line breaks) */
        size_t len = 0; /* each line, a blank after it, a newline before it */
        for (int i = 0; i < t->n; i++)
            len += strlen(t->lines[i].s) + 2;
        char *doc = malloc(len + 1), *w = doc;
        if (!doc)
            return err_set(err, ERR_RUNTIME, "out of memory reading %s", t->file);
        int line = 1;
        for (int i = 0; i < t->n; i++) {
            for (; line < t->lines[i].line; line++)
                *w++ = '\n';
            size_t k = strlen(t->lines[i].s);
            memcpy(w, t->lines[i].s, k);
            w += k;
            *w++ = ' ';
        }
        cJSON *root = NULL;
        rc = json_parse_text(doc, (size_t)(w - doc), t->file, &root, err);
        free(doc);
        if (rc)
            return rc;
        if (!cJSON_IsArray(root)) {
            cJSON_Delete(root);
            return err_setf(err, ERR_INPUT, t->file, NULL, "expected an array of step objects");
        }
        int i = 0;
        const cJSON *e;
        cJSON_ArrayForEach(e, root)
        {
            char where[32];
            snprintf(where, sizeof where, "[%d]", i++);
            if (!cJSON_IsObject(e))
                rc = err_setf(err, ERR_INPUT, t->file, where, "not an object");
            if (rc || (rc = json_row(t, e, 0, where, out, err)))
                break;
        }
        cJSON_Delete(root);
    } else {
        for (int i = 0; i < t->n && !rc; i++) {
            const tlog_line_t *l = &t->lines[i];
            const char *s = tlog_skip_blanks(l->s);
            if (!*s || *s == '#')
                continue;
            cJSON *o = cJSON_ParseWithLength(s, strlen(s));
            if (!cJSON_IsObject(o))
                rc = tlog_bad(t, l->line, err, "not a JSON object%s",
                              tlog_is_cut(t, l) ? " (cut short)" : "");
            else
                rc = json_row(t, o, l->line, NULL, out, err);
            cJSON_Delete(o);
        }
    }
    if (!rc) {
        batch_from_rows(out);
        snprintf(out->framework, sizeof out->framework, "JSON");
    }
    return rc;
}

const tlog_reader_t TLOG_READER_CSV = {"csv", "CSV (step, seconds, tokens)", csv_detect, csv_parse};
const tlog_reader_t TLOG_READER_JSON = {"json", "JSON (step, seconds, tokens)", json_detect,
                                        json_parse};
