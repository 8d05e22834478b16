/* scaleplan model: what a model is, what it costs per token, and what one
 * GPU holds while training it under a layout. */
#include <stdio.h>
#include <string.h>

#include "profile/profile.h"
#include "commands/args.h"
#include "commands/commands.h"
#include "commands/output.h"
#include "common/json.h"
#include "common/units.h"
#include "models/flops.h"
#include "models/hybrid.h"
#include "models/memory.h"
#include "reports/jsonout.h"
#include "models/layout_text.h"
#include "reports/textwrap.h"
#include "reports/table.h"
#include "sim/offload.h"

static const cmd_opt_t own_opts[] = {
    {"--profile", NULL, "FILE", "cost profile for memory overheads (default: the GPU's)", CMD_WORD},
};
static const cmd_group_t own_group = {"Model command", own_opts, 1};

typedef struct {
    model_t model;
    layout_t layout;
    model_params_t params;
    model_flops_t flops;
    model_memory_t memory;
    bool have_gpu;
    cluster_t cluster;
    notes_t notes; /* what the config reader assumed */
} model_report_t;


/* "hybrid": blocks by mixer and each mixer's parameters; false on OOM. */
static bool hybrid_json(cJSON *o, const model_t *m)
{
    cJSON *hy = cJSON_AddObjectToObject(o, "hybrid");
    bool ok = hy != NULL;
    for (int k = 0; ok && k < MODEL_MIXER_COUNT; k++)
        ok = json_add_number(hy, model_mixer_name((model_mixer_t)k),
                             model_hybrid_count(m, (model_mixer_t)k));
    for (int k = MODEL_MIXER_MAMBA2; ok && k <= MODEL_MIXER_LAST_SCAN; k++) {
        char key[48];
        snprintf(key, sizeof key, "%s_mixer_params", model_mixer_name((model_mixer_t)k));
        if (model_hybrid_count(m, (model_mixer_t)k) > 0)
            ok = json_add_number(hy, key, model_hybrid_mixer_params(m, (model_mixer_t)k, 1));
    }
    return ok;
}

/* A hybrid model's blocks by mixer and the sizes of its mixers
 * (models/hybrid.h). */
static void print_hybrid(const model_t *m)
{
    if (!model_is_hybrid(m))
        return;
    int no_mlp = 0;
    for (int i = 0; i < m->n_layers; i++)
        no_mlp += !model_block_has_mlp(m, i);
    printf("  hybrid blocks:");
    for (int k = 0; k < MODEL_MIXER_COUNT; k++)
        if (model_hybrid_count(m, (model_mixer_t)k) > 0)
            printf(" %d %s,", model_hybrid_count(m, (model_mixer_t)k),
                   model_mixer_name((model_mixer_t)k));
    printf(" %d without an MLP\n", no_mlp);
    const model_hybrid_t *h = &m->hybrid;
    char a[32], b[32];
    if (model_hybrid_count(m, MODEL_MIXER_MAMBA2) > 0)
        printf("  Mamba-2: %d heads x %d, state %d, %d groups, conv %d, chunk %d; mixer %s "
               "params, state %s bytes a sequence\n",
               h->ssm_heads, h->ssm_head_dim, h->ssm_state, h->ssm_groups, h->ssm_conv,
               h->ssm_chunk,
               units_fmt_count(model_hybrid_mixer_params(m, MODEL_MIXER_MAMBA2, 1), a, sizeof a),
               units_fmt_count(model_hybrid_state_bytes(m, MODEL_MIXER_MAMBA2), b, sizeof b));
    if (model_hybrid_count(m, MODEL_MIXER_GDN) > 0)
        printf("  Gated DeltaNet: %d key heads x %d, %d value heads x %d, conv %d, chunk %d; "
               "mixer %s params, state %s bytes a sequence\n",
               h->gdn_k_heads, h->gdn_k_dim, h->gdn_v_heads, h->gdn_v_dim, h->gdn_conv,
               h->gdn_chunk,
               units_fmt_count(model_hybrid_mixer_params(m, MODEL_MIXER_GDN, 1), a, sizeof a),
               units_fmt_count(model_hybrid_state_bytes(m, MODEL_MIXER_GDN), b, sizeof b));
    if (model_hybrid_count(m, MODEL_MIXER_KDA) > 0)
        printf("  Kimi Delta Attention: %d heads x %d, gates of rank %d, conv %d, chunk %d; "
               "mixer %s params, state %s bytes a sequence\n",
               h->gdn_k_heads, h->gdn_k_dim, h->kda_gate_rank, h->gdn_conv, h->gdn_chunk,
               units_fmt_count(model_hybrid_mixer_params(m, MODEL_MIXER_KDA, 1), a, sizeof a),
               units_fmt_count(model_hybrid_state_bytes(m, MODEL_MIXER_KDA), b, sizeof b));
    if (model_hybrid_count(m, MODEL_MIXER_LIGHTNING) > 0)
        printf("  lightning attention: %d heads x %d, blocks of %d; mixer %s params, state %s "
               "bytes a sequence\n",
               h->gdn_k_heads, h->gdn_k_dim, h->gdn_chunk,
               units_fmt_count(model_hybrid_mixer_params(m, MODEL_MIXER_LIGHTNING, 1), a,
                               sizeof a),
               units_fmt_count(model_hybrid_state_bytes(m, MODEL_MIXER_LIGHTNING), b,
                               sizeof b));
    if (model_hybrid_count(m, MODEL_MIXER_MAMBA1) > 0)
        printf("  Mamba-1: d_inner %d, state %d, dt rank %d, conv %d; mixer %s params, state %s "
               "bytes a sequence\n",
               h->ssm_inner, h->ssm_state, h->ssm_dt_rank, h->ssm_conv,
               units_fmt_count(model_hybrid_mixer_params(m, MODEL_MIXER_MAMBA1, 1), a, sizeof a),
               units_fmt_count(model_hybrid_state_bytes(m, MODEL_MIXER_MAMBA1), b, sizeof b));
    if (h->attn_out_gate)
        printf("  attention output gate: q_proj twice the query width\n");
}

static void print_architecture(const model_t *m)
{
    printf("%s (%s)\n", m->display, m->name);
    printf("  %s-style: %s, %s MLP, %s positions%s\n",
           model_family_name(m->family),
           m->norm_weightless ? "LayerNorm without weights"
           : m->norm == MODEL_NORM_RMSNORM ? "RMSNorm" : "LayerNorm",
           model_act_name(m->act, m->mlp == MODEL_MLP_SWIGLU),
           m->pos == MODEL_POS_ROPE ? "rotary" : m->pos == MODEL_POS_NONE ? "no" : "learned",
           m->tied_embeddings ? ", tied embeddings" : "");
    printf("  layers %d, hidden %d, ffn %d, heads %d (kv %d, head dim %d), vocab %d, "
           "max seq %d\n",
           m->n_layers, m->hidden, m->ffn, m->n_heads, m->n_kv_heads, m->head_dim,
           m->vocab, m->max_seq);
    if (m->ple.dim > 0 || m->kv_shared_layers > 0)
        printf("  per-layer inputs of %d from a %d-row table; the last %d blocks reuse earlier "
               "keys and values\n",
               m->ple.dim, m->ple.vocab, m->kv_shared_layers);
    if (model_has_full_attn(m))
        printf("  full-attention blocks (%d of %d): heads %d (kv %d, head dim %d)%s\n",
               m->n_layers - m->window_layers, m->n_layers, m->full_attn.n_heads,
               m->full_attn.n_kv_heads, m->full_attn.head_dim,
               m->full_attn.k_eq_v ? ", keys serve as values" : "");
    if (model_is_mla(m))
        printf("  multi-latent attention: q rank %d, kv rank %d, head %d + %d rope, v %d\n",
               m->mla.q_lora_rank, m->mla.kv_lora_rank, m->mla.qk_nope_dim, m->mla.qk_rope_dim,
               m->mla.v_dim);
    if (m->indexer.n_heads > 0)
        printf("  sparse-attention indexer: %d heads of %d, each query keeps %d keys\n",
               m->indexer.n_heads, m->indexer.head_dim, m->indexer.topk);
    if (model_is_moe(m)) {
        const model_moe_t *e = &m->moe;
        printf("  mixture of experts: %d of %d blocks, %d routed experts of width %d, top %d",
               e->n_moe_layers, m->n_layers, e->n_experts, e->expert_ffn, e->top_k);
        if (e->shared_ffn > 0)
            printf(", shared %d x %d%s", e->n_shared > 0 ? e->n_shared : 1,
                   e->shared_ffn / (e->n_shared > 0 ? e->n_shared : 1),
                   e->shared_gate ? " (gated)" : "");
        if (e->latent > 0)
            printf(", latent %d (tokens projected from %d before the dispatch)", e->latent,
                   m->hidden);
        printf("\n");
    }
    if (m->n_mtp > 0)
        printf("  multi-token prediction: %d module%s\n", m->n_mtp, m->n_mtp == 1 ? "" : "s");
    print_hybrid(m);
    printf("  source: %s\n", m->source);
}

static int print_params(const model_params_t *p)
{
    static const char *hdr[] = {"parameters", "count", "share"};
    table_t *t = table_create(3, hdr);
    if (!t)
        return ERR_RUNTIME;
    table_align_right(t, 1);
    table_align_right(t, 2);
    char a[32];
    /* rows shown only for MoE models (MOE), or where a dense block is (DENSE) */
    enum { ANY, MOE, DENSE };
    struct {
        const char *name;
        double v;
        bool share; /* whole-model rows show their share of the total */
        int only;
    } rows[] = {{"total", p->total, true, ANY},
                {"non-embedding", p->non_embedding, true, ANY},
                {"word embedding", p->word_embedding, true, ANY},
                {"position embedding", p->position_embedding, true, ANY},
                {"output head (untied)", p->output_head, true, ANY},
                {"per-layer input table", p->per_layer_inputs, true, ANY},
                {"per-layer input projection", p->per_layer_proj, true, ANY},
                {"one layer", p->per_layer, false, DENSE},
                {"  attention", p->attention, false, ANY},
                {"  mlp", p->mlp, false, DENSE},
                {"  norms", p->norms, false, ANY},
                {"  per-layer input", p->ple_block, false, ANY},
                {"active per token", p->active, true, MOE},
                {"one MoE layer", p->moe_layer, false, ANY},
                {"  router", p->router, false, ANY},
                {"  one routed expert", p->expert, false, ANY},
                {"  shared experts", p->shared_expert, false, ANY},
                {"  active (top-k)", p->moe_layer_active, false, ANY},
                {"MTP modules (apart)", p->mtp, false, ANY}};
    bool moe = p->moe_layer > 0;
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        if (rows[i].v == 0 && i > 1)
            continue;
        if (rows[i].only == MOE && !moe) /* active = total for dense models */
            continue;
        if (rows[i].only == DENSE && p->n_dense_layers == 0) /* no dense block or MLP */
            continue;
        char share[16] = "";
        if (rows[i].share)
            snprintf(share, sizeof share, "%.1f%%", 100 * rows[i].v / p->total);
        table_add_rowf(t, "%s\t%s\t%s", rows[i].name,
                       units_fmt_count(rows[i].v, a, sizeof a), share);
    }
    printf("\n");
    int rc = table_print(t, stdout, 2, 0);
    table_destroy(t);
    return rc;
}

static int print_flops(const model_report_t *r)
{
    static const char *hdr[] = {"forward FLOPs per token", "FLOPs", "share"};
    table_t *t = table_create(3, hdr);
    if (!t)
        return ERR_RUNTIME;
    table_align_right(t, 1);
    table_align_right(t, 2);
    char a[32];
    for (int i = 0; i < FLOP_OP_COUNT; i++)
        if (i < FLOP_ROUTER || r->flops.fwd_per_token[i] > 0)
            table_add_rowf(t, "%s\t%s\t%.1f%%", model_flop_op_name((flop_op_t)i),
                       units_fmt_count(r->flops.fwd_per_token[i], a, sizeof a),
                       100 * r->flops.fwd_per_token[i] / r->flops.fwd_per_token_total);
    table_add_rowf(t, "total forward\t%s\t100.0%%",
                   units_fmt_count(r->flops.fwd_per_token_total, a, sizeof a));
    printf("\n");
    int rc = table_print(t, stdout, 2, 0);
    table_destroy(t);
    char b[32], c[32];
    printf("  model FLOPs per token (3 x forward, seq %d): %s\n", r->layout.seq_len,
           units_fmt_count(r->flops.model_per_token, a, sizeof a));
    if (finetune_frozen(&r->layout.ft))
        printf("  %s: the frozen base runs no weight gradients (per step below: linears 2 x "
               "forward, attention 3x, adapters 3x theirs)\n",
               finetune_mode_name(r->layout.ft.mode));
    printf("  per step (%d x %d tokens): model %s FLOP, hardware %s FLOP (recompute %s)\n",
           r->layout.global_batch, r->layout.seq_len,
           units_fmt_count(model_flops_per_step(&r->model, &r->layout), b, sizeof b),
           units_fmt_count(model_hw_flops_per_step(&r->model, &r->layout), c, sizeof c),
           layout_recompute_name(r->layout.recompute));
    return rc;
}

static int print_memory(const model_report_t *r)
{
    const model_memory_t *mm = &r->memory;
    char desc[320];
    layout_text_long(&r->layout, desc, sizeof desc);
    printf("\n  memory per GPU: %s on %d GPUs, pipeline stage %d of %d (%d layers)\n",
           desc, r->layout.n_gpus, mm->stage, r->layout.pp, mm->layers);
    textwrap_legend(stdout, desc, 2, 100);
    static const char *hdr[] = {"memory", "GiB", "note"};
    table_t *t = table_create(3, hdr);
    if (!t)
        return ERR_RUNTIME;
    table_align_right(t, 1);
    char note[96];
    if (mm->expert_params_count > 0) {
        char ex[32];
        table_add_rowf(t, "weights\t%.2f\t%s params on this GPU (%s in routed experts)",
                       mm->params_bytes / GIB, units_fmt_count(mm->params_count, note, sizeof note),
                       units_fmt_count(mm->expert_params_count, ex, sizeof ex));
    } else {
        table_add_rowf(t, "weights\t%.2f\t%s params on this GPU", mm->params_bytes / GIB,
                       units_fmt_count(mm->params_count, note, sizeof note));
    }
    bool frozen = finetune_frozen(&r->layout.ft);
    if (frozen)
        table_add_rowf(t, "gradients\t%.2f\tadapters' only, fp32%s", mm->grads_bytes / GIB,
                       r->layout.zero >= 2 ? ", sharded (ZeRO-2+)" : "");
    else
        table_add_rowf(t, "gradients\t%.2f\t%d bytes each%s", mm->grads_bytes / GIB,
                       r->layout.grad_bytes, r->layout.zero >= 2 ? ", sharded (ZeRO-2+)" : "");
    table_add_rowf(t, "optimizer\t%.2f\t%s%s", mm->optimizer_bytes / GIB,
                   frozen ? "adapters' Adam moments (fp32)" : "fp32 master + Adam moments",
                   (r->layout.zero >= 1 || r->layout.distributed_optimizer) ? ", sharded" : "");
    table_add_rowf(t, "activations\t%.2f\t%.2f micro-batches in flight x %d layers",
                   mm->activations_bytes / GIB, mm->inflight_microbatches, mm->layers);
    table_add_rowf(t, "buffers\t%.2f\treserved, fragmentation, comm buffers",
                   mm->buffers_bytes / GIB);
    if (r->layout.offload) {
        char names[64];
        layout_offload_name(&r->layout, names, sizeof names);
        if (r->have_gpu) {
            double need, have;
            bool ok = offload_host_fits(mm, &r->cluster, &r->layout, &need, &have);
            table_add_rowf(t, "host (offload)\t%.2f\t%s in host memory, of %.1f GiB per GPU: %s",
                           mm->host_bytes / GIB, names, have, ok ? "fits" : "DOES NOT FIT");
        } else {
            table_add_rowf(t, "host (offload)\t%.2f\t%s in host memory (not in the total)",
                           mm->host_bytes / GIB, names);
        }
    }
    if (r->have_gpu)
        table_add_rowf(t, "total\t%.2f\tof %.1f GiB on %s: %s", mm->total_bytes / GIB,
                       r->cluster.gpu.memory_gib, r->cluster.gpu.name,
                       mm->total_bytes / GIB <= r->cluster.gpu.memory_gib ? "fits"
                                                                          : "DOES NOT FIT");
    else
        table_add_rowf(t, "total\t%.2f\t(give --gpu to check the fit)", mm->total_bytes / GIB);
    int rc = table_print(t, stdout, 2, 0);
    table_destroy(t);
    return rc;
}

static int print_json(const cmd_args_t *a, const model_report_t *r, err_t *err)
{
    cJSON *o = cJSON_CreateObject();
    bool ok = o != NULL;
    cJSON *pb = NULL, *fb = NULL, *fs = NULL;
    ok = ok && cJSON_AddItemToObject(o, "model", report_model_json(&r->model)) &&
         json_add_number(o, "params", r->params.total) &&
         json_add_number(o, "params_non_embedding", r->params.non_embedding) &&
         (pb = cJSON_AddObjectToObject(o, "params_breakdown")) &&
         json_add_number(pb, "word_embedding", r->params.word_embedding) &&
         json_add_number(pb, "position_embedding", r->params.position_embedding) &&
         json_add_number(pb, "per_layer", r->params.per_layer) &&
         json_add_number(pb, "attention_per_layer", r->params.attention) &&
         json_add_number(pb, "mlp_per_layer", r->params.mlp) &&
         json_add_number(pb, "norms_per_layer", r->params.norms) &&
         json_add_number(pb, "final_norm", r->params.final_norm) &&
         json_add_number(pb, "output_head", r->params.output_head) &&
         (r->params.per_layer_inputs == 0 ||
          (json_add_number(pb, "per_layer_input_table", r->params.per_layer_inputs) &&
           json_add_number(pb, "per_layer_input_projection", r->params.per_layer_proj) &&
           json_add_number(pb, "per_layer_input_per_layer", r->params.ple_block))) &&
         json_add_number(o, "seq_len", r->layout.seq_len) &&
         json_add_number(o, "flops_per_token", r->flops.model_per_token) &&
         json_add_number(o, "flops_per_token_forward", r->flops.fwd_per_token_total) &&
         (fb = cJSON_AddObjectToObject(o, "flops_by_op"));
    for (int i = 0; ok && i < FLOP_OP_COUNT; i++)
        if (i < FLOP_ROUTER || r->flops.fwd_per_token[i] > 0)
            ok = json_add_number(fb, model_flop_op_name((flop_op_t)i), r->flops.fwd_per_token[i]);
    ok = ok && (fs = cJSON_AddObjectToObject(o, "flops_per_step")) &&
         json_add_number(fs, "model", model_flops_per_step(&r->model, &r->layout)) &&
         json_add_number(fs, "hardware", model_hw_flops_per_step(&r->model, &r->layout)) &&
         cJSON_AddItemToObject(o, "layout", layout_text_json(&r->layout)) &&
         cJSON_AddItemToObject(o, "memory_gib",
                               report_memory_json(&r->memory, r->have_gpu
                                                                  ? r->cluster.gpu.memory_gib
                                                                  : -1)) &&
         json_add_number(o, "memory_stage", r->memory.stage) &&
         json_add_number(o, "params_per_gpu", r->memory.params_count);
    if (ok && model_is_moe(&r->model)) {
        cJSON *moe = NULL;
        ok = json_add_number(o, "params_active", r->params.active) &&
             (moe = cJSON_AddObjectToObject(o, "moe")) &&
             json_add_number(moe, "experts", r->model.moe.n_experts) &&
             json_add_number(moe, "top_k", r->model.moe.top_k) &&
             json_add_number(moe, "expert_ffn", r->model.moe.expert_ffn) &&
             json_add_number(moe, "shared_ffn", r->model.moe.shared_ffn) &&
             json_add_number(moe, "moe_layers", r->model.moe.n_moe_layers) &&
             json_add_number(moe, "router_params", r->params.router) &&
             json_add_number(moe, "expert_params", r->params.expert) &&
             json_add_number(moe, "shared_expert_params", r->params.shared_expert) &&
             json_add_number(moe, "moe_layer_params", r->params.moe_layer) &&
             json_add_number(moe, "expert_params_per_gpu", r->memory.expert_params_count);
    }
    if (ok && r->model.n_mtp > 0)
        ok = json_add_number(o, "params_mtp", r->params.mtp);
    if (ok && model_is_hybrid(&r->model))
        ok = hybrid_json(o, &r->model);
    if (ok)
        ok = cmd_add_notes_json(o, &r->notes);
    if (ok && r->have_gpu)
        ok = cJSON_AddBoolToObject(o, "fits",
                                   r->memory.total_bytes / GIB <= r->cluster.gpu.memory_gib) &&
             cJSON_AddStringToObject(o, "gpu", r->cluster.gpu.name);
    int rc = ok ? cmd_emit(a, o, NULL, err)
                : err_set(err, ERR_RUNTIME, "out of memory building JSON");
    cJSON_Delete(o);
    return rc;
}

/* Memory overheads from --profile, else the GPU's default profile, else
 * the built-in defaults. */
static int memory_options(const cmd_args_t *a, const model_report_t *r,
                          memory_opts_t *opts, err_t *err)
{
    memory_opts_default(opts);
    const char *path = cmd_get(a, "--profile");
    if (!path && !r->have_gpu)
        return ERR_OK;
    profile_t prof;
    int rc = path ? prof_load_in(a->catalog, path, &prof, err)
                  : prof_load_default_in(a->catalog, r->cluster.gpu.name, &prof, err);
    if (rc)
        return rc;
    opts->reserved_bytes = prof.reserved_gib * GIB;
    opts->fragmentation = prof.fragmentation;
    prof_free(&prof);
    return ERR_OK;
}

static int report(const cmd_args_t *a, model_report_t *r, err_t *err);

static int run(const cmd_args_t *a, err_t *err)
{
    model_report_t r;
    memset(&r, 0, sizeof r);
    int rc = report(a, &r, err);
    notes_free(&r.notes);
    return rc;
}

static int report(const cmd_args_t *a, model_report_t *r, err_t *err)
{
    int rc = ERR_OK;
    layout_defaults(&r->layout);
    if ((rc = cmd_model_noted(a, &r->model, &r->notes, err)) ||
        (rc = cmd_layout_flags(a, &r->model, &r->layout, NULL, &r->notes, err)))
        return rc;
    int n_gpus = r->layout.tp * r->layout.pp * r->layout.cp;
    if ((rc = cmd_get_int(a, "--gpus", &n_gpus, err)))
        return rc;
    if (!cmd_get(a, "--deepspeed") && !cmd_has(a, "--megatron-args") &&
        !cmd_has(a, "--megatron-args-file") && !cmd_has(a, "--torchtitan"))
        scenario_default_batch(&r->model, &r->layout, n_gpus, &r->notes);
    if ((rc = layout_finalize(&r->layout, &r->model, n_gpus, err)))
        return rc;
    if (cmd_has(a, "--gpu") || cmd_has(a, "--cluster")) {
        cluster_spec_t spec;
        if ((rc = cmd_cluster_spec(a, &spec, err)))
            return rc;
        spec.n_gpus = n_gpus;
        if ((rc = cluster_resolve(&spec, &r->cluster, err)))
            return rc;
        r->have_gpu = true;
        offload_notes(&r->layout, &r->cluster, &r->notes);
    }
    memory_opts_t opts;
    if ((rc = memory_options(a, r, &opts, err)))
        return rc;
    model_params(&r->model, &r->params);
    model_flops(&r->model, r->layout.seq_len, &r->flops);
    model_memory_peak(&r->model, &r->layout, &opts, &r->memory);
    if (r->notes.oom)
        return err_set(err, ERR_RUNTIME, "out of memory");
    if (cmd_machine_output(a))
        return print_json(a, r, err);
    print_architecture(&r->model);
    if ((rc = print_params(&r->params)) || (rc = print_flops(r)) || (rc = print_memory(r)))
        return err_set(err, ERR_RUNTIME, "cannot write the report to standard output");
    cmd_print_notes(stdout, &r->notes);
    return ERR_OK;
}

static const cmd_group_t *const groups[] = {&CMD_MODEL_OPTS,
                                         &CMD_LAYOUT_OPTS,
                                         &CMD_GPUS_OPTS,
                                         &own_group,
                                         &CMD_FINETUNE_OPTS,
                                         &CMD_OUTPUT_OPTS};

const cmd_command_t CMD_CMD_MODEL = {
    "model",
    "parameters, FLOPs per token and per-GPU memory of a model under a layout",
    "scaleplan model --model NAME|config.json [layout] [--gpu G] [--json]",
    "Parameters (total, per stage, per GPU), FLOPs per token by operation\n"
                       "(Megatron convention), and per-GPU memory (weights, gradients, optimizer\n"
                       "states, activations, buffers) for a parallel layout. Without --gpus the\n"
                       "layout uses one model replica (TP x PP x CP GPUs); without a batch, about\n"
                       "4M tokens a step as plan takes (it sets the micro-batches in flight).\n"
                       "Fine-tuning (--finetune lora|qlora|full): LoRA and QLoRA freeze the base\n"
                       "(no base gradients or optimizer state; QLoRA stores its linears in 4-bit\n"
                       "NF4, 0.516 bytes a parameter) and train fp32 adapters, e.g.\n"
                       "  scaleplan model --model llama3-70b --finetune qlora --recompute full \\\n"
                       "      --seq-len 2048 --micro-batch 1 --global-batch 16 --gpu h100-sxm",
    groups,
    sizeof groups / sizeof groups[0],
    run,
    0,
};
