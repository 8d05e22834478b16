#include "trainer/monitor.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* EMA weight of the newest loss: about a 10-step memory. */
#define LOSS_EMA 0.1

void mon_init(monitor_t *m, double predicted_tokens_per_s)
{
    memset(m, 0, sizeof *m);
    m->predicted_tokens_per_s = predicted_tokens_per_s;
}

static int raise_alert(monitor_t *m, long step, const char *kind, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static int raise_alert(monitor_t *m, long step, const char *kind, const char *fmt, ...)
{
    if (m->n_alerts >= MON_MAX_ALERTS) {
        m->dropped++;
        return 1;
    }
    mon_alert_t *a = &m->alerts[m->n_alerts++];
    a->step = step;
    snprintf(a->kind, sizeof a->kind, "%s", kind);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(a->message, sizeof a->message, fmt, ap);
    va_end(ap);
    return 1;
}

int mon_step(monitor_t *m, long step, double loss, double grad_norm, double tokens_per_s,
             double step_s)
{
    int n = 0;
    if (!isfinite(loss) || !isfinite(grad_norm)) {
        n += raise_alert(m, step, "nan_inf", "loss %g, gradient norm %g: not finite", loss,
                         grad_norm);
        return n; /* nothing else is meaningful */
    }
    if (m->seen >= MON_WARMUP_STEPS && loss > MON_SPIKE_FACTOR * m->loss_avg)
        n += raise_alert(m, step, "loss_spike", "loss %.4f is over %.0fx its moving average %.4f",
                         loss, MON_SPIKE_FACTOR, m->loss_avg);
    if (grad_norm > MON_GRAD_HIGH)
        n += raise_alert(m, step, "grad_norm_high", "gradient norm %.4g is above %.0f", grad_norm,
                         MON_GRAD_HIGH);
    if (grad_norm < MON_GRAD_LOW)
        n += raise_alert(m, step, "grad_norm_low", "gradient norm %.4g is below %g", grad_norm,
                         MON_GRAD_LOW);
    if (m->predicted_tokens_per_s > 0 && tokens_per_s < MON_THROUGHPUT_FRACTION * m->predicted_tokens_per_s)
        n += raise_alert(m, step, "throughput_low",
                         "%.0f tokens/s is under %.0f%% of the predicted %.0f", tokens_per_s,
                         100 * MON_THROUGHPUT_FRACTION, m->predicted_tokens_per_s);
    m->loss_avg = m->seen == 0 ? loss : (1 - LOSS_EMA) * m->loss_avg + LOSS_EMA * loss;
    m->seen++;
    m->since_ckpt_s += step_s;
    return n;
}

int mon_checkpoint(monitor_t *m, long step, double blocking_s)
{
    int n = 0;
    if (m->since_ckpt_s > 0 && blocking_s > MON_CKPT_FRACTION * m->since_ckpt_s)
        n += raise_alert(m, step, "checkpoint_io",
                         "saving took %.3f s, %.1f%% of the %.3f s trained since the last save "
                         "(over %.0f%%)",
                         blocking_s, 100 * blocking_s / m->since_ckpt_s, m->since_ckpt_s,
                         100 * MON_CKPT_FRACTION);
    m->since_ckpt_s = 0;
    return n;
}

bool mon_raised(const monitor_t *m, long step, const char *kind)
{
    for (int i = 0; i < m->n_alerts; i++)
        if (m->alerts[i].step == step && strcmp(m->alerts[i].kind, kind) == 0)
            return true;
    return false;
}
