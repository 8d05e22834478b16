/* buckets: data-parallel gradient buckets, as both trainer backends form
 * them.
 *
 * The backward finalises gradients in ranges from the end of the flat
 * gradient buffer towards its start (the output layer first, the embedding
 * last). Adjacent ranges merge into one bucket until it holds bucket_bytes
 * or reaches the buffer's start; then the backend's launch callback starts
 * that bucket's reduction (an MPI non-blocking all-reduce on the CPU, an
 * NCCL all-reduce on a side stream on the GPU) while the backward goes on.
 * A range that is not adjacent to the bucket being formed first launches
 * that bucket. Megatron-LM's DDP forms its buckets the same way.
 */
#ifndef SCALEPLAN_TRAINER_BUCKETS_H
#define SCALEPLAN_TRAINER_BUCKETS_H

#include <stdbool.h>
#include <stddef.h>

#include "common/error.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Start reducing elements [offset, offset + count) of the gradient buffer. */
typedef int (*buckets_launch_fn)(void *ctx, size_t offset, size_t count, err_t *err);

typedef struct {
    double bucket_bytes;  /* launch once a bucket holds this much */
    size_t elem_bytes;    /* bytes per gradient element */
    buckets_launch_fn launch;
    void *ctx;
    bool collecting;      /* false: ranges are ignored (no overlap this pass) */
    size_t lo, hi;        /* the bucket being formed, [lo, hi); empty when equal */
} buckets_t;

/* A bucketer launching through launch(ctx, ...), not collecting. */
void buckets_init(buckets_t *b, double bucket_bytes, size_t elem_bytes, buckets_launch_fn launch,
                  void *ctx);

/* Begin a backward pass; collecting says whether its ranges form buckets. */
void buckets_begin(buckets_t *b, bool collecting);

/* Range [offset, offset + count) is final. Returns the launch's error. */
int buckets_ready(buckets_t *b, size_t offset, size_t count, err_t *err);

/* End the pass: stop collecting (a bucket still forming is not launched;
 * the buffer's start always completes the last one). */
void buckets_end(buckets_t *b);

#ifdef __cplusplus
}
#endif

#endif
