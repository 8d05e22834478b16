/* The semantic invariant suite: random reliability, plan and budget
 * configurations against the real binary, each judged on what any right
 * answer must satisfy, whatever the numbers.
 *
 *     invariants BIN [N [SEED]]   (make check runs it: N 1000, a fixed seed;
 *                                  INVARIANTS_JOBS=2, INVARIANTS_LIMIT_S=10)
 *     INVARIANTS_LIST=1 invariants - N [SEED]   prints the cases' commands
 *
 * The configurations reach the corners ordinary use reaches: 1 to 131,072
 * GPUs, spot capacity, every environment, restarts of a day, checkpoints
 * every second or every day, fixed reservations and token targets, a
 * handful of trials or the adaptive Monte Carlo. Each case must
 *   - return within INVARIANTS_LIMIT_S seconds of processor time on one
 *     thread (issue 35: 9 of 150 random configurations never returned);
 *     processor time, so that a loaded machine does not fail a case, and
 *     a case still running after three times the limit on the clock is
 *     killed and failed;
 *   - exit 0 with a JSON document, or exit 1 or 2 with one line on stderr;
 *   - in its document: no NaN or infinite number, no negative one, every
 *     goodput within [0, 1], every P10 <= P50 <= P90.
 * The seed makes the cases the same on every run; a failure prints the
 * command, so it can be rerun by hand.
 */
/* wait4: the children's processor time */
#define _DEFAULT_SOURCE

#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#define MAX_JOBS 8
#define CMD_MAX 1024

static uint64_t next_u64(uint64_t *s)
{
    /* splitmix64 (Steele et al. 2014) */
    uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

static int pick(uint64_t *s, int n)
{
    return (int)(next_u64(s) % (uint64_t)n);
}

#define PICK(s, arr) (arr)[pick((s), (int)(sizeof(arr) / sizeof((arr)[0])))]

static const char *const gpus_types[] = {"h100-sxm", "a100-80g", "h200", "b200", "gb200"};
static const char *const models[] = {"llama3-8b", "mistral-7b", "llama3-70b", "mixtral-8x7b",
                                     "gpt3-175b", "qwen3-30b-a3b"};
static const char *const envs[] = {"", "dedicated", "research", "hpc", "cloud", "marketplace"};
static const char *const tokens[] = {"1B", "10B", "100B", "1T", "15T"};
static const char *const days[] = {"0.01", "1", "7", "30", "400"};
static const char *const every[] = {"", "", "1s", "10m", "1h", "1d"};
static const char *const restarts[] = {"", "", "30s", "10m", "1d"};
static const char *const trials[] = {"", "1", "20", "200"};

/* A GPU count: a power of two from 1 to 131,072, sometimes three times
 * one, sometimes an odd count. */
static int gpu_count(uint64_t *s)
{
    int k = pick(s, 18), n = 1 << k;
    switch (pick(s, 4)) {
    case 0:
        return n * 3 > 131072 ? n : n * 3;
    case 1:
        return 1 + pick(s, 1000);
    default:
        return n;
    }
}

/* The options every command shares: the failure side of the run. */
static int failure_opts(uint64_t *s, char *buf, size_t cap)
{
    const char *env = PICK(s, envs), *ev = PICK(s, every), *rs = PICK(s, restarts);
    const char *tr = PICK(s, trials);
    return snprintf(buf, cap, "%s%s%s%s%s%s%s%s%s", *env ? " --environment " : "", env,
                    pick(s, 4) == 0 ? " --spot" : "", *ev ? " --checkpoint-every " : "", ev,
                    *rs ? " --restart-overhead " : "", rs, *tr ? " --trials " : "", tr);
}

/* Case i's command line (after the binary). */
static void make_case(uint64_t seed, int i, char *cmd, size_t cap)
{
    uint64_t s = seed ^ ((uint64_t)i * 0x2545f4914f6cdd1dULL);
    next_u64(&s);
    char fail[256];
    failure_opts(&s, fail, sizeof fail);
    const char *gpu = PICK(&s, gpus_types), *model = PICK(&s, models);
    int n = gpu_count(&s);
    switch (i % 3) {
    case 0:
        if (pick(&s, 2))
            snprintf(cmd, cap, "reliability --gpu %s --gpus %d --model %s --tokens %s%s", gpu, n,
                     model, PICK(&s, tokens), fail);
        else
            snprintf(cmd, cap, "reliability --gpu %s --gpus %d --days %s --checkpoint-size %dGB%s",
                     gpu, n, PICK(&s, days), 1 + pick(&s, 5000), fail);
        break;
    case 1: {
        int lo = 1 << (3 + pick(&s, 12));
        snprintf(cmd, cap, "plan --model %s --gpu %s --tokens %s --min-gpus %d --max-gpus %d%s",
                 model, gpu, PICK(&s, tokens), lo, lo << pick(&s, 3), fail);
        break;
    }
    default:
        if (pick(&s, 2))
            snprintf(cmd, cap, "budget --model %s --gpu %s --gpus %d --tokens %s%s", model, gpu,
                     n, PICK(&s, tokens), fail);
        else
            snprintf(cmd, cap, "budget --model %s --gpu %s --gpus %d --days %s%s", model, gpu, n,
                     PICK(&s, days), fail);
        break;
    }
}

static bool ends_with(const char *s, const char *tail)
{
    size_t n = strlen(s), m = strlen(tail);
    return n >= m && strcmp(s + n - m, tail) == 0;
}

/* Keys whose numbers may be negative by meaning. */
static bool signed_key(const char *k)
{
    static const char *const words[] = {"error", "delta", "difference", "change", "shortfall",
                                        "offset", "vs_", "saving", "seed", "marginal"};
    for (size_t i = 0; i < sizeof words / sizeof words[0]; i++)
        if (strstr(k, words[i]))
            return true;
    return false;
}

/* The quantile triple of an object: NAME_p10, NAME_p50, NAME_p90 in order. */
static const char *check_quantiles(const cJSON *o, char *why, size_t cap)
{
    for (const cJSON *c = o->child; c; c = c->next) {
        if (!c->string || !ends_with(c->string, "_p10") || !cJSON_IsNumber(c))
            continue;
        char k50[160], k90[160];
        size_t stem = strlen(c->string) - 4;
        snprintf(k50, sizeof k50, "%.*s_p50", (int)stem, c->string);
        snprintf(k90, sizeof k90, "%.*s_p90", (int)stem, c->string);
        const cJSON *p50 = cJSON_GetObjectItemCaseSensitive(o, k50);
        const cJSON *p90 = cJSON_GetObjectItemCaseSensitive(o, k90);
        if (!cJSON_IsNumber(p50) || !cJSON_IsNumber(p90))
            continue;
        double a = c->valuedouble, b = p50->valuedouble, d = p90->valuedouble;
        if (!(a <= b * (1 + 1e-12) && b <= d * (1 + 1e-12))) {
            snprintf(why, cap, "%.*s: P10 %g, P50 %g, P90 %g out of order", (int)stem, c->string,
                     a, b, d);
            return why;
        }
    }
    return NULL;
}

/* Every number of the document, walked: finite, not negative unless its
 * key is signed by meaning, goodput in [0, 1]; quantiles in order. */
static const char *check_tree(const cJSON *o, const char *key, char *why, size_t cap)
{
    if (cJSON_IsNumber(o)) {
        double v = o->valuedouble;
        const char *k = key ? key : "";
        if (!isfinite(v))
            return snprintf(why, cap, "%s is %g", k, v), why;
        if (v < 0 && !signed_key(k))
            return snprintf(why, cap, "%s is negative (%g)", k, v), why;
        if (strstr(k, "goodput") && !strstr(k, "per") && !(v >= 0 && v <= 1))
            return snprintf(why, cap, "%s is %g, outside [0, 1]", k, v), why;
        return NULL;
    }
    if (cJSON_IsObject(o) && check_quantiles(o, why, cap))
        return why;
    for (const cJSON *c = o->child; c; c = c->next)
        if (check_tree(c, c->string ? c->string : key, why, cap))
            return why;
    return NULL;
}

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    size_t cap = 65536, n = 0;
    char *b = malloc(cap);
    while (b) {
        size_t k = fread(b + n, 1, cap - n - 1, f);
        n += k;
        if (k == 0)
            break;
        if (n + 1 == cap) {
            char *g = realloc(b, cap *= 2);
            if (!g) {
                free(b);
                b = NULL;
            }
            b = g;
        }
    }
    fclose(f);
    if (b)
        b[n] = '\0';
    return b;
}

static int count_lines(const char *s)
{
    int n = 0;
    for (; *s; s++)
        n += *s == '\n';
    return n;
}

/* The verdict on a finished case; NULL when it holds every invariant. */
static const char *judge(int status, bool timed_out, const char *out, const char *err, char *why,
                         size_t cap)
{
    if (timed_out)
        return "did not return in time";
    if (!WIFEXITED(status))
        return snprintf(why, cap, "killed by signal %d", WTERMSIG(status)), why;
    int rc = WEXITSTATUS(status);
    if (rc == 1 || rc == 2) {
        if (count_lines(err) == 1)
            return NULL;
        snprintf(why, cap, "exit %d with %d lines on stderr", rc, count_lines(err));
        return why;
    }
    if (rc != 0)
        return snprintf(why, cap, "exit %d", rc), why;
    cJSON *j = cJSON_Parse(out);
    if (!j)
        return "exit 0 without a JSON document";
    const char *bad = check_tree(j, NULL, why, cap);
    cJSON_Delete(j);
    return bad;
}

typedef struct {
    pid_t pid;
    int index;
    double start;
    char cmd[CMD_MAX];
} slot_t;

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

static char scratch[] = "/tmp/scaleplan-invariants-XXXXXX";

static pid_t start(const char *bin, slot_t *sl, int k)
{
    char line[CMD_MAX + 4096];
    snprintf(line, sizeof line, "OMP_NUM_THREADS=1 exec '%s' %s --json >%s/out%d 2>%s/err%d", bin,
             sl->cmd, scratch, k, scratch, k);
    pid_t pid = fork();
    if (pid == 0) {
        setpgid(0, 0);
        execl("/bin/sh", "sh", "-c", line, (char *)NULL);
        _exit(127);
    }
    sl->start = now_s();
    return pid;
}

/* Collect the case in slot k: its verdict, printed when it fails. */
static bool finish(slot_t *sl, int k, int status, bool timed_out)
{
    char path[4200], why[512];
    snprintf(path, sizeof path, "%s/out%d", scratch, k);
    char *out = slurp(path);
    snprintf(path, sizeof path, "%s/err%d", scratch, k);
    char *err = slurp(path);
    const char *bad = judge(status, timed_out, out ? out : "", err ? err : "", why, sizeof why);
    if (bad)
        fprintf(stderr, "invariants: FAIL case %d: scaleplan %s --json: %s%s%.300s\n", sl->index,
                sl->cmd, bad, err && *err ? "; stderr: " : "", err ? err : "");
    free(out);
    free(err);
    sl->pid = 0;
    return bad == NULL;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: invariants BIN [N [SEED]]\n");
        return 2;
    }
    int n = argc > 2 ? atoi(argv[2]) : 1000;
    if (getenv("INVARIANTS_LIST")) {
        for (int i = 0; i < n; i++) {
            char cmd[CMD_MAX];
            make_case(argc > 3 ? strtoull(argv[3], NULL, 0) : 35, i, cmd, sizeof cmd);
            printf("%s\n", cmd);
        }
        return 0;
    }
    uint64_t seed = argc > 3 ? strtoull(argv[3], NULL, 0) : 35;
    const char *j = getenv("INVARIANTS_JOBS"), *l = getenv("INVARIANTS_LIMIT_S");
    int jobs = j ? atoi(j) : 2;
    double limit = l ? atof(l) : 10;
    if (jobs < 1 || jobs > MAX_JOBS)
        jobs = 2;
    if (!mkdtemp(scratch)) {
        perror("invariants: mkdtemp");
        return 1;
    }
    slot_t slots[MAX_JOBS] = {{0}};
    int next = 0, done = 0, failed = 0;
    double slowest = 0, t0 = now_s();
    while (done < n) {
        for (int k = 0; k < jobs && next < n; k++) {
            if (slots[k].pid)
                continue;
            slots[k].index = next;
            make_case(seed, next++, slots[k].cmd, sizeof slots[k].cmd);
            slots[k].pid = start(argv[1], &slots[k], k);
        }
        int status;
        struct rusage ru;
        pid_t pid = wait4(-1, &status, WNOHANG, &ru);
        for (int k = 0; k < jobs; k++) {
            if (!slots[k].pid)
                continue;
            double took = now_s() - slots[k].start;
            if (pid == slots[k].pid) {
                double cpu = ru.ru_utime.tv_sec + ru.ru_utime.tv_usec * 1e-6 +
                             ru.ru_stime.tv_sec + ru.ru_stime.tv_usec * 1e-6;
                slowest = cpu > slowest ? cpu : slowest;
                failed += !finish(&slots[k], k, status, cpu > limit);
                done++;
            } else if (took > 3 * limit) {
                kill(-slots[k].pid, SIGKILL);
                waitpid(slots[k].pid, &status, 0);
                failed += !finish(&slots[k], k, status, true);
                done++;
            }
        }
        if (pid <= 0)
            nanosleep(&(struct timespec){0, 2000000}, NULL);
    }
    char rm[128];
    snprintf(rm, sizeof rm, "rm -rf %s", scratch);
    if (system(rm) != 0)
        fprintf(stderr, "invariants: could not remove %s\n", scratch);
    printf("invariants: %d random reliability/plan/budget cases (seed %llu) in %.0f s, the "
           "slowest %.1f s of processor time: %d passed, %d failed\n",
           n, (unsigned long long)seed, now_s() - t0, slowest, n - failed, failed);
    return failed ? 1 : 0;
}
