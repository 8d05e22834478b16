#include "run/reliability.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_sf_gamma.h>

#include "common/progress.h"
#include "common/rng.h"
#include "common/units.h"

#ifdef _OPENMP
#include <omp.h>
#endif

void rel_config_default(rel_config_t *cfg, const cluster_t *c, const failure_set_t *f)
{
    memset(cfg, 0, sizeof *cfg);
    cfg->cluster = c;
    cfg->failures = f;
    cfg->dp = 1;
    cfg->ckpt_interval_s = 0; /* the best for the storage and the failure rates */
    cfg->ckpt_mode = CKPT_SYNC;
    cfg->ckpt_format = CKPT_FORMAT_SHARDED;
    cfg->keep_checkpoints = 5;
    cfg->restart_overhead_s = -1; /* the restart profile's */
    /* Assumed: a node repair (or RMA) takes a day; 2% of the nodes are kept
     * as hot spares. */
    cfg->repair_s = 86400;
    cfg->watchdog_timeout_s = REL_WATCHDOG_TIMEOUT_S;
    cfg->cluster_age_s = -1; /* mature */
    cfg->spares = (int)ceil(0.02 * cluster_hosts(c));
    if (cfg->spares < 1)
        cfg->spares = 1;
    cfg->policy = REPAIR_POLICY_SPARES;
    cfg->preempt_wait_s = 1800;
    cfg->preempt_node_exponent = 1; /* independent nodes */
    cfg->trials = 0; /* adaptive */
    cfg->tolerance = REL_DEFAULT_TOLERANCE;
    cfg->seed = RNG_DEFAULT_SEED;
}

int rel_config_init(rel_config_t *cfg, const cluster_t *c, const failure_set_t *f,
                    const char *environment, err_t *err)
{
    rel_config_default(cfg, c, f);
    int rc;
    if ((rc = storage_load(NULL, &cfg->storage, err)) ||
        (rc = restart_load(NULL, environment, &cfg->restart, err)) ||
        (rc = restart_async_load(&cfg->async, err)) ||
        (rc = failure_load_burnin(&cfg->burnin, err)))
        return rc;
    return ERR_OK;
}

double rel_class_rate(const failure_class_t *f, const cluster_t *c)
{
    return failure_job_rate_per_hour(f, c) / 3600.0;
}

void rel_weekly(const failure_set_t *f, const cluster_t *c, double *all, double *unexpected,
                double *mtbf_hours)
{
    *all = *unexpected = 0;
    for (int k = 0; k < f->n_classes; k++) {
        double r = failure_job_rate_per_hour(&f->classes[k], c) * 168;
        *all += r;
        if (f->classes[k].unexpected)
            *unexpected += r;
    }
    *mtbf_hours = *all > 0 ? 168 / *all : INFINITY;
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
    if (cfg->ckpt_interval_s < 0 || !isfinite(cfg->ckpt_interval_s))
        return err_setf(err, ERR_INPUT, NULL, "--checkpoint-every",
                        "must be a positive duration or 'best' (got %g s)", cfg->ckpt_interval_s);
    if (!cfg->storage.name[0] && (!(cfg->storage_write_bps > 0) || !(cfg->storage_read_bps > 0)))
        return err_setf(err, ERR_INPUT, NULL, "--storage-bw",
                        "checkpoint storage bandwidth must be greater than zero (or name a "
                        "--storage system)");
    if (cfg->storage_write_bps < 0 || cfg->storage_read_bps < 0 || cfg->snapshot_bps < 0)
        return err_setf(err, ERR_INPUT, NULL, "--storage-bw", "must be greater than zero");
    if (!(cfg->watchdog_timeout_s >= 0) || !isfinite(cfg->watchdog_timeout_s))
        return err_setf(err, ERR_INPUT, NULL, "--watchdog-timeout",
                        "must be a non-negative duration (got %g s)", cfg->watchdog_timeout_s);
    if (isnan(cfg->cluster_age_s) || isinf(cfg->cluster_age_s))
        return err_setf(err, ERR_INPUT, NULL, "--cluster-age",
                        "must be a non-negative duration (got %g s)", cfg->cluster_age_s);
    if (cfg->cluster_age_s >= 0 &&
        !(cfg->burnin.initial_multiple >= 1 && cfg->burnin.time_constant_s > 0))
        return err_set(err, ERR_INPUT,
                       "--cluster-age: no burn-in decay loaded (failures.json burn_in)");
    if (cfg->ckpt_bytes < 0 || cfg->repair_s < 0 || cfg->spares < 0 ||
        cfg->preempt_per_node_hour < 0 || cfg->preempt_wait_s < 0 ||
        cfg->storage_capacity_tib < 0 || cfg->keep_checkpoints < 0)
        return err_set(err, ERR_INPUT,
                       "checkpoint size, restart times, spares, capacity and preemption rate "
                       "must not be negative");
    if (!(cfg->preempt_node_exponent >= 0 && cfg->preempt_node_exponent <= 1))
        return err_setf(err, ERR_INPUT, NULL, "spot.node_exponent",
                        "must be from 0 (a gang preempted as one) to 1 (independent nodes) "
                        "(got %g)", cfg->preempt_node_exponent);
    if (!(cfg->async.drain_slowdown >= 0 && cfg->async.drain_slowdown < 1))
        return err_setf(err, ERR_INPUT, NULL, "--drain-slowdown",
                        "must be from 0 to below 1 (got %g)", cfg->async.drain_slowdown);
    if (cfg->trials < 0 || cfg->trials > 10000000)
        return err_setf(err, ERR_INPUT, NULL, "--trials", "must be from 1 to 10000000 (got %d)",
                        cfg->trials);
    if (cfg->trials == 0 && !(cfg->tolerance > 0 && cfg->tolerance < 1))
        return err_setf(err, ERR_INPUT, NULL, "--tolerance",
                        "must be a fraction above 0 and below 1 (got %g)", cfg->tolerance);
    if (cfg->dp < 1)
        return err_setf(err, ERR_INPUT, NULL, "--dp", "must be at least 1");
    for (int i = 0; i < cfg->failures->n_classes; i++)
        if (!(cfg->failures->classes[i].rate_per_component_hour >= 0))
            return err_setf(err, ERR_INPUT, cfg->failures->name, cfg->failures->classes[i].name,
                            "failure rate must not be negative");
    return ERR_OK;
}

/* ------------------------------------------------------------ the policy */

typedef struct {
    int n;                          /* classes incl. preemption */
    double rate[REL_MAX_CLASSES];   /* per second of wall time */
    bool weibull[REL_MAX_CLASSES];
    double shape[REL_MAX_CLASSES];  /* Weibull shape */
    double scale[REL_MAX_CLASSES];  /* Weibull scale for the rate's mean */
    double down[REL_MAX_CLASSES];   /* detection + relaunch + start-up + load + warm-up */
    int repair[REL_MAX_CLASSES];    /* 0 replace node, 1 reschedule, 2 preemption */
    bool planned[REL_MAX_CLASSES];
    failure_kind_t kind[REL_MAX_CLASSES];
    /* the exponential classes as one clock */
    double exp_rate;
    int n_exp, exp_idx[REL_MAX_CLASSES];
    double alias_p[REL_MAX_CLASSES]; /* Walker's alias table over the exponential classes */
    int alias_j[REL_MAX_CLASSES];
    int n_weib, weib_idx[REL_MAX_CLASSES];
    double save_block, save_write, lag, load, interval, cycle, work_per_cycle;
    double inv_cycle, inv_work_per_cycle;
    /* Marsaglia and Tsang's ziggurat for the unit exponential */
    uint32_t zig_k[256];
    double zig_w[256], zig_f[256];
    /* infant mortality: failure clocks run on the cluster's stress time
     * (wall time + failure_burnin_extra_s); NULL when mature */
    const failure_burnin_t *burnin;
    double age_s;
} plan_t;

/* The ziggurat's 256 layers for the unit exponential (Marsaglia and Tsang
 * 2000, "The ziggurat method for generating random variables"): most
 * draws take one multiplication instead of a logarithm. */
static void build_ziggurat(plan_t *p)
{
    const double m = 4294967296.0, v = 3.949659822581572e-3;
    double d = 7.697117470131487, t = d, q = v / exp(-d);
    p->zig_k[0] = (uint32_t)((d / q) * m);
    p->zig_k[1] = 0;
    p->zig_w[0] = q / m;
    p->zig_w[255] = d / m;
    p->zig_f[0] = 1.0;
    p->zig_f[255] = exp(-d);
    for (int i = 254; i >= 1; i--) {
        d = -log(v / d + exp(-d));
        p->zig_k[i + 1] = (uint32_t)((d / t) * m);
        t = d;
        p->zig_f[i] = exp(-d);
        p->zig_w[i] = d / m;
    }
}

/* Walker's alias method: one uniform picks a class in O(1), each with
 * probability rate / exp_rate. */
static void build_alias(plan_t *p)
{
    int n = p->n_exp, small[REL_MAX_CLASSES], large[REL_MAX_CLASSES], ns = 0, nl = 0;
    double q[REL_MAX_CLASSES];
    for (int k = 0; k < n; k++) {
        q[k] = p->rate[p->exp_idx[k]] / p->exp_rate * n;
        p->alias_j[k] = k;
        if (q[k] < 1)
            small[ns++] = k;
        else
            large[nl++] = k;
    }
    while (ns > 0 && nl > 0) {
        int s = small[--ns], l = large[nl - 1];
        p->alias_p[s] = q[s];
        p->alias_j[s] = l;
        q[l] -= 1 - q[s];
        if (q[l] < 1) {
            nl--;
            small[ns++] = l;
        }
    }
    while (nl > 0)
        p->alias_p[large[--nl]] = 1;
    while (ns > 0) /* rounding leftovers */
        p->alias_p[small[--ns]] = 1;
}

/* Work (compute seconds at full speed) per checkpoint cycle of interval s:
 * the background write slows training while it drains. */
static double cycle_work(double interval, double lag, double slowdown)
{
    return interval - slowdown * fmin(lag, interval);
}

/* The renewal model's wall time per unit of work at interval tau: cycles
 * of tau + save_block, unexpected failures at rate lam (per wall second,
 * restarts included: Daly's (e^{lam c} - 1)/lam per cycle of c), each also
 * losing the previous cycle when it strikes before the write has drained
 * (lag), and restarts of mean R. */
static double model_cost(const plan_t *p, double lam, double R, double slowdown, double tau)
{
    double c = tau + p->save_block, work = cycle_work(tau, p->lag, slowdown);
    if (!(work > 0))
        return INFINITY;
    double per_cycle = lam > 0 ? expm1(lam * c) / lam * exp(lam * R) * (1 + lam * fmin(p->lag, c))
                               : c;
    return per_cycle / work;
}

/* The interval that minimises model_cost over [lo, hi] (golden section in
 * log(interval); the cost is unimodal there). */
static double best_interval(const plan_t *p, double lam, double R, double slowdown, double lo,
                            double hi)
{
    if (!(lam > 0) || hi <= lo)
        return hi;
    const double g = 0.6180339887498949;
    double a = log(lo), b = log(hi);
    double x1 = b - g * (b - a), x2 = a + g * (b - a);
    double f1 = model_cost(p, lam, R, slowdown, exp(x1)), f2 = model_cost(p, lam, R, slowdown, exp(x2));
    for (int i = 0; i < 80 && b - a > 1e-6; i++) {
        if (f1 <= f2) {
            b = x2;
            x2 = x1;
            f2 = f1;
            x1 = b - g * (b - a);
            f1 = model_cost(p, lam, R, slowdown, exp(x1));
        } else {
            a = x1;
            x1 = x2;
            f1 = f2;
            x2 = a + g * (b - a);
            f2 = model_cost(p, lam, R, slowdown, exp(x2));
        }
    }
    return exp(0.5 * (a + b));
}

/* Work (full-speed compute seconds) to train the target; 0 for a
 * fixed-duration run. */
static double work_s(const rel_config_t *cfg)
{
    return cfg->target_tokens > 0 ? cfg->target_tokens / cfg->tokens_per_step * cfg->step_time_s
                                  : 0;
}

/* The mean burn-in multiple over a run of wall_s from the cluster's age at
 * the start (1 for a mature cluster): the analytic figures (interval, MTBF,
 * the cluster view) use it, the Monte Carlo the decay itself. */
static double burnin_mean(const rel_config_t *cfg, double wall_s)
{
    if (cfg->cluster_age_s < 0 || !(wall_s > 0) || !isfinite(wall_s))
        return 1;
    return failure_burnin_mean(&cfg->burnin, cfg->cluster_age_s, cfg->cluster_age_s + wall_s);
}

/* The storage bandwidth this job's checkpoints get: the storage system's
 * share for the job (capacity enough for the checkpoints kept unless
 * given), or --storage-bw's; unlimited when neither is given. */
static void job_storage_bw(const rel_config_t *cfg, storage_bw_t *bw)
{
    const cluster_t *cl = cfg->cluster;
    memset(bw, 0, sizeof *bw);
    bw->write_bps = bw->read_bps = INFINITY;
    bw->write_limit = bw->read_limit = "given";
    if (cfg->storage.name[0]) {
        double cap = cfg->storage_capacity_tib;
        if (cfg->storage.per_tib_gbs > 0 && !(cap > 0)) /* enough for the checkpoints kept */
            cap = fmax(1, ceil((cfg->keep_checkpoints > 0 ? cfg->keep_checkpoints : 1) *
                               cfg->ckpt_bytes / 1099511627776.0));
        storage_job_bandwidth(&cfg->storage, cl, cfg->ckpt_format, cfg->dp, cap, bw);
    }
    if (cfg->storage_write_bps > 0) {
        bw->write_bps = cfg->storage_write_bps;
        bw->write_limit = "given (--storage-bw)";
    }
    if (cfg->storage_read_bps > 0) {
        bw->read_bps = cfg->storage_read_bps;
        bw->read_limit = "given (--storage-bw)";
    }
}

/* The checkpoint's times for its mode (synchronous, asynchronous with a
 * background drain, or to a peer's host memory) into p: save_block,
 * save_write, lag, load. Returns how much a draining write slows training
 * (0 for synchronous saves). */
static double checkpoint_times(const rel_config_t *cfg, const storage_bw_t *bw, plan_t *p)
{
    const cluster_t *cl = cfg->cluster;
    int gpus = cl->n_gpus > 0 ? cl->n_gpus : 1;
    double commit = cfg->storage.name[0] ? cfg->storage.commit_s : 0;
    double bytes = cfg->ckpt_bytes;
    double write = commit + bytes / bw->write_bps;
    double load = commit + bytes / bw->read_bps;
    /* the data loader's reads share the storage with a background drain */
    double loader_bps = cfg->tokens_per_step / cfg->step_time_s * cfg->async.loader_bytes_per_token;
    double drain_bps = fmax(bw->write_bps - loader_bps, 0.5 * bw->write_bps);
    double snap_bps = cfg->snapshot_bps > 0 ? cfg->snapshot_bps : storage_pcie_bps(cl) * gpus;
    double snapshot = cfg->async.snapshot_fixed_s + bytes / snap_bps;
    double slowdown = 0;
    switch (cfg->ckpt_mode) {
    case CKPT_SYNC:
        p->save_block = p->save_write = write;
        break;
    case CKPT_ASYNC:
        p->save_block = snapshot;
        p->save_write = snapshot + commit + bytes / drain_bps;
        slowdown = cfg->async.drain_slowdown;
        break;
    case CKPT_PEER: {
        /* each node's shard to a peer's host memory over the scale-out
         * network, and back from it on a restart; ASSUMED: no failure
         * takes out a node and the peer holding its copy together */
        double node_bps = cluster_nic_gbs_per_gpu(cl) * 1e9 * cl->gpus_per_node;
        double per_node = bytes / (cl->n_gpus > 0 ? cluster_nodes(cl) : 1);
        double copy = node_bps > 0 ? per_node / node_bps : 0;
        p->save_block = snapshot;
        p->save_write = snapshot + copy;
        load = copy;
        slowdown = cfg->async.drain_slowdown;
        break;
    }
    }
    p->lag = p->save_write - p->save_block;
    p->load = load;
    return slowdown;
}

static void make_plan(const rel_config_t *cfg, plan_t *p, rel_result_t *info)
{
    memset(p, 0, sizeof *p);
    if (cfg->cluster_age_s >= 0) {
        p->burnin = &cfg->burnin;
        p->age_s = cfg->cluster_age_s;
    }
    const cluster_t *cl = cfg->cluster;
    const failure_set_t *fs = cfg->failures;
    int gpus = cl->n_gpus > 0 ? cl->n_gpus : 1;
    storage_bw_t bw;
    job_storage_bw(cfg, &bw);
    double slowdown = checkpoint_times(cfg, &bw, p);
    double load = p->load;
    /* the failure classes */
    double lam = 0, lam_planned = 0, R = 0, Rp = 0, det = 0, rel = 0;
    double init = restart_init_s(&cfg->restart, gpus);
    double warm = cfg->restart.warmup_steps * cfg->step_time_s;
    /* a young cluster: the set's rates averaged over the run (its work
     * time when it trains to a target) */
    double M = burnin_mean(cfg, cfg->duration_s > 0 ? cfg->duration_s : work_s(cfg));
    for (int i = 0; i < fs->n_classes && p->n < REL_MAX_CLASSES - 1; i++) {
        const failure_class_t *f = &fs->classes[i];
        int c = p->n++;
        p->rate[c] = rel_class_rate(f, cl);
        p->weibull[c] = f->weibull && f->weibull_shape != 1.0;
        p->shape[c] = p->weibull[c] ? f->weibull_shape : 1.0;
        /* Weibull scale with the class's mean time between failures */
        p->scale[c] = p->rate[c] > 0 ? 1.0 / p->rate[c] / gsl_sf_gamma(1 + 1 / p->shape[c]) : 0;
        p->repair[c] = f->repair == REPAIR_RESCHEDULE ? 1 : 0;
        p->planned[c] = !f->unexpected;
        p->kind[c] = f->kind;
        double relaunch = p->repair[c] == 0 ? cfg->restart.replace_s : cfg->restart.reschedule_s;
        double over = cfg->restart_overhead_s >= 0 ? cfg->restart_overhead_s : relaunch + init + warm;
        /* a hang is found when the watchdog times out, not by the health
         * checks that find a crash */
        double detect = f->hang ? cfg->watchdog_timeout_s : f->detect_s;
        p->down[c] = detect + over + load;
        double r = p->rate[c] * M;
        if (p->planned[c]) {
            lam_planned += r;
            Rp += r * p->down[c];
        } else {
            lam += r;
            R += r * p->down[c];
        }
        det += r * detect;
        rel += r * (cfg->restart_overhead_s >= 0 ? 0 : relaunch);
    }
    if (cfg->preempt_per_node_hour > 0) {
        int c = p->n++;
        p->rate[c] = cfg->preempt_per_node_hour *
                     pow(cluster_hosts(cl), cfg->preempt_node_exponent) / 3600.0;
        p->shape[c] = 1;
        p->repair[c] = 2;
        p->kind[c] = FAIL_KIND_PREEMPTION;
        double over = cfg->restart_overhead_s >= 0 ? cfg->restart_overhead_s
                                                   : cfg->restart.reschedule_s + init + warm;
        p->down[c] = cfg->preempt_wait_s + over + load;
        lam += p->rate[c];
        R += p->rate[c] * p->down[c];
        rel += p->rate[c] * (cfg->restart_overhead_s >= 0 ? 0 : cfg->restart.reschedule_s);
    }
    /* one clock for the exponential classes: the next failure of any, and
     * which, drawn together (exact for memoryless clocks) */
    for (int c = 0; c < p->n; c++) {
        if (!(p->rate[c] > 0))
            continue;
        if (p->weibull[c]) {
            p->weib_idx[p->n_weib++] = c;
        } else {
            p->exp_rate += p->rate[c];
            p->exp_idx[p->n_exp++] = c;
        }
    }
    if (p->n_exp > 0)
        build_alias(p);
    build_ziggurat(p);
    double Rmean = lam > 0 ? R / lam : 0;
    /* the interval: the user's, or the best for this storage and failure
     * rate, never shorter than the write still draining, one step, 1 s */
    double W = work_s(cfg);
    double run = W > 0 ? W : cfg->duration_s;
    double lo = fmax(fmax(1, cfg->step_time_s), p->lag);
    double hi = fmax(lo, fmin(run, 30 * 86400.0));
    info->interval_best = !(cfg->ckpt_interval_s > 0);
    p->interval = info->interval_best ? best_interval(p, lam, Rmean, slowdown, lo, hi)
                                      : cfg->ckpt_interval_s;
    if (p->lag > p->interval) /* a write must finish before the next snapshot */
        p->interval = p->lag;
    p->cycle = p->interval + p->save_block;
    p->work_per_cycle = cycle_work(p->interval, p->lag, slowdown);
    p->inv_cycle = 1 / p->cycle;
    p->inv_work_per_cycle = 1 / p->work_per_cycle;
    /* what the caller sees of the policy */
    info->ckpt_interval_s = p->interval;
    info->save_blocking_s = p->save_block;
    info->save_write_s = p->save_write;
    info->load_s = p->load;
    info->write_bps = bw.write_bps;
    info->read_bps = bw.read_bps;
    info->write_limit = bw.write_limit;
    info->read_limit = bw.read_limit;
    info->storage_capacity_tib = bw.capacity_tib;
    double all = lam + lam_planned;
    info->mtbf_s = all > 0 ? 1 / all : INFINITY;
    info->unexpected_mtbf_s = lam > 0 ? 1 / lam : INFINITY;
    info->restart_mean_s = all > 0 ? (R + Rp) / all : 0;
    info->detect_mean_s = all > 0 ? det / all : 0;
    info->relaunch_mean_s = all > 0 ? rel / all : 0;
    info->init_s = cfg->restart_overhead_s >= 0 ? 0 : init;
    info->warmup_s = cfg->restart_overhead_s >= 0 ? 0 : warm;
    info->young_daly_s = sqrt(2 * p->save_block * info->unexpected_mtbf_s);
    double planned_cost = lam_planned * (p->save_write + (lam_planned > 0 ? Rp / lam_planned : 0));
    double cost = model_cost(p, lam, Rmean, slowdown, p->interval);
    info->model_goodput = isfinite(cost) ? 1 / (cost * (1 + planned_cost)) : 0;
    /* per 1000 days of an 8-GPU node, the unit of the published records */
    info->per_1000_node_days = lam * 86400 * 1000 * 8 / gpus;
}

int rel_policy(const rel_config_t *cfg, rel_result_t *out, err_t *err)
{
    memset(out, 0, sizeof *out);
    int rc = rel_validate(cfg, err);
    if (rc)
        return rc;
    plan_t p;
    make_plan(cfg, &p, out);
    return ERR_OK;
}

/* ------------------------------------------------------------ one trial */

/* xoshiro256++ (Blackman and Vigna 2018): a small, fast generator with a
 * 2^256 period; each trial seeds its own from (seed, trial). */
typedef struct {
    uint64_t s[4];
} xrng_t;

static inline uint64_t rotl(uint64_t x, int k)
{
    return (x << k) | (x >> (64 - k));
}

static inline uint64_t xr_next(xrng_t *r)
{
    uint64_t *s = r->s;
    uint64_t out = rotl(s[0] + s[3], 23) + s[0];
    uint64_t t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], 45);
    return out;
}

/* uniform in (0, 1): never 0, so its logarithm is finite */
static inline double xr_open01(xrng_t *r)
{
    return ((double)(xr_next(r) >> 11) + 0.5) * 0x1.0p-53;
}

static void xr_seed(xrng_t *r, uint64_t seed, uint64_t trial)
{
    uint64_t base = rng_mix(seed, trial);
    for (int i = 0; i < 4; i++)
        r->s[i] = rng_mix(base, (uint64_t)i);
}

typedef struct {
    double wall, useful, lost, ckpt, restart, tokens, checkpoints;
    int during;
    long events; /* interruptions simulated, the trial's cost */
    int count[REL_MAX_CLASSES];
} trial_t;

/* How a trial ended: the target trained (or the duration reached), or
 * given up on past REL_MAX_WALL_S or past REL_MAX_INTERRUPTIONS. */
typedef enum { TRIAL_DONE = 0, TRIAL_CENTURY, TRIAL_INTERRUPTED } trial_end_t;

/* Wall-clock failure clocks of one trial. */
typedef struct {
    double next_exp;      /* the next failure of an exponential class */
    int exp_class;        /* which */
    double next_w[REL_MAX_CLASSES]; /* Weibull classes' next failures */
} clocks_t;

/* A unit exponential from the ziggurat; *spare receives 24 unused random
 * bits of the draw (as a uniform in [0, 1)). */
static double unit_exp(const plan_t *p, xrng_t *r, double *spare)
{
    uint64_t b = xr_next(r);
    *spare = (double)((b >> 8) & 0xffffff) * 0x1.0p-24;
    for (;;) {
        int i = (int)(b & 255);
        uint32_t u = (uint32_t)(b >> 32);
        if (u < p->zig_k[i])
            return u * p->zig_w[i];
        if (i == 0) /* the tail: memoryless, so start again past it */
            return 7.697117470131487 - log(xr_open01(r));
        double x = u * p->zig_w[i];
        if (p->zig_f[i] + xr_open01(r) * (p->zig_f[i - 1] - p->zig_f[i]) < exp(-x))
            return x;
        b = xr_next(r);
    }
}

static void draw_exp(const plan_t *p, clocks_t *k, double now, xrng_t *r)
{
    if (!(p->exp_rate > 0)) {
        k->next_exp = INFINITY;
        return;
    }
    double spare;
    k->next_exp = now + unit_exp(p, r, &spare) / p->exp_rate;
    /* which class: the alias table with the draw's spare bits */
    double u = spare * p->n_exp;
    int j = (int)u;
    if (j >= p->n_exp)
        j = p->n_exp - 1;
    k->exp_class = p->exp_idx[u - j < p->alias_p[j] ? j : p->alias_j[j]];
}

static void draw_weibull(const plan_t *p, clocks_t *k, int c, double now, xrng_t *r)
{
    k->next_w[c] = now + p->scale[c] * pow(-log(xr_open01(r)), 1 / p->shape[c]);
}

/* The wall time at which the cluster's stress time reaches u: the root of
 * t + extra(t) = u, extra concave and increasing, by Newton's method from
 * u - extra(inf), where the function is below zero (concavity keeps every
 * step there, so it converges from below without overshooting). */
static double wall_of(const plan_t *p, double u)
{
    if (!p->burnin || !isfinite(u))
        return u;
    double tau = p->burnin->time_constant_s;
    double c = failure_burnin_extra_s(p->burnin, p->age_s, INFINITY);
    double t = fmax(0, u - c);
    for (int i = 0; i < 60; i++) {
        double f = t + failure_burnin_extra_s(p->burnin, p->age_s, t) - u;
        if (fabs(f) <= 1e-9 * fmax(1, u))
            break;
        t -= f / (1 + c / tau * exp(-t / tau));
    }
    return t;
}

/* The next failure: its time, and its class in *cls. */
static double peek(const plan_t *p, const clocks_t *k, int *cls)
{
    double t = k->next_exp;
    *cls = k->exp_class;
    for (int i = 0; i < p->n_weib; i++) {
        int c = p->weib_idx[i];
        if (k->next_w[c] < t) {
            t = k->next_w[c];
            *cls = c;
        }
    }
    return t;
}

/* Redraw the clock of class cls, which failed at now. */
static void consume(const plan_t *p, clocks_t *k, int cls, double now, xrng_t *r)
{
    if (p->weibull[cls])
        draw_weibull(p, k, cls, now, r);
    else
        draw_exp(p, k, now, r);
}

#define POOL 4096 /* nodes in repair tracked at once (a ring; a power of two) */

typedef struct {
    int spares, down_replicas, n_back;
    int head, n_returns;  /* the ring of repair return times, earliest first */
    double *returns, *elastic_back;
} repair_state_t;

/* Wait for a replacement node under the policy. Nodes come back from
 * repair in the order they failed (the repair time is the same for all),
 * so the nodes in repair are a queue. Returns the seconds waited. */
static double replacement_wait(const rel_config_t *cfg, double now, repair_state_t *s)
{
    /* nodes whose repair finished go back into the spare pool */
    while (s->n_returns > 0 && s->returns[s->head] <= now) {
        s->head = (s->head + 1) & (POOL - 1);
        s->n_returns--;
        s->spares++;
    }
    if (cfg->policy == REPAIR_POLICY_WAIT)
        return cfg->repair_s;
    double wait = 0;
    if (s->spares == 0) {
        /* none left: the earliest repair comes back first */
        if (s->n_returns > 0) {
            wait = s->returns[s->head] - now;
            s->head = (s->head + 1) & (POOL - 1);
            s->n_returns--;
        } else {
            wait = cfg->repair_s;
        }
    } else {
        s->spares--;
    }
    if (s->n_returns < POOL) {
        s->returns[(s->head + s->n_returns) & (POOL - 1)] = now + wait + cfg->repair_s;
        s->n_returns++;
    }
    return wait;
}

/* The downtime from now of an interruption of class c. */
static double downtime(const rel_config_t *cfg, const plan_t *p, int c, double now,
                       repair_state_t *s)
{
    double down = p->down[c];
    if (p->repair[c] == 0) {
        if (cfg->policy == REPAIR_POLICY_ELASTIC && cfg->dp - s->down_replicas > 1) {
            s->down_replicas++;
            if (s->n_back < POOL)
                s->elastic_back[s->n_back++] = now + cfg->repair_s;
        } else {
            down += replacement_wait(cfg, now, s);
        }
    }
    return down;
}

/* One trial; TRIAL_DONE unless it had not finished within REL_MAX_WALL_S
 * or REL_MAX_INTERRUPTIONS (its figures then meaningless). Every loop here
 * counts interruptions, so a trial costs at most REL_MAX_INTERRUPTIONS
 * events however fast the failures come. */
static trial_end_t run_trial(const rel_config_t *cfg, const plan_t *p, xrng_t *r, double *pool,
                             trial_t *t)
{
    memset(t, 0, sizeof *t);
    clocks_t k;
    draw_exp(p, &k, 0, r);
    for (int i = 0; i < p->n_weib; i++)
        draw_weibull(p, &k, p->weib_idx[i], 0, r);
    double W = cfg->target_tokens > 0 ? work_s(cfg) : INFINITY; /* full-speed compute to finish */
    double committed = 0; /* compute seconds safe in a checkpoint */
    double limit = cfg->duration_s > 0 ? cfg->duration_s : INFINITY;
    repair_state_t rs = {cfg->spares, 0, 0, 0, 0, pool, pool + POOL};
    double now = 0;
    trial_end_t end_kind = TRIAL_INTERRUPTED;
    for (;;) {
        int c;
        double tf = peek(p, &k, &c); /* on the stress clock */
        double D = fmax(0, wall_of(p, tf) - now); /* wall time until the next failure */
        bool at_limit = now + D >= limit;
        if (at_limit)
            D = limit - now;
        /* elastic: fewer replicas do proportionally less work */
        double f = rs.down_replicas > 0 ? (double)(cfg->dp - rs.down_replicas) / cfg->dp : 1.0;
        double wpc = p->work_per_cycle * f;
        double inv_wpc = rs.down_replicas > 0 ? 1 / wpc : p->inv_work_per_cycle;
        double need = W - committed;
        if (isfinite(need)) {
            /* checkpoint cycles to go, the last one partial; at least one
             * (an interval longer than the run: no periodic checkpoint) */
            double k_need = fmax(1, ceil(need * inv_wpc - 1e-12));
            double finish = (k_need - 1) * p->cycle + (need - (k_need - 1) * wpc) / f +
                            p->save_write;
            if (finish <= D) {
                now += finish;
                t->ckpt += (k_need - 1) * p->save_block + p->save_write;
                t->checkpoints += k_need;
                committed = W;
                end_kind = TRIAL_DONE;
                break;
            }
        }
        double n = floor(D * p->inv_cycle);
        double durable = n;
        if (p->lag > 0) /* async: writes finish later */
            durable = fmax(0, fmin(n, floor((D - p->lag) * p->inv_cycle)));
        if (!at_limit && p->planned[c]) {
            /* announced: the job saves what it has and stops */
            double part = fmin(D - n * p->cycle, p->interval) * f;
            committed = fmin(W, committed + n * wpc + part);
            t->ckpt += n * p->save_block + p->save_write;
            t->checkpoints += n + 1;
            now += D + p->save_write;
        } else {
            committed += durable * wpc;
            t->ckpt += n * p->save_block;
            t->checkpoints += durable;
            t->lost += D - n * p->save_block - durable * p->interval;
            now += D;
        }
        if (at_limit || now >= limit) {
            end_kind = TRIAL_DONE;
            break;
        }
        if (now > REL_MAX_WALL_S) {
            end_kind = TRIAL_CENTURY; /* never finishes */
            break;
        }
        if (t->events >= REL_MAX_INTERRUPTIONS)
            break; /* restarts all the way down */
        /* the interruption, and any that strike while it restarts: when
         * they come faster than a restart completes this loop would run
         * on, so it stops at the same caps */
        double start = now;
        t->events++;
        t->count[c]++;
        consume(p, &k, c, tf, r);
        double end = now + downtime(cfg, p, c, now, &rs);
        for (;;) {
            int c2;
            double u2 = peek(p, &k, &c2), t2 = wall_of(p, u2);
            if (!(t2 < end) || t2 >= limit || end > REL_MAX_WALL_S ||
                t->events >= REL_MAX_INTERRUPTIONS)
                break;
            t->events++;
            t->count[c2]++;
            t->during++;
            consume(p, &k, c2, u2, r);
            double t0 = fmax(t2, start);
            end = fmax(end, t0 + downtime(cfg, p, c2, t0, &rs));
        }
        if (end > limit)
            end = limit;
        t->restart += end - start;
        now = end;
        /* repaired replicas rejoin at the restart */
        for (int i = 0; i < rs.n_back;) {
            if (rs.elastic_back[i] <= now) {
                rs.elastic_back[i] = rs.elastic_back[--rs.n_back];
                rs.down_replicas--;
            } else {
                i++;
            }
        }
        if (now >= limit) {
            end_kind = TRIAL_DONE;
            break;
        }
    }
    t->wall = now;
    t->useful = committed;
    t->tokens = committed / cfg->step_time_s * cfg->tokens_per_step;
    return end_kind;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* What the trials so far came to: how many were given up on, and why. */
typedef struct {
    int unfinished;  /* trials that had not finished */
    int interrupted; /* ... of them, past REL_MAX_INTERRUPTIONS */
    double events;   /* interruptions simulated in all */
} trial_tally_t;

/* Run trials [from, to); once one trial has not finished the rest are
 * skipped (the run is refused anyway); the tally counts them. */
static int run_trials(const rel_config_t *cfg, const plan_t *p, trial_t *trials, int from, int to,
                      progress_t *bar, trial_tally_t *tally, err_t *err)
{
    int failed = 0, stop = 0, count = 0, interrupted = 0;
    long done = 0;
#pragma omp parallel
    {
        double *pool = malloc(2 * POOL * sizeof *pool);
        if (!pool) {
#pragma omp atomic write
            failed = 1;
        }
#pragma omp for schedule(static)
        for (int i = from; i < to; i++) {
            int halt;
#pragma omp atomic read
            halt = stop;
            if (!pool || halt)
                continue;
            xrng_t r;
            xr_seed(&r, cfg->seed, (uint64_t)i);
            trial_end_t how = run_trial(cfg, p, &r, pool, &trials[i]);
            if (how != TRIAL_DONE) {
#pragma omp atomic write
                stop = 1;
#pragma omp atomic
                count++;
                if (how == TRIAL_INTERRUPTED) {
#pragma omp atomic
                    interrupted++;
                }
            }
#ifdef _OPENMP
            if (bar && omp_get_thread_num() == 0)
#else
            if (bar)
#endif
            {
                done += 1;
                progress_update(bar, (double)from + (double)done *
#ifdef _OPENMP
                                                        omp_get_num_threads()
#else
                                                        1
#endif
                );
            }
        }
        free(pool);
    }
    tally->unfinished += count;
    tally->interrupted += interrupted;
    for (int i = from; i < to && !stop; i++)
        tally->events += (double)trials[i].events;
    if (failed)
        return err_set(err, ERR_RUNTIME, "out of memory in the reliability simulation");
    return ERR_OK;
}

/* Relative standard error of the p-quantile of n sorted values: half the
 * spread of the order statistics one binomial standard deviation either
 * side of it (distribution-free). */
static double quantile_se(const double *x, int n, double p)
{
    double j = p * (n - 1), k = sqrt(n * p * (1 - p));
    int lo = (int)fmax(0, floor(j - k)), hi = (int)fmin(n - 1, ceil(j + k));
    double mid = x[(int)floor(j)];
    if (!(fabs(mid) > 0))
        return 0;
    return 0.5 * (x[hi] - x[lo]) / fabs(mid);
}

/* The refusal when failures come so fast that restarts are interrupted
 * before they complete: restart and interruption figures, and what helps. */
static int restarts_never_end(const rel_config_t *cfg, const rel_result_t *out, err_t *err)
{
    char mtbf[32], restart[32];
    units_fmt_duration(out->mtbf_s, mtbf, sizeof mtbf);
    units_fmt_duration(out->restart_mean_s, restart, sizeof restart);
    const char *what = cfg->target_tokens > 0 ? "the run never finishes" : "the reservation trains nothing";
    const char *why = out->restart_mean_s >= out->mtbf_s
                          ? "restarts are interrupted before they complete"
                          : "the run is all restarts";
    return err_setf(err, ERR_INPUT, NULL, "--gpus",
                    "%s: an interruption comes every %s on average and a restart takes %s, so "
                    "%s (a trial had been interrupted %ld times without finishing); use fewer "
                    "GPUs, a steadier --environment, spare capacity instead of --spot, or a "
                    "faster restart (--restart-overhead)",
                    what, mtbf, restart, why, (long)REL_MAX_INTERRUPTIONS);
}

/* Refuse a run that never finishes: if even without a failure its
 * checkpoints leave too little time to compute, if restarts cannot
 * complete between interruptions, or if a trial did not finish. */
static int never_finishes(const rel_config_t *cfg, const plan_t *p, const trial_tally_t *tally,
                          rel_result_t *out, err_t *err)
{
    int unfinished = tally->unfinished;
    out->unfinished = unfinished > 0 ? unfinished : (cfg->trials > 0 ? cfg->trials : 1);
    out->interrupted_out = tally->interrupted > 0;
    if (out->interrupted_out)
        return restarts_never_end(cfg, out, err);
    char every[32], save[32], mtbf[32];
    units_fmt_duration(p->interval, every, sizeof every);
    units_fmt_duration(p->save_block, save, sizeof save);
    units_fmt_duration(out->mtbf_s, mtbf, sizeof mtbf);
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

/* The first batch of a Monte Carlo: want trials (REL_MIN_TRIALS when
 * adaptive, else the count asked for), fewer when the renewal model expects
 * so many interruptions a trial that they would exceed budget (the
 * config's, else REL_EVENT_BUDGET; such trials vary little: a wall time
 * made of n interruptions has a relative spread near 1/sqrt(n)); the
 * result's trial count and standard errors say what ran. */
static int first_batch(const rel_result_t *out, double work, double duration, int want,
                       double budget)
{
    double wall = work > 0 ? (out->model_goodput > 0 ? work / out->model_goodput : INFINITY)
                           : duration;
    double per_trial = fmin(wall / out->mtbf_s, (double)REL_MAX_INTERRUPTIONS);
    if (!(per_trial * want > budget))
        return want;
    return (int)fmin(want, fmax(REL_MIN_FIRST_TRIALS, budget / per_trial));
}

int rel_simulate(const rel_config_t *cfg, rel_result_t *out, err_t *err)
{
    memset(out, 0, sizeof *out);
    int rc = rel_validate(cfg, err);
    if (rc)
        return rc;
    plan_t p;
    make_plan(cfg, &p, out);
    /* without any failure: the work in cycles of interval + blocking save */
    if (work_s(cfg) / p.work_per_cycle * p.cycle > REL_MAX_WALL_S)
        return never_finishes(cfg, &p, &(trial_tally_t){0, 0, 0}, out, err);
    bool adaptive = cfg->trials == 0;
    int cap = adaptive ? REL_MAX_TRIALS : cfg->trials;
    double budget = cfg->event_budget > 0 ? cfg->event_budget : REL_EVENT_BUDGET;
    int target = first_batch(out, work_s(cfg), cfg->duration_s,
                             adaptive ? REL_MIN_TRIALS : cfg->trials, budget);
    trial_t *trials = malloc((size_t)cap * sizeof *trials);
    double *main_v = malloc((size_t)cap * sizeof *main_v);
    if (!trials || !main_v) {
        free(trials);
        free(main_v);
        return err_set(err, ERR_RUNTIME, "out of memory for %d trials", cap);
    }
    progress_t *bar = cfg->progress && !adaptive ? progress_create("reliability", target)
                                                 : NULL;
    bool by_tokens = !(cfg->target_tokens > 0); /* fixed duration: tokens vary, not wall */
    int done = 0;
    trial_tally_t tally = {0, 0, 0};
    double se50 = 0, se90 = 0;
    for (;;) {
        if ((rc = run_trials(cfg, &p, trials, done, target, bar, &tally, err)))
            break;
        done = target;
        if (tally.unfinished > 0)
            break;
        for (int i = 0; i < done; i++)
            main_v[i] = by_tokens ? trials[i].tokens : trials[i].wall;
        qsort(main_v, (size_t)done, sizeof *main_v, cmp_double);
        se50 = quantile_se(main_v, done, 0.5);
        se90 = quantile_se(main_v, done, by_tokens ? 0.1 : 0.9); /* the bad tail */
        /* the budget bounds the time (doubling would pass it); the
         * standard errors printed say what precision it bought */
        if (!adaptive || (se50 <= cfg->tolerance && se90 <= cfg->tolerance) || done >= cap ||
            2 * tally.events > budget)
            break;
        target = done * 2 < cap ? done * 2 : cap;
    }
    progress_destroy(bar);
    if (!rc && tally.unfinished > 0)
        rc = never_finishes(cfg, &p, &tally, out, err);
    if (rc)
        goto out;
    int n = done;
    double inv = 1.0 / n;
    for (int i = 0; i < n; i++) {
        const trial_t *t = &trials[i];
        out->wall_s_mean += t->wall * inv;
        out->goodput_mean += (t->wall > 0 ? t->useful / t->wall : 0) * inv;
        out->tokens_mean += t->tokens * inv;
        out->useful_s_mean += t->useful * inv;
        out->lost_work_s_mean += t->lost * inv;
        out->checkpoint_s_mean += t->ckpt * inv;
        out->restart_s_mean += t->restart * inv;
        out->checkpoints_mean += t->checkpoints * inv;
        out->during_restart_mean += t->during * inv;
        for (int c = 0; c < p.n; c++) {
            out->class_mean[c] += t->count[c] * inv;
            out->kind_mean[p.kind[c]] += t->count[c] * inv;
            out->interruptions_mean += t->count[c] * inv;
            if (!p.planned[c])
                out->unexpected_mean += t->count[c] * inv;
        }
    }
    /* quantiles of the wall time and of the tokens trained */
    for (int i = 0; i < n; i++)
        main_v[i] = trials[i].wall;
    qsort(main_v, (size_t)n, sizeof *main_v, cmp_double);
    out->wall_s_p10 = main_v[(int)floor(0.10 * (n - 1))];
    out->wall_s_p50 = main_v[(int)floor(0.50 * (n - 1))];
    out->wall_s_p90 = main_v[(int)floor(0.90 * (n - 1))];
    for (int i = 0; i < n; i++)
        main_v[i] = trials[i].tokens;
    qsort(main_v, (size_t)n, sizeof *main_v, cmp_double);
    out->tokens_p10 = main_v[(int)floor(0.10 * (n - 1))];
    out->tokens_p50 = main_v[(int)floor(0.50 * (n - 1))];
    out->tokens_p90 = main_v[(int)floor(0.90 * (n - 1))];
    out->trials = n;
    out->adaptive = adaptive;
    out->tolerance = adaptive ? cfg->tolerance : 0;
    out->se_p50 = se50;
    out->se_p90 = se90;
    out->n_classes = p.n;
    for (int c = 0; c < cfg->failures->n_classes && c < p.n; c++)
        snprintf(out->class_name[c], sizeof out->class_name[c], "%s",
                 cfg->failures->classes[c].name);
    if (cfg->preempt_per_node_hour > 0)
        snprintf(out->class_name[p.n - 1], sizeof out->class_name[0], "spot_preemption");
    for (int c = 0; c < p.n; c++)
        out->class_kind[c] = p.kind[c];
    out->lost_gpu_hours_mean = cfg->cluster->n_gpus * (out->wall_s_mean - out->useful_s_mean) / 3600;
    /* the cluster view: every failure of the job's GPUs and its spare
     * nodes over the wall time, whether or not the job was running */
    double hosts = fmax(1, cluster_hosts(cfg->cluster));
    double all_rate = 0, M = burnin_mean(cfg, out->wall_s_mean);
    for (int c = 0; c < p.n; c++)
        all_rate += p.rate[c] * (c < cfg->failures->n_classes ? M : 1);
    out->cluster_failures_mean = all_rate * (hosts + cfg->spares) / hosts * out->wall_s_mean;
out:
    free(trials);
    free(main_v);
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
            err_clear(err);
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
    double lo = fmax(fmax(1, 2 * r->save_blocking_s), r->save_write_s - r->save_blocking_s),
           hi = 86400;
    if (hi <= lo)
        hi = 10 * lo;
    *lo_s = lo;
    *hi_s = hi;
}
