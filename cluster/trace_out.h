/* trace_out: a replay's timeline as Chrome/Perfetto trace JSON (the
 * Trace Event Format: chrome://tracing, ui.perfetto.dev), one track per
 * job (its wait from submit to first start, then each run, named for how
 * it stopped) and a counter track of the GPUs in use. Times in
 * microseconds from the replay's zero.
 */
#ifndef SCALEPLAN_CLUSTER_TRACE_OUT_H
#define SCALEPLAN_CLUSTER_TRACE_OUT_H

#include "cluster/jobs.h"
#include "cluster/replay.h"
#include "cluster/timeline.h"
#include "common/error.h"

/* Write the trace of jobs l replayed into r (timeline t) to path.
 * ERR_RUNTIME on OOM or when path cannot be written (naming it). */
int ctrace_write(const char *path, const cjobs_t *l, const creplay_result_t *r,
                 const ctimeline_t *t, err_t *err);

#endif
