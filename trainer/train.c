#include "trainer/train.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/clock.h"
#include "common/fileio.h"
#include "models/flops.h"
#include "trainer/gpt.h"
#include "trainer/tokens.h"

void train_defaults(train_config_t *c)
{
    memset(c, 0, sizeof *c);
    c->backend = &BACKEND_CPU;
    c->tp = 1;
    c->micro_batch = 4;
    c->seq_len = 128;
    c->global_batch = 0; /* = micro_batch x dp */
    c->steps = 20;
    c->seed = 1;
    c->builtin_bytes = (size_t)1 << 20;
    optim_defaults(&c->optim);
    c->overlap = true;
    c->bf16 = true;
    c->bucket_bytes = 25e6; /* PyTorch DDP's default bucket_cap_mb */
    c->ckpt_keep = 3;
    c->fail_at_step = -1;
    c->fail_rank = 0;
}

void train_result_free(train_result_t *r)
{
    free(r->losses);
    free(r->grad_norms);
    free(r->step_s);
    memset(r, 0, sizeof *r);
}

/* Everything one run holds, freed in one place. */
typedef struct {
    dist_group_t tp_group, dp_group;
    bool groups;
    tok_data_t data;
    void *backend;
    ckpt_writer_t *writer;
    int32_t *inputs, *targets;
} run_t;

static void run_free(const train_config_t *c, run_t *u)
{
    if (u->backend)
        c->backend->destroy(u->backend);
    ckpt_writer_destroy(u->writer);
    tok_free(&u->data);
    free(u->inputs);
    free(u->targets);
    if (u->groups) {
        dist_group_free(&u->tp_group);
        dist_group_free(&u->dp_group);
    }
}

static int check_config(const train_config_t *c, const dist_group_t *world, int *dp,
                        int *accum, err_t *err)
{
    if (c->tp < 1 || world->size % c->tp != 0)
        return err_setf(err, ERR_INPUT, NULL, "--tp",
                        "%d ranks do not split into tensor-parallel groups of %d", world->size,
                        c->tp);
    *dp = world->size / c->tp;
    if (c->micro_batch < 1 || c->seq_len < 1 || c->steps < 1)
        return err_setf(err, ERR_INPUT, NULL, NULL,
                        "--micro-batch, --seq-len and --steps must be positive (got %d, %d, %ld)",
                        c->micro_batch, c->seq_len, c->steps);
    int global = c->global_batch > 0 ? c->global_batch : c->micro_batch * *dp;
    if (global % (c->micro_batch * *dp) != 0)
        return err_setf(err, ERR_INPUT, NULL, "--global-batch",
                        "%d sequences do not split into micro-batches of %d over %d data-parallel "
                        "ranks (needs a multiple of %d)",
                        global, c->micro_batch, *dp, c->micro_batch * *dp);
    *accum = global / (c->micro_batch * *dp);
    if (c->ckpt_every < 0)
        return err_setf(err, ERR_INPUT, NULL, "--checkpoint-every", "must be 0 or more (got %d)",
                        c->ckpt_every);
    if (c->resume && !c->ckpt_dir && strcmp(c->resume, "auto") == 0)
        return err_setf(err, ERR_INPUT, NULL, "--resume",
                        "needs --checkpoint-dir to look in (or --resume-from DIR)");
    return ERR_OK;
}

/* Write the first step's gradients, raw little-endian float32, and next
 * to them FILE.tensors: one line "name offset size" per tensor of rank 0's
 * buffer, so a comparison can name the tensor that differs. */
static int dump_grads(const train_config_t *c, void *backend, err_t *err)
{
    const float *g;
    size_t n;
    int rc = c->backend->grads_to_host(backend, &g, &n, err);
    if (rc || (rc = fileio_write_atomic(c->dump_grads, g, n * sizeof *g, err)))
        return rc;
    gpt_t m;
    if ((rc = gpt_create(c->model, c->tp, 0, &m, err)))
        return rc;
    size_t cap = (size_t)m.n_tensors * 80 + 1, len = 0;
    char *text = malloc(cap);
    if (!text) {
        gpt_free(&m);
        return err_set(err, ERR_RUNTIME, "out of memory");
    }
    text[0] = '\0';
    for (int i = 0; i < m.n_tensors && len < cap; i++)
        len += (size_t)snprintf(text + len, cap - len, "%s %zu %zu\n", m.tensors[i].name,
                                m.tensors[i].offset, m.tensors[i].size);
    gpt_free(&m);
    char path[1024];
    snprintf(path, sizeof path, "%s.tensors", c->dump_grads);
    rc = fileio_write_atomic(path, text, len < cap ? len : cap - 1, err);
    free(text);
    return rc;
}

/* Resume from a checkpoint when asked; *start is the step to run next. */
static int resume(const train_config_t *c, const dist_group_t *world, run_t *u,
                  const ckpt_config_t *cc, train_result_t *r, long *start, err_t *err)
{
    *start = 0;
    if (!c->resume)
        return ERR_OK;
    ckpt_state_t s;
    size_t n_params, n_opt;
    int rc = c->backend->host_buffers(u->backend, &s, &n_params, &n_opt, err);
    if (rc)
        return rc;
    if ((rc = ckpt_resume(cc, world, c->resume, &s, &r->resume, err)))
        return rc;
    if (r->resume.step < 0)
        /* nothing usable: what a damaged checkpoint left in the buffers goes */
        return r->resume.n_notes > 0 ? c->backend->reset(u->backend, err) : ERR_OK;
    *start = r->resume.step;
    return c->backend->state_from_host(u->backend, err);
}

int train_run(const train_config_t *c, const dist_group_t *world, train_result_t *r, err_t *err)
{
    memset(r, 0, sizeof *r);
    r->resume.step = -1;
    int dp = 1, accum = 1;
    int rc = check_config(c, world, &dp, &accum, err);
    if (rc)
        return rc;
    run_t u;
    memset(&u, 0, sizeof u);
    int tp_rank = world->rank % c->tp, dp_rank = world->rank / c->tp;
    if ((rc = dist_split(world, dp_rank, tp_rank, &u.tp_group, err)))
        return rc;
    if ((rc = dist_split(world, tp_rank, dp_rank, &u.dp_group, err))) {
        dist_group_free(&u.tp_group);
        return rc;
    }
    u.groups = true;
    /* data */
    rc = c->data_path ? tok_load(c->data_path, &u.data, err)
                      : tok_builtin(c->builtin_bytes, c->seed, &u.data, err);
    if (!rc)
        rc = tok_check(&u.data, c->seq_len, c->model->vocab, err);
    size_t mb_tokens = (size_t)c->micro_batch * c->seq_len;
    if (!rc && (!(u.inputs = malloc(mb_tokens * sizeof *u.inputs)) ||
                !(u.targets = malloc(mb_tokens * sizeof *u.targets))))
        rc = err_set(err, ERR_RUNTIME, "out of memory");
    /* device */
    backend_config_t bc = {c->model, c->tp, dp, world, &u.tp_group, &u.dp_group,
                           c->micro_batch, c->seq_len, c->seed, c->zero1, c->overlap,
                           c->bucket_bytes, c->bf16, 0, c->optim};
    if (!rc)
        rc = c->backend->create(&bc, &u.backend, err);
    /* checkpoints */
    ckpt_config_t cc;
    memset(&cc, 0, sizeof cc);
    long start = 0;
    if (!rc && (c->ckpt_dir || c->resume)) {
        ckpt_state_t s;
        rc = c->backend->host_buffers(u.backend, &s, &cc.n_params, &cc.n_opt, err);
        cc.dir = c->ckpt_dir ? c->ckpt_dir : ".";
        cc.keep = c->ckpt_keep;
        cc.async = c->ckpt_async;
        snprintf(cc.model, sizeof cc.model, "%s", c->model->name);
        cc.tp = c->tp;
        cc.dp = dp;
        cc.zero1 = c->zero1;
        if (!rc)
            rc = resume(c, world, &u, &cc, r, &start, err);
        if (!rc && c->ckpt_dir)
            rc = ckpt_writer_create(&cc, world, &u.writer, err);
    }
    long end = c->stop_after > 0 && c->stop_after < c->steps ? c->stop_after : c->steps;
    long n_steps = end > start ? end - start : 0;
    r->world = world->size;
    r->tp = c->tp;
    r->dp = dp;
    r->grad_accum = accum;
    r->first_step = start;
    r->tokens_per_step = (double)accum * dp * mb_tokens;
    snprintf(r->data_source, sizeof r->data_source, "%s", u.data.source);
    r->data_tokens = (long)u.data.n;
    if (!rc) {
        r->losses = calloc((size_t)n_steps + 1, sizeof *r->losses);
        r->grad_norms = calloc((size_t)n_steps + 1, sizeof *r->grad_norms);
        r->step_s = calloc((size_t)n_steps + 1, sizeof *r->step_s);
        if (!r->losses || !r->grad_norms || !r->step_s)
            rc = err_set(err, ERR_RUNTIME, "out of memory");
    }
    mon_init(&r->monitor, c->predicted_tokens_per_s);
    model_flops_t mf;
    model_flops(c->model, c->seq_len, &mf);
    r->model_flops_per_step = mf.model_per_token * r->tokens_per_step;
    int global = accum * dp * c->micro_batch;
    step_times_t sum_times = {0, 0, 0, 0, 0};
    double sum_step = 0;
    long measured = 0;
    for (long step = start; step < end && !rc; step++) {
        if (step == c->fail_at_step && world->rank == c->fail_rank && c->fail)
            c->fail(c->fail_ctx, step, world->rank);
        double t0 = clock_now_s();
        step_times_t t = {0, 0, 0, 0, 0};
        double loss_sum = 0;
        rc = c->backend->zero_grads(u.backend, err);
        for (int j = 0; j < accum && !rc; j++) {
            for (int i = 0; i < c->micro_batch; i++) {
                int g = dp_rank * (global / dp) + j * c->micro_batch + i;
                tok_sequence(&u.data, step, global, g, c->seq_len, u.inputs + (size_t)i * c->seq_len,
                             u.targets + (size_t)i * c->seq_len);
            }
            double loss = 0;
            rc = c->backend->micro_step(u.backend, u.inputs, u.targets, 1.0 / accum,
                                        j == accum - 1, &loss, &t, err);
            loss_sum += loss;
        }
        double norm = 0;
        if (!rc)
            rc = c->backend->reduce_grads(u.backend, &t, err);
        if (!rc && c->dump_grads && step == start && world->rank == 0)
            rc = dump_grads(c, u.backend, err);
        if (!rc)
            rc = c->backend->grad_norm(u.backend, &norm, &t, err);
        double lr = optim_lr(&c->optim, step);
        if (!rc)
            rc = c->backend->optimizer_step(u.backend, step + 1, lr,
                                            optim_clip_factor(&c->optim, norm), &t, err);
        /* the step's loss: mean over micro-batches and DP replicas */
        double loss = loss_sum / accum;
        if (!rc)
            rc = dist_allreduce_sum(&u.dp_group, &loss, 1, DIST_F64, err);
        loss /= dp;
        if (rc)
            break;
        double step_s = clock_now_s() - t0;
        /* checkpoints: commit a finished asynchronous save, start a new one */
        bool ckpt = false, saved = false;
        double blocking = 0;
        if (u.writer) {
            long committed;
            rc = ckpt_poll(u.writer, false, &committed, err);
            ckpt = committed >= 0;
            bool due = (c->ckpt_every > 0 && (step + 1) % c->ckpt_every == 0) || step + 1 == end;
            if (!rc && due) {
                ckpt_state_t s;
                rc = c->backend->state_to_host(u.backend, &s, err);
                s.step = step + 1;
                if (!rc)
                    rc = ckpt_save(u.writer, &s, &blocking, err);
                ckpt = saved = true;
                r->ckpt_blocking_s += blocking;
            }
        }
        long k = step - start;
        r->losses[k] = loss;
        r->grad_norms[k] = norm;
        r->step_s[k] = step_s;
        r->steps_run = k + 1;
        double tps = r->tokens_per_step / step_s;
        int alerts = mon_step(&r->monitor, step, loss, norm, tps, step_s);
        if (saved)
            alerts += mon_checkpoint(&r->monitor, step, blocking);
        if (k > 0 || n_steps == 1) {
            sum_step += step_s;
            sum_times.fwd_s += t.fwd_s;
            sum_times.bwd_s += t.bwd_s;
            sum_times.tp_s += t.tp_s;
            sum_times.dp_s += t.dp_s;
            sum_times.opt_s += t.opt_s;
            measured++;
        }
        if (c->on_step) {
            train_step_t ts = {step, c->steps, loss, norm, lr, step_s, tps, ckpt, alerts};
            c->on_step(c->on_step_ctx, &ts);
        }
        if (!isfinite(loss) || !isfinite(norm)) {
            r->stopped_on_nan = true;
            rc = err_set(err, ERR_RUNTIME,
                         "step %ld: the loss (%g) or gradient norm (%g) is not finite; training "
                         "stopped - resume from the last checkpoint with a lower --lr",
                         step, loss, norm);
        }
    }
    if (u.writer) {
        err_t cerr;
        int crc = ckpt_writer_close(u.writer, rc ? &cerr : err);
        u.writer = NULL;
        if (!rc)
            rc = crc;
    }
    if (measured > 0) {
        r->mean_step_s = sum_step / measured;
        r->mean.fwd_s = sum_times.fwd_s / measured;
        r->mean.bwd_s = sum_times.bwd_s / measured;
        r->mean.tp_s = sum_times.tp_s / measured;
        r->mean.dp_s = sum_times.dp_s / measured;
        r->mean.opt_s = sum_times.opt_s / measured;
        r->tokens_per_s = r->tokens_per_step / r->mean_step_s;
    }
    if (u.backend)
        c->backend->info(u.backend, &r->info);
    run_free(c, &u);
    return rc;
}
