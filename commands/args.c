#include "commands/argsInt.h"

#include <float.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "inputs/deepspeed.h"
#include "models/layout_json.h"
#include "common/names.h"
#include "common/units.h"

static const cmd_opt_t model_opts[] = {
    {"--model", NULL, "NAME|FILE",
     "catalog model (scaleplan catalog models) or a Hugging Face config.json (hybrid "
     "Mamba-2 / Gated DeltaNet layer patterns included)",
      CMD_WORD, .positional = CMD_POS_ONE},
    {"--assume-architecture", NULL, "TYPE",
     "read a config as this model_type (e.g. llama); without it an unknown one is read by structure",
     CMD_WORD},
};
const cmd_group_t CMD_MODEL_OPTS = {"Model", model_opts,
                                    sizeof model_opts / sizeof model_opts[0]};
/* --model alone, for commands that hand the name to another reader (the
 * reference trainer's preflight): --assume-architecture would do nothing. */
const cmd_group_t CMD_MODEL_NAME_OPTS = {"Model", model_opts, 1};

static const cmd_opt_t cluster_opts[] = {
    {"--gpu", NULL, "NAME", "GPU type, e.g. h100-sxm (scaleplan catalog gpus)", CMD_WORD},
    {"--gpus", NULL, "N", "GPUs the job uses (16k = 16384)", CMD_N(1, 1 << 24)},
    {"--cluster", NULL, "NAME|FILE", "cluster definition (scaleplan catalog clusters) or JSON file",
     CMD_WORD},
    /* (the node and network shape: not in CMD_GPUS_OPTS) */
    {"--gpus-per-node", NULL, "N", "GPUs sharing one node's NVLink/PCIe fabric", CMD_N(1, 4096)},
    {"--fabric", NULL, "NAME", "replace the node or network fabric (ib-ndr, roce-400, ...)",
     CMD_WORD},
    {"--nics-per-node", NULL, "N", "scale-out rails per node", CMD_N(1, 4096)},
    {"--oversubscription", NULL, "X", "network taper above a leaf switch (1 = non-blocking)",
     CMD_X(1, 1000)},
};
const cmd_group_t CMD_CLUSTER_OPTS = {"Cluster", cluster_opts,
                                      sizeof cluster_opts / sizeof cluster_opts[0]};
/* The GPUs alone (type, count, cluster), for commands whose answers the
 * node and network shape do not change (model: parameters, FLOPs, memory). */
const cmd_group_t CMD_GPUS_OPTS = {"Cluster", cluster_opts, 3};

static const cmd_opt_t layout_opts[] = {
    {"--tp", "--tensor-model-parallel-size", "N", "tensor parallel degree", CMD_N(1, 1 << 24)},
    {"--pp", "--pipeline-model-parallel-size", "N", "pipeline parallel degree", CMD_N(1, 1 << 24)},
    {"--cp", "--context-parallel-size", "N", "context parallel degree", CMD_N(1, 1 << 24)},
    {"--ep", "--expert-model-parallel-size", "N", "expert parallel degree (MoE only)",
     CMD_N(1, 1 << 24)},
    {"--etp", "--expert-tensor-parallel-size", "N",
     "expert tensor parallel degree (MoE only; default: --tp)", CMD_N(1, 1 << 24)},
    {"--vpp", NULL, "N", "virtual pipeline stages per rank (interleaved schedule)", CMD_N(1, 1024)},
    {"--num-layers-per-virtual-pipeline-stage", NULL, "N",
     "Megatron's way to set --vpp: layers per virtual stage", CMD_N(1, 1 << 24)},
    {"--micro-batch", "--micro-batch-size", "N", "sequences per micro-batch per GPU",
     CMD_N(1, 1 << 24)},
    {"--global-batch", "--global-batch-size", "N", "sequences per optimizer step",
     CMD_N(1, 1 << 24)},
    {"--grad-accum", "--gradient-accumulation-steps", "N",
     "micro-batches per step per DP rank (when --global-batch is not given)", CMD_N(1, 1 << 24)},
    {"--seq-len", "--seq-length", "N", "tokens per sequence (default: the model's, at most 8192)",
     CMD_N(1, 1 << 24)},
    {"--zero", NULL, "0..3", "ZeRO stage (3 = FSDP full shard)", CMD_N(0, 3)},
    {"--fsdp", NULL, NULL, "same as --zero 3", CMD_WORD},
    {"--distributed-optimizer", "--use-distributed-optimizer", NULL,
     "Megatron distributed optimizer (optimizer state sharded over DP)", CMD_WORD},
    {"--recompute", "--recompute-granularity", "none|selective|full", "activation recompute",
     CMD_WORD},
    {"--recompute-num-layers", NULL, "N",
     "with --recompute full: recompute only the first N layers of each (virtual) pipeline "
     "stage, the rest keep their activations (Megatron --recompute-method block)",
     CMD_N(1, 100000)},
    {"--recompute-method", NULL, "block|uniform",
     "Megatron: block = the first --recompute-num-layers layers, uniform = every layer "
     "(default block when --recompute-num-layers is given)",
     CMD_WORD},
    {"--recompute-modules", NULL, "LIST",
     "with --recompute selective: what the backward rebuilds, Megatron-Core's names "
     "(core_attn, layernorm, mlp, moe_act, moe, mla_up_proj, shared_experts; default core_attn)",
     CMD_WORD},
    {"--recompute-activations", NULL, NULL, "Megatron: selective recompute", CMD_WORD},
    {"--checkpoint-activations", NULL, NULL, "Megatron (2021): full recompute", CMD_WORD},
    {"--sequence-parallel", NULL, NULL, "Megatron sequence parallelism over the TP group",
     CMD_WORD},
    {"--no-sequence-parallel", NULL, NULL,
     "no sequence parallelism, not even where the framework's recipes run it with TP (a "
     "framework that needs it refuses the layout)",
     CMD_WORD},
    {"--precision", NULL, "bf16|fp16|fp8|fp32", "training precision (default bf16)", CMD_WORD},
    {"--bf16", NULL, NULL, "same as --precision bf16", CMD_WORD},
    {"--fp16", NULL, NULL, "same as --precision fp16", CMD_WORD},
    {"--fp8-format", NULL, "FORMAT", "Megatron: fp8 GEMMs (same as --precision fp8)", CMD_WORD},
    {"--schedule", NULL, "gpipe|1f1b|interleaved|dualpipev",
     "pipeline schedule (default 1f1b; dualpipev: DeepSeek's V-shaped DualPipeV, two stages per rank, at least 2 x PP micro-batches; "
     "DeepSeek-V3's two-way DualPipe on PP ranks is its cut-in-half twin: dualpipev on PP/2 ranks with twice the data parallelism, "
     "the same stages, bubble and activations per GPU)",
     CMD_WORD},
    {"--attention", NULL, "flash|eager", "fused attention or materialized scores (default flash)",
     CMD_WORD},
    {"--grad-dtype", NULL, "bf16|fp32", "gradient precision (default: the framework's for the run's precision; Megatron keeps fp32 for bf16, fp16 for fp16)",
     CMD_WORD},
    {"--first-stage-layers", "--decoder-first-pipeline-num-layers", "N",
     "layers on the first pipeline stage (uneven split; 0: only the embedding)",
     CMD_N(0, 100000)},
    {"--last-stage-layers", "--decoder-last-pipeline-num-layers", "N",
     "layers on the last pipeline stage (uneven split; 0: only the loss and any MTP modules)",
     CMD_N(0, 100000)},
    {"--offload", NULL, "LIST",
     "keep state on the host: optimizer, params (needs --zero 3), activations[=N blocks], "
     "nvme (ZeRO-Infinity), e.g. optimizer,params; recompute full unless --recompute is given",
     CMD_WORD},
    {"--deepspeed", NULL, "FILE",
     "DeepSpeed ds_config.json: batch sizes, ZeRO stage and offload, overlap, bucket, "
     "precision (\"auto\" from these flags); needs --seq-len (no ds_config holds one); runs as "
     "--framework deepspeed unless given",
     CMD_WORD},
};
const cmd_group_t CMD_LAYOUT_OPTS = {"Layout (Megatron-LM flag names accepted)",
                                     layout_opts,
                                     sizeof layout_opts / sizeof layout_opts[0]};

static const cmd_opt_t finetune_opts[] = {
    {"--finetune", NULL, "lora|qlora|full",
     "fine-tune instead of pretraining: lora (frozen bf16 base, adapters), qlora (frozen "
     "4-bit NF4 base), full (every parameter, priced as pretraining)",
     CMD_WORD},
    {"--lora-rank", "--lora-r", "R", "adapter rank (default 16, said as assumed)",
     CMD_N(1, 1 << 20)},
    {"--lora-targets", NULL, "LIST",
     "adapted linears: q,k,v,o,gate,up,down, or all, attention, mlp (PEFT names too; default "
     "all, LLaMA-Factory's lora_target: all; PEFT's Llama default is q,v)",
     CMD_WORD},
    {"--base-bits", NULL, "4|8|16",
     "frozen base linears' bits (qlora: 4, NF4 with double quantization; lora: 16)",
     CMD_N(4, 16)},
};
const cmd_group_t CMD_FINETUNE_OPTS = {"Fine-tuning", finetune_opts,
                                       sizeof finetune_opts / sizeof finetune_opts[0]};

int cmd_finetune(const cmd_args_t *a, const model_t *m, finetune_t *ft, notes_t *notes,
                 err_t *err)
{
    int rc;
    finetune_defaults(ft);
    if (!cmd_find_opt(a, "--finetune"))
        return ERR_OK; /* a command without the group: pretraining */
    const char *v = cmd_get(a, "--finetune");
    if (v && (rc = finetune_parse_mode(v, &ft->mode, err)))
        return rc;
    bool lora = finetune_frozen(ft);
    static const char *const lora_only[] = {"--lora-rank", "--lora-targets"};
    for (int i = 0; i < 2; i++)
        if (cmd_has(a, lora_only[i]) && !lora)
            return err_setf(err, ERR_INPUT, NULL, lora_only[i],
                            "goes with --finetune lora or qlora");
    if (ft->mode == FINETUNE_QLORA)
        ft->base_bits = 4; /* QLoRA's NF4 (Dettmers et al. 2023) */
    if ((rc = cmd_get_int(a, "--lora-rank", &ft->rank, err)) ||
        (rc = cmd_get_int(a, "--base-bits", &ft->base_bits, err)))
        return rc;
    if ((v = cmd_get(a, "--lora-targets")) && (rc = finetune_parse_targets(v, &ft->targets, err)))
        return rc;
    if (lora && !cmd_has(a, "--lora-targets") && m->mlp != MODEL_MLP_SWIGLU)
        ft->targets &= ~(unsigned)FINETUNE_T_GATE; /* "all" of a plain MLP */
    if ((rc = finetune_check(ft, m, err)))
        return rc;
    finetune_notes(ft, cmd_has(a, "--lora-rank"), cmd_has(a, "--lora-targets"), notes);
    return ERR_OK;
}

static const cmd_opt_t output_opts[] = {
    {"--json", NULL, NULL, "print one JSON object instead of tables", CMD_WORD},
    {"--csv", NULL, NULL, "print the same figures as --json as CSV", CMD_WORD},
    {"--help", "-h", NULL, "show this help", CMD_WORD},
};
const cmd_group_t CMD_OUTPUT_OPTS = {"Output", output_opts,
                                     sizeof output_opts / sizeof output_opts[0]};

/* Whether name (NULL: none) is text[0..len). cmd_get runs this over
 * every option hundreds of times a command: the byte after the dashes
 * ("--model" vs "--tp") rejects nearly every other name before a string
 * compare; every name has at least two bytes ("-h"). */
static bool spelled(const char *name, const char *text, size_t len)
{
    size_t k = len > 2 ? 2 : len - 1;
    return name && name[k] == text[k] && strncmp(name, text, len) == 0 && name[len] == '\0';
}

/* Flat index of the option spelled text (name or alias), or -1. */
static int find_opt(const cmd_args_t *a, const char *text, size_t len)
{
    if (len == 0)
        return -1;
    int idx = 0;
    for (int g = 0; g < a->n_groups; g++)
        for (int i = 0; i < a->groups[g]->n; i++, idx++) {
            const cmd_opt_t *o = &a->groups[g]->opts[i];
            if (spelled(o->name, text, len) || spelled(o->alias, text, len))
                return idx;
        }
    return -1;
}

static const cmd_opt_t *opt_at(const cmd_args_t *a, int index)
{
    for (int g = 0; g < a->n_groups; g++) {
        if (index < a->groups[g]->n)
            return &a->groups[g]->opts[index];
        index -= a->groups[g]->n;
    }
    return NULL;
}

static int unknown_option(const cmd_args_t *a, const char *cmd, const char *text,
                          err_t *err)
{
    const char *names[CMD_MAX_OPTS];
    int n = 0;
    for (int g = 0; g < a->n_groups; g++)
        for (int i = 0; i < a->groups[g]->n && n < CMD_MAX_OPTS; i++)
            names[n++] = a->groups[g]->opts[i].name;
    char word[64];
    snprintf(word, sizeof word, "%.*s", (int)strcspn(text, "="), text);
    int best = names_closest(word, names, (size_t)n);
    if (best >= 0)
        return err_setf(err, ERR_INPUT, NULL, word,
                        "unknown option; did you mean %s? (scaleplan %s --help "
                        "lists all)",
                        names[best], cmd);
    return err_setf(err, ERR_INPUT, NULL, word,
                    "unknown option (scaleplan %s --help lists all)", cmd);
}

/* A span "N" or "N..M" read as base (CMD_INT or CMD_COUNT) twice. */
static int check_span(const cmd_opt_t *o, cmd_kind_t base, const char *text, double *lo,
                      double *hi, err_t *err)
{
    char buf[96];
    if (snprintf(buf, sizeof buf, "%s", text) >= (int)sizeof buf)
        return err_setf(err, ERR_INPUT, NULL, o->name, "too long (got '%.40s...')", text);
    char *dots = strstr(buf, "..");
    cmd_opt_t one = *o;
    one.kind = base;
    int rc;
    if (dots)
        *dots = '\0';
    if ((rc = cmd_check_value(&one, buf, lo, err)))
        return rc;
    *hi = *lo;
    if (dots && (rc = cmd_check_value(&one, dots + 2, hi, err)))
        return rc;
    if (*hi < *lo)
        return err_setf(err, ERR_INPUT, NULL, o->name, "needs low <= high (got '%s')", text);
    return ERR_OK;
}

/* The range of o in its unit, for messages. */
static void fmt_bound(const cmd_opt_t *o, double v, char *buf, size_t cap)
{
    switch (o->kind) {
    case CMD_BYTES: units_fmt_bytes(v, buf, cap); break;
    case CMD_BANDWIDTH: units_fmt_bandwidth(v, buf, cap); break;
    case CMD_DURATION:
    case CMD_DAYS: units_fmt_duration(v, buf, cap); break;
    case CMD_PRICE: snprintf(buf, cap, "$%g/h", v); break;
    case CMD_MONEY: snprintf(buf, cap, "$%g", v); break;
    default: snprintf(buf, cap, "%g", v); break;
    }
}

int cmd_check_value(const cmd_opt_t *o, const char *text, double *value, err_t *err)
{
    double v = 0, hi_unused;
    int rc;
    const char *w = o->name;
    switch (o->kind) {
    case CMD_TEXT:
        return ERR_OK;
    case CMD_INT: {
        long x;
        rc = units_parse_int(text, w, (long)o->lo, (long)o->hi, &x, err);
        if (!rc)
            *value = (double)x;
        return rc;
    }
    case CMD_REAL:
        return units_parse_real(text, w, o->lo, o->hi, value, err);
    case CMD_INT_SPAN:
        return check_span(o, CMD_INT, text, value, &hi_unused, err);
    case CMD_COUNT_SPAN:
        return check_span(o, CMD_COUNT, text, value, &hi_unused, err);
    case CMD_COUNT: rc = units_parse_count(text, w, &v, err); break;
    case CMD_BYTES: rc = units_parse_bytes(text, w, &v, err); break;
    case CMD_BANDWIDTH: rc = units_parse_bandwidth(text, w, &v, err); break;
    case CMD_DURATION: rc = units_parse_duration(text, w, &v, err); break;
    case CMD_PRICE: rc = units_parse_price(text, w, &v, err); break;
    case CMD_MONEY: rc = units_parse_money(text, w, &v, err); break;
    case CMD_DAYS: {
        /* a bare number counts days; anything else is a duration */
        double d;
        err_t ignore;
        if (units_parse_real(text, w, -1e300, 1e300, &d, &ignore) == ERR_OK) {
            if (d < 0)
                return err_setf(err, ERR_INPUT, NULL, w, "must not be negative (got '%s')", text);
            v = d * 86400;
            rc = ERR_OK;
        } else {
            rc = units_parse_duration(text, w, &v, err);
        }
        break;
    }
    default:
        return err_setf(err, ERR_RUNTIME, NULL, w, "unknown value kind %d", (int)o->kind);
    }
    if (rc)
        return rc;
    if (!(v >= o->lo && v <= o->hi)) {
        char lo[40], hi[40];
        fmt_bound(o, o->lo, lo, sizeof lo);
        fmt_bound(o, o->hi, hi, sizeof hi);
        if (o->hi >= DBL_MAX)
            return err_setf(err, ERR_INPUT, NULL, w, "must be at least %s (got '%s')", lo, text);
        return err_setf(err, ERR_INPUT, NULL, w, "must be from %s to %s (got '%s')", lo, hi, text);
    }
    *value = v;
    return ERR_OK;
}

/* Why a bare word is not taken, for the message: the switch before it, the
 * option it would stand for, or that the command takes none. */
static int stray_word(const cmd_args_t *a, const char *word, int prev, int max_operands,
                      err_t *err)
{
    const char *cmd = a->argc > 0 ? a->argv[0] : "";
    if (prev >= 0) {
        const cmd_opt_t *o = opt_at(a, prev);
        if (o && !o->metavar)
            return err_setf(err, ERR_INPUT, NULL, word, "unexpected argument (%s takes no value)",
                            o->name);
    }
    int idx = 0;
    for (int g = 0; g < a->n_groups; g++)
        for (int i = 0; i < a->groups[g]->n; i++, idx++) {
            const cmd_opt_t *o = &a->groups[g]->opts[i];
            if (o->positional == CMD_POS_ONE)
                return err_setf(err, ERR_INPUT, NULL, word,
                                "unexpected argument (%s is already given; options start "
                                "with --)",
                                o->name);
            if (o->positional == CMD_POS_MORE)
                return err_setf(err, ERR_INPUT, NULL, word,
                                "unexpected argument (bare words are values of %s)", o->name);
        }
    if (max_operands > 0)
        return err_setf(err, ERR_INPUT, NULL, word,
                        "unexpected argument (scaleplan %s takes at most %d)", cmd, max_operands);
    return err_setf(err, ERR_INPUT, NULL, word,
                    "unexpected argument (scaleplan %s takes only options; see --help)", cmd);
}

/* Hand the bare words to the options that take them, then to the command. */
static int place_words(cmd_args_t *a, const char **words, const int *prev, int n,
                       int max_operands, err_t *err)
{
    int used = 0, idx = 0;
    bool more = false;
    for (int g = 0; g < a->n_groups; g++)
        for (int i = 0; i < a->groups[g]->n; i++, idx++) {
            const cmd_opt_t *o = &a->groups[g]->opts[i];
            if (o->positional == CMD_POS_ONE && !a->value[idx] && used < n)
                a->value[idx] = words[used++];
            if (o->positional == CMD_POS_MORE && a->value[idx])
                more = true;
        }
    int limit = more ? CMD_MAX_POSITIONAL : max_operands;
    for (int k = used; k < n; k++) {
        if (a->n_positional >= limit || a->n_positional >= CMD_MAX_POSITIONAL)
            return more || max_operands > 0
                       ? err_setf(err, ERR_INPUT, NULL, words[k], "too many arguments (at most %d)",
                                  limit)
                       : stray_word(a, words[k], prev[k], max_operands, err);
        a->positional[a->n_positional++] = words[k];
    }
    return ERR_OK;
}

/* Every --set KEY=VALUE checked against its option row when the command
 * line is read, also by the commands that take the simulation flags but
 * build no step from them (reliability without --model). */
static int check_sets(const cmd_args_t *a, err_t *err)
{
    const char *sets[33];
    int n = cmd_find_opt(a, "--set") ? cmd_get_all(a, "--set", sets, 33) : 0;
    sim_options_t probe;
    sim_options_default(&probe);
    for (int i = 0; i < n && i < 33; i++) {
        int rc = fw_option_set(&probe, sets[i], err);
        if (rc)
            return rc;
    }
    return ERR_OK;
}

int cmd_parse(int argc, char **argv, const cmd_group_t *const *groups, int n_groups,
              int max_operands, cmd_args_t *a, err_t *err)
{
    memset(a, 0, sizeof *a);
    a->groups = groups;
    a->n_groups = n_groups;
    a->argc = argc;
    a->argv = argv;
    int total = 0;
    for (int g = 0; g < n_groups; g++)
        total += groups[g]->n;
    if (total > CMD_MAX_OPTS)
        return err_set(err, ERR_RUNTIME, "too many options declared (%d)", total);
    const char *cmd = argc > 0 ? argv[0] : "";
    const char *words[CMD_MAX_POSITIONAL + 1];
    int prev[CMD_MAX_POSITIONAL + 1];
    int n_words = 0, last_opt = -1;
    for (int i = 1; i < argc; i++) {
        const char *w = argv[i];
        if (w[0] != '-' || strcmp(w, "-") == 0 || (w[1] >= '0' && w[1] <= '9')) {
            if (n_words > CMD_MAX_POSITIONAL)
                return err_setf(err, ERR_INPUT, NULL, w, "too many arguments");
            prev[n_words] = last_opt;
            words[n_words++] = w;
            last_opt = -1;
            continue;
        }
        const char *eq = strchr(w, '=');
        size_t len = eq ? (size_t)(eq - w) : strlen(w);
        int idx = find_opt(a, w, len);
        if (idx < 0)
            return unknown_option(a, cmd, w, err);
        const cmd_opt_t *o = opt_at(a, idx);
        if (a->value[idx] && !o->repeat)
            return err_setf(err, ERR_INPUT, NULL, o->name, "given more than once%s%s%s",
                            o->alias ? " (counting its other spelling " : "",
                            o->alias ? o->alias : "", o->alias ? ")" : "");
        last_opt = idx;
        if (!o->metavar) {
            if (eq)
                return err_setf(err, ERR_INPUT, NULL, o->name, "takes no value");
            a->value[idx] = "1";
            if (strcmp(o->name, "--help") == 0)
                a->help = true;
            continue;
        }
        if (eq) {
            a->value[idx] = eq + 1;
        } else {
            if (i + 1 >= argc)
                return err_setf(err, ERR_INPUT, NULL, o->name,
                                "needs a value (%s)", o->metavar);
            a->value[idx] = argv[++i];
        }
        last_opt = -1; /* a word after a value is not the option's */
    }
    if (a->help)
        return ERR_OK; /* --help answers whatever else is there */
    int rc = place_words(a, words, prev, n_words, max_operands, err);
    for (int idx = 0; !rc && idx < total; idx++) {
        double ignore;
        if (a->value[idx])
            rc = cmd_check_value(opt_at(a, idx), a->value[idx], &ignore, err);
    }
    return rc ? rc : check_sets(a, err);
}

const char *cmd_get(const cmd_args_t *a, const char *name)
{
    int idx = find_opt(a, name, strlen(name));
    return idx < 0 ? NULL : a->value[idx];
}

bool cmd_has(const cmd_args_t *a, const char *name)
{
    return cmd_get(a, name) != NULL;
}

const cmd_opt_t *cmd_find_opt(const cmd_args_t *a, const char *name);

/* The declared option and its value, checked to be of a kind the caller
 * reads; *text NULL when the option is absent. */
static int typed(const cmd_args_t *a, const char *name, bool want_int, const cmd_opt_t **o,
                 const char **text, err_t *err)
{
    *o = cmd_find_opt(a, name);
    *text = cmd_get(a, name);
    if (!*o)
        return err_setf(err, ERR_RUNTIME, NULL, name, "not an option of this command");
    bool is_int = (*o)->kind == CMD_INT;
    bool is_num = (*o)->kind != CMD_TEXT && (*o)->kind != CMD_INT_SPAN &&
                  (*o)->kind != CMD_COUNT_SPAN;
    if (want_int ? !is_int : !is_num)
        return err_setf(err, ERR_RUNTIME, NULL, name, "declared with value kind %d, read as %s",
                        (int)(*o)->kind, want_int ? "a whole number" : "a number");
    return ERR_OK;
}

int cmd_get_long(const cmd_args_t *a, const char *name, long *out, err_t *err)
{
    const cmd_opt_t *o;
    const char *v;
    int rc = typed(a, name, true, &o, &v, err);
    if (rc || !v)
        return rc;
    return units_parse_int(v, name, (long)o->lo, (long)o->hi, out, err);
}

int cmd_get_int(const cmd_args_t *a, const char *name, int *out, err_t *err)
{
    long x;
    const cmd_opt_t *o = cmd_find_opt(a, name);
    if (o && (o->lo < INT_MIN || o->hi > INT_MAX))
        return err_setf(err, ERR_RUNTIME, NULL, name, "range too wide for an int");
    int rc = cmd_get_long(a, name, &x, err);
    if (!rc && cmd_has(a, name))
        *out = (int)x;
    return rc;
}

int cmd_get_double(const cmd_args_t *a, const char *name, double *out, err_t *err)
{
    const cmd_opt_t *o;
    const char *v;
    int rc = typed(a, name, false, &o, &v, err);
    if (rc || !v)
        return rc;
    return cmd_check_value(o, v, out, err);
}

int cmd_get_span(const cmd_args_t *a, const char *name, double *lo, double *hi, err_t *err)
{
    const cmd_opt_t *o = cmd_find_opt(a, name);
    const char *v = cmd_get(a, name);
    if (!o || (o->kind != CMD_INT_SPAN && o->kind != CMD_COUNT_SPAN))
        return err_setf(err, ERR_RUNTIME, NULL, name, "not declared as a span");
    if (!v)
        return ERR_OK;
    return check_span(o, o->kind == CMD_INT_SPAN ? CMD_INT : CMD_COUNT, v, lo, hi, err);
}

void cmd_print_help(FILE *out, const char *usage, const char *summary,
                    const cmd_group_t *const *groups, int n_groups)
{
    fprintf(out, "usage: %s\n\n%s\n", usage, summary);
    for (int g = 0; g < n_groups; g++) {
        fprintf(out, "\n%s:\n", groups[g]->title);
        for (int i = 0; i < groups[g]->n; i++) {
            const cmd_opt_t *o = &groups[g]->opts[i];
            char left[96];
            snprintf(left, sizeof left, "%s%s%s", o->name, o->metavar ? " " : "",
                     o->metavar ? o->metavar : "");
            if (strlen(left) > 30) {
                fprintf(out, "  %s\n  %-30s  %s\n", left, "", o->help);
            } else {
                fprintf(out, "  %-30s  %s\n", left, o->help);
            }
            if (o->alias)
                fprintf(out, "  %-30s  (also %s)\n", "", o->alias);
        }
    }
}

/* (argsInt.h) */
int cmd_args_model_name(const cmd_args_t *a, const char **name, err_t *err)
{
    *name = cmd_get(a, "--model");
    if (!*name && a->n_positional > 0)
        *name = a->positional[0];
    if (!*name)
        return err_setf(err, ERR_INPUT, NULL, "--model",
                        "say which model: --model NAME (scaleplan catalog "
                        "models) or --model path/to/config.json");
    return ERR_OK;
}

int cmd_model_noted(const cmd_args_t *a, model_t *m, notes_t *notes, err_t *err)
{
    const char *name;
    int rc = cmd_args_model_name(a, &name, err);
    model_load_opts_t o = {.assume_architecture = cmd_get(a, "--assume-architecture")};
    return rc ? rc : model_load_ex(name, &o, m, notes, err);
}

int cmd_model(const cmd_args_t *a, model_t *m, err_t *err)
{
    return cmd_model_noted(a, m, NULL, err);
}

int cmd_cluster_spec(const cmd_args_t *a, cluster_spec_t *spec, err_t *err)
{
    memset(spec, 0, sizeof *spec);
    spec->catalog = a->catalog;
    spec->gpu = cmd_get(a, "--gpu");
    spec->cluster = cmd_get(a, "--cluster");
    spec->fabric = cmd_get(a, "--fabric");
    int rc;
    if ((rc = cmd_get_int(a, "--gpus", &spec->n_gpus, err)))
        return rc;
    /* the node and network shape, for the commands that take it
     * (CMD_CLUSTER_OPTS, not CMD_GPUS_OPTS) */
    if (cmd_find_opt(a, "--gpus-per-node") &&
        ((rc = cmd_get_int(a, "--gpus-per-node", &spec->gpus_per_node, err)) ||
         (rc = cmd_get_int(a, "--nics-per-node", &spec->nics_per_node, err)) ||
         (rc = cmd_get_double(a, "--oversubscription", &spec->oversubscription, err))))
        return rc;
    return ERR_OK;
}

/* (argsInt.h) */
int cmd_args_deepspeed_given(const cmd_args_t *a, const model_t *m, deepspeed_given_t *out,
                             err_t *err)
{
    deepspeed_given_t g = {0};
    int rc;
    const char *v;
    if ((rc = cmd_get_int(a, "--micro-batch", &g.micro_batch, err)) ||
        (rc = cmd_get_int(a, "--grad-accum", &g.grad_accum, err)) ||
        (rc = cmd_get_int(a, "--global-batch", &g.global_batch, err)))
        return rc;
    if ((v = cmd_get(a, "--precision"))) {
        if ((rc = layout_parse_precision(v, &g.precision, err)))
            return rc;
        g.have_precision = true;
    } else if (cmd_has(a, "--bf16") || cmd_has(a, "--fp16") || cmd_has(a, "--fp8-format")) {
        g.have_precision = true;
        g.precision = cmd_has(a, "--fp8-format") ? PRECISION_FP8
                      : cmd_has(a, "--fp16")     ? PRECISION_FP16
                                                 : PRECISION_BF16;
    }
    v = cmd_get(a, "--recompute");
    g.full_recompute = cmd_has(a, "--checkpoint-activations") || (v && strcmp(v, "full") == 0);
    g.hidden = m ? m->hidden : 0;
    g.have_zero = cmd_has(a, "--zero") || cmd_has(a, "--fsdp");
    if (g.have_zero && (rc = cmd_get_int(a, "--zero", &g.zero, err)))
        return rc;
    if (cmd_has(a, "--fsdp"))
        g.zero = 3;
    *out = g;
    return ERR_OK;
}

/* A DeepSpeed config, its "auto" values resolved from the flags given. */
static int apply_deepspeed(const cmd_args_t *a, const char *path, const model_t *m, layout_t *l,
                           sim_options_t *opt, notes_t *notes, err_t *err)
{
    deepspeed_given_t g;
    int rc = cmd_args_deepspeed_given(a, m, &g, err);
    return rc ? rc : deepspeed_apply_file(path, &g, l, opt, notes, err);
}

/* Switches and enum options that set the same field as another flag. */
static int layout_switches(const cmd_args_t *a, layout_t *l, err_t *err)
{
    int rc;
    const char *v;
    if (cmd_has(a, "--fsdp"))
        l->zero = 3;
    if (cmd_has(a, "--distributed-optimizer"))
        l->distributed_optimizer = true;
    if (cmd_has(a, "--sequence-parallel") && cmd_has(a, "--no-sequence-parallel"))
        return err_setf(err, ERR_INPUT, NULL, "--no-sequence-parallel",
                        "give --sequence-parallel or --no-sequence-parallel, not both");
    if (cmd_has(a, "--sequence-parallel")) {
        l->sequence_parallel = true;
        l->sp_off = false;
    }
    if (cmd_has(a, "--no-sequence-parallel")) {
        l->sequence_parallel = false;
        l->sp_off = true;
    }
    if (cmd_has(a, "--recompute-activations"))
        l->recompute = RECOMPUTE_SELECTIVE;
    if (cmd_has(a, "--checkpoint-activations"))
        l->recompute = RECOMPUTE_FULL;
    if (cmd_has(a, "--bf16"))
        l->precision = PRECISION_BF16;
    if (cmd_has(a, "--fp16"))
        l->precision = PRECISION_FP16;
    if (cmd_has(a, "--fp8-format"))
        l->precision = PRECISION_FP8;
    if ((v = cmd_get(a, "--recompute")) &&
        (rc = layout_parse_recompute(v, &l->recompute, err)))
        return rc;
    if ((v = cmd_get(a, "--recompute-method")) && strcmp(v, "block") != 0 &&
        strcmp(v, "uniform") != 0)
        return err_setf(err, ERR_INPUT, NULL, "--recompute-method",
                        "use block or uniform (got '%s')", v);
    if ((rc = cmd_get_int(a, "--recompute-num-layers", &l->recompute_layers, err)))
        return rc;
    const char *mods = cmd_get(a, "--recompute-modules");
    if (mods && (rc = layout_parse_recompute_modules(mods, "--recompute-modules",
                                                     &l->recompute_modules, err)))
        return rc;
    if (v && strcmp(v, "uniform") == 0)
        l->recompute_layers = 0; /* every layer, in groups: their checkpoints not modeled */
    if ((v = cmd_get(a, "--precision")) &&
        (rc = layout_parse_precision(v, &l->precision, err)))
        return rc;
    if ((v = cmd_get(a, "--schedule")) &&
        (rc = layout_parse_schedule(v, &l->schedule, err)))
        return rc;
    if ((v = cmd_get(a, "--attention"))) {
        if (strcmp(v, "flash") == 0)
            l->flash_attention = true;
        else if (strcmp(v, "eager") == 0)
            l->flash_attention = false;
        else
            return err_setf(err, ERR_INPUT, NULL, "--attention",
                            "use flash or eager (got '%s')", v);
    }
    if ((v = cmd_get(a, "--offload")) && (rc = layout_parse_offload(v, l, err)))
        return rc;
    if ((v = cmd_get(a, "--grad-dtype"))) {
        if (strcmp(v, "bf16") == 0 || strcmp(v, "fp16") == 0)
            l->grad_bytes = 2;
        else if (strcmp(v, "fp32") == 0)
            l->grad_bytes = 4;
        else
            return err_setf(err, ERR_INPUT, NULL, "--grad-dtype",
                            "use bf16 or fp32 (got '%s')", v);
    }
    return ERR_OK;
}

int cmd_check_batch_tokens(const char *flag, double sequences, int seq_len, err_t *err)
{
    double tokens = sequences * (seq_len > 0 ? seq_len : 1);
    if (tokens <= (double)CMD_MAX_BATCH_TOKENS)
        return ERR_OK;
    int seq = seq_len > 0 ? seq_len : 1;
    return err_setf(err, ERR_INPUT, NULL, flag,
                    "%.0f sequences of %d tokens is %.3g tokens a step, beyond any training "
                    "run: %s counts sequences (%.0f tokens would be %s %.0f)",
                    sequences, seq, tokens, flag, sequences, flag, fmax(1, round(sequences / seq)));
}

int cmd_layout_flags(const cmd_args_t *a, const model_t *m, layout_t *l, sim_options_t *opt,
                     notes_t *notes, err_t *err)
{
    int rc;
    const char *ds = cmd_get(a, "--deepspeed");
    /* The DeepSpeed config first, so explicit flags override it. */
    if (ds && (rc = apply_deepspeed(a, ds, m, l, opt, notes, err)))
        return rc;
    /* A ds_config or accelerate config never holds the sequence length
     * (the training script's data loader does): a default here would be a
     * figure the input never gave, so it is asked for by name. */
    const char *acc = cmd_get(a, "--accelerate-config");
    if ((ds || acc) && !cmd_has(a, "--seq-len") && l->seq_len <= 0)
        return err_setf(err, ERR_INPUT, ds ? ds : acc, "--seq-len",
                        "%s config does not give the sequence length (the training "
                        "script does): add --seq-len N, e.g. --seq-len %d",
                        ds ? "a DeepSpeed" : "an accelerate", m ? layout_default_seq_len(m) : 2048);
    int per_vstage = 0;
    if ((rc = cmd_get_int(a, "--tp", &l->tp, err)) ||
        (rc = cmd_get_int(a, "--pp", &l->pp, err)) ||
        (rc = cmd_get_int(a, "--cp", &l->cp, err)) ||
        (rc = cmd_get_int(a, "--ep", &l->ep, err)) ||
        (rc = cmd_get_int(a, "--etp", &l->etp, err)) ||
        (rc = cmd_get_int(a, "--vpp", &l->vpp, err)) ||
        (rc = cmd_get_int(a, "--num-layers-per-virtual-pipeline-stage", &per_vstage, err)) ||
        (rc = cmd_get_int(a, "--micro-batch", &l->micro_batch, err)) ||
        (rc = cmd_get_int(a, "--global-batch", &l->global_batch, err)) ||
        (rc = cmd_get_int(a, "--grad-accum", &l->grad_accum, err)) ||
        (rc = cmd_get_int(a, "--seq-len", &l->seq_len, err)) ||
        (rc = cmd_get_int(a, "--zero", &l->zero, err)) ||
        (rc = cmd_get_int(a, "--first-stage-layers", &l->first_stage_layers, err)) ||
        (rc = cmd_get_int(a, "--last-stage-layers", &l->last_stage_layers, err)) ||
        (rc = cmd_has(a, "--first-stage-layers") && l->first_stage_layers == 0
                  ? (l->first_stage_layers = LAYOUT_STAGE_EMPTY, ERR_OK)
                  : ERR_OK) ||
        (rc = cmd_has(a, "--last-stage-layers") && l->last_stage_layers == 0
                  ? (l->last_stage_layers = LAYOUT_STAGE_EMPTY, ERR_OK)
                  : ERR_OK) ||
        (rc = layout_switches(a, l, err)))
        return rc;
    if (l->global_batch > 0 &&
        (rc = cmd_check_batch_tokens("--global-batch", l->global_batch,
                                     l->seq_len > 0 ? l->seq_len : layout_default_seq_len(m),
                                     err)))
        return rc;
    if (per_vstage) {
        /* Megatron counts layers per virtual stage; scaleplan counts chunks. */
        long denom = (long)l->pp * per_vstage;
        if (m->n_layers % denom != 0)
            return err_setf(err, ERR_INPUT, NULL,
                            "--num-layers-per-virtual-pipeline-stage",
                            "num_layers %d must divide by PP x %d = %ld",
                            m->n_layers, per_vstage, denom);
        l->vpp = (int)(m->n_layers / denom);
    }
    /* A ZeRO stage shards the optimizer itself: a framework preset's
     * distributed optimizer (its stage-1 default) gives way to it; only an
     * explicit --distributed-optimizer next to --zero is a contradiction. */
    if (l->zero >= 1 && !cmd_has(a, "--distributed-optimizer"))
        l->distributed_optimizer = false;
    /* Virtual stages imply the interleaved schedule unless one is named. */
    if (l->vpp > 1 && !cmd_has(a, "--schedule"))
        l->schedule = SCHEDULE_INTERLEAVED;
    /* --offload without a recompute mode: sim/offload's default */
    bool named = cmd_has(a, "--recompute") || cmd_has(a, "--recompute-activations") ||
                 cmd_has(a, "--checkpoint-activations") || cmd_has(a, "--deepspeed");
    if (cmd_has(a, "--offload") && !named)
        offload_default_recompute(l, notes);
    return cmd_finetune(a, m, &l->ft, notes, err);
}

int cmd_layout(const cmd_args_t *a, const model_t *m, int n_gpus, layout_t *l,
               err_t *err)
{
    layout_defaults(l);
    int rc = cmd_layout_flags(a, m, l, NULL, NULL, err);
    if (rc)
        return rc;
    return layout_finalize(l, m, n_gpus, err);
}

static const cmd_opt_t sim_opts[] = {
    {"--profile", NULL, "FILE", "cost profile (default: the GPU's built-in profile)", CMD_WORD},
    {"--framework", NULL, "NAME",
     "framework preset: megatron-core (default), megatron-2020/2021/2022, deepspeed, deepspeed-2021, megatron-deepspeed, fsdp, pytorch-ddp, torchtitan-2024-12/2025-06/2025-12, nemo-24.07/25.02/25.04, megatron-bridge-25.09/25.11/26.04, llm-foundry, scaleplan-train (this project's trainer) (exact names: scaleplan catalog frameworks)", CMD_WORD},
    {"--overlap-grad-reduce", NULL, NULL, "reduce gradient buckets during the backward", CMD_WORD},
    {"--no-overlap-grad-reduce", NULL, NULL, "reduce gradients after the backward", CMD_WORD},
    {"--overlap-param-gather", NULL, NULL, "gather updated parameters during the next forward",
     CMD_WORD},
    {"--no-overlap-param-gather", NULL, NULL, "gather parameters after the optimizer", CMD_WORD},
    {"--tp-comm-overlap", NULL, NULL, "pipeline TP collectives with GEMMs (needs SP)", CMD_WORD},
    {"--compile", NULL, NULL,
     "torch.compile the model (torchtitan, PyTorch FSDP and DDP, llm-foundry): fused elementwise "
     "kernels (Megatron, NeMo and DeepSpeed presets fuse theirs already); torchtitan since "
     "2025 compiles the loss too",
     CMD_WORD},
    {"--overlap-p2p", "--overlap-p2p-communication", NULL, "asynchronous pipeline transfers",
     CMD_WORD},
    {"--no-overlap-p2p", NULL, NULL, "blocking pipeline transfers", CMD_WORD},
    {"--bucket-size", NULL, "N", "gradient bucket in parameters (default 40M)",
     CMD_KIND(CMD_COUNT, 1, 1e15)},
    {"--straggler-cv", NULL, "X", "per-rank compute jitter (default: the profile's)", CMD_X(0, 1)},
    {"--dp-comm-ctas", NULL, "N",
     "SMs a data-parallel collective holds while it overlaps the passes, charged to the compute "
     "(sim/dp_contention.h; 24 measured for an H100 all-gather; default 0: not charged)",
     CMD_N(0, 1024)},
    {"--tp-only-amax-red", NULL, NULL,
     "fp8 delayed scaling reduces amaxes over TP (x CP) only, not TP x DP x CP (Megatron's "
     "--tp-only-amax-red)",
     CMD_WORD},
    {"--no-causal", NULL, NULL, "full (bidirectional) attention instead of causal", CMD_WORD},
    {"--moe-dispatcher", "--moe-token-dispatcher-type", "alltoall|allgather|deepep",
     "how MoE tokens reach their experts (default: the framework's; flex = deepep, priced at DeepEP/HybridEP's published bandwidth where measured)", CMD_WORD},
    {"--moe-grouped-gemm", NULL, NULL, "the local experts in one grouped GEMM", CMD_WORD},
    {"--moe-permute-fusion", NULL, NULL, "fused token permute and unpermute", CMD_WORD},
    {"--moe-shared-expert-overlap", NULL, NULL,
     "shared experts computed during the dispatch and combine", CMD_WORD},
    {"--moe-a2a-overlap", "--overlap-moe-expert-parallel-comm", NULL,
     "EP all-to-alls hidden behind another micro-batch's compute", CMD_WORD},
    {"--moe-capacity-factor", "--moe-expert-capacity-factor", "X",
     "tokens an expert takes over the mean; the rest are dropped (default: dropless)",
     CMD_X(0.01, 64)},
    {"--moe-pad-expert-input-to-capacity", NULL, NULL,
     "pad every expert to its capacity (needs --moe-capacity-factor)", CMD_WORD},
    {"--moe-dropless", NULL, NULL,
     "every token reaches its experts: replaces a recipe's token drop (Megatron-Bridge 25.09's "
     "Qwen3 and B200/GB200 DeepSeek-V3 recipes drop at capacity 1.0)",
     CMD_WORD},
    {"--moe-imbalance", NULL, "X",
     "tokens on the busiest EP rank over the mean (default 1: balanced, an assumption)",
     CMD_X(1, 64)},
    {"--moe-router-fusion", NULL, NULL,
     "the router's element-wise kernels fused (Megatron-Core: 31 kernels instead of 72)",
     CMD_WORD},
    {"--cuda-graph-scope", NULL, "LIST",
     "what CUDA graphs capture, Megatron-Core's names: attn, mlp, moe (token-drop only), "
     "moe_router, moe_preprocess, full_iteration (no MoE sync), none (default: the "
     "framework's recipe)",
     CMD_WORD},
    {"--set", NULL, "KEY=VALUE",
     "set one framework option by its preset key after the preset and the flags above "
     "(frameworks/options.def; scaleplan catalog frameworks lists them); repeatable",
     CMD_WORD, .repeat = true},
};
const cmd_group_t CMD_SIM_OPTS = {"Simulation", sim_opts, sizeof sim_opts / sizeof sim_opts[0]};

/* Framework option switches given explicitly override the preset. */
int cmd_sim_switches(const cmd_args_t *a, sim_options_t *o, err_t *err)
{
    if (cmd_has(a, "--overlap-grad-reduce"))
        o->overlap_grad_reduce = true;
    if (cmd_has(a, "--no-overlap-grad-reduce"))
        o->overlap_grad_reduce = false;
    if (cmd_has(a, "--overlap-param-gather"))
        o->overlap_param_gather = true;
    if (cmd_has(a, "--no-overlap-param-gather"))
        o->overlap_param_gather = false;
    if (cmd_has(a, "--tp-comm-overlap"))
        o->tp_comm_overlap = true;
    if (cmd_has(a, "--compile"))
        sim_options_compiled(o);
    if (cmd_has(a, "--overlap-p2p"))
        o->overlap_p2p = 1;
    if (cmd_has(a, "--no-overlap-p2p"))
        o->overlap_p2p = 0;
    if (cmd_has(a, "--no-causal"))
        o->causal = false;
    if (cmd_has(a, "--moe-grouped-gemm"))
        o->moe.grouped_gemm = true;
    if (cmd_has(a, "--moe-permute-fusion"))
        o->moe.permute_fusion = true;
    if (cmd_has(a, "--moe-shared-expert-overlap"))
        o->moe.shared_overlap = true;
    if (cmd_has(a, "--moe-a2a-overlap"))
        o->moe.a2a_overlap = true;
    double bucket = 0;
    int rc;
    const char *disp = cmd_get(a, "--moe-dispatcher");
    if (disp && (rc = moe_dispatch_parse(disp, "--moe-dispatcher", &o->moe.dispatcher, err)))
        return rc;
    o->moe.dispatcher_given = o->moe.dispatcher_given || disp != NULL;
    if (cmd_has(a, "--moe-capacity-factor") && cmd_has(a, "--moe-dropless"))
        return err_setf(err, ERR_INPUT, NULL, "--moe-dropless",
                        "contradicts --moe-capacity-factor (give one of them)");
    if (cmd_has(a, "--moe-capacity-factor") || cmd_has(a, "--moe-dropless")) {
        /* the run's own drop policy replaces a recipe's (capacity and padding) */
        o->moe.capacity_factor = 0;
        o->moe.pad_to_capacity = false;
        o->moe.drop_from_recipe = false;
    }
    if (cmd_has(a, "--moe-capacity-factor") &&
        (rc = cmd_get_double(a, "--moe-capacity-factor", &o->moe.capacity_factor, err)))
        return rc;
    if (cmd_has(a, "--moe-pad-expert-input-to-capacity")) {
        if (!(o->moe.capacity_factor > 0))
            return err_setf(err, ERR_INPUT, NULL, "--moe-pad-expert-input-to-capacity",
                            "needs --moe-capacity-factor (padding is to a capacity)");
        o->moe.pad_to_capacity = true;
    }
    if (cmd_has(a, "--moe-router-fusion"))
        o->host.router_fusion = true;
    const char *scopes = cmd_get(a, "--cuda-graph-scope");
    if (scopes && (rc = host_graph_scopes_parse(scopes, "--cuda-graph-scope",
                                                &o->host.graph_scopes, err)))
        return rc;
    o->host.graph_scopes_given = o->host.graph_scopes_given || scopes != NULL;
    if (cmd_has(a, "--moe-imbalance")) {
        if ((rc = cmd_get_double(a, "--moe-imbalance", &o->moe.imbalance, err)))
            return rc;
        o->moe.imbalance_given = true;
    }
    if ((rc = cmd_get_double(a, "--bucket-size", &bucket, err)))
        return rc;
    if (cmd_has(a, "--bucket-size")) {
        if (!(bucket >= 1))
            return err_setf(err, ERR_INPUT, NULL, "--bucket-size",
                            "must be at least one parameter (got %g)", bucket);
        o->bucket_params = bucket;
    }
    if (cmd_has(a, "--tp-only-amax-red"))
        o->amax_reduction = AMAX_RED_TP;
    if ((rc = cmd_get_int(a, "--dp-comm-ctas", &o->dp_comm_ctas, err)))
        return rc;
    if ((rc = cmd_get_double(a, "--straggler-cv", &o->straggler_cv, err)))
        return rc;
    /* --set KEY=VALUE: one row of frameworks/options.def each, last */
    const char *sets[32];
    int n_sets = cmd_get_all(a, "--set", sets, 32);
    if (n_sets > 32)
        return err_setf(err, ERR_INPUT, NULL, "--set", "at most 32 of them (got %d)", n_sets);
    for (int i = 0; i < n_sets; i++)
        if ((rc = fw_option_set(o, sets[i], err)))
            return rc;
    return ERR_OK;
}

const cmd_opt_t *cmd_find_opt(const cmd_args_t *a, const char *name)
{
    int idx = find_opt(a, name, strlen(name));
    return idx < 0 ? NULL : opt_at(a, idx);
}

int cmd_get_all(const cmd_args_t *a, const char *name, const char **out, int cap)
{
    const cmd_opt_t *want = cmd_find_opt(a, name);
    int n = 0;
    for (int i = 1; want && i < a->argc; i++) {
        const char *w = a->argv[i];
        if (w[0] != '-' || strcmp(w, "-") == 0 || (w[1] >= '0' && w[1] <= '9'))
            continue;
        const char *eq = strchr(w, '=');
        int idx = find_opt(a, w, eq ? (size_t)(eq - w) : strlen(w));
        const cmd_opt_t *o = idx < 0 ? NULL : opt_at(a, idx);
        if (!o || !o->metavar)
            continue;
        const char *v = eq ? eq + 1 : (i + 1 < a->argc ? a->argv[++i] : NULL);
        if (o == want && v && n < cap)
            out[n++] = v;
        else if (o == want && v)
            n++;
    }
    return n;
}
