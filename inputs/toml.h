/* toml: a small TOML reader for job configs (torchtitan's train_configs).
 *
 * Reads tables ([job], dotted [quantize.linear.float8]), key = value pairs
 * (bare, quoted and dotted keys), basic and literal strings, integers
 * (signs, underscores, 0x/0o/0b), floats (exponents, inf, nan), booleans,
 * arrays (nested, across lines, trailing commas) and inline tables, with
 * comments. Every value is stored under its full dotted path
 * ("training.seq_len"). What it does not read it refuses in one line with
 * the line number: multi-line strings, dates and times, arrays of tables,
 * a key defined twice, malformed text.
 */
#ifndef SCALEPLAN_INPUTS_TOML_H
#define SCALEPLAN_INPUTS_TOML_H

#include <stdbool.h>
#include <stddef.h>

#include "common/error.h"

typedef enum { TOML_STRING, TOML_INT, TOML_FLOAT, TOML_BOOL, TOML_ARRAY } toml_type_t;

typedef struct toml_value {
    toml_type_t type;
    char *str;                 /* TOML_STRING */
    long long i;               /* TOML_INT */
    double f;                  /* TOML_FLOAT (and TOML_INT as a double) */
    bool b;                    /* TOML_BOOL */
    struct toml_value *items;  /* TOML_ARRAY */
    int n_items;
    int line;                  /* where it was written, for messages */
} toml_value_t;

typedef struct {
    char *key;       /* full dotted path */
    toml_value_t v;
    bool used;       /* set by the caller that read it */
} toml_entry_t;

typedef struct {
    toml_entry_t *entries;
    size_t n, cap;
    char origin[256]; /* file name for messages (a longer one keeps its end
                         after "...": str_label) */
} toml_doc_t;

/* Parse text (len bytes). On error doc is freed and empty; ERR_INPUT says
 * "origin: line N: reason", ERR_RUNTIME on OOM. */
int toml_parse(const char *text, size_t len, const char *origin, toml_doc_t *doc, err_t *err);

/* The entry at dotted path key, or NULL. */
toml_entry_t *toml_find(const toml_doc_t *doc, const char *key);

/* Whether any key lies under the table prefix ("quantize.linear.float8"). */
bool toml_has_table(const toml_doc_t *doc, const char *prefix);

const char *toml_type_name(toml_type_t t);

/* Free what doc holds; it is then empty. */
void toml_free(toml_doc_t *doc);

#endif
