#include "reports/html.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/fileio.h"

static const char *STYLE =
    "body{font-family:-apple-system,'Segoe UI',Roboto,Helvetica,Arial,sans-serif;"
    "max-width:1200px;margin:2em auto;padding:0 1em;color:#1d2330;background:#fff}"
    "h1{font-size:1.6em;margin-bottom:.2em}h2{font-size:1.2em;margin-top:1.8em;"
    "border-bottom:1px solid #dde2ea;padding-bottom:.2em}"
    "p.rec{font-size:1.05em;line-height:1.5;background:#f2f6fc;border-left:4px solid #3b6fd8;"
    "padding:.8em 1em}p.note{color:#5b6475;font-size:.9em}"
    "table{border-collapse:collapse;font-size:.88em;margin:.6em 0}"
    "th,td{padding:.3em .6em;border-bottom:1px solid #e6e9ef;text-align:right}"
    "th{background:#f5f7fa;font-weight:600}td.t,th.t{text-align:left}"
    "tr.best td{background:#fff6db;font-weight:600}tr.flag td{background:#fde8ea}"
    "figure{margin:1.2em 0}figure img{max-width:100%;border:1px solid #e6e9ef}"
    "figcaption{color:#5b6475;font-size:.9em}";

static void append(html_t *h, const char *s, size_t n)
{
    if (h->failed)
        return;
    if (h->len + n + 1 > h->cap) {
        size_t cap = h->cap ? h->cap : 8192;
        while (h->len + n + 1 > cap)
            cap *= 2;
        char *b = realloc(h->buf, cap);
        if (!b) {
            h->failed = true;
            return;
        }
        h->buf = b;
        h->cap = cap;
    }
    memcpy(h->buf + h->len, s, n);
    h->len += n;
    h->buf[h->len] = '\0';
}

void html_raw(html_t *h, const char *fmt, ...)
{
    char small[1024];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(small, sizeof small, fmt, ap);
    va_end(ap);
    if (n < 0) {
        h->failed = true;
        return;
    }
    if ((size_t)n < sizeof small) {
        append(h, small, (size_t)n);
        return;
    }
    char *big = malloc((size_t)n + 1);
    if (!big) {
        h->failed = true;
        return;
    }
    va_start(ap, fmt);
    vsnprintf(big, (size_t)n + 1, fmt, ap);
    va_end(ap);
    append(h, big, (size_t)n);
    free(big);
}

void html_text(html_t *h, const char *text)
{
    for (const char *p = text ? text : ""; *p; p++) {
        switch (*p) {
        case '&': append(h, "&amp;", 5); break;
        case '<': append(h, "&lt;", 4); break;
        case '>': append(h, "&gt;", 4); break;
        case '"': append(h, "&quot;", 6); break;
        default: append(h, p, 1);
        }
    }
}

void html_begin(html_t *h, const char *title)
{
    memset(h, 0, sizeof *h);
    html_raw(h, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
                "<meta name=\"viewport\" content=\"width=device-width,initial-scale=1\"><title>");
    html_text(h, title);
    html_raw(h, "</title><style>%s</style></head>\n<body>\n<h1>", STYLE);
    html_text(h, title);
    html_raw(h, "</h1>\n");
}

void html_heading(html_t *h, const char *text)
{
    html_raw(h, "<h2>");
    html_text(h, text);
    html_raw(h, "</h2>\n");
}

void html_paragraph(html_t *h, const char *cls, const char *text)
{
    if (cls)
        html_raw(h, "<p class=\"%s\">", cls);
    else
        html_raw(h, "<p>");
    html_text(h, text);
    html_raw(h, "</p>\n");
}

void html_table_begin(html_t *h, const char *const *headers, int n)
{
    html_raw(h, "<table><tr>");
    for (int i = 0; i < n; i++) {
        html_raw(h, i == 0 ? "<th class=\"t\">" : "<th>");
        html_text(h, headers[i]);
        html_raw(h, "</th>");
    }
    html_raw(h, "</tr>\n");
}

void html_row_begin(html_t *h) { html_raw(h, "<tr>"); }
void html_row_end(html_t *h) { html_raw(h, "</tr>\n"); }
void html_table_end(html_t *h) { html_raw(h, "</table>\n"); }

void html_cell_text(html_t *h, const char *text)
{
    html_raw(h, "<td class=\"t\">");
    html_text(h, text);
    html_raw(h, "</td>");
}

void html_cell_num(html_t *h, const char *key, double value, const char *fmt, double scale)
{
    char shown[64];
    if (isfinite(value))
        snprintf(shown, sizeof shown, fmt, value * scale);
    else
        snprintf(shown, sizeof shown, "-");
    html_raw(h, "<td data-key=\"");
    html_text(h, key);
    if (scale != 1)
        html_raw(h, "\" data-scale=\"%.17g", scale);
    if (isfinite(value))
        html_raw(h, "\" data-value=\"%.17g\">", value);
    else
        html_raw(h, "\" data-value=\"null\">");
    html_text(h, shown);
    html_raw(h, "</td>");
}

void html_figure(html_t *h, const char *name, const char *caption)
{
    html_raw(h, "<figure><a href=\"%s.svg\"><img src=\"%s.png\" alt=\"", name, name);
    html_text(h, caption);
    html_raw(h, "\"></a><figcaption>");
    html_text(h, caption);
    html_raw(h, " (<a href=\"%s.svg\">SVG</a>)</figcaption></figure>\n", name);
}

int html_save(html_t *h, const char *path, err_t *err)
{
    html_raw(h, "<p class=\"note\">Made by scaleplan. Numbers are estimates from its models; the "
                "data behind every table and plot is in the CSV files beside this page.</p>\n"
                "<script>window.addEventListener('load',function(){var i=document.images,ok=0;"
                "for(var k=0;k<i.length;k++){if(i[k].complete&&i[k].naturalWidth>0)ok++;}"
                "document.body.setAttribute('data-images',i.length);"
                "document.body.setAttribute('data-images-loaded',ok);});</script>\n"
                "</body></html>\n");
    if (h->failed)
        return err_setf(err, ERR_RUNTIME, path, NULL, "out of memory writing the report");
    return fileio_write_atomic(path, h->buf, h->len, err);
}

void html_free(html_t *h)
{
    free(h->buf);
    memset(h, 0, sizeof *h);
}
