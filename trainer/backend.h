/* backend: what the training loop asks of a device, as a table of
 * functions - one entry for the CPU (backend_cpu.c), one for CUDA
 * (backend_cuda.c, which forwards to backend_cuda.cu in the CUDA plug-in).
 *
 * BACKEND_CUDA is backend_cuda.c: its create opens the CUDA plug-in
 * (common/plugin.h: scaleplan-cuda.so, which backend_cuda.cu builds and
 * which exports its table as BACKEND_CUDA_SYMBOL) and every other entry
 * forwards to it, so a process that never asks for --device cuda never
 * loads CUDA, cuBLASLt or NCCL.
 *
 * A backend owns the model's parameters, gradients, optimizer state and
 * activations on its device, runs one micro-batch forward and backward
 * (with tensor-parallel communication inside), reduces gradients over the
 * data-parallel group (bucketed and overlapped with the backward pass when
 * asked, or ZeRO-1: reduce-scatter, update the shard, all-gather), and
 * applies AdamW. The loop (train.c) never touches device memory.
 */
#ifndef SCALEPLAN_TRAINER_BACKEND_H
#define SCALEPLAN_TRAINER_BACKEND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/dist.h"
#include "common/error.h"
#include "models/model.h"
#include "trainer/checkpoint.h"
#include "trainer/optim.h"

typedef struct {
    const model_t *model;
    int tp, dp;
    const dist_group_t *world, *tp_group, *dp_group;
    int micro_batch, seq_len;
    uint64_t seed;
    bool zero1;           /* optimizer state sharded over DP */
    bool overlap;         /* DP reduction overlapped with the backward */
    double bucket_bytes;  /* DP gradient bucket size */
    bool bf16;            /* CUDA: bf16 compute with fp32 master weights */
    int device_index;     /* CUDA: which GPU (usually the local rank) */
    optim_config_t optim;
    double collective_timeout_s; /* CUDA: NCCL waits end (communicators aborted)
                                    after this long; 0 = no bound */
} backend_config_t;

/* Seconds spent in one step's parts, as this rank saw them. */
typedef struct {
    double fwd_s, bwd_s; /* compute, with TP communication inside */
    double tp_s;         /* TP communication within fwd and bwd */
    double dp_s;         /* DP reduction not hidden behind the backward */
    double opt_s;        /* gradient norm, clipping and the optimizer */
} step_times_t;

/* Bytes the backend holds on its device. */
typedef struct {
    double params, grads, optimizer, activations, buffers;
    double capacity;        /* device memory (host RAM for the CPU) */
    double peak_measured;   /* the device's own peak figure when it has one (CUDA), else 0 */
    char device[96];        /* "cpu (2 threads)", "NVIDIA H100 80GB HBM3" */
    char gpu[32];           /* catalog name of the GPU, "" for the CPU */
    double peak_tflops;     /* dense peak of the compute dtype, 0 when unknown */
    char software[200];     /* compiler, OpenMP / CUDA, cuBLAS, NCCL versions */
} backend_info_t;

typedef struct {
    const char *name; /* "cpu", "cuda" */
    int (*create)(const backend_config_t *c, void **state, err_t *err);
    void (*destroy)(void *state);
    int (*zero_grads)(void *state, err_t *err);
    /* forward and backward of one micro-batch (micro_batch x seq_len tokens);
     * loss_scale multiplies the gradients (1 / micro-batches per step);
     * last: the step's last micro-batch (DP buckets may start) */
    int (*micro_step)(void *state, const int32_t *inputs, const int32_t *targets,
                      double loss_scale, bool last, double *loss, step_times_t *t, err_t *err);
    /* finish the DP reduction of the gradients */
    int (*reduce_grads)(void *state, step_times_t *t, err_t *err);
    /* global norm of the (DP-averaged) gradients */
    int (*grad_norm)(void *state, double *norm, step_times_t *t, err_t *err);
    /* AdamW update number t (1-based) at lr, gradients scaled by clip */
    int (*optimizer_step)(void *state, long t, double lr, double clip, step_times_t *times,
                          err_t *err);
    /* host copies of the state for a checkpoint (pointers valid until the
     * next call); sizes in *n_params and *n_opt */
    int (*state_to_host)(void *state, ckpt_state_t *s, err_t *err);
    /* the host buffers state_to_host returns, to be filled by a resume,
     * then state_from_host moves them onto the device */
    int (*host_buffers)(void *state, ckpt_state_t *s, size_t *n_params, size_t *n_opt,
                        err_t *err);
    int (*state_from_host)(void *state, err_t *err);
    /* this rank's gradients after reduce_grads (all n_params of them, not a
     * ZeRO-1 shard: the summed micro-batch gradients before DP averaging
     * when dp is 1), as host floats valid until the next call: for tests
     * and --dump-grads */
    int (*grads_to_host)(void *state, const float **grads, size_t *n, err_t *err);
    /* initialise parameters from the seed again and zero the optimizer */
    int (*reset)(void *state, err_t *err);
    void (*info)(void *state, backend_info_t *info);
} backend_ops_t;

extern const backend_ops_t BACKEND_CPU;
extern const backend_ops_t BACKEND_CUDA;

/* The name under which scaleplan-cuda.so exports its backend_ops_t. */
#define BACKEND_CUDA_SYMBOL "scaleplan_backend_cuda"

#endif
