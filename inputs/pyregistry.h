/* pyregistry: one job of a torchtitan config registry (config_registry.py,
 * torchtitan's only job-config format since February 2026), read by its
 * structure and never executed.
 *
 * A registry is Python: functions returning Trainer.Config(...) built from
 * keyword-argument constructor calls with literal values, or calling another
 * function of the same file and setting fields (config.parallelism.x = 2).
 * The named function is evaluated over that subset (literals, lists, integer
 * arithmetic, constructor calls, local names, field assignments, calls of
 * the file's own functions, 8 deep) into the dotted-path document the TOML
 * job configs give (inputs/toml), in their key names: model_registry("8B",
 * converters=[Float8LinearConverter.Config()]) is model.flavor and
 * model.converters, TrainingConfig's max_context_length and
 * num_tokens_per_microbatch_per_dp_rank are training.seq_len and
 * training.local_batch_size, ParallelismConfig and CompileConfig keep their
 * field names, SelectiveAC / FullAC / MemoryBudgetAC are
 * activation_checkpoint.mode. The model family is the function name's prefix
 * (llama3_8b: llama3), said in notes. Sections with no effect on speed or
 * memory (loss, optimizer, data loader, checkpoints, metrics) are listed as
 * ignored. Refused in one line naming file, line and what to give instead (a
 * TOML config or flags): statements outside the subset in the evaluated
 * functions, a value read here that is computed rather than written, a
 * missing function (the message names the file's first one).
 */
#ifndef SCALEPLAN_INPUTS_PYREGISTRY_H
#define SCALEPLAN_INPUTS_PYREGISTRY_H

#include <stddef.h>

#include "common/error.h"
#include "common/notes.h"
#include "inputs/toml.h"

/* Evaluate function (NULL: refused naming the file's first function) of the
 * registry text (len bytes; file names it in messages) into doc, which the
 * caller frees with toml_free whatever this returns; notes get what was
 * ignored or assumed. ERR_INPUT "file: line N: reason"; ERR_RUNTIME on OOM. */
int pyregistry_read(const char *text, size_t len, const char *file, const char *function,
                    toml_doc_t *doc, notes_t *notes, err_t *err);

#endif
