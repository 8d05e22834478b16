#include "cluster/failrate.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "run/reliability.h"
#include "topologies/cluster.h"
#include "topologies/failure.h"

struct cfail {
    failure_set_t set;
    char *gpu;
    catalog_t *cat;
    char describe[400];
    err_t last;
};

/* The cluster of a job of gpus GPUs of f's type. */
static int job_cluster(const cfail_t *f, int gpus, cluster_t *c, err_t *err)
{
    cluster_spec_t spec = {0};
    spec.gpu = f->gpu;
    spec.n_gpus = gpus;
    spec.catalog = f->cat;
    return cluster_resolve(&spec, c, err);
}

cfail_t *cfail_create(const char *gpu, const char *environment, catalog_t *cat, err_t *err)
{
    if (!gpu) {
        err_setf(err, ERR_INPUT, NULL, "--gpu", "failures need the pool's GPU (--gpu NAME)");
        return NULL;
    }
    cfail_t *f = calloc(1, sizeof *f);
    if (!f || !(f->gpu = strdup(gpu))) {
        free(f);
        err_set(err, ERR_RUNTIME, "out of memory");
        return NULL;
    }
    f->cat = cat;
    cluster_t c;
    failure_choice_t choice;
    int rc = job_cluster(f, 1, &c, err);
    if (!rc)
        rc = failure_choose(environment, c.gpu.architecture, &choice, err);
    if (!rc)
        rc = failure_load_set(choice.set, &f->set, err);
    if (rc) {
        cfail_destroy(f);
        return NULL;
    }
    snprintf(f->describe, sizeof f->describe, "%s (%s)", f->set.name, choice.why);
    return f;
}

void cfail_destroy(cfail_t *f)
{
    if (!f)
        return;
    free(f->gpu);
    free(f);
}

double cfail_rate_per_hour(void *ctx, int gpus)
{
    cfail_t *f = ctx;
    cluster_t c;
    if (job_cluster(f, gpus, &c, &f->last))
        return -1;
    double all, unexpected, mtbf_h;
    rel_weekly(&f->set, &c, &all, &unexpected, &mtbf_h);
    return all / 168.0;
}

const char *cfail_error(const cfail_t *f)
{
    return f->last.msg;
}

const char *cfail_describe(const cfail_t *f)
{
    return f->describe;
}
