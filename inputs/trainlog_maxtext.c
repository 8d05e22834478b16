/* The MaxText reader: the line its metric logger prints after each step
 *
 *   completed step: 2, seconds: 10.228, TFLOP/s/device: 350.869,
 *       Tokens/s/device: 19222.175, total_weights: 1572864, loss: 12.980
 *
 * (older versions print "TFLOP/s: 36.722" and no tokens), with or without
 * absl's "I0811 21:54:55.531340 ... metric_logger.py:226] " in front. The
 * line gives neither the batch nor the device count: total_weights counts
 * the batch's non-padding target tokens, which is the batch only when no
 * sequence is padded, so it is not taken as one.
 */
#include <stdio.h>
#include <string.h>

#include "inputs/trainlogInt.h"

#define STEP "completed step: "
#define SECONDS ", seconds: "

static bool is_step_line(const char *s)
{
    return strstr(s, STEP) && strstr(s, SECONDS);
}

static bool detect(const tlog_text_t *t)
{
    return tlog_any_line(t, is_step_line);
}

static int step_line(const tlog_text_t *t, const tlog_line_t *l, trainlog_t *out, err_t *err)
{
    const char *s = l->s, *end;
    double step;
    if (!tlog_number(strstr(s, STEP) + strlen(STEP), false, &step, &end) || *end != ',' ||
        step < 0 || step > 1e15)
        return tlog_bad(t, l->line, err, "step line: expected 'completed step: N,'");
    if (tlog_is_cut(t, l))
        return tlog_bad(t, l->line, err, "step line cut short (the file ends inside it)");
    tlog_record_t *r = tlog_add_record(out, (long)step, l->line);
    if (!r)
        return err_set(err, ERR_RUNTIME, "out of memory reading %s", t->file);
    static const struct {
        const char *key;
        size_t offset;
    } metrics[] = {
        {SECONDS, offsetof(tlog_record_t, step_time_s)},
        {"TFLOP/s/device: ", offsetof(tlog_record_t, tflops_per_gpu)},
        {"TFLOP/s: ", offsetof(tlog_record_t, tflops_per_gpu)},
        {"Tokens/s/device: ", offsetof(tlog_record_t, tokens_per_s_per_gpu)},
        {" loss: ", offsetof(tlog_record_t, loss)},
    };
    for (size_t k = 0; k < sizeof metrics / sizeof metrics[0]; k++) {
        double v;
        bool bad = false;
        if (tlog_value_after(s, metrics[k].key, false, ",", &v, &bad))
            *(double *)((char *)r + metrics[k].offset) = v;
        else if (bad)
            return tlog_bad(t, l->line, err, "%s not a number", metrics[k].key);
    }
    if (!(r->step_time_s > 0))
        return tlog_bad(t, l->line, err, "seconds must be a positive number");
    return ERR_OK;
}

static int parse(const tlog_text_t *t, trainlog_t *out, err_t *err)
{
    int rc = ERR_OK;
    for (int i = 0; i < t->n && !rc; i++)
        if (is_step_line(t->lines[i].s))
            rc = step_line(t, &t->lines[i], out, err);
    return rc;
}

const tlog_reader_t TLOG_READER_MAXTEXT = {"maxtext", "MaxText", detect, parse};
