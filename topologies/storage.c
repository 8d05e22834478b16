#include "topologies/storage.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "common/catalog.h"

#define STORAGE_FILE "topologies/catalog/storage.json"

static const char *format_names[CKPT_FORMAT_COUNT] = {"sharded", "replica", "rank0"};

const char *storage_format_name(ckpt_format_t f)
{
    return f < CKPT_FORMAT_COUNT ? format_names[f] : "?";
}

int storage_format_parse(const char *text, ckpt_format_t *out, err_t *err)
{
    for (int i = 0; i < CKPT_FORMAT_COUNT; i++)
        if (strcmp(text, format_names[i]) == 0) {
            *out = (ckpt_format_t)i;
            return ERR_OK;
        }
    return err_setf(err, ERR_INPUT, NULL, "--checkpoint-format",
                    "use sharded, replica or rank0 (got '%s')", text);
}

static int storage_from_json(const cJSON *obj, const json_ctx_t *ctx, void *out, err_t *err)
{
    storage_t *s = out;
    memset(s, 0, sizeof *s);
    int rc;
    if ((rc = json_expect_object(obj, ctx, err)) ||
        (rc = json_get_string(obj, "name", ctx, JSON_REQUIRED, s->name, sizeof s->name, err)) ||
        (rc = json_get_string(obj, "kind", ctx, JSON_REQUIRED, s->kind, sizeof s->kind, err)) ||
        (rc = json_get_string(obj, "description", ctx, JSON_OPTIONAL, s->description,
                              sizeof s->description, err)) ||
        (rc = json_get_double(obj, "write_gbs", ctx, JSON_OPTIONAL, 0, 1e7, &s->write_gbs, err)) ||
        (rc = json_get_double(obj, "read_gbs", ctx, JSON_OPTIONAL, 0, 1e7, &s->read_gbs, err)) ||
        (rc = json_get_double(obj, "peak_write_gbs", ctx, JSON_OPTIONAL, 0, 1e7,
                              &s->peak_write_gbs, err)) ||
        (rc = json_get_double(obj, "per_gpu_gbs", ctx, JSON_OPTIONAL, 0, 1e4, &s->per_gpu_gbs,
                              err)) ||
        (rc = json_get_double(obj, "per_tib_gbs", ctx, JSON_OPTIONAL, 0, 1e4, &s->per_tib_gbs,
                              err)) ||
        (rc = json_get_double(obj, "client_write_gbs", ctx, JSON_OPTIONAL, 0, 1e5,
                              &s->client_write_gbs, err)) ||
        (rc = json_get_double(obj, "client_read_gbs", ctx, JSON_OPTIONAL, 0, 1e5,
                              &s->client_read_gbs, err)) ||
        (rc = json_get_double(obj, "commit_s", ctx, JSON_OPTIONAL, 0, 1e5, &s->commit_s, err)) ||
        (rc = json_get_bool(obj, "assumed", ctx, JSON_OPTIONAL, &s->assumed, err)) ||
        (rc = json_get_string(obj, "source", ctx, JSON_REQUIRED, s->source, sizeof s->source,
                              err)))
        return rc;
    /* exactly one way of sizing the aggregate */
    int ways = (s->write_gbs > 0) + (s->per_gpu_gbs > 0) + (s->per_tib_gbs > 0);
    bool client_only = s->client_write_gbs > 0 && ways == 0;
    if (ways > 1 || (ways == 0 && !client_only))
        return err_setf(err, ERR_INPUT, ctx->file, ctx->path,
                        "give one of write_gbs, per_gpu_gbs or per_tib_gbs (or only "
                        "client_write_gbs for a store limited by its clients)");
    if (s->write_gbs > 0 && !(s->read_gbs > 0))
        s->read_gbs = s->write_gbs;
    if (s->client_write_gbs > 0 && !(s->client_read_gbs > 0))
        s->client_read_gbs = s->client_write_gbs;
    return ERR_OK;
}

int storage_load(const char *name, storage_t *out, err_t *err)
{
    char def[32] = "";
    if (!name || !*name) {
        cJSON *root = NULL;
        char origin[CATALOG_ORIGIN_MAX];
        int rc = catalog_parse(STORAGE_FILE, &root, origin, sizeof origin, err);
        if (rc)
            return rc;
        json_ctx_t ctx = json_ctx_root(origin);
        rc = json_get_string(root, "default_storage", &ctx, JSON_REQUIRED, def, sizeof def, err);
        cJSON_Delete(root);
        if (rc)
            return rc;
        name = def;
    }
    return catalog_load_named(STORAGE_FILE, "storage", name, "--storage",
                              "scaleplan catalog storage", storage_from_json, out, err);
}

int storage_load_all(storage_t **list, size_t *count, err_t *err)
{
    return catalog_load_table(STORAGE_FILE, "storage", sizeof(**list), storage_from_json,
                              (void **)list, count, err);
}

double storage_pcie_bps(const cluster_t *c)
{
    double link = c->gpu.pcie_gen >= 5 ? 63e9 : 31e9;
    return 0.65 * link;
}

/* The smallest of the limits, and its name. */
static void limit(double *bps, const char **why, double candidate, const char *name)
{
    if (candidate > 0 && candidate < *bps) {
        *bps = candidate;
        *why = name;
    }
}

void storage_job_bandwidth(const storage_t *s, const cluster_t *c, ckpt_format_t fmt, int dp,
                           double capacity_tib, storage_bw_t *out)
{
    memset(out, 0, sizeof *out);
    int gpus = c->n_gpus > 0 ? c->n_gpus : 1;
    double nodes = c->n_gpus > 0 ? cluster_nodes(c) : 1;
    double hosts = c->n_gpus > 0 ? cluster_hosts(c) : 1;
    if (dp < 1)
        dp = 1;
    /* the share of the job that writes */
    double share = fmt == CKPT_FORMAT_SHARDED ? 1.0
                   : fmt == CKPT_FORMAT_REPLICA ? 1.0 / dp
                                                : 0; /* rank0: one host */
    double w_hosts = fmt == CKPT_FORMAT_RANK0 ? 1 : fmax(1, ceil(hosts * share));
    double w_nodes = fmt == CKPT_FORMAT_RANK0 ? 1 : fmax(1, ceil(nodes * share));
    double w_gpus = fmt == CKPT_FORMAT_RANK0 ? 1 : fmax(1, ceil(gpus * share));
    out->writer_hosts = w_hosts;
    /* the aggregate of the system */
    double agg_w = s->write_gbs * 1e9, agg_r = s->read_gbs * 1e9;
    if (s->per_gpu_gbs > 0)
        agg_w = agg_r = s->per_gpu_gbs * 1e9 * gpus;
    if (s->per_tib_gbs > 0) {
        out->capacity_tib = capacity_tib;
        agg_w = agg_r = s->per_tib_gbs * 1e9 * capacity_tib;
    }
    double w = INFINITY, r = INFINITY;
    const char *wy = "storage aggregate", *ry = "storage aggregate";
    if (agg_w > 0)
        w = agg_w;
    if (agg_r > 0)
        r = agg_r;
    limit(&w, &wy, w_hosts * s->client_write_gbs * 1e9, "client limit");
    limit(&w, &wy, w_nodes * c->storage_gbs_per_node * 1e9, "node storage network");
    limit(&w, &wy, w_gpus * storage_pcie_bps(c), "PCIe");
    /* loading: every host reads its part (one reads it all for rank0) */
    double r_hosts = fmt == CKPT_FORMAT_RANK0 ? 1 : hosts;
    double r_nodes = fmt == CKPT_FORMAT_RANK0 ? 1 : nodes;
    double r_gpus = fmt == CKPT_FORMAT_RANK0 ? 1 : gpus;
    limit(&r, &ry, r_hosts * s->client_read_gbs * 1e9, "client limit");
    limit(&r, &ry, r_nodes * c->storage_gbs_per_node * 1e9, "node storage network");
    limit(&r, &ry, r_gpus * storage_pcie_bps(c), "PCIe");
    out->write_bps = w;
    out->read_bps = r;
    out->write_limit = wy;
    out->read_limit = ry;
}
