/* The Megatron-LM reader (also Megatron-Bridge, which prints the same
 * iteration line): training_log()'s iteration lines, report_memory()'s
 * per-rank memory lines (MB in Megatron-LM, GB in Megatron-Bridge), the
 * world-size line and the argument block that validate_args() prints.
 *
 *  [2024-06-20 14:03:13] iteration        4/      20 | consumed samples: ... |
 *      elapsed time per iteration (ms): 2176.9 | throughput per GPU (TFLOP/s/GPU): 419.7 |
 *      ... | global batch size:   384 | lm loss: 1.091205E+01 | ... |
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "inputs/trainlogInt.h"

/* The iteration time, as Megatron-LM prints it (ms) and as the
 * Megatron-DeepSpeed of the BLOOM trainings printed it (s; bigscience
 * tr11-176B-ml chronicles), with the factor to seconds. */
static const struct {
    const char *key;
    double to_s;
} ELAPSED[] = {
    {"elapsed time per iteration (ms):", 1e-3},
    {"elapsed time per iteration (s):", 1},
};

/* The ELAPSED entry s carries, or NULL. */
static const char *elapsed_key(const char *s, double *to_s)
{
    for (size_t i = 0; i < sizeof ELAPSED / sizeof ELAPSED[0]; i++)
        if (strstr(s, ELAPSED[i].key)) {
            if (to_s)
                *to_s = ELAPSED[i].to_s;
            return ELAPSED[i].key;
        }
    return NULL;
}

/* After an optional "[date]" prefix, the text following "iteration" when
 * a digit comes next; NULL otherwise. */
static const char *iteration_start(const char *s)
{
    s = tlog_skip_blanks(s);
    /* GPT-NeoX puts " samples/sec: X |" in front of the iteration */
    if (strncmp(s, "samples/sec:", 12) == 0) {
        const char *bar = strchr(s, '|');
        if (!bar)
            return NULL;
        s = tlog_skip_blanks(bar + 1);
    }
    if (*s == '[') {
        const char *e = strchr(s, ']');
        if (!e)
            return NULL;
        s = tlog_skip_blanks(e + 1);
    }
    if (strncmp(s, "iteration", 9) != 0)
        return NULL;
    s = tlog_skip_blanks(s + 9);
    return *s >= '0' && *s <= '9' ? s : NULL;
}

static bool is_iteration_line(const char *s)
{
    return iteration_start(s) && elapsed_key(s, NULL);
}

static bool detect(const tlog_text_t *t)
{
    return tlog_any_line(t, is_iteration_line);
}

/* An optional number after key; ERR_INPUT naming the line when the key is
 * there and its value is not a number. */
static int optional_value(const tlog_text_t *t, const tlog_line_t *l, const char *key,
                          const char *follow, double *out, err_t *err)
{
    bool bad = false;
    if (tlog_value_after(l->s, key, false, follow, out, &bad))
        return ERR_OK;
    if (!bad)
        return ERR_OK;
    const char *v = tlog_skip_blanks(strstr(l->s, key) + strlen(key));
    return tlog_bad(t, l->line, err, "%s %s (got '%.24s')", key,
                    tlog_is_cut(t, l) ? "cut short" : "not a number", v);
}

static int iteration_line(const tlog_text_t *t, const tlog_line_t *l, long *prev, trainlog_t *out,
                          err_t *err)
{
    const char *p = iteration_start(l->s);
    char *end;
    long step = strtol(p, &end, 10);
    if (*end != '/' || step < 0)
        return tlog_bad(t, l->line, err, "iteration line: expected 'iteration N/ M' (got '%.32s')",
                        p);
    /* every piece, the last included, ends with " |": a line without the
     * final bar was cut */
    size_t n = strlen(l->s);
    while (n > 0 && (l->s[n - 1] == ' ' || l->s[n - 1] == '\t'))
        n--;
    if (n == 0 || l->s[n - 1] != '|')
        return tlog_bad(t, l->line, err,
                        "iteration line cut short (Megatron ends every iteration line with '|')");
    tlog_record_t *r = tlog_add_record(out, step, l->line);
    if (!r)
        return err_set(err, ERR_RUNTIME, "out of memory reading %s", t->file);
    r->covers = step > *prev ? step - *prev : 1;
    *prev = step;
    double elapsed = NAN, to_s = 1e-3, batch = NAN, skipped = NAN;
    const char *key = elapsed_key(l->s, &to_s);
    if (!key)
        return tlog_bad(t, l->line, err, "no '%s'", ELAPSED[0].key);
    int rc;
    if ((rc = optional_value(t, l, key, "|", &elapsed, err)) ||
        (rc = optional_value(t, l, "throughput per GPU (TFLOP/s/GPU):", "|", &r->tflops_per_gpu, err)) ||
        (rc = optional_value(t, l, "global batch size:", "|", &batch, err)) ||
        (rc = optional_value(t, l, "lm loss:", "|", &r->loss, err)) ||
        (rc = optional_value(t, l, "number of skipped iterations:", "|", &skipped, err)) ||
        (rc = optional_value(t, l, "samples/sec:", "|", &r->samples_per_s, err)))
        return rc;
    if (!(elapsed > 0))
        return tlog_bad(t, l->line, err, "%s must be a positive number", key);
    r->step_time_s = elapsed * to_s;
    /* an interval whose every iteration was skipped (fp16 overflow) ran no
     * optimizer step */
    r->skipped = skipped >= (double)r->covers;
    if (batch > 0 && out->samples_per_step != batch) {
        out->samples_per_step = batch;
        out->batch_line = l->line;
    }
    return ERR_OK;
}

/* GPT-NeoX prints no batch, but its samples/sec is train_batch_size over
 * the same interval's time per iteration (megatron/logging.py
 * training_log): their product is the batch. Taken when every line gives
 * the same whole number within 0.2% (three decimals of samples/sec, one of
 * the milliseconds), and said. */
static void neox_batch(trainlog_t *out)
{
    double batch = NAN;
    for (int i = 0; i < out->n_records; i++) {
        const tlog_record_t *r = &out->records[i];
        double b = r->samples_per_s * r->step_time_s;
        if (!(b >= 0.5) || (isfinite(batch) && fabs(b / batch - 1) > 0.002))
            return;
        if (!isfinite(batch))
            batch = b;
    }
    if (!isfinite(batch) || fabs(batch / round(batch) - 1) > 0.002)
        return;
    out->samples_per_step = round(batch);
    out->batch_line = out->records[0].line;
    snprintf(out->caveat, sizeof out->caveat,
             "GPT-NeoX prints no batch: %.0f sequences is samples/sec x the time per "
             "iteration on its lines",
             out->samples_per_step);
}

/* "[Rank N] (after K iterations) memory (MB) | ... | max reserved: x" or
 * Megatron-Bridge's "memory (GB) | ... | mem-max-reserved-gigabytes: x". */
static int memory_line(const tlog_text_t *t, const tlog_line_t *l, trainlog_t *out, err_t *err)
{
    static const struct {
        const char *unit, *key, *kind;
        double gib; /* GiB per unit */
    } keys[] = {
        {"memory (MB)", "max reserved:", "max reserved", 1.0 / 1024},
        {"memory (MB)", "max allocated:", "max allocated", 1.0 / 1024},
        {"memory (GB)", "mem-max-reserved-gigabytes:", "max reserved", 1e9 / 1073741824.0},
        {"memory (GB)", "mem-max-allocated-gigabytes:", "max allocated", 1e9 / 1073741824.0},
    };
    for (size_t k = 0; k < sizeof keys / sizeof keys[0]; k++) {
        if (!strstr(l->s, keys[k].unit) || !strstr(l->s, keys[k].key))
            continue;
        double v = NAN;
        int rc = optional_value(t, l, keys[k].key, "|", &v, err);
        if (rc)
            return rc;
        double gib = v * keys[k].gib;
        /* reserved is what the simulator's total counts; allocated only
         * when a log has no reserved figure */
        bool same = strcmp(out->memory_kind, keys[k].kind) == 0;
        bool better = out->memory_kind[0] == '\0' || (same && gib > out->memory_gib) ||
                      (!same && strcmp(keys[k].kind, "max reserved") == 0);
        if (better) {
            out->memory_gib = gib;
            out->memory_line = l->line;
            snprintf(out->memory_kind, sizeof out->memory_kind, "%s", keys[k].kind);
        }
        return ERR_OK;
    }
    return ERR_OK;
}

/* "using world size: 768, data-parallel size: 48, context-parallel size: 1
 * tensor-model-parallel size: 8, pipeline-model-parallel size: 2" (the
 * punctuation differs by version; each "name size: value" is read alone). */
static int world_size_line(const tlog_text_t *t, const tlog_line_t *l, trainlog_t *out,
                           err_t *err)
{
    static const struct {
        const char *key, *option;
    } keys[] = {{"world size:", "--gpus"},
                {"tensor-model-parallel size:", "--tp"},
                {"pipeline-model-parallel size:", "--pp"},
                {"context-parallel size:", "--cp"}};
    for (size_t k = 0; k < sizeof keys / sizeof keys[0]; k++) {
        double v = NAN;
        int rc = optional_value(t, l, keys[k].key, ",t", &v, err);
        if (rc)
            return rc;
        if (isnan(v))
            continue;
        if (!(v >= 1 && v <= (1 << 24) && v == floor(v)))
            return tlog_bad(t, l->line, err, "%s must be a whole number from 1 (got %g)",
                            keys[k].key, v);
        char text[32];
        snprintf(text, sizeof text, "%.0f", v);
        if ((rc = tlog_add_setting(out, keys[k].option, text, l->line, err)))
            return rc;
        if (strcmp(keys[k].option, "--gpus") == 0)
            out->n_gpus = (int)v;
    }
    return ERR_OK;
}

/* "  name ......... value" (names longer than 48 characters get no dots). */
static int argument_line(const tlog_line_t *l, trainlog_t *out, err_t *err)
{
    const char *s = l->s;
    if (s[0] != ' ' || s[1] != ' ')
        return ERR_OK; /* another rank's output in between */
    s += 2;
    char name[64];
    size_t n = 0;
    while ((*s == '_' || (*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
            (*s >= '0' && *s <= '9')) &&
           n < sizeof name - 1)
        name[n++] = *s++;
    name[n] = '\0';
    if (n == 0 || *s != ' ')
        return ERR_OK;
    s = tlog_skip_blanks(s);
    while (*s == '.')
        s++;
    if (*s == ' ')
        s++;
    return tlog_add_arg(out, name, s, l->line, err);
}

static const tlog_setting_t *arg_named(const trainlog_t *out, const char *dest)
{
    for (int i = out->n_args - 1; i >= 0; i--)
        if (strcmp(out->args[i].name, dest) == 0)
            return &out->args[i];
    return NULL;
}

/* The argument block is kept verbatim (inputs/megatron_args reads it into
 * a model, a layout and the simulator's options); only the world size is
 * a setting of its own, for logs whose world-size line is missing. */
static int settings_from_args(trainlog_t *out, err_t *err)
{
    const tlog_setting_t *w = arg_named(out, "world_size");
    if (!w || trainlog_setting(out, "--gpus"))
        return ERR_OK;
    char *end;
    long v = strtol(w->value, &end, 10);
    if (end == w->value || *end || v < 1 || v > (1 << 24))
        return ERR_OK;
    out->n_gpus = (int)v;
    return tlog_add_setting(out, "--gpus", w->value, w->line, err);
}

/* " > padded vocab (size: 131072) with 0 dummy tokens (new size: 131072)" */
static int vocab_line(const tlog_text_t *t, const tlog_line_t *l, trainlog_t *out, err_t *err)
{
    double size = NAN, padded = NAN;
    int rc;
    if ((rc = optional_value(t, l, "(size:", ")", &size, err)) ||
        (rc = optional_value(t, l, "(new size:", ")", &padded, err)))
        return rc;
    char text[32];
    if (size >= 1 && size < 1e9) {
        snprintf(text, sizeof text, "%.0f", size);
        if ((rc = tlog_add_arg(out, "vocab_size", text, l->line, err)))
            return rc;
    }
    if (padded >= 1 && padded < 1e9) {
        snprintf(text, sizeof text, "%.0f", padded);
        rc = tlog_add_arg(out, "padded_vocab_size", text, l->line, err);
    }
    return rc;
}

static int parse(const tlog_text_t *t, trainlog_t *out, err_t *err)
{
    long prev = 0;
    bool in_args = false, had_args = false;
    int rc = ERR_OK;
    for (int i = 0; i < t->n && !rc; i++) {
        const tlog_line_t *l = &t->lines[i];
        const char *s = l->s;
        if (in_args) {
            if (strstr(s, "end of arguments") && s[0] == '-')
                in_args = false;
            else
                rc = argument_line(l, out, err);
        } else if (s[0] == '-' && strstr(s, "- arguments -")) {
            in_args = had_args = true;
        } else if (iteration_start(s)) {
            if (elapsed_key(s, NULL))
                rc = iteration_line(t, l, &prev, out, err);
            else if (tlog_is_cut(t, l))
                rc = tlog_bad(t, l->line, err, "iteration line cut short (no '%s')",
                              ELAPSED[0].key);
        } else if (strncmp(s, "[Rank ", 6) == 0 && strstr(s, "(after") && strstr(s, "memory (")) {
            rc = memory_line(t, l, out, err);
        } else if (strncmp(s, "using world size:", 17) == 0) {
            rc = world_size_line(t, l, out, err);
        } else if (strncmp(s, "Step Time :", 11) == 0) {
            snprintf(out->framework, sizeof out->framework, "Megatron-Bridge");
        } else if (strstr(s, " > padded vocab (size:")) {
            rc = vocab_line(t, l, out, err);
        } else if (strncmp(s, "Total number of parameters in billions:", 39) == 0) {
            bool bad = false;
            double b;
            if (tlog_value_after(s, "billions:", false, "", &b, &bad))
                out->params = b * 1e9, out->params_line = l->line;
        }
    }
    if (rc)
        return rc;
    bool bridge = strcmp(out->framework, "Megatron-Bridge") == 0;
    if (!bridge)
        snprintf(out->framework, sizeof out->framework, "%s",
                 tlog_find(t, "| iteration") && tlog_find(t, "samples/sec:") ? "GPT-NeoX"
                                                                             : "Megatron-LM");
    if (strcmp(out->framework, "GPT-NeoX") == 0 && !(out->samples_per_step > 0))
        neox_batch(out);
    /* Megatron-LM is the default preset; Megatron-Bridge runs its recipes */
    if (bridge && (rc = tlog_add_setting(out, "--framework", "megatron-bridge", 0, err)))
        return rc;
    if (had_args && (rc = settings_from_args(out, err)))
        return rc;
    /* the iteration lines' global batch when no argument block said it */
    if (!trainlog_setting(out, "--global-batch") && out->samples_per_step > 0) {
        char text[32];
        snprintf(text, sizeof text, "%.0f", out->samples_per_step);
        int line = out->n_records > 0 ? out->records[0].line : 0;
        rc = tlog_add_setting(out, "--global-batch", text, line, err);
    }
    return rc;
}

const tlog_reader_t TLOG_READER_MEGATRON = {"megatron", "Megatron-LM", detect, parse};
