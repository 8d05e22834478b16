/* cost_options: sim_options_t's defaults (Megatron-Core's), the compile
 * switches, the precision recipe's costs, and the MoE dispatchers' names
 * (sim/costs.h). No pricing here; the presets are sim/options_framework.c. */
#include "sim/costs.h"

#include <stdio.h>
#include <string.h>

void sim_options_default(sim_options_t *o)
{
    memset(o, 0, sizeof *o);
    o->overlap_grad_reduce = true;
    o->overlap_param_gather = true;
    o->tp_comm_overlap = false;
    o->async_tp_grad = true;
    o->overlap_p2p = -1;
    /* Megatron-Core DDP bucket: max(40M, 1M x DP) parameters; 40M is the
     * floor used here (distributed_data_parallel_config.py). */
    o->bucket_params = 40e6;
    o->causal = true;
    o->layer_events = false;
    o->straggler_cv = -1;
    o->amax_reduction = AMAX_RED_TP_DP;
    o->dp_comm_ctas = 0;
    snprintf(o->attn_kernel, sizeof o->attn_kernel, "cudnn");
    o->fp8_weight_cache = true;
    /* Transformer Engine's ring (AttnFuncWithCPAndKVP2P, v1.13): each
     * step's output corrected into the running bf16 output by one fused
     * kernel (flash_attn_fwd_out_correction: read both, write one), the
     * gradients added in place (dq.add_): 6 bytes an element */
    o->cp_merge_bytes = 6;
    o->kv_repeated = false;
    sim_options_compiled_model(o);
    tpo_default(&o->tp_overlap);
    /* Megatron's unfused vocabulary-parallel cross entropy (see the
     * megatron-core preset for the passes) */
    o->ce_fwd_bytes = 38;
    o->ce_bwd_bytes = 14;
    o->zero3.regather_backward = true;
    o->zero3.prefetch_backward = true;
    o->zero3.reshard_with_pp = true;
    /* Megatron-Core's MoE defaults (transformer_config.py): the allgather
     * token dispatcher, one GEMM per expert, unfused permutes, no shared
     * expert or all-to-all overlap; routing assumed balanced until the run
     * says otherwise. */
    o->moe.dispatcher = MOE_DISPATCH_ALLGATHER;
    o->moe.imbalance = 1;
}

int moe_dispatch_parse(const char *text, const char *field, moe_dispatch_t *out, err_t *err)
{
    if (strcmp(text, "alltoall") == 0)
        *out = MOE_DISPATCH_ALLTOALL;
    else if (strcmp(text, "allgather") == 0)
        *out = MOE_DISPATCH_ALLGATHER;
    else if (strcmp(text, "deepep") == 0 || strcmp(text, "flex") == 0)
        *out = MOE_DISPATCH_DEEPEP;
    else
        return err_setf(err, ERR_INPUT, NULL, field,
                        "use alltoall, allgather or deepep (flex) (got '%s')", text);
    return ERR_OK;
}

const char *moe_dispatch_megatron_name(moe_dispatch_t d)
{
    static const char *const names[] = {"alltoall", "allgather", "flex"};
    return d <= MOE_DISPATCH_DEEPEP ? names[d] : "?";
}

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
