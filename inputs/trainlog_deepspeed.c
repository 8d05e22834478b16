/* The DeepSpeed reader: the engine's own lines (whatever script drives it)
 *
 *   [Rank 0] step=3, skipped=2, lr=[...], mom=[...]
 *   epoch=0/micro_step=3/global_step=3, RunningAvgSamplesPerSec=18.83,
 *       CurrSamplesPerSec=18.83, MemAllocated=9.78GB, MaxMemAllocated=62.41GB
 *   [Rank 0] time (ms) | fwd: 19418.48 | bwd: 58092.26 | bwd_inner: 50178.01 |
 *       bwd_allreduce: 7914.26 | step: 3671.56
 *
 * (older versions: "{epoch}/{step}, SamplesPerSec=...", "forward:" and
 * "backward*:" timer names), the DeepSpeedEngine configuration block and the
 * flops profiler's world size. Samples per second count the whole job, so
 * a step takes train_batch_size / CurrSamplesPerSec seconds.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "inputs/trainlogInt.h"

static bool is_progress(const char *s)
{
    const char *p = strstr(s, "step=");
    return p && (p == s || p[-1] == ' ') && strstr(p, ", skipped=");
}

static bool is_throughput(const char *s)
{
    return strstr(s, "SamplesPerSec=") != NULL;
}

/* The global (not per micro-step) wall-clock breakdown. */
static bool is_wall_clock(const char *s)
{
    return strstr(s, "time (ms) |") && (strstr(s, "| fwd:") || strstr(s, "| forward:"));
}

static bool detect(const tlog_text_t *t)
{
    for (int i = 0; i < t->n; i++) {
        const char *s = t->lines[i].s;
        if (is_throughput(s) || is_progress(s) || strstr(s, "DeepSpeed info: version="))
            return true;
    }
    return false;
}

/* The record of step, searching back from the newest; a new one when the
 * log has none yet. NULL when out of memory. */
static tlog_record_t *record_for(trainlog_t *out, long step, int line)
{
    for (int i = out->n_records - 1; i >= 0 && i >= out->n_records - 4; i--)
        if (out->records[i].step == step)
            return &out->records[i];
    return tlog_add_record(out, step, line);
}

static int cut(const tlog_text_t *t, const tlog_line_t *l, err_t *err)
{
    return tlog_bad(t, l->line, err, "line cut short (the file ends inside it)");
}

static int progress_line(const tlog_text_t *t, const tlog_line_t *l, long *skipped_before,
                         trainlog_t *out, err_t *err)
{
    double step, skipped;
    bool bad = false;
    if (!tlog_value_after(l->s, "step=", false, ",", &step, &bad) ||
        !tlog_value_after(l->s, "skipped=", false, ",", &skipped, &bad) || step < 0 || skipped < 0 ||
        step > 1e15 || skipped > 1e15)
        return tlog_bad(t, l->line, err, "progress line: expected 'step=N, skipped=N'");
    if (tlog_is_cut(t, l))
        return cut(t, l, err);
    if (step == 0) /* printed once when the engine starts */
        return ERR_OK;
    tlog_record_t *r = record_for(out, (long)step, l->line);
    if (!r)
        return err_set(err, ERR_RUNTIME, "out of memory reading %s", t->file);
    /* skipped counts from the start of training: a rise since the last
     * progress line is a skipped step; the first line a log (or a pasted
     * part of one) shows says so only when every step so far was skipped */
    r->skipped = *skipped_before < 0 ? skipped >= step : (long)skipped > *skipped_before;
    *skipped_before = (long)skipped;
    return ERR_OK;
}

static int throughput_line(const tlog_text_t *t, const tlog_line_t *l, trainlog_t *out,
                           err_t *err)
{
    if (tlog_is_cut(t, l))
        return cut(t, l, err);
    const char *s = l->s;
    double step = NAN, sps = NAN, mem = NAN;
    bool bad = false;
    if (!tlog_value_after(s, "global_step=", false, ",", &step, &bad)) {
        /* "{epoch}/{step}, SamplesPerSec=": the number before the comma */
        const char *slash = strchr(s, '/');
        const char *e;
        if (slash && !tlog_number(slash + 1, false, &step, &e))
            step = NAN;
    }
    if (!tlog_value_after(s, "CurrSamplesPerSec=", false, ",", &sps, &bad) && !bad) {
        const char *p = strstr(s, " SamplesPerSec=");
        if (!p)
            p = strstr(s, ",SamplesPerSec=");
        const char *e;
        if (!p || !tlog_number(p + strlen(" SamplesPerSec="), false, &sps, &e))
            bad = true;
    }
    if (bad || !(sps > 0))
        return tlog_bad(t, l->line, err, "throughput line: samples per second is not a positive number");
    tlog_value_after(s, "MaxMemAllocated=", false, "G", &mem, &bad);
    long at = step >= 0 && step < 1e15 ? (long)step
              : out->n_records > 0    ? out->records[out->n_records - 1].step
                                      : 1;
    tlog_record_t *r = record_for(out, at, l->line);
    if (!r)
        return err_set(err, ERR_RUNTIME, "out of memory reading %s", t->file);
    r->samples_per_s = sps;
    if (isfinite(mem)) {
        /* DeepSpeed's "GB" is bytes / 1024^3 */
        r->memory_gib = mem;
        if (!(mem <= out->memory_gib)) {
            out->memory_gib = mem;
            out->memory_line = l->line;
            snprintf(out->memory_kind, sizeof out->memory_kind, "max allocated");
        }
    }
    return ERR_OK;
}

static int wall_clock_line(const tlog_text_t *t, const tlog_line_t *l, trainlog_t *out,
                           err_t *err)
{
    if (tlog_is_cut(t, l))
        return cut(t, l, err);
    /* new names first, then the 2021-2023 ones */
    static const char *const keys[2][5] = {
        {"| fwd:", "| bwd:", "| bwd_inner:", "| bwd_allreduce:", "| step:"},
        {"| forward:", "| backward:", "| backward_inner:", "| backward_allreduce:", "| step:"}};
    int set = strstr(l->s, "| fwd:") ? 0 : 1;
    double v[5];
    for (int k = 0; k < 5; k++) {
        bool bad = false;
        v[k] = NAN;
        if (!tlog_value_after(l->s, keys[set][k], false, "|", &v[k], &bad) && bad)
            return tlog_bad(t, l->line, err, "wall-clock line: '%s' is not followed by a number",
                            keys[set][k] + 2);
    }
    long step = out->n_records > 0 ? out->records[out->n_records - 1].step : 1;
    tlog_record_t *r = record_for(out, step, l->line);
    if (!r)
        return err_set(err, ERR_RUNTIME, "out of memory reading %s", t->file);
    double inner = isfinite(v[2]) ? v[2] : v[1] - v[3];
    r->part_s[TLOG_PART_FORWARD] = v[0] / 1000;
    r->part_s[TLOG_PART_BACKWARD] = inner / 1000;
    r->part_s[TLOG_PART_GRAD_REDUCE] = v[3] / 1000;
    r->part_s[TLOG_PART_OPTIMIZER] = v[4] / 1000;
    return ERR_OK;
}

/* "  train_batch_size ............. 1536" in the engine configuration. */
static int config_line(const tlog_text_t *t, const tlog_line_t *l, trainlog_t *out, err_t *err)
{
    static const struct {
        const char *name, *option;
    } keys[] = {{"train_batch_size", "--global-batch"},
                {"train_micro_batch_size_per_gpu", "--micro-batch"},
                {"world_size", "--gpus"},
                {"zero_optimization_stage", "--zero"}};
    for (size_t k = 0; k < sizeof keys / sizeof keys[0]; k++) {
        char pat[64];
        snprintf(pat, sizeof pat, "  %s ", keys[k].name);
        const char *p = strstr(l->s, pat);
        if (!p)
            continue;
        p += strlen(pat);
        while (*p == '.' || *p == ' ')
            p++;
        char *end;
        long v = strtol(p, &end, 10);
        if (end == p || v < 0 || v > (1L << 30))
            return tlog_bad(t, l->line, err, "configuration: %s is not a whole number", keys[k].name);
        char text[32];
        snprintf(text, sizeof text, "%ld", v);
        if (strcmp(keys[k].name, "train_batch_size") == 0)
            out->samples_per_step = (double)v, out->batch_line = l->line;
        if (strcmp(keys[k].name, "world_size") == 0)
            out->n_gpus = (int)v, out->gpus_line = l->line;
        return tlog_add_setting(out, keys[k].option, text, l->line, err);
    }
    if (strstr(l->s, "  fp16_enabled ") && strstr(l->s, " True"))
        return tlog_add_setting(out, "--precision", "fp16", l->line, err);
    if (strstr(l->s, "  bf16_enabled ") && strstr(l->s, " True"))
        return tlog_add_setting(out, "--precision", "bf16", l->line, err);
    return ERR_OK;
}

/* Without throughput lines (steps_per_print unset), the wall-clock
 * breakdown is the only timing: fwd + bwd + step, which leaves out data
 * loading and anything else between steps. */
static void times_from_wall_clock(trainlog_t *out)
{
    for (int i = 0; i < out->n_records; i++)
        if (isfinite(out->records[i].samples_per_s))
            return;
    int n = 0;
    for (int i = 0; i < out->n_records; i++) {
        tlog_record_t *r = &out->records[i];
        double s = r->part_s[TLOG_PART_FORWARD] + r->part_s[TLOG_PART_BACKWARD] +
                   r->part_s[TLOG_PART_GRAD_REDUCE] + r->part_s[TLOG_PART_OPTIMIZER];
        if (isfinite(s) && s > 0) {
            r->step_time_s = s;
            n++;
        }
    }
    if (n > 0)
        snprintf(out->caveat, sizeof out->caveat,
                 "no throughput lines: step times are the wall-clock breakdown's fwd + bwd + "
                 "step, without data loading");
}

static int parse(const tlog_text_t *t, trainlog_t *out, err_t *err)
{
    long skipped = -1; /* no progress line yet */
    bool in_config = false;
    int rc = ERR_OK;
    for (int i = 0; i < t->n && !rc; i++) {
        const tlog_line_t *l = &t->lines[i];
        const char *s = l->s;
        if (strstr(s, "DeepSpeedEngine configuration:")) {
            in_config = true;
        } else if (in_config && strstr(s, "json = {")) {
            in_config = false;
        } else if (is_throughput(s)) {
            rc = throughput_line(t, l, out, err);
        } else if (is_progress(s)) {
            rc = progress_line(t, l, &skipped, out, err);
        } else if (is_wall_clock(s)) {
            rc = wall_clock_line(t, l, out, err);
        } else if (in_config) {
            rc = config_line(t, l, out, err);
        } else if (strncmp(s, "world size:", 11) == 0 && out->n_gpus == 0) {
            double v;
            bool bad = false;
            if (tlog_value_after(s, "world size:", false, "", &v, &bad) && v >= 1 && v < (1 << 24)) {
                out->n_gpus = (int)v;
                char text[32];
                snprintf(text, sizeof text, "%.0f", v);
                rc = tlog_add_setting(out, "--gpus", text, l->line, err);
            }
        }
    }
    if (rc)
        return rc;
    snprintf(out->framework, sizeof out->framework, "DeepSpeed");
    times_from_wall_clock(out);
    return tlog_add_setting(out, "--framework", "deepspeed", 0, err);
}

const tlog_reader_t TLOG_READER_DEEPSPEED = {"deepspeed", "DeepSpeed", detect, parse};
