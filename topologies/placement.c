#include "topologies/placement.h"

#include <stdint.h>
#include <string.h>

const char *topo_group_name(group_kind_t k)
{
    static const char *names[GROUP_KIND_COUNT] = {"tp", "cp", "ep",
                                                  "dp", "pp", "dp_cp"};
    return k < GROUP_KIND_COUNT ? names[k] : "?";
}

static long long gcd_ll(long long a, long long b)
{
    while (b) {
        long long t = a % b;
        a = b;
        b = t;
    }
    return a;
}

/* Smallest k >= 0 with r + k * stride >= x (x >= 0). */
static long long first_member_from(long long r, long long stride, long long x)
{
    return x <= r ? 0 : (x - r + stride - 1) / stride;
}

/* Span of the group whose members are r + k*stride (k < size), r being its
 * first rank modulo the node size gpn: nodes it touches and the fewest of
 * its members on one of them. Closed form, or a walk over at most one
 * period of the node boundaries (fewer than gpn nodes): never a walk over
 * the members. */
static void span_of(long long r, long long stride, int size, int gpn, int *nodes,
                    int *min_per_node)
{
    if (size <= 1) {
        *nodes = size > 0 ? 1 : 0;
        *min_per_node = size;
        return;
    }
    long long last = r + (long long)(size - 1) * stride;
    if (stride >= gpn) { /* consecutive members on consecutive or farther nodes */
        *nodes = size;
        *min_per_node = 1;
        return;
    }
    /* Members are less than a node apart, so no node in between is skipped. */
    long long n = last / gpn + 1;
    *nodes = (int)n;
    if (n == 1) {
        *min_per_node = size;
        return;
    }
    /* Node j (counted from the group's first) holds members a_j .. a_{j+1}-1
     * where a_j is the first member at or past j * gpn. */
    long long first_node = first_member_from(r, stride, gpn);
    long long last_node = size - first_member_from(r, stride, (n - 1) * gpn);
    long long fewest = first_node < last_node ? first_node : last_node;
    /* Interior nodes hold floor or ceil(gpn / stride) members, in a pattern
     * that repeats every stride / gcd(gpn, stride) nodes. */
    long long floor_q = gpn / stride;
    if (n > 2 && floor_q < fewest) {
        long long period = stride / gcd_ll(gpn, stride);
        long long interior = n - 2 < period ? n - 2 : period;
        long long a = first_node;
        for (long long j = 1; j <= interior && fewest > floor_q; j++) {
            long long b = first_member_from(r, stride, (j + 1) * gpn);
            if (b - a < fewest)
                fewest = b - a;
            a = b;
        }
    }
    *min_per_node = (int)fewest;
}

/* Worst span over the groups of one kind. A group's span depends only on
 * its first rank modulo the node size, and the first ranks are sums of one
 * digit times its stride per dimension other than the group's own; digit
 * x of stride s contributes x * s mod gpn, which repeats every
 * gpn / gcd(s, gpn) values. So the first ranks' residues are built digit by
 * digit over at most one period each (at most gpn residues in all) and the
 * work does not grow with the number of groups or GPUs. */
static void place_kind(const int dims[5], const long long strides[5], int kind_dim,
                       long long stride, int size, int gpn, group_place_t *out)
{
    out->size = size;
    out->stride = (int)stride;
    out->nodes = 0;
    out->ranks_per_node = size;
    /* residues[0..n): distinct first ranks modulo gpn; seen marks them */
    uint16_t residues[PLACEMENT_MAX_GPUS_PER_NODE];
    unsigned char seen[PLACEMENT_MAX_GPUS_PER_NODE];
    int n = 1;
    residues[0] = 0;
    memset(seen, 0, (size_t)gpn);
    seen[0] = 1;
    for (int d = 0; d < 5 && n < gpn; d++) {
        if (d == kind_dim || (kind_dim == 5 && (d == 1 || d == 3)))
            continue;
        long long step = strides[d] % gpn;
        long long period = step == 0 ? 1 : gpn / gcd_ll(gpn, step);
        long long digits = dims[d] < period ? dims[d] : period;
        int before = n; /* the sums so far, each plus x * step for x >= 1 */
        for (long long x = 1, add = step; x < digits && n < gpn; x++, add = (add + step) % gpn)
            for (int i = 0; i < before; i++) {
                int res = (int)((residues[i] + add) % gpn);
                if (!seen[res]) {
                    seen[res] = 1;
                    residues[n++] = (uint16_t)res;
                }
            }
    }
    for (int i = 0; i < n; i++) {
        int nodes, per_node;
        span_of(residues[i], stride, size, gpn, &nodes, &per_node);
        if (nodes > out->nodes)
            out->nodes = nodes;
        if (per_node < out->ranks_per_node)
            out->ranks_per_node = per_node;
    }
    out->crosses_nodes = out->nodes > 1;
}

int topo_place_groups(const layout_t *l, int gpus_per_node, placement_t *out,
                      err_t *err)
{
    if (gpus_per_node < 1 || gpus_per_node > PLACEMENT_MAX_GPUS_PER_NODE)
        return err_setf(err, ERR_INPUT, NULL, "--gpus-per-node",
                        "must be from 1 to %d (got %d)", PLACEMENT_MAX_GPUS_PER_NODE,
                        gpus_per_node);
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
