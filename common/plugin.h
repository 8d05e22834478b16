/* plugin: the shared objects scaleplan opens only when a command needs
 * them, so that the GPU and MPI libraries stay out of every other process.
 *
 *   scaleplan-cuda.so  the CUDA code (trainer backend, calibrator), linked
 *                      to cuBLASLt and NCCL, with the CUDA runtime inside;
 *                      opened by `train --device cuda`, `calibrate`'s
 *                      measurements and `preflight --device cuda`;
 *   scaleplan-mpi.so   the MPI half of common/dist, opened by a process a
 *                      launcher (mpirun, srun) started.
 * `sim`, `plan`, `model`, `budget`, `reliability`, `report` and `--help`
 * open neither, and the executable itself links none of those libraries.
 *
 * A plug-in calls back into the executable that opened it (error records,
 * the model, the catalog): executables that may open one export their
 * symbols (-rdynamic); a plug-in exports only its entry tables
 * (PLUGIN_EXPORT), everything else in it is hidden, so the two never
 * confuse same-named functions.
 *
 * Where a plug-in is looked for, in order: the folder named by
 * $SCALEPLAN_PLUGIN_DIR, the folder of the running executable, and
 * ../lib/scaleplan next to that folder (make install's layout). Opening is
 * RTLD_NOW: a library the plug-in needs and the loader cannot find is
 * reported here, with the loader's reason, not at the first call.
 */
#ifndef SCALEPLAN_COMMON_PLUGIN_H
#define SCALEPLAN_COMMON_PLUGIN_H

#include <stdbool.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#include "common/error.h"

#define PLUGIN_CUDA "scaleplan-cuda.so"
#define PLUGIN_MPI "scaleplan-mpi.so"

/* Marks a plug-in's entry table as visible outside the plug-in. */
#define PLUGIN_EXPORT __attribute__((visibility("default")))

/* How the plug-in's symbols are seen by libraries opened later: LOCAL
 * (private to this handle) or GLOBAL (MPI libraries load components that
 * need libmpi's symbols globally). */
typedef enum { PLUGIN_LOCAL = 0, PLUGIN_GLOBAL = 1 } plugin_scope_t;

/* Whether a folder of the search order holds file; *path (heap, the
 * caller frees) is its path in the first that does, or when none does the
 * folders searched (for a message); NULL on OOM. No length limit (the
 * executable's own path is read whole). Opens nothing. */
bool plugin_find(const char *file, char **path);

/* Open plug-in file (once: later calls get the same handle) and return
 * the address of its exported symbol in *sym. ERR_RUNTIME with one line
 * when the file is not found (naming the folders searched), when the
 * loader cannot open it (its reason, then hint when not NULL), or when the
 * symbol is missing. A plug-in once opened is never closed. */
int plugin_symbol(const char *file, const char *symbol, plugin_scope_t scope, const char *hint,
                  const void **sym, err_t *err);

#ifdef __cplusplus
}
#endif

#endif
