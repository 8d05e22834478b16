/* cost_cp: context parallelism, the attention of each ring step and the
 * K/V exchange by the framework's method (ring, all-gather, all-to-all)
 * (sim/costsInt.h). */
#include "sim/costsInt.h"

#include <math.h>

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
void cost_cp_blocks(pricer_t *pr, dtype_t dt, double flops, double s_loc, int qk_dim,
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

/* Context parallelism's K/V exchange, by the framework's method
 * (cp_comm_t), with the ring steps' attention blocks priced by
 * cost_cp_blocks: a ring hides each block's transfer behind the block in
 * hand; PyTorch's all-gather rotation issues its one gather before the
 * local block and waits for it after, then passes the K/V gradients round a
 * ring; Ulysses' all-to-alls sit on the critical path. Each later ring step
 * also merges its partial output (and, in the backward, accumulates the
 * query and K/V gradients): a memory pass of opt.cp_merge_bytes an element. */
void cost_cp(pricer_t *pr)
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
    coll_span_t ps = pr->out->cp_pair_span = cost_span(c, &pair);
    coll_span_t s = pr->out->cp_span = cost_span(c, g);
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
