/* heap: a binary min-heap of keyed items, the event queue and the pending
 * queue of the pool replay (cluster/replay.h).
 *
 * An item is ordered by (k1, k2, k3, seq): seq is a counter the heap assigns
 * at push, so items with equal keys come out in the order they went in and
 * a replay is deterministic. Push and pop are O(log n); memory is linear in
 * the items held.
 */
#ifndef SCALEPLAN_CLUSTER_HEAP_H
#define SCALEPLAN_CLUSTER_HEAP_H

#include <stdbool.h>
#include <stdint.h>

#include "common/error.h"

typedef struct {
    double k1, k2, k3; /* the key: events (time ms, kind, 0); waiting jobs
                          (policy class, policy order, arrival rank) */
    uint64_t seq;   /* set by cheap_push */
    int job;        /* index into the job list */
    int kind;       /* event kind (replay's own) */
    uint32_t ver;   /* the job's version when pushed: stale items are skipped */
} cheap_item_t;

typedef struct {
    cheap_item_t *a;
    int n, cap;
    uint64_t next_seq;
} cheap_t;

/* An empty heap (no allocation until the first push). */
void cheap_init(cheap_t *h);
void cheap_free(cheap_t *h);

/* ERR_RUNTIME on OOM (heap unchanged). */
int cheap_push(cheap_t *h, cheap_item_t it, err_t *err);

/* Whether x comes out before y (the order above). */
bool cheap_before(const cheap_item_t *x, const cheap_item_t *y);

/* Restore the heap order after the caller changed items' keys in a[0..n)
 * (their seq kept), O(n). */
void cheap_heapify(cheap_t *h);

/* The smallest item; false when empty. */
bool cheap_peek(const cheap_t *h, cheap_item_t *out);
bool cheap_pop(cheap_t *h, cheap_item_t *out);

#endif
