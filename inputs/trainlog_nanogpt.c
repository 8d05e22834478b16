/* The nanoGPT reader: the line karpathy/nanoGPT's train.py prints for each
 * iteration (one optimizer step, its gradient-accumulation micro-steps
 * included)
 *
 *   iter 1631: loss 4.0863, time 561.94ms
 *   iter 64: loss 8.6740, time 119.74ms, mfu 35.40%
 *
 * The mfu is the script's own estimate (-100.00% until it has five
 * iterations, left out). Nothing on the line gives the batch or the GPUs.
 */
#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "inputs/trainlogInt.h"

/* "iter N: loss " at the start of s; the step in *step. */
static bool is_iter_line(const char *s, double *step)
{
    const char *end;
    s = tlog_skip_blanks(s);
    if (strncmp(s, "iter ", 5) != 0 || !isdigit((unsigned char)s[5]) ||
        !tlog_number(s + 5, false, step, &end))
        return false;
    return strncmp(end, ": loss ", 7) == 0 && strstr(end, ", time ");
}

static bool detect(const tlog_text_t *t)
{
    double step;
    for (int i = 0; i < t->n; i++)
        if (is_iter_line(t->lines[i].s, &step))
            return true;
    return false;
}

static int iter_line(const tlog_text_t *t, const tlog_line_t *l, double step, trainlog_t *out,
                     err_t *err)
{
    const char *s = l->s, *end;
    double ms, v;
    const char *time = strstr(s, ", time ") + strlen(", time ");
    if (!tlog_number(time, false, &ms, &end) || strncmp(end, "ms", 2) != 0 || !(ms > 0))
        return tlog_bad(t, l->line, err, "iteration line: expected ', time N.NNms'");
    if (tlog_is_cut(t, l))
        return tlog_bad(t, l->line, err, "iteration line cut short (the file ends inside it)");
    if (step > 1e15)
        return tlog_bad(t, l->line, err, "iteration number out of range");
    tlog_record_t *r = tlog_add_record(out, (long)step, l->line);
    if (!r)
        return err_set(err, ERR_RUNTIME, "out of memory reading %s", t->file);
    r->step_time_s = ms / 1000;
    bool bad = false;
    if (tlog_value_after(s, ": loss ", false, ",", &v, &bad))
        r->loss = v;
    if (tlog_value_after(s, ", mfu ", false, "%", &v, &bad) && v > 0)
        r->mfu = v / 100;
    return ERR_OK;
}

static int parse(const tlog_text_t *t, trainlog_t *out, err_t *err)
{
    int rc = ERR_OK;
    double step;
    for (int i = 0; i < t->n && !rc; i++)
        if (is_iter_line(t->lines[i].s, &step))
            rc = iter_line(t, &t->lines[i], step, out, err);
    return rc;
}

const tlog_reader_t TLOG_READER_NANOGPT = {"nanogpt", "nanoGPT", detect, parse};
