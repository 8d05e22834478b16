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

#include "common/error.h"

/* Largest file read_all accepts; JSON inputs far beyond this are a mistake
 * (a binary passed by accident) and are refused instead of exhausting memory. */
#define FILEIO_MAX_READ_BYTES ((size_t)256 << 20)

/* Read the whole of path into *data (NUL-terminated, length in *len, which
 * may be NULL). A missing or unreadable file is ERR_INPUT naming the path;
 * on error *data is NULL and nothing needs freeing. */
int fileio_read_all(const char *path, char **data, size_t *len, err_t *err);

/* Write len bytes atomically to path (temp file + fsync + rename). Parent
 * directories must exist. On error the target is untouched and the
 * temporary file removed; the error is ERR_RUNTIME naming the path. */
int fileio_write_atomic(const char *path, const void *data, size_t len,
                        err_t *err);

/* Create directory path and its parents (like mkdir -p). ERR_RUNTIME on
 * failure; an existing directory is success. */
int fileio_mkdirs(const char *path, err_t *err);

/* Remove path and everything under it (like rm -rf; symbolic links are
 * removed, not followed). A missing path is success; ERR_RUNTIME naming the
 * first entry that could not be removed. */
int fileio_remove_tree(const char *path, err_t *err);

#endif
