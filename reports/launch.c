#include "reports/launch.h"

#include <ctype.h>
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
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

static const char *bridge_precision(precision_t p)
{
    switch (p) {
    case PRECISION_BF16:
        return "bf16_mixed";
    case PRECISION_FP16:
        return "fp16_mixed";
    case PRECISION_FP8:
        return "bf16_with_fp8_delayed_scaling_mixed";
    case PRECISION_FP8_CS:
        return "bf16_with_fp8_current_scaling_mixed";
    case PRECISION_MXFP8:
        return "bf16_with_mxfp8_mixed";
    case PRECISION_FP8_BLOCK:
        return "bf16_with_fp8_subchannel_scaling_mixed";
    case PRECISION_NVFP4:
        return "bf16_with_nvfp4_mixed";
    default:
        return NULL;
    }
}

static int write_nemo(const model_t *m, const layout_t *l, const sim_options_t *o, FILE *f,
                      const char *framework, err_t *err)
{
    const char *prec = bridge_precision(l->precision);
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

bool launch_planned_for(const char *text, char *name, size_t cap)
{
    static const char tag[] = "# planned for ";
    for (const char *p = text; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
        if (strncmp(p, tag, sizeof tag - 1) != 0)
            continue;
        const char *b = p + sizeof tag - 1;
        size_t n = strcspn(b, "; \n");
        if (n == 0 || n >= cap)
            return false;
        memcpy(name, b, n);
        name[n] = '\0';
        return true;
    }
    return false;
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

/* ------------------------------------------------------------ reading back */

static int to_int(const char *v, const char *origin, int line, const char *key, int *out,
                  err_t *err)
{
    char *end;
    long x = strtol(v, &end, 10);
    if (end == v || *end || x < 0 || x > (1L << 30))
        return err_setf(err, ERR_INPUT, origin, NULL, "line %d: %s: not a whole number ('%s')",
                        line, key, v);
    *out = (int)x;
    return ERR_OK;
}

static int to_bool(const char *v, const char *origin, int line, const char *key, bool *out,
                   err_t *err)
{
    if (strcmp(v, "true") == 0 || strcmp(v, "True") == 0)
        *out = true;
    else if (strcmp(v, "false") == 0 || strcmp(v, "False") == 0)
        *out = false;
    else
        return err_setf(err, ERR_INPUT, origin, NULL, "line %d: %s: use true or false ('%s')",
                        line, key, v);
    return ERR_OK;
}

/* One word of a Bridge launch command or override list: shell-like
 * splitting at blanks, '\\' + newline continuing the line, '#' comments,
 * quotes removed. Returns false at the end of the text. */
typedef struct {
    const char *s;
    size_t pos;
    int line;
} words_in_t;

static bool next_word(words_in_t *in, char *out, size_t cap, int *line)
{
    const char *s = in->s;
    for (;;) {
        while (s[in->pos] == ' ' || s[in->pos] == '\t' || s[in->pos] == '\r' ||
               s[in->pos] == '\n' || (s[in->pos] == '\\' && s[in->pos + 1] == '\n')) {
            if (s[in->pos] == '\\')
                in->pos++;
            if (s[in->pos] == '\n')
                in->line++;
            in->pos++;
        }
        if (s[in->pos] != '#')
            break;
        while (s[in->pos] && s[in->pos] != '\n')
            in->pos++;
    }
    if (!s[in->pos])
        return false;
    *line = in->line;
    size_t n = 0;
    char quote = 0;
    while (s[in->pos] && (quote || !strchr(" \t\r\n", s[in->pos]))) {
        char c = s[in->pos++];
        if (!quote && (c == '\'' || c == '"')) {
            quote = c;
            continue;
        }
        if (quote && c == quote) {
            quote = 0;
            continue;
        }
        if (c == '\n')
            in->line++;
        if (n + 1 < cap)
            out[n++] = c;
    }
    out[n] = '\0';
    return true;
}

/* Whether word is KEY=VALUE with a dotted config key (model.x, train.y)
 * or the mixed_precision recipe. */
static bool override_word(const char *w)
{
    const char *eq = strchr(w, '=');
    if (!eq || eq == w)
        return false;
    if ((size_t)(eq - w) == strlen("mixed_precision") && strncmp(w, "mixed_precision", 15) == 0)
        return true;
    bool dot = false;
    for (const char *p = w; p < eq; p++) {
        if (*p == '.')
            dot = true;
        else if (!(isalnum((unsigned char)*p) || *p == '_'))
            return false;
    }
    return dot;
}

static int perf_flag(const char *w);
static bool perf_value(const char *text, int f, char *out, size_t cap);

int launch_nemo_recipe(const char *text, char *recipe, size_t cap)
{
    words_in_t in = {text, 0, 1};
    char w[512];
    int line;
    bool next = false;
    recipe[0] = '\0';
    while (next_word(&in, w, sizeof w, &line)) {
        if (next) {
            snprintf(recipe, cap, "%s", w);
            next = false;
        } else if (strcmp(w, "--recipe") == 0) {
            next = true;
        } else if (strncmp(w, "--recipe=", 9) == 0) {
            snprintf(recipe, cap, "%s", w + 9);
        } else if (strcmp(w, "-mr") == 0 || strcmp(w, "--model_recipe_name") == 0) {
            /* the performance launcher names the model part alone
             * (llama31_405b): as a pretraining recipe */
            if (next_word(&in, w, sizeof w, &line))
                snprintf(recipe, cap, "%s_pretrain", w);
        }
    }
    if (!recipe[0]) {
        /* the launcher of Bridge v0.2: -m MODEL -s SIZE (llama3 70b) */
        char m[128], sz[128];
        int fm = perf_flag("--model_name"), fs = perf_flag("-s"), ff = perf_flag("-m");
        if (perf_value(text, fs, sz, sizeof sz) &&
            (perf_value(text, fm, m, sizeof m) || perf_value(text, ff, m, sizeof m)))
            snprintf(recipe, cap, "%s_%s_pretrain", m, sz);
    }
    return recipe[0] ? 1 : 0;
}

int launch_nemo_recipe_parts(const char *recipe, launch_recipe_t *out)
{
    memset(out, 0, sizeof *out);
    out->precision = -1;
    /* <model>_<pretrain|sft|peft|finetune>_<N>gpu_<gpu>_<precision>[_...]_config */
    static const char *const kinds[] = {"_pretrain", "_sft", "_peft", "_finetune"};
    const char *cut = NULL;
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++) {
        const char *at = strstr(recipe, kinds[i]);
        if (at && (!cut || at < cut))
            cut = at;
    }
    if (!cut || cut == recipe)
        return 0;
    /* the model: its words joined by '-', Bridge's llama31 / llama32 /
     * qwen25 / 1p5b spellings as the catalog writes them */
    char name[sizeof out->model] = "";
    size_t n = 0;
    if ((size_t)(cut - recipe) >= sizeof name)
        return 0; /* longer than any catalog name: not a model part scaleplan knows */
    for (const char *p = recipe; p < cut; p++) {
        if (*p == '_')
            name[n++] = '-';
        else if (*p == 'p' && p > recipe && isdigit((unsigned char)p[-1]) && p + 1 < cut &&
                 isdigit((unsigned char)p[1]))
            name[n++] = '.';
        else
            name[n++] = *p;
    }
    name[n] = '\0';
    static const struct {
        const char *bridge, *catalog;
    } FAMILY[] = {{"llama31-", "llama3.1-"}, {"llama32-", "llama3.2-"}, {"llama33-", "llama3.3-"},
                  {"qwen25-", "qwen2.5-"},   {"qwen35-", "qwen3.5-"}};
    for (size_t i = 0; i < sizeof FAMILY / sizeof FAMILY[0]; i++) {
        size_t k = strlen(FAMILY[i].bridge);
        if (strncmp(name, FAMILY[i].bridge, k) == 0) {
            char rest[sizeof name];
            snprintf(rest, sizeof rest, "%s", name + k);
            int w = snprintf(name, sizeof name, "%s%s", FAMILY[i].catalog, rest);
            if (w < 0 || (size_t)w >= sizeof name)
                return 0; /* as above: no catalog name is that long */
            break;
        }
    }
    snprintf(out->model, sizeof out->model, "%s", name);
    /* _<N>gpu_<gpu>_<precision> */
    const char *p = strchr(cut + 1, '_');
    char gpu[16] = "";
    int gpus = 0;
    if (p && sscanf(p, "_%dgpu_%15[a-z0-9]", &gpus, gpu) == 2 && gpus > 0) {
        out->gpus = gpus;
        static const struct {
            const char *bridge, *catalog;
        } GPUS[] = {{"h100", "h100-sxm"}, {"h200", "h200"},   {"b200", "b200"}, {"b300", "b300"},
                    {"gb200", "gb200"},   {"gb300", "gb300"}, {"a100", "a100-80g"}};
        for (size_t i = 0; i < sizeof GPUS / sizeof GPUS[0]; i++)
            if (strcmp(gpu, GPUS[i].bridge) == 0)
                snprintf(out->gpu, sizeof out->gpu, "%s", GPUS[i].catalog);
        const char *q = strstr(p, gpu) + strlen(gpu);
        static const struct {
            const char *word;
            precision_t precision;
        } PREC[] = {{"_bf16", PRECISION_BF16},     {"_fp8cs", PRECISION_FP8_CS},
                    {"_fp8mx", PRECISION_MXFP8},   {"_fp8sc", PRECISION_FP8_BLOCK},
                    {"_fp8ds", PRECISION_FP8},     {"_nvfp4", PRECISION_NVFP4}};
        for (size_t i = 0; i < sizeof PREC / sizeof PREC[0]; i++) {
            size_t k = strlen(PREC[i].word);
            if (strncmp(q, PREC[i].word, k) == 0 && (q[k] == '_' || q[k] == '\0'))
                out->precision = (int)PREC[i].precision;
        }
    }
    return 1;
}

/* Megatron-Bridge's performance launcher (scripts/performance/
 * setup_experiment.py, argument_parser.py): the flags that set the layout,
 * each with the override key it stands for, and those that name the run. */
typedef enum { PF_INT, PF_VPP, PF_BOOL, PF_LIST, PF_RUN } perf_kind_t;

static const struct {
    const char *shrt, *lng;
    const char *key; /* the override it sets ("" for the run's naming flags) */
    perf_kind_t kind;
} PERF_FLAGS[] = {
    {"-tp", "--tensor_model_parallel_size", "model.tensor_model_parallel_size", PF_INT},
    {"-pp", "--pipeline_model_parallel_size", "model.pipeline_model_parallel_size", PF_INT},
    {"-cp", "--context_parallel_size", "model.context_parallel_size", PF_INT},
    {"-vp", "--virtual_pipeline_model_parallel_size", "model.virtual_pipeline_model_parallel_size",
     PF_VPP},
    {"-ep", "--expert_model_parallel_size", "model.expert_model_parallel_size", PF_INT},
    {"-et", "--expert_tensor_parallel_size", "model.expert_tensor_parallel_size", PF_INT},
    {"-mb", "--micro_batch_size", "train.micro_batch_size", PF_INT},
    {"-gb", "--global_batch_size", "train.global_batch_size", PF_INT},
    {"-sl", "--seq_length", "model.seq_length", PF_INT},
    {"-rl", "--recompute_num_layers", "model.recompute_num_layers", PF_INT},
    {NULL, "--use_megatron_fsdp", "ddp.use_megatron_fsdp", PF_BOOL},
    {NULL, "--recompute_modules", "model.recompute_modules", PF_LIST},
    {"-m", "--model_family_name", "", PF_RUN},
    {NULL, "--model_name", "", PF_RUN},
    {"-s", "--model_size", "", PF_RUN},
    {NULL, "--task", "", PF_RUN},
    {NULL, "--config_variant", "", PF_RUN},
    {"-mr", "--model_recipe_name", "", PF_RUN},
    {"-ng", "--num_gpus", "", PF_RUN},
    {"-g", "--gpu", "", PF_RUN},
    {"-c", "--compute_dtype", "", PF_RUN},
    {"-gn", "--gpus_per_node", "", PF_RUN},
};

static int perf_flag(const char *w)
{
    for (size_t i = 0; i < sizeof PERF_FLAGS / sizeof PERF_FLAGS[0]; i++)
        if ((PERF_FLAGS[i].shrt && strcmp(w, PERF_FLAGS[i].shrt) == 0) ||
            strcmp(w, PERF_FLAGS[i].lng) == 0)
            return (int)i;
    return -1;
}

/* The value after flag index f in text (the performance launcher's
 * --flag VALUE), or NULL. */
static bool perf_value(const char *text, int f, char *out, size_t cap)
{
    words_in_t in = {text, 0, 1};
    char w[512];
    int line;
    bool next = false, found = false;
    while (next_word(&in, w, sizeof w, &line)) {
        if (next) {
            snprintf(out, cap, "%s", w);
            found = true;
            next = false;
        } else if (perf_flag(w) == f) {
            next = true;
        }
    }
    return found;
}

void launch_nemo_perf_run(const char *text, launch_recipe_t *out)
{
    char v[128];
    int f;
    if ((f = perf_flag("-ng")) >= 0 && perf_value(text, f, v, sizeof v) && atoi(v) > 0)
        out->gpus = atoi(v);
    if ((f = perf_flag("-g")) >= 0 && perf_value(text, f, v, sizeof v)) {
        launch_recipe_t g;
        char name[160]; /* v is under 128 characters: the whole name fits */
        int w = snprintf(name, sizeof name, "x_pretrain_1gpu_%s_bf16_config", v);
        if (w > 0 && (size_t)w < sizeof name && launch_nemo_recipe_parts(name, &g) && g.gpu[0])
            snprintf(out->gpu, sizeof out->gpu, "%s", g.gpu);
    }
    if ((f = perf_flag("-c")) >= 0 && perf_value(text, f, v, sizeof v)) {
        /* bf16, fp8_cs, fp8_mx, fp8_sc, nvfp4: the recipe-name spellings
         * without the underscore */
        char word[32] = "", name[160];
        size_t n = 0;
        for (const char *p = v; *p && n + 1 < sizeof word; p++)
            if (*p != '_')
                word[n++] = *p;
        word[n] = '\0';
        launch_recipe_t g;
        int w = snprintf(name, sizeof name, "x_pretrain_1gpu_h100_%s_config", word);
        if (w > 0 && (size_t)w < sizeof name && launch_nemo_recipe_parts(name, &g) &&
            g.precision >= 0)
            out->precision = g.precision;
    }
}

/* An architecture override must describe the model being simulated. */
static int check_arch(const model_t *m, const char *origin, int line, const char *k,
                      const char *v, err_t *err)
{
    static const struct {
        const char *key;
        size_t offset;
    } ARCH[] = {
        {"model.num_layers", offsetof(model_t, n_layers)},
        {"model.hidden_size", offsetof(model_t, hidden)},
        {"model.num_attention_heads", offsetof(model_t, n_heads)},
        {"model.num_query_groups", offsetof(model_t, n_kv_heads)},
        {"model.ffn_hidden_size", offsetof(model_t, ffn)},
    };
    for (size_t i = 0; i < sizeof ARCH / sizeof ARCH[0]; i++) {
        if (strcmp(k, ARCH[i].key) != 0)
            continue;
        int x, have = *(const int *)((const char *)m + ARCH[i].offset);
        int rc = to_int(v, origin, line, k, &x, err);
        if (rc)
            return rc;
        if (x != have)
            return err_setf(err, ERR_INPUT, origin, NULL,
                            "line %d: %s=%d, but %s has %d; give --model for a model with this "
                            "architecture (a config.json)",
                            line, k, x, m->display, have);
        return ERR_OK;
    }
    return ERR_OK;
}

int launch_read_nemo(const char *text, const char *origin, const model_t *m, layout_t *l,
                     err_t *err)
{
    return launch_read_nemo_notes(text, origin, m, l, NULL, err);
}

int launch_read_nemo_notes(const char *text, const char *origin, const model_t *m, layout_t *l,
                           notes_t *notes, err_t *err)
{
    int rc = ERR_OK, line = 0, rc_layers = 1;
    bool account = false, fsdp = false, block = false, launcher_noted = false;
    char strategy[32] = "optim_grads_params";
    words_in_t in = {text, 0, 1};
    char word[1024];
    while (!rc && next_word(&in, word, sizeof word, &line)) {
        if (strcmp(word, "--recipe") == 0 || strncmp(word, "--recipe=", 9) == 0)
            notes_add(notes, NOTE_ASSUMED, word,
                      "line %d: the recipe's own settings are not known to scaleplan: the "
                      "framework preset's defaults and these overrides are what is simulated",
                      line);
        int pf = perf_flag(word);
        if (pf >= 0) {
            char value[256];
            int vline;
            if (!next_word(&in, value, sizeof value, &vline))
                return err_setf(err, ERR_INPUT, origin, NULL, "line %d: %s needs a value", line,
                                word);
            if (PERF_FLAGS[pf].kind == PF_RUN)
                continue; /* model, GPUs, precision: read by the caller */
            if (PERF_FLAGS[pf].kind == PF_VPP && (strcmp(value, "None") == 0 ||
                                                  strcmp(value, "-1") == 0))
                snprintf(value, sizeof value, "null");
            if (PERF_FLAGS[pf].kind == PF_INT && strcmp(PERF_FLAGS[pf].key,
                                                        "model.recompute_num_layers") == 0) {
                /* Megatron's block recompute of that many layers */
                block = true;
                l->recompute = RECOMPUTE_FULL;
            }
            if (PERF_FLAGS[pf].kind == PF_LIST) {
                /* the performance scripts' --recompute_modules: selective
                 * recompute of those modules */
                if (layout_parse_recompute_modules(value, word, &l->recompute_modules, err))
                    return err_setf(err, ERR_INPUT, origin, word, "line %d: %s", line, err->msg);
                l->recompute = RECOMPUTE_SELECTIVE;
                continue;
            }
            snprintf(word, sizeof word, "%s=%s", PERF_FLAGS[pf].key, value);
        }
        if (!override_word(word)) {
            /* the launch command around the overrides: the recipe (which
             * names the model: read by launch_nemo_recipe), its options
             * and the launcher, none of which change the layout */
            if (strncmp(word, "--", 2) == 0 && strncmp(word, "--recipe", 8) != 0)
                notes_add(notes, NOTE_IGNORED, word, "line %d: a launcher option: no effect on "
                                                     "the layout",
                          line);
            else if (!launcher_noted && strncmp(word, "--recipe", 8) != 0 &&
                     strchr(word, '=') == NULL) {
                notes_add(notes, NOTE_IGNORED, word,
                          "line %d: the launch command; its overrides are read", line);
                launcher_noted = true;
            } else if (strchr(word, '=') && word[0] != '-')
                notes_add(notes, NOTE_IGNORED, word,
                          "line %d: an environment variable or option without a config key",
                          line);
            continue;
        }
        char *eq = strchr(word, '=');
        *eq = '\0';
        char *k = word, *v = eq + 1;
        if ((rc = check_arch(m, origin, line, k, v, err)))
            break;
        bool b;
        if (strcmp(k, "model.tensor_model_parallel_size") == 0)
            rc = to_int(v, origin, line, k, &l->tp, err);
        else if (strcmp(k, "model.pipeline_model_parallel_size") == 0)
            rc = to_int(v, origin, line, k, &l->pp, err);
        else if (strcmp(k, "model.context_parallel_size") == 0)
            rc = to_int(v, origin, line, k, &l->cp, err);
        else if (strcmp(k, "model.expert_model_parallel_size") == 0)
            rc = to_int(v, origin, line, k, &l->ep, err);
        else if (strcmp(k, "model.expert_tensor_parallel_size") == 0)
            rc = to_int(v, origin, line, k, &l->etp, err);
        else if (strcmp(k, "model.virtual_pipeline_model_parallel_size") == 0) {
            l->vpp = 1;
            if (strcmp(v, "null") != 0 && strcmp(v, "None") != 0)
                rc = to_int(v, origin, line, k, &l->vpp, err);
            l->schedule = l->vpp > 1 ? SCHEDULE_INTERLEAVED : SCHEDULE_1F1B;
        } else if (strcmp(k, "model.num_layers_in_first_pipeline_stage") == 0)
            rc = to_int(v, origin, line, k, &l->first_stage_layers, err);
        else if (strcmp(k, "model.num_layers_in_last_pipeline_stage") == 0)
            rc = to_int(v, origin, line, k, &l->last_stage_layers, err);
        else if (strcmp(k, "model.account_for_embedding_in_pipeline_split") == 0 ||
                 strcmp(k, "model.account_for_loss_in_pipeline_split") == 0)
            rc = to_bool(v, origin, line, k, &account, err);
        else if (strcmp(k, "model.sequence_parallel") == 0) {
            rc = to_bool(v, origin, line, k, &l->sequence_parallel, err);
            l->sp_off = !l->sequence_parallel; /* said off: not implied */
        }
        else if (strcmp(k, "model.seq_length") == 0 || strcmp(k, "dataset.seq_length") == 0)
            rc = to_int(v, origin, line, k, &l->seq_len, err);
        else if (strcmp(k, "train.micro_batch_size") == 0)
            rc = to_int(v, origin, line, k, &l->micro_batch, err);
        else if (strcmp(k, "train.global_batch_size") == 0)
            rc = to_int(v, origin, line, k, &l->global_batch, err);
        else if (strcmp(k, "model.recompute_granularity") == 0) {
            if (strcmp(v, "null") == 0 || strcmp(v, "None") == 0)
                l->recompute = RECOMPUTE_NONE;
            else if ((rc = layout_parse_recompute(v, &l->recompute, err)))
                rc = err_setf(err, ERR_INPUT, origin, NULL, "line %d: %s: %s", line, k, err->msg);
        } else if (strcmp(k, "model.recompute_modules") == 0) {
            if (strcmp(v, "null") != 0 && strcmp(v, "None") != 0 &&
                layout_parse_recompute_modules(v, k, &l->recompute_modules, err))
                rc = err_setf(err, ERR_INPUT, origin, NULL, "line %d: %s", line, err->msg);
        } else if (strcmp(k, "model.recompute_method") == 0)
            block = strcmp(v, "block") == 0;
        else if (strcmp(k, "model.recompute_num_layers") == 0 && strcmp(v, "null") != 0 &&
                 strcmp(v, "None") != 0)
            rc = to_int(v, origin, line, k, &rc_layers, err);
        else if (strcmp(k, "ddp.use_distributed_optimizer") == 0)
            rc = to_bool(v, origin, line, k, &l->distributed_optimizer, err);
        else if (strcmp(k, "ddp.use_megatron_fsdp") == 0)
            rc = to_bool(v, origin, line, k, &fsdp, err);
        else if (strcmp(k, "ddp.data_parallel_sharding_strategy") == 0)
            snprintf(strategy, sizeof strategy, "%s", v);
        else if (strcmp(k, "ddp.grad_reduce_in_fp32") == 0) {
            if (!(rc = to_bool(v, origin, line, k, &b, err)))
                l->grad_bytes = b ? 4 : 2;
        } else if (strcmp(k, "mixed_precision") == 0) {
            precision_t p = PRECISION_BF16;
            bool found = false;
            for (int i = 0; i < PRECISION_COUNT && !found; i++) {
                const char *name = bridge_precision((precision_t)i);
                if (name && strcmp(name, v) == 0) {
                    p = (precision_t)i;
                    found = true;
                }
            }
            if (!found)
                rc = err_setf(err, ERR_INPUT, origin, NULL, "line %d: mixed_precision: unknown "
                                                           "recipe '%s'",
                              line, v);
            l->precision = p;
        }
        /* other keys (overlap switches, ...) do not change the layout */
    }
    if (rc)
        return rc;
    /* block recompute: the first N layers of each virtual stage (N >= 1:
     * Megatron's block with none recomputes nothing, which the recompute
     * setting says more plainly) */
    if (block && l->recompute == RECOMPUTE_FULL && rc_layers < 1)
        return err_setf(err, ERR_INPUT, origin, "model.recompute_num_layers",
                        "block recompute needs at least 1 layer (got %d); set "
                        "model.recompute_granularity=null for none",
                        rc_layers);
    l->recompute_layers = block && l->recompute == RECOMPUTE_FULL ? rc_layers : 0;
    if (l->recompute_modules && l->recompute != RECOMPUTE_SELECTIVE) {
        /* Megatron reads the modules only under selective granularity */
        notes_add(notes, NOTE_IGNORED, "model.recompute_modules",
                  "applies to selective recompute only; this run's is %s",
                  layout_recompute_name(l->recompute));
        l->recompute_modules = 0;
    }
    if (fsdp)
        l->zero = strcmp(strategy, "optim_grads") == 0 ? 2 : 3;
    long stages = (long)(l->pp > 0 ? l->pp : 1) * (l->vpp > 0 ? l->vpp : 1);
    if (!account && l->vpp > 1 && !l->first_stage_layers && !l->last_stage_layers &&
        m->n_layers % stages != 0 && (m->n_layers + 2) % stages == 0) {
        /* the layers split only with the embedding and the loss counted,
         * as Bridge's recipes for such models set it (llama31_405b:
         * account_for_embedding/loss_in_pipeline_split True) */
        account = true;
        notes_add(notes, NOTE_ASSUMED, "model.account_for_embedding_in_pipeline_split",
                  "true with account_for_loss_in_pipeline_split: %d layers split over %ld "
                  "(virtual) stages only with the embedding and the loss counted as layers",
                  m->n_layers, stages);
    }
    if (account && l->vpp > 1 && l->pp > 0) { /* (PP 0 is the layout check's to refuse) */
        /* the embedding and the loss count as one layer each: (L + 2) /
         * (PP x VPP) per chunk, the first and last chunks one lighter */
        long chunks = (long)l->pp * l->vpp;
        if ((m->n_layers + 2) % chunks)
            return err_setf(err, ERR_INPUT, origin, NULL,
                            "account_for_embedding/loss_in_pipeline_split: %d layers + 2 do not "
                            "split into %ld chunks",
                            m->n_layers, chunks);
        int lighter = (int)((m->n_layers + 2) / chunks) - 1;
        l->first_stage_layers = l->last_stage_layers = lighter > 0 ? lighter : LAYOUT_STAGE_EMPTY;
    }
    return ERR_OK;
}

/* ------------------------------------------------------------ performance layouts */

/* Megatron-Bridge's performance configs (reports/bridge_perf_configs.tsv,
 * generated from scripts/performance/configs/FAMILY/..._workload_base_configs.py
 * by tools/gen-bridge-perf-configs.py): the layout each recipe runs on each
 * GPU in each precision. 0 = not set (the recipe's own). */
typedef struct {
    const char *release, *recipe, *task, *gpu, *precision, *variant;
    int gpus, tp, pp, cp, vpp, ep, etp, mbs, gbs, fsdp, offload_layers, recompute_layers;
    const char *recompute_modules;
    int seq_len;
} perf_config_t;

static const perf_config_t PERF_CONFIGS[] = {
#include "reports/bridge_perf_configs.inc"
};

int launch_nemo_perf_layout(const char *text, const char *gpu, layout_t *l, char *what,
                            size_t cap)
{
    char m[128] = "", sz[128] = "", mr[128] = "", g[32] = "", c[32] = "bf16", task[32] = "pretrain",
         variant[16] = "v2", ng[32] = "", gb[32] = "";
    perf_value(text, perf_flag("-s"), sz, sizeof sz);
    if (!perf_value(text, perf_flag("--model_name"), m, sizeof m))
        perf_value(text, perf_flag("-m"), m, sizeof m);
    perf_value(text, perf_flag("-mr"), mr, sizeof mr);
    perf_value(text, perf_flag("-g"), g, sizeof g);
    perf_value(text, perf_flag("-c"), c, sizeof c);
    perf_value(text, perf_flag("--task"), task, sizeof task);
    perf_value(text, perf_flag("--config_variant"), variant, sizeof variant);
    perf_value(text, perf_flag("-ng"), ng, sizeof ng);
    perf_value(text, perf_flag("-gb"), gb, sizeof gb);
    char recipe[300];
    const char *release;
    if (sz[0] && m[0]) { /* v0.2: -m llama3 -s 70b */
        snprintf(recipe, sizeof recipe, "%s_%s", m, sz);
        release = "v0.2.2";
    } else if (mr[0]) { /* v0.3 on: -m llama -mr llama3_70b */
        snprintf(recipe, sizeof recipe, "%s", mr);
        release = "v0.5.0";
    } else {
        return 0;
    }
    for (char *p = recipe; *p; p++)
        *p = (char)tolower((unsigned char)*p);
    if (!g[0] && gpu) {
        /* the GPU scaleplan was given, as Bridge names it */
        static const char *const NAMES[] = {"gb300", "gb200", "b300", "b200", "h100"};
        for (size_t i = 0; i < sizeof NAMES / sizeof NAMES[0] && !g[0]; i++)
            if (strncmp(gpu, NAMES[i], strlen(NAMES[i])) == 0)
                snprintf(g, sizeof g, "%s", NAMES[i]);
    }
    const perf_config_t *hit = NULL;
    for (int pass = 0; pass < 2 && !hit; pass++) /* the variant asked for, then v1 */
        for (size_t i = 0; i < sizeof PERF_CONFIGS / sizeof PERF_CONFIGS[0]; i++) {
            const perf_config_t *x = &PERF_CONFIGS[i];
            if (strcmp(x->release, release) == 0 && strcmp(x->recipe, recipe) == 0 &&
                strcmp(x->task, task) == 0 && strcmp(x->gpu, g) == 0 &&
                strcmp(x->precision, c) == 0 &&
                (x->variant[0] == '-' || strcmp(x->variant, pass ? "v1" : variant) == 0)) {
                hit = x;
                break;
            }
        }
    if (!hit) {
        snprintf(what, cap, "%s %s on %s in %s has no performance config in Megatron-Bridge %s",
                 recipe, task, g[0] ? g : "(no -g)", c, release);
        return -1;
    }
    l->tp = hit->tp;
    l->pp = hit->pp;
    l->cp = hit->cp;
    l->vpp = hit->vpp > 0 ? hit->vpp : 1;
    l->schedule = l->vpp > 1 ? SCHEDULE_INTERLEAVED : SCHEDULE_1F1B;
    l->ep = hit->ep;
    l->etp = hit->etp;
    l->micro_batch = hit->mbs;
    l->global_batch = hit->gbs;
    int n = atoi(ng);
    if (n > 0 && n != hit->gpus && !gb[0]) /* Bridge scales the batch with the GPUs */
        l->global_batch = (int)((double)hit->gbs / hit->gpus * n);
    l->sequence_parallel = hit->tp > 1;
    if (hit->seq_len > 0)
        l->seq_len = hit->seq_len;
    if (hit->fsdp) {
        l->zero = 3;
        l->distributed_optimizer = false;
    }
    if (hit->offload_layers > 0) {
        l->offload |= LAYOUT_OFFLOAD_ACTIVATIONS;
        l->offload_act_layers = hit->offload_layers;
    }
    if (hit->recompute_layers > 0) {
        l->recompute = RECOMPUTE_FULL;
        l->recompute_layers = hit->recompute_layers;
    } else if (hit->recompute_modules[0]) {
        err_t ignore;
        if (layout_parse_recompute_modules(hit->recompute_modules, "recompute_modules",
                                           &l->recompute_modules, &ignore) == ERR_OK)
            l->recompute = RECOMPUTE_SELECTIVE;
    }
    snprintf(what, cap,
             "TP %d PP %d CP %d VPP %d EP %d, micro-batch %d, global batch %d%s, from Megatron-Bridge "
             "%s's performance config %s %s %s %s%s%s (%d GPUs)",
             l->tp, l->pp, l->cp, l->vpp, l->ep, l->micro_batch, l->global_batch,
             l->global_batch != hit->gbs ? " (scaled to the GPUs)" : "", release, recipe, task,
             hit->gpu, hit->precision, hit->variant[0] != '-' ? " " : "",
             hit->variant[0] != '-' ? hit->variant : "", hit->gpus);
    return 1;
}
