/* Tests of offload (sim/offload and its hooks in models/layout,
 * models/memory, sim/costs, sim/step, sim/plan): what leaves the GPU, what
 * the host holds, what the transfers and the CPU step cost, the acceptance
 * case of Llama 3 70B on 8 H100 with ZeRO-3 and optimizer + parameter
 * offload, and bad input. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "common/units.h"
#include "models/memory.h"
#include "sim/offload.h"
#include "plan/plan.h"
#include "sim/step.h"
#include "tests/testing.h"

typedef struct {
    model_t model;
    layout_t layout;
    cluster_t cluster;
    profile_t profile;
    sim_input_t in;
} setup_t;

static int setup(setup_t *s, const char *model, const char *gpu, int gpus, const layout_t *l)
{
    err_t e;
    memset(s, 0, sizeof *s);
    cluster_spec_t spec = {.gpu = gpu, .n_gpus = gpus};
    if (model_load(model, &s->model, &e) || cluster_resolve(&spec, &s->cluster, &e) ||
        prof_load_default(s->cluster.gpu.name, &s->profile, &e)) {
        fprintf(stderr, "setup: %s\n", e.msg);
        return -1;
    }
    s->layout = *l;
    if (layout_finalize(&s->layout, &s->model, gpus, &e)) {
        fprintf(stderr, "setup: %s\n", e.msg);
        prof_free(&s->profile);
        return -1;
    }
    s->in = (sim_input_t){&s->model, &s->layout, &s->cluster, &s->profile, {0}};
    sim_options_default(&s->in.opt);
    return 0;
}

static layout_t zero3(const char *offload, recompute_t rc)
{
    layout_t l;
    layout_defaults(&l);
    l.zero = 3;
    l.recompute = rc;
    l.seq_len = 8192;
    err_t e;
    if (offload)
        CU_ASSERT_EQUAL(layout_parse_offload(offload, &l, &e), 0);
    return l;
}

/* The flag: parts, NVMe, activation block counts, and its errors. */
static void test_parse_and_errors(void)
{
    layout_t l;
    layout_defaults(&l);
    err_t e;
    CU_ASSERT_EQUAL(layout_parse_offload("optimizer,params,activations=20,nvme", &l, &e), 0);
    CU_ASSERT_EQUAL(l.offload, LAYOUT_OFFLOAD_OPTIMIZER | LAYOUT_OFFLOAD_PARAMS |
                                   LAYOUT_OFFLOAD_ACTIVATIONS);
    CU_ASSERT_TRUE(l.offload_nvme);
    CU_ASSERT_EQUAL(l.offload_act_layers, 20);
    char name[64];
    layout_offload_name(&l, name, sizeof name);
    CU_ASSERT_STRING_EQUAL(name, "optimizer,params,activations,nvme");
    CU_ASSERT_EQUAL(layout_parse_offload("none", &l, &e), 0);
    CU_ASSERT_EQUAL(l.offload, 0);
    CHECK_ERR(layout_parse_offload("optimiser", &l, &e), &e, ERR_INPUT, "--offload",
              "optimiser");
    CHECK_ERR(layout_parse_offload("nvme", &l, &e), &e, ERR_INPUT, "--offload", "nvme");
    CHECK_ERR(layout_parse_offload("activations=0", &l, &e), &e, ERR_INPUT, "activations=N");
    /* Parameters are offloaded from ZeRO-3 shards only. */
    model_t m;
    CU_ASSERT_EQUAL_FATAL(model_load("llama3-8b", &m, &e), 0);
    layout_defaults(&l);
    l.zero = 2;
    CU_ASSERT_EQUAL(layout_parse_offload("params", &l, &e), 0);
    CHECK_ERR(layout_finalize(&l, &m, 8, &e), &e, ERR_INPUT, "--offload", "--zero 3");
    /* Activation offload keeps at least one block of each stage. */
    layout_defaults(&l);
    l.pp = 4; /* 8 blocks per stage */
    CU_ASSERT_EQUAL(layout_parse_offload("activations=8", &l, &e), 0);
    CHECK_ERR(layout_finalize(&l, &m, 4, &e), &e, ERR_INPUT, "--offload", "fewer than the 8");
}

/* Memory of Llama 3 70B (70,553,706,496 parameters) on 8 GPUs with
 * ZeRO-3: each GPU owns psi = 1/8 of them. Offloading the optimizer moves
 * 12 psi bytes of master weights and moments plus DeepSpeed's 4 psi fp32
 * gradient copy to the host and leaves the GPU its reduce buckets (2 x 5e8
 * elements x 2 bytes = 2e9 bytes) of gradients; offloading the parameters
 * moves their 2 psi bytes too. */
static void test_memory(void)
{
    model_t m;
    err_t e;
    CU_ASSERT_EQUAL_FATAL(model_load("llama3-70b", &m, &e), 0);
    layout_t l = zero3("optimizer,params", RECOMPUTE_FULL);
    CU_ASSERT_EQUAL_FATAL(layout_finalize(&l, &m, 8, &e), 0);
    model_memory_t mm;
    model_memory_stage(&m, &l, 0, NULL, &mm);
    double psi = model_gpu_params(&m, &l, 0) / 8;
    CU_ASSERT_EQUAL(mm.optimizer_bytes, 0);
    CU_ASSERT_EQUAL(mm.params_bytes, 0);
    CHECK_REL(mm.grads_bytes, 2e9, 1e-12);
    CHECK_REL(mm.host_bytes, 12 * psi + 4 * psi + 2 * psi, 1e-12);
    /* Without offload the same layout holds all of it on the GPU. */
    layout_t plain = zero3(NULL, RECOMPUTE_FULL);
    CU_ASSERT_EQUAL_FATAL(layout_finalize(&plain, &m, 8, &e), 0);
    model_memory_t pm;
    model_memory_stage(&m, &plain, 0, NULL, &pm);
    CHECK_REL(pm.optimizer_bytes, 12 * psi, 1e-12);
    CU_ASSERT_EQUAL(pm.host_bytes, 0);
    /* Half the optimizer (Megatron --optimizer-offload-fraction 0.5). */
    layout_t half = zero3("optimizer", RECOMPUTE_FULL);
    half.offload_fraction = 0.5;
    CU_ASSERT_EQUAL_FATAL(layout_finalize(&half, &m, 8, &e), 0);
    model_memory_t hm;
    model_memory_stage(&m, &half, 0, NULL, &hm);
    CHECK_REL(hm.optimizer_bytes, 6 * psi, 1e-12);
    CHECK_REL(hm.host_bytes, 8 * psi, 1e-12);
    /* Activations of 40 of 80 blocks leave the GPU; one block's stays for
     * the transfer in flight. */
    layout_t act = zero3("activations=40", RECOMPUTE_NONE);
    CU_ASSERT_EQUAL_FATAL(layout_finalize(&act, &m, 8, &e), 0);
    layout_t no_act = zero3(NULL, RECOMPUTE_NONE);
    CU_ASSERT_EQUAL_FATAL(layout_finalize(&no_act, &m, 8, &e), 0);
    model_memory_t am, nm;
    model_memory_stage(&m, &act, 0, NULL, &am);
    model_memory_stage(&m, &no_act, 0, NULL, &nm);
    double block = model_layer_activation_bytes(&m, &act);
    CHECK_REL(am.host_bytes, 40 * block, 1e-12);
    CHECK_REL(nm.activations_bytes - am.activations_bytes, 39 * block, 1e-9);
}

/* The acceptance case: sim --model llama3-70b --gpus 8 --gpu h100-sxm
 * --zero 3 --offload optimizer,params. At the default 8192 tokens its
 * activations alone (171.8 GiB without recompute) exceed the GPU; with full
 * recompute it fits, and the step is the compute, the ZeRO-3 traffic, the
 * host transfers and the CPU Adam step on each GPU's 8.8B parameters:
 * 8.82e9 / (4e9/48 x 112 cores / 8 GPUs) = 7.56 s. */
static void test_acceptance_case(void)
{
    setup_t s;
    layout_t l = zero3("optimizer,params", RECOMPUTE_NONE);
    CU_ASSERT_EQUAL_FATAL(setup(&s, "llama3-70b", "h100-sxm", 8, &l), 0);
    sim_ctx_t *ctx = sim_ctx_create();
    CU_ASSERT_PTR_NOT_NULL_FATAL(ctx);
    sim_result_t r;
    err_t e;
    CU_ASSERT_EQUAL_FATAL(sim_run_step(ctx, &s.in, &r, &e), 0);
    CU_ASSERT_FALSE(r.fits);
    CU_ASSERT_TRUE(r.memory.activations_bytes / GIB > 150);
    prof_free(&s.profile);
    l = zero3("optimizer,params", RECOMPUTE_FULL);
    CU_ASSERT_EQUAL_FATAL(setup(&s, "llama3-70b", "h100-sxm", 8, &l), 0);
    CU_ASSERT_EQUAL_FATAL(sim_run_step(ctx, &s.in, &r, &e), 0);
    CU_ASSERT_TRUE(r.fits);
    CU_ASSERT_TRUE(r.host_gib > 100 && r.host_gib <= r.host_capacity_gib);
    double psi = model_gpu_params(&s.model, &s.layout, 0) / 8;
    double rate = 4.0e9 / 48 * s.cluster.host_cpu_cores / s.cluster.gpus_per_node;
    CHECK_REL(r.costs.offload.step_cpu_s, psi / rate, 1e-12);
    CHECK_REL(r.breakdown_s[BD_OPTIMIZER], psi / rate, 1e-9);
    double sum = 0;
    for (int i = 0; i < BD_COUNT; i++)
        sum += r.breakdown_s[i];
    CHECK_REL(sum, r.step_time_s, 1e-9);
    CU_ASSERT_TRUE(r.offload_transfer_s > 0); /* the traffic is priced, hidden or not */
    /* Each layer's parameter shard over 80% of PCIe Gen5's 63 GB/s. */
    double layer = r.costs.layer_params / 8;
    CHECK_REL(r.costs.offload.param_fetch_s, layer * 2 / (0.8 * 63e9), 1e-12);
    /* Offloading costs time: the same layout on the GPU alone is faster
     * (it does not fit: 141 GB of state per GPU; that is why one offloads). */
    prof_free(&s.profile);
    layout_t plain = zero3(NULL, RECOMPUTE_FULL);
    CU_ASSERT_EQUAL_FATAL(setup(&s, "llama3-70b", "h100-sxm", 8, &plain), 0);
    sim_result_t p;
    CU_ASSERT_EQUAL_FATAL(sim_run_step(ctx, &s.in, &p, &e), 0);
    CU_ASSERT_FALSE(p.fits);
    CU_ASSERT_TRUE(p.step_time_s < r.step_time_s);
    CU_ASSERT_EQUAL(p.breakdown_s[BD_OFFLOAD], 0);
    prof_free(&s.profile);
    sim_ctx_destroy(ctx);
}

/* ZeRO-2 with the optimizer offloaded: gradients out and parameters back
 * at the step's end are exposed (2 + 2 bytes per owned parameter over the
 * effective link), and a slower link is never faster. */
static void test_transfers_and_link(void)
{
    setup_t s;
    layout_t l;
    layout_defaults(&l);
    l.zero = 2;
    l.seq_len = 4096;
    l.recompute = RECOMPUTE_FULL;
    err_t e;
    CU_ASSERT_EQUAL(layout_parse_offload("optimizer", &l, &e), 0);
    CU_ASSERT_EQUAL_FATAL(setup(&s, "llama3-8b", "h100-sxm", 8, &l), 0);
    sim_ctx_t *ctx = sim_ctx_create();
    CU_ASSERT_PTR_NOT_NULL_FATAL(ctx);
    sim_result_t fast, slow;
    CU_ASSERT_EQUAL_FATAL(sim_run_step(ctx, &s.in, &fast, &e), 0);
    double owned = model_gpu_params(&s.model, &s.layout, 0) / 8;
    CHECK_REL(fast.breakdown_s[BD_OFFLOAD], 2 * owned * 2 / (0.8 * 63e9), 1e-9);
    s.cluster.gpu.host_link_gbs /= 4; /* PCIe Gen3 speeds */
    CU_ASSERT_EQUAL_FATAL(sim_run_step(ctx, &s.in, &slow, &e), 0);
    CU_ASSERT_TRUE(slow.step_time_s > fast.step_time_s);
    CHECK_REL(slow.breakdown_s[BD_OFFLOAD], 4 * fast.breakdown_s[BD_OFFLOAD], 1e-9);
    /* Host memory too small: does not fit, and says it is the host. */
    s.cluster.host_memory_gib = 8;
    CU_ASSERT_EQUAL_FATAL(sim_run_step(ctx, &s.in, &slow, &e), 0);
    CU_ASSERT_FALSE(slow.fits);
    CU_ASSERT_TRUE(slow.host_gib > slow.host_capacity_gib);
    prof_free(&s.profile);
    sim_ctx_destroy(ctx);
}

/* Activation offload on a GB200 (NVLink-C2C, 450 GB/s per direction)
 * hides behind compute; on PCIe Gen3 it shows. */
static void test_activation_offload(void)
{
    setup_t s;
    layout_t l;
    layout_defaults(&l);
    l.seq_len = 8192;
    l.distributed_optimizer = true;
    err_t e;
    CU_ASSERT_EQUAL(layout_parse_offload("activations=20", &l, &e), 0);
    CU_ASSERT_EQUAL_FATAL(setup(&s, "llama3-8b", "gb200", 8, &l), 0);
    sim_ctx_t *ctx = sim_ctx_create();
    CU_ASSERT_PTR_NOT_NULL_FATAL(ctx);
    sim_result_t r;
    CU_ASSERT_EQUAL_FATAL(sim_run_step(ctx, &s.in, &r, &e), 0);
    CHECK_REL(r.costs.offload.act_share, 20.0 / 32, 1e-12);
    CU_ASSERT_EQUAL(r.breakdown_s[BD_OFFLOAD], 0);
    CU_ASSERT_TRUE(r.offload_transfer_s > 0);
    s.cluster.gpu.host_link_gbs = 1; /* a link far too slow */
    CU_ASSERT_EQUAL_FATAL(sim_run_step(ctx, &s.in, &r, &e), 0);
    CU_ASSERT_TRUE(r.breakdown_s[BD_OFFLOAD] > 0);
    prof_free(&s.profile);
    sim_ctx_destroy(ctx);
}

/* The planner considers offload when asked: Llama 3 70B at 8192 tokens on
 * 8 H100 fits only with the optimizer (and parameters) in host memory. */
static void test_planner(void)
{
    model_t m;
    err_t e;
    CU_ASSERT_EQUAL_FATAL(model_load("llama3-70b", &m, &e), 0);
    cluster_spec_t spec = {.gpu = "h100-sxm", .n_gpus = 8};
    cluster_t c;
    profile_t p;
    CU_ASSERT_EQUAL_FATAL(cluster_resolve(&spec, &c, &e), 0);
    CU_ASSERT_EQUAL_FATAL(prof_load_default(c.gpu.name, &p, &e), 0);
    plan_space_t space;
    plan_space_default(&space);
    space.seq_len = 8192;
    space.global_batch_min = space.global_batch_max = 64;
    space.framework = "deepspeed";
    space.tp.lo = space.tp.hi = 1;
    space.cp.lo = space.cp.hi = 1;
    plan_search_t out;
    CU_ASSERT_EQUAL(plan_search(&m, &c, &p, &space, NULL, &out, &e), 0);
    CU_ASSERT_FALSE(out.found);
    space.allow_offload = true;
    CU_ASSERT_EQUAL(plan_search(&m, &c, &p, &space, NULL, &out, &e), 0);
    CU_ASSERT_TRUE(out.found);
    CU_ASSERT_TRUE(out.layout.offload & LAYOUT_OFFLOAD_OPTIMIZER);
    CU_ASSERT_TRUE(out.result.fits);
    prof_free(&p);
}

/* Offloading the optimizer or parameters implies full recompute when the
 * layout names none; activation offload alone, or a named mode, stays. */
static void test_default_recompute(void)
{
    layout_t l;
    layout_defaults(&l);
    l.offload = LAYOUT_OFFLOAD_OPTIMIZER;
    notes_t n;
    notes_init(&n);
    CU_ASSERT_TRUE(offload_default_recompute(&l, &n));
    CU_ASSERT_EQUAL(l.recompute, RECOMPUTE_FULL);
    CU_ASSERT_EQUAL(n.n, 1);
    layout_defaults(&l);
    l.offload = LAYOUT_OFFLOAD_PARAMS;
    l.recompute = RECOMPUTE_SELECTIVE;
    CU_ASSERT_FALSE(offload_default_recompute(&l, &n));
    CU_ASSERT_EQUAL(l.recompute, RECOMPUTE_SELECTIVE);
    layout_defaults(&l);
    l.offload = LAYOUT_OFFLOAD_ACTIVATIONS;
    CU_ASSERT_FALSE(offload_default_recompute(&l, NULL));
    CU_ASSERT_EQUAL(l.recompute, RECOMPUTE_NONE);
    notes_free(&n);
}

TEST_SUITE(suite_offload, "offload", TEST(test_parse_and_errors), TEST(test_memory),
           TEST(test_acceptance_case), TEST(test_transfers_and_link),
           TEST(test_activation_offload), TEST(test_planner), TEST(test_default_recompute));
