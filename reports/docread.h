/* docread: reading back a --json document this program built, for the
 * HTML report and its summary pages. A value that is absent or of another
 * kind reads as "not there" (NAN, "", NULL) rather than as an error: the
 * document's writer decides what is present, the page shows what is. */
#ifndef SCALEPLAN_REPORTS_DOCREAD_H
#define SCALEPLAN_REPORTS_DOCREAD_H

#include <cjson/cJSON.h>

/* The number at key of o, NAN when absent or not a number. */
double doc_num(const cJSON *o, const char *key);

/* The string at key of o, "" when absent or not a string. */
const char *doc_str(const cJSON *o, const char *key);

/* The item at key of o, NULL when absent. */
const cJSON *doc_obj(const cJSON *o, const char *key);

#endif
