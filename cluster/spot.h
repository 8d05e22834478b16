/* spot: an availability trace of a pool's spot share, for the replay
 * (creplay_config_t.spot_trace_*) instead of Poisson reclaims.
 *
 * The file is CSV with a header t_s,spot_gpus: from time t_s (seconds,
 * ascending, from the replay's zero) that many of the spot share's GPUs
 * are there (0..the share; rounded down to whole nodes); before the first
 * row all of them are. Errors are one line naming the file, the line and
 * the field (ERR_INPUT).
 */
#ifndef SCALEPLAN_CLUSTER_SPOT_H
#define SCALEPLAN_CLUSTER_SPOT_H

#include <stdint.h>

#include "common/error.h"

typedef struct {
    int n;
    int64_t *at_ms;      /* [n] ascending; owned */
    int *nodes;          /* [n] spot nodes present from then on; owned */
} cspot_trace_t;

/* Read path for a spot share of spot_gpus in nodes of gpus_per_node.
 * out is the caller's (cspot_trace_free) on success; nothing to free on
 * error. */
int cspot_trace_read(const char *path, int spot_gpus, int gpus_per_node, cspot_trace_t *out,
                     err_t *err);

void cspot_trace_free(cspot_trace_t *t);

#endif
