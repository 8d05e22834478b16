/* Tests of sim/engine (the event engine) and sim/schedule (pipeline
 * orders), on their own. */
#include <stdlib.h>
#include <string.h>

#include "sim/engine.h"
#include "sim/schedule.h"
#include "tests/testing.h"

static void test_stream_order(void)
{
    sim_engine_t *e = eng_create();
    CU_ASSERT_PTR_NOT_NULL_FATAL(e);
    CU_ASSERT_EQUAL(eng_reset(e, 2), 0);
    /* stream 0: a(1) b(2); stream 1: c(3) waits for a; d(1) */
    int a = eng_task(e, 0, 1.0, 0, 0), b = eng_task(e, 0, 2.0, 0, 0);
    int c = eng_task(e, 1, 3.0, 1, 0), d = eng_task(e, 1, 1.0, 1, 0);
    CU_ASSERT_EQUAL(eng_dep(e, c, a), 0);
    err_t err;
    CU_ASSERT_EQUAL_FATAL(eng_run(e, &err), 0);
    CHECK_REL(eng_start(e, a), 0, 1e-12);
    CHECK_REL(eng_start(e, b), 1, 1e-12);
    CHECK_REL(eng_end(e, b), 3, 1e-12);
    CHECK_REL(eng_start(e, c), 1, 1e-12); /* after a, not after b */
    CHECK_REL(eng_start(e, d), 4, 1e-12); /* in order behind c */
    CHECK_REL(eng_makespan(e), 5, 1e-12);
    CU_ASSERT_EQUAL(eng_events(e), 4);
    CU_ASSERT_EQUAL(eng_stream_prev(e, d), c);
    const int *deps;
    CU_ASSERT_EQUAL(eng_deps(e, c, &deps), 1);
    CU_ASSERT_EQUAL(deps[0], a);
    eng_destroy(e);
}

/* A dependency on a later task of the same stream can never be met. */
static void test_deadlock_detected(void)
{
    sim_engine_t *e = eng_create();
    eng_reset(e, 1);
    int a = eng_task(e, 0, 1.0, 0, 0), b = eng_task(e, 0, 1.0, 0, 0);
    CU_ASSERT_EQUAL(eng_dep(e, a, b), 0);
    err_t err;
    int rc = eng_run(e, &err);
    CHECK_ERR(rc, &err, ERR_RUNTIME, "deadlocked", "task 0");
    /* and bad ids or streams are refused */
    CU_ASSERT_EQUAL(eng_task(e, 5, 1.0, 0, 0), -1);
    CU_ASSERT_EQUAL(eng_task(e, 0, -1.0, 0, 0), -1);
    CU_ASSERT_EQUAL(eng_dep(e, a, 99), -1);
    eng_destroy(e);
}

/* Same input, same schedule; reuse after reset gives the same answer. */
static void test_deterministic_and_reusable(void)
{
    sim_engine_t *e = eng_create();
    double first[64];
    for (int round = 0; round < 2; round++) {
        eng_reset(e, 4);
        for (int i = 0; i < 64; i++) {
            int t = eng_task(e, i % 4, 1.0 + (i % 3), i % 2, (uint32_t)i);
            if (i >= 4)
                eng_dep(e, t, i - 3);
        }
        err_t err;
        CU_ASSERT_EQUAL_FATAL(eng_run(e, &err), 0);
        for (int i = 0; i < 64; i++) {
            if (round == 0)
                first[i] = eng_start(e, i);
            else
                CU_ASSERT_EQUAL(first[i], eng_start(e, i));
        }
        CU_ASSERT_EQUAL(eng_tag(e, 17), 17u);
    }
    eng_reset(e, 1);
    err_t err;
    CU_ASSERT_EQUAL(eng_run(e, &err), 0); /* empty is fine */
    CU_ASSERT_EQUAL(eng_makespan(e), 0);
    eng_destroy(e);
}

/* A large random DAG: every task starts exactly when its stream
 * predecessor and all its dependencies have ended (the engine's promise). */
static void test_start_is_latest_predecessor(void)
{
    sim_engine_t *e = eng_create();
    eng_reset(e, 8);
    srand(7);
    int n = 5000;
    for (int i = 0; i < n; i++) {
        int t = eng_task(e, rand() % 8, (rand() % 100) / 10.0, 0, 0);
        for (int k = 0; k < 2 && i > 0; k++)
            eng_dep(e, t, rand() % i);
    }
    err_t err;
    CU_ASSERT_EQUAL_FATAL(eng_run(e, &err), 0);
    int bad = 0;
    for (int t = 0; t < n; t++) {
        double ready = 0;
        int prev = eng_stream_prev(e, t);
        if (prev >= 0 && eng_end(e, prev) > ready)
            ready = eng_end(e, prev);
        const int *deps;
        int nd = eng_deps(e, t, &deps);
        for (int k = 0; k < nd; k++)
            if (eng_end(e, deps[k]) > ready)
                ready = eng_end(e, deps[k]);
        if (eng_start(e, t) != ready || eng_end(e, t) != ready + eng_duration(e, t))
            bad++;
    }
    CU_ASSERT_EQUAL(bad, 0);
    eng_destroy(e);
}

/* Reserved room is a hint: a run with more tasks and dependencies than
 * reserved still works; the stream's last task is the one that ends last;
 * tasks behind a cycle never run and the others do (3 of 5 here). */
static void test_reserve_last_and_partial_deadlock(void)
{
    sim_engine_t *e = eng_create();
    CU_ASSERT_EQUAL(eng_reset(e, 2), 0);
    CU_ASSERT_EQUAL(eng_reserve(e, 2, 1), 0);
    CU_ASSERT_EQUAL(eng_reserve(e, -1, 0), ERR_RUNTIME);
    int a = eng_task(e, 0, 1.0, 0, 0), b = eng_task(e, 0, 2.0, 0, 0);
    int c = eng_task(e, 1, 0.5, 0, 0);
    CU_ASSERT_EQUAL(eng_dep(e, c, b), 0);
    CU_ASSERT_EQUAL(eng_dep(e, c, a), 0);
    CU_ASSERT_EQUAL(eng_stream_last(e, 0), b);
    CU_ASSERT_EQUAL(eng_stream_last(e, 1), c);
    err_t err;
    CU_ASSERT_EQUAL_FATAL(eng_run(e, &err), 0);
    CHECK_REL(eng_start(e, c), 3, 1e-12); /* after b (ends at 3), not a (1) */
    const int *deps;
    CU_ASSERT_EQUAL(eng_deps(e, c, &deps), 2);
    CU_ASSERT(deps[0] == b && deps[1] == a); /* in the order added */
    /* d and f wait for each other; g (after f on stream 1) waits too */
    int d = eng_task(e, 1, 1.0, 0, 0), f = eng_task(e, 0, 1.0, 0, 0);
    CU_ASSERT_EQUAL(eng_dep(e, d, f), 0);
    CU_ASSERT_EQUAL(eng_dep(e, f, d), 0);
    int rc = eng_run(e, &err);
    CHECK_ERR(rc, &err, ERR_RUNTIME, "deadlocked", "task 3", "3 of 5 tasks ran");
    CU_ASSERT_EQUAL(eng_events(e), 3);
    CU_ASSERT_EQUAL(eng_start(e, d), 0);
    CU_ASSERT_EQUAL(eng_end(e, f), 0);
    CU_ASSERT_EQUAL(eng_stream_last(e, 0), f);
    eng_destroy(e);
}

/* Every schedule runs each (micro-batch, chunk) forward once and backward
 * once, the forward first. */
static void test_schedules_complete(void)
{
    static const struct {
        schedule_t s;
        int p, m, v;
    } cases[] = {{SCHEDULE_GPIPE, 4, 8, 1},       {SCHEDULE_1F1B, 4, 8, 1},
                 {SCHEDULE_1F1B, 8, 3, 1},        {SCHEDULE_INTERLEAVED, 4, 8, 2},
                 {SCHEDULE_INTERLEAVED, 4, 4, 3}, {SCHEDULE_INTERLEAVED, 8, 64, 3}};
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        const sched_def_t *d = sched_get(cases[c].s);
        int p = cases[c].p, m = cases[c].m, v = cases[c].v, n = 2 * m * v;
        pp_op_t *ops = malloc((size_t)n * sizeof *ops);
        char *seen = calloc((size_t)n, 1);
        for (int s = 0; s < p; s++) {
            CU_ASSERT_EQUAL_FATAL(d->order(p, s, m, v, ops), n);
            memset(seen, 0, (size_t)n);
            int ok = 1;
            for (int i = 0; i < n; i++) {
                int key = (ops[i].mb * v + ops[i].chunk) * 2 + (ops[i].forward ? 0 : 1);
                if (ops[i].mb < 0 || ops[i].mb >= m || ops[i].chunk < 0 || ops[i].chunk >= v ||
                    seen[key])
                    ok = 0;
                else
                    seen[key] = 1;
                if (!ops[i].forward && !seen[key - 1])
                    ok = 0; /* backward before its forward */
            }
            CU_ASSERT_TRUE(ok);
        }
        free(ops);
        free(seen);
    }
    /* 1F1B warm-up: stage s runs p - s - 1 forwards before its first backward */
    pp_op_t ops[16];
    sched_get(SCHEDULE_1F1B)->order(4, 1, 8, 1, ops);
    CU_ASSERT_TRUE(ops[0].forward && ops[1].forward && ops[2].forward && !ops[3].forward);
    /* the interleaved schedule needs m to be a multiple of p */
    pp_op_t big[64];
    CU_ASSERT_EQUAL(sched_get(SCHEDULE_INTERLEAVED)->order(4, 0, 6, 2, big), -1);
}

/* The interleaved order steps its micro-steps without dividing: the same
 * ops as Megatron-LM's formula (micro-step k: chunk (k mod pv) / p,
 * reversed for backward; micro-batch (k / pv) p + k mod p) in the order
 * warm-up forwards, forward/backward pairs, cool-down backwards. */
static void test_interleaved_matches_formula(void)
{
    pp_op_t ops[2 * 32 * 5];
    int bad = 0, checked = 0;
    for (int p = 1; p <= 8; p++)
        for (int v = 1; v <= 5; v++)
            for (int m = p; m <= 4 * p && 2 * m * v <= (int)(sizeof ops / sizeof *ops); m += p)
                for (int s = 0; s < p; s++) {
                    int n = sched_get(SCHEDULE_INTERLEAVED)->order(p, s, m, v, ops);
                    CU_ASSERT_EQUAL_FATAL(n, 2 * m * v);
                    int total = m * v;
                    int warm = m == p ? total : (p - s - 1) * 2 + (v - 1) * p;
                    if (warm > total)
                        warm = total;
                    int f = 0, b = 0;
                    for (int i = 0; i < n; i++) {
                        /* forwards: the warm-up, then every other op */
                        bool fwd = i < warm || (i < warm + 2 * (total - warm) && (i - warm) % 2 == 0);
                        int k = fwd ? f++ : b++;
                        int chunk = (k % (p * v)) / p;
                        if (!fwd)
                            chunk = v - 1 - chunk;
                        int mb = (k / (p * v)) * p + k % p;
                        bad += ops[i].forward != fwd || ops[i].chunk != chunk || ops[i].mb != mb;
                        checked++;
                    }
                }
    CU_ASSERT_EQUAL(bad, 0);
    CU_ASSERT(checked > 10000);
}

TEST_SUITE(suite_engine, "engine", TEST(test_stream_order), TEST(test_deadlock_detected),
           TEST(test_deterministic_and_reusable), TEST(test_start_is_latest_predecessor),
           TEST(test_reserve_last_and_partial_deadlock), TEST(test_interleaved_matches_formula),
           TEST(test_schedules_complete));
