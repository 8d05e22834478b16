/* Tests of topologies/placement: Megatron rank order on nodes. */
#include "topologies/placement.h"

#include <stdio.h>
#include <stdlib.h>

#include "tests/testing.h"

static layout_t dims(int tp, int cp, int dp, int pp)
{
    layout_t l;
    layout_defaults(&l);
    l.tp = tp;
    l.cp = cp;
    l.dp = dp;
    l.pp = pp;
    l.n_gpus = tp * cp * dp * pp;
    return l;
}

static placement_t place(layout_t l, int gpn)
{
    placement_t p;
    err_t e;
    CU_ASSERT_EQUAL_FATAL(topo_place_groups(&l, gpn, &p, &e), 0);
    return p;
}

/* Llama 3 405B's layout, TP8 PP16 DP128 on 8-GPU nodes: a TP group is one
 * node; DP members are 8 ranks apart, one per node, 128 nodes; PP members
 * are 1024 ranks (128 nodes) apart. */
static void test_llama3_405b_layout(void)
{
    placement_t p = place(dims(8, 1, 128, 16), 8);
    CU_ASSERT_EQUAL(p.nodes, 2048);
    CU_ASSERT_EQUAL(p.group[GROUP_TP].nodes, 1);
    CU_ASSERT_EQUAL(p.group[GROUP_TP].ranks_per_node, 8);
    CU_ASSERT_FALSE(p.group[GROUP_TP].crosses_nodes);
    CU_ASSERT_EQUAL(p.group[GROUP_DP].nodes, 128);
    CU_ASSERT_EQUAL(p.group[GROUP_DP].ranks_per_node, 1);
    CU_ASSERT_EQUAL(p.group[GROUP_DP].stride, 8);
    CU_ASSERT_EQUAL(p.group[GROUP_PP].nodes, 16);
    CU_ASSERT_EQUAL(p.group[GROUP_PP].stride, 1024);
    CU_ASSERT_TRUE(p.group[GROUP_PP].crosses_nodes);
}

/* Small groups that share a node: TP2 DP4 on one 8-GPU node keeps DP on
 * NVLink; TP4 DP4 on two nodes puts two DP members on each node
 * (ranks 0, 4 | 8, 12). */
static void test_shared_nodes(void)
{
    placement_t p = place(dims(2, 1, 4, 1), 8);
    CU_ASSERT_EQUAL(p.group[GROUP_DP].nodes, 1);
    CU_ASSERT_EQUAL(p.group[GROUP_DP].ranks_per_node, 4);
    p = place(dims(4, 1, 4, 1), 8);
    CU_ASSERT_EQUAL(p.group[GROUP_DP].nodes, 2);
    CU_ASSERT_EQUAL(p.group[GROUP_DP].ranks_per_node, 2);
    /* TP16 on 8-GPU nodes crosses a node boundary */
    p = place(dims(16, 1, 2, 1), 8);
    CU_ASSERT_EQUAL(p.group[GROUP_TP].nodes, 2);
    CU_ASSERT_EQUAL(p.group[GROUP_TP].ranks_per_node, 8);
}

/* CP sits between TP and DP: TP2 CP2 DP2 on 8-GPU nodes; the gradient
 * group DP x CP is ranks {0, 2, 4, 6}. */
static void test_context_parallel(void)
{
    placement_t p = place(dims(2, 2, 2, 1), 8);
    CU_ASSERT_EQUAL(p.group[GROUP_CP].size, 2);
    CU_ASSERT_EQUAL(p.group[GROUP_CP].stride, 2);
    CU_ASSERT_EQUAL(p.group[GROUP_DP].stride, 4);
    CU_ASSERT_EQUAL(p.group[GROUP_DP_CP].size, 4);
    CU_ASSERT_EQUAL(p.group[GROUP_DP_CP].stride, 2);
    CU_ASSERT_EQUAL(p.group[GROUP_DP_CP].nodes, 1);
    /* On 4-GPU nodes, CP pairs stay together but DP x CP spans two nodes. */
    p = place(dims(2, 2, 2, 1), 4);
    CU_ASSERT_EQUAL(p.group[GROUP_CP].nodes, 1);
    CU_ASSERT_EQUAL(p.group[GROUP_DP_CP].nodes, 2);
    CU_ASSERT_EQUAL(p.group[GROUP_DP_CP].ranks_per_node, 2);
}

/* A degree that does not divide the node: TP3 groups {0,1,2} {3,4,5}
 * {6,7,8} - the third straddles two 8-GPU nodes, so the worst group spans 2
 * nodes with as few as 1 member on one of them. */
static void test_misaligned_groups(void)
{
    placement_t p = place(dims(3, 1, 8, 1), 8);
    CU_ASSERT_EQUAL(p.group[GROUP_TP].nodes, 2);
    CU_ASSERT_EQUAL(p.group[GROUP_TP].ranks_per_node, 1);
    err_t e;
    placement_t q;
    layout_t l = dims(1, 1, 1, 1);
    int rc = topo_place_groups(&l, 0, &q, &e);
    CHECK_ERR(rc, &e, ERR_INPUT, "--gpus-per-node");
}

/* ------------------------------------------------ brute-force reference */

/* The definition, walked rank by rank: every group of the kind, every
 * member, every node it touches. Digits of a rank in Megatron order (TP
 * fastest, then CP, EP, DP/EP, PP); a group of a kind is the set of ranks
 * that differ only in that kind's digits. */
typedef struct {
    int nodes, per_node;
} ref_span_t;

static ref_span_t ref_kind(const layout_t *l, int gpn, group_kind_t kind)
{
    int dpo = l->dp / l->ep;
    int dims[5] = {l->tp, l->cp, l->ep, dpo, l->pp};
    /* which digits vary inside one group */
    bool own[GROUP_KIND_COUNT][5] = {
        [GROUP_TP] = {1, 0, 0, 0, 0}, [GROUP_CP] = {0, 1, 0, 0, 0},
        [GROUP_EP] = {0, 0, 1, 0, 0}, [GROUP_DP] = {0, 0, 1, 1, 0},
        [GROUP_PP] = {0, 0, 0, 0, 1}, [GROUP_DP_CP] = {0, 1, 1, 1, 0}};
    int total = l->tp * l->cp * l->dp * l->pp;
    /* per group (numbered by its other digits): the node of its latest
     * member, how many members that node holds so far, nodes, fewest */
    int *last = malloc((size_t)total * sizeof *last), *run = calloc((size_t)total, sizeof *run);
    int *nodes = calloc((size_t)total, sizeof *nodes), *fewest = malloc((size_t)total * sizeof *fewest);
    CU_ASSERT_FATAL(last && run && nodes && fewest);
    for (int i = 0; i < total; i++)
        last[i] = -1, fewest[i] = total;
    int groups = 0;
    for (int rank = 0; rank < total; rank++) { /* members of a group come in rank order */
        int x = rank, gid = 0, radix = 1;
        for (int d = 0; d < 5; d++) {
            if (!own[kind][d]) {
                gid += (x % dims[d]) * radix;
                radix *= dims[d];
            }
            x /= dims[d];
        }
        groups = radix;
        int node = rank / gpn;
        if (node != last[gid]) {
            if (run[gid] && run[gid] < fewest[gid])
                fewest[gid] = run[gid];
            nodes[gid]++;
            run[gid] = 0;
            last[gid] = node;
        }
        run[gid]++;
    }
    ref_span_t worst = {0, total};
    for (int g = 0; g < groups; g++) {
        if (run[g] < fewest[g])
            fewest[g] = run[g];
        if (nodes[g] > worst.nodes)
            worst.nodes = nodes[g];
        if (fewest[g] < worst.per_node)
            worst.per_node = fewest[g];
    }
    free(last);
    free(run);
    free(nodes);
    free(fewest);
    return worst;
}

/* The O(1) placement agrees with the walk over every rank on a sweep of
 * degrees that divide the node and degrees that do not (3, 5, 6, 12, 72
 * GPUs per node), with CP, EP and several pipeline stages. */
static void test_matches_brute_force(void)
{
    static const int tps[] = {1, 2, 3, 4, 8, 16}, cps[] = {1, 2, 3}, dps[] = {1, 2, 4, 5, 6, 12};
    static const int pps[] = {1, 2, 3, 4}, eps[] = {1, 2}, gpns[] = {1, 3, 4, 5, 6, 8, 12, 72};
    int checked = 0, straddling = 0;
    for (size_t a = 0; a < sizeof tps / sizeof *tps; a++)
        for (size_t b = 0; b < sizeof cps / sizeof *cps; b++)
            for (size_t c = 0; c < sizeof dps / sizeof *dps; c++)
                for (size_t d = 0; d < sizeof pps / sizeof *pps; d++)
                    for (size_t e = 0; e < sizeof eps / sizeof *eps; e++) {
                        if (dps[c] % eps[e])
                            continue;
                        layout_t l = dims(tps[a], cps[b], dps[c], pps[d]);
                        l.ep = eps[e];
                        for (size_t g = 0; g < sizeof gpns / sizeof *gpns; g++) {
                            placement_t p = place(l, gpns[g]);
                            CU_ASSERT_EQUAL(p.nodes, (l.n_gpus + gpns[g] - 1) / gpns[g]);
                            for (int k = 0; k < GROUP_KIND_COUNT; k++) {
                                ref_span_t ref = ref_kind(&l, gpns[g], (group_kind_t)k);
                                const group_place_t *q = &p.group[k];
                                if (q->nodes != ref.nodes || q->ranks_per_node != ref.per_node)
                                    printf("\n  TP%d CP%d EP%d DP%d PP%d on %d per node, %s: "
                                           "%d nodes x %d, expected %d x %d",
                                           l.tp, l.cp, l.ep, l.dp, l.pp, gpns[g],
                                           topo_group_name((group_kind_t)k), q->nodes,
                                           q->ranks_per_node, ref.nodes, ref.per_node);
                                CU_ASSERT_EQUAL(q->nodes, ref.nodes);
                                CU_ASSERT_EQUAL(q->ranks_per_node, ref.per_node);
                                CU_ASSERT_EQUAL(q->crosses_nodes, ref.nodes > 1);
                                straddling += ref.nodes > 1 && ref.per_node * ref.nodes != q->size;
                                checked++;
                            }
                        }
                    }
    /* the sweep covers groups split unevenly over nodes, not only aligned ones */
    CU_ASSERT(checked > 10000);
    CU_ASSERT(straddling > 100);
}

/* Llama 3 405B at 131,072 GPUs (TP8 PP16 DP1024): the same answer as the
 * small-scale layouts give by hand (a TP group is one node, DP members one
 * per node over 1,024 nodes, PP members 8,192 ranks apart), and a node size
 * beyond what placement handles is refused. */
static void test_large_and_limits(void)
{
    placement_t p = place(dims(8, 1, 1024, 16), 8);
    CU_ASSERT_EQUAL(p.nodes, 16384);
    CU_ASSERT_EQUAL(p.group[GROUP_TP].nodes, 1);
    CU_ASSERT_EQUAL(p.group[GROUP_DP].nodes, 1024);
    CU_ASSERT_EQUAL(p.group[GROUP_DP].ranks_per_node, 1);
    CU_ASSERT_EQUAL(p.group[GROUP_PP].nodes, 16);
    CU_ASSERT_EQUAL(p.group[GROUP_PP].stride, 8192);
    /* TP1 CP1 DP131072 on 72-GPU racks: the gradient group fills 1,821
     * racks (131,072 / 72 rounded up) and the last holds 32 (131,072 - 1,820 x 72) */
    p = place(dims(1, 1, 131072, 1), 72);
    CU_ASSERT_EQUAL(p.group[GROUP_DP_CP].nodes, 1821);
    CU_ASSERT_EQUAL(p.group[GROUP_DP_CP].ranks_per_node, 32);
    err_t e;
    placement_t q;
    layout_t l = dims(1, 1, 1, 1);
    int rc = topo_place_groups(&l, PLACEMENT_MAX_GPUS_PER_NODE + 1, &q, &e);
    CHECK_ERR(rc, &e, ERR_INPUT, "--gpus-per-node", "4096");
}

TEST_SUITE(suite_placement, "placement", TEST(test_llama3_405b_layout),
           TEST(test_shared_nodes), TEST(test_context_parallel), TEST(test_misaligned_groups),
           TEST(test_matches_brute_force), TEST(test_large_and_limits));
