#include "common/progress.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/clock.h"

/* A log line every this many seconds when stderr is not a terminal. */
#define LOG_INTERVAL_S 30.0

struct progress {
    FILE *out;
    char label[48];
    double total;
    int bar;            /* a redrawn bar; else log lines */
    double interval_s;  /* log lines: seconds between them */
    double last_draw_s; /* monotonic time of the last redraw or line */
    double start_s;
    double done;        /* the last reported amount */
    int drawn;          /* something was written */
};

int progress_enabled(void)
{
    const char *env = getenv("SCALEPLAN_PROGRESS");
    return !(env && strcmp(env, "0") == 0);
}

progress_t *progress_create_on(FILE *out, const char *label, double total, int bar,
                               double interval_s)
{
    if (!out || !(total > 0) || !(interval_s > 0))
        return NULL;
    progress_t *p = calloc(1, sizeof *p);
    if (!p)
        return NULL;
    p->out = out;
    snprintf(p->label, sizeof p->label, "%s", label ? label : "");
    p->total = total;
    p->bar = bar;
    p->interval_s = interval_s;
    p->start_s = clock_now_s();
    p->last_draw_s = p->start_s;
    return p;
}

progress_t *progress_create(const char *label, double total)
{
    if (!progress_enabled())
        return NULL;
    return progress_create_on(stderr, label, total, isatty(STDERR_FILENO), LOG_INTERVAL_S);
}

static double fraction(const progress_t *p, double done)
{
    double frac = done / p->total;
    return frac < 0 ? 0 : frac > 1 ? 1 : frac;
}

static void draw_bar(progress_t *p, double t, double frac)
{
    enum { WIDTH = 30 };
    char bar[WIDTH + 1];
    int filled = (int)(frac * WIDTH + 0.5);
    for (int i = 0; i < WIDTH; i++)
        bar[i] = i < filled ? '#' : '.';
    bar[WIDTH] = '\0';
    double elapsed = t - p->start_s;
    double eta = frac > 0.01 ? elapsed * (1 - frac) / frac : -1;
    if (eta >= 0)
        fprintf(p->out, "\r%s [%s] %5.1f%%  eta %.0fs ", p->label, bar, 100 * frac, eta);
    else
        fprintf(p->out, "\r%s [%s] %5.1f%% ", p->label, bar, 100 * frac);
}

void progress_update(progress_t *p, double done)
{
    if (!p)
        return;
    p->done = done;
    double t = clock_now_s(), frac = fraction(p, done);
    if (p->bar) {
        if ((t - p->last_draw_s < 0.1 || t - p->start_s < 0.5) && done < p->total)
            return; /* quiet for the first half second: short work needs no bar */
        draw_bar(p, t, frac);
    } else {
        if (t - p->last_draw_s < p->interval_s || done >= p->total)
            return;
        double elapsed = t - p->start_s;
        fprintf(p->out, "%s: %.1f%% after %.0f s", p->label, 100 * frac, elapsed);
        if (frac > 0.01)
            fprintf(p->out, ", about %.0f s to go", elapsed * (1 - frac) / frac);
        fputc('\n', p->out);
    }
    p->last_draw_s = t;
    fflush(p->out);
    p->drawn = 1;
}

void progress_destroy(progress_t *p)
{
    if (!p)
        return;
    if (p->drawn && p->bar) {
        /* Clear the line so the next output starts clean. */
        fprintf(p->out, "\r%*s\r", 80, "");
        fflush(p->out);
    } else if (p->drawn) {
        fprintf(p->out, "%s: %.1f%% done in %.0f s\n", p->label, 100 * fraction(p, p->done),
                clock_now_s() - p->start_s);
        fflush(p->out);
    }
    free(p);
}
