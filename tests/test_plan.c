/* Tests of the planner (sim/plan, sim/ladder): the ladder's properties
 * hold, and impossible requests get the nearest plan. */
#include <math.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plan/ladder.h"
#include "frameworks/framework.h"
#include "validate/published.h"
#include "plan/plan.h"
#include "sim/scenario.h"
#include "sim/step.h"
#include "tests/testing.h"

static void ladder_for(const char *model, const char *gpu, double tokens, int lo, int hi,
                       ladder_input_t *in, model_t *m, cluster_t *c, profile_t *p,
                       failure_set_t *f)
{
    err_t e;
    cluster_spec_t spec = {.gpu = gpu, .n_gpus = 8};
    CU_ASSERT_EQUAL_FATAL(model_load(model, m, &e), 0);
    CU_ASSERT_EQUAL_FATAL(cluster_resolve(&spec, c, &e), 0);
    CU_ASSERT_EQUAL_FATAL(prof_load_default(c->gpu.name, p, &e), 0);
    CU_ASSERT_EQUAL_FATAL(failure_load_set(NULL, f, &e), 0);
    memset(in, 0, sizeof *in);
    in->model = m;
    in->base = c;
    in->profile = p;
    in->failures = f;
    in->tokens = tokens;
    in->usd_per_gpu_hour = 2.49;
    plan_space_default(&in->space);
    in->space.seq_len = 4096;
    in->space.global_batch_min = in->space.global_batch_max = 1024;
    in->objective = PLAN_TIME;
    in->min_marginal = 0.5;
    in->min_gpus = lo;
    in->max_gpus = hi;
    CU_ASSERT_EQUAL_FATAL(rel_config_init(&in->rel, c, f, NULL, &e), 0);
    in->rel.trials = 200;
    in->rel.spares = -1;
    in->ckpt_bytes = 12 * 8e9;
}

/* Rung 1 runs at 100% efficiency; cost is GPU-hours x price, i.e. the
 * failure-free GPU-hours x price x (1 + the simulated overhead); where a
 * doubling keeps the layout (only DP grows), GPU-hours do not fall. */
static void test_ladder_properties(void)
{
    ladder_input_t in;
    model_t m;
    cluster_t c;
    profile_t p;
    failure_set_t f;
    ladder_for("llama3-8b", "h100-sxm", 1e12, 8, 1024, &in, &m, &c, &p, &f);
    ladder_t *l = calloc(1, sizeof *l);
    err_t e;
    CU_ASSERT_EQUAL_FATAL(plan_ladder(&in, l, &e), 0);
    CU_ASSERT_EQUAL(l->n, 8);
    CU_ASSERT_TRUE_FATAL(l->first_feasible >= 0);
    CHECK_REL(l->rung[l->first_feasible].scaling_efficiency, 1.0, 1e-12);
    for (int i = 0; i < l->n; i++) {
        const rung_t *r = &l->rung[i];
        if (!r->feasible)
            continue;
        double overhead = r->days_p50 / r->ideal_days - 1;
        double ideal_gpu_hours = r->gpus * r->ideal_days * 24;
        CHECK_REL(r->cost_usd, ideal_gpu_hours * 2.49 * (1 + overhead), 1e-9);
        CU_ASSERT_TRUE(r->main_loss != NULL);
        if (i > l->first_feasible) {
            const rung_t *q = &l->rung[i - 1];
            const layout_t *a = &q->layout, *b = &r->layout;
            /* the same layout but for DP (field by field: memcmp would
             * read the struct's padding) */
            bool same = a->tp == b->tp && a->pp == b->pp && a->cp == b->cp && a->ep == b->ep &&
                        a->etp == b->etp && a->vpp == b->vpp &&
                        a->micro_batch == b->micro_batch &&
                        a->global_batch == b->global_batch && a->zero == b->zero &&
                        a->distributed_optimizer == b->distributed_optimizer &&
                        a->recompute == b->recompute && a->schedule == b->schedule &&
                        a->sequence_parallel == b->sequence_parallel &&
                        a->precision == b->precision && a->seq_len == b->seq_len &&
                        a->first_stage_layers == b->first_stage_layers &&
                        a->last_stage_layers == b->last_stage_layers && a->offload == b->offload;
            if (same) {
                CU_ASSERT_TRUE(r->gpu_hours >= q->gpu_hours * (1 - 0.005));
                CU_ASSERT_TRUE(r->gpus * r->ideal_days >= q->gpus * q->ideal_days * (1 - 1e-9));
            }
        }
    }
    CU_ASSERT_TRUE(l->best >= 0 && l->meets_constraints);
    char text[4096];
    plan_recommend(&in, l, text, sizeof text);
    CU_ASSERT_PTR_NOT_NULL(strstr(text, "Reserve"));
    CU_ASSERT_PTR_NOT_NULL(strstr(text, "more than 10% slower"));
    CU_ASSERT_PTR_NOT_NULL(strstr(text, "first look at"));
    prof_free(&p);
    free(l);
}

/* The guide's "70B on 2T tokens, 256 H100s, about 14 days": no plan on 256
 * GPUs meets it, the answer says how far off it is and that the MFU it
 * would need exceeds the peak. A budget below the cheapest plan and a model
 * too big for every rung get the nearest plan and what must change. */
static void test_impossible_requests(void)
{
    ladder_input_t in;
    model_t m;
    cluster_t c;
    profile_t p;
    failure_set_t f;
    ladder_for("llama3-70b", "h100-sxm", 2e12, 256, 256, &in, &m, &c, &p, &f);
    in.space.seq_len = 8192;
    in.space.global_batch_min = in.space.global_batch_max = 512;
    in.deadline_s = 14 * 86400.0;
    ladder_t *l = calloc(1, sizeof *l);
    err_t e;
    CU_ASSERT_EQUAL_FATAL(plan_ladder(&in, l, &e), 0);
    CU_ASSERT_FALSE(l->meets_constraints);
    CU_ASSERT_TRUE_FATAL(l->best >= 0);
    CU_ASSERT_TRUE(l->rung[l->best].days_p50 > 14);
    char text[4096];
    plan_recommend(&in, l, text, sizeof text);
    CU_ASSERT_PTR_NOT_NULL(strstr(text, "No plan meets the 14.0-day deadline"));
    CU_ASSERT_PTR_NOT_NULL(strstr(text, "more than the GPUs' peak"));
    /* budget */
    in.deadline_s = 0;
    in.budget_usd = 1000;
    CU_ASSERT_EQUAL_FATAL(plan_ladder(&in, l, &e), 0);
    CU_ASSERT_FALSE(l->meets_constraints);
    plan_recommend(&in, l, text, sizeof text);
    CU_ASSERT_PTR_NOT_NULL(strstr(text, "No plan meets the $1,000 budget (the cheapest"));
    /* issue 17 row 12: both broken, both named before the nearest plan */
    in.deadline_s = 86400;
    CU_ASSERT_EQUAL_FATAL(plan_ladder(&in, l, &e), 0);
    CU_ASSERT_FALSE(l->meets_constraints);
    plan_recommend(&in, l, text, sizeof text);
    CU_ASSERT_EQUAL(strncmp(text, "No plan meets the 1.0-day deadline (the fastest plan takes ",
                            59), 0);
    const char *budget = strstr(text, "the $1,000 budget (the cheapest plan costs $");
    const char *reserve = strstr(text, "Reserve");
    CU_ASSERT_TRUE(budget && reserve && budget < reserve);
    in.deadline_s = 0;
    prof_free(&p);
    /* too big everywhere */
    ladder_for("llama3-405b", "h100-sxm", 15e12, 8, 16, &in, &m, &c, &p, &f);
    CU_ASSERT_EQUAL_FATAL(plan_ladder(&in, l, &e), 0);
    CU_ASSERT_EQUAL(l->best, -1);
    plan_recommend(&in, l, text, sizeof text);
    CU_ASSERT_PTR_NOT_NULL(strstr(text, "No GPU count from 8 to 16"));
    CU_ASSERT_PTR_NOT_NULL(strstr(text, "GPUs or more"));
    prof_free(&p);
    free(l);
}

/* The search is exhaustive: the same answer from one thread and from all,
 * and a layout the search lists is never beaten by one it pruned. */
static void test_search_consistent(void)
{
    err_t e;
    model_t m;
    cluster_t c;
    profile_t p;
    cluster_spec_t spec = {.gpu = "h100-sxm", .n_gpus = 64};
    CU_ASSERT_EQUAL_FATAL(model_load("llama3-8b", &m, &e), 0);
    CU_ASSERT_EQUAL_FATAL(cluster_resolve(&spec, &c, &e), 0);
    CU_ASSERT_EQUAL_FATAL(prof_load_default("h100-sxm", &p, &e), 0);
    plan_space_t s;
    plan_space_default(&s);
    s.seq_len = 4096;
    s.global_batch_min = 256;
    s.global_batch_max = 1024; /* a range: the search may use any batch in it */
    s.framework = "megatron-core";
    plan_search_t a;
    CU_ASSERT_EQUAL_FATAL(plan_search(&m, &c, &p, &s, NULL, &a, &e), 0);
    CU_ASSERT_TRUE_FATAL(a.found);
    CU_ASSERT_TRUE(a.candidates > 100 && a.simulated > 0);
    CU_ASSERT_TRUE(a.layout.global_batch >= 256 && a.layout.global_batch <= 1024);
    CU_ASSERT_TRUE(a.n_ranked >= 2);
    for (int k = 1; k < a.n_ranked; k++)
        CU_ASSERT_TRUE(a.top_step_s[k - 1] / a.top_layout[k - 1].global_batch <=
                       a.top_step_s[k] / a.top_layout[k].global_batch * (1 + 1e-9));
    plan_search_t b;
    layout_t ref = a.top_layout[1];
    CU_ASSERT_EQUAL_FATAL(plan_search(&m, &c, &p, &s, &ref, &b, &e), 0);
    char da[200], db[200];
    layout_describe(&a.layout, da, sizeof da);
    layout_describe(&b.layout, db, sizeof db);
    CU_ASSERT_STRING_EQUAL(da, db);
    CU_ASSERT_EQUAL(b.rank_of_reference, 2);
    CU_ASSERT_TRUE(b.reference_of >= a.simulated);
    prof_free(&p);
}

static void setup_search(const char *model, const char *gpu, int gpus, int seq, int gb,
                         model_t *m, cluster_t *c, profile_t *p, plan_space_t *s)
{
    err_t e;
    cluster_spec_t spec = {.gpu = gpu, .n_gpus = gpus};
    CU_ASSERT_EQUAL_FATAL(model_load(model, m, &e), 0);
    CU_ASSERT_EQUAL_FATAL(cluster_resolve(&spec, c, &e), 0);
    CU_ASSERT_EQUAL_FATAL(prof_load_default(c->gpu.name, p, &e), 0);
    plan_space_default(s);
    s->seq_len = seq;
    s->global_batch_min = s->global_batch_max = gb;
}

/* Each framework's space is what it runs: FSDP-only frameworks get no TP
 * or PP, Megatron 2022 no CP and no FSDP, DeepSpeed no ZeRO-2/3 with
 * pipeline stages; every runner-up obeys the same. */
static void test_framework_spaces(void)
{
    model_t m;
    cluster_t c;
    profile_t p;
    plan_space_t s;
    err_t e;
    setup_search("llama3-8b", "h100-sxm", 64, 8192, 256, &m, &c, &p, &s);
    static const char *const fws[] = {"fsdp", "llm-foundry", "megatron-2022", "deepspeed",
                                      "torchtitan-2025-06", "megatron-core"};
    for (size_t f = 0; f < sizeof fws / sizeof *fws; f++) {
        s.framework = fws[f];
        plan_search_t r;
        CU_ASSERT_EQUAL_FATAL(plan_search(&m, &c, &p, &s, NULL, &r, &e), 0);
        CU_ASSERT_TRUE_FATAL(r.found);
        CU_ASSERT_STRING_EQUAL(r.framework, fws[f]);
        fw_preset_t fw;
        CU_ASSERT_EQUAL_FATAL(fw_load(fws[f], &fw, &e), 0);
        for (int k = 0; k < r.n_ranked; k++) {
            const layout_t *l = &r.top_layout[k];
            sim_options_t o;
            layout_t scratch = *l;
            fw_apply(&fw, &o, &scratch);
            CU_ASSERT_EQUAL(fw_check_layout(&fw, l, &o, &e), 0);
            if (strcmp(fws[f], "fsdp") == 0 || strcmp(fws[f], "llm-foundry") == 0)
                CU_ASSERT_TRUE(l->tp == 1 && l->pp == 1 && l->zero >= 2);
            if (strcmp(fws[f], "megatron-2022") == 0)
                CU_ASSERT_TRUE(l->cp == 1 && l->zero == 0);
            if (strcmp(fws[f], "deepspeed") == 0 && l->pp > 1)
                CU_ASSERT_TRUE(l->zero <= 1);
        }
    }
    /* no framework named: every plannable one, each with its best */
    s.framework = NULL;
    plan_search_t all;
    CU_ASSERT_EQUAL_FATAL(plan_search(&m, &c, &p, &s, NULL, &all, &e), 0);
    CU_ASSERT_TRUE(all.n_frameworks >= 5);
    for (int i = 0; i < all.n_frameworks; i++)
        if (all.per_framework[i].found)
            CU_ASSERT_TRUE(all.per_framework[i].tokens_per_s <= all.result.tokens_per_s * (1 + 1e-9));
    prof_free(&p);
}

/* Constraints fix or bound a dimension; one that empties the space is
 * named with why. */
static void test_constraints(void)
{
    model_t m;
    cluster_t c;
    profile_t p;
    plan_space_t s;
    err_t e;
    setup_search("llama3-70b", "h100-sxm", 256, 8192, 512, &m, &c, &p, &s);
    s.framework = "megatron-core";
    s.tp = (plan_range_t){4, 4};
    s.pp = (plan_range_t){2, 4};
    plan_search_t r;
    CU_ASSERT_EQUAL_FATAL(plan_search(&m, &c, &p, &s, NULL, &r, &e), 0);
    CU_ASSERT_TRUE_FATAL(r.found);
    for (int k = 0; k < r.n_ranked; k++) {
        CU_ASSERT_EQUAL(r.top_layout[k].tp, 4);
        CU_ASSERT_TRUE(r.top_layout[k].pp >= 2 && r.top_layout[k].pp <= 4);
    }
    /* TP 3 divides neither the 64 heads nor 256 GPUs */
    s.tp = (plan_range_t){3, 3};
    s.pp = (plan_range_t){0, 0};
    CU_ASSERT_EQUAL_FATAL(plan_search(&m, &c, &p, &s, NULL, &r, &e), 0);
    CU_ASSERT_FALSE(r.found);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.constraint_note, "--tp 3"));
    /* recompute named: only those modes */
    s.tp = (plan_range_t){0, 0};
    s.recompute_mask = 1u << RECOMPUTE_FULL;
    CU_ASSERT_EQUAL_FATAL(plan_search(&m, &c, &p, &s, NULL, &r, &e), 0);
    CU_ASSERT_TRUE(r.found && r.layout.recompute == RECOMPUTE_FULL);
    /* a schedule the named framework does not run leaves it no pipeline */
    s.recompute_mask = 0;
    s.schedule_mask = 1u << SCHEDULE_DUALPIPEV;
    s.framework = "megatron-core";
    CHECK_ERR(plan_search(&m, &c, &p, &s, NULL, &r, &e), &e, ERR_INPUT, "--schedule",
              "megatron-core does not run dualpipev");
    s.schedule_mask = 0;
    /* a framework that cannot train in the precision */
    s.recompute_mask = 0;
    s.framework = "megatron-2021";
    s.precision = PRECISION_FP8;
    CHECK_ERR(plan_search(&m, &c, &p, &s, NULL, &r, &e), &e, ERR_INPUT, "--precision",
              "megatron-2021");
    prof_free(&p);
}

/* Megatron's block recompute in the search: Llama 3 70B on 64 H100s at
 * TP8 PP2, micro-batch 2 x 8192, does not fit without recompute; the
 * planner rebuilds the fewest layers per pipeline chunk that fit (fewer
 * than all 40) and that beats full recompute of every layer; one layer
 * fewer does not fit. A framework without block recompute (DeepSpeed)
 * rebuilds every layer. */
static void test_block_recompute(void)
{
    model_t m;
    cluster_t c;
    profile_t p;
    plan_space_t s;
    err_t e;
    setup_search("llama3-70b", "h100-sxm", 64, 8192, 256, &m, &c, &p, &s);
    s.framework = "megatron-core";
    s.tp = (plan_range_t){8, 8};
    s.pp = (plan_range_t){2, 2};
    s.cp = (plan_range_t){1, 1};
    s.vpp = (plan_range_t){1, 1};
    s.micro_batch = (plan_range_t){2, 2};
    plan_search_t r;
    CU_ASSERT_EQUAL_FATAL(plan_search(&m, &c, &p, &s, NULL, &r, &e), 0);
    CU_ASSERT_TRUE_FATAL(r.found);
    layout_t best = r.layout;
    CU_ASSERT_EQUAL(best.recompute, RECOMPUTE_FULL);
    CU_ASSERT_TRUE(best.recompute_layers > 0 && best.recompute_layers < 40);
    sim_ctx_t *ctx = sim_ctx_create();
    sim_options_t opt;
    fw_preset_t fw;
    CU_ASSERT_EQUAL_FATAL(fw_load("megatron-core", &fw, &e), 0);
    opt = fw.opt;
    memory_opts_t mo;
    sim_memory_opts(&p, &opt, &mo);
    sim_result_t partial, all;
    sim_input_t in = {&m, &best, &c, &p, opt};
    CU_ASSERT_EQUAL_FATAL(sim_run_step(ctx, &in, &partial, &e), 0);
    layout_t every = best;
    every.recompute_layers = 0;
    in.layout = &every;
    CU_ASSERT_EQUAL_FATAL(sim_run_step(ctx, &in, &all, &e), 0);
    CU_ASSERT_TRUE(partial.step_time_s < all.step_time_s);
    layout_t fewer = best;
    fewer.recompute_layers = best.recompute_layers - 1;
    if (fewer.recompute_layers > 0) {
        model_memory_t mm;
        model_memory_peak(&m, &fewer, &mo, &mm);
        CU_ASSERT_TRUE(mm.total_bytes / (1024.0 * 1024 * 1024) > c.gpu.memory_gib);
    }
    sim_ctx_destroy(ctx);
    s.framework = "deepspeed";
    s.pp = (plan_range_t){0, 0};
    CU_ASSERT_EQUAL_FATAL(plan_search(&m, &c, &p, &s, NULL, &r, &e), 0);
    for (int k = 0; r.found && k < r.n_ranked; k++)
        CU_ASSERT_EQUAL(r.top_layout[k].recompute_layers, 0);
    prof_free(&p);
}

/* Llama 3 405B on 16,384 H100s with Meta's batch (Dubey et al. 2024,
 * Table 4: 2,048 sequences of 8,192 tokens, TP8 CP1 PP16 DP128; sec.
 * 3.3.2: interleaved, one layer fewer on the first and last stages, "so
 * that the first model chunk on the first stage has only the embedding":
 * one layer a chunk, 8 chunks a rank; FSDP sharding optimizer state and
 * gradients, ZeRO-2 style). Searching every framework, the plan is at least
 * as fast as the simulator says Meta's layout is. With TP 8 and PP 16
 * fixed, the best layout of the engine Meta's rows replay with (torchtitan,
 * Meta's open stack: FSDP with the model split) is Meta's own: CP 1, DP
 * 128, interleaved with the embedding and the loss alone on their chunks,
 * ZeRO-2; only its recompute differs (torchtitan's tensor parallelism
 * keeps the gathered GEMM inputs, and the layout needs 153 GiB without
 * recompute). The search keeps it among its frameworks' bests. */
static void test_meta_405b(void)
{
    model_t m;
    cluster_t c;
    profile_t p;
    plan_space_t s;
    err_t e;
    setup_search("llama3-405b", "h100-sxm", 16384, 8192, 2048, &m, &c, &p, &s);
    plan_search_t r;
    CU_ASSERT_EQUAL_FATAL(plan_search(&m, &c, &p, &s, NULL, &r, &e), 0);
    CU_ASSERT_TRUE_FATAL(r.found);
    layout_t meta;
    layout_defaults(&meta);
    meta.tp = 8;
    meta.pp = 16;
    meta.vpp = 8;
    meta.schedule = SCHEDULE_INTERLEAVED;
    meta.first_stage_layers = meta.last_stage_layers = LAYOUT_STAGE_EMPTY;
    meta.global_batch = 2048;
    meta.seq_len = 8192;
    meta.sequence_parallel = true;
    meta.distributed_optimizer = true;
    meta.grad_bytes = 4;
    CU_ASSERT_EQUAL_FATAL(layout_finalize(&meta, &m, 16384, &e), 0);
    CU_ASSERT_EQUAL(meta.dp, 128);
    CU_ASSERT_EQUAL(layout_chunk_layers(&meta, &m, 0), 0);
    CU_ASSERT_EQUAL(layout_chunk_layers(&meta, &m, 1), 1);
    sim_options_t o;
    layout_t scratch = meta;
    CU_ASSERT_EQUAL_FATAL(sim_options_framework("megatron-core", NULL, &o, &scratch, &e), 0);
    CU_ASSERT_EQUAL_FATAL(sim_options_precision(&o, PRECISION_BF16, &e), 0);
    sim_input_t in = {&m, &meta, &c, &p, o};
    sim_ctx_t *ctx = sim_ctx_create();
    sim_result_t res;
    CU_ASSERT_EQUAL_FATAL(sim_run_step(ctx, &in, &res, &e), 0);
    sim_ctx_destroy(ctx);
    CU_ASSERT_TRUE(r.result.tokens_per_s >= res.tokens_per_s);
    /* TP 8 and PP 16 fixed, every framework searched: torchtitan's best is
     * Meta's layout */
    s.tp = (plan_range_t){8, 8};
    s.pp = (plan_range_t){16, 16};
    CU_ASSERT_EQUAL_FATAL(plan_search(&m, &c, &p, &s, NULL, &r, &e), 0);
    CU_ASSERT_TRUE_FATAL(r.found);
    CU_ASSERT_TRUE(r.result.tokens_per_s >= res.tokens_per_s);
    const plan_fw_best_t *tt = NULL;
    for (int i = 0; i < r.n_frameworks; i++)
        if (strcmp(r.per_framework[i].name, "torchtitan-2025-12") == 0)
            tt = &r.per_framework[i];
    CU_ASSERT_PTR_NOT_NULL_FATAL(tt);
    CU_ASSERT_TRUE_FATAL(tt->found);
    const layout_t *b = &tt->layout;
    printf("\n  torchtitan's best TP%d CP%d PP%d VPP%d DP%d ZeRO-%d first/last %d/%d recompute %s "
           "(Meta: TP8 CP1 PP16 VPP8 DP128 ZeRO-2, embedding and loss alone)\n",
           b->tp, b->cp, b->pp, b->vpp, b->dp, b->zero, b->first_stage_layers,
           b->last_stage_layers, layout_recompute_name(b->recompute));
    CU_ASSERT_EQUAL(b->tp, 8);
    CU_ASSERT_EQUAL(b->pp, 16);
    CU_ASSERT_EQUAL(b->cp, 1);
    CU_ASSERT_EQUAL(b->dp, 128);
    CU_ASSERT_EQUAL(b->micro_batch, 1);
    CU_ASSERT_EQUAL(b->zero, 2);
    CU_ASSERT_EQUAL(b->schedule, SCHEDULE_INTERLEAVED);
    CU_ASSERT_EQUAL(b->vpp, 8);
    CU_ASSERT_EQUAL(layout_chunk_layers(b, &m, 0), 0);
    CU_ASSERT_EQUAL(layout_chunk_layers(b, &m, 16 * 8 - 1), 0);
    prof_free(&p);
}

/* The planner's pick where a framework's own team published its tuned
 * layout: Megatron-Bridge's Llama 3.1 405B pre-training recipe on 1,024
 * H100s (throughput.csv T143, 26.04; the same layout in 25.09 and 25.11,
 * tests/fixtures/validation/more/runs.csv H013, H034): FP8, 1,536 sequences
 * of 8,192 tokens, TP8 PP8 CP2 VP8 (two layers a chunk, one on the first
 * and last beside the embedding and the loss), micro-batch 1. Searching
 * everything the framework runs (TP, CP, PP, VPP, uneven stages,
 * micro-batch, ZeRO, recompute) must land on that layout's shape: CP 2 at
 * 8K tokens is the team's choice too, for the reason the model gives (twice
 * the micro-batches per pipeline, half the bubble, with a KV exchange that
 * GQA makes small). The space also holds one layer a chunk (VP16, the
 * embedding and the loss alone on theirs), which halves a bubble already
 * 0.5% of the step at 192 micro-batches and doubles the stage-to-stage
 * transfers: a tie the model may break either way. Since GEMM inputs are
 * kept in fp8 as Transformer Engine keeps them (memory), Megatron's FSDP
 * with TP8 CP2, one pipeline stage and 26 layers of each chunk recomputed
 * fits too and the model puts it 2.2% ahead: within the model's error, so
 * the published layout must rank in the first five and within 3% of the
 * pick, and the pick must keep the published TP and CP. */
static void test_bridge_405b_recipe(void)
{
    model_t m;
    cluster_t c;
    profile_t p;
    plan_space_t s;
    err_t e;
    setup_search("llama3-405b", "h100-sxm", 1024, 8192, 1536, &m, &c, &p, &s);
    s.framework = "megatron-bridge-26.04";
    s.precision = PRECISION_FP8;
    plan_search_t r;
    CU_ASSERT_EQUAL_FATAL(plan_search(&m, &c, &p, &s, NULL, &r, &e), 0);
    CU_ASSERT_TRUE_FATAL(r.found);
    printf("\n  pick TP%d CP%d PP%d VPP%d mb%d recompute %d (published TP8 CP2 PP8 VP8 mb1 none)",
           r.layout.tp, r.layout.cp, r.layout.pp, r.layout.vpp, r.layout.micro_batch,
           (int)r.layout.recompute);
    CU_ASSERT_EQUAL(r.layout.tp, 8);
    CU_ASSERT_EQUAL(r.layout.cp, 2);
    /* the published layout */
    layout_t published = r.layout;
    published.pp = 8;
    published.vpp = 8;
    published.schedule = SCHEDULE_INTERLEAVED;
    published.micro_batch = 1;
    published.recompute = RECOMPUTE_NONE;
    published.recompute_layers = 0;
    published.zero = 1;
    published.distributed_optimizer = true;
    published.first_stage_layers = published.last_stage_layers = 1; /* (126 + 2) / 64 - 1 */
    published.grad_accum = 0;
    CU_ASSERT_EQUAL_FATAL(layout_finalize(&published, &m, 1024, &e), 0);
    double best_step = r.result.step_time_s;
    CU_ASSERT_EQUAL_FATAL(plan_search(&m, &c, &p, &s, &published, &r, &e), 0);
    printf(", published rank %d of %ld, %.2f%% behind\n", r.rank_of_reference, r.reference_of,
           100 * (r.reference_step_s / best_step - 1));
    CU_ASSERT_TRUE(r.rank_of_reference >= 1 && r.rank_of_reference <= 5);
    CU_ASSERT_TRUE(r.reference_step_s <= 1.03 * best_step);
    prof_free(&p);
}

/* The cluster, default profile and search space of a replayed published
 * row: its framework, sequence, global batch and precision. */
static void row_space(const pub_row_t *v, cluster_t *c, profile_t *p, plan_space_t *s)
{
    err_t e;
    cluster_spec_t spec = {.cluster = v->cluster, .n_gpus = v->gpus};
    CU_ASSERT_EQUAL_FATAL(cluster_resolve(&spec, c, &e), 0);
    CU_ASSERT_EQUAL_FATAL(prof_load_default(c->gpu.name, p, &e), 0);
    plan_space_default(s);
    s->framework = v->framework;
    s->seq_len = v->sim_layout.seq_len;
    s->global_batch_min = s->global_batch_max = v->sim_layout.global_batch;
    s->precision = v->sim_layout.precision;
}

/* Published layouts ranked among every layout their framework runs at that
 * scale with the same recompute method (the rank counts every candidate
 * that fits, simulating those the bound cannot rule out). The teams tuned
 * the pipelined layouts: one the model puts more than 15% behind its best
 * says the model (or the search) is off. SC21 Table 1 rows (T001-T010,
 * Megatron-LM 2021, full activation checkpointing). */
static void test_published_ranks(void)
{
    pub_row_t *rows = NULL;
    int n = 0;
    err_t e;
    CU_ASSERT_EQUAL_FATAL(pub_replay(fixture("validation/throughput.csv"), NULL, &rows, &n, &e), 0);
    int checked = 0;
    for (int i = 0; i < n; i++) {
        pub_row_t *v = &rows[i];
        if (v->skipped || strcmp(v->group, "megatron-2021") != 0 || strcmp(v->row_id, "T011") >= 0)
            continue;
        cluster_t c;
        profile_t p;
        plan_space_t s;
        row_space(v, &c, &p, &s);
        /* SC21 checkpointed activations in every run as a method, not as a
         * choice of layout: rank among layouts that do the same */
        s.recompute_mask = 1u << v->sim_layout.recompute;
        plan_search_t r;
        CU_ASSERT_EQUAL_FATAL(plan_search(&v->sim_model, &c, &p, &s, &v->sim_layout, &r, &e), 0);
        CU_ASSERT_TRUE_FATAL(r.found);
        double published_tps = (double)v->sim_layout.global_batch * v->sim_layout.seq_len /
                               r.reference_step_s;
        printf("\n  %s %-10s %5d GPUs: published %-58s rank %d of %ld (%.1f%% behind the best)",
               v->row_id, v->model, v->gpus, v->layout, r.rank_of_reference, r.reference_of,
               100 * (1 - published_tps / r.result.tokens_per_s));
        CU_ASSERT_TRUE(r.rank_of_reference >= 1 && r.rank_of_reference <= r.reference_of);
        /* T001-T005 keep SC21's weak-scaling method (TP grows to 8 within
         * a node before PP is used), which the model puts up to 23% behind
         * its best (printed above); the pipelined runs T006-T010 are where
         * the team chose among layouts */
        if (strcmp(v->row_id, "T006") >= 0)
            CU_ASSERT_TRUE(published_tps >= 0.85 * r.result.tokens_per_s);
        checked++;
        prof_free(&p);
    }
    printf("\n");
    CU_ASSERT_TRUE(checked >= 8);
    free(rows);
}

/* Where a team published several layouts of one model at one scale (same
 * framework, GPUs, batch and sequence), the planner's pick against the
 * team's choice: with the dimensions the published layouts share fixed
 * (TP, PP, VPP, CP, micro-batch), the search must land on the published
 * layout the team measured fastest, and over the whole space the team's
 * choice must rank ahead of its other published layouts (each rank printed;
 * one layout published at two releases is not a choice).
 * The shared table's groups: Korthikanti et al. 2022 Table 4/5 (22B, 175B,
 * 530B, 1T on A100s), full recompute against sequence parallelism with
 * selective recompute; every one must agree. BigScience's layout searches
 * (tests/fixtures/validation/bigscience: 26 groups on V100s and A100s,
 * TP/PP/micro-batch/ZeRO varied, where the model's median error is 14%)
 * are reported: at 2026-11-28 the measured fastest ranks first in 16 and
 * the pick with the shared dimensions fixed is the team's in 24 (the two
 * others: ZeRO-3 for 1.3B on 8 GPUs, which the team did not measure); the
 * test holds them to more than half and to all but two. */
static int published_choices(const char *csv, int agree[2])
{
    pub_row_t *rows = NULL;
    int n = 0;
    err_t e;
    CU_ASSERT_EQUAL_FATAL(pub_replay(fixture(csv), NULL, &rows, &n, &e), 0);
    int groups = 0;
    agree[0] = agree[1] = 0;
    bool *done = calloc((size_t)n, sizeof *done);
    CU_ASSERT_PTR_NOT_NULL_FATAL(done);
    for (int i = 0; i < n; i++) {
        if (done[i] || rows[i].skipped)
            continue;
        const layout_t *li = &rows[i].sim_layout;
        int members[8], k = 0;
        for (int j = i; j < n && k < 8; j++) {
            const layout_t *lj = &rows[j].sim_layout;
            if (rows[j].skipped || done[j] || strcmp(rows[j].group, rows[i].group) ||
                strcmp(rows[j].model_key, rows[i].model_key) || strcmp(rows[j].gpu, rows[i].gpu) ||
                rows[j].gpus != rows[i].gpus || lj->global_batch != li->global_batch ||
                lj->seq_len != li->seq_len || lj->precision != li->precision)
                continue;
            bool again = false; /* one layout at two releases is no choice */
            for (int a = 0; a < k; a++)
                again = again || strcmp(rows[members[a]].layout, rows[j].layout) == 0;
            if (again)
                continue;
            members[k++] = j;
            done[j] = true;
        }
        if (k < 2)
            continue;
        int chosen = members[0];
        for (int a = 1; a < k; a++)
            if (rows[members[a]].published_tps_gpu > rows[chosen].published_tps_gpu)
                chosen = members[a];
        const pub_row_t *v = &rows[chosen];
        cluster_t c;
        profile_t p;
        plan_space_t s;
        row_space(v, &c, &p, &s);
        /* the whole space: each published layout's rank */
        int rank[8];
        long of = 0;
        for (int a = 0; a < k; a++) {
            plan_search_t r;
            CU_ASSERT_EQUAL_FATAL(
                plan_search(&v->sim_model, &c, &p, &s, &rows[members[a]].sim_layout, &r, &e), 0);
            rank[a] = r.rank_of_reference > 0 ? r.rank_of_reference : INT_MAX;
            of = r.reference_of;
        }
        int chosen_rank = 0;
        for (int a = 0; a < k; a++)
            if (members[a] == chosen)
                chosen_rank = rank[a];
        printf("\n  %s %d GPUs:", v->model, v->gpus);
        bool first = true;
        for (int a = 0; a < k; a++) {
            printf(" %s%s rank %d of %ld", rows[members[a]].row_id, members[a] == chosen ? "*" : "",
                   rank[a] == INT_MAX ? 0 : rank[a], of);
            first = first && (members[a] == chosen || chosen_rank < rank[a]);
        }
        /* the shared dimensions fixed: the pick is the team's choice */
        const layout_t *t = &v->sim_layout;
        s.tp = (plan_range_t){t->tp, t->tp};
        s.pp = (plan_range_t){t->pp, t->pp};
        s.vpp = (plan_range_t){t->vpp, t->vpp};
        s.cp = (plan_range_t){t->cp, t->cp};
        s.micro_batch = (plan_range_t){t->micro_batch, t->micro_batch};
        plan_search_t r;
        CU_ASSERT_EQUAL_FATAL(plan_search(&v->sim_model, &c, &p, &s, NULL, &r, &e), 0);
        CU_ASSERT_TRUE_FATAL(r.found);
        printf("; pick recompute=%s SP %d (%s: recompute=%s SP %d)", layout_recompute_name(r.layout.recompute),
               r.layout.sequence_parallel, v->row_id, layout_recompute_name(t->recompute),
               t->sequence_parallel);
        /* the distributed optimizer is ZeRO-1 */
        int z_pick = r.layout.zero ? r.layout.zero : r.layout.distributed_optimizer;
        int z_team = t->zero ? t->zero : t->distributed_optimizer;
        bool same = r.layout.recompute == t->recompute &&
                    r.layout.sequence_parallel == t->sequence_parallel && z_pick == z_team;
        printf(" ZeRO-%d (%s ZeRO-%d)%s%s", z_pick, v->row_id, z_team,
               first ? "" : " [ordered otherwise]", same ? "" : " [pick differs]");
        agree[0] += first;
        agree[1] += same;
        groups++;
        prof_free(&p);
    }
    printf("\n");
    free(done);
    free(rows);
    return groups;
}

static void test_published_choices(void)
{
    int agree[2];
    int groups = published_choices("validation/throughput.csv", agree);
    CU_ASSERT_TRUE(groups >= 4);
    CU_ASSERT_EQUAL(agree[0], groups);
    CU_ASSERT_EQUAL(agree[1], groups);
    groups = published_choices("validation/bigscience/runs.csv", agree);
    printf("  bigscience: the measured fastest ranks first in %d of %d groups; the pick with its "
           "shared dimensions fixed is it in %d\n", agree[0], groups, agree[1]);
    CU_ASSERT_TRUE(groups >= 20);
    CU_ASSERT_TRUE(2 * agree[0] > groups);
    CU_ASSERT_TRUE(agree[1] >= groups - 2);
}

/* Precision as a searched dimension: with bf16 and fp8 every framework is
 * searched in each it trains in (fp8 as its own recipe), the per-framework
 * bests name their precision, and the pick is no slower than the bf16
 * search's; a framework without fp8 (DeepSpeed) is searched in bf16 alone,
 * and asked for fp8 alone it is refused naming --precision. */
static void test_precision_searched(void)
{
    model_t m;
    cluster_t c;
    profile_t p;
    plan_space_t s;
    err_t e;
    setup_search("llama3-70b", "h100-sxm", 256, 8192, 512, &m, &c, &p, &s);
    plan_search_t bf16, both;
    CU_ASSERT_EQUAL_FATAL(plan_search(&m, &c, &p, &s, NULL, &bf16, &e), 0);
    CU_ASSERT_TRUE_FATAL(bf16.found);
    CU_ASSERT_EQUAL_FATAL(plan_parse_precision_set("bf16,fp8", &s.precision_mask, &e), 0);
    CU_ASSERT_EQUAL(s.precision_mask, (1u << PRECISION_BF16) | (1u << PRECISION_FP8));
    CU_ASSERT_EQUAL_FATAL(plan_search(&m, &c, &p, &s, NULL, &both, &e), 0);
    CU_ASSERT_TRUE_FATAL(both.found);
    CU_ASSERT_TRUE(both.n_frameworks > bf16.n_frameworks);
    CU_ASSERT_TRUE(both.result.tokens_per_s >= bf16.result.tokens_per_s);
    printf("\n  bf16 pick %s %.0f tokens/s; bf16 or fp8 pick %s %s %.0f tokens/s\n",
           bf16.framework, bf16.result.tokens_per_s, both.framework,
           layout_precision_name(both.layout.precision), both.result.tokens_per_s);
    CU_ASSERT_NOT_EQUAL(both.layout.precision, PRECISION_BF16);
    int in_bf16 = 0, in_fp8 = 0, deepspeed = 0;
    for (int i = 0; i < both.n_frameworks; i++) {
        const plan_fw_best_t *f = &both.per_framework[i];
        in_bf16 += f->precision == PRECISION_BF16;
        in_fp8 += f->precision != PRECISION_BF16;
        if (strcmp(f->name, "deepspeed") == 0) {
            deepspeed++;
            CU_ASSERT_EQUAL(f->precision, PRECISION_BF16);
        }
        CU_ASSERT_TRUE(!f->found || f->layout.precision == f->precision);
        char label[64];
        plan_fw_label(f, both.per_framework, both.n_frameworks, label, sizeof label);
        CU_ASSERT_PTR_NOT_NULL(strstr(label, layout_precision_name(f->precision)));
    }
    CU_ASSERT_EQUAL(in_bf16, bf16.n_frameworks);
    CU_ASSERT_TRUE(in_fp8 >= 4);
    CU_ASSERT_EQUAL(deepspeed, 1);
    /* a named framework: the precisions it trains in; none is an error */
    s.framework = "deepspeed";
    CU_ASSERT_EQUAL_FATAL(plan_search(&m, &c, &p, &s, NULL, &both, &e), 0);
    CU_ASSERT_EQUAL(both.n_frameworks, 1);
    s.precision_mask = 0;
    s.precision = PRECISION_FP8;
    CHECK_ERR(plan_search(&m, &c, &p, &s, NULL, &both, &e), &e, ERR_INPUT, "--precision",
              "deepspeed");
    CHECK_ERR(plan_parse_precision_set("bf16,fp9", &s.precision_mask, &e), &e, ERR_INPUT,
              "--precision", "fp9");
    prof_free(&p);
}

/* A sequence-length range: its ends and the powers of two between are
 * searched, the batch held in tokens (each length's sequences rounded) or
 * in sequences; the pick is the best of the lengths searched one by one. */
static void test_seq_len_range(void)
{
    plan_space_t s;
    plan_space_default(&s);
    s.seq_len = 3000;
    s.seq_len_max = 9000;
    int seqs[PLAN_MAX_SEQ_LENS];
    int n = plan_seq_lens(&s, seqs, PLAN_MAX_SEQ_LENS);
    CU_ASSERT_EQUAL_FATAL(n, 4);
    CU_ASSERT_EQUAL(seqs[0], 3000);
    CU_ASSERT_EQUAL(seqs[1], 4096);
    CU_ASSERT_EQUAL(seqs[2], 8192);
    CU_ASSERT_EQUAL(seqs[3], 9000);
    s.global_batch_min = s.global_batch_max = 100;
    int lo, hi;
    plan_batch_range(&s, 4096, &lo, &hi); /* in sequences */
    CU_ASSERT_EQUAL(lo, 100);
    CU_ASSERT_EQUAL(hi, 100);
    s.batch_tokens_min = s.batch_tokens_max = 4194304;
    plan_batch_range(&s, 4096, &lo, &hi); /* in tokens */
    CU_ASSERT_EQUAL(lo, 1024);
    CU_ASSERT_EQUAL(hi, 1024);

    model_t m;
    cluster_t c;
    profile_t p;
    err_t e;
    setup_search("llama3-8b", "h100-sxm", 64, 2048, 2048, &m, &c, &p, &s);
    s.framework = "megatron-core";
    s.seq_len_max = 8192;
    s.batch_tokens_min = s.batch_tokens_max = 4194304;
    plan_search_t all, one;
    CU_ASSERT_EQUAL_FATAL(plan_search(&m, &c, &p, &s, NULL, &all, &e), 0);
    CU_ASSERT_TRUE_FATAL(all.found);
    double best = 0;
    int best_seq = 0;
    static const int lens[] = {2048, 4096, 8192};
    for (int k = 0; k < 3; k++) {
        plan_space_t x = s;
        x.seq_len = lens[k];
        x.seq_len_max = 0;
        x.global_batch_min = x.global_batch_max = 4194304 / lens[k];
        CU_ASSERT_EQUAL_FATAL(plan_search(&m, &c, &p, &x, NULL, &one, &e), 0);
        CU_ASSERT_TRUE_FATAL(one.found);
        CU_ASSERT_EQUAL(one.layout.seq_len, lens[k]);
        if (one.result.tokens_per_s > best) {
            best = one.result.tokens_per_s;
            best_seq = lens[k];
        }
    }
    printf("\n  seq 2048..8192: pick seq %d %.0f tokens/s (best alone: seq %d %.0f)\n",
           all.layout.seq_len, all.result.tokens_per_s, best_seq, best);
    CU_ASSERT_EQUAL(all.layout.seq_len, best_seq);
    CU_ASSERT_DOUBLE_EQUAL(all.result.tokens_per_s, best, 1e-6 * best);
    CU_ASSERT_EQUAL(all.layout.global_batch * all.layout.seq_len, 4194304);
    prof_free(&p);
}

/* Two runs of plan --json, with one thread and with two, agree byte for
 * byte apart from the elapsed time. */
static void test_threads_same_json(void)
{
    const char *args = "plan --model llama3-8b --gpu h100-sxm --tokens 1T --min-gpus 64 "
                       "--max-gpus 128 --trials 100 --json";
    char *a = NULL, *b = NULL;
    CU_ASSERT_EQUAL(run_cli_env("OMP_NUM_THREADS=1 ", args, &a, NULL), 0);
    CU_ASSERT_EQUAL(run_cli_env("OMP_NUM_THREADS=2 ", args, &b, NULL), 0);
    CU_ASSERT_PTR_NOT_NULL_FATAL(a);
    CU_ASSERT_PTR_NOT_NULL_FATAL(b);
    /* drop the elapsed-time figures (their printed length varies too) */
    char *docs[2] = {a, b};
    for (int d = 0; d < 2; d++)
        for (char *q = docs[d]; (q = strstr(q, "elapsed_s\"")); q++) {
            char *from = strchr(q, ':') + 1, *to = from;
            while (*to && *to != ',' && *to != '}' && *to != '\n')
                to++;
            memmove(from, to, strlen(to) + 1);
        }
    CU_ASSERT_STRING_EQUAL(a, b);
    free(a);
    free(b);
}

/* Per-rung prices: each rung at the catalog's quote for its own size (the
 * 8-GPU marketplace quote, the larger clusters' on-demand range), and its
 * cost GPU-hours x that price; the objective cost then weighs them. */
static void test_rung_prices(void)
{
    ladder_input_t in;
    model_t m;
    cluster_t c;
    profile_t p;
    failure_set_t f;
    ladder_for("llama3-8b", "h100-sxm", 1e11, 8, 32, &in, &m, &c, &p, &f);
    in.space.framework = "megatron-core";
    snprintf(in.price_gpu, sizeof in.price_gpu, "h100-sxm");
    in.price_end = PRICE_MID;
    ladder_t *l = calloc(1, sizeof *l);
    CU_ASSERT_PTR_NOT_NULL_FATAL(l);
    err_t e;
    CU_ASSERT_EQUAL_FATAL(plan_ladder(&in, l, &e), 0);
    for (int i = 0; i < l->n; i++) {
        const rung_t *r = &l->rung[i];
        price_t q;
        CU_ASSERT_EQUAL_FATAL(price_default_for_gpu("h100-sxm", r->gpus, &q, &e), 0);
        CHECK_REL(r->usd_per_gpu_hour, price_usd(&q, PRICE_MID), 1e-15);
        CU_ASSERT_STRING_EQUAL(r->price_provider, q.provider);
        if (!r->feasible)
            continue;
        CHECK_REL(r->cost_usd, r->gpu_hours * r->usd_per_gpu_hour, 1e-12);
        /* each rung at its own best checkpoint interval, shorter as the
         * failure rate grows with the GPUs */
        CU_ASSERT_TRUE(r->interval_best && r->checkpoint_interval_s > 0);
        if (i > 0 && l->rung[i - 1].feasible)
            CU_ASSERT_TRUE(r->checkpoint_interval_s < l->rung[i - 1].checkpoint_interval_s);
    }
    /* the catalog quotes 8 GPUs apart from larger jobs */
    CU_ASSERT_TRUE(l->rung[0].usd_per_gpu_hour != l->rung[1].usd_per_gpu_hour);
    free(l);
    prof_free(&p);
}

/* No --tokens: 20 per parameter (Chinchilla), over all parameters. */
static void test_default_tokens(void)
{
    model_t m;
    err_t e;
    CU_ASSERT_EQUAL_FATAL(model_load("deepseek-v3", &m, &e), 0);
    model_params_t p;
    model_params(&m, &p);
    CHECK_REL(ladder_default_tokens(&m), 20 * p.total, 1e-15);
    CU_ASSERT_TRUE(ladder_default_tokens(&m) > 13e12 && ladder_default_tokens(&m) < 14e12);
}

/* The bound that prunes the search never falls below what the simulator
 * gives: over dense models, pipeline depths, interleaving, schedules,
 * micro-batch counts, recompute (none, full, and Megatron's block recompute
 * of one layer per chunk), host offload (optimizer state, activations,
 * ZeRO-3 parameters) and frameworks (Megatron-Core, whose P2P and DP
 * traffic overlap, torchtitan with FSDP, DeepSpeed), every simulated step
 * is at most as fast as its layout's bound (the bound before 2026-11-27
 * priced every layer of a block-recompute layout as recomputed and fell
 * below it), and the pipelined ones come within a fifth of it (the bound
 * is not vacuous). */
static void test_bound_holds(void)
{
    static const char *const models[] = {"llama3-8b", "llama3-70b"};
    static const char *const fws[] = {"megatron-core", "torchtitan-2025-06"};
    static const struct {
        int pp, vpp;
        schedule_t sched;
    } pipes[] = {{2, 1, SCHEDULE_1F1B},   {4, 1, SCHEDULE_1F1B},   {8, 1, SCHEDULE_1F1B},
                 {4, 1, SCHEDULE_GPIPE},  {4, 2, SCHEDULE_INTERLEAVED},
                 {8, 4, SCHEDULE_INTERLEAVED}, {2, 8, SCHEDULE_INTERLEAVED}};
    static const int accum[] = {1, 3, 8, 32};
    sim_ctx_t *ctx = sim_ctx_create();
    CU_ASSERT_PTR_NOT_NULL_FATAL(ctx);
    int checked = 0, close = 0;
    double worst = 0;
    for (size_t mi = 0; mi < 2; mi++)
        for (size_t fi = 0; fi < 2; fi++)
            for (size_t pi = 0; pi < sizeof pipes / sizeof *pipes; pi++)
                for (size_t ai = 0; ai < sizeof accum / sizeof *accum; ai++)
                    for (int rc = 0; rc < 3; rc++) {
                        scenario_t sc;
                        scenario_spec_t spec = {0};
                        spec.model = models[mi];
                        spec.cluster.gpu = "h100-sxm";
                        spec.cluster.n_gpus = 64;
                        spec.framework = fws[fi];
                        err_t e;
                        CU_ASSERT_EQUAL_FATAL(scenario_begin(&spec, &sc, &e), 0);
                        layout_t *l = &sc.layout;
                        l->tp = 4;
                        l->sequence_parallel = true;
                        l->pp = pipes[pi].pp;
                        l->vpp = pipes[pi].vpp;
                        l->schedule = pipes[pi].sched;
                        l->micro_batch = 1;
                        l->seq_len = 4096;
                        l->global_batch = accum[ai] * (64 / (4 * l->pp));
                        l->recompute = rc ? RECOMPUTE_FULL : RECOMPUTE_NONE;
                        l->recompute_layers = rc == 2 ? 1 : 0; /* Megatron's block method */
                        if (scenario_finish(&sc, NULL, &e)) {
                            /* a layout the framework does not run */
                            scenario_free(&sc);
                            continue;
                        }
                        step_costs_t c;
                        sim_result_t r;
                        CU_ASSERT_EQUAL_FATAL(sim_costs(&sc.input, &c, &e), 0);
                        CU_ASSERT_EQUAL_FATAL(sim_run_step(ctx, &sc.input, &r, &e), 0);
                        double b = plan_tps_bound(&sc.input, &c);
                        double ratio = r.tokens_per_s / b;
                        if (ratio > 1 + 1e-9)
                            fprintf(stderr, "\nbound %g below simulated %g: %s %s PP%d VPP%d m%d\n",
                                    b, r.tokens_per_s, models[mi], fws[fi], l->pp, l->vpp,
                                    l->grad_accum);
                        CU_ASSERT_TRUE(ratio <= 1 + 1e-9);
                        if (ratio > worst)
                            worst = ratio;
                        checked++;
                        close += ratio > 0.8;
                        scenario_free(&sc);
                    }
    /* host offload (optimizer state, activations, ZeRO-3 parameters) */
    static const char *const offloads[] = {"optimizer", "activations=2", "optimizer,params"};
    static const char *const off_fws[] = {"megatron-core", "torchtitan-2025-06", "deepspeed"};
    for (size_t fi = 0; fi < 3; fi++)
        for (size_t oi = 0; oi < 3; oi++)
            for (int pp = 1; pp <= 4; pp *= 2) {
                scenario_t sc;
                scenario_spec_t spec = {0};
                spec.model = "llama3-8b";
                spec.cluster.gpu = "h100-sxm";
                spec.cluster.n_gpus = 16;
                spec.framework = off_fws[fi];
                err_t e;
                CU_ASSERT_EQUAL_FATAL(scenario_begin(&spec, &sc, &e), 0);
                layout_t *l = &sc.layout;
                l->tp = 2;
                l->sequence_parallel = true;
                l->pp = pp;
                l->micro_batch = 1;
                l->seq_len = 4096;
                l->global_batch = 4 * (16 / (2 * pp));
                if (strstr(offloads[oi], "params"))
                    l->zero = 3;
                if (layout_parse_offload(offloads[oi], l, &e) ||
                    scenario_finish(&sc, NULL, &e)) {
                    scenario_free(&sc);
                    continue;
                }
                step_costs_t c;
                sim_result_t r;
                CU_ASSERT_EQUAL_FATAL(sim_costs(&sc.input, &c, &e), 0);
                CU_ASSERT_EQUAL_FATAL(sim_run_step(ctx, &sc.input, &r, &e), 0);
                double ratio = r.tokens_per_s / plan_tps_bound(&sc.input, &c);
                CU_ASSERT_TRUE(ratio <= 1 + 1e-9);
                if (ratio > worst)
                    worst = ratio;
                checked++;
                scenario_free(&sc);
            }
    sim_ctx_destroy(ctx);
    printf("\n  bound: %d layouts, simulated / bound at most %.3f, %d within 20%%\n", checked,
           worst, close);
    CU_ASSERT_TRUE(checked >= 200);
    CU_ASSERT_TRUE(close >= checked / 4);
}

/* Megatron-Core's recompute modules in the search: Mixtral 8x7B on 16
 * H100s (global batch 256 x 4,096) fits with selective recompute of its
 * norms and expert activations, which beats rebuilding whole layers; a
 * fixed set of modules is what every candidate uses; a framework without
 * them is refused, naming the flag. */
static void test_recompute_modules_searched(void)
{
    model_t m;
    cluster_t c;
    profile_t p;
    plan_space_t s;
    err_t e;
    setup_search("mixtral-8x7b", "h100-sxm", 16, 4096, 256, &m, &c, &p, &s);
    s.framework = "megatron-core";
    plan_search_t r;
    CU_ASSERT_EQUAL_FATAL(plan_search(&m, &c, &p, &s, NULL, &r, &e), 0);
    CU_ASSERT_TRUE_FATAL(r.found);
    CU_ASSERT_EQUAL(r.layout.recompute, RECOMPUTE_SELECTIVE);
    CU_ASSERT_TRUE(r.layout.recompute_modules & LAYOUT_RC_MOE_ACT);
    CU_ASSERT_TRUE(r.layout.recompute_modules & LAYOUT_RC_LAYERNORM);
    double laddered = r.result.step_time_s;
    s.recompute_mask = 1u << RECOMPUTE_FULL;
    CU_ASSERT_EQUAL_FATAL(plan_search(&m, &c, &p, &s, NULL, &r, &e), 0);
    CU_ASSERT_TRUE_FATAL(r.found);
    CU_ASSERT_TRUE(laddered < r.result.step_time_s);
    s.recompute_mask = 1u << RECOMPUTE_SELECTIVE;
    s.rc_modules = LAYOUT_RC_CORE_ATTN | LAYOUT_RC_LAYERNORM | LAYOUT_RC_MOE;
    CU_ASSERT_EQUAL_FATAL(plan_search(&m, &c, &p, &s, NULL, &r, &e), 0);
    CU_ASSERT_TRUE_FATAL(r.found);
    CU_ASSERT_EQUAL(r.layout.recompute_modules, s.rc_modules);
    CU_ASSERT_TRUE(r.result.step_time_s >= laddered);
    s.framework = "nemo-25.02";
    int rc = plan_search(&m, &c, &p, &s, NULL, &r, &e);
    CHECK_ERR(rc, &e, ERR_INPUT, "--recompute-modules", "attention core only");
    prof_free(&p);
}

/* Expert tensor parallelism is searched with EP > 1: 1 and the layout's TP
 * (Megatron-Core's two settings). Mixtral 8x7B on 64 H100s at TP 4, EP 8:
 * constrained to ETP 4 the plan returns an ETP 4 layout, and the free search
 * evaluates more layouts than ETP 1 alone (both settings tried). Without the
 * expert-TP loop --etp 4 finds nothing. */
static void test_expert_tp_searched(void)
{
    const char *base = "plan --model mixtral-8x7b --gpu h100-sxm --min-gpus 64 --max-gpus 64 "
                       "--tokens 100B --tp 4 --ep 8 --framework megatron-core --json";
    char cmd[512];
    double evaluated[2] = {0, 0};
    const char *etp[2] = {" --etp 1", ""};
    for (int k = 0; k < 2; k++) {
        snprintf(cmd, sizeof cmd, "%s%s", base, etp[k]);
        cJSON *j = cmd_expect_json(cmd, 0);
        const cJSON *n = j ? cJSON_GetObjectItemCaseSensitive(j, "layouts_evaluated") : NULL;
        evaluated[k] = cJSON_IsNumber(n) ? n->valuedouble : 0;
        cJSON_Delete(j);
    }
    printf("\n    Mixtral 8x7B, TP4 EP8 on 64 H100: %.0f layouts with ETP 1, %.0f with ETP 1 and 4",
           evaluated[0], evaluated[1]);
    CU_ASSERT(evaluated[0] > 0 && evaluated[1] > evaluated[0]);
    snprintf(cmd, sizeof cmd, "%s --etp 4", base);
    cJSON *j = cmd_expect_json(cmd, 0);
    const cJSON *best = j ? cJSON_GetObjectItemCaseSensitive(j, "best") : NULL;
    const cJSON *l = best ? cJSON_GetObjectItemCaseSensitive(best, "layout") : NULL;
    const cJSON *e = l ? cJSON_GetObjectItemCaseSensitive(l, "etp") : NULL;
    CU_ASSERT(cJSON_IsNumber(e) && e->valueint == 4);
    cJSON_Delete(j);
}

TEST_SUITE(suite_plan, "plan", TEST(test_framework_spaces), TEST(test_constraints),
           TEST(test_meta_405b), TEST(test_bridge_405b_recipe), TEST(test_published_ranks), TEST(test_published_choices), TEST(test_precision_searched), TEST(test_seq_len_range), TEST(test_threads_same_json), TEST(test_ladder_properties),
           TEST(test_impossible_requests), TEST(test_search_consistent), TEST(test_default_tokens),
           TEST(test_rung_prices), TEST(test_block_recompute), TEST(test_bound_holds),
           TEST(test_recompute_modules_searched), TEST(test_expert_tp_searched));
