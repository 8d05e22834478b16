/* Tests of inputs/trainlog: every framework's fixture log read back exactly
 * (records, the configuration it prints, warm-up, steady state), and bad
 * logs refused with one line naming the file and the line.
 *
 * The expected steady states are the fixtures' own numbers, summed by hand
 * (tests/fixtures/logs/README.md): e.g. megatron_lm.log's iterations 3-20
 * print elapsed times whose mean is 2177.0056 ms. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "inputs/trainlog.h"
#include "inputs/trainlogInt.h"
#include "tests/testing.h"

static int read_log(const char *name, trainlog_t *t)
{
    err_t e;
    int rc = trainlog_read(fixture(name), NULL, t, &e);
    if (rc)
        fprintf(stderr, "%s: %s\n", name, e.msg);
    return rc;
}

static int parse(const char *text, const char *format, trainlog_t *t, err_t *e)
{
    return trainlog_parse(text, strlen(text), "t.log", format, t, e);
}

/* The setting's value and line, checked. */
static void check_setting(const trainlog_t *t, const char *name, const char *value, int line)
{
    const tlog_setting_t *s = NULL;
    for (int i = 0; i < t->n_settings; i++)
        if (strcmp(t->settings[i].name, name) == 0)
            s = &t->settings[i];
    CU_ASSERT_PTR_NOT_NULL_FATAL(s);
    CU_ASSERT_STRING_EQUAL(s->value, value);
    if (line > 0)
        CU_ASSERT_EQUAL(s->line, line);
}

/* Megatron-LM core_v0.8 (published row T049): iterations 1 and 2 are
 * warm-up (9843.2 ms, then 2244.5 ms = +3.1%), iterations 3-20 average
 * 2177.0056 ms with a standard deviation of 4.797 ms (hand sum of the 18
 * printed values) and 419.7 TFLOP/s per GPU. */
static void test_megatron_lm(void)
{
    trainlog_t t;
    CU_ASSERT_EQUAL_FATAL(read_log("logs/megatron_lm.log", &t), 0);
    CU_ASSERT_STRING_EQUAL(t.format, "megatron");
    CU_ASSERT_STRING_EQUAL(t.framework, "Megatron-LM");
    CU_ASSERT_EQUAL(t.n_records, 20);
    CU_ASSERT_EQUAL(t.records[0].step, 1);
    CU_ASSERT_EQUAL(t.records[0].line, 387);
    CHECK_REL(t.records[0].step_time_s, 9.8432, 1e-12);
    CHECK_REL(t.records[0].tflops_per_gpu, 92.8, 1e-12);
    CHECK_REL(t.records[0].loss, 11.86816, 1e-12);
    CU_ASSERT_EQUAL(t.warmup, 2);
    CU_ASSERT_EQUAL(t.records[t.first_steady].step, 3);
    CU_ASSERT_EQUAL(t.step_time_s.n, 18);
    CHECK_REL(t.step_time_s.mean, 2.1770055555555556, 1e-12);
    CHECK_REL(t.step_time_s.sd, 0.004797238448527062, 1e-9);
    CHECK_REL(t.step_time_s.min, 2.1705, 1e-12);
    CHECK_REL(t.step_time_s.max, 2.1846, 1e-12);
    CHECK_REL(t.tflops_per_gpu.mean, 419.7, 1e-12);
    CU_ASSERT_EQUAL(t.n_gpus, 768);
    CHECK_REL(t.samples_per_step, 384, 0);
    /* 43914.5009765625 MB max reserved on the stage-0 ranks, first at line 394 */
    CHECK_REL(t.memory_gib, 43914.5009765625 / 1024, 1e-12);
    CU_ASSERT_STRING_EQUAL(t.memory_kind, "max reserved");
    CU_ASSERT_EQUAL(t.memory_line, 394);
    CHECK_REL(t.params, 69.80e9, 1e-12);
    check_setting(&t, "--gpus", "768", 1);
    check_setting(&t, "--tp", "8", 1);
    check_setting(&t, "--pp", "2", 1);
    check_setting(&t, "--cp", "1", 1);
    check_setting(&t, "--global-batch", "384", 387);
    /* the argument block verbatim (330 lines) and the padded-vocab line */
    CU_ASSERT_EQUAL(t.n_args, 332);
    CU_ASSERT_STRING_EQUAL(t.args[0].name, "accumulate_allreduce_grads_in_fp32");
    CU_ASSERT_STRING_EQUAL(t.args[0].value, "True");
    CU_ASSERT_EQUAL(t.args[0].line, 6);
    bool seen = false;
    for (int i = 0; i < t.n_args; i++)
        if (strcmp(t.args[i].name, "tensor_model_parallel_size") == 0) {
            CU_ASSERT_STRING_EQUAL(t.args[i].value, "8");
            seen = true;
        }
    CU_ASSERT_TRUE(seen);
    CU_ASSERT_STRING_EQUAL(t.args[t.n_args - 1].name, "padded_vocab_size");
    CU_ASSERT_STRING_EQUAL(t.args[t.n_args - 1].value, "131072");
    trainlog_free(&t);
}

/* Megatron-Bridge 25.11 (T134): the same iteration line, memory in GB
 * (10^9 bytes); iterations 3-20 average 10.2272222 s; the largest
 * mem-max-reserved-gigabytes is 71.864 GB = 66.9286 GiB. */
static void test_megatron_bridge(void)
{
    trainlog_t t;
    CU_ASSERT_EQUAL_FATAL(read_log("logs/megatron_bridge.log", &t), 0);
    CU_ASSERT_STRING_EQUAL(t.format, "megatron");
    CU_ASSERT_STRING_EQUAL(t.framework, "Megatron-Bridge");
    CU_ASSERT_EQUAL(t.n_records, 20);
    CU_ASSERT_EQUAL(t.warmup, 2);
    CU_ASSERT_EQUAL(t.step_time_s.n, 18);
    CHECK_REL(t.step_time_s.mean, 10.227222222222224, 1e-12);
    CHECK_REL(t.tflops_per_gpu.mean, 719.0, 1e-12);
    CHECK_REL(t.memory_gib, 71.864e9 / 1073741824.0, 1e-12);
    CU_ASSERT_EQUAL(t.n_gpus, 0); /* Bridge prints no world size */
    CU_ASSERT_EQUAL(t.n_args, 0);
    check_setting(&t, "--global-batch", "128", 5);
    check_setting(&t, "--framework", "megatron-bridge", 0);
    trainlog_free(&t);
}

/* NeMo 2.2 (T117): iterations 0 (52.73 s) and 1 (9.847 s) are warm-up;
 * 2-19 average 9.4596667 s and 932.0111 TFLOP/s per GPU; the per-rank
 * parameter lines go up to rank (3 ,7): TP 4, PP 8. */
static void test_nemo(void)
{
    trainlog_t t;
    CU_ASSERT_EQUAL_FATAL(read_log("logs/nemo.log", &t), 0);
    CU_ASSERT_STRING_EQUAL(t.format, "nemo");
    CU_ASSERT_EQUAL(t.n_records, 20);
    CU_ASSERT_EQUAL(t.records[0].step, 0);
    CU_ASSERT_EQUAL(t.records[0].line, 39);
    CHECK_REL(t.records[0].step_time_s, 52.73, 1e-12);
    CU_ASSERT_EQUAL(t.warmup, 2);
    CU_ASSERT_EQUAL(t.step_time_s.n, 18);
    CHECK_REL(t.step_time_s.mean, 9.459666666666665, 1e-12);
    CHECK_REL(t.tflops_per_gpu.mean, 932.0111111111112, 1e-12);
    check_setting(&t, "--tp", "4", 6);
    check_setting(&t, "--pp", "8", 6);
    check_setting(&t, "--global-batch", "2048", 39);
    trainlog_free(&t);
}

/* torchtitan (T059), colours and "[rank0]:" stripped: step 1 is warm-up;
 * records 10..100 cover 9 then 10 steps each; each gives 16 x 8192 tokens
 * / (tps x 8 GPUs) seconds, and their covered-step-weighted mean is
 * 2.8440012 s (333.638 TFLOP/s and 33.73% MFU by torchtitan's own
 * count, weighted the same way); memory 82.40 GiB reserved at its peak (first at step 10). */
static void test_torchtitan(void)
{
    trainlog_t t;
    CU_ASSERT_EQUAL_FATAL(read_log("logs/torchtitan.log", &t), 0);
    CU_ASSERT_STRING_EQUAL(t.format, "torchtitan");
    CU_ASSERT_EQUAL(t.n_records, 11);
    CU_ASSERT_EQUAL(t.records[1].step, 10);
    CU_ASSERT_EQUAL(t.records[1].covers, 9);
    CHECK_REL(t.records[1].tokens_per_s_per_gpu, 5747, 0);
    CHECK_REL(t.records[1].tflops_per_gpu, 332.81, 1e-12);
    CHECK_REL(t.records[1].mfu, 0.3365, 1e-12);
    CU_ASSERT_EQUAL(t.warmup, 1);
    CU_ASSERT_EQUAL(t.step_time_s.n, 10);
    CHECK_REL(t.step_time_s.mean, 2.844001177336511, 1e-12);
    /* the framework's own figures, weighted by the steps each record covers */
    CHECK_REL(t.tflops_per_gpu.mean, 333.63828282828285, 1e-12);
    CHECK_REL(t.mfu.mean, 0.3373383838383839, 1e-12);
    CHECK_REL(t.memory_gib, 82.40, 1e-12);
    CU_ASSERT_EQUAL(t.memory_line, 43);
    CU_ASSERT_EQUAL(t.n_gpus, 8);
    CHECK_REL(t.gpu_memory_gib, 94.62, 1e-12);
    CHECK_REL(t.tokens_per_step, 16 * 8192, 0);
    check_setting(&t, "--gpus", "8", 3);
    check_setting(&t, "--zero", "3", 3);
    check_setting(&t, "--framework", "torchtitan", 3);
    check_setting(&t, "--gpu", "H100", 32);
    check_setting(&t, "--model", "llama3-8b", 33);
    check_setting(&t, "--recompute", "ops", 34);
    check_setting(&t, "--micro-batch", "2", 39);
    check_setting(&t, "--global-batch", "16", 39);
    check_setting(&t, "--seq-len", "8192", 39);
    trainlog_free(&t);
}

/* DeepSpeed 0.16 (T011): steps 1 and 2 overflowed (skipped, no throughput
 * line); steps 3-10 take 1536 / CurrSamplesPerSec, mean 81.5837218 s; the
 * wall-clock breakdown of those steps averages fwd 19.417 s, bwd_inner
 * 50.174 s, bwd_allreduce 7.914 s, step 3.671 s. */
static void test_deepspeed(void)
{
    trainlog_t t;
    CU_ASSERT_EQUAL_FATAL(read_log("logs/deepspeed.log", &t), 0);
    CU_ASSERT_STRING_EQUAL(t.format, "deepspeed");
    CU_ASSERT_EQUAL(t.n_records, 10);
    CU_ASSERT_TRUE(t.records[0].skipped && t.records[1].skipped && !t.records[2].skipped);
    CU_ASSERT_EQUAL(t.warmup, 2);
    CU_ASSERT_EQUAL(t.step_time_s.n, 8);
    CHECK_REL(t.step_time_s.mean, 81.58372184190019, 1e-12);
    CHECK_REL(t.part_s[TLOG_PART_FORWARD], 19.41692625, 1e-12);
    CHECK_REL(t.part_s[TLOG_PART_BACKWARD], 50.17398875, 1e-12);
    CHECK_REL(t.part_s[TLOG_PART_GRAD_REDUCE], 7.91362125, 1e-12);
    CHECK_REL(t.part_s[TLOG_PART_OPTIMIZER], 3.67126875, 1e-12);
    CHECK_REL(t.memory_gib, 62.41, 1e-12);
    CU_ASSERT_STRING_EQUAL(t.memory_kind, "max allocated");
    CU_ASSERT_EQUAL(t.n_gpus, 384);
    check_setting(&t, "--global-batch", "1536", 50);
    check_setting(&t, "--micro-batch", "4", 51);
    check_setting(&t, "--zero", "3", 55);
    check_setting(&t, "--precision", "fp16", 46);
    check_setting(&t, "--framework", "deepspeed", 0);
    trainlog_free(&t);
}

/* HF Trainer: the tqdm bar at 5, 10, ..., 60 steps; the first interval
 * (0:00 to 0:34 over 5 steps, first step included) is warm-up, the rest
 * average (4:19 - 0:34) / 55 steps = 4.0909 s; the preamble's batch 4 per
 * device x 4 accumulation into 128 gives 8 GPUs. */
static void test_hf(void)
{
    trainlog_t t;
    CU_ASSERT_EQUAL_FATAL(read_log("logs/hf_trainer.log", &t), 0);
    CU_ASSERT_STRING_EQUAL(t.format, "hf");
    CU_ASSERT_EQUAL(t.n_records, 12);
    CHECK_REL(t.records[0].step_time_s, 34.0 / 5, 1e-12);
    CHECK_REL(t.records[0].loss, 1.5663, 1e-12);
    CU_ASSERT_EQUAL(t.warmup, 1);
    CU_ASSERT_EQUAL(t.step_time_s.n, 11);
    CHECK_REL(t.step_time_s.mean, 225.0 / 55, 1e-12);
    CHECK_REL(t.final_samples_per_s, 29.132, 1e-12);
    CU_ASSERT_EQUAL(t.n_gpus, 8);
    check_setting(&t, "--micro-batch", "4", 4);
    check_setting(&t, "--global-batch", "128", 4);
    check_setting(&t, "--gpus", "8", 4);
    CU_ASSERT_PTR_NOT_NULL(strstr(t.caveat, "whole seconds"));
    trainlog_free(&t);
}

/* The plain forms: step 1 (12.5 s) and step 2 (4.31 s, 7.75% over the
 * later half's median 4.00 s) are warm-up; steps 3-6 average 4.01 s with
 * 1,048,576 tokens each. */
static void test_plain(void)
{
    static const char *const files[] = {"logs/plain.csv", "logs/plain.jsonl"};
    static const char *const formats[] = {"csv", "json"};
    for (int k = 0; k < 2; k++) {
        trainlog_t t;
        CU_ASSERT_EQUAL_FATAL(read_log(files[k], &t), 0);
        CU_ASSERT_STRING_EQUAL(t.format, formats[k]);
        CU_ASSERT_EQUAL(t.n_records, 6);
        CU_ASSERT_EQUAL(t.warmup, 2);
        CHECK_REL(t.step_time_s.mean, (4.02 + 4.00 + 4.03 + 3.99) / 4, 1e-12);
        CHECK_REL(t.tokens_per_step, 1048576, 1e-9);
        CHECK_REL(t.memory_gib, 62.0, 1e-12);
        trainlog_free(&t);
    }
    /* the array form of JSON reads the same */
    trainlog_t t;
    err_t e;
    CU_ASSERT_EQUAL_FATAL(parse("[{\"step\": 1, \"seconds\": 2.0},\n {\"step\": 2, \"seconds\": 2.0}]",
                                NULL, &t, &e),
                          0);
    CU_ASSERT_EQUAL(t.n_records, 2);
    CHECK_REL(t.step_time_s.mean, 2.0, 0);
    trainlog_free(&t);
    /* carriage returns split lines without counting them (the fuzzer found
     * the array's copy one byte per line too short) */
    CU_ASSERT_EQUAL_FATAL(parse("[\r{\"seconds\": 2.0}\r,\r\n{\"seconds\": 3.0}\r]\r", NULL, &t, &e), 0);
    CU_ASSERT_EQUAL(t.n_records, 2);
    trainlog_free(&t);
}

/* Throughput-only logs wait for the GPU count and the batch: settling
 * without them is an error naming the flags, with them the step time. */
static void test_settle_needs_batch(void)
{
    const char *text = "step: 1  loss: 9.0  memory: 10.00GiB(10.00%)  tps: 1,000  mfu: 10.00%\n"
                       "step: 2  loss: 9.0  memory: 10.00GiB(10.00%)  tps: 1,000  mfu: 10.00%\n";
    trainlog_t t;
    err_t e;
    CU_ASSERT_EQUAL_FATAL(parse(text, NULL, &t, &e), 0);
    CU_ASSERT_EQUAL(t.step_time_s.n, 0);
    int rc = trainlog_settle(&t, NULL, &e);
    CHECK_ERR(rc, &e, ERR_INPUT, "t.log", "--gpus");
    /* 8 GPUs x 1,000 tokens/s each, 16,000 tokens per step: 2 s */
    tlog_known_t k = {8, 4, 16000};
    CU_ASSERT_EQUAL(trainlog_settle(&t, &k, &e), 0);
    CHECK_REL(t.step_time_s.mean, 2.0, 1e-12);
    trainlog_free(&t);
}

/* One line naming the file and the line for a bad number, a cut line, a
 * table with a wrong cell count, and for text that is no log at all. */
static void test_bad_logs(void)
{
    static const struct {
        const char *text, *format, *needle1, *needle2;
    } cases[] = {
        {" iteration        1/      20 | elapsed time per iteration (ms): 2l77.0 | lm loss: 1.0E+01 |\n",
         NULL, "line 1", "not a number"},
        {"x\n iteration        1/      20 | elapsed time per iteration (ms): 2177.0 | lm loss: 1.0E+01 |\n"
         " iteration        2/      20 | elapsed time per iteration (ms): 2177.0 | lm lo",
         NULL, "line 3", "cut short"},
        {" iteration        1/      20 | consumed samples: 384 |\n"
         " iteration        2/      20 | elapsed time per iteration (ms): 21",
         NULL, "line 2", "cut short"},
        {"step:  1  loss: 12.1  memory: 79.35GiB(83.86%)  tps: 1,705  tflops: 98.7  mfu: 9.98%\n"
         "step: 10  loss: 11.0  memory: 82.40GiB(87.09%)  tps: 5,7",
         NULL, "line 2", "cut short"},
        {"step:  1  loss: 12.1  memory: 79.35GiB(83.86%)  tps: x  mfu: 9.98%\n", NULL, "line 1",
         "'tps:' is not followed by a number"},
        {"step:  1  loss: 12.1  memory: 79.35GiB(83.86%)  tps: 1,705  mfu: 9.98%\n"
         "step:  2  loss: 12.1  memory: 79.35GiB(83.86%)  tps: 1,7O5  mfu: 9.98%\n",
         NULL, "line 2", "'tps:' is not followed by a number"},
        {"Training epoch 0, iteration 0/9 | train_step_timing in s: 5.0 | TFLOPS_per_GPU: 1.0\n"
         "Training epoch 0, iteration 1/9 | train_step_timing in s: abc\n",
         NULL, "line 2", "not a number"},
        {"[Rank 0] step=1, skipped=0, lr=[0.1]\n"
         "epoch=0/micro_step=1/global_step=1, RunningAvgSamplesPerSec=x, CurrSamplesPerSec=x, "
         "MemAllocated=1GB\n",
         NULL, "line 2", "samples per second"},
        {"{'loss': 1.5, 'grad_norm': 1.0, 'learning_rate': 1e-05, 'epoch': 0.1\n", NULL, "line 1",
         "cut short"},
        {"step,seconds,tokens\n1,2.0,100\n2,2.0\n", NULL, "line 3", "2 cells, the header has 3"},
        {"step,seconds\n1,2.0\n2,fast\n", NULL, "line 3", "not a number"},
        {"{\"step\": 1, \"seconds\": 2.0}\n{\"step\": 2, \"seconds\": \n", NULL, "line 2",
         "not a JSON object"},
        {"step,seconds\n1,-2.0\n", NULL, "line 2", "positive"},
        {"hello\nworld\n", NULL, "t.log", "not a training log"},
        {"", NULL, "t.log", "not a training log"},
        {"step,seconds\n", "csv", "t.log", "no training steps"},
        {"anything\n", "lumberjack", "--log-format", "unknown format"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        trainlog_t t;
        err_t e;
        int rc = parse(cases[i].text, cases[i].format, &t, &e);
        CHECK_ERR(rc, &e, ERR_INPUT, cases[i].needle1, cases[i].needle2);
        if (rc == ERR_INPUT && strchr(e.msg, '\n'))
            CU_FAIL("error message spans lines");
        CU_ASSERT_EQUAL(t.n_records, 0); /* left empty */
        trainlog_free(&t);
    }
}

/* The fixture itself, damaged: a digit turned into a letter on line 412,
 * then the file cut inside its last iteration line (line 428). */
static void test_damaged_fixture(void)
{
    char *text = slurp(fixture("logs/megatron_lm.log"));
    CU_ASSERT_PTR_NOT_NULL_FATAL(text);
    char *bad = strstr(text, "(ms): 2176.9");
    CU_ASSERT_PTR_NOT_NULL_FATAL(bad);
    bad[8] = 'l';
    trainlog_t t;
    err_t e;
    int rc = trainlog_parse(text, strlen(text), "megatron_lm.log", NULL, &t, &e);
    CHECK_ERR(rc, &e, ERR_INPUT, "megatron_lm.log: line 412: elapsed time per iteration (ms):",
              "not a number");
    trainlog_free(&t);
    bad[8] = '1';
    size_t cut = (size_t)(strstr(text, "iteration       20/") - text) + 120;
    rc = trainlog_parse(text, cut, "megatron_lm.log", NULL, &t, &e);
    CHECK_ERR(rc, &e, ERR_INPUT, "megatron_lm.log: line 428:", "cut short");
    trainlog_free(&t);
    free(text);
}

/* Carriage returns break lines without counting them; colour codes and the
 * launcher prefix go; a NUL byte reads as a blank. */
static void test_cleaning(void)
{
    const char text[] = "[rank0]:\x1b[31mstep:  1  \x1b[32mloss: 9.0  memory: 1.00GiB(1.00%)  "
                        "tps: 100  mfu: 1.00%\x1b[39m\r"
                        "step:  2  loss: 9.0  memory: 1.00GiB(1.00%)  tps: 100  mfu: 1.00%\n"
                        "step:  3  loss: 9.0\0 memory: 1.00GiB(1.00%)  tps: 100  mfu: 1.00%\n";
    trainlog_t t;
    err_t e;
    CU_ASSERT_EQUAL_FATAL(trainlog_parse(text, sizeof text - 1, "t.log", NULL, &t, &e), 0);
    CU_ASSERT_EQUAL(t.n_records, 3);
    CU_ASSERT_EQUAL(t.records[0].line, 1);
    CU_ASSERT_EQUAL(t.records[1].line, 1);
    CU_ASSERT_EQUAL(t.records[2].line, 2);
    CHECK_REL(t.records[2].tokens_per_s_per_gpu, 100, 0);
    trainlog_free(&t);
}

/* Numbers as the frameworks print them, and what is not one. */
static void test_numbers(void)
{
    static const struct {
        const char *text;
        bool commas, ok;
        double value;
        size_t used; /* characters read */
    } cases[] = {
        {"1.066689E+01", false, true, 10.66689, 12}, {"5,762", true, true, 5762, 5},
        {"5,762", false, true, 5, 1},                {"1,234.56 |", true, true, 1234.56, 8},
        {" -3.5e-2 |", false, true, -0.035, 8},       {"1e400", false, false, 0, 0},
        {"nan", false, false, 0, 0},                 {"inf", false, false, 0, 0},
        {"0x10", false, true, 0, 1},                 {".", false, false, 0, 0},
        {"-", false, false, 0, 0},                   {"12.", false, true, 12, 3},
        {"7e", false, true, 7, 1},                   {",5", true, false, 0, 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        double v = -1;
        const char *end;
        bool ok = tlog_number(cases[i].text, cases[i].commas, &v, &end);
        CU_ASSERT_EQUAL(ok, cases[i].ok);
        CU_ASSERT_EQUAL((size_t)(end - cases[i].text), ok ? cases[i].used : 0);
        if (ok)
            CHECK_REL(v, cases[i].value, 1e-15);
    }
    /* a hundred digits is no log's figure */
    char big[128];
    memset(big, '9', 100);
    big[100] = '\0';
    double v;
    const char *end;
    CU_ASSERT_FALSE(tlog_number(big, false, &v, &end));
}

/* Detection order and forcing a format. */
static void test_formats(void)
{
    CU_ASSERT_EQUAL(trainlog_format_count(), 12);
    CU_ASSERT_STRING_EQUAL(trainlog_format_name(0), "megatron");
    CU_ASSERT_STRING_EQUAL(trainlog_format_name(5), "composer");
    CU_ASSERT_STRING_EQUAL(trainlog_format_name(6), "nanotron");
    CU_ASSERT_STRING_EQUAL(trainlog_format_name(9), "litgpt");
    CU_ASSERT_PTR_NULL(trainlog_format_name(12));
    /* a Megatron-DeepSpeed log: the iteration lines win */
    const char *text =
        "[Rank 0] DeepSpeed info: version=0.16.4, git-hash=unknown, git-branch=unknown\n"
        " iteration        1/      20 | elapsed time per iteration (ms): 100.0 | lm loss: 1.0E+01 |\n";
    trainlog_t t;
    err_t e;
    CU_ASSERT_EQUAL_FATAL(parse(text, NULL, &t, &e), 0);
    CU_ASSERT_STRING_EQUAL(t.format, "megatron");
    trainlog_free(&t);
    /* forced: DeepSpeed's reader finds no step in it */
    CHECK_ERR(parse(text, "deepspeed", &t, &e), &e, ERR_INPUT, "no training steps");
    trainlog_free(&t);
}

/* Issue 35 row 7: the log's name is kept whole for messages (the old
 * 256-byte field cut a longer path); a log that fails names it whole too. */
static void test_long_log_name(void)
{
    char name[400];
    memset(name, 'l', sizeof name - 5);
    snprintf(name + sizeof name - 5, 5, ".log");
    trainlog_t t;
    err_t e;
    CU_ASSERT_EQUAL_FATAL(parse("step,seconds\n1,2.0\n2,2.0\n3,2.0\n", NULL, &t, &e), 0);
    trainlog_free(&t);
    const char *text = "step,seconds\n1,2.0\n2,2.0\n3,2.0\n";
    CU_ASSERT_EQUAL_FATAL(trainlog_parse(text, strlen(text), name, NULL, &t, &e), 0);
    CU_ASSERT_TRUE(t.file && strcmp(t.file, name) == 0);
    trainlog_free(&t);
    CU_ASSERT_NOT_EQUAL(trainlog_parse("nothing here", 12, name, NULL, &t, &e), 0);
    CU_ASSERT_PTR_NULL(t.file); /* left empty */
    CU_ASSERT_EQUAL(strncmp(e.msg, name, strlen(name)), 0);
}


/* Issue 37 item 2: launcher prefixes of each kind are read as ranks, and
 * the lines every rank prints fold to the lowest rank's. Four ranks print
 * each Megatron iteration line with a different time; rank 0's are 1000 ms
 * (steps 2-6), the others 9000 ms: folding off would average them in. */
static void test_rank_folding(void)
{
    static const char *const prefixes[] = {"[rank%d]:", "[default%d]:", "%d: ",
                                           "[1,%d]<stdout>:"};
    for (size_t k = 0; k < sizeof prefixes / sizeof prefixes[0]; k++) {
        char text[8192] = "";
        size_t n = 0;
        for (int step = 1; step <= 6; step++)
            for (int rank = 3; rank >= 0; rank--) {
                char pre[32];
                snprintf(pre, sizeof pre, prefixes[k], rank);
                n += (size_t)snprintf(text + n, sizeof text - n,
                                      "%s iteration %8d/ 100 | elapsed time per iteration (ms): "
                                      "%.1f | global batch size: 64 |\n",
                                      pre, step, step == 1 ? 5000.0 : rank == 0 ? 1000.0 : 9000.0);
            }
        trainlog_t t;
        err_t e;
        CU_ASSERT_EQUAL_FATAL(parse(text, NULL, &t, &e), 0);
        CU_ASSERT_EQUAL(t.n_records, 6);
        CU_ASSERT_EQUAL(t.folded, 18);
        CU_ASSERT_DOUBLE_EQUAL(t.step_time_s.mean, 1.0, 1e-12);
        CU_ASSERT_EQUAL(t.warmup, 1); /* step 1 at 5 s */
        CU_ASSERT_PTR_NOT_NULL(strstr(t.note, "folded"));
        trainlog_free(&t);
    }
}

/* Unprefixed copies of one step (every rank printing to one stream, as in
 * a torchtitan log pasted from eight ranks) count once: the first. */
static void test_unprefixed_duplicates(void)
{
    const char *text =
        "[titan] - root - INFO - step:  1  loss:  8.0  memory: 66.91GiB(37.51%)  tps: 2,000  tflops: 1  mfu: 1%\n"
        "[titan] - root - INFO - step:  2  loss:  7.6  memory: 66.91GiB(37.51%)  tps: 10,000  tflops: 1  mfu: 1%\n"
        "[titan] - root - INFO - step:  2  loss:  7.6  memory: 66.91GiB(37.51%)  tps: 5,000  tflops: 1  mfu: 1%\n"
        "[titan] - root - INFO - step:  3  loss:  7.1  memory: 66.91GiB(37.51%)  tps: 10,000  tflops: 1  mfu: 1%\n"
        "[titan] - root - INFO - step:  3  loss:  7.1  memory: 66.91GiB(37.51%)  tps: 5,000  tflops: 1  mfu: 1%\n"
        "[titan] - root - INFO - step:  4  loss:  7.0  memory: 66.91GiB(37.51%)  tps: 10,000  tflops: 1  mfu: 1%\n";
    trainlog_t t;
    err_t e;
    CU_ASSERT_EQUAL_FATAL(parse(text, NULL, &t, &e), 0);
    CU_ASSERT_EQUAL(t.n_records, 4);
    CU_ASSERT_EQUAL(t.folded, 2);
    /* 8 GPUs x 10,000 tokens/s/GPU over 80,000 tokens a step: 1 s */
    tlog_known_t k = {8, 10, 80000};
    CU_ASSERT_EQUAL_FATAL(trainlog_settle(&t, &k, &e), 0);
    CU_ASSERT_DOUBLE_EQUAL(t.step_time_s.mean, 1.0, 1e-12);
    CU_ASSERT_EQUAL(t.step_time_s.n, 3);
    CU_ASSERT_PTR_NOT_NULL(strstr(t.step_time_from, "throughput"));
    trainlog_free(&t);
}

/* A log with two runs (the step count restarts after a crash): warm-up is
 * found in each, so the restart's slow first steps are left out too.
 * Run 1: 9, 2, 2, 2, 2 s; run 2: 8, 6, 2, 2, 2, 2 s. Mean of the steady 2 s. */
static void test_runs(void)
{
    const char *text = "step,seconds\n1,9\n2,2\n3,2\n4,2\n5,2\n"
                       "1,8\n2,6\n3,2\n4,2\n5,2\n6,2\n";
    trainlog_t t;
    err_t e;
    CU_ASSERT_EQUAL_FATAL(parse(text, NULL, &t, &e), 0);
    CU_ASSERT_EQUAL(t.runs, 2);
    CU_ASSERT_EQUAL(t.warmup, 3);
    CU_ASSERT_EQUAL(t.step_time_s.n, 8);
    CU_ASSERT_DOUBLE_EQUAL(t.step_time_s.mean, 2.0, 1e-12);
    CU_ASSERT_PTR_NOT_NULL(strstr(t.note, "2 runs"));
    trainlog_free(&t);
}

/* Carriage returns split a redrawn line into records of their own; the
 * file's line number is kept. */
static void test_carriage_returns(void)
{
    const char *text = "step,seconds\n1,5\r2,2\r3,2\n4,2\n";
    trainlog_t t;
    err_t e;
    CU_ASSERT_EQUAL_FATAL(parse(text, NULL, &t, &e), 0);
    CU_ASSERT_EQUAL(t.n_records, 4);
    CU_ASSERT_EQUAL(t.records[2].line, 2);
    CU_ASSERT_EQUAL(t.records[3].line, 3);
    trainlog_free(&t);
}

/* GPT-NeoX: "samples/sec: X |" before the iteration; the per-rank
 * parameter counts of two model-parallel ranks are summed. */
static void test_neox(void)
{
    const char *text =
        " > number of parameters on model parallel rank 0: 100000000\n"
        " > number of parameters on model parallel rank 1: 100000000\n"
        " > number of parameters on model parallel rank 0: 100000000\n"
        " samples/sec: 7.799 | iteration       10/   10000 | elapsed time per iteration (ms): 4103.1 | learning rate: 2.111E-06 | lm_loss: 1.1E+01 | number of skipped iterations:   0 | number of nan iterations:   0 |\n"
        " samples/sec: 7.801 | iteration       20/   10000 | elapsed time per iteration (ms): 4102.1 | learning rate: 2.111E-06 | lm_loss: 1.1E+01 | number of skipped iterations:   0 | number of nan iterations:   0 |\n"
        " samples/sec: 7.802 | iteration       30/   10000 | elapsed time per iteration (ms): 4101.1 | learning rate: 2.111E-06 | lm_loss: 1.1E+01 | number of skipped iterations:   0 | number of nan iterations:   0 |\n";
    trainlog_t t;
    err_t e;
    CU_ASSERT_EQUAL_FATAL(parse(text, NULL, &t, &e), 0);
    CU_ASSERT_STRING_EQUAL(t.framework, "GPT-NeoX");
    CU_ASSERT_EQUAL(t.n_records, 3);
    /* 7.799 samples/s x 4.1031 s = 32.000 (NeoX's samples/sec is the batch
     * over the time per iteration) */
    CU_ASSERT_DOUBLE_EQUAL(t.samples_per_step, 32, 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(t.caveat, "samples/sec x the time"));
    /* the first (steps 1-10) is the run's first and is left out */
    CU_ASSERT_DOUBLE_EQUAL(t.step_time_s.mean, 4.1016, 1e-9);
    CU_ASSERT_DOUBLE_EQUAL(t.params, 2e8, 0);
    CU_ASSERT_EQUAL(t.params_line, 2);
    CU_ASSERT_PTR_NOT_NULL(strstr(t.params_how, "2 model-parallel ranks"));
    trainlog_free(&t);
}

/* Composer's console blocks: step time from time/train (hours) between
 * logged batches, batch and tokens from time/sample and time/token, GPUs
 * from the job's over one device's samples per second. Batches 10, 20, 30
 * at 0.01, 0.02, 0.03 h: 3.6 s a step; 320 sequences of 2048 tokens. */
static void test_composer(void)
{
    const char *text = "[batch=10/100]:\n"
                       "\t Train time/batch: 10\n\t Train time/sample: 3200\n"
                       "\t Train time/token: 6553600\n\t Train time/train: 0.0100\n"
                       "[batch=20/100]:\n"
                       "\t Train time/batch: 20\n\t Train time/sample: 6400\n"
                       "\t Train time/token: 13107200\n"
                       "\t Train throughput/samples_per_sec: 88.8\n"
                       "\t Train throughput/device/samples_per_sec: 11.1\n"
                       "\t Train time/train: 0.0200\n"
                       "[epoch=1][batch=30/100]:\n"
                       "\t Train time/batch: 30\n\t Train time/sample: 9600\n"
                       "\t Train time/token: 19660800\n\t Train time/train: 0.0300\n";
    trainlog_t t;
    err_t e;
    CU_ASSERT_EQUAL_FATAL(parse(text, NULL, &t, &e), 0);
    CU_ASSERT_STRING_EQUAL(t.format, "composer");
    CU_ASSERT_EQUAL(t.n_records, 3); /* the first without a time: no rate, no earlier block */
    CU_ASSERT_DOUBLE_EQUAL(t.step_time_s.mean, 3.6, 1e-9);
    CU_ASSERT_DOUBLE_EQUAL(t.samples_per_step, 320, 0);
    CU_ASSERT_DOUBLE_EQUAL(t.tokens_per_step, 320 * 2048, 0);
    CU_ASSERT_EQUAL(t.n_gpus, 8);
    CU_ASSERT_EQUAL(t.batch_line, 1);
    trainlog_free(&t);
    /* one block: one over its batches per second; 7,313,623.75 tokens a
     * batch (variable-length sequences) are not a batch in tokens */
    const char *one = "[epoch=1][batch=5/5]:\n"
                      "         Train time/batch: 4\n         Train time/sample: 4096\n"
                      "         Train time/token: 29254495\n"
                      "         Train throughput/batches_per_sec: 0.0025\n";
    CU_ASSERT_EQUAL_FATAL(parse(one, NULL, &t, &e), 0);
    CU_ASSERT_DOUBLE_EQUAL(t.step_time_s.mean, 400, 1e-9);
    CU_ASSERT_DOUBLE_EQUAL(t.samples_per_step, 1024, 0);
    CU_ASSERT_FALSE(t.tokens_per_step > 0);
    trainlog_free(&t);
}

/* Megatron-LM's per-(tensor, pipeline)-rank counts: every distinct shard
 * once, repeats (data-parallel copies) not. */
static void test_params_shards(void)
{
    const char *text =
        " > number of parameters on (tensor, pipeline) model parallel rank (0, 0): 1000\n"
        " > number of parameters on (tensor, pipeline) model parallel rank (1, 0): 1000\n"
        " > number of parameters on (tensor, pipeline) model parallel rank (0, 1): 500\n"
        " > number of parameters on (tensor, pipeline) model parallel rank (1, 1): 500\n"
        " > number of parameters on (tensor, pipeline) model parallel rank (1, 1): 500\n"
        " iteration        1/      20 | elapsed time per iteration (ms): 2000.0 |\n"
        " iteration        2/      20 | elapsed time per iteration (ms): 2000.0 |\n";
    trainlog_t t;
    err_t e;
    CU_ASSERT_EQUAL_FATAL(parse(text, NULL, &t, &e), 0);
    CU_ASSERT_DOUBLE_EQUAL(t.params, 3000, 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(t.params_how, "4 model-parallel"));
    trainlog_free(&t);
    /* DeepSpeed's flops profiler, in the DeepSpeed reader's log */
    const char *ds = "params of model = params per GPU * mp_size:                   1575.59 M\n"
                     "[Rank 0] step=1, skipped=0, lr=[1e-4], mom=[0.9]\n"
                     "0/1, SamplesPerSec=10.0\n";
    CU_ASSERT_EQUAL_FATAL(parse(ds, NULL, &t, &e), 0);
    CU_ASSERT_DOUBLE_EQUAL(t.params, 1575.59e6, 1);
    CU_ASSERT_EQUAL(t.params_line, 1);
    trainlog_free(&t);
}


/* The refusals say what is missing: a log whose every timed step was
 * skipped (fp16 overflow), one whose records carry no time or rate, and a
 * DeepSpeed part whose first progress line's cumulative skipped count
 * (3 of 10 steps) does not make that step a skipped one. */
static void test_no_steady_reasons(void)
{
    trainlog_t t;
    err_t e;
    tlog_known_t k = {8, 64, 65536};
    const char *all_skipped = "[Rank 0] step=1, skipped=1, lr=[1e-4], mom=[0.9]\n"
                              "0/1, SamplesPerSec=10.0\n"
                              "[Rank 0] step=2, skipped=2, lr=[1e-4], mom=[0.9]\n"
                              "0/2, SamplesPerSec=10.0\n";
    CU_ASSERT_EQUAL_FATAL(parse(all_skipped, NULL, &t, &e), 0);
    CHECK_ERR(trainlog_settle(&t, &k, &e), &e, ERR_INPUT, "t.log", "each of the log's 2 timed",
              "skipped");
    trainlog_free(&t);
    const char *part = "[Rank 0] step=10, skipped=3, lr=[1e-4], mom=[0.9]\n"
                       "0/10, SamplesPerSec=16.0\n";
    CU_ASSERT_EQUAL_FATAL(parse(part, NULL, &t, &e), 0);
    CU_ASSERT_FALSE(t.records[0].skipped);
    CU_ASSERT_EQUAL_FATAL(trainlog_settle(&t, &k, &e), 0);
    CU_ASSERT_DOUBLE_EQUAL(t.step_time_s.mean, 4.0, 1e-12); /* 64 / 16 */
    trainlog_free(&t);
    const char *no_rate = "[batch=2/10]:\n\t Train time/batch: 1\n\t Train time/sample: 256\n";
    CU_ASSERT_EQUAL_FATAL(parse(no_rate, NULL, &t, &e), 0);
    CHECK_ERR(trainlog_settle(&t, &k, &e), &e, ERR_INPUT, "none of its 1 records carries");
    trainlog_free(&t);
}

TEST_SUITE(suite_trainlog, "trainlog", TEST(test_megatron_lm), TEST(test_megatron_bridge),
           TEST(test_nemo), TEST(test_torchtitan), TEST(test_deepspeed), TEST(test_hf),
           TEST(test_plain), TEST(test_settle_needs_batch), TEST(test_bad_logs),
           TEST(test_damaged_fixture), TEST(test_cleaning), TEST(test_numbers), TEST(test_formats),
           TEST(test_long_log_name), TEST(test_rank_folding), TEST(test_unprefixed_duplicates),
           TEST(test_runs), TEST(test_carriage_returns), TEST(test_neox), TEST(test_composer),
           TEST(test_params_shards), TEST(test_no_steady_reasons));
