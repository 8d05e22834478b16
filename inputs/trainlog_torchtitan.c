/* The torchtitan reader: MetricsProcessor's step lines (colours and the
 * torchrun "[rank0]:" prefix already removed)
 *
 *   [titan] 2026-02-20 10:16:14,271 - root - INFO - step: 10  loss: 11.07941
 *       grad_norm: 10.9362  memory: 82.40GiB(87.09%)  tps: 5,747  tflops: 332.81  mfu: 33.65%
 *
 * (older versions: wps instead of tps, no tflops, no grad_norm; newer:
 * "mfu: N/A" under fp8), and the start-up lines that give the device mesh,
 * the batch, the model, the GPU and the activation checkpointing. tps is
 * tokens per second per GPU (torchtitan divides by the non-data-parallel
 * size), so the job's tokens per second are tps x the world size.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "inputs/trainlogInt.h"

/* The text after "step:" of a metric line (not "validate step:"), or NULL. */
static const char *metric_start(const char *s)
{
    const char *p = strstr(s, "step:");
    if (!p || (p > s && p[-1] != ' ') || strstr(s, "validate step:"))
        return NULL;
    if (!strstr(p, "loss:") || !(strstr(p, "tps:") || strstr(p, "wps:")))
        return NULL;
    return p + 5;
}

static bool detect(const tlog_text_t *t)
{
    for (int i = 0; i < t->n; i++)
        if (metric_start(t->lines[i].s))
            return true;
    return false;
}

static int metric_line(const tlog_text_t *t, const tlog_line_t *l, trainlog_t *out, err_t *err)
{
    const char *p = metric_start(l->s), *end;
    double step;
    if (!tlog_number(p, false, &step, &end) || step < 0 || step != floor(step) || step > 1e15)
        return tlog_bad(t, l->line, err, "step line: 'step:' is not followed by a step number");
    /* mfu is the last field of every version of the line */
    const char *mfu = strstr(p, "mfu:");
    if (!mfu || tlog_is_cut(t, l))
        return tlog_bad(t, l->line, err, "step line cut short (no 'mfu:' at its end)");
    tlog_record_t *r = tlog_add_record(out, (long)step, l->line);
    if (!r)
        return err_set(err, ERR_RUNTIME, "out of memory reading %s", t->file);
    long prev = out->n_records > 1 ? out->records[out->n_records - 2].step : 0;
    r->covers = r->step > prev ? r->step - prev : 1;
    static const struct {
        const char *key;
        bool commas, required;
        const char *follow;
    } keys[] = {{"loss:", false, true, ""},
                {"memory:", false, false, "G"},
                {"tps:", true, false, ""},
                {"wps:", true, false, ""},
                {"tflops:", true, false, ""}};
    double v[5];
    for (size_t k = 0; k < 5; k++) {
        bool bad = false;
        v[k] = NAN;
        if (!tlog_value_after(p, keys[k].key, keys[k].commas, keys[k].follow, &v[k], &bad) &&
            (bad || keys[k].required))
            return tlog_bad(t, l->line, err, "step line: '%s' %s", keys[k].key,
                            bad ? "is not followed by a number" : "is missing");
    }
    r->loss = v[0];
    r->memory_gib = v[1];
    r->tokens_per_s_per_gpu = isfinite(v[2]) ? v[2] : v[3];
    r->tflops_per_gpu = v[4];
    if (!(r->tokens_per_s_per_gpu >= 0))
        return tlog_bad(t, l->line, err, "step line: no tokens per second ('tps:' or 'wps:')");
    double m;
    if (tlog_number(mfu + 4, false, &m, &end))
        r->mfu = m / 100;
    else if (strncmp(tlog_skip_blanks(mfu + 4), "N/A", 3) != 0)
        return tlog_bad(t, l->line, err, "step line: 'mfu:' is not followed by a percentage");
    if (isfinite(r->memory_gib) && !(r->memory_gib <= out->memory_gib)) {
        out->memory_gib = r->memory_gib;
        out->memory_line = l->line;
        snprintf(out->memory_kind, sizeof out->memory_kind, "max reserved");
    }
    return ERR_OK;
}

static int add_int(trainlog_t *out, const char *option, long v, int line, err_t *err)
{
    char text[32];
    snprintf(text, sizeof text, "%ld", v);
    return tlog_add_setting(out, option, text, line, err);
}

/* "name=value" in s, a whole number from 1, or 0. */
static long mesh_dim(const char *s, const char *name)
{
    const char *p = s;
    size_t n = strlen(name);
    while ((p = strstr(p, name))) {
        if ((p == s || p[-1] == ' ' || p[-1] == ',') && p[n] == '=') {
            char *end;
            long v = strtol(p + n + 1, &end, 10);
            return end > p + n + 1 && v >= 1 && v <= (1 << 24) ? v : 0;
        }
        p += n;
    }
    return 0;
}

/* "Building device mesh with parallelism: pp=1, dp_replicate=1, dp_shard=8,
 * cp=1, tp=1, ep=1, etp=1", or the older "Building 1-D device mesh with
 * ['dp_shard'], [8]". */
static int mesh_line(const tlog_text_t *t, const tlog_line_t *l, trainlog_t *out, err_t *err)
{
    static const char *const dims[] = {"pp", "dp_replicate", "dp_shard", "cp", "tp"};
    long v[5] = {1, 1, 1, 1, 1};
    const char *s = l->s;
    if (strstr(s, "parallelism:")) {
        for (int k = 0; k < 5; k++)
            if (!(v[k] = mesh_dim(s, dims[k])))
                return tlog_bad(t, l->line, err, "device mesh: no whole number for '%s='", dims[k]);
    } else {
        /* names in the first [...], sizes in the second */
        const char *names = strchr(s, '['), *sizes = names ? strchr(names + 1, '[') : NULL;
        const char *close = names ? strchr(names, ']') : NULL;
        if (!names || !sizes || !close || close > sizes)
            return tlog_bad(t, l->line, err, "device mesh: expected ['name', ...], [size, ...]");
        const char *q = names + 1, *z = sizes + 1;
        while (q < close) {
            const char *a = strchr(q, '\'');
            if (!a || a >= close)
                break;
            const char *b = strchr(a + 1, '\'');
            char *end;
            long size = strtol(z, &end, 10);
            if (!b || end == z || size < 1 || size > (1 << 24))
                return tlog_bad(t, l->line, err, "device mesh: names and sizes do not match");
            for (int k = 0; k < 5; k++)
                if ((size_t)(b - a - 1) == strlen(dims[k]) && strncmp(a + 1, dims[k], strlen(dims[k])) == 0)
                    v[k] = size;
            q = b + 1;
            z = end;
            while (*z == ',' || *z == ' ')
                z++;
        }
    }
    long gpus = 1;
    for (int k = 0; k < 5; k++)
        gpus = gpus * v[k] > (1 << 24) ? (1 << 24) + 1 : gpus * v[k];
    if (gpus > (1 << 24))
        return tlog_bad(t, l->line, err, "device mesh: more than 16M GPUs");
    out->n_gpus = (int)gpus;
    int rc;
    if ((rc = add_int(out, "--gpus", gpus, l->line, err)) ||
        (rc = add_int(out, "--pp", v[0], l->line, err)) ||
        (rc = add_int(out, "--cp", v[3], l->line, err)) ||
        (rc = add_int(out, "--tp", v[4], l->line, err)))
        return rc;
    /* sharded data parallelism is FSDP (HSDP shards inside a replica) */
    if (v[2] > 1 && (rc = tlog_add_setting(out, "--framework", "torchtitan", l->line, err)))
        return rc;
    return add_int(out, "--zero", v[2] > 1 ? 3 : 0, l->line, err);
}

/* "Trainer is initialized with local batch size 2, global batch size 16,
 * gradient accumulation steps 1, sequence length 8192, ..." */
static int trainer_line(const tlog_text_t *t, const tlog_line_t *l, trainlog_t *out, err_t *err)
{
    static const struct {
        const char *key, *option;
    } keys[] = {{"local batch size", "--micro-batch"},
                {"global batch size", "--global-batch"},
                {"sequence length", "--seq-len"}};
    double v[3];
    for (int k = 0; k < 3; k++) {
        bool bad = false;
        if (!tlog_value_after(l->s, keys[k].key, false, ",", &v[k], &bad) || v[k] < 1 ||
            v[k] > 1e9 || v[k] != floor(v[k]))
            return tlog_bad(t, l->line, err, "trainer line: no whole number after '%s'",
                            keys[k].key);
        int rc = add_int(out, keys[k].option, (long)v[k], l->line, err);
        if (rc)
            return rc;
    }
    out->samples_per_step = v[1];
    out->batch_line = l->line;
    out->tokens_per_step = v[1] * v[2];
    return ERR_OK;
}

/* "Model llama3 8B size: 8,030,261,248 total parameters" -> --model llama3-8b */
static int model_line(const tlog_line_t *l, trainlog_t *out, err_t *err)
{
    const char *p = strstr(l->s, "Model ") + 6, *size = strstr(p, " size:");
    if (!size || size - p >= 60)
        return ERR_OK;
    char name[64];
    size_t n = 0;
    for (const char *q = p; q < size && n < sizeof name - 1; q++)
        name[n++] = *q == ' ' ? '-' : (char)(*q >= 'A' && *q <= 'Z' ? *q + 32 : *q);
    name[n] = '\0';
    double params;
    bool bad = false;
    if (tlog_value_after(size, "size:", true, NULL, &params, &bad))
        out->params = params, out->params_line = l->line;
    return n ? tlog_add_setting(out, "--model", name, l->line, err) : ERR_OK;
}

/* "CUDA capacity: NVIDIA H100 with 94.62GiB memory" -> --gpu "H100" */
static int device_line(const tlog_line_t *l, trainlog_t *out, err_t *err)
{
    const char *p = strstr(l->s, "capacity: ") + 10, *with = strstr(p, " with ");
    if (!with)
        return ERR_OK;
    static const char *const vendors[] = {"NVIDIA ", "AMD "};
    for (size_t k = 0; k < 2; k++)
        if (strncmp(p, vendors[k], strlen(vendors[k])) == 0)
            p += strlen(vendors[k]);
    char name[96];
    snprintf(name, sizeof name, "%.*s", (int)(with - p < 95 ? with - p : 95), p);
    double gib;
    bool bad = false;
    if (tlog_value_after(with, " with ", false, "G", &gib, &bad) && gib > 0)
        out->gpu_memory_gib = gib;
    return name[0] ? tlog_add_setting(out, "--gpu", name, l->line, err) : ERR_OK;
}

static int parse(const tlog_text_t *t, trainlog_t *out, err_t *err)
{
    int rc = ERR_OK;
    for (int i = 0; i < t->n && !rc; i++) {
        const tlog_line_t *l = &t->lines[i];
        const char *s = l->s;
        if (metric_start(s))
            rc = metric_line(t, l, out, err);
        else if (strstr(s, "device mesh with"))
            rc = mesh_line(t, l, out, err);
        else if (strstr(s, "Trainer is initialized with"))
            rc = trainer_line(t, l, out, err);
        else if (strstr(s, "Model ") && strstr(s, "total parameters"))
            rc = model_line(l, out, err);
        else if (strstr(s, " capacity: ") && strstr(s, "memory"))
            rc = device_line(l, out, err);
        else if (strstr(s, "Applied selective activation checkpointing"))
            /* torchtitan's selective checkpointing is its op-level policy
             * by default (activation_checkpoint.selective_ac_option "op") */
            rc = tlog_add_setting(out, "--recompute", "ops", l->line, err);
        else if (strstr(s, "Applied full activation checkpointing"))
            rc = tlog_add_setting(out, "--recompute", "full", l->line, err);
        else if (strstr(s, "Applied ") && strstr(s, "Float8"))
            rc = tlog_add_setting(out, "--precision", "fp8", l->line, err);
    }
    if (!rc)
        snprintf(out->framework, sizeof out->framework, "torchtitan");
    return rc;
}

const tlog_reader_t TLOG_READER_TORCHTITAN = {"torchtitan", "torchtitan", detect, parse};
