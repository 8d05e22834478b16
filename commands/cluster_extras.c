#include "commands/cluster_extras.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/json.h"
#include "run/budget.h"

int cluster_watch_segment(void *ctx, int job, int64_t start_ms, int64_t end_ms, int gpus,
                          int group, int how)
{
    cluster_watch_t *w = ctx;
    if (w->tl && ctimeline_record(w->tl, job, start_ms, end_ms, gpus, group, how))
        return -1;
    if (how == 0 && w->bar)
        progress_update(w->bar, (double)++w->done);
    return 0;
}

static double s_of(int64_t ms)
{
    return (double)ms / 1000.0;
}

static cJSON *item(cJSON *arr)
{
    cJSON *e = cJSON_CreateObject();
    if (!e || !cJSON_AddItemToArray(arr, e)) {
        cJSON_Delete(e);
        return NULL;
    }
    return e;
}

static bool in_use_json(const ctimeline_t *t, cJSON *arr)
{
    int64_t *at = NULL;
    int *g = NULL, n = 0;
    err_t e;
    if (ctimeline_in_use(t, &at, &g, &n, &e))
        return false;
    bool ok = true;
    for (int k = 0; ok && k < n; k++) {
        cJSON *p = item(arr);
        ok = p && json_add_number(p, "t_s", s_of(at[k])) && json_add_number(p, "gpus", g[k]);
    }
    free(at);
    free(g);
    return ok;
}

bool cluster_timeline_json(const cjobs_t *l, const creplay_result_t *r, const ctimeline_t *t,
                           cJSON *j)
{
    cJSON *o = cJSON_AddObjectToObject(j, "timeline"), *jobs = NULL, *segs = NULL, *use = NULL;
    bool ok = o && json_add_number(o, "end_s", s_of(r->last_end_ms)) &&
              (jobs = cJSON_AddArrayToObject(o, "jobs")) &&
              (segs = cJSON_AddArrayToObject(o, "segments")) &&
              (use = cJSON_AddArrayToObject(o, "in_use"));
    for (int i = 0; ok && i < l->n; i++) {
        cJSON *e = item(jobs);
        ok = e && cJSON_AddStringToObject(e, "name", l->jobs[i].name) &&
             json_add_number(e, "submit_s", s_of(l->jobs[i].submit_ms)) &&
             json_add_number(e, "start_s", s_of(r->jobs[i].start_ms)) &&
             json_add_number(e, "end_s", s_of(r->jobs[i].end_ms));
    }
    for (int i = 0; ok && i < t->n; i++) {
        const cseg_t *s = &t->seg[i];
        cJSON *e = item(segs);
        ok = e && json_add_number(e, "job", s->job) &&
             json_add_number(e, "start_s", s_of(s->start_ms)) &&
             json_add_number(e, "end_s", s_of(s->end_ms)) && json_add_number(e, "gpus", s->gpus) &&
             json_add_number(e, "how", s->how);
    }
    return ok && in_use_json(t, use);
}

void cluster_buy(const char *gpu, double utilization, double price_per_gpu_h, cluster_buy_t *b)
{
    memset(b, 0, sizeof *b);
    own_cluster_t o;
    err_t ignore;
    b->utilization = utilization;
    b->price_per_gpu_h = price_per_gpu_h;
    snprintf(b->gpu, sizeof b->gpu, "%s", gpu ? gpu : "");
    if (!gpu || !(utilization > 0) || own_cluster_load(gpu, &o, &ignore))
        return;
    b->have = true;
    b->own_usd_per_gpu_hour = own_usd_per_gpu_hour(&o, utilization);
    b->breakeven_months = price_per_gpu_h > 0
                              ? own_breakeven_months(&o, price_per_gpu_h, utilization)
                              : NAN;
}

void cluster_buy_print(const cluster_buy_t *b, FILE *f)
{
    if (b->have && b->price_per_gpu_h > 0) {
        fprintf(f, "  build vs buy    an own %s pool busy %.1f%% of the time costs $%.2f/GPU-h "
                "(catalog capex, power, staff) against $%.2f rented: ", b->gpu,
                100 * b->utilization, b->own_usd_per_gpu_hour, b->price_per_gpu_h);
        if (isfinite(b->breakeven_months))
            fprintf(f, "it pays off after %.0f months\n", b->breakeven_months);
        else
            fprintf(f, "it never pays off\n");
    }
    if (!b->gpu[0])
        return; /* no GPU named: nothing to price an own cluster of */
    fprintf(f, "  for budget      scaleplan budget --model M --gpus N --gpu %s --tokens T "
            "--utilization %.3f (own-cluster rows at this pool's measured utilization; "
            "--capex to give yours)\n", b->gpu, b->utilization);
}

bool cluster_buy_json(const cluster_buy_t *b, cJSON *j)
{
    cJSON *o = cJSON_AddObjectToObject(j, "build_vs_buy");
    bool ok = o && json_add_number(o, "utilization", b->utilization);
    if (ok && b->have)
        ok = json_add_number(o, "own_usd_per_gpu_hour", b->own_usd_per_gpu_hour) &&
             (isfinite(b->breakeven_months)
                  ? json_add_number(o, "breakeven_months", b->breakeven_months)
                  : cJSON_AddNullToObject(o, "breakeven_months") != NULL);
    return ok;
}

bool cluster_date_parse(const char *text, long *days)
{
    int y, m, d, used = 0;
    static const int mdays[] = {31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    if (!text || sscanf(text, "%4d-%2d-%2d%n", &y, &m, &d, &used) != 3 || text[used] ||
        y < 1970 || y > 9999 || m < 1 || m > 12 || d < 1 || d > mdays[m - 1])
        return false;
    bool leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
    if (m == 2 && d == 29 && !leap)
        return false;
    long yy = m <= 2 ? y - 1 : y, era = yy / 400, yoe = yy - era * 400;
    long doy = (153L * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
    long doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    *days = era * 146097 + doe - 719468;
    return true;
}

void cluster_date_format(long days, char *buf, size_t cap)
{
    long z = days + 719468, era = z / 146097, doe = z - era * 146097;
    long yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    long doy = doe - (365 * yoe + yoe / 4 - yoe / 100), mp = (5 * doy + 2) / 153;
    long d = doy - (153 * mp + 2) / 5 + 1, m = mp < 10 ? mp + 3 : mp - 9;
    snprintf(buf, cap, "%04ld-%02ld-%02ld", yoe + era * 400 + (m <= 2), m, d);
}
