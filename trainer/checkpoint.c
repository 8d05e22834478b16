#include "trainer/checkpoint.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "common/checksum.h"
#include "common/clock.h"
#include "common/fileio.h"
#include "common/json.h"
#include "common/strfmt.h"

#ifndef PATH_MAX
#define PATH_MAX 4096
#endif

#define SHARD_MAGIC "SPCKPT01"
#define SHARD_HEADER_BYTES 64
#define MANIFEST "manifest.json"

/* A number from the manifest, or fallback when absent or not a number. */
static double number_or(const cJSON *o, const char *key, double fallback)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    return cJSON_IsNumber(v) ? v->valuedouble : fallback;
}

/* ------------------------------------------------------------ shard files */

typedef struct {
    uint32_t rank, world, tp, zero1;
    uint64_t step, n_params, n_opt;
} shard_header_t;

static void put_u32(unsigned char *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (unsigned char)(v >> (8 * i));
}

static void put_u64(unsigned char *p, uint64_t v)
{
    put_u32(p, (uint32_t)v);
    put_u32(p + 4, (uint32_t)(v >> 32));
}

static uint32_t get_u32(const unsigned char *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint64_t get_u64(const unsigned char *p) { return get_u32(p) | (uint64_t)get_u32(p + 4) << 32; }

static void encode_header(const shard_header_t *h, unsigned char *b)
{
    memset(b, 0, SHARD_HEADER_BYTES);
    memcpy(b, SHARD_MAGIC, 8);
    put_u32(b + 8, 1); /* version */
    put_u32(b + 12, h->rank);
    put_u32(b + 16, h->world);
    put_u32(b + 20, h->tp);
    put_u32(b + 24, h->zero1);
    put_u64(b + 32, h->step);
    put_u64(b + 40, h->n_params);
    put_u64(b + 48, h->n_opt);
}

static bool decode_header(const unsigned char *b, shard_header_t *h)
{
    if (memcmp(b, SHARD_MAGIC, 8) != 0 || get_u32(b + 8) != 1)
        return false;
    h->rank = get_u32(b + 12);
    h->world = get_u32(b + 16);
    h->tp = get_u32(b + 20);
    h->zero1 = get_u32(b + 24);
    h->step = get_u64(b + 32);
    h->n_params = get_u64(b + 40);
    h->n_opt = get_u64(b + 48);
    return true;
}

static int fsync_dir(const char *dir, err_t *err)
{
    int fd = open(dir, O_RDONLY);
    if (fd < 0)
        return err_setf(err, ERR_RUNTIME, dir, NULL, "cannot open folder to sync: %s",
                        strerror(errno));
    int rc = fsync(fd) == 0 || errno == EINVAL ? ERR_OK
                                               : err_setf(err, ERR_RUNTIME, dir, NULL,
                                                          "fsync failed: %s", strerror(errno));
    close(fd);
    return rc;
}

/* Write header + params + m + v to tmp, fsync it and rename it to path;
 * the CRC and size of what was written come back. */
static int write_shard_at(const char *path, const char *tmp, const shard_header_t *h,
                          const float *params, const float *m, const float *v,
                          uint32_t *crc_out, uint64_t *bytes_out, err_t *err)
{
    FILE *f = fopen(tmp, "wb");
    if (!f)
        return err_setf(err, ERR_RUNTIME, tmp, NULL, "cannot create: %s", strerror(errno));
    unsigned char head[SHARD_HEADER_BYTES];
    encode_header(h, head);
    uint32_t crc = checksum_crc32(0, head, sizeof head);
    bool ok = fwrite(head, 1, sizeof head, f) == sizeof head;
    const float *parts[3] = {params, m, v};
    size_t counts[3] = {h->n_params, h->n_opt, h->n_opt};
    for (int p = 0; p < 3 && ok; p++) {
        size_t bytes = counts[p] * sizeof(float);
        ok = fwrite(parts[p], 1, bytes, f) == bytes;
        crc = checksum_crc32(crc, parts[p], bytes);
    }
    ok = ok && fflush(f) == 0 && fsync(fileno(f)) == 0;
    int saved = errno;
    if (fclose(f) != 0)
        ok = false;
    if (!ok) {
        unlink(tmp);
        return err_setf(err, ERR_RUNTIME, tmp, NULL, "write failed: %s (disk full?)",
                        strerror(saved));
    }
    if (rename(tmp, path) != 0) {
        saved = errno;
        unlink(tmp);
        return err_setf(err, ERR_RUNTIME, path, NULL, "cannot rename into place: %s",
                        strerror(saved));
    }
    *crc_out = crc;
    *bytes_out = SHARD_HEADER_BYTES + (h->n_params + 2 * h->n_opt) * sizeof(float);
    return ERR_OK;
}

/* Write shard `name` into dir (write_shard_at) and sync the folder. */
static int write_shard(const char *dir, const char *name, const shard_header_t *h,
                       const float *params, const float *m, const float *v, uint32_t *crc_out,
                       uint64_t *bytes_out, err_t *err)
{
    char *path = str_printf("%s/%s", dir, name), *tmp = str_printf("%s/%s.tmp", dir, name);
    int rc = path && tmp ? write_shard_at(path, tmp, h, params, m, v, crc_out, bytes_out, err)
                         : err_set(err, ERR_RUNTIME, "out of memory");
    free(path);
    free(tmp);
    return rc ? rc : fsync_dir(dir, err);
}

/* ------------------------------------------------------------ the writer */

/* What each rank reports about its shard, gathered on every rank. */
typedef struct {
    uint64_t bytes;
    uint32_t crc;
    int32_t ok;
} shard_report_t;

struct ckpt_writer {
    ckpt_config_t c; /* a copy: its setting values stay the caller's */
    char *root;      /* heap copy of c.dir */
    const dist_group_t *world;
    /* the save in flight (asynchronous) */
    bool pending;
    long pending_step;
    char *pending_dir; /* heap */
    float *snapshot; /* params, m, v */
    pthread_t thread;
    atomic_int done;
    bool joined;
    shard_report_t report;
    err_t thread_err;
};

/* The folder of checkpoint step under root (heap; NULL on OOM). */
static char *step_dir(const char *root, long step)
{
    return str_printf("%s/step-%08ld", root, step);
}

static void shard_name(int rank, char *buf, size_t cap) { snprintf(buf, cap, "rank-%05d.bin", rank); }

int ckpt_check_path(const char *path, const char *flag, err_t *err)
{
    size_t n = strlen(path);
    if (n + CKPT_PATH_ROOM < (size_t)PATH_MAX)
        return ERR_OK;
    return err_setf(err, ERR_INPUT, NULL, flag,
                    "a path of %zu bytes is too long: the checkpoint files under it would pass "
                    "the system's limit of %d bytes per path (at most %d bytes here)",
                    n, PATH_MAX, PATH_MAX - CKPT_PATH_ROOM - 1);
}

int ckpt_writer_create(const ckpt_config_t *c, const dist_group_t *world, ckpt_writer_t **out,
                       err_t *err)
{
    *out = NULL;
    if (c->keep < 1)
        return err_setf(err, ERR_INPUT, NULL, "--checkpoint-keep", "must be at least 1 (got %d)",
                        c->keep);
    int rc = ckpt_check_path(c->dir, "--checkpoint-dir", err);
    if (rc)
        return rc;
    ckpt_writer_t *w = calloc(1, sizeof *w);
    if (!w || !(w->root = str_printf("%s", c->dir))) {
        free(w);
        return err_set(err, ERR_RUNTIME, "out of memory");
    }
    w->c = *c;
    w->c.dir = w->root;
    w->world = world;
    if ((rc = fileio_mkdirs(w->root, err))) {
        free(w->root);
        free(w);
        return rc;
    }
    *out = w;
    return ERR_OK;
}

/* Add field name = printf(fmt, ap) to list (n used of max). */
static int add_field(ckpt_setting_t *list, int *n, int max, const char *name, err_t *err,
                     const char *fmt, va_list ap)
{
    if (*n >= max)
        return err_set(err, ERR_RUNTIME, "too many checkpoint fields (%d, at %s)", *n, name);
    if (strlen(name) >= sizeof list[0].name)
        return err_set(err, ERR_RUNTIME, "checkpoint field name '%s' is too long", name);
    ckpt_setting_t *s = &list[*n];
    if (!(s->value = str_vprintf(fmt, ap)))
        return err_set(err, ERR_RUNTIME, "out of memory");
    memcpy(s->name, name, strlen(name) + 1);
    (*n)++;
    return ERR_OK;
}

int ckpt_setting(ckpt_config_t *c, const char *name, err_t *err, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int rc = add_field(c->settings, &c->n_settings, CKPT_MAX_SETTINGS, name, err, fmt, ap);
    va_end(ap);
    return rc;
}

int ckpt_arch(ckpt_config_t *c, const char *name, err_t *err, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int rc = add_field(c->arch, &c->n_arch, CKPT_MAX_ARCH, name, err, fmt, ap);
    va_end(ap);
    return rc;
}

void ckpt_config_free(ckpt_config_t *c)
{
    for (int i = 0; i < c->n_settings; i++)
        free(c->settings[i].value);
    for (int i = 0; i < c->n_arch; i++)
        free(c->arch[i].value);
    c->n_settings = c->n_arch = 0;
}

static int list_steps(const char *root, long **steps, int *n, err_t *err);
static int remove_folder(const char *dir);

/* Whether step folder `step` under root has its manifest: 1 or 0; -1 on
 * OOM. */
static int is_committed(const char *root, long step)
{
    char *man = str_printf("%s/step-%08ld/%s", root, step, MANIFEST);
    if (!man)
        return -1;
    int yes = access(man, F_OK) == 0;
    free(man);
    return yes;
}

/* Rank 0's look at root for a fresh run: the newest committed step in
 * *newest (0 when none); with overwrite, every step folder removed. */
static int fresh_look(const char *root, bool overwrite, int64_t *newest, err_t *err)
{
    long *steps = NULL;
    int n = 0;
    int rc = list_steps(root, &steps, &n, err);
    for (int i = 0; !rc && i < n && !*newest; i++) {
        int yes = is_committed(root, steps[i]);
        if (yes < 0)
            rc = err_set(err, ERR_RUNTIME, "out of memory");
        else if (yes)
            *newest = steps[i];
    }
    for (int i = 0; !rc && overwrite && *newest > 0 && i < n; i++) {
        char *dir = step_dir(root, steps[i]);
        if (!dir)
            rc = err_set(err, ERR_RUNTIME, "out of memory");
        else
            remove_folder(dir);
        free(dir);
    }
    free(steps);
    return rc;
}

int ckpt_check_fresh(const ckpt_config_t *c, const dist_group_t *world, bool overwrite,
                     err_t *err)
{
    /* rank 0 decides; the others learn the outcome */
    int64_t verdict[2] = {ERR_OK, 0}; /* status, newest step found */
    if (world->rank == 0) {
        verdict[0] = fresh_look(c->dir, overwrite, &verdict[1], err);
        if (!verdict[0] && verdict[1] > 0 && !overwrite)
            verdict[0] = ERR_INPUT;
    }
    int rc = dist_bcast(world, verdict, sizeof verdict, 0, err);
    if (rc)
        return rc;
    if (verdict[0] == ERR_INPUT)
        return err_setf(err, ERR_INPUT, NULL, "--checkpoint-dir",
                        "%s already holds checkpoints (the newest at step %ld): add --resume to "
                        "continue that run, or --overwrite to remove them and start over",
                        c->dir, (long)verdict[1]);
    if (verdict[0] && world->rank != 0)
        return err_set(err, (int)verdict[0], "%s: rank 0 could not list the checkpoints", c->dir);
    return (int)verdict[0];
}

static void header_of(const ckpt_writer_t *w, long step, shard_header_t *h)
{
    h->rank = (uint32_t)w->world->rank;
    h->world = (uint32_t)w->world->size;
    h->tp = (uint32_t)w->c.tp;
    h->zero1 = w->c.zero1;
    h->step = (uint64_t)step;
    h->n_params = w->c.n_params;
    h->n_opt = w->c.n_opt;
}

/* The manifest of a committed checkpoint. */
static cJSON *manifest_json(const ckpt_writer_t *w, long step, const shard_report_t *reports)
{
    cJSON *o = cJSON_CreateObject(), *files = NULL, *run = NULL, *arch = NULL;
    bool ok = o && cJSON_AddStringToObject(o, "format", CKPT_FORMAT) &&
              json_add_number(o, "step", (double)step) &&
              cJSON_AddStringToObject(o, "model", w->c.model) &&
              json_add_number(o, "params_per_rank", (double)w->c.n_params) &&
              json_add_number(o, "optimizer_per_rank", (double)w->c.n_opt) &&
              json_add_number(o, "tp", w->c.tp) && json_add_number(o, "dp", w->c.dp) &&
              json_add_number(o, "world", w->world->size) &&
              cJSON_AddBoolToObject(o, "zero1", w->c.zero1) &&
              (arch = cJSON_AddObjectToObject(o, "architecture")) &&
              (run = cJSON_AddObjectToObject(o, "run")) &&
              (files = cJSON_AddArrayToObject(o, "shards"));
    for (int i = 0; ok && i < w->c.n_arch; i++)
        ok = cJSON_AddStringToObject(arch, w->c.arch[i].name, w->c.arch[i].value) != NULL;
    for (int i = 0; ok && i < w->c.n_settings; i++)
        ok = cJSON_AddStringToObject(run, w->c.settings[i].name, w->c.settings[i].value) != NULL;
    for (int r = 0; ok && r < w->world->size; r++) {
        char name[32], crc[16];
        shard_name(r, name, sizeof name);
        snprintf(crc, sizeof crc, "%08x", reports[r].crc);
        cJSON *e = cJSON_CreateObject();
        ok = e && cJSON_AddItemToArray(files, e) && cJSON_AddStringToObject(e, "file", name) &&
             json_add_number(e, "bytes", (double)reports[r].bytes) &&
             cJSON_AddStringToObject(e, "crc32", crc);
    }
    if (!ok) {
        cJSON_Delete(o);
        return NULL;
    }
    return o;
}

/* Remove the files of dir, then dir (a step folder holds no folders). */
static int remove_folder(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        return -1;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        char *path = str_printf("%s/%s", dir, e->d_name);
        if (!path)
            break; /* out of memory: the rmdir below fails and says so */
        unlink(path);
        free(path);
    }
    closedir(d);
    return rmdir(dir);
}

/* Step folders under root, newest first (steps into *steps, heap). */
static int list_steps(const char *root, long **steps, int *n, err_t *err)
{
    *steps = NULL;
    *n = 0;
    DIR *d = opendir(root);
    if (!d)
        return ERR_OK; /* nothing saved yet */
    int cap = 0;
    struct dirent *e;
    int rc = ERR_OK;
    while ((e = readdir(d)) != NULL) {
        long s;
        char extra;
        if (sscanf(e->d_name, "step-%ld%c", &s, &extra) != 1 || s < 0)
            continue;
        if (*n == cap) {
            cap = cap ? 2 * cap : 16;
            long *v = realloc(*steps, (size_t)cap * sizeof *v);
            if (!v) {
                rc = err_set(err, ERR_RUNTIME, "out of memory");
                break;
            }
            *steps = v;
        }
        (*steps)[(*n)++] = s;
    }
    closedir(d);
    /* newest first */
    for (int i = 1; i < *n; i++)
        for (int j = i; j > 0 && (*steps)[j] > (*steps)[j - 1]; j--) {
            long t = (*steps)[j];
            (*steps)[j] = (*steps)[j - 1];
            (*steps)[j - 1] = t;
        }
    return rc;
}

/* Rank 0, after committing `step`: keep the newest `keep` committed
 * checkpoints; remove older ones and uncommitted leftovers older than step. */
static void rotate(const ckpt_writer_t *w, long step)
{
    long *steps;
    int n;
    err_t ignored;
    if (list_steps(w->root, &steps, &n, &ignored))
        return;
    int kept = 0;
    for (int i = 0; i < n; i++) {
        if (steps[i] > step)
            continue; /* a later save in flight: not ours to judge */
        int committed = is_committed(w->root, steps[i]);
        char *dir = committed < 0 ? NULL : step_dir(w->root, steps[i]);
        if (!dir)
            break; /* out of memory: keep the rest for the next commit */
        if (committed && kept < w->c.keep)
            kept++;
        else if (steps[i] < step || committed)
            remove_folder(dir);
        free(dir);
    }
    free(steps);
}

/* Gather every rank's report and, on rank 0, write the manifest. */
static int commit(ckpt_writer_t *w, long step, const char *dir, const shard_report_t *mine,
                  err_t *err)
{
    int n = w->world->size;
    shard_report_t *all = calloc((size_t)n, sizeof *all);
    if (!all)
        return err_set(err, ERR_RUNTIME, "out of memory");
    int rc = dist_allgather(w->world, mine, all, sizeof *mine, err);
    for (int r = 0; !rc && r < n; r++)
        if (!all[r].ok)
            rc = err_set(err, ERR_RUNTIME,
                         "checkpoint at step %ld not committed: rank %d could not write its shard",
                         step, r);
    if (!rc && w->world->rank == 0) {
        cJSON *m = manifest_json(w, step, all);
        char *path = str_printf("%s/%s", dir, MANIFEST);
        rc = m && path ? json_write_file(path, m, err) : err_set(err, ERR_RUNTIME, "out of memory");
        cJSON_Delete(m);
        free(path);
        if (!rc)
            rc = fsync_dir(dir, err);
        if (!rc)
            rotate(w, step);
    }
    free(all);
    return rc;
}

static void *write_thread(void *arg)
{
    ckpt_writer_t *w = arg;
    shard_header_t h;
    header_of(w, w->pending_step, &h);
    char name[32];
    shard_name(w->world->rank, name, sizeof name);
    const float *p = w->snapshot, *m = p + w->c.n_params, *v = m + w->c.n_opt;
    int rc = write_shard(w->pending_dir, name, &h, p, m, v, &w->report.crc, &w->report.bytes,
                         &w->thread_err);
    w->report.ok = rc == ERR_OK;
    atomic_store(&w->done, 1);
    return NULL;
}

int ckpt_poll(ckpt_writer_t *w, bool wait, long *committed_step, err_t *err)
{
    if (committed_step)
        *committed_step = -1;
    /* every rank knows whether a save is pending: they started it together */
    if (!w->pending)
        return ERR_OK;
    if (wait && !w->joined) {
        pthread_join(w->thread, NULL);
        w->joined = true;
    }
    /* done everywhere? (a sum of "not yet" flags) */
    int64_t not_done = !atomic_load(&w->done);
    int rc = dist_allreduce_sum(w->world, &not_done, 1, DIST_I64, err);
    if (rc || not_done > 0)
        return rc;
    if (!w->joined) {
        pthread_join(w->thread, NULL); /* it has finished: returns at once */
        w->joined = true;
    }
    w->pending = false;
    rc = commit(w, w->pending_step, w->pending_dir, &w->report, err);
    if (rc && !w->report.ok)
        *err = w->thread_err; /* this rank's own cause */
    if (!rc && committed_step)
        *committed_step = w->pending_step;
    return rc;
}

/* An asynchronous save: snapshot s and start the writer thread on folder
 * dir (heap; the writer keeps it). */
static int save_async(ckpt_writer_t *w, const ckpt_state_t *s, char *dir, double t0,
                      double *blocking_s, err_t *err)
{
    size_t n = w->c.n_params + 2 * w->c.n_opt;
    if (!w->snapshot && !(w->snapshot = malloc(n * sizeof(float)))) {
        free(dir);
        return err_set(err, ERR_RUNTIME,
                       "out of memory for the asynchronous checkpoint snapshot (%.2f GiB)",
                       (double)n * sizeof(float) / (1u << 30));
    }
    memcpy(w->snapshot, s->params, w->c.n_params * sizeof(float));
    memcpy(w->snapshot + w->c.n_params, s->m, w->c.n_opt * sizeof(float));
    memcpy(w->snapshot + w->c.n_params + w->c.n_opt, s->v, w->c.n_opt * sizeof(float));
    free(w->pending_dir);
    w->pending_dir = dir;
    w->pending_step = s->step;
    atomic_store(&w->done, 0);
    w->joined = false;
    memset(&w->report, 0, sizeof w->report);
    memset(&w->thread_err, 0, sizeof w->thread_err);
    if (pthread_create(&w->thread, NULL, write_thread, w) != 0)
        return err_set(err, ERR_RUNTIME, "cannot start the checkpoint writer thread");
    w->pending = true;
    if (blocking_s)
        *blocking_s = clock_now_s() - t0;
    return ERR_OK;
}

/* A synchronous save of s into folder dir: write, then commit. */
static int save_now(ckpt_writer_t *w, const ckpt_state_t *s, const char *dir, err_t *err)
{
    shard_header_t h;
    header_of(w, s->step, &h);
    char name[32];
    shard_name(w->world->rank, name, sizeof name);
    shard_report_t mine = {0, 0, 0};
    err_t local;
    memset(&local, 0, sizeof local);
    int wrc = write_shard(dir, name, &h, s->params, s->m, s->v, &mine.crc, &mine.bytes, &local);
    mine.ok = wrc == ERR_OK;
    int rc = commit(w, s->step, dir, &mine, err);
    if (wrc && rc)
        *err = local; /* this rank's own cause, not "rank r could not" */
    return rc;
}

int ckpt_save(ckpt_writer_t *w, const ckpt_state_t *s, double *blocking_s, err_t *err)
{
    double t0 = clock_now_s();
    int rc = ckpt_poll(w, true, NULL, err);
    if (rc)
        return rc;
    char *dir = step_dir(w->root, s->step);
    if (!dir)
        return err_set(err, ERR_RUNTIME, "out of memory");
    if ((rc = fileio_mkdirs(dir, err))) {
        free(dir);
        return rc;
    }
    if (w->c.async)
        return save_async(w, s, dir, t0, blocking_s, err);
    rc = save_now(w, s, dir, err);
    free(dir);
    if (blocking_s)
        *blocking_s = clock_now_s() - t0;
    return rc;
}

int ckpt_writer_close(ckpt_writer_t *w, err_t *err)
{
    int rc = w ? ckpt_poll(w, true, NULL, err) : ERR_OK;
    ckpt_writer_destroy(w);
    return rc;
}

void ckpt_writer_destroy(ckpt_writer_t *w)
{
    if (!w)
        return;
    if (w->pending && !w->joined)
        pthread_join(w->thread, NULL);
    free(w->snapshot);
    free(w->pending_dir);
    free(w->root);
    free(w);
}

/* ------------------------------------------------------------ resume */

/* Does this checkpoint belong to this run? "" when it does, else what
 * differs. */
static void identity_mismatch(const ckpt_config_t *c, const dist_group_t *world, const cJSON *man,
                              char *buf, size_t cap)
{
    buf[0] = '\0';
    const cJSON *model = cJSON_GetObjectItemCaseSensitive(man, "model");
    double tp = number_or(man, "tp", -1), dp = number_or(man, "dp", -1);
    double np = number_or(man, "params_per_rank", -1);
    double nw = number_or(man, "world", -1);
    bool zero1 = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(man, "zero1"));
    if (!cJSON_IsString(model) || strcmp(model->valuestring, c->model) != 0)
        snprintf(buf, cap, "it is of model '%.64s', this run trains '%s'",
                 cJSON_IsString(model) ? model->valuestring : "?", c->model);
    else if (tp != c->tp || dp != c->dp || nw != world->size)
        snprintf(buf, cap, "it was written by TP %.0f x DP %.0f, this run is TP %d x DP %d", tp, dp,
                 c->tp, c->dp);
    else if (zero1 != c->zero1)
        snprintf(buf, cap, "it was written %s ZeRO-1, this run is %s", zero1 ? "with" : "without",
                 c->zero1 ? "with" : "without");
    else if (np != (double)c->n_params)
        snprintf(buf, cap, "it holds %.0f parameters per rank, this run has %zu", np, c->n_params);
}

/* Append "name A in the checkpoint, B in this run" (values shortened to 60
 * characters: a message) to *out, "; " between entries. -1 on OOM. */
static int add_change(char **out, const char *name, const char *theirs, const char *ours)
{
    return str_appendf(out, "%s%s %.60s in the checkpoint, %.60s in this run", *out ? "; " : "",
                       name, theirs ? theirs : "(none)", ours ? ours : "(none)");
}

/* The run's fields (n of them) against the manifest's object `key`: *out
 * (heap) lists each difference, NULL when they agree. A field the manifest
 * lacks counts as different; with both_ways, so does a field the manifest
 * has and the run does not. -1 on OOM. */
static int fields_changed(const ckpt_setting_t *fields, int n, const cJSON *man, const char *key,
                          bool both_ways, char **out)
{
    *out = NULL;
    const cJSON *obj = cJSON_GetObjectItemCaseSensitive(man, key);
    int rc = 0;
    for (int i = 0; !rc && i < n; i++) {
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, fields[i].name);
        if (!cJSON_IsString(v) || strcmp(v->valuestring, fields[i].value) != 0)
            rc = add_change(out, fields[i].name, cJSON_IsString(v) ? v->valuestring : NULL,
                            fields[i].value);
    }
    const cJSON *e, *extra = both_ways ? obj : NULL;
    cJSON_ArrayForEach(e, extra)
    {
        bool known = false;
        for (int i = 0; i < n && !known; i++)
            known = e->string && strcmp(e->string, fields[i].name) == 0;
        if (!rc && !known)
            rc = add_change(out, e->string ? e->string : "?",
                            cJSON_IsString(e) ? e->valuestring : "?", NULL);
    }
    if (rc) {
        free(*out);
        *out = NULL;
    }
    return rc;
}

/* The step a manifest records: a whole number from 0 to 2^53, else -1 (no
 * cast of an unchecked double). */
static long manifest_step(const cJSON *man)
{
    double v = number_or(man, "step", -1);
    if (!isfinite(v) || v < 0 || v > 9007199254740992.0 || v != floor(v))
        return -1;
    return (long)v;
}

/* Read this rank's shard file at path into s, checking it against the
 * manifest's crc and the run; "" on success, else why not. */
static void read_shard(const ckpt_config_t *c, const dist_group_t *world, const char *path,
                       const char *name, const char *crc_s, long step, ckpt_state_t *s,
                       char *why, size_t cap)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        snprintf(why, cap, "%s cannot be opened: %s", name, strerror(errno));
        return;
    }
    unsigned char head[SHARD_HEADER_BYTES];
    shard_header_t h;
    bool ok = fread(head, 1, sizeof head, f) == sizeof head && decode_header(head, &h);
    uint32_t crc = checksum_crc32(0, head, sizeof head);
    float *parts[3] = {s->params, s->m, s->v};
    size_t counts[3] = {c->n_params, c->n_opt, c->n_opt};
    /* read into the run's buffers; on a bad checksum they are overwritten
     * again by an older checkpoint or the caller starts fresh */
    for (int p = 0; p < 3 && ok; p++) {
        ok = fread(parts[p], sizeof(float), counts[p], f) == counts[p];
        crc = checksum_crc32(crc, parts[p], counts[p] * sizeof(float));
    }
    fclose(f);
    unsigned long want_crc = strtoul(crc_s, NULL, 16);
    if (!ok)
        snprintf(why, cap, "%s cannot be read or has a damaged header", name);
    else if (crc != (uint32_t)want_crc)
        snprintf(why, cap, "%s fails its checksum (crc32 %08x, manifest %08lx)", name, crc,
                 want_crc);
    else if (h.step != (uint64_t)step || h.rank != (uint32_t)world->rank ||
             h.n_params != c->n_params || h.n_opt != c->n_opt)
        snprintf(why, cap, "%s's header does not match the manifest", name);
}

/* This rank's shard of the checkpoint in dir: check its manifest entry and
 * size, then read it (read_shard). "" on success, else why not. */
static void load_shard(const ckpt_config_t *c, const dist_group_t *world, const char *dir,
                       const cJSON *man, long step, ckpt_state_t *s, char *why, size_t cap)
{
    why[0] = '\0';
    const cJSON *shards = cJSON_GetObjectItemCaseSensitive(man, "shards");
    const cJSON *e = cJSON_GetArrayItem(shards, world->rank);
    char name[32];
    shard_name(world->rank, name, sizeof name);
    const cJSON *file = cJSON_GetObjectItemCaseSensitive(e, "file");
    const cJSON *crc_s = cJSON_GetObjectItemCaseSensitive(e, "crc32");
    double bytes = number_or(e, "bytes", -1);
    if (!cJSON_IsString(file) || strcmp(file->valuestring, name) != 0 || !cJSON_IsString(crc_s)) {
        snprintf(why, cap, "the manifest has no entry for %s", name);
        return;
    }
    char *path = str_printf("%s/%s", dir, name);
    struct stat st;
    size_t want = SHARD_HEADER_BYTES + (c->n_params + 2 * c->n_opt) * sizeof(float);
    if (!path)
        snprintf(why, cap, "out of memory");
    else if (stat(path, &st) != 0)
        snprintf(why, cap, "%s is missing", name);
    else if ((double)st.st_size != bytes)
        snprintf(why, cap, "%s has %lld bytes, the manifest says %.0f (truncated?)", name,
                 (long long)st.st_size, bytes);
    else if ((size_t)st.st_size != want)
        snprintf(why, cap, "%s has %lld bytes, this run needs %zu", name, (long long)st.st_size,
                 want);
    else
        read_shard(c, world, path, name, crc_s->valuestring, step, s, why, cap);
    free(path);
}

/* The manifest m of checkpoint dir against the run: ERR_INPUT when it is
 * of another run, another architecture, an old format or (unless
 * allow_changes) other settings; *changed (heap, NULL when none) lists the
 * settings that differ. */
static int check_manifest(const ckpt_config_t *c, const dist_group_t *world, const char *dir,
                          const cJSON *m, char **changed, err_t *err)
{
    *changed = NULL;
    const cJSON *fmt = cJSON_GetObjectItemCaseSensitive(m, "format");
    bool v2 = cJSON_IsString(fmt) && strcmp(fmt->valuestring, CKPT_FORMAT_V2) == 0;
    char mismatch[200], *arch = NULL;
    identity_mismatch(c, world, m, mismatch, sizeof mismatch);
    if (mismatch[0])
        return err_setf(err, ERR_INPUT, dir, NULL,
                        "this checkpoint belongs to another run: %s; use another "
                        "--checkpoint-dir or the same settings",
                        mismatch);
    if (v2)
        return err_setf(err, ERR_INPUT, dir, NULL,
                        "written by an older scaleplan (%s), whose manifest does not record the "
                        "model's architecture: it cannot be checked against this run's model; "
                        "resume it with the release that wrote it, or start over (--overwrite)",
                        CKPT_FORMAT_V2);
    if (fields_changed(c->arch, c->n_arch, m, "architecture", true, &arch) ||
        fields_changed(c->settings, c->n_settings, m, "run", false, changed)) {
        free(arch);
        return err_set(err, ERR_RUNTIME, "out of memory");
    }
    int rc = ERR_OK;
    if (arch)
        rc = err_setf(err, ERR_INPUT, dir, NULL,
                      "this checkpoint is of another model architecture: %s; use another "
                      "--checkpoint-dir or the model it was written with",
                      arch);
    else if (*changed && !c->allow_changes)
        rc = err_setf(err, ERR_INPUT, dir, NULL,
                      "this checkpoint was written with other settings: %s; use the same "
                      "settings, another --checkpoint-dir, or --allow-changes",
                      *changed);
    free(arch);
    if (rc) {
        free(*changed);
        *changed = NULL;
    }
    return rc;
}

/* Try the checkpoint in dir: ERR_INPUT when it belongs to another run
 * (check_manifest); else why is "" when this rank's shard is loaded into s
 * (*step its step, info->changed the settings accepted), or why it is
 * unusable. */
static int try_checkpoint(const ckpt_config_t *c, const dist_group_t *world, const char *dir,
                          ckpt_state_t *s, ckpt_resume_info_t *info, long *step, char *why,
                          size_t cap, err_t *err)
{
    *step = -1;
    why[0] = '\0';
    char *man_path = str_printf("%s/%s", dir, MANIFEST);
    if (!man_path)
        return err_set(err, ERR_RUNTIME, "out of memory");
    cJSON *man = NULL;
    err_t perr;
    int rc = ERR_OK;
    if (access(man_path, F_OK) != 0) {
        snprintf(why, cap, "no manifest (the save did not finish)");
    } else if (json_parse_file(man_path, &man, &perr)) {
        /* the reason without the manifest's path, which the note names */
        size_t k = strlen(man_path);
        bool prefixed = strncmp(perr.msg, man_path, k) == 0 && strncmp(perr.msg + k, ": ", 2) == 0;
        snprintf(why, cap, "damaged manifest: %.*s", (int)cap - 20,
                 perr.msg + (prefixed ? k + 2 : 0));
    } else {
        const cJSON *fmt = cJSON_GetObjectItemCaseSensitive(man, "format");
        bool known = cJSON_IsString(fmt) && (strcmp(fmt->valuestring, CKPT_FORMAT) == 0 ||
                                             strcmp(fmt->valuestring, CKPT_FORMAT_V2) == 0);
        char *changed = NULL;
        *step = manifest_step(man);
        if (!known || *step < 0) {
            snprintf(why, cap, "not a %s manifest", CKPT_FORMAT);
        } else if (!(rc = check_manifest(c, world, dir, man, &changed, err))) {
            free(info->changed);
            info->changed = changed;
            load_shard(c, world, dir, man, *step, s, why, cap);
        }
    }
    cJSON_Delete(man);
    free(man_path);
    return rc;
}

void ckpt_resume_info_free(ckpt_resume_info_t *info)
{
    free(info->path);
    free(info->changed);
    for (int i = 0; i < info->n_notes; i++)
        free(info->notes[i]);
    memset(info, 0, sizeof *info);
    info->step = -1;
}

int ckpt_resume(const ckpt_config_t *c, const dist_group_t *world, const char *which,
                ckpt_state_t *s, ckpt_resume_info_t *info, err_t *err)
{
    memset(info, 0, sizeof *info);
    info->step = -1;
    bool automatic = strcmp(which, "auto") == 0;
    long *steps = NULL;
    int n = 0, rc = ERR_OK;
    if (automatic && (rc = list_steps(c->dir, &steps, &n, err)))
        return rc;
    int tries = automatic ? n : 1;
    for (int i = 0; i < tries && !rc; i++) {
        char why[320];
        long step = -1;
        char *dir = automatic ? step_dir(c->dir, steps[i]) : str_printf("%s", which);
        if (!dir) {
            rc = err_set(err, ERR_RUNTIME, "out of memory");
            break;
        }
        rc = try_checkpoint(c, world, dir, s, info, &step, why, sizeof why, err);
        /* usable only if every rank could load its shard */
        int64_t bad = why[0] != '\0';
        if (!rc)
            rc = dist_allreduce_sum(world, &bad, 1, DIST_I64, err);
        if (!rc && bad == 0) {
            info->step = s->step = step;
            info->path = dir;
            break;
        }
        if (!rc && !why[0])
            snprintf(why, sizeof why, "a shard of another rank failed its checks");
        if (!rc && !automatic)
            rc = err_setf(err, ERR_INPUT, dir, NULL, "cannot resume: %s", why);
        else if (!rc && info->n_notes < CKPT_MAX_NOTES &&
                 !(info->notes[info->n_notes++] = str_printf("skipped %s: %s", dir, why)))
            rc = err_set(err, ERR_RUNTIME, "out of memory");
        free(dir);
    }
    if (info->step < 0) { /* only the checkpoint resumed from counts */
        free(info->changed);
        info->changed = NULL;
    }
    free(steps);
    return rc;
}

/* ------------------------------------------------------------ one run per folder */

/* Run on rank 0 and give every rank its outcome: the record is
 * broadcast, so each rank reports the same line. */
static int rank0_outcome(const dist_group_t *world, err_t *mine, err_t *err)
{
    int rc = dist_bcast(world, mine, sizeof *mine, 0, err);
    if (rc)
        return rc;
    if (mine->code)
        *err = *mine;
    return mine->code;
}

int ckpt_lock(const ckpt_config_t *c, const dist_group_t *world, runlock_t **out, err_t *err)
{
    *out = NULL;
    err_t mine;
    err_clear(&mine);
    if (world->rank == 0 && !ckpt_check_path(c->dir, "--checkpoint-dir", &mine) &&
        !fileio_mkdirs(c->dir, &mine))
        runlock_acquire(c->dir, "--checkpoint-dir", out, &mine);
    int rc = rank0_outcome(world, &mine, err);
    if (rc) {
        runlock_release(*out);
        *out = NULL;
    }
    return rc;
}

void ckpt_unlock(runlock_t *lock) { runlock_release(lock); }

/* ------------------------------------------------------------ timelines */

/* A new folder root/retired-after-step-NNNNNNNN-YYYYMMDD-HHMMSS[-K] (heap
 * path in *out). */
static int make_retired(const char *root, long step, char **out, err_t *err)
{
    *out = NULL;
    char stamp[32] = "unknown-time";
    time_t now = time(NULL);
    struct tm tm;
    if (localtime_r(&now, &tm) && strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", &tm) == 0)
        snprintf(stamp, sizeof stamp, "unknown-time");
    for (int k = 1; k < 1000; k++) {
        char *dir = k == 1 ? str_printf("%s/retired-after-step-%08ld-%s", root, step, stamp)
                           : str_printf("%s/retired-after-step-%08ld-%s-%d", root, step, stamp, k);
        if (!dir)
            return err_set(err, ERR_RUNTIME, "out of memory");
        if (mkdir(dir, 0755) == 0) {
            *out = dir;
            return ERR_OK;
        }
        int e = errno;
        if (e != EEXIST) {
            err_setf(err, ERR_RUNTIME, dir, NULL, "cannot create the folder for retired "
                     "checkpoints: %s", strerror(e));
            free(dir);
            return ERR_RUNTIME;
        }
        free(dir);
    }
    return err_setf(err, ERR_RUNTIME, root, NULL, "too many retired-after-step-%08ld folders",
                    step);
}

/* Whether step folder dir is to be retired after a resume from `step`
 * (from_st: the folder resumed from, when it could be looked at). */
static bool abandoned(const char *dir, long s, long step, const struct stat *from_st)
{
    if (s != step)
        return s > step;
    struct stat st; /* the same step: retired unless it is the folder resumed from */
    return from_st && stat(dir, &st) == 0 &&
           !(st.st_dev == from_st->st_dev && st.st_ino == from_st->st_ino);
}

/* Move step folder `s` of root into retired (created on first use). */
static int move_step(const char *root, long step, long s, char **retired, err_t *err)
{
    int rc = *retired ? ERR_OK : make_retired(root, step, retired, err);
    if (rc)
        return rc;
    char *src = step_dir(root, s), *dst = step_dir(*retired, s);
    if (!src || !dst)
        rc = err_set(err, ERR_RUNTIME, "out of memory");
    else if (rename(src, dst) != 0)
        rc = err_setf(err, ERR_RUNTIME, src, NULL, "cannot move into %s: %s", *retired,
                      strerror(errno));
    free(src);
    free(dst);
    return rc;
}

/* Rank 0's part of ckpt_retire_newer. */
static int retire(const char *root, long step, const char *from, char **note, err_t *err)
{
    long *steps = NULL;
    int n = 0, moved = 0, rc = list_steps(root, &steps, &n, err);
    struct stat from_st;
    bool have_from = stat(from, &from_st) == 0;
    char *retired = NULL;
    long lo = -1, hi = -1;
    for (int i = n - 1; !rc && i >= 0; i--) { /* oldest first */
        char *dir = step_dir(root, steps[i]);
        if (!dir)
            rc = err_set(err, ERR_RUNTIME, "out of memory");
        else if (abandoned(dir, steps[i], step, have_from ? &from_st : NULL) &&
                 !(rc = move_step(root, step, steps[i], &retired, err))) {
            lo = moved++ ? lo : steps[i];
            hi = steps[i];
        }
        free(dir);
    }
    if (moved && !rc)
        rc = fsync_dir(root, err);
    if (moved && !rc &&
        !(*note = str_printf("resumed from step %ld: moved %d newer checkpoint folder%s of the "
                             "abandoned timeline (steps %ld to %ld) into %s, so that --resume "
                             "continues this one; nothing was deleted",
                             step, moved, moved > 1 ? "s" : "", lo, hi, retired)))
        rc = err_set(err, ERR_RUNTIME, "out of memory");
    free(retired);
    free(steps);
    return rc;
}

int ckpt_retire_newer(const ckpt_config_t *c, const dist_group_t *world, long step,
                      const char *from, char **note, err_t *err)
{
    *note = NULL;
    err_t mine;
    err_clear(&mine);
    if (world->rank == 0)
        retire(c->dir, step, from, note, &mine);
    int rc = rank0_outcome(world, &mine, err);
    if (rc) {
        free(*note);
        *note = NULL;
    }
    return rc;
}
