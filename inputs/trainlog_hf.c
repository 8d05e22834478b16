/* The Hugging Face Trainer (and Accelerate) reader: the "Running training"
 * preamble, the tqdm progress bar ("10/60 [00:54<03:24, 4.07s/it]", redrawn
 * with carriage returns), the per-log-step dicts ({'loss': 1.4878, ...})
 * and the final speed metrics ({'train_runtime': 263.6274,
 * 'train_samples_per_second': 29.132, ...}).
 *
 * The per-step dicts carry no time, so step times come from the bar's
 * elapsed time between two drawings (tqdm prints it in whole seconds); when
 * there is no bar, from the final train_runtime over the optimization steps
 * (which then includes the warm-up).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "inputs/trainlogInt.h"

static bool detect(const tlog_text_t *t)
{
    for (int i = 0; i < t->n; i++) {
        const char *s = tlog_skip_blanks(t->lines[i].s);
        if (strstr(s, "***** Running training *****") || strncmp(s, "{'loss':", 8) == 0 ||
            strstr(s, "'train_samples_per_second':"))
            return true;
    }
    return false;
}

/* Seconds of "MM:SS" or "H:MM:SS" at s; -1 when it is not one. */
static double clock_seconds(const char *s, const char **end)
{
    double parts[3];
    int n = 0;
    const char *p = s;
    while (n < 3) {
        char *e;
        long v = strtol(p, &e, 10);
        if (e == p || v < 0 || v > 1000000)
            return -1;
        parts[n++] = (double)v;
        p = e;
        if (*p != ':')
            break;
        p++;
    }
    *end = p;
    if (n == 2)
        return parts[0] * 60 + parts[1];
    if (n == 3)
        return parts[0] * 3600 + parts[1] * 60 + parts[2];
    return -1;
}

/* A tqdm drawing "... n/total [elapsed<...": true with n, total and
 * elapsed. */
static bool bar_position(const char *s, long *n, long *total, double *elapsed)
{
    for (const char *p = strstr(s, " ["); p; p = strstr(p + 2, " [")) {
        const char *q = p;
        while (q > s && q[-1] >= '0' && q[-1] <= '9')
            q--; /* total */
        if (q == p || q == s || q[-1] != '/')
            continue;
        const char *slash = q - 1, *a = slash;
        while (a > s && a[-1] >= '0' && a[-1] <= '9')
            a--;
        if (a == slash)
            continue;
        const char *end;
        double t = clock_seconds(p + 2, &end);
        if (t < 0 || *end != '<')
            continue;
        *n = strtol(a, NULL, 10);
        *total = strtol(q, NULL, 10);
        *elapsed = t;
        return true;
    }
    return false;
}

/* The number after 'key': in a Python dict line. */
static bool dict_value(const char *s, const char *key, double *out)
{
    char pat[64];
    snprintf(pat, sizeof pat, "'%s':", key);
    bool bad = false;
    return tlog_value_after(s, pat, false, ",}", out, &bad);
}

/* "  Instantaneous batch size per device = 4" and its neighbours. */
static bool preamble_value(const char *s, const char *key, double *out)
{
    const char *p = strstr(s, key);
    if (!p)
        return false;
    p = strchr(p + strlen(key), '=');
    const char *end;
    return p && tlog_number(p + 1, true, out, &end) && *out >= 0;
}

typedef struct {
    double per_device, total, accum, steps, runtime;
    int line;
} hf_preamble_t;

static int add_whole(trainlog_t *out, const char *option, double v, int line, err_t *err)
{
    char text[32];
    snprintf(text, sizeof text, "%.0f", v);
    return tlog_add_setting(out, option, text, line, err);
}

/* The batch and the GPU count the preamble implies: world size = total
 * batch / (per-device batch x accumulation). */
static int preamble_settings(const hf_preamble_t *p, trainlog_t *out, err_t *err)
{
    int rc = ERR_OK;
    if (p->per_device >= 1 && (rc = add_whole(out, "--micro-batch", p->per_device, p->line, err)))
        return rc;
    if (p->total >= 1) {
        out->samples_per_step = p->total;
        out->batch_line = p->line;
        if ((rc = add_whole(out, "--global-batch", p->total, p->line, err)))
            return rc;
    }
    double per_step = p->per_device * (p->accum >= 1 ? p->accum : 1);
    if (p->total >= 1 && per_step >= 1 && fmod(p->total, per_step) == 0 &&
        p->total / per_step <= (1 << 24)) {
        out->n_gpus = (int)(p->total / per_step);
        rc = add_whole(out, "--gpus", p->total / per_step, p->line, err);
    }
    return rc;
}

/* The training bar's total: a log may draw other bars (evaluation, data
 * loading: axolotl's "2/3 [00:01<00:00, 1.68it/s]" before its
 * "281/873 [25:36<52:46, 5.35s/it]"); the training bar is the one drawn
 * most often, the longer one on a tie. -1 when there is no bar. */
static long training_total(const tlog_text_t *t)
{
    long totals[16], best = -1;
    int counts[16], nt = 0, most = 0;
    for (int i = 0; i < t->n; i++) {
        long n, total;
        double el;
        if (!bar_position(tlog_skip_blanks(t->lines[i].s), &n, &total, &el))
            continue;
        int k = 0;
        while (k < nt && totals[k] != total)
            k++;
        if (k == nt) {
            if (nt == 16)
                continue;
            totals[nt] = total, counts[nt++] = 0;
        }
        counts[k]++;
    }
    for (int k = 0; k < nt; k++)
        if (counts[k] > most || (counts[k] == most && totals[k] > best))
            most = counts[k], best = totals[k];
    return best;
}

static int parse(const tlog_text_t *t, trainlog_t *out, err_t *err)
{
    hf_preamble_t pre = {0};
    long prev_n = -1, train_total = training_total(t), total;
    double prev_elapsed = 0;
    int rc = ERR_OK, final_line = 0;
    for (int i = 0; i < t->n && !rc; i++) {
        const tlog_line_t *l = &t->lines[i];
        const char *s = tlog_skip_blanks(l->s);
        long n;
        double el, v;
        if (s[0] == '{' && s[1] == '\'') {
            size_t len = strlen(s);
            while (len > 0 && (s[len - 1] == ' ' || s[len - 1] == '\t'))
                len--;
            if (len == 0 || s[len - 1] != '}' || tlog_is_cut(t, l))
                return tlog_bad(t, l->line, err, "metrics dict cut short (no closing '}')");
            if (dict_value(s, "loss", &v) && out->n_records > 0)
                out->records[out->n_records - 1].loss = v;
            if (dict_value(s, "train_runtime", &pre.runtime)) {
                final_line = l->line;
                if (dict_value(s, "train_samples_per_second", &v))
                    out->final_samples_per_s = v;
            }
        } else if (bar_position(s, &n, &total, &el)) {
            if (total != train_total)
                continue; /* another bar */
            /* no 0/N drawing: the bar started at 0 s when this is one of its
             * first drawings; a paste whose first drawing is further on left
             * out the ones before, and their average would fold the start-up
             * into one record */
            if (prev_n < 0 && n > 0 && n <= 2) {
                prev_n = 0;
                prev_elapsed = 0;
            }
            if (prev_n >= 0 && n > prev_n) {
                tlog_record_t *r = tlog_add_record(out, n, l->line);
                if (!r)
                    return err_set(err, ERR_RUNTIME, "out of memory reading %s", t->file);
                r->covers = n - prev_n;
                r->step_time_s = (el - prev_elapsed) / (double)r->covers;
            }
            if (n >= prev_n) {
                prev_n = n;
                prev_elapsed = el;
            }
        } else if (preamble_value(s, "Instantaneous batch size per device", &v)) {
            pre.per_device = v;
            pre.line = l->line;
        } else if (preamble_value(s, "Total train batch size", &v)) {
            pre.total = v;
        } else if (preamble_value(s, "Gradient Accumulation steps", &v)) {
            pre.accum = v;
        } else if (preamble_value(s, "Total optimization steps", &v)) {
            pre.steps = v;
        } else if (preamble_value(s, "Number of trainable parameters", &v)) {
            out->params = v, out->params_line = l->line;
        }
    }
    snprintf(out->framework, sizeof out->framework, "Hugging Face Trainer");
    if (out->n_records > 0) {
        snprintf(out->caveat, sizeof out->caveat,
                 "step times from the progress bar's elapsed time, which tqdm prints in whole "
                 "seconds");
    } else if (pre.runtime > 0 && pre.steps >= 1) {
        tlog_record_t *r = tlog_add_record(out, (long)pre.steps, final_line);
        if (!r)
            return err_set(err, ERR_RUNTIME, "out of memory reading %s", t->file);
        r->covers = (long)pre.steps;
        r->step_time_s = pre.runtime / pre.steps;
        snprintf(out->caveat, sizeof out->caveat,
                 "no progress bar: the step time is train_runtime / optimization steps, warm-up "
                 "included");
    }
    return preamble_settings(&pre, out, err);
}

const tlog_reader_t TLOG_READER_HF = {"hf", "Hugging Face Trainer", detect, parse};
