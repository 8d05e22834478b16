/* outdir: a report folder written in private and swapped in whole.
 *
 * outdir_begin creates DIR (and its parents) and a private folder inside
 * it, DIR/.scaleplan-tmp-XXXXXX (mkdtemp: a fresh name, mode 0700, on
 * DIR's own file system so that rename(2) can move its files). Everything
 * of the report is written there, gnuplot included, so no file is ever
 * opened through a link planted in DIR under a report file's name.
 *
 * outdir_commit swaps the report in while holding a write lock (fcntl) on
 * DIR/.scaleplan-report, the folder's manifest: two reports into one
 * folder, from concurrent runs or one after the other, take turns, and
 * the folder ends holding one of them whole. Under the lock it
 *   1. records in the manifest the files of the previous report and of
 *      this one (so a crash part-way leaves nothing untracked),
 *   2. renames each new file over its name in DIR (rename replaces a
 *      symbolic link there, never writes through it), index.html last,
 *   3. removes the previous report's files this one did not write: only
 *      names the manifest lists, i.e. files scaleplan wrote, never the
 *      user's own,
 *   4. leaves the manifest listing this report's files alone.
 * A reader that wants one report and never a mix takes a shared lock on
 * the manifest (F_RDLCK) while it reads.
 */
#ifndef SCALEPLAN_REPORTS_OUTDIR_H
#define SCALEPLAN_REPORTS_OUTDIR_H

#include "common/error.h"

/* The manifest's name inside DIR. */
#define OUTDIR_MANIFEST ".scaleplan-report"

typedef struct {
    char *dir;   /* the report folder (heap) */
    char *stage; /* the private folder inside it, where files are written (heap) */
} outdir_t;

/* Create dir and the private folder. ERR_INPUT for an empty name,
 * ERR_RUNTIME naming the folder that cannot be made; then *o is empty and
 * nothing needs undoing. */
int outdir_begin(outdir_t *o, const char *dir, err_t *err);

/* Swap the private folder's files into dir as above and remove it.
 * ERR_RUNTIME naming what failed (a planted manifest that is not a plain
 * file is refused before anything moves). Either way *o is emptied and
 * the private folder removed. */
int outdir_commit(outdir_t *o, err_t *err);

/* Remove the private folder and its files; dir is untouched. Safe on an
 * emptied or zeroed *o. */
void outdir_abort(outdir_t *o);

#endif
