#include "cli/job.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/units.h"
#include "topologies/price.h"

static const cli_opt_t run_opts[] = {
    {"--tokens", NULL, "N", "tokens to train (2T, 15T, 1.5e12)", CLI_KIND(CLI_COUNT, 1, 1e18)},
    {"--days", NULL, "D", "wall-clock days (a fixed duration, or a claim to check)",
     CLI_KIND(CLI_DAYS, 60, 36500 * 86400.0)},
};
const cli_group_t CLI_RUN_OPTS = {"Run", run_opts, sizeof run_opts / sizeof run_opts[0]};

static const cli_opt_t rel_opts[] = {
    {"--step-time", NULL, "S", "step time (default: simulated for --model)",
     CLI_KIND(CLI_DURATION, 1e-6, 1e6)},
    {"--tokens-per-step", NULL, "N", "tokens per step with --step-time (default: the layout's)",
     CLI_KIND(CLI_COUNT, 1, 1e12)},
    {"--checkpoint-every", NULL, "T", "compute time between checkpoints (default 30m)",
     CLI_KIND(CLI_DURATION, 1, DBL_MAX)},
    {"--checkpoint-size", NULL, "BYTES", "one checkpoint (default: parameters x 12 bytes)",
     CLI_KIND(CLI_BYTES, 0, 1e18)},
    {"--checkpoint-bytes-per-param", NULL, "N", "bytes per parameter saved (default 12)",
     CLI_X(0, 64)},
    {"--async-checkpoint", NULL, NULL, "block only for the snapshot to host memory", CLI_WORD},
    {"--storage-bw", NULL, "BW", "aggregate checkpoint write/read bandwidth (e.g. 2TB/s)",
     CLI_KIND(CLI_BANDWIDTH, 1e6, 1e15)},
    {"--failure-rates", NULL, "NAME", "failure-rate set (llama3-405b, meta-rsc1, meta-rsc2)",
     CLI_WORD},
    {"--policy", NULL, "spares|elastic|wait", "what a node failure does (default spares)",
     CLI_WORD},
    {"--spares", NULL, "N", "hot spare nodes (default 2% of the nodes)", CLI_N(0, 1 << 24)},
    {"--restart-overhead", NULL, "T", "reschedule + initialise + warm up (default 10m)",
     CLI_KIND(CLI_DURATION, 0, 1e7)},
    {"--replace-time", NULL, "T", "extra time to swap in a spare node (default 0: part of the restart)",
     CLI_KIND(CLI_DURATION, 0, 1e7)},
    {"--repair-time", NULL, "T", "until a failed node is back (default 24h)",
     CLI_KIND(CLI_DURATION, 0, 1e8)},
    {"--spot", NULL, NULL, "spot capacity: add preemptions", CLI_WORD},
    {"--spot-preemption-rate", NULL, "X", "preemptions per node-hour (default: catalog)",
     CLI_X(0, 1000)},
    {"--spot-wait", NULL, "T", "waiting for capacity after a preemption (default 30m)",
     CLI_KIND(CLI_DURATION, 0, 1e7)},
    {"--trials", NULL, "N", "Monte Carlo trials (default 2000)", CLI_N(1, 10000000)},
    {"--seed", NULL, "N", "random seed (same seed, same answer)", CLI_N(0, 2147483647L)},
};
const cli_group_t CLI_REL_OPTS = {"Reliability", rel_opts, sizeof rel_opts / sizeof rel_opts[0]};

bool cli_layout_given(const cli_args_t *a)
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
        if (cli_has(a, flags[i]))
            return true;
    return false;
}

int cli_job_setup(const cli_args_t *a, cli_job_t *job, err_t *err)
{
    memset(job, 0, sizeof *job);
    int rc = cli_scenario(a, &job->s, err);
    if (rc)
        return rc;
    if (!cli_layout_given(a)) {
        /* No layout given: the fastest that fits, as the planner finds it. */
        int gb = 0;
        if ((rc = cli_get_int(a, "--global-batch", &gb, err)) ||
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

void cli_job_free(cli_job_t *job)
{
    scenario_free(&job->s);
}

int cli_checkpoint_bytes(const cli_args_t *a, const model_t *m, double *bytes, err_t *err)
{
    if (cli_has(a, "--checkpoint-size"))
        return cli_get_double(a, "--checkpoint-size", bytes, err);
    double per = REL_CKPT_BYTES_PER_PARAM;
    int rc = cli_get_double(a, "--checkpoint-bytes-per-param", &per, err);
    if (rc)
        return rc;
    model_params_t p;
    model_params(m, &p);
    *bytes = p.total * per;
    return ERR_OK;
}

int cli_run_length(const cli_args_t *a, double *tokens, double *duration_s, err_t *err)
{
    *tokens = 0;
    *duration_s = 0;
    int rc;
    if ((rc = cli_get_double(a, "--tokens", tokens, err)) ||
        (rc = cli_get_double(a, "--days", duration_s, err)))
        return rc;
    return ERR_OK;
}

int cli_rel_config(const cli_args_t *a, const cluster_t *c, const failure_set_t *f,
                   rel_config_t *cfg, err_t *err)
{
    rel_config_default(cfg, c, f);
    int rc;
    double bw = 0, rate = -1;
    const char *v;
    if ((rc = cli_get_double(a, "--checkpoint-every", &cfg->ckpt_interval_s, err)) ||
        (rc = cli_get_double(a, "--restart-overhead", &cfg->restart_overhead_s, err)) ||
        (rc = cli_get_double(a, "--replace-time", &cfg->replace_s, err)) ||
        (rc = cli_get_double(a, "--repair-time", &cfg->repair_s, err)) ||
        (rc = cli_get_double(a, "--spot-wait", &cfg->preempt_wait_s, err)) ||
        (rc = cli_get_int(a, "--spares", &cfg->spares, err)) ||
        (rc = cli_get_int(a, "--trials", &cfg->trials, err)) ||
        (rc = cli_get_double(a, "--spot-preemption-rate", &rate, err)))
        return rc;
    if (cli_has(a, "--storage-bw")) {
        if ((rc = cli_get_double(a, "--storage-bw", &bw, err)))
            return rc;
        cfg->storage_write_bps = cfg->storage_read_bps = bw;
    }
    if (cli_has(a, "--async-checkpoint"))
        cfg->ckpt_mode = CKPT_ASYNC;
    if ((v = cli_get(a, "--policy"))) {
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
    if (cli_has(a, "--seed")) {
        long seed;
        if ((rc = cli_get_long(a, "--seed", &seed, err)))
            return rc;
        cfg->seed = (uint64_t)seed;
    }
    if (cli_has(a, "--spot") || rate >= 0) {
        double def_rate, def_wait;
        if ((rc = price_spot_defaults(&def_rate, &def_wait, err)))
            return rc;
        cfg->preempt_per_node_hour = rate >= 0 ? rate : def_rate;
        if (!cli_has(a, "--spot-wait"))
            cfg->preempt_wait_s = def_wait;
    }
    if (!(cfg->ckpt_interval_s > 0))
        return err_setf(err, ERR_INPUT, NULL, "--checkpoint-every",
                        "must be a positive duration");
    cfg->progress = !cli_has(a, "--json");
    return ERR_OK;
}
