/* accelerate: a Hugging Face accelerate config (default_config.yaml, as
 * `accelerate config` writes it and teams edit it) as a job's launch file.
 *
 * Reads distributed_type (DEEPSPEED, FSDP, MULTI_GPU, NO: the deepspeed,
 * fsdp and pytorch-ddp presets), num_processes (the job's GPUs, all machines
 * together), mixed_precision, and the block of the chosen backend:
 * deepspeed_config (zero_stage, offload_optimizer_device,
 * offload_param_device, gradient_accumulation_steps, or a
 * deepspeed_config_file read by inputs/deepspeed, its path taken from the
 * directory accelerate is launched in, else next to the YAML) and
 * fsdp_config (fsdp_sharding_strategy or fsdp_reshard_after_forward, by name
 * or number, fsdp_offload_params, fsdp_activation_checkpointing), and
 * parallelism_config's tensor, context and (Ulysses) sequence parallel sizes
 * (FSDP with TP or CP runs as the torchtitan preset of the same PyTorch
 * stack, Ulysses as all-to-all context parallelism, HSDP sharded over every
 * data-parallel rank: each said). Every value
 * the file leaves out that accelerate defaults (ZeRO stage 2, FULL_SHARD, no
 * offload, no mixed precision) is said as assumed; keys with no effect on
 * speed or memory, and a block the chosen backend does not use, are listed
 * as ignored. An accelerate config never gives the batch size or the
 * sequence length (the training script does): the command line must
 * (cli/ asks for them by name). Refused with one line naming the file and
 * key: a file the YAML reader refuses, a missing distributed_type, backends
 * that run no GPU job scaleplan prices (TPU, CPU, MEGATRON_LM: give the
 * layout as flags), values outside accelerate's choices.
 */
#ifndef SCALEPLAN_INPUTS_ACCELERATE_H
#define SCALEPLAN_INPUTS_ACCELERATE_H

#include <stdbool.h>
#include <stddef.h>

#include "common/error.h"
#include "common/notes.h"
#include "inputs/deepspeed.h"
#include "models/layout.h"
#include "sim/costs.h"

typedef struct {
    char framework[32];      /* the preset that runs it: deepspeed, fsdp, pytorch-ddp,
                                torchtitan-2025-06 (FSDP with TP or CP) */
    int n_processes;         /* num_processes: GPUs of the whole job; 0 = not given */
    bool have_precision;     /* mixed_precision given */
    precision_t precision;
    int zero;                /* ZeRO stage, FSDP sharding as its stage (0..3) */
    int offload;             /* LAYOUT_OFFLOAD_* bits */
    bool offload_nvme;       /* offloaded state goes on to NVMe */
    int grad_accum;          /* gradient_accumulation_steps; 0 = not given */
    bool full_recompute;     /* fsdp_activation_checkpointing */
    bool recompute_read;     /* the file decides checkpointing (an fsdp_config block);
                                otherwise the training script does */
    int tp, cp;              /* parallelism_config tp_size, cp_size (1 = none) */
    int sp;                  /* parallelism_config sp_size: DeepSpeed-Ulysses / ALST
                                sequence parallelism, applied as all-to-all context
                                parallelism (1 = none) */
    char *ds_config_path;    /* deepspeed_config_file as found (owned), or NULL */
    notes_t notes;           /* what was assumed or ignored */
} accelerate_t;

/* Read a YAML text (len bytes; file names it in messages and locates a
 * relative deepspeed_config_file). Call accelerate_free afterwards, whatever
 * it returns. ERR_INPUT naming the file and line or key; ERR_RUNTIME on OOM. */
int accelerate_read(const char *text, size_t len, const char *file, accelerate_t *t,
                    err_t *err);

/* The same from a file. */
int accelerate_read_file(const char *path, accelerate_t *t, err_t *err);

/* Write onto l (and o, which may be NULL) what the config decides. A
 * deepspeed_config_file is applied through inputs/deepspeed with given (the
 * command line's values; may be NULL) for its "auto" entries, the YAML's
 * gradient accumulation and precision filling what the command line leaves
 * out, as accelerate fills them. Notes go to notes. ERR_INPUT naming the
 * file and key; l may then be partly updated. */
int accelerate_apply(const accelerate_t *t, const deepspeed_given_t *given, layout_t *l,
                     sim_options_t *o, notes_t *notes, err_t *err);

/* Free what t holds; it is then empty. */
void accelerate_free(accelerate_t *t);

#endif
