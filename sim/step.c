#include "sim/step.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/fileio.h"
#include "common/units.h"
#include "models/flops.h"
#include "sim/engine.h"
#include "sim/dp_contention.h"
#include "sim/schedule.h"

/* Streams of each pipeline stage; one more global stream at the end. */
enum { ST_COMPUTE = 0, ST_SEND, ST_DP, ST_SPARE, STREAMS_PER_STAGE };

/* Packing of a task's tag: micro-batch, chunk, layer within the chunk. */
#define TAG(mb, chunk, layer) \
    (((uint32_t)(mb) << 16) | ((uint32_t)(chunk) << 10) | (uint32_t)(layer))
#define TAG_MB(t) ((int)((t) >> 16))
#define TAG_CHUNK(t) ((int)(((t) >> 10) & 63))
#define TAG_LAYER(t) ((int)((t) & 1023))
#define NO_LAYER 1023

/* Pieces of work a compute task can be, numbered in the context's table:
 * one layer, the embedding or the head (forward or backward), then one
 * fused pass per virtual stage and direction at PIECE_CHUNK + 2 vs + dir;
 * under a schedule that splits weight gradients also, per virtual stage,
 * the backward for the input only and the weight gradient, and per rank
 * the two forward-backward pairs (piece_* below). */
enum { PIECE_FWD = 0, PIECE_BWD, PIECE_EMBED_FWD, PIECE_EMBED_BWD, PIECE_HEAD_FWD,
       PIECE_HEAD_BWD, PIECE_BWD_KEEP, PIECE_CHUNK };

struct sim_ctx {
    sim_engine_t *eng;
    cost_parts_t *pieces; /* what each piece's duration is made of */
    double *piece_s;      /* and its duration */
    int piece_cap, piece_s_cap;
    int *vs_layers;       /* layers of each virtual stage */
    int vs_cap;
    int *last_bwd;        /* scratch: per chunk, the index of its last backward */
    int last_bwd_cap;
    pp_op_t *ops;         /* program order of every stage, p x ops_stride */
    int ops_cap;
    int *n_ops;           /* per stage: entries of its program */
    int n_ops_cap;
    long ops_stride;      /* room per stage in ops */
    int *first, *last;    /* per (virtual stage, micro-batch, phase): task ids */
    int first_cap, last_cap;
    int *compute_tasks;   /* compute-stream tasks of every stage, in order */
    int *compute_piece;   /* and the piece each one is (-1: the optimizer) */
    int stride;           /* room per stage in compute_tasks */
    int *n_compute;       /* per stage */
    double *stage_end;    /* per stage: latest end of its tasks; then per stage
                             the parameter gathers hidden in the next forwards */
    int compute_cap, compute_piece_cap, stage_cap, end_cap;
    int *layer_ids, *dp_tasks, *last_compute; /* scratch of a build (build_scratch_t) */
    int layer_ids_cap, dp_tasks_cap, last_compute_cap;
    int pp;               /* of the last run */
};

const char *sim_bd_name(sim_bd_t b)
{
    static const char *names[BD_COUNT] = {"compute",   "recompute", "tp_comm",  "cp_comm",
                                          "ep_comm",   "moe_imbalance", "host_bound",
                                          "pp_comm",   "pp_bubble", "dp_comm",  "optimizer",
                                          "offload",   "straggler", "other"};
    return b < BD_COUNT ? names[b] : "?";
}

sim_ctx_t *sim_ctx_create(void)
{
    sim_ctx_t *ctx = calloc(1, sizeof *ctx);
    if (!ctx)
        return NULL;
    ctx->eng = eng_create();
    if (!ctx->eng) {
        free(ctx);
        return NULL;
    }
    return ctx;
}

void sim_ctx_destroy(sim_ctx_t *ctx)
{
    if (!ctx)
        return;
    eng_destroy(ctx->eng);
    free(ctx->pieces);
    free(ctx->piece_s);
    free(ctx->vs_layers);
    free(ctx->last_bwd);
    free(ctx->compute_piece);
    free(ctx->layer_ids);
    free(ctx->dp_tasks);
    free(ctx->last_compute);
    free(ctx->ops);
    free(ctx->n_ops);
    free(ctx->first);
    free(ctx->last);
    free(ctx->compute_tasks);
    free(ctx->n_compute);
    free(ctx->stage_end);
    free(ctx);
}

/* Room for need elements of a scratch array (its contents are not kept:
 * every build rewrites them); 0 or -1 (then *p is NULL and *cap 0). */
static int grow_to(void **p, int *cap, long need, size_t size)
{
    if (need <= *cap)
        return 0;
    long cap2 = *cap ? *cap : 256;
    while (cap2 < need)
        cap2 *= 2;
    free(*p);
    *p = NULL;
    *cap = 0;
    if (cap2 > (1L << 30) || !(*p = malloc((size_t)cap2 * size)))
        return -1;
    *cap = (int)cap2;
    return 0;
}

void sim_memory_opts(const profile_t *p, const sim_options_t *opt, memory_opts_t *o)
{
    memory_opts_default(o);
    o->reserved_bytes = p->reserved_gib * GIB;
    o->fragmentation = p->fragmentation;
    if (opt->ce_peak_bytes > 0)
        o->logit_bytes = opt->ce_peak_bytes;
    o->logit_bytes_tp = opt->ce_tp_peak_bytes;
    o->kv_repeated = opt->kv_repeated;
    o->moe_probs_in_act = opt->moe.probs_in_act;
    o->saves_quantized = opt->fp8_saves_quantized;
    /* FSDP2 under pipelining keeps each stage gathered (zero3 reshard_with_pp
     * false) and accumulates the unsharded gradients in the reduce dtype */
    if (!opt->zero3.reshard_with_pp)
        o->pp_gathered_grad_bytes = opt->reduce_bytes > 0 ? opt->reduce_bytes : 4;
    o->zero3_max_live_params = opt->zero3.max_live_params;
}

/* ------------------------------------------------------------ building */

typedef struct {
    sim_ctx_t *ctx;
    const sim_input_t *in;
    const step_costs_t *c;
    int p, v, m, V;   /* stages, chunks per stage, micro-batches, virtual stages */
    int head_rank;    /* the rank holding the last virtual stage */
    bool async_p2p;
    int sync_stream;
    int oom;          /* a task or dependency could not be added */
    double reduce_params, reduce_s; /* the last gradient reduction priced */
} builder_t;

/* Add a task; piece (compute tasks only) names what it is made of. */
static int add_task(builder_t *b, int stage, int stream_kind, double dur, int kind,
                    uint32_t tag, int piece)
{
    sim_ctx_t *ctx = b->ctx;
    int stream = stream_kind < 0 ? b->sync_stream : stage * STREAMS_PER_STAGE + stream_kind;
    int id = eng_task(ctx->eng, stream, dur, kind, tag);
    if (id < 0) {
        b->oom = 1;
        return -1;
    }
    if (stream_kind == ST_COMPUTE) {
        long k = (long)stage * ctx->stride + ctx->n_compute[stage]++;
        ctx->compute_tasks[k] = id;
        ctx->compute_piece[k] = piece;
    }
    return id;
}

/* Seconds to reduce params gradients; bucket after bucket has the same
 * size, so the last answer is kept. */
static double grad_reduce_time(builder_t *b, double params)
{
    if (params != b->reduce_params) {
        b->reduce_params = params;
        b->reduce_s = sim_grad_reduce_time(b->in, b->c, params);
    }
    return b->reduce_s;
}

static void add_dep(builder_t *b, int task, int before)
{
    if (task >= 0 && before >= 0 && eng_dep(b->ctx->eng, task, before) != 0)
        b->oom = 1;
}

static void scale_add(cost_parts_t *acc, const cost_parts_t *x, double k)
{
    acc->compute += k * x->compute;
    acc->recompute += k * x->recompute;
    acc->tp += k * x->tp;
    acc->cp += k * x->cp;
    acc->dp += k * x->dp;
    acc->offload += k * x->offload;
    acc->ep += k * x->ep;
    acc->imbalance += k * x->imbalance;
    acc->host += k * x->host;
}

static int chunk_layers(const builder_t *b, int vs)
{
    return b->ctx->vs_layers[vs];
}

static long map_index(const builder_t *b, int vs, int mb, bool fwd)
{
    return ((long)vs * b->m + mb) * 2 + (fwd ? 0 : 1);
}

/* Emit the compute tasks of one pass; per-layer tasks when asked (or when
 * bucket boundaries need them), one fused task otherwise. */
static void emit_pass(builder_t *b, int stage, const pp_op_t *op, bool per_layer,
                      int *first_id, int *last_id, int *layer_ids)
{
    const double *piece_s = b->ctx->piece_s;
    int vs = layout_vstage(b->in->layout, stage, op->chunk);
    int layers = chunk_layers(b, vs);
    bool first_vs = vs == 0, last_vs = vs == b->V - 1;
    int kind = op->forward ? TASK_FWD : TASK_BWD, dir = op->forward ? 0 : 1;
    int layer = PIECE_FWD + dir, head = PIECE_HEAD_FWD + dir, embed = PIECE_EMBED_FWD + dir;
    *first_id = *last_id = -1;
    if (!per_layer) {
        int chunk = PIECE_CHUNK + 2 * vs + dir;
        int id = add_task(b, stage, ST_COMPUTE, piece_s[chunk], kind,
                          TAG(op->mb, op->chunk, NO_LAYER), chunk);
        *first_id = *last_id = id;
        return;
    }
    /* Forward: embedding, layers, head. Backward: head, layers in reverse,
     * embedding. layer_ids[k] gets the task of the k-th layer run. */
    int pre = op->forward ? (first_vs ? embed : -1) : (last_vs ? head : -1);
    int post = op->forward ? (last_vs ? head : -1) : (first_vs ? embed : -1);
    int prev = -1;
    if (pre >= 0) {
        prev = add_task(b, stage, ST_COMPUTE, piece_s[pre], kind,
                        TAG(op->mb, op->chunk, NO_LAYER), pre);
        *first_id = prev;
    }
    /* partial recompute: the chunk's first layers rebuild their
     * activations in the backward, the others kept theirs */
    int rebuilt = b->in->layout->recompute_layers > 0
                      ? layout_chunk_recomputed(b->in->layout, b->in->model, vs)
                      : layers;
    for (int k = 0; k < layers; k++) {
        int layer_no = op->forward ? k : layers - 1 - k;
        int piece = !op->forward && layer_no >= rebuilt ? PIECE_BWD_KEEP : layer;
        int id = add_task(b, stage, ST_COMPUTE, piece_s[piece], kind,
                          TAG(op->mb, op->chunk, layer_no), piece);
        if (layer_ids)
            layer_ids[k] = id;
        if (*first_id < 0)
            *first_id = id;
        prev = id;
    }
    if (post >= 0)
        prev = add_task(b, stage, ST_COMPUTE, piece_s[post], kind,
                        TAG(op->mb, op->chunk, NO_LAYER), post);
    *last_id = prev;
}

/* Trained parameters (one GPU) of virtual stage vs, whose gradients are
 * reduced and which the optimizer updates: its layers plus embedding or
 * output head where they live; with a frozen base (LoRA, QLoRA) only the
 * layers' adapters (step_costs_t.layer_trainable_params). */
static double chunk_params(const builder_t *b, int vs, double *head, double *embed)
{
    const model_t *m = b->in->model;
    const layout_t *l = b->in->layout;
    if (finetune_frozen(&l->ft)) {
        *head = *embed = 0;
        return chunk_layers(b, vs) * b->c->layer_trainable_params;
    }
    double vocab = (double)m->vocab * m->hidden / l->tp;
    /* the input side: the word embedding (with Gemma 4's per-layer inputs) */
    *embed = vs == 0 ? model_input_params(m) / l->tp +
                           (m->pos == MODEL_POS_LEARNED ? (double)m->max_seq * m->hidden : 0)
                     : 0;
    *head = 0;
    if (vs == b->V - 1 && (!m->tied_embeddings || b->head_rank != 0))
        *head = vocab;
    return chunk_layers(b, vs) * b->c->layer_params + *head + *embed;
}

/* Whether gradient buckets reduce during the backward: the options ask
 * for it and the pipeline engine does not defer every reduction to the
 * schedule's end. */
static bool grads_overlap(const sim_input_t *in)
{
    return in->opt.overlap_grad_reduce &&
           !(in->opt.grad_reduce_after_pipeline && in->layout->pp > 1);
}

/* FSDP2 under torch.distributed.pipelining (ZeRO-2, or ZeRO-3 kept
 * gathered: zero3.reshard_with_pp false): the pipeline stage turns gradient
 * sync off for every micro-batch's backward, the last one included, and
 * after the last one runs the post-backward of every parameter group
 * (PyTorch stage.py backward_maybe_with_nosync, run_post_backward): the
 * stage's gradients are reduce-scattered once a step, after its last
 * backward, as the memory model's unsharded accumulation has it; not after
 * every micro-batch as DeepSpeed's ZeRO-2 does, nor during the backward. */
static bool fsdp_synced_once(const sim_input_t *in)
{
    return in->layout->zero >= 2 && in->layout->pp > 1 && !in->opt.zero3.reshard_with_pp;
}

/* Gradient buckets of one chunk during the backward that completes them:
 * a reduction task is launched when a bucket fills (Megatron DDP), or all
 * of them after the whole backward when overlap is off. */
static void emit_buckets(builder_t *b, int stage, int vs, const int *layer_ids, int layers,
                         int after_all, int *dp_tasks, int *n_dp)
{
    const sim_input_t *in = b->in;
    double head, embed;
    chunk_params(b, vs, &head, &embed);
    double bucket = in->opt.bucket_params, acc = head;
    bool overlap = grads_overlap(in);
    for (int k = 0; k <= layers; k++) {
        bool end = k == layers;
        acc += end ? embed : b->c->layer_trainable_params;
        if (!end && acc < bucket)
            continue;
        if (acc <= 0)
            continue;
        int ready = overlap && layer_ids && !end ? layer_ids[k] : after_all;
        int id = add_task(b, stage, ST_DP, grad_reduce_time(b, acc), TASK_DP,
                          TAG(0, layout_vstage_chunk(b->in->layout, vs), end ? NO_LAYER : k),
                          -1);
        add_dep(b, id, ready);
        dp_tasks[(*n_dp)++] = id;
        acc = 0;
    }
}

/* Scratch of one build: the tasks the end-of-step synchronisation waits
 * for. */
typedef struct {
    int *layer_ids;    /* per-layer task ids of the pass being emitted */
    int *dp_tasks;     /* gradient reductions */
    int n_dp;
    int *last_compute; /* per stage: its last compute task */
} build_scratch_t;

/* The pieces a schedule that splits weight gradients adds (see above). */
static int piece_chunk(int vs, int dir) { return PIECE_CHUNK + 2 * vs + dir; }
static int piece_igrad(const builder_t *b, int vs) { return PIECE_CHUNK + 2 * b->V + vs; }
static int piece_wgrad(const builder_t *b, int vs) { return PIECE_CHUNK + 3 * b->V + vs; }
static int piece_pair(const builder_t *b, int stage, int fwd_chunk)
{
    return PIECE_CHUNK + 4 * b->V + 2 * stage + fwd_chunk;
}
static long piece_count(const builder_t *b, bool split)
{
    return PIECE_CHUNK + 2L * b->V + (split ? 2L * b->V + 2L * b->p : 0);
}

/* The chunk whose weight gradients op completes (-1: none). */
static int op_grads_chunk(const pp_op_t *op)
{
    switch (op->kind) {
    case PP_OP_PASS:
        return op->forward ? -1 : op->chunk;
    case PP_OP_WEIGHT:
        return op->chunk;
    case PP_OP_PAIR:
        return op->chunk2;
    default:
        return -1;
    }
}

/* The micro-batch whose gradients op completes (with op_grads_chunk). */
static int op_grads_mb(const pp_op_t *op)
{
    return op->kind == PP_OP_PAIR ? op->mb2 : op->mb;
}

/* Emit one entry of a stage's program: a pass (per layer where asked), an
 * input-gradient backward, a weight gradient or a forward-backward pair,
 * and record the tasks that start and end each pass it runs. Returns the
 * entry's last task. */
static int emit_op(builder_t *b, int s, const pp_op_t *op, bool per_layer, int *layer_ids)
{
    sim_ctx_t *ctx = b->ctx;
    const layout_t *l = b->in->layout;
    int vs = layout_vstage(l, s, op->chunk);
    int f, t, piece;
    switch (op->kind) {
    case PP_OP_INPUT_GRAD:
        piece = piece_igrad(b, vs);
        t = add_task(b, s, ST_COMPUTE, ctx->piece_s[piece], TASK_BWD,
                     TAG(op->mb, op->chunk, NO_LAYER), piece);
        ctx->first[map_index(b, vs, op->mb, false)] = ctx->last[map_index(b, vs, op->mb, false)] = t;
        return t;
    case PP_OP_WEIGHT:
        piece = piece_wgrad(b, vs);
        return add_task(b, s, ST_COMPUTE, ctx->piece_s[piece], TASK_WGRAD,
                        TAG(op->mb, op->chunk, NO_LAYER), piece);
    case PP_OP_PAIR: {
        piece = piece_pair(b, s, op->chunk);
        t = add_task(b, s, ST_COMPUTE, ctx->piece_s[piece], TASK_FWD_BWD,
                     TAG(op->mb, op->chunk, NO_LAYER), piece);
        int vb = layout_vstage(l, s, op->chunk2);
        ctx->first[map_index(b, vs, op->mb, true)] = ctx->last[map_index(b, vs, op->mb, true)] = t;
        ctx->first[map_index(b, vb, op->mb2, false)] =
            ctx->last[map_index(b, vb, op->mb2, false)] = t;
        return t;
    }
    default:
        emit_pass(b, s, op, per_layer, &f, &t, layer_ids);
        long k = map_index(b, vs, op->mb, op->forward);
        ctx->first[k] = f;
        ctx->last[k] = t;
        return t;
    }
}

/* Phase 1: compute tasks, stage by stage in program order, with the
 * gradient buckets (or ZeRO-2/3 reduce-scatters) their backwards release. */
static void build_compute(builder_t *b, build_scratch_t *x)
{
    sim_ctx_t *ctx = b->ctx;
    const sim_input_t *in = b->in;
    const layout_t *l = in->layout;
    int *last_bwd = ctx->last_bwd;
    /* buckets reduced during the backward that fills them; else after the
     * stage's last backward */
    bool once = fsdp_synced_once(in), during = grads_overlap(in) && !once;
    /* ZeRO-2 reduce-scatters after every micro-batch (a row of
     * frameworks/options.def, so make check-mechanisms sees it priced) */
    bool per_mb = l->zero == 2 && !once && in->opt.zero2_reduce_per_mb;
    for (int s = 0; s < b->p; s++) {
        const pp_op_t *ops = ctx->ops + (long)s * ctx->ops_stride;
        int n = ctx->n_ops[s];
        /* the entry of each chunk whose gradients complete its buckets, and
         * the stage's last such entry */
        int last_grads = -1;
        for (int c = 0; c < b->v; c++)
            last_bwd[c] = -1;
        for (int i = 0; i < n; i++)
            if (op_grads_chunk(&ops[i]) >= 0) {
                last_bwd[op_grads_chunk(&ops[i])] = i;
                last_grads = i;
            }
        for (int i = 0; i < n; i++) {
            const pp_op_t *op = &ops[i];
            int gc = op_grads_chunk(op);
            bool buckets_here = gc >= 0 && last_bwd[gc] == i;
            bool plain = op->kind == PP_OP_PASS;
            bool per_layer =
                plain && (in->opt.layer_events || (buckets_here && during));
            int t = emit_op(b, s, op, per_layer, buckets_here && plain ? x->layer_ids : NULL);
            int vs = gc >= 0 ? layout_vstage(l, s, gc) : -1;
            if (buckets_here && (l->zero < 2 || once || (l->zero == 2 && !per_mb))) {
                if (during)
                    emit_buckets(b, s, vs, per_layer ? x->layer_ids : NULL, chunk_layers(b, vs),
                                 t, x->dp_tasks, &x->n_dp);
                else if (i == last_grads)
                    /* Without overlap (or synced once, above) the
                     * reduction waits for the whole
                     * schedule (Megatron-LM before Megatron-Core's DDP
                     * reduced the grad buffer after forward_backward_func
                     * returned): every chunk's buckets, one chunk after
                     * another, once the stage's last backward is done. */
                    for (int c = 0; c < b->v; c++) {
                        int cs = last_bwd[c] >= 0 ? layout_vstage(l, s, c) : -1;
                        if (cs >= 0)
                            emit_buckets(b, s, cs, NULL, chunk_layers(b, cs), t, x->dp_tasks,
                                         &x->n_dp);
                    }
            } else if (gc >= 0 && per_mb) {
                /* ZeRO-2 reduce-scatters gradients after every micro-batch
                 * (ZeRO-3's reductions are priced per layer in sim/costs). */
                double head, embed;
                double params = chunk_params(b, vs, &head, &embed);
                int id = add_task(b, s, ST_DP, grad_reduce_time(b, params), TASK_DP,
                                  TAG(op_grads_mb(op), gc, NO_LAYER), -1);
                add_dep(b, id, t);
                x->dp_tasks[x->n_dp++] = id;
            }
            x->last_compute[s] = t;
        }
    }
}

/* One pass's activation (forward) or gradient (backward) to the next
 * virtual stage: a send between ranks, or a dependency inside one (the
 * turn of a V). */
static void transfer(builder_t *b, int s, int vs, int mb, bool forward, uint32_t tag,
                     const pp_op_t *next)
{
    sim_ctx_t *ctx = b->ctx;
    const layout_t *l = b->in->layout;
    int to = forward ? vs + 1 : vs - 1;
    if (to < 0 || to >= b->V)
        return;
    long from_k = map_index(b, vs, mb, forward);
    long to_k = map_index(b, to, mb, forward);
    if (layout_vstage_rank(l, to) == s) {
        add_dep(b, ctx->first[to_k], ctx->last[from_k]);
        return;
    }
    int id = add_task(b, s, ST_SEND, b->c->p2p_s, TASK_SEND, tag, -1);
    add_dep(b, id, ctx->last[from_k]);
    add_dep(b, ctx->first[to_k], id);
    /* Blocking p2p: the sender's next pass waits for the send. */
    if (!b->async_p2p && next && next->kind == PP_OP_PASS)
        add_dep(b,
                ctx->first[map_index(b, layout_vstage(l, s, next->chunk), next->mb,
                                     next->forward)],
                id);
}

/* Phase 2: pipeline transfers, in each sender's program order. */
static void build_transfers(builder_t *b)
{
    sim_ctx_t *ctx = b->ctx;
    const layout_t *l = b->in->layout;
    for (int s = 0; s < b->p; s++) {
        const pp_op_t *ops = ctx->ops + (long)s * ctx->ops_stride;
        int n = ctx->n_ops[s];
        for (int i = 0; i < n; i++) {
            const pp_op_t *op = &ops[i];
            const pp_op_t *next = i + 1 < n ? &ops[i + 1] : NULL;
            if (op->kind == PP_OP_WEIGHT)
                continue;
            transfer(b, s, layout_vstage(l, s, op->chunk), op->mb, op->forward,
                     TAG(op->mb, op->chunk, op->forward ? 0 : 1), next);
            if (op->kind == PP_OP_PAIR)
                transfer(b, s, layout_vstage(l, s, op->chunk2), op->mb2, false,
                         TAG(op->mb2, op->chunk2, 1), next);
        }
    }
}

/* Phase 3: tied embeddings across stages: sync their gradients. */
static void build_embed_sync(builder_t *b, build_scratch_t *x)
{
    const sim_input_t *in = b->in;
    const layout_t *l = in->layout;
    const model_t *m = in->model;
    double bytes = (double)m->vocab * m->hidden / l->tp * l->grad_bytes;
    double t = prof_coll_time(in->profile, COLL_ALL_REDUCE, &b->c->pp_span, bytes);
    int id = add_task(b, 0, ST_DP, t, TASK_EMBED_SYNC, TAG(0, 0, NO_LAYER), -1);
    add_dep(b, id, x->last_compute[0]);
    add_dep(b, id, x->last_compute[b->head_rank]);
    x->dp_tasks[x->n_dp++] = id;
}

/* The optimizer step of one stage after the sync: on the GPU, or with
 * optimizer offload the gradients out, the CPU step (with what stays on the
 * GPU) and the parameters back, in that order. Returns the last task. */
static int add_step_tasks(builder_t *b, int stage, double params_on_gpu, int after)
{
    const offload_costs_t *o = &b->c->offload;
    double gpu_s = sim_optimizer_time(b->in, params_on_gpu);
    if (b->in->layout->offload & LAYOUT_OFFLOAD_OPTIMIZER)
        gpu_s *= o->step_gpu_share;
    int prev = after;
    if (o->step_grad_s > 0) {
        prev = add_task(b, stage, ST_COMPUTE, o->step_grad_s, TASK_OFFLOAD, TAG(0, 0, NO_LAYER),
                        -1);
        add_dep(b, prev, after);
    }
    int opt = add_task(b, stage, ST_COMPUTE, gpu_s + o->step_cpu_s, TASK_OPTIMIZER,
                       TAG(0, 0, NO_LAYER), -1);
    add_dep(b, opt, prev);
    if (o->step_param_s > 0) {
        int back = add_task(b, stage, ST_COMPUTE, o->step_param_s, TASK_OFFLOAD,
                            TAG(0, 0, NO_LAYER), -1);
        add_dep(b, back, opt);
        return back;
    }
    return opt;
}

/* Phase 4: end of step: gradient-norm synchronisation over every rank, then
 * the optimizer and (sharded optimizers) the parameter all-gather. */
static void build_step_end(builder_t *b, const build_scratch_t *x)
{
    const sim_input_t *in = b->in;
    const layout_t *l = in->layout;
    const step_costs_t *c = b->c;
    coll_span_t world = c->dp_span;
    world.n_ranks = l->n_gpus;
    world.nodes = c->placement.nodes;
    world.ranks_per_node = l->n_gpus < in->cluster->gpus_per_node ? l->n_gpus
                                                                  : in->cluster->gpus_per_node;
    double norm_t = prof_coll_time(in->profile, COLL_ALL_REDUCE, &world, 8);
    int sync = add_task(b, 0, -1, norm_t, TASK_SYNC, TAG(0, 0, NO_LAYER), -1);
    for (int s = 0; s < b->p; s++)
        add_dep(b, sync, x->last_compute[s]);
    for (int i = 0; i < x->n_dp; i++)
        add_dep(b, sync, x->dp_tasks[i]);
    bool sharded_opt = l->zero >= 1 || l->distributed_optimizer;
    double shard = sharded_opt ? (double)l->dp * l->cp : 1;
    for (int s = 0; s < b->p; s++) {
        double params = 0;
        int layers = 0;
        for (int cidx = 0; cidx < b->v; cidx++) {
            double head, embed;
            int vs = layout_vstage(l, s, cidx);
            params += chunk_params(b, vs, &head, &embed);
            layers += chunk_layers(b, vs);
        }
        /* routed experts are sharded over their own data-parallel group */
        double experts = finetune_frozen(&l->ft) ? 0 : layers * c->layer_expert_params;
        double shard_e = sharded_opt ? layout_expert_dp(l) : 1;
        int opt = add_step_tasks(b, s, (params - experts) / shard + experts / shard_e, sync);
        if (sharded_opt && l->zero < 3) {
            double gather = sim_param_gather_time(in, c, params);
            if (in->opt.overlap_param_gather) {
                /* Hidden behind the next step's forward passes until each
                 * bucket's first use: Megatron's forward pre-hooks wait for
                 * a bucket's all-gather in the first micro-batch's forward
                 * and start the next one (Megatron-LM megatron/core/
                 * distributed/param_and_grad_buffer.py, finish_param_sync), so
                 * only that forward hides them; under the interleaved
                 * schedule chunk c is first used after the forwards of
                 * min(m, p) micro-batches through each earlier chunk. */
                double fwd_chunk = cost_total(&c->fwd) * layers / b->v;
                double first_uses = 1;
                if (b->v > 1)
                    first_uses += (double)(b->v - 1) * (b->m < b->p ? b->m : b->p);
                b->ctx->stage_end[b->p + s] = fmin(gather, first_uses * fwd_chunk);
                gather = fmax(0, gather - first_uses * fwd_chunk);
            }
            if (gather > 0) {
                int g = add_task(b, s, ST_DP, gather, TASK_PARAM_GATHER, TAG(0, 0, NO_LAYER), -1);
                add_dep(b, g, opt);
            }
        }
    }
}

/* The pieces of a schedule that splits weight gradients off and pairs
 * passes: per virtual stage the weight gradient (its layers' weight-
 * gradient GEMMs) and the rest of the backward, and per rank the two
 * forward-backward pairs, whose expert-parallel all-to-alls hide behind
 * the other pass's compute (DualPipe's overlap; the pairs' other
 * communication is counted as in the passes alone). */
static void price_split_pieces(builder_t *b)
{
    const layout_t *l = b->in->layout;
    cost_parts_t *pieces = b->ctx->pieces;
    for (int vs = 0; vs < b->V; vs++) {
        cost_parts_t w = {0};
        w.compute = chunk_layers(b, vs) * b->c->bwd_wgrad_s;
        cost_parts_t in = pieces[piece_chunk(vs, 1)];
        in.compute -= w.compute;
        pieces[piece_wgrad(b, vs)] = w;
        pieces[piece_igrad(b, vs)] = in;
    }
    /* torchtitan runs its pair overlap only without activation recompute */
    bool hide = !(b->in->opt.moe.pair_overlap_no_recompute && l->recompute != RECOMPUTE_NONE);
    for (int s = 0; s < b->p; s++)
        for (int cf = 0; cf < 2; cf++) {
            const cost_parts_t *f = &pieces[piece_chunk(layout_vstage(l, s, cf), 0)];
            const cost_parts_t *g = &pieces[piece_chunk(layout_vstage(l, s, 1 - cf), 1)];
            cost_parts_t pair = {0};
            scale_add(&pair, f, 1);
            scale_add(&pair, g, 1);
            if (hide)
                pair.ep = fmax(0, f->ep - (g->compute + g->recompute)) +
                          fmax(0, g->ep - (f->compute + f->recompute));
            pieces[piece_pair(b, s, cf)] = pair;
        }
}

/* The pieces of work compute tasks are made of, priced once per step: a
 * layer, the embedding and the head, and every virtual stage's fused pass
 * (its layers, plus the embedding or head where they live). */
static void price_pieces(builder_t *b)
{
    const step_costs_t *c = b->c;
    cost_parts_t *pieces = b->ctx->pieces;
    pieces[PIECE_FWD] = c->fwd;
    pieces[PIECE_BWD] = c->bwd;
    pieces[PIECE_EMBED_FWD] = c->embed_fwd;
    pieces[PIECE_EMBED_BWD] = c->embed_bwd;
    pieces[PIECE_HEAD_FWD] = c->head_fwd;
    pieces[PIECE_HEAD_BWD] = c->head_bwd;
    pieces[PIECE_BWD_KEEP] = c->bwd_keep;
    const layout_t *l = b->in->layout;
    for (int vs = 0; vs < b->V; vs++)
        for (int dir = 0; dir < 2; dir++) {
            cost_parts_t sum = {0};
            int layers = chunk_layers(b, vs);
            int rebuilt = dir == 1 && l->recompute_layers > 0
                              ? layout_chunk_recomputed(l, b->in->model, vs)
                              : layers;
            scale_add(&sum, &pieces[PIECE_FWD + dir], rebuilt);
            if (rebuilt < layers)
                scale_add(&sum, &pieces[PIECE_BWD_KEEP], layers - rebuilt);
            if (vs == 0)
                scale_add(&sum, &pieces[PIECE_EMBED_FWD + dir], 1);
            if (vs == b->V - 1)
                scale_add(&sum, &pieces[PIECE_HEAD_FWD + dir], 1);
            pieces[piece_chunk(vs, dir)] = sum;
        }
    bool split = sched_get(b->in->layout->schedule)->ops_per_pass > 2;
    if (split)
        price_split_pieces(b);
    for (long i = 0; i < piece_count(b, split); i++)
        b->ctx->piece_s[i] = cost_total(&pieces[i]);
}

/* Size the context for this step (and the engine for the most tasks and
 * dependencies it can get), and lay out every stage's schedule. */
static int build_prepare(builder_t *b)
{
    sim_ctx_t *ctx = b->ctx;
    const sim_input_t *in = b->in;
    const layout_t *l = in->layout;
    const sched_def_t *sched = sched_get(l->schedule);
    long per_stage = sched_max_ops(sched, b->m, b->v);
    bool split = sched->ops_per_pass > 2;
    long n_map = (long)b->V * b->m * 2;
    int max_layers = in->model->n_layers;
    /* Compute tasks per stage: every pass, split into layers (and the two
     * edge layers) where per-layer events are kept, and the optimizer. */
    long split_passes = in->opt.layer_events ? per_stage : b->v;
    long stride = per_stage + split_passes * (max_layers + 2) + 2;
    if (stride > (1L << 28))
        return -1;
    ctx->stride = (int)stride;
    /* gradient reductions: a bucket per layer at most, per chunk (ZeRO-2:
     * per micro-batch too) */
    long dp_cap = (long)b->p * b->v * (max_layers + 4) * (l->zero >= 2 ? b->m : 1) + 8;
    ctx->ops_stride = per_stage;
    if (grow_to((void **)&ctx->ops, &ctx->ops_cap, (long)b->p * per_stage, sizeof *ctx->ops) ||
        grow_to((void **)&ctx->n_ops, &ctx->n_ops_cap, b->p, sizeof(int)) ||
        grow_to((void **)&ctx->first, &ctx->first_cap, n_map, sizeof(int)) ||
        grow_to((void **)&ctx->last, &ctx->last_cap, n_map, sizeof(int)) ||
        grow_to((void **)&ctx->compute_tasks, &ctx->compute_cap, (long)b->p * stride,
                sizeof(int)) ||
        grow_to((void **)&ctx->compute_piece, &ctx->compute_piece_cap, (long)b->p * stride,
                sizeof(int)) ||
        grow_to((void **)&ctx->n_compute, &ctx->stage_cap, b->p, sizeof(int)) ||
        grow_to((void **)&ctx->stage_end, &ctx->end_cap, 2L * b->p, sizeof(double)) ||
        grow_to((void **)&ctx->last_compute, &ctx->last_compute_cap, b->p, sizeof(int)) ||
        grow_to((void **)&ctx->vs_layers, &ctx->vs_cap, b->V, sizeof(int)) ||
        grow_to((void **)&ctx->pieces, &ctx->piece_cap, piece_count(b, split),
                sizeof(cost_parts_t)) ||
        grow_to((void **)&ctx->piece_s, &ctx->piece_s_cap, piece_count(b, split),
                sizeof(double)) ||
        grow_to((void **)&ctx->last_bwd, &ctx->last_bwd_cap, b->v, sizeof(int)) ||
        grow_to((void **)&ctx->layer_ids, &ctx->layer_ids_cap, max_layers + 1L, sizeof(int)) ||
        grow_to((void **)&ctx->dp_tasks, &ctx->dp_tasks_cap, dp_cap, sizeof(int)))
        return -1;
    /* Every task: the compute tasks, a send per pass, the reductions, the
     * embedding sync, the step-end sync and a gather per stage. Every
     * dependency: three per send, one per reduction and gather, and the
     * syncs' waits. */
    long sends = (long)b->p * per_stage;
    if (eng_reserve(ctx->eng, (long)b->p * stride + sends + dp_cap + 2L * b->p + 2,
                    3 * sends + 2 * dp_cap + 3L * b->p + 4))
        return -1;
    memset(ctx->n_compute, 0, (size_t)b->p * sizeof(int));
    memset(ctx->stage_end, 0, 2 * (size_t)b->p * sizeof(double));
    for (int vs = 0; vs < b->V; vs++)
        ctx->vs_layers[vs] = layout_chunk_layers(l, in->model, vs);
    price_pieces(b);
    for (int s = 0; s < b->p; s++) {
        int n = sched->order(b->p, s, b->m, b->v, ctx->ops + (long)s * per_stage);
        if (n < 0 || n > per_stage)
            return -2;
        ctx->n_ops[s] = n;
    }
    return 0;
}

/* The step's task graph: 0, -1 when memory runs out, -2 when a schedule
 * does not produce every pass. */
static int build(builder_t *b)
{
    int rc = build_prepare(b);
    if (rc)
        return rc;
    sim_ctx_t *ctx = b->ctx;
    build_scratch_t x = {ctx->layer_ids, ctx->dp_tasks, 0, ctx->last_compute};
    build_compute(b, &x);
    if (b->p > 1)
        build_transfers(b);
    /* a frozen base (LoRA) trains no embedding: nothing to keep in sync */
    if (b->in->model->tied_embeddings && b->head_rank != 0 && !finetune_frozen(&b->in->layout->ft))
        build_embed_sync(b, &x);
    build_step_end(b, &x);
    return b->oom ? -1 : 0;
}

/* ------------------------------------------------------------ reading back */

/* The dependency of task t that ended last (the first of equals); -1 if
 * none. */
static int latest_dep(const sim_engine_t *e, int t)
{
    const int *deps;
    int n = eng_deps(e, t, &deps);
    int last = -1;
    for (int i = 0; i < n; i++)
        if (last < 0 || eng_end(e, deps[i]) > eng_end(e, last))
            last = deps[i];
    return last;
}

/* The dependency of task t that ended last, or its stream predecessor if
 * that ended no earlier (what t waited for); -1 if none. */
static int last_blocker(const sim_engine_t *e, int t)
{
    int dep = latest_dep(e, t), prev = eng_stream_prev(e, t);
    if (prev < 0 || (dep >= 0 && eng_end(e, dep) > eng_end(e, prev)))
        return dep;
    return prev;
}

static bool is_dp_kind(int kind)
{
    return kind == TASK_DP || kind == TASK_EMBED_SYNC || kind == TASK_PARAM_GATHER;
}

/* A stage's wait for the step-end synchronisation: the sync itself and the
 * gradient reductions of the stage that finished last, back through the
 * chain of reductions that held it, are DP time; before them that stage
 * was still running its passes (the pipeline's drain, or more work than
 * this stage): bubble. */
static void classify_sync_wait(const sim_engine_t *e, int sync, double gap_start,
                               double gap_end, double *bd)
{
    double own = fmin(gap_end - gap_start, eng_duration(e, sync));
    bd[BD_DP_COMM] += own;
    double hi = gap_end - own;
    for (int t = last_blocker(e, sync); t >= 0 && hi > gap_start && is_dp_kind(eng_kind(e, t));
         t = last_blocker(e, t)) {
        double lo = fmax(gap_start, eng_start(e, t));
        double top = fmin(hi, eng_end(e, t));
        if (top > lo)
            bd[BD_DP_COMM] += top - lo;
        if (hi > top)
            bd[BD_PP_BUBBLE] += hi - top;
        hi = fmin(hi, lo);
    }
    if (hi > gap_start)
        bd[BD_PP_BUBBLE] += hi - gap_start;
}

/* The kind of wait a gap before task t was: who ended last among its deps. */
static void classify_gap(const sim_engine_t *e, int t, double gap_start, double gap_end,
                         double *bd)
{
    int blocker = latest_dep(e, t);
    double gap = gap_end - gap_start;
    if (blocker < 0) {
        bd[BD_OTHER] += gap;
        return;
    }
    int kind = eng_kind(e, blocker);
    if (kind == TASK_SYNC) {
        classify_sync_wait(e, blocker, gap_start, gap_end, bd);
        return;
    }
    if (kind == TASK_SEND) {
        double lo = fmax(gap_start, eng_start(e, blocker));
        double hi = fmin(gap_end, eng_end(e, blocker));
        double transfer = hi > lo ? hi - lo : 0;
        bd[BD_PP_COMM] += transfer;
        bd[BD_PP_BUBBLE] += gap - transfer;
        return;
    }
    if (is_dp_kind(kind)) {
        bd[BD_DP_COMM] += gap;
        return;
    }
    if (kind == TASK_OFFLOAD) {
        bd[BD_OFFLOAD] += gap;
        return;
    }
    bd[BD_PP_BUBBLE] += gap;
}

static void read_breakdown(const builder_t *b, int stage, double end, double *bd)
{
    const sim_ctx_t *ctx = b->ctx;
    const sim_engine_t *e = ctx->eng;
    int n = ctx->n_compute[stage];
    const int *tasks = ctx->compute_tasks + (long)stage * ctx->stride;
    const int *pieces = ctx->compute_piece + (long)stage * ctx->stride;
    double prev_end = 0;
    for (int i = 0; i < n; i++) {
        int t = tasks[i];
        double start = eng_start(e, t);
        if (start > prev_end + 1e-15)
            classify_gap(e, t, prev_end, start, bd);
        if (eng_kind(e, t) == TASK_OPTIMIZER) {
            bd[BD_OPTIMIZER] += eng_duration(e, t);
        } else if (eng_kind(e, t) == TASK_OFFLOAD) {
            bd[BD_OFFLOAD] += eng_duration(e, t);
        } else {
            const cost_parts_t *p = &ctx->pieces[pieces[i]];
            bd[BD_COMPUTE] += p->compute;
            bd[BD_RECOMPUTE] += p->recompute;
            bd[BD_TP_COMM] += p->tp;
            bd[BD_CP_COMM] += p->cp;
            bd[BD_EP_COMM] += p->ep;
            bd[BD_MOE_IMBALANCE] += p->imbalance;
            bd[BD_HOST] += p->host;
            bd[BD_DP_COMM] += p->dp;
            bd[BD_OFFLOAD] += p->offload;
        }
        prev_end = eng_end(e, t);
    }
    /* After the optimizer: a parameter all-gather that was not hidden. */
    if (end > prev_end)
        bd[BD_DP_COMM] += end - prev_end;
}

/* Compute and recompute seconds stage runs in the step: each of its
 * chunks' forward and backward for every micro-batch (however the
 * schedule splits or pairs them, their pieces add up to these), from the
 * priced pieces rather than a walk over the stage's tasks. */
static double stage_busy(const builder_t *b, int stage)
{
    const cost_parts_t *pieces = b->ctx->pieces;
    double busy = 0;
    for (int c = 0; c < b->v; c++) {
        int vs = layout_vstage(b->in->layout, stage, c);
        for (int dir = 0; dir < 2; dir++)
            busy += pieces[piece_chunk(vs, dir)].compute + pieces[piece_chunk(vs, dir)].recompute;
    }
    return b->m * busy;
}

/* Compute stage s loses to its DP collectives (sim/dp_contention.h). */
static double contention_s(const builder_t *b, int s)
{
    return dpc_stage_loss_s(b->in, b->ctx->eng, s * STREAMS_PER_STAGE + ST_COMPUTE,
                            s * STREAMS_PER_STAGE + ST_DP, b->ctx->stage_end[b->p + s]);
}

/* Latest end of each stage's tasks (compute and communication): the end
 * of the last task of one of its streams, which run in order. */
static void stage_ends(const sim_engine_t *e, int p, double *end)
{
    for (int s = 0; s < p; s++) {
        end[s] = 0;
        for (int k = 0; k < STREAMS_PER_STAGE; k++) {
            int t = eng_stream_last(e, s * STREAMS_PER_STAGE + k);
            if (t >= 0 && eng_end(e, t) > end[s])
                end[s] = eng_end(e, t);
        }
    }
}

double sim_ceiling_tflops(const sim_input_t *in)
{
    const double *peak = in->cluster->gpu.peak_tflops;
    precision_t p = in->layout->precision;
    double best = fmax(peak[DTYPE_BF16], peak[DTYPE_FP16]);
    if (p == PRECISION_FP32)
        best = fmax(best, fmax(peak[DTYPE_FP32], peak[DTYPE_TF32]));
    if (layout_precision_quantized(p) || layout_precision_fp4(p))
        best = fmax(best, peak[DTYPE_FP8]);
    if (layout_precision_fp4(p))
        best = fmax(best, peak[DTYPE_FP4]);
    return best;
}

double sim_implied_tflops(const sim_input_t *in, double step_s)
{
    return model_flops_per_step(in->model, in->layout) / (step_s * in->layout->n_gpus) / 1e12;
}

static void fill_rates(const sim_input_t *in, sim_result_t *r)
{
    const layout_t *l = in->layout;
    r->tokens_per_step = (double)l->global_batch * l->seq_len;
    r->tokens_per_s = r->tokens_per_step / r->step_time_s;
    r->model_flops_per_step = model_flops_per_step(in->model, l);
    r->hw_flops_per_step = model_hw_flops_per_step(in->model, l);
    double per_gpu = r->step_time_s * l->n_gpus * 1e12;
    r->model_tflops_per_gpu = r->model_flops_per_step / per_gpu;
    r->hardware_tflops_per_gpu = r->hw_flops_per_step / per_gpu;
    const gpu_t *g = &in->cluster->gpu;
    double peak = g->peak_tflops[DTYPE_BF16] > 0 ? g->peak_tflops[DTYPE_BF16]
                                                  : g->peak_tflops[DTYPE_FP16];
    r->mfu = r->model_tflops_per_gpu / peak;
    r->hfu = r->hardware_tflops_per_gpu / peak;
}

long sim_step_tasks(const sim_input_t *in)
{
    const layout_t *l = in->layout;
    const sched_def_t *sched = sched_get(l->schedule);
    long per_pass = sched ? sched->ops_per_pass : 2;
    long passes = per_pass * l->pp * l->vpp * l->grad_accum;
    if (in->opt.layer_events && l->pp * l->vpp > 0)
        passes *= in->model->n_layers / (l->pp * l->vpp) + 2;
    return passes;
}

int sim_check_size(const sim_input_t *in, err_t *err)
{
    const layout_t *l = in->layout;
    long tasks = sim_step_tasks(in);
    if (l->grad_accum > SIM_MAX_MICRO_BATCHES || tasks > SIM_MAX_TASKS)
        return err_setf(err, ERR_INPUT, NULL, "--global-batch",
                        "%d micro-batches per step on %d stages x %d chunks make %ld passes to "
                        "simulate, more than the simulator's limit (%ld passes, %d micro-batches); "
                        "use a smaller global batch or more data parallelism",
                        l->grad_accum, l->pp, l->vpp, tasks, SIM_MAX_TASKS,
                        SIM_MAX_MICRO_BATCHES);
    return ERR_OK;
}

int sim_run_step(sim_ctx_t *ctx, const sim_input_t *in, sim_result_t *out, err_t *err)
{
    int rc = sim_check_size(in, err);
    if (rc)
        return rc;
    step_costs_t costs;
    rc = sim_costs(in, &costs, err);
    if (rc)
        return rc;
    return sim_run_step_costs(ctx, in, &costs, out, err);
}

int sim_run_step_costs(sim_ctx_t *ctx, const sim_input_t *in, const step_costs_t *costs,
                       sim_result_t *out, err_t *err)
{
    memset(out, 0, sizeof *out);
    out->costs = *costs;
    const layout_t *l = in->layout;
    int rc = sim_check_size(in, err);
    if (rc)
        return rc;
    const sched_def_t *sched = sched_get(l->schedule);
    if (!sched)
        return err_set(err, ERR_INPUT, "unknown pipeline schedule");
    builder_t b = {ctx, in, &out->costs, l->pp, l->vpp, l->grad_accum, l->pp * l->vpp,
                   layout_head_rank(l),
                   in->opt.overlap_p2p < 0 ? sched->async_p2p : in->opt.overlap_p2p > 0,
                   l->pp * STREAMS_PER_STAGE, 0, -1, 0};
    if (eng_reset(ctx->eng, l->pp * STREAMS_PER_STAGE + 1))
        return err_set(err, ERR_RUNTIME, "out of memory setting up the simulation");
    ctx->pp = l->pp;
    rc = build(&b);
    if (rc == -2)
        return err_setf(err, ERR_INPUT, NULL, "--schedule",
                        "%s cannot run %d micro-batches on %d stages x %d chunks",
                        sched->name, b.m, b.p, b.v);
    if (rc)
        return err_set(err, ERR_RUNTIME, "out of memory building the simulation");
    if ((rc = eng_run(ctx->eng, err)))
        return rc;
    /* The step waits for the slowest of all GPUs: E[max of n normals] x
     * sigma of the compute a stage ran comes on top of when it ends. The
     * critical stage is the one whose end plus that wait is latest (a stage
     * that ends a little earlier with more compute can be the one the step
     * waits for). */
    double k_straggle = out->costs.straggler_cv * out->costs.straggler_sigma_max;
    int crit = 0;
    double crit_end = -1;
    stage_ends(ctx->eng, b.p, ctx->stage_end);
    for (int s = 0; s < b.p; s++) {
        double end = ctx->stage_end[s] + k_straggle * stage_busy(&b, s) + contention_s(&b, s);
        if (end > crit_end * (1 + 1e-12)) { /* ties: the first stage */
            crit = s;
            crit_end = end;
        }
    }
    read_breakdown(&b, crit, ctx->stage_end[crit], out->breakdown_s);
    double busy = out->breakdown_s[BD_COMPUTE] + out->breakdown_s[BD_RECOMPUTE];
    out->breakdown_s[BD_STRAGGLER] = k_straggle * busy;
    double lost = contention_s(&b, crit);
    out->breakdown_s[BD_DP_COMM] += lost;
    out->step_time_s = ctx->stage_end[crit] + out->breakdown_s[BD_STRAGGLER] + lost;
    out->critical_stage = crit;
    out->tasks = eng_task_count(ctx->eng);
    out->events = eng_events(ctx->eng);
    double work = busy + out->breakdown_s[BD_TP_COMM] + out->breakdown_s[BD_CP_COMM] +
                  out->breakdown_s[BD_EP_COMM] + out->breakdown_s[BD_MOE_IMBALANCE];
    out->bubble_fraction = work > 0 ? out->breakdown_s[BD_PP_BUBBLE] / work : 0;
    fill_rates(in, out);
    memory_opts_t mo;
    sim_memory_opts(in->profile, &in->opt, &mo);
    model_memory_peak(in->model, l, &mo, &out->memory);
    out->capacity_gib = in->cluster->gpu.memory_gib;
    out->fits = out->memory.total_bytes / GIB <= out->capacity_gib;
    if (l->offload) {
        if (!offload_host_fits(&out->memory, in->cluster, l, &out->host_gib,
                               &out->host_capacity_gib))
            out->fits = false;
        offload_step_totals(&b.c->offload, in->cluster, l,
                            layout_stage_layers(l, in->model, crit), b.m,
                            &out->offload_transfer_s, &out->offload_transfer_gb);
    }
    return ERR_OK;
}

/* ------------------------------------------------------------ trace */

static const char *kind_names[TASK_KIND_COUNT] = {
    "fwd", "bwd", "send", "dp reduce", "embedding grad sync", "step sync", "optimizer",
    "param all-gather", "offload transfer", "wgrad", "fwd+bwd"};

const char *sim_task_kind_name(sim_task_kind_t k)
{
    return k < TASK_KIND_COUNT ? kind_names[k] : "?";
}

static int cmp_event(const void *a, const void *b)
{
    const sim_event_t *x = a, *y = b;
    if (x->start_s != y->start_s)
        return x->start_s < y->start_s ? -1 : 1;
    if (x->stage != y->stage)
        return x->stage - y->stage;
    return x->stream - y->stream;
}

int sim_timeline(const sim_ctx_t *ctx, sim_event_t **events, int *n, err_t *err)
{
    const sim_engine_t *e = ctx->eng;
    int count = eng_task_count(e);
    sim_event_t *v = malloc((size_t)(count > 0 ? count : 1) * sizeof *v);
    if (!v)
        return err_set(err, ERR_RUNTIME, "out of memory");
    for (int t = 0; t < count; t++) {
        int stream = eng_stream(e, t);
        uint32_t tag = eng_tag(e, t);
        v[t].stage = stream / STREAMS_PER_STAGE;
        v[t].stream = stream % STREAMS_PER_STAGE;
        v[t].kind = (sim_task_kind_t)eng_kind(e, t);
        v[t].mb = TAG_MB(tag);
        v[t].chunk = TAG_CHUNK(tag);
        v[t].start_s = eng_start(e, t);
        v[t].end_s = eng_end(e, t);
    }
    qsort(v, (size_t)count, sizeof *v, cmp_event);
    *events = v;
    *n = count;
    return ERR_OK;
}

int sim_write_trace(const sim_ctx_t *ctx, const char *path, err_t *err)
{
    const sim_engine_t *e = ctx->eng;
    /* written beside path and renamed over it: a reader (Perfetto) never
     * opens half a trace, and a failed run leaves the old one */
    fileio_out_t out;
    int rc = fileio_out_open(&out, path, err);
    if (rc)
        return rc;
    FILE *f = out.f;
    static const char *stream_names[STREAMS_PER_STAGE] = {"compute", "pp send", "dp comm",
                                                          "spare"};
    fprintf(f, "{\"displayTimeUnit\": \"ms\", \"traceEvents\": [\n");
    int first = 1;
    for (int s = 0; s <= ctx->pp; s++) {
        fprintf(f, "%s{\"ph\": \"M\", \"pid\": %d, \"name\": \"process_name\", "
                   "\"args\": {\"name\": \"%s %d\"}}",
                first ? "" : ",\n", s, s < ctx->pp ? "pipeline stage" : "global", s);
        first = 0;
        for (int k = 0; k < STREAMS_PER_STAGE && s < ctx->pp; k++)
            fprintf(f, ",\n{\"ph\": \"M\", \"pid\": %d, \"tid\": %d, \"name\": \"thread_name\", "
                       "\"args\": {\"name\": \"%s\"}}",
                    s, k, stream_names[k]);
    }
    for (int t = 0; t < eng_task_count(e); t++) {
        int stream = eng_stream(e, t);
        int stage = stream / STREAMS_PER_STAGE, k = stream % STREAMS_PER_STAGE;
        uint32_t tag = eng_tag(e, t);
        int kind = eng_kind(e, t);
        char name[96];
        if (kind == TASK_FWD || kind == TASK_BWD) {
            if (TAG_LAYER(tag) == NO_LAYER)
                snprintf(name, sizeof name, "%s mb%d chunk%d", kind_names[kind], TAG_MB(tag),
                         TAG_CHUNK(tag));
            else
                snprintf(name, sizeof name, "%s mb%d chunk%d layer%d", kind_names[kind],
                         TAG_MB(tag), TAG_CHUNK(tag), TAG_LAYER(tag));
        } else {
            snprintf(name, sizeof name, "%s", kind_names[kind]);
        }
        fprintf(f, ",\n{\"name\": \"%s\", \"cat\": \"%s\", \"ph\": \"X\", \"pid\": %d, "
                   "\"tid\": %d, \"ts\": %.3f, \"dur\": %.3f}",
                name, kind_names[kind], stage, k, eng_start(e, t) * 1e6,
                eng_duration(e, t) * 1e6);
    }
    fprintf(f, "\n]}\n");
    return fileio_out_commit(&out, err);
}
