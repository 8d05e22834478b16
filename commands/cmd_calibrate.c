/* scaleplan calibrate: measure this machine's GPUs and network (CUDA,
 * cuBLASLt, NCCL), or import nccl-tests logs, or refit saved measurements,
 * into a profile for `scaleplan sim --profile`; or show a profile's fits.
 *
 *   scaleplan calibrate [--quick] [--out profile.json] [--gpu NAME]
 *   scaleplan calibrate --from-nccl-tests LOG... [--gpu NAME | --profile F]
 *   scaleplan calibrate --fit measurements.json [--out profile.json]
 *   scaleplan calibrate --show profile.json
 *
 * Across nodes the measuring run is started by a launcher (mpirun -np N
 * scaleplan calibrate, srun); rank 0 writes the files.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "calibrate/calibrate.h"
#include "calibrate/measurements.h"
#include "commands/args.h"
#include "commands/commands.h"
#include "commands/output.h"
#include "common/dist.h"
#include "common/json.h"
#include "common/units.h"
#include "profile/profile_json.h"

static const cmd_opt_t own_opts[] = {
    {"--quick", NULL, NULL, "a short measuring plan (under 2 minutes on one GPU)", CMD_WORD},
    {"--out", "-o", "FILE", "profile to write (default profile.json)", CMD_WORD},
    {"--gpu", NULL, "NAME", "catalog GPU the profile describes (default: the device's or logs')",
     CMD_WORD},
    {"--profile", NULL, "FILE", "base profile for what is not measured (default: the GPU's default)",
     CMD_WORD},
    {"--from-nccl-tests", NULL, "LOG...", "import nccl-tests logs (text or -J JSON) instead of measuring",
     CMD_WORD, .positional = CMD_POS_MORE},
    {"--ranks", NULL, "N", "group size of imported logs that do not list their ranks",
     CMD_N(1, 1 << 24)},
    {"--collective", NULL, "NAME",
     "collective the imported logs measured, where they do not say (all_reduce, all_gather, "
     "...; a log that names another is refused)",
     CMD_WORD},
    {"--nodes", NULL, "N", "nodes the imported logs spanned (default: their host names)",
     CMD_N(1, 1 << 24)},
    {"--fit", NULL, "FILE", "refit saved measurements (no GPU needed)", CMD_WORD},
    {"--show", NULL, "FILE", "print a profile's calibration: versions, fits, R^2, errors, tables",
     CMD_WORD},
    {"--measurements", NULL, "FILE", "where to save raw measurements (default OUT.measurements.json)",
     CMD_WORD},
    {"--sustained-factor", NULL, "base|X|measured",
     "GEMM rate share training sustains (default: the base's)", CMD_WORD},
    {"--only", NULL, "LIST", "measure only some of gemm,memory,collectives", CMD_WORD},
    {"--gpus", NULL, "N", "one process: use the first N GPUs for collectives (default all)",
     CMD_N(1, 1 << 16)},
    {"--timeout", NULL, "SECONDS", "NCCL watchdog: abort a collective stalled this long (60)",
     CMD_KIND(CMD_DURATION, 1, 1e6)},
};
static const cmd_group_t own_group = {"Calibrate", own_opts, sizeof own_opts / sizeof own_opts[0]};

/* The command line as run, for the profile's record. */
static void command_line(int argc, char **argv, char *buf, size_t cap)
{
    int w = snprintf(buf, cap, "scaleplan calibrate");
    size_t len = w > 0 ? (size_t)w : 0;
    for (int i = 1; i < argc && len < cap; i++) {
        bool quote = strpbrk(argv[i], " \t'\"") != NULL;
        w = snprintf(buf + len, cap - len, quote ? " '%s'" : " %s", argv[i]);
        if (w < 0)
            break;
        len += (size_t)w;
    }
}

static bool has_text(const char *s)
{
    return s && s[0];
}

/* Print what was written: fits and notes, as text or JSON. */
static int report(const cmd_args_t *a, const profile_t *p, const char *out_path,
                  const char *meas_path, const cal_notes_t *notes, err_t *err)
{
    if (cmd_machine_output(a)) {
        cJSON *o = cJSON_CreateObject(), *fits = NULL, *ns = NULL;
        bool ok = o && cJSON_AddStringToObject(o, "profile", out_path) &&
                  cJSON_AddStringToObject(o, "gpu", p->gpu) &&
                  cJSON_AddStringToObject(o, "origin", p->origin) &&
                  (meas_path ? cJSON_AddStringToObject(o, "measurements", meas_path) != NULL
                             : cJSON_AddNullToObject(o, "measurements") != NULL) &&
                  (fits = cJSON_AddArrayToObject(o, "fits")) &&
                  (ns = cJSON_AddArrayToObject(o, "notes"));
        for (int i = 0; ok && i < p->n_fits; i++) {
            const prof_fit_t *f = &p->fits[i];
            cJSON *e = cJSON_CreateObject();
            ok = e && cJSON_AddItemToArray(fits, e) && cJSON_AddStringToObject(e, "name", f->name) &&
                 json_add_number(e, "n_points", f->n_points) && json_add_number(e, "r2", f->r2) &&
                 json_add_number(e, "worst_rel_err", f->worst_rel_err) &&
                 json_add_number(e, "pi95_rel", f->pi95_rel) &&
                 json_add_number(e, "regimes", f->n_regimes);
        }
        for (int i = 0; ok && i < notes->n; i++) {
            cJSON *s = cJSON_CreateString(notes->text[i]);
            ok = s && cJSON_AddItemToArray(ns, s);
        }
        int rc = ok ? cmd_emit(a, o, "fits", err) : err_set(err, ERR_RUNTIME, "out of memory");
        cJSON_Delete(o);
        return rc;
    }
    printf("wrote %s: %s profile of %s\n", out_path, p->origin, p->gpu);
    for (int i = 0; i < p->n_fits; i++) {
        const prof_fit_t *f = &p->fits[i];
        printf("  %-26s %4d points", f->name, f->n_points);
        if (f->n_regimes)
            printf(", %d regime%s", f->n_regimes, f->n_regimes == 1 ? "" : "s");
        printf(", R^2 %.4f, worst error %.1f%%, 95%% prediction +-%.1f%%\n", f->r2,
               100 * f->worst_rel_err, 100 * f->pi95_rel);
    }
    for (int i = 0; i < notes->n; i++)
        printf("  note: %s\n", notes->text[i]);
    if (meas_path)
        printf("raw measurements in %s (refit with: scaleplan calibrate --fit %s)\n", meas_path,
               meas_path);
    printf("use it with: scaleplan sim --profile %s ...   (details: scaleplan calibrate --show %s)\n",
           out_path, out_path);
    return fflush(stdout) == 0 ? ERR_OK : err_set(err, ERR_RUNTIME, "cannot write to standard output");
}

/* The base profile: --profile, else the default of the measurements' GPU. */
static int base_profile(const cmd_args_t *a, meas_set_t *m, profile_t *base, err_t *err)
{
    const char *path = cmd_get(a, "--profile");
    int rc;
    if (path) {
        if ((rc = prof_load(path, base, err)))
            return rc;
        if (cmd_get(a, "--gpu")) {
            gpu_t g;
            if ((rc = gpu_load(cmd_get(a, "--gpu"), &g, err))) {
                prof_free(base);
                return rc;
            }
            if (strcmp(g.name, base->gpu) != 0) {
                prof_free(base);
                return err_setf(err, ERR_INPUT, NULL, "--gpu",
                                "%s, but the profile %s describes %s", g.name, path, base->gpu);
            }
        }
        snprintf(m->env.gpu, sizeof m->env.gpu, "%s", base->gpu);
        return ERR_OK;
    }
    if ((rc = cal_resolve_gpu(m, cmd_get(a, "--gpu"), err)))
        return rc;
    return prof_load_default(m->env.gpu, base, err);
}

/* Fit m onto the base profile, save the profile (and measurements when
 * asked), report. */
static int fit_and_write(const cmd_args_t *a, meas_set_t *m, const char *command,
                         const char *meas_path, const cal_notes_t *pre, err_t *err)
{
    const char *out_path = cmd_get(a, "--out") ? cmd_get(a, "--out") : "profile.json";
    cal_fit_opts_t fo;
    cal_fit_opts_default(&fo);
    fo.command = command;
    int rc;
    if (cmd_get(a, "--sustained-factor") &&
        (rc = cal_parse_sustained(cmd_get(a, "--sustained-factor"), &fo, err)))
        return rc;
    profile_t base, out;
    if ((rc = base_profile(a, m, &base, err)))
        return rc;
    cal_notes_t *notes = calloc(1, sizeof *notes);
    if (!notes) {
        prof_free(&base);
        return err_set(err, ERR_RUNTIME, "out of memory");
    }
    rc = cal_fit(m, &base, &fo, &out, notes, err);
    prof_free(&base);
    if (!rc && pre && pre->n > 0) {
        /* what the import inferred first, then the fit's notes */
        cal_notes_t fit_notes = *notes;
        *notes = *pre;
        for (int i = 0; i < fit_notes.n && notes->n < CAL_MAX_NOTES; i++)
            memcpy(notes->text[notes->n++], fit_notes.text[i], sizeof notes->text[0]);
    }
    if (!rc) {
        rc = prof_save(&out, out_path, err);
        if (!rc)
            rc = report(a, &out, out_path, meas_path, notes, err);
        prof_free(&out);
    }
    free(notes);
    return rc;
}

static int run_show(const cmd_args_t *a, err_t *err)
{
    profile_t p;
    int rc = prof_load(cmd_get(a, "--show"), &p, err);
    if (rc)
        return rc;
    if (cmd_machine_output(a)) {
        cJSON *j = prof_to_json(&p);
        rc = j ? cmd_emit(a, j, NULL, err) : err_set(err, ERR_RUNTIME, "out of memory");
        cJSON_Delete(j);
    } else if (cal_show(stdout, &p) != ERR_OK || fflush(stdout) != 0) {
        rc = err_set(err, ERR_RUNTIME, "cannot write to standard output");
    }
    prof_free(&p);
    return rc;
}

/* A note when --gpu names the logs' device as a catalog GPU of another
 * name (a device the catalog does not know, or a variant). */
static void note_gpu_mapping(const meas_set_t *m, const char *gpu_flag, cal_notes_t *notes)
{
    if (!gpu_flag || !m->env.device[0] || strcmp(m->env.device, m->env.gpu) == 0 ||
        notes->n >= CAL_MAX_NOTES)
        return;
    snprintf(notes->text[notes->n++], sizeof notes->text[0],
             "the logs' device '%s' taken as catalog GPU %s (--gpu)", m->env.device, m->env.gpu);
}

static int run_import(const cmd_args_t *a, const char *command, err_t *err)
{
    const char *paths[CMD_MAX_POSITIONAL + 1];
    int n = 0;
    paths[n++] = cmd_get(a, "--from-nccl-tests");
    for (int i = 0; i < a->n_positional; i++)
        paths[n++] = a->positional[i];
    nccltests_hint_t hint = {0, 0, cmd_get(a, "--collective")};
    int rc;
    if ((rc = cmd_get_int(a, "--ranks", &hint.n_ranks, err)) ||
        (rc = cmd_get_int(a, "--nodes", &hint.nodes, err)))
        return rc;
    meas_set_t m;
    meas_init(&m);
    gpu_t g;
    if (cmd_get(a, "--gpu") && (rc = gpu_load(cmd_get(a, "--gpu"), &g, err)))
        return rc; /* a wrong flag before reading any log */
    cal_notes_t *notes = calloc(1, sizeof *notes);
    if (!notes)
        return err_set(err, ERR_RUNTIME, "out of memory");
    if ((rc = cal_import(paths, n, &hint, &m, notes, err)))
        goto out;
    meas_now_utc(m.env.date, sizeof m.env.date);
    snprintf(m.env.command, sizeof m.env.command, "%s", command);
    const char *meas_path = cmd_get(a, "--measurements");
    /* the GPU first, so saved measurements name it */
    if (!cmd_get(a, "--profile") && (rc = cal_resolve_gpu(&m, cmd_get(a, "--gpu"), err)))
        goto out;
    note_gpu_mapping(&m, cmd_get(a, "--gpu"), notes);
    if (meas_path && (rc = meas_save(&m, meas_path, err)))
        goto out;
    rc = fit_and_write(a, &m, command, meas_path, notes, err);
out:
    free(notes);
    meas_free(&m);
    return rc;
}

static int run_refit(const cmd_args_t *a, const char *command, err_t *err)
{
    meas_set_t m;
    int rc = meas_load(cmd_get(a, "--fit"), &m, err);
    if (rc)
        return rc;
    rc = fit_and_write(a, &m, command, NULL, NULL, err);
    meas_free(&m);
    return rc;
}

static int parse_only(const char *list, cal_measure_opts_t *o, err_t *err)
{
    o->gemm = o->memory = o->collectives = false;
    const char *s = list;
    while (*s) {
        size_t n = strcspn(s, ",");
        if (n == 4 && strncmp(s, "gemm", 4) == 0)
            o->gemm = true;
        else if (n == 6 && strncmp(s, "memory", 6) == 0)
            o->memory = true;
        else if (n == 11 && strncmp(s, "collectives", 11) == 0)
            o->collectives = true;
        else
            return err_setf(err, ERR_INPUT, NULL, "--only",
                            "expected gemm, memory or collectives, comma-separated (got '%.*s')",
                            (int)n, s);
        s += n;
        if (*s == ',')
            s++;
    }
    if (!o->gemm && !o->memory && !o->collectives)
        return err_setf(err, ERR_INPUT, NULL, "--only", "names nothing to measure");
    return ERR_OK;
}

static int run_measure(int *argc, char ***argv, const cmd_args_t *a, const char *command,
                       err_t *err)
{
    cal_measure_opts_t mo;
    cal_measure_opts_default(&mo);
    mo.quick = cmd_has(a, "--quick");
    int rc;
    if ((rc = cmd_get_int(a, "--gpus", &mo.gpus, err)) ||
        (rc = cmd_get_double(a, "--timeout", &mo.timeout_s, err)) ||
        (cmd_get(a, "--only") && (rc = parse_only(cmd_get(a, "--only"), &mo, err))))
        return rc;
    if (!(mo.timeout_s > 0))
        return err_setf(err, ERR_INPUT, NULL, "--timeout", "must be above 0");
    meas_set_t m;
    meas_init(&m);
    if (cmd_get(a, "--gpu") && (rc = cal_resolve_gpu(&m, cmd_get(a, "--gpu"), err)))
        return rc;
    snprintf(m.env.command, sizeof m.env.command, "%s", command);
    dist_group_t world;
    if ((rc = dist_start(argc, argv, &world, err)))
        return rc;
    rc = cal_measure(&world, &mo, &m, err);
    if (!rc && world.rank == 0) {
        const char *out_path = cmd_get(a, "--out") ? cmd_get(a, "--out") : "profile.json";
        char def_meas[1100];
        snprintf(def_meas, sizeof def_meas, "%s.measurements.json", out_path);
        const char *meas_path = cmd_get(a, "--measurements") ? cmd_get(a, "--measurements") : def_meas;
        /* raw numbers first: a failed fit must not lose a measuring run */
        rc = meas_save(&m, meas_path, err);
        if (!rc)
            rc = fit_and_write(a, &m, command, meas_path, NULL, err);
    }
    meas_free(&m);
    if (rc && world.size > 1) {
        /* the other ranks may wait in a collective: stop the whole job */
        fprintf(stderr, "scaleplan calibrate: rank %d: %s\n", world.rank, err->msg);
        dist_abort(&world, rc == ERR_INPUT ? 2 : 1);
    }
    dist_stop(&world);
    return rc;
}

static int run(const cmd_args_t *a, err_t *err)
{
    int rc = ERR_OK;
    int modes = cmd_has(a, "--from-nccl-tests") + cmd_has(a, "--fit") + cmd_has(a, "--show");
    if (modes > 1)
        return err_set(err, ERR_INPUT,
                       "--from-nccl-tests, --fit and --show are different tasks: give one");
    if (!cmd_has(a, "--from-nccl-tests") && a->n_positional > 0)
        return err_setf(err, ERR_INPUT, NULL, a->positional[0],
                        "unexpected argument (log files follow --from-nccl-tests)");
    const char *out = cmd_get(a, "--out");
    if (out && !has_text(out))
        return err_setf(err, ERR_INPUT, NULL, "--out", "needs a file name");
    if (cmd_get(a, "--sustained-factor")) {
        cal_fit_opts_t fo;
        if ((rc = cal_parse_sustained(cmd_get(a, "--sustained-factor"), &fo, err)))
            return rc;
    }
    int argc = a->argc;
    char **argv = a->argv;
    char command[256];
    command_line(argc, argv, command, sizeof command);
    if (cmd_has(a, "--show"))
        return run_show(a, err);
    if (cmd_has(a, "--from-nccl-tests"))
        return run_import(a, command, err);
    if (cmd_has(a, "--fit"))
        return run_refit(a, command, err);
    return run_measure(&argc, &argv, a, command, err);
}

static const cmd_group_t *const groups[] = {&own_group,
                                         &CMD_OUTPUT_OPTS};

const cmd_command_t CMD_CMD_CALIBRATE = {
    "calibrate",
    "measure GPUs and NCCL (or import nccl-tests logs) into a cost profile",
    "scaleplan calibrate [--quick] [--out profile.json] [--gpu NAME]\n"
            "       scaleplan calibrate --from-nccl-tests LOG... [--gpu NAME | --profile F]\n"
            "       scaleplan calibrate --fit measurements.json [--out profile.json]\n"
            "       scaleplan calibrate --show profile.json",
    "Measure this machine's GPUs and write a cost profile for scaleplan sim --profile:\n"
            "cuBLASLt GEMMs (bf16, fp16, tf32, fp32, fp8) over transformer shapes and a grid,\n"
            "memory-bound kernels and launch overhead, and NCCL collectives (all-reduce,\n"
            "all-gather, reduce-scatter, broadcast, send/recv, all-to-all; 8 B to 1 GiB or more;\n"
            "NCCL's choice, Ring and Tree) on every GPU of the node, or across nodes under\n"
            "mpirun/srun. GSL fits the GEMM model (nonlinear least squares) and one alpha-beta\n"
            "line per size regime of each collective (weighted least squares); every fit\n"
            "records R^2, its worst error and 95% prediction intervals. Raw measurements are\n"
            "saved next to the profile so --fit can redo the fit without a GPU; nccl-tests\n"
            "logs can be imported instead of measuring collectives, as written or as pasted\n"
            "(no header or footer, mpirun --tag-output or srun -l labels): every collective's\n"
            "table is read, those the profile models are imported, and what a log does not\n"
            "say is asked for (--collective, --ranks) or inferred with a note.",
    groups,
    sizeof groups / sizeof groups[0],
    run,
    0,
};
