/* validation: a measured run (the team's own, or the reference trainer's)
 * against the simulator's prediction for its configuration, part by part.
 * Published runs in bulk are validate/published.h.
 */
#ifndef SCALEPLAN_VALIDATE_VALIDATION_H
#define SCALEPLAN_VALIDATE_VALIDATION_H

#include <stdbool.h>

#include "common/error.h"
#include "profile/profile.h"
#include "sim/scenario.h"
#include "sim/step.h"

/* ---------------------------------------------------------------------
 * A measured run against its prediction.
 *
 * The run is what `scaleplan train --json` prints on a GPU, or any JSON
 * file with its keys: model (or model_config), gpu, gpus, gpus_per_node,
 * layout, framework (a preset name; default scaleplan-train for a run that
 * names its backend, as scaleplan train does, else megatron-core),
 * step_time_s, and optionally
 * breakdown_s, tokens_per_s, memory_gib.total (what the run counted),
 * memory_gib.peak_measured (the device's peak, as the CUDA trainer reads
 * it from the driver), overlap_grad_reduce and dropout_disabled. */
typedef struct {
    scenario_t s;          /* the run's configuration, ready to simulate */
    char framework[32];
    double step_time_s;    /* measured */
    bool has_part[BD_COUNT];
    double part_s[BD_COUNT]; /* measured breakdown, where given */
    double tokens_per_s;   /* NAN when not given */
    double memory_gib;     /* counted by the run; NAN when not given */
    double memory_peak_gib; /* measured on the device; NAN when not given */
} val_measured_t;

/* The memory the prediction is judged against: the device's measured
 * peak where the run gives one, else what it counted (NAN: neither). */
double val_measured_memory_gib(const val_measured_t *m);

/* Read and check the run in path; profile (a file, or NULL for the GPU's
 * default) prices it. Errors name the file and key. Free with
 * val_measured_free whatever it returns. */
int val_measured_load(const char *path, const char *profile, val_measured_t *m, err_t *err);

/* The same with names looked up in the parsed catalog cat (NULL: the files
 * are parsed for this call). */
int val_measured_load_in(catalog_t *cat, const char *path, const char *profile,
                         val_measured_t *m, err_t *err);
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
