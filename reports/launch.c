#include "reports/launch.h"

#include <math.h>
#include <stddef.h>
#include <string.h>

static const char *const KIND_NAMES[LAUNCH_COUNT] = {"megatron", "nemo", "deepspeed",
                                                     "torchtitan"};
/* The current version of each framework (sim/catalog/frameworks.json). */
static const char *const KIND_FRAMEWORK[LAUNCH_COUNT] = {"megatron-core", "megatron-bridge-26.04",
                                                         "deepspeed", "torchtitan-2025-06"};

int launch_parse(const char *name, launch_kind_t *k, err_t *err)
{
    for (int i = 0; i < LAUNCH_COUNT; i++)
        if (strcmp(name, KIND_NAMES[i]) == 0) {
            *k = (launch_kind_t)i;
            return ERR_OK;
        }
    return err_setf(err, ERR_INPUT, NULL, "--emit",
                    "use megatron, nemo, deepspeed or torchtitan (got '%s')", name);
}

const char *launch_name(launch_kind_t k)
{
    return k < LAUNCH_COUNT ? KIND_NAMES[k] : "?";
}

const char *launch_framework(launch_kind_t k)
{
    return k < LAUNCH_COUNT ? KIND_FRAMEWORK[k] : NULL;
}

static bool starts(const char *s, const char *prefix)
{
    return strncmp(s, prefix, strlen(prefix)) == 0;
}

bool launch_accepts(launch_kind_t k, const char *fw)
{
    switch (k) {
    case LAUNCH_MEGATRON:
        return starts(fw, "megatron-core") || starts(fw, "megatron-20");
    case LAUNCH_NEMO:
        return starts(fw, "nemo-") || starts(fw, "megatron-bridge");
    case LAUNCH_DEEPSPEED:
        /* Megatron-DeepSpeed launches with a ds_config.json and Megatron's
         * arguments, what this writes */
        return starts(fw, "deepspeed") || starts(fw, "megatron-deepspeed");
    case LAUNCH_TORCHTITAN:
        return starts(fw, "torchtitan");
    default:
        return false;
    }
}

/* ------------------------------------------------------------ Megatron */

/* Megatron's --fp8-recipe for a precision; NULL when not an fp8 recipe. */
static const char *fp8_recipe(precision_t p)
{
    switch (p) {
    case PRECISION_FP8:
        return "delayed";
    case PRECISION_FP8_CS:
        return "tensorwise";
    case PRECISION_MXFP8:
        return "mxfp8";
    case PRECISION_FP8_BLOCK:
        return "blockwise";
    default:
        return NULL;
    }
}

/* --moe-layer-freq as Megatron's Python list expression: runs of dense (0)
 * and MoE (1) blocks, "([0]*3+[1]*58)". */
static void moe_layer_freq(const model_t *m, FILE *f)
{
    fprintf(f, "--moe-layer-freq (");
    int i = 0;
    bool first = true;
    while (i < m->n_layers) {
        bool moe = model_moe_layer(m, i);
        int j = i;
        while (j < m->n_layers && model_moe_layer(m, j) == moe)
            j++;
        fprintf(f, "%s[%d]*%d", first ? "" : "+", moe ? 1 : 0, j - i);
        first = false;
        i = j;
    }
    fprintf(f, ")\n");
}

/* The run's CUDA graphs as Megatron-LM arguments (what megatron_args reads
 * back: full_iteration, or Transformer Engine's partial graphs of the
 * scopes named). */
static void megatron_cuda_graphs(unsigned scopes, FILE *f)
{
    if (!scopes)
        return;
    if (scopes & HOST_GRAPH_FULL) {
        fprintf(f, "--cuda-graph-impl full_iteration\n");
        return;
    }
    char names[96];
    host_graph_scopes_name(scopes, names, sizeof names);
    fprintf(f, "--cuda-graph-impl transformer_engine\n--cuda-graph-scope %s\n", names);
}

/* A mixture-of-experts run's token dispatcher and CUDA graphs as
 * Megatron-Bridge overrides (model.*: Megatron-Bridge's TransformerConfig
 * fields; Transformer Engine's graphs need its RNG tracker, as Bridge's
 * scripts/performance/utils/overrides.py sets it: training/config.py turns
 * rng.te_rng_tracker on with model.use_te_rng_tracker). What inputs/bridge
 * bridge_read_options reads back. */
static void nemo_moe_options(const sim_options_t *o, FILE *f)
{
    fprintf(f, "model.moe_token_dispatcher_type=%s\n", moe_dispatch_megatron_name(o->moe.dispatcher));
    if (o->moe.dispatcher == MOE_DISPATCH_DEEPEP)
        fprintf(f, "model.moe_flex_dispatcher_backend=deepep\n");
    unsigned scopes = o->host.graph_scopes;
    if (!scopes) {
        fprintf(f, "model.cuda_graph_impl=none\n");
        return;
    }
    if (scopes & HOST_GRAPH_FULL) {
        fprintf(f, "model.cuda_graph_impl=full_iteration\n");
        return;
    }
    char names[96];
    host_graph_scopes_name(scopes, names, sizeof names);
    for (char *c = names; *c; c++)
        *c = *c == ' ' ? ',' : *c;
    fprintf(f, "model.cuda_graph_impl=transformer_engine\nmodel.cuda_graph_scope=[%s]\n"
               "model.use_te_rng_tracker=true\n",
            names);
}

/* Multi-latent attention, mixture of experts and multi-token prediction
 * as Megatron-LM arguments (architecture), with the run's MoE options. */
static void megatron_moe_mla(const model_t *m, const sim_options_t *o, FILE *f)
{
    if (model_is_mla(m)) {
        const model_mla_t *a = &m->mla;
        fprintf(f, "--multi-latent-attention\n");
        if (a->q_lora_rank > 0)
            fprintf(f, "--q-lora-rank %d\n", a->q_lora_rank);
        fprintf(f, "--kv-lora-rank %d\n--qk-head-dim %d\n--qk-pos-emb-head-dim %d\n"
                   "--v-head-dim %d\n",
                a->kv_lora_rank, a->qk_nope_dim, a->qk_rope_dim, a->v_dim);
        if (!a->no_latent_norms)
            fprintf(f, "--qk-layernorm\n");
    }
    if (model_is_moe(m)) {
        const model_moe_t *x = &m->moe;
        fprintf(f, "--num-experts %d\n--moe-router-topk %d\n--moe-ffn-hidden-size %d\n",
                x->n_experts, x->top_k, x->expert_ffn);
        if (x->shared_ffn > 0)
            fprintf(f, "--moe-shared-expert-intermediate-size %d\n", x->shared_ffn);
        if (x->n_groups > 1)
            fprintf(f, "--moe-router-num-groups %d\n--moe-router-group-topk %d\n", x->n_groups,
                    x->group_topk);
        if (x->n_moe_layers != m->n_layers)
            moe_layer_freq(m, f);
        fprintf(f, "--moe-token-dispatcher-type %s\n",
                moe_dispatch_megatron_name(o->moe.dispatcher));
        if (o->moe.grouped_gemm)
            fprintf(f, "--moe-grouped-gemm\n");
        if (o->moe.permute_fusion)
            fprintf(f, "--moe-permute-fusion\n");
        if (o->moe.shared_overlap && x->shared_ffn > 0)
            fprintf(f, "--moe-shared-expert-overlap\n");
        if (o->moe.a2a_overlap)
            fprintf(f, "--overlap-moe-expert-parallel-comm\n");
        if (o->moe.capacity_factor > 0)
            fprintf(f, "--moe-expert-capacity-factor %.9g\n", o->moe.capacity_factor);
        if (o->moe.pad_to_capacity)
            fprintf(f, "--moe-pad-expert-input-to-capacity\n");
        if (o->host.router_fusion)
            fprintf(f, "--moe-router-fusion\n");
    }
    megatron_cuda_graphs(o->host.graph_scopes, f);
    if (m->n_mtp > 0)
        fprintf(f, "--mtp-num-layers %d\n", m->n_mtp);
}

/* The selective-recompute modules as Megatron names them, joined by sep,
 * in the line fmt. */
static int put_modules(FILE *f, const char *fmt, const char *sep, unsigned modules, err_t *err)
{
    char names[160]; /* all seven names take 62 characters (models/layout.h) */
    if (layout_recompute_modules_name(modules, sep, false, names, sizeof names) >=
        (int)sizeof names)
        return err_set(err, ERR_RUNTIME, "recompute modules: the list does not fit");
    fprintf(f, fmt, names);
    return ERR_OK;
}

static int write_megatron(const model_t *m, const layout_t *l, const sim_options_t *o, FILE *f,
                          const char *framework, err_t *err)
{
    if (l->recompute == RECOMPUTE_OPS)
        return err_setf(err, ERR_INPUT, NULL, "--emit",
                        "Megatron-LM has no op-level selective recompute (torchtitan's); "
                        "plan with --framework megatron-core");
    if (l->precision == PRECISION_FP8_ROWWISE || l->precision == PRECISION_MXFP4)
        return err_setf(err, ERR_INPUT, NULL, "--emit", "Megatron-LM has no %s recipe",
                        layout_precision_name(l->precision));
    fprintf(f, "# %s: Megatron-LM pretrain_gpt.py arguments written by scaleplan\n", m->display);
    if (framework && (strcmp(framework, "megatron-2020") == 0 ||
                      strcmp(framework, "megatron-2021") == 0 ||
                      strcmp(framework, "megatron-2022") == 0))
        /* the releases of those papers spelled some flags otherwise
         * (--checkpoint-activations) and had no others (context
         * parallelism, --normalization, --grad-reduce-in-bf16) */
        fprintf(f, "# planned for %s; these are today's Megatron-LM flags (that release spells "
                   "some otherwise and lacks others; the values carry over)\n",
                framework);
    fprintf(f, "--num-layers %d\n--hidden-size %d\n--ffn-hidden-size %d\n--num-attention-heads %d\n",
            m->n_layers, m->hidden, m->ffn, m->n_heads);
    if (m->n_kv_heads != m->n_heads)
        fprintf(f, "--group-query-attention\n--num-query-groups %d\n", m->n_kv_heads);
    if ((long)m->head_dim * m->n_heads != m->hidden)
        fprintf(f, "--kv-channels %d\n", m->head_dim);
    fprintf(f, "--seq-length %d\n--max-position-embeddings %d\n", l->seq_len,
            m->max_seq > l->seq_len ? m->max_seq : l->seq_len);
    fprintf(f, "--position-embedding-type %s\n",
            m->pos == MODEL_POS_ROPE ? "rope" : m->pos == MODEL_POS_LEARNED ? "learned_absolute"
                                                                             : "none");
    if (m->pos == MODEL_POS_ROPE && m->rope_theta > 0)
        fprintf(f, "--rotary-base %.0f\n", m->rope_theta);
    fprintf(f, "--normalization %s\n", m->norm == MODEL_NORM_RMSNORM ? "RMSNorm" : "LayerNorm");
    if (m->norm_eps > 0)
        fprintf(f, "--norm-epsilon %g\n", m->norm_eps);
    if (m->mlp == MODEL_MLP_SWIGLU)
        fprintf(f, "--swiglu\n");
    if (!m->mlp_bias && !m->out_bias) {
        fprintf(f, "--disable-bias-linear\n");
        if (m->qkv_bias)
            fprintf(f, "--add-qkv-bias\n");
    }
    if (!m->tied_embeddings)
        fprintf(f, "--untie-embeddings-and-output-weights\n");
    fprintf(f, "--vocab-size %d\n--make-vocab-size-divisible-by 1\n", m->vocab);
    fprintf(f, "--attention-dropout %g\n--hidden-dropout %g\n", m->dropout, m->dropout);
    megatron_moe_mla(m, o, f);
    fprintf(f, "--tensor-model-parallel-size %d\n--pipeline-model-parallel-size %d\n"
               "--context-parallel-size %d\n",
            l->tp, l->pp, l->cp);
    if (model_is_moe(m))
        fprintf(f, "--expert-model-parallel-size %d\n--expert-tensor-parallel-size %d\n", l->ep,
                layout_etp(l));
    if (l->vpp > 1 && !l->first_stage_layers && !l->last_stage_layers)
        fprintf(f, "--num-layers-per-virtual-pipeline-stage %d\n", m->n_layers / (l->pp * l->vpp));
    else if (l->vpp > 1)
        /* (L + 2) / (PP x VPP) per chunk, the first and last one lighter */
        fprintf(f, "--num-virtual-stages-per-pipeline-rank %d\n"
                   "--account-for-embedding-in-pipeline-split\n"
                   "--account-for-loss-in-pipeline-split\n",
                l->vpp);
    else if (l->first_stage_layers || l->last_stage_layers)
        fprintf(f, "--decoder-first-pipeline-num-layers %d\n--decoder-last-pipeline-num-layers %d\n",
                layout_chunk_layers(l, m, 0), layout_chunk_layers(l, m, l->pp * l->vpp - 1));
    fprintf(f, "--micro-batch-size %d\n--global-batch-size %d\n", l->micro_batch,
            l->global_batch);
    if (!l->flash_attention)
        /* materialized scores as planned (an old release's, or --attention
         * eager); today's Megatron-LM picks a fused kernel unless told */
        fprintf(f, "--attention-backend unfused\n");
    if (l->sequence_parallel)
        fprintf(f, "--sequence-parallel\n");
    if (l->zero >= 2)
        /* Megatron-FSDP asserts the fsdp_dtensor checkpoint format and
         * CUDA_DEVICE_MAX_CONNECTIONS other than 1 (megatron/training/
         * arguments.py, validate_args) */
        fprintf(f, "--use-megatron-fsdp\n--data-parallel-sharding-strategy %s\n"
                   "--ckpt-format fsdp_dtensor\n"
                   "# Megatron-FSDP: leave CUDA_DEVICE_MAX_CONNECTIONS unset or above 1\n",
                l->zero == 3 ? "optim_grads_params" : "optim_grads");
    else if (l->distributed_optimizer || l->zero == 1)
        fprintf(f, "--use-distributed-optimizer\n");
    if (l->recompute == RECOMPUTE_SELECTIVE) {
        fprintf(f, "--recompute-granularity selective\n");
        if (l->recompute_modules &&
            put_modules(f, "--recompute-modules %s\n", " ", l->recompute_modules, err))
            return ERR_RUNTIME;
    } else if (l->recompute == RECOMPUTE_FULL && l->recompute_layers > 0)
        fprintf(f, "--recompute-granularity full\n--recompute-method block\n"
                   "--recompute-num-layers %d\n",
                l->recompute_layers);
    else if (l->recompute == RECOMPUTE_FULL)
        fprintf(f, "--recompute-granularity full\n--recompute-method uniform\n"
                   "--recompute-num-layers 1\n");
    if (l->precision == PRECISION_FP16)
        fprintf(f, "--fp16\n");
    else if (l->precision != PRECISION_FP32)
        fprintf(f, "--bf16\n");
    if (fp8_recipe(l->precision))
        fprintf(f, "--fp8-format hybrid\n--fp8-recipe %s\n", fp8_recipe(l->precision));
    if (l->precision == PRECISION_NVFP4)
        fprintf(f, "--fp4-format e2m1\n--fp4-recipe nvfp4\n");
    if (l->grad_bytes == 2 && l->precision != PRECISION_FP16)
        fprintf(f, "--grad-reduce-in-bf16\n");
    bool overlap_grads = o->overlap_grad_reduce && l->dp * l->cp > 1;
    if (overlap_grads)
        fprintf(f, "--overlap-grad-reduce\n");
    /* Megatron asserts --overlap-grad-reduce with it (validate_args) */
    if (o->overlap_param_gather && overlap_grads && (l->distributed_optimizer || l->zero >= 1))
        fprintf(f, "--overlap-param-gather\n");
    if (o->tp_comm_overlap && l->tp > 1 && l->sequence_parallel)
        fprintf(f, "--tp-comm-overlap\n");
    return ERR_OK;
}

/* ------------------------------------------------------------ Megatron-Bridge */

static int write_nemo(const model_t *m, const layout_t *l, const sim_options_t *o, FILE *f,
                      const char *framework, err_t *err)
{
    const char *prec = layout_bridge_precision(l->precision);
    if (!prec || l->recompute == RECOMPUTE_OPS)
        return err_setf(err, ERR_INPUT, NULL, "--emit",
                        "Megatron-Bridge has no %s",
                        prec ? "op-level selective recompute" : layout_precision_name(l->precision));
    fprintf(f, "# %s: Megatron-Bridge recipe overrides written by scaleplan\n", m->display);
    if (framework && strncmp(framework, "nemo-", 5) == 0)
        /* NeMo 1.0 (24.x) read Hydra YAML keys (model.micro_batch_size,
         * model.optim.name, ...) and NeMo 2.0 NeMo-Run recipe keys
         * (trainer.strategy.*, data.*): the layout's values carry over,
         * these names are Megatron-Bridge's, NeMo's successor */
        fprintf(f, "# planned for %s; these are Megatron-Bridge's key names (NeMo 1.0's Hydra "
                   "YAML and NeMo 2.0's recipe keys differ; the values carry over)\n",
                framework);
    fprintf(f, "model.tensor_model_parallel_size=%d\nmodel.pipeline_model_parallel_size=%d\n"
               "model.context_parallel_size=%d\n",
            l->tp, l->pp, l->cp);
    if (model_is_moe(m))
        fprintf(f, "model.expert_model_parallel_size=%d\nmodel.expert_tensor_parallel_size=%d\n",
                l->ep, layout_etp(l));
    fprintf(f, "model.virtual_pipeline_model_parallel_size=%s",
            l->vpp > 1 ? "" : "null\n");
    if (l->vpp > 1)
        fprintf(f, "%d\n", l->vpp);
    if (l->first_stage_layers || l->last_stage_layers) {
        if (l->vpp > 1)
            fprintf(f, "model.account_for_embedding_in_pipeline_split=true\n"
                       "model.account_for_loss_in_pipeline_split=true\n");
        else
            fprintf(f, "model.num_layers_in_first_pipeline_stage=%d\n"
                       "model.num_layers_in_last_pipeline_stage=%d\n",
                    layout_chunk_layers(l, m, 0), layout_chunk_layers(l, m, l->pp - 1));
    }
    fprintf(f, "model.sequence_parallel=%s\nmodel.seq_length=%d\n",
            l->sequence_parallel ? "true" : "false", l->seq_len);
    fprintf(f, "train.micro_batch_size=%d\ntrain.global_batch_size=%d\n", l->micro_batch,
            l->global_batch);
    if (l->recompute == RECOMPUTE_SELECTIVE) {
        fprintf(f, "model.recompute_granularity=selective\n");
        if (l->recompute_modules &&
            put_modules(f, "model.recompute_modules=[%s]\n", ",", l->recompute_modules, err))
            return ERR_RUNTIME;
    } else if (l->recompute == RECOMPUTE_FULL && l->recompute_layers > 0)
        fprintf(f, "model.recompute_granularity=full\nmodel.recompute_method=block\n"
                   "model.recompute_num_layers=%d\n",
                l->recompute_layers);
    else if (l->recompute == RECOMPUTE_FULL)
        fprintf(f, "model.recompute_granularity=full\nmodel.recompute_method=uniform\n"
                   "model.recompute_num_layers=1\n");
    else
        fprintf(f, "model.recompute_granularity=null\n");
    fprintf(f, "ddp.use_distributed_optimizer=%s\n",
            l->distributed_optimizer || l->zero == 1 ? "true" : "false");
    if (l->zero >= 2)
        /* Bridge asserts the fsdp_dtensor format for Megatron-FSDP runs that
         * save or load checkpoints (training/config.py) */
        fprintf(f, "ddp.use_megatron_fsdp=true\nddp.data_parallel_sharding_strategy=%s\n"
                   "checkpoint.ckpt_format=fsdp_dtensor\n",
                l->zero == 3 ? "optim_grads_params" : "optim_grads");
    fprintf(f, "ddp.grad_reduce_in_fp32=%s\n", l->grad_bytes == 4 ? "true" : "false");
    fprintf(f, "ddp.overlap_grad_reduce=%s\nddp.overlap_param_gather=%s\n",
            o->overlap_grad_reduce ? "true" : "false", o->overlap_param_gather ? "true" : "false");
    fprintf(f, "comm_overlap.tp_comm_overlap=%s\n",
            o->tp_comm_overlap && l->tp > 1 && l->sequence_parallel ? "true" : "false");
    fprintf(f, "mixed_precision=%s\n", prec);
    if (model_is_moe(m))
        nemo_moe_options(o, f);
    return ERR_OK;
}

/* ------------------------------------------------------------ DeepSpeed */

static int write_deepspeed(const model_t *m, const layout_t *l, const sim_options_t *o,
                           FILE *f, err_t *err)
{
    if (l->recompute_layers > 0)
        return err_setf(err, ERR_INPUT, NULL, "--emit",
                        "recomputing the first %d layers of each stage is Megatron's block "
                        "recompute; the DeepSpeed launch checkpoints every layer or none",
                        l->recompute_layers);
    if (model_is_moe(m))
        return err_setf(err, ERR_INPUT, NULL, "--emit",
                        "the DeepSpeed launch written here is for dense models; %s is a "
                        "mixture of experts (use --emit megatron or nemo)",
                        m->name);
    if (l->recompute == RECOMPUTE_OPS || l->recompute == RECOMPUTE_SELECTIVE)
        return err_setf(err, ERR_INPUT, NULL, "--emit",
                        "DeepSpeed checkpoints whole layers (full recompute) or nothing");
    if (layout_precision_quantized(l->precision))
        return err_setf(err, ERR_INPUT, NULL, "--emit",
                        "DeepSpeed configs carry no %s recipe (bf16 or fp16)",
                        layout_precision_name(l->precision));
    int zero = l->zero > 0 ? l->zero : l->distributed_optimizer ? 1 : 0;
    fprintf(f, "{\n");
    fprintf(f, "  \"train_batch_size\": %d,\n", l->global_batch);
    fprintf(f, "  \"train_micro_batch_size_per_gpu\": %d,\n", l->micro_batch);
    fprintf(f, "  \"gradient_accumulation_steps\": %d,\n", l->grad_accum);
    fprintf(f, "  \"zero_optimization\": {\n");
    fprintf(f, "    \"stage\": %d,\n", zero);
    fprintf(f, "    \"overlap_comm\": %s,\n", o->overlap_grad_reduce ? "true" : "false");
    fprintf(f, "    \"contiguous_gradients\": true,\n");
    fprintf(f, "    \"reduce_bucket_size\": %.0f\n", o->bucket_params);
    fprintf(f, "  },\n");
    if (l->precision == PRECISION_FP16)
        fprintf(f, "  \"fp16\": {\"enabled\": true},\n");
    else if (l->precision == PRECISION_BF16)
        fprintf(f, "  \"bf16\": {\"enabled\": true},\n");
    fprintf(f, "  \"activation_checkpointing\": {\"partition_activations\": false, "
               "\"contiguous_memory_optimization\": false},\n");
    fprintf(f, "  \"steps_per_print\": 10,\n");
    fprintf(f, "  \"wall_clock_breakdown\": false\n");
    fprintf(f, "}\n");
    /* JSON has no comments: the file is the document alone (DeepSpeed's
     * json.load refuses anything after it); the launcher arguments are
     * launch_deepspeed_args' */
    (void)m;
    return ERR_OK;
}

void launch_deepspeed_args(const layout_t *l, char *out, size_t cap)
{
    snprintf(out, cap,
             "--tensor-model-parallel-size %d --pipeline-model-parallel-size %d "
             "--micro-batch-size %d --global-batch-size %d --seq-length %d%s%s",
             l->tp, l->pp, l->micro_batch, l->global_batch, l->seq_len,
             l->recompute == RECOMPUTE_FULL ? " --checkpoint-activations" : "",
             l->pp == 1 ? " --no-pipeline-parallel" : "");
}

/* ------------------------------------------------------------ torchtitan */

/* torchtitan's [model] name and flavor of m (a comment where torchtitan
 * has no flavor of it). */
static void tt_model_section(FILE *f, const model_t *m)
{
    const model_torchtitan_t *tt = model_torchtitan_of(m->name);
    fprintf(f, "[model]\n");
    if (tt)
        fprintf(f, "name = \"%s\"\nflavor = \"%s\"\n", tt->name, tt->flavor);
    else
        fprintf(f, "# %s has no torchtitan flavor: add its name and flavor\n", m->name);
}

/* pipeline_parallel_split_points: "layers.N" where each stage after the
 * first begins. */
static void tt_split_points(FILE *f, const model_t *m, const layout_t *l)
{
    fprintf(f, "pipeline_parallel_split_points = [");
    int at = 0;
    for (int vs = 0; vs < l->pp * l->vpp - 1; vs++) {
        at += layout_chunk_layers(l, m, vs);
        fprintf(f, "%s\"layers.%d\"", vs ? ", " : "", at);
    }
    fprintf(f, "]\n");
}

/* The [activation_checkpoint] section (the same keys in every version). */
static void tt_checkpointing(FILE *f, const layout_t *l)
{
    fprintf(f, "\n[activation_checkpoint]\n");
    fprintf(f, "mode = \"%s\"\n", l->recompute == RECOMPUTE_FULL  ? "full"
                                  : l->recompute == RECOMPUTE_OPS ? "selective"
                                                                  : "none");
    if (l->recompute == RECOMPUTE_OPS)
        fprintf(f, "selective_ac_option = \"op\"\n");
}

/* The layers of each pipeline stage, as the torchtitan that runs the
 * layout places them: torchtitan of mid 2025 takes the stage boundaries
 * (pipeline_parallel_split_points, "layers.N" where each stage after the
 * first begins); later ones derive the stages from the layers per stage
 * and what the first and last stages hold less (the embedding and the
 * output head counted as layers; torchtitan distributed/pipeline_parallel.py
 * _get_pipeline_metadata), which here are the middle stages' layers and
 * the first and last stages' shortfall. */
static int write_torchtitan_stages(const model_t *m, const layout_t *l, bool late_2025, FILE *f,
                                   err_t *err)
{
    int V = l->pp * l->vpp;
    if (late_2025) {
        int first = layout_chunk_layers(l, m, 0), last = layout_chunk_layers(l, m, V - 1);
        int middle = V > 2 ? layout_chunk_layers(l, m, 1) : first > last ? first : last;
        if (first > middle || last > middle)
            return err_setf(err, ERR_INPUT, NULL, "--emit",
                            "torchtitan's stage split gives the first and last stages at most "
                            "the middle stages' layers (%d), not %d and %d",
                            middle, first, last);
        fprintf(f, "pipeline_parallel_layers_per_stage = %d\n", middle);
        fprintf(f, "pipeline_parallel_first_stage_less_layers = %d\n", middle - first);
        fprintf(f, "pipeline_parallel_last_stage_less_layers = %d\n", middle - last);
        return ERR_OK;
    }
    if (layout_chunk_layers(l, m, 0) == 0 || layout_chunk_layers(l, m, V - 1) == 0) {
        /* the embedding or the output alone on a stage has no "layers.N"
         * split point; one layer a stage with the embedding and the output
         * counted as a layer each (the default weights since torchtitan
         * 2025-04) gives exactly that split */
        if (V > 2 && layout_chunk_layers(l, m, 1) == 1 && layout_chunk_layers(l, m, 0) == 0 &&
            layout_chunk_layers(l, m, V - 1) == 0) {
            fprintf(f, "pipeline_parallel_layers_per_stage = 1\n");
            return ERR_OK;
        }
        return err_setf(err, ERR_INPUT, NULL, "--emit",
                        "torchtitan's split points cannot leave a stage without layers except "
                        "as one layer a stage with the embedding and the output alone");
    }
    tt_split_points(f, m, l);
    return ERR_OK;
}

/* late_2025: the job config of torchtitan of late 2025 (the torchtitan-2025-12
 * preset, and whatever runs expert parallelism or DualPipeV), else that of
 * mid 2025. */
static int write_torchtitan(const model_t *m, const layout_t *l, const sim_options_t *o,
                            bool late_2025, FILE *f, err_t *err)
{
    if (l->recompute_layers > 0)
        return err_setf(err, ERR_INPUT, NULL, "--emit",
                        "recomputing the first %d layers of each stage is Megatron's block "
                        "recompute; torchtitan's full activation checkpointing covers every "
                        "layer",
                        l->recompute_layers);
    if (l->recompute == RECOMPUTE_SELECTIVE)
        return err_setf(err, ERR_INPUT, NULL, "--emit",
                        "torchtitan has no Megatron selective recompute (its selective "
                        "checkpointing is op-level: recompute=ops)");
    if (l->precision == PRECISION_FP8 || l->precision == PRECISION_FP8_BLOCK ||
        l->precision == PRECISION_NVFP4 || l->precision == PRECISION_MXFP4 ||
        l->precision == PRECISION_FP16)
        return err_setf(err, ERR_INPUT, NULL, "--emit", "torchtitan has no %s recipe",
                        layout_precision_name(l->precision));
    if (l->zero == 1 || (l->distributed_optimizer && l->zero == 0))
        return err_setf(err, ERR_INPUT, NULL, "--emit",
                        "torchtitan shards with FSDP (ZeRO-2/3) or replicates (ZeRO-0)");
    (void)o;
    int shard = l->zero >= 2 ? l->dp : 1, replicate = l->zero >= 2 ? 1 : l->dp;
    fprintf(f, "# %s: torchtitan job config written by scaleplan\n", m->display);
    bool fp8 = l->precision == PRECISION_FP8_CS || l->precision == PRECISION_FP8_ROWWISE ||
               l->precision == PRECISION_MXFP8;
    tt_model_section(f, m);
    if (fp8)
        fprintf(f, "converters = [\"%s\"]\n", l->precision == PRECISION_MXFP8 ? "mx" : "float8");
    fprintf(f, "\n");
    fprintf(f, "[parallelism]\n");
    fprintf(f, "data_parallel_replicate_degree = %d\n", replicate);
    fprintf(f, "data_parallel_shard_degree = %d\n", shard);
    fprintf(f, "fsdp_reshard_after_forward = \"%s\"\n", l->zero == 2 ? "never" : "default");
    fprintf(f, "tensor_parallel_degree = %d\n", l->tp);
    fprintf(f, "context_parallel_degree = %d\n", l->cp);
    if (l->ep > 1) {
        /* experts take EP of the data-parallel shard ranks (torchtitan's
         * dp2ep); expert TP is TP or 1 */
        fprintf(f, "expert_parallel_degree = %d\n", l->ep);
        fprintf(f, "expert_tensor_parallel_degree = %d\n", layout_etp(l));
    }
    fprintf(f, "pipeline_parallel_degree = %d\n", l->pp);
    if (l->pp > 1) {
        const char *sched = l->schedule == SCHEDULE_INTERLEAVED ? "Interleaved1F1B"
                            : l->schedule == SCHEDULE_DUALPIPEV ? "DualPipeV"
                            : l->schedule == SCHEDULE_GPIPE     ? "GPipe"
                                                                : "1F1B";
        fprintf(f, "pipeline_parallel_schedule = \"%s\"\n", sched);
        fprintf(f, "pipeline_parallel_microbatch_size = %d\n", l->micro_batch);
        int rc = write_torchtitan_stages(m, l, late_2025, f, err);
        if (rc)
            return rc;
    }
    if (l->tp > 1)
        fprintf(f, "enable_async_tensor_parallel = %s\n", o->tp_comm_overlap ? "true" : "false");
    fprintf(f, "\n[training]\n");
    /* the batch a rank runs at once: with pipeline stages the step's
     * micro-batches (split by pipeline_parallel_microbatch_size), without
     * them one micro-batch, accumulated up to global_batch_size */
    fprintf(f, "local_batch_size = %d\n",
            l->pp > 1 ? l->global_batch / (l->dp > 0 ? l->dp : 1) : l->micro_batch);
    fprintf(f, "global_batch_size = %d\n", l->global_batch);
    fprintf(f, "seq_len = %d\n", l->seq_len);
    fprintf(f, "mixed_precision_param = \"%s\"\n", l->precision == PRECISION_FP32 ? "float32"
                                                                                    : "bfloat16");
    /* the gradient reduction's dtype and torch.compile as the simulation
     * assumed them (the preset's reduce_bytes; eager kernels unless the
     * options are compiled's); PyTorch's DualPipeV refuses compiled stage
     * modules */
    fprintf(f, "mixed_precision_reduce = \"%s\"\n", o->reduce_bytes == 2 ? "bfloat16" : "float32");
    bool compiled = o->eager_norm <= 1 && o->eager_rope <= 1 && o->eager_act <= 1 &&
                    l->schedule != SCHEDULE_DUALPIPEV;
    /* torchtitan of late 2025 moved compile to its own [compile] section
     * (torchtitan c08fa570a torchtitan/config/job_config.py) */
    if (!late_2025)
        fprintf(f, "compile = %s\n", compiled ? "true" : "false");
    tt_checkpointing(f, l);
    if (fp8 && l->precision != PRECISION_MXFP8)
        fprintf(f, "\n[float8]\nrecipe_name = \"%s\"\n",
                l->precision == PRECISION_FP8_ROWWISE ? "rowwise" : "tensorwise");
    if (late_2025)
        fprintf(f, "\n[compile]\nenable = %s\n", compiled ? "true" : "false");
    return ERR_OK;
}

/* torchtitan of December 2024 (9dec370, the Dec-2024 benchmarks' commit):
 * its argparse keys ([training] batch_size and degrees, pipeline and CP
 * under [experimental], [float8] enable_float8_linear); no gradient
 * accumulation, no expert parallelism, no DualPipeV, no rowwise or MX
 * float8, no choice of resharding. */
static int write_torchtitan_2024(const model_t *m, const layout_t *l, const sim_options_t *o,
                                 FILE *f, err_t *err)
{
    if (l->ep > 1 || l->schedule == SCHEDULE_DUALPIPEV)
        return err_setf(err, ERR_INPUT, NULL, "--emit",
                        "torchtitan of December 2024 has no %s (plan with torchtitan-2025-12)",
                        l->ep > 1 ? "expert parallelism" : "DualPipeV schedule");
    if (l->precision == PRECISION_FP8_ROWWISE || l->precision == PRECISION_MXFP8)
        return err_setf(err, ERR_INPUT, NULL, "--emit",
                        "torchtitan of December 2024 has tensor-wise Float8 only, not %s",
                        layout_precision_name(l->precision));
    if (l->zero == 2 && l->pp <= 1)
        return err_setf(err, ERR_INPUT, NULL, "--emit",
                        "torchtitan of December 2024 reshards after the forward (ZeRO-3) "
                        "without pipeline stages; ZeRO-2 cannot be written");
    if (l->pp <= 1 && l->grad_accum > 1)
        return err_setf(err, ERR_INPUT, NULL, "--emit",
                        "torchtitan of December 2024 has no gradient accumulation: the step's "
                        "%d micro-batches per rank cannot be written",
                        l->grad_accum);
    int shard = l->zero >= 2 ? l->dp : 1, replicate = l->zero >= 2 ? 1 : l->dp;
    int local = l->pp > 1 ? l->global_batch / (l->dp > 0 ? l->dp : 1) : l->micro_batch;
    bool fp8 = l->precision == PRECISION_FP8_CS || l->precision == PRECISION_FP8;
    bool compiled = o->eager_norm <= 1 && o->eager_rope <= 1 && o->eager_act <= 1;
    fprintf(f, "# %s: torchtitan job config (December 2024 keys) written by scaleplan\n",
            m->display);
    tt_model_section(f, m);
    fprintf(f, "\n[training]\n");
    fprintf(f, "batch_size = %d\n", local);
    fprintf(f, "seq_len = %d\n", l->seq_len);
    fprintf(f, "data_parallel_replicate_degree = %d\n", replicate);
    fprintf(f, "data_parallel_shard_degree = %d\n", shard);
    fprintf(f, "tensor_parallel_degree = %d\n", l->tp);
    fprintf(f, "mixed_precision_param = \"%s\"\n",
            l->precision == PRECISION_FP32 ? "float32" : "bfloat16");
    fprintf(f, "mixed_precision_reduce = \"%s\"\n", o->reduce_bytes == 2 ? "bfloat16" : "float32");
    fprintf(f, "compile = %s\n", compiled ? "true" : "false");
    fprintf(f, "\n[experimental]\n");
    fprintf(f, "context_parallel_degree = %d\n", l->cp);
    fprintf(f, "pipeline_parallel_degree = %d\n", l->pp);
    if (l->pp > 1) {
        fprintf(f, "pipeline_parallel_schedule = \"%s\"\n",
                l->schedule == SCHEDULE_INTERLEAVED ? "Interleaved1F1B"
                : l->schedule == SCHEDULE_GPIPE     ? "GPipe"
                                                    : "1F1B");
        fprintf(f, "pipeline_parallel_microbatches = %d\n", l->grad_accum);
        tt_split_points(f, m, l);
    }
    if (l->tp > 1)
        fprintf(f, "enable_async_tensor_parallel = %s\n",
                o->tp_comm_overlap && compiled ? "true" : "false");
    tt_checkpointing(f, l);
    if (fp8)
        fprintf(f, "\n[float8]\nenable_float8_linear = true\n");
    return ERR_OK;
}

int launch_write(launch_kind_t k, const model_t *m, const layout_t *l, const sim_options_t *o,
                 FILE *out, err_t *err)
{
    return launch_write_for(k, NULL, m, l, o, out, err);
}

int launch_write_for(launch_kind_t k, const char *framework, const model_t *m, const layout_t *l,
                     const sim_options_t *o, FILE *out, err_t *err)
{
    int rc;
    if ((k == LAUNCH_MEGATRON || k == LAUNCH_NEMO) && model_has_full_attn(m))
        /* their GPT model arguments give every block one head size and one
         * number of query groups */
        return err_setf(err, ERR_INPUT, NULL, "--emit",
                        "%s's GPT arguments cannot give %s's full-attention blocks their own "
                        "head size (%d) and key/value heads (%d)",
                        k == LAUNCH_MEGATRON ? "Megatron-LM" : "NeMo", m->display,
                        m->full_attn.head_dim, m->full_attn.n_kv_heads);
    if (k == LAUNCH_TORCHTITAN && framework && strcmp(framework, "torchtitan-2024-12") == 0) {
        rc = write_torchtitan_2024(m, l, o, out, err);
        if (!rc && ferror(out))
            rc = err_set(err, ERR_RUNTIME, "cannot write the launch configuration");
        return rc;
    }
    switch (k) {
    case LAUNCH_MEGATRON:
        rc = write_megatron(m, l, o, out, framework, err);
        break;
    case LAUNCH_NEMO:
        rc = write_nemo(m, l, o, out, framework, err);
        break;
    case LAUNCH_DEEPSPEED:
        rc = write_deepspeed(m, l, o, out, err);
        break;
    case LAUNCH_TORCHTITAN: {
        /* expert parallelism and DualPipeV need a torchtitan of late 2025 */
        bool late = (framework && strcmp(framework, "torchtitan-2025-12") == 0) || l->ep > 1 ||
                    l->schedule == SCHEDULE_DUALPIPEV;
        rc = write_torchtitan(m, l, o, late, out, err);
        break;
    }
    default:
        return err_set(err, ERR_RUNTIME, "unknown launch format");
    }
    if (!rc && ferror(out))
        rc = err_set(err, ERR_RUNTIME, "cannot write the launch configuration");
    return rc;
}
