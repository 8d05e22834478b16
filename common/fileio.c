#include "common/fileio.h"

#include <errno.h>
#include <stdbool.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <dirent.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int fileio_read_all(const char *path, char **data, size_t *len, err_t *err)
{
    *data = NULL;
    if (len)
        *len = 0;
    FILE *f = fopen(path, "rb");
    if (!f)
        return err_setf(err, ERR_INPUT, path, NULL, "cannot open: %s",
                        strerror(errno));
    int rc = ERR_OK;
    size_t cap = 4096, n = 0;
    char *buf = malloc(cap);
    if (!buf) {
        rc = err_setf(err, ERR_RUNTIME, path, NULL, "out of memory");
        goto out_close;
    }
    for (;;) {
        if (n + 1 >= cap) {
            if (cap >= FILEIO_MAX_READ_BYTES) {
                rc = err_setf(err, ERR_INPUT, path, NULL,
                              "file is larger than %zu MiB; is it the right file?",
                              FILEIO_MAX_READ_BYTES >> 20);
                goto out_free_buf;
            }
            char *bigger = realloc(buf, cap * 2);
            if (!bigger) {
                rc = err_setf(err, ERR_RUNTIME, path, NULL, "out of memory");
                goto out_free_buf;
            }
            buf = bigger;
            cap *= 2;
        }
        size_t got = fread(buf + n, 1, cap - 1 - n, f);
        n += got;
        if (got == 0) {
            if (ferror(f)) {
                rc = err_setf(err, ERR_INPUT, path, NULL, "read failed: %s",
                              strerror(errno));
                goto out_free_buf;
            }
            break;
        }
    }
    buf[n] = '\0';
    *data = buf;
    if (len)
        *len = n;
    goto out_close;
out_free_buf:
    free(buf);
out_close:
    fclose(f);
    return rc;
}

/* The mode new output files get: rw-r--r-- less the umask, as open(2)
 * with 0644 would give; mkstemp creates 0600. umask can only be read by
 * setting it, so it is set back at once (outputs are written by the main
 * thread only). */
static mode_t output_mode(void)
{
    mode_t mask = umask(0);
    umask(mask);
    return 0644 & ~mask;
}

/* Create PATH.tmp-XXXXXX beside path with O_EXCL (mkstemp): a name nobody
 * can predict, so no link planted there is followed. *tmp is heap. */
static int temp_beside(const char *path, char **tmp, int *fd, err_t *err)
{
    static const char suffix[] = ".tmp-XXXXXX";
    size_t n = strlen(path) + sizeof suffix;
    *tmp = NULL;
    *fd = -1;
    if (!*path) /* the temporary would land in the working directory as ".tmp-..." */
        return err_set(err, ERR_INPUT, "an output file needs a name (got \"\")");
    *tmp = malloc(n);
    if (!*tmp)
        return err_setf(err, ERR_RUNTIME, path, NULL, "out of memory");
    int k = snprintf(*tmp, n, "%s%s", path, suffix);
    if (k < 0 || (size_t)k >= n) {
        free(*tmp);
        *tmp = NULL;
        return err_setf(err, ERR_RUNTIME, path, NULL, "cannot name a temporary file");
    }
    *fd = mkstemp(*tmp);
    if (*fd < 0 || fchmod(*fd, output_mode()) != 0) {
        int e = errno;
        if (*fd >= 0) {
            close(*fd);
            unlink(*tmp);
        }
        free(*tmp);
        *tmp = NULL;
        *fd = -1;
        return err_setf(err, ERR_RUNTIME, path, NULL, "cannot create: %s", strerror(e));
    }
    return ERR_OK;
}

int fileio_write_atomic(const char *path, const void *data, size_t len,
                        err_t *err)
{
    char *tmp = NULL;
    int fd;
    int rc = temp_beside(path, &tmp, &fd, err);
    if (rc)
        return rc;
    const char *p = data;
    size_t left = len;
    while (left > 0) {
        ssize_t w = write(fd, p, left);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            rc = err_setf(err, ERR_RUNTIME, path, NULL, "write failed: %s",
                          strerror(errno));
            goto out_close_unlink;
        }
        p += w;
        left -= (size_t)w;
    }
    if (fsync(fd) != 0) {
        rc = err_setf(err, ERR_RUNTIME, path, NULL, "fsync failed: %s",
                      strerror(errno));
        goto out_close_unlink;
    }
    if (close(fd) != 0) {
        fd = -1;
        rc = err_setf(err, ERR_RUNTIME, path, NULL, "close failed: %s",
                      strerror(errno));
        goto out_close_unlink;
    }
    fd = -1;
    if (rename(tmp, path) != 0) {
        rc = err_setf(err, ERR_RUNTIME, path, NULL, "rename failed: %s",
                      strerror(errno));
        goto out_close_unlink;
    }
    goto out_free_tmp;
out_close_unlink:
    if (fd >= 0)
        close(fd);
    unlink(tmp);
out_free_tmp:
    free(tmp);
    return rc;
}

int fileio_out_open(fileio_out_t *o, const char *path, err_t *err)
{
    memset(o, 0, sizeof *o);
    int fd;
    int rc = temp_beside(path, &o->tmp, &fd, err);
    if (rc)
        return rc;
    o->path = strdup(path);
    o->f = o->path ? fdopen(fd, "w") : NULL;
    if (!o->f) {
        close(fd);
        fileio_out_abort(o);
        return err_setf(err, ERR_RUNTIME, path, NULL, "out of memory");
    }
    return ERR_OK;
}

int fileio_out_commit(fileio_out_t *o, err_t *err)
{
    const char *path = o->path ? o->path : "output";
    int rc = ERR_OK;
    /* ferror catches a write that failed earlier (EFBIG, ENOSPC) whose
     * data fflush would not try again */
    if (fflush(o->f) != 0 || ferror(o->f))
        rc = err_setf(err, ERR_RUNTIME, path, NULL, "write failed: %s", strerror(errno));
    else if (fsync(fileno(o->f)) != 0)
        rc = err_setf(err, ERR_RUNTIME, path, NULL, "fsync failed: %s", strerror(errno));
    int closed = fclose(o->f);
    o->f = NULL;
    if (!rc && closed != 0)
        rc = err_setf(err, ERR_RUNTIME, path, NULL, "close failed: %s", strerror(errno));
    if (!rc && rename(o->tmp, o->path) != 0)
        rc = err_setf(err, ERR_RUNTIME, path, NULL, "rename failed: %s", strerror(errno));
    if (!rc) {
        free(o->tmp);
        o->tmp = NULL;
    }
    fileio_out_abort(o);
    return rc;
}

void fileio_out_abort(fileio_out_t *o)
{
    if (!o)
        return;
    if (o->f)
        fclose(o->f);
    if (o->tmp)
        unlink(o->tmp);
    free(o->tmp);
    free(o->path);
    memset(o, 0, sizeof *o);
}

char *fileio_join(const char *dir, const char *name)
{
    bool has_dir = dir && *dir;
    size_t n = (has_dir ? strlen(dir) + 1 : 0) + strlen(name) + 1;
    char *p = malloc(n);
    if (p)
        snprintf(p, n, "%s%s%s", has_dir ? dir : "", has_dir ? "/" : "", name);
    return p;
}

int fileio_mkdirs(const char *path, err_t *err)
{
    size_t n = strlen(path);
    char *buf = malloc(n + 1);
    if (!buf)
        return err_setf(err, ERR_RUNTIME, path, NULL, "out of memory");
    memcpy(buf, path, n + 1);
    int rc = ERR_OK;
    for (size_t i = 1; i <= n; i++) {
        if (buf[i] != '/' && buf[i] != '\0')
            continue;
        char saved = buf[i];
        buf[i] = '\0';
        if (mkdir(buf, 0755) != 0 && errno != EEXIST) {
            rc = err_setf(err, ERR_RUNTIME, buf, NULL,
                          "cannot create directory: %s", strerror(errno));
            break;
        }
        buf[i] = saved;
    }
    if (rc == ERR_OK) {
        struct stat st;
        if (stat(path, &st) != 0 || !S_ISDIR(st.st_mode))
            rc = err_setf(err, ERR_RUNTIME, path, NULL, "not a directory");
    }
    free(buf);
    return rc;
}

int fileio_remove_tree(const char *path, err_t *err)
{
    struct stat st;
    if (lstat(path, &st) != 0)
        return errno == ENOENT ? ERR_OK
                               : err_setf(err, ERR_RUNTIME, path, NULL, "cannot remove: %s",
                                          strerror(errno));
    if (S_ISDIR(st.st_mode)) {
        DIR *d = opendir(path);
        if (!d)
            return err_setf(err, ERR_RUNTIME, path, NULL, "cannot list: %s", strerror(errno));
        int rc = ERR_OK;
        struct dirent *e;
        while (!rc && (e = readdir(d)) != NULL) {
            if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
                continue;
            size_t n = strlen(path) + strlen(e->d_name) + 2;
            char *child = malloc(n);
            if (!child) {
                rc = err_setf(err, ERR_RUNTIME, path, NULL, "out of memory");
                break;
            }
            snprintf(child, n, "%s/%s", path, e->d_name);
            rc = fileio_remove_tree(child, err);
            free(child);
        }
        closedir(d);
        if (rc)
            return rc;
        if (rmdir(path) != 0)
            return err_setf(err, ERR_RUNTIME, path, NULL, "cannot remove: %s", strerror(errno));
        return ERR_OK;
    }
    if (unlink(path) != 0)
        return err_setf(err, ERR_RUNTIME, path, NULL, "cannot remove: %s", strerror(errno));
    return ERR_OK;
}
