/* gpubench as the executable sees it: each function opens the CUDA
 * plug-in (once; later calls get the same handle) and forwards to
 * gpubench.cu's table. */
#include "calibrate/gpubench.h"

#include "build_config.h"
#include "common/plugin.h"

#define CUDA_LIBS_HINT                                                                            \
    "the CUDA plug-in needs libcublasLt.so.13 and libnccl.so.2: add their folders to "           \
    "LD_LIBRARY_PATH (a CUDA toolkit's lib64, or pip's site-packages/nvidia/cu13/lib and "        \
    "nvidia/nccl/lib)"

bool gpub_built_with_cuda(void)
{
    return SCALEPLAN_HAVE_CUDA != 0;
}

int gpub_ops(const gpub_ops_t **ops, err_t *err)
{
    *ops = NULL;
    if (!SCALEPLAN_HAVE_CUDA)
        return err_set(err, ERR_RUNTIME, "%s", GPUB_NO_CUDA_MSG);
    const void *sym = NULL;
    int rc = plugin_symbol(PLUGIN_CUDA, GPUB_SYMBOL, PLUGIN_LOCAL, CUDA_LIBS_HINT, &sym, err);
    if (rc)
        return rc;
    *ops = sym;
    return ERR_OK;
}

int gpub_device_count(int *count, err_t *err)
{
    const gpub_ops_t *o;
    *count = 0;
    int rc = gpub_ops(&o, err);
    return rc ? rc : o->device_count(count, err);
}

int gpub_device_info(int ordinal, gpub_device_t *info, err_t *err)
{
    const gpub_ops_t *o;
    int rc = gpub_ops(&o, err);
    return rc ? rc : o->device_info(ordinal, info, err);
}

bool gpub_supports(const gpub_device_t *info, dtype_t dtype)
{
    const gpub_ops_t *o;
    err_t ignore;
    return gpub_ops(&o, &ignore) == ERR_OK && o->supports(info, dtype);
}

int gpub_gemm(int ordinal, const gpub_shape_t *shapes, size_t n, const gpub_timing_t *timing,
              meas_set_t *set, size_t *skipped, gpub_progress_fn progress, void *ctx, err_t *err)
{
    const gpub_ops_t *o;
    if (skipped)
        *skipped = 0;
    int rc = gpub_ops(&o, err);
    return rc ? rc : o->gemm(ordinal, shapes, n, timing, set, skipped, progress, ctx, err);
}

int gpub_gemm_sustained(int ordinal, double dim, double seconds, double *burst_tflops,
                        double *sustained_tflops, err_t *err)
{
    const gpub_ops_t *o;
    int rc = gpub_ops(&o, err);
    return rc ? rc : o->gemm_sustained(ordinal, dim, seconds, burst_tflops, sustained_tflops, err);
}

int gpub_memory(int ordinal, const double *sizes, size_t n_sizes, const gpub_timing_t *timing,
                meas_set_t *set, gpub_progress_fn progress, void *ctx, err_t *err)
{
    const gpub_ops_t *o;
    int rc = gpub_ops(&o, err);
    return rc ? rc : o->memory(ordinal, sizes, n_sizes, timing, set, progress, ctx, err);
}

int gpub_launch(int ordinal, double *back_to_back_us, double *synchronous_us, err_t *err)
{
    const gpub_ops_t *o;
    int rc = gpub_ops(&o, err);
    return rc ? rc : o->launch(ordinal, back_to_back_us, synchronous_us, err);
}
