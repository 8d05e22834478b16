/* Tests of the readers for nanotron, MaxText, nanoGPT and LitGPT, and of
 * the NeMo and Hugging Face Trainer bars that real pastes showed: each
 * with lines as people printed them (tests/fixtures/real/logs/SOURCES.md
 * names the threads), read back figure by figure. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "inputs/trainlog.h"
#include "tests/testing.h"

static int parse(const char *text, trainlog_t *t, err_t *e)
{
    return trainlog_parse(text, strlen(text), "t.log", NULL, t, e);
}

/* nanotron PR 23: three iteration lines; 45, 41.2 and 39.4 ms; the batch
 * 20 printed whole. Issue 233: "1.02K" is not a batch to take. */
static void test_nanotron(void)
{
    const char *text =
        "01/17/2024 13:47:27 [INFO|DP=0|PP=0|TP=0|ip-26-0-160-225]: iteration: 991 / 1000 | "
        "consumed_tokens: 634K | elapsed_time_per_iteration_ms: 45 | tokens_per_sec: 14.2K | "
        "tokens_per_sec_per_gpu: 1.78K | global_batch_size: 20 | lm_loss: 10.6 | lr: 1e-05 | "
        "model_tflops_per_gpu: 0.00869 | hardware_tflops_per_gpu: 0.00869 | grad_norm: 0.515\n"
        "01/17/2024 13:47:27 [INFO|DP=0|PP=0|TP=0|ip-26-0-160-225]: iteration: 992 / 1000 | "
        "consumed_tokens: 635K | elapsed_time_per_iteration_ms: 41.2 | tokens_per_sec: 15.5K | "
        "tokens_per_sec_per_gpu: 1.94K | global_batch_size: 20 | lm_loss: 10.6 | lr: 1e-05 | "
        "model_tflops_per_gpu: 0.0095 | hardware_tflops_per_gpu: 0.00951 | grad_norm: 0.507\n";
    trainlog_t t;
    err_t e;
    CU_ASSERT_EQUAL_FATAL(parse(text, &t, &e), 0);
    CU_ASSERT_STRING_EQUAL(t.format, "nanotron");
    CU_ASSERT_EQUAL(t.n_records, 2);
    CU_ASSERT_EQUAL(t.records[0].step, 991);
    CHECK_REL(t.records[0].step_time_s, 0.045, 1e-12);
    CHECK_REL(t.records[1].tokens_per_s_per_gpu, 1940, 1e-12);
    CHECK_REL(t.records[1].tflops_per_gpu, 0.0095, 1e-12);
    CHECK_REL(t.records[1].loss, 10.6, 1e-12);
    CU_ASSERT_DOUBLE_EQUAL(t.samples_per_step, 20, 0);
    trainlog_free(&t);
    const char *rounded =
        "[0434:0]:11/01/2024 11:05:18 [INFO|DP=0|PP=0|TP=0|lrdn0434]: iteration: 12001 / 17500 | "
        "consumed_tokens: 25.2G | elapsed_time_per_iteration_ms: 28.2K | tokens_per_sec: 74.5K | "
        "tokens_per_sec_per_gpu: 2.33K | global_batch_size: 1.02K | lm_loss: 2.3\n";
    CU_ASSERT_EQUAL_FATAL(parse(rounded, &t, &e), 0);
    CHECK_REL(t.records[0].step_time_s, 28.2, 1e-12);
    CU_ASSERT_DOUBLE_EQUAL(t.samples_per_step, 0, 0); /* not invented */
    trainlog_free(&t);
    CHECK_ERR(parse("iteration: 5 / 9 | elapsed_time_per_iteration_ms: 4x5 |\n", &t, &e), &e,
              ERR_INPUT, "line 1", "elapsed_time_per_iteration_ms: not a number");
}

/* MaxText PR 4847: step 1 (0.631 s) is the warm-up; steps 2-3 average
 * 10.286 s. Issue 8's older line prints "TFLOP/s" without "/device". */
static void test_maxtext(void)
{
    const char *text =
        "I0811 21:54:55.531340 138304841739136 metric_logger.py:226] completed step: 1, "
        "seconds: 0.631, TFLOP/s/device: 5688.282, Tokens/s/device: 311629.521, total_weights: "
        "1572864, loss: 12.979, lm_loss: 12.979, perplexity: 433358.281\n"
        "I0811 21:55:06.119312 138304841739136 metric_logger.py:226] completed step: 2, "
        "seconds: 10.228, TFLOP/s/device: 350.869, Tokens/s/device: 19222.175, total_weights: "
        "1572864, loss: 12.980, lm_loss: 12.980, perplexity: 433463.719\n"
        "I0811 21:55:16.704861 138304841739136 metric_logger.py:226] completed step: 3, "
        "seconds: 10.344, TFLOP/s/device: 346.932, Tokens/s/device: 19006.461, total_weights: "
        "1572864, loss: 12.979, lm_loss: 12.979, perplexity: 433110.281\n";
    trainlog_t t;
    err_t e;
    CU_ASSERT_EQUAL_FATAL(parse(text, &t, &e), 0);
    CU_ASSERT_STRING_EQUAL(t.framework, "MaxText");
    CU_ASSERT_EQUAL(t.n_records, 3);
    CHECK_REL(t.records[1].tflops_per_gpu, 350.869, 1e-12);
    CHECK_REL(t.records[1].tokens_per_s_per_gpu, 19222.175, 1e-12);
    CHECK_REL(t.records[2].loss, 12.979, 1e-12);
    CU_ASSERT_EQUAL(t.warmup, 1);
    CHECK_REL(t.step_time_s.mean, 10.286, 1e-12);
    CU_ASSERT_DOUBLE_EQUAL(t.samples_per_step, 0, 0);
    CU_ASSERT_DOUBLE_EQUAL(t.tokens_per_step, 0, 0); /* total_weights is no batch */
    trainlog_free(&t);
    const char *old = "completed step: 15107, seconds: 2.167, TFLOP/s: 36.722, loss: 2.191\n";
    CU_ASSERT_EQUAL_FATAL(parse(old, &t, &e), 0);
    CHECK_REL(t.records[0].tflops_per_gpu, 36.722, 1e-12);
    CHECK_REL(t.records[0].step_time_s, 2.167, 1e-12);
    trainlog_free(&t);
}

/* nanoGPT issue 178: iter 0 (9371.81 ms, compilation) is warm-up; the
 * mfu of -100.00% is the script's "not yet" and is left out. */
static void test_nanogpt(void)
{
    const char *text = "iter 0: loss 4.2648, time 9371.81ms, mfu -100.00%\n"
                       "iter 10: loss 3.2202, time 893.76ms, mfu 16.68%\n"
                       "iter 20: loss 2.7697, time 894.88ms, mfu 16.67%\n"
                       "iter 30: loss 2.6104, time 893.50ms, mfu 16.68%\n"
                       "step 250: train loss 1.5440, val loss 1.7220\n";
    trainlog_t t;
    err_t e;
    CU_ASSERT_EQUAL_FATAL(parse(text, &t, &e), 0);
    CU_ASSERT_STRING_EQUAL(t.format, "nanogpt");
    CU_ASSERT_EQUAL(t.n_records, 4);
    CU_ASSERT_TRUE(isnan(t.records[0].mfu));
    CHECK_REL(t.records[1].mfu, 0.1668, 1e-12);
    CHECK_REL(t.records[1].loss, 3.2202, 1e-12);
    CU_ASSERT_EQUAL(t.warmup, 1);
    CHECK_REL(t.step_time_s.mean, (893.76 + 894.88 + 893.50) / 3000, 1e-12);
    trainlog_free(&t);
}

/* LitGPT issue 689: two iterations an optimizer step, the second marked;
 * a step's time is their sum, from the first mark on. Issue 1224's lines
 * have no mark: refused, naming what is missing. */
static void test_litgpt(void)
{
    const char *text = "iter 76 step 38: loss 10.8259, iter time: 197.87ms\n"
                       "iter 77 step 39: loss 10.8259, iter time: 214.40ms (optimizer.step)\n"
                       "iter 78 step 39: loss 10.8259, iter time: 198.00ms\n"
                       "iter 79 step 40: loss 10.8259, iter time: 215.31ms (optimizer.step)\n"
                       "iter 80 step 40: loss 10.8259, iter time: 197.59ms\n"
                       "iter 81 step 41: loss 10.8259, iter time: 215.43ms (optimizer.step)\n"
                       "iter 82 step 41: loss 10.8259, iter time: 198.35ms\n";
    trainlog_t t;
    err_t e;
    CU_ASSERT_EQUAL_FATAL(parse(text, &t, &e), 0);
    CU_ASSERT_STRING_EQUAL(t.framework, "LitGPT");
    CU_ASSERT_EQUAL_FATAL(t.n_records, 2);
    CU_ASSERT_EQUAL(t.records[0].step, 40);
    CU_ASSERT_EQUAL(t.records[0].line, 4);
    CHECK_REL(t.records[0].step_time_s, (198.00 + 215.31) / 1000, 1e-12);
    CHECK_REL(t.records[1].step_time_s, (197.59 + 215.43) / 1000, 1e-12);
    trainlog_free(&t);
    /* TPU pairs: 953.72 then 5788.97 ms around a 3,371 ms level are kept */
    const char *tpu = "[rank: 0] iter 40 step 41: iter time: 3367.46ms (optimizer.step)\n"
                      "[rank: 0] iter 41 step 42: iter time: 3369.43ms (optimizer.step)\n"
                      "[rank: 0] iter 42 step 43: iter time: 3369.47ms (optimizer.step)\n"
                      "[rank: 0] iter 43 step 44: iter time: 3371.84ms (optimizer.step)\n"
                      "[rank: 0] iter 44 step 45: iter time: 953.72ms (optimizer.step)\n"
                      "[rank: 0] iter 45 step 46: iter time: 5788.97ms (optimizer.step)\n"
                      "[rank: 0] iter 46 step 47: iter time: 3369.15ms (optimizer.step)\n";
    CU_ASSERT_EQUAL_FATAL(parse(tpu, &t, &e), 0);
    CU_ASSERT_EQUAL(t.n_records, 6);
    CHECK_REL(t.step_time_s.mean,
              (3369.43 + 3369.47 + 3371.84 + 953.72 + 5788.97 + 3369.15) / 6000, 1e-12);
    trainlog_free(&t);
    const char *unmarked =
        "Epoch 1 | iter 46 step 1 | loss train: 3.724, val: n/a | iter time: 45.73 ms\n"
        "Epoch 1 | iter 47 step 1 | loss train: 3.737, val: n/a | iter time: 45.53 ms\n";
    CHECK_ERR(parse(unmarked, &t, &e), &e, ERR_INPUT, "no whole optimizer step",
              "(optimizer.step)", "step,seconds CSV");
}

/* NeMo Framework Launcher issue 55: a NeMo 1 bar without
 * train_step_timing gives tqdm's rate; NeMo issue 11900's bar has the keys
 * but no values yet: no step time, said so. */
static void test_nemo_bars(void)
{
    const char *rate = "Epoch 0:   1%|          | 795/77225 [9:07:58<878:01:48, 41.36s/it, "
                       "loss=3.1, v_num=, reduced_train_loss=3.090, global_step=794.0, "
                       "consumed_samples=1.63e+6]\n";
    trainlog_t t;
    err_t e;
    CU_ASSERT_EQUAL_FATAL(parse(rate, &t, &e), 0);
    CU_ASSERT_STRING_EQUAL(t.framework, "NeMo");
    CHECK_REL(t.records[0].step_time_s, 41.36, 1e-12);
    CHECK_REL(t.records[0].loss, 3.09, 1e-12);
    CU_ASSERT_PTR_NOT_NULL(strstr(t.caveat, "rate"));
    CU_ASSERT_DOUBLE_EQUAL(t.samples_per_step, 0, 0);
    trainlog_free(&t);
    const char *empty = "Epoch 0: :   0%|          | 614/? [23:53<00:00, v_num=, "
                        "reduced_train_loss=, global_step=, consumed_samples=, train_step_timing "
                        "in s=, val_loss=]\n";
    CU_ASSERT_EQUAL_FATAL(parse(empty, &t, &e), 0);
    tlog_known_t k = {8, 64, 64 * 1024};
    CHECK_ERR(trainlog_settle(&t, &k, &e), &e, ERR_INPUT, "none of its 1 records carries");
    trainlog_free(&t);
}

/* axolotl issue 592: a 3-step bar drawn before the training bar is another
 * bar; the paste's first training drawing (281/873) starts no record. */
static void test_hf_other_bar(void)
{
    const char *text =
        " 67%|######6  | 2/3 [00:01<00:00,  1.68it/s]\n"
        " 32%|###2     | 281/873 [25:36<52:46,  5.35s/it]\n"
        " 32%|###2     | 282/873 [25:40<49:29,  5.02s/it]\n"
        " 32%|###2     | 283/873 [25:44<47:06,  4.79s/it]\n"
        "{'loss': 0.8635, 'learning_rate': 0.0001369640787949015, 'epoch': 0.97}\n"
        " 33%|###3     | 284/873 [25:49<45:20,  4.62s/it]\n";
    trainlog_t t;
    err_t e;
    CU_ASSERT_EQUAL_FATAL(parse(text, &t, &e), 0);
    CU_ASSERT_EQUAL_FATAL(t.n_records, 3);
    CU_ASSERT_EQUAL(t.records[0].step, 282);
    CHECK_REL(t.records[0].step_time_s, 4, 1e-12);
    CHECK_REL(t.records[1].loss, 0.8635, 1e-12);
    CHECK_REL(t.records[2].step_time_s, 5, 1e-12);
    trainlog_free(&t);
}

TEST_SUITE(suite_trainlog_more, "trainlog_more", TEST(test_nanotron), TEST(test_maxtext),
           TEST(test_nanogpt), TEST(test_litgpt), TEST(test_nemo_bars), TEST(test_hf_other_bar));
