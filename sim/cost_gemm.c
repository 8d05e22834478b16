/* cost_gemm: the GEMMs of a layer at their shapes after the TP split, with
 * the low-precision recipe's casts around them (sim/costsInt.h). */
#include "sim/costsInt.h"

/* A grouped GEMM over `batch` experts, each Y[M x N] = X[M x K] W[K x N],
 * with the recipe's casts; one GEMM after another when not grouped. */
gemm_cost_t cost_grouped_linear(const pricer_t *pr, double M, double N, double K, double batch,
                                bool grouped)
{
    gemm_cost_t g;
    if (grouped) {
        g.fwd = gemm(pr, M, N, K, batch);
        g.dgrad = gemm(pr, M, K, N, batch);
        g.wgrad = gemm(pr, K, N, M, batch);
    } else {
        g.fwd = batch * gemm(pr, M, N, K, 1);
        g.dgrad = batch * gemm(pr, M, K, N, 1);
        g.wgrad = batch * gemm(pr, K, N, M, 1);
    }
    g.m = M;
    g.n = N;
    g.k = K;
    const prec_costs_t *q = pr->q;
    if (q->quantized) {
        double mb = pr->in->layout->grad_accum > 0 ? pr->in->layout->grad_accum : 1;
        bool per_step = q->weight_cast_per_step && pr->in->opt.fp8_weight_cache;
        double w = q->cast_weight * K * N * batch / (per_step ? mb : 1);
        g.fwd += mem(pr, q->cast_input * M * K * batch + w);
        g.dgrad += mem(pr, (q->cast_grad * M * N + q->rescale_grad_out * M * K) * batch);
        g.wgrad += mem(pr, q->rescale_grad_out * K * N * batch);
    }
    return g;
}

/* Y[M x N] = X[M x K] W[K x N]: forward, input gradient, weight gradient,
 * with the low-precision recipe's quantization of X in the forward, of dY
 * in the backward (counted with dgrad) and of W (once per step when the
 * recipe caches it, spread over the step's micro-batches; else in every
 * forward). */
gemm_cost_t cost_linear(const pricer_t *pr, double M, double N, double K)
{
    return cost_grouped_linear(pr, M, N, K, 1, true);
}

/* A per-tensor fp8 recipe that quantizes before sequence parallelism's
 * all-gathers (sim_options_t.fp8_tp_gather) with TP over SP. */
static bool fp8_sp_gather(const pricer_t *pr)
{
    const layout_t *l = pr->in->layout;
    return pr->in->opt.fp8_tp_gather && l->sequence_parallel && l->tp > 1 &&
           (l->precision == PRECISION_FP8 || l->precision == PRECISION_FP8_CS);
}

/* What quantizing a tensor of el gathered elements costs when it is cast
 * on this rank's sequence shard before the gather: the cast without its
 * transposed write (cast_bytes - 1) over el/t, and the transposed copy the
 * weight gradient needs made from the gathered fp8 tensor (read 1, write 1
 * an element: Transformer Engine's fp8_transpose of the re-gathered input
 * and output gradient, torchao's transposed float8 data). */
static double sharded_cast(const pricer_t *pr, double cast_bytes, double el)
{
    return mem(pr, (cast_bytes - 1) * el / pr->t + 2 * el);
}

/* A column-parallel GEMM (Q/K/V, the MLP's first): under an fp8 recipe that
 * gathers quantized inputs, the input cast runs on the shard. After a norm
 * that writes the delayed-scaling fp8 input itself (after_norm with
 * sim_options_t.fp8_norm_cast: Transformer Engine's LayerNormLinear, which
 * quantizes in the normalization kernel, TE 2.1 layernorm_linear.py
 * with_quantized_norm) only the weight gradient's transposed copy is left:
 * a read and a write of 1 byte an element (TE's fp8_transpose / the
 * columnwise copy). */
gemm_cost_t cost_linear_col(const pricer_t *pr, double M, double N, double K, bool after_norm)
{
    gemm_cost_t g = cost_linear(pr, M, N, K);
    if (after_norm && pr->in->opt.fp8_norm_cast && pr->in->layout->precision == PRECISION_FP8)
        g.fwd += mem(pr, 2 * M * K) - mem(pr, pr->q->cast_input * M * K);
    else if (fp8_sp_gather(pr))
        g.fwd += sharded_cast(pr, pr->q->cast_input, M * K) - mem(pr, pr->q->cast_input * M * K);
    return g;
}

/* A row-parallel GEMM (the attention output's, the MLP's second): under an
 * fp8 recipe that gathers quantized gradients, the output-gradient cast of
 * the backward runs on the shard. */
gemm_cost_t cost_linear_row(const pricer_t *pr, double M, double N, double K)
{
    gemm_cost_t g = cost_linear(pr, M, N, K);
    if (fp8_sp_gather(pr))
        g.dgrad += sharded_cast(pr, pr->q->cast_grad, M * N) - mem(pr, pr->q->cast_grad * M * N);
    return g;
}

/* The output layer's GEMMs: in the run's 16-bit type and never quantized,
 * whatever the recipe. Megatron-Core (and so NeMo and Megatron-Bridge)
 * builds the output layer as its own tensor_parallel.ColumnParallelLinear,
 * outside Transformer Engine's fp8/fp4 autocast (megatron/core/models/gpt/
 * gpt_model.py); torchtitan's Llama 3 configs leave it out of float8
 * (filter_fqns = ["output"], torchtitan/models/llama3/train_configs) and its
 * MX converter skips it by default; MPT's head is the tied embedding
 * (F.linear on the bf16 wte weight), outside llm-foundry's te.Linear layers. */
gemm_cost_t cost_linear_head(const pricer_t *pr, double M, double N, double K)
{
    dtype_t d = dtype16(pr);
    gemm_cost_t g = {prof_gemm_time(pr->p, d, M, N, K, 1), prof_gemm_time(pr->p, d, M, K, N, 1),
                     prof_gemm_time(pr->p, d, K, N, M, 1), M, N, K};
    return g;
}
