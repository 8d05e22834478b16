/* Tests of models/memory: ZeRO model-state formulas, Korthikanti et al.'s
 * activation formulas for GPT-3 175B at TP8 PP8, a hand count for a
 * Llama-style block, and the micro-batches each schedule keeps. */
#include <stdio.h>

#include "models/memory.h"
#include "tests/testing.h"

static model_t load(const char *name)
{
    model_t m;
    err_t e;
    CU_ASSERT_EQUAL_FATAL(model_load(name, &m, &e), 0);
    return m;
}

static layout_t finalized(const model_t *m, int tp, int pp, int gpus, int mb, int gb)
{
    layout_t l;
    layout_defaults(&l);
    l.tp = tp;
    l.pp = pp;
    l.micro_batch = mb;
    l.global_batch = gb;
    l.seq_len = 2048;
    err_t e;
    int rc = layout_finalize(&l, m, gpus, &e);
    if (rc)
        fprintf(stderr, "finalize: %s\n", e.msg);
    CU_ASSERT_EQUAL_FATAL(rc, 0);
    return l;
}

/* DeepSpeed ZeRO (Rajbhandari et al. 2020, Figure 1): mixed-precision Adam
 * costs 2 + 2 + 12 = 16 bytes per parameter; stage 1 shards the 12 bytes of
 * optimizer state over N_d ranks, stage 2 also the 2 bytes of gradients,
 * stage 3 everything. With Psi = 7.5B and N_d = 64 the paper's figure
 * gives 120 GB, 31.4 GB, 16.6 GB and 1.9 GB. */
static void test_zero_model_states(void)
{
    model_t m = load("llama3-8b");
    const double expected_per_param[4] = {16.0, 4 + 12.0 / 64, 2 + 14.0 / 64, 16.0 / 64};
    const double paper_gb[4] = {120e9, 31.4e9, 16.6e9, 1.9e9};
    for (int stage = 0; stage <= 3; stage++) {
        layout_t l = finalized(&m, 1, 1, 64, 1, 64);
        l.zero = stage;
        model_memory_t mm;
        model_memory_stage(&m, &l, 0, NULL, &mm);
        double states = mm.params_bytes + mm.grads_bytes + mm.optimizer_bytes;
        CHECK_REL(states / mm.params_count, expected_per_param[stage], 1e-12);
        /* the paper's 7.5B example */
        CHECK_REL(7.5e9 * expected_per_param[stage], paper_gb[stage], 0.02);
    }
    /* Megatron's distributed optimizer with fp32 main grads: 6 + 12/d bytes
     * (Megatron-LM docs, bf16 params with fp32 grads). */
    layout_t l = finalized(&m, 1, 1, 64, 1, 64);
    l.distributed_optimizer = true;
    l.grad_bytes = 4;
    model_memory_t mm;
    model_memory_stage(&m, &l, 0, NULL, &mm);
    CHECK_REL((mm.params_bytes + mm.grads_bytes + mm.optimizer_bytes) / mm.params_count,
              6 + 12.0 / 64, 1e-12);
}

/* Korthikanti et al. 2022, GPT-3 175B (a = 96, h = 12288, L = 96) at
 * s = 2048, b = 1, t = 8 (TP8 PP8), bytes per layer:
 *   no SP, no recompute:  sbh (10 + 24/t + 5as/(ht)) = 25165824 x 23 = 578,813,952
 *   SP:                   sbh/t (34 + 5as/h)        = 3145728 x 114 = 358,612,992
 *   SP + selective:       34 sbh/t                                  = 106,954,752
 *   full recompute:       2sbh = 50,331,648; with SP 2sbh/t = 6,291,456
 * (s b h = 2048 x 12288 = 25,165,824; 5as/(ht) = 10; 5as/h = 80.) The
 * paper materializes attention scores, so flash attention is off here. */
static void test_korthikanti_gpt3(void)
{
    model_t m = load("gpt3-175b");
    layout_t l = finalized(&m, 8, 8, 64, 1, 64);
    l.flash_attention = false;
    CHECK_REL(model_layer_activation_bytes(&m, &l), 578813952.0, 1e-12);
    l.sequence_parallel = true;
    CHECK_REL(model_layer_activation_bytes(&m, &l), 358612992.0, 1e-12);
    l.recompute = RECOMPUTE_SELECTIVE;
    CHECK_REL(model_layer_activation_bytes(&m, &l), 106954752.0, 1e-12);
    l.recompute = RECOMPUTE_FULL;
    CHECK_REL(model_layer_activation_bytes(&m, &l), 6291456.0, 1e-12);
    l.sequence_parallel = false;
    CHECK_REL(model_layer_activation_bytes(&m, &l), 50331648.0, 1e-12);

    /* First stage under 1F1B keeps p = 8 micro-batches of its L/p = 12
     * layers: L x per-layer in total, independent of p (section 4.2.3). */
    l.recompute = RECOMPUTE_SELECTIVE;
    l.sequence_parallel = true;
    model_memory_t mm;
    model_memory_stage(&m, &l, 0, NULL, &mm);
    CU_ASSERT_EQUAL(mm.layers, 12);
    CHECK_REL(mm.inflight_microbatches, 8, 1e-12);
    /* plus the embedding dropout mask, s b h p / t bytes */
    double edge = 2048.0 * 12288 * 8 / 8;
    CHECK_REL(mm.activations_bytes, 96 * 106954752.0 + edge, 1e-12);
    /* Weights on stage 0: 12 blocks / 8 + the vocabulary-parallel embedding
     * + the replicated position table, 2 bytes each. */
    CHECK_REL(mm.params_bytes, 2 * mm.params_count, 1e-12);
}

/* A Llama 3 8B block at s = 4096, b = 1, TP1, flash attention, by hand:
 * norm inputs and GEMM inputs 4 x 2sbh, Q 2sb*4096, K and V 2sb*1024 each,
 * projection input 2sb*4096, gate+up 4sb*14336, down input 2sb*14336, and
 * the fp32 log-sum-exp 4 a s b: sb x 139,264 + 128 sb = 570,949,632 bytes. */
static void test_llama_block_by_hand(void)
{
    model_t m = load("llama3-8b");
    layout_t l = finalized(&m, 1, 1, 1, 1, 1);
    l.seq_len = 4096;
    double sb = 4096;
    double expected = sb * (4 * 2 * 4096 + 2 * 4096 + 2 * 2 * 1024 + 2 * 4096 +
                            6 * 14336) + 4 * 32 * sb;
    CHECK_REL(model_layer_activation_bytes(&m, &l), expected, 1e-12);
    CHECK_REL(expected, 570949632.0, 1e-12);
    /* TP4 with SP divides every tensor by 4. */
    layout_t t4 = finalized(&m, 4, 1, 4, 1, 1);
    t4.seq_len = 4096;
    t4.sequence_parallel = true;
    CHECK_REL(model_layer_activation_bytes(&m, &t4), expected / 4, 1e-12);
    /* CP2 halves the local sequence. */
    layout_t c2 = finalized(&m, 1, 1, 2, 1, 0);
    c2.seq_len = 4096;
    c2.cp = 2;
    CHECK_REL(model_layer_activation_bytes(&m, &c2), expected / 2, 1e-12);
}

/* Micro-batches in flight on each stage: GPipe keeps all m, 1F1B keeps
 * p - stage, interleaved keeps (2(p-1) + (v-1)p + 1)/v on the first stage,
 * which is p (1 + (p-1)/(p v)) (Korthikanti et al. section 4.2.3). */
static void test_inflight_by_schedule(void)
{
    model_t m = load("gpt3-175b");
    layout_t l = finalized(&m, 8, 8, 64, 1, 64); /* m = 64 micro-batches */
    l.schedule = SCHEDULE_GPIPE;
    CHECK_REL(layout_inflight_microbatches(&l, 0), 64, 1e-12);
    CHECK_REL(layout_inflight_microbatches(&l, 7), 64, 1e-12);
    l.schedule = SCHEDULE_1F1B;
    CHECK_REL(layout_inflight_microbatches(&l, 0), 8, 1e-12);
    CHECK_REL(layout_inflight_microbatches(&l, 7), 1, 1e-12);
    l.schedule = SCHEDULE_INTERLEAVED;
    l.vpp = 3;
    CHECK_REL(layout_inflight_microbatches(&l, 0), 8 * (1 + 7.0 / 24), 1e-12);
    /* few micro-batches: 1F1B cannot keep more than it has */
    layout_t few = finalized(&m, 8, 8, 64, 1, 4);
    CHECK_REL(layout_inflight_microbatches(&few, 0), 4, 1e-12);
    /* GPipe and 1F1B: same work, different memory */
    layout_t g = finalized(&m, 8, 8, 64, 1, 64);
    g.schedule = SCHEDULE_GPIPE;
    model_memory_t mg, m1;
    model_memory_stage(&m, &g, 0, NULL, &mg);
    g.schedule = SCHEDULE_1F1B;
    model_memory_stage(&m, &g, 0, NULL, &m1);
    CU_ASSERT_TRUE(mg.activations_bytes > 7 * m1.activations_bytes);
}

/* Per-GPU parameters across stages add up to the model (tied embeddings
 * with PP > 1 add Megatron's copy on the last stage). */
static void test_stage_params_sum(void)
{
    model_t m = load("llama3-70b"); /* untied */
    layout_t l = finalized(&m, 8, 4, 32, 1, 8);
    double sum = 0;
    for (int s = 0; s < 4; s++)
        sum += model_gpu_params(&m, &l, s);
    model_params_t p;
    model_params(&m, &p);
    /* Norms are replicated over TP: count them t times. */
    double norms = m.n_layers * p.norms + p.final_norm;
    CHECK_REL(sum * 8 - 7 * norms, p.total, 1e-9);
    model_t g = load("gpt3-175b"); /* tied: last stage keeps a copy */
    layout_t lg = finalized(&g, 1, 2, 2, 1, 2);
    model_params_t pg;
    model_params(&g, &pg);
    CHECK_REL(model_gpu_params(&g, &lg, 0) + model_gpu_params(&g, &lg, 1),
              pg.total + pg.word_embedding, 1e-12);
}

/* An MoE block under TP 4 with sequence parallelism, EP 8 and expert TP
 * 1, 2, 4 (Qwen3-235B-A22B: h 4096, 64/4 heads of 128, 128 experts of
 * 1536, top-8, SwiGLU; s 2048, b 1, bf16, flash attention, no dropout).
 * Megatron-Core's all-to-all dispatcher (token_dispatcher.py:
 * "permute->A2A(EP)->AG(TP)", its TP the expert-TP group) gives each rank
 * sb/4 tokens, k copies each after the EP all-to-all, ETP times that after
 * the all-gather; each expert's width splits over ETP. Bytes per layer:
 *   attention, replicated tensors SP-split: (4 h + 2 qw + 2 kvw) sb e/4
 *     + the fp32 log-sum-exp 4 a sb/4
 *   router scores, fp32:          sb E 4/4
 *   experts' input (kept):        sb k ETP h e/4    (grows with ETP)
 *   gate/up and activation out:   sb k 3 fe e/4     (the same for any ETP)
 *   expert outputs at the combine: sb k h e/4
 * The expert intermediates once grew with TP/ETP (36.0 / 23.6 / 17.4 GiB
 * of activations for one layout at ETP 1 / 2 / 4, issue 36). */
static void test_moe_expert_tp_activations(void)
{
    model_t m = load("qwen3-235b-a22b");
    const double sb = 2048, e = 2, h = 4096, qw = 8192, kvw = 512, a = 64;
    const double E = 128, k = 8, fe = 1536;
    const int etps[] = {1, 2, 4};
    for (int i = 0; i < 3; i++) {
        layout_t l;
        layout_defaults(&l);
        l.tp = 4;
        l.ep = 8;
        l.etp = etps[i];
        l.sequence_parallel = true;
        l.micro_batch = 1;
        l.global_batch = 8;
        l.seq_len = 2048;
        err_t err;
        CU_ASSERT_EQUAL_FATAL(layout_finalize(&l, &m, 32, &err), 0);
        double attn = (4 * h + 2 * qw + 2 * kvw) * sb * e / 4 + 4 * a * sb / 4;
        double moe = sb * E * 4 / 4 + sb * k * etps[i] * h * e / 4 + sb * k * 3 * fe * e / 4 +
                     sb * k * h * e / 4;
        CHECK_REL(model_layer_activation_bytes(&m, &l), attn + moe, 1e-12);
    }
}

TEST_SUITE(suite_memory, "memory", TEST(test_zero_model_states), TEST(test_korthikanti_gpt3),
           TEST(test_llama_block_by_hand), TEST(test_inflight_by_schedule),
           TEST(test_stage_params_sum), TEST(test_moe_expert_tp_activations));
