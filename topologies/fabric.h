/* fabric: interconnect catalog (topologies/catalog/fabrics.json).
 *
 * Scale-up fabrics (NVLink/NVSwitch, xGMI, PCIe) connect the GPUs of a node
 * and are described per GPU per direction; scale-out fabrics (InfiniBand,
 * RoCE, EFA, Ethernet) connect nodes and are described per port. Each
 * carries the fraction of its line rate that NCCL reaches at large messages
 * in published measurements, and its hardware latency.
 */
#ifndef SCALEPLAN_TOPOLOGIES_FABRIC_H
#define SCALEPLAN_TOPOLOGIES_FABRIC_H

#include <stdbool.h>
#include <stddef.h>

#include "common/catalog.h"
#include "common/error.h"
#include "common/json.h"

typedef enum {
    FABRIC_NVLINK = 0,
    FABRIC_XGMI,
    FABRIC_PCIE,
    FABRIC_INFINIBAND,
    FABRIC_ROCE,
    FABRIC_EFA,
    FABRIC_ETHERNET,
    FABRIC_OMNIPATH,
    FABRIC_KIND_COUNT
} fabric_kind_t;

typedef struct {
    char name[32];
    char description[96];
    fabric_kind_t kind;
    bool intra;        /* scale-up (inside a node) rather than scale-out */
    bool switched;     /* scale-up through a switch (NVSwitch, PCIe switch) */
    double bw_gbs;     /* intra: per GPU per direction; inter: per port; GB/s */
    double latency_us; /* hardware latency per hop */
    double efficiency; /* fraction of bw_gbs NCCL reaches at large messages */
} fabric_t;

const char *fabric_kind_name(fabric_kind_t k);

/* Load a fabric by catalog name ("ib-ndr", "nvlink4"). */
int fabric_load(const char *name, fabric_t *f, err_t *err);

/* The same, looked up in the parsed catalog cat (NULL: parse it now). */
int fabric_load_in(catalog_t *cat, const char *name, fabric_t *f, err_t *err);

/* Read one entry of fabrics.json. */
int fabric_from_json(const cJSON *obj, const json_ctx_t *ctx, fabric_t *f,
                     err_t *err);

/* All catalog fabrics; *fabrics is a heap array the caller frees. */
int fabric_load_all(fabric_t **fabrics, size_t *count, err_t *err);

#endif
