#include "commands/job.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/json.h"
#include "common/units.h"
#include "topologies/price.h"

static const cmd_opt_t run_opts[] = {
    {"--tokens", NULL, "N", "tokens to train (2T, 15T, 1.5e12)", CMD_KIND(CMD_COUNT, 1, 1e18)},
    {"--days", NULL, "D", "wall-clock days (a fixed duration, or a claim to check)",
     CMD_KIND(CMD_DAYS, 60, 36500 * 86400.0)},
};
const cmd_group_t CMD_RUN_OPTS = {"Run", run_opts, sizeof run_opts / sizeof run_opts[0]};

static const cmd_opt_t rel_opts[] = {
    {"--step-time", NULL, "S", "step time (default: simulated for --model)",
     CMD_KIND(CMD_DURATION, 1e-6, 1e6)},
    {"--tokens-per-step", NULL, "N", "tokens per step with --step-time (default: the layout's)",
     CMD_KIND(CMD_COUNT, 1, 1e12)},
    {"--checkpoint-every", NULL, "T|best", "compute time between checkpoints (default best)",
     CMD_WORD},
    {"--checkpoint-size", NULL, "BYTES", "one checkpoint (default: parameters x 12 bytes)",
     CMD_KIND(CMD_BYTES, 0, 1e18)},
    {"--checkpoint-bytes-per-param", NULL, "N", "bytes per parameter saved (default 12)",
     CMD_X(0, 64)},
    {"--checkpoint-mode", NULL, "sync|async|peer",
     "block for the write, for the snapshot only, or keep copies in a peer's memory (default sync)",
     CMD_WORD},
    {"--async-checkpoint", NULL, NULL, "the same as --checkpoint-mode async", CMD_WORD},
    {"--checkpoint-format", NULL, "sharded|replica|rank0",
     "who writes: every rank, one DP replica, one process (default sharded)", CMD_WORD},
    {"--keep-checkpoints", NULL, "K", "checkpoints kept in storage, or 'all' (default 5)",
     CMD_WORD},
    {"--storage", NULL, "NAME", "checkpoint storage system (scaleplan catalog storage)", CMD_WORD},
    {"--storage-bw", NULL, "BW", "aggregate checkpoint write/read bandwidth (e.g. 2TB/s)",
     CMD_KIND(CMD_BANDWIDTH, 1e6, 1e15)},
    {"--storage-capacity", NULL, "BYTES", "provisioned capacity of a per-TiB storage system",
     CMD_KIND(CMD_BYTES, 1, 1e21)},
    {"--drain-slowdown", NULL, "X", "async: share of speed lost while a write drains (default 0)",
     CMD_X(0, 0.99)},
    {"--environment", NULL, "NAME",
     "dedicated, new, research, hpc, cloud or marketplace (failure rates, restarts)", CMD_WORD},
    {"--failure-rates", NULL, "NAME", "failure-rate set (default: by --environment and GPU)",
     CMD_WORD},
    {"--restart", NULL, "automated|requeue", "restart profile (default: by --environment)",
     CMD_WORD},
    {"--policy", NULL, "spares|elastic|wait", "what a node failure does (default spares)",
     CMD_WORD},
    {"--spares", NULL, "N", "hot spare nodes (default 2% of the nodes)", CMD_N(0, 1 << 24)},
    {"--restart-overhead", NULL, "T", "relaunch + start-up + warm-up, instead of the profile's",
     CMD_KIND(CMD_DURATION, 0, 1e7)},
    {"--replace-time", NULL, "T", "swap in a spare node (default: the profile's)",
     CMD_KIND(CMD_DURATION, 0, 1e7)},
    {"--repair-time", NULL, "T", "until a failed node is back (default 24h)",
     CMD_KIND(CMD_DURATION, 0, 1e8)},
    {"--watchdog-timeout", NULL, "T",
     "a hung collective is found after this (default 10m, PyTorch's NCCL timeout)",
     CMD_KIND(CMD_DURATION, 0, 1e7)},
    {"--cluster-age", NULL, "D",
     "the cluster's age at the run's start, for burn-in (default: mature)",
     CMD_KIND(CMD_DAYS, 0, 36500 * 86400.0)},
    {"--spot", NULL, NULL, "spot capacity: add preemptions", CMD_WORD},
    {"--spot-preemption-rate", NULL, "X",
     "preemptions an hour of one node; a gang's grows as the catalog's spot.node_exponent "
     "(default: catalog)",
     CMD_X(0, 1000)},
    {"--spot-wait", NULL, "T", "waiting for capacity after a preemption (default: catalog)",
     CMD_KIND(CMD_DURATION, 0, 1e7)},
    {"--trials", NULL, "N", "Monte Carlo trials (default: until --tolerance is met)",
     CMD_N(1, 10000000)},
    {"--tolerance", NULL, "X", "relative standard error of P50 and P90 to stop at (default 0.002)",
     CMD_X(1e-6, 0.5)},
    {"--seed", NULL, "N", "random seed (same seed, same answer)", CMD_N(0, 2147483647L)},
};
const cmd_group_t CMD_REL_OPTS = {"Reliability", rel_opts, sizeof rel_opts / sizeof rel_opts[0]};

bool cmd_layout_given(const cmd_args_t *a)
{
    static const char *flags[] = {"--tp",
                                  "--pp",
                                  "--cp",
                                  "--ep",
                                  "--vpp",
                                  "--num-layers-per-virtual-pipeline-stage",
                                  "--micro-batch",
                                  "--zero",
                                  "--fsdp",
                                  "--distributed-optimizer",
                                  "--recompute",
                                  "--recompute-activations",
                                  "--checkpoint-activations",
                                  "--sequence-parallel",
                                  "--schedule",
                                  "--first-stage-layers",
                                  "--last-stage-layers",
                                  "--deepspeed",
                                  "--grad-accum"};
    for (size_t i = 0; i < sizeof flags / sizeof flags[0]; i++)
        if (cmd_has(a, flags[i]))
            return true;
    return false;
}

int cmd_job_setup(const cmd_args_t *a, cmd_job_t *job, err_t *err)
{
    memset(job, 0, sizeof *job);
    int rc = cmd_scenario(a, &job->s, err);
    if (rc)
        return rc;
    if (!cmd_layout_given(a)) {
        /* No layout given: the fastest that fits, as the planner finds it. */
        int gb = 0;
        if ((rc = cmd_get_int(a, "--global-batch", &gb, err)) ||
            (rc = ladder_fastest_layout(&job->s, gb, &job->search, err)))
            return rc;
        job->searched = true;
        job->step = job->search.result;
        return ERR_OK;
    }
    sim_ctx_t *ctx = sim_ctx_create();
    if (!ctx)
        return err_set(err, ERR_RUNTIME, "out of memory");
    rc = sim_run_step(ctx, &job->s.input, &job->step, err);
    sim_ctx_destroy(ctx);
    return rc;
}

void cmd_job_free(cmd_job_t *job)
{
    scenario_free(&job->s);
}

int cmd_checkpoint_bytes(const cmd_args_t *a, const model_t *m, double *bytes, err_t *err)
{
    if (cmd_has(a, "--checkpoint-size"))
        return cmd_get_double(a, "--checkpoint-size", bytes, err);
    double per = REL_CKPT_BYTES_PER_PARAM;
    int rc = cmd_get_double(a, "--checkpoint-bytes-per-param", &per, err);
    if (rc)
        return rc;
    model_params_t p;
    model_params(m, &p);
    *bytes = p.total * per;
    return ERR_OK;
}

int cmd_run_length(const cmd_args_t *a, double *tokens, double *duration_s, err_t *err)
{
    *tokens = 0;
    *duration_s = 0;
    int rc;
    if ((rc = cmd_get_double(a, "--tokens", tokens, err)) ||
        (rc = cmd_get_double(a, "--days", duration_s, err)))
        return rc;
    return ERR_OK;
}

int cmd_failure_set(const cmd_args_t *a, const cluster_t *c, const char *env_hint,
                    failure_set_t *f, cmd_failure_pick_t *pick, err_t *err)
{
    memset(pick, 0, sizeof *pick);
    const char *env = cmd_get(a, "--environment");
    if (!env)
        env = env_hint;
    int rc = failure_choose(env, c->gpu.architecture, &pick->choice, err);
    if (rc)
        return rc;
    const char *name = cmd_get(a, "--failure-rates");
    pick->set_given = name != NULL;
    return failure_load_set(name ? name : pick->choice.set, f, err);
}

/* --checkpoint-every: a duration, or "best" (0). */
static int interval_flag(const cmd_args_t *a, double *out, err_t *err)
{
    const char *v = cmd_get(a, "--checkpoint-every");
    if (!v || strcmp(v, "best") == 0) {
        *out = 0;
        return ERR_OK;
    }
    int rc = units_parse_duration(v, "--checkpoint-every", out, err);
    if (!rc && !(*out > 0))
        rc = err_setf(err, ERR_INPUT, NULL, "--checkpoint-every",
                      "must be a positive duration or 'best' (got '%s')", v);
    return rc;
}

int cmd_rel_config(const cmd_args_t *a, const cluster_t *c, const failure_set_t *f,
                   const char *env, rel_config_t *cfg, err_t *err)
{
    rel_config_default(cfg, c, f);
    int rc;
    double bw = 0, rate = -1, cap = 0, replace = -1;
    const char *v;
    if ((rc = storage_load(cmd_get(a, "--storage"), &cfg->storage, err)) ||
        (rc = restart_load(cmd_get(a, "--restart"), env, &cfg->restart, err)) ||
        (rc = restart_async_load(&cfg->async, err)) || (rc = interval_flag(a, &cfg->ckpt_interval_s, err)) ||
        (rc = cmd_get_double(a, "--restart-overhead", &cfg->restart_overhead_s, err)) ||
        (rc = cmd_get_double(a, "--replace-time", &replace, err)) ||
        (rc = cmd_get_double(a, "--repair-time", &cfg->repair_s, err)) ||
        (rc = cmd_get_double(a, "--watchdog-timeout", &cfg->watchdog_timeout_s, err)) ||
        (rc = cmd_get_double(a, "--cluster-age", &cfg->cluster_age_s, err)) ||
        (rc = failure_load_burnin(&cfg->burnin, err)) ||
        (rc = cmd_get_double(a, "--spot-wait", &cfg->preempt_wait_s, err)) ||
        (rc = cmd_get_int(a, "--spares", &cfg->spares, err)) ||
        (rc = cmd_get_int(a, "--trials", &cfg->trials, err)) ||
        (rc = cmd_get_double(a, "--tolerance", &cfg->tolerance, err)) ||
        (rc = cmd_get_double(a, "--drain-slowdown", &cfg->async.drain_slowdown, err)) ||
        (rc = cmd_get_double(a, "--spot-preemption-rate", &rate, err)))
        return rc;
    if (replace >= 0)
        cfg->restart.replace_s = replace;
    if (cfg->cluster_age_s == 0)
        cfg->cluster_age_s = 0; /* "-0" is a new cluster, printed as 0 */
    if ((v = cmd_get(a, "--keep-checkpoints")) && strcmp(v, "all") != 0) {
        long keep;
        if ((rc = units_parse_int(v, "--keep-checkpoints", 0, 100000, &keep, err)))
            return rc;
        cfg->keep_checkpoints = (int)keep;
    }
    if (v && strcmp(v, "all") == 0)
        cfg->keep_checkpoints = 0; /* every checkpoint; per-TiB sizing then uses one */
    if (cmd_has(a, "--storage-bw")) {
        if ((rc = cmd_get_double(a, "--storage-bw", &bw, err)))
            return rc;
        cfg->storage_write_bps = cfg->storage_read_bps = bw;
    }
    if (cmd_has(a, "--storage-capacity")) {
        if ((rc = cmd_get_double(a, "--storage-capacity", &cap, err)))
            return rc;
        cfg->storage_capacity_tib = cap / 1099511627776.0;
    }
    if (cmd_has(a, "--async-checkpoint"))
        cfg->ckpt_mode = CKPT_ASYNC;
    if ((v = cmd_get(a, "--checkpoint-mode"))) {
        if (cmd_has(a, "--async-checkpoint") && strcmp(v, "async") != 0)
            return err_setf(err, ERR_INPUT, NULL, "--checkpoint-mode",
                            "'%s' contradicts --async-checkpoint", v);
        if (strcmp(v, "sync") == 0)
            cfg->ckpt_mode = CKPT_SYNC;
        else if (strcmp(v, "async") == 0)
            cfg->ckpt_mode = CKPT_ASYNC;
        else if (strcmp(v, "peer") == 0)
            cfg->ckpt_mode = CKPT_PEER;
        else
            return err_setf(err, ERR_INPUT, NULL, "--checkpoint-mode",
                            "use sync, async or peer (got '%s')", v);
    }
    if ((v = cmd_get(a, "--checkpoint-format")) &&
        (rc = storage_format_parse(v, &cfg->ckpt_format, err)))
        return rc;
    if ((v = cmd_get(a, "--policy"))) {
        if (strcmp(v, "spares") == 0)
            cfg->policy = REPAIR_POLICY_SPARES;
        else if (strcmp(v, "elastic") == 0)
            cfg->policy = REPAIR_POLICY_ELASTIC;
        else if (strcmp(v, "wait") == 0)
            cfg->policy = REPAIR_POLICY_WAIT;
        else
            return err_setf(err, ERR_INPUT, NULL, "--policy",
                            "use spares, elastic or wait (got '%s')", v);
    }
    if (cmd_has(a, "--seed")) {
        long seed;
        if ((rc = cmd_get_long(a, "--seed", &seed, err)))
            return rc;
        cfg->seed = (uint64_t)seed;
    }
    if (cmd_has(a, "--spot") || rate >= 0) {
        double def_rate, def_wait;
        if ((rc = price_spot_defaults(&def_rate, &cfg->preempt_node_exponent, &def_wait, err)))
            return rc;
        cfg->preempt_per_node_hour = rate >= 0 ? rate : def_rate;
        if (!cmd_has(a, "--spot-wait"))
            cfg->preempt_wait_s = def_wait;
    }
    cfg->progress = !cmd_has(a, "--json") && !cmd_has(a, "--csv");
    return ERR_OK;
}

static const char *mode_name(ckpt_mode_t m)
{
    return m == CKPT_ASYNC ? "async" : m == CKPT_PEER ? "peer" : "sync";
}

/* Spot capacity: the preemption rate and wait, and where they come from
 * (the catalog's evidence and assumptions, or the flags). */
static void print_spot(const cmd_args_t *a, const rel_config_t *cfg)
{
    if (!(cfg->preempt_per_node_hour > 0))
        return;
    char basis[512] = "", b1[32];
    bool given_rate = cmd_has(a, "--spot-preemption-rate"), given_wait = cmd_has(a, "--spot-wait");
    err_t ignore;
    if ((!given_rate || !given_wait) && price_spot_basis(basis, sizeof basis, &ignore))
        snprintf(basis, sizeof basis, "no basis in the catalog");
    printf("  spot: %.3g preemptions an hour of one node%s, x nodes^%.3g for the gang (%s), "
           "%s waiting for capacity after each%s%s%s\n",
           cfg->preempt_per_node_hour, given_rate ? " (given)" : "", cfg->preempt_node_exponent,
           cfg->preempt_node_exponent == 0   ? "preempted as one"
           : cfg->preempt_node_exponent == 1 ? "independent nodes"
                                             : "partly together",
           units_fmt_duration(cfg->preempt_wait_s, b1, sizeof b1), given_wait ? " (given)" : "",
           basis[0] ? ": " : "", basis);
}

void cmd_rel_print_defaults(const cmd_args_t *a, const rel_config_t *cfg,
                            const cmd_failure_pick_t *pick, const rel_result_t *r)
{
    char b1[32], b2[32], b3[32], b4[32], b5[32], b6[32];
    printf("  failure rates '%s': %s\n", cfg->failures->name,
           pick->set_given ? "given (--failure-rates)" : pick->choice.why);
    if (cfg->failures->scope == FAIL_SCOPE_CLUSTER)
        printf("    ASSUMED: the set counts tickets of a whole cluster; each is taken to "
               "interrupt a job on the GPUs it hits\n");
    for (int i = 0; i < cfg->failures->n_classes; i++)
        if (cfg->failures->classes[i].copied_from[0]) {
            printf("    ASSUMED: some classes are copied from '%s' (%s)\n",
                   cfg->failures->classes[i].copied_from, cfg->failures->counts);
            break;
        }
    if (cfg->cluster_age_s >= 0)
        printf("    cluster %.3g days old at the start (--cluster-age): rates x%.2f, x%.2f a month "
               "later, to the mature rate over weeks (burn-in from OPT-175B's first weeks, "
               "failures.json burn_in)\n",
               cfg->cluster_age_s / 86400,
               failure_burnin_multiple(&cfg->burnin, cfg->cluster_age_s),
               failure_burnin_multiple(&cfg->burnin, cfg->cluster_age_s + 30 * 86400.0));
    if (cfg->cluster_age_s >= 0 && strcmp(pick->choice.environment, "new") == 0)
        printf("    CAUTION: the 'new' environment's rates were measured on a young cluster "
               "already; --cluster-age multiplies them again (name a mature environment's "
               "rates to apply the decay once)\n");
    else
        printf("    the cluster is taken as mature: no burn-in (--cluster-age D for one in its "
               "first weeks)\n");
    print_spot(a, cfg);
    if (cfg->storage_write_bps > 0)
        printf("  storage: %s given (--storage-bw)\n",
               units_fmt_bandwidth(cfg->storage_write_bps, b1, sizeof b1));
    else
        printf("  storage '%s'%s: write %s (limited by the %s), read %s (%s); %s "
               "checkpoints%s\n",
               cfg->storage.name, cmd_has(a, "--storage") ? "" : " (the default)",
               units_fmt_bandwidth(r->write_bps, b1, sizeof b1), r->write_limit,
               units_fmt_bandwidth(r->read_bps, b2, sizeof b2), r->read_limit,
               storage_format_name(cfg->ckpt_format),
               cfg->storage.assumed ? "; ASSUMED figures (see topologies/catalog/storage.json)"
                                    : "");
    printf("  checkpoint (%s) every %s: %s%s; Young/Daly sqrt(2 x %s x %s) = %s\n",
           mode_name(cfg->ckpt_mode), units_fmt_duration(r->ckpt_interval_s, b1, sizeof b1),
           r->interval_best ? "the best for this storage and failure rate" : "given",
           r->interval_best && !cmd_has(a, "--checkpoint-every") ? " (the default)" : "",
           units_fmt_duration(r->save_blocking_s, b2, sizeof b2),
           units_fmt_duration(r->unexpected_mtbf_s, b3, sizeof b3),
           units_fmt_duration(r->young_daly_s, b4, sizeof b4));
    if (r->ckpt_interval_s >= r->wall_s_p90)
        printf("    the interval is longer than the run: no periodic checkpoint, only the final "
               "save\n");
    printf("    blocks %s, durable after %s, read back in %s\n",
           units_fmt_duration(r->save_blocking_s, b1, sizeof b1),
           units_fmt_duration(r->save_write_s, b2, sizeof b2),
           units_fmt_duration(r->load_s, b3, sizeof b3));
    if (cfg->restart_overhead_s >= 0)
        printf("  restart: detection %s + %s given (--restart-overhead) + load = %s on "
               "average\n",
               units_fmt_duration(r->detect_mean_s, b1, sizeof b1),
               units_fmt_duration(cfg->restart_overhead_s, b2, sizeof b2),
               units_fmt_duration(r->restart_mean_s, b3, sizeof b3));
    else
        printf("  restart '%s'%s: detection %s + relaunch %s + start-up %s + warm-up %s + load "
               "%s = %s on average (assumed parts marked in sim/catalog/restart.json)\n",
               cfg->restart.name, cmd_has(a, "--restart") ? "" : " (by environment)",
               units_fmt_duration(r->detect_mean_s, b1, sizeof b1),
               units_fmt_duration(r->relaunch_mean_s, b2, sizeof b2),
               units_fmt_duration(r->init_s, b3, sizeof b3),
               units_fmt_duration(r->warmup_s, b4, sizeof b4),
               units_fmt_duration(r->load_s, b5, sizeof b5),
               units_fmt_duration(r->restart_mean_s, b6, sizeof b6));
    for (int i = 0; i < cfg->failures->n_classes; i++)
        if (cfg->failures->classes[i].hang) {
            printf("    a hung collective (%s) is found when the watchdog times out: %s%s\n",
                   cfg->failures->classes[i].name,
                   units_fmt_duration(cfg->watchdog_timeout_s, b1, sizeof b1),
                   cmd_has(a, "--watchdog-timeout")
                       ? " (--watchdog-timeout)"
                       : " (PyTorch's default NCCL timeout; --watchdog-timeout)");
            break;
        }
    printf("  %d hot spare node%s, repairs take %s%s\n", cfg->spares, cfg->spares == 1 ? "" : "s",
           units_fmt_duration(cfg->repair_s, b1, sizeof b1),
           cmd_has(a, "--spares") || cmd_has(a, "--repair-time")
               ? ""
               : " (ASSUMED: 2% of the nodes as spares, a day per repair)");
    if (r->adaptive)
        printf("  Monte Carlo: %d trials, until the standard errors of P50 and P90 fell below "
               "%.2g%% (%.2g%% and %.2g%%)\n",
               r->trials, 100 * r->tolerance, 100 * r->se_p50, 100 * r->se_p90);
    else
        printf("  Monte Carlo: %d trials (--trials); standard errors of P50 and P90 %.2g%% and "
               "%.2g%%\n",
               r->trials, 100 * r->se_p50, 100 * r->se_p90);
}

bool cmd_rel_defaults_json(cJSON *o, const cmd_args_t *a, const rel_config_t *cfg,
                           const cmd_failure_pick_t *pick, const rel_result_t *r)
{
    cJSON *d = cJSON_AddObjectToObject(o, "defaults");
    return d && cJSON_AddStringToObject(d, "environment", pick->choice.environment) &&
           cJSON_AddBoolToObject(d, "environment_default", pick->choice.environment_default) &&
           cJSON_AddStringToObject(d, "failure_rates", cfg->failures->name) &&
           cJSON_AddStringToObject(d, "failure_rates_chosen",
                                   pick->set_given ? "given" : pick->choice.why) &&
           cJSON_AddBoolToObject(d, "failure_rates_assumed",
                                 !pick->set_given && pick->choice.assumed) &&
           cJSON_AddStringToObject(d, "failure_scope",
                                   cfg->failures->scope == FAIL_SCOPE_CLUSTER ? "cluster" : "job") &&
           cJSON_AddStringToObject(d, "storage",
                                   cfg->storage_write_bps > 0 ? "given" : cfg->storage.name) &&
           cJSON_AddBoolToObject(d, "storage_default", !cmd_has(a, "--storage") &&
                                                           !(cfg->storage_write_bps > 0)) &&
           cJSON_AddBoolToObject(d, "storage_assumed", cfg->storage.assumed) &&
           json_add_number(d, "storage_write_bps", r->write_bps) &&
           json_add_number(d, "storage_read_bps", r->read_bps) &&
           cJSON_AddStringToObject(d, "storage_write_limit", r->write_limit) &&
           cJSON_AddStringToObject(d, "checkpoint_mode", mode_name(cfg->ckpt_mode)) &&
           cJSON_AddStringToObject(d, "checkpoint_format", storage_format_name(cfg->ckpt_format)) &&
           cJSON_AddBoolToObject(d, "checkpoint_interval_best", r->interval_best) &&
           cJSON_AddStringToObject(d, "restart", cfg->restart_overhead_s >= 0 ? "given"
                                                                            : cfg->restart.name) &&
           json_add_number(d, "restart_detect_s", r->detect_mean_s) &&
           json_add_number(d, "restart_relaunch_s", r->relaunch_mean_s) &&
           json_add_number(d, "restart_init_s", r->init_s) &&
           json_add_number(d, "restart_warmup_s", r->warmup_s) &&
           json_add_number(d, "restart_mean_s", r->restart_mean_s) &&
           json_add_number(d, "spares", cfg->spares) &&
           json_add_number(d, "repair_s", cfg->repair_s) &&
           cJSON_AddBoolToObject(d, "spares_assumed",
                                 !cmd_has(a, "--spares") && !cmd_has(a, "--repair-time")) &&
           cJSON_AddBoolToObject(d, "trials_adaptive", r->adaptive) &&
           json_add_number(d, "tolerance", r->tolerance) &&
           json_add_number(d, "se_p50", r->se_p50) && json_add_number(d, "se_p90", r->se_p90) &&
           json_add_number(d, "seed", (double)cfg->seed);
}
