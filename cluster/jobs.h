/* jobs: the workload of a GPU-pool replay, read from a job file or a trace.
 *
 * A job asks for a fixed number of GPUs (gang: all or none), arrives at
 * submit_ms and needs duration_ms of run time on them (its recorded or
 * stated duration; for a job given as model + tokens the caller fills it
 * from the step simulator, cluster/duration.h). Times are whole
 * milliseconds so that GPU-time sums are exact integers.
 *
 * Readers (rows of one table with the traces', cluster/formats.h):
 *   jobs      CSV with a header: name,gpus,submit_s and either duration_s or
 *             model,tokens; optional priority (integer class, higher runs
 *             first), preemptible (yes/no/1/0/true/false; default yes), gpu
 *             (the GPU type it must run on, with a pool of several types),
 *             min_gpus and max_gpus (the range --policy planner may size it
 *             in; each defaults to gpus), checkpoint_s (its checkpoint
 *             interval after failures and spot reclaims), team (whose
 *             quota it uses under --policy quota), deadline_s (when it
 *             must be done: after submit_s, else an error). An
 *             optional first line "# jobs: N" is checked against the rows,
 *             so a file cut at a line boundary is caught.
 *   tiresias  the Tiresias simulator's job CSV (SymbioticLab/Tiresias,
 *             simulator/60_job.csv and its siblings): job_id,num_gpu,submit_time,iterations,
 *             model_name,duration,interval (seconds).
 * Errors are one line naming the file, its line and the field (ERR_INPUT):
 * a missing column, an empty or unreadable value, zero/negative/NaN/huge
 * values, a row with too many or too few fields, and a last line cut short
 * (no newline and fields missing). The list owns every string.
 */
#ifndef SCALEPLAN_CLUSTER_JOBS_H
#define SCALEPLAN_CLUSTER_JOBS_H

#include <stdbool.h>
#include <stdint.h>

#include "common/error.h"

/* Largest accepted time, 10^12 s (about 31,700 years) in ms: beyond it the
 * trace is wrong, and GPU x ms products stay far inside int64. */
#define CJOBS_MAX_MS ((int64_t)1000000000000000LL)
/* Largest GPU count one job may ask for. */
#define CJOBS_MAX_GPUS (1 << 20)

typedef struct {
    char *name;          /* owned */
    int gpus;            /* gang size, >= 1 */
    int64_t submit_ms;   /* arrival, >= 0 */
    int64_t duration_ms; /* run time needed on gpus GPUs, > 0 (0 until a
                            model+tokens job is priced) */
    int priority;        /* class; higher runs first under --policy priority */
    bool preemptible;
    char *model;         /* model+tokens jobs: catalog name or config.json; NULL otherwise */
    char *gpu_type;      /* the GPU type it must run on (a pool group); NULL = any */
    double tokens;       /* tokens to train (0 = not given) */
    char *team;          /* the team whose quota it counts against (--policy quota); NULL = none */
    double mfu;          /* model + tokens jobs: the simulated step's MFU (0 = unknown) */
    int64_t deadline_ms; /* when it must be done (0 = none); after submit_ms */
    int64_t checkpoint_ms; /* progress between its checkpoints (0 = the replay's) */
    int min_gpus, max_gpus; /* --policy planner: the sizes it may run at
                               (both 0 = only gpus); min <= gpus <= max */
    int line;            /* line in its file (for messages) */
    /* Traces that record when the job ran (cluster/traces.h): its recorded
     * start, on the same clock as submit_ms; -1 = not recorded. */
    int64_t trace_start_ms;
    char *vc;            /* the virtual cluster a trace ran it in (owned), or NULL */
} cjob_t;

typedef struct {
    cjob_t *jobs;
    int n, cap;
    char *path;          /* the file they came from (owned), or NULL */
    long skipped;        /* trace records not replayed (CPU-only jobs, jobs
                            that never ran: cluster/traces.h says which) */
} cjobs_t;

/* The job-file readers (rows of cluster/formats.h's table): out
 * initialised here; on error out holds nothing (freed) and err names file,
 * line and field. tiresias: the Tiresias simulator's CSV, times in seconds;
 * muri: the same columns as Muri's simulator reads them, in milliseconds. */
int cjobs_read_jobs(const char *path, cjobs_t *out, err_t *err);
int cjobs_read_tiresias(const char *path, cjobs_t *out, err_t *err);
int cjobs_read_muri(const char *path, cjobs_t *out, err_t *err);

/* Append a copy of j (its strings duplicated). ERR_RUNTIME on OOM. */
int cjobs_add(cjobs_t *l, const cjob_t *j, err_t *err);

void cjobs_free(cjobs_t *l);

#endif
