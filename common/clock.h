/* clock: wall time for measuring how long work takes (monotonic seconds;
 * only differences mean anything). */
#ifndef SCALEPLAN_COMMON_CLOCK_H
#define SCALEPLAN_COMMON_CLOCK_H

/* Seconds on the monotonic clock. */
double clock_now_s(void);

#endif
