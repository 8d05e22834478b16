/* The CPU backend: fp32 parameters, gradients and Adam state in host
 * memory, the passes of gpt.h, MPI for tensor and data parallelism. */
#include "trainer/backend.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#include "common/clock.h"
#include "trainer/buckets.h"
#include "trainer/gpt.h"

#define MAX_BUCKETS 4096

typedef struct {
    backend_config_t c;
    gpt_t m;
    size_t n;       /* parameters of this rank */
    size_t n_pad;   /* n rounded up to a multiple of dp (ZeRO-1) */
    size_t shard;   /* elements of this rank's optimizer shard */
    size_t shard_begin;
    float *params, *grads;   /* n_pad each */
    float *adam_m, *adam_v;  /* shard (ZeRO-1) or n elements */
    float *shard_grads;      /* ZeRO-1: this rank's reduced gradients */
    unsigned char *decay;    /* per element: weight decay applies */
    unsigned char *counted;  /* per element: counts in the norm (replicated tensors on TP rank 0 only) */
    gpt_acts_t acts;
    /* DP buckets in flight during the backward */
    buckets_t buckets;
    int n_pending;
    dist_request_t pending[MAX_BUCKETS];
    double tp_s; /* TP seconds of the current micro-batch */
    err_t *err;
} cpu_state_t;

static void fill_masks(cpu_state_t *s)
{
    for (int i = 0; i < s->m.n_tensors; i++) {
        const gpt_tensor_t *t = &s->m.tensors[i];
        bool counted = t->split != GPT_SPLIT_NONE || s->m.tp_rank == 0;
        memset(s->decay + t->offset, t->decay, t->size);
        memset(s->counted + t->offset, counted, t->size);
    }
}

static void cpu_destroy(void *state)
{
    cpu_state_t *s = state;
    if (!s)
        return;
    gpt_acts_free(&s->acts);
    gpt_free(&s->m);
    free(s->params);
    free(s->grads);
    free(s->adam_m);
    free(s->adam_v);
    free(s->shard_grads);
    free(s->decay);
    free(s->counted);
    free(s);
}

static int cpu_reset(void *state, err_t *err)
{
    (void)err;
    cpu_state_t *s = state;
    memset(s->params, 0, s->n_pad * sizeof(float));
    gpt_init_f32(&s->m, s->c.seed, s->params);
    memset(s->adam_m, 0, s->shard * sizeof(float));
    memset(s->adam_v, 0, s->shard * sizeof(float));
    return ERR_OK;
}

static int launch_bucket(void *ctx, size_t offset, size_t count, err_t *err);

static int cpu_create(const backend_config_t *c, void **state, err_t *err)
{
    *state = NULL;
    cpu_state_t *s = calloc(1, sizeof *s);
    if (!s)
        return err_set(err, ERR_RUNTIME, "out of memory");
    s->c = *c;
    buckets_init(&s->buckets, c->bucket_bytes, sizeof(float), launch_bucket, s);
    int rc = gpt_create(c->model, c->tp, c->tp_group->rank, &s->m, err);
    if (rc) {
        free(s);
        return rc;
    }
    s->n = s->m.n_params;
    int dp = c->zero1 ? c->dp : 1;
    s->n_pad = (s->n + (size_t)dp - 1) / (size_t)dp * (size_t)dp;
    s->shard = c->zero1 ? s->n_pad / (size_t)c->dp : s->n;
    s->shard_begin = c->zero1 ? s->shard * (size_t)c->dp_group->rank : 0;
    s->params = calloc(s->n_pad, sizeof(float));
    s->grads = calloc(s->n_pad, sizeof(float));
    s->adam_m = calloc(s->shard ? s->shard : 1, sizeof(float));
    s->adam_v = calloc(s->shard ? s->shard : 1, sizeof(float));
    s->shard_grads = c->zero1 ? calloc(s->shard ? s->shard : 1, sizeof(float)) : NULL;
    s->decay = calloc(s->n_pad, 1);
    s->counted = calloc(s->n_pad, 1);
    if (!s->params || !s->grads || !s->adam_m || !s->adam_v || (c->zero1 && !s->shard_grads) ||
        !s->decay || !s->counted) {
        double gib = (double)s->n * 16 / (1u << 30);
        cpu_destroy(s);
        return err_set(err, ERR_RUNTIME,
                       "out of memory for %.2f GiB of parameters, gradients and Adam state; use "
                       "a smaller model or more --tp",
                       gib);
    }
    if ((rc = gpt_acts_create(&s->m, c->micro_batch, c->seq_len, sizeof(float), &s->acts, err))) {
        cpu_destroy(s);
        return rc;
    }
    fill_masks(s);
    cpu_reset(s, err);
    *state = s;
    return ERR_OK;
}

static int cpu_zero_grads(void *state, err_t *err)
{
    (void)err;
    cpu_state_t *s = state;
    memset(s->grads, 0, s->n_pad * sizeof(float));
    return ERR_OK;
}

/* Start the all-reduce of one bucket (buckets_launch_fn). */
static int launch_bucket(void *ctx, size_t offset, size_t count, err_t *err)
{
    cpu_state_t *s = ctx;
    if (s->n_pending == MAX_BUCKETS) /* too many in flight: finish the oldest first */
        return err_set(err, ERR_RUNTIME, "more than %d gradient buckets; raise --bucket-mb",
                       MAX_BUCKETS);
    int rc = dist_iallreduce_sum(s->c.dp_group, s->grads + offset, count, DIST_F32,
                                 &s->pending[s->n_pending], err);
    if (!rc)
        s->n_pending++;
    return rc;
}

/* gpt's hook: [offset, offset + count) is final. */
static int grads_ready(void *ctx, size_t offset, size_t count, err_t *err)
{
    cpu_state_t *s = ctx;
    return buckets_ready(&s->buckets, offset, count, err);
}

static int cpu_micro_step(void *state, const int32_t *inputs, const int32_t *targets,
                          double loss_scale, bool last, double *loss, step_times_t *t, err_t *err)
{
    cpu_state_t *s = state;
    s->tp_s = 0;
    gpt_comm_t comm = {s->c.tp_group, &s->tp_s};
    double t0 = clock_now_s();
    int rc = gpt_forward_f32(&s->m, s->params, &s->acts, inputs, targets, &comm, loss, err);
    double t1 = clock_now_s();
    if (rc)
        return rc;
    /* buckets overlap the last micro-batch's backward (earlier ones only
     * accumulate); ZeRO-1 reduce-scatters after the backward instead */
    buckets_begin(&s->buckets, last && s->c.overlap && !s->c.zero1 && s->c.dp > 1);
    rc = gpt_backward_f32(&s->m, s->params, s->grads, &s->acts, inputs, targets, loss_scale,
                          &comm, grads_ready, s, err);
    buckets_end(&s->buckets);
    double t2 = clock_now_s();
    t->fwd_s += t1 - t0;
    t->bwd_s += t2 - t1;
    t->tp_s += s->tp_s;
    return rc;
}

static int cpu_reduce_grads(void *state, step_times_t *t, err_t *err)
{
    cpu_state_t *s = state;
    double t0 = clock_now_s();
    int rc = ERR_OK;
    for (int i = 0; i < s->n_pending; i++) {
        int r = dist_wait(&s->pending[i], err);
        if (!rc)
            rc = r;
    }
    s->n_pending = 0;
    if (!rc && s->c.dp > 1) {
        if (s->c.zero1)
            rc = dist_reduce_scatter_sum(s->c.dp_group, s->grads, s->shard_grads, s->shard,
                                         DIST_F32, err);
        else if (!s->c.overlap)
            rc = dist_allreduce_sum(s->c.dp_group, s->grads, s->n, DIST_F32, err);
    } else if (!rc && s->c.zero1) {
        memcpy(s->shard_grads, s->grads, s->shard * sizeof(float));
    }
    t->dp_s += clock_now_s() - t0;
    return rc;
}

/* The gradients this rank's optimizer uses: its shard, or all of them. */
static const float *opt_grads(const cpu_state_t *s)
{
    return s->c.zero1 ? s->shard_grads : s->grads;
}

static int cpu_grad_norm(void *state, double *norm, step_times_t *t, err_t *err)
{
    cpu_state_t *s = state;
    double t0 = clock_now_s();
    const float *g = opt_grads(s);
    /* padding beyond n is never counted (its mask is 0) */
    size_t n = s->c.zero1 ? s->shard : s->n;
    const unsigned char *counted = s->counted + s->shard_begin;
    double sum = 0; /* summed in order: the same on every run */
    for (size_t i = 0; i < n; i++)
        if (counted[i])
            sum += (double)g[i] * g[i];
    /* sharded tensors differ over TP; ZeRO-1 shards differ over DP too */
    int rc = dist_allreduce_sum(s->c.zero1 ? s->c.world : s->c.tp_group, &sum, 1, DIST_F64, err);
    /* the gradients are sums over DP: the mean's norm is 1/dp of it */
    *norm = sqrt(sum) / s->c.dp;
    t->opt_s += clock_now_s() - t0;
    return rc;
}

static int cpu_optimizer_step(void *state, long step, double lr, double clip, step_times_t *t,
                              err_t *err)
{
    cpu_state_t *s = state;
    double t0 = clock_now_s();
    double scale = clip / s->c.dp;
    int rc = ERR_OK;
    if (s->c.zero1) {
        optim_adamw(&s->c.optim, s->params + s->shard_begin, s->shard_grads, s->adam_m, s->adam_v,
                    s->decay + s->shard_begin, s->shard, step, lr, scale);
        if (s->c.dp > 1) {
            float *mine = malloc(s->shard * sizeof(float));
            if (!mine)
                return err_set(err, ERR_RUNTIME, "out of memory");
            memcpy(mine, s->params + s->shard_begin, s->shard * sizeof(float));
            rc = dist_allgather(s->c.dp_group, mine, s->params, s->shard * sizeof(float), err);
            free(mine);
        }
    } else {
        optim_adamw(&s->c.optim, s->params, s->grads, s->adam_m, s->adam_v, s->decay, s->n, step,
                    lr, scale);
    }
    t->opt_s += clock_now_s() - t0;
    return rc;
}

static int cpu_host_buffers(void *state, ckpt_state_t *c, size_t *n_params, size_t *n_opt,
                            err_t *err)
{
    (void)err;
    cpu_state_t *s = state;
    c->params = s->params;
    c->m = s->adam_m;
    c->v = s->adam_v;
    *n_params = s->n_pad;
    *n_opt = s->shard;
    return ERR_OK;
}

static int cpu_state_to_host(void *state, ckpt_state_t *c, err_t *err)
{
    size_t a, b;
    return cpu_host_buffers(state, c, &a, &b, err);
}

static int cpu_state_from_host(void *state, err_t *err)
{
    (void)state;
    (void)err;
    return ERR_OK; /* the host buffers are the state */
}

static int cpu_grads_to_host(void *state, const float **grads, size_t *n, err_t *err)
{
    (void)err;
    cpu_state_t *s = state;
    *grads = s->grads;
    *n = s->n;
    return ERR_OK;
}

static void cpu_info(void *state, backend_info_t *info)
{
    cpu_state_t *s = state;
    memset(info, 0, sizeof *info);
    info->params = (double)s->n_pad * sizeof(float);
    info->grads = (double)s->n_pad * sizeof(float);
    info->optimizer = 2.0 * (double)s->shard * sizeof(float) +
                      (s->shard_grads ? (double)s->shard * sizeof(float) : 0);
    info->activations = (double)s->acts.bytes;
    info->buffers = 2.0 * (double)s->n_pad + (double)s->acts.b * s->acts.t * sizeof(double);
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);
    info->capacity = pages > 0 && page > 0 ? (double)pages * (double)page : 0;
    int threads = 1;
#ifdef _OPENMP
    threads = omp_get_max_threads();
#endif
    snprintf(info->device, sizeof info->device, "cpu (%d thread%s)", threads,
             threads == 1 ? "" : "s");
#if defined(__clang__)
    const char *cc = "clang " __clang_version__;
#elif defined(__GNUC__)
    const char *cc = "gcc " __VERSION__;
#else
    const char *cc = "unknown compiler";
#endif
#ifdef _OPENMP
    snprintf(info->software, sizeof info->software, "%s, OpenMP %d, %s", cc, _OPENMP,
             dist_have_mpi() ? "MPI" : "no MPI");
#else
    snprintf(info->software, sizeof info->software, "%s, no OpenMP, %s", cc,
             dist_have_mpi() ? "MPI" : "no MPI");
#endif
}

const backend_ops_t BACKEND_CPU = {
    .name = "cpu",
    .create = cpu_create,
    .destroy = cpu_destroy,
    .zero_grads = cpu_zero_grads,
    .micro_step = cpu_micro_step,
    .reduce_grads = cpu_reduce_grads,
    .grad_norm = cpu_grad_norm,
    .optimizer_step = cpu_optimizer_step,
    .state_to_host = cpu_state_to_host,
    .host_buffers = cpu_host_buffers,
    .state_from_host = cpu_state_from_host,
    .grads_to_host = cpu_grads_to_host,
    .reset = cpu_reset,
    .info = cpu_info,
};
