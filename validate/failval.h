/* failval: published failure records replayed through the failure and
 * reliability models (scaleplan validate --failures).
 *
 * Each record of a table in the columns of shared/validation/failures.csv
 * that states a GPU count and an observation window is compared with what
 * scaleplan predicts for that run under its defaults: the rate set chosen
 * for the record's environment (read from its text, topologies/failure.h
 * failure_environment_of) and GPU architecture, the interruption kinds the
 * record counts, and the default policy for goodput records. Nothing is
 * fitted per record. Counts are the model's expectation over the window
 * (rates per wall-clock hour times the window, which is what the
 * simulation's mean converges to), MTTF records and node failure rates
 * (failures per 1,000 node-days, per server of the record's GPU) are
 * compared as rates per GPU-hour, goodput records through the Monte Carlo. A record inside a
 * published range or above a published lower bound has no error.
 *
 * Each row also says whether the rate set used was derived from the
 * record's own source ("in fit") and, for records of aggregate counts,
 * what a rate set derived WITHOUT the record's source predicts ("held out",
 * leave-one-source-out): every evidence set of the record's environment
 * from another source (every environment when none), each brought to the
 * level the record counts (GPU faults, hardware, unexpected, all: see
 * failure_level_t) through the shares of the other sources that count
 * both levels, pooled by the geometric mean with one vote per source.
 * The record's source takes part in neither the rates nor the shares, so
 * the held-out view is out of sample by construction. A cluster's tickets
 * and a job's interruptions are compared per GPU-hour (ASSUMED: a ticket
 * interrupts the job on its GPUs).
 */
#ifndef SCALEPLAN_VALIDATE_FAILVAL_H
#define SCALEPLAN_VALIDATE_FAILVAL_H

#include <stdbool.h>

#include "common/error.h"

typedef enum { FV_COUNT = 0, FV_RATE, FV_GOODPUT } fv_measure_t;

typedef struct {
    char row_id[16];
    char file[256];           /* the table it came from (base name: NAME_MAX bytes fit;
                                 a longer one is refused, not cut) */
    char source[120];
    char system[96];
    char item[120];
    int gpus;
    double window_days;
    char gpu[32];             /* catalog GPU the type resolved to */
    char environment[24];
    char set[32];             /* rate set used */
    bool set_assumed;         /* its evidence is for another GPU or setting */
    char counts[96];          /* what was compared: "its own class", "unexpected", ... */
    fv_measure_t measure;     /* count, rate per GPU-hour (MTTF rows), goodput */
    double published, published_high; /* a range's ends (equal when exact) */
    bool lower_bound;         /* ">= 35", "70+", "> 90" */
    double predicted;         /* in the published unit (counts, per GPU-hour, fraction) */
    double error;             /* predicted / published - 1; 0 inside a range or above a bound */
    bool in_fit;              /* the set was derived from this record's source */
    bool default_source;      /* the record's source is that of the catalog's default set */
    bool heldout;             /* a held-out prediction exists */
    char heldout_set[64];     /* the pool: "stepfun-llm", "5 sources, every environment" */
    int heldout_sources;      /* sources pooled */
    double heldout_predicted, heldout_error;
    double heldout_log2;      /* |log2(predicted / published)|; 0 inside a
                                 range or above a lower bound met */
    bool skipped;
    char reason[200];
    char assumed[160];        /* assumptions a goodput row needed */
} fv_row_t;

/* Replay every record of the tables at paths (n_paths of them, in the
 * columns of failures.csv). *rows is a heap array the caller frees, *n its
 * length (skipped records included, with their reason). ERR_INPUT for a
 * missing file, a table without the columns, a table with no records
 * (empty, or a header alone), or a record whose count, window or GPU count
 * is negative or not a number (naming the file, the row and the column);
 * nothing is returned then. */
int fv_replay(const char *const *paths, int n_paths, fv_row_t **rows, int *n, err_t *err);

/* Which rows a summary takes. */
typedef enum {
    FV_ALL = 0,    /* every compared count or rate row */
    FV_OUT_OF_FIT, /* those whose set came from another source */
    FV_BEYOND_DEFAULT, /* those from other sources than the default set's (Llama 3) */
    FV_HELD_OUT,   /* the held-out predictions */
    FV_GOODPUTS    /* goodput rows */
} fv_subset_t;

/* Median and 90th percentile of |error| over a subset; *count rows. */
void fv_summary(const fv_row_t *rows, int n, fv_subset_t which, double *median, double *p90,
                int *count);

/* Median and largest |log2(predicted / published)| of the held-out
 * predictions; *worst_row the row of the largest (NULL when none). */
void fv_heldout_log2(const fv_row_t *rows, int n, double *median, double *worst,
                     const fv_row_t **worst_row, int *count);

#endif
