/* toml: a recursive-descent reader for the TOML subset job configs use
 * (TOML 1.0, toml.io/en/v1.0.0), refusing the rest in one line. */
#include "inputs/toml.h"


#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/strfmt.h"

#define MAX_KEY 512
#define MAX_DEPTH 32

typedef struct {
    const char *s;
    size_t len, pos;
    int line;
    toml_doc_t *doc;
    err_t *err;
    int failed; /* an error was recorded */
} parser_t;

const char *toml_type_name(toml_type_t t)
{
    static const char *names[] = {"string", "integer", "float", "boolean", "array"};
    return (unsigned)t < sizeof names / sizeof names[0] ? names[t] : "?";
}

static int fail(parser_t *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int fail(parser_t *p, const char *fmt, ...)
{
    if (p->failed)
        return -1;
    char msg[300];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    err_setf(p->err, ERR_INPUT, p->doc->origin, NULL, "line %d: %s", p->line, msg);
    p->failed = 1;
    return -1;
}

static int oom(parser_t *p)
{
    if (!p->failed)
        err_set(p->err, ERR_RUNTIME, "out of memory reading %s", p->doc->origin);
    p->failed = 1;
    return -1;
}

static int peek(const parser_t *p)
{
    return p->pos < p->len ? (unsigned char)p->s[p->pos] : -1;
}

static int peek_at(const parser_t *p, size_t k)
{
    return p->pos + k < p->len ? (unsigned char)p->s[p->pos + k] : -1;
}

/* Spaces and tabs. */
static void skip_ws(parser_t *p)
{
    while (peek(p) == ' ' || peek(p) == '\t')
        p->pos++;
}

static void skip_comment(parser_t *p)
{
    if (peek(p) == '#')
        while (p->pos < p->len && p->s[p->pos] != '\n')
            p->pos++;
}

/* Whitespace, comments and newlines (between array items). */
static void skip_all(parser_t *p)
{
    for (;;) {
        skip_ws(p);
        skip_comment(p);
        if (peek(p) == '\n') {
            p->pos++;
            p->line++;
        } else if (peek(p) == '\r' && peek_at(p, 1) == '\n') {
            p->pos += 2;
            p->line++;
        } else {
            return;
        }
    }
}

static void value_free(toml_value_t *v)
{
    free(v->str);
    for (int i = 0; i < v->n_items; i++)
        value_free(&v->items[i]);
    free(v->items);
    memset(v, 0, sizeof *v);
}

void toml_free(toml_doc_t *doc)
{
    if (!doc)
        return;
    for (size_t i = 0; i < doc->n; i++) {
        free(doc->entries[i].key);
        value_free(&doc->entries[i].v);
    }
    free(doc->entries);
    doc->entries = NULL;
    doc->n = doc->cap = 0;
}

toml_entry_t *toml_find(const toml_doc_t *doc, const char *key)
{
    for (size_t i = 0; i < doc->n; i++)
        if (strcmp(doc->entries[i].key, key) == 0)
            return &doc->entries[i];
    return NULL;
}

bool toml_has_table(const toml_doc_t *doc, const char *prefix)
{
    size_t n = strlen(prefix);
    for (size_t i = 0; i < doc->n; i++)
        if (strncmp(doc->entries[i].key, prefix, n) == 0 && doc->entries[i].key[n] == '.')
            return true;
    return false;
}

/* Append a UTF-8 encoding of code point cp. */
static int put_utf8(char *out, size_t *o, size_t cap, unsigned long cp)
{
    unsigned char b[4];
    int n;
    if (cp < 0x80) {
        b[0] = (unsigned char)cp;
        n = 1;
    } else if (cp < 0x800) {
        b[0] = (unsigned char)(0xC0 | (cp >> 6));
        b[1] = (unsigned char)(0x80 | (cp & 0x3F));
        n = 2;
    } else if (cp < 0x10000) {
        b[0] = (unsigned char)(0xE0 | (cp >> 12));
        b[1] = (unsigned char)(0x80 | ((cp >> 6) & 0x3F));
        b[2] = (unsigned char)(0x80 | (cp & 0x3F));
        n = 3;
    } else {
        b[0] = (unsigned char)(0xF0 | (cp >> 18));
        b[1] = (unsigned char)(0x80 | ((cp >> 12) & 0x3F));
        b[2] = (unsigned char)(0x80 | ((cp >> 6) & 0x3F));
        b[3] = (unsigned char)(0x80 | (cp & 0x3F));
        n = 4;
    }
    if (*o + (size_t)n + 1 > cap)
        return -1;
    memcpy(out + *o, b, (size_t)n);
    *o += (size_t)n;
    return 0;
}

/* A basic ("...") or literal ('...') string into a new heap string. */
static char *parse_string(parser_t *p)
{
    int q = peek(p);
    if (peek_at(p, 1) == q && peek_at(p, 2) == q) {
        fail(p, "multi-line strings are not supported");
        return NULL;
    }
    p->pos++;
    size_t cap = 64, o = 0;
    char *out = malloc(cap);
    if (!out) {
        oom(p);
        return NULL;
    }
    for (;;) {
        int c = peek(p);
        if (c < 0 || c == '\n') {
            free(out);
            fail(p, "a string is not closed on its line");
            return NULL;
        }
        if (o + 8 > cap) {
            char *g = realloc(out, cap * 2);
            if (!g) {
                free(out);
                oom(p);
                return NULL;
            }
            out = g;
            cap *= 2;
        }
        p->pos++;
        if (c == q)
            break;
        if (q == '"' && c == '\\') {
            int e = peek(p);
            p->pos++;
            switch (e) {
            case 'b': out[o++] = '\b'; break;
            case 't': out[o++] = '\t'; break;
            case 'n': out[o++] = '\n'; break;
            case 'f': out[o++] = '\f'; break;
            case 'r': out[o++] = '\r'; break;
            case '"': out[o++] = '"'; break;
            case '\\': out[o++] = '\\'; break;
            case 'u':
            case 'U': {
                int digits = e == 'u' ? 4 : 8;
                unsigned long cp = 0;
                for (int i = 0; i < digits; i++) {
                    int h = peek(p);
                    if (h < 0 || !isxdigit(h)) {
                        free(out);
                        fail(p, "\\%c needs %d hex digits", e, digits);
                        return NULL;
                    }
                    cp = cp * 16 + (unsigned long)(isdigit(h) ? h - '0' : (tolower(h) - 'a' + 10));
                    p->pos++;
                }
                if (cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF) ||
                    put_utf8(out, &o, cap, cp)) {
                    free(out);
                    fail(p, "\\%c escape is not a Unicode scalar value", e);
                    return NULL;
                }
                break;
            }
            default:
                free(out);
                fail(p, "unknown escape \\%c in a string", e > 0 ? e : '?');
                return NULL;
            }
            continue;
        }
        out[o++] = (char)c;
    }
    out[o] = '\0';
    return out;
}

/* One key part: bare or quoted. */
static int parse_key_part(parser_t *p, char *buf, size_t cap)
{
    int c = peek(p);
    if (c == '"' || c == '\'') {
        char *s = parse_string(p);
        if (!s)
            return -1;
        if (strlen(s) + 1 > cap) {
            free(s);
            return fail(p, "key too long");
        }
        strcpy(buf, s);
        free(s);
        return 0;
    }
    size_t n = 0;
    while ((c = peek(p)) >= 0 && (isalnum(c) || c == '_' || c == '-')) {
        if (n + 1 >= cap)
            return fail(p, "key too long");
        buf[n++] = (char)c;
        p->pos++;
    }
    buf[n] = '\0';
    if (n == 0)
        return fail(p, "expected a key");
    return 0;
}

/* A dotted key ("a.b.c") appended to prefix into out. */
static int parse_key(parser_t *p, const char *prefix, char *out, size_t cap)
{
    snprintf(out, cap, "%s", prefix);
    for (;;) {
        char part[MAX_KEY];
        skip_ws(p);
        if (parse_key_part(p, part, sizeof part))
            return -1;
        size_t n = strlen(out);
        if (n + strlen(part) + 2 > cap)
            return fail(p, "key too long");
        snprintf(out + n, cap - n, "%s%s", n ? "." : "", part);
        skip_ws(p);
        if (peek(p) != '.')
            return 0;
        p->pos++;
    }
}

static int add_entry(parser_t *p, const char *key, toml_value_t *v)
{
    toml_doc_t *d = p->doc;
    if (toml_find(d, key)) {
        value_free(v);
        return fail(p, "'%s' is defined twice", key);
    }
    if (d->n == d->cap) {
        size_t cap = d->cap ? 2 * d->cap : 32;
        toml_entry_t *e = realloc(d->entries, cap * sizeof *e);
        if (!e) {
            value_free(v);
            return oom(p);
        }
        d->entries = e;
        d->cap = cap;
    }
    char *k = strdup(key);
    if (!k) {
        value_free(v);
        return oom(p);
    }
    d->entries[d->n].key = k;
    d->entries[d->n].v = *v;
    d->entries[d->n].used = false;
    d->n++;
    return 0;
}

static int parse_value(parser_t *p, const char *key, toml_value_t *v, int depth);

/* Numbers, booleans, inf/nan; dates are refused. */
static int parse_scalar(parser_t *p, toml_value_t *v)
{
    char tok[128];
    size_t n = 0;
    int c;
    while ((c = peek(p)) >= 0 && (isalnum(c) || strchr("+-._:", c))) {
        if (n + 1 >= sizeof tok)
            return fail(p, "value too long");
        tok[n++] = (char)c;
        p->pos++;
    }
    tok[n] = '\0';
    if (n == 0)
        return fail(p, "expected a value");
    if (strcmp(tok, "true") == 0 || strcmp(tok, "false") == 0) {
        v->type = TOML_BOOL;
        v->b = tok[0] == 't';
        return 0;
    }
    const char *t = tok;
    bool neg = false;
    if (*t == '+' || *t == '-') {
        neg = *t == '-';
        t++;
    }
    if (strcmp(t, "inf") == 0 || strcmp(t, "nan") == 0) {
        v->type = TOML_FLOAT;
        v->f = t[0] == 'i' ? (neg ? -INFINITY : INFINITY) : NAN;
        return 0;
    }
    if (strchr(tok, ':') || (isdigit((unsigned char)tok[0]) && n >= 10 && tok[4] == '-'))
        return fail(p, "dates and times are not supported ('%s')", tok);
    /* Underscores must sit between digits. */
    char clean[128];
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        if (tok[i] == '_') {
            if (i == 0 || i + 1 >= n || !isxdigit((unsigned char)tok[i - 1]) ||
                !isxdigit((unsigned char)tok[i + 1]))
                return fail(p, "misplaced '_' in '%s'", tok);
            continue;
        }
        clean[k++] = tok[i];
    }
    clean[k] = '\0';
    const char *num = clean + ((clean[0] == '+' || clean[0] == '-') ? 1 : 0);
    int base = 10;
    if (num[0] == '0' && (num[1] == 'x' || num[1] == 'o' || num[1] == 'b')) {
        if (num != clean)
            return fail(p, "a sign is not allowed on '%s'", tok);
        base = num[1] == 'x' ? 16 : num[1] == 'o' ? 8 : 2;
        num += 2;
    }
    bool is_float = base == 10 && strpbrk(num, ".eE") != NULL;
    char *end;
    errno = 0;
    if (is_float) {
        double f = strtod(clean, &end);
        if (*end || errno || !isdigit((unsigned char)num[0]))
            return fail(p, "'%s' is not a number", tok);
        v->type = TOML_FLOAT;
        v->f = f;
        return 0;
    }
    if (base == 10 && num[0] == '0' && num[1])
        return fail(p, "leading zeros in '%s'", tok);
    long long i = strtoll(base == 10 ? clean : num, &end, base);
    if (*end || errno || !*num)
        return fail(p, "'%s' is not a number (or is too large)", tok);
    v->type = TOML_INT;
    v->i = i;
    v->f = (double)i;
    return 0;
}

static int parse_array(parser_t *p, const char *key, toml_value_t *v, int depth)
{
    p->pos++; /* '[' */
    v->type = TOML_ARRAY;
    int cap = 0;
    for (;;) {
        skip_all(p);
        if (peek(p) == ']') {
            p->pos++;
            return 0;
        }
        if (peek(p) < 0)
            return fail(p, "an array is not closed");
        if (peek(p) == '{')
            return fail(p, "arrays of inline tables are not supported");
        if (v->n_items == cap) {
            cap = cap ? 2 * cap : 8;
            toml_value_t *g = realloc(v->items, (size_t)cap * sizeof *g);
            if (!g)
                return oom(p);
            v->items = g;
        }
        toml_value_t *item = &v->items[v->n_items];
        memset(item, 0, sizeof *item);
        v->n_items++;
        if (parse_value(p, key, item, depth + 1))
            return -1;
        skip_all(p);
        if (peek(p) == ',') {
            p->pos++;
            continue;
        }
        skip_all(p);
        if (peek(p) < 0)
            return fail(p, "an array is not closed");
        if (peek(p) != ']')
            return fail(p, "expected ',' or ']' in an array");
    }
}

static int parse_keyval(parser_t *p, const char *prefix, int depth);

/* { a = 1, b.c = "x" }: entries under key. */
static int parse_inline_table(parser_t *p, const char *key, int depth)
{
    p->pos++; /* '{' */
    skip_ws(p);
    if (peek(p) == '}') {
        p->pos++;
        return 0;
    }
    for (;;) {
        if (parse_keyval(p, key, depth + 1))
            return -1;
        skip_ws(p);
        if (peek(p) == ',') {
            p->pos++;
            skip_ws(p);
            continue;
        }
        if (peek(p) == '}') {
            p->pos++;
            return 0;
        }
        return fail(p, "expected ',' or '}' in an inline table");
    }
}

static int parse_value(parser_t *p, const char *key, toml_value_t *v, int depth)
{
    if (depth > MAX_DEPTH)
        return fail(p, "values nested too deeply");
    v->line = p->line;
    int c = peek(p);
    if (c == '"' || c == '\'') {
        v->type = TOML_STRING;
        v->str = parse_string(p);
        return v->str ? 0 : -1;
    }
    if (c == '[')
        return parse_array(p, key, v, depth);
    if (c == '{')
        return fail(p, "an inline table cannot be an array item");
    return parse_scalar(p, v);
}

/* key = value under prefix (a table or an inline table). */
static int parse_keyval(parser_t *p, const char *prefix, int depth)
{
    char key[MAX_KEY];
    if (parse_key(p, prefix, key, sizeof key))
        return -1;
    skip_ws(p);
    if (peek(p) != '=')
        return fail(p, "expected '=' after '%s'", key);
    p->pos++;
    skip_ws(p);
    if (peek(p) == '{') {
        if (depth > MAX_DEPTH)
            return fail(p, "tables nested too deeply");
        return parse_inline_table(p, key, depth);
    }
    toml_value_t v;
    memset(&v, 0, sizeof v);
    if (parse_value(p, key, &v, depth)) {
        value_free(&v);
        return -1;
    }
    return add_entry(p, key, &v);
}

static int end_of_line(parser_t *p)
{
    skip_ws(p);
    skip_comment(p);
    int c = peek(p);
    if (c < 0)
        return 0;
    if (c == '\r' && peek_at(p, 1) == '\n')
        p->pos++;
    if (peek(p) != '\n')
        return fail(p, "unexpected text after the value");
    p->pos++;
    p->line++;
    return 0;
}

int toml_parse(const char *text, size_t len, const char *origin, toml_doc_t *doc, err_t *err)
{
    memset(doc, 0, sizeof *doc);
    str_label(doc->origin, sizeof doc->origin, origin && *origin ? origin : "toml");
    parser_t p = {text, len, 0, 1, doc, err, 0};
    char table[MAX_KEY] = "";
    if (len >= 3 && (unsigned char)text[0] == 0xEF && (unsigned char)text[1] == 0xBB &&
        (unsigned char)text[2] == 0xBF)
        p.pos = 3; /* UTF-8 byte-order mark */
    while (p.pos < p.len) {
        skip_all(&p);
        if (p.pos >= p.len)
            break;
        int c = peek(&p);
        if (c == '\0') {
            fail(&p, "a NUL byte in the text");
            break;
        }
        if (c == '[') {
            if (peek_at(&p, 1) == '[') {
                fail(&p, "arrays of tables ([[...]]) are not supported");
                break;
            }
            p.pos++;
            if (parse_key(&p, "", table, sizeof table))
                break;
            skip_ws(&p);
            if (peek(&p) != ']') {
                fail(&p, "expected ']' after the table name");
                break;
            }
            p.pos++;
        } else if (parse_keyval(&p, table, 0)) {
            break;
        }
        if (end_of_line(&p))
            break;
    }
    if (p.failed) {
        int code = err ? err->code : ERR_INPUT;
        toml_free(doc);
        return code ? code : ERR_INPUT;
    }
    return ERR_OK;
}
