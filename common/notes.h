/* notes: what a reader of the user's files ignored or assumed.
 *
 * A reader of a Hugging Face config, a DeepSpeed config, a Megatron-LM
 * argument list or a torchtitan TOML meets fields that have no effect on
 * speed or memory (ignored) and gaps it fills (assumed: a default, a value
 * derived from another field). Nothing is dropped silently: each case
 * becomes one note, which the command prints and its JSON carries.
 *
 * A notes_t is a growable list; a NULL list is accepted everywhere and
 * records nothing (for callers that do not care). Running out of memory
 * sets `oom` and drops the note; the caller checks it once at the end.
 */
#ifndef SCALEPLAN_COMMON_NOTES_H
#define SCALEPLAN_COMMON_NOTES_H

#include <stdbool.h>
#include <stddef.h>

typedef enum {
    NOTE_IGNORED = 0, /* read and deliberately left out of the model */
    NOTE_ASSUMED = 1  /* a value scaleplan chose or derived */
} note_kind_t;

typedef struct {
    note_kind_t kind;
    char field[96]; /* "zero_optimization.offload_param", "--seed", ... */
    char text[320]; /* why, in one line */
} note_t;

typedef struct {
    note_t *items;
    size_t n, cap;
    bool oom; /* a note was dropped for lack of memory */
} notes_t;

/* An empty list (same as memset 0). */
void notes_init(notes_t *n);

/* Append a note; notes may be NULL (nothing happens). field may be NULL. */
void notes_add(notes_t *notes, note_kind_t kind, const char *field, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* Append every note of src to dst (either may be NULL). */
void notes_append(notes_t *dst, const notes_t *src);

/* Whether a note names field (exact match). */
bool notes_has(const notes_t *notes, const char *field);

/* "ignored" or "assumed". */
const char *notes_kind_name(note_kind_t k);

/* Free the list and leave it empty. Safe on NULL and on an empty list. */
void notes_free(notes_t *notes);

#endif
