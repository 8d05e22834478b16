/* layout_json: layouts to and from JSON, and DeepSpeed's ds_config.json. */
#include "models/layout_json.h"

#include <stdio.h>
#include <string.h>

/* Re-address a flag-style error ("--recompute: unknown value ...") to the
 * JSON member it came from. */
static int field_error(const json_ctx_t *ctx, const char *key, err_t *err)
{
    json_ctx_t k = json_ctx_member(ctx, key);
    err->code = ERR_INPUT;
    return err_readdress(err, k.file, k.path);
}

/* The fine-tuning keys layout_to_json writes where set: finetune, lora_rank,
 * lora_targets, base_bits; absent: pretraining. */
static int finetune_from_json(const cJSON *o, const json_ctx_t *ctx, finetune_t *f, err_t *err)
{
    char mode[16] = "", targets[96] = "";
    int rc;
    if ((rc = json_get_string(o, "finetune", ctx, JSON_OPTIONAL, mode, sizeof mode, err)) ||
        (rc = json_get_int(o, "lora_rank", ctx, JSON_OPTIONAL, 1, 1 << 20, &f->rank, err)) ||
        (rc = json_get_int(o, "base_bits", ctx, JSON_OPTIONAL, 4, 16, &f->base_bits, err)) ||
        (rc = json_get_string(o, "lora_targets", ctx, JSON_OPTIONAL, targets, sizeof targets,
                              err)))
        return rc;
    if (mode[0] && finetune_parse_mode(mode, &f->mode, err))
        return field_error(ctx, "finetune", err);
    if (targets[0] && finetune_parse_targets(targets, &f->targets, err))
        return field_error(ctx, "lora_targets", err);
    return ERR_OK;
}

int layout_from_json(const cJSON *o, const json_ctx_t *ctx, layout_t *l, err_t *err)
{
    int rc = json_expect_object(o, ctx, err);
    if (rc)
        return rc;
    char recompute[16] = "", schedule[16] = "", precision[16] = "", offload[64] = "";
    char modules[160] = "";
    if ((rc = json_get_int(o, "tp", ctx, JSON_OPTIONAL, 1, 1 << 16, &l->tp, err)) ||
        (rc = json_get_int(o, "pp", ctx, JSON_OPTIONAL, 1, LAYOUT_MAX_PP, &l->pp, err)) ||
        (rc = json_get_int(o, "cp", ctx, JSON_OPTIONAL, 1, 1 << 16, &l->cp, err)) ||
        (rc = json_get_int(o, "ep", ctx, JSON_OPTIONAL, 1, 1 << 16, &l->ep, err)) ||
        (rc = json_get_int(o, "etp", ctx, JSON_OPTIONAL, 1, 1 << 16, &l->etp, err)) ||
        (rc = json_get_int(o, "vpp", ctx, JSON_OPTIONAL, 1, 1 << 10, &l->vpp, err)) ||
        (rc = json_get_int(o, "micro_batch", ctx, JSON_OPTIONAL, 1, 1 << 20, &l->micro_batch,
                           err)) ||
        (rc = json_get_int(o, "global_batch", ctx, JSON_OPTIONAL, 1, 1 << 30, &l->global_batch,
                           err)) ||
        (rc = json_get_int(o, "seq_len", ctx, JSON_OPTIONAL, 1, 1 << 24, &l->seq_len, err)) ||
        (rc = json_get_int(o, "zero", ctx, JSON_OPTIONAL, 0, 3, &l->zero, err)) ||
        (rc = json_get_int(o, "grad_bytes", ctx, JSON_OPTIONAL, 2, 4, &l->grad_bytes, err)) ||
        (rc = json_get_bool(o, "sequence_parallel", ctx, JSON_OPTIONAL, &l->sequence_parallel,
                            err)) ||
        (rc = json_get_bool(o, "distributed_optimizer", ctx, JSON_OPTIONAL,
                            &l->distributed_optimizer, err)) ||
        (rc = json_get_bool(o, "flash_attention", ctx, JSON_OPTIONAL, &l->flash_attention,
                            err)) ||
        (rc = json_get_bool(o, "sp_saves_gathered", ctx, JSON_OPTIONAL, &l->sp_saves_gathered,
                            err)) ||
        (rc = json_get_string(o, "recompute", ctx, JSON_OPTIONAL, recompute, sizeof recompute,
                              err)) ||
        (rc = json_get_string(o, "schedule", ctx, JSON_OPTIONAL, schedule, sizeof schedule,
                              err)) ||
        (rc = json_get_string(o, "precision", ctx, JSON_OPTIONAL, precision, sizeof precision,
                              err)) ||
        (rc = json_get_string(o, "offload", ctx, JSON_OPTIONAL, offload, sizeof offload, err)) ||
        (rc = json_get_double(o, "offload_fraction", ctx, JSON_OPTIONAL, 0, 1,
                              &l->offload_fraction, err)) ||
        (rc = json_get_int(o, "recompute_layers", ctx, JSON_OPTIONAL, 1, 100000,
                           &l->recompute_layers, err)) ||
        (rc = json_get_string(o, "recompute_modules", ctx, JSON_OPTIONAL, modules,
                              sizeof modules, err)))
        return rc;
    if (modules[0] &&
        layout_parse_recompute_modules(modules, "recompute_modules", &l->recompute_modules, err))
        return field_error(ctx, "recompute_modules", err);
    if (offload[0]) {
        int layers = 0;
        if ((rc = json_get_int(o, "offload_activation_layers", ctx, JSON_OPTIONAL, 1, 100000,
                               &layers, err)))
            return rc;
        if (layout_parse_offload(offload, l, err))
            return field_error(ctx, "offload", err);
        l->offload_act_layers = layers;
    }
    if (recompute[0] && layout_parse_recompute(recompute, &l->recompute, err))
        return field_error(ctx, "recompute", err);
    if (schedule[0] && layout_parse_schedule(schedule, &l->schedule, err))
        return field_error(ctx, "schedule", err);
    if (precision[0] && layout_parse_precision(precision, &l->precision, err))
        return field_error(ctx, "precision", err);
    return finetune_from_json(o, ctx, &l->ft, err);
}

cJSON *layout_to_json(const layout_t *l)
{
    cJSON *o = cJSON_CreateObject();
    bool ok = o && json_add_number(o, "tp", l->tp) && json_add_number(o, "pp", l->pp) &&
              json_add_number(o, "dp", l->dp) && json_add_number(o, "cp", l->cp) &&
              json_add_number(o, "ep", l->ep) && json_add_number(o, "vpp", l->vpp) &&
              json_add_number(o, "micro_batch", l->micro_batch) &&
              json_add_number(o, "global_batch", l->global_batch) &&
              json_add_number(o, "grad_accum", l->grad_accum) &&
              json_add_number(o, "zero", l->zero) &&
              cJSON_AddStringToObject(o, "recompute", layout_recompute_name(l->recompute)) &&
              cJSON_AddStringToObject(o, "schedule", layout_schedule_name(l->schedule)) &&
              json_add_number(o, "seq_len", l->seq_len) &&
              cJSON_AddBoolToObject(o, "sequence_parallel", l->sequence_parallel) &&
              cJSON_AddBoolToObject(o, "distributed_optimizer", l->distributed_optimizer) &&
              cJSON_AddStringToObject(o, "precision", layout_precision_name(l->precision)) &&
              cJSON_AddBoolToObject(o, "flash_attention", l->flash_attention) &&
              json_add_number(o, "grad_bytes", l->grad_bytes) &&
              json_add_number(o, "gpus", l->n_gpus);
    if (ok && l->etp > 0)
        ok = json_add_number(o, "etp", l->etp);
    if (ok && l->sp_saves_gathered) /* DTensor SP (torchtitan): said only where set */
        ok = cJSON_AddBoolToObject(o, "sp_saves_gathered", true) != NULL;
    if (ok && l->recompute_layers > 0) /* block recompute: rebuilt per chunk */
        ok = json_add_number(o, "recompute_layers", l->recompute_layers);
    if (ok && l->recompute_modules) { /* selective recompute's modules, where named */
        char names[160];
        layout_recompute_modules_name(l->recompute_modules, ",", false, names, sizeof names);
        ok = cJSON_AddStringToObject(o, "recompute_modules", names) != NULL;
    }
    if (ok && l->offload) {
        char names[64];
        layout_offload_name(l, names, sizeof names);
        ok = cJSON_AddStringToObject(o, "offload", names) != NULL;
        if (ok && l->offload_fraction > 0)
            ok = json_add_number(o, "offload_fraction", l->offload_fraction);
        if (ok && l->offload_act_layers > 0)
            ok = json_add_number(o, "offload_activation_layers", l->offload_act_layers);
    }
    if (ok && l->ft.mode != FINETUNE_NONE) /* fine-tuning: said only where set */
        ok = cJSON_AddStringToObject(o, "finetune", finetune_mode_name(l->ft.mode)) != NULL;
    if (ok && finetune_frozen(&l->ft)) {
        char names[64];
        finetune_targets_name(l->ft.targets, names, sizeof names);
        ok = json_add_number(o, "lora_rank", l->ft.rank) &&
             cJSON_AddStringToObject(o, "lora_targets", names) &&
             json_add_number(o, "base_bits", l->ft.base_bits);
    }
    if (!ok) {
        cJSON_Delete(o);
        return NULL;
    }
    return o;
}
