/* deepspeed: ds_config.json into a layout and simulator options. Keys and
 * defaults as DeepSpeed's pydantic config models have them
 * (deepspeed/runtime/zero/config.py, offload_config.py, config.py), "auto"
 * as the Hugging Face Trainer resolves it (transformers
 * integrations/deepspeed.py). */
#include "inputs/deepspeed.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "common/fileio.h"
#include "common/json.h"

typedef struct {
    const char *file;
    const deepspeed_given_t *g;
    layout_t *l;
    sim_options_t *o;
    notes_t *notes;
    err_t *err;
} ds_t;

static bool is_auto(const cJSON *v)
{
    return cJSON_IsString(v) && strcmp(v->valuestring, "auto") == 0;
}

static void note(ds_t *d, note_kind_t kind, const json_ctx_t *ctx, const char *key,
                 const char *text)
{
    json_ctx_t k = json_ctx_member(ctx, key);
    notes_add(d->notes, kind, k.path, "%s", text);
}

/* An integer key: a whole number (2e8 counts) or "auto"; *got says which
 * (0 absent, 1 a number, 2 "auto"). */
static int get_int(ds_t *d, const cJSON *obj, const json_ctx_t *ctx, const char *key, long lo,
                   long hi, int *out, int *got)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
    *got = 0;
    if (!v || cJSON_IsNull(v))
        return ERR_OK;
    if (is_auto(v)) {
        *got = 2;
        return ERR_OK;
    }
    *got = 1;
    return json_get_int(obj, key, ctx, JSON_REQUIRED, lo, hi, out, d->err);
}

static int get_double(ds_t *d, const cJSON *obj, const json_ctx_t *ctx, const char *key,
                      double lo, double hi, double *out, int *got)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
    *got = 0;
    if (!v || cJSON_IsNull(v))
        return ERR_OK;
    if (is_auto(v)) {
        *got = 2;
        return ERR_OK;
    }
    *got = 1;
    return json_get_double(obj, key, ctx, JSON_REQUIRED, lo, hi, out, d->err);
}

/* A boolean key: true/false or "auto" (*got as get_int). */
static int get_bool(ds_t *d, const cJSON *obj, const json_ctx_t *ctx, const char *key, bool *out,
                    int *got)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
    *got = 0;
    if (!v || cJSON_IsNull(v))
        return ERR_OK;
    if (is_auto(v)) {
        *got = 2;
        return ERR_OK;
    }
    *got = 1;
    return json_get_bool(obj, key, ctx, JSON_REQUIRED, out, d->err);
}

/* ------------------------------------------------------------ batch */

/* train_micro_batch_size_per_gpu: a number, "auto" (the Trainer's
 * per_device_train_batch_size: --micro-batch) or absent (--micro-batch or
 * the layout's), each said. */
static int micro_batch(ds_t *d, const cJSON *cfg, const json_ctx_t *ctx)
{
    const deepspeed_given_t *g = d->g;
    int rc, got, v = 0;
    char text[200];
    if ((rc = get_int(d, cfg, ctx, "train_micro_batch_size_per_gpu", 1, 1 << 20, &v, &got)))
        return rc;
    if (got == 1) {
        d->l->micro_batch = v;
        return ERR_OK;
    }
    const char *what = got == 2 ? "\"auto\"" : "absent";
    if (g && g->micro_batch)
        snprintf(text, sizeof text, "%s: --micro-batch %d", what, g->micro_batch);
    else if (got == 2)
        snprintf(text, sizeof text,
                 "\"auto\" (the Trainer's per_device_train_batch_size): %d assumed; give "
                 "--micro-batch",
                 d->l->micro_batch);
    else
        snprintf(text, sizeof text, "absent: %d assumed (give --micro-batch)", d->l->micro_batch);
    note(d, NOTE_ASSUMED, ctx, "train_micro_batch_size_per_gpu", text);
    return ERR_OK;
}

/* gradient_accumulation_steps: a number, "auto" or absent, each said. */
static int grad_accum(ds_t *d, const cJSON *cfg, const json_ctx_t *ctx)
{
    const deepspeed_given_t *g = d->g;
    int rc, got, v = 0;
    char text[200];
    if ((rc = get_int(d, cfg, ctx, "gradient_accumulation_steps", 1, 1 << 20, &v, &got)))
        return rc;
    if (got == 1) {
        d->l->grad_accum = v;
        return ERR_OK;
    }
    if (g && g->grad_accum)
        snprintf(text, sizeof text, "%s: --grad-accum %d", got == 2 ? "\"auto\"" : "absent",
                 g->grad_accum);
    else if (got == 2)
        snprintf(text, sizeof text,
                 "\"auto\" (the Trainer's gradient_accumulation_steps): 1 assumed unless "
                 "--global-batch sets it; give --grad-accum");
    else
        snprintf(text, sizeof text,
                 "absent: the global batch / (micro-batch x data-parallel ranks), 1 without a "
                 "global batch (DeepSpeed's default)");
    note(d, NOTE_ASSUMED, ctx, "gradient_accumulation_steps", text);
    return ERR_OK;
}

static int batch(ds_t *d, const cJSON *cfg, const json_ctx_t *ctx)
{
    const deepspeed_given_t *g = d->g;
    int rc, got, v = 0;
    char text[200];
    if ((rc = micro_batch(d, cfg, ctx)) || (rc = grad_accum(d, cfg, ctx)) ||
        (rc = get_int(d, cfg, ctx, "train_batch_size", 1, 1 << 30, &v, &got)))
        return rc;
    if (got == 1)
        d->l->global_batch = v;
    else if (got == 0 && g && g->global_batch)
        snprintf(text, sizeof text, "absent: --global-batch %d", g->global_batch);
    else
        snprintf(text, sizeof text,
                 "%s: micro-batch x accumulation x data-parallel ranks, as %s computes it",
                 got == 2 ? "\"auto\"" : "absent", got == 2 ? "the Trainer" : "DeepSpeed");
    if (got != 1)
        note(d, NOTE_ASSUMED, ctx, "train_batch_size", text);
    return ERR_OK;
}

/* ------------------------------------------------------------ precision */

static int enabled(ds_t *d, const cJSON *cfg, const json_ctx_t *ctx, const char *block,
                   int *state /* 0 off/absent, 1 on, 2 auto */, bool *present)
{
    const cJSON *b = NULL;
    int rc = json_get_object(cfg, block, ctx, JSON_OPTIONAL, &b, d->err);
    *state = 0;
    *present = b != NULL;
    if (rc || !b)
        return rc;
    json_ctx_t bctx = json_ctx_member(ctx, block);
    bool on = false;
    int got;
    if ((rc = get_bool(d, b, &bctx, "enabled", &on, &got)))
        return rc;
    *state = got == 2 ? 2 : (got == 1 && on) ? 1 : 0;
    /* Loss-scaling knobs: no effect on speed or memory. */
    const cJSON *k;
    cJSON_ArrayForEach(k, b)
    {
        if (strcmp(k->string, "enabled") != 0 && strcmp(block, "fp16") == 0 && *state) {
            note(d, NOTE_IGNORED, ctx, block,
                 "loss-scaling settings: no effect on speed or memory");
            break;
        }
    }
    return ERR_OK;
}

static int precision(ds_t *d, const cJSON *cfg, const json_ctx_t *ctx)
{
    int fp16, bf16, rc;
    bool has16, hasbf, hasb2;
    int bf16_legacy;
    if ((rc = enabled(d, cfg, ctx, "fp16", &fp16, &has16)) ||
        (rc = enabled(d, cfg, ctx, "bf16", &bf16, &hasbf)) ||
        (rc = enabled(d, cfg, ctx, "bfloat16", &bf16_legacy, &hasb2)))
        return rc;
    if (!hasbf && hasb2)
        bf16 = bf16_legacy;
    const cJSON *amp = cJSON_GetObjectItemCaseSensitive(cfg, "amp");
    if (amp && cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(amp, "enabled")))
        return err_setf(d->err, ERR_INPUT, d->file, "amp.enabled",
                        "apex AMP does not work with ZeRO in DeepSpeed and is not modeled; use "
                        "fp16 or bf16");
    if (fp16 == 1 && bf16 == 1)
        return err_setf(d->err, ERR_INPUT, d->file, "bf16.enabled",
                        "fp16 and bf16 cannot both be enabled (DeepSpeed refuses it)");
    const deepspeed_given_t *g = d->g;
    if (fp16 == 1)
        d->l->precision = PRECISION_FP16;
    else if (bf16 == 1)
        d->l->precision = PRECISION_BF16;
    else if (fp16 == 2 || bf16 == 2) {
        char text[200];
        if (g && g->have_precision)
            snprintf(text, sizeof text, "\"auto\": --precision %s",
                     layout_precision_name(g->precision));
        else
            snprintf(text, sizeof text,
                     "\"auto\" follows the Trainer's --bf16/--fp16: %s assumed (give "
                     "--precision)",
                     bf16 == 2 ? "bf16" : "fp16");
        note(d, NOTE_ASSUMED, ctx, bf16 == 2 ? "bf16.enabled" : "fp16.enabled", text);
        d->l->precision = g && g->have_precision ? g->precision
                          : bf16 == 2            ? PRECISION_BF16
                                                 : PRECISION_FP16;
    } else if (!(g && g->have_precision)) {
        d->l->precision = PRECISION_FP32;
        notes_add(d->notes, NOTE_ASSUMED, "fp16/bf16",
                  "neither enabled: DeepSpeed trains in fp32 (give --precision to change)");
    }
    return ERR_OK;
}

/* ------------------------------------------------------------ ZeRO */

/* zero_optimization keys scaleplan reads or knows, and what it does with
 * the others: 'N' no effect on speed or memory, 'M' not modeled. Any key
 * outside this list is refused, as DeepSpeed's config model forbids extra
 * keys. */
static const struct {
    const char *key;
    char kind;
} ZERO_KEYS[] = {
    {"stage", 'R'},
    {"offload_optimizer", 'R'},
    {"offload_param", 'R'},
    {"overlap_comm", 'R'},
    {"reduce_bucket_size", 'R'},
    {"cpu_offload", 'R'},
    {"cpu_offload_param", 'R'},
    {"cpu_offload_use_pin_memory", 'N'},
    {"contiguous_gradients", 'M'},
    {"reduce_scatter", 'M'},
    {"allgather_partitions", 'M'},
    {"allgather_bucket_size", 'M'},
    {"round_robin_gradients", 'M'},
    {"sub_group_size", 'M'},
    {"stage3_prefetch_bucket_size", 'M'},
    {"prefetch_bucket_size", 'M'},
    {"stage3_param_persistence_threshold", 'M'},
    {"param_persistence_threshold", 'M'},
    {"stage3_model_persistence_threshold", 'M'},
    {"model_persistence_threshold", 'M'},
    {"stage3_max_live_parameters", 'M'},
    {"max_live_parameters", 'M'},
    {"stage3_max_reuse_distance", 'M'},
    {"max_reuse_distance", 'M'},
    {"stage3_module_granularity_threshold", 'M'},
    {"stage3_use_all_reduce_for_fetch_params", 'M'},
    {"use_multi_rank_bucket_allreduce", 'M'},
    {"zero_hpz_partition_size", 'M'},
    {"zero_quantized_weights", 'M'},
    {"zero_quantized_nontrainable_weights", 'M'},
    {"zero_quantized_gradients", 'M'},
    {"mics_shard_size", 'M'},
    {"mics_hierarchical_params_gather", 'M'},
    {"memory_efficient_linear", 'N'},
    {"override_module_apply", 'N'},
    {"ignore_unused_parameters", 'N'},
    {"legacy_stage1", 'M'},
    {"elastic_checkpoint", 'N'},
    {"load_from_fp32_weights", 'N'},
    {"pipeline_loading_checkpoint", 'N'},
    {"log_trace_cache_warnings", 'N'},
    {"stage3_gather_16bit_weights_on_model_save", 'N'},
    {"stage3_gather_fp16_weights_on_model_save", 'N'},
    {"gather_16bit_weights_on_model_save", 'N'},
};

static int offload_block(ds_t *d, const cJSON *zero, const json_ctx_t *zctx, const char *key,
                         int bit)
{
    const cJSON *b = NULL;
    int rc = json_get_object(zero, key, zctx, JSON_OPTIONAL, &b, d->err);
    if (rc || !b)
        return rc;
    json_ctx_t bctx = json_ctx_member(zctx, key);
    static const char *const known[] = {"device",        "nvme_path",     "pin_memory",
                                        "buffer_count",  "buffer_size",   "max_in_cpu",
                                        "pipeline_read", "pipeline_write", "pipeline",
                                        "fast_init",     "ratio"};
    const cJSON *k;
    cJSON_ArrayForEach(k, b)
    {
        bool ok = false;
        for (size_t i = 0; i < sizeof known / sizeof known[0]; i++)
            ok = ok || strcmp(k->string, known[i]) == 0;
        if (!ok) {
            json_ctx_t kc = json_ctx_member(&bctx, k->string);
            return err_setf(d->err, ERR_INPUT, d->file, kc.path,
                            "not a DeepSpeed offload key (DeepSpeed rejects unknown keys)");
        }
    }
    char device[16] = "none";
    if ((rc = json_get_string(b, "device", &bctx, JSON_OPTIONAL, device, sizeof device, d->err)))
        return rc;
    if (!cJSON_GetObjectItemCaseSensitive(b, "device"))
        note(d, NOTE_ASSUMED, &bctx, "device", "absent: DeepSpeed's default none (nothing offloaded)");
    if (strcmp(device, "none") == 0)
        return ERR_OK;
    if (strcmp(device, "cpu") != 0 && strcmp(device, "nvme") != 0) {
        json_ctx_t kc = json_ctx_member(&bctx, "device");
        return err_setf(d->err, ERR_INPUT, d->file, kc.path,
                        "'%s' is not an offload device (none, cpu, nvme)", device);
    }
    d->l->offload |= bit;
    if (strcmp(device, "nvme") == 0)
        d->l->offload_nvme = true;
    if (bit == LAYOUT_OFFLOAD_OPTIMIZER) {
        double ratio = 1;
        int got;
        if ((rc = get_double(d, b, &bctx, "ratio", 0, 1, &ratio, &got)))
            return rc;
        if (got == 0)
            note(d, NOTE_ASSUMED, &bctx, "ratio",
                 "absent: DeepSpeed's default 1 (the whole optimizer state offloaded)");
        if (got == 1 && ratio < 1)
            d->l->offload_fraction = ratio;
    }
    if (cJSON_GetObjectItemCaseSensitive(b, "buffer_count") ||
        cJSON_GetObjectItemCaseSensitive(b, "buffer_size") ||
        cJSON_GetObjectItemCaseSensitive(b, "pin_memory"))
        note(d, NOTE_IGNORED, zctx, key,
             "pin_memory and buffer settings: transfers are priced at the link's pinned rate");
    return ERR_OK;
}

/* The ZeRO stage when the file gives none: --zero, or the layout's (its
 * framework's), whose DeepSpeed default is 0. */
static void zero_absent(ds_t *d, const json_ctx_t *ctx, const char *key)
{
    char text[200];
    if (d->g && d->g->have_zero)
        snprintf(text, sizeof text, "absent: --zero %d", d->g->zero);
    else if (d->l->zero == 0)
        snprintf(text, sizeof text, "absent: DeepSpeed's default, ZeRO stage 0 (nothing "
                                    "partitioned)");
    else
        snprintf(text, sizeof text,
                 "absent: ZeRO stage %d, the framework's (DeepSpeed's own default is 0; "
                 "--zero sets it)",
                 d->l->zero);
    note(d, NOTE_ASSUMED, ctx, key, text);
}

/* zero_optimization's keys: each known one read or said, an unknown one
 * refused as DeepSpeed's config model does. */
static int zero_keys(ds_t *d, const cJSON *z, const json_ctx_t *zctx)
{
    const cJSON *k;
    cJSON_ArrayForEach(k, z)
    {
        if (strcmp(k->string, "aio") == 0) {
            note(d, NOTE_IGNORED, zctx, "aio",
                 "DeepSpeed reads aio only at the top level (recent versions reject it here); "
                 "NVMe I/O tuning is not modeled");
            continue;
        }
        char kind = 0;
        for (size_t i = 0; i < sizeof ZERO_KEYS / sizeof ZERO_KEYS[0]; i++)
            if (strcmp(k->string, ZERO_KEYS[i].key) == 0)
                kind = ZERO_KEYS[i].kind;
        if (!kind) {
            json_ctx_t kc = json_ctx_member(zctx, k->string);
            return err_setf(d->err, ERR_INPUT, d->file, kc.path,
                            "not a DeepSpeed zero_optimization key (DeepSpeed rejects unknown "
                            "keys)");
        }
        if (kind == 'N')
            note(d, NOTE_IGNORED, zctx, k->string, "no effect on speed or memory");
        else if (kind == 'M')
            note(d, NOTE_IGNORED, zctx, k->string,
                 is_auto(k) ? "\"auto\" (the Trainer derives it from hidden_size): accepted; "
                              "not modeled"
                            : "accepted; its effect is not modeled");
    }
    return ERR_OK;
}

/* overlap_comm and reduce_bucket_size, for the simulator's options. */
static int zero_comm(ds_t *d, const cJSON *z, const json_ctx_t *zctx, int stage)
{
    int rc, got;
    sim_options_t *o = d->o;
    if (!o)
        return ERR_OK;
    /* overlap_comm: DeepSpeed's default is on for stage 3, off below. */
    bool overlap = stage == 3;
    if ((rc = get_bool(d, z, zctx, "overlap_comm", &overlap, &got)))
        return rc;
    if (got == 0)
        note(d, NOTE_ASSUMED, zctx, "overlap_comm",
             stage == 3 ? "absent: DeepSpeed's default for stage 3, true"
                        : "absent: DeepSpeed's default below stage 3, false");
    o->overlap_grad_reduce = overlap;
    o->bucket_params = 5e8; /* DeepSpeed's reduce_bucket_size default */
    int bucket = 0;
    if ((rc = get_int(d, z, zctx, "reduce_bucket_size", 1, 2000000000L, &bucket, &got)))
        return rc;
    if (got == 0)
        note(d, NOTE_ASSUMED, zctx, "reduce_bucket_size",
             "absent: DeepSpeed's default 5e8 elements");
    if (got == 1)
        o->bucket_params = bucket;
    if (got == 2) {
        char text[160];
        int hidden = d->g ? d->g->hidden : 0;
        if (hidden > 0) {
            o->bucket_params = (double)hidden * hidden;
            snprintf(text, sizeof text, "\"auto\": hidden_size^2 = %.0f (the Trainer's value)",
                     o->bucket_params);
        } else {
            snprintf(text, sizeof text, "\"auto\": DeepSpeed's default 5e8 (no model size known)");
        }
        note(d, NOTE_ASSUMED, zctx, "reduce_bucket_size", text);
    }
    return ERR_OK;
}

static int zero(ds_t *d, const cJSON *cfg, const json_ctx_t *ctx)
{
    const cJSON *z = NULL;
    int rc = json_get_object(cfg, "zero_optimization", ctx, JSON_OPTIONAL, &z, d->err);
    if (!rc && !z)
        zero_absent(d, ctx, "zero_optimization");
    if (rc || !z)
        return rc;
    json_ctx_t zctx = json_ctx_member(ctx, "zero_optimization");
    if ((rc = zero_keys(d, z, &zctx)))
        return rc;
    int stage = 0, got;
    if ((rc = get_int(d, z, &zctx, "stage", 0, 3, &stage, &got)))
        return rc;
    if (got == 2)
        return err_setf(d->err, ERR_INPUT, d->file, "zero_optimization.stage",
                        "\"auto\" is not a ZeRO stage (the Trainer does not fill it)");
    d->l->zero = stage;
    if (got == 0)
        zero_absent(d, &zctx, "stage");
    bool legacy = false;
    if ((rc = get_bool(d, z, &zctx, "cpu_offload", &legacy, &got)))
        return rc;
    if (got == 1 && legacy)
        d->l->offload |= LAYOUT_OFFLOAD_OPTIMIZER;
    if ((rc = get_bool(d, z, &zctx, "cpu_offload_param", &legacy, &got)))
        return rc;
    if (got == 1 && legacy)
        d->l->offload |= LAYOUT_OFFLOAD_PARAMS;
    if ((rc = offload_block(d, z, &zctx, "offload_optimizer", LAYOUT_OFFLOAD_OPTIMIZER)) ||
        (rc = offload_block(d, z, &zctx, "offload_param", LAYOUT_OFFLOAD_PARAMS)))
        return rc;
    if ((d->l->offload & LAYOUT_OFFLOAD_PARAMS) && stage < 3)
        return err_setf(d->err, ERR_INPUT, d->file, "zero_optimization.offload_param",
                        "parameter offload needs stage 3 (got stage %d)", stage);
    if (d->l->offload_fraction > 0 && stage < 3)
        return err_setf(d->err, ERR_INPUT, d->file, "zero_optimization.offload_optimizer.ratio",
                        "partial optimizer offload needs stage 3 (got stage %d)", stage);
    return zero_comm(d, z, &zctx, stage);
}

/* ------------------------------------------------------------ the rest */

static int checkpointing(ds_t *d, const cJSON *cfg, const json_ctx_t *ctx)
{
    const cJSON *a = NULL;
    int rc = json_get_object(cfg, "activation_checkpointing", ctx, JSON_OPTIONAL, &a, d->err);
    if (rc || !a)
        return rc;
    json_ctx_t actx = json_ctx_member(ctx, "activation_checkpointing");
    bool cpu = false, partition = false;
    int got;
    if ((rc = get_bool(d, a, &actx, "cpu_checkpointing", &cpu, &got)))
        return rc;
    if (got == 0)
        note(d, NOTE_ASSUMED, &actx, "cpu_checkpointing",
             "absent: DeepSpeed's default false (checkpoints stay on the GPU)");
    if ((rc = get_bool(d, a, &actx, "partition_activations", &partition, &got)))
        return rc;
    note(d, NOTE_ASSUMED, ctx, "activation_checkpointing",
         "configures DeepSpeed's checkpointing API; whether the model recomputes is the "
         "training script's choice (--recompute full for Megatron-DeepSpeed's "
         "--checkpoint-activations)");
    if (cpu) {
        if (d->g && d->g->full_recompute) {
            d->l->offload |= LAYOUT_OFFLOAD_ACTIVATIONS;
            note(d, NOTE_ASSUMED, &actx, "cpu_checkpointing",
                 "the checkpoints of every block but one go to host memory");
        } else {
            note(d, NOTE_IGNORED, &actx, "cpu_checkpointing",
                 "takes effect with activation recompute; give --recompute full to apply it");
        }
    }
    if (partition)
        note(d, NOTE_IGNORED, &actx, "partition_activations",
             "checkpoints split across tensor-parallel ranks: not modeled");
    return ERR_OK;
}

/* DeepSpeed's AutoTP (tensor_parallel.autotp_size, DeepSpeed 0.16.4+,
 * deepspeed/runtime/tensor_parallel/config.py): the layers split over that
 * many GPUs, tensor parallelism in scaleplan's layout. */
static int tensor_parallel(ds_t *d, const cJSON *cfg, const json_ctx_t *ctx)
{
    const cJSON *tp = cJSON_GetObjectItemCaseSensitive(cfg, "tensor_parallel");
    if (!tp || cJSON_IsNull(tp))
        return ERR_OK;
    json_ctx_t tctx = json_ctx_member(ctx, "tensor_parallel");
    int rc, size = 0, got;
    if ((rc = json_expect_object(tp, &tctx, d->err)) ||
        (rc = get_int(d, tp, &tctx, "autotp_size", 0, 65536, &size, &got)))
        return rc;
    if (got == 2)
        return err_setf(d->err, ERR_INPUT, d->file, "tensor_parallel.autotp_size",
                        "\"auto\" is not resolved by the Trainer: write the size");
    if (got && size > 1)
        d->l->tp = size;
    const cJSON *k;
    cJSON_ArrayForEach(k, tp)
    {
        if (strcmp(k->string, "autotp_size") != 0)
            note(d, NOTE_IGNORED, &tctx, k->string, "accepted; its effect is not modeled");
    }
    return ERR_OK;
}

/* Top-level keys with no effect ('N') or not modeled ('M'). Others that
 * are not handled above are reported as unknown to DeepSpeed. */
static const struct {
    const char *key;
    char kind;
} TOP_KEYS[] = {
    {"gradient_clipping", 'N'},      {"steps_per_print", 'N'},
    {"wall_clock_breakdown", 'N'},   {"optimizer", 'N'},
    {"scheduler", 'N'},              {"flops_profiler", 'N'},
    {"tensorboard", 'N'},            {"wandb", 'N'},
    {"csv_monitor", 'N'},            {"comet", 'N'},
    {"comms_logger", 'N'},           {"checkpoint", 'N'},
    {"dump_state", 'N'},             {"memory_breakdown", 'N'},
    {"zero_allow_untested_optimizer", 'N'}, {"zero_force_ds_cpu_optimizer", 'N'},
    {"prescale_gradients", 'N'},     {"gradient_predivide_factor", 'N'},
    {"elasticity", 'N'},             {"autotuning", 'N'},
    {"data_efficiency", 'N'},        {"curriculum_learning", 'N'},
    {"timers", 'N'},                 {"nebula", 'N'},
    {"eigenvalue", 'N'},             {"progressive_layer_drop", 'N'},
    {"train_batch_size", 'R'},       {"train_micro_batch_size_per_gpu", 'R'},
    {"gradient_accumulation_steps", 'R'}, {"fp16", 'R'},
    {"bf16", 'R'},                   {"bfloat16", 'R'},
    {"amp", 'R'},                    {"zero_optimization", 'R'},
    {"activation_checkpointing", 'R'}, {"aio", 'M'},
    {"communication_data_type", 'M'}, {"seq_parallel_communication_data_type", 'M'},
    {"sparse_attention", 'M'},       {"pipeline", 'M'},
    {"compression_training", 'M'},   {"quantize_training", 'M'},
    {"sparse_gradients", 'M'},       {"disable_allgather", 'M'},
    {"fp8", 'M'},                    {"tensor_parallel", 'R'},
    {"compile", 'M'}, /* torch.compile: the deepspeed presets count fused kernels already */
};

static void top_level_notes(ds_t *d, const cJSON *cfg, const json_ctx_t *ctx)
{
    const cJSON *k;
    cJSON_ArrayForEach(k, cfg)
    {
        char kind = 0;
        for (size_t i = 0; i < sizeof TOP_KEYS / sizeof TOP_KEYS[0]; i++)
            if (strcmp(k->string, TOP_KEYS[i].key) == 0)
                kind = TOP_KEYS[i].kind;
        if (kind == 'R')
            continue;
        if (kind == 'N')
            note(d, NOTE_IGNORED, ctx, k->string, "no effect on speed or memory");
        else if (kind == 'M')
            note(d, NOTE_IGNORED, ctx, k->string, "accepted; its effect is not modeled");
        else
            note(d, NOTE_IGNORED, ctx, k->string, "not a DeepSpeed config key");
    }
}

int deepspeed_apply(const char *text, size_t len, const char *file, const deepspeed_given_t *given,
                    layout_t *l, sim_options_t *o, notes_t *notes, err_t *err)
{
    cJSON *cfg = NULL;
    int rc = json_parse_text(text, len, file, &cfg, err);
    if (rc)
        return rc;
    json_ctx_t ctx = json_ctx_root(file);
    ds_t d = {file, given, l, o, notes, err};
    if ((rc = json_expect_object(cfg, &ctx, err)) ||
        (rc = json_check_unique_keys(cfg, &ctx, err)) || (rc = batch(&d, cfg, &ctx)) ||
        (rc = precision(&d, cfg, &ctx)) || (rc = zero(&d, cfg, &ctx)) ||
        (rc = checkpointing(&d, cfg, &ctx)) || (rc = tensor_parallel(&d, cfg, &ctx)))
        goto out;
    top_level_notes(&d, cfg, &ctx);
    if (notes && notes->oom)
        rc = err_set(err, ERR_RUNTIME, "out of memory listing the DeepSpeed notes");
out:
    cJSON_Delete(cfg);
    return rc;
}

int deepspeed_apply_file(const char *path, const deepspeed_given_t *given, layout_t *l,
                         sim_options_t *o, notes_t *notes, err_t *err)
{
    char *data = NULL;
    size_t len = 0;
    int rc = fileio_read_all(path, &data, &len, err);
    if (rc)
        return rc;
    rc = deepspeed_apply(data, len, path, given, l, o, notes, err);
    free(data);
    return rc;
}
