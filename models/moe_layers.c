#include "models/moe_layers.h"

#include <stdint.h>

bool model_is_moe(const model_t *m)
{
    return m->moe.n_experts > 0;
}

bool model_moe_layer(const model_t *m, int layer)
{
    if (!model_is_moe(m) || layer < 0 || layer >= MODEL_MAX_MOE_LAYERS)
        return false;
    return (m->moe.layer_mask[layer / 64] >> (layer % 64)) & 1u;
}

void model_moe_set_layer(model_t *m, int layer, bool moe)
{
    if (layer < 0 || layer >= MODEL_MAX_MOE_LAYERS)
        return;
    uint64_t bit = (uint64_t)1 << (layer % 64);
    if (moe)
        m->moe.layer_mask[layer / 64] |= bit;
    else
        m->moe.layer_mask[layer / 64] &= ~bit;
}

double model_moe_io(const model_t *m)
{
    return m->moe.latent > 0 ? m->moe.latent : m->hidden;
}

int model_moe_layers_in(const model_t *m, int first, int count)
{
    if (!model_is_moe(m))
        return 0;
    int n = 0;
    for (int i = first; i < first + count; i++)
        n += model_moe_layer(m, i);
    return n;
}
