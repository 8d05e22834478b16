/* step: one training step, simulated event by event.
 *
 * The builder turns (model, layout, cluster, profile) into tasks for one
 * representative GPU of every pipeline stage (TP, CP and DP peers do the
 * same work at the same time, so the cost does not grow with DP), on four
 * streams per stage: compute, pipeline sends, data-parallel communication
 * and a spare; plus one global stream for the end-of-step synchronisation.
 * The pipeline schedule's order, the transfers between stages, gradient
 * buckets reduced as the last backward produces them, the optimizer and
 * the parameter all-gather all become tasks; the engine (sim/engine.h)
 * times them; the critical stage's compute timeline is then read back into
 * a breakdown whose parts are exposed time and sum to the step time.
 * Stragglers add the expected wait for the slowest of n GPUs.
 */
#ifndef SCALEPLAN_SIM_STEP_H
#define SCALEPLAN_SIM_STEP_H

#include <stdbool.h>

#include "common/error.h"
#include "models/memory.h"
#include "sim/costs.h"

typedef enum {
    BD_COMPUTE = 0,
    BD_RECOMPUTE,
    BD_TP_COMM,
    BD_CP_COMM,
    BD_EP_COMM,       /* exposed MoE dispatch and combine (all-to-all) */
    BD_MOE_IMBALANCE, /* experts' wait for the busiest EP rank */
    BD_HOST,      /* the GPU waiting for the host to issue kernels (frameworks/host.h) */
    BD_PP_COMM,
    BD_PP_BUBBLE,
    BD_DP_COMM,
    BD_OPTIMIZER,
    BD_OFFLOAD,   /* exposed host transfers of offloaded state (sim/offload.h) */
    BD_STRAGGLER,
    BD_OTHER,
    BD_COUNT
} sim_bd_t;

/* JSON/table names: compute, recompute, tp_comm, cp_comm, ep_comm,
 * moe_imbalance, host_bound, pp_comm, pp_bubble, dp_comm, optimizer, offload,
 * straggler, other. */
const char *sim_bd_name(sim_bd_t b);

/* Task kinds on the timeline (for traces and analysis). */
typedef enum {
    TASK_FWD = 0,    /* forward of a chunk (or of one layer) for one micro-batch */
    TASK_BWD,        /* backward, recompute included */
    TASK_SEND,       /* activation or gradient to the neighbouring stage */
    TASK_DP,         /* gradient bucket reduction */
    TASK_EMBED_SYNC, /* tied-embedding gradient between first and last stage */
    TASK_SYNC,       /* end-of-step synchronisation (gradient norm) */
    TASK_OPTIMIZER,
    TASK_PARAM_GATHER,
    TASK_OFFLOAD,    /* gradients to the host / parameters back (optimizer offload) */
    TASK_WGRAD,      /* weight gradient split off a backward (zero-bubble schedules) */
    TASK_FWD_BWD,    /* a forward and another micro-batch's backward run together */
    TASK_KIND_COUNT
} sim_task_kind_t;

typedef struct {
    double step_time_s;
    double breakdown_s[BD_COUNT]; /* exposed seconds; they sum to step_time_s */
    double tokens_per_step;
    double tokens_per_s;
    double model_flops_per_step, hw_flops_per_step;
    double model_tflops_per_gpu, hardware_tflops_per_gpu;
    double mfu, hfu;            /* against the dense bf16 (fp16) peak */
    model_memory_t memory;      /* peak pipeline stage */
    double capacity_gib;
    double host_gib, host_capacity_gib; /* offload's host memory per GPU and the
                                           GPU's share of its node; 0 without */
    bool fits;                  /* GPU memory, and host memory with offload */
    double offload_transfer_s;  /* host transfers of one step on the critical
                                   stage, hidden or not (offload only) */
    double offload_transfer_gb; /* their volume, both directions, GB per GPU */
    int critical_stage;         /* stage whose timeline the breakdown reads */
    int tasks;
    long events;
    double bubble_fraction;     /* pp_bubble over the stage's busy compute time */
    step_costs_t costs;
} sim_result_t;

typedef struct sim_ctx sim_ctx_t;

/* A reusable simulation context (engine and scratch space). NULL on OOM. */
sim_ctx_t *sim_ctx_create(void);
void sim_ctx_destroy(sim_ctx_t *ctx);

/* The event simulation builds every forward and backward pass of every
 * micro-batch on every stage (and, with layer events, every layer of it):
 * memory and time grow with them. A step of more than SIM_MAX_TASKS (about
 * 50 MB of simulator state) or more than SIM_MAX_MICRO_BATCHES
 * micro-batches per pipeline is refused rather than built. Real layouts
 * stay far below: Llama 3 405B on 16,384 GPUs is 512 passes. */
#define SIM_MAX_TASKS (1L << 18)
#define SIM_MAX_MICRO_BATCHES 65535 /* (a task's tag holds 16 bits of it) */

/* The tasks the step of in would build (passes, or passes x layers with
 * layer events); 0 when the layout has no pipeline yet. */
long sim_step_tasks(const sim_input_t *in);

/* Whether the step of in is within the simulator's limits; ERR_INPUT
 * naming --global-batch otherwise. */
int sim_check_size(const sim_input_t *in, err_t *err);

/* Simulate one step. ERR_INPUT for inconsistent inputs (see sim_costs) and
 * for a step beyond the simulator's limits (sim_check_size, refused before
 * anything is allocated), ERR_RUNTIME on OOM or an internal scheduling
 * failure. */
int sim_run_step(sim_ctx_t *ctx, const sim_input_t *in, sim_result_t *out, err_t *err);

/* The same with the pieces already priced (sim_costs), e.g. adjusted by a
 * test or reused across runs. */
int sim_run_step_costs(sim_ctx_t *ctx, const sim_input_t *in, const step_costs_t *costs,
                       sim_result_t *out, err_t *err);

/* Write the last run's timeline as Chrome/Perfetto trace JSON (one process
 * per pipeline stage, one thread per stream). */
int sim_write_trace(const sim_ctx_t *ctx, const char *path, err_t *err);

/* One task of the last run's timeline. */
typedef struct {
    int stage;        /* pipeline stage (pp for the global stream) */
    int stream;       /* 0 compute, 1 pipeline sends, 2 DP communication */
    sim_task_kind_t kind;
    int mb, chunk;    /* micro-batch and model chunk (passes only) */
    double start_s, end_s;
} sim_event_t;

/* The last run's tasks in start order; *events is a heap array the
 * caller frees. ERR_RUNTIME on OOM. */
int sim_timeline(const sim_ctx_t *ctx, sim_event_t **events, int *n, err_t *err);

const char *sim_task_kind_name(sim_task_kind_t k);

/* Memory options: reserved bytes and fragmentation from the profile, the
 * loss's logit bytes from the framework options. */
void sim_memory_opts(const profile_t *p, const sim_options_t *opt, memory_opts_t *o);

/* The most model TFLOP/s per GPU a run of this configuration can reach:
 * the GPU's dense peak in the fastest type its precision computes in (fp4
 * for the fp4 recipes, fp8 for the fp8 ones, else bf16 or fp16); 0 when
 * the catalog lists none. A measurement above it is not a measurement of
 * this run. */
double sim_ceiling_tflops(const sim_input_t *in);

/* The model TFLOP/s per GPU a step of step_s seconds of this configuration
 * implies (its model FLOPs over the GPUs and the time). */
double sim_implied_tflops(const sim_input_t *in, double step_s);

#endif
