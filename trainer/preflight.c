/* preflight: the pre-scale-up checklist, run with the reference trainer. */
#include "trainer/preflight.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "common/dist.h"
#include "common/fileio.h"
#include "common/json.h"
#include "common/strfmt.h"

/* One preflight run's working state. */
typedef struct {
    const pf_config_t *cfg;
    const char *self;   /* the scaleplan binary the checks start (cfg's) */
    const char *dir;    /* work folder (cfg's) */
    char *model;        /* heap: the model the runs train */
    const char *device;
    const char *mpirun;
    bool have_mpirun;
    bool open_mpi;
    int ranks, steps, micro_batch, seq_len;
    int run_id;
} pf_run_t;

const char *pf_verdict_name(pf_verdict_t v)
{
    static const char *const names[] = {"pass", "fail", "skip"};
    return v <= PF_SKIP ? names[v] : "?";
}

void pf_config_default(pf_config_t *c)
{
    memset(c, 0, sizeof *c);
    c->device = "cpu";
    c->mpirun = "mpirun";
    c->ranks = 2;
    c->steps = 6;
    c->micro_batch = 2;
    c->seq_len = 32;
}

/* ------------------------------------------------------------ child runs */

/* The path of file NAME (printf) in the work folder: heap, NULL on OOM. */
static char *in_dir(const pf_run_t *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static char *in_dir(const pf_run_t *p, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *name = str_vprintf(fmt, ap);
    va_end(ap);
    char *path = name ? str_printf("%s/%s", p->dir, name) : NULL;
    free(name);
    return path;
}

/* Run argv with stdout and stderr into files; the exit status (or 128 +
 * signal) in *status. ERR_RUNTIME when it cannot be started. */
static int spawn(char *const *argv, const char *out, const char *errf, int *status, err_t *err)
{
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    if (pid < 0)
        return err_set(err, ERR_RUNTIME, "cannot start %s: %s", argv[0], strerror(errno));
    if (pid == 0) {
        int fo = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        int fe = open(errf, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (fo < 0 || fe < 0 || dup2(fo, 1) < 0 || dup2(fe, 2) < 0)
            _exit(126);
        if (geteuid() == 0) { /* Open MPI refuses root without these */
            setenv("OMPI_ALLOW_RUN_AS_ROOT", "1", 1);
            setenv("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1", 1);
        }
        setenv("SCALEPLAN_PROGRESS", "0", 1);
        execvp(argv[0], argv);
        _exit(127);
    }
    int st = 0;
    if (waitpid(pid, &st, 0) < 0)
        return err_set(err, ERR_RUNTIME, "waiting for %s: %s", argv[0], strerror(errno));
    *status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + (WIFSIGNALED(st) ? WTERMSIG(st) : 0);
    return ERR_OK;
}

/* What run files o (stdout) and e (stderr) say: the JSON of a run that
 * exited 0 in *out, the last line of its stderr in tail. */
static void read_run(const char *o, const char *e, cJSON **out, const int *status, char *tail,
                     size_t tail_cap)
{
    err_t ignored;
    char *log = NULL;
    size_t len = 0;
    tail[0] = '\0';
    if (fileio_read_all(e, &log, &len, &ignored) == 0) {
        /* the last line says what went wrong */
        while (len > 0 && (log[len - 1] == '\n' || log[len - 1] == '\r'))
            log[--len] = '\0';
        const char *last = strrchr(log, '\n');
        /* a summary for the check's figure: cut to fit on purpose */
        snprintf(tail, tail_cap, "%.*s", (int)tail_cap - 1, last ? last + 1 : log);
        free(log);
    }
    if (*status == 0) {
        err_t perr;
        if (json_parse_file(o, out, &perr) != 0)
            *out = NULL;
    }
}

/* One `scaleplan train` run with ranks processes and extra arguments
 * (NULL-terminated); its JSON in *out (NULL when it printed none), its
 * stderr tail in tail. */
static int train(pf_run_t *p, int ranks, const char *const *extra, cJSON **out, int *status,
                 char *tail, size_t tail_cap, err_t *err)
{
    *out = NULL;
    char *argv[64];
    int n = 0;
    char np[16], steps[16], mb[16], seq[16];
    snprintf(np, sizeof np, "%d", ranks);
    snprintf(steps, sizeof steps, "%d", p->steps);
    snprintf(mb, sizeof mb, "%d", p->micro_batch);
    snprintf(seq, sizeof seq, "%d", p->seq_len);
    if (ranks > 1) {
        argv[n++] = (char *)p->mpirun;
        if (p->open_mpi)
            argv[n++] = "--oversubscribe";
        argv[n++] = "-np";
        argv[n++] = np;
    }
    argv[n++] = (char *)p->self;
    argv[n++] = "train";
    argv[n++] = "--model";
    argv[n++] = p->model;
    argv[n++] = "--device";
    argv[n++] = (char *)p->device;
    argv[n++] = "--steps";
    argv[n++] = steps;
    bool own_mb = false; /* extra options name their own micro-batch */
    for (int i = 0; extra && extra[i]; i++)
        own_mb = own_mb || strcmp(extra[i], "--micro-batch") == 0;
    if (!own_mb) {
        argv[n++] = "--micro-batch";
        argv[n++] = mb;
    }
    argv[n++] = "--seq-len";
    argv[n++] = seq;
    argv[n++] = "--json";
    argv[n++] = "--quiet";
    for (int i = 0; extra && extra[i] && n < 62; i++)
        argv[n++] = (char *)extra[i];
    argv[n] = NULL;
    int id = ++p->run_id;
    char *o = in_dir(p, "run-%02d.json", id), *e = in_dir(p, "run-%02d.log", id);
    int rc = o && e ? spawn(argv, o, e, status, err) : err_set(err, ERR_RUNTIME, "out of memory");
    if (!rc)
        read_run(o, e, out, status, tail, tail_cap);
    free(o);
    free(e);
    return rc;
}

/* The losses of a run, as an array node (borrowed), or NULL. */
static const cJSON *losses_of(const cJSON *j)
{
    const cJSON *l = cJSON_GetObjectItemCaseSensitive(j, "losses");
    return cJSON_IsArray(l) && cJSON_GetArraySize(l) > 0 ? l : NULL;
}

/* Largest relative difference between b and a's entries from offset on;
 * -1 when the lengths do not line up. exact: set when all are identical. */
static double max_rel_diff(const cJSON *a, int offset, const cJSON *b, bool *exact)
{
    int na = cJSON_GetArraySize(a), nb = cJSON_GetArraySize(b);
    if (nb == 0 || offset + nb != na)
        return -1;
    double worst = 0;
    *exact = true;
    for (int i = 0; i < nb; i++) {
        double x = cJSON_GetArrayItem(a, offset + i)->valuedouble;
        double y = cJSON_GetArrayItem(b, i)->valuedouble;
        if (x != y)
            *exact = false;
        double d = fabs(x - y) / (fabs(x) > 1e-30 ? fabs(x) : 1e-30);
        if (!(d <= worst))
            worst = isnan(d) ? INFINITY : d;
    }
    return worst;
}

static void failed_run(pf_check_t *c, const char *what, int status, const char *tail)
{
    c->verdict = PF_FAIL;
    snprintf(c->figure, sizeof c->figure, "%s exited %d: %s", what, status, tail);
}

/* ------------------------------------------------------------ the checks */

/* Equal within tol, by loss curve; on_pass describes the figure. */
static void judge(pf_check_t *c, double diff, bool exact, double tol, bool want_exact, int steps)
{
    if (diff < 0) {
        c->verdict = PF_FAIL;
        snprintf(c->figure, sizeof c->figure, "the runs' loss curves have different lengths");
        return;
    }
    bool ok = want_exact ? exact : diff <= tol;
    c->verdict = ok ? PF_PASS : PF_FAIL;
    if (exact)
        snprintf(c->figure, sizeof c->figure, "identical losses over %d steps (bit for bit)", steps);
    else
        snprintf(c->figure, sizeof c->figure,
                 "largest relative loss difference %.2g over %d steps (limit %s)", diff, steps,
                 want_exact ? "bit-exact" : tol <= 1e-6 ? "1e-6" : "1e-5");
}

static int check_dp(pf_run_t *p, pf_check_t *c, double tol, err_t *err)
{
    if (!p->have_mpirun) {
        c->verdict = PF_SKIP;
        snprintf(c->figure, sizeof c->figure, "%s",
                 dist_have_mpi() ? "no mpirun on PATH (install openmpi-bin or give --mpirun)"
                                 : "built without MPI (make deps, then rebuild)");
        return ERR_OK;
    }
    char gb[16];
    snprintf(gb, sizeof gb, "%d", p->micro_batch * p->ranks);
    const char *extra[] = {"--global-batch", gb, NULL};
    cJSON *one = NULL, *many = NULL;
    int s1, s2, rc;
    char t1[240], t2[240];
    if ((rc = train(p, 1, extra, &one, &s1, t1, sizeof t1, err)) ||
        (rc = train(p, p->ranks, extra, &many, &s2, t2, sizeof t2, err)))
        goto out;
    if (s1 || !one)
        failed_run(c, "the 1-rank run", s1, t1);
    else if (s2 || !many)
        failed_run(c, "the multi-rank run", s2, t2);
    else {
        bool exact;
        double d = max_rel_diff(losses_of(one), 0, losses_of(many), &exact);
        judge(c, d, exact, tol, false, p->steps);
    }
out:
    cJSON_Delete(one);
    cJSON_Delete(many);
    return rc;
}

static int check_accum(pf_run_t *p, pf_check_t *c, double tol, err_t *err)
{
    char mb2[16], gb[16];
    snprintf(mb2, sizeof mb2, "%d", 2 * p->micro_batch);
    snprintf(gb, sizeof gb, "%d", 2 * p->micro_batch);
    const char *big[] = {"--micro-batch", mb2, "--global-batch", gb, NULL};
    const char *accum[] = {"--global-batch", gb, NULL};
    cJSON *a = NULL, *b = NULL;
    int s1, s2, rc;
    char t1[240], t2[240];
    if ((rc = train(p, 1, big, &a, &s1, t1, sizeof t1, err)) ||
        (rc = train(p, 1, accum, &b, &s2, t2, sizeof t2, err)))
        goto out;
    if (s1 || !a)
        failed_run(c, "the large-batch run", s1, t1);
    else if (s2 || !b)
        failed_run(c, "the accumulating run", s2, t2);
    else {
        bool exact;
        double d = max_rel_diff(losses_of(a), 0, losses_of(b), &exact);
        judge(c, d, exact, tol, false, p->steps);
    }
out:
    cJSON_Delete(a);
    cJSON_Delete(b);
    return rc;
}

/* An uninterrupted run with checkpoints into dir_a, then the same run
 * into dir_b stopped (by --steps, or killed) and resumed; the resumed
 * losses must equal the uninterrupted ones. */
static int resume_runs(pf_run_t *p, pf_check_t *c, bool kill, double tol, const char *dir_a,
                       const char *dir_b, err_t *err)
{
    int ranks = kill && p->have_mpirun ? p->ranks : 1;
    char every[16], half[16], fail_at[16], fail_rank[16];
    int k = p->steps / 2 > 0 ? p->steps / 2 : 1;
    snprintf(every, sizeof every, "%d", kill ? (k > 1 ? k - 1 : 1) : k);
    snprintf(half, sizeof half, "%d", k);
    snprintf(fail_at, sizeof fail_at, "%d", k + 1);
    snprintf(fail_rank, sizeof fail_rank, "%d", ranks - 1);
    char gb[16];
    snprintf(gb, sizeof gb, "%d", p->micro_batch * ranks);
    const char *whole[] = {"--global-batch", gb, "--checkpoint-dir", dir_a, "--checkpoint-every",
                           every, NULL};
    const char *stop[] = {"--global-batch", gb, "--checkpoint-dir", dir_b, "--checkpoint-every",
                          every, "--stop-after", half, NULL};
    const char *killed[] = {"--global-batch", gb, "--checkpoint-dir", dir_b,
                            "--checkpoint-every", every, "--fail-at-step", fail_at,
                            "--fail-rank", fail_rank, NULL};
    const char *again[] = {"--global-batch", gb, "--checkpoint-dir", dir_b, "--checkpoint-every",
                           every, "--resume", NULL};
    cJSON *a = NULL, *b = NULL, *r = NULL;
    int s1, s2, s3, rc;
    char t1[240], t2[240], t3[240];
    if ((rc = train(p, ranks, whole, &a, &s1, t1, sizeof t1, err)) ||
        (rc = train(p, ranks, kill ? killed : stop, &b, &s2, t2, sizeof t2, err)))
        goto out;
    if (s1 || !a) {
        failed_run(c, "the uninterrupted run", s1, t1);
        goto out;
    }
    if (kill && s2 == 0) {
        c->verdict = PF_FAIL;
        snprintf(c->figure, sizeof c->figure,
                 "the job with a killed rank exited 0: the failure was not detected");
        goto out;
    }
    if (!kill && (s2 || !b)) {
        failed_run(c, "the first half", s2, t2);
        goto out;
    }
    if ((rc = train(p, ranks, again, &r, &s3, t3, sizeof t3, err)))
        goto out;
    if (s3 || !r) {
        failed_run(c, "the resumed run", s3, t3);
        goto out;
    }
    const cJSON *first = cJSON_GetObjectItemCaseSensitive(r, "first_step");
    int from = cJSON_IsNumber(first) ? first->valueint : -1;
    if (from <= 0) {
        c->verdict = PF_FAIL;
        snprintf(c->figure, sizeof c->figure, "the rerun did not resume from a checkpoint");
        goto out;
    }
    bool exact;
    double d = max_rel_diff(losses_of(a), from, losses_of(r), &exact);
    bool cpu = strcmp(p->device, "cpu") == 0;
    judge(c, d, exact, tol, cpu, p->steps - from);
    if (c->verdict == PF_PASS) {
        char more[240];
        if (kill)
            snprintf(more, sizeof more, "kill detected (exit %d); resumed at step %d of %d: %s",
                     s2, from, p->steps, c->figure);
        else
            snprintf(more, sizeof more, "resumed at step %d of %d: %s", from, p->steps,
                     c->figure);
        snprintf(c->figure, sizeof c->figure, "%s", more);
    }
out:
    cJSON_Delete(a);
    cJSON_Delete(b);
    cJSON_Delete(r);
    return rc;
}

static int check_bf16(pf_run_t *p, pf_check_t *c, double tol, err_t *err)
{
    if (strcmp(p->device, "cuda") != 0) {
        c->verdict = PF_SKIP;
        snprintf(c->figure, sizeof c->figure, "needs --device cuda (the CPU trains in fp32)");
        return ERR_OK;
    }
    const char *fp32[] = {"--fp32", NULL};
    cJSON *a = NULL, *b = NULL;
    int s1, s2, rc;
    char t1[240], t2[240];
    if ((rc = train(p, 1, fp32, &a, &s1, t1, sizeof t1, err)) ||
        (rc = train(p, 1, NULL, &b, &s2, t2, sizeof t2, err)))
        goto out;
    if (s1 || !a)
        failed_run(c, "the fp32 run", s1, t1);
    else if (s2 || !b)
        failed_run(c, "the bf16 run", s2, t2);
    else {
        bool exact;
        double d = max_rel_diff(losses_of(a), 0, losses_of(b), &exact);
        c->verdict = d >= 0 && d <= tol ? PF_PASS : PF_FAIL;
        snprintf(c->figure, sizeof c->figure,
                 "largest relative loss difference %.3g over %d steps (limit %g)", d, p->steps, tol);
    }
out:
    cJSON_Delete(a);
    cJSON_Delete(b);
    return rc;
}

/* The verdict of `scaleplan validate` (exit status st, JSON in file out). */
static void judge_validate(pf_check_t *c, int st, const char *out, double tol)
{
    cJSON *v = NULL;
    err_t perr;
    if (st != 0 || json_parse_file(out, &v, &perr) != 0) {
        failed_run(c, "scaleplan validate", st, "see validate.log");
        return;
    }
    const cJSON *e = cJSON_GetObjectItemCaseSensitive(v, "step_time_error");
    double error = cJSON_IsNumber(e) ? e->valuedouble : NAN;
    c->verdict = fabs(error) <= tol ? PF_PASS : PF_FAIL;
    snprintf(c->figure, sizeof c->figure, "step time predicted %+.1f%% from measured (limit %.0f%%)",
             100 * error, 100 * tol);
    cJSON_Delete(v);
}

static int check_throughput(pf_run_t *p, pf_check_t *c, double tol, err_t *err)
{
    if (strcmp(p->device, "cuda") != 0) {
        c->verdict = PF_SKIP;
        snprintf(c->figure, sizeof c->figure,
                 "needs --device cuda (the simulator models GPUs, not this CPU)");
        return ERR_OK;
    }
    cJSON *run = NULL;
    int s1, rc;
    char t1[240];
    if ((rc = train(p, 1, NULL, &run, &s1, t1, sizeof t1, err)))
        return rc;
    if (s1 || !run) {
        failed_run(c, "the measured run", s1, t1);
        cJSON_Delete(run);
        return ERR_OK;
    }
    cJSON_Delete(run);
    char *measured = in_dir(p, "run-%02d.json", p->run_id);
    char *out = in_dir(p, "validate.json"), *errf = in_dir(p, "validate.log");
    int st = 0;
    if (!measured || !out || !errf) {
        rc = err_set(err, ERR_RUNTIME, "out of memory");
    } else {
        char *argv[] = {(char *)p->self, "validate", "--measured", measured, "--json", NULL};
        rc = spawn(argv, out, errf, &st, err);
    }
    if (!rc)
        judge_validate(c, st, out, tol);
    free(measured);
    free(out);
    free(errf);
    return rc;
}

/* resume_runs with its two checkpoint folders in the work folder. */
static int check_resume(pf_run_t *p, pf_check_t *c, bool kill, double tol, err_t *err)
{
    const char *how = kill ? "kill" : "stop";
    char *dir_a = in_dir(p, "ckpt-%s-a", how), *dir_b = in_dir(p, "ckpt-%s-b", how);
    int rc = dir_a && dir_b ? resume_runs(p, c, kill, tol, dir_a, dir_b, err)
                            : err_set(err, ERR_RUNTIME, "out of memory");
    free(dir_a);
    free(dir_b);
    return rc;
}

/* The same checks whether killed or stopped: a wrapper per table row. */
static int check_stop_resume(pf_run_t *p, pf_check_t *c, double tol, err_t *err)
{
    return check_resume(p, c, false, tol, err);
}

static int check_kill_resume(pf_run_t *p, pf_check_t *c, double tol, err_t *err)
{
    return check_resume(p, c, true, tol, err);
}

/* The checklist: what each check asks, how it runs, the tolerance of its
 * verdict. Losses of two ways of computing the same thing agree to 1e-5
 * (the reduction order differs); a resumed run repeats the uninterrupted
 * one to 1e-6 (bit for bit on the CPU); bf16 keeps 8 bits of mantissa, so
 * its losses track fp32 to about 1% (limit 2%); the measured step must be
 * within the plan's 10% of the prediction. */
static const struct {
    const char *name;
    int (*run)(pf_run_t *p, pf_check_t *c, double tol, err_t *err);
    double tol;
} CHECKS[PF_N_CHECKS] = {
    {"DP run equals the 1-rank run (same global batch)", check_dp, 1e-5},
    {"save + resume gives the same losses as an uninterrupted run", check_stop_resume, 1e-6},
    {"gradient accumulation equals the large batch", check_accum, 1e-5},
    {"bf16 loss tracks fp32", check_bf16, 0.02},
    {"a killed rank is detected and the job resumes from the last checkpoint", check_kill_resume,
     1e-6},
    {"measured throughput within 10% of the prediction", check_throughput, 0.10},
};

/* A small GPT for the checks when no model is given: seconds per run. */
static int write_default_model(pf_run_t *p, err_t *err)
{
    if (!(p->model = in_dir(p, "preflight-gpt.json")))
        return err_set(err, ERR_RUNTIME, "out of memory");
    static const char *cfg =
        "{\n  \"model_type\": \"gpt2\",\n  \"n_layer\": 2,\n  \"n_embd\": 64,\n"
        "  \"n_head\": 4,\n  \"n_positions\": 128,\n  \"vocab_size\": 256,\n"
        "  \"resid_pdrop\": 0.0,\n  \"embd_pdrop\": 0.0,\n  \"attn_pdrop\": 0.0\n}\n";
    return fileio_write_atomic(p->model, cfg, strlen(cfg), err);
}

static bool on_path(const char *cmd)
{
    if (strchr(cmd, '/'))
        return access(cmd, X_OK) == 0;
    const char *path = getenv("PATH");
    while (path && *path) {
        size_t n = strcspn(path, ":");
        char *candidate = str_printf("%.*s/%s", (int)n, path, cmd);
        bool found = candidate && access(candidate, X_OK) == 0;
        free(candidate);
        if (found)
            return true;
        path += n;
        if (*path == ':')
            path++;
    }
    return false;
}

static void detect_mpirun(pf_run_t *p)
{
    p->have_mpirun = dist_have_mpi() && on_path(p->mpirun);
    if (!p->have_mpirun)
        return;
    char *out = in_dir(p, "mpirun-version.txt"), *errf = in_dir(p, "mpirun-version.log");
    char *argv[] = {(char *)p->mpirun, "--version", NULL};
    int st;
    err_t ignored;
    char *text = NULL;
    if (out && errf && spawn(argv, out, errf, &st, &ignored) == 0 &&
        fileio_read_all(out, &text, NULL, &ignored) == 0) {
        p->open_mpi = strstr(text, "Open MPI") != NULL;
        free(text);
    }
    free(out);
    free(errf);
}

int pf_run(const pf_config_t *cfg, pf_check_t checks[PF_N_CHECKS], err_t *err)
{
    pf_run_t p;
    memset(&p, 0, sizeof p);
    memset(checks, 0, PF_N_CHECKS * sizeof checks[0]);
    p.cfg = cfg;
    p.device = cfg->device;
    p.mpirun = cfg->mpirun;
    p.ranks = cfg->ranks;
    p.steps = cfg->steps;
    p.micro_batch = cfg->micro_batch;
    p.seq_len = cfg->seq_len;
    if (strcmp(p.device, "cpu") != 0 && strcmp(p.device, "cuda") != 0)
        return err_setf(err, ERR_INPUT, NULL, "--device", "must be cpu or cuda (got '%s')", p.device);
    p.self = cfg->self;
    p.dir = cfg->dir;
    int rc;
    if (cfg->model)
        rc = (p.model = str_printf("%s", cfg->model)) ? ERR_OK
                                                       : err_set(err, ERR_RUNTIME, "out of memory");
    else
        rc = write_default_model(&p, err);
    if (!rc)
        detect_mpirun(&p);
    for (int i = 0; !rc && i < PF_N_CHECKS; i++) {
        checks[i].name = CHECKS[i].name;
        rc = CHECKS[i].run(&p, &checks[i], CHECKS[i].tol, err);
    }
    free(p.model);
    return rc;
}
