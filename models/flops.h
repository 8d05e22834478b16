/* flops: floating-point work of a model, by operation, Megatron convention.
 *
 * Every GEMM counts 2 FLOPs per multiply-add; the logits layer is included;
 * mixture-of-experts blocks count the FLOPs a token actually runs (the
 * router, its top_k routed experts and the shared experts: the "active"
 * FLOPs Megatron-Core's num_floating_point_operations and MFU figures use;
 * scaleplan also counts the router GEMM, which Megatron leaves out);
 * multi-latent attention counts its down and up projections; multi-token
 * prediction modules count one more block, projection and logits each;
 * attention scores (Q K^T) and the weighted sum over values are counted over
 * the full s x s product (no causal halving), as in Narayanan et al. (SC21)
 * equation 3. Model FLOPs are 3x the forward (forward + backward at twice
 * the forward); hardware FLOPs add forward work that recompute repeats.
 * Norms, activations, softmax and the optimizer are memory-bound and are
 * not counted, as in Megatron-LM. Hybrid models (models/hybrid.h) count
 * attention and MLP ops over the blocks that have them, and their Mamba-2
 * and Gated DeltaNet mixers as mixer_in, mixer_scan and mixer_out.
 */
#ifndef SCALEPLAN_MODELS_FLOPS_H
#define SCALEPLAN_MODELS_FLOPS_H

#include "models/layout.h"
#include "models/model.h"

typedef enum {
    FLOP_QKV = 0,     /* Q, K, V projections */
    FLOP_ATTN_SCORES, /* Q K^T */
    FLOP_ATTN_VALUES, /* softmax(Q K^T) V */
    FLOP_ATTN_OUT,    /* output projection */
    FLOP_MLP_IN,      /* first MLP GEMM (gate and up when gated): dense
                         blocks and MoE blocks' shared experts */
    FLOP_MLP_OUT,     /* second MLP GEMM */
    FLOP_LOGITS,      /* hidden -> vocabulary */
    FLOP_ROUTER,      /* MoE router: hidden -> experts */
    FLOP_EXPERT_IN,   /* first GEMM of the top_k routed experts */
    FLOP_EXPERT_OUT,  /* second GEMM of the routed experts */
    FLOP_MTP,         /* multi-token prediction modules, logits included */
    FLOP_MIXER_IN,    /* hybrid models' Mamba-2 / Gated DeltaNet input projections */
    FLOP_MIXER_SCAN,  /* their conv1d and chunked scan or delta rule (models/hybrid.h) */
    FLOP_MIXER_OUT,   /* their output projections */
    FLOP_OP_COUNT
} flop_op_t;

typedef struct {
    double fwd_per_token[FLOP_OP_COUNT]; /* forward FLOPs per token, all layers */
    double fwd_per_token_layers; /* forward per token, transformer blocks only
                                    (not the logits or MTP modules) */
    double fwd_per_token_total;  /* forward per token, everything */
    double model_per_token;      /* 3 x forward: model FLOPs per token */
} model_flops_t;

/* FLOPs per token of m at sequence length seq_len (> 0). Ops that do not
 * apply to m (router, experts, MTP of a dense model) are 0. */
void model_flops(const model_t *m, int seq_len, model_flops_t *out);

/* Forward FLOPs per token that recompute repeats: whole blocks with full
 * recompute, the attention core (scores and values) with selective, none
 * otherwise. The logits layer is never recomputed. */
double model_recompute_flops_per_token(const model_t *m, int seq_len,
                                       recompute_t r);

/* The same for selective recompute of Megatron's modules (a LAYOUT_RC_*
 * mask): the attention core's scores and values, a dense MLP's GEMMs, an
 * MoE block's router, experts and shared experts, the shared experts
 * alone, MLA's up-projections; norms and activation functions have no
 * matmul FLOPs. */
double model_recompute_modules_flops_per_token(const model_t *m, int seq_len, unsigned modules);

/* Model FLOPs of one step of layout l: 3 x forward x tokens. With a
 * frozen base (l->ft LoRA or QLoRA) what the step runs: the weight GEMMs
 * 2 x forward (no weight gradient), the attention core 3x, the adapters
 * 3x theirs (HF Trainer's total_flos would say 6N over all parameters). */
double model_flops_per_step(const model_t *m, const layout_t *l);

/* Hardware FLOPs of one step: model FLOPs plus recomputed forward work.
 * With full recompute this is SC21 equation 3:
 * 96 B s l h^2 (1 + s/(6h) + V/(16 l h)) for a GPT with ffn = 4h. */
double model_hw_flops_per_step(const model_t *m, const layout_t *l);

const char *model_flop_op_name(flop_op_t op);

#endif
