/* cost_host: the host thread issuing a layer's kernels, and what the GPU
 * waits for it (sim/host.h; sim/costsInt.h). */
#include "sim/costsInt.h"

#include <math.h>
#include <string.h>

/* How many framework operations (each issued from Python at host.op_us)
 * an op of the layer's list is, forward and backward, whether it is a GEMM
 * whose input (forward) and output gradient (backward) a low-precision
 * recipe quantizes, and the CUDA graph scope that captures it. Counts of one
 * (a fused Transformer Engine module per op, its backward one autograd node
 * per GEMM) are ASSUMED from the modules' structure; the router's are
 * measured (HOST_ROUTER_* below). */
typedef struct {
    const char *name;
    int fwd_ops, bwd_ops;
    bool gemm;
    unsigned scope;
} host_op_t;

static const host_op_t HOST_OPS[] = {
    {"norm_1", 1, 1, false, HOST_GRAPH_ATTN},     {"qkv", 1, 2, true, HOST_GRAPH_ATTN},
    {"mla_down", 1, 2, true, HOST_GRAPH_ATTN},    {"mla_norm", 1, 1, false, HOST_GRAPH_ATTN},
    {"mla_up", 2, 4, true, HOST_GRAPH_ATTN},      {"rope", 1, 1, false, HOST_GRAPH_ATTN},
    {"qk_norm", 2, 2, false, HOST_GRAPH_ATTN},
    {"attention", 1, 1, false, HOST_GRAPH_ATTN},  {"attn_out", 1, 2, true, HOST_GRAPH_ATTN},
    {"residual_1", 1, 1, false, HOST_GRAPH_ATTN}, {"norm_2", 1, 1, false, HOST_GRAPH_ATTN},
    {"mlp_in", 1, 2, true, HOST_GRAPH_MLP},       {"swiglu", 1, 1, false, HOST_GRAPH_MLP},
    {"gelu", 1, 1, false, HOST_GRAPH_MLP},        {"mlp_out", 1, 2, true, HOST_GRAPH_MLP},
    {"shared_in", 1, 2, true, HOST_GRAPH_MOE_ROUTER},
    {"shared_act", 1, 1, false, HOST_GRAPH_MOE_ROUTER},
    {"shared_out", 1, 2, true, HOST_GRAPH_MOE_ROUTER},
    {"expert_act", 1, 1, false, HOST_GRAPH_MOE},  {"residual_2", 1, 1, false, 0},
    /* PEFT's lora.Linear: lora_A, lora_B, the scaling and the add forward;
     * their autograd nodes and the two weight gradients backward (ASSUMED
     * from the module's structure); bitsandbytes: a dequantize kernel per
     * base linear (7 in a gated block, ASSUMED for every block) */
    {"lora_q", 4, 6, false, 0},   {"lora_k", 4, 6, false, 0},    {"lora_v", 4, 6, false, 0},
    {"lora_o", 4, 6, false, 0},   {"lora_gate", 4, 6, false, 0}, {"lora_up", 4, 6, false, 0},
    {"lora_down", 4, 6, false, 0}, {"dequant", 7, 7, false, 0},
};

/* Megatron-LM docs/discussions/deepseek-v3-gb200-optimization, sec. 2.1.4
 * and 2.2.1 (Nsight counts on DeepSeek-V3): the router's element-wise
 * kernels number 72, 31 with --moe-router-fusion; with the flex dispatcher
 * (DeepEP, HybridEP: a fused preprocess kernel) the router and the
 * dispatcher's preprocess together 17. The backward runs as many again
 * (ASSUMED: one autograd kernel per forward kernel). */
#define HOST_ROUTER_OPS 72
#define HOST_ROUTER_FUSED_OPS 31
#define HOST_ROUTER_FLEX_OPS 17
/* The all-to-all dispatcher's preprocess (tokens per expert and rank, the
 * split sizes, megatron/core/transformer/moe/token_dispatcher.py
 * MoEAlltoAllTokenDispatcher.preprocess): ASSUMED 10 operations. A
 * permute or unpermute: Transformer Engine's fused moe_permute 2 kernels,
 * the unfused index sort and gathers 5 (ASSUMED from moe_utils.permute). */
#define HOST_PREPROCESS_OPS 10
#define HOST_PERMUTE_FUSED_OPS 2
#define HOST_PERMUTE_OPS 5

/* Kernels that quantize one tensor under precision p (Transformer Engine):
 * delayed scaling casts with the amax in one kernel, current scaling finds
 * the amax first, MXFP8 and NVFP4 also swizzle the scales for the tensor
 * cores; ASSUMED from the recipes' structure. */
static int quant_kernels(precision_t p)
{
    switch (p) {
    case PRECISION_FP8:
    case PRECISION_FP8_BLOCK:
    case PRECISION_FP8_ROWWISE:
        return 1;
    case PRECISION_FP8_CS:
    case PRECISION_MXFP8:
    case PRECISION_NVFP4:
    case PRECISION_MXFP4:
        return 2;
    default:
        return 0;
    }
}

static const host_op_t *host_op(const char *name)
{
    /* (the first letter before the whole name: the planner prices every
     * candidate's layer through here) */
    for (size_t i = 0; i < sizeof HOST_OPS / sizeof HOST_OPS[0]; i++)
        if (HOST_OPS[i].name[0] == name[0] && strcmp(HOST_OPS[i].name, name) == 0)
            return &HOST_OPS[i];
    return NULL;
}

/* What issuing a layer costs the host, forward and backward, kept as the
 * items of a race (sim/host.h) in the forward's issue order. */
typedef struct {
    host_item_t f[SIM_MAX_OPS + 8];
    int nf;
    int sync_at;      /* index of the item the forward synchronizes after; -1 none */
    double host_b;    /* the backward's issue seconds */
    unsigned graphed; /* scopes whose replay is already counted (forward) */
} host_layer_t;

/* Issue seconds of an item of fwd_ops operations and launches C++ kernels
 * inside scope (one graph replay for the whole scope when it is captured). */
static double issue_s(const host_opts_t *h, unsigned scope, double ops, double launches,
                      unsigned *replayed)
{
    if (scope && (h->graph_scopes & scope)) {
        if (*replayed & scope)
            return 0;
        *replayed |= scope;
        return h->graph_us * 1e-6;
    }
    return (ops * h->op_us + launches * h->launch_us) * 1e-6;
}

static void host_push(host_layer_t *hl, double gpu_s, double host_s, int kernels)
{
    if (hl->nf < (int)(sizeof hl->f / sizeof hl->f[0]))
        hl->f[hl->nf++] = (host_item_t){gpu_s, host_s, kernels > 0 ? kernels : 1, false};
}

/* Forward and backward operations, C++ launches and scope of a MoE op of
 * the layer's list; false for the ops HOST_OPS describes. */
static bool host_moe_op(const pricer_t *pr, const char *name, double c[4], unsigned *scope)
{
    const moe_opts_t *mo = &pr->in->opt.moe;
    const layout_t *l = pr->in->layout;
    int qk = pr->q->quantized ? quant_kernels(l->precision) : 0;
    double local = (double)pr->in->model->moe.n_experts / l->ep;
    bool flex = mo->dispatcher == MOE_DISPATCH_DEEPEP;
    if (strcmp(name, "router") == 0) {
        int n = flex ? HOST_ROUTER_FLEX_OPS
                     : pr->in->opt.host.router_fusion ? HOST_ROUTER_FUSED_OPS : HOST_ROUTER_OPS;
        c[0] = c[1] = n;
        c[2] = c[3] = 0;
        *scope = HOST_GRAPH_MOE_ROUTER;
    } else if (strcmp(name, "permute") == 0 || strcmp(name, "unpermute") == 0) {
        c[0] = c[1] = mo->permute_fusion ? HOST_PERMUTE_FUSED_OPS : HOST_PERMUTE_OPS;
        c[2] = c[3] = 0;
        *scope = HOST_GRAPH_MOE;
    } else if (strcmp(name, "sort_chunks") == 0 || strcmp(name, "unsort_chunks") == 0) {
        /* TE's fused moe_sort_chunks_by_index one operation; unfused a
         * torch.split and a torch.cat */
        c[0] = c[1] = mo->permute_fusion ? 1 : 2;
        c[2] = c[3] = 0;
        *scope = HOST_GRAPH_MOE;
    } else if (strcmp(name, "experts_in") == 0 || strcmp(name, "experts_out") == 0) {
        /* one grouped call; inside it, per local expert, its GEMMs and the
         * quantization of its input (forward) and output gradient */
        c[0] = mo->grouped_gemm ? 1 : local;
        c[1] = 2 * c[0];
        c[2] = local * (1 + qk);
        c[3] = local * (2 + qk);
        *scope = HOST_GRAPH_MOE;
    } else {
        return false;
    }
    return true;
}

/* Add one op of the layer's list to hl (forward item, backward seconds). */
static void host_add_op(const pricer_t *pr, const op_cost_t *op, host_layer_t *hl,
                        unsigned *rep_b)
{
    const host_opts_t *h = &pr->in->opt.host;
    int qk = pr->q->quantized ? quant_kernels(pr->in->layout->precision) : 0;
    double c[4] = {1, 1, 0, 0};
    unsigned scope = 0;
    const host_op_t *t = host_op(op->name);
    if (t) {
        c[0] = t->fwd_ops;
        c[1] = t->bwd_ops;
        c[2] = c[3] = t->gemm ? qk : 0;
        scope = t->scope;
    } else {
        host_moe_op(pr, op->name, c, &scope);
    }
    host_push(hl, op->fwd_s, issue_s(h, scope, c[0], c[2], &hl->graphed), (int)(c[0] + c[2]));
    hl->host_b += issue_s(h, scope, c[1], c[3], rep_b);
}

/* The dispatcher's own items around the experts: after the router its
 * preprocess (the forward synchronizes there when the block is dropless),
 * the dispatch after the permute and the combine after the experts (their
 * exposed communication as GPU time). */
static void host_add_dispatch(const pricer_t *pr, const char *after, host_layer_t *hl,
                              unsigned *rep_b)
{
    const host_opts_t *h = &pr->in->opt.host;
    const moe_opts_t *mo = &pr->in->opt.moe;
    double colls = mo->dispatcher == MOE_DISPATCH_ALLGATHER ? 2 : 1;
    if (strcmp(after, "router") == 0) {
        double n = mo->dispatcher == MOE_DISPATCH_DEEPEP ? 0 : HOST_PREPROCESS_OPS;
        host_push(hl, 0, issue_s(h, HOST_GRAPH_MOE_PREPROCESS, n, 0, &hl->graphed), (int)n);
        if (!(mo->capacity_factor > 0))
            hl->sync_at = hl->nf - 1;
    } else if (strcmp(after, "permute") == 0 || strcmp(after, "experts_out") == 0) {
        host_push(hl, pr->out->fwd.ep / 2, issue_s(h, HOST_GRAPH_MOE, colls, 0, &hl->graphed),
                  (int)colls);
        hl->host_b += issue_s(h, HOST_GRAPH_MOE, colls, 0, rep_b);
    }
}

/* The forward's wait for the host: from the synchronization (the GPU idle)
 * through the next one, the layer's items rotated to start after it; with
 * no synchronization the host runs ahead and only a host slower than the
 * GPU over the whole pass shows. */
static double host_fwd_exposed(host_layer_t *hl)
{
    double gpu = 0, host = 0;
    for (int i = 0; i < hl->nf; i++) {
        gpu += hl->f[i].gpu_s;
        host += hl->f[i].host_s;
    }
    if (hl->sync_at < 0)
        return fmax(0, host - gpu);
    host_item_t rot[sizeof hl->f / sizeof hl->f[0]];
    int k = 0;
    for (int i = hl->sync_at + 1; i < hl->nf; i++)
        rot[k++] = hl->f[i];
    for (int i = 0; i <= hl->sync_at; i++)
        rot[k++] = hl->f[i];
    rot[k - 1].sync_after = true;
    return fmax(0, host_race_s(rot, k) - gpu);
}

/* The layer priced from op first_op on waits this long for its host (the
 * framework's host.op_us 0: not modelled). */
void cost_host(pricer_t *pr, int first_op, bool moe)
{
    const host_opts_t *h = &pr->in->opt.host;
    step_costs_t *out = pr->out;
    if (!(h->op_us > 0))
        return;
    host_layer_t hl = {.sync_at = -1};
    unsigned rep_b = 0;
    for (int i = first_op; i < out->n_ops; i++) {
        host_add_op(pr, &out->ops[i], &hl, &rep_b);
        if (moe)
            host_add_dispatch(pr, out->ops[i].name, &hl, &rep_b);
    }
    double fwd_host = 0;
    for (int i = 0; i < hl.nf; i++)
        fwd_host += hl.f[i].host_s;
    /* full recompute issues the forward again inside the backward */
    if (pr->in->layout->recompute == RECOMPUTE_FULL)
        hl.host_b += fwd_host;
    out->fwd.host = host_fwd_exposed(&hl);
    out->bwd.host = fmax(0, hl.host_b - cost_total(&out->bwd));
}

/* A CUDA graph replays fixed sizes: a dropless MoE block's token counts
 * change every step, so Megatron-Core captures the whole block ("moe") or
 * the whole iteration only for token-drop runs (transformer_config.py). */
int cost_host_graphs_possible(const sim_input_t *in, err_t *err)
{
    unsigned whole = in->opt.host.graph_scopes & (HOST_GRAPH_MOE | HOST_GRAPH_FULL);
    if (!whole || !model_is_moe(in->model) || in->opt.moe.capacity_factor > 0)
        return ERR_OK;
    return err_setf(err, ERR_INPUT, NULL, "--cuda-graph-scope",
                    "%s needs a token-drop MoE run (--moe-capacity-factor): a dropless block's "
                    "token counts change every step and a graph replays fixed sizes (the "
                    "framework's recipe may set it: give the scopes, e.g. --cuda-graph-scope "
                    "attn,moe_router,moe_preprocess)",
                    (whole & HOST_GRAPH_MOE) ? "moe" : "full_iteration");
}
