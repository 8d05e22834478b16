#include "reports/csvdoc.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    char **path;
    const cJSON **value;
    int n, cap;
} leaves_t;

static void leaves_free(leaves_t *l)
{
    for (int i = 0; i < l->n; i++)
        free(l->path[i]);
    free(l->path);
    free(l->value);
    memset(l, 0, sizeof *l);
}

static bool leaves_add(leaves_t *l, const char *path, const cJSON *v)
{
    if (l->n == l->cap) {
        int cap = l->cap ? 2 * l->cap : 64;
        char **p = realloc(l->path, (size_t)cap * sizeof *p);
        if (!p)
            return false;
        l->path = p;
        const cJSON **q = realloc(l->value, (size_t)cap * sizeof *q);
        if (!q)
            return false;
        l->value = q;
        l->cap = cap;
    }
    if (!(l->path[l->n] = strdup(path)))
        return false;
    l->value[l->n++] = v;
    return true;
}

/* Every leaf under node, named prefix.key (objects) or prefix.N (arrays);
 * skip names one member of the top level not to descend into. */
static bool flatten(leaves_t *l, const cJSON *node, const char *prefix, const char *skip)
{
    int i = 0;
    const cJSON *e;
    cJSON_ArrayForEach(e, node)
    {
        char index[24];
        snprintf(index, sizeof index, "%d", i++);
        const char *key = cJSON_IsArray(node) ? index : e->string;
        if (skip && !cJSON_IsArray(node) && strcmp(key, skip) == 0)
            continue;
        /* a name as long as the keys make it: never cut to a buffer */
        size_t n = strlen(prefix) + strlen(key) + 2;
        char *name = malloc(n);
        if (!name)
            return false;
        snprintf(name, n, "%s%s%s", prefix, prefix[0] ? "." : "", key);
        bool ok = cJSON_IsObject(e) || cJSON_IsArray(e) ? flatten(l, e, name, NULL)
                                                         : leaves_add(l, name, e);
        free(name);
        if (!ok)
            return false;
    }
    return true;
}

static void put_text(FILE *out, const char *s)
{
    if (!strpbrk(s, ",\"\n\r")) {
        fputs(s, out);
        return;
    }
    fputc('"', out);
    for (; *s; s++) {
        if (*s == '"')
            fputc('"', out);
        fputc(*s, out);
    }
    fputc('"', out);
}

static void put_value(FILE *out, const cJSON *v)
{
    if (!v)
        return;
    if (cJSON_IsNumber(v))
        fprintf(out, "%.15g", v->valuedouble); /* as the JSON carries it */
    else if (cJSON_IsString(v))
        put_text(out, v->valuestring);
    else if (cJSON_IsBool(v))
        fputs(cJSON_IsTrue(v) ? "true" : "false", out);
}

static int find(const leaves_t *l, const char *path)
{
    for (int i = 0; i < l->n; i++)
        if (strcmp(l->path[i], path) == 0)
            return i;
    return -1;
}

int csv_document(FILE *out, const cJSON *doc, const char *table_key, err_t *err)
{
    if (!cJSON_IsObject(doc))
        return err_set(err, ERR_INPUT, "the result is not an object");
    const cJSON *table = table_key ? cJSON_GetObjectItemCaseSensitive(doc, table_key) : NULL;
    if (table_key && !cJSON_IsArray(table))
        return err_set(err, ERR_INPUT, "%s: not a table", table_key);
    leaves_t top = {0}, cols = {0}, row = {0};
    int rc = ERR_OK;
    if (!flatten(&top, doc, "", table_key)) {
        rc = err_set(err, ERR_RUNTIME, "out of memory");
        goto out;
    }
    if (!table) {
        fputs("key,value\n", out);
        for (int i = 0; i < top.n; i++) {
            put_text(out, top.path[i]);
            fputc(',', out);
            put_value(out, top.value[i]);
            fputc('\n', out);
        }
        goto flush;
    }
    /* the columns: every element's leaves in the order met, then the
     * document's */
    const cJSON *e;
    cJSON_ArrayForEach(e, table)
    {
        if (!cJSON_IsObject(e)) {
            rc = err_set(err, ERR_INPUT, "%s: not a table (an element is not an object)", table_key);
            goto out;
        }
        leaves_free(&row);
        if (!flatten(&row, e, table_key, NULL)) {
            rc = err_set(err, ERR_RUNTIME, "out of memory");
            goto out;
        }
        for (int i = 0; i < row.n; i++)
            if (find(&cols, row.path[i]) < 0 && !leaves_add(&cols, row.path[i], NULL)) {
                rc = err_set(err, ERR_RUNTIME, "out of memory");
                goto out;
            }
    }
    int n_elem = cols.n;
    for (int i = 0; i < top.n; i++)
        if (!leaves_add(&cols, top.path[i], top.value[i])) {
            rc = err_set(err, ERR_RUNTIME, "out of memory");
            goto out;
        }
    for (int i = 0; i < cols.n; i++) {
        put_text(out, cols.path[i]);
        fputc(i + 1 < cols.n ? ',' : '\n', out);
    }
    bool any = false;
    cJSON_ArrayForEach(e, table)
    {
        any = true;
        leaves_free(&row);
        if (!flatten(&row, e, table_key, NULL)) {
            rc = err_set(err, ERR_RUNTIME, "out of memory");
            goto out;
        }
        for (int i = 0; i < cols.n; i++) {
            if (i < n_elem) {
                int k = find(&row, cols.path[i]);
                put_value(out, k >= 0 ? row.value[k] : NULL);
            } else {
                put_value(out, cols.value[i]);
            }
            fputc(i + 1 < cols.n ? ',' : '\n', out);
        }
    }
    if (!any && cols.n > 0) /* an empty table: the document's figures still */
        for (int i = 0; i < cols.n; i++) {
            put_value(out, cols.value[i]);
            fputc(i + 1 < cols.n ? ',' : '\n', out);
        }
flush:
    if (fflush(out) != 0 || ferror(out))
        rc = err_set(err, ERR_RUNTIME, "cannot write the CSV");
out:
    leaves_free(&top);
    leaves_free(&cols);
    leaves_free(&row);
    return rc;
}
