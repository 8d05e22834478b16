/* scaleplan sim: simulate one training step of a model on a cluster with a
 * parallel layout; print the step time, its breakdown and per-GPU memory. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands/args.h"
#include "commands/commands.h"
#include "commands/output.h"
#include "commands/sites.h"
#include "common/json.h"
#include "common/units.h"
#include "reports/jsonout.h"
#include "models/layout_text.h"
#include "reports/textwrap.h"
#include "reports/table.h"
#include "plan/plan.h"
#include "sim/step.h"

static const cmd_opt_t own_opts[] = {
    {"--trace", NULL, "FILE", "write the simulated timeline as Chrome/Perfetto trace JSON",
     CMD_WORD},
    {"--layer-events", NULL, NULL, "one task per layer (finer trace; same step time)", CMD_WORD},
    {"--ops", NULL, NULL, "also print the per-operation cost of one layer", CMD_WORD},
    {"--timeline", NULL, NULL, "add the step's tasks (stage, stream, kind, start, end) to --json",
     CMD_WORD},
    {"--allow-oom", NULL, NULL, "exit 0 even when the layout does not fit in GPU memory",
     CMD_WORD},
    {"--rank", NULL, NULL,
     "also search every layout the framework runs on these GPUs with the same batch, sequence "
     "and precision (as plan does): where this layout ranks among those that fit, and the best",
     CMD_WORD},
    CMD_REPORT_OPT,
};
static const cmd_group_t own_group = {"Sim command", own_opts,
                                      sizeof own_opts / sizeof own_opts[0]};

/* One line on why a layout does not fit and what would help. */
static void fit_advice(const scenario_t *s, const sim_result_t *r, char *buf, size_t cap)
{
    const layout_t *l = &s->layout;
    char hint[240] = "";
    if (r->memory.total_bytes / GIB <= r->capacity_gib && r->host_gib > r->host_capacity_gib) {
        snprintf(buf, cap,
                 "offload needs %.1f GiB of host memory per GPU but each GPU's share of a %s "
                 "node is %.1f GiB; offload less (or to nvme), or shard over more GPUs",
                 r->host_gib, s->cluster.name, r->host_capacity_gib);
        return;
    }
    /* With the state offloaded, what is left is mostly activations: full
     * recompute frees the most, their offload takes host memory. */
    bool act_bound = l->offload && r->memory.activations_bytes > 0.5 * r->memory.total_bytes;
    if (act_bound && l->recompute != RECOMPUTE_FULL)
        strncat(hint, " --recompute full,", sizeof hint - strlen(hint) - 1);
    if (act_bound && !(l->offload & LAYOUT_OFFLOAD_ACTIVATIONS))
        strncat(hint, " --offload ...,activations,", sizeof hint - strlen(hint) - 1);
    if (!act_bound && l->recompute != RECOMPUTE_FULL)
        strncat(hint, l->recompute == RECOMPUTE_NONE ? " --recompute selective," : " --recompute full,",
                sizeof hint - strlen(hint) - 1);
    if (l->tp > 1 && !l->sequence_parallel)
        strncat(hint, " --sequence-parallel,", sizeof hint - strlen(hint) - 1);
    if (!l->distributed_optimizer && l->zero == 0 && l->dp * l->cp > 1)
        strncat(hint, " --distributed-optimizer,", sizeof hint - strlen(hint) - 1);
    strncat(hint, " more --pp or --tp", sizeof hint - strlen(hint) - 1);
    snprintf(buf, cap, "needs %.1f GiB per GPU on stage %d but %s has %.1f GiB; try%s",
             r->memory.total_bytes / GIB, r->memory.stage, s->cluster.gpu.name, r->capacity_gib,
             hint);
}

static int print_text(const scenario_t *s, const sim_result_t *r, bool ops)
{
    char desc[320], a[32], b[32];
    layout_text_long(&s->layout, desc, sizeof desc);
    printf("%s on %d x %s (%s, %d per node, %d x %s)\n", s->model.display, s->layout.n_gpus,
           s->cluster.gpu.name, s->cluster.name, s->cluster.gpus_per_node,
           s->cluster.nics_per_node, s->cluster.inter.name);
    printf("  layout: %s\n", desc);
    char terms[400];
    snprintf(terms, sizeof terms, "%s MFU HFU", desc); /* and MFU, HFU printed below */
    textwrap_legend(stdout, terms, 2, 100);
    printf("  step time %s, %s tokens/s (%s per GPU)\n",
           units_fmt_duration(r->step_time_s, a, sizeof a),
           units_fmt_count(r->tokens_per_s, b, sizeof b),
           units_fmt_count(r->tokens_per_s / s->layout.n_gpus, desc, sizeof desc));
    printf("  %.1f model TFLOP/s per GPU (MFU %.1f%% of bf16 dense peak), %.1f hardware TFLOP/s "
           "(HFU %.1f%%, recomputed work counted)\n\n",
           r->model_tflops_per_gpu, 100 * r->mfu, r->hardware_tflops_per_gpu, 100 * r->hfu);
    static const char *hdr[] = {"step time", "seconds", "share"};
    table_t *t = table_create(3, hdr);
    if (!t)
        return ERR_RUNTIME;
    table_align_right(t, 1);
    table_align_right(t, 2);
    for (int i = 0; i < BD_COUNT; i++)
        table_add_rowf(t, "%s\t%.4f\t%.1f%%", sim_bd_name((sim_bd_t)i), r->breakdown_s[i],
                       100 * r->breakdown_s[i] / r->step_time_s);
    table_add_rowf(t, "total (stage %d)\t%.4f\t100.0%%", r->critical_stage, r->step_time_s);
    int rc = table_print(t, stdout, 2, 0);
    table_destroy(t);
    const model_memory_t *mm = &r->memory;
    printf("\n  memory per GPU (stage %d): weights %.1f, grads %.1f, optimizer %.1f, "
           "activations %.1f, buffers %.1f = %.1f GiB of %.1f: %s\n",
           mm->stage, mm->params_bytes / GIB, mm->grads_bytes / GIB, mm->optimizer_bytes / GIB,
           mm->activations_bytes / GIB, mm->buffers_bytes / GIB, mm->total_bytes / GIB,
           r->capacity_gib, r->fits ? "fits" : "DOES NOT FIT");
    if (s->layout.offload) {
        const offload_costs_t *o = &r->costs.offload;
        printf("  offload: %.1f GiB per GPU in host memory (of %.1f); per step %.2f s of "
               "transfers (%.4f s exposed) and %.2f s of CPU optimizer step\n",
               r->host_gib, r->host_capacity_gib, r->offload_transfer_s,
               r->breakdown_s[BD_OFFLOAD], o->step_cpu_s);
    }
    if (!r->fits) {
        char advice[400];
        fit_advice(s, r, advice, sizeof advice);
        printf("  %s\n", advice);
    }
    if (s->layout.n_gpus > s->cluster.gpus_per_node) {
        if (s->profile.net_gpu_gbs > 0)
            printf("  collectives across nodes: measured (the profile's %.1f GB/s per GPU from "
                   "calibrate)\n",
                   s->profile.net_gpu_gbs);
        else
            printf("  collectives across nodes: fabric model (%d x %s per node at %.2f of line "
                   "rate; scaleplan calibrate --from-nccl-tests measures yours)\n",
                   s->cluster.nics_per_node, s->cluster.inter.name,
                   strcmp(s->profile.net_fabric, s->cluster.inter.name) == 0 &&
                           s->profile.net_efficiency > 0
                       ? s->profile.net_efficiency
                       : s->cluster.inter.efficiency);
    }
    char assumed[1024];
    scenario_assumptions(s, assumed, sizeof assumed);
    if (assumed[0])
        printf("  assumed inputs (scaleplan catalog profiles lists every figure's source): %s\n",
               assumed);
    if (ops && rc == 0) {
        static const char *oh[] = {"one layer, one micro-batch", "forward ms", "backward ms"};
        table_t *o = table_create(3, oh);
        if (!o)
            return ERR_RUNTIME;
        table_align_right(o, 1);
        table_align_right(o, 2);
        for (int i = 0; i < r->costs.n_ops; i++)
            table_add_rowf(o, "%s\t%.4f\t%.4f", r->costs.ops[i].name, 1e3 * r->costs.ops[i].fwd_s,
                           1e3 * r->costs.ops[i].bwd_s);
        table_add_rowf(o, "tp comm (exposed)\t%.4f\t%.4f", 1e3 * r->costs.fwd.tp,
                       1e3 * r->costs.bwd.tp);
        table_add_rowf(o, "recompute\t\t%.4f", 1e3 * r->costs.bwd.recompute);
        table_add_rowf(o, "pipeline transfer\t%.4f\t%.4f", 1e3 * r->costs.p2p_s, 1e3 * r->costs.p2p_s);
        printf("\n");
        rc = table_print(o, stdout, 2, 0);
        table_destroy(o);
    }
    cmd_print_notes(stdout, &s->notes);
    return rc;
}

/* The sim result; with events, its timeline too. NULL on OOM. */
static cJSON *sim_json(const scenario_t *s, const sim_result_t *r, const sim_event_t *events,
                       int n_events)
{
    cJSON *o = cJSON_CreateObject(), *bd = NULL, *ops = NULL;
    bool ok = o && json_add_number(o, "step_time_s", r->step_time_s) &&
              json_add_number(o, "tokens_per_s", r->tokens_per_s) &&
              json_add_number(o, "model_tflops_per_gpu", r->model_tflops_per_gpu) &&
              json_add_number(o, "hardware_tflops_per_gpu", r->hardware_tflops_per_gpu) &&
              json_add_number(o, "mfu", r->mfu) && json_add_number(o, "hfu", r->hfu) &&
              (bd = cJSON_AddObjectToObject(o, "breakdown_s"));
    for (int i = 0; ok && i < BD_COUNT; i++)
        ok = json_add_number(bd, sim_bd_name((sim_bd_t)i), r->breakdown_s[i]);
    ok = ok && cJSON_AddItemToObject(o, "memory_gib", report_memory_json(&r->memory, r->capacity_gib)) &&
         cJSON_AddBoolToObject(o, "fits", r->fits) &&
         cJSON_AddItemToObject(o, "layout", layout_text_json(&s->layout)) &&
         cJSON_AddStringToObject(o, "model", s->model.name) &&
         cJSON_AddStringToObject(o, "gpu", s->cluster.gpu.name) &&
         cJSON_AddStringToObject(o, "cluster", s->cluster.name) &&
         json_add_number(o, "gpus", s->layout.n_gpus) &&
         json_add_number(o, "tokens_per_step", r->tokens_per_step) &&
         json_add_number(o, "critical_stage", r->critical_stage) &&
         json_add_number(o, "memory_stage", r->memory.stage) &&
         json_add_number(o, "bubble_fraction", r->bubble_fraction) &&
         json_add_number(o, "tasks", r->tasks) && json_add_number(o, "events", (double)r->events) &&
         cJSON_AddStringToObject(o, "profile", s->profile.origin) &&
         (ops = cJSON_AddArrayToObject(o, "layer_ops"));
    for (int i = 0; ok && i < r->costs.n_ops; i++) {
        cJSON *e = cJSON_CreateObject();
        ok = e && cJSON_AddItemToArray(ops, e) &&
             cJSON_AddStringToObject(e, "op", r->costs.ops[i].name) &&
             json_add_number(e, "fwd_s", r->costs.ops[i].fwd_s) &&
             json_add_number(e, "bwd_s", r->costs.ops[i].bwd_s);
    }
    if (ok && s->layout.offload) {
        cJSON *off = cJSON_AddObjectToObject(o, "offload");
        ok = off && json_add_number(off, "host_gib", r->host_gib) &&
             json_add_number(off, "host_capacity_gib", r->host_capacity_gib) &&
             json_add_number(off, "transfer_s", r->offload_transfer_s) &&
             json_add_number(off, "transfer_gb", r->offload_transfer_gb) &&
             json_add_number(off, "exposed_s", r->breakdown_s[BD_OFFLOAD]) &&
             json_add_number(off, "cpu_step_s", r->costs.offload.step_cpu_s);
    }
    if (ok && !r->fits) {
        char advice[400];
        fit_advice(s, r, advice, sizeof advice);
        ok = cJSON_AddStringToObject(o, "fit_reason", advice) != NULL;
    }
    char assumed[1024];
    scenario_assumptions(s, assumed, sizeof assumed);
    ok = ok && cJSON_AddStringToObject(o, "assumed_inputs", assumed) &&
         cJSON_AddStringToObject(o, "network_source",
                                 s->profile.net_gpu_gbs > 0 ? "measured" : "fabric model");
    if (ok && events)
        ok = cJSON_AddItemToObject(o, "timeline", report_timeline_json(events, n_events));
    if (ok)
        ok = cmd_add_notes_json(o, &s->notes);
    if (!ok) {
        cJSON_Delete(o);
        return NULL;
    }
    return o;
}

/* This layout among every layout its framework runs on the same GPUs,
 * batch, sequence length and precision (plan_search with it as the
 * reference): its rank among those that fit and the best of them. */
static int rank_layout(const scenario_t *s, plan_search_t *out, err_t *err)
{
    plan_space_t sp;
    plan_space_default(&sp);
    sp.framework = s->fw.name;
    sp.seq_len = s->layout.seq_len;
    sp.global_batch_min = sp.global_batch_max = s->layout.global_batch;
    sp.precision = s->layout.precision;
    sp.ft = s->layout.ft; /* ranked among layouts that fine-tune the same way */
    sp.adjust_options = plan_use_options; /* the switches this run was given */
    sp.adjust_ctx = &s->opt;
    sp.keep_moe_options = true; /* and its dispatcher and scopes */
    return plan_search(&s->model, &s->cluster, &s->profile, &sp, &s->layout, out, err);
}

static void print_rank(const scenario_t *s, const plan_search_t *ps)
{
    char best[320], a[32], b[32];
    layout_text_format(&ps->layout, best, sizeof best);
    printf("\n  rank among %s's layouts on %d GPUs (batch %d x %d, %s; %ld candidates):\n",
           s->fw.name, s->layout.n_gpus, s->layout.global_batch, s->layout.seq_len,
           layout_precision_name(s->layout.precision), ps->candidates);
    if (!ps->found) {
        printf("    none of them fits in %.0f GiB per GPU\n", s->cluster.gpu.memory_gib);
        return;
    }
    if (ps->rank_of_reference <= 0) {
        printf("    this layout is not ranked (%s); the best of %ld that fit takes %s: %s\n",
               ps->reference_fits ? "the framework does not run it"
                                  : "it does not fit in memory",
               ps->reference_of, units_fmt_duration(ps->result.step_time_s, a, sizeof a), best);
        return;
    }
    if (ps->rank_of_reference == 1) {
        printf("    the best of %ld that fit (%s a step as the search prices it)\n",
               ps->reference_of, units_fmt_duration(ps->reference_step_s, a, sizeof a));
        return;
    }
    printf("    %d of %ld that fit: %s a step as the search prices it; the best takes %s "
           "(%.2fx the tokens/s): %s\n",
           ps->rank_of_reference, ps->reference_of,
           units_fmt_duration(ps->reference_step_s, a, sizeof a),
           units_fmt_duration(ps->result.step_time_s, b, sizeof b),
           ps->reference_step_s / ps->result.step_time_s, best);
    textwrap_legend(stdout, best, 4, 100);
}

static cJSON *rank_json(const scenario_t *s, const plan_search_t *ps)
{
    cJSON *o = cJSON_CreateObject();
    bool ok = o && cJSON_AddStringToObject(o, "framework", s->fw.name) &&
              json_add_number(o, "candidates", (double)ps->candidates) &&
              json_add_number(o, "fit", ps->found ? (double)ps->reference_of : 0) &&
              json_add_number(o, "rank", ps->rank_of_reference) &&
              cJSON_AddBoolToObject(o, "layout_fits", ps->reference_fits) &&
              json_add_number(o, "step_time_s", ps->reference_step_s);
    if (ok && ps->found)
        ok = json_add_number(o, "best_step_time_s", ps->result.step_time_s) &&
             json_add_number(o, "best_tokens_per_s", ps->result.tokens_per_s) &&
             cJSON_AddItemToObject(o, "best_layout", layout_text_json(&ps->layout));
    if (!ok) {
        cJSON_Delete(o);
        return NULL;
    }
    return o;
}

static int run(const cmd_args_t *a, err_t *err)
{
    int rc = ERR_OK;
    scenario_t s;
    if ((rc = cmd_scenario(a, &s, err)) ||
        (cmd_sites_wanted(a) && (rc = cmd_sites_check(a, s.fw.name, &s.layout, err))))
        goto out;
    s.input.opt.layer_events = cmd_has(a, "--layer-events");
    sim_ctx_t *ctx = sim_ctx_create();
    if (!ctx) {
        rc = err_set(err, ERR_RUNTIME, "out of memory");
        goto out;
    }
    sim_result_t r;
    sim_event_t *events = NULL;
    int n_events = 0;
    bool timeline = cmd_has(a, "--timeline") || cmd_get(a, "--report");
    rc = sim_run_step(ctx, &s.input, &r, err);
    const char *trace = cmd_get(a, "--trace");
    if (!rc && trace)
        rc = sim_write_trace(ctx, trace, err);
    if (!rc && timeline)
        rc = sim_timeline(ctx, &events, &n_events, err);
    sim_ctx_destroy(ctx);
    bool ranked = false;
    plan_search_t ps;
    if (!rc && cmd_has(a, "--rank")) {
        rc = rank_layout(&s, &ps, err);
        ranked = rc == ERR_OK;
    }
    if (!rc && !cmd_machine_output(a) && print_text(&s, &r, cmd_has(a, "--ops")))
        rc = err_set(err, ERR_RUNTIME, "cannot write to standard output");
    if (!rc && ranked && !cmd_machine_output(a))
        print_rank(&s, &ps);
    if (!rc && cmd_sites_wanted(a) && !cmd_machine_output(a))
        rc = cmd_sites_sim(a, &s, NULL, err);
    if (!rc && cmd_wants_result(a)) {
        cJSON *j = sim_json(&s, &r, events, n_events);
        cJSON *rk = j && ranked ? rank_json(&s, &ps) : NULL;
        if (rk && !cJSON_AddItemToObject(j, "rank", rk)) {
            cJSON_Delete(rk);
            rk = NULL;
        }
        if (!j || (ranked && !rk)) {
            cJSON_Delete(j);
            j = NULL;
        }
        if (!j)
            rc = err_set(err, ERR_RUNTIME, "out of memory building JSON");
        else if (!cmd_machine_output(a))
            putchar('\n');
        if (j && cmd_sites_wanted(a))
            rc = cmd_sites_sim(a, &s, j, err);
        if (j && !rc)
            rc = cmd_output_result(a, "scaleplan sim", j, NULL, err);
        cJSON_Delete(j);
    }
    free(events);
    /* the step was simulated and printed, but it cannot run */
    if (!rc && !r.fits && !cmd_has(a, "--allow-oom")) {
        char advice[400];
        fit_advice(&s, &r, advice, sizeof advice);
        rc = err_set(err, ERR_RUNTIME, "the layout does not fit: %s (--allow-oom: exit 0)",
                     advice);
    }
out:
    scenario_free(&s);
    return rc;
}

/* The step of a's scenario: run()'s inputs and checks, nothing printed. */
static int step_time(const cmd_args_t *a, double *step_s, err_t *err)
{
    scenario_t s;
    int rc = cmd_scenario(a, &s, err);
    sim_ctx_t *ctx = rc ? NULL : sim_ctx_create();
    if (!rc && !ctx)
        rc = err_set(err, ERR_RUNTIME, "out of memory");
    sim_result_t r;
    if (!rc)
        rc = sim_run_step(ctx, &s.input, &r, err);
    sim_ctx_destroy(ctx);
    if (!rc && !r.fits && !cmd_has(a, "--allow-oom")) {
        char advice[400];
        fit_advice(&s, &r, advice, sizeof advice);
        rc = err_set(err, ERR_RUNTIME, "the layout does not fit: %s (--allow-oom: exit 0)",
                     advice);
    }
    if (!rc)
        *step_s = r.step_time_s;
    scenario_free(&s);
    return rc;
}

static const cmd_group_t *const groups[] = {&CMD_MODEL_OPTS,
                                         &CMD_CLUSTER_OPTS,
                                         &CMD_LAYOUT_OPTS,
                                         &CMD_INPUT_OPTS,
                                         &CMD_SIM_OPTS,
                                         &own_group,
                                         &CMD_FINETUNE_OPTS,
                                         &CMD_SITES_OPTS,
                                         &CMD_OUTPUT_OPTS};

const cmd_command_t CMD_CMD_SIM = {
    "sim",
    "simulate one training step: step time, breakdown, MFU, memory",
    "scaleplan sim (--model M | --megatron-args \"...\" | --torchtitan F.toml | "
                       "--bridge-overrides F) --gpu G "
                       "--gpus N [layout] [--profile F] [--trace F.json] [--json]",
    "Simulate one training step event by event: one representative GPU per\n"
                       "pipeline stage, per-layer GEMMs, attention and memory-bound kernels from\n"
                       "the cost profile, TP/CP/EP/PP/DP communication on the cluster's real\n"
                       "links, mixture-of-experts dispatch and load imbalance, the pipeline\n"
                       "schedule, gradient buckets, the optimizer and stragglers. The breakdown\n"
                       "lists exposed (non-overlapped) time; it sums to the step. Without a\n"
                       "batch, about 4M tokens a step (as plan; said). The model, layout and\n"
                       "options can come from a Megatron-LM command line, a torchtitan TOML, a\n"
                       "DeepSpeed config or Megatron-Bridge overrides; what they ignore or assume\n"
                       "is listed. --offload prices optimizer, parameter and activation offload.\n"
                       "--finetune lora|qlora prices a frozen base: input gradients only (no\n"
                       "weight-gradient GEMMs), the adapters' GEMMs, QLoRA's dequantization, only\n"
                       "the adapters' gradients reduced and updated; --finetune full as\n"
                       "pretraining. --grad-codec prices a gradient codec net; --islands,\n"
                       "--island-link and --diloco a job split over sites. e.g.\n"
                       "  scaleplan sim --model llama3-8b --gpu a100-80g --gpus 1 --finetune lora \\\n"
                       "      --lora-rank 64 --recompute full --seq-len 2048 --global-batch 8",
    groups,
    sizeof groups / sizeof groups[0],
    run,
    0,
};

int cmd_sim_step_time(int argc, char **argv, catalog_t *cat, double *step_s, err_t *err)
{
    cmd_args_t a;
    int rc = cmd_parse(argc, argv, groups, sizeof groups / sizeof groups[0], 0, &a, err);
    if (rc)
        return rc;
    if (a.help)
        return err_set(err, ERR_INPUT, "--help: no step time to give (run sim --help)");
    a.catalog = cat;
    return step_time(&a, step_s, err);
}
