/* codec: gradient and parameter codecs, and what they are worth net.
 *
 * A codec (bf16 or fp8 gradient reduction, an int8 block-quantized
 * reduction, ZeRO++'s qwZ/hpZ/qgZ, 1-bit Adam and LAMB, PowerSGD, top-k with
 * error feedback) is one row of sim/catalog/codecs.json with its sources:
 * bits on the wire, whether the encoded data sums inside NCCL's all-reduce,
 * the GPU time to encode and decode, the extra memory, the extra tokens to
 * reach the same loss and the share of steps run uncompressed first. The
 * module changes the step simulator's options (bytes per gradient element
 * in DP reductions, bytes per parameter in ZeRO-3 gathers, hpZ's node-local
 * backward gathers, no overlap where the exchange waits for the whole
 * backward), simulates the step with and without the codec, and answers
 * net: exposed communication saved, codec time added, tokens added, and the
 * time (and so the GPU-hours) to reach the same loss. */
#ifndef SCALEPLAN_PLAN_CODEC_H
#define SCALEPLAN_PLAN_CODEC_H

#include <stdbool.h>

#include "common/catalog.h"
#include "common/error.h"
#include "plan/ladder.h"
#include "sim/step.h"

#define CODEC_NAME_MAX 32

typedef struct {
    char name[CODEC_NAME_MAX];
    char description[160];
    double grad_bits;          /* per gradient element on the wire, scales
                                  included; 0 = the run's gradient type */
    double gather_bits;        /* per parameter in ZeRO-3 gathers; 0 = unchanged */
    bool allreduce;            /* sums inside NCCL's all-reduce as encoded */
    double density;            /* kept fraction (sparse codecs; 1 = dense) */
    double index_bits;         /* per kept element (sparse codecs) */
    int lowrank;               /* PowerSGD rank; 0 = not low-rank */
    bool hpz;                  /* ZeRO++ hpZ: backward gathers inside a node */
    bool overlap;              /* exchange may overlap the backward */
    double codec_bytes;        /* GPU memory traffic per gradient element, per step */
    double gather_codec_bytes; /* per gathered parameter, per gather */
    double extra_mem_bytes;    /* per parameter the GPU holds */
    double node_shard_bytes;   /* per model parameter, sharded over a node */
    double token_multiplier;   /* tokens to the same loss over uncompressed */
    double warmup_fraction;    /* of the steps, run uncompressed first */
    int zero_min, zero_max;    /* ZeRO stages it runs with */
    char frameworks[160];      /* preset name prefixes that run it */
    char keys[320];            /* the configuration that turns it on */
    char source[1024];
    char assumed[400];         /* figures without a source ("" = none) */
} codec_t;

/* Load codec name from the catalog cat (NULL: parse it now). ERR_INPUT
 * naming --grad-codec for an unknown name, with the closest one. */
int codec_load(catalog_t *cat, const char *name, codec_t *out, err_t *err);

/* Every codec of the catalog: *out is a heap array of *n (caller frees).
 * Errors as catalog_load_table. */
int codec_load_all(codec_t **out, size_t *n, err_t *err);

/* The codec a DeepSpeed config turns on, as a catalog name into name (cap
 * bytes; "" when none): zero_optimization's zero_quantized_weights,
 * zero_hpz_partition_size > 1 and zero_quantized_gradients (all three:
 * "zero++", one alone: its part), optimizer type OneBitAdam or OneBitLamb,
 * communication_data_type bf16. Two codecs at once (ZeRO++ parts with a
 * 1-bit optimizer) are ERR_INPUT naming the keys. */
int codec_from_ds_config(const struct cJSON *root, char *name, size_t cap, err_t *err);

/* Whether framework preset fw runs c (its name starts with one of c's
 * framework prefixes). */
bool codec_runs_on(const codec_t *c, const char *fw);

/* ERR_INPUT, one line naming --grad-codec, when framework fw does not run
 * c or layout l's ZeRO stage is outside the codec's. */
int codec_check(const codec_t *c, const char *fw, const layout_t *l, err_t *err);

/* Bytes per gradient element that the step's DP reduction (all-reduce, or
 * reduce-scatter when sharded) would have to move to cost what the codec's
 * exchange costs: bits/8 for dense codecs, the factors' share for PowerSGD,
 * an all-gather of every rank's kept set for sparse ones; the run's own
 * gradient bytes when the codec leaves gradients alone. */
double codec_wire_bytes(const codec_t *c, const sim_input_t *in);

/* in with c's options applied (reduce and gather bytes, hpZ, overlap). */
void codec_apply(const codec_t *c, sim_input_t *in);

/* Seconds a step spends encoding and decoding on the GPU (exposed). */
double codec_time_s(const codec_t *c, const sim_input_t *in);

/* Extra GiB per GPU the codec holds. */
double codec_extra_gib(const codec_t *c, const sim_input_t *in);

typedef struct {
    double base_step_s;        /* without the codec */
    double codec_step_s;       /* a compressed step, encode and decode included */
    double mean_step_s;        /* over the run: warm-up steps uncompressed */
    double base_dp_exposed_s, codec_dp_exposed_s; /* breakdown dp_comm */
    double comm_saved_s;       /* exposed DP communication saved per step */
    double codec_s;            /* encode and decode added per step */
    double speedup_compressed; /* base over compressed step */
    double speedup;            /* base over the run's mean step */
    double token_multiplier;
    double time_ratio;         /* time (and GPU-hours) to the same loss over
                                  the uncompressed run's */
    double extra_gib;
    bool fits;                 /* the step and the codec's memory fit */
    bool worth;                /* fits and time_ratio < 1 */
    sim_result_t base, coded;
} codec_eval_t;

/* Simulate in's step without and with c and fill out. Errors as
 * sim_run_step; ctx is reused. */
int codec_evaluate(sim_ctx_t *ctx, const sim_input_t *in, const codec_t *c, codec_eval_t *out,
                   err_t *err);

/* The simulation input of a feasible ladder rung r of a plan run with in:
 * its layout under its framework's options, on the base cluster sized to
 * the rung (c and si are filled; si points at c, r's layout and in's model
 * and profile). Errors as sim_options_framework. */
int codec_rung_input(const ladder_input_t *in, const rung_t *r, cluster_t *c, sim_input_t *si,
                     err_t *err);

/* Evaluate c at rung r (codec_rung_input, then codec_evaluate). */
int codec_rung(sim_ctx_t *ctx, const ladder_input_t *in, const rung_t *r, const codec_t *c,
               codec_eval_t *out, err_t *err);

#endif
