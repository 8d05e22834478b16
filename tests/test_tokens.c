/* tokens: token files, byte tokenization, the built-in corpus, and which
 * sequences each data-parallel rank reads. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/fileio.h"
#include "common/strfmt.h"
#include "trainer/tokens.h"

#include "tests/testing.h"

static void test_token_file_round_trip(void)
{
    char dir[256], path[320];
    CU_ASSERT_EQUAL_FATAL(make_temp_dir(dir, sizeof dir), 0);
    err_t err;
    uint32_t toks[] = {0, 5, 65535, 17, 300, 2};
    for (int bpt = 2; bpt <= 4; bpt += 2) {
        snprintf(path, sizeof path, "%s/t%d.tok", dir, bpt);
        CU_ASSERT_EQUAL_FATAL(tok_write(path, toks, 6, 65536, bpt, &err), 0);
        tok_data_t d;
        CU_ASSERT_EQUAL_FATAL(tok_load(path, &d, &err), 0);
        CU_ASSERT_EQUAL(d.n, 6);
        CU_ASSERT_EQUAL(d.vocab, 65536);
        CU_ASSERT_EQUAL(memcmp(d.tokens, toks, sizeof toks), 0);
        tok_free(&d);
    }
    /* a token beyond the vocabulary cannot be written */
    CHECK_ERR(tok_write(path, toks, 6, 1000, 2, &err), &err, ERR_INPUT, "beyond the vocabulary");
    /* a truncated file is refused with its path */
    snprintf(path, sizeof path, "%s/t2.tok", dir);
    char *data = NULL;
    size_t len = 0;
    CU_ASSERT_EQUAL_FATAL(fileio_read_all(path, &data, &len, &err), 0);
    CU_ASSERT_EQUAL_FATAL(fileio_write_atomic(path, data, len - 3, &err), 0);
    tok_data_t d;
    CHECK_ERR(tok_load(path, &d, &err), &err, ERR_INPUT, "t2.tok", "truncated");
    /* a damaged header too */
    data[12] = 3; /* bytes per token */
    CU_ASSERT_EQUAL_FATAL(fileio_write_atomic(path, data, len, &err), 0);
    CHECK_ERR(tok_load(path, &d, &err), &err, ERR_INPUT, "bytes_per_token");
    free(data);
    CHECK_ERR(tok_load("/no/such/file.txt", &d, &err), &err, ERR_INPUT, "/no/such/file.txt");
    remove_tree(dir);
}

static void test_text_and_builtin_corpus(void)
{
    char dir[256], path[320];
    CU_ASSERT_EQUAL_FATAL(make_temp_dir(dir, sizeof dir), 0);
    snprintf(path, sizeof path, "%s/story.txt", dir);
    err_t err;
    const char *text = "Hello, \xc3\xa9t\xc3\xa9!\n";
    CU_ASSERT_EQUAL_FATAL(fileio_write_atomic(path, text, strlen(text), &err), 0);
    tok_data_t d;
    CU_ASSERT_EQUAL_FATAL(tok_load(path, &d, &err), 0);
    CU_ASSERT_EQUAL(d.n, strlen(text));
    CU_ASSERT_EQUAL(d.vocab, 256);
    CU_ASSERT_EQUAL(d.tokens[7], 0xc3); /* bytes, not characters */
    /* too short for a sequence of 32; a model with fewer than 256 tokens */
    CHECK_ERR(tok_check(&d, 32, 50257, &err), &err, ERR_INPUT, "too few");
    CHECK_ERR(tok_check(&d, 4, 100, &err), &err, ERR_INPUT, "vocabulary");
    tok_free(&d);
    /* the built-in corpus: deterministic in its seed, printable text */
    tok_data_t a, b, c;
    CU_ASSERT_EQUAL_FATAL(tok_builtin(1 << 16, 3, &a, &err), 0);
    CU_ASSERT_EQUAL_FATAL(tok_builtin(1 << 16, 3, &b, &err), 0);
    CU_ASSERT_EQUAL_FATAL(tok_builtin(1 << 16, 4, &c, &err), 0);
    CU_ASSERT_EQUAL(a.n, 1 << 16);
    CU_ASSERT_EQUAL(memcmp(a.tokens, b.tokens, a.n * sizeof *a.tokens), 0);
    CU_ASSERT_NOT_EQUAL(memcmp(a.tokens, c.tokens, a.n * sizeof *a.tokens), 0);
    for (size_t i = 0; i < a.n; i++)
        CU_ASSERT_FATAL(a.tokens[i] == '\n' || (a.tokens[i] >= 32 && a.tokens[i] < 127));
    tok_free(&a), tok_free(&b), tok_free(&c);
    remove_tree(dir);
}

/* Data-parallel ranks read disjoint slices that together are the global
 * batch, and a step's batch depends on nothing but the step. */
static void test_sequences(void)
{
    tok_data_t d;
    err_t err;
    CU_ASSERT_EQUAL_FATAL(tok_builtin(1 << 14, 1, &d, &err), 0);
    int32_t in[16], tg[16], in2[16], tg2[16];
    tok_sequence(&d, 7, 8, 3, 16, in, tg);
    tok_sequence(&d, 7, 8, 3, 16, in2, tg2);
    CU_ASSERT_EQUAL(memcmp(in, in2, sizeof in), 0);
    for (int t = 0; t + 1 < 16; t++)
        CU_ASSERT_EQUAL(tg[t], in[t + 1]); /* targets are the next tokens */
    /* sequence g of step s starts at ((s G + g) T) mod usable */
    size_t usable = d.n - 16 - 1;
    size_t start = ((size_t)7 * 8 + 3) * 16 % usable;
    CU_ASSERT_EQUAL(in[0], (int32_t)d.tokens[start]);
    /* different sequences of a step differ */
    tok_sequence(&d, 7, 8, 4, 16, in2, tg2);
    CU_ASSERT_NOT_EQUAL(memcmp(in, in2, sizeof in), 0);
    tok_free(&d);
}

/* Issue 35 row 7: the data's path is kept whole (the old 256-byte field
 * cut it, and the checkpoint's "data" setting compared the cut text), for
 * a token file and a text file alike. */
static void test_long_source_path(void)
{
    char dir[256];
    CU_ASSERT_EQUAL_FATAL(make_temp_dir(dir, sizeof dir), 0);
    char *deep = deep_path(dir, 600);
    CU_ASSERT_PTR_NOT_NULL_FATAL(deep);
    err_t err;
    CU_ASSERT_EQUAL_FATAL(fileio_mkdirs(deep, &err), 0);
    uint32_t toks[] = {1, 2, 3};
    for (int text = 0; text <= 1; text++) {
        char *path = str_printf("%s/data.%s", deep, text ? "txt" : "tok");
        CU_ASSERT_PTR_NOT_NULL_FATAL(path);
        CU_ASSERT_EQUAL_FATAL(text ? fileio_write_atomic(path, "abc", 3, &err)
                                   : tok_write(path, toks, 3, 10, 2, &err),
                              0);
        tok_data_t d;
        CU_ASSERT_EQUAL_FATAL(tok_load(path, &d, &err), 0);
        CU_ASSERT_TRUE(d.source && strcmp(d.source, path) == 0);
        tok_free(&d);
        free(path);
    }
    free(deep);
    remove_tree(dir);
}

TEST_SUITE(suite_tokens, "tokens", TEST(test_token_file_round_trip),
           TEST(test_text_and_builtin_corpus), TEST(test_sequences), TEST(test_long_source_path));
