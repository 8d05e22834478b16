/* The nanotron reader: the iteration line its trainer logs
 *
 *   01/17/2024 13:47:27 [INFO|DP=0|PP=0|TP=0|ip-26-0-160-225]: iteration: 991 / 1000 |
 *       consumed_tokens: 634K | elapsed_time_per_iteration_ms: 45 | tokens_per_sec: 14.2K |
 *       tokens_per_sec_per_gpu: 1.78K | global_batch_size: 20 | lm_loss: 10.6 | ...
 *
 * nanotron prints its figures rounded to three significant digits with a
 * K/M/G suffix ("11.5K" ms is 11,500 ms as printed). The global batch (in
 * sequences) is taken only where it is printed whole ("20", not "1.02K",
 * which could be any batch from 1,015 to 1,024): nothing is made up.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "inputs/trainlogInt.h"

#define ITER "iteration: "
#define ELAPSED "elapsed_time_per_iteration_ms: "

static bool is_iter_line(const char *s)
{
    return strstr(s, ITER) && strstr(s, ELAPSED);
}

static bool detect(const tlog_text_t *t)
{
    return tlog_any_line(t, is_iter_line);
}

/* The figure after key, with its K/M/G/T suffix applied; *whole is set
 * when it was printed without a suffix. 0 absent, 1 read, -1 not a number. */
static int human_value(const char *s, const char *key, double *v, bool *whole)
{
    const char *k = strstr(s, key), *end;
    if (!k)
        return 0;
    if (!tlog_number(k + strlen(key), false, v, &end))
        return -1;
    static const char suffixes[] = "KMGT";
    const char *x = *end ? strchr(suffixes, *end) : NULL;
    *whole = !x;
    if (x) {
        *v *= pow(1000, (double)(x - suffixes + 1));
        end++;
    }
    return *end == '\0' || *end == ' ' ? 1 : -1;
}

static int iter_line(const tlog_text_t *t, const tlog_line_t *l, trainlog_t *out, err_t *err)
{
    const char *s = l->s, *end;
    double step;
    if (!tlog_number(strstr(s, ITER) + strlen(ITER), false, &step, &end) || step < 0 ||
        step > 1e15)
        return tlog_bad(t, l->line, err, "iteration line: expected 'iteration: N / M'");
    if (tlog_is_cut(t, l))
        return tlog_bad(t, l->line, err, "iteration line cut short (the file ends inside it)");
    tlog_record_t *r = tlog_add_record(out, (long)step, l->line);
    if (!r)
        return err_set(err, ERR_RUNTIME, "out of memory reading %s", t->file);
    static const struct {
        const char *key;
        size_t offset;
        double scale;
    } metrics[] = {
        {ELAPSED, offsetof(tlog_record_t, step_time_s), 1e-3},
        {"tokens_per_sec_per_gpu: ", offsetof(tlog_record_t, tokens_per_s_per_gpu), 1},
        {"model_tflops_per_gpu: ", offsetof(tlog_record_t, tflops_per_gpu), 1},
        {"lm_loss: ", offsetof(tlog_record_t, loss), 1},
    };
    for (size_t k = 0; k < sizeof metrics / sizeof metrics[0]; k++) {
        double v;
        bool whole;
        int got = human_value(s, metrics[k].key, &v, &whole);
        if (got < 0)
            return tlog_bad(t, l->line, err, "%.*s: not a number", (int)strlen(metrics[k].key) - 2,
                            metrics[k].key);
        if (got)
            *(double *)((char *)r + metrics[k].offset) = v * metrics[k].scale;
    }
    double gb;
    bool whole;
    if (human_value(s, "global_batch_size: ", &gb, &whole) > 0 && whole && gb >= 1 &&
        gb == floor(gb))
        out->samples_per_step = gb, out->batch_line = l->line;
    return ERR_OK;
}

static int parse(const tlog_text_t *t, trainlog_t *out, err_t *err)
{
    int rc = ERR_OK;
    for (int i = 0; i < t->n && !rc; i++)
        if (is_iter_line(t->lines[i].s))
            rc = iter_line(t, &t->lines[i], out, err);
    if (rc || !(out->samples_per_step > 0))
        return rc;
    char text[32];
    snprintf(text, sizeof text, "%.0f", out->samples_per_step);
    return tlog_add_setting(out, "--global-batch", text, out->batch_line, err);
}

const tlog_reader_t TLOG_READER_NANOTRON = {"nanotron", "nanotron", detect, parse};
