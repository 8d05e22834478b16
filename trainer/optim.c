#include "trainer/optim.h"

#include <math.h>

void optim_defaults(optim_config_t *c)
{
    c->lr = 6e-4;
    c->min_lr = 6e-5;
    c->warmup_steps = 10;
    c->total_steps = 1000;
    c->beta1 = 0.9;
    c->beta2 = 0.95;
    c->eps = 1e-8;
    c->weight_decay = 0.1;
    c->grad_clip = 1.0;
}

double optim_lr(const optim_config_t *c, long step)
{
    if (c->warmup_steps > 0 && step < c->warmup_steps)
        return c->lr * (double)(step + 1) / c->warmup_steps;
    long decay_steps = c->total_steps - c->warmup_steps;
    if (decay_steps <= 0)
        return c->lr;
    double progress = (double)(step - c->warmup_steps) / (double)decay_steps;
    if (progress > 1)
        progress = 1;
    return c->min_lr + 0.5 * (c->lr - c->min_lr) * (1 + cos(3.14159265358979323846 * progress));
}

double optim_clip_factor(const optim_config_t *c, double grad_norm)
{
    if (c->grad_clip <= 0 || !(grad_norm > c->grad_clip))
        return 1;
    return c->grad_clip / (grad_norm + 1e-6);
}

void optim_adamw(const optim_config_t *c, float *params, const float *grads, float *m, float *v,
                 const unsigned char *decay, size_t n, long t, double lr, double grad_scale)
{
    double bc1 = 1 - pow(c->beta1, (double)t), bc2 = 1 - pow(c->beta2, (double)t);
    float b1 = (float)c->beta1, b2 = (float)c->beta2, scale = (float)grad_scale;
#pragma omp parallel for schedule(static)
    for (size_t i = 0; i < n; i++) {
        float g = grads[i] * scale;
        m[i] = b1 * m[i] + (1 - b1) * g;
        v[i] = b2 * v[i] + (1 - b2) * g * g;
        double mhat = m[i] / bc1, vhat = v[i] / bc2;
        double wd = (!decay || decay[i]) ? c->weight_decay * params[i] : 0;
        params[i] -= (float)(lr * (mhat / (sqrt(vhat) + c->eps) + wd));
    }
}
