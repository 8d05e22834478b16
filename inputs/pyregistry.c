/* pyregistry: a tokenizer and a small evaluator for the Python subset of
 * torchtitan's config_registry.py files (pytorch/torchtitan at b5bcd76,
 * torchtitan/models/<name>/config_registry.py; field names and defaults from
 * torchtitan/config/configs.py and distributed/activation_checkpoint.py). */
#include "inputs/pyregistry.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "models/model.h"

#define MAX_CALL_DEPTH 8 /* functions calling functions of the same file */
#define MAX_NEST 64      /* brackets inside one expression */

typedef enum { T_NAME, T_NUM, T_STR, T_OP, T_NL, T_END } tok_kind_t;

typedef struct {
    tok_kind_t kind;
    const char *s; /* into the text; T_STR: the body between the quotes */
    size_t n;
    int line, col; /* col: the column of the line's first token (statement indent) */
} tok_t;

typedef enum { V_OPAQUE, V_INT, V_FLOAT, V_STR, V_BOOL, V_NONE, V_LIST, V_CALL } vkind_t;

typedef struct val {
    vkind_t kind;
    long long i;
    double f;
    char *s;            /* V_STR text, V_CALL callee ("TrainingConfig"), V_OPAQUE what */
    struct val **items; /* V_LIST items, V_CALL arguments */
    char **keys;        /* V_CALL: keyword of each argument, NULL = positional */
    int n;
    int line;
} val_t;

typedef struct {
    char *name;
    val_t *v;
} var_t;

typedef struct {
    const char *file;
    tok_t *toks;
    size_t n_toks, pos;
    val_t **all; /* every value made, freed at the end */
    size_t n_all, cap_all;
    notes_t *notes;
    err_t *err;
    int depth; /* functions being evaluated */
    int nest;  /* terms being read */
    bool failed;
} py_t;

static int fail(py_t *p, int line, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int fail(py_t *p, int line, const char *fmt, ...)
{
    if (p->failed)
        return ERR_INPUT;
    char msg[300];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    p->failed = true;
    return err_setf(p->err, ERR_INPUT, p->file, NULL, "line %d: %s", line, msg);
}

static int oom(py_t *p)
{
    p->failed = true;
    return err_set(p->err, ERR_RUNTIME, "out of memory reading %s", p->file);
}

/* ------------------------------------------------------------ tokens */

static int push_tok(py_t *p, size_t *cap, tok_t t)
{
    if (p->n_toks == *cap) {
        size_t c = *cap ? 2 * *cap : 256;
        tok_t *n = realloc(p->toks, c * sizeof *n);
        if (!n)
            return oom(p);
        p->toks = n;
        *cap = c;
    }
    p->toks[p->n_toks++] = t;
    return ERR_OK;
}

/* A string literal at s[i] (after any r/b/f/u prefix); *end past it. */
static int lex_string(py_t *p, const char *s, size_t len, size_t i, int *line, tok_t *t,
                      size_t *end)
{
    char q = s[i];
    bool triple = i + 2 < len && s[i + 1] == q && s[i + 2] == q;
    size_t b = i + (triple ? 3 : 1), j = b;
    int start = *line;
    for (; j < len; j++) {
        if (s[j] == '\\' && j + 1 < len) {
            j++;
            continue;
        }
        if (s[j] == '\n') {
            if (!triple)
                return fail(p, start, "a string not closed on its line");
            (*line)++;
        }
        if (s[j] == q && (!triple || (j + 2 < len && s[j + 1] == q && s[j + 2] == q)))
            break;
    }
    if (j >= len)
        return fail(p, start, "a string never closed");
    t->kind = T_STR;
    t->s = s + b;
    t->n = j - b;
    *end = j + (triple ? 3 : 1);
    return ERR_OK;
}

/* The token at s[*i] into t, its kind and length (a name, number, string
 * or operator); *i moves past it, *line past a string's newlines, *depth
 * counts the brackets open. ERR_INPUT (p failed) on a string or bracket
 * that does not close right. */
static int lex_token(py_t *p, const char *s, size_t len, size_t *i, int *line, int *depth,
                     tok_t *t)
{
    char c = s[*i];
    size_t j = *i;
    while (j < len && (isalpha((unsigned char)s[j]) || s[j] == '_'))
        j++;
    if (j > *i && j - *i <= 2 && j < len && (s[j] == '\'' || s[j] == '"') &&
        strspn(s + *i, "rRbBfFuU") >= j - *i)
        return lex_string(p, s, len, j, line, t, i) ? ERR_INPUT : ERR_OK;
    if (c == '\'' || c == '"')
        return lex_string(p, s, len, *i, line, t, i) ? ERR_INPUT : ERR_OK;
    if (j > *i) {
        while (j < len && (isalnum((unsigned char)s[j]) || s[j] == '_'))
            j++;
        t->kind = T_NAME;
    } else if (isdigit((unsigned char)c) ||
               (c == '.' && *i + 1 < len && isdigit((unsigned char)s[*i + 1]))) {
        while (j < len && (isalnum((unsigned char)s[j]) || s[j] == '_' || s[j] == '.' ||
                           ((s[j] == '+' || s[j] == '-') && (s[j - 1] == 'e' || s[j - 1] == 'E'))))
            j++;
        t->kind = T_NUM;
    } else {
        static const char *const two[] = {"->", "==", "!=", "<=", ">=", "**", "//", "+=",
                                          "-=", "*=", NULL};
        for (int k = 0; two[k]; k++)
            if (*i + 1 < len && s[*i] == two[k][0] && s[*i + 1] == two[k][1])
                t->n = 2;
        *depth += strchr("([{", c) ? 1 : strchr(")]}", c) ? -1 : 0;
        if (*depth < 0 || *depth > MAX_NEST)
            return fail(p, *line, *depth < 0 ? "a closing bracket with none open"
                                             : "brackets nested too deep");
        *i += t->n;
        return ERR_OK;
    }
    t->n = j - *i;
    *i = j;
    return ERR_OK;
}

static int tokenize(py_t *p, const char *s, size_t len)
{
    size_t cap = 0, i = 0;
    int line = 1, depth = 0, col = 0;
    bool line_start = true;
    while (i < len && !p->failed) {
        char c = s[i];
        if (c == '\n' || (c == '\\' && i + 1 < len && s[i + 1] == '\n')) {
            if (c == '\n' && depth == 0 && !line_start &&
                push_tok(p, &cap, (tok_t){T_NL, s + i, 1, line, col}))
                return ERR_RUNTIME;
            line_start = line_start || (c == '\n' && depth == 0);
            i += c == '\n' ? 1 : 2;
            line++;
            col = 0;
            continue;
        }
        if (c == ' ' || c == '\t' || c == '\r') {
            col += line_start ? 1 : 0;
            i++;
            continue;
        }
        if (c == '#') {
            while (i < len && s[i] != '\n')
                i++;
            continue;
        }
        tok_t t = {T_OP, s + i, 1, line, line_start ? col : -1};
        if (t.col < 0 && p->n_toks)
            t.col = p->toks[p->n_toks - 1].col;
        line_start = false;
        if (lex_token(p, s, len, &i, &line, &depth, &t))
            return ERR_INPUT;
        if (push_tok(p, &cap, t))
            return ERR_RUNTIME;
    }
    if (p->failed)
        return ERR_INPUT;
    if (depth)
        return fail(p, line, "a bracket never closed");
    return push_tok(p, &cap, (tok_t){T_NL, s + len, 0, line, 0}) ||
           push_tok(p, &cap, (tok_t){T_END, s + len, 0, line, 0});
}

/* ------------------------------------------------------------ values */

static tok_t *cur(py_t *p)
{
    return &p->toks[p->pos < p->n_toks ? p->pos : p->n_toks - 1];
}

static bool is_op(const tok_t *t, const char *op)
{
    return t->kind == T_OP && t->n == strlen(op) && memcmp(t->s, op, t->n) == 0;
}

static bool is_name(const tok_t *t, const char *name)
{
    return t->kind == T_NAME && t->n == strlen(name) && memcmp(t->s, name, t->n) == 0;
}

#define NO_DEF ((size_t)-1)

/* The token index of "def name" at column 0, or NO_DEF. */
static size_t find_def(const py_t *p, const char *name, size_t n)
{
    for (size_t i = 0; i + 1 < p->n_toks; i++)
        if (is_name(&p->toks[i], "def") && p->toks[i].col == 0 &&
            p->toks[i + 1].kind == T_NAME && p->toks[i + 1].n == n &&
            memcmp(p->toks[i + 1].s, name, n) == 0)
            return i;
    return NO_DEF;
}

static val_t *new_val(py_t *p, vkind_t kind, int line)
{
    if (p->n_all == p->cap_all) {
        size_t c = p->cap_all ? 2 * p->cap_all : 64;
        val_t **n = realloc(p->all, c * sizeof *n);
        if (!n) {
            oom(p);
            return NULL;
        }
        p->all = n;
        p->cap_all = c;
    }
    val_t *v = calloc(1, sizeof *v);
    if (!v) {
        oom(p);
        return NULL;
    }
    v->kind = kind;
    v->line = line;
    p->all[p->n_all++] = v;
    return v;
}

static void val_free(val_t *v)
{
    free(v->s);
    for (int i = 0; v->keys && i < v->n; i++)
        free(v->keys[i]);
    free(v->keys);
    free(v->items);
    free(v);
}

/* Append item (keyword key, NULL for positional) to a list or call. */
static int add_item(py_t *p, val_t *to, const char *key, size_t key_n, val_t *item)
{
    val_t **items = realloc(to->items, (size_t)(to->n + 1) * sizeof *items);
    if (!items)
        return oom(p);
    to->items = items;
    if (to->kind == V_CALL) {
        char **keys = realloc(to->keys, (size_t)(to->n + 1) * sizeof *keys);
        if (!keys)
            return oom(p);
        to->keys = keys;
        keys[to->n] = key ? strndup(key, key_n) : NULL;
        if (key && !keys[to->n])
            return oom(p);
    }
    to->items[to->n++] = item;
    return ERR_OK;
}

static val_t *expr(py_t *p, var_t *vars, int n_vars);
static val_t *run_function(py_t *p, const char *name, size_t n, int line);

/* Skip to the end of the current expression (an opaque part: comparisons,
 * conditionals, subscripts): the next , ) ] } or newline at this depth. */
static void skip_rest(py_t *p)
{
    int depth = 0;
    for (; cur(p)->kind != T_END; p->pos++) {
        tok_t *t = cur(p);
        if (depth == 0 && (t->kind == T_NL || is_op(t, ",") || is_op(t, ")") || is_op(t, "]") ||
                           is_op(t, "}")))
            return;
        if (t->kind == T_OP && strchr("([{", t->s[0]))
            depth++;
        else if (t->kind == T_OP && strchr(")]}", t->s[0]))
            depth--;
    }
}

static val_t *lookup(var_t *vars, int n_vars, const char *name, size_t n)
{
    for (int i = n_vars - 1; i >= 0; i--)
        if (strlen(vars[i].name) == n && memcmp(vars[i].name, name, n) == 0)
            return vars[i].v;
    return NULL;
}

/* The value under keyword key of a call, or NULL. */
static val_t *field(const val_t *call, const char *key, size_t n)
{
    for (int i = 0; call && call->kind == V_CALL && i < call->n; i++)
        if (call->keys[i] && strlen(call->keys[i]) == n && !memcmp(call->keys[i], key, n))
            return call->items[i];
    return NULL;
}

/* (args): positional and keyword arguments into call. */
static int call_args(py_t *p, val_t *call, var_t *vars, int n_vars)
{
    p->pos++; /* ( */
    while (!p->failed && !is_op(cur(p), ")")) {
        const char *key = NULL;
        size_t key_n = 0;
        if (cur(p)->kind == T_NAME && is_op(&p->toks[p->pos + 1], "=")) {
            key = cur(p)->s;
            key_n = cur(p)->n;
            p->pos += 2;
        } else if (is_op(cur(p), "*") || is_op(cur(p), "**")) {
            return fail(p, cur(p)->line, "unpacked arguments (* or **) are not read");
        }
        val_t *v = expr(p, vars, n_vars);
        if (!v || add_item(p, call, key, key_n, v))
            return ERR_INPUT;
        if (is_op(cur(p), ","))
            p->pos++;
        else if (!is_op(cur(p), ")"))
            return fail(p, cur(p)->line, "expected ',' or ')' in a call");
    }
    p->pos++; /* ) */
    return p->failed ? ERR_INPUT : ERR_OK;
}

/* A name, a dotted path into a local value, a call, a subscript. */
static val_t *name_term(py_t *p, var_t *vars, int n_vars)
{
    tok_t *first = cur(p);
    const char *b = first->s;
    size_t n = first->n;
    p->pos++;
    while (is_op(cur(p), ".") && p->toks[p->pos + 1].kind == T_NAME) {
        n = (size_t)(p->toks[p->pos + 1].s + p->toks[p->pos + 1].n - b);
        p->pos += 2;
    }
    if (is_op(cur(p), "(")) {
        bool own = memchr(b, '.', n) == NULL && is_op(&p->toks[p->pos + 1], ")");
        if (!own && memchr(b, '.', n) == NULL && find_def(p, b, n) != NO_DEF)
            return fail(p, first->line, "calls %.*s with arguments: functions with parameters "
                                        "are not read (give the job as a TOML config or as "
                                        "flags)", (int)n, b), NULL;
        val_t *r = own ? run_function(p, b, n, first->line) : NULL;
        if (r || p->failed)
            return r;
        val_t *call = new_val(p, V_CALL, first->line);
        if (!call || !(call->s = strndup(b, n)) || call_args(p, call, vars, n_vars))
            return p->failed ? NULL : (oom(p), NULL);
        return call;
    }
    if (is_op(cur(p), "[")) {
        skip_rest(p);
        val_t *v = new_val(p, V_OPAQUE, first->line);
        return v && (v->s = strndup(b, n)) ? v : NULL;
    }
    /* a local name, or a path into one: config.compile.enable */
    const char *dot = memchr(b, '.', n);
    val_t *v = lookup(vars, n_vars, b, dot ? (size_t)(dot - b) : n);
    while (v && dot) {
        const char *next = memchr(dot + 1, '.', n - (size_t)(dot + 1 - b));
        size_t seg = next ? (size_t)(next - dot - 1) : n - (size_t)(dot + 1 - b);
        v = field(v, dot + 1, seg);
        dot = next;
    }
    if (v)
        return v;
    val_t *o = new_val(p, is_name(first, "True") || is_name(first, "False") ? V_BOOL
                          : is_name(first, "None")                         ? V_NONE
                                                                           : V_OPAQUE,
                       first->line);
    if (o && o->kind == V_BOOL)
        o->i = is_name(first, "True");
    if (o && o->kind == V_OPAQUE && !(o->s = strndup(b, n)))
        return oom(p), NULL;
    return o;
}

static val_t *term_at(py_t *p, var_t *vars, int n_vars);

/* An integer (decimal or 0x) or a float, underscores dropped; other forms
 * refused. */
static val_t *number(py_t *p, const tok_t *t)
{
    char buf[64];
    size_t k = 0;
    for (size_t i = 0; i < t->n && k + 1 < sizeof buf; i++)
        if (t->s[i] != '_')
            buf[k++] = t->s[i];
    buf[k] = '\0';
    bool hex = buf[0] == '0' && (buf[1] == 'x' || buf[1] == 'X');
    bool flt = !hex && strpbrk(buf, ".eE") != NULL;
    char *end = buf;
    val_t *v = new_val(p, flt ? V_FLOAT : V_INT, t->line);
    if (v && flt)
        v->f = strtod(buf, &end);
    else if (v)
        v->i = strtoll(buf, &end, 0);
    if (v && *end)
        return fail(p, t->line, "'%s' is not a number this reader takes", buf), NULL;
    return v;
}

/* A term, its nesting bounded (unary minus chains, brackets). */
static val_t *term(py_t *p, var_t *vars, int n_vars)
{
    if (++p->nest > 2 * MAX_NEST) {
        p->nest--;
        return fail(p, cur(p)->line, "a value nested too deep"), NULL;
    }
    val_t *v = term_at(p, vars, n_vars);
    p->nest--;
    return v;
}

static val_t *term_at(py_t *p, var_t *vars, int n_vars)
{
    tok_t *t = cur(p);
    val_t *v = NULL;
    if (t->kind == T_NUM) {
        v = number(p, t);
        p->pos++;
    } else if (t->kind == T_STR) {
        v = new_val(p, V_STR, t->line);
        if (v && !(v->s = strndup(t->s, t->n)))
            return oom(p), NULL;
        p->pos++;
        while (cur(p)->kind == T_STR) /* adjacent literals concatenate */
            p->pos++;
    } else if (is_op(t, "-")) {
        p->pos++;
        v = term(p, vars, n_vars);
        if (v && (v->kind == V_INT || v->kind == V_FLOAT)) {
            val_t *neg = new_val(p, v->kind, t->line);
            if (neg) {
                neg->i = -v->i;
                neg->f = -v->f;
            }
            v = neg;
        }
    } else if (is_op(t, "(")) {
        p->pos++;
        v = expr(p, vars, n_vars);
        if (v && !is_op(cur(p), ")"))
            return fail(p, t->line, "tuples are not read"), NULL;
        p->pos++;
    } else if (is_op(t, "[")) {
        p->pos++;
        v = new_val(p, V_LIST, t->line);
        while (v && !p->failed && !is_op(cur(p), "]")) {
            val_t *item = expr(p, vars, n_vars);
            if (!item || add_item(p, v, NULL, 0, item))
                return NULL;
            if (is_op(cur(p), ","))
                p->pos++;
            else if (!is_op(cur(p), "]"))
                return fail(p, cur(p)->line, "expected ',' or ']' in a list"), NULL;
        }
        p->pos++;
    } else if (is_op(t, "{")) { /* a dict: computed data, read only if a field needs it */
        int depth = 0;
        do {
            tok_t *k = cur(p);
            depth += k->kind == T_OP && strchr("([{", k->s[0]) ? 1
                     : k->kind == T_OP && strchr(")]}", k->s[0]) ? -1 : 0;
            p->pos++;
        } while (depth > 0 && cur(p)->kind != T_END);
        v = new_val(p, V_OPAQUE, t->line);
        if (v && !(v->s = strdup("a dict")))
            return oom(p), NULL;
    } else if (t->kind == T_NAME) {
        v = name_term(p, vars, n_vars);
    } else {
        return fail(p, t->line, "'%.*s' cannot start a value here", (int)t->n, t->s), NULL;
    }
    return p->failed ? NULL : v;
}

/* Integer arithmetic (+ - * //) is folded; anything else leaves an opaque
 * value, refused only if a field read here holds it. */
static val_t *expr(py_t *p, var_t *vars, int n_vars)
{
    val_t *v = term(p, vars, n_vars);
    while (v && cur(p)->kind == T_OP &&
           (is_op(cur(p), "*") || is_op(cur(p), "+") || is_op(cur(p), "-") ||
            is_op(cur(p), "//"))) {
        char op = cur(p)->s[0];
        bool floor_div = cur(p)->n == 2;
        p->pos++;
        val_t *r = term(p, vars, n_vars);
        if (!r)
            return NULL;
        val_t *out = new_val(p, V_OPAQUE, v->line);
        if (!out)
            return NULL;
        if (v->kind == V_INT && r->kind == V_INT && !(floor_div && r->i == 0)) {
            out->kind = V_INT;
            out->i = op == '*' ? v->i * r->i : op == '+' ? v->i + r->i
                     : op == '-' ? v->i - r->i : v->i / r->i;
        }
        v = out;
    }
    if (v && !(cur(p)->kind == T_NL || is_op(cur(p), ",") || is_op(cur(p), ")") ||
               is_op(cur(p), "]") || is_op(cur(p), "}") || is_op(cur(p), ":"))) {
        skip_rest(p); /* comparisons, conditionals, ...: computed, not written */
        val_t *o = new_val(p, V_OPAQUE, v->line);
        v = o;
    }
    return v;
}

/* ------------------------------------------------------------ statements */


/* target = value: a local name, or a field path of a local call value (the
 * fields in between made as empty constructor calls, their defaults). */
static int assign(py_t *p, var_t **vars, int *n_vars, size_t t0, size_t t1, val_t *v)
{
    const tok_t *a = &p->toks[t0];
    if (t1 == t0 + 1) {
        var_t *nv = realloc(*vars, (size_t)(*n_vars + 1) * sizeof *nv);
        if (!nv)
            return oom(p);
        *vars = nv;
        nv[*n_vars].v = v;
        if (!(nv[*n_vars].name = strndup(a->s, a->n)))
            return oom(p);
        (*n_vars)++;
        return ERR_OK;
    }
    val_t *obj = lookup(*vars, *n_vars, a->s, a->n);
    if (!obj || obj->kind != V_CALL)
        return fail(p, a->line, "'%.*s' is not a config this function built", (int)a->n, a->s);
    for (size_t i = t0 + 2; i < t1; i += 2) {
        const tok_t *f = &p->toks[i];
        val_t *next = field(obj, f->s, f->n);
        if (i + 2 >= t1) {
            for (int k = 0; k < obj->n; k++)
                if (obj->keys[k] && strlen(obj->keys[k]) == f->n && !memcmp(obj->keys[k], f->s, f->n))
                    return (obj->items[k] = v, ERR_OK);
            return add_item(p, obj, f->s, f->n, v);
        }
        if (!next) {
            next = new_val(p, V_CALL, f->line);
            if (!next || !(next->s = strndup(f->s, f->n)) || add_item(p, obj, f->s, f->n, next))
                return p->failed ? ERR_INPUT : oom(p);
        }
        obj = next;
    }
    return ERR_OK;
}

/* One statement of a function body; *ret set by return. */
static int statement(py_t *p, var_t **vars, int *n_vars, val_t **ret)
{
    tok_t *t = cur(p);
    if (is_name(t, "assert") || is_name(t, "from") || is_name(t, "import") ||
        is_name(t, "pass") || t->kind == T_STR) {
        while (cur(p)->kind != T_NL)
            p->pos++;
        return ERR_OK;
    }
    if (is_name(t, "return")) {
        p->pos++;
        *ret = expr(p, *vars, *n_vars);
        return *ret ? ERR_OK : ERR_INPUT;
    }
    /* NAME(.NAME)* = expr */
    size_t t0 = p->pos, t1 = p->pos;
    while (p->toks[t1].kind == T_NAME && is_op(&p->toks[t1 + 1], "."))
        t1 += 2;
    if (p->toks[t1].kind == T_NAME && is_op(&p->toks[t1 + 1], "=")) {
        t1++;
        p->pos = t1 + 1;
        val_t *v = expr(p, *vars, *n_vars);
        return v ? assign(p, vars, n_vars, t0, t1, v) : ERR_INPUT;
    }
    return fail(p, t->line,
                "'%.*s ...' is outside what this reader takes (assignments, constructor calls "
                "with keyword arguments, return): give the job as a TOML config or as flags",
                (int)t->n, t->s);
}

/* Evaluate the body of the function whose def is at token at. */
static val_t *run_body(py_t *p, size_t at, const char *name, size_t n, int line)
{
    if (p->depth >= MAX_CALL_DEPTH)
        return fail(p, line, "functions call each other deeper than %d", MAX_CALL_DEPTH), NULL;
    p->pos = at;
    while (cur(p)->kind != T_NL && cur(p)->kind != T_END)
        p->pos++; /* def name() -> Trainer.Config: */
    p->pos++;
    p->depth++;
    var_t *vars = NULL;
    int n_vars = 0;
    val_t *ret = NULL;
    while (!p->failed && !ret && cur(p)->kind != T_END && cur(p)->col > 0) {
        if (statement(p, &vars, &n_vars, &ret))
            break;
        while (!p->failed && cur(p)->kind != T_NL && cur(p)->kind != T_END)
            p->pos++;
        p->pos++;
    }
    for (int i = 0; i < n_vars; i++)
        free(vars[i].name);
    free(vars);
    p->depth--;
    if (!ret && !p->failed)
        fail(p, line, "function '%.*s' returns no config", (int)n, name);
    return p->failed ? NULL : ret;
}

/* A call name() of a function of this file: its returned value; NULL (and
 * no error) when the file defines no such function. */
static val_t *run_function(py_t *p, const char *name, size_t n, int line)
{
    size_t at = find_def(p, name, n);
    if (at == NO_DEF)
        return NULL; /* not the file's own: a constructor */
    size_t saved = p->pos; /* at the call's ( */
    val_t *r = run_body(p, at, name, n, line);
    p->pos = saved + 2;   /* past () */
    return r;
}

/* ------------------------------------------------------------ the document */

static int put(py_t *p, toml_doc_t *doc, const char *key, const toml_value_t *v)
{
    if (toml_find(doc, key))
        return ERR_OK; /* assign() replaced a field already; a second write cannot happen */
    if (doc->n == doc->cap) {
        size_t c = doc->cap ? 2 * doc->cap : 32;
        toml_entry_t *e = realloc(doc->entries, c * sizeof *e);
        if (!e)
            return oom(p);
        doc->entries = e;
        doc->cap = c;
    }
    char *k = strdup(key);
    if (!k)
        return oom(p);
    doc->entries[doc->n++] = (toml_entry_t){k, *v, false};
    return ERR_OK;
}

static void value_release(toml_value_t *v)
{
    free(v->str);
    for (int i = 0; i < v->n_items; i++)
        value_release(&v->items[i]);
    free(v->items);
}

/* A literal value as a TOML value; refused when computed. */
static int literal(py_t *p, const char *key, const val_t *v, toml_value_t *out)
{
    memset(out, 0, sizeof *out);
    out->line = v->line;
    switch (v->kind) {
    case V_INT:
        out->type = TOML_INT;
        out->i = v->i;
        out->f = (double)v->i;
        return ERR_OK;
    case V_FLOAT:
        out->type = TOML_FLOAT;
        out->f = v->f;
        return ERR_OK;
    case V_BOOL:
        out->type = TOML_BOOL;
        out->b = v->i != 0;
        return ERR_OK;
    case V_STR:
        out->type = TOML_STRING;
        out->str = strdup(v->s);
        return out->str ? ERR_OK : oom(p);
    case V_LIST:
        out->type = TOML_ARRAY;
        out->items = calloc((size_t)(v->n ? v->n : 1), sizeof *out->items);
        if (!out->items)
            return oom(p);
        for (int i = 0; i < v->n; i++, out->n_items++)
            if (literal(p, key, v->items[i], &out->items[i])) {
                /* the items read so far and the list go with the failure */
                value_release(out);
                return ERR_INPUT;
            }
        return ERR_OK;
    default:
        return fail(p, v->line, "%s is computed (%s), not written as a value: give the job as "
                                "a TOML config or as flags",
                    key, v->s ? v->s : "an expression");
    }
}

/* Every keyword of a constructor call as section.keyword. */
static int put_fields(py_t *p, toml_doc_t *doc, const char *section, const val_t *call)
{
    for (int i = 0; call && i < call->n; i++) {
        if (!call->keys[i])
            return fail(p, call->items[i]->line, "%s: positional arguments are not read",
                        section);
        char key[160];
        snprintf(key, sizeof key, "%s.%s", section, call->keys[i]);
        toml_value_t tv;
        if (call->items[i]->kind == V_NONE)
            continue;
        if (literal(p, key, call->items[i], &tv))
            return ERR_INPUT;
        if (put(p, doc, key, &tv)) {
            value_release(&tv);
            return ERR_RUNTIME;
        }
    }
    return ERR_OK;
}

static bool ends_with(const char *s, const char *tail)
{
    size_t a = strlen(s), b = strlen(tail);
    return a >= b && strcmp(s + a - b, tail) == 0;
}

static int put_str(py_t *p, toml_doc_t *doc, const char *key, const char *text, int line)
{
    toml_value_t v = {.type = TOML_STRING, .str = strdup(text), .line = line};
    if (!v.str)
        return oom(p);
    int rc = put(p, doc, key, &v);
    if (rc)
        free(v.str);
    return rc;
}

static int put_int(py_t *p, toml_doc_t *doc, const char *key, long long i, int line)
{
    toml_value_t v = {.type = TOML_INT, .i = i, .f = (double)i, .line = line};
    return put(p, doc, key, &v);
}

/* model_spec=model_registry("8B", converters=[...]): flavor, converters; the
 * family from the function's name (llama3_8b: llama3), longest match. */
static int model_part(py_t *p, toml_doc_t *doc, const char *fn, const val_t *spec)
{
    if (!spec || spec->kind != V_CALL || strcmp(spec->s, "model_registry") != 0 || spec->n < 1 ||
        spec->keys[0] || spec->items[0]->kind != V_STR)
        return fail(p, spec ? spec->line : 1,
                    "model_spec: not model_registry(\"FLAVOR\", ...) written in the function: "
                    "give --model");
    const model_torchtitan_t *f, *best = NULL;
    for (size_t i = 0; (f = model_torchtitan(i)); i++) {
        size_t n = strlen(f->name);
        if (strncmp(fn, f->name, n) == 0 && fn[n] == '_' && (!best || n > strlen(best->name)))
            best = f;
    }
    /* no catalog family prefixes the name: the function's name stands for
     * the family, so an unknown one is refused as such (or --model given) */
    int rc;
    if ((rc = put_str(p, doc, "model.name", best ? best->name : fn, spec->line)))
        return rc;
    if (best)
        notes_add(p->notes, NOTE_ASSUMED, "model.name", "%s, from the function name %s",
                  best->name, fn);
    if ((rc = put_str(p, doc, "model.flavor", spec->items[0]->s, spec->line)))
        return rc;
    const val_t *conv = field(spec, "converters", 10);
    if (conv && conv->kind == V_LIST) {
        toml_value_t arr = {.type = TOML_ARRAY, .line = conv->line};
        arr.items = calloc((size_t)conv->n + 1, sizeof *arr.items);
        if (!arr.items)
            return oom(p);
        for (int i = 0; i < conv->n; i++) {
            const char *cls = conv->items[i]->kind == V_CALL ? conv->items[i]->s : "?";
            const char *name = strncmp(cls, "Float8", 6) == 0 ? "float8"
                               : strncmp(cls, "MXFP8", 5) == 0 ? "mx"
                                                               : cls;
            arr.items[arr.n_items].type = TOML_STRING;
            arr.items[arr.n_items].line = conv->line;
            if (!(arr.items[arr.n_items++].str = strdup(name))) {
                value_release(&arr);
                return oom(p);
            }
        }
        if ((rc = put(p, doc, "model.converters", &arr))) {
            value_release(&arr);
            return rc;
        }
    }
    for (int i = 1; i < spec->n; i++)
        if (spec->keys[i] && strcmp(spec->keys[i], "converters") != 0)
            notes_add(p->notes, NOTE_IGNORED, "model_spec", "%s: not modeled", spec->keys[i]);
    return ERR_OK;
}

/* TrainingConfig: tokens per micro-batch and context length as the TOML
 * era's local batch and sequence length (configs.py defaults 16384, 2048). */
static int training_part(py_t *p, toml_doc_t *doc, const val_t *tr)
{
    long long tokens = 16384, seq = 2048, step_tokens = -1;
    int line = tr ? tr->line : 1;
    for (int i = 0; tr && tr->kind == V_CALL && i < tr->n; i++) {
        const char *k = tr->keys[i];
        const val_t *v = tr->items[i];
        long long *slot = !k ? NULL
                          : !strcmp(k, "max_context_length") ? &seq
                          : !strcmp(k, "num_tokens_per_microbatch_per_dp_rank") ? &tokens
                          : !strcmp(k, "num_tokens_per_train_step")             ? &step_tokens
                                                                                 : NULL;
        if (!slot)
            continue;
        if (v->kind != V_INT)
            return fail(p, v->line, "training.%s is computed, not written as an integer: give "
                                    "the job as a TOML config or as flags", k);
        *slot = v->i;
    }
    if (seq <= 0 || tokens <= 0 || tokens % seq != 0)
        return fail(p, line, "training: num_tokens_per_microbatch_per_dp_rank %lld is not a "
                             "whole number of max_context_length %lld sequences", tokens, seq);
    int rc;
    if ((rc = put_int(p, doc, "training.seq_len", seq, line)) ||
        (rc = put_int(p, doc, "training.local_batch_size", tokens / seq, line)))
        return rc;
    if (step_tokens > 0 && step_tokens % seq != 0)
        return fail(p, line, "training: num_tokens_per_train_step %lld is not a whole number "
                             "of %lld-token sequences", step_tokens, seq);
    if (step_tokens > 0 && (rc = put_int(p, doc, "training.global_batch_size", step_tokens / seq,
                                         line)))
        return rc;
    if (!tr || tr->kind != V_CALL)
        return ERR_OK;
    /* the other fields keep their names */
    for (int i = 0; i < tr->n; i++) {
        const char *k = tr->keys[i];
        if (k && (!strcmp(k, "max_context_length") ||
                  !strcmp(k, "num_tokens_per_microbatch_per_dp_rank") ||
                  !strcmp(k, "num_tokens_per_train_step")))
            continue;
        char key[160];
        snprintf(key, sizeof key, "training.%s", k ? k : "?");
        toml_value_t tv;
        if (!k)
            return fail(p, tr->items[i]->line, "training: positional arguments are not read");
        if (tr->items[i]->kind == V_NONE)
            continue;
        if (literal(p, key, tr->items[i], &tv))
            return ERR_INPUT;
        if ((rc = put(p, doc, key, &tv))) {
            value_release(&tv);
            return rc;
        }
    }
    return ERR_OK;
}

/* activation_checkpoint=SelectiveAC.Config() etc. (Trainer.Config's default
 * SelectiveAC: op-level selective checkpointing). */
static int ac_part(py_t *p, toml_doc_t *doc, const val_t *ac)
{
    static const struct {
        const char *cls, *mode;
    } modes[] = {{"SelectiveAC", "selective"}, {"FullAC", "full"},
                 {"MemoryBudgetAC", "memory_budget"}, {"NoAC", "none"}};
    if (!ac)
        notes_add(p->notes, NOTE_ASSUMED, "activation_checkpoint",
                  "absent: Trainer.Config's default SelectiveAC (op-level)");
    const char *cls = !ac ? "SelectiveAC" : ac->kind == V_CALL ? ac->s
                          : ac->kind == V_NONE ? "NoAC" : NULL;
    for (size_t i = 0; cls && i < sizeof modes / sizeof modes[0]; i++)
        if (strncmp(cls, modes[i].cls, strlen(modes[i].cls)) == 0 &&
            (cls[strlen(modes[i].cls)] == '.' || cls[strlen(modes[i].cls)] == '\0')) {
            int line = ac ? ac->line : 1, rc;
            if ((rc = put_str(p, doc, "activation_checkpoint.mode", modes[i].mode, line)) ||
                (strcmp(modes[i].mode, "selective") == 0 &&
                 (rc = put_str(p, doc, "activation_checkpoint.selective_ac_option", "op", line))))
                return rc;
            return ac && ac->kind == V_CALL ? put_fields(p, doc, "activation_checkpoint", ac)
                                             : ERR_OK;
        }
    return fail(p, ac->line, "activation_checkpoint: '%s' is not SelectiveAC, FullAC, "
                             "MemoryBudgetAC or None: give --recompute", cls ? cls : "a value");
}

/* The returned Trainer.Config(...) into the TOML-era document. */
static int trainer_part(py_t *p, toml_doc_t *doc, const char *fn, const val_t *cfg)
{
    if (!cfg || cfg->kind != V_CALL || !ends_with(cfg->s, "Config"))
        return fail(p, cfg ? cfg->line : 1, "%s does not return a Trainer.Config(...)", fn);
    int rc;
    if ((rc = model_part(p, doc, fn, field(cfg, "model_spec", 10))) ||
        (rc = training_part(p, doc, field(cfg, "training", 8))) ||
        (rc = put_fields(p, doc, "parallelism", field(cfg, "parallelism", 11))) ||
        (rc = put_fields(p, doc, "compile", field(cfg, "compile", 7))) ||
        (rc = ac_part(p, doc, field(cfg, "activation_checkpoint", 21))))
        return rc;
    static const char *const read[] = {"model_spec", "training", "parallelism", "compile",
                                       "activation_checkpoint", NULL};
    for (int i = 0; i < cfg->n; i++) {
        bool known = false;
        for (int k = 0; read[k]; k++)
            known = known || (cfg->keys[i] && strcmp(cfg->keys[i], read[k]) == 0);
        if (!known)
            notes_add(p->notes, NOTE_IGNORED, cfg->keys[i] ? cfg->keys[i] : "?",
                      "no effect on step time or memory modeled");
    }
    return ERR_OK;
}

int pyregistry_read(const char *text, size_t len, const char *file, const char *function,
                    toml_doc_t *doc, notes_t *notes, err_t *err)
{
    memset(doc, 0, sizeof *doc);
    py_t p = {.file = file ? file : "config_registry.py", .notes = notes, .err = err};
    snprintf(doc->origin, sizeof doc->origin, "%s", p.file);
    int rc = tokenize(&p, text, len);
    size_t at = NO_DEF;
    if (!rc && function)
        at = find_def(&p, function, strlen(function));
    if (!rc && at == NO_DEF) {
        size_t first = 0;
        while (first + 1 < p.n_toks && !(is_name(&p.toks[first], "def") && p.toks[first].col == 0))
            first++;
        rc = first + 1 < p.n_toks
                 ? err_setf(err, ERR_INPUT, p.file, "--torchtitan-config",
                            "%s%s%s: add --torchtitan-config NAME, the function of the job, "
                            "e.g. --torchtitan-config %.*s",
                            function ? "no function " : "a registry holds many jobs",
                            function ? function : "", function ? " here" : "",
                            (int)p.toks[first + 1].n, p.toks[first + 1].s)
                 : err_setf(err, ERR_INPUT, p.file, NULL,
                            "no function definitions: not a torchtitan config registry");
    }
    if (!rc) {
        val_t *cfg = run_body(&p, at, function, strlen(function), 1);
        rc = cfg ? trainer_part(&p, doc, function, cfg) : ERR_INPUT;
        if (p.failed && !rc)
            rc = ERR_INPUT;
        if (rc && err && err->code == ERR_OK) /* a NULL value without a message */
            rc = err_setf(err, ERR_INPUT, p.file, NULL, "not read");
    }
    for (size_t i = 0; i < p.n_all; i++)
        val_free(p.all[i]);
    free(p.all);
    free(p.toks);
    if (rc)
        toml_free(doc);
    return rc;
}
