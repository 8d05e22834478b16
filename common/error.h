/* error: one-line error records passed up from library code to main().
 *
 * Library functions return 0 on success and a non-zero status on failure,
 * after filling an err_t with a single line of the form
 *     file: field: reason
 * (file or field may be absent when they do not apply). Only cli/ turns a
 * record into an exit code: ERR_INPUT (2) for bad input the user can fix,
 * ERR_RUNTIME (1) for failures of the machine, the GPU or the file system.
 * Nothing below cli/ calls exit() or prints errors itself.
 */
#ifndef SCALEPLAN_COMMON_ERROR_H
#define SCALEPLAN_COMMON_ERROR_H

#include <stddef.h>

enum {
    ERR_OK = 0,
    ERR_RUNTIME = 1, /* something failed that the input did not cause */
    ERR_INPUT = 2    /* malformed, missing or impossible input */
};

#define ERR_MSG_MAX 512

typedef struct {
    int code;              /* ERR_OK, ERR_RUNTIME or ERR_INPUT */
    char msg[ERR_MSG_MAX]; /* one line, no trailing newline */
} err_t;

/* Reset a record to "no error". Safe on NULL. */
void err_clear(err_t *err);

/* Fill err (if not NULL) with code and a printf-style message, and return
 * code so callers can write `return err_set(err, ERR_INPUT, ...)`. Newlines
 * in the message are replaced by spaces to keep the record one line. */
int err_set(err_t *err, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Like err_set, with "file: field: " put in front of the reason. Either
 * file or field may be NULL or empty and is then left out. */
int err_setf(err_t *err, int code, const char *file, const char *field,
             const char *fmt, ...) __attribute__((format(printf, 5, 6)));

/* Put "prefix: " in front of an existing message (e.g. the file name when a
 * lower layer only knew the field). Returns err->code. */
int err_prefix(err_t *err, const char *prefix);

/* Address an existing message to file and field instead: the reason after
 * its first "x: " is kept ("--recompute-modules: unknown ..." becomes
 * "plan.json: recompute_modules: unknown ..."). Returns err->code. */
int err_readdress(err_t *err, const char *file, const char *field);

#endif
