/* The LitGPT (lit-gpt) reader: the line its pretrain and finetune scripts
 * print for each iteration (one micro-batch)
 *
 *   iter 77 step 39: loss 10.8259, iter time: 214.40ms (optimizer.step)
 *   [rank: 0] iter 34 step 35: iter time: 3372.20ms (optimizer.step)
 *   Epoch 1 | iter 46 step 1 | loss train: 3.724, val: n/a | iter time: 45.73 ms (step)
 *
 * The iteration that ends an optimizer step is marked "(optimizer.step)",
 * "(opt.step)" or "(step)". An optimizer step's time is the sum of its
 * iterations' times: those after the previous mark, up to and including
 * its own. The iterations before a paste's first mark belong to a step the
 * paste does not show whole, so they are left out.
 */
#include <stdio.h>
#include <string.h>

#include "inputs/trainlogInt.h"

#define ITER_TIME "iter time: "

static bool is_iter_line(const char *s)
{
    const char *p = strstr(s, "iter ");
    return p && strstr(p, " step ") && strstr(p, ITER_TIME);
}

static bool detect(const tlog_text_t *t)
{
    return tlog_any_line(t, is_iter_line);
}

static bool ends_step(const char *s)
{
    return strstr(s, "(optimizer.step)") || strstr(s, "(opt.step)") || strstr(s, "(step)");
}

static int parse(const tlog_text_t *t, trainlog_t *out, err_t *err)
{
    int marks = 0, iters = 0;
    double sum = 0;
    for (int i = 0; i < t->n; i++) {
        const tlog_line_t *l = &t->lines[i];
        if (!is_iter_line(l->s))
            continue;
        const char *end;
        double ms, step;
        const char *sp = strstr(strstr(l->s, "iter "), " step ") + strlen(" step ");
        if (!tlog_number(sp, false, &step, &end) || step < 0 || step > 1e15)
            return tlog_bad(t, l->line, err, "iteration line: expected 'iter N step M'");
        if (!tlog_number(strstr(l->s, ITER_TIME) + strlen(ITER_TIME), false, &ms, &end) ||
            strncmp(tlog_skip_blanks(end), "ms", 2) != 0 || !(ms > 0))
            return tlog_bad(t, l->line, err, "iteration line: expected 'iter time: N.NNms'");
        if (tlog_is_cut(t, l))
            return tlog_bad(t, l->line, err, "iteration line cut short (the file ends inside it)");
        iters++;
        sum += ms;
        if (!ends_step(l->s))
            continue;
        if (marks++ > 0) {
            tlog_record_t *r = tlog_add_record(out, (long)step, l->line);
            if (!r)
                return err_set(err, ERR_RUNTIME, "out of memory reading %s", t->file);
            r->step_time_s = sum / 1000;
            double v;
            bool bad = false;
            if (tlog_value_after(l->s, "loss ", false, ",", &v, &bad))
                r->loss = v;
        }
        sum = 0;
    }
    if (iters > 0 && out->n_records == 0)
        return err_setf(err, ERR_INPUT, t->file, NULL,
                        "no whole optimizer step in this LitGPT log: a step is the iterations "
                        "from one '(step)' or '(optimizer.step)' mark to the next, and the log "
                        "has %d mark%s; give a longer part of the log, or the step time as a "
                        "step,seconds CSV",
                        marks, marks == 1 ? "" : "s");
    return ERR_OK;
}

const tlog_reader_t TLOG_READER_LITGPT = {"litgpt", "LitGPT", detect, parse};
