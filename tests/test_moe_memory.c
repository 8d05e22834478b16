/* Published per-GPU memory figures of mixture-of-experts training runs,
 * replayed with `scaleplan sim --json` and compared component by
 * component (tests/fixtures/validation/moe_memory/runs.csv; each row's
 * source, layout and assumptions in its columns and in SOURCES.md there).
 *
 * A row gives the sim arguments of its layout, the published GiB and what
 * it measures: a component of memory_gib ("params+grads", "optimizer",
 * "activations", the sum of the three, or "total" with buffers and
 * fragmentation), or, with base_args, what a switch saves (base less row).
 * Rows marked met=yes must agree within 10%; rows marked no print their
 * gap and must still miss, so that a change which meets them also updates
 * the table (the notes column says what the model keeps there). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "common/csv.h"
#include "models/memory.h"
#include "sim/scenario.h"
#include "sim/step.h"
#include "tests/mechanisms.h"
#include "tests/testing.h"

#define MOE_MEMORY_CSV "validation/moe_memory/runs.csv"
#define TOLERANCE 0.10

/* One memory_gib field of a sim run's JSON; NaN when absent. */
static double gib_field(const cJSON *mem, const char *name)
{
    const cJSON *v = cJSON_GetObjectItem(mem, name);
    return cJSON_IsNumber(v) ? v->valuedouble : NAN;
}

/* What `measure` names, read from memory_gib: a field, or fields joined
 * by '+' summed. NaN for a name the JSON does not have. */
static double measured(const cJSON *mem, const char *measure)
{
    double sum = 0;
    char buf[128];
    snprintf(buf, sizeof buf, "%s", measure);
    for (char *save = NULL, *f = strtok_r(buf, "+", &save); f; f = strtok_r(NULL, "+", &save))
        sum += gib_field(mem, f);
    return sum;
}

/* The measure of one sim run with args (--allow-oom --json added). */
static double run_measure(const char *args, const char *measure)
{
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "sim %s --allow-oom --json", args);
    cJSON *j = cmd_expect_json(cmd, 0);
    CU_ASSERT_PTR_NOT_NULL_FATAL(j);
    double v = measured(cJSON_GetObjectItem(j, "memory_gib"), measure);
    cJSON_Delete(j);
    return v;
}

/* Every row of the fixture that the command line can replay. */
static void test_moe_memory_published(void)
{
    csv_t *c = NULL;
    err_t e;
    CU_ASSERT_EQUAL_FATAL(csv_load(fixture(MOE_MEMORY_CSV), &c, &e), 0);
    int met = 0, rows = 0;
    for (int i = 0; i < csv_rows(c); i++) {
        const char *id = csv_get(c, i, "row_id"), *measure = csv_get(c, i, "measure");
        if (strcmp(measure, "c-api") == 0)
            continue; /* replayed by its own test below */
        const char *base = csv_get(c, i, "base_args");
        double published = atof(csv_get(c, i, "published_gib"));
        double predicted = run_measure(csv_get(c, i, "sim_args"), measure);
        if (base[0])
            predicted = run_measure(base, measure) - predicted;
        CU_ASSERT_FATAL(isfinite(predicted));
        double err = predicted / published - 1;
        bool want = strcmp(csv_get(c, i, "met"), "yes") == 0;
        printf("\n  %s %-48.48s published %6.1f predicted %6.1f GiB  %+6.1f%%%s", id,
               csv_get(c, i, "what"), published, predicted, 100 * err, want ? "" : "  (not met)");
        rows++;
        met += fabs(err) <= TOLERANCE;
        /* a met row stays met; a row not met says so until it is */
        CU_ASSERT_EQUAL(fabs(err) <= TOLERANCE, want);
    }
    printf("\n  %d of %d published MoE memory figures within 10%%\n", met, rows);
    csv_free(c);
}

/* The activations of stage `stage` of p's priced scenario, bytes. */
static double stage_activations(const priced_t *p, int stage)
{
    memory_opts_t mo;
    sim_memory_opts(&p->s.profile, &p->s.opt, &mo);
    model_memory_t mm;
    model_memory_stage(&p->s.model, &p->s.layout, stage, &mo, &mm);
    return mm.activations_bytes;
}

/* The Table 3 layout of the fixture (MM01-MM04) through the C API: DeepSeek-V3
 * on 256 GB200s, TP1 PP4 VPP4 EP64, one 4,096-token sequence a micro-batch,
 * 8,192 a step, bf16, no recompute; probs_in_act as Megatron-Core applies
 * the router's probabilities (true: on the activation, 0.13 on). */
static void price_table3(priced_t *p, bool probs_in_act)
{
    CU_ASSERT_EQUAL_FATAL(mech_begin(p, "deepseek-v3", "gb200", 256, "megatron-core"), 0);
    layout_t *l = &p->s.layout;
    mech_set_batch(l, 1, 1, 8192, 4096);
    l->pp = 4;
    l->vpp = 4;
    l->schedule = SCHEDULE_INTERLEAVED;
    l->ep = 64;
    l->first_stage_layers = 3;
    l->last_stage_layers = 2;
    l->distributed_optimizer = true;
    l->recompute = RECOMPUTE_NONE;
    p->s.opt.moe.probs_in_act = probs_in_act;
    CU_ASSERT_EQUAL_FATAL(mech_price(p), 0);
}

/* MM11: the memory-efficient permutation (the router's probabilities
 * weight the experts' activation, so the expert outputs before the combine
 * are not kept): what it saves on the Table 3 layout's peak stage, against
 * the published figure. Not a command-line switch, so replayed here. */
static void test_moe_memory_permutation(void)
{
    csv_t *c = NULL;
    err_t e;
    CU_ASSERT_EQUAL_FATAL(csv_load(fixture(MOE_MEMORY_CSV), &c, &e), 0);
    double published = NAN;
    bool want = false;
    for (int i = 0; i < csv_rows(c); i++)
        if (strcmp(csv_get(c, i, "row_id"), "MM11") == 0) {
            published = atof(csv_get(c, i, "published_gib"));
            want = strcmp(csv_get(c, i, "met"), "yes") == 0;
        }
    csv_free(c);
    CU_ASSERT_FATAL(isfinite(published));
    priced_t on, off;
    price_table3(&on, true);
    price_table3(&off, false);
    /* expert outputs: 4,096 tokens x top-8 x 7,168 wide, bf16, per MoE
     * layer and micro-batch in flight: every stage saves some */
    const double per = 4096.0 * 8 * 7168 * 2;
    int peak = 0;
    double top = 0;
    for (int s = 0; s < on.s.layout.pp; s++) {
        double a_on = stage_activations(&on, s), a_off = stage_activations(&off, s);
        double kept = (a_off - a_on) / per;
        CU_ASSERT(kept >= 1); /* (a fraction of a micro-batch where the
                                 interleaved schedule's count is one) */
        if (a_off > top)
            top = a_off, peak = s;
    }
    /* what the peak stage without it saves */
    double saved = (top - stage_activations(&on, peak)) / (1024.0 * 1024 * 1024);
    double err = saved / published - 1;
    printf("\n  MM11 saved by memory-efficient permutation         published %6.1f predicted %6.1f "
           "GiB  %+6.1f%%%s\n",
           published, saved, 100 * err, want ? "" : "  (not met)");
    CU_ASSERT_EQUAL(fabs(err) <= TOLERANCE, want);
    scenario_free(&on.s);
    scenario_free(&off.s);
}

/* torchtitan's per-op checkpointing of an MoE block, counted by hand for
 * Qwen3-30B-A3B (h 2048, 32 query heads and 4 KV heads of 128, 128 experts
 * top-8, no shared expert; every block MoE) at 4,096 tokens, bf16, EP 4:
 * the matmuls in order are wq, wk, wv, wo and the router gate, of which
 * the first, third and fifth are kept (wq 4096, wv 512, the gate's 128 in
 * fp32), with the block input (2048), the attention output (4096) and its
 * fp32 log-sum-exp (32 heads), and the dispatch and combine all-to-all
 * outputs (8 x 2048 each). At EP 1 there is no all-to-all to keep. */
static void test_moe_ops_checkpoint_by_hand(void)
{
    model_t m;
    err_t e;
    CU_ASSERT_EQUAL_FATAL(model_load("qwen3-30b-a3b", &m, &e), 0);
    CU_ASSERT_EQUAL_FATAL(m.moe.n_moe_layers, m.n_layers);
    layout_t l;
    layout_defaults(&l);
    l.micro_batch = 1;
    l.global_batch = 8;
    l.seq_len = 4096;
    l.ep = 4;
    CU_ASSERT_EQUAL_FATAL(layout_finalize(&l, &m, 8, &e), 0);
    l.recompute = RECOMPUTE_OPS;
    double a2a = 2.0 * 8 * 2048 * 2;
    double per_token = 2048 * 2 + 4096 * 2 + 32 * 4 + 4096 * 2 + 512 * 2 + 128 * 4;
    CHECK_REL(model_layer_activation_bytes(&m, &l), 4096 * (per_token + a2a), 1e-12);
    l.ep = 1;
    CHECK_REL(model_layer_activation_bytes(&m, &l), 4096 * per_token, 1e-12);
}

TEST_SUITE(suite_moe_memory, "moe_memory", TEST(test_moe_memory_published),
           TEST(test_moe_memory_permutation), TEST(test_moe_ops_checkpoint_by_hand));
