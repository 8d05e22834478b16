/* budget: what a run costs, from its simulated wall time.
 *
 * GPU-hours are GPUs x the run's wall time, where the wall time comes from
 * the reliability simulation (failures, checkpoints, restarts included), so
 * the overhead over the failure-free compute time is simulated rather than
 * guessed. Checkpoint storage (the last K checkpoints kept for the length
 * of the run) and data transfer are added. An own cluster is priced from
 * capital cost amortized over its life, power and staff, with the months
 * it takes to break even against a cloud price. The reality check turns a
 * claimed duration into the MFU it would need.
 */
#ifndef SCALEPLAN_SIM_BUDGET_H
#define SCALEPLAN_SIM_BUDGET_H

#include "common/error.h"

typedef struct {
    int gpus;
    double wall_s;            /* the run's (P50) wall time */
    double ideal_s;           /* its compute time without failures or checkpoints */
    double usd_per_gpu_hour;
    double ckpt_bytes;        /* one checkpoint */
    int ckpt_keep;            /* checkpoints kept at a time */
    double storage_usd_per_gb_month;
    double egress_bytes;      /* data moved in or out */
    double egress_usd_per_tb;
} budget_input_t;

typedef struct {
    double gpu_hours;          /* GPUs x wall time */
    double ideal_gpu_hours;    /* GPUs x failure-free compute time */
    double overhead_fraction;  /* wall / ideal - 1: the simulated overhead */
    double compute_usd;        /* gpu_hours x price */
    double storage_usd;
    double egress_usd;
    double cost_usd;           /* all of it */
    double cost_per_day_usd;   /* GPUs x 24 h x price */
} budget_t;

/* Hours in an average month (8760 / 12). */
#define HOURS_PER_MONTH 730.0

/* ERR_INPUT for negative or non-finite inputs, naming the flag. */
int budget_compute(const budget_input_t *in, budget_t *out, err_t *err);

typedef struct {
    char gpu[32];
    double capex_usd_per_gpu;       /* servers, network, install */
    double amortization_months;
    double kw_per_gpu;              /* GPU plus its share of the host */
    double pue;
    double usd_per_kwh;
    double staff_usd_per_gpu_month;
} own_cluster_t;

/* The catalog's own-cluster figures for a GPU (ERR_INPUT if it has none). */
int own_cluster_load(const char *gpu, own_cluster_t *o, err_t *err);

/* Running cost per GPU-hour (power and staff) and the full cost including
 * amortized capital, at a utilization (0..1] of the cluster. */
double own_opex_per_gpu_hour(const own_cluster_t *o);
double own_usd_per_gpu_hour(const own_cluster_t *o, double utilization);

/* Months until buying beats renting at cloud_usd_per_gpu_hour, or INFINITY
 * when the cloud is cheaper than just running the cluster. */
double own_breakeven_months(const own_cluster_t *o, double cloud_usd_per_gpu_hour,
                            double utilization);

/* The model-FLOPs utilization a run of flops on gpus for seconds needs
 * against a peak of peak_tflops per GPU (may exceed 1: impossible). */
double budget_required_mfu(double flops, int gpus, double seconds, double peak_tflops);

#endif
