/* memory: what one GPU holds while training a model under a layout.
 *
 * Model states follow the ZeRO paper (Rajbhandari et al. 2020): with mixed-
 * precision Adam each parameter costs 2 bytes of weights, grad_bytes of
 * gradients (2 in DeepSpeed, 4 with Megatron's fp32 main grads) and 12 bytes
 * of optimizer state (fp32 master weights, momentum, variance). ZeRO-1 (and
 * Megatron's distributed optimizer) shard the optimizer state over the data-
 * parallel group, ZeRO-2 also the gradients, ZeRO-3 / FSDP also the weights.
 *
 * Activations follow Korthikanti et al. 2022 ("Reducing Activation
 * Recomputation in Large Transformer Models") tensor by tensor, so that the
 * GPT case reproduces 34sbh + 5as^2b per layer (sbh(10 + 24/t + 5as/(ht))
 * with TP, divided by t with sequence parallelism, 2sbh with full recompute),
 * and the same bookkeeping covers GQA, SwiGLU, no-dropout, flash attention,
 * context parallelism, and the micro-batches each pipeline schedule keeps
 * in flight. Mixture-of-experts blocks keep the router scores and top_k
 * copies of each token's expert inputs, intermediates and outputs; expert
 * weights, gradients and optimizer state are split over EP x ETP and
 * sharded by ZeRO / the distributed optimizer over the expert-data-parallel
 * group (Megatron-Core's expert_data_parallel), not over DP x CP.
 */
#ifndef SCALEPLAN_MODELS_MEMORY_H
#define SCALEPLAN_MODELS_MEMORY_H

#include <stdbool.h>

#include "models/layout.h"
#include "models/model.h"

/* Memory the model arithmetic does not see; defaults come from the GPU's
 * cost profile (profile/profile.h). */
typedef struct {
    double reserved_bytes; /* CUDA context, NCCL and cuBLAS workspaces */
    double fragmentation;  /* allocator overhead, fraction of allocated bytes */
    double logit_bytes;    /* bytes per logit element alive at the loss's peak
                              on the last stage: how the framework computes
                              cross entropy (sim_options_t ce_peak_bytes) */
    double logit_bytes_tp; /* the same with TP > 1 (ce_tp_peak_bytes); 0 = as
                              without TP */
    double zero3_max_live_params; /* ZeRO-3's gathered working set at most this
                              many parameters (DeepSpeed's
                              stage3_max_live_parameters); 0 = two blocks */
    double pp_gathered_grad_bytes; /* ZeRO-2/3 with pipeline stages that keeps
                              each stage gathered for the whole step (FSDP2
                              under torchtitan's pipelining, which turns
                              gradient sync off but for the last
                              micro-batch): the stage's parameters stay
                              unsharded and its gradients accumulate
                              unsharded across the micro-batches, this many
                              bytes per parameter, until the last one
                              reduce-scatters them; 0 = resharded per
                              micro-batch (nothing kept) */
    bool kv_repeated;      /* attention saves K and V repeated to every query
                              head (sim_options_t.kv_repeated): kept at the
                              query width where a block keeps them */
    bool moe_probs_in_act; /* the router's probabilities weight the expert
                              activation, not the expert outputs (Megatron-Core
                              0.13 on, moe_opts_t.probs_in_act): the outputs
                              before the combine are not kept */
    bool saves_quantized;  /* a low-precision run keeps each GEMM's input in the
                              recipe's format for the weight gradient
                              (Transformer Engine's modules,
                              sim_options_t.fp8_saves_quantized), not in the
                              16-bit activation type */
} memory_opts_t;

typedef struct {
    int stage;                     /* pipeline rank described */
    int layers;                    /* transformer blocks on that rank */
    double params_count;           /* parameters held by one GPU of the rank */
    double expert_params_count;    /* of which routed experts (sharded over EP
                                      x ETP, ZeRO over expert-data-parallel) */
    double params_bytes;           /* weights (incl. an fp8 cache) */
    double grads_bytes;
    double optimizer_bytes;        /* master weights + Adam moments */
    double activations_bytes;      /* kept for backward at the peak */
    double buffers_bytes;          /* reserved + fragmentation + comm buffers */
    double total_bytes;
    double host_bytes;             /* what offload keeps in host memory for
                                      this GPU (layout_t.offload); 0 without */
    double inflight_microbatches;  /* see layout_inflight_microbatches */
    double layer_activation_bytes; /* one block, one micro-batch */
} model_memory_t;

/* 1 GiB reserved, 5% fragmentation and Megatron's 6 bytes per logit
 * element; see memory.c for the reasoning. */
void memory_opts_default(memory_opts_t *o);

/* Bytes of activations one transformer block keeps for backward for one
 * micro-batch on one GPU, given the layout's TP, SP, CP, recompute and
 * attention implementation. */
double model_layer_activation_bytes(const model_t *m, const layout_t *l);

/* Parameters held by one GPU of pipeline rank stage: its blocks split over
 * TP (norms and row-parallel biases replicated), the vocabulary-parallel
 * embedding on the first rank, the final norm and output head (or, with
 * tied embeddings and PP > 1, Megatron's copy of the embedding) on the
 * last. */
double model_gpu_params(const model_t *m, const layout_t *l, int stage);

/* The same split into dense parameters (replicated over DP x CP) and
 * routed-expert parameters (replicated over the expert-data-parallel
 * group, layout_expert_dp). MTP modules sit on the last rank. */
void model_gpu_params_split(const model_t *m, const layout_t *l, int stage, double *dense,
                            double *experts);

/* Memory of one GPU of pipeline rank stage (0-based, < l->pp). l must be
 * finalized. opts may be NULL for the defaults. */
void model_memory_stage(const model_t *m, const layout_t *l, int stage,
                        const memory_opts_t *opts, model_memory_t *out);

/* The pipeline rank with the largest total (ties: the lowest rank). */
void model_memory_peak(const model_t *m, const layout_t *l,
                       const memory_opts_t *opts, model_memory_t *out);

#endif
