/* The Composer reader (MosaicML Composer, which llm-foundry trains with):
 * the console logger prints one block a logged batch,
 *
 *   [epoch=1][batch=20/100]:
 *            Train time/batch: 19
 *            Train time/sample: 6080
 *            Train time/token: 12451840
 *            Train throughput/samples_per_sec: 31.9
 *            Train throughput/device/samples_per_sec: 3.99
 *            Train time/train: 0.0528
 *
 * (composer/loggers/console_logger.py). "time/train" is the SpeedMonitor's
 * wall clock since training began, in hours, so the step time is its
 * change over the change in "time/batch" between two blocks: the log's own
 * clock, not a rate. The batch in sequences and tokens is the change in
 * "time/sample" and "time/token" a batch, the GPU count the job's samples
 * per second over one device's.
 */
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "inputs/trainlogInt.h"

/* The text after "[batch=" when the line opens a block ("[epoch=1]"
 * may come first); NULL otherwise. */
static const char *block_start(const char *s)
{
    s = tlog_skip_blanks(s);
    if (strncmp(s, "[epoch=", 7) == 0) {
        const char *e = strchr(s, ']');
        if (!e)
            return NULL;
        s = e + 1;
    }
    return strncmp(s, "[batch=", 7) == 0 && strstr(s, "]:") ? s + 7 : NULL;
}

static bool detect(const tlog_text_t *t)
{
    for (int i = 0; i + 1 < t->n; i++)
        if (block_start(t->lines[i].s) && strstr(t->lines[i + 1].s, "Train "))
            return true;
    return false;
}

/* One block's figures, NAN where absent. */
typedef struct {
    int line;
    double batch, sample, token, hours, samples_per_s, device_samples_per_s, reserved_gib,
        batches_per_s;
} block_t;

static void block_value(const char *s, block_t *b)
{
    static const struct {
        const char *key;
        size_t offset;
    } keys[] = {
        {"Train time/batch:", offsetof(block_t, batch)},
        {"Train time/sample:", offsetof(block_t, sample)},
        {"Train time/token:", offsetof(block_t, token)},
        {"Train time/train:", offsetof(block_t, hours)},
        {"Train throughput/samples_per_sec:", offsetof(block_t, samples_per_s)},
        {"Train throughput/device/samples_per_sec:", offsetof(block_t, device_samples_per_s)},
        {"Train memory/reserved_mem:", offsetof(block_t, reserved_gib)},
        {"Train memory/peak_reserved_mem:", offsetof(block_t, reserved_gib)},
        {"Train throughput/batches_per_sec:", offsetof(block_t, batches_per_s)},
    };
    const char *p = tlog_skip_blanks(s);
    for (size_t k = 0; k < sizeof keys / sizeof keys[0]; k++) {
        size_t n = strlen(keys[k].key);
        double v;
        bool bad = false;
        if (strncmp(p, keys[k].key, n) == 0 && tlog_value_after(p, keys[k].key, false, "", &v, &bad))
            *(double *)((char *)b + keys[k].offset) = v;
    }
}

/* The run-level batch (sequences, and tokens when a whole number of them
 * a step) and GPU count from the first block that gives them: the
 * counters are cumulative, so a block at batch N gives samples / N. */
static void run_figures(const block_t *b, trainlog_t *out)
{
    double samples = b->sample / b->batch, tokens = b->token / b->batch;
    if (!(out->samples_per_step > 0) && b->batch >= 1 && samples >= 1) {
        out->samples_per_step = samples;
        out->batch_line = b->line;
        if (tokens >= samples && fabs(tokens - round(tokens)) < 1e-6 * tokens &&
            fabs(tokens / samples - round(tokens / samples)) < 1e-6 * tokens / samples)
            out->tokens_per_step = round(tokens);
    }
    double gpus = b->samples_per_s / b->device_samples_per_s;
    if (out->n_gpus == 0 && gpus >= 0.5 && gpus < 1 << 24) {
        out->n_gpus = (int)lround(gpus);
        out->gpus_line = b->line;
    }
    if (b->reserved_gib > 0 && !(b->reserved_gib * 1e9 / 1073741824.0 <= out->memory_gib)) {
        out->memory_gib = b->reserved_gib * 1e9 / 1073741824.0; /* Composer prints GB */
        out->memory_line = b->line;
        snprintf(out->memory_kind, sizeof out->memory_kind, "max reserved");
    }
}

/* A record for block b: its step time is the change in time/train since
 * the previous block over the batches between them, or, for the first
 * block, one over the SpeedMonitor's batches per second. */
static int add_block(const block_t *prev, const block_t *b, trainlog_t *out, err_t *err,
                     const tlog_text_t *t)
{
    if (!isfinite(b->batch))
        return ERR_OK;
    run_figures(b, out);
    tlog_record_t *r = tlog_add_record(out, (long)b->batch, b->line);
    if (!r)
        return err_set(err, ERR_RUNTIME, "out of memory reading %s", t->file);
    double steps = prev ? b->batch - prev->batch : NAN, dh = prev ? b->hours - prev->hours : NAN;
    if (steps >= 1 && dh > 0) {
        r->covers = (long)steps;
        r->step_time_s = dh * 3600 / steps;
    } else if (b->batches_per_s > 0) {
        r->step_time_s = 1 / b->batches_per_s;
    }
    r->samples_per_s = b->samples_per_s;
    r->memory_gib = b->reserved_gib;
    return ERR_OK;
}

static int parse(const tlog_text_t *t, trainlog_t *out, err_t *err)
{
    block_t prev = {0}, cur = {0};
    bool have_prev = false, in_block = false;
    int rc = ERR_OK;
    for (int i = 0; i <= t->n && !rc; i++) {
        const char *s = i < t->n ? t->lines[i].s : NULL;
        if (s && in_block && strncmp(tlog_skip_blanks(s), "Train ", 6) == 0) {
            block_value(s, &cur);
            continue;
        }
        if (in_block) { /* the block ended */
            rc = add_block(have_prev ? &prev : NULL, &cur, out, err, t);
            if (isfinite(cur.batch)) {
                prev = cur;
                have_prev = true;
            }
            in_block = false;
        }
        if (s && block_start(s)) {
            block_t fresh = {t->lines[i].line, NAN, NAN, NAN, NAN, NAN, NAN, NAN, NAN};
            cur = fresh;
            in_block = true;
        }
    }
    if (!rc && out->n_records > 0)
        snprintf(out->caveat, sizeof out->caveat,
                 "step times from the change in Composer's time/train between logged batches "
                 "(hours to four decimals: 0.36 s), or from its batches_per_sec for a first "
                 "block");
    return rc;
}

const tlog_reader_t TLOG_READER_COMPOSER = {"composer", "Composer / llm-foundry", detect, parse};
