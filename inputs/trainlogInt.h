/* trainlogInt: what the log readers share (internal to inputs/trainlog*).
 *
 * The text is copied once and split into lines; each line is cleaned the
 * way every framework's output needs: ANSI colour codes removed, a leading
 * launcher prefix ("[rank0]:", "[default0]:", "0: ",
 * "[1,0]<stdout>:") removed and its rank kept, and a carriage
 * return treated as a line break (tqdm redraws) while keeping the file's
 * line number. A reader is a (detect, parse) pair over those lines.
 */
#ifndef SCALEPLAN_INPUTS_TRAINLOGINT_H
#define SCALEPLAN_INPUTS_TRAINLOGINT_H

#include <stdbool.h>

#include "inputs/trainlog.h"

typedef struct {
    char *s;   /* cleaned, NUL-terminated; points into the text's copy */
    int line;  /* 1-based line of the file */
    int rank;  /* the launcher prefix's rank, -1 when unprefixed */
} tlog_line_t;

typedef struct {
    const char *file;    /* for messages */
    tlog_line_t *lines;
    int n;
    bool cut;            /* the file ends inside its last line (no newline) */
    char *buf;           /* the copy the lines point into */
    int *rank_of_line;   /* [file line] the prefix's rank or -1; heap,
                            n_file_lines + 1 entries */
    int n_file_lines;
} tlog_text_t;

typedef struct {
    const char *name;  /* "megatron" */
    const char *title; /* "Megatron-LM / Megatron-Bridge" */
    /* Whether the text has a line only this format prints. */
    bool (*detect)(const tlog_text_t *t);
    /* Fill records, settings and the run-level figures of out (already
     * holding the file name); the caller settles the steady state. */
    int (*parse)(const tlog_text_t *t, trainlog_t *out, err_t *err);
} tlog_reader_t;

extern const tlog_reader_t TLOG_READER_MEGATRON, TLOG_READER_NEMO, TLOG_READER_TORCHTITAN,
    TLOG_READER_DEEPSPEED, TLOG_READER_HF, TLOG_READER_COMPOSER, TLOG_READER_NANOTRON,
    TLOG_READER_MAXTEXT, TLOG_READER_NANOGPT, TLOG_READER_LITGPT, TLOG_READER_CSV, TLOG_READER_JSON;

/* A new record for step from line, every figure NAN, covers 1; NULL when
 * out of memory. The pointer is valid until the next tlog_add_record. */
tlog_record_t *tlog_add_record(trainlog_t *t, long step, int line);

/* Append a setting (an option and its value, "" for a switch); a setting
 * given twice keeps both (trainlog_setting returns the last). ERR_RUNTIME
 * when out of memory. */
int tlog_add_setting(trainlog_t *t, const char *name, const char *value, int line, err_t *err);
int tlog_add_arg(trainlog_t *t, const char *name, const char *value, int line, err_t *err);

/* ERR_INPUT "file: line N: reason". */
int tlog_bad(const tlog_text_t *t, int line, err_t *err, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* A decimal number at s (after blanks): [+-]digits[.digits][e[+-]digits],
 * with thousands separators when commas is set ("5,762"). Finite values
 * only. Sets *end past it; false (and *end = s) when there is none. */
bool tlog_number(const char *s, bool commas, double *out, const char **end);

/* The number that follows key in line ("elapsed time per iteration (ms):"
 * then blanks), or false when key is absent. *bad is set when key is
 * there but no number follows it, or when follow is not NULL and the number
 * runs into a character that is neither a blank, the end, nor one of
 * follow's ("2l77.0" is not 2). */
bool tlog_value_after(const char *line, const char *key, bool commas, const char *follow,
                      double *out, bool *bad);

/* The first line whose text contains needle, or NULL. */
const tlog_line_t *tlog_find(const tlog_text_t *t, const char *needle);

/* Whether any line of t (cleaned) is one is_line accepts: a reader's
 * detect. */
bool tlog_any_line(const tlog_text_t *t, bool (*is_line)(const char *s));

/* Whether line is the text's last and the file ends inside it. */
bool tlog_is_cut(const tlog_text_t *t, const tlog_line_t *l);

/* s without leading blanks. */
const char *tlog_skip_blanks(const char *s);

#endif
