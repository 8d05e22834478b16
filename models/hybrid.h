/* hybrid: models whose blocks are not all attention + MLP.
 *
 * A hybrid model (model_t.hybrid, on when n_layers_hybrid > 0) gives each
 * block a token mixer (attention, Mamba-2, Gated DeltaNet, or none) and
 * says whether the block has an MLP:
 *   - Nemotron-H and Megatron-LM's hybrid models (megatron/core/ssm/
 *     mamba_hybrid_layer_allocation.py): one letter a layer, 'M' a Mamba-2
 *     layer, '*' an attention layer, '-' an MLP layer, 'E' an MoE layer,
 *     each with one pre-norm; '|' (pipeline-stage separator) is skipped;
 *   - Qwen3-Next / Qwen3.5 (layer_types, full_attention_interval): every
 *     block keeps its MLP (or MoE), its mixer is Gated DeltaNet or
 *     attention;
 *   - Jamba (attn_layer_period): Mamba-1 (selective scan) or attention,
 *     each block with its MLP or MoE (transformers' JambaMambaMixer);
 *   - Falcon-H1 (mamba_d_ssm): attention and a Mamba-2 mixer side by side
 *     in every block, then its MLP (transformers' FalconH1DecoderLayer);
 *   - Kimi Linear (linear_attn_config): Kimi Delta Attention or MLA, each
 *     block with its MLP or MoE (moonshotai/Kimi-Linear-48B-A3B-Instruct
 *     modeling_kimi.py KimiDeltaAttention).
 * This module counts the mixers' parameters, FLOPs and saved activations;
 * models/model.c, models/flops.c, models/memory.c and sim/cost_hybrid.c call it
 * for the blocks that are not attention + MLP.
 *
 * Sources: Mamba-2 mixer weights as state-spaces/mamba
 * mamba_ssm/modules/mamba2.py (Mamba2) and Megatron-LM
 * megatron/core/ssm/mamba_mixer.py hold them; the SSD FLOPs from Dao & Gu,
 * "Transformers are SSMs" (ICML 2024), sec. 6 (the chunked algorithm's
 * four steps); Gated DeltaNet weights as transformers'
 * Qwen3NextGatedDeltaNet, FLOPs from the chunkwise (WY) form of Yang,
 * Kautz & Hatamizadeh, "Gated Delta Networks" (ICLR 2025), sec. 3; Kimi
 * Delta Attention, the gated delta rule with a per-channel decay, priced
 * with the same chunkwise products (Kimi Team, "Kimi Linear", arXiv
 * 2510.26692, sec. 3: the chunkwise WY form of the gated delta rule).
 */
#ifndef SCALEPLAN_MODELS_HYBRID_H
#define SCALEPLAN_MODELS_HYBRID_H

#include <stdbool.h>

#include "common/error.h"
#include "models/model_types.h"

/* Whether m has a hybrid layer pattern. */
bool model_is_hybrid(const model_t *m);

/* Block layer's mixer (MODEL_MIXER_ATTENTION for non-hybrid models) and
 * whether it has an MLP (dense or MoE; true for non-hybrid models). */
model_mixer_t model_block_mixer(const model_t *m, int layer);
bool model_block_has_mlp(const model_t *m, int layer);

/* Blocks with mixer k (all blocks are attention for non-hybrid models); a
 * Mamba-2 mixer beside attention (Falcon-H1, model_hybrid_t.par_mamba2)
 * counts as a Mamba-2 block too. */
int model_hybrid_count(const model_t *m, model_mixer_t k);

/* "attention", "mamba2", "gated_deltanet", "mamba1", "kda", "mlp_only". */
const char *model_mixer_name(model_mixer_t k);

/* Read a Megatron / Nemotron-H layer pattern ("M-M*-E"; '|' skipped) into
 * m: sets n_layers to the number of layer letters, each block's mixer and
 * MLP, and the MoE mask for 'E'. ERR_INPUT naming file and key (the config
 * key or flag) on an unknown letter, an empty pattern, more than
 * MODEL_MAX_MOE_LAYERS layers, or 'E' without routed experts in m (the
 * caller reads the experts first). m is unchanged on error except the
 * block table. */
int model_hybrid_set_pattern(model_t *m, const char *pattern, const char *file, const char *key,
                             err_t *err);

/* Check the mixer sizes of the kinds m uses: positive, Mamba heads x head
 * size and groups consistent (heads divide by groups), Gated DeltaNet's
 * value heads a multiple of its key heads. ctx names the source. */
int model_hybrid_validate(const model_t *m, const char *ctx, err_t *err);

/* Parameters of one mixer of kind k (Mamba-2 or Gated DeltaNet) on one
 * GPU of a TP group of t: Megatron splits the heads (and Mamba's groups)
 * over TP, so every weight but Gated DeltaNet's per-head-size norm is
 * split. 0 for attention and none. */
double model_hybrid_mixer_params(const model_t *m, model_mixer_t k, double t);

/* Forward FLOPs per token of one mixer of kind k (not attention) at
 * sequence length seq_len: the input projection (in), the kernel (scan:
 * the causal conv1d and the chunked scan or delta rule) and the output
 * projection (out). */
void model_hybrid_mixer_flops(const model_t *m, model_mixer_t k, int seq_len, double *in,
                              double *scan, double *out);

/* A tensor one mixer keeps for its backward: elements per micro-batch of
 * sb tokens, bytes each, whether TP splits it (inside the TP region) or it
 * is the block's gathered GEMM input (gathered). */
typedef struct {
    double elements, bytes_per_element;
    bool tp_split, gathered;
} hybrid_saved_t;

/* The tensors a mixer of kind k (not attention) saves for backward, for
 * sb tokens with activations of e bytes: Megatron's MambaMixer and the SSD
 * kernel's saved inputs (mamba_chunk_scan_combined), or the Gated DeltaNet
 * layer and fla's chunk_gated_delta_rule. Writes at most cap entries and
 * returns how many. */
int model_hybrid_mixer_saved(const model_t *m, model_mixer_t k, double sb, double e,
                             hybrid_saved_t *out, int cap);

/* Bytes of one sequence's recurrent state in one mixer of kind k (fp32):
 * what an SSD chunk boundary or the delta rule carries from one chunk to
 * the next (nheads x head_dim x d_state; v_heads x d_k x d_v), not kept
 * for the backward (the kernels recompute it). */
double model_hybrid_state_bytes(const model_t *m, model_mixer_t k);

#endif
