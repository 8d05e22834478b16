/* formats: every job list a GPU-pool replay reads, one table row a format:
 * the job files (cluster/jobs.h: a job CSV, the Tiresias and Muri
 * simulators' traces) and the public cluster traces (cluster/traces.h: Helios, Acme,
 * Philly, PAI), in the order `scaleplan cluster --help` lists them.
 */
#ifndef SCALEPLAN_CLUSTER_FORMATS_H
#define SCALEPLAN_CLUSTER_FORMATS_H

#include "cluster/jobs.h"
#include "common/error.h"

typedef struct {
    const char *name;    /* "jobs", "tiresias", "helios", ... */
    const char *summary; /* one line for --help */
    int (*read)(const char *path, cjobs_t *out, err_t *err);
} cjobs_format_t;

/* The formats, in the order --help lists them; n_out gets their count. */
const cjobs_format_t *cjobs_formats(int *n_out);

/* The format called name, or NULL. */
const cjobs_format_t *cjobs_format_find(const char *name);

/* Read path in format fmt into out (initialised here). On error out holds
 * nothing (freed) and err names file, line and field. */
int cjobs_read(const cjobs_format_t *fmt, const char *path, cjobs_t *out, err_t *err);

#endif
