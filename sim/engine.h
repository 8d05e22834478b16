/* engine: a discrete-event engine for tasks on in-order streams.
 *
 * A task has a duration, a stream, a kind (an integer the caller chooses)
 * and dependencies on other tasks. Each stream runs its tasks one at a time
 * in the order they were added, like a CUDA stream: a task starts when the
 * task before it on its stream has ended and all its dependencies have
 * ended. The engine processes task completions from a binary-heap event
 * queue in time order (ties broken by task id, so runs are deterministic)
 * and records every task's start and end.
 *
 * The engine is an opaque handle meant to be reused: eng_reset keeps its
 * memory, so sweeping thousands of simulations allocates only at the start.
 */
#ifndef SCALEPLAN_SIM_ENGINE_H
#define SCALEPLAN_SIM_ENGINE_H

#include <stdint.h>

#include "common/error.h"

typedef struct sim_engine sim_engine_t;

/* A new, empty engine; NULL on OOM. */
sim_engine_t *eng_create(void);
void eng_destroy(sim_engine_t *e);

/* Forget all tasks and set the number of streams (>= 1), keeping memory.
 * Returns 0 or ERR_RUNTIME on OOM. */
int eng_reset(sim_engine_t *e, int n_streams);

/* Add a task to stream (0 <= stream < n_streams) with duration (>= 0
 * seconds) and kind; tag is free for the caller (e.g. packed layer and
 * micro-batch numbers). Returns its id (0, 1, 2, ... in order) or -1 on OOM
 * or a bad stream. */
int eng_task(sim_engine_t *e, int stream, double duration, int kind, uint32_t tag);

/* Make task wait for before. Returns 0, or -1 on OOM or bad ids. */
int eng_dep(sim_engine_t *e, int task, int before);

/* Run to completion. ERR_RUNTIME if some task can never start (a cycle:
 * a dependency on a later task of the same stream, or a circular wait),
 * naming the first stuck task; on OOM likewise. */
int eng_run(sim_engine_t *e, err_t *err);

int eng_task_count(const sim_engine_t *e);
int eng_stream_count(const sim_engine_t *e);
double eng_start(const sim_engine_t *e, int task);
double eng_end(const sim_engine_t *e, int task);
double eng_duration(const sim_engine_t *e, int task);
int eng_stream(const sim_engine_t *e, int task);
int eng_kind(const sim_engine_t *e, int task);
uint32_t eng_tag(const sim_engine_t *e, int task);
/* Latest end of any task (0 before a run or with no tasks). */
double eng_makespan(const sim_engine_t *e);
/* Events (task completions) processed by the last run. */
long eng_events(const sim_engine_t *e);

/* Dependencies of task (ids), for analysing who made a task wait: sets
 * *deps to an internal array valid until the next reset and returns its
 * length. */
int eng_deps(const sim_engine_t *e, int task, const int **deps);

/* Task that ran just before task on its stream, or -1. */
int eng_stream_prev(const sim_engine_t *e, int task);

#endif
