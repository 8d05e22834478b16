#include "cluster/trace_out.h"

#include <stdlib.h>

#include "common/json.h"

static const char *const how_names[] = {"finished", "preempted", "failed", "reclaimed"};

/* One trace event: ph "X" (a span of dur_us) or "M" (metadata) or "C". */
static cJSON *event(cJSON *arr, const char *name, const char *ph, int tid, double ts_us)
{
    cJSON *e = cJSON_CreateObject();
    if (!e || !cJSON_AddItemToArray(arr, e)) {
        cJSON_Delete(e);
        return NULL;
    }
    bool ok = cJSON_AddStringToObject(e, "name", name) && cJSON_AddStringToObject(e, "ph", ph) &&
              json_add_number(e, "pid", 1) && json_add_number(e, "tid", tid) &&
              json_add_number(e, "ts", ts_us);
    return ok ? e : NULL;
}

static bool span(cJSON *arr, const char *name, int tid, int64_t from_ms, int64_t to_ms, int gpus)
{
    cJSON *e = event(arr, name, "X", tid, (double)from_ms * 1000), *args;
    return e && json_add_number(e, "dur", (double)(to_ms - from_ms) * 1000) &&
           (args = cJSON_AddObjectToObject(e, "args")) && json_add_number(args, "gpus", gpus);
}

/* The tracks' names and each job's wait. */
static bool job_tracks(cJSON *arr, const cjobs_t *l, const creplay_result_t *r)
{
    cJSON *e = event(arr, "thread_name", "M", 0, 0), *args;
    bool ok = e && (args = cJSON_AddObjectToObject(e, "args")) &&
              cJSON_AddStringToObject(args, "name", "GPUs in use");
    for (int i = 0; ok && i < l->n; i++) {
        ok = (e = event(arr, "thread_name", "M", i + 1, 0)) &&
             (args = cJSON_AddObjectToObject(e, "args")) &&
             cJSON_AddStringToObject(args, "name", l->jobs[i].name);
        if (ok && r->jobs[i].start_ms > l->jobs[i].submit_ms)
            ok = span(arr, "waiting", i + 1, l->jobs[i].submit_ms, r->jobs[i].start_ms, 0);
    }
    return ok;
}

static bool in_use_counter(cJSON *arr, const ctimeline_t *t, err_t *err, int *rc)
{
    int64_t *at = NULL;
    int *g = NULL, n = 0;
    if ((*rc = ctimeline_in_use(t, &at, &g, &n, err)))
        return false;
    bool ok = true;
    for (int k = 0; ok && k < n; k++) {
        cJSON *e = event(arr, "GPUs in use", "C", 0, (double)at[k] * 1000), *args;
        ok = e && (args = cJSON_AddObjectToObject(e, "args")) && json_add_number(args, "gpus", g[k]);
    }
    free(at);
    free(g);
    return ok;
}

int ctrace_write(const char *path, const cjobs_t *l, const creplay_result_t *r,
                 const ctimeline_t *t, err_t *err)
{
    cJSON *root = cJSON_CreateObject(), *arr = NULL;
    int rc = ERR_OK;
    bool ok = root && cJSON_AddStringToObject(root, "displayTimeUnit", "ms") &&
              (arr = cJSON_AddArrayToObject(root, "traceEvents")) && job_tracks(arr, l, r);
    for (int i = 0; ok && i < t->n; i++) {
        const cseg_t *s = &t->seg[i];
        ok = span(arr, how_names[s->how], s->job + 1, s->start_ms, s->end_ms, s->gpus);
    }
    ok = ok && in_use_counter(arr, t, err, &rc);
    if (!rc && !ok)
        rc = err_set(err, ERR_RUNTIME, "out of memory building the trace");
    if (!rc)
        rc = json_write_file(path, root, err);
    cJSON_Delete(root);
    return rc;
}
