/* precision: what a low-precision recipe costs and where it can run
 * (sim/catalog/precisions.json).
 *
 * The GEMMs of an fp8 or fp4 recipe run at the GPU's fp8 or fp4 rate; their
 * inputs are quantized first, which moves memory: each forward input, each
 * backward output gradient, and the weights once per step or per
 * micro-batch. A recipe needs what the GPU has: fp8 tensor cores, hardware
 * block scaling (MX formats) or fp4 tensor cores.
 */
#ifndef SCALEPLAN_SIM_PRECISION_H
#define SCALEPLAN_SIM_PRECISION_H

#include <stdbool.h>

#include "common/catalog.h"
#include "common/error.h"
#include "frameworks/options.h"
#include "models/layout.h"
#include "topologies/gpu.h"


/* The costs of precision p (bf16/fp16/fp32: not quantized, GEMMs in their
 * own dtype). ERR_INPUT names the catalog file when it is broken. */
int prec_costs(precision_t p, prec_costs_t *out, err_t *err);

/* The same, looked up in the parsed catalog cat (NULL: parse it now). */
int prec_costs_in(catalog_t *cat, precision_t p, prec_costs_t *out, err_t *err);

/* Whether g can run p; else ERR_INPUT on --precision naming the GPU's
 * precisions ("h100-sxm runs bf16, fp16, fp32, fp8, fp8-cs, fp8-block,
 * fp8-rowwise"). The recipes are looked up in cat (NULL: parsed now). */
int prec_check_gpu(catalog_t *cat, precision_t p, const gpu_t *g, err_t *err);

/* The precisions g can run, comma separated, into buf (recipes looked up
 * in cat; NULL: parsed now). */
void prec_list_for_gpu(catalog_t *cat, const gpu_t *g, char *buf, size_t cap);

#endif
