#include "plan/plan.h"

#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/catalog.h"
#include "common/clock.h"
#include "common/units.h"
#include "plan/planInt.h"
#include "sim/costs.h"
#include "sim/offload.h"

#ifdef _OPENMP
#include <omp.h>
#endif

int plan_use_options(sim_options_t *o, const void *ctx, err_t *err)
{
    (void)err;
    *o = *(const sim_options_t *)ctx;
    return ERR_OK;
}

void plan_space_default(plan_space_t *s)
{
    memset(s, 0, sizeof *s);
    s->precision = PRECISION_BF16;
    finetune_defaults(&s->ft);
}

int plan_seq_lens(const plan_space_t *s, int *out, int cap)
{
    int n = 0;
    if (cap < 1)
        return 0;
    out[n++] = s->seq_len;
    if (s->seq_len_max <= s->seq_len)
        return n;
    for (long p = 1; p < s->seq_len_max && n < cap; p *= 2)
        if (p > s->seq_len)
            out[n++] = (int)p;
    if (n < cap)
        out[n++] = s->seq_len_max;
    return n;
}

void plan_batch_range(const plan_space_t *s, int seq, int *lo, int *hi)
{
    *lo = s->global_batch_min;
    *hi = s->global_batch_max;
    if (s->seq_len_max > s->seq_len && s->batch_tokens_min > 0 && seq > 0) {
        *lo = (int)fmax(1, round(s->batch_tokens_min / seq));
        *hi = (int)fmax(*lo, round(s->batch_tokens_max / seq));
    }
}

/* ------------------------------------------------------------ parsing */

int plan_parse_range(const char *text, const char *flag, int max, plan_range_t *out, err_t *err)
{
    long lo, hi;
    char *end;
    lo = strtol(text, &end, 10);
    if (end == text)
        goto bad;
    if (*end == '\0') {
        hi = lo;
    } else if (end[0] == '.' && end[1] == '.') {
        const char *h = end + 2;
        hi = strtol(h, &end, 10);
        if (end == h || *end)
            goto bad;
    } else {
        goto bad;
    }
    if (lo < 0 || hi < lo || hi > max)
        return err_setf(err, ERR_INPUT, NULL, flag, "'%s': use N or LO..HI with 0 <= LO <= HI <= %d",
                        text, max);
    out->lo = (int)lo;
    out->hi = (int)hi;
    return ERR_OK;
bad:
    return err_setf(err, ERR_INPUT, NULL, flag, "'%s': use a number (8) or a range (1..8)", text);
}

/* "a,b,c" of names parsed by parse into a mask. */
static int parse_set(const char *text, const char *flag, int (*parse)(const char *, int *, err_t *),
                     unsigned *mask, err_t *err)
{
    char buf[256];
    if (strlen(text) >= sizeof buf)
        return err_setf(err, ERR_INPUT, NULL, flag, "list too long");
    snprintf(buf, sizeof buf, "%s", text);
    *mask = 0;
    char *save = NULL;
    for (char *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        int v;
        if (parse(tok, &v, err)) /* its message names the flag */
            return ERR_INPUT;
        *mask |= 1u << v;
    }
    if (!*mask)
        return err_setf(err, ERR_INPUT, NULL, flag, "name at least one");
    return ERR_OK;
}

static int parse_rc(const char *t, int *v, err_t *err)
{
    recompute_t r;
    int rc = layout_parse_recompute(t, &r, err);
    *v = (int)r;
    return rc;
}

static int parse_sched(const char *t, int *v, err_t *err)
{
    schedule_t s;
    int rc = layout_parse_schedule(t, &s, err);
    *v = (int)s;
    return rc;
}

static int parse_prec(const char *t, int *v, err_t *err)
{
    precision_t p;
    int rc = layout_parse_precision(t, &p, err);
    *v = (int)p;
    return rc;
}

int plan_parse_precision_set(const char *text, unsigned *mask, err_t *err)
{
    return parse_set(text, "--precision", parse_prec, mask, err);
}

int plan_parse_recompute_set(const char *text, unsigned *mask, err_t *err)
{
    return parse_set(text, "--recompute", parse_rc, mask, err);
}

int plan_parse_schedule_set(const char *text, unsigned *mask, err_t *err)
{
    return parse_set(text, "--schedule", parse_sched, mask, err);
}

/* ------------------------------------------------------------ candidates */

typedef struct {
    layout_t l;
    int fw;           /* index into the frameworks searched (with variants) */
    int slot;         /* its plan_fw_t.slot */
    double bound_tps; /* upper bound on tokens/s */
    double tps;       /* simulated tokens/s, 0 when not simulated */
    bool host_waits;  /* its GPU waits for the host to issue kernels */
    long index;       /* enumeration order, for deterministic ties */
} cand_t;

typedef struct {
    cand_t *v;
    long n, cap;
    bool oom;
} cand_list_t;

static void push(cand_list_t *c, const layout_t *l, int fw, int slot)
{
    if (c->n == c->cap) {
        long cap = c->cap ? 2 * c->cap : 1024;
        cand_t *v = realloc(c->v, (size_t)cap * sizeof *v);
        if (!v) {
            c->oom = true;
            return;
        }
        c->v = v;
        c->cap = cap;
    }
    c->v[c->n] = (cand_t){*l, fw, slot, 0, 0, false, c->n};
    c->n++;
}

/* Lighter first and last stages for L layers on pp stages when L does not
 * divide (they also carry the embedding and the output layer): the middle
 * stages equal. 0 when none exists. */
static int uneven_split(int L, int pp, int *first, int *last)
{
    *first = *last = 0;
    if (L % pp == 0)
        return 1;
    if (pp < 3)
        return 0;
    int mid = (L + pp - 1) / pp;
    int rest = L - (pp - 2) * mid;
    if (rest < 2)
        return 0;
    *first = rest / 2;
    *last = rest - rest / 2;
    return *last <= mid;
}

/* Virtual stages of vpp chunks per rank over pp ranks: even, or (when the
 * framework allows it) the embedding and the loss counted as one layer
 * each, the first and last chunks one layer lighter (Megatron's
 * account_for_embedding/loss_in_pipeline_split). With one layer a chunk
 * the first holds the embedding alone and the last the loss alone
 * (LAYOUT_STAGE_EMPTY): Megatron-Core builds such chunks (core_r0.11
 * get_num_layers_to_build asserts only that none goes below zero layers),
 * torchtitan's split weighs the embedding and the output as a layer each,
 * and Llama 3 405B trained so (Dubey et al. 2024, sec. 3.3.2: "the first
 * model chunk on the first stage has only the embedding"). */
static int interleaved_split(int L, int pp, int v, bool uneven, int *first, int *last)
{
    *first = *last = 0;
    long chunks = (long)pp * v;
    if (L % chunks == 0)
        return 1;
    if (!uneven || (L + 2) % chunks)
        return 0;
    int per = (int)((L + 2) / chunks);
    if (per < 1)
        return 0;
    *first = *last = per > 1 ? per - 1 : LAYOUT_STAGE_EMPTY;
    return 1;
}

/* Largest global batch in [lo, hi] that step divides; 0 when none. */
static int pick_batch(int lo, int hi, long step)
{
    if (step <= 0 || step > hi)
        return 0;
    long gb = (hi / step) * step;
    return gb >= lo ? (int)gb : 0;
}

static bool in_range(const plan_range_t *r, int v, int def_lo, int def_hi)
{
    int lo = r->hi ? r->lo : def_lo, hi = r->hi ? r->hi : def_hi;
    return v >= lo && v <= hi;
}

static int range_hi(const plan_range_t *r, int def_hi)
{
    return r->hi ? r->hi : def_hi;
}

typedef struct {
    const model_t *m;
    const cluster_t *c;
    const profile_t *p;
    const plan_space_t *s;
    const plan_fw_t *fws;
    int n_fws;
    memory_opts_t *mo; /* per framework */
    plan_search_t *out;
    cand_list_t *cl;
} enum_ctx_t;

/* Recompute modes from lightest to heaviest (cost order). */
static const recompute_t RC_ORDER[] = {RECOMPUTE_NONE, RECOMPUTE_SELECTIVE, RECOMPUTE_OPS,
                                       RECOMPUTE_FULL};

/* Why try_layout did not keep a layout. */
enum { TRY_KEPT = 0, TRY_INVALID, TRY_MEMORY, TRY_SIZE };

/* The peak memory per GPU of the finalized layout l under framework fi,
 * GiB (*mem: its parts). */
static double peak_gib(const enum_ctx_t *e, int fi, const layout_t *l, model_memory_t *mem)
{
    model_memory_peak(e->m, l, &e->mo[fi], mem);
    return mem->total_bytes / GIB;
}

/* Finalize l and check it against the framework and the GPU's memory
 * (counting what is pruned); keep it when it fits. */
static int try_layout(enum_ctx_t *e, int fi, layout_t l)
{
    const plan_fw_t *f = &e->fws[fi];
    plan_search_t *out = e->out;
    out->candidates++;
    out->per_framework[f->slot].candidates++;
    err_t ignore;
    if (layout_finalize(&l, e->m, e->c->n_gpus, &ignore) ||
        fw_check_layout(&f->fw, &l, &f->opt, &ignore)) {
        out->pruned[PRUNE_INVALID]++;
        return TRY_INVALID;
    }
    model_memory_t mem;
    double gib = peak_gib(e, fi, &l, &mem);
    if (gib < out->smallest_memory_gib) {
        out->smallest_memory_gib = gib;
        out->smallest_memory_layout = l;
    }
    double host_need, host_have;
    if (gib > e->c->gpu.memory_gib ||
        (l.offload && !offload_host_fits(&mem, e->c, &l, &host_need, &host_have))) {
        out->pruned[PRUNE_MEMORY]++;
        return TRY_MEMORY;
    }
    sim_input_t in = {e->m, &l, e->c, e->p, f->opt};
    if (sim_check_size(&in, &ignore)) {
        out->pruned[PRUNE_SIZE]++;
        return TRY_SIZE;
    }
    push(e->cl, &l, fi, f->slot);
    return TRY_KEPT;
}

/* Whether the finalized layout fin with full recompute of only the first
 * n layers of each chunk fits in the GPU's memory (the layer count changes
 * nothing finalize derives); memory only, nothing counted. */
static bool block_fits(const enum_ctx_t *e, int fi, const layout_t *fin, int n)
{
    layout_t l = *fin;
    l.recompute_layers = n;
    model_memory_t mem;
    return peak_gib(e, fi, &l, &mem) <= e->c->gpu.memory_gib;
}

/* Megatron block recompute before full recompute of every layer: the
 * fewest layers per chunk to rebuild (1 .. the largest chunk - 1) that
 * fits, by bisection (memory falls as more layers are rebuilt); 0 when
 * none does. */
static int fewest_block_layers(const enum_ctx_t *e, int fi, const layout_t *full)
{
    layout_t l = *full;
    err_t ignore;
    if (layout_finalize(&l, e->m, e->c->n_gpus, &ignore))
        return 0;
    int most = 0;
    for (int vs = 0; vs < l.pp * l.vpp; vs++) {
        int n = layout_chunk_layers(&l, e->m, vs);
        most = n > most ? n : most;
    }
    int lo = 1, hi = most - 1;
    if (hi < lo || !block_fits(e, fi, &l, hi))
        return 0;
    while (lo < hi) {
        int mid = lo + (hi - lo) / 2;
        if (block_fits(e, fi, &l, mid))
            hi = mid;
        else
            lo = mid + 1;
    }
    return lo;
}

/* The selective recompute modules to try, lightest first (plan.h): the
 * attention core alone, then more modules where the framework names them;
 * or the space's fixed set. Returns how many (at most 3). */
static int module_ladder(const enum_ctx_t *e, const plan_fw_t *f, unsigned out[3])
{
    if (e->s->rc_modules) {
        out[0] = e->s->rc_modules;
        return 1;
    }
    out[0] = LAYOUT_RC_CORE_ATTN;
    if (!f->fw.caps.recompute_modules)
        return 1;
    const model_t *m = e->m;
    bool moe = model_is_moe(m), mla = model_is_mla(m);
    bool dense_mlp = !moe || m->moe.n_moe_layers < m->n_layers;
    if (!moe && !mla) {
        out[1] = LAYOUT_RC_CORE_ATTN | LAYOUT_RC_MLP;
        return 2;
    }
    unsigned light = LAYOUT_RC_CORE_ATTN | LAYOUT_RC_LAYERNORM;
    if (moe)
        light |= LAYOUT_RC_MOE_ACT | (m->moe.shared_ffn > 0 ? LAYOUT_RC_SHARED_EXPERTS : 0);
    if (mla)
        light |= LAYOUT_RC_MLA_UP_PROJ;
    out[1] = light;
    /* the whole MoE block covers its activations and shared experts */
    out[2] = LAYOUT_RC_CORE_ATTN | LAYOUT_RC_LAYERNORM | (moe ? LAYOUT_RC_MOE : 0) |
             (mla ? LAYOUT_RC_MLA_UP_PROJ : 0) | (dense_mlp ? LAYOUT_RC_MLP : 0);
    return out[2] != out[1] ? 3 : 2;
}

/* One base layout (everything but recompute): the lightest recompute mode
 * of the framework that fits is kept; heavier ones are never faster.
 * Selective recompute climbs the module ladder; full recompute tries the
 * fewest rebuilt layers per chunk first where the framework runs
 * Megatron's block recompute. */
static bool consider(enum_ctx_t *e, int fi, layout_t base)
{
    const plan_fw_t *f = &e->fws[fi];
    /* a selective recompute of more modules that fits competes with block
     * recompute of the fewest layers (either may cost less), not with
     * heavier modes */
    bool modules_kept = false;
    for (size_t r = 0; r < sizeof RC_ORDER / sizeof *RC_ORDER; r++) {
        recompute_t rc = RC_ORDER[r];
        if (!f->fw.caps.recompute[rc] ||
            (e->s->recompute_mask && !(e->s->recompute_mask & (1u << rc))))
            continue;
        layout_t l = base;
        l.recompute = rc;
        if (rc == RECOMPUTE_SELECTIVE) {
            unsigned ladder[3];
            int n = module_ladder(e, f, ladder);
            for (int k = 0; k < n && !modules_kept; k++) {
                layout_t sel = l;
                sel.recompute_modules = ladder[k] == LAYOUT_RC_CORE_ATTN ? 0 : ladder[k];
                if (try_layout(e, fi, sel) == TRY_KEPT) {
                    if (!sel.recompute_modules)
                        return true;
                    modules_kept = true;
                }
            }
            continue;
        }
        if (modules_kept && rc != RECOMPUTE_FULL)
            continue;
        if (rc == RECOMPUTE_FULL && f->fw.caps.recompute_block && !l.offload) {
            int n = fewest_block_layers(e, fi, &l);
            if (n > 0) {
                layout_t partial = l;
                partial.recompute_layers = n;
                if (try_layout(e, fi, partial) == TRY_KEPT)
                    return true;
            }
        }
        if (modules_kept)
            return true;
        if (try_layout(e, fi, l) == TRY_KEPT)
            return true;
    }
    return modules_kept;
}

/* One (shape, micro-batch, global batch, EP, expert TP) in each ZeRO stage
 * the framework runs. */
static void enum_zero(enum_ctx_t *e, int fi, const layout_t *shape, int dp, int mb, int gb,
                      int ep, int etp)
{
    const plan_space_t *s = e->s;
    const fw_caps_t *caps = &e->fws[fi].fw.caps;
    for (int z = 0; z <= 3; z++) {
        if (!caps->zero[z] || !in_range(&s->zero, z, 0, 3))
            continue;
        if (z > 0 && (long)dp * shape->cp == 1)
            continue; /* nothing to shard over */
        if (z >= 2 && shape->pp > 1 && !caps->zero3_with_pp)
            continue;
        layout_t l = *shape;
        l.micro_batch = mb;
        l.global_batch = gb;
        l.grad_accum = 0;
        l.distributed_optimizer = z == 1;
        l.zero = z == 1 ? 0 : z;
        l.ep = ep;
        l.etp = ep > 1 ? etp : 0;
        /* Host transfers never speed a step up: offload only what no
         * recompute mode fits on the GPU. */
        if (!consider(e, fi, l) && s->allow_offload && z >= 1) {
            l.offload = LAYOUT_OFFLOAD_OPTIMIZER | (z == 3 ? LAYOUT_OFFLOAD_PARAMS : 0);
            consider(e, fi, l);
        }
    }
}

/* The expert layouts of one shape and batch: each EP that divides the
 * experts and the ranks, with expert TP 1 (each expert's GEMMs whole on a
 * rank) or the attention's TP (Megatron-Core's --expert-tensor-parallel-size
 * defaults to TP; its MoE guide recommends 1), where EP x ETP divides the
 * ranks. */
static void enum_experts(enum_ctx_t *e, int fi, const layout_t *shape, int dp, int mb, int gb)
{
    const plan_space_t *s = e->s;
    bool moe = model_is_moe(e->m);
    int experts = moe ? e->m->moe.n_experts : 1;
    long ranks = (long)shape->tp * shape->cp * dp;
    for (int ep = 1; ep <= (moe && e->fws[fi].fw.caps.ep ? experts : 1); ep++) {
        if (experts % ep || ranks % ep || !in_range(&s->ep, ep, 1, 1 << 24))
            continue;
        int etps[2] = {1, shape->tp};
        for (int k = 0; k < (ep > 1 && shape->tp > 1 ? 2 : 1); k++) {
            if (ranks % ((long)ep * etps[k]) || (ep > 1 && !in_range(&s->etp, etps[k], 1, 1 << 24)))
                continue;
            enum_zero(e, fi, shape, dp, mb, gb, ep, etps[k]);
        }
    }
}

/* The batch dimensions of one (tp, cp, pp, vpp, split) shape. */
static void enum_batch(enum_ctx_t *e, int fi, const layout_t *shape, int dp)
{
    const plan_space_t *s = e->s;
    int mb_hi = range_hi(&s->micro_batch, 16);
    for (int mb = s->micro_batch.hi ? s->micro_batch.lo : 1; mb <= mb_hi; mb++) {
        if (mb < 1)
            continue;
        long step = (long)mb * dp * (shape->vpp > 1 ? shape->pp : 1);
        int gb_lo, gb_hi;
        plan_batch_range(s, shape->seq_len, &gb_lo, &gb_hi);
        int gb = pick_batch(gb_lo, gb_hi, step);
        if (gb)
            enum_experts(e, fi, shape, dp, mb, gb);
    }
}

static void enum_shapes(enum_ctx_t *e, int fi, int seq, int tp_hi, int cp_hi, bool any_cp);

/* Every shape framework fi runs, at each sequence length searched. */
static void enum_framework(enum_ctx_t *e, int fi)
{
    const plan_space_t *s = e->s;
    const fw_caps_t *caps = &e->fws[fi].fw.caps;
    int tp_hi = range_hi(&s->tp, caps->tp ? 2 * e->c->gpus_per_node : 1);
    bool any_cp = fw_caps_cp(caps);
    int cp_hi = range_hi(&s->cp, any_cp ? 64 : 1);
    int seqs[PLAN_MAX_SEQ_LENS];
    int n_seq = plan_seq_lens(s, seqs, PLAN_MAX_SEQ_LENS);
    for (int si = 0; si < n_seq; si++)
        enum_shapes(e, fi, seqs[si], tp_hi, cp_hi, any_cp);
}

/* The (TP, CP, PP, schedule, VPP, split) shapes of one sequence length. */
static void enum_shapes(enum_ctx_t *e, int fi, int seq, int tp_hi, int cp_hi, bool any_cp)
{
    const model_t *m = e->m;
    const plan_space_t *s = e->s;
    const fw_caps_t *caps = &e->fws[fi].fw.caps;
    int G = e->c->n_gpus, L = m->n_layers;
    for (int tp = s->tp.hi ? s->tp.lo : 1; tp <= tp_hi && tp <= G; tp++) {
        if (tp < 1 || G % tp || !model_heads_split(m, tp) ||
            (tp > 1 && !caps->tp))
            continue;
        for (int cp = s->cp.hi ? s->cp.lo : 1; cp <= cp_hi; cp++) {
            if (cp < 1 || G % ((long)tp * cp) || (cp > 1 && seq % (2 * cp)))
                continue;
            if (cp > 1 && (!any_cp || (!s->cp.hi && seq / cp < 1024)))
                continue;
            int pp_hi = range_hi(&s->pp, caps->pp ? L : 1);
            for (int pp = s->pp.hi ? s->pp.lo : 1; pp <= pp_hi && pp <= L; pp++) {
                long mp = (long)tp * cp * pp;
                if (pp < 1 || G % mp)
                    continue;
                int dp = (int)(G / mp);
                for (int sched = 0; sched < SCHEDULE_COUNT; sched++) {
                    if (pp == 1 && sched != SCHEDULE_1F1B)
                        continue;
                    if (pp > 1 && !caps->schedule[sched])
                        continue;
                    if (s->schedule_mask && pp > 1 && !(s->schedule_mask & (1u << sched)))
                        continue;
                    /* interleaved: 2 or more chunks per rank; DualPipeV's V:
                     * exactly 2 */
                    bool chunked = sched == SCHEDULE_INTERLEAVED || sched == SCHEDULE_DUALPIPEV;
                    int v_lo = chunked ? 2 : 1;
                    int v_hi = sched == SCHEDULE_INTERLEAVED ? (L + 2) / pp : v_lo;
                    if (s->vpp.hi) {
                        v_lo = v_lo > s->vpp.lo ? v_lo : s->vpp.lo;
                        v_hi = v_hi < s->vpp.hi ? v_hi : s->vpp.hi;
                    }
                    for (int v = v_lo; v <= v_hi; v++) {
                        int first, last;
                        int ok = chunked
                                     ? interleaved_split(L, pp, v, caps->uneven_split, &first,
                                                         &last)
                                     : (caps->uneven_split ? uneven_split(L, pp, &first, &last)
                                                           : (first = last = 0, L % pp == 0));
                        if (!ok)
                            continue;
                        layout_t l;
                        layout_defaults(&l);
                        l.tp = tp;
                        l.cp = cp;
                        l.pp = pp;
                        l.vpp = v;
                        l.schedule = (schedule_t)sched;
                        l.first_stage_layers = first;
                        l.last_stage_layers = last;
                        l.seq_len = seq;
                        l.precision = e->fws[fi].precision;
                        l.flash_attention = e->fws[fi].flash;
                        l.sp_saves_gathered = e->fws[fi].fw.sp_saves_gathered;
                        l.grad_bytes = fw_grad_bytes(&e->fws[fi].fw, l.precision);
                        l.sequence_parallel = tp > 1 && caps->sp;
                        l.ft = e->s->ft;
                        enum_batch(e, fi, &l, dp);
                    }
                }
            }
        }
    }
}

/* ------------------------------------------------------------ ranking */

/* Tokens per second no step can beat: every stage computes its layers for
 * every micro-batch, so the busiest stage's compute bounds the step; the
 * slowest GPU's lateness (the straggler term, a share of the stage's
 * compute) comes on top. Under
 * the one-direction schedules (GPipe, 1F1B, interleaved) of a dense model,
 * a stage also waits for the first micro-batch's forward through the
 * virtual stages before it, and the step waits for the last backward to
 * come back through them: each stage's work plus that chain of compute
 * bounds the step too (the pipeline fill and drain, which no overlap
 * hides). */
double plan_tps_bound(const sim_input_t *in, const step_costs_t *c)
{
    const layout_t *l = in->layout;
    const model_t *m = in->model;
    /* a layer's forward and backward, with the recompute and without it
     * (partial recompute: the layers past each chunk's first N keep their
     * activations) */
    double full = cost_total(&c->fwd) + cost_total(&c->bwd);
    double keep = cost_total(&c->fwd) + cost_total(&c->bwd_keep);
    /* DualPipeV's paired passes can hide all of their all-to-alls */
    if (l->schedule == SCHEDULE_DUALPIPEV) {
        full -= c->fwd.ep + c->bwd.ep;
        keep -= c->fwd.ep + c->bwd_keep.ep;
    }
    double c_full = c->fwd.compute + c->bwd.compute + c->bwd.recompute;
    double c_keep = c->fwd.compute + c->bwd.compute;
    bool chained = l->pp > 1 && l->schedule != SCHEDULE_DUALPIPEV && !model_is_moe(m);
    /* the step waits for the slowest GPU: a stage ends its compute late by
     * this share of it (sim_run_step's straggler term) */
    double k_straggle = c->straggler_cv * c->straggler_sigma_max;
    double step = 0, chain = 0; /* compute of the virtual stages before stage s's first */
    for (int s = 0; s < l->pp; s++) {
        int layers = layout_stage_layers(l, m, s), rebuilt = layout_stage_recomputed(l, m, s);
        double work = l->grad_accum * (rebuilt * full + (layers - rebuilt) * keep);
        double mine = l->grad_accum * (rebuilt * c_full + (layers - rebuilt) * c_keep);
        double late = k_straggle * mine;
        if (work + late > step)
            step = work + late;
        if (!chained)
            continue;
        if (mine + chain + late > step)
            step = mine + chain + late;
        int vs = layout_vstage(l, s, 0);
        int n = layout_chunk_layers(l, m, vs), r = layout_chunk_recomputed(l, m, vs);
        chain += r * c_full + (n - r) * c_keep;
    }
    return step > 0 ? (double)l->global_batch * l->seq_len / step : INFINITY;
}

static int cmp_bound(const void *a, const void *b)
{
    const cand_t *x = a, *y = b;
    if (x->bound_tps != y->bound_tps)
        return x->bound_tps < y->bound_tps ? 1 : -1;
    return x->index < y->index ? -1 : x->index > y->index;
}

static int cmp_tps(const void *a, const void *b)
{
    const cand_t *x = a, *y = b;
    if (x->tps != y->tps)
        return x->tps < y->tps ? 1 : -1;
    return x->index < y->index ? -1 : x->index > y->index;
}

typedef struct {
    const model_t *m;
    const cluster_t *c;
    const profile_t *p;
    const plan_fw_t *fws;
    int n_fws;
} sim_env_t;

/* Simulate every candidate in v[0..n) whose flag is set and tps is 0.
 * Returns -1 on allocation failure. */
static int simulate_marked(const sim_env_t *env, cand_t *v, long n, const bool *mark)
{
    int failed = 0;
#pragma omp parallel
    {
        sim_ctx_t *ctx = sim_ctx_create();
        if (!ctx) {
#pragma omp atomic write
            failed = 1;
        }
#pragma omp for schedule(dynamic, 4)
        for (long i = 0; i < n; i++) {
            if (!ctx || !mark[i] || v[i].tps > 0)
                continue;
            sim_input_t in = {env->m, &v[i].l, env->c, env->p, env->fws[v[i].fw].opt};
            sim_result_t r;
            err_t e;
            /* a layout the simulator refuses counts as never faster; so
             * does a rate that is not positive, which would leave the
             * candidate unsimulated (tps 0) and settle() looping on it */
            bool ok = sim_run_step(ctx, &in, &r, &e) == 0 && r.tokens_per_s > 0;
            v[i].tps = ok ? r.tokens_per_s : -1;
        }
        sim_ctx_destroy(ctx);
    }
    return failed ? -1 : 0;
}

/* The k-th best simulated throughput among candidates of framework slot
 * fw (any framework when fw < 0), v in bound order (cmp_bound); 0 when
 * fewer than k. */
static double kth_best(const cand_t *v, long n, int fw, int k)
{
    double top[PLAN_TOP];
    int have = 0;
    for (long i = 0; i < n; i++) {
        /* v is in bound order and no simulated rate exceeds its bound: past
         * a bound at or under the k-th best nothing enters */
        if (have == k && v[i].bound_tps <= top[k - 1])
            break;
        if (v[i].tps <= 0 || (fw >= 0 && v[i].slot != fw))
            continue;
        double t = v[i].tps;
        int j;
        if (have < k)
            j = have++;
        else if (t > top[k - 1])
            j = k - 1;
        else
            continue;
        top[j] = t;
        for (; j > 0 && top[j - 1] < top[j]; j--) {
            double x = top[j];
            top[j] = top[j - 1];
            top[j - 1] = x;
        }
    }
    return have < k ? 0 : top[k - 1];
}

/* Simulate until the k best of framework slot fw (any when < 0) are exact: no
 * unsimulated candidate's bound exceeds the k-th best. */
static int settle(const sim_env_t *env, cand_t *v, long n, int fw, int k, bool *mark)
{
    for (;;) {
        double kth = kth_best(v, n, fw, k);
        long todo = 0, end = 0;
        /* v is in bound order: past the first bound at or under kth none
         * is marked */
        for (; end < n && v[end].bound_tps > kth; end++) {
            mark[end] = v[end].tps == 0 && (fw < 0 || v[end].slot == fw);
            todo += mark[end];
        }
        if (!todo)
            return 0;
        /* in bound order, a block at a time, so the best found raises kth
         * before the rest are looked at (the blocks do not depend on the
         * number of threads) */
        long seen = 0;
        for (long i = 0; i < end; i++)
            if (mark[i] && ++seen > 64)
                mark[i] = false;
        if (simulate_marked(env, v, end, mark))
            return -1;
    }
}

/* ------------------------------------------------------------ constraints */

/* When the constraints leave nothing that fits: the first constraint whose
 * removal brings a layout back, and why. */
static void explain_constraints(const model_t *m, const cluster_t *c, const profile_t *p,
                                const plan_space_t *s, plan_search_t *out)
{
    static const struct {
        size_t off;
        const char *flag;
    } dims[] = {{offsetof(plan_space_t, tp), "--tp"},
                {offsetof(plan_space_t, pp), "--pp"},
                {offsetof(plan_space_t, cp), "--cp"},
                {offsetof(plan_space_t, vpp), "--vpp"},
                {offsetof(plan_space_t, micro_batch), "--micro-batch"},
                {offsetof(plan_space_t, zero), "--zero"}};
    for (size_t d = 0; d < sizeof dims / sizeof *dims; d++) {
        const plan_range_t *r = (const plan_range_t *)((const char *)s + dims[d].off);
        if (!r->hi)
            continue;
        plan_space_t relaxed = *s;
        *(plan_range_t *)((char *)&relaxed + dims[d].off) = (plan_range_t){0, 0};
        plan_search_t probe;
        err_t ignore;
        if (plan_search(m, c, p, &relaxed, NULL, &probe, &ignore) == ERR_OK && probe.found) {
            char want[32];
            if (r->lo == r->hi)
                snprintf(want, sizeof want, "%d", r->lo);
            else
                snprintf(want, sizeof want, "%d..%d", r->lo, r->hi);
            snprintf(out->constraint_note, sizeof out->constraint_note,
                     "%s %s leaves no layout of %s on %d GPUs that the framework runs and "
                     "that fits in %.0f GiB; without it the best is %s %d",
                     dims[d].flag, want, m->name, c->n_gpus, c->gpu.memory_gib, dims[d].flag,
                     *(const int *)((const char *)&probe.layout +
                                    (d == 0   ? offsetof(layout_t, tp)
                                     : d == 1 ? offsetof(layout_t, pp)
                                     : d == 2 ? offsetof(layout_t, cp)
                                     : d == 3 ? offsetof(layout_t, vpp)
                                     : d == 4 ? offsetof(layout_t, micro_batch)
                                              : offsetof(layout_t, zero))));
            return;
        }
    }
    if (s->recompute_mask)
        snprintf(out->constraint_note, sizeof out->constraint_note,
                 "the recompute modes named leave no layout that fits in %.0f GiB",
                 c->gpu.memory_gib);
}

/* ------------------------------------------------------------ the search */

/* The reference layout's rank among every candidate of its framework:
 * every candidate whose bound beats it is simulated to settle the rank. */
static int rank_reference(const sim_env_t *env, cand_t *v, long kept, bool *mark,
                          const layout_t *reference, plan_search_t *out, err_t *err)
{
    int ref_fw = 0; /* the first framework searched in the reference's precision */
    while (ref_fw + 1 < env->n_fws && env->fws[ref_fw].precision != reference->precision)
        ref_fw++;
    if (env->fws[ref_fw].precision != reference->precision)
        ref_fw = 0;
    layout_t ref = *reference;
    sim_ctx_t *ctx = sim_ctx_create();
    if (!ctx)
        return err_set(err, ERR_RUNTIME, "out of memory");
    sim_input_t in = {env->m, &ref, env->c, env->p, env->fws[ref_fw].opt};
    sim_result_t r;
    int rc = sim_run_step(ctx, &in, &r, err) == 0 ? ERR_OK : ERR_INPUT;
    sim_ctx_destroy(ctx);
    if (rc)
        return rc;
    double ref_tps = r.tokens_per_s;
    out->reference_step_s = r.step_time_s;
    out->reference_fits = r.fits;
    for (long i = 0; i < kept; i++)
        mark[i] = v[i].fw == ref_fw && v[i].tps == 0 && v[i].bound_tps > ref_tps;
    if (simulate_marked(env, v, kept, mark))
        rc = err_set(err, ERR_RUNTIME, "out of memory in the layout search");
    int rank = 1;
    long of = 0;
    for (long i = 0; i < kept; i++) {
        if (v[i].fw != ref_fw)
            continue;
        of++;
        if (v[i].tps > ref_tps * (1 + 1e-12))
            rank++;
    }
    out->rank_of_reference = r.fits ? rank : 0; /* a rank only among layouts that fit */
    out->reference_of = of;
    return rc;
}

/* What had to be simulated (independent of thread timing) and each
 * framework's best. */
static void tally(const sim_env_t *env, const cand_t *v, long kept, plan_search_t *out)
{
    double kth = kth_best(v, kept, -1, PLAN_TOP);
    for (long i = 0; i < kept; i++)
        if (v[i].bound_tps > kth)
            out->simulated++;
    out->pruned[PRUNE_BOUND] = kept - out->simulated;
    for (long i = 0; i < kept; i++) {
        plan_fw_best_t *b = &out->per_framework[v[i].slot];
        if (v[i].tps > 0 && (v[i].tps > b->tokens_per_s ||
                             (v[i].tps == b->tokens_per_s && !b->found))) {
            b->found = true;
            b->tokens_per_s = v[i].tps;
            b->layout = v[i].l;
            b->moe = env->fws[v[i].fw].moe;
        }
    }
}

/* The winner, simulated again for its full result, and the runners-up
 * (ties by enumeration order); v is compacted to the simulated ones. */
static int pick_winners(const sim_env_t *env, cand_t *v, long kept, plan_search_t *out,
                        err_t *err)
{
    long n_sim = 0;
    for (long i = 0; i < kept; i++)
        if (v[i].tps > 0)
            v[n_sim++] = v[i];
    if (n_sim == 0)
        return ERR_OK;
    qsort(v, (size_t)n_sim, sizeof *v, cmp_tps);
    out->found = true;
    out->layout = v[0].l;
    snprintf(out->framework, sizeof out->framework, "%s", env->fws[v[0].fw].fw.name);
    out->moe = env->fws[v[0].fw].moe;
    int rc = ERR_OK;
    sim_ctx_t *ctx = sim_ctx_create();
    sim_input_t in = {env->m, &out->layout, env->c, env->p, env->fws[v[0].fw].opt};
    if (!ctx || sim_run_step(ctx, &in, &out->result, err))
        rc = ERR_RUNTIME;
    sim_ctx_destroy(ctx);
    for (int k = 0; k < PLAN_TOP && k < n_sim; k++) {
        out->top_layout[k] = v[k].l;
        out->top_step_s[k] = v[k].l.global_batch * (double)v[k].l.seq_len / v[k].tps;
        snprintf(out->top_framework[k], sizeof out->top_framework[k], "%s",
                 env->fws[v[k].fw].fw.name);
        out->n_ranked = k + 1;
    }
    return rc;
}

/* The bound at or above which a layout of base entry j is among the
 * PLAN_VARIANT_TRIES of it bounded best, in cut[j] (-inf when it has no
 * more than those); v[0..n) bounded. -1 when out of memory. */
static int cmp_desc(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? 1 : x > y ? -1 : 0;
}

static int variant_cuts(const enum_ctx_t *e, const cand_t *v, long n, double *cut)
{
    double *b = n ? malloc((size_t)n * sizeof *b) : NULL;
    if (n && !b)
        return -1;
    for (int j = 0; j < e->n_fws; j++) {
        cut[j] = -INFINITY;
        long k = 0;
        for (long i = 0; e->fws[j].base == j && i < n; i++)
            if (v[i].fw == j)
                b[k++] = v[i].bound_tps;
        if (k > PLAN_VARIANT_TRIES) {
            qsort(b, (size_t)k, sizeof *b, cmp_desc);
            cut[j] = b[PLAN_VARIANT_TRIES - 1];
        }
    }
    free(b);
    return 0;
}

/* The kept layouts of v[from..to) priced again under the variants (add_variants)
 * of their entry's base, those of a base among its PLAN_VARIANT_TRIES bounded
 * best (cut, variant_cuts): graphs = false: the entries with the base's CUDA
 * graph scopes and another dispatcher, for layouts of the base itself;
 * graphs = true: the entries with the same dispatcher and other scopes, for
 * layouts whose GPU waits for the host (a graph hides only host issue time:
 * where the GPU never waits there is nothing for one to hide, and the layout
 * is priced once). Neither changes memory the model counts
 * (sim_memory_opts reads neither): what fits under the base fits under
 * them; each is checked against the framework. */
static void add_variant_copies(enum_ctx_t *e, long from, long to, bool graphs, const double *cut)
{
    for (long i = from; i < to && !e->cl->oom; i++) {
        const cand_t c = e->cl->v[i];
        const plan_fw_t *own = &e->fws[c.fw];
        if (graphs ? !c.host_waits || own->other_scopes : own->base != c.fw)
            continue;
        if (own->base == c.fw && c.bound_tps < cut[c.fw])
            continue;
        for (int j = 0; j < e->n_fws; j++) {
            const plan_fw_t *f = &e->fws[j];
            if (f->base == j || f->base != own->base || f->other_scopes != graphs ||
                (graphs && f->moe.dispatcher != own->moe.dispatcher))
                continue;
            layout_t l = c.l;
            err_t ignore;
            e->out->candidates++;
            e->out->per_framework[f->slot].candidates++;
            if (fw_check_layout(&f->fw, &l, &f->opt, &ignore)) {
                e->out->pruned[PRUNE_INVALID]++;
                continue;
            }
            push(e->cl, &l, j, f->slot);
        }
    }
}

/* Bounds of v[from..to), in parallel; whether each one's GPU waits for
 * its host. */
static void bound_range(const enum_ctx_t *e, cand_t *v, long from, long to)
{
#pragma omp parallel for schedule(dynamic, 16)
    for (long i = from; i < to; i++) {
        sim_input_t in = {e->m, &v[i].l, e->c, e->p, e->fws[v[i].fw].opt};
        step_costs_t sc;
        err_t ignore;
        bool ok = sim_costs(&in, &sc, &ignore) == 0;
        v[i].bound_tps = ok ? plan_tps_bound(&in, &sc) : 0;
        v[i].host_waits = ok && sc.fwd.host + sc.bwd.host + sc.bwd_keep.host > 0;
    }
}

/* Every candidate that fits, bounded: each base's layouts, then its
 * bounded best priced under its other dispatchers, then under other CUDA
 * graph scopes where the host holds the GPU up. */
static void candidates_of(enum_ctx_t *e)
{
    for (int i = 0; i < e->n_fws; i++)
        if (e->fws[i].base == i)
            enum_framework(e, i);
    long bases = e->cl->n;
    if (e->cl->oom)
        return;
    bound_range(e, e->cl->v, 0, bases);
    double cut[PLAN_MAX_VARIANTS];
    if (variant_cuts(e, e->cl->v, bases, cut)) {
        e->cl->oom = true;
        return;
    }
    add_variant_copies(e, 0, bases, false, cut);
    long firsts = e->cl->n;
    if (e->cl->oom)
        return;
    bound_range(e, e->cl->v, bases, firsts);
    add_variant_copies(e, 0, firsts, true, cut);
    if (!e->cl->oom)
        bound_range(e, e->cl->v, firsts, e->cl->n);
}

static int search_entries(const model_t *m, const cluster_t *c, const profile_t *p,
                          const plan_space_t *space, const layout_t *reference,
                          const plan_fw_t *fws, int n_fws, int n_slots, memory_opts_t *mo,
                          plan_search_t *out, err_t *err)
{
    int rc = ERR_OK;
    double t0 = clock_now_s();
    /* 1. every candidate the frameworks run that fits, each framework's
     * memory options */
    out->n_frameworks = n_slots;
    for (int i = 0; i < n_fws; i++) {
        sim_memory_opts(p, &fws[i].opt, &mo[i]);
        plan_fw_best_t *b = &out->per_framework[fws[i].slot];
        snprintf(b->name, sizeof b->name, "%s", fws[i].fw.name);
        b->precision = fws[i].precision;
    }
    cand_list_t cl = {0};
    out->smallest_memory_gib = INFINITY;
    enum_ctx_t ec = {m, c, p, space, fws, n_fws, mo, out, &cl};
    candidates_of(&ec); /* (2. their bounds) */
    if (cl.oom) {
        free(cl.v);
        return err_set(err, ERR_RUNTIME, "out of memory enumerating layouts");
    }
    long kept = cl.n;
    cand_t *v = cl.v;
    /* best first */
    if (kept)
        qsort(v, (size_t)kept, sizeof *v, cmp_bound);
    bool *mark = kept ? calloc((size_t)kept, sizeof *mark) : NULL;
    if (kept && !mark) {
        free(v);
        return err_set(err, ERR_RUNTIME, "out of memory in the layout search");
    }
    sim_env_t env = {m, c, p, fws, n_fws};
    /* 3. the best PLAN_TOP overall, then each framework's best, exactly */
    if (settle(&env, v, kept, -1, PLAN_TOP, mark) != 0)
        rc = err_set(err, ERR_RUNTIME, "out of memory in the layout search");
    for (int f = 0; !rc && n_slots > 1 && f < n_slots; f++)
        if (settle(&env, v, kept, f, 1, mark) != 0)
            rc = err_set(err, ERR_RUNTIME, "out of memory in the layout search");
    /* 4. the reference's rank, the tallies, the winners */
    if (!rc && reference)
        rc = rank_reference(&env, v, kept, mark, reference, out, err);
    tally(&env, v, kept, out);
    if (!rc)
        rc = pick_winners(&env, v, kept, out, err);
    free(mark);
    free(v);
    out->elapsed_s = clock_now_s() - t0;
    if (!rc && !out->found)
        explain_constraints(m, c, p, space, out);
    if (!rc && !out->found && out->candidates == 0 && !out->constraint_note[0])
        rc = err_setf(err, ERR_INPUT, NULL, "--global-batch",
                      "no layout on %d GPUs has a global batch in %d..%d sequences that "
                      "micro-batch x DP divides",
                      c->n_gpus, space->global_batch_min, space->global_batch_max);
    return rc;
}

int plan_search(const model_t *m, const cluster_t *c, const profile_t *p,
                const plan_space_t *space, const layout_t *reference, plan_search_t *out,
                err_t *err)
{
    memset(out, 0, sizeof *out);
    if (sim_model_supported(m, err))
        return ERR_INPUT;
    plan_fw_t *fws = calloc(PLAN_MAX_VARIANTS, sizeof *fws);
    memory_opts_t *mo = calloc(PLAN_MAX_VARIANTS, sizeof *mo);
    if (!fws || !mo) {
        free(fws);
        free(mo);
        return err_set(err, ERR_RUNTIME, "out of memory");
    }
    int n_fws = 0, n_slots = 0;
    int rc = plan_entries(space, &c->gpu, m, fws, &n_fws, &n_slots, err);
    if (!rc)
        rc = search_entries(m, c, p, space, reference, fws, n_fws, n_slots, mo, out, err);
    free(fws);
    free(mo);
    return rc;
}
