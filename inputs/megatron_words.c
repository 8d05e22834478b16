/* megatron_words: the words of a shell text as bash makes them, for the
 * reader of launch scripts (megatron_shellInt.h): comments,
 * backslash-newline, quotes, $NAME / ${NAME} / ${NAME[@]} / ${NAME:-x}
 * and the other ${...} operators, $((arithmetic)), heredocs and
 * here-strings, redirections dropped with their targets, NAME=( ... )
 * array assignments, #SBATCH node and task counts. */
#include "inputs/megatron_shellInt.h"

#include <ctype.h>
#include <errno.h>
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* (megatron_shellInt.h) Every byte of a word, read or expanded, passes
 * here, so a variable that doubles itself stops the reader after
 * MEGATRON_MAX_EXPANDED_BYTES of work, not of memory. */
int msh_charge(shell_t *sh, size_t n)
{
    if (n > MEGATRON_MAX_EXPANDED_BYTES - sh->made) {
        sh->too_big = true;
        return -1;
    }
    sh->made += n;
    return 0;
}

/* (megatron_shellInt.h) */
void msh_words_free(words_t *w)
{
    for (int i = 0; i < w->n; i++)
        free(w->w[i]);
    free(w->w);
    memset(w, 0, sizeof *w);
}

/* (megatron_shellInt.h) */
int msh_words_push(shell_t *sh, words_t *w, const char *text, size_t n)
{
    if (w->n >= MEGATRON_MAX_WORDS) {
        sh->too_big = true;
        return -1;
    }
    if (msh_charge(sh, n + 1))
        return -1;
    if (w->n == w->cap) {
        int cap = w->cap ? 2 * w->cap : 32;
        char **p = realloc(w->w, (size_t)cap * sizeof *p);
        if (!p)
            return sh->oom = 1, -1;
        w->w = p;
        w->cap = cap;
    }
    char *c = malloc(n + 1);
    if (!c)
        return sh->oom = 1, -1;
    if (n) /* an empty quoted word ("") has no text at all */
        memcpy(c, text, n);
    c[n] = '\0';
    w->w[w->n++] = c;
    return 0;
}

/* (megatron_shellInt.h) */
shvar_t *msh_var_find(shell_t *sh, const char *name, size_t n)
{
    for (int i = 0; i < sh->n_vars; i++)
        if (strlen(sh->vars[i].name) == n && strncmp(sh->vars[i].name, name, n) == 0)
            return &sh->vars[i];
    return NULL;
}

/* (megatron_shellInt.h) */
shvar_t *msh_var_set(shell_t *sh, const char *name, size_t n)
{
    shvar_t *v = msh_var_find(sh, name, n);
    if (v) {
        msh_words_free(&v->value);
        return v;
    }
    if (sh->n_vars == sh->cap_vars) {
        int cap = sh->cap_vars ? 2 * sh->cap_vars : 16;
        shvar_t *p = realloc(sh->vars, (size_t)cap * sizeof *p);
        if (!p)
            return sh->oom = 1, NULL;
        sh->vars = p;
        sh->cap_vars = cap;
    }
    v = &sh->vars[sh->n_vars++];
    memset(v, 0, sizeof *v);
    snprintf(v->name, sizeof v->name, "%.*s", (int)(n < 63 ? n : 63), name);
    return v;
}

/* A growing buffer for the word being read. */
typedef struct {
    char *b;
    size_t n, cap;
    bool any;     /* the word exists even if empty ("" or '') */
    bool split;   /* an unquoted expansion: split it on blanks */
} wbuf_t;

static int wb_put(shell_t *sh, wbuf_t *b, const char *t, size_t n)
{
    if (msh_charge(sh, n))
        return -1;
    if (b->n + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 64;
        while (cap < b->n + n + 1)
            cap *= 2;
        char *p = realloc(b->b, cap);
        if (!p)
            return sh->oom = 1, -1;
        b->b = p;
        b->cap = cap;
    }
    memcpy(b->b + b->n, t, n);
    b->n += n;
    b->b[b->n] = '\0';
    b->any = true;
    return 0;
}

/* (megatron_shellInt.h) */
bool msh_name_char(char c, bool first)
{
    return c == '_' || isalpha((unsigned char)c) || (!first && isdigit((unsigned char)c));
}

static int word_end(shell_t *sh, wbuf_t *b, words_t *out);

static int expand(shell_t *sh, wbuf_t *b, words_t *out, bool quoted);

/* Expand the text t[0..n) as a word (quotes removed, $-expressions
 * expanded), appending to b: the default of ${X:-...}, a pattern, the
 * inside of $((...)). */
static int expand_text(shell_t *sh, const char *t, size_t n, wbuf_t *b, words_t *out,
                       bool quoted)
{
    const char *s0 = sh->s;
    size_t len0 = sh->len, pos0 = sh->pos;
    int rc = 0;
    sh->s = t;
    sh->len = n;
    sh->pos = 0;
    bool dq = false;
    while (!rc && sh->pos < sh->len) {
        char c = t[sh->pos];
        if (c == '\'' && !dq) {
            size_t end = sh->pos + 1;
            while (end < n && t[end] != '\'')
                end++;
            rc = wb_put(sh, b, t + sh->pos + 1, (end < n ? end : n) - sh->pos - 1);
            b->any = true;
            sh->pos = end < n ? end + 1 : n;
        } else if (c == '"') {
            dq = !dq;
            b->any = true;
            sh->pos++;
        } else if (c == '\\' && sh->pos + 1 < n) {
            rc = wb_put(sh, b, t + sh->pos + 1, 1);
            sh->pos += 2;
        } else if (c == '$') {
            sh->pos++;
            rc = expand(sh, b, out, quoted || dq);
        } else {
            rc = wb_put(sh, b, &c, 1);
            sh->pos++;
        }
    }
    sh->s = s0;
    sh->len = len0;
    sh->pos = pos0;
    return rc;
}

/* Shell arithmetic over integers: + - * / % and parentheses, names read
 * as variables. false when the text cannot decide it (a value from
 * outside the text, anything else). */
typedef struct {
    shell_t *sh;
    const char *p;
    bool ok;
} arith_t;

static long arith_sum(arith_t *x);

static void arith_blank(arith_t *x)
{
    while (*x->p == ' ' || *x->p == '\t' || *x->p == '\n')
        x->p++;
}

static long arith_atom(arith_t *x)
{
    arith_blank(x);
    if (*x->p == '(') {
        x->p++;
        long v = arith_sum(x);
        arith_blank(x);
        if (*x->p == ')')
            x->p++;
        else
            x->ok = false;
        return v;
    }
    if (*x->p == '-' || *x->p == '+') {
        bool neg = *x->p++ == '-';
        long v = arith_atom(x);
        return neg ? -v : v;
    }
    if (isdigit((unsigned char)*x->p)) {
        char *end;
        errno = 0;
        long v = strtol(x->p, &end, 10);
        if (errno)
            x->ok = false;
        x->p = end;
        return v;
    }
    if (msh_name_char(*x->p, true)) {
        const char *n = x->p;
        while (msh_name_char(*x->p, false))
            x->p++;
        shvar_t *v = msh_var_find(x->sh, n, (size_t)(x->p - n));
        long l;
        if (!v || v->value.n != 1 || !megatron_parse_long(v->value.w[0], &l)) {
            x->ok = false;
            return 0;
        }
        return l;
    }
    x->ok = false;
    return 0;
}

static long arith_product(arith_t *x)
{
    long v = arith_atom(x);
    for (;;) {
        arith_blank(x);
        char op = *x->p;
        if (op != '*' && op != '/' && op != '%')
            return v;
        x->p++;
        long w = arith_atom(x);
        if (op == '*') {
            if (w != 0 && (labs(v) > (1L << 40) || labs(w) > (1L << 40))) {
                x->ok = false;
                return 0;
            }
            v *= w;
        } else if (w == 0) {
            x->ok = false;
            return 0;
        } else {
            v = op == '/' ? v / w : v % w;
        }
    }
}

static long arith_sum(arith_t *x)
{
    long v = arith_product(x);
    for (;;) {
        arith_blank(x);
        char op = *x->p;
        if (op != '+' && op != '-')
            return v;
        x->p++;
        long w = arith_product(x);
        if (labs(v) > (1L << 50) || labs(w) > (1L << 50)) {
            x->ok = false;
            return 0;
        }
        v = op == '+' ? v + w : v - w;
    }
}

/* The value of $((t[0..n))), or false when the text does not decide it. */
static bool arith_eval(shell_t *sh, const char *t, size_t n, long *out)
{
    wbuf_t tmp = {0};
    words_t none = {0};
    if (expand_text(sh, t, n, &tmp, &none, true)) {
        free(tmp.b);
        msh_words_free(&none);
        return false;
    }
    msh_words_free(&none);
    arith_t x = {sh, tmp.b ? tmp.b : "", true};
    long v = arith_sum(&x);
    arith_blank(&x);
    bool ok = x.ok && *x.p == '\0' && tmp.b && !strchr(tmp.b, '$');
    free(tmp.b);
    *out = v;
    return ok;
}

/* Whether a variable holds nothing ("" or no items). */
static bool var_empty(const shvar_t *v)
{
    return v->value.n == 0 || (v->value.n == 1 && v->value.w[0][0] == '\0');
}

/* ${X%pat} ${X%%pat} ${X#pat} ${X##pat}: the value without the shortest
 * or longest suffix or prefix matching the glob pattern. */
static void strip_pattern(char *v, const char *pat, bool suffix, bool longest)
{
    size_t n = strlen(v);
    char *copy = strdup(v);
    if (!copy)
        return;
    for (size_t k = 0; k <= n; k++) {
        size_t cut;
        if (suffix) {
            size_t at = longest ? k : n - k;
            if (fnmatch(pat, copy + at, 0) == 0) {
                v[at] = '\0';
                break;
            }
        } else {
            cut = longest ? n - k : k;
            char saved = copy[cut];
            copy[cut] = '\0';
            bool match = fnmatch(pat, copy, 0) == 0;
            copy[cut] = saved;
            if (match) {
                memmove(v, v + cut, n - cut + 1);
                break;
            }
        }
    }
    free(copy);
}

/* (megatron_shellInt.h) "$@", "$*" and $# stand for the script's own
 * arguments, which a file read alone does not have. */
void msh_note_args(shell_t *sh)
{
    if (sh->noted_args)
        return;
    sh->noted_args = true;
    notes_add(&sh->a->notes, NOTE_ASSUMED, "$@",
              "line %d: the script's own arguments are taken as none (as when it runs without "
              "any); flags it would pass on go on scaleplan's command line",
              sh->line);
}

/* Just past the parenthesis that closes the one at sh->s[p] (the end of
 * the text when none does). */
static size_t paren_end(const shell_t *sh, size_t p)
{
    size_t depth = 0, q = p;
    for (; q < sh->len; q++) {
        if (sh->s[q] == '(')
            depth++;
        else if (sh->s[q] == ')' && --depth == 0)
            break;
    }
    return q < sh->len ? q + 1 : q;
}

/* The $-expressions that name no variable, at sh->pos (just after '$'):
 * $((arithmetic)), $(command) kept as written, "$@" / "$*" / $# (the
 * script's arguments: none) and $? $$ $! $- kept as written. 0 or -1 when
 * it was one of them (appended to b), 1 when it is not. */
static int expand_special(shell_t *sh, wbuf_t *b)
{
    const char *s = sh->s;
    size_t p = sh->pos;
    if (p + 1 < sh->len && s[p] == '(' && s[p + 1] == '(') {
        /* $((arithmetic)) */
        size_t end = paren_end(sh, p);
        sh->pos = end;
        long v;
        if (end - p >= 4 && arith_eval(sh, s + p + 2, end - p - 4, &v)) {
            char num[32];
            int k = snprintf(num, sizeof num, "%ld", v);
            return wb_put(sh, b, num, (size_t)k);
        }
        return wb_put(sh, b, "$", 1) || wb_put(sh, b, s + p, end - p);
    }
    if (p < sh->len && s[p] == '(') {
        /* $(command): kept as written; a value that needs it will say so. */
        size_t end = paren_end(sh, p);
        int rc = wb_put(sh, b, "$", 1) || wb_put(sh, b, s + p, end - p);
        sh->pos = end;
        return rc;
    }
    if (p < sh->len && (s[p] == '@' || s[p] == '*' || s[p] == '#')) {
        sh->pos = p + 1;
        msh_note_args(sh);
        b->any = b->any || s[p] == '#';
        return s[p] == '#' ? wb_put(sh, b, "0", 1) : 0;
    }
    if (p < sh->len && (s[p] == '?' || s[p] == '$' || s[p] == '!' || s[p] == '-')) {
        sh->pos = p + 1;
        char kept[3] = {'$', s[p], '\0'};
        return wb_put(sh, b, kept, 2);
    }
    return 1;
}

/* A parameter expression as written: $NAME, ${NAME}, ${#NAME},
 * ${NAME[@]}, ${NAME:-arg} and the other operators. */
typedef struct {
    const char *name;
    size_t n;          /* name[0..n) */
    bool array, at;    /* [@] or [*]; at: [@] */
    bool length;       /* ${#NAME} */
    const char *op;    /* ":-", "%%", ... or NULL */
    size_t op_len;
    const char *arg;   /* the text after the operator, arg[0..arg_len) */
    size_t arg_len;
} param_t;

/* Read ${...} at sh->pos (on its '{') into x, moving past its '}'. 1 when
 * x is to be expanded; 0 or -1 when the expression was dealt with here
 * (an unclosed brace or a form not modelled kept as written, ${@} / ${#}). */
static int read_braced(shell_t *sh, wbuf_t *b, param_t *x)
{
    const char *s = sh->s;
    size_t p = sh->pos;
    /* the matching brace: ${A:-${B}_x} nests */
    size_t close = p + 1, depth = 1;
    for (; close < sh->len; close++) {
        if (s[close] == '{' && s[close - 1] == '$')
            depth++;
        else if (s[close] == '}' && --depth == 0)
            break;
    }
    if (close >= sh->len)
        return wb_put(sh, b, "$", 1);
    const char *name = s + p + 1;
    size_t n = 0;
    sh->pos = close + 1;
    if ((name[0] == '@' || name[0] == '*' || name[0] == '#') && name + 1 == s + close) {
        msh_note_args(sh);
        return name[0] == '#' ? wb_put(sh, b, "0", 1) : 0;
    }
    if (name[0] == '#' && name + 1 < s + close) {
        x->length = true;
        name++;
    }
    /* a positional parameter (${1:-default}): never set in the text */
    bool positional = name < s + close && isdigit((unsigned char)name[0]);
    while (name + n < s + close &&
           (positional ? isdigit((unsigned char)name[n]) != 0 : msh_name_char(name[n], n == 0)))
        n++;
    x->name = name;
    x->n = n;
    const char *rest = name + n;
    if (rest + 3 <= s + close &&
        (strncmp(rest, "[@]", 3) == 0 || strncmp(rest, "[*]", 3) == 0)) {
        x->array = true;
        x->at = rest[1] == '@';
        rest += 3;
    }
    static const char *const OPS[] = {":-", ":=", ":+", ":?", "%%", "##", "-", "=", "+",
                                      "?",  "%",  "#"};
    for (size_t i = 0; i < sizeof OPS / sizeof OPS[0] && rest < s + close; i++) {
        size_t k = strlen(OPS[i]);
        if ((size_t)(s + close - rest) >= k && strncmp(rest, OPS[i], k) == 0) {
            x->op = OPS[i];
            x->op_len = k;
            x->arg = rest + k;
            x->arg_len = (size_t)(s + close - x->arg);
            break;
        }
    }
    if (!x->op && rest != s + close) {
        /* something else (${A/x/y}, ${A:1:2}): kept as written */
        return wb_put(sh, b, "$", 1) || wb_put(sh, b, s + p, close + 1 - p);
    }
    return 1;
}

/* Read the parameter expression at sh->pos (just after '$') into x: 1 when
 * x is to be expanded, 0 or -1 when it was dealt with (a lone '$' kept). */
static int read_param(shell_t *sh, wbuf_t *b, param_t *x)
{
    const char *s = sh->s;
    size_t p = sh->pos;
    memset(x, 0, sizeof *x);
    if (p < sh->len && s[p] == '{')
        return read_braced(sh, b, x);
    const char *name = s + p;
    size_t n = 0;
    while (p + n < sh->len && msh_name_char(name[n], n == 0))
        n++;
    if (n == 0 && p < sh->len && isdigit((unsigned char)s[p]))
        n = 1; /* $1 */
    if (n == 0)
        return wb_put(sh, b, "$", 1);
    sh->pos = p + n;
    x->name = name;
    x->n = n;
    return 1;
}

/* ${X:=default} assigns the default as well as expanding to it (in a
 * branch that is read; never a positional parameter). */
static int assign_default(shell_t *sh, const param_t *x)
{
    if (!msh_active(sh) || isdigit((unsigned char)x->name[0]))
        return 0;
    wbuf_t tmp = {0};
    words_t none = {0};
    int rc = expand_text(sh, x->arg, x->arg_len, &tmp, &none, true);
    msh_words_free(&none);
    shvar_t *nv = rc ? NULL : msh_var_set(sh, x->name, x->n);
    if (!rc && (!nv || msh_words_push(sh, &nv->value, tmp.b ? tmp.b : "", tmp.n)))
        rc = -1;
    free(tmp.b);
    return rc;
}

/* ${X%pat} ${X%%pat} ${X#pat} ${X##pat} of a scalar v, appended to b. */
static int expand_stripped(shell_t *sh, wbuf_t *b, bool quoted, const param_t *x,
                           const shvar_t *v, char kind)
{
    wbuf_t pat = {0};
    words_t none = {0};
    int rc = expand_text(sh, x->arg, x->arg_len, &pat, &none, true);
    msh_words_free(&none);
    char *val = rc ? NULL : strdup(v->value.n ? v->value.w[0] : "");
    if (!rc && val) {
        strip_pattern(val, pat.b ? pat.b : "", kind == '%', x->op_len == 2);
        rc = wb_put(sh, b, val, strlen(val));
        if (!rc && !quoted && val[0])
            b->split = true;
    } else if (!rc) {
        rc = -1;
        sh->oom = 1;
    }
    free(val);
    free(pat.b);
    return rc;
}

/* The operator of ${X op arg} over the variable v (NULL when not set):
 * defaults, alternatives, the error of ${X:?}, patterns stripped. 0 or -1
 * when the operator decided the expansion, 1 when X's value stands. */
static int expand_operator(shell_t *sh, wbuf_t *b, words_t *out, bool quoted, const param_t *x,
                           const shvar_t *v)
{
    const char *op = x->op, *name = x->name;
    size_t n = x->n;
    bool colon = op[0] == ':';
    char kind = colon ? op[1] : op[0];
    bool missing = !v || (colon && var_empty(v));
    if ((kind == '-' || kind == '=') && missing) {
        if (kind == '=' && assign_default(sh, x))
            return -1;
        size_t before = b->n;
        if (expand_text(sh, x->arg, x->arg_len, b, out, quoted))
            return -1;
        if (!quoted && b->n > before)
            b->split = true;
        b->any = true;
        return 0;
    }
    if (kind == '+') {
        if (missing)
            return 0;
        if (expand_text(sh, x->arg, x->arg_len, b, out, quoted))
            return -1;
        if (!quoted)
            b->split = true;
        return 0;
    }
    if (kind == '?' && missing)
        return err_setf(sh->err, ERR_INPUT, sh->a->origin, NULL,
                        "line %d: ${%.*s%s...} stops the script when %.*s is not set; set it "
                        "in the file",
                        sh->line, (int)(n < 60 ? n : 60), name, op, (int)(n < 60 ? n : 60),
                        name),
               -1;
    if ((kind == '%' || kind == '#') && v && !x->array)
        return expand_stripped(sh, b, quoted, x, v, kind);
    return 1;
}

/* Whether the word in b so far is an assignment's NAME= (or NAME+=): then
 * an array's items are joined with blanks (X="... ${A[@]}"). */
static bool assigning_word(const wbuf_t *b)
{
    bool assigning = false;
    if (b->any && b->b) {
        size_t e = strcspn(b->b, "=");
        assigning = e > 0 && e < b->n;
        for (size_t i = 0; assigning && i < e; i++)
            assigning = msh_name_char(b->b[i], i == 0) ||
                        (b->b[i] == '+' && i == e - 1 && i > 0);
    }
    return assigning;
}

/* An array's items as words of the command ("${A[@]}" too); unquoted,
 * each item is split at blanks as well ("--fp8-format hybrid" as one item
 * is two words). The first item joins the word in b. */
static int expand_items(shell_t *sh, wbuf_t *b, words_t *out, bool quoted, const shvar_t *v)
{
    for (int i = 0; i < v->value.n; i++) {
        if (i == 0 && b->any) {
            if (wb_put(sh, b, v->value.w[0], strlen(v->value.w[0])))
                return -1;
            if (!quoted)
                b->split = true;
            continue;
        }
        if (b->any) {
            if (word_end(sh, b, out))
                return -1;
        }
        if (wb_put(sh, b, v->value.w[i], strlen(v->value.w[i])))
            return -1;
        b->any = true;
        if (!quoted)
            b->split = true;
    }
    return 0;
}

/* Expand one $-expression at sh->pos (just after '$'). Array expansions
 * ("${A[@]}") outside double quotes add whole words to out directly; other
 * expansions append to the word in b. */
static int expand(shell_t *sh, wbuf_t *b, words_t *out, bool quoted)
{
    int rc = expand_special(sh, b);
    if (rc != 1)
        return rc;
    param_t x;
    if ((rc = read_param(sh, b, &x)) != 1)
        return rc;
    shvar_t *v = msh_var_find(sh, x.name, x.n);
    if (x.length) {
        char num[32];
        int k = snprintf(num, sizeof num, "%zu",
                         !v ? (size_t)0 : x.array ? (size_t)v->value.n
                                                  : (v->value.n ? strlen(v->value.w[0]) : 0));
        return wb_put(sh, b, num, (size_t)k);
    }
    if (x.op && (rc = expand_operator(sh, b, out, quoted, &x, v)) != 1)
        return rc;
    if (!v) {
        /* Unknown (set outside the text): kept as written. */
        char kept[96];
        int k = snprintf(kept, sizeof kept, "${%.*s}", (int)(x.n < 80 ? x.n : 80), x.name);
        return wb_put(sh, b, kept, (size_t)k);
    }
    if (x.array && (!quoted || x.at) && !assigning_word(b))
        return expand_items(sh, b, out, quoted, v);
    for (int i = 0; i < v->value.n; i++) {
        if (i && wb_put(sh, b, " ", 1))
            return -1;
        if (wb_put(sh, b, v->value.w[i], strlen(v->value.w[i])))
            return -1;
    }
    if (!quoted && v->value.n)
        b->split = true;
    return 0;
}

/* Finish the word in b into out (splitting an unquoted expansion). */
static int word_end(shell_t *sh, wbuf_t *b, words_t *out)
{
    if (!b->any)
        return 0;
    int rc = 0;
    if (b->split) {
        char *p = b->b;
        while (*p && !rc) {
            while (*p == ' ' || *p == '\t' || *p == '\n')
                p++;
            size_t n = strcspn(p, " \t\n");
            if (n)
                rc = msh_words_push(sh, out, p, n);
            p += n;
        }
    } else {
        rc = msh_words_push(sh, out, b->b, b->n);
    }
    b->n = 0;
    b->any = b->split = false;
    if (b->b)
        b->b[0] = '\0';
    return rc;
}

/* A #SBATCH line's node and task counts (--nodes=N / -N N,
 * --ntasks-per-node=M, --gpus-per-node=M). */
static void sbatch_directive(shell_t *sh, const char *t, size_t n)
{
    char line[512];
    snprintf(line, sizeof line, "%.*s", (int)(n < 511 ? n : 511), t);
    static const struct {
        const char *flag;
        int which; /* 0 nodes, 1 tasks */
    } F[] = {{"--nodes", 0}, {"-N", 0}, {"--ntasks-per-node", 1}, {"--gpus-per-node", 1}};
    for (char *w = strtok(line, " \t"); w; w = strtok(NULL, " \t")) {
        for (size_t i = 0; i < sizeof F / sizeof F[0]; i++) {
            size_t k = strlen(F[i].flag);
            if (strncmp(w, F[i].flag, k) != 0 || (w[k] != '=' && w[k] != '\0'))
                continue;
            const char *v = w[k] == '=' ? w + k + 1 : strtok(NULL, " \t");
            long x;
            if (v && megatron_parse_long(v, &x) && x > 0 && x < (1 << 20))
                *(F[i].which ? &sh->sb_tasks : &sh->sb_nodes) = (int)x;
        }
    }
}

/* Skip one word of shell text at sh->pos (a redirection's target):
 * blanks first, then up to the next blank or operator, quotes kept
 * together. */
static void skip_word(shell_t *sh)
{
    const char *s = sh->s;
    while (sh->pos < sh->len && (s[sh->pos] == ' ' || s[sh->pos] == '\t'))
        sh->pos++;
    char quote = 0;
    while (sh->pos < sh->len) {
        char c = s[sh->pos];
        if (quote) {
            if (c == quote)
                quote = 0;
        } else if (c == '\'' || c == '"') {
            quote = c;
        } else if (strchr(" \t\r\n;&|<>()", c)) {
            break;
        }
        sh->pos++;
    }
}

/* A heredoc's body with $-expressions and \$ \\ \` escapes expanded (its
 * quotes are text), into a new string. */
static char *heredoc_expand(shell_t *sh, const char *t, size_t n)
{
    wbuf_t b = {0};
    words_t none = {0};
    const char *s0 = sh->s;
    size_t len0 = sh->len, pos0 = sh->pos;
    int rc = 0;
    sh->s = t;
    sh->len = n;
    sh->pos = 0;
    while (!rc && sh->pos < n) {
        char c = t[sh->pos];
        if (c == '\\' && sh->pos + 1 < n && strchr("$\\`\n", t[sh->pos + 1])) {
            if (t[sh->pos + 1] != '\n')
                rc = wb_put(sh, &b, t + sh->pos + 1, 1);
            sh->pos += 2;
        } else if (c == '$') {
            sh->pos++;
            rc = expand(sh, &b, &none, true);
        } else {
            rc = wb_put(sh, &b, &c, 1);
            sh->pos++;
        }
    }
    sh->s = s0;
    sh->len = len0;
    sh->pos = pos0;
    msh_words_free(&none);
    if (rc) {
        free(b.b);
        return NULL;
    }
    if (!b.b)
        b.b = strdup("");
    return b.b;
}

/* The body of the heredoc announced on the line just ended: the lines up
 * to its delimiter (leading tabs dropped for <<-), expanded unless the
 * delimiter was quoted. */
static int read_heredoc(shell_t *sh)
{
    const char *s = sh->s;
    size_t start = sh->pos, body_end = sh->pos;
    size_t dl = strlen(sh->hd_delim);
    bool found = false;
    while (sh->pos < sh->len) {
        size_t line = sh->pos, eol = line;
        while (eol < sh->len && s[eol] != '\n')
            eol++;
        size_t from = line;
        while (sh->hd_strip && from < eol && s[from] == '\t')
            from++;
        size_t to = eol;
        while (to > from && (s[to - 1] == '\r' || s[to - 1] == ' '))
            to--;
        sh->pos = eol < sh->len ? eol + 1 : eol;
        sh->line++;
        if (to - from == dl && strncmp(s + from, sh->hd_delim, dl) == 0) {
            found = true;
            break;
        }
        body_end = sh->pos;
    }
    if (!found)
        body_end = sh->pos;
    sh->hd_pending = false;
    free(sh->heredoc);
    sh->heredoc = NULL;
    /* <<- drops the tabs that start each line */
    char *raw = malloc(body_end - start + 1);
    if (!raw)
        return sh->oom = 1, -1;
    size_t k = 0;
    bool bol = true;
    for (size_t i = start; i < body_end; i++) {
        if (sh->hd_strip && bol && s[i] == '\t')
            continue;
        bol = s[i] == '\n';
        raw[k++] = s[i];
    }
    raw[k] = '\0';
    if (msh_charge(sh, k)) {
        free(raw);
        return -1;
    }
    if (sh->hd_quoted) {
        sh->heredoc = raw;
        return 0;
    }
    sh->heredoc = heredoc_expand(sh, raw, k);
    free(raw);
    return sh->heredoc ? 0 : -1;
}

/* A redirection at sh->pos ('<' or '>', or "&>"): a heredoc (<<WORD,
 * <<-WORD, <<'WORD') is noted for the end of the line; a here-string
 * (<<< WORD) becomes the next word, marked; any other (> file, 2>&1,
 * < file) is dropped with its target. b holds the word read so far (the
 * "2" of 2>&1 is dropped). */
static int redirection(shell_t *sh, wbuf_t *b, words_t *out)
{
    const char *s = sh->s;
    size_t p = sh->pos;
    if (b->any && !b->split) {
        bool digits = true;
        for (size_t i = 0; i < b->n; i++)
            digits = digits && isdigit((unsigned char)b->b[i]);
        if (digits) {
            b->n = 0;
            b->any = false;
            b->b[0] = '\0';
        }
    }
    if (word_end(sh, b, out))
        return -1;
    if (p + 2 < sh->len && strncmp(s + p, "<<<", 3) == 0) {
        sh->pos = p + 3;
        sh->hs_index = out->n; /* the next word is the here-string */
        return 0;
    }
    if (p + 1 < sh->len && strncmp(s + p, "<<", 2) == 0) {
        sh->pos = p + 2;
        bool strip = sh->pos < sh->len && s[sh->pos] == '-';
        if (strip)
            sh->pos++;
        while (sh->pos < sh->len && (s[sh->pos] == ' ' || s[sh->pos] == '\t'))
            sh->pos++;
        char delim[64];
        size_t k = 0;
        bool quoted = false;
        while (sh->pos < sh->len && !strchr(" \t\r\n;&|<>()", s[sh->pos])) {
            char c = s[sh->pos++];
            if (c == '\'' || c == '"' || c == '\\') {
                quoted = true;
                continue;
            }
            if (k + 1 < sizeof delim)
                delim[k++] = c;
        }
        delim[k] = '\0';
        if (k == 0)
            return 0;
        sh->hd_pending = true;
        sh->hd_quoted = quoted;
        sh->hd_strip = strip;
        snprintf(sh->hd_delim, sizeof sh->hd_delim, "%s", delim);
        return 0;
    }
    /* > >> >| < <> >& &> 2>&1: the operator, then its target unless it
     * duplicates a descriptor (>&1, <&-) */
    while (sh->pos < sh->len && strchr("<>&|", s[sh->pos])) {
        if (s[sh->pos] == '|' && (sh->pos == p || s[sh->pos - 1] != '>'))
            break;
        sh->pos++;
    }
    if (s[sh->pos - 1] == '&' && sh->pos > p + 1 && sh->pos < sh->len &&
        (isdigit((unsigned char)s[sh->pos]) || s[sh->pos] == '-')) {
        while (sh->pos < sh->len && (isdigit((unsigned char)s[sh->pos]) || s[sh->pos] == '-'))
            sh->pos++;
        return 0;
    }
    skip_word(sh);
    return 0;
}

/* A single-quoted string at sh->pos (on its quote), its text appended to
 * b as it is. 0, or -1 with sh->err set when the quote is not closed. */
static int single_quoted(shell_t *sh, wbuf_t *b)
{
    const char *s = sh->s;
    size_t end = sh->pos + 1;
    while (end < sh->len && s[end] != '\'')
        end++;
    if (end >= sh->len) {
        err_setf(sh->err, ERR_INPUT, sh->a->origin, NULL, "line %d: a single quote is not closed",
                 sh->line);
        return -1;
    }
    if (wb_put(sh, b, s + sh->pos + 1, end - sh->pos - 1))
        return -1;
    b->any = true;
    sh->pos = end + 1;
    return 0;
}

/* A double-quoted string at sh->pos (on its quote): \" \\ \$ \` and
 * backslash-newline escapes, $-expressions expanded unsplit, the rest
 * appended to b. 0, or -1 (sh->err set when the quote is not closed). */
static int double_quoted(shell_t *sh, wbuf_t *b, words_t *out)
{
    const char *s = sh->s;
    sh->pos++;
    b->any = true;
    while (sh->pos < sh->len) {
        char d = s[sh->pos];
        if (d == '"') {
            sh->pos++;
            return 0;
        }
        if (d == '\\' && sh->pos + 1 < sh->len && strchr("\"\\$`\n", s[sh->pos + 1])) {
            if (s[sh->pos + 1] != '\n' && wb_put(sh, b, s + sh->pos + 1, 1))
                return -1;
            sh->pos += 2;
            continue;
        }
        if (d == '$') {
            sh->pos++;
            if (expand(sh, b, out, true))
                return -1;
            continue;
        }
        if (d == '\n')
            sh->line++;
        if (wb_put(sh, b, &d, 1))
            return -1;
        sh->pos++;
    }
    err_setf(sh->err, ERR_INPUT, sh->a->origin, NULL, "line %d: a double quote is not closed",
             sh->line);
    return -1;
}

/* A comment at sh->pos, skipped to the end of its line; an #SBATCH line's
 * counts are kept. */
static void comment(shell_t *sh)
{
    const char *s = sh->s;
    size_t from = sh->pos;
    while (sh->pos < sh->len && s[sh->pos] != '\n')
        sh->pos++;
    if (sh->pos - from > 8 && strncmp(s + from, "#SBATCH", 7) == 0)
        sbatch_directive(sh, s + from + 7, sh->pos - from - 7);
}

/* A placeholder as docs write one (--save <Specify path>) at sh->pos (on
 * its '<'): its text, blanks as '_', appended to b, not a redirection. 1
 * when it was one, 0 when not, -1 on error. */
static int placeholder(shell_t *sh, wbuf_t *b)
{
    const char *s = sh->s;
    size_t close = sh->pos + 1;
    while (close < sh->len && !strchr("<>\n", s[close]))
        close++;
    if (close >= sh->len || s[close] != '>' || close <= sh->pos + 1)
        return 0;
    for (; sh->pos <= close; sh->pos++) {
        char t = s[sh->pos] == ' ' || s[sh->pos] == '\t' ? '_' : s[sh->pos];
        if (wb_put(sh, b, &t, 1))
            return -1;
    }
    return 1;
}

/* NAME=( ... ) or NAME+=( ... ) with b holding "NAME=" or "NAME+=" and
 * sh->pos on the '(': the items read and assigned (in a branch that is
 * read), b emptied. 1 when it was an array assignment, 0 when b holds no
 * name, -1 on error (an array not closed). */
static int array_assignment(shell_t *sh, wbuf_t *b)
{
    bool append = b->n > 2 && b->b[b->n - 2] == '+';
    size_t n = b->n - 1 - (append ? 1 : 0);
    bool ok = n > 0;
    for (size_t i = 0; i < n; i++)
        ok = ok && msh_name_char(b->b[i], i == 0);
    if (!ok)
        return 0;
    words_t items = {0};
    sh->pos++;
    int r = msh_read_words(sh, &items, true);
    if (r < 0) {
        msh_words_free(&items);
        return -1;
    }
    if (r != 2) {
        msh_words_free(&items);
        err_setf(sh->err, ERR_INPUT, sh->a->origin, NULL,
                 "line %d: the array %.*s=( ... ) is not closed", sh->line, (int)n, b->b);
        return -1;
    }
    if (!msh_active(sh)) {
        /* in a branch that is not read */
        msh_words_free(&items);
    } else if (append && msh_var_find(sh, b->b, n)) {
        shvar_t *v = msh_var_find(sh, b->b, n);
        for (int i = 0; i < items.n; i++)
            if (msh_words_push(sh, &v->value, items.w[i], strlen(items.w[i]))) {
                msh_words_free(&items);
                return -1;
            }
        msh_words_free(&items);
    } else {
        shvar_t *v = msh_var_set(sh, b->b, n);
        if (!v) {
            msh_words_free(&items);
            return -1;
        }
        v->value = items;
    }
    b->n = 0;
    b->any = false;
    return 1;
}

/* The operator that ends a command at sh->pos (';', '|', '&', "&&",
 * "||", ";;"), kept in sh->sep. */
static void command_end(shell_t *sh)
{
    const char *s = sh->s;
    size_t from = sh->pos;
    while (sh->pos < sh->len && strchr(";|&", s[sh->pos]))
        sh->pos++;
    size_t n = sh->pos - from;
    snprintf(sh->sep, sizeof sh->sep, "%.*s", (int)(n < 2 ? n : 2), s + from);
}

/* (megatron_shellInt.h) */
int msh_read_words(shell_t *sh, words_t *out, bool in_array)
{
    wbuf_t b = {0};
    int result = 0, r;
    const char *s = sh->s;
    while (sh->pos < sh->len) {
        char c = s[sh->pos];
        if (c == '\\') {
            if (sh->pos + 1 < sh->len && s[sh->pos + 1] == '\n') {
                sh->pos += 2;
                sh->line++;
                continue;
            }
            if (sh->pos + 1 < sh->len) {
                if (wb_put(sh, &b, s + sh->pos + 1, 1))
                    goto fail;
                sh->pos += 2;
                continue;
            }
            sh->pos++;
            continue;
        }
        if (c == '\'') {
            if (single_quoted(sh, &b))
                goto fail;
            continue;
        }
        if (c == '"') {
            if (double_quoted(sh, &b, out))
                goto fail;
            continue;
        }
        if (c == '$') {
            sh->pos++;
            if (expand(sh, &b, out, false))
                goto fail;
            continue;
        }
        if (c == '#' && !b.any) {
            comment(sh);
            continue;
        }
        if (c == ' ' || c == '\t' || c == '\r') {
            if (word_end(sh, &b, out))
                goto fail;
            sh->pos++;
            continue;
        }
        if (c == '\n') {
            if (word_end(sh, &b, out))
                goto fail;
            sh->pos++;
            sh->line++;
            if (sh->hd_pending && read_heredoc(sh))
                goto fail;
            if (!in_array) {
                snprintf(sh->sep, sizeof sh->sep, "\n");
                result = 1;
                goto done;
            }
            continue;
        }
        if (in_array && c == ')') {
            if (word_end(sh, &b, out))
                goto fail;
            sh->pos++;
            result = 2;
            goto done;
        }
        if (!in_array && c == '<' && sh->pos + 1 < sh->len && !strchr("<&", s[sh->pos + 1])) {
            if ((r = placeholder(sh, &b)) < 0)
                goto fail;
            if (r)
                continue;
        }
        if (!in_array && (c == '<' || c == '>' ||
                          (c == '&' && sh->pos + 1 < sh->len && s[sh->pos + 1] == '>'))) {
            if (redirection(sh, &b, out))
                goto fail;
            continue;
        }
        if (!in_array && (c == ';' || c == '|' || c == '&')) {
            if (word_end(sh, &b, out))
                goto fail;
            command_end(sh);
            result = 1;
            goto done;
        }
        /* NAME=( starts an array assignment, NAME+=( an append. */
        if (!in_array && c == '(' && b.any && b.n > 1 && b.b[b.n - 1] == '=' && !b.split) {
            if ((r = array_assignment(sh, &b)) < 0)
                goto fail;
            if (r)
                continue;
        }
        if (wb_put(sh, &b, &c, 1))
            goto fail;
        sh->pos++;
    }
    if (in_array) {
        result = 0;
        goto done;
    }
    if (word_end(sh, &b, out))
        goto fail;
done:
    if (word_end(sh, &b, out))
        goto fail;
    free(b.b);
    return result;
fail:
    free(b.b);
    return -1;
}
