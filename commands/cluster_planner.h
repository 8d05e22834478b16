/* cluster_planner: the cluster command's --policy planner (cluster/planner.h):
 * each job's scaling curve priced, the sizes searched, the plan written
 * into the job list for the final replay, and the plan printed next to the
 * fixed-size plan it is measured against.
 */
#ifndef SCALEPLAN_COMMANDS_CLUSTER_PLANNER_H
#define SCALEPLAN_COMMANDS_CLUSTER_PLANNER_H

#include <stdio.h>

#include <cjson/cJSON.h>
#include "cluster/planner.h"
#include "common/notes.h"

typedef struct {
    cplan_objective_t objective;
    int n;                  /* jobs */
    cplan_curve_t *curves;  /* [n] owned */
    int *asked_gpus;        /* [n] the sizes the jobs asked for; owned */
    cplan_result_t plan;
    double search_s;        /* wall time of pricing and search */
} cluster_planner_t;

/* Price the curves of l's jobs on gpu (a catalog GPU; may be NULL when no
 * job gives model + tokens), search the plan on cfg's pool and write it
 * into l and cfg->policy. Notes say what was assumed. ERR_INPUT for a pool
 * of several GPU types (not supported yet) and as cplan_search; p owns
 * its memory either way (cluster_planner_free). */
int cluster_planner_run(cluster_planner_t *p, cjobs_t *l, creplay_config_t *cfg,
                        const char *gpu, catalog_t *cat, notes_t *notes, err_t *err);

/* The plan's lines for the text output (after the summary). */
void cluster_planner_print(const cluster_planner_t *p, const cjobs_t *l, FILE *f);

/* A "planner" object on j: objective, the fixed-size plan's figures and
 * each job's asked and chosen size and layout. false on OOM. */
bool cluster_planner_json(const cluster_planner_t *p, const cjobs_t *l, cJSON *j);

void cluster_planner_free(cluster_planner_t *p);

#endif
