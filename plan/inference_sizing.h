/* inference_sizing: a model's lifetime compute - training plus the
 * inference it will serve - and the model of the same quality that needs
 * the least of it (Sardana, Doubov and Frankle, "Beyond Chinchilla-Optimal",
 * ICML 2024).
 *
 * Quality is the loss of a parametric law L(N, D) = E + A/N^alpha +
 * B/D^beta (sim/catalog/scaling_laws.json, Hoffmann et al. 2022). A model
 * of N parameters trained on D tokens reaches L(N, D); any smaller N' down
 * to the size whose loss floor E + A/N'^alpha reaches L needs more tokens
 * D'(N') to reach the same loss. Lifetime FLOPs are
 * train_flops x N x D + infer_flops x N x inference tokens (6 and 2 per
 * parameter and token); with inference demand the minimum moves to smaller
 * models trained longer. Everything here is arithmetic on the law: no step
 * is simulated (the plan command prices the FLOPs at its own throughput).
 */
#ifndef SCALEPLAN_PLAN_INFERENCE_SIZING_H
#define SCALEPLAN_PLAN_INFERENCE_SIZING_H

#include "common/error.h"

typedef struct {
    char name[32];
    double e, a, b, alpha, beta;     /* L = e + a / N^alpha + b / D^beta */
    double train_flops_per_param_token;  /* 6 */
    double infer_flops_per_param_token;  /* 2 */
    char source[1024];
} infsize_law_t;

/* Load the law named name (NULL or "" = the catalog's default) from
 * sim/catalog/scaling_laws.json. ERR_INPUT for an unknown name, ERR_RUNTIME
 * for a catalog file that cannot be read. */
int infsize_law_load(const char *name, infsize_law_t *out, err_t *err);

/* Loss of params parameters trained on tokens tokens (both > 0). */
double infsize_loss(const infsize_law_t *l, double params, double tokens);

/* Training tokens params parameters need to reach loss; INFINITY when the
 * model's floor e + a/params^alpha is at or above it. */
double infsize_tokens_for_loss(const infsize_law_t *l, double params, double loss);

/* Training tokens for which params parameters are compute-optimal under the
 * law (the least loss at fixed N x D): where the two terms' slopes match,
 * alpha A / N^alpha = beta B / D^beta, so
 * D = (beta B N^alpha / (alpha A))^(1/beta). */
double infsize_optimal_tokens(const infsize_law_t *l, double params);

/* One model's lifetime FLOPs. */
typedef struct {
    double params, train_tokens;
    double train_flops, infer_flops, total_flops;
} infsize_point_t;

typedef struct {
    double loss;             /* the quality both models reach */
    double inference_tokens; /* lifetime demand */
    infsize_point_t given;   /* the model as planned */
    infsize_point_t best;    /* the least lifetime FLOPs at the same loss */
    double saving;           /* 1 - best.total / given.total (>= 0) */
} infsize_result_t;

/* The lifetime FLOPs of params trained on train_tokens serving
 * inference_tokens (>= 0), and the model of the same loss with the least
 * (searched over parameter counts from just above the loss floor to 4x
 * params, to 0.1% in N). ERR_INPUT when params or train_tokens is not
 * positive or inference_tokens is negative (naming --inference-tokens). */
int infsize_optimize(const infsize_law_t *l, double params, double train_tokens,
                     double inference_tokens, infsize_result_t *out, err_t *err);

/* The lifetime FLOPs of a model of params parameters reaching loss (its
 * tokens from infsize_tokens_for_loss; totals INFINITY if it cannot). */
infsize_point_t infsize_point(const infsize_law_t *l, double params, double loss,
                              double inference_tokens);

#endif
