/* deepspeed: a DeepSpeed config (ds_config.json) as users have it.
 *
 * Reads the batch sizes, ZeRO (stage, optimizer and parameter offload to
 * CPU or NVMe, overlap_comm, bucket sizes), bf16/fp16 and
 * activation_checkpointing, and AutoTP's tensor_parallel.autotp_size, into a
 * layout_t and simulator options. Configs
 * written for the Hugging Face Trainer hold "auto" where the Trainer fills
 * in its own arguments; scaleplan fills them from the command line (the
 * deepspeed_cli_t values) or its defaults and the model, as the Trainer
 * would, and says so; so is every value a key the file leaves out defaults
 * to (batch sizes, ZeRO stage, overlap_comm, reduce_bucket_size, offload
 * device and ratio, cpu_checkpointing). Keys that have no effect on speed or memory are
 * listed as ignored; keys scaleplan cannot model exactly are listed as
 * such; nothing is dropped silently. Refused with one line naming the key:
 * malformed JSON, a key given twice in one object, wrong types, fp16 and bf16 both on, apex amp with ZeRO,
 * parameter offload below stage 3, keys DeepSpeed itself rejects inside
 * zero_optimization.
 */
#ifndef SCALEPLAN_INPUTS_DEEPSPEED_H
#define SCALEPLAN_INPUTS_DEEPSPEED_H

#include <stdbool.h>
#include <stddef.h>

#include "common/error.h"
#include "common/notes.h"
#include "models/layout.h"
#include "sim/costs.h"

/* What the command line says, for "auto" values (0 / false = not given). */
typedef struct {
    int micro_batch;  /* --micro-batch */
    int grad_accum;   /* --grad-accum */
    int global_batch; /* --global-batch */
    bool have_precision;
    precision_t precision; /* --precision / --bf16 / --fp16 */
    bool full_recompute;   /* --recompute full or --checkpoint-activations */
    bool have_zero;        /* --zero (or --fsdp) given */
    int zero;              /* its stage */
    int hidden;            /* the model's hidden size ("auto" buckets), 0 = unknown */
} deepspeed_given_t;

/* Apply the config text (len bytes; file names it in messages) to l and o
 * (o may be NULL when the caller simulates nothing). given may be NULL.
 * notes receives what was assumed or ignored. ERR_INPUT with file and key
 * on bad input; l and o may then be partly updated. */
int deepspeed_apply(const char *text, size_t len, const char *file, const deepspeed_given_t *given,
                    layout_t *l, sim_options_t *o, notes_t *notes, err_t *err);

/* The same from a file. */
int deepspeed_apply_file(const char *path, const deepspeed_given_t *given, layout_t *l,
                         sim_options_t *o, notes_t *notes, err_t *err);

#endif
