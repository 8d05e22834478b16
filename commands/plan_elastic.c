/* plan_elastic: plan --elastic (see the header). */
#include "commands/plan_elastic.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "commands/output.h"
#include "common/json.h"
#include "common/units.h"
#include "models/layout_json.h"
#include "reports/table.h"
#include "topologies/price.h"

static const cmd_opt_t elastic_opts[] = {
    {"--elastic", NULL, "LO..HI",
     "list every GPU count from LO to HI (steps of --elastic-step): the fastest layout keeping "
     "the global batch within --batch-band, days and cost (with --spot: preemptions)",
     CMD_KIND(CMD_INT_SPAN, 1, 1 << 24)},
    {"--elastic-step", NULL, "N", "with --elastic: GPUs between counts (default: a node's)",
     CMD_N(1, 1 << 24)},
    {"--batch-band", NULL, "X%",
     "with --elastic: how far the global batch may move from --global-batch (default 10%)",
     CMD_WORD},
    {"--target-days", NULL, "D", "with --elastic: the fewest GPUs whose P50 finishes in D days",
     CMD_X(0.001, 36500)},
};
const cmd_group_t CMD_ELASTIC_OPTS = {"Elastic and spot plans", elastic_opts,
                                      sizeof elastic_opts / sizeof elastic_opts[0]};

/* "10%" or "0.1" into 0.1; ERR_INPUT naming --batch-band. */
static int parse_band(const char *text, double *out, err_t *err)
{
    char *end = NULL;
    double v = strtod(text, &end);
    bool pct = end && *end == '%' && end[1] == '\0';
    if (end == text || (!pct && *end != '\0'))
        return err_setf(err, ERR_INPUT, NULL, "--batch-band", "give a share like 10%% or 0.1 (got '%s')",
                        text);
    if (pct)
        v /= 100;
    if (!(v >= 0 && v < 1))
        return err_setf(err, ERR_INPUT, NULL, "--batch-band", "must be from 0%% to below 100%% (got '%s')",
                        text);
    *out = v;
    return ERR_OK;
}

typedef struct {
    int target, lo, hi, step, n;
    double band, target_days;
    int counts[ELASTIC_MAX_COUNTS];
    elastic_row_t *rows;
    int fewest;
    char price_note[200]; /* how spot capacity was priced */
} elastic_run_t;

/* On spot capacity without --price: every count at the catalog's first
 * spot quote for the GPU that covers the largest count (the provider's,
 * with --provider); without one, the plan's own price, said. */
static int spot_price(const cmd_args_t *a, ladder_input_t *in, int gpus, elastic_run_t *e,
                      err_t *err)
{
    if (!(in->rel.preempt_per_node_hour > 0) || cmd_has(a, "--price"))
        return ERR_OK;
    price_t *all = NULL;
    size_t n = 0;
    int rc = price_load_all(&all, &n, err);
    if (rc)
        return rc;
    const char *provider = cmd_get(a, "--provider");
    const price_t *hit = NULL;
    for (size_t i = 0; i < n && !hit; i++)
        if (strcmp(all[i].gpu, in->base->gpu.name) == 0 && strcmp(all[i].kind, "spot") == 0 &&
            price_fits(&all[i], gpus) && (!provider || strcasecmp(all[i].provider, provider) == 0))
            hit = &all[i];
    if (hit) {
        in->usd_per_gpu_hour = price_usd(hit, in->price_end);
        in->price_gpu[0] = '\0'; /* one price for every count */
        snprintf(e->price_note, sizeof e->price_note, "spot quote $%.2f/GPU-h (%s)",
                 in->usd_per_gpu_hour, hit->provider);
    } else {
        snprintf(e->price_note, sizeof e->price_note,
                 "no spot quote for %s in the catalog: priced as the plan's (give --price)",
                 in->base->gpu.name);
    }
    free(all);
    return ERR_OK;
}

static int setup(const cmd_args_t *a, ladder_input_t *in, elastic_run_t *e, err_t *err)
{
    double lo, hi;
    int rc;
    if ((rc = cmd_get_span(a, "--elastic", &lo, &hi, err)))
        return rc;
    e->band = 0.10;
    const char *v = cmd_get(a, "--batch-band");
    if (v && (rc = parse_band(v, &e->band, err)))
        return rc;
    e->step = in->base->gpus_per_node > 0 ? in->base->gpus_per_node : 8;
    if ((rc = cmd_get_int(a, "--elastic-step", &e->step, err)) ||
        (rc = cmd_get_double(a, "--target-days", &e->target_days, err)))
        return rc;
    if (in->space.global_batch_min != in->space.global_batch_max)
        return err_setf(err, ERR_INPUT, NULL, "--global-batch",
                        "give one target with --elastic (the band is --batch-band), not a range");
    if (in->space.seq_len_max > in->space.seq_len)
        return err_setf(err, ERR_INPUT, NULL, "--seq-len",
                        "give one sequence length with --elastic");
    e->target = in->space.global_batch_min;
    elastic_band(e->target, e->band, &e->lo, &e->hi);
    in->space.global_batch_min = e->lo;
    in->space.global_batch_max = e->hi;
    in->space.batch_tokens_min = in->space.batch_tokens_max = 0;
    e->n = elastic_counts((int)lo, (int)hi, e->step, e->counts, ELASTIC_MAX_COUNTS);
    if ((rc = spot_price(a, in, (int)hi, e, err)))
        return rc;
    if ((hi - lo) / e->step + 1 > ELASTIC_MAX_COUNTS)
        return err_setf(err, ERR_INPUT, NULL, "--elastic",
                        "%.0f..%.0f in steps of %d is more than %d counts (raise --elastic-step)",
                        lo, hi, e->step, ELASTIC_MAX_COUNTS);
    return ERR_OK;
}

static const char *zero_name(const layout_t *l)
{
    static const char *names[] = {"ZeRO-0", "ZeRO-1", "ZeRO-2", "ZeRO-3"};
    if (l->zero == 0 && l->distributed_optimizer)
        return "dist-opt";
    return l->zero >= 0 && l->zero <= 3 ? names[l->zero] : "?";
}

/* Which counts missed the band and why; the fewest GPUs for the date. */
static void print_footer(const elastic_run_t *e)
{
    char b[32];
    int infeasible = 0;
    for (int i = 0; i < e->n; i++)
        infeasible += !e->rows[i].rung.feasible;
    printf("  %d of %d counts keep the batch within the band%s\n", e->n - infeasible, e->n,
           infeasible ? "; at the others no micro-batch x accumulation x DP that fits in memory "
                        "lands in it:"
                      : "");
    for (int i = 0; i < e->n; i++)
        if (!e->rows[i].rung.feasible)
            printf("    %d GPUs: %s\n", e->rows[i].gpus, e->rows[i].rung.why_not);
    if (e->target_days > 0) {
        if (e->fewest >= 0)
            printf("  * fewest GPUs that finish in %.1f days (P50): %d (%.1f days, %s)\n",
                   e->target_days, e->rows[e->fewest].gpus, e->rows[e->fewest].rung.days_p50,
                   units_fmt_usd(e->rows[e->fewest].rung.cost_usd, b, sizeof b));
        else
            printf("  no count from %d to %d finishes in %.1f days (P50)\n", e->counts[0],
                   e->counts[e->n - 1], e->target_days);
    }
}

static int print_text(const ladder_input_t *in, const elastic_run_t *e)
{
    char a[32];
    printf("Elastic plan: %s tokens on %s, global batch %d sequences of %d tokens within %.0f%% "
           "(%d..%d), counts %d..%d every %d GPUs%s\n",
           units_fmt_count(in->tokens, a, sizeof a), in->base->gpu.name, e->target,
           in->space.seq_len, 100 * e->band, e->lo, e->hi, e->counts[0], e->counts[e->n - 1],
           e->step, in->rel.preempt_per_node_hour > 0 ? ", spot capacity (preemptions)" : "");
    if (e->price_note[0])
        printf("  spot: %s; preemptions %.3g per node-hour, %.0f min waiting for capacity after "
               "each (price catalog's spot assumptions)\n",
               e->price_note, in->rel.preempt_per_node_hour, in->rel.preempt_wait_s / 60);
    static const char *hdr[] = {"GPUs", "layout", "ZeRO", "mb", "accum", "global batch",
                                "step", "tokens/s", "days P50", "P90", "interrupts", "cost"};
    table_t *t = table_create(12, hdr);
    if (!t)
        return ERR_RUNTIME;
    for (int k = 3; k < 12; k++)
        table_align_right(t, k);
    for (int i = 0; i < e->n; i++) {
        const rung_t *r = &e->rows[i].rung;
        char mark[4] = "";
        if (i == e->fewest)
            snprintf(mark, sizeof mark, "*");
        if (!r->feasible) {
            table_add_rowf(t, "%d\tinfeasible (below)\t\t\t\t\t\t\t\t\t\t", e->rows[i].gpus);
            continue;
        }
        const layout_t *l = &r->layout;
        char step[32], tps[32], cost[32];
        char par[48];
        if (l->cp > 1)
            snprintf(par, sizeof par, "TP%d CP%d PP%d DP%d", l->tp, l->cp, l->pp, l->dp);
        else
            snprintf(par, sizeof par, "TP%d PP%d DP%d", l->tp, l->pp, l->dp);
        table_add_rowf(t, "%d%s\t%s\t%s\t%d\t%d\t%d (%+.1f%%)\t%s\t%s\t%.1f\t%.1f\t%.1f\t%s",
                       e->rows[i].gpus, mark, par, zero_name(l), l->micro_batch,
                       l->grad_accum > 0 ? l->grad_accum : 1, l->global_batch,
                       100.0 * l->global_batch / e->target - 100,
                       units_fmt_duration(r->step.step_time_s, step, sizeof step),
                       units_fmt_count(r->tokens_per_s, tps, sizeof tps), r->days_p50,
                       r->days_p90, r->interruptions, units_fmt_usd(r->cost_usd, cost, sizeof cost));
    }
    printf("\n");
    table_print(t, stdout, 2, 0);
    table_destroy(t);
    print_footer(e);
    return ERR_OK;
}

static cJSON *elastic_json(const ladder_input_t *in, const elastic_run_t *e)
{
    cJSON *o = cJSON_CreateObject(), *arr = NULL;
    bool ok = o && json_add_number(o, "tokens", in->tokens) &&
              cJSON_AddStringToObject(o, "gpu", in->base->gpu.name) &&
              json_add_number(o, "target_global_batch", e->target) &&
              json_add_number(o, "batch_band", e->band) &&
              json_add_number(o, "global_batch_min", e->lo) &&
              json_add_number(o, "global_batch_max", e->hi) &&
              cJSON_AddBoolToObject(o, "spot", in->rel.preempt_per_node_hour > 0) &&
              (arr = cJSON_AddArrayToObject(o, "counts"));
    for (int i = 0; ok && i < e->n; i++) {
        const rung_t *r = &e->rows[i].rung;
        cJSON *x = cJSON_CreateObject();
        ok = x && cJSON_AddItemToArray(arr, x) && json_add_number(x, "gpus", e->rows[i].gpus) &&
             cJSON_AddBoolToObject(x, "feasible", r->feasible);
        if (ok && !r->feasible)
            ok = cJSON_AddStringToObject(x, "why_not", r->why_not) != NULL;
        if (ok && r->feasible)
            ok = cJSON_AddItemToObject(x, "layout", layout_to_json(&r->layout)) &&
                 cJSON_AddStringToObject(x, "framework", r->framework) &&
                 json_add_number(x, "step_time_s", r->step.step_time_s) &&
                 json_add_number(x, "tokens_per_s", r->tokens_per_s) &&
                 json_add_number(x, "days_p50", r->days_p50) &&
                 json_add_number(x, "days_p90", r->days_p90) &&
                 json_add_number(x, "interruptions_mean", r->interruptions) &&
                 json_add_number(x, "cost_usd", r->cost_usd);
    }
    if (ok && e->target_days > 0)
        ok = json_add_number(o, "target_days", e->target_days) &&
             (e->fewest >= 0 ? json_add_number(o, "fewest_gpus_for_target",
                                               e->rows[e->fewest].gpus)
                             : cJSON_AddNullToObject(o, "fewest_gpus_for_target") != NULL);
    if (!ok) {
        cJSON_Delete(o);
        return NULL;
    }
    return o;
}

int plan_elastic_check(const cmd_args_t *a, err_t *err)
{
    static const char *const with[] = {"--elastic-step", "--batch-band", "--target-days"};
    for (size_t i = 0; i < sizeof with / sizeof with[0]; i++)
        if (!cmd_has(a, "--elastic") && cmd_has(a, with[i]))
            return err_setf(err, ERR_INPUT, NULL, with[i], "goes with --elastic LO..HI");
    return ERR_OK;
}

int plan_elastic_run(const cmd_args_t *a, ladder_input_t *in, err_t *err)
{
    elastic_run_t *e = calloc(1, sizeof *e);
    if (!e)
        return err_set(err, ERR_RUNTIME, "out of memory");
    int rc = setup(a, in, e, err);
    if (!rc && !(e->rows = calloc((size_t)e->n, sizeof *e->rows)))
        rc = err_set(err, ERR_RUNTIME, "out of memory");
    if (!rc)
        rc = elastic_plan(in, e->counts, e->n, e->rows, err);
    e->fewest = !rc && e->target_days > 0 ? elastic_fewest_for_days(e->rows, e->n, e->target_days)
                                          : -1;
    if (!rc && !cmd_machine_output(a) && print_text(in, e))
        rc = err_set(err, ERR_RUNTIME, "cannot write to standard output");
    if (!rc && cmd_wants_result(a)) {
        cJSON *j = elastic_json(in, e);
        if (!j)
            rc = err_set(err, ERR_RUNTIME, "out of memory building JSON");
        else if (!cmd_machine_output(a))
            putchar('\n');
        if (j)
            rc = cmd_output_result(a, "scaleplan plan", j, "counts", err);
        cJSON_Delete(j);
    }
    if (!rc && e->target_days > 0 && e->fewest < 0)
        rc = err_setf(err, ERR_RUNTIME, NULL, "--target-days",
                      "no count from %d to %d finishes in %.1f days", e->counts[0],
                      e->counts[e->n - 1], e->target_days);
    free(e->rows);
    free(e);
    return rc;
}
