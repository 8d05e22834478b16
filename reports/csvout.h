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

/* Write node as CSV to out. ERR_INPUT when node is neither an array of
 * objects nor an object; ERR_RUNTIME on a write error or OOM. */
int csv_from_json(FILE *out, const cJSON *node, const char *name, err_t *err);

#endif
