/* scaleplan budget: what a run costs, with the overhead of failures and
 * checkpoints simulated, providers side by side, a fixed reservation, and
 * a reality check of a claimed duration. Flag parsing and printing only;
 * the budget itself is run/budget.h. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands/commands.h"
#include "commands/job.h"
#include "commands/output.h"
#include "common/json.h"
#include "common/numfmt.h"
#include "common/units.h"
#include "models/flops.h"
#include "reports/jsonout.h"
#include "models/layout_text.h"
#include "reports/textwrap.h"
#include "reports/table.h"
#include "run/budget.h"
#include "topologies/price.h"

static const cmd_opt_t own_opts[] = {
    {"--price", NULL, "$/GPU-h", "price per GPU-hour (default: the catalog's for the GPU and size)",
     CMD_KIND(CMD_PRICE, 0, 1e4)},
    {"--provider", NULL, "NAME", "price from the catalog for this provider (aws, lambda, ...)",
     CMD_WORD},
    {"--price-end", NULL, "low|mid|high", "where in a quoted price range (default mid)", CMD_WORD},
    {"--compare", NULL, NULL, "every catalog quote for the GPU and size, spot and an own cluster",
     CMD_WORD},
    {"--storage-price", NULL, "$/GB-month",
     "checkpoint storage price (default: the provider's tiers)", CMD_KIND(CMD_MONEY, 0, 1e4)},
    {"--storage-tier", NULL, "NAME", "storage price entry (s3-standard, gcs-standard, r2, ...)",
     CMD_WORD},
    {"--retain-months", NULL, "M", "months the checkpoints stay stored after the run (default 0)",
     CMD_X(0, 1200)},
    {"--dataset-size", NULL, "BYTES", "training data read in (ingress)",
     CMD_KIND(CMD_BYTES, 0, 1e21)},
    {"--egress", NULL, "BYTES", "data moved out besides checkpoints (e.g. 50TB)",
     CMD_KIND(CMD_BYTES, 0, 1e21)},
    {"--export-checkpoints", NULL, "N", "checkpoints moved out at the end (default 0)",
     CMD_N(0, 100000)},
    {"--egress-price", NULL, "$/TB", "data transfer out price (default: the provider's tiers)",
     CMD_KIND(CMD_MONEY, 0, 1e6)},
    {"--utilization", NULL, "U", "own cluster: share of hours in use (default 0.8)",
     CMD_X(0.01, 1)},
    {"--capex", NULL, "USD", "own cluster: capital cost per GPU (default: catalog)",
     CMD_KIND(CMD_MONEY, 0, 1e8)},
    {"--kw-per-gpu", NULL, "KW", "own cluster: power per GPU in training (default: catalog)",
     CMD_X(0, 100)},
    {"--pue", NULL, "X", "own cluster: power usage effectiveness (default: catalog)", CMD_X(1, 5)},
    {"--usd-per-kwh", NULL, "$", "own cluster: electricity price (default: catalog)",
     CMD_KIND(CMD_MONEY, 0, 10)},
    {"--staff-usd-per-gpu-month", NULL, "$", "own cluster: staff cost (default: catalog)",
     CMD_KIND(CMD_MONEY, 0, 1e6)},
    {"--amortization-months", NULL, "M", "own cluster: depreciation period (default: catalog)",
     CMD_X(1, 600)},
};
static const cmd_group_t own_group = {"Budget", own_opts, sizeof own_opts / sizeof own_opts[0]};

typedef struct {
    cmd_job_t job;
    rel_config_t rel;
    rel_result_t r;
    failure_set_t fs;
    cmd_failure_pick_t pick;
    budget_input_t bin;
    budget_t b;
    price_t price;
    price_end_t end;
    bool price_given, reservation, claim, feasible, have_own;
    own_cluster_t own;
    double utilization;
    double tokens, claim_s, required_mfu, model_flops, peak;
} budget_run_t;

static int price_for(const cmd_args_t *a, budget_run_t *br, err_t *err)
{
    const char *gpu = br->job.s.cluster.gpu.name;
    int n = br->job.s.cluster.n_gpus;
    price_t *p = &br->price;
    memset(p, 0, sizeof *p);
    const char *v = cmd_get(a, "--price");
    br->end = PRICE_MID;
    int rc;
    if ((v = cmd_get(a, "--price-end")) && (rc = price_end_parse(v, &br->end, err)))
        return rc;
    if ((v = cmd_get(a, "--price"))) {
        br->price_given = true;
        snprintf(p->provider, sizeof p->provider, "given");
        snprintf(p->kind, sizeof p->kind, "--price");
        return cmd_get_double(a, "--price", &p->usd_per_gpu_hour, err);
    }
    if ((v = cmd_get(a, "--provider")))
        return price_find(gpu, v, NULL, n, p, err);
    return price_default_for_gpu(gpu, n, p, err);
}

/* Own-cluster figures: the catalog's, the flags over them. */
static int own_for(const cmd_args_t *a, budget_run_t *br, err_t *err)
{
    err_t ignore;
    br->utilization = 0.8;
    int rc = cmd_get_double(a, "--utilization", &br->utilization, err);
    if (rc)
        return rc;
    bool have = own_cluster_load(br->job.s.cluster.gpu.name, &br->own, &ignore) == 0;
    if (!have) {
        if (!cmd_has(a, "--capex"))
            return ERR_OK; /* no figures: no own-cluster row */
        memset(&br->own, 0, sizeof br->own);
        br->own.amortization_months = 36;
        br->own.pue = 1.25;
        snprintf(br->own.source, sizeof br->own.source, "given on the command line");
    }
    double capex = -1;
    if ((rc = cmd_get_double(a, "--capex", &capex, err)) ||
        (rc = cmd_get_double(a, "--kw-per-gpu", &br->own.kw_per_gpu, err)) ||
        (rc = cmd_get_double(a, "--pue", &br->own.pue, err)) ||
        (rc = cmd_get_double(a, "--usd-per-kwh", &br->own.usd_per_kwh, err)) ||
        (rc = cmd_get_double(a, "--staff-usd-per-gpu-month", &br->own.staff_usd_per_gpu_month,
                             err)) ||
        (rc = cmd_get_double(a, "--amortization-months", &br->own.amortization_months, err)))
        return rc;
    if (capex >= 0)
        br->own.capex_usd_per_gpu = capex;
    if (!have && !(br->own.kw_per_gpu > 0))
        return err_setf(err, ERR_INPUT, NULL, "--kw-per-gpu",
                        "the catalog has no own-cluster figures for %s: give --kw-per-gpu with "
                        "--capex",
                        br->job.s.cluster.gpu.name);
    br->have_own = true;
    return ERR_OK;
}

static int run_budget(const cmd_args_t *a, budget_run_t *br, err_t *err)
{
    int rc;
    double duration;
    if ((rc = cmd_run_length(a, &br->tokens, &duration, err)))
        return rc;
    if (!(br->tokens > 0) && !(duration > 0))
        return err_setf(err, ERR_INPUT, NULL, "--tokens",
                        "say what to price: --tokens 2T (a token count), or --days 14 (a fixed "
                        "reservation)");
    br->reservation = !(br->tokens > 0);
    br->claim = br->tokens > 0 && duration > 0;
    br->claim_s = duration;
    if ((rc = cmd_job_setup(a, &br->job, err)))
        return rc;
    const cluster_t *c = &br->job.s.cluster;
    if ((rc = price_for(a, br, err)))
        return rc;
    /* a provider's quote says what kind of site it is */
    const char *env_hint = br->price_given || !cmd_has(a, "--provider") ? NULL
                                                                        : br->price.environment;
    if ((rc = cmd_failure_set(a, c, env_hint, &br->fs, &br->pick, err)) ||
        (rc = cmd_rel_config(a, c, &br->fs, br->pick.choice.environment, &br->rel, err)) ||
        (rc = cmd_checkpoint_bytes(a, &br->job.s.model, &br->rel.ckpt_bytes, err)))
        return rc;
    br->rel.step_time_s = br->job.step.step_time_s;
    br->rel.tokens_per_step = br->job.step.tokens_per_step;
    br->rel.target_tokens = br->tokens;
    br->rel.duration_s = br->reservation ? duration : 0;
    br->rel.dp = br->job.s.layout.dp;
    if ((rc = rel_simulate(&br->rel, &br->r, err)))
        return rc;
    budget_input_t *in = &br->bin;
    in->gpus = c->n_gpus;
    in->wall_s = br->reservation ? duration : br->r.wall_s_p50;
    in->ideal_s = br->reservation ? duration
                                  : br->tokens / br->rel.tokens_per_step * br->rel.step_time_s;
    in->usd_per_gpu_hour = br->price_given ? br->price.usd_per_gpu_hour
                                           : price_usd(&br->price, br->end);
    in->ckpt_bytes = br->rel.ckpt_bytes;
    in->ckpt_keep = br->rel.keep_checkpoints;
    in->checkpoints = br->r.checkpoints_mean;
    in->egress_usd_per_tb = -1;
    const char *tier = cmd_get(a, "--storage-tier");
    if (!tier && !br->price_given && cmd_has(a, "--provider"))
        tier = br->price.provider;
    if ((rc = price_storage_load(tier, &in->storage, err)) ||
        (rc = cmd_get_double(a, "--storage-price", &in->storage_usd_per_gb_month, err)) ||
        (rc = cmd_get_double(a, "--retain-months", &in->retain_months, err)) ||
        (rc = cmd_get_double(a, "--dataset-size", &in->dataset_bytes, err)) ||
        (rc = cmd_get_double(a, "--egress", &in->egress_bytes, err)) ||
        (rc = cmd_get_int(a, "--export-checkpoints", &in->export_checkpoints, err)) ||
        (rc = cmd_get_double(a, "--egress-price", &in->egress_usd_per_tb, err)) ||
        (rc = budget_compute(in, &br->b, err)) || (rc = own_for(a, br, err)))
        return rc;
    /* Reality check of a claimed duration. */
    model_flops_t f;
    model_flops(&br->job.s.model, br->job.s.layout.seq_len, &f);
    br->model_flops = f.model_per_token * (br->reservation ? br->r.tokens_p50 : br->tokens);
    const gpu_t *g = &c->gpu;
    br->peak = g->peak_tflops[DTYPE_BF16] > 0 ? g->peak_tflops[DTYPE_BF16] : g->peak_tflops[DTYPE_FP16];
    if (br->claim) {
        br->required_mfu = budget_required_mfu(br->model_flops, c->n_gpus, br->claim_s, br->peak);
        br->feasible = br->required_mfu <= 1 && br->r.wall_s_p50 <= br->claim_s;
    }
    return ERR_OK;
}

static void print_claim(const budget_run_t *br)
{
    const cluster_t *c = &br->job.s.cluster;
    double days = br->claim_s / 86400;
    char flops[32];
    printf("\n  Reality check: %.1f days on %d x %s needs MFU %.0f%% of the bf16 dense peak "
           "(model FLOPs: %s).\n",
           days, c->n_gpus, c->gpu.name, 100 * br->required_mfu,
           numfmt_count(br->model_flops, flops, sizeof flops));
    if (br->required_mfu > 1)
        printf("  That is more than %.0f%% of what the GPUs can do at their peak: not possible on "
               "this hardware.\n",
               100.0);
    else if (!br->feasible)
        printf("  That is below peak but above what this layout reaches (MFU %.0f%%): not "
               "expected to finish in time.\n",
               100 * br->job.step.mfu);
    else
        printf("  That is within reach: the simulator expects it done in %.1f days.\n",
               br->r.wall_s_p50 / 86400);
    printf("  scaleplan predicts %.1f days (P50; P90 %.1f) at MFU %.1f%%.\n",
           br->r.wall_s_p50 / 86400, br->r.wall_s_p90 / 86400, 100 * br->job.step.mfu);
}

static void print_price_line(const budget_run_t *br)
{
    const price_t *p = &br->price;
    char range[96] = "";
    if (!br->price_given && p->usd_per_gpu_hour_high > 0)
        snprintf(range, sizeof range, ": the %s of the quoted $%.2f-%.2f (--price-end)",
                 br->end == PRICE_MID ? "middle" : br->end == PRICE_LOW ? "low end" : "high end",
                 p->usd_per_gpu_hour, p->usd_per_gpu_hour_high);
    if (br->price_given)
        printf("  price $%.2f/GPU-h given (--price)\n", br->bin.usd_per_gpu_hour);
    else
        printf("  price $%.2f/GPU-h: %s %s '%s' (%s)%s%s%s\n", br->bin.usd_per_gpu_hour, p->provider,
               p->kind, p->offering, p->date, range, p->size_source[0] ? "; " : "",
               p->size_source);
}

static int print_text(const cmd_args_t *a, budget_run_t *br, const budget_offer_t *rows, int n,
                      int skipped, double breakeven, err_t *err)
{
    const cluster_t *c = &br->job.s.cluster;
    const budget_t *b = &br->b;
    char desc[320], b1[32], b2[32], b3[32], b4[32], b5[32], b6[32];
    layout_text_long(&br->job.s.layout, desc, sizeof desc);
    if (br->reservation)
        printf("%s on %d x %s for %.1f days (a fixed reservation)\n", br->job.s.model.display,
               c->n_gpus, c->gpu.name, br->rel.duration_s / 86400);
    else
        printf("%s on %s tokens, %d x %s\n", br->job.s.model.display,
               units_fmt_count(br->tokens, b1, sizeof b1), c->n_gpus, c->gpu.name);
    print_price_line(br);
    printf("  layout %s%s: step %s, MFU %s\n", desc, br->job.searched ? " (best found)" : "",
           units_fmt_duration(br->job.step.step_time_s, b1, sizeof b1),
           numfmt_pct(br->job.step.mfu, "of bf16 dense peak", b2, sizeof b2));
    /* the layout's terms and the statistics the lines below use */
    char terms[400];
    snprintf(terms, sizeof terms, "%s MFU P10 P50 P90", desc);
    textwrap_legend(stdout, terms, 2, 100);
    cmd_rel_print_defaults(a, &br->rel, &br->pick, &br->r);
    printf("\n");
    if (br->reservation)
        printf("  trains %s tokens in %.1f days (P50; P10 %s, P90 %s): goodput %.1f%%\n",
               units_fmt_count(br->r.tokens_p50, b1, sizeof b1), br->rel.duration_s / 86400,
               units_fmt_count(br->r.tokens_p10, b2, sizeof b2),
               units_fmt_count(br->r.tokens_p90, b3, sizeof b3), 100 * br->r.goodput_mean);
    else
        printf("  compute without failures %.1f days; with failures and checkpoints %.1f days "
               "(P50, P90 %.1f): overhead %.1f%% (simulated)\n",
               br->bin.ideal_s / 86400, br->r.wall_s_p50 / 86400, br->r.wall_s_p90 / 86400,
               100 * b->overhead_fraction);
    printf("  %s GPU-hours; compute %s + checkpoint storage %s + transfer %s = %s; %s per day\n",
           units_fmt_count(b->gpu_hours, b1, sizeof b1), units_fmt_usd(b->compute_usd, b2, sizeof b2),
           units_fmt_usd(b->storage_usd, b3, sizeof b3),
           units_fmt_usd(b->ingress_usd + b->egress_usd, b4, sizeof b4),
           units_fmt_usd(b->cost_usd, b5, sizeof b5), units_fmt_usd(b->cost_per_day_usd, b6, sizeof b6));
    printf("  checkpoint storage: %.0f checkpoints of %.0f GB written, %s kept: %.1f TB at the end "
           "at $%.4g/GB-month (%s): %s during the run, %s per month kept after\n",
           br->r.checkpoints_mean, br->rel.ckpt_bytes / 1e9,
           br->rel.keep_checkpoints > 0 ? units_fmt_count(b->checkpoints_kept, b1, sizeof b1)
                                        : "all",
           b->storage_tb, b->storage_usd_per_gb_month,
           br->bin.storage_usd_per_gb_month > 0 ? "given" : br->bin.storage.name,
           units_fmt_usd(b->storage_gb_months * b->storage_usd_per_gb_month, b2, sizeof b2),
           units_fmt_usd(b->storage_usd_per_month_after, b3, sizeof b3));
    if (b->ingress_tb > 0 || b->egress_tb > 0)
        printf("  data transfer: %.1f TB in (%s), %.1f TB out (%s)\n", b->ingress_tb,
               units_fmt_usd(b->ingress_usd, b1, sizeof b1), b->egress_tb,
               units_fmt_usd(b->egress_usd, b2, sizeof b2));
    if (br->claim)
        print_claim(br);
    if (n > 0) {
        static const char *hdr[] = {"provider", "kind", "$/GPU-h", "range", "days", "cost",
                                    "offering"};
        table_t *t = table_create(7, hdr);
        if (!t)
            return err_set(err, ERR_RUNTIME, "out of memory");
        table_align_right(t, 2);
        table_align_right(t, 4);
        table_align_right(t, 5);
        for (int i = 0; i < n; i++) {
            char range[32] = "";
            if (rows[i].usd_high > rows[i].usd_low)
                snprintf(range, sizeof range, "%.2f-%.2f", rows[i].usd_low, rows[i].usd_high);
            table_add_rowf(t, "%s\t%s\t%.2f\t%s\t%.1f\t%s\t%s", rows[i].provider, rows[i].kind,
                           rows[i].usd_per_gpu_hour, range, rows[i].wall_days,
                           units_fmt_usd(rows[i].cost_usd, b1, sizeof b1), rows[i].offering);
        }
        printf("\n");
        table_print(t, stdout, 2, 0);
        table_destroy(t);
        printf("  prices at the %s end of quoted ranges (--price-end); %d quote%s for other job "
               "sizes left out\n",
               price_end_name(br->end), skipped, skipped == 1 ? "" : "s");
    }
    if (br->have_own && isfinite(breakeven)) {
        char capex[32], kw[32], kwh[32], staff[32];
        printf("  an own cluster breaks even against $%.2f/GPU-h after %.0f months (capex %s "
               "per GPU, %s kW at PUE %.2f and $%s/kWh, staff %s per GPU-month, %.0f "
               "months; --capex --usd-per-kwh --pue --staff-usd-per-gpu-month "
               "--amortization-months --utilization)\n",
               br->bin.usd_per_gpu_hour, breakeven,
               numfmt_usd(br->own.capex_usd_per_gpu, capex, sizeof capex),
               numfmt_real(br->own.kw_per_gpu, kw, sizeof kw), br->own.pue,
               numfmt_real(br->own.usd_per_kwh, kwh, sizeof kwh),
               numfmt_usd(br->own.staff_usd_per_gpu_month, staff, sizeof staff),
               br->own.amortization_months);
    }
    return ERR_OK;
}

static cJSON *budget_json(const cmd_args_t *a, budget_run_t *br, const budget_offer_t *rows, int n,
                          double breakeven)
{
    const budget_t *b = &br->b;
    cJSON *o = cJSON_CreateObject();
    bool ok = o && json_add_number(o, "gpu_hours", b->gpu_hours) &&
              json_add_number(o, "cost_usd", b->cost_usd) &&
              json_add_number(o, "overhead_fraction", b->overhead_fraction) &&
              json_add_number(o, "days_p50", br->r.wall_s_p50 / 86400) &&
              json_add_number(o, "days_p90", br->r.wall_s_p90 / 86400) &&
              json_add_number(o, "ideal_days", br->bin.ideal_s / 86400) &&
              json_add_number(o, "goodput", br->r.goodput_mean) &&
              cJSON_AddBoolToObject(o, "reservation", br->reservation) &&
              json_add_number(o, "compute_usd", b->compute_usd) &&
              json_add_number(o, "storage_usd", b->storage_usd) &&
              json_add_number(o, "storage_tb", b->storage_tb) &&
              json_add_number(o, "storage_usd_per_gb_month", b->storage_usd_per_gb_month) &&
              json_add_number(o, "storage_usd_per_month_after", b->storage_usd_per_month_after) &&
              json_add_number(o, "checkpoints_written", br->r.checkpoints_mean) &&
              json_add_number(o, "checkpoints_kept", b->checkpoints_kept) &&
              json_add_number(o, "checkpoint_bytes", br->rel.ckpt_bytes) &&
              json_add_number(o, "ingress_tb", b->ingress_tb) &&
              json_add_number(o, "egress_tb", b->egress_tb) &&
              json_add_number(o, "ingress_usd", b->ingress_usd) &&
              json_add_number(o, "egress_usd", b->egress_usd) &&
              json_add_number(o, "cost_per_day_usd", b->cost_per_day_usd) &&
              json_add_number(o, "price_usd_per_gpu_hour", br->bin.usd_per_gpu_hour) &&
              cJSON_AddStringToObject(o, "price_provider", br->price.provider) &&
              cJSON_AddStringToObject(o, "price_kind", br->price.kind) &&
              cJSON_AddStringToObject(o, "price_end", br->price_given ? "given"
                                                                      : price_end_name(br->end)) &&
              json_add_number(o, "price_low", br->price_given ? br->bin.usd_per_gpu_hour
                                                              : price_usd(&br->price, PRICE_LOW)) &&
              json_add_number(o, "price_high", br->price_given ? br->bin.usd_per_gpu_hour
                                                               : price_usd(&br->price, PRICE_HIGH)) &&
              json_add_number(o, "step_time_s", br->job.step.step_time_s) &&
              json_add_number(o, "mfu", br->job.step.mfu) &&
              json_add_number(o, "gpus", br->job.s.cluster.n_gpus) &&
              json_add_number(o, "model_flops", br->model_flops) &&
              cJSON_AddItemToObject(o, "layout", layout_text_json(&br->job.s.layout)) &&
              cJSON_AddBoolToObject(o, "layout_searched", br->job.searched) &&
              cmd_rel_defaults_json(o, a, &br->rel, &br->pick, &br->r);
    if (ok && br->reservation)
        ok = json_add_number(o, "days", br->rel.duration_s / 86400) &&
             json_add_number(o, "tokens_p10", br->r.tokens_p10) &&
             json_add_number(o, "tokens_p50", br->r.tokens_p50) &&
             json_add_number(o, "tokens_p90", br->r.tokens_p90);
    else if (ok)
        ok = json_add_number(o, "tokens", br->tokens);
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
                 json_add_number(e, "usd_per_gpu_hour", rows[i].usd_per_gpu_hour) &&
                 json_add_number(e, "usd_low", rows[i].usd_low) &&
                 json_add_number(e, "usd_high", rows[i].usd_high) &&
                 json_add_number(e, "days", rows[i].wall_days) &&
                 json_add_number(e, "cost_usd", rows[i].cost_usd);
        }
    }
    if (ok && br->have_own && isfinite(breakeven))
        ok = json_add_number(o, "own_cluster_breakeven_months", breakeven) &&
             json_add_number(o, "own_capex_usd_per_gpu", br->own.capex_usd_per_gpu) &&
             json_add_number(o, "own_usd_per_kwh", br->own.usd_per_kwh) &&
             json_add_number(o, "own_pue", br->own.pue) &&
             json_add_number(o, "own_utilization", br->utilization);
    if (!ok) {
        cJSON_Delete(o);
        return NULL;
    }
    return o;
}

static int run(const cmd_args_t *a, err_t *err)
{
    int rc = ERR_OK;
    budget_run_t *br = calloc(1, sizeof *br);
    if (!br)
        return err_set(err, ERR_RUNTIME, "out of memory");
    budget_offer_t *rows = NULL;
    int n = 0, skipped = 0;
    double breakeven = NAN;
    rc = run_budget(a, br, err);
    if (!rc && cmd_has(a, "--compare"))
        rc = budget_offers(br->job.s.cluster.gpu.name, &br->rel, &br->r, &br->bin, &br->b,
                           br->reservation, br->end, br->have_own ? &br->own : NULL,
                           br->utilization, &rows, &n, &skipped, &breakeven, err);
    else if (!rc && br->have_own && !br->price_given)
        breakeven = own_breakeven_months(&br->own, br->bin.usd_per_gpu_hour, br->utilization);
    if (!rc && !cmd_machine_output(a))
        rc = print_text(a, br, rows, n, skipped, breakeven, err);
    if (!rc && cmd_machine_output(a)) {
        cJSON *j = budget_json(a, br, rows, n, breakeven);
        rc = j ? cmd_output_result(a, "scaleplan budget", j, NULL, err)
               : err_set(err, ERR_RUNTIME, "out of memory building JSON");
        cJSON_Delete(j);
    }
    free(rows);
    cmd_job_free(&br->job);
    free(br);
    return rc;
}

static const cmd_group_t *const groups[] = {&CMD_MODEL_OPTS,
                                         &CMD_CLUSTER_OPTS,
                                         &CMD_LAYOUT_OPTS,
                                         &CMD_SIM_OPTS,
                                         &CMD_RUN_OPTS,
                                         &own_group,
                                         &CMD_REL_OPTS,
                                         &CMD_OUTPUT_OPTS};

const cmd_command_t CMD_CMD_BUDGET = {
    "budget",
    "GPU-hours and cost of a run or a reservation, providers side by side, reality check",
    "scaleplan budget --model M --gpus N --gpu G (--tokens T [--days D] | --days D) "
    "[--price P | --provider NAME] [--price-end low|mid|high] [--compare] [--json|--csv]",
    "GPU-hours x price with the overhead of failures and checkpoints taken from\n"
    "the reliability simulation (not a guessed 15-35%), checkpoint storage in TB\n"
    "and dollars (growing as checkpoints are written, --keep-checkpoints K|all,\n"
    "--retain-months), data transfer (--dataset-size, --egress,\n"
    "--export-checkpoints) and the daily cost. --days without --tokens prices a\n"
    "fixed reservation and says how many tokens it trains; with --tokens it checks\n"
    "whether the claimed duration is physically possible. Prices come from the\n"
    "catalog for the GPU and the job's size (quoted ranges at --price-end, default\n"
    "mid); --compare lists every quote that applies, spot with preemptions and an\n"
    "own cluster (--capex, --usd-per-kwh, --pue, --utilization, ...) with its\n"
    "break-even in months. Every default the answer rests on is printed.",
    groups,
    sizeof groups / sizeof groups[0],
    run,
    0,
};
