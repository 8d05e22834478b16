/* failure: failure-rate tables (topologies/catalog/failures.json).
 *
 * A rate set is a consistent group of failure classes from one source (the
 * Llama 3 405B interruption table by cause, Meta's RSC node failure rates).
 * Each class interrupts a job at rate_per_component_hour per component it
 * is counted against (GPU, node, NIC, or the job as a whole), with an
 * exponential or Weibull inter-arrival distribution, a detection time and
 * a repair policy (replace the node from a spare, or reschedule the job).
 */
#ifndef SCALEPLAN_TOPOLOGIES_FAILURE_H
#define SCALEPLAN_TOPOLOGIES_FAILURE_H

#include <stdbool.h>

#include "common/error.h"
#include "topologies/cluster.h"

typedef enum {
    FAIL_PER_GPU = 0,
    FAIL_PER_NODE,
    FAIL_PER_NIC,
    FAIL_PER_JOB,
    FAIL_COMPONENT_COUNT
} failure_component_t;

typedef enum { REPAIR_REPLACE_NODE = 0, REPAIR_RESCHEDULE = 1 } failure_repair_t;

#define FAILURE_MAX_CLASSES 24

typedef struct {
    char name[32];
    char description[160];
    failure_component_t component;
    double rate_per_component_hour;
    bool weibull;         /* else exponential */
    double weibull_shape; /* k; 1 = exponential */
    bool unexpected;      /* false for planned maintenance */
    double detect_s;      /* time from failure to the job noticing */
    failure_repair_t repair;
    char source[400];
} failure_class_t;

typedef struct {
    char name[32];
    char description[160];
    int n_classes;
    failure_class_t classes[FAILURE_MAX_CLASSES];
} failure_set_t;

/* Load a rate set by name; NULL or "" loads the catalog's default set. */
int failure_load_set(const char *name, failure_set_t *out, err_t *err);

/* Components of a kind in a cluster (GPUs, nodes, NICs = nodes x rails, 1). */
double failure_components(const cluster_t *c, failure_component_t comp);

/* Expected interruptions per hour of a job on cluster c from one class. */
double failure_job_rate_per_hour(const failure_class_t *f, const cluster_t *c);

const char *failure_component_name(failure_component_t c);

/* What planning guides quote for interruptions per week at a job size
 * (failures.json "planning_guides"), to print beside a prediction. */
#define FAILURE_MAX_GUIDES 8

typedef struct {
    int gpus;
    char per_week[24]; /* as quoted: "under 1", "1-2" */
} failure_guide_t;

typedef struct {
    int n;
    failure_guide_t rows[FAILURE_MAX_GUIDES]; /* by GPU count, as listed */
    char source[400];
} failure_guides_t;

/* Load the quotes; errors name the file and key. */
int failure_load_guides(failure_guides_t *out, err_t *err);

#endif
