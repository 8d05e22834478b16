/* monitor: the alerts planning guides ask a training job to raise, from
 * the figures of each step.
 *
 *   loss_spike      loss above 2x its moving average (after a few steps)
 *   nan_inf         loss or gradient norm not finite
 *   grad_norm_high  gradient norm above 100
 *   grad_norm_low   gradient norm below 0.001
 *   throughput_low  tokens/s under 80% of the prediction (when one is given)
 *   checkpoint_io   checkpoint time over 5% of the training time between saves
 */
#ifndef SCALEPLAN_TRAINER_MONITOR_H
#define SCALEPLAN_TRAINER_MONITOR_H

#include <stdbool.h>

#define MON_MAX_ALERTS 64

typedef struct {
    long step;
    char kind[24];
    char message[200];
} mon_alert_t;

typedef struct {
    double predicted_tokens_per_s; /* 0 = no throughput alert */
    /* state */
    double loss_avg;     /* exponential moving average */
    int seen;            /* steps observed */
    double since_ckpt_s; /* training time since the last save */
    int n_alerts;
    mon_alert_t alerts[MON_MAX_ALERTS]; /* the first MON_MAX_ALERTS raised */
    long dropped;        /* raised beyond that */
} monitor_t;

/* Thresholds, as the guides state them. */
#define MON_SPIKE_FACTOR 2.0
#define MON_GRAD_HIGH 100.0
#define MON_GRAD_LOW 1e-3
#define MON_THROUGHPUT_FRACTION 0.8
#define MON_CKPT_FRACTION 0.05
#define MON_WARMUP_STEPS 5 /* steps before the moving average is trusted */

void mon_init(monitor_t *m, double predicted_tokens_per_s);

/* Record one step; returns how many alerts it raised. */
int mon_step(monitor_t *m, long step, double loss, double grad_norm, double tokens_per_s,
             double step_s);

/* Record a checkpoint save that held training for blocking_s. */
int mon_checkpoint(monitor_t *m, long step, double blocking_s);

/* Whether an alert of this kind was raised at step. */
bool mon_raised(const monitor_t *m, long step, const char *kind);

#endif
