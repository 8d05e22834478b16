/* moe_dispatch: the GPU-side copies a mixture-of-experts token dispatcher
 * makes around its exchange, beyond the permute before it and the unpermute
 * after the combine (which sim/costs prices for every dispatcher).
 *
 * An all-to-all dispatcher sends each rank's tokens grouped by destination
 * rank; what arrives is grouped by source rank, and inside each source's
 * chunk by local expert. With more than one local expert the tokens must be
 * regrouped by expert before the grouped GEMM ("permutation 2": Megatron-Core
 * megatron/core/transformer/moe/token_dispatcher.py,
 * MoEAlltoAllTokenDispatcher.dispatch_postprocess, sort_chunks_by_idxs of
 * moe_utils.py, fused by Transformer Engine's moe_sort_chunks_by_index under
 * --moe-permute-fusion, torch.split + torch.cat otherwise; torchtitan's
 * ExpertParallel gathers the received rows by generate_permute_indices the
 * same way), and the expert outputs put back in source order before the
 * combine (combine_preprocess). Each is one read and one write of every
 * token copy this rank's experts take; their backward passes copy the
 * gradients the same way. DeepEP's and HybridEP's kernels write the received
 * tokens in the layout the permute after them reads (the flex dispatcher has
 * no such step), and the all-gather dispatcher gathers every token and
 * permutes once.
 *
 * Pure functions; no state. */
#ifndef SCALEPLAN_SIM_MOE_DISPATCH_H
#define SCALEPLAN_SIM_MOE_DISPATCH_H

#include "sim/costs.h"

/* Bytes one regrouping by local expert reads and writes (each direction
 * the same: the dispatch side's sort, the combine side's unsort, and each
 * one's backward): 2 x received_bytes when dispatcher d exchanges by rank
 * (MOE_DISPATCH_ALLTOALL) over more than one rank (ep x etp > 1) and the
 * rank holds more than one expert (local_experts > 1); 0 otherwise.
 * received_bytes: the token copies this rank's experts take, in bytes
 * (padding included). The routing probabilities sorted beside them (4 bytes
 * a copy against hidden x 2) are left out. */
double moe_dispatch_local_sort_bytes(moe_dispatch_t d, int ep, int etp, double local_experts,
                                     double received_bytes);

/* Bytes a dispatched token element takes on the wire: DeepEP's dispatch
 * quantized to fp8 with one fp32 scale per 128 values (1 + 4/128) when the
 * framework sends it so (fp8_dispatch) in a low-precision run (quantized);
 * otherwise the run's activation element (act_bytes). Megatron-Core sends
 * 16 bits through every dispatcher: its DeepEP path hands DeepEP the hidden
 * states as they are (megatron/core/transformer/moe/fused_a2a.py,
 * FusedDispatch: buffer.dispatch(x, ...) with x = hidden_states.contiguous())
 * and its HybridEP path refuses fp8 ("Currently, we do not support fp8
 * dispatch", fused_a2a.py init_hybrid_ep_buffer), as NVIDIA's DeepSeek-V3
 * GB200 notes say of EP dispatch in MXFP8 ("not yet supported",
 * docs/discussions/deepseek-v3-gb200-optimization sec. 2.1.3). The combine
 * stays in 16 bits everywhere. */
double moe_dispatch_elem_bytes(moe_dispatch_t d, bool fp8_dispatch, bool quantized,
                               double act_bytes);

/* How a flex-dispatcher bandwidth came about (moe_dispatch_flex_gbs). */
typedef enum {
    MOE_FLEX_NONE = 0,     /* no measurement for this architecture and span:
                              the caller keeps its collective model */
    MOE_FLEX_MEASURED,     /* at or between measured EP sizes (interpolated) */
    MOE_FLEX_EXTRAPOLATED  /* beyond the measured EP sizes: the nearest one's
                              figures are returned, and sim/costs keeps NCCL's
                              all-to-all instead (said as assumed) */
} moe_flex_fit_t;

/* The flex dispatcher's (DeepEP / HybridEP normal kernels) published
 * bandwidth for a group of `ranks` EP ranks on GPU architecture arch
 * ("hopper", "blackwell"), inside one NVLink domain (rdma false) or across
 * nodes over RDMA (rdma true): GB/s of 16-bit token bytes per rank, as the
 * benchmarks count them (inside a domain the bytes a rank receives, its own
 * included: DeepEP's and HybridEP's tests, recv_x.numel() * 2 / t; across
 * nodes the bytes sent to each destination node once, the own node
 * included: num_rdma_token_sent * hidden * 2 / t). Dispatch and combine
 * apart, in *dispatch_gbs and *combine_gbs (both 0 for MOE_FLEX_NONE).
 * The figures are the tables' own (sim/moe_dispatch.c names each source);
 * between measured sizes linear in the rank count. Across nodes they were
 * measured on 50 GB/s NICs (400 Gb/s ConnectX-7) and scale with nic_gbs,
 * the GB/s a GPU's NIC moves on the run's network (its line rate, or what
 * a calibration measured); nic_gbs is not read inside a domain. */
moe_flex_fit_t moe_dispatch_flex_gbs(const char *arch, bool rdma, int ranks, double nic_gbs,
                                     double *dispatch_gbs, double *combine_gbs);

#endif
