/* result: what a training run measured, as a JSON document in the schema of
 * `scaleplan sim --json` (step_time_s, tokens_per_s, TFLOP/s, MFU,
 * breakdown_s, memory_gib, layout, model, gpu, gpus) plus what only a real
 * run has: losses, gradient norms and step times per step, final_loss,
 * alerts, where it resumed from and which checkpoints it skipped. sim/'s
 * validation reads it back (val_measured_load) to compare prediction and
 * measurement part by part.
 *
 * Breakdown mapping: compute is forward + backward minus the exposed TP
 * time the backends time separately; tp_comm, dp_comm and optimizer are
 * measured; other is what no part names (data loading, logging); parts the
 * trainer does not run (pipeline, context parallel, recompute) are 0.
 */
#ifndef SCALEPLAN_TRAINER_RESULT_H
#define SCALEPLAN_TRAINER_RESULT_H

#include <cjson/cJSON.h>

#include "models/layout.h"
#include "trainer/train.h"

/* The run's result document; model_arg is the --model argument: when it
 * names a config file, its contents go in "model_config" so the model can
 * be rebuilt. The caller deletes the result; NULL on OOM. */
cJSON *train_result_json(const train_config_t *c, const train_result_t *r, const layout_t *l,
                         const char *model_arg);

#endif
