/* plan --grad-codec / --islands: every feasible rung of the ladder priced
 * with the codec and across the islands (cli/sites.h). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "commands/output.h"
#include "commands/sites.h"
#include "common/json.h"
#include "common/units.h"
#include "reports/table.h"
#include "plan/codec.h"
#include "plan/islands.h"

/* One rung with the codec: where its framework runs it, the evaluation and
 * whether the plan uses it (it shortens the time to the same loss, so the
 * GPU-hours and dollars too, whatever the objective). */
typedef struct {
    bool runs;
    codec_eval_t e;
    bool used;
} codec_row_t;

static cJSON *codec_row_json(const rung_t *r, const codec_row_t *w)
{
    cJSON *o = cJSON_CreateObject();
    double k = w->runs ? w->e.time_ratio : 1;
    bool ok = o && json_add_number(o, "gpus", r->gpus) &&
              cJSON_AddStringToObject(o, "framework", r->framework) &&
              cJSON_AddBoolToObject(o, "runs", w->runs) &&
              json_add_number(o, "comm_saved_s", w->e.comm_saved_s) &&
              json_add_number(o, "codec_s", w->e.codec_s) &&
              json_add_number(o, "base_step_s", w->e.base_step_s) &&
              json_add_number(o, "mean_step_s", w->e.mean_step_s) &&
              json_add_number(o, "token_multiplier", w->e.token_multiplier) &&
              json_add_number(o, "time_ratio", w->e.time_ratio) &&
              json_add_number(o, "days_p50", r->days_p50) &&
              json_add_number(o, "days_p50_codec", r->days_p50 * k) &&
              json_add_number(o, "cost_usd", r->cost_usd) &&
              json_add_number(o, "cost_usd_codec", r->cost_usd * k) &&
              cJSON_AddBoolToObject(o, "fits", w->e.fits) &&
              cJSON_AddBoolToObject(o, "used", w->used);
    if (!ok) {
        cJSON_Delete(o);
        return NULL;
    }
    return o;
}

static int codec_ladder(const cmd_args_t *a, sim_ctx_t *ctx, const ladder_input_t *in,
                        const ladder_t *l, cJSON *j, err_t *err)
{
    codec_t c;
    int rc = cmd_sites_codec(a, NULL, &c, err);
    if (rc)
        return rc;
    cJSON *arr = j ? cJSON_AddArrayToObject(j, "grad_codec_ladder") : NULL;
    table_t *t = NULL;
    static const char *hdr[] = {"GPUs", "framework", "DP saved s", "codec s", "step s",
                                "tokens x", "days (same loss)", "cost (same loss)", "use"};
    if (j ? !arr : !(t = table_create(9, hdr)))
        return err_set(err, ERR_RUNTIME, "out of memory");
    for (int i = 0; !rc && i < l->n; i++) {
        const rung_t *r = &l->rung[i];
        codec_row_t w = {0};
        if (!r->feasible)
            continue;
        w.runs = codec_runs_on(&c, r->framework) && r->layout.zero >= c.zero_min &&
                 r->layout.zero <= c.zero_max;
        if ((rc = codec_rung(ctx, in, r, &c, &w.e, err)))
            break;
        w.used = w.runs && w.e.worth;
        double k = w.used ? w.e.time_ratio : 1;
        if (arr) {
            cJSON *o = codec_row_json(r, &w);
            if (!o || !cJSON_AddItemToArray(arr, o))
                rc = err_set(err, ERR_RUNTIME, "out of memory building JSON");
        } else {
            table_add_rowf(t, "%d\t%s\t%.3f\t%.3f\t%.3f -> %.3f\t%.2f\t%.1f -> %.1f\t$%.0f -> $%.0f\t%s",
                           r->gpus, r->framework, w.e.comm_saved_s, w.e.codec_s, w.e.base_step_s,
                           w.e.mean_step_s, w.e.token_multiplier, r->days_p50,
                           r->days_p50 * k, r->cost_usd, r->cost_usd * k,
                           !w.runs ? "not run" : w.used ? "yes" : !w.e.fits ? "no (memory)" : "no");
        }
    }
    if (t && !rc) {
        printf("\ngradient codec %s at each rung (days and dollars to the same loss; used only "
               "where it shortens them):\n",
               c.name);
        rc = table_print(t, stdout, 2, 0);
        if (c.assumed[0])
            printf("  ASSUMED: %s\n", c.assumed);
    }
    table_destroy(t);
    return rc;
}

/* The rung across the islands: synchronous DP, and DiLoCo when asked (a
 * --diloco without M searches M = 1, 2 and 4 replicas an island, those
 * that split the rung's data-parallel groups and batch); *diloco_wins when
 * the best DiLoCo reaches the same loss sooner than synchronous DP. */
static int sites_rung(sim_ctx_t *ctx, const ladder_input_t *in, const rung_t *r, islands_t is,
                      const diloco_t *d, sites_eval_t *sync, sites_eval_t *dl, bool *diloco_wins,
                      err_t *err)
{
    cluster_t c;
    sim_input_t si;
    is.gpus_each = r->gpus / is.n;
    int rc = codec_rung_input(in, r, &c, &si, err);
    if (rc || (rc = sites_evaluate(ctx, NULL, &si, &is, NULL, sync, err)))
        return rc;
    *diloco_wins = false;
    bool any = false;
    for (int k = 1; d->on && k <= 4; k *= 2) {
        diloco_t t = *d;
        if (d->replicas > 0 && k > 1)
            break;
        if (d->replicas == 0)
            t.replicas = k * is.n;
        sites_eval_t e;
        err_t e2;
        if (sites_evaluate(ctx, NULL, &si, &is, &t, &e, &e2) != ERR_OK)
            continue;
        if (!any || e.time_ratio < dl->time_ratio)
            *dl = e;
        any = true;
    }
    *diloco_wins = any && dl->time_ratio < sync->time_ratio;
    return ERR_OK;
}

static int sites_ladder(const cmd_args_t *a, sim_ctx_t *ctx, const ladder_input_t *in,
                        const ladder_t *l, cJSON *j, err_t *err)
{
    islands_t is;
    diloco_t d = {0};
    const char *v = cmd_get(a, "--islands");
    long n = 0;
    int rc;
    if ((rc = units_parse_int(strchr(v, 'x') ? "0" : v, "--islands", 0, 1024, &n, err)))
        return rc;
    if (n < 2)
        return err_set(err, ERR_INPUT, "--islands: plan takes the number of islands (e.g. 2)");
    is.n = (int)n;
    if ((rc = islands_parse_link(cmd_get(a, "--island-link"), &is, err)) ||
        (cmd_get(a, "--diloco") && (rc = diloco_parse(cmd_get(a, "--diloco"), &d, err))))
        return rc;
    cJSON *arr = j ? cJSON_AddArrayToObject(j, "sites_ladder") : NULL;
    if (j && !arr)
        return err_set(err, ERR_RUNTIME, "out of memory");
    if (!j)
        printf("\nacross %d islands (%.1f GB/s, %.0f ms round trip) at each rung:\n", is.n,
               is.link_bytes_s / 1e9, 1e3 * is.rtt_s);
    for (int i = 0; !rc && i < l->n; i++) {
        const rung_t *r = &l->rung[i];
        if (!r->feasible || r->gpus % is.n != 0)
            continue;
        sites_eval_t s, dl = {0};
        bool dw;
        if ((rc = sites_rung(ctx, in, r, is, &d, &s, &dl, &dw, err)))
            break;
        const sites_eval_t *p = dw ? &dl : &s;
        if (!j) {
            printf("  %6d GPUs: synchronous %.1f%% of one site", r->gpus, 100 * s.scaling);
            if (d.on)
                printf(", DiLoCo (M=%d) %.1f%% utilization x%.2f tokens", dl.replicas,
                       100 * dl.utilization, dl.token_multiplier);
            printf(" -> %s, %.1f days to the same loss\n", dw ? "DiLoCo" : "synchronous",
                   r->days_p50 * p->time_ratio);
            continue;
        }
        cJSON *o = cJSON_CreateObject();
        if (!o || !cJSON_AddItemToArray(arr, o) || !json_add_number(o, "gpus", r->gpus) ||
            !json_add_number(o, "sync_scaling", s.scaling) ||
            !json_add_number(o, "diloco_utilization", dl.utilization) ||
            !json_add_number(o, "diloco_replicas", dl.replicas) ||
            !cJSON_AddStringToObject(o, "pick", dw ? "diloco" : "hierarchical_dp") ||
            !json_add_number(o, "days_p50", r->days_p50 * p->time_ratio))
            rc = err_set(err, ERR_RUNTIME, "out of memory building JSON");
    }
    return rc;
}

int cmd_sites_plan(const cmd_args_t *a, const ladder_input_t *in, const ladder_t *l, cJSON *j,
                   err_t *err)
{
    sim_ctx_t *ctx = sim_ctx_create();
    if (!ctx)
        return err_set(err, ERR_RUNTIME, "out of memory");
    int rc = ERR_OK;
    if (cmd_get(a, "--grad-codec"))
        rc = codec_ladder(a, ctx, in, l, j, err);
    if (!rc && cmd_get(a, "--islands"))
        rc = sites_ladder(a, ctx, in, l, j, err);
    sim_ctx_destroy(ctx);
    return rc;
}
