/* model: decoder-only transformer architectures, dense and mixture-of-experts.
 *
 * A model_t describes one architecture: the block (attention, norms, MLP),
 * its widths, and the variants real models use:
 *   - attention: multi-head, grouped-query or multi-query; head size given
 *     apart from hidden/heads; biases; QK norm (per head or full width);
 *     attention sinks; DeepSeek's multi-head latent attention (MLA) and the
 *     sparse-attention indexer of DeepSeek-V3.2 and GLM-5;
 *   - MLP: plain (two matrices: GELU, ReLU, squared ReLU) or gated (three
 *     matrices: SwiGLU, GeGLU), with or without biases;
 *   - norms: LayerNorm (weight and bias), RMSNorm (weight) or weightless,
 *     two or more per block;
 *   - mixture of experts (model_moe_t): routed experts with top-k routing,
 *     shared experts, dense layers before the first MoE layer or
 *     interleaved with them, router and expert biases;
 *   - multi-token prediction modules (DeepSeek-V3), counted apart from the
 *     main model;
 *   - hybrid layer patterns (model_hybrid_t, models/hybrid.h): blocks with a
 *     Mamba-2 or Gated DeltaNet mixer instead of attention, or with a mixer
 *     or an MLP only (Nemotron-H, Qwen3-Next).
 * It is loaded from a catalog name ("llama3-70b"), a Hugging Face
 * config.json (models/hfconfig.h reads every architecture it names), or
 * built by a reader of another format (inputs/).
 *
 * From it the module computes parameter counts (total, active per token,
 * per block), FLOPs per token by operation (models/flops.h) and per-GPU
 * memory for a parallel layout (models/memory.h). Loading validates every
 * field and refuses what it cannot count exactly with an error instead of
 * a wrong answer.
 */
#ifndef SCALEPLAN_MODELS_MODEL_H
#define SCALEPLAN_MODELS_MODEL_H

#include <stdbool.h>
#include <stdint.h>

#include "common/error.h"
#include "common/notes.h"

#include "models/model_types.h"
#include "models/moe_layers.h"

/* Load a model by catalog name (normalised, "did you mean" on a miss) or,
 * when name_or_path ends in .json or names an existing file or directory,
 * from a Hugging Face config.json. Errors: ERR_INPUT with file and field.
 * model_load, model_load_ex and model_catalog_names are models/model_load.c,
 * which reads the configs through models/hfconfig.h. */
int model_load(const char *name_or_path, model_t *m, err_t *err);

/* The same with options; notes (may be NULL) receives what the reader
 * assumed (class defaults for absent keys, parts it does not count). */
int model_load_ex(const char *name_or_path, const model_load_opts_t *opts, model_t *m,
                  notes_t *notes, err_t *err);

/* Check a model_t built in code (not from JSON) for consistency: positive
 * sizes, heads dividing hidden (or head_dim given), kv heads dividing heads,
 * MoE and MLA fields. Recounts moe.n_moe_layers from the mask. ctx names
 * the source in messages. */
int model_validate(model_t *m, const char *ctx, err_t *err);

/* The catalog's model names, sorted. Caller frees with catalog_free_names. */
int model_catalog_names(char ***names, size_t *count, err_t *err);

/* Parameter counts of m. */
void model_params(const model_t *m, model_params_t *out);

/* Width of the Q projection output (n_heads * head_dim) and of each of the
 * K and V tensors (n_kv_heads * head_dim) of one attention block; with
 * full-attention blocks of their own shape (model_full_attn_t) the mean
 * over the blocks, so that a count per block times the blocks is exact. */
double model_q_width(const model_t *m);
double model_kv_width(const model_t *m);
/* Width of the K and V projections' outputs together, the same mean:
 * 2 x model_kv_width, less the V projection of blocks whose keys are their
 * values (model_full_attn_t.k_eq_v). What weights and GEMMs use. */
double model_kv_proj_width(const model_t *m);
/* Width of the K projection's output alone, the same mean (blocks that
 * reuse another block's keys have none). */
double model_k_proj_width(const model_t *m);
/* Parameters before the first block: the word embedding and, with Gemma
 * 4's per-layer inputs (model_ple_t), their table, projection and norm. */
double model_input_params(const model_t *m);

/* Share of the blocks that run a sparse-attention indexer of their own
 * (model_indexer_t.own_layers; 1 when every block does): what one block's
 * indexer weights and FLOPs count at, a mean over the blocks. */
double model_indexer_share(const model_t *m);

/* Query heads and head size of one attention block, the same mean
 * (n_heads and head_dim without full-attention blocks of their own
 * shape). */
double model_heads_mean(const model_t *m);
double model_head_dim_mean(const model_t *m);
/* Whether m has full-attention blocks of their own shape, and whether
 * every block's query and key/value heads split over a TP group of tp. */
bool model_has_full_attn(const model_t *m);
bool model_heads_split(const model_t *m, int tp);

/* Norm modules per block (norms_per_layer, 0 read as 2) and parameters of
 * one norm over width (2 x width for LayerNorm, width for RMSNorm, 0 when
 * weightless). */
int model_norms_per_layer(const model_t *m);
double model_norm_params(const model_t *m, double width);

/* Rows of the learned position table (0 without one). */
double model_position_rows(const model_t *m);

bool model_is_mla(const model_t *m);
/* Expected number of distinct destinations a token's top-k experts lie on
 * when the routed experts are split into n_dest equal consecutive blocks
 * (EP ranks, or the nodes of an EP group), with routing balanced: the
 * token's groups (when group-limited) and then its experts among them
 * drawn uniformly. Between 1 and min(top_k, n_dest); top_k when n_dest
 * does not divide the experts or the groups and the blocks do not nest. */
double model_moe_destinations(const model_t *m, int n_dest);

/* One block's parameters held by one GPU of a model-parallel group: dense
 * parts (attention, norms, dense MLP or shared experts, router) split over
 * TP the way Megatron splits them (column- and row-parallel weights and
 * column-parallel biases split; norms, row-parallel biases, routers and
 * MLA's down projections replicated), and the routed experts of an MoE
 * block split over EP (whole experts) and ETP (each expert's width). */
void model_block_params_gpu(const model_t *m, int layer, int tp, int ep, int etp,
                            double *dense, double *experts);

/* One multi-token prediction module on one GPU, split as above. */
void model_mtp_params_gpu(const model_t *m, int tp, int ep, int etp, double *dense,
                          double *experts);

/* The first part of m the named consumer cannot represent, or NULL: used
 * by the reference trainer (GPT- and Llama-style dense blocks only) and the
 * step simulator (no MoE or MLA yet) to refuse with a reason. */
const char *model_trainer_unsupported(const model_t *m);

const char *model_family_name(model_family_t f);
const char *model_act_name(model_act_t a, bool gated);

/* torchtitan's model names and flavors (torchtitan/models/<name>/__init__.py)
 * for the catalog models torchtitan trains, entry i of 0..n: name, flavor
 * and catalog name; NULL past the end. */
typedef struct {
    const char *name, *flavor, *catalog;
} model_torchtitan_t;
const model_torchtitan_t *model_torchtitan(size_t i);

/* The torchtitan name and flavor of a catalog model, NULL if none. */
const model_torchtitan_t *model_torchtitan_of(const char *catalog_name);

#endif
