/* Tests of common/json: syntax errors with positions, typed readers with
 * path-aware messages, number output. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/json.h"
#include "tests/testing.h"

static void test_parse_errors(void)
{
    err_t e;
    cJSON *root = NULL;
    const char *bad = "{\n  \"a\": 1,\n  \"b\": }\n";
    int rc = json_parse_text(bad, strlen(bad), "x.json", &root, &e);
    CHECK_ERR(rc, &e, ERR_INPUT, "x.json", "malformed JSON at line 3");
    CU_ASSERT_PTR_NULL(root);
    const char *cut = "{\"a\": [1, 2";
    rc = json_parse_text(cut, strlen(cut), "cut.json", &root, &e);
    CHECK_ERR(rc, &e, ERR_INPUT, "cut.json", "truncated");
    rc = json_parse_text("  \n", 3, "empty.json", &root, &e);
    CHECK_ERR(rc, &e, ERR_INPUT, "empty.json", "empty");
    const char *trail = "{\"a\": 1} {\"b\": 2}";
    rc = json_parse_text(trail, strlen(trail), "t.json", &root, &e);
    CHECK_ERR(rc, &e, ERR_INPUT, "t.json", "after the document");
}

static void test_typed_readers(void)
{
    err_t e;
    cJSON *root = NULL;
    const char *text = "{\"gpus\": [{\"name\": \"x\", \"bw\": -3, \"n\": 2.5, "
                       "\"flag\": 1, \"big\": 1e400, \"s\": \"abcdef\"}]}";
    CU_ASSERT_EQUAL_FATAL(json_parse_text(text, strlen(text), "g.json", &root, &e), 0);
    json_ctx_t top = json_ctx_root("g.json");
    json_ctx_t arr = json_ctx_member(&top, "gpus");
    json_ctx_t c = json_ctx_index(&arr, 0);
    const cJSON *obj = cJSON_GetArrayItem(cJSON_GetObjectItem(root, "gpus"), 0);
    double d = 7;
    int rc = json_get_double(obj, "bw", &c, JSON_REQUIRED, 0, 100, &d, &e);
    CHECK_ERR(rc, &e, ERR_INPUT, "g.json: gpus[0].bw: must be between 0 and 100 (got -3)");
    CU_ASSERT_EQUAL(d, 7); /* untouched on error */
    int i = 0;
    rc = json_get_int(obj, "n", &c, JSON_REQUIRED, 0, 10, &i, &e);
    CHECK_ERR(rc, &e, ERR_INPUT, "gpus[0].n", "whole number");
    bool b;
    rc = json_get_bool(obj, "flag", &c, JSON_REQUIRED, &b, &e);
    CHECK_ERR(rc, &e, ERR_INPUT, "gpus[0].flag", "true or false");
    rc = json_get_double(obj, "big", &c, JSON_REQUIRED, 0, 1e300, &d, &e);
    CHECK_ERR(rc, &e, ERR_INPUT, "gpus[0].big", "finite");
    char small[4];
    rc = json_get_string(obj, "s", &c, JSON_REQUIRED, small, sizeof small, &e);
    CHECK_ERR(rc, &e, ERR_INPUT, "gpus[0].s", "too long");
    rc = json_get_double(obj, "absent", &c, JSON_REQUIRED, 0, 1, &d, &e);
    CHECK_ERR(rc, &e, ERR_INPUT, "gpus[0].absent", "missing");
    d = 5;
    CU_ASSERT_EQUAL(json_get_double(obj, "absent", &c, JSON_OPTIONAL, 0, 1, &d, &e), 0);
    CU_ASSERT_EQUAL(d, 5);
    const cJSON *o;
    rc = json_get_object(obj, "name", &c, JSON_REQUIRED, &o, &e);
    CHECK_ERR(rc, &e, ERR_INPUT, "gpus[0].name", "JSON object");
    cJSON_Delete(root);
}

static void test_number_output(void)
{
    cJSON *o = cJSON_CreateObject();
    CU_ASSERT_TRUE(json_add_number(o, "x", 0.1 + 0.2));
    CU_ASSERT_TRUE(json_add_number(o, "nan", 0.0 / 0.0));
    char *s = cJSON_PrintUnformatted(o);
    CU_ASSERT_STRING_EQUAL(s, "{\"x\":0.3,\"nan\":null}");
    free(s);
    cJSON_Delete(o);
}

/* Issue 35 item 8e: a key given twice in one object is refused with the
 * file and the key's path, at any depth, in objects small (pairwise) and
 * large (sorted); the same key in different objects is fine. */
static void test_duplicate_keys(void)
{
    static const struct {
        const char *text, *path; /* path NULL: accepted */
    } cases[] = {
        {"{\"a\": 1, \"b\": 2, \"a\": 3}", "d.json: a: given twice"},
        {"{\"a\": {\"b\": [{\"c\": 1}, {\"c\": 1, \"c\": 2}]}}", "d.json: a.b[1].c: given twice"},
        {"[{\"x\": 1}, [{\"y\": 1, \"y\": 1}]]", "d.json: [1][0].y: given twice"},
        {"{\"\": 1, \"\": 2}", "given twice"},
        {"{\"a\": {\"k\": 1}, \"b\": {\"k\": 1}, \"c\": [{\"k\": 1}, {\"k\": 2}]}", NULL},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        cJSON *root = NULL;
        err_t e;
        CU_ASSERT_EQUAL_FATAL(json_parse_text(cases[i].text, strlen(cases[i].text), "d.json",
                                              &root, &e),
                              0);
        json_ctx_t top = json_ctx_root("d.json");
        int rc = json_check_unique_keys(root, &top, &e);
        if (cases[i].path)
            CHECK_ERR(rc, &e, ERR_INPUT, cases[i].path);
        else
            CU_ASSERT_EQUAL(rc, 0);
        cJSON_Delete(root);
    }
    /* 40 keys, the duplicate far apart: found by sorting */
    char text[2048];
    int n = snprintf(text, sizeof text, "{");
    for (int k = 0; k < 40; k++)
        n += snprintf(text + n, sizeof text - (size_t)n, "\"key%02d\": %d, ", k, k);
    snprintf(text + n, sizeof text - (size_t)n, "\"key07\": 0}");
    cJSON *root = NULL;
    err_t e;
    CU_ASSERT_EQUAL_FATAL(json_parse_text(text, strlen(text), "big.json", &root, &e), 0);
    json_ctx_t top = json_ctx_root("big.json");
    CHECK_ERR(json_check_unique_keys(root, &top, &e), &e, ERR_INPUT, "big.json: key07: given twice");
    cJSON_Delete(root);
}

/* Issue 35 item 8h: paths are never cut at a buffer's end. A context
 * deeper than JSON_PATH_MAX keeps its end ("...", then the member being
 * read, whole); a field error names a key of any length whole. */
static void test_long_paths(void)
{
    char key[100];
    memset(key, 'k', sizeof key - 1);
    key[sizeof key - 1] = '\0';
    json_ctx_t c = json_ctx_root("deep.json");
    for (int i = 0; i < 4; i++)
        c = json_ctx_member(&c, key);
    c = json_ctx_member(&c, "last_member");
    c = json_ctx_index(&c, 12345);
    CU_ASSERT(strlen(c.path) < JSON_PATH_MAX);
    CU_ASSERT_EQUAL(strncmp(c.path, "...", 3), 0);
    const char *tail = ".last_member[12345]";
    CU_ASSERT_STRING_EQUAL(c.path + strlen(c.path) - strlen(tail), tail);
    /* a 300-character key, named whole in the error */
    char text[400], big[301];
    memset(big, 'b', 300);
    big[300] = '\0';
    snprintf(text, sizeof text, "{\"%s\": \"x\"}", big);
    cJSON *root = NULL;
    err_t e;
    CU_ASSERT_EQUAL_FATAL(json_parse_text(text, strlen(text), "k.json", &root, &e), 0);
    json_ctx_t top = json_ctx_root("k.json");
    double d;
    CHECK_ERR(json_get_double(root, big, &top, JSON_REQUIRED, 0, 1, &d, &e), &e, ERR_INPUT,
              big, "finite number");
    cJSON_Delete(root);
}

/* Issue 37: JSON as Python's json.dumps writes it (allow_nan=True, as
 * transformers' configs are saved): bare Infinity, -Infinity and NaN read
 * as non-finite numbers, in objects and arrays, with or without spaces;
 * the same words inside strings stay text; everything else in the file
 * reads as before. */
static void test_python_nonfinite_read(void)
{
    err_t e;
    cJSON *root = NULL;
    /* json.dumps({"a": float("inf"), "b": -float("inf"), "c": float("nan"),
     *             "s": "NaN Infinity", "q": "say \"NaN\"", "arr": [1, float("nan"),
     *             float("inf")], "n": 2}) */
    const char *py = "{\"a\": Infinity, \"b\": -Infinity, \"c\": NaN, \"s\": \"NaN Infinity\", "
                     "\"q\": \"say \\\"NaN\\\"\", \"arr\": [1, NaN, Infinity], \"n\": 2}";
    CU_ASSERT_EQUAL_FATAL(json_parse_text(py, strlen(py), "py.json", &root, &e), 0);
    const cJSON *a = cJSON_GetObjectItem(root, "a"), *b = cJSON_GetObjectItem(root, "b"),
                *c = cJSON_GetObjectItem(root, "c"), *arr = cJSON_GetObjectItem(root, "arr");
    CU_ASSERT_TRUE(cJSON_IsNumber(a) && isinf(a->valuedouble) && a->valuedouble > 0);
    CU_ASSERT_TRUE(cJSON_IsNumber(b) && isinf(b->valuedouble) && b->valuedouble < 0);
    CU_ASSERT_TRUE(cJSON_IsNumber(c) && isnan(c->valuedouble));
    CU_ASSERT_TRUE(isnan(cJSON_GetArrayItem(arr, 1)->valuedouble));
    CU_ASSERT_TRUE(isinf(cJSON_GetArrayItem(arr, 2)->valuedouble));
    CU_ASSERT_STRING_EQUAL(cJSON_GetObjectItem(root, "s")->valuestring, "NaN Infinity");
    CU_ASSERT_STRING_EQUAL(cJSON_GetObjectItem(root, "q")->valuestring, "say \"NaN\"");
    CU_ASSERT_EQUAL(cJSON_GetObjectItem(root, "n")->valueint, 2);
    cJSON_Delete(root);
    /* compact, as json.dumps(separators=(",", ":")) writes, and at the top */
    const char *compact = "[NaN,-Infinity,{\"k\":Infinity}]";
    CU_ASSERT_EQUAL_FATAL(json_parse_text(compact, strlen(compact), "c.json", &root, &e), 0);
    CU_ASSERT_TRUE(isnan(cJSON_GetArrayItem(root, 0)->valuedouble));
    CU_ASSERT_TRUE(isinf(cJSON_GetObjectItem(cJSON_GetArrayItem(root, 2), "k")->valuedouble));
    cJSON_Delete(root);
    CU_ASSERT_EQUAL_FATAL(json_parse_text("NaN", 3, "top.json", &root, &e), 0);
    CU_ASSERT_TRUE(isnan(root->valuedouble));
    cJSON_Delete(root);
}

/* A non-finite value where a finite number must be is refused naming the
 * key and the word the file wrote; words that are not values stay
 * malformed JSON. */
static void test_python_nonfinite_refused(void)
{
    err_t e;
    cJSON *root = NULL;
    const char *text = "{\"m\": {\"lr\": NaN, \"top\": Infinity, \"low\": -Infinity}}";
    CU_ASSERT_EQUAL_FATAL(json_parse_text(text, strlen(text), "cfg.json", &root, &e), 0);
    json_ctx_t top = json_ctx_root("cfg.json"), m = json_ctx_member(&top, "m");
    const cJSON *o = cJSON_GetObjectItem(root, "m");
    double d = 1;
    int i = 1;
    long long l = 1;
    CHECK_ERR(json_get_double(o, "lr", &m, JSON_REQUIRED, 0, 1, &d, &e), &e, ERR_INPUT,
              "cfg.json: m.lr: must be a finite number (got NaN)");
    CHECK_ERR(json_get_double(o, "top", &m, JSON_OPTIONAL, 0, 1e300, &d, &e), &e, ERR_INPUT,
              "m.top", "(got Infinity)");
    CHECK_ERR(json_get_int(o, "low", &m, JSON_REQUIRED, -10, 10, &i, &e), &e, ERR_INPUT,
              "m.low", "(got -Infinity)");
    CHECK_ERR(json_get_long(o, "lr", &m, JSON_REQUIRED, 0, 10, &l, &e), &e, ERR_INPUT, "m.lr",
              "(got NaN)");
    CHECK_ERR(json_check_finite(o, "top", &m, &e), &e, ERR_INPUT, "m.top", "finite");
    CU_ASSERT_EQUAL(json_check_finite(o, "absent", &m, &e), 0);
    CU_ASSERT_TRUE(d == 1 && i == 1 && l == 1); /* untouched */
    cJSON_Delete(root);
    static const char *const bad[] = {"{\"a\": NaNa}", "{\"a\": Infinit}", "{\"a\": nan}",
                                      "{\"a\": -NaN}", "{\"a\": 1, NaN: 2}", "{\"a\": xNaN}"};
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        int rc = json_parse_text(bad[k], strlen(bad[k]), "bad.json", &root, &e);
        CHECK_ERR(rc, &e, ERR_INPUT, "bad.json", "malformed JSON");
        CU_ASSERT_PTR_NULL(root);
    }
    /* a file Python wrote with a NaN where a model needs a number */
    int rc = json_parse_file(fixture("configs/nan.json"), &root, &e);
    CU_ASSERT_EQUAL_FATAL(rc, 0);
    json_ctx_t f = json_ctx_root("nan.json");
    CHECK_ERR(json_get_int(root, "hidden_size", &f, JSON_REQUIRED, 1, 1 << 20, &i, &e), &e,
              ERR_INPUT, "nan.json: hidden_size", "(got NaN)");
    cJSON_Delete(root);
}

TEST_SUITE(suite_json, "json", TEST(test_parse_errors), TEST(test_typed_readers),
           TEST(test_number_output), TEST(test_duplicate_keys),
           TEST(test_long_paths), TEST(test_python_nonfinite_read),
           TEST(test_python_nonfinite_refused));
