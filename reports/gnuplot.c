#include "reports/gnuplot.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/fileio.h"

static const char *gp_command(void)
{
    const char *env = getenv("SCALEPLAN_GNUPLOT");
    return env && *env ? env : "gnuplot";
}

static bool on_path(const char *cmd)
{
    if (strchr(cmd, '/'))
        return access(cmd, X_OK) == 0;
    const char *path = getenv("PATH");
    bool found = false;
    while (path && *path && !found) {
        size_t n = strcspn(path, ":");
        char *dir = strndup(path, n), *exe = dir ? fileio_join(dir, cmd) : NULL;
        found = exe && access(exe, X_OK) == 0;
        free(exe);
        free(dir);
        path += n;
        if (*path == ':')
            path++;
    }
    return found;
}

bool gp_available(void)
{
    return on_path(gp_command());
}

/* Same look for every plot: SVG first, then PNG, same size and font. */
static const char *PREAMBLE =
    "set encoding utf8\n"
    "set datafile separator ','\n"
    "set key outside right top\n"
    "set grid lc rgb '#dde2ea'\n"
    "set border lc rgb '#5b6475'\n"
    "set style fill solid 0.9 border lc rgb '#ffffff'\n"
    "set linetype 1 lc rgb '#3b6fd8' lw 2 pt 7\n"
    "set linetype 2 lc rgb '#e07b39' lw 2 pt 5\n"
    "set linetype 3 lc rgb '#2e9e6b' lw 2 pt 9\n"
    "set linetype 4 lc rgb '#c23b4e' lw 2 pt 11\n"
    "set linetype 5 lc rgb '#8a5cc7' lw 2 pt 13\n"
    "set linetype 6 lc rgb '#c9a227' lw 2 pt 3\n"
    "set linetype 7 lc rgb '#4aa3c2' lw 2 pt 1\n"
    "set linetype 8 lc rgb '#7a7f8c' lw 2 pt 2\n"
    "set linetype 9 lc rgb '#d46fa3' lw 2 pt 4\n"
    "set linetype 10 lc rgb '#5d8c3a' lw 2 pt 6\n";

/* "NAME.ext" (heap), or NULL when out of memory. */
static char *with_ext(const char *name, const char *ext)
{
    size_t n = strlen(name) + strlen(ext) + 1;
    char *s = malloc(n);
    if (s)
        snprintf(s, n, "%s%s", name, ext);
    return s;
}

/* Run gnuplot on script (a name relative to dir) with dir as its working
 * directory, so every file it writes lands there. */
static int run_gnuplot(const char *dir, const char *script, const char *name, err_t *err)
{
    /* The child gets a copy of every stdio buffer: empty them first, or
     * text printed before the report would come out once per plot. */
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0)
        return err_setf(err, ERR_RUNTIME, name, NULL, "cannot start gnuplot: %s", strerror(errno));
    if (pid == 0) {
        /* child: quiet unless it fails; no stdio call here (it would flush
         * the copied buffers again) */
        int null = open("/dev/null", O_WRONLY);
        if (chdir(dir) != 0 || null < 0 || dup2(null, STDOUT_FILENO) < 0)
            _exit(126);
        execlp(gp_command(), gp_command(), script, (char *)NULL);
        _exit(127);
    }
    int status = 0;
    while (waitpid(pid, &status, 0) < 0)
        if (errno != EINTR)
            return err_setf(err, ERR_RUNTIME, name, NULL, "waiting for gnuplot: %s",
                            strerror(errno));
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
        return err_setf(err, ERR_RUNTIME, script, NULL,
                        "gnuplot failed (exit %d) drawing the %s plot; its messages are above",
                        WIFEXITED(status) ? WEXITSTATUS(status) : -1, name);
    return ERR_OK;
}

int gp_render(const char *dir, const char *name, const char *body, err_t *err)
{
    char *local = with_ext(name, ".gp"), *svg = with_ext(name, ".svg"),
         *png = with_ext(name, ".png");
    char *script = local ? fileio_join(dir, local) : NULL, *out = png ? fileio_join(dir, png) : NULL;
    size_t n = strlen(PREAMBLE) + 4 * strlen(name) + strlen(body) + 1024;
    char *text = malloc(n);
    int rc = ERR_OK;
    if (!local || !svg || !png || !script || !out || !text) {
        rc = err_set(err, ERR_RUNTIME, "out of memory");
        goto out_free;
    }
    int len = snprintf(text, n,
                       "# Made by scaleplan: %s.svg and %s.png from the CSV beside it.\n%s"
                       "set terminal svg size 1000,560 dynamic noenhanced font 'Helvetica,13' "
                       "background '#ffffff'\nset output '%s'\n%s\n"
                       "set terminal pngcairo size 1000,560 noenhanced font 'Helvetica,11' "
                       "background '#ffffff'\nset output '%s'\nreplot\nunset output\n",
                       name, name, PREAMBLE, svg, body, png);
    if (len < 0 || (size_t)len >= n) {
        rc = err_setf(err, ERR_RUNTIME, script, NULL, "the plot script does not fit its buffer");
        goto out_free;
    }
    struct stat st;
    if ((rc = fileio_write_atomic(script, text, (size_t)len, err)) ||
        (rc = run_gnuplot(dir, local, name, err)))
        goto out_free;
    if (stat(out, &st) != 0 || st.st_size == 0)
        rc = err_setf(err, ERR_RUNTIME, out, NULL, "gnuplot wrote no image");
out_free:
    free(text);
    free(out);
    free(script);
    free(png);
    free(svg);
    free(local);
    return rc;
}
