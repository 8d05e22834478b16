#include "sim/engine.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

/* Tasks are stored as parallel arrays, sized once from eng_reserve (or
 * doubled when a caller adds more than it reserved). The stream order is a
 * link to the previous and next task of the same stream: the previous task
 * is an implicit dependency. Explicit dependencies are an edge list turned
 * into compressed rows at run time. */
struct sim_engine {
    int n, cap;        /* tasks */
    double *dur, *start, *end;
    int *stream, *kind, *prev, *next; /* next: the stream's following task */
    uint32_t *tag;
    int n_streams, stream_cap;
    int *stream_tail;  /* last task added to each stream, -1 if none */
    int n_edges, edge_cap;
    int *edge_task, *edge_before; /* task waits for before */
    int *out_start, *out_list;    /* dependents of each task (CSR) */
    int *in_start, *in_list;      /* dependencies of each task (CSR) */
    int *pending;                 /* waits left of each task during a run */
    int *ready;                   /* tasks in the order they became ready */
    int csr_cap, csr_edge_cap;
    long events;
    double makespan;
};

sim_engine_t *eng_create(void)
{
    sim_engine_t *e = calloc(1, sizeof *e);
    if (e && eng_reset(e, 1) != 0) {
        eng_destroy(e);
        return NULL;
    }
    return e;
}

void eng_destroy(sim_engine_t *e)
{
    if (!e)
        return;
    free(e->dur);
    free(e->start);
    free(e->end);
    free(e->stream);
    free(e->kind);
    free(e->prev);
    free(e->next);
    free(e->tag);
    free(e->stream_tail);
    free(e->edge_task);
    free(e->edge_before);
    free(e->out_start);
    free(e->out_list);
    free(e->in_start);
    free(e->in_list);
    free(e->pending);
    free(e->ready);
    free(e);
}

/* Grow *p to hold cap elements of size bytes, keeping its contents when
 * keep (else they are dropped, not copied); 0, or -1 with *p intact when
 * keep and NULL when not. */
static int grow(void **p, size_t cap, size_t size, bool keep)
{
    if (!keep) {
        free(*p);
        *p = NULL;
    }
    void *q = realloc(*p, cap * size);
    if (!q)
        return -1;
    *p = q;
    return 0;
}

/* The capacity to grow to for need: at least twice the old one, so that a
 * sweep over ever larger graphs reallocates a few times only. */
static size_t next_cap(size_t need, size_t old)
{
    size_t cap = need > 2 * old ? need : 2 * old;
    return cap > (size_t)1 << 30 ? need : cap;
}

int eng_reset(sim_engine_t *e, int n_streams)
{
    if (n_streams < 1)
        return ERR_RUNTIME;
    if (n_streams > e->stream_cap) {
        if (grow((void **)&e->stream_tail, (size_t)n_streams, sizeof(int), false)) {
            e->stream_cap = 0;
            return ERR_RUNTIME;
        }
        e->stream_cap = n_streams;
    }
    e->n_streams = n_streams;
    for (int s = 0; s < n_streams; s++)
        e->stream_tail[s] = -1;
    e->n = 0;
    e->n_edges = 0;
    e->events = 0;
    e->makespan = 0;
    return ERR_OK;
}

/* Room for need tasks; 0 or -1. The tasks added so far are kept (an
 * empty engine's arrays are replaced, not copied); after a failure the
 * engine holds what it held, or nothing when it was empty. */
static int reserve_tasks(sim_engine_t *e, size_t need)
{
    if (need <= (size_t)e->cap)
        return 0;
    size_t cap = next_cap(need, (size_t)e->cap);
    if (cap > (size_t)1 << 30)
        return -1;
    bool keep = e->n > 0;
    if (grow((void **)&e->dur, cap, sizeof(double), keep) ||
        grow((void **)&e->start, cap, sizeof(double), keep) ||
        grow((void **)&e->end, cap, sizeof(double), keep) ||
        grow((void **)&e->stream, cap, sizeof(int), keep) ||
        grow((void **)&e->kind, cap, sizeof(int), keep) ||
        grow((void **)&e->prev, cap, sizeof(int), keep) ||
        grow((void **)&e->next, cap, sizeof(int), keep) ||
        grow((void **)&e->tag, cap, sizeof(uint32_t), keep)) {
        if (!keep)
            e->cap = 0;
        return -1;
    }
    e->cap = (int)cap;
    return 0;
}

static int reserve_edges(sim_engine_t *e, size_t need)
{
    if (need <= (size_t)e->edge_cap)
        return 0;
    size_t cap = next_cap(need, (size_t)e->edge_cap);
    if (cap > (size_t)1 << 30)
        return -1;
    bool keep = e->n_edges > 0;
    if (grow((void **)&e->edge_task, cap, sizeof(int), keep) ||
        grow((void **)&e->edge_before, cap, sizeof(int), keep)) {
        if (!keep)
            e->edge_cap = 0;
        return -1;
    }
    e->edge_cap = (int)cap;
    return 0;
}

int eng_reserve(sim_engine_t *e, long tasks, long deps)
{
    if (tasks < 0 || deps < 0 || reserve_tasks(e, (size_t)tasks) ||
        reserve_edges(e, (size_t)deps))
        return ERR_RUNTIME;
    return ERR_OK;
}

int eng_task(sim_engine_t *e, int stream, double duration, int kind, uint32_t tag)
{
    if (stream < 0 || stream >= e->n_streams || !(duration >= 0))
        return -1;
    if (e->n == e->cap && reserve_tasks(e, e->cap ? (size_t)e->cap + 1 : 1024))
        return -1;
    int id = e->n++;
    e->dur[id] = duration;
    e->stream[id] = stream;
    e->kind[id] = kind;
    e->tag[id] = tag;
    int prev = e->stream_tail[stream];
    e->prev[id] = prev;
    e->next[id] = -1;
    if (prev >= 0)
        e->next[prev] = id;
    e->stream_tail[stream] = id;
    return id;
}

int eng_dep(sim_engine_t *e, int task, int before)
{
    if (task < 0 || task >= e->n || before < 0 || before >= e->n || task == before)
        return -1;
    if (e->n_edges == e->edge_cap &&
        reserve_edges(e, e->edge_cap ? (size_t)e->edge_cap + 1 : 2048))
        return -1;
    e->edge_task[e->n_edges] = task;
    e->edge_before[e->n_edges] = before;
    e->n_edges++;
    return 0;
}

/* The dependents and the dependencies of each task as compressed rows
 * (each in the order the dependencies were added), and the run's scratch. */
static int prepare_run(sim_engine_t *e)
{
    size_t rows = (size_t)e->n + 1, edges = (size_t)(e->n_edges ? e->n_edges : 1);
    if (rows > (size_t)1 << 30 || edges > (size_t)1 << 30)
        return -1;
    if (rows > (size_t)e->csr_cap) { /* scratch: nothing to keep */
        size_t cap = next_cap(rows, (size_t)e->csr_cap);
        e->csr_cap = 0;
        if (grow((void **)&e->out_start, cap, sizeof(int), false) ||
            grow((void **)&e->in_start, cap, sizeof(int), false) ||
            grow((void **)&e->pending, cap, sizeof(int), false) ||
            grow((void **)&e->ready, cap, sizeof(int), false))
            return -1;
        e->csr_cap = (int)cap;
    }
    if (edges > (size_t)e->csr_edge_cap) {
        size_t cap = next_cap(edges, (size_t)e->csr_edge_cap);
        e->csr_edge_cap = 0;
        if (grow((void **)&e->out_list, cap, sizeof(int), false) ||
            grow((void **)&e->in_list, cap, sizeof(int), false))
            return -1;
        e->csr_edge_cap = (int)cap;
    }
    int n = e->n, *out_start = e->out_start, *in_start = e->in_start;
    const int *edge_task = e->edge_task, *edge_before = e->edge_before;
    memset(out_start, 0, rows * sizeof(int));
    memset(in_start, 0, rows * sizeof(int));
    for (int i = 0; i < e->n_edges; i++) {
        out_start[edge_before[i] + 1]++;
        in_start[edge_task[i] + 1]++;
    }
    for (int t = 0; t < n; t++) {
        out_start[t + 1] += out_start[t];
        in_start[t + 1] += in_start[t];
    }
    /* Fill using pending[] and ready[] as the rows' cursors. */
    int *out_pos = e->pending, *in_pos = e->ready;
    memcpy(out_pos, out_start, (size_t)n * sizeof(int));
    memcpy(in_pos, in_start, (size_t)n * sizeof(int));
    for (int i = 0; i < e->n_edges; i++) {
        e->out_list[out_pos[edge_before[i]]++] = edge_task[i];
        e->in_list[in_pos[edge_task[i]]++] = edge_before[i];
    }
    return 0;
}

/* One pass over the graph in dependency order (Kahn's): a task is ready
 * once the task before it on its stream and all its dependencies have
 * ended, and starts at the latest of their ends, which is when its last
 * wait ends: the same times an event queue processing completions in time
 * order gives, in O(tasks + dependencies) with a plain list of ready
 * tasks instead of a priority queue. Returns the tasks that ran. */
static long settle(sim_engine_t *e)
{
    const int n = e->n;
    const double *restrict dur = e->dur;
    double *restrict start = e->start, *restrict end = e->end;
    const int *restrict prev = e->prev, *restrict next = e->next;
    const int *restrict in_start = e->in_start, *restrict out_start = e->out_start;
    const int *restrict out_list = e->out_list;
    int *restrict pending = e->pending, *restrict ready = e->ready;
    int tail = 0;
    for (int t = 0; t < n; t++) {
        start[t] = end[t] = 0;
        pending[t] = in_start[t + 1] - in_start[t] + (prev[t] >= 0);
        if (pending[t] == 0)
            ready[tail++] = t;
    }
    double makespan = 0;
    for (int head = 0; head < tail; head++) {
        int t = ready[head];
        double done = start[t] + dur[t];
        end[t] = done;
        if (done > makespan)
            makespan = done;
        int nx = next[t];
        if (nx >= 0) {
            if (done > start[nx])
                start[nx] = done;
            if (--pending[nx] == 0)
                ready[tail++] = nx;
        }
        for (int k = out_start[t]; k < out_start[t + 1]; k++) {
            int d = out_list[k];
            if (done > start[d])
                start[d] = done;
            if (--pending[d] == 0)
                ready[tail++] = d;
        }
    }
    e->makespan = makespan;
    return tail;
}

int eng_run(sim_engine_t *e, err_t *err)
{
    e->events = 0;
    e->makespan = 0;
    if (e->n == 0)
        return ERR_OK;
    if (prepare_run(e))
        return err_set(err, ERR_RUNTIME, "out of memory in the event engine");
    long done = settle(e);
    e->events = done;
    if (done < e->n) {
        int stuck = -1;
        for (int t = 0; t < e->n; t++)
            if (e->pending[t] > 0) {
                e->start[t] = 0; /* it never started, whatever ended before */
                if (stuck < 0)
                    stuck = t;
            }
        return err_set(err, ERR_RUNTIME,
                       "simulated schedule deadlocked: task %d (stream %d, kind %d) never "
                       "started (%ld of %d tasks ran)",
                       stuck, e->stream[stuck], e->kind[stuck], done, e->n);
    }
    return ERR_OK;
}

int eng_task_count(const sim_engine_t *e) { return e->n; }
int eng_stream_count(const sim_engine_t *e) { return e->n_streams; }
double eng_start(const sim_engine_t *e, int t) { return e->start[t]; }
double eng_end(const sim_engine_t *e, int t) { return e->end[t]; }
double eng_duration(const sim_engine_t *e, int t) { return e->dur[t]; }
int eng_stream(const sim_engine_t *e, int t) { return e->stream[t]; }
int eng_kind(const sim_engine_t *e, int t) { return e->kind[t]; }
uint32_t eng_tag(const sim_engine_t *e, int t) { return e->tag[t]; }
double eng_makespan(const sim_engine_t *e) { return e->makespan; }
long eng_events(const sim_engine_t *e) { return e->events; }
int eng_stream_prev(const sim_engine_t *e, int t) { return e->prev[t]; }
int eng_stream_last(const sim_engine_t *e, int stream) { return e->stream_tail[stream]; }

int eng_deps(const sim_engine_t *e, int task, const int **deps)
{
    *deps = e->in_list + e->in_start[task];
    return e->in_start[task + 1] - e->in_start[task];
}
