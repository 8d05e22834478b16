#include "sim/engine.h"

#include <stdlib.h>
#include <string.h>

/* Tasks are stored as parallel arrays (cache-friendly for sweeps). The
 * stream order is kept as a link to the previous and next task of the same
 * stream: the previous task is an implicit dependency. Explicit
 * dependencies are an edge list turned into compressed rows at run time. */
struct sim_engine {
    int n, cap;        /* tasks */
    double *dur, *start, *end;
    int *stream, *kind, *prev, *next, *pending;
    uint32_t *tag;
    int n_streams, stream_cap;
    int *stream_tail;  /* last task added to each stream, -1 if none */
    int n_edges, edge_cap;
    int *edge_task, *edge_before; /* task waits for before */
    int *out_start, *out_list;    /* dependents of each task (CSR) */
    int *in_start, *in_list;      /* dependencies of each task (CSR) */
    int csr_cap, csr_edge_cap;
    int *heap;         /* task ids ordered by (end, id) */
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
    free(e->pending);
    free(e->tag);
    free(e->stream_tail);
    free(e->edge_task);
    free(e->edge_before);
    free(e->out_start);
    free(e->out_list);
    free(e->in_start);
    free(e->in_list);
    free(e->heap);
    free(e);
}

/* Grow *p to hold cap elements of size bytes; 0 or -1. */
static int grow(void **p, size_t cap, size_t size)
{
    void *q = realloc(*p, cap * size);
    if (!q)
        return -1;
    *p = q;
    return 0;
}

int eng_reset(sim_engine_t *e, int n_streams)
{
    if (n_streams < 1)
        return ERR_RUNTIME;
    if (n_streams > e->stream_cap) {
        if (grow((void **)&e->stream_tail, (size_t)n_streams, sizeof(int)))
            return ERR_RUNTIME;
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

static int ensure_tasks(sim_engine_t *e)
{
    if (e->n < e->cap)
        return 0;
    size_t cap = e->cap ? 2 * (size_t)e->cap : 1024;
    if (grow((void **)&e->dur, cap, sizeof(double)) ||
        grow((void **)&e->start, cap, sizeof(double)) ||
        grow((void **)&e->end, cap, sizeof(double)) ||
        grow((void **)&e->stream, cap, sizeof(int)) ||
        grow((void **)&e->kind, cap, sizeof(int)) ||
        grow((void **)&e->prev, cap, sizeof(int)) ||
        grow((void **)&e->next, cap, sizeof(int)) ||
        grow((void **)&e->pending, cap, sizeof(int)) ||
        grow((void **)&e->tag, cap, sizeof(uint32_t)) ||
        grow((void **)&e->heap, cap, sizeof(int)))
        return -1;
    e->cap = (int)cap;
    return 0;
}

int eng_task(sim_engine_t *e, int stream, double duration, int kind, uint32_t tag)
{
    if (stream < 0 || stream >= e->n_streams || !(duration >= 0) || ensure_tasks(e))
        return -1;
    int id = e->n++;
    e->dur[id] = duration;
    e->start[id] = e->end[id] = 0;
    e->stream[id] = stream;
    e->kind[id] = kind;
    e->tag[id] = tag;
    e->prev[id] = e->stream_tail[stream];
    e->next[id] = -1;
    if (e->prev[id] >= 0)
        e->next[e->prev[id]] = id;
    e->stream_tail[stream] = id;
    return id;
}

int eng_dep(sim_engine_t *e, int task, int before)
{
    if (task < 0 || task >= e->n || before < 0 || before >= e->n || task == before)
        return -1;
    if (e->n_edges == e->edge_cap) {
        size_t cap = e->edge_cap ? 2 * (size_t)e->edge_cap : 2048;
        if (grow((void **)&e->edge_task, cap, sizeof(int)) ||
            grow((void **)&e->edge_before, cap, sizeof(int)))
            return -1;
        e->edge_cap = (int)cap;
    }
    e->edge_task[e->n_edges] = task;
    e->edge_before[e->n_edges] = before;
    e->n_edges++;
    return 0;
}

/* Build the dependents and dependencies of each task as compressed rows. */
static int build_csr(sim_engine_t *e)
{
    size_t rows = (size_t)e->n + 1, edges = (size_t)(e->n_edges ? e->n_edges : 1);
    if ((int)rows > e->csr_cap) {
        if (grow((void **)&e->out_start, rows, sizeof(int)) ||
            grow((void **)&e->in_start, rows, sizeof(int)))
            return -1;
        e->csr_cap = (int)rows;
    }
    if ((int)edges > e->csr_edge_cap) {
        if (grow((void **)&e->out_list, edges, sizeof(int)) ||
            grow((void **)&e->in_list, edges, sizeof(int)))
            return -1;
        e->csr_edge_cap = (int)edges;
    }
    memset(e->out_start, 0, rows * sizeof(int));
    memset(e->in_start, 0, rows * sizeof(int));
    for (int i = 0; i < e->n_edges; i++) {
        e->out_start[e->edge_before[i] + 1]++;
        e->in_start[e->edge_task[i] + 1]++;
    }
    for (int t = 0; t < e->n; t++) {
        e->out_start[t + 1] += e->out_start[t];
        e->in_start[t + 1] += e->in_start[t];
    }
    /* Fill using pending[] and heap[] as scratch cursors. */
    int *out_pos = e->pending, *in_pos = e->heap;
    memcpy(out_pos, e->out_start, (size_t)e->n * sizeof(int));
    memcpy(in_pos, e->in_start, (size_t)e->n * sizeof(int));
    for (int i = 0; i < e->n_edges; i++) {
        e->out_list[out_pos[e->edge_before[i]]++] = e->edge_task[i];
        e->in_list[in_pos[e->edge_task[i]]++] = e->edge_before[i];
    }
    return 0;
}

/* Binary min-heap of task ids keyed by (end time, id). */
static int before_in_heap(const sim_engine_t *e, int a, int b)
{
    return e->end[a] < e->end[b] || (e->end[a] == e->end[b] && a < b);
}

static void heap_push(sim_engine_t *e, int *size, int task)
{
    int i = (*size)++;
    while (i > 0) {
        int parent = (i - 1) / 2;
        if (!before_in_heap(e, task, e->heap[parent]))
            break;
        e->heap[i] = e->heap[parent];
        i = parent;
    }
    e->heap[i] = task;
}

static int heap_pop(sim_engine_t *e, int *size)
{
    int top = e->heap[0];
    int last = e->heap[--(*size)];
    int i = 0;
    for (;;) {
        int child = 2 * i + 1;
        if (child >= *size)
            break;
        if (child + 1 < *size && before_in_heap(e, e->heap[child + 1], e->heap[child]))
            child++;
        if (!before_in_heap(e, e->heap[child], last))
            break;
        e->heap[i] = e->heap[child];
        i = child;
    }
    if (*size > 0)
        e->heap[i] = last;
    return top;
}

static void start_task(sim_engine_t *e, int *heap_size, int task, double now)
{
    e->start[task] = now;
    e->end[task] = now + e->dur[task];
    heap_push(e, heap_size, task);
}

int eng_run(sim_engine_t *e, err_t *err)
{
    e->events = 0;
    e->makespan = 0;
    if (e->n == 0)
        return ERR_OK;
    if (build_csr(e))
        return err_set(err, ERR_RUNTIME, "out of memory in the event engine");
    int heap_size = 0;
    for (int t = 0; t < e->n; t++)
        e->pending[t] = (e->in_start[t + 1] - e->in_start[t]) + (e->prev[t] >= 0);
    for (int t = 0; t < e->n; t++)
        if (e->pending[t] == 0)
            start_task(e, &heap_size, t, 0.0);
    long done = 0;
    double now = 0;
    while (heap_size > 0) {
        int t = heap_pop(e, &heap_size);
        now = e->end[t];
        done++;
        /* The next task on the stream and every dependent lose one wait;
         * completions arrive in time order, so the last wait to go is the
         * latest end among a task's predecessors: it starts now. */
        int nx = e->next[t];
        if (nx >= 0 && --e->pending[nx] == 0)
            start_task(e, &heap_size, nx, now);
        for (int k = e->out_start[t]; k < e->out_start[t + 1]; k++) {
            int d = e->out_list[k];
            if (--e->pending[d] == 0)
                start_task(e, &heap_size, d, now);
        }
    }
    e->events = done;
    e->makespan = now;
    if (done < e->n) {
        int stuck = -1;
        for (int t = 0; t < e->n && stuck < 0; t++)
            if (e->pending[t] > 0)
                stuck = t;
        return err_set(err, ERR_RUNTIME,
                       "simulated schedule deadlocked: task %d (stream %d, kind %d) never "
                       "started (%ld of %d tasks ran)",
                       stuck, stuck >= 0 ? e->stream[stuck] : -1,
                       stuck >= 0 ? e->kind[stuck] : -1, done, e->n);
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

int eng_deps(const sim_engine_t *e, int task, const int **deps)
{
    *deps = e->in_list + e->in_start[task];
    return e->in_start[task + 1] - e->in_start[task];
}
