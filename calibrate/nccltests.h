/* nccltests: import the logs of NVIDIA's nccl-tests (all_reduce_perf,
 * all_gather_perf, reduce_scatter_perf, broadcast_perf, sendrecv_perf,
 * alltoall_perf), so users who already ran them need no new run.
 *
 * Both outputs are read:
 *   text  what the binaries print: "#" header lines (the "# Collective test
 *         starting: NAME" line of recent versions, "# nThread .. nGpus ..",
 *         one "#  Rank  N Group .. on HOST device .. NAME" line per rank), a
 *         column header ("size count type redop root time algbw busbw
 *         #wrong time algbw busbw #wrong", older versions without
 *         redop/root or with "error"), one row per size, then the
 *         "# Out of bounds values" and "# Avg bus bandwidth" footer.
 *         Other output mixed in (NCCL INFO lines) is skipped.
 *   JSON  the file written with -J/--output_file (nccl-tests 2.16+):
 *         "config" with "nthreads", "ngpus" and one "devices" entry per
 *         process, "results" with "size" and "out_of_place"/"in_place"
 *         {"time", "alg_bw", "bus_bw", "nwrong"}.
 *
 * The out-of-place time is used (in-place for JSON results whose
 * out-of-place entry is null, as trace replays write). The collective
 * comes from the log (the test name) or else the file name; the group
 * size from the rank lines (or the JSON devices), or from the caller, or
 * from the log's busbw/algbw ratio. Every row's busbw
 * is checked against the nccl-tests definition for that group size.
 * Malformed input fails with one line naming the file and line (text) or
 * JSON field.
 */
#ifndef SCALEPLAN_CALIBRATE_NCCLTESTS_H
#define SCALEPLAN_CALIBRATE_NCCLTESTS_H

#include "calibrate/measurements.h"
#include "common/error.h"

/* What the caller knows about a log: 0 = take it from the log. */
typedef struct {
    int n_ranks;
    int nodes;
} nccltests_hint_t;

/* Read one log (text or JSON, told apart by its first character) into a
 * collective series; out->source names the file and what it says of
 * itself (device, ranks, nodes). device (may be NULL) receives the GPU
 * name the log reports ("" when none). ERR_INPUT for malformed logs. */
int nccltests_load(const char *path, const nccltests_hint_t *hint, meas_coll_t *out,
                   char *device, size_t device_cap, err_t *err);

/* The same on text already in memory; name is used in messages. */
int nccltests_parse(const char *text, size_t len, const char *name, const nccltests_hint_t *hint,
                    meas_coll_t *out, char *device, size_t device_cap, err_t *err);

#endif
