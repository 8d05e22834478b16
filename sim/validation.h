/* validation: replay published training runs through the simulator.
 *
 * Reads the throughput table (tests/fixtures/validation/throughput.csv:
 * Megatron-LM SC21, Korthikanti et al. 2022, the 2020 Megatron tables,
 * Megatron-Core r0.8 on H100), rebuilds each run's model, cluster and
 * layout from its columns, simulates one step with the GPU's profile, and
 * compares like with like: seconds per iteration where the source gives
 * them, else TFLOP/s per GPU on the row's basis (hardware FLOPs with
 * recompute for SC21, model FLOPs for Megatron-Core). The framework column
 * selects the framework preset (sim_options_framework); nothing is tuned
 * per row. Rows that leave layout choices open (micro-batch, recompute)
 * are run with stated assumptions and flagged as partial.
 */
#ifndef SCALEPLAN_SIM_VALIDATION_H
#define SCALEPLAN_SIM_VALIDATION_H

#include <stdbool.h>

#include "common/error.h"
#include "profile/profile.h"
#include "sim/scenario.h"
#include "sim/step.h"

typedef enum { VAL_STEP_TIME = 0, VAL_HW_TFLOPS, VAL_MODEL_TFLOPS } val_metric_t;

typedef struct {
    char row_id[8];
    char model[48];
    char gpu[32];
    char layout[160];    /* layout_describe of what was simulated */
    int gpus;
    val_metric_t metric;
    double published;    /* in the metric's unit */
    double predicted;
    double error;        /* predicted throughput / published throughput - 1 */
    bool full_config;    /* the row fixes every layout choice */
    char note[200];      /* assumptions, or why the row was skipped */
    bool skipped;
} val_row_t;

/* Run every row of csv_path. profile, when not NULL, replaces the default
 * profile for rows on its GPU. *rows is a heap array the caller frees. */
int val_run(const char *csv_path, const profile_t *profile, val_row_t **rows, int *n,
            err_t *err);

const char *val_metric_name(val_metric_t m);

/* Median and worst absolute error over the rows that ran (and, when
 * full_only, had a full configuration). */
void val_summary(const val_row_t *rows, int n, bool full_only, double *median,
                 double *worst, int *count);

/* The planner against the published layouts: for every row with a full
 * configuration, search every layout for its model and GPU count (in the
 * space its framework offered) and report the best, the published
 * layout's simulated speed and its rank (1 = the best). */
typedef struct {
    char row_id[8];
    char model[48];
    int gpus;
    int rank;
    long candidates, simulated;
    double published_step_s, best_step_s;
    double published_tokens_per_s, best_tokens_per_s;
    char published_layout[160], best_layout[160];
} val_rank_t;

int val_rank(const char *csv_path, val_rank_t **rows, int *n, err_t *err);

/* ---------------------------------------------------------------------
 * A measured run against its prediction.
 *
 * The run is what `scaleplan train --json` prints on a GPU, or any JSON
 * file with its keys: model (or model_config), gpu, gpus, gpus_per_node,
 * layout, framework (a preset name), step_time_s, and optionally
 * breakdown_s, tokens_per_s, memory_gib.total, overlap_grad_reduce and
 * dropout_disabled. */
typedef struct {
    scenario_t s;          /* the run's configuration, ready to simulate */
    char framework[32];
    double step_time_s;    /* measured */
    bool has_part[BD_COUNT];
    double part_s[BD_COUNT]; /* measured breakdown, where given */
    double tokens_per_s;   /* NAN when not given */
    double memory_gib;     /* NAN when not given */
} val_measured_t;

/* Read and check the run in path; profile (a file, or NULL for the GPU's
 * default) prices it. Errors name the file and key. Free with
 * val_measured_free whatever it returns. */
int val_measured_load(const char *path, const char *profile, val_measured_t *m, err_t *err);
void val_measured_free(val_measured_t *m);

/* One compared quantity: the step, or a breakdown part. */
typedef struct {
    char name[24];
    double predicted_s, measured_s;
    double error;  /* predicted / measured - 1; NAN when nothing was measured */
    bool flagged;  /* |error| over the tolerance (or not a number) */
} val_component_t;

#define VAL_MAX_COMPONENTS (BD_COUNT + 1)

/* The step, then every breakdown part that either side gives more than
 * 0.5% of its step; flag_over is the tolerance (0.10 = 10%). Fills c[0..*n). */
void val_measured_compare(const val_measured_t *m, const sim_result_t *r, double flag_over,
                          val_component_t *c, int *n);

#endif
