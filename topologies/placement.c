#include "topologies/placement.h"

#include <stdlib.h>
#include <string.h>

const char *topo_group_name(group_kind_t k)
{
    static const char *names[GROUP_KIND_COUNT] = {"tp", "cp", "ep",
                                                  "dp", "pp", "dp_cp"};
    return k < GROUP_KIND_COUNT ? names[k] : "?";
}

/* Span of the group whose members are first + k*stride (k < size). */
static void span_of(long long first, long long stride, int size, int gpn,
                    int *nodes, int *min_per_node)
{
    long long prev_node = -1;
    int count = 0, n_nodes = 0, min_run = size;
    /* Members are increasing, so a node's members are contiguous in k. */
    for (int k = 0; k < size; k++) {
        long long node = (first + k * stride) / gpn;
        if (node != prev_node) {
            if (count && count < min_run)
                min_run = count;
            n_nodes++;
            count = 0;
            prev_node = node;
        }
        count++;
    }
    if (count && count < min_run)
        min_run = count;
    *nodes = n_nodes;
    *min_per_node = min_run;
}

/* Worst span over the groups of one kind. The span of a group depends only
 * on its first rank modulo the node size, so at most gpus_per_node distinct
 * groups need checking; first ranks are enumerated through the digits of
 * the other dimensions. */
static void place_kind(const int dims[5], const long long strides[5],
                       int kind_dim, long long stride, int size, int gpn,
                       group_place_t *out)
{
    out->size = size;
    out->stride = (int)stride;
    out->nodes = 0;
    out->ranks_per_node = size;
    char *seen = calloc((size_t)gpn, 1);
    long long total = 1;
    for (int d = 0; d < 5; d++)
        total *= dims[d];
    long long groups = total / size, checked = 0;
    for (long long g = 0; g < groups && g < (1 << 16) && checked < gpn; g++) {
        /* Decode g over the dimensions other than the group's own. */
        long long rest = g, first = 0;
        for (int d = 0; d < 5; d++) {
            if (d == kind_dim || (kind_dim == 5 && (d == 1 || d == 3)))
                continue;
            first += (rest % dims[d]) * strides[d];
            rest /= dims[d];
        }
        int residue = (int)(first % gpn);
        if (seen) {
            if (seen[residue])
                continue;
            seen[residue] = 1;
        }
        checked++;
        int nodes, per_node;
        span_of(first, stride, size, gpn, &nodes, &per_node);
        if (nodes > out->nodes)
            out->nodes = nodes;
        if (per_node < out->ranks_per_node)
            out->ranks_per_node = per_node;
        if (!seen)
            break; /* no memory for the table: the first group stands for all */
    }
    out->crosses_nodes = out->nodes > 1;
    free(seen);
}

int topo_place_groups(const layout_t *l, int gpus_per_node, placement_t *out,
                      err_t *err)
{
    if (gpus_per_node < 1)
        return err_setf(err, ERR_INPUT, NULL, "--gpus-per-node",
                        "must be at least 1 (got %d)", gpus_per_node);
    memset(out, 0, sizeof *out);
    out->gpus_per_node = gpus_per_node;
    /* Dimensions fastest first: TP, CP, EP, DP/EP, PP. EP splits DP. */
    int dp_outer = l->dp / (l->ep > 0 ? l->ep : 1);
    if (dp_outer < 1)
        dp_outer = 1;
    int dims[5] = {l->tp, l->cp, l->ep, dp_outer, l->pp};
    long long strides[5];
    strides[0] = 1;
    for (int d = 1; d < 5; d++)
        strides[d] = strides[d - 1] * dims[d - 1];
    long long n = strides[4] * dims[4];
    out->nodes = (int)((n + gpus_per_node - 1) / gpus_per_node);
    place_kind(dims, strides, 0, 1, l->tp, gpus_per_node, &out->group[GROUP_TP]);
    place_kind(dims, strides, 1, strides[1], l->cp, gpus_per_node,
               &out->group[GROUP_CP]);
    place_kind(dims, strides, 2, strides[2], l->ep, gpus_per_node,
               &out->group[GROUP_EP]);
    /* DP spans the EP and outer-DP digits, which are adjacent with stride
     * tp*cp: one group of size dp. Treat it as a single dimension. */
    int dims_dp[5] = {l->tp, l->cp, 1, l->dp, l->pp};
    long long strides_dp[5] = {1, l->tp, (long long)l->tp * l->cp,
                               (long long)l->tp * l->cp, (long long)l->tp * l->cp * l->dp};
    place_kind(dims_dp, strides_dp, 3, strides_dp[3], l->dp, gpus_per_node,
               &out->group[GROUP_DP]);
    place_kind(dims_dp, strides_dp, 4, strides_dp[4], l->pp, gpus_per_node,
               &out->group[GROUP_PP]);
    /* DP x CP: ranks with equal TP and PP digits, stride TP, size cp*dp. */
    place_kind(dims_dp, strides_dp, 5, l->tp, l->cp * l->dp, gpus_per_node,
               &out->group[GROUP_DP_CP]);
    return ERR_OK;
}
