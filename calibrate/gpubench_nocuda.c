/* gpubench without CUDA: every measurement says the build has no CUDA. */
#include "calibrate/gpubench.h"

bool gpub_built_with_cuda(void)
{
    return false;
}

int gpub_device_count(int *count, err_t *err)
{
    *count = 0;
    return err_set(err, ERR_RUNTIME, "%s", GPUB_NO_CUDA_MSG);
}

int gpub_device_info(int ordinal, gpub_device_t *info, err_t *err)
{
    (void)ordinal;
    (void)info;
    return err_set(err, ERR_RUNTIME, "%s", GPUB_NO_CUDA_MSG);
}

bool gpub_supports(const gpub_device_t *info, dtype_t dtype)
{
    (void)info;
    (void)dtype;
    return false;
}

int gpub_gemm(int ordinal, const gpub_shape_t *shapes, size_t n, const gpub_timing_t *timing,
              meas_set_t *set, size_t *skipped, gpub_progress_fn progress, void *ctx, err_t *err)
{
    (void)ordinal;
    (void)shapes;
    (void)n;
    (void)timing;
    (void)set;
    (void)progress;
    (void)ctx;
    if (skipped)
        *skipped = 0;
    return err_set(err, ERR_RUNTIME, "%s", GPUB_NO_CUDA_MSG);
}

int gpub_gemm_sustained(int ordinal, double dim, double seconds, double *burst_tflops,
                        double *sustained_tflops, err_t *err)
{
    (void)ordinal;
    (void)dim;
    (void)seconds;
    (void)burst_tflops;
    (void)sustained_tflops;
    return err_set(err, ERR_RUNTIME, "%s", GPUB_NO_CUDA_MSG);
}

int gpub_memory(int ordinal, const double *sizes, size_t n_sizes, const gpub_timing_t *timing,
                meas_set_t *set, gpub_progress_fn progress, void *ctx, err_t *err)
{
    (void)ordinal;
    (void)sizes;
    (void)n_sizes;
    (void)timing;
    (void)set;
    (void)progress;
    (void)ctx;
    return err_set(err, ERR_RUNTIME, "%s", GPUB_NO_CUDA_MSG);
}

int gpub_launch(int ordinal, double *back_to_back_us, double *synchronous_us, err_t *err)
{
    (void)ordinal;
    (void)back_to_back_us;
    (void)synchronous_us;
    return err_set(err, ERR_RUNTIME, "%s", GPUB_NO_CUDA_MSG);
}
