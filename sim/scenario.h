/* scenario: one training step to simulate, assembled from plain values.
 *
 * A scenario is the model, the cluster, the parallel layout, the cost
 * profile and the framework's options, checked against each other and
 * wired into the sim_input_t the step simulator reads. Every front end
 * builds it the same way, whatever the values came from (command-line
 * flags, a measured run's JSON, a DeepSpeed config, a Megatron argument
 * list, a torchtitan TOML):
 *
 *     scenario_begin   load the model, resolve the cluster, start the
 *                      layout from the defaults and the framework preset
 *     (caller)         set its own layout and option choices on s->layout
 *                      and s->opt
 *     scenario_finish  finalize the layout (derive DP and gradient
 *                      accumulation, refuse what the framework would),
 *                      check the options against it, load the profile
 *
 * Errors are one line naming the field or flag; scenario_free is safe after
 * any failure (and after memset 0).
 */
#ifndef SCALEPLAN_SIM_SCENARIO_H
#define SCALEPLAN_SIM_SCENARIO_H

#include "common/error.h"
#include "common/notes.h"
#include "models/layout.h"
#include "models/model.h"
#include "profile/profile.h"
#include "sim/costs.h"
#include "frameworks/framework.h"
#include "topologies/cluster.h"

typedef struct {
    const char *model;          /* catalog name or config.json path */
    const model_t *model_given; /* or a model built elsewhere (copied); wins */
    cluster_spec_t cluster;     /* GPU or cluster, n_gpus required; its catalog
                                   (NULL: parse the files) serves the framework
                                   and the profile's GPU too */
    const char *framework;      /* framework preset; NULL = the default */
    const char *assume_architecture; /* read a config's model_type as this
                                        one (model_load_opts_t); NULL = its own */
} scenario_spec_t;

typedef struct {
    model_t model;
    layout_t layout;   /* finalized by scenario_finish */
    cluster_t cluster;
    profile_t profile; /* owned after scenario_finish; scenario_free */
    sim_options_t opt;
    char framework[32]; /* the preset's name ("" = the default) */
    fw_preset_t fw;     /* the preset itself */
    sim_input_t input; /* points into this struct after scenario_finish */
    notes_t notes;     /* what the readers of the user's files ignored or
                          assumed (the model's config, DeepSpeed, Megatron,
                          torchtitan); printed and put in --json */
    catalog_t *catalog; /* the spec's parsed catalog (borrowed), or NULL */
    bool fp8_recipe_fixed; /* PRECISION_FP8 means Transformer Engine's delayed
                              scaling as said, not the framework's own fp8 */
    bool grad_bytes_fixed; /* the layout's gradient size comes from the user's
                              inputs (--grad-dtype, a launch file), not from
                              the framework for the final precision */
} scenario_t;

/* Start s from spec: the model, the cluster (ERR_INPUT naming --gpus when
 * spec->cluster.n_gpus is 0), the default layout with the framework's
 * changes, and the framework's options. s owns nothing yet. */
int scenario_begin(const scenario_spec_t *spec, scenario_t *s, err_t *err);

/* Finalize s->layout for the cluster's GPU count, check the options against
 * it (sequence parallelism where the preset runs it with TP, unless the
 * layout turns it off by name; where the preset needs it, for an MoE model
 * with TP, implied with a note in s->notes or refused when turned off: see
 * fw_require_sp; TP communication overlap needs sequence parallelism), and
 * load the profile: the file profile_path, or the GPU's default when NULL. Then
 * s->input is ready for sim_run_step. Call scenario_free after this,
 * whatever it returns. */
int scenario_finish(scenario_t *s, const char *profile_path, err_t *err);

/* Tokens per optimizer step when the user names none: 4M (2^22), the
 * order of magnitude of GPT-3 (3.1M) and Llama 3 70B (4M early on). */
#define SCENARIO_DEFAULT_BATCH_TOKENS 4194304.0

/* Sequences per step for a global batch of tokens at seq_len (at least 1). */
int scenario_batch_for_tokens(double tokens, int seq_len);

/* A layout that names no batch (global batch and accumulation 0) gets the
 * plan's default, SCENARIO_DEFAULT_BATCH_TOKENS (4M) per step: the multiple
 * of micro-batch x DP (x PP when interleaved) nearest to it, with a note in
 * notes (may be NULL) saying so. Nothing when the layout names a batch or
 * its degrees do not divide n_gpus (layout_finalize says why). True when it
 * set one. */
bool scenario_default_batch(const model_t *m, layout_t *l, int n_gpus, notes_t *notes);

/* The inputs of a finished scenario that are assumptions rather than
 * measured, fitted or sourced figures, as one comma-separated line: the
 * profile's assumed figures (profile/provenance.h) and the framework
 * preset's sections that say ASSUMED. "" when there are none. */
void scenario_assumptions(const scenario_t *s, char *buf, size_t cap);
/* (the list: the profile's assumed figures, the framework's assumed
 * options, and for MoE layouts with EP the load imbalance when the run did
 * not give one) */

/* Free what s owns (the profile, the notes). */
void scenario_free(scenario_t *s);

/* Why DeepEP (Megatron's flex dispatcher; HybridEP the same) cannot run on
 * g, or NULL when it can (scenario_finish refuses it or falls back to the
 * all-to-all dispatcher; the planner leaves it out of the search). */
const char *scenario_deepep_unsupported(const gpu_t *g);

#endif
