/* pool: the GPUs of a cluster as nodes, and node-granular gang placement.
 *
 * A pool is one or more groups (one GPU type each) of nodes of
 * gpus_per_node GPUs; a gang is placed inside one group, the first listed
 * that holds it unless the job names its group. A job of g GPUs is
 * placed all at once or not at all: g / gpus_per_node whole free nodes and
 * the remainder (g mod gpus_per_node) on one more node, chosen best-fit
 * (the node with the fewest free GPUs that still hold it), so that small
 * jobs fill partly used nodes and whole nodes stay free for large jobs.
 * Nodes are kept in buckets by their free-GPU count, so a fit test and a
 * placement cost O(gpus_per_node + nodes used), not O(nodes).
 *
 * A placement is the list of (node, gpus) pairs it took; cpool_release
 * gives exactly those back. The pool never hands out more GPUs than a node
 * has (cpool_check verifies the books).
 */
#ifndef SCALEPLAN_CLUSTER_POOL_H
#define SCALEPLAN_CLUSTER_POOL_H

#include <stdbool.h>

#include "common/error.h"

typedef struct cpool cpool_t;

typedef struct {
    int node;
    int gpus;
} cpool_part_t;

typedef struct {
    cpool_part_t *parts; /* owned; freed by cpool_release */
    int n_parts;
    int gpus;
    int group;           /* the group it was placed in */
} cpool_place_t;

/* A pool of n_gpus GPUs in nodes of gpus_per_node (n_gpus must divide by
 * it: ERR_INPUT naming --gpus-per-node otherwise). NULL on error. */
cpool_t *cpool_create(int n_gpus, int gpus_per_node, err_t *err);
void cpool_destroy(cpool_t *p);

/* A pool of n_groups groups, group g gpus[g] GPUs in nodes of
 * gpus_per_node[g] (which must divide it). NULL on error. */
cpool_t *cpool_create_groups(const int *gpus, const int *gpus_per_node, int n_groups, err_t *err);

int cpool_gpus(const cpool_t *p);
int cpool_free_gpus(const cpool_t *p);
int cpool_groups(const cpool_t *p);
int cpool_group_gpus(const cpool_t *p, int group);

/* Whether a gang of gpus GPUs can be placed now: in any group, or in
 * group (-1: any). */
bool cpool_fits(const cpool_t *p, int gpus);
bool cpool_fits_in(const cpool_t *p, int gpus, int group);

/* Place a gang of gpus GPUs: ERR_OK and *out filled (parts owned by the
 * caller until cpool_release), or ERR_INPUT when it does not fit (pool
 * unchanged), ERR_RUNTIME on OOM (pool unchanged). */
int cpool_place(cpool_t *p, int gpus, cpool_place_t *out, err_t *err);
/* The same within group (-1: the first group that holds it). */
int cpool_place_in(cpool_t *p, int gpus, int group, cpool_place_t *out, err_t *err);

/* Give a placement's GPUs back and free its parts. */
void cpool_release(cpool_t *p, cpool_place_t *pl);

/* Give a placement's GPUs back but keep its parts (the caller may retake
 * them, or free them with cpool_place_free). */
void cpool_give_back(cpool_t *p, const cpool_place_t *pl);

/* Take exactly the GPUs of a placement (after cpool_give_back, or on
 * another pool of the same shape). false, pool unchanged, when one of its
 * nodes lacks the GPUs. */
bool cpool_retake(cpool_t *p, const cpool_place_t *pl);

void cpool_place_free(cpool_place_t *pl);

/* Make dst's free GPUs those of src (same shape: false otherwise). */
bool cpool_copy(cpool_t *dst, const cpool_t *src);

/* The books: every node's free count within [0, gpus_per_node] and the
 * buckets consistent with them. For tests. */
bool cpool_check(const cpool_t *p);

#endif
