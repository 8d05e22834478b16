#include "sim/scenario.h"

#include "sim/moe_dispatch.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "profile/provenance.h"

#include "sim/offload.h"

int scenario_begin(const scenario_spec_t *spec, scenario_t *s, err_t *err)
{
    memset(s, 0, sizeof *s);
    int rc;
    if (spec->model_given)
        s->model = *spec->model_given;
    else {
        model_load_opts_t mo = {.assume_architecture = spec->assume_architecture};
        if ((rc = model_load_ex(spec->model, &mo, &s->model, &s->notes, err)))
            return rc;
    }
    if (!spec->cluster.n_gpus)
        return err_setf(err, ERR_INPUT, NULL, "--gpus",
                        "say how many GPUs the job uses (e.g. --gpus 256)");
    if ((rc = cluster_resolve(&spec->cluster, &s->cluster, err)))
        return rc;
    layout_defaults(&s->layout);
    snprintf(s->framework, sizeof s->framework, "%s", spec->framework ? spec->framework : "");
    s->catalog = spec->cluster.catalog;
    if ((rc = fw_load_in(s->catalog, spec->framework, &s->fw, err)))
        return rc;
    fw_apply(&s->fw, &s->opt, &s->layout);
    fw_apply_gpu(&s->fw, s->cluster.gpu.name, s->model.name, &s->opt);
    return ERR_OK;
}

/* Pipeline stages that do not divide the layers, with no split given,
 * split as the framework splits them by itself (DeepSpeed's balanced
 * partition, torchtitan's rules; layout_rule_stage_sizes), said in the
 * notes; Megatron-LM asks for the split in its flags (and refuses without
 * one), so its presets leave the layout's check to say so. */
static int framework_stage_split(scenario_t *s, err_t *err)
{
    layout_t *l = &s->layout;
    int V = l->pp * l->vpp, L = s->model.n_layers;
    if (s->fw.pp_split == LAYOUT_SPLIT_MEGATRON || V < 2 || L < 1 || V > L + 2 ||
        l->first_stage_layers || l->last_stage_layers || L % V == 0)
        return ERR_OK;
    int *sizes = calloc((size_t)V, sizeof *sizes);
    if (!sizes)
        return err_set(err, ERR_RUNTIME, "out of memory splitting the pipeline stages");
    bool approx = false;
    int rc = layout_rule_stage_sizes(s->fw.pp_split, L, V, 1, 1, sizes, "--pp", err);
    if (!rc)
        rc = layout_set_stage_sizes(l, sizes, V, L, "--pp", &approx, err);
    if (!rc) {
        char list[160];
        layout_format_stage_sizes(sizes, V, list, sizeof list);
        notes_add(&s->notes, NOTE_ASSUMED, "--pp",
                  "%s splits the %d layers over its %d stages itself: %s%s", s->fw.name, L, V,
                  list,
                  approx ? " (simulated with equal middle stages, the largest stage and the "
                           "total kept)"
                         : "");
    }
    free(sizes);
    return rc;
}

/* DeepEP needs an NVIDIA GPU of compute capability 8.0 or later (Ampere
 * SM80, Hopper SM90 and later) joined to its node by NVLink
 * (deepseek-ai/DeepEP README, requirements). */
const char *scenario_deepep_unsupported(const gpu_t *g)
{
    static const char *const archs[] = {"ampere", "hopper", "blackwell"};
    if (strcmp(g->vendor, "nvidia") != 0)
        return "not an NVIDIA GPU";
    bool arch = false;
    for (size_t i = 0; i < sizeof archs / sizeof archs[0]; i++)
        arch = arch || strcmp(g->architecture, archs[i]) == 0;
    if (!arch)
        return "compute capability below 8.0 or without NVLink";
    return g->scaleup_gbs > 0 ? NULL : "no NVLink between the node's GPUs";
}

/* A dispatcher the framework does not offer is refused. A DeepEP
 * dispatcher on a GPU it does not run on: refused when the user or
 * the run's file asked for it, else (a preset's default) the all-to-all
 * dispatcher, said. */
static int moe_dispatch_check(scenario_t *s, err_t *err)
{
    moe_opts_t *mo = &s->opt.moe;
    if (!model_is_moe(&s->model))
        return ERR_OK;
    if (s->fw.caps.ep && !s->fw.caps.dispatchers[mo->dispatcher])
        return err_setf(err, ERR_INPUT, NULL, "--moe-dispatcher",
                        "%s does not offer the %s dispatcher (scaleplan catalog frameworks: "
                        "its supports.moe_dispatchers)",
                        s->fw.name, moe_dispatch_name(mo->dispatcher));
    const char *why = scenario_deepep_unsupported(&s->cluster.gpu);
    if (mo->dispatcher != MOE_DISPATCH_DEEPEP || !why)
        return ERR_OK;
    if (mo->dispatcher_given)
        return err_setf(err, ERR_INPUT, NULL, "--moe-dispatcher",
                        "deepep does not run on %s (%s): DeepEP needs an NVIDIA GPU of compute "
                        "capability 8.0 or later joined by NVLink; use alltoall",
                        s->cluster.gpu.name, why);
    mo->dispatcher = MOE_DISPATCH_ALLTOALL;
    notes_add(&s->notes, NOTE_ASSUMED, "--moe-dispatcher",
              "alltoall: %s's DeepEP dispatcher does not run on %s (%s)", s->fw.name,
              s->cluster.gpu.name, why);
    return ERR_OK;
}

int scenario_finish(scenario_t *s, const char *profile_path, err_t *err)
{
    int rc;
    if (s->notes.oom)
        return err_set(err, ERR_RUNTIME, "out of memory listing the inputs' notes");
    bool implied;
    if ((rc = fw_require_sp(&s->fw, &s->model, &s->layout, &implied, err)))
        return rc;
    if (implied)
        notes_add(&s->notes, NOTE_ASSUMED, "--sequence-parallel",
                  "implied: %s trains mixture-of-experts blocks with TP %d only with sequence "
                  "parallelism (Megatron-Core's MoE layer refuses TP without it)",
                  s->fw.name, s->layout.tp);
    /* the recipes' default, unless the inputs turn it off by name */
    if (s->fw.sp_with_tp && s->layout.tp > 1 && !s->layout.sp_off)
        s->layout.sequence_parallel = true;
    /* the framework's gradients for the precision the run ended with */
    if (!s->grad_bytes_fixed)
        s->layout.grad_bytes = fw_grad_bytes(&s->fw, s->layout.precision);
    /* a plain "fp8" is whatever fp8 recipe the framework runs by that name */
    if (s->layout.precision == PRECISION_FP8 && !s->fp8_recipe_fixed)
        s->layout.precision = s->fw.fp8_recipe;
    if ((rc = framework_stage_split(s, err)) ||
        (rc = layout_finalize(&s->layout, &s->model, s->cluster.n_gpus, err)))
        return rc;
    /* (TP comm overlap stays as asked at TP 1, where there is nothing to
     * overlap: a layout search from this scenario applies it to the
     * candidates with TP) */
    if ((rc = fw_check_layout(&s->fw, &s->layout, &s->opt, err)) ||
        (rc = fw_check_model(&s->fw, &s->model, err)))
        return rc;
    if ((rc = moe_dispatch_check(s, err)) ||
        (rc = prec_check_gpu(s->catalog, s->layout.precision, &s->cluster.gpu, err)) ||
        (rc = sim_options_precision_in(s->catalog, &s->opt, s->layout.precision, err)))
        return rc;
    if (s->opt.tp_comm_overlap && s->layout.tp > 1 && !s->layout.sequence_parallel)
        return err_setf(err, ERR_INPUT, NULL, "--tp-comm-overlap",
                        "needs --sequence-parallel (Transformer Engine overlaps the "
                        "all-gather and reduce-scatter that SP uses)");
    offload_notes(&s->layout, &s->cluster, &s->notes);
    rc = profile_path ? prof_load_in(s->catalog, profile_path, &s->profile, err)
                      : prof_load_default_in(s->catalog, s->cluster.gpu.name, &s->profile, err);
    if (rc)
        return rc;
    s->input.model = &s->model;
    s->input.layout = &s->layout;
    s->input.cluster = &s->cluster;
    s->input.profile = &s->profile;
    s->input.opt = s->opt;
    return ERR_OK;
}

int scenario_batch_for_tokens(double tokens, int seq_len)
{
    return (int)fmax(1, round(tokens / seq_len));
}

bool scenario_default_batch(const model_t *m, layout_t *l, int n_gpus, notes_t *notes)
{
    if (l->global_batch > 0 || l->grad_accum > 0)
        return false;
    long mp = (long)l->tp * l->pp * l->cp;
    if (mp < 1 || n_gpus < mp || n_gpus % mp)
        return false;
    int seq = l->seq_len > 0 ? l->seq_len : layout_default_seq_len(m);
    if (seq <= 0)
        return false;
    long dp = n_gpus / mp;
    long step = (long)(l->micro_batch > 0 ? l->micro_batch : 1) * dp * (l->vpp > 1 ? l->pp : 1);
    double target = scenario_batch_for_tokens(SCENARIO_DEFAULT_BATCH_TOKENS, seq);
    double gb = fmax(1, round(target / step)) * step;
    if (gb > INT_MAX)
        return false;
    l->global_batch = (int)gb;
    if (notes)
        notes_add(notes, NOTE_ASSUMED, "--global-batch",
                  "%.0f sequences of %d tokens (%.2fM tokens a step: the plan's default of "
                  "about 4M; --global-batch sets yours)",
                  gb, seq, gb * seq / 1e6);
    return true;
}

/* A fused attention kernel asked for more keys a call than its table was
 * measured at takes the fitted plateau: said. Keys a call: the sequence,
 * or each rank's share of it under ring context parallelism. */
static void attn_range_note(const scenario_t *s, char *buf, size_t cap, bool sep)
{
    const layout_t *l = &s->layout;
    const prof_attn_kernel_t *k = prof_attn_kernel(&s->profile, s->opt.attn_kernel);
    if (!l->flash_attention || !k || !(k->max_keys > 0) || cap < 2)
        return;
    double keys = l->cp > 1 && s->opt.cp_comm != CP_A2A ? (double)l->seq_len / l->cp
                                                          : (double)l->seq_len;
    if (keys > k->max_keys)
        snprintf(buf, cap,
                 "%sattention: %.0f keys a kernel call on %s's %s, beyond the %.0f its "
                 "efficiency was measured to (the measured plateau assumed)",
                 sep ? "; " : "", keys, s->profile.gpu, k->name, k->max_keys);
}

void scenario_assumptions(const scenario_t *s, char *buf, size_t cap)
{
    prov_figure_t figs[PROV_MAX_FIGURES];
    int n = prov_figures(&s->profile, figs, PROV_MAX_FIGURES);
    size_t len = 0;
    int k = 0;
    buf[0] = '\0';
    for (int i = 0; i < n && len + 1 < cap; i++) {
        if (figs[i].kind != PROV_ASSUMED)
            continue;
        if (k++)
            snprintf(buf + len, cap - len, ", %s", figs[i].name);
        else
            snprintf(buf + len, cap - len, "profile %s: %s", s->profile.gpu, figs[i].name);
        len = strlen(buf);
    }
    if (s->fw.assumed[0] && len + 1 < cap)
        snprintf(buf + len, cap - len, "%sframework %s: %s", len ? "; " : "", s->fw.name,
                 s->fw.assumed);
    len = strlen(buf);
    if (model_is_moe(&s->model) && s->layout.ep > 1 && !s->opt.moe.imbalance_given &&
        len + 1 < cap)
        snprintf(buf + len, cap - len,
                 "%smoe: expert load imbalance %.2f (balanced routing; --moe-imbalance sets "
                 "yours)",
                 len ? "; " : "", s->opt.moe.imbalance);
    len = strlen(buf);
    if (model_is_moe(&s->model) && s->opt.moe.drop_from_recipe && len + 1 < cap)
        snprintf(buf + len, cap - len,
                 "%smoe: tokens dropped beyond %.2f x the mean an expert%s (%s's recipe for this "
                 "model and GPU; --moe-dropless or --moe-capacity-factor sets yours)",
                 len ? "; " : "", s->opt.moe.capacity_factor,
                 s->opt.moe.pad_to_capacity ? ", every expert padded to it" : "", s->fw.name);
    len = strlen(buf);
    attn_range_note(s, buf + len, cap - len, len > 0);
    len = strlen(buf);
    double bd, bc;
    if (model_is_moe(&s->model) && s->layout.ep > 1 &&
        s->opt.moe.dispatcher == MOE_DISPATCH_DEEPEP && len + 1 < cap &&
        moe_dispatch_flex_gbs(s->cluster.gpu.architecture, s->layout.ep > s->cluster.gpus_per_node,
                              s->layout.ep, cluster_nic_gbs_per_gpu(&s->cluster), &bd,
                              &bc) == MOE_FLEX_EXTRAPOLATED)
        snprintf(buf + len, cap - len,
                 "%smoe: DeepEP/HybridEP bandwidth at EP%d beyond the published EP sizes "
                 "(the nearest reads %.0f GB/s dispatch, %.0f combine): NCCL's all-to-all "
                 "stands in",
                 len ? "; " : "", s->layout.ep, bd, bc);
}

void scenario_free(scenario_t *s)
{
    prof_free(&s->profile);
    notes_free(&s->notes);
}
