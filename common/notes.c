#include "common/notes.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void notes_init(notes_t *n)
{
    memset(n, 0, sizeof *n);
}

static note_t *grow(notes_t *notes)
{
    if (notes->n == notes->cap) {
        size_t cap = notes->cap ? 2 * notes->cap : 16;
        note_t *p = realloc(notes->items, cap * sizeof *p);
        if (!p) {
            notes->oom = true;
            return NULL;
        }
        notes->items = p;
        notes->cap = cap;
    }
    return &notes->items[notes->n++];
}

/* Keep a note on one line. */
static void one_line(char *s)
{
    for (; *s; s++)
        if (*s == '\n' || *s == '\r' || *s == '\t')
            *s = ' ';
}

void notes_add(notes_t *notes, note_kind_t kind, const char *field, const char *fmt, ...)
{
    if (!notes)
        return;
    note_t *t = grow(notes);
    if (!t)
        return;
    t->kind = kind;
    snprintf(t->field, sizeof t->field, "%s", field ? field : "");
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(t->text, sizeof t->text, fmt, ap);
    va_end(ap);
    one_line(t->field);
    one_line(t->text);
}

void notes_append(notes_t *dst, const notes_t *src)
{
    if (!dst || !src)
        return;
    for (size_t i = 0; i < src->n; i++) {
        note_t *t = grow(dst);
        if (!t)
            return;
        *t = src->items[i];
    }
    if (src->oom)
        dst->oom = true;
}

bool notes_has(const notes_t *notes, const char *field)
{
    if (!notes)
        return false;
    for (size_t i = 0; i < notes->n; i++)
        if (strcmp(notes->items[i].field, field) == 0)
            return true;
    return false;
}

const char *notes_kind_name(note_kind_t k)
{
    return k == NOTE_ASSUMED ? "assumed" : "ignored";
}

void notes_free(notes_t *notes)
{
    if (!notes)
        return;
    free(notes->items);
    memset(notes, 0, sizeof *notes);
}
