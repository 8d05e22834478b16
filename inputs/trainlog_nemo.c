/* The NeMo 2 reader: the Lightning metrics NeMo's callbacks log, as the
 * non-interactive ProgressPrinter prints them
 *
 *   Training epoch 0, iteration 3/19 | lr: 1.8e-07 | consumed_samples: 8192 |
 *       global_batch_size: 2048 | global_step: 3 | reduced_train_loss: 9.895 |
 *       train_step_timing in s: 9.447 | TFLOPS_per_GPU: 933.2
 *
 * or as the TQDM progress bar's postfix ("... 4/20 [00:52<..., lr=1.8e-07,
 * train_step_timing in s=9.45, ...]"), plus the per-rank parameter counts
 * that give the tensor and pipeline sizes. A bar without the timing (NeMo
 * 1 before exp_manager logged it: "795/77225 [9:07:58<878:01:48,
 * 41.36s/it, ..., reduced_train_loss=3.090, ...]") gives tqdm's rate, its
 * average over the bar so far; a postfix key with no value
 * ("train_step_timing in s=,") is a figure the bar has not got yet.
 */
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "inputs/trainlogInt.h"

#define PRINTER "Training epoch "
#define TIMING "train_step_timing in s"

static bool is_printer_line(const char *s)
{
    return strncmp(s, PRINTER, strlen(PRINTER)) == 0 && strstr(s, ", iteration ");
}

static bool is_bar_line(const char *s)
{
    return strstr(s, TIMING "=") != NULL ||
           (strstr(s, "reduced_train_loss=") && strstr(s, "it, ") && strstr(s, "Epoch "));
}

/* tqdm's rate before the postfix: "41.36s/it, " or "2.50it/s, ", in
 * seconds per step; NAN when the bar has none. */
static double bar_rate(const char *s)
{
    const char *lt = strchr(s, '<'), *end;
    const char *comma = lt ? strchr(lt, ',') : NULL;
    double v;
    if (!comma || !tlog_number(comma + 1, false, &v, &end) || !(v > 0))
        return NAN;
    if (strncmp(end, "s/it", 4) == 0)
        return v;
    if (strncmp(end, "it/s", 4) == 0)
        return 1 / v;
    return NAN;
}

static bool detect(const tlog_text_t *t)
{
    for (int i = 0; i < t->n; i++)
        if (is_printer_line(t->lines[i].s) || is_bar_line(t->lines[i].s))
            return true;
    return false;
}

/* The metrics a line may carry; sep is ':' (printer) or '=' (bar). */
static const struct {
    const char *key;
    size_t offset;
    double scale;
} metrics[] = {
    {TIMING, offsetof(tlog_record_t, step_time_s), 1},
    {"TFLOPS_per_GPU", offsetof(tlog_record_t, tflops_per_gpu), 1},
    {"reduced_train_loss", offsetof(tlog_record_t, loss), 1},
    {"tokens_per_sec_per_gpu", offsetof(tlog_record_t, tokens_per_s_per_gpu), 1},
    {"max_memory_reserved", offsetof(tlog_record_t, memory_gib), 1.0 / 1073741824},
};

static int metric_line(const tlog_text_t *t, const tlog_line_t *l, char sep, trainlog_t *out,
                       err_t *err)
{
    const char *s = l->s;
    long step;
    char *end;
    if (sep == ':') {
        const char *it = strstr(s, ", iteration ") + strlen(", iteration ");
        step = strtol(it, &end, 10);
        if (end == it || *end != '/')
            return tlog_bad(t, l->line, err, "progress line: expected 'iteration N/M'");
    } else {
        /* the bar's "n/total [" */
        const char *br = strstr(s, " [");
        const char *slash = br;
        while (slash && slash > s && *slash != '/')
            slash--;
        const char *num = slash;
        while (num && num > s && num[-1] >= '0' && num[-1] <= '9')
            num--;
        if (!br || num == slash)
            return tlog_bad(t, l->line, err, "progress bar: expected 'n/total [' before the metrics");
        step = strtol(num, &end, 10);
    }
    if (tlog_is_cut(t, l))
        return tlog_bad(t, l->line, err, "progress line cut short (the file ends inside it)");
    /* a progress bar redraws the same step; keep its last drawing */
    tlog_record_t *r = out->n_records > 0 && out->records[out->n_records - 1].step == step
                           ? &out->records[out->n_records - 1]
                           : tlog_add_record(out, step, l->line);
    if (!r)
        return err_set(err, ERR_RUNTIME, "out of memory reading %s", t->file);
    for (size_t k = 0; k < sizeof metrics / sizeof metrics[0]; k++) {
        char key[64];
        snprintf(key, sizeof key, "%s%c", metrics[k].key, sep);
        double v;
        bool bad = false;
        const char *at = strstr(s, key);
        if (sep == '=' && at && (at[strlen(key)] == ',' || at[strlen(key)] == ']'))
            continue; /* the bar has no value for it yet */
        if (tlog_value_after(s, key, false, sep == ':' ? "|" : ",]", &v, &bad))
            *(double *)((char *)r + metrics[k].offset) = v * metrics[k].scale;
        else if (bad)
            return tlog_bad(t, l->line, err, "%s: not a number", metrics[k].key);
    }
    if (sep == '=' && !strstr(s, TIMING "=") && isfinite(bar_rate(s))) {
        r->step_time_s = bar_rate(s);
        snprintf(out->caveat, sizeof out->caveat,
                 "the step time is the progress bar's rate, tqdm's average since the bar "
                 "started (the log prints no train_step_timing)");
    }
    double gb;
    bool bad = false;
    char key[32];
    snprintf(key, sizeof key, "global_batch_size%c", sep);
    if (tlog_value_after(s, key, false, sep == ':' ? "|" : ",]", &gb, &bad) && gb >= 1)
        out->samples_per_step = gb, out->batch_line = l->line;
    if (isfinite(r->memory_gib) && !(r->memory_gib <= out->memory_gib)) {
        out->memory_gib = r->memory_gib;
        out->memory_line = l->line;
        snprintf(out->memory_kind, sizeof out->memory_kind, "max reserved");
    }
    return ERR_OK;
}

/* " > number of parameters on (tensor, pipeline) model parallel rank (3 ,7): N":
 * the largest ranks seen give the tensor and pipeline sizes. */
static void rank_line(const char *s, int *tp, int *pp)
{
    const char *p = strstr(s, "model parallel rank (");
    if (!p)
        return;
    p += strlen("model parallel rank (");
    char *end;
    long a = strtol(p, &end, 10);
    while (*end == ' ' || *end == ',')
        end++;
    long b = strtol(end, &end, 10);
    if (*end != ')' || a < 0 || b < 0 || a > (1 << 20) || b > (1 << 20))
        return;
    if (a + 1 > *tp)
        *tp = (int)a + 1;
    if (b + 1 > *pp)
        *pp = (int)b + 1;
}

static int parse(const tlog_text_t *t, trainlog_t *out, err_t *err)
{
    int rc = ERR_OK, tp = 0, pp = 0, rank_at = 0;
    for (int i = 0; i < t->n && !rc; i++) {
        const tlog_line_t *l = &t->lines[i];
        if (is_printer_line(l->s)) {
            rc = metric_line(t, l, ':', out, err);
        } else if (is_bar_line(l->s)) {
            rc = metric_line(t, l, '=', out, err);
        } else if (strstr(l->s, "> number of parameters on (tensor, pipeline)")) {
            rank_line(l->s, &tp, &pp);
            if (!rank_at)
                rank_at = l->line;
        }
    }
    if (rc)
        return rc;
    snprintf(out->framework, sizeof out->framework, "NeMo");
    /* the progress printer is NeMo 2's (24.09 to 25.04); its latest preset */
    if ((rc = tlog_add_setting(out, "--framework", "nemo-25.04", 0, err)))
        return rc;
    char text[32];
    if (tp > 0) {
        snprintf(text, sizeof text, "%d", tp);
        if ((rc = tlog_add_setting(out, "--tp", text, rank_at, err)))
            return rc;
        snprintf(text, sizeof text, "%d", pp);
        if ((rc = tlog_add_setting(out, "--pp", text, rank_at, err)))
            return rc;
    }
    if (out->samples_per_step > 0) {
        snprintf(text, sizeof text, "%.0f", out->samples_per_step);
        rc = tlog_add_setting(out, "--global-batch", text, out->records[0].line, err);
    }
    return rc;
}

const tlog_reader_t TLOG_READER_NEMO = {"nemo", "NeMo", detect, parse};
