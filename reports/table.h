/* table: aligned text tables for the terminal, and the same rows as CSV.
 *
 * A table_t collects rows of cells (strings, copied) under a header; the
 * printer pads every column to its widest cell, right-aligns columns marked
 * numeric, and when the table is wider than the terminal (COLUMNS or the
 * tty's width) shortens the widest left-aligned column with "...". CSV
 * output quotes cells that need it. Allocation failures are reported by
 * table_add_row and make later prints fail cleanly.
 */
#ifndef SCALEPLAN_REPORTS_TABLE_H
#define SCALEPLAN_REPORTS_TABLE_H

#include <stdbool.h>
#include <stdio.h>

#include "common/error.h"

typedef struct table table_t;

/* A table with ncols columns named by headers (copied). NULL on OOM. */
table_t *table_create(int ncols, const char *const *headers);
void table_destroy(table_t *t);

/* Right-align column col (numbers). */
void table_align_right(table_t *t, int col);

/* Append a row of ncols cells (copied; NULL cells print empty). Returns 0 or
 * ERR_RUNTIME on OOM. */
int table_add_row(table_t *t, const char *const *cells);

/* Append a row from printf-style cells separated by '\t' in one format. */
int table_add_rowf(table_t *t, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

int table_rows(const table_t *t);

/* Print aligned, indented by indent spaces, at most max_width columns wide
 * (0 = the terminal's width, or unlimited when not a terminal). */
int table_print(const table_t *t, FILE *out, int indent, int max_width);

/* Print as CSV (RFC 4180 quoting), header first. */
int table_print_csv(const table_t *t, FILE *out);

/* The terminal width for stdout (COLUMNS, then the tty), or 0 if unknown. */
int table_terminal_width(void);

#endif
