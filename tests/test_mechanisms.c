/* Each framework and hardware mechanism of the cost model, tested by what
 * it changes: turn it on and off (or pick the presets that differ in it)
 * and check the difference against the formula the mechanism states, with
 * the profile's own kernel and collective times. A test here fails if its
 * mechanism is removed. This file holds the layers' costs (TP overlap,
 * cross entropy, ZeRO-3, attention, precision, recompute, context
 * parallelism); test_mechanisms_memory.c memory and the frameworks'
 * choices, test_mechanisms_step.c the step around the layers (MoE,
 * data-parallel reductions, the pipeline, the host), with the helpers of
 * tests/mechanisms.h. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "models/flops.h"
#include "sim/scenario.h"
#include "sim/step.h"
#include "tests/mechanisms.h"
#include "tests/testing.h"

/* Start a scenario for model on gpus x gpu under framework fw (NULL: the
 * default preset). The caller sets layout and options, then mech_price(). */
int mech_begin(priced_t *p, const char *model, const char *gpu, int gpus, const char *fw)
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

int mech_price(priced_t *p)
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
void mech_stage_reductions(const sim_event_t *ev, int n, int stage, int *reductions,
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

double mech_op_fwd(const step_costs_t *c, const char *name) { return op_time(c, name, false); }
double mech_op_bwd(const step_costs_t *c, const char *name) { return op_time(c, name, true); }


void mech_set_batch(layout_t *l, int tp, int mb, int gb, int seq)
{
    l->tp = tp;
    l->micro_batch = mb;
    l->global_batch = gb;
    l->seq_len = seq;
    l->sequence_parallel = tp > 1;
}

/* Llama 3 8B on 8 H100 SXM under framework fw: TP tp, one micro-batch of
 * seq tokens a step, in precision prec, priced (the caller frees). */
void mech_price_8b(priced_t *p, const char *fw, int tp, int seq, precision_t prec)
{
    CU_ASSERT_EQUAL_FATAL(mech_begin(p, "llama3-8b", "h100-sxm", 8, fw), 0);
    mech_set_batch(&p->s.layout, tp, 1, 8 / tp, seq);
    p->s.layout.precision = prec;
    CU_ASSERT_EQUAL_FATAL(mech_price(p), 0);
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
    CU_ASSERT_EQUAL_FATAL(mech_begin(&off, "llama3-70b", "h100-sxm", 64, "nemo-25.02"), 0);
    mech_set_batch(&off.s.layout, 4, 1, 64, 8192);
    off.s.opt.tp_comm_overlap = false;
    CU_ASSERT_EQUAL_FATAL(mech_price(&off), 0);
    CU_ASSERT_EQUAL_FATAL(mech_begin(&nemo, "llama3-70b", "h100-sxm", 64, "nemo-25.02"), 0);
    mech_set_batch(&nemo.s.layout, 4, 1, 64, 8192);
    CU_ASSERT_EQUAL_FATAL(mech_price(&nemo), 0);
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
    CU_ASSERT_EQUAL_FATAL(mech_begin(&ring, "llama3-70b", "h100-sxm", 64, "nemo-25.02"), 0);
    mech_set_batch(&ring.s.layout, 4, 1, 64, 8192);
    ring.s.opt.tp_overlap.n_configs = 0;
    for (int i = 0; i < TPO_COUNT; i++)
        ring.s.opt.tp_overlap.def[i] = (tpo_role_t){TPO_RING, 1, false, false, 4};
    CU_ASSERT_EQUAL_FATAL(mech_price(&ring), 0);
    CU_ASSERT_TRUE(ring.c.fwd.tp < nemo.c.fwd.tp);
    /* a pipelined GEMM with a margin of s SMs out of S runs S/(S - s) as
     * long: raising proj and fc2 forward from 16 to 32 SMs costs more */
    priced_t more;
    CU_ASSERT_EQUAL_FATAL(mech_begin(&more, "llama3-70b", "h100-sxm", 64, "nemo-25.02"), 0);
    mech_set_batch(&more.s.layout, 4, 1, 64, 8192);
    for (int k = 0; k < more.s.opt.tp_overlap.n_configs; k++) {
        more.s.opt.tp_overlap.configs[k].role[TPO_PROJ_FPROP] = (tpo_role_t){TPO_PIPELINE, 48, true, false, 4};
        more.s.opt.tp_overlap.configs[k].role[TPO_FC2_FPROP] = (tpo_role_t){TPO_PIPELINE, 48, true, false, 4};
    }
    CU_ASSERT_EQUAL_FATAL(mech_price(&more), 0);
    CU_ASSERT_TRUE(more.c.fwd.tp > nemo.c.fwd.tp);
    CU_ASSERT_TRUE(fabs(more.c.bwd.tp - nemo.c.bwd.tp) <= 1e-12 * nemo.c.bwd.tp);
    scenario_free(&more.s);
    scenario_free(&ring.s);

    /* NeMo 24.07 overlaps only the models its yamls list (Llama 70B):
     * GPT-3 175B's collectives stay on the critical path */
    priced_t gpt_off, gpt_2407;
    CU_ASSERT_EQUAL_FATAL(mech_begin(&gpt_off, "gpt3-175b", "h100-sxm", 128, "nemo-24.07"), 0);
    mech_set_batch(&gpt_off.s.layout, 4, 1, 64, 2048);
    gpt_off.s.layout.pp = 8;
    gpt_off.s.opt.tp_comm_overlap = false;
    CU_ASSERT_EQUAL_FATAL(mech_price(&gpt_off), 0);
    CU_ASSERT_EQUAL_FATAL(mech_begin(&gpt_2407, "gpt3-175b", "h100-sxm", 128, "nemo-24.07"), 0);
    mech_set_batch(&gpt_2407.s.layout, 4, 1, 64, 2048);
    gpt_2407.s.layout.pp = 8;
    CU_ASSERT_EQUAL_FATAL(mech_price(&gpt_2407), 0);
    CHECK_REL(gpt_2407.c.fwd.tp, gpt_off.c.fwd.tp, 1e-12);
    scenario_free(&gpt_off.s);
    scenario_free(&gpt_2407.s);

    /* Megatron-Bridge 26.04 runs NVFP4 without TP overlap */
    priced_t fp4, fp4_off;
    CU_ASSERT_EQUAL_FATAL(mech_begin(&fp4, "llama3-70b", "gb300", 64, "megatron-bridge-26.04"), 0);
    mech_set_batch(&fp4.s.layout, 4, 1, 64, 8192);
    fp4.s.layout.precision = PRECISION_NVFP4;
    CU_ASSERT_EQUAL_FATAL(mech_price(&fp4), 0);
    CU_ASSERT_EQUAL_FATAL(mech_begin(&fp4_off, "llama3-70b", "gb300", 64, "megatron-bridge-26.04"), 0);
    mech_set_batch(&fp4_off.s.layout, 4, 1, 64, 8192);
    fp4_off.s.layout.precision = PRECISION_NVFP4;
    fp4_off.s.opt.tp_comm_overlap = false;
    CU_ASSERT_EQUAL_FATAL(mech_price(&fp4_off), 0);
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
            CU_ASSERT_EQUAL_FATAL(mech_begin(&p[k], "llama3-70b", "h100-sxm", 64, "nemo-25.02"), 0);
            mech_set_batch(&p[k].s.layout, tp, 1, 64 / tp, 8192);
            p[k].s.opt.tp_overlap.n_configs = 0;
            for (int i = 0; i < TPO_COUNT; i++)
                p[k].s.opt.tp_overlap.def[i] = (tpo_role_t){TPO_RING, 1, false, false, 4};
            const tpo_gemm_t ag[] = {TPO_QKV_FPROP, TPO_FC1_FPROP, TPO_PROJ_DGRAD, TPO_FC2_DGRAD};
            for (size_t i = 0; i < sizeof ag / sizeof ag[0]; i++)
                p[k].s.opt.tp_overlap.def[ag[i]].aggregate = k == 1;
            CU_ASSERT_EQUAL_FATAL(mech_price(&p[k]), 0);
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
    CU_ASSERT_EQUAL_FATAL(mech_begin(&n, "llama3-8b", "h100-sxm", 8, "nemo-25.02"), 0);
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
    CU_ASSERT_EQUAL_FATAL(mech_begin(&mc, "llama3-8b", "h100-sxm", 8, "megatron-core"), 0);
    mech_set_batch(&mc.s.layout, 1, 1, 8, 8192);
    mc.s.layout.distributed_optimizer = true;
    CU_ASSERT_EQUAL_FATAL(mech_price(&mc), 0);
    CU_ASSERT_EQUAL_FATAL(mech_begin(&br, "llama3-8b", "h100-sxm", 8, "megatron-bridge-25.11"), 0);
    mech_set_batch(&br.s.layout, 1, 1, 8, 8192);
    br.s.layout.precision = PRECISION_BF16;
    CU_ASSERT_EQUAL_FATAL(mech_price(&br), 0);
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
    CU_ASSERT_EQUAL_FATAL(mech_begin(&with, "gpt2-124m", "h200", 1, "scaleplan-train"), 0);
    mech_set_batch(&with.s.layout, 1, 8, 8, 1024);
    CU_ASSERT_EQUAL_FATAL(mech_begin(&without, "gpt2-124m", "h200", 1, "scaleplan-train"), 0);
    mech_set_batch(&without.s.layout, 1, 8, 8, 1024);
    without.s.opt.attn_copy_fwd_qkv = without.s.opt.attn_copy_fwd_out = 0;
    without.s.opt.attn_copy_bwd_qkv = without.s.opt.attn_copy_bwd_out = 0;
    CU_ASSERT_FALSE(with.s.layout.flash_attention);
    CHECK_REL(with.s.opt.attn_copy_bwd_qkv, 2, 0);
    CU_ASSERT_EQUAL_FATAL(mech_price(&with), 0);
    CU_ASSERT_EQUAL_FATAL(mech_price(&without), 0);
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
    CU_ASSERT_EQUAL_FATAL(mech_begin(&z, "llama3-8b", "h100-sxm", 64, "fsdp"), 0);
    mech_set_batch(&z.s.layout, 1, 1, 64, 4096);
    CU_ASSERT_EQUAL_FATAL(mech_price(&z), 0);
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
    CU_ASSERT_EQUAL_FATAL(mech_begin(&pp, "llama3-8b", "h100-sxm", 64, "torchtitan-2024-12"), 0);
    mech_set_batch(&pp.s.layout, 1, 1, 64, 4096);
    pp.s.layout.pp = 2;
    CU_ASSERT_EQUAL_FATAL(mech_price(&pp), 0);
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
        CU_ASSERT_EQUAL_FATAL(mech_begin(&p, "llama3-8b", "h100-sxm", 64, "torchtitan-2025-12"), 0);
        mech_set_batch(&p.s.layout, 1, 1, 512, 4096);
        p.s.layout.pp = 2;
        p.s.layout.zero = zero;
        CU_ASSERT_FALSE(p.s.opt.zero3.reshard_with_pp);
        CU_ASSERT_EQUAL_FATAL(mech_price(&p), 0);
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
            mech_stage_reductions(ev, n, st, &reductions, &early, &reduced);
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
    CU_ASSERT_EQUAL_FATAL(mech_begin(&a, "llama3-8b", "h100-sxm", 8, NULL), 0);
    mech_set_batch(&a.s.layout, 1, 4, 32, 8192);
    CU_ASSERT_EQUAL_FATAL(mech_price(&a), 0);
    CU_ASSERT_EQUAL_FATAL(mech_begin(&b, "llama3-8b", "h100-sxm", 8, NULL), 0);
    mech_set_batch(&b.s.layout, 1, 1, 8, 32768);
    CU_ASSERT_EQUAL_FATAL(mech_price(&b), 0);
    CU_ASSERT_TRUE(mech_op_fwd(&b.c, "attention") > 3.5 * mech_op_fwd(&a.c, "attention"));
    CU_ASSERT_TRUE(mech_op_fwd(&b.c, "attention") < 4.0 * mech_op_fwd(&a.c, "attention"));
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
    CU_ASSERT_EQUAL_FATAL(mech_begin(&dl, "llama3-8b", "h100-sxm", 8, fw), 0);
    mech_set_batch(&dl.s.layout, 1, 1, 8, 4096);
    dl.s.layout.precision = PRECISION_FP8;
    CU_ASSERT_EQUAL_FATAL(mech_price(&dl), 0);
    CU_ASSERT_EQUAL_FATAL(mech_begin(&cs, "llama3-8b", "h100-sxm", 8, fw), 0);
    mech_set_batch(&cs.s.layout, 1, 1, 8, 4096);
    cs.s.layout.precision = PRECISION_FP8_CS;
    CU_ASSERT_EQUAL_FATAL(mech_price(&cs), 0);
    CU_ASSERT_EQUAL_FATAL(mech_begin(&bf16, "llama3-8b", "h100-sxm", 8, fw), 0);
    mech_set_batch(&bf16.s.layout, 1, 1, 8, 4096);
    CU_ASSERT_EQUAL_FATAL(mech_price(&bf16), 0);
    /* the qkv GEMM's input is cast once more (read 2 bytes per element) */
    double x = 4096.0 * dl.s.model.hidden;
    double extra = (cs.s.opt.prec.cast_input - dl.s.opt.prec.cast_input) * x;
    CU_ASSERT_TRUE(extra > 0);
    CU_ASSERT_TRUE(mech_op_fwd(&cs.c, "qkv") > mech_op_fwd(&dl.c, "qkv"));
    CU_ASSERT_TRUE(mech_op_fwd(&dl.c, "mlp_in") < 0.7 * mech_op_fwd(&bf16.c, "mlp_in"));
    scenario_free(&dl.s);
    scenario_free(&cs.s);
    scenario_free(&bf16.s);

    /* torchao rowwise: both axes cast (10 bytes an element against the
     * tensor-wise 6), and the gradient GEMMs' outputs rescaled after the
     * GEMM (4 bytes an element of each output) */
    priced_t tw, rw;
    mech_price_8b(&tw, "torchtitan-2025-06", 1, 4096, PRECISION_FP8_CS);
    mech_price_8b(&rw, "torchtitan-2025-06", 1, 4096, PRECISION_FP8_ROWWISE);
    CU_ASSERT_EQUAL(rw.s.opt.prec.cast_input, 10);
    CU_ASSERT_EQUAL(rw.s.opt.prec.rescale_grad_out, 4);
    CU_ASSERT_EQUAL(tw.s.opt.prec.rescale_grad_out, 0);
    const profile_t *pp = &rw.s.profile;
    double h = rw.s.model.hidden, f = rw.s.model.ffn;
    /* mlp_out: Y[T x h] = X[T x f] W[f x h]: the forward casts X, the
     * backward casts dY and rescales dX[T x f] and dW[f x h] */
    double d_fwd = mech_op_fwd(&rw.c, "mlp_out") - mech_op_fwd(&tw.c, "mlp_out");
    CHECK_REL(d_fwd, prof_mem_time(pp, 10 * 4096 * f + 10 * f * h) -
                         prof_mem_time(pp, 6 * 4096 * f + 6 * f * h), 1e-9);
    double d_bwd = mech_op_bwd(&rw.c, "mlp_out") - mech_op_bwd(&tw.c, "mlp_out");
    CHECK_REL(d_bwd, prof_mem_time(pp, 10 * 4096 * h + 4 * 4096 * f) +
                         prof_mem_time(pp, 4 * f * h) - prof_mem_time(pp, 6 * 4096 * h), 1e-9);
    scenario_free(&tw.s);
    scenario_free(&rw.s);

    priced_t fp4;
    CU_ASSERT_EQUAL_FATAL(mech_begin(&fp4, "llama3-8b", "h100-sxm", 8, NULL), 0);
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
    CU_ASSERT_EQUAL_FATAL(mech_begin(&f8, "llama3-8b", "h100-sxm", 8, "megatron-core"), 0);
    mech_set_batch(&f8.s.layout, 1, 1, 8, 4096);
    f8.s.layout.precision = PRECISION_FP8;
    CU_ASSERT_EQUAL_FATAL(mech_price(&f8), 0);
    CU_ASSERT_EQUAL_FATAL(mech_begin(&bf, "llama3-8b", "h100-sxm", 8, "megatron-core"), 0);
    mech_set_batch(&bf.s.layout, 1, 1, 8, 4096);
    CU_ASSERT_EQUAL_FATAL(mech_price(&bf), 0);
    CHECK_REL(f8.c.head_fwd.compute, bf.c.head_fwd.compute, 1e-12);
    CHECK_REL(f8.c.head_bwd.compute, bf.c.head_bwd.compute, 1e-12);
    /* the logits GEMM is most of the head: at the fp8 rate it would be far less */
    const profile_t *p = &bf.s.profile;
    double logits = prof_gemm_time(p, DTYPE_BF16, 4096, bf.s.model.vocab, bf.s.model.hidden, 1);
    CU_ASSERT_TRUE(bf.c.head_fwd.compute > logits);
    CU_ASSERT_TRUE(prof_gemm_time(p, DTYPE_FP8, 4096, bf.s.model.vocab, bf.s.model.hidden, 1) <
                   0.7 * logits);
    CU_ASSERT_TRUE(mech_op_fwd(&f8.c, "mlp_in") < 0.7 * mech_op_fwd(&bf.c, "mlp_in"));
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
    CU_ASSERT_EQUAL_FATAL(mech_begin(&on, "llama3-70b", "h100-sxm", 8, "megatron-core"), 0);
    mech_set_batch(&on.s.layout, 8, 1, 8, 4096);
    on.s.layout.precision = PRECISION_FP8_CS;
    on.s.opt.tp_comm_overlap = false;
    CU_ASSERT_TRUE(on.s.opt.fp8_tp_gather);
    CU_ASSERT_EQUAL_FATAL(mech_price(&on), 0);
    CU_ASSERT_EQUAL_FATAL(mech_begin(&off, "llama3-70b", "h100-sxm", 8, "megatron-core"), 0);
    mech_set_batch(&off.s.layout, 8, 1, 8, 4096);
    off.s.layout.precision = PRECISION_FP8_CS;
    off.s.opt.tp_comm_overlap = false;
    off.s.opt.fp8_tp_gather = false;
    CU_ASSERT_EQUAL_FATAL(mech_price(&off), 0);
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
    CHECK_REL(mech_op_fwd(&off.c, "qkv") - mech_op_fwd(&on.c, "qkv"), whole - sharded, 1e-9);
    double g = on.s.opt.prec.cast_grad;
    CHECK_REL(mech_op_bwd(&off.c, "attn_out") - mech_op_bwd(&on.c, "attn_out"),
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
    mech_price_8b(&fused, "megatron-core", 1, 8192, PRECISION_FP8);
    CU_ASSERT_TRUE(fused.s.opt.fp8_norm_cast);
    CU_ASSERT_EQUAL_FATAL(mech_begin(&split, "llama3-8b", "h100-sxm", 8, "megatron-core"), 0);
    mech_set_batch(&split.s.layout, 1, 1, 8, 8192);
    split.s.layout.precision = PRECISION_FP8;
    split.s.opt.fp8_norm_cast = false;
    CU_ASSERT_EQUAL_FATAL(mech_price(&split), 0);
    const profile_t *p = &fused.s.profile;
    double h = fused.s.model.hidden, el = 8192.0 * h;
    CHECK_REL(mech_op_fwd(&split.c, "qkv") - mech_op_fwd(&fused.c, "qkv"),
              prof_mem_time(p, 4 * el) - prof_mem_time(p, 2 * el), 1e-9);
    CHECK_REL(mech_op_fwd(&split.c, "mlp_in") - mech_op_fwd(&fused.c, "mlp_in"),
              prof_mem_time(p, 4 * el) - prof_mem_time(p, 2 * el), 1e-9);
    CHECK_REL(mech_op_fwd(&split.c, "attn_out"), mech_op_fwd(&fused.c, "attn_out"), 1e-12);
    mech_price_8b(&cs, "megatron-core", 1, 8192, PRECISION_FP8_CS);
    CU_ASSERT_TRUE(mech_op_fwd(&cs.c, "qkv") > mech_op_fwd(&split.c, "qkv"));
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
    CU_ASSERT_EQUAL_FATAL(mech_begin(&r, "llama3-8b", "h100-sxm", 8, "torchtitan-2025-06"), 0);
    mech_set_batch(&r.s.layout, 8, 1, 1, 8192);
    r.s.layout.precision = prec;
    r.s.opt.tp_comm_overlap = true;
    CU_ASSERT_TRUE(r.s.opt.tp_overlap.reduce_pass && r.s.opt.tp_overlap.rowwise_gather_unfused);
    r.s.opt.tp_overlap.reduce_pass = reduce_pass;
    r.s.opt.tp_overlap.rowwise_gather_unfused = unfused;
    CU_ASSERT_EQUAL_FATAL(mech_price(&r), 0);
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
    CU_ASSERT_EQUAL_FATAL(mech_begin(&eager, "llama3-8b", "h100-sxm", 8, "torchtitan-2025-06"), 0);
    mech_set_batch(&eager.s.layout, 1, 1, 8, 8192);
    CU_ASSERT_EQUAL_FATAL(mech_price(&eager), 0);
    CU_ASSERT_EQUAL_FATAL(mech_begin(&compiled, "llama3-8b", "h100-sxm", 8, "torchtitan-2025-06"), 0);
    mech_set_batch(&compiled.s.layout, 1, 1, 8, 8192);
    sim_options_compiled(&compiled.s.opt);
    CU_ASSERT_EQUAL_FATAL(mech_price(&compiled), 0);
    const profile_t *p = &eager.s.profile;
    double bytes = 2 * 8192.0 * eager.s.model.hidden * 2; /* read and write, bf16 */
    CHECK_REL(mech_op_fwd(&eager.c, "norm_1"), prof_mem_time(p, 9 * bytes), 1e-9);
    CHECK_REL(mech_op_fwd(&compiled.c, "norm_1"), prof_mem_time(p, bytes), 1e-9);
    scenario_free(&eager.s);
    scenario_free(&compiled.s);

    /* the pricing of each mode (whichever framework runs it) */
    double rec[3];
    const recompute_t modes[3] = {RECOMPUTE_SELECTIVE, RECOMPUTE_OPS, RECOMPUTE_FULL};
    priced_t r;
    CU_ASSERT_EQUAL_FATAL(mech_begin(&r, "llama3-8b", "h100-sxm", 8, "torchtitan-2025-06"), 0);
    mech_set_batch(&r.s.layout, 1, 1, 8, 8192);
    CU_ASSERT_EQUAL_FATAL(mech_price(&r), 0);
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
            CHECK_REL(rec[i], c.fwd.compute - mech_op_fwd(&c, "mlp_out") - mech_op_fwd(&c, "residual_2"),
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
            CU_ASSERT_EQUAL_FATAL(mech_begin(&r, "llama3-8b", "h100-sxm", 8, fw[k]), 0);
            mech_set_batch(&r.s.layout, 2, 1, 8, 8192);
            r.s.layout.recompute = full ? RECOMPUTE_FULL : RECOMPUTE_NONE;
            r.s.opt.tp_comm_overlap = false;
            CU_ASSERT_EQUAL_FATAL(mech_price(&r), 0);
            c[k][full] = r.c;
            if (k == 1)
                rs = prof_coll_time(&r.s.profile, COLL_REDUCE_SCATTER, &r.c.tp_span,
                                    8192.0 * r.s.model.hidden * 2);
            scenario_free(&r.s);
        }
    const step_costs_t *mc = &c[0][1], *tt = &c[1][1];
    CHECK_REL(mc->bwd.recompute, mc->fwd.compute, 1e-12);
    double skipped = mech_op_fwd(tt, "mlp_out") + mech_op_fwd(tt, "residual_2");
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
    CU_ASSERT_EQUAL_FATAL(mech_begin(p, "llama3-8b", gpu, gpus, fw), 0);
    mech_set_batch(&p->s.layout, 1, 1, gpus / cp, seq);
    p->s.layout.cp = cp;
    CU_ASSERT_EQUAL_FATAL(mech_price(p), 0);
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
    CHECK_REL(mech_op_fwd(&r.c, "attention"), f0 + (cp - 1) * (kv ? f_kv : f_q), 1e-12);
    CHECK_REL(mech_op_bwd(&r.c, "attention"), b0 + (cp - 1) * (kv ? b_kv : b_q), 1e-12);
    CU_ASSERT_TRUE(mech_op_fwd(&r.c, "attention") < cp * f0);
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
    CHECK_REL(mech_op_fwd(&ring.c, "cp_merge"), prof_mem_time(p, 6 * T * qw), 1e-12);
    CHECK_REL(mech_op_bwd(&ring.c, "cp_merge"), prof_mem_time(p, 6 * T * (qw + 2 * kvw)), 1e-12);

    price_cp_8b(&ag, "h100-96g", 8, "torchtitan-2024-12", 2, 65536);
    CU_ASSERT_TRUE(ag.s.opt.kv_repeated);
    p = &ag.s.profile;
    double dkv = prof_coll_time(p, COLL_SEND_RECV, &ag.c.cp_pair_span, 2 * T * qw * 4);
    CHECK_REL(ag.c.fwd.cp, 0, 1e-12);
    CHECK_REL(ag.c.bwd.cp, dkv, 1e-12);
    CHECK_REL(mech_op_fwd(&ag.c, "cp_merge"), prof_mem_time(p, 10 * 4.2 * T * qw), 1e-12);
    CHECK_REL(mech_op_bwd(&ag.c, "cp_merge"), prof_mem_time(p, 10 * T * 3 * qw), 1e-12);
    sim_options_compiled(&ag.s.opt);
    CU_ASSERT_EQUAL_FATAL(mech_price(&ag), 0);
    CHECK_REL(mech_op_fwd(&ag.c, "cp_merge"), prof_mem_time(p, 10 * T * qw), 1e-12);

    price_cp_8b(&grouped, "h100-96g", 8, "torchtitan-2024-12", 2, 65536);
    grouped.s.opt.kv_repeated = false;
    CU_ASSERT_EQUAL_FATAL(mech_price(&grouped), 0);
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
    CU_ASSERT_EQUAL_FATAL(mech_begin(&p, "llama3-8b", "h100-96g", 8, "torchtitan-2024-12"), 0);
    mech_set_batch(&p.s.layout, 1, 1, 8, 8192);
    p.s.layout.recompute = RECOMPUTE_NONE;
    CU_ASSERT_EQUAL_FATAL(mech_price(&p), 0);
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
    CU_ASSERT_EQUAL_FATAL(mech_begin(&p, "mixtral-8x7b", "h100-sxm", 8, "megatron-core"), 0);
    mech_moe_layout(&p, 8, 8);
    p.s.layout.recompute = RECOMPUTE_NONE;
    CU_ASSERT_EQUAL_FATAL(mech_price(&p), 0);
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
        CU_ASSERT_EQUAL_FATAL(mech_begin(&p, "mixtral-8x7b", "h100-sxm", 8, older[i]), 0);
        CU_ASSERT_FALSE(p.s.opt.moe.probs_in_act);
        scenario_free(&p.s);
    }
    for (int i = 0; i < 3; i++) {
        CU_ASSERT_EQUAL_FATAL(mech_begin(&p, "mixtral-8x7b", "h100-sxm", 8, newer[i]), 0);
        CU_ASSERT_TRUE(p.s.opt.moe.probs_in_act);
        scenario_free(&p.s);
    }
}

/* Llama 3 8B at TP 2 with SP or Mixtral 8x7B at EP 8 on 8 H100s under
 * Megatron-Core, selective recompute of the given modules (0: the default),
 * priced, with the stage's memory under the preset's options. */
static void price_rc_modules(priced_t *p, bool moe, unsigned modules, model_memory_t *mm)
{
    CU_ASSERT_EQUAL_FATAL(mech_begin(p, moe ? "mixtral-8x7b" : "llama3-8b", "h100-sxm", 8,
                                "megatron-core"),
                          0);
    if (moe)
        mech_moe_layout(p, 8, 8);
    else
        mech_set_batch(&p->s.layout, 2, 1, 4, 4096);
    p->s.layout.recompute = RECOMPUTE_SELECTIVE;
    p->s.layout.recompute_modules = modules;
    CU_ASSERT_EQUAL_FATAL(mech_price(p), 0);
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
    double mlp_f = mech_op_fwd(&d0.c, "mlp_in") + mech_op_fwd(&d0.c, "swiglu") + mech_op_fwd(&d0.c, "mlp_out");
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
    double attn = mech_op_fwd(&e0.c, "attention");
    CHECK_REL(e0.c.bwd.recompute, attn, 1e-12);
    CHECK_REL(act.c.bwd.recompute, mech_op_fwd(&e0.c, "expert_act"), 1e-9);
    CHECK_REL(eln.c.bwd.recompute, mech_op_fwd(&e0.c, "norm_2"), 1e-9);
    double block = mech_op_fwd(&e0.c, "router") + mech_op_fwd(&e0.c, "permute") +
                   mech_op_fwd(&e0.c, "experts_in") + mech_op_fwd(&e0.c, "expert_act") +
                   mech_op_fwd(&e0.c, "experts_out") + mech_op_fwd(&e0.c, "unpermute");
    CHECK_REL(whole.c.bwd.recompute, block + e0.c.fwd.imbalance, 1e-9);
    CHECK_REL(whole.c.bwd.ep - e0.c.bwd.ep, e0.c.fwd.ep, 1e-9);
    CU_ASSERT_TRUE(me_act.activations_bytes < me0.activations_bytes);
    CU_ASSERT_TRUE(me_whole.activations_bytes < me_act.activations_bytes);
    CU_ASSERT_TRUE(me_ln.activations_bytes < me0.activations_bytes);
    priced_t *all[] = {&d0, &mlp, &ln, &e0, &act, &whole, &eln};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        scenario_free(&all[i]->s);
}

TEST_SUITE(suite_mechanisms, "mechanisms", TEST(test_attention_copies), TEST(test_tp_overlap_by_gemm), TEST(test_tp_overlap_aggregate),
           TEST(test_cross_entropy_traffic), TEST(test_zero3_modes),
           TEST(test_attention_by_sequence), TEST(test_precision_recipes), TEST(test_head_in_bf16),
           TEST(test_fp8_tp_gather), TEST(test_async_tp_reduce_pass),
           TEST(test_eager_and_recompute), TEST(test_recompute_early_stop), TEST(test_cp_blocks), TEST(test_cp_exchange), TEST(test_kv_repeated_memory), TEST(test_moe_probs_in_activation), TEST(test_recompute_modules), TEST(test_fp8_norm_cast), TEST(test_fsdp_pipeline_reduce));
