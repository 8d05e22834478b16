/* runlock: one training at a time per checkpoint folder.
 *
 * A run holds an exclusive flock(2) on DIR/train.lock for its whole life
 * and writes into the file who holds it (pid, host and start time, one
 * "key value" line each), so that a second run into the same folder is
 * refused naming the holder instead of both runs writing step folders over
 * each other's.
 *
 * Stale locks: the lock is the kernel's, not the file's. It is released
 * when the holder's process ends, however it ends (exit, crash, SIGKILL,
 * a node reboot for a local disk), so a lock file left by a dead run is
 * text that blocks nothing: the next run takes the lock and writes its
 * own name. The file is never removed (a run removing it could let a third
 * lock a new file while a second still holds the old one). On NFS, Linux
 * (2.6.12 and later) carries flock to the server as a whole-file POSIX
 * lock, so ranks and runs on other hosts see it too; a file system without
 * locks is an error, not a silent pass.
 */
#ifndef SCALEPLAN_TRAINER_RUNLOCK_H
#define SCALEPLAN_TRAINER_RUNLOCK_H

#include "common/error.h"

#define RUNLOCK_FILE "train.lock"

typedef struct runlock runlock_t;

/* Lock folder dir (which must exist) for this process: *out is the held
 * lock. When another process holds it: ERR_INPUT naming flag (the option
 * that chose the folder) and the holder as its lock file says. ERR_RUNTIME
 * when the file cannot be opened or locked, or on OOM. On error *out is
 * NULL and nothing is held. */
int runlock_acquire(const char *dir, const char *flag, runlock_t **out, err_t *err);

/* Release and free (the file stays, see above). NULL is fine. */
void runlock_release(runlock_t *l);

#endif
