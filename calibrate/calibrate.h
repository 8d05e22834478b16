/* calibrate: from measurements to a profile the simulator uses.
 *
 *   cal_measure   run the measuring plan (quick or full) on this machine's
 *                 GPUs: GEMM sweep, memory kernels, launch overhead,
 *                 sustained rate, NCCL collectives (gpubench, collbench);
 *   cal_import    read nccl-tests logs into measurements (nccltests);
 *   cal_fit       fit measurements (fit) onto a base profile: the GEMM
 *                 model's parameters and table, memory bandwidth and launch
 *                 overhead, one alpha-beta table per collective and group
 *                 size measured inside a node, the tree/ring bandwidth
 *                 ratio across nodes; every fit's quality is recorded;
 *   cal_show      print a profile's calibration record.
 *
 * What the profile gets (profile.h): gemm_max_eff per measured dtype,
 * k_half, wave_penalty, tile_m/tile_n, gemm_launch_us, sm_count, the
 * GEMM table (transformer and square shapes) and sustained_factor (the
 * base profile's unless told otherwise, see cal_fit_opts_t);
 * mem_bw_eff and kernel_launch_us; collective tables (op, n_ranks, lines)
 * replacing the base's tables of the same op and group size;
 * tree_bw_factor from ring and tree all-reduce across nodes; the
 * "calibration" block (device, versions, nodes, fits). Everything the
 * measurements do not cover keeps the base profile's value and source.
 */
#ifndef SCALEPLAN_CALIBRATE_CALIBRATE_H
#define SCALEPLAN_CALIBRATE_CALIBRATE_H

#include <stdbool.h>
#include <stdio.h>

#include "calibrate/measurements.h"
#include "calibrate/nccltests.h"
#include "profile/profile.h"
#include "common/dist.h"
#include "common/error.h"

/* Notes on what a calibration did or left out, for the user. */
#define CAL_MAX_NOTES 32
typedef struct {
    int n;
    char text[CAL_MAX_NOTES][240];
} cal_notes_t;

/* sustained_factor of the fitted profile: the share of the measured GEMM
 * throughput that sustained training reaches. The GEMM table is stored
 * scaled by it, so the factor applies at measured shapes too.
 *
 * The default is the base profile's factor. A calibration measures GEMMs
 * the way the default profiles' sources did (short runs after a warm-up,
 * MAMF-style), so it replaces the burst-level figures (best efficiency,
 * K and wave effects, the table) and keeps the training-level share that
 * the defaults were validated with (throughput.csv): what clocks under
 * the power limit, library versions and kernels the model does not list
 * take away in a real run is not something a micro-benchmark sees.
 * 1 gives the measured burst rates as they are; "measured" the sustained
 * run's own ratio (the clock part alone). */
typedef enum {
    CAL_SUSTAINED_BASE = 0,  /* the base profile's factor (default) */
    CAL_SUSTAINED_VALUE,     /* sustained_value, e.g. 1: the measured rates */
    CAL_SUSTAINED_MEASURED   /* sustained / burst rate of the sustained run */
} cal_sustained_t;

typedef struct {
    cal_sustained_t sustained;
    double sustained_value;
    const char *command; /* recorded in the profile (may be NULL) */
} cal_fit_opts_t;

/* Defaults: the base profile's sustained factor. */
void cal_fit_opts_default(cal_fit_opts_t *o);

/* Parse "1", "0.68", "base" or "measured" (flag names --sustained-factor). */
int cal_parse_sustained(const char *text, cal_fit_opts_t *o, err_t *err);

/* Fit m onto base into out (a new profile: free with prof_free). A series
 * of one rank, or with fewer than 3 sizes, is noted and left out. ERR_INPUT
 * when m holds nothing to fit or a fit is impossible. */
int cal_fit(const meas_set_t *m, const profile_t *base, const cal_fit_opts_t *o, profile_t *out,
            cal_notes_t *notes, err_t *err);

/* Read nccl-tests logs (text or JSON) into m (collective series; the
 * device the logs name, ranks and nodes into m->env). notes (may be NULL)
 * receives what the reader inferred or assumed (nccltests_reading_t's
 * notes) and the logs of collectives the profile does not model (reduce,
 * gather, scatter, hypercube), which are read and skipped; ERR_INPUT when
 * no log is left to import. */
int cal_import(const char *const *paths, int n, const nccltests_hint_t *hint, meas_set_t *m,
               cal_notes_t *notes, err_t *err);

/* The catalog GPU a measurement set belongs to: gpu_name when given, else
 * the set's, else the device name the driver or logs report. Fills
 * m->env.gpu. ERR_INPUT naming --gpu when none resolves. */
int cal_resolve_gpu(meas_set_t *m, const char *gpu_name, err_t *err);

typedef struct {
    bool quick;            /* the < 2 minute plan */
    bool gemm, memory, collectives; /* what to measure */
    double timeout_s;      /* NCCL watchdog */
    int gpus;              /* one process: GPUs to use (0 = all visible) */
} cal_measure_opts_t;

void cal_measure_opts_default(cal_measure_opts_t *o);

/* Measure on this machine. GEMMs, memory and launch on rank 0's GPU (GPU 0
 * in one process); collectives on every GPU (one process) or every MPI
 * rank. m is filled on rank 0 (other ranks only take part). The progress
 * bar is drawn on rank 0. ERR_RUNTIME "no CUDA GPU visible: ..." without
 * a GPU, or the built-without-CUDA line. */
int cal_measure(const dist_group_t *world, const cal_measure_opts_t *o, meas_set_t *m,
                err_t *err);

/* The calibration record of p as text: device, versions, each fit with R^2,
 * worst error, prediction interval and parameters, the collective tables. */
int cal_show(FILE *out, const profile_t *p);

#endif
