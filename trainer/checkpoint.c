#include "trainer/checkpoint.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "common/checksum.h"
#include "common/clock.h"
#include "common/fileio.h"
#include "common/json.h"

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

/* Write header + params + m + v to path (temp, fsync, rename); the CRC and
 * size of what was written come back. */
static int write_shard(const char *dir, const char *name, const shard_header_t *h,
                       const float *params, const float *m, const float *v, uint32_t *crc_out,
                       uint64_t *bytes_out, err_t *err)
{
    char path[640], tmp[660];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
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
    return fsync_dir(dir, err);
}

/* ------------------------------------------------------------ the writer */

/* What each rank reports about its shard, gathered on every rank. */
typedef struct {
    uint64_t bytes;
    uint32_t crc;
    int32_t ok;
} shard_report_t;

struct ckpt_writer {
    ckpt_config_t c;
    char root[512];
    const dist_group_t *world;
    /* the save in flight (asynchronous) */
    bool pending;
    long pending_step;
    char pending_dir[600];
    float *snapshot; /* params, m, v */
    pthread_t thread;
    atomic_int done;
    bool joined;
    shard_report_t report;
    err_t thread_err;
};

static void step_dir(const ckpt_writer_t *w, long step, char *buf, size_t cap)
{
    snprintf(buf, cap, "%s/step-%08ld", w->root, step);
}

static void shard_name(int rank, char *buf, size_t cap) { snprintf(buf, cap, "rank-%05d.bin", rank); }

int ckpt_writer_create(const ckpt_config_t *c, const dist_group_t *world, ckpt_writer_t **out,
                       err_t *err)
{
    *out = NULL;
    if (c->keep < 1)
        return err_setf(err, ERR_INPUT, NULL, "--checkpoint-keep", "must be at least 1 (got %d)",
                        c->keep);
    ckpt_writer_t *w = calloc(1, sizeof *w);
    if (!w)
        return err_set(err, ERR_RUNTIME, "out of memory");
    w->c = *c;
    snprintf(w->root, sizeof w->root, "%s", c->dir);
    w->c.dir = w->root;
    w->world = world;
    int rc = fileio_mkdirs(w->root, err);
    if (rc) {
        free(w);
        return rc;
    }
    *out = w;
    return ERR_OK;
}

int ckpt_setting(ckpt_config_t *c, const char *name, err_t *err, const char *fmt, ...)
{
    if (c->n_settings >= CKPT_MAX_SETTINGS)
        return err_set(err, ERR_RUNTIME, "too many checkpoint settings (%d)", c->n_settings);
    ckpt_setting_t *s = &c->settings[c->n_settings++];
    snprintf(s->name, sizeof s->name, "%s", name);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(s->value, sizeof s->value, fmt, ap);
    va_end(ap);
    return ERR_OK;
}

static int list_steps(const char *root, long **steps, int *n, err_t *err);
static int remove_folder(const char *dir);

int ckpt_check_fresh(const ckpt_config_t *c, const dist_group_t *world, bool overwrite,
                     err_t *err)
{
    /* rank 0 decides; the others learn the outcome */
    int64_t verdict[2] = {ERR_OK, 0}; /* status, newest step found */
    if (world->rank == 0) {
        long *steps = NULL;
        int n = 0;
        verdict[0] = list_steps(c->dir, &steps, &n, err);
        for (int i = 0; !verdict[0] && i < n && !verdict[1]; i++) {
            char man[640];
            snprintf(man, sizeof man, "%s/step-%08ld/%s", c->dir, steps[i], MANIFEST);
            if (access(man, F_OK) == 0)
                verdict[1] = steps[i]; /* the newest committed one */
        }
        if (!verdict[0] && verdict[1] > 0) {
            if (overwrite) {
                for (int i = 0; i < n; i++) {
                    char dir[600];
                    snprintf(dir, sizeof dir, "%s/step-%08ld", c->dir, steps[i]);
                    remove_folder(dir);
                }
            } else {
                verdict[0] = ERR_INPUT;
            }
        }
        free(steps);
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
    cJSON *o = cJSON_CreateObject(), *files = NULL, *run = NULL;
    bool ok = o && cJSON_AddStringToObject(o, "format", CKPT_FORMAT) &&
              json_add_number(o, "step", (double)step) &&
              cJSON_AddStringToObject(o, "model", w->c.model) &&
              json_add_number(o, "params_per_rank", (double)w->c.n_params) &&
              json_add_number(o, "optimizer_per_rank", (double)w->c.n_opt) &&
              json_add_number(o, "tp", w->c.tp) && json_add_number(o, "dp", w->c.dp) &&
              json_add_number(o, "world", w->world->size) &&
              cJSON_AddBoolToObject(o, "zero1", w->c.zero1) &&
              (run = cJSON_AddObjectToObject(o, "run")) &&
              (files = cJSON_AddArrayToObject(o, "shards"));
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

static int remove_folder(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        return -1;
    struct dirent *e;
    char path[900];
    while ((e = readdir(d)) != NULL) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        unlink(path);
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
        char dir[600], man[640];
        step_dir(w, steps[i], dir, sizeof dir);
        snprintf(man, sizeof man, "%s/%s", dir, MANIFEST);
        bool committed = access(man, F_OK) == 0;
        if (steps[i] > step)
            continue; /* a later save in flight: not ours to judge */
        if (committed && kept < w->c.keep) {
            kept++;
            continue;
        }
        if (steps[i] < step || committed)
            remove_folder(dir);
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
        char path[700];
        snprintf(path, sizeof path, "%s/%s", dir, MANIFEST);
        rc = m ? json_write_file(path, m, err) : err_set(err, ERR_RUNTIME, "out of memory");
        cJSON_Delete(m);
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

int ckpt_save(ckpt_writer_t *w, const ckpt_state_t *s, double *blocking_s, err_t *err)
{
    double t0 = clock_now_s();
    int rc = ckpt_poll(w, true, NULL, err);
    if (rc)
        return rc;
    char dir[600];
    step_dir(w, s->step, dir, sizeof dir);
    if ((rc = fileio_mkdirs(dir, err)))
        return rc;
    if (w->c.async) {
        size_t n = w->c.n_params + 2 * w->c.n_opt;
        if (!w->snapshot && !(w->snapshot = malloc(n * sizeof(float))))
            return err_set(err, ERR_RUNTIME,
                           "out of memory for the asynchronous checkpoint snapshot (%.2f GiB)",
                           (double)n * sizeof(float) / (1u << 30));
        memcpy(w->snapshot, s->params, w->c.n_params * sizeof(float));
        memcpy(w->snapshot + w->c.n_params, s->m, w->c.n_opt * sizeof(float));
        memcpy(w->snapshot + w->c.n_params + w->c.n_opt, s->v, w->c.n_opt * sizeof(float));
        snprintf(w->pending_dir, sizeof w->pending_dir, "%s", dir);
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
    shard_header_t h;
    header_of(w, s->step, &h);
    char name[32];
    shard_name(w->world->rank, name, sizeof name);
    shard_report_t mine = {0, 0, 0};
    err_t local;
    memset(&local, 0, sizeof local);
    int wrc = write_shard(dir, name, &h, s->params, s->m, s->v, &mine.crc, &mine.bytes, &local);
    mine.ok = wrc == ERR_OK;
    rc = commit(w, s->step, dir, &mine, err);
    if (wrc && rc)
        *err = local; /* this rank's own cause, not "rank r could not" */
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
        snprintf(buf, cap, "it is of model '%s', this run trains '%s'",
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

/* The run's settings against the manifest's: "" when they agree, else each
 * difference ("seq_len 32, this run 16"; a setting the manifest lacks
 * counts as different). */
static void settings_changed(const ckpt_config_t *c, const cJSON *man, char *buf, size_t cap)
{
    buf[0] = '\0';
    const cJSON *run = cJSON_GetObjectItemCaseSensitive(man, "run");
    size_t n = 0;
    for (int i = 0; i < c->n_settings && n < cap; i++) {
        const ckpt_setting_t *s = &c->settings[i];
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(run, s->name);
        if (cJSON_IsString(v) && strcmp(v->valuestring, s->value) == 0)
            continue;
        int k = snprintf(buf + n, cap - n, "%s%s %.60s in the checkpoint, %.60s in this run",
                         n ? "; " : "", s->name, cJSON_IsString(v) ? v->valuestring : "(none)",
                         s->value);
        if (k < 0)
            break;
        n += (size_t)k;
    }
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

/* This rank's shard of the checkpoint in dir: read, check against the
 * manifest and the run, load into s. "" on success, else why not. */
static void load_shard(const ckpt_config_t *c, const dist_group_t *world, const char *dir,
                       const cJSON *man, long step, ckpt_state_t *s, char *why, size_t cap)
{
    why[0] = '\0';
    const cJSON *shards = cJSON_GetObjectItemCaseSensitive(man, "shards");
    const cJSON *e = cJSON_GetArrayItem(shards, world->rank);
    char name[32], path[700];
    shard_name(world->rank, name, sizeof name);
    snprintf(path, sizeof path, "%s/%s", dir, name);
    const cJSON *file = cJSON_GetObjectItemCaseSensitive(e, "file");
    const cJSON *crc_s = cJSON_GetObjectItemCaseSensitive(e, "crc32");
    double bytes = number_or(e, "bytes", -1);
    if (!cJSON_IsString(file) || strcmp(file->valuestring, name) != 0 || !cJSON_IsString(crc_s)) {
        snprintf(why, cap, "the manifest has no entry for %s", name);
        return;
    }
    struct stat st;
    if (stat(path, &st) != 0) {
        snprintf(why, cap, "%s is missing", name);
        return;
    }
    if ((double)st.st_size != bytes) {
        snprintf(why, cap, "%s has %lld bytes, the manifest says %.0f (truncated?)", name,
                 (long long)st.st_size, bytes);
        return;
    }
    size_t want = SHARD_HEADER_BYTES + (c->n_params + 2 * c->n_opt) * sizeof(float);
    if ((size_t)st.st_size != want) {
        snprintf(why, cap, "%s has %lld bytes, this run needs %zu", name, (long long)st.st_size,
                 want);
        return;
    }
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
    unsigned long want_crc = strtoul(crc_s->valuestring, NULL, 16);
    if (!ok)
        snprintf(why, cap, "%s cannot be read or has a damaged header", name);
    else if (crc != (uint32_t)want_crc)
        snprintf(why, cap, "%s fails its checksum (crc32 %08x, manifest %08lx)", name, crc,
                 want_crc);
    else if (h.step != (uint64_t)step || h.rank != (uint32_t)world->rank ||
             h.n_params != c->n_params || h.n_opt != c->n_opt)
        snprintf(why, cap, "%s's header does not match the manifest", name);
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
        char dir[600], man_path[700], why[320] = "";
        if (automatic)
            snprintf(dir, sizeof dir, "%s/step-%08ld", c->dir, steps[i]);
        else
            snprintf(dir, sizeof dir, "%s", which);
        snprintf(man_path, sizeof man_path, "%s/%s", dir, MANIFEST);
        cJSON *man = NULL;
        err_t perr;
        long step = -1;
        if (access(man_path, F_OK) != 0) {
            snprintf(why, sizeof why, "no manifest (the save did not finish)");
        } else if (json_parse_file(man_path, &man, &perr)) {
            snprintf(why, sizeof why, "damaged manifest: %s", perr.msg);
        } else {
            const cJSON *fmt = cJSON_GetObjectItemCaseSensitive(man, "format");
            step = manifest_step(man);
            char mismatch[200], changed[320];
            identity_mismatch(c, world, man, mismatch, sizeof mismatch);
            settings_changed(c, man, changed, sizeof changed);
            if (!cJSON_IsString(fmt) || strcmp(fmt->valuestring, CKPT_FORMAT) != 0 || step < 0)
                snprintf(why, sizeof why, "not a %s manifest", CKPT_FORMAT);
            else if (mismatch[0])
                rc = err_setf(err, ERR_INPUT, dir, NULL,
                              "this checkpoint belongs to another run: %s; use another "
                              "--checkpoint-dir or the same settings",
                              mismatch);
            else if (changed[0] && !c->allow_changes)
                rc = err_setf(err, ERR_INPUT, dir, NULL,
                              "this checkpoint was written with other settings: %s; use the same "
                              "settings, another --checkpoint-dir, or --allow-changes",
                              changed);
            else {
                snprintf(info->changed, sizeof info->changed, "%s", changed);
                load_shard(c, world, dir, man, step, s, why, sizeof why);
            }
        }
        cJSON_Delete(man);
        if (rc)
            break;
        /* usable only if every rank could load its shard */
        int64_t bad = why[0] != '\0';
        if ((rc = dist_allreduce_sum(world, &bad, 1, DIST_I64, err)))
            break;
        if (bad == 0) {
            info->step = step;
            snprintf(info->path, sizeof info->path, "%s", dir);
            s->step = step;
            break;
        }
        if (!why[0])
            snprintf(why, sizeof why, "a shard of another rank failed its checks");
        if (!automatic) {
            rc = err_setf(err, ERR_INPUT, dir, NULL, "cannot resume: %s", why);
            break;
        }
        if (info->n_notes < CKPT_MAX_NOTES)
            snprintf(info->notes[info->n_notes++], sizeof info->notes[0], "skipped %s: %s", dir,
                     why);
    }
    if (info->step < 0)
        info->changed[0] = '\0'; /* only the checkpoint resumed from counts */
    free(steps);
    return rc;
}
