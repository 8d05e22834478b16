#include "reports/table.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "reports/csvout.h"

struct table {
    int ncols;
    char **header;
    bool *right;
    char ***rows; /* rows[i][j] */
    int nrows, cap;
    bool failed;  /* an allocation failed; printing reports it */
};

static char *dup_str(const char *s)
{
    size_t n = strlen(s ? s : "");
    char *d = malloc(n + 1);
    if (d)
        memcpy(d, s ? s : "", n + 1);
    return d;
}

table_t *table_create(int ncols, const char *const *headers)
{
    if (ncols < 1)
        return NULL;
    table_t *t = calloc(1, sizeof *t);
    if (!t)
        return NULL;
    t->ncols = ncols;
    t->header = calloc((size_t)ncols, sizeof *t->header);
    t->right = calloc((size_t)ncols, sizeof *t->right);
    if (!t->header || !t->right) {
        table_destroy(t);
        return NULL;
    }
    for (int j = 0; j < ncols; j++)
        if (!(t->header[j] = dup_str(headers ? headers[j] : ""))) {
            table_destroy(t);
            return NULL;
        }
    return t;
}

static void free_row(char **row, int ncols)
{
    if (!row)
        return;
    for (int j = 0; j < ncols; j++)
        free(row[j]);
    free(row);
}

void table_destroy(table_t *t)
{
    if (!t)
        return;
    for (int i = 0; i < t->nrows; i++)
        free_row(t->rows[i], t->ncols);
    free(t->rows);
    if (t->header)
        for (int j = 0; j < t->ncols; j++)
            free(t->header[j]);
    free(t->header);
    free(t->right);
    free(t);
}

void table_align_right(table_t *t, int col)
{
    if (t && col >= 0 && col < t->ncols)
        t->right[col] = true;
}

int table_rows(const table_t *t) { return t ? t->nrows : 0; }

int table_add_row(table_t *t, const char *const *cells)
{
    if (!t)
        return ERR_RUNTIME;
    if (t->nrows == t->cap) {
        int cap = t->cap ? 2 * t->cap : 16;
        char ***rows = realloc(t->rows, (size_t)cap * sizeof *rows);
        if (!rows) {
            t->failed = true;
            return ERR_RUNTIME;
        }
        t->rows = rows;
        t->cap = cap;
    }
    char **row = calloc((size_t)t->ncols, sizeof *row);
    if (!row) {
        t->failed = true;
        return ERR_RUNTIME;
    }
    for (int j = 0; j < t->ncols; j++)
        if (!(row[j] = dup_str(cells[j]))) {
            free_row(row, t->ncols);
            t->failed = true;
            return ERR_RUNTIME;
        }
    t->rows[t->nrows++] = row;
    return ERR_OK;
}

int table_add_rowf(table_t *t, const char *fmt, ...)
{
    if (!t)
        return ERR_RUNTIME;
    char line[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    const char **cells = calloc((size_t)t->ncols, sizeof *cells);
    if (!cells) {
        t->failed = true;
        return ERR_RUNTIME;
    }
    char *p = line;
    for (int j = 0; j < t->ncols; j++) {
        cells[j] = p ? p : "";
        char *tab = p ? strchr(p, '\t') : NULL;
        if (tab) {
            *tab = '\0';
            p = tab + 1;
        } else {
            p = NULL;
        }
    }
    int rc = table_add_row(t, cells);
    free(cells);
    return rc;
}

int table_terminal_width(void)
{
    const char *cols = getenv("COLUMNS");
    if (cols && atoi(cols) > 0)
        return atoi(cols);
    struct winsize ws;
    if (isatty(STDOUT_FILENO) && ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 &&
        ws.ws_col > 0)
        return ws.ws_col;
    return 0;
}

/* Display width of a UTF-8 string (code points, not bytes). */
static int text_width(const char *s)
{
    int w = 0;
    for (; *s; s++)
        if (((unsigned char)*s & 0xC0) != 0x80)
            w++;
    return w;
}

static void print_cell(FILE *out, const char *s, int width, bool right, bool last)
{
    int w = text_width(s);
    if (w > width) {
        /* Shorten to width - 3 characters and mark it. */
        int keep = width > 3 ? width - 3 : 0, seen = 0;
        const char *p = s;
        while (*p && seen < keep) {
            p++;
            while ((*p & 0xC0) == 0x80)
                p++;
            seen++;
        }
        fprintf(out, "%.*s%s", (int)(p - s), s, width > 3 ? "..." : "");
        return;
    }
    if (right)
        fprintf(out, "%*s%s", width - w, "", s);
    else if (last)
        fputs(s, out);
    else
        fprintf(out, "%s%*s", s, width - w, "");
}

int table_print(const table_t *t, FILE *out, int indent, int max_width)
{
    if (!t || t->failed)
        return ERR_RUNTIME;
    int *width = calloc((size_t)t->ncols, sizeof *width);
    if (!width)
        return ERR_RUNTIME;
    for (int j = 0; j < t->ncols; j++) {
        width[j] = text_width(t->header[j]);
        for (int i = 0; i < t->nrows; i++) {
            int w = text_width(t->rows[i][j]);
            if (w > width[j])
                width[j] = w;
        }
    }
    if (max_width == 0)
        max_width = table_terminal_width();
    if (max_width > 0) {
        int total = indent;
        for (int j = 0; j < t->ncols; j++)
            total += width[j] + (j ? 2 : 0);
        /* Too wide: take the excess from the widest left-aligned column. */
        while (total > max_width) {
            int widest = -1;
            for (int j = 0; j < t->ncols; j++)
                if (!t->right[j] && (widest < 0 || width[j] > width[widest]))
                    widest = j;
            if (widest < 0 || width[widest] <= 8)
                break;
            int cut = total - max_width;
            if (cut > width[widest] - 8)
                cut = width[widest] - 8;
            width[widest] -= cut;
            total -= cut;
        }
    }
    for (int i = -1; i < t->nrows; i++) {
        fprintf(out, "%*s", indent, "");
        for (int j = 0; j < t->ncols; j++) {
            const char *cell = i < 0 ? t->header[j] : t->rows[i][j];
            if (j)
                fputs("  ", out);
            print_cell(out, cell, width[j], t->right[j], j == t->ncols - 1);
        }
        fputc('\n', out);
    }
    free(width);
    return ferror(out) ? ERR_RUNTIME : ERR_OK;
}

int table_print_csv(const table_t *t, FILE *out)
{
    if (!t || t->failed)
        return ERR_RUNTIME;
    for (int i = -1; i < t->nrows; i++) {
        for (int j = 0; j < t->ncols; j++) {
            if (j)
                fputc(',', out);
            csv_write_cell(out, i < 0 ? t->header[j] : t->rows[i][j]);
        }
        fputc('\n', out);
    }
    return ferror(out) ? ERR_RUNTIME : ERR_OK;
}
