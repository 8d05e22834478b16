/* amax: Transformer Engine's fp8 delayed-scaling amax reduction, priced
 * per layer.
 *
 * With delayed scaling (layout_t.precision PRECISION_FP8) every rank keeps
 * an amax history per fp8 tensor, and the histories must agree across the
 * ranks that share a tensor's scale. Transformer Engine reduces them with a
 * blocking all-reduce (MAX) of one concatenated buffer:
 *   - on leaving each outermost fp8_autocast region, i.e. after the
 *     forward of each model chunk for each micro-batch (Megatron wraps each
 *     chunk's TransformerBlock in one fp8 context), and
 *   - at the end of that region's backward (a multi-grad hook);
 * (NVIDIA/TransformerEngine transformer_engine/pytorch/fp8.py,
 * FP8GlobalStateManager.fp8_autocast_exit, hook_for_bwd_amax_reduction,
 * reduce_tensor_across_group_op_max with async_op=False). The group is
 * Megatron's amax reduction group: tensor x data x context parallel (the
 * ranks of one pipeline stage) unless --tp-only-amax-red (Megatron-LM
 * megatron/core/parallel_state.py get_amax_reduction_group). So the number
 * of these syncs grows with micro-batches x chunks, and each one's latency
 * with the DP size: a cost that grows as a DP ladder grows, where the
 * gradient reduction (bandwidth-bound, overlapped) barely does.
 *
 * The buffer is a few floats per fp8 tensor (latency-bound); its
 * all-reduce is priced on the profile's collective model over the group's
 * real span (NCCL's tree across nodes for an all-reduce).
 */
#ifndef SCALEPLAN_SIM_AMAX_H
#define SCALEPLAN_SIM_AMAX_H

#include "sim/costs.h"

/* fp8 tensors with an amax per GEMM of a transformer layer under delayed
 * scaling: forward input, weight and output scales (3) of each of the four
 * GEMMs (qkv, proj, fc1, fc2); backward the output gradient (and input
 * gradient) scales (2). Transformer Engine module/base.py keeps 3 forward
 * and 2 backward fp8 meta entries per GEMM. */
#define AMAX_FWD_TENSORS_PER_LAYER 12
#define AMAX_BWD_TENSORS_PER_LAYER 8

/* Seconds of one amax all-reduce of a model chunk of `layers` layers, in the
 * forward (backward = false) or the backward, over the span of the amax
 * group of in's layout; 0 unless the layout's precision is delayed-scaling
 * fp8 and the group has more than one rank. c's placement and spans must be
 * filled (sim_costs does so before it calls this). */
double amax_sync_s(const sim_input_t *in, const step_costs_t *c, double layers, bool backward);

/* Add the amax reduction to one layer's forward and backward (c->fwd.dp and
 * c->bwd.dp): each chunk's all-reduce spread over its layers, so both the
 * fused chunk task and per-layer tasks carry it. No-op when amax_sync_s is
 * 0 or the option is off (sim_options_t.amax_reduction == 0). */
void amax_price_layers(const sim_input_t *in, step_costs_t *c);

#endif
