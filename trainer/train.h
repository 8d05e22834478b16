/* train: the training loop of the reference trainer - data, micro-batches,
 * gradient reduction, clipping, AdamW, checkpoints, resume, alerts and the
 * timings that validate the simulator.
 *
 * One process per rank; ranks are laid out TP fastest, then DP (Megatron's
 * order): world rank = dp_rank x tp + tp_rank. TP ranks of a DP replica see
 * the same data; DP replica d reads sequences d x (global / dp) ... of each
 * step (tokens.h), so any DP degree trains on the same global batch as one
 * process does with gradient accumulation. The device is a backend
 * (backend.h): the CPU in fp32, or CUDA.
 *
 * The loop prints nothing; it reports each step through a callback and
 * fills a result the CLI prints or turns into JSON.
 */
#ifndef SCALEPLAN_TRAINER_TRAIN_H
#define SCALEPLAN_TRAINER_TRAIN_H

#include <stdbool.h>
#include <stdint.h>

#include "common/dist.h"
#include "common/error.h"
#include "models/model.h"
#include "trainer/backend.h"
#include "trainer/checkpoint.h"
#include "trainer/monitor.h"
#include "trainer/optim.h"

/* One step, as the loop reports it. */
typedef struct {
    long step;          /* 0-based */
    long steps;         /* the run's total */
    double loss;        /* mean over the global batch */
    double grad_norm;   /* before clipping */
    double lr;
    double step_s;
    double tokens_per_s;
    bool checkpointed;  /* a save started or finished at this step */
    int new_alerts;     /* alerts raised at this step (see the monitor) */
} train_step_t;

typedef struct {
    const model_t *model;
    const backend_ops_t *backend;
    int tp;                /* dp = world size / tp */
    int micro_batch, seq_len, global_batch; /* global batch in sequences */
    long steps;            /* optimizer steps to reach (resumed runs continue to it) */
    long stop_after;       /* stop (with a checkpoint) after this many steps; 0 = at steps.
                              The schedule still runs to steps, as when a job is preempted */
    uint64_t seed;
    const char *data_path; /* NULL: the built-in corpus */
    size_t builtin_bytes;  /* size of the built-in corpus */
    optim_config_t optim;
    bool zero1, overlap, bf16;
    double bucket_bytes;
    /* checkpoints (dir NULL = none) */
    const char *ckpt_dir;
    int ckpt_every;        /* steps between saves; 0 = only at the end */
    int ckpt_keep;
    bool ckpt_async;
    const char *resume;    /* NULL, "auto" or a step folder */
    bool ckpt_overwrite;   /* a fresh run may remove the folder's checkpoints */
    bool allow_changes;    /* resume although the run's settings differ */
    /* collectives: a wait longer than this fails naming the ranks that did
     * not arrive (dist_watchdog; NCCL communicators are aborted); 0 = none */
    double collective_timeout_s;
    /* failure injection: rank fail_rank calls fail() at the start of step
     * fail_at_step (fail_at_step < 0: never) */
    long fail_at_step;
    int fail_rank;
    void (*fail)(void *ctx, long step, int rank);
    void *fail_ctx;
    /* monitoring */
    double predicted_tokens_per_s; /* 0 = no throughput alert */
    const char *dump_grads;        /* write step 1's gradients here (rank 0), or NULL */
    void (*on_step)(void *ctx, const train_step_t *s);
    void *on_step_ctx;
    /* a line the user must see whatever --quiet says (rank 0 only): no
     * usable checkpoint to resume from, settings changed on resume */
    void (*on_notice)(void *ctx, const char *line);
    void *on_notice_ctx;
} train_config_t;

typedef struct {
    int world, tp, dp, grad_accum;
    long first_step;       /* 0, or the checkpoint step resumed from */
    long steps_run;
    double *losses, *grad_norms, *step_s; /* heap, steps_run each */
    /* means over the measured steps (all but the first when there are
     * several: it includes one-time warm-up) */
    double mean_step_s;
    step_times_t mean;     /* fwd, bwd, tp, dp, opt per step */
    double ckpt_blocking_s; /* total */
    double tokens_per_step;
    double tokens_per_s;
    double model_flops_per_step;
    backend_info_t info;   /* memory and device */
    monitor_t monitor;
    ckpt_resume_info_t resume; /* resume.step -1: started fresh */
    bool resume_found_none;  /* --resume found no usable checkpoint */
    bool stopped_on_nan;   /* training stopped: loss or gradients not finite */
    char *data_source;     /* heap: the data's file path, or "built-in corpus" */
    long data_tokens;
} train_result_t;

/* Sensible defaults: micro-batch 4, sequence 128 (or the model's limit),
 * global batch = micro-batch, 20 steps, seed 1, built-in corpus of 1 MiB,
 * GPT-3-style AdamW (optim_defaults), overlap on, 25 MB buckets, keep 3
 * checkpoints, no failure injection, a 5-minute collective watchdog. */
void train_defaults(train_config_t *c);

/* Run. world is the job (dist_start; its watchdog, if any, is set by the
 * caller with dist_watchdog). ERR_INPUT for a configuration that cannot run
 * (batch does not split over DP x micro-batch, TP does not divide the
 * world, --stop-after without a checkpoint folder, bad data, a checkpoint
 * of another run, architecture or with other settings, a fresh run into a
 * folder holding checkpoints, a folder another run holds (its lock, held
 * until train_run returns), a checkpoint folder too long for PATH_MAX),
 * ERR_RUNTIME for failures while running (a NaN loss stops
 * the run with ERR_RUNTIME after recording it; a collective past the
 * watchdog's timeout). A run that resumes and writes checkpoints first
 * moves the newer step folders of an abandoned timeline aside
 * (ckpt_retire_newer), said through on_notice. Free r with
 * train_result_free (also after an error). */
int train_run(const train_config_t *c, const dist_group_t *world, train_result_t *r, err_t *err);
void train_result_free(train_result_t *r);

#endif
