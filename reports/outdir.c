#include "reports/outdir.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/fileio.h"

/* The private folders' prefix; no report file starts with ".scaleplan". */
#define STAGE_PREFIX ".scaleplan-tmp-"
/* A manifest far beyond any report's list of files is not ours. */
#define MANIFEST_MAX_BYTES (1 << 20)

/* A list of file names (heap strings). */
typedef struct {
    char **v;
    size_t n, cap;
} names_t;

static bool names_add(names_t *l, const char *s, size_t len)
{
    if (l->n == l->cap) {
        size_t cap = l->cap ? 2 * l->cap : 32;
        char **v = realloc(l->v, cap * sizeof *v);
        if (!v)
            return false;
        l->v = v;
        l->cap = cap;
    }
    char *copy = malloc(len + 1);
    if (!copy)
        return false;
    memcpy(copy, s, len);
    copy[len] = '\0';
    l->v[l->n++] = copy;
    return true;
}

static bool names_has(const names_t *l, const char *s)
{
    for (size_t i = 0; l && i < l->n; i++)
        if (strcmp(l->v[i], s) == 0)
            return true;
    return false;
}

static void names_free(names_t *l)
{
    for (size_t i = 0; i < l->n; i++)
        free(l->v[i]);
    free(l->v);
    memset(l, 0, sizeof *l);
}

/* A name a report can own: one plain entry of the folder, never a path,
 * "." or "..", the manifest or a private folder. */
static bool plain_name(const char *s, size_t n)
{
    if (n == 0 || n > 255 || memchr(s, '/', n) || memchr(s, '\0', n))
        return false;
    if ((n == 1 && s[0] == '.') || (n == 2 && s[0] == '.' && s[1] == '.'))
        return false;
    return !(n >= 10 && strncmp(s, ".scaleplan", 10) == 0);
}

/* index.html sorts last: a reader that finds the new page finds its
 * images and data already in place. */
static int cmp_name(const void *a, const void *b)
{
    const char *x = *(const char *const *)a, *y = *(const char *const *)b;
    bool xi = strcmp(x, "index.html") == 0, yi = strcmp(y, "index.html") == 0;
    if (xi != yi)
        return xi ? 1 : -1;
    return strcmp(x, y);
}

int outdir_begin(outdir_t *o, const char *dir, err_t *err)
{
    memset(o, 0, sizeof *o);
    if (!*dir)
        return err_set(err, ERR_INPUT, "a report folder needs a name (got \"\")");
    int rc = fileio_mkdirs(dir, err);
    if (rc)
        return rc;
    o->dir = strdup(dir);
    o->stage = fileio_join(dir, STAGE_PREFIX "XXXXXX");
    if (!o->dir || !o->stage) {
        outdir_abort(o);
        return err_setf(err, ERR_RUNTIME, dir, NULL, "out of memory");
    }
    if (!mkdtemp(o->stage)) {
        int e = errno;
        free(o->stage);
        o->stage = NULL;
        outdir_abort(o);
        return err_setf(err, ERR_RUNTIME, dir, NULL, "cannot create a private folder in it: %s",
                        strerror(e));
    }
    return ERR_OK;
}

void outdir_abort(outdir_t *o)
{
    if (!o)
        return;
    if (o->stage) {
        err_t ignored;
        (void)fileio_remove_tree(o->stage, &ignored); /* best effort: nothing to report to */
    }
    free(o->stage);
    free(o->dir);
    memset(o, 0, sizeof *o);
}

/* The plain files the report wrote into the private folder, sorted. */
static int list_stage(const char *stage, names_t *out, err_t *err)
{
    DIR *d = opendir(stage);
    if (!d)
        return err_setf(err, ERR_RUNTIME, stage, NULL, "cannot list: %s", strerror(errno));
    int rc = ERR_OK;
    struct dirent *e;
    while (!rc && (e = readdir(d)) != NULL) {
        size_t n = strlen(e->d_name);
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        if (!plain_name(e->d_name, n))
            rc = err_setf(err, ERR_RUNTIME, stage, e->d_name, "not a report file");
        else if (!names_add(out, e->d_name, n))
            rc = err_setf(err, ERR_RUNTIME, stage, NULL, "out of memory");
    }
    closedir(d);
    if (!rc)
        qsort(out->v, out->n, sizeof *out->v, cmp_name);
    return rc;
}

/* Open and write-lock dir's manifest, creating it. A link or any other
 * kind of file there is refused (O_NOFOLLOW, and a regular file with one
 * name only): scaleplan rewrites this file in place. */
static int lock_manifest(const char *dir, int *fd, err_t *err)
{
    *fd = -1;
    char *path = fileio_join(dir, OUTDIR_MANIFEST);
    if (!path)
        return err_setf(err, ERR_RUNTIME, dir, NULL, "out of memory");
    int rc = ERR_OK;
    struct stat st;
    int f = open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0644);
    if (f < 0)
        rc = err_setf(err, ERR_RUNTIME, path, NULL, "cannot open the report's manifest: %s",
                      strerror(errno));
    else if (fstat(f, &st) != 0 || !S_ISREG(st.st_mode) || st.st_nlink != 1)
        rc = err_setf(err, ERR_RUNTIME, path, NULL,
                      "not a plain file of its own (a link or a device planted there?); "
                      "remove it");
    struct flock lk = {.l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = 0, .l_len = 0};
    while (!rc && fcntl(f, F_SETLKW, &lk) != 0)
        if (errno != EINTR)
            rc = err_setf(err, ERR_RUNTIME, path, NULL, "cannot lock: %s", strerror(errno));
    free(path);
    if (rc && f >= 0)
        close(f);
    if (!rc)
        *fd = f;
    return rc;
}

/* The names the manifest lists; lines that cannot be a report file's name
 * (comments, paths) are skipped. */
static int read_manifest(int fd, const char *dir, names_t *out, err_t *err)
{
    struct stat st;
    if (fstat(fd, &st) != 0 || st.st_size > MANIFEST_MAX_BYTES)
        return err_setf(err, ERR_RUNTIME, dir, OUTDIR_MANIFEST, "unreadable or too large");
    size_t size = (size_t)st.st_size, got = 0;
    char *text = malloc(size + 1);
    if (!text)
        return err_setf(err, ERR_RUNTIME, dir, NULL, "out of memory");
    while (got < size) {
        ssize_t k = pread(fd, text + got, size - got, (off_t)got);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            break;
        got += (size_t)k;
    }
    int rc = ERR_OK;
    for (size_t i = 0; i < got && !rc;) {
        size_t n = 0;
        while (i + n < got && text[i + n] != '\n')
            n++;
        if (text[i] != '#' && plain_name(text + i, n) && !names_add(out, text + i, n))
            rc = err_setf(err, ERR_RUNTIME, dir, NULL, "out of memory");
        i += n + 1;
    }
    free(text);
    return rc;
}

/* Rewrite the manifest in place with the names of a, then those of b not
 * in a (b may be NULL). Written before it is cut to length: a crash in
 * between leaves extra names of files scaleplan wrote, never fewer. */
static int write_manifest(int fd, const char *dir, const names_t *a, const names_t *b,
                          err_t *err)
{
    static const char head[] = "# scaleplan report: the files it wrote here (the next report "
                               "into this folder removes those it does not write)\n";
    size_t len = sizeof head - 1;
    for (size_t i = 0; i < a->n; i++)
        len += strlen(a->v[i]) + 1;
    for (size_t i = 0; b && i < b->n; i++)
        len += strlen(b->v[i]) + 1;
    char *text = malloc(len + 1), *p = text;
    if (!text)
        return err_setf(err, ERR_RUNTIME, dir, NULL, "out of memory");
    p += sprintf(p, "%s", head);
    for (size_t i = 0; i < a->n; i++)
        p += sprintf(p, "%s\n", a->v[i]);
    for (size_t i = 0; b && i < b->n; i++)
        if (!names_has(a, b->v[i]))
            p += sprintf(p, "%s\n", b->v[i]);
    size_t n = (size_t)(p - text), done = 0;
    int rc = ERR_OK;
    while (!rc && done < n) {
        ssize_t k = pwrite(fd, text + done, n - done, (off_t)done);
        if (k < 0 && errno != EINTR)
            rc = err_setf(err, ERR_RUNTIME, dir, OUTDIR_MANIFEST, "write failed: %s",
                          strerror(errno));
        else if (k > 0)
            done += (size_t)k;
    }
    free(text);
    if (!rc && (ftruncate(fd, (off_t)n) != 0 || fsync(fd) != 0))
        rc = err_setf(err, ERR_RUNTIME, dir, OUTDIR_MANIFEST, "write failed: %s", strerror(errno));
    return rc;
}

/* rename(2) each file from the private folder over its name in dir: a
 * link there is replaced, not followed. */
static int move_in(const outdir_t *o, const names_t *fresh, err_t *err)
{
    int rc = ERR_OK;
    for (size_t i = 0; i < fresh->n && !rc; i++) {
        char *from = fileio_join(o->stage, fresh->v[i]), *to = fileio_join(o->dir, fresh->v[i]);
        if (!from || !to)
            rc = err_setf(err, ERR_RUNTIME, o->dir, NULL, "out of memory");
        else if (rename(from, to) != 0)
            rc = err_setf(err, ERR_RUNTIME, to, NULL, "cannot put the report's file in place: %s",
                          strerror(errno));
        free(from);
        free(to);
    }
    return rc;
}

/* Remove the files of the previous report that this one did not write.
 * An entry that is now a directory is not a file scaleplan wrote: left. */
static int remove_stale(const char *dir, const names_t *old, const names_t *fresh, err_t *err)
{
    int rc = ERR_OK;
    for (size_t i = 0; i < old->n && !rc; i++) {
        if (names_has(fresh, old->v[i]))
            continue;
        char *path = fileio_join(dir, old->v[i]);
        struct stat st;
        if (!path)
            rc = err_setf(err, ERR_RUNTIME, dir, NULL, "out of memory");
        else if (lstat(path, &st) == 0 && !S_ISDIR(st.st_mode) && unlink(path) != 0 &&
                 errno != ENOENT)
            rc = err_setf(err, ERR_RUNTIME, path, NULL,
                          "cannot remove this file of the previous report: %s", strerror(errno));
        free(path);
    }
    return rc;
}

int outdir_commit(outdir_t *o, err_t *err)
{
    names_t fresh = {0}, old = {0};
    int fd = -1;
    int rc = list_stage(o->stage, &fresh, err);
    if (!rc)
        rc = lock_manifest(o->dir, &fd, err);
    if (!rc)
        rc = read_manifest(fd, o->dir, &old, err);
    if (!rc)
        rc = write_manifest(fd, o->dir, &old, &fresh, err);
    if (!rc)
        rc = move_in(o, &fresh, err);
    if (!rc)
        rc = remove_stale(o->dir, &old, &fresh, err);
    if (!rc)
        rc = write_manifest(fd, o->dir, &fresh, NULL, err);
    if (fd >= 0)
        close(fd); /* releases the lock */
    names_free(&fresh);
    names_free(&old);
    outdir_abort(o);
    return rc;
}
