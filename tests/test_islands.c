/* Tests of training across islands (sim/islands, cli/sites): INTELLECT-1's
 * compute utilization across three continents and inside the US (DiLoCo,
 * H = 100, int8 pseudo-gradients), Nemotron-4 340B's two-datacenter
 * scaling with NeMo's hierarchical all-reduce, streaming DiLoCo hiding its
 * exchange, the option parsers and bad input. Switching the mechanism off
 * (no exchange, or no overlap) moves each figure out of its tolerance. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "plan/islands.h"
#include "tests/testing.h"

typedef struct {
    model_t model;
    layout_t layout;
    cluster_t cluster;
    profile_t profile;
    sim_input_t in;
} setup_t;

static int setup(setup_t *s, const char *model, int gpus, const char *fw, const layout_t *l)
{
    err_t e;
    memset(s, 0, sizeof *s);
    cluster_spec_t spec = {.gpu = "h100-sxm", .n_gpus = gpus};
    if (model_load(model, &s->model, &e) || cluster_resolve(&spec, &s->cluster, &e) ||
        prof_load_default(s->cluster.gpu.name, &s->profile, &e)) {
        fprintf(stderr, "setup: %s\n", e.msg);
        return -1;
    }
    s->layout = *l;
    sim_options_default(&s->in.opt);
    if (sim_options_framework(fw, s->cluster.gpu.name, &s->in.opt, &s->layout, &e)) {
        fprintf(stderr, "setup: %s\n", e.msg);
        prof_free(&s->profile);
        return -1;
    }
    s->layout.recompute = l->recompute;
    s->layout.zero = l->zero;
    s->layout.distributed_optimizer = l->distributed_optimizer;
    if (layout_finalize(&s->layout, &s->model, gpus, &e)) {
        fprintf(stderr, "setup: %s\n", e.msg);
        prof_free(&s->profile);
        return -1;
    }
    s->in.model = &s->model;
    s->in.layout = &s->layout;
    s->in.cluster = &s->cluster;
    s->in.profile = &s->profile;
    return 0;
}

static int evaluate(setup_t *s, const islands_t *is, const diloco_t *d, sites_eval_t *out)
{
    err_t e;
    sim_ctx_t *ctx = sim_ctx_create();
    int rc = ctx ? sites_evaluate(ctx, NULL, &s->in, is, d, out, &e) : -1;
    if (rc > 0)
        fprintf(stderr, "evaluate: %s\n", e.msg);
    sim_ctx_destroy(ctx);
    return rc;
}

/* INTELLECT-1 (Jaghouar et al. 2024, arXiv:2412.01152): 10B parameters on
 * up to 14 nodes of 8 H100 (abstract: "up to 14 concurrent nodes", 83-96%
 * compute utilization, 36.2-41.4% MFU; Prime Intellect's release post
 * primeintellect.ai/blog/intellect-1-release: 112 H100, 83% across
 * continents, 96% with every node in the US), FSDP2 inside a node, DiLoCo
 * across nodes with H = 100 inner steps and int8 pseudo-gradients (the
 * INTELLECT-1 model card: "DiLoCo algorithms with 100 inner steps", "custom
 * int8 all-reduce kernels"; prime's configs/10B/H100_intellect1.toml at
 * 34346045: batch_size 128, micro_batch_size 1, act_ckpt, seq_length 8192,
 * inner_steps 100, compression uint8).
 * ASSUMED, printed: the outer all-reduce's times, 103 s with every node in
 * the US and 469 s across three continents. They were recalled from the
 * report's table; no text of the report beyond its abstract (nor a post
 * quoting the table) could be read here, so whether they are medians or
 * means, and their values, are unverified. Those times over the ring's
 * 2 (n-1)/n x 10.2 GB are the links' effective bandwidths; the inner step is
 * the simulator's (its MFU is printed against the reported 36.2-41.4%).
 * Within 5 points. */
static void test_intellect1_utilization(void)
{
    layout_t l;
    layout_defaults(&l);
    l.seq_len = 8192;
    l.micro_batch = 1;
    l.global_batch = 128 * 14;
    l.zero = 3;
    l.recompute = RECOMPUTE_FULL;
    setup_t s;
    CU_ASSERT_FATAL(setup(&s, "tests/fixtures/sites/intellect-1.json", 112, "fsdp", &l) == 0);
    model_params_t p;
    model_params(&s.model, &p);
    double ring_bytes = 2.0 * 13 / 14 * p.total; /* int8: one byte a parameter */
    static const struct {
        const char *where;
        double allreduce_s, utilization;
    } cases[] = {{"US only", 103, 0.96}, {"three continents", 469, 0.83}};
    for (int i = 0; i < 2; i++) {
        islands_t is = {14, 8, ring_bytes / cases[i].allreduce_s, 0};
        diloco_t d = {.on = true, .inner_steps = 100, .replicas = 14, .fragments = 1, .bits = 8};
        sites_eval_t ev;
        CU_ASSERT_FATAL(evaluate(&s, &is, &d, &ev) == 0);
        /* MFU as PaLM counts it (Chowdhery et al. 2022, app. B: 6 N + 12 L h s
         * FLOPs a token) over 8 H100 at their dense bf16 989 TFLOPs (NVIDIA
         * H100 SXM datasheet) */
        double per_token = 6 * p.total + 12.0 * s.model.n_layers * s.model.hidden * 8192;
        double mfu = per_token * 128 * 8192.0 / (ev.step_s * 8 * 989e12);
        printf("\n    INTELLECT-1 %s: inner step %.1f s (MFU %.1f%%, reported 36.2-41.4%%), "
               "exchange %.0f s (ASSUMED: recalled, not read), utilization %.1f%% "
               "(reported %.0f%%)",
               cases[i].where, ev.step_s, 100 * mfu, ev.cross_s, 100 * ev.utilization,
               100 * cases[i].utilization);
        CU_ASSERT(fabs(ev.utilization - cases[i].utilization) <= 0.05);
        CU_ASSERT(mfu >= 0.362 && mfu <= 0.414); /* the inner step against the report's MFU */
    }
    printf("\n");
    prof_free(&s.profile);
}

/* NVIDIA's NeMo 25.02 multi-datacenter post (Turbocharge LLM Training
 * Across Long-Haul Data Center Networks with NVIDIA NeMo Framework, 2025;
 * read: NeMo Framework 25.02 and Megatron-Core 0.11.0, "96% scaling
 * efficiency" across geographically separated data centers, a 340B LLM,
 * hierarchical all-reduce: reduce-scatter inside each data center,
 * all-reduce across, all-gather inside; inter-region latency "often 20
 * milliseconds or more"). Layout from the Nemotron-4 340B report (Table 2,
 * read only through summaries quoting it: TP 8, PP 12, the 6,144-GPU stage
 * at batch 2,304; its 3,072-GPU row at batch 1,536 x 4,096, used here, was
 * not read), split 1,536 a site.
 * ASSUMED, printed: the two sites 1,000 km apart (read only in a paraphrase
 * of the post, "distances of up to 1,000 km or more"), so 5 ms of fibre each
 * way, 10 ms round trip; and the link, 3.2 Tb/s (eight 400G wavelengths):
 * the post publishes no link speed. The scaling is steep in it, so the
 * figure at half and twice the assumed link is printed. Within 3 points. */
static void test_nemotron_two_datacenters(void)
{
    layout_t l;
    layout_defaults(&l);
    l.tp = 8;
    l.pp = 12;
    l.seq_len = 4096;
    l.micro_batch = 1;
    l.global_batch = 1536;
    l.distributed_optimizer = true;
    setup_t s;
    CU_ASSERT_FATAL(setup(&s, "nemotron-4-340b", 3072, "nemo-25.02", &l) == 0);
    islands_t is = {2, 1536, 3.2e12 / 8, 0.010};
    sites_eval_t ev;
    CU_ASSERT_FATAL(evaluate(&s, &is, NULL, &ev) == 0);
    printf("\n    Nemotron-4 340B, 2 x 1536 H100, 1,000 km: %.0f GB over the link in %.2f s, "
           "%.2f s exposed: %.1f%% scaling (reported 96%%) over a 3.2 Tb/s link (ASSUMED)",
           ev.cross_bytes / 1e9, ev.cross_s, ev.exposed_s, 100 * ev.scaling);
    for (double f = 0.5; f <= 2; f *= 4) {
        islands_t other = is;
        other.link_bytes_s *= f;
        sites_eval_t o;
        CU_ASSERT_FATAL(evaluate(&s, &other, NULL, &o) == 0);
        printf("\n      at %.1f Tb/s: %.1f%% scaling", 3.2 * f, 100 * o.scaling);
    }
    printf("\n");
    CU_ASSERT(fabs(ev.scaling - 0.96) <= 0.03);
    CU_ASSERT_EQUAL(ev.token_multiplier, 1); /* synchronous: the same math */
    /* without overlap the whole exchange is exposed */
    s.in.opt.overlap_grad_reduce = false;
    sites_eval_t no;
    CU_ASSERT_FATAL(evaluate(&s, &is, NULL, &no) == 0);
    CU_ASSERT(no.scaling < ev.scaling - 0.03);
    prof_free(&s.profile);
}

/* Streaming DiLoCo hides its exchange behind inner steps: with fragments
 * and overlap the utilization rises, never above 1, and more bandwidth is
 * never slower. */
static void test_streaming_hides(void)
{
    layout_t l;
    layout_defaults(&l);
    l.seq_len = 8192;
    l.micro_batch = 1;
    l.global_batch = 256;
    l.zero = 3;
    l.recompute = RECOMPUTE_FULL;
    setup_t s;
    CU_ASSERT_FATAL(setup(&s, "llama3-8b", 64, "fsdp", &l) == 0);
    islands_t is = {2, 32, 1e9 / 8, 0.02};
    diloco_t plain = {.on = true, .inner_steps = 50, .replicas = 2, .fragments = 1, .bits = 4};
    diloco_t stream = plain;
    stream.fragments = 4;
    stream.overlap_steps = 5;
    sites_eval_t a, b, c;
    CU_ASSERT_FATAL(evaluate(&s, &is, &plain, &a) == 0);
    CU_ASSERT_FATAL(evaluate(&s, &is, &stream, &b) == 0);
    CU_ASSERT(b.utilization > a.utilization);
    CU_ASSERT(b.utilization <= 1);
    is.link_bytes_s *= 4;
    CU_ASSERT_FATAL(evaluate(&s, &is, &plain, &c) == 0);
    CU_ASSERT(c.utilization > a.utilization);
    CU_ASSERT(a.token_multiplier > 1); /* M = 2 (Charles et al. 2025) */
    prof_free(&s.profile);
}

static void test_parsers(void)
{
    islands_t is;
    diloco_t d;
    err_t e;
    CU_ASSERT_EQUAL_FATAL(islands_parse("2x8192", &is, &e), 0);
    CU_ASSERT_EQUAL(is.n, 2);
    CU_ASSERT_EQUAL(is.gpus_each, 8192);
    CU_ASSERT_EQUAL_FATAL(islands_parse_link("400Gbps,20ms", &is, &e), 0);
    CHECK_REL(is.link_bytes_s, 50e9, 1e-9);
    CHECK_REL(is.rtt_s, 0.020, 1e-9);
    CHECK_ERR(islands_parse_link("0Gbps,20ms", &is, &e), &e, ERR_INPUT, "--island-link");
    CHECK_ERR(islands_parse_link("400Gbps", &is, &e), &e, ERR_INPUT, "--island-link");
    CHECK_ERR(islands_parse("8192", &is, &e), &e, ERR_INPUT, "--islands");
    CU_ASSERT_EQUAL_FATAL(diloco_parse("H=500,M=2,fragments=4,bits=4", &d, &e), 0);
    CU_ASSERT(d.on && d.inner_steps == 500 && d.replicas == 2 && d.fragments == 4 && d.bits == 4);
    CHECK_ERR(diloco_parse("H=500,K=3", &d, &e), &e, ERR_INPUT, "--diloco", "K");
}

static void test_bad_input_cli(void)
{
    char *err = NULL;
    int rc = run_cli("sim --model llama3-8b --gpu h100-sxm --gpus 16 --islands 2x8 "
                     "--island-link 0Gbps,20ms",
                     NULL, &err);
    CU_ASSERT_EQUAL(rc, 2);
    CU_ASSERT(err && strstr(err, "--island-link") && count_lines(err) == 1);
    free(err);
    err = NULL;
    rc = run_cli("sim --model llama3-8b --gpu h100-sxm --gpus 16 --islands 2x4 "
                 "--island-link 100Gbps,20ms",
                 NULL, &err);
    CU_ASSERT_EQUAL(rc, 2);
    CU_ASSERT(err && strstr(err, "--islands") && count_lines(err) == 1);
    free(err);
}

/* plan --islands picks per rung: over a 1 Gb/s link DiLoCo (synchronous DP
 * would spend most of each step on the link), over a 100 Tb/s one
 * synchronous DP (no token penalty, nothing to hide). */
static const char *plan_pick(const char *link)
{
    char args[300], *out = NULL;
    snprintf(args, sizeof args,
             "plan --model llama3-8b --gpu h100-sxm --min-gpus 64 --max-gpus 64 --tokens 1T "
             "--islands 2 --island-link %s --diloco H=100,bits=4 --json",
             link);
    static char pick[32];
    pick[0] = '\0';
    if (run_cli(args, &out, NULL) == 0 && out) {
        cJSON *j = cJSON_Parse(out);
        const cJSON *r = cJSON_GetArrayItem(cJSON_GetObjectItem(j, "sites_ladder"), 0);
        const cJSON *p = cJSON_GetObjectItem(r, "pick");
        if (cJSON_IsString(p))
            snprintf(pick, sizeof pick, "%s", p->valuestring);
        cJSON_Delete(j);
    }
    free(out);
    return pick;
}

static void test_plan_picks_per_rung(void)
{
    CU_ASSERT_STRING_EQUAL(plan_pick("1Gbps,50ms"), "diloco");
    CU_ASSERT_STRING_EQUAL(plan_pick("100Tbps,1ms"), "hierarchical_dp");
}

TEST_SUITE(suite_islands, "islands", TEST(test_parsers), TEST(test_intellect1_utilization),
           TEST(test_nemotron_two_datacenters), TEST(test_streaming_hides),
           TEST(test_bad_input_cli), TEST(test_plan_picks_per_rung));
