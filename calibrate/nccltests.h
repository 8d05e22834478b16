/* nccltests: import the logs of NVIDIA's nccl-tests (all_reduce_perf,
 * all_gather_perf, reduce_scatter_perf, broadcast_perf, reduce_perf,
 * sendrecv_perf, alltoall_perf, scatter_perf, gather_perf,
 * hypercube_perf), as the binaries write them and as people paste them,
 * so users who already ran them need no new run.
 *
 * Both outputs are read:
 *   text  what the binaries print: "#" header lines (the "# Collective test
 *         starting: NAME" line of recent versions, "# nThread .. nGpus ..",
 *         one "#  Rank  N Group .. on HOST device .. NAME" line per rank), a
 *         column header ("size count type redop root time algbw busbw
 *         #wrong time algbw busbw #wrong", older versions without
 *         redop/root or with "error"), one row per size, then the
 *         "# Out of bounds values" and "# Avg bus bandwidth" footer.
 *         As pasted, any of the header, column header and footer may be
 *         missing; lines may carry a launcher's label (mpirun
 *         --tag-output "[1,0]<stdout>:", "[0]", "[rank0]:", srun -l "0: ")
 *         and carriage returns. Labelled lines of other ranks repeating
 *         the table are skipped (one table kept). Rows are read right
 *         aligned (the last 8 columns: out-of-place then in-place time,
 *         algbw, busbw, #wrong; 4 when the table has one block), so a
 *         blank redop or root (all-to-all) does not shift them. Other
 *         output mixed in (NCCL INFO lines, prompts) is skipped.
 *   JSON  the file written with -J/--output_file (nccl-tests 2.16+):
 *         "config" with "nthreads", "ngpus" and one "devices" entry per
 *         process, "results" with "size" and "out_of_place"/"in_place"
 *         {"time", "alg_bw", "bus_bw", "nwrong"}.
 *
 * The out-of-place time is used (in-place where there is no out-of-place
 * figure). The collective comes from the log (its test name, or an
 * nccl-tests command line pasted with it), else the caller
 * (--collective), else the file name; none of these: refused, asking for
 * --collective. The group size comes from the rank lines (or the JSON
 * devices), else the caller (--ranks), else NCCL's "nranks N" lines, else
 * the log's busbw/algbw ratio; none: refused, asking for --ranks. What is
 * inferred rather than read is said in the reading's notes. Every row's
 * busbw is checked against the nccl-tests definition for that
 * collective and group size. Malformed input fails with one line naming
 * the file and line (text) or JSON field.
 */
#ifndef SCALEPLAN_CALIBRATE_NCCLTESTS_H
#define SCALEPLAN_CALIBRATE_NCCLTESTS_H

#include <stdbool.h>

#include "calibrate/measurements.h"
#include "common/error.h"

/* What the caller knows about a log: 0 / NULL = take it from the log. */
typedef struct {
    int n_ranks;
    int nodes;
    const char *collective; /* nccl-tests name or alias (all_reduce, allgather,
                               reduce, ...); NULL = from the log */
} nccltests_hint_t;

#define NCCLTESTS_MAX_NOTES 8
#define NCCLTESTS_NOTE_MAX 232

/* One log as read, whatever collective it measured. */
typedef struct {
    char collective[24]; /* canonical nccl-tests name: "all_reduce", "reduce", ... */
    bool modeled;        /* series.op is a collective scaleplan models */
    meas_coll_t series;  /* rows (size > 0), ranks, nodes, source */
    char device[96];     /* GPU name the log reports ("" when none) */
    int n_notes;
    char notes[NCCLTESTS_MAX_NOTES][NCCLTESTS_NOTE_MAX]; /* what was inferred */
} nccltests_reading_t;

/* Read a log (text or JSON, told apart by its first character) in memory;
 * name is used in messages. ERR_INPUT for malformed logs or a value the log
 * does not give and the hint does not supply (the message names the flag);
 * ERR_RUNTIME when out of memory. out is filled on success. */
int nccltests_read(const char *text, size_t len, const char *name, const nccltests_hint_t *hint,
                   nccltests_reading_t *out, err_t *err);

/* The same from a file. */
int nccltests_read_file(const char *path, const nccltests_hint_t *hint, nccltests_reading_t *out,
                        err_t *err);

/* Read one log into a collective series of a collective scaleplan models
 * (a reduce, gather, scatter or hypercube table is ERR_INPUT naming it);
 * out->source names the file and what it says of itself (device, ranks,
 * nodes). device (may be NULL) receives the GPU name the log reports
 * ("" when none). */
int nccltests_load(const char *path, const nccltests_hint_t *hint, meas_coll_t *out,
                   char *device, size_t device_cap, err_t *err);

/* The same on text already in memory; name is used in messages. */
int nccltests_parse(const char *text, size_t len, const char *name, const nccltests_hint_t *hint,
                    meas_coll_t *out, char *device, size_t device_cap, err_t *err);

#endif
