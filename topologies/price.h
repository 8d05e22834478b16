/* price: GPU-hour, storage and data-transfer prices
 * (topologies/catalog/prices.json).
 *
 * Each GPU entry is one quoted price with its provider, offering, kind
 * (on-demand, spot, reserved, capacity-block, marketplace, subscription),
 * the date it was quoted, its source, the job sizes it applies to (a
 * 1-GPU instance is no price for 256 GPUs) and the kind of site
 * (environment). A quoted range is kept as a range; the caller picks its
 * low, middle or high end. A GPU may have several default entries for
 * different job sizes; GPUs without a quoted price have none, and asking
 * for one is an error that says to pass --price. Storage entries price
 * checkpoint storage per GB-month in tiers and data transfer per TB.
 */
#ifndef SCALEPLAN_TOPOLOGIES_PRICE_H
#define SCALEPLAN_TOPOLOGIES_PRICE_H

#include <stdbool.h>
#include <stddef.h>

#include "common/error.h"
#include "common/json.h"

typedef struct {
    char provider[32];
    char offering[96];
    char gpu[32];  /* catalog GPU name */
    char kind[24];
    char date[40];
    double usd_per_gpu_hour;      /* the quote (low end of a range) */
    double usd_per_gpu_hour_high; /* high end of a quoted range, or 0 */
    bool is_default;
    int gpus_min, gpus_max;       /* job sizes the quote applies to (0 = any) */
    char size_source[160];
    char environment[24];         /* the kind of site: cloud, marketplace, ... */
    char source[200];
} price_t;

typedef enum { PRICE_LOW = 0, PRICE_MID, PRICE_HIGH } price_end_t;

/* "low", "mid" or "high"; ERR_INPUT naming --price-end. */
int price_end_parse(const char *text, price_end_t *out, err_t *err);
const char *price_end_name(price_end_t e);

/* The price at one end of a quote's range (the quote itself when it is no
 * range). */
double price_usd(const price_t *p, price_end_t end);

/* Whether quote p applies to a job of n GPUs. */
bool price_fits(const price_t *p, int n);

/* Every price entry; *prices is a heap array the caller frees. */
int price_load_all(price_t **prices, size_t *count, err_t *err);

/* The default price of GPU gpu_name (a catalog name) for a job of n GPUs:
 * the default entry whose sizes cover n. ERR_INPUT when the catalog quotes
 * none for that size. */
int price_default_for_gpu(const char *gpu_name, int n, price_t *out, err_t *err);

/* Price of a provider's offering for a GPU and a job of n GPUs (0 = any
 * size): provider matched case-insensitively, the first entry of that kind
 * ("on-demand" when kind is NULL) or of any kind, among those whose sizes
 * cover n. ERR_INPUT listing the providers that quote the GPU when there
 * is none. */
int price_find(const char *gpu_name, const char *provider, const char *kind, int n,
               price_t *out, err_t *err);

/* Checkpoint storage and data transfer prices of one provider. */
#define PRICE_MAX_TIERS 4
typedef struct {
    char name[32];
    char provider[32];
    int n_tiers;
    double tier_up_to_tb[PRICE_MAX_TIERS];  /* 0 = no upper end */
    double tier_usd_per_gb_month[PRICE_MAX_TIERS];
    double ingress_usd_per_tb;
    int n_egress;
    double egress_up_to_tb[PRICE_MAX_TIERS];
    double egress_usd_per_tb[PRICE_MAX_TIERS];
    char source[600];
} price_storage_t;

/* A storage price by name or by provider (a provider without one gets the
 * catalog's default_storage_price); NULL or "" = the default. */
int price_storage_load(const char *name_or_provider, price_storage_t *out, err_t *err);

/* USD per GB-month for tb terabytes stored, the tiers blended. */
double price_storage_usd_per_gb_month(const price_storage_t *s, double tb);

/* USD to move tb terabytes out (egress tiers) and in. */
double price_egress_usd(const price_storage_t *s, double tb);
double price_ingress_usd(const price_storage_t *s, double tb);

/* Spot capacity from the catalog: preemptions an hour of one node, how a
 * gang's rate grows with its nodes (rate x nodes^node_exponent: 0 = the
 * gang preempted as one, 1 = independent nodes) and the wait for capacity
 * after one. ERR_INPUT naming the field when one is missing or out of
 * range; the outputs are then unspecified. */
int price_spot_defaults(double *preempt_per_node_hour, double *node_exponent, double *wait_s,
                        err_t *err);

/* The one-line basis of those defaults (their evidence and what is
 * ASSUMED), copied into basis (cap bytes, cut to fit). ERR_INPUT naming
 * the catalog field when it is missing. */
int price_spot_basis(char *basis, size_t cap, err_t *err);

#endif
