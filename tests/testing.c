#include "tests/testing.h"

#include "common/strfmt.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "common/fileio.h"
#include "common/strfmt.h"

void check_rel_at(double actual, double expected, double rel, const char *what,
                  const char *file, int line)
{
    double tol = expected == 0 ? rel : rel * fabs(expected);
    int ok = isfinite(actual) && fabs(actual - expected) <= tol;
    char msg[512];
    snprintf(msg, sizeof msg, "%s = %.9g, expected %.9g within %.3g%%", what, actual,
             expected, rel * 100);
    CU_assertImplementation(ok ? CU_TRUE : CU_FALSE, (unsigned)line, msg, file, "",
                            CU_FALSE);
}

void check_err_at(int rc, const err_t *err, int code, const char *const *needles,
                  const char *what, const char *file, int line)
{
    char msg[1024];
    int ok = rc == code && err->code == code && strchr(err->msg, '\n') == NULL &&
             err->msg[0] != '\0';
    for (const char *const *n = needles; ok && *n; n++)
        if (!strstr(err->msg, *n))
            ok = 0;
    snprintf(msg, sizeof msg, "%s returned %d (expected %d) with message \"%s\"", what, rc,
             code, err->msg);
    CU_assertImplementation(ok ? CU_TRUE : CU_FALSE, (unsigned)line, msg, file, "",
                            CU_FALSE);
}

char *slurp(const char *path)
{
    char *data = NULL;
    err_t err;
    if (fileio_read_all(path, &data, NULL, &err) != 0)
        return NULL;
    return data;
}

/* "PREFIX BIN ARGS" through sh, output captured. */
static int run_prefixed(const char *prefix, const char *args, char **out, char **errout)
{
    const char *bin = getenv("SCALEPLAN_BIN");
    if (!bin)
        bin = "bin/scaleplan";
    char dir[256];
    if (make_temp_dir(dir, sizeof dir) != 0)
        return -1;
    size_t cap = strlen(prefix) + strlen(bin) + strlen(args) + 2 * sizeof dir + 64;
    char *cmd = malloc(cap);
    if (!cmd) {
        remove_tree(dir);
        return -1;
    }
    snprintf(cmd, cap, "%s%s %s >%s/out 2>%s/err", prefix, bin, args, dir, dir);
    int status = system(cmd);
    free(cmd);
    char path[300];
    if (out) {
        snprintf(path, sizeof path, "%s/out", dir);
        *out = slurp(path);
    }
    if (errout) {
        snprintf(path, sizeof path, "%s/err", dir);
        *errout = slurp(path);
    }
    remove_tree(dir);
    if (status == -1 || !WIFEXITED(status))
        return -1;
    return WEXITSTATUS(status);
}

int run_cli(const char *args, char **out, char **errout)
{
    return run_prefixed("", args, out, errout);
}

int cmd_expect(const char *args, int rc_expected, char **out, char **err)
{
    char *o = NULL, *e = NULL;
    int rc = run_cli(args, &o, &e);
    if (rc != rc_expected)
        fprintf(stderr, "\n$ scaleplan %s -> %d (expected %d)\nstdout: %s\nstderr: %s\n", args,
                rc, rc_expected, o ? o : "", e ? e : "");
    CU_ASSERT_EQUAL(rc, rc_expected);
    if (out)
        *out = o;
    else
        free(o);
    if (err)
        *err = e;
    else
        free(e);
    return rc;
}

cJSON *cmd_expect_json(const char *args, int rc_expected)
{
    char *out = NULL;
    cmd_expect(args, rc_expected, &out, NULL);
    cJSON *j = cJSON_Parse(out ? out : "");
    free(out);
    return j;
}

int run_cli_env(const char *prefix, const char *args, char **out, char **errout)
{
    return run_prefixed(prefix, args, out, errout);
}

int run_cli_limited(int limit_s, const char *args, char **out, char **errout)
{
    char prefix[64];
    snprintf(prefix, sizeof prefix, "timeout -s KILL %d ", limit_s);
    return run_prefixed(prefix, args, out, errout);
}

bool mpi_available(void)
{
    return system("command -v mpirun >/dev/null 2>&1") == 0;
}

int run_mpi_limited(int limit_s, int ranks, const char *args, char **out, char **errout)
{
    /* Open MPI: allow root (containers, CI) and more ranks than cores. Under
     * make asan, leak checking is off in MPI ranks: Open MPI leaves its own
     * allocations at exit (in modules it has unloaded, so they cannot be
     * suppressed by name); the same code paths run leak-checked in the
     * single-process tests. */
    char prefix[400], limit[64] = "";
    if (limit_s > 0)
        snprintf(limit, sizeof limit, "timeout -s KILL %d ", limit_s);
    snprintf(prefix, sizeof prefix,
             "OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 "
             "OMPI_MCA_rmaps_base_oversubscribe=1 ASAN_OPTIONS=detect_leaks=0 %smpirun -np %d ",
             limit, ranks);
    return run_prefixed(prefix, args, out, errout);
}

int run_mpi(int ranks, const char *args, char **out, char **errout)
{
    return run_mpi_limited(0, ranks, args, out, errout);
}

const char *fixture(const char *name)
{
    static char buf[8][512];
    static int next;
    char *b = buf[next++ % 8];
    const char *root = getenv("SCALEPLAN_FIXTURES");
    snprintf(b, 512, "%s/%s", root ? root : "tests/fixtures", name);
    return b;
}

int make_temp_dir(char *buf, size_t cap)
{
    const char *tmp = getenv("TMPDIR");
    snprintf(buf, cap, "%s/scaleplan-test-XXXXXX", tmp ? tmp : "/tmp");
    return mkdtemp(buf) ? 0 : -1;
}

void remove_tree(const char *path)
{
    err_t e;
    if (fileio_remove_tree(path, &e) != 0)
        fprintf(stderr, "warning: %s\n", e.msg);
}

int count_lines(const char *s)
{
    int n = 0;
    for (const char *p = s; p && *p; p++)
        if (*p == '\n')
            n++;
    if (s && *s && s[strlen(s) - 1] != '\n')
        n++;
    return n;
}

char *deep_path(const char *dir, size_t min_len)
{
    char *deep = str_printf("%s", dir);
    while (deep && strlen(deep) < min_len)
        if (str_appendf(&deep, "/%s", "a-folder-name-of-forty-bytes-0123456789")) {
            free(deep);
            return NULL;
        }
    return deep;
}

/* Every key of Bridge overrides text is one Megatron-Bridge documents
 * (tests/fixtures/launch/bridge_keys.txt). */
void check_bridge_keys(const char *text)
{
    char *keys = slurp(fixture("launch/bridge_keys.txt"));
    CU_ASSERT_PTR_NOT_NULL_FATAL(keys);
    for (const char *p = text; *p;) {
        const char *eol = strchr(p, '\n');
        size_t n = eol ? (size_t)(eol - p) : strlen(p);
        if (n && *p != '#') {
            char key[128], needle[140];
            const char *eq = memchr(p, '=', n);
            size_t k = eq ? (size_t)(eq - p) : n;
            if (strncmp(p, "mixed_precision", k) == 0)
                k = n; /* the recipe name is checked too */
            snprintf(key, sizeof key, "%.*s", (int)k, p);
            snprintf(needle, sizeof needle, "\n%s\n", key);
            if (!strstr(keys, needle))
                fprintf(stderr, "not a Megatron-Bridge key: %s\n", key);
            CU_ASSERT_PTR_NOT_NULL(strstr(keys, needle));
        }
        p += n + (eol ? 1 : 0);
    }
    free(keys);
}

int write_temp_text(const char *text, char *path, size_t cap)
{
    if (snprintf(path, cap, "/tmp/scaleplan-test-XXXXXX") >= (int)cap)
        return -1;
    int fd = mkstemp(path);
    if (fd < 0)
        return -1;
    FILE *f = fdopen(fd, "w");
    if (!f) {
        close(fd);
        return -1;
    }
    int ok = fputs(text, f) >= 0;
    return fclose(f) == 0 && ok ? 0 : -1;
}
