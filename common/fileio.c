#include "common/fileio.h"

#include <errno.h>
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

int fileio_write_atomic(const char *path, const void *data, size_t len,
                        err_t *err)
{
    size_t plen = strlen(path);
    char *tmp = malloc(plen + 32);
    if (!tmp)
        return err_setf(err, ERR_RUNTIME, path, NULL, "out of memory");
    snprintf(tmp, plen + 32, "%s.tmp.%ld", path, (long)getpid());
    int rc = ERR_OK;
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0) {
        rc = err_setf(err, ERR_RUNTIME, path, NULL, "cannot create: %s",
                      strerror(errno));
        goto out_free_tmp;
    }
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
