#include "sim/moe_dispatch.h"

#include <string.h>

double moe_dispatch_local_sort_bytes(moe_dispatch_t d, int ep, int etp, double local_experts,
                                     double received_bytes)
{
    if (d != MOE_DISPATCH_ALLTOALL || ep * (etp > 0 ? etp : 1) <= 1 || !(local_experts > 1) ||
        !(received_bytes > 0))
        return 0;
    return 2 * received_bytes; /* read every copy, write it in expert order */
}

double moe_dispatch_elem_bytes(moe_dispatch_t d, bool fp8_dispatch, bool quantized,
                               double act_bytes)
{
    if (d == MOE_DISPATCH_DEEPEP && fp8_dispatch && quantized)
        return 1 + 4.0 / 128; /* e4m3 values, one fp32 scale per 128 */
    return act_bytes;
}

/* One measured EP size: GB/s per rank, dispatch and combine (bf16). */
typedef struct {
    int ranks;
    double dispatch_gbs, combine_gbs;
} flex_point_t;

typedef struct {
    const char *arch;
    bool rdma;
    const flex_point_t *pts;
    int n;
} flex_table_t;

/* Blackwell inside one NVLink domain: HybridEP on GB200 NVL72, 4,096
 * tokens of hidden 7,168, top-8, 8 local experts a rank, 16 SMs, timed
 * through the Torch API (what Megatron-Core calls), bf16 dispatch and
 * combine (deepseek-ai/DeepEP docs/README_Hybrid-EP.md, "GB200 Platform";
 * its 8-rank B200 figures, 536 and 531 GB/s, agree within 3%; DeepEP's own
 * kernels on 24 SMs reach 513 and 426 at 8 ranks, the same page). The
 * GB200 Megatron-Bridge and Megatron-Core MoE recipes run HybridEP; DeepEP
 * stands in at these figures. */
static const flex_point_t BLACKWELL_NVL[] = {
    {8, 550.10, 538.44}, {16, 472.84, 474.48}, {24, 441.89, 444.40},
    {32, 485.50, 423.19}, {36, 469.96, 418.27},
};

/* Hopper across nodes: DeepEP's normal kernels on H800 with one ConnectX-7
 * 400 Gb/s NIC a GPU, DeepSeek-V3's pretraining shape (4,096 tokens, hidden
 * 7,168, top-4 groups, top-8), the RDMA bottleneck bandwidth at EP16, 32
 * and 64 (deepseek-ai/DeepEP docs/legacy.md, "Normal kernels with NVLink
 * and RDMA forwarding"; bf16 combine; the dispatch there is fp8, its
 * bandwidth taken for 16-bit tokens too, ASSUMED: the kernel is RDMA-bound);
 * the H100's NICs are the same. HybridEP's H100 figures (README_Hybrid-EP.md,
 * Torch API, bf16, 8 SMs: 57.7/57.0, 46.5/50.7, 41.5/47.7 GB/s) are a third
 * higher at EP16 and within 20% at EP32 and EP64; the model does not tell
 * the two kernels apart. */
static const flex_point_t HOPPER_RDMA[] = {
    {16, 43, 43}, {32, 58, 57}, {64, 51, 50},
};

static const flex_table_t FLEX_TABLES[] = {
    {"blackwell", false, BLACKWELL_NVL, (int)(sizeof BLACKWELL_NVL / sizeof BLACKWELL_NVL[0])},
    {"hopper", true, HOPPER_RDMA, (int)(sizeof HOPPER_RDMA / sizeof HOPPER_RDMA[0])},
};

/* The NIC rate the RDMA tables were measured on: one ConnectX-7 at
 * 400 Gb/s a GPU (docs/legacy.md: "~50 GB/s maximum bandwidth"). */
#define FLEX_REF_NIC_GBS 50.0

static moe_flex_fit_t flex_lookup(const char *arch, bool rdma, int ranks, double *dispatch_gbs,
                                  double *combine_gbs)
{
    *dispatch_gbs = *combine_gbs = 0;
    const flex_table_t *t = NULL;
    for (size_t i = 0; arch && i < sizeof FLEX_TABLES / sizeof FLEX_TABLES[0]; i++)
        if (FLEX_TABLES[i].rdma == rdma && strcmp(FLEX_TABLES[i].arch, arch) == 0)
            t = &FLEX_TABLES[i];
    if (!t || ranks <= 1)
        return MOE_FLEX_NONE;
    const flex_point_t *lo = &t->pts[0], *hi = &t->pts[t->n - 1];
    if (ranks <= lo->ranks || ranks >= hi->ranks) {
        const flex_point_t *p = ranks <= lo->ranks ? lo : hi;
        *dispatch_gbs = p->dispatch_gbs;
        *combine_gbs = p->combine_gbs;
        return ranks == p->ranks ? MOE_FLEX_MEASURED : MOE_FLEX_EXTRAPOLATED;
    }
    for (int i = 0; i + 1 < t->n; i++) {
        const flex_point_t *a = &t->pts[i], *b = &t->pts[i + 1];
        if (ranks >= a->ranks && ranks <= b->ranks) {
            double f = (double)(ranks - a->ranks) / (b->ranks - a->ranks);
            *dispatch_gbs = a->dispatch_gbs + f * (b->dispatch_gbs - a->dispatch_gbs);
            *combine_gbs = a->combine_gbs + f * (b->combine_gbs - a->combine_gbs);
            break;
        }
    }
    return MOE_FLEX_MEASURED;
}

moe_flex_fit_t moe_dispatch_flex_gbs(const char *arch, bool rdma, int ranks, double nic_gbs,
                                     double *dispatch_gbs, double *combine_gbs)
{
    moe_flex_fit_t fit = flex_lookup(arch, rdma, ranks, dispatch_gbs, combine_gbs);
    if (fit != MOE_FLEX_NONE && rdma) {
        double scale = nic_gbs > 0 ? nic_gbs / FLEX_REF_NIC_GBS : 1;
        *dispatch_gbs *= scale;
        *combine_gbs *= scale;
    }
    return fit;
}
