#include "models/flops.h"

#include <string.h>

const char *model_flop_op_name(flop_op_t op)
{
    static const char *names[FLOP_OP_COUNT] = {
        "qkv", "attn_scores", "attn_values", "attn_out",
        "mlp_in", "mlp_out", "logits"};
    return op < FLOP_OP_COUNT ? names[op] : "?";
}

void model_flops(const model_t *m, int seq_len, model_flops_t *out)
{
    double h = m->hidden, f = m->ffn, s = seq_len, L = m->n_layers;
    double qw = model_q_width(m), kvw = model_kv_width(m);
    memset(out, 0, sizeof *out);
    double *op = out->fwd_per_token;
    op[FLOP_QKV] = L * 2 * h * (qw + 2 * kvw);
    op[FLOP_ATTN_SCORES] = L * 2 * s * qw; /* each token against s keys */
    op[FLOP_ATTN_VALUES] = L * 2 * s * qw;
    op[FLOP_ATTN_OUT] = L * 2 * qw * h;
    op[FLOP_MLP_IN] = L * 2 * h * f * (m->mlp == MODEL_MLP_SWIGLU ? 2 : 1);
    op[FLOP_MLP_OUT] = L * 2 * f * h;
    op[FLOP_LOGITS] = 2 * h * (double)m->vocab;
    for (int i = 0; i < FLOP_OP_COUNT; i++) {
        out->fwd_per_token_total += op[i];
        if (i != FLOP_LOGITS)
            out->fwd_per_token_layers += op[i];
    }
    out->model_per_token = 3 * out->fwd_per_token_total;
}

double model_recompute_flops_per_token(const model_t *m, int seq_len,
                                       recompute_t r)
{
    model_flops_t f;
    model_flops(m, seq_len, &f);
    switch (r) {
    case RECOMPUTE_FULL:
        return f.fwd_per_token_layers;
    case RECOMPUTE_SELECTIVE:
        return f.fwd_per_token[FLOP_ATTN_SCORES] + f.fwd_per_token[FLOP_ATTN_VALUES];
    case RECOMPUTE_OPS: {
        /* every second matmul: wk, wo and w3 (w2 without a gate) */
        double qw = model_q_width(m), kvw = model_kv_width(m);
        double wk = f.fwd_per_token[FLOP_QKV] * kvw / (qw + 2 * kvw);
        double third = m->mlp == MODEL_MLP_SWIGLU ? f.fwd_per_token[FLOP_MLP_IN] / 2
                                                  : f.fwd_per_token[FLOP_MLP_OUT];
        return wk + f.fwd_per_token[FLOP_ATTN_OUT] + third;
    }
    default:
        return 0;
    }
}

static double tokens_per_step(const layout_t *l)
{
    return (double)l->global_batch * l->seq_len;
}

double model_flops_per_step(const model_t *m, const layout_t *l)
{
    model_flops_t f;
    model_flops(m, l->seq_len, &f);
    return f.model_per_token * tokens_per_step(l);
}

double model_hw_flops_per_step(const model_t *m, const layout_t *l)
{
    return model_flops_per_step(m, l) +
           model_recompute_flops_per_token(m, l->seq_len, l->recompute) *
               tokens_per_step(l);
}
