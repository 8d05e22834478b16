#include "cluster/policy_sjf.h"

/* The recorded run time alone (not the remaining one: the policy never
 * preempts, so a waiting job has not run), arrival order among equals. */
void cpolicy_key_sjf(const cpolicy_job_t *j, const cpolicy_params_t *p, double *k1, double *k2)
{
    (void)p;
    *k1 = (double)j->duration_ms;
    *k2 = (double)j->submit_ms;
}
