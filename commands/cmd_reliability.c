/* scaleplan reliability: failures, checkpoints and restarts over a whole
 * run, by Monte Carlo. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "commands/commands.h"
#include "commands/job.h"
#include "commands/output.h"
#include "common/json.h"
#include "common/units.h"
#include "reports/jsonout.h"
#include "reports/table.h"
#include "reports/textwrap.h"

static const cmd_opt_t own_opts[] = {
    {"--sweep", NULL, NULL, "simulate 25 checkpoint intervals and compare with the chosen one",
     CMD_WORD},
    CMD_REPORT_OPT,
    {"--ladder", NULL, NULL, "interruptions per week at 32, 128, 512 and 2048 GPUs", CMD_WORD},
};
static const cmd_group_t own_group = {"Reliability command", own_opts,
                                      sizeof own_opts / sizeof own_opts[0]};

static int run_ladder(const cmd_args_t *a, err_t *err)
{
    failure_set_t fs;
    failure_guides_t guides;
    cmd_failure_pick_t pick;
    cluster_spec_t spec;
    cluster_t base;
    int rc;
    if ((rc = cmd_cluster_spec(a, &spec, err)))
        return rc;
    if (!spec.gpu && !spec.cluster)
        spec.gpu = "h100-sxm";
    spec.n_gpus = 8;
    if ((rc = cluster_resolve(&spec, &base, err)) ||
        (rc = cmd_failure_set(a, &base, NULL, &fs, &pick, err)) ||
        (rc = failure_load_guides(&guides, err)))
        return rc;
    bool machine = cmd_machine_output(a);
    cJSON *doc = cJSON_CreateObject(), *arr = NULL;
    if (!doc || !cJSON_AddStringToObject(doc, "failure_rates", fs.name) ||
        !cJSON_AddStringToObject(doc, "failure_rates_chosen",
                                 pick.set_given ? "given" : pick.choice.why) ||
        !(arr = cJSON_AddArrayToObject(doc, "ladder"))) {
        cJSON_Delete(doc);
        return err_set(err, ERR_RUNTIME, "out of memory");
    }
    static const char *hdr[] = {"GPUs", "interruptions/week", "unexpected/week", "MTBF",
                                "planning guides"};
    table_t *t = machine ? NULL : table_create(5, hdr);
    for (int c = 0; t && c < 4; c++)
        table_align_right(t, c);
    for (int i = 0; i < guides.n && !rc; i++) {
        cluster_t c = base;
        c.n_gpus = guides.rows[i].gpus;
        double all, unexpected, mtbf_h;
        rel_weekly(&fs, &c, &all, &unexpected, &mtbf_h);
        char mtbf[32];
        units_fmt_duration(mtbf_h * 3600, mtbf, sizeof mtbf);
        if (t)
            table_add_rowf(t, "%d\t%.2f\t%.2f\t%s\t%s", c.n_gpus, all, unexpected, mtbf,
                           guides.rows[i].per_week);
        cJSON *o = cJSON_CreateObject();
        if (!o || !cJSON_AddItemToArray(arr, o) || !json_add_number(o, "gpus", c.n_gpus) ||
            !json_add_number(o, "interruptions_per_week", all) ||
            !json_add_number(o, "unexpected_per_week", unexpected) ||
            !json_add_number(o, "mtbf_hours", isfinite(mtbf_h) ? mtbf_h : 0) ||
            !cJSON_AddStringToObject(o, "planning_guides", guides.rows[i].per_week))
            rc = err_set(err, ERR_RUNTIME, "out of memory");
    }
    if (!rc && t) {
        printf("Interruptions per week, failure rates '%s' (%s; %s)\n", fs.name, fs.description,
               pick.set_given ? "given" : pick.choice.why);
        rc = table_print(t, stdout, 2, 0) ? err_set(err, ERR_RUNTIME, "write failed") : 0;
        if (!rc)
            textwrap_legend(stdout, "MTBF", 2, 100);
    }
    if (!rc && machine)
        rc = cmd_output_result(a, "scaleplan reliability", doc, "ladder", err);
    cJSON_Delete(doc);
    table_destroy(t);
    return rc;
}

typedef struct {
    rel_config_t cfg;
    rel_result_t r;
    cmd_failure_pick_t pick;
    bool step_assumed;     /* no --model or --step-time: 1 s of 4M tokens */
    bool swept;
    double best_s;
    double intervals[25], goodput[25];
    int n_sweep;
} rel_run_t;

static const char *kind_label(int k)
{
    return failure_kind_name((failure_kind_t)k);
}

static int print_text(const cmd_args_t *a, const cluster_t *c, const rel_run_t *run,
                      const cmd_job_t *job)
{
    const rel_result_t *r = &run->r;
    const rel_config_t *cfg = &run->cfg;
    char b1[32], b2[32], b3[32], b4[32];
    if (cfg->duration_s > 0)
        printf("%d x %s for %.1f days\n", c->n_gpus, c->gpu.name, cfg->duration_s / 86400);
    else
        printf("%d x %s training %s tokens\n", c->n_gpus, c->gpu.name,
               units_fmt_count(cfg->target_tokens, b1, sizeof b1));
    if (job)
        printf("  step %s (%s), %s tokens/step\n",
               units_fmt_duration(cfg->step_time_s, b1, sizeof b1),
               job->searched ? "best layout found" : "given layout",
               units_fmt_count(cfg->tokens_per_step, b2, sizeof b2));
    else
        printf("  step %s, %s tokens/step%s\n", units_fmt_duration(cfg->step_time_s, b1, sizeof b1),
               units_fmt_count(cfg->tokens_per_step, b2, sizeof b2),
               run->step_assumed ? " (ASSUMED: no --model or --step-time; they only set the "
                                   "tokens trained and the warm-up)"
                                 : "");
    cmd_rel_print_defaults(a, cfg, &run->pick, r);
    printf("\n  wall time P10 %.2f d, P50 %.2f d, P90 %.2f d; goodput %.1f%% (renewal model "
           "%.1f%%)\n",
           r->wall_s_p10 / 86400, r->wall_s_p50 / 86400, r->wall_s_p90 / 86400,
           100 * r->goodput_mean, 100 * r->model_goodput);
    if (cfg->duration_s > 0)
        printf("  tokens trained in %.1f days: P50 %s (P10 %s, P90 %s)\n", cfg->duration_s / 86400,
               units_fmt_count(r->tokens_p50, b1, sizeof b1),
               units_fmt_count(r->tokens_p10, b2, sizeof b2),
               units_fmt_count(r->tokens_p90, b3, sizeof b3));
    textwrap_legend(stdout, "P10 P50 P90 MTBF", 2, 100);
    printf("  interruptions %.1f: %.1f unexpected, %.1f planned; %.1f of them struck a restart "
           "in progress\n",
           r->interruptions_mean, r->unexpected_mean, r->interruptions_mean - r->unexpected_mean,
           r->during_restart_mean);
    printf("  by kind:");
    for (int k = 0; k < FAIL_KIND_COUNT; k++)
        if (r->kind_mean[k] > 0)
            printf(" %s %.1f", kind_label(k), r->kind_mean[k]);
    printf("\n  cluster view: its %d GPUs and %d spare node%s see %.1f failures in %.1f days "
           "whatever runs on them (%.2f unexpected per 1000 node-days)\n",
           c->n_gpus, cfg->spares, cfg->spares == 1 ? "" : "s", r->cluster_failures_mean,
           r->wall_s_mean / 86400, r->per_1000_node_days);
    printf("  job MTBF %s; lost %s GPU-hours: failed work %.1f h, restarts %.1f h, checkpoint "
           "saves %.1f h\n",
           units_fmt_duration(r->mtbf_s, b1, sizeof b1),
           units_fmt_count(r->lost_gpu_hours_mean, b2, sizeof b2), r->lost_work_s_mean / 3600,
           r->restart_s_mean / 3600, r->checkpoint_s_mean / 3600);
    printf("  checkpoints of %s: %.0f written; kept %s = %.1f TB, all of them %.1f TB\n",
           units_fmt_bytes(cfg->ckpt_bytes, b1, sizeof b1), r->checkpoints_mean,
           cfg->keep_checkpoints > 0 ? units_fmt_count(cfg->keep_checkpoints, b2, sizeof b2)
                                     : "all",
           (cfg->keep_checkpoints > 0 ? fmin(cfg->keep_checkpoints, r->checkpoints_mean)
                                      : r->checkpoints_mean) *
               cfg->ckpt_bytes / 1e12,
           r->checkpoints_mean * cfg->ckpt_bytes / 1e12);
    printf("\n");
    static const char *hdr[] = {"cause", "kind", "interruptions", "share"};
    table_t *t = table_create(4, hdr);
    if (!t)
        return ERR_RUNTIME;
    table_align_right(t, 2);
    table_align_right(t, 3);
    for (int i = 0; i < r->n_classes; i++)
        table_add_rowf(t, "%s\t%s\t%.1f\t%.1f%%", r->class_name[i], kind_label(r->class_kind[i]),
                       r->class_mean[i],
                       r->interruptions_mean > 0 ? 100 * r->class_mean[i] / r->interruptions_mean
                                                 : 0);
    int rc = table_print(t, stdout, 2, 0);
    table_destroy(t);
    if (run->swept)
        printf("\n  simulated best interval %s (checked %d intervals from %s to %s); the chosen "
               "%s\n",
               units_fmt_duration(run->best_s, b1, sizeof b1), run->n_sweep,
               units_fmt_duration(run->intervals[0], b2, sizeof b2),
               units_fmt_duration(run->intervals[run->n_sweep - 1], b3, sizeof b3),
               units_fmt_duration(r->ckpt_interval_s, b4, sizeof b4));
    return rc;
}

static cJSON *rel_json(const cmd_args_t *a, const cluster_t *c, const rel_run_t *run,
                       const cmd_job_t *job)
{
    const rel_result_t *r = &run->r;
    const rel_config_t *cfg = &run->cfg;
    cJSON *o = cJSON_CreateObject(), *by = NULL, *kinds = NULL;
    bool ok = o && json_add_number(o, "wall_days_p10", r->wall_s_p10 / 86400) &&
              json_add_number(o, "wall_days_p50", r->wall_s_p50 / 86400) &&
              json_add_number(o, "wall_days_p90", r->wall_s_p90 / 86400) &&
              json_add_number(o, "wall_days_mean", r->wall_s_mean / 86400) &&
              json_add_number(o, "goodput", r->goodput_mean) &&
              json_add_number(o, "model_goodput", r->model_goodput) &&
              json_add_number(o, "interruptions_mean", r->interruptions_mean) &&
              json_add_number(o, "unexpected_interruptions_mean", r->unexpected_mean) &&
              json_add_number(o, "during_restart_mean", r->during_restart_mean) &&
              (by = cJSON_AddObjectToObject(o, "interruptions_by_cause")) &&
              (kinds = cJSON_AddObjectToObject(o, "interruptions_by_kind"));
    for (int i = 0; ok && i < r->n_classes; i++)
        ok = json_add_number(by, r->class_name[i], r->class_mean[i]);
    for (int k = 0; ok && k < FAIL_KIND_COUNT; k++)
        ok = json_add_number(kinds, kind_label(k), r->kind_mean[k]);
    ok = ok && json_add_number(o, "cluster_failures_mean", r->cluster_failures_mean) &&
         json_add_number(o, "unexpected_per_1000_node_days", r->per_1000_node_days) &&
         json_add_number(o, "checkpoint_interval_s", r->ckpt_interval_s) &&
         cJSON_AddBoolToObject(o, "checkpoint_interval_best", r->interval_best) &&
         json_add_number(o, "young_daly_interval_s", r->young_daly_s) &&
         json_add_number(o, "lost_gpu_hours", r->lost_gpu_hours_mean) &&
         json_add_number(o, "checkpoint_hours", r->checkpoint_s_mean / 3600) &&
         json_add_number(o, "restart_hours", r->restart_s_mean / 3600) &&
         json_add_number(o, "lost_work_hours", r->lost_work_s_mean / 3600) &&
         json_add_number(o, "mtbf_hours", r->mtbf_s / 3600) &&
         json_add_number(o, "unexpected_mtbf_hours", r->unexpected_mtbf_s / 3600) &&
         json_add_number(o, "checkpoint_bytes", cfg->ckpt_bytes) &&
         json_add_number(o, "checkpoint_save_s", r->save_blocking_s) &&
         json_add_number(o, "checkpoint_durable_s", r->save_write_s) &&
         json_add_number(o, "checkpoint_load_s", r->load_s) &&
         json_add_number(o, "checkpoints_written", r->checkpoints_mean) &&
         json_add_number(o, "checkpoints_kept", cfg->keep_checkpoints) &&
         json_add_number(o, "checkpoint_storage_tb",
                         (cfg->keep_checkpoints > 0 ? fmin(cfg->keep_checkpoints, r->checkpoints_mean)
                                                    : r->checkpoints_mean) *
                             cfg->ckpt_bytes / 1e12) &&
         json_add_number(o, "all_checkpoints_tb", r->checkpoints_mean * cfg->ckpt_bytes / 1e12) &&
         json_add_number(o, "step_time_s", cfg->step_time_s) &&
         json_add_number(o, "tokens_per_step", cfg->tokens_per_step) &&
         cJSON_AddBoolToObject(o, "step_assumed", run->step_assumed) &&
         json_add_number(o, "gpus", c->n_gpus) && cJSON_AddStringToObject(o, "gpu", c->gpu.name) &&
         cJSON_AddStringToObject(o, "failure_rates", cfg->failures->name) &&
         json_add_number(o, "trials", r->trials) &&
         cmd_rel_defaults_json(o, a, cfg, &run->pick, r);
    if (ok && cfg->duration_s > 0)
        ok = json_add_number(o, "days", cfg->duration_s / 86400) &&
             json_add_number(o, "tokens_mean", r->tokens_mean) &&
             json_add_number(o, "tokens_p10", r->tokens_p10) &&
             json_add_number(o, "tokens_p50", r->tokens_p50) &&
             json_add_number(o, "tokens_p90", r->tokens_p90);
    if (ok && cfg->target_tokens > 0)
        ok = json_add_number(o, "tokens", cfg->target_tokens);
    if (ok && run->swept)
        ok = json_add_number(o, "optimal_interval_s", run->best_s) &&
             cJSON_AddItemToObject(o, "interval_sweep",
                                   report_sweep_json(run->intervals, run->goodput, run->n_sweep));
    if (ok && job)
        ok = cJSON_AddStringToObject(o, "model", job->s.model.name) != NULL;
    if (!ok) {
        cJSON_Delete(o);
        return NULL;
    }
    return o;
}

static int run(const cmd_args_t *a, err_t *err)
{
    int rc = ERR_OK;
    if (cmd_has(a, "--ladder") && cmd_get(a, "--report"))
        return err_setf(err, ERR_INPUT, NULL, "--report",
                        "not available with --ladder (it is a table); report one cluster instead");
    if (cmd_has(a, "--ladder"))
        return run_ladder(a, err);
    rel_run_t run;
    memset(&run, 0, sizeof run);
    cmd_job_t job;
    bool have_job = false;
    cluster_t cl;
    cluster_spec_t spec;
    failure_set_t fs;
    double tokens, duration;
    if ((rc = cmd_run_length(a, &tokens, &duration, err)))
        return rc;
    if (!(tokens > 0) && !(duration > 0))
        return err_setf(err, ERR_INPUT, NULL, "--tokens",
                        "say how long the run is: --days 54, or --tokens 2T with --model (or "
                        "--step-time)");
    double step_time = 0, tokens_per_step = 0, ckpt = 0;
    if ((rc = cmd_get_double(a, "--step-time", &step_time, err)) ||
        (rc = cmd_get_double(a, "--tokens-per-step", &tokens_per_step, err)))
        return rc;
    if (cmd_has(a, "--model") || a->n_positional > 0) {
        if ((rc = cmd_job_setup(a, &job, err))) {
            cmd_job_free(&job);
            return rc;
        }
        have_job = true;
        cl = job.s.cluster;
        if (!(step_time > 0))
            step_time = job.step.step_time_s;
        if (!(tokens_per_step > 0))
            tokens_per_step = job.step.tokens_per_step;
        run.cfg.dp = job.s.layout.dp;
        if ((rc = cmd_checkpoint_bytes(a, &job.s.model, &ckpt, err)))
            goto out;
    } else {
        if ((rc = cmd_cluster_spec(a, &spec, err)) || (rc = cluster_resolve(&spec, &cl, err)))
            return rc;
        if (!(step_time > 0) && tokens > 0)
            return err_setf(err, ERR_INPUT, NULL, "--step-time",
                            "give --step-time (or --model to simulate it) to train a number "
                            "of tokens");
        run.step_assumed = !(step_time > 0);
        if (!(step_time > 0))
            step_time = 1;
        if (!(tokens_per_step > 0))
            tokens_per_step = SCENARIO_DEFAULT_BATCH_TOKENS;
        if (!cmd_has(a, "--checkpoint-size"))
            return err_setf(err, ERR_INPUT, NULL, "--checkpoint-size",
                            "give --checkpoint-size (or --model to derive it from the "
                            "parameters)");
        if ((rc = cmd_get_double(a, "--checkpoint-size", &ckpt, err)))
            return rc;
    }
    int dp = run.cfg.dp;
    if ((rc = cmd_failure_set(a, &cl, NULL, &fs, &run.pick, err)) ||
        (rc = cmd_rel_config(a, &cl, &fs, run.pick.choice.environment, &run.cfg, err)))
        goto out;
    run.cfg.dp = dp > 0 ? dp : 1;
    run.cfg.step_time_s = step_time;
    run.cfg.tokens_per_step = tokens_per_step;
    run.cfg.target_tokens = tokens;
    run.cfg.duration_s = tokens > 0 ? 0 : duration;
    run.cfg.ckpt_bytes = ckpt;
    if ((rc = rel_simulate(&run.cfg, &run.r, err)))
        goto out;
    if (cmd_has(a, "--sweep") || cmd_get(a, "--report")) {
        run.n_sweep = 25;
        double lo, hi;
        rel_sweep_bounds(&run.r, &lo, &hi);
        rel_config_t sweep = run.cfg;
        sweep.progress = false;
        if ((rc = rel_best_interval(&sweep, lo, hi, run.n_sweep, run.intervals, run.goodput,
                                    &run.best_s, err)))
            goto out;
        run.swept = true;
    }
    if (!cmd_machine_output(a) && print_text(a, &cl, &run, have_job ? &job : NULL))
        rc = err_set(err, ERR_RUNTIME, "write failed");
    if (!rc && cmd_wants_result(a)) {
        cJSON *j = rel_json(a, &cl, &run, have_job ? &job : NULL);
        if (!j)
            rc = err_set(err, ERR_RUNTIME, "out of memory building JSON");
        else if (!cmd_machine_output(a))
            putchar('\n');
        if (j)
            rc = cmd_output_result(a, "scaleplan reliability", j, NULL, err);
        cJSON_Delete(j);
    }
out:
    if (have_job)
        cmd_job_free(&job);
    return rc;
}

static const cmd_group_t *const groups[] = {&CMD_MODEL_OPTS,
                                         &CMD_CLUSTER_OPTS,
                                         &CMD_LAYOUT_OPTS,
                                         &CMD_SIM_OPTS,
                                         &CMD_RUN_OPTS,
                                         &CMD_REL_OPTS,
                                         &own_group,
                                         &CMD_OUTPUT_OPTS};

const cmd_command_t CMD_CMD_RELIABILITY = {
    "reliability",
    "failures, checkpoints and restarts over a whole run",
    "scaleplan reliability --gpu G --gpus N (--days D --checkpoint-size S | --model M "
    "(--days D | --tokens T)) [--storage NAME] [--environment E] [--checkpoint-every best|30m] "
    "[--sweep] [--ladder] [--json|--csv]",
    "Simulate a whole run with failures (by cause and kind, rates per wall-clock\n"
    "hour from the catalog set for the environment and GPU), checkpoints to a\n"
    "storage system and restarts that grow with the GPU count: wall time\n"
    "P10/P50/P90, goodput, tokens trained, interruptions by cause and kind, the\n"
    "cluster's failures beside the job's, lost GPU-hours, checkpoint storage in\n"
    "TB. The checkpoint interval is the best for the storage and the failure rate\n"
    "unless --checkpoint-every is given (Young/Daly is printed beside it). The step\n"
    "time comes from --step-time, or is simulated for --model (the fastest layout\n"
    "that fits when no layout is given); without either, a 1 s step of 4M tokens\n"
    "is assumed and said. Every default the answer rests on is printed.",
    groups,
    sizeof groups / sizeof groups[0],
    run,
    0,
};
