#include "common/json.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/fileio.h"

json_ctx_t json_ctx_root(const char *file)
{
    json_ctx_t c;
    c.file = file;
    c.path[0] = '\0';
    return c;
}

/* a, sep and b joined into out (cap bytes). A path that does not fit
 * keeps its end, the part that names the field, after "...": a message
 * then says where the reader was, never a path cut off at its tail. */
static void join_path(char *out, size_t cap, const char *a, const char *sep, const char *b)
{
    size_t la = strlen(a), ls = strlen(sep), lb = strlen(b), total = la + ls + lb;
    size_t skip = total < cap ? 0 : total - (cap - 4);
    char *p = out;
    if (skip) {
        memcpy(p, "...", 3);
        p += 3;
    }
    for (size_t i = skip; i < total; i++)
        *p++ = i < la ? a[i] : i < la + ls ? sep[i - la] : b[i - la - ls];
    *p = '\0';
}

json_ctx_t json_ctx_member(const json_ctx_t *parent, const char *key)
{
    json_ctx_t c;
    c.file = parent->file;
    join_path(c.path, sizeof c.path, parent->path, parent->path[0] ? "." : "", key);
    return c;
}

json_ctx_t json_ctx_index(const json_ctx_t *parent, int index)
{
    json_ctx_t c;
    char at[24];
    snprintf(at, sizeof at, "[%d]", index); /* at most 13 characters */
    c.file = parent->file;
    join_path(c.path, sizeof c.path, parent->path, "", at);
    return c;
}

static int field_error(err_t *err, const json_ctx_t *ctx, const char *key,
                       const char *reason)
{
    /* ctx's path and key whole, however long the key (the error record
     * itself is one line of ERR_MSG_MAX) */
    const char *sep = ctx->path[0] && key ? "." : "";
    size_t n = strlen(ctx->path) + strlen(sep) + (key ? strlen(key) : 0) + 1;
    char *path = malloc(n);
    if (!path)
        return err_setf(err, ERR_INPUT, ctx->file, key, "%s", reason);
    snprintf(path, n, "%s%s%s", ctx->path, sep, key ? key : "");
    int rc = err_setf(err, ERR_INPUT, ctx->file, path[0] ? path : NULL, "%s", reason);
    free(path);
    return rc;
}

/* Short rendering of a JSON value for "(got ...)" in messages (cJSON
 * prints a non-finite number as null: name it as the file did). */
static void describe(const cJSON *v, char *out, size_t cap)
{
    if (!v) {
        snprintf(out, cap, "nothing");
        return;
    }
    if (cJSON_IsNumber(v) && !isfinite(v->valuedouble)) {
        snprintf(out, cap, "%s", isnan(v->valuedouble) ? "NaN"
                                 : v->valuedouble > 0  ? "Infinity"
                                                       : "-Infinity");
        return;
    }
    char *s = cJSON_PrintUnformatted(v);
    if (!s) {
        snprintf(out, cap, "a value");
        return;
    }
    if (strlen(s) > 40)
        snprintf(out, cap, "%.37s...", s);
    else
        snprintf(out, cap, "%s", s);
    free(s);
}

/* Whether text ends inside a string or with brackets left open: the mark of
 * a file cut short, which deserves a clearer message than "malformed". */
static bool unclosed_at_end(const char *text, size_t len)
{
    int depth = 0;
    bool in_string = false, escaped = false;
    for (size_t i = 0; i < len; i++) {
        char c = text[i];
        if (in_string) {
            if (escaped)
                escaped = false;
            else if (c == '\\')
                escaped = true;
            else if (c == '"')
                in_string = false;
            continue;
        }
        if (c == '"')
            in_string = true;
        else if (c == '{' || c == '[')
            depth++;
        else if (c == '}' || c == ']')
            depth--;
    }
    return in_string || depth > 0;
}

/* ------------------------------------------------ Infinity and NaN
 *
 * Python's json module writes the non-finite floats as the bare words
 * Infinity, -Infinity and NaN (json.dumps' default allow_nan=True), and so
 * do the config files transformers saves; JSON has no literal for them and
 * cJSON refuses them. Before parsing, each such word standing as a value
 * (outside strings, between delimiters) becomes a marked string, which
 * cJSON reads; after parsing, the marked strings become numbers again.
 * The rewrite is one pass over the text into one buffer of known size
 * (each word grows by MARK_GROWTH bytes; a string the file itself spells
 * "\u0001NaN" would read as NaN too, which no real file holds). Readers then see a
 * non-finite number and refuse it where a finite one is needed
 * (json_get_double, json_check_finite), naming the key. */

static const struct {
    const char *word; /* as Python writes it */
    double value;
} nonfinite[] = {{"-Infinity", -INFINITY}, {"Infinity", INFINITY}, {"NaN", NAN}};

#define MARK_TEXT "\\u0001" /* in the rewritten JSON: "\u0001NaN" */
#define MARK_CHAR '\001'     /* what cJSON decodes it to */
#define MARK_GROWTH 8       /* two quotes and the six characters of the escape */

static bool is_in(char c, const char *set)
{
    return c != '\0' && strchr(set, c) != NULL;
}

/* The nonfinite[] entry whose word stands as a value at text[i], or -1. */
static int nonfinite_at(const char *text, size_t len, size_t i)
{
    if (i > 0 && !is_in(text[i - 1], " \t\r\n[,:"))
        return -1;
    for (size_t k = 0; k < sizeof nonfinite / sizeof nonfinite[0]; k++) {
        size_t wl = strlen(nonfinite[k].word);
        if (i + wl <= len && memcmp(text + i, nonfinite[k].word, wl) == 0 &&
            (i + wl == len || is_in(text[i + wl], " \t\r\n,]}")))
            return (int)k;
    }
    return -1;
}

/* Copy text into out (NULL: only count), the non-finite words outside
 * strings marked; returns the number marked and sets *out_len. */
static size_t mark_nonfinite(const char *text, size_t len, char *out, size_t *out_len)
{
    bool in_string = false, escaped = false;
    size_t marked = 0, o = 0;
    for (size_t i = 0; i < len; i++) {
        char c = text[i];
        int k = -1;
        if (in_string) {
            if (escaped)
                escaped = false;
            else if (c == '\\')
                escaped = true;
            else if (c == '"')
                in_string = false;
        } else if (c == '"') {
            in_string = true;
        } else if ((c == '-' || c == 'I' || c == 'N') && (k = nonfinite_at(text, len, i)) >= 0) {
            const char *w = nonfinite[k].word;
            if (out)
                o += (size_t)sprintf(out + o, "\"" MARK_TEXT "%s\"", w);
            else
                o += strlen(w) + MARK_GROWTH;
            i += strlen(w) - 1;
            marked++;
            continue;
        }
        if (out)
            out[o] = c;
        o++;
    }
    *out_len = o;
    return marked;
}

/* The marked strings under node back to numbers; returns how many marks
 * stand where no number can (an object key). cJSON nests at most
 * CJSON_NESTING_LIMIT deep, which bounds the recursion. */
static int unmark_nonfinite(cJSON *node)
{
    int stray = 0;
    for (; node; node = node->next) {
        if (node->child)
            stray += unmark_nonfinite(node->child);
        stray += node->string && node->string[0] == MARK_CHAR;
        if (!cJSON_IsString(node) || !node->valuestring || node->valuestring[0] != MARK_CHAR)
            continue;
        for (size_t k = 0; k < sizeof nonfinite / sizeof nonfinite[0]; k++) {
            if (strcmp(node->valuestring + 1, nonfinite[k].word) != 0)
                continue;
            cJSON_free(node->valuestring);
            node->valuestring = NULL;
            node->type = cJSON_Number;
            node->valuedouble = nonfinite[k].value;
            node->valueint = isnan(nonfinite[k].value) ? 0
                             : nonfinite[k].value > 0  ? INT_MAX
                                                       : INT_MIN;
            break;
        }
    }
    return stray;
}

static int parse_marked(const char *text, size_t len, const char *name, cJSON **root,
                        err_t *err);

int json_parse_text(const char *text, size_t len, const char *name,
                    cJSON **root, err_t *err)
{
    size_t marked_len;
    *root = NULL;
    if (mark_nonfinite(text, len, NULL, &marked_len) == 0)
        return parse_marked(text, len, name, root, err);
    char *marked = malloc(marked_len + 1);
    if (!marked)
        return err_setf(err, ERR_RUNTIME, name, NULL, "out of memory reading JSON");
    mark_nonfinite(text, len, marked, &marked_len);
    marked[marked_len] = '\0';
    int rc = parse_marked(marked, marked_len, name, root, err);
    free(marked);
    if (rc == ERR_OK && unmark_nonfinite(*root) > 0) {
        cJSON_Delete(*root);
        *root = NULL;
        return err_setf(err, ERR_INPUT, name, NULL,
                        "malformed JSON: Infinity or NaN where an object key belongs");
    }
    return rc;
}

/* Parse text as JSON (no marks left to undo here). */
static int parse_marked(const char *text, size_t len, const char *name, cJSON **root,
                        err_t *err)
{
    *root = NULL;
    const char *end = NULL;
    cJSON *doc = cJSON_ParseWithLengthOpts(text, len, &end, 0);
    if (!doc) {
        /* cJSON reports where parsing stopped; turn it into line:column. */
        size_t off = (end && end >= text) ? (size_t)(end - text) : 0;
        if (off > len)
            off = len;
        int line = 1, col = 1;
        for (size_t i = 0; i < off; i++) {
            if (text[i] == '\n') {
                line++;
                col = 1;
            } else {
                col++;
            }
        }
        int blank = 1;
        for (size_t i = 0; i < len; i++)
            if (text[i] != ' ' && text[i] != '\n' && text[i] != '\r' &&
                text[i] != '\t')
                blank = 0;
        if (blank)
            return err_setf(err, ERR_INPUT, name, NULL,
                            "empty file; expected a JSON document");
        if (off >= len || unclosed_at_end(text, len))
            return err_setf(err, ERR_INPUT, name, NULL,
                            "malformed JSON: ends early at line %d column %d "
                            "(truncated file?)",
                            line, col);
        return err_setf(err, ERR_INPUT, name, NULL,
                        "malformed JSON at line %d column %d", line, col);
    }
    /* cJSON stops after the first value; anything but space after it means
     * the file is not what the user thinks it is. */
    if (end) {
        const char *p = end;
        while ((size_t)(p - text) < len &&
               (*p == ' ' || *p == '\n' || *p == '\r' || *p == '\t'))
            p++;
        if ((size_t)(p - text) < len && *p != '\0') {
            cJSON_Delete(doc);
            return err_setf(err, ERR_INPUT, name, NULL,
                            "malformed JSON: unexpected text after the document");
        }
    }
    *root = doc;
    return ERR_OK;
}

int json_parse_file(const char *path, cJSON **root, err_t *err)
{
    char *text = NULL;
    size_t len = 0;
    *root = NULL;
    int rc = fileio_read_all(path, &text, &len, err);
    if (rc)
        return rc;
    rc = json_parse_text(text, len, path, root, err);
    free(text);
    return rc;
}

static int cmp_key(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* A key that obj gives twice, or NULL (also when out of memory: the
 * check then passes, as cJSON itself would). Small objects are compared
 * pairwise, large ones sorted, so a hostile object of 10^5 keys costs
 * n log n. */
static const char *duplicate_key(const cJSON *obj)
{
    size_t n = 0;
    const cJSON *c;
    cJSON_ArrayForEach(c, obj)
        n++;
    if (n < 2)
        return NULL;
    if (n <= 16) {
        for (const cJSON *a = obj->child; a; a = a->next)
            for (const cJSON *b = a->next; b; b = b->next)
                if (a->string && b->string && strcmp(a->string, b->string) == 0)
                    return a->string;
        return NULL;
    }
    const char **keys = malloc(n * sizeof *keys);
    if (!keys)
        return NULL;
    size_t k = 0;
    cJSON_ArrayForEach(c, obj)
        keys[k++] = c->string ? c->string : "";
    qsort(keys, n, sizeof *keys, cmp_key);
    const char *dup = NULL;
    for (size_t i = 1; i < n && !dup; i++)
        if (strcmp(keys[i - 1], keys[i]) == 0)
            dup = keys[i];
    free(keys);
    return dup;
}

int json_check_unique_keys(const cJSON *node, const json_ctx_t *ctx, err_t *err)
{
    if (cJSON_IsObject(node)) {
        const char *dup = duplicate_key(node);
        if (dup)
            return field_error(err, ctx, dup,
                               "given twice in one object; JSON readers differ on which value "
                               "counts (keep one)");
    } else if (!cJSON_IsArray(node)) {
        return ERR_OK;
    }
    int i = 0;
    const cJSON *c;
    cJSON_ArrayForEach(c, node)
    {
        if (cJSON_IsObject(c) || cJSON_IsArray(c)) {
            json_ctx_t sub = cJSON_IsObject(node) ? json_ctx_member(ctx, c->string ? c->string : "")
                                                  : json_ctx_index(ctx, i);
            int rc = json_check_unique_keys(c, &sub, err);
            if (rc)
                return rc;
        }
        i++;
    }
    return ERR_OK;
}

/* Find member key; distinguishes absent (returns 0 with *v NULL) from the
 * required-but-absent error. JSON null counts as absent. */
static int lookup(const cJSON *obj, const char *key, const json_ctx_t *ctx,
                  json_need_t need, const cJSON **v, err_t *err)
{
    *v = NULL;
    if (!cJSON_IsObject(obj))
        return field_error(err, ctx, NULL, "must be a JSON object");
    const cJSON *m = cJSON_GetObjectItemCaseSensitive(obj, key);
    if (m && cJSON_IsNull(m))
        m = NULL;
    if (!m && need == JSON_REQUIRED)
        return field_error(err, ctx, key, "missing (required)");
    *v = m;
    return ERR_OK;
}

/* The field error "KEY RULE (got VALUE)"; the value is described only
 * here, on failure, since describing it costs a formatted print. */
static int value_error(err_t *err, const json_ctx_t *ctx, const char *key, const cJSON *v,
                       const char *rule)
{
    char got[64], why[256];
    describe(v, got, sizeof got);
    snprintf(why, sizeof why, "%s (got %s)", rule, got);
    return field_error(err, ctx, key, why);
}

int json_get_double(const cJSON *obj, const char *key, const json_ctx_t *ctx,
                    json_need_t need, double lo, double hi, double *out,
                    err_t *err)
{
    const cJSON *v;
    int rc = lookup(obj, key, ctx, need, &v, err);
    if (rc || !v)
        return rc;
    if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble))
        return value_error(err, ctx, key, v, "must be a finite number");
    double x = v->valuedouble;
    if (x < lo || x > hi) {
        char rule[96];
        snprintf(rule, sizeof rule, "must be between %g and %g", lo, hi);
        return value_error(err, ctx, key, v, rule);
    }
    *out = x;
    return ERR_OK;
}

int json_check_finite(const cJSON *obj, const char *key, const json_ctx_t *ctx, err_t *err)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
    if (!cJSON_IsNumber(v) || isfinite(v->valuedouble))
        return ERR_OK;
    return value_error(err, ctx, key, v, "must be a finite number");
}

int json_get_long(const cJSON *obj, const char *key, const json_ctx_t *ctx,
                  json_need_t need, long long lo, long long hi, long long *out,
                  err_t *err)
{
    const cJSON *v;
    int rc = lookup(obj, key, ctx, need, &v, err);
    if (rc || !v)
        return rc;
    double x = cJSON_IsNumber(v) ? v->valuedouble : NAN;
    if (!isfinite(x) || x != floor(x))
        return value_error(err, ctx, key, v, "must be a whole number");
    if (x < (double)lo || x > (double)hi) {
        char rule[96];
        snprintf(rule, sizeof rule, "must be between %lld and %lld", lo, hi);
        return value_error(err, ctx, key, v, rule);
    }
    if (fabs(x) > 9007199254740992.0) /* 2^53: beyond exact doubles */
        return value_error(err, ctx, key, v, "is too large to be exact");
    *out = (long long)x;
    return ERR_OK;
}

int json_get_int(const cJSON *obj, const char *key, const json_ctx_t *ctx,
                 json_need_t need, long lo, long hi, int *out, err_t *err)
{
    long long v = 0;
    if (lo < -2147483647L)
        lo = -2147483647L;
    if (hi > 2147483647L)
        hi = 2147483647L;
    const cJSON *m;
    int rc = lookup(obj, key, ctx, need, &m, err);
    if (rc || !m)
        return rc;
    rc = json_get_long(obj, key, ctx, need, lo, hi, &v, err);
    if (rc)
        return rc;
    *out = (int)v;
    return ERR_OK;
}

int json_get_bool(const cJSON *obj, const char *key, const json_ctx_t *ctx,
                  json_need_t need, bool *out, err_t *err)
{
    const cJSON *v;
    int rc = lookup(obj, key, ctx, need, &v, err);
    if (rc || !v)
        return rc;
    if (!cJSON_IsBool(v))
        return value_error(err, ctx, key, v, "must be true or false");
    *out = cJSON_IsTrue(v);
    return ERR_OK;
}

int json_get_string(const cJSON *obj, const char *key, const json_ctx_t *ctx,
                    json_need_t need, char *out, size_t cap, err_t *err)
{
    const cJSON *v;
    int rc = lookup(obj, key, ctx, need, &v, err);
    if (rc || !v)
        return rc;
    char why[160];
    if (!cJSON_IsString(v) || !v->valuestring)
        return value_error(err, ctx, key, v, "must be a string");
    size_t n = strlen(v->valuestring);
    if (n + 1 > cap) {
        snprintf(why, sizeof why, "too long (%zu characters, at most %zu)", n,
                 cap - 1);
        return field_error(err, ctx, key, why);
    }
    memcpy(out, v->valuestring, n + 1);
    return ERR_OK;
}

static int get_typed(const cJSON *obj, const char *key, const json_ctx_t *ctx,
                     json_need_t need, const cJSON **out, int want_array,
                     err_t *err)
{
    const cJSON *v;
    *out = NULL;
    int rc = lookup(obj, key, ctx, need, &v, err);
    if (rc || !v)
        return rc;
    if (want_array ? !cJSON_IsArray(v) : !cJSON_IsObject(v))
        return value_error(err, ctx, key, v,
                           want_array ? "must be a JSON array" : "must be a JSON object");
    *out = v;
    return ERR_OK;
}

int json_get_object(const cJSON *obj, const char *key, const json_ctx_t *ctx,
                    json_need_t need, const cJSON **out, err_t *err)
{
    return get_typed(obj, key, ctx, need, out, 0, err);
}

int json_get_array(const cJSON *obj, const char *key, const json_ctx_t *ctx,
                   json_need_t need, const cJSON **out, err_t *err)
{
    return get_typed(obj, key, ctx, need, out, 1, err);
}

int json_expect_object(const cJSON *obj, const json_ctx_t *ctx, err_t *err)
{
    if (cJSON_IsObject(obj))
        return ERR_OK;
    char got[64], why[128];
    describe(obj, got, sizeof got);
    snprintf(why, sizeof why, "must be a JSON object (got %s)", got);
    return field_error(err, ctx, NULL, why);
}

int json_write_file(const char *path, const cJSON *root, err_t *err)
{
    char *text = cJSON_Print(root);
    if (!text)
        return err_setf(err, ERR_RUNTIME, path, NULL,
                        "out of memory while formatting JSON");
    size_t n = strlen(text);
    /* End the file with a newline, as text tools expect. */
    char *with_nl = realloc(text, n + 2);
    if (!with_nl) {
        free(text);
        return err_setf(err, ERR_RUNTIME, path, NULL, "out of memory");
    }
    with_nl[n] = '\n';
    with_nl[n + 1] = '\0';
    int rc = fileio_write_atomic(path, with_nl, n + 1, err);
    free(with_nl);
    return rc;
}

bool json_add_number(cJSON *obj, const char *key, double value)
{
    /* Round to 12 significant digits: results are estimates, and printing
     * binary noise (0.30000000000000004) would suggest false precision. */
    if (isfinite(value) && value != 0.0) {
        char buf[40];
        snprintf(buf, sizeof buf, "%.12g", value);
        value = strtod(buf, NULL);
    }
    if (!isfinite(value))
        return cJSON_AddNullToObject(obj, key) != NULL;
    return cJSON_AddNumberToObject(obj, key, value) != NULL;
}

int json_print_stdout(const cJSON *root, err_t *err)
{
    char *text = cJSON_Print(root);
    if (!text)
        return err_set(err, ERR_RUNTIME, "out of memory while formatting JSON");
    int ok = puts(text) >= 0 && fflush(stdout) == 0;
    free(text);
    if (!ok)
        return err_set(err, ERR_RUNTIME, "cannot write to standard output");
    return ERR_OK;
}
