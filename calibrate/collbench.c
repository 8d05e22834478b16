/* collbench as the executable sees it: each function forwards to
 * collbench.cu's table in the CUDA plug-in (opened on first use). */
#include "calibrate/collbench.h"

#include "build_config.h"
#include "common/plugin.h"

static int ops(const collb_ops_t **out, err_t *err)
{
    *out = NULL;
    if (!SCALEPLAN_HAVE_CUDA)
        return err_set(err, ERR_RUNTIME, "%s", GPUB_NO_CUDA_MSG);
    /* gpub_ops has the same plug-in's loading message */
    const gpub_ops_t *g;
    int rc = gpub_ops(&g, err);
    if (rc)
        return rc;
    const void *sym = NULL;
    if ((rc = plugin_symbol(PLUGIN_CUDA, COLLB_SYMBOL, PLUGIN_LOCAL, NULL, &sym, err)))
        return rc;
    *out = sym;
    return ERR_OK;
}

int collb_nccl_version(char *buf, size_t cap, err_t *err)
{
    const collb_ops_t *o;
    if (cap)
        buf[0] = '\0';
    int rc = ops(&o, err);
    return rc ? rc : o->nccl_version(buf, cap, err);
}

double collb_work(const collb_plan_t *plan, int n_gpus)
{
    const collb_ops_t *o;
    err_t ignore;
    return ops(&o, &ignore) == ERR_OK ? o->work(plan, n_gpus) : 0;
}

int collb_run(const dist_group_t *world, int n_local, const collb_plan_t *plan, meas_set_t *set,
              gpub_progress_fn progress, void *ctx, err_t *err)
{
    const collb_ops_t *o;
    int rc = ops(&o, err);
    return rc ? rc : o->run(world, n_local, plan, set, progress, ctx, err);
}
