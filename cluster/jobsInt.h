/* jobsInt: the row machinery of cluster/jobs.c, shared with the trace
 * readers of cluster/traces.c and nothing else (SQLite's *Int.h split).
 *
 * A CSV file is read line by line: comments (#) and blank lines skipped,
 * the first other line is the header (its required columns checked), each
 * later line split at commas into trimmed fields and handed to a row
 * function with the header. A row with more fields than the header, or a
 * last line cut short (no newline, fields missing), is refused naming the
 * file, line and field.
 */
#ifndef SCALEPLAN_CLUSTER_JOBSINT_H
#define SCALEPLAN_CLUSTER_JOBSINT_H

#include <stdbool.h>

#include "cluster/jobs.h"
#include "common/error.h"

#define MAX_FIELDS 32 /* columns one row may have; the formats use under 20 */

/* One line split in place into trimmed fields. */
typedef struct {
    char *f[MAX_FIELDS];
    int n;
} fields_t;
typedef fields_t cjobs_fields_t;

/* The reading state of one file: where we are, for messages. */
typedef struct {
    const char *path;
    int line;
    bool last_unterminated; /* the current line had no newline: end of a cut file? */
    err_t *err;
} rd_t;
typedef rd_t cjobs_rd_t;

/* What a row function returns for a record that is valid but not
 * replayed (counted in cjobs_t.skipped). Not an err_t code. */
#define CJOBS_ROW_SKIP (-100)

/* A row parser gets the row and the header; it fills j (strings may point
 * into the row, or into *scratch, which the caller frees after copying). */
typedef int (*cjobs_row_fn)(const rd_t *r, const fields_t *row, const fields_t *hdr, cjob_t *j,
                            char **scratch);
typedef cjobs_row_fn row_fn;

/* Read every row of path with fn after checking the header has the
 * required columns (NULL-terminated). out is initialised here; on error it
 * is freed and err names file, line and field. */
int cjobs_int_read_rows(const char *path, const char *const *required, cjobs_row_fn fn,
                        cjobs_t *out, err_t *err);

/* Split line in place at commas into trimmed fields (a "quoted" field
 * loses its quotes). false when it has more than MAX_FIELDS. */
bool cjobs_int_split(char *line, cjobs_fields_t *out);

/* ERR_INPUT "path: line N: field: reason", reason = fmt with value. */
int cjobs_int_bad(const cjobs_rd_t *r, const char *field, const char *fmt, const char *value);

/* A finite number in [lo, hi] from text, or ERR_INPUT naming field. */
int cjobs_int_num(const cjobs_rd_t *r, const char *field, const char *text, double lo,
                  double hi, double *out);

/* The non-empty field name of row (ERR_INPUT when absent or empty). */
int cjobs_int_need(const cjobs_rd_t *r, const cjobs_fields_t *row, const cjobs_fields_t *hdr,
                   const char *name, const char **out);

/* The field name of row, or NULL when the header or the row lacks it. */
const char *cjobs_int_cell(const cjobs_fields_t *row, const cjobs_fields_t *hdr,
                           const char *name);

#endif
