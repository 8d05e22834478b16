/* costsInt: what the cost modules share, and nothing else may include
 * (SQLite's whereInt.h for its where*.c). sim/costs.h is the contract;
 * sim_costs (sim/costs.c) prices a step's pieces by calling one module per
 * mechanism through the declarations below:
 *
 *   sim/costs.c          sim_costs: checks, spans, the layer(s), edges,
 *                        pipeline transfers, the passes' DP extras, summed
 *   sim/cost_gemm.c      GEMMs at their shapes with the recipe's casts
 *   sim/cost_attn.c      Q/K/V projections and the attention core
 *   sim/cost_tp.c        tensor-parallel collectives (and their overlap)
 *   sim/cost_cp.c        context parallelism's ring blocks and exchange
 *   sim/cost_moe.c       mixture-of-experts blocks: router, experts, dispatch
 *   sim/cost_layer.c     one dense or MoE transformer layer, its recompute
 *   sim/cost_hybrid.c    hybrid models' blocks (Mamba-2, Gated DeltaNet, ...)
 *   sim/cost_finetune.c  LoRA / QLoRA adapters and dequantization
 *   sim/cost_edges.c     embedding, output layer, loss, multi-token prediction
 *   sim/cost_host.c      the host issuing the kernels (sim/host.h)
 *   sim/cost_dp.c        ZeRO-3 per layer, DP reductions and gathers, the
 *                        optimizer step, fp8 amax syncs (sim/amax.h)
 *   sim/cost_offload.c   host offload's transfers (sim/offload.h)
 *   sim/cost_options.c   sim_options_t's defaults and switches (no pricing)
 *
 * (sim/options_framework.c applies a framework preset to sim_options_t: it
 * includes sim/framework.h, which includes sim/costs.h, so it is kept out of
 * the cost modules and costs.c includes no header that includes it back.)
 *
 * Only sim/cost*.c include this file (tools/check-layers.sh fails on any
 * other). Its functions are prefixed cost_; each is documented where it is
 * defined. */
#ifndef SCALEPLAN_SIM_COSTSINT_H
#define SCALEPLAN_SIM_COSTSINT_H

#include <stdbool.h>

#include "sim/costs.h"

/* ---------------------------------------------------------------- the pricer */

typedef struct {
    const sim_input_t *in;
    const profile_t *p;
    step_costs_t *out;
    dtype_t dt;    /* GEMM data type */
    double e;      /* bytes per activation element */
    double T;      /* tokens of one micro-batch on this GPU (s/cp x b) */
    double Tn;     /* tokens norms and residuals see (T/t with SP) */
    double t;      /* TP degree */
    const prec_costs_t *q; /* the precision recipe */
    /* with CP, the attention of one ring step (sim cost_cp_blocks): the
     * first (local, masked) block and each later one, forward and backward */
    double cp_f0, cp_b0, cp_fs, cp_bs;
    bool frozen;   /* LoRA / QLoRA: the base's weights get no gradient */
} pricer_t;

static inline void add_op(pricer_t *pr, const char *name, double fwd, double bwd)
{
    step_costs_t *o = pr->out;
    if (o->n_ops < SIM_MAX_OPS)
        o->ops[o->n_ops++] = (op_cost_t){name, fwd, bwd};
    o->fwd.compute += fwd;
    o->bwd.compute += bwd;
}

/* An operation made of GEMMs: its backward's weight-gradient part is also
 * counted apart (step_costs_t.bwd_wgrad_s). */
static inline void add_gemm_op(pricer_t *pr, const char *name, double fwd, double dgrad,
                               double wgrad)
{
    if (pr->frozen)
        wgrad = 0; /* a frozen base linear: its input gradient only */
    add_op(pr, name, fwd, dgrad + wgrad);
    pr->out->bwd_wgrad_s += wgrad;
}

static inline double mem(const pricer_t *pr, double bytes)
{
    return prof_mem_time(pr->p, bytes);
}

/* The run's 16-bit type: what an fp8/fp4 recipe leaves unquantized
 * (attention, the output layer) runs in bf16. */
static inline dtype_t dtype16(const pricer_t *pr)
{
    return pr->dt == DTYPE_FP8 || pr->dt == DTYPE_FP4 ? DTYPE_BF16 : pr->dt;
}

/* A GEMM's time at the recipe's GEMM rate (its inputs already quantized). */
static inline double gemm(const pricer_t *pr, double M, double N, double K, double batch)
{
    return prof_gemm_time(pr->p, pr->dt, M, N, K, batch);
}

static inline double coll(const pricer_t *pr, coll_op_t op, const coll_span_t *s, double bytes)
{
    return prof_coll_time(pr->p, op, s, bytes);
}

typedef struct {
    double fwd, dgrad, wgrad;
    double m, n, k; /* the forward's shape: Y[m x n] = X[m x k] W[k x n] */
} gemm_cost_t;

/* ---------------------------------------------------------------- sim/costs.c */

cost_parts_t cost_parts_mix(const cost_parts_t *a, double wa, const cost_parts_t *b, double wb);
coll_span_t cost_span(const cluster_t *c, const group_place_t *g);
coll_span_t cost_ep_span(const cluster_t *c, const layout_t *l, int etp);
coll_span_t cost_consecutive_span(const cluster_t *c, int n);

/* ---------------------------------------------------------------- sim/cost_gemm.c */

gemm_cost_t cost_grouped_linear(const pricer_t *pr, double M, double N, double K, double batch,
                                bool grouped);
gemm_cost_t cost_linear(const pricer_t *pr, double M, double N, double K);
gemm_cost_t cost_linear_col(const pricer_t *pr, double M, double N, double K, bool after_norm);
gemm_cost_t cost_linear_row(const pricer_t *pr, double M, double N, double K);
gemm_cost_t cost_linear_head(const pricer_t *pr, double M, double N, double K);

/* ---------------------------------------------------------------- mechanisms */

void cost_attention(pricer_t *pr, double *fwd, double *bwd);           /* cost_attn.c */
gemm_cost_t cost_qkv(pricer_t *pr);                                    /* cost_attn.c */
double cost_tp(pricer_t *pr, const gemm_cost_t *qkv, const gemm_cost_t *proj,
               const gemm_cost_t *fc1, const gemm_cost_t *fc2);        /* cost_tp.c */
void cost_cp_blocks(pricer_t *pr, dtype_t dt, double flops, double s_loc, int qk_dim,
                    double *fwd, double *bwd);                         /* cost_cp.c */
void cost_cp(pricer_t *pr);                                            /* cost_cp.c */
void cost_moe(pricer_t *pr, gemm_cost_t *sh1, gemm_cost_t *sh2, bool *shared); /* cost_moe.c */
double cost_selective_recompute(pricer_t *pr, int from, bool moe, double attn_f); /* cost_layer.c */
void cost_dense_mlp(pricer_t *pr, gemm_cost_t *fc1, gemm_cost_t *fc2); /* cost_layer.c */
void cost_layer(pricer_t *pr, bool moe);                               /* cost_layer.c */
int cost_hybrid(pricer_t *pr, err_t *err);                             /* cost_hybrid.c */
void cost_finetune(pricer_t *pr);                                      /* cost_finetune.c */
void cost_edges(pricer_t *pr);                                         /* cost_edges.c */
void cost_frozen_edges(pricer_t *pr);                                  /* cost_edges.c */
void cost_host(pricer_t *pr, int first_op, bool moe);                  /* cost_host.c */
int cost_host_graphs_possible(const sim_input_t *in, err_t *err);      /* cost_host.c */
void cost_zero3(const sim_input_t *in, step_costs_t *out);             /* cost_dp.c */
void cost_amax(const sim_input_t *in, step_costs_t *out);              /* cost_dp.c */
void cost_offload(const sim_input_t *in, step_costs_t *out);           /* cost_offload.c */

#endif
