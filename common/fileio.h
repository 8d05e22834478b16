/* fileio: whole-file reads and atomic whole-file writes.
 *
 * Reads return a NUL-terminated heap buffer the caller frees. Writes go to a
 * temporary file in the same directory, are flushed with fsync, and are
 * renamed over the target, so a reader never sees a half-written file and a
 * crash leaves either the old or the new contents.
 */
#ifndef SCALEPLAN_COMMON_FILEIO_H
#define SCALEPLAN_COMMON_FILEIO_H

#include <stddef.h>
#include <stdio.h>

#include "common/error.h"

/* Largest file read_all accepts; JSON inputs far beyond this are a mistake
 * (a binary passed by accident) and are refused instead of exhausting memory. */
#define FILEIO_MAX_READ_BYTES ((size_t)256 << 20)

/* Read the whole of path into *data (NUL-terminated, length in *len, which
 * may be NULL). A missing or unreadable file is ERR_INPUT naming the path;
 * on error *data is NULL and nothing needs freeing. */
int fileio_read_all(const char *path, char **data, size_t *len, err_t *err);

/* Write len bytes atomically to path: a temporary PATH.tmp-XXXXXX beside
 * it (mkstemp: created anew, never through a link planted there), fsync,
 * rename over path (which replaces a symbolic link at path rather than
 * writing through it). The file gets mode 0644 less the umask. Parent
 * directories must exist. On error the target is untouched and the
 * temporary file removed; the error is ERR_RUNTIME naming the path
 * (ERR_INPUT for an empty path). */
int fileio_write_atomic(const char *path, const void *data, size_t len,
                        err_t *err);

/* The same for output written piece by piece through stdio: open gives a
 * FILE on the temporary file, commit flushes, fsyncs and renames it over
 * path, abort throws it away. */
typedef struct {
    FILE *f;    /* write here */
    char *path; /* the target (heap) */
    char *tmp;  /* the temporary file beside it (heap) */
} fileio_out_t;

/* Start writing path. On error *o is empty and nothing needs undoing. */
int fileio_out_open(fileio_out_t *o, const char *path, err_t *err);

/* Finish: a failed write since open (ferror), fsync or rename is
 * ERR_RUNTIME naming path, and then the target is untouched and the
 * temporary file removed. Either way *o is emptied. */
int fileio_out_commit(fileio_out_t *o, err_t *err);

/* Close and remove the temporary file, leaving path untouched. Safe on an
 * emptied or zeroed *o and on NULL. */
void fileio_out_abort(fileio_out_t *o);

/* "dir/name" (just name when dir is NULL or empty) as a heap string the
 * caller frees; NULL when out of memory. Paths are never cut to fit a
 * buffer. */
char *fileio_join(const char *dir, const char *name);

/* Create directory path and its parents (like mkdir -p). ERR_RUNTIME on
 * failure; an existing directory is success. */
int fileio_mkdirs(const char *path, err_t *err);

/* Remove path and everything under it (like rm -rf; symbolic links are
 * removed, not followed). A missing path is success; ERR_RUNTIME naming the
 * first entry that could not be removed. */
int fileio_remove_tree(const char *path, err_t *err);

#endif
