/* price: GPU-hour prices by provider (topologies/catalog/prices.json).
 *
 * Each entry is one quoted price with its provider, offering, kind
 * (on-demand, spot, reserved, capacity-block, marketplace, subscription),
 * the date it was quoted and its source. At most one entry per GPU is the
 * default used when the user gives no --price; GPUs without a quoted price
 * have none, and asking for one is an error that says to pass --price.
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
    char source[200];
} price_t;

/* Every price entry; *prices is a heap array the caller frees. */
int price_load_all(price_t **prices, size_t *count, err_t *err);

/* The default price of GPU gpu_name (a catalog name). ERR_INPUT when the
 * catalog quotes none. */
int price_default_for_gpu(const char *gpu_name, price_t *out, err_t *err);

/* Price of a provider's offering for a GPU: provider matched
 * case-insensitively, the first entry of that kind ("on-demand" when kind
 * is NULL) or of any kind. ERR_INPUT listing the providers that quote the
 * GPU when there is none. */
int price_find(const char *gpu_name, const char *provider, const char *kind,
               price_t *out, err_t *err);

/* Spot-capacity assumptions from the catalog: preemptions per node-hour
 * and the wait for capacity after one. */
int price_spot_defaults(double *preempt_per_node_hour, double *wait_s, err_t *err);

#endif
