#include "cli/args.h"

#include <stdlib.h>
#include <string.h>

#include "common/json.h"
#include "models/layout_json.h"
#include "common/names.h"
#include "common/units.h"

static const cli_opt_t model_opts[] = {
    {"--model", NULL, "NAME|FILE",
     "catalog model (scaleplan catalog models) or a Hugging Face config.json"},
};
const cli_group_t CLI_MODEL_OPTS = {"Model", model_opts,
                                    sizeof model_opts / sizeof model_opts[0]};

static const cli_opt_t cluster_opts[] = {
    {"--gpu", NULL, "NAME", "GPU type, e.g. h100-sxm (scaleplan catalog gpus)"},
    {"--gpus", NULL, "N", "GPUs the job uses (16k = 16384)"},
    {"--gpus-per-node", NULL, "N", "GPUs sharing one node's NVLink/PCIe fabric"},
    {"--fabric", NULL, "NAME", "replace the node or network fabric (ib-ndr, roce-400, ...)"},
    {"--nics-per-node", NULL, "N", "scale-out rails per node"},
    {"--oversubscription", NULL, "X", "network taper above a leaf switch (1 = non-blocking)"},
    {"--cluster", NULL, "NAME|FILE", "cluster definition (scaleplan catalog clusters) or JSON file"},
};
const cli_group_t CLI_CLUSTER_OPTS = {"Cluster", cluster_opts,
                                      sizeof cluster_opts / sizeof cluster_opts[0]};

static const cli_opt_t layout_opts[] = {
    {"--tp", "--tensor-model-parallel-size", "N", "tensor parallel degree"},
    {"--pp", "--pipeline-model-parallel-size", "N", "pipeline parallel degree"},
    {"--cp", "--context-parallel-size", "N", "context parallel degree"},
    {"--ep", "--expert-model-parallel-size", "N", "expert parallel degree (MoE only)"},
    {"--vpp", NULL, "N", "virtual pipeline stages per rank (interleaved schedule)"},
    {"--num-layers-per-virtual-pipeline-stage", NULL, "N",
     "Megatron's way to set --vpp: layers per virtual stage"},
    {"--micro-batch", "--micro-batch-size", "N", "sequences per micro-batch per GPU"},
    {"--global-batch", "--global-batch-size", "N", "sequences per optimizer step"},
    {"--grad-accum", "--gradient-accumulation-steps", "N",
     "micro-batches per step per DP rank (when --global-batch is not given)"},
    {"--seq-len", "--seq-length", "N", "tokens per sequence (default: the model's, at most 8192)"},
    {"--zero", NULL, "0..3", "ZeRO stage (3 = FSDP full shard)"},
    {"--fsdp", NULL, NULL, "same as --zero 3"},
    {"--distributed-optimizer", "--use-distributed-optimizer", NULL,
     "Megatron distributed optimizer (optimizer state sharded over DP)"},
    {"--recompute", "--recompute-granularity", "none|selective|full", "activation recompute"},
    {"--recompute-activations", NULL, NULL, "Megatron: selective recompute"},
    {"--checkpoint-activations", NULL, NULL, "Megatron (2021): full recompute"},
    {"--sequence-parallel", NULL, NULL, "Megatron sequence parallelism over the TP group"},
    {"--precision", NULL, "bf16|fp16|fp8|fp32", "training precision (default bf16)"},
    {"--bf16", NULL, NULL, "same as --precision bf16"},
    {"--fp16", NULL, NULL, "same as --precision fp16"},
    {"--fp8-format", NULL, "FORMAT", "Megatron: fp8 GEMMs (same as --precision fp8)"},
    {"--schedule", NULL, "gpipe|1f1b|interleaved", "pipeline schedule (default 1f1b)"},
    {"--attention", NULL, "flash|eager", "fused attention or materialized scores (default flash)"},
    {"--grad-dtype", NULL, "bf16|fp32", "gradient precision (Megatron keeps fp32 main grads)"},
    {"--first-stage-layers", "--decoder-first-pipeline-num-layers", "N",
     "layers on the first pipeline stage (uneven split)"},
    {"--last-stage-layers", "--decoder-last-pipeline-num-layers", "N",
     "layers on the last pipeline stage (uneven split)"},
    {"--deepspeed", NULL, "FILE", "DeepSpeed ds_config.json: ZeRO stage and batch sizes"},
};
const cli_group_t CLI_LAYOUT_OPTS = {"Layout (Megatron-LM flag names accepted)",
                                     layout_opts,
                                     sizeof layout_opts / sizeof layout_opts[0]};

static const cli_opt_t output_opts[] = {
    {"--json", NULL, NULL, "print one JSON object instead of tables"},
    {"--help", "-h", NULL, "show this help"},
};
const cli_group_t CLI_OUTPUT_OPTS = {"Output", output_opts,
                                     sizeof output_opts / sizeof output_opts[0]};

/* Flat index of the option spelled text (name or alias), or -1. */
static int find_opt(const cli_args_t *a, const char *text, size_t len)
{
    int idx = 0;
    for (int g = 0; g < a->n_groups; g++)
        for (int i = 0; i < a->groups[g]->n; i++, idx++) {
            const cli_opt_t *o = &a->groups[g]->opts[i];
            if ((strlen(o->name) == len && strncmp(o->name, text, len) == 0) ||
                (o->alias && strlen(o->alias) == len &&
                 strncmp(o->alias, text, len) == 0))
                return idx;
        }
    return -1;
}

static const cli_opt_t *opt_at(const cli_args_t *a, int index)
{
    for (int g = 0; g < a->n_groups; g++) {
        if (index < a->groups[g]->n)
            return &a->groups[g]->opts[index];
        index -= a->groups[g]->n;
    }
    return NULL;
}

static int unknown_option(const cli_args_t *a, const char *cmd, const char *text,
                          err_t *err)
{
    const char *names[CLI_MAX_OPTS];
    int n = 0;
    for (int g = 0; g < a->n_groups; g++)
        for (int i = 0; i < a->groups[g]->n && n < CLI_MAX_OPTS; i++)
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

int cli_parse(int argc, char **argv, const cli_group_t *const *groups, int n_groups,
              cli_args_t *a, err_t *err)
{
    memset(a, 0, sizeof *a);
    a->groups = groups;
    a->n_groups = n_groups;
    a->argc = argc;
    a->argv = argv;
    int total = 0;
    for (int g = 0; g < n_groups; g++)
        total += groups[g]->n;
    if (total > CLI_MAX_OPTS)
        return err_set(err, ERR_RUNTIME, "too many options declared (%d)", total);
    const char *cmd = argc > 0 ? argv[0] : "";
    for (int i = 1; i < argc; i++) {
        const char *w = argv[i];
        if (w[0] != '-' || strcmp(w, "-") == 0 || (w[1] >= '0' && w[1] <= '9')) {
            if (a->n_positional == CLI_MAX_POSITIONAL)
                return err_setf(err, ERR_INPUT, NULL, w, "too many arguments");
            a->positional[a->n_positional++] = w;
            continue;
        }
        const char *eq = strchr(w, '=');
        size_t len = eq ? (size_t)(eq - w) : strlen(w);
        int idx = find_opt(a, w, len);
        if (idx < 0)
            return unknown_option(a, cmd, w, err);
        const cli_opt_t *o = opt_at(a, idx);
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
    }
    return ERR_OK;
}

const char *cli_get(const cli_args_t *a, const char *name)
{
    int idx = find_opt(a, name, strlen(name));
    return idx < 0 ? NULL : a->value[idx];
}

bool cli_has(const cli_args_t *a, const char *name)
{
    return cli_get(a, name) != NULL;
}

int cli_get_int(const cli_args_t *a, const char *name, long lo, long hi,
                int *out, err_t *err)
{
    const char *v = cli_get(a, name);
    if (!v)
        return ERR_OK;
    long x;
    int rc = units_parse_int(v, name, lo, hi, &x, err);
    if (!rc)
        *out = (int)x;
    return rc;
}

int cli_get_count(const cli_args_t *a, const char *name, double *out, err_t *err)
{
    const char *v = cli_get(a, name);
    return v ? units_parse_count(v, name, out, err) : ERR_OK;
}

int cli_get_duration(const cli_args_t *a, const char *name, double *out,
                     err_t *err)
{
    const char *v = cli_get(a, name);
    return v ? units_parse_duration(v, name, out, err) : ERR_OK;
}

int cli_get_price(const cli_args_t *a, const char *name, double *out, err_t *err)
{
    const char *v = cli_get(a, name);
    return v ? units_parse_price(v, name, out, err) : ERR_OK;
}

int cli_get_money(const cli_args_t *a, const char *name, double *out, err_t *err)
{
    const char *v = cli_get(a, name);
    return v ? units_parse_money(v, name, out, err) : ERR_OK;
}

int cli_get_double(const cli_args_t *a, const char *name, double lo, double hi,
                   double *out, err_t *err)
{
    const char *v = cli_get(a, name);
    if (!v)
        return ERR_OK;
    char *end;
    double x = strtod(v, &end);
    if (end == v || *end != '\0' || !(x >= lo && x <= hi))
        return err_setf(err, ERR_INPUT, NULL, name,
                        "must be a number from %g to %g (got '%s')", lo, hi, v);
    *out = x;
    return ERR_OK;
}

void cli_print_help(FILE *out, const char *usage, const char *summary,
                    const cli_group_t *const *groups, int n_groups)
{
    fprintf(out, "usage: %s\n\n%s\n", usage, summary);
    for (int g = 0; g < n_groups; g++) {
        fprintf(out, "\n%s:\n", groups[g]->title);
        for (int i = 0; i < groups[g]->n; i++) {
            const cli_opt_t *o = &groups[g]->opts[i];
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

/* --model, or the first positional word. */
static int model_name(const cli_args_t *a, const char **name, err_t *err)
{
    *name = cli_get(a, "--model");
    if (!*name && a->n_positional > 0)
        *name = a->positional[0];
    if (!*name)
        return err_setf(err, ERR_INPUT, NULL, "--model",
                        "say which model: --model NAME (scaleplan catalog "
                        "models) or --model path/to/config.json");
    return ERR_OK;
}

int cli_model(const cli_args_t *a, model_t *m, err_t *err)
{
    const char *name;
    int rc = model_name(a, &name, err);
    return rc ? rc : model_load(name, m, err);
}

int cli_cluster_spec(const cli_args_t *a, cluster_spec_t *spec, err_t *err)
{
    memset(spec, 0, sizeof *spec);
    spec->gpu = cli_get(a, "--gpu");
    spec->cluster = cli_get(a, "--cluster");
    spec->fabric = cli_get(a, "--fabric");
    int rc;
    if ((rc = cli_get_int(a, "--gpus", 1, 1 << 24, &spec->n_gpus, err)) ||
        (rc = cli_get_int(a, "--gpus-per-node", 1, 4096, &spec->gpus_per_node, err)) ||
        (rc = cli_get_int(a, "--nics-per-node", 1, 4096, &spec->nics_per_node, err)) ||
        (rc = cli_get_double(a, "--oversubscription", 1, 1000,
                             &spec->oversubscription, err)))
        return rc;
    return ERR_OK;
}

static int apply_deepspeed(const char *path, layout_t *l, err_t *err)
{
    cJSON *cfg = NULL;
    int rc = json_parse_file(path, &cfg, err);
    if (rc)
        return rc;
    rc = layout_apply_deepspeed(cfg, path, l, err);
    cJSON_Delete(cfg);
    return rc;
}

/* Switches and enum options that set the same field as another flag. */
static int layout_switches(const cli_args_t *a, layout_t *l, err_t *err)
{
    int rc;
    const char *v;
    if (cli_has(a, "--fsdp"))
        l->zero = 3;
    if (cli_has(a, "--distributed-optimizer"))
        l->distributed_optimizer = true;
    if (cli_has(a, "--sequence-parallel"))
        l->sequence_parallel = true;
    if (cli_has(a, "--recompute-activations"))
        l->recompute = RECOMPUTE_SELECTIVE;
    if (cli_has(a, "--checkpoint-activations"))
        l->recompute = RECOMPUTE_FULL;
    if (cli_has(a, "--bf16"))
        l->precision = PRECISION_BF16;
    if (cli_has(a, "--fp16"))
        l->precision = PRECISION_FP16;
    if (cli_has(a, "--fp8-format"))
        l->precision = PRECISION_FP8;
    if ((v = cli_get(a, "--recompute")) &&
        (rc = layout_parse_recompute(v, &l->recompute, err)))
        return rc;
    if ((v = cli_get(a, "--precision")) &&
        (rc = layout_parse_precision(v, &l->precision, err)))
        return rc;
    if ((v = cli_get(a, "--schedule")) &&
        (rc = layout_parse_schedule(v, &l->schedule, err)))
        return rc;
    if ((v = cli_get(a, "--attention"))) {
        if (strcmp(v, "flash") == 0)
            l->flash_attention = true;
        else if (strcmp(v, "eager") == 0)
            l->flash_attention = false;
        else
            return err_setf(err, ERR_INPUT, NULL, "--attention",
                            "use flash or eager (got '%s')", v);
    }
    if ((v = cli_get(a, "--grad-dtype"))) {
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

int cli_layout_flags(const cli_args_t *a, const model_t *m, layout_t *l,
                     err_t *err)
{
    int rc;
    const char *ds = cli_get(a, "--deepspeed");
    /* The DeepSpeed config first, so explicit flags override it. */
    if (ds && (rc = apply_deepspeed(ds, l, err)))
        return rc;
    const long big = 1 << 24;
    int per_vstage = 0;
    if ((rc = cli_get_int(a, "--tp", 1, big, &l->tp, err)) ||
        (rc = cli_get_int(a, "--pp", 1, big, &l->pp, err)) ||
        (rc = cli_get_int(a, "--cp", 1, big, &l->cp, err)) ||
        (rc = cli_get_int(a, "--ep", 1, big, &l->ep, err)) ||
        (rc = cli_get_int(a, "--vpp", 1, 1024, &l->vpp, err)) ||
        (rc = cli_get_int(a, "--num-layers-per-virtual-pipeline-stage", 1, big,
                          &per_vstage, err)) ||
        (rc = cli_get_int(a, "--micro-batch", 1, big, &l->micro_batch, err)) ||
        (rc = cli_get_int(a, "--global-batch", 1, 1L << 30, &l->global_batch, err)) ||
        (rc = cli_get_int(a, "--grad-accum", 1, big, &l->grad_accum, err)) ||
        (rc = cli_get_int(a, "--seq-len", 1, 100000000L, &l->seq_len, err)) ||
        (rc = cli_get_int(a, "--zero", 0, 3, &l->zero, err)) ||
        (rc = cli_get_int(a, "--first-stage-layers", 1, 100000,
                          &l->first_stage_layers, err)) ||
        (rc = cli_get_int(a, "--last-stage-layers", 1, 100000,
                          &l->last_stage_layers, err)) ||
        (rc = layout_switches(a, l, err)))
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
    if (l->zero >= 1 && !cli_has(a, "--distributed-optimizer"))
        l->distributed_optimizer = false;
    /* Virtual stages imply the interleaved schedule unless one is named. */
    if (l->vpp > 1 && !cli_has(a, "--schedule"))
        l->schedule = SCHEDULE_INTERLEAVED;
    return ERR_OK;
}

int cli_layout(const cli_args_t *a, const model_t *m, int n_gpus, layout_t *l,
               err_t *err)
{
    layout_defaults(l);
    int rc = cli_layout_flags(a, m, l, err);
    if (rc)
        return rc;
    return layout_finalize(l, m, n_gpus, err);
}

static const cli_opt_t sim_opts[] = {
    {"--profile", NULL, "FILE", "cost profile (default: the GPU's built-in profile)"},
    {"--framework", NULL, "NAME",
     "megatron-core (default), megatron-2022, megatron-2021, deepspeed, fsdp"},
    {"--overlap-grad-reduce", NULL, NULL, "reduce gradient buckets during the backward"},
    {"--no-overlap-grad-reduce", NULL, NULL, "reduce gradients after the backward"},
    {"--overlap-param-gather", NULL, NULL, "gather updated parameters during the next forward"},
    {"--no-overlap-param-gather", NULL, NULL, "gather parameters after the optimizer"},
    {"--tp-comm-overlap", NULL, NULL, "pipeline TP collectives with GEMMs (needs SP)"},
    {"--overlap-p2p", "--overlap-p2p-communication", NULL, "asynchronous pipeline transfers"},
    {"--no-overlap-p2p", NULL, NULL, "blocking pipeline transfers"},
    {"--bucket-size", NULL, "N", "gradient bucket in parameters (default 40M)"},
    {"--straggler-cv", NULL, "X", "per-rank compute jitter (default: the profile's)"},
    {"--no-causal", NULL, NULL, "full (bidirectional) attention instead of causal"},
};
const cli_group_t CLI_SIM_OPTS = {"Simulation", sim_opts, sizeof sim_opts / sizeof sim_opts[0]};

/* Framework option switches given explicitly override the preset. */
int cli_sim_switches(const cli_args_t *a, sim_options_t *o, err_t *err)
{
    if (cli_has(a, "--overlap-grad-reduce"))
        o->overlap_grad_reduce = true;
    if (cli_has(a, "--no-overlap-grad-reduce"))
        o->overlap_grad_reduce = false;
    if (cli_has(a, "--overlap-param-gather"))
        o->overlap_param_gather = true;
    if (cli_has(a, "--no-overlap-param-gather"))
        o->overlap_param_gather = false;
    if (cli_has(a, "--tp-comm-overlap"))
        o->tp_comm_overlap = true;
    if (cli_has(a, "--overlap-p2p"))
        o->overlap_p2p = 1;
    if (cli_has(a, "--no-overlap-p2p"))
        o->overlap_p2p = 0;
    if (cli_has(a, "--no-causal"))
        o->causal = false;
    double bucket = 0;
    int rc;
    if ((rc = cli_get_count(a, "--bucket-size", &bucket, err)))
        return rc;
    if (cli_has(a, "--bucket-size")) {
        if (!(bucket >= 1))
            return err_setf(err, ERR_INPUT, NULL, "--bucket-size",
                            "must be at least one parameter (got %g)", bucket);
        o->bucket_params = bucket;
    }
    return cli_get_double(a, "--straggler-cv", 0, 1, &o->straggler_cv, err);
}

int cli_scenario(const cli_args_t *a, scenario_t *s, err_t *err)
{
    return cli_scenario_from(a, NULL, s, err);
}

int cli_scenario_from(const cli_args_t *a, const cli_base_t *base, scenario_t *s, err_t *err)
{
    memset(s, 0, sizeof *s);
    scenario_spec_t spec = {0};
    int rc;
    spec.framework = cli_get(a, "--framework");
    if (base && base->model)
        spec.model_given = base->model;
    else if ((rc = model_name(a, &spec.model, err)))
        return rc;
    if ((rc = cli_cluster_spec(a, &spec.cluster, err)) || (rc = scenario_begin(&spec, s, err)))
        return rc;
    /* what the base fixes replaces the preset's defaults; flags come last */
    if (base && base->layout)
        s->layout = *base->layout;
    if (base && base->opt)
        s->opt = *base->opt;
    if ((rc = cli_layout_flags(a, &s->model, &s->layout, err)) ||
        (rc = cli_sim_switches(a, &s->opt, err)))
        return rc;
    return scenario_finish(s, cli_get(a, "--profile"), err);
}

const cli_opt_t *cli_find_opt(const cli_args_t *a, const char *name)
{
    int idx = find_opt(a, name, strlen(name));
    return idx < 0 ? NULL : opt_at(a, idx);
}

int cli_get_all(const cli_args_t *a, const char *name, const char **out, int cap)
{
    const cli_opt_t *want = cli_find_opt(a, name);
    int n = 0;
    for (int i = 1; want && i < a->argc; i++) {
        const char *w = a->argv[i];
        if (w[0] != '-' || strcmp(w, "-") == 0 || (w[1] >= '0' && w[1] <= '9'))
            continue;
        const char *eq = strchr(w, '=');
        int idx = find_opt(a, w, eq ? (size_t)(eq - w) : strlen(w));
        const cli_opt_t *o = idx < 0 ? NULL : opt_at(a, idx);
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
