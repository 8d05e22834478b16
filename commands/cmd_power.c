/* scaleplan power: what a training job draws phase by phase, its swing at
 * the cluster level, the energy, electricity cost and carbon of the run,
 * a power cap's trade of time for energy, and the energy bloat of an
 * imbalanced pipeline (run/power.h). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands/commands.h"
#include "commands/job.h"
#include "commands/output.h"
#include "common/json.h"
#include "common/units.h"
#include "models/layout_json.h"
#include "models/layout_text.h"
#include "run/power.h"

static const cmd_opt_t own_opts[] = {
    {"--power-cap", NULL, "W",
     "power limit per GPU (nvidia-smi -pl): lower clocks, slower steps, less energy; between the "
     "GPU's lowest limit and its TDP",
     CMD_X(1, 1e5)},
    {"--pue", NULL, "X", "facility power over IT power (default 1.2, assumed)", CMD_X(1, 5)},
    {"--usd-per-kwh", NULL, "$", "electricity price (default $0.08/kWh, assumed)", CMD_X(0, 10)},
    {"--carbon-g-per-kwh", NULL, "G", "grid carbon intensity, gCO2/kWh (no default)",
     CMD_X(0, 5000)},
};
static const cmd_group_t own_group = {"Power", own_opts, sizeof own_opts / sizeof own_opts[0]};

typedef struct {
    cmd_job_t job;
    bool have_job;
    power_model_t m;
    double cap_w, pue, usd_per_kwh, g_co2;
    power_step_t free_step, step; /* uncapped, and under the cap (the same without) */
    double bloat;
    bool have_run;
    double tokens;
    rel_result_t rel, rel_free;
    power_run_t run, run_free;
} power_job_t;

/* The GPU's power figures and the cap, checked before anything is searched
 * or simulated. */
static int setup_power(const cmd_args_t *a, power_job_t *p, err_t *err)
{
    cluster_spec_t spec;
    cluster_t c;
    int rc;
    if ((rc = cmd_cluster_spec(a, &spec, err)) || (rc = cluster_resolve(&spec, &c, err)) ||
        (rc = power_model_load(c.gpu.name, c.gpu.tdp_w, &p->m, err)))
        return rc;
    p->pue = p->m.pue;
    p->usd_per_kwh = p->m.usd_per_kwh;
    if ((rc = cmd_get_double(a, "--power-cap", &p->cap_w, err)) ||
        (rc = cmd_get_double(a, "--pue", &p->pue, err)) ||
        (rc = cmd_get_double(a, "--usd-per-kwh", &p->usd_per_kwh, err)) ||
        (rc = cmd_get_double(a, "--carbon-g-per-kwh", &p->g_co2, err)))
        return rc;
    if (cmd_has(a, "--power-cap") && (rc = power_cap_check(&p->m, p->cap_w, err)))
        return rc;
    return ERR_OK;
}

/* Simulate the step again for its timeline: each stage's compute for the
 * bloat. */
static int step_and_bloat(power_job_t *p, err_t *err)
{
    sim_ctx_t *ctx = sim_ctx_create();
    if (!ctx)
        return err_set(err, ERR_RUNTIME, "out of memory");
    sim_result_t r;
    sim_event_t *ev = NULL;
    int n = 0;
    int rc = sim_run_step(ctx, &p->job.s.input, &r, err);
    if (!rc)
        rc = sim_timeline(ctx, &ev, &n, err);
    sim_ctx_destroy(ctx);
    if (!rc) {
        power_step(&p->m, &r, 0, &p->free_step);
        power_step(&p->m, &r, p->cap_w, &p->step);
        p->bloat = power_bloat(&p->m, ev, n, p->job.s.layout.pp, &p->step);
    }
    free(ev);
    return rc;
}

/* The whole run at step s: reliability for its compute, checkpoint and
 * restart time, then energy. */
static int run_energy(const cmd_args_t *a, power_job_t *p, const power_step_t *s,
                      rel_result_t *rel, power_run_t *out, err_t *err)
{
    double duration;
    int rc = cmd_run_length(a, &p->tokens, &duration, err);
    if (rc)
        return rc;
    failure_set_t fs;
    cmd_failure_pick_t pick;
    rel_config_t cfg;
    double ckpt;
    const cluster_t *c = &p->job.s.cluster;
    if ((rc = cmd_failure_set(a, c, NULL, &fs, &pick, err)) ||
        (rc = cmd_rel_config(a, c, &fs, pick.choice.environment, &cfg, err)) ||
        (rc = cmd_checkpoint_bytes(a, &p->job.s.model, &ckpt, err)))
        return rc;
    cfg.dp = p->job.s.layout.dp;
    cfg.step_time_s = s->step_s;
    cfg.tokens_per_step = p->job.step.tokens_per_step;
    cfg.target_tokens = p->tokens;
    cfg.duration_s = p->tokens > 0 ? 0 : duration;
    cfg.ckpt_bytes = ckpt;
    cfg.progress = false;
    if ((rc = rel_simulate(&cfg, rel, err)))
        return rc;
    power_run_in_t in = {rel->useful_s_mean + rel->lost_work_s_mean, rel->checkpoint_s_mean,
                         rel->restart_s_mean, rel->wall_s_mean};
    power_run(&p->m, s, c->n_gpus, &in, p->pue, p->usd_per_kwh, p->g_co2, out);
    return ERR_OK;
}

/* 30995 or 4.84: whole units from 1000 up, four figures below. */
static const char *fmt_num(double v, char *buf, size_t cap)
{
    snprintf(buf, cap, fabs(v) >= 1000 ? "%.0f" : "%.4g", v);
    return buf;
}

static void print_phases(const power_job_t *p)
{
    const power_step_t *s = &p->step;
    int n = p->job.s.cluster.n_gpus;
    printf("  %-22s %10s %10s %14s\n", "phase (critical stage)", "s/step", "W per GPU",
           "GPUs, MW");
    printf("  %-22s %10.3f %10.0f %14.2f\n", "compute", s->compute_s, s->compute_w,
           n * s->compute_w / 1e6);
    printf("  %-22s %10.3f %10.0f %14.2f\n", "communication waits", s->comm_s, s->comm_w,
           n * s->comm_w / 1e6);
    printf("  %-22s %10.3f %10.0f %14.2f\n", "bubbles and idle waits", s->idle_s, s->idle_w,
           n * s->idle_w / 1e6);
    printf("  %-22s %10.3f %10.0f %14.2f\n", "step (average)", s->step_s, s->avg_w,
           n * s->avg_w / 1e6);
}

static void print_text(const power_job_t *p)
{
    const power_model_t *m = &p->m;
    const scenario_t *sc = &p->job.s;
    char lay[200], a[32], b[32];
    layout_text_format(&sc->layout, lay, sizeof lay);
    printf("Power: %s on %d x %s (%s)\n", sc->model.display, sc->cluster.n_gpus, m->gpu, lay);
    printf("  GPU: TDP %.0f W, idle %.0f W, lowest power limit %.0f W; node besides its %d GPUs "
           "%.0f W%s\n",
           m->tdp_w, m->idle_w, m->min_limit_w, m->gpus_per_node, m->node_overhead_w,
           m->gpu_assumed ? " (ASSUMED: no entry for this GPU)" : "");
    if (p->cap_w > 0)
        printf("  power cap %.0f W: clock x%.3f, step %.3f s (uncapped %.3f s, %+.1f%%), energy "
               "per step %+.1f%%\n",
               p->cap_w, p->step.clock_ratio, p->step.step_s, p->free_step.step_s,
               100 * (p->step.step_s / p->free_step.step_s - 1),
               100 * (p->step.energy_j / p->free_step.energy_j - 1));
    print_phases(p);
    const power_run_t *r = &p->run;
    printf("  cluster (facility, PUE %.2f): peak %.2f MW computing; %.2f MW when every GPU waits "
           "on a collective (swing %.2f MW, IT %.2f), %.2f MW at a checkpoint pause (swing %.2f "
           "MW, IT %.2f)\n",
           p->pue, r->peak_mw, r->comm_pause_mw, r->swing_comm_mw, r->swing_comm_mw / p->pue,
           r->ckpt_pause_mw, r->swing_ckpt_mw, r->swing_ckpt_mw / p->pue);
    printf("  energy bloat of pipeline imbalance (Perseus, Chung et al. SOSP'24): %.1f%% of the "
           "step's GPU energy could be saved by slowing the lighter stages\n",
           100 * p->bloat);
    if (p->have_run) {
        char e1[32], e2[32], e3[32], e4[32];
        printf("Run: %s tokens in %.1f days (P50 %.1f): %s MWh at the facility (GPUs %s, "
               "nodes %s, x PUE), %s at $%.3f/kWh, average %.3g MW",
               units_fmt_count(p->tokens > 0 ? p->tokens : p->rel.tokens_mean, a, sizeof a),
               p->rel.wall_s_mean / 86400, p->rel.wall_s_p50 / 86400,
               fmt_num(r->facility_mwh, e1, sizeof e1), fmt_num(r->gpu_mwh, e2, sizeof e2),
               fmt_num(r->node_mwh, e3, sizeof e3), units_fmt_usd(r->usd, b, sizeof b),
               p->usd_per_kwh, r->avg_mw);
        if (p->g_co2 > 0)
            printf(", %s tCO2 at %.0f g/kWh", fmt_num(r->tco2, e4, sizeof e4), p->g_co2);
        printf("\n");
        if (p->cap_w > 0)
            printf("  uncapped: %.1f days, %s MWh: the cap takes %+.1f%% time and %+.1f%% "
                   "energy\n",
                   p->rel_free.wall_s_mean / 86400, fmt_num(p->run_free.facility_mwh, e1, sizeof e1),
                   100 * (p->rel.wall_s_mean / p->rel_free.wall_s_mean - 1),
                   100 * (r->facility_mwh / p->run_free.facility_mwh - 1));
    } else {
        printf("Run: give --tokens or --days for the run's energy and cost\n");
    }
    printf("  GPU figures: %s\n", m->gpu_source);
    printf("  phase draw: %s\n", m->activity_source);
    if (p->cap_w > 0)
        printf("  clock under a cap: %s\n", m->clock_source);
    printf("  defaults: %s\n", m->defaults_source);
}

static bool step_json(cJSON *o, const char *key, const power_step_t *s)
{
    cJSON *x = cJSON_AddObjectToObject(o, key);
    return x && json_add_number(x, "clock_ratio", s->clock_ratio) &&
           json_add_number(x, "step_time_s", s->step_s) &&
           json_add_number(x, "compute_s", s->compute_s) &&
           json_add_number(x, "comm_wait_s", s->comm_s) &&
           json_add_number(x, "idle_wait_s", s->idle_s) &&
           json_add_number(x, "compute_w", s->compute_w) &&
           json_add_number(x, "comm_wait_w", s->comm_w) &&
           json_add_number(x, "idle_wait_w", s->idle_w) &&
           json_add_number(x, "energy_per_gpu_j", s->energy_j) &&
           json_add_number(x, "average_w", s->avg_w);
}

static bool run_json(cJSON *o, const char *key, const power_run_t *r, const rel_result_t *rel)
{
    cJSON *x = cJSON_AddObjectToObject(o, key);
    return x && json_add_number(x, "wall_days_mean", rel->wall_s_mean / 86400) &&
           json_add_number(x, "gpu_mwh", r->gpu_mwh) && json_add_number(x, "node_mwh", r->node_mwh) &&
           json_add_number(x, "it_mwh", r->it_mwh) &&
           json_add_number(x, "facility_mwh", r->facility_mwh) &&
           json_add_number(x, "electricity_usd", r->usd) && json_add_number(x, "tco2", r->tco2) &&
           json_add_number(x, "average_mw", r->avg_mw);
}

static cJSON *power_json(const power_job_t *p)
{
    const power_model_t *m = &p->m;
    const power_run_t *r = &p->run;
    cJSON *o = cJSON_CreateObject();
    bool ok = o && cJSON_AddStringToObject(o, "model", p->job.s.model.name) &&
              cJSON_AddStringToObject(o, "gpu", m->gpu) &&
              json_add_number(o, "gpus", p->job.s.cluster.n_gpus) &&
              cJSON_AddItemToObject(o, "layout", layout_to_json(&p->job.s.layout)) &&
              json_add_number(o, "tdp_w", m->tdp_w) && json_add_number(o, "idle_w", m->idle_w) &&
              json_add_number(o, "min_limit_w", m->min_limit_w) &&
              json_add_number(o, "node_overhead_w", m->node_overhead_w) &&
              cJSON_AddBoolToObject(o, "gpu_figures_assumed", m->gpu_assumed) &&
              json_add_number(o, "power_cap_w", p->cap_w) && json_add_number(o, "pue", p->pue) &&
              json_add_number(o, "usd_per_kwh", p->usd_per_kwh) &&
              json_add_number(o, "carbon_g_per_kwh", p->g_co2) &&
              step_json(o, "step", &p->step) && step_json(o, "step_uncapped", &p->free_step) &&
              json_add_number(o, "peak_mw", r->peak_mw) &&
              json_add_number(o, "comm_pause_mw", r->comm_pause_mw) &&
              json_add_number(o, "checkpoint_pause_mw", r->ckpt_pause_mw) &&
              json_add_number(o, "swing_comm_mw", r->swing_comm_mw) &&
              json_add_number(o, "swing_checkpoint_mw", r->swing_ckpt_mw) &&
              json_add_number(o, "energy_bloat", p->bloat);
    if (ok && p->have_run)
        ok = run_json(o, "run", r, &p->rel) &&
             (!(p->cap_w > 0) || run_json(o, "run_uncapped", &p->run_free, &p->rel_free));
    if (!ok) {
        cJSON_Delete(o);
        return NULL;
    }
    return o;
}

static int run(const cmd_args_t *a, err_t *err)
{
    power_job_t *p = calloc(1, sizeof *p);
    if (!p)
        return err_set(err, ERR_RUNTIME, "out of memory");
    int rc = setup_power(a, p, err);
    if (!rc) {
        rc = cmd_job_setup(a, &p->job, err);
        p->have_job = true;
    }
    if (!rc)
        rc = step_and_bloat(p, err);
    double tokens, duration;
    if (!rc)
        rc = cmd_run_length(a, &tokens, &duration, err);
    p->have_run = !rc && (tokens > 0 || duration > 0);
    if (!rc && p->have_run) {
        rc = run_energy(a, p, &p->step, &p->rel, &p->run, err);
        if (!rc && p->cap_w > 0)
            rc = run_energy(a, p, &p->free_step, &p->rel_free, &p->run_free, err);
    } else if (!rc) {
        power_run_in_t none = {0};
        power_run(&p->m, &p->step, p->job.s.cluster.n_gpus, &none, p->pue, p->usd_per_kwh,
                  p->g_co2, &p->run);
    }
    if (!rc && !cmd_machine_output(a))
        print_text(p);
    if (!rc && cmd_wants_result(a)) {
        cJSON *j = power_json(p);
        if (!j)
            rc = err_set(err, ERR_RUNTIME, "out of memory building JSON");
        else if (!cmd_machine_output(a))
            putchar('\n');
        if (j)
            rc = cmd_output_result(a, "scaleplan power", j, NULL, err);
        cJSON_Delete(j);
    }
    if (p->have_job)
        cmd_job_free(&p->job);
    free(p);
    return rc;
}

static const cmd_group_t *const groups[] = {&CMD_MODEL_OPTS, &CMD_CLUSTER_OPTS, &CMD_LAYOUT_OPTS,
                                         &CMD_SIM_OPTS,   &CMD_RUN_OPTS,     &CMD_REL_OPTS,
                                         &own_group,      &CMD_OUTPUT_OPTS};

const cmd_command_t CMD_CMD_POWER = {
    "power",
    "power by phase, cluster swing, a run's energy, cost and carbon; power caps; pipeline bloat",
    "scaleplan power --model M --gpu G --gpus N [layout] [--tokens T | --days D] "
    "[--power-cap W] [--pue 1.2] [--usd-per-kwh 0.08] [--carbon-g-per-kwh G] [--json]",
    "Simulate one step (the fastest layout when none is given) and price its\n"
    "phases in watts: compute near the GPU's TDP, exposed communication and\n"
    "pipeline bubbles near idle (sim/catalog/power.json, every figure with its\n"
    "source; what is assumed is printed). At the cluster: peak MW and the swing\n"
    "when every GPU waits on a collective or a checkpoint. With --tokens or\n"
    "--days: the run (failures, checkpoints and restarts simulated as in\n"
    "reliability) in MWh at the facility (x PUE), its electricity cost and,\n"
    "with --carbon-g-per-kwh, tonnes of CO2. --power-cap W lowers the clock by\n"
    "the cube law: slower steps, less energy (refused above the TDP or below\n"
    "the GPU's lowest power limit). The energy bloat is what slowing a\n"
    "pipeline's lighter stages to finish with the busiest would save\n"
    "(Perseus, Chung et al. SOSP'24).",
    groups,
    sizeof groups / sizeof groups[0],
    run,
    0,
};
