#include "plan/islands.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "common/json.h"
#include "common/units.h"

#define SITES_FILE "sim/catalog/sites.json"

int islands_parse(const char *text, islands_t *out, err_t *err)
{
    memset(out, 0, sizeof *out);
    const char *x = text ? strchr(text, 'x') : NULL;
    char n[32];
    long a, b;
    if (!x || (size_t)(x - text) >= sizeof n)
        return err_setf(err, ERR_INPUT, NULL, "--islands",
                        "expected ISLANDSxGPUS, e.g. 2x8192 (got '%s')", text ? text : "");
    memcpy(n, text, (size_t)(x - text));
    n[x - text] = '\0';
    int rc;
    if ((rc = units_parse_int(n, "--islands (islands)", 1, 1024, &a, err)) ||
        (rc = units_parse_int(x + 1, "--islands (GPUs each)", 1, 1L << 22, &b, err)))
        return rc;
    out->n = (int)a;
    out->gpus_each = (int)b;
    return ERR_OK;
}

int islands_parse_link(const char *text, islands_t *is, err_t *err)
{
    const char *comma = text ? strchr(text, ',') : NULL;
    char bw[64];
    if (!comma || (size_t)(comma - text) >= sizeof bw)
        return err_setf(err, ERR_INPUT, NULL, "--island-link",
                        "expected BANDWIDTH,RTT, e.g. 400Gbps,20ms (got '%s')", text ? text : "");
    memcpy(bw, text, (size_t)(comma - text));
    bw[comma - text] = '\0';
    int rc;
    if ((rc = units_parse_bandwidth(bw, "--island-link (bandwidth)", &is->link_bytes_s, err)) ||
        (rc = units_parse_duration(comma + 1, "--island-link (round trip)", &is->rtt_s, err)))
        return rc;
    if (!(is->link_bytes_s > 0))
        return err_setf(err, ERR_INPUT, NULL, "--island-link",
                        "bandwidth must be above zero (got '%s')", bw);
    return ERR_OK;
}

/* One KEY=VALUE of --diloco into d. */
static int diloco_kv(const char *key, const char *val, diloco_t *d, err_t *err)
{
    long v;
    int rc;
    if (strcmp(key, "H") == 0 || strcmp(key, "h") == 0) {
        rc = units_parse_int(val, "--diloco H", 1, 1000000, &v, err);
        d->inner_steps = (int)v;
    } else if (strcmp(key, "M") == 0 || strcmp(key, "m") == 0) {
        rc = units_parse_int(val, "--diloco M", 1, 4096, &v, err);
        d->replicas = (int)v;
    } else if (strcmp(key, "fragments") == 0) {
        rc = units_parse_int(val, "--diloco fragments", 1, 4096, &v, err);
        d->fragments = (int)v;
    } else if (strcmp(key, "bits") == 0) {
        rc = units_parse_real(val, "--diloco bits", 1, 32, &d->bits, err);
    } else if (strcmp(key, "overlap") == 0 || strcmp(key, "tau") == 0) {
        rc = units_parse_real(val, "--diloco overlap", 0, 1000000, &d->overlap_steps, err);
    } else {
        return err_setf(err, ERR_INPUT, NULL, "--diloco",
                        "unknown key '%s' (H, M, fragments, bits, overlap)", key);
    }
    return rc;
}

int diloco_parse(const char *text, diloco_t *out, err_t *err)
{
    *out = (diloco_t){.on = true, .inner_steps = 500, .fragments = 1, .bits = 32};
    char buf[256];
    if (!text || strlen(text) >= sizeof buf)
        return err_set(err, ERR_INPUT, "--diloco: expected KEY=VALUE,... (too long)");
    strcpy(buf, text);
    for (char *save = NULL, *kv = strtok_r(buf, ",", &save); kv; kv = strtok_r(NULL, ",", &save)) {
        char *eq = strchr(kv, '=');
        if (!eq)
            return err_setf(err, ERR_INPUT, NULL, "--diloco",
                            "expected KEY=VALUE, e.g. H=500,M=2 (got '%s')", kv);
        *eq = '\0';
        int rc = diloco_kv(kv, eq + 1, out, err);
        if (rc)
            return rc;
    }
    if (out->overlap_steps > out->inner_steps)
        return err_setf(err, ERR_INPUT, NULL, "--diloco",
                        "overlap %.0f is more than H = %d inner steps", out->overlap_steps,
                        out->inner_steps);
    return ERR_OK;
}

int diloco_token_multiplier(catalog_t *cat, int replicas, double bits, double *mult,
                            bool *assumed, err_t *err)
{
    const cJSON *root, *arr;
    cJSON *owned = NULL;
    char origin[CATALOG_ORIGIN_MAX];
    int rc = catalog_doc(cat, SITES_FILE, &root, &owned, origin, sizeof origin, err);
    if (rc)
        return rc;
    json_ctx_t ctx = json_ctx_root(origin);
    double min_bits = 0, low = 1;
    if ((rc = json_get_array(root, "diloco", &ctx, JSON_REQUIRED, &arr, err)) ||
        (rc = json_get_double(root, "min_bits", &ctx, JSON_REQUIRED, 1, 32, &min_bits, err)) ||
        (rc = json_get_double(root, "low_bits_multiplier", &ctx, JSON_REQUIRED, 1, 10, &low, err)))
        goto out;
    int best = 0;
    *mult = 1;
    *assumed = false;
    for (int i = 0; i < cJSON_GetArraySize(arr); i++) {
        const cJSON *e = cJSON_GetArrayItem(arr, i);
        json_ctx_t ec = json_ctx_index(&ctx, i);
        int m;
        double x;
        bool a;
        if ((rc = json_get_int(e, "replicas", &ec, JSON_REQUIRED, 1, 1 << 20, &m, err)) ||
            (rc = json_get_double(e, "multiplier", &ec, JSON_REQUIRED, 1, 10, &x, err)) ||
            (rc = json_get_bool(e, "assumed", &ec, JSON_REQUIRED, &a, err)))
            goto out;
        if (m <= replicas && m >= best) { /* the largest row not above M */
            best = m;
            *mult = x;
            *assumed = a;
        }
    }
    if (bits < min_bits) {
        *mult *= low;
        *assumed = true;
    }
out:
    cJSON_Delete(owned);
    return rc;
}

/* Seconds of a ring all-reduce of bytes across n islands over the link:
 * 2 (n - 1) / n of the bytes each way, 2 (n - 1) hops of half a round trip. */
static double ring_s(const islands_t *is, double bytes, double *wire)
{
    double n = is->n;
    *wire = 2 * (n - 1) / n * bytes;
    return *wire / is->link_bytes_s + (n - 1) * is->rtt_s;
}

/* Seconds of a cross-island exchange (cross_s) left exposed by the
 * backward: each pipeline stage sends its 1/pp share after its last
 * backward, and in a 1F1B-like schedule the stages finish one micro-batch
 * backward apart (the last stage first), so the link starts about pp
 * micro-batch backwards before the step ends; the first stage's own share
 * hides only behind its last backward. Nothing hides without overlap. */
static double exposed_after_backward(const sim_input_t *in, const sim_result_t *r, double cross_s)
{
    if (!in->opt.overlap_grad_reduce)
        return cross_s;
    double pp = in->layout->pp;
    double bwd = (double)in->model->n_layers / pp * cost_total(&r->costs.bwd);
    return fmax(0, fmax(cross_s - pp * bwd, cross_s / pp - bwd));
}

static double total_params(const sim_input_t *in)
{
    model_params_t p;
    model_params(in->model, &p);
    return p.total;
}

/* Synchronous hierarchical DP: the whole gradient crosses once per step. */
static void price_sync(const sim_input_t *in, const islands_t *is, const sim_result_t *r,
                       sites_eval_t *o)
{
    double el = in->opt.reduce_bytes > 0 ? in->opt.reduce_bytes : in->layout->grad_bytes;
    o->step_s = r->step_time_s;
    o->cross_s = ring_s(is, total_params(in) * el, &o->cross_bytes);
    o->exposed_s = exposed_after_backward(in, r, o->cross_s);
    o->mean_step_s = o->step_s + o->exposed_s;
    o->utilization = o->step_s / o->mean_step_s;
    o->token_multiplier = 1;
}

/* One replica's layout and cluster: 1/M of the GPUs and of the batch. */
static int replica_input(const sim_input_t *in, int m, layout_t *l, cluster_t *c, err_t *err)
{
    const layout_t *full = in->layout;
    if (full->dp % m != 0 || full->global_batch % m != 0)
        return err_setf(err, ERR_INPUT, NULL, "--diloco",
                        "M = %d replicas must divide the data-parallel degree %d and the global "
                        "batch %d",
                        m, full->dp, full->global_batch);
    *l = *full;
    l->global_batch = full->global_batch / m;
    l->grad_accum = 0;
    *c = *in->cluster;
    c->n_gpus = full->n_gpus / m;
    return layout_finalize(l, in->model, c->n_gpus, err);
}

static int price_diloco(sim_ctx_t *ctx, catalog_t *cat, const sim_input_t *in,
                        const islands_t *is, const diloco_t *d, sites_eval_t *o, err_t *err)
{
    int m = d->replicas > 0 ? d->replicas : is->n;
    if (m % is->n != 0)
        return err_setf(err, ERR_INPUT, NULL, "--diloco",
                        "M = %d replicas must be a multiple of the %d islands", m, is->n);
    layout_t l;
    cluster_t c;
    int rc = replica_input(in, m, &l, &c, err);
    if (rc)
        return rc;
    sim_input_t ri = *in;
    ri.layout = &l;
    ri.cluster = &c;
    sim_result_t r;
    if ((rc = sim_run_step(ctx, &ri, &r, err)))
        return rc;
    o->replicas = m;
    o->step_s = r.step_time_s;
    o->cross_s = ring_s(is, total_params(in) * d->bits / 8, &o->cross_bytes);
    double round_s = d->inner_steps * o->step_s, exposed = o->cross_s;
    if (d->fragments > 1 && d->overlap_steps > 0) {
        /* each piece's exchange hides behind `overlap` inner steps; all
         * pieces together must still fit in the round */
        double piece = o->cross_s / d->fragments;
        exposed = fmax(d->fragments * fmax(0, piece - d->overlap_steps * o->step_s),
                       o->cross_s - round_s);
        exposed = fmax(0, exposed);
    }
    o->exposed_s = exposed / d->inner_steps;
    o->mean_step_s = o->step_s + o->exposed_s;
    o->utilization = round_s / (round_s + exposed);
    return diloco_token_multiplier(cat, m, d->bits, &o->token_multiplier, &o->token_assumed,
                                   err);
}

int sites_evaluate(sim_ctx_t *ctx, catalog_t *cat, const sim_input_t *in, const islands_t *is,
                   const diloco_t *d, sites_eval_t *out, err_t *err)
{
    memset(out, 0, sizeof *out);
    if (!(is->link_bytes_s > 0))
        return err_set(err, ERR_INPUT, "--island-link: bandwidth must be above zero");
    if ((long)is->n * is->gpus_each != in->layout->n_gpus)
        return err_setf(err, ERR_INPUT, NULL, "--islands",
                        "%d x %d GPUs is not the job's %d GPUs", is->n, is->gpus_each,
                        in->layout->n_gpus);
    sim_result_t one;
    int rc = sim_run_step(ctx, in, &one, err);
    if (rc)
        return rc;
    out->one_site_step_s = one.step_time_s;
    if (d && d->on)
        rc = price_diloco(ctx, cat, in, is, d, out, err);
    else
        price_sync(in, is, &one, out);
    if (rc)
        return rc;
    /* DiLoCo's M replicas each take 1/M of the batch on 1/M of the GPUs,
     * together the whole batch per inner step: one step against one step */
    out->scaling = out->one_site_step_s / out->mean_step_s;
    out->time_ratio = out->token_multiplier / out->scaling;
    return ERR_OK;
}
