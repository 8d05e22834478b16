/* cost_finetune: the work LoRA / QLoRA adds to a block's frozen GEMMs
 * (models/finetune.h; sim/costsInt.h). */
#include "sim/costsInt.h"

/* The adapters of one LoRA target on this GPU (models/finetune.h): in and
 * out the linear's widths on this rank. Forward x A then (x A) B and the
 * add into the base's output; backward B's input and weight gradients,
 * A's, and the add into the input gradient. Thin GEMMs (one side the rank)
 * in the run's 16-bit type: PEFT runs the fp32 adapters under autocast. */
static void price_adapter(pricer_t *pr, const char *name, double in, double out)
{
    dtype_t d = dtype16(pr);
    double T = pr->T, r = pr->in->layout->ft.rank, e = pr->e;
    double fwd = prof_gemm_time(pr->p, d, T, r, in, 1) + prof_gemm_time(pr->p, d, T, out, r, 1) +
                 mem(pr, 3 * T * out * e);
    double dgrad = prof_gemm_time(pr->p, d, T, r, out, 1) + prof_gemm_time(pr->p, d, T, in, r, 1) +
                   mem(pr, 3 * T * in * e);
    double wgrad = prof_gemm_time(pr->p, d, r, out, T, 1) + prof_gemm_time(pr->p, d, in, r, T, 1);
    add_op(pr, name, fwd, dgrad + wgrad);
    pr->out->bwd_wgrad_s += wgrad;
}

/* LoRA / QLoRA work one block adds to its frozen GEMMs: every targeted
 * linear's adapters (column-parallel ones see the whole input and the
 * rank's output shard, row-parallel ones the other way round) and, with a
 * quantized base, bitsandbytes dequantizing each base weight to bf16
 * before its GEMM: a memory-bound pass (read base bits, write 2 bytes)
 * forward and again backward (the input gradient needs the weight). */
void cost_finetune(pricer_t *pr)
{
    const model_t *m = pr->in->model;
    const finetune_t *f = &pr->in->layout->ft;
    if (!finetune_frozen(f))
        return;
    double h = m->hidden, t = pr->t, qw = model_q_width(m), kvw = model_kv_width(m);
    double ffn = m->ffn;
    static const char *const names[7] = {"lora_q",  "lora_k",  "lora_v",   "lora_o",
                                         "lora_gate", "lora_up", "lora_down"};
    const double in[7] = {h, h, h, qw / t, h, h, ffn / t};
    const double out[7] = {qw / t, kvw / t, kvw / t, h, ffn / t, ffn / t, h};
    for (int i = 0; i < 7; i++) {
        if (!(f->targets & (1u << i)) || (i == 4 && m->mlp != MODEL_MLP_SWIGLU))
            continue;
        price_adapter(pr, names[i], in[i], out[i]);
    }
    if (f->base_bits < 16) {
        double w = finetune_block_linear_params(m, pr->in->layout->tp);
        double pass = mem(pr, w * (finetune_base_bytes_per_param(f) + 2));
        add_op(pr, "dequant", pass, pass);
    }
}
