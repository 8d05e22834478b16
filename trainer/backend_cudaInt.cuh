/* backend_cudaInt: what the files of the CUDA backend share, and nothing
 * else includes: only trainer/backend_cuda*.cu include it (SQLite's *Int.h
 * split, issue 34). backend_cuda.c's plug-in side is in two files:
 *
 *   backend_cuda.cu       the state, its buffers, the watchdog, set-up and
 *                         tear-down, host copies and the entry table
 *   backend_cuda_step.cu  a step: the products, the TP and DP
 *                         communication, forward and backward, the
 *                         gradient norm and the optimizer
 *
 * The functions below are not static but stay inside the plug-in: it is
 * compiled with -fvisibility=hidden and exports only its entry tables.
 */
#ifndef SCALEPLAN_TRAINER_BACKEND_CUDAINT_CUH
#define SCALEPLAN_TRAINER_BACKEND_CUDAINT_CUH

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cuda_bf16.h>
#include <cuda_runtime.h>
#include <nccl.h>

#if NCCL_VERSION_CODE < NCCL_VERSION(2, 14, 0)
#error "scaleplan's CUDA trainer needs NCCL 2.14 or later (non-blocking communicators)"
#endif

extern "C" {
#include "common/plugin.h"
#include "topologies/gpu.h"
#include "trainer/backend.h"
#include "trainer/buckets.h"
#include "trainer/gpt.h"
}

#include "common/cuda_check.cuh"
#include "trainer/cuda_gemm.h"
#include "trainer/kern_act.h"
#include "trainer/kern_attn.h"
#include "trainer/kern_elem.h"
#include "trainer/kern_embed.h"
#include "trainer/kern_loss.h"
#include "trainer/kern_norm.h"
#include "trainer/kern_optim.h"
#include "trainer/kern_rope.h"

typedef __nv_bfloat16 bf16;

#define GEMM_WORKSPACE_BYTES (32u << 20) /* cuBLASLt's recommendation for Hopper */
#define LOGITS_ALIGN 64                  /* logits row stride rounded up to 64 elements */

/* One block's activations kept for the backward (T = activation type). */
typedef struct {
    float *x_in;                /* [N, C] residual stream entering the block */
    void *ln1;                  /* [N, C] T */
    float *ln1_mean, *ln1_rstd; /* [N] */
    void *qkv;                  /* [N, qkv_local] T, after RoPE */
    void *probs;                /* [B * heads_local, t, t] T, causal softmax */
    void *att;                  /* [N, heads_local * head_dim] T */
    float *x_mid;               /* [N, C] residual after attention */
    void *ln2;                  /* [N, C] T */
    float *ln2_mean, *ln2_rstd;
    void *fc;  /* [N, fc_local] T, pre-activation */
    void *act; /* [N, ffn_local] T */
} layer_acts_t;

typedef struct {
    backend_config_t c;
    gpt_t m;
    int device;
    char device_name[96];
    char gpu_name[32];
    double peak_tflops;
    size_t mem_total, mem_free_min;
    bool bf16;
    size_t es;       /* bytes per activation element: 2 (bf16) or 4 */
    kern_dtype_t dt; /* the activation type */
    size_t n, n_pad, shard, shard_begin; /* as backend_cpu.c */
    int B, T, N, Vp;                     /* micro-batch, sequence, B * T rows, logits row stride */
    /* parameters and optimizer state (device) */
    float *params, *grads;  /* n_pad each */
    void *wparams;          /* weights the GEMMs read: bf16 copy, or params in fp32 mode */
    void *lm_pad;           /* [Vp, hidden] T: the head's weights copied before each forward,
                               rows [vocab, Vp) zero; NULL when vocab == Vp. With m or k =
                               vocab = 50257 cuBLASLt 13.1 ran GPT-2's head products on
                               unaligned sm75 kernels, 11.5 ms of a 42 ms step (H200,
                               2026-11-27, tests/gpu/kernel_times.sh); Vp rows align them */
    float *adam_m, *adam_v; /* shard */
    float *shard_grads;     /* ZeRO-1: this rank's reduced shard (= grads when dp == 1) */
    uint8_t *flags;         /* n_pad: bit 0 weight decay, bit 1 counted in the norm */
    /* activations */
    char *acts_mem;
    size_t acts_bytes;
    layer_acts_t *layers;
    float *final_x, *lnf_mean, *lnf_rstd;
    void *lnf;     /* [N, C] T */
    void *logits;  /* [N, Vp] T; the loss kernel turns it into dlogits */
    float *losses; /* [N] */
    /* scratch shared by all blocks */
    char *scratch_mem;
    size_t scratch_bytes;
    kern_attn_scratch_t attn; /* q, k, v, y, dq, dk, dv [B heads_local, t, head_dim] T, dp [.., t, t] */
    float *dx, *dln;                    /* [N, C] */
    void *dx_t;                         /* [N, C] T copy of dx (bf16 mode; = dx in fp32 mode) */
    void *datt, *dqkv, *dfc, *dact;
    float *part_a, *part_b;     /* KERN_PART_MAX x max width */
    double *sumsq_part;         /* KERN_SUMSQ_BLOCKS */
    double *dsum;               /* [0] loss sum, [1] squared gradient norm */
    int32_t *tokens;            /* inputs N | targets N | rows N | start N + 1 | uniq N */
    float *rope_cos, *rope_sin; /* [t, head_dim / 2], rotary models only */
    /* host */
    int32_t *h_tokens; /* pinned, same layout as tokens */
    double *h_dsum;    /* pinned, 2 */
    int32_t *h_count;  /* vocab counters for the embedding's row grouping */
    int n_uniq;
    float *h_params, *h_m, *h_v, *h_grads; /* checkpoint / dump buffers (lazy) */
    /* CUDA objects */
    cudaStream_t s_main, s_dp;
    cudaEvent_t ev_fwd0, ev_fwd1, ev_bwd1, ev_dp1, ev_opt0, ev_opt1, ev_bucket;
    cudaEvent_t *ev_tp; /* pairs around TP all-reduces of one micro-batch */
    int n_ev_tp, used_ev_tp;
    bool bwd_recorded;
    gemm_t *gemm;
    ncclComm_t tp_comm, dp_comm; /* NULL for a group of one */
    bool aborted;                /* the watchdog aborted them: the device is stuck */
    /* DP buckets of the current backward */
    buckets_t buckets;
    bool buckets_launched;
    double other_bytes; /* device bytes outside the arenas counted as buffers */
} cuda_state_t;

/* A tensor's pointer in a flat buffer, or NULL when the model lacks it. */
template <typename P> static P *at(P *base, size_t off)
{
    return off == GPT_ABSENT ? NULL : base + off;
}

/* Run one NCCL collective on g's communicator: announce it to g's ranks
 * (so a timeout can name who never came), issue it, let it settle. */
#define NCCL_RUN(s, g, comm, what, call)                                                        \
    do {                                                                                       \
        TRY(dist_watch_enter((g), (what), err));                                               \
        TRY(cuda_nccl_settle((s), (comm), (call), (what), err));                               \
    } while (0)

/* backend_cuda.cu */
double cuda_now_s(void);
const void *cuda_wat(const cuda_state_t *s, size_t off);
int cuda_elapsed_s(cudaEvent_t a, cudaEvent_t b, double *out, err_t *err);
int cuda_nccl_settle(cuda_state_t *s, ncclComm_t comm, ncclResult_t res, const char *what,
                     err_t *err);
int cuda_wait_device(cuda_state_t *s, cudaStream_t stream, cudaEvent_t ev, const char *what,
                     err_t *err);
void cuda_sample_memory(cuda_state_t *s);

/* backend_cuda_step.cu */
int cuda_launch_bucket(void *ctx, size_t offset, size_t count, err_t *err);
int cuda_micro_step(void *state, const int32_t *inputs, const int32_t *targets,
                    double loss_scale, bool last, double *loss, step_times_t *t, err_t *err);
int cuda_reduce_grads(void *state, step_times_t *t, err_t *err);
int cuda_grad_norm(void *state, double *norm, step_times_t *t, err_t *err);
int cuda_optimizer_step(void *state, long step, double lr, double clip, step_times_t *t,
                        err_t *err);

#endif
