/* host: the CPU that issues a training step's kernels, beside the GPU that
 * runs them.
 *
 * A PyTorch framework issues every kernel from a host thread: Python, the
 * framework's own logic and the dispatcher cost microseconds per operation
 * whatever the operation's size. The GPU runs a kernel only once the host
 * has issued it, so a layer made of many small kernels (fine-grained
 * mixture-of-experts blocks: router, permutes, per-expert quantization and
 * GEMMs) can take as long as its host thread does, not its kernels
 * ("CPU overhead" or "host boundedness": Megatron-LM
 * docs/discussions/deepseek-v3-gb200-optimization, sec. 2). Normally the host
 * runs ahead and the GPU never waits; a device-to-host synchronization (a
 * dropless MoE block reads how many tokens each expert got before it can size
 * its all-to-all and grouped GEMM: megatron/core/transformer/moe/
 * token_dispatcher.py) empties the GPU's queue, and after it the GPU waits
 * for every kernel the host issues until the host gets ahead again.
 *
 * This module races the two: items in issue order, each with the host time
 * to issue it and its GPU time, split into equal kernels. CUDA graphs
 * replace a captured scope's issue cost by one replay (Megatron-Core
 * --cuda-graph-scope). */
#ifndef SCALEPLAN_FRAMEWORKS_HOST_H
#define SCALEPLAN_FRAMEWORKS_HOST_H

#include <stdbool.h>

#include "common/error.h"

/* Megatron-Core's --cuda-graph-scope values (transformer_config.py): what a
 * partial CUDA graph captures. */
enum {
    HOST_GRAPH_ATTN = 1u << 0,           /* attention: norm through the residual */
    HOST_GRAPH_MLP = 1u << 1,            /* a dense layer's MLP */
    HOST_GRAPH_MOE = 1u << 2,            /* a whole MoE block (token-drop only) */
    HOST_GRAPH_MOE_ROUTER = 1u << 3,     /* the router (and the shared experts) */
    HOST_GRAPH_MOE_PREPROCESS = 1u << 4, /* the dispatcher's preprocess (with moe_router) */
    HOST_GRAPH_FULL = 1u << 5            /* the whole iteration (no MoE sync) */
};

/* How a framework's host issues work (sim_options_t.host). */
typedef struct {
    double op_us;        /* host time to issue one framework operation from
                            Python (0: the host is not modelled) */
    double launch_us;    /* host time per kernel launched from C++ inside one
                            operation (a grouped GEMM's per-expert GEMMs and
                            quantizations) */
    double graph_us;     /* host time to replay one captured CUDA graph */
    unsigned graph_scopes; /* HOST_GRAPH_* captured */
    bool graph_scopes_given; /* named by the user or the run's file (else the
                                preset's or its recipe's: the planner
                                searches others) */
    bool router_fusion;  /* Megatron-Core --moe-router-fusion */
} host_opts_t;

/* "attn,moe_router,..." (commas or blanks; "none" or "" for none) into
 * HOST_GRAPH_* bits; ERR_INPUT naming field (NULL: a message without it, for
 * a caller that names the file and flag itself) and the accepted names. */
int host_graph_scopes_parse(const char *text, const char *field, unsigned *out, err_t *err);

/* The same without the check of the whole set: the scopes of text added to
 * *out (a list given in pieces). */
int host_graph_scopes_add(const char *text, const char *field, unsigned *out, err_t *err);

/* ERR_INPUT naming field when bits is a set Megatron-Core refuses
 * (moe_preprocess without moe_router). */
int host_graph_scopes_check(unsigned bits, const char *field, err_t *err);

/* Megatron-Core's names of the scopes in bits, space separated, into buf. */
void host_graph_scopes_name(unsigned bits, char *buf, int size);

/* One piece of work in issue order: `kernels` equal kernels together taking
 * gpu_s on the GPU and host_s to issue. sync_after: the host waits for the
 * GPU to finish it before issuing the next item. */
typedef struct {
    double gpu_s;
    double host_s;
    int kernels;
    bool sync_after;
} host_item_t;

/* Seconds from the first issue to the GPU finishing the last item, the host
 * starting with the GPU idle. A kernel starts when the host has issued it
 * and the GPU has finished the one before. */
double host_race_s(const host_item_t *items, int n);

#endif
