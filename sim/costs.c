#include "sim/costs.h"
#include "models/hybrid.h"
#include "sim/ssm_cost.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include <gsl/gsl_cdf.h>

#include "sim/amax.h"
#include "frameworks/framework.h"
#include "sim/moe_dispatch.h"
#include "models/memory.h"

void sim_options_compiled_model(sim_options_t *o)
{
    o->eager_norm = o->eager_rope = o->eager_act = o->eager_cp_merge = 1;
}

void sim_options_compiled_loss(sim_options_t *o)
{
    if (o->ce_compiled_fwd_bytes > 0) {
        /* one compiled loss, with or without TP */
        o->ce_fwd_bytes = o->ce_compiled_fwd_bytes;
        o->ce_bwd_bytes = o->ce_compiled_bwd_bytes;
        o->ce_peak_bytes = o->ce_compiled_peak_bytes;
        o->ce_tp_fwd_bytes = o->ce_tp_bwd_bytes = o->ce_tp_peak_bytes = 0;
    }
}

void sim_options_compiled(sim_options_t *o)
{
    sim_options_compiled_model(o);
    sim_options_compiled_loss(o);
}

int sim_options_precision(sim_options_t *o, precision_t p, err_t *err)
{
    return sim_options_precision_in(NULL, o, p, err);
}

int sim_options_precision_in(catalog_t *cat, sim_options_t *o, precision_t p, err_t *err)
{
    int rc = prec_costs_in(cat, p, &o->prec, err);
    if (!rc)
        o->prec_for = (int)p + 1;
    return rc;
}

int sim_options_framework(const char *name, const char *gpu, sim_options_t *o, layout_t *l,
                          err_t *err)
{
    return sim_options_framework_in(NULL, name, gpu, o, l, err);
}

int sim_options_framework_in(catalog_t *cat, const char *name, const char *gpu, sim_options_t *o,
                             layout_t *l, err_t *err)
{
    fw_preset_t p;
    int rc = fw_load_in(cat, name, &p, err);
    if (rc)
        return rc;
    fw_apply(&p, o, l);
    fw_apply_gpu(&p, gpu, NULL, o);
    return ERR_OK;
}

int sim_model_supported(const model_t *m, err_t *err)
{
    (void)m;
    (void)err;
    return ERR_OK;
}

double cost_total(const cost_parts_t *c)
{
    return c->compute + c->recompute + c->tp + c->cp + c->dp + c->offload + c->ep + c->imbalance +
           c->host;
}

/* a x wa + b x wb, part by part (layers of two kinds averaged). */
static cost_parts_t parts_mix(const cost_parts_t *a, double wa, const cost_parts_t *b, double wb)
{
    cost_parts_t r;
    r.compute = a->compute * wa + b->compute * wb;
    r.recompute = a->recompute * wa + b->recompute * wb;
    r.tp = a->tp * wa + b->tp * wb;
    r.cp = a->cp * wa + b->cp * wb;
    r.dp = a->dp * wa + b->dp * wb;
    r.offload = a->offload * wa + b->offload * wb;
    r.ep = a->ep * wa + b->ep * wb;
    r.imbalance = a->imbalance * wa + b->imbalance * wb;
    r.host = a->host * wa + b->host * wb;
    return r;
}

double sim_expected_max_normal(int n)
{
    if (n <= 1)
        return 0;
    /* Blom (1958): E[max of n] ~ Phi^-1((n - 0.375) / (n + 0.25)). */
    return gsl_cdf_ugaussian_Pinv((n - 0.375) / (n + 0.25));
}

/* ---------------------------------------------------------------- spans */

static coll_span_t span_of(const cluster_t *c, const group_place_t *g)
{
    coll_span_t s;
    s.n_ranks = g->size;
    s.ranks_per_node = g->ranks_per_node;
    s.nodes = g->nodes;
    s.intra = &c->intra;
    s.inter = &c->inter;
    s.nic_gbs_per_gpu = cluster_nic_gbs_per_gpu(c);
    /* Beyond one leaf the traffic crosses the tapered spine. */
    s.taper = g->nodes > c->nodes_per_leaf ? c->oversubscription : 1.0;
    return s;
}

/* Two neighbouring pipeline stages: on one node or on two. */
static coll_span_t pp_pair_span(const cluster_t *c, const group_place_t *pp)
{
    group_place_t pair = {2, pp->stride, pp->crosses_nodes ? 2 : 1,
                          pp->crosses_nodes ? 1 : 2, pp->crosses_nodes};
    return span_of(c, &pair);
}

/* ---------------------------------------------------------------- pricing */

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
    /* with CP, the attention of one ring step (sim price_cp_blocks): the
     * first (local, masked) block and each later one, forward and backward */
    double cp_f0, cp_b0, cp_fs, cp_bs;
    bool frozen;   /* LoRA / QLoRA: the base's weights get no gradient */
} pricer_t;

static void add_op(pricer_t *pr, const char *name, double fwd, double bwd)
{
    step_costs_t *o = pr->out;
    if (o->n_ops < SIM_MAX_OPS)
        o->ops[o->n_ops++] = (op_cost_t){name, fwd, bwd};
    o->fwd.compute += fwd;
    o->bwd.compute += bwd;
}

/* An operation made of GEMMs: its backward's weight-gradient part is also
 * counted apart (step_costs_t.bwd_wgrad_s). */
static void add_gemm_op(pricer_t *pr, const char *name, double fwd, double dgrad, double wgrad)
{
    if (pr->frozen)
        wgrad = 0; /* a frozen base linear: its input gradient only */
    add_op(pr, name, fwd, dgrad + wgrad);
    pr->out->bwd_wgrad_s += wgrad;
}

static double mem(const pricer_t *pr, double bytes)
{
    return prof_mem_time(pr->p, bytes);
}

/* The run's 16-bit type: what an fp8/fp4 recipe leaves unquantized
 * (attention, the output layer) runs in bf16. */
static dtype_t dtype16(const pricer_t *pr)
{
    return pr->dt == DTYPE_FP8 || pr->dt == DTYPE_FP4 ? DTYPE_BF16 : pr->dt;
}

/* A GEMM's time at the recipe's GEMM rate (its inputs already quantized). */
static double gemm(const pricer_t *pr, double M, double N, double K, double batch)
{
    return prof_gemm_time(pr->p, pr->dt, M, N, K, batch);
}

typedef struct {
    double fwd, dgrad, wgrad;
    double m, n, k; /* the forward's shape: Y[m x n] = X[m x k] W[k x n] */
} gemm_cost_t;

/* A grouped GEMM over `batch` experts, each Y[M x N] = X[M x K] W[K x N],
 * with the recipe's casts; one GEMM after another when not grouped. */
static gemm_cost_t grouped_linear(const pricer_t *pr, double M, double N, double K, double batch,
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
static gemm_cost_t linear(const pricer_t *pr, double M, double N, double K)
{
    return grouped_linear(pr, M, N, K, 1, true);
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
static gemm_cost_t linear_col(const pricer_t *pr, double M, double N, double K, bool after_norm)
{
    gemm_cost_t g = linear(pr, M, N, K);
    if (after_norm && pr->in->opt.fp8_norm_cast && pr->in->layout->precision == PRECISION_FP8)
        g.fwd += mem(pr, 2 * M * K) - mem(pr, pr->q->cast_input * M * K);
    else if (fp8_sp_gather(pr))
        g.fwd += sharded_cast(pr, pr->q->cast_input, M * K) - mem(pr, pr->q->cast_input * M * K);
    return g;
}

/* A row-parallel GEMM (the attention output's, the MLP's second): under an
 * fp8 recipe that gathers quantized gradients, the output-gradient cast of
 * the backward runs on the shard. */
static gemm_cost_t linear_row(const pricer_t *pr, double M, double N, double K)
{
    gemm_cost_t g = linear(pr, M, N, K);
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
static gemm_cost_t linear_head(const pricer_t *pr, double M, double N, double K)
{
    dtype_t d = dtype16(pr);
    gemm_cost_t g = {prof_gemm_time(pr->p, d, M, N, K, 1), prof_gemm_time(pr->p, d, M, K, N, 1),
                     prof_gemm_time(pr->p, d, K, N, M, 1), M, N, K};
    return g;
}

static double coll(const pricer_t *pr, coll_op_t op, const coll_span_t *s, double bytes)
{
    return prof_coll_time(pr->p, op, s, bytes);
}

/* Context-parallel attention as the ring implementations run it, block by
 * block (Transformer Engine's AttnFuncWithCPAndKVP2P; PyTorch's
 * _templated_ring_attention, which torchtitan's all-gather rotation also
 * runs). With a causal mask and load balancing (rank r holds chunks r and
 * 2cp-1-r) step 0 is the local causal block over s/cp keys, 1/cp of the
 * work; each of the cp - 1 later steps is a mask-free block of the same
 * work, either all queries against the first half of the keys (steps
 * i <= r) or the second half of the queries against all keys (i > r).
 * The forward kernel loops over keys, the backward over queries, so the
 * two kinds differ in speed; the last rank runs only the first kind, rank
 * 0 only the second, and the slower of the two paces the group. Without a
 * mask every step is a full block over s/cp. */
static void price_cp_blocks(pricer_t *pr, dtype_t dt, double flops, double s_loc, int qk_dim,
                            double *fwd, double *bwd)
{
    const layout_t *l = pr->in->layout;
    bool causal = pr->in->opt.causal;
    const char *k = pr->in->opt.attn_kernel;
    double steps = l->cp - 1, per_step = flops / l->cp;
    prof_attn_call_t first = {k, causal, s_loc, qk_dim};
    prof_attn_call_t whole = {k, false, s_loc, qk_dim};
    prof_attn_call_t half = {k, false, causal ? s_loc / 2 : s_loc, qk_dim};
    double f0 = prof_attn_time(pr->p, dt, &first, per_step, false);
    double b0 = prof_attn_time(pr->p, dt, &first, 2.5 * per_step, true);
    /* half the keys: short forward loop, whole backward loop; half the
     * queries: the other way round */
    double f_kv = prof_attn_time(pr->p, dt, &half, per_step, false);
    double b_kv = prof_attn_time(pr->p, dt, &whole, 2.5 * per_step, true);
    double f_q = prof_attn_time(pr->p, dt, &whole, per_step, false);
    double b_q = prof_attn_time(pr->p, dt, &half, 2.5 * per_step, true);
    bool kv_slower = f_kv + b_kv >= f_q + b_q;
    pr->cp_f0 = f0;
    pr->cp_b0 = b0;
    pr->cp_fs = kv_slower ? f_kv : f_q;
    pr->cp_bs = kv_slower ? b_kv : b_q;
    *fwd = f0 + steps * pr->cp_fs;
    *bwd = b0 + steps * pr->cp_bs;
}

/* Attention core of one layer: returns forward and backward seconds. */
/* Sliding-window blocks (model_t.window over window_layers of the
 * layers): a fused kernel skips the key blocks outside the window as it
 * skips the masked ones, so a query attends to at most `window` keys
 * (causal: on average w - w^2/2s of them; FlashAttention-2's and cuDNN's
 * window_size). The layer priced stands for every block, so its attention is
 * the blocks' average. Kept whole (said by the model reader) with context
 * parallelism, whose ring splits the sequence first. */
static void price_window(const pricer_t *pr, const prof_attn_call_t *full, dtype_t dt,
                         double width, double *fwd, double *bwd)
{
    const model_t *m = pr->in->model;
    double s = pr->in->layout->seq_len, w = m->window;
    if (!(w > 0 && w < s && m->window_layers > 0))
        return;
    double keys = full->causal ? w - w * w / (2 * s) : w;
    double flops = 4 * pr->T * keys * width;
    prof_attn_call_t call = *full;
    call.keys = w;
    double share = (double)m->window_layers / m->n_layers;
    *fwd = (1 - share) * *fwd + share * prof_attn_time(pr->p, dt, &call, flops, false);
    *bwd = (1 - share) * *bwd + share * prof_attn_time(pr->p, dt, &call, 2.5 * flops, true);
}

static void price_attention(pricer_t *pr, double *fwd, double *bwd)
{
    const model_t *m = pr->in->model;
    const layout_t *l = pr->in->layout;
    double s = l->seq_len, s_loc = s / l->cp, b = l->micro_batch;
    double heads = m->n_heads / pr->t, hd = m->head_dim;
    /* multi-latent attention: queries and keys of qk_nope + qk_rope per
     * head, values of v_dim (the kernel runs at the query-key width) */
    double qk_dim = hd, v_dim = hd;
    if (model_is_mla(m)) {
        qk_dim = m->mla.qk_nope_dim + m->mla.qk_rope_dim;
        v_dim = m->mla.v_dim;
        hd = (qk_dim + v_dim) / 2;
    }
    if (l->flash_attention) {
        /* Fused kernels do the work they cannot skip: half of it under a
         * causal mask. Backward does 2.5x the forward's matmuls (five
         * GEMM-shaped products to the forward's two). */
        bool causal = pr->in->opt.causal;
        double flops = 4 * pr->T * s * heads * hd * (causal ? 0.5 : 1.0);
        dtype_t dt = dtype16(pr);
        if (l->cp > 1 && pr->in->opt.cp_comm != CP_A2A) {
            price_cp_blocks(pr, dt, flops, s_loc, (int)qk_dim, fwd, bwd);
            return;
        }
        prof_attn_call_t call = {pr->in->opt.attn_kernel, causal, s, (int)qk_dim};
        *fwd = prof_attn_time(pr->p, dt, &call, flops, false);
        *bwd = prof_attn_time(pr->p, dt, &call, 2.5 * flops, true);
        price_window(pr, &call, dt, heads * hd, fwd, bwd);
        return;
    }
    /* Materialized scores (Megatron's fused scale-mask-softmax): batched
     * GEMMs over the full s x s product, softmax and dropout over it. */
    dtype_t dt = dtype16(pr);
    double batch = b * heads;
    double E = batch * s_loc * s; /* score elements */
    double qk = prof_gemm_time(pr->p, dt, s_loc, s, qk_dim, batch);
    double av = prof_gemm_time(pr->p, dt, s_loc, v_dim, s, batch);
    double softmax = mem(pr, 2 * E * pr->e);
    double dropout = m->dropout > 0 ? mem(pr, E * (2 * pr->e + 1)) : 0;
    *fwd = qk + softmax + dropout + av;
    double av_b = prof_gemm_time(pr->p, dt, s_loc, s, v_dim, batch) +
                  prof_gemm_time(pr->p, dt, s, v_dim, s_loc, batch);
    double qk_b = prof_gemm_time(pr->p, dt, s_loc, qk_dim, s, batch) +
                  prof_gemm_time(pr->p, dt, s, qk_dim, s_loc, batch);
    double softmax_b = mem(pr, 3 * E * pr->e);
    double dropout_b = m->dropout > 0 ? mem(pr, E * (2 * pr->e + 1)) : 0;
    *bwd = av_b + dropout_b + softmax_b + qk_b;
    /* the framework's layout copies into and out of the batched products
     * (each pass reads and writes every element once) */
    const sim_options_t *o = &pr->in->opt;
    double out_el = b * s_loc * heads * v_dim;
    double qkv_el = b * s_loc * (model_q_width(m) + 2.0 * model_kv_width(m)) / pr->t;
    *fwd += mem(pr, 2 * pr->e * o->attn_copy_fwd_qkv * qkv_el) +
            mem(pr, 2 * pr->e * o->attn_copy_fwd_out * out_el);
    *bwd += mem(pr, 2 * pr->e * o->attn_copy_bwd_qkv * qkv_el) +
            mem(pr, 2 * pr->e * o->attn_copy_bwd_out * out_el);
    /* with CP, each ring step an equal share of the products */
    pr->cp_f0 = pr->cp_fs = *fwd / l->cp;
    pr->cp_b0 = pr->cp_bs = *bwd / l->cp;
}

/* What one GEMM and the TP collective overlapped with it cost beyond the
 * GEMM alone (sim/tp_overlap.h): the collective's uncovered part, the last
 * chunk of a reduce-scatter that nothing follows (the first chunk an
 * aggregated ring gather waits for), the GEMM cut into chunks
 * (smaller GEMMs run less efficiently) and the SMs the communication
 * takes. rows/cols/inner: the GEMM's shape, cut along rows; gemm_s its
 * time whole; rs: the collective reduce-scatters the GEMM's output. */
static double tpo_cost(const pricer_t *pr, const tpo_role_t *r, double rows, double cols,
                       double inner, double gemm_s, double comm_s, bool rs)
{
    double chunks = r->method == TPO_RING ? pr->t : r->method == TPO_PIPELINE ? r->splits : 1;
    /* an aggregated ring gather: the first GEMM waits for one chunk from the
     * paired neighbour, then TP/2 GEMMs of two chunks each hide the rest */
    double head = 0;
    if (r->method == TPO_RING && r->aggregate && !rs && pr->t >= 2) {
        chunks = pr->t / 2;
        head = comm_s / (pr->t - 1);
        comm_s -= head;
    }
    double split = 0;
    if (chunks > 1)
        split = chunks * gemm(pr, rows / chunks, cols, inner, 1) - gemm(pr, rows, cols, inner, 1);
    double g = gemm_s + fmax(0, split);
    double tail = (rs && chunks > 1 ? comm_s / chunks : 0) + head;
    double sms = pr->in->cluster->gpu.sm_count > 0 ? pr->in->cluster->gpu.sm_count : 1;
    double share = fmin(r->sms / sms, 0.9);
    /* with a margin the GEMM runs on the SMs left for all of its length;
     * without, the two share the SMs while the communication runs */
    double sm = r->sm_margin ? g * share / (1 - share) : fmin(g, comm_s) * share;
    return fmax(0, split) + fmax(0, comm_s - g) + tail + sm;
}

/* TP collectives of one layer: forward, backward (what stays exposed).
 * Returns the forward cost of the MLP's last collective (the one after its
 * row-parallel GEMM; 0 without a TP MLP), which an early-stopping
 * recompute does not run again. */
static double price_tp(pricer_t *pr, const gemm_cost_t *qkv, const gemm_cost_t *proj,
                       const gemm_cost_t *fc1, const gemm_cost_t *fc2)
{
    const layout_t *l = pr->in->layout;
    const sim_options_t *o = &pr->in->opt;
    step_costs_t *out = pr->out;
    double tail = 0;
    if (l->tp <= 1)
        return 0;
    const coll_span_t *s = &out->tp_span;
    double bytes = pr->T * pr->in->model->hidden * pr->e; /* full activation */
    /* per-tensor fp8 recipes quantize before sequence parallelism's
     * all-gathers (sim_options_t.fp8_tp_gather): 1 byte an element */
    double ag_bytes = o->fp8_tp_gather && (l->precision == PRECISION_FP8 ||
                                           l->precision == PRECISION_FP8_CS)
                          ? pr->T * pr->in->model->hidden
                          : bytes;
    const gemm_cost_t *col[2] = {qkv, fc1}, *row[2] = {proj, fc2};
    int halves = fc1 && fc2 ? 2 : 1; /* an MoE block's routed experts have no TP MLP */
    const tpo_role_t *roles = NULL;
    if (o->tp_comm_overlap && l->sequence_parallel && !(o->tp_overlap_off & (1u << l->precision)))
        roles = tpo_select(&o->tp_overlap, pr->in->cluster->gpu.architecture,
                           pr->in->model->hidden, l->tp);
    for (int i = 0; i < halves; i++) {
        if (!l->sequence_parallel) {
            /* forward: all-reduce after the row-parallel GEMM; backward:
             * all-reduce of the column-parallel input gradient, which can
             * run during that layer's weight-gradient GEMM. */
            double ar = coll(pr, COLL_ALL_REDUCE, s, bytes);
            out->fwd.tp += ar;
            tail = halves == 2 && i == 1 ? ar : 0;
            out->bwd.tp += o->async_tp_grad ? fmax(0, ar - col[i]->wgrad) : ar;
            continue;
        }
        double ag = coll(pr, COLL_ALL_GATHER, s, ag_bytes);
        double rs = coll(pr, COLL_REDUCE_SCATTER, s, bytes);
        if (roles) {
            /* forward: gather | column GEMM, row GEMM | scatter; backward:
             * gather the output gradient | row dgrad, re-gather the input |
             * column dgrad, scatter the input gradient | column wgrad */
            const tpo_role_t *r = roles + (i == 0 ? 0 : TPO_FC1_FPROP - TPO_QKV_FPROP);
            const gemm_cost_t *c = col[i], *w = row[i];
            /* symmetric-memory async TP adds the reduce-scatter's t partial
             * sums in one kernel after the last chunk: the whole output read,
             * the shard written, for the forward's scatter and the input
             * gradient's (PyTorch _fused_matmul_reduce_scatter_impl) */
            double reduce = o->tp_overlap.reduce_pass ? mem(pr, bytes * (1 + 1 / pr->t)) : 0;
            double scatter =
                tpo_cost(pr, &r[TPO_PROJ_FPROP], w->m, w->n, w->k, w->fwd, rs, true) + reduce;
            /* row-scaled fp8 gathers that the async TP pass leaves unfused
             * run whole before their GEMMs (pytorch/pytorch#149990) */
            bool unfused = o->tp_overlap.rowwise_gather_unfused &&
                           l->precision == PRECISION_FP8_ROWWISE;
            out->fwd.tp +=
                (unfused ? ag
                         : tpo_cost(pr, &r[TPO_QKV_FPROP], c->m, c->n, c->k, c->fwd, ag, false)) +
                scatter;
            tail = halves == 2 && i == 1 ? scatter : 0;
            out->bwd.tp +=
                (unfused ? 2 * ag
                         : tpo_cost(pr, &r[TPO_PROJ_DGRAD], w->m, w->k, w->n, w->dgrad, ag,
                                    false) +
                               tpo_cost(pr, &r[TPO_QKV_DGRAD], c->m, c->k, c->n, c->dgrad, ag,
                                        false)) +
                tpo_cost(pr, &r[TPO_QKV_WGRAD], c->k, c->n, c->m, c->wgrad, rs, false) + reduce;
        } else {
            /* forward: gather before the column-parallel GEMM, scatter
             * after the row-parallel one; backward: gather the output
             * gradient, re-gather the input for the weight gradient (during
             * the input-gradient GEMM) and reduce-scatter the input
             * gradient (during the weight-gradient GEMM). */
            out->fwd.tp += ag + rs;
            tail = halves == 2 && i == 1 ? rs : 0;
            double hidden = o->async_tp_grad ? fmax(0, ag + rs - col[i]->dgrad - col[i]->wgrad)
                                             : ag + rs;
            out->bwd.tp += ag + hidden;
        }
    }
    return tail;
}

/* Context parallelism's K/V exchange, by the framework's method
 * (cp_comm_t), with the ring steps' attention blocks priced by
 * price_cp_blocks: a ring hides each block's transfer behind the block in
 * hand; PyTorch's all-gather rotation issues its one gather before the
 * local block and waits for it after, then passes the K/V gradients round a
 * ring; Ulysses' all-to-alls sit on the critical path. Each later ring step
 * also merges its partial output (and, in the backward, accumulates the
 * query and K/V gradients): a memory pass of opt.cp_merge_bytes an element. */
static void price_cp(pricer_t *pr)
{
    const layout_t *l = pr->in->layout;
    const sim_options_t *o = &pr->in->opt;
    if (l->cp <= 1)
        return;
    const model_t *m = pr->in->model;
    const cluster_t *c = pr->in->cluster;
    const group_place_t *g = &pr->out->placement.group[GROUP_CP];
    double qw = model_q_width(m);
    /* K and V as attention sees them: grouped heads repeated to every query
     * head first when the model does so (sim_options_t.kv_repeated) */
    double kvw = o->kv_repeated ? qw : model_kv_width(m);
    double kv_el = 2 * pr->T * kvw / pr->t; /* this rank's K and V */
    double kv = kv_el * pr->e;
    double steps = l->cp - 1;
    if (o->cp_comm != CP_A2A) {
        double out_el = pr->T * (model_is_mla(m) ? (double)m->n_heads * m->mla.v_dim : qw) / pr->t;
        double q_el = pr->T * qw / pr->t;
        /* eager PyTorch decomposes the forward's merge into several passes;
         * the backward's accumulations are single in-place adds either way */
        double b = o->cp_merge_bytes;
        add_op(pr, "cp_merge", steps * mem(pr, b * o->eager_cp_merge * out_el),
               steps * mem(pr, b * (q_el + kv_el)));
    }
    group_place_t pair = {2, g->stride, g->crosses_nodes ? 2 : 1, g->crosses_nodes ? 1 : 2,
                          g->crosses_nodes};
    coll_span_t ps = pr->out->cp_pair_span = span_of(c, &pair);
    coll_span_t s = pr->out->cp_span = span_of(c, g);
    if (o->cp_comm == CP_RING) {
        /* step i sends the block step i + 1 needs while attending to its own;
         * the backward's blocks travel with their gradients */
        double send_f = coll(pr, COLL_SEND_RECV, &ps, kv);
        double send_b = coll(pr, COLL_SEND_RECV, &ps, 2 * kv);
        pr->out->fwd.cp = fmax(0, send_f - pr->cp_f0) + (steps - 1) * fmax(0, send_f - pr->cp_fs);
        pr->out->bwd.cp = fmax(0, send_b - pr->cp_b0) + (steps - 1) * fmax(0, send_b - pr->cp_bs);
        return;
    }
    if (o->cp_comm == CP_ALLGATHER) {
        /* PyTorch _templated_ring_attention with _AllGatherRotater: the
         * gather runs during the local block, forward and backward (the
         * backward gathers again); the backward's K/V gradients, fp32
         * (_ContextParallelOptions.convert_to_f32), go to the next rank
         * after every step, each transfer waited for after the next step's
         * block and the last one after the loop. */
        double ag = coll(pr, COLL_ALL_GATHER, &s, kv * l->cp);
        double dkv = coll(pr, COLL_SEND_RECV, &ps, kv_el * 4);
        pr->out->fwd.cp = fmax(0, ag - pr->cp_f0);
        pr->out->bwd.cp = fmax(0, ag - pr->cp_b0) + steps * fmax(0, dkv - pr->cp_bs) + dkv;
        return;
    }
    /* Ulysses: Q, K, V in and the output back, each an all-to-all of this
     * rank's share; twice as many in the backward */
    double qkvo = pr->T * (2 * qw + 2 * model_kv_width(m)) / pr->t * pr->e;
    double a2a = coll(pr, COLL_ALL_TO_ALL, &s, qkvo);
    pr->out->fwd.cp = a2a;
    pr->out->bwd.cp = 2 * a2a;
}

/* The attention half's projections before the core: Q, K and V (or
 * multi-latent attention's down- and up-projections), as one column-
 * parallel GEMM cost for the TP pricing; the ops go into the layer. */
static gemm_cost_t price_qkv(pricer_t *pr)
{
    const model_t *m = pr->in->model;
    double h = m->hidden, t = pr->t, e = pr->e;
    if (!model_is_mla(m)) {
        double qw = model_q_width(m), kvw = model_kv_width(m);
        double gate_w = m->hybrid.attn_out_gate ? qw : 0; /* Qwen3-Next's output gate */
        gemm_cost_t qkv = linear_col(pr, pr->T, (qw + 2 * kvw + gate_w) / t, h, true);
        add_gemm_op(pr, "qkv", qkv.fwd, qkv.dgrad, qkv.wgrad);
        return qkv;
    }
    /* MLA (Megatron-Core's MLASelfAttention): the down-projections are
     * replicated over TP (each rank runs them on the gathered tokens), the
     * up-projections column-parallel; RMSNorm on both latents. */
    const model_mla_t *a = &m->mla;
    double nh = m->n_heads, qk = a->qk_nope_dim + a->qk_rope_dim;
    double kv_down_w = (double)a->kv_lora_rank + a->qk_rope_dim;
    double q_down_w = a->q_lora_rank > 0 ? a->q_lora_rank : 0;
    gemm_cost_t down = linear(pr, pr->T, q_down_w + kv_down_w, h);
    gemm_cost_t q_up = a->q_lora_rank > 0 ? linear(pr, pr->T, nh * qk / t, a->q_lora_rank)
                                          : linear(pr, pr->T, nh * qk / t, h);
    gemm_cost_t kv_up = linear(pr, pr->T, nh * (a->qk_nope_dim + a->v_dim) / t, a->kv_lora_rank);
    add_gemm_op(pr, "mla_down", down.fwd, down.dgrad, down.wgrad);
    double latent = pr->T * (q_down_w + a->kv_lora_rank) * e * pr->in->opt.eager_norm;
    if (!a->no_latent_norms)
        add_op(pr, "mla_norm", mem(pr, 2 * latent), mem(pr, 3 * latent));
    add_gemm_op(pr, "mla_up", q_up.fwd + kv_up.fwd, q_up.dgrad + kv_up.dgrad,
                q_up.wgrad + kv_up.wgrad);
    gemm_cost_t all = {down.fwd + q_up.fwd + kv_up.fwd, down.dgrad + q_up.dgrad + kv_up.dgrad,
                       down.wgrad + q_up.wgrad + kv_up.wgrad,
                       pr->T, (q_down_w + kv_down_w + nh * (qk + a->qk_nope_dim + a->v_dim)) / t,
                       h};
    return all;
}


/* size ranks at a distance of stride on nodes of gpus_per_node: on one
 * node when they fit, one per node when the stride is a node or more, else
 * gpus_per_node / stride on each node. */
static coll_span_t strided_span(const cluster_t *c, int size, long stride)
{
    int gpn = c->gpus_per_node > 0 ? c->gpus_per_node : 1;
    group_place_t g;
    g.size = size;
    g.stride = (int)stride;
    if (stride * size <= gpn) {
        g.nodes = 1;
        g.ranks_per_node = size;
    } else if (stride >= gpn) {
        g.nodes = size;
        g.ranks_per_node = 1;
    } else {
        g.ranks_per_node = (int)(gpn / stride);
        g.nodes = (size + g.ranks_per_node - 1) / g.ranks_per_node;
    }
    g.crosses_nodes = g.nodes > 1;
    return span_of(c, &g);
}

/* The expert-parallel group: Megatron-Core lays expert ranks out as ETP,
 * EP, expert DP, so one EP group is ep ranks at a stride of etp. */
static coll_span_t ep_span_of(const cluster_t *c, const layout_t *l, int etp)
{
    return strided_span(c, l->ep, etp);
}

/* The expert-data-parallel group: ranks holding the same experts, at a
 * stride of EP x ETP. With a stride of a node or more, each member sits on
 * its own node and the group's traffic goes through one NIC per GPU. */
static coll_span_t edp_span_of(const cluster_t *c, const layout_t *l)
{
    return strided_span(c, (int)(layout_expert_dp(l) + 0.5), (long)l->ep * layout_etp(l));
}

/* A group of n consecutive ranks (expert-TP: the ranks of one expert). */
static coll_span_t consecutive_span(const cluster_t *c, int n)
{
    return strided_span(c, n, 1);
}

/* The local experts of one MoE block: E/EP of them, each on its share of
 * the EP x ETP group's tokens (tok, padded to capacity when asked), width
 * split over ETP, as a grouped or a sequential GEMM; the busiest rank's
 * extra time goes into imbalance. */
static void price_experts(pricer_t *pr, double tok, double pad)
{
    const model_t *m = pr->in->model;
    const model_moe_t *x = &m->moe;
    const layout_t *l = pr->in->layout;
    const moe_opts_t *mo = &pr->in->opt.moe;
    step_costs_t *out = pr->out;
    double h = m->hidden, e = pr->e, gate = m->mlp == MODEL_MLP_SWIGLU ? 2 : 1;
    double local = (double)x->n_experts / l->ep, fe = (double)x->expert_ffn / layout_etp(l);
    /* (with EP 1 every rank holds every expert: no rank waits for another) */
    double imb = mo->imbalance > 1 && l->ep > 1 ? mo->imbalance : 1;
    /* a capacity factor drops what is beyond it; padded, every expert runs
     * exactly its capacity (no rank waits, all do the padding) */
    double cf = mo->capacity_factor;
    if (cf > 0 && mo->pad_to_capacity) {
        tok *= pad;
        imb = 1;
    } else if (cf > 0 && imb > cf) {
        imb = cf;
    }
    gemm_cost_t in = grouped_linear(pr, tok, fe * gate, h, local, mo->grouped_gemm);
    gemm_cost_t outg = grouped_linear(pr, tok, h, fe, local, mo->grouped_gemm);
    double act = local * tok * fe * e * pr->in->opt.eager_act;
    double act_f = mem(pr, (gate > 1 ? 3 : 2) * act), act_b = mem(pr, (gate > 1 ? 5 : 3) * act);
    add_gemm_op(pr, "experts_in", in.fwd, in.dgrad, in.wgrad);
    add_op(pr, "expert_act", act_f, act_b);
    add_gemm_op(pr, "experts_out", outg.fwd, outg.dgrad, outg.wgrad);
    if (imb > 1) {
        /* the busiest rank's experts run imb x the mean tokens; the others
         * wait for it at the combine */
        gemm_cost_t in2 = grouped_linear(pr, tok * imb, fe * gate, h, local, mo->grouped_gemm);
        gemm_cost_t out2 = grouped_linear(pr, tok * imb, h, fe, local, mo->grouped_gemm);
        out->fwd.imbalance = in2.fwd + out2.fwd - in.fwd - outg.fwd + (imb - 1) * act_f;
        out->bwd.imbalance = in2.dgrad + in2.wgrad + out2.dgrad + out2.wgrad - in.dgrad -
                             in.wgrad - outg.dgrad - outg.wgrad + (imb - 1) * act_b;
    }
}

/* One direction's dispatch and combine of one MoE block on the topology
 * (routed: this rank's token copies in bytes, padding included). */
static double price_dispatch(pricer_t *pr, double routed, double pad)
{
    const model_t *m = pr->in->model;
    const layout_t *l = pr->in->layout;
    const moe_opts_t *mo = &pr->in->opt.moe;
    const cluster_t *c = pr->in->cluster;
    double h = m->hidden, e = pr->e, k = m->moe.top_k, Tn = pr->Tn;
    int etp = layout_etp(l);
    coll_span_t g = ep_span_of(c, l, etp);
    if (mo->dispatcher == MOE_DISPATCH_ALLGATHER) {
        /* every rank gathers the group's tokens and keeps those for its
         * experts; the outputs are reduce-scattered back */
        coll_span_t all = consecutive_span(c, l->ep * etp);
        all.nodes = g.nodes > all.nodes ? g.nodes : all.nodes;
        double gathered = Tn * h * e * l->ep * etp;
        return coll(pr, COLL_ALL_GATHER, &all, gathered) +
               coll(pr, COLL_REDUCE_SCATTER, &all, gathered);
    }
    /* the dispatch's element: 16 bits unless the framework sends DeepEP
     * fp8 tokens (sim/moe_dispatch.h); the combine stays in 16 bits */
    bool deepep = mo->dispatcher == MOE_DISPATCH_DEEPEP;
    double disp_e = moe_dispatch_elem_bytes(mo->dispatcher, mo->fp8_dispatch, pr->q->quantized, e);
    /* copies of a token on the wire: the all-to-all dispatchers send one
     * per chosen expert; DeepEP sends one per destination rank inside a
     * node, and across nodes one per destination node over the network,
     * forwarded over NVLink there (the DeepSeek-V3 report, section 3.2.2;
     * deepseek-ai/DeepEP's dispatch layout counts tokens per rank and per
     * RDMA rank), its combine reducing the same way; the NVLink forwarding
     * runs alongside and is not priced */
    double copies = deepep ? model_moe_destinations(m, g.nodes > 1 ? g.nodes : l->ep) : k;
    double comm = coll(pr, COLL_ALL_TO_ALL, &g, Tn * copies * h * disp_e * pad) +
                  coll(pr, COLL_ALL_TO_ALL, &g, routed * copies / k);
    /* where DeepEP's or HybridEP's own bandwidth has been published for
     * this architecture and span, at this EP size or between two measured
     * ones, those kernels' figures replace NCCL's all-to-all (sim/
     * moe_dispatch.h); beyond the measured sizes NCCL's stands in */
    double bw_d, bw_c;
    double nic = pr->p->net_gpu_gbs > 0 ? pr->p->net_gpu_gbs : g.nic_gbs_per_gpu;
    if (deepep && moe_dispatch_flex_gbs(c->gpu.architecture, g.nodes > 1, g.n_ranks, nic / g.taper,
                                        &bw_d, &bw_c) == MOE_FLEX_MEASURED)
        comm = Tn * copies * h * pad * (disp_e / (bw_d * 1e9) + e / (bw_c * 1e9));
    if (etp > 1) {
        coll_span_t et = consecutive_span(c, etp);
        comm += coll(pr, COLL_ALL_GATHER, &et, routed * etp) +
                coll(pr, COLL_REDUCE_SCATTER, &et, routed * etp);
    }
    return comm;
}

/* SMs the dispatcher's kernels hold while they run: Megatron-Core's
 * moe_deepep_num_sms default 20 (megatron/core/transformer/
 * transformer_config.py; DeepEP's own Buffer.num_sms is 20 too); NCCL's
 * all-to-all and all-gather over its channels, one SM each, 32 (ASSUMED:
 * NCCL's default channel limit). */
#define DEEPEP_SMS 20
#define NCCL_A2A_SMS 32

/* Of a stage's passes (micro-batches x virtual chunks), the share that
 * runs beside another micro-batch's opposite pass in Megatron-Core's
 * combined 1F1B (--overlap-moe-expert-parallel-comm): all but the warm-up
 * forwards, whose backward partners come only in the steady state, as many
 * as Megatron's schedules count them (pp - rank - 1, interleaved
 * 2 (pp - rank - 1) + (vpp - 1) pp; without a pipeline the first forward),
 * averaged over the stages. */
static double a2a_pair_share(const layout_t *l)
{
    double v = l->vpp > 1 ? l->vpp : 1;
    double passes = (l->grad_accum > 0 ? l->grad_accum : 1) * v, warm = 0;
    for (int s = 0; s < l->pp; s++) {
        double w = l->pp == 1 ? 1 : v > 1 ? 2.0 * (l->pp - s - 1) + (v - 1) * l->pp
                                          : (double)(l->pp - s - 1);
        warm += fmin(w, passes);
    }
    warm /= l->pp > 0 ? l->pp : 1;
    return passes > warm ? (passes - warm) / passes : 0;
}

/* The all-to-alls of an overlapped MoE block (comm: one direction's
 * dispatch and combine): in a steady-state pair a forward's and another
 * micro-batch's backward run together, their exchanges beside the pair's
 * compute on the SMs the dispatcher leaves (the compute slowed by its share
 * of the SMs while they overlap, what is longer than the compute exposed);
 * warm-up and cool-down passes have no partner and wait for theirs. */
static void a2a_overlap_exposed(pricer_t *pr, double comm)
{
    step_costs_t *out = pr->out;
    const moe_opts_t *mo = &pr->in->opt.moe;
    double sms = pr->p->sm_count > 0 ? pr->p->sm_count : 1;
    double held = mo->dispatcher == MOE_DISPATCH_DEEPEP ? DEEPEP_SMS : NCCL_A2A_SMS;
    double share = fmin(1, held / sms);
    double C = out->fwd.compute + out->bwd.compute, X = 2 * comm;
    double pair = fmax(0, X - C) + fmin(C, X) * share;
    double f = a2a_pair_share(pr->in->layout);
    out->fwd.ep = f * pair / 2 + (1 - f) * comm;
    out->bwd.ep = out->fwd.ep;
}

/* One MoE block's MLP part (after the second norm): router, token permute,
 * dispatch, the local experts, combine, unpermute, and the shared experts
 * (TP-split like a dense MLP: sh1/sh2 for the TP pricing, *shared false
 * when there are none). Communication goes into ep, what overlap does not
 * hide. */
static void price_moe(pricer_t *pr, gemm_cost_t *sh1, gemm_cost_t *sh2, bool *shared)
{
    const model_t *m = pr->in->model;
    const model_moe_t *x = &m->moe;
    const layout_t *l = pr->in->layout;
    const moe_opts_t *mo = &pr->in->opt.moe;
    step_costs_t *out = pr->out;
    double h = m->hidden, e = pr->e, k = x->top_k, E = x->n_experts;
    double gate = m->mlp == MODEL_MLP_SWIGLU ? 2 : 1;
    /* Tokens entering the block on this rank: 1/TP of the micro-batch with
     * sequence parallelism (Megatron requires it for MoE with TP). */
    double Tn = pr->Tn;
    /* router: fp32 scores, top-k and softmax over the experts */
    double router_f = prof_gemm_time(pr->p, DTYPE_BF16, Tn, E, h, 1) + mem(pr, 3 * Tn * E * 4);
    double router_b = prof_gemm_time(pr->p, DTYPE_BF16, Tn, h, E, 1) +
                      prof_gemm_time(pr->p, DTYPE_BF16, h, E, Tn, 1) + mem(pr, 4 * Tn * E * 4);
    add_op(pr, "router", router_f, router_b);
    /* permute: each token copied once per chosen expert, grouped by expert
     * (an unfused permute sorts indices and gathers in separate kernels:
     * about twice the traffic, an assumption); padded to capacity, the
     * padding is copied and sent too */
    double pad = mo->capacity_factor > 0 && mo->pad_to_capacity ? mo->capacity_factor : 1;
    double routed = Tn * k * h * e * pad;
    double perm = mem(pr, Tn * h * e + routed) * (mo->permute_fusion ? 1 : 2);
    /* unfused permutes scatter with atomic adds: an unpermute by
     * scatter_add_ in the forward, the gather's gradient by index_add_ in
     * the backward (the framework's scatter_adds_fwd/bwd) */
    double adds = Tn * k * h * pad;
    double scatter_f = prof_atomic_time(pr->p, mo->scatter_adds_fwd * adds);
    double scatter_b = prof_atomic_time(pr->p, mo->scatter_adds_bwd * adds);
    add_op(pr, "permute", perm, perm + scatter_b);
    /* an all-to-all by rank regroups what arrives by local expert, and the
     * outputs back by source rank before the combine (sim/moe_dispatch.h) */
    double tok = Tn * k * l->ep * layout_etp(l) / E, local = E / l->ep;
    double sort = mem(pr, moe_dispatch_local_sort_bytes(mo->dispatcher, l->ep, layout_etp(l),
                                                        local, tok * pad * local * h * e));
    if (sort > 0)
        add_op(pr, "sort_chunks", sort, sort);
    price_experts(pr, tok, pad);
    if (sort > 0)
        add_op(pr, "unsort_chunks", sort, sort);
    add_op(pr, "unpermute", perm + scatter_f, perm);
    /* shared experts: a dense MLP, TP-split */
    double shared_f = 0, shared_b = 0;
    *shared = x->shared_ffn > 0;
    if (*shared) {
        double fs = x->shared_ffn, t = pr->t;
        *sh1 = linear_col(pr, pr->T, fs * gate / t, h, false);
        *sh2 = linear_row(pr, pr->T, h, fs / t);
        double sact = pr->T * fs / t * e * pr->in->opt.eager_act;
        double sa_f = mem(pr, (gate > 1 ? 3 : 2) * sact), sa_b = mem(pr, (gate > 1 ? 5 : 3) * sact);
        add_gemm_op(pr, "shared_in", sh1->fwd, sh1->dgrad, sh1->wgrad);
        add_op(pr, "shared_act", sa_f, sa_b);
        add_gemm_op(pr, "shared_out", sh2->fwd, sh2->dgrad, sh2->wgrad);
        shared_f = sh1->fwd + sa_f + sh2->fwd;
        shared_b = sh1->dgrad + sh1->wgrad + sa_b + sh2->dgrad + sh2->wgrad;
    }
    double comm = price_dispatch(pr, routed, pad);
    out->ep_comm_layer_s = 2 * comm;
    /* what hides it: the shared experts run during the all-to-alls; with
     * the combined 1F1B overlap, another micro-batch's compute */
    double hide_f = mo->shared_overlap ? shared_f : 0;
    double hide_b = mo->shared_overlap ? shared_b : 0;
    if (mo->a2a_overlap) {
        a2a_overlap_exposed(pr, comm);
        return;
    }
    out->fwd.ep = fmax(0, comm - hide_f);
    out->bwd.ep = fmax(0, comm - hide_b);
}

/* One transformer layer; moe: its MLP is a mixture-of-experts block. */
/* Forward seconds of the ops named in names (NULL-terminated) that the
 * layer being priced added from index `from` of the op list on. */
static double ops_fwd(const pricer_t *pr, int from, const char *const *names)
{
    double sum = 0;
    for (int i = from; i < pr->out->n_ops; i++)
        for (const char *const *n = names; *n; n++)
            if (strcmp(pr->out->ops[i].name, *n) == 0)
                sum += pr->out->ops[i].fwd_s;
    return sum;
}

/* Selective recompute of Megatron-Core's modules (layout_rc_modules; its
 * transformer_layer.py): the forward work the backward runs again, for the
 * layer priced from op `from` on. "layernorm" rebuilds only norms that are
 * their own module (MLA's input norm, an MoE block's pre-MLP norm; TE fuses
 * the others into the next GEMM); "mlp" checkpoints a dense MLP whole, its
 * TP collectives included; "moe" an MoE block whole, its expert-parallel
 * exchange included. */
static double selective_recompute(pricer_t *pr, int from, bool moe, double attn_f)
{
    const model_t *m = pr->in->model;
    step_costs_t *out = pr->out;
    unsigned rc = layout_rc_modules(pr->in->layout);
    static const char *const norm1[] = {"norm_1", NULL}, *const norm2[] = {"norm_2", NULL};
    static const char *const mlp[] = {"mlp_in", "swiglu", "gelu", "mlp_out", NULL};
    static const char *const act[] = {"expert_act", NULL};
    static const char *const shared[] = {"shared_in", "shared_act", "shared_out", NULL};
    static const char *const block[] = {"router",      "permute",       "sort_chunks",
                                        "experts_in",  "expert_act",    "experts_out",
                                        "unsort_chunks", "unpermute",   "shared_in",
                                        "shared_act",  "shared_out",    NULL};
    static const char *const up[] = {"mla_up", NULL};
    double t = rc & LAYOUT_RC_CORE_ATTN ? attn_f : 0;
    if ((rc & LAYOUT_RC_LAYERNORM) && model_is_mla(m))
        t += ops_fwd(pr, from, norm1);
    if ((rc & LAYOUT_RC_LAYERNORM) && moe)
        t += ops_fwd(pr, from, norm2);
    if ((rc & LAYOUT_RC_MLP) && !moe) {
        t += ops_fwd(pr, from, mlp);
        out->bwd.tp += out->fwd.tp / 2; /* the MLP half's gather and scatter */
    }
    if ((rc & LAYOUT_RC_MOE) && moe) {
        t += ops_fwd(pr, from, block) + out->fwd.imbalance;
        out->bwd.ep += out->fwd.ep;
    } else if (moe) {
        if (rc & LAYOUT_RC_MOE_ACT)
            t += ops_fwd(pr, from, act);
        if (rc & LAYOUT_RC_SHARED_EXPERTS)
            t += ops_fwd(pr, from, shared);
    }
    if ((rc & LAYOUT_RC_MLA_UP_PROJ) && model_is_mla(m))
        t += ops_fwd(pr, from, up);
    return t;
}

/* ---------------------------------------------------------------- fine-tuning */

/* The adapters of one LoRA target on this GPU (models/finetune.h): in and
 * out the linear's widths on this rank. Forward x A then (x A) B and the
 * add into the base's output; backward B's input and weight gradients,
 * A's, and the add into the input gradient. Thin GEMMs (one side the rank)
 * in the run's 16-bit type: PEFT runs the fp32 adapters under autocast. */
static void price_adapter(pricer_t *pr, const char *name, double in, double out)
{
    dtype_t d = dtype16(pr);
    double T = pr->T, r = pr->in->layout->ft.rank, e = pr->e;
    double fwd = prof_gemm_time(pr->p, d, T, r, in, 1) + prof_gemm_time(pr->p, d, T, out, r, 1) +
                 mem(pr, 3 * T * out * e);
    double dgrad = prof_gemm_time(pr->p, d, T, r, out, 1) + prof_gemm_time(pr->p, d, T, in, r, 1) +
                   mem(pr, 3 * T * in * e);
    double wgrad = prof_gemm_time(pr->p, d, r, out, T, 1) + prof_gemm_time(pr->p, d, in, r, T, 1);
    add_op(pr, name, fwd, dgrad + wgrad);
    pr->out->bwd_wgrad_s += wgrad;
}

/* LoRA / QLoRA work one block adds to its frozen GEMMs: every targeted
 * linear's adapters (column-parallel ones see the whole input and the
 * rank's output shard, row-parallel ones the other way round) and, with a
 * quantized base, bitsandbytes dequantizing each base weight to bf16
 * before its GEMM: a memory-bound pass (read base bits, write 2 bytes)
 * forward and again backward (the input gradient needs the weight). */
static void price_finetune(pricer_t *pr)
{
    const model_t *m = pr->in->model;
    const finetune_t *f = &pr->in->layout->ft;
    if (!finetune_frozen(f))
        return;
    double h = m->hidden, t = pr->t, qw = model_q_width(m), kvw = model_kv_width(m);
    double ffn = m->ffn;
    static const char *const names[7] = {"lora_q",  "lora_k",  "lora_v",   "lora_o",
                                         "lora_gate", "lora_up", "lora_down"};
    const double in[7] = {h, h, h, qw / t, h, h, ffn / t};
    const double out[7] = {qw / t, kvw / t, kvw / t, h, ffn / t, ffn / t, h};
    for (int i = 0; i < 7; i++) {
        if (!(f->targets & (1u << i)) || (i == 4 && m->mlp != MODEL_MLP_SWIGLU))
            continue;
        price_adapter(pr, names[i], in[i], out[i]);
    }
    if (f->base_bits < 16) {
        double w = finetune_block_linear_params(m, pr->in->layout->tp);
        double pass = mem(pr, w * (finetune_base_bytes_per_param(f) + 2));
        add_op(pr, "dequant", pass, pass);
    }
}

/* A frozen base trains neither the output head nor the embedding: no
 * logits weight gradient, no gradient rows scattered into the table. */
static void price_frozen_edges(pricer_t *pr)
{
    if (!pr->frozen)
        return;
    const model_t *m = pr->in->model;
    gemm_cost_t logits = linear_head(pr, pr->T, m->vocab / pr->t, m->hidden);
    pr->out->head_bwd.compute -= logits.wgrad;
    pr->out->embed_bwd.compute = 0;
}

static void price_host(pricer_t *pr, int first_op, bool moe);

static void price_layer(pricer_t *pr, bool moe)
{
    const model_t *m = pr->in->model;
    const layout_t *l = pr->in->layout;
    step_costs_t *out = pr->out;
    int first_op = out->n_ops;
    double h = m->hidden, f = m->ffn, t = pr->t, e = pr->e;
    double qw = model_q_width(m), kvw = model_kv_width(m);
    double gate = m->mlp == MODEL_MLP_SWIGLU ? 2 : 1;
    const sim_options_t *o = &pr->in->opt;
    double norm_f = mem(pr, 2 * pr->Tn * h * e * o->eager_norm);
    double norm_b = mem(pr, 3 * pr->Tn * h * e * o->eager_norm);
    double resid_bytes = 3 * pr->Tn * h * e + (m->dropout > 0 ? pr->Tn * h : 0);

    add_op(pr, "norm_1", norm_f, norm_b);
    gemm_cost_t qkv = price_qkv(pr);
    if (m->qk_norm != MODEL_QK_NORM_NONE && !model_is_mla(m)) {
        /* QK norm (Qwen3, OLMo 2, Gemma 3): Megatron-Core's q_layernorm and
         * k_layernorm, RMSNorms over this rank's Q and K heads before RoPE
         * (transformer/attention.py), priced as the layer norms are */
        double qk = pr->T * (qw + kvw) / t * e * o->eager_norm;
        add_op(pr, "qk_norm", mem(pr, 2 * qk), mem(pr, 3 * qk));
    }
    if (m->pos == MODEL_POS_ROPE) {
        double rope_w = model_is_mla(m) ? m->n_heads * 2.0 * m->mla.qk_rope_dim : qw + kvw;
        double bytes = 2 * pr->T * rope_w / t * e * o->eager_rope;
        add_op(pr, "rope", mem(pr, bytes), mem(pr, bytes));
    }
    double attn_f, attn_b;
    price_attention(pr, &attn_f, &attn_b);
    add_op(pr, "attention", attn_f, attn_b);
    double attn_in = model_is_mla(m) ? (double)m->n_heads * m->mla.v_dim : qw;
    gemm_cost_t proj = linear_row(pr, pr->T, h, attn_in / t);
    add_gemm_op(pr, "attn_out", proj.fwd, proj.dgrad, proj.wgrad);
    add_op(pr, "residual_1", mem(pr, resid_bytes), mem(pr, 2 * resid_bytes));
    add_op(pr, "norm_2", norm_f, norm_b);
    gemm_cost_t fc1 = {0}, fc2 = {0};
    bool tp_mlp = true;
    if (moe) {
        price_moe(pr, &fc1, &fc2, &tp_mlp);
    } else {
        fc1 = linear_col(pr, pr->T, f * gate / t, h, true);
        add_gemm_op(pr, "mlp_in", fc1.fwd, fc1.dgrad, fc1.wgrad);
        double act = pr->T * f / t * e;
        if (m->mlp == MODEL_MLP_SWIGLU)
            add_op(pr, "swiglu", mem(pr, 3 * act * o->eager_act), mem(pr, 5 * act * o->eager_act));
        else
            add_op(pr, "gelu", mem(pr, 2 * act * o->eager_act), mem(pr, 3 * act * o->eager_act));
        fc2 = linear_row(pr, pr->T, h, f / t);
        add_gemm_op(pr, "mlp_out", fc2.fwd, fc2.dgrad, fc2.wgrad);
    }
    double resid_2 = mem(pr, resid_bytes);
    add_op(pr, "residual_2", resid_2, mem(pr, 2 * resid_bytes));
    price_finetune(pr);

    double tp_tail = price_tp(pr, &qkv, &proj, tp_mlp ? &fc1 : NULL, tp_mlp ? &fc2 : NULL);
    price_cp(pr);
    /* Recompute runs forward work again inside the backward pass. */
    if (l->recompute == RECOMPUTE_SELECTIVE)
        out->bwd.recompute = selective_recompute(pr, first_op, moe, attn_f);
    else if (l->recompute == RECOMPUTE_OPS) {
        /* torchtitan's op-level policy (parallelize_llama.py): of the
         * matmuls in execution order (wq, wk, wv, wo, w1, [w3], w2) every
         * second one is recomputed (wk, wo, w3; wk, wo, w2 without a gate),
         * every elementwise op too; the attention output is kept. */
        double mem_ops = out->fwd.compute - qkv.fwd - attn_f - proj.fwd - fc1.fwd - fc2.fwd;
        double wk = qkv.fwd * kvw / (qw + 2 * kvw);
        double third = m->mlp == MODEL_MLP_SWIGLU ? fc1.fwd / 2 : fc2.fwd;
        out->bwd.recompute = mem_ops + wk + proj.fwd + third;
    } else if (l->recompute == RECOMPUTE_FULL) {
        /* PyTorch's non-reentrant checkpoint stops once the tensors the
         * backward saved are rebuilt (torch.utils.checkpoint
         * set_checkpoint_early_stop, on by default): the residual add ending
         * the block saves nothing, and a dense MLP's down projection saves
         * its input, not its output, so neither runs again (an MoE block's
         * combine keeps the experts' outputs for the router's gradient). */
        double skip = 0, skip_tp = 0;
        if (o->recompute_early_stop) {
            skip = resid_2 + (moe ? 0 : fc2.fwd);
            skip_tp = moe ? 0 : tp_tail;
        }
        out->bwd.recompute = out->fwd.compute + out->fwd.imbalance - skip;
        out->recompute_tp_s = out->fwd.tp - skip_tp;
        out->bwd.tp += out->recompute_tp_s;
        out->bwd.cp += out->fwd.cp;
        out->bwd.ep += out->fwd.ep;
    }
    price_host(pr, first_op, moe);
}

/* ---------------------------------------------------------------- host */

/* How many framework operations (each issued from Python at host.op_us)
 * an op of the layer's list is, forward and backward, whether it is a GEMM
 * whose input (forward) and output gradient (backward) a low-precision
 * recipe quantizes, and the CUDA graph scope that captures it. Counts of one
 * (a fused Transformer Engine module per op, its backward one autograd node
 * per GEMM) are ASSUMED from the modules' structure; the router's are
 * measured (HOST_ROUTER_* below). */
typedef struct {
    const char *name;
    int fwd_ops, bwd_ops;
    bool gemm;
    unsigned scope;
} host_op_t;

static const host_op_t HOST_OPS[] = {
    {"norm_1", 1, 1, false, HOST_GRAPH_ATTN},     {"qkv", 1, 2, true, HOST_GRAPH_ATTN},
    {"mla_down", 1, 2, true, HOST_GRAPH_ATTN},    {"mla_norm", 1, 1, false, HOST_GRAPH_ATTN},
    {"mla_up", 2, 4, true, HOST_GRAPH_ATTN},      {"rope", 1, 1, false, HOST_GRAPH_ATTN},
    {"qk_norm", 2, 2, false, HOST_GRAPH_ATTN},
    {"attention", 1, 1, false, HOST_GRAPH_ATTN},  {"attn_out", 1, 2, true, HOST_GRAPH_ATTN},
    {"residual_1", 1, 1, false, HOST_GRAPH_ATTN}, {"norm_2", 1, 1, false, HOST_GRAPH_ATTN},
    {"mlp_in", 1, 2, true, HOST_GRAPH_MLP},       {"swiglu", 1, 1, false, HOST_GRAPH_MLP},
    {"gelu", 1, 1, false, HOST_GRAPH_MLP},        {"mlp_out", 1, 2, true, HOST_GRAPH_MLP},
    {"shared_in", 1, 2, true, HOST_GRAPH_MOE_ROUTER},
    {"shared_act", 1, 1, false, HOST_GRAPH_MOE_ROUTER},
    {"shared_out", 1, 2, true, HOST_GRAPH_MOE_ROUTER},
    {"expert_act", 1, 1, false, HOST_GRAPH_MOE},  {"residual_2", 1, 1, false, 0},
    /* PEFT's lora.Linear: lora_A, lora_B, the scaling and the add forward;
     * their autograd nodes and the two weight gradients backward (ASSUMED
     * from the module's structure); bitsandbytes: a dequantize kernel per
     * base linear (7 in a gated block, ASSUMED for every block) */
    {"lora_q", 4, 6, false, 0},   {"lora_k", 4, 6, false, 0},    {"lora_v", 4, 6, false, 0},
    {"lora_o", 4, 6, false, 0},   {"lora_gate", 4, 6, false, 0}, {"lora_up", 4, 6, false, 0},
    {"lora_down", 4, 6, false, 0}, {"dequant", 7, 7, false, 0},
};

/* Megatron-LM docs/discussions/deepseek-v3-gb200-optimization, sec. 2.1.4
 * and 2.2.1 (Nsight counts on DeepSeek-V3): the router's element-wise
 * kernels number 72, 31 with --moe-router-fusion; with the flex dispatcher
 * (DeepEP, HybridEP: a fused preprocess kernel) the router and the
 * dispatcher's preprocess together 17. The backward runs as many again
 * (ASSUMED: one autograd kernel per forward kernel). */
#define HOST_ROUTER_OPS 72
#define HOST_ROUTER_FUSED_OPS 31
#define HOST_ROUTER_FLEX_OPS 17
/* The all-to-all dispatcher's preprocess (tokens per expert and rank, the
 * split sizes, megatron/core/transformer/moe/token_dispatcher.py
 * MoEAlltoAllTokenDispatcher.preprocess): ASSUMED 10 operations. A
 * permute or unpermute: Transformer Engine's fused moe_permute 2 kernels,
 * the unfused index sort and gathers 5 (ASSUMED from moe_utils.permute). */
#define HOST_PREPROCESS_OPS 10
#define HOST_PERMUTE_FUSED_OPS 2
#define HOST_PERMUTE_OPS 5

/* Kernels that quantize one tensor under precision p (Transformer Engine):
 * delayed scaling casts with the amax in one kernel, current scaling finds
 * the amax first, MXFP8 and NVFP4 also swizzle the scales for the tensor
 * cores; ASSUMED from the recipes' structure. */
static int quant_kernels(precision_t p)
{
    switch (p) {
    case PRECISION_FP8:
    case PRECISION_FP8_BLOCK:
    case PRECISION_FP8_ROWWISE:
        return 1;
    case PRECISION_FP8_CS:
    case PRECISION_MXFP8:
    case PRECISION_NVFP4:
    case PRECISION_MXFP4:
        return 2;
    default:
        return 0;
    }
}

static const host_op_t *host_op(const char *name)
{
    for (size_t i = 0; i < sizeof HOST_OPS / sizeof HOST_OPS[0]; i++)
        if (strcmp(HOST_OPS[i].name, name) == 0)
            return &HOST_OPS[i];
    return NULL;
}

/* What issuing a layer costs the host, forward and backward, kept as the
 * items of a race (sim/host.h) in the forward's issue order. */
typedef struct {
    host_item_t f[SIM_MAX_OPS + 8];
    int nf;
    int sync_at;      /* index of the item the forward synchronizes after; -1 none */
    double host_b;    /* the backward's issue seconds */
    unsigned graphed; /* scopes whose replay is already counted (forward) */
} host_layer_t;

/* Issue seconds of an item of fwd_ops operations and launches C++ kernels
 * inside scope (one graph replay for the whole scope when it is captured). */
static double issue_s(const host_opts_t *h, unsigned scope, double ops, double launches,
                      unsigned *replayed)
{
    if (scope && (h->graph_scopes & scope)) {
        if (*replayed & scope)
            return 0;
        *replayed |= scope;
        return h->graph_us * 1e-6;
    }
    return (ops * h->op_us + launches * h->launch_us) * 1e-6;
}

static void host_push(host_layer_t *hl, double gpu_s, double host_s, int kernels)
{
    if (hl->nf < (int)(sizeof hl->f / sizeof hl->f[0]))
        hl->f[hl->nf++] = (host_item_t){gpu_s, host_s, kernels > 0 ? kernels : 1, false};
}

/* Forward and backward operations, C++ launches and scope of a MoE op of
 * the layer's list; false for the ops HOST_OPS describes. */
static bool host_moe_op(const pricer_t *pr, const char *name, double c[4], unsigned *scope)
{
    const moe_opts_t *mo = &pr->in->opt.moe;
    const layout_t *l = pr->in->layout;
    int qk = pr->q->quantized ? quant_kernels(l->precision) : 0;
    double local = (double)pr->in->model->moe.n_experts / l->ep;
    bool flex = mo->dispatcher == MOE_DISPATCH_DEEPEP;
    if (strcmp(name, "router") == 0) {
        int n = flex ? HOST_ROUTER_FLEX_OPS
                     : pr->in->opt.host.router_fusion ? HOST_ROUTER_FUSED_OPS : HOST_ROUTER_OPS;
        c[0] = c[1] = n;
        c[2] = c[3] = 0;
        *scope = HOST_GRAPH_MOE_ROUTER;
    } else if (strcmp(name, "permute") == 0 || strcmp(name, "unpermute") == 0) {
        c[0] = c[1] = mo->permute_fusion ? HOST_PERMUTE_FUSED_OPS : HOST_PERMUTE_OPS;
        c[2] = c[3] = 0;
        *scope = HOST_GRAPH_MOE;
    } else if (strcmp(name, "sort_chunks") == 0 || strcmp(name, "unsort_chunks") == 0) {
        /* TE's fused moe_sort_chunks_by_index one operation; unfused a
         * torch.split and a torch.cat */
        c[0] = c[1] = mo->permute_fusion ? 1 : 2;
        c[2] = c[3] = 0;
        *scope = HOST_GRAPH_MOE;
    } else if (strcmp(name, "experts_in") == 0 || strcmp(name, "experts_out") == 0) {
        /* one grouped call; inside it, per local expert, its GEMMs and the
         * quantization of its input (forward) and output gradient */
        c[0] = mo->grouped_gemm ? 1 : local;
        c[1] = 2 * c[0];
        c[2] = local * (1 + qk);
        c[3] = local * (2 + qk);
        *scope = HOST_GRAPH_MOE;
    } else {
        return false;
    }
    return true;
}

/* Add one op of the layer's list to hl (forward item, backward seconds). */
static void host_add_op(const pricer_t *pr, const op_cost_t *op, host_layer_t *hl,
                        unsigned *rep_b)
{
    const host_opts_t *h = &pr->in->opt.host;
    int qk = pr->q->quantized ? quant_kernels(pr->in->layout->precision) : 0;
    double c[4] = {1, 1, 0, 0};
    unsigned scope = 0;
    const host_op_t *t = host_op(op->name);
    if (t) {
        c[0] = t->fwd_ops;
        c[1] = t->bwd_ops;
        c[2] = c[3] = t->gemm ? qk : 0;
        scope = t->scope;
    } else {
        host_moe_op(pr, op->name, c, &scope);
    }
    host_push(hl, op->fwd_s, issue_s(h, scope, c[0], c[2], &hl->graphed), (int)(c[0] + c[2]));
    hl->host_b += issue_s(h, scope, c[1], c[3], rep_b);
}

/* The dispatcher's own items around the experts: after the router its
 * preprocess (the forward synchronizes there when the block is dropless),
 * the dispatch after the permute and the combine after the experts (their
 * exposed communication as GPU time). */
static void host_add_dispatch(const pricer_t *pr, const char *after, host_layer_t *hl,
                              unsigned *rep_b)
{
    const host_opts_t *h = &pr->in->opt.host;
    const moe_opts_t *mo = &pr->in->opt.moe;
    double colls = mo->dispatcher == MOE_DISPATCH_ALLGATHER ? 2 : 1;
    if (strcmp(after, "router") == 0) {
        double n = mo->dispatcher == MOE_DISPATCH_DEEPEP ? 0 : HOST_PREPROCESS_OPS;
        host_push(hl, 0, issue_s(h, HOST_GRAPH_MOE_PREPROCESS, n, 0, &hl->graphed), (int)n);
        if (!(mo->capacity_factor > 0))
            hl->sync_at = hl->nf - 1;
    } else if (strcmp(after, "permute") == 0 || strcmp(after, "experts_out") == 0) {
        host_push(hl, pr->out->fwd.ep / 2, issue_s(h, HOST_GRAPH_MOE, colls, 0, &hl->graphed),
                  (int)colls);
        hl->host_b += issue_s(h, HOST_GRAPH_MOE, colls, 0, rep_b);
    }
}

/* The forward's wait for the host: from the synchronization (the GPU idle)
 * through the next one, the layer's items rotated to start after it; with
 * no synchronization the host runs ahead and only a host slower than the
 * GPU over the whole pass shows. */
static double host_fwd_exposed(host_layer_t *hl)
{
    double gpu = 0, host = 0;
    for (int i = 0; i < hl->nf; i++) {
        gpu += hl->f[i].gpu_s;
        host += hl->f[i].host_s;
    }
    if (hl->sync_at < 0)
        return fmax(0, host - gpu);
    host_item_t rot[sizeof hl->f / sizeof hl->f[0]];
    int k = 0;
    for (int i = hl->sync_at + 1; i < hl->nf; i++)
        rot[k++] = hl->f[i];
    for (int i = 0; i <= hl->sync_at; i++)
        rot[k++] = hl->f[i];
    rot[k - 1].sync_after = true;
    return fmax(0, host_race_s(rot, k) - gpu);
}

/* The layer priced from op first_op on waits this long for its host (the
 * framework's host.op_us 0: not modelled). */
static void price_host(pricer_t *pr, int first_op, bool moe)
{
    const host_opts_t *h = &pr->in->opt.host;
    step_costs_t *out = pr->out;
    if (!(h->op_us > 0))
        return;
    host_layer_t hl = {.sync_at = -1};
    unsigned rep_b = 0;
    for (int i = first_op; i < out->n_ops; i++) {
        host_add_op(pr, &out->ops[i], &hl, &rep_b);
        if (moe)
            host_add_dispatch(pr, out->ops[i].name, &hl, &rep_b);
    }
    double fwd_host = 0;
    for (int i = 0; i < hl.nf; i++)
        fwd_host += hl.f[i].host_s;
    /* full recompute issues the forward again inside the backward */
    if (pr->in->layout->recompute == RECOMPUTE_FULL)
        hl.host_b += fwd_host;
    out->fwd.host = host_fwd_exposed(&hl);
    out->bwd.host = fmax(0, hl.host_b - cost_total(&out->bwd));
}

/* Embedding on the first virtual stage, output layer and loss on the last. */
static void price_edges(pricer_t *pr)
{
    const model_t *m = pr->in->model;
    const layout_t *l = pr->in->layout;
    step_costs_t *out = pr->out;
    double h = m->hidden, e = pr->e, t = pr->t, V = m->vocab;
    const coll_span_t *s = &out->tp_span;
    double act = pr->T * h * e;
    /* Embedding: gather rows (+ learned positions, dropout); the vocabulary-
     * parallel lookup is combined over TP (reduce-scatter with SP). */
    double emb = mem(pr, 2 * act + (m->pos == MODEL_POS_LEARNED ? 3 * act : 0) +
                             (m->dropout > 0 ? 2 * act : 0));
    out->embed_fwd.compute = emb;
    out->embed_bwd.compute = mem(pr, 3 * pr->T * h * 4); /* fp32 gradient rows */
    if (l->tp > 1) {
        out->embed_fwd.tp = coll(pr, l->sequence_parallel ? COLL_REDUCE_SCATTER : COLL_ALL_REDUCE,
                                 s, act);
        if (l->sequence_parallel)
            out->embed_bwd.tp = coll(pr, COLL_ALL_GATHER, s, act);
    }
    /* Head: final norm, logits GEMM, the vocabulary-parallel cross entropy
     * as the framework computes it (sim_options_t ce_*_bytes). */
    gemm_cost_t logits = linear_head(pr, pr->T, V / t, h);
    double logit_el = pr->T * V / t;
    const sim_options_t *o = &pr->in->opt;
    bool tp_loss = l->tp > 1 && o->ce_tp_fwd_bytes > 0;
    double ce_fwd = tp_loss ? o->ce_tp_fwd_bytes : o->ce_fwd_bytes;
    double ce_bwd = tp_loss ? o->ce_tp_bwd_bytes : o->ce_bwd_bytes;
    out->head_fwd.compute = mem(pr, 2 * pr->Tn * h * e) + logits.fwd + mem(pr, logit_el * ce_fwd);
    out->head_bwd.compute = mem(pr, logit_el * ce_bwd) + logits.dgrad + logits.wgrad +
                            mem(pr, 3 * pr->Tn * h * e);
    if (l->tp > 1) {
        /* three tiny all-reduces (max, sum of exponentials, target logit) */
        double ce = 3 * coll(pr, COLL_ALL_REDUCE, s, pr->T * 4);
        double gather = l->sequence_parallel ? coll(pr, COLL_ALL_GATHER, s, act) : 0;
        out->head_fwd.tp = ce + gather;
        double grad = coll(pr, l->sequence_parallel ? COLL_REDUCE_SCATTER : COLL_ALL_REDUCE, s, act);
        out->head_bwd.tp = pr->in->opt.async_tp_grad ? fmax(0, grad - logits.wgrad) : grad;
    }
    /* Multi-token prediction (DeepSeek-V3, Megatron --mtp-num-layers) on
     * the last stage: per module two norms, the 2h -> h projection, one
     * block (priced as the model's mean layer) and its own logits and
     * loss. */
    for (int k = 0; k < m->n_mtp; k++) {
        gemm_cost_t proj = linear_col(pr, pr->T, h / t, 2 * h, false);
        double norms_f = mem(pr, 2 * 2 * pr->Tn * h * e), norms_b = mem(pr, 2 * 3 * pr->Tn * h * e);
        cost_parts_t f = out->fwd, b = out->bwd;
        f.compute += norms_f + proj.fwd + logits.fwd + mem(pr, logit_el * ce_fwd);
        b.compute += norms_b + proj.dgrad + proj.wgrad + logits.dgrad + logits.wgrad +
                     mem(pr, logit_el * ce_bwd);
        out->head_fwd = parts_mix(&out->head_fwd, 1, &f, 1);
        out->head_bwd = parts_mix(&out->head_bwd, 1, &b, 1);
    }
}

/* Parameters of one transformer block on one GPU (as memory.c counts). */
static double layer_params_gpu(const model_t *m, const layout_t *l, double *experts_out)
{
    *experts_out = 0;
    if (model_is_moe(m) || model_is_mla(m) || model_is_hybrid(m)) {
        /* blocks differ (dense and MoE, hybrid kinds): their mean */
        double sum = 0, sum_e = 0;
        for (int i = 0; i < m->n_layers; i++) {
            double dense, experts;
            model_block_params_gpu(m, i, l->tp, l->ep, layout_etp(l), &dense, &experts);
            sum += dense + experts;
            sum_e += experts;
        }
        *experts_out = sum_e / m->n_layers;
        return sum / m->n_layers;
    }
    model_params_t p;
    model_params(m, &p);
    double replicated = p.norms + (m->out_bias ? m->hidden : 0) + (m->mlp_bias ? m->hidden : 0);
    return (p.per_layer - replicated) / l->tp + replicated;
}

/* Bytes per element of the gradients a DP reduction moves. */
static double reduce_bytes(const sim_input_t *in)
{
    if (finetune_frozen(&in->layout->ft))
        return 4; /* fp32 adapters' gradients */
    return in->opt.reduce_bytes > 0 ? in->opt.reduce_bytes : in->layout->grad_bytes;
}

/* Bytes per parameter a gather moves: fp8 when the framework gathers fp8
 * copies of an fp8 run's weights, else the weights' own size. */
static double gather_bytes(const sim_input_t *in)
{
    if (finetune_frozen(&in->layout->ft))
        return finetune_base_bytes_per_param(&in->layout->ft); /* FSDP-QLoRA gathers 4-bit */
    if (in->opt.gather_bytes > 0)
        return in->opt.gather_bytes; /* a codec's quantized gather */
    if (in->opt.fp8_param_gather && layout_precision_quantized(in->layout->precision))
        return layout_precision_fp4(in->layout->precision) ? 0.5 + 1.0 / 16 : 1;
    return layout_weight_bytes(in->layout->precision);
}

/* A DP-group collective as the framework's ZeRO-3 path moves it: NCCL's
 * time, or the implementation's own throughput limit when that is slower. */
static double zero3_coll(const sim_input_t *in, const step_costs_t *c, coll_op_t op, double bytes)
{
    double t = prof_coll_time(in->profile, op, &c->dp_span, bytes);
    double cap = in->opt.zero3.path_gbs;
    if (cap > 0) {
        double bus = prof_bus_factor(op, c->dp_span.n_ranks) * bytes;
        t = fmax(t, bus / (cap * 1e9));
    }
    return t;
}

/* ZeRO-3 / FSDP per layer and micro-batch (zero3_opts_t): the exposed part
 * of the parameter gathers and gradient reductions goes into the passes'
 * dp time. */
static void price_zero3(const sim_input_t *in, step_costs_t *out)
{
    const zero3_opts_t *z = &in->opt.zero3;
    const layout_t *l = in->layout;
    double g = zero3_coll(in, out, COLL_ALL_GATHER, out->layer_params * gather_bytes(in));
    double r = zero3_coll(in, out, z->grad_all_reduce ? COLL_ALL_REDUCE : COLL_REDUCE_SCATTER,
                          out->layer_trainable_params * reduce_bytes(in));
    /* With pipeline stages and no resharding, a layer is gathered once per
     * step (each micro-batch carries 1/m of it) and its gradients are
     * reduce-scattered once, after the stage's last backward: sim/step
     * places that reduction, not the layer's passes. */
    if (l->pp > 1 && !z->reshard_with_pp) {
        if (l->grad_accum > 1)
            g /= l->grad_accum;
        r = 0;
    }
    double g_bwd = z->regather_backward ? g : 0;
    if (z->regather_backward && z->hpz) {
        /* hpZ: the backward gathers from the node's secondary shards, kept
         * in the weights' type and quantized like the forward's gathers when
         * qwZ is on (DeepSpeed partition_parameters.py _all_gather_coalesced
         * quantizes ds_secondary_tensor too, since the ZeRO++ commit
         * d18aa2c79 of 2023-06-23) */
        coll_span_t node = out->dp_span;
        node.n_ranks = node.ranks_per_node;
        node.nodes = 1;
        g_bwd = node.n_ranks > 1 ? prof_coll_time(in->profile, COLL_ALL_GATHER, &node,
                                                  out->layer_params * gather_bytes(in))
                                 : 0;
    }
    out->zero3_gather_layer_s = g;
    out->zero3_reduce_layer_s = r;
    double fwd_compute = out->fwd.compute, bwd_compute = out->bwd.compute + out->bwd.recompute;
    if (z->gather_blocks_compute) {
        /* each gather waits for the compute before it and blocks the next */
        out->fwd.dp = g;
        out->bwd.dp = g_bwd + fmax(0, r - bwd_compute);
    } else if (z->prefetch_backward) {
        /* prefetched one layer ahead: exposed when a gather outlasts the
         * compute it hides behind; gathers and reductions share the links */
        out->fwd.dp = fmax(0, g - fwd_compute);
        out->bwd.dp = fmax(0, g_bwd + r - bwd_compute);
    } else {
        /* the backward's gather waits for the current layer's gradients:
         * only the reduction overlaps the compute */
        out->fwd.dp = fmax(0, g - fwd_compute);
        out->bwd.dp = g_bwd + fmax(0, r - bwd_compute);
    }
}

/* Host transfers of layout_t.offload (sim/offload.h): their exposed part
 * of each layer's passes. */
static void price_offload(const sim_input_t *in, step_costs_t *out)
{
    const layout_t *l = in->layout;
    double stage_params = 0;
    for (int s = 0; s < l->pp; s++) {
        double p = model_gpu_params(in->model, l, s);
        if (p > stage_params)
            stage_params = p;
    }
    offload_costs(in->model, l, in->cluster, out->layer_params, stage_params,
                  model_layer_activation_bytes(in->model, l), &out->offload);
    offload_layer_exposed(&out->offload, out->fwd.compute, out->bwd.compute + out->bwd.recompute,
                          out->fwd.dp, out->bwd.dp, &out->fwd.offload, &out->bwd.offload);
}

/* ---------------------------------------------------------------- hybrid */

/* Mixer widths of kind k: the input projection's output, the conv's
 * channels, the inner width (out_proj's input), heads and B/C groups (key
 * heads for Gated DeltaNet), conv width. */
typedef struct {
    double in_w, conv_w, inner, heads, groups, conv;
} mixer_dims_t;

static mixer_dims_t mixer_dims(const model_t *m, model_mixer_t k)
{
    const model_hybrid_t *x = &m->hybrid;
    mixer_dims_t d;
    if (k == MODEL_MIXER_MAMBA1) { /* channels for heads; x_proj/dt_proj apart */
        d.inner = d.conv_w = d.heads = x->ssm_inner;
        d.in_w = 2.0 * x->ssm_inner; /* x, z */
        d.groups = 1, d.conv = x->ssm_conv;
    } else if (k == MODEL_MIXER_MAMBA2) {
        d.inner = (double)x->ssm_heads * x->ssm_head_dim;
        d.conv_w = d.inner + 2.0 * x->ssm_groups * x->ssm_state;
        d.in_w = d.inner + d.conv_w + x->ssm_heads; /* z, x B C, dt */
        d.heads = x->ssm_heads, d.groups = x->ssm_groups, d.conv = x->ssm_conv;
    } else if (k == MODEL_MIXER_LIGHTNING) { /* no conv */
        d.inner = (double)x->gdn_k_heads * x->gdn_k_dim;
        d.conv_w = 0;
        d.in_w = 4 * d.inner; /* q k v, output gate */
        d.heads = d.groups = x->gdn_k_heads, d.conv = 0;
    } else if (k == MODEL_MIXER_KDA) { /* the low-rank gates apart */
        d.inner = (double)x->gdn_k_heads * x->gdn_k_dim;
        d.conv_w = 3 * d.inner;
        d.in_w = d.conv_w + x->gdn_k_heads; /* q k v, beta */
        d.heads = d.groups = x->gdn_k_heads, d.conv = x->gdn_conv;
    } else {
        double kd = (double)x->gdn_k_heads * x->gdn_k_dim;
        d.inner = (double)x->gdn_v_heads * x->gdn_v_dim;
        d.conv_w = 2 * kd + d.inner;
        d.in_w = d.conv_w + d.inner + 2.0 * x->gdn_v_heads; /* q k v, z, b a */
        d.heads = x->gdn_v_heads, d.groups = x->gdn_k_heads, d.conv = x->gdn_conv;
    }
    return d;
}

/* A Mamba-2 or Gated DeltaNet mixer as Megatron's MambaMixer runs it
 * (megatron/core/ssm/mamba_mixer.py): the column-parallel input projection,
 * the causal conv1d and the chunked kernel (sim/ssm_cost.h) on this rank's
 * heads, the gated RMSNorm, the row-parallel output projection; *in and
 * *out return the projections for the TP pricing. With CP a Mamba-2 mixer
 * runs Megatron's all-to-all context parallelism
 * (megatron/core/ssm/mamba_context_parallel.py): the conv and scan inputs
 * move from the sequence split to a head split, the scan output back,
 * forward and again backward. */
static void price_mixer(pricer_t *pr, model_mixer_t k, gemm_cost_t *in, gemm_cost_t *out)
{
    const model_t *m = pr->in->model;
    const layout_t *l = pr->in->layout;
    const sim_options_t *o = &pr->in->opt;
    double h = m->hidden, t = pr->t, e = pr->e, T = pr->T, cp = l->cp;
    mixer_dims_t d = mixer_dims(m, k);
    *in = linear_col(pr, T, d.in_w / t, h, true);
    add_gemm_op(pr, "mixer_in", in->fwd, in->dgrad, in->wgrad);
    /* causal_conv1d with SiLU: memory-bound, read and write each channel */
    double conv_el = T * d.conv_w / t;
    add_op(pr, "conv1d", mem(pr, 2 * conv_el * e), mem(pr, 3 * conv_el * e));
    if (k == MODEL_MIXER_MAMBA1) { /* x_proj to dt, B, C and dt_proj back */
        const model_hybrid_t *x = &m->hybrid;
        double R = x->ssm_dt_rank, bc = 2.0 * x->ssm_state;
        gemm_cost_t xp = linear(pr, T, R + bc, d.inner / t), dp = linear(pr, T, d.inner / t, R);
        add_gemm_op(pr, "x_dt_proj", xp.fwd + dp.fwd, xp.dgrad + dp.dgrad, xp.wgrad + dp.wgrad);
    }
    if (k == MODEL_MIXER_KDA) { /* f_a, g_a (replicated) and f_b, g_b (split) */
        double r = m->hybrid.kda_gate_rank;
        gemm_cost_t ga = linear(pr, T, 2 * r, h), gb = linear(pr, T, 2 * d.inner / t, r);
        add_gemm_op(pr, "gate_lowrank", ga.fwd + gb.fwd, ga.dgrad + gb.dgrad,
                    ga.wgrad + gb.wgrad);
    }
    ssm_call_t call = {l->micro_batch, (double)l->seq_len / cp, d.heads / t, d.groups / t,
                       dtype16(pr), e};
    if (cp > 1) { /* all-to-all CP: the whole sequence, heads / cp */
        call.seq = l->seq_len;
        call.heads /= cp;
        call.groups /= cp;
    }
    double kf, kb;
    ssm_kernel_time(pr->p, m, k, &call, &kf, &kb);
    add_op(pr, k == MODEL_MIXER_MAMBA2 ? "ssd_scan"
               : k == MODEL_MIXER_GDN   ? "delta_rule"
               : k == MODEL_MIXER_KDA   ? "kda_delta_rule"
               : k == MODEL_MIXER_LIGHTNING ? "lightning_attn"
                                        : "selective_scan",
           kf, kb);
    double y = T * d.inner / t; /* gated RMSNorm: read y and z, write */
    add_op(pr, "gated_norm", mem(pr, 3 * y * e * o->eager_norm),
           mem(pr, 5 * y * e * o->eager_norm));
    *out = linear_row(pr, T, h, d.inner / t);
    add_gemm_op(pr, "mixer_out", out->fwd, out->dgrad, out->wgrad);
    if (cp > 1) {
        coll_span_t s = span_of(pr->in->cluster, &pr->out->placement.group[GROUP_CP]);
        pr->out->cp_span = s;
        double a2a = coll(pr, COLL_ALL_TO_ALL, &s, (conv_el + T * d.heads / t) * e) +
                     coll(pr, COLL_ALL_TO_ALL, &s, y * e);
        pr->out->fwd.cp += a2a;
        pr->out->bwd.cp += a2a;
    }
}

/* A dense MLP (as price_layer prices it). */
static void price_dense_mlp(pricer_t *pr, gemm_cost_t *fc1, gemm_cost_t *fc2)
{
    const model_t *m = pr->in->model;
    const sim_options_t *o = &pr->in->opt;
    double h = m->hidden, f = m->ffn, t = pr->t, e = pr->e;
    double gate = m->mlp == MODEL_MLP_SWIGLU ? 2 : 1;
    *fc1 = linear_col(pr, pr->T, f * gate / t, h, true);
    add_gemm_op(pr, "mlp_in", fc1->fwd, fc1->dgrad, fc1->wgrad);
    double act = pr->T * f / t * e;
    if (m->mlp == MODEL_MLP_SWIGLU)
        add_op(pr, "swiglu", mem(pr, 3 * act * o->eager_act), mem(pr, 5 * act * o->eager_act));
    else
        add_op(pr, "gelu", mem(pr, 2 * act * o->eager_act), mem(pr, 3 * act * o->eager_act));
    *fc2 = linear_row(pr, pr->T, h, f / t);
    add_gemm_op(pr, "mlp_out", fc2->fwd, fc2->dgrad, fc2->wgrad);
}

/* An attention half without the MLP (price_layer's first half). */
static double price_attn_half(pricer_t *pr, gemm_cost_t *qkv, gemm_cost_t *proj)
{
    const model_t *m = pr->in->model;
    double t = pr->t, qw = model_q_width(m), kvw = model_kv_width(m);
    *qkv = price_qkv(pr);
    if (m->pos == MODEL_POS_ROPE) {
        double bytes = 2 * pr->T * (qw + kvw) / t * pr->e * pr->in->opt.eager_rope;
        add_op(pr, "rope", mem(pr, bytes), mem(pr, bytes));
    }
    double attn_f, attn_b;
    price_attention(pr, &attn_f, &attn_b);
    add_op(pr, "attention", attn_f, attn_b);
    *proj = linear_row(pr, pr->T, m->hidden, qw / t);
    add_gemm_op(pr, "attn_out", proj->fwd, proj->dgrad, proj->wgrad);
    return attn_f;
}

/* Recompute of one hybrid block (as price_layer does it, without the
 * early stop): selective by Megatron's modules, or the whole forward. */
static void hybrid_recompute(pricer_t *pr, int first_op, bool moe, double attn_f)
{
    const layout_t *l = pr->in->layout;
    step_costs_t *out = pr->out;
    if (l->recompute == RECOMPUTE_SELECTIVE) {
        out->bwd.recompute = selective_recompute(pr, first_op, moe, attn_f);
    } else if (l->recompute == RECOMPUTE_FULL) {
        out->bwd.recompute = out->fwd.compute + out->fwd.imbalance;
        out->recompute_tp_s = out->fwd.tp;
        out->bwd.tp += out->recompute_tp_s;
        out->bwd.cp += out->fwd.cp;
        out->bwd.ep += out->fwd.ep;
    }
}

/* One block of a hybrid model: its mixer (attention, Mamba-2, Gated
 * DeltaNet or none) with its norm and residual, its MLP (dense, MoE or
 * none) likewise, their TP collectives (one pair per half that has
 * TP-split GEMMs), attention's CP exchange, recompute and host issue. */
static void price_hybrid_block(pricer_t *pr, model_mixer_t k, bool has_mlp, bool moe)
{
    const model_t *m = pr->in->model;
    const sim_options_t *o = &pr->in->opt;
    int first_op = pr->out->n_ops;
    double h = m->hidden, e = pr->e, attn_f = 0;
    double norm_f = mem(pr, 2 * pr->Tn * h * e * o->eager_norm);
    double norm_b = mem(pr, 3 * pr->Tn * h * e * o->eager_norm);
    double resid = 3 * pr->Tn * h * e;
    gemm_cost_t a = {0}, b = {0}, fc1 = {0}, fc2 = {0};
    bool tp_mix = k != MODEL_MIXER_NONE, tp_mlp = has_mlp;
    if (tp_mix) {
        add_op(pr, "norm_1", norm_f, norm_b);
        if (k == MODEL_MIXER_ATTENTION)
            attn_f = price_attn_half(pr, &a, &b);
        else
            price_mixer(pr, k, &a, &b);
        if (k == MODEL_MIXER_ATTENTION && m->hybrid.par_mamba2) { /* Falcon-H1 */
            gemm_cost_t ma, mb; /* one TP exchange: the two outputs are summed */
            price_mixer(pr, MODEL_MIXER_MAMBA2, &ma, &mb);
        }
        add_op(pr, "residual_1", mem(pr, resid), mem(pr, 2 * resid));
    }
    if (has_mlp) {
        add_op(pr, "norm_2", norm_f, norm_b);
        if (moe)
            price_moe(pr, &fc1, &fc2, &tp_mlp);
        else
            price_dense_mlp(pr, &fc1, &fc2);
        add_op(pr, "residual_2", mem(pr, resid), mem(pr, 2 * resid));
    }
    const gemm_cost_t *c1 = tp_mix ? &a : tp_mlp ? &fc1 : NULL;
    const gemm_cost_t *r1 = tp_mix ? &b : tp_mlp ? &fc2 : NULL;
    if (c1)
        price_tp(pr, c1, r1, tp_mix && tp_mlp ? &fc1 : NULL, tp_mix && tp_mlp ? &fc2 : NULL);
    if (k == MODEL_MIXER_ATTENTION)
        price_cp(pr);
    hybrid_recompute(pr, first_op, moe, attn_f);
    price_host(pr, first_op, moe);
}

/* What Megatron's hybrid model can run, checked against the layout:
 * MambaMixer splits the heads and B/C groups over TP (and, with CP, over
 * TP x CP: mamba_context_parallel.py); no context-parallel form of Gated
 * DeltaNet or of torchtitan's op-level recompute is priced. */
static int hybrid_layout_ok(const model_t *m, const layout_t *l, err_t *err)
{
    if (l->recompute == RECOMPUTE_OPS)
        return err_setf(err, ERR_INPUT, NULL, "--recompute",
                        "ops (torchtitan's op-level policy) is not priced for hybrid layers; "
                        "use full or selective");
    if ((l->tp > 1 || l->cp > 1) && model_hybrid_count(m, MODEL_MIXER_MAMBA1) > 0)
        return err_setf(err, ERR_INPUT, NULL, l->tp > 1 ? "--tp" : "--cp",
                        "Mamba-1 (selective scan) layers have no tensor- or context-parallel "
                        "form scaleplan prices (their x_proj reduces over d_inner; Megatron "
                        "runs Mamba-2 only)");
    if (l->cp > 1 && model_hybrid_count(m, MODEL_MIXER_GDN) +
                             model_hybrid_count(m, MODEL_MIXER_KDA) +
                             model_hybrid_count(m, MODEL_MIXER_LIGHTNING) >
                         0)
        return err_setf(err, ERR_INPUT, NULL, "--cp",
                        "Gated DeltaNet / Kimi Delta Attention / lightning attention layers "
                        "have no context-parallel form scaleplan prices (Megatron's "
                        "MambaContextParallel covers Mamba-2 only; MiniMax's LASP+ is not "
                        "modelled)");
    for (int k = MODEL_MIXER_MAMBA2; k <= MODEL_MIXER_LAST_SCAN; k++) {
        if (model_hybrid_count(m, (model_mixer_t)k) == 0)
            continue;
        mixer_dims_t d = mixer_dims(m, (model_mixer_t)k);
        long split = (long)l->tp * l->cp;
        if ((long)d.heads % split != 0 || (long)d.groups % split != 0)
            return err_setf(err, ERR_INPUT, NULL, l->cp > 1 ? "--tp x --cp" : "--tp",
                            "%ld must divide the %s heads %.0f and %s %.0f (Megatron splits "
                            "them over TP x CP)",
                            split, model_mixer_name((model_mixer_t)k), d.heads,
                            k == MODEL_MIXER_MAMBA2 ? "groups" : "key heads", d.groups);
    }
    return ERR_OK;
}

/* Add op list src (weight w) into dst, merging ops of the same name. */
static void merge_ops(step_costs_t *dst, const step_costs_t *src, double w)
{
    for (int i = 0; i < src->n_ops; i++) {
        int j = 0;
        while (j < dst->n_ops && strcmp(dst->ops[j].name, src->ops[i].name) != 0)
            j++;
        if (j == dst->n_ops) {
            if (dst->n_ops == SIM_MAX_OPS)
                continue;
            dst->ops[dst->n_ops++] = (op_cost_t){src->ops[i].name, 0, 0};
        }
        dst->ops[j].fwd_s += w * src->ops[i].fwd_s;
        dst->ops[j].bwd_s += w * src->ops[i].bwd_s;
    }
}

/* A hybrid model's layer: each kind of block (mixer, MLP, experts) priced
 * on its own and the step's layer their mean by count, the op list merged
 * by name (as dense and MoE blocks are mixed in sim_costs). */
static int price_hybrid(pricer_t *pr, err_t *err)
{
    const model_t *m = pr->in->model;
    int rc = hybrid_layout_ok(m, pr->in->layout, err);
    if (rc)
        return rc;
    int count[2][2][MODEL_MIXER_COUNT] = {{{0}}}; /* [moe][mlp][mixer] */
    for (int i = 0; i < m->n_layers; i++) {
        bool mlp = model_block_has_mlp(m, i);
        count[mlp && model_moe_layer(m, i)][mlp][model_block_mixer(m, i)]++;
    }
    step_costs_t *out = pr->out, base = *out, acc = *out;
    memset(&acc.fwd, 0, sizeof acc.fwd);
    memset(&acc.bwd, 0, sizeof acc.bwd);
    acc.bwd_wgrad_s = acc.recompute_tp_s = acc.ep_comm_layer_s = 0;
    acc.n_ops = 0;
    for (int moe = 0; moe < 2; moe++)
        for (int mlp = 0; mlp < 2; mlp++)
            for (int k = 0; k < MODEL_MIXER_COUNT; k++) {
                if (count[moe][mlp][k] == 0)
                    continue;
                step_costs_t kind = base;
                pr->out = &kind;
                pr->cp_f0 = pr->cp_b0 = pr->cp_fs = pr->cp_bs = 0;
                price_hybrid_block(pr, (model_mixer_t)k, mlp, moe);
                double w = (double)count[moe][mlp][k] / m->n_layers;
                acc.fwd = parts_mix(&acc.fwd, 1, &kind.fwd, w);
                acc.bwd = parts_mix(&acc.bwd, 1, &kind.bwd, w);
                acc.bwd_wgrad_s += w * kind.bwd_wgrad_s;
                acc.recompute_tp_s += w * kind.recompute_tp_s;
                acc.ep_comm_layer_s += w * kind.ep_comm_layer_s;
                if (kind.cp_span.n_ranks > 0)
                    acc.cp_span = kind.cp_span, acc.cp_pair_span = kind.cp_pair_span;
                merge_ops(&acc, &kind, w);
            }
    pr->out = out;
    *out = acc;
    return ERR_OK;
}


/* A CUDA graph replays fixed sizes: a dropless MoE block's token counts
 * change every step, so Megatron-Core captures the whole block ("moe") or
 * the whole iteration only for token-drop runs (transformer_config.py). */
static int host_graphs_possible(const sim_input_t *in, err_t *err)
{
    unsigned whole = in->opt.host.graph_scopes & (HOST_GRAPH_MOE | HOST_GRAPH_FULL);
    if (!whole || !model_is_moe(in->model) || in->opt.moe.capacity_factor > 0)
        return ERR_OK;
    return err_setf(err, ERR_INPUT, NULL, "--cuda-graph-scope",
                    "%s needs a token-drop MoE run (--moe-capacity-factor): a dropless block's "
                    "token counts change every step and a graph replays fixed sizes",
                    (whole & HOST_GRAPH_MOE) ? "moe" : "full_iteration");
}

int sim_costs(const sim_input_t *in, step_costs_t *out, err_t *err)
{
    const layout_t *l = in->layout;
    const cluster_t *c = in->cluster;
    memset(out, 0, sizeof *out);
    int rc = sim_model_supported(in->model, err);
    if (rc)
        return rc;
    if ((rc = host_graphs_possible(in, err)))
        return rc;
    if (strcmp(in->profile->gpu, c->gpu.name) != 0)
        return err_setf(err, ERR_INPUT, NULL, "--profile",
                        "the profile describes %s but the cluster's GPU is %s",
                        in->profile->gpu, c->gpu.name);
    if (c->n_gpus != l->n_gpus)
        return err_setf(err, ERR_INPUT, NULL, "--gpus",
                        "the cluster has %d GPUs but the layout uses %d", c->n_gpus,
                        l->n_gpus);
    if ((rc = topo_place_groups(l, c->gpus_per_node, &out->placement, err)))
        return rc;
    out->tp_span = span_of(c, &out->placement.group[GROUP_TP]);
    out->dp_span = span_of(c, &out->placement.group[GROUP_DP_CP]);
    out->pp_span = pp_pair_span(c, &out->placement.group[GROUP_PP]);

    pricer_t pr = {0};
    pr.in = in;
    pr.p = in->profile;
    pr.out = out;
    prec_costs_t q;
    if (in->opt.prec_for == (int)l->precision + 1) {
        q = in->opt.prec;
    } else if ((rc = prec_costs(l->precision, &q, err))) {
        return rc;
    }
    pr.q = &q;
    pr.dt = q.gemm_dtype;
    pr.e = layout_weight_bytes(l->precision);
    pr.t = l->tp;
    pr.T = (double)l->seq_len / l->cp * l->micro_batch;
    pr.Tn = l->sequence_parallel ? pr.T / l->tp : pr.T;
    pr.frozen = finetune_frozen(&l->ft);
    out->ep_span = ep_span_of(c, l, layout_etp(l));
    out->edp_span = edp_span_of(c, l);
    int L = in->model->n_layers, Lm = model_is_moe(in->model) ? in->model->moe.n_moe_layers : 0;
    if (model_is_hybrid(in->model)) {
        if ((rc = price_hybrid(&pr, err)))
            return rc;
    } else if (Lm > 0 && Lm < L) {
        /* dense and MoE blocks: the step builder prices a layer as one, so
         * a layer is their average by count (the ops shown: the MoE
         * block's) */
        step_costs_t dense = *out;
        pr.out = &dense;
        price_layer(&pr, false);
        pr.out = out;
        price_layer(&pr, true);
        double wm = (double)Lm / L, wd = 1 - wm;
        out->fwd = parts_mix(&out->fwd, wm, &dense.fwd, wd);
        out->bwd = parts_mix(&out->bwd, wm, &dense.bwd, wd);
        out->bwd_wgrad_s = wm * out->bwd_wgrad_s + wd * dense.bwd_wgrad_s;
        out->recompute_tp_s = wm * out->recompute_tp_s + wd * dense.recompute_tp_s;
        out->ep_comm_layer_s *= wm;
    } else {
        price_layer(&pr, Lm > 0);
    }
    price_edges(&pr);
    price_frozen_edges(&pr);

    /* Pipeline transfer of one micro-batch's activations: 1/t of the tensor
     * per TP rank (sequence parallel, or Megatron's scatter/gather
     * optimization, which then re-gathers it over NVLink); the whole tensor
     * from every TP rank where the framework sends it as it is. */
    double act = pr.T * in->model->hidden * pr.e;
    if (l->pp > 1) {
        bool whole = l->tp > 1 && !l->sequence_parallel && in->opt.p2p_whole_tensor;
        out->p2p_bytes = l->tp > 1 && !whole ? act / l->tp : act;
        out->p2p_s = prof_coll_time(in->profile, COLL_SEND_RECV, &out->pp_span, out->p2p_bytes);
        if (l->tp > 1 && !l->sequence_parallel && !whole)
            out->p2p_s += prof_coll_time(in->profile, COLL_ALL_GATHER, &out->tp_span, act);
    }
    out->layer_params = layer_params_gpu(in->model, l, &out->layer_expert_params);
    out->layer_trainable_params =
        pr.frozen ? finetune_adapter_params_block(&l->ft, in->model, l->tp) : out->layer_params;
    if (l->zero >= 3)
        price_zero3(in, out);
    if (l->offload)
        price_offload(in, out);
    amax_price_layers(in, out); /* before bwd_keep copies bwd */
    out->bwd_keep = out->bwd;
    if (l->recompute == RECOMPUTE_FULL) {
        out->bwd_keep.recompute = 0;
        out->bwd_keep.tp = fmax(0, out->bwd.tp - out->recompute_tp_s);
        out->bwd_keep.cp = fmax(0, out->bwd.cp - out->fwd.cp);
        out->bwd_keep.ep = fmax(0, out->bwd.ep - out->fwd.ep);
    }
    out->straggler_cv = in->opt.straggler_cv >= 0 ? in->opt.straggler_cv
                                                  : in->profile->straggler_cv;
    out->straggler_sigma_max = sim_expected_max_normal(l->n_gpus);
    return ERR_OK;
}

/* The routed experts' share of a GPU's layer parameters (0 when dense, and
 * with a frozen base, whose adapters are on the attention only). */
static double expert_share(const sim_input_t *in, const step_costs_t *c)
{
    if (finetune_frozen(&in->layout->ft))
        return 0;
    return c->layer_params > 0 ? c->layer_expert_params / c->layer_params : 0;
}

double sim_grad_reduce_time(const sim_input_t *in, const step_costs_t *c, double params)
{
    const layout_t *l = in->layout;
    bool sharded = l->zero >= 1 || l->distributed_optimizer;
    if (in->opt.bf16_grad_all_reduce && l->precision == PRECISION_BF16 && l->zero <= 1)
        sharded = false; /* BF16_Optimizer: all-reduced, then its shard updated */
    coll_op_t op = sharded ? COLL_REDUCE_SCATTER : COLL_ALL_REDUCE;
    double x = expert_share(in, c);
    if (x <= 0)
        return prof_coll_time(in->profile, op, &c->dp_span, params * reduce_bytes(in));
    /* experts over their own group, the rest over DP x CP */
    return prof_coll_time(in->profile, op, &c->dp_span, params * (1 - x) * reduce_bytes(in)) +
           prof_coll_time(in->profile, op, &c->edp_span, params * x * reduce_bytes(in));
}

double sim_param_gather_time(const sim_input_t *in, const step_costs_t *c, double params)
{
    double x = expert_share(in, c);
    if (x <= 0)
        return prof_coll_time(in->profile, COLL_ALL_GATHER, &c->dp_span,
                              params * gather_bytes(in));
    return prof_coll_time(in->profile, COLL_ALL_GATHER, &c->dp_span,
                          params * (1 - x) * gather_bytes(in)) +
           prof_coll_time(in->profile, COLL_ALL_GATHER, &c->edp_span,
                          params * x * gather_bytes(in));
}

double sim_optimizer_time(const sim_input_t *in, double params_on_gpu)
{
    /* Adam over fp32 state, per parameter: read the gradient for the norm
     * and again for the update (2 x grad bytes), read and write the master
     * weight, momentum and variance (24), write the 16-bit weight (2), zero
     * the gradient buffer (grad bytes). */
    const layout_t *l = in->layout;
    double bytes = 3.0 * l->grad_bytes + 24 + 2;
    if (finetune_frozen(&l->ft))
        bytes = 3.0 * 4 + 24; /* fp32 adapters: no 16-bit copy to write */
    return prof_mem_time(in->profile, params_on_gpu * bytes);
}
