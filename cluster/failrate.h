/* failrate: how often a running gang is interrupted, from the reliability
 * model's failure rates (topologies/failure.h, run/reliability.h).
 *
 * A job of g GPUs of one type fails at the rate `scaleplan reliability`
 * gives a job of g GPUs: the sum over the failure set's classes (GPU,
 * host, network, ... per component-hour, scaled by the components g GPUs
 * span), the set chosen for the GPU's architecture and the environment as
 * `reliability` chooses it. Used by the replay (cluster/replay.h) through
 * cfail_rate_per_hour.
 */
#ifndef SCALEPLAN_CLUSTER_FAILRATE_H
#define SCALEPLAN_CLUSTER_FAILRATE_H

#include "common/catalog.h"
#include "common/error.h"

typedef struct cfail cfail_t;

/* The rates for gpu (a catalog GPU) in environment (NULL = the catalog's
 * default), names looked up in cat (may be NULL). NULL on error: ERR_INPUT
 * naming --gpu or --environment. */
cfail_t *cfail_create(const char *gpu, const char *environment, catalog_t *cat, err_t *err);
void cfail_destroy(cfail_t *f);

/* Interruptions per hour of a running job of gpus GPUs; -1 when its
 * cluster cannot be built (cfail_error says why). ctx is the cfail_t (the
 * replay's callback shape). */
double cfail_rate_per_hour(void *ctx, int gpus);
const char *cfail_error(const cfail_t *f);

/* One line: the set used and why ("llama3-405b (default for hopper ...)"). */
const char *cfail_describe(const cfail_t *f);

#endif
