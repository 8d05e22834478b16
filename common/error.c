#include "common/error.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

void err_clear(err_t *err)
{
    if (!err)
        return;
    err->code = ERR_OK;
    err->msg[0] = '\0';
}

/* Keep the record one line: a message built from user input may carry
 * newlines or tabs (a JSON string, a file name), which would break the
 * "one line per error" promise of the CLI. */
static void flatten(char *s)
{
    for (; *s; s++)
        if (*s == '\n' || *s == '\r' || *s == '\t')
            *s = ' ';
}

int err_set(err_t *err, int code, const char *fmt, ...)
{
    if (!err)
        return code;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err->msg, sizeof err->msg, fmt, ap);
    va_end(ap);
    flatten(err->msg);
    err->code = code;
    return code;
}

int err_setf(err_t *err, int code, const char *file, const char *field,
             const char *fmt, ...)
{
    if (!err)
        return code;
    char reason[ERR_MSG_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(reason, sizeof reason, fmt, ap);
    va_end(ap);
    int has_file = file && *file, has_field = field && *field;
    snprintf(err->msg, sizeof err->msg, "%s%s%s%s%s", has_file ? file : "",
             has_file ? ": " : "", has_field ? field : "",
             has_field ? ": " : "", reason);
    flatten(err->msg);
    err->code = code;
    return code;
}

int err_readdress(err_t *err, const char *file, const char *field)
{
    if (!err)
        return ERR_RUNTIME;
    char why[ERR_MSG_MAX];
    const char *colon = strstr(err->msg, ": ");
    snprintf(why, sizeof why, "%s", colon ? colon + 2 : err->msg);
    return err_setf(err, err->code, file, field, "%s", why);
}

int err_prefix(err_t *err, const char *prefix)
{
    if (!err)
        return ERR_RUNTIME;
    if (prefix && *prefix) {
        char old[ERR_MSG_MAX];
        memcpy(old, err->msg, sizeof old);
        snprintf(err->msg, sizeof err->msg, "%s: %s", prefix, old);
        flatten(err->msg);
    }
    return err->code;
}
