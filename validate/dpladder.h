/* dpladder: same-layout data-parallel ladders in replayed published runs,
 * and how per-GPU throughput changes up each ladder, published and
 * predicted.
 *
 * A ladder is a run of consecutive rows (in the file's order) of one group,
 * model and GPU whose simulated layouts differ only in the data-parallel
 * size (and so the GPU count and global batch): the same TP, PP, CP,
 * interleaving, micro-batch, gradient accumulation, sequence length,
 * precision, recompute and sharding, with the GPU count growing (or
 * shrinking) row to row. Weak scaling in DP alone: what changes the per-GPU throughput is
 * what grows with DP (collective latency, synchronisations, stragglers).
 * Rows that were skipped break a ladder.
 */
#ifndef SCALEPLAN_VALIDATE_DPLADDER_H
#define SCALEPLAN_VALIDATE_DPLADDER_H

#include "common/error.h"
#include "validate/published.h"

typedef struct {
    int first, last;         /* row indices of the smallest and largest rung
                                (first > last where the file lists the
                                ladder from the top) */
    int rungs;               /* rows in the ladder */
    int gpus_lo, gpus_hi;
    double published_change; /* per-GPU tokens/s, largest rung over
                                smallest, minus 1 (negative: slower) */
    double predicted_change;
} dpl_ladder_t;

/* Find the DP ladders of at least two rungs in rows[0..n). *out gets a heap
 * array the caller frees (NULL with *n_out 0 when there are none). Returns 0,
 * or ERR_RUNTIME when out of memory (then *out is NULL). */
int dpl_find(const pub_row_t *rows, int n, dpl_ladder_t **out, int *n_out, err_t *err);

/* Points by which the predicted change misses the published one:
 * 100 x |predicted - published|. */
double dpl_gap_points(const dpl_ladder_t *d);

#endif
