/* yaml: a line-by-line reader for the YAML subset launcher configs use
 * (YAML 1.1 scalars as PyYAML's safe_load types them, yaml.org/type/),
 * refusing the rest in one line. */
#include "inputs/yaml.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/strfmt.h"

#define MAX_DEPTH 16     /* mapping levels; accelerate's configs use 2 */
#define MAX_KEY 512      /* a dotted path's bytes */
#define MAX_ENTRIES 4096 /* keys in one file: bounds the duplicate search */

/* One open mapping: the indentation of its keys (-1 until its first key is
 * seen) and how much of the dotted path names it. */
typedef struct {
    int indent;
    int key_indent; /* the indentation of the key that opened it */
    size_t path_len;
} level_t;

typedef struct {
    const char *origin;
    toml_doc_t *doc;
    err_t *err;
    int line;
    level_t lv[MAX_DEPTH + 1]; /* lv[0]: the document's top mapping */
    int depth;
    bool pending;        /* the last key had no value: a mapping or list may follow */
    char path[MAX_KEY];
    toml_entry_t *seq;   /* the block sequence being filled, or NULL */
    size_t seq_index;    /* its index in doc->entries (entries move on realloc) */
    int seq_indent;
    bool seen_content;
} yp_t;

static int fail(yp_t *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int fail(yp_t *p, const char *fmt, ...)
{
    char msg[300];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return err_setf(p->err, ERR_INPUT, p->origin, NULL, "line %d: %s", p->line, msg);
}

static int oom(yp_t *p)
{
    return err_set(p->err, ERR_RUNTIME, "out of memory reading %s", p->origin);
}

static char *dup_range(const char *s, size_t n)
{
    char *d = malloc(n + 1);
    if (d) {
        memcpy(d, s, n);
        d[n] = '\0';
    }
    return d;
}

/* The text of a line without its comment: a '#' at the start or after a
 * space, outside quotes. Returns the content's length, trailing spaces cut. */
static size_t content_len(const char *s, size_t n)
{
    char quote = 0;
    size_t i = 0;
    for (; i < n; i++) {
        char c = s[i];
        if (quote) {
            if (quote == '"' && c == '\\')
                i++; /* an escaped character, a quote included */
            else if (c == quote)
                quote = 0;
        } else if (c == '\'' || c == '"') {
            if (i == 0 || s[i - 1] == ' ' || s[i - 1] == '[' || s[i - 1] == ',' ||
                s[i - 1] == ':' || s[i - 1] == '-')
                quote = c;
        } else if (c == '#' && (i == 0 || s[i - 1] == ' ')) {
            break;
        }
    }
    if (i > n)
        i = n; /* a backslash ended the line */
    while (i > 0 && (s[i - 1] == ' ' || s[i - 1] == '\t'))
        i--;
    return i;
}

static bool word_in(const char *s, size_t n, const char *const *words)
{
    for (; *words; words++)
        if (strlen(*words) == n && memcmp(*words, s, n) == 0)
            return true;
    return false;
}

/* A plain scalar typed as PyYAML's resolver types it. *is_null when it is
 * null (the key is then as if absent). */
static int plain_scalar(yp_t *p, const char *s, size_t n, toml_value_t *v, bool *is_null)
{
    static const char *const nulls[] = {"~", "null", "Null", "NULL", NULL};
    static const char *const trues[] = {"true", "True", "TRUE", "yes", "Yes", "YES",
                                        "on",   "On",   "ON",   NULL};
    static const char *const falses[] = {"false", "False", "FALSE", "no", "No", "NO",
                                         "off",   "Off",   "OFF",   NULL};
    memset(v, 0, sizeof *v);
    v->line = p->line;
    *is_null = word_in(s, n, nulls);
    if (*is_null)
        return ERR_OK;
    if (strchr("&*!|>%@`{", s[0]))
        return fail(p, "'%c' starts YAML this reader does not take (anchors, aliases, tags, "
                       "block scalars, flow mappings): write the plain value",
                    s[0]);
    if (word_in(s, n, trues) || word_in(s, n, falses)) {
        v->type = TOML_BOOL;
        v->b = word_in(s, n, trues);
        return ERR_OK;
    }
    char *text = dup_range(s, n);
    if (!text)
        return oom(p);
    size_t k = (text[0] == '-' || text[0] == '+') ? 1 : 0;
    bool digits = k < n && strspn(text + k, "0123456789") == n - k;
    if (digits && n - k > 1 && text[k] == '0') {
        free(text);
        return fail(p, "'%.*s': a number with a leading zero is octal in YAML 1.1; write it "
                       "without the zero or quote it",
                    (int)n, s);
    }
    char *end = NULL;
    errno = 0;
    if (digits) {
        long long i = strtoll(text, &end, 10);
        if (errno == ERANGE) {
            free(text);
            return fail(p, "'%.*s' is out of range", (int)n, s);
        }
        v->type = TOML_INT;
        v->i = i;
        v->f = (double)i;
        free(text);
        return ERR_OK;
    }
    /* PyYAML reads a float only with a decimal point (1e-5 stays a string) */
    double f = strchr(text, '.') && strspn(text + k, "0123456789._eE+-") == n - k
                   ? strtod(text, &end)
                   : 0;
    if (end && *end == '\0' && end != text && isfinite(f)) {
        v->type = TOML_FLOAT;
        v->f = f;
        free(text);
        return ERR_OK;
    }
    v->type = TOML_STRING;
    v->str = text;
    return ERR_OK;
}

/* A quoted scalar filling the whole of s[0..n): always a string. */
static int quoted_scalar(yp_t *p, const char *s, size_t n, toml_value_t *v)
{
    char q = s[0];
    if (n < 2 || s[n - 1] != q)
        return fail(p, "a quoted value must end with its quote on the same line");
    char *out = malloc(n);
    if (!out)
        return oom(p);
    size_t o = 0;
    for (size_t i = 1; i + 1 < n; i++) {
        char c = s[i];
        if (q == '\'' && c == '\'') {
            if (s[i + 1] != '\'' || i + 2 >= n) {
                free(out);
                return fail(p, "a single quote inside '...' is written ''");
            }
            i++;
        } else if (q == '"' && c == '"') {
            free(out);
            return fail(p, "text after a closing quote");
        } else if (q == '"' && c == '\\') {
            char e = s[++i];
            const char *from = "\"\\/nt0", *to = "\"\\/\n\t";
            const char *at = i + 1 < n ? strchr(from, e) : NULL;
            if (!at || e == '0' || !e) {
                free(out);
                return fail(p, "escape '\\%c' is not read here (\\\" \\\\ \\n \\t are)", e ? e : ' ');
            }
            c = to[at - from];
        }
        out[o++] = c;
    }
    out[o] = '\0';
    memset(v, 0, sizeof *v);
    v->type = TOML_STRING;
    v->str = out;
    v->line = p->line;
    return ERR_OK;
}

static int scalar(yp_t *p, const char *s, size_t n, toml_value_t *v, bool *is_null)
{
    *is_null = false;
    if (s[0] == '\'' || s[0] == '"')
        return quoted_scalar(p, s, n, v);
    return plain_scalar(p, s, n, v, is_null);
}

static void value_release(toml_value_t *v)
{
    free(v->str);
    for (int i = 0; i < v->n_items; i++)
        value_release(&v->items[i]);
    free(v->items);
    memset(v, 0, sizeof *v);
}

/* Store v (taken over, also on error) under the current path. */
static int add_entry(yp_t *p, toml_value_t *v)
{
    toml_doc_t *d = p->doc;
    int rc = ERR_OK;
    if (toml_find(d, p->path))
        rc = fail(p, "'%s' is given twice", p->path);
    else if (d->n >= MAX_ENTRIES)
        rc = fail(p, "more than %d keys: not a launcher config", MAX_ENTRIES);
    if (!rc && d->n == d->cap) {
        size_t cap = d->cap ? 2 * d->cap : 32;
        toml_entry_t *e = realloc(d->entries, cap * sizeof *e);
        if (!e)
            rc = oom(p);
        else {
            d->entries = e;
            d->cap = cap;
        }
    }
    char *key = rc ? NULL : strdup(p->path);
    if (!rc && !key)
        rc = oom(p);
    if (rc) {
        value_release(v);
        return rc;
    }
    d->entries[d->n].key = key;
    d->entries[d->n].v = *v;
    d->entries[d->n].used = false;
    d->n++;
    return ERR_OK;
}

/* Append one scalar to an array value (taken over, also on error). */
static int append_item(yp_t *p, toml_value_t *arr, toml_value_t *item)
{
    toml_value_t *items = realloc(arr->items, (size_t)(arr->n_items + 1) * sizeof *items);
    if (!items) {
        value_release(item);
        return oom(p);
    }
    arr->items = items;
    arr->items[arr->n_items++] = *item;
    return ERR_OK;
}

/* [a, b, 'c'] on one line: an array of scalars. */
static int flow_sequence(yp_t *p, const char *s, size_t n, toml_value_t *arr)
{
    memset(arr, 0, sizeof *arr);
    arr->type = TOML_ARRAY;
    arr->line = p->line;
    if (s[n - 1] != ']')
        return fail(p, "a [ list must close with ] on the same line");
    size_t i = 1, end = n - 1;
    while (i < end) {
        while (i < end && s[i] == ' ')
            i++;
        size_t j = i;
        char quote = (s[i] == '\'' || s[i] == '"') ? s[i] : 0;
        for (j = quote ? i + 1 : i; j < end && (quote ? s[j] != quote : s[j] != ','); j++)
            ;
        if (quote)
            j = j < end ? j + 1 : j;
        size_t k = j;
        while (k > i && s[k - 1] == ' ')
            k--;
        if (k > i) {
            if (s[i] == '[' || s[i] == '{') {
                value_release(arr);
                return fail(p, "nested lists and mappings inside [ ] are not read");
            }
            toml_value_t item;
            bool is_null;
            int rc = scalar(p, s + i, k - i, &item, &is_null);
            if (!rc && !is_null)
                rc = append_item(p, arr, &item);
            if (rc) {
                value_release(arr);
                return rc;
            }
        }
        while (j < end && s[j] == ' ')
            j++;
        if (j < end && s[j] != ',') {
            value_release(arr);
            return fail(p, "expected ',' between list items");
        }
        i = j + 1;
    }
    return ERR_OK;
}

/* Close the mappings deeper than indent; the line must then sit at the
 * indentation of an open mapping's keys. */
static int dedent(yp_t *p, int indent)
{
    if (p->pending) {
        level_t *top = &p->lv[p->depth];
        if (indent > top->key_indent) {
            top->indent = indent; /* the new mapping's keys */
            p->pending = false;
            return ERR_OK;
        }
        p->depth--; /* "key:" with nothing under it: null, not stored */
        p->pending = false;
    }
    bool closed = false;
    while (p->depth > 0 && p->lv[p->depth].indent > indent) {
        p->depth--;
        closed = true;
    }
    if (p->lv[p->depth].indent < 0)
        p->lv[p->depth].indent = indent;
    if (p->lv[p->depth].indent != indent)
        return fail(p, indent > p->lv[p->depth].indent && !closed
                           ? "indented where no mapping opens (a value continued on the next "
                             "line is not read: keep it on one line)"
                           : "the indentation matches no enclosing key");
    p->path[p->lv[p->depth].path_len] = '\0';
    return ERR_OK;
}

/* "- item" under the key that opened the list. */
static int sequence_item(yp_t *p, int indent, const char *s, size_t n)
{
    if (p->pending && indent >= p->lv[p->depth].key_indent) {
        toml_value_t arr;
        memset(&arr, 0, sizeof arr);
        arr.type = TOML_ARRAY;
        arr.line = p->line;
        int rc = add_entry(p, &arr);
        if (rc)
            return rc;
        p->seq_index = p->doc->n - 1;
        p->seq_indent = indent;
        p->pending = false;
        p->depth--; /* the key holds a list, not a mapping */
    } else if (!p->seq || indent != p->seq_indent) {
        return fail(p, "a '- ' list item must follow a key with no value");
    }
    p->seq = &p->doc->entries[p->seq_index];
    size_t k = 1;
    while (k < n && s[k] == ' ')
        k++;
    if (k >= n)
        return fail(p, "an empty list item");
    const char *item = s + k;
    size_t m = n - k;
    if (item[0] == '-' || item[0] == '[' || memchr(item, ':', m))
        if (item[0] != '\'' && item[0] != '"')
            return fail(p, "lists of mappings or of lists are not read");
    toml_value_t v;
    bool is_null;
    int rc = scalar(p, item, m, &v, &is_null);
    if (rc || is_null)
        return rc;
    return append_item(p, &p->seq->v, &v);
}

/* The key of "key: value" (plain or quoted) into p->path; *rest after ':'. */
static int read_key(yp_t *p, const char *s, size_t n, size_t *rest)
{
    size_t i = 0, b = 0, e = 0;
    if (s[0] == '\'' || s[0] == '"') {
        const char *close = memchr(s + 1, s[0], n - 1);
        if (!close)
            return fail(p, "a quoted key must end with its quote");
        b = 1;
        e = (size_t)(close - s);
        i = e + 1;
        if (i >= n || s[i] != ':')
            return fail(p, "expected ':' after the key");
    } else {
        if (s[0] == '?' || s[0] == ':')
            return fail(p, "complex keys ('? ') are not read");
        while (i < n && !(s[i] == ':' && (i + 1 == n || s[i + 1] == ' ')))
            i++;
        if (i >= n)
            return fail(p, "expected 'key: value'");
        e = i;
        while (e > 0 && s[e - 1] == ' ')
            e--;
    }
    if (e == b || memchr(s + b, '.', e - b))
        return fail(p, e == b ? "an empty key" : "a key with '.' is not read (keys are paths)");
    size_t at = p->lv[p->depth].path_len;
    if (at + 1 + (e - b) + 1 > MAX_KEY)
        return fail(p, "the key path is longer than %d bytes", MAX_KEY);
    size_t o = at;
    if (at)
        p->path[o++] = '.';
    memcpy(p->path + o, s + b, e - b);
    p->path[o + (e - b)] = '\0';
    *rest = i + 1;
    return ERR_OK;
}

/* One "key: value" or "key:" line at the given indentation. */
static int mapping_line(yp_t *p, int indent, const char *s, size_t n)
{
    p->seq = NULL;
    size_t rest = 0;
    int rc;
    if ((rc = dedent(p, indent)) || (rc = read_key(p, s, n, &rest)))
        return rc;
    while (rest < n && s[rest] == ' ')
        rest++;
    if (rest >= n) { /* a mapping or a list may follow */
        if (p->depth >= MAX_DEPTH)
            return fail(p, "nested deeper than %d levels", MAX_DEPTH);
        level_t *l = &p->lv[++p->depth];
        l->indent = -1;
        l->key_indent = indent;
        l->path_len = strlen(p->path);
        p->pending = true;
        return ERR_OK;
    }
    const char *v = s + rest;
    size_t m = n - rest;
    toml_value_t val;
    bool is_null = false;
    if (m == 2 && memcmp(v, "{}", 2) == 0)
        return ERR_OK; /* an empty mapping: nothing to store */
    if (v[0] == '[')
        rc = flow_sequence(p, v, m, &val);
    else
        rc = scalar(p, v, m, &val, &is_null);
    if (rc || is_null)
        return rc;
    return add_entry(p, &val);
}

static int one_line(yp_t *p, const char *s, size_t n, bool *stop)
{
    size_t ind = 0;
    while (ind < n && s[ind] == ' ')
        ind++;
    size_t c = content_len(s + ind, n - ind);
    if (c == 0)
        return ERR_OK;
    if (ind < n && s[ind] == '\t')
        return fail(p, "a tab in the indentation (YAML indents with spaces)");
    const char *t = s + ind;
    if (ind == 0 && c == 3 && memcmp(t, "---", 3) == 0) {
        if (p->seen_content)
            return fail(p, "a second document ('---'): give one config a file");
        return ERR_OK;
    }
    if (ind == 0 && c == 3 && memcmp(t, "...", 3) == 0) {
        *stop = true;
        return ERR_OK;
    }
    if (t[0] == '%')
        return fail(p, "YAML directives ('%%') are not read");
    p->seen_content = true;
    if (ind > (size_t)(MAX_KEY))
        return fail(p, "indented more than %d spaces", MAX_KEY);
    if (t[0] == '-' && (c == 1 || t[1] == ' '))
        return sequence_item(p, (int)ind, t, c);
    return mapping_line(p, (int)ind, t, c);
}

int yaml_parse(const char *text, size_t len, const char *origin, toml_doc_t *doc, err_t *err)
{
    memset(doc, 0, sizeof *doc);
    str_label(doc->origin, sizeof doc->origin, origin ? origin : "yaml");
    yp_t *p = calloc(1, sizeof *p);
    if (!p)
        return err_set(err, ERR_RUNTIME, "out of memory reading %s", doc->origin);
    p->origin = doc->origin;
    p->doc = doc;
    p->err = err;
    p->lv[0].indent = -1;
    p->lv[0].key_indent = -1;
    int rc = ERR_OK;
    bool stop = false;
    size_t pos = 0;
    if (len >= 3 && memcmp(text, "\xEF\xBB\xBF", 3) == 0)
        pos = 3; /* a byte-order mark */
    while (!rc && !stop && pos < len) {
        const char *nl = memchr(text + pos, '\n', len - pos);
        size_t end = nl ? (size_t)(nl - text) : len;
        size_t n = end - pos;
        if (n && text[pos + n - 1] == '\r')
            n--;
        p->line++;
        if (memchr(text + pos, '\0', n))
            rc = fail(p, "a NUL byte: not a text file");
        else
            rc = one_line(p, text + pos, n, &stop);
        pos = end + 1;
    }
    free(p);
    if (rc)
        toml_free(doc);
    return rc;
}
