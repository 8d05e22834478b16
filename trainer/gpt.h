/* gpt: the reference transformer on the CPU - its parameters, their
 * initialisation, and forward and backward passes of one micro-batch.
 *
 * The architecture is any dense model_t (models/model.h): GPT-style
 * (LayerNorm, GELU, learned positions, biases, tied embeddings) or
 * Llama-style (RMSNorm, SwiGLU, RoPE, grouped-query attention). Tensor
 * parallelism splits attention and MLP the Megatron way: the QKV and the
 * first MLP projection by output columns, the attention output and the
 * second MLP projection by input rows, with an all-reduce after each row
 * split in the forward pass and after each column split's input gradient in
 * the backward pass; embeddings, norms and the output head are replicated.
 *
 * All parameters of a rank live in one flat buffer (one allocation for
 * parameters, one for gradients), laid out embeddings, layer 0 .. L-1,
 * final norm and head, so a layer's gradients are one contiguous range -
 * the unit of data-parallel gradient buckets and of checkpoint shards.
 *
 * Initialisation is a function of (seed, tensor name, element index) only,
 * so every TP degree starts from the same full model: a TP rank holds
 * exactly its slice of the weights a single process would have.
 *
 * The passes exist in float (training) and double (gradient checks).
 */
#ifndef SCALEPLAN_TRAINER_GPT_H
#define SCALEPLAN_TRAINER_GPT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/dist.h"
#include "common/error.h"
#include "models/model.h"

#define GPT_ABSENT ((size_t)-1) /* offset of a tensor the model does not have */
#define GPT_MAX_SEGMENTS 3

typedef enum {
    GPT_SPLIT_NONE = 0, /* replicated on every TP rank */
    GPT_SPLIT_COLUMN,   /* output features (rows of [out, in]) split */
    GPT_SPLIT_ROW       /* input features (columns) split */
} gpt_split_t;

typedef struct {
    char name[40];        /* "h.3.qkv_w" */
    size_t offset;        /* into the rank's flat buffer */
    size_t size;          /* elements on this rank */
    int rows, cols;       /* shape on this rank (a vector is rows x 1) */
    int full_rows, full_cols;
    gpt_split_t split;
    int n_segments;       /* column split: the full rows are these */
    int segment[GPT_MAX_SEGMENTS]; /* parts, each split evenly (q|k|v) */
    double init_std;      /* normal(0, std); 0 = constant init_value */
    double init_value;
    bool decay;           /* weight decay applies (matrices) */
    int layer;            /* block index, -1 outside the blocks */
} gpt_tensor_t;

/* Offsets of one block's tensors (GPT_ABSENT when the model has none). */
typedef struct {
    size_t ln1_w, ln1_b, qkv_w, qkv_b, attn_w, attn_b;
    size_t ln2_w, ln2_b, fc_w, fc_b, proj_w, proj_b;
    size_t begin, end; /* the block's range in the flat buffer */
} gpt_layer_t;

typedef struct {
    model_t arch;
    bool gpt_style;     /* LayerNorm + GELU + learned positions */
    int n_layers, hidden, vocab, max_seq, n_heads, n_kv_heads, head_dim, ffn;
    int tp, tp_rank;
    int heads_local, kv_heads_local, ffn_local;
    int qkv_local;      /* (heads_local + 2 kv_heads_local) x head_dim */
    int fc_local;       /* ffn_local (GELU) or 2 x ffn_local (SwiGLU) */
    double eps, rope_theta;
    bool tied, qkv_bias, out_bias, mlp_bias;
    /* parameters of this rank */
    int n_tensors;
    gpt_tensor_t *tensors; /* heap */
    gpt_layer_t *layers;   /* heap, n_layers */
    size_t wte, wpe, lnf_w, lnf_b, lm_w; /* offsets (lm_w = wte when tied) */
    size_t n_params;       /* elements in the flat buffer */
    size_t embed_end;      /* [0, embed_end) embeddings; layers; [head_begin, n_params) head */
    size_t head_begin;
} gpt_t;

/* Build the parameter layout of arch for TP rank tp_rank of tp. ERR_INPUT
 * when the model does not split (heads, KV heads or FFN not divisible by
 * tp) or has an odd rotary head size. Dropout is not applied: the reference
 * trainer measures the deterministic step (the caller says so). Free with
 * gpt_free. */
int gpt_create(const model_t *arch, int tp, int tp_rank, gpt_t *m, err_t *err);
void gpt_free(gpt_t *m);

/* Fill params (n_params floats) with the seeded initialisation. */
void gpt_init_f32(const gpt_t *m, uint64_t seed, float *params);
void gpt_init_f64(const gpt_t *m, uint64_t seed, double *params);

/* The full-model value of element (row, col) of tensor t at seed: what
 * every TP degree initialises that element to. */
double gpt_init_value(const gpt_tensor_t *t, uint64_t seed, int full_row, int full_col);

/* Activations of one micro-batch of b sequences of t tokens. */
typedef struct {
    int b, t;
    size_t elem;        /* bytes per element (4 or 8) */
    void *mem;          /* heap */
    size_t bytes;
    size_t *layer_off;  /* heap: per block, offset (elements) of its buffers */
    size_t per_layer;   /* elements per block */
    size_t off_final, off_lnf, off_lnf_mean, off_lnf_rstd, off_logits, off_probs;
    size_t off_dx, off_dtmp, off_dln, off_dqkv, off_datt, off_dfc, off_dact, off_dlogits,
        off_scratch;
    double *losses;     /* heap, b*t per-token losses of the last forward */
} gpt_acts_t;

/* Allocate activations for micro-batches of b x t in float (elem 4) or
 * double (elem 8). ERR_INPUT when t exceeds the model's positions,
 * ERR_RUNTIME when memory is short (with the size asked for). */
int gpt_acts_create(const gpt_t *m, int b, int t, size_t elem, gpt_acts_t *a, err_t *err);
void gpt_acts_free(gpt_acts_t *a);

/* Tensor-parallel communication of the passes; seconds spent in it are
 * added to *seconds (may be NULL). */
typedef struct {
    const dist_group_t *tp;
    double *seconds;
} gpt_comm_t;

/* Called when the gradients of [offset, offset + count) are final for this
 * micro-batch (head, each block from the last, then embeddings), so the
 * data-parallel reduction of that bucket can start. */
typedef int (*gpt_grads_ready_fn)(void *ctx, size_t offset, size_t count, err_t *err);

/* Forward: inputs/targets b*t tokens; *loss = mean cross-entropy. */
int gpt_forward_f32(const gpt_t *m, const float *params, gpt_acts_t *a, const int32_t *inputs,
                    const int32_t *targets, const gpt_comm_t *comm, double *loss, err_t *err);
int gpt_forward_f64(const gpt_t *m, const double *params, gpt_acts_t *a, const int32_t *inputs,
                    const int32_t *targets, const gpt_comm_t *comm, double *loss, err_t *err);

/* Backward of the last forward: adds d(loss_scale x mean loss)/d(params)
 * into grads. ready (may be NULL) is told as each range becomes final. */
int gpt_backward_f32(const gpt_t *m, const float *params, float *grads, gpt_acts_t *a,
                     const int32_t *inputs, const int32_t *targets, double loss_scale,
                     const gpt_comm_t *comm, gpt_grads_ready_fn ready, void *ready_ctx,
                     err_t *err);
int gpt_backward_f64(const gpt_t *m, const double *params, double *grads, gpt_acts_t *a,
                     const int32_t *inputs, const int32_t *targets, double loss_scale,
                     const gpt_comm_t *comm, gpt_grads_ready_fn ready, void *ready_ctx,
                     err_t *err);

/* Model FLOPs of one forward+backward of n tokens on the whole model
 * (Megatron convention, as models/flops.h counts them, at sequence t). */
double gpt_train_flops(const gpt_t *m, int t, double tokens);

/* The tensor named name, or NULL. */
const gpt_tensor_t *gpt_find(const gpt_t *m, const char *name);

#endif
