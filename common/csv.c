#include "common/csv.h"

#include <stdlib.h>
#include <string.h>

#include "common/fileio.h"

struct csv {
    char *text;    /* cells, NUL-separated, unescaped in place */
    char **cells;  /* row-major, ncols per row */
    int ncols, nrows; /* nrows counts the header */
};

void csv_free(csv_t *c)
{
    if (!c)
        return;
    free(c->text);
    free(c->cells);
    free(c);
}

int csv_load(const char *path, csv_t **out, err_t *err)
{
    *out = NULL;
    csv_t *c = calloc(1, sizeof *c);
    if (!c)
        return err_set(err, ERR_RUNTIME, "out of memory");
    size_t len = 0;
    int rc = fileio_read_all(path, &c->text, &len, err);
    if (rc) {
        free(c);
        return rc;
    }
    size_t cap = 1024, n = 0;
    c->cells = malloc(cap * sizeof *c->cells);
    if (!c->cells)
        goto oom;
    /* Unescape in place: w writes, r reads. */
    char *r = c->text, *w = c->text, *end = c->text + len;
    int line = 1, col = 0, row = 0;
    while (r < end || col > 0) {
        char *cell = w;
        if (r < end && *r == '"') {
            r++;
            for (;;) {
                if (r >= end) {
                    rc = err_setf(err, ERR_INPUT, path, NULL,
                                  "line %d: a quoted field is never closed", line);
                    goto fail;
                }
                if (*r == '"') {
                    if (r + 1 < end && r[1] == '"') {
                        *w++ = '"';
                        r += 2;
                        continue;
                    }
                    r++;
                    break;
                }
                if (*r == '\n')
                    line++;
                *w++ = *r++;
            }
        }
        while (r < end && *r != ',' && *r != '\n' && *r != '\r')
            *w++ = *r++;
        char sep = r < end ? *r : '\n';
        if (sep == '\r') {
            r++;
            sep = (r < end && *r == '\n') ? *r : '\n';
        }
        if (r < end)
            r++;
        *w++ = '\0';
        if (n == cap) {
            cap *= 2;
            char **more = realloc(c->cells, cap * sizeof *more);
            if (!more)
                goto oom;
            c->cells = more;
        }
        c->cells[n++] = cell;
        col++;
        if (sep == '\n') {
            if (col == 1 && cell[0] == '\0') { /* a blank line is not a row */
                n--;
                col = 0;
                line++;
                continue;
            }
            if (row == 0)
                c->ncols = col;
            else if (col > c->ncols) {
                rc = err_setf(err, ERR_INPUT, path, NULL,
                              "line %d: %d cells but the header has %d", line, col, c->ncols);
                goto fail;
            }
            while (col < c->ncols) { /* pad short rows with empty cells */
                if (n == cap) {
                    cap *= 2;
                    char **more = realloc(c->cells, cap * sizeof *more);
                    if (!more)
                        goto oom;
                    c->cells = more;
                }
                c->cells[n++] = w - 1; /* the "" just written */
                col++;
            }
            row++;
            col = 0;
            line++;
        }
    }
    c->nrows = row;
    *out = c;
    return ERR_OK;
oom:
    rc = err_set(err, ERR_RUNTIME, "out of memory reading %s", path);
fail:
    csv_free(c);
    return rc;
}

int csv_rows(const csv_t *c) { return c->nrows > 0 ? c->nrows - 1 : 0; }

const char *csv_get(const csv_t *c, int row, const char *column)
{
    int j = -1;
    for (int k = 0; k < c->ncols; k++)
        if (strcmp(c->cells[k], column) == 0)
            j = k;
    if (j < 0)
        return NULL;
    if (row < 0 || row >= csv_rows(c))
        return "";
    return c->cells[(size_t)(row + 1) * c->ncols + j];
}
