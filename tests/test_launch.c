/* Tests of reports/launch (plan --emit): each format reads back through
 * scaleplan's own readers to the layout it was written from, and every
 * flag or key it writes is one the framework documents
 * (tests/fixtures/launch: Megatron-LM's parser flags, Megatron-Bridge's
 * config fields, DeepSpeed's config keys, torchtitan's job config; see
 * gen_keys.py there). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "inputs/bridge.h"
#include "inputs/deepspeed.h"
#include "inputs/megatron_args.h"
#include "inputs/torchtitan.h"
#include "models/layout_json.h"
#include "models/memory.h"
#include "reports/launch.h"
#include "frameworks/framework.h"
#include "tests/testing.h"

/* The text launch_write gives (heap, caller frees). */
static char *written(launch_kind_t k, const model_t *m, const layout_t *l, const char *fw)
{
    sim_options_t o;
    layout_t scratch = *l;
    err_t e;
    CU_ASSERT_EQUAL_FATAL(sim_options_framework(fw, NULL, &o, &scratch, &e), 0);
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    int rc = launch_write_for(k, fw, m, l, &o, f, &e);
    fclose(f);
    if (rc)
        fprintf(stderr, "launch_write: %s\n", e.msg);
    CU_ASSERT_EQUAL(rc, 0);
    return buf;
}

/* Writing layout l for kind under framework fw is refused on --emit,
 * saying says. */
static void refused(launch_kind_t k, const model_t *m, const layout_t *l, const char *fw,
                    const char *says)
{
    sim_options_t o;
    layout_t scratch = *l;
    err_t e;
    CU_ASSERT_EQUAL_FATAL(sim_options_framework(fw, NULL, &o, &scratch, &e), 0);
    FILE *f = fopen("/dev/null", "w");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    CHECK_ERR(launch_write_for(k, fw, m, l, &o, f, &e), &e, ERR_INPUT, "--emit", says);
    fclose(f);
}

static layout_t finalized(const model_t *m, int gpus, int tp, int pp, int vpp, int cp, int mb,
                          int gb, int seq)
{
    layout_t l;
    layout_defaults(&l);
    l.tp = tp;
    l.pp = pp;
    l.vpp = vpp;
    l.cp = cp;
    l.micro_batch = mb;
    l.global_batch = gb;
    l.seq_len = seq;
    l.schedule = vpp > 1 ? SCHEDULE_INTERLEAVED : SCHEDULE_1F1B;
    l.sequence_parallel = tp > 1;
    err_t e;
    int rc = layout_finalize(&l, m, gpus, &e);
    if (rc)
        fprintf(stderr, "finalize: %s\n", e.msg);
    CU_ASSERT_EQUAL_FATAL(rc, 0);
    return l;
}

static void same_layout(const layout_t *a, const layout_t *b)
{
    CU_ASSERT_EQUAL(a->tp, b->tp);
    CU_ASSERT_EQUAL(a->pp, b->pp);
    CU_ASSERT_EQUAL(a->cp, b->cp);
    CU_ASSERT_EQUAL(a->vpp, b->vpp);
    CU_ASSERT_EQUAL(a->micro_batch, b->micro_batch);
    CU_ASSERT_EQUAL(a->global_batch, b->global_batch);
    CU_ASSERT_EQUAL(a->seq_len, b->seq_len);
    CU_ASSERT_EQUAL(a->sequence_parallel, b->sequence_parallel);
    CU_ASSERT_EQUAL(a->recompute, b->recompute);
    CU_ASSERT_EQUAL(a->precision, b->precision);
    CU_ASSERT_EQUAL(a->zero, b->zero);
    CU_ASSERT_EQUAL(a->distributed_optimizer, b->distributed_optimizer);
    CU_ASSERT_EQUAL(a->first_stage_layers, b->first_stage_layers);
    CU_ASSERT_EQUAL(a->last_stage_layers, b->last_stage_layers);
}

/* Every "--flag" line of a Megatron argument list is a flag of Megatron's
 * parser (inputs/megatron_flags.tsv, generated from arguments.py). */
static void megatron_flags_known(const char *text)
{
    char *tsv = slurp("inputs/megatron_flags.tsv");
    CU_ASSERT_PTR_NOT_NULL_FATAL(tsv);
    const char *p = text;
    while (*p) {
        const char *eol = strchr(p, '\n');
        size_t n = eol ? (size_t)(eol - p) : strlen(p);
        if (n > 2 && p[0] == '-' && p[1] == '-') {
            char flag[96], needle[100];
            size_t k = strcspn(p, " \n");
            snprintf(flag, sizeof flag, "%.*s", (int)(k < sizeof flag ? k : sizeof flag - 1), p);
            snprintf(needle, sizeof needle, "\n%s\t", flag);
            if (!strstr(tsv, needle))
                fprintf(stderr, "not a Megatron-LM flag: %s\n", flag);
            CU_ASSERT_PTR_NOT_NULL(strstr(tsv, needle));
        }
        p += n + (eol ? 1 : 0);
    }
    free(tsv);
}

/* Llama 3 70B under Megatron-Core layouts: even interleaving, 1F1B with
 * FSDP, full recompute with fp8 current scaling, bf16 gradients. */
static void test_megatron_round_trip(void)
{
    model_t m;
    err_t e;
    CU_ASSERT_EQUAL_FATAL(model_load("llama3-70b", &m, &e), 0);
    layout_t cases[4];
    cases[0] = finalized(&m, 256, 4, 4, 5, 1, 1, 512, 8192);
    cases[0].distributed_optimizer = true;
    cases[1] = finalized(&m, 256, 2, 1, 1, 2, 1, 512, 8192);
    cases[1].zero = 3;
    cases[2] = finalized(&m, 64, 8, 2, 1, 1, 2, 128, 4096);
    cases[2].recompute = RECOMPUTE_FULL;
    cases[2].precision = PRECISION_FP8_CS;
    cases[2].distributed_optimizer = true;
    cases[3] = cases[0];
    cases[3].grad_bytes = 2;
    cases[3].recompute = RECOMPUTE_SELECTIVE;
    for (int i = 0; i < 4; i++) {
        char *text = written(LAUNCH_MEGATRON, &m, &cases[i], "megatron-core");
        megatron_flags_known(text);
        /* Megatron-FSDP asserts the fsdp_dtensor checkpoint format */
        CU_ASSERT_EQUAL(strstr(text, "--ckpt-format fsdp_dtensor") != NULL,
                        cases[i].zero >= 2);
        megatron_args_t a;
        int rc = megatron_args_read(text, strlen(text), "emitted", &a, &e);
        if (rc)
            fprintf(stderr, "read back: %s\n", e.msg);
        CU_ASSERT_EQUAL_FATAL(rc, 0);
        layout_t back = a.layout;
        CU_ASSERT_EQUAL_FATAL(layout_finalize(&back, &a.model, cases[i].n_gpus, &e), 0);
        same_layout(&cases[i], &back);
        CU_ASSERT_EQUAL(back.grad_bytes, cases[i].grad_bytes == 2 ? 2 : 4);
        CU_ASSERT_EQUAL(a.model.n_layers, m.n_layers);
        CU_ASSERT_EQUAL(a.model.hidden, m.hidden);
        CU_ASSERT_EQUAL(a.model.ffn, m.ffn);
        CU_ASSERT_EQUAL(a.model.n_heads, m.n_heads);
        CU_ASSERT_EQUAL(a.model.n_kv_heads, m.n_kv_heads);
        CU_ASSERT_EQUAL(a.model.vocab, m.vocab);
        CU_ASSERT_EQUAL(a.model.mlp, m.mlp);
        CU_ASSERT_EQUAL(a.model.tied_embeddings, m.tied_embeddings);
        megatron_args_free(&a);
        free(text);
    }
    /* one replica: no gradient reduce to overlap, so no parameter-gather
     * overlap either (Megatron asserts the one with the other) */
    layout_t one = finalized(&m, 8, 8, 1, 1, 1, 1, 8, 8192);
    one.distributed_optimizer = true;
    CU_ASSERT_EQUAL_FATAL(layout_finalize(&one, &m, 8, &e), 0);
    char *text = written(LAUNCH_MEGATRON, &m, &one, "megatron-core");
    CU_ASSERT_PTR_NULL(strstr(text, "--overlap-param-gather"));
    CU_ASSERT_PTR_NULL(strstr(text, "--overlap-grad-reduce"));
    free(text);
}

/* A mixture-of-experts layout (DeepSeek-V3: MLA, 3 dense and 58 MoE
 * blocks, MTP, EP 64): the Megatron arguments define the same model and
 * layout, with the framework's MoE options; Bridge overrides carry the EP;
 * the DeepSpeed launcher refuses MoE models. */
static void test_moe_round_trip(void)
{
    model_t m;
    err_t e;
    CU_ASSERT_EQUAL_FATAL(model_load("deepseek-v3", &m, &e), 0);
    layout_t l = finalized(&m, 1024, 2, 1, 1, 1, 1, 1024, 4096);
    l.ep = 64;
    l.etp = 1;
    l.distributed_optimizer = true;
    CU_ASSERT_EQUAL_FATAL(layout_finalize(&l, &m, 1024, &e), 0);
    char *text = written(LAUNCH_MEGATRON, &m, &l, "megatron-bridge-25.09");
    megatron_flags_known(text);
    CU_ASSERT_PTR_NOT_NULL(strstr(text, "--moe-layer-freq ([0]*3+[1]*58)"));
    megatron_args_t a;
    int rc = megatron_args_read(text, strlen(text), "emitted", &a, &e);
    if (rc)
        fprintf(stderr, "read back: %s\n", e.msg);
    CU_ASSERT_EQUAL_FATAL(rc, 0);
    model_params_t p, q;
    model_params(&m, &p);
    model_params(&a.model, &q);
    CHECK_REL(q.total, p.total, 1e-6);
    CHECK_REL(q.active, p.active, 1e-6);
    CU_ASSERT_EQUAL(a.model.moe.n_moe_layers, 58);
    CU_ASSERT_EQUAL(a.model.moe.n_groups, 8); /* node-limited routing */
    CU_ASSERT_EQUAL(a.model.moe.group_topk, 4);
    CU_ASSERT_EQUAL(a.model.n_mtp, 1);
    CU_ASSERT_TRUE(model_is_mla(&a.model));
    CU_ASSERT_EQUAL(a.layout.ep, 64);
    CU_ASSERT_EQUAL(a.layout.etp, 1);
    CU_ASSERT_EQUAL(a.opt.moe.dispatcher, MOE_DISPATCH_DEEPEP); /* Bridge's recipe */
    CU_ASSERT_TRUE(a.opt.moe.grouped_gemm && a.opt.moe.a2a_overlap);
    CU_ASSERT_TRUE(a.opt.host.router_fusion); /* Bridge's performance configs */
    CU_ASSERT_EQUAL(a.opt.host.graph_scopes, 0u);
    megatron_args_free(&a);
    free(text);
    /* partial CUDA graphs go out as Transformer Engine's and come back */
    sim_options_t o;
    layout_t scratch = l;
    CU_ASSERT_EQUAL_FATAL(sim_options_framework("megatron-bridge-26.04", "gb200", &o, &scratch, &e),
                          0);
    CU_ASSERT_EQUAL(o.host.graph_scopes,
                    HOST_GRAPH_ATTN | HOST_GRAPH_MOE_ROUTER | HOST_GRAPH_MOE_PREPROCESS);
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    CU_ASSERT_EQUAL(launch_write_for(LAUNCH_MEGATRON, "megatron-bridge-26.04", &m, &l, &o, f, &e),
                    0);
    fclose(f);
    CU_ASSERT_PTR_NOT_NULL(strstr(buf, "--cuda-graph-impl transformer_engine\n"
                                       "--cuda-graph-scope attn moe_router moe_preprocess\n"));
    CU_ASSERT_EQUAL_FATAL(megatron_args_read(buf, len, "emitted", &a, &e), 0);
    CU_ASSERT_EQUAL(a.opt.host.graph_scopes, o.host.graph_scopes);
    megatron_args_free(&a);
    free(buf);
    text = written(LAUNCH_NEMO, &m, &l, "megatron-bridge-25.09");
    layout_t back;
    layout_defaults(&back);
    CU_ASSERT_EQUAL(bridge_read_overrides(text, "emitted", &m, &back, &e), 0);
    CU_ASSERT_EQUAL(back.ep, 64);
    CU_ASSERT_EQUAL(back.etp, 1);
    free(text);
    refused(LAUNCH_DEEPSPEED, &m, &l, "deepspeed", "mixture of experts");
}

/* Block recompute of the first 2 layers of each virtual stage goes out as
 * Megatron's --recompute-method block / Bridge's recompute_method=block
 * and comes back; DeepSpeed and torchtitan cannot say it and refuse. */
static void test_block_recompute_round_trip(void)
{
    model_t m;
    err_t e;
    CU_ASSERT_EQUAL_FATAL(model_load("llama3-70b", &m, &e), 0);
    layout_t l = finalized(&m, 64, 8, 4, 1, 1, 1, 128, 8192);
    l.recompute = RECOMPUTE_FULL;
    l.recompute_layers = 2;
    l.sequence_parallel = true;
    CU_ASSERT_EQUAL_FATAL(layout_finalize(&l, &m, 64, &e), 0);
    char *text = written(LAUNCH_MEGATRON, &m, &l, "megatron-core");
    megatron_flags_known(text);
    megatron_args_t a;
    CU_ASSERT_EQUAL_FATAL(megatron_args_read(text, strlen(text), "emitted", &a, &e), 0);
    CU_ASSERT_EQUAL(a.layout.recompute, RECOMPUTE_FULL);
    CU_ASSERT_EQUAL(a.layout.recompute_layers, 2);
    megatron_args_free(&a);
    free(text);
    text = written(LAUNCH_NEMO, &m, &l, "megatron-bridge-26.04");
    layout_t back;
    layout_defaults(&back);
    CU_ASSERT_EQUAL(bridge_read_overrides(text, "emitted", &m, &back, &e), 0);
    CU_ASSERT_EQUAL(back.recompute, RECOMPUTE_FULL);
    CU_ASSERT_EQUAL(back.recompute_layers, 2);
    free(text);
    /* block over no layers is refused, naming the key */
    layout_defaults(&back);
    const char *none = "model.recompute_granularity=full\nmodel.recompute_method=block\n"
                       "model.recompute_num_layers=0\n";
    CU_ASSERT_EQUAL(bridge_read_overrides(none, "overrides", &m, &back, &e), ERR_INPUT);
    CU_ASSERT_PTR_NOT_NULL(strstr(e.msg, "at least 1 layer"));
    refused(LAUNCH_DEEPSPEED, &m, &l, "deepspeed", "block recompute");
    refused(LAUNCH_TORCHTITAN, &m, &l, "torchtitan-2025-12", "block recompute");
}

/* Selective recompute of named modules goes out as Megatron's
 * --recompute-modules and Bridge's model.recompute_modules and comes back;
 * the performance scripts' --recompute_modules means selective recompute
 * of those modules; modules under full recompute are ignored, said. */
static void test_recompute_modules_round_trip(void)
{
    model_t m;
    err_t e;
    CU_ASSERT_EQUAL_FATAL(model_load("llama3-70b", &m, &e), 0);
    layout_t l = finalized(&m, 64, 8, 4, 1, 1, 1, 128, 8192);
    l.recompute = RECOMPUTE_SELECTIVE;
    l.recompute_modules = LAYOUT_RC_CORE_ATTN | LAYOUT_RC_MLP;
    l.sequence_parallel = true;
    CU_ASSERT_EQUAL_FATAL(layout_finalize(&l, &m, 64, &e), 0);
    char *text = written(LAUNCH_MEGATRON, &m, &l, "megatron-core");
    CU_ASSERT_PTR_NOT_NULL(strstr(text, "--recompute-modules core_attn mlp"));
    megatron_flags_known(text);
    megatron_args_t a;
    CU_ASSERT_EQUAL_FATAL(megatron_args_read(text, strlen(text), "emitted", &a, &e), 0);
    CU_ASSERT_EQUAL(a.layout.recompute, RECOMPUTE_SELECTIVE);
    CU_ASSERT_EQUAL(a.layout.recompute_modules, l.recompute_modules);
    megatron_args_free(&a);
    free(text);
    text = written(LAUNCH_NEMO, &m, &l, "megatron-bridge-26.04");
    CU_ASSERT_PTR_NOT_NULL(strstr(text, "model.recompute_modules=[core_attn,mlp]"));
    layout_t back;
    layout_defaults(&back);
    CU_ASSERT_EQUAL(bridge_read_overrides(text, "emitted", &m, &back, &e), 0);
    CU_ASSERT_EQUAL(back.recompute, RECOMPUTE_SELECTIVE);
    CU_ASSERT_EQUAL(back.recompute_modules, l.recompute_modules);
    free(text);
    layout_defaults(&back);
    CU_ASSERT_EQUAL(bridge_read_overrides("-tp 8 --recompute_modules layernorm,moe_act", "perf", &m,
                                     &back, &e),
                    0);
    CU_ASSERT_EQUAL(back.recompute, RECOMPUTE_SELECTIVE);
    CU_ASSERT_EQUAL(back.recompute_modules, LAYOUT_RC_LAYERNORM | LAYOUT_RC_MOE_ACT);
    layout_defaults(&back);
    CU_ASSERT_EQUAL(bridge_read_overrides("model.recompute_modules=[core_attn,shortcut]\n", "overrides",
                                     &m, &back, &e),
                    ERR_INPUT);
    CU_ASSERT_PTR_NOT_NULL(strstr(e.msg, "unknown module 'shortcut'"));
    layout_defaults(&back);
    CU_ASSERT_EQUAL(bridge_read_overrides("model.recompute_granularity=full\n"
                                     "model.recompute_modules=[mlp]\n",
                                     "overrides", &m, &back, &e),
                    0);
    CU_ASSERT_EQUAL(back.recompute_modules, 0u);
}

/* Megatron-Bridge overrides: every key is a field of the configs the
 * recipe CLI sets, and bridge_read_overrides reads them back, including the
 * interleaved split that counts the embedding and the loss. */
/* Every precision Bridge has a mixed_precision recipe for comes back from
 * the overrides as it went out: reports/launch writes the recipe names and
 * inputs/bridge reads them, each from its own table, which this holds
 * equal; the others are refused on --emit. */
static void test_nemo_precision_round_trip(void)
{
    model_t m;
    err_t e;
    CU_ASSERT_EQUAL_FATAL(model_load("llama3-8b", &m, &e), 0);
    int written_back = 0;
    for (int p = 0; p < PRECISION_COUNT; p++) {
        layout_t l = finalized(&m, 8, 1, 1, 1, 1, 1, 8, 4096);
        l.precision = (precision_t)p;
        sim_options_t o;
        layout_t scratch = l;
        CU_ASSERT_EQUAL_FATAL(sim_options_framework("megatron-bridge-26.04", NULL, &o, &scratch,
                                                    &e),
                              0);
        char *buf = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&buf, &len);
        CU_ASSERT_PTR_NOT_NULL_FATAL(f);
        int rc = launch_write_for(LAUNCH_NEMO, "megatron-bridge-26.04", &m, &l, &o, f, &e);
        fclose(f);
        if (rc == 0) {
            layout_t back;
            layout_defaults(&back);
            CU_ASSERT_EQUAL(bridge_read_overrides(buf, "emitted", &m, &back, &e), 0);
            if (back.precision != l.precision)
                fprintf(stderr, "precision %s came back as %s\n",
                        layout_precision_name(l.precision), layout_precision_name(back.precision));
            CU_ASSERT_EQUAL(back.precision, l.precision);
            written_back++;
        } else {
            CU_ASSERT_EQUAL(rc, ERR_INPUT);
        }
        free(buf);
    }
    CU_ASSERT_EQUAL(written_back, 7); /* bf16, fp16, fp8 delayed/current/MX/blockwise, NVFP4 */
}

static void test_nemo_round_trip(void)
{
    model_t m;
    err_t e;
    CU_ASSERT_EQUAL_FATAL(model_load("llama3.1-405b", &m, &e), 0);
    layout_t u;
    layout_defaults(&u);
    u.tp = 8;
    u.pp = 16;
    u.vpp = 4;
    u.schedule = SCHEDULE_INTERLEAVED;
    u.first_stage_layers = u.last_stage_layers = 1; /* (126 + 2) / 64 - 1 */
    u.micro_batch = 1;
    u.global_batch = 2048;
    u.seq_len = 8192;
    u.sequence_parallel = true;
    u.distributed_optimizer = true;
    u.precision = PRECISION_FP8_CS;
    CU_ASSERT_EQUAL_FATAL(layout_finalize(&u, &m, 16384, &e), 0);
    char *text = written(LAUNCH_NEMO, &m, &u, "megatron-bridge-26.04");
    check_bridge_keys(text);
    layout_t back;
    layout_defaults(&back);
    CU_ASSERT_EQUAL_FATAL(bridge_read_overrides(text, "emitted", &m, &back, &e), 0);
    CU_ASSERT_EQUAL_FATAL(layout_finalize(&back, &m, 16384, &e), 0);
    same_layout(&u, &back);
    /* one layer a chunk: the embedding and the loss alone on theirs */
    layout_t one = u;
    one.vpp = 8;
    one.first_stage_layers = one.last_stage_layers = LAYOUT_STAGE_EMPTY;
    one.grad_accum = 0;
    CU_ASSERT_EQUAL_FATAL(layout_finalize(&one, &m, 16384, &e), 0);
    char *t1 = written(LAUNCH_NEMO, &m, &one, "megatron-bridge-26.04");
    CU_ASSERT_PTR_NOT_NULL(strstr(t1, "model.account_for_embedding_in_pipeline_split=true\n"));
    layout_defaults(&back);
    CU_ASSERT_EQUAL_FATAL(bridge_read_overrides(t1, "emitted", &m, &back, &e), 0);
    CU_ASSERT_EQUAL_FATAL(layout_finalize(&back, &m, 16384, &e), 0);
    same_layout(&one, &back);
    CU_ASSERT_EQUAL(back.first_stage_layers, LAYOUT_STAGE_EMPTY);
    free(t1);
    /* Megatron-FSDP under Bridge: the checkpoint format it asserts, a key
     * of Bridge's CheckpointConfig */
    layout_t fsdp = u;
    fsdp.pp = 1;
    fsdp.vpp = 1;
    fsdp.schedule = SCHEDULE_1F1B;
    fsdp.first_stage_layers = fsdp.last_stage_layers = 0;
    fsdp.zero = 3;
    fsdp.cp = 1;
    fsdp.grad_accum = 0;
    fsdp.dp = 0;
    fsdp.distributed_optimizer = false;
    int frc = layout_finalize(&fsdp, &m, 1024, &e);
    if (frc)
        fprintf(stderr, "fsdp: %s\n", e.msg);
    CU_ASSERT_EQUAL_FATAL(frc, 0);
    char *fs = written(LAUNCH_NEMO, &m, &fsdp, "megatron-bridge-26.04");
    CU_ASSERT_PTR_NOT_NULL(strstr(fs, "\ncheckpoint.ckpt_format=fsdp_dtensor\n"));
    check_bridge_keys(fs);
    free(fs);
    /* a 2021 Megatron-LM plan says its flags are today's */
    char *mg21 = written(LAUNCH_MEGATRON, &m, &u, "megatron-2021");
    CU_ASSERT_PTR_NOT_NULL(strstr(mg21, "planned for megatron-2021; these are today's"));
    free(mg21);
    /* planned for a NeMo preset, the Bridge key names are said to be Bridge's */
    char *nemo = written(LAUNCH_NEMO, &m, &u, "nemo-25.02");
    CU_ASSERT_PTR_NOT_NULL(strstr(nemo, "planned for nemo-25.02; these are Megatron-Bridge's key"));
    CU_ASSERT_PTR_NULL(strstr(text, "planned for"));
    free(nemo);
    /* a bad line is named */
    CHECK_ERR(bridge_read_overrides("model.tensor_model_parallel_size=eight\n", "x.txt", &m, &back, &e),
              &e, ERR_INPUT, "x.txt", "line 1");
    /* PP 0 with the embedding counted is left to the layout's check (the
     * reader divided by it; found by the bridge fuzzer) */
    layout_defaults(&back);
    CU_ASSERT_EQUAL(bridge_read_overrides("model.pipeline_model_parallel_size=0\n"
                                     "model.virtual_pipeline_model_parallel_size=2\n"
                                     "model.account_for_embedding_in_pipeline_split=true\n",
                                     "x.txt", &m, &back, &e),
                    0);
    CU_ASSERT_NOT_EQUAL(layout_finalize(&back, &m, 64, &e), 0);
    free(text);
}

/* The ds_config.json part is read back by --deepspeed's reader (ZeRO stage
 * and batch sizes); its keys are DeepSpeed's. */
static void test_deepspeed_round_trip(void)
{
    model_t m;
    err_t e;
    CU_ASSERT_EQUAL_FATAL(model_load("llama3-8b", &m, &e), 0);
    for (int z = 0; z <= 3; z++) {
        layout_t l = finalized(&m, 64, 1, 1, 1, 1, 2, 256, 4096);
        l.zero = z == 1 ? 0 : z;
        l.distributed_optimizer = z == 1;
        if (z == 3)
            l.recompute = RECOMPUTE_FULL;
        char *text = written(LAUNCH_DEEPSPEED, &m, &l, "deepspeed");
        /* the file is the JSON document alone (DeepSpeed json.loads it);
         * the launcher arguments are said apart */
        CU_ASSERT_PTR_NULL(strchr(text, '#'));
        char args[400];
        launch_deepspeed_args(&l, args, sizeof args);
        CU_ASSERT_PTR_NOT_NULL(strstr(args, "--micro-batch-size 2 --global-batch-size 256"));
        CU_ASSERT_EQUAL(strstr(args, "--checkpoint-activations") != NULL, z == 3);
        cJSON *cfg = cJSON_Parse(text);
        CU_ASSERT_PTR_NOT_NULL_FATAL(cfg);
        layout_t back;
        layout_defaults(&back);
        notes_t notes;
        notes_init(&notes);
        CU_ASSERT_EQUAL_FATAL(deepspeed_apply(text, strlen(text), "emitted", NULL, &back, NULL,
                                              &notes, &e),
                              0);
        notes_free(&notes);
        CU_ASSERT_EQUAL(back.micro_batch, l.micro_batch);
        CU_ASSERT_EQUAL(back.global_batch, l.global_batch);
        CU_ASSERT_EQUAL(back.zero, z);
        char *keys = slurp(fixture("launch/deepspeed_keys.txt"));
        CU_ASSERT_PTR_NOT_NULL_FATAL(keys);
        /* every key of the document, at any depth */
        cJSON *stack[16];
        int depth = 0;
        stack[depth++] = cfg;
        while (depth) {
            cJSON *o = stack[--depth];
            for (cJSON *c = o->child; c; c = c->next) {
                char needle[80];
                snprintf(needle, sizeof needle, "\n%s\n", c->string);
                if (!strstr(keys, needle))
                    fprintf(stderr, "not a DeepSpeed key: %s\n", c->string);
                CU_ASSERT_PTR_NOT_NULL(strstr(keys, needle));
                if (cJSON_IsObject(c) && depth < 16)
                    stack[depth++] = c;
            }
        }
        free(keys);
        cJSON_Delete(cfg);
        free(text);
    }
}

/* Every key of text's [section] lines is in the key list keys. */
static void check_toml_keys(const char *text, const char *keys)
{
    char section[48] = "";
    for (const char *p = text; *p;) {
        const char *eol = strchr(p, '\n');
        size_t n = eol ? (size_t)(eol - p) : strlen(p);
        if (n && *p == '[') {
            snprintf(section, sizeof section, "%.*s", (int)(n - 2), p + 1);
        } else if (n && *p != '#') {
            char needle[128];
            size_t k = strcspn(p, " =");
            snprintf(needle, sizeof needle, "\n%s.%.*s\n", section, (int)k, p);
            if (!strstr(keys, needle))
                fprintf(stderr, "not a torchtitan key: %s", needle + 1);
            CU_ASSERT_PTR_NOT_NULL(strstr(keys, needle));
        }
        p += n + (eol ? 1 : 0);
    }
}

/* torchtitan's TOML: every [section] key is a field of its job config. */
static void test_torchtitan_keys(void)
{
    model_t m;
    err_t e;
    CU_ASSERT_EQUAL_FATAL(model_load("llama3-70b", &m, &e), 0);
    layout_t l = finalized(&m, 256, 8, 4, 2, 1, 1, 512, 8192);
    l.zero = 3;
    l.recompute = RECOMPUTE_OPS;
    l.precision = PRECISION_FP8_CS;
    char *text = written(LAUNCH_TORCHTITAN, &m, &l, "torchtitan-2025-06");
    char *keys = slurp(fixture("launch/torchtitan_keys.txt"));
    CU_ASSERT_PTR_NOT_NULL_FATAL(keys);
    check_toml_keys(text, keys);
    /* round trip: torchtitan's own reader gives the layout back */
    torchtitan_t t;
    CU_ASSERT_EQUAL_FATAL(torchtitan_read(text, strlen(text), "emitted.toml", 256, &t, &e), 0);
    CU_ASSERT_EQUAL(t.layout.tp, l.tp);
    CU_ASSERT_EQUAL(t.layout.pp, l.pp);
    CU_ASSERT_EQUAL(t.layout.cp, l.cp);
    CU_ASSERT_EQUAL(t.layout.zero, 3);
    CU_ASSERT_EQUAL(t.layout.recompute, RECOMPUTE_OPS);
    /* tensorwise Float8: plain fp8, which the torchtitan preset runs as
     * current scaling */
    CU_ASSERT_EQUAL(t.layout.precision, PRECISION_FP8);
    CU_ASSERT_EQUAL(t.layout.seq_len, l.seq_len);
    CU_ASSERT_EQUAL(t.world_size, 256);
    CU_ASSERT_STRING_EQUAL(t.model_name, "llama3-70b");
    layout_t back = t.layout;
    CU_ASSERT_EQUAL_FATAL(layout_finalize(&back, &m, 256, &e), 0);
    CU_ASSERT_EQUAL(back.dp, l.dp);
    CU_ASSERT_EQUAL(back.global_batch, l.global_batch);
    CU_ASSERT_EQUAL(back.micro_batch, l.micro_batch);
    torchtitan_free(&t);
    /* a layout torchtitan cannot express is refused, naming why */
    l.recompute = RECOMPUTE_SELECTIVE;
    refused(LAUNCH_TORCHTITAN, &m, &l, "torchtitan-2025-06", "selective");
    free(keys);
    free(text);
}

/* FSDP over context-parallel ranks alone (data_parallel_shard_degree 1,
 * CP 4: torchtitan shards over dp_shard x cp) comes back as ZeRO-3, with
 * the preset's gradient accounting (the reduction dtype is the
 * reduce-scatter's, not the gradients' memory): a planned layout and its
 * emitted config simulate alike. */
static void test_torchtitan_fsdp_over_cp_round_trip(void)
{
    model_t m;
    err_t e;
    CU_ASSERT_EQUAL_FATAL(model_load("llama3-8b", &m, &e), 0);
    layout_t l;
    layout_defaults(&l);
    l.tp = 4;
    l.cp = 4;
    l.sequence_parallel = true;
    l.sp_saves_gathered = true; /* as the planner sets it for torchtitan */
    l.zero = 3;
    l.micro_batch = 1;
    l.global_batch = 8;
    l.seq_len = 32768;
    CU_ASSERT_EQUAL_FATAL(layout_finalize(&l, &m, 16, &e), 0);
    CU_ASSERT_EQUAL(l.dp, 1);
    char *text = written(LAUNCH_TORCHTITAN, &m, &l, "torchtitan-2025-06");
    CU_ASSERT_PTR_NOT_NULL_FATAL(text);
    CU_ASSERT_PTR_NOT_NULL(strstr(text, "data_parallel_shard_degree = 1\n"));
    torchtitan_t t;
    CU_ASSERT_EQUAL_FATAL(torchtitan_read(text, strlen(text), "emitted.toml", 16, &t, &e), 0);
    CU_ASSERT_EQUAL(t.layout.zero, 3);
    CU_ASSERT_EQUAL(t.layout.grad_bytes, l.grad_bytes);
    CU_ASSERT_EQUAL(t.reduce_bytes, 4);
    layout_t back = t.layout;
    CU_ASSERT_EQUAL_FATAL(layout_finalize(&back, &m, 16, &e), 0);
    /* one micro-batch a rank, accumulated 8 times: local_batch_size 1 */
    CU_ASSERT_PTR_NOT_NULL(strstr(text, "local_batch_size = 1\n"));
    CU_ASSERT_EQUAL(back.micro_batch, 1);
    CU_ASSERT_EQUAL(back.grad_accum, 8);
    model_memory_t a, b;
    memory_opts_t mo;
    memory_opts_default(&mo);
    model_memory_peak(&m, &l, &mo, &a);
    model_memory_peak(&m, &back, &mo, &b);
    CU_ASSERT_DOUBLE_EQUAL(a.total_bytes, b.total_bytes, 1);
    torchtitan_free(&t);
    free(text);
}

/* The torchtitan-2024-12 preset's layouts go out in the keys of that
 * torchtitan (9dec370's argparse flags: [training] batch_size and degrees,
 * pipeline under [experimental] with its micro-batch count and split
 * points) and read back as that generation; what it could not run is
 * refused (gradient accumulation without pipeline stages). */
static void test_torchtitan_2024_keys(void)
{
    model_t m;
    err_t e;
    CU_ASSERT_EQUAL_FATAL(model_load("llama3-70b", &m, &e), 0);
    layout_t l = finalized(&m, 256, 4, 4, 20, 1, 1, 512, 8192);
    l.zero = 3;
    l.recompute = RECOMPUTE_FULL;
    CU_ASSERT_EQUAL_FATAL(layout_finalize(&l, &m, 256, &e), 0);
    char *text = written(LAUNCH_TORCHTITAN, &m, &l, "torchtitan-2024-12");
    CU_ASSERT_PTR_NOT_NULL_FATAL(text);
    CU_ASSERT_PTR_NOT_NULL(strstr(text, "December 2024 keys"));
    CU_ASSERT_PTR_NOT_NULL(strstr(text, "pipeline_parallel_microbatches = 32\n"));
    char *keys = slurp(fixture("launch/torchtitan_2024_12_keys.txt"));
    CU_ASSERT_PTR_NOT_NULL_FATAL(keys);
    check_toml_keys(text, keys);
    torchtitan_t t;
    CU_ASSERT_EQUAL_FATAL(torchtitan_read(text, strlen(text), "emitted.toml", 256, &t, &e), 0);
    CU_ASSERT_STRING_EQUAL(t.framework, "torchtitan-2024-12");
    layout_t back = t.layout;
    CU_ASSERT_EQUAL_FATAL(layout_finalize(&back, &m, 256, &e), 0);
    same_layout(&l, &back);
    CU_ASSERT_EQUAL(back.micro_batch, 1);
    CU_ASSERT_EQUAL(back.grad_accum, 32);
    CU_ASSERT_EQUAL(back.recompute, RECOMPUTE_FULL);
    torchtitan_free(&t);
    free(text);
    free(keys);
    layout_t acc = finalized(&m, 256, 8, 1, 1, 1, 1, 512, 8192);
    acc.zero = 3;
    CU_ASSERT_EQUAL_FATAL(layout_finalize(&acc, &m, 256, &e), 0);
    CU_ASSERT_TRUE(acc.grad_accum > 1);
    refused(LAUNCH_TORCHTITAN, &m, &acc, "torchtitan-2024-12", "no gradient accumulation");
}

/* Megatron-Bridge recipe names say the model, GPUs and precision
 * (src/megatron/bridge/recipes: <model>_pretrain_<N>gpu_<gpu>_<precision>
 * ..._config); a launch command's recipe is found among its words. */
static void test_bridge_recipe_names(void)
{
    static const struct {
        const char *recipe, *model;
        int gpus;
        const char *gpu;
        int precision;
    } cases[] = {
        {"llama31_405b_pretrain_1024gpu_h100_fp8cs_config", "llama3.1-405b", 1024, "h100-sxm",
         PRECISION_FP8_CS},
        {"deepseek_v3_pretrain_256gpu_gb200_fp8mx_large_scale_config", "deepseek-v3", 256,
         "gb200", PRECISION_MXFP8},
        {"deepseek_v3_pretrain_1024gpu_h100_fp8sc_config", "deepseek-v3", 1024, "h100-sxm",
         PRECISION_FP8_BLOCK},
        {"qwen25_1p5b_pretrain_config", "qwen2.5-1.5b", 0, "", -1},
        {"qwen3_30b_a3b_sft_8gpu_b200_bf16_config", "qwen3-30b-a3b", 8, "b200", PRECISION_BF16},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        bridge_recipe_t r;
        CU_ASSERT_EQUAL_FATAL(bridge_recipe_parts(cases[i].recipe, &r), 1);
        CU_ASSERT_STRING_EQUAL(r.model, cases[i].model);
        CU_ASSERT_EQUAL(r.gpus, cases[i].gpus);
        CU_ASSERT_STRING_EQUAL(r.gpu, cases[i].gpu);
        CU_ASSERT_EQUAL(r.precision, cases[i].precision);
    }
    bridge_recipe_t r;
    CU_ASSERT_EQUAL(bridge_recipe_parts("my_config", &r), 0);
    char name[64];
    CU_ASSERT_EQUAL(bridge_recipe("python run_recipe.py --recipe=llama3_8b_pretrain_config "
                                       "train.micro_batch_size=1",
                                       name, sizeof name),
                    1);
    CU_ASSERT_STRING_EQUAL(name, "llama3_8b_pretrain_config");
    CU_ASSERT_EQUAL(bridge_recipe("train.micro_batch_size=1\n", name, sizeof name), 0);
    /* the performance launcher: -mr names the model part, -ng/-g/-c the run;
     * its layout flags are the overrides they stand for */
    const char *perf = "python scripts/performance/setup_experiment.py -m qwen "
                       "-mr qwen3_30b_a3b -ng 16 -g b200 -c fp8_mx -tp 1 -pp 2 -vp None "
                       "-ep 8 -mb 2 -gb 512 -rl 2 --use_megatron_fsdp false\n";
    CU_ASSERT_EQUAL(bridge_recipe(perf, name, sizeof name), 1);
    CU_ASSERT_EQUAL(bridge_recipe_parts(name, &r), 1);
    bridge_perf_run(perf, &r);
    CU_ASSERT_STRING_EQUAL(r.model, "qwen3-30b-a3b");
    CU_ASSERT_EQUAL(r.gpus, 16);
    CU_ASSERT_STRING_EQUAL(r.gpu, "b200");
    CU_ASSERT_EQUAL(r.precision, PRECISION_MXFP8);
    model_t m;
    err_t e;
    CU_ASSERT_EQUAL_FATAL(model_load("qwen3-30b-a3b", &m, &e), 0);
    layout_t l;
    layout_defaults(&l);
    CU_ASSERT_EQUAL_FATAL(bridge_read_overrides(perf, "perf", &m, &l, &e), 0);
    CU_ASSERT_EQUAL(l.pp, 2);
    CU_ASSERT_EQUAL(l.vpp, 1);
    CU_ASSERT_EQUAL(l.ep, 8);
    CU_ASSERT_EQUAL(l.micro_batch, 2);
    CU_ASSERT_EQUAL(l.global_batch, 512);
    CU_ASSERT_EQUAL(l.recompute, RECOMPUTE_FULL);
    CU_ASSERT_EQUAL(l.recompute_layers, 2);
    CU_ASSERT_EQUAL(l.zero, 0);
    CHECK_ERR(bridge_read_overrides("x.py -tp\n", "perf", &m, &l, &e), &e, ERR_INPUT, "-tp",
              "needs a value");
}

/* Uneven pipeline stages go out as torchtitan takes them and come back
 * the same: mid-2025 split points for Llama 3.1 405B's 126 layers on PP 8
 * (15/16 x 6/15, torchtitan's own split), late-2025 layers per stage with
 * the first and last stages' shortfall for an expert-parallel layout
 * (DeepSeek-V2-Lite's 27 layers on PP 4 as 6/7/7/7); one torchtitan
 * cannot say (a first stage larger than the middle ones) is refused. */
static void test_torchtitan_stage_split_round_trip(void)
{
    model_t m;
    err_t e;
    CU_ASSERT_EQUAL_FATAL(model_load("llama3-405b", &m, &e), 0);
    layout_t l;
    layout_defaults(&l);
    l.tp = 8;
    l.pp = 8;
    l.sequence_parallel = true;
    l.first_stage_layers = l.last_stage_layers = 15;
    l.micro_batch = 1;
    l.global_batch = 64;
    l.seq_len = 8192;
    l.zero = 3;
    CU_ASSERT_EQUAL_FATAL(layout_finalize(&l, &m, 512, &e), 0);
    char *text = written(LAUNCH_TORCHTITAN, &m, &l, "torchtitan-2025-06");
    CU_ASSERT_PTR_NOT_NULL_FATAL(text);
    CU_ASSERT_PTR_NOT_NULL(strstr(text, "pipeline_parallel_split_points = [\"layers.15\", "
                                        "\"layers.31\", \"layers.47\", \"layers.63\", "
                                        "\"layers.79\", \"layers.95\", \"layers.111\"]"));
    torchtitan_t t;
    CU_ASSERT_EQUAL_FATAL(torchtitan_read(text, strlen(text), "emitted.toml", 512, &t, &e), 0);
    CU_ASSERT_EQUAL(t.layout.first_stage_layers, 15);
    CU_ASSERT_EQUAL(t.layout.last_stage_layers, 15);
    torchtitan_free(&t);
    free(text);
    /* late 2025: Qwen3-30B-A3B's 48 layers on PP 4 as 10/13/13/12 */
    model_t q;
    CU_ASSERT_EQUAL_FATAL(model_load("qwen3-30b-a3b", &q, &e), 0);
    layout_t x;
    layout_defaults(&x);
    x.pp = 4;
    x.ep = 2;
    x.first_stage_layers = 10;
    x.last_stage_layers = 12;
    x.micro_batch = 1;
    x.global_batch = 64;
    x.seq_len = 4096;
    x.zero = 3;
    CU_ASSERT_EQUAL_FATAL(layout_finalize(&x, &q, 8, &e), 0);
    text = written(LAUNCH_TORCHTITAN, &q, &x, "torchtitan-2025-12");
    CU_ASSERT_PTR_NOT_NULL_FATAL(text);
    CU_ASSERT_PTR_NOT_NULL(strstr(text, "pipeline_parallel_layers_per_stage = 13\n"
                                        "pipeline_parallel_first_stage_less_layers = 3\n"
                                        "pipeline_parallel_last_stage_less_layers = 1\n"));
    CU_ASSERT_EQUAL_FATAL(torchtitan_read(text, strlen(text), "emitted.toml", 8, &t, &e), 0);
    CU_ASSERT_STRING_EQUAL(t.framework, "torchtitan-2025-12");
    layout_t back = t.layout;
    CU_ASSERT_EQUAL_FATAL(layout_finalize(&back, &q, 8, &e), 0);
    for (int vs = 0; vs < 4; vs++)
        CU_ASSERT_EQUAL(layout_chunk_layers(&back, &q, vs), layout_chunk_layers(&x, &q, vs));
    torchtitan_free(&t);
    free(text);
    /* a first stage above the middle ones: no shortfall says it */
    x.first_stage_layers = 14;
    x.last_stage_layers = 8;
    CU_ASSERT_EQUAL_FATAL(layout_finalize(&x, &q, 8, &e), 0);
    refused(LAUNCH_TORCHTITAN, &q, &x, "torchtitan-2025-12", "first and last stages");
}

/* Llama 3 405B as Meta trained it (TP8 PP16, one layer a chunk, 8 chunks
 * a rank, the embedding and the output alone on the first and last;
 * ZeRO-2: parameters kept gathered from the forward to the backward): no
 * "layers.N" split point leaves a stage without layers, so torchtitan gets
 * one layer a stage, with the embedding and the output counted as a layer
 * each, and fsdp_reshard_after_forward "never"; both read back to the same
 * layout. torchtitan of 2024 splits only at layer boundaries and refuses
 * the layout. */
static void test_torchtitan_embedding_alone_round_trip(void)
{
    model_t m;
    err_t e;
    CU_ASSERT_EQUAL_FATAL(model_load("llama3-405b", &m, &e), 0);
    layout_t l;
    layout_defaults(&l);
    l.tp = 8;
    l.pp = 16;
    l.vpp = 8;
    l.schedule = SCHEDULE_INTERLEAVED;
    l.first_stage_layers = l.last_stage_layers = LAYOUT_STAGE_EMPTY;
    l.sequence_parallel = true;
    l.sp_saves_gathered = true;
    l.zero = 2;
    l.micro_batch = 1;
    l.global_batch = 2048;
    l.seq_len = 8192;
    CU_ASSERT_EQUAL_FATAL(layout_finalize(&l, &m, 16384, &e), 0);
    static const char *const fws[] = {"torchtitan-2025-06", "torchtitan-2025-12"};
    static const char *const key_files[] = {"launch/torchtitan_keys.txt",
                                            "launch/torchtitan_2025_12_keys.txt"};
    for (int k = 0; k < 2; k++) {
        char *text = written(LAUNCH_TORCHTITAN, &m, &l, fws[k]);
        CU_ASSERT_PTR_NOT_NULL_FATAL(text);
        char *keys = slurp(fixture(key_files[k])); /* the job config's own fields */
        CU_ASSERT_PTR_NOT_NULL_FATAL(keys);
        check_toml_keys(text, keys);
        free(keys);
        CU_ASSERT_PTR_NOT_NULL(strstr(text, "pipeline_parallel_layers_per_stage = 1\n"));
        CU_ASSERT_PTR_NULL(strstr(text, "split_points"));
        CU_ASSERT_PTR_NOT_NULL(strstr(text, "fsdp_reshard_after_forward = \"never\"\n"));
        torchtitan_t t;
        CU_ASSERT_EQUAL_FATAL(torchtitan_read(text, strlen(text), "emitted.toml", 16384, &t, &e),
                              0);
        layout_t back = t.layout;
        CU_ASSERT_EQUAL_FATAL(layout_finalize(&back, &m, 16384, &e), 0);
        CU_ASSERT_EQUAL(back.vpp, 8);
        CU_ASSERT_EQUAL(back.zero, 2);
        CU_ASSERT_EQUAL(back.dp, 128);
        for (int vs = 0; vs < 16 * 8; vs++)
            CU_ASSERT_EQUAL(layout_chunk_layers(&back, &m, vs), layout_chunk_layers(&l, &m, vs));
        torchtitan_free(&t);
        free(text);
    }
    /* "default" reshards (ZeRO-3), an unknown policy is refused */
    const char *toml = "[model]\nname = \"llama3\"\nflavor = \"8B\"\n"
                       "[parallelism]\ndata_parallel_shard_degree = 8\n"
                       "fsdp_reshard_after_forward = \"%s\"\n";
    char doc[256];
    torchtitan_t t;
    snprintf(doc, sizeof doc, toml, "default");
    CU_ASSERT_EQUAL_FATAL(torchtitan_read(doc, strlen(doc), "a.toml", 8, &t, &e), 0);
    CU_ASSERT_EQUAL(t.layout.zero, 3);
    torchtitan_free(&t);
    snprintf(doc, sizeof doc, toml, "sometimes");
    CHECK_ERR(torchtitan_read(doc, strlen(doc), "a.toml", 8, &t, &e), &e, ERR_INPUT,
              "parallelism.fsdp_reshard_after_forward", "never");
    /* torchtitan of 2024: every stage holds a layer */
    sim_options_t o;
    layout_t scratch = l;
    CU_ASSERT_EQUAL_FATAL(sim_options_framework("torchtitan-2024-12", NULL, &o, &scratch, &e), 0);
    fw_preset_t fw;
    CU_ASSERT_EQUAL_FATAL(fw_load("torchtitan-2024-12", &fw, &e), 0);
    l.zero = 3;
    CHECK_ERR(fw_check_layout(&fw, &l, &o, &e), &e, ERR_INPUT, "--first-stage-layers",
              "layer boundaries");
}

/* A DualPipeV layout with expert parallelism (Llama 4 Scout, 48 layers on
 * PP4 as 8 stages of 6, EP8) is written with the keys of torchtitan's
 * December 2025 job config and read back to the same layout under the
 * torchtitan-2025-12 preset, eager (DualPipeV refuses compiled stages)
 * and reducing gradients in fp32 as the preset does. */
static void test_torchtitan_dualpipev_round_trip(void)
{
    model_t m;
    err_t e;
    CU_ASSERT_EQUAL_FATAL(model_load("llama4-scout", &m, &e), 0);
    layout_t l;
    layout_defaults(&l);
    l.pp = 4;
    l.ep = 8;
    l.schedule = SCHEDULE_DUALPIPEV;
    l.micro_batch = 1;
    l.global_batch = 512;
    l.seq_len = 8192;
    l.zero = 3;
    CU_ASSERT_EQUAL_FATAL(layout_finalize(&l, &m, 256, &e), 0);
    CU_ASSERT_EQUAL(l.vpp, 2);
    char *text = written(LAUNCH_TORCHTITAN, &m, &l, "torchtitan-2025-12");
    CU_ASSERT_PTR_NOT_NULL_FATAL(text);
    CU_ASSERT_PTR_NOT_NULL(strstr(text, "pipeline_parallel_schedule = \"DualPipeV\""));
    CU_ASSERT_PTR_NOT_NULL(strstr(text, "expert_parallel_degree = 8"));
    CU_ASSERT_PTR_NOT_NULL(strstr(text, "[compile]\nenable = false"));
    CU_ASSERT_PTR_NOT_NULL(strstr(text, "mixed_precision_reduce = \"float32\""));
    char *keys = slurp(fixture("launch/torchtitan_2025_12_keys.txt"));
    CU_ASSERT_PTR_NOT_NULL_FATAL(keys);
    check_toml_keys(text, keys);
    torchtitan_t t;
    CU_ASSERT_EQUAL_FATAL(torchtitan_read(text, strlen(text), "emitted.toml", 256, &t, &e), 0);
    CU_ASSERT_STRING_EQUAL(t.framework, "torchtitan-2025-12");
    CU_ASSERT_STRING_EQUAL(t.model_name, "llama4-scout");
    CU_ASSERT_FALSE(t.compiled);
    layout_t back = t.layout;
    CU_ASSERT_EQUAL_FATAL(layout_finalize(&back, &m, 256, &e), 0);
    CU_ASSERT_EQUAL(back.schedule, SCHEDULE_DUALPIPEV);
    CU_ASSERT_EQUAL(back.vpp, 2);
    CU_ASSERT_EQUAL(back.pp, 4);
    CU_ASSERT_EQUAL(back.ep, 8);
    CU_ASSERT_EQUAL(back.dp, l.dp);
    CU_ASSERT_EQUAL(back.global_batch, l.global_batch);
    CU_ASSERT_EQUAL(back.micro_batch, l.micro_batch);
    CU_ASSERT_EQUAL(back.grad_accum, l.grad_accum);
    torchtitan_free(&t);
    /* the June 2025 preset has no DualPipeV: refused, naming what it runs */
    fw_preset_t june;
    CU_ASSERT_EQUAL_FATAL(fw_load("torchtitan-2025-06", &june, &e), 0);
    sim_options_t o;
    layout_t scratch = l;
    CU_ASSERT_EQUAL_FATAL(sim_options_framework("torchtitan-2025-06", NULL, &o, &scratch, &e), 0);
    CHECK_ERR(fw_check_layout(&june, &l, &o, &e), &e, ERR_INPUT, "--ep",
              "no expert parallelism");
    layout_t dense = l;
    dense.ep = 1;
    CHECK_ERR(fw_check_layout(&june, &dense, &o, &e), &e, ERR_INPUT, "--schedule", "dualpipev");
    free(keys);
    free(text);
}

/* plan --emit picks the format's framework and writes the recommended
 * layout; a framework the format cannot launch is refused. */
static void test_plan_emit(void)
{
    char *out = NULL, *errout = NULL;
    CU_ASSERT_EQUAL(run_cli("plan --model llama3-8b --gpu h100-sxm --tokens 1T --gpus 64 "
                            "--trials 50 --emit megatron",
                            &out, NULL),
                    0);
    CU_ASSERT_PTR_NOT_NULL(out ? strstr(out, "Launch configuration (megatron, megatron-core)")
                               : NULL);
    CU_ASSERT_PTR_NOT_NULL(out ? strstr(out, "--tensor-model-parallel-size") : NULL);
    free(out);
    out = NULL;
    CU_ASSERT_EQUAL(run_cli("plan --model llama3-8b --gpu h100-sxm --tokens 1T --gpus 64 "
                            "--framework fsdp --emit megatron",
                            &out, &errout),
                    2);
    CU_ASSERT_PTR_NOT_NULL(errout ? strstr(errout, "--emit: fsdp layouts cannot be written")
                                  : NULL);
    free(out);
    free(errout);
    /* Megatron-DeepSpeed launches with a ds_config.json and Megatron's
     * arguments: what --emit deepspeed writes */
    out = NULL;
    CU_ASSERT_EQUAL(run_cli("plan --model llama3-8b --gpu a100-80g --tokens 1T --gpus 64 "
                            "--trials 50 --framework megatron-deepspeed --emit deepspeed",
                            &out, NULL),
                    0);
    CU_ASSERT_PTR_NOT_NULL(out ? strstr(out, "train_micro_batch_size_per_gpu") : NULL);
    free(out);
}

/* sim's --json document (sim, NULL when it did not parse) gives the step
 * time the plan priced: a written launch file read back runs what was planned. */
static void check_step(const cJSON *sim, double want_s)
{
    const cJSON *st = sim ? cJSON_GetObjectItem(sim, "step_time_s") : NULL;
    CU_ASSERT_PTR_NOT_NULL(st);
    if (st)
        CHECK_REL(st->valuedouble, want_s, 1e-9);
}

/* Every format's configuration, as plan --emit writes it to a file, reads
 * back through sim's own reader to the plan's step time: Megatron-LM
 * arguments, Bridge overrides, a DeepSpeed config (JSON alone), torchtitan
 * TOML (mid and late 2025). */
static void test_plan_emit_sim_round_trip(void)
{
    static const struct {
        const char *model, *framework, *emit, *reader;
        int gpus;
    } cases[] = {
        {"llama3-70b", "megatron-core", "megatron", "--megatron-args-file", 256},
        {"llama3-70b", "megatron-bridge-26.04", "nemo", "--bridge-overrides", 256},
        {"llama3-8b", "deepspeed", "deepspeed", "--deepspeed", 64},
        {"llama3-8b", "torchtitan-2025-06", "torchtitan", "--torchtitan", 64},
        {"llama3-70b", "torchtitan-2025-12", "torchtitan", "--torchtitan", 256},
        {"llama3-70b", "torchtitan-2024-12", "torchtitan", "--torchtitan", 256},
    };
    char dir[256];
    CU_ASSERT_EQUAL_FATAL(make_temp_dir(dir, sizeof dir), 0);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char args[1024], path[400];
        snprintf(path, sizeof path, "%s/emitted.%zu", dir, i);
        snprintf(args, sizeof args,
                 "plan --model %s --gpu h100-sxm --min-gpus %d --max-gpus %d --framework %s "
                 "--trials 50 --emit %s --out %s --json",
                 cases[i].model, cases[i].gpus, cases[i].gpus, cases[i].framework, cases[i].emit,
                 path);
        char *out = NULL;
        CU_ASSERT_EQUAL_FATAL(run_cli(args, &out, NULL), 0);
        cJSON *plan = cJSON_Parse(out ? out : "");
        free(out);
        CU_ASSERT_PTR_NOT_NULL_FATAL(plan);
        cJSON *best = cJSON_GetObjectItem(plan, "best");
        cJSON *st = best ? cJSON_GetObjectItem(best, "step_time_s") : NULL;
        CU_ASSERT_PTR_NOT_NULL_FATAL(st);
        /* Bridge overrides and DeepSpeed configs do not carry the model */
        bool no_model = strcmp(cases[i].emit, "nemo") == 0 || strcmp(cases[i].emit, "deepspeed") == 0;
        /* a ds_config holds no sequence length: the plan's is given */
        cJSON *seq = cJSON_GetObjectItem(plan, "seq_len");
        char seq_flag[48] = "";
        if (strcmp(cases[i].emit, "deepspeed") == 0 && seq)
            snprintf(seq_flag, sizeof seq_flag, " --seq-len %d", seq->valueint);
        snprintf(args, sizeof args, "sim %s %s%s%s%s --gpu h100-sxm --gpus %d --framework %s --json",
                 cases[i].reader, path, no_model ? " --model " : "",
                 no_model ? cases[i].model : "", seq_flag, cases[i].gpus, cases[i].framework);
        out = NULL;
        char *err = NULL;
        int rc = run_cli(args, &out, &err);
        if (rc)
            fprintf(stderr, "%s: %s\n", cases[i].emit, err ? err : "");
        CU_ASSERT_EQUAL(rc, 0);
        cJSON *sim = cJSON_Parse(out ? out : "");
        check_step(sim, st->valuedouble);
        cJSON_Delete(sim);
        cJSON_Delete(plan);
        free(out);
        free(err);
    }
    remove_tree(dir);
}

/* What --emit writes is what the plan priced: the user's simulation
 * switches (--moe-dispatcher deepep here) and the framework's recipe for
 * the model and GPU reach the written configuration, so sim reads it back
 * to the plan's step time. Before plan_options the Megatron arguments were
 * written from the preset alone (--moe-token-dispatcher-type alltoall). */
static void test_emit_carries_switches(void)
{
    char dir[256], path[400], args[1024];
    CU_ASSERT_EQUAL_FATAL(make_temp_dir(dir, sizeof dir), 0);
    snprintf(path, sizeof path, "%s/moe.sh", dir);
    snprintf(args, sizeof args,
             "plan --model mixtral-8x7b --gpu h100-sxm --min-gpus 64 --max-gpus 64 --ep 8 "
             "--framework megatron-core --moe-dispatcher deepep --trials 20 --emit megatron "
             "--out %s --json",
             path);
    cJSON *plan = cmd_expect_json(args, 0);
    cJSON *best = plan ? cJSON_GetObjectItem(plan, "best") : NULL;
    cJSON *st = best ? cJSON_GetObjectItem(best, "step_time_s") : NULL;
    CU_ASSERT_PTR_NOT_NULL_FATAL(st);
    char *text = slurp(path);
    CU_ASSERT(text && strstr(text, "--moe-token-dispatcher-type flex"));
    free(text);
    snprintf(args, sizeof args, "sim --megatron-args-file %s --gpu h100-sxm --gpus 64 --json",
             path);
    cJSON *sim = cmd_expect_json(args, 0);
    check_step(sim, st->valuedouble);
    cJSON_Delete(sim);
    cJSON_Delete(plan);
    remove_tree(dir);
}

TEST_SUITE(suite_launch, "launch", TEST(test_megatron_round_trip), TEST(test_emit_carries_switches), TEST(test_nemo_round_trip),
           TEST(test_nemo_precision_round_trip),
           TEST(test_deepspeed_round_trip), TEST(test_torchtitan_keys), TEST(test_torchtitan_dualpipev_round_trip),
           TEST(test_torchtitan_stage_split_round_trip),
           TEST(test_torchtitan_embedding_alone_round_trip), TEST(test_torchtitan_fsdp_over_cp_round_trip),
           TEST(test_torchtitan_2024_keys),
           TEST(test_bridge_recipe_names),
           TEST(test_plan_emit), TEST(test_plan_emit_sim_round_trip),
           TEST(test_moe_round_trip), TEST(test_block_recompute_round_trip),
           TEST(test_recompute_modules_round_trip));
