/* scaleplan preflight: the checklist planning guides ask a team to pass on
 * its own hardware before scaling up, run with the reference trainer.
 *
 * Each check runs `scaleplan train` (this binary) as child processes - under
 * mpirun for the multi-rank ones - and compares what they print with
 * --json: losses of two ways of computing the same thing, a killed and
 * resumed job against an uninterrupted one, a measured step against the
 * simulator. Every check prints pass, fail or skip (with the reason) and the
 * figure it was judged on.
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli/args.h"
#include "cli/commands.h"
#include "common/dist.h"
#include "common/fileio.h"
#include "common/json.h"
#include "reports/table.h"

static const cli_opt_t own_opts[] = {
    {"--device", NULL, "cpu|cuda", "where the checks train (default cpu)"},
    {"--ranks", NULL, "N", "ranks for the multi-process checks (default 2)"},
    {"--steps", NULL, "N", "steps per run (default 6)"},
    {"--micro-batch", NULL, "N", "sequences per micro-batch (default 2)"},
    {"--seq-len", NULL, "N", "tokens per sequence (default 32)"},
    {"--mpirun", NULL, "CMD", "launcher for multi-rank runs (default mpirun)"},
    {"--keep", NULL, "DIR", "keep every run's files in DIR (default: a temporary folder, removed)"},
};
static const cli_group_t own_group = {"Preflight", own_opts, sizeof own_opts / sizeof own_opts[0]};

typedef enum { CHECK_PASS = 0, CHECK_FAIL, CHECK_SKIP } verdict_t;

static const char *const VERDICT[] = {"pass", "FAIL", "skip"};

typedef struct {
    const char *name;
    verdict_t verdict;
    char figure[240];
} check_t;

typedef struct {
    char self[1024];    /* this binary */
    char dir[512];      /* work folder */
    char model[640];    /* --model argument */
    const char *device;
    const char *mpirun;
    bool have_mpirun;
    bool open_mpi;
    int ranks, steps, micro_batch, seq_len;
    int run_id;
} pf_t;

/* ------------------------------------------------------------ child runs */

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

/* One `scaleplan train` run with ranks processes and extra arguments
 * (NULL-terminated); its JSON in *out (NULL when it printed none), its
 * stderr tail in tail. */
static int train(pf_t *p, int ranks, const char *const *extra, cJSON **out, int *status,
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
    argv[n++] = p->self;
    argv[n++] = "train";
    argv[n++] = "--model";
    argv[n++] = p->model;
    argv[n++] = "--device";
    argv[n++] = (char *)p->device;
    argv[n++] = "--steps";
    argv[n++] = steps;
    argv[n++] = "--micro-batch";
    argv[n++] = mb;
    argv[n++] = "--seq-len";
    argv[n++] = seq;
    argv[n++] = "--json";
    argv[n++] = "--quiet";
    for (int i = 0; extra && extra[i] && n < 62; i++)
        argv[n++] = (char *)extra[i];
    argv[n] = NULL;
    char o[640], e[640];
    int id = ++p->run_id;
    snprintf(o, sizeof o, "%s/run-%02d.json", p->dir, id);
    snprintf(e, sizeof e, "%s/run-%02d.log", p->dir, id);
    int rc = spawn(argv, o, e, status, err);
    if (rc)
        return rc;
    char *log = NULL;
    size_t len = 0;
    tail[0] = '\0';
    if (fileio_read_all(e, &log, &len, err) == 0) {
        /* the last line says what went wrong */
        while (len > 0 && (log[len - 1] == '\n' || log[len - 1] == '\r'))
            log[--len] = '\0';
        const char *last = strrchr(log, '\n');
        snprintf(tail, tail_cap, "%s", last ? last + 1 : log);
        free(log);
    }
    if (*status == 0) {
        err_t perr;
        if (json_parse_file(o, out, &perr) != 0)
            *out = NULL;
    }
    return ERR_OK;
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

static void failed_run(check_t *c, const char *what, int status, const char *tail)
{
    c->verdict = CHECK_FAIL;
    snprintf(c->figure, sizeof c->figure, "%s exited %d: %s", what, status, tail);
}

/* ------------------------------------------------------------ the checks */

/* Equal within tol, by loss curve; on_pass describes the figure. */
static void judge(check_t *c, double diff, bool exact, double tol, bool want_exact, int steps)
{
    if (diff < 0) {
        c->verdict = CHECK_FAIL;
        snprintf(c->figure, sizeof c->figure, "the runs' loss curves have different lengths");
        return;
    }
    bool ok = want_exact ? exact : diff <= tol;
    c->verdict = ok ? CHECK_PASS : CHECK_FAIL;
    if (exact)
        snprintf(c->figure, sizeof c->figure, "identical losses over %d steps (bit for bit)", steps);
    else
        snprintf(c->figure, sizeof c->figure,
                 "largest relative loss difference %.2g over %d steps (limit %s)", diff, steps,
                 want_exact ? "bit-exact" : tol <= 1e-5 ? "1e-5" : "1e-6");
}

static int check_dp(pf_t *p, check_t *c, err_t *err)
{
    c->name = "DP run equals the 1-rank run (same global batch)";
    if (!p->have_mpirun) {
        c->verdict = CHECK_SKIP;
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
        judge(c, d, exact, 1e-5, false, p->steps);
    }
out:
    cJSON_Delete(one);
    cJSON_Delete(many);
    return rc;
}

static int check_accum(pf_t *p, check_t *c, err_t *err)
{
    c->name = "gradient accumulation equals the large batch";
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
        judge(c, d, exact, 1e-5, false, p->steps);
    }
out:
    cJSON_Delete(a);
    cJSON_Delete(b);
    return rc;
}

/* An uninterrupted run with checkpoints, then the same run stopped (by
 * --steps, or killed) and resumed; the resumed losses must equal the
 * uninterrupted ones. */
static int check_resume(pf_t *p, check_t *c, bool kill, err_t *err)
{
    c->name = kill ? "a killed rank is detected and the job resumes from the last checkpoint"
                   : "save + resume gives the same losses as an uninterrupted run";
    int ranks = kill && p->have_mpirun ? p->ranks : 1;
    char every[16], half[16], dir_a[600], dir_b[600], fail_at[16], fail_rank[16];
    int k = p->steps / 2 > 0 ? p->steps / 2 : 1;
    snprintf(every, sizeof every, "%d", kill ? (k > 1 ? k - 1 : 1) : k);
    snprintf(half, sizeof half, "%d", k);
    snprintf(dir_a, sizeof dir_a, "%s/ckpt-%s-a", p->dir, kill ? "kill" : "stop");
    snprintf(dir_b, sizeof dir_b, "%s/ckpt-%s-b", p->dir, kill ? "kill" : "stop");
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
        c->verdict = CHECK_FAIL;
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
        c->verdict = CHECK_FAIL;
        snprintf(c->figure, sizeof c->figure, "the rerun did not resume from a checkpoint");
        goto out;
    }
    bool exact;
    double d = max_rel_diff(losses_of(a), from, losses_of(r), &exact);
    bool cpu = strcmp(p->device, "cpu") == 0;
    judge(c, d, exact, 1e-6, cpu, p->steps - from);
    if (c->verdict == CHECK_PASS) {
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

static int check_bf16(pf_t *p, check_t *c, err_t *err)
{
    c->name = "bf16 loss tracks fp32";
    if (strcmp(p->device, "cuda") != 0) {
        c->verdict = CHECK_SKIP;
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
        /* bf16 keeps 8 bits of mantissa: losses agree to about 1% */
        c->verdict = d >= 0 && d <= 0.02 ? CHECK_PASS : CHECK_FAIL;
        snprintf(c->figure, sizeof c->figure,
                 "largest relative loss difference %.3g over %d steps (limit 0.02)", d, p->steps);
    }
out:
    cJSON_Delete(a);
    cJSON_Delete(b);
    return rc;
}

static int check_throughput(pf_t *p, check_t *c, err_t *err)
{
    c->name = "measured throughput within 10% of the prediction";
    if (strcmp(p->device, "cuda") != 0) {
        c->verdict = CHECK_SKIP;
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
    char measured[700], out[700], errf[700];
    snprintf(measured, sizeof measured, "%s/run-%02d.json", p->dir, p->run_id);
    snprintf(out, sizeof out, "%s/validate.json", p->dir);
    snprintf(errf, sizeof errf, "%s/validate.log", p->dir);
    char *argv[] = {p->self, "validate", "--measured", measured, "--json", NULL};
    int st;
    if ((rc = spawn(argv, out, errf, &st, err)))
        return rc;
    cJSON *v = NULL;
    err_t perr;
    if (st != 0 || json_parse_file(out, &v, &perr) != 0) {
        failed_run(c, "scaleplan validate", st, "see validate.log");
        return ERR_OK;
    }
    const cJSON *e = cJSON_GetObjectItemCaseSensitive(v, "step_time_error");
    double error = cJSON_IsNumber(e) ? e->valuedouble : NAN;
    c->verdict = fabs(error) <= 0.10 ? CHECK_PASS : CHECK_FAIL;
    snprintf(c->figure, sizeof c->figure, "step time predicted %+.1f%% from measured (limit 10%%)",
             100 * error);
    cJSON_Delete(v);
    return ERR_OK;
}

/* ------------------------------------------------------------ setup */

/* A small GPT for the checks when no model is given: seconds per run. */
static int write_default_model(pf_t *p, err_t *err)
{
    snprintf(p->model, sizeof p->model, "%s/preflight-gpt.json", p->dir);
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
    char buf[1024];
    while (path && *path) {
        size_t n = strcspn(path, ":");
        snprintf(buf, sizeof buf, "%.*s/%s", (int)n, path, cmd);
        if (access(buf, X_OK) == 0)
            return true;
        path += n;
        if (*path == ':')
            path++;
    }
    return false;
}

static void detect_mpirun(pf_t *p)
{
    p->have_mpirun = dist_have_mpi() && on_path(p->mpirun);
    if (!p->have_mpirun)
        return;
    char out[700], errf[700];
    snprintf(out, sizeof out, "%s/mpirun-version.txt", p->dir);
    snprintf(errf, sizeof errf, "%s/mpirun-version.log", p->dir);
    char *argv[] = {(char *)p->mpirun, "--version", NULL};
    int st;
    err_t ignored;
    char *text = NULL;
    if (spawn(argv, out, errf, &st, &ignored) == 0 &&
        fileio_read_all(out, &text, NULL, &ignored) == 0) {
        p->open_mpi = strstr(text, "Open MPI") != NULL;
        free(text);
    }
}

static int remove_tree(const char *path)
{
    char *argv[] = {"rm", "-rf", (char *)path, NULL};
    pid_t pid = fork();
    if (pid == 0) {
        execvp("rm", argv);
        _exit(127);
    }
    int st = 0;
    return pid > 0 && waitpid(pid, &st, 0) > 0 && WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : -1;
}

static cJSON *checks_json(const pf_t *p, const check_t *c, int n)
{
    cJSON *o = cJSON_CreateObject(), *arr = NULL;
    bool ok = o && cJSON_AddStringToObject(o, "device", p->device) &&
              cJSON_AddStringToObject(o, "model", p->model) &&
              json_add_number(o, "ranks", p->ranks) && (arr = cJSON_AddArrayToObject(o, "checks"));
    int failed = 0;
    for (int i = 0; ok && i < n; i++) {
        cJSON *e = cJSON_CreateObject();
        failed += c[i].verdict == CHECK_FAIL;
        ok = e && cJSON_AddItemToArray(arr, e) && cJSON_AddStringToObject(e, "check", c[i].name) &&
             cJSON_AddStringToObject(e, "result", c[i].verdict == CHECK_PASS   ? "pass"
                                                  : c[i].verdict == CHECK_FAIL ? "fail"
                                                                               : "skip") &&
             cJSON_AddStringToObject(e, "figure", c[i].figure);
    }
    ok = ok && json_add_number(o, "failed", failed);
    if (!ok) {
        cJSON_Delete(o);
        return NULL;
    }
    return o;
}

static int run(const cli_args_t *a, err_t *err)
{
    int rc = ERR_OK;
    pf_t p;
    memset(&p, 0, sizeof p);
    p.device = cli_get(a, "--device") ? cli_get(a, "--device") : "cpu";
    p.mpirun = cli_get(a, "--mpirun") ? cli_get(a, "--mpirun") : "mpirun";
    p.ranks = 2;
    p.steps = 6;
    p.micro_batch = 2;
    p.seq_len = 32;
    if ((rc = cli_get_int(a, "--ranks", 2, 4096, &p.ranks, err)) ||
        (rc = cli_get_int(a, "--steps", 4, 100000, &p.steps, err)) ||
        (rc = cli_get_int(a, "--micro-batch", 1, 4096, &p.micro_batch, err)) ||
        (rc = cli_get_int(a, "--seq-len", 2, 1 << 20, &p.seq_len, err)))
        return rc;
    if (strcmp(p.device, "cpu") != 0 && strcmp(p.device, "cuda") != 0)
        return err_setf(err, ERR_INPUT, NULL, "--device", "must be cpu or cuda (got '%s')", p.device);
    ssize_t n = readlink("/proc/self/exe", p.self, sizeof p.self - 1);
    if (n <= 0)
        return err_set(err, ERR_RUNTIME, "cannot find this program's path (/proc/self/exe)");
    p.self[n] = '\0';
    const char *keep = cli_get(a, "--keep");
    if (keep) {
        snprintf(p.dir, sizeof p.dir, "%s", keep);
        if ((rc = fileio_mkdirs(p.dir, err)))
            return rc;
    } else {
        const char *tmp = getenv("TMPDIR");
        snprintf(p.dir, sizeof p.dir, "%s/scaleplan-preflight-XXXXXX", tmp && *tmp ? tmp : "/tmp");
        if (!mkdtemp(p.dir))
            return err_setf(err, ERR_RUNTIME, p.dir, NULL, "cannot create a work folder: %s",
                            strerror(errno));
    }
    const char *model = cli_get(a, "--model");
    if (model)
        snprintf(p.model, sizeof p.model, "%s", model);
    else if ((rc = write_default_model(&p, err)))
        goto out;
    detect_mpirun(&p);
    check_t checks[6];
    memset(checks, 0, sizeof checks);
    bool json = cli_has(a, "--json");
    if (!json)
        fprintf(stderr, "preflight: running the checks with %s (work folder %s)...\n", p.device,
                p.dir);
    if ((rc = check_dp(&p, &checks[0], err)) ||
        (rc = check_resume(&p, &checks[1], false, err)) ||
        (rc = check_accum(&p, &checks[2], err)) || (rc = check_bf16(&p, &checks[3], err)) ||
        (rc = check_resume(&p, &checks[4], true, err)) ||
        (rc = check_throughput(&p, &checks[5], err)))
        goto out;
    int failed = 0, passed = 0;
    for (int i = 0; i < 6; i++) {
        failed += checks[i].verdict == CHECK_FAIL;
        passed += checks[i].verdict == CHECK_PASS;
    }
    if (json) {
        cJSON *j = checks_json(&p, checks, 6);
        rc = j ? json_print_stdout(j, err) : err_set(err, ERR_RUNTIME, "out of memory");
        cJSON_Delete(j);
    } else {
        static const char *hdr[] = {"check", "result", "figure"};
        table_t *t = table_create(3, hdr);
        if (!t) {
            rc = err_set(err, ERR_RUNTIME, "out of memory");
            goto out;
        }
        for (int i = 0; i < 6; i++)
            table_add_rowf(t, "%s\t%s\t%s", checks[i].name, VERDICT[checks[i].verdict],
                           checks[i].figure);
        rc = table_print(t, stdout, 2, 0);
        table_destroy(t);
        printf("\n  %d passed, %d failed, %d skipped\n", passed, failed, 6 - passed - failed);
    }
    if (!rc && failed > 0)
        rc = err_set(err, ERR_RUNTIME, "%d preflight check%s failed%s%s", failed,
                     failed == 1 ? "" : "s", keep ? "; runs kept in " : "", keep ? keep : "");
out:
    if (!keep)
        remove_tree(p.dir);
    return rc;
}

static const cli_group_t *const groups[] = {&CLI_MODEL_OPTS,
                                         &own_group,
                                         &CLI_OUTPUT_OPTS};

const cli_command_t CLI_CMD_PREFLIGHT = {
    "preflight",
    "the pre-scale-up checklist, run with the reference trainer",
    "scaleplan preflight [--device cpu|cuda] [--ranks N] [--model M]",
    "Before scaling up, check on this machine that: a data-parallel run equals\n"
                       "the one-rank run; save + resume equals an uninterrupted run (bit-exact on\n"
                       "the CPU); gradient accumulation equals the large batch; bf16 tracks fp32\n"
                       "(GPU); a killed rank is detected and the job resumes from its last\n"
                       "checkpoint; the measured step is within 10% of the prediction (GPU). Each\n"
                       "check runs scaleplan train (under mpirun for several ranks) and prints\n"
                       "pass, fail or skip with its figure. Exit 1 when a check fails.",
    groups,
    sizeof groups / sizeof groups[0],
    run,
};
