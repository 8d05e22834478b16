/* test_moe_plan: the planner's search of mixture-of-experts token
 * dispatchers and CUDA graph scopes, and --emit carrying them to what sim
 * reads back (plan/plan_entries.c, reports/launch, inputs/bridge). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "frameworks/options.h"
#include "inputs/bridge.h"
#include "tests/testing.h"

/* The best rung of a MoE plan of Mixtral 8x7B on 64 H100 under framework,
 * with extra flags; NULL on failure (caller frees *doc). */
static cJSON *moe_plan_best(const char *framework, const char *extra, cJSON **doc)
{
    char args[1024];
    snprintf(args, sizeof args,
             "plan --model mixtral-8x7b --gpu h100-sxm --min-gpus 64 --max-gpus 64 "
             "--framework %s --trials 20 --json%s",
             framework, extra);
    *doc = cmd_expect_json(args, 0);
    return *doc ? cJSON_GetObjectItem(*doc, "best") : NULL;
}

/* plan searches the MoE token dispatchers megatron-core offers (and CUDA
 * graph scopes): more layouts priced than with one dispatcher fixed, the
 * dispatcher it recommends the fastest of the three each fixed, and a
 * user's --moe-dispatcher fixes it. */
static void test_plan_searches_dispatchers(void)
{
    static const char *const names[] = {"alltoall", "allgather", "deepep"};
    cJSON *doc = NULL;
    cJSON *best = moe_plan_best("megatron-core", "", &doc);
    CU_ASSERT_PTR_NOT_NULL_FATAL(best);
    cJSON *disp = cJSON_GetObjectItem(best, "moe_dispatcher");
    cJSON *searched = cJSON_GetObjectItem(best, "moe_dispatcher_searched");
    cJSON *st = cJSON_GetObjectItem(best, "step_time_s");
    cJSON *n = cJSON_GetObjectItem(best, "layouts_searched");
    CU_ASSERT_FATAL(cJSON_IsString(disp) && cJSON_IsTrue(searched) && st && n);
    double fastest = INFINITY;
    const char *winner = NULL;
    for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
        char extra[64];
        snprintf(extra, sizeof extra, " --moe-dispatcher %s", names[i]);
        cJSON *one = NULL;
        cJSON *b = moe_plan_best("megatron-core", extra, &one);
        CU_ASSERT_PTR_NOT_NULL_FATAL(b);
        cJSON *d = cJSON_GetObjectItem(b, "moe_dispatcher");
        CU_ASSERT(cJSON_IsString(d) && strcmp(d->valuestring, names[i]) == 0);
        CU_ASSERT(!cJSON_IsTrue(cJSON_GetObjectItem(b, "moe_dispatcher_searched")));
        CU_ASSERT(cJSON_GetObjectItem(b, "layouts_searched")->valuedouble < n->valuedouble);
        double t = cJSON_GetObjectItem(b, "step_time_s")->valuedouble;
        if (t < fastest) {
            fastest = t;
            winner = names[i];
        }
        cJSON_Delete(one);
    }
    CHECK_REL(st->valuedouble, fastest, 1e-9);
    CU_ASSERT(winner && strcmp(disp->valuestring, winner) == 0);
    cJSON_Delete(doc);
}

/* A MoE plan's searched dispatcher and graph scopes, written by --emit
 * megatron and --emit nemo, read back by sim to the plan's step time. */
static void test_emit_moe_search_round_trip(void)
{
    /* the last: other than the Bridge recipe's DeepEP without graphs, so
     * that the read-back must apply the file's keys to match */
    static const struct {
        const char *framework, *emit, *reader, *model_flag, *fix;
    } cases[] = {
        {"megatron-core", "megatron", "--megatron-args-file", "", ""},
        {"megatron-bridge-26.04", "nemo", "--bridge-overrides", " --model mixtral-8x7b", ""},
        {"megatron-bridge-26.04", "nemo", "--bridge-overrides", " --model mixtral-8x7b",
         " --moe-dispatcher allgather --cuda-graph-scope attn,moe_router,moe_preprocess"}};
    char dir[256];
    CU_ASSERT_EQUAL_FATAL(make_temp_dir(dir, sizeof dir), 0);
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char path[400], extra[512], args[1024];
        snprintf(path, sizeof path, "%s/moe.%zu", dir, i);
        snprintf(extra, sizeof extra, " --emit %s --out %s%s", cases[i].emit, path, cases[i].fix);
        cJSON *plan = NULL;
        cJSON *best = moe_plan_best(cases[i].framework, extra, &plan);
        cJSON *st = best ? cJSON_GetObjectItem(best, "step_time_s") : NULL;
        cJSON *disp = best ? cJSON_GetObjectItem(best, "moe_dispatcher") : NULL;
        /* (with both fixed nothing was searched: the fixed dispatcher) */
        const char *dname = disp ? disp->valuestring : *cases[i].fix ? "allgather" : NULL;
        CU_ASSERT_PTR_NOT_NULL_FATAL(st);
        CU_ASSERT_PTR_NOT_NULL_FATAL(dname);
        char *text = slurp(path);
        CU_ASSERT_PTR_NOT_NULL_FATAL(text);
        moe_dispatch_t d = MOE_DISPATCH_ALLTOALL;
        err_t e;
        CU_ASSERT_EQUAL(moe_dispatch_parse(dname, "x", &d, &e), 0);
        char want[96];
        snprintf(want, sizeof want, i ? "model.moe_token_dispatcher_type=%s"
                                      : "--moe-token-dispatcher-type %s",
                 moe_dispatch_megatron_name(d));
        CU_ASSERT(strstr(text, want) != NULL);
        if (i)
            check_bridge_keys(text);
        if (*cases[i].fix)
            CU_ASSERT_PTR_NOT_NULL(strstr(text, "model.cuda_graph_scope=[attn,moe_router,moe_preprocess]"));
        free(text);
        snprintf(args, sizeof args,
                 "sim %s %s%s --gpu h100-sxm --gpus 64 --framework %s --json", cases[i].reader,
                 path, cases[i].model_flag, cases[i].framework);
        cJSON *sim = cmd_expect_json(args, 0);
        cJSON *sst = sim ? cJSON_GetObjectItem(sim, "step_time_s") : NULL;
        CU_ASSERT_PTR_NOT_NULL(sst);
        if (sst)
            CHECK_REL(sst->valuedouble, st->valuedouble, 1e-9);
        cJSON_Delete(sim);
        cJSON_Delete(plan);
    }
    remove_tree(dir);
}

/* Bridge overrides' dispatcher and CUDA graph keys: applied, and a bad
 * value refused naming the line and the key. */
static void test_bridge_moe_options(void)
{
    sim_options_t o;
    memset(&o, 0, sizeof o);
    err_t e;
    const char *ok = "model.moe_token_dispatcher_type=flex\n"
                     "model.moe_flex_dispatcher_backend=deepep\n"
                     "model.cuda_graph_scope=[attn,moe_router,moe_preprocess]\n"
                     "model.cuda_graph_impl=transformer_engine\n";
    CU_ASSERT_EQUAL_FATAL(bridge_read_options(ok, "o.txt", &o, &e), 0);
    CU_ASSERT_EQUAL(o.moe.dispatcher, MOE_DISPATCH_DEEPEP);
    CU_ASSERT(o.moe.dispatcher_given && o.host.graph_scopes_given);
    CU_ASSERT_EQUAL(o.host.graph_scopes,
                    HOST_GRAPH_ATTN | HOST_GRAPH_MOE_ROUTER | HOST_GRAPH_MOE_PREPROCESS);
    CU_ASSERT_EQUAL(bridge_read_options("model.cuda_graph_impl=none\n", "o.txt", &o, &e), 0);
    CU_ASSERT_EQUAL(o.host.graph_scopes, 0u);
    CU_ASSERT_EQUAL(bridge_read_options("# x\nmodel.moe_token_dispatcher_type=magic\n", "o.txt",
                                        &o, &e),
                    ERR_INPUT);
    CU_ASSERT(strstr(e.msg, "line 2") && strstr(e.msg, "model.moe_token_dispatcher_type"));
    CU_ASSERT_EQUAL(bridge_read_options("model.cuda_graph_scope=[attn,bogus]\n", "o.txt", &o, &e),
                    ERR_INPUT);
    CU_ASSERT(strstr(e.msg, "line 1") && strstr(e.msg, "model.cuda_graph_scope"));
}

TEST_SUITE(suite_moe_plan, "moe_plan", TEST(test_plan_searches_dispatchers),
           TEST(test_emit_moe_search_round_trip), TEST(test_bridge_moe_options));
