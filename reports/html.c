#include "reports/html.h"

#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/fileio.h"
#include "common/numfmt.h"
#include "common/strfmt.h"

/* Light and dark (prefers-color-scheme) through colour variables; plots keep
 * a light card in both; print: the summary alone on the first page, no
 * table or figure split across pages. */
static const char *STYLE =
    ":root{--fg:#1d2330;--muted:#5b6475;--bg:#fff;--line:#e6e9ef;--head:#f5f7fa;"
    "--accent:#3b6fd8;--rec:#f2f6fc;--best:#fff6db;--flag:#fde8ea;--card:#f7f9fc}"
    "@media (prefers-color-scheme:dark){:root{--fg:#e6e9ef;--muted:#aab2c0;--bg:#14171c;"
    "--line:#2c323c;--head:#1e232b;--accent:#7fa7ff;--rec:#1b2433;--best:#3a3118;"
    "--flag:#3d1f24;--card:#1b1f26}a{color:#9dbbff}}"
    "body{font-family:-apple-system,'Segoe UI',Roboto,Helvetica,Arial,sans-serif;"
    "max-width:1200px;margin:2em auto;padding:0 1em;color:var(--fg);background:var(--bg)}"
    "h1{font-size:1.6em;margin-bottom:.2em}h2{font-size:1.2em;margin-top:1.8em;"
    "border-bottom:1px solid var(--line);padding-bottom:.2em}h3{font-size:1em;margin-top:1.2em}"
    "p.rec{font-size:1.05em;line-height:1.5;background:var(--rec);border-left:4px solid "
    "var(--accent);padding:.8em 1em}p.note{color:var(--muted);font-size:.9em}"
    "p.lead{font-size:1.1em}p.check{background:var(--rec);border-left:4px solid var(--accent);"
    "padding:.6em 1em}"
    ".facts{display:grid;grid-template-columns:repeat(auto-fit,minmax(210px,1fr));gap:.8em}"
    ".fact{background:var(--card);border:1px solid var(--line);border-radius:6px;padding:.7em .9em}"
    ".fact .label{color:var(--muted);font-size:.8em;text-transform:uppercase;letter-spacing:.05em}"
    ".fact .value{font-size:1.3em;font-weight:600;margin:.15em 0;overflow-wrap:anywhere}"
    ".fact .detail{color:var(--muted);font-size:.85em}"
    ".scroll{overflow-x:auto}"
    "table{border-collapse:collapse;font-size:.88em;margin:.6em 0}"
    "th,td{padding:.3em .6em;border-bottom:1px solid var(--line);text-align:right}"
    "th{background:var(--head);font-weight:600}td.t,th.t{text-align:left}td{white-space:nowrap}"
    "#glossary td.t{white-space:normal;min-width:9em}#glossary td.t:nth-child(2){min-width:22em}"
    "table.sortable th{cursor:pointer}th[aria-sort=ascending]::after{content:' \\25B2'}"
    "th[aria-sort=descending]::after{content:' \\25BC'}"
    "tr.best td{background:var(--best);font-weight:600}tr.flag td{background:var(--flag)}"
    "code{font-size:.92em}"
    "figure{margin:1.2em 0}figure .plot{background:#fff;border:1px solid var(--line);"
    "border-radius:4px;max-width:100%}figure svg{display:block;width:100%;height:auto}"
    "figcaption{color:var(--muted);font-size:.9em}"
    "@page{margin:12mm}"
    "@media print{body{max-width:none;margin:0;font-size:9pt}#summary{break-after:page}"
    "h1{margin-top:0}h2{margin-top:.8em}th,td{padding:.12em .4em}.facts{gap:.4em}"
    ".fact{padding:.35em .6em}table,figure,.fact{break-inside:avoid}details{display:none}"
    "a{color:inherit}}";

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
    html_raw(h, "<div class=\"scroll\"><table class=\"sortable\"><tr>");
    for (int i = 0; i < n; i++) {
        html_raw(h, i == 0 ? "<th class=\"t\">" : "<th>");
        html_text(h, headers[i]);
        html_raw(h, "</th>");
    }
    html_raw(h, "</tr>\n");
}

void html_row_begin(html_t *h) { html_raw(h, "<tr>"); }
void html_row_end(html_t *h) { html_raw(h, "</tr>\n"); }
void html_table_end(html_t *h) { html_raw(h, "</table></div>\n"); }

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
    numfmt_group(shown, sizeof shown); /* 1,637,978: readable, the same digits */
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

/* A file's text (NUL-terminated, heap), or NULL when it cannot be read. */
static char *slurp_text(const char *path)
{
    char *data = NULL;
    size_t len = 0;
    err_t err;
    if (fileio_read_all(path, &data, &len, &err) != 0)
        return NULL;
    char *text = realloc(data, len + 1);
    if (!text) {
        free(data);
        return NULL;
    }
    text[len] = '\0';
    return text;
}

/* An SVG document inlined into the page: its namespace declarations left
 * out (an HTML parser puts an inline <svg> in its namespace, and the page
 * names no address outside itself), and its ids and the references to them
 * prefixed with the figure's name, so that the ids of several plots (gnuplot
 * names its point shapes gpPt0 in each) never clash. */
static void append_svg(html_t *h, const char *name, const char *svg)
{
    static const char *const drop[] = {" xmlns=\"http://www.w3.org/2000/svg\"",
                                       " xmlns:xlink=\"http://www.w3.org/1999/xlink\""};
    static const char *const ids[] = {"id='", "id=\"", "href='#", "href=\"#", "url(#"};
    for (const char *p = svg; *p;) {
        bool done = false;
        for (size_t k = 0; k < 2 && !done; k++)
            if (strncmp(p, drop[k], strlen(drop[k])) == 0) {
                p += strlen(drop[k]);
                done = true;
            }
        for (size_t k = 0; k < 5 && !done; k++) {
            size_t n = strlen(ids[k]);
            if (strncmp(p, ids[k], n) == 0 && (p == svg || !isalnum((unsigned char)p[-1]))) {
                append(h, p, n);
                html_raw(h, "%s-", name);
                p += n;
                done = true;
            }
        }
        if (!done)
            append(h, p++, 1);
    }
}

void html_figure_svg(html_t *h, const char *dir, const char *name, const char *caption)
{
    char *path = str_printf("%s/%s.svg", dir, name);
    char *svg = path ? slurp_text(path) : NULL;
    const char *start = svg ? strstr(svg, "<svg") : NULL;
    html_raw(h, "<figure id=\"fig-%s\">", name);
    if (start) { /* inline, so the page's script sees every label */
        html_raw(h, "<div class=\"plot\" role=\"img\" aria-label=\"");
        html_text(h, caption);
        html_raw(h, "\">");
        append_svg(h, name, start);
        html_raw(h, "</div>");
    } else {
        html_raw(h, "<a href=\"%s.svg\"><img class=\"plot\" src=\"%s.png\" alt=\"", name, name);
        html_text(h, caption);
        html_raw(h, "\"></a>");
    }
    html_raw(h, "<figcaption>");
    html_text(h, caption);
    html_raw(h, " (<a href=\"%s.svg\">SVG</a>, <a href=\"%s.png\">PNG</a>)</figcaption></figure>\n",
             name, name);
    free(svg);
    free(path);
}

/* The page's own script, run on load:
 * - sortable tables: a click on a header sorts by that column (numbers by
 *   their data-value or their text, the rest as text), again to reverse;
 * - its own layout check, written into the DOM for tests (chromium
 *   --dump-dom) and people: body data-labels (text labels in the plots),
 *   data-label-overlaps (pairs of labels whose boxes overlap, listed in
 *   #layout-check), data-figures, data-figures-visible, data-sections-visible
 *   (the ids of the sections with a size on screen), data-images and
 *   data-images-loaded. */
static const char *SCRIPT =
    "<script>(function(){"
    "function val(td){if(!td)return null;var v=td.getAttribute('data-value');"
    "if(v!==null&&v!=='null')return parseFloat(v);"
    "var t=td.textContent.replace(/[$,%\\s]/g,'');var m=/^-?[0-9.]+([kMBTPEZ])?$/.exec(t);"
    "if(!m)return null;var f=parseFloat(t);var k={k:1e3,M:1e6,B:1e9,T:1e12,P:1e15,E:1e18,Z:1e21};"
    "return m[1]?f*k[m[1]]:f;}"
    "function sortBy(tb,c,th){var body=tb.tBodies[0],rows=[].slice.call(body.rows);"
    "var head=rows.shift();var dir=th.getAttribute('aria-sort')==='ascending'?-1:1;"
    "rows.sort(function(a,b){var x=a.cells[c],y=b.cells[c],p=val(x),q=val(y);"
    "if(p!==null&&q!==null)return (p-q)*dir;if(p!==null)return -1;if(q!==null)return 1;"
    "return (x?x.textContent:'').localeCompare(y?y.textContent:'')*dir;});"
    "[].forEach.call(head.cells,function(h){h.removeAttribute('aria-sort');});"
    "th.setAttribute('aria-sort',dir>0?'ascending':'descending');"
    "rows.forEach(function(r){body.appendChild(r);});}"
    "[].forEach.call(document.querySelectorAll('table.sortable'),function(tb){"
    "var hs=tb.rows[0].cells,r1=tb.rows[1];[].forEach.call(hs,function(th,c){th.tabIndex=0;"
    "if(r1&&r1.cells[c]&&r1.cells[c].className==='t')th.className='t';"
    "th.title='sort by this column';th.addEventListener('click',function(){sortBy(tb,c,th);});"
    "th.addEventListener('keydown',function(e){if(e.key==='Enter')sortBy(tb,c,th);});});});"
    "function check(){var b=document.body,n=0,labels=0,out=[];"
    "[].forEach.call(document.querySelectorAll('figure svg'),function(svg){"
    "var ts=[].filter.call(svg.querySelectorAll('text'),function(t){"
    "var r=t.getBoundingClientRect();return t.textContent.trim()!==''&&r.width>0&&r.height>0;});"
    "var rs=ts.map(function(t){return t.getBoundingClientRect();});labels+=ts.length;"
    "for(var i=0;i<rs.length;i++)for(var j=i+1;j<rs.length;j++){var a=rs[i],c=rs[j];"
    "var w=Math.min(a.right,c.right)-Math.max(a.left,c.left),"
    "h=Math.min(a.bottom,c.bottom)-Math.max(a.top,c.top);"
    "if(w>1&&h>1){n++;out.push(svg.closest('figure').id+': \"'+ts[i].textContent+'\" / \"'+"
    "ts[j].textContent+'\"');}}});"
    "var figs=document.querySelectorAll('figure'),vis=0;[].forEach.call(figs,function(f){"
    "var r=f.getBoundingClientRect();if(r.width>0&&r.height>40)vis++;});"
    "var secs=[];[].forEach.call(document.querySelectorAll('section[id]'),function(s){"
    "var r=s.getBoundingClientRect();if(r.width>0&&r.height>0)secs.push(s.id);});"
    "var im=document.images,ok=0;for(var k=0;k<im.length;k++){"
    "if(im[k].complete&&im[k].naturalWidth>0)ok++;}"
    "b.setAttribute('data-labels',labels);b.setAttribute('data-label-overlaps',n);"
    "b.setAttribute('data-figures',figs.length);b.setAttribute('data-figures-visible',vis);"
    "b.setAttribute('data-sections-visible',secs.join(','));"
    "b.setAttribute('data-images',im.length);b.setAttribute('data-images-loaded',ok);"
    "b.setAttribute('data-width',window.innerWidth);"
    "var pre=document.getElementById('layout-check');if(pre)pre.textContent=out.join('\\n');}"
    "window.addEventListener('load',check);window.addEventListener('resize',check);"
    "})();</script>\n";

int html_save(html_t *h, const char *path, err_t *err)
{
    html_raw(h, "<p class=\"note\">Made by scaleplan. Numbers are estimates from its models; the "
                "data behind every table and plot is in the CSV files beside this page.</p>\n"
                "<pre id=\"layout-check\" hidden></pre>\n");
    append(h, SCRIPT, strlen(SCRIPT));
    html_raw(h, "</body></html>\n");
    if (h->failed)
        return err_setf(err, ERR_RUNTIME, path, NULL, "out of memory writing the report");
    return fileio_write_atomic(path, h->buf, h->len, err);
}

void html_free(html_t *h)
{
    free(h->buf);
    memset(h, 0, sizeof *h);
}
