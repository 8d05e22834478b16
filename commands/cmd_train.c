/* scaleplan train: the reference trainer - real training steps whose
 * measured times validate the simulator (scaleplan validate). */
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "commands/args.h"
#include "commands/commands.h"
#include "commands/output.h"
#include "common/dist.h"
#include "common/json.h"
#include "common/units.h"
#include "models/layout.h"
#include "trainer/result.h"
#include "trainer/train.h"

static const cmd_opt_t own_opts[] = {
    {"--device", NULL, "cpu|cuda", "where to train (default cpu: fp32 with OpenMP)", CMD_WORD},
    {"--steps", NULL, "N", "optimizer steps to reach (default 20)", CMD_N(1, 100000000)},
    {"--micro-batch", "--micro-batch-size", "N", "sequences per micro-batch per rank (default 4)",
     CMD_N(1, 1 << 20)},
    {"--global-batch", "--global-batch-size", "N",
     "sequences per step over all ranks (default: micro-batch x DP)", CMD_N(1, 1 << 30)},
    {"--seq-len", "--seq-length", "N", "tokens per sequence (default 128, at most the model's)",
     CMD_N(1, 1 << 20)},
    {"--tp", "--tensor-model-parallel-size", "N", "tensor-parallel degree (ranks = TP x DP)",
     CMD_N(1, 4096)},
    {"--zero1", "--use-distributed-optimizer", NULL, "shard the optimizer state over DP (ZeRO-1)",
     CMD_WORD},
    {"--no-overlap", NULL, NULL, "reduce gradients after the backward instead of during it",
     CMD_WORD},
    {"--bucket-mb", NULL, "MB", "data-parallel gradient bucket (default 25)", CMD_X(1e-3, 1e6)},
    {"--lr", NULL, "X", "peak learning rate (default 6e-4)", CMD_X(0, 10)},
    {"--min-lr", NULL, "X", "learning rate at the end of the cosine (default lr / 10)",
     CMD_X(0, 10)},
    {"--warmup", NULL, "N", "linear warm-up steps (default 10, at most steps / 2)",
     CMD_N(0, 100000000)},
    {"--weight-decay", NULL, "X", "AdamW weight decay (default 0.1)", CMD_X(0, 10)},
    {"--grad-clip", NULL, "X", "clip the gradient norm to X, 0 = off (default 1.0)", CMD_X(0, 1e9)},
    {"--seed", NULL, "N", "initialisation and built-in corpus seed (default 1)",
     CMD_N(0, 9007199254740992.0)},
    {"--data", NULL, "FILE", "token file (SPTOKEN1) or any text file (byte-level); default: built-in corpus",
     CMD_WORD},
    {"--fp32", NULL, NULL, "cuda: compute in fp32 instead of bf16", CMD_WORD},
    {"--checkpoint-dir", NULL, "DIR", "save checkpoints here", CMD_WORD},
    {"--checkpoint-every", NULL, "N", "steps between checkpoints (default: only at the end)",
     CMD_N(0, 100000000)},
    {"--checkpoint-keep", NULL, "K", "checkpoints kept (default 3)", CMD_N(1, 1000000)},
    {"--async-checkpoint", NULL, NULL, "write checkpoints on a background thread", CMD_WORD},
    {"--resume", NULL, NULL, "continue from the newest valid checkpoint in --checkpoint-dir",
     CMD_WORD},
    {"--resume-from", NULL, "DIR", "continue from this checkpoint folder (step-NNNNNNNN)",
     CMD_WORD},
    {"--overwrite", NULL, NULL, "a fresh run: remove the checkpoints already in --checkpoint-dir",
     CMD_WORD},
    {"--allow-changes", NULL, NULL,
     "resume although seed, data, batch, sequence length, steps or LR schedule differ", CMD_WORD},
    {"--collective-timeout", NULL, "T",
     "stop when a collective waits this long, naming the ranks that did not arrive (default 5m)",
     CMD_KIND(CMD_DURATION, 1, 1e6)},
    {"--stop-after", NULL, "N", "save and stop after step N (the schedule still runs to --steps)",
     CMD_N(1, 100000000)},
    {"--fail-at-step", NULL, "N", "kill a rank at the start of step N (recovery testing)",
     CMD_N(1, 100000000)},
    {"--fail-rank", NULL, "R", "the rank --fail-at-step kills (default 0)", CMD_N(0, 1 << 24)},
    {"--fail-how", NULL, "kill|stop", "how --fail-at-step fails the rank: SIGKILL, or SIGSTOP (hung)",
     CMD_WORD},
    {"--expect-tokens-per-s", NULL, "X", "alert when throughput is under 80% of this",
     CMD_X(0, 1e15)},
    {"--dump-grads", NULL, "FILE", "write step 1's gradients (rank 0, float32) to FILE", CMD_WORD},
    {"--quiet", "-q", NULL, "no per-step lines on stderr", CMD_WORD},
};
static const cmd_group_t own_group = {"Train", own_opts, sizeof own_opts / sizeof own_opts[0]};

typedef struct {
    bool print;
    int rank;
} step_printer_t;

static void print_step(void *ctx, const train_step_t *s)
{
    const step_printer_t *p = ctx;
    if (!p->print || p->rank != 0)
        return;
    char tps[32];
    fprintf(stderr, "step %4ld/%ld  loss %.4f  grad norm %.3f  lr %.2e  %.3f s  %s tokens/s%s%s\n",
            s->step + 1, s->steps, s->loss, s->grad_norm, s->lr, s->step_s,
            units_fmt_count(s->tokens_per_s, tps, sizeof tps), s->checkpointed ? "  [checkpoint]" : "",
            s->new_alerts ? "  [alert]" : "");
}

/* --fail-at-step: die the way a crashed rank does, without cleanup, or
 * stop the way a hung one does (--fail-how stop: ctx not NULL). */
static void fail_now(void *ctx, long step, int rank)
{
    bool stop = ctx != NULL;
    fprintf(stderr, "scaleplan train: rank %d: %s on purpose at step %ld (--fail-at-step)\n",
            rank, stop ? "stopped" : "killed", step + 1);
    fflush(stderr);
    raise(stop ? SIGSTOP : SIGKILL);
}

/* Lines the user must see, --quiet or not (rank 0 calls it). */
static void print_notice(void *ctx, const char *line)
{
    (void)ctx;
    fprintf(stderr, "scaleplan train: %s\n", line);
}

static void print_text(const train_config_t *c, const train_result_t *r)
{
    char a[32];
    printf("%s on %s x %d (TP %d x DP %d), %s\n", c->model->display, r->info.device, r->world,
           r->tp, r->dp, c->backend->name);
    if (c->model->dropout > 0)
        printf("  dropout %g in the config is not applied: the reference trainer trains without it\n",
               c->model->dropout);
    if (r->resume.step >= 0)
        printf("  resumed from %s (step %ld)\n", r->resume.path, r->resume.step);
    for (int i = 0; i < r->resume.n_notes; i++)
        printf("  %s\n", r->resume.notes[i]);
    printf("  %ld steps of %s tokens (micro-batch %d x %d, %d micro-batches x %d replicas)\n",
           r->steps_run, units_fmt_count(r->tokens_per_step, a, sizeof a), c->micro_batch,
           c->seq_len, r->grad_accum, r->dp);
    if (r->steps_run == 0) {
        printf("  nothing to do: already at step %ld\n", r->first_step);
        return;
    }
    printf("  loss %.4f -> %.4f\n", r->losses[0], r->losses[r->steps_run - 1]);
    char f[32], bw[32], tp[32], dpx[32], op[32];
    printf("  step %s: forward %s, backward %s (TP comm %s), DP exposed %s, optimizer %s\n",
           units_fmt_duration(r->mean_step_s, a, sizeof a),
           units_fmt_duration(r->mean.fwd_s, f, sizeof f),
           units_fmt_duration(r->mean.bwd_s, bw, sizeof bw),
           units_fmt_duration(r->mean.tp_s, tp, sizeof tp),
           units_fmt_duration(r->mean.dp_s, dpx, sizeof dpx),
           units_fmt_duration(r->mean.opt_s, op, sizeof op));
    printf("  %s tokens/s", units_fmt_count(r->tokens_per_s, a, sizeof a));
    if (r->info.peak_tflops > 0)
        printf(", MFU %.1f%%", 100 * r->model_flops_per_step / r->mean_step_s / r->world / 1e12 /
                                   r->info.peak_tflops);
    printf("\n");
    for (int i = 0; i < r->monitor.n_alerts; i++)
        printf("  alert at step %ld: %s: %s\n", r->monitor.alerts[i].step + 1,
               r->monitor.alerts[i].kind, r->monitor.alerts[i].message);
}

/* The layout the run corresponds to, as the simulator describes layouts. */
static int run_layout(const train_config_t *c, int world, layout_t *l, err_t *err)
{
    layout_defaults(l);
    l->tp = c->tp;
    l->micro_batch = c->micro_batch;
    l->global_batch = c->global_batch > 0 ? c->global_batch : c->micro_batch * (world / c->tp);
    l->seq_len = c->seq_len;
    l->distributed_optimizer = c->zero1;
    l->precision = strcmp(c->backend->name, "cuda") == 0 && c->bf16 ? PRECISION_BF16
                                                                    : PRECISION_FP32;
    l->grad_bytes = 4;
    l->flash_attention = false; /* both paths keep the attention scores */
    return layout_finalize(l, c->model, world, err);
}

static int parse_config(const cmd_args_t *a, train_config_t *c, model_t *m, err_t *err)
{
    train_defaults(c);
    int rc = cmd_model(a, m, err);
    if (rc)
        return rc;
    c->model = m;
    const char *dev = cmd_get(a, "--device");
    if (dev && strcmp(dev, "cuda") == 0)
        c->backend = &BACKEND_CUDA;
    else if (dev && strcmp(dev, "cpu") != 0)
        return err_setf(err, ERR_INPUT, NULL, "--device", "must be cpu or cuda (got '%s')", dev);
    c->seq_len = m->max_seq < 128 ? m->max_seq : 128;
    int steps = (int)c->steps, warmup = -1;
    double bucket_mb = c->bucket_bytes / 1e6, min_lr = -1;
    long seed = 1;
    if ((rc = cmd_get_int(a, "--steps", &steps, err)) ||
        (rc = cmd_get_int(a, "--micro-batch", &c->micro_batch, err)) ||
        (rc = cmd_get_int(a, "--global-batch", &c->global_batch, err)) ||
        (rc = cmd_get_int(a, "--seq-len", &c->seq_len, err)) ||
        (rc = cmd_get_int(a, "--tp", &c->tp, err)) ||
        (rc = cmd_get_double(a, "--bucket-mb", &bucket_mb, err)) ||
        (rc = cmd_get_double(a, "--lr", &c->optim.lr, err)) ||
        (rc = cmd_get_double(a, "--min-lr", &min_lr, err)) ||
        (rc = cmd_get_int(a, "--warmup", &warmup, err)) ||
        (rc = cmd_get_double(a, "--weight-decay", &c->optim.weight_decay, err)) ||
        (rc = cmd_get_double(a, "--grad-clip", &c->optim.grad_clip, err)) ||
        (rc = cmd_get_long(a, "--seed", &seed, err)) ||
        (rc = cmd_get_int(a, "--checkpoint-every", &c->ckpt_every, err)) ||
        (rc = cmd_get_int(a, "--checkpoint-keep", &c->ckpt_keep, err)) ||
        (rc = cmd_get_int(a, "--fail-rank", &c->fail_rank, err)) ||
        (rc = cmd_get_double(a, "--expect-tokens-per-s", &c->predicted_tokens_per_s,
                             err)))
        return rc;
    int fail_at = 0, stop_after = 0;
    if ((rc = cmd_get_int(a, "--fail-at-step", &fail_at, err)) ||
        (rc = cmd_get_int(a, "--stop-after", &stop_after, err)))
        return rc;
    c->stop_after = stop_after;
    if (min_lr > c->optim.lr)
        return err_setf(err, ERR_INPUT, NULL, "--min-lr",
                        "%g is above the peak --lr %g: the cosine decays from --lr to --min-lr",
                        min_lr, c->optim.lr);
    if (c->seq_len > m->max_seq)
        return err_setf(err, ERR_INPUT, NULL, "--seq-len",
                        "%d is longer than the model's %d positions", c->seq_len, m->max_seq);
    c->steps = steps;
    c->seed = (uint64_t)seed;
    c->bucket_bytes = bucket_mb * 1e6;
    c->optim.total_steps = steps;
    c->optim.min_lr = min_lr >= 0 ? min_lr : c->optim.lr / 10;
    c->optim.warmup_steps = warmup >= 0 ? warmup : (steps / 2 < 10 ? steps / 2 : 10);
    c->zero1 = cmd_has(a, "--zero1");
    c->overlap = !cmd_has(a, "--no-overlap");
    c->bf16 = !cmd_has(a, "--fp32");
    c->data_path = cmd_get(a, "--data");
    c->ckpt_dir = cmd_get(a, "--checkpoint-dir");
    c->ckpt_async = cmd_has(a, "--async-checkpoint");
    c->resume = cmd_get(a, "--resume-from") ? cmd_get(a, "--resume-from")
                : cmd_has(a, "--resume")    ? "auto"
                                            : NULL;
    c->fail_at_step = fail_at > 0 ? fail_at - 1 : -1; /* the flag counts from 1 like the log */
    c->fail = fail_now;
    const char *how = cmd_get(a, "--fail-how");
    if (how && strcmp(how, "kill") != 0 && strcmp(how, "stop") != 0)
        return err_setf(err, ERR_INPUT, NULL, "--fail-how", "use kill or stop (got '%s')", how);
    c->fail_ctx = how && strcmp(how, "stop") == 0 ? (void *)c : NULL;
    c->ckpt_overwrite = cmd_has(a, "--overwrite");
    c->allow_changes = cmd_has(a, "--allow-changes");
    if ((rc = cmd_get_double(a, "--collective-timeout", &c->collective_timeout_s, err)))
        return rc;
    c->on_notice = print_notice;
    c->dump_grads = cmd_get(a, "--dump-grads");
    if (cmd_get(a, "--resume-from") && access(c->resume, F_OK) != 0)
        return err_setf(err, ERR_INPUT, NULL, "--resume-from", "no checkpoint folder '%s'",
                        c->resume);
    return ERR_OK;
}

static int run(const cmd_args_t *a, err_t *err)
{
    int rc = ERR_OK;
    train_config_t c;
    model_t m;
    if ((rc = parse_config(a, &c, &m, err)))
        return rc;
    dist_group_t world;
    if ((rc = dist_start(NULL, NULL, &world, err)))
        return rc;
    layout_t l;
    step_printer_t printer = {!cmd_has(a, "--quiet"), world.rank};
    c.on_step = print_step;
    c.on_step_ctx = &printer;
    train_result_t r;
    memset(&r, 0, sizeof r);
    if ((rc = dist_watchdog(&world, c.collective_timeout_s, err)) ||
        (rc = run_layout(&c, world.size, &l, err)))
        goto out;
    rc = train_run(&c, &world, &r, err);
    /* the report of a run that stopped on a NaN is still worth printing */
    if ((rc == ERR_OK || r.stopped_on_nan) && world.rank == 0) {
        if (cmd_machine_output(a)) {
            cJSON *j = train_result_json(&c, &r, &l, cmd_get(a, "--model"));
            err_t jerr;
            int jrc = j ? cmd_emit(a, j, NULL, &jerr)
                        : err_set(&jerr, ERR_RUNTIME, "out of memory building JSON");
            cJSON_Delete(j);
            if (!rc && jrc) {
                rc = jrc;
                *err = jerr;
            }
        } else {
            print_text(&c, &r);
        }
    }
out:
    train_result_free(&r);
    if (rc && world.size > 1) {
        /* the other ranks may wait in a collective for this one */
        fprintf(stderr, "scaleplan train: rank %d: %s\n", world.rank, err->msg);
        dist_abort(&world, rc);
    }
    dist_stop(&world);
    return rc;
}

static const cmd_group_t *const groups[] = {&CMD_MODEL_OPTS,
                                         &own_group,
                                         &CMD_OUTPUT_OPTS};

const cmd_command_t CMD_CMD_TRAIN = {
    "train",
    "train a model for real (CPU or CUDA, MPI) and measure its step",
    "scaleplan train --model M [--device cpu|cuda] [--steps N] [--tp N] "
                       "[--checkpoint-dir D] [--resume] [--json]\n"
                       "       mpirun -np N scaleplan train ...   (data and tensor parallel)",
    "Train a GPT- or Llama-style model for real and measure its step: the\n"
                       "reference whose times validate the simulator (scaleplan validate). The CPU\n"
                       "path trains in fp32 with OpenMP; CUDA in bf16 with fp32 master weights.\n"
                       "Under mpirun, ranks split into TP x DP (TP fastest). Without --data it\n"
                       "trains on a built-in corpus; any text file works (byte-level tokens).\n"
                       "Checkpoints are atomic and checksummed; --resume continues from the\n"
                       "newest valid one. --json prints the measured step in the schema of\n"
                       "scaleplan sim --json, plus losses, gradient norms and alerts.",
    groups,
    sizeof groups / sizeof groups[0],
    run,
    0,
};
