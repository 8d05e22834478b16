/* cost_options: the compile switches and the precision recipe's costs on
 * sim_options_t (sim/costs.h). No pricing here; the defaults and the MoE
 * dispatchers' names are frameworks/options.c's (one row per option in
 * frameworks/options.def), the presets sim/options_framework.c's. */
#include "sim/costs.h"

#include <stdio.h>
#include <string.h>

void sim_options_compiled_model(sim_options_t *o)
{
    o->eager_norm = o->eager_rope = o->eager_act = o->eager_cp_merge = 1;
}

void sim_options_compiled_loss(sim_options_t *o)
{
    if (o->ce_compiled_fwd_bytes > 0) {
        /* one compiled loss, with or without TP */
        o->ce_fwd_bytes = o->ce_compiled_fwd_bytes;
        o->ce_bwd_bytes = o->ce_compiled_bwd_bytes;
        o->ce_peak_bytes = o->ce_compiled_peak_bytes;
        o->ce_tp_fwd_bytes = o->ce_tp_bwd_bytes = o->ce_tp_peak_bytes = 0;
    }
}

void sim_options_compiled(sim_options_t *o)
{
    sim_options_compiled_model(o);
    sim_options_compiled_loss(o);
}

int sim_options_precision(sim_options_t *o, precision_t p, err_t *err)
{
    return sim_options_precision_in(NULL, o, p, err);
}

int sim_options_precision_in(catalog_t *cat, sim_options_t *o, precision_t p, err_t *err)
{
    int rc = prec_costs_in(cat, p, &o->prec, err);
    if (!rc)
        o->prec_for = (int)p + 1;
    return rc;
}
