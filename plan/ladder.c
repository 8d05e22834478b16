#include "plan/ladder.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/clock.h"
#include "common/progress.h"
#include "common/units.h"
#include "models/flops.h"
#include "models/layout_text.h"

/* The losses a rung can suffer, with the advice for when it dominates. */
typedef struct {
    const char *key, *name, *fix;
} loss_t;

static const loss_t losses[] = {
    {"pp_bubble", "pipeline bubble",
     "raise the micro-batches per step (a larger global batch) or interleave stages (--vpp)"},
    {"dp_comm", "exposed DP communication",
     "overlap the gradient reduction with the backward and check the network's bus bandwidth "
     "with nccl-tests all_reduce_perf across nodes"},
    {"tp_comm", "TP communication",
     "keep TP inside a node and overlap its collectives with the GEMMs (--tp-comm-overlap); "
     "check NVLink bandwidth with nccl-tests inside one node"},
    {"pp_comm", "pipeline transfers",
     "overlap the pipeline sends (--overlap-p2p) and check the links between stages"},
    {"cp_comm", "context-parallel exchange",
     "use fewer context-parallel ranks or keep them inside a node"},
    {"straggler", "stragglers",
     "find the slow GPUs: compare per-rank step times and replace the outliers"},
    {"recompute", "activation recompute",
     "free memory another way (sequence parallel, distributed optimizer) to recompute less"},
    {"ep_comm", "expert-parallel all-to-all",
     "keep the EP group inside the NVLink domain, or hide the dispatch and combine (shared-"
     "expert overlap, DeepEP, Megatron's --overlap-moe-expert-parallel-comm)"},
    {"moe_imbalance", "expert load imbalance",
     "balance the routing (auxiliary loss, a capacity factor) or give each EP rank more experts"},
    {"failures", "failures and restarts",
     "checkpoint more often or faster (asynchronous saves), automate restarts and keep spare "
     "nodes"},
};
enum { N_LOSSES = sizeof losses / sizeof losses[0] };

static double loss_share(const rung_t *r, int k)
{
    const double *bd = r->step.breakdown_s;
    double step = r->step.step_time_s > 0 ? r->step.step_time_s : 1;
    switch (k) {
    case 0: return bd[BD_PP_BUBBLE] / step;
    case 1: return bd[BD_DP_COMM] / step;
    case 2: return bd[BD_TP_COMM] / step;
    case 3: return bd[BD_PP_COMM] / step;
    case 4: return bd[BD_CP_COMM] / step;
    case 5: return bd[BD_STRAGGLER] / step;
    case 6: return bd[BD_RECOMPUTE] / step;
    case 7: return bd[BD_EP_COMM] / step;
    case 8: return bd[BD_MOE_IMBALANCE] / step;
    default: return 1 - r->goodput;
    }
}

/* What grew most against the first rung (or, on the first rung, the
 * largest loss). */
static void name_main_loss(rung_t *r, const rung_t *first)
{
    int best = -1;
    double best_v = -1;
    for (int k = 0; k < N_LOSSES; k++) {
        double v = loss_share(r, k) - (first && first != r ? loss_share(first, k) : 0);
        if (v > best_v) {
            best_v = v;
            best = k;
        }
    }
    if (first && first != r && best_v < 0.005) {
        /* nothing grew: name the largest loss */
        best_v = -1;
        for (int k = 0; k < N_LOSSES; k++)
            if (loss_share(r, k) > best_v) {
                best_v = loss_share(r, k);
                best = k;
            }
    }
    r->main_loss = losses[best].name;
    r->main_loss_key = losses[best].key;
    r->main_loss_share = loss_share(r, best);
}

static const char *fix_for(const char *key)
{
    for (int k = 0; k < N_LOSSES; k++)
        if (strcmp(losses[k].key, key) == 0)
            return losses[k].fix;
    return "profile one step and compare it with the simulated breakdown";
}

/* The reliability run for a layout with step time step_s at this rung:
 * the template's cluster-dependent fields refilled unless the user fixed
 * them. */
static void rung_rel_config(const ladder_input_t *in, const cluster_t *c, const layout_t *l,
                            double step_s, double tokens_per_step, rel_config_t *cfg)
{
    rel_config_t def;
    rel_config_default(&def, c, in->failures);
    *cfg = in->rel;
    cfg->cluster = c;
    cfg->failures = in->failures;
    cfg->storage_write_bps = cfg->storage_read_bps =
        in->storage_bps > 0 ? in->storage_bps : def.storage_write_bps;
    cfg->snapshot_bps = def.snapshot_bps;
    if (in->rel.spares < 0)
        cfg->spares = def.spares;
    cfg->step_time_s = step_s;
    cfg->tokens_per_step = tokens_per_step;
    cfg->target_tokens = in->tokens;
    cfg->duration_s = 0;
    cfg->ckpt_bytes = in->ckpt_bytes;
    cfg->dp = l->dp;
    cfg->progress = false;
}

/* The runners-up of a rung's search, each through its own reliability run
 * (same seed: common random numbers) for the cost/time Pareto view. */
static int rung_alternatives(const ladder_input_t *in, const cluster_t *c, const plan_search_t *ps,
                             rung_t *r, err_t *err)
{
    r->n_alt = 0;
    for (int k = 1; k < ps->n_ranked && r->n_alt < LADDER_ALTERNATIVES; k++) {
        const layout_t *l = &ps->top_layout[k];
        double tokens_per_step = (double)l->global_batch * l->seq_len;
        rel_config_t cfg;
        rung_rel_config(in, c, l, ps->top_step_s[k], tokens_per_step, &cfg);
        /* a quarter of the trials (200 where the best layout's are
         * adaptive): enough for the whiskers of a point that only sets the
         * others in context */
        cfg.trials = cfg.trials == 0        ? 200
                     : cfg.trials / 4 > 200 ? cfg.trials / 4
                     : cfg.trials < 200     ? cfg.trials
                                            : 200;
        /* and a quarter of the interruptions a run may simulate: a
         * runner-up storm of failures is priced roughly, not for seconds */
        cfg.event_budget = REL_EVENT_BUDGET / 4;
        rel_result_t rr;
        int rc = rel_simulate(&cfg, &rr, err);
        if (rc && rr.unfinished > 0)
            continue; /* a runner-up that never finishes is no alternative */
        if (rc)
            return rc;
        rung_alt_t *a = &r->alt[r->n_alt++];
        a->layout = *l;
        snprintf(a->framework, sizeof a->framework, "%s", ps->top_framework[k]);
        a->step_time_s = ps->top_step_s[k];
        a->days_p10 = rr.wall_s_p10 / 86400;
        a->days_p50 = rr.wall_s_p50 / 86400;
        a->days_p90 = rr.wall_s_p90 / 86400;
        a->cost_usd = r->gpus * rr.wall_s_p50 / 3600 * r->usd_per_gpu_hour;
    }
    return ERR_OK;
}

/* The rung's GPU-hour price: its size's quote where the input asks for
 * per-rung prices and the catalog has one, else the input's price. */
static void rung_price(const ladder_input_t *in, rung_t *r)
{
    r->usd_per_gpu_hour = in->usd_per_gpu_hour;
    snprintf(r->price_provider, sizeof r->price_provider, "given");
    if (!in->price_gpu[0])
        return;
    price_t q;
    err_t ignore;
    int rc = in->price_provider[0]
                 ? price_find(in->price_gpu, in->price_provider, NULL, r->gpus, &q, &ignore)
                 : price_default_for_gpu(in->price_gpu, r->gpus, &q, &ignore);
    if (rc == 0) {
        r->usd_per_gpu_hour = price_usd(&q, in->price_end);
        snprintf(r->price_provider, sizeof r->price_provider, "%s", q.provider);
    }
}

static int run_rung(const ladder_input_t *in, rung_t *r, err_t *err)
{
    rung_price(in, r);
    cluster_t c = *in->base;
    c.n_gpus = r->gpus;
    plan_search_t ps;
    int rc = plan_search(in->model, &c, in->profile, &in->space, NULL, &ps, err);
    if (rc)
        return rc;
    r->candidates = ps.candidates;
    r->simulated = ps.simulated;
    memcpy(r->pruned, ps.pruned, sizeof r->pruned);
    r->search_s = ps.elapsed_s;
    r->leanest_gib = ps.smallest_memory_gib;
    if (!ps.found) {
        if (ps.constraint_note[0])
            snprintf(r->why_not, sizeof r->why_not, "%s", ps.constraint_note);
        else if (ps.candidates == 0 || ps.pruned[PRUNE_INVALID] == ps.candidates)
            snprintf(r->why_not, sizeof r->why_not,
                     "no valid layout (the global batch or the model's shape does not split "
                     "over %d GPUs)",
                     r->gpus);
        else if (ps.pruned[PRUNE_SIZE] > 0)
            snprintf(r->why_not, sizeof r->why_not,
                     "every layout that fits has more micro-batches per step than the "
                     "simulator takes (%ld passes); use a smaller global batch",
                     SIM_MAX_TASKS);
        else
            snprintf(r->why_not, sizeof r->why_not,
                     "does not fit: the leanest layout needs %.1f GiB per GPU of %.1f",
                     ps.smallest_memory_gib, c.gpu.memory_gib);
        return ERR_OK;
    }
    /* the whole run: failures, checkpoints, restarts */
    rel_config_t cfg;
    rung_rel_config(in, &c, &ps.layout, ps.result.step_time_s, ps.result.tokens_per_step, &cfg);
    rel_result_t rr;
    if ((rc = rel_simulate(&cfg, &rr, err))) {
        if (rr.unfinished == 0)
            return rc;
        /* the fastest layout runs, but the run never ends at this scale */
        char a[32], b[32];
        if (rr.interrupted_out)
            snprintf(r->why_not, sizeof r->why_not,
                     "never finishes: an interruption every %s, a restart takes %s",
                     units_fmt_duration(rr.mtbf_s, a, sizeof a),
                     units_fmt_duration(rr.restart_mean_s, b, sizeof b));
        else
            snprintf(r->why_not, sizeof r->why_not,
                     "never finishes: interruptions undo the work between checkpoints "
                     "(--checkpoint-every %s)",
                     units_fmt_duration(rr.ckpt_interval_s, a, sizeof a));
        err_clear(err);
        return ERR_OK;
    }
    r->feasible = true;
    r->layout = ps.layout;
    snprintf(r->framework, sizeof r->framework, "%s", ps.framework);
    r->moe = ps.moe;
    r->n_frameworks = ps.n_frameworks;
    memcpy(r->frameworks, ps.per_framework, sizeof r->frameworks);
    r->step = ps.result;
    r->tokens_per_s = ps.result.tokens_per_s;
    r->days_p10 = rr.wall_s_p10 / 86400;
    r->days_p50 = rr.wall_s_p50 / 86400;
    r->days_p90 = rr.wall_s_p90 / 86400;
    r->ideal_days = in->tokens / ps.result.tokens_per_step * ps.result.step_time_s / 86400;
    r->goodput = rr.goodput_mean;
    r->checkpoint_interval_s = rr.ckpt_interval_s;
    r->interval_best = rr.interval_best;
    r->interruptions = rr.interruptions_mean;
    r->gpu_hours = r->gpus * rr.wall_s_p50 / 3600;
    r->cost_usd = r->gpu_hours * r->usd_per_gpu_hour;
    r->cost_per_day_usd = r->gpus * 24.0 * r->usd_per_gpu_hour;
    return rung_alternatives(in, &c, &ps, r, err);
}

int ladder_rung_detail(const ladder_input_t *in, const rung_t *r, rung_detail_t *d, err_t *err)
{
    memset(d, 0, sizeof *d);
    if (!r->feasible)
        return err_set(err, ERR_INPUT, "no layout fits at %d GPUs: nothing to detail", r->gpus);
    cluster_t c = *in->base;
    c.n_gpus = r->gpus;
    rel_config_t cfg;
    rung_rel_config(in, &c, &r->layout, r->step.step_time_s, r->step.tokens_per_step, &cfg);
    rel_result_t rr;
    int rc = rel_simulate(&cfg, &rr, err);
    if (rc)
        return rc;
    double lo, hi;
    rel_sweep_bounds(&rr, &lo, &hi);
    d->n_sweep = LADDER_SWEEP_POINTS;
    d->checkpoint_interval_s = cfg.ckpt_interval_s;
    d->young_daly_interval_s = rr.young_daly_s;
    if ((rc = rel_best_interval(&cfg, lo, hi, d->n_sweep, d->interval_s, d->goodput,
                                &d->optimal_interval_s, err)))
        return rc;
    /* the step again, to read its timeline back */
    sim_options_t opt;
    if ((rc = plan_options(&in->space, r->framework, c.gpu.name, in->model->name,
                           r->layout.precision, &r->moe, &opt, err)))
        return rc;
    sim_ctx_t *ctx = sim_ctx_create();
    if (!ctx)
        return err_set(err, ERR_RUNTIME, "out of memory");
    sim_input_t si = {in->model, &r->layout, &c, in->profile, opt};
    sim_result_t res;
    rc = sim_run_step(ctx, &si, &res, err);
    if (!rc)
        rc = sim_timeline(ctx, &d->timeline, &d->n_events, err);
    sim_ctx_destroy(ctx);
    return rc;
}

void ladder_rung_detail_free(rung_detail_t *d)
{
    free(d->timeline);
    d->timeline = NULL;
    d->n_events = 0;
}

static bool meets(const ladder_input_t *in, const rung_t *r)
{
    return r->feasible && (in->deadline_s <= 0 || r->days_p50 * 86400 <= in->deadline_s) &&
           (in->budget_usd <= 0 || r->cost_usd <= in->budget_usd);
}

/* Is a better than b for the objective? */
static bool preferred(const ladder_input_t *in, const rung_t *a, const rung_t *b)
{
    if (in->objective == PLAN_TIME)
        return a->days_p50 < b->days_p50 * (1 - 1e-9) ||
               (fabs(a->days_p50 - b->days_p50) <= 1e-9 * b->days_p50 && a->cost_usd < b->cost_usd);
    return a->cost_usd < b->cost_usd * (1 - 1e-9) ||
           (fabs(a->cost_usd - b->cost_usd) <= 1e-9 * b->cost_usd && a->days_p50 < b->days_p50);
}

double ladder_default_tokens(const model_t *m)
{
    model_params_t p;
    model_params(m, &p);
    return LADDER_TOKENS_PER_PARAM * p.total;
}

void ladder_input_defaults(ladder_input_t *in, const model_t *m)
{
    plan_space_default(&in->space);
    in->space.seq_len = m->max_seq < 8192 ? m->max_seq : 8192;
    int gb = scenario_batch_for_tokens(SCENARIO_DEFAULT_BATCH_TOKENS, in->space.seq_len);
    in->space.global_batch_min = in->space.global_batch_max = gb;
    in->objective = PLAN_TIME;
    in->min_marginal = 0.5;
    in->min_gpus = 8;
    in->max_gpus = 4096;
    in->rel.trials = 0;   /* adaptive: until P50/P90 are within the tolerance */
    in->rel.spares = -1;  /* per rung: 2% of its nodes */
}

int ladder_fastest_layout(scenario_t *s, int global_batch, plan_search_t *out, err_t *err)
{
    plan_space_t space;
    plan_space_default(&space);
    space.seq_len = s->layout.seq_len;
    space.framework = s->fw.name; /* the scenario's options are this preset's ... */
    space.keep_moe_options = true; /* ... its dispatcher and scopes the run's */
    space.adjust_options = plan_use_options; /* ... with the user's switches */
    space.adjust_ctx = &s->opt;
    space.precision = s->layout.precision;
    if (!global_batch)
        global_batch = scenario_batch_for_tokens(SCENARIO_DEFAULT_BATCH_TOKENS, space.seq_len);
    space.global_batch_min = space.global_batch_max = global_batch;
    int rc = plan_search(&s->model, &s->cluster, &s->profile, &space, NULL, out, err);
    if (rc)
        return rc;
    if (!out->found && out->pruned[PRUNE_SIZE] > 0)
        return err_setf(err, ERR_INPUT, NULL, "--global-batch",
                        "every layout of %s that fits on %d x %s has more micro-batches per "
                        "step than the simulator takes (%ld passes); use a smaller global batch",
                        s->model.name, s->cluster.n_gpus, s->cluster.gpu.name, SIM_MAX_TASKS);
    /* (a framework that shards nothing and splits nothing fits no better
     * on more GPUs) */
    bool shards = fw_caps_shards(&s->fw.caps);
    if (!out->found)
        return err_setf(err, ERR_INPUT, NULL, "--gpus",
                        "no layout of %s fits on %d x %s (the smallest needs %.1f GiB per "
                        "GPU of %.1f); %s",
                        s->model.name, s->cluster.n_gpus, s->cluster.gpu.name,
                        out->smallest_memory_gib, s->cluster.gpu.memory_gib,
                        shards ? "use more GPUs or GPUs with more memory"
                               : "the framework keeps the whole model on every GPU: use GPUs "
                                 "with more memory or a framework that shards it");
    s->layout = out->layout;
    return ERR_OK;
}

int plan_ladder(const ladder_input_t *in, ladder_t *out, err_t *err)
{
    memset(out, 0, sizeof *out);
    out->best = out->first_feasible = out->stops_paying_at = -1;
    if (in->min_gpus < 1 || in->max_gpus < in->min_gpus)
        return err_setf(err, ERR_INPUT, NULL, "--min-gpus",
                        "the ladder needs 1 <= --min-gpus <= --max-gpus (got %d and %d)",
                        in->min_gpus, in->max_gpus);
    double t0 = clock_now_s();
    int n = 0;
    for (long g = in->min_gpus; g <= in->max_gpus && n < LADDER_MAX_RUNGS; g *= 2)
        out->rung[n++].gpus = (int)g;
    out->n = n;
    progress_t *bar = in->progress ? progress_create("planning", n) : NULL;
    int rc = ERR_OK;
    for (int i = 0; i < n && !rc; i++) {
        rc = run_rung(in, &out->rung[i], err);
        out->layouts += out->rung[i].candidates;
        out->simulated += out->rung[i].simulated;
        progress_update(bar, i + 1);
    }
    progress_destroy(bar);
    if (rc)
        return rc;
    const rung_t *first = NULL;
    const rung_t *prev = NULL;
    const rung_t *base = NULL; /* best per-GPU throughput so far */
    for (int i = 0; i < n; i++) {
        rung_t *r = &out->rung[i];
        if (!r->feasible)
            continue;
        if (!first) {
            first = r;
            out->first_feasible = i;
        }
        /* against the best per-GPU rate at any smaller rung: a first rung
         * squeezed by memory (full recompute) does not inflate the rest */
        const rung_t *b = base ? base : r;
        r->scaling_efficiency = (r->tokens_per_s / r->gpus) / (b->tokens_per_s / b->gpus);
        r->scaling_base = b->gpus;
        if (!base || r->tokens_per_s / r->gpus > base->tokens_per_s / base->gpus)
            base = r;
        if (prev) {
            /* speed-up relative to the extra GPUs: 1 = linear */
            double speedup = r->tokens_per_s / prev->tokens_per_s - 1;
            double more = (double)r->gpus / prev->gpus - 1;
            r->marginal = speedup / more;
            r->stops_paying = r->marginal < in->min_marginal;
            if (r->stops_paying && out->stops_paying_at < 0)
                out->stops_paying_at = i;
        } else {
            r->marginal = 1;
        }
        name_main_loss(r, first);
        prev = r;
    }
    /* the recommendation: the best rung under the constraints, else the
     * nearest (fastest for a deadline, cheapest for a budget) */
    for (int i = 0; i < n; i++) {
        const rung_t *r = &out->rung[i];
        if (!meets(in, r))
            continue;
        if (out->best < 0 || preferred(in, r, &out->rung[out->best]))
            out->best = i;
    }
    out->meets_constraints = out->best >= 0;
    if (out->best < 0) {
        for (int i = 0; i < n; i++) {
            const rung_t *r = &out->rung[i];
            if (!r->feasible)
                continue;
            if (out->best < 0)
                out->best = i;
            const rung_t *b = &out->rung[out->best];
            bool nearer = in->deadline_s > 0 ? r->days_p50 < b->days_p50 : r->cost_usd < b->cost_usd;
            if (nearer)
                out->best = i;
        }
    }
    out->elapsed_s = clock_now_s() - t0;
    return ERR_OK;
}

/* The constraints no feasible rung meets, as "the 1.0-day deadline (the
 * fastest plan takes 21.3 days) and the $1,000 budget (...)"; "" when
 * every constraint is met. */
static void broken_constraints(const ladder_input_t *in, const ladder_t *l, char *buf, size_t cap)
{
    buf[0] = '\0';
    double fastest = INFINITY, cheapest = INFINITY, cheapest_in_time = INFINITY;
    for (int i = 0; i < l->n; i++) {
        const rung_t *r = &l->rung[i];
        if (!r->feasible)
            continue;
        fastest = fmin(fastest, r->days_p50);
        cheapest = fmin(cheapest, r->cost_usd);
        if (in->deadline_s <= 0 || r->days_p50 * 86400 <= in->deadline_s)
            cheapest_in_time = fmin(cheapest_in_time, r->cost_usd);
    }
    if (l->meets_constraints || !isfinite(fastest))
        return;
    char a[32], b[32];
    bool late = in->deadline_s > 0 && fastest * 86400 > in->deadline_s;
    bool dear = in->budget_usd > 0 && cheapest > in->budget_usd;
    int n = 0;
    if (late)
        n += snprintf(buf + n, cap - (size_t)n, "the %.1f-day deadline (the fastest plan takes "
                      "%.1f days)", in->deadline_s / 86400, fastest);
    if (dear && n >= 0 && (size_t)n < cap)
        n += snprintf(buf + n, cap - (size_t)n, "%sthe %s budget (the cheapest plan costs %s)",
                      late ? " and " : "", units_fmt_usd(in->budget_usd, a, sizeof a),
                      units_fmt_usd(cheapest, b, sizeof b));
    if (!late && !dear && n >= 0 && (size_t)n < cap)
        snprintf(buf + n, cap - (size_t)n,
                 "the %.1f-day deadline and the %s budget together (the cheapest plan within "
                 "the deadline costs %s)",
                 in->deadline_s / 86400, units_fmt_usd(in->budget_usd, a, sizeof a),
                 units_fmt_usd(cheapest_in_time, b, sizeof b));
}

/* The recommendation when no GPU count can train the model: why (the
 * last rung's reason) and what to change: fewer GPUs or a steadier run
 * when failures outrun it, the constraint that rules every rung out, more
 * memory for a framework that does not shard, or about how many GPUs the
 * sharded state needs. */
static void recommend_none(const ladder_input_t *in, const ladder_t *l, char *buf, size_t cap)
{
    const rung_t *last = &l->rung[l->n - 1];
    if (strncmp(last->why_not, "never finishes", 14) == 0) {
        /* restarts outrun by failures want fewer GPUs or a steadier
         * environment; lost work between checkpoints wants checkpoints */
        bool restarts = strstr(last->why_not, "a restart takes") != NULL;
        snprintf(buf, cap, "No GPU count from %d to %d can train %s: the run %s. %s",
                 in->min_gpus, in->max_gpus, in->model->name, last->why_not,
                 restarts ? "Use fewer GPUs (a lower --min-gpus), a steadier --environment, no "
                            "--spot, or a faster restart (--restart-overhead)."
                          : "Checkpoint more often (--checkpoint-every) or to faster "
                            "storage (--storage-bw).");
        return;
    }
    if (strncmp(last->why_not, "--", 2) == 0 ||
        strncmp(last->why_not, "the recompute modes", 19) == 0) {
        snprintf(buf, cap, "No GPU count from %d to %d can train %s under the constraints: "
                           "%s. Relax that constraint.",
                 in->min_gpus, in->max_gpus, in->model->name, last->why_not);
        return;
    }
    /* a framework that keeps the whole model on every GPU (PyTorch
     * DDP: no sharding, tensor or pipeline parallelism) fits no better
     * on more of them */
    fw_preset_t fw;
    err_t ignore;
    if (in->space.framework && fw_load(in->space.framework, &fw, &ignore) == 0 &&
        !fw_caps_shards(&fw.caps)) {
        snprintf(buf, cap,
                 "No GPU count from %d to %d can train %s: %s. %s keeps the whole model "
                 "and its optimizer state on every GPU, so more GPUs do not help: use GPUs "
                 "with more memory, or a framework that shards the model (drop "
                 "--framework to search them).",
                 in->min_gpus, in->max_gpus, in->model->name, last->why_not, fw.name);
        return;
    }
    /* sharded state shrinks with the GPU count: estimate where it fits */
    double cap_gib = in->base->gpu.memory_gib;
    long need = last->gpus;
    if (isfinite(last->leanest_gib) && last->leanest_gib > cap_gib)
        while (need < (1L << 24) && (double)last->gpus * last->leanest_gib / need > 0.9 * cap_gib)
            need *= 2;
    snprintf(buf, cap,
             "No GPU count from %d to %d can train %s: %s. It needs about %ld GPUs or more "
             "(raise --max-gpus), GPUs with more memory, or a smaller global batch.",
             in->min_gpus, in->max_gpus, in->model->name, last->why_not, need);
}

void plan_recommend(const ladder_input_t *in, const ladder_t *l, char *buf, size_t cap)
{
    char d[200], a[32], b[32], c[32], e[32];
    if (l->best < 0) {
        recommend_none(in, l, buf, cap);
        return;
    }
    const rung_t *r = &l->rung[l->best];
    layout_text_format(&r->layout, d, sizeof d);
    if (in->space.seq_len_max > in->space.seq_len) /* the length was searched too */
        snprintf(d + strlen(d), sizeof d - strlen(d), " seq %d", r->layout.seq_len);
    /* broken constraints first: the plan below is only the nearest */
    char broken[400];
    broken_constraints(in, l, broken, sizeof broken);
    int n = 0;
    if (broken[0])
        n = snprintf(buf, cap, "No plan meets %s. The nearest: ", broken);
    if (n >= 0 && (size_t)n < cap)
        n += snprintf(buf + n, cap - (size_t)n,
                      "Reserve %d x %s with layout %s under %s: it should train %s tokens in "
                      "%.1f days (P50; P90 %.1f) for %s at %s/day, %.0f%% MFU.",
                      r->gpus, in->base->gpu.name, d, r->framework,
                      units_fmt_count(in->tokens, a, sizeof a),
                      r->days_p50, r->days_p90, units_fmt_usd(r->cost_usd, b, sizeof b),
                      units_fmt_usd(r->cost_per_day_usd, c, sizeof c), 100 * r->step.mfu);
    if (!l->meets_constraints && n > 0 && (size_t)n < cap) {
        if (in->deadline_s > 0 && r->days_p50 * 86400 > in->deadline_s) {
            /* what the deadline would take on these GPUs */
            model_flops_t f;
            model_flops(in->model, r->layout.seq_len, &f);
            const gpu_t *g = &in->base->gpu;
            double peak = g->peak_tflops[DTYPE_BF16] > 0 ? g->peak_tflops[DTYPE_BF16]
                                                          : g->peak_tflops[DTYPE_FP16];
            double need = f.model_per_token * in->tokens /
                          ((double)r->gpus * in->deadline_s * peak * 1e12);
            n += snprintf(buf + n, cap - (size_t)n,
                          " It is %.1f days over the deadline; finishing in %.1f days on %d GPUs "
                          "would need %.0f%% MFU%s.",
                          r->days_p50 - in->deadline_s / 86400, in->deadline_s / 86400, r->gpus,
                          100 * need,
                          need > 1 ? ", more than the GPUs' peak, so no layout can do it; it "
                                     "takes more GPUs"
                                   : "");
        }
        if (in->budget_usd > 0 && r->cost_usd > in->budget_usd && n > 0 && (size_t)n < cap)
            n += snprintf(buf + n, cap - (size_t)n, " It is %s over the budget.",
                          units_fmt_usd(r->cost_usd - in->budget_usd, b, sizeof b));
    } else if (l->stops_paying_at >= 0 && n > 0 && (size_t)n < cap) {
        const rung_t *s = &l->rung[l->stops_paying_at];
        n += snprintf(buf + n, cap - (size_t)n,
                      " Beyond %d GPUs a doubling adds only %.0f%% of linear speed (%s grows).",
                      l->rung[l->stops_paying_at - 1 >= 0 ? l->stops_paying_at - 1 : 0].gpus,
                      100 * s->marginal, s->main_loss);
    }
    /* which framework wins, and by how much */
    if (r->n_frameworks > 1 && n > 0 && (size_t)n < cap) {
        char win[FW_NAME_MAX + 112] = "", name[FW_NAME_MAX + 112];
        int best = plan_fw_index(r->frameworks, r->n_frameworks, r->framework, r->layout.precision);
        if (best >= 0)
            plan_fw_label(&r->frameworks[best], r->frameworks, r->n_frameworks, win, sizeof win);
        bool vary = false; /* (the label also names a searched dispatcher) */
        for (int i = 1; i < r->n_frameworks; i++)
            vary = vary || r->frameworks[i].precision != r->frameworks[0].precision;
        n += snprintf(buf + n, cap - (size_t)n, " Of the %d %s searched, %s is fastest here",
                      r->n_frameworks, vary ? "frameworks and precisions" : "frameworks",
                      win[0] ? win : r->framework);
        for (int i = 0; i < r->n_frameworks && n > 0 && (size_t)n < cap; i++) {
            const plan_fw_best_t *f = &r->frameworks[i];
            if (i == best)
                continue;
            plan_fw_label(f, r->frameworks, r->n_frameworks, name, sizeof name);
            if (f->found)
                n += snprintf(buf + n, cap - (size_t)n, "; %s %.1f%% slower", name,
                              100 * (1 - f->tokens_per_s / r->tokens_per_s));
            else
                n += snprintf(buf + n, cap - (size_t)n, "; %s: nothing fits", name);
        }
        if (n > 0 && (size_t)n < cap)
            n += snprintf(buf + n, cap - (size_t)n, ".");
    }
    /* measure at each doubling before committing to the next */
    if (n > 0 && (size_t)n < cap && l->first_feasible >= 0) {
        n += snprintf(buf + n, cap - (size_t)n, " Before each doubling, measure:");
        for (int i = l->first_feasible; i <= l->best && n > 0 && (size_t)n < cap; i++) {
            const rung_t *x = &l->rung[i];
            if (!x->feasible)
                continue;
            n += snprintf(buf + n, cap - (size_t)n, " %d GPUs %s per step, %s tokens/s%s", x->gpus,
                          units_fmt_duration(x->step.step_time_s, a, sizeof a),
                          units_fmt_count(x->tokens_per_s, e, sizeof e), i < l->best ? ";" : "");
        }
        if (n > 0 && (size_t)n < cap)
            n += snprintf(buf + n, cap - (size_t)n,
                          " (more than %.0f%% slower means something is wrong).",
                          100 * LADDER_TOLERANCE);
    }
    if (n > 0 && (size_t)n < cap)
        snprintf(buf + n, cap - (size_t)n, " If a rung falls short, first look at %s: %s.",
                 r->main_loss, fix_for(r->main_loss_key));
}
