/* cluster_extras: the cluster command's outputs beyond the summary: the
 * timeline for --report and --perfetto, and build-versus-buy at the
 * measured utilization (run/budget.h's own-cluster figures).
 */
#ifndef SCALEPLAN_COMMANDS_CLUSTER_EXTRAS_H
#define SCALEPLAN_COMMANDS_CLUSTER_EXTRAS_H

#include <stdio.h>

#include <cjson/cJSON.h>

#include "cluster/timeline.h"
#include "common/progress.h"

/* What the replay's on_segment feeds: the timeline (when tl is not NULL)
 * and a progress bar of the jobs finished (when bar is not NULL). */
typedef struct {
    ctimeline_t *tl;
    progress_t *bar;
    long done;
} cluster_watch_t;

/* on_segment for creplay_config_t (ctx: a cluster_watch_t); -1 on OOM. */
int cluster_watch_segment(void *ctx, int job, int64_t start_ms, int64_t end_ms, int gpus,
                          int group, int how);

/* A "timeline" object on j: jobs (name, submit_s, start_s, end_s),
 * segments (job, start_s, end_s, gpus, how) and in_use (t_s, gpus), end_s
 * the last end. false on OOM. */
bool cluster_timeline_json(const cjobs_t *l, const creplay_result_t *r, const ctimeline_t *t,
                           cJSON *j);

/* Build versus buy at utilization u of a pool of gpu (catalog name) rented
 * at price_per_gpu_h: the own cluster's cost per GPU-hour at u (the
 * catalog's figures), the months until it pays off (INFINITY: never),
 * and the budget command that prices it. false when the catalog has no
 * own-cluster figures for gpu (the line then says what to pass). */
typedef struct {
    bool have;
    double own_usd_per_gpu_hour, breakeven_months, utilization, price_per_gpu_h;
    char gpu[32];
} cluster_buy_t;

void cluster_buy(const char *gpu, double utilization, double price_per_gpu_h, cluster_buy_t *b);
void cluster_buy_print(const cluster_buy_t *b, FILE *f);
bool cluster_buy_json(const cluster_buy_t *b, cJSON *j);

/* A calendar date YYYY-MM-DD as days since 1970-01-01 (proleptic
 * Gregorian; H. Hinnant's days_from_civil). false when malformed. */
bool cluster_date_parse(const char *text, long *days);
/* Days since 1970-01-01 as YYYY-MM-DD into buf. */
void cluster_date_format(long days, char *buf, size_t cap);

#endif
