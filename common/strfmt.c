#include "common/strfmt.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

char *str_vprintf(const char *fmt, va_list ap)
{
    va_list again;
    va_copy(again, ap);
    int n = vsnprintf(NULL, 0, fmt, ap);
    char *s = n >= 0 ? malloc((size_t)n + 1) : NULL;
    /* the second pass writes exactly n bytes: anything else is a failure */
    if (s && vsnprintf(s, (size_t)n + 1, fmt, again) != n) {
        free(s);
        s = NULL;
    }
    va_end(again);
    return s;
}

char *str_printf(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *s = str_vprintf(fmt, ap);
    va_end(ap);
    return s;
}

int str_appendf(char **s, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *tail = str_vprintf(fmt, ap);
    va_end(ap);
    if (!tail)
        return -1;
    size_t a = *s ? strlen(*s) : 0, b = strlen(tail);
    char *joined = realloc(*s, a + b + 1);
    if (!joined) {
        free(tail);
        return -1;
    }
    memcpy(joined + a, tail, b + 1);
    free(tail);
    *s = joined;
    return 0;
}

void str_label(char *out, size_t cap, const char *text)
{
    size_t n = strlen(text);
    if (n < cap) {
        memcpy(out, text, n + 1);
        return;
    }
    size_t keep = cap - 4; /* "...", the end, the terminator */
    memcpy(out, "...", 3);
    memcpy(out + 3, text + n - keep, keep + 1);
}
