/* The step around the layers, mechanism by mechanism (as
 * tests/test_mechanisms.c tests the layers' own): mixture-of-experts
 * blocks (scatter-adds, dispatch, experts, TP with SP), data-parallel
 * reductions and where the pipeline schedule puts them, the pipeline's
 * waits, DeepSpeed's pipeline engine, the host thread issuing kernels,
 * sliding-window attention, the dispatchers a framework offers and its
 * per-model recipes. A test here fails if its mechanism is removed. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "models/flops.h"
#include "sim/scenario.h"
#include "sim/step.h"
#include "tests/mechanisms.h"
#include "tests/testing.h"

/* ------------------------------------------------------ mixture of experts */

void mech_moe_layout(priced_t *p, int ep, int gb)
{
    layout_t *l = &p->s.layout;
    mech_set_batch(l, 1, 1, gb, 4096);
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
    CU_ASSERT_EQUAL_FATAL(mech_begin(&u, "mixtral-8x7b", "h200", 16, "nemo-25.02"), 0);
    mech_moe_layout(&u, 8, 16);
    CU_ASSERT_EQUAL_FATAL(mech_price(&u), 0);
    CU_ASSERT_EQUAL_FATAL(mech_begin(&f, "mixtral-8x7b", "h200", 16, "nemo-25.02"), 0);
    mech_moe_layout(&f, 8, 16);
    f.s.opt.moe.scatter_adds_fwd = f.s.opt.moe.scatter_adds_bwd = 0;
    CU_ASSERT_EQUAL_FATAL(mech_price(&f), 0);
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
    CU_ASSERT_EQUAL_FATAL(mech_begin(&a, "mixtral-8x7b", "h100-sxm", 16, "megatron-core"), 0);
    mech_moe_layout(&a, 8, 16);
    CU_ASSERT_EQUAL_FATAL(mech_price(&a), 0);
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
    CU_ASSERT_EQUAL_FATAL(mech_begin(&o, "mixtral-8x7b", "h100-sxm", 16, "megatron-core"), 0);
    mech_moe_layout(&o, 8, 16);
    o.s.opt.moe.a2a_overlap = true;
    CU_ASSERT_EQUAL_FATAL(mech_price(&o), 0);
    CU_ASSERT_EQUAL(o.s.layout.grad_accum, 1);
    CHECK_REL(o.c.fwd.ep, 2 * a2a, 1e-12);
    /* with 8 micro-batches 7 of 8 passes pair up (the first forward waits);
     * in a pair both passes' exchanges run beside both passes' compute on
     * the SMs NCCL's 32 channels leave of the H100's 132 */
    priced_t p8;
    CU_ASSERT_EQUAL_FATAL(mech_begin(&p8, "mixtral-8x7b", "h100-sxm", 16, "megatron-core"), 0);
    mech_moe_layout(&p8, 8, 128);
    p8.s.opt.moe.a2a_overlap = true;
    CU_ASSERT_EQUAL_FATAL(mech_price(&p8), 0);
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
    CU_ASSERT_EQUAL_FATAL(mech_begin(&d, "deepseek-v2-lite", "h100-sxm", 16, "megatron-core"), 0);
    mech_moe_layout(&d, 16, 16);
    d.s.layout.precision = PRECISION_FP8_CS;
    d.s.opt.moe.dispatcher = MOE_DISPATCH_DEEPEP;
    d.s.opt.moe.fp8_dispatch = true;
    CU_ASSERT_EQUAL_FATAL(mech_price(&d), 0);
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
    CU_ASSERT_EQUAL_FATAL(mech_begin(&n, "deepseek-v2-lite", "h100-sxm", 16, "megatron-core"), 0);
    mech_moe_layout(&n, 16, 16);
    n.s.layout.precision = PRECISION_FP8_CS;
    CU_ASSERT_EQUAL_FATAL(mech_price(&n), 0);
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
    CU_ASSERT_EQUAL_FATAL(mech_begin(&g, "mixtral-8x7b", "h100-sxm", 16, "megatron-core"), 0);
    mech_moe_layout(&g, 8, 16);
    g.s.opt.moe.dispatcher = MOE_DISPATCH_ALLGATHER;
    CU_ASSERT_EQUAL_FATAL(mech_price(&g), 0);
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
    CU_ASSERT_EQUAL_FATAL(mech_begin(&imp, "mixtral-8x7b", "h100-sxm", 16, "megatron-core"), 0);
    mech_moe_layout(&imp, 8, 8);
    imp.s.layout.tp = 2;
    imp.s.layout.sequence_parallel = false;
    CU_ASSERT_EQUAL_FATAL(mech_price(&imp), 0);
    CU_ASSERT_TRUE(imp.s.layout.sequence_parallel);
    CU_ASSERT_TRUE(notes_has(&imp.s.notes, "--sequence-parallel"));
    CU_ASSERT_EQUAL_FATAL(mech_begin(&sp, "mixtral-8x7b", "h100-sxm", 16, "megatron-core"), 0);
    mech_moe_layout(&sp, 8, 8);
    sp.s.layout.tp = 2;
    sp.s.layout.sequence_parallel = true;
    CU_ASSERT_EQUAL_FATAL(mech_price(&sp), 0);
    CU_ASSERT_FALSE(notes_has(&sp.s.notes, "--sequence-parallel"));
    CHECK_REL(mech_op_fwd(&imp.c, "experts_in"), mech_op_fwd(&sp.c, "experts_in"), 1e-12);
    /* dense under the same preset; MoE under a preset without the rule */
    CU_ASSERT_EQUAL_FATAL(mech_begin(&dense, "llama3-8b", "h100-sxm", 16, "megatron-core"), 0);
    mech_set_batch(&dense.s.layout, 2, 1, 8, 4096);
    dense.s.layout.sequence_parallel = false;
    CU_ASSERT_EQUAL_FATAL(mech_price(&dense), 0);
    CU_ASSERT_FALSE(dense.s.layout.sequence_parallel);
    CU_ASSERT_EQUAL_FATAL(mech_begin(&ds, "mixtral-8x7b", "h100-sxm", 16, "deepspeed"), 0);
    mech_moe_layout(&ds, 8, 8);
    ds.s.layout.tp = 2;
    ds.s.layout.sequence_parallel = false;
    CU_ASSERT_EQUAL_FATAL(mech_price(&ds), 0);
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
    CU_ASSERT_EQUAL_FATAL(mech_begin(&a, "deepseek-v2-lite", "h100-sxm", 8, "megatron-core"), 0);
    mech_moe_layout(&a, 8, 8);
    CU_ASSERT_EQUAL_FATAL(mech_price(&a), 0);
    double tok = 4096 * 6 * 8 / 64.0, local = 8, fe = 1408, h = 2048;
    CHECK_REL(mech_op_fwd(&a.c, "experts_in"),
              prof_gemm_time(&a.s.profile, DTYPE_BF16, tok, 2 * fe, h, local), 1e-12);
    CHECK_REL(mech_op_fwd(&a.c, "experts_out"),
              prof_gemm_time(&a.s.profile, DTYPE_BF16, tok, h, fe, local), 1e-12);
    CU_ASSERT_EQUAL_FATAL(mech_begin(&s, "deepseek-v2-lite", "h100-sxm", 8, "megatron-core"), 0);
    mech_moe_layout(&s, 8, 8);
    s.s.opt.moe.grouped_gemm = false;
    CU_ASSERT_EQUAL_FATAL(mech_price(&s), 0);
    CHECK_REL(mech_op_fwd(&s.c, "experts_in"),
              local * prof_gemm_time(&s.s.profile, DTYPE_BF16, tok, 2 * fe, h, 1), 1e-12);
    CU_ASSERT_TRUE(mech_op_fwd(&s.c, "experts_in") >= mech_op_fwd(&a.c, "experts_in"));
    CU_ASSERT_EQUAL_FATAL(mech_begin(&b, "deepseek-v2-lite", "h100-sxm", 8, "megatron-core"), 0);
    mech_moe_layout(&b, 8, 8);
    b.s.opt.moe.imbalance = 1.5;
    CU_ASSERT_EQUAL_FATAL(mech_price(&b), 0);
    double gemms = prof_gemm_time(&b.s.profile, DTYPE_BF16, 1.5 * tok, 2 * fe, h, local) +
                   prof_gemm_time(&b.s.profile, DTYPE_BF16, 1.5 * tok, h, fe, local) -
                   mech_op_fwd(&a.c, "experts_in") - mech_op_fwd(&a.c, "experts_out");
    double moe_share = 26.0 / 27; /* the first block is dense */
    CHECK_REL(b.c.fwd.imbalance, moe_share * (gemms + 0.5 * mech_op_fwd(&a.c, "expert_act")), 1e-9);
    /* a capacity factor caps the imbalance (the rest is dropped); padded to
     * capacity, every expert runs cf x the mean and nobody waits */
    priced_t cap, padded;
    CU_ASSERT_EQUAL_FATAL(mech_begin(&cap, "deepseek-v2-lite", "h100-sxm", 8, "megatron-core"), 0);
    mech_moe_layout(&cap, 8, 8);
    cap.s.opt.moe.imbalance = 1.5;
    cap.s.opt.moe.capacity_factor = 1.25;
    CU_ASSERT_EQUAL_FATAL(mech_price(&cap), 0);
    double capped = prof_gemm_time(&cap.s.profile, DTYPE_BF16, 1.25 * tok, 2 * fe, h, local) +
                    prof_gemm_time(&cap.s.profile, DTYPE_BF16, 1.25 * tok, h, fe, local) -
                    mech_op_fwd(&a.c, "experts_in") - mech_op_fwd(&a.c, "experts_out");
    CHECK_REL(cap.c.fwd.imbalance, moe_share * (capped + 0.25 * mech_op_fwd(&a.c, "expert_act")), 1e-9);
    CU_ASSERT_EQUAL_FATAL(mech_begin(&padded, "deepseek-v2-lite", "h100-sxm", 8, "megatron-core"), 0);
    mech_moe_layout(&padded, 8, 8);
    padded.s.opt.moe.imbalance = 1.5;
    padded.s.opt.moe.capacity_factor = 1.25;
    padded.s.opt.moe.pad_to_capacity = true;
    CU_ASSERT_EQUAL_FATAL(mech_price(&padded), 0);
    CU_ASSERT_EQUAL(padded.c.fwd.imbalance, 0);
    CHECK_REL(mech_op_fwd(&padded.c, "experts_in"),
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
    CU_ASSERT_EQUAL_FATAL(mech_begin(&m, "mixtral-8x7b", "h100-sxm", 64, "megatron-core"), 0);
    mech_moe_layout(&m, 8, 64);
    CU_ASSERT_EQUAL_FATAL(mech_price(&m), 0);
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
        mech_set_batch(&s.layout, 1, 8, 128, 1024);
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
        CU_ASSERT_EQUAL_FATAL(mech_begin(&p, "gpt3-175b", "a100-80g", 1024, "megatron-2022"), 0);
        mech_set_batch(&p.s.layout, 8, 2, 768, 2048);
        p.s.layout.pp = 8;
        p.s.layout.vpp = 6;
        p.s.layout.schedule = SCHEDULE_INTERLEAVED;
        p.s.layout.recompute = RECOMPUTE_SELECTIVE;
        CU_ASSERT_FALSE(p.s.opt.overlap_grad_reduce);
        if (k == 1)
            p.s.opt.overlap_grad_reduce = true;
        CU_ASSERT_EQUAL_FATAL(mech_price(&p), 0);
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
            mech_stage_reductions(ev, n, st, &r_st, &e_st, &secs);
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
    CU_ASSERT_EQUAL_FATAL(mech_begin(&p, "sc21-gpt-530b", "a100-80g", 2240, "megatron-deepspeed"), 0);
    mech_set_batch(&p.s.layout, 8, 1, 1920, 2048);
    p.s.layout.sequence_parallel = false;
    p.s.layout.pp = 35;
    p.s.layout.recompute = RECOMPUTE_FULL;
    CU_ASSERT_EQUAL_FATAL(mech_price(&p), 0);
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
        CU_ASSERT_EQUAL_FATAL(mech_begin(&p, "gpt3-175b", "a100-80g", 384, "megatron-deepspeed"), 0);
        mech_set_batch(&p.s.layout, 4, 2, 2048, 2048);
        p.s.layout.sequence_parallel = false;
        p.s.layout.pp = 12;
        p.s.layout.zero = 1;
        p.s.layout.precision = k == 1 ? PRECISION_FP16 : PRECISION_BF16;
        CU_ASSERT_TRUE(p.s.opt.bf16_grad_all_reduce);
        if (k == 2)
            p.s.opt.bf16_grad_all_reduce = false;
        CU_ASSERT_EQUAL_FATAL(mech_price(&p), 0);
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
        mech_set_batch(&s.layout, 4, 1, 64, 1024);
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

/* The host's race with the GPU (frameworks/host.h): a kernel starts once issued
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
    CU_ASSERT_EQUAL_FATAL(mech_begin(p, model, "gb200", 8, "megatron-core"), 0);
    mech_moe_layout(p, 8, 8);
    mech_set_batch(&p->s.layout, 1, 1, 8, 1024);
    p->s.opt.host = (host_opts_t){.op_us = 10, .launch_us = 4, .graph_us = 10};
    if (set)
        set(p);
    CU_ASSERT_EQUAL_FATAL(mech_price(p), 0);
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
    mech_set_batch(&p->s.layout, 1, 1, 8, 8192);
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
    CU_ASSERT_EQUAL_FATAL(mech_begin(&whole, "qwen3-30b-a3b", "gb200", 8, "megatron-core"), 0);
    mech_moe_layout(&whole, 8, 8);
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
    CU_ASSERT_EQUAL_FATAL(mech_begin(&win, "gpt-oss-20b", "h100-sxm", 8, "megatron-core"), 0);
    mech_moe_layout(&win, 8, 8);
    mech_set_batch(&win.s.layout, 1, 1, 8, 8192);
    CU_ASSERT_EQUAL_FATAL(mech_price(&win), 0);
    CU_ASSERT_EQUAL_FATAL(mech_begin(&full, "gpt-oss-20b", "h100-sxm", 8, "megatron-core"), 0);
    mech_moe_layout(&full, 8, 8);
    mech_set_batch(&full.s.layout, 1, 1, 8, 8192);
    full.s.model.window = 0;
    CU_ASSERT_EQUAL_FATAL(mech_price(&full), 0);
    const model_t *m = &win.s.model;
    CU_ASSERT_EQUAL_FATAL(m->window, 128);
    double share = (double)m->window_layers / m->n_layers;
    double s = 8192, w = 128, width = m->n_heads * (double)m->head_dim;
    prof_attn_call_t call = {win.s.opt.attn_kernel, true, w, m->head_dim};
    double windowed = prof_attn_time(&win.s.profile, DTYPE_BF16, &call,
                                     4 * s * (w - w * w / (2 * s)) * width, false);
    CHECK_REL(mech_op_fwd(&win.c, "attention"),
              (1 - share) * mech_op_fwd(&full.c, "attention") + share * windowed, 1e-12);
    CU_ASSERT_TRUE(mech_op_fwd(&win.c, "attention") < 0.6 * mech_op_fwd(&full.c, "attention"));
    scenario_free(&win.s), scenario_free(&full.s);
}

/* Dispatchers as frameworks and GPUs offer them: DeepSpeed's MoE has its
 * own all-to-all only; DeepEP runs on NVIDIA GPUs of compute capability
 * 8.0 on joined by NVLink. Asked for where it cannot run: refused naming
 * the flag; a preset's DeepEP default on such a GPU: all-to-all, said. */
static int dispatch_finish(const char *gpu, const char *fw, moe_dispatch_t d, bool given,
                           priced_t *p, err_t *e)
{
    CU_ASSERT_EQUAL_FATAL(mech_begin(p, "mixtral-8x7b", gpu, 16, fw), 0);
    mech_moe_layout(p, 8, 16);
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
        CU_ASSERT_EQUAL_FATAL(mech_begin(&p, want[i].model, want[i].gpu, 64, want[i].fw), 0);
        CU_ASSERT_EQUAL(p.s.opt.moe.dispatcher, want[i].d);
        CU_ASSERT_EQUAL(p.s.opt.moe.a2a_overlap, want[i].overlap);
        CU_ASSERT_EQUAL(p.s.opt.host.graph_scopes, want[i].graphs);
        scenario_free(&p.s);
    }
}

/* breakdown_s.host_bound of "scaleplan ARGS --json" (-1 when absent). */
static double cli_host_bound(const char *args)
{
    cJSON *j = cmd_expect_json(args, 0);
    const cJSON *b = j ? cJSON_GetObjectItemCaseSensitive(j, "breakdown_s") : NULL;
    const cJSON *h = b ? cJSON_GetObjectItemCaseSensitive(b, "host_bound") : NULL;
    double v = cJSON_IsNumber(h) ? h->valuedouble : -1;
    cJSON_Delete(j);
    return v;
}

/* A release's token drop (options.moe.by_gpu capacity_factor and
 * pad_to_capacity): Megatron-Bridge 25.09's run_script applies
 * apply_moe_token_drop (capacity 1.0, padded) to both Qwen3 MoE recipes on
 * every GPU and to DeepSeek-V3 on B200/GB200, while DeepSeek-V3 on H100 runs
 * DeepEP dropless; 25.11 runs Qwen3 dropless. A token-drop block has no
 * host synchronization (its sizes are fixed), so Qwen3-30B on 16 H100s
 * spends less of its step waiting for its host than the same run with
 * --moe-dropless, and 25.09's per-layer CUDA graphs on B200 (whole layers,
 * static under token drop) leave it none. */
static void test_recipe_token_drop(void)
{
    static const struct {
        const char *fw, *model, *gpu;
        double cf;
        bool pad;
    } want[] = {
        {"megatron-bridge-25.09", "qwen3-30b-a3b", "h100-sxm", 1.0, true},
        {"megatron-bridge-25.09", "qwen3-235b-a22b", "b200", 1.0, true},
        {"megatron-bridge-25.09", "deepseek-v3", "b200", 1.0, true},
        {"megatron-bridge-25.09", "deepseek-v3", "h100-sxm", 0, false},
        {"megatron-bridge-25.11", "qwen3-30b-a3b", "b200", 0, false},
    };
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        priced_t p;
        CU_ASSERT_EQUAL_FATAL(mech_begin(&p, want[i].model, want[i].gpu, 64, want[i].fw), 0);
        CU_ASSERT_DOUBLE_EQUAL(p.s.opt.moe.capacity_factor, want[i].cf, 1e-12);
        CU_ASSERT_EQUAL(p.s.opt.moe.pad_to_capacity, want[i].pad);
        scenario_free(&p.s);
    }
    const char *h100 = "sim --framework megatron-bridge-25.09 --model qwen3-30b-a3b --gpu h100-sxm "
                       "--gpus 16 --pp 2 --vpp 24 --ep 8 --micro-batch 2 --global-batch 512 "
                       "--seq-len 4096 --precision fp8-cs --json";
    char cmd[512];
    snprintf(cmd, sizeof cmd, "%s --moe-dropless", h100);
    double drop = cli_host_bound(h100), dropless = cli_host_bound(cmd);
    printf("\n    Qwen3-30B, 16 H100, 25.09: host wait %.3f s a step with the recipe's token drop, "
           "%.3f s dropless", drop, dropless);
    CU_ASSERT(dropless > drop + 0.005);
    double b200 = cli_host_bound("sim --framework megatron-bridge-25.09 --model qwen3-30b-a3b "
                                 "--gpu b200 --gpus 8 --ep 8 --micro-batch 1 --global-batch 512 "
                                 "--seq-len 4096 --precision fp8-cs --json");
    CU_ASSERT(b200 >= 0 && b200 < 1e-9);
    char *err = NULL;
    /* whole-layer graphs cannot replay a dropless block: the user is told */
    cmd_expect("sim --framework megatron-bridge-25.09 --model qwen3-30b-a3b --gpu b200 --gpus 8 "
               "--ep 8 --moe-dropless",
               2, NULL, &err);
    CU_ASSERT(err && strstr(err, "--cuda-graph-scope"));
    free(err);
    err = NULL;
    cmd_expect("sim --model qwen3-30b-a3b --gpu h100-sxm --gpus 8 --ep 8 --moe-dropless "
               "--moe-capacity-factor 1",
               2, NULL, &err);
    CU_ASSERT(err && strstr(err, "--moe-dropless"));
    free(err);
}

TEST_SUITE(suite_mechanisms_step, "mechanisms_step", TEST(test_moe_scatter_adds), TEST(test_moe_dispatch), TEST(test_moe_tp_needs_sp), TEST(test_moe_experts), TEST(test_ddp_all_reduce), TEST(test_dp_reduce_after_schedule), TEST(test_pipeline_wait_is_bubble), TEST(test_bf16_optimizer_all_reduce), TEST(test_deepspeed_pipeline_engine), TEST(test_host_race), TEST(test_host_bound_moe), TEST(test_sliding_window), TEST(test_moe_dispatcher_offered), TEST(test_framework_recipes), TEST(test_recipe_token_drop));
