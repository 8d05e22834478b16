#include "common/progress.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/clock.h"

struct progress {
    char label[48];
    double total;
    double last_draw_s; /* monotonic time of the last redraw */
    double start_s;
    int drawn;
};

int progress_enabled(void)
{
    const char *env = getenv("SCALEPLAN_PROGRESS");
    if (env && strcmp(env, "0") == 0)
        return 0;
    return isatty(STDERR_FILENO);
}

progress_t *progress_create(const char *label, double total)
{
    if (!progress_enabled() || !(total > 0))
        return NULL;
    progress_t *p = calloc(1, sizeof *p);
    if (!p)
        return NULL;
    snprintf(p->label, sizeof p->label, "%s", label ? label : "");
    p->total = total;
    p->start_s = clock_now_s();
    p->last_draw_s = 0;
    return p;
}

void progress_update(progress_t *p, double done)
{
    if (!p)
        return;
    double t = clock_now_s();
    if (t - p->last_draw_s < 0.1 && done < p->total)
        return;
    /* Quiet for the first half second: short work needs no bar. */
    if (t - p->start_s < 0.5 && done < p->total)
        return;
    p->last_draw_s = t;
    double frac = done / p->total;
    if (frac < 0)
        frac = 0;
    if (frac > 1)
        frac = 1;
    enum { WIDTH = 30 };
    char bar[WIDTH + 1];
    int filled = (int)(frac * WIDTH + 0.5);
    for (int i = 0; i < WIDTH; i++)
        bar[i] = i < filled ? '#' : '.';
    bar[WIDTH] = '\0';
    double elapsed = t - p->start_s;
    double eta = frac > 0.01 ? elapsed * (1 - frac) / frac : -1;
    if (eta >= 0)
        fprintf(stderr, "\r%s [%s] %5.1f%%  eta %.0fs ", p->label, bar,
                100 * frac, eta);
    else
        fprintf(stderr, "\r%s [%s] %5.1f%% ", p->label, bar, 100 * frac);
    fflush(stderr);
    p->drawn = 1;
}

void progress_destroy(progress_t *p)
{
    if (!p)
        return;
    if (p->drawn) {
        /* Clear the line so the next output starts clean. */
        fprintf(stderr, "\r%*s\r", 80, "");
        fflush(stderr);
    }
    free(p);
}
