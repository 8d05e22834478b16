#include "profile/provenance.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

const char *prov_kind_name(prov_kind_t k)
{
    switch (k) {
    case PROV_MEASURED:
        return "measured";
    case PROV_FITTED:
        return "fitted";
    case PROV_ASSUMED:
        return "assumed";
    case PROV_SOURCED:
        return "sourced";
    }
    return "?";
}

/* Case-insensitive strstr (strcasestr is a GNU extension). */
static const char *find_ci(const char *text, const char *word)
{
    size_t n = strlen(word);
    for (const char *t = text; *t; t++)
        if (strncasecmp(t, word, n) == 0)
            return t;
    return NULL;
}

static bool has_word(const char *text, const char *word)
{
    return find_ci(text, word) != NULL;
}

prov_kind_t prov_classify(const char *text)
{
    /* the first of the two words decides: "FITTED ... to assumed rows" is
     * a fit, "ASSUMED equal to the fitted factor of ..." an assumption */
    const char *fit = find_ci(text, "fitted"), *as = find_ci(text, "assum");
    if (fit && (!as || fit < as))
        return PROV_FITTED;
    if (as)
        return PROV_ASSUMED;
    if (has_word(text, "measured") || has_word(text, "MAMF") || has_word(text, "benchmark") ||
        has_word(text, "hardware.csv"))
        return PROV_MEASURED;
    return PROV_SOURCED;
}

/* The clause of text (split at ';') that starts with, or else mentions,
 * key; the whole text when none does. */
static void clause_of(const char *text, const char *key, char *out, size_t cap)
{
    const char *best = NULL;
    size_t best_len = 0;
    for (const char *c = text; c && *c;) {
        while (*c == ' ')
            c++;
        const char *end = strchr(c, ';');
        size_t len = end ? (size_t)(end - c) : strlen(c);
        if (strncasecmp(c, key, strlen(key)) == 0) {
            best = c;
            best_len = len;
            break;
        }
        const char *hit = find_ci(c, key);
        if (!best && hit && hit < c + len) {
            best = c;
            best_len = len;
        }
        c = end ? end + 1 : NULL;
    }
    if (!best) {
        best = text;
        best_len = strlen(text);
    }
    if (best_len >= cap)
        best_len = cap - 1;
    memcpy(out, best, best_len);
    out[best_len] = '\0';
}

static void add(prov_figure_t *out, int max, int *n, const char *name, double value,
                const char *text)
{
    if (*n >= max)
        return;
    prov_figure_t *f = &out[(*n)++];
    snprintf(f->name, sizeof f->name, "%s", name);
    f->value = value;
    snprintf(f->text, sizeof f->text, "%s", text);
    f->kind = prov_classify(f->text);
}

static void add_clause(prov_figure_t *out, int max, int *n, const char *name, double value,
                       const char *source, const char *key)
{
    char clause[PROV_TEXT_MAX];
    clause_of(source, key, clause, sizeof clause);
    add(out, max, n, name, value, clause);
}

int prov_figures(const profile_t *p, prov_figure_t *out, int max)
{
    int n = 0;
    char name[40];
    for (int d = 0; d < DTYPE_COUNT; d++) {
        if (!(p->gemm_max_eff[d] > 0))
            continue;
        snprintf(name, sizeof name, "gemm.max_efficiency.%s", dtype_name((dtype_t)d));
        add(out, max, &n, name, p->gemm_max_eff[d],
            p->gemm_dtype_source[d][0] ? p->gemm_dtype_source[d] : p->gemm_source);
    }
    add_clause(out, max, &n, "gemm.tile", p->tile_m * (double)p->tile_n, p->gemm_source, "tile");
    add_clause(out, max, &n, "gemm.wave_penalty", p->wave_penalty, p->gemm_source,
               "wave_penalty");
    add_clause(out, max, &n, "gemm.k_half", p->k_half, p->gemm_source, "k_half");
    add_clause(out, max, &n, "gemm.sustained_factor", p->sustained_factor, p->gemm_source,
               "sustained_factor");
    add(out, max, &n, "attention.default", p->attn_fwd_eff, p->attn_source);
    for (int i = 0; i < p->n_attn_kernels; i++) {
        snprintf(name, sizeof name, "attention.%s", p->attn_kernels[i].name);
        add(out, max, &n, name, p->attn_kernels[i].fwd_causal, p->attn_kernels[i].source);
    }
    add_clause(out, max, &n, "memory.bw_efficiency", p->mem_bw_eff, p->mem_source,
               "bandwidth");
    add_clause(out, max, &n, "memory.reserved_gib", p->reserved_gib, p->mem_source, "GiB");
    add_clause(out, max, &n, "memory.fragmentation", p->fragmentation, p->mem_source,
               "fragmentation");
    if (p->atomic_add_gops > 0)
        add(out, max, &n, "memory.atomic_add_gops", p->atomic_add_gops, p->atomic_source);
    add(out, max, &n, "network", p->net_efficiency, p->net_source);
    add(out, max, &n, "straggler_cv", p->straggler_cv, p->straggler_source);
    return n;
}
