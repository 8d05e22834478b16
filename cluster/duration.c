#include "cluster/duration.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/ladder.h"
#include "sim/plan.h"
#include "sim/scenario.h"

/* One priced (model, GPU count): tokens per second of its fastest layout. */
typedef struct {
    const char *model; /* borrowed from the job list */
    const char *gpu;   /* borrowed */
    int gpus;
    double tokens_per_s;
} priced_t;

/* Tokens per second of model on gpus x gpu, from the planner's fastest
 * layout. Errors are addressed to the job's line by the caller. */
static int price(const char *model, const char *gpu, int gpus, catalog_t *cat, double *tps,
                 err_t *err)
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

int cdur_fill(cjobs_t *l, const char *gpu, catalog_t *cat, int *priced, err_t *err)
{
    priced_t *cache = NULL;
    int n_cache = 0, n_priced = 0, rc = ERR_OK;
    for (int i = 0; !rc && i < l->n; i++) {
        cjob_t *j = &l->jobs[i];
        if (j->duration_ms > 0 || !j->model)
            continue;
        const char *on = j->gpu_type ? j->gpu_type : gpu;
        if (!on) {
            rc = err_set(err, ERR_INPUT, "%s: line %d: model: job '%s' gives a model and tokens: "
                         "say which GPU the pool has (--gpu NAME) to simulate its steps",
                         l->path ? l->path : "jobs", j->line, j->name);
            break;
        }
        int k = find_priced(cache, n_cache, j->model, on, j->gpus);
        if (k < 0) {
            priced_t *g = realloc(cache, (size_t)(n_cache + 1) * sizeof *g);
            if (!g) {
                rc = err_set(err, ERR_RUNTIME, "out of memory");
                break;
            }
            cache = g;
            k = n_cache;
            cache[k] = (priced_t){j->model, on, j->gpus, 0};
            if ((rc = price(j->model, on, j->gpus, cat, &cache[k].tokens_per_s, err))) {
                readdress(err, l, j, "model");
                break;
            }
            n_cache++;
        }
        double ms = ceil(j->tokens / cache[k].tokens_per_s * 1000.0);
        if (ms > (double)CJOBS_MAX_MS) {
            rc = err_set(err, ERR_INPUT,
                         "%s: line %d: tokens: job '%s' would run %.3g s on %d GPUs "
                         "(more than the replay takes)", l->path ? l->path : "jobs", j->line,
                         j->name, ms / 1000, j->gpus);
            break;
        }
        j->duration_ms = (int64_t)ms;
        n_priced++;
    }
    free(cache);
    if (priced)
        *priced = n_priced;
    return rc;
}
