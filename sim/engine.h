/* engine: a discrete-event engine for tasks on in-order streams.
 *
 * A task has a duration, a stream, a kind (an integer the caller chooses)
 * and dependencies on other tasks. Each stream runs its tasks one at a time
 * in the order they were added, like a CUDA stream: a task starts when the
 * task before it on its stream has ended and all its dependencies have
 * ended. The engine records every task's start and end.
 *
 * The graph is static and every duration is known before the run, so no
 * event queue is needed: one pass in dependency order gives each task the
 * latest end among its predecessors as its start, exactly the times an
 * event queue processing completions in time order would give, in time
 * linear in tasks plus dependencies (deterministic; no ties to break). A
 * simulation whose durations depended on what happens during the run
 * (failures inside a step, shared links) would need the queue back.
 *
 * The engine is an opaque handle meant to be reused: eng_reset keeps its
 * memory, and eng_reserve sizes it once from the counts a builder knows,
 * so sweeping thousands of simulations allocates only at the start.
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

/* Room for at least tasks tasks and deps dependencies (a capacity hint:
 * adding more still works, growing the arrays). Returns 0 or ERR_RUNTIME
 * on OOM, the tasks already added kept. */
int eng_reserve(sim_engine_t *e, long tasks, long deps);

/* Add a task to stream (0 <= stream < n_streams) with duration (>= 0
 * seconds) and kind; tag is free for the caller (e.g. packed layer and
 * micro-batch numbers). Returns its id (0, 1, 2, ... in order) or -1 on OOM
 * or a bad stream. */
int eng_task(sim_engine_t *e, int stream, double duration, int kind, uint32_t tag);

/* Make task wait for before. Returns 0, or -1 on OOM or bad ids. */
int eng_dep(sim_engine_t *e, int task, int before);

/* Run to completion. ERR_RUNTIME if some task can never start (a cycle:
 * a dependency on a later task of the same stream, or a circular wait),
 * naming the first stuck task (its start and end, and those of every task
 * waiting on it, are 0); on OOM likewise. Starts and ends are valid after
 * a run. */
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
/* Events (task completions) of the last run: the tasks that ran. */
long eng_events(const sim_engine_t *e);

/* Dependencies of task (ids), for analysing who made a task wait: sets
 * *deps to an internal array valid until the next reset and returns its
 * length. */
int eng_deps(const sim_engine_t *e, int task, const int **deps);

/* Task that ran just before task on its stream, or -1. */
int eng_stream_prev(const sim_engine_t *e, int task);

/* Last task added to stream (it ends last: a stream runs in order), or -1. */
int eng_stream_last(const sim_engine_t *e, int stream);

#endif
