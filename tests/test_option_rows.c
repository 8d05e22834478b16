/* One mechanism test per row of frameworks/options.def: a step whose
 * preset sets the option, priced as loaded and again with that one option
 * at its off value (fw_option_off), must differ in the direction the
 * mechanism says, by at least the stated share. make check-mechanisms runs
 * each test with SCALEPLAN_OPTION_OFF=KEY: the reader then loads the off
 * value, both runs are the same, and the test must fail. Rows whose
 * mechanism has a test with its priced amount worked out elsewhere
 * (tests/test_mechanisms*.c) name that test in options.def; their tests
 * here stay in make check as a second floor.
 *
 * The shares below are what the simulator prices today for these layouts,
 * rounded down: a floor that says the mechanism is priced and how large it
 * is at least, not an accuracy bar. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/catalog.h"
#include "frameworks/framework.h"
#include "frameworks/options.h"
#include "sim/scenario.h"
#include "sim/step.h"
#include "tests/mechanisms.h"
#include "tests/testing.h"

/* What a row's test measures. */
typedef enum {
    M_STEP,   /* step time, s */
    M_MEM,    /* memory of the peak stage, bytes */
    M_P2P,    /* bytes of one pipeline transfer */
    M_HEAD_F, /* the loss layers' forward compute, s */
    M_HEAD_B, /* the loss layers' backward compute, s */
    M_GRED,   /* seconds to reduce 1e9 parameters' gradients over DP */
    M_PGATH   /* seconds to gather 1e9 updated parameters */
} metric_t;

typedef struct {
    const char *key;   /* the option row */
    const char *fw;    /* a preset that sets it on */
    const char *model, *gpu;
    int gpus, tp, pp, cp, mb, gb, seq, zero;
    precision_t prec;
    recompute_t recompute;
    bool no_sp;        /* TP without sequence parallelism */
    bool compiled;     /* the framework's compile switch on */
    metric_t metric;
    int sign;          /* +1: on > off; -1: on < off */
    double min_share;  /* |on - off| / off at least */
    int vpp;           /* > 1: the interleaved schedule with vpp chunks */
} row_case_t;

#define BF16 PRECISION_BF16
#define FP8 PRECISION_FP8
#define NONE RECOMPUTE_NONE
#define FULL RECOMPUTE_FULL

static const row_case_t cases[] = {
    {"overlap_grad_reduce", "megatron-core", "llama3-8b", "h100-sxm", 64, 1, 1, 1, 1, 128, 4096, 0, BF16, NONE, false, false, M_STEP, -1, 0.1, 0},
    {"grad_reduce_after_pipeline", "deepspeed", "llama3-8b", "a100-80g", 32, 4, 2, 1, 1, 64, 1024, 0, BF16, NONE, true, false, M_STEP, 1, 0.005, 0},
    {"bf16_grad_all_reduce", "megatron-deepspeed", "gpt3-175b", "a100-80g", 384, 4, 12, 1, 2, 2048, 2048, 1, BF16, NONE, true, false, M_GRED, 1, 0.9, 0},
    {"overlap_param_gather", "nemo-25.02", "llama3-8b", "h100-sxm", 64, 1, 1, 1, 1, 64, 4096, 0, BF16, NONE, false, false, M_STEP, -1, 0.05, 0},
    {"tp_comm_overlap", "nemo-25.02", "llama3-70b", "h100-sxm", 64, 4, 4, 1, 1, 64, 8192, 0, BF16, NONE, false, false, M_STEP, -1, 0.02, 0},
    {"async_tp_grad", "megatron-core", "llama3-8b", "h100-sxm", 8, 8, 1, 1, 1, 1, 4096, 0, BF16, NONE, false, false, M_STEP, -1, 0.05, 0},
    {"overlap_p2p", "megatron-core", "llama3-70b", "h100-sxm", 64, 8, 8, 1, 1, 64, 4096, 0, BF16, NONE, false, false, M_STEP, -1, 0.01, 5},
    {"p2p_whole_tensor", "deepspeed", "llama3-8b", "a100-80g", 32, 4, 2, 1, 1, 64, 1024, 0, BF16, NONE, true, false, M_P2P, 1, 2.9, 0},
    {"bucket_params", "megatron-core", "llama3-8b", "h100-sxm", 64, 1, 1, 1, 1, 64, 4096, 0, BF16, NONE, false, false, M_STEP, -1, 0.1, 0},
    {"reduce_bytes", "torchtitan-2024-12", "llama3-8b", "h100-sxm", 64, 1, 1, 1, 1, 64, 4096, 3, BF16, NONE, false, false, M_GRED, 1, 0.9, 0},
    {"fp8_param_gather", "nemo-25.02", "llama3-8b", "h100-sxm", 64, 1, 1, 1, 1, 64, 4096, 0, FP8, NONE, false, false, M_PGATH, -1, 0.4, 0},
    {"fp8_tp_gather", "megatron-core", "llama3-8b", "h100-sxm", 8, 8, 1, 1, 1, 1, 8192, 0, FP8, NONE, false, false, M_STEP, -1, 0.05, 0},
    {"recompute_early_stop", "torchtitan-2025-06", "llama3-8b", "h100-sxm", 8, 1, 1, 1, 1, 8, 8192, 3, BF16, FULL, false, false, M_STEP, -1, 0.02, 0},
    {"attention_kernel", "fsdp", "llama3-8b", "h100-sxm", 8, 1, 1, 1, 1, 8, 8192, 3, BF16, NONE, false, false, M_STEP, 1, 0.05, 0},
    {"fp8_weight_cache", "megatron-core", "llama3-8b", "h100-sxm", 8, 8, 1, 1, 1, 8, 4096, 0, FP8, NONE, false, false, M_STEP, -1, 0.01, 0},
    {"eager_norm", "torchtitan-2024-12", "llama3-8b", "h100-sxm", 8, 1, 1, 1, 1, 8, 8192, 3, BF16, NONE, false, false, M_STEP, 1, 0.03, 0},
    {"eager_rope", "torchtitan-2024-12", "llama3-8b", "h100-sxm", 8, 1, 1, 1, 1, 8, 8192, 3, BF16, NONE, false, false, M_STEP, 1, 0.01, 0},
    {"eager_act", "torchtitan-2024-12", "llama3-8b", "h100-sxm", 8, 1, 1, 1, 1, 8, 8192, 3, BF16, NONE, false, false, M_STEP, 1, 0.01, 0},
    {"eager_cp_merge", "torchtitan-2024-12", "llama3-8b", "h100-sxm", 8, 1, 1, 2, 1, 4, 32768, 3, BF16, NONE, false, false, M_STEP, 1, 0.003, 0},
    {"cp_merge_bytes", "torchtitan-2024-12", "llama3-8b", "h100-sxm", 8, 1, 1, 2, 1, 4, 32768, 3, BF16, NONE, false, false, M_STEP, 1, 0.01, 0},
    {"kv_repeated", "torchtitan-2024-12", "llama3-8b", "h100-sxm", 8, 1, 1, 2, 1, 4, 32768, 3, BF16, NONE, false, false, M_STEP, 1, 0.01, 0},
    {"fp8_norm_cast", "megatron-core", "llama3-8b", "h100-sxm", 8, 1, 1, 1, 1, 8, 8192, 0, FP8, NONE, false, false, M_STEP, -1, 0.001, 0},
    {"fp8_saves_quantized", "megatron-core", "llama3-8b", "h100-sxm", 8, 1, 1, 1, 1, 8, 8192, 0, FP8, NONE, false, false, M_MEM, -1, 0.02, 0},
    {"ce_fwd_bytes", "megatron-core", "llama3-8b", "h100-sxm", 8, 1, 1, 1, 1, 8, 8192, 0, BF16, NONE, false, false, M_HEAD_F, 1, 0.5, 0},
    {"ce_bwd_bytes", "megatron-core", "llama3-8b", "h100-sxm", 8, 1, 1, 1, 1, 8, 8192, 0, BF16, NONE, false, false, M_HEAD_B, 1, 0.1, 0},
    {"ce_peak_bytes", "fsdp", "llama3-8b", "h100-sxm", 8, 1, 1, 1, 1, 8, 8192, 3, BF16, NONE, false, false, M_MEM, 1, 0.05, 0},
    {"ce_tp_fwd_bytes", "torchtitan-2024-12", "llama3-8b", "h100-sxm", 8, 2, 1, 1, 1, 4, 4096, 3, BF16, NONE, false, false, M_HEAD_F, 1, 0.2, 0},
    {"ce_tp_bwd_bytes", "torchtitan-2024-12", "llama3-8b", "h100-sxm", 8, 2, 1, 1, 1, 4, 4096, 3, BF16, NONE, false, false, M_HEAD_B, 1, 0.3, 0},
    {"ce_tp_peak_bytes", "torchtitan-2024-12", "llama3-8b", "h100-sxm", 8, 2, 1, 1, 1, 4, 4096, 3, BF16, NONE, false, false, M_MEM, 1, 0.02, 0},
    {"ce_compiled_fwd_bytes", "torchtitan-2025-06", "llama3-8b", "h100-sxm", 8, 1, 1, 1, 1, 8, 4096, 3, BF16, NONE, false, true, M_HEAD_F, -1, 0.2, 0},
    {"ce_compiled_bwd_bytes", "torchtitan-2025-06", "llama3-8b", "h100-sxm", 8, 1, 1, 1, 1, 8, 4096, 3, BF16, NONE, false, true, M_HEAD_B, 1, 0.02, 0},
    {"ce_compiled_peak_bytes", "torchtitan-2025-06", "llama3-8b", "h100-sxm", 8, 1, 1, 1, 1, 8, 4096, 3, BF16, NONE, false, true, M_MEM, -1, 0.02, 0},
};

static double metric(const row_case_t *k, bool off)
{
    priced_t p;
    if (mech_begin(&p, k->model, k->gpu, k->gpus, k->fw))
        return NAN;
    const fw_option_t *r = fw_option_find(k->key);
    CU_ASSERT_PTR_NOT_NULL_FATAL(r);
    layout_t *l = &p.s.layout;
    mech_set_batch(l, k->tp, k->mb, k->gb, k->seq);
    l->sequence_parallel = k->tp > 1 && !k->no_sp;
    l->pp = k->pp;
    l->cp = k->cp;
    l->zero = k->zero;
    l->precision = k->prec;
    l->recompute = k->recompute;
    if (k->vpp > 1) {
        l->vpp = k->vpp;
        l->schedule = SCHEDULE_INTERLEAVED;
    }
    if (off)
        fw_option_off(r, &p.s.opt);
    if (k->compiled) /* after: the switch copies the compiled loss's figures */
        sim_options_compiled(&p.s.opt);
    double v = NAN;
    err_t e;
    sim_ctx_t *ctx = sim_ctx_create();
    sim_result_t res;
    if (ctx && !scenario_finish(&p.s, NULL, &e) && !sim_run_step(ctx, &p.s.input, &res, &e)) {
        const model_memory_t *m = &res.memory;
        switch (k->metric) {
        case M_STEP: v = res.step_time_s; break;
        case M_MEM:
            v = m->params_bytes + m->grads_bytes + m->optimizer_bytes + m->activations_bytes +
                m->buffers_bytes;
            break;
        case M_P2P: v = res.costs.p2p_bytes; break;
        case M_HEAD_F: v = res.costs.head_fwd.compute; break;
        case M_HEAD_B: v = res.costs.head_bwd.compute; break;
        case M_GRED: v = sim_grad_reduce_time(&p.s.input, &res.costs, 1e9); break;
        case M_PGATH: v = sim_param_gather_time(&p.s.input, &res.costs, 1e9); break;
        }
    } else {
        fprintf(stderr, "%s: %s\n", k->key, e.msg);
    }
    sim_ctx_destroy(ctx);
    scenario_free(&p.s);
    return v;
}

static void check_row(const char *key)
{
    const row_case_t *k = NULL;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        if (strcmp(cases[i].key, key) == 0)
            k = &cases[i];
    CU_ASSERT_PTR_NOT_NULL_FATAL(k);
    double on = metric(k, false), off = metric(k, true);
    double share = (on - off) / off;
    if (getenv("SCALEPLAN_ROWS_VERBOSE"))
        fprintf(stderr, "\n  %-24s on %.6g off %.6g share %+.4f\n", key, on, off, share);
    CU_ASSERT_TRUE(isfinite(on) && isfinite(off) && off != 0);
    CU_ASSERT_TRUE(share * k->sign >= k->min_share);
}

#define ROW_TEST(key) \
    static void mech_##key(void) { check_row(#key); }
ROW_TEST(overlap_grad_reduce)
ROW_TEST(grad_reduce_after_pipeline)
ROW_TEST(bf16_grad_all_reduce)
ROW_TEST(overlap_param_gather)
ROW_TEST(tp_comm_overlap)
ROW_TEST(async_tp_grad)
ROW_TEST(overlap_p2p)
ROW_TEST(p2p_whole_tensor)
ROW_TEST(bucket_params)
ROW_TEST(reduce_bytes)
ROW_TEST(fp8_param_gather)
ROW_TEST(fp8_tp_gather)
ROW_TEST(recompute_early_stop)
ROW_TEST(attention_kernel)
ROW_TEST(fp8_weight_cache)
ROW_TEST(eager_norm)
ROW_TEST(eager_rope)
ROW_TEST(eager_act)
ROW_TEST(eager_cp_merge)
ROW_TEST(cp_merge_bytes)
ROW_TEST(kv_repeated)
ROW_TEST(fp8_norm_cast)
ROW_TEST(fp8_saves_quantized)
ROW_TEST(ce_fwd_bytes)
ROW_TEST(ce_bwd_bytes)
ROW_TEST(ce_peak_bytes)
ROW_TEST(ce_tp_fwd_bytes)
ROW_TEST(ce_tp_bwd_bytes)
ROW_TEST(ce_tp_peak_bytes)
ROW_TEST(ce_compiled_fwd_bytes)
ROW_TEST(ce_compiled_bwd_bytes)
ROW_TEST(ce_compiled_peak_bytes)

/* DeepSpeed's ZeRO-2 reduce-scatters a stage's gradients after every
 * micro-batch's backward (stage_1_and_2.py reduce_ipg_grads per
 * micro-step), not in buckets once a step: Llama 3 8B on 16 A100s under
 * the deepspeed preset, ZeRO-2, 4 micro-batches of one sequence a rank.
 * With the rule: 4 reductions, one per micro-batch, the first 3 before the
 * last backward ends, each moving the whole model's gradients (4 x the
 * seconds of one). Without it: the preset's 500M-parameter buckets, 8B / 5e8
 * of them, once. */
static void mech_zero2_reduce_per_micro_batch(void)
{
    int count[2], early[2];
    double secs[2], one = 0;
    for (int off = 0; off < 2; off++) {
        priced_t p;
        CU_ASSERT_EQUAL_FATAL(mech_begin(&p, "llama3-8b", "a100-80g", 16, "deepspeed"), 0);
        mech_set_batch(&p.s.layout, 1, 1, 64, 2048);
        p.s.layout.zero = 2;
        if (off)
            fw_option_off(fw_option_find("zero2_reduce_per_micro_batch"), &p.s.opt);
        CU_ASSERT_EQUAL_FATAL(mech_price(&p), 0);
        CU_ASSERT_EQUAL(p.s.layout.grad_accum, 4);
        sim_ctx_t *ctx = sim_ctx_create();
        sim_result_t r;
        err_t e;
        CU_ASSERT_EQUAL_FATAL(sim_run_step(ctx, &p.s.input, &r, &e), 0);
        sim_event_t *ev;
        int n;
        CU_ASSERT_EQUAL_FATAL(sim_timeline(ctx, &ev, &n, &e), 0);
        mech_stage_reductions(ev, n, 0, &count[off], &early[off], &secs[off]);
        if (!off)
            one = sim_grad_reduce_time(&p.s.input, &r.costs, r.costs.layer_params);
        free(ev);
        sim_ctx_destroy(ctx);
        scenario_free(&p.s);
    }
    CU_ASSERT_EQUAL(count[0], 4);
    CU_ASSERT_EQUAL(early[0], 3);
    CU_ASSERT_TRUE(count[1] > 4 && count[1] <= 17);
    CU_ASSERT_TRUE(secs[0] > 3 * secs[1]); /* four whole reductions against one */
    CU_ASSERT_TRUE(one > 0);
}

/* The table itself: defaults as sim_options_default leaves them, --set's
 * checks by the row's type and range, and an unknown key answered with the
 * close names. */
static void test_option_table(void)
{
    sim_options_t o;
    sim_options_default(&o);
    CU_ASSERT_TRUE(fw_option_count() >= 34);
    for (int i = 0; i < fw_option_count(); i++) {
        const fw_option_t *r = fw_option_at(i);
        CU_ASSERT_PTR_EQUAL(fw_option_find(r->key), r);
        CU_ASSERT_TRUE(r->test[0] && r->source[0]);
        if (r->kind != FWO_TEXT)
            CHECK_REL(fw_option_value(r, &o), r->dflt, 0);
    }
    CU_ASSERT_STRING_EQUAL(o.attn_kernel, "cudnn");
    err_t e;
    CU_ASSERT_EQUAL(fw_option_set(&o, "cp_comm=a2a", &e), 0);
    CU_ASSERT_EQUAL(o.cp_comm, CP_A2A);
    CU_ASSERT_EQUAL(fw_option_set(&o, "overlap_p2p=true", &e), 0);
    CU_ASSERT_EQUAL(o.overlap_p2p, 1);
    CU_ASSERT_EQUAL(fw_option_set(&o, "bucket_params=2.5e8", &e), 0);
    CHECK_REL(o.bucket_params, 2.5e8, 0);
    CU_ASSERT_EQUAL(fw_option_set(&o, "attention_kernel=flash2", &e), 0);
    CU_ASSERT_STRING_EQUAL(o.attn_kernel, "flash2");
    CHECK_ERR(fw_option_set(&o, "eager_norm=0.5", &e), &e, ERR_INPUT, "--set", "eager_norm",
              "[1, 100]");
    CHECK_ERR(fw_option_set(&o, "cp_comm=p2p", &e), &e, ERR_INPUT, "ring, allgather or a2a");
    CHECK_ERR(fw_option_set(&o, "async_tp_grad=yes", &e), &e, ERR_INPUT, "true or false");
    CHECK_ERR(fw_option_set(&o, "overlap_grad_reduc=true", &e), &e, ERR_INPUT,
              "unknown option 'overlap_grad_reduc'", "overlap_grad_reduce");
    CHECK_ERR(fw_option_set(&o, "bucket_params", &e), &e, ERR_INPUT, "KEY=VALUE");
    CHECK_REL(o.bucket_params, 2.5e8, 0); /* a refused value changes nothing */
}

/* A preset read through a catalog is kept there (catalog_memo_*): the
 * second read is the memo's copy, equal to a fresh parse; a memo planted
 * under the preset's key is what the next read returns (so the memo path
 * is the one taken); another SCALEPLAN_OPTION_OFF is another key. */
static void test_preset_memo(void)
{
    err_t e;
    catalog_t *cat = catalog_create();
    CU_ASSERT_PTR_NOT_NULL_FATAL(cat);
    static fw_preset_t fresh, first, again, planted;
    CU_ASSERT_EQUAL_FATAL(fw_load("megatron-core", &fresh, &e), ERR_OK);
    CU_ASSERT_EQUAL_FATAL(fw_load_in(cat, "megatron-core", &first, &e), ERR_OK);
    CU_ASSERT_EQUAL_FATAL(fw_load_in(cat, "megatron-core", &again, &e), ERR_OK);
    CU_ASSERT_EQUAL(memcmp(&fresh, &first, sizeof fresh), 0);
    CU_ASSERT_EQUAL(memcmp(&first, &again, sizeof first), 0);
    const char *off = getenv("SCALEPLAN_OPTION_OFF");
    char key[400];
    snprintf(key, sizeof key, "%s\n%s\n%s", "sim/catalog/frameworks.json", "megatron-core",
             off ? off : "");
    planted = first;
    planted.opt.bucket_params = 12345;
    CU_ASSERT_EQUAL_FATAL(catalog_memo_put(cat, key, &planted, sizeof planted), 0);
    /* the first memo under a key is the one read; a fresh catalog has none */
    catalog_t *cat2 = catalog_create();
    CU_ASSERT_PTR_NOT_NULL_FATAL(cat2);
    CU_ASSERT_EQUAL_FATAL(catalog_memo_put(cat2, key, &planted, sizeof planted), 0);
    CU_ASSERT_EQUAL_FATAL(fw_load_in(cat2, "megatron-core", &again, &e), ERR_OK);
    CU_ASSERT_EQUAL(again.opt.bucket_params, 12345);
    CU_ASSERT_FALSE(catalog_memo_get(cat2, key, &again, sizeof again - 1));
    catalog_destroy(cat2);
    catalog_destroy(cat);
}

TEST_SUITE(suite_option_rows, "option_rows",
           TEST(test_option_table),
           TEST(test_preset_memo),
           TEST(mech_zero2_reduce_per_micro_batch),
           TEST(mech_overlap_grad_reduce),
           TEST(mech_grad_reduce_after_pipeline),
           TEST(mech_bf16_grad_all_reduce),
           TEST(mech_overlap_param_gather),
           TEST(mech_tp_comm_overlap),
           TEST(mech_async_tp_grad),
           TEST(mech_overlap_p2p),
           TEST(mech_p2p_whole_tensor),
           TEST(mech_bucket_params),
           TEST(mech_reduce_bytes),
           TEST(mech_fp8_param_gather),
           TEST(mech_fp8_tp_gather),
           TEST(mech_recompute_early_stop),
           TEST(mech_attention_kernel),
           TEST(mech_fp8_weight_cache),
           TEST(mech_eager_norm),
           TEST(mech_eager_rope),
           TEST(mech_eager_act),
           TEST(mech_eager_cp_merge),
           TEST(mech_cp_merge_bytes),
           TEST(mech_kv_repeated),
           TEST(mech_fp8_norm_cast),
           TEST(mech_fp8_saves_quantized),
           TEST(mech_ce_fwd_bytes),
           TEST(mech_ce_bwd_bytes),
           TEST(mech_ce_peak_bytes),
           TEST(mech_ce_tp_fwd_bytes),
           TEST(mech_ce_tp_bwd_bytes),
           TEST(mech_ce_tp_peak_bytes),
           TEST(mech_ce_compiled_fwd_bytes),
           TEST(mech_ce_compiled_bwd_bytes),
           TEST(mech_ce_compiled_peak_bytes));
