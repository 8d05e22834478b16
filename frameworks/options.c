#include "frameworks/options.h"

#include <ctype.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FIELD_SIZE(field) sizeof(((sim_options_t *)0)->field)

/* The table, generated from frameworks/options.def. */
static const fw_option_t option_rows[] = {
#define FW_OPTION(key, field, kind, lo, hi, words, dflt, off, required, source, test) \
    {key, offsetof(sim_options_t, field), FIELD_SIZE(field), kind, lo, hi, words, dflt, off, \
     required, source, test},
#include "frameworks/options.def"
#undef FW_OPTION
};

/* Each row's field has the size its kind stores (a FWO_WORD's enum is an int). */
#define FW_OPTION(key, field, kind, lo, hi, words, dflt, off, required, source, test) \
    _Static_assert((kind) == FWO_TEXT || FIELD_SIZE(field) == ((kind) == FWO_BOOL     ? sizeof(bool) \
                                                               : (kind) == FWO_DOUBLE ? sizeof(double) \
                                                                                      : sizeof(int)), \
                   "options.def: " key " has the wrong kind for its field");
#include "frameworks/options.def"
#undef FW_OPTION

int fw_option_count(void)
{
    return (int)(sizeof option_rows / sizeof option_rows[0]);
}

const fw_option_t *fw_option_at(int i)
{
    return i >= 0 && i < fw_option_count() ? &option_rows[i] : NULL;
}

const fw_option_t *fw_option_find(const char *key)
{
    for (int i = 0; key && i < fw_option_count(); i++)
        if (strcmp(option_rows[i].key, key) == 0)
            return &option_rows[i];
    return NULL;
}

bool framework_option_disabled(const char *key)
{
    const char *list = getenv("SCALEPLAN_OPTION_OFF");
    size_t n = strlen(key);
    for (const char *q = list ? list : ""; n && *q;) {
        size_t len = strcspn(q, ",");
        if (len == n && strncmp(q, key, n) == 0)
            return true;
        q += len + (q[len] == ',');
    }
    return false;
}

/* The value of word text in row r's "name=value" list; false when r has
 * no such word. */
static bool word_value(const fw_option_t *r, const char *text, int *value)
{
    size_t n = strlen(text);
    for (const char *q = r->words; n && *q;) {
        const char *eq = strchr(q, '=');
        size_t len = strcspn(q, " ");
        if (!eq || (size_t)(eq - q) >= len)
            return false;
        if ((size_t)(eq - q) == n && strncmp(q, text, n) == 0) {
            *value = atoi(eq + 1);
            return true;
        }
        q += len + (q[len] == ' ');
    }
    return false;
}

/* Row r's words as "a, b or c" into buf. */
static void word_list(const fw_option_t *r, char *buf, size_t cap)
{
    int count = 0;
    for (const char *q = r->words; *q; q += strcspn(q, " ") + (q[strcspn(q, " ")] == ' '))
        count++;
    buf[0] = '\0';
    int i = 0;
    for (const char *q = r->words; *q; i++) {
        size_t len = strcspn(q, "="), used = strlen(buf);
        snprintf(buf + used, cap - used, "%s%.*s", i == 0 ? "" : i == count - 1 ? " or " : ", ",
                 (int)len, q);
        q += strcspn(q, " ");
        q += *q == ' ';
    }
}

void fw_option_store(const fw_option_t *r, sim_options_t *o, double v, const char *text)
{
    char *at = (char *)o + r->offset;
    if (r->kind == FWO_BOOL) {
        bool b = v != 0;
        memcpy(at, &b, sizeof b);
    } else if (r->kind == FWO_DOUBLE) {
        memcpy(at, &v, sizeof v);
    } else if (r->kind == FWO_WORD) {
        int i = (int)v;
        memcpy(at, &i, sizeof i);
    } else {
        snprintf(at, r->size, "%s", text ? text : r->words);
    }
}

double fw_option_value(const fw_option_t *r, const sim_options_t *o)
{
    const char *at = (const char *)o + r->offset;
    bool b;
    double d;
    int i;
    switch (r->kind) {
    case FWO_BOOL: memcpy(&b, at, sizeof b); return b;
    case FWO_DOUBLE: memcpy(&d, at, sizeof d); return d;
    case FWO_WORD: memcpy(&i, at, sizeof i); return i;
    default: return 0;
    }
}

void fw_option_off(const fw_option_t *r, sim_options_t *o)
{
    fw_option_store(r, o, r->off, NULL);
}

int fw_option_parse(const fw_option_t *r, const char *text, sim_options_t *o, err_t *err)
{
    char list[96], *end;
    int w;
    double v;
    switch (r->kind) {
    case FWO_BOOL:
        if (strcmp(text, "true") && strcmp(text, "false"))
            return err_setf(err, ERR_INPUT, NULL, r->key, "true or false (got '%s')", text);
        fw_option_store(r, o, strcmp(text, "true") == 0, NULL);
        return ERR_OK;
    case FWO_DOUBLE:
        v = strtod(text, &end);
        if (end == text || *end || !(v >= r->lo && v <= r->hi))
            return err_setf(err, ERR_INPUT, NULL, r->key, "a number in [%g, %g] (got '%s')", r->lo,
                            r->hi, text);
        fw_option_store(r, o, v, NULL);
        return ERR_OK;
    case FWO_WORD:
        if (!word_value(r, text, &w)) {
            word_list(r, list, sizeof list);
            return err_setf(err, ERR_INPUT, NULL, r->key, "use %s (got '%s')", list, text);
        }
        fw_option_store(r, o, w, NULL);
        return ERR_OK;
    default:
        if (!*text || strlen(text) >= r->size)
            return err_setf(err, ERR_INPUT, NULL, r->key, "a name of 1 to %zu characters",
                            r->size - 1);
        fw_option_store(r, o, 0, text);
        return ERR_OK;
    }
}

/* One row from the preset's options object o (absent and optional: left as
 * it is). */
static int read_row(const fw_option_t *r, const cJSON *o, const json_ctx_t *ctx,
                    sim_options_t *opt, err_t *err)
{
    json_need_t need = r->required ? JSON_REQUIRED : JSON_OPTIONAL;
    char text[64] = "";
    bool b;
    double v;
    int rc;
    switch (r->kind) {
    case FWO_BOOL:
        b = fw_option_value(r, opt) != 0;
        if ((rc = json_get_bool(o, r->key, ctx, need, &b, err)))
            return rc;
        fw_option_store(r, opt, b, NULL);
        return ERR_OK;
    case FWO_DOUBLE:
        v = fw_option_value(r, opt);
        if ((rc = json_get_double(o, r->key, ctx, need, r->lo, r->hi, &v, err)))
            return rc;
        fw_option_store(r, opt, v, NULL);
        return ERR_OK;
    default:
        if ((rc = json_get_string(o, r->key, ctx, need, text,
                                  r->kind == FWO_TEXT ? r->size : sizeof text, err)) ||
            !text[0])
            return rc;
        if ((rc = fw_option_parse(r, text, opt, err)))
            return err_setf(err, ERR_INPUT, ctx->file, ctx->path, "%s: %s", r->key, err->msg);
        return ERR_OK;
    }
}

int fw_options_read(const cJSON *o, const json_ctx_t *ctx, sim_options_t *opt, err_t *err)
{
    for (int i = 0; i < fw_option_count(); i++) {
        const fw_option_t *r = &option_rows[i];
        int rc = read_row(r, o, ctx, opt, err);
        if (rc)
            return rc;
        if (framework_option_disabled(r->key))
            fw_option_off(r, opt);
    }
    return ERR_OK;
}

/* Edit distance of a and b, capped (for "did you mean" lists). */
static int distance(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    if (la > 40 || lb > 40)
        return 99;
    int row[41];
    for (size_t j = 0; j <= lb; j++)
        row[j] = (int)j;
    for (size_t i = 1; i <= la; i++) {
        int diag = row[0];
        row[0] = (int)i;
        for (size_t j = 1; j <= lb; j++) {
            int up = row[j], best = diag + (a[i - 1] != b[j - 1]);
            if (up + 1 < best)
                best = up + 1;
            if (row[j - 1] + 1 < best)
                best = row[j - 1] + 1;
            diag = up;
            row[j] = best;
        }
    }
    return row[lb];
}

int fw_option_set(sim_options_t *o, const char *assignment, err_t *err)
{
    const char *eq = strchr(assignment, '=');
    char key[64];
    if (!eq || eq == assignment || (size_t)(eq - assignment) >= sizeof key)
        return err_setf(err, ERR_INPUT, NULL, "--set", "expected KEY=VALUE (got '%s')",
                        assignment);
    snprintf(key, sizeof key, "%.*s", (int)(eq - assignment), assignment);
    const fw_option_t *r = fw_option_find(key);
    if (!r) {
        char close[256] = "";
        for (int i = 0; i < fw_option_count(); i++) {
            const char *k = option_rows[i].key;
            if (distance(key, k) <= 3 || strstr(k, key) || strstr(key, k)) {
                size_t n = strlen(close);
                snprintf(close + n, sizeof close - n, "%s%s", n ? ", " : "", k);
            }
        }
        return err_setf(err, ERR_INPUT, NULL, "--set",
                        "unknown option '%s'%s%s (scaleplan catalog frameworks lists them)", key,
                        close[0] ? "; close: " : "", close);
    }
    if (fw_option_parse(r, eq + 1, o, err))
        return err_setf(err, ERR_INPUT, NULL, "--set", "%s", err->msg);
    return ERR_OK;
}

void fw_option_format(const fw_option_t *r, const sim_options_t *o, char *buf, size_t cap)
{
    double v = fw_option_value(r, o);
    if (r->kind == FWO_BOOL) {
        snprintf(buf, cap, "%s", v ? "true" : "false");
    } else if (r->kind == FWO_DOUBLE) {
        snprintf(buf, cap, "%g", v);
    } else if (r->kind == FWO_WORD) {
        snprintf(buf, cap, "%d", (int)v);
        for (const char *q = r->words; *q;) {
            size_t len = strcspn(q, " ");
            const char *eq = strchr(q, '=');
            if (eq && eq < q + len && atoi(eq + 1) == (int)v) {
                snprintf(buf, cap, "%.*s", (int)(eq - q), q);
                break;
            }
            q += len + (q[len] == ' ');
        }
    } else {
        snprintf(buf, cap, "%s", (const char *)o + r->offset);
    }
}

void sim_options_default(sim_options_t *o)
{
    memset(o, 0, sizeof *o);
    for (int i = 0; i < fw_option_count(); i++)
        fw_option_store(&option_rows[i], o, option_rows[i].dflt, NULL);
    o->causal = true;
    o->layer_events = false;
    o->straggler_cv = -1;
    o->amax_reduction = AMAX_RED_TP_DP;
    o->dp_comm_ctas = 0;
    tpo_default(&o->tp_overlap);
    o->zero3.regather_backward = true;
    o->zero3.prefetch_backward = true;
    o->zero3.reshard_with_pp = true;
    /* Megatron-Core's MoE defaults (transformer_config.py): the allgather
     * token dispatcher, one GEMM per expert, unfused permutes, no shared
     * expert or all-to-all overlap; routing assumed balanced until the run
     * says otherwise. */
    o->moe.dispatcher = MOE_DISPATCH_ALLGATHER;
    o->moe.imbalance = 1;
}

int moe_dispatch_parse(const char *text, const char *field, moe_dispatch_t *out, err_t *err)
{
    if (strcmp(text, "alltoall") == 0)
        *out = MOE_DISPATCH_ALLTOALL;
    else if (strcmp(text, "allgather") == 0)
        *out = MOE_DISPATCH_ALLGATHER;
    else if (strcmp(text, "deepep") == 0 || strcmp(text, "flex") == 0)
        *out = MOE_DISPATCH_DEEPEP;
    else
        return err_setf(err, ERR_INPUT, NULL, field,
                        "use alltoall, allgather or deepep (flex) (got '%s')", text);
    return ERR_OK;
}

const char *moe_dispatch_name(moe_dispatch_t d)
{
    static const char *const names[] = {"alltoall", "allgather", "deepep"};
    return d <= MOE_DISPATCH_DEEPEP ? names[d] : "?";
}

const char *moe_dispatch_megatron_name(moe_dispatch_t d)
{
    static const char *const names[] = {"alltoall", "allgather", "flex"};
    return d <= MOE_DISPATCH_DEEPEP ? names[d] : "?";
}

