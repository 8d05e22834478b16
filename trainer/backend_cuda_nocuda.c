/* The CUDA backend in a build without CUDA: every entry says so. */
#include "trainer/backend.h"

#include <string.h>

static int no_cuda(err_t *err)
{
    return err_set(err, ERR_RUNTIME,
                   "--device cuda: scaleplan was built without CUDA (nvcc not found under "
                   "CUDA_HOME); rebuild where nvcc is installed, or train with --device cpu");
}

static int create(const backend_config_t *c, void **state, err_t *err)
{
    (void)c;
    *state = NULL;
    return no_cuda(err);
}

static void destroy(void *state) { (void)state; }

static int zero_grads(void *state, err_t *err)
{
    (void)state;
    return no_cuda(err);
}

static int micro_step(void *state, const int32_t *inputs, const int32_t *targets,
                      double loss_scale, bool last, double *loss, step_times_t *t, err_t *err)
{
    (void)state, (void)inputs, (void)targets, (void)loss_scale, (void)last, (void)loss, (void)t;
    return no_cuda(err);
}

static int with_times(void *state, step_times_t *t, err_t *err)
{
    (void)state, (void)t;
    return no_cuda(err);
}

static int grad_norm(void *state, double *norm, step_times_t *t, err_t *err)
{
    (void)state, (void)norm, (void)t;
    return no_cuda(err);
}

static int optimizer_step(void *state, long step, double lr, double clip, step_times_t *t,
                          err_t *err)
{
    (void)state, (void)step, (void)lr, (void)clip, (void)t;
    return no_cuda(err);
}

static int state_to_host(void *state, ckpt_state_t *s, err_t *err)
{
    (void)state, (void)s;
    return no_cuda(err);
}

static int host_buffers(void *state, ckpt_state_t *s, size_t *n_params, size_t *n_opt, err_t *err)
{
    (void)state, (void)s, (void)n_params, (void)n_opt;
    return no_cuda(err);
}

static int just_state(void *state, err_t *err)
{
    (void)state;
    return no_cuda(err);
}

static int grads_to_host(void *state, const float **grads, size_t *n, err_t *err)
{
    (void)state, (void)grads, (void)n;
    return no_cuda(err);
}

static void info(void *state, backend_info_t *out)
{
    (void)state;
    memset(out, 0, sizeof *out);
}

const backend_ops_t BACKEND_CUDA = {
    .name = "cuda",
    .create = create,
    .destroy = destroy,
    .zero_grads = zero_grads,
    .micro_step = micro_step,
    .reduce_grads = with_times,
    .grad_norm = grad_norm,
    .optimizer_step = optimizer_step,
    .state_to_host = state_to_host,
    .host_buffers = host_buffers,
    .state_from_host = just_state,
    .grads_to_host = grads_to_host,
    .reset = just_state,
    .info = info,
};
