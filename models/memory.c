#include "models/memory.h"

#include <string.h>

#include "common/units.h"
#include "models/hybrid.h"

void memory_opts_default(memory_opts_t *o)
{
    /* CUDA context (~0.5 GiB on Hopper) plus NCCL channel buffers and the
     * cuBLAS workspace (~0.5 GiB together at the default NCCL_BUFFSIZE of
     * 4 MiB per channel and peer); 5% for the caching allocator's
     * fragmentation. Calibrated profiles replace both with measurements. */
    o->reserved_bytes = 1.0 * GIB;
    o->fragmentation = 0.05;
    /* Megatron's vocabulary-parallel cross entropy: the bf16 logits and
     * their fp32 copy, which the softmax and its gradient then reuse */
    o->logit_bytes = 6;
    o->logit_bytes_tp = 0;
    /* ZeRO-3 reshards each stage per micro-batch */
    o->pp_gathered_grad_bytes = 0;
    o->kv_repeated = false;
    o->moe_probs_in_act = false;
    o->saves_quantized = false;
    /* two blocks gathered whole (FSDP's unit and its prefetch) */
    o->zero3_max_live_params = 0;
}

/* One tensor kept for backward, per layer and micro-batch, before any
 * split: elements, bytes per element, and how it is divided. */
typedef struct {
    double elements;
    double bytes_per_element;
    bool split_by_tp;  /* lives inside the TP region (heads, ffn) */
    unsigned rc;       /* the selective-recompute modules (LAYOUT_RC_*) whose
                          backward rebuilds it, so it is not kept */
    bool gathered;     /* a column-parallel GEMM's input: all-gathered over
                          the sequence under SP (layout_t sp_saves_gathered) */
    int gemm_in;       /* a GEMM's input (memory_opts_t.saves_quantized keeps it
                          in the recipe's format): 1; 2 when another module
                          keeps the 16-bit tensor too (the attention output,
                          kept by the attention and, quantized, by the
                          output projection); 0 neither */
} act_term_t;

/* Bytes an element of a GEMM input takes in precision p's saved format:
 * fp8 and its scales (per tensor: none to speak of; 1x128 blocks: an fp32
 * scale per 128; MXFP8: an e8m0 per 32), fp4 with its block scales; 0 for
 * precisions that do not quantize. */
static double quantized_bytes(precision_t p)
{
    switch (p) {
    case PRECISION_FP8:
    case PRECISION_FP8_CS:
    case PRECISION_FP8_ROWWISE:
        return 1;
    case PRECISION_FP8_BLOCK:
        return 1 + 4.0 / 128;
    case PRECISION_MXFP8:
        return 1 + 1.0 / 32;
    case PRECISION_NVFP4:
        return 0.5 + 1.0 / 16;
    case PRECISION_MXFP4:
        return 0.5 + 1.0 / 32;
    default:
        return 0;
    }
}

enum { MAX_TERMS = 32 };

/* An MoE block's MLP tensors for one micro-batch on one GPU (the router
 * input is the norm output already kept): the router's fp32 scores, the
 * tokens the local experts run on, the experts' intermediates, their
 * outputs before the weighted combine, and the shared experts'
 * intermediates split over TP. Sizes as Megatron-Core's MoE layer keeps
 * them for backward.
 *
 * What a rank holds (Megatron-Core transformer/moe/token_dispatcher.py,
 * MoEAlltoAllTokenDispatcher: "permute->A2A(EP)->AG(TP)", its TP being the
 * expert-TP group; the all-gather dispatcher gathers over ETP x EP at once):
 * the block's input is the rank's sequence-parallel share, sb/TP tokens
 * (sb without SP). The EP all-to-all brings each rank, on average, as many
 * token copies as it sent (top_k per token: E/EP local experts times EP
 * senders), and the all-gather over ETP multiplies them by ETP: the first
 * expert GEMM's input, kept for its weight gradient, is sb*k*ETP/TP tokens
 * of h. Each expert's width is split over ETP, so the intermediates are
 * sb*k*ETP/TP tokens x fe/ETP = sb*k*fe/TP, the same for every ETP. The
 * outputs are reduce-scattered over ETP and sent back, sb*k/TP tokens of h
 * at the combine. The step's pricing runs the experts on the same tokens
 * (sim/cost_moe.c cost_moe). None of these is split by the attention TP, so
 * every term here divides by TP only with SP (sum_terms). */
static void moe_terms(const model_t *m, const layout_t *l, double sb, double e, bool probs_in_act,
                      act_term_t *t, int *n)
{
    const model_moe_t *x = &m->moe;
    /* h: the width of the tokens the experts see (LatentMoE's latent) */
    double h = model_moe_io(m), k = x->top_k, fe = x->expert_ffn, fs = x->shared_ffn;
    double etp = layout_etp(l);
    bool gated = m->mlp == MODEL_MLP_SWIGLU;
    /* Megatron's "moe" recompute rebuilds all of them, "moe_act" the
     * activation output, "shared_experts" the shared experts' tensors */
    const unsigned MOE = LAYOUT_RC_MOE, SH = LAYOUT_RC_MOE | LAYOUT_RC_SHARED_EXPERTS;
    t[(*n)++] = (act_term_t){sb * x->n_experts, 4, false, MOE, false, 0}; /* router scores, fp32 */
    t[(*n)++] = (act_term_t){sb * k * etp * h, e, false, MOE, false, 1}; /* experts' input */
    t[(*n)++] = (act_term_t){sb * k * fe * (gated ? 2 : 1), e, false, MOE, false, 0};
    t[(*n)++] = (act_term_t){sb * k * fe, e, false, MOE | LAYOUT_RC_MOE_ACT, false,
                             1}; /* activation output: the second GEMM's input */
    /* the expert outputs before the weighted combine, kept for the
     * probabilities' gradient where the combine applies them; Megatron-Core
     * 0.13 on weights the activation instead (experts.py
     * activation_func_with_probs: "memory-efficient permutation", arXiv:
     * 2603.07685 sec. 4.1.2), whose saved input already serves */
    if (!probs_in_act)
        t[(*n)++] = (act_term_t){sb * k * h, e, false, MOE, false, 0};
    if (x->latent > 0) /* the up projection's input, the combined latent */
        t[(*n)++] = (act_term_t){sb * x->latent, e, false, MOE, false, 1};
    if (fs > 0) {
        t[(*n)++] = (act_term_t){sb * fs * (gated ? 2 : 1), e, true, SH, false, 0};
        t[(*n)++] = (act_term_t){sb * fs, e, true, SH, false, 1};
    }
}

/* The tensors of one transformer block, following Korthikanti et al.
 * section 4.1: for a GPT block with dropout this is 10sbh replicated across
 * TP (norm inputs, linear inputs, dropout masks) + 24sbh inside the TP
 * region (Q, K, V, projection input, MLP intermediates) + 5as^2b for the
 * materialized attention (softmax output, its dropout mask and output). */
/* A hybrid block's Mamba-2 or Gated DeltaNet mixer (models/hybrid.h): the
 * norm input, the input projection's input (the norm output) and what the
 * mixer and its kernel save. */
static void mixer_terms(const model_t *m, model_mixer_t k, double sb, double e, act_term_t *t,
                        int *n)
{
    t[(*n)++] = (act_term_t){sb * m->hidden, e, false, 0, false, 0}; /* norm input */
    t[(*n)++] = (act_term_t){sb * m->hidden, e, false, 0, true, 1};  /* in_proj input */
    hybrid_saved_t sv[8];
    int ns = model_hybrid_mixer_saved(m, k, sb, e, sv, 8);
    for (int i = 0; i < ns; i++)
        t[(*n)++] = (act_term_t){sv[i].elements, sv[i].bytes_per_element, sv[i].tp_split, 0,
                                 sv[i].gathered, 0};
}

static int layer_terms(const model_t *m, const layout_t *l, bool moe, unsigned block,
                       const memory_opts_t *o, act_term_t *t)
{
    model_mixer_t mixer = (model_mixer_t)(block & MODEL_BLOCK_MIXER_MASK);
    bool has_mlp = !(block & MODEL_BLOCK_NO_MLP);
    bool kv_rep = o->kv_repeated;
    double e = layout_weight_bytes(l->precision); /* activations dtype */
    double s = (double)l->seq_len / l->cp, b = l->micro_batch;
    double h = m->hidden, f = m->ffn, a = model_heads_mean(m);
    double qw = model_q_width(m), kvw = kv_rep ? model_q_width(m) : model_kv_width(m);
    double sb = s * b;
    bool drop = m->dropout > 0;
    int n = 0;
#define TERM(el, bpe, tp_split, rc) (t[n++] = (act_term_t){(el), (bpe), (tp_split), (rc), false, 0})
    /* Megatron-Core's selective recompute modules (transformer_layer.py):
     * "layernorm" rebuilds a norm that is its own module (MLA's input norm,
     * an MoE block's pre-MLP norm; Transformer Engine fuses the others into
     * the next GEMM), "mlp" a dense MLP whole (its input kept), "mla_up_proj"
     * MLA's up-projected queries, keys and values */
    const unsigned CORE = LAYOUT_RC_CORE_ATTN;
    unsigned up = model_is_mla(m) ? LAYOUT_RC_MLA_UP_PROJ : 0;
    if (mixer != MODEL_MIXER_ATTENTION) {
        if (mixer != MODEL_MIXER_NONE)
            mixer_terms(m, mixer, sb, e, t, &n);
        goto mlp;
    }
    /* attention sub-block */
    TERM(sb * h, e, false, 0); /* norm 1 input */
    t[n++] = (act_term_t){sb * h, e, false, model_is_mla(m) ? LAYOUT_RC_LAYERNORM : 0, true,
                          1}; /* QKV GEMM input (norm 1 output) */
    TERM(sb * qw, e, true, up);  /* Q */
    TERM(sb * kvw, e, true, up); /* K */
    TERM(sb * kvw, e, true, up); /* V */
    if (l->flash_attention) {
        TERM(a * sb, 4, true, 0); /* softmax log-sum-exp, fp32 */
    } else {
        /* scores are (s/cp) x s per head: each CP rank's queries see every key */
        double scores = a * sb * (double)l->seq_len;
        TERM(scores, e, true, CORE); /* softmax output */
        if (drop) {
            TERM(scores, 1, true, CORE); /* attention dropout mask */
            TERM(scores, e, true, CORE); /* dropout output, input to x V */
        }
    }
    t[n++] = (act_term_t){sb * qw, e, true, 0, false, 2}; /* output projection input */
    if (drop)
        TERM(sb * h, 1, false, 0); /* dropout mask after projection */
    if (m->hybrid.attn_out_gate)
        TERM(sb * qw, e, true, 0); /* the output gate's projection (Qwen3-Next) */
    if (m->hybrid.par_mamba2) { /* Falcon-H1: the Mamba-2 mixer's own tensors
                                   (its input is the attention's) */
        hybrid_saved_t sv[8];
        int ns = model_hybrid_mixer_saved(m, MODEL_MIXER_MAMBA2, sb, e, sv, 8);
        for (int i = 0; i < ns; i++)
            t[n++] = (act_term_t){sv[i].elements, sv[i].bytes_per_element, sv[i].tp_split, 0,
                                  sv[i].gathered, 0};
    }
mlp:
    if (!has_mlp)
        return n;
    /* MLP sub-block */
    TERM(sb * h, e, false, 0); /* norm 2 input */
    t[n++] = (act_term_t){sb * h, e, false, moe ? LAYOUT_RC_LAYERNORM : 0, true,
                          1}; /* first MLP GEMM input */
    if (moe) {
        moe_terms(m, l, sb, e, o->moe_probs_in_act, t, &n);
    } else if (m->mlp == MODEL_MLP_SWIGLU) {
        TERM(sb * f * 2, e, true, LAYOUT_RC_MLP); /* gate and up outputs */
        t[n++] = (act_term_t){sb * f, e, true, LAYOUT_RC_MLP, false,
                              1}; /* silu(gate) * up: second GEMM input */
    } else {
        TERM(sb * f, e, true, LAYOUT_RC_MLP); /* GELU input */
        t[n++] = (act_term_t){sb * f, e, true, LAYOUT_RC_MLP, false,
                              1}; /* GELU output: second GEMM input */
    }
    if (drop)
        TERM(sb * h, 1, false, 0); /* dropout mask after the MLP */
#undef TERM
    return n;
}

/* Bytes of one block's tensors on one GPU, skipping those the selective
 * recompute modules in `rebuilt` (LAYOUT_RC_*) drop. */
static double sum_terms(const model_t *m, const layout_t *l, bool moe, unsigned block,
                        const memory_opts_t *o, unsigned rebuilt)
{
    act_term_t t[MAX_TERMS];
    int n = layer_terms(m, l, moe, block, o, t);
    double total = 0;
    for (int i = 0; i < n; i++) {
        if (t[i].rc & rebuilt)
            continue;
        double bytes = t[i].elements * t[i].bytes_per_element;
        double q = o->saves_quantized ? quantized_bytes(l->precision) : 0;
        if (t[i].gemm_in && q > 0)
            bytes = t[i].elements * (q + (t[i].gemm_in == 2 ? t[i].bytes_per_element : 0));
        if (t[i].gathered && l->sequence_parallel && l->sp_saves_gathered && l->tp > 1) {
            /* saved whole, as gathered; a per-tensor fp8 recipe gathers
             * (and saves) the quantized input, 1 byte an element
             * (torchao's Float8ColwiseParallel) */
            if (l->precision == PRECISION_FP8 || l->precision == PRECISION_FP8_CS)
                bytes = t[i].elements;
            total += bytes;
            continue;
        }
        /* Inside the TP region every tensor is split over TP; outside it,
         * only sequence parallelism splits it (along the sequence). */
        if (t[i].split_by_tp || l->sequence_parallel)
            bytes /= l->tp;
        total += bytes;
    }
    return total;
}

/* torchtitan's per-op selective checkpointing (torchtitan/distributed/
 * activation_checkpoint.py _apply_op_sac at 4058f65): inside a block it
 * keeps the output of every matmul except every second one (counted in
 * forward order over the block), the attention output with its
 * log-sum-exp, and the outputs of all_to_all_single (the MoE dispatch and
 * combine, which it must not repeat); the grouped expert GEMMs are not on
 * its list (PyTorch's compute-intensive ops: mm, addmm, bmm, sdpa) and are
 * rebuilt; so is the rest. Plus the block's input. The matmuls in order:
 * attention wq, wk, wv, wo (MLA: [wq_a], wq(_b), wkv_a, wkv_b, wo); the MLP
 * w1, w3, w2, or an MoE block's router gate (fp32: its autocast) then the
 * shared experts' w1, w3, w2 (models/common/moe.py). For a dense GQA block
 * this keeps wq, wv, w1 and w2, as before MoE blocks were told apart. The
 * h-wide outputs (wo, w2), the input and the MoE tensors are split over TP
 * only with SP; the rest are. */
typedef struct {
    double width, bytes; /* the output's elements a token, bytes each */
    bool rep;            /* h wide or MoE: outside TP's split */
} ops_mm_t;

static double ops_block_bytes(const model_t *m, const layout_t *l, bool moe)
{
    double e = layout_weight_bytes(l->precision);
    double sb = ((double)l->seq_len / l->cp) * l->micro_batch;
    double h = m->hidden, nh = model_heads_mean(m);
    const model_mla_t *a = &m->mla;
    ops_mm_t mm[10];
    int n = 0;
#define MM(w, b, r) (mm[n++] = (ops_mm_t){(w), (b), (r)})
    double attn_out = model_q_width(m);
    if (model_is_mla(m)) {
        double qk = a->qk_nope_dim + a->qk_rope_dim;
        if (a->q_lora_rank > 0)
            MM(a->q_lora_rank, e, false);
        MM(nh * qk, e, false);
        MM((double)a->kv_lora_rank + a->qk_rope_dim, e, false);
        MM(nh * ((double)a->qk_nope_dim + a->v_dim), e, false);
        attn_out = nh * a->v_dim;
    } else {
        MM(model_q_width(m), e, false);
        MM(model_k_proj_width(m), e, false);
        /* the V projection (none in blocks whose keys are their values) */
        MM(model_kv_proj_width(m) - model_k_proj_width(m), e, false);
    }
    MM(h, e, true); /* wo */
    double width = moe ? m->moe.shared_ffn : m->ffn;
    if (moe)
        MM(m->moe.n_experts, 4, true); /* router gate */
    if (width > 0) {
        MM(width, e, false); /* w1 */
        MM(width, e, false); /* w3 */
        MM(h, e, true);      /* w2 */
    }
#undef MM
    double rep = h * e, split = attn_out * e + nh * 4; /* input; attention, lse */
    for (int i = 0; i < n; i += 2) /* the first, third, ... are kept */
        *(mm[i].rep ? &rep : &split) += mm[i].width * mm[i].bytes;
    if (moe && l->ep > 1) /* dispatch and combine: top_k copies of h each */
        rep += 2.0 * m->moe.top_k * h * e;
    return sb * ((l->sequence_parallel ? rep / l->tp : rep) + split / l->tp);
}

/* One block's activations; moe picks the MoE block's MLP tensors, block
 * the hybrid block's kind (model_hybrid_t.block; 0: attention + MLP). */
static double block_bytes(const model_t *m, const layout_t *l, bool moe, unsigned block,
                          const memory_opts_t *o)
{
    switch (l->recompute) {
    case RECOMPUTE_FULL: {
        /* Only the block's input is kept (Korthikanti: 2sbh per layer). */
        double e = layout_weight_bytes(l->precision);
        double bytes = e * ((double)l->seq_len / l->cp) * l->micro_batch * m->hidden;
        return l->sequence_parallel ? bytes / l->tp : bytes;
    }
    case RECOMPUTE_SELECTIVE:
        return sum_terms(m, l, moe, block, o, layout_rc_modules(l));
    case RECOMPUTE_OPS:
        return ops_block_bytes(m, l, moe);
    default:
        return sum_terms(m, l, moe, block, o, 0);
    }
}

/* The mean block of a hybrid model: each kind of block (mixer, MLP,
 * experts) by its count. */
static double hybrid_mean_bytes(const model_t *m, const layout_t *l, const memory_opts_t *o)
{
    int count[2][MODEL_BLOCK_NO_MLP * 2] = {{0}};
    for (int i = 0; i < m->n_layers; i++)
        count[model_moe_layer(m, i)][m->hybrid.block[i] & (MODEL_BLOCK_NO_MLP * 2 - 1)]++;
    double sum = 0;
    for (int moe = 0; moe < 2; moe++)
        for (unsigned b = 0; b < MODEL_BLOCK_NO_MLP * 2; b++)
            if (count[moe][b] > 0)
                sum += count[moe][b] * block_bytes(m, l, moe, b, o);
    return sum / m->n_layers;
}

/* One block's activations; moe picks the MoE block's MLP tensors; o says
 * what the framework keeps (K and V at the query width, the expert
 * outputs). A hybrid model's blocks differ: their mean. */
static double layer_bytes(const model_t *m, const layout_t *l, bool moe, const memory_opts_t *o)
{
    if (model_is_hybrid(m) && l->recompute != RECOMPUTE_FULL)
        return hybrid_mean_bytes(m, l, o);
    return block_bytes(m, l, moe, 0, o);
}

/* The activations of `layers` blocks, moe of them mixture-of-experts
 * blocks, one micro-batch. */
static double blocks_bytes(const model_t *m, const layout_t *l, int layers, int moe,
                           const memory_opts_t *o)
{
    if (!model_is_moe(m))
        return layers * layer_bytes(m, l, false, o);
    return (layers - moe) * layer_bytes(m, l, false, o) + moe * layer_bytes(m, l, true, o);
}

/* Every block a mixture-of-experts block (the block a layer is priced as). */
static bool all_moe(const model_t *m)
{
    return model_is_moe(m) && m->moe.n_moe_layers == m->n_layers;
}

double model_layer_activation_bytes(const model_t *m, const layout_t *l)
{
    memory_opts_t o;
    memory_opts_default(&o);
    return layer_bytes(m, l, all_moe(m), &o);
}

/* Parameters of the largest transformer block held by one GPU of its
 * model-parallel groups (see model_block_params_gpu). */
static double block_params_per_gpu(const model_t *m, const layout_t *l)
{
    double dense, experts;
    if (model_is_hybrid(m)) {
        double most = 0;
        for (int i = 0; i < m->n_layers; i++) {
            model_block_params_gpu(m, i, l->tp, l->ep, layout_etp(l), &dense, &experts);
            most = dense + experts > most ? dense + experts : most;
        }
        return most;
    }
    model_block_params_gpu(m, 0, l->tp, l->ep, layout_etp(l), &dense, &experts);
    double block = dense + experts;
    if (model_is_moe(m)) {
        for (int i = 0; i < m->n_layers; i++) {
            if (!model_moe_layer(m, i))
                continue;
            model_block_params_gpu(m, i, l->tp, l->ep, layout_etp(l), &dense, &experts);
            if (dense + experts > block)
                block = dense + experts;
            break;
        }
    }
    return block;
}

/* Blocks of pipeline rank stage that have an MoE MLP, over all its chunks. */
static int stage_moe_layers(const layout_t *l, const model_t *m, int stage)
{
    if (!model_is_moe(m))
        return 0;
    int moe = 0;
    for (int c = 0; c < l->vpp; c++) {
        int vs = layout_vstage(l, stage, c), first = 0;
        for (int v = 0; v < vs; v++)
            first += layout_chunk_layers(l, m, v);
        moe += model_moe_layers_in(m, first, layout_chunk_layers(l, m, vs));
    }
    return moe;
}

/* A hybrid model's blocks on pipeline rank stage, over all its chunks,
 * each counted as it is (their mixers and MLPs differ). */
static void stage_hybrid_blocks(const model_t *m, const layout_t *l, int stage, double *dense,
                                double *experts)
{
    *dense = *experts = 0;
    for (int c = 0; c < l->vpp; c++) {
        int vs = layout_vstage(l, stage, c), first = 0;
        for (int v = 0; v < vs; v++)
            first += layout_chunk_layers(l, m, v);
        int n = layout_chunk_layers(l, m, vs);
        for (int i = first; i < first + n && i < m->n_layers; i++) {
            double d, x;
            model_block_params_gpu(m, i, l->tp, l->ep, layout_etp(l), &d, &x);
            *dense += d;
            *experts += x;
        }
    }
}

void model_gpu_params_split(const model_t *m, const layout_t *l, int stage, double *dense,
                            double *experts)
{
    double t = l->tp, h = m->hidden;
    double one_norm = model_norm_params(m, h);
    int layers = layout_stage_layers(l, m, stage);
    int moe = stage_moe_layers(l, m, stage);
    double block = 0, block_experts = 0;
    if (model_is_hybrid(m)) {
        stage_hybrid_blocks(m, l, stage, dense, experts);
        layers = moe = 0; /* counted block by block */
    }
    int plain = -1; /* a block without an MoE MLP, if the model has one */
    for (int i = 0; i < m->n_layers && plain < 0; i++)
        if (!model_moe_layer(m, i))
            plain = i;
    double p = model_is_hybrid(m) ? *dense : 0, e = model_is_hybrid(m) ? *experts : 0;
    if (plain >= 0 && layers > 0) {
        model_block_params_gpu(m, plain, l->tp, l->ep, layout_etp(l), &block, &block_experts);
        p = (layers - moe) * block;
    }
    if (moe > 0) {
        for (int i = 0; i < m->n_layers; i++)
            if (model_moe_layer(m, i)) {
                model_block_params_gpu(m, i, l->tp, l->ep, layout_etp(l), &block,
                                       &block_experts);
                break;
            }
        p += moe * block;
        e = moe * block_experts;
    }
    double vocab_slice = (double)m->vocab * h / t; /* vocabulary-parallel */
    if (stage == 0) {
        p += model_input_params(m) / t; /* with Gemma 4's per-layer inputs */
        if (m->pos == MODEL_POS_LEARNED)
            p += model_position_rows(m) * h; /* replicated position table */
    }
    if (stage == layout_head_rank(l)) {
        p += one_norm;
        /* Untied: the output head. Tied with the head on another rank:
         * Megatron keeps a copy of the embedding on the last stage and
         * syncs its gradient. */
        if (!m->tied_embeddings || layout_head_rank(l) != 0)
            p += vocab_slice;
        if (m->n_mtp > 0) {
            /* Megatron places the MTP modules on the last stage. */
            double md, me;
            model_mtp_params_gpu(m, l->tp, l->ep, layout_etp(l), &md, &me);
            p += md;
            e += me;
        }
    }
    *dense = p;
    *experts = e;
}

double model_gpu_params(const model_t *m, const layout_t *l, int stage)
{
    double dense, experts;
    model_gpu_params_split(m, l, stage, &dense, &experts);
    return dense + experts;
}

/* Activations kept only on the first or last pipeline rank. */
static double edge_activation_bytes(const model_t *m, const layout_t *l,
                                    int stage, double inflight, double logit_bytes)
{
    double e = layout_weight_bytes(l->precision);
    double sbh = ((double)l->seq_len / l->cp) * l->micro_batch * m->hidden;
    double sp_div = l->sequence_parallel ? l->tp : 1;
    double bytes = 0;
    if (stage == 0 && m->dropout > 0)
        bytes += inflight * sbh / sp_div; /* embedding dropout mask, 1 byte */
    if (stage == layout_head_rank(l)) {
        /* Final norm input and output-layer input, and the logits the
         * cross entropy holds at its peak (Korthikanti: 4sbh/t (1 + v/h)
         * with SP, for 4 bytes per logit; the framework's loss decides).
         * One micro-batch: the last rank runs its backward right after. */
        double sbv = ((double)l->seq_len / l->cp) * l->micro_batch * m->vocab;
        bytes += 2 * e * sbh / sp_div + logit_bytes * sbv / l->tp;
    }
    return bytes;
}

/* What offload (layout_t.offload) moves to the host, in bytes per GPU, and
 * what stays: the optimizer state (the offloaded share, plus the fp32
 * gradient copy DeepSpeed's CPU Adam reads: 4 bytes per parameter it
 * updates; with ZeRO-2/3 the GPU's gradient shard goes too, leaving its
 * reduce buckets), the parameter shards (ZeRO-3 keeps fetching them; its
 * gathered working set stays in the buffers), the activations of the
 * offloaded blocks (one block's worth stays on the GPU for the transfer in
 * flight). With NVMe the optimizer state and parameters land on the drives,
 * through pinned host buffers not counted here. */
static double offload_to_host(const layout_t *l, int layers, double blocks_act,
                              double inflight, double per_optim, double *weights, double *grads,
                              double *optim, double *act)
{
    double host = 0;
    if (l->offload & LAYOUT_OFFLOAD_OPTIMIZER) {
        double share = l->offload_fraction > 0 ? l->offload_fraction : 1;
        double moved = *optim * share;
        if (!l->offload_nvme)
            host += moved + 4 * (moved / per_optim);
        *optim -= moved;
        /* With gradient sharding the gradient shard itself goes to the
         * host (DeepSpeed's ZeRO-2/3 offload); the GPU keeps its reduce
         * buckets: DeepSpeed's default 5e8 elements, twice with
         * overlap_comm. */
        if (l->zero >= 2 && share >= 1) {
            double buckets = 2 * 5e8 * l->grad_bytes;
            *grads = *grads < buckets ? *grads : buckets;
        }
    }
    if (l->offload & LAYOUT_OFFLOAD_PARAMS) {
        if (!l->offload_nvme)
            host += *weights;
        *weights = 0;
    }
    int n = layout_offload_act_layers(l, layers);
    if (n > 0) {
        double per_block = blocks_act / layers; /* every micro-batch in flight */
        double moved = per_block * n;
        host += moved;
        *act -= moved - per_block / (inflight > 0 ? inflight : 1);
    }
    return host;
}

/* LoRA / QLoRA (models/finetune.h) on one GPU of a stage with `layers`
 * blocks and `params` parameters: the frozen base (its block linears in 16,
 * 8 or 4 bits; embeddings, head and norms in bf16, which bitsandbytes
 * leaves unquantized) without gradients or optimizer state, and the fp32
 * adapters with fp32 gradients and Adam moments (no master copy: they are
 * fp32 already). ZeRO shards the adapters' state as it would the base's,
 * and ZeRO-3 the frozen weights too. */
static void frozen_states(const model_t *m, const layout_t *l, int layers, double params,
                          double *weights, double *grads, double *optim)
{
    double shard = (double)l->dp * l->cp;
    double linear = layers * finetune_block_linear_params(m, l->tp);
    if (linear > params)
        linear = params;
    double adapters = layers * finetune_adapter_params_block(&l->ft, m, l->tp);
    double base = finetune_base_bytes_per_param(&l->ft) * linear + 2 * (params - linear);
    double aw = 4 * adapters, ag = 4 * adapters, ao = 8 * adapters;
    if (l->zero >= 1 || l->distributed_optimizer)
        ao /= shard;
    if (l->zero >= 2)
        ag /= shard;
    if (l->zero >= 3) {
        base /= shard;
        aw /= shard;
    }
    *weights = base + aw;
    *grads = ag;
    *optim = ao;
}

/* The adapters' rank-r intermediates (x A of each target, kept for B's
 * weight gradient) of the blocks that keep their activations, every
 * micro-batch in flight; the base's own tensors are kept as in training,
 * since the input gradient still flows through every frozen linear. */
static double adapter_act_bytes(const layout_t *l, int kept_layers, double inflight)
{
    double sb = ((double)l->seq_len / l->cp) * l->micro_batch;
    return inflight * kept_layers * sb * finetune_act_elements_per_token(&l->ft) *
           layout_weight_bytes(l->precision);
}

/* A stage's model states per GPU before any offload, bytes. */
typedef struct {
    double weights, grads, optim;
    double per_optim; /* optimizer bytes a parameter (before sharding) */
    bool kept;        /* FSDP2 under pipelining: parameters kept gathered and
                         gradients accumulated unsharded for the step */
} stage_states_t;

/* The weights, gradients and optimizer states of a stage of `layers`
 * blocks holding psi dense and psi_e expert parameters on one GPU. */
static void stage_states(const model_t *m, const layout_t *l, int layers, double psi,
                         double psi_e, const memory_opts_t *opts, stage_states_t *s)
{
    /* ZeRO shards over every rank holding the same parameters: DP x CP for
     * the dense ones, the expert-data-parallel group for the experts. */
    double shard = (double)l->dp * l->cp;
    double eshard = layout_expert_dp(l);
    double w_bytes = layout_weight_bytes(l->precision);
    double weights = w_bytes * psi;
    if (layout_precision_quantized(l->precision))
        /* Transformer Engine caches the quantized weight copies (fp4: half
         * a byte plus the block scales) */
        weights += (layout_precision_fp4(l->precision) ? 0.5 + 1.0 / 16 : 1) * psi;
    double grads = (double)l->grad_bytes * psi;
    /* fp32 master weights + momentum + variance; pure fp32 training needs no
     * separate master copy. */
    double per_optim = l->precision == PRECISION_FP32 ? 8.0 : 12.0;
    double optim = per_optim * psi;
    double w_e = (w_bytes + (l->precision == PRECISION_FP8 ? 1 : 0)) * psi_e;
    double g_e = (double)l->grad_bytes * psi_e, o_e = per_optim * psi_e;
    if (l->zero >= 1 || l->distributed_optimizer) {
        optim /= shard;
        o_e /= eshard;
    }
    if (l->zero >= 2) {
        grads /= shard;
        g_e /= eshard;
    }
    /* FSDP2 (ZeRO-3 kept gathered, or ZeRO-2: reshard never) under
     * pipelining accumulates each micro-batch's gradients unsharded */
    bool kept = l->zero >= 2 && l->pp > 1 && opts->pp_gathered_grad_bytes > 0;
    if (l->zero >= 3 && !kept) {
        weights /= shard;
        w_e /= eshard;
    }
    if (kept) {
        /* the stage's parameters stay gathered for the step and its
         * gradients accumulate unsharded until the last micro-batch (the
         * sharded copies beside them are 1/shard of these) */
        grads += opts->pp_gathered_grad_bytes * psi;
        g_e += opts->pp_gathered_grad_bytes * psi_e;
    }
    if (psi_e > 0) {
        weights += w_e;
        grads += g_e;
        optim += o_e;
    }
    if (finetune_frozen(&l->ft))
        frozen_states(m, l, layers, psi + psi_e, &weights, &grads, &optim);
    *s = (stage_states_t){weights, grads, optim, per_optim, kept};
}

/* A stage's activations per GPU, bytes: every micro-batch in flight, with
 * recompute, adapters and the embedding or head; out gets the per-layer
 * figures, *inflight the micro-batches in flight and *blocks_act the
 * blocks' share. */
static double stage_activations(const model_t *m, const layout_t *l, int stage,
                                const memory_opts_t *opts, model_memory_t *out, double *inflight,
                                double *blocks_act)
{
    double per_layer = layer_bytes(m, l, all_moe(m), opts);
    *inflight = layout_inflight_microbatches(l, stage);
    out->layer_activation_bytes = per_layer;
    out->inflight_microbatches = *inflight;
    int moe = stage_moe_layers(l, m, stage);
    double act = *inflight * blocks_bytes(m, l, out->layers, moe, opts);
    int rebuilt = layout_stage_recomputed(l, m, stage);
    if (l->recompute == RECOMPUTE_FULL && rebuilt < out->layers) {
        /* partial recompute: the layers past each virtual stage's first
         * recompute_layers keep all their activations (the MoE share of
         * them as the stage's) */
        layout_t keep = *l;
        keep.recompute = RECOMPUTE_NONE;
        double share = (double)rebuilt / out->layers;
        act = *inflight * (share * blocks_bytes(m, l, out->layers, moe, opts) +
                           (1 - share) * blocks_bytes(m, &keep, out->layers, moe, opts));
    }
    if (finetune_frozen(&l->ft))
        act += adapter_act_bytes(l, l->recompute == RECOMPUTE_FULL ? out->layers - rebuilt
                                                                      : out->layers,
                                 *inflight);
    *blocks_act = act; /* the blocks' share, before the edges' */
    double logit_bytes =
        l->tp > 1 && opts->logit_bytes_tp > 0 ? opts->logit_bytes_tp : opts->logit_bytes;
    act += edge_activation_bytes(m, l, stage, *inflight, logit_bytes);
    if (l->recompute == RECOMPUTE_FULL && rebuilt > 0) {
        /* Backward recomputes one block at a time: its full activations
         * are alive on top of the checkpoints. */
        layout_t no_rc = *l;
        no_rc.recompute = RECOMPUTE_NONE;
        act += layer_bytes(m, &no_rc, moe > 0, opts);
    }
    return act;
}

/* Buffers beside the model states and activations, bytes per GPU (before
 * fragmentation): the reserve, pipeline send/receive buffers, ZeRO-3's
 * gathered blocks (kept: FSDP2 keeps the stage gathered instead) and
 * QLoRA's dequantized copy. */
static double stage_buffers(const model_t *m, const layout_t *l, const memory_opts_t *opts,
                            bool kept)
{
    double w_bytes = layout_weight_bytes(l->precision);
    double buffers = opts->reserved_bytes;
    if (l->pp > 1) {
        /* Send and receive buffers for one activation tensor each way. */
        double sbh = ((double)l->seq_len / l->cp) * l->micro_batch * m->hidden;
        buffers += 2 * w_bytes * sbh / (l->sequence_parallel ? l->tp : 1);
    }
    if (l->zero >= 3 && !kept) {
        /* FSDP gathers a block's full (TP-split) weights before use and
         * prefetches the next: two blocks unsharded at a time; DeepSpeed
         * releases gathered parameters beyond its live limit */
        double live = 2 * block_params_per_gpu(m, l);
        if (opts->zero3_max_live_params > 0 && live > opts->zero3_max_live_params)
            live = opts->zero3_max_live_params;
        buffers += w_bytes * live;
    }
    if (finetune_frozen(&l->ft) && l->ft.base_bits < 16)
        /* bitsandbytes dequantizes one linear at a time into a bf16 copy:
         * the widest, an MLP matrix split over TP */
        buffers += 2.0 * m->hidden * m->ffn / l->tp;
    return buffers;
}

void model_memory_stage(const model_t *m, const layout_t *l, int stage,
                        const memory_opts_t *opts, model_memory_t *out)
{
    memory_opts_t defaults;
    if (!opts) {
        memory_opts_default(&defaults);
        opts = &defaults;
    }
    memset(out, 0, sizeof *out);
    out->stage = stage;
    out->layers = layout_stage_layers(l, m, stage);
    double psi, psi_e;
    model_gpu_params_split(m, l, stage, &psi, &psi_e);
    out->params_count = psi + psi_e;
    out->expert_params_count = psi_e;
    stage_states_t s;
    stage_states(m, l, out->layers, psi, psi_e, opts, &s);
    double inflight, blocks_act;
    double act = stage_activations(m, l, stage, opts, out, &inflight, &blocks_act);
    if (l->offload)
        out->host_bytes = offload_to_host(l, out->layers, blocks_act, inflight, s.per_optim,
                                          &s.weights, &s.grads, &s.optim, &act);
    out->params_bytes = s.weights;
    out->grads_bytes = s.grads;
    out->optimizer_bytes = s.optim;
    out->activations_bytes = act;

    double buffers = stage_buffers(m, l, opts, s.kept);
    double allocated = s.weights + s.grads + s.optim + act;
    buffers += opts->fragmentation * allocated;
    out->buffers_bytes = buffers;
    out->total_bytes = allocated + buffers;
}

/* Whether pipeline stage s needs no more memory than stage s - 1: neither
 * holds the embedding or the head, both hold the same blocks (layers, MoE
 * layers, rebuilt layers: the same parameters and activations a
 * micro-batch) and s holds no more micro-batches in flight. */
static bool no_more_than_previous(const model_t *m, const layout_t *l, int s)
{
    int head = layout_head_rank(l);
    if (s < 2 || s == head || s - 1 == head)
        return false;
    return layout_stage_layers(l, m, s) == layout_stage_layers(l, m, s - 1) &&
           stage_moe_layers(l, m, s) == stage_moe_layers(l, m, s - 1) &&
           layout_stage_recomputed(l, m, s) == layout_stage_recomputed(l, m, s - 1) &&
           layout_inflight_microbatches(l, s) <= layout_inflight_microbatches(l, s - 1);
}

void model_memory_peak(const model_t *m, const layout_t *l,
                       const memory_opts_t *opts, model_memory_t *out)
{
    model_memory_stage(m, l, 0, opts, out);
    for (int s = 1; s < l->pp; s++) {
        if (no_more_than_previous(m, l, s))
            continue; /* its peak cannot be the largest first */
        model_memory_t cur;
        model_memory_stage(m, l, s, opts, &cur);
        if (cur.total_bytes > out->total_bytes)
            *out = cur;
    }
}
