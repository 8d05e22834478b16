/* strfmt: printf into a heap string of the size the text needs.
 *
 * For paths and messages built from user input (a folder of any length,
 * a file name), where a fixed buffer would cut the text silently: the
 * string is exactly as long as the text, or the call fails.
 */
#ifndef SCALEPLAN_COMMON_STRFMT_H
#define SCALEPLAN_COMMON_STRFMT_H

#include <stdarg.h>
#include <stddef.h>

/* The formatted text in a new heap string (the caller frees it); NULL when
 * memory runs out or the format fails (an encoding error), never a
 * shortened text. */
char *str_printf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
char *str_vprintf(const char *fmt, va_list ap) __attribute__((format(printf, 1, 0)));

/* Append the formatted text to *s (a heap string or NULL), reallocating.
 * 0 on success; -1 when memory runs out, leaving *s as it was. */
int str_appendf(char **s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* A label for messages (a file's name) in a fixed field of cap bytes
 * (cap >= 8): the whole text when it fits, else "..." and its end, the
 * part that names the file, never its beginning cut off silently. */
void str_label(char *out, size_t cap, const char *text);

#endif
