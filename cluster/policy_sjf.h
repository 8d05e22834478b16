/* policy_sjf: the keys of the non-preemptive greedy policies of Alibaba's
 * GPU-cluster simulator (alibaba/clusterdata,
 * cluster-trace-gpu-v2020/simulator/scheduler.py, commit 7a6c496e):
 * alloc_job sorts the waiting jobs (alloc_job_sort) and walks the list,
 * starting every job that fits and passing over one that does not
 * (fit-first); running jobs are never preempted.
 *
 *   sjf       alloc_policy 0, "SJF + Oracle": shortest recorded duration
 *             first (key duration, then arrival).
 *   fifo-fit  alloc_policy 8, its "FIFO": arrival order, fit-first (unlike
 *             scaleplan's fifo, the head does not block the queue).
 *
 * The rows themselves are in cluster/policy.c's table.
 */
#ifndef SCALEPLAN_CLUSTER_POLICY_SJF_H
#define SCALEPLAN_CLUSTER_POLICY_SJF_H

#include "cluster/policy.h"

/* Key of sjf: (duration_ms, submit_ms), smaller first. */
void cpolicy_key_sjf(const cpolicy_job_t *j, const cpolicy_params_t *p, double *k1, double *k2);

#endif
