/* Each framework and hardware mechanism of the cost model, tested by what
 * it changes: turn it on and off (or pick the presets that differ in it)
 * and check the difference against the formula the mechanism states, with
 * the profile's own kernel and collective times. A test here fails if its
 * mechanism is removed. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "models/flops.h"
#include "sim/scenario.h"
#include "sim/step.h"
#include "tests/testing.h"

typedef struct {
    scenario_t s;
    step_costs_t c;
} priced_t;

/* Start a scenario for model on gpus x gpu under framework fw (NULL: the
 * default preset). The caller sets layout and options, then price(). */
static int begin(priced_t *p, const char *model, const char *gpu, int gpus, const char *fw)
{
    memset(p, 0, sizeof *p);
    scenario_spec_t spec = {0};
    spec.model = model;
    spec.cluster.gpu = gpu;
    spec.cluster.n_gpus = gpus;
    spec.framework = fw;
    err_t e;
    int rc = scenario_begin(&spec, &p->s, &e);
    if (rc)
        fprintf(stderr, "begin: %s\n", e.msg);
    return rc;
}

static int price(priced_t *p)
{
    err_t e;
    int rc = scenario_finish(&p->s, NULL, &e);
    if (!rc)
        rc = sim_costs(&p->s.input, &p->c, &e);
    if (rc)
        fprintf(stderr, "price: %s\n", e.msg);
    return rc;
}

/* On the timeline of one run, stage's gradient reductions: how many, how
 * many started before the stage's last backward ended, their seconds. */
static void stage_reductions(const sim_event_t *ev, int n, int stage, int *reductions,
                             int *early, double *seconds)
{
    double last_bwd = 0;
    for (int i = 0; i < n; i++)
        if (ev[i].stage == stage && ev[i].kind == TASK_BWD && ev[i].end_s > last_bwd)
            last_bwd = ev[i].end_s;
    *reductions = *early = 0;
    *seconds = 0;
    for (int i = 0; i < n; i++)
        if (ev[i].stage == stage && ev[i].kind == TASK_DP) {
            (*reductions)++;
            *early += ev[i].start_s < last_bwd - 1e-9;
            *seconds += ev[i].end_s - ev[i].start_s;
        }
}

/* One priced operation's forward or backward seconds (NaN, and a failed
 * assertion, when the layer has no such operation). */
static double op_time(const step_costs_t *c, const char *name, bool backward)
{
    for (int i = 0; i < c->n_ops; i++)
        if (strcmp(c->ops[i].name, name) == 0)
            return backward ? c->ops[i].bwd_s : c->ops[i].fwd_s;
    CU_FAIL("operation not priced");
    return NAN;
}

static double op_fwd(const step_costs_t *c, const char *name) { return op_time(c, name, false); }
static double op_bwd(const step_costs_t *c, const char *name) { return op_time(c, name, true); }


static void set_batch(layout_t *l, int tp, int mb, int gb, int seq)
{
    l->tp = tp;
    l->micro_batch = mb;
    l->global_batch = gb;
    l->seq_len = seq;
    l->sequence_parallel = tp > 1;
}

/* Llama 3 8B on 8 H100 SXM under framework fw: TP tp, one micro-batch of
 * seq tokens a step, in precision prec, priced (the caller frees). */
static void price_8b(priced_t *p, const char *fw, int tp, int seq, precision_t prec)
{
    CU_ASSERT_EQUAL_FATAL(begin(p, "llama3-8b", "h100-sxm", 8, fw), 0);
    set_batch(&p->s.layout, tp, 1, 8 / tp, seq);
    p->s.layout.precision = prec;
    CU_ASSERT_EQUAL_FATAL(price(p), 0);
}

/* ------------------------------------------------ TP communication overlap */

/* Llama 3 70B at TP4 on H100: NeMo 25.02 has a userbuffers setting for
 * hidden 8192 / TP4 on Hopper (proj and fc2 forward pipelined on 24 and 16
 * SMs with a margin); the same preset on a model it has no setting for runs
 * Transformer Engine's defaults; a preset that overlaps only its own models
 * (NeMo 24.07) leaves the collectives exposed elsewhere; Megatron-Bridge
 * runs NVFP4 without overlap. */
static void test_tp_overlap_by_gemm(void)
{
    priced_t off, nemo, ring;
    CU_ASSERT_EQUAL_FATAL(begin(&off, "llama3-70b", "h100-sxm", 64, "nemo-25.02"), 0);
    set_batch(&off.s.layout, 4, 1, 64, 8192);
    off.s.opt.tp_comm_overlap = false;
    CU_ASSERT_EQUAL_FATAL(price(&off), 0);
    CU_ASSERT_EQUAL_FATAL(begin(&nemo, "llama3-70b", "h100-sxm", 64, "nemo-25.02"), 0);
    set_batch(&nemo.s.layout, 4, 1, 64, 8192);
    CU_ASSERT_EQUAL_FATAL(price(&nemo), 0);
    CU_ASSERT_TRUE(nemo.s.opt.tp_comm_overlap);
    /* the setting found is the recipe's for this model */
    const tpo_role_t *r = tpo_select(&nemo.s.opt.tp_overlap, "hopper", 8192, 4);
    CU_ASSERT_EQUAL(r[TPO_PROJ_FPROP].method, TPO_PIPELINE);
    CU_ASSERT_EQUAL(r[TPO_PROJ_FPROP].sms, 24);
    CU_ASSERT_TRUE(r[TPO_PROJ_FPROP].sm_margin);
    CU_ASSERT_EQUAL(r[TPO_QKV_WGRAD].sms, 24);
    CU_ASSERT_PTR_EQUAL(tpo_select(&nemo.s.opt.tp_overlap, "hopper", 5120, 4),
                        nemo.s.opt.tp_overlap.def);
    /* overlap hides most of the exposed TP time; the forward keeps the
     * SMs its pipelined reduce-scatters take */
    CU_ASSERT_TRUE(nemo.c.fwd.tp < 0.7 * off.c.fwd.tp);
    CU_ASSERT_TRUE(nemo.c.bwd.tp < 0.5 * off.c.bwd.tp);
    CU_ASSERT_TRUE(nemo.c.fwd.tp > 0);

    /* the same collectives by copy-engine rings only: no SMs taken, so
     * cheaper than the recipe's pipelined reduce-scatters with a margin */
    CU_ASSERT_EQUAL_FATAL(begin(&ring, "llama3-70b", "h100-sxm", 64, "nemo-25.02"), 0);
    set_batch(&ring.s.layout, 4, 1, 64, 8192);
    ring.s.opt.tp_overlap.n_configs = 0;
    for (int i = 0; i < TPO_COUNT; i++)
        ring.s.opt.tp_overlap.def[i] = (tpo_role_t){TPO_RING, 1, false, false, 4};
    CU_ASSERT_EQUAL_FATAL(price(&ring), 0);
    CU_ASSERT_TRUE(ring.c.fwd.tp < nemo.c.fwd.tp);
    /* a pipelined GEMM with a margin of s SMs out of S runs S/(S - s) as
     * long: raising proj and fc2 forward from 16 to 32 SMs costs more */
    priced_t more;
    CU_ASSERT_EQUAL_FATAL(begin(&more, "llama3-70b", "h100-sxm", 64, "nemo-25.02"), 0);
    set_batch(&more.s.layout, 4, 1, 64, 8192);
    for (int k = 0; k < more.s.opt.tp_overlap.n_configs; k++) {
        more.s.opt.tp_overlap.configs[k].role[TPO_PROJ_FPROP] = (tpo_role_t){TPO_PIPELINE, 48, true, false, 4};
        more.s.opt.tp_overlap.configs[k].role[TPO_FC2_FPROP] = (tpo_role_t){TPO_PIPELINE, 48, true, false, 4};
    }
    CU_ASSERT_EQUAL_FATAL(price(&more), 0);
    CU_ASSERT_TRUE(more.c.fwd.tp > nemo.c.fwd.tp);
    CU_ASSERT_TRUE(fabs(more.c.bwd.tp - nemo.c.bwd.tp) <= 1e-12 * nemo.c.bwd.tp);
    scenario_free(&more.s);
    scenario_free(&ring.s);

    /* NeMo 24.07 overlaps only the models its yamls list (Llama 70B):
     * GPT-3 175B's collectives stay on the critical path */
    priced_t gpt_off, gpt_2407;
    CU_ASSERT_EQUAL_FATAL(begin(&gpt_off, "gpt3-175b", "h100-sxm", 128, "nemo-24.07"), 0);
    set_batch(&gpt_off.s.layout, 4, 1, 64, 2048);
    gpt_off.s.layout.pp = 8;
    gpt_off.s.opt.tp_comm_overlap = false;
    CU_ASSERT_EQUAL_FATAL(price(&gpt_off), 0);
    CU_ASSERT_EQUAL_FATAL(begin(&gpt_2407, "gpt3-175b", "h100-sxm", 128, "nemo-24.07"), 0);
    set_batch(&gpt_2407.s.layout, 4, 1, 64, 2048);
    gpt_2407.s.layout.pp = 8;
    CU_ASSERT_EQUAL_FATAL(price(&gpt_2407), 0);
    CHECK_REL(gpt_2407.c.fwd.tp, gpt_off.c.fwd.tp, 1e-12);
    scenario_free(&gpt_off.s);
    scenario_free(&gpt_2407.s);

    /* Megatron-Bridge 26.04 runs NVFP4 without TP overlap */
    priced_t fp4, fp4_off;
    CU_ASSERT_EQUAL_FATAL(begin(&fp4, "llama3-70b", "gb300", 64, "megatron-bridge-26.04"), 0);
    set_batch(&fp4.s.layout, 4, 1, 64, 8192);
    fp4.s.layout.precision = PRECISION_NVFP4;
    CU_ASSERT_EQUAL_FATAL(price(&fp4), 0);
    CU_ASSERT_EQUAL_FATAL(begin(&fp4_off, "llama3-70b", "gb300", 64, "megatron-bridge-26.04"), 0);
    set_batch(&fp4_off.s.layout, 4, 1, 64, 8192);
    fp4_off.s.layout.precision = PRECISION_NVFP4;
    fp4_off.s.opt.tp_comm_overlap = false;
    CU_ASSERT_EQUAL_FATAL(price(&fp4_off), 0);
    CHECK_REL(fp4.c.fwd.tp, fp4_off.c.fwd.tp, 1e-12);
    scenario_free(&fp4.s);
    scenario_free(&fp4_off.s);
    scenario_free(&off.s);
    scenario_free(&nemo.s);
}

/* An aggregated ring all-gather (TE split_overlap_ag with aggregate, NeMo
 * 25.02's setting for hidden 16384): its first GEMM waits for one chunk from
 * the paired neighbour, then TP/2 GEMMs of two chunks hide the rest. At TP4
 * the forward's two gathers each expose up to a third of the gather more
 * than the plain ring (less what fewer, larger GEMM chunks save); at TP2 the
 * one GEMM waits for the whole gather. The role text parses "aggregate"
 * after the SMs, for rings only. */
static void test_tp_overlap_aggregate(void)
{
    for (int tp = 2; tp <= 4; tp += 2) {
        priced_t p[2]; /* [plain ring, aggregated] */
        for (int k = 0; k < 2; k++) {
            CU_ASSERT_EQUAL_FATAL(begin(&p[k], "llama3-70b", "h100-sxm", 64, "nemo-25.02"), 0);
            set_batch(&p[k].s.layout, tp, 1, 64 / tp, 8192);
            p[k].s.opt.tp_overlap.n_configs = 0;
            for (int i = 0; i < TPO_COUNT; i++)
                p[k].s.opt.tp_overlap.def[i] = (tpo_role_t){TPO_RING, 1, false, false, 4};
            const tpo_gemm_t ag[] = {TPO_QKV_FPROP, TPO_FC1_FPROP, TPO_PROJ_DGRAD, TPO_FC2_DGRAD};
            for (size_t i = 0; i < sizeof ag / sizeof ag[0]; i++)
                p[k].s.opt.tp_overlap.def[ag[i]].aggregate = k == 1;
            CU_ASSERT_EQUAL_FATAL(price(&p[k]), 0);
        }
        double h = p[0].s.model.hidden, tokens = 8192;
        double gather = prof_coll_time(&p[0].s.profile, COLL_ALL_GATHER, &p[0].c.tp_span,
                                       tokens * h * 2);
        double more = p[1].c.fwd.tp - p[0].c.fwd.tp;
        CU_ASSERT_TRUE(more > 0);
        CU_ASSERT_TRUE(more <= 2 * gather / (tp - 1) * (1 + 1e-9));
        if (tp == 2) /* both gathers wait whole: nothing overlaps them */
            CU_ASSERT_TRUE(p[1].c.fwd.tp >= 2 * gather * (1 - 1e-9));
        for (int k = 0; k < 2; k++)
            scenario_free(&p[k].s);
    }

    /* NeMo 25.02's setting for Llama 3.1 405B on H100 (hidden 16384, TP8) */
    priced_t n;
    CU_ASSERT_EQUAL_FATAL(begin(&n, "llama3-8b", "h100-sxm", 8, "nemo-25.02"), 0);
    const tpo_role_t *r = tpo_select(&n.s.opt.tp_overlap, "hopper", 16384, 8);
    CU_ASSERT_TRUE(r[TPO_QKV_FPROP].aggregate && r[TPO_FC2_DGRAD].aggregate);
    CU_ASSERT_FALSE(r[TPO_PROJ_FPROP].aggregate);
    CU_ASSERT_FALSE(tpo_select(&n.s.opt.tp_overlap, "hopper", 8192, 4)[TPO_QKV_FPROP].aggregate);
    scenario_free(&n.s);
    static const char *const bad[] = {"{\"default\": {\"qkv_wgrad\": \"bulk 4 aggregate\"}}",
                                      "{\"default\": {\"qkv_fprop\": \"ring 1 aggregate x\"}}",
                                      "{\"default\": {\"qkv_fprop\": \"ring 1 margin margin\"}}"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        cJSON *o = cJSON_Parse(bad[i]);
        CU_ASSERT_PTR_NOT_NULL_FATAL(o);
        tp_overlap_t t;
        err_t e;
        json_ctx_t ctx = json_ctx_root("frameworks.json");
        CU_ASSERT_EQUAL(tpo_from_json(o, &ctx, &t, &e), ERR_INPUT);
        cJSON_Delete(o);
    }
    cJSON *ok = cJSON_Parse("{\"default\": {\"qkv_fprop\": \"ring 1 margin aggregate\"}}");
    CU_ASSERT_PTR_NOT_NULL_FATAL(ok);
    tp_overlap_t t;
    err_t e;
    json_ctx_t ctx = json_ctx_root("frameworks.json");
    CU_ASSERT_EQUAL(tpo_from_json(ok, &ctx, &t, &e), ERR_OK);
    CU_ASSERT_TRUE(t.def[TPO_QKV_FPROP].aggregate && t.def[TPO_QKV_FPROP].sm_margin);
    cJSON_Delete(ok);
}

/* ------------------------------------------------------- cross entropy */

/* The loss's memory traffic per logit element is the framework's: 38 bytes
 * forward for Megatron's unfused vocabulary-parallel cross entropy, 6 for
 * Transformer Engine's fused kernel (Megatron-Bridge). Everything else of
 * the head being equal, the forward differs by exactly that traffic. */
static void test_cross_entropy_traffic(void)
{
    priced_t mc, br;
    CU_ASSERT_EQUAL_FATAL(begin(&mc, "llama3-8b", "h100-sxm", 8, "megatron-core"), 0);
    set_batch(&mc.s.layout, 1, 1, 8, 8192);
    mc.s.layout.distributed_optimizer = true;
    CU_ASSERT_EQUAL_FATAL(price(&mc), 0);
    CU_ASSERT_EQUAL_FATAL(begin(&br, "llama3-8b", "h100-sxm", 8, "megatron-bridge-25.11"), 0);
    set_batch(&br.s.layout, 1, 1, 8, 8192);
    br.s.layout.precision = PRECISION_BF16;
    CU_ASSERT_EQUAL_FATAL(price(&br), 0);
    CHECK_REL(mc.s.opt.ce_fwd_bytes, 38, 0);
    CHECK_REL(br.s.opt.ce_fwd_bytes, 6, 0);
    double logits = 8192.0 * mc.s.model.vocab;
    const profile_t *p = &mc.s.profile;
    CHECK_REL(mc.c.head_fwd.compute - br.c.head_fwd.compute,
              prof_mem_time(p, 38 * logits) - prof_mem_time(p, 6 * logits), 1e-9);
    CHECK_REL(mc.c.head_bwd.compute - br.c.head_bwd.compute,
              prof_mem_time(p, 14 * logits) - prof_mem_time(p, 4 * logits), 1e-9);
    scenario_free(&mc.s);
    scenario_free(&br.s);
}

/* Layout copies around materialized attention (scaleplan's trainer:
 * Q/K/V split out of the fused rows and the output put back, forward; the
 * output, Q/K/V and their merged gradients, backward): GPT-2 124M on an
 * H200, micro-batch 8 x 1024, one layer's attention costs exactly those
 * passes more than without them (each pass reads and writes bf16). */
static void test_attention_copies(void)
{
    priced_t with, without;
    CU_ASSERT_EQUAL_FATAL(begin(&with, "gpt2-124m", "h200", 1, "scaleplan-train"), 0);
    set_batch(&with.s.layout, 1, 8, 8, 1024);
    CU_ASSERT_EQUAL_FATAL(begin(&without, "gpt2-124m", "h200", 1, "scaleplan-train"), 0);
    set_batch(&without.s.layout, 1, 8, 8, 1024);
    without.s.opt.attn_copy_fwd_qkv = without.s.opt.attn_copy_fwd_out = 0;
    without.s.opt.attn_copy_bwd_qkv = without.s.opt.attn_copy_bwd_out = 0;
    CU_ASSERT_FALSE(with.s.layout.flash_attention);
    CHECK_REL(with.s.opt.attn_copy_bwd_qkv, 2, 0);
    CU_ASSERT_EQUAL_FATAL(price(&with), 0);
    CU_ASSERT_EQUAL_FATAL(price(&without), 0);
    const profile_t *p = &with.s.profile;
    double qkv = 8.0 * 1024 * 3 * 768, out = 8.0 * 1024 * 768; /* elements, bf16 */
    CHECK_REL(with.c.fwd.compute - without.c.fwd.compute,
              prof_mem_time(p, 4 * qkv) + prof_mem_time(p, 4 * out), 1e-9);
    CHECK_REL(with.c.bwd.compute - without.c.bwd.compute,
              prof_mem_time(p, 8 * qkv) + prof_mem_time(p, 4 * out), 1e-9);
    scenario_free(&with.s);
    scenario_free(&without.s);
}

/* --------------------------------------------------------------- ZeRO-3 */

/* One layer's ZeRO-3 gathers and reductions by how the framework runs
 * them: prefetched gathers show only what outlasts the compute; DeepSpeed
 * 2021 waits for each; a backward prefetched after the gradients (FSDP1
 * BACKWARD_POST) waits for its gather; an all-reduce moves twice a
 * reduce-scatter's bus bytes; an implementation throughput limit caps
 * them; a pipeline that keeps parameters gathers once per step. */
static void test_zero3_modes(void)
{
    priced_t z;
    CU_ASSERT_EQUAL_FATAL(begin(&z, "llama3-8b", "h100-sxm", 64, "fsdp"), 0);
    set_batch(&z.s.layout, 1, 1, 64, 4096);
    CU_ASSERT_EQUAL_FATAL(price(&z), 0);
    double g = z.c.zero3_gather_layer_s, r = z.c.zero3_reduce_layer_s;
    double fc = z.c.fwd.compute, bc = z.c.bwd.compute + z.c.bwd.recompute;
    CU_ASSERT_TRUE(g > 0 && r > 0);
    CHECK_REL(z.c.fwd.dp, fmax(0, g - fc), 1e-12);
    CHECK_REL(z.c.bwd.dp, fmax(0, g + r - bc), 1e-12);
    sim_input_t in = z.s.input;
    step_costs_t c;
    err_t e;

    in.opt.zero3.gather_blocks_compute = true;
    CU_ASSERT_EQUAL_FATAL(sim_costs(&in, &c, &e), 0);
    CHECK_REL(c.fwd.dp, g, 1e-12);
    CHECK_REL(c.bwd.dp, g + fmax(0, r - bc), 1e-12);

    in = z.s.input;
    in.opt.zero3.prefetch_backward = false;
    CU_ASSERT_EQUAL_FATAL(sim_costs(&in, &c, &e), 0);
    CHECK_REL(c.bwd.dp, g + fmax(0, r - bc), 1e-12);

    in = z.s.input;
    in.opt.zero3.grad_all_reduce = true;
    CU_ASSERT_EQUAL_FATAL(sim_costs(&in, &c, &e), 0);
    CU_ASSERT_TRUE(c.zero3_reduce_layer_s > 1.6 * r);

    in = z.s.input;
    in.opt.zero3.path_gbs = 24; /* DeepSpeed 0.3.x's measured ceiling */
    CU_ASSERT_EQUAL_FATAL(sim_costs(&in, &c, &e), 0);
    double bytes = c.layer_params * 2;
    CHECK_REL(c.zero3_gather_layer_s,
              fmax(g, prof_bus_factor(COLL_ALL_GATHER, 64) * bytes / 24e9), 1e-12);
    scenario_free(&z.s);

    /* with pipeline stages and parameters kept for the step (torchtitan
     * runs FSDP with PP), each micro-batch carries 1/m of the gather */
    priced_t pp;
    CU_ASSERT_EQUAL_FATAL(begin(&pp, "llama3-8b", "h100-sxm", 64, "torchtitan-2024-12"), 0);
    set_batch(&pp.s.layout, 1, 1, 64, 4096);
    pp.s.layout.pp = 2;
    CU_ASSERT_EQUAL_FATAL(price(&pp), 0);
    CU_ASSERT_TRUE(pp.s.layout.grad_accum > 1);
    in = pp.s.input;
    in.opt.zero3.reshard_with_pp = true;
    CU_ASSERT_EQUAL_FATAL(sim_costs(&in, &c, &e), 0);
    double per_mb = c.zero3_gather_layer_s;
    in.opt.zero3.reshard_with_pp = false;
    CU_ASSERT_EQUAL_FATAL(sim_costs(&in, &c, &e), 0);
    CHECK_REL(c.zero3_gather_layer_s, per_mb / pp.s.layout.grad_accum, 1e-12);
    /* and no layer reduces during the passes: the stage's reduction comes
     * after its last backward (test_fsdp_pipeline_reduce) */
    CU_ASSERT_EQUAL(c.zero3_reduce_layer_s, 0);
    scenario_free(&pp.s);
}

/* FSDP2 under torch.distributed.pipelining (torchtitan with PP, ZeRO-2 or
 * ZeRO-3 kept gathered): gradient sync is off for every micro-batch's
 * backward, and the stage reduce-scatters its gradients once, after its
 * last backward (PyTorch stage.py backward_maybe_with_nosync runs each
 * parameter group's post-backward then). Llama 3 8B on 64 H100s, PP 2, 16
 * micro-batches: every reduction of each stage starts after the stage's
 * last backward and the stage's whole gradient is reduced once, so the
 * step exposes it; DeepSpeed's ZeRO-2 reduces after every micro-batch. */
static void test_fsdp_pipeline_reduce(void)
{
    for (int zero = 2; zero <= 3; zero++) {
        priced_t p;
        CU_ASSERT_EQUAL_FATAL(begin(&p, "llama3-8b", "h100-sxm", 64, "torchtitan-2025-12"), 0);
        set_batch(&p.s.layout, 1, 1, 512, 4096);
        p.s.layout.pp = 2;
        p.s.layout.zero = zero;
        CU_ASSERT_FALSE(p.s.opt.zero3.reshard_with_pp);
        CU_ASSERT_EQUAL_FATAL(price(&p), 0);
        CU_ASSERT_EQUAL(p.s.layout.grad_accum, 16);
        sim_ctx_t *ctx = sim_ctx_create();
        sim_result_t r;
        err_t e;
        CU_ASSERT_EQUAL_FATAL(sim_run_step(ctx, &p.s.input, &r, &e), 0);
        sim_event_t *ev;
        int n;
        CU_ASSERT_EQUAL_FATAL(sim_timeline(ctx, &ev, &n, &e), 0);
        for (int st = 0; st < 2; st++) {
            double reduced;
            int reductions, early;
            stage_reductions(ev, n, st, &reductions, &early, &reduced);
            CU_ASSERT_TRUE(reductions > 0);
            CU_ASSERT_EQUAL(early, 0);
            /* one reduction of the stage's gradients, not one per micro-batch */
            double stage = sim_grad_reduce_time(&p.s.input, &p.c, model_gpu_params(&p.s.model, &p.s.layout, st));
            CU_ASSERT_TRUE(reduced > 0.5 * stage && reduced < 2 * stage);
        }
        CU_ASSERT_TRUE(r.breakdown_s[BD_DP_COMM] > 0);
        free(ev);
        sim_ctx_destroy(ctx);
        scenario_free(&p.s);
    }
}

/* ------------------------------------------------------------ attention */

/* Fused attention by kernel and sequence length, against the FlashAttention-3
 * paper's H100 figures (Shah et al. 2024, Figures 5-6, bf16, head dim 128,
 * 16k tokens per batch): cuDNN causal forward about 539 TFLOP/s at 16k keys,
 * FlashAttention-3 about 616, FlashAttention-2 about 335; efficiency rises
 * with the keys a query sees and falls with a smaller head dimension. */
static void test_attention_by_sequence(void)
{
    profile_t p;
    err_t e;
    CU_ASSERT_EQUAL_FATAL(prof_load_default("h100-sxm", &p, &e), 0);
    const double peak = 989.4;
    prof_attn_call_t cd = {"cudnn", true, 16384, 128}, f3 = {"flash3", true, 16384, 128},
                     f2 = {"flash2", true, 16384, 128};
    CHECK_REL(prof_attn_eff(&p, &cd, false) * peak, 539, 0.05);
    CHECK_REL(prof_attn_eff(&p, &f3, false) * peak, 616, 0.05);
    CHECK_REL(prof_attn_eff(&p, &f2, false) * peak, 335, 0.05);
    double last = 0;
    for (double s = 512; s <= 1 << 20; s *= 2) {
        prof_attn_call_t c = {"cudnn", true, s, 128};
        double eff = prof_attn_eff(&p, &c, false);
        CU_ASSERT_TRUE(eff > last);
        last = eff;
        CU_ASSERT_TRUE(eff < 1);
    }
    /* llm-foundry's Triton kernel (FlashAttention in pre-MLIR Triton, no
     * Hopper or Blackwell instructions) runs 1.5x slower than
     * FlashAttention-2 on every GPU, as the FlashAttention-2 paper
     * measured on A100 */
    const char *gpus[] = {"a100-80g", "h100-sxm", "h200", "b200"};
    for (size_t i = 0; i < sizeof gpus / sizeof gpus[0]; i++) {
        profile_t g;
        CU_ASSERT_EQUAL_FATAL(prof_load_default(gpus[i], &g, &e), 0);
        prof_attn_call_t tr = {"triton", true, 2048, 128}, fa = {"flash2", true, 2048, 128};
        CHECK_REL(prof_attn_eff(&g, &fa, false) / prof_attn_eff(&g, &tr, false), 1.5, 0.01);
        tr.causal = fa.causal = false;
        CHECK_REL(prof_attn_eff(&g, &fa, true) / prof_attn_eff(&g, &tr, true), 1.5, 0.01);
        prof_free(&g);
    }
    prof_attn_call_t d64 = {"flash3", true, 16384, 64};
    CU_ASSERT_TRUE(prof_attn_eff(&p, &d64, false) < prof_attn_eff(&p, &f3, false));
    /* the sequence length reaches the step: per token, attention at 32k
     * costs more than twice what it costs at 8k (the score FLOPs grow with
     * s, the efficiency saturates) */
    priced_t a, b;
    CU_ASSERT_EQUAL_FATAL(begin(&a, "llama3-8b", "h100-sxm", 8, NULL), 0);
    set_batch(&a.s.layout, 1, 4, 32, 8192);
    CU_ASSERT_EQUAL_FATAL(price(&a), 0);
    CU_ASSERT_EQUAL_FATAL(begin(&b, "llama3-8b", "h100-sxm", 8, NULL), 0);
    set_batch(&b.s.layout, 1, 1, 8, 32768);
    CU_ASSERT_EQUAL_FATAL(price(&b), 0);
    CU_ASSERT_TRUE(op_fwd(&b.c, "attention") > 3.5 * op_fwd(&a.c, "attention"));
    CU_ASSERT_TRUE(op_fwd(&b.c, "attention") < 4.0 * op_fwd(&a.c, "attention"));
    scenario_free(&a.s);
    scenario_free(&b.s);
    prof_free(&p);
}

/* ------------------------------------------------------------ precision */

/* A recipe sets the GEMM dtype and its quantization traffic: fp8 GEMMs at
 * about twice the bf16 rate on H100; current scaling reads each tensor once
 * more than delayed scaling; a GPU without fp4 refuses NVFP4, naming what
 * it runs. */
static void test_precision_recipes(void)
{
    profile_t p;
    err_t e;
    CU_ASSERT_EQUAL_FATAL(prof_load_default("h100-sxm", &p, &e), 0);
    double bf = prof_gemm_time(&p, DTYPE_BF16, 8192, 8192, 8192, 1);
    double f8 = prof_gemm_time(&p, DTYPE_FP8, 8192, 8192, 8192, 1);
    CHECK_REL(bf / f8, 2.0, 0.05);
    prof_free(&p);

    priced_t dl, cs, bf16;
    const char *fw = "megatron-core";
    CU_ASSERT_EQUAL_FATAL(begin(&dl, "llama3-8b", "h100-sxm", 8, fw), 0);
    set_batch(&dl.s.layout, 1, 1, 8, 4096);
    dl.s.layout.precision = PRECISION_FP8;
    CU_ASSERT_EQUAL_FATAL(price(&dl), 0);
    CU_ASSERT_EQUAL_FATAL(begin(&cs, "llama3-8b", "h100-sxm", 8, fw), 0);
    set_batch(&cs.s.layout, 1, 1, 8, 4096);
    cs.s.layout.precision = PRECISION_FP8_CS;
    CU_ASSERT_EQUAL_FATAL(price(&cs), 0);
    CU_ASSERT_EQUAL_FATAL(begin(&bf16, "llama3-8b", "h100-sxm", 8, fw), 0);
    set_batch(&bf16.s.layout, 1, 1, 8, 4096);
    CU_ASSERT_EQUAL_FATAL(price(&bf16), 0);
    /* the qkv GEMM's input is cast once more (read 2 bytes per element) */
    double x = 4096.0 * dl.s.model.hidden;
    double extra = (cs.s.opt.prec.cast_input - dl.s.opt.prec.cast_input) * x;
    CU_ASSERT_TRUE(extra > 0);
    CU_ASSERT_TRUE(op_fwd(&cs.c, "qkv") > op_fwd(&dl.c, "qkv"));
    CU_ASSERT_TRUE(op_fwd(&dl.c, "mlp_in") < 0.7 * op_fwd(&bf16.c, "mlp_in"));
    scenario_free(&dl.s);
    scenario_free(&cs.s);
    scenario_free(&bf16.s);

    /* torchao rowwise: both axes cast (10 bytes an element against the
     * tensor-wise 6), and the gradient GEMMs' outputs rescaled after the
     * GEMM (4 bytes an element of each output) */
    priced_t tw, rw;
    price_8b(&tw, "torchtitan-2025-06", 1, 4096, PRECISION_FP8_CS);
    price_8b(&rw, "torchtitan-2025-06", 1, 4096, PRECISION_FP8_ROWWISE);
    CU_ASSERT_EQUAL(rw.s.opt.prec.cast_input, 10);
    CU_ASSERT_EQUAL(rw.s.opt.prec.rescale_grad_out, 4);
    CU_ASSERT_EQUAL(tw.s.opt.prec.rescale_grad_out, 0);
    const profile_t *pp = &rw.s.profile;
    double h = rw.s.model.hidden, f = rw.s.model.ffn;
    /* mlp_out: Y[T x h] = X[T x f] W[f x h]: the forward casts X, the
     * backward casts dY and rescales dX[T x f] and dW[f x h] */
    double d_fwd = op_fwd(&rw.c, "mlp_out") - op_fwd(&tw.c, "mlp_out");
    CHECK_REL(d_fwd, prof_mem_time(pp, 10 * 4096 * f + 10 * f * h) -
                         prof_mem_time(pp, 6 * 4096 * f + 6 * f * h), 1e-9);
    double d_bwd = op_bwd(&rw.c, "mlp_out") - op_bwd(&tw.c, "mlp_out");
    CHECK_REL(d_bwd, prof_mem_time(pp, 10 * 4096 * h + 4 * 4096 * f) +
                         prof_mem_time(pp, 4 * f * h) - prof_mem_time(pp, 6 * 4096 * h), 1e-9);
    scenario_free(&tw.s);
    scenario_free(&rw.s);

    priced_t fp4;
    CU_ASSERT_EQUAL_FATAL(begin(&fp4, "llama3-8b", "h100-sxm", 8, NULL), 0);
    fp4.s.layout.precision = PRECISION_NVFP4;
    int rc = scenario_finish(&fp4.s, NULL, &e);
    CHECK_ERR(rc, &e, ERR_INPUT, "h100", "fp8");
    scenario_free(&fp4.s);
}

/* The output layer stays in bf16 under every fp8 recipe (Megatron's own
 * ColumnParallelLinear outside Transformer Engine; torchtitan's filter of
 * "output"): an fp8 run's head costs what a bf16 run's does, while its
 * layers' GEMMs run at the fp8 rate. */
static void test_head_in_bf16(void)
{
    priced_t f8, bf;
    CU_ASSERT_EQUAL_FATAL(begin(&f8, "llama3-8b", "h100-sxm", 8, "megatron-core"), 0);
    set_batch(&f8.s.layout, 1, 1, 8, 4096);
    f8.s.layout.precision = PRECISION_FP8;
    CU_ASSERT_EQUAL_FATAL(price(&f8), 0);
    CU_ASSERT_EQUAL_FATAL(begin(&bf, "llama3-8b", "h100-sxm", 8, "megatron-core"), 0);
    set_batch(&bf.s.layout, 1, 1, 8, 4096);
    CU_ASSERT_EQUAL_FATAL(price(&bf), 0);
    CHECK_REL(f8.c.head_fwd.compute, bf.c.head_fwd.compute, 1e-12);
    CHECK_REL(f8.c.head_bwd.compute, bf.c.head_bwd.compute, 1e-12);
    /* the logits GEMM is most of the head: at the fp8 rate it would be far less */
    const profile_t *p = &bf.s.profile;
    double logits = prof_gemm_time(p, DTYPE_BF16, 4096, bf.s.model.vocab, bf.s.model.hidden, 1);
    CU_ASSERT_TRUE(bf.c.head_fwd.compute > logits);
    CU_ASSERT_TRUE(prof_gemm_time(p, DTYPE_FP8, 4096, bf.s.model.vocab, bf.s.model.hidden, 1) <
                   0.7 * logits);
    CU_ASSERT_TRUE(op_fwd(&f8.c, "mlp_in") < 0.7 * op_fwd(&bf.c, "mlp_in"));
    scenario_free(&f8.s);
    scenario_free(&bf.s);
}

/* Sequence parallelism's all-gathers move fp8 in a per-tensor fp8 run of
 * Transformer Engine (and torchao's tensorwise float8 TP): Llama 3 70B at
 * TP8 without TP overlap, the forward's exposed TP time is one all-gather
 * of 1 byte an element and one reduce-scatter of 2 per half-layer; with
 * the preset's fp8_tp_gather off, both are of 2 bytes, and the casts run
 * on the gathered tensors. */
static void test_fp8_tp_gather(void)
{
    priced_t on, off;
    CU_ASSERT_EQUAL_FATAL(begin(&on, "llama3-70b", "h100-sxm", 8, "megatron-core"), 0);
    set_batch(&on.s.layout, 8, 1, 8, 4096);
    on.s.layout.precision = PRECISION_FP8_CS;
    on.s.opt.tp_comm_overlap = false;
    CU_ASSERT_TRUE(on.s.opt.fp8_tp_gather);
    CU_ASSERT_EQUAL_FATAL(price(&on), 0);
    CU_ASSERT_EQUAL_FATAL(begin(&off, "llama3-70b", "h100-sxm", 8, "megatron-core"), 0);
    set_batch(&off.s.layout, 8, 1, 8, 4096);
    off.s.layout.precision = PRECISION_FP8_CS;
    off.s.opt.tp_comm_overlap = false;
    off.s.opt.fp8_tp_gather = false;
    CU_ASSERT_EQUAL_FATAL(price(&off), 0);
    const profile_t *p = &on.s.profile;
    double el = 4096.0 * on.s.model.hidden;
    double ag1 = prof_coll_time(p, COLL_ALL_GATHER, &on.c.tp_span, el);
    double ag2 = prof_coll_time(p, COLL_ALL_GATHER, &on.c.tp_span, 2 * el);
    double rs2 = prof_coll_time(p, COLL_REDUCE_SCATTER, &on.c.tp_span, 2 * el);
    CHECK_REL(on.c.fwd.tp, 2 * (ag1 + rs2), 1e-9);
    CHECK_REL(off.c.fwd.tp, 2 * (ag2 + rs2), 1e-9);
    CU_ASSERT_TRUE(ag1 < ag2);
    /* and the quantization runs on the sequence shard: the Q/K/V input's
     * cast (6 bytes an element under current scaling) over el / 8 without
     * its transposed write, the transposed copy (2) made from the gathered
     * tensor; the same for the attention output's incoming gradient */
    double c = on.s.opt.prec.cast_input;
    CHECK_REL(c, 6, 0);
    double sharded = prof_mem_time(p, (c - 1) * el / 8 + 2 * el), whole = prof_mem_time(p, c * el);
    CHECK_REL(op_fwd(&off.c, "qkv") - op_fwd(&on.c, "qkv"), whole - sharded, 1e-9);
    double g = on.s.opt.prec.cast_grad;
    CHECK_REL(op_bwd(&off.c, "attn_out") - op_bwd(&on.c, "attn_out"),
              prof_mem_time(p, g * el) - prof_mem_time(p, (g - 1) * el / 8 + 2 * el), 1e-9);
    CU_ASSERT_TRUE(whole > sharded);
    scenario_free(&on.s);
    scenario_free(&off.s);
}

/* Transformer Engine's LayerNormLinear quantizes a delayed-scaling fp8
 * input in its normalization kernel (TE 2.1 layernorm_linear.py
 * with_quantized_norm): after the norms (Q/K/V, the MLP's first GEMM) only
 * the weight gradient's transposed copy is left, 2 bytes an element where a
 * separate cast moves 4; the GEMMs after no norm (the attention output's,
 * the MLP's second) keep their cast; current scaling, which needs the
 * tensor's amax first, is not fused. Llama 3 8B at TP 1, 8,192 tokens. */
static void test_fp8_norm_cast(void)
{
    priced_t fused, split, cs;
    price_8b(&fused, "megatron-core", 1, 8192, PRECISION_FP8);
    CU_ASSERT_TRUE(fused.s.opt.fp8_norm_cast);
    CU_ASSERT_EQUAL_FATAL(begin(&split, "llama3-8b", "h100-sxm", 8, "megatron-core"), 0);
    set_batch(&split.s.layout, 1, 1, 8, 8192);
    split.s.layout.precision = PRECISION_FP8;
    split.s.opt.fp8_norm_cast = false;
    CU_ASSERT_EQUAL_FATAL(price(&split), 0);
    const profile_t *p = &fused.s.profile;
    double h = fused.s.model.hidden, el = 8192.0 * h;
    CHECK_REL(op_fwd(&split.c, "qkv") - op_fwd(&fused.c, "qkv"),
              prof_mem_time(p, 4 * el) - prof_mem_time(p, 2 * el), 1e-9);
    CHECK_REL(op_fwd(&split.c, "mlp_in") - op_fwd(&fused.c, "mlp_in"),
              prof_mem_time(p, 4 * el) - prof_mem_time(p, 2 * el), 1e-9);
    CHECK_REL(op_fwd(&split.c, "attn_out"), op_fwd(&fused.c, "attn_out"), 1e-12);
    price_8b(&cs, "megatron-core", 1, 8192, PRECISION_FP8_CS);
    CU_ASSERT_TRUE(op_fwd(&cs.c, "qkv") > op_fwd(&split.c, "qkv"));
    scenario_free(&fused.s);
    scenario_free(&split.s);
    scenario_free(&cs.s);
}

/* PyTorch's symmetric-memory async TP (torchtitan) moves a reduce-scatter's
 * partial sums whole and adds the t partials in one kernel after the last
 * chunk: per layer half, the forward's scatter and the input gradient's
 * each cost a memory pass reading the whole output and writing the shard,
 * beyond what the overlapped collective leaves exposed. Llama 3 8B, TP 8,
 * one micro-batch of 8,192 tokens. Under row-scaled fp8 the gathers are
 * not fused at all. */
/* Llama 3 8B at TP 8, one micro-batch of 8,192 tokens, under torchtitan's
 * async TP in precision prec with the two PyTorch mechanisms as given: the
 * layer's costs, and on its profile one reduce pass and one bf16 gather of
 * the micro-batch's activations. */
static step_costs_t async_tp_8b(precision_t prec, bool reduce_pass, bool unfused, double *pass,
                                double *ag)
{
    priced_t r;
    CU_ASSERT_EQUAL_FATAL(begin(&r, "llama3-8b", "h100-sxm", 8, "torchtitan-2025-06"), 0);
    set_batch(&r.s.layout, 8, 1, 1, 8192);
    r.s.layout.precision = prec;
    r.s.opt.tp_comm_overlap = true;
    CU_ASSERT_TRUE(r.s.opt.tp_overlap.reduce_pass && r.s.opt.tp_overlap.rowwise_gather_unfused);
    r.s.opt.tp_overlap.reduce_pass = reduce_pass;
    r.s.opt.tp_overlap.rowwise_gather_unfused = unfused;
    CU_ASSERT_EQUAL_FATAL(price(&r), 0);
    double act = 8192.0 * r.s.model.hidden * 2;
    *pass = prof_mem_time(&r.s.profile, act * (1 + 1.0 / 8));
    *ag = prof_coll_time(&r.s.profile, COLL_ALL_GATHER, &r.c.tp_span, act);
    step_costs_t c = r.c;
    scenario_free(&r.s);
    return c;
}

static void test_async_tp_reduce_pass(void)
{
    double pass, ag;
    step_costs_t off = async_tp_8b(PRECISION_BF16, false, true, &pass, &ag);
    step_costs_t on = async_tp_8b(PRECISION_BF16, true, true, &pass, &ag);
    CU_ASSERT_TRUE(pass > 0);
    CHECK_REL(on.fwd.tp - off.fwd.tp, 2 * pass, 1e-9);
    CHECK_REL(on.bwd.tp - off.bwd.tp, 2 * pass, 1e-9);

    /* with row-scaled fp8 the pass leaves the all-gathers unfused
     * (pytorch/pytorch#149990): the forward's two gathers (bf16) run whole */
    step_costs_t fused = async_tp_8b(PRECISION_FP8_ROWWISE, true, false, &pass, &ag);
    step_costs_t whole = async_tp_8b(PRECISION_FP8_ROWWISE, true, true, &pass, &ag);
    CU_ASSERT_TRUE(ag > 0);
    CU_ASSERT_TRUE(whole.fwd.tp > 2 * ag);
    CU_ASSERT_TRUE(fused.fwd.tp < whole.fwd.tp - ag);
    CU_ASSERT_TRUE(whole.bwd.tp > fused.bwd.tp);
}

/* ----------------------------------------------- elementwise and recompute */

/* Eager PyTorch (torchtitan without torch.compile) moves 9x the bytes of a
 * fused RMSNorm; compiled, the multiplier is 1. torchtitan's op-level
 * recompute repeats the elementwise ops and every second matmul: more than
 * Megatron's selective (the attention core), less than full. */
static void test_eager_and_recompute(void)
{
    priced_t eager, compiled;
    CU_ASSERT_EQUAL_FATAL(begin(&eager, "llama3-8b", "h100-sxm", 8, "torchtitan-2025-06"), 0);
    set_batch(&eager.s.layout, 1, 1, 8, 8192);
    CU_ASSERT_EQUAL_FATAL(price(&eager), 0);
    CU_ASSERT_EQUAL_FATAL(begin(&compiled, "llama3-8b", "h100-sxm", 8, "torchtitan-2025-06"), 0);
    set_batch(&compiled.s.layout, 1, 1, 8, 8192);
    sim_options_compiled(&compiled.s.opt);
    CU_ASSERT_EQUAL_FATAL(price(&compiled), 0);
    const profile_t *p = &eager.s.profile;
    double bytes = 2 * 8192.0 * eager.s.model.hidden * 2; /* read and write, bf16 */
    CHECK_REL(op_fwd(&eager.c, "norm_1"), prof_mem_time(p, 9 * bytes), 1e-9);
    CHECK_REL(op_fwd(&compiled.c, "norm_1"), prof_mem_time(p, bytes), 1e-9);
    scenario_free(&eager.s);
    scenario_free(&compiled.s);

    /* the pricing of each mode (whichever framework runs it) */
    double rec[3];
    const recompute_t modes[3] = {RECOMPUTE_SELECTIVE, RECOMPUTE_OPS, RECOMPUTE_FULL};
    priced_t r;
    CU_ASSERT_EQUAL_FATAL(begin(&r, "llama3-8b", "h100-sxm", 8, "torchtitan-2025-06"), 0);
    set_batch(&r.s.layout, 1, 1, 8, 8192);
    CU_ASSERT_EQUAL_FATAL(price(&r), 0);
    for (int i = 0; i < 3; i++) {
        layout_t l = r.s.layout;
        l.recompute = modes[i];
        sim_input_t in = r.s.input;
        in.layout = &l;
        step_costs_t c;
        err_t e;
        CU_ASSERT_EQUAL_FATAL(sim_costs(&in, &c, &e), 0);
        rec[i] = c.bwd.recompute;
        if (modes[i] == RECOMPUTE_FULL) /* torchtitan's checkpoint stops early */
            CHECK_REL(rec[i], c.fwd.compute - op_fwd(&c, "mlp_out") - op_fwd(&c, "residual_2"),
                      1e-12);
    }
    scenario_free(&r.s);
    CU_ASSERT_TRUE(rec[0] < rec[1] && rec[1] < rec[2]);
}

/* Full recompute by PyTorch's non-reentrant checkpoint (torchtitan,
 * llm-foundry) stops once the tensors the backward saved are rebuilt: a
 * dense layer's down projection, its TP reduce-scatter and the last
 * residual add are not run again. Megatron's checkpoint re-runs the whole
 * forward, collectives included. Same model, GPUs and layout (TP 2 with
 * sequence parallelism, no TP overlap) under both. */
static void test_recompute_early_stop(void)
{
    const char *fw[2] = {"megatron-core", "torchtitan-2025-06"};
    step_costs_t c[2][2]; /* [framework][recompute none, full] */
    double rs = 0;
    for (int k = 0; k < 2; k++)
        for (int full = 0; full < 2; full++) {
            priced_t r;
            CU_ASSERT_EQUAL_FATAL(begin(&r, "llama3-8b", "h100-sxm", 8, fw[k]), 0);
            set_batch(&r.s.layout, 2, 1, 8, 8192);
            r.s.layout.recompute = full ? RECOMPUTE_FULL : RECOMPUTE_NONE;
            r.s.opt.tp_comm_overlap = false;
            CU_ASSERT_EQUAL_FATAL(price(&r), 0);
            c[k][full] = r.c;
            if (k == 1)
                rs = prof_coll_time(&r.s.profile, COLL_REDUCE_SCATTER, &r.c.tp_span,
                                    8192.0 * r.s.model.hidden * 2);
            scenario_free(&r.s);
        }
    const step_costs_t *mc = &c[0][1], *tt = &c[1][1];
    CHECK_REL(mc->bwd.recompute, mc->fwd.compute, 1e-12);
    double skipped = op_fwd(tt, "mlp_out") + op_fwd(tt, "residual_2");
    CU_ASSERT_TRUE(skipped > 0.1 * tt->fwd.compute);
    CHECK_REL(tt->bwd.recompute, tt->fwd.compute - skipped, 1e-12);
    /* the backward's own collectives plus the forward's again, less (for
     * the early stop) the down projection's reduce-scatter */
    CU_ASSERT_TRUE(rs > 0);
    CHECK_REL(mc->bwd.tp, c[0][0].bwd.tp + mc->fwd.tp, 1e-12);
    CHECK_REL(tt->bwd.tp, c[1][0].bwd.tp + tt->fwd.tp - rs, 1e-12);
}

/* ------------------------------------------------- context parallelism */

/* Llama 3 8B on gpus x gpu under fw: one micro-batch of seq tokens split
 * over cp ranks, priced (the caller frees). */
static void price_cp_8b(priced_t *p, const char *gpu, int gpus, const char *fw, int cp, int seq)
{
    CU_ASSERT_EQUAL_FATAL(begin(p, "llama3-8b", gpu, gpus, fw), 0);
    set_batch(&p->s.layout, 1, 1, gpus / cp, seq);
    p->s.layout.cp = cp;
    CU_ASSERT_EQUAL_FATAL(price(p), 0);
}

/* Context-parallel attention runs block by block (Transformer Engine's
 * P2P ring, PyTorch's templated ring): with a causal mask and load
 * balancing, a local causal block over s/cp keys, 1/cp of the work, then
 * cp - 1 mask-free blocks of the same work, each either all queries over
 * half a chunk of keys or half the queries over a chunk (the forward loops
 * over keys, the backward over queries); the slower kind paces the group.
 * Priced as one causal call over the local keys it would be slower: the
 * mask-free blocks skip the masking. */
static void test_cp_blocks(void)
{
    priced_t r;
    const int cp = 4, seq = 131072;
    price_cp_8b(&r, "h100-sxm", 8, NULL, cp, seq);
    const profile_t *p = &r.s.profile;
    double s_loc = (double)seq / cp, heads = r.s.model.n_heads, hd = r.s.model.head_dim;
    double flops = 4 * s_loc * seq * heads * hd * 0.5, step = flops / cp;
    prof_attn_call_t first = {"cudnn", true, s_loc, (int)hd};
    prof_attn_call_t whole = {"cudnn", false, s_loc, (int)hd};
    prof_attn_call_t half = {"cudnn", false, s_loc / 2, (int)hd};
    double f0 = prof_attn_time(p, DTYPE_BF16, &first, step, false);
    double b0 = prof_attn_time(p, DTYPE_BF16, &first, 2.5 * step, true);
    double f_kv = prof_attn_time(p, DTYPE_BF16, &half, step, false);
    double b_kv = prof_attn_time(p, DTYPE_BF16, &whole, 2.5 * step, true);
    double f_q = prof_attn_time(p, DTYPE_BF16, &whole, step, false);
    double b_q = prof_attn_time(p, DTYPE_BF16, &half, 2.5 * step, true);
    bool kv = f_kv + b_kv >= f_q + b_q;
    CHECK_REL(op_fwd(&r.c, "attention"), f0 + (cp - 1) * (kv ? f_kv : f_q), 1e-12);
    CHECK_REL(op_bwd(&r.c, "attention"), b0 + (cp - 1) * (kv ? b_kv : b_q), 1e-12);
    CU_ASSERT_TRUE(op_fwd(&r.c, "attention") < cp * f0);
    scenario_free(&r.s);
}

/* The K/V exchange by method. A ring hides each block's transfer behind
 * the block in hand (at 64k tokens, all of it). PyTorch's all-gather
 * rotation (torchtitan) gathers once during the local block, forward and
 * backward, and passes fp32 K/V gradients round a ring, the last transfer
 * exposed; torchtitan's Llama repeats the grouped K/V heads first, so the
 * gradients travel at the query width (4x Llama 3 8B's K/V). Each later
 * step merges its partial output and accumulates gradients: 6 bytes an
 * element in Transformer Engine's fused kernels, 10 in PyTorch's fp32
 * merge (4.2x that in the forward when eager). */
static void test_cp_exchange(void)
{
    priced_t ring, ag, grouped;
    price_cp_8b(&ring, "h100-sxm", 16, NULL, 2, 65536);
    CHECK_REL(ring.c.fwd.cp, 0, 1e-12);
    CHECK_REL(ring.c.bwd.cp, 0, 1e-12);
    double T = 32768, qw = ring.s.model.n_heads * ring.s.model.head_dim;
    double kvw = ring.s.model.n_kv_heads * ring.s.model.head_dim;
    const profile_t *p = &ring.s.profile;
    CHECK_REL(op_fwd(&ring.c, "cp_merge"), prof_mem_time(p, 6 * T * qw), 1e-12);
    CHECK_REL(op_bwd(&ring.c, "cp_merge"), prof_mem_time(p, 6 * T * (qw + 2 * kvw)), 1e-12);

    price_cp_8b(&ag, "h100-96g", 8, "torchtitan-2024-12", 2, 65536);
    CU_ASSERT_TRUE(ag.s.opt.kv_repeated);
    p = &ag.s.profile;
    double dkv = prof_coll_time(p, COLL_SEND_RECV, &ag.c.cp_pair_span, 2 * T * qw * 4);
    CHECK_REL(ag.c.fwd.cp, 0, 1e-12);
    CHECK_REL(ag.c.bwd.cp, dkv, 1e-12);
    CHECK_REL(op_fwd(&ag.c, "cp_merge"), prof_mem_time(p, 10 * 4.2 * T * qw), 1e-12);
    CHECK_REL(op_bwd(&ag.c, "cp_merge"), prof_mem_time(p, 10 * T * 3 * qw), 1e-12);
    sim_options_compiled(&ag.s.opt);
    CU_ASSERT_EQUAL_FATAL(price(&ag), 0);
    CHECK_REL(op_fwd(&ag.c, "cp_merge"), prof_mem_time(p, 10 * T * qw), 1e-12);

    price_cp_8b(&grouped, "h100-96g", 8, "torchtitan-2024-12", 2, 65536);
    grouped.s.opt.kv_repeated = false;
    CU_ASSERT_EQUAL_FATAL(price(&grouped), 0);
    CHECK_REL(grouped.c.bwd.cp,
              prof_coll_time(p, COLL_SEND_RECV, &grouped.c.cp_pair_span, 2 * T * kvw * 4), 1e-12);
    CU_ASSERT_TRUE(ag.c.bwd.cp > 3 * grouped.c.bwd.cp);
    scenario_free(&ring.s);
    scenario_free(&ag.s);
    scenario_free(&grouped.s);
}

/* torchtitan's Llama repeats the grouped K/V heads before attention, and
 * scaled_dot_product_attention saves its inputs: a block that keeps its
 * activations keeps K and V at the query width (Llama 3 8B: 4096 where
 * Megatron keeps 1024 each). Under full recompute only the block input is
 * kept, but the block rebuilt in the backward holds them at that width. */
static void test_kv_repeated_memory(void)
{
    priced_t p;
    CU_ASSERT_EQUAL_FATAL(begin(&p, "llama3-8b", "h100-96g", 8, "torchtitan-2024-12"), 0);
    set_batch(&p.s.layout, 1, 1, 8, 8192);
    p.s.layout.recompute = RECOMPUTE_NONE;
    CU_ASSERT_EQUAL_FATAL(price(&p), 0);
    CU_ASSERT_TRUE(p.s.opt.kv_repeated);
    memory_opts_t mo;
    sim_memory_opts(&p.s.profile, &p.s.opt, &mo);
    CU_ASSERT_TRUE(mo.kv_repeated);
    model_memory_t rep, grouped;
    model_memory_stage(&p.s.model, &p.s.layout, 0, &mo, &rep);
    mo.kv_repeated = false;
    model_memory_stage(&p.s.model, &p.s.layout, 0, &mo, &grouped);
    double qw = p.s.model.n_heads * p.s.model.head_dim;
    double kvw = p.s.model.n_kv_heads * p.s.model.head_dim;
    double extra = p.s.model.n_layers * 8192.0 * 2 * (qw - kvw) * 2; /* bf16 K and V */
    CHECK_REL(rep.activations_bytes - grouped.activations_bytes, extra, 1e-9);
    p.s.layout.recompute = RECOMPUTE_FULL;
    mo.kv_repeated = true;
    model_memory_stage(&p.s.model, &p.s.layout, 0, &mo, &rep);
    mo.kv_repeated = false;
    model_memory_stage(&p.s.model, &p.s.layout, 0, &mo, &grouped);
    CHECK_REL(rep.activations_bytes - grouped.activations_bytes, extra / p.s.model.n_layers,
              1e-9);
    scenario_free(&p.s);
}

static void moe_layout(priced_t *p, int ep, int gb);

/* Megatron-Core from 0.13.0 weights the expert activation by the router's
 * probabilities (experts.py activation_func_with_probs) where earlier
 * releases weighted the expert outputs in the combine and kept them for the
 * probabilities' gradient: Mixtral 8x7B at EP 8 without recompute keeps
 * top_k x hidden fewer elements a token in each MoE block under the
 * presets of Megatron-Core 0.13 on (megatron-core, Megatron-Bridge) than
 * under NeMo 25.04's Megatron-Core 0.12. */
static void test_moe_probs_in_activation(void)
{
    priced_t p;
    CU_ASSERT_EQUAL_FATAL(begin(&p, "mixtral-8x7b", "h100-sxm", 8, "megatron-core"), 0);
    moe_layout(&p, 8, 8);
    p.s.layout.recompute = RECOMPUTE_NONE;
    CU_ASSERT_EQUAL_FATAL(price(&p), 0);
    CU_ASSERT_TRUE(p.s.opt.moe.probs_in_act);
    memory_opts_t mo;
    sim_memory_opts(&p.s.profile, &p.s.opt, &mo);
    CU_ASSERT_TRUE(mo.moe_probs_in_act);
    model_memory_t in_act, in_combine;
    model_memory_stage(&p.s.model, &p.s.layout, 0, &mo, &in_act);
    mo.moe_probs_in_act = false;
    model_memory_stage(&p.s.model, &p.s.layout, 0, &mo, &in_combine);
    double kept = p.s.model.n_layers * 4096.0 * p.s.model.moe.top_k * p.s.model.hidden * 2;
    CHECK_REL(in_combine.activations_bytes - in_act.activations_bytes, kept, 1e-9);
    scenario_free(&p.s);
    static const char *const older[] = {"nemo-25.04", "nemo-25.02"};
    static const char *const newer[] = {"megatron-bridge-25.09", "megatron-bridge-25.11",
                                        "megatron-bridge-26.04"};
    for (int i = 0; i < 2; i++) {
        CU_ASSERT_EQUAL_FATAL(begin(&p, "mixtral-8x7b", "h100-sxm", 8, older[i]), 0);
        CU_ASSERT_FALSE(p.s.opt.moe.probs_in_act);
        scenario_free(&p.s);
    }
    for (int i = 0; i < 3; i++) {
        CU_ASSERT_EQUAL_FATAL(begin(&p, "mixtral-8x7b", "h100-sxm", 8, newer[i]), 0);
        CU_ASSERT_TRUE(p.s.opt.moe.probs_in_act);
        scenario_free(&p.s);
    }
}

/* Llama 3 8B at TP 2 with SP or Mixtral 8x7B at EP 8 on 8 H100s under
 * Megatron-Core, selective recompute of the given modules (0: the default),
 * priced, with the stage's memory under the preset's options. */
static void price_rc_modules(priced_t *p, bool moe, unsigned modules, model_memory_t *mm)
{
    CU_ASSERT_EQUAL_FATAL(begin(p, moe ? "mixtral-8x7b" : "llama3-8b", "h100-sxm", 8,
                                "megatron-core"),
                          0);
    if (moe)
        moe_layout(p, 8, 8);
    else
        set_batch(&p->s.layout, 2, 1, 4, 4096);
    p->s.layout.recompute = RECOMPUTE_SELECTIVE;
    p->s.layout.recompute_modules = modules;
    CU_ASSERT_EQUAL_FATAL(price(p), 0);
    memory_opts_t mo;
    sim_memory_opts(&p->s.profile, &p->s.opt, &mo);
    model_memory_stage(&p->s.model, &p->s.layout, 0, &mo, mm);
}

/* Megatron-Core's --recompute-modules (transformer_layer.py): "mlp"
 * checkpoints a dense MLP whole, dropping its intermediates (SwiGLU's gate
 * and up outputs and their product, 3 x ffn an element a token, split over
 * TP) and running its GEMMs, activation and TP collectives again in the
 * backward; "layernorm" rebuilds only norms that are their own module, so
 * nothing for Llama under Transformer Engine (fused into the next GEMM) but
 * an MoE block's pre-MLP norm; "moe_act" the experts' activation output;
 * "moe" the whole MoE block, its all-to-alls included. */
static void test_recompute_modules(void)
{
    priced_t d0, mlp, ln;
    model_memory_t m0, m_mlp, m_ln;
    price_rc_modules(&d0, false, 0, &m0);
    price_rc_modules(&mlp, false, LAYOUT_RC_CORE_ATTN | LAYOUT_RC_MLP, &m_mlp);
    price_rc_modules(&ln, false, LAYOUT_RC_CORE_ATTN | LAYOUT_RC_LAYERNORM, &m_ln);
    const model_t *m = &d0.s.model;
    double mlp_f = op_fwd(&d0.c, "mlp_in") + op_fwd(&d0.c, "swiglu") + op_fwd(&d0.c, "mlp_out");
    CHECK_REL(mlp.c.bwd.recompute - d0.c.bwd.recompute, mlp_f, 1e-9);
    CHECK_REL(mlp.c.bwd.tp - d0.c.bwd.tp, d0.c.fwd.tp / 2, 1e-9);
    CU_ASSERT_TRUE(d0.c.fwd.tp > 0);
    CHECK_REL(ln.c.bwd.recompute, d0.c.bwd.recompute, 1e-12);
    double kept = m->n_layers * 4096.0 * 3 * m->ffn * 2 / 2; /* bf16, TP 2 */
    CHECK_REL(m0.activations_bytes - m_mlp.activations_bytes, kept, 1e-9);
    CHECK_REL(m_ln.activations_bytes, m0.activations_bytes, 1e-12);
    CU_ASSERT_TRUE(model_hw_flops_per_step(m, &mlp.s.layout) >
                   model_hw_flops_per_step(m, &d0.s.layout));

    priced_t e0, act, whole, eln;
    model_memory_t me0, me_act, me_whole, me_ln;
    price_rc_modules(&e0, true, 0, &me0);
    price_rc_modules(&act, true, LAYOUT_RC_MOE_ACT, &me_act);
    price_rc_modules(&whole, true, LAYOUT_RC_MOE, &me_whole);
    price_rc_modules(&eln, true, LAYOUT_RC_LAYERNORM, &me_ln);
    double attn = op_fwd(&e0.c, "attention");
    CHECK_REL(e0.c.bwd.recompute, attn, 1e-12);
    CHECK_REL(act.c.bwd.recompute, op_fwd(&e0.c, "expert_act"), 1e-9);
    CHECK_REL(eln.c.bwd.recompute, op_fwd(&e0.c, "norm_2"), 1e-9);
    double block = op_fwd(&e0.c, "router") + op_fwd(&e0.c, "permute") +
                   op_fwd(&e0.c, "experts_in") + op_fwd(&e0.c, "expert_act") +
                   op_fwd(&e0.c, "experts_out") + op_fwd(&e0.c, "unpermute");
    CHECK_REL(whole.c.bwd.recompute, block + e0.c.fwd.imbalance, 1e-9);
    CHECK_REL(whole.c.bwd.ep - e0.c.bwd.ep, e0.c.fwd.ep, 1e-9);
    CU_ASSERT_TRUE(me_act.activations_bytes < me0.activations_bytes);
    CU_ASSERT_TRUE(me_whole.activations_bytes < me_act.activations_bytes);
    CU_ASSERT_TRUE(me_ln.activations_bytes < me0.activations_bytes);
    priced_t *all[] = {&d0, &mlp, &ln, &e0, &act, &whole, &eln};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        scenario_free(&all[i]->s);
}

/* ------------------------------------------------- fp8 weight casting */

/* Transformer Engine reuses a step's quantized weights over its
 * micro-batches when the framework passes is_first_microbatch (Megatron);
 * Composer does not, so each forward recasts them. */
static void test_fp8_weight_cache(void)
{
    priced_t cached, recast;
    CU_ASSERT_EQUAL_FATAL(begin(&cached, "llama3-8b", "h100-sxm", 8, "megatron-core"), 0);
    set_batch(&cached.s.layout, 1, 1, 64, 2048);
    cached.s.layout.precision = PRECISION_FP8_CS;
    CU_ASSERT_EQUAL_FATAL(price(&cached), 0);
    CU_ASSERT_EQUAL_FATAL(begin(&recast, "llama3-8b", "h100-sxm", 8, "megatron-core"), 0);
    set_batch(&recast.s.layout, 1, 1, 64, 2048);
    recast.s.layout.precision = PRECISION_FP8_CS;
    recast.s.opt.fp8_weight_cache = false;
    CU_ASSERT_EQUAL_FATAL(price(&recast), 0);
    CU_ASSERT_EQUAL(cached.s.layout.grad_accum, 8);
    double h = cached.s.model.hidden, f = cached.s.model.ffn;
    double w = 2 * f * h; /* the gate and up projections */
    double cast = cached.s.opt.prec.cast_weight * w;
    const profile_t *p = &cached.s.profile;
    double x = cached.s.opt.prec.cast_input * 2048.0 * h;
    CHECK_REL(op_fwd(&recast.c, "mlp_in") - op_fwd(&cached.c, "mlp_in"),
              prof_mem_time(p, x + cast) - prof_mem_time(p, x + cast / 8), 1e-9);
    scenario_free(&cached.s);
    scenario_free(&recast.s);
}

/* The distributed optimizer's next-step parameter all-gather hides only
 * behind the forward of the first micro-batch (Megatron waits for each
 * bucket at its first use), not behind all m of them: Llama 3 70B, TP8
 * DP8 on 64 H100s, 64 micro-batches of 2,048 tokens. The exposed gather is
 * the gather time less one micro-batch's forward through the stage. */
static void test_param_gather_window(void)
{
    priced_t p;
    CU_ASSERT_EQUAL_FATAL(begin(&p, "llama3-70b", "h100-sxm", 64, "megatron-core"), 0);
    set_batch(&p.s.layout, 8, 1, 512, 2048);
    p.s.layout.sequence_parallel = true;
    p.s.layout.distributed_optimizer = true;
    p.s.layout.recompute = RECOMPUTE_FULL;
    CU_ASSERT_EQUAL_FATAL(price(&p), 0);
    CU_ASSERT_EQUAL(p.s.layout.grad_accum, 64);
    sim_ctx_t *ctx = sim_ctx_create();
    CU_ASSERT_PTR_NOT_NULL_FATAL(ctx);
    sim_result_t r;
    err_t e;
    CU_ASSERT_EQUAL_FATAL(sim_run_step_costs(ctx, &p.s.input, &p.c, &r, &e), 0);
    sim_event_t *ev = NULL;
    int n = 0;
    CU_ASSERT_EQUAL_FATAL(sim_timeline(ctx, &ev, &n, &e), 0);
    double exposed = 0;
    for (int i = 0; i < n; i++)
        if (ev[i].kind == TASK_PARAM_GATHER)
            exposed += ev[i].end_s - ev[i].start_s;
    free(ev);
    sim_ctx_destroy(ctx);
    double params = model_gpu_params(&p.s.model, &p.s.layout, 0);
    double gather = sim_param_gather_time(&p.s.input, &p.c, params);
    double first_fwd = cost_total(&p.c.fwd) * p.s.model.n_layers;
    CU_ASSERT_TRUE_FATAL(gather > first_fwd); /* the case the window decides */
    CHECK_REL(exposed, gather - first_fwd, 1e-5);
    scenario_free(&p.s);
}

/* ------------------------------------------------------------- memory */

/* Peak memory per GPU against the published figures the memory model is
 * validated on, within 5%. torchtitan's H100 96GB benchmark
 * (benchmarks/llama3_h100_202412_torchtitan.md at torchtitan 9dec370,
 * Dec 2024; max_reserved GiB over ranks, read at iteration 90), Llama 3.1
 * 8B at sequence 8192, local batch 2, op-level selective recompute, with
 * torch.compile: 77.0 GiB on 8 GPUs (bf16), 76.8 (Float8), 62.0 and 61.8 on
 * 128 GPUs; full recompute, Float8, one sequence per rank: 83.9 (FSDP8,
 * 32k), 84.2 (FSDP4 CP2, 64k), 84.0 (FSDP2 CP4, 128k), 84.5 (CP8, 256k).
 * Llama 3.1 70B 2D (FSDP 32, TP 8, local batch 16, full recompute, Float8,
 * torch.compile, async TP): 67.6 GiB on 256 GPUs, with the loss under
 * loss_parallel (test_loss_parallel) and the gathered GEMM inputs DTensor's
 * sequence parallelism saves (test_sp_saves_gathered; the model said 56.6
 * before both).
 * Llama 3.1 8B on 32 H200s (June 2025, torchtitan e7c0cae,
 * benchmarks/llama3-8b_h200_202506_trainy-whitefiber.md: local batch 2,
 * op-level selective recompute, Float8 with float8 all-gathers, compile,
 * which by then compiled the loss too; test_compiled_loss): 47.96 GiB
 * (the model said 63 before the compiled loss).
 * Not matched yet, so not listed: the eager rows (82.4, 67.0: 6-11% above
 * the model) and the same 70B layout without async TP (71.9: 8% above; the
 * model does not know why async TP would hold 4.3 GiB less). And
 * Megatron-LM's theoretical_memory_usage.py: 18 bytes of weights, fp32
 * gradients and optimizer per parameter, 6 + 12/DP with the distributed
 * optimizer, which the megatron-core preset reproduces. */
static void test_published_memory(void)
{
    static const char *const b8 = "llama3.1-8b", *const g96 = "h100-96g", *const t24 =
                                                                          "torchtitan-2024-12";
    static const struct {
        const char *model, *gpu, *fw;
        int gpus, tp, cp, mb, seq;
        recompute_t rc;
        precision_t prec;
        bool fp8_gather; /* float8 all-gathers for FSDP */
        double gib;
    } rows[] = {
        {b8, g96, t24, 8, 1, 1, 2, 8192, RECOMPUTE_OPS, PRECISION_BF16, false, 77.0},
        {b8, g96, t24, 8, 1, 1, 2, 8192, RECOMPUTE_OPS, PRECISION_FP8_CS, false, 76.8},
        {b8, g96, t24, 128, 1, 1, 2, 8192, RECOMPUTE_OPS, PRECISION_BF16, false, 62.0},
        {b8, g96, t24, 128, 1, 1, 2, 8192, RECOMPUTE_OPS, PRECISION_FP8_CS, false, 61.8},
        {b8, g96, t24, 8, 1, 1, 1, 32768, RECOMPUTE_FULL, PRECISION_FP8_CS, false, 83.9},
        {b8, g96, t24, 8, 1, 2, 1, 65536, RECOMPUTE_FULL, PRECISION_FP8_CS, false, 84.2},
        {b8, g96, t24, 8, 1, 4, 1, 131072, RECOMPUTE_FULL, PRECISION_FP8_CS, false, 84.0},
        {b8, g96, t24, 8, 1, 8, 1, 262144, RECOMPUTE_FULL, PRECISION_FP8_CS, false, 84.5},
        {"llama3.1-70b", g96, t24, 256, 8, 1, 16, 8192, RECOMPUTE_FULL, PRECISION_FP8_CS, false,
         67.6},
        {b8, "h200", "torchtitan-2025-06", 32, 1, 1, 2, 8192, RECOMPUTE_OPS, PRECISION_FP8_CS,
         true, 47.96},
    };
    sim_ctx_t *ctx = sim_ctx_create();
    CU_ASSERT_PTR_NOT_NULL_FATAL(ctx);
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        priced_t p;
        CU_ASSERT_EQUAL_FATAL(begin(&p, rows[i].model, rows[i].gpu, rows[i].gpus, rows[i].fw), 0);
        layout_t *l = &p.s.layout;
        int ranks = rows[i].gpus / rows[i].cp / rows[i].tp; /* data-parallel ranks */
        set_batch(l, rows[i].tp, rows[i].mb, rows[i].mb * ranks, rows[i].seq);
        l->cp = rows[i].cp;
        l->recompute = rows[i].rc;
        l->precision = rows[i].prec;
        sim_options_compiled(&p.s.opt);
        p.s.opt.fp8_param_gather = rows[i].fp8_gather;
        CU_ASSERT_EQUAL_FATAL(price(&p), 0);
        CU_ASSERT_EQUAL(l->dp, ranks);
        sim_result_t r;
        err_t e;
        CU_ASSERT_EQUAL_FATAL(sim_run_step(ctx, &p.s.input, &r, &e), 0);
        CHECK_REL(r.memory.total_bytes / (1024.0 * 1024 * 1024), rows[i].gib, 0.05);
        scenario_free(&p.s);
    }
    sim_ctx_destroy(ctx);

    /* Megatron-Core: fp32 main gradients by default */
    priced_t mc;
    CU_ASSERT_EQUAL_FATAL(begin(&mc, "llama3-8b", "h100-sxm", 64, "megatron-core"), 0);
    set_batch(&mc.s.layout, 1, 1, 64, 4096);
    CU_ASSERT_EQUAL_FATAL(price(&mc), 0);
    CU_ASSERT_EQUAL(mc.s.layout.grad_bytes, 4);
    model_memory_t mm;
    model_memory_stage(&mc.s.model, &mc.s.layout, 0, NULL, &mm);
    CHECK_REL((mm.params_bytes + mm.grads_bytes + mm.optimizer_bytes) / mm.params_count,
              mc.s.layout.distributed_optimizer ? 6 + 12.0 / 64 : 18, 1e-12);
    scenario_free(&mc.s);
}

/* torchtitan computes the loss of a TP run under loss_parallel, whose DTensor
 * handlers decompose log-softmax and its backward into separate passes over
 * the vocabulary shard: 38 bytes per logit element each way (22 for the
 * fused aten kernels without TP) and a backward peak of 16 (12). Llama 3 8B
 * at TP2 on 8 H100s, 4,096 tokens a micro-batch, against the same preset
 * with the TP figures cleared; at TP1 the preset's TP figures do nothing. */
/* Llama 3 8B on 8 H100s under torchtitan-2024-12 at TP tp, 4,096 tokens a
 * micro-batch, priced; without_tp_loss clears the preset's TP loss figures.
 * The loss stage's activations (no fragmentation) go to act. */
static void price_tp_loss(priced_t *p, int tp, bool without_tp_loss, double *act)
{
    CU_ASSERT_EQUAL_FATAL(begin(p, "llama3-8b", "h100-sxm", 8, "torchtitan-2024-12"), 0);
    set_batch(&p->s.layout, tp, 1, 8 / tp, 4096);
    if (without_tp_loss)
        p->s.opt.ce_tp_fwd_bytes = p->s.opt.ce_tp_bwd_bytes = p->s.opt.ce_tp_peak_bytes = 0;
    CU_ASSERT_EQUAL_FATAL(price(p), 0);
    memory_opts_t mo;
    sim_memory_opts(&p->s.profile, &p->s.opt, &mo);
    mo.fragmentation = 0;
    model_memory_t mm;
    model_memory_stage(&p->s.model, &p->s.layout, 0, &mo, &mm);
    *act = mm.activations_bytes;
}

static void test_loss_parallel(void)
{
    priced_t p[2];
    double act[2];
    for (int k = 0; k < 2; k++)
        price_tp_loss(&p[k], 2, k == 1, &act[k]);
    const sim_options_t *o = &p[0].s.opt;
    CHECK_REL(o->ce_tp_fwd_bytes, 38, 0);
    CHECK_REL(o->ce_tp_bwd_bytes, 38, 0);
    CHECK_REL(o->ce_tp_peak_bytes, 16, 0);
    double logit_el = 4096.0 * p[0].s.model.vocab / 2;
    const profile_t *prof = &p[0].s.profile;
    CHECK_REL(p[0].c.head_fwd.compute - p[1].c.head_fwd.compute,
              prof_mem_time(prof, logit_el * 38) - prof_mem_time(prof, logit_el * 22), 1e-9);
    CHECK_REL(p[0].c.head_bwd.compute - p[1].c.head_bwd.compute,
              prof_mem_time(prof, logit_el * 38) - prof_mem_time(prof, logit_el * 22), 1e-9);
    CHECK_REL(act[0] - act[1], (16 - 12) * logit_el, 1e-9);
    for (int k = 0; k < 2; k++)
        scenario_free(&p[k].s);

    /* TP1: the fused kernels' figures */
    for (int k = 0; k < 2; k++)
        price_tp_loss(&p[k], 1, k == 1, &act[k]);
    CHECK_REL(p[0].c.head_fwd.compute, p[1].c.head_fwd.compute, 1e-12);
    CHECK_REL(p[0].c.head_bwd.compute, p[1].c.head_bwd.compute, 1e-12);
    CHECK_REL(act[0], act[1], 1e-12);
    for (int k = 0; k < 2; k++)
        scenario_free(&p[k].s);
}

/* torchtitan's compile switch compiles the loss too since April 2025
 * (components/loss.py): Inductor fuses the fp32 cast into the reductions
 * and saves the bf16 logits, 4 bytes per logit element forward, backward
 * and at the peak, with or without TP. The December 2024 preset's compile
 * left the loss eager. Llama 3 8B on 8 H100s, 4,096 tokens a micro-batch. */
static void test_compiled_loss(void)
{
    static const struct {
        const char *fw;
        int tp;
        double fwd, peak; /* the loss's bytes per logit element once compiled */
    } cases[] = {
        {"torchtitan-2025-06", 1, 4, 4},
        {"torchtitan-2025-06", 2, 4, 4},
        {"torchtitan-2025-12", 2, 4, 4},
        {"torchtitan-2024-12", 1, 22, 12},
        {"torchtitan-2024-12", 2, 38, 16},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        priced_t p[2]; /* [model compiled, model and loss compiled] */
        model_memory_t mm[2];
        for (int k = 0; k < 2; k++) {
            CU_ASSERT_EQUAL_FATAL(begin(&p[k], "llama3-8b", "h100-sxm", 8, cases[i].fw), 0);
            set_batch(&p[k].s.layout, cases[i].tp, 1, 8 / cases[i].tp, 4096);
            if (k)
                sim_options_compiled(&p[k].s.opt);
            else
                sim_options_compiled_model(&p[k].s.opt);
            CU_ASSERT_EQUAL_FATAL(price(&p[k]), 0);
            memory_opts_t mo;
            sim_memory_opts(&p[k].s.profile, &p[k].s.opt, &mo);
            mo.fragmentation = 0;
            model_memory_stage(&p[k].s.model, &p[k].s.layout, 0, &mo, &mm[k]);
        }
        const sim_options_t *eager = &p[0].s.opt;
        bool tp = cases[i].tp > 1 && eager->ce_tp_fwd_bytes > 0;
        double fwd0 = tp ? eager->ce_tp_fwd_bytes : eager->ce_fwd_bytes;
        double peak0 = tp ? eager->ce_tp_peak_bytes : eager->ce_peak_bytes;
        double logit_el = 4096.0 * p[0].s.model.vocab / cases[i].tp;
        const profile_t *prof = &p[0].s.profile;
        CHECK_REL(p[1].c.head_fwd.compute - p[0].c.head_fwd.compute,
                  prof_mem_time(prof, logit_el * cases[i].fwd) - prof_mem_time(prof, logit_el * fwd0),
                  1e-9);
        CU_ASSERT_DOUBLE_EQUAL(mm[1].activations_bytes - mm[0].activations_bytes,
                               (cases[i].peak - peak0) * logit_el, 1);
        for (int k = 0; k < 2; k++)
            scenario_free(&p[k].s);
    }
}

/* Sequence parallelism through DTensor (torchtitan) keeps the QKV and
 * first-MLP GEMMs' inputs as all-gathered, whole, where Megatron keeps the
 * shard: per block 2 x tokens x hidden elements instead of 1/TP of them,
 * in bf16, or 1 byte each when the per-tensor fp8 recipe gathers the
 * quantized input. Llama 3 8B at TP8 with SP, no recompute. */
static void test_sp_saves_gathered(void)
{
    static const precision_t precs[2] = {PRECISION_BF16, PRECISION_FP8_CS};
    for (int i = 0; i < 2; i++) {
        priced_t p;
        CU_ASSERT_EQUAL_FATAL(begin(&p, "llama3-8b", "h100-sxm", 8, "torchtitan-2025-06"), 0);
        set_batch(&p.s.layout, 8, 1, 1, 4096);
        p.s.layout.precision = precs[i];
        CU_ASSERT_EQUAL_FATAL(price(&p), 0);
        layout_t *l = &p.s.layout;
        CU_ASSERT_TRUE(l->sp_saves_gathered);
        double kept = model_layer_activation_bytes(&p.s.model, l);
        l->sp_saves_gathered = false;
        double megatron = model_layer_activation_bytes(&p.s.model, l);
        double el = 2.0 * 4096 * p.s.model.hidden, e = 2;
        double whole = precs[i] == PRECISION_FP8_CS ? el : el * e;
        CHECK_REL(kept - megatron, whole - el * e / 8, 1e-12);
        scenario_free(&p.s);
    }
    /* Megatron-Core keeps the shard */
    priced_t mc;
    CU_ASSERT_EQUAL_FATAL(begin(&mc, "llama3-8b", "h100-sxm", 8, "megatron-core"), 0);
    set_batch(&mc.s.layout, 8, 1, 1, 4096);
    CU_ASSERT_EQUAL_FATAL(price(&mc), 0);
    CU_ASSERT_FALSE(mc.s.layout.sp_saves_gathered);
    scenario_free(&mc.s);
}

/* FSDP2 under torchtitan's pipelining keeps each stage gathered for the
 * step (reshard_after_forward False with PP) and accumulates the unsharded
 * gradients in the reduce dtype (fp32) until the last micro-batch: the
 * stage's weights and fp32 gradients are whole on every GPU. Resharded per
 * micro-batch, both are 1/DP. Llama 3.1 405B, TP8 PP8 DP8 on 512 GPUs (the
 * layout of torchtitan's December 2024 run, whose published peak is 82.5
 * GiB; with the stage sharded the model said 33.5). */
static void test_pp_gathered_stage(void)
{
    double bytes[2][2]; /* [resharded, kept][weights, grads] */
    double params = 0;
    for (int kept = 0; kept < 2; kept++) {
        priced_t p;
        CU_ASSERT_EQUAL_FATAL(begin(&p, "llama3.1-405b", "h100-96g", 512, "torchtitan-2024-12"), 0);
        layout_t *l = &p.s.layout;
        set_batch(l, 8, 4, 256, 8192);
        l->pp = 8;
        l->first_stage_layers = l->last_stage_layers = 15;
        l->recompute = RECOMPUTE_FULL;
        l->precision = PRECISION_BF16;
        p.s.opt.zero3.reshard_with_pp = !kept;
        CU_ASSERT_EQUAL_FATAL(price(&p), 0);
        memory_opts_t mo;
        sim_memory_opts(&p.s.profile, &p.s.opt, &mo);
        model_memory_t mm;
        model_memory_stage(&p.s.model, l, 1, &mo, &mm);
        bytes[kept][0] = mm.params_bytes;
        bytes[kept][1] = mm.grads_bytes;
        params = mm.params_count;
        CU_ASSERT_EQUAL(l->dp, 8);
        scenario_free(&p.s);
    }
    CHECK_REL(bytes[0][0], 2 * params / 8, 1e-9);
    CHECK_REL(bytes[1][0], 2 * params, 1e-9);
    /* the sharded bf16 gradients, plus the unsharded fp32 accumulation */
    CHECK_REL(bytes[1][1], 2 * params / 8 + 4 * params, 1e-9);
    CU_ASSERT_TRUE(params > 6e9 && params < 7e9);
}

/* DeepSpeed's ZeRO-3 releases gathered parameters beyond
 * stage3_max_live_parameters (1e9 by default): the 1T model of SC21 (a
 * block of 7.9B parameters) on 1,024 A100s holds 1e9 gathered parameters,
 * where FSDP's two whole blocks would be 15.7B. */
static void test_zero3_live_parameters(void)
{
    double buffers[2];
    const char *fw[2] = {"deepspeed", "fsdp"};
    for (int k = 0; k < 2; k++) {
        priced_t p;
        CU_ASSERT_EQUAL_FATAL(begin(&p, "sc21-gpt-1t", "a100-80g", 1024, fw[k]), 0);
        layout_t *l = &p.s.layout;
        set_batch(l, 1, 8, 8192, 1024);
        l->zero = 3;
        l->recompute = RECOMPUTE_FULL;
        l->precision = PRECISION_BF16;
        CU_ASSERT_EQUAL_FATAL(price(&p), 0);
        memory_opts_t mo;
        sim_memory_opts(&p.s.profile, &p.s.opt, &mo);
        mo.fragmentation = 0; /* compare the gathered working set alone */
        model_memory_t mm;
        model_memory_stage(&p.s.model, l, 0, &mo, &mm);
        buffers[k] = mm.buffers_bytes - mo.reserved_bytes;
        scenario_free(&p.s);
    }
    CHECK_REL(buffers[0], 2 * 1e9, 1e-9);   /* bf16, capped */
    CU_ASSERT_TRUE(buffers[1] > 2 * 2 * 7e9); /* two 7.9B-parameter blocks */
}

/* ---------------------------------------------- framework capabilities */

/* A preset refuses what its framework cannot run, naming the flag and what
 * it runs instead; what it can run passes. */
static void test_framework_capabilities(void)
{
    static const struct {
        const char *fw;
        int tp, pp, cp, zero;
        recompute_t rc;
        precision_t prec;
        const char *flag, *says;
    } cases[] = {
        {"megatron-2021", 1, 1, 2, 0, RECOMPUTE_NONE, PRECISION_BF16, "--cp", "no context"},
        {"megatron-2021", 1, 1, 1, 0, RECOMPUTE_SELECTIVE, PRECISION_BF16, "--recompute",
         "none, full"},
        {"fsdp", 1, 2, 1, 3, RECOMPUTE_NONE, PRECISION_BF16, "--pp", "no pipeline"},
        {"megatron-core", 1, 2, 1, 3, RECOMPUTE_NONE, PRECISION_BF16, "--zero", "pipeline"},
        {"deepspeed", 1, 2, 1, 2, RECOMPUTE_NONE, PRECISION_BF16, "--zero", "pipeline"},
        {"llm-foundry", 2, 1, 1, 3, RECOMPUTE_NONE, PRECISION_BF16, "--tp", "no tensor"},
        {"megatron-2022", 1, 1, 1, 3, RECOMPUTE_NONE, PRECISION_BF16, "--zero", "0, 1"},
        {"torchtitan-2024-12", 1, 1, 1, 3, RECOMPUTE_NONE, PRECISION_FP8_BLOCK, "--precision",
         "fp8-cs"},
        {"megatron-core", 1, 1, 1, 0, RECOMPUTE_OPS, PRECISION_BF16, "--recompute", "selective"},
        {"fsdp", 1, 1, 1, 3, RECOMPUTE_NONE, PRECISION_MXFP8, "--precision", "fp8-cs"},
        {"pytorch-ddp", 1, 1, 1, 0, RECOMPUTE_NONE, PRECISION_FP8_CS, "--precision", "bf16"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        priced_t p;
        CU_ASSERT_EQUAL_FATAL(begin(&p, "llama3-8b", "h100-sxm", 16, cases[i].fw), 0);
        set_batch(&p.s.layout, cases[i].tp, 1, 0, 4096);
        p.s.layout.pp = cases[i].pp;
        p.s.layout.cp = cases[i].cp;
        p.s.layout.zero = cases[i].zero;
        if (cases[i].zero)
            p.s.layout.distributed_optimizer = false;
        p.s.layout.recompute = cases[i].rc;
        p.s.layout.precision = cases[i].prec;
        err_t e;
        int rc = scenario_finish(&p.s, NULL, &e);
        CHECK_ERR(rc, &e, ERR_INPUT, cases[i].flag, cases[i].fw, cases[i].says);
        scenario_free(&p.s);
    }
    /* torchtitan runs FSDP with pipeline stages */
    priced_t ok;
    CU_ASSERT_EQUAL_FATAL(begin(&ok, "llama3-8b", "h100-sxm", 16, "torchtitan-2024-12"), 0);
    set_batch(&ok.s.layout, 2, 1, 0, 4096);
    ok.s.layout.pp = 2;
    CU_ASSERT_EQUAL(price(&ok), 0);
    scenario_free(&ok.s);
    /* PyTorch FSDP2 trains in fp8 through torchao (tensor-wise by default) */
    CU_ASSERT_EQUAL_FATAL(begin(&ok, "llama3-8b", "h100-sxm", 16, "fsdp"), 0);
    set_batch(&ok.s.layout, 1, 1, 0, 4096);
    ok.s.layout.zero = 3;
    ok.s.layout.precision = PRECISION_FP8;
    CU_ASSERT_EQUAL(price(&ok), 0);
    CU_ASSERT_EQUAL(ok.s.layout.precision, PRECISION_FP8_CS);
    scenario_free(&ok.s);
}


/* ------------------------------------------------------ mixture of experts */

static void moe_layout(priced_t *p, int ep, int gb)
{
    layout_t *l = &p->s.layout;
    set_batch(l, 1, 1, gb, 4096);
    l->ep = ep;
    l->etp = 1;
    l->precision = PRECISION_BF16;
    moe_opts_t *m = &p->s.opt.moe;
    m->dispatcher = MOE_DISPATCH_ALLTOALL;
    m->a2a_overlap = m->shared_overlap = false;
    m->grouped_gemm = true;
    m->imbalance = 1;
}

/* Unfused permutes scatter with atomic adds: NeMo 25.02's Megatron-Core
 * unpermutes by scatter_add_ (forward) and its gather's gradient is an
 * index_add_ (backward), one add per routed element each, at the profile's
 * measured rate (84 billion bf16 adds per second on H200, TileOPs #608);
 * fused permutes have none; without a rate they are memory traffic. */
static void test_moe_scatter_adds(void)
{
    priced_t u, f;
    CU_ASSERT_EQUAL_FATAL(begin(&u, "mixtral-8x7b", "h200", 16, "nemo-25.02"), 0);
    moe_layout(&u, 8, 16);
    CU_ASSERT_EQUAL_FATAL(price(&u), 0);
    CU_ASSERT_EQUAL_FATAL(begin(&f, "mixtral-8x7b", "h200", 16, "nemo-25.02"), 0);
    moe_layout(&f, 8, 16);
    f.s.opt.moe.scatter_adds_fwd = f.s.opt.moe.scatter_adds_bwd = 0;
    CU_ASSERT_EQUAL_FATAL(price(&f), 0);
    CHECK_REL(u.s.profile.atomic_add_gops, 84, 1e-12);
    double adds = 4096.0 * 2 * 4096; /* tokens x top-k x hidden */
    double t = u.s.profile.kernel_launch_us * 1e-6 + adds / 84e9;
    double unperm_u = 0, unperm_f = 0, perm_bu = 0, perm_bf = 0;
    for (int i = 0; i < u.c.n_ops; i++) {
        if (strcmp(u.c.ops[i].name, "unpermute") == 0)
            unperm_u = u.c.ops[i].fwd_s, unperm_f = f.c.ops[i].fwd_s;
        if (strcmp(u.c.ops[i].name, "permute") == 0)
            perm_bu = u.c.ops[i].bwd_s, perm_bf = f.c.ops[i].bwd_s;
    }
    CHECK_REL(unperm_u - unperm_f, t, 1e-9);
    CHECK_REL(perm_bu - perm_bf, t, 1e-9);
    /* a profile without the rate prices the adds as 6 bytes of traffic */
    profile_t bare = u.s.profile;
    bare.atomic_add_gops = 0;
    CHECK_REL(prof_atomic_time(&bare, adds), prof_mem_time(&bare, 6 * adds), 1e-12);
    scenario_free(&u.s);
    scenario_free(&f.s);
}

/* Dispatch and combine: two all-to-alls of each token's top-k copies over
 * the EP group each way (forward, backward), exposed when nothing hides
 * them; EP8 on a node stays on NVLink; DeepEP sends fp8 tokens with a
 * scale per 128 values in quantized runs; the allgather dispatcher moves
 * every token of the group. */
static void test_moe_dispatch(void)
{
    priced_t a;
    CU_ASSERT_EQUAL_FATAL(begin(&a, "mixtral-8x7b", "h100-sxm", 16, "megatron-core"), 0);
    moe_layout(&a, 8, 16);
    CU_ASSERT_EQUAL_FATAL(price(&a), 0);
    double h = 4096, k = 2, Tn = 4096, routed = Tn * k * h * 2;
    CU_ASSERT_EQUAL(a.c.ep_span.nodes, 1);
    CU_ASSERT_EQUAL(a.c.ep_span.n_ranks, 8);
    double a2a = prof_coll_time(&a.s.profile, COLL_ALL_TO_ALL, &a.c.ep_span, routed);
    CHECK_REL(a.c.fwd.ep, 2 * a2a, 1e-12); /* no shared experts to hide it */
    CHECK_REL(a.c.bwd.ep, 2 * a2a, 1e-12);
    CHECK_REL(a.c.ep_comm_layer_s, 4 * a2a, 1e-12);
    /* the shared-expert overlap hides nothing without shared experts; the
     * combined 1F1B overlap pairs one micro-batch's forward with another's
     * backward: with one micro-batch a step there is no partner */
    priced_t o;
    CU_ASSERT_EQUAL_FATAL(begin(&o, "mixtral-8x7b", "h100-sxm", 16, "megatron-core"), 0);
    moe_layout(&o, 8, 16);
    o.s.opt.moe.a2a_overlap = true;
    CU_ASSERT_EQUAL_FATAL(price(&o), 0);
    CU_ASSERT_EQUAL(o.s.layout.grad_accum, 1);
    CHECK_REL(o.c.fwd.ep, 2 * a2a, 1e-12);
    /* with 8 micro-batches 7 of 8 passes pair up (the first forward waits);
     * in a pair both passes' exchanges run beside both passes' compute on
     * the SMs NCCL's 32 channels leave of the H100's 132 */
    priced_t p8;
    CU_ASSERT_EQUAL_FATAL(begin(&p8, "mixtral-8x7b", "h100-sxm", 16, "megatron-core"), 0);
    moe_layout(&p8, 8, 128);
    p8.s.opt.moe.a2a_overlap = true;
    CU_ASSERT_EQUAL_FATAL(price(&p8), 0);
    CU_ASSERT_EQUAL(p8.s.layout.grad_accum, 8);
    double C = 0;
    for (int i = 0; i < p8.c.n_ops; i++)
        if (strcmp(p8.c.ops[i].name, "residual_2") != 0)
            C += p8.c.ops[i].fwd_s + p8.c.ops[i].bwd_s;
    double X = 4 * a2a, f = 7.0 / 8;
    double pair = fmax(0, X - C) + fmin(C, X) * 32.0 / p8.s.profile.sm_count;
    CHECK_REL(p8.c.fwd.ep, f * pair / 2 + (1 - f) * 2 * a2a, 1e-9);
    CU_ASSERT_TRUE(p8.c.fwd.ep < o.c.fwd.ep);
    CU_ASSERT_TRUE(p8.c.fwd.ep > (1 - f) * 2 * a2a);
    scenario_free(&p8.s);
    /* DeepSeek-V2-Lite (64 experts) with EP16 over two nodes, fp8 with DeepEP
     * sending fp8 tokens (a framework that does, sim/moe_dispatch.h) */
    priced_t d;
    CU_ASSERT_EQUAL_FATAL(begin(&d, "deepseek-v2-lite", "h100-sxm", 16, "megatron-core"), 0);
    moe_layout(&d, 16, 16);
    d.s.layout.precision = PRECISION_FP8_CS;
    d.s.opt.moe.dispatcher = MOE_DISPATCH_DEEPEP;
    d.s.opt.moe.fp8_dispatch = true;
    CU_ASSERT_EQUAL_FATAL(price(&d), 0);
    CU_ASSERT_EQUAL(d.c.ep_span.nodes, 2);
    /* DeepEP sends a token once per destination node across nodes: of its
     * 6 experts among 64, split 32 per node, it reaches 2 (1 - C(32,6) /
     * C(64,6)) = 1.976 nodes on average, not 6 copies */
    double hd = 2048, nodes = 2 * (1 - 32.0 * 31 * 30 * 29 * 28 * 27 / (64.0 * 63 * 62 * 61 * 60 * 59));
    CHECK_REL(model_moe_destinations(&d.s.model, 2), nodes, 1e-12);
    /* at DeepEP's published EP16 RDMA bandwidth, 43 GB/s each way on the
     * 50 GB/s NICs the H100 cluster has too (sim/moe_dispatch.h) */
    CHECK_REL(d.c.ep_span.nic_gbs_per_gpu, 50, 1e-12);
    double disp = Tn * nodes * hd * (1 + 4.0 / 128) / 43e9;
    double comb = Tn * nodes * hd * 2 / 43e9;
    CHECK_REL(d.c.ep_comm_layer_s, 2 * (disp + comb) * 26.0 / 27, 1e-12); /* 26 of 27 layers MoE */
    /* the same run with the all-to-all dispatcher sends all 6 copies */
    priced_t n;
    CU_ASSERT_EQUAL_FATAL(begin(&n, "deepseek-v2-lite", "h100-sxm", 16, "megatron-core"), 0);
    moe_layout(&n, 16, 16);
    n.s.layout.precision = PRECISION_FP8_CS;
    CU_ASSERT_EQUAL_FATAL(price(&n), 0);
    double disp6 = prof_coll_time(&n.s.profile, COLL_ALL_TO_ALL, &n.c.ep_span, Tn * 6 * hd * 2);
    CHECK_REL(n.c.ep_comm_layer_s, 4 * disp6 * 26.0 / 27, 1e-12);
    scenario_free(&n.s);
    /* a measured scale-out bandwidth (calibrate, nccl-tests import) feeds
     * the dispatch across nodes: half of it, a slower all-to-all */
    double before = d.c.ep_comm_layer_s;
    d.s.profile.net_gpu_gbs = 20;
    err_t pe;
    CU_ASSERT_EQUAL_FATAL(sim_costs(&d.s.input, &d.c, &pe), 0);
    double fast = d.c.ep_comm_layer_s;
    d.s.profile.net_gpu_gbs = 10;
    CU_ASSERT_EQUAL_FATAL(sim_costs(&d.s.input, &d.c, &pe), 0);
    CHECK_REL(d.c.ep_comm_layer_s, 2 * fast, 1e-9); /* DeepEP's figures scale with the NIC */
    CU_ASSERT_TRUE(fast != before);
    /* allgather: every token of the group gathered, the outputs scattered */
    priced_t g;
    CU_ASSERT_EQUAL_FATAL(begin(&g, "mixtral-8x7b", "h100-sxm", 16, "megatron-core"), 0);
    moe_layout(&g, 8, 16);
    g.s.opt.moe.dispatcher = MOE_DISPATCH_ALLGATHER;
    CU_ASSERT_EQUAL_FATAL(price(&g), 0);
    double gathered = Tn * h * 2 * 8;
    CHECK_REL(g.c.fwd.ep,
              prof_coll_time(&g.s.profile, COLL_ALL_GATHER, &g.c.ep_span, gathered) +
                  prof_coll_time(&g.s.profile, COLL_REDUCE_SCATTER, &g.c.ep_span, gathered),
              1e-12);
    scenario_free(&a.s);
    scenario_free(&o.s);
    scenario_free(&d.s);
    scenario_free(&g.s);
}

/* Megatron-Core trains MoE blocks with TP only with sequence parallelism
 * (transformer/moe/moe_layer.py: "During training, performance may degrade
 * if MoE and tensor parallelism are enabled without also enabling sequence
 * parallelism"; model_parallel_config.py refuses EP with TP without it), so
 * under its presets a layout that does not say gets it, said in a note: the
 * experts then run on the rank's 1/TP of the tokens, as with SP asked for.
 * Turned off by name, the layout is refused (issue 36: the step was priced
 * without SP, the experts on every TP rank's whole sequence). A dense
 * model, or a preset without the rule, is left as it is. */
static void test_moe_tp_needs_sp(void)
{
    priced_t imp, sp, dense, ds;
    CU_ASSERT_EQUAL_FATAL(begin(&imp, "mixtral-8x7b", "h100-sxm", 16, "megatron-core"), 0);
    moe_layout(&imp, 8, 8);
    imp.s.layout.tp = 2;
    imp.s.layout.sequence_parallel = false;
    CU_ASSERT_EQUAL_FATAL(price(&imp), 0);
    CU_ASSERT_TRUE(imp.s.layout.sequence_parallel);
    CU_ASSERT_TRUE(notes_has(&imp.s.notes, "--sequence-parallel"));
    CU_ASSERT_EQUAL_FATAL(begin(&sp, "mixtral-8x7b", "h100-sxm", 16, "megatron-core"), 0);
    moe_layout(&sp, 8, 8);
    sp.s.layout.tp = 2;
    sp.s.layout.sequence_parallel = true;
    CU_ASSERT_EQUAL_FATAL(price(&sp), 0);
    CU_ASSERT_FALSE(notes_has(&sp.s.notes, "--sequence-parallel"));
    CHECK_REL(op_fwd(&imp.c, "experts_in"), op_fwd(&sp.c, "experts_in"), 1e-12);
    /* dense under the same preset; MoE under a preset without the rule */
    CU_ASSERT_EQUAL_FATAL(begin(&dense, "llama3-8b", "h100-sxm", 16, "megatron-core"), 0);
    set_batch(&dense.s.layout, 2, 1, 8, 4096);
    dense.s.layout.sequence_parallel = false;
    CU_ASSERT_EQUAL_FATAL(price(&dense), 0);
    CU_ASSERT_FALSE(dense.s.layout.sequence_parallel);
    CU_ASSERT_EQUAL_FATAL(begin(&ds, "mixtral-8x7b", "h100-sxm", 16, "deepspeed"), 0);
    moe_layout(&ds, 8, 8);
    ds.s.layout.tp = 2;
    ds.s.layout.sequence_parallel = false;
    CU_ASSERT_EQUAL_FATAL(price(&ds), 0);
    CU_ASSERT_FALSE(ds.s.layout.sequence_parallel);
    scenario_free(&imp.s);
    scenario_free(&sp.s);
    scenario_free(&dense.s);
    scenario_free(&ds.s);
    /* turned off by name: refused, under Megatron-Core and NeMo alike */
    static const char *const fws[] = {"megatron-core", "nemo-25.04"};
    for (int i = 0; i < 2; i++) {
        char args[300], *out = NULL, *err = NULL;
        snprintf(args, sizeof args,
                 "sim --model mixtral-8x7b --gpu h100-sxm --gpus 16 --tp 2 --ep 8 "
                 "--micro-batch 1 --global-batch 8 --seq-len 4096 --framework %s "
                 "--no-sequence-parallel",
                 fws[i]);
        CU_ASSERT_EQUAL(run_cli(args, &out, &err), 2);
        CU_ASSERT_PTR_NOT_NULL_FATAL(err);
        CU_ASSERT_PTR_NOT_NULL(strstr(err, "--sequence-parallel"));
        CU_ASSERT_PTR_NOT_NULL(strstr(err, "MoE layer refuses TP 2 without it"));
        free(out);
        free(err);
    }
}

/* The local experts as one grouped GEMM (E/EP experts, each on its share
 * of the EP group's tokens) or one GEMM after another; a busy EP rank's
 * extra tokens as imbalance; the routed experts' optimizer state sharded
 * over their own data-parallel group, which sits one rank per node. */
static void test_moe_experts(void)
{
    priced_t a, s, b;
    CU_ASSERT_EQUAL_FATAL(begin(&a, "deepseek-v2-lite", "h100-sxm", 8, "megatron-core"), 0);
    moe_layout(&a, 8, 8);
    CU_ASSERT_EQUAL_FATAL(price(&a), 0);
    double tok = 4096 * 6 * 8 / 64.0, local = 8, fe = 1408, h = 2048;
    CHECK_REL(op_fwd(&a.c, "experts_in"),
              prof_gemm_time(&a.s.profile, DTYPE_BF16, tok, 2 * fe, h, local), 1e-12);
    CHECK_REL(op_fwd(&a.c, "experts_out"),
              prof_gemm_time(&a.s.profile, DTYPE_BF16, tok, h, fe, local), 1e-12);
    CU_ASSERT_EQUAL_FATAL(begin(&s, "deepseek-v2-lite", "h100-sxm", 8, "megatron-core"), 0);
    moe_layout(&s, 8, 8);
    s.s.opt.moe.grouped_gemm = false;
    CU_ASSERT_EQUAL_FATAL(price(&s), 0);
    CHECK_REL(op_fwd(&s.c, "experts_in"),
              local * prof_gemm_time(&s.s.profile, DTYPE_BF16, tok, 2 * fe, h, 1), 1e-12);
    CU_ASSERT_TRUE(op_fwd(&s.c, "experts_in") >= op_fwd(&a.c, "experts_in"));
    CU_ASSERT_EQUAL_FATAL(begin(&b, "deepseek-v2-lite", "h100-sxm", 8, "megatron-core"), 0);
    moe_layout(&b, 8, 8);
    b.s.opt.moe.imbalance = 1.5;
    CU_ASSERT_EQUAL_FATAL(price(&b), 0);
    double gemms = prof_gemm_time(&b.s.profile, DTYPE_BF16, 1.5 * tok, 2 * fe, h, local) +
                   prof_gemm_time(&b.s.profile, DTYPE_BF16, 1.5 * tok, h, fe, local) -
                   op_fwd(&a.c, "experts_in") - op_fwd(&a.c, "experts_out");
    double moe_share = 26.0 / 27; /* the first block is dense */
    CHECK_REL(b.c.fwd.imbalance, moe_share * (gemms + 0.5 * op_fwd(&a.c, "expert_act")), 1e-9);
    /* a capacity factor caps the imbalance (the rest is dropped); padded to
     * capacity, every expert runs cf x the mean and nobody waits */
    priced_t cap, padded;
    CU_ASSERT_EQUAL_FATAL(begin(&cap, "deepseek-v2-lite", "h100-sxm", 8, "megatron-core"), 0);
    moe_layout(&cap, 8, 8);
    cap.s.opt.moe.imbalance = 1.5;
    cap.s.opt.moe.capacity_factor = 1.25;
    CU_ASSERT_EQUAL_FATAL(price(&cap), 0);
    double capped = prof_gemm_time(&cap.s.profile, DTYPE_BF16, 1.25 * tok, 2 * fe, h, local) +
                    prof_gemm_time(&cap.s.profile, DTYPE_BF16, 1.25 * tok, h, fe, local) -
                    op_fwd(&a.c, "experts_in") - op_fwd(&a.c, "experts_out");
    CHECK_REL(cap.c.fwd.imbalance, moe_share * (capped + 0.25 * op_fwd(&a.c, "expert_act")), 1e-9);
    CU_ASSERT_EQUAL_FATAL(begin(&padded, "deepseek-v2-lite", "h100-sxm", 8, "megatron-core"), 0);
    moe_layout(&padded, 8, 8);
    padded.s.opt.moe.imbalance = 1.5;
    padded.s.opt.moe.capacity_factor = 1.25;
    padded.s.opt.moe.pad_to_capacity = true;
    CU_ASSERT_EQUAL_FATAL(price(&padded), 0);
    CU_ASSERT_EQUAL(padded.c.fwd.imbalance, 0);
    CHECK_REL(op_fwd(&padded.c, "experts_in"),
              prof_gemm_time(&padded.s.profile, DTYPE_BF16, 1.25 * tok, 2 * fe, h, local), 1e-12);
    scenario_free(&cap.s);
    scenario_free(&padded.s);
    sim_ctx_t *ctx = sim_ctx_create();
    CU_ASSERT_PTR_NOT_NULL_FATAL(ctx);
    sim_result_t ra, rb;
    err_t e;
    CU_ASSERT_EQUAL_FATAL(sim_run_step(ctx, &a.s.input, &ra, &e), 0);
    CU_ASSERT_EQUAL_FATAL(sim_run_step(ctx, &b.s.input, &rb, &e), 0);
    CU_ASSERT_TRUE(rb.breakdown_s[BD_MOE_IMBALANCE] > 0);
    CU_ASSERT_EQUAL(ra.breakdown_s[BD_MOE_IMBALANCE], 0);
    CU_ASSERT_TRUE(rb.step_time_s > ra.step_time_s);
    sim_ctx_destroy(ctx);
    scenario_free(&a.s);
    scenario_free(&s.s);
    scenario_free(&b.s);
    /* Mixtral EP8 on 64 GPUs: the 8 ranks holding an expert sit one per node */
    priced_t m;
    CU_ASSERT_EQUAL_FATAL(begin(&m, "mixtral-8x7b", "h100-sxm", 64, "megatron-core"), 0);
    moe_layout(&m, 8, 64);
    CU_ASSERT_EQUAL_FATAL(price(&m), 0);
    CU_ASSERT_EQUAL(m.c.edp_span.n_ranks, 8);
    CU_ASSERT_EQUAL(m.c.edp_span.nodes, 8);
    CU_ASSERT_EQUAL(m.c.edp_span.ranks_per_node, 1);
    double dense, experts;
    model_block_params_gpu(&m.s.model, 0, 1, 8, 1, &dense, &experts);
    CHECK_REL(m.c.layer_expert_params, experts, 1e-12);
    CHECK_REL(m.c.layer_params, dense + experts, 1e-12);
    scenario_free(&m.s);
}

/* PyTorch DDP (the pytorch-ddp preset): every rank keeps the model and
 * all-reduces fp32 gradients (4 bytes an element under autocast) in 25 MiB
 * buckets during the backward. Reduced after the backward, the exposed
 * DP time is the whole all-reduce, twice a bf16 reduction's; during the
 * backward most of it hides. */
static void test_ddp_all_reduce(void)
{
    double dp[3];
    for (int k = 0; k < 3; k++) {
        scenario_spec_t spec = {0};
        spec.model = "gpt2-1.5b";
        spec.cluster.gpu = "a100-80g";
        spec.cluster.n_gpus = 16; /* two nodes: the ring crosses the network */
        spec.framework = "pytorch-ddp";
        scenario_t s;
        err_t e;
        CU_ASSERT_EQUAL_FATAL(scenario_begin(&spec, &s, &e), 0);
        CU_ASSERT_EQUAL(s.layout.zero, 0);
        CU_ASSERT_EQUAL(s.layout.grad_bytes, 4);
        set_batch(&s.layout, 1, 8, 128, 1024);
        if (k > 0)
            s.opt.overlap_grad_reduce = false;
        if (k == 2)
            s.opt.reduce_bytes = 2;
        CU_ASSERT_EQUAL_FATAL(scenario_finish(&s, NULL, &e), 0);
        sim_ctx_t *ctx = sim_ctx_create();
        sim_result_t r;
        CU_ASSERT_EQUAL_FATAL(sim_run_step(ctx, &s.input, &r, &e), 0);
        dp[k] = r.breakdown_s[BD_DP_COMM];
        sim_ctx_destroy(ctx);
        scenario_free(&s);
    }
    CU_ASSERT_TRUE(dp[1] > 0);
    CU_ASSERT_TRUE(dp[0] < 0.5 * dp[1]); /* overlapped with the backward */
    CHECK_REL(dp[1], 2 * dp[2], 0.1);     /* fp32 against bf16 on the wire */
}


/* Megatron-LM before Megatron-Core's DDP (the 2021 and 2022 presets: no
 * gradient overlap) all-reduces the gradient buffer once the whole
 * interleaved schedule is done: on every stage each reduction starts after
 * the stage's last backward, not after the last backward of its own chunk
 * (which leaves all but one chunk's reduction hidden behind the others'
 * backwards). GPT-3 175B on 1,024 A100s with TP 8, PP 8 and six chunks a
 * rank, as MegaScale's Megatron-LM baseline ran it; with overlap asked,
 * reductions start during the backward. */
static void test_dp_reduce_after_schedule(void)
{
    double exposed[2];
    for (int k = 0; k < 2; k++) {
        priced_t p;
        CU_ASSERT_EQUAL_FATAL(begin(&p, "gpt3-175b", "a100-80g", 1024, "megatron-2022"), 0);
        set_batch(&p.s.layout, 8, 2, 768, 2048);
        p.s.layout.pp = 8;
        p.s.layout.vpp = 6;
        p.s.layout.schedule = SCHEDULE_INTERLEAVED;
        p.s.layout.recompute = RECOMPUTE_SELECTIVE;
        CU_ASSERT_FALSE(p.s.opt.overlap_grad_reduce);
        if (k == 1)
            p.s.opt.overlap_grad_reduce = true;
        CU_ASSERT_EQUAL_FATAL(price(&p), 0);
        sim_ctx_t *ctx = sim_ctx_create();
        sim_result_t r;
        err_t e;
        CU_ASSERT_EQUAL_FATAL(sim_run_step(ctx, &p.s.input, &r, &e), 0);
        exposed[k] = r.breakdown_s[BD_DP_COMM];
        sim_event_t *ev;
        int n;
        CU_ASSERT_EQUAL_FATAL(sim_timeline(ctx, &ev, &n, &e), 0);
        int early = 0, reductions = 0;
        for (int st = 0; st < 8; st++) {
            int r_st, e_st;
            double secs;
            stage_reductions(ev, n, st, &r_st, &e_st, &secs);
            reductions += r_st;
            early += e_st;
        }
        CU_ASSERT_TRUE(reductions >= 8 * 6);
        if (k == 0) {
            CU_ASSERT_EQUAL(early, 0);
        } else {
            CU_ASSERT_TRUE(early > reductions / 2);
        }
        free(ev);
        sim_ctx_destroy(ctx);
        scenario_free(&p.s);
    }
    CU_ASSERT_TRUE(exposed[0] > 2 * exposed[1]);
}

/* The breakdown of a pipelined step: a stage that finishes its passes early
 * (the last stage of 1F1B) waits for the step-end synchronisation while the
 * first stage drains the pipeline; that wait is bubble, and only the
 * slowest stage's gradient reductions inside it are DP time. MT-NLG's
 * layout (530B, TP 8, PP 35, 240 micro-batches of one sequence on 2,240
 * A100s): the bubble is about (p - 1) / m of the stage's work, as 1F1B
 * has it, not the last stage's warm-up alone (it read 1.6 s of 6, with
 * the other 4.4 s called DP). */
static void test_pipeline_wait_is_bubble(void)
{
    priced_t p;
    CU_ASSERT_EQUAL_FATAL(begin(&p, "sc21-gpt-530b", "a100-80g", 2240, "megatron-deepspeed"), 0);
    set_batch(&p.s.layout, 8, 1, 1920, 2048);
    p.s.layout.sequence_parallel = false;
    p.s.layout.pp = 35;
    p.s.layout.recompute = RECOMPUTE_FULL;
    CU_ASSERT_EQUAL_FATAL(price(&p), 0);
    CU_ASSERT_EQUAL(p.s.layout.grad_accum, 240);
    sim_ctx_t *ctx = sim_ctx_create();
    sim_result_t r;
    err_t e;
    CU_ASSERT_EQUAL_FATAL(sim_run_step(ctx, &p.s.input, &r, &e), 0);
    const double *bd = r.breakdown_s;
    double work = bd[BD_COMPUTE] + bd[BD_RECOMPUTE] + bd[BD_TP_COMM];
    double textbook = 34.0 / 240.0 * work;
    CU_ASSERT_TRUE(bd[BD_PP_BUBBLE] > 0.8 * textbook && bd[BD_PP_BUBBLE] < 1.25 * textbook);
    CU_ASSERT_TRUE(bd[BD_DP_COMM] < 0.25 * bd[BD_PP_BUBBLE]);
    double sum = 0;
    for (int k = 0; k < BD_COUNT; k++)
        sum += bd[k];
    CHECK_REL(sum, r.step_time_s, 1e-9);
    sim_ctx_destroy(ctx);
    scenario_free(&p.s);
}

/* DeepSpeed's BF16_Optimizer (bf16 with ZeRO 0, or 1 with fp32 gradient
 * accumulation: BLOOM's run) has the pipeline engine all-reduce the whole
 * fp32 gradients (_bf16_reduce_grads -> buffered_allreduce_fallback), then
 * updates its shard: under the megatron-deepspeed preset a bf16 ZeRO-1
 * reduction costs an all-reduce, an fp16 one (the ZeRO optimizer, which
 * reduces to the shards' owners) a reduce-scatter, and with the switch off
 * bf16 reduce-scatters too. BLOOM 176B's layout on 384 A100s. */
static void test_bf16_optimizer_all_reduce(void)
{
    double t[3];
    for (int k = 0; k < 3; k++) {
        priced_t p;
        CU_ASSERT_EQUAL_FATAL(begin(&p, "gpt3-175b", "a100-80g", 384, "megatron-deepspeed"), 0);
        set_batch(&p.s.layout, 4, 2, 2048, 2048);
        p.s.layout.sequence_parallel = false;
        p.s.layout.pp = 12;
        p.s.layout.zero = 1;
        p.s.layout.precision = k == 1 ? PRECISION_FP16 : PRECISION_BF16;
        CU_ASSERT_TRUE(p.s.opt.bf16_grad_all_reduce);
        if (k == 2)
            p.s.opt.bf16_grad_all_reduce = false;
        CU_ASSERT_EQUAL_FATAL(price(&p), 0);
        t[k] = sim_grad_reduce_time(&p.s.input, &p.c, 1e9) / p.s.layout.grad_bytes;
        scenario_free(&p.s);
    }
    /* per gradient byte: an all-reduce moves twice a reduce-scatter's */
    CHECK_REL(t[0], 2 * t[1], 0.05);
    CHECK_REL(t[2], t[1], 0.05);
}

/* DeepSpeed's pipeline engine (deepspeed/runtime/pipe): every TP rank sends
 * its whole (replicated) activation to the next stage, not 1/t of it
 * re-gathered over NVLink as Megatron does; the sends block; and the
 * gradients are reduced after the schedule's last backward whatever
 * overlap_comm says. Llama 3 8B on 32 A100s, TP 4, PP 2, DP 4: the preset
 * prices the transfer at the whole tensor, and turning each switch off
 * makes the step faster. */
static void test_deepspeed_pipeline_engine(void)
{
    double step[3], p2p_bytes[3], act = 0;
    for (int k = 0; k < 3; k++) {
        scenario_spec_t spec = {0};
        spec.model = "llama3-8b";
        spec.cluster.gpu = "a100-80g";
        spec.cluster.n_gpus = 32;
        spec.framework = "megatron-deepspeed";
        scenario_t s;
        err_t e;
        CU_ASSERT_EQUAL_FATAL(scenario_begin(&spec, &s, &e), 0);
        CU_ASSERT_TRUE(s.opt.p2p_whole_tensor);
        CU_ASSERT_TRUE(s.opt.grad_reduce_after_pipeline);
        set_batch(&s.layout, 4, 1, 64, 1024);
        s.layout.sequence_parallel = false; /* the engine of 2022 has none */
        s.layout.pp = 2;
        if (k == 1)
            s.opt.p2p_whole_tensor = false;
        if (k == 2) {
            s.opt.grad_reduce_after_pipeline = false;
            s.opt.overlap_grad_reduce = true;
        }
        CU_ASSERT_EQUAL_FATAL(scenario_finish(&s, NULL, &e), 0);
        sim_ctx_t *ctx = sim_ctx_create();
        sim_result_t r;
        CU_ASSERT_EQUAL_FATAL(sim_run_step(ctx, &s.input, &r, &e), 0);
        step[k] = r.step_time_s;
        p2p_bytes[k] = r.costs.p2p_bytes;
        act = 1024.0 * s.model.hidden * layout_weight_bytes(s.layout.precision);
        sim_ctx_destroy(ctx);
        scenario_free(&s);
    }
    /* the deepspeed preset runs the same engine */
    fw_preset_t ds;
    err_t fe;
    CU_ASSERT_EQUAL_FATAL(fw_load("deepspeed", &ds, &fe), 0);
    CU_ASSERT_TRUE(ds.opt.p2p_whole_tensor && ds.opt.grad_reduce_after_pipeline);
    CU_ASSERT_EQUAL(ds.opt.overlap_p2p, 0);
    CHECK_REL(p2p_bytes[0], act, 1e-12);     /* the whole micro-batch activation */
    CHECK_REL(p2p_bytes[1], act / 4, 1e-12); /* Megatron's scatter/gather share */
    CU_ASSERT_TRUE(step[1] < step[0]);
    CU_ASSERT_TRUE(step[2] < step[0]);
}

/* The host's race with the GPU (sim/host.h): a kernel starts once issued
 * and once the one before it ends; after a synchronization the host waits
 * for the GPU to drain. */
static void test_host_race(void)
{
    host_item_t gpu_bound[] = {{2e-3, 1e-4, 1, false}, {3e-3, 1e-4, 1, false}};
    CHECK_REL(host_race_s(gpu_bound, 2), 1e-4 + 5e-3, 1e-12);
    host_item_t host_bound[] = {{1e-5, 1e-3, 10, false}};
    CHECK_REL(host_race_s(host_bound, 1), 1e-3 + 1e-6, 1e-12);
    host_item_t ahead[] = {{5e-3, 1e-5, 1, false}, {1e-5, 1e-3, 1, false}};
    CHECK_REL(host_race_s(ahead, 2), 1e-5 + 5e-3 + 1e-5, 1e-12);
    host_item_t synced[] = {{5e-3, 1e-5, 1, true}, {1e-5, 1e-3, 1, false}};
    CHECK_REL(host_race_s(synced, 2), 1e-5 + 5e-3 + 1e-3 + 1e-5, 1e-12);
    unsigned bits;
    err_t e;
    CU_ASSERT_EQUAL(host_graph_scopes_parse("attn, moe_router moe_preprocess", "f", &bits, &e), 0);
    CU_ASSERT_EQUAL(bits, HOST_GRAPH_ATTN | HOST_GRAPH_MOE_ROUTER | HOST_GRAPH_MOE_PREPROCESS);
    CU_ASSERT_EQUAL(host_graph_scopes_parse("moe_preprocess", "f", &bits, &e), ERR_INPUT);
    CU_ASSERT_EQUAL(host_graph_scopes_parse("attention", "f", &bits, &e), ERR_INPUT);
    CU_ASSERT_PTR_NOT_NULL(strstr(e.msg, "'attention' is not a CUDA graph scope"));
}

/* Fine-grained experts at a small micro-batch (Qwen3-30B-A3B, 1,024 tokens
 * on 8 GB200s, EP 8): the host issues the router, the permutes and every
 * local expert's GEMMs and casts slower than the GPU runs them, and the
 * dropless block's synchronization leaves the GPU waiting. Megatron-LM's
 * DeepSeek-V3 GB200 guide: router fusion, CUDA graphs of the attention,
 * router and preprocess, and a token-drop run (no synchronization) each
 * cut the wait; a large dense layer never waits. */
static void host_moe(priced_t *p, const char *model, void (*set)(priced_t *))
{
    CU_ASSERT_EQUAL_FATAL(begin(p, model, "gb200", 8, "megatron-core"), 0);
    moe_layout(p, 8, 8);
    set_batch(&p->s.layout, 1, 1, 8, 1024);
    p->s.opt.host = (host_opts_t){.op_us = 10, .launch_us = 4, .graph_us = 10};
    if (set)
        set(p);
    CU_ASSERT_EQUAL_FATAL(price(p), 0);
}
static void host_off(priced_t *p) { p->s.opt.host.op_us = 0; }
static void host_graphs(priced_t *p)
{
    p->s.opt.host.graph_scopes = HOST_GRAPH_ATTN | HOST_GRAPH_MOE_ROUTER | HOST_GRAPH_MOE_PREPROCESS;
}
static void host_fused(priced_t *p) { p->s.opt.host.router_fusion = true; }
static void host_drop(priced_t *p) { p->s.opt.moe.capacity_factor = 1; }
static void host_dense(priced_t *p)
{
    p->s.layout.ep = 1;
    set_batch(&p->s.layout, 1, 1, 8, 8192);
}

static void test_host_bound_moe(void)
{
    priced_t a, off, graphs, fused, drop, dense;
    host_moe(&a, "qwen3-30b-a3b", NULL);
    host_moe(&off, "qwen3-30b-a3b", host_off);
    host_moe(&graphs, "qwen3-30b-a3b", host_graphs);
    host_moe(&fused, "qwen3-30b-a3b", host_fused);
    host_moe(&drop, "qwen3-30b-a3b", host_drop);
    host_moe(&dense, "llama3-70b", host_dense);
    CU_ASSERT_TRUE(a.c.fwd.host > 0);
    CU_ASSERT_TRUE(a.c.bwd.host > 0);
    CU_ASSERT_EQUAL(off.c.fwd.host + off.c.bwd.host, 0);
    CU_ASSERT_TRUE(cost_total(&a.c.fwd) > cost_total(&off.c.fwd) + a.c.fwd.host * 0.99);
    CU_ASSERT_TRUE(graphs.c.fwd.host < a.c.fwd.host);
    CU_ASSERT_TRUE(fused.c.fwd.host < a.c.fwd.host);
    CU_ASSERT_TRUE(fused.c.bwd.host < a.c.bwd.host);
    CU_ASSERT_TRUE(drop.c.fwd.host < a.c.fwd.host);
    CU_ASSERT_EQUAL(dense.c.fwd.host + dense.c.bwd.host, 0);
    /* a whole-block graph needs fixed sizes: refused for a dropless run */
    priced_t whole;
    CU_ASSERT_EQUAL_FATAL(begin(&whole, "qwen3-30b-a3b", "gb200", 8, "megatron-core"), 0);
    moe_layout(&whole, 8, 8);
    whole.s.opt.host.graph_scopes = HOST_GRAPH_MOE;
    err_t e;
    CU_ASSERT_EQUAL(scenario_finish(&whole.s, NULL, &e), 0);
    CU_ASSERT_EQUAL(sim_costs(&whole.s.input, &whole.c, &e), ERR_INPUT);
    CU_ASSERT_PTR_NOT_NULL(strstr(e.msg, "--cuda-graph-scope"));
    scenario_free(&a.s), scenario_free(&off.s), scenario_free(&graphs.s);
    scenario_free(&fused.s), scenario_free(&drop.s), scenario_free(&dense.s), scenario_free(&whole.s);
}

/* Sliding-window blocks (gpt-oss: every other block attends to the last
 * 128 tokens): the fused kernel skips key blocks outside the window, so
 * those blocks' attention is w - w^2/2s keys a query instead of s/2; the
 * priced layer averages the two kinds. Without the window, full causal. */
static void test_sliding_window(void)
{
    priced_t win, full;
    CU_ASSERT_EQUAL_FATAL(begin(&win, "gpt-oss-20b", "h100-sxm", 8, "megatron-core"), 0);
    moe_layout(&win, 8, 8);
    set_batch(&win.s.layout, 1, 1, 8, 8192);
    CU_ASSERT_EQUAL_FATAL(price(&win), 0);
    CU_ASSERT_EQUAL_FATAL(begin(&full, "gpt-oss-20b", "h100-sxm", 8, "megatron-core"), 0);
    moe_layout(&full, 8, 8);
    set_batch(&full.s.layout, 1, 1, 8, 8192);
    full.s.model.window = 0;
    CU_ASSERT_EQUAL_FATAL(price(&full), 0);
    const model_t *m = &win.s.model;
    CU_ASSERT_EQUAL_FATAL(m->window, 128);
    double share = (double)m->window_layers / m->n_layers;
    double s = 8192, w = 128, width = m->n_heads * (double)m->head_dim;
    prof_attn_call_t call = {win.s.opt.attn_kernel, true, w, m->head_dim};
    double windowed = prof_attn_time(&win.s.profile, DTYPE_BF16, &call,
                                     4 * s * (w - w * w / (2 * s)) * width, false);
    CHECK_REL(op_fwd(&win.c, "attention"),
              (1 - share) * op_fwd(&full.c, "attention") + share * windowed, 1e-12);
    CU_ASSERT_TRUE(op_fwd(&win.c, "attention") < 0.6 * op_fwd(&full.c, "attention"));
    scenario_free(&win.s), scenario_free(&full.s);
}

/* Dispatchers as frameworks and GPUs offer them: DeepSpeed's MoE has its
 * own all-to-all only; DeepEP runs on NVIDIA GPUs of compute capability
 * 8.0 on joined by NVLink. Asked for where it cannot run: refused naming
 * the flag; a preset's DeepEP default on such a GPU: all-to-all, said. */
static int dispatch_finish(const char *gpu, const char *fw, moe_dispatch_t d, bool given,
                           priced_t *p, err_t *e)
{
    CU_ASSERT_EQUAL_FATAL(begin(p, "mixtral-8x7b", gpu, 16, fw), 0);
    moe_layout(p, 8, 16);
    p->s.opt.moe.dispatcher = d;
    p->s.opt.moe.dispatcher_given = given;
    return scenario_finish(&p->s, NULL, e);
}

static void test_moe_dispatcher_offered(void)
{
    priced_t p;
    err_t e;
    CU_ASSERT_EQUAL(dispatch_finish("h100-sxm", "deepspeed", MOE_DISPATCH_DEEPEP, true, &p, &e),
                    ERR_INPUT);
    CU_ASSERT_PTR_NOT_NULL(strstr(e.msg, "deepspeed does not offer the deepep dispatcher"));
    scenario_free(&p.s);
    CU_ASSERT_EQUAL(dispatch_finish("h100-sxm", "deepspeed", MOE_DISPATCH_ALLTOALL, true, &p, &e),
                    0);
    scenario_free(&p.s);
    CU_ASSERT_EQUAL(dispatch_finish("h100-pcie", "megatron-core", MOE_DISPATCH_DEEPEP, true, &p,
                                    &e),
                    ERR_INPUT);
    CU_ASSERT_PTR_NOT_NULL(strstr(e.msg, "no NVLink"));
    scenario_free(&p.s);
    CU_ASSERT_EQUAL(dispatch_finish("mi300x", "megatron-core", MOE_DISPATCH_DEEPEP, true, &p, &e),
                    ERR_INPUT);
    CU_ASSERT_PTR_NOT_NULL(strstr(e.msg, "not an NVIDIA GPU"));
    scenario_free(&p.s);
    CU_ASSERT_EQUAL(dispatch_finish("mi300x", "megatron-bridge-26.04", MOE_DISPATCH_DEEPEP, false,
                                    &p, &e),
                    0);
    CU_ASSERT_EQUAL(p.s.input.opt.moe.dispatcher, MOE_DISPATCH_ALLTOALL);
    bool said = false;
    for (size_t k = 0; k < p.s.notes.n; k++)
        said = said || strcmp(p.s.notes.items[k].field, "--moe-dispatcher") == 0;
    CU_ASSERT_TRUE(said);
    scenario_free(&p.s);
    CU_ASSERT_EQUAL(dispatch_finish("a100-80g", "megatron-core", MOE_DISPATCH_DEEPEP, true, &p, &e),
                    0);
    scenario_free(&p.s);
}

/* A framework's per-model recipes (options.moe.by_gpu entries naming
 * models): Megatron-Bridge 25.11 runs Qwen3-235B on H100s with its
 * provider's all-to-all dispatcher and the EP overlap (v0.2.0
 * workload_base_configs.py), DeepSeek-V3 with the preset's DeepEP; 26.04
 * captures Qwen3-235B's attention, router and preprocess on GB200 and
 * leaves Qwen3-30B's CUDA graphs (they differ by precision) at none; a
 * model without a recipe takes the GPU's entry. */
static void test_framework_recipes(void)
{
    static const struct {
        const char *fw, *model, *gpu;
        moe_dispatch_t d;
        bool overlap;
        unsigned graphs;
    } want[] = {
        {"megatron-bridge-25.11", "qwen3-235b-a22b", "h100-sxm", MOE_DISPATCH_ALLTOALL, true, 0},
        {"megatron-bridge-25.11", "deepseek-v3", "h100-sxm", MOE_DISPATCH_DEEPEP, true, 0},
        {"megatron-bridge-26.04", "qwen3-235b-a22b", "gb200", MOE_DISPATCH_DEEPEP, false,
         HOST_GRAPH_ATTN | HOST_GRAPH_MOE_ROUTER | HOST_GRAPH_MOE_PREPROCESS},
        {"megatron-bridge-26.04", "qwen3-30b-a3b", "gb200", MOE_DISPATCH_DEEPEP, false, 0},
        {"megatron-bridge-26.04", "mixtral-8x7b", "gb200", MOE_DISPATCH_DEEPEP, false,
         HOST_GRAPH_ATTN | HOST_GRAPH_MOE_ROUTER | HOST_GRAPH_MOE_PREPROCESS},
    };
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        priced_t p;
        CU_ASSERT_EQUAL_FATAL(begin(&p, want[i].model, want[i].gpu, 64, want[i].fw), 0);
        CU_ASSERT_EQUAL(p.s.opt.moe.dispatcher, want[i].d);
        CU_ASSERT_EQUAL(p.s.opt.moe.a2a_overlap, want[i].overlap);
        CU_ASSERT_EQUAL(p.s.opt.host.graph_scopes, want[i].graphs);
        scenario_free(&p.s);
    }
}

TEST_SUITE(suite_mechanisms, "mechanisms", TEST(test_framework_capabilities), TEST(test_published_memory), TEST(test_loss_parallel), TEST(test_compiled_loss), TEST(test_sp_saves_gathered), TEST(test_attention_copies), TEST(test_tp_overlap_by_gemm), TEST(test_tp_overlap_aggregate),
           TEST(test_cross_entropy_traffic), TEST(test_zero3_modes),
           TEST(test_attention_by_sequence), TEST(test_precision_recipes), TEST(test_head_in_bf16),
           TEST(test_fp8_tp_gather), TEST(test_async_tp_reduce_pass),
           TEST(test_eager_and_recompute), TEST(test_recompute_early_stop), TEST(test_pp_gathered_stage), TEST(test_cp_blocks), TEST(test_cp_exchange), TEST(test_kv_repeated_memory), TEST(test_moe_probs_in_activation), TEST(test_recompute_modules), TEST(test_fp8_norm_cast),
           TEST(test_fp8_weight_cache), TEST(test_param_gather_window), TEST(test_moe_dispatch), TEST(test_moe_scatter_adds), TEST(test_moe_experts), TEST(test_moe_tp_needs_sp),
           TEST(test_ddp_all_reduce), TEST(test_dp_reduce_after_schedule), TEST(test_fsdp_pipeline_reduce), TEST(test_pipeline_wait_is_bubble), TEST(test_bf16_optimizer_all_reduce), TEST(test_deepspeed_pipeline_engine),
           TEST(test_zero3_live_parameters), TEST(test_host_race), TEST(test_host_bound_moe), TEST(test_sliding_window), TEST(test_moe_dispatcher_offered), TEST(test_framework_recipes));
