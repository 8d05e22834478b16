/* The test runner: registers every suite from one table, runs them with
 * CUnit's basic interface, and exits non-zero on any failure.
 *
 *     run_tests            every suite
 *     run_tests NAME...    only the suites whose names contain NAME
 *     SCALEPLAN_TEST=T run_tests   only the test called T
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <CUnit/Basic.h>

#include "tests/testing.h"

extern const test_suite_t suite_common, suite_units, suite_json, suite_table,
    suite_models, suite_memory, suite_layout, suite_topologies, suite_placement,
    suite_profile, suite_engine, suite_step, suite_validation, suite_reliability,
    suite_budget, suite_plan, suite_report, suite_cpu_ops, suite_cli, suite_cli_inputs, suite_layers,
    suite_scenario, suite_mechanisms, suite_mechanisms_step, suite_mechanisms_memory, suite_megatron_args, suite_trainlog, suite_trainlog_more, suite_real_logs, suite_doubling, suite_validate_log,
    suite_failval, suite_outputs, suite_launch, suite_moe_plan, suite_hfconfig, suite_hfstructure, suite_offload,
    suite_deepspeed, suite_torchtitan, suite_cluster_sim, suite_real_launch, suite_finetune,
    suite_accelerate, suite_real_jobs, suite_pyregistry, suite_inference_sizing, suite_power,
    suite_elastic, suite_codecs, suite_islands, suite_cluster_traces, suite_moe_dispatch,
    suite_moe_layers, suite_hybrid, suite_cluster_policy, suite_numfmt, suite_glossary,
    suite_cluster_papers, suite_dpladder, suite_option_rows, suite_moe_memory, suite_hfnas, suite_gemma4, suite_hf2026;
/* the reference trainer */
extern const test_suite_t suite_gpt, suite_tokens, suite_checkpoint, suite_monitor, suite_train,
    suite_buckets;
/* the calibrator */
extern const test_suite_t suite_fit, suite_calibrate, suite_real_nccltests;
/* the real-file corpus, all kinds */
extern const test_suite_t suite_real_corpus;

extern const test_suite_t suite_plugin;

static const test_suite_t *const suites[] = {
    &suite_common,     &suite_units,     &suite_json,    &suite_table,
    &suite_models,     &suite_memory,    &suite_layout,  &suite_topologies,
    &suite_placement,  &suite_profile,   &suite_engine,  &suite_step,
    &suite_validation, &suite_reliability, &suite_budget, &suite_plan,
    &suite_report,     &suite_cpu_ops,   &suite_cli,       &suite_cli_inputs, &suite_layers,
    &suite_scenario,   &suite_mechanisms, &suite_mechanisms_step, &suite_mechanisms_memory, &suite_launch, &suite_moe_plan, &suite_megatron_args, &suite_trainlog, &suite_trainlog_more, &suite_real_logs, &suite_doubling, &suite_validate_log,
    &suite_failval, &suite_outputs,
    &suite_hfconfig, &suite_hfstructure, &suite_hfnas, &suite_gemma4, &suite_hf2026, &suite_offload, &suite_deepspeed, &suite_torchtitan, &suite_cluster_sim, &suite_real_launch,
    &suite_finetune,
    &suite_accelerate, &suite_real_jobs, &suite_pyregistry, &suite_inference_sizing,
    &suite_power, &suite_elastic, &suite_codecs, &suite_islands, &suite_cluster_traces,
    &suite_moe_dispatch, &suite_moe_layers, &suite_hybrid, &suite_cluster_policy,
    &suite_numfmt, &suite_glossary, &suite_cluster_papers, &suite_dpladder, &suite_option_rows, &suite_moe_memory,
    &suite_gpt,        &suite_tokens,    &suite_checkpoint, &suite_monitor,
    &suite_train,      &suite_buckets,
    &suite_fit,        &suite_calibrate, &suite_real_nccltests,
    &suite_real_corpus,
    &suite_plugin,
};

static int wanted(const char *name, int argc, char **argv)
{
    if (argc < 2)
        return 1;
    for (int i = 1; i < argc; i++)
        if (strstr(name, argv[i]))
            return 1;
    return 0;
}

/* SCALEPLAN_TEST=NAME runs only the test called NAME (make
 * check-mechanisms runs one test per option row this way). */
static bool case_wanted(const char *name, const char *only)
{
    return !only || !*only || strcmp(name, only) == 0;
}

static bool has_case(const test_suite_t *s, const char *only)
{
    for (size_t c = 0; c < s->n_cases; c++)
        if (case_wanted(s->cases[c].name, only))
            return true;
    return false;
}

int main(int argc, char **argv)
{
    const char *only = getenv("SCALEPLAN_TEST");
    if (CU_initialize_registry() != CUE_SUCCESS) {
        fprintf(stderr, "run_tests: cannot initialise CUnit: %s\n", CU_get_error_msg());
        return 1;
    }
    for (size_t s = 0; s < sizeof suites / sizeof suites[0]; s++) {
        if (!wanted(suites[s]->name, argc, argv) || !has_case(suites[s], only))
            continue;
        CU_pSuite suite = CU_add_suite(suites[s]->name, NULL, NULL);
        if (!suite)
            goto fail;
        for (size_t c = 0; c < suites[s]->n_cases; c++)
            if (case_wanted(suites[s]->cases[c].name, only) &&
                !CU_add_test(suite, suites[s]->cases[c].name, suites[s]->cases[c].fn))
                goto fail;
    }
    CU_basic_set_mode(CU_BRM_NORMAL);
    CU_basic_run_tests();
    unsigned failed = CU_get_number_of_failures() + CU_get_number_of_tests_failed();
    unsigned run = CU_get_number_of_tests_run();
    CU_cleanup_registry();
    if (run == 0) {
        fprintf(stderr, "run_tests: no test matched\n");
        return 1;
    }
    return failed ? 1 : 0;
fail:
    fprintf(stderr, "run_tests: cannot register tests: %s\n", CU_get_error_msg());
    CU_cleanup_registry();
    return 1;
}
