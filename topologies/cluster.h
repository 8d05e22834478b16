/* cluster: the machines a job runs on.
 *
 * A cluster_t is a GPU type, how many GPUs share a node (an NVLink domain:
 * 8 in HGX/DGX, 72 in GB200 NVL72), the scale-up fabric inside a node, the
 * scale-out fabric between nodes with its number of rails (NICs per node),
 * the oversubscription of the network above a leaf, and the storage
 * bandwidth checkpoints use. Clusters come from JSON files (catalog names
 * under topologies/catalog/clusters/ or a user's file), or from --gpu, which
 * takes the GPU's default cluster and applies the user's overrides.
 */
#ifndef SCALEPLAN_TOPOLOGIES_CLUSTER_H
#define SCALEPLAN_TOPOLOGIES_CLUSTER_H

#include <stdbool.h>

#include "common/catalog.h"
#include "common/error.h"
#include "common/json.h"
#include "topologies/fabric.h"
#include "topologies/gpu.h"

typedef struct {
    char name[64];
    char description[160];
    gpu_t gpu;
    int n_gpus;        /* GPUs in the job; 0 until set */
    int gpus_per_node; /* GPUs sharing the scale-up fabric */
    int gpus_per_host; /* GPUs per physical server (failure accounting);
                          equals gpus_per_node except in NVL72-style racks */
    fabric_t intra;    /* scale-up fabric inside a node */
    fabric_t inter;    /* scale-out fabric between nodes */
    int nics_per_node; /* scale-out ports (rails) per node */
    double oversubscription; /* >= 1; taper above a leaf (1 = non-blocking) */
    int nodes_per_leaf;      /* nodes under one leaf before the taper applies */
    double storage_gbs_per_node; /* checkpoint write bandwidth per node, GB/s */
    /* The host side of a node, for offload: CPU memory, CPU cores (they run
     * an offloaded optimizer step) and local NVMe bandwidth. From the
     * cluster file's "host" object; defaults when it has none, with
     * host_assumed set so the user is told. */
    double host_memory_gib;  /* CPU memory per node */
    int host_cpu_cores;      /* physical cores per node */
    double nvme_gbs_per_node; /* local NVMe bandwidth (sustained), GB/s */
    bool host_assumed;       /* the figures are scaleplan's defaults */
} cluster_t;

/* What the user asked for on the command line. Unset fields are NULL / 0. */
typedef struct {
    const char *cluster;  /* --cluster: catalog name or JSON file */
    const char *gpu;      /* --gpu: catalog GPU (overrides the cluster's) */
    int n_gpus;           /* --gpus */
    int gpus_per_node;    /* --gpus-per-node */
    const char *fabric;   /* --fabric: replaces the intra or inter fabric */
    int nics_per_node;    /* --nics-per-node */
    double oversubscription; /* --oversubscription */
    catalog_t *catalog;   /* where GPU and fabric names are looked up: the
                             process's parsed catalog, or NULL to parse the
                             files for this call (once each) */
} cluster_spec_t;

/* Build a cluster from a spec: --cluster, else the GPU's default cluster,
 * then the overrides. Needs --cluster or --gpu. n_gpus must be >= 1.
 * --gpus-per-node keeps the cluster's NICs per GPU (nics_per_node scaled
 * with the node, rounded, at least 1) unless --nics-per-node is given. */
int cluster_resolve(const cluster_spec_t *spec, cluster_t *c, err_t *err);

/* Load a cluster definition by catalog name or file path (n_gpus from the
 * file when it has one, else 0). */
int cluster_load(const char *name_or_path, cluster_t *c, err_t *err);

/* The same, its GPU and fabrics looked up in cat (NULL: parse them now). */
int cluster_load_in(catalog_t *cat, const char *name_or_path, cluster_t *c, err_t *err);

/* Check the fields (used after overrides). */
int cluster_validate(const cluster_t *c, err_t *err);

/* Nodes the job occupies: ceil(n_gpus / gpus_per_node). */
int cluster_nodes(const cluster_t *c);

/* Physical servers the job occupies: ceil(n_gpus / gpus_per_host). */
int cluster_hosts(const cluster_t *c);

/* Scale-out line rate per GPU in GB/s (rails x port rate / GPUs per node). */
double cluster_nic_gbs_per_gpu(const cluster_t *c);

/* The catalog's cluster names. Free with catalog_free_names. */
int cluster_catalog_names(char ***names, size_t *count, err_t *err);

#endif
