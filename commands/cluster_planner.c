#include "commands/cluster_planner.h"

#include <stdlib.h>
#include <string.h>

#include "common/clock.h"
#include "common/json.h"
#include "common/units.h"

int cluster_planner_run(cluster_planner_t *p, cjobs_t *l, creplay_config_t *cfg,
                        const char *gpu, catalog_t *cat, notes_t *notes, err_t *err)
{
    double t0 = clock_now_s();
    int lin = 0, resizable = 0, rc;
    if (cfg->n_groups > 1)
        return err_setf(err, ERR_INPUT, NULL, "--policy", "planner sizes jobs on a pool of one "
                        "GPU type; a pool of several (--cluster) is not supported with it yet");
    p->n = l->n;
    p->curves = calloc((size_t)l->n, sizeof *p->curves);
    p->asked_gpus = calloc((size_t)l->n, sizeof *p->asked_gpus);
    if (!p->curves || !p->asked_gpus)
        return err_set(err, ERR_RUNTIME, "out of memory");
    for (int i = 0; i < l->n; i++)
        p->asked_gpus[i] = l->jobs[i].gpus;
    progress_t *bar = progress_create("cluster planner: scaling curves (jobs priced)", l->n);
    rc = cplan_curves(l, gpu, cfg->gpus, cat, p->curves, &lin, bar, err);
    progress_destroy(bar);
    if (rc || (rc = cplan_search(l, p->curves, cfg, p->objective, &p->plan, err)))
        return rc;
    cplan_apply(l, p->curves, &p->plan);
    cfg->policy = p->plan.policy;
    p->search_s = clock_now_s() - t0;
    for (int i = 0; i < l->n; i++)
        resizable += p->curves[i].n > 1;
    if (!resizable)
        notes_add(notes, NOTE_ASSUMED, "--policy", "planner: no job gives a range (min_gpus, "
                  "max_gpus columns), so every job keeps the size it asks for");
    if (lin)
        notes_add(notes, NOTE_ASSUMED, "--policy", "planner: %d job%s given a duration scale%s "
                  "it by the GPUs asked over the GPUs given (perfect scaling; give model + "
                  "tokens to have it simulated)", lin, lin == 1 ? "" : "s", lin == 1 ? "s" : "");
    return ERR_OK;
}

void cluster_planner_print(const cluster_planner_t *p, const cjobs_t *l, FILE *f)
{
    const cplan_result_t *r = &p->plan;
    char a[32], b[32];
    double gain = r->fixed_objective > 0 ? 1 - r->objective / r->fixed_objective : 0;
    fprintf(f, "  planner         objective %s: %s with sizes from each job's scaling curve, "
            "queue %s\n", cplan_objective_name(p->objective),
            p->objective == CPLAN_COST ? "GPU-hours allocated" : "seconds", r->policy->name);
    fprintf(f, "    fixed sizes   (as asked, best of fifo/backfill: %s) makespan %s, mean "
            "completion %s\n", r->fixed_policy->name,
            units_fmt_duration(r->fixed_makespan_s, a, sizeof a),
            units_fmt_duration(r->fixed_jct_mean_s, b, sizeof b));
    fprintf(f, "    plan          %.1f%% %s on the objective than the fixed sizes (%ld plans "
            "replayed in %d passes, %.2f s with pricing)\n", 100 * (gain < 0 ? -gain : gain),
            gain >= 0 ? "better" : "worse", r->replays, r->passes, p->search_s);
    for (int i = 0; i < l->n; i++) {
        const cplan_curve_t *c = &p->curves[i];
        int k = r->choice[i];
        if (c->n > 1)
            fprintf(f, "    %-14s %d GPUs (asked %d, tried %d sizes)%s%s\n", l->jobs[i].name,
                    c->gpus[k], p->asked_gpus[i], c->n, c->layout[k][0] ? ": " : "",
                    c->layout[k]);
    }
}

static cJSON *job_plan(const cluster_planner_t *p, const cjob_t *j, int i)
{
    const cplan_curve_t *c = &p->curves[i];
    int k = p->plan.choice[i];
    cJSON *e = cJSON_CreateObject(), *sizes = NULL;
    bool ok = e && cJSON_AddStringToObject(e, "name", j->name) &&
              json_add_number(e, "gpus_asked", p->asked_gpus[i]) &&
              json_add_number(e, "gpus", c->gpus[k]) &&
              json_add_number(e, "duration_s", (double)c->duration_ms[k] / 1000) &&
              cJSON_AddStringToObject(e, "layout", c->layout[k]) &&
              (sizes = cJSON_AddArrayToObject(e, "curve")) != NULL;
    for (int s = 0; ok && s < c->n; s++) {
        cJSON *pt = cJSON_CreateObject();
        ok = pt && cJSON_AddItemToArray(sizes, pt);
        if (!ok)
            cJSON_Delete(pt);
        ok = ok && json_add_number(pt, "gpus", c->gpus[s]) &&
             json_add_number(pt, "duration_s", (double)c->duration_ms[s] / 1000);
    }
    if (!ok) {
        cJSON_Delete(e);
        return NULL;
    }
    return e;
}

bool cluster_planner_json(const cluster_planner_t *p, const cjobs_t *l, cJSON *j)
{
    const cplan_result_t *r = &p->plan;
    cJSON *o = cJSON_AddObjectToObject(j, "planner"), *arr = NULL;
    bool ok = o && cJSON_AddStringToObject(o, "objective", cplan_objective_name(p->objective)) &&
              cJSON_AddStringToObject(o, "queue", r->policy->name) &&
              json_add_number(o, "objective_value", r->objective) &&
              cJSON_AddStringToObject(o, "fixed_queue", r->fixed_policy->name) &&
              json_add_number(o, "fixed_objective_value", r->fixed_objective) &&
              json_add_number(o, "fixed_makespan_s", r->fixed_makespan_s) &&
              json_add_number(o, "fixed_jct_mean_s", r->fixed_jct_mean_s) &&
              json_add_number(o, "replays", (double)r->replays) &&
              (arr = cJSON_AddArrayToObject(o, "jobs")) != NULL;
    for (int i = 0; ok && i < l->n; i++) {
        cJSON *e = job_plan(p, &l->jobs[i], i);
        ok = e && cJSON_AddItemToArray(arr, e);
        if (!ok)
            cJSON_Delete(e);
    }
    return ok;
}

void cluster_planner_free(cluster_planner_t *p)
{
    free(p->curves);
    free(p->asked_gpus);
    cplan_result_free(&p->plan);
    memset(p, 0, sizeof *p);
}
