#include "cluster/replay.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cluster/heap.h"
#include "cluster/pool.h"
#include "common/rng.h"

enum { EV_FINISH = 0, EV_FAIL = 1, EV_REVISIT = 2 }; /* at one time, ends first */
typedef enum { STOP_FINISH, STOP_PREEMPT, STOP_FAIL } stop_t;
enum { ST_FUTURE = 0, ST_PENDING, ST_RUNNING, ST_DONE };

/* A running job ranked for preemption. */
typedef struct {
    double k1, k2; /* its policy key now */
    int rank, j;
} ranked_t;

/* A job's state during the replay. */
typedef struct {
    int64_t remaining_ms;    /* run time still needed, as of seg_start_ms:
                                overhead_ms, then duration - progress_ms */
    int64_t progress_ms;     /* useful run time done (what a checkpoint keeps) */
    int64_t overhead_ms;     /* restart time still to run before progress resumes */
    uint32_t attempts;       /* starts so far: the failure draw's stream */
    int64_t attained_gpu_ms; /* GPU time received before seg_start_ms */
    int64_t seg_start_ms;    /* when its current run began */
    uint32_t ver;            /* bumped when it stops: its pending events go stale */
    int state;
    int run_idx;             /* its slot in running[] while it runs */
    int rank;                /* arrival rank (ties of equal keys) */
    int size_idx;            /* its gang size's waiting queue (keyed policies) */
    int next, prev;          /* FIFO queue links (fifo, backfill) */
    int on_group;            /* the group it last ran in (its run time's type); -1 none */
    cpool_place_t place;
} js_t;

typedef struct {
    const cjobs_t *jobs;
    const creplay_config_t *cfg;
    const cpolicy_t *pol;
    cpolicy_params_t params;
    cpool_t *pool, *shadow; /* shadow: the pool as the backfill reservation sees it */
    js_t *st;
    int *order;             /* job indices by (submit, index) */
    int next_arrival;
    cheap_t events;
    cheap_t ends;           /* backfill: running jobs by end time (capacity n) */
    cheap_t *pending;       /* [n_sizes] waiting jobs, one heap per gang size
                               (keyed policies): a pass skips every size
                               at or above one that could not start */
    int *sizes, n_sizes;    /* the distinct gang sizes, ascending */
    int *group;             /* [n] the pool group a job must run in; -1 = any */
    double *fail_per_ms;    /* [n_sizes] interruptions per ms of a running gang (0 = none) */
    int fifo_head, fifo_tail;
    int *running, n_running;
    ranked_t *ranked;       /* [n] preemption candidates, worst first */
    cheap_item_t *blocked;  /* [n] jobs passed over in one pass */
    int64_t now;
    int in_use;
    creplay_result_t *out;
    err_t *err;
} rp_t;

void creplay_config_default(creplay_config_t *c, int gpus)
{
    memset(c, 0, sizeof *c);
    c->gpus = gpus;
    c->gpus_per_node = gpus < 8 ? gpus : 8;
    c->policy = cpolicy_find("fifo");
    c->las_threshold_gpu_s = CPOLICY_LAS_THRESHOLD_GPU_S;
    c->lease_ms = (int64_t)(CPOLICY_FTF_LEASE_S * 1000);
}

/* j's run time alone in group g (-1: the job's own duration). */
static int64_t dur_on(const rp_t *r, int j, int g)
{
    if (g >= 0 && r->cfg->group_duration_ms)
        return r->cfg->group_duration_ms[(size_t)j * (size_t)r->cfg->n_groups + (size_t)g];
    return r->jobs->jobs[j].duration_ms;
}

/* Job j as the policy sees it now. */
static cpolicy_job_t view(const rp_t *r, int j)
{
    const cjob_t *jb = &r->jobs->jobs[j];
    const js_t *s = &r->st[j];
    int64_t ran = s->state == ST_RUNNING ? r->now - s->seg_start_ms : 0;
    return (cpolicy_job_t){r->now, jb->submit_ms, dur_on(r, j, s->on_group), s->remaining_ms - ran,
                           s->attained_gpu_ms + ran * jb->gpus, jb->priority, jb->gpus};
}

static void key_of(const rp_t *r, int j, double *k1, double *k2)
{
    cpolicy_job_t v = view(r, j);
    r->pol->key(&v, &r->params, k1, k2);
}

static int push_event(rp_t *r, int j, int kind, int64_t at_ms)
{
    cheap_item_t it = {(double)at_ms, kind, 0, 0, j, kind, r->st[j].ver};
    return cheap_push(&r->events, it, r->err);
}

/* Whether waiting jobs sit in the policy's keyed heaps (policies that
 * preempt or pass over a job that does not fit, such as srtf or sjf) or
 * in one arrival-order list whose head blocks it (fifo, backfill). */
static bool keyed(const cpolicy_t *p)
{
    return p->preemptive || p->skip_blocked;
}

/* Put j in the waiting queue: the policy's heap, or the FIFO list. */
static int enqueue(rp_t *r, int j)
{
    js_t *s = &r->st[j];
    s->state = ST_PENDING;
    if (keyed(r->pol)) {
        cheap_item_t it = {0, 0, s->rank, 0, j, 0, s->ver};
        key_of(r, j, &it.k1, &it.k2);
        return cheap_push(&r->pending[s->size_idx], it, r->err);
    }
    /* in arrival order: a new arrival goes last; a job back after a
     * failure keeps its place (a walk, but failures are rare) */
    int after = r->fifo_tail;
    while (after >= 0 && r->st[after].rank > s->rank)
        after = r->st[after].prev;
    s->prev = after;
    s->next = after >= 0 ? r->st[after].next : r->fifo_head;
    if (s->next >= 0)
        r->st[s->next].prev = j;
    else
        r->fifo_tail = j;
    if (after >= 0)
        r->st[after].next = j;
    else
        r->fifo_head = j;
    return ERR_OK;
}

static void fifo_unlink(rp_t *r, int j)
{
    js_t *s = &r->st[j];
    if (s->prev >= 0)
        r->st[s->prev].next = s->next;
    else
        r->fifo_head = s->next;
    if (s->next >= 0)
        r->st[s->next].prev = s->prev;
    else
        r->fifo_tail = s->prev;
}

/* Run time until j's gang is interrupted, drawn from the exponential at
 * its size's rate with a stream of (seed, job, attempt), so a replay does
 * not depend on the order of draws; -1 without failures. */
static int64_t time_to_failure_ms(rp_t *r, int j)
{
    js_t *s = &r->st[j];
    double rate = r->fail_per_ms ? r->fail_per_ms[s->size_idx] : 0;
    uint64_t x = rng_mix(r->cfg->seed, ((uint64_t)j << 24) ^ s->attempts++);
    if (!(rate > 0))
        return -1;
    double u = ((double)(x >> 11) + 0.5) * 0x1.0p-53; /* in (0, 1) */
    double ms = ceil(-log(u) / rate);
    return ms < (double)CJOBS_MAX_MS ? (int64_t)ms : CJOBS_MAX_MS;
}

/* Where j goes: the group its type names; else, placing by speed, the
 * group with room where it runs shortest; else -1 (the first with room). */
static int choose_group(const rp_t *r, int j)
{
    if (r->group[j] >= 0 || !r->cfg->fastest_group || !r->cfg->group_duration_ms)
        return r->group[j];
    int best = -1;
    for (int g = 0; g < r->cfg->n_groups; g++)
        if (cpool_fits_in(r->pool, r->jobs->jobs[j].gpus, g) &&
            (best < 0 || dur_on(r, j, g) < dur_on(r, j, best)))
            best = g;
    return best;
}

/* j starts in group g: its progress (and what is left) is rescaled to the
 * run time there when that differs from where it ran before. */
static void move_to_group(rp_t *r, int j, int g)
{
    js_t *s = &r->st[j];
    int64_t was = dur_on(r, j, s->on_group), now = dur_on(r, j, g);
    if (was != now) {
        int64_t p = (int64_t)llround((double)s->progress_ms * (double)now / (double)was);
        s->progress_ms = p < now ? p : now - 1;
    }
    s->on_group = g;
    s->remaining_ms = s->overhead_ms + now - s->progress_ms;
}

/* Start j on placement pl (already taken from the pool), or place it now
 * when pl is NULL (it must fit). */
static int start(rp_t *r, int j, const cpool_place_t *pl)
{
    js_t *s = &r->st[j];
    const cjob_t *jb = &r->jobs->jobs[j];
    int rc;
    if (pl)
        s->place = *pl;
    else if ((rc = cpool_place_in(r->pool, jb->gpus, choose_group(r, j), &s->place, r->err)))
        return rc;
    move_to_group(r, j, s->place.group);
    if (!keyed(r->pol))
        fifo_unlink(r, j);
    s->state = ST_RUNNING;
    s->seg_start_ms = r->now;
    s->run_idx = r->n_running;
    r->running[r->n_running++] = j;
    creplay_job_t *o = &r->out->jobs[j];
    if (o->start_ms < 0)
        o->start_ms = r->now;
    r->in_use += jb->gpus;
    if (r->in_use > r->out->max_gpus_in_use)
        r->out->max_gpus_in_use = r->in_use;
    if ((rc = push_event(r, j, EV_FINISH, r->now + s->remaining_ms)))
        return rc;
    int64_t ttf = time_to_failure_ms(r, j);
    if (ttf >= 0 && ttf < s->remaining_ms && (rc = push_event(r, j, EV_FAIL, r->now + ttf)))
        return rc;
    cpolicy_job_t v = view(r, j);
    int64_t later = r->pol->revisit_ms(&v, &r->params);
    return later >= 0 && later < s->remaining_ms ? push_event(r, j, EV_REVISIT, r->now + later)
                                                  : ERR_OK;
}

/* Book ran ms of j's run: restart time first, then progress; on a
 * failure, back to the last checkpoint (every checkpoint_ms of progress)
 * and the restart time to run again. */
static void book_run(rp_t *r, int j, int64_t ran, bool failed)
{
    js_t *s = &r->st[j];
    const cjob_t *jb = &r->jobs->jobs[j];
    int64_t over = ran < s->overhead_ms ? ran : s->overhead_ms;
    s->overhead_ms -= over;
    s->progress_ms += ran - over;
    s->attained_gpu_ms += ran * jb->gpus;
    r->out->jobs[j].gpu_ms += ran * jb->gpus;
    r->out->gpu_ms += ran * jb->gpus;
    r->out->restart_gpu_ms += over * jb->gpus;
    if (failed) {
        int64_t c = r->cfg->checkpoint_ms, kept = c > 0 ? s->progress_ms / c * c : 0;
        r->out->lost_gpu_ms += (s->progress_ms - kept) * jb->gpus;
        s->progress_ms = kept;
        s->overhead_ms = r->cfg->restart_ms;
        r->out->jobs[j].failures++;
        r->out->failures++;
    }
    s->remaining_ms = s->overhead_ms + dur_on(r, j, s->on_group) - s->progress_ms;
}

/* Stop running j: book its GPU time; done, or back to the queue (a
 * preemption keeps its progress; a failure goes back to its checkpoint).
 * Its GPUs must already be given back when given_back (a preemption). */
static int stop(rp_t *r, int j, stop_t how, bool given_back)
{
    js_t *s = &r->st[j];
    book_run(r, j, r->now - s->seg_start_ms, how == STOP_FAIL);
    if (!given_back)
        cpool_give_back(r->pool, &s->place);
    cpool_place_free(&s->place);
    r->in_use -= r->jobs->jobs[j].gpus;
    int last = r->running[--r->n_running]; /* swap-remove from running[] */
    r->running[s->run_idx] = last;
    r->st[last].run_idx = s->run_idx;
    s->ver++;
    if (how == STOP_FINISH) {
        s->state = ST_DONE;
        r->out->jobs[j].end_ms = r->now;
        return ERR_OK;
    }
    if (how == STOP_PREEMPT) {
        r->out->jobs[j].preemptions++;
        r->out->preemptions++;
    }
    if (r->out->jobs[j].failures > CREPLAY_MAX_FAILURES_PER_JOB)
        return err_set(r->err, ERR_INPUT, "job '%s' (%d GPUs) failed %d times: at %.3g failures "
                       "an hour it rarely reaches a checkpoint (every %.0f s of progress, after "
                       "%.0f s of restart); checkpoint more often", r->jobs->jobs[j].name,
                       r->jobs->jobs[j].gpus, r->out->jobs[j].failures,
                       r->fail_per_ms[s->size_idx] * 3.6e6, r->cfg->checkpoint_ms / 1000.0,
                       r->cfg->restart_ms / 1000.0);
    return enqueue(r, j);
}

/* Worst first: larger k1, larger k2, later arrival. */
static int cmp_worst_first(const void *a, const void *b)
{
    const ranked_t *x = a, *y = b;
    if (x->k1 != y->k1)
        return x->k1 < y->k1 ? 1 : -1;
    if (x->k2 != y->k2)
        return x->k2 < y->k2 ? 1 : -1;
    return y->rank - x->rank;
}

/* Start waiting job j (key k1) by preempting running preemptible jobs of a
 * strictly larger k1, worst first, as few as it takes. false (nothing
 * changed) when even all of them would not make room. */
static int try_preempt(rp_t *r, int j, double k1, bool *started)
{
    int n = 0;
    *started = false;
    for (int i = 0; i < r->n_running; i++) {
        int v = r->running[i];
        ranked_t c = {0, 0, r->st[v].rank, v};
        key_of(r, v, &c.k1, &c.k2);
        bool leased = r->pol->leased && r->now - r->st[v].seg_start_ms < r->params.lease_ms;
        if (r->jobs->jobs[v].preemptible && !leased && c.k1 > k1)
            r->ranked[n++] = c;
    }
    if (n == 0)
        return ERR_OK;
    qsort(r->ranked, (size_t)n, sizeof *r->ranked, cmp_worst_first);
    int freed = 0;
    int g = r->jobs->jobs[j].gpus;
    while (freed < n && !cpool_fits_in(r->pool, g, r->group[j]))
        cpool_give_back(r->pool, &r->st[r->ranked[freed++].j].place);
    if (!cpool_fits_in(r->pool, g, r->group[j])) {
        for (int i = 0; i < freed; i++) /* the same GPUs: they are free */
            cpool_retake(r->pool, &r->st[r->ranked[i].j].place);
        return ERR_OK;
    }
    int rc = ERR_OK;
    for (int i = 0; !rc && i < freed; i++)
        rc = stop(r, r->ranked[i].j, STOP_PREEMPT, true);
    if (!rc && !(rc = start(r, j, NULL)))
        *started = true;
    return rc;
}

/* The largest k1 of a running preemptible job (-inf when none). */
static double worst_running_k1(const rp_t *r)
{
    double worst = -INFINITY, k1, k2;
    for (int i = 0; i < r->n_running; i++) {
        int v = r->running[i];
        key_of(r, v, &k1, &k2);
        if (r->jobs->jobs[v].preemptible && k1 > worst)
            worst = k1;
    }
    return worst;
}

/* Waiting jobs' keys as of now (policies whose keys move with time): stale
 * entries dropped, the rest re-keyed and each heap rebuilt, O(waiting). */
static void rekey_waiting(rp_t *r)
{
    for (int k = 0; k < r->n_sizes; k++) {
        cheap_t *h = &r->pending[k];
        int n = 0;
        for (int i = 0; i < h->n; i++) {
            cheap_item_t it = h->a[i];
            const js_t *s = &r->st[it.job];
            if (s->state != ST_PENDING || s->ver != it.ver)
                continue;
            key_of(r, it.job, &it.k1, &it.k2);
            h->a[n++] = it;
        }
        h->n = n;
        cheap_heapify(h);
    }
}

/* The best waiting job among the sizes below max_gpus: the heads of the
 * per-size heaps compared (a k-way merge; sizes are few). -1 when none. */
static int best_size_below(const rp_t *r, int max_gpus)
{
    int best = -1;
    cheap_item_t head, b = {0};
    for (int k = 0; k < r->n_sizes && r->sizes[k] < max_gpus; k++) {
        if (!cheap_peek(&r->pending[k], &head))
            continue;
        if (best < 0 || cheap_before(&head, &b)) {
            best = k;
            b = head;
        }
    }
    return best;
}

/* One pass of a keyed policy: waiting jobs best first, each started
 * when it fits or (preemptive policies) preemption makes room; one that
 * cannot start blocks the rest, or is passed over (fit-first). A gang that cannot start means
 * no later one as large can (later ones have keys no better, so no more
 * victims, and need at least as many GPUs): those sizes are skipped. */
static int pass_keyed(rp_t *r)
{
    int n_blocked = 0, rc = ERR_OK, blocked_size = INT_MAX, k;
    cheap_item_t it;
    if (r->pol->rekey)
        rekey_waiting(r);
    while (!rc && (k = best_size_below(r, blocked_size)) >= 0) {
        cheap_pop(&r->pending[k], &it);
        js_t *s = &r->st[it.job];
        if (s->state != ST_PENDING || s->ver != it.ver)
            continue; /* stale */
        bool started = cpool_fits_in(r->pool, r->jobs->jobs[it.job].gpus, r->group[it.job]);
        if (started)
            rc = start(r, it.job, NULL);
        else if (r->pol->preemptive)
            rc = try_preempt(r, it.job, it.k1, &started);
        if (rc || started)
            continue;
        r->blocked[n_blocked++] = it;
        if (r->group[it.job] < 0) /* a job held to one group says nothing of the others */
            blocked_size = r->jobs->jobs[it.job].gpus;
        /* later jobs have k1 >= this one's: none can fit or preempt */
        if (!r->pol->skip_blocked ||
            (cpool_free_gpus(r->pool) == 0 &&
             (!r->pol->preemptive || worst_running_k1(r) <= it.k1)))
            break;
    }
    for (int i = 0; !rc && i < n_blocked; i++) {
        cheap_item_t b = r->blocked[i];
        rc = cheap_push(&r->pending[r->st[b.job].size_idx], b, r->err);
    }
    return rc;
}

/* EASY backfill behind the blocked head h: the head's reservation is the
 * earliest end of running jobs after which it fits (the shadow pool holds
 * what will be free then, with the head placed on it). A job behind it
 * starts now when it fits and either ends by then or uses only GPUs that
 * the head will not need then (retaken on the shadow pool too). */
static int backfill(rp_t *r, int h)
{
    if (!cpool_copy(r->shadow, r->pool))
        return err_set(r->err, ERR_RUNTIME, "backfill: shadow pool of another shape (a bug)");
    /* running jobs by end time: a heap built in O(running), popped only
     * until the head fits */
    cheap_t *ends = &r->ends;
    for (int i = 0; i < r->n_running; i++) {
        int v = r->running[i];
        ends->a[i] = (cheap_item_t){(double)(r->now + view(r, v).remaining_ms), 0,
                                    r->st[v].rank, 0, v, 0, 0};
    }
    ends->n = r->n_running;
    cheap_heapify(ends);
    int gpus = r->jobs->jobs[h].gpus;
    int64_t shadow_ms = r->now;
    cheap_item_t e;
    while (!cpool_fits_in(r->shadow, gpus, r->group[h]) && cheap_pop(ends, &e)) {
        shadow_ms = (int64_t)e.k1;
        cpool_give_back(r->shadow, &r->st[e.job].place);
    }
    if (r->out->jobs[h].reserve_ms < 0)
        r->out->jobs[h].reserve_ms = shadow_ms;
    cpool_place_t head;
    int rc = cpool_place_in(r->shadow, gpus, r->group[h], &head, r->err);
    if (rc)
        return rc == ERR_INPUT
                   ? err_set(r->err, ERR_RUNTIME, "backfill: the head never fits (a bug)")
                   : rc;
    cpool_place_free(&head); /* its GPUs stay taken on the shadow pool */
    for (int c = r->st[h].next; c >= 0 && !rc && cpool_free_gpus(r->pool) > 0;) {
        int next = r->st[c].next, g = r->jobs->jobs[c].gpus;
        if (cpool_fits_in(r->pool, g, r->group[c])) {
            cpool_place_t pl;
            if ((rc = cpool_place_in(r->pool, g, r->group[c], &pl, r->err)))
                break;
            if (r->now + r->st[c].remaining_ms <= shadow_ms || cpool_retake(r->shadow, &pl))
                rc = start(r, c, &pl);
            else
                cpool_release(r->pool, &pl);
        }
        c = next;
    }
    return rc;
}

/* One pass of fifo or backfill: start the head while it fits. */
static int pass_fifo(rp_t *r)
{
    int rc = ERR_OK;
    while (!rc && r->fifo_head >= 0 &&
           cpool_fits_in(r->pool, r->jobs->jobs[r->fifo_head].gpus, r->group[r->fifo_head]))
        rc = start(r, r->fifo_head, NULL);
    /* the head's first reservation is recorded even when the pool is
     * full; after that a full pool has nothing to backfill */
    if (!rc && r->fifo_head >= 0 && r->pol->backfill &&
        (r->out->jobs[r->fifo_head].reserve_ms < 0 || cpool_free_gpus(r->pool) > 0))
        rc = backfill(r, r->fifo_head);
    return rc;
}

/* Handle every event and arrival at r->now, then run one policy pass. */
static int step(rp_t *r)
{
    cheap_item_t ev;
    int rc = ERR_OK;
    while (!rc && cheap_peek(&r->events, &ev) && (int64_t)ev.k1 == r->now) {
        cheap_pop(&r->events, &ev);
        js_t *s = &r->st[ev.job];
        if (s->state != ST_RUNNING || s->ver != ev.ver)
            continue; /* it stopped since */
        if (ev.kind == EV_FINISH || ev.kind == EV_FAIL)
            rc = stop(r, ev.job, ev.kind == EV_FINISH ? STOP_FINISH : STOP_FAIL, false);
        /* EV_REVISIT: its key changed or its lease ended; the pass below sees it */
    }
    while (!rc && r->next_arrival < r->jobs->n &&
           r->jobs->jobs[r->order[r->next_arrival]].submit_ms == r->now)
        rc = enqueue(r, r->order[r->next_arrival++]);
    r->out->events++;
    if (!rc)
        rc = keyed(r->pol) ? pass_keyed(r) : pass_fifo(r);
    return rc;
}

static int cmp_arrival(const void *a, const void *b, const cjobs_t *l)
{
    const cjob_t *x = &l->jobs[*(const int *)a], *y = &l->jobs[*(const int *)b];
    if (x->submit_ms != y->submit_ms)
        return x->submit_ms < y->submit_ms ? -1 : 1;
    return *(const int *)a - *(const int *)b;
}

/* Arrival order by (submit, index): a merge sort, stable and O(n log n),
 * since C11 qsort has no context argument. */
static void sort_arrivals(int *a, int *tmp, int n, const cjobs_t *l)
{
    if (n < 2)
        return;
    int h = n / 2;
    sort_arrivals(a, tmp, h, l);
    sort_arrivals(a + h, tmp, n - h, l);
    int i = 0, j = h, k = 0;
    while (i < h && j < n)
        tmp[k++] = cmp_arrival(&a[j], &a[i], l) < 0 ? a[j++] : a[i++];
    while (i < h)
        tmp[k++] = a[i++];
    while (j < n)
        tmp[k++] = a[j++];
    memcpy(a, tmp, (size_t)n * sizeof *a);
}

/* The jobs must have a duration (their size is checked against the
 * pool's groups by job_groups). */
static int check_jobs(const cjobs_t *l, const creplay_config_t *cfg, err_t *err)
{
    for (int i = 0; i < l->n; i++) {
        const cjob_t *j = &l->jobs[i];
        char where[64];
        snprintf(where, sizeof where, "line %d", j->line);
        bool timed = true;
        const int64_t *row = cfg->group_duration_ms
                                 ? cfg->group_duration_ms + (size_t)i * (size_t)cfg->n_groups
                                 : NULL;
        for (int g = 0; row && g < cfg->n_groups; g++)
            timed = timed && row[g] > 0;
        if (j->gpus < 1 || j->duration_ms <= 0 || j->submit_ms < 0 || !timed)
            return err_set(err, ERR_INPUT, "%s: %s: job '%s' has no duration (or no GPUs)",
                           l->path ? l->path : "jobs", where, j->name);
    }
    return ERR_OK;
}

static int cmp_int(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

/* Each gang size's interruption rate, from the config's callback. */
static int failure_rates(rp_t *r, err_t *err)
{
    if (!(r->fail_per_ms = calloc((size_t)r->n_sizes, sizeof *r->fail_per_ms)))
        return err_set(err, ERR_RUNTIME, "out of memory");
    for (int k = 0; k < r->n_sizes; k++) {
        double per_h = r->cfg->fail_rate_per_hour(r->cfg->fail_ctx, r->sizes[k]);
        if (!(per_h >= 0) || !isfinite(per_h))
            return err_set(err, ERR_INPUT, "no failure rate for a job of %d GPUs", r->sizes[k]);
        r->fail_per_ms[k] = per_h / 3.6e6;
    }
    return ERR_OK;
}

/* One waiting queue per distinct gang size, each job told its own. */
static int size_queues(rp_t *r, err_t *err)
{
    int n = r->jobs->n;
    if (!(r->sizes = malloc((size_t)n * sizeof *r->sizes)))
        return err_set(err, ERR_RUNTIME, "out of memory for a replay of %d jobs", n);
    for (int i = 0; i < n; i++)
        r->sizes[i] = r->jobs->jobs[i].gpus;
    qsort(r->sizes, (size_t)n, sizeof *r->sizes, cmp_int);
    r->n_sizes = 0;
    for (int i = 0; i < n; i++)
        if (r->n_sizes == 0 || r->sizes[r->n_sizes - 1] != r->sizes[i])
            r->sizes[r->n_sizes++] = r->sizes[i];
    if (!(r->pending = malloc((size_t)r->n_sizes * sizeof *r->pending)))
        return err_set(err, ERR_RUNTIME, "out of memory for a replay of %d jobs", n);
    for (int k = 0; k < r->n_sizes; k++)
        cheap_init(&r->pending[k]);
    for (int i = 0; i < n; i++) {
        const int *at = bsearch(&r->jobs->jobs[i].gpus, r->sizes, (size_t)r->n_sizes,
                                sizeof *r->sizes, cmp_int);
        r->st[i].size_idx = (int)(at - r->sizes);
    }
    return r->cfg->fail_rate_per_hour ? failure_rates(r, err) : ERR_OK;
}

/* The pool and its shadow: cfg's groups, or one group of cfg->gpus. */
static int make_pools(rp_t *r, const creplay_config_t *cfg, err_t *err)
{
    int n = cfg->n_groups > 0 ? cfg->n_groups : 1, one_gpn = cfg->gpus_per_node;
    int *gpn = malloc((size_t)n * sizeof *gpn);
    if (!gpn)
        return err_set(err, ERR_RUNTIME, "out of memory");
    for (int g = 0; g < n; g++)
        gpn[g] = one_gpn;
    const int *gpus = cfg->n_groups > 0 ? cfg->group_gpus : &cfg->gpus;
    if (cfg->n_groups == 0)
        r->pool = cpool_create(cfg->gpus, one_gpn, err); /* its error names --gpus */
    else
        r->pool = cpool_create_groups(gpus, gpn, n, err);
    if (r->pool)
        r->shadow = cpool_create_groups(gpus, gpn, n, err);
    free(gpn);
    return r->pool && r->shadow ? ERR_OK : err->code ? err->code : ERR_RUNTIME;
}

/* Each job's group: the one of its GPU type, or any. */
static int job_groups(rp_t *r, err_t *err)
{
    const cjobs_t *l = r->jobs;
    if (!(r->group = malloc((size_t)l->n * sizeof *r->group)))
        return err_set(err, ERR_RUNTIME, "out of memory");
    for (int i = 0; i < l->n; i++) {
        r->group[i] = -1;
        const char *t = l->jobs[i].gpu_type;
        for (int g = 0; t && g < r->cfg->n_groups; g++)
            if (strcmp(t, r->cfg->group_types[g]) == 0)
                r->group[i] = g;
        if (t && r->group[i] < 0)
            return err_set(err, ERR_INPUT, "%s: line %d: gpu: job '%s' asks for %s GPUs, which "
                           "the pool has none of (--cluster)", l->path ? l->path : "jobs",
                           l->jobs[i].line, l->jobs[i].name, t);
        int room = r->group[i] >= 0 ? cpool_group_gpus(r->pool, r->group[i]) : 0;
        for (int g = 0; r->group[i] < 0 && g < cpool_groups(r->pool); g++)
            room = cpool_group_gpus(r->pool, g) > room ? cpool_group_gpus(r->pool, g) : room;
        if (l->jobs[i].gpus > room)
            return err_set(err, ERR_INPUT, "%s: line %d: gpus: job '%s' asks for %d GPUs but the "
                           "pool has %d%s%s (%s)", l->path ? l->path : "jobs", l->jobs[i].line,
                           l->jobs[i].name, l->jobs[i].gpus, room, t ? " x " : "", t ? t : "",
                           r->cfg->n_groups > 0 ? "--cluster; a gang runs on one GPU type"
                                                : "--gpus");
    }
    return ERR_OK;
}

static int setup(rp_t *r, const cjobs_t *jobs, const creplay_config_t *cfg, creplay_result_t *out,
                 err_t *err)
{
    int n = jobs->n, rc;
    memset(r, 0, sizeof *r);
    *r = (rp_t){.jobs = jobs, .cfg = cfg, .pol = cfg->policy,
                .params = {cfg->las_threshold_gpu_s * 1000.0, cfg->lease_ms},
                .fifo_head = -1, .fifo_tail = -1, .out = out, .err = err};
    cheap_init(&r->events);
    if ((rc = make_pools(r, cfg, err)) || (rc = job_groups(r, err)))
        return rc;
    r->st = calloc((size_t)n, sizeof *r->st);
    r->order = malloc((size_t)n * sizeof *r->order);
    r->running = malloc((size_t)n * sizeof *r->running);
    r->ranked = malloc((size_t)n * sizeof *r->ranked);
    r->blocked = malloc((size_t)n * sizeof *r->blocked);
    cheap_init(&r->ends);
    r->ends.a = malloc((size_t)n * sizeof *r->ends.a);
    r->ends.cap = n;
    out->jobs = calloc((size_t)n, sizeof *out->jobs);
    int *tmp = malloc((size_t)n * sizeof *tmp);
    if (!r->st || !r->order || !r->running || !r->ranked || !r->blocked || !r->ends.a ||
        !out->jobs || !tmp) {
        free(tmp);
        return err_set(err, ERR_RUNTIME, "out of memory for a replay of %d jobs", n);
    }
    for (int i = 0; i < n; i++) {
        r->order[i] = i;
        r->st[i].remaining_ms = jobs->jobs[i].duration_ms;
        r->st[i].on_group = -1;
        out->jobs[i].start_ms = out->jobs[i].end_ms = out->jobs[i].reserve_ms = -1;
    }
    sort_arrivals(r->order, tmp, n, jobs);
    free(tmp);
    for (int i = 0; i < n; i++)
        r->st[r->order[i]].rank = i;
    out->n_jobs = n;
    return size_queues(r, err);
}

static void teardown(rp_t *r)
{
    for (int i = 0; r->st && i < r->jobs->n; i++)
        cpool_place_free(&r->st[i].place);
    cpool_destroy(r->pool);
    cpool_destroy(r->shadow);
    cheap_free(&r->events);
    cheap_free(&r->ends);
    for (int k = 0; r->pending && k < r->n_sizes; k++)
        cheap_free(&r->pending[k]);
    free(r->pending);
    free(r->sizes);
    free(r->fail_per_ms);
    free(r->group);
    free(r->st);
    free(r->order);
    free(r->running);
    free(r->ranked);
    free(r->blocked);
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* Nearest-rank percentile q of sorted v[0..n). */
static double pct_s(const int64_t *v, int n, double q)
{
    int k = (int)ceil(q * n) - 1;
    return v[k < 0 ? 0 : k] / 1000.0;
}

/* The pool's figures from the per-job records. */
static int summarise(const cjobs_t *l, const creplay_config_t *cfg, creplay_result_t *o, err_t *err)
{
    int n = l->n;
    int64_t *qd = malloc((size_t)n * sizeof *qd), *jct = malloc((size_t)n * sizeof *jct);
    if (!qd || !jct) {
        free(qd);
        free(jct);
        return err_set(err, ERR_RUNTIME, "out of memory summarising %d jobs", n);
    }
    double qsum = 0, jsum = 0, tok_gpu_ms = 0;
    o->first_submit_ms = l->jobs[0].submit_ms;
    for (int i = 0; i < n; i++) {
        const cjob_t *j = &l->jobs[i];
        const creplay_job_t *r = &o->jobs[i];
        qd[i] = r->start_ms - j->submit_ms;
        jct[i] = r->end_ms - j->submit_ms;
        qsum += (double)qd[i];
        jsum += (double)jct[i];
        if (j->submit_ms < o->first_submit_ms)
            o->first_submit_ms = j->submit_ms;
        if (r->end_ms > o->last_end_ms)
            o->last_end_ms = r->end_ms;
        if (j->tokens > 0) {
            o->tokens += j->tokens;
            tok_gpu_ms += (double)r->gpu_ms;
        }
        double rho = (double)jct[i] / (double)j->duration_ms; /* Themis's rho */
        o->ftf_mean += rho / n;
        if (rho > o->ftf_max)
            o->ftf_max = rho;
    }
    qsort(qd, (size_t)n, sizeof *qd, cmp_i64);
    qsort(jct, (size_t)n, sizeof *jct, cmp_i64);
    o->queue_delay_mean_s = qsum / n / 1000.0;
    o->jct_mean_s = jsum / n / 1000.0;
    o->queue_delay_p50_s = pct_s(qd, n, 0.5);
    o->queue_delay_p99_s = pct_s(qd, n, 0.99);
    o->jct_p50_s = pct_s(jct, n, 0.5);
    o->jct_p99_s = pct_s(jct, n, 0.99);
    free(qd);
    free(jct);
    o->makespan_s = (double)(o->last_end_ms - o->first_submit_ms) / 1000.0;
    double cap_gpu_s = (double)cfg->gpus * o->makespan_s;
    o->utilization = cap_gpu_s > 0 ? (double)o->gpu_ms / 1000.0 / cap_gpu_s : 0;
    o->goodput_tokens_per_gpu_hour = tok_gpu_ms > 0 ? o->tokens / (tok_gpu_ms / 3.6e6) : 0;
    o->cost_usd = cap_gpu_s / 3600.0 * cfg->price_per_gpu_h;
    return ERR_OK;
}

int creplay_run(const cjobs_t *jobs, const creplay_config_t *cfg, creplay_result_t *out,
                err_t *err)
{
    memset(out, 0, sizeof *out);
    if (!cfg->policy || jobs->n < 1)
        return err_set(err, ERR_INPUT, "%s", cfg->policy ? "no jobs to replay" : "no policy");
    int rc = check_jobs(jobs, cfg, err);
    if (rc)
        return rc;
    rp_t r;
    if (!(rc = setup(&r, jobs, cfg, out, err))) {
        for (;;) {
            cheap_item_t ev;
            bool have_ev = cheap_peek(&r.events, &ev);
            bool have_arr = r.next_arrival < jobs->n;
            if (!have_ev && !have_arr)
                break;
            int64_t ta = have_arr ? jobs->jobs[r.order[r.next_arrival]].submit_ms : INT64_MAX;
            r.now = have_ev && (int64_t)ev.k1 < ta ? (int64_t)ev.k1 : ta;
            if ((rc = step(&r)))
                break;
        }
    }
    for (int i = 0; !rc && i < jobs->n; i++)
        if (r.st[i].state != ST_DONE)
            rc = err_set(err, ERR_RUNTIME, "replay: job '%s' never finished (a bug)",
                         jobs->jobs[i].name);
    teardown(&r);
    if (!rc)
        rc = summarise(jobs, cfg, out, err);
    if (rc)
        creplay_result_free(out);
    return rc;
}

void creplay_result_free(creplay_result_t *r)
{
    free(r->jobs);
    memset(r, 0, sizeof *r);
}
