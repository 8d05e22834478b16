/* bench_api: the public C API's speed (include/scaleplan.h), the way a
 * sweep from C or Python calls it (make bench, section "api").
 *
 * GPT-3 175B on 64 A100s in Korthikanti et al. 2022 Table 5's layout (TP8
 * PP8, sequence parallel, selective recompute, micro-batch 1, global batch
 * 64, 2,048 tokens): the step through sp_step_time (no document; target
 * under 0.1 ms) and through sp_run (the --json document), medians over
 * 1,000 calls in one context; then 512 sp_step_time calls on one thread
 * against two threads with a context each, 256 a thread (target: at least
 * 1.7x), and against two processes at once (the machine's yardstick: no
 * memory shared). Returns 0, or 1 when a call fails (its message printed).
 */
#ifndef SCALEPLAN_BENCH_API_H
#define SCALEPLAN_BENCH_API_H

int bench_api(void);

#endif
