/* scaleplan reliability: failures, checkpoints and restarts over a whole
 * run, by Monte Carlo. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "cli/commands.h"
#include "cli/output.h"
#include "reports/csvout.h"
#include "cli/job.h"
#include "common/json.h"
#include "common/units.h"
#include "reports/table.h"

static const cli_opt_t own_opts[] = {
    {"--sweep", NULL, NULL, "find the best checkpoint interval (and compare with Young/Daly)",
     CLI_WORD},
    CLI_REPORT_OPT,
    CLI_CSV_OPT,
    {"--ladder", NULL, NULL, "interruptions per week at 32, 128, 512 and 2048 GPUs", CLI_WORD},
};
static const cli_group_t own_group = {"Reliability command", own_opts,
                                      sizeof own_opts / sizeof own_opts[0]};

static int run_ladder(const cli_args_t *a, err_t *err)
{
    failure_set_t fs;
    failure_guides_t guides;
    int rc;
    if ((rc = failure_load_set(cli_get(a, "--failure-rates"), &fs, err)) ||
        (rc = failure_load_guides(&guides, err)))
        return rc;
    bool json = cli_machine_output(a);
    cJSON *arr = json ? cJSON_CreateArray() : NULL;
    static const char *hdr[] = {"GPUs", "interruptions/week", "unexpected/week", "MTBF",
                                "planning guides"};
    table_t *t = json ? NULL : table_create(5, hdr);
    for (int c = 0; t && c < 4; c++)
        table_align_right(t, c);
    for (int i = 0; i < guides.n && !rc; i++) {
        cluster_spec_t spec;
        if ((rc = cli_cluster_spec(a, &spec, err)))
            break;
        if (!spec.gpu && !spec.cluster)
            spec.gpu = "h100-sxm";
        spec.n_gpus = guides.rows[i].gpus;
        cluster_t c;
        if ((rc = cluster_resolve(&spec, &c, err)))
            break;
        double all = 0, unexpected = 0;
        for (int k = 0; k < fs.n_classes; k++) {
            double r = failure_job_rate_per_hour(&fs.classes[k], &c) * 168;
            all += r;
            if (fs.classes[k].unexpected)
                unexpected += r;
        }
        char mtbf[32];
        units_fmt_duration(all > 0 ? 168 * 3600 / all : INFINITY, mtbf, sizeof mtbf);
        if (t) {
            table_add_rowf(t, "%d\t%.2f\t%.2f\t%s\t%s", c.n_gpus, all, unexpected, mtbf,
                           guides.rows[i].per_week);
        } else {
            cJSON *o = cJSON_CreateObject();
            if (!o || !cJSON_AddItemToArray(arr, o) || !json_add_number(o, "gpus", c.n_gpus) ||
                !json_add_number(o, "interruptions_per_week", all) ||
                !json_add_number(o, "unexpected_per_week", unexpected) ||
                !json_add_number(o, "mtbf_hours", all > 0 ? 168 / all : 0) ||
                !cJSON_AddStringToObject(o, "planning_guides", guides.rows[i].per_week))
                rc = err_set(err, ERR_RUNTIME, "out of memory");
        }
    }
    if (!rc && t) {
        printf("Interruptions per week, failure rates '%s' (%s)\n", fs.name, fs.description);
        rc = table_print(t, stdout, 2, 0) ? err_set(err, ERR_RUNTIME, "write failed") : 0;
    }
    if (!rc && json) {
        cJSON *o = cJSON_CreateObject();
        if (o && cJSON_AddStringToObject(o, "failure_rates", fs.name) &&
            cJSON_AddItemToObject(o, "ladder", arr)) {
            arr = NULL;
            rc = cli_has(a, "--csv") ? csv_from_json(stdout, cJSON_GetObjectItem(o, "ladder"),
                                                     "ladder", err)
                                     : json_print_stdout(o, err);
        } else {
            rc = err_set(err, ERR_RUNTIME, "out of memory");
        }
        cJSON_Delete(o);
    }
    cJSON_Delete(arr);
    table_destroy(t);
    return rc;
}

typedef struct {
    rel_config_t cfg;
    rel_result_t r;
    bool swept;
    double best_s;
    double intervals[25], goodput[25];
    int n_sweep;
} rel_run_t;

static int print_text(const cli_args_t *a, const cluster_t *c, const failure_set_t *fs,
                      const rel_run_t *run, const cli_job_t *job)
{
    (void)a;
    const rel_result_t *r = &run->r;
    char b1[32], b2[32], b3[32], b4[32];
    printf("%d x %s, failure rates '%s', %d trials\n", c->n_gpus, c->gpu.name, fs->name, r->trials);
    if (job)
        printf("  step %s (%s), %s tokens/step\n",
               units_fmt_duration(run->cfg.step_time_s, b1, sizeof b1),
               job->searched ? "best layout found" : "given layout",
               units_fmt_count(run->cfg.tokens_per_step, b2, sizeof b2));
    char b5[32], every[64];
    snprintf(every, sizeof every, "every %s",
             units_fmt_duration(run->cfg.ckpt_interval_s, b3, sizeof b3));
    if (run->cfg.ckpt_interval_s >= r->wall_s_p90) /* no periodic checkpoint */
        snprintf(every, sizeof every, "%s",
                 run->cfg.duration_s > 0 ? "never (--checkpoint-every is longer than the run)"
                                         : "only at the end (--checkpoint-every is longer than "
                                           "the run)");
    printf("  job MTBF %s; checkpoint %s %s (blocking %s, load %s)\n",
           units_fmt_duration(r->mtbf_s, b1, sizeof b1),
           units_fmt_bytes(run->cfg.ckpt_bytes, b2, sizeof b2), every,
           units_fmt_duration(r->save_blocking_s, b4, sizeof b4),
           units_fmt_duration(r->load_s, b5, sizeof b5));
    printf("  wall time P10 %.2f d, P50 %.2f d, P90 %.2f d; goodput %.1f%%\n", r->wall_s_p10 / 86400,
           r->wall_s_p50 / 86400, r->wall_s_p90 / 86400, 100 * r->goodput_mean);
    if (run->cfg.duration_s > 0)
        printf("  tokens trained in %.1f days: %s\n", run->cfg.duration_s / 86400,
               units_fmt_count(r->tokens_mean, b1, sizeof b1));
    printf("  expected interruptions %.1f (%.1f unexpected); lost %s GPU-hours\n",
           r->interruptions_mean, r->unexpected_mean, units_fmt_count(r->lost_gpu_hours_mean, b1, sizeof b1));
    printf("  time lost to: failed work %.1f h, restarts %.1f h, checkpoint saves %.1f h\n\n",
           r->lost_work_s_mean / 3600, r->restart_s_mean / 3600, r->checkpoint_s_mean / 3600);
    static const char *hdr[] = {"cause", "interruptions", "share"};
    table_t *t = table_create(3, hdr);
    if (!t)
        return ERR_RUNTIME;
    table_align_right(t, 1);
    table_align_right(t, 2);
    for (int i = 0; i < r->n_classes; i++)
        table_add_rowf(t, "%s\t%.1f\t%.1f%%", r->class_name[i], r->class_mean[i],
                       r->interruptions_mean > 0 ? 100 * r->class_mean[i] / r->interruptions_mean : 0);
    int rc = table_print(t, stdout, 2, 0);
    table_destroy(t);
    printf("\n  Young/Daly interval sqrt(2 x %s x MTBF) = %s\n",
           units_fmt_duration(r->save_blocking_s, b1, sizeof b1),
           units_fmt_duration(r->young_daly_s, b2, sizeof b2));
    if (run->swept)
        printf("  simulated best interval %s (checked %d intervals from %s to %s)\n",
               units_fmt_duration(run->best_s, b1, sizeof b1), run->n_sweep,
               units_fmt_duration(run->intervals[0], b2, sizeof b2),
               units_fmt_duration(run->intervals[run->n_sweep - 1], b3, sizeof b3));
    return rc;
}

static cJSON *rel_json(const cluster_t *c, const failure_set_t *fs, const rel_run_t *run,
                       const cli_job_t *job)
{
    const rel_result_t *r = &run->r;
    cJSON *o = cJSON_CreateObject(), *by = NULL;
    bool ok = o && json_add_number(o, "wall_days_p10", r->wall_s_p10 / 86400) &&
              json_add_number(o, "wall_days_p50", r->wall_s_p50 / 86400) &&
              json_add_number(o, "wall_days_p90", r->wall_s_p90 / 86400) &&
              json_add_number(o, "wall_days_mean", r->wall_s_mean / 86400) &&
              json_add_number(o, "goodput", r->goodput_mean) &&
              json_add_number(o, "interruptions_mean", r->interruptions_mean) &&
              json_add_number(o, "unexpected_interruptions_mean", r->unexpected_mean) &&
              (by = cJSON_AddObjectToObject(o, "interruptions_by_cause"));
    for (int i = 0; ok && i < r->n_classes; i++)
        ok = json_add_number(by, r->class_name[i], r->class_mean[i]);
    ok = ok && json_add_number(o, "checkpoint_interval_s", run->cfg.ckpt_interval_s) &&
         json_add_number(o, "young_daly_interval_s", r->young_daly_s) &&
         json_add_number(o, "lost_gpu_hours", r->lost_gpu_hours_mean) &&
         json_add_number(o, "checkpoint_hours", r->checkpoint_s_mean / 3600) &&
         json_add_number(o, "restart_hours", r->restart_s_mean / 3600) &&
         json_add_number(o, "lost_work_hours", r->lost_work_s_mean / 3600) &&
         json_add_number(o, "mtbf_hours", r->mtbf_s / 3600) &&
         json_add_number(o, "checkpoint_bytes", run->cfg.ckpt_bytes) &&
         json_add_number(o, "checkpoint_save_s", r->save_blocking_s) &&
         json_add_number(o, "checkpoint_load_s", r->load_s) &&
         json_add_number(o, "step_time_s", run->cfg.step_time_s) &&
         json_add_number(o, "tokens_per_step", run->cfg.tokens_per_step) &&
         json_add_number(o, "gpus", c->n_gpus) && cJSON_AddStringToObject(o, "gpu", c->gpu.name) &&
         cJSON_AddStringToObject(o, "failure_rates", fs->name) &&
         json_add_number(o, "trials", r->trials);
    if (ok && run->cfg.duration_s > 0)
        ok = json_add_number(o, "tokens_mean", r->tokens_mean);
    if (ok && run->swept) {
        cJSON *sw = cJSON_AddArrayToObject(o, "interval_sweep");
        ok = sw && json_add_number(o, "optimal_interval_s", run->best_s);
        for (int i = 0; ok && i < run->n_sweep; i++) {
            cJSON *e = cJSON_CreateObject();
            ok = e && cJSON_AddItemToArray(sw, e) &&
                 json_add_number(e, "interval_s", run->intervals[i]) &&
                 json_add_number(e, "goodput", run->goodput[i]);
        }
    }
    if (ok && job)
        ok = cJSON_AddStringToObject(o, "model", job->s.model.name) != NULL;
    if (!ok) {
        cJSON_Delete(o);
        return NULL;
    }
    return o;
}

static int run(const cli_args_t *a, err_t *err)
{
    int rc = ERR_OK;
    if (cli_has(a, "--ladder") && cli_get(a, "--report"))
        return err_setf(err, ERR_INPUT, NULL, "--report",
                        "not available with --ladder (it is a table); report one cluster instead");
    if (cli_has(a, "--ladder"))
        return run_ladder(a, err);
    rel_run_t run;
    memset(&run, 0, sizeof run);
    cli_job_t job;
    bool have_job = false;
    cluster_t cl;
    cluster_spec_t spec;
    failure_set_t fs;
    double tokens, duration;
    if ((rc = cli_run_length(a, &tokens, &duration, err)) ||
        (rc = failure_load_set(cli_get(a, "--failure-rates"), &fs, err)))
        return rc;
    if (!(tokens > 0) && !(duration > 0))
        return err_setf(err, ERR_INPUT, NULL, "--tokens",
                        "say how long the run is: --tokens 2T (with --model) or --days 54");
    double step_time = 0, tokens_per_step = 0, ckpt = 0;
    if ((rc = cli_get_double(a, "--step-time", &step_time, err)) ||
        (rc = cli_get_double(a, "--tokens-per-step", &tokens_per_step, err)))
        return rc;
    if (cli_has(a, "--model") || a->n_positional > 0) {
        if ((rc = cli_job_setup(a, &job, err))) {
            cli_job_free(&job);
            return rc;
        }
        have_job = true;
        cl = job.s.cluster;
        if (!(step_time > 0))
            step_time = job.step.step_time_s;
        if (!(tokens_per_step > 0))
            tokens_per_step = job.step.tokens_per_step;
        run.cfg.dp = job.s.layout.dp;
        if ((rc = cli_checkpoint_bytes(a, &job.s.model, &ckpt, err)))
            goto out;
    } else {
        if ((rc = cli_cluster_spec(a, &spec, err)) || (rc = cluster_resolve(&spec, &cl, err)))
            return rc;
        if (!(step_time > 0) && tokens > 0)
            return err_setf(err, ERR_INPUT, NULL, "--step-time",
                            "give --step-time (or --model to simulate it) to train a number "
                            "of tokens");
        if (!(step_time > 0))
            step_time = 1;
        if (!(tokens_per_step > 0))
            tokens_per_step = LADDER_DEFAULT_BATCH_TOKENS;
        if (!cli_has(a, "--checkpoint-size"))
            return err_setf(err, ERR_INPUT, NULL, "--checkpoint-size",
                            "give --checkpoint-size (or --model to derive it)");
        if ((rc = cli_get_double(a, "--checkpoint-size", &ckpt, err)))
            return rc;
    }
    int dp = run.cfg.dp;
    if ((rc = cli_rel_config(a, &cl, &fs, &run.cfg, err)))
        goto out;
    run.cfg.dp = dp > 0 ? dp : 1;
    run.cfg.step_time_s = step_time;
    run.cfg.tokens_per_step = tokens_per_step;
    run.cfg.target_tokens = tokens;
    run.cfg.duration_s = tokens > 0 ? 0 : duration;
    run.cfg.ckpt_bytes = ckpt;
    if ((rc = rel_simulate(&run.cfg, &run.r, err)))
        goto out;
    if (cli_has(a, "--sweep") || cli_get(a, "--report")) {
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
    if (!cli_machine_output(a) && print_text(a, &cl, &fs, &run, have_job ? &job : NULL))
        rc = err_set(err, ERR_RUNTIME, "write failed");
    if (!rc && cli_wants_result(a)) {
        cJSON *j = rel_json(&cl, &fs, &run, have_job ? &job : NULL);
        if (!j)
            rc = err_set(err, ERR_RUNTIME, "out of memory building JSON");
        else if (!cli_machine_output(a))
            putchar('\n');
        if (j)
            rc = cli_output_result(a, "scaleplan reliability", j, "interruptions_by_cause", err);
        cJSON_Delete(j);
    }
out:
    if (have_job)
        cli_job_free(&job);
    return rc;
}

static const cli_group_t *const groups[] = {&CLI_MODEL_OPTS,
                                         &CLI_CLUSTER_OPTS,
                                         &CLI_LAYOUT_OPTS,
                                         &CLI_SIM_OPTS,
                                         &CLI_RUN_OPTS,
                                         &CLI_REL_OPTS,
                                         &own_group,
                                         &CLI_OUTPUT_OPTS};

const cli_command_t CLI_CMD_RELIABILITY = {
    "reliability",
    "failures, checkpoints and restarts over a whole run",
    "scaleplan reliability --gpu G --gpus N (--days D | --tokens T --model M) "
                       "[--checkpoint-every 30m] [--trials N] [--sweep] [--ladder] [--json]",
    "Simulate a whole run with failures (by cause, rates from the catalog),\n"
                       "checkpoints and restarts: wall time P10/P50/P90, goodput, interruptions by\n"
                       "cause, lost GPU-hours, and the best checkpoint interval next to Young/Daly.\n"
                       "The step time comes from --step-time, or is simulated for --model (with the\n"
                       "fastest layout that fits when no layout is given).",
    groups,
    sizeof groups / sizeof groups[0],
    run,
    0,
};
