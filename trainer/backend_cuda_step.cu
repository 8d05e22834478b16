/* A training step of the CUDA backend (split off from backend_cuda.cu,
 * issue 34; backend_cuda.cu's first comment gives the design): the linear
 * layers' products, the TP all-reduces and DP buckets, the forward and
 * backward passes, the gradient norm and the optimizer. */
#include "trainer/backend_cudaInt.cuh"

/* ------------------------------------------------------------ products */

/* out[N, O] = inp[N, C] W[O, C]^T (+ bias[O]), W row-major as gpt stores it.
 * Column-major view: out^T (O x N, ld ldo) = op(A) B with A = W stored
 * C x O (ld C) transposed, B = inp^T stored C x N (ld C). out is fp32 when
 * out_f32, else T; bias (T, may be NULL) is fused into the epilogue. */
static int linear_fwd(cuda_state_t *s, void *out, bool out_f32, int ldo, const void *inp,
                      const void *w, const void *bias, int N, int C, int O, err_t *err)
{
    gemm_args_t a;
    memset(&a, 0, sizeof a);
    a.trans_a = true;
    a.m = O, a.n = N, a.k = C;
    a.a = w, a.lda = C;
    a.b = inp, a.ldb = C;
    a.d = out, a.ldd = ldo;
    a.batch = 1, a.alpha = 1, a.beta = 0;
    a.ab_type = s->dt;
    a.d_type = out_f32 ? KERN_F32 : s->dt;
    a.bias = bias;
    return gemm_run(s->gemm, &a, s->s_main, err);
}

/* dinp[N, C] = dout[N, O] W[O, C] (overwritten; fp32 when out_f32, else T).
 * Column-major: dinp^T (C x N, ld C) = A B with A = W stored C x O (ld C),
 * B = dout^T stored O x N (ld ld_out). */
static int linear_bwd_data(cuda_state_t *s, void *dinp, bool out_f32, const void *dout, int ld_out,
                           const void *w, int N, int C, int O, err_t *err)
{
    gemm_args_t a;
    memset(&a, 0, sizeof a);
    a.m = C, a.n = N, a.k = O;
    a.a = w, a.lda = C;
    a.b = dout, a.ldb = ld_out;
    a.d = dinp, a.ldd = C;
    a.batch = 1, a.alpha = 1, a.beta = 0;
    a.ab_type = s->dt;
    a.d_type = out_f32 ? KERN_F32 : s->dt;
    return gemm_run(s->gemm, &a, s->s_main, err);
}

/* dW[O, C] += dout[N, O]^T inp[N, C] into the fp32 gradients.
 * Column-major: dW^T (C x O, ld C) += A op(B) with A = inp^T stored C x N
 * (ld C), B = dout^T stored O x N (ld ld_out) transposed. */
static int linear_bwd_weight(cuda_state_t *s, float *dw, const void *dout, int ld_out,
                             const void *inp, int N, int C, int O, err_t *err)
{
    gemm_args_t a;
    memset(&a, 0, sizeof a);
    a.trans_b = true;
    a.m = C, a.n = O, a.k = N;
    a.a = inp, a.lda = C;
    a.b = dout, a.ldb = ld_out;
    a.d = dw, a.ldd = C;
    a.batch = 1, a.alpha = 1, a.beta = 1;
    a.ab_type = s->dt;
    a.d_type = KERN_F32;
    return gemm_run(s->gemm, &a, s->s_main, err);
}

/* ------------------------------------------------------------ communication */

/* Sum buf over the TP group on s_main (Megatron's row-parallel output in the
 * forward, column-parallel input gradient in the backward), timed. */
static int tp_sum(cuda_state_t *s, float *buf, size_t n, err_t *err)
{
    if (!s->tp_comm)
        return ERR_OK;
    if (s->used_ev_tp + 2 > s->n_ev_tp)
        return err_set(err, ERR_RUNTIME, "internal: more TP all-reduces than events");
    CUDA_CHECK(cudaEventRecord(s->ev_tp[s->used_ev_tp++], s->s_main));
    NCCL_RUN(s, s->c.tp_group, s->tp_comm, "a TP all-reduce",
             ncclAllReduce(buf, buf, n, ncclFloat, ncclSum, s->tp_comm, s->s_main));
    CUDA_CHECK(cudaEventRecord(s->ev_tp[s->used_ev_tp++], s->s_main));
    return ERR_OK;
}

/* Start the DP all-reduce of one bucket on s_dp once s_main has produced
 * its gradients (buckets_launch_fn). */
int cuda_launch_bucket(void *ctx, size_t offset, size_t count, err_t *err)
{
    cuda_state_t *s = (cuda_state_t *)ctx;
    CUDA_CHECK(cudaEventRecord(s->ev_bucket, s->s_main));
    CUDA_CHECK(cudaStreamWaitEvent(s->s_dp, s->ev_bucket, 0));
    float *p = s->grads + offset;
    NCCL_RUN(s, s->c.dp_group, s->dp_comm, "a gradient bucket all-reduce",
             ncclAllReduce(p, p, count, ncclFloat, ncclSum, s->dp_comm, s->s_dp));
    s->buckets_launched = true;
    return ERR_OK;
}

/* [offset, offset + count) of the gradients is final for this backward. */
static int grads_ready(cuda_state_t *s, size_t offset, size_t count, err_t *err)
{
    return buckets_ready(&s->buckets, offset, count, err);
}

/* ------------------------------------------------------------ passes */

static int forward(cuda_state_t *s, double loss_scale, err_t *err)
{
    const gpt_t *m = &s->m;
    int N = s->N, C = m->hidden, V = m->vocab;
    int att_w = m->heads_local * m->head_dim;
    bool ln = m->gpt_style, swiglu = m->arch.mlp == MODEL_MLP_SWIGLU;
    cudaStream_t st = s->s_main;
    kern_dtype_t dt = s->dt;
    const float *P = s->params;
    const char *W = (const char *)s->wparams; /* weights of type dt */
    size_t es = s->es;
    const int32_t *inputs = s->tokens, *targets = s->tokens + N;
    size_t NC = (size_t)N * C;
    TRY(kern_embed_fwd(st, s->layers[0].x_in, inputs, P + m->wte, at(P, m->wpe), N, s->T, C, err));
    for (int l = 0; l < m->n_layers; l++) {
        const gpt_layer_t *y = &m->layers[l];
        layer_acts_t *k = &s->layers[l];
        float *x_out = l + 1 < m->n_layers ? s->layers[l + 1].x_in : s->final_x;
        TRY(kern_norm_fwd(st, dt, k->ln1, k->ln1_mean, k->ln1_rstd, k->x_in, P + y->ln1_w,
                          at(P, y->ln1_b), N, C, m->eps, ln, err));
        TRY(linear_fwd(s, k->qkv, false, m->qkv_local, k->ln1, W + es * y->qkv_w,
                       cuda_wat(s, y->qkv_b), N, C, m->qkv_local, err));
        if (m->arch.pos == MODEL_POS_ROPE)
            TRY(kern_rope(st, dt, k->qkv, s->rope_cos, s->rope_sin, N, s->T, m->heads_local,
                          m->kv_heads_local, m->head_dim, 1.f, err));
        TRY(kern_attention_fwd(s->gemm, st, dt, k->att, k->probs, k->qkv, &s->attn, s->B, s->T,
                               m->heads_local, m->kv_heads_local, m->head_dim, err));
        TRY(linear_fwd(s, k->x_mid, true, C, k->att, W + es * y->attn_w, NULL, N, att_w, C, err));
        TRY(tp_sum(s, k->x_mid, NC, err));
        TRY(kern_residual(st, k->x_mid, k->x_in, at(P, y->attn_b), NC, C, err));
        TRY(kern_norm_fwd(st, dt, k->ln2, k->ln2_mean, k->ln2_rstd, k->x_mid, P + y->ln2_w,
                          at(P, y->ln2_b), N, C, m->eps, ln, err));
        TRY(linear_fwd(s, k->fc, false, m->fc_local, k->ln2, W + es * y->fc_w,
                       cuda_wat(s, y->fc_b), N, C, m->fc_local, err));
        TRY(kern_act_fwd(st, dt, swiglu, k->act, k->fc, N, m->ffn_local, err));
        TRY(linear_fwd(s, x_out, true, C, k->act, W + es * y->proj_w, NULL, N, m->ffn_local, C,
                       err));
        TRY(tp_sum(s, x_out, NC, err));
        TRY(kern_residual(st, x_out, k->x_mid, at(P, y->proj_b), NC, C, err));
    }
    TRY(kern_norm_fwd(st, dt, s->lnf, s->lnf_mean, s->lnf_rstd, s->final_x, P + m->lnf_w,
                      at(P, m->lnf_b), N, C, m->eps, ln, err));
    /* the head over Vp rows when padded: the zero rows give zero logits in
     * columns [V, Vp), which the loss leaves alone, so the backward's
     * product over Vp adds nothing for them */
    const void *head_w = W + es * m->lm_w;
    if (s->lm_pad) {
        CUDA_CHECK(cudaMemcpyAsync(s->lm_pad, head_w, es * (size_t)V * C, cudaMemcpyDeviceToDevice,
                                   st));
        head_w = s->lm_pad;
    }
    TRY(linear_fwd(s, s->logits, false, s->Vp, s->lnf, head_w, NULL, N, C, s->lm_pad ? s->Vp : V,
                   err));
    /* the loss, and d(loss_scale x mean loss)/dlogits in place of the logits */
    TRY(kern_crossentropy(st, dt, s->logits, s->losses, targets, N, V, s->Vp,
                          (float)(loss_scale / N), err));
    TRY(kern_sum(st, s->dsum, s->losses, (size_t)N, err));
    return ERR_OK;
}

static int backward(cuda_state_t *s, err_t *err)
{
    const gpt_t *m = &s->m;
    int N = s->N, C = m->hidden, V = m->vocab;
    int att_w = m->heads_local * m->head_dim;
    bool ln = m->gpt_style, swiglu = m->arch.mlp == MODEL_MLP_SWIGLU;
    cudaStream_t st = s->s_main;
    kern_dtype_t dt = s->dt;
    const float *P = s->params;
    float *G = s->grads;
    const char *W = (const char *)s->wparams;
    size_t es = s->es;
    void *dx_copy = s->bf16 ? s->dx_t : NULL; /* fp32 mode: the GEMMs read dx itself */
    const void *dxT = s->dx_t;
    size_t NC = (size_t)N * C;
    /* head: dlogits (in the logits buffer) -> final norm input */
    TRY(linear_bwd_data(s, s->dln, true, s->logits, s->Vp, s->lm_pad ? s->lm_pad : W + es * m->lm_w,
                        N, C, s->lm_pad ? s->Vp : V, err));
    TRY(linear_bwd_weight(s, G + m->lm_w, s->logits, s->Vp, s->lnf, N, C, V, err));
    TRY(kern_norm_bwd(st, dt, s->dx, dx_copy, G + m->lnf_w, at(G, m->lnf_b), s->dln, s->final_x,
                      P + m->lnf_w, s->lnf_mean, s->lnf_rstd, N, C, ln, false, s->part_a,
                      s->part_b, err));
    TRY(grads_ready(s, m->head_begin, m->n_params - m->head_begin, err));
    for (int l = m->n_layers - 1; l >= 0; l--) {
        const gpt_layer_t *y = &m->layers[l];
        layer_acts_t *k = &s->layers[l];
        /* dx = dL/d(block output), flowing unchanged into x_mid */
        TRY(linear_bwd_data(s, s->dact, false, dxT, C, W + es * y->proj_w, N, m->ffn_local, C,
                            err));
        TRY(linear_bwd_weight(s, G + y->proj_w, dxT, C, k->act, N, m->ffn_local, C, err));
        if (y->proj_b != GPT_ABSENT)
            TRY(kern_bias_grad(st, KERN_F32, G + y->proj_b, s->dx, C, N, C, s->part_a, err));
        TRY(kern_act_bwd(st, dt, swiglu, s->dfc, k->fc, s->dact, N, m->ffn_local, err));
        TRY(linear_bwd_data(s, s->dln, true, s->dfc, m->fc_local, W + es * y->fc_w, N, C,
                            m->fc_local, err));
        TRY(linear_bwd_weight(s, G + y->fc_w, s->dfc, m->fc_local, k->ln2, N, C, m->fc_local, err));
        if (y->fc_b != GPT_ABSENT)
            TRY(kern_bias_grad(st, dt, G + y->fc_b, s->dfc, m->fc_local, N, m->fc_local, s->part_a,
                               err));
        TRY(tp_sum(s, s->dln, NC, err));
        TRY(kern_norm_bwd(st, dt, s->dx, dx_copy, G + y->ln2_w, at(G, y->ln2_b), s->dln, k->x_mid,
                          P + y->ln2_w, k->ln2_mean, k->ln2_rstd, N, C, ln, true, s->part_a,
                          s->part_b, err));
        /* dx = dL/dx_mid, flowing unchanged into x_in */
        TRY(linear_bwd_data(s, s->datt, false, dxT, C, W + es * y->attn_w, N, att_w, C, err));
        TRY(linear_bwd_weight(s, G + y->attn_w, dxT, C, k->att, N, att_w, C, err));
        if (y->attn_b != GPT_ABSENT)
            TRY(kern_bias_grad(st, KERN_F32, G + y->attn_b, s->dx, C, N, C, s->part_a, err));
        TRY(kern_attention_bwd(s->gemm, st, dt, s->dqkv, s->datt, k->qkv, k->probs, &s->attn, s->B,
                               s->T, m->heads_local, m->kv_heads_local, m->head_dim, err));
        if (m->arch.pos == MODEL_POS_ROPE)
            TRY(kern_rope(st, dt, s->dqkv, s->rope_cos, s->rope_sin, N, s->T, m->heads_local,
                          m->kv_heads_local, m->head_dim, -1.f, err));
        TRY(linear_bwd_data(s, s->dln, true, s->dqkv, m->qkv_local, W + es * y->qkv_w, N, C,
                            m->qkv_local, err));
        TRY(linear_bwd_weight(s, G + y->qkv_w, s->dqkv, m->qkv_local, k->ln1, N, C, m->qkv_local,
                              err));
        if (y->qkv_b != GPT_ABSENT)
            TRY(kern_bias_grad(st, dt, G + y->qkv_b, s->dqkv, m->qkv_local, N, m->qkv_local,
                               s->part_a, err));
        TRY(tp_sum(s, s->dln, NC, err));
        TRY(kern_norm_bwd(st, dt, s->dx, dx_copy, G + y->ln1_w, at(G, y->ln1_b), s->dln, k->x_in,
                          P + y->ln1_w, k->ln1_mean, k->ln1_rstd, N, C, ln, true, s->part_a,
                          s->part_b, err));
        TRY(grads_ready(s, y->begin, y->end - y->begin, err));
    }
    const int32_t *rows = s->tokens + 2 * N, *start = s->tokens + 3 * N,
                  *uniq = s->tokens + 4 * N + 1;
    TRY(kern_embed_bwd(st, G + m->wte, at(G, m->wpe), s->dx, uniq, start, rows, s->n_uniq, s->B,
                       s->T, C, err));
    TRY(grads_ready(s, 0, m->embed_end, err));
    return ERR_OK;
}

/* Check the tokens, group the rows by input token for the embedding's
 * backward (distinct tokens in order of first appearance, each with its
 * rows in increasing order), and copy everything to the device. */
static int upload_tokens(cuda_state_t *s, const int32_t *inputs, const int32_t *targets, err_t *err)
{
    int N = s->N, V = s->m.vocab;
    for (int i = 0; i < N; i++)
        if (inputs[i] < 0 || inputs[i] >= V || targets[i] < 0 || targets[i] >= V)
            return err_set(err, ERR_INPUT, "token %d at position %d is outside the vocabulary %d",
                           inputs[i] < 0 || inputs[i] >= V ? inputs[i] : targets[i], i, V);
    int32_t *h = s->h_tokens;
    memcpy(h, inputs, (size_t)N * sizeof(int32_t));
    memcpy(h + N, targets, (size_t)N * sizeof(int32_t));
    /* rows N | start N + 1 | uniq N; h_count all zero between calls */
    kern_embed_group(inputs, N, s->h_count, h + 2 * N, h + 3 * N, h + 4 * N + 1, &s->n_uniq);
    CUDA_CHECK(cudaMemcpyAsync(s->tokens, h, (5 * (size_t)N + 1) * sizeof(int32_t),
                               cudaMemcpyHostToDevice, s->s_main));
    return ERR_OK;
}

int cuda_micro_step(void *state, const int32_t *inputs, const int32_t *targets,
                    double loss_scale, bool last, double *loss, step_times_t *t, err_t *err)
{
    cuda_state_t *s = (cuda_state_t *)state;
    /* the pinned token buffer is free: the previous call synchronised */
    TRY(upload_tokens(s, inputs, targets, err));
    s->used_ev_tp = 0;
    CUDA_CHECK(cudaEventRecord(s->ev_fwd0, s->s_main));
    TRY(forward(s, loss_scale, err));
    CUDA_CHECK(
        cudaMemcpyAsync(s->h_dsum, s->dsum, sizeof(double), cudaMemcpyDeviceToHost, s->s_main));
    CUDA_CHECK(cudaEventRecord(s->ev_fwd1, s->s_main));
    /* buckets overlap the last micro-batch's backward (earlier ones only
     * accumulate); ZeRO-1 reduce-scatters after the backward instead */
    buckets_begin(&s->buckets, last && s->c.overlap && !s->c.zero1 && s->c.dp > 1 && s->dp_comm);
    int rc = backward(s, err);
    buckets_end(&s->buckets);
    if (rc)
        return rc;
    CUDA_CHECK(cudaEventRecord(s->ev_bwd1, s->s_main));
    s->bwd_recorded = true;
    TRY(cuda_wait_device(s, s->s_main, NULL, "the micro-batch", err));
    *loss = s->h_dsum[0] / s->N;
    double f = 0, b = 0, tp = 0;
    TRY(cuda_elapsed_s(s->ev_fwd0, s->ev_fwd1, &f, err));
    TRY(cuda_elapsed_s(s->ev_fwd1, s->ev_bwd1, &b, err));
    for (int i = 0; i + 1 < s->used_ev_tp; i += 2) {
        double x = 0;
        TRY(cuda_elapsed_s(s->ev_tp[i], s->ev_tp[i + 1], &x, err));
        tp += x;
    }
    t->fwd_s += f;
    t->bwd_s += b;
    t->tp_s += tp;
    cuda_sample_memory(s);
    return ERR_OK;
}

int cuda_reduce_grads(void *state, step_times_t *t, err_t *err)
{
    cuda_state_t *s = (cuda_state_t *)state;
    bool launched = s->buckets_launched;
    s->buckets_launched = false;
    if (s->c.dp <= 1 || !s->dp_comm)
        return ERR_OK; /* one replica (ZeRO-1's shard is then the whole buffer) */
    CUDA_CHECK(cudaStreamWaitEvent(s->s_dp, s->ev_bwd1, 0));
    if (s->c.zero1)
        NCCL_RUN(s, s->c.dp_group, s->dp_comm, "the gradient reduce-scatter",
                 ncclReduceScatter(s->grads, s->shard_grads, s->shard, ncclFloat, ncclSum,
                                   s->dp_comm, s->s_dp));
    else if (!s->c.overlap ||
             !launched) /* (overlap whose backward launched no bucket: do it now) */
        NCCL_RUN(s, s->c.dp_group, s->dp_comm, "the gradient all-reduce",
                 ncclAllReduce(s->grads, s->grads, s->n, ncclFloat, ncclSum, s->dp_comm,
                               s->s_dp));
    CUDA_CHECK(cudaEventRecord(s->ev_dp1, s->s_dp));
    CUDA_CHECK(cudaStreamWaitEvent(s->s_main, s->ev_dp1, 0));
    TRY(cuda_wait_device(s, NULL, s->ev_dp1, "the gradient reduction", err));
    if (s->bwd_recorded) {
        double x = 0;
        TRY(cuda_elapsed_s(s->ev_bwd1, s->ev_dp1, &x, err));
        t->dp_s += x > 0 ? x : 0; /* what the backward did not hide */
    }
    return ERR_OK;
}

/* The gradients this rank's optimizer uses: its shard, or all of them. */
static float *opt_grads(const cuda_state_t *s)
{
    return s->c.zero1 ? s->shard_grads : s->grads;
}

int cuda_grad_norm(void *state, double *norm, step_times_t *t, err_t *err)
{
    cuda_state_t *s = (cuda_state_t *)state;
    /* padding beyond n is never counted (its flags are 0) */
    size_t n = s->c.zero1 ? s->shard : s->n;
    CUDA_CHECK(cudaEventRecord(s->ev_opt0, s->s_main));
    TRY(kern_sumsq(s->s_main, s->dsum + 1, s->sumsq_part, opt_grads(s), s->flags + s->shard_begin,
                   n, err));
    CUDA_CHECK(cudaMemcpyAsync(s->h_dsum + 1, s->dsum + 1, sizeof(double), cudaMemcpyDeviceToHost,
                               s->s_main));
    CUDA_CHECK(cudaEventRecord(s->ev_opt1, s->s_main));
    TRY(cuda_wait_device(s, s->s_main, NULL, "the gradient norm", err));
    double dev = 0;
    TRY(cuda_elapsed_s(s->ev_opt0, s->ev_opt1, &dev, err));
    double sum = s->h_dsum[1];
    /* sharded tensors differ over TP; ZeRO-1 shards differ over DP too */
    double t0 = cuda_now_s();
    int rc = dist_allreduce_sum(s->c.zero1 ? s->c.world : s->c.tp_group, &sum, 1, DIST_F64, err);
    t->opt_s += dev + (cuda_now_s() - t0);
    /* the gradients are sums over DP: the mean's norm is 1/dp of it */
    *norm = sqrt(sum) / s->c.dp;
    return rc;
}

int cuda_optimizer_step(void *state, long step, double lr, double clip, step_times_t *t,
                        err_t *err)
{
    cuda_state_t *s = (cuda_state_t *)state;
    const optim_config_t *o = &s->c.optim;
    bool gather = s->c.zero1 && s->c.dp > 1 && s->dp_comm;
    size_t n = s->c.zero1 ? s->shard : s->n;
    float *p = s->params + s->shard_begin;
    /* the bf16 copy is written by AdamW unless an all-gather follows */
    void *p16 = s->bf16 && !gather ? (bf16 *)s->wparams + s->shard_begin : NULL;
    double bc1 = 1 - pow(o->beta1, (double)step), bc2 = 1 - pow(o->beta2, (double)step);
    CUDA_CHECK(cudaEventRecord(s->ev_opt0, s->s_main));
    TRY(kern_adamw(s->s_main, p, p16, opt_grads(s), s->adam_m, s->adam_v, s->flags + s->shard_begin,
                   n, (float)o->beta1, (float)o->beta2, bc1, bc2, lr, o->eps, o->weight_decay,
                   (float)(clip / s->c.dp), err));
    if (gather) {
        /* in place: this rank's shard already sits at recvbuff + rank x shard */
        NCCL_RUN(s, s->c.dp_group, s->dp_comm, "the parameter all-gather",
                 ncclAllGather(p, s->params, s->shard, ncclFloat, s->dp_comm, s->s_main));
        if (s->bf16)
            TRY(kern_cast(s->s_main, KERN_BF16, s->wparams, s->params, s->n_pad, err));
    }
    CUDA_CHECK(cudaEventRecord(s->ev_opt1, s->s_main));
    TRY(cuda_wait_device(s, NULL, s->ev_opt1, "the optimizer step", err));
    double x = 0;
    TRY(cuda_elapsed_s(s->ev_opt0, s->ev_opt1, &x, err));
    t->opt_s += x;
    return ERR_OK;
}
