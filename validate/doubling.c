#include "validate/doubling.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "models/layout.h"
#include "profile/profile.h"

#define GIB (1024.0 * 1024.0 * 1024.0)
/* No part of a step is believed to run more than 100 times slower than a
 * calibrated profile says; beyond that a factor "cannot explain" a gap. */
#define MAX_SLOWDOWN 100.0

/* ------------------------------------------------------------ one run */

static double rel(double predicted, double measured)
{
    return measured > 0 && isfinite(measured) ? predicted / measured - 1 : NAN;
}

static void set_q(dbl_quantity_t *q, const char *name, const char *key, double predicted,
                  double measured, double tolerance)
{
    q->name = name;
    q->key = key;
    q->predicted = predicted;
    q->measured = measured;
    q->error = rel(predicted, measured);
    q->flagged = isfinite(q->error) && fabs(q->error) > tolerance;
}

int dbl_check_run(sim_ctx_t *ctx, const dbl_measured_t *m, double tolerance, dbl_check_t *out,
                  err_t *err)
{
    memset(out, 0, sizeof *out);
    int rc = sim_run_step(ctx, &m->in, &out->predicted, err);
    if (rc)
        return rc;
    const sim_result_t *r = &out->predicted;
    double gpus = m->in.layout->n_gpus, t = m->step_time_s;
    /* scaleplan's FLOP count at the measured step time: the frameworks count
     * FLOPs differently (Megatron before 2025 counted attention in full), so
     * their own TFLOP/s are shown apart, not compared */
    double tflops = r->model_flops_per_step / (t * gpus) / 1e12;
    double mfu = r->mfu * r->step_time_s / t;
    set_q(&out->q[DBL_Q_STEP], "step time (s)", "step_time_s", r->step_time_s, t, tolerance);
    set_q(&out->q[DBL_Q_TOKENS], "tokens/s", "tokens_per_s", r->tokens_per_s,
          r->tokens_per_step / t, tolerance);
    set_q(&out->q[DBL_Q_TFLOPS], "model TFLOP/s per GPU", "model_tflops_per_gpu",
          r->model_tflops_per_gpu, tflops, tolerance);
    set_q(&out->q[DBL_Q_MFU], "MFU", "mfu", r->mfu, mfu, tolerance);
    set_q(&out->q[DBL_Q_MEMORY], "memory per GPU (GiB)", "memory_gib",
          r->memory.total_bytes / GIB, m->memory_gib, tolerance);
    const double *bd = r->breakdown_s;
    double comp[DBL_COMP_COUNT] = {
        bd[BD_COMPUTE] + bd[BD_RECOMPUTE] + bd[BD_TP_COMM] + bd[BD_CP_COMM] + bd[BD_PP_COMM] +
            bd[BD_PP_BUBBLE] + bd[BD_EP_COMM] + bd[BD_MOE_IMBALANCE],
        bd[BD_DP_COMM] + bd[BD_STRAGGLER], bd[BD_OPTIMIZER]};
    static const char *const names[DBL_COMP_COUNT] = {"forward+backward (s)", "gradient reduction (s)",
                                                      "optimizer step (s)"};
    static const char *const keys[DBL_COMP_COUNT] = {"compute_s", "grad_reduce_s", "optimizer_s"};
    for (int k = 0; k < DBL_COMP_COUNT; k++)
        set_q(&out->q[DBL_Q_COMP0 + k], names[k], keys[k], comp[k], m->comp_s[k], tolerance);
    out->error = out->q[DBL_Q_STEP].error;
    out->within = fabs(out->error) <= tolerance;
    return ERR_OK;
}

/* ------------------------------------------------------------ profile factors */

/* What a simulation may change: copies of the run's profile, cluster and
 * options. */
typedef struct {
    profile_t p;
    cluster_t c;
    sim_options_t o;
} variant_t;

typedef struct {
    const char *name, *parts, *field;
    double (*value)(const variant_t *v);
    void (*slow)(variant_t *v, double x); /* make the parts x times slower */
} knob_t;

static double compute_value(const variant_t *v)
{
    return v->p.sustained_factor;
}
static void compute_slow(variant_t *v, double x)
{
    v->p.sustained_factor /= x;
}

/* The scale-out efficiency in effect (the profile's when it measured this
 * fabric, else the fabric's). */
static double net_value(const variant_t *v)
{
    bool measured = strcmp(v->p.net_fabric, v->c.inter.name) == 0 && v->p.net_efficiency > 0;
    return measured ? v->p.net_efficiency : v->c.inter.efficiency;
}
static void net_slow(variant_t *v, double x)
{
    double eff = net_value(v);
    snprintf(v->p.net_fabric, sizeof v->p.net_fabric, "%s", v->c.inter.name);
    v->p.net_efficiency = eff / x;
}

static double intra_value(const variant_t *v)
{
    return v->c.intra.efficiency;
}
static void intra_slow(variant_t *v, double x)
{
    v->c.intra.efficiency /= x;
    for (int i = 0; i < v->p.n_tables; i++)
        for (int k = 0; k < v->p.tables[i].n_lines; k++)
            v->p.tables[i].lines[k].busbw_gbs /= x;
}

static double straggler_value(const variant_t *v)
{
    return v->o.straggler_cv >= 0 ? v->o.straggler_cv : v->p.straggler_cv;
}
static void straggler_slow(variant_t *v, double x)
{
    v->o.straggler_cv = straggler_value(v) * x;
}

static double membw_value(const variant_t *v)
{
    return v->p.mem_bw_eff;
}
static void membw_slow(variant_t *v, double x)
{
    v->p.mem_bw_eff /= x;
}

/* The first knob is the shared compute factor the re-fit always uses. */
static const knob_t knobs[DBL_N_CAUSES] = {
    {"GEMM and attention throughput", "compute, recompute, pp_bubble",
     "sustained_factor", compute_value, compute_slow},
    {"the scale-out network", "dp_comm, pp_comm, cp_comm",
     "net_efficiency", net_value, net_slow},
    {"the NVLink bandwidth", "tp_comm", "intra-node efficiency", intra_value, intra_slow},
    {"the per-GPU jitter", "straggler", "straggler_cv", straggler_value, straggler_slow},
    {"memory bandwidth", "optimizer", "mem_bw_eff", membw_value, membw_slow},
};
enum { KNOB_COMPUTE = 0 };

/* Simulate in with knob a slowed by xa and knob b by xb (-1: none). */
static int sim_slowed(sim_ctx_t *ctx, const sim_input_t *in, int a, double xa, int b, double xb,
                      sim_result_t *r, err_t *err)
{
    variant_t *v = malloc(sizeof *v);
    if (!v)
        return err_set(err, ERR_RUNTIME, "out of memory");
    v->p = *in->profile; /* shallow: only scalars and the inline tables change */
    v->c = *in->cluster;
    v->o = in->opt;
    if (a >= 0)
        knobs[a].slow(v, xa);
    if (b >= 0)
        knobs[b].slow(v, xb);
    sim_input_t s = {in->model, in->layout, &v->c, &v->p, v->o};
    int rc = sim_run_step(ctx, &s, r, err);
    free(v);
    return rc;
}

static int step_slowed(sim_ctx_t *ctx, const sim_input_t *in, int a, double xa, int b, double xb,
                       double *step_s, err_t *err)
{
    sim_result_t *r = malloc(sizeof *r);
    if (!r)
        return err_set(err, ERR_RUNTIME, "out of memory");
    int rc = sim_slowed(ctx, in, a, xa, b, xb, r, err);
    if (!rc)
        *step_s = r->step_time_s;
    free(r);
    return rc;
}

/* ------------------------------------------------------------ the ladder */

static int cmp_gpus(const void *a, const void *b)
{
    const dbl_measured_t *x = *(const dbl_measured_t *const *)a;
    const dbl_measured_t *y = *(const dbl_measured_t *const *)b;
    return (x->in.layout->n_gpus > y->in.layout->n_gpus) -
           (x->in.layout->n_gpus < y->in.layout->n_gpus);
}

/* Order the runs by GPU count and check they form a ladder. */
static int order_runs(const dbl_measured_t *runs, int n, const dbl_measured_t **sorted, err_t *err)
{
    if (n < 2 || n > DBL_MAX_RUNGS)
        return err_set(err, ERR_INPUT, "the doubling check needs 2 to %d runs (got %d)",
                       DBL_MAX_RUNGS, n);
    for (int i = 0; i < n; i++) {
        sorted[i] = &runs[i];
        if (!(runs[i].step_time_s > 0 && isfinite(runs[i].step_time_s)))
            return err_setf(err, ERR_INPUT, runs[i].label, NULL,
                            "no measured step time to compare");
    }
    qsort(sorted, (size_t)n, sizeof *sorted, cmp_gpus);
    for (int i = 1; i < n; i++) {
        const dbl_measured_t *a = sorted[i - 1], *b = sorted[i];
        if (a->in.layout->n_gpus == b->in.layout->n_gpus)
            return err_setf(err, ERR_INPUT, b->label, NULL,
                            "runs at the same GPU count (%d) as %s; the doubling check "
                            "compares rungs of different sizes",
                            b->in.layout->n_gpus, a->label);
        if (strcmp(a->in.model->name, b->in.model->name) != 0)
            return err_setf(err, ERR_INPUT, b->label, NULL,
                            "trains %s, but %s trains %s; the doubling check compares runs "
                            "of one model",
                            b->in.model->name, a->label, a->in.model->name);
        if (strcmp(a->in.cluster->gpu.name, b->in.cluster->gpu.name) != 0)
            return err_setf(err, ERR_INPUT, b->label, NULL,
                            "runs on %s, but %s on %s; the doubling check compares runs on "
                            "one GPU type",
                            b->in.cluster->gpu.name, a->label, a->in.cluster->gpu.name);
    }
    return ERR_OK;
}

/* Predictions, errors, the shared offset, efficiencies and the flags. */
static int predict_rungs(sim_ctx_t *ctx, const dbl_measured_t *const *sorted, int n,
                         double tolerance, dbl_ladder_t *out, err_t *err)
{
    double ratio[DBL_MAX_RUNGS] = {0};
    for (int i = 0; i < n; i++) {
        dbl_rung_t *g = &out->rung[i];
        g->m = *sorted[i];
        g->gpus = g->m.in.layout->n_gpus;
        int rc = sim_run_step(ctx, &g->m.in, &g->predicted, err);
        if (rc)
            return err_prefix(err, g->m.label);
        g->error = rel(g->predicted.step_time_s, g->m.step_time_s);
        g->predicted_tokens_per_s = g->predicted.tokens_per_s;
        g->measured_tokens_per_s = g->predicted.tokens_per_step / g->m.step_time_s;
        ratio[i] = g->m.step_time_s / g->predicted.step_time_s;
    }
    /* the first rung is the baseline the doublings are judged against:
     * what it shares with the prediction (a profile a few percent off
     * everywhere) is not a scaling problem */
    out->offset = ratio[0];
    out->worst = -1;
    const dbl_rung_t *first = &out->rung[0];
    for (int i = 0; i < n; i++) {
        dbl_rung_t *g = &out->rung[i];
        g->measured_efficiency = (g->measured_tokens_per_s / g->gpus) /
                                 (first->measured_tokens_per_s / first->gpus);
        g->predicted_efficiency = (g->predicted_tokens_per_s / g->gpus) /
                                  (first->predicted_tokens_per_s / first->gpus);
        g->shortfall = ratio[i] / out->offset - 1;
        g->flagged = fabs(g->shortfall) > tolerance;
        if (g->shortfall > tolerance && (out->worst < 0 || g->shortfall > out->rung[out->worst].shortfall))
            out->worst = i;
    }
    return ERR_OK;
}

/* How many times slower knob k's parts must run for rung f to be predicted
 * at target seconds (bisection on the logarithm); INFINITY when even
 * MAX_SLOWDOWN does not reach it. */
static int slowdown_to(sim_ctx_t *ctx, const sim_input_t *in, int k, double target, double *x,
                       err_t *err)
{
    double t = 0;
    int rc = step_slowed(ctx, in, k, MAX_SLOWDOWN, -1, 1, &t, err);
    if (rc)
        return rc;
    if (t < target) {
        *x = INFINITY;
        return ERR_OK;
    }
    double lo = 0, hi = log(MAX_SLOWDOWN);
    for (int it = 0; it < 40 && hi - lo > 1e-4; it++) {
        double mid = 0.5 * (lo + hi);
        if ((rc = step_slowed(ctx, in, k, exp(mid), -1, 1, &t, err)))
            return rc;
        if (t < target)
            lo = mid;
        else
            hi = mid;
    }
    *x = exp(hi);
    return ERR_OK;
}

/* The breakdown part that grows most when knob k slows rung f by the
 * cause's factor (or by MAX_SLOWDOWN when no factor closes the gap). */
static int grown_part(sim_ctx_t *ctx, const dbl_rung_t *f, int k, dbl_cause_t *c, err_t *err)
{
    sim_result_t *r = malloc(sizeof *r);
    if (!r)
        return err_set(err, ERR_RUNTIME, "out of memory");
    int rc = sim_slowed(ctx, &f->m.in, k, isfinite(c->factor) ? c->factor : MAX_SLOWDOWN, -1, 1,
                        r, err);
    if (!rc) {
        int best = 0;
        double grew = -INFINITY;
        for (int b = 0; b < BD_COUNT; b++) {
            double d = r->breakdown_s[b] - f->predicted.breakdown_s[b];
            if (d > grew) {
                grew = d;
                best = b;
            }
        }
        c->part = sim_bd_name((sim_bd_t)best);
        c->part_before_s = f->predicted.breakdown_s[best];
        c->part_after_s = r->breakdown_s[best];
    }
    free(r);
    return rc;
}

/* The slowdown a cause needs, made a quarter smaller when its factor drives
 * the part that grows directly (the scale-out network under DP traffic)
 * rather than through a side path (NVLink bandwidth limiting the same DP
 * ring inside a node): between two nearly equal explanations the direct
 * one is the likelier, while a clearly smaller change still wins. */
static double ranked_factor(const dbl_cause_t *c)
{
    bool direct = c->part && strstr(c->parts, c->part);
    return direct ? c->factor / 1.25 : c->factor;
}

/* Explaining causes first, by the change they need; then those that do not,
 * those that close the gap before those that cannot, least harm to the
 * rungs that matched first. */
static int cmp_cause(const void *a, const void *b)
{
    const dbl_cause_t *x = a, *y = b;
    if (x->explains != y->explains)
        return x->explains ? -1 : 1;
    if (isfinite(x->factor) != isfinite(y->factor))
        return isfinite(x->factor) ? -1 : 1;
    if (x->explains) {
        double fx = ranked_factor(x), fy = ranked_factor(y);
        return (fx > fy) - (fx < fy);
    }
    return (x->worst_other > y->worst_other) - (x->worst_other < y->worst_other);
}

/* Each profile factor as the cause of rung[worst]'s gap, most likely first. */
static int rank_causes(sim_ctx_t *ctx, double tolerance, dbl_ladder_t *out, err_t *err)
{
    const dbl_rung_t *f = &out->rung[out->worst];
    double target = f->m.step_time_s / out->offset;
    variant_t *base = malloc(sizeof *base);
    if (!base)
        return err_set(err, ERR_RUNTIME, "out of memory");
    base->p = *f->m.in.profile;
    base->c = *f->m.in.cluster;
    base->o = f->m.in.opt;
    int rc = ERR_OK;
    for (int k = 0; k < DBL_N_CAUSES && !rc; k++) {
        dbl_cause_t *c = &out->cause[k];
        c->name = knobs[k].name;
        c->parts = knobs[k].parts;
        c->field = knobs[k].field;
        c->value = knobs[k].value(base);
        c->worst_other = 0;
        c->worst_other_rung = -1;
        if ((rc = slowdown_to(ctx, &f->m.in, k, target, &c->factor, err)) ||
            (rc = grown_part(ctx, f, k, c, err)))
            break;
        bool others_ok = true;
        for (int i = 0; i < out->n && isfinite(c->factor) && !rc; i++) {
            const dbl_rung_t *g = &out->rung[i];
            if (i == out->worst || g->flagged)
                continue;
            double t = 0;
            if ((rc = step_slowed(ctx, &g->m.in, k, c->factor, -1, 1, &t, err)))
                break;
            /* the rung's error against the baseline after the change */
            double e = out->offset * t / g->m.step_time_s - 1;
            if (c->worst_other_rung < 0 || e > c->worst_other) {
                c->worst_other = e;
                c->worst_other_rung = i;
            }
            others_ok = others_ok && e <= tolerance;
        }
        c->explains = isfinite(c->factor) && others_ok;
    }
    free(base);
    if (rc)
        return rc;
    out->n_causes = DBL_N_CAUSES;
    qsort(out->cause, DBL_N_CAUSES, sizeof out->cause[0], cmp_cause);
    return ERR_OK;
}

/* ------------------------------------------------------------ re-fit */

typedef struct {
    sim_ctx_t *ctx;
    const dbl_ladder_t *l;
    unsigned use;  /* bit i: rung i takes part */
    int knob;      /* the cause's knob, -1 for compute only */
} fit_t;

/* Sum of squared log errors of the rungs in use with compute slowed by c
 * and the cause's knob by k. */
static int fit_cost(const fit_t *f, double c, double k, double *cost, err_t *err)
{
    *cost = 0;
    for (int i = 0; i < f->l->n; i++) {
        if (!(f->use & (1u << i)))
            continue;
        double t = 0;
        const dbl_rung_t *g = &f->l->rung[i];
        int rc = step_slowed(f->ctx, &g->m.in, KNOB_COMPUTE, c, f->knob, k, &t, err);
        if (rc)
            return rc;
        double e = log(t / g->m.step_time_s);
        *cost += e * e;
    }
    return ERR_OK;
}

/* Golden-section search of one factor's logarithm in [lo, hi], the other
 * fixed. */
static int golden(const fit_t *f, bool on_knob, double lo, double hi, double *c, double *k,
                  err_t *err)
{
    const double g = 0.5 * (sqrt(5.0) - 1);
    double a = lo, b = hi, x1 = b - g * (b - a), x2 = a + g * (b - a), f1, f2;
    int rc;
    if ((rc = fit_cost(f, on_knob ? *c : exp(x1), on_knob ? exp(x1) : *k, &f1, err)) ||
        (rc = fit_cost(f, on_knob ? *c : exp(x2), on_knob ? exp(x2) : *k, &f2, err)))
        return rc;
    while (b - a > 2e-3) {
        if (f1 <= f2) {
            b = x2;
            x2 = x1;
            f2 = f1;
            x1 = b - g * (b - a);
            rc = fit_cost(f, on_knob ? *c : exp(x1), on_knob ? exp(x1) : *k, &f1, err);
        } else {
            a = x1;
            x1 = x2;
            f1 = f2;
            x2 = a + g * (b - a);
            rc = fit_cost(f, on_knob ? *c : exp(x2), on_knob ? exp(x2) : *k, &f2, err);
        }
        if (rc)
            return rc;
    }
    double best = exp(0.5 * (a + b));
    if (on_knob)
        *k = best;
    else
        *c = best;
    return ERR_OK;
}

/* Least squares over the rungs in use: compute slowdown c within a factor
 * of 2 of the start, the cause's slowdown k from 1/4 to MAX_SLOWDOWN;
 * coordinate descent, three rounds. */
static int refit(const fit_t *f, double c0, double k0, double *c, double *k, double *rms,
                 err_t *err)
{
    *c = c0;
    *k = f->knob >= 0 ? k0 : 1;
    int rc = ERR_OK, used = 0;
    for (int i = 0; i < f->l->n; i++)
        used += (f->use >> i) & 1u;
    for (int round = 0; round < 3 && !rc; round++) {
        rc = golden(f, false, log(c0) - log(2.0), log(c0) + log(2.0), c, k, err);
        if (!rc && f->knob >= 0 && used >= 2)
            rc = golden(f, true, log(0.25), log(MAX_SLOWDOWN), c, k, err);
        if (f->knob < 0 || used < 2)
            break;
    }
    if (rc)
        return rc;
    double cost;
    if ((rc = fit_cost(f, *c, *k, &cost, err)))
        return rc;
    int params = f->knob >= 0 && used >= 2 ? 2 : 1;
    *rms = sqrt(cost / (used > params ? used - params : 1));
    return ERR_OK;
}

/* ------------------------------------------------------------ the next rung */

/* The last rung's layout on twice its GPUs: the global batch kept, or
 * doubled when the measured rungs doubled it (weak scaling), or doubled
 * when keeping it leaves no whole gradient accumulation. */
static int next_layout_from(const dbl_ladder_t *l, layout_t *next, int *gpus, char *why,
                            size_t cap)
{
    const dbl_rung_t *last = &l->rung[l->n - 1], *prev = &l->rung[l->n - 2];
    const layout_t *a = prev->m.in.layout, *b = last->m.in.layout;
    bool weak = (double)b->global_batch / a->global_batch > 1.5;
    *gpus = 2 * b->n_gpus;
    err_t e;
    for (int attempt = 0; attempt < 2; attempt++) {
        *next = *b;
        next->dp = 0;
        next->grad_accum = 0;
        next->n_gpus = 0;
        next->global_batch = (weak || attempt == 1) ? 2 * b->global_batch : b->global_batch;
        if (layout_finalize(next, last->m.in.model, *gpus, &e) == ERR_OK)
            return ERR_OK;
    }
    snprintf(why, cap, "the last rung's layout does not carry over to %d GPUs: %s", *gpus, e.msg);
    return ERR_INPUT;
}

/* Predict the next rung with knob slowdowns (c for compute, k for knob). */
static int predict_next(sim_ctx_t *ctx, const dbl_ladder_t *l, int knob, double c, double k,
                        sim_result_t *r, err_t *err)
{
    const dbl_rung_t *last = &l->rung[l->n - 1];
    cluster_t *cl = malloc(sizeof *cl);
    if (!cl)
        return err_set(err, ERR_RUNTIME, "out of memory");
    *cl = *last->m.in.cluster;
    cl->n_gpus = l->next_gpus;
    sim_input_t in = last->m.in;
    in.cluster = cl;
    in.layout = &l->next_layout;
    int rc = sim_slowed(ctx, &in, KNOB_COMPUTE, c, knob, k, r, err);
    free(cl);
    return rc;
}

static int next_rung(sim_ctx_t *ctx, int knob, double c, double k, double rms, dbl_ladder_t *out,
                     err_t *err)
{
    int rc;
    if ((rc = predict_next(ctx, out, -1, 1, 1, &out->next_uncorrected, err)) ||
        (rc = predict_next(ctx, out, knob, c, k, &out->next_corrected, err)))
        return rc;
    double center = out->next_corrected.step_time_s, lo = center, hi = center;
    /* the fit with each rung left out; without the rung that fell short
     * nothing says the cause's part is slow, so only compute is fitted */
    for (int i = 0; i < out->n && out->n >= 2; i++) {
        fit_t f = {ctx, out, ((1u << out->n) - 1) & ~(1u << i), i == out->worst ? -1 : knob};
        double ci, ki, rmsi;
        sim_result_t r;
        if ((rc = refit(&f, out->offset, k, &ci, &ki, &rmsi, err)) ||
            (rc = predict_next(ctx, out, knob, ci, ki, &r, err)))
            return rc;
        lo = fmin(lo, r.step_time_s);
        hi = fmax(hi, r.step_time_s);
    }
    double cv = 0;
    for (int i = 0; i < out->n; i++)
        cv = fmax(cv, out->rung[i].m.step_cv);
    double widen = 2 * sqrt(rms * rms + cv * cv);
    out->next_low_s = lo * (1 - widen);
    out->next_high_s = hi * (1 + widen);
    double tokens = out->next_corrected.tokens_per_step;
    out->next_tokens_per_s = tokens / center;
    out->next_tokens_low = tokens / out->next_high_s;
    out->next_tokens_high = out->next_low_s > 0 ? tokens / out->next_low_s : INFINITY;
    const dbl_rung_t *first = &out->rung[0];
    out->next_efficiency =
        (out->next_tokens_per_s / out->next_gpus) / (first->measured_tokens_per_s / first->gpus);
    return ERR_OK;
}

int dbl_ladder(const dbl_measured_t *runs, int n, const layout_t *next_layout, int next_gpus,
               double tolerance, dbl_ladder_t *out, err_t *err)
{
    memset(out, 0, sizeof *out);
    out->worst = -1;
    const dbl_measured_t *sorted[DBL_MAX_RUNGS];
    int rc = order_runs(runs, n, sorted, err);
    if (rc)
        return rc;
    out->n = n;
    sim_ctx_t *ctx = sim_ctx_create();
    if (!ctx)
        return err_set(err, ERR_RUNTIME, "out of memory");
    if ((rc = predict_rungs(ctx, sorted, n, tolerance, out, err)))
        goto out;
    if (out->worst >= 0 && (rc = rank_causes(ctx, tolerance, out, err)))
        goto out;
    /* the re-fit: compute always, the cause's factor when one explains the gap */
    int knob = -1;
    double k0 = 1;
    if (out->n_causes > 0 && out->cause[0].explains &&
        strcmp(out->cause[0].field, knobs[KNOB_COMPUTE].field) != 0) {
        for (int j = 0; j < DBL_N_CAUSES; j++)
            if (strcmp(knobs[j].field, out->cause[0].field) == 0)
                knob = j;
        k0 = out->cause[0].factor;
    }
    fit_t f = {ctx, out, (1u << n) - 1, knob};
    double c, k;
    if ((rc = refit(&f, out->offset, k0, &c, &k, &out->fit_rms, err)))
        goto out;
    variant_t *v = malloc(sizeof *v);
    if (!v) {
        rc = err_set(err, ERR_RUNTIME, "out of memory");
        goto out;
    }
    v->p = *out->rung[n - 1].m.in.profile;
    v->c = *out->rung[n - 1].m.in.cluster;
    v->o = out->rung[n - 1].m.in.opt;
    out->n_fit = 0;
    int fitted[2] = {KNOB_COMPUTE, knob};
    double slow[2] = {c, k};
    for (int j = 0; j < 2; j++) {
        if (fitted[j] < 0)
            continue;
        dbl_fit_t *d = &out->fit[out->n_fit++];
        d->name = knobs[fitted[j]].name;
        d->field = knobs[fitted[j]].field;
        d->before = knobs[fitted[j]].value(v);
        d->slowdown = slow[j];
        variant_t *w = malloc(sizeof *w);
        if (!w) {
            free(v);
            rc = err_set(err, ERR_RUNTIME, "out of memory");
            goto out;
        }
        *w = *v;
        knobs[fitted[j]].slow(w, slow[j]);
        d->after = knobs[fitted[j]].value(w);
        free(w);
    }
    free(v);
    /* the next doubling */
    if (next_layout && next_gpus > 0) {
        out->next_layout = *next_layout;
        out->next_gpus = next_gpus;
        out->has_next = true;
    } else {
        out->has_next = next_layout_from(out, &out->next_layout, &out->next_gpus,
                                         out->next_why_not, sizeof out->next_why_not) == ERR_OK;
    }
    if (out->has_next)
        rc = next_rung(ctx, knob, c, k, out->fit_rms, out, err);
out:
    sim_ctx_destroy(ctx);
    return rc;
}
