#include "cluster/pool.h"

#include <stdlib.h>
#include <string.h>

struct cpool {
    int n_nodes, gpn;
    int *free_gpus;   /* [n_nodes] free GPUs per node */
    int *next, *prev; /* [n_nodes] the node's neighbours in its bucket (-1 = none) */
    int *head;        /* [gpn + 1] first node with that many free GPUs */
    int *count;       /* [gpn + 1] nodes with that many free GPUs */
    int total_free;
};

static void unlink_node(cpool_t *p, int n)
{
    int f = p->free_gpus[n];
    if (p->prev[n] >= 0)
        p->next[p->prev[n]] = p->next[n];
    else
        p->head[f] = p->next[n];
    if (p->next[n] >= 0)
        p->prev[p->next[n]] = p->prev[n];
    p->count[f]--;
}

static void link_node(cpool_t *p, int n)
{
    int f = p->free_gpus[n];
    p->prev[n] = -1;
    p->next[n] = p->head[f];
    if (p->head[f] >= 0)
        p->prev[p->head[f]] = n;
    p->head[f] = n;
    p->count[f]++;
}

/* Change node n's free count by delta, moving it between buckets. */
static void adjust(cpool_t *p, int n, int delta)
{
    unlink_node(p, n);
    p->free_gpus[n] += delta;
    p->total_free += delta;
    link_node(p, n);
}

cpool_t *cpool_create(int n_gpus, int gpus_per_node, err_t *err)
{
    if (gpus_per_node < 1 || n_gpus < 1 || n_gpus % gpus_per_node) {
        err_set(err, ERR_INPUT, "--gpus-per-node: %d must divide --gpus %d", gpus_per_node,
                n_gpus);
        return NULL;
    }
    cpool_t *p = calloc(1, sizeof *p);
    int n = n_gpus / gpus_per_node;
    if (p) {
        p->n_nodes = n;
        p->gpn = gpus_per_node;
        p->free_gpus = malloc((size_t)n * sizeof(int));
        p->next = malloc((size_t)n * sizeof(int));
        p->prev = malloc((size_t)n * sizeof(int));
        p->head = malloc((size_t)(gpus_per_node + 1) * sizeof(int));
        p->count = calloc((size_t)gpus_per_node + 1, sizeof(int));
    }
    if (!p || !p->free_gpus || !p->next || !p->prev || !p->head || !p->count) {
        cpool_destroy(p);
        err_set(err, ERR_RUNTIME, "out of memory for a pool of %d nodes", n);
        return NULL;
    }
    for (int f = 0; f <= gpus_per_node; f++)
        p->head[f] = -1;
    for (int i = n - 1; i >= 0; i--) { /* node 0 first in its bucket */
        p->free_gpus[i] = gpus_per_node;
        link_node(p, i);
    }
    p->total_free = n_gpus;
    return p;
}

void cpool_destroy(cpool_t *p)
{
    if (!p)
        return;
    free(p->free_gpus);
    free(p->next);
    free(p->prev);
    free(p->head);
    free(p->count);
    free(p);
}

int cpool_gpus(const cpool_t *p) { return p->n_nodes * p->gpn; }
int cpool_free_gpus(const cpool_t *p) { return p->total_free; }
int cpool_gpus_per_node(const cpool_t *p) { return p->gpn; }

/* The bucket the remainder of a gang goes to: the fullest partly free node
 * that holds rem GPUs (best fit), or -1 when only whole free nodes do. */
static int best_fit_bucket(const cpool_t *p, int rem)
{
    for (int f = rem; f < p->gpn; f++)
        if (p->count[f] > 0)
            return f;
    return -1;
}

bool cpool_fits(const cpool_t *p, int gpus)
{
    if (gpus < 1 || gpus > p->total_free)
        return false;
    int full = gpus / p->gpn, rem = gpus % p->gpn;
    if (p->count[p->gpn] < full)
        return false;
    return rem == 0 || best_fit_bucket(p, rem) >= 0 || p->count[p->gpn] >= full + 1;
}

int cpool_place(cpool_t *p, int gpus, cpool_place_t *out, err_t *err)
{
    if (!cpool_fits(p, gpus))
        return err_set(err, ERR_INPUT, "a gang of %d GPUs does not fit", gpus);
    int full = gpus / p->gpn, rem = gpus % p->gpn;
    out->n_parts = full + (rem > 0);
    out->gpus = gpus;
    out->parts = malloc((size_t)out->n_parts * sizeof *out->parts);
    if (!out->parts)
        return err_set(err, ERR_RUNTIME, "out of memory placing a gang of %d GPUs", gpus);
    int k = 0;
    if (rem > 0) { /* before the whole nodes, so a partial node is preferred */
        int f = best_fit_bucket(p, rem);
        int n = p->head[f >= 0 ? f : p->gpn];
        out->parts[k++] = (cpool_part_t){n, rem};
        adjust(p, n, -rem);
    }
    for (int i = 0; i < full; i++) {
        int n = p->head[p->gpn];
        out->parts[k++] = (cpool_part_t){n, p->gpn};
        adjust(p, n, -p->gpn);
    }
    return ERR_OK;
}

void cpool_give_back(cpool_t *p, const cpool_place_t *pl)
{
    for (int i = 0; i < pl->n_parts; i++)
        adjust(p, pl->parts[i].node, pl->parts[i].gpus);
}

void cpool_place_free(cpool_place_t *pl)
{
    free(pl->parts);
    pl->parts = NULL;
    pl->n_parts = 0;
}

void cpool_release(cpool_t *p, cpool_place_t *pl)
{
    cpool_give_back(p, pl);
    cpool_place_free(pl);
}

bool cpool_copy(cpool_t *dst, const cpool_t *src)
{
    if (dst->n_nodes != src->n_nodes || dst->gpn != src->gpn)
        return false;
    for (int f = 0; f <= src->gpn; f++) {
        dst->head[f] = src->head[f];
        dst->count[f] = src->count[f];
    }
    size_t bytes = (size_t)src->n_nodes * sizeof(int);
    memcpy(dst->free_gpus, src->free_gpus, bytes);
    memcpy(dst->next, src->next, bytes);
    memcpy(dst->prev, src->prev, bytes);
    dst->total_free = src->total_free;
    return true;
}

bool cpool_retake(cpool_t *p, const cpool_place_t *pl)
{
    for (int i = 0; i < pl->n_parts; i++)
        if (p->free_gpus[pl->parts[i].node] < pl->parts[i].gpus)
            return false;
    for (int i = 0; i < pl->n_parts; i++)
        adjust(p, pl->parts[i].node, -pl->parts[i].gpus);
    return true;
}

bool cpool_check(const cpool_t *p)
{
    long total = 0;
    int *seen = calloc((size_t)p->gpn + 1, sizeof(int));
    if (!seen)
        return false;
    bool ok = true;
    for (int i = 0; i < p->n_nodes; i++) {
        ok = ok && p->free_gpus[i] >= 0 && p->free_gpus[i] <= p->gpn;
        total += p->free_gpus[i];
    }
    for (int f = 0; ok && f <= p->gpn; f++)
        for (int n = p->head[f]; n >= 0 && ok; n = p->next[n]) {
            ok = p->free_gpus[n] == f;
            seen[f]++;
        }
    for (int f = 0; ok && f <= p->gpn; f++)
        ok = seen[f] == p->count[f];
    free(seen);
    return ok && total == p->total_free;
}
