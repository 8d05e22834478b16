/* The CUDA backend: the model of gpt.h on one GPU per process, with the
 * CPU backend's semantics. Built into the CUDA plug-in (scaleplan-cuda.so),
 * which exports the table as BACKEND_CUDA_SYMBOL; BACKEND_CUDA
 * (backend_cuda.c) opens the plug-in and forwards to it.
 *
 * Precision. Master weights, gradients and the Adam moments are fp32 in
 * both modes. bf16 mode (backend_config_t.bf16) keeps a bf16 copy of the
 * weights, refreshed by the optimizer, for the GEMMs; activations that feed
 * GEMMs are bf16; every GEMM accumulates in fp32 (cuBLASLt
 * CUBLAS_COMPUTE_32F). The residual stream, its gradient, the outputs of
 * the row-parallel projections (so the TP sums), norm statistics, the loss
 * and all parameter gradients stay fp32. fp32 mode runs the same code with
 * T = float and true fp32 GEMMs (no TF32), for close comparison with the
 * CPU path.
 *
 * Kernels. cuBLASLt for every product (cuda_gemm.cuh): the linear layers'
 * forward and both backward products, and the attention as strided-batched
 * products over (batch, head): S = scale Q K^T, Y = P V, and in the backward
 * dP = dY V^T, dV = P^T dY, dQ = dS K, dK = dS^T Q, with the probabilities
 * P kept for the backward (materialised attention, as the CPU path and
 * the simulator's layout of a trainer run assume; kern_attn.h). Every
 * other kernel is behind a kern_*.h launcher, each tested against its
 * cpu_ops twin by tests/gpu/kernels_test.c. fp32 and bf16 runs take the
 * same code path with the activation type as a value (kern_dtype_t).
 *
 * Streams. All compute, and the TP all-reduces (on the critical path),
 * run on s_main. DP reductions run on s_dp: in overlap mode, as the last
 * micro-batch's backward finalises each bucket of gradients (the ranges
 * gpt's backward reports: head, each block from the last, embeddings,
 * merged into buckets of bucket_bytes exactly as the CPU backend merges
 * them), an event recorded on s_main after the bucket's last gradient
 * kernel is waited on by s_dp, which then all-reduces the bucket; ZeRO-1
 * reduce-scatters after the backward into this rank's shard, AdamW updates
 * the shard, and an all-gather on s_main rebuilds the full weights.
 * reduce_grads makes s_main wait for s_dp, so the next step cannot touch
 * gradients still being reduced.
 *
 * NCCL. One communicator per TP group and one per DP group, created with
 * ncclCommInitRankConfig after rank 0 of the group broadcasts the
 * ncclUniqueId over the group's MPI communicator (dist_bcast); none for a
 * group of one, so a single GPU needs no NCCL set-up. Gradients are summed
 * over DP (ncclSum): the norm divides by dp and the optimizer scales by
 * clip / dp, as the CPU backend does.
 *
 * Watchdog. The communicators are non-blocking, and every host wait that
 * may depend on NCCL work (a stream or event synchronisation, an NCCL call
 * still in progress) polls with a deadline of collective_timeout_s while
 * watching NCCL's asynchronous errors, as the calibrator does
 * (calibrate/collbench.cu). Each collective is announced on its dist group
 * first (dist_watch_enter), so on a timeout the line names the ranks that
 * never reached it; both communicators are then aborted (ncclCommAbort)
 * and the device memory is left to the process's exit (a stuck kernel
 * would block any free).
 *
 * Timing. CUDA events bracket the forward, the backward, each TP
 * all-reduce, the DP reduction left after the backward (dp_s: from the end
 * of the last backward to the end of the reduction, 0 when it finished
 * under the backward) and the optimizer, so step_times_t is device time.
 */

#include "trainer/backend_cudaInt.cuh"

double cuda_now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}


/* A tensor of the weights the GEMMs read (activation type), or NULL. */
const void *cuda_wat(const cuda_state_t *s, size_t off)
{
    return off == GPT_ABSENT ? NULL : (const char *)s->wparams + s->es * off;
}

/* Seconds between two completed events. */
int cuda_elapsed_s(cudaEvent_t a, cudaEvent_t b, double *out, err_t *err)
{
    float ms = 0;
    CUDA_CHECK(cudaEventElapsedTime(&ms, a, b));
    *out = ms / 1e3;
    return ERR_OK;
}

static int dev_alloc(cuda_state_t *s, void **p, size_t bytes, const char *what, err_t *err)
{
    cudaError_t e = cudaMalloc(p, bytes ? bytes : 16);
    if (e == cudaSuccess)
        return ERR_OK;
    *p = NULL;
    (void)cudaGetLastError(); /* an allocation failure is not sticky; clear it */
    return err_set(err, ERR_RUNTIME,
                   "--device cuda: out of GPU memory for %.2f GiB of %s on %s (%s); use a smaller "
                   "model, --micro-batch or --seq-len, or more --tp",
                   (double)bytes / (1u << 30), what, s->device_name, cudaGetErrorString(e));
}

/* ------------------------------------------------------------ buffers */

typedef struct {
    char *base; /* NULL: only measure */
    size_t off;
} bump_t;

/* bytes from the bump region, 256-byte aligned (cuBLASLt's preferred
 * alignment); NULL while measuring. */
static void *take(bump_t *b, size_t bytes)
{
    size_t o = (b->off + 255) & ~(size_t)255;
    b->off = o + bytes;
    return b->base ? (void *)(b->base + o) : NULL;
}

#define TAKE_F(b, n) ((float *)take(b, (size_t)(n) * sizeof(float)))

static void layout_acts(cuda_state_t *s, bump_t *b)
{
    const gpt_t *m = &s->m;
    size_t N = (size_t)s->N, C = (size_t)m->hidden, es = s->es;
    size_t att_w = (size_t)m->heads_local * m->head_dim;
    size_t probs = (size_t)s->B * m->heads_local * s->T * s->T;
    for (int l = 0; l < m->n_layers; l++) {
        layer_acts_t *k = &s->layers[l];
        k->x_in = TAKE_F(b, N * C);
        k->ln1 = take(b, es * N * C);
        k->ln1_mean = TAKE_F(b, N);
        k->ln1_rstd = TAKE_F(b, N);
        k->qkv = take(b, es * N * (size_t)m->qkv_local);
        k->probs = take(b, es * probs);
        k->att = take(b, es * N * att_w);
        k->x_mid = TAKE_F(b, N * C);
        k->ln2 = take(b, es * N * C);
        k->ln2_mean = TAKE_F(b, N);
        k->ln2_rstd = TAKE_F(b, N);
        k->fc = take(b, es * N * (size_t)m->fc_local);
        k->act = take(b, es * N * (size_t)m->ffn_local);
    }
    s->final_x = TAKE_F(b, N * C);
    s->lnf = take(b, es * N * C);
    s->lnf_mean = TAKE_F(b, N);
    s->lnf_rstd = TAKE_F(b, N);
    s->logits = take(b, es * N * (size_t)s->Vp);
    s->losses = TAKE_F(b, N);
}

static void layout_scratch(cuda_state_t *s, bump_t *b)
{
    const gpt_t *m = &s->m;
    size_t N = (size_t)s->N, C = (size_t)m->hidden, es = s->es;
    size_t att_w = (size_t)m->heads_local * m->head_dim;
    size_t heads = (size_t)s->B * m->heads_local * s->T * m->head_dim;
    kern_attn_scratch_t *a = &s->attn;
    void **per_head[] = {&a->q, &a->k, &a->v, &a->y, &a->dq, &a->dk, &a->dv};
    for (size_t i = 0; i < sizeof per_head / sizeof per_head[0]; i++)
        *per_head[i] = take(b, es * heads);
    a->dp = take(b, es * (size_t)s->B * m->heads_local * s->T * s->T);
    s->dx = TAKE_F(b, N * C);
    s->dln = TAKE_F(b, N * C);
    s->dx_t = s->bf16 ? take(b, es * N * C) : (void *)s->dx;
    s->datt = take(b, es * N * att_w);
    s->dqkv = take(b, es * N * (size_t)m->qkv_local);
    s->dfc = take(b, es * N * (size_t)m->fc_local);
    s->dact = take(b, es * N * (size_t)m->ffn_local);
    size_t width = C;
    if ((size_t)m->qkv_local > width)
        width = (size_t)m->qkv_local;
    if ((size_t)m->fc_local > width)
        width = (size_t)m->fc_local;
    s->part_a = TAKE_F(b, (size_t)KERN_PART_MAX * width);
    s->part_b = TAKE_F(b, (size_t)KERN_PART_MAX * width);
    s->sumsq_part = (double *)take(b, KERN_SUMSQ_BLOCKS * sizeof(double));
    s->dsum = (double *)take(b, 2 * sizeof(double));
    s->tokens = (int32_t *)take(b, (5 * N + 1) * sizeof(int32_t));
    if (m->arch.pos == MODEL_POS_ROPE) {
        s->rope_cos = TAKE_F(b, (size_t)s->T * (m->head_dim / 2));
        s->rope_sin = TAKE_F(b, (size_t)s->T * (m->head_dim / 2));
    }
}

/* ------------------------------------------------------------ set-up */

/* ------------------------------------------------------------ watchdog */

static void nap(double waited_s)
{
    /* spin for the first millisecond (fast collectives), then doze */
    if (waited_s > 1e-3) {
        struct timespec t = {0, 20000};
        nanosleep(&t, NULL);
    }
}

static double deadline_of(const cuda_state_t *s)
{
    return s->c.collective_timeout_s > 0 ? s->c.collective_timeout_s : INFINITY;
}

/* A communicator's asynchronous error (ncclSuccess or ncclInProgress when
 * none). */
static ncclResult_t async_error(ncclComm_t comm)
{
    ncclResult_t a = ncclSuccess;
    if (!comm)
        return ncclSuccess;
    ncclResult_t q = ncclCommGetAsyncError(comm, &a);
    return q != ncclSuccess ? q : a;
}

/* Abort both communicators after a timeout or an NCCL failure, and say
 * why in one line: who did not reach the collective (the dist watchdog's
 * view of the group), or NCCL's own error. */
static int stall(cuda_state_t *s, const char *what, double waited_s, ncclResult_t nccl_error,
                 err_t *err)
{
    char why[512] = "";
    if (nccl_error != ncclSuccess && nccl_error != ncclInProgress) {
        snprintf(why, sizeof why, "%s failed: %s", what, ncclGetErrorString(nccl_error));
    } else {
        const dist_group_t *groups[2] = {s->c.tp_group, s->c.dp_group};
        for (int i = 0; i < 2; i++) {
            if (!groups[i] || groups[i]->size < 2)
                continue;
            char r[400];
            dist_watch_reason(groups[i], waited_s, r, sizeof r);
            /* prefer the group where someone is missing */
            if (!why[0] || strstr(r, "did not reach it"))
                snprintf(why, sizeof why, "%s (%s group): %s", what, i == 0 ? "TP" : "DP", r);
        }
        if (!why[0])
            snprintf(why, sizeof why, "%s did not complete within %.0f s", what, waited_s);
    }
    if (s->tp_comm)
        ncclCommAbort(s->tp_comm);
    if (s->dp_comm)
        ncclCommAbort(s->dp_comm);
    s->tp_comm = s->dp_comm = NULL;
    s->aborted = true;
    return err_set(err, ERR_RUNTIME, "%s; NCCL communicators aborted (ncclCommAbort)", why);
}

/* After an NCCL call on comm: wait (bounded) while it is still in
 * progress (non-blocking communicators return at once). */
int cuda_nccl_settle(cuda_state_t *s, ncclComm_t comm, ncclResult_t res, const char *what,
                     err_t *err)
{
    double t0 = cuda_now_s(), limit = deadline_of(s);
    while (res == ncclInProgress) {
        double waited = cuda_now_s() - t0;
        if (waited > limit)
            return stall(s, what, waited, ncclSuccess, err);
        nap(waited);
        res = async_error(comm);
    }
    if (res != ncclSuccess)
        return stall(s, what, cuda_now_s() - t0, res, err);
    return ERR_OK;
}

/* Wait for ev (or, ev NULL, the whole of stream), bounded, watching both
 * communicators' errors: the one host wait of this backend. */
int cuda_wait_device(cuda_state_t *s, cudaStream_t stream, cudaEvent_t ev, const char *what,
                     err_t *err)
{
    double t0 = cuda_now_s(), limit = deadline_of(s);
    for (;;) {
        cudaError_t q = ev ? cudaEventQuery(ev) : cudaStreamQuery(stream);
        if (q == cudaSuccess)
            return ERR_OK;
        if (q != cudaErrorNotReady)
            return cuda_fail(err, what, cudaGetErrorString(q), __FILE__, __LINE__);
        ncclResult_t a = async_error(s->tp_comm);
        if (a == ncclSuccess || a == ncclInProgress)
            a = async_error(s->dp_comm);
        double waited = cuda_now_s() - t0;
        if (a != ncclSuccess && a != ncclInProgress)
            return stall(s, what, waited, a, err);
        if (waited > limit)
            return stall(s, what, waited, ncclSuccess, err);
        nap(waited);
    }
}


/* ------------------------------------------------------------ set-up */

/* A non-blocking NCCL communicator over g (NULL for a group of one): rank 0
 * creates the unique id and broadcasts it, with whether that worked, over
 * MPI. */
static int nccl_comm(cuda_state_t *s, const dist_group_t *g, ncclComm_t *out, err_t *err)
{
    *out = NULL;
    if (!g || g->size <= 1)
        return ERR_OK;
    struct {
        int ok;
        ncclUniqueId id;
    } msg;
    memset(&msg, 0, sizeof msg);
    if (g->rank == 0)
        msg.ok = ncclGetUniqueId(&msg.id) == ncclSuccess;
    TRY(dist_bcast(g, &msg, sizeof msg, 0, err));
    if (!msg.ok)
        return err_set(err, ERR_RUNTIME, "ncclGetUniqueId failed on rank 0 of a group of %d",
                       g->size);
    ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
    config.blocking = 0; /* calls return at once; waits are polled with a deadline */
    ncclResult_t res = ncclCommInitRankConfig(out, g->size, msg.id, g->rank, &config);
    if (res != ncclSuccess && res != ncclInProgress) {
        *out = NULL;
        return err_set(err, ERR_RUNTIME, "ncclCommInitRankConfig: %s (%s)",
                       ncclGetErrorString(res), ncclGetLastError(NULL));
    }
    return cuda_nccl_settle(s, *out, res, "ncclCommInitRankConfig", err);
}

static void fill_flags(const cuda_state_t *s, uint8_t *flags)
{
    memset(flags, 0, s->n_pad);
    for (int i = 0; i < s->m.n_tensors; i++) {
        const gpt_tensor_t *t = &s->m.tensors[i];
        bool counted = t->split != GPT_SPLIT_NONE || s->m.tp_rank == 0;
        memset(flags + t->offset, (t->decay ? 1 : 0) | (counted ? 2 : 0), t->size);
    }
}

/* cos/sin of pos theta^(-2i/hd) for pos < t, i < hd/2, as cpu_ops computes them. */
static int upload_rope(cuda_state_t *s, err_t *err)
{
    size_t n = (size_t)s->T * (s->m.head_dim / 2);
    float *h = (float *)malloc(2 * n * sizeof(float));
    if (!h)
        return err_set(err, ERR_RUNTIME, "out of memory");
    kern_rope_table(s->T, s->m.head_dim, s->m.rope_theta, h, h + n);
    cudaError_t e =
        cudaMemcpyAsync(s->rope_cos, h, n * sizeof(float), cudaMemcpyHostToDevice, s->s_main);
    if (e == cudaSuccess)
        e = cudaMemcpyAsync(s->rope_sin, h + n, n * sizeof(float), cudaMemcpyHostToDevice,
                            s->s_main);
    if (e == cudaSuccess)
        e = cudaStreamSynchronize(s->s_main);
    free(h);
    CUDA_CHECK(e);
    return ERR_OK;
}

void cuda_sample_memory(cuda_state_t *s)
{
    size_t free_b = 0, total_b = 0;
    if (cudaMemGetInfo(&free_b, &total_b) == cudaSuccess) {
        if (!s->mem_free_min || free_b < s->mem_free_min)
            s->mem_free_min = free_b;
        s->mem_total = total_b;
    } else {
        (void)cudaGetLastError();
    }
}

static void cuda_destroy(void *state)
{
    cuda_state_t *s = (cuda_state_t *)state;
    if (!s)
        return;
    if (s->aborted) {
        /* a collective is stuck on the device: any synchronising call
         * (cudaFree included) would wait forever; the process's exit,
         * which follows the error, frees the device */
        free(s->layers);
        gpt_free(&s->m);
        free(s);
        return;
    }
    if (s->s_main)
        cudaStreamSynchronize(s->s_main);
    if (s->s_dp)
        cudaStreamSynchronize(s->s_dp);
    ncclComm_t comms[2] = {s->tp_comm, s->dp_comm};
    for (int i = 0; i < 2; i++) {
        if (!comms[i])
            continue;
        /* finalize (bounded) then destroy; abort what does not finalize */
        err_t ignore;
        if (cuda_nccl_settle(s, comms[i], ncclCommFinalize(comms[i]), "ncclCommFinalize",
                             &ignore) == ERR_OK)
            ncclCommDestroy(comms[i]);
        else if (s->aborted)
            break; /* stall() aborted both */
    }
    if (s->aborted) {
        free(s->layers);
        gpt_free(&s->m);
        free(s);
        return;
    }
    gemm_destroy(s->gemm);
    cudaEvent_t *evs[] = {&s->ev_fwd0, &s->ev_fwd1, &s->ev_bwd1,  &s->ev_dp1,
                          &s->ev_opt0, &s->ev_opt1, &s->ev_bucket};
    for (size_t i = 0; i < sizeof evs / sizeof evs[0]; i++)
        if (*evs[i])
            cudaEventDestroy(*evs[i]);
    for (int i = 0; s->ev_tp && i < s->n_ev_tp; i++)
        if (s->ev_tp[i])
            cudaEventDestroy(s->ev_tp[i]);
    free(s->ev_tp);
    if (s->s_main)
        cudaStreamDestroy(s->s_main);
    if (s->s_dp)
        cudaStreamDestroy(s->s_dp);
    cudaFree(s->params);
    cudaFree(s->grads);
    if (s->wparams != (void *)s->params)
        cudaFree(s->wparams);
    cudaFree(s->lm_pad);
    cudaFree(s->adam_m);
    cudaFree(s->adam_v);
    if (s->shard_grads != s->grads)
        cudaFree(s->shard_grads);
    cudaFree(s->flags);
    cudaFree(s->acts_mem);
    cudaFree(s->scratch_mem);
    cudaFreeHost(s->h_tokens);
    cudaFreeHost(s->h_dsum);
    free(s->h_count);
    free(s->h_params);
    free(s->h_m);
    free(s->h_v);
    free(s->h_grads);
    free(s->layers);
    gpt_free(&s->m);
    free(s);
}

static int cuda_reset(void *state, err_t *err)
{
    cuda_state_t *s = (cuda_state_t *)state;
    float *h = (float *)calloc(s->n_pad, sizeof(float));
    if (!h)
        return err_set(err, ERR_RUNTIME, "out of memory for %.2f GiB of initial parameters",
                       (double)s->n_pad * 4 / (1u << 30));
    gpt_init_f32(&s->m, s->c.seed, h); /* the CPU model's exact initial weights */
    cudaError_t e =
        cudaMemcpyAsync(s->params, h, s->n_pad * sizeof(float), cudaMemcpyHostToDevice, s->s_main);
    if (e == cudaSuccess)
        e = cudaStreamSynchronize(s->s_main);
    free(h);
    CUDA_CHECK(e);
    if (s->bf16)
        TRY(kern_cast(s->s_main, KERN_BF16, s->wparams, s->params, s->n_pad, err));
    CUDA_CHECK(cudaMemsetAsync(s->adam_m, 0, s->shard * sizeof(float), s->s_main));
    CUDA_CHECK(cudaMemsetAsync(s->adam_v, 0, s->shard * sizeof(float), s->s_main));
    CUDA_CHECK(cudaStreamSynchronize(s->s_main));
    return ERR_OK;
}

/* The GPU this rank runs on (its local rank's, or --device-index), and
 * what the catalog knows of it. */
static int setup_device(cuda_state_t *s, int device_count, err_t *err)
{
    const backend_config_t *c = &s->c;
    int want = dist_local_rank();
    if (want < 0)
        want = c->device_index > 0 ? c->device_index : 0;
    if (device_count == 1)
        want = 0; /* one GPU visible to this process (e.g. per-rank CUDA_VISIBLE_DEVICES) */
    else if (want >= device_count)
        return err_set(err, ERR_RUNTIME,
                       "--device cuda: local rank %d needs GPU %d but only %d are visible", want,
                       want, device_count);
    s->device = want;
    CUDA_CHECK(cudaSetDevice(s->device));
    cudaDeviceProp prop;
    CUDA_CHECK(cudaGetDeviceProperties(&prop, s->device));
    snprintf(s->device_name, sizeof s->device_name, "%.95s", prop.name);
    gpu_t g;
    err_t ignored;
    if (gpu_load(prop.name, &g, &ignored) == 0) {
        snprintf(s->gpu_name, sizeof s->gpu_name, "%.31s", g.name);
        s->peak_tflops = g.peak_tflops[c->bf16 ? DTYPE_BF16 : DTYPE_FP32];
    }
    return ERR_OK;
}

/* The model's shard on this TP rank, checked against the micro-batch and
 * sequence, and the sizes that follow: rows, logits stride, parameters
 * and the ZeRO-1 shard. */
static int setup_sizes(cuda_state_t *s, err_t *err)
{
    const backend_config_t *c = &s->c;
    TRY(gpt_create(c->model, c->tp, c->tp_group->rank, &s->m, err));
    const gpt_t *m = &s->m;
    if (c->micro_batch < 1 || c->seq_len < 1)
        return err_set(err, ERR_INPUT, "micro-batch %d x sequence %d: both must be positive",
                       c->micro_batch, c->seq_len);
    if (c->seq_len > m->max_seq)
        return err_setf(err, ERR_INPUT, m->arch.name, "max_position_embeddings",
                        "sequence length %d is longer than the model's %d positions", c->seq_len,
                        m->max_seq);
    if ((double)c->micro_batch * c->seq_len > 1 << 30)
        return err_set(err, ERR_INPUT, "micro-batch %d x sequence %d: too many tokens",
                       c->micro_batch, c->seq_len);
    s->bf16 = c->bf16;
    s->es = s->bf16 ? 2 : 4;
    s->dt = s->bf16 ? KERN_BF16 : KERN_F32;
    s->B = c->micro_batch;
    s->T = c->seq_len;
    s->N = s->B * s->T;
    s->Vp = (m->vocab + LOGITS_ALIGN - 1) / LOGITS_ALIGN * LOGITS_ALIGN;
    s->n = m->n_params;
    int dpz = c->zero1 ? c->dp : 1;
    s->n_pad = (s->n + (size_t)dpz - 1) / (size_t)dpz * (size_t)dpz;
    s->shard = c->zero1 ? s->n_pad / (size_t)c->dp : s->n;
    s->shard_begin = c->zero1 ? s->shard * (size_t)c->dp_group->rank : 0;
    return ERR_OK;
}

/* Streams, timing events, the GEMM handle and the communicators. */
static int setup_streams(cuda_state_t *s, err_t *err)
{
    const backend_config_t *c = &s->c;
    const gpt_t *m = &s->m;
    CUDA_CHECK(cudaStreamCreateWithFlags(&s->s_main, cudaStreamNonBlocking));
    CUDA_CHECK(cudaStreamCreateWithFlags(&s->s_dp, cudaStreamNonBlocking));
    cudaEvent_t *evs[] = {&s->ev_fwd0, &s->ev_fwd1, &s->ev_bwd1,
                          &s->ev_dp1,  &s->ev_opt0, &s->ev_opt1};
    for (size_t i = 0; i < sizeof evs / sizeof evs[0]; i++)
        CUDA_CHECK(cudaEventCreate(evs[i]));
    CUDA_CHECK(cudaEventCreateWithFlags(&s->ev_bucket, cudaEventDisableTiming));
    if (c->tp > 1) {
        s->n_ev_tp = 2 * (4 * m->n_layers + 2); /* 2 all-reduces per block each way */
        s->ev_tp = (cudaEvent_t *)calloc((size_t)s->n_ev_tp, sizeof(cudaEvent_t));
        if (!s->ev_tp)
            return err_set(err, ERR_RUNTIME, "out of memory");
        for (int i = 0; i < s->n_ev_tp; i++)
            CUDA_CHECK(cudaEventCreate(&s->ev_tp[i]));
    }
    TRY(gemm_create(GEMM_WORKSPACE_BYTES, &s->gemm, err));
    /* every rank creates its TP communicator, then its DP one: the same order everywhere */
    TRY(nccl_comm(s, c->tp_group, &s->tp_comm, err));
    TRY(nccl_comm(s, c->dp_group, &s->dp_comm, err));
    return ERR_OK;
}

/* The parameters, gradients, Adam moments and parameter flags on the
 * device; *pad_bytes_out the padded head's copy (0 without one). */
static int setup_params(cuda_state_t *s, size_t *pad_bytes_out, err_t *err)
{
    const backend_config_t *c = &s->c;
    const gpt_t *m = &s->m;
    size_t np = s->n_pad;
    TRY(dev_alloc(s, (void **)&s->params, np * sizeof(float), "fp32 weights", err));
    TRY(dev_alloc(s, (void **)&s->grads, np * sizeof(float), "gradients", err));
    if (s->bf16)
        TRY(dev_alloc(s, &s->wparams, np * sizeof(bf16), "bf16 weights", err));
    else
        s->wparams = s->params;
    size_t pad_bytes = 0;
    if (s->Vp != m->vocab) {
        pad_bytes = s->es * (size_t)s->Vp * (size_t)m->hidden;
        TRY(dev_alloc(s, &s->lm_pad, pad_bytes, "padded head weights", err));
        CUDA_CHECK(cudaMemsetAsync(s->lm_pad, 0, pad_bytes, s->s_main));
    }
    size_t sh = s->shard ? s->shard : 1;
    TRY(dev_alloc(s, (void **)&s->adam_m, sh * sizeof(float), "Adam moments", err));
    TRY(dev_alloc(s, (void **)&s->adam_v, sh * sizeof(float), "Adam moments", err));
    if (c->zero1 && c->dp > 1)
        TRY(dev_alloc(s, (void **)&s->shard_grads, sh * sizeof(float), "gradient shard", err));
    else if (c->zero1)
        s->shard_grads = s->grads; /* one replica: its shard is everything */
    TRY(dev_alloc(s, (void **)&s->flags, np, "parameter flags", err));
    uint8_t *hf = (uint8_t *)malloc(np);
    if (!hf)
        return err_set(err, ERR_RUNTIME, "out of memory");
    fill_flags(s, hf);
    cudaError_t e = cudaMemcpyAsync(s->flags, hf, np, cudaMemcpyHostToDevice, s->s_main);
    if (e == cudaSuccess)
        e = cudaStreamSynchronize(s->s_main);
    free(hf);
    CUDA_CHECK(e);
    CUDA_CHECK(cudaMemsetAsync(s->grads, 0, np * sizeof(float), s->s_main));
    *pad_bytes_out = pad_bytes;
    return ERR_OK;
}

/* The activation and scratch arenas, the rotary table and the pinned
 * host buffers. */
static int setup_acts(cuda_state_t *s, err_t *err)
{
    const gpt_t *m = &s->m;
    s->layers = (layer_acts_t *)calloc((size_t)m->n_layers, sizeof(layer_acts_t));
    if (!s->layers)
        return err_set(err, ERR_RUNTIME, "out of memory");
    bump_t b = {NULL, 0};
    layout_acts(s, &b);
    s->acts_bytes = b.off;
    char what[96];
    snprintf(what, sizeof what, "activations (micro-batch %d x %d)", s->B, s->T);
    TRY(dev_alloc(s, (void **)&s->acts_mem, s->acts_bytes, what, err));
    b.base = s->acts_mem;
    b.off = 0;
    layout_acts(s, &b);
    b.base = NULL;
    b.off = 0;
    layout_scratch(s, &b);
    s->scratch_bytes = b.off;
    TRY(dev_alloc(s, (void **)&s->scratch_mem, s->scratch_bytes, "backward buffers", err));
    b.base = s->scratch_mem;
    b.off = 0;
    layout_scratch(s, &b);
    if (m->arch.pos == MODEL_POS_ROPE)
        TRY(upload_rope(s, err));
    CUDA_CHECK(cudaMallocHost((void **)&s->h_tokens, (5 * (size_t)s->N + 1) * sizeof(int32_t)));
    CUDA_CHECK(cudaMallocHost((void **)&s->h_dsum, 2 * sizeof(double)));
    s->h_count = (int32_t *)calloc((size_t)m->vocab, sizeof(int32_t));
    if (!s->h_count)
        return err_set(err, ERR_RUNTIME, "out of memory");
    return ERR_OK;
}

/* Everything s->c asks for on one of device_count visible GPUs, the
 * weights initialised; on failure cuda_destroy frees what was made. */
static int setup(cuda_state_t *s, int device_count, err_t *err)
{
    TRY(setup_device(s, device_count, err));
    TRY(setup_sizes(s, err));
    TRY(setup_streams(s, err));
    size_t pad_bytes = 0;
    TRY(setup_params(s, &pad_bytes, err));
    TRY(setup_acts(s, err));
    size_t np = s->n_pad;
    s->other_bytes = (double)np + (double)gemm_workspace_bytes(s->gemm) + (double)pad_bytes;
    TRY(cuda_reset(s, err));
    cuda_sample_memory(s);
    return ERR_OK;
}

static int cuda_create(const backend_config_t *c, void **state, err_t *err)
{
    *state = NULL;
    int count = 0;
    cudaError_t e = cudaGetDeviceCount(&count);
    if (e != cudaSuccess || count < 1) {
        const char *why = e != cudaSuccess ? cudaGetErrorString(e) : "0 devices";
        (void)cudaGetLastError();
        return err_set(err, ERR_RUNTIME,
                       "--device cuda: no CUDA GPU visible (cudaGetDeviceCount: %s)", why);
    }
    cuda_state_t *s = (cuda_state_t *)calloc(1, sizeof *s);
    if (!s)
        return err_set(err, ERR_RUNTIME, "out of memory");
    s->c = *c;
    buckets_init(&s->buckets, c->bucket_bytes, sizeof(float), cuda_launch_bucket, s);
    int rc = setup(s, count, err);
    if (rc) {
        cuda_destroy(s);
        return rc;
    }
    *state = s;
    return ERR_OK;
}

static int cuda_zero_grads(void *state, err_t *err)
{
    cuda_state_t *s = (cuda_state_t *)state;
    CUDA_CHECK(cudaMemsetAsync(s->grads, 0, s->n_pad * sizeof(float), s->s_main));
    return ERR_OK;
}

/* ------------------------------------------------------------ host copies */

static int ensure_host(cuda_state_t *s, err_t *err)
{
    if (!s->h_params)
        s->h_params = (float *)calloc(s->n_pad, sizeof(float));
    if (!s->h_m)
        s->h_m = (float *)calloc(s->shard ? s->shard : 1, sizeof(float));
    if (!s->h_v)
        s->h_v = (float *)calloc(s->shard ? s->shard : 1, sizeof(float));
    if (!s->h_params || !s->h_m || !s->h_v)
        return err_set(err, ERR_RUNTIME,
                       "out of host memory for a %.2f GiB copy of the training state",
                       (double)(s->n_pad + 2 * s->shard) * 4 / (1u << 30));
    return ERR_OK;
}

static int cuda_host_buffers(void *state, ckpt_state_t *c, size_t *n_params, size_t *n_opt,
                             err_t *err)
{
    cuda_state_t *s = (cuda_state_t *)state;
    TRY(ensure_host(s, err));
    c->params = s->h_params;
    c->m = s->h_m;
    c->v = s->h_v;
    *n_params = s->n_pad;
    *n_opt = s->shard;
    return ERR_OK;
}

static int cuda_state_to_host(void *state, ckpt_state_t *c, err_t *err)
{
    cuda_state_t *s = (cuda_state_t *)state;
    size_t a, b;
    TRY(cuda_host_buffers(state, c, &a, &b, err));
    CUDA_CHECK(cudaMemcpyAsync(s->h_params, s->params, s->n_pad * sizeof(float),
                               cudaMemcpyDeviceToHost, s->s_main));
    CUDA_CHECK(cudaMemcpyAsync(s->h_m, s->adam_m, s->shard * sizeof(float), cudaMemcpyDeviceToHost,
                               s->s_main));
    CUDA_CHECK(cudaMemcpyAsync(s->h_v, s->adam_v, s->shard * sizeof(float), cudaMemcpyDeviceToHost,
                               s->s_main));
    CUDA_CHECK(cudaStreamSynchronize(s->s_main));
    return ERR_OK;
}

static int cuda_state_from_host(void *state, err_t *err)
{
    cuda_state_t *s = (cuda_state_t *)state;
    TRY(ensure_host(s, err));
    CUDA_CHECK(cudaMemcpyAsync(s->params, s->h_params, s->n_pad * sizeof(float),
                               cudaMemcpyHostToDevice, s->s_main));
    CUDA_CHECK(cudaMemcpyAsync(s->adam_m, s->h_m, s->shard * sizeof(float), cudaMemcpyHostToDevice,
                               s->s_main));
    CUDA_CHECK(cudaMemcpyAsync(s->adam_v, s->h_v, s->shard * sizeof(float), cudaMemcpyHostToDevice,
                               s->s_main));
    if (s->bf16)
        TRY(kern_cast(s->s_main, KERN_BF16, s->wparams, s->params, s->n_pad, err));
    CUDA_CHECK(cudaStreamSynchronize(s->s_main));
    return ERR_OK;
}

static int cuda_grads_to_host(void *state, const float **grads, size_t *n, err_t *err)
{
    cuda_state_t *s = (cuda_state_t *)state;
    if (!s->h_grads && !(s->h_grads = (float *)malloc((s->n ? s->n : 1) * sizeof(float))))
        return err_set(err, ERR_RUNTIME, "out of host memory for the gradients");
    CUDA_CHECK(cudaMemcpyAsync(s->h_grads, s->grads, s->n * sizeof(float), cudaMemcpyDeviceToHost,
                               s->s_main));
    CUDA_CHECK(cudaStreamSynchronize(s->s_main));
    *grads = s->h_grads;
    *n = s->n;
    return ERR_OK;
}

static void version_text(int v, int major_div, char *out, size_t cap)
{
    /* CUDA: 12040 -> 12.4; cuBLASLt and NCCL: 130100 -> 13.1.0 */
    if (major_div == 1000)
        snprintf(out, cap, "%d.%d", v / 1000, (v % 1000) / 10);
    else
        snprintf(out, cap, "%d.%d.%d", v / 10000, (v / 100) % 100, v % 100);
}

static void cuda_info(void *state, backend_info_t *info)
{
    cuda_state_t *s = (cuda_state_t *)state;
    memset(info, 0, sizeof *info);
    if (!s)
        return;
    cuda_sample_memory(s);
    double np = (double)s->n_pad, sh = (double)s->shard;
    if (s->bf16) {
        /* the ZeRO paper's accounting: bf16 weights, fp32 gradients, and
         * fp32 master weights with the two moments as optimizer state */
        info->params = np * 2;
        info->optimizer = np * 4 + 2 * sh * 4;
    } else {
        info->params = np * 4;
        info->optimizer = 2 * sh * 4;
    }
    if (s->c.zero1 && s->shard_grads != s->grads)
        info->optimizer += sh * 4;
    info->grads = np * 4;
    info->activations = (double)s->acts_bytes;
    info->buffers = (double)s->scratch_bytes + s->other_bytes;
    info->capacity = (double)s->mem_total;
    /* device-wide use at the fullest moment seen (CUDA context, cuBLASLt,
     * NCCL and our allocations) */
    info->peak_measured =
        s->mem_total > s->mem_free_min ? (double)(s->mem_total - s->mem_free_min) : 0;
    snprintf(info->device, sizeof info->device, "%.95s", s->device_name);
    snprintf(info->gpu, sizeof info->gpu, "%.31s", s->gpu_name);
    info->peak_tflops = s->peak_tflops;
    int rt = 0, drv = 0, nccl = 0;
    cudaRuntimeGetVersion(&rt);
    cudaDriverGetVersion(&drv);
    ncclGetVersion(&nccl);
    char a[16], b[16], c[24], d[24];
    version_text(rt, 1000, a, sizeof a);
    version_text(drv, 1000, b, sizeof b);
    version_text((int)gemm_cublaslt_version(), 10000, c, sizeof c);
    version_text(nccl, 10000, d, sizeof d);
    snprintf(info->software, sizeof info->software,
             "CUDA runtime %s, driver %s, cuBLASLt %s, NCCL %s, %s, %s", a, b, c, d,
             s->bf16 ? "bf16 with fp32 master weights" : "fp32 (no TF32)",
             dist_have_mpi() ? "MPI" : "no MPI");
}

extern "C" PLUGIN_EXPORT const backend_ops_t scaleplan_backend_cuda = {
    .name = "cuda",
    .create = cuda_create,
    .destroy = cuda_destroy,
    .zero_grads = cuda_zero_grads,
    .micro_step = cuda_micro_step,
    .reduce_grads = cuda_reduce_grads,
    .grad_norm = cuda_grad_norm,
    .optimizer_step = cuda_optimizer_step,
    .state_to_host = cuda_state_to_host,
    .host_buffers = cuda_host_buffers,
    .state_from_host = cuda_state_from_host,
    .grads_to_host = cuda_grads_to_host,
    .reset = cuda_reset,
    .info = cuda_info,
};
