/* inference_sizing: lifetime compute at a fixed loss (see the header). */
#include "plan/inference_sizing.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "common/catalog.h"
#include "common/json.h"

#define LAWS_FILE "sim/catalog/scaling_laws.json"

static int law_from_json(const cJSON *obj, const json_ctx_t *ctx, void *out, err_t *err)
{
    infsize_law_t *l = out;
    int rc;
    if ((rc = json_expect_object(obj, ctx, err)) ||
        (rc = json_get_string(obj, "name", ctx, JSON_REQUIRED, l->name, sizeof l->name, err)) ||
        (rc = json_get_double(obj, "E", ctx, JSON_REQUIRED, 0, 100, &l->e, err)) ||
        (rc = json_get_double(obj, "A", ctx, JSON_REQUIRED, 1e-9, 1e9, &l->a, err)) ||
        (rc = json_get_double(obj, "B", ctx, JSON_REQUIRED, 1e-9, 1e9, &l->b, err)) ||
        (rc = json_get_double(obj, "alpha", ctx, JSON_REQUIRED, 0.01, 2, &l->alpha, err)) ||
        (rc = json_get_double(obj, "beta", ctx, JSON_REQUIRED, 0.01, 2, &l->beta, err)) ||
        (rc = json_get_string(obj, "source", ctx, JSON_REQUIRED, l->source, sizeof l->source,
                              err)))
        return rc;
    return ERR_OK;
}

/* The file's default law name and its FLOPs per parameter and token. */
static int read_header(infsize_law_t *l, char *def, size_t cap, err_t *err)
{
    cJSON *root = NULL;
    char origin[CATALOG_ORIGIN_MAX];
    int rc = catalog_parse(LAWS_FILE, &root, origin, sizeof origin, err);
    if (rc)
        return rc;
    json_ctx_t ctx = json_ctx_root(origin);
    rc = json_get_string(root, "default", &ctx, JSON_REQUIRED, def, cap, err);
    if (!rc)
        rc = json_get_double(root, "training_flops_per_param_token", &ctx, JSON_REQUIRED, 1, 100,
                             &l->train_flops_per_param_token, err);
    if (!rc)
        rc = json_get_double(root, "inference_flops_per_param_token", &ctx, JSON_REQUIRED, 0.1,
                             100, &l->infer_flops_per_param_token, err);
    cJSON_Delete(root);
    return rc;
}

int infsize_law_load(const char *name, infsize_law_t *out, err_t *err)
{
    infsize_law_t l;
    memset(&l, 0, sizeof l);
    char def[32] = "";
    int rc = read_header(&l, def, sizeof def, err);
    if (rc)
        return rc;
    double train = l.train_flops_per_param_token, infer = l.infer_flops_per_param_token;
    if ((rc = catalog_load_named(LAWS_FILE, "laws", name && *name ? name : def, "default",
                                 LAWS_FILE, law_from_json, &l, err)))
        return rc;
    l.train_flops_per_param_token = train;
    l.infer_flops_per_param_token = infer;
    *out = l;
    return ERR_OK;
}

double infsize_loss(const infsize_law_t *l, double params, double tokens)
{
    return l->e + l->a / pow(params, l->alpha) + l->b / pow(tokens, l->beta);
}

double infsize_tokens_for_loss(const infsize_law_t *l, double params, double loss)
{
    double room = loss - l->e - l->a / pow(params, l->alpha); /* what the data term may add */
    if (!(room > 0))
        return INFINITY;
    return pow(l->b / room, 1 / l->beta);
}

double infsize_optimal_tokens(const infsize_law_t *l, double params)
{
    return pow(l->beta * l->b * pow(params, l->alpha) / (l->alpha * l->a), 1 / l->beta);
}

infsize_point_t infsize_point(const infsize_law_t *l, double params, double loss,
                              double inference_tokens)
{
    infsize_point_t p = {.params = params};
    p.train_tokens = infsize_tokens_for_loss(l, params, loss);
    p.train_flops = l->train_flops_per_param_token * params * p.train_tokens;
    p.infer_flops = l->infer_flops_per_param_token * params * inference_tokens;
    p.total_flops = p.train_flops + p.infer_flops;
    return p;
}

/* Golden-section search of the lifetime FLOPs over log N in [lo, hi]: the
 * total is unimodal there (training FLOPs fall, then rise towards the
 * loss floor; inference FLOPs rise with N). */
static double least_params(const infsize_law_t *l, double loss, double dinf, double lo,
                           double hi)
{
    const double g = (sqrt(5.0) - 1) / 2;
    double a = log(lo), b = log(hi);
    double c = b - g * (b - a), d = a + g * (b - a);
    double fc = infsize_point(l, exp(c), loss, dinf).total_flops;
    double fd = infsize_point(l, exp(d), loss, dinf).total_flops;
    while (b - a > 1e-4) {
        if (fc < fd) {
            b = d, d = c, fd = fc;
            c = b - g * (b - a);
            fc = infsize_point(l, exp(c), loss, dinf).total_flops;
        } else {
            a = c, c = d, fc = fd;
            d = a + g * (b - a);
            fd = infsize_point(l, exp(d), loss, dinf).total_flops;
        }
    }
    return exp((a + b) / 2);
}

int infsize_optimize(const infsize_law_t *l, double params, double train_tokens,
                     double inference_tokens, infsize_result_t *out, err_t *err)
{
    if (!(params > 0) || !(train_tokens > 0))
        return err_setf(err, ERR_INPUT, NULL, "--tokens",
                        "inference-aware sizing needs a model and training tokens above 0");
    if (!(inference_tokens >= 0) || !isfinite(inference_tokens))
        return err_setf(err, ERR_INPUT, NULL, "--inference-tokens",
                        "must be a token count of 0 or more");
    memset(out, 0, sizeof *out);
    out->loss = infsize_loss(l, params, train_tokens);
    out->inference_tokens = inference_tokens;
    out->given = infsize_point(l, params, out->loss, inference_tokens);
    out->given.train_tokens = train_tokens; /* exact, not re-solved */
    out->given.train_flops = l->train_flops_per_param_token * params * train_tokens;
    out->given.total_flops = out->given.train_flops + out->given.infer_flops;
    /* the smallest model that can reach the loss at all: its floor */
    double floor_n = pow(l->a / (out->loss - l->e), 1 / l->alpha);
    double n = least_params(l, out->loss, inference_tokens, floor_n * 1.0001, 4 * params);
    out->best = infsize_point(l, n, out->loss, inference_tokens);
    if (!(out->best.total_flops < out->given.total_flops))
        out->best = out->given; /* the planned model is already the least */
    out->saving = 1 - out->best.total_flops / out->given.total_flops;
    return ERR_OK;
}
