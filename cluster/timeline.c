#include "cluster/timeline.h"

#include <stdlib.h>
#include <string.h>

int ctimeline_record(void *ctx, int job, int64_t start_ms, int64_t end_ms, int gpus, int group,
                     int how)
{
    ctimeline_t *t = ctx;
    if (end_ms <= start_ms)
        return 0; /* a run of no time (a job preempted as it started) draws nothing */
    if (t->n == t->cap) {
        int cap = t->cap ? 2 * t->cap : 256;
        cseg_t *g = realloc(t->seg, (size_t)cap * sizeof *g);
        if (!g)
            return -1;
        t->seg = g;
        t->cap = cap;
    }
    t->seg[t->n++] = (cseg_t){job, start_ms, end_ms, gpus, group, how};
    return 0;
}

/* A change of the GPUs in use: +gpus at a start, -gpus at an end. */
typedef struct {
    int64_t at_ms;
    int delta;
} change_t;

static int cmp_change(const void *a, const void *b)
{
    const change_t *x = a, *y = b;
    if (x->at_ms != y->at_ms)
        return x->at_ms < y->at_ms ? -1 : 1;
    return (x->delta > y->delta) - (x->delta < y->delta); /* ends first */
}

int ctimeline_in_use(const ctimeline_t *t, int64_t **at_ms, int **gpus, int *n, err_t *err)
{
    size_t m = 2 * (size_t)t->n;
    change_t *c = malloc((m ? m : 1) * sizeof *c);
    *at_ms = malloc((m ? m : 1) * sizeof **at_ms);
    *gpus = malloc((m ? m : 1) * sizeof **gpus);
    if (!c || !*at_ms || !*gpus) {
        free(c);
        free(*at_ms);
        free(*gpus);
        *at_ms = NULL;
        *gpus = NULL;
        return err_set(err, ERR_RUNTIME, "out of memory");
    }
    for (int i = 0; i < t->n; i++) {
        c[2 * i] = (change_t){t->seg[i].start_ms, t->seg[i].gpus};
        c[2 * i + 1] = (change_t){t->seg[i].end_ms, -t->seg[i].gpus};
    }
    qsort(c, m, sizeof *c, cmp_change);
    int k = 0, level = 0;
    for (size_t i = 0; i < m; i++) {
        level += c[i].delta;
        if (k > 0 && (*at_ms)[k - 1] == c[i].at_ms)
            k--; /* several changes at one time: the level after all of them */
        (*at_ms)[k] = c[i].at_ms;
        (*gpus)[k] = level;
        k++;
    }
    free(c);
    *n = k;
    return ERR_OK;
}

void ctimeline_free(ctimeline_t *t)
{
    free(t->seg);
    memset(t, 0, sizeof *t);
}

double ctimeline_jain(const cjobs_t *l, const creplay_result_t *r)
{
    double s = 0, s2 = 0;
    for (int i = 0; i < l->n; i++) {
        double jct = (double)(r->jobs[i].end_ms - l->jobs[i].submit_ms);
        double x = jct > 0 ? (double)l->jobs[i].duration_ms / jct : 1;
        s += x;
        s2 += x * x;
    }
    return l->n > 0 && s2 > 0 ? s * s / (l->n * s2) : 0;
}

double ctimeline_mfu_utilization(const cjobs_t *l, const creplay_result_t *r, int pool_gpus,
                                 double *covered)
{
    double weighted = 0, known = 0;
    for (int i = 0; i < l->n; i++)
        if (l->jobs[i].mfu > 0) {
            weighted += (double)r->jobs[i].gpu_ms * l->jobs[i].mfu;
            known += (double)r->jobs[i].gpu_ms;
        }
    if (covered)
        *covered = r->gpu_ms > 0 ? known / (double)r->gpu_ms : 0;
    double cap_ms = (double)pool_gpus * r->makespan_s * 1000.0;
    return cap_ms > 0 ? weighted / cap_ms : 0;
}
