/* progress: progress reports on stderr for work longer than a second.
 *
 * On a terminal, a one-line bar redrawn in place, at most ten times a
 * second, after the first half second. Elsewhere (a log file, a pipe, a
 * batch job) one plain line every 30 seconds once the work has run that
 * long, and a closing line only if any was written: work shorter than
 * that, tests among it, prints nothing. SCALEPLAN_PROGRESS=0 turns both
 * off. A NULL handle (allocation failed, or reports off) is accepted by
 * every function and does nothing: a missing report is never worth
 * failing the work for.
 */
#ifndef SCALEPLAN_COMMON_PROGRESS_H
#define SCALEPLAN_COMMON_PROGRESS_H

#include <stdio.h>

typedef struct progress progress_t;

/* Start reporting work labelled label of total units (> 0) on stderr, as
 * a bar or as log lines (see above). */
progress_t *progress_create(const char *label, double total);
/* The same on out: a bar when bar is non-zero, else a line every
 * interval_s seconds once the work has run that long. */
progress_t *progress_create_on(FILE *out, const char *label, double total, int bar,
                               double interval_s);
/* Report that done units are complete (clamped to [0, total]). */
void progress_update(progress_t *p, double done);
/* Finish the report (erase the bar, or close the log) and free the handle. */
void progress_destroy(progress_t *p);
/* Whether reports are written in this process (SCALEPLAN_PROGRESS). */
int progress_enabled(void);

#endif
