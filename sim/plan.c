#include "sim/plan.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/clock.h"

#ifdef _OPENMP
#include <omp.h>
#endif

void plan_space_default(plan_space_t *s)
{
    memset(s, 0, sizeof *s);
    s->allow_cp = true;
    s->allow_fsdp = true;
    s->allow_gpipe = false; /* same bubble as 1F1B, more memory: never faster */
    s->allow_sp = true;
    s->allow_selective = true;
}

typedef struct {
    layout_t l;
    double bound_tps; /* upper bound on tokens/s */
    double tps;       /* simulated tokens/s, 0 when not simulated */
    int index;        /* enumeration order, for deterministic ties */
} cand_t;

typedef struct {
    cand_t *v;
    long n, cap;
    int oom;
} cand_list_t;

static void push(cand_list_t *c, const layout_t *l)
{
    if (c->n == c->cap) {
        long cap = c->cap ? 2 * c->cap : 1024;
        cand_t *v = realloc(c->v, (size_t)cap * sizeof *v);
        if (!v) {
            c->oom = 1;
            return;
        }
        c->v = v;
        c->cap = cap;
    }
    c->v[c->n].l = *l;
    c->v[c->n].bound_tps = 0;
    c->v[c->n].tps = 0;
    c->v[c->n].index = (int)c->n;
    c->n++;
}

/* Uneven pipeline split for L layers on pp stages: even when it divides,
 * else lighter first and last stages (they also carry the embedding and
 * the output layer) with the middle ones equal. 0 when none exists. */
static int uneven_split(int L, int pp, int *first, int *last)
{
    *first = *last = 0;
    if (L % pp == 0)
        return 1;
    if (pp < 3)
        return 0;
    int mid = (L + pp - 1) / pp;
    for (; mid >= 1; mid--) {
        int rest = L - (pp - 2) * mid;
        if (rest < 2)
            continue;
        if (rest % 2 == 0 && rest / 2 <= mid) {
            *first = *last = rest / 2;
            return 1;
        }
        if (rest <= 2 * mid) {
            *first = rest / 2;
            *last = rest - rest / 2;
            if (*last <= mid)
                return 1;
        }
        break;
    }
    return 0;
}

/* Largest global batch in [lo, hi] that the micro-batch, DP and (for the
 * interleaved schedule) PP divide; 0 when none. */
static int pick_batch(int lo, int hi, long step)
{
    if (step <= 0 || step > hi)
        return 0;
    long gb = (hi / step) * step;
    return gb >= lo ? (int)gb : 0;
}

static void enumerate(const model_t *m, const cluster_t *c, const plan_space_t *s,
                      cand_list_t *out)
{
    int G = c->n_gpus, L = m->n_layers;
    int max_tp = s->max_tp > 0 ? s->max_tp : 2 * c->gpus_per_node;
    int max_vpp = s->max_vpp > 0 ? s->max_vpp : 8;
    static const int mbs[] = {1, 2, 4, 8, 16};
    for (int tp = 1; tp <= max_tp && tp <= G; tp *= 2) {
        for (int cp = 1; cp <= (s->allow_cp ? 16 : 1); cp *= 2) {
            if (cp > 1 && s->seq_len < 8192 * cp / 2)
                continue; /* CP pays off only for long sequences per rank */
            for (int pp = 1; pp <= L && pp <= G; pp++) {
                long mp = (long)tp * cp * pp;
                if (G % mp)
                    continue;
                int first, last;
                if (!uneven_split(L, pp, &first, &last))
                    continue;
                int dp = (int)(G / mp);
                for (int vpp = 1; vpp <= (pp > 1 ? max_vpp : 1); vpp++) {
                    if (vpp > 1 && (first || last || L % (pp * vpp)))
                        continue;
                    for (size_t a = 0; a < sizeof mbs / sizeof mbs[0]; a++) {
                        long step = (long)mbs[a] * dp * (vpp > 1 ? pp : 1);
                        int gb = pick_batch(s->global_batch_min, s->global_batch_max, step);
                        if (!gb)
                            continue;
                        for (int rc = 0; rc <= RECOMPUTE_FULL; rc++)
                            for (int sp = 0; sp <= (tp > 1 && s->allow_sp); sp++)
                                for (int z = 0; z < 3; z++) {
                                    if (z == 2 && !s->allow_fsdp)
                                        continue;
                                    if (rc == RECOMPUTE_SELECTIVE && !s->allow_selective)
                                        continue;
                                    if (z > 0 && dp * cp == 1)
                                        continue; /* nothing to shard over */
                                    for (int off = 0; off <= (s->allow_offload && z > 0); off++)
                                    for (int g = 0; g <= (s->allow_gpipe && pp > 1 && vpp == 1);
                                         g++) {
                                        layout_t l;
                                        layout_defaults(&l);
                                        l.tp = tp;
                                        l.cp = cp;
                                        l.pp = pp;
                                        l.vpp = vpp;
                                        l.first_stage_layers = first;
                                        l.last_stage_layers = last;
                                        l.micro_batch = mbs[a];
                                        l.global_batch = gb;
                                        l.seq_len = s->seq_len;
                                        l.precision = s->precision;
                                        l.recompute = (recompute_t)rc;
                                        l.sequence_parallel = sp;
                                        l.distributed_optimizer = z == 1;
                                        l.zero = z == 2 ? 3 : 0;
                                        if (off)
                                            l.offload = LAYOUT_OFFLOAD_OPTIMIZER |
                                                        (z == 2 ? LAYOUT_OFFLOAD_PARAMS : 0);
                                        l.schedule = vpp > 1 ? SCHEDULE_INTERLEAVED
                                                     : g     ? SCHEDULE_GPIPE
                                                             : SCHEDULE_1F1B;
                                        push(out, &l);
                                    }
                                }
                    }
                }
            }
        }
    }
}

/* Tokens per second no step can beat: every stage computes its layers for
 * every micro-batch, so the busiest stage's compute bounds the step. */
static double tps_bound(const sim_input_t *in, const step_costs_t *c)
{
    const layout_t *l = in->layout;
    int busiest = 0;
    for (int s = 0; s < l->pp; s++) {
        int n = layout_stage_layers(l, in->model, s);
        if (n > busiest)
            busiest = n;
    }
    double per_mb = busiest * (cost_total(&c->fwd) + cost_total(&c->bwd));
    double step = l->grad_accum * per_mb;
    return step > 0 ? (double)l->global_batch * l->seq_len / step : INFINITY;
}

static int cmp_bound(const void *a, const void *b)
{
    const cand_t *x = a, *y = b;
    if (x->bound_tps != y->bound_tps)
        return x->bound_tps < y->bound_tps ? 1 : -1;
    return x->index - y->index;
}

static int cmp_tps(const void *a, const void *b)
{
    const cand_t *x = a, *y = b;
    if (x->tps != y->tps)
        return x->tps < y->tps ? 1 : -1;
    return x->index - y->index;
}

int plan_search(const model_t *m, const cluster_t *c, const profile_t *p,
                const plan_space_t *space, const layout_t *reference, plan_search_t *out,
                err_t *err)
{
    memset(out, 0, sizeof *out);
    if (sim_model_supported(m, err))
        return ERR_INPUT;
    double t0 = clock_now_s();
    cand_list_t cl = {0};
    enumerate(m, c, space, &cl);
    if (cl.oom) {
        free(cl.v);
        return err_set(err, ERR_RUNTIME, "out of memory enumerating layouts");
    }
    out->candidates = cl.n;
    memory_opts_t mo;
    sim_options_t opt;
    layout_t scratch;
    layout_defaults(&scratch);
    if (sim_options_framework(space->framework, &opt, &scratch, err)) {
        free(cl.v);
        return ERR_INPUT;
    }
    bool flash = scratch.flash_attention;
    if (sim_options_precision(&opt, space->precision, err)) {
        free(cl.v);
        return ERR_INPUT;
    }
    sim_memory_opts(p, &opt, &mo);
    /* 1. validity, memory and the bound, in parallel */
    long kept = 0;
    out->smallest_memory_gib = INFINITY;
    for (long i = 0; i < cl.n; i++) {
        cand_t *k = &cl.v[i];
        k->l.flash_attention = flash;
        err_t ignore;
        if (layout_finalize(&k->l, m, c->n_gpus, &ignore)) {
            out->pruned[PRUNE_INVALID]++;
            continue;
        }
        model_memory_t mem;
        model_memory_peak(m, &k->l, &mo, &mem);
        double gib = mem.total_bytes / (1024.0 * 1024 * 1024);
        if (gib < out->smallest_memory_gib) {
            out->smallest_memory_gib = gib;
            out->smallest_memory_layout = k->l;
        }
        double host_need, host_have;
        if (gib > c->gpu.memory_gib ||
            (k->l.offload && !offload_host_fits(&mem, c, &k->l, &host_need, &host_have))) {
            out->pruned[PRUNE_MEMORY]++;
            continue;
        }
        sim_input_t in = {m, &k->l, c, p, opt};
        if (sim_check_size(&in, &ignore)) {
            out->pruned[PRUNE_SIZE]++;
            continue;
        }
        cl.v[kept++] = *k;
    }
    int rc = ERR_OK;
#pragma omp parallel for schedule(dynamic, 16)
    for (long i = 0; i < kept; i++) {
        sim_input_t in = {m, &cl.v[i].l, c, p, opt};
        step_costs_t sc;
        err_t e;
        if (sim_costs(&in, &sc, &e) == 0)
            cl.v[i].bound_tps = tps_bound(&in, &sc);
    }
    qsort(cl.v, (size_t)kept, sizeof *cl.v, cmp_bound);
    /* 2. simulate in order of the bound; stop a candidate when even its
     * bound cannot beat the best found so far */
    double best_tps = 0;
    long simulated = 0, bounded = 0;
    int failed = 0;
#pragma omp parallel
    {
        sim_ctx_t *ctx = sim_ctx_create();
        if (!ctx) {
#pragma omp atomic write
            failed = 1;
        }
#pragma omp for schedule(dynamic, 4) reduction(+ : simulated, bounded)
        for (long i = 0; i < kept; i++) {
            if (!ctx)
                continue;
            double best;
#pragma omp atomic read
            best = best_tps;
            if (cl.v[i].bound_tps <= best) {
                bounded++;
                continue;
            }
            sim_input_t in = {m, &cl.v[i].l, c, p, opt};
            sim_result_t r;
            err_t e;
            if (sim_run_step(ctx, &in, &r, &e) != 0)
                continue;
            simulated++;
            cl.v[i].tps = r.tokens_per_s;
#pragma omp critical(plan_best)
            if (r.tokens_per_s > best_tps)
                best_tps = r.tokens_per_s;
        }
        sim_ctx_destroy(ctx);
    }
    if (failed)
        rc = err_set(err, ERR_RUNTIME, "out of memory in the layout search");
    out->simulated = simulated;
    out->pruned[PRUNE_BOUND] = bounded;
    /* 3. the winner and the runners-up (deterministic: ties by index) */
    long n_sim = 0;
    for (long i = 0; i < kept; i++)
        if (cl.v[i].tps > 0)
            cl.v[n_sim++] = cl.v[i];
    qsort(cl.v, (size_t)n_sim, sizeof *cl.v, cmp_tps);
    if (n_sim > 0 && !rc) {
        out->found = true;
        out->layout = cl.v[0].l;
        sim_ctx_t *ctx = sim_ctx_create();
        sim_input_t in = {m, &out->layout, c, p, opt};
        if (!ctx || sim_run_step(ctx, &in, &out->result, err))
            rc = ERR_RUNTIME;
        sim_ctx_destroy(ctx);
        for (int k = 0; k < 5 && k < n_sim; k++) {
            out->top_layout[k] = cl.v[k].l;
            out->top_step_s[k] = cl.v[k].l.global_batch * (double)cl.v[k].l.seq_len / cl.v[k].tps;
            out->n_ranked = k + 1;
        }
    }
    kept = n_sim; /* what follows needs only the simulated ones and the bound */
    /* 4. the reference layout's rank among everything that could beat it */
    if (reference && !rc) {
        layout_t ref = *reference;
        sim_ctx_t *ctx = sim_ctx_create();
        sim_input_t in = {m, &ref, c, p, opt};
        sim_result_t r;
        if (ctx && sim_run_step(ctx, &in, &r, err) == 0) {
            out->reference_step_s = r.step_time_s;
            int rank = 1;
            for (long i = 0; i < kept; i++) {
                cand_t *x = &cl.v[i];
                if (x->tps == 0 && x->bound_tps > r.tokens_per_s) {
                    sim_input_t xi = {m, &x->l, c, p, opt};
                    sim_result_t xr;
                    if (sim_run_step(ctx, &xi, &xr, err) == 0)
                        x->tps = xr.tokens_per_s;
                }
                if (x->tps > r.tokens_per_s * (1 + 1e-12))
                    rank++;
            }
            out->rank_of_reference = rank;
        }
        sim_ctx_destroy(ctx);
    }
    free(cl.v);
    out->elapsed_s = clock_now_s() - t0;
    if (!rc && kept == 0 && cl.n == 0)
        rc = err_setf(err, ERR_INPUT, NULL, "--global-batch",
                      "no layout on %d GPUs has a global batch in %d..%d sequences that "
                      "micro-batch x DP divides",
                      c->n_gpus, space->global_batch_min, space->global_batch_max);
    return rc;
}
