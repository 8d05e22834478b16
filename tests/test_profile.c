/* Tests of profile/profile: the default profiles load, GEMM and collective
 * times follow the model and the measurements they were built from, and a
 * profile survives a save/load round trip. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "profile/profile_json.h"
#include "common/fileio.h"
#include "profile/provenance.h"
#include "tests/testing.h"

static profile_t load_default(const char *gpu)
{
    profile_t p;
    err_t e;
    int rc = prof_load_default(gpu, &p, &e);
    if (rc)
        fprintf(stderr, "%s: %s\n", gpu, e.msg);
    CU_ASSERT_EQUAL_FATAL(rc, 0);
    return p;
}

static void test_defaults_load(void)
{
    static const char *gpus[] = {"v100", "a100-40g", "a100-80g", "a100-pcie-80g", "h100-sxm",
                                 "h100-pcie", "h100-nvl", "h200", "b200", "gb200", "mi300x",
                                 "l40s"};
    for (size_t i = 0; i < sizeof gpus / sizeof gpus[0]; i++) {
        profile_t p = load_default(gpus[i]);
        CU_ASSERT_STRING_EQUAL(p.gpu, gpus[i]);
        CU_ASSERT_STRING_EQUAL(p.origin, "default");
        CU_ASSERT_TRUE(p.sm_count > 0 && p.mem_bw_peak_gbs > 0);
        CU_ASSERT_TRUE(strlen(p.gemm_source) > 20 && strlen(p.net_source) > 20);
        /* a 4096^3 bf16 GEMM runs below peak and above 30% of it */
        double t = prof_gemm_time(&p, DTYPE_BF16, 4096, 4096, 4096, 1);
        dtype_t d = p.peak_tflops[DTYPE_BF16] > 0 ? DTYPE_BF16 : DTYPE_FP16;
        double tflops = 2 * 4096.0 * 4096 * 4096 / t / 1e12;
        CU_ASSERT_TRUE(tflops < p.peak_tflops[d] && tflops > 0.3 * p.peak_tflops[d]);
        prof_free(&p);
    }
}

/* H100 SXM, 8192^3 bf16, by hand: 64 x 32 = 2048 tiles of 128x256 over 132
 * SMs take 16 waves, utilization 2048/(16 x 132) = 0.9697, softened by
 * wave_penalty 0.5 to 0.98485; K efficiency 8192/(8192 + 384) = 0.95522;
 * max efficiency 0.8389 (MAMF 0.803 at 2048x2048x13312, hardware.csv H051,
 * divided by the model's factors there): efficiency 0.78920; with the
 * sustained factor 0.722 (fitted, see the profile), 2 x 8192^3 /
 * (989.4e12 x 0.78920 x 0.722) + 4 us = 1.9544 ms. */
static void test_gemm_by_hand(void)
{
    profile_t p = load_default("h100-sxm");
    double util = 2048.0 / (16 * 132);
    double eff = 0.8389 * (1 - 0.5 * (1 - util)) * (8192.0 / (8192 + 384));
    CHECK_REL(prof_gemm_model_eff(&p, DTYPE_BF16, 8192, 8192, 8192, 1), eff, 1e-12);
    CHECK_REL(eff, 0.78920, 1e-4);
    CU_ASSERT_DOUBLE_EQUAL(p.sustained_factor, 0.734, 1e-12);
    double expected = 2 * pow(8192, 3) / (989.4e12 * eff * 0.734) + 4e-6;
    CHECK_REL(prof_gemm_time(&p, DTYPE_BF16, 8192, 8192, 8192, 1), expected, 1e-12);
    /* the MAMF shape itself comes out at the measured 80.3% of peak */
    CHECK_REL(prof_gemm_model_eff(&p, DTYPE_BF16, 2048, 2048, 13312, 1), 0.803, 1e-3);
    /* fp8 uses its own peak and efficiency, and twice bf16's k_half (its K
     * loop runs twice as fast past the same fixed cost per tile); A100 has
     * no fp8 and falls back */
    double kh8 = 384 * p.peak_tflops[DTYPE_FP8] / p.peak_tflops[DTYPE_BF16];
    CHECK_REL(kh8, 768, 1e-3);
    CHECK_REL(prof_gemm_model_eff(&p, DTYPE_FP8, 8192, 8192, 8192, 1),
              0.8429 * (1 - 0.5 * (1 - util)) * (8192.0 / (8192 + kh8)), 1e-12);
    CHECK_REL(prof_gemm_model_eff(&p, DTYPE_FP8, 4096, 4096, 1024, 1) /
                  prof_gemm_model_eff(&p, DTYPE_BF16, 4096, 4096, 1024, 1),
              0.8429 / 0.8389 * (1024.0 + 384) / (1024 + kh8), 1e-12);
    CU_ASSERT_TRUE(prof_gemm_time(&p, DTYPE_FP8, 8192, 8192, 8192, 1) < 0.6 * expected);
    profile_t a = load_default("a100-80g");
    CHECK_REL(prof_gemm_time(&a, DTYPE_FP8, 4096, 4096, 4096, 1),
              prof_gemm_time(&a, DTYPE_BF16, 4096, 4096, 4096, 1), 1e-12);
    CU_ASSERT_EQUAL(prof_gemm_time(&p, DTYPE_BF16, 0, 10, 10, 1), 0);
    prof_free(&p);
    prof_free(&a);
}

/* Properties: more work never takes less time; efficiency never exceeds
 * the measured best; a tiny GEMM is memory- or launch-bound. */
static void test_gemm_properties(void)
{
    profile_t p = load_default("h100-sxm");
    double prev = 0;
    for (double k = 64; k <= 65536; k *= 2) {
        double t = prof_gemm_time(&p, DTYPE_BF16, 4096, 4096, k, 1);
        CU_ASSERT_TRUE(t > prev);
        prev = t;
        CU_ASSERT_TRUE(prof_gemm_model_eff(&p, DTYPE_BF16, 4096, 4096, k, 1) <=
                       p.gemm_max_eff[DTYPE_BF16]);
    }
    prev = 0;
    for (double m = 128; m <= 65536; m *= 2) {
        double t = prof_gemm_time(&p, DTYPE_BF16, m, 8192, 8192, 1);
        CU_ASSERT_TRUE(t >= prev);
        prev = t;
    }
    /* 1 x 4096 x 4096 is a matrix-vector product: bound by reading B */
    double t = prof_gemm_time(&p, DTYPE_BF16, 1, 4096, 4096, 1);
    double read_b = 4096.0 * 4096 * 2 / (3350e9 * 0.9);
    CU_ASSERT_TRUE(t >= read_b);
    /* batched GEMMs cost batch times the work */
    CU_ASSERT_TRUE(prof_gemm_time(&p, DTYPE_BF16, 2048, 128, 2048, 64) >
                   prof_gemm_time(&p, DTYPE_BF16, 2048, 128, 2048, 1));
    prof_free(&p);
}

/* A measured point corrects the model near it: at the point itself the
 * predicted rate is the measured one (apart from the launch overhead). */
static void test_gemm_table_correction(void)
{
    profile_t p = load_default("h100-sxm");
    prof_gemm_point_t pt = {DTYPE_BF16, 8192, 8192, 8192, 700.0};
    p.gemm_points = malloc(sizeof pt);
    CU_ASSERT_PTR_NOT_NULL_FATAL(p.gemm_points);
    p.gemm_points[0] = pt;
    p.n_gemm_points = 1;
    double flops = 2 * pow(8192, 3);
    CHECK_REL(prof_gemm_time(&p, DTYPE_BF16, 8192, 8192, 8192, 1), flops / 700e12 + 4e-6,
              1e-9);
    /* far away (factor > 4 in a dimension) the model stands alone */
    profile_t plain = load_default("h100-sxm");
    CHECK_REL(prof_gemm_time(&p, DTYPE_BF16, 512, 512, 512, 1),
              prof_gemm_time(&plain, DTYPE_BF16, 512, 512, 512, 1), 1e-12);
    prof_free(&p);
    prof_free(&plain);
}

static coll_span_t span(int n, int per_node, int nodes, const fabric_t *intra,
                        const fabric_t *inter, double nic)
{
    coll_span_t s = {n, per_node, nodes, intra, inter, nic, 1.0};
    return s;
}

/* Intra-node all-reduce on 8 GPUs reproduces the measurements the default
 * profiles were fitted to (collectives.csv): H200 (used for H100's NVLink4
 * node) C036 1 GiB 4053.4 us, C033 128 MiB 584.4 us, C021 32 KiB 40.0 us;
 * A100 C016 1 GiB 8203.9 us, C001 32 KiB 43.83 us. */
static void test_intra_allreduce_matches_measurements(void)
{
    err_t e;
    fabric_t nv4, nv3;
    CU_ASSERT_EQUAL_FATAL(fabric_load("nvlink4", &nv4, &e), 0);
    CU_ASSERT_EQUAL_FATAL(fabric_load("nvlink3", &nv3, &e), 0);
    profile_t h = load_default("h100-sxm");
    coll_span_t s = span(8, 8, 1, &nv4, NULL, 0);
    CHECK_REL(prof_coll_time(&h, COLL_ALL_REDUCE, &s, 1073741824.0), 4053.4e-6, 0.05);
    CHECK_REL(prof_coll_time(&h, COLL_ALL_REDUCE, &s, 134217728.0), 584.4e-6, 0.05);
    CHECK_REL(prof_coll_time(&h, COLL_ALL_REDUCE, &s, 32768.0), 40.0e-6, 0.10);
    /* ring below 5 ranks: 370 GB/s busbw at 4 ranks (C118) */
    coll_span_t s4 = span(4, 4, 1, &nv4, NULL, 0);
    double t4 = prof_coll_time(&h, COLL_ALL_REDUCE, &s4, 8589934592.0);
    CHECK_REL(1.5 * 8589934592.0 / t4 / 1e9, 370, 0.02);
    profile_t a = load_default("a100-80g");
    coll_span_t sa = span(8, 8, 1, &nv3, NULL, 0);
    CHECK_REL(prof_coll_time(&a, COLL_ALL_REDUCE, &sa, 1073741824.0), 8203.9e-6, 0.05);
    CHECK_REL(prof_coll_time(&a, COLL_ALL_REDUCE, &sa, 32768.0), 43.83e-6, 0.10);
    /* all-to-all inside the node at NCCL's measured 320 (H100), 210 (A100)
     * and 640 (B200) GB/s busbw (GTC25 S72583), below the all-reduce's
     * NVLink SHARP figures */
    double big = 8589934592.0;
    CHECK_REL(0.875 * big / prof_coll_time(&h, COLL_ALL_TO_ALL, &s, big) / 1e9, 320, 0.01);
    CHECK_REL(0.875 * big / prof_coll_time(&a, COLL_ALL_TO_ALL, &sa, big) / 1e9, 210, 0.01);
    fabric_t nv5;
    CU_ASSERT_EQUAL_FATAL(fabric_load("nvlink5", &nv5, &e), 0);
    profile_t b = load_default("b200");
    coll_span_t sb = span(8, 8, 1, &nv5, NULL, 0);
    CHECK_REL(0.875 * big / prof_coll_time(&b, COLL_ALL_TO_ALL, &sb, big) / 1e9, 640, 0.01);
    prof_free(&b);
    prof_free(&h);
    prof_free(&a);
}

/* Across nodes, one rank per node (DP with TP8), 16 nodes on NDR: the ring
 * moves 2(n-1)/n of 1 GiB through one 400 Gb/s NIC at 94%: 47 GB/s, so
 * 1.875 x 2^30 / 47e9 = 42.84 ms plus 30 steps of 5 us and a 15 us launch.
 * The tree is slower at this size (90% of the bandwidth). */
static void test_multinode_ring_by_hand(void)
{
    err_t e;
    fabric_t nv4, ndr;
    CU_ASSERT_EQUAL_FATAL(fabric_load("nvlink4", &nv4, &e), 0);
    CU_ASSERT_EQUAL_FATAL(fabric_load("ib-ndr", &ndr, &e), 0);
    profile_t h = load_default("h100-sxm");
    coll_span_t s = span(16, 1, 16, &nv4, &ndr, 50);
    double expected = 15e-6 + 30 * 5e-6 + 1.875 * 1073741824.0 / 47e9;
    CHECK_REL(prof_coll_time(&h, COLL_ALL_REDUCE, &s, 1073741824.0), expected, 1e-9);
    /* small messages at 1024 nodes pick the tree: 2 x log2(1024) hops */
    coll_span_t big = span(1024, 1, 1024, &nv4, &ndr, 50);
    double small = prof_coll_time(&h, COLL_ALL_REDUCE, &big, 65536.0);
    CU_ASSERT_TRUE(small < 15e-6 + 2 * 10 * 5e-6 + 1e-4);
    CU_ASSERT_TRUE(small < 15e-6 + 2046 * 5e-6); /* far below the ring's latency */
    /* 8 ranks per node use 8 rails, capped by the node's NVLink */
    coll_span_t full = span(64, 8, 8, &nv4, &ndr, 50);
    double t = prof_coll_time(&h, COLL_ALL_REDUCE, &full, 8589934592.0);
    double busbw = 2.0 * 63 / 64 * 8589934592.0 / t / 1e9;
    CU_ASSERT_TRUE(busbw > 300 && busbw <= 8 * 47);
    /* oversubscription slows the network-bound case */
    coll_span_t tapered = s;
    tapered.taper = 2;
    CU_ASSERT_TRUE(prof_coll_time(&h, COLL_ALL_REDUCE, &tapered, 1073741824.0) >
                   1.9 * (expected - 165e-6));
    prof_free(&h);
}

/* More bandwidth is never slower; more bytes never faster. */
static void test_collective_properties(void)
{
    err_t e;
    fabric_t nv4, hdr, ndr;
    CU_ASSERT_EQUAL_FATAL(fabric_load("nvlink4", &nv4, &e), 0);
    CU_ASSERT_EQUAL_FATAL(fabric_load("ib-hdr", &hdr, &e), 0);
    CU_ASSERT_EQUAL_FATAL(fabric_load("ib-ndr", &ndr, &e), 0);
    profile_t h = load_default("h100-sxm");
    for (int op = 0; op < COLL_OP_COUNT; op++) {
        double prev = 0;
        for (double b = 1024; b <= 17179869184.0; b *= 4) {
            coll_span_t s = span(64, 8, 8, &nv4, &ndr, 50);
            double t = prof_coll_time(&h, (coll_op_t)op, &s, b);
            CU_ASSERT_TRUE(t >= prev);
            prev = t;
            coll_span_t slow = span(64, 8, 8, &nv4, &hdr, 25);
            CU_ASSERT_TRUE(prof_coll_time(&h, (coll_op_t)op, &slow, b) >= t * (1 - 1e-12));
        }
    }
    coll_span_t one = span(1, 1, 1, &nv4, NULL, 0);
    CU_ASSERT_EQUAL(prof_coll_time(&h, COLL_ALL_REDUCE, &one, 1e9), 0);
    CHECK_REL(prof_bus_factor(COLL_ALL_REDUCE, 8), 1.75, 1e-12);
    CHECK_REL(prof_bus_factor(COLL_ALL_GATHER, 8), 0.875, 1e-12);
    CHECK_REL(prof_bus_factor(COLL_SEND_RECV, 2), 1.0, 1e-12);
    /* a node fabric the profile was not measured on falls back to the
     * fabric's own figures: PCIe gen5 63 GB/s x 0.8 */
    fabric_t pcie5;
    CU_ASSERT_EQUAL_FATAL(fabric_load("pcie5", &pcie5, &e), 0);
    coll_span_t pc = span(8, 8, 1, &pcie5, NULL, 0);
    double t = prof_coll_time(&h, COLL_ALL_REDUCE, &pc, 1073741824.0);
    CHECK_REL(t, 15e-6 + 14 * 1.7e-6 + 1.75 * 1073741824.0 / 50.4e9, 1e-9);
    prof_free(&h);
}

static void test_round_trip(void)
{
    profile_t p = load_default("h100-sxm");
    prof_gemm_point_t pts[2] = {{DTYPE_BF16, 4096, 4096, 4096, 650.5},
                                {DTYPE_FP8, 8192, 8192, 8192, 1300.25}};
    p.gemm_points = malloc(sizeof pts);
    CU_ASSERT_PTR_NOT_NULL_FATAL(p.gemm_points);
    memcpy(p.gemm_points, pts, sizeof pts);
    p.n_gemm_points = 2;
    snprintf(p.origin, sizeof p.origin, "measured");
    char dir[256], path[300];
    CU_ASSERT_EQUAL_FATAL(make_temp_dir(dir, sizeof dir), 0);
    snprintf(path, sizeof path, "%s/p.json", dir);
    err_t e;
    CU_ASSERT_EQUAL_FATAL(prof_save(&p, path, &e), 0);
    profile_t q;
    CU_ASSERT_EQUAL_FATAL(prof_load(path, &q, &e), 0);
    CU_ASSERT_STRING_EQUAL(q.origin, "measured");
    CU_ASSERT_EQUAL(q.n_gemm_points, 2);
    CU_ASSERT_EQUAL(q.n_tables, p.n_tables);
    CHECK_REL(q.gemm_points[1].tflops, 1300.25, 1e-12);
    CHECK_REL(q.gemm_max_eff[DTYPE_FP8], p.gemm_max_eff[DTYPE_FP8], 1e-12);
    CHECK_REL(q.tables[0].lines[2].busbw_gbs, p.tables[0].lines[2].busbw_gbs, 1e-12);
    CU_ASSERT_STRING_EQUAL(q.net_source, p.net_source);
    /* the attention table's measured range travels with it */
    const prof_attn_kernel_t *k = prof_attn_kernel(&q, "cudnn");
    CU_ASSERT(k && k->max_keys == 16384);
    /* saving the loaded copy gives the same file */
    char path2[300];
    snprintf(path2, sizeof path2, "%s/q.json", dir);
    CU_ASSERT_EQUAL(prof_save(&q, path2, &e), 0);
    char *a = NULL, *b = NULL;
    CU_ASSERT_EQUAL(fileio_read_all(path, &a, NULL, &e), 0);
    CU_ASSERT_EQUAL(fileio_read_all(path2, &b, NULL, &e), 0);
    CU_ASSERT_STRING_EQUAL(a, b);
    free(a);
    free(b);
    prof_free(&p);
    prof_free(&q);
    remove_tree(dir);
}

static void test_bad_profiles(void)
{
    char dir[256], path[300];
    CU_ASSERT_EQUAL_FATAL(make_temp_dir(dir, sizeof dir), 0);
    snprintf(path, sizeof path, "%s/bad.json", dir);
    err_t e;
    profile_t p;
    static const struct {
        const char *text, *n1, *n2;
    } cases[] = {
        {"{\"format\": \"other/1\"}", "format", "scaleplan-profile/1"},
        {"{\"format\": \"scaleplan-profile/1\", \"gpu\": \"h100\", \"origin\": \"x\"}",
         "gemm", "missing"},
        {"{\"format\": \"scaleplan-profile/1\", \"gpu\": \"h100\", \"origin\": \"x\", "
         "\"gemm\": {\"tile_m\": 128, \"tile_n\": 256, \"wave_penalty\": 2, \"k_half\": 64, "
         "\"launch_us\": 4, \"source\": \"s\", \"dtypes\": {}}}",
         "gemm.wave_penalty", "between 0 and 1"},
        {"[]", "must be a JSON object", "bad.json"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        CU_ASSERT_EQUAL_FATAL(
            fileio_write_atomic(path, cases[i].text, strlen(cases[i].text), &e), 0);
        int rc = prof_load(path, &p, &e);
        CHECK_ERR(rc, &e, ERR_INPUT, cases[i].n1, cases[i].n2);
    }
    /* a table with an unknown collective, inside a valid profile */
    profile_t good = load_default("a100-80g");
    cJSON *root = prof_to_json(&good);
    cJSON *tables = cJSON_GetObjectItem(cJSON_GetObjectItem(root, "collectives"), "tables");
    cJSON_ReplaceItemInObject(cJSON_GetArrayItem(tables, 0), "op", cJSON_CreateString("gossip"));
    int rc = prof_from_json(root, "mine.json", &p, &e);
    CHECK_ERR(rc, &e, ERR_INPUT, "mine.json", "collectives.tables[0]", "gossip");
    cJSON_Delete(root);
    prof_free(&good);
    rc = prof_load_default("tpu", &p, &e);
    CHECK_ERR(rc, &e, ERR_INPUT, "--gpu");
    remove_tree(dir);
}

/* Each profile figure is classed by its source: the H100 SXM sustained
 * factor was fitted to its published rows, the B300's copied (assumed);
 * every default profile declares its tile and wave penalty assumptions;
 * the first of "fitted"/"assumed" in a clause decides. */
static void test_provenance(void)
{
    CU_ASSERT_EQUAL(prov_classify("sustained_factor 0.7: FITTED: one constant"), PROV_FITTED);
    CU_ASSERT_EQUAL(prov_classify("ASSUMED equal to the GB300 profile's fitted factor"),
                    PROV_ASSUMED);
    CU_ASSERT_EQUAL(prov_classify("hardware.csv H051: best measured GEMM"), PROV_MEASURED);
    CU_ASSERT_EQUAL(prov_classify("NVIDIA datasheet: 989 TFLOP/s"), PROV_SOURCED);
    static const struct {
        const char *gpu;
        prov_kind_t sustained;
    } cases[] = {{"h100-sxm", PROV_FITTED}, {"b200", PROV_FITTED}, {"gb300", PROV_FITTED},
                 {"b300", PROV_ASSUMED},    {"h100-pcie", PROV_ASSUMED}, {"mi300x", PROV_ASSUMED}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        profile_t p = load_default(cases[i].gpu);
        prov_figure_t f[PROV_MAX_FIGURES];
        int n = prov_figures(&p, f, PROV_MAX_FIGURES), found = 0;
        CU_ASSERT_TRUE(n > 10);
        for (int k = 0; k < n; k++) {
            if (strcmp(f[k].name, "gemm.sustained_factor") == 0) {
                found++;
                CU_ASSERT_EQUAL(f[k].kind, cases[i].sustained);
                CHECK_REL(f[k].value, p.sustained_factor, 0);
            }
            if (strcmp(f[k].name, "gemm.wave_penalty") == 0)
                CU_ASSERT_EQUAL(f[k].kind, PROV_ASSUMED);
        }
        CU_ASSERT_EQUAL(found, 1);
        prof_free(&p);
    }
    /* sim names them: the B300's sustained factor is an assumption, the
     * H100 SXM's is not */
    char *out = NULL;
    CU_ASSERT_EQUAL(run_cli("sim --model llama3-8b --gpu b300 --gpus 8 --json", &out, NULL), 0);
    CU_ASSERT_PTR_NOT_NULL(out && strstr(out, "\"assumed_inputs\":") ? strstr(out, "gemm.sustained_factor") : NULL);
    free(out);
    out = NULL;
    CU_ASSERT_EQUAL(run_cli("sim --model llama3-8b --gpu h100-sxm --gpus 8 --allow-oom", &out, NULL), 0);
    CU_ASSERT_PTR_NOT_NULL(out ? strstr(out, "assumed inputs") : NULL);
    CU_ASSERT_PTR_NULL(out ? strstr(out, "sustained_factor") : NULL);
    free(out);
}

/* A fused attention kernel asked for more keys a call than its figures
 * cover is said (the plateau is assumed there): Llama 3 8B on 8 H100 with
 * ring CP 8 at 262,144 tokens runs 32,768 keys a call, past the 16,384 of
 * the FlashAttention-3 paper's figures; at 131,072 tokens (16,384) nothing
 * is said, nor on a B200, whose cuDNN table reaches 32k. */
static void test_attention_range_said(void)
{
    static const struct {
        const char *gpu;
        int seq;
        bool said;
    } cases[] = {{"h100-sxm", 262144, true}, {"h100-sxm", 131072, false}, {"b200", 262144, false}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char cmd[256];
        snprintf(cmd, sizeof cmd,
                 "sim --model llama3-8b --gpu %s --gpus 8 --cp 8 --seq-len %d --global-batch 8 "
                 "--micro-batch 1 --allow-oom",
                 cases[i].gpu, cases[i].seq);
        char *out = NULL;
        cmd_expect(cmd, 0, &out, NULL);
        bool said = out && strstr(out, "keys a kernel call") != NULL;
        CU_ASSERT_EQUAL(said, cases[i].said);
        if (cases[i].said)
            CU_ASSERT(out && strstr(out, "32768 keys a kernel call on h100-sxm's cudnn, beyond the 16384"));
        free(out);
    }
}

TEST_SUITE(suite_profile, "profile", TEST(test_defaults_load), TEST(test_gemm_by_hand), TEST(test_provenance),
           TEST(test_gemm_properties), TEST(test_gemm_table_correction),
           TEST(test_intra_allreduce_matches_measurements), TEST(test_multinode_ring_by_hand),
           TEST(test_collective_properties), TEST(test_round_trip), TEST(test_bad_profiles),
           TEST(test_attention_range_said));
