/* Tests of topologies/placement: Megatron rank order on nodes. */
#include "topologies/placement.h"
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

TEST_SUITE(suite_placement, "placement", TEST(test_llama3_405b_layout),
           TEST(test_shared_nodes), TEST(test_context_parallel), TEST(test_misaligned_groups));
