/* csvdoc: a whole --json document as CSV, for --csv, with the same keys.
 *
 * Every leaf of the document becomes a cell named by its dotted path
 * (layout.tp, breakdown_s.compute; array elements by their index:
 * interval_sweep.3.goodput). Without a table the CSV is "key,value" rows,
 * one per leaf. With a table (a member that is an array of objects: plan's
 * ladder, validate's rows) it has one row per element, the element's
 * leaves as columns named by their path without the index (ladder.gpus,
 * ladder.layout.tp) and the document's other leaves as columns repeated on
 * every row, so the CSV still carries every figure of the JSON. Numbers are
 * printed as the JSON carries them (15 significant digits), strings quoted
 * when they need it (RFC 4180), booleans as true/false, null as an empty
 * cell.
 */
#ifndef SCALEPLAN_REPORTS_CSVDOC_H
#define SCALEPLAN_REPORTS_CSVDOC_H

#include <stdio.h>

#include <cjson/cJSON.h>

#include "common/error.h"

/* Write doc (an object) as CSV to out; table_key names its table (an array
 * of objects) or is NULL. ERR_INPUT when doc is no object or table_key is
 * no array of objects; ERR_RUNTIME on a write error or OOM. */
int csv_document(FILE *out, const cJSON *doc, const char *table_key, err_t *err);

#endif
