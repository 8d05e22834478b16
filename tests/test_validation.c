/* The replay of the public measurements in
 * tests/fixtures/validation/throughput.csv (a copy of ../shared/validation)
 * and the out-of-sample sets: every row replayed by the rules of
 * validate/published.h with the default profiles, what each row says, counts and
 * orderings. The accuracy bars on the median and 90th percentile |error|
 * (the median <= 5%, 90th percentile <= 12%, every group of 3+ rows
 * <= 8% on the shared table, and today's bar of each other set) are make
 * validate's (scaleplan validate --published SET --max-median PCT
 * --max-p90 PCT), which make test runs after make check; the errors quoted
 * below are the bars' history. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "profile/profile.h"
#include "validate/pubfit.h"
#include "validate/published.h"
#include "tests/testing.h"

static const pub_group_t *group(const pub_group_t *g, int n, const char *name)
{
    for (int i = 0; i < n; i++)
        if (strcmp(g[i].group, name) == 0)
            return &g[i];
    return NULL;
}

static void test_published_runs(void)
{
    pub_row_t *rows;
    int n;
    err_t e;
    int rc = pub_replay(fixture("validation/throughput.csv"), NULL, &rows, &n, &e);
    if (rc)
        fprintf(stderr, "validation: %s\n", e.msg);
    CU_ASSERT_EQUAL_FATAL(rc, 0);
    CU_ASSERT_EQUAL(n, 80);
    for (int i = 0; i < n; i++) {
        /* a skipped row always says why */
        CU_ASSERT_TRUE(!rows[i].skipped || rows[i].reason[0]);
        CU_ASSERT_TRUE(rows[i].skipped || isfinite(rows[i].error));
    }
    pub_group_t *g;
    int ng;
    CU_ASSERT_EQUAL_FATAL(pub_groups(rows, n, &g, &ng, &e), 0);
    /* Megatron-LM as the simulator was built around it */
    static const char *const held[] = {"megatron-2021", "megatron-2022", "megatron-2020",
                                       "megatron-core"};
    for (size_t k = 0; k < sizeof held / sizeof held[0]; k++) {
        const pub_group_t *x = group(g, ng, held[k]);
        CU_ASSERT_PTR_NOT_NULL_FATAL(x);
        CU_ASSERT_EQUAL(x->skipped, 0);
    }
    double med, p90;
    int k;
    pub_summary(rows, n, pub_row_dense, &med, &p90, &k);
    CU_ASSERT_TRUE(k >= 78);
    /* the acceptance bars, reached on 2026-11-28: the dense rows'
     * median |error| <= 5% and 90th percentile <= 12%, every group of three
     * or more rows <= 8% (today 4.5% / 9.1%, the worst groups Megatron-
     * Bridge 25.11 at 7.7% and torchtitan 2024-12 at 7.6%), and every pair of
     * one model on one GPU count more
     * than 3% apart ordered as published (31 pairs; T112 against T137, the
     * last one the wrong way round, is ordered since fp8 quantization
     * before sequence-parallel gathers runs on the shard, 0.2% apart) */
    /* (the median, 90th percentile and group bars are make validate's:
     * scaleplan validate --max-median 5 --max-p90 12 --max-group-median 8) */
    CU_ASSERT_TRUE(isfinite(med) && isfinite(p90));
    int pairs, misordered;
    CU_ASSERT_EQUAL_FATAL(pub_ordering(rows, n, 0.03, &pairs, &misordered, NULL, &e), 0);
    CU_ASSERT_TRUE(pairs >= 31);
    CU_ASSERT_EQUAL(misordered, 0);
    free(g);
    free(rows);
}

/* A runs.csv in a new temporary directory (dir, path), opened for writing
 * with the fixture's header line written; *csv is the fixture's text. */
static FILE *runs_csv(char *dir, size_t dir_cap, char *path, size_t path_cap, char **csv)
{
    if (make_temp_dir(dir, dir_cap))
        return NULL;
    snprintf(path, path_cap, "%s/runs.csv", dir);
    *csv = slurp(fixture("validation/throughput.csv"));
    char *nl = *csv ? strchr(*csv, '\n') : NULL;
    FILE *f = nl ? fopen(path, "w") : NULL;
    if (f)
        fwrite(*csv, 1, (size_t)(nl - *csv + 1), f);
    return f;
}

/* The rules read the configuration columns, never the result: changing a
 * result column changes the error, not the prediction. */
static void test_results_not_read(void)
{
    char dir[256], path[400], *csv = NULL;
    FILE *f = runs_csv(dir, sizeof dir, path, sizeof path, &csv);
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    /* keep the header and row T001 (SC21 GPT 1.7B, 137 hardware TFLOP/s) */
    char *t001 = strstr(csv, "\nT001,");
    CU_ASSERT_PTR_NOT_NULL_FATAL(t001);
    char *end = strchr(t001 + 1, '\n');
    fwrite(t001 + 1, 1, (size_t)(end - t001), f);
    /* the same row claiming twice the throughput */
    char *row = strndup(t001 + 1, (size_t)(end - t001 - 1));
    char *cell = strstr(row, ",137,");
    CU_ASSERT_PTR_NOT_NULL_FATAL(cell);
    fprintf(f, "%.*s,274,%s\n", (int)(cell - row), row, cell + 5);
    fclose(f);
    pub_row_t *rows;
    int n;
    err_t e;
    CU_ASSERT_EQUAL_FATAL(pub_replay(path, NULL, &rows, &n, &e), 0);
    CU_ASSERT_EQUAL_FATAL(n, 2);
    CHECK_REL(rows[0].predicted, rows[1].predicted, 0);
    CHECK_REL(rows[1].published, 274, 0);
    CHECK_REL(1 + rows[0].error, 2 * (1 + rows[1].error), 1e-12);
    free(rows);
    free(row);
    free(csv);
    remove_tree(dir);
}

/* A published run trained at its length: a named model's learned position
 * table is extended to the row's sequence (said), never refused; a row
 * within the table says nothing of it. */
static void test_learned_positions_of_the_run(void)
{
    char dir[256], path[400];
    CU_ASSERT_EQUAL_FATAL(make_temp_dir(dir, sizeof dir), 0);
    snprintf(path, sizeof path, "%s/runs.csv", dir);
    FILE *f = fopen(path, "w");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    fputs("row_id,source_title,model,seq_len,gpu_type,num_gpus,tp,pp,micro_batch,"
          "global_batch_seqs,precision,framework,tokens_per_sec_per_gpu\n"
          "L1,x,MPT-7B,8192,H100 80GB,64,1,1,1,256,bf16,llm-foundry,3000\n"
          "L2,x,MPT-7B,2048,H100 80GB,64,1,1,1,256,bf16,llm-foundry,3000\n", f);
    fclose(f);
    pub_row_t *rows;
    int n;
    err_t e;
    CU_ASSERT_EQUAL_FATAL(pub_replay(path, NULL, &rows, &n, &e), 0);
    CU_ASSERT_EQUAL_FATAL(n, 2);
    CU_ASSERT_FALSE(rows[0].skipped);
    CU_ASSERT_PTR_NOT_NULL(strstr(rows[0].assumed, "learned positions of mpt-7b extended from "
                                                   "2048 to the run's 8192"));
    CU_ASSERT_FALSE(rows[1].skipped);
    CU_ASSERT_PTR_NULL(strstr(rows[1].assumed, "learned positions"));
    CU_ASSERT_TRUE(rows[0].predicted > 0 && rows[0].predicted < rows[1].predicted);
    free(rows);
    remove_tree(dir);
}

/* A batch given only in the notes is read from them, in sequences or in
 * tokens over the sequence, and said; a row whose notes give none keeps
 * the columns' reading. */
static void test_batch_from_notes(void)
{
    char dir[256], path[400];
    CU_ASSERT_EQUAL_FATAL(make_temp_dir(dir, sizeof dir), 0);
    snprintf(path, sizeof path, "%s/runs.csv", dir);
    FILE *f = fopen(path, "w");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    fputs("row_id,source_title,model,seq_len,gpu_type,num_gpus,tp,pp,micro_batch,"
          "global_batch_seqs,precision,framework,tokens_per_sec_per_gpu,notes\n"
          "B1,x,Llama 3 8B,8192,H100 80GB,64,1,1,1,,bf16,Megatron-Core,3000,\"GBS 128, seq 8K\"\n"
          "B2,x,Llama 3 8B,8192,H100 80GB,64,1,1,1,,bf16,Megatron-Core,3000,"
          "global batch size: 4M tokens\n"
          "B3,x,Llama 3 8B,8192,H100 80GB,64,1,1,1,512,bf16,Megatron-Core,3000,GBS 128\n", f);
    fclose(f);
    pub_row_t *rows;
    int n;
    err_t e;
    CU_ASSERT_EQUAL_FATAL(pub_replay(path, NULL, &rows, &n, &e), 0);
    CU_ASSERT_EQUAL_FATAL(n, 3);
    CU_ASSERT_PTR_NOT_NULL(strstr(rows[0].assumed, "global batch of 128 sequences read from"));
    CU_ASSERT_PTR_NOT_NULL(strstr(rows[0].layout, "gb128"));
    CU_ASSERT_PTR_NOT_NULL(strstr(rows[1].assumed, "global batch of 512 sequences read from"));
    CU_ASSERT_PTR_NOT_NULL(strstr(rows[1].layout, "gb512"));
    /* the column wins over the notes */
    CU_ASSERT_PTR_NULL(strstr(rows[2].assumed, "read from the notes"));
    CU_ASSERT_PTR_NOT_NULL(strstr(rows[2].layout, "gb512"));
    free(rows);
    remove_tree(dir);
}

/* A run whose columns leave the pipeline split to the framework gets the
 * framework's split: Llama 3 8B on PP 4 under torchtitan (June 2025) is
 * 8/9/8/7 (the embedding and output weigh one layer each, the remainder to
 * the first stages), simulated with equal middle stages as 8/9/9/6; under
 * Megatron-Core the 32 layers split evenly. */
static void test_framework_pipeline_split(void)
{
    char dir[256], path[400], *csv = NULL;
    FILE *f = runs_csv(dir, sizeof dir, path, sizeof path, &csv);
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    static const char *const head =
        "Llama 3 8B,8,32,4096,32,8,14336,128256,8192,\"H100 96GB HBM2e 2.4TB/s @500W (Grand "
        "Teton), 400Gb/s RDMA per GPU\",64,1,4,16,,,8,,,";
    fprintf(f, "P1,\"PyTorch team, async TP benchmark (June 2025)\",x,x,%sFSDP 16,full,bf16,"
               "torchtitan + compile,,,,,1000,,,,,\n",
            head);
    fprintf(f, "P2,Megatron-Core r0.8 performance table,x,x,%s,full,bf16,Megatron-Core,,,,,1000,"
               ",,,,\n",
            head);
    fclose(f);
    pub_row_t *rows;
    int n;
    err_t e;
    CU_ASSERT_EQUAL_FATAL(pub_replay(path, NULL, &rows, &n, &e), 0);
    CU_ASSERT_EQUAL_FATAL(n, 2);
    CU_ASSERT_FALSE_FATAL(rows[0].skipped || rows[1].skipped);
    CU_ASSERT_STRING_EQUAL(rows[0].framework, "torchtitan-2025-06");
    CU_ASSERT_EQUAL(rows[0].sim_layout.first_stage_layers, 8);
    CU_ASSERT_EQUAL(rows[0].sim_layout.last_stage_layers, 6);
    CU_ASSERT_EQUAL(layout_chunk_layers(&rows[0].sim_layout, &rows[0].sim_model, 1), 9);
    CU_ASSERT_STRING_EQUAL(rows[1].framework, "megatron-core");
    CU_ASSERT_EQUAL(rows[1].sim_layout.first_stage_layers, 0);
    CU_ASSERT_EQUAL(rows[1].sim_layout.last_stage_layers, 0);
    free(rows);
    free(csv);
    remove_tree(dir);
}

/* "interleaved" without a count on a Megatron-Core row whose layers do not
 * divide over the stages: Llama 3.1 405B's 126 layers on PP 16 take the
 * split Megatron-Core builds for two chunks a rank (126 + 2 = 128 slots over
 * 32 chunks: 3 layers on the first and last chunks, 4 on the 30 others).
 * The open interleaving is then tried by the layers left per middle chunk
 * (120 over 16 x VPP - 2), which two chunks a rank divide; issue 36: it
 * tested 126 / 16 = 7 % VPP instead, tried only VPP 7, which the split does
 * not fit, and skipped the row as "nothing fits". */
static void test_open_interleaving_uneven_split(void)
{
    char dir[256], path[400], *csv = NULL;
    FILE *f = runs_csv(dir, sizeof dir, path, sizeof path, &csv);
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    fprintf(f, "V1,x,x,x,LLAMA3.1-405B,405,126,16384,128,8,53248,128256,8192,H100 (DGX-H100),"
               "1024,8,16,8,,interleaved,1,512,,DDP (distributed optimizer),none,bf16,"
               "Megatron-Core,,,,,200,,,,,\n");
    fclose(f);
    pub_row_t *rows;
    int n;
    err_t e;
    CU_ASSERT_EQUAL_FATAL(pub_replay(path, NULL, &rows, &n, &e), 0);
    CU_ASSERT_EQUAL_FATAL(n, 1);
    if (rows[0].skipped)
        fprintf(stderr, "\nV1 skipped: %s\n", rows[0].reason);
    CU_ASSERT_FALSE_FATAL(rows[0].skipped);
    CU_ASSERT_EQUAL(rows[0].sim_layout.vpp, 2);
    CU_ASSERT_EQUAL(rows[0].sim_layout.first_stage_layers, 3);
    CU_ASSERT_EQUAL(rows[0].sim_layout.last_stage_layers, 3);
    CU_ASSERT_EQUAL(layout_chunk_layers(&rows[0].sim_layout, &rows[0].sim_model, 1), 4);
    free(rows);
    free(csv);
    remove_tree(dir);
}

/* A row that gives its whole layout is timed as given and its memory
 * checked: Llama 3 70B on 8 H100s at DP 8 without ZeRO keeps 16 bytes a
 * parameter on every GPU (70.6B x 16 B = 1,052 GiB, of 80) and does not
 * fit; the same row on 64 GPUs at TP8 PP8 does. Both
 * are timed (issue 36: the first was timed with no word that the model says
 * it cannot run); --json carries fits and memory_gib on every row, the table
 * marks the first [m] with a legend line. */
static void test_replay_memory_checked(void)
{
    char dir[256], path[400], *csv = NULL;
    FILE *f = runs_csv(dir, sizeof dir, path, sizeof path, &csv);
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    static const char *const mid = ",Llama 3 70B,70,80,8192,64,8,28672,128256,4096,H100 (DGX-H100),";
    fprintf(f, "F1,x,x,x%s8,1,1,8,,,1,64,,DDP,none,bf16,Megatron-Core,,,,,500,,,,,\n", mid);
    fprintf(f, "F2,x,x,x%s64,8,8,1,,,1,64,,DDP,none,bf16,Megatron-Core,,,,,500,,,,,\n", mid);
    fclose(f);
    char args[600], *out = NULL, *err = NULL;
    snprintf(args, sizeof args, "validate --published %s --json", path);
    CU_ASSERT_EQUAL_FATAL(run_cli(args, &out, &err), 0);
    cJSON *o = cJSON_Parse(out);
    CU_ASSERT_PTR_NOT_NULL_FATAL(o);
    const cJSON *rows = cJSON_GetObjectItemCaseSensitive(o, "rows");
    CU_ASSERT_EQUAL_FATAL(cJSON_GetArraySize(rows), 2);
    for (int i = 0; i < 2; i++) {
        const cJSON *r = cJSON_GetArrayItem(rows, i);
        CU_ASSERT_FALSE(cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(r, "skipped")));
        const cJSON *fits = cJSON_GetObjectItemCaseSensitive(r, "fits");
        const cJSON *gib = cJSON_GetObjectItemCaseSensitive(r, "memory_gib");
        CU_ASSERT_TRUE_FATAL(cJSON_IsBool(fits) && cJSON_IsNumber(gib));
        CU_ASSERT_EQUAL(cJSON_IsTrue(fits), i == 1);
        if (i == 0)
            CU_ASSERT_TRUE(gib->valuedouble > 1052);
        if (i == 1)
            CU_ASSERT_TRUE(gib->valuedouble < 80);
        CU_ASSERT_TRUE(cJSON_IsNumber(cJSON_GetObjectItemCaseSensitive(r, "predicted")));
    }
    cJSON_Delete(o);
    free(out);
    free(err);
    snprintf(args, sizeof args, "validate --published %s", path);
    CU_ASSERT_EQUAL_FATAL(run_cli(args, &out, &err), 0);
    const char *f1 = strstr(out, "F1 "), *f2 = strstr(out, "F2 ");
    CU_ASSERT_TRUE_FATAL(f1 && f2);
    CU_ASSERT_PTR_NOT_NULL(strstr(f1, "[m]"));
    CU_ASSERT_TRUE(strstr(f1, "[m]") < f2); /* on F1's line, not F2's */
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "[m] does not fit in memory"));
    free(out);
    free(err);
    free(csv);
    remove_tree(dir);
}

/* The recompute column's module words, read as Megatron-Core's
 * --recompute-modules: "moe" (the whole MoE block) and "act" (its experts'
 * activation, Megatron's moe_act), the brief names scaleplan's tables print,
 * and Megatron's own. And a mixture-of-experts row the replay refuses
 * (Mixtral 8x7B with EP 8 under llm-foundry, which runs no expert
 * parallelism) stays out of the dense summary. Issue 36: "moe" and "act"
 * were not read (the row ran the default attention-core recompute), and the
 * refused MoE row counted as dense. */
static void test_recompute_words_and_moe_rows(void)
{
    char dir[256], path[400], *csv = NULL;
    FILE *f = runs_csv(dir, sizeof dir, path, sizeof path, &csv);
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    static const char *const rc_text[] = {"selective (moe, act)", "selective (attn, norm)",
                                          "selective (--recompute-modules moe_act layernorm)"};
    for (int k = 0; k < 3; k++)
        fprintf(f, "R%d,x,x,x,Qwen3-235B-A22B,,,,,,,,4096,H100 (DGX-H100),256,1,8,32,EP32,,1,"
                   "2048,,DDP (distributed optimizer),\"%s\",bf16,Megatron-Bridge 25.11,,,,,1000,,,"
                   ",,\n",
                k, rc_text[k]);
    fprintf(f, "D1,x,x,x,Mixtral-8x7B,,,,,,,,4096,H100 (DGX-H100),64,1,1,64,EP8,,1,256,,FSDP,"
               "none,bf16,llm-foundry,,,,,1000,,,,,\n");
    fprintf(f, "D2,x,x,x,Llama 3 8B,,,,,,,,8192,H100 (DGX-H100),8,1,1,8,,,1,64,,FSDP,none,bf16,"
               "llm-foundry,,,,,5000,,,,,\n");
    fclose(f);
    pub_row_t *rows;
    int n;
    err_t e;
    CU_ASSERT_EQUAL_FATAL(pub_replay(path, NULL, &rows, &n, &e), 0);
    CU_ASSERT_EQUAL_FATAL(n, 5);
    static const unsigned want[] = {LAYOUT_RC_MOE | LAYOUT_RC_MOE_ACT,
                                    LAYOUT_RC_CORE_ATTN | LAYOUT_RC_LAYERNORM,
                                    LAYOUT_RC_MOE_ACT | LAYOUT_RC_LAYERNORM};
    for (int k = 0; k < 3; k++) {
        if (rows[k].skipped)
            fprintf(stderr, "\n%s skipped: %s\n", rows[k].row_id, rows[k].reason);
        CU_ASSERT_FALSE_FATAL(rows[k].skipped);
        CU_ASSERT_EQUAL(rows[k].sim_layout.recompute, RECOMPUTE_SELECTIVE);
        CU_ASSERT_EQUAL(rows[k].sim_layout.recompute_modules, want[k]);
    }
    CU_ASSERT_TRUE(rows[3].skipped);
    CU_ASSERT_FALSE(rows[4].skipped);
    double med, p90;
    int dense;
    pub_summary(rows, n, pub_row_dense, &med, &p90, &dense);
    CU_ASSERT_EQUAL(dense, 1); /* D2 only */
    free(rows);
    free(csv);
    remove_tree(dir);
}

/* NeMo's TP-overlap switch in a row's notes: "ub_tp_comm_overlap=true"
 * turns Transformer Engine's overlap on, with its default roles where the
 * preset has no userbuffers setting for the model (NeMo 24.07's has none
 * for hidden 16384: it overlaps only its own models); "tp_comm_overlap=false"
 * turns it off where the preset would overlap (NeMo 25.02 has a setting
 * for hidden 16384 at TP8 on Hopper). Llama 3.1 405B, TP8 PP9 on 576 H100s. */
static void test_notes_tp_overlap(void)
{
    char dir[256], path[400], *csv = NULL;
    FILE *f = runs_csv(dir, sizeof dir, path, sizeof path, &csv);
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    static const char *const head =
        "x,x,x,LLAMA3.1-405B,405,126,16384,128,8,53248,128256,8192,H100 (DGX-H100),576,8,9,8,,,1,"
        "64,,DDP (distributed optimizer),none,bf16";
    static const char *const rows_fw_notes[4][2] = {
        {"NeMo 24.09", ""},
        {"NeMo 24.09", "sequence_parallel=true; ub_tp_comm_overlap=true"},
        {"NeMo 25.02", ""},
        {"NeMo 25.02", "tp_comm_overlap=false"},
    };
    for (int i = 0; i < 4; i++)
        fprintf(f, "O%d,%s,%s,,,,,300,,,,,\"%s\"\n", i, head, rows_fw_notes[i][0],
                rows_fw_notes[i][1]);
    fclose(f);
    pub_row_t *rows;
    int n;
    err_t e;
    CU_ASSERT_EQUAL_FATAL(pub_replay(path, NULL, &rows, &n, &e), 0);
    CU_ASSERT_EQUAL_FATAL(n, 4);
    for (int i = 0; i < 4; i++)
        CU_ASSERT_FALSE_FATAL(rows[i].skipped);
    CU_ASSERT_STRING_EQUAL(rows[0].framework, "nemo-24.07");
    CU_ASSERT_STRING_EQUAL(rows[2].framework, "nemo-25.02");
    /* the overlap hides TP collectives: a few percent on this layout */
    CU_ASSERT_TRUE(rows[1].predicted > 1.01 * rows[0].predicted);
    CU_ASSERT_TRUE(rows[3].predicted < 0.99 * rows[2].predicted);
    free(rows);
    free(csv);
    remove_tree(dir);
}

static void test_bad_csv(void)
{
    pub_row_t *rows;
    int n;
    err_t e;
    int rc = pub_replay(fixture("calibrate/h200_all_reduce_perf.json"), NULL, &rows, &n, &e);
    CU_ASSERT_EQUAL(rc, ERR_INPUT);
    rc = pub_replay("/no/such/runs.csv", NULL, &rows, &n, &e);
    CHECK_ERR(rc, &e, ERR_INPUT, "/no/such/runs.csv");
    /* the columns a file must have, and a result to compare */
    char dir[256], path[320];
    CU_ASSERT_EQUAL_FATAL(make_temp_dir(dir, sizeof dir), 0);
    snprintf(path, sizeof path, "%s/runs.csv", dir);
    static const struct {
        const char *text, *field, *why;
    } bad[] = {
        {"row_id,model,gpu_type,tokens_per_sec_per_gpu\nX,llama3-8b,H100,1000\n", "framework",
         "missing column"},
        {"row_id,model,gpu_type,framework,tp\nX,llama3-8b,H100,DeepSpeed,1\n", NULL,
         "no result column"},
    };
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        FILE *f = fopen(path, "w");
        CU_ASSERT_PTR_NOT_NULL_FATAL(f);
        fputs(bad[k].text, f);
        fclose(f);
        rc = pub_replay(path, NULL, &rows, &n, &e);
        if (bad[k].field)
            CHECK_ERR(rc, &e, ERR_INPUT, bad[k].field, bad[k].why);
        else
            CHECK_ERR(rc, &e, ERR_INPUT, bad[k].why);
    }
    remove_tree(dir);
    /* a file with only some of the schema's columns: the others read as
     * empty (T134's run without its VP column runs 1F1B) */
    rc = pub_replay(fixture("validation/minimal.csv"), NULL, &rows, &n, &e);
    CU_ASSERT_EQUAL_FATAL(rc, 0);
    CU_ASSERT_EQUAL_FATAL(n, 1);
    CU_ASSERT_FALSE(rows[0].skipped);
    CU_ASSERT_STRING_EQUAL(rows[0].group, "megatron-bridge-25.11");
    CU_ASSERT_EQUAL(rows[0].sim_layout.pp, 8);
    free(rows);
}

/* tests/fixtures/validation/versions.csv: shared rows with their framework
 * column renamed to versions that have no preset (a newer Megatron-Bridge,
 * an older NeMo, NeMo without a version, torchtitan dated only by its source
 * title, Megatron-LM naming only Megatron-Core, Megatron-LM dated by its
 * source title or not at all) replay with the family's preset released no
 * later, said in the row's assumptions; GPT-NeoX runs Megatron-DeepSpeed, PyTorch
 * DDP its preset, and a trainer no preset names (the Hugging Face Trainer)
 * the engine its ZeRO/FSDP column names (torchtitan for FSDP with TP or PP,
 * to the ZeRO stage named beside it; Megatron-Core's FSDP for it in fp16;
 * Megatron-LM where none is named), as does a column naming only an engine
 * whose preset does not split the model ("PyTorch FSDP" with TP); a batch
 * that does not divide by micro-batch x DP runs as the nearest multiple;
 * a release before a bracketed engine names the family ("NeMo 24.09
 * (Megatron-Core)" is NeMo's);
 * a mixture-of-experts row whose
 * columns give the dimensions replays with the catalog's experts, as one
 * that gives none. */
static void test_versions_and_moe_columns(void)
{
    pub_row_t *rows;
    int n;
    err_t e;
    int rc = pub_replay(fixture("validation/versions.csv"), NULL, &rows, &n, &e);
    if (rc)
        fprintf(stderr, "versions: %s\n", e.msg);
    CU_ASSERT_EQUAL_FATAL(rc, 0);
    CU_ASSERT_EQUAL_FATAL(n, 26);
    static const struct {
        const char *group, *said;
    } want[] = {
        {"megatron-bridge-25.11", NULL},
        {"megatron-bridge-25.11", "the latest Megatron-Bridge preset released no later"},
        {"megatron-bridge-26.04", "the latest Megatron-Bridge preset released no later"},
        {"nemo-24.07", "older than every NeMo preset"},
        {"nemo-25.04", "no release date in its name"},
        {"torchtitan-2024-12", "the latest torchtitan preset released no later"},
        {"nemo-25.02", NULL},
        {"nemo-25.02", NULL},
        {"nemo-24.07", NULL},
        {"megatron-core", "replayed with megatron-core"},
        {"megatron-2022", "the latest Megatron-LM preset released no later"},
        {"megatron-core", "replayed with megatron-core"},
        {"megatron-deepspeed", NULL},
        {"pytorch-ddp", NULL},
        {"deepspeed", "the engine its ZeRO/FSDP column names"},
        {"torchtitan-2025-12", "FSDP with the model split"},
        {"megatron-core", "no engine named"},
        {"torchtitan-2025-12", "FSDP with the model split"},
        {"torchtitan-2025-12", "names an engine whose preset does not split the model"},
        {"megatron-core", "in fp16, which torchtitan does not train"},
        {"megatron-core", "replayed with 192, the nearest multiple"},
        {"megatron-core", "ZeRO in fp8 or fp4, which DeepSpeed does not train"},
        {"torchtitan-2025-12", "DualPipe as DualPipeV"},
        {"megatron-2022", "the latest Megatron-LM preset released no later"},
        /* the release before the brackets names the family; a bracket
         * without a release before it leaves the longest family word */
        {"nemo-24.07", "the latest NeMo preset released no later"},
        {"megatron-core", "the latest Megatron-Core preset"},
    };
    for (int i = 0; i < n; i++) {
        CU_ASSERT_FALSE(rows[i].skipped);
        CU_ASSERT_STRING_EQUAL(rows[i].group, want[i].group);
        if (want[i].said) {
            CU_ASSERT_PTR_NOT_NULL(strstr(rows[i].assumed, want[i].said));
        } else {
            CU_ASSERT_PTR_NULL(strstr(rows[i].assumed, "no preset of its own"));
        }
    }
    /* the same configuration under the preset the fallback picked */
    CHECK_REL(rows[1].predicted, rows[0].predicted, 1e-12);
    /* FSDP beside a ZeRO stage is FSDP sharding to that stage, not
     * DeepSpeed (which runs no ZeRO-2 with TP here: it was refused) */
    CU_ASSERT_PTR_NOT_NULL(strstr(rows[17].layout, "ZeRO-2"));
    /* "PyTorch FSDP" with TP runs as the in-house FSDP row does */
    CHECK_REL(rows[18].predicted, rows[15].predicted, 1e-12);
    /* metaseq's FSDP in fp16: Megatron-Core's FSDP (ZeRO-3) */
    CU_ASSERT_PTR_NOT_NULL(strstr(rows[19].layout, "ZeRO-3"));
    CU_ASSERT_PTR_NOT_NULL(strstr(rows[19].layout, "fp16"));
    /* ZeRO-1 in blockwise fp8 (DeepSeek-V3's in-house stack): Megatron-Core's
     * distributed optimizer, not DeepSpeed, which refused the precision */
    CU_ASSERT_PTR_NOT_NULL(strstr(rows[21].layout, "fp8-block"));
    /* DeepSeek's DualPipe named in the interleaving column, under a preset
     * that runs DualPipeV */
    CU_ASSERT_EQUAL(rows[22].sim_layout.schedule, SCHEDULE_DUALPIPEV);
    /* a batch of 190 on DP 48 with micro-batch 4 runs as 192 */
    CU_ASSERT_PTR_NOT_NULL(strstr(rows[20].layout, "gb192"));
    /* Mixtral 8x7B from its columns is the catalog's MoE model */
    CHECK_REL(rows[7].predicted, rows[6].predicted, 1e-12);
    CU_ASSERT_PTR_NOT_NULL(strstr(rows[7].layout, "EP8"));
    free(rows);
}

/* Replay a fixture of count rows: every row replays or says why not, and
 * at most max_skipped are refused. *rows is the caller's to free. */
static void replay_fixture(const char *name, int count, int max_skipped, pub_row_t **rows)
{
    int n;
    err_t e;
    int rc = pub_replay(fixture(name), NULL, rows, &n, &e);
    if (rc)
        fprintf(stderr, "%s: %s\n", name, e.msg);
    CU_ASSERT_EQUAL_FATAL(rc, 0);
    CU_ASSERT_EQUAL_FATAL(n, count);
    int skipped = 0;
    for (int i = 0; i < n; i++) {
        skipped += (*rows)[i].skipped;
        CU_ASSERT_TRUE(!(*rows)[i].skipped || (*rows)[i].reason[0]);
    }
    CU_ASSERT_TRUE(skipped <= max_skipped);
}

/* tests/fixtures/validation/spellings.csv: T134 with its columns spelled
 * as other tables spell them. Each spelling replays as the canonical one:
 * "1,602" as 1602; "CP 2", "cp2", "context parallel 2" as "CP=2"; "VPP=5"
 * and "interleaved (5)" as "VP=5"; "activation checkpointing" and "AC" as
 * full recompute, "no activation checkpointing" as none, "block, 1 layer"
 * as Megatron's block recompute of one layer; "mbs=1" as 1; the global
 * batch from global_batch_tokens, or as tokens in its own column; "fp32"
 * as fp32; a row with only an MFU is compared as model TFLOP/s; "AWS
 * p5.48xlarge" names the aws-p5 node and "RoCE 400G" its network; named
 * recomputed modules, fine-grained fp8 tiles, a recompute given without a
 * micro-batch and a count of rails (S25-S28). */
static void test_column_spellings(void)
{
    pub_row_t *rows;
    replay_fixture("validation/spellings.csv", 42, 0, &rows);
    /* S01 as published; pairs that must replay alike */
    static const int same[][2] = {{1, 0},  {3, 2},  {4, 2},   {5, 2},   {6, 0},  {7, 0},
                                  {9, 8},  {10, 8}, {11, 0},  {13, 0},  {14, 0}, {15, 0}};
    for (size_t k = 0; k < sizeof same / sizeof same[0]; k++) {
        const pub_row_t *a = &rows[same[k][0]], *b = &rows[same[k][1]];
        if (fabs(a->predicted / b->predicted - 1) > 1e-12)
            fprintf(stderr, "%s (%s) != %s (%s)\n", a->row_id, a->layout, b->row_id, b->layout);
        CHECK_REL(a->predicted, b->predicted, 1e-12);
        CHECK_REL(a->published, b->published, 1e-12);
    }
    CU_ASSERT_EQUAL(rows[2].sim_layout.cp, 2);
    CU_ASSERT_EQUAL(rows[6].sim_layout.vpp, 5);
    CU_ASSERT_EQUAL(rows[8].sim_layout.recompute, RECOMPUTE_FULL);
    CU_ASSERT_EQUAL(rows[11].sim_layout.recompute, RECOMPUTE_NONE);
    CU_ASSERT_EQUAL(rows[12].sim_layout.recompute, RECOMPUTE_FULL);
    CU_ASSERT_EQUAL(rows[12].sim_layout.recompute_layers, 1);
    CU_ASSERT_TRUE(rows[12].predicted > rows[8].predicted); /* one layer of two recomputed */
    CU_ASSERT_EQUAL(rows[14].sim_layout.global_batch, 128);
    CU_ASSERT_PTR_NOT_NULL(strstr(rows[14].assumed, "global batch in sequences"));
    CU_ASSERT_EQUAL(rows[15].sim_layout.global_batch, 128);
    CU_ASSERT_EQUAL(rows[16].sim_layout.precision, PRECISION_FP32);
    CU_ASSERT_FALSE(rows[0].open_choices);
    /* only an MFU, against the fp8 peak the row names: model TFLOP/s */
    CU_ASSERT_EQUAL(rows[17].metric, PUB_MODEL_TFLOPS);
    CHECK_REL(rows[17].published, 0.3635 * 1978.9, 1e-9);
    CU_ASSERT_PTR_NOT_NULL(strstr(rows[17].assumed, "only MFU given"));
    /* named modules recomputed are Megatron's selective granularity;
     * DeepSeek-V3's tiles and blocks are blockwise fp8; a row that gives
     * its recompute but no micro-batch keeps the recompute; "4 x NDR per
     * node" is 4 rails, not the DGX's 8 */
    CU_ASSERT_EQUAL(rows[24].sim_layout.recompute, RECOMPUTE_SELECTIVE);
    CU_ASSERT_EQUAL(rows[24].sim_layout.recompute_modules,
                    LAYOUT_RC_LAYERNORM | LAYOUT_RC_MLA_UP_PROJ);
    CU_ASSERT_EQUAL(rows[25].sim_layout.precision, PRECISION_FP8_BLOCK);
    CU_ASSERT_TRUE(rows[26].open_choices);
    CU_ASSERT_EQUAL(rows[26].sim_layout.recompute, RECOMPUTE_FULL);
    CU_ASSERT_PTR_NOT_NULL(strstr(rows[26].assumed, "the row gives no micro-batch: the fastest"));
    CU_ASSERT_TRUE(rows[27].predicted < rows[0].predicted);
    /* DualPipe under a preset that runs no DualPipeV: 1F1B, said */
    CU_ASSERT_EQUAL(rows[28].sim_layout.schedule, SCHEDULE_1F1B);
    CU_ASSERT_PTR_NOT_NULL(strstr(rows[28].assumed, "runs no DualPipeV"));
    /* "interleaved" without a count under a Megatron-LM preset (which has no
     * default count): the fastest count that fits, at least as fast as the
     * published count of 5 */
    CU_ASSERT_TRUE(rows[29].sim_layout.vpp >= 2);
    CU_ASSERT_EQUAL(rows[29].sim_layout.micro_batch, 1);
    CU_ASSERT_PTR_NOT_NULL(strstr(rows[29].assumed, "interleaved without a count"));
    CU_ASSERT_TRUE(rows[29].predicted >= rows[0].predicted * (1 - 1e-9));
    /* "dynamic" is fp8 current scaling only where fp8 is named: OPT's "fp16
     * with dynamic loss scaling" is fp16 */
    CU_ASSERT_EQUAL(rows[30].sim_layout.precision, PRECISION_FP16);
    /* "8 nodes (64 GPUs)" is 64 GPUs; "8 nodes" eight of the GPU's nodes;
     * a dp column that disagrees with the GPU count is said */
    CU_ASSERT_EQUAL(rows[31].gpus, 64);
    CHECK_REL(rows[31].predicted, rows[0].predicted, 1e-12);
    CU_ASSERT_EQUAL(rows[32].gpus, 64);
    CU_ASSERT_PTR_NOT_NULL(strstr(rows[32].assumed, "8 nodes x 8 GPUs per node"));
    CU_ASSERT_EQUAL(rows[33].gpus, 128);
    CU_ASSERT_PTR_NOT_NULL(strstr(rows[33].assumed, "the dp column says 2"));
    /* a Hugging Face repository name, organisation and "Meta-" prefix and
     * all, is the catalog model */
    CHECK_REL(rows[34].predicted, rows[0].predicted, 1e-12);
    /* a result written only in other_result: samples a second and tokens a
     * second of the whole job, seconds an iteration */
    for (int k = 35; k <= 36; k++) {
        CU_ASSERT_EQUAL(rows[k].metric, PUB_TOKENS_PER_S);
        CHECK_REL(rows[k].published, rows[0].published, 1e-3);
        CU_ASSERT_PTR_NOT_NULL(strstr(rows[k].assumed, "read from other_result"));
    }
    CU_ASSERT_EQUAL(rows[37].metric, PUB_STEP_TIME);
    CHECK_REL(rows[37].published, 10.23, 1e-12);
    /* InfiniBand named by its speed: 200 Gb/s is HDR, slower than the
     * DGX H100's NDR */
    CU_ASSERT_TRUE(rows[38].predicted < rows[0].predicted);
    /* the node and the network the GPU text names */
    CU_ASSERT_STRING_EQUAL(rows[0].cluster, "dgx-h100");
    CU_ASSERT_STRING_EQUAL(rows[18].cluster, "aws-p5");
    CU_ASSERT_TRUE(rows[19].predicted < rows[0].predicted); /* RoCE rather than NDR */
    /* a speed stands alone: "H100 80GB ..., RoCE 400 Gb/s" is RoCE at 400
     * (the 100 of H100 is no link speed), "RoCE 100 Gb/s" is slower */
    CHECK_REL(rows[39].predicted, rows[19].predicted, 1e-12);
    CU_ASSERT_TRUE(rows[40].predicted < rows[39].predicted);
    /* GPUs per node from the GPU text: 4 rather than the DGX's 8 (the same
     * 8 NICs now serve 4 GPUs: a different step, not a slower one) */
    CU_ASSERT_TRUE(fabs(rows[41].predicted / rows[0].predicted - 1) > 1e-4);
    /* no GPU count: TP x PP x CP x DP */
    CU_ASSERT_EQUAL(rows[20].gpus, 64);
    CHECK_REL(rows[20].predicted, rows[0].predicted, 1e-12);
    /* "8K" tokens a sequence and "1M" a batch are 8,192 and 1,048,576 */
    CU_ASSERT_EQUAL(rows[21].sim_layout.seq_len, 8192);
    CU_ASSERT_EQUAL(rows[21].sim_layout.global_batch, 128);
    CHECK_REL(rows[21].predicted, rows[0].predicted, 1e-12);
    /* TFLOP/s on a basis written "HFU": hardware FLOPs */
    CU_ASSERT_EQUAL(rows[22].metric, PUB_HW_TFLOPS);
    /* "FP4" on Blackwell is NVFP4 */
    CU_ASSERT_EQUAL(rows[23].sim_layout.precision, PRECISION_NVFP4);
    free(rows);
}

/* tests/fixtures/validation/blocks.csv: what the architecture columns
 * cannot say comes from the catalog model of that name when its depth and
 * width agree (blank KV heads and FFN filled, a Qwen row's gated MLP and
 * RMSNorm); a model the catalog lacks gets a Llama-style block when its
 * name is of a Llama-style family. */
static void test_model_blocks(void)
{
    pub_row_t *rows;
    replay_fixture("validation/blocks.csv", 5, 0, &rows);
    CHECK_REL(rows[1].predicted, rows[0].predicted, 1e-12);
    CU_ASSERT_EQUAL(rows[1].sim_model.n_kv_heads, 8);
    CU_ASSERT_EQUAL(rows[1].sim_model.ffn, 28672);
    for (int i = 2; i < 4; i++) {
        CU_ASSERT_EQUAL(rows[i].sim_model.mlp, MODEL_MLP_SWIGLU);
        CU_ASSERT_EQUAL(rows[i].sim_model.norm, MODEL_NORM_RMSNORM);
        CU_ASSERT_EQUAL(rows[i].sim_model.pos, MODEL_POS_ROPE);
    }
    CU_ASSERT_TRUE(rows[2].sim_model.qkv_bias); /* Qwen2's QKV bias, from the catalog */
    CU_ASSERT_EQUAL(rows[2].sim_model.ffn, 29568);
    /* a released variant ("-Instruct") names its base model */
    CU_ASSERT_STRING_EQUAL(rows[4].sim_model.name, "llama3-70b");
    free(rows);
}

/* replay_fixture, then the median and 90th percentile of |error| over the
 * rows keep() accepts (NULL: all) and their count. */
static void replay_summary(const char *name, int count, int max_skipped,
                           bool (*keep)(const pub_row_t *), pub_row_t **rows, double *med,
                           double *p90, int *k)
{
    replay_fixture(name, count, max_skipped, rows);
    pub_summary(*rows, count, keep, med, p90, k);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* tests/fixtures/validation/more/runs.csv: 120 published runs gathered
 * after the constants were set. Every row replays (since 2026-11-28 also
 * H043, whose 126 layers on PP 16 x VPP 8 leave the first and last chunks
 * the embedding and the loss alone, and H098, NeMo's "LLAMA4-Scout-LLM",
 * the catalog's Llama 4 Scout), and the dense rows stay
 * within the bars they reach today (median 5.7%, 90th percentile 16.8%;
 * 16.4% until fp8 casts before sequence-parallel gathers were priced on the
 * shard, which makes torchtitan's fp8 TP runs read faster still; 15.6%
 * until the ring steps were priced block by block and the B200 factor
 * re-fitted by its rule, which moved NeMo's B200 Nemotron rows H086 and
 * H087 from +15.2% and +15.6% to +16.3% and +16.5%; 15.4% before; 16.8%
 * with H043 refused; with
 * torchtitan's early-stopping recompute and async TP's reduce pass; 6.2%
 * before both, with the output
 * layer in bf16 and fp8 all-gathers; 7.2% and 21.3% before Blackwell Ultra's
 * fp4 rate became measured);
 * the mixture-of-experts rows are reported, not held to a bar. */
static void test_more_runs(void)
{
    pub_row_t *rows;
    const int n = 120;
    double med, p90;
    int k;
    replay_summary("validation/more/runs.csv", n, 0, pub_row_dense, &rows, &med, &p90, &k);
    CU_ASSERT_TRUE(k >= 75); /* the median and p90 bars: make validate */
    CU_ASSERT_TRUE(isfinite(med) && isfinite(p90));
    free(rows);
}

/* tests/fixtures/validation/dgxc/runs.csv: 102 DGX Cloud benchmarking runs
 * of Llama 3.1 on H100 (NeMo 24.09-25.02), bf16 and fp8 cells of one layout
 * side by side, gathered after the constants were set. Every row replays,
 * the 30-layer 405B proxies on PP 4 x VPP 8 too (their first and last chunks
 * hold the embedding and the loss alone; refused until 2026-11-28, then
 * counted as 100%); the error stays within today's bars (median 10.5%, 90th
 * percentile 14.7%: nearly every run faster than predicted), and over the pairs that differ only in precision the
 * predicted fp8 speed-up over bf16 is at most 10% above the published one
 * (9.3% today: the fp8 GEMM rate, see docs/gpu-runs/2026-11-27-h200-2). */
static void test_dgxc_runs(void)
{
    pub_row_t *rows;
    const int n = 102;
    double med, p90;
    int k;
    replay_summary("validation/dgxc/runs.csv", n, 0, NULL, &rows, &med, &p90, &k);
    /* pairs: the same model, layout and GPU count in bf16 and in fp8 */
    double ratio[64];
    int np = 0;
    for (int i = 0; i < n && np < 64; i++) {
        if (rows[i].skipped || rows[i].sim_layout.precision != PRECISION_BF16)
            continue;
        for (int j = 0; j < n; j++) {
            if (rows[j].skipped || rows[j].sim_layout.precision == PRECISION_BF16 ||
                strcmp(rows[j].model, rows[i].model) != 0 || rows[j].gpus != rows[i].gpus ||
                strcmp(rows[j].group, rows[i].group) != 0 ||
                rows[j].sim_model.n_layers != rows[i].sim_model.n_layers)
                continue;
            ratio[np++] = (1 + rows[j].error) / (1 + rows[i].error);
            break;
        }
    }
    qsort(ratio, (size_t)np, sizeof *ratio, cmp_double);
    double pair_med = np ? ratio[np / 2] : NAN;
    printf("\n  dgxc: median %.1f%%, p90 %.1f%% over %d rows; predicted fp8 speed-up over the "
           "published, median of %d pairs: %.3f\n",
           100 * med, 100 * p90, k, np, pair_med);
    CU_ASSERT_TRUE(np >= 50); /* the median and p90 bars: make validate */
    CU_ASSERT_TRUE(pair_med <= 1.10);
    free(rows);
}

/* tests/fixtures/validation/mds/runs.csv: Megatron-DeepSpeed runs of
 * 2022 (SOURCES.md), gathered with the megatron-deepspeed preset: BLOOM
 * 176B on 384 A100s over Omni-Path (the end of epoch one, and a global
 * batch of 16 that leaves each pipeline one micro-batch) and MT-NLG 530B on
 * 2,240-3,360 A100s, and DeepSpeed's 2022 Azure runs of 175B-2T models
 * with ZeRO-3 alone. Every row replays under that preset, BLOOM's main run
 * within 10%, MT-NLG's three scales ordered as published; the bars hold
 * today's errors (MT-NLG 17-22% fast, the one-micro-batch step 46% fast,
 * the 530B ZeRO-3 run 14% fast since its fp16 gradients are reduced in
 * fp16, the 1T and 2T ZeRO-3 runs 33% and 42% fast: costs the model does
 * not have). */
static void test_mds_runs(void)
{
    pub_row_t *rows;
    const int n = 9;
    double med, p90;
    int k;
    replay_summary("validation/mds/runs.csv", n, 0, NULL, &rows, &med, &p90, &k);
    for (int i = 0; i < n; i++)
        CU_ASSERT_STRING_EQUAL(rows[i].group, "megatron-deepspeed");
    printf("\n  mds: median %.1f%%, p90 %.1f%% over %d rows; BLOOM %+.1f%%, MT-NLG %+.1f%% "
           "%+.1f%% %+.1f%%\n",
           100 * med, 100 * p90, k, 100 * rows[0].error, 100 * rows[2].error,
           100 * rows[3].error, 100 * rows[4].error);
    CU_ASSERT_TRUE(fabs(rows[0].error) <= 0.10);
    /* DeepSpeed's 2022 Azure runs, ZeRO-3 alone: 175B within 10%, 530B
     * within 15%, the 1T run with its optimizer on the CPU (the recipe's
     * offload) */
    CU_ASSERT_TRUE(fabs(rows[5].error) <= 0.10 && fabs(rows[6].error) <= 0.15);
    CU_ASSERT_EQUAL(rows[7].sim_layout.offload, LAYOUT_OFFLOAD_OPTIMIZER);
    CU_ASSERT_TRUE(rows[2].predicted > rows[3].predicted && rows[3].predicted > rows[4].predicted);
    /* the median and p90 bars: make validate */
    free(rows);
}

/* tests/fixtures/validation/meta/runs.csv: Meta's Llama 3 405B
 * pre-training (the Llama 3 paper's Table 4, SOURCES.md) and OPT-175B; the
 * Llama runs replayed by the
 * FSDP-with-the-model-split fallback (torchtitan) with the paper's ZeRO-2
 * sharding and its one-layer chunks: every row within 15% and the two 8K
 * scales ordered as published. ZeRO-2 under pipelining reduces the
 * gradients once a step (FSDP2 with the sync off but for the last
 * micro-batch): priced after every micro-batch, as DeepSpeed's ZeRO-2 does,
 * these rows read 46-73% slow. */
static void test_meta_runs(void)
{
    pub_row_t *rows;
    const int n = 4;
    double med, p90;
    int k;
    replay_summary("validation/meta/runs.csv", n, 0, NULL, &rows, &med, &p90, &k);
    printf("\n  meta: %+.1f%% %+.1f%% %+.1f%%\n", 100 * rows[0].error, 100 * rows[1].error,
           100 * rows[2].error);
    for (int i = 0; i < 3; i++) {
        CU_ASSERT_PTR_NOT_NULL(strstr(rows[i].layout, "ZeRO-2"));
        CU_ASSERT_PTR_NOT_NULL(strstr(rows[i].layout, "VPP8"));
        CU_ASSERT_TRUE(fabs(rows[i].error) <= 0.15);
    }
    CU_ASSERT_TRUE(rows[0].predicted > rows[1].predicted);
    /* OPT-175B (metaseq: FSDP with Megatron-LM TP, fp16): Megatron-Core's
     * FSDP stands in, within 10% of its "up to 147 TFLOP/s" */
    CU_ASSERT_EQUAL(rows[3].sim_layout.precision, PRECISION_FP16);
    CU_ASSERT_TRUE(fabs(rows[3].error) <= 0.10);
    free(rows);
}

/* tests/fixtures/validation/megascale/runs.csv: Megatron-LM's 175B runs on
 * 256-12,288 A100s, the MegaScale paper's baseline (SOURCES.md): the
 * source's arXiv identifier dates the framework (Megatron-LM of 2022), the
 * open choices include sequence parallelism, bf16 gradients are fp32 and
 * reduced after the whole schedule; median within 5%, every row within 8%
 * (today 3.2%, worst 5.9%), and the per-GPU throughput falls with the GPU
 * count at each batch as published. */
static void test_megascale_runs(void)
{
    pub_row_t *rows;
    const int n = 8;
    double med, p90;
    int k;
    replay_summary("validation/megascale/runs.csv", n, 0, NULL, &rows, &med, &p90, &k);
    printf("\n  megascale: median %.1f%%, p90 %.1f%% over %d rows\n", 100 * med, 100 * p90, k);
    for (int i = 0; i < n; i++) {
        CU_ASSERT_STRING_EQUAL(rows[i].group, "megatron-2022");
        CU_ASSERT_TRUE(rows[i].sim_layout.sequence_parallel);
        CU_ASSERT_TRUE(fabs(rows[i].error) <= 0.08);
        if (i % 4)
            CU_ASSERT_TRUE(rows[i].predicted_tps_gpu < rows[i - 1].predicted_tps_gpu);
    }
    CU_ASSERT_TRUE(isfinite(med)); /* its bar: make validate */
    free(rows);
}

/* tests/fixtures/validation/mcoremoe/runs.csv: Megatron-Core MoE's tuned
 * DeepSeek-V3 and Qwen3-235B runs on GB300, GB200 and H100 (arXiv:2603.07685
 * Table 11 and Table 20, SOURCES.md), gathered after every constant was
 * set. Every row replays with expert parallelism and its precision, and
 * with the dispatcher, EP overlap and CUDA graphs its notes give (the
 * paper's sec. B.2); the median stays within 13% and every row within 45%
 * (2026-12-07, with the all-to-all dispatcher's regrouping, 16-bit DeepEP
 * dispatch, DeepEP/HybridEP's published bandwidth and QK norm: 12.4%, worst
 * +27.4%: DeepSeek-V3 on 1,024 H100s; before them 14.4%, +30.4%; it was 8.3%
 * while the rows ran with the stand-in preset's settings instead of their
 * own: with the overlap they name on, the GB200/GB300 rows read 14-25%
 * fast, as the overlap hides more of the EP exchange than the runs show);
 * every pair of one model on one GPU count is ordered as published. */
static void test_mcoremoe_runs(void)
{
    pub_row_t *rows;
    const int n = 9;
    double med, p90;
    int k;
    err_t e;
    replay_summary("validation/mcoremoe/runs.csv", n, 0, NULL, &rows, &med, &p90, &k);
    printf("\n  mcoremoe: median %.1f%%, p90 %.1f%% over %d rows\n", 100 * med, 100 * p90, k);
    for (int i = 0; i < n; i++) {
        CU_ASSERT_TRUE(rows[i].sim_layout.ep > 1);
        CU_ASSERT_TRUE(fabs(rows[i].error) <= 0.45);
    }
    CU_ASSERT_EQUAL(rows[0].sim_layout.precision, PRECISION_MXFP8);
    CU_ASSERT_EQUAL(rows[2].sim_layout.precision, PRECISION_BF16);
    CU_ASSERT_EQUAL(rows[3].sim_layout.precision, PRECISION_FP8_BLOCK);
    CU_ASSERT_EQUAL(rows[8].sim_layout.seq_len, 131072);
    CU_ASSERT_TRUE(isfinite(med)); /* its bar: make validate */
    int pairs = 0, misordered = 0;
    CU_ASSERT_EQUAL_FATAL(pub_ordering(rows, n, 0.03, &pairs, &misordered, NULL, &e), 0);
    CU_ASSERT_TRUE(pairs >= 5);
    CU_ASSERT_EQUAL(misordered, 0);
    free(rows);
}

/* tests/fixtures/validation/nemotron/runs.csv: NVIDIA's DGX Cloud recipes for
 * Nemotron-4 15B and 340B on 16-2,048 H100s, bf16 and fp8, at four
 * releases (SOURCES.md), gathered after every constant was set. Every row
 * replays (squared-ReLU blocks of the rows' own shape); the median stays
 * within 12% and every row within 25% (today 9.9%, worst -20.5%: the bf16
 * rows read 9-21% slow, the fp8 rows -12% to +5%); at each GPU count fp8 is
 * predicted faster than bf16, as published; a column saying "delayed
 * scaling" keeps Transformer Engine's delayed scaling under a preset whose
 * own fp8 is current scaling (N078, NeMo 25.04). */
static void test_nemotron_runs(void)
{
    pub_row_t *rows;
    const int n = 80;
    double med, p90;
    int k;
    replay_summary("validation/nemotron/runs.csv", n, 0, NULL, &rows, &med, &p90, &k);
    printf("\n  nemotron: median %.1f%%, p90 %.1f%% over %d rows\n", 100 * med, 100 * p90, k);
    CU_ASSERT_EQUAL(k, n);
    for (int i = 0; i < n; i++) {
        CU_ASSERT_FALSE(rows[i].skipped);
        CU_ASSERT_TRUE(fabs(rows[i].error) <= 0.25);
    }
    CU_ASSERT_TRUE(isfinite(med)); /* its bar: make validate */
    /* bf16 then fp8 tables of each release: 15B at 8 GPU counts, 340B at 5 */
    for (int i = 0; i < 8; i++) {
        CU_ASSERT_TRUE(rows[8 + i].predicted < rows[i].predicted);   /* s/iter */
        CU_ASSERT_TRUE(rows[34 + i].predicted < rows[26 + i].predicted);
    }
    for (int i = 0; i < 5; i++)
        CU_ASSERT_TRUE(rows[21 + i].predicted < rows[16 + i].predicted);
    CU_ASSERT_EQUAL(rows[77].sim_layout.precision, PRECISION_FP8);
    CU_ASSERT_EQUAL(rows[42].sim_layout.cp, 2); /* configure.sh's CP=2 (SOURCES.md) */
    free(rows);
}

/* tests/fixtures/validation/bigscience/runs.csv: BigScience's training runs and
 * tuning experiments of 2021-2022 (Megatron-LM, Megatron-DeepSpeed, DeepSpeed
 * ZeRO-3; V100 and A100 on Jean Zay; SOURCES.md), gathered after every
 * constant was set. All replay, B184 (BLOOM's 70 layers on 72 stages under
 * 'type:transformer|embedding') with its first and last stage holding an
 * embedding alone; the median stays within 16%; the
 * tr11 prequel's A100 tuning rows (B077-B177, the best documented) within
 * 13% (today 10.7%). Every row is run on the GPUs per node its text states
 * (4 for the V100 nodes). */
static void test_bigscience_runs(void)
{
    pub_row_t *rows;
    const int n = 184;
    double med, p90;
    int k;
    replay_summary("validation/bigscience/runs.csv", n, 0, NULL, &rows, &med, &p90, &k);
    printf("\n  bigscience: median %.1f%%, p90 %.1f%% over %d rows\n", 100 * med, 100 * p90, k);
    int skipped = 0;
    double a100[101];
    int na = 0;
    for (int i = 0; i < n; i++) {
        skipped += rows[i].skipped;
        if (i >= 76 && i <= 176 && !rows[i].skipped)
            a100[na++] = fabs(rows[i].error);
    }
    CU_ASSERT_EQUAL(skipped, 0);
    CU_ASSERT_EQUAL(rows[183].sim_layout.first_stage_layers, LAYOUT_STAGE_EMPTY);
    CU_ASSERT_EQUAL(rows[183].sim_layout.last_stage_layers, LAYOUT_STAGE_EMPTY);
    CU_ASSERT_TRUE(isfinite(med)); /* its bar: make validate */
    qsort(a100, (size_t)na, sizeof a100[0], cmp_double);
    CU_ASSERT_EQUAL(na, 101);
    CU_ASSERT_TRUE(a100[na / 2] <= 0.13);
    free(rows);
}

/* Signed median error of the replayed rows on one GPU with or without full
 * activation recompute. */
static double signed_median(const pub_row_t *rows, int n, const char *gpu, bool full)
{
    double e[256];
    int k = 0;
    for (int i = 0; i < n && k < 256; i++)
        if (!rows[i].skipped && strcmp(rows[i].gpu, gpu) == 0 &&
            (rows[i].sim_layout.recompute == RECOMPUTE_FULL) == full)
            e[k++] = rows[i].error;
    qsort(e, (size_t)k, sizeof *e, cmp_double);
    return k ? (k % 2 ? e[k / 2] : 0.5 * (e[k / 2 - 1] + e[k / 2])) : NAN;
}

/* tests/fixtures/validation/mpt/runs.csv: 211 MosaicML MPT benchmark runs
 * (llm-foundry FSDP1, MPT 125M-70B, 8-512 A100 40/80GB and H100, sequences
 * of 512-65,536 tokens), gathered after the constants were set. Every row
 * replays, within today's bars (median 4.8%, 90th percentile 13.0%). The
 * signed error with and without activation checkpointing is printed per
 * GPU: H100 -4.8% and +0.8%, A100 80GB -1.6% and +3.6%, A100 40GB +5.5% and
 * +6.9% (before PyTorch's early-stopping recompute was modeled, -11.4/+0.8,
 * -6.6/+3.6, -0.6/+6.9: the gap between the two halved). */
static void test_mpt_runs(void)
{
    pub_row_t *rows;
    const int n = 211;
    double med, p90;
    int k;
    replay_summary("validation/mpt/runs.csv", n, 0, NULL, &rows, &med, &p90, &k);
    printf("\n  mpt: median %.1f%%, p90 %.1f%% over %d rows; signed median, recompute full / none:",
           100 * med, 100 * p90, k);
    static const char *const gpus[] = {"h100-sxm", "a100-80g", "a100-40g"};
    for (int g = 0; g < 3; g++) {
        double full = signed_median(rows, n, gpus[g], true);
        double none = signed_median(rows, n, gpus[g], false);
        printf(" %s %+.1f%% / %+.1f%%", gpus[g], 100 * full, 100 * none);
        CU_ASSERT_TRUE(isfinite(full) && isfinite(none));
    }
    printf("\n");
    CU_ASSERT_EQUAL(k, n);
    /* the median and p90 bars: make validate */
    free(rows);
}

/* The FITTED sustained factors are what their rule gives: per GPU, the
 * factor that makes the median signed error of its dense published runs
 * zero (scaleplan validate --published ... --fit-sustained). Each default
 * profile declared FITTED is within 0.03 of the rule's answer on the rows
 * of the shared table (the declarations list the rows they were fitted on,
 * which differ from today's by a row or two), and at the fitted factor the
 * median is zero. The search does not depend on where it starts: a profile
 * given at a factor of 0.5 fits to the same value. */
static void test_fit_sustained(void)
{
    pub_fit_t *f;
    int n;
    err_t e;
    CU_ASSERT_EQUAL_FATAL(pub_fit_sustained(fixture("validation/throughput.csv"), NULL, &f, &n, &e), 0);
    static const char *const fitted[] = {"a100-80g", "v100-dgx2h", "h100-sxm", "h100-96g",
                                         "b200",     "gb200",      "gb300"};
    double h100 = 0;
    for (size_t k = 0; k < sizeof fitted / sizeof fitted[0]; k++) {
        const pub_fit_t *x = NULL;
        for (int i = 0; i < n; i++)
            if (strcmp(f[i].gpu, fitted[k]) == 0)
                x = &f[i];
        CU_ASSERT_PTR_NOT_NULL_FATAL(x);
        printf("\n  %-10s %2d rows: profile %.3f, fitted %.3f (median error %+.1f%% -> %+.2f%%)",
               x->gpu, x->rows, x->current, x->fitted, 100 * x->median_current,
               100 * x->median_fitted);
        CU_ASSERT_TRUE(x->bracketed);
        CU_ASSERT_TRUE(fabs(x->fitted - x->current) <= 0.03);
        CU_ASSERT_TRUE(fabs(x->median_fitted) <= 0.002);
        if (strcmp(x->gpu, "h100-sxm") == 0)
            h100 = x->fitted;
    }
    printf("\n");
    free(f);
    profile_t p;
    CU_ASSERT_EQUAL_FATAL(prof_load_default("h100-sxm", &p, &e), 0);
    p.sustained_factor = 0.5;
    pub_options_t o = {&p, false, NULL, NULL};
    CU_ASSERT_EQUAL_FATAL(pub_fit_sustained(fixture("validation/throughput.csv"), &o, &f, &n, &e), 0);
    for (int i = 0; i < n; i++)
        if (strcmp(f[i].gpu, "h100-sxm") == 0) {
            CU_ASSERT_DOUBLE_EQUAL(f[i].current, 0.5, 1e-12);
            CU_ASSERT_TRUE(f[i].median_current < -0.2);
            CU_ASSERT_DOUBLE_EQUAL(f[i].fitted, h100, 2e-4);
        }
    free(f);
    prof_free(&p);
}

/* A row's notes name the run's own MoE settings (as the project's MoE
 * sets write them: the dispatcher, the EP overlap, CUDA graphs), over the
 * stand-in preset's recipe: M008 (Qwen3-235B on 256 H100s) replays with
 * the alltoall dispatcher of Megatron-Bridge 25.11's Qwen3 recipe unless
 * its notes say DeepEP, and with the recipe's EP overlap unless they say
 * off. */
static void test_moe_notes(void)
{
    pub_row_t *rows;
    int n;
    err_t e;
    CU_ASSERT_EQUAL_FATAL(pub_replay(fixture("validation/moe_notes.csv"), NULL, &rows, &n, &e), 0);
    CU_ASSERT_EQUAL_FATAL(n, 4);
    for (int i = 0; i < n; i++)
        CU_ASSERT_FALSE(rows[i].skipped);
    CU_ASSERT_TRUE(rows[1].predicted > 1.1 * rows[0].predicted); /* DeepEP */
    CU_ASSERT_TRUE(rows[2].predicted < 0.9 * rows[1].predicted); /* overlap off */
    CHECK_REL(rows[3].predicted, rows[1].predicted, 1e-3);      /* graphs: not host-bound */
    free(rows);
}

TEST_SUITE(suite_validation, "validation", TEST(test_published_runs), TEST(test_results_not_read),
           TEST(test_column_spellings), TEST(test_model_blocks),
           TEST(test_framework_pipeline_split), TEST(test_learned_positions_of_the_run),
           TEST(test_batch_from_notes),
           TEST(test_open_interleaving_uneven_split),
           TEST(test_replay_memory_checked), TEST(test_recompute_words_and_moe_rows),
           TEST(test_notes_tp_overlap), TEST(test_moe_notes),
           TEST(test_bad_csv), TEST(test_versions_and_moe_columns),
           TEST(test_more_runs), TEST(test_dgxc_runs), TEST(test_mds_runs), TEST(test_meta_runs), TEST(test_megascale_runs), TEST(test_mcoremoe_runs), TEST(test_nemotron_runs), TEST(test_bigscience_runs), TEST(test_mpt_runs),
           TEST(test_fit_sustained));
