/* torchtitan: a torchtitan job config (train_configs/<model>.toml) as its users
 * have it.
 *
 * Reads [model] name and flavor (the model, from scaleplan's catalog:
 * llama3 8B/70B/405B and debugmodel, llama4 17bx16e, deepseek_v3 671B,
 * qwen3 30B-A3B/235B-A22B), [parallelism] degrees (FSDP shard and
 * replicate, TP with sequence-parallel norms, async TP, PP with its
 * schedule and micro-batch size, CP, EP, ETP), [training] local and global
 * batch, sequence length, mixed precision, CPU offload, [activation_checkpoint]
 * mode, Float8 converters and [compile]. Key names of every torchtitan
 * version with TOML configs (April 2024 to February 2026) are known, the
 * old ones ([training] batch_size, data_parallel_degree,
 * [experimental] pipeline_parallel_degree, [float8], converters = ["float8"])
 * included. Keys with no effect on speed or memory, and those scaleplan
 * does not model, are listed; assumptions (HSDP sharding, layer-level
 * selective checkpointing, schedules without an exact equivalent) are
 * said. A missing GPU count where data_parallel_shard_degree is -1, bad
 * values and unknown flavors are one-line errors naming the key. Python
 * config registries (the format since February 2026) come in through
 * inputs/pyregistry as the same keys.
 */
#ifndef SCALEPLAN_INPUTS_TORCHTITAN_H
#define SCALEPLAN_INPUTS_TORCHTITAN_H

#include <stdbool.h>
#include <stddef.h>

#include "common/error.h"
#include "common/notes.h"
#include "models/layout.h"
#include "models/model.h"
#include "sim/costs.h"

typedef struct {
    char model_name[MODEL_NAME_MAX]; /* catalog name of [model] name/flavor, or "" */
    model_t model;       /* the debugmodel flavor built here (have_model) */
    bool have_model;
    layout_t layout;     /* layout_defaults + the config; not finalized */
    sim_options_t opt;   /* sim_options_default + the config */
    char framework[32];  /* the torchtitan preset of the file's generation
                            ("torchtitan-2024-12", "torchtitan-2025-06" or,
                            with expert parallelism or DualPipeV,
                            "torchtitan-2025-12") */
    bool async_tp;       /* async TP on (with TP > 1) */
    bool compiled;       /* torch.compile: elementwise ops fused */
    bool compiled_loss;  /* the loss compiled (compile on, and
                            compile.components names "loss" or is absent) */
    bool fp8_all_gather; /* Float8 FSDP all-gather of the weights */
    int reduce_bytes;    /* FSDP2's gradient reduction dtype, mixed_precision_reduce:
                            4 (float32, the default) or 2 (bfloat16); the sharded
                            gradients stay in the sharded fp32 parameters' dtype,
                            which the presets' memory accounting already holds */
    int world_size;      /* GPUs the degrees multiply to (0: shard degree -1
                            takes the rest of --gpus) */
    notes_t notes;
} torchtitan_t;

/* Read a TOML text into t. n_gpus (0 = not given) resolves
 * data_parallel_shard_degree = -1. ERR_INPUT naming the file and key. Call
 * torchtitan_free afterwards, whatever it returns. */
int torchtitan_read(const char *text, size_t len, const char *file, int n_gpus, torchtitan_t *t,
                    err_t *err);

int torchtitan_read_file(const char *path, int n_gpus, torchtitan_t *t, err_t *err);

/* A job of a Python config registry (config_registry.py, torchtitan's
 * format since February 2026): function (NULL: refused naming the file's
 * first) read by inputs/pyregistry into the same keys, as the newest
 * generation (torchtitan-2025-12). */
int torchtitan_read_registry(const char *text, size_t len, const char *file,
                             const char *function, int n_gpus, bool model_given, torchtitan_t *t,
                             err_t *err);

/* A TOML file, or a registry (a path ending .py) with its function; where
 * the command line names the model (model_given) a flavor outside the
 * catalog is listed as ignored instead of refused, and model_name stays "". */
int torchtitan_read_file_as(const char *path, const char *function, int n_gpus,
                            bool model_given, torchtitan_t *t, err_t *err);

/* Write onto o (a framework preset's options) what the config decides:
 * async TP, torch.compile's fusion, the Float8 FSDP all-gather. */
void torchtitan_options(const torchtitan_t *t, sim_options_t *o);

void torchtitan_free(torchtitan_t *t);

#endif
