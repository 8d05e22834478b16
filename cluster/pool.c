#include "cluster/pool.h"

#include <stdlib.h>
#include <string.h>

/* Nodes are numbered across the groups (group g's are base[g] ..
 * base[g] + n_nodes[g] - 1); each group keeps its own free-count buckets. */
struct cpool {
    int n_groups, n_nodes, gpn_max;
    int *base, *group_nodes, *gpn; /* [n_groups] */
    int *group_free;               /* [n_groups] free GPUs */
    int *grp;                      /* [n_nodes] the node's group */
    int *free_gpus;   /* [n_nodes] free GPUs per node */
    int *next, *prev; /* [n_nodes] the node's neighbours in its bucket (-1 = none) */
    int *head;        /* [n_groups x (gpn_max + 1)] first node with that many free GPUs */
    int *count;       /* [n_groups x (gpn_max + 1)] nodes with that many free GPUs */
    int total_free;
};

static int *bucket(const cpool_t *p, int *arr, int g, int f)
{
    return &arr[g * (p->gpn_max + 1) + f];
}

static void unlink_node(cpool_t *p, int n)
{
    int f = p->free_gpus[n], g = p->grp[n];
    if (p->prev[n] >= 0)
        p->next[p->prev[n]] = p->next[n];
    else
        *bucket(p, p->head, g, f) = p->next[n];
    if (p->next[n] >= 0)
        p->prev[p->next[n]] = p->prev[n];
    (*bucket(p, p->count, g, f))--;
}

static void link_node(cpool_t *p, int n)
{
    int f = p->free_gpus[n], g = p->grp[n];
    int *h = bucket(p, p->head, g, f);
    p->prev[n] = -1;
    p->next[n] = *h;
    if (*h >= 0)
        p->prev[*h] = n;
    *h = n;
    (*bucket(p, p->count, g, f))++;
}

/* Change node n's free count by delta, moving it between buckets. */
static void adjust(cpool_t *p, int n, int delta)
{
    unlink_node(p, n);
    p->free_gpus[n] += delta;
    p->total_free += delta;
    p->group_free[p->grp[n]] += delta;
    link_node(p, n);
}

/* The arrays of a pool of n_groups groups and n nodes; false on OOM. */
static bool alloc_arrays(cpool_t *p, int n_groups, int n)
{
    size_t buckets = (size_t)n_groups * ((size_t)p->gpn_max + 1);
    p->base = malloc((size_t)n_groups * sizeof(int));
    p->group_nodes = malloc((size_t)n_groups * sizeof(int));
    p->gpn = malloc((size_t)n_groups * sizeof(int));
    p->group_free = calloc((size_t)n_groups, sizeof(int));
    p->grp = malloc((size_t)n * sizeof(int));
    p->free_gpus = malloc((size_t)n * sizeof(int));
    p->next = malloc((size_t)n * sizeof(int));
    p->prev = malloc((size_t)n * sizeof(int));
    p->head = malloc(buckets * sizeof(int));
    p->count = calloc(buckets, sizeof(int));
    return p->base && p->group_nodes && p->gpn && p->group_free && p->grp && p->free_gpus &&
           p->next && p->prev && p->head && p->count;
}

cpool_t *cpool_create_groups(const int *gpus, const int *gpus_per_node, int n_groups, err_t *err)
{
    int n = 0, gpn_max = 1;
    for (int g = 0; g < n_groups; g++) {
        if (gpus_per_node[g] < 1 || gpus[g] < 1 || gpus[g] % gpus_per_node[g]) {
            err_set(err, ERR_INPUT, "--gpus-per-node: %d must divide the %d GPUs of group %d",
                    gpus_per_node[g], gpus[g], g + 1);
            return NULL;
        }
        n += gpus[g] / gpus_per_node[g];
        gpn_max = gpus_per_node[g] > gpn_max ? gpus_per_node[g] : gpn_max;
    }
    cpool_t *p = n_groups > 0 ? calloc(1, sizeof *p) : NULL;
    if (p) {
        p->n_groups = n_groups;
        p->n_nodes = n;
        p->gpn_max = gpn_max;
    }
    if (!p || !alloc_arrays(p, n_groups, n)) {
        cpool_destroy(p);
        err_set(err, ERR_RUNTIME, "out of memory for a pool of %d nodes", n);
        return NULL;
    }
    for (int i = 0; i < n_groups * (gpn_max + 1); i++)
        p->head[i] = -1;
    for (int g = 0, next = 0; g < n_groups; g++) {
        p->base[g] = next;
        p->group_nodes[g] = gpus[g] / gpus_per_node[g];
        p->gpn[g] = gpus_per_node[g];
        next += p->group_nodes[g];
        for (int i = next - 1; i >= p->base[g]; i--) { /* the group's first node first */
            p->grp[i] = g;
            p->free_gpus[i] = gpus_per_node[g];
            link_node(p, i);
        }
        p->group_free[g] = gpus[g];
        p->total_free += gpus[g];
    }
    return p;
}

cpool_t *cpool_create(int n_gpus, int gpus_per_node, err_t *err)
{
    if (gpus_per_node < 1 || n_gpus < 1 || n_gpus % gpus_per_node) {
        err_set(err, ERR_INPUT, "--gpus-per-node: %d must divide --gpus %d", gpus_per_node,
                n_gpus);
        return NULL;
    }
    return cpool_create_groups(&n_gpus, &gpus_per_node, 1, err);
}

void cpool_destroy(cpool_t *p)
{
    if (!p)
        return;
    free(p->base);
    free(p->group_nodes);
    free(p->gpn);
    free(p->group_free);
    free(p->grp);
    free(p->free_gpus);
    free(p->next);
    free(p->prev);
    free(p->head);
    free(p->count);
    free(p);
}

int cpool_gpus(const cpool_t *p)
{
    int n = 0;
    for (int g = 0; g < p->n_groups; g++)
        n += p->group_nodes[g] * p->gpn[g];
    return n;
}

int cpool_free_gpus(const cpool_t *p) { return p->total_free; }
int cpool_groups(const cpool_t *p) { return p->n_groups; }
int cpool_group_gpus(const cpool_t *p, int g) { return p->group_nodes[g] * p->gpn[g]; }

/* The bucket the remainder of a gang goes to in group g: the fullest
 * partly free node that holds rem GPUs (best fit), or -1 when only whole
 * free nodes do. */
static int best_fit_bucket(const cpool_t *p, int g, int rem)
{
    for (int f = rem; f < p->gpn[g]; f++)
        if (*bucket(p, p->count, g, f) > 0)
            return f;
    return -1;
}

static bool fits_group(const cpool_t *p, int g, int gpus)
{
    if (gpus < 1 || gpus > p->group_free[g])
        return false;
    int gpn = p->gpn[g], full = gpus / gpn, rem = gpus % gpn, whole = *bucket(p, p->count, g, gpn);
    if (whole < full)
        return false;
    return rem == 0 || best_fit_bucket(p, g, rem) >= 0 || whole >= full + 1;
}

/* The first group (in order) where a gang of gpus fits, within group
 * (-1: any); -1 when none. */
static int fitting_group(const cpool_t *p, int gpus, int group)
{
    for (int g = group < 0 ? 0 : group; g < (group < 0 ? p->n_groups : group + 1); g++)
        if (fits_group(p, g, gpus))
            return g;
    return -1;
}

bool cpool_fits_in(const cpool_t *p, int gpus, int group)
{
    return group < p->n_groups && fitting_group(p, gpus, group) >= 0;
}

bool cpool_fits(const cpool_t *p, int gpus)
{
    return cpool_fits_in(p, gpus, -1);
}

int cpool_place_in(cpool_t *p, int gpus, int group, cpool_place_t *out, err_t *err)
{
    int g = group < p->n_groups ? fitting_group(p, gpus, group) : -1;
    if (g < 0)
        return err_set(err, ERR_INPUT, "a gang of %d GPUs does not fit", gpus);
    int gpn = p->gpn[g], full = gpus / gpn, rem = gpus % gpn;
    out->n_parts = full + (rem > 0);
    out->gpus = gpus;
    out->group = g;
    out->parts = malloc((size_t)out->n_parts * sizeof *out->parts);
    if (!out->parts)
        return err_set(err, ERR_RUNTIME, "out of memory placing a gang of %d GPUs", gpus);
    int k = 0;
    if (rem > 0) { /* before the whole nodes, so a partial node is preferred */
        int f = best_fit_bucket(p, g, rem);
        int n = *bucket(p, p->head, g, f >= 0 ? f : gpn);
        out->parts[k++] = (cpool_part_t){n, rem};
        adjust(p, n, -rem);
    }
    for (int i = 0; i < full; i++) {
        int n = *bucket(p, p->head, g, gpn);
        out->parts[k++] = (cpool_part_t){n, gpn};
        adjust(p, n, -gpn);
    }
    return ERR_OK;
}

int cpool_place(cpool_t *p, int gpus, cpool_place_t *out, err_t *err)
{
    return cpool_place_in(p, gpus, -1, out, err);
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
    if (dst->n_nodes != src->n_nodes || dst->n_groups != src->n_groups ||
        dst->gpn_max != src->gpn_max)
        return false;
    size_t buckets = (size_t)src->n_groups * ((size_t)src->gpn_max + 1) * sizeof(int);
    memcpy(dst->head, src->head, buckets);
    memcpy(dst->count, src->count, buckets);
    size_t bytes = (size_t)src->n_nodes * sizeof(int);
    memcpy(dst->free_gpus, src->free_gpus, bytes);
    memcpy(dst->next, src->next, bytes);
    memcpy(dst->prev, src->prev, bytes);
    memcpy(dst->group_free, src->group_free, (size_t)src->n_groups * sizeof(int));
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
    size_t buckets = (size_t)p->n_groups * ((size_t)p->gpn_max + 1);
    int *seen = calloc(buckets, sizeof(int));
    if (!seen)
        return false;
    bool ok = true;
    for (int i = 0; i < p->n_nodes; i++) {
        ok = ok && p->free_gpus[i] >= 0 && p->free_gpus[i] <= p->gpn[p->grp[i]];
        total += p->free_gpus[i];
    }
    for (int g = 0; ok && g < p->n_groups; g++)
        for (int f = 0; ok && f <= p->gpn[g]; f++)
            for (int n = *bucket(p, p->head, g, f); n >= 0 && ok; n = p->next[n]) {
                ok = p->free_gpus[n] == f && p->grp[n] == g;
                (*bucket(p, seen, g, f))++;
            }
    for (size_t i = 0; ok && i < buckets; i++)
        ok = seen[i] == p->count[i];
    free(seen);
    return ok && total == p->total_free;
}
