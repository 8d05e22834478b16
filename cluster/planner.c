#include "cluster/planner.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cluster/duration.h"

static const char *const objective_names[] = {"makespan", "jct", "cost"};

int cplan_objective_find(const char *name)
{
    for (int i = 0; name && i < 3; i++)
        if (strcmp(name, objective_names[i]) == 0)
            return i;
    return -1;
}

const char *cplan_objective_name(cplan_objective_t o)
{
    return objective_names[o];
}

static int cmp_int(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

int cplan_sizes(const cjob_t *j, int pool_gpus, int *out, int *asked)
{
    int lo = j->min_gpus > 0 ? j->min_gpus : j->gpus;
    int hi = j->max_gpus > 0 ? j->max_gpus : j->gpus;
    int all[CPLAN_MAX_SIZES + 2], n = 0;
    hi = hi < pool_gpus ? hi : pool_gpus;
    lo = lo < hi ? lo : hi;
    all[n++] = j->gpus; /* first: never cut off below */
    all[n++] = hi;
    for (int s = lo; s < hi && n < CPLAN_MAX_SIZES; s *= 2)
        all[n++] = s;
    qsort(all, (size_t)n, sizeof *all, cmp_int);
    int m = 0;
    for (int i = 0; i < n; i++)
        if (m == 0 || all[i] != out[m - 1])
            out[m++] = all[i];
    for (int i = 0; i < m; i++)
        if (out[i] == j->gpus)
            *asked = i;
    return m;
}

/* A (model, GPU, size) priced once per call. */
typedef struct {
    const char *model, *gpu; /* borrowed */
    int gpus, rc;            /* rc: ERR_INPUT when no layout fits */
    double tokens_per_s, mfu;
    char layout[96];
    char why[ERR_MSG_MAX];   /* the simulator's message when rc */
} memo_t;

typedef struct {
    memo_t *m;
    int n, cap;
    catalog_t *cat;
} memos_t;

/* The memo of (model, gpu, gpus), priced now if new; NULL on OOM or a
 * runtime error (err set). */
static const memo_t *priced(memos_t *c, const char *model, const char *gpu, int gpus, err_t *err)
{
    for (int i = 0; i < c->n; i++)
        if (c->m[i].gpus == gpus && !strcmp(c->m[i].model, model) && !strcmp(c->m[i].gpu, gpu))
            return &c->m[i];
    if (c->n == c->cap) {
        int cap = c->cap ? 2 * c->cap : 32;
        memo_t *g = realloc(c->m, (size_t)cap * sizeof *g);
        if (!g) {
            err_set(err, ERR_RUNTIME, "out of memory");
            return NULL;
        }
        c->m = g;
        c->cap = cap;
    }
    memo_t *e = &c->m[c->n];
    memset(e, 0, sizeof *e);
    e->model = model;
    e->gpu = gpu;
    e->gpus = gpus;
    err_t quiet;
    e->rc = cdur_tokens_per_s(model, gpu, gpus, c->cat, &e->tokens_per_s, &e->mfu, e->layout,
                              (int)sizeof e->layout, &quiet);
    if (e->rc == ERR_RUNTIME) {
        *err = quiet;
        return NULL;
    }
    if (e->rc)
        snprintf(e->why, sizeof e->why, "%s", quiet.msg);
    c->n++;
    return e;
}

/* One job's curve: priced at each size where a layout fits, or scaled. */
static int curve_of(memos_t *c, const cjobs_t *l, const cjob_t *j, const char *gpu, int pool,
                    cplan_curve_t *cv, err_t *err)
{
    int sizes[CPLAN_MAX_SIZES], asked = 0, n = cplan_sizes(j, pool, sizes, &asked);
    const char *why = NULL; /* the simulator's message at the asked size */
    memset(cv, 0, sizeof *cv);
    for (int k = 0; k < n; k++) {
        int64_t ms = (int64_t)ceil((double)j->duration_ms * j->gpus / sizes[k]);
        const memo_t *m = NULL;
        if (j->model && j->tokens > 0) {
            const char *on = j->gpu_type ? j->gpu_type : gpu;
            if (!on || !(m = priced(c, j->model, on, sizes[k], err)))
                return on ? err->code
                          : err_set(err, ERR_INPUT, "%s: line %d: model: say which GPU the "
                                    "pool has (--gpu NAME)", l->path ? l->path : "jobs", j->line);
            if (m->rc) { /* no layout fits at this size: not a candidate */
                why = k == asked ? m->why : why;
                continue;
            }
            double t = ceil(j->tokens / m->tokens_per_s * 1000.0); /* as cdur_fill */
            if (t > (double)CJOBS_MAX_MS)
                return err_set(err, ERR_INPUT, "%s: line %d: tokens: job '%s' would run %.3g s "
                               "on %d GPUs (more than the replay takes)",
                               l->path ? l->path : "jobs", j->line, j->name, t / 1000, sizes[k]);
            ms = (int64_t)t;
        }
        if (k == asked)
            cv->asked = cv->n;
        cv->gpus[cv->n] = sizes[k];
        cv->duration_ms[cv->n] = ms > 0 ? ms : 1;
        snprintf(cv->layout[cv->n], sizeof cv->layout[0], "%s", m ? m->layout : "");
        cv->mfu[cv->n] = m ? m->mfu : j->mfu;
        cv->n++;
    }
    if (cv->n == 0 || cv->gpus[cv->asked] != j->gpus)
        return err_set(err, ERR_INPUT, "%s: line %d: model: %s", l->path ? l->path : "jobs",
                       j->line, why ? why : "no layout fits on the GPUs it asks for");
    return ERR_OK;
}

int cplan_curves(const cjobs_t *l, const char *gpu, int pool_gpus, catalog_t *cat,
                 cplan_curve_t *curves, int *n_linear, progress_t *bar, err_t *err)
{
    memos_t c = {NULL, 0, 0, cat};
    int rc = ERR_OK, lin = 0;
    for (int i = 0; !rc && i < l->n; i++) {
        rc = curve_of(&c, l, &l->jobs[i], gpu, pool_gpus, &curves[i], err);
        lin += !(l->jobs[i].model && l->jobs[i].tokens > 0) && curves[i].n > 1;
        progress_update(bar, i + 1);
    }
    free(c.m);
    if (n_linear)
        *n_linear = lin;
    return rc;
}

/* The search's state: the jobs at the sizes tried, replayed. */
typedef struct {
    const cplan_curve_t *curves;
    creplay_config_t cfg;
    cjobs_t view;         /* borrows the names; gpus and durations are the plan's */
    cplan_objective_t obj;
    long replays;
} search_t;

/* A plan's score, compared lexicographically (objective, then a tie-break). */
typedef struct {
    double v[2];
    double makespan_s, jct_mean_s;
    const cpolicy_t *policy;
} score_t;

static bool better(const score_t *a, const score_t *b)
{
    return a->v[0] < b->v[0] || (a->v[0] == b->v[0] && a->v[1] < b->v[1]);
}

/* Replay the plan choice under pol into *s. */
static int judge_one(search_t *x, const int *choice, const cpolicy_t *pol, score_t *s,
                     err_t *err)
{
    for (int i = 0; i < x->view.n; i++) {
        x->view.jobs[i].gpus = x->curves[i].gpus[choice[i]];
        x->view.jobs[i].duration_ms = x->curves[i].duration_ms[choice[i]];
    }
    x->cfg.policy = pol;
    creplay_result_t r;
    int rc = creplay_run(&x->view, &x->cfg, &r, err);
    if (rc)
        return rc;
    x->replays++;
    double cost = (double)r.gpu_ms / 3.6e6;
    s->makespan_s = r.makespan_s;
    s->jct_mean_s = r.jct_mean_s;
    s->policy = pol;
    s->v[0] = x->obj == CPLAN_MAKESPAN ? r.makespan_s : x->obj == CPLAN_JCT ? r.jct_mean_s : cost;
    s->v[1] = x->obj == CPLAN_MAKESPAN ? r.jct_mean_s : r.makespan_s;
    creplay_result_free(&r);
    return ERR_OK;
}

/* The plan's better score of FIFO and EASY backfill (FIFO on a tie). */
static int judge(search_t *x, const int *choice, score_t *s, err_t *err)
{
    score_t b;
    int rc = judge_one(x, choice, cpolicy_find("fifo"), s, err);
    if (!rc && !(rc = judge_one(x, choice, cpolicy_find("backfill"), &b, err)) && better(&b, s))
        *s = b;
    return rc;
}

/* order[n]: jobs by the GPU time they ask for, largest first (ties by
 * index; insertion sort, stable). */
static void order_by_work(const cplan_curve_t *c, int n, int *order)
{
    for (int i = 0; i < n; i++) {
        double w = (double)c[i].gpus[c[i].asked] * (double)c[i].duration_ms[c[i].asked];
        int k = i;
        for (; k > 0; k--) {
            const cplan_curve_t *p = &c[order[k - 1]];
            if ((double)p->gpus[p->asked] * (double)p->duration_ms[p->asked] >= w)
                break;
            order[k] = order[k - 1];
        }
        order[k] = i;
    }
}

/* One sweep: each job in turn at every size it may take, the best kept.
 * *changed says whether any job moved. */
static int sweep(search_t *x, const int *order, int *choice, score_t *cur, bool *changed,
                 err_t *err)
{
    *changed = false;
    for (int o = 0; o < x->view.n; o++) {
        int i = order[o], keep = choice[i];
        for (int k = 0; k < x->curves[i].n; k++) {
            if (k == keep)
                continue;
            choice[i] = k;
            score_t s;
            int rc = judge(x, choice, &s, err);
            if (rc)
                return rc;
            if (better(&s, cur)) {
                *cur = s;
                keep = k;
                *changed = true;
            }
        }
        choice[i] = keep;
    }
    return ERR_OK;
}

int cplan_search(const cjobs_t *l, const cplan_curve_t *curves, const creplay_config_t *cfg,
                 cplan_objective_t obj, cplan_result_t *out, err_t *err)
{
    memset(out, 0, sizeof *out);
    int n = l->n;
    search_t x = {curves, *cfg, *l, obj, 0};
    x.view.jobs = malloc((size_t)(n > 0 ? n : 1) * sizeof *x.view.jobs);
    int *order = malloc((size_t)(n > 0 ? n : 1) * sizeof *order);
    out->choice = malloc((size_t)(n > 0 ? n : 1) * sizeof *out->choice);
    int rc = x.view.jobs && order && out->choice ? ERR_OK
                                                 : err_set(err, ERR_RUNTIME, "out of memory");
    score_t cur;
    if (!rc) {
        memcpy(x.view.jobs, l->jobs, (size_t)n * sizeof *x.view.jobs);
        x.view.cap = n;
        for (int i = 0; i < n; i++)
            out->choice[i] = curves[i].asked;
        order_by_work(curves, n, order);
        rc = judge(&x, out->choice, &cur, err);
    }
    if (!rc) {
        out->fixed_policy = cur.policy;
        out->fixed_objective = cur.v[0];
        out->fixed_makespan_s = cur.makespan_s;
        out->fixed_jct_mean_s = cur.jct_mean_s;
    }
    bool changed = true;
    while (!rc && changed && out->passes < CPLAN_MAX_PASSES) {
        rc = sweep(&x, order, out->choice, &cur, &changed, err);
        out->passes++;
    }
    free(x.view.jobs);
    free(order);
    if (rc) {
        cplan_result_free(out);
        return rc;
    }
    out->policy = cur.policy;
    out->objective = cur.v[0];
    out->replays = x.replays;
    return ERR_OK;
}

void cplan_apply(cjobs_t *l, const cplan_curve_t *curves, const cplan_result_t *plan)
{
    for (int i = 0; i < l->n; i++) {
        l->jobs[i].gpus = curves[i].gpus[plan->choice[i]];
        l->jobs[i].duration_ms = curves[i].duration_ms[plan->choice[i]];
        l->jobs[i].mfu = curves[i].mfu[plan->choice[i]];
    }
}

void cplan_result_free(cplan_result_t *r)
{
    free(r->choice);
    memset(r, 0, sizeof *r);
}
