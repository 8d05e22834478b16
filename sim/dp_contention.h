/* dp_contention: the compute a GPU loses to the data-parallel collectives
 * that run beside it.
 *
 * An NCCL collective is a kernel of one CTA per channel that stays resident
 * on its SMs for the collective's whole length, latency-bound waits
 * included; a GEMM or attention kernel launched meanwhile gets the other
 * SMs (Hopper GEMMs keep one CTA per SM with most of its shared memory, so
 * they cannot share an SM with the NCCL CTA). While a gradient
 * reduce-scatter or a parameter all-gather overlaps the passes, the passes
 * run at (SMs - CTAs) / SMs of their rate: the stage loses CTAs / SMs of
 * the overlapped time. The overlapped time grows with the DP size even
 * when the bytes do not: a ring's latency is one step per rank
 * (profile/profile.c inter_time), so up a DP ladder the collectives stay
 * resident longer and take more of the compute.
 *
 * Source of the CTA count: an Nsight Systems profile of an H100 (132 SMs)
 * in which ncclAllGather launched 24 blocks beside a 132-block GEMM and the
 * GEMM's time nearly doubled from the tail it was pushed into (NVIDIA
 * developer forums, "Compute-Communication Overlap Causes Severe GEMM
 * Performance Degradation because of Tail Effect", thread 337991). ASSUMED:
 * the same 24 CTAs for reduce-scatters and on every GPU; the loss counted
 * is the SM share alone (no wave tail, no memory-bandwidth contention), a
 * lower bound of what that profile shows.
 *
 * Off by default (sim_options_t.dp_comm_ctas 0; --dp-comm-ctas N turns it
 * on). On, it is charged to the DP collectives the step simulates beside
 * the passes (Megatron's bucketed reduce-scatters, the parameter gathers
 * hidden in the next forwards) but not yet to ZeRO-3/FSDP's per-layer
 * collectives, and the GPUs' sustained factors, fitted without it, would
 * have to be re-derived (validate --fit-sustained): H100 SXM 0.734 ->
 * 0.757, B200 0.666 -> 0.674 with it on. Charged to FSDP too it made the
 * FSDP sets worse (torchtitan, llm-foundry, OPT), so both stay for later.
 */
#ifndef SCALEPLAN_SIM_DP_CONTENTION_H
#define SCALEPLAN_SIM_DP_CONTENTION_H

#include "sim/costs.h"
#include "sim/engine.h"

/* CTAs of one NCCL collective kernel (see above; ASSUMED beyond the
 * all-gather it was measured on). */
#define DPC_NCCL_CTAS 24

/* Share of the GPU's compute a resident DP collective takes:
 * in->opt.dp_comm_ctas (< 0: DPC_NCCL_CTAS; 0, the default: the mechanism
 * off) over
 * the GPU's SMs, at most 1; 0 when the catalog gives no SM count. */
double dpc_sm_share(const sim_input_t *in);

/* Seconds during which tasks of stream a and of stream b run at the same
 * time, after eng_run (each stream runs its tasks in order, one at a
 * time). */
double dpc_overlap_s(const sim_engine_t *e, int stream_a, int stream_b);

/* Seconds of compute one pipeline stage loses: the SM share of the time
 * its DP stream's collectives overlap its compute stream on the timeline,
 * plus of hidden_s, the parameter gathers hidden behind the next step's
 * forwards. 0 when the mechanism is off. */
double dpc_stage_loss_s(const sim_input_t *in, const sim_engine_t *e, int compute_stream,
                        int dp_stream, double hidden_s);

#endif
