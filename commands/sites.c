#include "commands/sites.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands/output.h"
#include "common/json.h"
#include "common/units.h"
#include "reports/table.h"
#include "plan/codec.h"
#include "plan/islands.h"

static const cmd_opt_t sites_opts[] = {
    {"--grad-codec", NULL, "NAME",
     "gradient/parameter codec (sim/catalog/codecs.json): bf16-grads, fp8-grads, int8-grads, "
     "zero++, zero++-qwz, zero++-hpz, zero++-qgz, onebit-adam, onebit-lamb, powersgd-r4, "
     "topk-1pct, or auto (the one the --deepspeed config turns on); priced net: communication "
     "saved, codec time, extra tokens to the same loss",
     CMD_WORD},
    {"--islands", NULL, "NxG",
     "train across N islands (sites) of G GPUs each, e.g. 2x8192 (plan: N, the rung split evenly)",
     CMD_WORD},
    {"--island-link", NULL, "BW,RTT",
     "the link between islands: bandwidth each way and round trip, e.g. 400Gbps,20ms", CMD_WORD},
    {"--diloco", NULL, "K=V,...",
     "DiLoCo across the islands instead of synchronous DP: H (inner steps), M (replicas), "
     "fragments and overlap (streaming DiLoCo), bits, e.g. H=500,M=2,fragments=4,bits=4",
     CMD_WORD},
};
const cmd_group_t CMD_SITES_OPTS = {"Gradient codecs and training across sites", sites_opts,
                                    sizeof sites_opts / sizeof sites_opts[0]};

int cmd_sites_codec(const cmd_args_t *a, catalog_t *cat, codec_t *c, err_t *err)
{
    const char *v = cmd_get(a, "--grad-codec");
    if (!v || strcmp(v, "auto") != 0)
        return codec_load(cat, v, c, err);
    const char *ds = cmd_has(a, "--deepspeed") ? cmd_get(a, "--deepspeed") : NULL;
    if (!ds)
        return err_set(err, ERR_INPUT,
                       "--grad-codec auto: reads the codec from --deepspeed FILE; none given");
    cJSON *root = NULL;
    char name[CODEC_NAME_MAX];
    int rc = json_parse_file(ds, &root, err);
    if (!rc)
        rc = codec_from_ds_config(root, name, sizeof name, err);
    cJSON_Delete(root);
    if (!rc && !name[0])
        rc = err_setf(err, ERR_INPUT, NULL, "--grad-codec",
                      "auto: %s turns no codec on (zero_quantized_weights, "
                      "zero_hpz_partition_size, zero_quantized_gradients, OneBitAdam, OneBitLamb, "
                      "communication_data_type bf16)",
                      ds);
    return rc ? rc : codec_load(cat, name, c, err);
}

bool cmd_sites_wanted(const cmd_args_t *a)
{
    return cmd_has(a, "--grad-codec") || cmd_has(a, "--islands") || cmd_has(a, "--island-link") ||
           cmd_has(a, "--diloco");
}

/* --islands (plan: N alone) and --island-link into is. */
static int read_islands(const cmd_args_t *a, bool plan, islands_t *is, err_t *err)
{
    const char *v = cmd_get(a, "--islands");
    int rc;
    if (plan && v && !strchr(v, 'x')) {
        long n;
        memset(is, 0, sizeof *is);
        if ((rc = units_parse_int(v, "--islands", 1, 1024, &n, err)))
            return rc;
        is->n = (int)n;
    } else if ((rc = islands_parse(v, is, err))) {
        return rc;
    }
    if (!cmd_get(a, "--island-link"))
        return err_set(err, ERR_INPUT, "--islands: needs --island-link BW,RTT");
    return islands_parse_link(cmd_get(a, "--island-link"), is, err);
}

int cmd_sites_check(const cmd_args_t *a, const char *fw, const layout_t *l, err_t *err)
{
    int rc;
    if (cmd_get(a, "--grad-codec")) {
        codec_t c;
        if ((rc = cmd_sites_codec(a, NULL, &c, err)))
            return rc;
        if (fw && !codec_runs_on(&c, fw))
            return codec_check(&c, fw, l ? l : &(layout_t){.zero = c.zero_min}, err);
        if (l && (rc = codec_check(&c, fw, l, err)))
            return rc;
    }
    if ((cmd_has(a, "--diloco") || cmd_has(a, "--island-link")) && !cmd_has(a, "--islands"))
        return err_setf(err, ERR_INPUT, NULL, cmd_has(a, "--diloco") ? "--diloco" : "--island-link",
                        "needs --islands NxG");
    islands_t is;
    diloco_t d;
    if (cmd_has(a, "--islands") && (rc = read_islands(a, l == NULL, &is, err)))
        return rc;
    if (cmd_get(a, "--diloco") && (rc = diloco_parse(cmd_get(a, "--diloco"), &d, err)))
        return rc;
    if (!l || !cmd_has(a, "--islands"))
        return ERR_OK;
    if ((long)is.n * is.gpus_each != l->n_gpus)
        return err_setf(err, ERR_INPUT, NULL, "--islands", "%d x %d GPUs is not the job's %d GPUs",
                        is.n, is.gpus_each, l->n_gpus);
    int m = cmd_get(a, "--diloco") ? (d.replicas > 0 ? d.replicas : is.n) : 1;
    if (m % is.n != 0 && cmd_get(a, "--diloco"))
        return err_setf(err, ERR_INPUT, NULL, "--diloco",
                        "M = %d replicas must be a multiple of the %d islands", m, is.n);
    if (l->dp % m != 0 || l->global_batch % m != 0)
        return err_setf(err, ERR_INPUT, NULL, "--diloco",
                        "M = %d replicas must divide the data-parallel degree %d and the global "
                        "batch %d",
                        m, l->dp, l->global_batch);
    return ERR_OK;
}

static void print_codec(const codec_t *c, const codec_eval_t *e)
{
    printf("\n  gradient codec %s: %s\n", c->name, c->description);
    printf("    turned on by: %s\n", c->keys);
    printf("    exposed DP communication %.4f s -> %.4f s (saves %.4f s a step); encode and "
           "decode add %.4f s\n",
           e->base_dp_exposed_s, e->codec_dp_exposed_s, e->comm_saved_s, e->codec_s);
    printf("    step %.4f s -> %.4f s compressed (%.2fx); over the run %.4f s with %.0f%% of the "
           "steps uncompressed first (%.2fx)\n",
           e->base_step_s, e->codec_step_s, e->speedup_compressed, e->mean_step_s,
           100 * c->warmup_fraction, e->speedup);
    printf("    tokens to the same loss x%.2f; time and GPU-hours to the same loss x%.3f of "
           "uncompressed: %s\n",
           e->token_multiplier, e->time_ratio,
           !e->fits ? "does not fit" : e->worth ? "worth it" : "not worth it");
    printf("    extra memory %.2f GiB per GPU; all-reduce compatible: %s\n", e->extra_gib,
           c->allreduce ? "yes" : "no (its own exchange)");
    printf("    source: %s\n", c->source);
    if (c->assumed[0])
        printf("    ASSUMED: %s\n", c->assumed);
}

static cJSON *codec_json(const codec_t *c, const codec_eval_t *e)
{
    cJSON *o = cJSON_CreateObject();
    bool ok = o && cJSON_AddStringToObject(o, "name", c->name) &&
              json_add_number(o, "base_step_s", e->base_step_s) &&
              json_add_number(o, "codec_step_s", e->codec_step_s) &&
              json_add_number(o, "mean_step_s", e->mean_step_s) &&
              json_add_number(o, "dp_exposed_base_s", e->base_dp_exposed_s) &&
              json_add_number(o, "dp_exposed_codec_s", e->codec_dp_exposed_s) &&
              json_add_number(o, "comm_saved_s", e->comm_saved_s) &&
              json_add_number(o, "codec_s", e->codec_s) &&
              json_add_number(o, "speedup_compressed", e->speedup_compressed) &&
              json_add_number(o, "speedup", e->speedup) &&
              json_add_number(o, "token_multiplier", e->token_multiplier) &&
              json_add_number(o, "time_ratio", e->time_ratio) &&
              json_add_number(o, "extra_gib", e->extra_gib) &&
              cJSON_AddBoolToObject(o, "allreduce_compatible", c->allreduce) &&
              cJSON_AddBoolToObject(o, "fits", e->fits) &&
              cJSON_AddBoolToObject(o, "worth", e->worth) &&
              cJSON_AddStringToObject(o, "source", c->source) &&
              cJSON_AddStringToObject(o, "assumed", c->assumed);
    if (!ok) {
        cJSON_Delete(o);
        return NULL;
    }
    return o;
}

static void print_sites(const islands_t *is, const diloco_t *d, const sites_eval_t *e)
{
    printf("\n  across %d islands, link %.1f GB/s each way, round trip %.0f ms:\n", is->n,
           is->link_bytes_s / 1e9, 1e3 * is->rtt_s);
    if (d->on)
        printf("    DiLoCo H=%d, M=%d, fragments %d, overlap %.0f, %.0f bits: inner step %.4f s, "
               "each exchange %.1f GB over the link in %.1f s (%.4f s a step exposed)\n",
               d->inner_steps, d->replicas > 0 ? d->replicas : is->n, d->fragments,
               d->overlap_steps, d->bits, e->step_s, e->cross_bytes / 1e9, e->cross_s,
               e->exposed_s);
    else
        printf("    synchronous hierarchical DP: %.1f GB over the link each step in %.2f s, "
               "%.4f s exposed after the backward's overlap\n",
               e->cross_bytes / 1e9, e->cross_s, e->exposed_s);
    printf("    compute utilization %.1f%%; one site %.4f s a step, across islands %.4f s: %.1f%% "
           "scaling\n",
           100 * e->utilization, e->one_site_step_s, e->mean_step_s, 100 * e->scaling);
    printf("    tokens to the same loss x%.2f%s; time to the same loss x%.3f of one site\n",
           e->token_multiplier,
           e->token_assumed ? " (ASSUMED: sim/catalog/sites.json gives the conversion)" : "",
           e->time_ratio);
}

static cJSON *sites_json(const islands_t *is, const diloco_t *d, const sites_eval_t *e)
{
    cJSON *o = cJSON_CreateObject();
    bool ok = o && json_add_number(o, "islands", is->n) &&
              json_add_number(o, "link_bytes_per_s", is->link_bytes_s) &&
              json_add_number(o, "rtt_s", is->rtt_s) &&
              cJSON_AddStringToObject(o, "mode", d->on ? "diloco" : "hierarchical_dp") &&
              json_add_number(o, "one_site_step_s", e->one_site_step_s) &&
              json_add_number(o, "step_s", e->step_s) &&
              json_add_number(o, "cross_bytes", e->cross_bytes) &&
              json_add_number(o, "cross_s", e->cross_s) &&
              json_add_number(o, "exposed_s", e->exposed_s) &&
              json_add_number(o, "mean_step_s", e->mean_step_s) &&
              json_add_number(o, "utilization", e->utilization) &&
              json_add_number(o, "scaling", e->scaling) &&
              json_add_number(o, "token_multiplier", e->token_multiplier) &&
              cJSON_AddBoolToObject(o, "token_multiplier_assumed", e->token_assumed) &&
              json_add_number(o, "time_ratio", e->time_ratio);
    if (!ok) {
        cJSON_Delete(o);
        return NULL;
    }
    return o;
}

static int add_json(cJSON *j, const char *key, cJSON *o, err_t *err)
{
    if (!o || !cJSON_AddItemToObject(j, key, o)) {
        cJSON_Delete(o);
        return err_set(err, ERR_RUNTIME, "out of memory building JSON");
    }
    return ERR_OK;
}

static int sim_codec(const cmd_args_t *a, sim_ctx_t *ctx, const scenario_t *s, cJSON *j,
                     err_t *err)
{
    codec_t c;
    codec_eval_t e;
    int rc;
    if ((rc = cmd_sites_codec(a, s->catalog, &c, err)) ||
        (rc = codec_check(&c, s->fw.name, &s->layout, err)) ||
        (rc = codec_evaluate(ctx, &s->input, &c, &e, err)))
        return rc;
    if (j)
        return add_json(j, "grad_codec", codec_json(&c, &e), err);
    print_codec(&c, &e);
    return ERR_OK;
}

static int sim_sites(const cmd_args_t *a, sim_ctx_t *ctx, const scenario_t *s, cJSON *j,
                     err_t *err)
{
    islands_t is;
    diloco_t d = {0};
    sites_eval_t e;
    int rc;
    sim_input_t in = s->input;
    codec_t c;
    if (cmd_get(a, "--grad-codec")) { /* the sites' exchange with the codec's bytes */
        if ((rc = cmd_sites_codec(a, s->catalog, &c, err)))
            return rc;
        codec_apply(&c, &in);
    }
    if ((rc = read_islands(a, false, &is, err)) ||
        (cmd_get(a, "--diloco") && (rc = diloco_parse(cmd_get(a, "--diloco"), &d, err))) ||
        (rc = sites_evaluate(ctx, s->catalog, &in, &is, &d, &e, err)))
        return rc;
    if (j)
        return add_json(j, "sites", sites_json(&is, &d, &e), err);
    print_sites(&is, &d, &e);
    return ERR_OK;
}

int cmd_sites_sim(const cmd_args_t *a, const scenario_t *s, cJSON *j, err_t *err)
{
    sim_ctx_t *ctx = sim_ctx_create();
    if (!ctx)
        return err_set(err, ERR_RUNTIME, "out of memory");
    int rc = ERR_OK;
    if (cmd_get(a, "--grad-codec"))
        rc = sim_codec(a, ctx, s, j, err);
    if (!rc && cmd_get(a, "--islands"))
        rc = sim_sites(a, ctx, s, j, err);
    sim_ctx_destroy(ctx);
    return rc;
}

int cmd_sites_catalog(cJSON *json, const cmd_args_t *a, err_t *err)
{
    (void)a;
    codec_t *c = NULL;
    size_t n = 0;
    int rc = codec_load_all(&c, &n, err);
    if (rc)
        return rc;
    static const char *hdr[] = {"name", "grad bits", "gather bits", "all-reduce", "tokens x",
                                "warm-up", "run by", "assumed"};
    table_t *t = json ? NULL : table_create(8, hdr);
    cJSON *arr = json ? cJSON_AddArrayToObject(json, "codecs") : NULL;
    if (json ? !arr : !t)
        rc = err_set(err, ERR_RUNTIME, "out of memory");
    for (size_t i = 0; !rc && i < n; i++) {
        if (t) {
            table_add_rowf(t, "%s\t%g\t%g\t%s\t%.2f\t%.0f%%\t%s\t%s", c[i].name, c[i].grad_bits,
                           c[i].gather_bits, c[i].allreduce ? "yes" : "no",
                           c[i].token_multiplier, 100 * c[i].warmup_fraction, c[i].frameworks,
                           c[i].assumed[0] ? "ASSUMED figures" : "");
            continue;
        }
        cJSON *o = cJSON_CreateObject();
        if (!o || !cJSON_AddItemToArray(arr, o) || !cJSON_AddStringToObject(o, "name", c[i].name) ||
            !json_add_number(o, "grad_bits", c[i].grad_bits) ||
            !json_add_number(o, "gather_bits", c[i].gather_bits) ||
            !cJSON_AddBoolToObject(o, "allreduce", c[i].allreduce) ||
            !json_add_number(o, "token_multiplier", c[i].token_multiplier) ||
            !json_add_number(o, "warmup_fraction", c[i].warmup_fraction) ||
            !cJSON_AddStringToObject(o, "frameworks", c[i].frameworks) ||
            !cJSON_AddStringToObject(o, "keys", c[i].keys) ||
            !cJSON_AddStringToObject(o, "source", c[i].source) ||
            !cJSON_AddStringToObject(o, "assumed", c[i].assumed))
            rc = err_set(err, ERR_RUNTIME, "out of memory");
    }
    free(c);
    if (!rc && t) {
        printf("Gradient and parameter codecs (sources in sim/catalog/codecs.json; --grad-codec)\n");
        rc = table_print(t, stdout, 2, 0) ? err_set(err, ERR_RUNTIME, "cannot write") : ERR_OK;
        printf("\n");
    }
    table_destroy(t);
    return rc;
}
