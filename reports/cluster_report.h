/* cluster_report: the HTML report of a `scaleplan cluster` result (its
 * --json with a "timeline"), drawn without gnuplot: the summary figures,
 * a Gantt chart (one row per job: its wait, then each run colored by how
 * it stopped) and the GPUs in use over time, as inline SVG (no script, no
 * network); the planner's sizes and the what-if rows when the result has
 * them. reports/report.c dispatches to it by the "timeline" key.
 */
#ifndef SCALEPLAN_REPORTS_CLUSTER_REPORT_H
#define SCALEPLAN_REPORTS_CLUSTER_REPORT_H

#include <cjson/cJSON.h>

#include "common/error.h"
#include "reports/html.h"

/* Rows the Gantt chart draws at most (the rest are counted under it). */
#define CLUSTER_REPORT_MAX_ROWS 400

/* ERR_INPUT naming the missing key's path (from src) when r lacks what the
 * page needs: makespan_s, utilization, gpus, timeline.jobs,
 * timeline.segments, timeline.in_use. */
int cluster_report_check(const cJSON *r, const char *src, err_t *err);

/* Append the page's body for r to h. ERR_RUNTIME on OOM (h failed). */
int cluster_report_render(const cJSON *r, html_t *h, err_t *err);

#endif
