/* doubling: measured runs against the simulator, one run at a time and as a
 * ladder of doublings.
 *
 * dbl_check_run simulates a measured run's configuration and puts the
 * prediction next to each figure the run measured (step time, tokens/s,
 * model TFLOP/s and MFU on scaleplan's FLOP count, memory, and the step's
 * components where the run timed them), each with its error and whether it
 * is within the tolerance.
 *
 * dbl_ladder takes runs of one model at several GPU counts (the rungs of a
 * scale ladder) and answers the questions a team asks before doubling
 * again:
 *   - scaling efficiency at each rung, predicted and measured (per-GPU
 *     throughput against the first rung);
 *   - which rung falls short: the first rung is the baseline, and its
 *     ratio of measured to predicted step time the offset every rung shares
 *     (a profile a few percent optimistic everywhere is not a scaling
 *     problem); a later rung whose measured scaling efficiency is more than
 *     the tolerance below the predicted one, i.e. whose step is slower than
 *     the offset says, falls short (one more than the tolerance faster is
 *     flagged too, without a cause);
 *   - the most likely cause, from the simulator itself: for each factor of
 *     the cost profile that drives a part of the breakdown (compute
 *     throughput; the scale-out network under DP, PP and CP traffic; the
 *     NVLink collectives under TP; the stragglers' jitter; memory
 *     bandwidth under the optimizer), how much slower that part would have
 *     to run to close the rung's gap, re-simulating the rung, and whether
 *     the same change keeps the rungs that matched within the tolerance. The
 *     cause is the smallest such change that does; a change that would also
 *     slow the rungs that matched is ruled out;
 *   - the next doubling, predicted with the profile re-fitted to every
 *     measured rung (the shared compute factor and the cause's factor, by
 *     least squares on the logarithm of the step times), with an interval:
 *     the range of the next prediction when each rung in turn is left out of
 *     the fit, widened by the fit's residual and the runs' own step-time
 *     spread (twice their root sum of squares).
 */
#ifndef SCALEPLAN_VALIDATE_DOUBLING_H
#define SCALEPLAN_VALIDATE_DOUBLING_H

#include <stdbool.h>

#include "common/error.h"
#include "sim/costs.h"
#include "sim/step.h"

/* Step components a log can time: forward and backward compute (with TP,
 * CP and pipeline time), the data-parallel gradient reduction (with the
 * wait for stragglers it absorbs), and the optimizer step. */
typedef enum {
    DBL_COMP_COMPUTE = 0,
    DBL_COMP_GRAD_REDUCE,
    DBL_COMP_OPTIMIZER,
    DBL_COMP_COUNT
} dbl_comp_t;

/* One measured run. */
typedef struct {
    const char *label;        /* its name in tables (the log file) */
    sim_input_t in;           /* its configuration; the caller owns what the
                                 pointers point to */
    double step_time_s;       /* steady-state mean */
    double step_cv;           /* spread of the steady steps (sd / mean); 0 = unknown */
    double memory_gib;        /* peak memory per GPU; NAN when not measured */
    const char *memory_kind;  /* what that peak counts ("max reserved") */
    double comp_s[DBL_COMP_COUNT]; /* timed components; NAN when not */
} dbl_measured_t;

typedef enum {
    DBL_Q_STEP = 0,   /* step time (s) */
    DBL_Q_TOKENS,     /* tokens/s, all GPUs */
    DBL_Q_TFLOPS,     /* model TFLOP/s per GPU (scaleplan's count) */
    DBL_Q_MFU,
    DBL_Q_MEMORY,     /* GiB per GPU */
    DBL_Q_COMP0,      /* the components, DBL_COMP_COUNT of them */
    DBL_Q_COUNT = DBL_Q_COMP0 + DBL_COMP_COUNT
} dbl_quantity_id_t;

typedef struct {
    const char *name;   /* "step time (s)" */
    const char *key;    /* "step_time_s" */
    double predicted;
    double measured;    /* NAN when the run did not measure it */
    double error;       /* predicted / measured - 1; NAN without a measurement */
    bool flagged;       /* |error| over the tolerance */
} dbl_quantity_t;

typedef struct {
    sim_result_t predicted;
    dbl_quantity_t q[DBL_Q_COUNT];
    double error;       /* of the step time */
    bool within;        /* |error| <= tolerance */
} dbl_check_t;

/* Simulate m's configuration and compare; tolerance is a fraction (0.10).
 * ERR_INPUT or ERR_RUNTIME from the simulator. */
int dbl_check_run(sim_ctx_t *ctx, const dbl_measured_t *m, double tolerance, dbl_check_t *out,
                  err_t *err);

#define DBL_MAX_RUNGS 16

typedef struct {
    dbl_measured_t m;  /* a copy of the run (its pointers stay the caller's) */
    int gpus;
    sim_result_t predicted;
    double measured_tokens_per_s, predicted_tokens_per_s;
    double measured_efficiency, predicted_efficiency; /* against the first rung */
    double error;      /* predicted / measured step time - 1 */
    double shortfall;  /* measured / (offset x predicted) - 1: how much slower
                          than the first rung says it should be (= predicted
                          over measured scaling efficiency - 1) */
    bool flagged;      /* shortfall beyond the tolerance either way */
} dbl_rung_t;

/* A factor of the profile, and what changing it would do. */
typedef struct {
    const char *name;      /* what is slower: "the scale-out network" */
    const char *parts;     /* breakdown parts it drives: "dp_comm, pp_comm, cp_comm" */
    const char *part;      /* the part that grows most under the change ("dp_comm") */
    double part_before_s, part_after_s; /* its exposed seconds, before and after */
    const char *field;     /* profile field: "net_efficiency" */
    double value;          /* the field's value in effect */
    double factor;         /* how many times slower the part must run; INFINITY
                              when no slowdown up to 100x closes the gap */
    double worst_other;    /* after the change, the largest error of the rungs
                              that matched: offset x predicted / measured - 1
                              (> 0: predicted slower than they ran) */
    int worst_other_rung;  /* which rung that is; -1 when none */
    bool explains;         /* closes the gap, and the others stay within */
} dbl_cause_t;

/* A factor re-fitted to the measured rungs. */
typedef struct {
    const char *name, *field;
    double before, after;  /* the field's value */
    double slowdown;       /* how many times slower than the profile said */
} dbl_fit_t;

#define DBL_N_CAUSES 5

typedef struct {
    int n;
    dbl_rung_t rung[DBL_MAX_RUNGS];  /* by GPU count */
    double offset;        /* measured / predicted step time of the first rung */
    int worst;            /* the flagged rung that falls shortest, -1 */
    dbl_cause_t cause[DBL_N_CAUSES]; /* for rung[worst], most likely first */
    int n_causes;         /* 0 when no rung falls short */
    dbl_fit_t fit[2];     /* compute, then the cause's factor when one explains */
    int n_fit;
    double fit_rms;       /* residual log error of the re-fitted profile */
    /* the next doubling */
    bool has_next;
    char next_why_not[200];
    int next_gpus;
    layout_t next_layout;
    sim_result_t next_uncorrected;   /* with the profile as it was */
    sim_result_t next_corrected;     /* with the re-fitted profile */
    double next_low_s, next_high_s;  /* interval of the corrected step time */
    double next_tokens_per_s, next_tokens_low, next_tokens_high;
    double next_efficiency;          /* corrected, against the first rung */
} dbl_ladder_t;

/* Analyse runs[0..n) (2 to DBL_MAX_RUNGS runs of one model on one GPU type
 * at distinct GPU counts, in any order). The next rung is next_layout on
 * next_gpus GPUs when given (the plan's next rung), else the last rung's
 * layout on twice its GPUs (with the global batch kept, or doubled if the
 * measured rungs doubled it). ERR_INPUT for runs that do not form a
 * ladder; a next rung that cannot be built is not an error (has_next false,
 * next_why_not says why). */
int dbl_ladder(const dbl_measured_t *runs, int n, const layout_t *next_layout, int next_gpus,
               double tolerance, dbl_ladder_t *out, err_t *err);

#endif
