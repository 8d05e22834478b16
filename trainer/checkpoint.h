/* checkpoint: save and resume the trainer's state so that a killed job
 * loses at most the steps since the last save and resumes bit-exact.
 *
 * On disk, under the checkpoint directory, one folder per save:
 *   step-00000100/rank-00000.bin ... one shard per rank (its parameters and
 *                                    optimizer state), and
 *   step-00000100/manifest.json      written last, by rank 0, once every
 *                                    shard is on disk: step, run identity
 *                                    (model, parameters, TP x DP, ZeRO-1),
 *                                    and each shard's size and CRC-32.
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
 * (its shards would not fit), and the run's settings the manifest records
 * (seed, data, batch shape, sequence length, steps, learning-rate schedule;
 * the trainer chooses them), which only allow_changes accepts, noting
 * each change.
 *
 * A fresh run (no resume) into a folder that already holds checkpoints is
 * refused (ckpt_check_fresh): they would mix with the new run's; overwrite
 * removes them first.
 */
#ifndef SCALEPLAN_TRAINER_CHECKPOINT_H
#define SCALEPLAN_TRAINER_CHECKPOINT_H

#include <stdbool.h>
#include <stddef.h>

#include "common/dist.h"
#include "common/error.h"

#define CKPT_FORMAT "scaleplan-checkpoint/2"
#define CKPT_MAX_NOTES 8
#define CKPT_MAX_SETTINGS 16

/* One setting of the run recorded in the manifest, as text ("seq_len",
 * "128"): compared as text on resume. */
typedef struct {
    char name[24];
    char value[280];
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
} ckpt_config_t;

/* Add a setting (name, printf value) to c; ERR_RUNTIME when full. */
int ckpt_setting(ckpt_config_t *c, const char *name, err_t *err, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

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
 * shard; rank 0 commits). NULL and ERR_RUNTIME on OOM. */
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
    char path[512];            /* the checkpoint folder used */
    int n_notes;
    char notes[CKPT_MAX_NOTES][320]; /* damaged checkpoints skipped, and why */
    char changed[320];         /* settings that differ, accepted by allow_changes */
} ckpt_resume_info_t;

/* Load into s (buffers sized by c) from `which`: "auto" for the newest
 * valid checkpoint under c->dir, or a step folder's path. Collective. With
 * "auto" and nothing usable, info->step is -1: a fresh start, for which the
 * caller must initialise s again (a damaged checkpoint may have been read
 * into it before its checksum failed). An explicit folder that fails its
 * checks is ERR_INPUT. A checkpoint of a different run is ERR_INPUT naming
 * what differs (the settings: unless c->allow_changes, then listed in
 * info->changed). */
int ckpt_resume(const ckpt_config_t *c, const dist_group_t *world, const char *which,
                ckpt_state_t *s, ckpt_resume_info_t *info, err_t *err);

#endif
