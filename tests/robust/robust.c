/* The CLI robustness suite: every flag that takes a value, of every
 * command, with hostile values, plus each flag given twice and a stray
 * word, against the real binary.
 *
 *     robust BIN        (make check runs it; ROBUST_JOBS=2, ROBUST_LIMIT_S=30)
 *
 * The flags come from `scaleplan --list-options`, the command table itself,
 * so a new flag is covered as soon as it is declared. Numeric flags get
 * nan inf -1 0 -0 1e308 2147483648 1.5 abc and ''; names and files get abc
 * and ''. Each case runs on top of a small, fast base command (below) in a
 * scratch folder, and must end in one of two ways:
 *   - a correct answer: exit 0 and no NaN, infinity or negative money in
 *     what it prints (a command may also exit 1 for a runtime failure it
 *     names on one line, as sim does for a layout that does not fit);
 *   - a refusal: exit 2 and exactly one line on stderr.
 * A flag given twice and a stray word must be refused. Nothing may hang
 * (ROBUST_LIMIT_S per case), crash or print a sanitizer report.
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MAX_ARGS 48
#define MAX_CASES 8192

/* A small, fast run of each command; "@" is the repository root. The flag
 * under test replaces the base's own (and its alias). */
static const struct {
    const char *cmd;
    const char *args[24];
} bases[] = {
    {"plan", {"--model", "llama3-8b", "--tokens", "10B", "--gpu", "h100-sxm", "--min-gpus", "8",
              "--max-gpus", "8", "--trials", "20"}},
    {"sim", {"--model", "llama3-8b", "--gpu", "h100-sxm", "--gpus", "8", "--tp", "8",
             "--global-batch", "8"}},
    {"reliability", {"--gpu", "h100-sxm", "--gpus", "64", "--days", "2", "--checkpoint-size",
                     "100GB", "--trials", "20"}},
    {"budget", {"--model", "llama3-8b", "--tokens", "10B", "--gpus", "8", "--gpu", "h100-sxm",
                "--tp", "8", "--global-batch", "8", "--trials", "20"}},
    {"power", {"--model", "llama3-8b", "--gpu", "h100-sxm", "--gpus", "8", "--tp", "8",
               "--global-batch", "8", "--tokens", "10B", "--trials", "20"}},
    {"model", {"--model", "llama3-8b"}},
    {"train", {"--model", "@/tests/fixtures/configs/tiny-gpt.json", "--steps", "2",
               "--micro-batch", "1", "--seq-len", "8", "--quiet"}},
    {"validate", {"--measured", "@/tests/fixtures/validate/sc21-gpt-1.7b-32xa100.json"}},
    {"calibrate", {"--from-nccl-tests", "@/tests/fixtures/calibrate/a100_all_reduce_perf.log",
                   "--out", "p.json"}},
    {"preflight", {"--mpirun", "/bin/false", "--steps", "4", "--seq-len", "8", "--micro-batch",
                   "1"}},
    {"catalog", {"gpus"}},
    {"report", {"@/tests/fuzz/seeds/report/sim.json", "--out", "r"}},
    {"cluster", {"--trace", "@/tests/fixtures/cluster/tiresias_60_job.csv", "--trace-format",
                 "tiresias", "--gpus", "16"}},
};

/* Flags whose accepted values run a whole checklist of trainings (minutes):
 * test_preflight_cpu covers them; their bad values are refused all the
 * same. */
static const char *const slow[] = {"preflight --mpirun", "preflight --keep"};

static const char *const numeric_values[] = {"nan", "inf",        "-1",  "0",   "-0",
                                             "1e308", "2147483648", "1.5", "abc", ""};
static const char *const text_values[] = {"abc", ""};

typedef struct {
    char *argv[MAX_ARGS];
    int argc;
    bool must_refuse; /* exit 2 is the only right answer */
    char label[160];
} case_t;

static char root[4096];
static char scratch[4096];

static char *dup_arg(const char *a)
{
    char buf[8192];
    if (a[0] == '@')
        snprintf(buf, sizeof buf, "%s%s", root, a + 1);
    else
        snprintf(buf, sizeof buf, "%s", a);
    char *d = strdup(buf);
    if (!d) {
        perror("robust");
        exit(1);
    }
    return d;
}

/* base of cmd without name / alias (and the value after it when it takes
 * one), into c. */
static int base_without(const char *bin, int b, const char *name, const char *alias,
                        bool takes_value, case_t *c)
{
    c->argc = 0;
    c->argv[c->argc++] = dup_arg(bin);
    c->argv[c->argc++] = dup_arg(bases[b].cmd);
    for (int i = 0; bases[b].args[i]; i++) {
        const char *a = bases[b].args[i];
        if ((name && strcmp(a, name) == 0) || (alias && strcmp(a, alias) == 0)) {
            if (takes_value && bases[b].args[i + 1])
                i++;
            continue;
        }
        c->argv[c->argc++] = dup_arg(a);
    }
    return c->argc;
}

static int find_base(const char *cmd)
{
    for (size_t b = 0; b < sizeof bases / sizeof bases[0]; b++)
        if (strcmp(bases[b].cmd, cmd) == 0)
            return (int)b;
    return -1;
}

/* The base's own value of name, or NULL. */
static const char *base_value(int b, const char *name)
{
    for (int i = 0; bases[b].args[i]; i++)
        if (strcmp(bases[b].args[i], name) == 0 && bases[b].args[i + 1])
            return bases[b].args[i + 1];
    return NULL;
}

/* ------------------------------------------------------------ judging */

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return strdup("");
    size_t cap = 1 << 16, n = 0;
    char *s = malloc(cap);
    size_t got;
    while (s && (got = fread(s + n, 1, cap - n - 1, f)) > 0) {
        n += got;
        if (n + 1 == cap) {
            char *t = realloc(s, cap *= 2);
            if (!t) {
                free(s);
                s = NULL;
            }
            s = t;
        }
    }
    fclose(f);
    if (s)
        s[n] = '\0';
    return s ? s : strdup("");
}

static int lines(const char *s)
{
    int n = 0;
    for (const char *p = s; *p; p++)
        n += *p == '\n';
    if (*s && s[strlen(s) - 1] != '\n')
        n++;
    return n;
}

/* A NaN or infinity printed as a word, or a negative amount of money. */
static const char *bad_number(const char *s)
{
    for (const char *p = s; *p;) {
        if (!isalpha((unsigned char)*p)) {
            if ((p[0] == '$' && p[1] == '-') || (p[0] == '-' && p[1] == '$'))
                return "negative money";
            if (strncmp(p, "_usd\":", 6) == 0) {
                const char *v = p + 6;
                while (*v == ' ' || *v == '\t')
                    v++;
                if (*v == '-')
                    return "negative money in the JSON";
            }
            p++;
            continue;
        }
        const char *w = p;
        while (isalnum((unsigned char)*p) || *p == '_')
            p++;
        size_t n = (size_t)(p - w);
        if ((n == 3 && strncasecmp(w, "nan", 3) == 0) || (n == 3 && strncasecmp(w, "inf", 3) == 0) ||
            (n == 8 && strncasecmp(w, "infinity", 8) == 0))
            return "NaN or infinity";
    }
    return NULL;
}

/* "" when the outcome is acceptable, else why not. */
static const char *judge(const case_t *c, int status, bool timed_out, const char *out,
                         const char *err, char *why, size_t cap)
{
    if (timed_out)
        return snprintf(why, cap, "did not finish in time (hang?)"), why;
    if (WIFSIGNALED(status))
        return snprintf(why, cap, "killed by signal %d", WTERMSIG(status)), why;
    int rc = WEXITSTATUS(status);
    if (strstr(err, "Sanitizer") || strstr(err, "runtime error:"))
        return snprintf(why, cap, "sanitizer report"), why;
    if (c->must_refuse && rc != 2)
        return snprintf(why, cap, "exit %d, not a refusal (2)", rc), why;
    if (rc == 0) {
        const char *b = bad_number(out);
        if (b)
            return snprintf(why, cap, "exit 0 but prints %s", b), why;
        return "";
    }
    if (rc != 1 && rc != 2)
        return snprintf(why, cap, "exit %d", rc), why;
    if (lines(err) != 1 || strncmp(err, "scaleplan ", 10) != 0)
        return snprintf(why, cap, "exit %d with %d lines on stderr, not one", rc, lines(err)), why;
    return "";
}

/* ------------------------------------------------------------ running */

typedef struct {
    pid_t pid;
    int index;
    double start;
} slot_t;

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static pid_t start(const case_t *c, int slot)
{
    char out[4200], err[4200];
    snprintf(out, sizeof out, "%s/out.%d", scratch, slot);
    snprintf(err, sizeof err, "%s/err.%d", scratch, slot);
    pid_t pid = fork();
    if (pid != 0)
        return pid;
    setpgid(0, 0); /* its own group: a timeout kills what it started too */
    char cwd[4200];
    snprintf(cwd, sizeof cwd, "%s/run.%d", scratch, slot);
    mkdir(cwd, 0755);
    int fo = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    int fe = open(err, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    int fi = open("/dev/null", O_RDONLY);
    if (chdir(cwd) != 0 || fo < 0 || fe < 0 || fi < 0 || dup2(fo, 1) < 0 || dup2(fe, 2) < 0 ||
        dup2(fi, 0) < 0)
        _exit(126);
    setenv("SCALEPLAN_PROGRESS", "0", 1);
    setenv("OMP_NUM_THREADS", "1", 1);
    execv(c->argv[0], c->argv);
    _exit(127);
}

static void describe(const case_t *c, char *buf, size_t cap)
{
    size_t n = 0;
    for (int i = 1; i < c->argc && n < cap; i++) {
        const char *a = c->argv[i];
        bool quote = !*a || strpbrk(a, " '");
        int k = snprintf(buf + n, cap - n, "%s%s%s%s", i > 1 ? " " : "", quote ? "'" : "",
                         strncmp(a, root, strlen(root)) == 0 ? a + strlen(root) + 1 : a,
                         quote ? "'" : "");
        if (k < 0)
            break;
        n += (size_t)k;
    }
}

/* The cases of one flag of cmd (base b): given twice (under its alias the
 * second time, when it has one), then each hostile value when it takes one
 * and is not slow. Appends to cases at *n; *flags counts flags with values. */
static void add_flag_cases(const char *bin, int b, const char *cmd, const char *name,
                           const char *al, bool takes, const char *kind, case_t *cases, int *n,
                           int *flags)
{
    char key[200];
    snprintf(key, sizeof key, "%s %s", cmd, name);
    bool skip = false;
    for (size_t k = 0; k < sizeof slow / sizeof slow[0]; k++)
        skip = skip || strcmp(slow[k], key) == 0;
    {
        case_t *c = &cases[(*n)++];
        base_without(bin, b, name, al, takes, c);
        const char *v = base_value(b, name) ? base_value(b, name) : "1";
        c->argv[c->argc++] = dup_arg(name);
        if (takes)
            c->argv[c->argc++] = dup_arg(v);
        c->argv[c->argc++] = dup_arg(al ? al : name);
        if (takes)
            c->argv[c->argc++] = dup_arg(v);
        c->must_refuse = true;
        snprintf(c->label, sizeof c->label, "%s given twice", key);
    }
    if (!takes || skip)
        return;
    (*flags)++;
    bool numeric = strcmp(kind, "text") != 0;
    const char *const *values = numeric ? numeric_values : text_values;
    size_t nv = numeric ? sizeof numeric_values / sizeof numeric_values[0]
                        : sizeof text_values / sizeof text_values[0];
    for (size_t k = 0; k < nv; k++) {
        case_t *c = &cases[(*n)++];
        base_without(bin, b, name, al, true, c);
        c->argv[c->argc++] = dup_arg(name);
        c->argv[c->argc++] = dup_arg(values[k]);
        snprintf(c->label, sizeof c->label, "%s '%s'", key, values[k]);
    }
}

/* Every case, from the flags of `bin --list-options` (the command table):
 * a stray word once per command, then each flag's cases. 0, or 1 having
 * said why. */
static int build_cases(const char *bin, case_t *cases, int *n, int *flags)
{
    char cmdline[8400];
    snprintf(cmdline, sizeof cmdline, "'%s' --list-options", bin);
    FILE *p = popen(cmdline, "r");
    if (!p)
        return perror("robust: popen"), 1;
    char line[1024], last_cmd[64] = "";
    while (fgets(line, sizeof line, p) && *n + 16 < MAX_CASES) {
        char cmd[64], name[128], alias[128], meta[128], kind[32];
        if (sscanf(line, "%63[^\t]\t%127[^\t]\t%127[^\t]\t%127[^\t]\t%31s", cmd, name, alias, meta,
                   kind) != 5)
            continue;
        int b = find_base(cmd);
        if (b < 0) {
            fprintf(stderr, "robust: no base command for '%s': add one to tests/robust/robust.c\n",
                    cmd);
            return 1;
        }
        bool takes = strcmp(meta, "-") != 0;
        const char *al = strcmp(alias, "-") ? alias : NULL;
        if (strcmp(cmd, last_cmd) != 0) {
            /* once per command: a stray word */
            snprintf(last_cmd, sizeof last_cmd, "%s", cmd);
            case_t *c = &cases[(*n)++];
            base_without(bin, b, NULL, NULL, false, c);
            c->argv[c->argc++] = dup_arg(strcmp(cmd, "catalog") == 0 ? "stray" : "stray-word");
            c->must_refuse = true;
            snprintf(c->label, sizeof c->label, "%s: a stray word", cmd);
        }
        if (strcmp(name, "--help") == 0)
            continue;
        add_flag_cases(bin, b, cmd, name, al, takes, kind, cases, n, flags);
    }
    int prc = pclose(p);
    if (prc != 0 || *n == 0) {
        fprintf(stderr, "robust: '%s --list-options' failed\n", bin);
        return 1;
    }
    return 0;
}

/* Judge the finished case of slot s from its status and files; says so
 * when it fails. Returns 1 when it failed, else 0. */
static int finish(const case_t *c, int s, int status, bool timed_out, double start_s, int failed)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/out.%d", scratch, s);
    char *out = slurp(path);
    snprintf(path, sizeof path, "%s/err.%d", scratch, s);
    char *err = slurp(path);
    char why[200];
    const char *verdict = judge(c, status, timed_out, out, err, why, sizeof why);
    if (*verdict) {
        char args[2000];
        describe(c, args, sizeof args);
        if (failed < 60)
            fprintf(stderr, "robust: FAIL %s: %s\n  $ scaleplan %s\n  stderr: %.300s\n",
                    c->label, verdict, args, err);
    }
    if (getenv("ROBUST_SLOW") && now_s() - start_s > atof(getenv("ROBUST_SLOW")))
        fprintf(stderr, "robust: slow %.1f s: %s\n", now_s() - start_s, c->label);
    free(out);
    free(err);
    return *verdict ? 1 : 0;
}

/* Run the n cases, jobs at a time, each killed after limit seconds.
 * Returns how many failed; *done counts those run, or -1 when out of
 * memory. */
static int run_cases(const case_t *cases, int n, int jobs, double limit, int *done)
{
    slot_t *slots = calloc((size_t)jobs, sizeof *slots);
    if (!slots)
        return perror("robust"), *done = -1, 0;
    int next = 0, running = 0, failed = 0;
    while (next < n || running > 0) {
        for (int s = 0; s < jobs && next < n; s++)
            if (slots[s].pid == 0) {
                slots[s].pid = start(&cases[next], s);
                slots[s].index = next++;
                slots[s].start = now_s();
                running++;
            }
        int status;
        pid_t pid = waitpid(-1, &status, WNOHANG);
        if (pid == 0) {
            struct timespec nap = {0, 2000000};
            nanosleep(&nap, NULL);
        }
        for (int s = 0; s < jobs; s++) {
            if (slots[s].pid == 0)
                continue;
            bool timed_out = false;
            if (pid != slots[s].pid) {
                if (now_s() - slots[s].start < limit)
                    continue;
                kill(-slots[s].pid, SIGKILL);
                waitpid(slots[s].pid, &status, 0);
                timed_out = true;
            }
            failed += finish(&cases[slots[s].index], s, status, timed_out, slots[s].start, failed);
            slots[s].pid = 0;
            running--;
            (*done)++;
            if (!timed_out)
                break; /* one reaped per waitpid */
        }
    }
    free(slots);
    return failed;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: robust BIN\n");
        return 2;
    }
    if (!getcwd(root, sizeof root))
        return perror("robust: getcwd"), 1;
    const char *bin = argv[1];
    int jobs = getenv("ROBUST_JOBS") ? atoi(getenv("ROBUST_JOBS")) : 2;
    double limit = getenv("ROBUST_LIMIT_S") ? atof(getenv("ROBUST_LIMIT_S")) : 30;
    if (jobs < 1 || jobs > 64)
        jobs = 2;
    snprintf(scratch, sizeof scratch, "%s/scaleplan-robust-XXXXXX",
             getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    if (!mkdtemp(scratch))
        return perror("robust: mkdtemp"), 1;

    /* the flags, from the command table */
    case_t *cases = calloc(MAX_CASES, sizeof *cases);
    if (!cases)
        return perror("robust"), 1;
    int n = 0, flags = 0;
    if (build_cases(bin, cases, &n, &flags))
        return 1;

    /* run them, jobs at a time */
    double t0 = now_s();
    int done = 0;
    int failed = run_cases(cases, n, jobs, limit, &done);
    if (done < 0)
        return 1;
    char rm[4200];
    snprintf(rm, sizeof rm, "rm -rf '%s'", scratch);
    if (system(rm) != 0)
        fprintf(stderr, "robust: could not remove %s\n", scratch);
    printf("robust: %d cases (%d flags with values, each given twice, stray words) in %.0f s: "
           "%s\n",
           done, flags, now_s() - t0, failed ? "FAILED" : "every one answered or refused in "
                                                       "one line");
    if (failed)
        printf("robust: %d failed\n", failed);
    for (int i = 0; i < n; i++)
        for (int k = 0; k < cases[i].argc; k++)
            free(cases[i].argv[k]);
    free(cases);
    return failed ? 1 : 0;
}
