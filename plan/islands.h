/* islands: training across sites (datacenters or pools) joined by a link
 * slower and farther than the fabric between nodes.
 *
 * Two ways to train across islands are priced from the step simulator:
 *  - hierarchical synchronous data parallelism (NeMo/Megatron-Core's
 *    multi-datacenter scheme): every step the gradients are reduce-scattered
 *    inside each island, the shards all-reduced across the link, and
 *    all-gathered inside again; the cross-island part overlaps the last
 *    micro-batch's backward, the rest of it is exposed. Same math as one
 *    site: no extra tokens.
 *  - DiLoCo and streaming DiLoCo: M replicas (spread over the islands)
 *    each take H inner steps alone, then exchange a pseudo-gradient of
 *    every parameter at `bits` bits; streaming DiLoCo sends the parameters
 *    in `fragments` pieces at staggered times, each allowed to overlap
 *    `overlap` inner steps. Compute utilization is the inner steps' time
 *    over the wall time; the replicas pay extra tokens to the same loss
 *    (sim/catalog/sites.json, from Charles et al. 2025).
 * The link is one shared pipe per direction between each pair of
 * neighbouring islands (a ring across islands): bandwidth in bytes/s and a
 * round-trip time. */
#ifndef SCALEPLAN_PLAN_ISLANDS_H
#define SCALEPLAN_PLAN_ISLANDS_H

#include <stdbool.h>

#include "common/catalog.h"
#include "common/error.h"
#include "sim/step.h"

typedef struct {
    int n;                /* islands (>= 2 to mean anything) */
    int gpus_each;        /* GPUs per island */
    double link_bytes_s;  /* between neighbouring islands, per direction */
    double rtt_s;         /* round trip over the link */
} islands_t;

typedef struct {
    bool on;              /* DiLoCo instead of synchronous DP across islands */
    int inner_steps;      /* H */
    int replicas;         /* M (0 = one per island) */
    int fragments;        /* streaming: pieces synchronized in turn (1 = plain) */
    double overlap_steps; /* streaming: inner steps one piece's exchange may
                             overlap (0 = the exchange blocks) */
    double bits;          /* per pseudo-gradient element on the wire */
} diloco_t;

/* "2x8192": islands x GPUs each. ERR_INPUT naming --islands. */
int islands_parse(const char *text, islands_t *out, err_t *err);

/* "400Gbps,20ms": the link's bandwidth and round-trip time into is.
 * ERR_INPUT naming --island-link for a zero bandwidth, a missing RTT or
 * a unit it cannot read. */
int islands_parse_link(const char *text, islands_t *is, err_t *err);

/* "H=500,M=2,fragments=4,bits=4,overlap=1" (any subset; defaults H=500,
 * M = one per island, fragments 1, overlap 0, bits 32). ERR_INPUT naming
 * --diloco. */
int diloco_parse(const char *text, diloco_t *out, err_t *err);

/* Tokens to the same loss of DiLoCo with M replicas over data parallelism,
 * from sim/catalog/sites.json (cat NULL: parse it now); *assumed tells
 * whether the figure is marked assumed there. */
int diloco_token_multiplier(catalog_t *cat, int replicas, double bits, double *mult,
                            bool *assumed, err_t *err);

typedef struct {
    int replicas;            /* DiLoCo's M (0: synchronous) */
    double one_site_step_s;  /* the whole job on one site (reference) */
    double step_s;           /* a step across islands (DiLoCo: an inner step) */
    double cross_bytes;      /* one exchange's bytes each way over the link */
    double cross_s;          /* one exchange's time over the link */
    double exposed_s;        /* per step, of the exchange */
    double mean_step_s;      /* per step over the run, exposed exchange included */
    double utilization;      /* compute steps over wall time */
    double scaling;          /* one-site step over mean step */
    double token_multiplier;
    bool token_assumed;
    double time_ratio;       /* time to the same loss over one site's */
} sites_eval_t;

/* Price in (the whole job, n x gpus_each GPUs, finalized) across islands
 * is, synchronously or with d (d NULL or off: synchronous). ERR_INPUT when
 * the job's GPUs are not n x gpus_each, when the replicas do not split the
 * data-parallel groups or the batch, or for a zero-bandwidth link. */
int sites_evaluate(sim_ctx_t *ctx, catalog_t *cat, const sim_input_t *in, const islands_t *is,
                   const diloco_t *d, sites_eval_t *out, err_t *err);

#endif
