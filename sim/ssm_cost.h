/* ssm_cost: seconds of the Mamba-2 SSD and Gated DeltaNet kernels on one GPU.
 *
 * Both kernels are chunked: inside a chunk they are batched matrix
 * products, between chunks a short pass over the chunk states (Dao & Gu,
 * "Transformers are SSMs", ICML 2024, sec. 6-7: SSD "uses matrix
 * multiplications" on tensor cores; Yang et al., "Gated Delta Networks",
 * ICLR 2025, sec. 3.3: the chunkwise WY form). Each is priced as its
 * products, at their shapes, through the profile's GEMM model (a small
 * product reaches less of the peak there, as it does on the GPU), plus the
 * DRAM traffic between its kernels at the profile's memory rate:
 *   - Mamba-2 as state-spaces/mamba mamba_ssm/ops/triton/ssd_combined.py
 *     runs it: five kernels (chunk cumsum, C B^T per group, chunk states,
 *     state passing, chunk scan), each reading its inputs from and writing
 *     its output to DRAM;
 *   - Gated DeltaNet as fla-org/flash-linear-attention
 *     fla/ops/gated_delta_rule/chunk.py runs it: the WY matrix per chunk,
 *     the chunk states, the output.
 * Kimi Delta Attention as fla/ops/kda/chunk.py runs it: Gated DeltaNet's
 * products plus the passes of its per-channel decay.
 * Lightning attention (MiniMax) as Lightning Attention-2's blocks: the
 * intra-block quadratic products and the inter-block state products.
 * Mamba-1's selective scan (Jamba) is memory-bound (Gu & Dao 2023, sec.
 * 3.3.2): its inputs read once and its output written, at the memory rate.
 * The backward is ASSUMED at 2.5x the forward's time (the ratio
 * sim/cost_attn.c uses for fused attention: five GEMM-shaped products to the
 * forward's two); no published per-kernel backward timing was found.
 */
#ifndef SCALEPLAN_SIM_SSM_COST_H
#define SCALEPLAN_SIM_SSM_COST_H

#include "models/model.h"
#include "profile/profile.h"

/* The backward's time over the forward's (ASSUMED; see above). */
#define SSM_BWD_RATIO 2.5

/* One mixer call on one GPU: seqs sequences of seq tokens each, the heads
 * (and Mamba's B/C groups) this GPU runs after the TP (and CP) split. */
typedef struct {
    double seqs, seq;
    double heads;  /* Mamba-2 heads, or Gated DeltaNet value heads */
    double groups; /* Mamba-2 B/C groups, or Gated DeltaNet key heads */
    dtype_t dtype; /* the kernel's type (16-bit) */
    double e;      /* bytes per activation element */
} ssm_call_t;

/* Forward and backward seconds of the kernel of mixer k (MODEL_MIXER_MAMBA2,
 * MODEL_MIXER_GDN, MODEL_MIXER_KDA or MODEL_MIXER_MAMBA1, whose heads are
 * its channels;
 * 0 for others) of model m for call c. */
void ssm_kernel_time(const profile_t *p, const model_t *m, model_mixer_t k, const ssm_call_t *c,
                     double *fwd_s, double *bwd_s);

#endif
