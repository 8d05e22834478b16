#include "reports/csvout.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#define MAX_COLUMNS 256

typedef struct {
    char *name[MAX_COLUMNS];
    int n;
} columns_t;

static void columns_free(columns_t *c)
{
    for (int i = 0; i < c->n; i++)
        free(c->name[i]);
    c->n = 0;
}

static int column_index(const columns_t *c, const char *name)
{
    for (int i = 0; i < c->n; i++)
        if (strcmp(c->name[i], name) == 0)
            return i;
    return -1;
}

/* Collect the dotted leaf names of o (prefix "" at the top), in order. */
static bool collect(columns_t *c, const cJSON *o, const char *prefix)
{
    const cJSON *e;
    cJSON_ArrayForEach(e, o)
    {
        /* a name as long as the keys make it: never cut to a buffer */
        size_t n = strlen(prefix) + strlen(e->string) + 2;
        char *name = malloc(n);
        if (!name)
            return false;
        snprintf(name, n, "%s%s%s", prefix, prefix[0] ? "." : "", e->string);
        bool ok = true;
        if (cJSON_IsObject(e)) {
            ok = collect(c, e, name);
        } else if (!cJSON_IsArray(e) && column_index(c, name) < 0) {
            ok = c->n < MAX_COLUMNS;
            if (ok) {
                c->name[c->n++] = name; /* the list owns it now */
                name = NULL;
            }
        }
        free(name);
        if (!ok)
            return false;
    }
    return true;
}

/* The leaf of o at dotted (NULL when absent or out of memory: the cell
 * is then empty). */
static const cJSON *leaf(const cJSON *o, const char *dotted)
{
    char *buf = strdup(dotted);
    const cJSON *node = buf ? o : NULL;
    char *save = NULL;
    for (char *seg = buf ? strtok_r(buf, ".", &save) : NULL; seg && node;
         seg = strtok_r(NULL, ".", &save))
        node = cJSON_GetObjectItemCaseSensitive(node, seg);
    free(buf);
    return node;
}

char *csv_quote(const char *s, char *buf)
{
    char *o = buf;
    if (!strpbrk(s, ",\"\n\r")) {
        strcpy(buf, s);
        return buf;
    }
    *o++ = '"';
    for (; *s; s++) {
        if (*s == '"')
            *o++ = '"';
        *o++ = *s;
    }
    *o++ = '"';
    *o = '\0';
    return buf;
}

void csv_write_cell(FILE *out, const char *s)
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
    if (cJSON_IsNumber(v))
        fprintf(out, "%.15g", v->valuedouble); /* as the JSON carries it */
    else if (cJSON_IsString(v))
        csv_write_cell(out, v->valuestring);
    else if (cJSON_IsBool(v))
        fputs(cJSON_IsTrue(v) ? "true" : "false", out);
}

int csv_from_json(FILE *out, const cJSON *node, const char *name, err_t *err)
{
    columns_t cols = {{0}, 0};
    if (cJSON_IsObject(node)) {
        if (!collect(&cols, node, "")) {
            columns_free(&cols);
            return err_set(err, ERR_RUNTIME, "out of memory (or over %d columns)", MAX_COLUMNS);
        }
        fputs("key,value\n", out);
        for (int i = 0; i < cols.n; i++) {
            csv_write_cell(out, cols.name[i]);
            fputc(',', out);
            put_value(out, leaf(node, cols.name[i]));
            fputc('\n', out);
        }
    } else if (cJSON_IsArray(node)) {
        const cJSON *e;
        cJSON_ArrayForEach(e, node)
        {
            if (!cJSON_IsObject(e)) {
                columns_free(&cols);
                return err_set(err, ERR_INPUT, "%s: not a table (an element is not an object)",
                               name);
            }
            if (!collect(&cols, e, "")) {
                columns_free(&cols);
                return err_set(err, ERR_RUNTIME, "out of memory (or over %d columns)",
                               MAX_COLUMNS);
            }
        }
        for (int i = 0; i < cols.n; i++) {
            csv_write_cell(out, cols.name[i]);
            fputc(i + 1 < cols.n ? ',' : '\n', out);
        }
        cJSON_ArrayForEach(e, node)
        {
            for (int i = 0; i < cols.n; i++) {
                put_value(out, leaf(e, cols.name[i]));
                fputc(i + 1 < cols.n ? ',' : '\n', out);
            }
        }
    } else {
        return err_set(err, ERR_INPUT, "%s: not a table", name);
    }
    columns_free(&cols);
    if (fflush(out) != 0 || ferror(out))
        return err_set(err, ERR_RUNTIME, "cannot write the CSV");
    return ERR_OK;
}
