/* plan_sizing: plan --inference-tokens (see the header). */
#include "commands/plan_sizing.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "common/json.h"
#include "common/units.h"

/* Inference runs far below training's MFU (decoding is memory-bound);
 * 0.3 is ASSUMED and printed (--inference-mfu to change it). */
#define SIZING_DEFAULT_INFER_MFU 0.3

static const cmd_opt_t sizing_opts[] = {
    {"--inference-tokens", NULL, "T",
     "lifetime inference demand (e.g. 2T): adds its FLOPs (2N a token) and cost, and the smaller "
     "model of the same loss trained longer that needs the least (Sardana et al. 2024)",
     CMD_KIND(CMD_COUNT, 0, 1e18)},
    {"--inference-mfu", NULL, "X",
     "with --inference-tokens: inference's share of the GPU's bf16 peak (default 0.3, assumed)",
     CMD_X(1e-4, 1)},
};
const cmd_group_t CMD_SIZING_OPTS = {"Inference-aware sizing", sizing_opts,
                                     sizeof sizing_opts / sizeof sizing_opts[0]};

int plan_sizing_setup(const cmd_args_t *a, plan_sizing_t *s, err_t *err)
{
    memset(s, 0, sizeof *s);
    s->inference_mfu = SIZING_DEFAULT_INFER_MFU;
    s->mfu_assumed = !cmd_has(a, "--inference-mfu");
    if (!cmd_has(a, "--inference-tokens")) {
        if (cmd_has(a, "--inference-mfu"))
            return err_setf(err, ERR_INPUT, NULL, "--inference-mfu", "goes with --inference-tokens");
        return ERR_OK;
    }
    s->on = true;
    int rc;
    if ((rc = cmd_get_double(a, "--inference-tokens", &s->inference_tokens, err)) ||
        (rc = cmd_get_double(a, "--inference-mfu", &s->inference_mfu, err)))
        return rc;
    return infsize_law_load(NULL, &s->law, err);
}

int plan_sizing_compute(plan_sizing_t *s, const model_t *m, double tokens, const ladder_t *l,
                        const gpu_t *g, err_t *err)
{
    if (!s->on)
        return ERR_OK;
    model_params_t p;
    model_params(m, &p);
    int rc = infsize_optimize(&s->law, p.active, tokens, s->inference_tokens, &s->r, err);
    if (rc || l->best < 0)
        return rc;
    const rung_t *r = &l->rung[l->best];
    double price = r->usd_per_gpu_hour;
    s->train_usd = r->cost_usd;
    /* the alternative trains at the same throughput per FLOP (an assumption) */
    s->alt_train_usd = r->cost_usd * s->r.best.train_flops / s->r.given.train_flops;
    double flops_per_gpu_s = g->peak_tflops[DTYPE_BF16] * 1e12 * s->inference_mfu;
    if (flops_per_gpu_s > 0) {
        s->infer_usd = s->r.given.infer_flops / flops_per_gpu_s / 3600 * price;
        s->alt_infer_usd = s->r.best.infer_flops / flops_per_gpu_s / 3600 * price;
    }
    return ERR_OK;
}

void plan_sizing_print(const plan_sizing_t *s)
{
    if (!s->on)
        return;
    const infsize_result_t *r = &s->r;
    char a[32], b[32], c[32], d[32], e[32];
    printf("\nInference-aware sizing (Sardana et al., ICML 2024; loss law: %s):\n", s->law.name);
    printf("  %s inference tokens at %g FLOPs a parameter and token, training at %g; the same "
           "loss %.4f either way\n",
           units_fmt_count(r->inference_tokens, a, sizeof a),
           s->law.infer_flops_per_param_token, s->law.train_flops_per_param_token, r->loss);
    printf("  as planned:  %s parameters on %s tokens: %.3g training + %.3g inference = %.3g "
           "FLOPs\n",
           units_fmt_count(r->given.params, a, sizeof a),
           units_fmt_count(r->given.train_tokens, b, sizeof b), r->given.train_flops,
           r->given.infer_flops, r->given.total_flops);
    printf("  least:       %s parameters on %s tokens: %.3g training + %.3g inference = %.3g "
           "FLOPs (%.1f%% less)\n",
           units_fmt_count(r->best.params, a, sizeof a),
           units_fmt_count(r->best.train_tokens, b, sizeof b), r->best.train_flops,
           r->best.infer_flops, r->best.total_flops, 100 * r->saving);
    if (s->train_usd > 0)
        printf("  cost: training %s + inference %s as planned; %s + %s for the least "
               "(training at the recommended rung's throughput per FLOP, inference at %.0f%% of "
               "bf16 peak%s)\n",
               units_fmt_usd(s->train_usd, a, sizeof a), units_fmt_usd(s->infer_usd, b, sizeof b),
               units_fmt_usd(s->alt_train_usd, c, sizeof c),
               units_fmt_usd(s->alt_infer_usd, d, sizeof d), 100 * s->inference_mfu,
               s->mfu_assumed ? ", ASSUMED: --inference-mfu" : "");
    (void)e;
    printf("  law: %s\n", s->law.source);
}

static bool point_json(cJSON *o, const char *key, const infsize_point_t *p, double train_usd,
                       double infer_usd)
{
    cJSON *x = cJSON_AddObjectToObject(o, key);
    return x && json_add_number(x, "params", p->params) &&
           json_add_number(x, "train_tokens", p->train_tokens) &&
           json_add_number(x, "train_flops", p->train_flops) &&
           json_add_number(x, "inference_flops", p->infer_flops) &&
           json_add_number(x, "total_flops", p->total_flops) &&
           json_add_number(x, "train_usd", train_usd) &&
           json_add_number(x, "inference_usd", infer_usd);
}

bool plan_sizing_json(const plan_sizing_t *s, cJSON *o)
{
    if (!s->on)
        return true;
    cJSON *x = cJSON_AddObjectToObject(o, "inference_sizing");
    return x && json_add_number(x, "inference_tokens", s->r.inference_tokens) &&
           json_add_number(x, "loss", s->r.loss) &&
           cJSON_AddStringToObject(x, "law", s->law.name) &&
           json_add_number(x, "inference_mfu", s->inference_mfu) &&
           cJSON_AddBoolToObject(x, "inference_mfu_assumed", s->mfu_assumed) &&
           point_json(x, "as_planned", &s->r.given, s->train_usd, s->infer_usd) &&
           point_json(x, "least", &s->r.best, s->alt_train_usd, s->alt_infer_usd) &&
           json_add_number(x, "saving", s->r.saving);
}
