/* cost_offload: host offload's transfers (layout_t.offload, sim/offload.h),
 * their exposed part of each layer's passes (sim/costsInt.h). */
#include "sim/costsInt.h"

#include "models/memory.h"

/* Host transfers of layout_t.offload (sim/offload.h): their exposed part
 * of each layer's passes. */
void cost_offload(const sim_input_t *in, step_costs_t *out)
{
    const layout_t *l = in->layout;
    double stage_params = 0;
    for (int s = 0; s < l->pp; s++) {
        double p = model_gpu_params(in->model, l, s);
        if (p > stage_params)
            stage_params = p;
    }
    offload_costs(in->model, l, in->cluster, out->layer_params, stage_params,
                  model_layer_activation_bytes(in->model, l), &out->offload);
    offload_layer_exposed(&out->offload, out->fwd.compute, out->bwd.compute + out->bwd.recompute,
                          out->fwd.dp, out->bwd.dp, &out->fwd.offload, &out->bwd.offload);
}
