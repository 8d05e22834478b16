#include "commands/cluster_whatif.h"

#include <stdlib.h>
#include <string.h>

#include "common/json.h"
#include "common/units.h"

#define WHATIF_CHECKPOINT_MS 3600000 /* spot=: ASSUMED hourly checkpoints when none set */

static int bad(err_t *err, const char *change, const char *why)
{
    return err_setf(err, ERR_INPUT, NULL, "--what-if", "'%s': %s", change, why);
}

/* cfg changed as change says. */
static int apply(const char *change, creplay_config_t *cfg, double spot_per_h,
                 int64_t spot_outage_ms, err_t *err)
{
    const char *v = strchr(change, '=');
    if (!v)
        return bad(err, change, "not KEY=VALUE (gpus=+64, policy=backfill, spot=0.3)");
    v++;
    char *end;
    if (!strncmp(change, "gpus=", 5)) {
        long n = strtol(v, &end, 10);
        if (end == v || *end)
            return bad(err, change, "gpus= takes +N, -N or N");
        long to = (*v == '+' || *v == '-') ? cfg->gpus + n : n;
        if (cfg->n_groups > 1)
            return bad(err, change, "a pool of several GPU types (--cluster) has no one size");
        if (to < cfg->gpus_per_node || to > (1 << 24) || to % cfg->gpus_per_node)
            return bad(err, change, "the pool must stay whole nodes, at least one");
        cfg->gpus = (int)to;
        return ERR_OK;
    }
    if (!strncmp(change, "policy=", 7)) {
        if (!(cfg->policy = cpolicy_find(v)))
            return bad(err, change, "not a replay policy (fifo, backfill, priority, srtf, las, "
                                    "ftf)");
        return ERR_OK;
    }
    if (!strncmp(change, "spot=", 5)) {
        double share = strtod(v, &end);
        if (end == v || *end || !(share >= 0 && share < 1))
            return bad(err, change, "spot= takes a share of the pool in [0, 1)");
        cfg->spot_gpus = (int)(share * cfg->gpus) / cfg->gpus_per_node * cfg->gpus_per_node;
        if (!(cfg->spot_reclaims_per_node_hour > 0)) {
            cfg->spot_reclaims_per_node_hour = spot_per_h;
            cfg->spot_outage_ms = spot_outage_ms;
        }
        if (!cfg->checkpoint_ms)
            cfg->checkpoint_ms = WHATIF_CHECKPOINT_MS;
        return ERR_OK;
    }
    return bad(err, change, "unknown change (gpus=, policy= or spot=)");
}

int cluster_whatif_run(const char *spec, const cjobs_t *l, const creplay_config_t *base,
                       double spot_per_h, int64_t spot_outage_ms, double spot_price,
                       cluster_whatif_t *w, err_t *err)
{
    memset(w, 0, sizeof *w);
    for (const char *p = spec; p && *p;) {
        size_t len = strcspn(p, ",");
        if (w->n == CLUSTER_WHATIF_MAX)
            return err_setf(err, ERR_INPUT, NULL, "--what-if", "at most %d changes",
                            CLUSTER_WHATIF_MAX);
        cluster_whatif_row_t *row = &w->row[w->n];
        snprintf(row->change, sizeof row->change, "%.*s", (int)len, p);
        creplay_config_t cfg = *base;
        cfg.on_segment = NULL; /* the timeline is the replay as given */
        int rc = apply(row->change, &cfg, spot_per_h, spot_outage_ms, err);
        if (rc)
            return rc;
        if ((rc = creplay_run(l, &cfg, &row->r, err))) { /* say which replay could not end */
            char what[64];
            snprintf(what, sizeof what, "--what-if %s", row->change);
            return err_prefix(err, what);
        }
        if (cfg.spare_gpus > 0) /* the spares are paid too, as in the replay as given */
            row->r.cost_usd += cfg.spare_gpus * row->r.makespan_s / 3600 * cfg.price_per_gpu_h;
        if (cfg.spot_gpus > 0 && spot_price >= 0) /* spot GPUs at their price */
            row->r.cost_usd += cfg.spot_gpus * row->r.makespan_s / 3600 *
                               (spot_price - cfg.price_per_gpu_h);
        row->gpus = cfg.gpus;
        w->n++;
        p += len + (p[len] == ',');
    }
    return w->n ? ERR_OK : err_setf(err, ERR_INPUT, NULL, "--what-if", "no change given");
}

/* A duration, or "0 s" below half a millisecond. */
static const char *dur(double s, char *buf, size_t cap)
{
    if (s < 0.0005) {
        snprintf(buf, cap, "0 s");
        return buf;
    }
    return units_fmt_duration(s, buf, cap);
}

static void line(const char *change, int gpus, const creplay_result_t *r, bool priced, FILE *f)
{
    char a[32], b[32], c[32], d[32];
    fprintf(f, "    %-22s %6d  %10s  %6.1f%%  %10s  %10s  %s\n", change, gpus,
            dur(r->makespan_s, a, sizeof a), 100 * r->utilization,
            dur(r->queue_delay_mean_s, b, sizeof b), dur(r->jct_mean_s, c, sizeof c),
            priced ? units_fmt_usd(r->cost_usd, d, sizeof d) : "-");
}

void cluster_whatif_print(const cluster_whatif_t *w, const creplay_result_t *base, int base_gpus,
                          bool priced, FILE *f)
{
    fprintf(f, "  %-24s %6s  %10s  %7s  %10s  %10s  %s\n", "what if", "GPUs", "makespan",
            "util", "queue mean", "JCT mean", "cost");
    line("as given", base_gpus, base, priced, f);
    for (int i = 0; i < w->n; i++)
        line(w->row[i].change, w->row[i].gpus, &w->row[i].r, priced, f);
}

bool cluster_whatif_json(const cluster_whatif_t *w, bool priced, cJSON *j)
{
    cJSON *arr = cJSON_AddArrayToObject(j, "what_if");
    bool ok = arr != NULL;
    for (int i = 0; ok && i < w->n; i++) {
        const creplay_result_t *r = &w->row[i].r;
        cJSON *e = cJSON_CreateObject();
        ok = e && cJSON_AddItemToArray(arr, e);
        if (!ok) {
            cJSON_Delete(e);
            break;
        }
        ok = cJSON_AddStringToObject(e, "change", w->row[i].change) &&
             json_add_number(e, "gpus", w->row[i].gpus) &&
             json_add_number(e, "makespan_s", r->makespan_s) &&
             json_add_number(e, "utilization", r->utilization) &&
             json_add_number(e, "queue_delay_mean_s", r->queue_delay_mean_s) &&
             json_add_number(e, "jct_mean_s", r->jct_mean_s) &&
             (priced ? json_add_number(e, "cost_usd", r->cost_usd)
                     : cJSON_AddNullToObject(e, "cost_usd") != NULL);
    }
    return ok;
}

void cluster_whatif_free(cluster_whatif_t *w)
{
    for (int i = 0; i < w->n; i++)
        creplay_result_free(&w->row[i].r);
    w->n = 0;
}
