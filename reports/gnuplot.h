/* gnuplot: draw a plot by running gnuplot as a separate process.
 *
 * A plot is a data file and a script body; gp_render adds a preamble that
 * draws it twice, as SVG and as PNG (cairo), beside each other in the
 * report directory, and runs "gnuplot NAME.gp" there. When gnuplot is not
 * installed, gp_available says so and the report keeps its tables.
 */
#ifndef SCALEPLAN_REPORTS_GNUPLOT_H
#define SCALEPLAN_REPORTS_GNUPLOT_H

#include <stdbool.h>
#include <stddef.h>

#include "common/error.h"

/* Whether gnuplot can be run ($SCALEPLAN_GNUPLOT or gnuplot on PATH). */
bool gp_available(void);

/* Write DIR/NAME.gp (preamble + body) and run it with DIR as gnuplot's
 * working directory to make DIR/NAME.svg and DIR/NAME.png: gnuplot writes
 * nowhere else, so DIR should be a folder only this report writes (the
 * report's private folder, reports/outdir.h). The body plots its data with
 * paths relative to DIR. ERR_RUNTIME naming the script when gnuplot fails
 * (its own messages go to standard error). */
int gp_render(const char *dir, const char *name, const char *body, err_t *err);

/* The install hint shown when gnuplot is missing. */
#define GP_INSTALL_HINT "install gnuplot (apt-get install gnuplot-nox, or make deps) and rerun"

#endif
