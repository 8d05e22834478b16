#include "topologies/cluster.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "common/catalog.h"
#include "common/json.h"
#include "common/names.h"

#define CLUSTER_DIR "topologies/catalog/clusters"

int cluster_catalog_names(char ***names, size_t *count, err_t *err)
{
    return catalog_list(CLUSTER_DIR, names, count, err);
}

int cluster_validate(const cluster_t *c, err_t *err)
{
    if (c->gpus_per_node < 1 || c->gpus_per_node > 4096)
        return err_setf(err, ERR_INPUT, c->name, "gpus_per_node",
                        "must be from 1 to 4096 (got %d)", c->gpus_per_node);
    if (c->gpus_per_host < 1 || c->gpus_per_host > c->gpus_per_node)
        return err_setf(err, ERR_INPUT, c->name, "gpus_per_host",
                        "must be from 1 to gpus_per_node %d (got %d)",
                        c->gpus_per_node, c->gpus_per_host);
    if (c->n_gpus < 0 || c->n_gpus > (1 << 24))
        return err_setf(err, ERR_INPUT, c->name, "--gpus",
                        "must be from 1 to %d (got %d)", 1 << 24, c->n_gpus);
    if (!c->intra.intra)
        return err_setf(err, ERR_INPUT, c->name, "intra_fabric",
                        "'%s' is a scale-out fabric; use a scale-up one "
                        "(nvlink3/4/5, xgmi3, pcie4/5)",
                        c->intra.name);
    if (c->inter.intra)
        return err_setf(err, ERR_INPUT, c->name, "inter_fabric",
                        "'%s' is a scale-up fabric; use a scale-out one "
                        "(ib-hdr, ib-ndr, roce-400, efa-v2, eth-100, ...)",
                        c->inter.name);
    if (c->nics_per_node < 1 || c->nics_per_node > 4096)
        return err_setf(err, ERR_INPUT, c->name, "nics_per_node",
                        "must be from 1 to 4096 (got %d)", c->nics_per_node);
    if (!(c->oversubscription >= 1) || !isfinite(c->oversubscription) ||
        c->oversubscription > 1000)
        return err_setf(err, ERR_INPUT, c->name, "oversubscription",
                        "must be at least 1 (1 = non-blocking; got %g)",
                        c->oversubscription);
    if (c->nodes_per_leaf < 1)
        return err_setf(err, ERR_INPUT, c->name, "nodes_per_leaf",
                        "must be at least 1 (got %d)", c->nodes_per_leaf);
    if (!(c->storage_gbs_per_node > 0))
        return err_setf(err, ERR_INPUT, c->name, "storage_gbs_per_node",
                        "must be greater than zero (got %g)",
                        c->storage_gbs_per_node);
    return ERR_OK;
}

static int cluster_from_json(catalog_t *cat, const cJSON *obj, const char *file, cluster_t *c,
                             err_t *err)
{
    memset(c, 0, sizeof *c);
    json_ctx_t ctx = json_ctx_root(file);
    char gpu[GPU_NAME_MAX * 2] = "", intra[32] = "", inter[32] = "";
    int rc;
    c->oversubscription = 1.0;
    c->nodes_per_leaf = 32;
    if ((rc = json_expect_object(obj, &ctx, err)) ||
        (rc = json_get_string(obj, "name", &ctx, JSON_REQUIRED, c->name,
                              sizeof c->name, err)) ||
        (rc = json_get_string(obj, "description", &ctx, JSON_OPTIONAL,
                              c->description, sizeof c->description, err)) ||
        (rc = json_get_string(obj, "gpu", &ctx, JSON_REQUIRED, gpu, sizeof gpu,
                              err)) ||
        (rc = json_get_int(obj, "gpus_per_node", &ctx, JSON_REQUIRED, 1, 4096,
                           &c->gpus_per_node, err)) ||
        (rc = json_get_int(obj, "gpus_per_host", &ctx, JSON_OPTIONAL, 1, 4096,
                           &c->gpus_per_host, err)) ||
        (rc = json_get_int(obj, "gpus", &ctx, JSON_OPTIONAL, 1, 1 << 24,
                           &c->n_gpus, err)) ||
        (rc = json_get_string(obj, "intra_fabric", &ctx, JSON_REQUIRED, intra,
                              sizeof intra, err)) ||
        (rc = json_get_string(obj, "inter_fabric", &ctx, JSON_REQUIRED, inter,
                              sizeof inter, err)) ||
        (rc = json_get_int(obj, "nics_per_node", &ctx, JSON_REQUIRED, 1, 4096,
                           &c->nics_per_node, err)) ||
        (rc = json_get_double(obj, "oversubscription", &ctx, JSON_OPTIONAL, 1,
                              1000, &c->oversubscription, err)) ||
        (rc = json_get_int(obj, "nodes_per_leaf", &ctx, JSON_OPTIONAL, 1,
                           1 << 20, &c->nodes_per_leaf, err)) ||
        (rc = json_get_double(obj, "storage_gbs_per_node", &ctx, JSON_REQUIRED,
                              1e-3, 1e6, &c->storage_gbs_per_node, err)))
        return rc;
    if (c->gpus_per_host == 0)
        c->gpus_per_host = c->gpus_per_node;
    const cJSON *host = NULL;
    if ((rc = json_get_object(obj, "host", &ctx, JSON_OPTIONAL, &host, err)))
        return rc;
    /* Defaults for files without a host object: a 1 TiB, 64-core, 10 GB/s
     * NVMe server (assumed, said by the commands that use it). */
    c->host_memory_gib = 1024;
    c->host_cpu_cores = 64;
    c->nvme_gbs_per_node = 10;
    c->host_assumed = host == NULL;
    if (host) {
        json_ctx_t hctx = json_ctx_member(&ctx, "host");
        if ((rc = json_get_double(host, "memory_gib", &hctx, JSON_REQUIRED, 1, 1e9,
                                  &c->host_memory_gib, err)) ||
            (rc = json_get_int(host, "cpu_cores", &hctx, JSON_REQUIRED, 1, 1 << 20,
                               &c->host_cpu_cores, err)) ||
            (rc = json_get_double(host, "nvme_gbs", &hctx, JSON_REQUIRED, 0.01, 1e6,
                                  &c->nvme_gbs_per_node, err)))
            return rc;
        if (!cJSON_IsString(cJSON_GetObjectItemCaseSensitive(host, "source")))
            return err_setf(err, ERR_INPUT, file, "host.source",
                            "missing (every catalog figure needs one)");
    }
    if ((rc = gpu_load_in(cat, gpu, &c->gpu, err)) ||
        (rc = fabric_load_in(cat, intra, &c->intra, err)) ||
        (rc = fabric_load_in(cat, inter, &c->inter, err)))
        return err_prefix(err, file);
    return cluster_validate(c, err);
}

int cluster_load(const char *name_or_path, cluster_t *c, err_t *err)
{
    catalog_t *cat = catalog_create(); /* one parse of the fabrics for both */
    if (!cat)
        return err_set(err, ERR_RUNTIME, "out of memory");
    int rc = cluster_load_in(cat, name_or_path, c, err);
    catalog_destroy(cat);
    return rc;
}

int cluster_load_in(catalog_t *cat, const char *name_or_path, cluster_t *c, err_t *err)
{
    cJSON *owned = NULL;
    const cJSON *root = NULL;
    char origin[CATALOG_ORIGIN_MAX];
    struct stat st;
    int rc;
    if (stat(name_or_path, &st) == 0 && S_ISREG(st.st_mode)) {
        snprintf(origin, sizeof origin, "%s", name_or_path);
        json_ctx_t top = json_ctx_root(name_or_path);
        rc = json_parse_file(name_or_path, &owned, err);
        root = owned;
        if (!rc)
            rc = json_check_unique_keys(root, &top, err);
    } else {
        char norm[64], rel[160];
        names_normalize(name_or_path, norm, sizeof norm);
        snprintf(rel, sizeof rel, CLUSTER_DIR "/%s.json", norm);
        if (!catalog_exists(rel)) {
            size_t len = strlen(name_or_path);
            if (len > 5 && strcasecmp(name_or_path + len - 5, ".json") == 0)
                return err_setf(err, ERR_INPUT, name_or_path, NULL, "no such file");
            return catalog_unknown_name(CLUSTER_DIR, name_or_path, "--cluster",
                                        "cluster", "scaleplan catalog clusters",
                                        "; a JSON file works too", err);
        }
        rc = catalog_doc(cat, rel, &root, &owned, origin, sizeof origin, err);
    }
    if (!rc) /* a file refused for a key given twice is parsed, and freed here */
        rc = cluster_from_json(cat, root, origin, c, err);
    cJSON_Delete(owned);
    return rc;
}

static int resolve(catalog_t *cat, const cluster_spec_t *spec, cluster_t *c, err_t *err);

int cluster_resolve(const cluster_spec_t *spec, cluster_t *c, err_t *err)
{
    catalog_t *own = NULL, *cat = spec->catalog;
    if (!cat && !(cat = own = catalog_create())) /* this call's: each file parsed once */
        return err_set(err, ERR_RUNTIME, "out of memory");
    int rc = resolve(cat, spec, c, err);
    catalog_destroy(own);
    return rc;
}

static int resolve(catalog_t *cat, const cluster_spec_t *spec, cluster_t *c, err_t *err)
{
    int rc;
    if (!spec->cluster && !spec->gpu)
        return err_setf(err, ERR_INPUT, NULL, "--gpu",
                        "say which GPUs: --gpu NAME (e.g. h100-sxm) or "
                        "--cluster FILE");
    if (spec->cluster) {
        if ((rc = cluster_load_in(cat, spec->cluster, c, err)))
            return rc;
        if (spec->gpu && (rc = gpu_load_in(cat, spec->gpu, &c->gpu, err)))
            return rc;
    } else {
        gpu_t gpu;
        if ((rc = gpu_load_in(cat, spec->gpu, &gpu, err)))
            return rc;
        if ((rc = cluster_load_in(cat, gpu.default_cluster, c, err)))
            return err_prefix(err, "default cluster of the GPU");
        c->gpu = gpu; /* the default cluster may be described with a sibling GPU */
    }
    if (spec->n_gpus)
        c->n_gpus = spec->n_gpus;
    if (spec->gpus_per_node) {
        /* A user's node is one server unless the cluster says otherwise. */
        if (c->gpus_per_host == c->gpus_per_node)
            c->gpus_per_host = spec->gpus_per_node;
        /* The scale-out NICs belong to the GPUs (a rail each on DGX H100,
         * one per GPU on GB200 NVL72's compute trays): a node of another
         * size keeps the cluster's NICs per GPU, at least one a node. */
        double per_gpu = (double)c->nics_per_node / c->gpus_per_node;
        long nics = lround(per_gpu * spec->gpus_per_node);
        c->nics_per_node = nics < 1 ? 1 : nics > 4096 ? 4096 : (int)nics;
        c->gpus_per_node = spec->gpus_per_node;
    }
    if (spec->nics_per_node)
        c->nics_per_node = spec->nics_per_node;
    if (spec->oversubscription > 0)
        c->oversubscription = spec->oversubscription;
    if (spec->fabric) {
        fabric_t f;
        if ((rc = fabric_load_in(cat, spec->fabric, &f, err)))
            return rc;
        if (f.intra)
            c->intra = f;
        else
            c->inter = f;
    }
    if (c->n_gpus < 1)
        return err_setf(err, ERR_INPUT, NULL, "--gpus",
                        "say how many GPUs the job uses (e.g. --gpus 256)");
    return cluster_validate(c, err);
}

int cluster_nodes(const cluster_t *c)
{
    return (c->n_gpus + c->gpus_per_node - 1) / c->gpus_per_node;
}

int cluster_hosts(const cluster_t *c)
{
    return (c->n_gpus + c->gpus_per_host - 1) / c->gpus_per_host;
}

double cluster_nic_gbs_per_gpu(const cluster_t *c)
{
    return c->inter.bw_gbs * c->nics_per_node / c->gpus_per_node;
}
