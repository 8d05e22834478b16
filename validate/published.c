/* The published-run replay's entry points (validate/published.h): a
 * file's rows replayed one by one, each compared with what it measured
 * (rule 6). The rules live in published_rules.c and published_setup.c,
 * the summaries in published_stats.c (publishedInt.h lists them). */
#include "validate/published.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/progress.h"
#include "common/units.h"
#include "validate/publishedInt.h"

const char *pub_metric_name(pub_metric_t m)
{
    static const char *names[] = {"tokens/s/GPU", "s/iter", "hw TFLOP/s", "model TFLOP/s"};
    return m <= PUB_MODEL_TFLOPS ? names[m] : "?";
}

/* Rule 6's last resort: a throughput or step time written in other_result
 * ("19.561 samples/s", "samples per second: 19.561", "85,459 tokens/s
 * (all GPUs)", "104.7 s/iter"). Samples and tokens a second are the whole
 * job's unless the text says "per GPU"; false when it gives none. */
static bool other_result_metric(const char *text, double seq, int gpus, double *tps_gpu,
                                double *step_s)
{
    *tps_gpu = *step_s = NAN;
    bool per_gpu = pub_has(text, "per GPU") || pub_has(text, "/GPU");
    static const char *const samples[] = {"samples/s", "samples/sec", "sequences/s", "seqs/s",
                                          "samples per second", "sequences per second"};
    static const char *const tokens[] = {"tokens/s", "tokens/sec", "tok/s", "tokens per second"};
    static const char *const steps[] = {"s/iter", "s/step", "sec/iter", "s per iteration",
                                        "seconds per iteration", "s per step",
                                        "seconds per step"};
    const char *at;
    double v;
    if ((at = pub_find_any(text, samples, sizeof samples / sizeof samples[0]))) {
        v = pub_num_before(text, at);
        if (!(isfinite(v) && v > 0))
            v = pub_num_after(at, strchr(at, ':') ? ":" : " ");
        if (isfinite(v) && v > 0 && seq > 0 && gpus > 0)
            *tps_gpu = v * seq / (per_gpu ? 1 : gpus);
    } else if ((at = pub_find_any(text, tokens, sizeof tokens / sizeof tokens[0]))) {
        v = pub_num_before(text, at);
        if (isfinite(v) && v > 0 && gpus > 0)
            *tps_gpu = per_gpu ? v : v / gpus;
    } else if ((at = pub_find_any(text, steps, sizeof steps / sizeof steps[0]))) {
        v = pub_num_before(text, at);
        if (isfinite(v) && v > 0)
            *step_s = v;
    }
    return isfinite(*tps_gpu) || isfinite(*step_s);
}

/* Rule 6's last resort: a row that gives only MFU (or HFU) is compared as
 * model (hardware) TFLOP/s, the percentage of the GPU's dense bf16 peak
 * (the basis of the Megatron, PaLM and Llama 3 papers' MFU), or of its fp8
 * peak where the row says so ("FP8 peak"). False when it gives neither. */
static bool mfu_as_tflops(const csv_t *c, int i, const gpu_t *g, const sim_result_t *res,
                          pub_row_t *v)
{
    double mfu = pub_lead_num(pub_cell(c, i, "mfu_pct"));
    double hfu = pub_lead_num(pub_cell(c, i, "hfu_pct"));
    bool use_hfu = !(isfinite(mfu) && mfu > 0);
    double pct = use_hfu ? hfu : mfu;
    if (!(isfinite(pct) && pct > 0 && pct <= 100))
        return false;
    const char *said[] = {pub_cell(c, i, "other_result"), pub_cell(c, i, "notes"),
                          pub_cell(c, i, "tflops_basis")};
    bool fp8 = false;
    for (int k = 0; k < 3; k++)
        fp8 = fp8 || pub_has(said[k], "FP8 peak");
    double peak = g->peak_tflops[fp8 ? DTYPE_FP8 : DTYPE_BF16];
    if (!(peak > 0))
        peak = g->peak_tflops[DTYPE_FP16];
    if (!(peak > 0))
        return false;
    v->metric = use_hfu ? PUB_HW_TFLOPS : PUB_MODEL_TFLOPS;
    v->published = pct / 100 * peak;
    v->predicted = use_hfu ? res->hardware_tflops_per_gpu : res->model_tflops_per_gpu;
    v->published_tps_gpu = v->predicted_tps_gpu * v->published / v->predicted;
    char what[160];
    snprintf(what, sizeof what, "only %s given: %.4g%% of the %s dense peak (%.0f TFLOP/s)",
             use_hfu ? "HFU" : "MFU", pct, fp8 ? "fp8" : "bf16", peak);
    pub_add_assumed(v, what);
    return true;
}

/* Rule 6: the result the row measured against res, the replay of its
 * layout r->s.layout, into v: its tokens/s per GPU, step time or TFLOP/s,
 * else its MFU or HFU, else a figure in other_result; v->skipped when it
 * gives none. */
static void compare_result(const csv_t *c, int i, const row_setup_t *r, const sim_result_t *res,
                           pub_row_t *v)
{
    const layout_t *l = &r->s.layout;
    double tokens_step = (double)l->global_batch * l->seq_len;
    v->predicted_tps_gpu = res->tokens_per_s / l->n_gpus;
    double tps = pub_lead_num(pub_cell(c, i, "tokens_per_sec_per_gpu"));
    double spi = pub_lead_num(pub_cell(c, i, "sec_per_iter"));
    double tflops = pub_lead_num(pub_cell(c, i, "tflops_per_gpu"));
    /* hardware FLOPs where the basis says so ("hardware FLOPs incl.
     * recompute", "HFU") */
    const char *basis = pub_cell(c, i, "tflops_basis");
    bool hw = pub_has(basis, "hardware") || pub_has_word(basis, "HFU");
    if (isfinite(tps) && tps > 0) {
        v->metric = PUB_TOKENS_PER_S;
        v->published = tps;
        v->predicted = v->predicted_tps_gpu;
        v->published_tps_gpu = tps;
    } else if (isfinite(spi) && spi > 0) {
        v->metric = PUB_STEP_TIME;
        v->published = spi;
        v->predicted = res->step_time_s;
        v->published_tps_gpu = tokens_step / spi / l->n_gpus;
    } else if (isfinite(tflops) && tflops > 0) {
        v->metric = hw ? PUB_HW_TFLOPS : PUB_MODEL_TFLOPS;
        v->published = tflops;
        v->predicted = hw ? res->hardware_tflops_per_gpu : res->model_tflops_per_gpu;
        v->published_tps_gpu = v->predicted_tps_gpu * tflops / v->predicted;
    } else if (mfu_as_tflops(c, i, &r->s.cluster.gpu, res, v)) {
        /* compared as TFLOP/s */
    } else {
        double o_tps, o_step;
        if (!other_result_metric(pub_cell(c, i, "other_result"), l->seq_len, l->n_gpus, &o_tps,
                                 &o_step)) {
            pub_skip(v, "the row gives no tokens/s, step time, TFLOP/s, MFU or HFU");
            return;
        }
        pub_add_assumed(v, "the result read from other_result");
        if (isfinite(o_tps)) {
            v->metric = PUB_TOKENS_PER_S;
            v->published = v->published_tps_gpu = o_tps;
            v->predicted = v->predicted_tps_gpu;
        } else {
            v->metric = PUB_STEP_TIME;
            v->published = o_step;
            v->predicted = res->step_time_s;
            v->published_tps_gpu = tokens_step / o_step / l->n_gpus;
        }
    }
    v->error = v->metric == PUB_STEP_TIME ? v->published / v->predicted - 1
                                          : v->predicted / v->published - 1;
}

/* Row i of c replayed into v (rules 1-6) on ctx, names looked up in cat,
 * under o (may be NULL); v->skipped when it cannot be. Nonzero only for a
 * runtime failure (err). */
static int run_row(catalog_t *cat, const csv_t *c, int i, const pub_options_t *o, sim_ctx_t *ctx,
                   pub_row_t *v, err_t *err)
{
    row_setup_t r;
    memset(&r, 0, sizeof r);
    int rc = pub_setup_row(cat, c, i, v, &r, err);
    if (rc || v->skipped)
        goto out;
    /* a catalog GPU name: as long as the field at most, never cut */
    _Static_assert(sizeof v->profile_gpu >= sizeof r.s.cluster.gpu.name,
                   "profile_gpu holds any GPU name");
    memcpy(v->profile_gpu, r.s.cluster.gpu.name, sizeof r.s.cluster.gpu.name);
    if (o && o->only_gpu && strcmp(o->only_gpu, r.s.cluster.gpu.name) != 0) {
        pub_skip(v, "another GPU");
        goto out;
    }
    if (r.fw.matched_by[0])
        pub_add_assumed(v, r.fw.matched_by);
    if (o && o->profile && strcmp(o->profile->gpu, r.s.cluster.gpu.name) == 0)
        r.s.input.profile = o->profile;
    sim_result_t res;
    if (r.open_choices) {
        bool found = false;
        bool kept = r.recompute_given || r.vpp_given;
        if ((rc = pub_open_choices(ctx, &r, true, &res, &found, err)))
            goto out;
        if (!found && kept) {
            if ((rc = pub_open_choices(ctx, &r, false, &res, &found, err)))
                goto out;
            if (found)
                pub_add_assumed(v, "nothing fits in memory with the row's recompute and "
                                   "interleaving: they are chosen too");
        }
        if (!found) {
            pub_skip(v, "no micro-batch, recompute and interleaving choice fits in memory");
            goto out;
        }
        if (r.vpp_count_open)
            pub_add_assumed(v, "interleaved without a count: the fastest count that fits");
        if (r.mb_open)
            pub_add_assumed(v, kept ? "the row gives no micro-batch: the fastest that fits"
                                    : "the row gives no micro-batch or recompute: the fastest "
                                      "choice that fits");
        v->open_choices = true;
    } else if ((rc = sim_run_step(ctx, &r.s.input, &res, err))) {
        goto out;
    }
    layout_describe(&r.s.layout, v->layout, sizeof v->layout);
    /* the row's own layout is timed whether it fits or not, and says which */
    v->fits = res.fits;
    v->memory_gib = res.memory.total_bytes / GIB;
    v->capacity_gib = res.capacity_gib;
    v->sim_model = r.s.model;
    v->sim_layout = r.s.layout;
    snprintf(v->framework, sizeof v->framework, "%s", r.fw.name);
    snprintf(v->cluster, sizeof v->cluster, "%s", r.s.cluster.name);
    compare_result(c, i, &r, &res, v);
out:
    scenario_free(&r.s);
    return rc;
}

/* The columns a file must have; any other column of the schema may be
 * left out and reads as empty. */
static const char *const REQUIRED[] = {"row_id", "model", "gpu_type", "framework"};
static const char *const METRICS[] = {"tokens_per_sec_per_gpu", "sec_per_iter", "tflops_per_gpu",
                                      "mfu_pct", "hfu_pct", "other_result"};

int pub_replay(const char *csv_path, const pub_options_t *opt, pub_row_t **rows, int *n,
               err_t *err)
{
    *rows = NULL;
    *n = 0;
    csv_t *c;
    int rc = csv_load(csv_path, &c, err);
    if (rc)
        return rc;
    for (size_t k = 0; k < sizeof REQUIRED / sizeof REQUIRED[0]; k++)
        if (!csv_get(c, 0, REQUIRED[k])) {
            csv_free(c);
            return err_setf(err, ERR_INPUT, csv_path, REQUIRED[k],
                            "missing column (the schema of shared/validation/throughput.csv)");
        }
    bool metric = false;
    for (size_t k = 0; k < sizeof METRICS / sizeof METRICS[0]; k++)
        metric = metric || csv_get(c, 0, METRICS[k]);
    if (!metric) {
        csv_free(c);
        return err_setf(err, ERR_INPUT, csv_path, NULL,
                        "no result column: give tokens_per_sec_per_gpu, sec_per_iter, "
                        "tflops_per_gpu, mfu_pct, hfu_pct or other_result (the schema of "
                        "shared/validation/throughput.csv)");
    }
    int count = csv_rows(c);
    pub_row_t *out = calloc((size_t)(count > 0 ? count : 1), sizeof *out);
    sim_ctx_t *ctx = sim_ctx_create();
    catalog_t *own = NULL, *cat = opt ? opt->catalog : NULL;
    if (!cat)
        cat = own = catalog_create();
    if (!out || !ctx || !cat) {
        rc = err_set(err, ERR_RUNTIME, "out of memory");
        goto done;
    }
    progress_t *bar = opt && opt->progress ? progress_create("replaying published runs", count)
                                           : NULL;
    for (int i = 0; i < count && !rc; i++) {
        snprintf(out[i].row_id, sizeof out[i].row_id, "%s", pub_cell(c, i, "row_id"));
        snprintf(out[i].model, sizeof out[i].model, "%s", pub_cell(c, i, "model"));
        out[i].memory_gib = out[i].capacity_gib = NAN;
        rc = run_row(cat, c, i, opt, ctx, &out[i], err);
        if (rc)
            err_prefix(err, out[i].row_id);
        progress_update(bar, i + 1);
    }
    progress_destroy(bar);
done:
    catalog_destroy(own);
    sim_ctx_destroy(ctx);
    csv_free(c);
    if (rc) {
        free(out);
        return rc;
    }
    *rows = out;
    *n = count;
    return ERR_OK;
}
