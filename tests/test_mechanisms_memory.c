/* Mechanisms of memory and of the frameworks' choices, each tested by
 * what it changes (as tests/test_mechanisms.c tests the layers' costs):
 * fp8 weight casting and caching, the parameter gather's window, published
 * memory figures, loss parallelism and the compiled loss, what sequence
 * parallelism and a gathered pipeline stage keep, ZeRO-3's live
 * parameters, and what each framework preset can run. A test here fails
 * if its mechanism is removed. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "models/flops.h"
#include "sim/scenario.h"
#include "sim/step.h"
#include "tests/mechanisms.h"
#include "tests/testing.h"

/* ------------------------------------------------- fp8 weight casting */

/* Transformer Engine reuses a step's quantized weights over its
 * micro-batches when the framework passes is_first_microbatch (Megatron);
 * Composer does not, so each forward recasts them. */
static void test_fp8_weight_cache(void)
{
    priced_t cached, recast;
    CU_ASSERT_EQUAL_FATAL(mech_begin(&cached, "llama3-8b", "h100-sxm", 8, "megatron-core"), 0);
    mech_set_batch(&cached.s.layout, 1, 1, 64, 2048);
    cached.s.layout.precision = PRECISION_FP8_CS;
    CU_ASSERT_EQUAL_FATAL(mech_price(&cached), 0);
    CU_ASSERT_EQUAL_FATAL(mech_begin(&recast, "llama3-8b", "h100-sxm", 8, "megatron-core"), 0);
    mech_set_batch(&recast.s.layout, 1, 1, 64, 2048);
    recast.s.layout.precision = PRECISION_FP8_CS;
    recast.s.opt.fp8_weight_cache = false;
    CU_ASSERT_EQUAL_FATAL(mech_price(&recast), 0);
    CU_ASSERT_EQUAL(cached.s.layout.grad_accum, 8);
    double h = cached.s.model.hidden, f = cached.s.model.ffn;
    double w = 2 * f * h; /* the gate and up projections */
    double cast = cached.s.opt.prec.cast_weight * w;
    const profile_t *p = &cached.s.profile;
    double x = cached.s.opt.prec.cast_input * 2048.0 * h;
    CHECK_REL(mech_op_fwd(&recast.c, "mlp_in") - mech_op_fwd(&cached.c, "mlp_in"),
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
    CU_ASSERT_EQUAL_FATAL(mech_begin(&p, "llama3-70b", "h100-sxm", 64, "megatron-core"), 0);
    mech_set_batch(&p.s.layout, 8, 1, 512, 2048);
    p.s.layout.sequence_parallel = true;
    p.s.layout.distributed_optimizer = true;
    p.s.layout.recompute = RECOMPUTE_FULL;
    CU_ASSERT_EQUAL_FATAL(mech_price(&p), 0);
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
        CU_ASSERT_EQUAL_FATAL(mech_begin(&p, rows[i].model, rows[i].gpu, rows[i].gpus, rows[i].fw), 0);
        layout_t *l = &p.s.layout;
        int ranks = rows[i].gpus / rows[i].cp / rows[i].tp; /* data-parallel ranks */
        mech_set_batch(l, rows[i].tp, rows[i].mb, rows[i].mb * ranks, rows[i].seq);
        l->cp = rows[i].cp;
        l->recompute = rows[i].rc;
        l->precision = rows[i].prec;
        sim_options_compiled(&p.s.opt);
        p.s.opt.fp8_param_gather = rows[i].fp8_gather;
        CU_ASSERT_EQUAL_FATAL(mech_price(&p), 0);
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
    CU_ASSERT_EQUAL_FATAL(mech_begin(&mc, "llama3-8b", "h100-sxm", 64, "megatron-core"), 0);
    mech_set_batch(&mc.s.layout, 1, 1, 64, 4096);
    CU_ASSERT_EQUAL_FATAL(mech_price(&mc), 0);
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
    CU_ASSERT_EQUAL_FATAL(mech_begin(p, "llama3-8b", "h100-sxm", 8, "torchtitan-2024-12"), 0);
    mech_set_batch(&p->s.layout, tp, 1, 8 / tp, 4096);
    if (without_tp_loss)
        p->s.opt.ce_tp_fwd_bytes = p->s.opt.ce_tp_bwd_bytes = p->s.opt.ce_tp_peak_bytes = 0;
    CU_ASSERT_EQUAL_FATAL(mech_price(p), 0);
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
            CU_ASSERT_EQUAL_FATAL(mech_begin(&p[k], "llama3-8b", "h100-sxm", 8, cases[i].fw), 0);
            mech_set_batch(&p[k].s.layout, cases[i].tp, 1, 8 / cases[i].tp, 4096);
            if (k)
                sim_options_compiled(&p[k].s.opt);
            else
                sim_options_compiled_model(&p[k].s.opt);
            CU_ASSERT_EQUAL_FATAL(mech_price(&p[k]), 0);
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
        CU_ASSERT_EQUAL_FATAL(mech_begin(&p, "llama3-8b", "h100-sxm", 8, "torchtitan-2025-06"), 0);
        mech_set_batch(&p.s.layout, 8, 1, 1, 4096);
        p.s.layout.precision = precs[i];
        CU_ASSERT_EQUAL_FATAL(mech_price(&p), 0);
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
    CU_ASSERT_EQUAL_FATAL(mech_begin(&mc, "llama3-8b", "h100-sxm", 8, "megatron-core"), 0);
    mech_set_batch(&mc.s.layout, 8, 1, 1, 4096);
    CU_ASSERT_EQUAL_FATAL(mech_price(&mc), 0);
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
        CU_ASSERT_EQUAL_FATAL(mech_begin(&p, "llama3.1-405b", "h100-96g", 512, "torchtitan-2024-12"), 0);
        layout_t *l = &p.s.layout;
        mech_set_batch(l, 8, 4, 256, 8192);
        l->pp = 8;
        l->first_stage_layers = l->last_stage_layers = 15;
        l->recompute = RECOMPUTE_FULL;
        l->precision = PRECISION_BF16;
        p.s.opt.zero3.reshard_with_pp = !kept;
        CU_ASSERT_EQUAL_FATAL(mech_price(&p), 0);
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
        CU_ASSERT_EQUAL_FATAL(mech_begin(&p, "sc21-gpt-1t", "a100-80g", 1024, fw[k]), 0);
        layout_t *l = &p.s.layout;
        mech_set_batch(l, 1, 8, 8192, 1024);
        l->zero = 3;
        l->recompute = RECOMPUTE_FULL;
        l->precision = PRECISION_BF16;
        CU_ASSERT_EQUAL_FATAL(mech_price(&p), 0);
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
        CU_ASSERT_EQUAL_FATAL(mech_begin(&p, "llama3-8b", "h100-sxm", 16, cases[i].fw), 0);
        mech_set_batch(&p.s.layout, cases[i].tp, 1, 0, 4096);
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
    CU_ASSERT_EQUAL_FATAL(mech_begin(&ok, "llama3-8b", "h100-sxm", 16, "torchtitan-2024-12"), 0);
    mech_set_batch(&ok.s.layout, 2, 1, 0, 4096);
    ok.s.layout.pp = 2;
    CU_ASSERT_EQUAL(mech_price(&ok), 0);
    scenario_free(&ok.s);
    /* PyTorch FSDP2 trains in fp8 through torchao (tensor-wise by default) */
    CU_ASSERT_EQUAL_FATAL(mech_begin(&ok, "llama3-8b", "h100-sxm", 16, "fsdp"), 0);
    mech_set_batch(&ok.s.layout, 1, 1, 0, 4096);
    ok.s.layout.zero = 3;
    ok.s.layout.precision = PRECISION_FP8;
    CU_ASSERT_EQUAL(mech_price(&ok), 0);
    CU_ASSERT_EQUAL(ok.s.layout.precision, PRECISION_FP8_CS);
    scenario_free(&ok.s);
}

TEST_SUITE(suite_mechanisms_memory, "mechanisms_memory", TEST(test_fp8_weight_cache), TEST(test_param_gather_window), TEST(test_published_memory), TEST(test_loss_parallel), TEST(test_compiled_loss), TEST(test_sp_saves_gathered), TEST(test_pp_gathered_stage), TEST(test_zero3_live_parameters), TEST(test_framework_capabilities));
