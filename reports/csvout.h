/* csvout: a JSON result's table as CSV, for --csv.
 *
 * An array of objects becomes one row per element under a header of every
 * key met (nested objects flattened to dotted names: layout.tp); an object
 * becomes "key,value" rows (nested objects flattened the same way). Numbers
 * are printed as the JSON carries them (15 significant digits), strings quoted when
 * they need it (RFC 4180), null and absent as empty cells.
 */
#ifndef SCALEPLAN_REPORTS_CSVOUT_H
#define SCALEPLAN_REPORTS_CSVOUT_H

#include <stdio.h>

#include <cjson/cJSON.h>

#include "common/error.h"

/* s as one CSV cell (RFC 4180) into out: as it is when it holds no comma,
 * double quote, CR or LF; else in double quotes with each quote doubled.
 * Every CSV scaleplan writes goes through these two. */
void csv_write_cell(FILE *out, const char *s);
/* The same into buf, which must hold 2 x strlen(s) + 3 bytes; returns buf. */
char *csv_quote(const char *s, char *buf);

/* Write node as CSV to out. ERR_INPUT when node is neither an array of
 * objects nor an object; ERR_RUNTIME on a write error or OOM. */
int csv_from_json(FILE *out, const cJSON *node, const char *name, err_t *err);

#endif
