/* result: a training run's measurement in the schema of sim --json. */
#include "trainer/result.h"

#include <math.h>
#include <stdio.h>
#include <sys/resource.h>
#include <sys/stat.h>

#include "common/json.h"
#include "models/layout_json.h"

/* The HF config of a model given as a file, to carry in the run JSON (so
 * validate can rebuild the model); NULL for catalog names. */
static cJSON *model_config_of(const char *arg)
{
    struct stat st;
    if (!arg || stat(arg, &st) != 0 || !S_ISREG(st.st_mode))
        return NULL;
    cJSON *cfg = NULL;
    err_t ignored;
    return json_parse_file(arg, &cfg, &ignored) == 0 ? cfg : NULL;
}

cJSON *train_result_json(const train_config_t *c, const train_result_t *r, const layout_t *l,
                        const char *model_arg)
{
    const backend_info_t *in = &r->info;
    double step = r->mean_step_s;
    double tflops = step > 0 ? r->model_flops_per_step / step / r->world / 1e12 : NAN;
    double mfu = in->peak_tflops > 0 ? tflops / in->peak_tflops : NAN;
    /* exposed parts of the measured step; what no part names is "other" */
    double compute = r->mean.fwd_s + r->mean.bwd_s - r->mean.tp_s;
    double other = step - compute - r->mean.tp_s - r->mean.dp_s - r->mean.opt_s;
    if (other < 0)
        other = 0;
    const double gib = 1024.0 * 1024 * 1024;
    struct rusage ru;
    double rss = getrusage(RUSAGE_SELF, &ru) == 0 ? (double)ru.ru_maxrss * 1024 / gib : NAN;
    cJSON *o = cJSON_CreateObject(), *bd = NULL, *mem = NULL, *arr = NULL;
    bool ok = o && json_add_number(o, "step_time_s", step) &&
              json_add_number(o, "tokens_per_s", r->tokens_per_s) &&
              json_add_number(o, "model_tflops_per_gpu", tflops) &&
              json_add_number(o, "hardware_tflops_per_gpu", tflops) &&
              json_add_number(o, "mfu", mfu) && json_add_number(o, "hfu", mfu) &&
              (bd = cJSON_AddObjectToObject(o, "breakdown_s")) &&
              json_add_number(bd, "compute", compute) && json_add_number(bd, "recompute", 0) &&
              json_add_number(bd, "tp_comm", r->mean.tp_s) && json_add_number(bd, "cp_comm", 0) &&
              json_add_number(bd, "ep_comm", 0) && json_add_number(bd, "moe_imbalance", 0) &&
              json_add_number(bd, "pp_comm", 0) && json_add_number(bd, "pp_bubble", 0) &&
              json_add_number(bd, "dp_comm", r->mean.dp_s) &&
              json_add_number(bd, "optimizer", r->mean.opt_s) &&
              json_add_number(bd, "straggler", 0) && json_add_number(bd, "other", other) &&
              (mem = cJSON_AddObjectToObject(o, "memory_gib")) &&
              json_add_number(mem, "params", in->params / gib) &&
              json_add_number(mem, "grads", in->grads / gib) &&
              json_add_number(mem, "optimizer", in->optimizer / gib) &&
              json_add_number(mem, "activations", in->activations / gib) &&
              json_add_number(mem, "buffers", in->buffers / gib) &&
              json_add_number(mem, "total", (in->params + in->grads + in->optimizer +
                                             in->activations + in->buffers) / gib) &&
              json_add_number(mem, "capacity", in->capacity / gib) &&
              json_add_number(mem, "peak_measured",
                              in->peak_measured > 0 ? in->peak_measured / gib : rss) &&
              cJSON_AddBoolToObject(o, "fits", true) &&
              cJSON_AddItemToObject(o, "layout", layout_to_json(l)) &&
              cJSON_AddStringToObject(o, "model", c->model->name) &&
              cJSON_AddStringToObject(o, "gpu", in->gpu[0] ? in->gpu : "cpu") &&
              cJSON_AddStringToObject(o, "device", in->device) &&
              cJSON_AddStringToObject(o, "backend", c->backend->name) &&
              cJSON_AddStringToObject(o, "framework", "scaleplan-train") &&
              json_add_number(o, "gpus", r->world) &&
              cJSON_AddStringToObject(o, "software", in->software) &&
              json_add_number(o, "tokens_per_step", r->tokens_per_step) &&
              json_add_number(o, "first_step", (double)r->first_step) &&
              json_add_number(o, "steps", (double)(r->first_step + r->steps_run)) &&
              json_add_number(o, "seed", (double)c->seed) &&
              cJSON_AddBoolToObject(o, "overlap_grad_reduce", c->overlap) &&
              json_add_number(o, "checkpoint_blocking_s", r->ckpt_blocking_s) &&
              cJSON_AddStringToObject(o, "data", r->data_source) &&
              cJSON_AddBoolToObject(o, "dropout_disabled", c->model->dropout > 0) &&
              json_add_number(o, "data_tokens", (double)r->data_tokens) &&
              (arr = cJSON_AddArrayToObject(o, "losses"));
    for (long i = 0; ok && i < r->steps_run; i++)
        ok = cJSON_AddItemToArray(arr, cJSON_CreateNumber(r->losses[i]));
    ok = ok && (arr = cJSON_AddArrayToObject(o, "grad_norms"));
    for (long i = 0; ok && i < r->steps_run; i++)
        ok = cJSON_AddItemToArray(arr, cJSON_CreateNumber(r->grad_norms[i]));
    ok = ok && (arr = cJSON_AddArrayToObject(o, "step_times_s"));
    for (long i = 0; ok && i < r->steps_run; i++)
        ok = cJSON_AddItemToArray(arr, cJSON_CreateNumber(r->step_s[i]));
    ok = ok && json_add_number(o, "final_loss", r->steps_run ? r->losses[r->steps_run - 1] : NAN) &&
         (arr = cJSON_AddArrayToObject(o, "alerts"));
    for (int i = 0; ok && i < r->monitor.n_alerts; i++) {
        const mon_alert_t *a = &r->monitor.alerts[i];
        cJSON *e = cJSON_CreateObject();
        ok = e && cJSON_AddItemToArray(arr, e) && json_add_number(e, "step", (double)a->step) &&
             cJSON_AddStringToObject(e, "kind", a->kind) &&
             cJSON_AddStringToObject(e, "message", a->message);
    }
    if (ok && r->resume.step >= 0)
        ok = json_add_number(o, "resumed_from_step", (double)r->resume.step) &&
             cJSON_AddStringToObject(o, "resumed_from", r->resume.path);
    if (ok && r->resume.n_notes > 0) {
        ok = (arr = cJSON_AddArrayToObject(o, "checkpoints_skipped")) != NULL;
        for (int i = 0; ok && i < r->resume.n_notes; i++)
            ok = cJSON_AddItemToArray(arr, cJSON_CreateString(r->resume.notes[i]));
    }
    cJSON *cfg = model_config_of(model_arg);
    if (ok && cfg)
        ok = cJSON_AddItemToObject(o, "model_config", cfg);
    else
        cJSON_Delete(cfg);
    if (!ok) {
        cJSON_Delete(o);
        return NULL;
    }
    return o;
}

