/* progress: a one-line progress bar on stderr for work longer than a second.
 *
 * The bar draws only when stderr is a terminal and SCALEPLAN_PROGRESS is not
 * "0", so logs, pipes and tests stay clean. Redraws are throttled to ten a
 * second, so calling progress_update in a tight loop is cheap. A NULL handle
 * (allocation failed) is accepted by every function and does nothing: a
 * missing progress bar is never worth failing the work for.
 */
#ifndef SCALEPLAN_COMMON_PROGRESS_H
#define SCALEPLAN_COMMON_PROGRESS_H

typedef struct progress progress_t;

/* Start a bar labelled label for total units of work (> 0). */
progress_t *progress_create(const char *label, double total);
/* Report that done units are complete (clamped to [0, total]). */
void progress_update(progress_t *p, double done);
/* Erase the bar and free the handle. */
void progress_destroy(progress_t *p);
/* Whether progress bars are drawn in this process (for tests). */
int progress_enabled(void);

#endif
