/* logcheck: the text and JSON of validate --log - each measured run's
 * prediction next to its measurement with the error and the verdict, and
 * the doubling check's per-rung table, the cause of a rung that falls
 * short, the re-fitted profile factors and the next rung's prediction.
 *
 * JSON builders return a new object owned by the caller, or NULL when
 * memory runs out. Text printers return 0, or ERR_RUNTIME when out cannot
 * be written or memory runs out.
 */
#ifndef SCALEPLAN_REPORTS_LOGCHECK_H
#define SCALEPLAN_REPORTS_LOGCHECK_H

#include <stdio.h>

#include <cjson/cJSON.h>

#include "validate/doubling.h"

/* One run: label, model, gpu, gpus, framework, profile, layout, the step
 * time predicted and measured with its error, within_tolerance, verdict,
 * quantities [{name, key, predicted, measured, error, flagged}] and the
 * predicted breakdown_s. */
cJSON *report_check_json(const dbl_measured_t *m, const dbl_check_t *c, double tolerance);

/* The run's table: each measured quantity predicted against measured, then
 * the verdict line. */
int report_check_text(FILE *out, const dbl_measured_t *m, const dbl_check_t *c, double tolerance);

/* The doubling check: baseline_offset, rungs [...], flagged_gpus, causes
 * [...], refit [...], fit_rms, next {...} (or next_why_not). */
cJSON *report_ladder_json(const dbl_ladder_t *l, double tolerance);

/* The per-rung table, the cause, the re-fit and the next rung in words. */
int report_ladder_text(FILE *out, const dbl_ladder_t *l, double tolerance);

/* A readable name for a breakdown part ("dp_comm" -> "DP communication"). */
const char *report_part_label(const char *key);

#endif
