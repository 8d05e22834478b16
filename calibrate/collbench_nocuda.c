/* collbench without CUDA: NCCL measurement says the build has no CUDA. */
#include "calibrate/collbench.h"

int collb_nccl_version(char *buf, size_t cap, err_t *err)
{
    if (cap)
        buf[0] = '\0';
    return err_set(err, ERR_RUNTIME, "%s", GPUB_NO_CUDA_MSG);
}

double collb_work(const collb_plan_t *plan, int n_gpus)
{
    (void)plan;
    (void)n_gpus;
    return 0;
}

int collb_run(const dist_group_t *world, int n_local, const collb_plan_t *plan, meas_set_t *set,
              gpub_progress_fn progress, void *ctx, err_t *err)
{
    (void)world;
    (void)n_local;
    (void)plan;
    (void)set;
    (void)progress;
    (void)ctx;
    return err_set(err, ERR_RUNTIME, "%s", GPUB_NO_CUDA_MSG);
}
