/* checkpoint: save and resume the trainer's state so that a killed job
 * loses at most the steps since the last save and resumes bit-exact.
 *
 * On disk, under the checkpoint directory, one folder per save:
 *   step-00000100/rank-00000.bin ... one shard per rank (its parameters and
 *                                    optimizer state), and
 *   step-00000100/manifest.json      written last, by rank 0, once every
 *                                    shard is on disk: step, run identity
 *                                    (model, parameters, TP x DP, ZeRO-1),
 *                                    the model's architecture, the run's
 *                                    settings, and each shard's size and
 *                                    CRC-32;
 *   train.lock                       held by the run writing here (ckpt_lock);
 *   retired-after-step-N-TIME/       step folders of an abandoned timeline
 *                                    (ckpt_retire_newer), kept, never read.
 * Every file is written to a temporary name, fsync'ed and renamed, and the
 * folder is fsync'ed, so a crash leaves either a complete checkpoint or one
 * without a manifest, which is ignored. After each commit the oldest
 * checkpoints beyond `keep` are removed, with any uncommitted leftovers.
 *
 * An asynchronous save copies the state into a host snapshot (the only
 * blocking part) and writes it on a background thread; the manifest is
 * committed at the first step boundary where every rank's write is done
 * (ckpt_poll, a collective).
 *
 * Resuming ("auto") walks the checkpoints from the newest, and takes the
 * first whose manifest parses, matches this run and whose shards all pass
 * their size and CRC checks on every rank; a damaged one is reported and
 * skipped. A checkpoint from a different run is an error naming what
 * differs, not something to skip silently: its model, TP x DP and ZeRO-1
 * (its shards would not fit), its architecture (every field of the model
 * recorded with ckpt_arch: the same name and parameter count with other
 * heads is another model, whose weights would load without complaint), and
 * the run's settings the manifest records (seed, data, batch shape,
 * sequence length, steps, learning-rate schedule; the trainer chooses
 * them), which only allow_changes accepts, noting each change.
 *
 * Format: manifests are CKPT_FORMAT. Those of CKPT_FORMAT_V2 (before the
 * architecture was recorded) are refused with a message saying so: their
 * model cannot be checked, and skipping them would start the run over.
 *
 * Timelines: resuming from a checkpoint older than the newest (a rollback
 * with --resume-from, or past damaged ones) starts a new timeline. Before
 * it writes, ckpt_retire_newer moves the newer step folders of the old
 * timeline aside into a retired-* folder, so that a later "auto" resume
 * continues the new timeline, not the abandoned one; nothing is deleted.
 *
 * One run at a time: ckpt_lock holds an exclusive lock on the folder for
 * the run's life (trainer/runlock.h: flock, released by the kernel when
 * the holder dies, so a stale lock file blocks nothing).
 *
 * Paths have no fixed limit here; a folder so long that the files under it
 * would pass the system's PATH_MAX is refused up front (ckpt_check_path).
 *
 * A fresh run (no resume) into a folder that already holds checkpoints is
 * refused (ckpt_check_fresh): they would mix with the new run's; overwrite
 * removes them first (step folders only: retired-* folders stay).
 */
#ifndef SCALEPLAN_TRAINER_CHECKPOINT_H
#define SCALEPLAN_TRAINER_CHECKPOINT_H

#include <stdbool.h>
#include <stddef.h>

#include "common/dist.h"
#include "common/error.h"
#include "trainer/runlock.h"

#define CKPT_FORMAT "scaleplan-checkpoint/3"
#define CKPT_FORMAT_V2 "scaleplan-checkpoint/2" /* no architecture: refused */
#define CKPT_MAX_NOTES 8
#define CKPT_MAX_SETTINGS 16
#define CKPT_MAX_ARCH 40
#define CKPT_NAME_MAX 24

/* One setting or architecture field recorded in the manifest, as text
 * ("seq_len", "128"): compared as text on resume. */
typedef struct {
    char name[CKPT_NAME_MAX]; /* a name from the code, checked to fit */
    char *value;              /* heap, owned by the ckpt_config_t */
} ckpt_setting_t;

typedef struct {
    const char *dir;     /* checkpoint root (created if needed) */
    int keep;            /* checkpoints kept (>= 1) */
    bool async;          /* write on a background thread */
    /* the run's identity, recorded and checked on resume */
    char model[64];
    size_t n_params;     /* parameters per rank */
    size_t n_opt;        /* optimizer-state elements per rank (each of m, v) */
    int tp, dp;
    bool zero1;
    /* the run's settings (recorded; a resume with others is refused unless
     * allow_changes) */
    int n_settings;
    ckpt_setting_t settings[CKPT_MAX_SETTINGS];
    bool allow_changes;
    /* the model's architecture (recorded; a resume with any other value is
     * refused, whatever allow_changes says) */
    int n_arch;
    ckpt_setting_t arch[CKPT_MAX_ARCH];
} ckpt_config_t;

/* Add a setting (name, printf value) to c; ERR_RUNTIME when full, on a
 * name of CKPT_NAME_MAX bytes or more, or OOM. */
int ckpt_setting(ckpt_config_t *c, const char *name, err_t *err, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* Add an architecture field (name, printf value) to c; errors as above. */
int ckpt_arch(ckpt_config_t *c, const char *name, err_t *err, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* Free the values ckpt_setting and ckpt_arch added (copies of c made with
 * `=` share them: free one). c is left with none. */
void ckpt_config_free(ckpt_config_t *c);

/* ERR_INPUT naming flag when path is too long for the files a checkpoint
 * puts under it (more than PATH_MAX - CKPT_PATH_ROOM bytes). */
#define CKPT_PATH_ROOM 160
int ckpt_check_path(const char *path, const char *flag, err_t *err);

/* Lock c->dir (created if needed) for this run (collective: rank 0 holds
 * the lock; every rank gets its outcome). ERR_INPUT naming --checkpoint-dir
 * and the holder (pid, host, start time) when another run holds it.
 * Release with ckpt_unlock (NULL is fine) once the writer is closed. */
int ckpt_lock(const ckpt_config_t *c, const dist_group_t *world, runlock_t **out, err_t *err);
void ckpt_unlock(runlock_t *lock);

/* A fresh run's check of c->dir (collective; rank 0 looks): ERR_INPUT when it
 * holds a committed checkpoint, unless overwrite, which removes every step
 * folder there first. */
int ckpt_check_fresh(const ckpt_config_t *c, const dist_group_t *world, bool overwrite,
                     err_t *err);

/* What a checkpoint holds for one rank. */
typedef struct {
    float *params; /* n_params */
    float *m, *v;  /* n_opt each */
    long step;     /* optimizer steps completed */
} ckpt_state_t;

typedef struct ckpt_writer ckpt_writer_t;

/* A writer for this run; world is the job's group (this rank saves its
 * shard; rank 0 commits). It copies c->dir but not the setting and
 * architecture values, which must outlive it. ERR_INPUT for keep < 1 or a
 * folder too long (ckpt_check_path); ERR_RUNTIME when the folder cannot be
 * created, or on OOM; *out is NULL then. */
int ckpt_writer_create(const ckpt_config_t *c, const dist_group_t *world, ckpt_writer_t **out,
                       err_t *err);

/* Save s (collective: every rank calls it at the same step). Synchronous:
 * returns when the checkpoint is committed. Asynchronous: returns after
 * the snapshot, waiting first for any earlier save still in flight.
 * *blocking_s (may be NULL) is the time the caller was held. */
int ckpt_save(ckpt_writer_t *w, const ckpt_state_t *s, double *blocking_s, err_t *err);

/* Commit an asynchronous save whose writes have finished on every rank
 * (collective; cheap while nothing is pending). wait: block until done.
 * *committed_step (may be NULL) is set to the step committed, or -1. */
int ckpt_poll(ckpt_writer_t *w, bool wait, long *committed_step, err_t *err);

/* Wait for and commit what is pending, then free. Collective. */
int ckpt_writer_close(ckpt_writer_t *w, err_t *err);
/* Free without committing (after an error). */
void ckpt_writer_destroy(ckpt_writer_t *w);

typedef struct {
    long step;                 /* resumed from; -1 when nothing was usable */
    char *path;                /* heap: the checkpoint folder used, or NULL */
    int n_notes;
    char *notes[CKPT_MAX_NOTES]; /* heap: damaged checkpoints skipped, and why */
    char *changed;             /* heap: settings that differ, accepted by
                                  allow_changes; NULL when none */
} ckpt_resume_info_t;

/* Free what ckpt_resume put in info (and zero it, step -1). Safe on a
 * zeroed info. */
void ckpt_resume_info_free(ckpt_resume_info_t *info);

/* Load into s (buffers sized by c) from `which`: "auto" for the newest
 * valid checkpoint under c->dir, or a step folder's path. Collective. With
 * "auto" and nothing usable, info->step is -1: a fresh start, for which the
 * caller must initialise s again (a damaged checkpoint may have been read
 * into it before its checksum failed). An explicit folder that fails its
 * checks is ERR_INPUT. A checkpoint of a different run is ERR_INPUT naming
 * what differs (the settings: unless c->allow_changes, then listed in
 * info->changed; the architecture: each field with both values). A
 * CKPT_FORMAT_V2 manifest (no architecture) is ERR_INPUT, automatic or
 * not. Free info with ckpt_resume_info_free, also after an error. */
int ckpt_resume(const ckpt_config_t *c, const dist_group_t *world, const char *which,
                ckpt_state_t *s, ckpt_resume_info_t *info, err_t *err);

/* After a resume from checkpoint `step` (folder `from`, which may lie
 * outside c->dir): move every step folder of c->dir newer than step, and
 * one of the same step that is not `from`, into a new folder
 * c->dir/retired-after-step-NNNNNNNN-YYYYMMDD-HHMMSS (a suffix -2, -3 ...
 * when taken), so that the abandoned timeline cannot win a later "auto"
 * resume. Collective (rank 0 moves). *note (heap, may be NULL on return
 * when nothing moved; caller frees) says in one line what moved where.
 * ERR_RUNTIME when a folder cannot be moved (those moved stay moved). */
int ckpt_retire_newer(const ckpt_config_t *c, const dist_group_t *world, long step,
                      const char *from, char **note, err_t *err);

#endif
