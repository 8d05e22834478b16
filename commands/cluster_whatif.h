/* cluster_whatif: --what-if CHANGE[,CHANGE...] of the cluster command:
 * the same jobs replayed once per change, next to the replay as given.
 *
 * Changes: gpus=+N, gpus=-N or gpus=N (the pool's GPUs; whole nodes; a
 * pool of one GPU type), policy=NAME (one of the replay's policies, not
 * planner: the jobs keep the sizes already planned), spot=SHARE (that
 * share of the pool as spot capacity, reclaimed as --spot says).
 */
#ifndef SCALEPLAN_COMMANDS_CLUSTER_WHATIF_H
#define SCALEPLAN_COMMANDS_CLUSTER_WHATIF_H

#include <stdio.h>

#include <cjson/cJSON.h>

#include "cluster/replay.h"

#define CLUSTER_WHATIF_MAX 8

typedef struct {
    char change[48];        /* as given */
    int gpus;               /* the pool it ran on */
    creplay_result_t r;
} cluster_whatif_row_t;

typedef struct {
    cluster_whatif_row_t row[CLUSTER_WHATIF_MAX];
    int n;
} cluster_whatif_t;

/* Replay l on base with each change of spec. Spot changes use base's
 * spot rates, or spot_per_h and spot_outage_ms when base has none.
 * ERR_INPUT naming --what-if and the change for a malformed one, and the
 * replay's errors (a job larger than the changed pool); w owns what it
 * holds either way (cluster_whatif_free). */
int cluster_whatif_run(const char *spec, const cjobs_t *l, const creplay_config_t *base,
                       double spot_per_h, int64_t spot_outage_ms, double spot_price,
                       cluster_whatif_t *w, err_t *err);

void cluster_whatif_print(const cluster_whatif_t *w, const creplay_result_t *base, int base_gpus,
                          bool priced, FILE *f);
/* A "what_if" array on j: change, gpus, makespan_s, utilization,
 * queue_delay_mean_s, jct_mean_s, cost_usd (null without a price). */
bool cluster_whatif_json(const cluster_whatif_t *w, bool priced, cJSON *j);

void cluster_whatif_free(cluster_whatif_t *w);

#endif
