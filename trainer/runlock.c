#define _DEFAULT_SOURCE /* flock */
#include "trainer/runlock.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <time.h>
#include <unistd.h>

#include "common/strfmt.h"

struct runlock {
    int fd; /* open on the lock file, holding the flock */
};

/* The value of line "key value" in text, into out ("?" when absent). */
static void holder_field(const char *text, const char *key, char *out, size_t cap)
{
    size_t k = strlen(key);
    for (const char *p = text; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL) {
        if (strncmp(p, key, k) == 0 && p[k] == ' ') {
            size_t n = strcspn(p + k + 1, "\n");
            /* a message field: the holder's own text, cut to fit on purpose */
            snprintf(out, cap, "%.*s", (int)(n < cap ? n : cap - 1), p + k + 1);
            return;
        }
    }
    snprintf(out, cap, "?");
}

/* The refusal of a folder another process has locked: who, as the lock
 * file says (it may be empty for a moment after the holder locked it). */
static int held_error(int fd, const char *dir, const char *flag, err_t *err)
{
    char text[1024];
    ssize_t n = pread(fd, text, sizeof text - 1, 0);
    text[n > 0 ? n : 0] = '\0';
    if (n <= 0)
        return err_setf(err, ERR_INPUT, NULL, flag,
                        "in use by another training, which has not written its name yet; wait "
                        "for it to end or use another folder (%s/%s)",
                        dir, RUNLOCK_FILE);
    char pid[32], host[128], started[64];
    holder_field(text, "pid", pid, sizeof pid);
    holder_field(text, "host", host, sizeof host);
    holder_field(text, "started", started, sizeof started);
    return err_setf(err, ERR_INPUT, NULL, flag,
                    "in use by another training: pid %s on host %s, started %s; wait for it to "
                    "end or use another folder (%s/%s)",
                    pid, host, started, dir, RUNLOCK_FILE);
}

/* Write this process's name into the held lock file. */
static int write_holder(int fd, const char *path, err_t *err)
{
    char host[256] = "?", started[64] = "?";
    if (gethostname(host, sizeof host) != 0)
        snprintf(host, sizeof host, "?");
    host[sizeof host - 1] = '\0'; /* POSIX leaves a cut name unterminated */
    time_t now = time(NULL);
    struct tm tm;
    if (localtime_r(&now, &tm))
        strftime(started, sizeof started, "%Y-%m-%dT%H:%M:%S%z", &tm);
    char *text = str_printf("pid %ld\nhost %s\nstarted %s\n", (long)getpid(), host, started);
    if (!text)
        return err_set(err, ERR_RUNTIME, "out of memory");
    size_t len = strlen(text);
    bool ok = ftruncate(fd, 0) == 0 && pwrite(fd, text, len, 0) == (ssize_t)len;
    int saved = errno;
    free(text);
    if (!ok)
        return err_setf(err, ERR_RUNTIME, path, NULL, "cannot write the lock holder: %s",
                        strerror(saved));
    return ERR_OK;
}

int runlock_acquire(const char *dir, const char *flag, runlock_t **out, err_t *err)
{
    *out = NULL;
    char *path = str_printf("%s/%s", dir, RUNLOCK_FILE);
    if (!path)
        return err_set(err, ERR_RUNTIME, "out of memory");
    int rc = ERR_OK;
    int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0) {
        rc = err_setf(err, ERR_RUNTIME, path, NULL, "cannot open the lock file: %s",
                      strerror(errno));
        goto out_free_path;
    }
    if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
        rc = errno == EWOULDBLOCK
                 ? held_error(fd, dir, flag, err)
                 : err_setf(err, ERR_RUNTIME, path, NULL,
                            "cannot lock: %s (a file system without locks?)", strerror(errno));
        goto out_close;
    }
    if ((rc = write_holder(fd, path, err)))
        goto out_close; /* closing releases the lock */
    runlock_t *l = malloc(sizeof *l);
    if (!l) {
        rc = err_set(err, ERR_RUNTIME, "out of memory");
        goto out_close;
    }
    l->fd = fd;
    *out = l;
    goto out_free_path;
out_close:
    close(fd);
out_free_path:
    free(path);
    return rc;
}

void runlock_release(runlock_t *l)
{
    if (!l)
        return;
    close(l->fd); /* the kernel drops the flock with the last descriptor */
    free(l);
}
