/* The CUDA backend as the executable sees it (BACKEND_CUDA of backend.h):
 * create opens the CUDA plug-in and creates the plug-in's backend; every
 * other entry forwards to it through the state. In a build without CUDA
 * create fails with one line saying so. */
#include "trainer/backend.h"

#include <stdlib.h>
#include <string.h>

#include "build_config.h"
#include "common/plugin.h"

/* What the loader needs to open the plug-in, for its error message. */
#define CUDA_LIBS_HINT                                                                            \
    "the CUDA plug-in needs libcublasLt.so.13 and libnccl.so.2: add their folders to "           \
    "LD_LIBRARY_PATH (a CUDA toolkit's lib64, or pip's site-packages/nvidia/cu13/lib and "        \
    "nvidia/nccl/lib)"

typedef struct {
    const backend_ops_t *impl; /* the plug-in's table */
    void *state;               /* the plug-in's backend */
} proxy_t;

static int create(const backend_config_t *c, void **state, err_t *err)
{
    *state = NULL;
    if (!SCALEPLAN_HAVE_CUDA)
        return err_set(err, ERR_RUNTIME,
                       "--device cuda: scaleplan was built without CUDA (nvcc not found under "
                       "CUDA_HOME, or CUDA=0); rebuild where nvcc is installed, or train with "
                       "--device cpu");
    const void *sym = NULL;
    int rc = plugin_symbol(PLUGIN_CUDA, BACKEND_CUDA_SYMBOL, PLUGIN_LOCAL, CUDA_LIBS_HINT, &sym, err);
    if (rc)
        return err_prefix(err, "--device cuda");
    proxy_t *p = calloc(1, sizeof *p);
    if (!p)
        return err_set(err, ERR_RUNTIME, "out of memory");
    p->impl = sym;
    if ((rc = p->impl->create(c, &p->state, err))) {
        free(p);
        return rc;
    }
    *state = p;
    return ERR_OK;
}

static void destroy(void *state)
{
    proxy_t *p = state;
    if (!p)
        return;
    p->impl->destroy(p->state);
    free(p);
}

static int zero_grads(void *state, err_t *err)
{
    proxy_t *p = state;
    return p->impl->zero_grads(p->state, err);
}

static int micro_step(void *state, const int32_t *inputs, const int32_t *targets,
                      double loss_scale, bool last, double *loss, step_times_t *t, err_t *err)
{
    proxy_t *p = state;
    return p->impl->micro_step(p->state, inputs, targets, loss_scale, last, loss, t, err);
}

static int reduce_grads(void *state, step_times_t *t, err_t *err)
{
    proxy_t *p = state;
    return p->impl->reduce_grads(p->state, t, err);
}

static int grad_norm(void *state, double *norm, step_times_t *t, err_t *err)
{
    proxy_t *p = state;
    return p->impl->grad_norm(p->state, norm, t, err);
}

static int optimizer_step(void *state, long step, double lr, double clip, step_times_t *t,
                          err_t *err)
{
    proxy_t *p = state;
    return p->impl->optimizer_step(p->state, step, lr, clip, t, err);
}

static int state_to_host(void *state, ckpt_state_t *s, err_t *err)
{
    proxy_t *p = state;
    return p->impl->state_to_host(p->state, s, err);
}

static int host_buffers(void *state, ckpt_state_t *s, size_t *n_params, size_t *n_opt, err_t *err)
{
    proxy_t *p = state;
    return p->impl->host_buffers(p->state, s, n_params, n_opt, err);
}

static int state_from_host(void *state, err_t *err)
{
    proxy_t *p = state;
    return p->impl->state_from_host(p->state, err);
}

static int grads_to_host(void *state, const float **grads, size_t *n, err_t *err)
{
    proxy_t *p = state;
    return p->impl->grads_to_host(p->state, grads, n, err);
}

static int reset(void *state, err_t *err)
{
    proxy_t *p = state;
    return p->impl->reset(p->state, err);
}

static void info(void *state, backend_info_t *out)
{
    proxy_t *p = state;
    if (!p) {
        memset(out, 0, sizeof *out);
        return;
    }
    p->impl->info(p->state, out);
}

const backend_ops_t BACKEND_CUDA = {
    .name = "cuda",
    .create = create,
    .destroy = destroy,
    .zero_grads = zero_grads,
    .micro_step = micro_step,
    .reduce_grads = reduce_grads,
    .grad_norm = grad_norm,
    .optimizer_step = optimizer_step,
    .state_to_host = state_to_host,
    .host_buffers = host_buffers,
    .state_from_host = state_from_host,
    .grads_to_host = grads_to_host,
    .reset = reset,
    .info = info,
};
