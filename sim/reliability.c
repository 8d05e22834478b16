#include "sim/reliability.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_randist.h>
#include <gsl/gsl_sf_gamma.h>

#include "common/progress.h"
#include "common/units.h"
#include "common/rng.h"

#ifdef _OPENMP
#include <omp.h>
#endif

void rel_config_default(rel_config_t *cfg, const cluster_t *c, const failure_set_t *f)
{
    memset(cfg, 0, sizeof *cfg);
    cfg->cluster = c;
    cfg->failures = f;
    cfg->dp = 1;
    /* Planning guides checkpoint every 30-60 minutes (DESIGN.md). */
    cfg->ckpt_interval_s = 1800;
    double nodes = c->n_gpus > 0 ? cluster_nodes(c) : 1;
    cfg->storage_write_bps = c->storage_gbs_per_node * 1e9 * nodes;
    cfg->storage_read_bps = cfg->storage_write_bps;
    cfg->ckpt_mode = CKPT_SYNC;
    /* Device-to-host snapshot: about 65% of a PCIe x16 link per GPU (~31 GB/s
     * gen4, ~63 GB/s gen5 per direction, collectives.csv C151-C152). */
    double pcie = c->gpu.pcie_gen >= 5 ? 63e9 : 31e9;
    cfg->snapshot_bps = 0.65 * pcie * (c->n_gpus > 0 ? c->n_gpus : 1);
    /* Restart overhead 5-20 minutes in Meta's model of large jobs
     * (failures.csv F039); the middle is used. */
    cfg->restart_overhead_s = 600;
    /* Assumed: with a hot spare left, the scheduler takes it as part of the
     * restart (no extra wait); a node repair (or RMA) takes a day; 2% of
     * the nodes are kept as spares. */
    cfg->replace_s = 0;
    cfg->repair_s = 86400;
    cfg->spares = (int)ceil(0.02 * cluster_hosts(c));
    if (cfg->spares < 1)
        cfg->spares = 1;
    cfg->policy = REPAIR_POLICY_SPARES;
    cfg->preempt_wait_s = 1800;
    cfg->trials = 2000;
    cfg->seed = RNG_DEFAULT_SEED;
}

double rel_class_rate(const failure_class_t *f, const cluster_t *c)
{
    return failure_job_rate_per_hour(f, c) / 3600.0;
}

int rel_validate(const rel_config_t *cfg, err_t *err)
{
    if (!cfg->cluster || !cfg->failures)
        return err_set(err, ERR_RUNTIME, "reliability: no cluster or failure set");
    if (!(cfg->step_time_s > 0) || !isfinite(cfg->step_time_s))
        return err_setf(err, ERR_INPUT, NULL, "--step-time",
                        "must be a positive duration (got %g s)", cfg->step_time_s);
    if (!(cfg->tokens_per_step > 0))
        return err_setf(err, ERR_INPUT, NULL, "--global-batch",
                        "tokens per step must be positive");
    if (!(cfg->target_tokens > 0) && !(cfg->duration_s > 0))
        return err_setf(err, ERR_INPUT, NULL, "--tokens",
                        "say how long the run is: --tokens 2T or --days 54");
    if (cfg->target_tokens > 0 && cfg->target_tokens / cfg->tokens_per_step * cfg->step_time_s >
                                      3.15e9)
        return err_setf(err, ERR_INPUT, NULL, "--tokens",
                        "the run would take over a century of compute (%.3g steps of %.3g s)",
                        cfg->target_tokens / cfg->tokens_per_step, cfg->step_time_s);
    if (!(cfg->ckpt_interval_s > 0))
        return err_setf(err, ERR_INPUT, NULL, "--checkpoint-every",
                        "must be a positive duration (got %g s)", cfg->ckpt_interval_s);
    if (!(cfg->storage_write_bps > 0) || !(cfg->storage_read_bps > 0))
        return err_setf(err, ERR_INPUT, NULL, "--storage-bw",
                        "checkpoint storage bandwidth must be greater than zero");
    if (cfg->ckpt_mode == CKPT_ASYNC && !(cfg->snapshot_bps > 0))
        return err_setf(err, ERR_INPUT, NULL, "--snapshot-bw",
                        "must be greater than zero for asynchronous checkpoints");
    if (cfg->ckpt_bytes < 0 || cfg->restart_overhead_s < 0 || cfg->replace_s < 0 ||
        cfg->repair_s < 0 || cfg->spares < 0 || cfg->preempt_per_node_hour < 0 ||
        cfg->preempt_wait_s < 0)
        return err_set(err, ERR_INPUT,
                       "checkpoint size, restart times, spares and preemption rate must not be "
                       "negative");
    if (cfg->trials < 1 || cfg->trials > 10000000)
        return err_setf(err, ERR_INPUT, NULL, "--trials", "must be from 1 to 10000000 (got %d)",
                        cfg->trials);
    if (cfg->dp < 1)
        return err_setf(err, ERR_INPUT, NULL, "--dp", "must be at least 1");
    for (int i = 0; i < cfg->failures->n_classes; i++)
        if (!(cfg->failures->classes[i].rate_per_component_hour >= 0))
            return err_setf(err, ERR_INPUT, cfg->failures->name, cfg->failures->classes[i].name,
                            "failure rate must not be negative");
    return ERR_OK;
}

/* ------------------------------------------------------------ one trial */

typedef struct {
    int n;                       /* classes incl. preemption */
    double rate[REL_MAX_CLASSES];  /* per second of up-time */
    double shape[REL_MAX_CLASSES]; /* Weibull shape; 1 = exponential */
    double scale[REL_MAX_CLASSES]; /* Weibull scale for the rate's mean */
    double detect[REL_MAX_CLASSES];
    int kind[REL_MAX_CLASSES];     /* 0 replace node, 1 reschedule, 2 preemption */
    bool unexpected[REL_MAX_CLASSES];
    double save_block, save_write, load, interval, cycle, work_per_cycle;
} plan_t;

typedef struct {
    double wall, useful, lost, ckpt, restart, tokens;
    int count[REL_MAX_CLASSES];
} trial_t;

static double draw(const plan_t *p, int c, gsl_rng *r)
{
    if (p->shape[c] == 1.0)
        return gsl_ran_exponential(r, 1.0 / p->rate[c]);
    return gsl_ran_weibull(r, p->scale[c], p->shape[c]);
}

/* Wait for a replacement node under the policy; updates the pool of nodes
 * in repair (return times, wall clock). Returns the seconds waited. */
static double replacement_wait(const rel_config_t *cfg, double now, double *returns,
                               int *n_returns, int *spares_left)
{
    /* nodes whose repair finished go back into the spare pool */
    for (int i = 0; i < *n_returns;) {
        if (returns[i] <= now) {
            returns[i] = returns[--(*n_returns)];
            (*spares_left)++;
        } else {
            i++;
        }
    }
    if (cfg->policy == REPAIR_POLICY_WAIT)
        return cfg->repair_s;
    double wait = cfg->replace_s;
    if (*spares_left == 0) {
        /* none left: the earliest repair comes back first */
        int first = 0;
        for (int i = 1; i < *n_returns; i++)
            if (returns[i] < returns[first])
                first = i;
        if (*n_returns > 0) {
            wait += returns[first] - now;
            returns[first] = returns[--(*n_returns)];
        } else {
            wait += cfg->repair_s;
        }
    } else {
        (*spares_left)--;
    }
    if (*n_returns < 4096)
        returns[(*n_returns)++] = now + wait + cfg->repair_s;
    return wait;
}

/* One trial; false when it had not finished within REL_MAX_WALL_S (or
 * an absurd number of interruptions), its figures then meaningless. */
static bool run_trial(const rel_config_t *cfg, const plan_t *p, gsl_rng *r, double *returns,
                      trial_t *t)
{
    memset(t, 0, sizeof *t);
    double next[REL_MAX_CLASSES];
    double up = 0; /* job up-time: failure clocks run only while it runs */
    for (int c = 0; c < p->n; c++)
        next[c] = p->rate[c] > 0 ? draw(p, c, r) : INFINITY;
    double W = cfg->target_tokens > 0
                   ? cfg->target_tokens / cfg->tokens_per_step * cfg->step_time_s
                   : INFINITY; /* full-speed compute seconds to finish */
    double committed = 0;      /* compute seconds safe in a checkpoint */
    double limit = cfg->duration_s > 0 ? cfg->duration_s : INFINITY;
    int spares = cfg->spares, n_returns = 0;
    int down_replicas = 0;
    double *elastic_back = returns + 4096; /* repair times of missing replicas */
    int n_back = 0;
    bool finished = false;
    for (long guard = 0; guard < 10000000L; guard++) {
        int c = 0;
        for (int k = 1; k < p->n; k++)
            if (next[k] < next[c])
                c = k;
        double D = next[c] - up;  /* up-time until the next failure */
        if (t->wall + D > limit)
            D = limit - t->wall;
        /* elastic: fewer replicas do proportionally less work */
        double f = cfg->dp > 0 ? (double)(cfg->dp - down_replicas) / cfg->dp : 1.0;
        double wpc = p->work_per_cycle * f;
        double need = W - committed;
        if (isfinite(need)) {
            /* checkpoint cycles to go, the last one partial; at least one
             * (an interval longer than the run: no periodic checkpoint) */
            double k_need = fmax(1, ceil(need / wpc - 1e-12));
            double finish = (k_need - 1) * p->cycle + (need - (k_need - 1) * wpc) / f +
                            p->save_write;
            if (finish <= D) {
                t->wall += finish;
                t->ckpt += (k_need - 1) * p->save_block + p->save_write;
                committed = W;
                finished = true;
                break;
            }
        }
        double n = floor(D / p->cycle);
        double durable = n;
        if (p->save_write > p->save_block) /* async: writes finish later */
            durable = fmax(0, fmin(n, floor((D - (p->save_write - p->save_block)) / p->cycle)));
        committed += durable * wpc;
        t->ckpt += n * p->save_block;
        t->lost += D - n * p->save_block - durable * p->interval;
        t->wall += D;
        up += D;
        if (t->wall >= limit) {
            finished = true;
            break;
        }
        if (t->wall > REL_MAX_WALL_S)
            break; /* never finishes */
        /* the failure */
        t->count[c]++;
        double down = p->detect[c] + cfg->restart_overhead_s + p->load;
        if (p->kind[c] == 0) {
            if (cfg->policy == REPAIR_POLICY_ELASTIC && cfg->dp - down_replicas > 1) {
                down_replicas++;
                if (n_back < 4096)
                    elastic_back[n_back++] = t->wall + cfg->repair_s;
            } else {
                down += replacement_wait(cfg, t->wall + p->detect[c], returns, &n_returns,
                                         &spares);
            }
        } else if (p->kind[c] == 2) {
            down += cfg->preempt_wait_s;
        }
        if (t->wall + down > limit)
            down = limit - t->wall;
        t->wall += down;
        t->restart += down;
        /* repaired replicas rejoin at the restart */
        for (int i = 0; i < n_back;) {
            if (elastic_back[i] <= t->wall) {
                elastic_back[i] = elastic_back[--n_back];
                down_replicas--;
            } else {
                i++;
            }
        }
        next[c] = up + draw(p, c, r);
        if (t->wall >= limit) {
            finished = true;
            break;
        }
    }
    t->useful = committed;
    t->tokens = committed / cfg->step_time_s * cfg->tokens_per_step;
    return finished;
}

static void make_plan(const rel_config_t *cfg, plan_t *p)
{
    memset(p, 0, sizeof *p);
    const failure_set_t *fs = cfg->failures;
    for (int i = 0; i < fs->n_classes && p->n < REL_MAX_CLASSES - 1; i++) {
        const failure_class_t *f = &fs->classes[i];
        int c = p->n++;
        p->rate[c] = rel_class_rate(f, cfg->cluster);
        p->shape[c] = f->weibull ? f->weibull_shape : 1.0;
        /* Weibull scale with the class's mean time between failures. */
        p->scale[c] = p->rate[c] > 0 ? 1.0 / p->rate[c] / gsl_sf_gamma(1 + 1 / p->shape[c]) : 0;
        p->detect[c] = f->detect_s;
        p->kind[c] = f->repair == REPAIR_RESCHEDULE ? 1 : 0;
        p->unexpected[c] = f->unexpected;
    }
    if (cfg->preempt_per_node_hour > 0) {
        int c = p->n++;
        p->rate[c] = cfg->preempt_per_node_hour * cluster_hosts(cfg->cluster) / 3600.0;
        p->shape[c] = 1;
        p->kind[c] = 2;
        p->unexpected[c] = true;
    }
    double write = cfg->ckpt_bytes / cfg->storage_write_bps;
    p->save_write = write;
    p->save_block = cfg->ckpt_mode == CKPT_ASYNC ? cfg->ckpt_bytes / cfg->snapshot_bps : write;
    if (p->save_block > p->save_write)
        p->save_block = p->save_write;
    p->load = cfg->ckpt_bytes / cfg->storage_read_bps;
    /* An async write must finish before the next snapshot starts: the
     * interval stretches to the write time when that is longer. */
    p->interval = cfg->ckpt_interval_s;
    if (cfg->ckpt_mode == CKPT_ASYNC && p->save_write - p->save_block > p->interval)
        p->interval = p->save_write - p->save_block;
    p->cycle = p->interval + p->save_block;
    p->work_per_cycle = p->interval;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Run the trials; fills per-trial results. Once one trial has not
 * finished the rest are skipped (the run is refused anyway); *unfinished
 * counts those that did not finish (> 0 exactly when one did not). */
static int run_trials(const rel_config_t *cfg, const plan_t *p, trial_t *trials, int *unfinished,
                      err_t *err)
{
    int failed = 0, stop = 0, count = 0;
    progress_t *bar = cfg->progress ? progress_create("reliability", cfg->trials) : NULL;
    long done = 0;
#pragma omp parallel
    {
        err_t local;
        gsl_rng *r = rng_create(cfg->seed, 0, &local);
        double *returns = malloc(2 * 4096 * sizeof *returns);
        if (!r || !returns) {
#pragma omp atomic write
            failed = 1;
        }
#pragma omp for schedule(static)
        for (int i = 0; i < cfg->trials; i++) {
            int halt;
#pragma omp atomic read
            halt = stop;
            if (!r || !returns || halt)
                continue;
            gsl_rng_set(r, (unsigned long)rng_mix(cfg->seed, (uint64_t)i) | 1);
            if (!run_trial(cfg, p, r, returns, &trials[i])) {
#pragma omp atomic write
                stop = 1;
#pragma omp atomic
                count++;
            }
#ifdef _OPENMP
            if (omp_get_thread_num() == 0)
#endif
            {
                done += 1;
                progress_update(bar, (double)done *
#ifdef _OPENMP
                                         omp_get_num_threads()
#else
                                         1
#endif
                );
            }
        }
        free(returns);
        rng_destroy(r);
    }
    progress_destroy(bar);
    *unfinished = count;
    if (failed)
        return err_set(err, ERR_RUNTIME, "out of memory in the reliability simulation");
    return ERR_OK;
}

/* Compute seconds to train the target without failures (0 for a
 * fixed-duration run). */
static double work_s(const rel_config_t *cfg)
{
    return cfg->target_tokens > 0 ? cfg->target_tokens / cfg->tokens_per_step * cfg->step_time_s
                                  : 0;
}

/* Refuse a run that never finishes: if even without a failure its
 * checkpoints leave too little time to compute, or if a trial did not
 * finish. */
static int never_finishes(const rel_config_t *cfg, const plan_t *p, double mtbf_s,
                          int unfinished, rel_result_t *out, err_t *err)
{
    out->unfinished = unfinished > 0 ? unfinished : cfg->trials;
    char every[32], save[32], mtbf[32];
    units_fmt_duration(cfg->ckpt_interval_s, every, sizeof every);
    units_fmt_duration(p->save_block, save, sizeof save);
    units_fmt_duration(mtbf_s, mtbf, sizeof mtbf);
    if (unfinished == 0)
        return err_setf(err, ERR_INPUT, NULL, "--checkpoint-every",
                        "the run never finishes: a checkpoint every %s that blocks for %s leaves "
                        "so little time to compute that %.3g s of work would take over a "
                        "century",
                        every, save, work_s(cfg));
    return err_setf(err, ERR_INPUT, NULL, "--checkpoint-every",
                    "the run never finishes: with a checkpoint every %s (blocking %s) and an "
                    "interruption every %s on average, the work between checkpoints is lost "
                    "again and again and a trial had not finished after a century; checkpoint "
                    "more often or to faster storage",
                    every, save, mtbf);
}

int rel_simulate(const rel_config_t *cfg, rel_result_t *out, err_t *err)
{
    memset(out, 0, sizeof *out);
    int rc = rel_validate(cfg, err);
    if (rc)
        return rc;
    plan_t p;
    make_plan(cfg, &p);
    double total_rate = 0;
    for (int c = 0; c < p.n; c++)
        total_rate += p.rate[c];
    double mtbf = total_rate > 0 ? 1 / total_rate : INFINITY;
    /* without any failure: the work in cycles of interval + blocking save */
    if (work_s(cfg) / p.work_per_cycle * p.cycle > REL_MAX_WALL_S)
        return never_finishes(cfg, &p, mtbf, 0, out, err);
    trial_t *trials = calloc((size_t)cfg->trials, sizeof *trials);
    double *walls = malloc((size_t)cfg->trials * sizeof *walls);
    if (!trials || !walls) {
        free(trials);
        free(walls);
        return err_set(err, ERR_RUNTIME, "out of memory for %d trials", cfg->trials);
    }
    rc = run_trials(cfg, &p, trials, &out->unfinished, err);
    if (!rc && out->unfinished > 0)
        rc = never_finishes(cfg, &p, mtbf, out->unfinished, out, err);
    if (rc)
        goto out;
    double inv = 1.0 / cfg->trials;
    for (int i = 0; i < cfg->trials; i++) {
        const trial_t *t = &trials[i];
        walls[i] = t->wall;
        out->wall_s_mean += t->wall * inv;
        out->goodput_mean += (t->wall > 0 ? t->useful / t->wall : 0) * inv;
        out->tokens_mean += t->tokens * inv;
        out->useful_s_mean += t->useful * inv;
        out->lost_work_s_mean += t->lost * inv;
        out->checkpoint_s_mean += t->ckpt * inv;
        out->restart_s_mean += t->restart * inv;
        for (int c = 0; c < p.n; c++) {
            out->class_mean[c] += t->count[c] * inv;
            out->interruptions_mean += t->count[c] * inv;
            if (p.unexpected[c])
                out->unexpected_mean += t->count[c] * inv;
        }
    }
    qsort(walls, (size_t)cfg->trials, sizeof *walls, cmp_double);
    int n = cfg->trials;
    out->wall_s_p10 = walls[(int)floor(0.10 * (n - 1))];
    out->wall_s_p50 = walls[(int)floor(0.50 * (n - 1))];
    out->wall_s_p90 = walls[(int)floor(0.90 * (n - 1))];
    out->trials = n;
    out->n_classes = p.n;
    for (int c = 0; c < cfg->failures->n_classes && c < p.n; c++)
        snprintf(out->class_name[c], sizeof out->class_name[c], "%s",
                 cfg->failures->classes[c].name);
    if (cfg->preempt_per_node_hour > 0)
        snprintf(out->class_name[p.n - 1], sizeof out->class_name[0], "spot_preemption");
    out->lost_gpu_hours_mean = cfg->cluster->n_gpus * (out->wall_s_mean - out->useful_s_mean) / 3600;
    out->mtbf_s = mtbf;
    out->save_blocking_s = p.save_block;
    out->save_write_s = p.save_write;
    out->load_s = p.load;
    out->young_daly_s = sqrt(2 * p.save_block * out->mtbf_s);
out:
    free(trials);
    free(walls);
    return rc;
}

int rel_best_interval(const rel_config_t *cfg, double lo_s, double hi_s, int n, double *intervals,
                      double *goodput, double *best_s, err_t *err)
{
    if (n < 3 || !(lo_s > 0) || !(hi_s > lo_s))
        return err_set(err, ERR_INPUT, "interval sweep needs at least 3 points over a range");
    double *g = malloc((size_t)n * sizeof *g), *x = malloc((size_t)n * sizeof *x);
    if (!g || !x) {
        free(g);
        free(x);
        return err_set(err, ERR_RUNTIME, "out of memory");
    }
    int best = 0, rc = ERR_OK;
    for (int i = 0; i < n && !rc; i++) {
        rel_config_t c = *cfg;
        c.progress = false;
        x[i] = lo_s * pow(hi_s / lo_s, (double)i / (n - 1));
        c.ckpt_interval_s = x[i];
        rel_result_t r;
        /* the same seed at every interval: common random numbers keep the
         * comparison smooth */
        rc = rel_simulate(&c, &r, err);
        if (rc && r.unfinished > 0) {
            rc = ERR_OK; /* far too long an interval: nothing gets done */
            r.goodput_mean = 0;
        }
        g[i] = r.goodput_mean;
        if (g[i] > g[best])
            best = i;
    }
    if (!rc) {
        /* refine with a parabola through the best point and its neighbours
         * in log(interval) */
        double b = log(x[best]);
        if (best > 0 && best < n - 1) {
            double h = log(x[best + 1]) - b;
            double y0 = g[best - 1], y1 = g[best], y2 = g[best + 1];
            double denom = y0 - 2 * y1 + y2;
            if (denom < 0) {
                double shift = 0.5 * h * (y0 - y2) / denom;
                if (fabs(shift) <= h)
                    b += shift;
            }
        }
        *best_s = exp(b);
        for (int i = 0; i < n; i++) {
            if (intervals)
                intervals[i] = x[i];
            if (goodput)
                goodput[i] = g[i];
        }
    }
    free(g);
    free(x);
    return rc;
}

void rel_sweep_bounds(const rel_result_t *r, double *lo_s, double *hi_s)
{
    /* shorter than the write itself is not a checkpoint interval */
    double lo = fmax(fmax(1, 2 * r->save_blocking_s), r->save_write_s), hi = 86400;
    if (hi <= lo)
        hi = 10 * lo;
    *lo_s = lo;
    *hi_s = hi;
}
