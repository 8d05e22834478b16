/* megatron_shellInt: the shell reader of launch scripts, shared by its two
 * files and nothing else (SQLite's *Int.h split; megatron_argsInt.h lists the
 * Megatron argument reader's files):
 *
 *   megatron_words.c   a text's words: quotes, $-expansions, arithmetic,
 *                      heredocs, redirections, array assignments
 *   megatron_shell.c   its commands: if / loops / case, what each command
 *                      is (assignments, the training command, a text to
 *                      read as a script), and the entry points
 *                      megatron_args_parse_text and megatron_shell_command
 *
 * The text is split the way a shell would for the parts launch scripts
 * use: comments, backslash-newline, quotes, NAME=value, NAME+=value,
 * NAME=( ... ) and NAME+=( ... ) assignments, $NAME / ${NAME} / ${NAME[@]}
 * / ${NAME:-default} expansions (unquoted ones split at blanks), commands
 * ended by newlines, ';', '&&', '||' and '|', and if / elif / else / fi
 * whose conditions are string tests ([[ A == B ]], [ A != B ], -z, -n,
 * joined by || and &&, negated by !): a branch whose condition is false
 * is not read, and when a condition cannot be decided (a file test, a
 * value from outside the text) no branch of that if is read, with a
 * note. (An assignment on the same line as its "then" is read before the
 * condition is decided.) */
#ifndef SCALEPLAN_INPUTS_MEGATRON_SHELLINT_H
#define SCALEPLAN_INPUTS_MEGATRON_SHELLINT_H

#include <stdbool.h>
#include <stddef.h>

#include "inputs/megatron_argsInt.h"

typedef struct {
    char **w;
    int n, cap;
} words_t;

typedef struct {
    char name[64];
    words_t value; /* one word for a scalar */
} shvar_t;

/* One open if: which of its branches is read. */
typedef struct {
    bool outer;   /* the if itself is read (its enclosing branch is) */
    bool in_cond; /* reading the condition (before its then) */
    int cond;     /* the condition so far: 1 true, 0 false, -1 undecided */
    char op[3];   /* the operator joining the next test ("||", "&&") */
    bool taken;   /* a branch has been read: the later ones are not */
    bool unknown; /* a condition was undecided: no branch is read */
    bool active;  /* the branch being read now is */
    int line;     /* where the if is */
    char kind;    /* 'i' if, 'f' for, 'w' while / until, 'c' case */
    bool until;   /* an until loop: its condition negated */
    char var[64]; /* for: the loop variable */
    words_t items; /* for: the values (the first is read); case: its word */
    bool arm_wait; /* case: the next command starts with a pattern */
    char pats[256]; /* case: patterns of the arm so far (a|b), one a line */
} sh_if_t;

#define SH_MAX_IF 32

typedef struct {
    megatron_args_t *a;
    const char *s;
    size_t len, pos;
    int line;
    char sep[3];       /* what ended the last command: "\n", ";", "||", "&&", "|", "&" */
    sh_if_t ifs[SH_MAX_IF];
    int n_ifs;
    shvar_t *vars;
    int n_vars, cap_vars;
    words_t cmd;       /* the command being read */
    words_t chosen;    /* the training command (or the pasted flags) */
    bool chose_script; /* chosen holds a command with a Python script */
    int oom;
    bool too_big;      /* the expansions passed MEGATRON_MAX_EXPANDED_BYTES */
    size_t made;       /* bytes of words made so far, the text's own included */
    err_t *err;
    bool collect;      /* keep the script and every word after it (Bridge) */
    int depth;         /* texts read inside texts (heredocs, bash -c, eval) */
    /* a heredoc of the command being read: its delimiter, then its body */
    bool hd_pending, hd_quoted, hd_strip;
    char hd_delim[64];
    char *heredoc;
    char *herestring;  /* the word after <<< */
    int hs_index;      /* where in the command that word is (-1: none) */
    bool noted_args;   /* "$@" / $# said once */
    int sb_nodes, sb_tasks; /* #SBATCH --nodes, --ntasks-per-node / --gpus-per-node */
    bool single;       /* the script runs as "python script.py": one process */
} shell_t;

#define SH_MAX_DEPTH 8

/* Charge n bytes of words against MEGATRON_MAX_EXPANDED_BYTES: 0, or -1
 * with sh->too_big set. */
int msh_charge(shell_t *sh, size_t n);

/* Free a word list; it is then empty. */
void msh_words_free(words_t *w);

/* Append a copy of text[0..n) to w (charged). 0, or -1 with sh->oom or
 * sh->too_big set (past MEGATRON_MAX_WORDS words). */
int msh_words_push(shell_t *sh, words_t *w, const char *text, size_t n);

/* The variable named name[0..n), or NULL. */
shvar_t *msh_var_find(shell_t *sh, const char *name, size_t n);

/* The variable named name[0..n), emptied, or a new empty one; NULL with
 * sh->oom set. */
shvar_t *msh_var_set(shell_t *sh, const char *name, size_t n);

/* Whether the command being read is in a branch that is read. */
bool msh_active(const shell_t *sh);

/* Whether c may be in a variable name (first: may start one). */
bool msh_name_char(char c, bool first);

/* Note once that "$@", "$*" and $# are taken as empty: the script's own
 * arguments, which a file read alone does not have (as when it runs with
 * none). */
void msh_note_args(shell_t *sh);

/* Read one word list up to the end of a command (or, inside an array
 * assignment, up to ')'), expanding as the shell does, into out; sh->sep
 * says what ended the command. Returns 1 at a command end, 2 at ')', 0 at
 * the end of the text, -1 on error (sh->err set, or sh->oom /
 * sh->too_big). */
int msh_read_words(shell_t *sh, words_t *out, bool in_array);

#endif
