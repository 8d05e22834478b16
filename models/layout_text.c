#include "models/layout_text.h"

#include <stdio.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "models/layout_json.h"

/* The parts of the notation, as plain values (from a layout_t or JSON). */
typedef struct {
    int tp, cp, pp, vpp, ep, etp, dp, mb, gb, zero, rc_layers;
    const char *schedule, *recompute, *precision;
    char rc_modules[100], offload[64], finetune[48];
    int dist_opt, sp;
} parts_t;

static void append(char *buf, size_t cap, size_t *at, const char *fmt, int v)
{
    if (*at >= cap)
        return;
    int n = snprintf(buf + *at, cap - *at, fmt, v);
    if (n > 0)
        *at += (size_t)n;
}

static void append_s(char *buf, size_t cap, size_t *at, const char *fmt, const char *s)
{
    if (*at >= cap)
        return;
    int n = snprintf(buf + *at, cap - *at, fmt, s);
    if (n > 0)
        *at += (size_t)n;
}

static const char *render(const parts_t *p, char *buf, size_t cap)
{
    size_t at = 0;
    if (cap == 0)
        return buf;
    buf[0] = '\0';
    append(buf, cap, &at, "TP%d", p->tp);
    if (p->cp > 1)
        append(buf, cap, &at, " CP%d", p->cp);
    append(buf, cap, &at, " PP%d", p->pp);
    if (strcmp(p->schedule, "dualpipev") == 0)
        append_s(buf, cap, &at, "%s", " DualPipeV");
    else if (p->vpp > 1)
        append(buf, cap, &at, " VPP%d", p->vpp);
    else if (p->pp > 1 && strcmp(p->schedule, "gpipe") == 0)
        append_s(buf, cap, &at, "%s", " GPipe");
    if (p->ep > 1 || p->etp > 0)
        append(buf, cap, &at, " EP%d", p->ep);
    if (p->etp > 0)
        append(buf, cap, &at, " ETP%d", p->etp);
    append(buf, cap, &at, " DP%d", p->dp);
    append(buf, cap, &at, " mb%d", p->mb);
    append(buf, cap, &at, " gb%d", p->gb);
    if (p->sp)
        append_s(buf, cap, &at, "%s", " SP");
    append_s(buf, cap, &at, "%s",
             p->zero == 3   ? " FSDP"
             : p->zero == 2 ? " ZeRO-2"
             : p->dist_opt  ? " dist-opt"
             : p->zero == 1 ? " ZeRO-1"
                            : "");
    if (strcmp(p->recompute, "full") == 0) {
        append_s(buf, cap, &at, "%s", " rc=full");
        if (p->rc_layers > 0)
            append(buf, cap, &at, ":%d", p->rc_layers);
    } else if (strcmp(p->recompute, "selective") == 0) {
        append_s(buf, cap, &at, "%s", " rc=sel");
        if (p->rc_modules[0])
            append_s(buf, cap, &at, "(%s)", p->rc_modules);
    } else if (strcmp(p->recompute, "ops") == 0)
        append_s(buf, cap, &at, "%s", " rc=ops");
    if (strcmp(p->precision, "bf16") != 0)
        append_s(buf, cap, &at, " %s", p->precision);
    if (p->offload[0])
        append_s(buf, cap, &at, " offload=%s", p->offload);
    if (p->finetune[0])
        append_s(buf, cap, &at, " %s", p->finetune);
    return buf;
}

const char *layout_text_format(const layout_t *l, char *buf, size_t cap)
{
    parts_t p = {.tp = l->tp, .cp = l->cp, .pp = l->pp, .vpp = l->vpp, .ep = l->ep,
                 .etp = l->etp, .dp = l->dp, .mb = l->micro_batch, .gb = l->global_batch,
                 .zero = l->zero, .dist_opt = l->distributed_optimizer,
                 .sp = l->sequence_parallel,
                 .rc_layers = l->recompute == RECOMPUTE_FULL ? l->recompute_layers : 0,
                 .schedule = layout_schedule_name(l->schedule),
                 .recompute = layout_recompute_name(l->recompute),
                 .precision = layout_precision_name(l->precision)};
    if (l->recompute == RECOMPUTE_SELECTIVE && l->recompute_modules &&
        l->recompute_modules != LAYOUT_RC_CORE_ATTN)
        layout_recompute_modules_name(l->recompute_modules, ",", true, p.rc_modules,
                                      sizeof p.rc_modules);
    if (l->offload)
        layout_offload_name(l, p.offload, sizeof p.offload);
    if (l->ft.mode != FINETUNE_NONE) {
        if (finetune_frozen(&l->ft))
            snprintf(p.finetune, sizeof p.finetune, "%s:r%d", finetune_mode_name(l->ft.mode),
                     l->ft.rank);
        else
            snprintf(p.finetune, sizeof p.finetune, "%s", finetune_mode_name(l->ft.mode));
    }
    return render(&p, buf, cap);
}

const char *layout_text_long(const layout_t *l, char *buf, size_t cap)
{
    static const char *schedules[SCHEDULE_COUNT] = {"GPipe", "1F1B", "interleaved 1F1B",
                                                    "DualPipeV"};
    layout_text_format(l, buf, cap);
    size_t n = strlen(buf);
    if (n < cap)
        snprintf(buf + n, cap - n, " (%s, %s schedule, %d micro-batch%s per replica per step)",
                 layout_precision_name(l->precision),
                 l->schedule < SCHEDULE_COUNT ? schedules[l->schedule] : "?", l->grad_accum,
                 l->grad_accum == 1 ? "" : "es");
    return buf;
}

static int jint(const cJSON *o, const char *key, int dflt)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    return cJSON_IsNumber(v) ? (int)v->valuedouble : dflt;
}

static const char *jstr(const cJSON *o, const char *key, const char *dflt)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    return cJSON_IsString(v) ? v->valuestring : dflt;
}

const char *layout_text_from_json(const void *obj, char *buf, size_t cap)
{
    const cJSON *o = obj;
    const cJSON *text = cJSON_GetObjectItemCaseSensitive(o, "layout_text");
    if (cJSON_IsString(text)) { /* written by the command: the one notation already */
        snprintf(buf, cap, "%s", text->valuestring);
        return buf;
    }
    parts_t p = {.tp = jint(o, "tp", 1), .cp = jint(o, "cp", 1), .pp = jint(o, "pp", 1),
                 .vpp = jint(o, "vpp", 1), .ep = jint(o, "ep", 1), .etp = jint(o, "etp", 0),
                 .dp = jint(o, "dp", 1), .mb = jint(o, "micro_batch", 1),
                 .gb = jint(o, "global_batch", 1), .zero = jint(o, "zero", 0),
                 .rc_layers = jint(o, "recompute_layers", 0),
                 .dist_opt = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(o, "distributed_optimizer")),
                 .sp = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(o, "sequence_parallel")),
                 .schedule = jstr(o, "schedule", "1f1b"), .recompute = jstr(o, "recompute", "none"),
                 .precision = jstr(o, "precision", "bf16")};
    return render(&p, buf, cap);
}

cJSON *layout_text_json(const layout_t *l)
{
    cJSON *o = layout_to_json(l);
    char text[256];
    if (o && !cJSON_AddStringToObject(o, "layout_text", layout_text_format(l, text, sizeof text))) {
        cJSON_Delete(o);
        return NULL;
    }
    return o;
}

/* One flag family: the key of each part and how a switch is written. */
typedef struct {
    const char *prefix, *tp, *pp, *vpp, *cp, *ep, *etp, *dp, *mb, *gb, *sp, *dist_opt, *zero;
    const char *rc_full, *rc_layers, *rc_sel, *eq, *on;
} family_t;

static const family_t MEGATRON = {"megatron-core", "--tensor-model-parallel-size",
    "--pipeline-model-parallel-size", "--num-virtual-stages-per-pipeline-rank",
    "--context-parallel-size", "--expert-model-parallel-size", "--expert-tensor-parallel-size",
    NULL, "--micro-batch-size", "--global-batch-size", "--sequence-parallel",
    "--use-distributed-optimizer", NULL, "--recompute-granularity full",
    "--recompute-method block --recompute-num-layers", "--recompute-granularity selective", " ",
    NULL};
static const family_t BRIDGE = {"nemo", "tensor_model_parallel_size",
    "pipeline_model_parallel_size", "virtual_pipeline_model_parallel_size",
    "context_parallel_size", "expert_model_parallel_size", "expert_tensor_parallel_size", NULL,
    "micro_batch_size", "global_batch_size", "sequence_parallel=true",
    "use_distributed_optimizer=true", NULL, "recompute_granularity=full",
    "recompute_method=block recompute_num_layers", "recompute_granularity=selective", "=", NULL};
static const family_t DEEPSPEED = {"deepspeed", "--tensor-model-parallel-size",
    "--pipeline-model-parallel-size", NULL, NULL, NULL, NULL, NULL,
    "train_micro_batch_size_per_gpu", "train_batch_size", NULL, NULL, "zero_optimization.stage",
    "activation_checkpointing.partition_activations=true", NULL, NULL, "=", NULL};
static const family_t TORCHTITAN = {"torchtitan", "parallelism.tensor_parallel_degree",
    "parallelism.pipeline_parallel_degree", NULL, "parallelism.context_parallel_degree",
    "parallelism.expert_parallel_degree", "parallelism.expert_tensor_parallel_degree",
    "parallelism.data_parallel_shard_degree", "training.local_batch_size",
    "training.global_batch_size", NULL, NULL, NULL, "activation_checkpoint.mode=\"full\"", NULL,
    "activation_checkpoint.mode=\"selective\"", "=", NULL};

static void flag_int(char *buf, size_t cap, size_t *at, const family_t *f, const char *key, int v)
{
    if (!key || *at >= cap)
        return;
    int n = snprintf(buf + *at, cap - *at, "%s%s%s%d", *at ? " " : "", key, f->eq, v);
    if (n > 0)
        *at += (size_t)n;
}

static void flag_on(char *buf, size_t cap, size_t *at, const char *key)
{
    if (!key || *at >= cap)
        return;
    int n = snprintf(buf + *at, cap - *at, "%s%s", *at ? " " : "", key);
    if (n > 0)
        *at += (size_t)n;
}

const char *layout_text_flags(const layout_t *l, const char *framework, char *buf, size_t cap)
{
    static const family_t *const families[] = {&MEGATRON, &BRIDGE, &DEEPSPEED, &TORCHTITAN};
    const family_t *f = NULL;
    for (size_t i = 0; i < sizeof families / sizeof families[0]; i++)
        if (framework && strncmp(framework, families[i]->prefix, strlen(families[i]->prefix)) == 0)
            f = families[i];
    if (framework && strncmp(framework, "megatron-bridge", 15) == 0)
        f = &BRIDGE;
    size_t at = 0;
    if (cap)
        buf[0] = '\0';
    if (!f || !cap)
        return buf;
    flag_int(buf, cap, &at, f, f->tp, l->tp);
    flag_int(buf, cap, &at, f, f->pp, l->pp);
    if (l->vpp > 1)
        flag_int(buf, cap, &at, f, f->vpp, l->vpp);
    if (l->cp > 1)
        flag_int(buf, cap, &at, f, f->cp, l->cp);
    if (l->ep > 1)
        flag_int(buf, cap, &at, f, f->ep, l->ep);
    if (l->etp > 0)
        flag_int(buf, cap, &at, f, f->etp, l->etp);
    flag_int(buf, cap, &at, f, f->dp, l->dp);
    flag_int(buf, cap, &at, f, f->mb, l->micro_batch);
    flag_int(buf, cap, &at, f, f->gb, l->global_batch);
    if (l->sequence_parallel)
        flag_on(buf, cap, &at, f->sp);
    if (l->distributed_optimizer && l->zero < 2)
        flag_on(buf, cap, &at, f->dist_opt);
    if (l->zero > 0)
        flag_int(buf, cap, &at, f, f->zero, l->zero);
    if (l->recompute == RECOMPUTE_FULL) {
        flag_on(buf, cap, &at, f->rc_full);
        if (l->recompute_layers > 0)
            flag_int(buf, cap, &at, f, f->rc_layers, l->recompute_layers);
    } else if (l->recompute == RECOMPUTE_SELECTIVE)
        flag_on(buf, cap, &at, f->rc_sel);
    return buf;
}
