#include "plan/codec.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "common/json.h"
#include "common/units.h"

#define CODEC_FILE "sim/catalog/codecs.json"

static int dense_from_json(const cJSON *o, const json_ctx_t *ctx, codec_t *c, err_t *err)
{
    int rc;
    if ((rc = json_get_double(o, "grad_bits", ctx, JSON_REQUIRED, 0, 64, &c->grad_bits, err)) ||
        (rc = json_get_double(o, "gather_bits", ctx, JSON_REQUIRED, 0, 64, &c->gather_bits, err)) ||
        (rc = json_get_bool(o, "allreduce", ctx, JSON_REQUIRED, &c->allreduce, err)) ||
        (rc = json_get_double(o, "density", ctx, JSON_REQUIRED, 1e-6, 1, &c->density, err)) ||
        (rc = json_get_double(o, "index_bits", ctx, JSON_REQUIRED, 0, 64, &c->index_bits, err)) ||
        (rc = json_get_int(o, "lowrank", ctx, JSON_REQUIRED, 0, 65536, &c->lowrank, err)) ||
        (rc = json_get_bool(o, "hpz", ctx, JSON_REQUIRED, &c->hpz, err)) ||
        (rc = json_get_bool(o, "overlap", ctx, JSON_REQUIRED, &c->overlap, err)) ||
        (rc = json_get_double(o, "codec_bytes", ctx, JSON_REQUIRED, 0, 1e3, &c->codec_bytes, err)) ||
        (rc = json_get_double(o, "gather_codec_bytes", ctx, JSON_REQUIRED, 0, 1e3,
                              &c->gather_codec_bytes, err)) ||
        (rc = json_get_double(o, "extra_mem_bytes", ctx, JSON_REQUIRED, 0, 1e3,
                              &c->extra_mem_bytes, err)) ||
        (rc = json_get_double(o, "node_shard_bytes", ctx, JSON_REQUIRED, 0, 1e3,
                              &c->node_shard_bytes, err)))
        return rc;
    return ERR_OK;
}

static int codec_from_json(const cJSON *o, const json_ctx_t *ctx, void *out, err_t *err)
{
    codec_t *c = out;
    memset(c, 0, sizeof *c);
    int rc;
    if ((rc = json_expect_object(o, ctx, err)) ||
        (rc = json_get_string(o, "name", ctx, JSON_REQUIRED, c->name, sizeof c->name, err)) ||
        (rc = json_get_string(o, "description", ctx, JSON_REQUIRED, c->description,
                              sizeof c->description, err)) ||
        (rc = dense_from_json(o, ctx, c, err)) ||
        (rc = json_get_double(o, "token_multiplier", ctx, JSON_REQUIRED, 1, 10,
                              &c->token_multiplier, err)) ||
        (rc = json_get_double(o, "warmup_fraction", ctx, JSON_REQUIRED, 0, 1, &c->warmup_fraction,
                              err)) ||
        (rc = json_get_int(o, "zero_min", ctx, JSON_REQUIRED, 0, 3, &c->zero_min, err)) ||
        (rc = json_get_int(o, "zero_max", ctx, JSON_REQUIRED, 0, 3, &c->zero_max, err)) ||
        (rc = json_get_string(o, "frameworks", ctx, JSON_REQUIRED, c->frameworks,
                              sizeof c->frameworks, err)) ||
        (rc = json_get_string(o, "keys", ctx, JSON_REQUIRED, c->keys, sizeof c->keys, err)) ||
        (rc = json_get_string(o, "source", ctx, JSON_REQUIRED, c->source, sizeof c->source, err)) ||
        (rc = json_get_string(o, "assumed", ctx, JSON_REQUIRED, c->assumed, sizeof c->assumed,
                              err)))
        return rc;
    return ERR_OK;
}

int codec_load(catalog_t *cat, const char *name, codec_t *out, err_t *err)
{
    return catalog_lookup_named(cat, CODEC_FILE, "codecs", name, "--grad-codec",
                                "scaleplan catalog codecs",
                                codec_from_json, out, err);
}

static bool ds_true(const cJSON *o, const char *key)
{
    return cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(o, key));
}

int codec_from_ds_config(const cJSON *root, char *name, size_t cap, err_t *err)
{
    const cJSON *z = cJSON_GetObjectItemCaseSensitive(root, "zero_optimization");
    const cJSON *hpz = cJSON_GetObjectItemCaseSensitive(z, "zero_hpz_partition_size");
    const cJSON *opt = cJSON_GetObjectItemCaseSensitive(root, "optimizer");
    const cJSON *type = cJSON_GetObjectItemCaseSensitive(opt, "type");
    const cJSON *comm = cJSON_GetObjectItemCaseSensitive(root, "communication_data_type");
    bool qw = ds_true(z, "zero_quantized_weights"), qg = ds_true(z, "zero_quantized_gradients");
    bool hp = cJSON_IsNumber(hpz) && hpz->valuedouble > 1;
    const char *zpp = qw && hp && qg ? "zero++"
                      : qw && !hp && !qg ? "zero++-qwz"
                      : hp && !qw && !qg ? "zero++-hpz"
                      : qg && !qw && !hp ? "zero++-qgz"
                      : qw || hp || qg   ? "zero++" /* two of the three: priced as all */
                                         : NULL;
    const char *onebit = NULL;
    if (cJSON_IsString(type) && strcmp(type->valuestring, "OneBitAdam") == 0)
        onebit = "onebit-adam";
    else if (cJSON_IsString(type) && strcmp(type->valuestring, "OneBitLamb") == 0)
        onebit = "onebit-lamb";
    if (zpp && onebit)
        return err_setf(err, ERR_INPUT, NULL, "--grad-codec",
                        "the DeepSpeed config turns on both %s (zero_optimization) and %s "
                        "(optimizer.type); scaleplan prices one codec",
                        zpp, onebit);
    const char *pick = zpp ? zpp
                       : onebit ? onebit
                       : cJSON_IsString(comm) && strcmp(comm->valuestring, "bf16") == 0
                           ? "bf16-grads"
                           : "";
    snprintf(name, cap, "%s", pick);
    return ERR_OK;
}

int codec_load_all(codec_t **out, size_t *n, err_t *err)
{
    return catalog_load_table(CODEC_FILE, "codecs", sizeof **out, codec_from_json, (void **)out, n,
                              err);
}

bool codec_runs_on(const codec_t *c, const char *fw)
{
    const char *p = c->frameworks;
    while (fw && *p) {
        size_t n = strcspn(p, ",");
        if (n > 0 && strncmp(fw, p, n) == 0)
            return true;
        p += n + (p[n] == ',');
    }
    return false;
}

int codec_check(const codec_t *c, const char *fw, const layout_t *l, err_t *err)
{
    if (!codec_runs_on(c, fw))
        return err_setf(err, ERR_INPUT, NULL, "--grad-codec",
                        "%s is not run by %s (run by: %s)", c->name, fw ? fw : "this framework",
                        c->frameworks);
    if (l->zero < c->zero_min || l->zero > c->zero_max)
        return err_setf(err, ERR_INPUT, NULL, "--grad-codec",
                        "%s runs with ZeRO stage %d..%d, not --zero %d", c->name, c->zero_min,
                        c->zero_max, l->zero);
    return ERR_OK;
}

static bool sharded(const layout_t *l)
{
    return l->zero >= 1 || l->distributed_optimizer;
}

double codec_wire_bytes(const codec_t *c, const sim_input_t *in)
{
    const layout_t *l = in->layout;
    double g0 = in->opt.reduce_bytes > 0 ? in->opt.reduce_bytes : l->grad_bytes;
    if (c->lowrank > 0) {
        /* P (m x r) and Q (n x r) of each m x n gradient matrix, in the
         * gradient's type: r (m + n) / (m n) of its elements */
        double m = in->model->hidden, n = (double)in->model->hidden / l->tp;
        return g0 * fmin(1, c->lowrank * (m + n) / (m * n));
    }
    if (c->density < 1) {
        /* every rank's kept set all-gathered: n d (value + index) bytes in
         * an all-gather costs as an all-reduce of half that (2 (n-1)/n
         * against (n-1)/n bus traffic), or a reduce-scatter of all of it */
        double n = (double)l->dp * l->cp;
        double set = n * c->density * (c->grad_bits + c->index_bits) / 8;
        return sharded(l) ? set : set / 2;
    }
    return c->grad_bits > 0 ? c->grad_bits / 8 : g0;
}

void codec_apply(const codec_t *c, sim_input_t *in)
{
    in->opt.reduce_bytes = codec_wire_bytes(c, in);
    if (c->gather_bits > 0)
        in->opt.gather_bytes = c->gather_bits / 8;
    if (c->hpz)
        in->opt.zero3.hpz = true;
    if (!c->overlap)
        in->opt.overlap_grad_reduce = false;
}

/* Parameters one GPU holds (and reduces): the model over TP x PP, the
 * routed experts over EP too. */
static double params_on_gpu(const sim_input_t *in)
{
    model_params_t p;
    model_params(in->model, &p);
    const layout_t *l = in->layout;
    double experts = p.n_moe_layers * p.expert * in->model->moe.n_experts;
    return (p.total - experts) / ((double)l->tp * l->pp) +
           experts / ((double)l->tp * l->pp * (l->ep > 0 ? l->ep : 1));
}

double codec_time_s(const codec_t *c, const sim_input_t *in)
{
    const layout_t *l = in->layout;
    double n = params_on_gpu(in);
    double gathers = 0;
    if (l->zero >= 3) /* quantized gathers: forward and backward (hpZ's
                         secondary gathers are quantized too, DeepSpeed
                         partition_parameters.py _all_gather_coalesced) */
        gathers = (l->grad_accum > 0 ? l->grad_accum : 1) *
                  (in->opt.zero3.regather_backward ? 2.0 : 1.0);
    return prof_mem_time(in->profile, n * c->codec_bytes) +
           prof_mem_time(in->profile, gathers * n * c->gather_codec_bytes);
}

double codec_extra_gib(const codec_t *c, const sim_input_t *in)
{
    model_params_t p;
    model_params(in->model, &p);
    const layout_t *l = in->layout;
    int node = in->cluster->gpus_per_node < l->dp ? in->cluster->gpus_per_node : l->dp;
    double shard = node > 0 ? p.total / ((double)l->tp * l->pp) / node : 0;
    return (params_on_gpu(in) * c->extra_mem_bytes + shard * c->node_shard_bytes) / GIB;
}

int codec_evaluate(sim_ctx_t *ctx, const sim_input_t *in, const codec_t *c, codec_eval_t *out,
                   err_t *err)
{
    memset(out, 0, sizeof *out);
    int rc = sim_run_step(ctx, in, &out->base, err);
    if (rc)
        return rc;
    sim_input_t ci = *in;
    codec_apply(c, &ci);
    if ((rc = sim_run_step(ctx, &ci, &out->coded, err)))
        return rc;
    out->base_step_s = out->base.step_time_s;
    out->codec_s = codec_time_s(c, &ci);
    out->codec_step_s = out->coded.step_time_s + out->codec_s;
    out->mean_step_s =
        c->warmup_fraction * out->base_step_s + (1 - c->warmup_fraction) * out->codec_step_s;
    out->base_dp_exposed_s = out->base.breakdown_s[BD_DP_COMM];
    out->codec_dp_exposed_s = out->coded.breakdown_s[BD_DP_COMM];
    out->comm_saved_s = out->base_dp_exposed_s - out->codec_dp_exposed_s;
    out->speedup_compressed = out->base_step_s / out->codec_step_s;
    out->speedup = out->base_step_s / out->mean_step_s;
    out->token_multiplier = c->token_multiplier;
    out->time_ratio = out->mean_step_s * c->token_multiplier / out->base_step_s;
    out->extra_gib = codec_extra_gib(c, &ci);
    out->fits = out->coded.fits &&
                out->coded.memory.total_bytes / GIB + out->extra_gib <= out->coded.capacity_gib;
    out->worth = out->fits && out->time_ratio < 1 - 1e-9;
    return ERR_OK;
}

int codec_rung_input(const ladder_input_t *in, const rung_t *r, cluster_t *c, sim_input_t *si,
                     err_t *err)
{
    *c = *in->base;
    c->n_gpus = r->gpus;
    memset(si, 0, sizeof *si);
    int rc;
    if ((rc = plan_options(&in->space, r->framework, c->gpu.name, in->model->name,
                           r->layout.precision, &r->moe, &si->opt, err)))
        return rc;
    si->model = in->model;
    si->layout = &r->layout;
    si->cluster = c;
    si->profile = in->profile;
    return ERR_OK;
}

int codec_rung(sim_ctx_t *ctx, const ladder_input_t *in, const rung_t *r, const codec_t *c,
               codec_eval_t *out, err_t *err)
{
    cluster_t cl;
    sim_input_t si;
    int rc = codec_rung_input(in, r, &cl, &si, err);
    return rc ? rc : codec_evaluate(ctx, &si, c, out, err);
}
