/* placement: which ranks of each parallel group share a node.
 *
 * Ranks are numbered in Megatron-LM's order: TP fastest, then CP, then EP
 * (carved out of DP), then DP, then PP; node n holds ranks
 * [n * gpus_per_node, (n + 1) * gpus_per_node). For each kind of group
 * (TP, CP, DP, PP, and DP x CP, over which gradients are reduced) this
 * module reports how many nodes one group spans and how many of its members
 * share a node, so the simulator knows which collectives stay on NVLink and
 * which cross the network. Groups of one kind are congruent in a regular
 * layout; where they are not (degrees that do not divide the node), the
 * worst group is reported. The cost does not grow with the number of GPUs
 * or groups: only a group's first rank modulo the node size matters.
 */
#ifndef SCALEPLAN_TOPOLOGIES_PLACEMENT_H
#define SCALEPLAN_TOPOLOGIES_PLACEMENT_H

#include <stdbool.h>

#include "common/error.h"
#include "models/layout.h"

typedef enum {
    GROUP_TP = 0,
    GROUP_CP,
    GROUP_EP,
    GROUP_DP,
    GROUP_PP,
    GROUP_DP_CP, /* gradient reduction and ZeRO sharding group */
    GROUP_KIND_COUNT
} group_kind_t;

typedef struct {
    int size;           /* ranks in one group */
    int stride;         /* rank distance between consecutive members
                           (for DP x CP: the CP stride, TP) */
    int nodes;          /* nodes one group spans (worst group) */
    int ranks_per_node; /* members on each of those nodes (fewest, worst group) */
    bool crosses_nodes; /* nodes > 1 */
} group_place_t;

typedef struct {
    group_place_t group[GROUP_KIND_COUNT];
    int gpus_per_node;
    int nodes; /* nodes the whole job spans */
} placement_t;

/* Largest node (NVLink domain) placement handles; cluster_validate allows
 * no more. */
#define PLACEMENT_MAX_GPUS_PER_NODE 4096

/* Place the groups of finalized layout l on nodes of gpus_per_node GPUs.
 * ERR_INPUT if gpus_per_node is not from 1 to PLACEMENT_MAX_GPUS_PER_NODE. */
int topo_place_groups(const layout_t *l, int gpus_per_node, placement_t *out,
                      err_t *err);

const char *topo_group_name(group_kind_t k);

#endif
