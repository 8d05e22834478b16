/* budget: what a run costs, from its simulated wall time.
 *
 * GPU-hours are GPUs x the run's wall time, where the wall time comes from
 * the reliability simulation (failures, checkpoints, restarts included), so
 * the overhead over the failure-free compute time is simulated rather than
 * guessed; a fixed reservation is paid for its whole length, and the
 * tokens it trains follow from the simulated step. Checkpoint storage is
 * the volume kept over the run (growing as checkpoints are written, up to
 * the number kept) in TB and dollars at tiered prices, plus keeping it
 * afterwards; data transfer is the dataset read in and what is moved out.
 * Providers are compared side by side (each quote at the end of its range
 * asked for, only quotes that apply to the job's size, spot with its
 * preemptions simulated). An own cluster is priced from capital cost
 * amortized over its life, power and staff, with the months it takes to
 * break even against a cloud price. The reality check turns a claimed
 * duration into the MFU it would need.
 */
#ifndef SCALEPLAN_RUN_BUDGET_H
#define SCALEPLAN_RUN_BUDGET_H

#include <stdbool.h>

#include "common/error.h"
#include "run/reliability.h"
#include "topologies/price.h"

typedef struct {
    int gpus;
    double wall_s;            /* the run's (P50) wall time, or the reservation */
    double ideal_s;           /* failure-free compute time of the same work */
    double usd_per_gpu_hour;
    /* checkpoint storage */
    double ckpt_bytes;        /* one checkpoint */
    int ckpt_keep;            /* checkpoints kept at a time; 0 = every one */
    double checkpoints;       /* checkpoints written over the run */
    price_storage_t storage;  /* storage and transfer prices */
    double storage_usd_per_gb_month; /* > 0: given, instead of the tiers */
    double retain_months;     /* months the last volume is kept after the run */
    /* data transfer */
    double dataset_bytes;     /* read in once */
    double egress_bytes;      /* moved out */
    int export_checkpoints;   /* checkpoints moved out at the end */
    double egress_usd_per_tb; /* >= 0: given, instead of the tiers; < 0 = tiers */
} budget_input_t;

typedef struct {
    double gpu_hours;          /* GPUs x wall time */
    double ideal_gpu_hours;    /* GPUs x failure-free compute time */
    double overhead_fraction;  /* wall / ideal - 1: the simulated overhead */
    double compute_usd;        /* gpu_hours x price */
    double checkpoints_kept;   /* at the end of the run */
    double storage_tb;         /* kept at the end of the run (the most at a time), 1e12 B */
    double storage_gb_months;  /* stored volume integrated over the run */
    double storage_usd_per_gb_month; /* the price used (tiers blended at storage_tb) */
    double storage_usd;        /* during the run, and the retention after it */
    double storage_usd_per_month_after; /* keeping storage_tb one more month */
    double ingress_tb, egress_tb;
    double ingress_usd, egress_usd;
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
    double kw_per_gpu;              /* GPU plus its share of the host, as drawn in training */
    double pue;
    double usd_per_kwh;
    double staff_usd_per_gpu_month;
    char source[1200];              /* the figures' sources and assumptions */
} own_cluster_t;

/* The catalog's own-cluster figures for a GPU (ERR_INPUT naming --capex if
 * it has none). */
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

/* One provider's quote for the same run. */
typedef struct {
    char provider[32], kind[24], offering[96];
    double usd_per_gpu_hour;   /* at the end asked for */
    double usd_low, usd_high;  /* the quoted range (equal when none) */
    double wall_days;          /* spot: with preemptions simulated */
    double cost_usd;           /* compute, storage and transfer */
    bool own;                  /* the own-cluster row */
} budget_offer_t;

/* Every catalog quote for the run's GPU that applies to in->gpus GPUs, at
 * price end `end`, each with the run's storage and transfer: spot quotes
 * rerun the reliability simulation rel with the catalog's preemptions
 * (its wall time when the run trains a token count; a reservation keeps
 * its length), and an own cluster (own, may be NULL) at utilization.
 * *rows is a heap array the caller frees; *skipped counts quotes for other
 * job sizes; *breakeven the own cluster's months against in's price
 * (NAN without one). */
int budget_offers(const char *gpu, const rel_config_t *rel, const rel_result_t *r,
                  const budget_input_t *in, const budget_t *b, bool reservation, price_end_t end,
                  const own_cluster_t *own, double utilization, budget_offer_t **rows, int *n,
                  int *skipped, double *breakeven, err_t *err);

#endif
