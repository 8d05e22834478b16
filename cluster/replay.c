#include "cluster/replay.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cluster/heap.h"
#include "cluster/pool.h"
#include "common/rng.h"

/* at one time, ends first; spot events (job -1) after the jobs' */
enum { EV_FINISH = 0, EV_FAIL = 1, EV_REVISIT = 2, EV_SPOT_RETURN = 3, EV_SPOT_RECLAIM = 4,
       EV_SPARE_BACK = 5, EV_SPOT_TRACE = 6 };
typedef enum { STOP_FINISH, STOP_PREEMPT, STOP_FAIL, STOP_RECLAIM } stop_t;
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
    int *team;              /* [n] its team in cfg's quotas; -1 = none */
    int *team_used;         /* [cfg->n_teams] GPUs each team holds now */
    double *fail_per_ms;    /* [n_sizes] interruptions per ms of a running gang (0 = none) */
    int fifo_head, fifo_tail;
    int *running, n_running;
    ranked_t *ranked;       /* [n] preemption candidates, worst first */
    cheap_item_t *blocked;  /* [n] jobs passed over in one pass */
    int64_t now;
    int in_use;
    int n_done;             /* jobs finished: the replay ends at n */
    /* spot: the reclaimed nodes, oldest first, in a ring of spot_nodes */
    cpool_place_t *spot_hold; /* [spot_nodes] each a node held while away */
    int64_t *spot_back_ms;  /* [spot_nodes] when it returns */
    int spot_nodes, spot_out, spot_first;
    uint32_t spot_draws, spot_ver; /* ver: a redrawn reclaim makes the old one stale */
    int spares_free;        /* spare nodes ready to swap in for a failed one */
    creplay_result_t *out;
    err_t *err;
} rp_t;

void creplay_config_default(creplay_config_t *c, int gpus)
{
    memset(c, 0, sizeof *c);
    c->gpus = gpus;
    c->gpus_per_node = gpus < 8 ? gpus : 8;
    c->policy = cpolicy_find("fifo");
    c->las_limits_gpu_s[0] = CPOLICY_LAS_THRESHOLD_GPU_S;
    c->n_las_limits = 1;
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
    int t = r->team ? r->team[j] : -1;
    int used = t >= 0 ? r->team_used[t] - (s->state == ST_RUNNING ? jb->gpus : 0) : 0;
    return (cpolicy_job_t){r->now, jb->submit_ms, dur_on(r, j, s->on_group), s->remaining_ms - ran,
                           s->attained_gpu_ms + ran * jb->gpus, jb->priority, jb->gpus, used,
                           t >= 0 ? r->cfg->team_quota_gpus[t] : 0, s->state == ST_RUNNING};
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

static int arm(rp_t *r, int j);

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
    if (r->team && r->team[j] >= 0)
        r->team_used[r->team[j]] += jb->gpus;
    if (r->in_use > r->out->max_gpus_in_use)
        r->out->max_gpus_in_use = r->in_use;
    return arm(r, j);
}

/* j's events from now: its end, its next failure, its policy revisit. */
static int arm(rp_t *r, int j)
{
    js_t *s = &r->st[j];
    int rc;
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

/* A running j passed a las queue limit: its next revisit, at the next
 * limit (a lease, by contrast, is looked at once a run). */
static int rearm_revisit(rp_t *r, int j)
{
    cpolicy_job_t v = view(r, j);
    int64_t later = r->pol->revisit_ms(&v, &r->params);
    return later > 0 && later < v.remaining_ms ? push_event(r, j, EV_REVISIT, r->now + later)
                                               : ERR_OK;
}

/* Book ran ms of j's run: restart time first, then progress; on a
 * failure, back to the last checkpoint (every checkpoint_ms of progress)
 * and the restart time to run again. */
static void book_run(rp_t *r, int j, int64_t ran, stop_t how)
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
    if (how == STOP_FAIL || how == STOP_RECLAIM) {
        int64_t c = jb->checkpoint_ms > 0 ? jb->checkpoint_ms : r->cfg->checkpoint_ms;
        int64_t kept = c > 0 ? s->progress_ms / c * c : 0;
        r->out->lost_gpu_ms += (s->progress_ms - kept) * jb->gpus;
        if (how == STOP_RECLAIM)
            r->out->reclaim_lost_gpu_ms += (s->progress_ms - kept) * jb->gpus;
        s->progress_ms = kept;
        s->overhead_ms = r->cfg->restart_ms;
        if (how == STOP_FAIL) {
            r->out->jobs[j].failures++;
            r->out->failures++;
        } else {
            r->out->jobs[j].reclaims++;
            r->out->reclaims++;
        }
    }
    s->remaining_ms = s->overhead_ms + dur_on(r, j, s->on_group) - s->progress_ms;
}

/* Stop running j: book its GPU time; done, or back to the queue (a
 * preemption keeps its progress; a failure goes back to its checkpoint).
 * Its GPUs must already be given back when given_back (a preemption). */
static int too_many_failures(rp_t *r, int j);

static int stop(rp_t *r, int j, stop_t how, bool given_back)
{
    js_t *s = &r->st[j];
    book_run(r, j, r->now - s->seg_start_ms, how);
    if (r->cfg->on_segment && r->cfg->on_segment(r->cfg->segment_ctx, j, s->seg_start_ms, r->now,
                                                 r->jobs->jobs[j].gpus, s->place.group, (int)how))
        return err_set(r->err, ERR_RUNTIME, "out of memory recording the timeline");
    if (!given_back)
        cpool_give_back(r->pool, &s->place);
    cpool_place_free(&s->place);
    r->in_use -= r->jobs->jobs[j].gpus;
    if (r->team && r->team[j] >= 0)
        r->team_used[r->team[j]] -= r->jobs->jobs[j].gpus;
    int last = r->running[--r->n_running]; /* swap-remove from running[] */
    r->running[s->run_idx] = last;
    r->st[last].run_idx = s->run_idx;
    s->ver++;
    if (how == STOP_FINISH) {
        s->state = ST_DONE;
        r->n_done++;
        r->out->jobs[j].end_ms = r->now;
        return ERR_OK;
    }
    if (how == STOP_PREEMPT) {
        r->out->jobs[j].preemptions++;
        r->out->preemptions++;
    }
    int rc = too_many_failures(r, j);
    return rc ? rc : enqueue(r, j);
}

/* ERR_INPUT when j has failed more than CREPLAY_MAX_FAILURES_PER_JOB times. */
static int too_many_failures(rp_t *r, int j)
{
    const js_t *s = &r->st[j];
    if (r->out->jobs[j].failures > CREPLAY_MAX_FAILURES_PER_JOB)
        return err_set(r->err, ERR_INPUT, "job '%s' (%d GPUs) failed %d times: at %.3g failures "
                       "an hour it rarely reaches a checkpoint (every %.0f s of progress, after "
                       "%.0f s of restart); checkpoint more often", r->jobs->jobs[j].name,
                       r->jobs->jobs[j].gpus, r->out->jobs[j].failures,
                       r->fail_per_ms[s->size_idx] * 3.6e6, r->cfg->checkpoint_ms / 1000.0,
                       r->cfg->restart_ms / 1000.0);
    return ERR_OK;
}

/* A failed gang swaps a spare node in for the failed one and restarts in
 * place (no queueing again): the run so far is booked as a failure, the
 * spare is away for repair_ms, then a spare again. */
static int fail_in_place(rp_t *r, int j)
{
    js_t *s = &r->st[j];
    const cjob_t *jb = &r->jobs->jobs[j];
    book_run(r, j, r->now - s->seg_start_ms, STOP_FAIL);
    if (r->cfg->on_segment && r->cfg->on_segment(r->cfg->segment_ctx, j, s->seg_start_ms, r->now,
                                                 jb->gpus, s->place.group, (int)STOP_FAIL))
        return err_set(r->err, ERR_RUNTIME, "out of memory recording the timeline");
    int rc = too_many_failures(r, j);
    if (rc)
        return rc;
    s->ver++; /* its finish and failure events go stale */
    s->seg_start_ms = r->now;
    r->spares_free--;
    r->out->spare_swaps++;
    cheap_item_t it = {(double)(r->now + r->cfg->repair_ms), EV_SPARE_BACK, 0, 0, -1,
                       EV_SPARE_BACK, 0};
    return (rc = cheap_push(&r->events, it, r->err)) ? rc : arm(r, j);
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
    for (int k = 0; k < r->spot_out; k++) /* reclaimed spot nodes, back at their times */
        ends->a[ends->n++] = (cheap_item_t){
            (double)r->spot_back_ms[(r->spot_first + k) % r->spot_nodes], 0, INT_MAX, 0,
            -1 - (r->spot_first + k) % r->spot_nodes, 0, 0};
    cheap_heapify(ends);
    int gpus = r->jobs->jobs[h].gpus;
    int64_t shadow_ms = r->now;
    cheap_item_t e;
    while (!cpool_fits_in(r->shadow, gpus, r->group[h]) && cheap_pop(ends, &e)) {
        shadow_ms = (int64_t)e.k1;
        cpool_give_back(r->shadow, e.job >= 0 ? &r->st[e.job].place : &r->spot_hold[-1 - e.job]);
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

/* ---------------------------------------------------------------- spot
 * The spot share (cfg->spot_gpus, whole nodes) loses nodes at Poisson
 * times, each present spot node at spot_reclaims_per_node_hour (draws of
 * (seed, a stream of their own); memoryless, so the next reclaim is
 * redrawn whenever the count present changes), and each comes back
 * spot_outage_ms later. At a reclaim the jobs that free a node stop and
 * go back to their last checkpoint, as at a failure: the preemptible ones
 * first (a scheduler puts them on spot nodes), the latest started first;
 * the node is then held until it returns. */
static int spot_next(rp_t *r)
{
    if (r->cfg->spot_trace_n > 0)
        return ERR_OK; /* the trace says when nodes go and come back */
    int present = r->spot_nodes - r->spot_out;
    double rate = present * r->cfg->spot_reclaims_per_node_hour / 3.6e6; /* per ms */
    r->spot_ver++; /* any reclaim already drawn is stale */
    if (present <= 0 || !(rate > 0))
        return ERR_OK;
    uint64_t x = rng_mix(r->cfg->seed ^ 0x5907, ((uint64_t)1 << 62) | r->spot_draws++);
    double u = ((double)(x >> 11) + 0.5) * 0x1.0p-53;
    double ms = ceil(-log(u) / rate);
    int64_t at = r->now + (ms < (double)CJOBS_MAX_MS ? (int64_t)ms : CJOBS_MAX_MS);
    cheap_item_t it = {(double)at, EV_SPOT_RECLAIM, 0, 0, -1, EV_SPOT_RECLAIM, r->spot_ver};
    return cheap_push(&r->events, it, r->err);
}

/* Take one spot node back (the jobs that free it stop, see above), held
 * until back_ms. */
static int take_spot_node(rp_t *r, int64_t back_ms)
{
    int n = 0, freed = 0, rc = ERR_OK, node = r->cfg->gpus_per_node;
    for (int i = 0; i < r->n_running; i++) {
        int v = r->running[i];
        r->ranked[n++] = (ranked_t){r->jobs->jobs[v].preemptible ? 1 : 0,
                                    (double)r->st[v].seg_start_ms, r->st[v].rank, v};
    }
    qsort(r->ranked, (size_t)n, sizeof *r->ranked, cmp_worst_first);
    while (freed < n && !cpool_fits(r->pool, node))
        cpool_give_back(r->pool, &r->st[r->ranked[freed++].j].place);
    for (int i = 0; !rc && i < freed; i++)
        rc = stop(r, r->ranked[i].j, STOP_RECLAIM, true);
    int k = (r->spot_first + r->spot_out) % r->spot_nodes;
    if (rc || (rc = cpool_place(r->pool, node, &r->spot_hold[k], r->err)))
        return rc;
    r->spot_back_ms[k] = back_ms;
    r->spot_out++;
    r->out->spot_node_reclaims++;
    return ERR_OK;
}

/* A Poisson reclaim: a node away for spot_outage_ms, the next drawn. */
static int spot_reclaim(rp_t *r)
{
    int64_t back = r->now + r->cfg->spot_outage_ms;
    int rc = take_spot_node(r, back);
    cheap_item_t it = {(double)back, EV_SPOT_RETURN, 0, 0, -1, EV_SPOT_RETURN, 0};
    if (!rc)
        rc = cheap_push(&r->events, it, r->err);
    return rc ? rc : spot_next(r);
}

static int spot_return(rp_t *r)
{
    cpool_release(r->pool, &r->spot_hold[r->spot_first]);
    r->spot_first = (r->spot_first + 1) % r->spot_nodes;
    r->spot_out--;
    return spot_next(r);
}

/* Trace point i: as many spot nodes away as it says are missing (the
 * next point's time is when they may come back, for backfill). */
static int spot_trace_point(rp_t *r, int i)
{
    const creplay_config_t *c = r->cfg;
    int want_out = r->spot_nodes - c->spot_trace_nodes[i], rc = ERR_OK;
    int64_t next = i + 1 < c->spot_trace_n ? c->spot_trace_ms[i + 1] : CJOBS_MAX_MS;
    while (!rc && r->spot_out < want_out)
        rc = take_spot_node(r, next);
    while (!rc && r->spot_out > want_out)
        rc = spot_return(r);
    for (int k = 0; k < r->spot_out; k++) /* those still away: back at the next point at best */
        r->spot_back_ms[(r->spot_first + k) % r->spot_nodes] = next;
    if (!rc && i + 1 < c->spot_trace_n) {
        cheap_item_t it = {(double)next, EV_SPOT_TRACE, 0, 0, -1, EV_SPOT_TRACE, (uint32_t)i + 1};
        rc = cheap_push(&r->events, it, r->err);
    }
    return rc;
}

/* Handle every event and arrival at r->now, then run one policy pass. */
static int step(rp_t *r)
{
    cheap_item_t ev;
    int rc = ERR_OK;
    while (!rc && cheap_peek(&r->events, &ev) && (int64_t)ev.k1 == r->now) {
        cheap_pop(&r->events, &ev);
        if (ev.job < 0) { /* a spot node goes (unless redrawn since) or comes back */
            if (ev.kind == EV_SPARE_BACK)
                r->spares_free++;
            else if (ev.kind == EV_SPOT_TRACE)
                rc = spot_trace_point(r, (int)ev.ver);
            else if (ev.kind == EV_SPOT_RETURN)
                rc = spot_return(r);
            else if (ev.ver == r->spot_ver)
                rc = spot_reclaim(r);
            continue;
        }
        js_t *s = &r->st[ev.job];
        if (s->state != ST_RUNNING || s->ver != ev.ver)
            continue; /* it stopped since */
        if (ev.kind == EV_FAIL && r->spares_free > 0)
            rc = fail_in_place(r, ev.job);
        else if (ev.kind == EV_FINISH || ev.kind == EV_FAIL)
            rc = stop(r, ev.job, ev.kind == EV_FINISH ? STOP_FINISH : STOP_FAIL, false);
        else if (ev.kind == EV_REVISIT && !r->pol->leased)
            rc = rearm_revisit(r, ev.job);
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
    if (cfg->spot_gpus > 0 && (cfg->n_groups > 1 || cfg->spot_gpus >= cfg->gpus ||
                               cfg->spot_gpus % cfg->gpus_per_node))
        return err_setf(err, ERR_INPUT, NULL, "--spot", "%d spot GPUs: must be whole nodes of "
                        "%d, below the pool's %d, on a pool of one GPU type", cfg->spot_gpus,
                        cfg->gpus_per_node, cfg->gpus);
    if (cfg->spot_gpus > 0 && cfg->spot_trace_n > 0) { /* what is left after the last point */
        int left = cfg->gpus - cfg->spot_gpus +
                   cfg->spot_trace_nodes[cfg->spot_trace_n - 1] * cfg->gpus_per_node;
        for (int i = 0; i < l->n; i++)
            if (l->jobs[i].gpus > left)
                return err_setf(err, ERR_INPUT, NULL, "--spot-trace", "its last point leaves %d "
                                "GPUs for good, but job '%s' asks for %d", left,
                                l->jobs[i].name, l->jobs[i].gpus);
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

/* Each job's team in the quotas (none without quotas). */
static int job_teams(rp_t *r, err_t *err)
{
    const cjobs_t *l = r->jobs;
    if (r->cfg->n_teams <= 0)
        return ERR_OK;
    r->team = malloc((size_t)l->n * sizeof *r->team);
    r->team_used = calloc((size_t)r->cfg->n_teams, sizeof *r->team_used);
    if (!r->team || !r->team_used)
        return err_set(err, ERR_RUNTIME, "out of memory");
    for (int i = 0; i < l->n; i++) {
        r->team[i] = -1;
        for (int t = 0; l->jobs[i].team && t < r->cfg->n_teams; t++)
            if (strcmp(l->jobs[i].team, r->cfg->team_names[t]) == 0)
                r->team[i] = t;
    }
    return ERR_OK;
}

static int setup(rp_t *r, const cjobs_t *jobs, const creplay_config_t *cfg, creplay_result_t *out,
                 err_t *err)
{
    int n = jobs->n, rc;
    memset(r, 0, sizeof *r);
    *r = (rp_t){.jobs = jobs, .cfg = cfg, .pol = cfg->policy,
                .params = {.lease_ms = cfg->lease_ms, .n_las_limits = cfg->n_las_limits},
                .fifo_head = -1, .fifo_tail = -1, .out = out, .err = err};
    for (int q = 0; q < cfg->n_las_limits && q < CPOLICY_LAS_MAX_LIMITS; q++)
        r->params.las_limits_gpu_ms[q] = cfg->las_limits_gpu_s[q] * 1000.0;
    cheap_init(&r->events);
    if ((rc = make_pools(r, cfg, err)) || (rc = job_groups(r, err)) || (rc = job_teams(r, err)))
        return rc;
    r->st = calloc((size_t)n, sizeof *r->st);
    r->order = malloc((size_t)n * sizeof *r->order);
    r->running = malloc((size_t)n * sizeof *r->running);
    r->ranked = malloc((size_t)n * sizeof *r->ranked);
    r->blocked = malloc((size_t)n * sizeof *r->blocked);
    cheap_init(&r->ends);
    r->spot_nodes = cfg->spot_gpus > 0 ? cfg->spot_gpus / cfg->gpus_per_node : 0;
    r->spares_free = cfg->spare_gpus > 0 ? cfg->spare_gpus / cfg->gpus_per_node : 0;
    r->ends.a = malloc((size_t)(n + r->spot_nodes) * sizeof *r->ends.a); /* + spot nodes */
    r->ends.cap = n + r->spot_nodes;
    r->spot_hold = calloc((size_t)r->spot_nodes + 1, sizeof *r->spot_hold);
    r->spot_back_ms = calloc((size_t)r->spot_nodes + 1, sizeof *r->spot_back_ms);
    out->jobs = calloc((size_t)n, sizeof *out->jobs);
    int *tmp = malloc((size_t)n * sizeof *tmp);
    if (!r->st || !r->order || !r->running || !r->ranked || !r->blocked || !r->ends.a ||
        !out->jobs || !tmp || !r->spot_hold || !r->spot_back_ms) {
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
    if ((rc = size_queues(r, err)))
        return rc;
    r->now = jobs->jobs[r->order[0]].submit_ms;
    if (cfg->spot_trace_n > 0 && r->spot_nodes > 0) { /* the trace's first point */
        cheap_item_t it = {(double)cfg->spot_trace_ms[0], EV_SPOT_TRACE, 0, 0, -1, EV_SPOT_TRACE,
                           0};
        return cheap_push(&r->events, it, err);
    }
    return spot_next(r);
}

static void teardown(rp_t *r)
{
    for (int i = 0; r->st && i < r->jobs->n; i++)
        cpool_place_free(&r->st[i].place);
    for (int k = 0; r->spot_hold && k < r->spot_out; k++)
        cpool_place_free(&r->spot_hold[(r->spot_first + k) % r->spot_nodes]);
    free(r->spot_hold);
    free(r->spot_back_ms);
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
    free(r->team);
    free(r->team_used);
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

/* The default horizon (replay.h): the latest input time plus
 * CREPLAY_HORIZON_FACTOR times the jobs' run times alone, summed, and one
 * restart, spot outage and repair. */
static int64_t default_horizon_ms(const rp_t *r)
{
    const creplay_config_t *c = r->cfg;
    int64_t latest = 0;
    double alone_ms = (double)c->restart_ms + (double)c->spot_outage_ms + (double)c->repair_ms;
    for (int i = 0; i < r->jobs->n; i++) {
        int64_t d = dur_on(r, i, -1);
        for (int g = 0; c->group_duration_ms && g < c->n_groups; g++)
            d = dur_on(r, i, g) > d ? dur_on(r, i, g) : d;
        alone_ms += (double)d;
        if (r->jobs->jobs[i].submit_ms > latest)
            latest = r->jobs->jobs[i].submit_ms;
    }
    if (c->spot_trace_n > 0 && c->spot_trace_ms[c->spot_trace_n - 1] > latest)
        latest = c->spot_trace_ms[c->spot_trace_n - 1];
    double h = (double)latest + CREPLAY_HORIZON_FACTOR * alone_ms;
    return h < (double)(INT64_MAX / 2) ? (int64_t)h : INT64_MAX / 2;
}

/* Why unfinished job j could not finish, and what to change, into buf. */
static void why_unfinished(const rp_t *r, int j, char *buf, size_t cap)
{
    const creplay_config_t *c = r->cfg;
    const cjob_t *jb = &r->jobs->jobs[j];
    const creplay_job_t *o = &r->out->jobs[j];
    int64_t ckpt = jb->checkpoint_ms > 0 ? jb->checkpoint_ms : c->checkpoint_ms;
    char spot[160], whole[80];
    if (c->spot_trace_n > 0)
        snprintf(spot, sizeof spot, "as --spot-trace takes the spot share's %d GPUs away; lower "
                 "the spot share (--spot)", c->spot_gpus);
    else
        snprintf(spot, sizeof spot, "under --spot-preemption-rate %g (reclaims per spot "
                 "node-hour, on %d spot GPUs); lower the rate or the spot share (--spot)",
                 c->spot_reclaims_per_node_hour, c->spot_gpus);
    if (ckpt > 0)
        snprintf(whole, sizeof whole, "a whole checkpoint interval (%.0f s)", ckpt / 1000.0);
    else
        snprintf(whole, sizeof whole, "its whole run (no checkpoints kept)");
    if (c->spot_gpus > 0 && o->reclaims > 0)
        snprintf(buf, cap, "reclaimed %d time%s, it never kept its %d GPUs for %s %s",
                 o->reclaims, o->reclaims == 1 ? "" : "s", jb->gpus, whole, spot);
    else if (c->spot_gpus > 0 && o->start_ms < 0)
        snprintf(buf, cap, "never had its %d GPUs at once, the spot nodes away too often %s",
                 jb->gpus, spot);
    else if (o->failures > 0)
        snprintf(buf, cap, "failed %d time%s, it rarely keeps its %d GPUs for %s; checkpoint "
                 "more often (--checkpoint-every)", o->failures, o->failures == 1 ? "" : "s",
                 jb->gpus, whole);
    else
        snprintf(buf, cap, "%s", o->start_ms < 0 ? "never started" : "never finished");
}

/* ERR_INPUT when the replay has passed its horizon or its count of
 * passes: the unfinished job interrupted most (the first listed of
 * equals) and why, and how many are left. */
static int past_bounds(rp_t *r, int64_t horizon_ms, long max_events)
{
    char bound[96], why[360];
    if (r->now > horizon_ms)
        snprintf(bound, sizeof bound, "horizon of %.1f days", horizon_ms / 86.4e6);
    else if (r->out->events >= max_events)
        snprintf(bound, sizeof bound, "limit of %ld passes", max_events);
    else
        return ERR_OK;
    int worst = -1, left = 0;
    for (int i = 0; i < r->jobs->n; i++) {
        const creplay_job_t *o = &r->out->jobs[i];
        if (r->st[i].state == ST_DONE)
            continue;
        left++;
        if (worst < 0 || o->reclaims + o->failures >
                             r->out->jobs[worst].reclaims + r->out->jobs[worst].failures)
            worst = i;
    }
    if (worst < 0)
        return ERR_OK; /* all done: the loop ends */
    why_unfinished(r, worst, why, sizeof why);
    return err_set(r->err, ERR_INPUT, "job '%s' (%d GPUs): %s; the replay stopped at simulated "
                   "day %.1f after %ld scheduling passes (its %s), %d of %d jobs unfinished",
                   r->jobs->jobs[worst].name, r->jobs->jobs[worst].gpus, why,
                   (r->now - r->jobs->jobs[r->order[0]].submit_ms) / 86.4e6, r->out->events,
                   bound, left, r->jobs->n);
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
        int64_t horizon_ms = cfg->horizon_ms > 0 ? cfg->horizon_ms : default_horizon_ms(&r);
        long per_job = CREPLAY_EVENTS_PER_JOB * jobs->n;
        long max_events = cfg->max_events > 0 ? cfg->max_events
                                              : per_job > CREPLAY_MIN_EVENTS ? per_job
                                                                             : CREPLAY_MIN_EVENTS;
        for (;;) {
            cheap_item_t ev;
            bool have_ev = cheap_peek(&r.events, &ev);
            bool have_arr = r.next_arrival < jobs->n;
            if ((!have_ev && !have_arr) || r.n_done == jobs->n)
                break; /* (spot events go on after the last job: not replayed) */
            int64_t ta = have_arr ? jobs->jobs[r.order[r.next_arrival]].submit_ms : INT64_MAX;
            r.now = have_ev && (int64_t)ev.k1 < ta ? (int64_t)ev.k1 : ta;
            if ((rc = past_bounds(&r, horizon_ms, max_events)) || (rc = step(&r)))
                break;
        }
    }
    for (int i = 0; !rc && i < jobs->n; i++)
        if (r.st[i].state != ST_DONE)
            rc = err_set(err, ERR_RUNTIME, "replay: job '%s' never finished (a bug)",
                         jobs->jobs[i].name);
    int64_t reached_ms = r.now;
    long events = out->events;
    teardown(&r);
    if (!rc)
        rc = summarise(jobs, cfg, out, err);
    if (rc) {
        creplay_result_free(out);
        out->events = events; /* how far it got, for the caller */
        out->last_end_ms = reached_ms;
    }
    return rc;
}

void creplay_result_free(creplay_result_t *r)
{
    free(r->jobs);
    memset(r, 0, sizeof *r);
}
