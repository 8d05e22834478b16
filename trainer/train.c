#include "trainer/train.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/checksum.h"
#include "common/clock.h"
#include "common/fileio.h"
#include "common/strfmt.h"
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
    c->collective_timeout_s = 300;
}

void train_result_free(train_result_t *r)
{
    ckpt_resume_info_free(&r->resume);
    free(r->data_source);
    free(r->losses);
    free(r->grad_norms);
    free(r->step_s);
    memset(r, 0, sizeof *r);
}

/* Everything one run holds, freed in one place (run_free). */
typedef struct {
    dist_group_t tp_group, dp_group;
    bool groups;
    int dp, accum;           /* data-parallel replicas, micro-batches per step */
    int tp_rank, dp_rank;
    int global;              /* sequences per step */
    size_t mb_tokens;        /* tokens per micro-batch */
    tok_data_t data;
    void *backend;
    ckpt_config_t cc;
    runlock_t *lock;         /* held on the checkpoint folder while the run writes there */
    ckpt_writer_t *writer;
    int32_t *inputs, *targets;
    long start, end;         /* steps [start, end) run here */
    /* sums over the measured steps, for the means */
    step_times_t sum_times;
    double sum_step;
    long measured;
} run_t;

static void run_free(const train_config_t *c, run_t *u)
{
    if (u->backend)
        c->backend->destroy(u->backend);
    ckpt_writer_destroy(u->writer);
    ckpt_unlock(u->lock); /* after the writer: no save may land unlocked */
    ckpt_config_free(&u->cc);
    tok_free(&u->data);
    free(u->inputs);
    free(u->targets);
    if (u->groups) {
        dist_group_free(&u->tp_group);
        dist_group_free(&u->dp_group);
    }
}

static void notice(const train_config_t *c, const dist_group_t *world, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void notice(const train_config_t *c, const dist_group_t *world, const char *fmt, ...)
{
    if (!c->on_notice || world->rank != 0)
        return;
    va_list ap;
    va_start(ap, fmt);
    char *line = str_vprintf(fmt, ap);
    va_end(ap);
    /* out of memory: the format at least says which notice was lost */
    c->on_notice(c->on_notice_ctx, line ? line : fmt);
    free(line);
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
    int rc;
    if ((c->ckpt_dir && (rc = ckpt_check_path(c->ckpt_dir, "--checkpoint-dir", err))) ||
        (c->resume && strcmp(c->resume, "auto") != 0 &&
         (rc = ckpt_check_path(c->resume, "--resume-from", err))))
        return rc;
    /* stopping early is for resuming later: without a folder it would
     * train and keep nothing */
    if (c->stop_after > 0 && !c->ckpt_dir)
        return err_setf(err, ERR_INPUT, NULL, "--stop-after", "needs --checkpoint-dir");
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
    char *text = NULL;
    for (int i = 0; !rc && i < m.n_tensors; i++)
        if (str_appendf(&text, "%s %zu %zu\n", m.tensors[i].name, m.tensors[i].offset,
                        m.tensors[i].size) != 0)
            rc = err_set(err, ERR_RUNTIME, "out of memory");
    gpt_free(&m);
    char *path = rc ? NULL : str_printf("%s.tensors", c->dump_grads);
    if (!rc && !path)
        rc = err_set(err, ERR_RUNTIME, "out of memory");
    if (!rc)
        rc = fileio_write_atomic(path, text ? text : "", text ? strlen(text) : 0, err);
    free(path);
    free(text);
    return rc;
}

/* ------------------------------------------------------------ set-up */

/* The configuration's shape and this rank's TP and DP groups. */
static int setup_groups(const train_config_t *c, const dist_group_t *world, run_t *u, err_t *err)
{
    int rc = check_config(c, world, &u->dp, &u->accum, err);
    if (rc)
        return rc;
    u->tp_rank = world->rank % c->tp;
    u->dp_rank = world->rank / c->tp;
    u->global = u->accum * u->dp * c->micro_batch;
    u->mb_tokens = (size_t)c->micro_batch * c->seq_len;
    if ((rc = dist_split(world, u->dp_rank, u->tp_rank, &u->tp_group, err)))
        return rc;
    if ((rc = dist_split(world, u->tp_rank, u->dp_rank, &u->dp_group, err))) {
        dist_group_free(&u->tp_group);
        return rc;
    }
    u->groups = true;
    return ERR_OK;
}

/* The tokens, checked against the model, and one micro-batch's buffers. */
static int load_data(const train_config_t *c, run_t *u, err_t *err)
{
    int rc = c->data_path ? tok_load(c->data_path, &u->data, err)
                          : tok_builtin(c->builtin_bytes, c->seed, &u->data, err);
    if (!rc)
        rc = tok_check(&u->data, c->seq_len, c->model->vocab, err);
    if (!rc && (!(u->inputs = malloc(u->mb_tokens * sizeof *u->inputs)) ||
                !(u->targets = malloc(u->mb_tokens * sizeof *u->targets))))
        rc = err_set(err, ERR_RUNTIME, "out of memory");
    return rc;
}

static int start_backend(const train_config_t *c, const dist_group_t *world, run_t *u, err_t *err)
{
    backend_config_t bc = {c->model, c->tp, u->dp, world, &u->tp_group, &u->dp_group,
                           c->micro_batch, c->seq_len, c->seed, c->zero1, c->overlap,
                           c->bucket_bytes, c->bf16, 0, c->optim, c->collective_timeout_s};
    return c->backend->create(&bc, &u->backend, err);
}

/* ------------------------------------------------------------ checkpoints */

/* Every field of model_t that defines the architecture the trainer builds
 * (and those it refuses, so that a later trainer that builds them cannot
 * mistake one model for another): recorded in the checkpoint and required
 * to match on resume. The same name and parameter count is not enough: 4
 * heads of 8 and 8 heads of 4 hold the same weights in other roles. */
static int checkpoint_architecture(ckpt_config_t *cc, const model_t *m, err_t *err)
{
    static const char *const NORMS[] = {"layernorm", "rmsnorm"};
    static const char *const POS[] = {"learned", "rope", "none"};
    bool gated = m->mlp == MODEL_MLP_SWIGLU;
    const struct { const char *name; int value; } ints[] = {
        {"n_layers", m->n_layers}, {"hidden", m->hidden}, {"n_heads", m->n_heads},
        {"n_kv_heads", m->n_kv_heads}, {"head_dim", m->head_dim}, {"ffn", m->ffn},
        {"vocab", m->vocab}, {"max_seq", m->max_seq}, {"pos_extra_rows", m->pos_extra_rows},
        {"norms_per_layer", model_norms_per_layer(m)}, {"qk_norm", (int)m->qk_norm},
        {"window", m->window}, {"window_layers", m->window_layers},
        {"n_experts", m->moe.n_experts}, {"kv_lora_rank", m->mla.kv_lora_rank}, {"n_mtp", m->n_mtp},
        {"tied_embeddings", m->tied_embeddings}, {"qkv_bias", m->qkv_bias},
        {"out_bias", m->out_bias}, {"mlp_bias", m->mlp_bias},
        {"norm_weightless", m->norm_weightless}, {"attn_sinks", m->attn_sinks},
    };
    int rc;
    if ((rc = ckpt_arch(cc, "family", err, "%s", model_family_name(m->family))) ||
        (rc = ckpt_arch(cc, "norm", err, "%s", NORMS[m->norm == MODEL_NORM_RMSNORM])) ||
        (rc = ckpt_arch(cc, "mlp", err, "%s", gated ? "gated" : "plain")) ||
        (rc = ckpt_arch(cc, "activation", err, "%s", model_act_name(m->act, gated))) ||
        (rc = ckpt_arch(cc, "position", err, "%s", POS[m->pos <= MODEL_POS_NONE ? m->pos : 2])))
        return rc;
    for (size_t i = 0; i < sizeof ints / sizeof ints[0]; i++)
        if ((rc = ckpt_arch(cc, ints[i].name, err, "%d", ints[i].value)))
            return rc;
    if ((rc = ckpt_arch(cc, "norm_eps", err, "%.17g", m->norm_eps)) ||
        (rc = ckpt_arch(cc, "rope_theta", err, "%.17g", m->rope_theta)) ||
        (rc = ckpt_arch(cc, "rope_fraction", err, "%.17g", m->rope_fraction)))
        return rc;
    return ERR_OK;
}

/* What identifies the run in its checkpoints: the model and layout (whose
 * shards must fit) and the settings a resumed run must share to continue
 * the same run. */
static int checkpoint_identity(const train_config_t *c, run_t *u, err_t *err)
{
    ckpt_config_t *cc = &u->cc;
    ckpt_state_t s;
    int rc = c->backend->host_buffers(u->backend, &s, &cc->n_params, &cc->n_opt, err);
    if (rc)
        return rc;
    cc->dir = c->ckpt_dir ? c->ckpt_dir : ".";
    cc->keep = c->ckpt_keep;
    cc->async = c->ckpt_async;
    _Static_assert(sizeof cc->model >= sizeof c->model->name, "a model's name fits");
    snprintf(cc->model, sizeof cc->model, "%s", c->model->name);
    cc->tp = c->tp;
    cc->dp = u->dp;
    cc->zero1 = c->zero1;
    cc->allow_changes = c->allow_changes;
    if ((rc = checkpoint_architecture(cc, c->model, err)))
        return rc;
    const optim_config_t *o = &c->optim;
    uint32_t crc = checksum_crc32(0, u->data.tokens, u->data.n * sizeof *u->data.tokens);
    if ((rc = ckpt_setting(cc, "seed", err, "%llu", (unsigned long long)c->seed)) ||
        (rc = ckpt_setting(cc, "data", err, "%s", u->data.source)) ||
        (rc = ckpt_setting(cc, "data_tokens", err, "%zu", u->data.n)) ||
        (rc = ckpt_setting(cc, "data_crc32", err, "%08x", crc)) ||
        (rc = ckpt_setting(cc, "micro_batch", err, "%d", c->micro_batch)) ||
        (rc = ckpt_setting(cc, "global_batch", err, "%d", u->global)) ||
        (rc = ckpt_setting(cc, "seq_len", err, "%d", c->seq_len)) ||
        (rc = ckpt_setting(cc, "steps", err, "%ld", c->steps)) ||
        (rc = ckpt_setting(cc, "lr", err, "%.17g", o->lr)) ||
        (rc = ckpt_setting(cc, "min_lr", err, "%.17g", o->min_lr)) ||
        (rc = ckpt_setting(cc, "warmup_steps", err, "%d", o->warmup_steps)) ||
        (rc = ckpt_setting(cc, "weight_decay", err, "%.17g", o->weight_decay)) ||
        (rc = ckpt_setting(cc, "grad_clip", err, "%.17g", o->grad_clip)))
        return rc;
    return ERR_OK;
}

/* Resume from a checkpoint when asked; u->start is the step to run next. */
static int resume(const train_config_t *c, const dist_group_t *world, run_t *u,
                  train_result_t *r, err_t *err)
{
    u->start = 0;
    ckpt_state_t s;
    size_t n_params, n_opt;
    int rc = c->backend->host_buffers(u->backend, &s, &n_params, &n_opt, err);
    if (rc)
        return rc;
    if ((rc = ckpt_resume(&u->cc, world, c->resume, &s, &r->resume, err)))
        return rc;
    if (r->resume.step < 0) {
        r->resume_found_none = true;
        notice(c, world, "no usable checkpoint in %s: starting at step 0%s", u->cc.dir,
               r->resume.n_notes > 0 ? " (every checkpoint there is damaged or unfinished)" : "");
        /* nothing usable: what a damaged checkpoint left in the buffers goes */
        return r->resume.n_notes > 0 ? c->backend->reset(u->backend, err) : ERR_OK;
    }
    if (r->resume.changed)
        notice(c, world, "resuming %s with changed settings (--allow-changes): %s",
               r->resume.path, r->resume.changed);
    u->start = r->resume.step;
    return c->backend->state_from_host(u->backend, err);
}

/* A run that writes checkpoints after a resume continues the timeline of
 * the checkpoint it resumed from: newer step folders of the folder (an
 * abandoned timeline) are moved aside, said in one line. */
static int fence_timeline(const train_config_t *c, const dist_group_t *world, run_t *u,
                          const train_result_t *r, err_t *err)
{
    if (!c->ckpt_dir || r->resume.step < 0)
        return ERR_OK;
    char *note = NULL;
    int rc = ckpt_retire_newer(&u->cc, world, r->resume.step, r->resume.path, &note, err);
    if (!rc && note)
        notice(c, world, "%s", note);
    free(note);
    return rc;
}

/* Checkpoints: the run's identity, the folder's lock, then a resume (and
 * the fence of an abandoned timeline) or the fresh-run check of the
 * folder, then the writer. */
static int setup_checkpoints(const train_config_t *c, const dist_group_t *world, run_t *u,
                             train_result_t *r, err_t *err)
{
    if (!c->ckpt_dir && !c->resume)
        return ERR_OK;
    int rc = checkpoint_identity(c, u, err);
    if (!rc && c->ckpt_dir)
        rc = ckpt_lock(&u->cc, world, &u->lock, err);
    if (!rc && c->resume && !(rc = resume(c, world, u, r, err)))
        rc = fence_timeline(c, world, u, r, err);
    else if (!rc && !c->resume)
        rc = ckpt_check_fresh(&u->cc, world, c->ckpt_overwrite, err);
    if (!rc && c->ckpt_dir)
        rc = ckpt_writer_create(&u->cc, world, &u->writer, err);
    return rc;
}

/* The result's shape and its per-step arrays. */
static int prepare_result(const train_config_t *c, const dist_group_t *world, run_t *u,
                          train_result_t *r, err_t *err)
{
    u->end = c->stop_after > 0 && c->stop_after < c->steps ? c->stop_after : c->steps;
    long n_steps = u->end > u->start ? u->end - u->start : 0;
    r->world = world->size;
    r->tp = c->tp;
    r->dp = u->dp;
    r->grad_accum = u->accum;
    r->first_step = u->start;
    r->tokens_per_step = (double)u->accum * u->dp * u->mb_tokens;
    if (!(r->data_source = str_printf("%s", u->data.source)))
        return err_set(err, ERR_RUNTIME, "out of memory");
    r->data_tokens = (long)u->data.n;
    mon_init(&r->monitor, c->predicted_tokens_per_s);
    model_flops_t mf;
    model_flops(c->model, c->seq_len, &mf);
    r->model_flops_per_step = mf.model_per_token * r->tokens_per_step;
    r->losses = calloc((size_t)n_steps + 1, sizeof *r->losses);
    r->grad_norms = calloc((size_t)n_steps + 1, sizeof *r->grad_norms);
    r->step_s = calloc((size_t)n_steps + 1, sizeof *r->step_s);
    if (!r->losses || !r->grad_norms || !r->step_s)
        return err_set(err, ERR_RUNTIME, "out of memory");
    return ERR_OK;
}

/* ------------------------------------------------------------ one step */

/* Forward and backward over the step's micro-batches, the DP reduction,
 * the norm, the optimizer and the step's loss (mean over the global batch). */
static int compute_step(const train_config_t *c, const dist_group_t *world, run_t *u, long step,
                        train_step_t *ts, step_times_t *t, err_t *err)
{
    double loss_sum = 0;
    int rc = c->backend->zero_grads(u->backend, err);
    for (int j = 0; j < u->accum && !rc; j++) {
        for (int i = 0; i < c->micro_batch; i++) {
            int g = u->dp_rank * (u->global / u->dp) + j * c->micro_batch + i;
            tok_sequence(&u->data, step, u->global, g, c->seq_len,
                         u->inputs + (size_t)i * c->seq_len, u->targets + (size_t)i * c->seq_len);
        }
        double loss = 0;
        rc = c->backend->micro_step(u->backend, u->inputs, u->targets, 1.0 / u->accum,
                                    j == u->accum - 1, &loss, t, err);
        loss_sum += loss;
    }
    if (!rc)
        rc = c->backend->reduce_grads(u->backend, t, err);
    if (!rc && c->dump_grads && step == u->start && world->rank == 0)
        rc = dump_grads(c, u->backend, err);
    if (!rc)
        rc = c->backend->grad_norm(u->backend, &ts->grad_norm, t, err);
    ts->lr = optim_lr(&c->optim, step);
    if (!rc)
        rc = c->backend->optimizer_step(u->backend, step + 1, ts->lr,
                                        optim_clip_factor(&c->optim, ts->grad_norm), t, err);
    ts->loss = loss_sum / u->accum;
    if (!rc)
        rc = dist_allreduce_sum(&u->dp_group, &ts->loss, 1, DIST_F64, err);
    ts->loss /= u->dp;
    return rc;
}

/* After a step: commit a finished asynchronous save, start a new one when
 * due. *blocking is the time the step was held, *saved whether a save
 * started. */
static int step_checkpoint(const train_config_t *c, run_t *u, long step, train_result_t *r,
                           train_step_t *ts, bool *saved, double *blocking, err_t *err)
{
    *saved = false;
    *blocking = 0;
    if (!u->writer)
        return ERR_OK;
    long committed;
    int rc = ckpt_poll(u->writer, false, &committed, err);
    ts->checkpointed = committed >= 0;
    bool due = (c->ckpt_every > 0 && (step + 1) % c->ckpt_every == 0) || step + 1 == u->end;
    if (rc || !due)
        return rc;
    ckpt_state_t s;
    rc = c->backend->state_to_host(u->backend, &s, err);
    s.step = step + 1;
    if (!rc)
        rc = ckpt_save(u->writer, &s, blocking, err);
    ts->checkpointed = *saved = true;
    r->ckpt_blocking_s += *blocking;
    return rc;
}

/* Record a finished step: its figures, the monitor's alerts, the sums for
 * the means, the callback; a loss or norm that is not finite stops. */
static int record_step(const train_config_t *c, run_t *u, long step, train_result_t *r,
                       train_step_t *ts, const step_times_t *t, bool saved, double blocking,
                       err_t *err)
{
    long k = step - u->start;
    long n_steps = u->end - u->start;
    r->losses[k] = ts->loss;
    r->grad_norms[k] = ts->grad_norm;
    r->step_s[k] = ts->step_s;
    r->steps_run = k + 1;
    ts->tokens_per_s = r->tokens_per_step / ts->step_s;
    ts->new_alerts = mon_step(&r->monitor, step, ts->loss, ts->grad_norm, ts->tokens_per_s,
                              ts->step_s);
    if (saved)
        ts->new_alerts += mon_checkpoint(&r->monitor, step, blocking);
    if (k > 0 || n_steps == 1) { /* the first of several includes warm-up */
        u->sum_step += ts->step_s;
        u->sum_times.fwd_s += t->fwd_s;
        u->sum_times.bwd_s += t->bwd_s;
        u->sum_times.tp_s += t->tp_s;
        u->sum_times.dp_s += t->dp_s;
        u->sum_times.opt_s += t->opt_s;
        u->measured++;
    }
    if (c->on_step)
        c->on_step(c->on_step_ctx, ts);
    if (!isfinite(ts->loss) || !isfinite(ts->grad_norm)) {
        r->stopped_on_nan = true;
        return err_set(err, ERR_RUNTIME,
                       "step %ld: the loss (%g) or gradient norm (%g) is not finite; training "
                       "stopped - resume from the last checkpoint with a lower --lr "
                       "(--allow-changes)",
                       step, ts->loss, ts->grad_norm);
    }
    return ERR_OK;
}

/* The step loop. */
static int run_steps(const train_config_t *c, const dist_group_t *world, run_t *u,
                     train_result_t *r, err_t *err)
{
    int rc = ERR_OK;
    for (long step = u->start; step < u->end && !rc; step++) {
        if (step == c->fail_at_step && world->rank == c->fail_rank && c->fail)
            c->fail(c->fail_ctx, step, world->rank);
        double t0 = clock_now_s();
        step_times_t t = {0, 0, 0, 0, 0};
        train_step_t ts = {step, c->steps, 0, 0, 0, 0, 0, false, 0};
        if ((rc = compute_step(c, world, u, step, &ts, &t, err)))
            break;
        ts.step_s = clock_now_s() - t0;
        bool saved;
        double blocking;
        rc = step_checkpoint(c, u, step, r, &ts, &saved, &blocking, err);
        int rrc = record_step(c, u, step, r, &ts, &t, saved, blocking, rc ? NULL : err);
        if (!rc)
            rc = rrc;
    }
    return rc;
}

/* The means over the measured steps and the device's figures. */
static void finish_result(const train_config_t *c, const run_t *u, train_result_t *r)
{
    if (u->measured > 0) {
        r->mean_step_s = u->sum_step / u->measured;
        r->mean.fwd_s = u->sum_times.fwd_s / u->measured;
        r->mean.bwd_s = u->sum_times.bwd_s / u->measured;
        r->mean.tp_s = u->sum_times.tp_s / u->measured;
        r->mean.dp_s = u->sum_times.dp_s / u->measured;
        r->mean.opt_s = u->sum_times.opt_s / u->measured;
        r->tokens_per_s = r->tokens_per_step / r->mean_step_s;
    }
    if (u->backend)
        c->backend->info(u->backend, &r->info);
}

int train_run(const train_config_t *c, const dist_group_t *world, train_result_t *r, err_t *err)
{
    memset(r, 0, sizeof *r);
    r->resume.step = -1;
    run_t u;
    memset(&u, 0, sizeof u);
    int rc = setup_groups(c, world, &u, err);
    if (rc)
        return rc;
    if (!(rc = load_data(c, &u, err)) && !(rc = start_backend(c, world, &u, err)) &&
        !(rc = setup_checkpoints(c, world, &u, r, err)))
        rc = prepare_result(c, world, &u, r, err);
    if (!rc)
        rc = run_steps(c, world, &u, r, err);
    if (u.writer) {
        err_t cerr;
        int crc = ckpt_writer_close(u.writer, rc ? &cerr : err);
        u.writer = NULL;
        if (!rc)
            rc = crc;
    }
    finish_result(c, &u, r);
    run_free(c, &u);
    return rc;
}
