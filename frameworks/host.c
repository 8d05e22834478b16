#include "frameworks/host.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>

static const struct {
    const char *name;
    unsigned bit;
} SCOPES[] = {
    {"attn", HOST_GRAPH_ATTN},
    {"mlp", HOST_GRAPH_MLP},
    {"moe", HOST_GRAPH_MOE},
    {"moe_router", HOST_GRAPH_MOE_ROUTER},
    {"moe_preprocess", HOST_GRAPH_MOE_PREPROCESS},
    {"full_iteration", HOST_GRAPH_FULL},
};

#define N_SCOPES (int)(sizeof SCOPES / sizeof SCOPES[0])

static int scope_word(const char *w, size_t len, const char *field, unsigned *out, err_t *err)
{
    for (int i = 0; i < N_SCOPES; i++)
        if (strlen(SCOPES[i].name) == len && strncmp(SCOPES[i].name, w, len) == 0) {
            *out |= SCOPES[i].bit;
            return ERR_OK;
        }
    if (len == 4 && strncmp(w, "none", 4) == 0)
        return ERR_OK;
    return err_set(err, ERR_INPUT,
                   "%s%s'%.*s' is not a CUDA graph scope (attn, mlp, moe, moe_router, "
                   "moe_preprocess, full_iteration, none)",
                   field ? field : "", field ? ": " : "", (int)(len > 40 ? 40 : len), w);
}

int host_graph_scopes_parse(const char *text, const char *field, unsigned *out, err_t *err)
{
    *out = 0;
    int rc = host_graph_scopes_add(text, field, out, err);
    return rc ? rc : host_graph_scopes_check(*out, field, err);
}

int host_graph_scopes_add(const char *text, const char *field, unsigned *out, err_t *err)
{
    const char *p = text ? text : "";
    while (*p) {
        while (*p == ',' || isspace((unsigned char)*p))
            p++;
        size_t len = 0;
        while (p[len] && p[len] != ',' && !isspace((unsigned char)p[len]))
            len++;
        if (len && scope_word(p, len, field, out, err))
            return ERR_INPUT;
        p += len;
    }
    return ERR_OK;
}

int host_graph_scopes_check(unsigned bits, const char *field, err_t *err)
{
    if ((bits & HOST_GRAPH_MOE_PREPROCESS) && !(bits & HOST_GRAPH_MOE_ROUTER))
        return err_set(err, ERR_INPUT,
                       "%s%smoe_preprocess is captured with moe_router only (Megatron-Core "
                       "refuses it alone): add moe_router",
                       field ? field : "", field ? ": " : "");
    return ERR_OK;
}

void host_graph_scopes_name(unsigned bits, char *buf, int size)
{
    int used = 0;
    if (size > 0)
        buf[0] = '\0';
    for (int i = 0; i < N_SCOPES && used < size; i++)
        if (bits & SCOPES[i].bit)
            used += snprintf(buf + used, (size_t)(size - used), "%s%s", used ? " " : "",
                             SCOPES[i].name);
}

double host_race_s(const host_item_t *items, int n)
{
    double cpu = 0, gpu = 0;
    for (int i = 0; i < n; i++) {
        int k = items[i].kernels > 0 ? items[i].kernels : 1;
        double h = items[i].host_s / k, g = items[i].gpu_s / k;
        for (int j = 0; j < k; j++) {
            cpu += h;
            gpu = (gpu > cpu ? gpu : cpu) + g;
        }
        if (items[i].sync_after && cpu < gpu)
            cpu = gpu;
    }
    return gpu > cpu ? gpu : cpu;
}
