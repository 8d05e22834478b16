#include "profile/profile.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static const char *coll_names[COLL_OP_COUNT] = {
    "all_reduce", "all_gather", "reduce_scatter",
    "broadcast",  "send_recv",  "all_to_all"};

const char *prof_coll_name(coll_op_t op)
{
    return op < COLL_OP_COUNT ? coll_names[op] : "?";
}

int prof_coll_parse(const char *text, coll_op_t *op, err_t *err)
{
    for (int i = 0; i < COLL_OP_COUNT; i++)
        if (text && strcasecmp(text, coll_names[i]) == 0) {
            *op = (coll_op_t)i;
            return ERR_OK;
        }
    /* nccl-tests binary names */
    static const struct {
        const char *alias;
        coll_op_t op;
    } aliases[] = {{"allreduce", COLL_ALL_REDUCE},   {"allgather", COLL_ALL_GATHER},
                   {"reducescatter", COLL_REDUCE_SCATTER}, {"sendrecv", COLL_SEND_RECV},
                   {"alltoall", COLL_ALL_TO_ALL},   {"bcast", COLL_BROADCAST}};
    for (size_t i = 0; i < sizeof aliases / sizeof aliases[0]; i++)
        if (text && strcasecmp(text, aliases[i].alias) == 0) {
            *op = aliases[i].op;
            return ERR_OK;
        }
    return err_setf(err, ERR_INPUT, NULL, "op",
                    "unknown collective '%s' (all_reduce, all_gather, "
                    "reduce_scatter, broadcast, send_recv, all_to_all)",
                    text ? text : "");
}

double prof_bus_factor(coll_op_t op, int n)
{
    if (n <= 1)
        return 0;
    switch (op) {
    case COLL_ALL_REDUCE:
        return 2.0 * (n - 1) / n;
    case COLL_ALL_GATHER:
    case COLL_REDUCE_SCATTER:
    case COLL_ALL_TO_ALL:
        return (double)(n - 1) / n;
    default:
        return 1.0;
    }
}

/* Ring steps a collective takes: the latency term of a ring. */
static double ring_steps(coll_op_t op, int n)
{
    switch (op) {
    case COLL_ALL_REDUCE:
        return 2.0 * (n - 1);
    case COLL_SEND_RECV:
        return 1;
    default:
        return n - 1;
    }
}

void prof_free(profile_t *p)
{
    if (!p)
        return;
    free(p->gemm_points);
    p->gemm_points = NULL;
    p->n_gemm_points = 0;
    free(p->fits);
    p->fits = NULL;
    p->n_fits = 0;
}

int prof_copy(profile_t *dst, const profile_t *src, err_t *err)
{
    *dst = *src;
    dst->gemm_points = NULL;
    dst->fits = NULL;
    if (src->n_gemm_points) {
        dst->gemm_points = malloc(src->n_gemm_points * sizeof *dst->gemm_points);
        if (!dst->gemm_points) {
            dst->n_gemm_points = 0;
            dst->n_fits = 0;
            return err_set(err, ERR_RUNTIME, "out of memory copying a profile");
        }
        memcpy(dst->gemm_points, src->gemm_points,
               src->n_gemm_points * sizeof *dst->gemm_points);
    }
    if (src->n_fits > 0) {
        dst->fits = malloc((size_t)src->n_fits * sizeof *dst->fits);
        if (!dst->fits) {
            dst->n_fits = 0;
            prof_free(dst);
            return err_set(err, ERR_RUNTIME, "out of memory copying a profile");
        }
        memcpy(dst->fits, src->fits, (size_t)src->n_fits * sizeof *dst->fits);
    }
    return ERR_OK;
}

const prof_fit_t *prof_find_fit(const profile_t *p, const char *name)
{
    for (int i = 0; i < p->n_fits; i++)
        if (strcmp(p->fits[i].name, name) == 0)
            return &p->fits[i];
    return NULL;
}

int prof_add_fit(profile_t *p, const prof_fit_t *fit, err_t *err)
{
    for (int i = 0; i < p->n_fits; i++)
        if (strcmp(p->fits[i].name, fit->name) == 0) {
            p->fits[i] = *fit;
            return ERR_OK;
        }
    prof_fit_t *grown = realloc(p->fits, ((size_t)p->n_fits + 1) * sizeof *grown);
    if (!grown)
        return err_set(err, ERR_RUNTIME, "out of memory adding fit '%s'", fit->name);
    p->fits = grown;
    p->fits[p->n_fits++] = *fit;
    return ERR_OK;
}

/* ------------------------------------------------------------ GEMMs */

static dtype_t effective_dtype(const profile_t *p, dtype_t d)
{
    if (d < DTYPE_COUNT && p->peak_tflops[d] > 0 && p->gemm_max_eff[d] > 0)
        return d;
    return p->gemm_max_eff[DTYPE_BF16] > 0 ? DTYPE_BF16 : DTYPE_FP16;
}

double prof_gemm_model_eff(const profile_t *p, dtype_t dtype, double m,
                           double n, double k, double batch)
{
    dtype_t d = effective_dtype(p, dtype);
    double tm = p->tile_m, tn = p->tile_n, sms = p->sm_count > 0 ? p->sm_count : 1;
    /* Wave quantization: output tiles are spread over the SMs in waves; a
     * partly filled last wave (and partly filled edge tiles) leave SMs idle.
     * Stream-K style schedules recover part of it (wave_penalty < 1). */
    double tiles = ceil(m / tm) * ceil(n / tn) * batch;
    double waves = ceil(tiles / sms);
    double util = (m * n * batch) / (waves * sms * tm * tn);
    if (util > 1)
        util = 1;
    double util_soft = 1 - p->wave_penalty * (1 - util);
    /* Each tile's main loop over K amortises a fixed prologue/epilogue: a
     * time, so a type whose K loop runs n times faster than bf16's needs n
     * times the K to amortise it (measured: fp8 GEMMs on an H200 fit best
     * with twice bf16's k_half, and fall to 1.36x bf16 at K <= 1,024 from
     * 1.83x at K > 4,096; docs/gpu-runs/2026-11-27-h200-2). */
    double kh = p->k_half;
    if (p->peak_tflops[DTYPE_BF16] > 0 && p->peak_tflops[d] > p->peak_tflops[DTYPE_BF16])
        kh *= p->peak_tflops[d] / p->peak_tflops[DTYPE_BF16];
    double k_eff = k / (k + kh);
    return p->gemm_max_eff[d] * util_soft * k_eff;
}

/* Correction from measured points near (m, n, k): the geometric mean of
 * measured/model over neighbours within a factor 4 in every dimension,
 * weighted by closeness in log space. 1 when none is near. */
static double table_correction(const profile_t *p, dtype_t d, double m,
                               double n, double k)
{
    double wsum = 0, lsum = 0;
    const double near = log(4.0);
    for (size_t i = 0; i < p->n_gemm_points; i++) {
        const prof_gemm_point_t *pt = &p->gemm_points[i];
        if (pt->dtype != d)
            continue;
        double dm = fabs(log(m / pt->m)), dn = fabs(log(n / pt->n)),
               dk = fabs(log(k / pt->k));
        if (dm > near || dn > near || dk > near)
            continue;
        double model = p->peak_tflops[d] * p->sustained_factor *
                       prof_gemm_model_eff(p, d, pt->m, pt->n, pt->k, 1);
        if (!(model > 0))
            continue;
        double w = 1.0 / (dm + dn + dk + 0.02);
        wsum += w;
        lsum += w * log(pt->tflops / model);
    }
    return wsum > 0 ? exp(lsum / wsum) : 1.0;
}

double prof_gemm_time(const profile_t *p, dtype_t dtype, double m, double n,
                      double k, double batch)
{
    if (!(m > 0 && n > 0 && k > 0 && batch > 0))
        return 0;
    dtype_t d = effective_dtype(p, dtype);
    /* The achieved share of peak: model efficiency, sustained factor and
     * the correction from measurements nearby; never above the peak. */
    double achieved = prof_gemm_model_eff(p, d, m, n, k, batch) * p->sustained_factor;
    if (p->n_gemm_points)
        achieved *= table_correction(p, d, m, n, k);
    if (achieved > 1)
        achieved = 1;
    double flops = 2 * m * n * k * batch;
    double t_compute = flops / (p->peak_tflops[d] * 1e12 * achieved);
    /* Operands in the GEMM dtype, output in 16 bits. */
    double bytes = ((m * k + k * n) * dtype_bytes(d) + m * n * 2) * batch;
    double t_memory = bytes / (p->mem_bw_peak_gbs * 1e9 * p->mem_bw_eff);
    return p->gemm_launch_us * 1e-6 + (t_compute > t_memory ? t_compute : t_memory);
}

static const prof_attn_kernel_t *find_attn_kernel(const profile_t *p, const char *name)
{
    for (int i = 0; name && i < p->n_attn_kernels; i++)
        if (strcmp(p->attn_kernels[i].name, name) == 0)
            return &p->attn_kernels[i];
    return NULL;
}

const prof_attn_kernel_t *prof_attn_kernel(const profile_t *p, const char *name)
{
    return find_attn_kernel(p, name);
}

double prof_attn_eff(const profile_t *p, const prof_attn_call_t *call, bool backward)
{
    const prof_attn_kernel_t *k = call ? find_attn_kernel(p, call->kernel) : NULL;
    if (!k)
        return backward ? p->attn_bwd_eff : p->attn_fwd_eff;
    double plateau = backward ? k->bwd : call->causal ? k->fwd_causal : k->fwd_full;
    double half = backward ? k->s_half_bwd : call->causal ? k->s_half_causal : k->s_half_full;
    double s = call->keys > 0 ? call->keys : 1;
    double eff = plateau * s / (s + half);
    double d = call->head_dim;
    if (d > 0 && d < 128)
        eff *= d / (d + k->d_half) * (128 + k->d_half) / 128;
    return eff;
}

double prof_attn_time(const profile_t *p, dtype_t dtype, const prof_attn_call_t *call,
                      double flops, bool backward)
{
    if (!(flops > 0))
        return 0;
    dtype_t d = effective_dtype(p, dtype);
    double eff = prof_attn_eff(p, call, backward);
    return p->kernel_launch_us * 1e-6 +
           flops / (p->peak_tflops[d] * 1e12 * eff * p->sustained_factor);
}

double prof_atomic_time(const profile_t *p, double adds)
{
    if (!(adds > 0))
        return 0;
    if (!(p->atomic_add_gops > 0))
        return prof_mem_time(p, 6 * adds); /* read the source, read and write the sum */
    return p->kernel_launch_us * 1e-6 + adds / (p->atomic_add_gops * 1e9);
}

double prof_mem_time(const profile_t *p, double bytes)
{
    if (!(bytes > 0))
        return 0;
    return p->kernel_launch_us * 1e-6 + bytes / (p->mem_bw_peak_gbs * 1e9 * p->mem_bw_eff);
}

/* ------------------------------------------------------------ collectives */

/* The table for op measured at the largest group size not above n (or one
 * for any size). NULL when the profile has none. */
static const prof_coll_table_t *find_table(const profile_t *p, coll_op_t op, int n)
{
    const prof_coll_table_t *best = NULL;
    for (int i = 0; i < p->n_tables; i++) {
        const prof_coll_table_t *t = &p->tables[i];
        if (t->op != op || t->n_ranks > n)
            continue;
        if (!best || t->n_ranks > best->n_ranks)
            best = t;
    }
    return best;
}

static double lines_time(const prof_coll_table_t *t, double bus_bytes)
{
    double best = INFINITY;
    for (int i = 0; i < t->n_lines; i++) {
        double v = t->lines[i].alpha_us * 1e-6 + bus_bytes / (t->lines[i].busbw_gbs * 1e9);
        if (v < best)
            best = v;
    }
    return best;
}

/* Bus bandwidth inside a node at large messages, GB/s. */
static double intra_large_busbw(const profile_t *p, coll_op_t op, int n,
                                const fabric_t *intra, bool measured)
{
    if (measured) {
        const prof_coll_table_t *t = find_table(p, op, n);
        if (!t)
            t = find_table(p, COLL_ALL_REDUCE, n);
        if (t) {
            double best = 0;
            for (int i = 0; i < t->n_lines; i++)
                if (t->lines[i].busbw_gbs > best)
                    best = t->lines[i].busbw_gbs;
            return best;
        }
    }
    return intra->bw_gbs * intra->efficiency;
}

static double intra_time(const profile_t *p, coll_op_t op, const coll_span_t *s,
                         double bytes, bool measured)
{
    double bus = prof_bus_factor(op, s->n_ranks) * bytes;
    const prof_coll_table_t *t = measured ? find_table(p, op, s->n_ranks) : NULL;
    if (t)
        return lines_time(t, bus);
    double alpha = p->coll_base_us + ring_steps(op, s->n_ranks) * p->intra_hop_us;
    double bw = intra_large_busbw(p, op, s->n_ranks, s->intra, measured);
    return alpha * 1e-6 + bus / (bw * 1e9);
}

static double inter_time(const profile_t *p, coll_op_t op, const coll_span_t *s,
                         double bytes, bool intra_measured)
{
    int n = s->n_ranks, r = s->ranks_per_node > 0 ? s->ranks_per_node : 1;
    int N = s->nodes;
    bool net_measured = s->inter && strcmp(p->net_fabric, s->inter->name) == 0 &&
                        p->net_efficiency > 0;
    double eff = net_measured ? p->net_efficiency : (s->inter ? s->inter->efficiency : 0.9);
    double taper = s->taper >= 1 ? s->taper : 1;
    /* GB/s each rank can push out: measured on the user's network when the
     * profile has it, else the fabric's line rate at its efficiency */
    double per_gpu = (p->net_gpu_gbs > 0 ? p->net_gpu_gbs : s->nic_gbs_per_gpu * eff) / taper;
    double bus = prof_bus_factor(op, n) * bytes;
    double base = p->coll_base_us * 1e-6, hop = p->net_hop_us * 1e-6;
    double ihop = p->intra_hop_us * 1e-6;
    if (op == COLL_SEND_RECV)
        return base + hop + bytes / (per_gpu * 1e9);
    if (op == COLL_ALL_TO_ALL) {
        /* Of each rank's buffer, the share bound for other nodes crosses
         * its NIC; the rest moves over the node's fabric meanwhile. */
        double off_node = bytes * (double)(n - r) / n;
        return base + (N - 1) * hop + off_node / (per_gpu * 1e9);
    }
    /* Ring over the nodes: one ring per rail, r rails used per node; the
     * slowest link is either the NICs or the node's own fabric. */
    double bw_ring = r * per_gpu;
    double bw_node = intra_large_busbw(p, op, r > 1 ? r : 2, s->intra, intra_measured);
    if (r > 1 && bw_node < bw_ring)
        bw_ring = bw_node;
    double t_ring = base + ring_steps(op, n) * hop + bus / (bw_ring * 1e9);
    double best = t_ring;
    double depth = ceil(log2((double)N));
    if (op == COLL_ALL_REDUCE) {
        /* NCCL's double binary tree across nodes, chains inside them. */
        double t_tree = base + 2 * (depth * hop + (r - 1) * ihop) +
                        bus / (bw_ring * p->tree_bw_factor * 1e9);
        if (t_tree < best)
            best = t_tree;
    } else if ((op == COLL_ALL_GATHER || op == COLL_REDUCE_SCATTER) && r == 1) {
        /* NCCL's PAT algorithm (one rank per node): logarithmic latency. */
        double t_pat = base + depth * hop + bus / (bw_ring * p->tree_bw_factor * 1e9);
        if (t_pat < best)
            best = t_pat;
    }
    return best;
}

double prof_coll_time(const profile_t *p, coll_op_t op, const coll_span_t *s,
                      double bytes)
{
    if (!(bytes > 0) || s->n_ranks <= 1)
        return 0;
    bool measured = s->intra && strcmp(p->intra_fabric, s->intra->name) == 0;
    if (s->nodes <= 1)
        return intra_time(p, op, s, bytes, measured);
    return inter_time(p, op, s, bytes, measured);
}
