/* trainer/buckets: gradient ranges merge into buckets as both backends form
 * them. */
#include <string.h>

#include "tests/testing.h"
#include "trainer/buckets.h"

typedef struct {
    int n;
    size_t offset[16], count[16];
} launches_t;

static int record(void *ctx, size_t offset, size_t count, err_t *err)
{
    (void)err;
    launches_t *l = ctx;
    l->offset[l->n] = offset;
    l->count[l->n] = count;
    l->n++;
    return ERR_OK;
}

static void test_ranges_merge_downwards(void)
{
    launches_t l = {0};
    buckets_t b;
    err_t e;
    /* 4-byte elements, buckets of 40 bytes = 10 elements */
    buckets_init(&b, 40, 4, record, &l);
    buckets_begin(&b, true);
    CU_ASSERT_EQUAL(buckets_ready(&b, 96, 4, &e), 0);  /* [96,100) */
    CU_ASSERT_EQUAL(buckets_ready(&b, 90, 6, &e), 0);  /* [90,100): 10 elements, launch */
    CU_ASSERT_EQUAL(l.n, 1);
    CU_ASSERT_EQUAL(l.offset[0], 90);
    CU_ASSERT_EQUAL(l.count[0], 10);
    CU_ASSERT_EQUAL(buckets_ready(&b, 85, 5, &e), 0);  /* [85,90) forming */
    CU_ASSERT_EQUAL(buckets_ready(&b, 40, 10, &e), 0); /* not adjacent: [85,90) goes first */
    CU_ASSERT_EQUAL(l.n, 3);                            /* ... and [40,50) is full */
    CU_ASSERT_EQUAL(l.offset[1], 85);
    CU_ASSERT_EQUAL(l.count[1], 5);
    CU_ASSERT_EQUAL(l.offset[2], 40);
    CU_ASSERT_EQUAL(buckets_ready(&b, 0, 3, &e), 0);   /* the buffer's start closes a bucket */
    CU_ASSERT_EQUAL(l.n, 4);
    CU_ASSERT_EQUAL(l.offset[3], 0);
    CU_ASSERT_EQUAL(l.count[3], 3);
    buckets_end(&b);
    CU_ASSERT_EQUAL(buckets_ready(&b, 0, 100, &e), 0); /* not collecting: ignored */
    CU_ASSERT_EQUAL(l.n, 4);
}

static int refuse(void *ctx, size_t offset, size_t count, err_t *err)
{
    (void)ctx;
    (void)offset;
    (void)count;
    return err_set(err, ERR_RUNTIME, "no room");
}

static void test_launch_error_returns(void)
{
    buckets_t b;
    err_t e;
    buckets_init(&b, 8, 4, refuse, NULL);
    buckets_begin(&b, true);
    CU_ASSERT_EQUAL(buckets_ready(&b, 10, 2, &e), ERR_RUNTIME);
    CU_ASSERT_PTR_NOT_NULL(strstr(e.msg, "no room"));
}

TEST_SUITE(suite_buckets, "buckets", TEST(test_ranges_merge_downwards),
           TEST(test_launch_error_returns));
