/* jsonout: the JSON shapes shared by several commands' --json output.
 *
 * Key names are a contract (DESIGN.md "CLI contract"): scripts and tests
 * read them. Each builder returns a new cJSON object owned by the caller, or
 * NULL when memory runs out.
 */
#ifndef SCALEPLAN_REPORTS_JSONOUT_H
#define SCALEPLAN_REPORTS_JSONOUT_H

#include <stdbool.h>

#include <cjson/cJSON.h>

#include "models/layout_json.h"
#include "models/memory.h"
#include "models/model.h"
#include "sim/step.h"

/* The version of the documents' shapes: every --json document carries it
 * as "schema_version" (2: the run-level realism keys of reliability,
 * budget and validate --failures, and --csv with the same keys). */
#define REPORT_SCHEMA_VERSION 2

/* Add "schema_version" to doc unless it has one. False on OOM. */
bool report_add_schema(cJSON *doc);

/* The layout object is models/layout_json.h's layout_to_json. */

/* memory_gib {params, grads, optimizer, activations, buffers, total[,
 * capacity][, host]}; capacity_gib < 0 leaves capacity out; host (what
 * offload keeps in host memory) only when there is some. */
cJSON *report_memory_json(const model_memory_t *mem, double capacity_gib);

/* The architecture: name, display_name, family, layers, hidden, heads, ... */
cJSON *report_model_json(const model_t *m);

/* timeline [{stage, stream, kind, mb, chunk, start_s, end_s}] in start
 * order, from sim_timeline. */
cJSON *report_timeline_json(const sim_event_t *events, int n);

/* notes [{kind: "ignored"|"assumed", field, note}] of a reader of the
 * user's files (common/notes.h). */
cJSON *report_notes_json(const notes_t *notes);

/* interval_sweep [{interval_s, goodput}] from a checkpoint-interval sweep. */
cJSON *report_sweep_json(const double *interval_s, const double *goodput, int n);

#endif
