/* scaleplan budget: what a run costs, with the overhead of failures and
 * checkpoints simulated, providers side by side, and a reality check of a
 * claimed duration. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/commands.h"
#include "cli/job.h"
#include "common/json.h"
#include "common/units.h"
#include "models/flops.h"
#include "reports/jsonout.h"
#include "reports/table.h"
#include "sim/budget.h"
#include "topologies/price.h"

static const cli_opt_t own_opts[] = {
    {"--price", NULL, "$/GPU-h", "price per GPU-hour (default: the catalog's for the GPU)",
     CLI_KIND(CLI_PRICE, 0, 1e4)},
    {"--provider", NULL, "NAME", "price from the catalog for this provider (aws, lambda, ...)",
     CLI_WORD},
    {"--compare", NULL, NULL, "every catalog price for the GPU, spot and an own cluster", CLI_WORD},
    {"--keep-checkpoints", NULL, "K", "checkpoints kept in storage (default 5)", CLI_N(0, 100000)},
    {"--storage-price", NULL, "$/GB-month", "checkpoint storage price (default: catalog)",
     CLI_KIND(CLI_MONEY, 0, 1e4)},
    {"--egress", NULL, "BYTES", "data moved in or out (e.g. 50TB)", CLI_KIND(CLI_BYTES, 0, 1e21)},
    {"--egress-price", NULL, "$/TB", "data transfer price (default 0)",
     CLI_KIND(CLI_MONEY, 0, 1e6)},
    {"--utilization", NULL, "U", "own cluster: share of hours in use (default 0.8)",
     CLI_X(0.01, 1)},
};
static const cli_group_t own_group = {"Budget", own_opts, sizeof own_opts / sizeof own_opts[0]};

typedef struct {
    cli_job_t job;
    rel_config_t rel;
    rel_result_t r;
    failure_set_t fs;
    budget_input_t bin;
    budget_t b;
    price_t price;
    double tokens, claim_s, required_mfu, model_flops, peak;
    bool claim, feasible;
} budget_run_t;

static int price_for(const cli_args_t *a, const char *gpu, price_t *p, err_t *err)
{
    memset(p, 0, sizeof *p);
    const char *v = cli_get(a, "--price");
    if (v) {
        snprintf(p->provider, sizeof p->provider, "given");
        snprintf(p->kind, sizeof p->kind, "--price");
        return cli_get_double(a, "--price", &p->usd_per_gpu_hour, err);
    }
    if ((v = cli_get(a, "--provider")))
        return price_find(gpu, v, NULL, p, err);
    return price_default_for_gpu(gpu, p, err);
}

static int storage_price(const cli_args_t *a, double *usd, err_t *err)
{
    *usd = 0.02; /* prices.json "storage": object storage, planning-guide figure */
    return cli_get_double(a, "--storage-price", usd, err);
}

static int run_budget(const cli_args_t *a, budget_run_t *br, err_t *err)
{
    int rc;
    double duration;
    if ((rc = cli_run_length(a, &br->tokens, &duration, err)))
        return rc;
    if (!(br->tokens > 0))
        return err_setf(err, ERR_INPUT, NULL, "--tokens", "say how many tokens to train (e.g. 2T)");
    br->claim = duration > 0;
    br->claim_s = duration;
    if ((rc = cli_job_setup(a, &br->job, err)))
        return rc;
    const cluster_t *c = &br->job.s.cluster;
    if ((rc = failure_load_set(cli_get(a, "--failure-rates"), &br->fs, err)) ||
        (rc = cli_rel_config(a, c, &br->fs, &br->rel, err)) ||
        (rc = cli_checkpoint_bytes(a, &br->job.s.model, &br->rel.ckpt_bytes, err)))
        return rc;
    br->rel.step_time_s = br->job.step.step_time_s;
    br->rel.tokens_per_step = br->job.step.tokens_per_step;
    br->rel.target_tokens = br->tokens;
    br->rel.dp = br->job.s.layout.dp;
    if ((rc = rel_simulate(&br->rel, &br->r, err)) || (rc = price_for(a, c->gpu.name, &br->price, err)))
        return rc;
    double storage;
    if ((rc = storage_price(a, &storage, err)))
        return rc;
    budget_input_t *in = &br->bin;
    in->gpus = c->n_gpus;
    in->wall_s = br->r.wall_s_p50;
    in->ideal_s = br->tokens / br->rel.tokens_per_step * br->rel.step_time_s;
    in->usd_per_gpu_hour = br->price.usd_per_gpu_hour;
    in->ckpt_bytes = br->rel.ckpt_bytes;
    in->ckpt_keep = 5;
    in->storage_usd_per_gb_month = storage;
    if ((rc = cli_get_int(a, "--keep-checkpoints", &in->ckpt_keep, err)) ||
        (rc = cli_get_double(a, "--egress", &in->egress_bytes, err)) ||
        (rc = cli_get_double(a, "--egress-price", &in->egress_usd_per_tb, err)) ||
        (rc = budget_compute(in, &br->b, err)))
        return rc;
    /* Reality check of a claimed duration. */
    model_flops_t f;
    model_flops(&br->job.s.model, br->job.s.layout.seq_len, &f);
    br->model_flops = f.model_per_token * br->tokens;
    const gpu_t *g = &c->gpu;
    br->peak = g->peak_tflops[DTYPE_BF16] > 0 ? g->peak_tflops[DTYPE_BF16] : g->peak_tflops[DTYPE_FP16];
    if (br->claim) {
        br->required_mfu = budget_required_mfu(br->model_flops, c->n_gpus, br->claim_s, br->peak);
        br->feasible = br->required_mfu <= 1 && br->r.wall_s_p50 <= br->claim_s;
    }
    return ERR_OK;
}

/* One row of the provider comparison. */
typedef struct {
    char provider[32], kind[24], offering[96];
    double price, wall_days, cost;
} provider_row_t;

static int compare_providers(const cli_args_t *a, budget_run_t *br, provider_row_t **rows, int *n,
                             double *own_breakeven, err_t *err)
{
    *rows = NULL;
    *n = 0;
    *own_breakeven = NAN;
    price_t *all = NULL;
    size_t np = 0;
    int rc = price_load_all(&all, &np, err);
    if (rc)
        return rc;
    provider_row_t *out = calloc(np + 2, sizeof *out);
    if (!out) {
        free(all);
        return err_set(err, ERR_RUNTIME, "out of memory");
    }
    const char *gpu = br->job.s.cluster.gpu.name;
    rel_result_t spot_r;
    bool have_spot = false;
    for (size_t i = 0; i < np && !rc; i++) {
        if (strcmp(all[i].gpu, gpu) != 0)
            continue;
        provider_row_t *row = &out[(*n)++];
        snprintf(row->provider, sizeof row->provider, "%s", all[i].provider);
        snprintf(row->kind, sizeof row->kind, "%s", all[i].kind);
        snprintf(row->offering, sizeof row->offering, "%s", all[i].offering);
        row->price = all[i].usd_per_gpu_hour;
        double wall = br->r.wall_s_p50;
        if (strcmp(all[i].kind, "spot") == 0) {
            /* spot: the same run with preemptions */
            if (!have_spot) {
                rel_config_t c = br->rel;
                double wait;
                if ((rc = price_spot_defaults(&c.preempt_per_node_hour, &wait, err)))
                    break;
                c.preempt_wait_s = wait;
                c.progress = false;
                if ((rc = rel_simulate(&c, &spot_r, err)))
                    break;
                have_spot = true;
            }
            wall = spot_r.wall_s_p50;
        }
        row->wall_days = wall / 86400;
        row->cost = br->job.s.cluster.n_gpus * wall / 3600 * row->price + br->b.storage_usd +
                    br->b.egress_usd;
    }
    own_cluster_t own;
    err_t ignore;
    if (!rc && own_cluster_load(gpu, &own, &ignore) == 0) {
        double util = 0.8;
        if ((rc = cli_get_double(a, "--utilization", &util, err)) == 0) {
            provider_row_t *row = &out[(*n)++];
            snprintf(row->provider, sizeof row->provider, "own cluster");
            snprintf(row->kind, sizeof row->kind, "capex+opex");
            snprintf(row->offering, sizeof row->offering,
                     "$%.0f per GPU over %.0f months at %.0f%% use, power and staff",
                     own.capex_usd_per_gpu, own.amortization_months, 100 * util);
            row->price = own_usd_per_gpu_hour(&own, util);
            row->wall_days = br->r.wall_s_p50 / 86400;
            row->cost = br->b.gpu_hours * row->price + br->b.storage_usd + br->b.egress_usd;
            *own_breakeven = own_breakeven_months(&own, br->price.usd_per_gpu_hour, util);
        }
    }
    free(all);
    if (rc) {
        free(out);
        *n = 0;
        return rc;
    }
    *rows = out;
    return ERR_OK;
}

static void print_claim(const budget_run_t *br)
{
    const cluster_t *c = &br->job.s.cluster;
    double days = br->claim_s / 86400;
    printf("\n  Reality check: %.1f days on %d x %s needs %.0f%% MFU (model FLOPs %.3g over the "
           "bf16 peak).\n",
           days, c->n_gpus, c->gpu.name, 100 * br->required_mfu, br->model_flops);
    if (br->required_mfu > 1)
        printf("  That is more than %.0f%% of what the GPUs can do at their peak: not possible on "
               "this hardware.\n",
               100.0);
    else if (!br->feasible)
        printf("  That is below peak but above what this layout reaches (%.0f%% MFU): not "
               "expected to finish in time.\n",
               100 * br->job.step.mfu);
    else
        printf("  That is within reach: the simulator expects it done in %.1f days.\n",
               br->r.wall_s_p50 / 86400);
    printf("  scaleplan predicts %.1f days (P50; P90 %.1f) at %.1f%% MFU.\n",
           br->r.wall_s_p50 / 86400, br->r.wall_s_p90 / 86400, 100 * br->job.step.mfu);
}

static int print_text(const cli_args_t *a, budget_run_t *br, const provider_row_t *rows, int n,
                      double breakeven, err_t *err)
{
    (void)a;
    const cluster_t *c = &br->job.s.cluster;
    char desc[200], b1[32], b2[32], b3[32];
    layout_describe(&br->job.s.layout, desc, sizeof desc);
    printf("%s on %s tokens, %d x %s at $%.2f/GPU-h (%s %s)\n", br->job.s.model.display,
           units_fmt_count(br->tokens, b1, sizeof b1), c->n_gpus, c->gpu.name,
           br->price.usd_per_gpu_hour, br->price.provider, br->price.kind);
    printf("  layout %s%s: step %s, %.1f%% MFU\n", desc, br->job.searched ? " (best found)" : "",
           units_fmt_duration(br->job.step.step_time_s, b1, sizeof b1), 100 * br->job.step.mfu);
    printf("  compute without failures %.1f days; with failures and checkpoints %.1f days (P50, "
           "P90 %.1f): overhead %.1f%% (simulated)\n",
           br->bin.ideal_s / 86400, br->r.wall_s_p50 / 86400, br->r.wall_s_p90 / 86400,
           100 * br->b.overhead_fraction);
    char b4[32], b5[32], b6[32];
    printf("  %s GPU-hours; compute %s + checkpoint storage %s + transfer %s = %s; %s per day\n",
           units_fmt_count(br->b.gpu_hours, b1, sizeof b1),
           units_fmt_usd(br->b.compute_usd, b2, sizeof b2),
           units_fmt_usd(br->b.storage_usd, b3, sizeof b3),
           units_fmt_usd(br->b.egress_usd, b4, sizeof b4),
           units_fmt_usd(br->b.cost_usd, b5, sizeof b5),
           units_fmt_usd(br->b.cost_per_day_usd, b6, sizeof b6));
    if (br->claim)
        print_claim(br);
    if (n > 0) {
        static const char *hdr[] = {"provider", "kind", "$/GPU-h", "days", "cost", "offering"};
        table_t *t = table_create(6, hdr);
        if (!t)
            return err_set(err, ERR_RUNTIME, "out of memory");
        table_align_right(t, 2);
        table_align_right(t, 3);
        table_align_right(t, 4);
        for (int i = 0; i < n; i++)
            table_add_rowf(t, "%s\t%s\t%.2f\t%.1f\t%s\t%s", rows[i].provider, rows[i].kind,
                           rows[i].price, rows[i].wall_days,
                           units_fmt_usd(rows[i].cost, b1, sizeof b1), rows[i].offering);
        printf("\n");
        table_print(t, stdout, 2, 0);
        table_destroy(t);
        if (isfinite(breakeven))
            printf("  an own cluster breaks even against $%.2f/GPU-h after %.0f months\n",
                   br->price.usd_per_gpu_hour, breakeven);
    }
    return ERR_OK;
}

static int print_json(budget_run_t *br, const provider_row_t *rows, int n, double breakeven,
                      err_t *err)
{
    cJSON *o = cJSON_CreateObject();
    bool ok = o && json_add_number(o, "gpu_hours", br->b.gpu_hours) &&
              json_add_number(o, "cost_usd", br->b.cost_usd) &&
              json_add_number(o, "overhead_fraction", br->b.overhead_fraction) &&
              json_add_number(o, "days_p50", br->r.wall_s_p50 / 86400) &&
              json_add_number(o, "days_p90", br->r.wall_s_p90 / 86400) &&
              json_add_number(o, "ideal_days", br->bin.ideal_s / 86400) &&
              json_add_number(o, "compute_usd", br->b.compute_usd) &&
              json_add_number(o, "storage_usd", br->b.storage_usd) &&
              json_add_number(o, "egress_usd", br->b.egress_usd) &&
              json_add_number(o, "cost_per_day_usd", br->b.cost_per_day_usd) &&
              json_add_number(o, "price_usd_per_gpu_hour", br->price.usd_per_gpu_hour) &&
              cJSON_AddStringToObject(o, "price_provider", br->price.provider) &&
              json_add_number(o, "step_time_s", br->job.step.step_time_s) &&
              json_add_number(o, "mfu", br->job.step.mfu) &&
              json_add_number(o, "gpus", br->job.s.cluster.n_gpus) &&
              json_add_number(o, "tokens", br->tokens) &&
              json_add_number(o, "model_flops", br->model_flops) &&
              cJSON_AddItemToObject(o, "layout", layout_to_json(&br->job.s.layout)) &&
              cJSON_AddBoolToObject(o, "layout_searched", br->job.searched);
    if (ok && br->claim)
        ok = json_add_number(o, "claimed_days", br->claim_s / 86400) &&
             json_add_number(o, "required_mfu", br->required_mfu) &&
             cJSON_AddBoolToObject(o, "feasible", br->feasible);
    if (ok && n > 0) {
        cJSON *arr = cJSON_AddArrayToObject(o, "providers");
        ok = arr != NULL;
        for (int i = 0; ok && i < n; i++) {
            cJSON *e = cJSON_CreateObject();
            ok = e && cJSON_AddItemToArray(arr, e) &&
                 cJSON_AddStringToObject(e, "provider", rows[i].provider) &&
                 cJSON_AddStringToObject(e, "kind", rows[i].kind) &&
                 json_add_number(e, "usd_per_gpu_hour", rows[i].price) &&
                 json_add_number(e, "days", rows[i].wall_days) &&
                 json_add_number(e, "cost_usd", rows[i].cost);
        }
        if (ok && isfinite(breakeven))
            ok = json_add_number(o, "own_cluster_breakeven_months", breakeven);
    }
    int rc = ok ? json_print_stdout(o, err) : err_set(err, ERR_RUNTIME, "out of memory");
    cJSON_Delete(o);
    return rc;
}

static int run(const cli_args_t *a, err_t *err)
{
    int rc = ERR_OK;
    budget_run_t *br = calloc(1, sizeof *br);
    if (!br)
        return err_set(err, ERR_RUNTIME, "out of memory");
    provider_row_t *rows = NULL;
    int n = 0;
    double breakeven = NAN;
    rc = run_budget(a, br, err);
    if (!rc && cli_has(a, "--compare"))
        rc = compare_providers(a, br, &rows, &n, &breakeven, err);
    if (!rc)
        rc = cli_has(a, "--json") ? print_json(br, rows, n, breakeven, err)
                                   : print_text(a, br, rows, n, breakeven, err);
    free(rows);
    cli_job_free(&br->job);
    free(br);
    return rc;
}

static const cli_group_t *const groups[] = {&CLI_MODEL_OPTS,
                                         &CLI_CLUSTER_OPTS,
                                         &CLI_LAYOUT_OPTS,
                                         &CLI_SIM_OPTS,
                                         &CLI_RUN_OPTS,
                                         &own_group,
                                         &CLI_REL_OPTS,
                                         &CLI_OUTPUT_OPTS};

const cli_command_t CLI_CMD_BUDGET = {
    "budget",
    "GPU-hours and cost of a run, providers side by side, reality check",
    "scaleplan budget --model M --tokens T --gpus N --gpu G [--price P] "
                       "[--days D] [--compare] [--json]",
    "GPU-hours x price with the overhead of failures and checkpoints taken from\n"
                       "the reliability simulation (not a guessed 15-35%), checkpoint storage and\n"
                       "data transfer, the daily cost; --compare lists every catalog price for the\n"
                       "GPU, spot with preemptions and an own cluster (break-even in months);\n"
                       "--days checks whether a claimed duration is physically possible.",
    groups,
    sizeof groups / sizeof groups[0],
    run,
    0,
};
