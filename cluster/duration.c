#include "cluster/duration.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "models/layout_text.h"
#include "plan/ladder.h"
#include "plan/plan.h"
#include "sim/scenario.h"

/* One priced (model, GPU count): tokens per second of its fastest layout. */
typedef struct {
    const char *model; /* borrowed from the job list */
    const char *gpu;   /* borrowed */
    int gpus;
    double tokens_per_s;
    double mfu;        /* of that layout's step */
} priced_t;

/* Tokens per second of model on gpus x gpu, from the planner's fastest
 * layout. Errors are addressed to the job's line by the caller. */
static int price(const char *model, const char *gpu, int gpus, catalog_t *cat, double *tps,
                 double *mfu, char *layout, int cap, err_t *err)
{
    scenario_spec_t spec = {0};
    spec.model = model;
    spec.cluster.gpu = gpu;
    spec.cluster.n_gpus = gpus;
    spec.cluster.catalog = cat;
    scenario_t s;
    memset(&s, 0, sizeof s);
    plan_search_t *ps = malloc(sizeof *ps); /* large: kept off the stack */
    if (!ps)
        return err_set(err, ERR_RUNTIME, "out of memory");
    int rc = scenario_begin(&spec, &s, err);
    if (!rc)
        rc = scenario_finish(&s, NULL, err);
    if (!rc)
        rc = ladder_fastest_layout(&s, 0, ps, err);
    if (!rc)
        *tps = ps->result.tokens_per_s;
    if (!rc && mfu)
        *mfu = ps->result.mfu;
    if (!rc && layout)
        layout_text_format(&ps->layout, layout, (size_t)cap);
    scenario_free(&s);
    free(ps);
    if (!rc && !(*tps > 0))
        rc = err_set(err, ERR_RUNTIME, "the simulator gave no throughput");
    return rc;
}

static int find_priced(const priced_t *c, int n, const char *model, const char *gpu, int gpus)
{
    for (int i = 0; i < n; i++)
        if (c[i].gpus == gpus && strcmp(c[i].model, model) == 0 && strcmp(c[i].gpu, gpu) == 0)
            return i;
    return -1;
}

/* The simulator's message (about --model, --gpus, ...) addressed to the
 * job's file, line and field instead. */
static int readdress(err_t *err, const cjobs_t *l, const cjob_t *j, const char *field)
{
    char where[80];
    snprintf(where, sizeof where, "line %d: %s", j->line, field);
    return err_readdress(err, l->path ? l->path : "jobs", where);
}

/* The priced (model, GPU, size)s of one call. */
typedef struct {
    priced_t *p;
    int n;
    catalog_t *cat;
    double last_mfu; /* of the last job priced */
} cache_t;

/* j's run time on gpu: tokens over the simulated tokens per second of its
 * model on j->gpus of them (priced once per model, GPU and size). */
static int run_ms(cache_t *c, const cjobs_t *l, const cjob_t *j, const char *gpu, int64_t *ms,
                  err_t *err)
{
    int k = find_priced(c->p, c->n, j->model, gpu, j->gpus);
    if (k < 0) {
        priced_t *g = realloc(c->p, (size_t)(c->n + 1) * sizeof *g);
        if (!g)
            return err_set(err, ERR_RUNTIME, "out of memory");
        c->p = g;
        k = c->n;
        c->p[k] = (priced_t){j->model, gpu, j->gpus, 0, 0};
        if (price(j->model, gpu, j->gpus, c->cat, &c->p[k].tokens_per_s, &c->p[k].mfu, NULL, 0,
                  err))
            return readdress(err, l, j, "model");
        c->n++;
    }
    double t = ceil(j->tokens / c->p[k].tokens_per_s * 1000.0);
    if (t > (double)CJOBS_MAX_MS)
        return err_set(err, ERR_INPUT,
                       "%s: line %d: tokens: job '%s' would run %.3g s on %d x %s "
                       "(more than the replay takes)", l->path ? l->path : "jobs", j->line,
                       j->name, t / 1000, j->gpus, gpu);
    *ms = (int64_t)t;
    c->last_mfu = c->p[k].mfu;
    return ERR_OK;
}

int cdur_fill(cjobs_t *l, const char *gpu, catalog_t *cat, int *priced, err_t *err)
{
    cache_t c = {NULL, 0, cat, 0};
    int n_priced = 0, rc = ERR_OK;
    for (int i = 0; !rc && i < l->n; i++) {
        cjob_t *j = &l->jobs[i];
        if (j->duration_ms > 0 || !j->model)
            continue;
        const char *on = j->gpu_type ? j->gpu_type : gpu;
        if (!on)
            rc = err_set(err, ERR_INPUT, "%s: line %d: model: job '%s' gives a model and tokens: "
                         "say which GPU the pool has (--gpu NAME) to simulate its steps",
                         l->path ? l->path : "jobs", j->line, j->name);
        else if (!(rc = run_ms(&c, l, j, on, &j->duration_ms, err))) {
            j->mfu = c.last_mfu;
            n_priced++;
        }
    }
    free(c.p);
    if (priced)
        *priced = n_priced;
    return rc;
}

int cdur_by_group(const cjobs_t *l, const char *const *types, int n_types, catalog_t *cat,
                  int64_t **out, err_t *err)
{
    cache_t c = {NULL, 0, cat, 0};
    int64_t *d = malloc((size_t)l->n * (size_t)n_types * sizeof *d);
    int rc = d ? ERR_OK : err_set(err, ERR_RUNTIME, "out of memory");
    for (int i = 0; !rc && i < l->n; i++) {
        const cjob_t *j = &l->jobs[i];
        for (int g = 0; !rc && g < n_types; g++) {
            int64_t *at = &d[(size_t)i * (size_t)n_types + (size_t)g];
            *at = j->duration_ms;
            if (j->model && !j->gpu_type && j->tokens > 0)
                rc = run_ms(&c, l, j, types[g], at, err);
        }
    }
    free(c.p);
    if (rc)
        free(d);
    *out = rc ? NULL : d;
    return rc;
}

int cdur_tokens_per_s(const char *model, const char *gpu, int gpus, catalog_t *cat, double *tps,
                      double *mfu, char *layout, int cap, err_t *err)
{
    return price(model, gpu, gpus, cat, tps, mfu, layout, cap, err);
}
