/* megatron_argsInt: what the files of the Megatron-LM argument reader share, and
 * nothing outside them includes (SQLite's *Int.h split):
 *
 *   megatron_args.c    the flag table and the arguments as read
 *   megatron_shell.c   a shell text's commands: which are read, which one
 *                      is the training command (megatron_shellInt.h)
 *   megatron_words.c   a shell text's words: quotes and expansions
 *   megatron_interp.c  the arguments into a model, a layout and options
 *
 * The flag table comes from Megatron-LM's own parser
 * (inputs/megatron_flags.tsv) plus older releases' spellings; an argument
 * is stored once per dest, later values replacing earlier ones.
 */
#ifndef SCALEPLAN_INPUTS_MEGATRON_ARGSINT_H
#define SCALEPLAN_INPUTS_MEGATRON_ARGSINT_H

#include <stdbool.h>
#include <stddef.h>

#include "inputs/megatron_args.h"

typedef enum {
    MF_ON,     /* store_true switch */
    MF_OFF,    /* store_false switch (--no-x / --disable-x; dest is the positive name) */
    MF_BOOL,   /* --x / --no-x pair */
    MF_INT,
    MF_FLOAT,
    MF_CHOICE,
    MF_STRING
} mf_kind_t;

typedef struct {
    const char *flags;   /* spellings separated by '|' */
    const char *dest;    /* argparse dest (the name the argument block prints) */
    mf_kind_t kind;
    int nargs;           /* 0: one value, -1: one or more */
    const char *choices; /* comma-separated, "" = any */
    const char *def;     /* Python repr of the default */
    char perf;           /* 'Y' affects speed or memory, 'N' does not */
} mflag_t;

struct megatron_arg {
    const mflag_t *flag;
    char spelling[96]; /* as the user wrote it, for messages */
    char *value;       /* normalised text; switches "True"/"False" */
    bool used;         /* read by the interpreter */
};

/* The stored argument for dest ("num_layers"), or NULL when not given. */
megatron_arg_t *megatron_arg_of(const megatron_args_t *a, const char *dest);

/* Whether a stored value equals the flag's default (then saying it was
 * ignored would be noise: it changes nothing). */
bool megatron_arg_at_default(const megatron_arg_t *x);

/* The first spelling of dest's flag ("--vocab-size") into buf, for
 * messages about absent flags; dest itself when no flag has it. */
const char *megatron_flag_name(const char *dest, char *buf, size_t cap);

/* Whether a word is a flag ("--x", not "--" alone or "-x"). */
bool megatron_is_flag_word(const char *w);

/* The whole of s as a decimal integer / a finite number; false (and *out
 * untouched) otherwise. */
bool megatron_parse_long(const char *s, long *out);
bool megatron_parse_double(const char *s, double *out);

#endif
