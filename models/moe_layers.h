/* moe_layers: which blocks of a model have a mixture-of-experts MLP (the
 * bit mask model_moe_t.layer_mask), apart from models/model so that the
 * readers of layer patterns (models/hybrid) set it without including
 * model.h. model.h includes this header: its users see these as before.
 */
#ifndef SCALEPLAN_MODELS_MOE_LAYERS_H
#define SCALEPLAN_MODELS_MOE_LAYERS_H

#include <stdbool.h>

#include "models/model_types.h"

/* Mixture of experts: whether m has any, and whether block layer (0-based)
 * has an MoE MLP. Set or clear a block's bit with model_moe_set_layer
 * (layers outside [0, MODEL_MAX_MOE_LAYERS) are ignored). */
bool model_is_moe(const model_t *m);
bool model_moe_layer(const model_t *m, int layer);
void model_moe_set_layer(model_t *m, int layer, bool moe);

/* The width of the tokens the routed experts read, are dispatched and
 * write: model_moe_t.latent under LatentMoE, else hidden. */
double model_moe_io(const model_t *m);

/* MoE blocks among [first, first + count). */
int model_moe_layers_in(const model_t *m, int first, int count);

#endif
