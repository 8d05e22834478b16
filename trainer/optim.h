/* optim: AdamW with decoupled weight decay, the learning-rate schedule and
 * gradient clipping by global norm - the optimizer step of the reference
 * trainer, over a flat range of parameters (all of a rank's, or its ZeRO-1
 * shard).
 */
#ifndef SCALEPLAN_TRAINER_OPTIM_H
#define SCALEPLAN_TRAINER_OPTIM_H

#include <stddef.h>

typedef struct {
    double lr;           /* peak learning rate */
    double min_lr;       /* end of the cosine decay */
    int warmup_steps;    /* linear warm-up from lr / warmup_steps */
    int total_steps;     /* the cosine reaches min_lr here */
    double beta1, beta2, eps;
    double weight_decay; /* applied to parameters whose decay flag is set */
    double grad_clip;    /* global gradient norm bound; 0 = no clipping */
} optim_config_t;

/* GPT-3 style defaults: lr 6e-4 to 6e-5, warm-up 10 steps, betas 0.9/0.95,
 * eps 1e-8, weight decay 0.1, clip 1.0 (Brown et al. 2020, appendix B). */
void optim_defaults(optim_config_t *c);

/* Learning rate at step (0-based): linear warm-up, then cosine to min_lr. */
double optim_lr(const optim_config_t *c, long step);

/* The factor gradients are scaled by so their global norm is at most
 * grad_clip (1 when below, or when clipping is off). */
double optim_clip_factor(const optim_config_t *c, double grad_norm);

/* One AdamW update of n parameters: grads are multiplied by grad_scale
 * first; t is the 1-based update count for bias correction; decay[i]
 * (may be NULL = all) says whether weight decay applies to element i. */
void optim_adamw(const optim_config_t *c, float *params, const float *grads, float *m, float *v,
                 const unsigned char *decay, size_t n, long t, double lr, double grad_scale);

#endif
