/* storage: where checkpoints are written and read back
 * (topologies/catalog/storage.json).
 *
 * A storage system is a parallel file system, an object store or an NFS
 * appliance with an aggregate write and read bandwidth (fixed, or sized per
 * GPU of the job or per TiB provisioned), a per-client limit (one client =
 * one host), and a fixed cost per checkpoint (opening, metadata, commit).
 * What a job gets is the smallest of: the system's aggregate, the writing
 * hosts times the client limit, the writing nodes times the node's storage
 * network (the cluster's storage_gbs_per_node), and the GPUs' PCIe links to
 * host memory. How many hosts write depends on the checkpoint format: every
 * rank its shard (PyTorch DCP, Megatron dist-ckpt), one data-parallel
 * replica, or one process (a consolidated torch.save).
 */
#ifndef SCALEPLAN_TOPOLOGIES_STORAGE_H
#define SCALEPLAN_TOPOLOGIES_STORAGE_H

#include <stdbool.h>
#include <stddef.h>

#include "common/error.h"
#include "topologies/cluster.h"

typedef struct {
    char name[32];
    char kind[24];             /* parallel-fs, object-store, nfs, in-house */
    char description[200];
    double write_gbs;          /* aggregate sustained write, GB/s; 0 = sized below */
    double read_gbs;           /* aggregate read, GB/s; 0 = sized below */
    double peak_write_gbs;     /* a reported peak beside the sustained figure (0 = none) */
    double per_gpu_gbs;        /* aggregate sized per GPU of the job (0 = not so sized) */
    double per_tib_gbs;        /* aggregate per TiB provisioned (0 = not so sized) */
    double client_write_gbs;   /* per host (client) limit; 0 = only the node's network */
    double client_read_gbs;
    double commit_s;           /* fixed cost per checkpoint saved or loaded */
    bool assumed;              /* some figure above is an assumption (said in the source) */
    char source[900];
} storage_t;

typedef enum {
    CKPT_FORMAT_SHARDED = 0, /* every rank writes its shard */
    CKPT_FORMAT_REPLICA,     /* one data-parallel replica's ranks write */
    CKPT_FORMAT_RANK0,       /* one process writes the whole state */
    CKPT_FORMAT_COUNT
} ckpt_format_t;

const char *storage_format_name(ckpt_format_t f);
/* "sharded", "replica" or "rank0"; ERR_INPUT naming --checkpoint-format. */
int storage_format_parse(const char *text, ckpt_format_t *out, err_t *err);

/* Load a storage system by name; NULL or "" loads the catalog's default
 * ("default_storage"). Unknown names suggest the closest (ERR_INPUT). */
int storage_load(const char *name, storage_t *out, err_t *err);

/* Every entry, in file order; *list is a heap array the caller frees. */
int storage_load_all(storage_t **list, size_t *count, err_t *err);

/* The bandwidth one job gets, and what limits it. */
typedef struct {
    double write_bps;          /* bytes/s, all writers together */
    double read_bps;           /* bytes/s, all readers together (restart load) */
    double writer_hosts;       /* hosts that write */
    const char *write_limit;   /* "storage aggregate", "client limit", "node storage network", "PCIe" */
    const char *read_limit;
    double capacity_tib;       /* provisioned capacity used (per-TiB systems), else 0 */
} storage_bw_t;

/* PCIe bandwidth from one GPU to host memory, bytes/s: about 65% of a
 * PCIe x16 link per direction (~31 GB/s gen4, ~63 GB/s gen5;
 * tests/fixtures/validation/collectives.csv C151-C152). */
double storage_pcie_bps(const cluster_t *c);

/* What a job on c (n_gpus set) gets from s when checkpoints are saved in
 * format fmt with dp data-parallel replicas; capacity_tib sizes per-TiB
 * systems (ignored otherwise). Never fails: a system with no aggregate
 * limit is limited by the clients. */
void storage_job_bandwidth(const storage_t *s, const cluster_t *c, ckpt_format_t fmt, int dp,
                           double capacity_tib, storage_bw_t *out);

#endif
