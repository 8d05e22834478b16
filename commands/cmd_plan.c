/* scaleplan plan: choose GPU counts and layouts - the scale ladder, the
 * recommendation, and what-if variations. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands/commands.h"
#include "commands/job.h"
#include "commands/output.h"
#include "commands/plan_elastic.h"
#include "commands/plan_sizing.h"
#include "commands/sites.h"
#include "common/fileio.h"
#include "common/json.h"
#include "common/numfmt.h"
#include "common/units.h"
#include "models/hybrid.h"
#include "reports/jsonout.h"
#include "reports/launch.h"
#include "models/layout_text.h"
#include "reports/textwrap.h"
#include "reports/table.h"
#include "plan/ladder.h"
#include "plan/whatif.h"
#include "topologies/price.h"

static const cmd_opt_t own_opts[] = {
    {"--min-gpus", NULL, "N", "first rung of the ladder (default 8)", CMD_N(1, 1 << 24)},
    {"--max-gpus", NULL, "N", "last rung (default 4096; 16k = 16384)", CMD_N(1, 1 << 24)},
    {"--objective", NULL, "time|cost|tokens-per-dollar", "what the best plan minimises (default time)",
     CMD_WORD},
    {"--deadline", NULL, "T", "finish within (e.g. 30d)",
     CMD_KIND(CMD_DURATION, 60, 36500 * 86400.0)},
    {"--budget", NULL, "USD", "spend at most (e.g. 500000, $2.5M)", CMD_KIND(CMD_MONEY, 1, 1e13)},
    {"--price", NULL, "$/GPU-h",
     "one price per GPU-hour for every rung (default: each rung at the catalog's quote for its "
     "own size)",
     CMD_KIND(CMD_PRICE, 0, 1e4)},
    {"--provider", NULL, "NAME", "price each rung from this provider's quotes in the catalog",
     CMD_WORD},
    {"--price-end", NULL, "low|mid|high", "where in a quoted price range (default mid)", CMD_WORD},
    {"--global-batch", NULL, "N|N..M", "sequences per step, fixed or a range (default 4M tokens)",
     CMD_KIND(CMD_INT_SPAN, 1, 1 << 24)},
    {"--global-batch-tokens", NULL, "N|N..M", "the same in tokens (e.g. 4M or 2M..8M)",
     CMD_KIND(CMD_COUNT_SPAN, 1, 1e12)},
    {"--seq-len", "--seq-length", "N|LO..HI",
     "tokens per sequence (default: the model's, at most 8192); a range searches its ends and "
     "the powers of two between, the batch held in tokens (in sequences with --global-batch)",
     CMD_KIND(CMD_COUNT_SPAN, 1, 1 << 24)},
    {"--min-marginal", NULL, "X", "adding GPUs stops paying below this speed-up per GPU (0.5)",
     CMD_X(0, 10)},
    {"--what-if", NULL, "K=V,...", "rerun the best plan with fabric=, price=, gpu=, gpus=, tokens=",
     CMD_WORD},
    {"--details", NULL, NULL, "add the best rung's checkpoint-interval sweep and step timeline to --json",
     CMD_WORD},
    {"--emit", NULL, "megatron|nemo|deepspeed|torchtitan",
     "write the recommended layout as that framework's launch configuration (plans for the "
     "framework's current version unless --framework names one)",
     CMD_WORD},
    {"--out", NULL, "FILE", "with --emit: write the configuration to FILE (default: after the plan)",
     CMD_WORD},
    {"--offload-search", NULL, NULL,
     "also consider offloading the optimizer (and ZeRO-3 parameters) to host memory", CMD_WORD},
    CMD_REPORT_OPT,
};
static const cmd_group_t own_group = {"Plan", own_opts, sizeof own_opts / sizeof own_opts[0]};

/* Constraints on the search: a value fixes a dimension, LO..HI bounds it. */
static const cmd_opt_t space_opts[] = {
    {"--tp", "--tensor-model-parallel-size", "N|LO..HI", "tensor parallel degree(s) to search",
     CMD_KIND(CMD_INT_SPAN, 1, 1 << 16)},
    {"--pp", "--pipeline-model-parallel-size", "N|LO..HI", "pipeline stages to search",
     CMD_KIND(CMD_INT_SPAN, 1, 1 << 16)},
    {"--cp", "--context-parallel-size", "N|LO..HI", "context parallel degree(s) to search",
     CMD_KIND(CMD_INT_SPAN, 1, 1 << 16)},
    {"--vpp", NULL, "N|LO..HI", "virtual stages per rank (the interleaved schedule) to search",
     CMD_KIND(CMD_INT_SPAN, 1, 1 << 16)},
    {"--zero", NULL, "N|LO..HI", "ZeRO stages to search (1 = distributed optimizer, 3 = FSDP)",
     CMD_KIND(CMD_INT_SPAN, 0, 3)},
    {"--ep", "--expert-model-parallel-size", "N|LO..HI",
     "expert parallel degree(s) to search (mixture-of-experts models; with expert parallelism "
     "each MoE token dispatcher the framework offers is searched, DeepEP where it runs, and for "
     "Megatron-Core's MoE layer the CUDA graph scopes: the recipe's, none, "
     "attn+moe_router+moe_preprocess, each tried on the framework's 256 layouts of the "
     "highest throughput bound; --moe-dispatcher or --cuda-graph-scope fixes them)",
     CMD_KIND(CMD_INT_SPAN, 1, 1 << 16)},
    {"--etp", "--expert-tensor-parallel-size", "N|LO..HI",
     "expert tensor parallel degree(s) to search with EP > 1 (default: 1 and the layout's TP)",
     CMD_KIND(CMD_INT_SPAN, 1, 1 << 16)},
    {"--micro-batch", "--micro-batch-size", "N|LO..HI", "micro-batch sizes to search (default 1..16)",
     CMD_KIND(CMD_INT_SPAN, 1, 1 << 16)},
    {"--recompute", NULL, "LIST", "recompute modes to search: none,selective,ops,full", CMD_WORD},
    {"--recompute-modules", NULL, "LIST",
     "selective recompute of these Megatron-Core modules only (core_attn, layernorm, mlp, "
     "moe_act, moe, mla_up_proj, shared_experts; implies --recompute selective unless given)",
     CMD_WORD},
    {"--schedule", NULL, "LIST", "pipeline schedules to search: 1f1b,interleaved,gpipe,dualpipev (each where the framework runs it)", CMD_WORD},
    {"--precision", NULL, "LIST",
     "training precision(s) to search: bf16 (default), fp8 (each framework's fp8 recipe), "
     "fp16, ...; bf16,fp8 searches both and says which wins",
     CMD_WORD},
};
static const cmd_group_t space_group = {
    "Search space (what is searched is what the framework runs; these narrow it)", space_opts,
    sizeof space_opts / sizeof space_opts[0]};

static int space_range(const cmd_args_t *a, const char *flag, plan_range_t *r, err_t *err)
{
    if (!cmd_has(a, flag))
        return ERR_OK;
    double lo, hi;
    int rc = cmd_get_span(a, flag, &lo, &hi, err);
    if (rc)
        return rc;
    r->lo = (int)lo;
    r->hi = (int)hi;
    return ERR_OK;
}

static int space_flags(const cmd_args_t *a, plan_space_t *s, err_t *err)
{
    int rc;
    const char *v;
    if ((rc = space_range(a, "--tp", &s->tp, err)) || (rc = space_range(a, "--pp", &s->pp, err)) ||
        (rc = space_range(a, "--cp", &s->cp, err)) || (rc = space_range(a, "--vpp", &s->vpp, err)) ||
        (rc = space_range(a, "--zero", &s->zero, err)) ||
        (rc = space_range(a, "--ep", &s->ep, err)) ||
        (rc = space_range(a, "--etp", &s->etp, err)) ||
        (rc = space_range(a, "--micro-batch", &s->micro_batch, err)))
        return rc;
    if ((v = cmd_get(a, "--recompute")) && (rc = plan_parse_recompute_set(v, &s->recompute_mask, err)))
        return rc;
    if ((v = cmd_get(a, "--recompute-modules"))) {
        if ((rc = layout_parse_recompute_modules(v, "--recompute-modules", &s->rc_modules, err)))
            return rc;
        if (!s->recompute_mask)
            s->recompute_mask = 1u << RECOMPUTE_SELECTIVE;
        else if (!(s->recompute_mask & (1u << RECOMPUTE_SELECTIVE)))
            return err_setf(err, ERR_INPUT, NULL, "--recompute-modules",
                            "names what selective recompute rebuilds, but --recompute leaves "
                            "selective out");
    }
    if ((v = cmd_get(a, "--schedule")) && (rc = plan_parse_schedule_set(v, &s->schedule_mask, err)))
        return rc;
    if ((v = cmd_get(a, "--precision"))) {
        unsigned mask;
        if ((rc = plan_parse_precision_set(v, &mask, err)))
            return rc;
        for (int k = PRECISION_COUNT - 1; k >= 0; k--)
            if (mask & (1u << k))
                s->precision = (precision_t)k; /* the first, for messages */
        s->precision_mask = (mask & (mask - 1)) ? mask : 0;
    }
    return ERR_OK;
}

typedef struct {
    model_t model;
    cluster_t base;
    profile_t profile;
    failure_set_t failures;
    cmd_failure_pick_t pick;
    ladder_input_t in;
    ladder_t ladder;
    price_t price;
    char recommendation[4096];
    bool tokens_assumed;    /* no --tokens: 20 per parameter */
    bool precision_assumed; /* no --precision: bf16 */
    notes_t notes;          /* what --finetune assumed */
    plan_sizing_t sizing;   /* --inference-tokens */
} plan_run_t;

/* The simulation switches given to plan, over each searched framework's
 * options (plan_space_t.adjust_options). */
static int plan_switches(sim_options_t *o, const void *ctx, err_t *err)
{
    return cmd_sim_switches((const cmd_args_t *)ctx, o, err);
}

/* The switches over default options once before the search: one that
 * cannot apply (a --set the table refuses) is the user's error, said once,
 * not every framework skipped. */
static int probe_switches(const cmd_args_t *a, err_t *err)
{
    sim_options_t probe;
    sim_options_default(&probe);
    return plan_switches(&probe, a, err);
}

/* The sequence lengths (--seq-len, one or a range) and the global batch
 * (--global-batch in sequences, else --global-batch-tokens, the planner's
 * default) the search covers, into space. */
static int batch_space(const cmd_args_t *a, plan_space_t *space, err_t *err)
{
    int rc;
    int seq = space->seq_len;
    if (cmd_has(a, "--seq-len")) {
        double slo, shi;
        if ((rc = cmd_get_span(a, "--seq-len", &slo, &shi, err)))
            return rc;
        if (slo != floor(slo) || shi != floor(shi))
            return err_setf(err, ERR_INPUT, NULL, "--seq-len", "must be whole tokens");
        seq = (int)slo;
        space->seq_len_max = shi > slo ? (int)shi : 0;
    }
    space->seq_len = seq;
    int seq_hi = space->seq_len_max > seq ? space->seq_len_max : seq;
    double lo, hi;
    if (cmd_has(a, "--global-batch")) {
        if ((rc = cmd_get_span(a, "--global-batch", &lo, &hi, err)) ||
            (rc = cmd_check_batch_tokens("--global-batch", hi, seq_hi, err)))
            return rc;
    } else {
        double tlo = SCENARIO_DEFAULT_BATCH_TOKENS, thi = SCENARIO_DEFAULT_BATCH_TOKENS;
        if ((rc = cmd_get_span(a, "--global-batch-tokens", &tlo, &thi, err)))
            return rc;
        lo = scenario_batch_for_tokens(tlo, seq);
        hi = fmax(lo, scenario_batch_for_tokens(thi, seq));
        space->batch_tokens_min = tlo;
        space->batch_tokens_max = thi;
    }
    if (hi > PLAN_MAX_GLOBAL_BATCH)
        return err_setf(err, ERR_INPUT, NULL,
                        cmd_has(a, "--global-batch") ? "--global-batch" : "--global-batch-tokens",
                        "%.0f sequences per step is more than the planner takes (%d)", hi,
                        PLAN_MAX_GLOBAL_BATCH);
    space->global_batch_min = (int)lo;
    space->global_batch_max = (int)hi;
    return ERR_OK;
}

/* The price per GPU-hour: --price, a --provider's quote or the GPU's
 * default, at --price-end of a quoted range; without --price each rung is
 * priced at its own size's quote. */
static int plan_price(const cmd_args_t *a, plan_run_t *p, err_t *err)
{
    ladder_input_t *in = &p->in;
    const char *v;
    int rc;
    v = cmd_get(a, "--price");
    if (v) {
        snprintf(p->price.provider, sizeof p->price.provider, "given");
        if ((rc = cmd_get_double(a, "--price", &p->price.usd_per_gpu_hour, err)))
            return rc;
    } else if ((v = cmd_get(a, "--provider"))) {
        if ((rc = price_find(p->base.gpu.name, v, NULL, in->max_gpus, &p->price, err)))
            return rc;
    } else if ((rc = price_default_for_gpu(p->base.gpu.name, in->max_gpus, &p->price, err))) {
        return rc;
    }
    /* a quoted range at --price-end (the middle by default); one price for
     * every rung: the quote for the largest */
    price_end_t end = PRICE_MID;
    if ((v = cmd_get(a, "--price-end")) && (rc = price_end_parse(v, &end, err)))
        return rc;
    in->usd_per_gpu_hour = cmd_has(a, "--price") ? p->price.usd_per_gpu_hour : price_usd(&p->price, end);
    if (!cmd_has(a, "--price")) {
        /* each rung at the quote for its own size (the largest's where a
         * size has none) */
        snprintf(in->price_gpu, sizeof in->price_gpu, "%s", p->base.gpu.name);
        if ((v = cmd_get(a, "--provider")))
            snprintf(in->price_provider, sizeof in->price_provider, "%s", v);
        in->price_end = end;
    }
    return ERR_OK;
}

/* --ep and --etp against the model: expert parallelism needs experts, and a
 * fixed EP must divide them. */
static int check_expert_space(const plan_space_t *s, const model_t *m, err_t *err)
{
    if (s->etp.hi > 0 && !model_is_moe(m))
        return err_setf(err, ERR_INPUT, NULL, "--etp",
                        "expert tensor parallelism needs a mixture-of-experts model; %s is dense "
                        "(drop --etp)",
                        m->name);
    if (s->ep.hi > 1 && !model_is_moe(m))
        return err_setf(err, ERR_INPUT, NULL, "--ep",
                        "expert parallelism needs a mixture-of-experts model; %s is dense "
                        "(drop --ep)",
                        m->name);
    if (s->ep.hi > 0 && model_is_moe(m) &&
        m->moe.n_experts % s->ep.lo != 0 && s->ep.lo == s->ep.hi)
        return err_setf(err, ERR_INPUT, NULL, "--ep",
                        "%d routed experts must divide evenly over EP %d (each EP rank holds "
                        "whole experts)",
                        m->moe.n_experts, s->ep.lo);
    return ERR_OK;
}

static int setup(const cmd_args_t *a, plan_run_t *p, err_t *err)
{
    int rc;
    ladder_input_t *in = &p->in;
    cluster_spec_t spec;
    if ((rc = cmd_model(a, &p->model, err)) || (rc = cmd_cluster_spec(a, &spec, err)))
        return rc;
    int single = spec.n_gpus;
    spec.n_gpus = single ? single : 8;
    if ((rc = cluster_resolve(&spec, &p->base, err)))
        return rc;
    const char *prof = cmd_get(a, "--profile");
    if ((rc = prof ? prof_load_in(a->catalog, prof, &p->profile, err)
                   : prof_load_default_in(a->catalog, p->base.gpu.name, &p->profile, err)))
        return rc;
    if ((rc = cmd_failure_set(a, &p->base, NULL, &p->failures, &p->pick, err)))
        return rc;
    in->model = &p->model;
    in->base = &p->base;
    in->profile = &p->profile;
    in->failures = &p->failures;
    double duration;
    if ((rc = cmd_run_length(a, &in->tokens, &duration, err)))
        return rc;
    if (!cmd_has(a, "--tokens") && !(duration > 0)) {
        in->tokens = ladder_default_tokens(&p->model);
        p->tokens_assumed = true;
    }
    if (!(in->tokens > 0))
        return err_setf(err, ERR_INPUT, NULL, "--tokens", "say how many tokens to train (e.g. 2T)");
    const char *v;
    /* search space */
    ladder_input_defaults(in, &p->model);
    if ((rc = cmd_finetune(a, &p->model, &in->space.ft, &p->notes, err)) ||
        (rc = plan_sizing_setup(a, &p->sizing, err)) || (rc = plan_elastic_check(a, err)))
        return rc;
    in->space.framework = cmd_get(a, "--framework");
    char skip[256]; /* presets that cannot run a hybrid model, said */
    if (!in->space.framework && model_is_hybrid(&p->model) &&
        fw_plannable_without_hybrid(skip, sizeof skip, NULL) == ERR_OK && skip[0])
        notes_add(&p->notes, NOTE_IGNORED, "--framework",
                  "not searched: %s (no hybrid-model support: supports.hybrid)", skip);
    if ((rc = space_flags(a, &in->space, err)))
        return rc;
    p->precision_assumed = !cmd_has(a, "--precision");
    if ((rc = check_expert_space(&in->space, &p->model, err)))
        return rc;
    if ((v = cmd_get(a, "--emit"))) {
        launch_kind_t k;
        if ((rc = launch_parse(v, &k, err)))
            return rc;
        if (!in->space.framework)
            in->space.framework = launch_framework(k);
        else if (!launch_accepts(k, in->space.framework))
            return err_setf(err, ERR_INPUT, NULL, "--emit",
                            "%s layouts cannot be written as a %s configuration; drop "
                            "--framework (--emit %s plans for %s)",
                            in->space.framework, launch_name(k), launch_name(k),
                            launch_framework(k));
    } else if (cmd_get(a, "--out")) {
        return err_setf(err, ERR_INPUT, NULL, "--out", "goes with --emit FORMAT");
    }
    in->space.allow_offload = cmd_has(a, "--offload-search");
    in->space.adjust_options = plan_switches;
    in->space.adjust_ctx = a;
    if ((rc = probe_switches(a, err)) || (rc = batch_space(a, &in->space, err)))
        return rc;
    /* objective and constraints */
    if ((v = cmd_get(a, "--objective"))) {
        if (strcmp(v, "time") == 0)
            in->objective = PLAN_TIME;
        else if (strcmp(v, "cost") == 0)
            in->objective = PLAN_COST;
        else if (strcmp(v, "tokens-per-dollar") == 0)
            in->objective = PLAN_TOKENS_PER_DOLLAR;
        else
            return err_setf(err, ERR_INPUT, NULL, "--objective",
                            "use time, cost or tokens-per-dollar (got '%s')", v);
    }
    if ((rc = cmd_get_double(a, "--deadline", &in->deadline_s, err)) ||
        (rc = cmd_get_double(a, "--budget", &in->budget_usd, err)) ||
        (rc = cmd_get_double(a, "--min-marginal", &in->min_marginal, err)) ||
        (rc = cmd_get_int(a, "--min-gpus", &in->min_gpus, err)) ||
        (rc = cmd_get_int(a, "--max-gpus", &in->max_gpus, err)))
        return rc;
    if (cmd_has(a, "--deadline") && !(in->deadline_s > 0))
        return err_setf(err, ERR_INPUT, NULL, "--deadline", "must be a positive duration");
    if (cmd_has(a, "--budget") && !(in->budget_usd > 0))
        return err_setf(err, ERR_INPUT, NULL, "--budget", "must be a positive amount");
    if (single)
        in->min_gpus = in->max_gpus = single;
    if ((rc = plan_price(a, p, err)))
        return rc;
    /* reliability template: the flags over the per-rung defaults */
    int trials = in->rel.trials, spares = in->rel.spares;
    /* a provider's quote says what kind of site it is: its failure rates */
    if (!cmd_has(a, "--price") && cmd_has(a, "--provider") && !cmd_has(a, "--environment") &&
        (rc = cmd_failure_set(a, &p->base, p->price.environment, &p->failures, &p->pick, err)))
        return rc;
    if ((rc = cmd_rel_config(a, &p->base, &p->failures, p->pick.choice.environment, &in->rel,
                             err)) ||
        (rc = cmd_checkpoint_bytes(a, &p->model, &in->ckpt_bytes, err)))
        return rc;
    if (!cmd_has(a, "--spares"))
        in->rel.spares = spares;
    if (!cmd_has(a, "--trials"))
        in->rel.trials = trials;
    if ((v = cmd_get(a, "--storage-bw")))
        in->storage_bps = in->rel.storage_write_bps;
    in->progress = !cmd_machine_output(a);
    return ERR_OK;
}

/* ------------------------------------------------------------ output */

/* The layout in the one notation (models/layout_text.h); with_seq: the
 * search spanned sequence lengths, so say this one's. */
static void layout_short(const layout_t *l, bool with_seq, char *buf, size_t cap)
{
    layout_text_format(l, buf, cap);
    size_t n = strlen(buf);
    if (with_seq && n < cap)
        snprintf(buf + n, cap - n, " seq %d", l->seq_len);
}

/* Text wrapped to this many columns (the recommendation, legends). */
#define WRAP_COLS 100

/* Append text to the words a legend explains (cut when full: the legend
 * then misses nothing the tables below a few hundred layouts show). */
static void legend_add(char *legend, size_t cap, const char *text)
{
    size_t n = strlen(legend);
    if (n < cap)
        snprintf(legend + n, cap - n, " %s", text);
}

/* The best layout each framework runs at the recommended rung, fastest
 * first (the search's frameworks in their order when tied), so that a team
 * tied to one framework sees its layout and what the choice costs. */
static int print_frameworks(const rung_t *r, bool with_seq)
{
    static const char *head[] = {"framework", "its best layout", "tokens/s", "vs recommended"};
    table_t *t = table_create(4, head);
    if (!t)
        return ERR_RUNTIME;
    table_align_right(t, 2);
    table_align_right(t, 3);
    bool shown[PLAN_MAX_FRAMEWORKS] = {false};
    char legend[2048] = "";
    int best = plan_fw_index(r->frameworks, r->n_frameworks, r->framework, r->layout.precision);
    for (int k = 0; k < r->n_frameworks; k++) {
        /* the recommended first, then the fastest not shown; those that
         * fit nothing last */
        int pick = -1;
        for (int i = 0; i < r->n_frameworks; i++) {
            const plan_fw_best_t *f = &r->frameworks[i];
            if (shown[i])
                continue;
            if (i == best) {
                pick = i;
                break;
            }
            if (pick < 0 || (f->found && (!r->frameworks[pick].found ||
                                          f->tokens_per_s > r->frameworks[pick].tokens_per_s)))
                pick = i;
        }
        shown[pick] = true;
        const plan_fw_best_t *f = &r->frameworks[pick];
        char name[FW_NAME_MAX + 112];
        plan_fw_label(f, r->frameworks, r->n_frameworks, name, sizeof name);
        if (!f->found) {
            table_add_rowf(t, "%s\tnothing fits\t\t", name);
            continue;
        }
        char lay[256], tps[32], gap[32] = "recommended";
        layout_short(&f->layout, with_seq, lay, sizeof lay);
        legend_add(legend, sizeof legend, lay);
        if (pick != best)
            snprintf(gap, sizeof gap, "%.1f%% slower", 100 * (1 - f->tokens_per_s / r->tokens_per_s));
        table_add_rowf(t, "%s\t%s\t%s\t%s", name, lay,
                       units_fmt_count(f->tokens_per_s, tps, sizeof tps), gap);
    }
    printf("\n  each framework's best at %d GPUs:\n", r->gpus);
    table_print(t, stdout, 4, 0);
    table_destroy(t);
    textwrap_legend(stdout, legend, 4, WRAP_COLS);
    return ERR_OK;
}

/* Why a rung scales above 100%: the smaller rung it is measured against
 * ran slower per GPU, which the user can check in that rung's row (its
 * recompute, or more model parallelism, needed to fit). The first such
 * rung is named. */
static void explain_superlinear(const ladder_t *l)
{
    for (int i = 0; i < l->n; i++) {
        const rung_t *r = &l->rung[i];
        if (!r->feasible || r->scaling_efficiency <= 1.005)
            continue;
        const rung_t *b = NULL;
        for (int k = 0; k < i; k++)
            if (l->rung[k].feasible && l->rung[k].gpus == r->scaling_base)
                b = &l->rung[k];
        if (!b)
            return;
        bool rc = b->layout.recompute != RECOMPUTE_NONE &&
                  (r->layout.recompute == RECOMPUTE_NONE ||
                   b->layout.recompute_layers > r->layout.recompute_layers);
        printf("; %d GPUs reads %.0f%%: the %d-GPU rung %s", r->gpus,
               100 * r->scaling_efficiency, b->gpus,
               rc ? "fits only by recomputing activations, which the larger one needs less"
                  : "fits only with a layout slower per GPU");
        return;
    }
}

/* The configuration format --emit writes for a framework preset, or NULL. */
static const char *emit_name(const char *framework)
{
    for (int k = 0; k < LAUNCH_COUNT; k++)
        if (launch_accepts((launch_kind_t)k, framework))
            return launch_name((launch_kind_t)k);
    return NULL;
}

/* Before each doubling: the expected step time and throughput of each rung
 * up to the recommended one, as a small table. */
static void print_measure_table(const ladder_t *l)
{
    static const char *head[] = {"GPUs", "step", "tokens/s"};
    table_t *t = table_create(3, head);
    if (!t)
        return;
    for (int k = 0; k < 3; k++)
        table_align_right(t, k);
    for (int i = l->first_feasible; i >= 0 && i <= l->best; i++) {
        const rung_t *x = &l->rung[i];
        char step[32], tps[32];
        if (x->feasible)
            table_add_rowf(t, "%d\t%s\t%s", x->gpus,
                           units_fmt_duration(x->step.step_time_s, step, sizeof step),
                           units_fmt_count(x->tokens_per_s, tps, sizeof tps));
    }
    printf("  measure before each doubling (more than %.0f%% slower means something is wrong):\n",
           100 * LADDER_TOLERANCE);
    table_print(t, stdout, 13, 0);
    table_destroy(t);
}

/* The recommendation as a short block: what to reserve, the layout with
 * its framework's flags, what to expect at each rung, the first thing to
 * check. The same facts as the one-sentence "recommendation" of --json. */
static void print_recommendation(const plan_run_t *p)
{
    const ladder_t *l = &p->ladder;
    const char *nearest = strstr(p->recommendation, " The nearest: ");
    if (l->best < 0 || (nearest && strncmp(p->recommendation, "No plan meets", 13) != 0)) {
        textwrap_print(stdout, "", p->recommendation, 2, WRAP_COLS);
        return;
    }
    const rung_t *r = &l->rung[l->best];
    char a[32], b[32], c[32], d[32], lay[256], flags[1024];
    if (nearest) { /* what no plan meets, wrapped, then the nearest plan as a block */
        char broken[1024];
        snprintf(broken, sizeof broken, "%.*s", (int)(nearest - p->recommendation),
                 p->recommendation);
        textwrap_print(stdout, "", broken, 2, WRAP_COLS);
        printf("The nearest:\n");
    } else
        printf("Recommendation\n");
    printf("  reserve    %d x %s for %.1f days (P50; P90 %.1f days): %s, %s/day at %s/GPU-h\n",
           r->gpus, p->base.gpu.name, r->days_p50, r->days_p90,
           units_fmt_usd(r->cost_usd, a, sizeof a), units_fmt_usd(r->cost_per_day_usd, b, sizeof b),
           units_fmt_usd(r->usd_per_gpu_hour, c, sizeof c));
    char pick[96];
    plan_moe_pick_name(&r->moe, pick, sizeof pick);
    printf("  train      %s tokens under %s in %s: a step every %s, MFU %s\n",
           units_fmt_count(p->in.tokens, a, sizeof a), r->framework,
           layout_precision_name(r->layout.precision),
           units_fmt_duration(r->step.step_time_s, b, sizeof b),
           numfmt_pct(r->step.mfu, "of bf16 dense peak", d, sizeof d));
    printf("  layout     %s (%d micro-batch%s per replica per step)\n",
           layout_text_format(&r->layout, lay, sizeof lay), r->layout.grad_accum,
           r->layout.grad_accum == 1 ? "" : "es");
    if (*pick) /* what the search chose for the MoE layers */
        printf("  moe        %s (the token dispatcher and CUDA graph scopes searched)\n", pick);
    const char *emit = emit_name(r->framework);
    if (layout_text_flags(&r->layout, r->framework, flags, sizeof flags)[0])
        textwrap_print(stdout, "  flags      ", flags, 13, WRAP_COLS);
    if (emit)
        printf("             (the whole configuration: add --emit %s)\n", emit);
    print_measure_table(l);
    const char *first = strstr(p->recommendation, "first look at ");
    if (first)
        textwrap_print(stdout, "  check first  ", first + strlen("first look at "), 15, WRAP_COLS);
}

/* The best rung rerun with one change each, against the plan. */
static int print_whatif(const ladder_t *l, const whatif_t *w, int nw)
{
    static const char *wh[] = {"what if", "GPUs", "layout", "days P50", "cost", "MFU", "vs plan"};
    table_t *x = table_create(7, wh);
    if (!x)
        return ERR_RUNTIME;
    for (int k = 3; k < 7; k++)
        table_align_right(x, k);
    char legend[2048] = "MFU P50", a[32], b[32];
    const rung_t *best = &l->rung[l->best];
    for (int i = 0; i < nw; i++) {
        if (!w[i].ok) {
            table_add_rowf(x, "%s\t%d\t%s\t\t\t\t", w[i].change, w[i].gpus, w[i].why_not);
            continue;
        }
        char lay[256];
        layout_text_format(&w[i].best_layout, lay, sizeof lay);
        legend_add(legend, sizeof legend, lay);
        /* signed like the days: "+$855" costs more than the plan */
        table_add_rowf(x, "%s\t%d\t%s\t%.1f\t%s\t%.1f%%\t%+.1f days, %s%s", w[i].change,
                       w[i].gpus, lay, w[i].days_p50, units_fmt_usd(w[i].cost_usd, a, sizeof a),
                       100 * w[i].mfu, w[i].days_p50 - best->days_p50,
                       w[i].cost_usd - best->cost_usd >= 0 ? "+" : "",
                       units_fmt_usd(w[i].cost_usd - best->cost_usd, b, sizeof b));
    }
    printf("\n");
    table_print(x, stdout, 2, 0);
    table_destroy(x);
    textwrap_legend(stdout, legend, 2, WRAP_COLS);
    return ERR_OK;
}

/* What the plan is for and what it assumed, before the ladder. */
static void print_header(const plan_run_t *p, bool with_seq)
{
    const ladder_input_t *in = &p->in;
    char a[32], b[32], c[32];
    char batch[96];
    if (with_seq && in->space.batch_tokens_min > 0)
        snprintf(batch, sizeof batch, "global batch %s..%s tokens in sequences of %d..%d",
                 units_fmt_count(in->space.batch_tokens_min, b, sizeof b),
                 units_fmt_count(in->space.batch_tokens_max, c, sizeof c), in->space.seq_len,
                 in->space.seq_len_max);
    else if (with_seq)
        snprintf(batch, sizeof batch, "global batch %d..%d x %d..%d tokens",
                 in->space.global_batch_min, in->space.global_batch_max, in->space.seq_len,
                 in->space.seq_len_max);
    else
        snprintf(batch, sizeof batch, "global batch %d..%d x %d tokens", in->space.global_batch_min,
                 in->space.global_batch_max, in->space.seq_len);
    printf("Plan: %s on %s tokens, %s at $%.2f/GPU-h (%s%s), %s\n", p->model.display,
           units_fmt_count(in->tokens, a, sizeof a), p->base.gpu.name, in->usd_per_gpu_hour,
           p->price.provider,
           in->price_gpu[0] ? "; each rung at its own size's quote, column $/GPU-h" : "", batch);
    if (p->tokens_assumed)
        printf("  tokens: no --tokens given; 20 per parameter assumed (Chinchilla, Hoffmann et al. "
               "2022)\n");
    if (p->precision_assumed)
        printf("  precision: bf16 (no --precision given; --precision bf16,fp8 also searches each "
               "framework's fp8 recipe)\n");
    cmd_print_notes(stdout, &p->notes);
    printf("  failures '%s': %s; storage '%s', restarts '%s'; each rung checkpoints at its best "
           "interval; Monte Carlo until P50/P90 are within %.2g%%\n",
           p->failures.name, p->pick.set_given ? "given" : p->pick.choice.why,
           in->storage_bps > 0 ? "given (--storage-bw)" : in->rel.storage.name,
           in->rel.restart_overhead_s >= 0 ? "given" : in->rel.restart.name,
           100 * in->rel.tolerance);
    if (in->rel.cluster_age_s >= 0)
        printf("  cluster %.3g days old at the start (--cluster-age): failure rates x%.2f, "
               "falling to the mature rate over weeks (burn-in, failures.json burn_in)\n",
               in->rel.cluster_age_s / 86400,
               failure_burnin_multiple(&in->rel.burnin, in->rel.cluster_age_s));
    else
        printf("  cluster taken as mature: no burn-in (--cluster-age D for one in its first "
               "weeks)\n");
}

static int print_text(const plan_run_t *p, const whatif_t *w, int nw)
{
    const ladder_t *l = &p->ladder;
    const ladder_input_t *in = &p->in;
    char a[32], b[32], c[32];
    bool with_seq = in->space.seq_len_max > in->space.seq_len;
    print_header(p, with_seq);
    static const char *hdr[] = {"GPUs", "layout", "framework", "step", "tokens/s", "MFU",
                                "scaling", "main loss", "days P50", "P90", "interrupts",
                                "ckpt every", "GPU-hours", "$/GPU-h", "cost", "cost/day"};
    table_t *t = table_create(16, hdr);
    if (!t)
        return ERR_RUNTIME;
    char legend[4096] = "MFU P50 P90";
    for (int k = 3; k < 16; k++)
        if (k != 7)
            table_align_right(t, k);
    for (int i = 0; i < l->n; i++) {
        const rung_t *r = &l->rung[i];
        char mark[8];
        snprintf(mark, sizeof mark, "%s%s", i == l->best ? "*" : "", r->stops_paying ? "!" : "");
        if (!r->feasible) {
            table_add_rowf(t, "%d%s\t%s\t\t\t\t\t\t\t\t\t\t\t\t\t\t", r->gpus, mark, r->why_not);
            continue;
        }
        char lay[256], step[32], tps[32], gh[32], cost[32], day[32], every[32];
        layout_short(&r->layout, with_seq, lay, sizeof lay);
        legend_add(legend, sizeof legend, lay);
        table_add_rowf(t, "%d%s\t%s\t%s\t%s\t%s\t%.1f%%\t%.0f%%\t%s\t%.1f\t%.1f\t%.1f\t%s\t%s\t%.2f\t%s\t%s",
                       r->gpus, mark, lay, r->framework,
                       units_fmt_duration(r->step.step_time_s, step, sizeof step),
                       units_fmt_count(r->tokens_per_s, tps, sizeof tps), 100 * r->step.mfu,
                       100 * r->scaling_efficiency, r->main_loss, r->days_p50, r->days_p90,
                       r->interruptions,
                       units_fmt_duration(r->checkpoint_interval_s, every, sizeof every),
                       units_fmt_count(r->gpu_hours, gh, sizeof gh),
                       r->usd_per_gpu_hour, units_fmt_usd(r->cost_usd, cost, sizeof cost),
                       units_fmt_usd(r->cost_per_day_usd, day, sizeof day));
    }
    printf("\n");
    table_print(t, stdout, 2, 0);
    table_destroy(t);
    /* the '!' legend only where a rung carries the mark */
    printf("  * recommended");
    if (l->stops_paying_at >= 0)
        printf("   ! a doubling here adds less than %.0f%% of linear speed", 100 * in->min_marginal);
    printf("\n  scaling: per-GPU throughput against the best per-GPU throughput at a smaller rung");
    explain_superlinear(l);
    printf("\n");
    textwrap_legend(stdout, legend, 2, WRAP_COLS);
    printf("\n");
    print_recommendation(p);
    if (l->best >= 0 && l->rung[l->best].n_frameworks > 1 &&
        print_frameworks(&l->rung[l->best], with_seq) != ERR_OK)
        return ERR_RUNTIME;
    if (nw > 0 && print_whatif(l, w, nw) != ERR_OK)
        return ERR_RUNTIME;
    long pruned_mem = 0, pruned_bound = 0, invalid = 0, too_large = 0;
    for (int i = 0; i < l->n; i++) {
        pruned_mem += l->rung[i].pruned[PRUNE_MEMORY];
        pruned_bound += l->rung[i].pruned[PRUNE_BOUND];
        invalid += l->rung[i].pruned[PRUNE_INVALID];
        too_large += l->rung[i].pruned[PRUNE_SIZE];
    }
    char d[32], e[32], f[32], g[32], large[64] = "";
    if (too_large > 0)
        snprintf(large, sizeof large, ", %s too large to simulate",
                 units_fmt_count((double)too_large, g, sizeof g));
    printf("\n  searched %s layouts over %d rungs in %.2f s (%s layouts/s): %s invalid, %s do not "
           "fit in memory%s, %s provably slower, %s simulated\n",
           units_fmt_count((double)l->layouts, a, sizeof a), l->n, l->elapsed_s,
           units_fmt_count(l->layouts / (l->elapsed_s > 0 ? l->elapsed_s : 1), b, sizeof b),
           units_fmt_count((double)invalid, c, sizeof c),
           units_fmt_count((double)pruned_mem, d, sizeof d), large,
           units_fmt_count((double)pruned_bound, e, sizeof e),
           units_fmt_count((double)l->simulated, f, sizeof f));
    return ERR_OK;
}

/* The dispatcher and CUDA graph scopes the search chose (nothing where it
 * searched none: a dense model's output is as before). */
static bool pick_json(cJSON *o, const plan_moe_pick_t *p)
{
    if (!p->searched)
        return true;
    char scopes[96] = "none";
    if (p->graph_scopes)
        host_graph_scopes_name(p->graph_scopes, scopes, sizeof scopes);
    return cJSON_AddStringToObject(o, "moe_dispatcher", moe_dispatch_name(p->dispatcher)) &&
           cJSON_AddStringToObject(o, "cuda_graph_scope", scopes) &&
           cJSON_AddBoolToObject(o, "moe_dispatcher_searched", p->dispatchers_searched) &&
           cJSON_AddBoolToObject(o, "cuda_graph_scope_searched", p->scopes_searched);
}

static cJSON *rung_json(const rung_t *r)
{
    cJSON *o = cJSON_CreateObject(), *bd = NULL;
    bool ok = o && json_add_number(o, "gpus", r->gpus) &&
              cJSON_AddBoolToObject(o, "feasible", r->feasible);
    if (ok && !r->feasible)
        ok = cJSON_AddStringToObject(o, "why_not", r->why_not) != NULL;
    if (ok && r->feasible) {
        ok = cJSON_AddItemToObject(o, "layout", layout_text_json(&r->layout)) &&
             cJSON_AddStringToObject(o, "framework", r->framework) && pick_json(o, &r->moe) &&
             json_add_number(o, "step_time_s", r->step.step_time_s) &&
             json_add_number(o, "tokens_per_s", r->tokens_per_s) &&
             json_add_number(o, "mfu", r->step.mfu) &&
             json_add_number(o, "scaling_efficiency", r->scaling_efficiency) &&
             json_add_number(o, "scaling_baseline_gpus", r->scaling_base) &&
             json_add_number(o, "marginal_speedup", r->marginal) &&
             cJSON_AddBoolToObject(o, "stops_paying", r->stops_paying) &&
             cJSON_AddStringToObject(o, "main_loss", r->main_loss) &&
             json_add_number(o, "main_loss_share", r->main_loss_share) &&
             json_add_number(o, "days_p10", r->days_p10) &&
             json_add_number(o, "days_p50", r->days_p50) &&
             json_add_number(o, "days_p90", r->days_p90) &&
             json_add_number(o, "ideal_days", r->ideal_days) &&
             json_add_number(o, "goodput", r->goodput) &&
             json_add_number(o, "interruptions_mean", r->interruptions) &&
             json_add_number(o, "gpu_hours", r->gpu_hours) &&
             json_add_number(o, "cost_usd", r->cost_usd) &&
             json_add_number(o, "usd_per_gpu_hour", r->usd_per_gpu_hour) &&
             json_add_number(o, "checkpoint_interval_s", r->checkpoint_interval_s) &&
             cJSON_AddBoolToObject(o, "checkpoint_interval_best", r->interval_best) &&
             cJSON_AddStringToObject(o, "price_provider", r->price_provider) &&
             json_add_number(o, "cost_per_day_usd", r->cost_per_day_usd) &&
             cJSON_AddItemToObject(o, "memory_gib",
                                   report_memory_json(&r->step.memory, r->step.capacity_gib)) &&
             (bd = cJSON_AddObjectToObject(o, "breakdown_s"));
        for (int i = 0; ok && i < BD_COUNT; i++)
            ok = json_add_number(bd, sim_bd_name((sim_bd_t)i), r->step.breakdown_s[i]);
    }
    ok = ok && json_add_number(o, "layouts_searched", (double)r->candidates) &&
         json_add_number(o, "layouts_simulated", (double)r->simulated);
    if (ok && r->feasible) {
        cJSON *alts = cJSON_AddArrayToObject(o, "alternatives");
        ok = alts != NULL;
        for (int i = 0; ok && i < r->n_alt; i++) {
            const rung_alt_t *x = &r->alt[i];
            cJSON *e = cJSON_CreateObject();
            ok = e && cJSON_AddItemToArray(alts, e) &&
                 cJSON_AddItemToObject(e, "layout", layout_text_json(&x->layout)) &&
                 cJSON_AddStringToObject(e, "framework", x->framework) &&
                 json_add_number(e, "step_time_s", x->step_time_s) &&
                 json_add_number(e, "days_p10", x->days_p10) &&
                 json_add_number(e, "days_p50", x->days_p50) &&
                 json_add_number(e, "days_p90", x->days_p90) &&
                 json_add_number(e, "cost_usd", x->cost_usd);
        }
    }
    if (ok && r->feasible && r->n_frameworks > 1) {
        cJSON *fws = cJSON_AddArrayToObject(o, "frameworks");
        ok = fws != NULL;
        for (int i = 0; ok && i < r->n_frameworks; i++) {
            const plan_fw_best_t *f = &r->frameworks[i];
            cJSON *e = cJSON_CreateObject();
            ok = e && cJSON_AddItemToArray(fws, e) && cJSON_AddStringToObject(e, "name", f->name) &&
                 cJSON_AddStringToObject(e, "precision", layout_precision_name(f->precision)) &&
                 cJSON_AddBoolToObject(e, "fits", f->found) &&
                 json_add_number(e, "layouts_searched", (double)f->candidates) &&
                 (!f->found || (json_add_number(e, "tokens_per_s", f->tokens_per_s) &&
                                pick_json(e, &f->moe) &&
                                cJSON_AddItemToObject(e, "layout", layout_text_json(&f->layout))));
        }
    }
    if (!ok) {
        cJSON_Delete(o);
        return NULL;
    }
    return o;
}

/* The best rung's checkpoint-interval sweep and step timeline. Its
 * checkpoint_interval_s is the rung's own (the interval simulated); the
 * detail's configured one (0 for "best") would give the key twice. */
static bool add_detail(cJSON *b, const rung_detail_t *d)
{
    return json_add_number(b, "young_daly_interval_s", d->young_daly_interval_s) &&
           json_add_number(b, "optimal_interval_s", d->optimal_interval_s) &&
           cJSON_AddItemToObject(b, "interval_sweep",
                                 report_sweep_json(d->interval_s, d->goodput, d->n_sweep)) &&
           cJSON_AddItemToObject(b, "timeline", report_timeline_json(d->timeline, d->n_events));
}

static cJSON *plan_json(const plan_run_t *p, const whatif_t *w, int nw, const rung_detail_t *detail)
{
    const ladder_t *l = &p->ladder;
    cJSON *o = cJSON_CreateObject(), *arr = NULL;
    bool ok = o && cJSON_AddStringToObject(o, "model", p->model.name) &&
              cJSON_AddStringToObject(o, "gpu", p->base.gpu.name) &&
              json_add_number(o, "tokens", p->in.tokens) &&
              cJSON_AddBoolToObject(o, "tokens_assumed", p->tokens_assumed) &&
              cJSON_AddBoolToObject(o, "precision_assumed", p->precision_assumed) &&
              json_add_number(o, "price_usd_per_gpu_hour", p->in.usd_per_gpu_hour) &&
              json_add_number(o, "global_batch_min", p->in.space.global_batch_min) &&
              json_add_number(o, "global_batch_max", p->in.space.global_batch_max) &&
              json_add_number(o, "seq_len", p->in.space.seq_len) &&
              json_add_number(o, "seq_len_max", p->in.space.seq_len_max > p->in.space.seq_len
                                                    ? p->in.space.seq_len_max
                                                    : p->in.space.seq_len) &&
              (arr = cJSON_AddArrayToObject(o, "ladder"));
    for (int i = 0; ok && i < l->n; i++) {
        cJSON *r = rung_json(&l->rung[i]);
        ok = r && cJSON_AddItemToArray(arr, r);
    }
    if (ok && l->best >= 0) {
        cJSON *b = rung_json(&l->rung[l->best]);
        ok = b && cJSON_AddItemToObject(o, "best", b) && (!detail || add_detail(b, detail));
    } else if (ok) {
        ok = cJSON_AddNullToObject(o, "best") != NULL;
    }
    ok = ok && plan_sizing_json(&p->sizing, o) &&
         cJSON_AddBoolToObject(o, "meets_constraints", l->meets_constraints) &&
         cJSON_AddStringToObject(o, "recommendation", p->recommendation) &&
         json_add_number(o, "layouts_evaluated", (double)l->layouts) &&
         json_add_number(o, "layouts_simulated", (double)l->simulated) &&
         json_add_number(o, "elapsed_s", l->elapsed_s);
    cJSON *d = ok ? cJSON_AddObjectToObject(o, "defaults") : NULL;
    const rel_config_t *rc = &p->in.rel;
    ok = ok && d && cJSON_AddStringToObject(d, "environment", p->pick.choice.environment) &&
         cJSON_AddStringToObject(d, "failure_rates", p->failures.name) &&
         cJSON_AddStringToObject(d, "failure_rates_chosen",
                                 p->pick.set_given ? "given" : p->pick.choice.why) &&
         cJSON_AddStringToObject(d, "storage",
                                 p->in.storage_bps > 0 ? "given" : rc->storage.name) &&
         cJSON_AddStringToObject(d, "restart",
                                 rc->restart_overhead_s >= 0 ? "given" : rc->restart.name) &&
         json_add_number(d, "checkpoint_interval_s", rc->ckpt_interval_s) &&
         (rc->cluster_age_s < 0 || json_add_number(d, "cluster_age_s", rc->cluster_age_s)) &&
         cJSON_AddBoolToObject(d, "checkpoint_interval_best", !(rc->ckpt_interval_s > 0)) &&
         json_add_number(d, "trials", rc->trials) &&
         json_add_number(d, "tolerance", rc->tolerance) &&
         cJSON_AddStringToObject(d, "price_provider", p->price.provider) &&
         cJSON_AddStringToObject(d, "price_kind", p->price.kind);
    if (ok && l->stops_paying_at >= 0)
        ok = json_add_number(o, "stops_paying_at_gpus", l->rung[l->stops_paying_at].gpus);
    if (ok && p->in.deadline_s > 0)
        ok = json_add_number(o, "deadline_days", p->in.deadline_s / 86400);
    if (ok && p->in.budget_usd > 0)
        ok = json_add_number(o, "budget_usd", p->in.budget_usd);
    if (ok && nw > 0) {
        cJSON *wa = cJSON_AddArrayToObject(o, "what_if");
        ok = wa != NULL;
        for (int i = 0; ok && i < nw; i++) {
            cJSON *e = cJSON_CreateObject();
            ok = e && cJSON_AddItemToArray(wa, e) &&
                 cJSON_AddStringToObject(e, "change", w[i].change) &&
                 cJSON_AddBoolToObject(e, "feasible", w[i].ok) && json_add_number(e, "gpus", w[i].gpus) &&
                 json_add_number(e, "days_p50", w[i].days_p50) &&
                 json_add_number(e, "cost_usd", w[i].cost_usd) && json_add_number(e, "mfu", w[i].mfu);
            if (ok && w[i].ok) {
                char lay[256];
                ok = cJSON_AddStringToObject(e, "layout_text",
                                             layout_text_format(&w[i].best_layout, lay, sizeof lay));
            }
        }
    }
    if (!ok) {
        cJSON_Delete(o);
        return NULL;
    }
    return o;
}

/* The recommended layout as the --emit format, to --out or after the plan. */
static int emit_launch(const cmd_args_t *a, const plan_run_t *p, err_t *err)
{
    launch_kind_t k;
    int rc = launch_parse(cmd_get(a, "--emit"), &k, err);
    if (rc)
        return rc;
    const rung_t *r = &p->ladder.rung[p->ladder.best];
    sim_options_t o;
    if ((rc = plan_options(&p->in.space, r->framework, p->base.gpu.name, p->model.name,
                           r->layout.precision, &r->moe, &o, err)))
        return rc;
    const char *path = cmd_get(a, "--out");
    /* --out is written beside itself and renamed into place: a launcher
     * reading it never sees half a configuration, a failure keeps the old */
    fileio_out_t out = {0};
    if (path && fileio_out_open(&out, path, err)) {
        if (err)
            err->code = ERR_INPUT; /* an --out the user cannot write */
        return ERR_INPUT;
    }
    FILE *f = path ? out.f : stdout;
    if (!path && !cmd_machine_output(a))
        printf("\nLaunch configuration (%s, %s):\n", launch_name(k), r->framework);
    rc = launch_write_for(k, r->framework, &p->model, &r->layout, &o, f, err);
    if (path && rc)
        fileio_out_abort(&out);
    else if (path)
        rc = fileio_out_commit(&out, err);
    if (!rc && path && !cmd_machine_output(a))
        printf("\nwrote %s: the recommended layout as a %s configuration\n", path,
               launch_name(k));
    if (!rc && k == LAUNCH_DEEPSPEED) {
        /* the file is JSON alone; its launcher arguments are said here */
        char args[400];
        launch_deepspeed_args(&r->layout, args, sizeof args);
        FILE *to = cmd_machine_output(a) ? stderr : stdout;
        fprintf(to, "%sMegatron-DeepSpeed launcher arguments for %s:\n%s%s\n",
                path ? "" : "# ", p->model.display, path ? "  " : "# ", args);
    }
    return rc;
}

static int run(const cmd_args_t *a, err_t *err)
{
    int rc = ERR_OK;
    plan_run_t *p = calloc(1, sizeof *p);
    whatif_t w[WHATIF_MAX];
    int nw = 0;
    rung_detail_t detail = {0};
    if (!p)
        return err_set(err, ERR_RUNTIME, "out of memory");
    if ((rc = setup(a, p, err)) ||
        (cmd_sites_wanted(a) && (rc = cmd_sites_check(a, p->in.space.framework, NULL, err))))
        goto out;
    if (cmd_has(a, "--elastic")) {
        rc = plan_elastic_run(a, &p->in, err);
        goto out;
    }
    if ((rc = plan_ladder(&p->in, &p->ladder, err)))
        goto out;
    plan_recommend(&p->in, &p->ladder, p->recommendation, sizeof p->recommendation);
    if ((rc = plan_sizing_compute(&p->sizing, &p->model, p->in.tokens, &p->ladder, &p->base.gpu,
                                  err)))
        goto out;
    if ((rc = whatif_list(&p->in, &p->ladder, cmd_get(a, "--what-if"), w, &nw, err)))
        goto out;
    if (cmd_wants_result(a)) {
        bool details = cmd_has(a, "--details") || cmd_get(a, "--report");
        if (details && p->ladder.best >= 0 &&
            (rc = ladder_rung_detail(&p->in, &p->ladder.rung[p->ladder.best], &detail, err)))
            goto out;
        cJSON *j = plan_json(p, w, nw, details && p->ladder.best >= 0 ? &detail : NULL);
        if (!j) {
            rc = err_set(err, ERR_RUNTIME, "out of memory building JSON");
            goto out;
        }
        if (!cmd_machine_output(a) && print_text(p, w, nw))
            rc = err_set(err, ERR_RUNTIME, "cannot write to standard output");
        if (!rc && cmd_sites_wanted(a))
            rc = cmd_sites_plan(a, &p->in, &p->ladder, j, err);
        if (!rc && !cmd_machine_output(a))
            plan_sizing_print(&p->sizing);
        if (!rc && !cmd_machine_output(a))
            putchar('\n');
        if (!rc)
            rc = cmd_output_result(a, "scaleplan plan", j, "ladder", err);
        cJSON_Delete(j);
    } else if (print_text(p, w, nw)) {
        rc = err_set(err, ERR_RUNTIME, "cannot write to standard output");
    } else {
        plan_sizing_print(&p->sizing);
        if (cmd_sites_wanted(a))
            rc = cmd_sites_plan(a, &p->in, &p->ladder, NULL, err);
    }
    if (!rc && cmd_get(a, "--emit") && p->ladder.best >= 0)
        rc = emit_launch(a, p, err);
    /* a plan was printed, but not one that meets what was asked */
    if (!rc && !p->ladder.meets_constraints)
        rc = p->ladder.best < 0
                 ? err_set(err, ERR_RUNTIME, "no GPU count from %d to %d can train %s (see the "
                           "recommendation)", p->in.min_gpus, p->in.max_gpus, p->model.name)
                 : err_set(err, ERR_RUNTIME, "no plan meets %s%s%s (see the recommendation)",
                           p->in.deadline_s > 0 ? "--deadline" : "",
                           p->in.deadline_s > 0 && p->in.budget_usd > 0 ? " and " : "",
                           p->in.budget_usd > 0 ? "--budget" : "");
out:
    notes_free(&p->notes);
    ladder_rung_detail_free(&detail);
    prof_free(&p->profile);
    free(p);
    return rc;
}

static const cmd_group_t *const groups[] = {&CMD_MODEL_OPTS,
                                         &CMD_CLUSTER_OPTS,
                                         &CMD_SIM_OPTS,
                                         &CMD_RUN_OPTS,
                                         &own_group,
                                         &space_group,
                                         &CMD_REL_OPTS,
                                         &CMD_FINETUNE_OPTS,
                                         &CMD_SIZING_OPTS,
                                         &CMD_ELASTIC_OPTS,
                                         &CMD_SITES_OPTS,
                                         &CMD_OUTPUT_OPTS};

const cmd_command_t CMD_CMD_PLAN = {
    "plan",
    "choose GPU counts and layouts: the scale ladder and a recommendation",
    "scaleplan plan --model M [--tokens T] --gpu G [--min-gpus 8 --max-gpus 16384] "
                       "[--objective time|cost] [--deadline 30d] [--budget 500000] [--json]",
    "For each doubling of the GPU count, search the layouts the framework runs,\n"
                       "keep the fastest that fits, and simulate the whole run with failures and\n"
                       "checkpoints: step time, tokens/s, MFU, scaling efficiency, the main loss,\n"
                       "days P50/P90, interruptions, GPU-hours and cost per rung; then recommend\n"
                       "what to reserve and what to measure at each doubling. --grad-codec prices\n"
                       "a codec at every rung (used only where it reaches the same loss sooner);\n"
                       "--islands N --island-link picks synchronous DP or --diloco per rung.\n"
                       "\n"
                       "What is searched (scaleplan catalog frameworks shows what each runs):\n"
                       "  TP    every degree dividing the GPUs, the heads and the KV heads, up to\n"
                       "        twice a node's GPUs;\n"
                       "  CP    every degree the sequence splits into, at least 1024 tokens a rank;\n"
                       "  PP    every degree dividing the rest; layers even or, where the framework\n"
                       "        allows, lighter first and last stages; interleaved with every number\n"
                       "        of virtual stages that divides the layers (plus embedding and loss,\n"
                       "        down to one layer a chunk with the embedding and the loss alone);\n"
                       "  sequence length the one given, or with --seq-len LO..HI both ends and\n"
                       "        the powers of two between;\n"
                       "  micro-batch 1..16; global batch the largest in range that divides;\n"
                       "  precision bf16, or each one --precision lists that the framework\n"
                       "        trains in (fp8: its own recipe);\n"
                       "  ZeRO stages the framework runs (1 = distributed optimizer); recompute\n"
                       "        modes, heavier ones only where lighter ones do not fit (full\n"
                       "        recompute first of the fewest layers per chunk that fit, where the\n"
                       "        framework runs Megatron's block recompute; where it runs\n"
                       "        Megatron-Core's recompute modules, selective recompute of more\n"
                       "        modules, which competes with that block recompute: a dense\n"
                       "        model's MLP; an MoE or MLA model's norms, expert activations,\n"
                       "        MLA up-projections and shared experts, then whole MoE blocks);\n"
                       "        schedules;\n"
                       "        SP with TP; for mixture-of-experts models, EP over every degree\n"
                       "        dividing the experts (experts whole) with expert TP 1 and the\n"
                       "        layout's TP, where the framework has it. Every candidate is\n"
                       "        checked for memory.\n"
                       "Without --tokens, 20 tokens per parameter are assumed (and said).\n"
                       "Without --framework every plannable framework is searched and the\n"
                       "recommendation says which wins and by how much. Scaling efficiency is\n"
                       "per-GPU throughput against the best per-GPU throughput at a smaller rung.\n"
                       "Layouts are written one way (TP4 CP2 PP2 VPP41 DP256 mb1 gb512 SP\n"
                       "dist-opt rc=full:54; a legend under each table says what each part means;\n"
                       "--json has it as layout.layout_text) and MFU is against the bf16 dense peak.\n"
                       "The recommendation is a block: what to reserve, the layout with its\n"
                       "framework's flags, what to measure at each rung, the first thing to check.\n"
                       "With --finetune lora|qlora every candidate has a frozen base (no base\n"
                       "gradients or optimizer state; adapters reduced and updated), e.g.\n"
                       "  scaleplan plan --model llama3-70b --gpu h100-sxm --finetune qlora \\\n"
                       "      --tokens 100M --max-gpus 64",
    groups,
    sizeof groups / sizeof groups[0],
    run,
    0,
};
