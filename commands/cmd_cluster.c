/* scaleplan cluster: many training jobs on one GPU pool, replayed event by
 * event under a scheduling policy (cluster/replay.h): queue delays,
 * completion times, utilization, goodput and cost.
 *
 * This file reads the flags, the job list (a file, or a synthesized
 * workload), prices model + tokens jobs with the step simulator
 * (cluster/duration.h) and prints the result.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands/args.h"
#include "commands/cluster_extras.h"
#include "commands/cluster_planner.h"
#include "commands/cluster_whatif.h"
#include "commands/commands.h"
#include "commands/output.h"
#include "cluster/formats.h"
#include "cluster/duration.h"
#include "cluster/failrate.h"
#include "cluster/replay.h"
#include "cluster/spot.h"
#include "cluster/synth.h"
#include "cluster/traces.h"
#include "cluster/tracesynth.h"
#include "cluster/trace_out.h"
#include "common/json.h"
#include "common/notes.h"
#include "common/progress.h"
#include "common/rng.h"
#include "common/units.h"
#include "reports/table.h"
#include "topologies/gpu.h"
#include "topologies/price.h"

#define DEFAULT_LOAD 0.9 /* --synthesize: offered load (ASSUMED: a busy, not saturated pool) */
#define DEFAULT_CHECKPOINT_S 3600.0 /* --failures: ASSUMED hourly checkpoints (said) */
#define DEFAULT_RESTART_S 600.0     /* --failures: ASSUMED 10 min to restart a gang (said) */
#define DEFAULT_TRACE_JOBS 10000    /* --synthesize NAME: jobs without --jobs (said) */
#define DEFAULT_REPAIR_S 86400.0    /* --spares: ASSUMED a swapped-out node is back in a day */

static const cmd_opt_t own_opts[] = {
    {"--trace", NULL, "FILE", "the job list to replay (see --trace-format)", CMD_WORD},
    {"--trace-format", NULL, "FORMAT", "how --trace is written: jobs, tiresias, muri, helios, "
     "acme, philly, pai, openb (default jobs)", CMD_WORD},
    {"--synthesize", NULL, "N|NAME", "instead of --trace: N jobs of a heavy-tailed mix, or a "
     "workload from trace NAME's published statistics: helios, philly, pai, acme (below)",
     CMD_WORD},
    {"--jobs", NULL, "N", "--synthesize NAME: how many jobs (default 10000)", CMD_N(1, 10000000)},
    {"--load", NULL, "X", "--synthesize: offered GPU-time over the pool's (default 0.9)",
     CMD_X(0.01, 100)},
    {"--seed", NULL, "S", "--synthesize and --failures: the random seed (default 20240723)",
     CMD_N(0, 2147483647)},
    {"--gpus", NULL, "N", "GPUs in the pool (required without --cluster)", CMD_N(1, 1 << 24)},
    {"--cluster", NULL, "NxGPU,...", "a pool of several GPU types: groups such as "
     "512xh100-sxm,256xa100-80g (a job's gpu column holds it to one; others take the first "
     "group that fits)", CMD_WORD},
    {"--vc-gpus", NULL, "FILE", "a pool of the trace's virtual clusters: Helios's "
     "cluster_gpu_number.csv (date,<vc>...,total); each job runs in its VC's GPUs (hard quotas)",
     CMD_WORD},
    {"--vc-date", NULL, "YYYY-MM-DD", "--vc-gpus: the VCs' GPUs on this date (default: each "
     "VC's most over the file)", CMD_WORD},
    {"--gpus-per-node", NULL, "N", "GPUs per node; gangs are placed on whole nodes first "
     "(default 8, or the pool when smaller)", CMD_N(1, 1024)},
    {"--gpu", NULL, "NAME", "the pool's GPU, for jobs given as model + tokens and --failures",
     CMD_WORD},
    {"--policy", NULL, "NAME",
     "fifo|backfill|priority|srtf|srsf|las|ftf|sjf|fifo-fit|quota|planner (default fifo)",
     CMD_WORD},
    {"--objective", NULL, "makespan|jct|cost", "--policy planner: what the job sizes minimise "
     "(default makespan; cost: GPU-hours allocated)", CMD_WORD},
    {"--las-threshold", NULL, "GPU-S[,GPU-S...]", "las: ascending queue limits in GPU-seconds, "
     "n limits making n+1 queues (default 3600, the Tiresias simulator's two queues; Muri's "
     "simulator runs 3250,7200)", CMD_WORD},
    {"--lease", NULL, "DURATION", "ftf: run time before a job may be preempted (default 10m, "
     "assumed)", CMD_KIND(CMD_DURATION, 1, 1e9)},
    {"--placement", NULL, "first|fastest", "--cluster: a job without a gpu goes to the first "
     "group with room, or where it runs fastest among those (type-aware; default first)",
     CMD_WORD},
    {"--price", NULL, "$/GPU-h", "price per GPU-hour: cost_usd is the pool's GPUs over the "
     "makespan at this price (default: no cost)", CMD_KIND(CMD_PRICE, 0, 1e4)},
    {"--failures", NULL, NULL, "interrupt running jobs at the failure rates `reliability` gives "
     "a job of their size on --gpu; a job goes back to its last checkpoint", CMD_WORD},
    {"--environment", NULL, "ENV", "--failures: the failure-rate environment (as reliability; "
     "default the catalog's)", CMD_WORD},
    {"--checkpoint-every", NULL, "DURATION", "--failures: progress between checkpoints "
     "(default 1h)", CMD_KIND(CMD_DURATION, 1, 1e9)},
    {"--restart-time", NULL, "DURATION", "--failures: run time a restart costs (default 10m)",
     CMD_KIND(CMD_DURATION, 0, 1e9)},
    {"--spares", NULL, "N", "--failures: N GPUs (whole nodes) of hot spares outside the pool: a "
     "failed gang swaps one in and restarts in place instead of queueing again",
     CMD_N(0, 1 << 24)},
    {"--repair-time", NULL, "DURATION", "--spares: how long a swapped-out node takes to be a "
     "spare again (default 1d, assumed)", CMD_KIND(CMD_DURATION, 1, 1e9)},
    {"--per-job", NULL, NULL, "also list every job (start, end, queue delay, GPU-hours)",
     CMD_WORD},
    {"--perfetto", NULL, "FILE", "write the timeline as Chrome/Perfetto trace JSON (one track "
     "per job, GPUs in use as a counter)", CMD_WORD},
    {"--spot", NULL, "SHARE", "that share of the pool (whole nodes) is spot capacity, reclaimed "
     "at Poisson times: the jobs on it go back to their last checkpoint", CMD_X(0, 0.99)},
    {"--spot-preemption-rate", NULL, "R", "--spot: reclaims per spot node-hour (default: the "
     "catalog's 0.33 preemptions a job-hour from AWS spot traces, spread over the share's nodes)", CMD_X(1e-9, 1e6)},
    {"--spot-outage", NULL, "DURATION", "--spot: how long a reclaimed node stays away "
     "(default the catalog's wait for capacity)", CMD_KIND(CMD_DURATION, 1, 1e9)},
    {"--spot-trace", NULL, "FILE", "--spot: the spot GPUs there over time (CSV t_s,spot_gpus) "
     "instead of Poisson reclaims", CMD_WORD},
    {"--spot-price", NULL, "$/GPU-h", "--spot: the spot GPUs' price (default --price)",
     CMD_KIND(CMD_PRICE, 0, 1e4)},
    {"--quota", NULL, "TEAM=GPUS,...", "--policy quota: each team's nominal quota (a job's team "
     "column); idle GPUs are borrowed and reclaimed by preemption", CMD_WORD},
    {"--start", NULL, "YYYY-MM-DD", "the day the first job is submitted: the finish date is "
     "printed", CMD_WORD},
    {"--what-if", NULL, "CHANGE,...", "replay again with each change: gpus=+64 (or -N, N), "
     "policy=NAME, spot=0.3; a table next to the replay as given", CMD_WORD},
    CMD_REPORT_OPT,
};
static const cmd_group_t own_group = {"Cluster", own_opts, sizeof own_opts / sizeof own_opts[0]};

#define MAX_GROUPS 64 /* GPU types (or virtual clusters) one pool may have */
#define MAX_TEAMS 64  /* --quota entries */

/* What the command read from its flags. */
typedef struct {
    creplay_config_t cfg;
    const char *trace, *format, *gpu;
    const char *synth_name; /* --synthesize NAME (a trace's statistics), or NULL */
    int synth_n, seed;
    double load;
    char team_name[MAX_TEAMS][64];
    const char *team_names[MAX_TEAMS];
    int team_quota[MAX_TEAMS];
    bool price_given;
    double spot_price;  /* --spot-price, 0 = --price */
    cspot_trace_t spot_trace; /* --spot-trace */
    long start_day;     /* --start, days since 1970-01-01; -1 = not given */
    const char *start_text;
    cfail_t *fail; /* with --failures */
    int64_t *group_dur; /* [jobs x groups] run times per GPU type (several types) */
    int group_gpus[MAX_GROUPS];
    char group_type[MAX_GROUPS][64];
    const char *group_types[MAX_GROUPS];
    ctrace_recorded_t rec; /* what the trace itself recorded (rec.n = 0: nothing) */
    bool vc_pool;          /* --vc-gpus: the groups are the trace's virtual clusters */
    bool planner;       /* --policy planner: sizes chosen, then fifo or backfill */
    cluster_planner_t plan;
    ctimeline_t timeline; /* with --report or --perfetto */
    cluster_buy_t buy;
    cluster_whatif_t whatif;
    notes_t notes;
} opts_t;

static int read_policy(const cmd_args_t *a, opts_t *o, err_t *err)
{
    const char *name = cmd_get(a, "--policy") ? cmd_get(a, "--policy") : "fifo";
    const char *obj = cmd_get(a, "--objective") ? cmd_get(a, "--objective") : "makespan";
    o->planner = strcmp(name, "planner") == 0;
    if (o->planner && cplan_objective_find(obj) < 0)
        return err_setf(err, ERR_INPUT, NULL, "--objective", "makespan, jct or cost (got '%s')",
                        obj);
    o->plan.objective = (cplan_objective_t)cplan_objective_find(obj);
    if (!o->planner && cmd_has(a, "--objective"))
        notes_add(&o->notes, NOTE_IGNORED, "--objective", "only --policy planner uses it");
    if ((o->cfg.policy = cpolicy_find(o->planner ? "fifo" : name)))
        return ERR_OK;
    int n;
    const cpolicy_t *all = cpolicy_all(&n);
    char list[160] = "";
    for (int i = 0; i < n; i++)
        snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s", i ? ", " : "",
                 all[i].name);
    return err_setf(err, ERR_INPUT, NULL, "--policy", "unknown policy '%s' (one of %s, planner)",
                    name, list);
}

/* --spares and --repair-time (with --failures). */
static int read_spares(const cmd_args_t *a, opts_t *o, err_t *err)
{
    double repair_s = DEFAULT_REPAIR_S;
    int rc;
    if ((rc = cmd_get_int(a, "--spares", &o->cfg.spare_gpus, err)) ||
        (rc = cmd_get_double(a, "--repair-time", &repair_s, err)))
        return rc;
    o->cfg.repair_ms = (int64_t)llround(repair_s * 1000);
    if (o->cfg.spare_gpus % o->cfg.gpus_per_node)
        return err_setf(err, ERR_INPUT, NULL, "--spares", "%d is not whole nodes of %d",
                        o->cfg.spare_gpus, o->cfg.gpus_per_node);
    if (o->cfg.spare_gpus && !cmd_has(a, "--repair-time"))
        notes_add(&o->notes, NOTE_ASSUMED, "--repair-time", "a node swapped out for a spare is "
                  "a spare again after 1 day (give yours)");
    if (o->cfg.spare_gpus)
        notes_add(&o->notes, NOTE_ASSUMED, "--spares", "without a free spare a failed gang "
                  "queues again and its node is taken as repaired at once; the spares are paid "
                  "with the pool (cost)");
    return ERR_OK;
}

/* --failures and its settings, each default said. */
static int read_failures(const cmd_args_t *a, opts_t *o, err_t *err)
{
    static const char *const with[] = {"--environment", "--checkpoint-every", "--restart-time",
                                       "--spares", "--repair-time"};
    if (!cmd_has(a, "--failures")) {
        for (int i = 0; i < 5; i++)
            if (cmd_has(a, with[i]))
                notes_add(&o->notes, NOTE_IGNORED, with[i], "goes with --failures");
        return ERR_OK;
    }
    double ckpt_s = DEFAULT_CHECKPOINT_S, restart_s = DEFAULT_RESTART_S;
    int rc;
    if (o->cfg.n_groups > 1)
        return err_setf(err, ERR_INPUT, NULL, "--failures", "a pool of several GPU types "
                        "(--cluster) is not supported with --failures yet");
    if ((rc = cmd_get_double(a, "--checkpoint-every", &ckpt_s, err)) ||
        (rc = cmd_get_double(a, "--restart-time", &restart_s, err)))
        return rc;
    o->fail = cfail_create(cmd_get(a, "--gpu"), cmd_get(a, "--environment"), a->catalog, err);
    if (!o->fail)
        return err->code;
    o->cfg.fail_rate_per_hour = cfail_rate_per_hour;
    o->cfg.fail_ctx = o->fail;
    o->cfg.checkpoint_ms = (int64_t)llround(ckpt_s * 1000);
    o->cfg.restart_ms = (int64_t)llround(restart_s * 1000);
    o->cfg.seed = (uint64_t)o->seed;
    if ((rc = read_spares(a, o, err)))
        return rc;
    notes_add(&o->notes, NOTE_ASSUMED, "--failures", "rates of the set %s; seed %d",
              cfail_describe(o->fail), o->seed);
    if (!cmd_has(a, "--checkpoint-every"))
        notes_add(&o->notes, NOTE_ASSUMED, "--checkpoint-every", "1 h of progress between "
                  "checkpoints (a common hourly interval; give yours)");
    if (!cmd_has(a, "--restart-time"))
        notes_add(&o->notes, NOTE_ASSUMED, "--restart-time", "10 min to restart a gang after a "
                  "failure (give yours; reliability's restart profiles price it by scale)");
    return ERR_OK;
}

/* --cluster NxGPU,...: the groups, each GPU a catalog name; *total gets
 * their GPUs. */
static int read_groups(const cmd_args_t *a, opts_t *o, int *total, err_t *err)
{
    const char *v = cmd_get(a, "--cluster");
    *total = 0;
    for (const char *p = v; p && *p;) {
        size_t len = strcspn(p, ",");
        char item[96], name[64];
        long n = 0;
        int used = 0;
        int cut = (int)(len < sizeof item - 1 ? len : sizeof item - 1);
        snprintf(item, sizeof item, "%.*s", cut, p);
        if (o->cfg.n_groups == MAX_GROUPS || sscanf(item, "%ldx%63s%n", &n, name, &used) != 2 ||
            (size_t)used != strlen(item) || n < 1 || n > (1 << 24) || *total > (1 << 24) - n)
            return err_setf(err, ERR_INPUT, NULL, "--cluster",
                            "'%s' is not COUNTxGPU (512xh100-sxm; at most %d groups, %d GPUs)",
                            item, MAX_GROUPS, 1 << 24);
        gpu_t g;
        int rc = gpu_load_in(a->catalog, name, &g, err);
        if (rc)
            return err_readdress(err, NULL, "--cluster");
        int k = o->cfg.n_groups++;
        o->group_gpus[k] = (int)n;
        /* the catalog's spelling (h100 -> h100-sxm) */
        snprintf(o->group_type[k], sizeof o->group_type[k], "%s", g.name);
        o->group_types[k] = o->group_type[k];
        *total += (int)n;
        p += len + (p[len] == ',');
    }
    if (o->cfg.n_groups == 0)
        return err_setf(err, ERR_INPUT, NULL, "--cluster", "no groups given (512xh100-sxm,...)");
    o->cfg.group_gpus = o->group_gpus;
    o->cfg.group_types = o->group_types;
    return ERR_OK;
}

/* --vc-gpus FILE: one group per virtual cluster with GPUs; *total gets
 * their sum. */
static int read_vc_groups(const cmd_args_t *a, opts_t *o, int *total, err_t *err)
{
    ctrace_vcs_t v;
    const char *date = cmd_get(a, "--vc-date");
    int rc = ctrace_read_vc_gpus(cmd_get(a, "--vc-gpus"), date, &v, err);
    if (rc)
        return rc;
    *total = 0;
    for (int k = 0; k < v.n; k++) {
        if (v.gpus[k] == 0)
            continue;
        int g = o->cfg.n_groups++;
        o->group_gpus[g] = v.gpus[k];
        snprintf(o->group_type[g], sizeof o->group_type[g], "%s", v.name[k]);
        o->group_types[g] = o->group_type[g];
        *total += v.gpus[k];
    }
    if (o->cfg.n_groups == 0)
        return err_setf(err, ERR_INPUT, cmd_get(a, "--vc-gpus"), NULL, "no VC has GPUs%s%s",
                        date ? " on " : "", date ? date : "");
    o->cfg.group_gpus = o->group_gpus;
    o->cfg.group_types = o->group_types;
    o->vc_pool = true;
    notes_add(&o->notes, NOTE_ASSUMED, "--vc-gpus", "%d VCs, %d GPUs, %s; a job runs only in "
              "its VC's GPUs (hard quotas, no borrowing)", o->cfg.n_groups, *total,
              date ? "on --vc-date" : "each VC's most over the file's dates (give --vc-date)");
    return ERR_OK;
}

/* The pool: --gpus or --cluster's groups, in nodes of --gpus-per-node. */
static int read_pool(const cmd_args_t *a, opts_t *o, err_t *err)
{
    int gpus = 0, gpn = 0, grouped = 0, rc;
    if ((rc = cmd_get_int(a, "--gpus", &gpus, err)) ||
        (rc = cmd_get_int(a, "--gpus-per-node", &gpn, err)) ||
        (cmd_has(a, "--cluster") && (rc = read_groups(a, o, &grouped, err))))
        return rc;
    if (cmd_has(a, "--vc-gpus") && cmd_has(a, "--cluster"))
        return err_setf(err, ERR_INPUT, NULL, "--vc-gpus", "give --vc-gpus or --cluster, not both");
    if (cmd_has(a, "--vc-gpus") && (rc = read_vc_groups(a, o, &grouped, err)))
        return rc;
    if (cmd_has(a, "--vc-date") && !cmd_has(a, "--vc-gpus"))
        notes_add(&o->notes, NOTE_IGNORED, "--vc-date", "goes with --vc-gpus");
    if (grouped && gpus && gpus != grouped)
        return err_setf(err, ERR_INPUT, NULL, "--gpus", "%d, but %s has %d GPUs", gpus,
                        cmd_has(a, "--vc-gpus") ? "--vc-gpus" : "--cluster", grouped);
    gpus = grouped ? grouped : gpus;
    if (!gpus)
        return err_setf(err, ERR_INPUT, NULL, "--gpus", "say how many GPUs the pool has");
    creplay_config_t groups = o->cfg;
    creplay_config_default(&o->cfg, gpus);
    o->cfg.n_groups = groups.n_groups;
    o->cfg.group_gpus = groups.group_gpus;
    o->cfg.group_types = groups.group_types;
    if (gpn)
        o->cfg.gpus_per_node = gpn;
    else
        notes_add(&o->notes, NOTE_ASSUMED, "--gpus-per-node", "%d (nodes of 8 GPUs, as HGX/DGX "
                  "servers; give --gpus-per-node)", o->cfg.gpus_per_node);
    for (int g = 0; g < (o->cfg.n_groups ? o->cfg.n_groups : 1); g++) {
        int n = o->cfg.n_groups ? o->group_gpus[g] : gpus;
        if (n % o->cfg.gpus_per_node)
            return err_setf(err, ERR_INPUT, NULL, "--gpus-per-node",
                            "%d does not divide %s %d (the pool is whole nodes)",
                            o->cfg.gpus_per_node, o->vc_pool ? "the VC of" : o->cfg.n_groups
                            ? "the --cluster group of" : "--gpus", n);
    }
    return ERR_OK;
}

/* --las-threshold GPU-S[,GPU-S...]: positive, ascending, at most
 * CPOLICY_LAS_MAX_LIMITS of them. */
static int read_las_limits(const cmd_args_t *a, opts_t *o, err_t *err)
{
    const char *v = cmd_get(a, "--las-threshold");
    if (!v)
        return ERR_OK;
    int n = 0;
    for (const char *s = v; ; s++) {
        char *end;
        double x = strtod(s, &end);
        if (end == s || (*end != ',' && *end != '\0') || !(x >= 1 && x <= 1e12))
            return err_setf(err, ERR_INPUT, NULL, "--las-threshold", "'%s' is not a list of "
                            "GPU-seconds from 1 to 1e12 separated by commas", v);
        if (n == CPOLICY_LAS_MAX_LIMITS)
            return err_setf(err, ERR_INPUT, NULL, "--las-threshold", "'%s': at most %d limits",
                            v, CPOLICY_LAS_MAX_LIMITS);
        if (n > 0 && x <= o->cfg.las_limits_gpu_s[n - 1])
            return err_setf(err, ERR_INPUT, NULL, "--las-threshold", "'%s': the limits must "
                            "ascend", v);
        o->cfg.las_limits_gpu_s[n++] = x;
        s = end;
        if (*end == '\0')
            break;
    }
    o->cfg.n_las_limits = n;
    return ERR_OK;
}

/* The policy's settings, each default said when the policy uses it. */
static int read_policy_settings(const cmd_args_t *a, opts_t *o, err_t *err)
{
    int rc;
    double lease_s = CPOLICY_FTF_LEASE_S;
    if ((rc = read_las_limits(a, o, err)) ||
        (rc = cmd_get_double(a, "--lease", &lease_s, err)) || (rc = read_policy(a, o, err)))
        return rc;
    o->cfg.lease_ms = (int64_t)llround(lease_s * 1000);
    if (cmd_has(a, "--las-threshold") && strcmp(o->cfg.policy->name, "las") != 0)
        notes_add(&o->notes, NOTE_IGNORED, "--las-threshold", "only --policy las uses it");
    if (o->cfg.policy->leased && !cmd_has(a, "--lease"))
        notes_add(&o->notes, NOTE_ASSUMED, "--lease", "10 min before a running job may be "
                  "preempted (Themis grants GPUs in leases; give yours)");
    else if (!o->cfg.policy->leased && cmd_has(a, "--lease"))
        notes_add(&o->notes, NOTE_IGNORED, "--lease", "only --policy ftf uses it");
    return ERR_OK;
}

/* --synthesize N (the assumed mix) or NAME (a trace's published
 * statistics, with --jobs). */
static int read_synthesize(const cmd_args_t *a, opts_t *o, err_t *err)
{
    const char *v = cmd_get(a, "--synthesize");
    char *end;
    if (!v)
        return cmd_has(a, "--jobs") ? (notes_add(&o->notes, NOTE_IGNORED, "--jobs",
                                                 "goes with --synthesize NAME"), ERR_OK)
                                    : ERR_OK;
    long n = strtol(v, &end, 10);
    if (end != v && !*end) {
        if (n < 1 || n > 10000000)
            return err_setf(err, ERR_INPUT, NULL, "--synthesize", "N must be 1 to 10000000 "
                            "(got %s)", v);
        o->synth_n = (int)n;
        if (cmd_has(a, "--jobs"))
            notes_add(&o->notes, NOTE_IGNORED, "--jobs", "goes with --synthesize NAME; "
                      "--synthesize %d gives the count", o->synth_n);
        return ERR_OK;
    }
    o->synth_name = v;
    o->synth_n = DEFAULT_TRACE_JOBS;
    return cmd_get_int(a, "--jobs", &o->synth_n, err);
}

/* Reclaims per spot node-hour from the catalog's rate of one job's
 * preemptions: a gang of n nodes is preempted rate x n^exponent times an
 * hour (exponent 0 in the evidence: as one), so the share's n nodes, each
 * reclaimed on its own here, take that many reclaims an hour between them. */
static double spot_node_rate(double rate, double exponent, int nodes)
{
    return nodes > 0 ? rate * pow(nodes, exponent) / nodes : rate;
}

/* --spot and its settings; the checkpoint interval it needs (said when
 * --failures has not set it). */
static int read_spot(const cmd_args_t *a, opts_t *o, err_t *err)
{
    double share = 0, per_h = 0, out_s = 0, node_exponent = 1;
    int rc;
    if ((rc = price_spot_defaults(&per_h, &node_exponent, &out_s, err)) ||
        (rc = cmd_get_double(a, "--spot", &share, err)) ||
        (rc = cmd_get_double(a, "--spot-preemption-rate", &per_h, err)) ||
        (rc = cmd_get_double(a, "--spot-outage", &out_s, err)) ||
        (rc = cmd_get_double(a, "--spot-price", &o->spot_price, err)))
        return rc;
    int gpn = o->cfg.gpus_per_node;
    o->cfg.spot_gpus = (int)(share * o->cfg.gpus) / gpn * gpn;
    if (!(share > 0))
        return cmd_has(a, "--spot-trace")
                   ? err_setf(err, ERR_INPUT, NULL, "--spot-trace", "give --spot SHARE too (the "
                              "share of the pool the trace describes)")
                   : ERR_OK;
    if (o->cfg.spot_gpus == 0)
        return err_setf(err, ERR_INPUT, NULL, "--spot", "%g of %d GPUs is less than one node of "
                        "%d", share, o->cfg.gpus, gpn);
    if (!cmd_has(a, "--spot-preemption-rate"))
        per_h = spot_node_rate(per_h, node_exponent, o->cfg.spot_gpus / gpn);
    o->cfg.spot_reclaims_per_node_hour = per_h;
    o->cfg.spot_outage_ms = (int64_t)llround(out_s * 1000);
    o->cfg.seed = (uint64_t)o->seed;
    if (cmd_has(a, "--spot-trace")) {
        if ((rc = cspot_trace_read(cmd_get(a, "--spot-trace"), o->cfg.spot_gpus, gpn,
                                   &o->spot_trace, err)))
            return rc;
        o->cfg.spot_trace_n = o->spot_trace.n;
        o->cfg.spot_trace_ms = o->spot_trace.at_ms;
        o->cfg.spot_trace_nodes = o->spot_trace.nodes;
        notes_add(&o->notes, NOTE_ASSUMED, "--spot-trace", "the spot share's %d GPUs follow %s "
                  "(%d points); the jobs that free a node taken back go back to their last "
                  "checkpoint", o->cfg.spot_gpus, cmd_get(a, "--spot-trace"), o->spot_trace.n);
    } else if (!cmd_has(a, "--spot-preemption-rate") || !cmd_has(a, "--spot-outage"))
        notes_add(&o->notes, NOTE_ASSUMED, "--spot", "each spot node reclaimed %.3g times a "
                  "node-hour and back after %.0f s (the catalog's spot rates, prices.json: a "
                  "job's preemptions an hour counted on AWS spot traces, a gang preempted as one, "
                  "spread over the share's nodes, each reclaimed on its own here; give yours: "
                  "--spot-preemption-rate, --spot-outage); seed %d", per_h, out_s, o->seed);
    if (!o->fail && !o->cfg.checkpoint_ms) {
        o->cfg.checkpoint_ms = (int64_t)(DEFAULT_CHECKPOINT_S * 1000);
        notes_add(&o->notes, NOTE_ASSUMED, "--spot", "1 h of progress between checkpoints for "
                  "jobs without checkpoint_s (a common hourly interval)");
    }
    return ERR_OK;
}

/* --quota TEAM=GPUS,...: each at most the pool, together at most the pool. */
static int read_quota(const cmd_args_t *a, opts_t *o, err_t *err)
{
    const char *v = cmd_get(a, "--quota");
    bool quota_policy = strcmp(o->cfg.policy->name, "quota") == 0;
    if (v && !quota_policy)
        notes_add(&o->notes, NOTE_IGNORED, "--quota", "only --policy quota uses it");
    if (!v || !quota_policy) {
        if (quota_policy)
            notes_add(&o->notes, NOTE_ASSUMED, "--policy", "quota without --quota: no team has "
                      "a quota, every job borrows");
        return ERR_OK;
    }
    long sum = 0;
    for (const char *p = v; *p;) {
        size_t len = strcspn(p, ",");
        char item[96];
        long g = 0;
        int used = 0, k = o->cfg.n_teams;
        snprintf(item, sizeof item, "%.*s", (int)(len < 95 ? len : 95), p);
        char *eq = strchr(item, '=');
        if (k == MAX_TEAMS || !eq || eq == item || (size_t)(eq - item) >= sizeof o->team_name[0] ||
            sscanf(eq + 1, "%ld%n", &g, &used) != 1 || eq[1 + used] || g < 0)
            return err_setf(err, ERR_INPUT, NULL, "--quota", "'%s' is not TEAM=GPUS (at most %d "
                            "teams)", item, MAX_TEAMS);
        if (g > o->cfg.gpus || (sum += g) > o->cfg.gpus)
            return err_setf(err, ERR_INPUT, NULL, "--quota", "'%s': %s %ld GPUs above the pool's "
                            "%d", item, g > o->cfg.gpus ? "a quota of" : "the quotas add up to",
                            g > o->cfg.gpus ? g : sum, o->cfg.gpus);
        snprintf(o->team_name[k], sizeof o->team_name[k], "%.*s", (int)(eq - item), item);
        o->team_names[k] = o->team_name[k];
        o->team_quota[k] = (int)g;
        o->cfg.n_teams++;
        p += len + (p[len] == ',');
    }
    o->cfg.team_names = o->team_names;
    o->cfg.team_quota_gpus = o->team_quota;
    return ERR_OK;
}

static int read_opts(const cmd_args_t *a, opts_t *o, err_t *err)
{
    int rc;
    o->seed = (int)RNG_DEFAULT_SEED % 2147483647;
    o->load = DEFAULT_LOAD;
    o->synth_n = 0;
    if ((rc = read_pool(a, o, err)) || (rc = read_policy_settings(a, o, err)) ||
        (rc = read_synthesize(a, o, err)) ||
        (rc = cmd_get_int(a, "--seed", &o->seed, err)) ||
        (rc = cmd_get_double(a, "--load", &o->load, err)) ||
        (rc = cmd_get_double(a, "--price", &o->cfg.price_per_gpu_h, err)))
        return rc;
    o->price_given = cmd_has(a, "--price");
    const char *placement = cmd_get(a, "--placement") ? cmd_get(a, "--placement") : "first";
    if (strcmp(placement, "first") != 0 && strcmp(placement, "fastest") != 0)
        return err_setf(err, ERR_INPUT, NULL, "--placement", "first or fastest (got '%s')",
                        placement);
    o->cfg.fastest_group = strcmp(placement, "fastest") == 0;
    if (cmd_has(a, "--placement") && o->cfg.n_groups < 2)
        notes_add(&o->notes, NOTE_IGNORED, "--placement", "a pool of one GPU type has one place");
    o->trace = cmd_get(a, "--trace");
    o->gpu = cmd_get(a, "--gpu");
    o->format = cmd_get(a, "--trace-format") ? cmd_get(a, "--trace-format") : "jobs";
    if (!cjobs_format_find(o->format))
        return err_setf(err, ERR_INPUT, NULL, "--trace-format", "unknown format '%s' (jobs, "
                        "tiresias, muri, helios, acme, philly, pai or openb)", o->format);
    if (!o->trace == !o->synth_n)
        return err_setf(err, ERR_INPUT, NULL, o->trace ? "--synthesize" : "--trace",
                        o->trace ? "give --trace or --synthesize, not both"
                                 : "give the job list (--trace FILE) or --synthesize N");
    for (int i = 0; o->trace && i < 2; i++)
        if (cmd_has(a, i ? "--load" : "--seed") && (i || !cmd_has(a, "--failures")))
            notes_add(&o->notes, NOTE_IGNORED, i ? "--load" : "--seed",
                      "a trace replay without --failures has nothing random to seed or scale");
    o->start_day = -1;
    o->start_text = cmd_get(a, "--start");
    if (cmd_get(a, "--start") && !cluster_date_parse(cmd_get(a, "--start"), &o->start_day))
        return err_setf(err, ERR_INPUT, NULL, "--start", "'%s' is not a date YYYY-MM-DD (1970 "
                        "or later)", cmd_get(a, "--start"));
    int rc2 = read_failures(a, o, err);
    if (!rc2)
        rc2 = read_spot(a, o, err);
    return rc2 ? rc2 : read_quota(a, o, err);
}

/* Each job's gpu as the catalog spells it (h100 -> h100-sxm), so that it
 * matches a --cluster group however either was written. */
static int canonical_types(const cmd_args_t *a, cjobs_t *l, err_t *err)
{
    for (int i = 0; i < l->n; i++) {
        cjob_t *j = &l->jobs[i];
        gpu_t g;
        if (!j->gpu_type)
            continue;
        if (gpu_load_in(a->catalog, j->gpu_type, &g, err)) {
            char where[64];
            snprintf(where, sizeof where, "line %d: gpu", j->line);
            return err_readdress(err, l->path, where);
        }
        if (strcmp(g.name, j->gpu_type) != 0) {
            char *c = strdup(g.name);
            if (!c)
                return err_set(err, ERR_RUNTIME, "out of memory");
            free(j->gpu_type);
            j->gpu_type = c;
        }
    }
    return ERR_OK;
}

/* --vc-gpus: each job to its VC's group (as its gpu_type, which the
 * replay matches to the groups), refused where its VC has no GPUs or too
 * few. */
static int assign_vcs(const opts_t *o, cjobs_t *l, err_t *err)
{
    for (int i = 0; i < l->n; i++) {
        cjob_t *j = &l->jobs[i];
        int g = -1;
        for (int k = 0; j->vc && k < o->cfg.n_groups; k++)
            if (strcmp(j->vc, o->group_types[k]) == 0)
                g = k;
        char where[48];
        snprintf(where, sizeof where, "line %d: vc", j->line);
        if (!j->vc)
            return err_setf(err, ERR_INPUT, l->path, where, "job '%s' has none (--vc-gpus needs "
                            "a trace that gives each job's VC: helios, philly)", j->name);
        if (g < 0 || o->group_gpus[g] < j->gpus)
            return err_setf(err, ERR_INPUT, l->path, where, "job '%s' asks for %d GPUs in VC "
                            "'%s', which --vc-gpus gives %d", j->name, j->gpus, j->vc,
                            g < 0 ? 0 : o->group_gpus[g]);
        char *t = strdup(j->vc);
        if (!t)
            return err_set(err, ERR_RUNTIME, "out of memory");
        free(j->gpu_type);
        j->gpu_type = t;
    }
    return ERR_OK;
}

/* The job list: read (and priced where it gives model + tokens) or made. */
/* --synthesize NAME: jobs from a trace's published statistics, what is
 * assumed and what is not matched said. */
static int synth_trace(const cmd_args_t *a, opts_t *o, cjobs_t *l, err_t *err)
{
    ctsynth_profile_t p;
    double rate = 0;
    bool load = cmd_has(a, "--load");
    ctsynth_spec_t sp = {o->synth_n, o->cfg.gpus, load ? o->load : 0, (uint64_t)o->seed};
    int rc = ctsynth_load(o->synth_name, &p, err);
    ctsynth_model_t m;
    if (!rc)
        rc = ctsynth_make(&p, &sp, l, &m, &rate, err);
    if (rc)
        return rc;
    double offered = rate * ctsynth_mean_gpu_s(&m) / o->cfg.gpus;
    notes_add(&o->notes, NOTE_ASSUMED, "--synthesize", "%d jobs from %s's published "
              "statistics (%s): run time median %.0f s, mean %.0f s; mean %.3g GPUs; %.4g "
              "arrivals/h (%s, offering %.2f of the pool's GPU-time); seed %d", o->synth_n,
              p.name, CTSYNTH_CATALOG, p.run_time_median_s, p.run_time_mean_s, p.gpus_mean,
              rate * 3600, load ? "--load" : "its rate per GPU", offered, o->seed);
    notes_add(&o->notes, NOTE_ASSUMED, "--synthesize", "%.0f%% of jobs on one GPU (the papers "
              "give a median of 1, not the share); run time x%.2f per doubling of GPUs (%s); no "
              "daily cycle, users or virtual clusters%s", 100 * CTSYNTH_SINGLE_SHARE,
              exp(m.dur_beta), p.gpu_time_s > 0 ? "fitted to its GPU time" : "its GPU time is "
              "not published", p.gpus_mean < 1 ? "; its jobs ask for fractions of a GPU: one "
              "whole GPU each" : "");
    if (!cmd_has(a, "--jobs"))
        notes_add(&o->notes, NOTE_ASSUMED, "--jobs", "%d (give --jobs)", DEFAULT_TRACE_JOBS);
    if (p.gpus_max > o->cfg.gpus)
        notes_add(&o->notes, NOTE_ASSUMED, "--synthesize", "job sizes capped at the pool's %d "
                  "GPUs (%s's largest job had %.0f)", o->cfg.gpus, p.name, p.gpus_max);
    for (int i = 0; i < 2; i++)
        if (cmd_has(a, i ? "--gpu" : "--trace-format") && !(i && o->fail))
            notes_add(&o->notes, NOTE_IGNORED, i ? "--gpu" : "--trace-format",
                      "goes with --trace; synthesized jobs give their run times");
    return ERR_OK;
}

static int load_jobs(const cmd_args_t *a, opts_t *o, cjobs_t *l, err_t *err)
{
    if (o->synth_name)
        return synth_trace(a, o, l, err);
    if (o->synth_n) {
        csynth_spec_t sp = {o->synth_n, o->cfg.gpus, o->load, (uint64_t)o->seed};
        notes_add(&o->notes, NOTE_ASSUMED, "--synthesize",
                  "%d jobs of an assumed heavy-tailed mix (1-32 GPUs, log-normal run times with "
                  "a 10 min median), Poisson arrivals at load %.2f, seed %d",
                  o->synth_n, o->load, o->seed);
        for (int i = 0; i < 2; i++)
            if (cmd_has(a, i ? "--gpu" : "--trace-format") && !(i && o->fail))
                notes_add(&o->notes, NOTE_IGNORED, i ? "--gpu" : "--trace-format",
                          "goes with --trace; synthesized jobs give their run times");
        return csynth_make(&sp, l, err);
    }
    int rc = cjobs_read(cjobs_format_find(o->format), o->trace, l, err), priced = 0;
    /* with several types and no --gpu, a job's own duration is its run
     * time on the first group's; each group's comes below */
    const char *gpu = o->gpu ? o->gpu : o->cfg.n_groups ? o->group_types[0] : NULL;
    if (!rc && l->skipped)
        notes_add(&o->notes, NOTE_IGNORED, "trace", "%ld record%s not replayed (CPU-only jobs, jobs "
                  "that never ran)", l->skipped, l->skipped == 1 ? "" : "s");
    if (!rc)
        rc = o->vc_pool ? assign_vcs(o, l, err) : canonical_types(a, l, err);
    if (!rc && o->planner && o->cfg.n_groups > 1)
        rc = err_setf(err, ERR_INPUT, NULL, "--policy", "planner sizes jobs on a pool of one GPU "
                      "type; a pool of several (--cluster) is not supported with it yet");
    for (int i = 0; !rc && o->planner && i < l->n; i++) /* the planner prices every size */
        priced += l->jobs[i].model && l->jobs[i].tokens > 0 && !l->jobs[i].duration_ms;
    if (!rc && !o->planner)
        rc = cdur_fill(l, gpu, a->catalog, &priced, err);
    if (!rc && o->cfg.n_groups > 1 &&
        !(rc = cdur_by_group(l, o->group_types, o->cfg.n_groups, a->catalog, &o->group_dur, err)))
        o->cfg.group_duration_ms = o->group_dur;
    if (!rc && priced)
        notes_add(&o->notes, NOTE_ASSUMED, "duration", "%d job%s given as model + tokens run for "
                  "tokens / the simulated tokens per second of the planner's fastest layout on "
                  "%s (failure-free; --failures adds them)", priced, priced == 1 ? "" : "s",
                  o->cfg.n_groups > 1 ? "each GPU type (a job's gpu holds it to one)"
                  : o->gpu            ? o->gpu
                                      : "the job's gpu");
    else if (!rc && o->gpu && !o->fail)
        notes_add(&o->notes, NOTE_IGNORED, "--gpu", "no job gives a model and tokens");
    if (!rc && o->cfg.n_groups > 1 && !o->vc_pool)
        notes_add(&o->notes, NOTE_ASSUMED, "types", "a job given a duration runs it on every GPU "
                  "type (only model + tokens jobs are priced per type)");
    return rc;
}

/* A duration as units_fmt_duration writes it, but nothing as "0 s". */
static const char *dur(double s, char *buf, size_t cap)
{
    if (s < 0.0005) {
        snprintf(buf, cap, "0 s");
        return buf;
    }
    return units_fmt_duration(s, buf, cap);
}

static double ms_s(int64_t ms)
{
    return (double)ms / 1000.0;
}

static cJSON *job_json(const cjob_t *j, const creplay_job_t *r, double price)
{
    cJSON *e = cJSON_CreateObject();
    bool ok = e && cJSON_AddStringToObject(e, "name", j->name) &&
              json_add_number(e, "gpus", j->gpus) &&
              json_add_number(e, "submit_s", ms_s(j->submit_ms)) &&
              json_add_number(e, "start_s", ms_s(r->start_ms)) &&
              json_add_number(e, "end_s", ms_s(r->end_ms)) &&
              json_add_number(e, "queue_delay_s", ms_s(r->start_ms - j->submit_ms)) &&
              json_add_number(e, "jct_s", ms_s(r->end_ms - j->submit_ms)) &&
              json_add_number(e, "gpu_hours", (double)r->gpu_ms / 3.6e6) &&
              json_add_number(e, "preemptions", r->preemptions) &&
              json_add_number(e, "failures", r->failures) &&
              json_add_number(e, "reclaims", r->reclaims) &&
              json_add_number(e, "interruptions", r->preemptions + r->failures + r->reclaims) &&
              (j->deadline_ms <= 0 ? cJSON_AddNullToObject(e, "deadline_met") != NULL
                                   : cJSON_AddBoolToObject(e, "deadline_met",
                                                           r->end_ms <= j->deadline_ms) != NULL) &&
              json_add_number(e, "priority", j->priority);
    if (ok && price > 0)
        ok = json_add_number(e, "cost_usd", (double)r->gpu_ms / 3.6e6 * price);
    if (!ok) {
        cJSON_Delete(e);
        return NULL;
    }
    return e;
}

/* A number, or null when the figure does not exist for this run. */
static bool add_or_null(cJSON *o, const char *key, bool have, double v)
{
    return have ? json_add_number(o, key, v) : cJSON_AddNullToObject(o, key) != NULL;
}

/* The planning side's figures (spot, spares, MFU-weighted utilization,
 * fairness, build vs buy, the plan, what-ifs, the timeline). false on OOM. */
static bool planning_json(const opts_t *o, const cjobs_t *l, const creplay_result_t *r, cJSON *j)
{
    bool ok = true;
    if (ok && o->cfg.spot_gpus > 0)
        ok = json_add_number(j, "spot_gpus", o->cfg.spot_gpus) &&
             json_add_number(j, "spot_node_reclaims", (double)r->spot_node_reclaims) &&
             json_add_number(j, "spot_reclaimed_jobs", (double)r->reclaims) &&
             json_add_number(j, "spot_lost_gpu_hours", (double)r->reclaim_lost_gpu_ms / 3.6e6);
    double covered, mfu_u = ctimeline_mfu_utilization(l, r, o->cfg.gpus, &covered);
    ok = ok && add_or_null(j, "mfu_weighted_utilization", covered > 0, mfu_u) &&
         add_or_null(j, "mfu_known_share", covered > 0, covered);
    char day[16] = "";
    if (o->start_day >= 0)
        cluster_date_format(o->start_day + (long)floor(r->makespan_s / 86400), day, sizeof day);
    ok = ok && (o->start_day < 0 || cJSON_AddStringToObject(j, "finish_date", day));
    if (ok && o->cfg.spare_gpus > 0)
        ok = json_add_number(j, "spare_gpus", o->cfg.spare_gpus) &&
             json_add_number(j, "spare_swaps", (double)r->spare_swaps);
    ok = ok && json_add_number(j, "jain_fairness", ctimeline_jain(l, r)) &&
         cluster_buy_json(&o->buy, j);
    ok = ok && (!o->planner || cluster_planner_json(&o->plan, l, j));
    ok = ok && (!o->whatif.n || cluster_whatif_json(&o->whatif, o->price_given, j));
    ok = ok && (!o->timeline.seg || cluster_timeline_json(l, r, &o->timeline, j));
    return ok;
}

static cJSON *result_json(const opts_t *o, const cjobs_t *l, const creplay_result_t *r,
                          bool per_job)
{
    cJSON *j = cJSON_CreateObject(), *arr = NULL;
    bool ok = j && json_add_number(j, "jobs", r->n_jobs) &&
              cJSON_AddStringToObject(j, "policy", o->planner ? "planner" : o->cfg.policy->name) &&
              cJSON_AddStringToObject(j, "placement", o->cfg.fastest_group ? "fastest" : "first") &&
              json_add_number(j, "gpus", o->cfg.gpus) &&
              json_add_number(j, "gpus_per_node", o->cfg.gpus_per_node) &&
              json_add_number(j, "makespan_s", r->makespan_s) &&
              json_add_number(j, "queue_delay_mean_s", r->queue_delay_mean_s) &&
              json_add_number(j, "queue_delay_p50_s", r->queue_delay_p50_s) &&
              json_add_number(j, "queue_delay_p99_s", r->queue_delay_p99_s) &&
              json_add_number(j, "jct_mean_s", r->jct_mean_s) &&
              json_add_number(j, "jct_p50_s", r->jct_p50_s) &&
              json_add_number(j, "jct_p99_s", r->jct_p99_s) &&
              json_add_number(j, "finish_time_fairness_mean", r->ftf_mean) &&
              json_add_number(j, "finish_time_fairness_max", r->ftf_max) &&
              json_add_number(j, "utilization", r->utilization) &&
              json_add_number(j, "gpu_hours", (double)r->gpu_ms / 3.6e6) &&
              json_add_number(j, "preemptions", (double)r->preemptions) &&
              json_add_number(j, "failures", (double)r->failures) &&
              json_add_number(j, "lost_gpu_hours", (double)r->lost_gpu_ms / 3.6e6) &&
              json_add_number(j, "restart_gpu_hours", (double)r->restart_gpu_ms / 3.6e6) &&
              add_or_null(j, "goodput_tokens_per_gpu_hour", r->tokens > 0,
                          r->goodput_tokens_per_gpu_hour) &&
              add_or_null(j, "cost_usd", o->price_given, r->cost_usd) &&
              add_or_null(j, "price_per_gpu_h", o->price_given, o->cfg.price_per_gpu_h);
    if (ok && o->rec.n > 0) /* a trace that records its starts: its own figures */
        ok = json_add_number(j, "trace_queue_delay_mean_s", o->rec.queue_delay_mean_s) &&
             json_add_number(j, "trace_utilization", o->rec.utilization);
    cJSON *groups = NULL;
    if (ok && o->cfg.n_groups > 0 && (ok = (groups = cJSON_AddArrayToObject(j, "groups")) != NULL))
        for (int g = 0; ok && g < o->cfg.n_groups; g++) {
            cJSON *e = cJSON_CreateObject();
            if (!e || !cJSON_AddItemToArray(groups, e)) { /* else the array owns it */
                cJSON_Delete(e);
                ok = false;
                break;
            }
            ok = cJSON_AddStringToObject(e, "gpu", o->group_types[g]) &&
                 json_add_number(e, "gpus", o->group_gpus[g]);
        }
    if (ok && per_job && (ok = (arr = cJSON_AddArrayToObject(j, "per_job")) != NULL))
        for (int i = 0; ok && i < l->n; i++) {
            double price = o->price_given ? o->cfg.price_per_gpu_h : 0;
            cJSON *e = job_json(&l->jobs[i], &r->jobs[i], price);
            ok = e && cJSON_AddItemToArray(arr, e);
            if (!ok)
                cJSON_Delete(e);
        }
    ok = ok && planning_json(o, l, r, j);
    ok = ok && cmd_add_notes_json(j, &o->notes);
    if (!ok) {
        cJSON_Delete(j);
        return NULL;
    }
    return j;
}

static int print_jobs(const cjobs_t *l, const creplay_result_t *r)
{
    static const char *hdr[] = {"job", "gpus", "submit", "start", "end", "queue delay",
                                "completion", "GPU-h", "preempted"};
    table_t *t = table_create(9, hdr);
    if (!t)
        return ERR_RUNTIME;
    for (int c = 1; c < 9; c++)
        table_align_right(t, c);
    for (int i = 0; i < l->n; i++) {
        const cjob_t *j = &l->jobs[i];
        const creplay_job_t *x = &r->jobs[i];
        char q[32], c[32];
        table_add_rowf(t, "%s\t%d\t%.0f\t%.0f\t%.0f\t%s\t%s\t%.2f\t%d", j->name, j->gpus,
                       ms_s(j->submit_ms), ms_s(x->start_ms), ms_s(x->end_ms),
                       dur(ms_s(x->start_ms - j->submit_ms), q, sizeof q),
                       dur(ms_s(x->end_ms - j->submit_ms), c, sizeof c),
                       (double)x->gpu_ms / 3.6e6, x->preemptions);
    }
    printf("\n");
    int rc = table_print(t, stdout, 2, 0);
    table_destroy(t);
    return rc;
}

/* MFU-weighted utilization and Jain's index. */
static void print_fairness(const opts_t *o, const cjobs_t *l, const creplay_result_t *r)
{
    double covered, mfu_u = ctimeline_mfu_utilization(l, r, o->cfg.gpus, &covered);
    if (covered > 0)
        printf("  MFU-weighted    %.1f%% of the pool's peak FLOPs on model FLOPs (jobs with a "
               "simulated MFU: %.0f%% of the GPU time)\n", 100 * mfu_u, 100 * covered);
    printf("  fairness        Jain's index %.3f (1 = every job slowed alike)\n",
           ctimeline_jain(l, r));
}

/* Deadlines, spot and spares. */
static void print_capacity(const opts_t *o, const cjobs_t *l, const creplay_result_t *r)
{
    int due = 0, missed = 0;
    for (int i = 0; i < l->n; i++)
        if (l->jobs[i].deadline_ms > 0) {
            due++;
            missed += r->jobs[i].end_ms > l->jobs[i].deadline_ms;
        }
    if (due)
        printf("  deadlines       %d of %d missed\n", missed, due);
    if (o->cfg.spot_gpus > 0)
        printf("  spot            %d GPUs: %ld nodes reclaimed, %ld job stops, %.1f GPU-hours of "
               "progress lost\n", o->cfg.spot_gpus, r->spot_node_reclaims, r->reclaims,
               (double)r->reclaim_lost_gpu_ms / 3.6e6);
    if (o->cfg.spare_gpus > 0)
        printf("  spares          %d GPUs: %ld failures restarted in place on a spare\n",
               o->cfg.spare_gpus, r->spare_swaps);
}

static int print_text(const opts_t *o, const cjobs_t *l, const creplay_result_t *r, bool per_job)
{
    char a[32], b[32], c[32];
    int nodes = o->cfg.gpus / o->cfg.gpus_per_node;
    printf("%d jobs on %d GPUs (%d node%s of %d), policy %s\n", r->n_jobs, o->cfg.gpus, nodes,
           nodes == 1 ? "" : "s", o->cfg.gpus_per_node, o->planner ? "planner" : o->cfg.policy->name);
    for (int g = 0; o->cfg.n_groups > 1 && g < o->cfg.n_groups; g++)
        printf("  group %d: %d x %s\n", g + 1, o->group_gpus[g], o->group_types[g]);
    if (o->cfg.n_groups > 1 && !o->vc_pool)
        printf("  placement       %s\n", o->cfg.fastest_group
                                             ? "fastest type with room (type-aware)"
                                             : "first group with room (type-agnostic)");
    printf("  makespan        %s (%.0f s)\n", dur(r->makespan_s, a, sizeof a),
           r->makespan_s);
    if (o->start_day >= 0) {
        char day[16];
        cluster_date_format(o->start_day + (long)floor(r->makespan_s / 86400), day, sizeof day);
        printf("  finish date     %s (from --start %s)\n", day, o->start_text);
    }
    printf("  queue delay     mean %s, p50 %s, p99 %s\n",
           dur(r->queue_delay_mean_s, a, sizeof a),
           dur(r->queue_delay_p50_s, b, sizeof b),
           dur(r->queue_delay_p99_s, c, sizeof c));
    printf("  completion time mean %s, p50 %s, p99 %s\n", dur(r->jct_mean_s, a, sizeof a),
           dur(r->jct_p50_s, b, sizeof b), dur(r->jct_p99_s, c, sizeof c));
    printf("  finish-time fairness (completion over run time alone) mean %.2f, max %.1f\n",
           r->ftf_mean, r->ftf_max);
    printf("  utilization     %.1f%% (%.1f GPU-hours allocated of %.1f)\n", 100 * r->utilization,
           (double)r->gpu_ms / 3.6e6, o->cfg.gpus * r->makespan_s / 3600);
    print_fairness(o, l, r);
    printf("  preemptions     %ld\n", r->preemptions);
    if (o->rec.n > 0)
        printf("  as recorded     queue delay mean %s, utilization %.1f%% (the trace's own starts, "
               "%d jobs)\n", dur(o->rec.queue_delay_mean_s, a, sizeof a),
               100 * o->rec.utilization, o->rec.n);
    if (o->fail)
        printf("  failures        %ld (%.1f GPU-hours of progress lost, %.1f restarting)\n",
               r->failures, (double)r->lost_gpu_ms / 3.6e6, (double)r->restart_gpu_ms / 3.6e6);
    print_capacity(o, l, r);
    if (r->tokens > 0)
        printf("  goodput         %s tokens per GPU-hour\n",
               units_fmt_count(r->goodput_tokens_per_gpu_hour, a, sizeof a));
    if (o->price_given)
        printf("  cost            %s (the pool's GPU-hours over the makespan at $%.2f/GPU-h)\n",
               units_fmt_usd(r->cost_usd, a, sizeof a), o->cfg.price_per_gpu_h);
    cluster_buy_print(&o->buy, stdout);
    if (o->planner)
        cluster_planner_print(&o->plan, l, stdout);
    if (o->whatif.n)
        cluster_whatif_print(&o->whatif, r, o->cfg.gpus, o->price_given, stdout);
    int rc = per_job ? print_jobs(l, r) : ERR_OK;
    cmd_print_notes(stdout, &o->notes);
    return rc;
}

/* The replay, watched (timeline, progress bar), with the costs of spares
 * and spot GPUs and build vs buy at its utilization. */
static int replay(const cmd_args_t *a, opts_t *o, const cjobs_t *l, creplay_result_t *r,
                  err_t *err)
{
    cluster_watch_t watch = {NULL, NULL, 0};
    if (cmd_get(a, "--report") || cmd_get(a, "--perfetto"))
        watch.tl = &o->timeline;
    if (progress_enabled())
        watch.bar = progress_create("cluster: replay (jobs finished)", l->n);
    if (watch.tl || watch.bar) {
        o->cfg.on_segment = cluster_watch_segment;
        o->cfg.segment_ctx = &watch;
    }
    int rc = creplay_run(l, &o->cfg, r, err);
    progress_destroy(watch.bar);
    o->cfg.on_segment = NULL; /* the what-if replays draw no timeline */
    if (rc)
        return rc;
    if (o->cfg.spare_gpus > 0) /* the spares are paid too */
        r->cost_usd += o->cfg.spare_gpus * r->makespan_s / 3600 * o->cfg.price_per_gpu_h;
    if (o->cfg.spot_gpus > 0 && cmd_has(a, "--spot-price")) { /* spot GPUs at theirs */
        r->cost_usd += o->cfg.spot_gpus * r->makespan_s / 3600 *
                       (o->spot_price - o->cfg.price_per_gpu_h);
        notes_add(&o->notes, NOTE_ASSUMED, "--spot-price", "cost: %d spot GPUs at $%.2f/GPU-h, "
                  "the others at --price", o->cfg.spot_gpus, o->spot_price);
    }
    cluster_buy(o->gpu ? o->gpu : o->cfg.n_groups == 1 ? o->group_types[0] : NULL,
                r->utilization, o->price_given ? o->cfg.price_per_gpu_h : 0, &o->buy);
    return ERR_OK;
}

/* --what-if: the same jobs once per change (spot= with the catalog's
 * spot assumption when --spot gave none, said). */
static int what_ifs(const cmd_args_t *a, opts_t *o, const cjobs_t *l, err_t *err)
{
    const char *spec = cmd_get(a, "--what-if");
    double spot_per_h = 0, spot_wait_s = 0, node_exponent = 1;
    int rc;
    if (strstr(spec, "spot=") && !o->cfg.spot_gpus) {
        if ((rc = price_spot_defaults(&spot_per_h, &node_exponent, &spot_wait_s, err)))
            return rc;
        double share = strtod(strstr(spec, "spot=") + 5, NULL);
        int gpn = o->cfg.gpus_per_node > 0 ? o->cfg.gpus_per_node : 1;
        if (share > 0 && share < 1)
            spot_per_h = spot_node_rate(spot_per_h, node_exponent,
                                        (int)(share * o->cfg.gpus) / gpn);
        notes_add(&o->notes, NOTE_ASSUMED, "--what-if", "spot=: each spot node reclaimed %.3g "
                  "times a node-hour, back after %.0f s (the catalog's spot assumption), "
                  "checkpoints %s", spot_per_h, spot_wait_s,
                  o->cfg.checkpoint_ms ? "as given" : "hourly");
    }
    return cluster_whatif_run(spec, l, &o->cfg, spot_per_h, (int64_t)llround(spot_wait_s * 1000),
                              cmd_has(a, "--spot-price") ? o->spot_price : -1, &o->whatif, err);
}

static int run(const cmd_args_t *a, err_t *err)
{
    opts_t o;
    memset(&o, 0, sizeof o);
    notes_init(&o.notes);
    cjobs_t l = {0};
    creplay_result_t r = {0};
    bool per_job = cmd_has(a, "--per-job");
    int rc = read_opts(a, &o, err);
    if (!rc)
        rc = load_jobs(a, &o, &l, err);
    if (!rc)
        ctrace_recorded(&l, o.cfg.gpus, &o.rec);
    if (!rc && o.planner)
        rc = cluster_planner_run(&o.plan, &l, &o.cfg, o.gpu, a->catalog, &o.notes, err);
    if (!rc)
        rc = replay(a, &o, &l, &r, err);
    if (!rc && cmd_get(a, "--what-if"))
        rc = what_ifs(a, &o, &l, err);
    if (!rc && cmd_get(a, "--perfetto"))
        rc = ctrace_write(cmd_get(a, "--perfetto"), &l, &r, &o.timeline, err);
    if (!rc && cmd_wants_result(a)) {
        cJSON *j = result_json(&o, &l, &r, per_job);
        rc = j ? cmd_output_result(a, "scaleplan cluster", j, per_job ? "per_job" : NULL, err)
               : err_set(err, ERR_RUNTIME, "out of memory building JSON");
        cJSON_Delete(j);
    } else if (!rc && print_text(&o, &l, &r, per_job)) {
        rc = err_set(err, ERR_RUNTIME, "cannot write to standard output");
    }
    creplay_result_free(&r);
    cjobs_free(&l);
    cfail_destroy(o.fail);
    free(o.group_dur);
    cluster_planner_free(&o.plan);
    ctimeline_free(&o.timeline);
    cluster_whatif_free(&o.whatif);
    cspot_trace_free(&o.spot_trace);
    notes_free(&o.notes);
    return rc;
}

static const cmd_group_t *const groups[] = {&own_group, &CMD_OUTPUT_OPTS};

const cmd_command_t CMD_CMD_CLUSTER = {
    "cluster",
    "replay many training jobs on one GPU pool under a scheduling policy",
    "scaleplan cluster (--trace FILE [--trace-format FORMAT] | --synthesize N | "
    "--synthesize NAME [--jobs N]) "
    "(--gpus N | --cluster NxGPU,...) "
    "[--policy fifo|backfill|priority|srtf|srsf|las|ftf|sjf|fifo-fit|quota|planner] [--seed S] [--price $/GPU-h] "
    "[--spot SHARE] [--what-if CHANGE,...] [--json|--csv] [--per-job] [--report DIR] "
    "[--perfetto FILE]",
    "A discrete-event replay of a GPU pool: jobs arrive, wait, start as a gang\n"
    "(all their GPUs at once, whole nodes first) and run to completion; it\n"
    "prints the makespan, queue delay and completion time (mean, p50, p99),\n"
    "utilization (allocated GPU-seconds over the pool's over the makespan),\n"
    "goodput (tokens per GPU-hour, for jobs with tokens) and cost (--price).\n"
    "Policies: fifo; backfill (EASY: a job behind the blocked head starts when\n"
    "it cannot delay the head's reservation); priority (classes, preempting\n"
    "preemptible lower ones); srtf (shortest remaining first, oracle,\n"
    "preemptive); srsf (shortest remaining GPU-time first, oracle,\n"
    "preemptive); las (Tiresias 2D least-attained-service, 2 queues split at\n"
    "3600 GPU-seconds, or the queue limits --las-threshold lists); ftf\n"
    "(Themis finish-time fairness: the job furthest behind its fair finish\n"
    "first, preempting others after a --lease); sjf (shortest recorded\n"
    "duration first) and fifo-fit (arrival order), both non-preemptive and\n"
    "passing over a job that does not fit, as Alibaba's GPU-cluster simulator\n"
    "runs them. Reproduced (README, Replay fidelity): that simulator's\n"
    "SJF/FIFO mean completion time (0.756 published, 0.751 replayed) on an\n"
    "analog of its job list, whose CSV was not available here; and on the\n"
    "eight job lists Muri's simulator ships (--trace-format muri, 64 GPUs,\n"
    "--las-threshold 3250,7200) Tiresias-L's mean completion time over\n"
    "srtf's, 0.9% to 21.3% from the published ratios; quota (Kueue-like\n"
    "team quotas, --quota: borrow idle GPUs, reclaimed by preemption);\n"
    "planner (each job's size in its min_gpus..max_gpus from its\n"
    "simulated scaling curve, minimising --objective; never later than the\n"
    "best of fifo and backfill at the sizes asked, which it prints). A\n"
    "preempted job resumes where it stopped (its\n"
    "checkpoint and restart costs are not modelled). --failures interrupts\n"
    "running gangs at the rates `reliability` gives a job of their size on\n"
    "--gpu: the job loses the progress since its last checkpoint\n"
    "(--checkpoint-every, default 1 h), waits for GPUs again and runs\n"
    "--restart-time (default 10 min) before progressing. --spot SHARE makes\n"
    "that share spot nodes, each reclaimed at the catalog's assumed rate or\n"
    "as --spot-trace says (jobs on it go back to their last checkpoint);\n"
    "--spares lets a failed gang restart in place. --what-if replays once per\n"
    "change; --report DIR writes an HTML page (Gantt chart, GPUs in use),\n"
    "--perfetto FILE a trace; build vs buy at the measured utilization is\n"
    "printed with a --gpu. Same input and seed, same replay. A replay that\n"
    "cannot end (a spot or failure rate so high that a gang never keeps its\n"
    "nodes for a checkpoint interval) stops with exit 2 naming the job, at\n"
    "the last arrival plus 100 x the jobs' run times summed (and a restart,\n"
    "a spot outage, a repair) or after 25,000 scheduling passes a job (at\n"
    "least 1,000,000).\n"
    "\n"
    "Job files (--trace-format jobs), CSV with a header:\n"
    "  name,gpus,submit_s,duration_s[,priority,preemptible,gpu,team,\n"
    "  min_gpus,max_gpus,checkpoint_s,deadline_s]\n"
    "  or model,tokens instead of duration_s (run time from the step simulator\n"
    "  on the job's gpu or --gpu, the planner's fastest layout); gpu holds a\n"
    "  job to that type of a --cluster pool (other jobs take the first group\n"
    "  with room, or with --placement fastest the one where they run\n"
    "  shortest: model + tokens jobs are priced on every type, a duration\n"
    "  given is the same on all); an optional first line\n"
    "  \"# jobs: N\" catches a file cut short. tiresias: the Tiresias\n"
    "  simulator's job CSV (job_id,num_gpu,submit_time,...,duration); muri:\n"
    "  the same columns in milliseconds, as Muri's simulator reads them.\n"
    "Public traces, as published: helios (SenseTime cluster_log.csv), acme\n"
    "(Shanghai AI Lab trace_seren/kalos.csv), philly (Microsoft cluster_job_log\n"
    "JSON), pai (Alibaba pai_task_table.csv, headerless; a job's tasks merged,\n"
    "GPU fractions rounded up), openb (Alibaba's GPU-sharing\n"
    "openb_pod_list_*.csv: creation, scheduled and deletion times; a shared\n"
    "GPU given whole; gpu_spec not read). CPU jobs and jobs that never ran\n"
    "are left out (counted); where starts are recorded the trace's own queue\n"
    "delay and utilization are printed beside the replay's. --vc-gpus FILE\n"
    "(Helios's cluster_gpu_number.csv) makes the pool the trace's virtual\n"
    "clusters, each job held to its VC's GPUs.\n"
    "--synthesize N: an assumed heavy-tailed mix (60% 1-GPU jobs up to\n"
    "32 GPUs; log-normal run times, median 10 min, sigma 2) with Poisson\n"
    "arrivals at --load (default 0.9), seeded by --seed (default 20240723).\n"
    "--synthesize NAME --jobs N (default 10000): helios, philly, pai or acme,\n"
    "from the trace's published statistics (cluster/catalog/traces.json, each\n"
    "with its source): its arrival rate per GPU on this pool (or --load),\n"
    "run-time median and mean, mean GPUs (60% single-GPU jobs assumed), GPU\n"
    "time per job (bigger jobs run longer), completed/canceled/failed shares.\n"
    "\n"
    "Examples:\n"
    "  scaleplan cluster --trace tests/fixtures/cluster/tiresias_60_job.csv \\\n"
    "      --trace-format tiresias --gpus 8 --policy las\n"
    "  scaleplan cluster --trace jobs.csv --gpus 512 --gpu h100-sxm --policy backfill \\\n"
    "      --price 2.49 --per-job\n"
    "  scaleplan cluster --synthesize 10000 --gpus 256 --policy srtf --seed 7 --json\n"
    "  scaleplan cluster --trace cluster_log.csv --trace-format helios --gpus 1024\n"
    "  scaleplan cluster --synthesize philly --jobs 20000 --gpus 256 --load 0.9 --policy las\n"
    "  scaleplan cluster --trace jobs.csv --cluster 512xh100-sxm,256xa100-80g --policy las \\\n"
    "      --placement fastest\n"
    "  scaleplan cluster --trace tests/fixtures/cluster/portfolio_10_models.csv --gpus 512 \\\n"
    "      --gpu h100-sxm --policy planner --price 2.49 --what-if gpus=+64,spot=0.3\n"
    "  scaleplan cluster --trace teams.csv --gpus 256 --policy quota --quota nlp=128,vision=64 \\\n"
    "      --report out --perfetto out/trace.json\n"
    "  scaleplan cluster --trace jobs.csv --gpus 1024 --gpu h100-sxm --failures \\\n"
    "      --environment cloud --checkpoint-every 30m --policy las",
    groups,
    sizeof groups / sizeof groups[0],
    run,
    0,
};
