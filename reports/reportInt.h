/* reportInt: what reports/report.c shares with its pages, report_plan.c
 * (the plan) and report_kinds.c (sim, reliability, validate, validate
 * --log), and nothing else (SQLite's *Int.h split, issue 34).
 *
 * report.c owns the helpers below (a text buffer for CSV files and plot
 * scripts, a figure, a table of numbers, the breakdown's parts), checks a
 * result's keys and picks its page; each page's renderer fills the page
 * and writes its files into the report's private folder.
 */
#ifndef SCALEPLAN_REPORTS_REPORTINT_H
#define SCALEPLAN_REPORTS_REPORTINT_H

#include <stdbool.h>
#include <stddef.h>

#include <cjson/cJSON.h>

#include "common/error.h"
#include "reports/html.h"
#include "reports/report.h"

/* A growable text buffer for CSV files and plot scripts. A failed
 * allocation sets failed and later writes do nothing; report_tsave then
 * reports it. Zero-initialise to start. */
typedef struct {
    char *s;
    size_t n, cap;
    bool failed;
} text_t;

/* The page being written and where its files go. */
typedef struct {
    const char *dir; /* the report's private folder: every file is written here */
    html_t *h;
    report_info_t *info;
    bool gnuplot;
} ctx_t;

/* One number of the result shown in a two-column table. */
typedef struct {
    const char *key, *label, *fmt;
    double scale; /* 100 for a fraction shown as a percentage */
} measure_t;

/* One number of each element of an array in the result, a table column. */
typedef struct {
    const char *key, *fmt;
    double scale; /* 100 for a fraction shown as a percentage */
} report_col_t;

/* One part of the step's breakdown (or of its memory): its key in the
 * result and the name people read. */
typedef struct {
    const char *key, *label;
} report_part_t;

enum { N_PARTS = 11, N_MEM = 5 };
/* The breakdown's parts and the memory's kinds, in the page's fixed order. */
extern const report_part_t report_parts[N_PARTS];
extern const report_part_t report_mem_parts[N_MEM];

/* What a validate --log result adds to the ladder plot: measured.csv
 * (gpus, measured tokens/s, measured scaling %) and, when the doubling
 * check predicted one, next.csv (gpus, corrected tokens/s, low, high). */
typedef struct {
    bool measured;
    bool next;
    bool planned;  /* ladder_plot.csv is a plan's ladder (else the runs' predictions) */
} ladder_extra_t;

/* ---- report.c: the helpers */

/* Append printf-style text to t. */
void report_tprintf(text_t *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Append s as one CSV cell (RFC 4180 quoting). */
void report_tcell(text_t *t, const char *s);
/* Append s as one cell of a CSV file gnuplot reads (no quotes, no line
 * breaks inside). */
void report_tlabel(text_t *t, const char *s);
/* Write t to dir/name and empty t (its memory freed, success or not).
 * ERR_RUNTIME when t failed or on I/O errors. */
int report_tsave(text_t *t, const char *dir, const char *name, err_t *err);
/* Draw the plot name from the gnuplot script body and put it on the page
 * with caption; without gnuplot, nothing. ERR_RUNTIME when gnuplot fails. */
int report_figure(ctx_t *c, const char *name, const char *caption, const char *body, err_t *err);
/* A two-column table of the result's numbers rows (those r has), after an
 * optional first row (first, first_text) when first is not NULL. */
void report_measures_table(html_t *h, const cJSON *r, const char *first, const char *first_text,
                           const measure_t *rows, size_t n);

/* The cells of element i of the result's array (its path, for the cells'
 * keys: "what_if"), one per column of cols[n]: e's numbers, each keyed
 * "array[i].key". */
void report_num_cells(html_t *h, const char *array, int i, const cJSON *e,
                      const report_col_t *cols, size_t n);

/* ---- report_plan.c: the plan's page and the plots other pages share.
 * Each returns 0, or ERR_RUNTIME for I/O failures. */

int report_render_plan(const cJSON *r, ctx_t *c, err_t *err);
/* The step's timeline tl (nothing when tl is missing or empty) over pp
 * pipeline stages. */
int report_render_timeline(const cJSON *tl, double pp, ctx_t *c, err_t *err);
/* The checkpoint interval sweep sw (nothing when missing) with its best
 * and Young/Daly intervals marked. */
int report_render_sweep(const cJSON *sw, double best_s, double young_daly_s, ctx_t *c, err_t *err);
/* The header line of ladder_plot.csv into plot. */
void report_ladder_plot_header(text_t *plot);
/* ladder.csv and ladder_plot.csv from a plan's ladder; *feasible counts
 * its feasible rungs. */
int report_ladder_csvs(const cJSON *ladder, ctx_t *c, int *feasible, err_t *err);
/* The ladder plot from ladder_plot.csv, with extra's files when not NULL. */
int report_ladder_plot(ctx_t *c, const ladder_extra_t *extra, err_t *err);

/* ---- report_kinds.c: the other kinds' pages */

int report_render_sim(const cJSON *r, ctx_t *c, err_t *err);
int report_render_reliability(const cJSON *r, ctx_t *c, err_t *err);
int report_render_validate(const cJSON *r, ctx_t *c, err_t *err);
int report_render_validate_logs(const cJSON *r, ctx_t *c, err_t *err);

#endif
