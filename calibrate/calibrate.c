#include "calibrate/calibrate.h"

#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "calibrate/collbench.h"
#include "calibrate/fit.h"
#include "calibrate/gpubench.h"
#include "common/progress.h"
#include "common/units.h"
#include "topologies/fabric.h"
#include "topologies/gpu.h"

/* ------------------------------------------------------------ notes */

static void note(cal_notes_t *n, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void note(cal_notes_t *n, const char *fmt, ...)
{
    if (!n || n->n >= CAL_MAX_NOTES)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(n->text[n->n++], sizeof n->text[0], fmt, ap);
    va_end(ap);
}

/* ------------------------------------------------------------ options */

void cal_fit_opts_default(cal_fit_opts_t *o)
{
    o->sustained = CAL_SUSTAINED_BASE;
    o->sustained_value = 1.0;
    o->command = NULL;
}

int cal_parse_sustained(const char *text, cal_fit_opts_t *o, err_t *err)
{
    if (strcasecmp(text, "base") == 0) {
        o->sustained = CAL_SUSTAINED_BASE;
        return ERR_OK;
    }
    if (strcasecmp(text, "measured") == 0) {
        o->sustained = CAL_SUSTAINED_MEASURED;
        return ERR_OK;
    }
    char *end;
    double v = strtod(text, &end);
    if (end == text || *end != '\0' || !(v >= 0.1 && v <= 1.2))
        return err_setf(err, ERR_INPUT, NULL, "--sustained-factor",
                        "expected a number from 0.1 to 1.2, 'base' or 'measured' (got '%s')",
                        text);
    o->sustained = CAL_SUSTAINED_VALUE;
    o->sustained_value = v;
    return ERR_OK;
}

void cal_measure_opts_default(cal_measure_opts_t *o)
{
    o->quick = false;
    o->gemm = o->memory = o->collectives = true;
    o->timeout_s = 60;
    o->gpus = 0;
}

/* ------------------------------------------------------------ helpers */

static double clampd(double v, double lo, double hi)
{
    return v < lo ? lo : v > hi ? hi : v;
}

static void fit_param(prof_fit_t *f, const char *name, double value, double se)
{
    if (f->n_params >= PROF_MAX_PARAMS)
        return;
    snprintf(f->param_names[f->n_params], sizeof f->param_names[0], "%s", name);
    f->params[f->n_params] = isfinite(value) ? clampd(value, -1e18, 1e18) : 0;
    f->param_se[f->n_params] = isfinite(se) && se > 0 ? clampd(se, 0, 1e18) : 0;
    f->n_params++;
}

/* Quality figures within what the profile reader accepts: errors and
 * interval widths at most 1e6 (100 million percent: "useless"), R^2 at
 * least -1e9. */
static double cap_rel(double v)
{
    return isfinite(v) ? clampd(v, 0, 1e6) : 1e6;
}

static void fit_quality(prof_fit_t *f, const fit_quality_t *q)
{
    f->n_points = q->n;
    f->r2 = isfinite(q->r2) ? clampd(q->r2, -1e9, 1) : -1e9;
    f->worst_rel_err = cap_rel(q->worst_rel_err);
    f->pi95_rel = cap_rel(q->pi95_rel);
}

int cal_resolve_gpu(meas_set_t *m, const char *gpu_name, err_t *err)
{
    gpu_t g;
    const char *name = gpu_name && gpu_name[0] ? gpu_name : m->env.gpu[0] ? m->env.gpu : NULL;
    int rc;
    if (name) {
        if ((rc = gpu_load(name, &g, err)))
            return rc;
    } else if (!m->env.device[0] || gpu_load(m->env.device, &g, err) != ERR_OK) {
        if (m->env.device[0])
            return err_setf(err, ERR_INPUT, NULL, "--gpu",
                            "device '%s' is not in the GPU catalog: name the catalog GPU it "
                            "is (scaleplan catalog gpus)",
                            m->env.device);
        return err_setf(err, ERR_INPUT, NULL, "--gpu",
                        "the measurements do not name their GPU: give --gpu NAME (scaleplan "
                        "catalog gpus) or --profile FILE");
    }
    snprintf(m->env.gpu, sizeof m->env.gpu, "%s", g.name);
    return ERR_OK;
}

/* ------------------------------------------------------------ import */

/* Add one reading to m: its series, device and group; refuses a second
 * log of the same collective and group. */
static int import_reading(const char *path, const nccltests_reading_t *r, meas_set_t *m,
                          err_t *err)
{
    const meas_coll_t *c = &r->series;
    for (int j = 0; j < m->n_coll; j++)
        if (m->coll[j].op == c->op && m->coll[j].n_ranks == c->n_ranks &&
            m->coll[j].nodes == c->nodes && strcmp(m->coll[j].algo, c->algo) == 0)
            return err_setf(err, ERR_INPUT, path, NULL,
                            "measures %s on %d ranks (%s) again; give one log per collective "
                            "and group size",
                            prof_coll_name(c->op), c->n_ranks, c->algo);
    int rc = meas_add_coll(m, c, err);
    if (rc)
        return rc;
    if (!m->env.device[0] && r->device[0])
        snprintf(m->env.device, sizeof m->env.device, "%s", r->device);
    if (c->n_ranks > m->env.ranks) {
        m->env.ranks = c->n_ranks;
        m->env.nodes = c->nodes;
        m->env.gpus_per_node = c->n_ranks / c->nodes;
    }
    return ERR_OK;
}

int cal_import(const char *const *paths, int n, const nccltests_hint_t *hint, meas_set_t *m,
               cal_notes_t *notes, err_t *err)
{
    nccltests_reading_t *r = malloc(sizeof *r);
    if (!r)
        return err_set(err, ERR_RUNTIME, "out of memory importing logs");
    int rc = ERR_OK, imported = 0;
    for (int i = 0; i < n && !rc; i++) {
        if ((rc = nccltests_read_file(paths[i], hint, r, err)))
            break;
        for (int k = 0; k < r->n_notes; k++)
            note(notes, "%s", r->notes[k]);
        if (!r->modeled) {
            note(notes, "%s: a %s table (%d sizes, %d ranks) read but not imported: the "
                        "profile models all_reduce, all_gather, reduce_scatter, broadcast, "
                        "sendrecv and alltoall",
                 paths[i], r->collective, r->series.n, r->series.n_ranks);
            continue;
        }
        if (!(rc = import_reading(paths[i], r, m, err)))
            imported++;
    }
    free(r);
    if (!rc && imported == 0)
        rc = err_setf(err, ERR_INPUT, paths[0], NULL,
                      "no log of a collective the profile models (all_reduce, all_gather, "
                      "reduce_scatter, broadcast, sendrecv, alltoall)");
    return rc;
}

/* ------------------------------------------------------------ fitting */

static int fit_memory_part(const meas_set_t *m, profile_t *out, cal_notes_t *notes, err_t *err)
{
    size_t n = 0, n_copy = 0;
    for (size_t i = 0; i < m->n_mem; i++)
        if (strcmp(m->mem[i].kernel, "copy") == 0)
            n_copy++;
        else
            n++;
    if (m->launch_us > 0)
        out->kernel_launch_us = m->launch_us;
    if (n < 3) {
        if (m->n_mem > 0)
            note(notes, "memory: %zu kernel measurements; the bandwidth fit needs 3 (kept the "
                        "base profile's efficiency)", n);
        return ERR_OK;
    }
    double *x = malloc(2 * n * sizeof *x), *copy_bw = malloc((n_copy ? n_copy : 1) * sizeof *copy_bw);
    if (!x || !copy_bw) {
        free(x);
        free(copy_bw);
        return err_set(err, ERR_RUNTIME, "out of memory fitting memory kernels");
    }
    double *y = x + n;
    size_t j = 0, jc = 0;
    for (size_t i = 0; i < m->n_mem; i++) {
        if (strcmp(m->mem[i].kernel, "copy") == 0) {
            copy_bw[jc++] = m->mem[i].bytes / (m->mem[i].time_us * 1e-6) / 1e9;
            continue;
        }
        x[j] = m->mem[i].bytes;
        y[j] = m->mem[i].time_us * 1e-6;
        j++;
    }
    /* fit_line wants no order; sizes may repeat across kernels */
    fit_line_t f;
    int rc = fit_line(x, y, n, &f, err);
    if (rc) {
        err_prefix(err, "memory kernels");
        goto out;
    }
    double bw_gbs = 1 / f.beta / 1e9;
    double eff = bw_gbs / out->mem_bw_peak_gbs;
    if (eff > 1.2)
        note(notes, "memory: measured %.0f GB/s is %.0f%% of the catalog's %.0f GB/s; capped at "
                    "120%%", bw_gbs, 100 * eff, out->mem_bw_peak_gbs);
    out->mem_bw_eff = clampd(eff, 0.01, 1.2);
    double copy_med = 0;
    if (jc > 0) {
        /* median copy bandwidth over sizes (insertion sort: few points) */
        for (size_t a = 1; a < jc; a++)
            for (size_t b = a; b > 0 && copy_bw[b - 1] > copy_bw[b]; b--) {
                double t = copy_bw[b];
                copy_bw[b] = copy_bw[b - 1];
                copy_bw[b - 1] = t;
            }
        copy_med = jc % 2 ? copy_bw[jc / 2] : 0.5 * (copy_bw[jc / 2 - 1] + copy_bw[jc / 2]);
    }
    prof_fit_t pf;
    memset(&pf, 0, sizeof pf);
    snprintf(pf.name, sizeof pf.name, "memory");
    snprintf(pf.model, sizeof pf.model,
             "time = alpha + bytes / bw over %zu memory-bound kernel runs (bytes read + "
             "written), weighted least squares on relative error",
             n);
    fit_quality(&pf, &f.q);
    double se_beta = sqrt(f.cov[1][1]);
    fit_param(&pf, "bw_gbs", bw_gbs, se_beta / (f.beta * f.beta) / 1e9);
    fit_param(&pf, "bw_efficiency", out->mem_bw_eff,
              se_beta / (f.beta * f.beta) / 1e9 / out->mem_bw_peak_gbs);
    fit_param(&pf, "alpha_us", f.alpha * 1e6, sqrt(f.cov[0][0]) * 1e6);
    if (copy_med > 0)
        fit_param(&pf, "copy_bw_gbs", copy_med, 0);
    if (m->launch_us > 0)
        fit_param(&pf, "launch_us", m->launch_us, 0);
    if ((rc = prof_add_fit(out, &pf, err)))
        goto out;
    char copy_txt[64] = "";
    if (copy_med > 0)
        snprintf(copy_txt, sizeof copy_txt, "; device-to-device copy %.0f GB/s", copy_med);
    snprintf(out->mem_source, sizeof out->mem_source,
             "measured by scaleplan calibrate on %s (%s): memory-bound kernels %.0f GB/s = %.3f of "
             "%.0f GB/s (fit over %zu runs, R^2 %.4f, worst error %.1f%%)%s; kernel launch %.2f "
             "us%s; reserved_gib and fragmentation from the base profile",
             m->env.device[0] ? m->env.device : "?", m->env.date, bw_gbs, out->mem_bw_eff,
             out->mem_bw_peak_gbs, n, f.q.r2, 100 * f.q.worst_rel_err, copy_txt,
             out->kernel_launch_us, m->launch_us > 0 ? " (empty kernel back to back)" : "");
out:
    free(x);
    free(copy_bw);
    return rc;
}

static double sustained_of(const meas_set_t *m, const profile_t *base, const cal_fit_opts_t *o,
                           err_t *err, int *rc)
{
    *rc = ERR_OK;
    switch (o->sustained) {
    case CAL_SUSTAINED_BASE:
        return clampd(base->sustained_factor, 0.1, 1.2);
    case CAL_SUSTAINED_MEASURED:
        if (!(m->sustained_tflops > 0 && m->burst_tflops > 0)) {
            *rc = err_setf(err, ERR_INPUT, NULL, "--sustained-factor",
                           "'measured' needs a sustained GEMM run in the measurements");
            return 1;
        }
        return clampd(m->sustained_tflops / m->burst_tflops, 0.1, 1.2);
    default:
        return clampd(o->sustained_value, 0.1, 1.2);
    }
}

static int fit_gemm_part(const meas_set_t *m, const profile_t *base, const cal_fit_opts_t *o,
                         profile_t *out, cal_notes_t *notes, err_t *err)
{
    int rc;
    if (m->env.sm_count > 0)
        out->sm_count = m->env.sm_count;
    if (m->launch_us > 0)
        out->gemm_launch_us = m->launch_us;
    double factor = sustained_of(m, base, o, err, &rc);
    if (rc)
        return rc;
    if (m->n_gemm == 0)
        return ERR_OK;
    prof_gemm_point_t *pts = malloc(m->n_gemm * sizeof *pts);
    if (!pts)
        return err_set(err, ERR_RUNTIME, "out of memory fitting GEMMs");
    size_t n_table = 0;
    for (size_t i = 0; i < m->n_gemm; i++) {
        const meas_gemm_t *g = &m->gemm[i];
        pts[i] = (prof_gemm_point_t){g->dtype, g->m, g->n, g->k, g->tflops};
        if (g->table && out->peak_tflops[g->dtype] > 0)
            n_table++;
    }
    fit_gemm_t f;
    if ((rc = fit_gemm(out, pts, m->n_gemm, &f, err))) {
        err_prefix(err, "GEMM fit");
        free(pts);
        return rc;
    }
    if (f.n_skipped)
        note(notes, "gemm: %zu measurements in dtypes without a catalog peak for %s were not "
                    "fitted", f.n_skipped, out->gpu);
    fit_gemm_apply(&f, out);
    out->sustained_factor = factor;
    /* The table: the transformer and square shapes (all points when none is
     * marked), scaled by the sustained factor so it applies there too. */
    free(out->gemm_points);
    out->gemm_points = NULL;
    out->n_gemm_points = 0;
    bool all = n_table == 0;
    out->gemm_points = malloc(m->n_gemm * sizeof *out->gemm_points);
    if (!out->gemm_points) {
        free(pts);
        return err_set(err, ERR_RUNTIME, "out of memory storing the GEMM table");
    }
    for (size_t i = 0; i < m->n_gemm; i++) {
        if (!(out->peak_tflops[pts[i].dtype] > 0) || !(all || m->gemm[i].table))
            continue;
        prof_gemm_point_t p = pts[i];
        p.tflops *= factor;
        out->gemm_points[out->n_gemm_points++] = p;
    }
    free(pts);
    prof_fit_t pf;
    memset(&pf, 0, sizeof pf);
    snprintf(pf.name, sizeof pf.name, "gemm");
    snprintf(pf.model, sizeof pf.model,
             "TFLOP/s = peak x max_eff[dtype] x (1 - wave_penalty x wave loss) x K/(K + k_half) "
             "with memory roofline and launch; Levenberg-Marquardt on log time; tile %dx%d of 9 "
             "by residual",
             f.tile_m, f.tile_n);
    fit_quality(&pf, &f.q);
    char dts[64] = "";
    for (int d = 0; d < DTYPE_COUNT; d++)
        if (f.max_eff[d] > 0) {
            char name[24];
            snprintf(name, sizeof name, "%s.max_eff", dtype_name((dtype_t)d));
            fit_param(&pf, name, f.max_eff[d], f.se_max_eff[d]);
            size_t l = strlen(dts);
            snprintf(dts + l, sizeof dts - l, "%s%s %.3f", l ? ", " : "", dtype_name((dtype_t)d),
                     f.max_eff[d]);
        }
    fit_param(&pf, "k_half", f.k_half, f.se_k_half);
    fit_param(&pf, "wave_penalty", f.wave_penalty, f.se_wave_penalty);
    fit_param(&pf, "tile_m", f.tile_m, 0);
    fit_param(&pf, "tile_n", f.tile_n, 0);
    if ((rc = prof_add_fit(out, &pf, err)))
        return rc;
    char sus[160] = "";
    if (m->sustained_tflops > 0)
        snprintf(sus, sizeof sus, "; sustained run %.0f of %.0f TFLOP/s burst (%.3f)",
                 m->sustained_tflops, m->burst_tflops, m->sustained_tflops / m->burst_tflops);
    snprintf(out->gemm_source, sizeof out->gemm_source,
             "measured by scaleplan calibrate on %s (%s, cuBLASLt %s): %zu GEMMs, TN layout, "
             "random inputs rotating beyond L2, median of repeats; fitted max efficiency %s, "
             "k_half %.0f, wave_penalty %.2f, tile %dx%d (R^2 %.4f, worst error %.1f%%, 95%% "
             "prediction +-%.1f%%); %zu shapes kept as the interpolation table; "
             "sustained_factor %.3f (%s)%s",
             m->env.device[0] ? m->env.device : "?", m->env.date, m->env.cublas, f.n_used, dts,
             f.k_half, f.wave_penalty, f.tile_m, f.tile_n, f.q.r2, 100 * f.q.worst_rel_err,
             100 * f.q.pi95_rel, out->n_gemm_points, factor,
             o->sustained == CAL_SUSTAINED_BASE
                 ? "the base profile's training-level share, validated on published runs"
             : o->sustained == CAL_SUSTAINED_MEASURED ? "sustained / burst rate"
             : factor == 1                            ? "the measured rates as they are"
                                                      : "given with --sustained-factor",
             sus);
    for (int d = 0; d < DTYPE_COUNT; d++)
        if (f.max_eff[d] > 0) /* measured here: the GEMM source says how */
            out->gemm_dtype_source[d][0] = '\0';
    for (int d = 0; d < DTYPE_COUNT; d++)
        if (f.max_eff[d] <= 0 && base->gemm_max_eff[d] > 0)
            note(notes, "gemm: %s not measured; its efficiency stays the base profile's",
                 dtype_name((dtype_t)d));
    return ERR_OK;
}

/* The name of a series' fit record. */
static void series_name(const meas_coll_t *c, char *buf, size_t cap)
{
    if (c->nodes > 1)
        snprintf(buf, cap, "%s/%d@%dn/%s", prof_coll_name(c->op), c->n_ranks, c->nodes, c->algo);
    else
        snprintf(buf, cap, "%s/%d/%s", prof_coll_name(c->op), c->n_ranks, c->algo);
}

/* Fit one series' regimes (x = bus bytes, y = seconds). */
static int fit_series(const meas_coll_t *c, fit_regimes_t *r, cal_notes_t *notes, err_t *err)
{
    double factor = prof_bus_factor(c->op, c->n_ranks);
    char name[PROF_FIT_NAME_MAX];
    series_name(c, name, sizeof name);
    if (c->n_ranks < 2 || !(factor > 0)) {
        note(notes, "%s: one rank moves no bus bytes; measured for the code path, not fitted",
             name);
        return 1;
    }
    if (c->n < 3) {
        note(notes, "%s: %d sizes; a fit needs 3 (not fitted)", name, c->n);
        return 1;
    }
    double x[MEAS_MAX_COLL_POINTS], y[MEAS_MAX_COLL_POINTS];
    for (int i = 0; i < c->n; i++) {
        x[i] = c->bytes[i] * factor;
        y[i] = c->time_us[i] * 1e-6;
    }
    int rc = fit_regimes(x, y, (size_t)c->n, PROF_MAX_LINES, r, err);
    if (rc)
        err_prefix(err, name);
    return rc;
}

static void line_of(const fit_line_t *l, prof_line_t *out)
{
    out->alpha_us = clampd(l->alpha * 1e6, 0, 1e7);
    out->busbw_gbs = clampd(1 / (l->beta * 1e9), 1e-6, 1e7);
}

static int record_series(profile_t *out, const meas_coll_t *c, const fit_regimes_t *r,
                         err_t *err)
{
    prof_fit_t pf;
    memset(&pf, 0, sizeof pf);
    series_name(c, pf.name, sizeof pf.name);
    snprintf(pf.model, sizeof pf.model,
             "time = min over %d regimes of alpha + bus bytes / busbw (bus factor %.4g, %d "
             "rank%s on %d node%s); weighted least squares, regimes by F test",
             r->n_lines, prof_bus_factor(c->op, c->n_ranks), c->n_ranks,
             c->n_ranks == 1 ? "" : "s", c->nodes, c->nodes == 1 ? "" : "s");
    fit_quality(&pf, &r->q);
    pf.n_regimes = r->n_lines;
    for (int i = 0; i < r->n_lines; i++) {
        prof_regime_t *g = &pf.regimes[i];
        prof_line_t l;
        line_of(&r->lines[i], &l);
        size_t f0 = r->first[i], n = r->count[i];
        g->min_bytes = c->bytes[f0];
        g->max_bytes = c->bytes[f0 + n - 1];
        g->n_points = (int)n;
        g->alpha_us = l.alpha_us;
        g->busbw_gbs = l.busbw_gbs;
        g->worst_rel_err = cap_rel(r->lines[i].q.worst_rel_err);
        g->pi95_rel = cap_rel(r->lines[i].q.pi95_rel);
    }
    return prof_add_fit(out, &pf, err);
}

/* Replace out's tables of (op, n) with the fitted lines. */
static int set_table(profile_t *out, const meas_coll_t *c, const fit_regimes_t *r, err_t *err)
{
    int k = 0;
    for (int i = 0; i < out->n_tables; i++)
        if (!(out->tables[i].op == c->op && out->tables[i].n_ranks == c->n_ranks))
            out->tables[k++] = out->tables[i];
    out->n_tables = k;
    if (out->n_tables == PROF_MAX_TABLES)
        return err_set(err, ERR_INPUT, "more than %d collective tables", PROF_MAX_TABLES);
    prof_coll_table_t *t = &out->tables[out->n_tables++];
    memset(t, 0, sizeof *t);
    t->op = c->op;
    t->n_ranks = c->n_ranks;
    t->n_lines = r->n_lines;
    for (int i = 0; i < r->n_lines; i++)
        line_of(&r->lines[i], &t->lines[i]);
    snprintf(t->source, sizeof t->source,
             "%s: %d sizes %.0f B - %.0f B fitted by scaleplan calibrate: time = alpha + bus "
             "bytes/busbw per size regime (weighted least squares, %d regime%s by F test; R^2 %.4f, "
             "worst error %.1f%%); the fastest line wins, as NCCL picks the fastest protocol",
             c->source, c->n, c->bytes[0], c->bytes[c->n - 1], r->n_lines,
             r->n_lines == 1 ? "" : "s", r->q.r2, 100 * r->q.worst_rel_err);
    return ERR_OK;
}

/* A single-node series for (op, n) merged from the algorithm variants
 * when NCCL's default was not measured: NCCL would pick the fastest, so
 * the minimum time at each size all variants measured. */
static int merge_variants(const meas_set_t *m, int first, meas_coll_t *merged)
{
    const meas_coll_t *a = &m->coll[first];
    *merged = *a;
    snprintf(merged->algo, sizeof merged->algo, "fastest");
    int used = 1;
    for (int j = 0; j < m->n_coll; j++) {
        const meas_coll_t *b = &m->coll[j];
        if (j == first || b->op != a->op || b->n_ranks != a->n_ranks || b->nodes != 1)
            continue;
        used++;
        int k = 0;
        for (int i = 0; i < merged->n; i++) {
            int hit = -1;
            for (int q = 0; q < b->n; q++)
                if (b->bytes[q] == merged->bytes[i])
                    hit = q;
            if (hit < 0)
                continue;
            merged->bytes[k] = merged->bytes[i];
            merged->time_us[k] = fmin(merged->time_us[i], b->time_us[hit]);
            merged->busbw_gbs[k] = merged->bytes[k] * prof_bus_factor(a->op, a->n_ranks) /
                                   merged->time_us[k] / 1e3;
            k++;
        }
        merged->n = k;
    }
    snprintf(merged->source, sizeof merged->source, "fastest of %d algorithm variants (%s ...)",
             used, a->source);
    return used;
}

/* The model's time for one inter-node collective with per-GPU scale-out
 * bandwidth gbs (the measured group's span on the profile's fabrics). */
static double net_model_time(profile_t *p, const meas_coll_t *c, const fabric_t *intra,
                             double gbs, double bytes)
{
    p->net_gpu_gbs = gbs;
    coll_span_t s = {c->n_ranks, c->n_ranks / c->nodes, c->nodes, intra, NULL, gbs, 1};
    return prof_coll_time(p, c->op, &s, bytes);
}

/* Inter-node series set the network: the per-GPU scale-out bandwidth at
 * which the model reproduces the largest measured message (bisection; the
 * time falls as the bandwidth rises). All-reduce is preferred, then
 * all-gather, reduce-scatter; the default algorithm before named ones. */
static int fit_network(const meas_set_t *m, profile_t *out, cal_notes_t *notes, err_t *err)
{
    static const coll_op_t order[] = {COLL_ALL_REDUCE, COLL_ALL_GATHER, COLL_REDUCE_SCATTER};
    const meas_coll_t *best = NULL;
    for (size_t k = 0; k < sizeof order / sizeof *order && !best; k++)
        for (int pass = 0; pass < 2 && !best; pass++)
            for (int i = 0; i < m->n_coll && !best; i++) {
                const meas_coll_t *c = &m->coll[i];
                if (c->op == order[k] && c->nodes > 1 && c->n_ranks >= c->nodes && c->n > 0 &&
                    c->n_ranks % c->nodes == 0 && (pass == 1 || strcmp(c->algo, "default") == 0))
                    best = c;
            }
    if (!best)
        return ERR_OK;
    fabric_t intra;
    int rc = fabric_load(out->intra_fabric, &intra, err);
    if (rc)
        return rc;
    int big = 0;
    for (int i = 1; i < best->n; i++)
        if (best->bytes[i] > best->bytes[big])
            big = i;
    double bytes = best->bytes[big], t_meas = best->time_us[big] * 1e-6;
    double lo = 0.01, hi = 1e5;
    if (net_model_time(out, best, &intra, hi, bytes) > t_meas) {
        /* faster than the model allows even with unlimited NICs: the node's
         * own fabric bounds it; keep the fastest */
        out->net_gpu_gbs = hi;
        note(notes, "network: %s over %d nodes is faster than the model's node fabric allows; "
                    "the network is not the limit there",
             prof_coll_name(best->op), best->nodes);
    } else {
        for (int it = 0; it < 200 && hi / lo > 1 + 1e-9; it++) {
            double mid = sqrt(lo * hi);
            if (net_model_time(out, best, &intra, mid, bytes) > t_meas)
                lo = mid;
            else
                hi = mid;
        }
        out->net_gpu_gbs = hi;
    }
    size_t l = strlen(out->net_source);
    snprintf(out->net_source + l, sizeof out->net_source - l,
             "; measured_gbs_per_gpu %.2f: measured by scaleplan calibrate: the per-GPU scale-out "
             "bandwidth at which this model reproduces %s of %.0f B on %d ranks over %d nodes "
             "(%.3f ms, bus bandwidth %.1f GB/s)",
             out->net_gpu_gbs, prof_coll_name(best->op), bytes, best->n_ranks, best->nodes,
             t_meas * 1e3, prof_bus_factor(best->op, best->n_ranks) * bytes / t_meas / 1e9);
    note(notes, "network: %s over %d nodes sets the scale-out bandwidth to %.1f GB/s per GPU "
                "(inter-node DP, PP and CP costs use it)",
         prof_coll_name(best->op), best->nodes, out->net_gpu_gbs);
    return ERR_OK;
}

static int fit_coll_part(const meas_set_t *m, profile_t *out, cal_notes_t *notes, err_t *err)
{
    fit_regimes_t *r = malloc(sizeof *r);
    meas_coll_t *merged = malloc(sizeof *merged);
    int rc = ERR_OK;
    if (!r || !merged) {
        rc = err_set(err, ERR_RUNTIME, "out of memory fitting collectives");
        goto out;
    }
    for (int i = 0; i < m->n_coll; i++) {
        const meas_coll_t *c = &m->coll[i];
        int st = fit_series(c, r, notes, err);
        if (st == 1)
            continue;
        if (st) {
            rc = st;
            goto out;
        }
        if ((rc = record_series(out, c, r, err)))
            goto out;
        if (c->nodes > 1)
            continue;
        bool has_default = false, first_variant = true;
        for (int j = 0; j < m->n_coll; j++) {
            const meas_coll_t *o = &m->coll[j];
            if (o->op == c->op && o->n_ranks == c->n_ranks && o->nodes == 1) {
                if (strcmp(o->algo, "default") == 0)
                    has_default = true;
                else if (j < i)
                    first_variant = false;
            }
        }
        if (strcmp(c->algo, "default") == 0) {
            if ((rc = set_table(out, c, r, err)))
                goto out;
        } else if (!has_default && first_variant) {
            int used = merge_variants(m, i, merged);
            if (used == 1) {
                if ((rc = set_table(out, c, r, err)))
                    goto out;
            } else {
                int s2 = fit_series(merged, r, notes, err);
                if (s2 && s2 != 1) {
                    rc = s2;
                    goto out;
                }
                if (s2 == 0 && (rc = set_table(out, merged, r, err)))
                    goto out;
            }
        }
    }
    /* Ring and tree all-reduce across nodes give the tree's bandwidth
     * relative to the ring's (at the largest size both measured). */
    for (int i = 0; i < m->n_coll; i++) {
        const meas_coll_t *ring = &m->coll[i];
        if (ring->op != COLL_ALL_REDUCE || ring->nodes < 2 || strcmp(ring->algo, "ring") != 0)
            continue;
        for (int j = 0; j < m->n_coll; j++) {
            const meas_coll_t *tree = &m->coll[j];
            if (tree->op != COLL_ALL_REDUCE || tree->nodes != ring->nodes ||
                tree->n_ranks != ring->n_ranks || strcmp(tree->algo, "tree") != 0)
                continue;
            int bi = -1, bj = -1;
            for (int a = 0; a < ring->n; a++)
                for (int b = 0; b < tree->n; b++)
                    if (ring->bytes[a] == tree->bytes[b] && (bi < 0 || ring->bytes[a] > ring->bytes[bi])) {
                        bi = a;
                        bj = b;
                    }
            if (bi < 0)
                continue;
            double ratio = ring->time_us[bi] / tree->time_us[bj];
            out->tree_bw_factor = clampd(ratio, 0.01, 2);
            size_t l = strlen(out->net_source);
            snprintf(out->net_source + l, sizeof out->net_source - l,
                     "; tree_bw_factor %.3f measured by scaleplan calibrate: ring / tree "
                     "all-reduce time at %.0f B on %d ranks over %d nodes",
                     out->tree_bw_factor, ring->bytes[bi], ring->n_ranks, ring->nodes);
        }
    }
    if ((rc = fit_network(m, out, notes, err)))
        goto out;
out:
    free(r);
    free(merged);
    return rc;
}

int cal_fit(const meas_set_t *m, const profile_t *base, const cal_fit_opts_t *o, profile_t *out,
            cal_notes_t *notes, err_t *err)
{
    cal_fit_opts_t def;
    if (!o) {
        cal_fit_opts_default(&def);
        o = &def;
    }
    if (notes)
        notes->n = 0;
    if (m->n_gemm == 0 && m->n_mem == 0 && m->n_coll == 0 && !(m->launch_us > 0))
        return err_set(err, ERR_INPUT, "the measurements hold nothing to fit");
    int rc = prof_copy(out, base, err);
    if (rc)
        return rc;
    snprintf(out->origin, sizeof out->origin, "measured");
    out->has_env = true;
    prof_env_t *e = &out->env;
    memset(e, 0, sizeof *e);
    snprintf(e->device, sizeof e->device, "%s", m->env.device);
    snprintf(e->driver, sizeof e->driver, "%s", m->env.driver);
    snprintf(e->cuda_runtime, sizeof e->cuda_runtime, "%s", m->env.cuda_runtime);
    snprintf(e->cublas, sizeof e->cublas, "%s", m->env.cublas);
    snprintf(e->nccl, sizeof e->nccl, "%s", m->env.nccl);
    e->nodes = m->env.nodes > 0 ? m->env.nodes : 1;
    e->gpus_per_node = m->env.gpus_per_node > 0 ? m->env.gpus_per_node : 1;
    e->ranks = m->env.ranks > 0 ? m->env.ranks : 1;
    snprintf(e->date, sizeof e->date, "%s", m->env.date);
    snprintf(e->command, sizeof e->command, "%s", o->command ? o->command : m->env.command);
    /* memory first: the GEMM model's roofline uses the bandwidth */
    if ((rc = fit_memory_part(m, out, notes, err)) ||
        (rc = fit_gemm_part(m, base, o, out, notes, err)) ||
        (rc = fit_coll_part(m, out, notes, err)))
        goto fail;
    char what[96] = "";
    if (m->n_gemm)
        strcat(what, "GEMMs, ");
    if (m->n_mem)
        strcat(what, "memory, ");
    if (m->n_coll)
        strcat(what, "collectives, ");
    if (what[0])
        what[strlen(what) - 2] = '\0';
    snprintf(out->description, sizeof out->description, "Measured (%s) on %s%s%s; the rest from %s",
             what[0] ? what : "launch", m->env.device[0] ? m->env.device : "an unnamed device",
             m->env.date[0] ? " " : "", m->env.date,
             base->origin[0] && strcmp(base->origin, "default") == 0 ? "the default profile"
                                                                       : "the base profile");
    return ERR_OK;
fail:
    prof_free(out);
    return rc;
}

/* ------------------------------------------------------------ measuring plan */

typedef struct {
    double h, ffn;          /* hidden, FFN width */
    double q_heads, kv_heads, head_dim;
    bool gated;             /* SwiGLU: the first FFN GEMM is 2 x ffn wide */
} shape_model_t;

/* Layer shapes of real models (models/catalog): Llama 3 8B and 70B,
 * GPT-3 175B, Llama 3 405B. */
static const shape_model_t shape_models[] = {
    {4096, 14336, 32, 8, 128, true},
    {8192, 28672, 64, 8, 128, true},
    {12288, 49152, 96, 96, 128, false},
    {16384, 53248, 128, 8, 128, true},
};

typedef struct {
    gpub_shape_t *v;
    size_t n, cap;
} shapes_t;

static int shapes_add(shapes_t *s, dtype_t d, double m, double n, double k, bool table,
                      double max_flops, err_t *err)
{
    if (2 * m * n * k > max_flops)
        return ERR_OK; /* too slow to time in this plan */
    for (size_t i = 0; i < s->n; i++)
        if (s->v[i].dtype == d && s->v[i].m == m && s->v[i].n == n && s->v[i].k == k) {
            s->v[i].table = s->v[i].table || table;
            return ERR_OK;
        }
    if (s->n == s->cap) {
        size_t cap = s->cap ? 2 * s->cap : 256;
        gpub_shape_t *g = realloc(s->v, cap * sizeof *g);
        if (!g)
            return err_set(err, ERR_RUNTIME, "out of memory planning GEMMs");
        s->v = g;
        s->cap = cap;
    }
    s->v[s->n++] = (gpub_shape_t){d, m, n, k, table};
    return ERR_OK;
}

/* Forward GEMM (M, N, K) and its two backward GEMMs: dX = dY W^T is
 * (M, K, N), dW = X^T dY is (K, N, M). */
static int add_fwd_bwd(shapes_t *s, dtype_t d, double M, double N, double K, double max_flops,
                       err_t *err)
{
    int rc;
    if ((rc = shapes_add(s, d, M, N, K, true, max_flops, err)) ||
        (rc = shapes_add(s, d, M, K, N, true, max_flops, err)) ||
        (rc = shapes_add(s, d, K, N, M, true, max_flops, err)))
        return rc;
    return ERR_OK;
}

static int plan_model_shapes(shapes_t *s, dtype_t d, bool quick, bool fwd_only, double max_flops,
                             err_t *err)
{
    static const double tps_q[] = {1, 8}, tps_f[] = {1, 2, 4, 8};
    static const double ms_q[] = {4096}, ms_f[] = {2048, 8192};
    const double *tps = quick ? tps_q : tps_f, *ms = quick ? ms_q : ms_f;
    size_t n_tp = quick ? 2 : 4, n_m = quick ? 1 : 2;
    size_t n_models = sizeof shape_models / sizeof shape_models[0];
    if (quick)
        n_models = 3;
    int rc;
    for (size_t a = 0; a < n_models; a++)
        for (size_t t = 0; t < n_tp; t++)
            for (size_t b = 0; b < n_m; b++) {
                const shape_model_t *sm = &shape_models[a];
                double tp = tps[t], M = ms[b], h = sm->h;
                double qkv = (sm->q_heads + 2 * sm->kv_heads) * sm->head_dim / tp;
                double fc1 = (sm->gated ? 2 : 1) * sm->ffn / tp, fc2_k = sm->ffn / tp;
                double g[4][3] = {{M, qkv, h}, {M, h, h / tp}, {M, fc1, h}, {M, h, fc2_k}};
                for (int i = 0; i < 4; i++) {
                    rc = fwd_only ? shapes_add(s, d, g[i][0], g[i][1], g[i][2], true, max_flops, err)
                                  : add_fwd_bwd(s, d, g[i][0], g[i][1], g[i][2], max_flops, err);
                    if (rc)
                        return rc;
                }
            }
    return ERR_OK;
}

static int plan_gemm(const gpub_device_t *dev, const gpu_t *gpu, bool quick, shapes_t *s,
                     err_t *err)
{
    /* the longest single GEMM a plan times: 50 ms quick, 250 ms full, at
     * half of the dtype's peak */
    double max_s = quick ? 0.05 : 0.25;
    static const dtype_t order[] = {DTYPE_BF16, DTYPE_FP8, DTYPE_FP16, DTYPE_TF32, DTYPE_FP32};
    int rc;
    for (size_t o = 0; o < sizeof order / sizeof order[0]; o++) {
        dtype_t d = order[o];
        if (!gpub_supports(dev, d) || !(gpu->peak_tflops[d] > 0))
            continue;
        if (quick && d == DTYPE_FP32)
            continue;
        double max_flops = max_s * 0.5 * gpu->peak_tflops[d] * 1e12;
        for (double x = 256; x <= 16384; x *= 2)
            if ((rc = shapes_add(s, d, x, x, x, true, max_flops, err)))
                return rc;
        if (d == DTYPE_BF16 || !quick) {
            if ((rc = plan_model_shapes(s, d, quick, false, max_flops, err)))
                return rc;
        } else if (d == DTYPE_FP8) {
            if ((rc = plan_model_shapes(s, d, quick, true, max_flops, err)))
                return rc;
        }
        /* the grid feeds the fit only */
        if (d == DTYPE_BF16 || !quick) {
            static const double grid_q[] = {512, 2048, 8192},
                                grid_f[] = {256, 512, 1024, 2048, 4096, 8192, 16384};
            const double *gr = quick ? grid_q : grid_f;
            size_t ng = quick ? 3 : 7;
            if (!quick && d != DTYPE_BF16)
                ng = 6; /* up to 8192 for the other dtypes */
            for (size_t a = 0; a < ng; a++)
                for (size_t b = 0; b < ng; b++)
                    for (size_t c = 0; c < ng; c++)
                        if ((rc = shapes_add(s, d, gr[a], gr[b], gr[c], false, max_flops, err)))
                            return rc;
        }
    }
    return ERR_OK;
}

/* Progress over the whole measurement. */
typedef struct {
    progress_t *bar;
    double base;
} cal_progress_t;

static void on_progress(void *ctx, double done)
{
    cal_progress_t *p = ctx;
    progress_update(p->bar, p->base + done);
}

#define MEM_KERNELS 7 /* copy, rmw, add, gelu, rmsnorm, layernorm, adamw */

int cal_measure(const dist_group_t *world, const cal_measure_opts_t *o, meas_set_t *m,
                err_t *err)
{
    int n_dev = 0, rc;
    if ((rc = gpub_device_count(&n_dev, err)))
        return rc;
    bool mpi = world && world->size > 1;
    int rank = world ? world->rank : 0;
    /* rank 0's GPU: ordinal 0 in one process; under MPI the node-local
     * rank's (collbench picks the same). */
    int ordinal = 0;
    int local = dist_local_rank();
    if (mpi && local >= 0 && n_dev > 0)
        ordinal = local % n_dev;
    gpub_device_t dev;
    if ((rc = gpub_device_info(ordinal, &dev, err)))
        return rc;
    snprintf(m->env.device, sizeof m->env.device, "%s", dev.name);
    snprintf(m->env.driver, sizeof m->env.driver, "%s", dev.driver);
    snprintf(m->env.cuda_runtime, sizeof m->env.cuda_runtime, "%s", dev.runtime);
    snprintf(m->env.cublas, sizeof m->env.cublas, "%s", dev.cublas);
    m->env.sm_count = dev.sm_count;
    m->env.l2_bytes = dev.l2_bytes;
    m->env.memory_bytes = dev.memory_bytes;
    meas_now_utc(m->env.date, sizeof m->env.date);
    if (o->collectives && (rc = collb_nccl_version(m->env.nccl, sizeof m->env.nccl, err)))
        return rc;
    if ((rc = cal_resolve_gpu(m, NULL, err)))
        return rc;
    gpu_t gpu;
    if ((rc = gpu_load(m->env.gpu, &gpu, err)))
        return rc;
    int n_local = o->gpus > 0 && o->gpus < n_dev ? o->gpus : n_dev;
    if (o->gpus > n_dev)
        return err_setf(err, ERR_INPUT, NULL, "--gpus", "%d GPUs asked for, %d visible", o->gpus,
                        n_dev);

    shapes_t shapes = {NULL, 0, 0};
    double mem_sizes[16];
    size_t n_mem = 0;
    for (double b = 1 << 20; b <= (double)(1 << 30); b *= o->quick ? 4 : 2)
        mem_sizes[n_mem++] = b;
    collb_plan_t cp;
    memset(&cp, 0, sizeof cp);
    for (int i = 0; i < COLL_OP_COUNT; i++)
        cp.ops[cp.n_ops++] = (coll_op_t)i;
    cp.min_bytes = 8;
    cp.max_bytes = o->quick ? (double)(1 << 30) : 4.0 * (1 << 30);
    /* two buffers of the largest size must fit in a quarter of the memory */
    while (cp.max_bytes > (double)(1 << 30) && 2 * cp.max_bytes > 0.25 * dev.memory_bytes)
        cp.max_bytes /= 2;
    cp.warmup = o->quick ? 2 : 5;
    cp.iters = o->quick ? 8 : 20;
    cp.algos[cp.n_algos++] = "default";
    cp.algos[cp.n_algos++] = "ring";
    cp.algos[cp.n_algos++] = "tree";
    cp.timeout_s = o->timeout_s;
    cp.group_sizes[cp.n_groups++] = 0;
    if (!o->quick && !mpi)
        for (int g = 2; g < n_local && cp.n_groups < COLLB_MAX_GROUPS; g *= 2)
            cp.group_sizes[cp.n_groups++] = g;

    if (rank == 0 && o->gemm && (rc = plan_gemm(&dev, &gpu, o->quick, &shapes, err)))
        goto out;
    double total = 0;
    if (rank == 0) {
        total += o->gemm ? (double)shapes.n + 1 : 0;
        total += o->memory ? (double)(n_mem * MEM_KERNELS) + 1 : 0;
    }
    total += o->collectives ? collb_work(&cp, mpi ? world->size : n_local) : 0;
    cal_progress_t pr = {rank == 0 ? progress_create("calibrating", total) : NULL, 0};
    gpub_timing_t timing = {o->quick ? 5 : 9, o->quick ? 2.0 : 10.0, o->quick ? 20.0 : 100.0};
    if (rank == 0 && o->memory) {
        if ((rc = gpub_launch(ordinal, &m->launch_us, &m->launch_sync_us, err)))
            goto out_bar;
        pr.base += 1;
        progress_update(pr.bar, pr.base);
        if ((rc = gpub_memory(ordinal, mem_sizes, n_mem, &timing, m, on_progress, &pr, err)))
            goto out_bar;
        pr.base += (double)(n_mem * MEM_KERNELS);
    }
    if (rank == 0 && o->gemm) {
        size_t skipped = 0;
        if ((rc = gpub_gemm(ordinal, shapes.v, shapes.n, &timing, m, &skipped, on_progress, &pr,
                            err)))
            goto out_bar;
        pr.base += (double)shapes.n;
        m->sustained_s = o->quick ? 3 : 10;
        if ((rc = gpub_gemm_sustained(ordinal, 8192, m->sustained_s, &m->burst_tflops,
                                      &m->sustained_tflops, err)))
            goto out_bar;
        pr.base += 1;
        progress_update(pr.bar, pr.base);
    }
    if (o->collectives) {
        if ((rc = collb_run(world, n_local, &cp, m, on_progress, &pr, err)))
            goto out_bar;
    } else {
        m->env.nodes = 1;
        m->env.gpus_per_node = n_local;
        m->env.ranks = 1;
    }
out_bar:
    progress_destroy(pr.bar);
out:
    free(shapes.v);
    return rc;
}

/* ------------------------------------------------------------ show */

static const char *fmt_bytes(double b, char *buf, size_t cap)
{
    static const char *unit[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    int u = 0;
    while (b >= 1024 && u < 4) {
        b /= 1024;
        u++;
    }
    if (b == floor(b))
        snprintf(buf, cap, "%.0f %s", b, unit[u]);
    else
        snprintf(buf, cap, "%.1f %s", b, unit[u]);
    return buf;
}

int cal_show(FILE *f, const profile_t *p)
{
    char a[32], b[32];
    fprintf(f, "profile: %s (%s)\n  %s\n", p->gpu, p->origin, p->description);
    if (p->has_env) {
        const prof_env_t *e = &p->env;
        fprintf(f, "measured on %s, %d node%s x %d GPU%s (%d rank%s)%s%s\n",
                e->device[0] ? e->device : "(unnamed device)", e->nodes, e->nodes == 1 ? "" : "s",
                e->gpus_per_node, e->gpus_per_node == 1 ? "" : "s", e->ranks,
                e->ranks == 1 ? "" : "s", e->date[0] ? ", " : "", e->date);
        fprintf(f, "  CUDA driver %s, runtime %s, cuBLAS %s, NCCL %s\n",
                e->driver[0] ? e->driver : "-", e->cuda_runtime[0] ? e->cuda_runtime : "-",
                e->cublas[0] ? e->cublas : "-", e->nccl[0] ? e->nccl : "-");
        if (e->command[0])
            fprintf(f, "  made by: %s\n", e->command);
    } else {
        fprintf(f, "no calibration record (built from datasheets and published measurements)\n");
    }
    fprintf(f, "\nGEMM model: tile %dx%d, k_half %.0f, wave_penalty %.3f, launch %.2f us, "
               "sustained_factor %.3f, %zu table points\n",
            p->tile_m, p->tile_n, p->k_half, p->wave_penalty, p->gemm_launch_us,
            p->sustained_factor, p->n_gemm_points);
    for (int d = 0; d < DTYPE_COUNT; d++)
        if (p->gemm_max_eff[d] > 0)
            fprintf(f, "  %-5s max efficiency %.4f of %.1f TFLOP/s\n", dtype_name((dtype_t)d),
                    p->gemm_max_eff[d], p->peak_tflops[d]);
    fprintf(f, "memory: %.3f of %.0f GB/s, kernel launch %.2f us\n", p->mem_bw_eff,
            p->mem_bw_peak_gbs, p->kernel_launch_us);
    if (p->n_fits > 0) {
        fprintf(f, "\nfits (R^2 on log scale; errors relative to the measurements)\n");
        fprintf(f, "  %-28s %7s %9s %10s %12s\n", "fit", "points", "R^2", "worst err",
                "95% pred.");
        for (int i = 0; i < p->n_fits; i++) {
            const prof_fit_t *x = &p->fits[i];
            fprintf(f, "  %-28s %7d %9.5f %9.2f%% %10s%.1f%%\n", x->name, x->n_points, x->r2,
                    100 * x->worst_rel_err, "+-", 100 * x->pi95_rel);
            fprintf(f, "      model: %s\n", x->model);
            for (int j = 0; j < x->n_params; j++) {
                if (x->param_se[j] > 0)
                    fprintf(f, "      %-22s %12.6g +- %.3g\n", x->param_names[j], x->params[j],
                            x->param_se[j]);
                else
                    fprintf(f, "      %-22s %12.6g\n", x->param_names[j], x->params[j]);
            }
            for (int j = 0; j < x->n_regimes; j++) {
                const prof_regime_t *r = &x->regimes[j];
                fprintf(f,
                        "      %9s - %-9s alpha %9.2f us  busbw %9.2f GB/s  (%d points, worst "
                        "%.1f%%, 95%% pred. +-%.1f%%)\n",
                        fmt_bytes(r->min_bytes, a, sizeof a), fmt_bytes(r->max_bytes, b, sizeof b),
                        r->alpha_us, r->busbw_gbs, r->n_points, 100 * r->worst_rel_err,
                        100 * r->pi95_rel);
            }
        }
    }
    fprintf(f, "\ncollective tables (inside a node, fabric %s): time = min over lines of alpha "
               "+ bus bytes / busbw\n",
            p->intra_fabric);
    for (int i = 0; i < p->n_tables; i++) {
        const prof_coll_table_t *t = &p->tables[i];
        char n[16];
        if (t->n_ranks)
            snprintf(n, sizeof n, "%d", t->n_ranks);
        else
            snprintf(n, sizeof n, "any");
        fprintf(f, "  %-15s n=%-4s", prof_coll_name(t->op), n);
        for (int j = 0; j < t->n_lines; j++)
            fprintf(f, "%s%.1f us + B/%.1f GB/s", j ? " | " : " ", t->lines[j].alpha_us,
                    t->lines[j].busbw_gbs);
        fprintf(f, "\n");
    }
    fprintf(f, "network: %s, efficiency %.2f, hop %.1f us, tree_bw_factor %.3f\n", p->net_fabric,
            p->net_efficiency, p->net_hop_us, p->tree_bw_factor);
    return ferror(f) ? ERR_RUNTIME : ERR_OK;
}
