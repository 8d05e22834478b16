/* power: the power a training job draws, phase by phase, and the energy,
 * electricity cost and carbon of a whole run (sim/catalog/power.json).
 *
 * A GPU draws between its idle power and its TDP: at activity a it draws
 * idle + a x (TDP - idle). A step's exposed time (sim/step.h breakdown)
 * falls into three phases: compute (compute, recompute, optimizer) at the
 * compute activity; communication waits (TP/CP/EP/PP/DP exposed, offload,
 * MoE imbalance, stragglers) at the comm-wait activity; idle waits
 * (pipeline bubbles, host-bound gaps, other) at the idle-wait activity.
 * Checkpoint pauses and restarts idle every GPU. The node adds a constant
 * overhead (CPUs, NICs, switches, fans); the facility multiplies the IT
 * power by its PUE.
 *
 * A power cap W per GPU below the compute draw lowers the clock by the
 * cube law (f/f_max = ((W - idle)/(compute - idle))^(1/exponent)): compute
 * and the bubbles built of it stretch by f_max/f, exposed communication
 * does not; compute then draws W.
 *
 * Energy bloat (Perseus, Chung et al. SOSP'24): a pipeline stage with less
 * compute than the critical one finishes early and idles; run at the
 * lowest clock that still finishes in time it would do the same work for
 * less energy. The bloat is that saving over the step's GPU energy.
 */
#ifndef SCALEPLAN_RUN_POWER_H
#define SCALEPLAN_RUN_POWER_H

#include <stdbool.h>

#include "common/error.h"
#include "sim/step.h"

typedef struct {
    char gpu[32];
    double tdp_w, idle_w, min_limit_w;
    double node_overhead_w;   /* per node, besides its GPUs */
    int gpus_per_node;
    double act_compute, act_comm, act_idle; /* 0 = idle, 1 = TDP */
    double clock_exponent;    /* power above idle ~ clock^exponent */
    double pue, usd_per_kwh;  /* the catalog's defaults */
    bool gpu_assumed;         /* no entry for this GPU: the fallback */
    char gpu_source[1200], activity_source[1000], clock_source[1000], defaults_source[600];
} power_model_t;

/* The power figures of gpu (catalog name) whose TDP is tdp_w (> 0; from
 * gpus.json). A GPU without an entry gets the fallback, gpu_assumed set.
 * ERR_RUNTIME when the catalog file cannot be read. */
int power_model_load(const char *gpu, double tdp_w, power_model_t *out, err_t *err);

/* Draw of one GPU at activity a (0..1), W. */
double power_draw_w(const power_model_t *m, double activity);

/* ERR_INPUT naming --power-cap when cap_w is above the TDP or below the
 * board's lowest power limit (saying which and the figure). */
int power_cap_check(const power_model_t *m, double cap_w, err_t *err);

/* Clock under cap_w as a fraction of the uncapped clock (1 when the cap is
 * 0 = none or at or above the compute draw). */
double power_clock_ratio(const power_model_t *m, double cap_w);

/* One step on one GPU (the critical stage's), under a cap (0 = none). */
typedef struct {
    double clock_ratio;       /* 1 uncapped */
    double compute_s, comm_s, idle_s; /* exposed time by phase, after the cap */
    double step_s;            /* their sum */
    double compute_w, comm_w, idle_w; /* draw in each phase */
    double energy_j;          /* one GPU, one step */
    double avg_w;             /* energy / step */
} power_step_t;

void power_step(const power_model_t *m, const sim_result_t *r, double cap_w, power_step_t *out);

/* A whole run of n_gpus: compute time (useful and lost to failures),
 * checkpoint pauses and restarts (idle), wall time. */
typedef struct {
    double compute_s, checkpoint_s, restart_s, wall_s;
} power_run_in_t;

typedef struct {
    double gpu_mwh, node_mwh, it_mwh, facility_mwh; /* energy of the run */
    double usd;                 /* facility energy x price */
    double tco2;                /* with a carbon intensity; 0 without */
    double peak_mw;             /* facility, every GPU computing */
    double avg_mw;              /* facility, over the run */
    double comm_pause_mw, ckpt_pause_mw; /* facility, every GPU waiting */
    double swing_comm_mw, swing_ckpt_mw; /* peak less each pause */
    int nodes;
} power_run_t;

/* Energy and power of a run of n_gpus with step s; pue >= 1, usd_per_kwh
 * >= 0, g_co2_per_kwh >= 0 (0 = not asked). */
void power_run(const power_model_t *m, const power_step_t *s, int n_gpus,
               const power_run_in_t *in, double pue, double usd_per_kwh,
               double g_co2_per_kwh, power_run_t *out);

/* Perseus's energy bloat of a step from its timeline (sim_timeline):
 * each stage's compute (passes and the optimizer on its compute stream)
 * against the busiest stage's, the saving of running each lighter stage at
 * the clock that finishes with the busiest (no lower than the clock of the
 * lowest power limit), over the step's GPU energy (stages x step_s x
 * avg_w). 0 with one stage or no events. */
double power_bloat(const power_model_t *m, const sim_event_t *ev, int n, int stages,
                   const power_step_t *s);

#endif
