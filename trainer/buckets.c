#include "trainer/buckets.h"

void buckets_init(buckets_t *b, double bucket_bytes, size_t elem_bytes, buckets_launch_fn launch,
                  void *ctx)
{
    b->bucket_bytes = bucket_bytes;
    b->elem_bytes = elem_bytes;
    b->launch = launch;
    b->ctx = ctx;
    b->collecting = false;
    b->lo = b->hi = 0;
}

void buckets_begin(buckets_t *b, bool collecting)
{
    b->collecting = collecting;
    b->lo = b->hi = 0;
}

void buckets_end(buckets_t *b)
{
    b->collecting = false;
}

/* Launch the bucket being formed, if any, and empty it. */
static int launch(buckets_t *b, err_t *err)
{
    if (b->hi <= b->lo)
        return ERR_OK;
    int rc = b->launch(b->ctx, b->lo, b->hi - b->lo, err);
    b->hi = b->lo;
    return rc;
}

int buckets_ready(buckets_t *b, size_t offset, size_t count, err_t *err)
{
    if (!b->collecting)
        return ERR_OK;
    if (b->hi == b->lo) {
        b->hi = offset + count;
        b->lo = offset;
    } else if (offset + count == b->lo) {
        b->lo = offset;
    } else {
        int rc = launch(b, err);
        if (rc)
            return rc;
        b->hi = offset + count;
        b->lo = offset;
    }
    if ((double)(b->hi - b->lo) * b->elem_bytes >= b->bucket_bytes || offset == 0)
        return launch(b, err);
    return ERR_OK;
}
