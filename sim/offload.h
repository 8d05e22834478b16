/* offload: what keeping training state off the GPU costs (layout_t.offload).
 *
 * Three kinds, as frameworks implement them:
 *   - optimizer (ZeRO-Offload, FSDP CPU offload, Megatron
 *     --optimizer-cpu-offload): after the backward each GPU sends its
 *     gradient shard to the host, the CPU runs Adam on the offloaded
 *     share of the state, and the updated 16-bit parameters come back
 *     (unless the parameters live on the host too);
 *   - parameters (ZeRO-3 offload_param / ZeRO-Infinity, FSDP CPU offload):
 *     before each layer's forward and backward its shard comes from the
 *     host (prefetched one layer ahead, like ZeRO-3's all-gather), and the
 *     gradient shard goes back after the reduce-scatter;
 *   - activations (Megatron --cpu-offloading-num-layers, the NVIDIA GB200 /
 *     GB300 recipes): the activations of the offloaded blocks go to the host
 *     after their forward and come back before their backward, overlapped
 *     with the neighbouring blocks' compute.
 * Transfers run on the GPU's host link (PCIe x16 or NVLink-C2C: gpu_t
 * host_link_gbs) at an assumed 80% of its rate; with NVMe (ZeRO-Infinity)
 * they are also bounded by the node's NVMe bandwidth shared by its GPUs.
 * The CPU step runs at the rate ZeRO-Offload reports for DeepSpeed's CPU
 * Adam, scaled by the node's cores shared by its GPUs. Host memory is the
 * node's, shared by its GPUs (cluster_t). Every such assumption is said by
 * offload_notes.
 *
 * sim/costs prices the per-layer part (the exposed transfer time of one
 * layer's pass, in cost_parts_t.offload) and sim/step the per-step part
 * (gradients out, CPU step, parameters back) as tasks on the timeline; the
 * breakdown reports the exposed transfers as "offload" and the CPU step as
 * "optimizer".
 */
#ifndef SCALEPLAN_SIM_OFFLOAD_H
#define SCALEPLAN_SIM_OFFLOAD_H

#include <stdbool.h>

#include "common/notes.h"
#include "models/layout.h"
#include "models/memory.h"
#include "models/model.h"
#include "topologies/cluster.h"

/* What one GPU gets of its node's host resources. */
typedef struct {
    double link_gbs;         /* host link, effective, GB/s per direction */
    double store_gbs;        /* where offloaded state lives: the link, or the
                                link and the node's NVMe share when lower */
    double cpu_params_per_s; /* Adam updates per second on this GPU's cores */
    double host_gib;         /* host memory per GPU */
} offload_env_t;

/* The host side one GPU of cluster c gets; l decides NVMe or CPU memory. */
void offload_env(const cluster_t *c, const layout_t *l, offload_env_t *e);

/* Transfer and CPU times of one step's offload. */
typedef struct {
    double layer_params;  /* parameters of one layer a GPU fetches (its shard) */
    double param_fetch_s; /* one layer's parameter shard from the host */
    double grad_store_s;  /* one layer's gradient shard to the host (params offload) */
    double act_layer_s;   /* one block's activations for one micro-batch, one way */
    double act_share;     /* offloaded blocks / blocks of the busiest stage */
    double step_grad_s;   /* the gradient shard to the host before the CPU step */
    double step_cpu_s;    /* the CPU optimizer step */
    double step_param_s;  /* updated parameters back to the GPU */
    double step_gpu_share; /* share of the optimizer step still on the GPU */
} offload_costs_t;

/* Times of l's offload for model m on cluster c (zeros when l offloads
 * nothing). layer_params_gpu: one layer's parameters on one GPU (TP
 * split); stage_params_gpu: the busiest stage's; layer_act_bytes: one
 * block's activations for one micro-batch. */
void offload_costs(const model_t *m, const layout_t *l, const cluster_t *c,
                   double layer_params_gpu, double stage_params_gpu, double layer_act_bytes,
                   offload_costs_t *out);

/* Exposed seconds of one layer's forward and backward when the transfers
 * overlap with compute seconds of the layer (and the ZeRO-3 gathers the
 * link shares the window with, dp_fwd/dp_bwd seconds). */
void offload_layer_exposed(const offload_costs_t *o, double fwd_compute_s, double bwd_compute_s,
                           double dp_fwd_s, double dp_bwd_s, double *fwd_s, double *bwd_s);

/* All host transfers of a stage of `layers` layers in one step of m
 * micro-batches: per pass the parameter fetches (forward and backward) and
 * gradient stores of each layer and the activations of the offloaded
 * blocks, and the per-step gradient and parameter copies of the optimizer
 * offload; *s in seconds, *gb their volume (both directions, GB a GPU). */
void offload_step_totals(const offload_costs_t *o, const cluster_t *c, const layout_t *l,
                         double layers, int m, double *s, double *gb);

/* Whether the host memory offload needs (mem->host_bytes) fits in the GPU's
 * share of its node; *need_gib and *have_gib say how much. */
bool offload_host_fits(const model_memory_t *mem, const cluster_t *c, const layout_t *l,
                       double *need_gib, double *have_gib);

/* The assumptions behind the offload prices (link efficiency, CPU Adam
 * rate, host figures the cluster file does not give), for the user. */
void offload_notes(const layout_t *l, const cluster_t *c, notes_t *notes);

/* Offloading the optimizer or the parameters is done with activations
 * checkpointed (DeepSpeed's ZeRO-Offload and ZeRO-Infinity tutorials and
 * configs turn activation checkpointing on): full recompute for such a
 * layout that names none. True (and a note in notes, which may be NULL)
 * when it changed l. */
bool offload_default_recompute(layout_t *l, notes_t *notes);

#endif
