/* csv: read a CSV file with a header row (RFC 4180: quoted fields may hold
 * commas, doubled quotes and newlines).
 *
 * The whole table is read into memory; cells are looked up by row and
 * column name. Used for the public measurements under
 * tests/fixtures/validation and for imported logs.
 */
#ifndef SCALEPLAN_COMMON_CSV_H
#define SCALEPLAN_COMMON_CSV_H

#include "common/error.h"

typedef struct csv csv_t;

/* Read path. ERR_INPUT for a missing file, an unterminated quote or a row
 * with more cells than the header (naming the line). Free with csv_free. */
int csv_load(const char *path, csv_t **out, err_t *err);
void csv_free(csv_t *c);

int csv_rows(const csv_t *c);
/* Cell of data row `row` (0-based) in column `column`: "" when empty or the
 * row is short, NULL when the table has no such column. */
const char *csv_get(const csv_t *c, int row, const char *column);

#endif
