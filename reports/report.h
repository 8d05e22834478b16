/* report: turn a result (the --json output of plan, sim, reliability or
 * validate) into a directory a person would rather look at than read:
 * index.html (one self-contained page), every plot as PNG and SVG (drawn by
 * gnuplot), the data behind them as CSV, and result.json itself.
 *
 * The kind of result is recognised from its keys; each kind is one entry in
 * a table of renderers. Without gnuplot the page keeps its tables and says
 * how to install it.
 */
#ifndef SCALEPLAN_REPORTS_REPORT_H
#define SCALEPLAN_REPORTS_REPORT_H

#include <stdbool.h>

#include <cjson/cJSON.h>

#include "common/error.h"

typedef struct {
    const char *kind;   /* "plan", "sim", "reliability", "validate", "validate-log" */
    int plots;          /* plots drawn */
    bool no_gnuplot;    /* gnuplot was missing: tables only */
    char *index;        /* path of index.html (heap: report_info_free) */
} report_info_t;

/* Write the report for result into dir (created if needed). Every file is
 * written into a private folder and the whole report then swapped into
 * dir (reports/outdir.h): a link planted in dir under a report file's name
 * is replaced, never written through; the files of a previous report that
 * this one does not write are removed (only files scaleplan wrote there);
 * two reports into one folder at once leave one of them whole. source
 * names the result in errors (its file, or the command). ERR_INPUT when
 * the result is not one scaleplan writes or misses a key its kind needs
 * (the error gives the key's path), ERR_RUNTIME for I/O failures; dir
 * then keeps what it had. On success the caller frees info with
 * report_info_free; on error there is nothing to free. */
int report_write(const cJSON *result, const char *source, const char *dir, report_info_t *info,
                 err_t *err);

/* Free what report_write put in info. Safe on a zeroed info. */
void report_info_free(report_info_t *info);

#endif
