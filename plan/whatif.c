#include "plan/whatif.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/units.h"
#include "topologies/fabric.h"
#include "topologies/price.h"

/* The rerun's own copies of everything the change may touch. */
typedef struct {
    model_t model;
    cluster_t base;
    profile_t profile;
    failure_set_t failures;
    ladder_input_t in;
    ladder_t ladder;
} rerun_t;

static int apply(rerun_t *v, const rung_t *best, const char *key, const char *val, err_t *err)
{
    int rc;
    if (strcmp(key, "fabric") == 0) {
        fabric_t f;
        if ((rc = fabric_load(val, &f, err)))
            return rc;
        if (f.intra)
            v->base.intra = f;
        else
            v->base.inter = f;
        return ERR_OK;
    }
    if (strcmp(key, "price") == 0) {
        v->in.price_gpu[0] = '\0'; /* one price, the given one */
        return units_parse_price(val, "--what-if price", &v->in.usd_per_gpu_hour, err);
    }
    if (strcmp(key, "gpu") == 0) {
        cluster_spec_t spec = {.gpu = val, .n_gpus = best->gpus};
        if ((rc = cluster_resolve(&spec, &v->base, err)))
            return rc;
        prof_free(&v->profile);
        if ((rc = prof_load_default(v->base.gpu.name, &v->profile, err)))
            return rc;
        price_t pr;
        err_t ignore;
        if (price_default_for_gpu(v->base.gpu.name, best->gpus, &pr, &ignore) == 0)
            v->in.usd_per_gpu_hour = price_usd(&pr, PRICE_MID);
        if (v->in.price_gpu[0]) /* per-rung prices: the new GPU's quotes */
            snprintf(v->in.price_gpu, sizeof v->in.price_gpu, "%s", v->base.gpu.name);
        return ERR_OK;
    }
    if (strcmp(key, "gpus") == 0) {
        long g;
        if ((rc = units_parse_int(val, "--what-if gpus", 1, 1 << 24, &g, err)))
            return rc;
        v->in.min_gpus = v->in.max_gpus = (int)g;
        return ERR_OK;
    }
    if (strcmp(key, "tokens") == 0)
        return units_parse_count(val, "--what-if tokens", &v->in.tokens, err);
    return err_setf(err, ERR_INPUT, NULL, "--what-if",
                    "unknown change '%s' (fabric, price, gpu, gpus, tokens)", key);
}

int whatif_run(const ladder_input_t *in, const rung_t *best, const char *key, const char *val,
               whatif_t *w, err_t *err)
{
    memset(w, 0, sizeof *w);
    rerun_t *v = calloc(1, sizeof *v);
    if (!v)
        return err_set(err, ERR_RUNTIME, "out of memory");
    v->model = *in->model;
    v->base = *in->base;
    v->failures = *in->failures;
    int rc = prof_copy(&v->profile, in->profile, err);
    if (rc) {
        free(v);
        return rc;
    }
    v->in = *in;
    v->in.model = &v->model;
    v->in.base = &v->base;
    v->in.profile = &v->profile;
    v->in.failures = &v->failures;
    v->in.min_gpus = v->in.max_gpus = best->gpus;
    v->in.progress = false;
    snprintf(w->change, sizeof w->change, "%s=%s", key, val);
    rc = apply(v, best, key, val, err);
    if (!rc) {
        v->in.deadline_s = v->in.budget_usd = 0;
        rc = plan_ladder(&v->in, &v->ladder, err);
    }
    if (!rc) {
        const rung_t *r = &v->ladder.rung[0];
        w->ok = r->feasible;
        w->gpus = r->gpus;
        snprintf(w->why_not, sizeof w->why_not, "%s", r->why_not);
        w->days_p50 = r->days_p50;
        w->cost_usd = r->cost_usd;
        w->mfu = r->step.mfu;
        w->tokens_per_s = r->tokens_per_s;
        if (r->feasible) {
            layout_describe(&r->layout, w->layout, sizeof w->layout);
            w->best_layout = r->layout;
        }
    }
    prof_free(&v->profile);
    free(v);
    return rc;
}

int whatif_list(const ladder_input_t *in, const ladder_t *l, const char *spec, whatif_t *out,
                int *n, err_t *err)
{
    *n = 0;
    if (!spec || l->best < 0)
        return ERR_OK;
    char buf[512];
    snprintf(buf, sizeof buf, "%s", spec);
    char *save = NULL;
    for (char *item = strtok_r(buf, ",", &save); item && *n < WHATIF_MAX;
         item = strtok_r(NULL, ",", &save)) {
        char *eq = strchr(item, '=');
        if (!eq)
            return err_setf(err, ERR_INPUT, NULL, "--what-if",
                            "write key=value pairs, e.g. fabric=ib-hdr,price=3.10 (got '%s')", item);
        *eq = '\0';
        int rc = whatif_run(in, &l->rung[l->best], item, eq + 1, &out[*n], err);
        if (rc)
            return rc;
        (*n)++;
    }
    return ERR_OK;
}
