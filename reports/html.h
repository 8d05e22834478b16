/* html: a small writer for the self-contained HTML report page.
 *
 * The page carries its CSS inline and refers only to images beside it (no
 * network). Every number taken from a result is written with the JSON path
 * it came from and its exact value as data attributes, so a test can check
 * the page against the result it was made from. Allocation failures make
 * html_save fail rather than write a partial page.
 */
#ifndef SCALEPLAN_REPORTS_HTML_H
#define SCALEPLAN_REPORTS_HTML_H

#include <stdbool.h>
#include <stddef.h>

#include "common/error.h"

typedef struct {
    char *buf;
    size_t len, cap;
    bool failed;
} html_t;

/* Start a page with a title and the inline style sheet. */
void html_begin(html_t *h, const char *title);
/* Append raw markup (printf-style); text parts must be escaped by the
 * caller with html_text. */
void html_raw(html_t *h, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Append text with &, <, >, " escaped. */
void html_text(html_t *h, const char *text);
/* <h2>, <p> with escaped text. */
void html_heading(html_t *h, const char *text);
void html_paragraph(html_t *h, const char *cls, const char *text);
/* Tables: begin with headers, cells, end. */
void html_table_begin(html_t *h, const char *const *headers, int n);
void html_row_begin(html_t *h);
void html_cell_text(html_t *h, const char *text);
/* A number from the result at JSON path key, shown with printf format fmt
 * applied to value * scale (e.g. 100 for a percentage). The cell carries
 * data-key, data-value (exact; "null" when not finite) and, when scale is
 * not 1, data-scale, so a test can check the page against the result. */
void html_cell_num(html_t *h, const char *key, double value, const char *fmt, double scale);
void html_row_end(html_t *h);
void html_table_end(html_t *h);
/* A figure: dir/name.svg inlined into the page (so the page's script can
 * check that no two of its labels overlap), with links to the SVG and PNG
 * beside the page; the PNG as an image when the SVG cannot be read. The
 * figure's id is "fig-" name. */
void html_figure_svg(html_t *h, const char *dir, const char *name, const char *caption);
/* Tables are sortable (a click on a header) and scroll sideways on narrow
 * screens. */
/* Finish the page (with its script: sortable tables and the layout check
 * described in html.c) and write it atomically to path. */
int html_save(html_t *h, const char *path, err_t *err);
void html_free(html_t *h);

#endif
