/* scaleplan catalog: list the built-in data (models, GPUs, fabrics,
 * clusters, prices, failure rates, cost profiles). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "profile/profile.h"
#include "profile/provenance.h"
#include "commands/args.h"
#include "commands/commands.h"
#include "commands/output.h"
#include "commands/sites.h"
#include "common/catalog.h"
#include "common/json.h"
#include "common/numfmt.h"
#include "common/names.h"
#include "common/units.h"
#include "models/model.h"
#include "reports/table.h"
#include "frameworks/framework.h"
#include "topologies/cluster.h"
#include "topologies/failure.h"
#include "topologies/price.h"
#include "topologies/storage.h"

/* One section: prints a table (json == NULL) or adds an array to json. */
typedef int (*section_fn)(cJSON *json, const cmd_args_t *a, err_t *err);

static int finish_table(table_t *t, const char *title, err_t *err)
{
    if (!t)
        return err_set(err, ERR_RUNTIME, "out of memory");
    printf("%s\n", title);
    int rc = table_print(t, stdout, 2, 0);
    printf("\n");
    table_destroy(t);
    return rc ? err_set(err, ERR_RUNTIME, "cannot write to standard output") : ERR_OK;
}

/* The option rows of frameworks/options.def: what a preset's "options"
 * may set and --set takes, with the default, the off value make
 * check-mechanisms forces and the test that pins each. */
static int framework_options(cJSON *json, err_t *err)
{
    static const char *kinds[] = {"switch", "number", "word", "name"};
    static const char *hdr[] = {"key (--set KEY=VALUE)", "type", "values", "default", "off",
                                "pinned by"};
    table_t *t = json ? NULL : table_create(6, hdr);
    cJSON *arr = json ? cJSON_AddArrayToObject(json, "framework_options") : NULL;
    sim_options_t dflt, off;
    sim_options_default(&dflt);
    off = dflt;
    int rc = ERR_OK;
    for (int i = 0; i < fw_option_count() && rc == ERR_OK; i++) {
        const fw_option_t *r = fw_option_at(i);
        char values[96] = "", d[48], o[48];
        fw_option_off(r, &off);
        fw_option_format(r, &dflt, d, sizeof d);
        fw_option_format(r, &off, o, sizeof o);
        if (r->kind == FWO_DOUBLE)
            snprintf(values, sizeof values, "%g..%g", r->lo, r->hi);
        else if (r->kind == FWO_WORD) /* "ring=0 allgather=1" as ring|allgather */
            for (const char *q = r->words; *q; q += strcspn(q, " "), q += *q == ' ') {
                size_t used = strlen(values);
                snprintf(values + used, sizeof values - used, "%s%.*s", used ? "|" : "",
                         (int)strcspn(q, "="), q);
            }
        else
            snprintf(values, sizeof values, "%s", r->kind == FWO_BOOL ? "true|false" : "a name");
        if (t) {
            table_add_rowf(t, "%s\t%s\t%s\t%s\t%s\t%s", r->key, kinds[r->kind], values, d, o,
                           r->test);
            continue;
        }
        cJSON *e = cJSON_CreateObject();
        if (!e || !cJSON_AddItemToArray(arr, e) || !cJSON_AddStringToObject(e, "key", r->key) ||
            !cJSON_AddStringToObject(e, "type", kinds[r->kind]) ||
            !cJSON_AddStringToObject(e, "values", values) ||
            !cJSON_AddStringToObject(e, "default", d) || !cJSON_AddStringToObject(e, "off", o) ||
            !cJSON_AddStringToObject(e, "source", r->source) ||
            !cJSON_AddStringToObject(e, "test", r->test))
            rc = err_set(err, ERR_RUNTIME, "out of memory");
    }
    if (rc || json)
        return rc;
    return finish_table(t, "Framework options (frameworks/options.def): a preset's \"options\" "
                           "keys, settable with --set KEY=VALUE",
                        err);
}

static int section_frameworks(cJSON *json, const cmd_args_t *a, err_t *err)
{
    (void)a;
    char **names = NULL;
    size_t n = 0;
    int rc = fw_names(&names, &n, err);
    if (rc)
        return rc;
    static const char *hdr[] = {"name", "framework", "DP overlap", "TP overlap", "attention",
                                "grads", "optimizer", "recompute", "runs"};
    table_t *t = json ? NULL : table_create(9, hdr);
    cJSON *arr = json ? cJSON_AddArrayToObject(json, "frameworks") : NULL;
    for (size_t i = 0; i < n && rc == ERR_OK; i++) {
        fw_preset_t p;
        if ((rc = fw_load(names[i], &p, err)))
            break;
        const char *opt = p.zero_min >= 3 ? "FSDP/ZeRO-3" : p.distributed_optimizer ? "distributed" : "replicated";
        char runs[256];
        fw_describe_caps(&p.caps, runs, sizeof runs);
        if (t) {
            table_add_rowf(t, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s", p.name, p.display,
                           p.opt.overlap_grad_reduce ? "yes" : "no",
                           p.opt.tp_comm_overlap ? "yes" : "no",
                           p.flash_attention ? "fused" : "materialized",
                           p.fp16_grad_bytes != p.grad_bytes
                               ? (p.grad_bytes == 4 ? "fp32 (fp16 runs: fp16)" : "bf16 (fp16 runs: fp32)")
                               : (p.grad_bytes == 4 ? "fp32" : "bf16"),
                           opt,
                           layout_recompute_name(p.recompute), runs);
        } else {
            cJSON *o = cJSON_CreateObject();
            if (!o || !cJSON_AddItemToArray(arr, o) || !cJSON_AddStringToObject(o, "name", p.name) ||
                !cJSON_AddStringToObject(o, "display_name", p.display) ||
                !cJSON_AddBoolToObject(o, "overlap_grad_reduce", p.opt.overlap_grad_reduce) ||
                !cJSON_AddBoolToObject(o, "overlap_param_gather", p.opt.overlap_param_gather) ||
                !cJSON_AddBoolToObject(o, "tp_comm_overlap", p.opt.tp_comm_overlap) ||
                !cJSON_AddBoolToObject(o, "flash_attention", p.flash_attention) ||
                !json_add_number(o, "grad_bytes", p.grad_bytes) ||
                !json_add_number(o, "fp16_grad_bytes", p.fp16_grad_bytes) ||
                !cJSON_AddBoolToObject(o, "distributed_optimizer", p.distributed_optimizer) ||
                !json_add_number(o, "zero_min", p.zero_min) ||
                !cJSON_AddStringToObject(o, "recompute", layout_recompute_name(p.recompute)) ||
                !cJSON_AddStringToObject(o, "runs", runs) ||
                !cJSON_AddStringToObject(o, "source", p.source))
                rc = err_set(err, ERR_RUNTIME, "out of memory");
        }
    }
    catalog_free_names(names, n);
    if (!rc && t)
        rc = finish_table(t, "Framework presets (sim/catalog/frameworks.json)", err);
    return rc ? rc : framework_options(json, err);
}

static int section_models(cJSON *json, const cmd_args_t *a, err_t *err)
{
    (void)a;
    char **names = NULL;
    size_t n = 0;
    int rc = model_catalog_names(&names, &n, err);
    if (rc)
        return rc;
    static const char *hdr[] = {"name", "model", "params", "layers", "hidden",
                                "heads/kv", "ffn", "vocab", "max seq"};
    table_t *t = json ? NULL : table_create(9, hdr);
    cJSON *arr = json ? cJSON_AddArrayToObject(json, "models") : NULL;
    for (int c = 2; t && c < 9; c++)
        table_align_right(t, c);
    for (size_t i = 0; i < n && rc == ERR_OK; i++) {
        model_t m;
        if ((rc = model_load(names[i], &m, err)))
            break;
        model_params_t p;
        model_params(&m, &p);
        char cnt[32];
        if (t) {
            table_add_rowf(t, "%s\t%s\t%s\t%d\t%d\t%d/%d\t%d\t%d\t%d", m.name, m.display,
                           units_fmt_count(p.total, cnt, sizeof cnt), m.n_layers, m.hidden,
                           m.n_heads, m.n_kv_heads, m.ffn, m.vocab, m.max_seq);
        } else {
            cJSON *o = cJSON_CreateObject();
            if (!o || !cJSON_AddItemToArray(arr, o) ||
                !cJSON_AddStringToObject(o, "name", m.name) ||
                !cJSON_AddStringToObject(o, "display_name", m.display) ||
                !cJSON_AddStringToObject(o, "family", model_family_name(m.family)) ||
                !json_add_number(o, "params", p.total) ||
                !json_add_number(o, "layers", m.n_layers) ||
                !json_add_number(o, "hidden", m.hidden) ||
                !cJSON_AddStringToObject(o, "source", m.source) ||
                (model_is_moe(&m) && !json_add_number(o, "params_active", p.active)))
                rc = err_set(err, ERR_RUNTIME, "out of memory");
        }
    }
    catalog_free_names(names, n);
    if (rc || json)
        return rc;
    return finish_table(t, "Models (scaleplan model --model NAME for details)", err);
}

static int section_gpus(cJSON *json, const cmd_args_t *a, err_t *err)
{
    (void)a;
    gpu_t *g = NULL;
    size_t n = 0;
    int rc = gpu_load_all(&g, &n, err);
    if (rc)
        return rc;
    static const char *hdr[] = {"name", "GPU", "bf16 TF/s", "fp8 TF/s", "memory GiB",
                                "mem GB/s", "scale-up GB/s", "TDP W", "default cluster"};
    table_t *t = json ? NULL : table_create(9, hdr);
    cJSON *arr = json ? cJSON_AddArrayToObject(json, "gpus") : NULL;
    for (int c = 2; t && c < 8; c++)
        table_align_right(t, c);
    for (size_t i = 0; i < n; i++) {
        if (t) {
            char fp8[16];
            snprintf(fp8, sizeof fp8, "%.0f", g[i].peak_tflops[DTYPE_FP8]);
            table_add_rowf(t, "%s\t%s\t%.0f\t%s\t%.1f\t%.0f\t%.0f\t%.0f\t%s", g[i].name,
                           g[i].display,
                           g[i].peak_tflops[DTYPE_BF16] > 0 ? g[i].peak_tflops[DTYPE_BF16]
                                                             : g[i].peak_tflops[DTYPE_FP16],
                           g[i].peak_tflops[DTYPE_FP8] > 0 ? fp8 : "-", g[i].memory_gib,
                           g[i].mem_bw_gbs, g[i].scaleup_gbs, g[i].tdp_w,
                           g[i].default_cluster);
            continue;
        }
        cJSON *o = cJSON_CreateObject(), *pk = NULL;
        bool ok = o && cJSON_AddItemToArray(arr, o) &&
                  cJSON_AddStringToObject(o, "name", g[i].name) &&
                  cJSON_AddStringToObject(o, "display_name", g[i].display) &&
                  (pk = cJSON_AddObjectToObject(o, "peak_tflops"));
        for (int d = 0; ok && d < DTYPE_COUNT; d++)
            if (g[i].peak_tflops[d] > 0)
                ok = json_add_number(pk, dtype_name((dtype_t)d), g[i].peak_tflops[d]);
        ok = ok && json_add_number(o, "memory_gib", g[i].memory_gib) &&
             json_add_number(o, "mem_bw_gbs", g[i].mem_bw_gbs) &&
             json_add_number(o, "scaleup_gbs", g[i].scaleup_gbs) &&
             json_add_number(o, "tdp_w", g[i].tdp_w) &&
             json_add_number(o, "sm_count", g[i].sm_count) &&
             cJSON_AddStringToObject(o, "default_cluster", g[i].default_cluster) &&
             cJSON_AddStringToObject(o, "source", g[i].source);
        if (!ok) {
            rc = err_set(err, ERR_RUNTIME, "out of memory");
            break;
        }
    }
    free(g);
    if (rc || json)
        return rc;
    return finish_table(t, "GPUs (dense peak; sources in topologies/catalog/gpus.json)", err);
}

static int section_fabrics(cJSON *json, const cmd_args_t *a, err_t *err)
{
    (void)a;
    fabric_t *f = NULL;
    size_t n = 0;
    int rc = fabric_load_all(&f, &n, err);
    if (rc)
        return rc;
    static const char *hdr[] = {"name", "kind", "scope", "bandwidth", "efficiency",
                                "latency us", "description"};
    table_t *t = json ? NULL : table_create(7, hdr);
    cJSON *arr = json ? cJSON_AddArrayToObject(json, "fabrics") : NULL;
    for (int c = 3; t && c < 6; c++)
        table_align_right(t, c);
    for (size_t i = 0; i < n; i++) {
        if (t) {
            char bw[48];
            if (f[i].intra)
                snprintf(bw, sizeof bw, "%.0f GB/s per GPU", f[i].bw_gbs);
            else
                snprintf(bw, sizeof bw, "%.0f Gb/s per port", f[i].bw_gbs * 8);
            table_add_rowf(t, "%s\t%s\t%s\t%s\t%.2f\t%.1f\t%s", f[i].name,
                           fabric_kind_name(f[i].kind), f[i].intra ? "node" : "network", bw,
                           f[i].efficiency, f[i].latency_us, f[i].description);
            continue;
        }
        cJSON *o = cJSON_CreateObject();
        if (!o || !cJSON_AddItemToArray(arr, o) ||
            !cJSON_AddStringToObject(o, "name", f[i].name) ||
            !cJSON_AddStringToObject(o, "kind", fabric_kind_name(f[i].kind)) ||
            !cJSON_AddStringToObject(o, "scope", f[i].intra ? "intra" : "inter") ||
            !json_add_number(o, "bw_gbs", f[i].bw_gbs) ||
            !json_add_number(o, "efficiency", f[i].efficiency) ||
            !json_add_number(o, "latency_us", f[i].latency_us)) {
            rc = err_set(err, ERR_RUNTIME, "out of memory");
            break;
        }
    }
    free(f);
    if (rc || json)
        return rc;
    return finish_table(t, "Fabrics (sources in topologies/catalog/fabrics.json)", err);
}

static int section_clusters(cJSON *json, const cmd_args_t *a, err_t *err)
{
    (void)a;
    char **names = NULL;
    size_t n = 0;
    int rc = cluster_catalog_names(&names, &n, err);
    if (rc)
        return rc;
    static const char *hdr[] = {"name", "gpu", "GPUs/node", "node fabric", "network",
                                "GB/s per GPU", "description"};
    table_t *t = json ? NULL : table_create(7, hdr);
    cJSON *arr = json ? cJSON_AddArrayToObject(json, "clusters") : NULL;
    if (t) {
        table_align_right(t, 2);
        table_align_right(t, 5);
    }
    for (size_t i = 0; i < n && rc == ERR_OK; i++) {
        cluster_t c;
        if ((rc = cluster_load(names[i], &c, err)))
            break;
        if (t) {
            table_add_rowf(t, "%s\t%s\t%d\t%s\t%d x %s\t%.1f\t%s", c.name, c.gpu.name,
                           c.gpus_per_node, c.intra.name, c.nics_per_node, c.inter.name,
                           cluster_nic_gbs_per_gpu(&c), c.description);
            continue;
        }
        cJSON *o = cJSON_CreateObject();
        if (!o || !cJSON_AddItemToArray(arr, o) || !cJSON_AddStringToObject(o, "name", c.name) ||
            !cJSON_AddStringToObject(o, "gpu", c.gpu.name) ||
            !json_add_number(o, "gpus_per_node", c.gpus_per_node) ||
            !cJSON_AddStringToObject(o, "intra_fabric", c.intra.name) ||
            !cJSON_AddStringToObject(o, "inter_fabric", c.inter.name) ||
            !json_add_number(o, "nics_per_node", c.nics_per_node) ||
            !json_add_number(o, "oversubscription", c.oversubscription))
            rc = err_set(err, ERR_RUNTIME, "out of memory");
    }
    catalog_free_names(names, n);
    if (rc || json)
        return rc;
    return finish_table(t, "Clusters (topologies/catalog/clusters/*.json; --cluster NAME|FILE)",
                        err);
}

static int section_prices(cJSON *json, const cmd_args_t *a, err_t *err)
{
    (void)a;
    price_t *p = NULL;
    size_t n = 0;
    int rc = price_load_all(&p, &n, err);
    if (rc)
        return rc;
    static const char *hdr[] = {"gpu", "provider", "kind", "$/GPU-h", "date", "offering"};
    table_t *t = json ? NULL : table_create(6, hdr);
    cJSON *arr = json ? cJSON_AddArrayToObject(json, "prices") : NULL;
    if (t)
        table_align_right(t, 3);
    for (size_t i = 0; i < n; i++) {
        if (t) {
            char price[48];
            if (p[i].usd_per_gpu_hour_high > 0)
                snprintf(price, sizeof price, "%.2f-%.2f", p[i].usd_per_gpu_hour,
                         p[i].usd_per_gpu_hour_high);
            else
                snprintf(price, sizeof price, "%.2f", p[i].usd_per_gpu_hour);
            table_add_rowf(t, "%s\t%s\t%s\t%s%s\t%s\t%s", p[i].gpu, p[i].provider, p[i].kind,
                           p[i].is_default ? "*" : "", price, p[i].date, p[i].offering);
            continue;
        }
        cJSON *o = cJSON_CreateObject();
        if (!o || !cJSON_AddItemToArray(arr, o) ||
            !cJSON_AddStringToObject(o, "gpu", p[i].gpu) ||
            !cJSON_AddStringToObject(o, "provider", p[i].provider) ||
            !cJSON_AddStringToObject(o, "kind", p[i].kind) ||
            !json_add_number(o, "usd_per_gpu_hour", p[i].usd_per_gpu_hour) ||
            !cJSON_AddStringToObject(o, "date", p[i].date) ||
            !cJSON_AddBoolToObject(o, "default", p[i].is_default) ||
            !cJSON_AddStringToObject(o, "source", p[i].source)) {
            rc = err_set(err, ERR_RUNTIME, "out of memory");
            break;
        }
    }
    free(p);
    if (rc || json)
        return rc;
    return finish_table(t, "GPU-hour prices (* = default for the GPU; sources in "
                           "topologies/catalog/prices.json)",
                        err);
}

/* Each set's sources and what it counts, below the table (the catalog's
 * failure rates are only as good as what their sources count). */
static void print_failure_sources(const failure_set_t *sets, size_t n)
{
    printf("What each set counts and its source:\n");
    for (size_t s = 0; s < n; s++) {
        const failure_set_t *fs = &sets[s];
        char era[16] = "";
        if (fs->year > 0)
            snprintf(era, sizeof era, ", %d", fs->year);
        printf("  %s (%s, %s%s; %s-level, covers %s%s): %s\n    source: %s\n", fs->name,
               fs->environment, fs->architectures[0] ? fs->architectures : "GPU not stated", era,
               fs->scope == FAIL_SCOPE_CLUSTER ? "cluster" : "job",
               failure_level_name(fs->covers),
               fs->evidence ? "" : "; a rule of thumb, not evidence", fs->counts, fs->source);
        for (int i = 0; i < fs->n_classes; i++)
            printf("    %s: %s\n", fs->classes[i].name, fs->classes[i].source);
    }
    printf("\n");
}

/* The infant-mortality decay (--cluster-age) with its evidence's windows. */
static void print_burnin(const failure_burnin_t *b)
{
    double early = failure_burnin_mean(b, b->early_from_s, b->early_to_s);
    double late = failure_burnin_mean(b, b->late_from_s, b->late_to_s);
    printf("Burn-in (reliability, budget, plan --cluster-age D; without it a cluster is taken "
           "as mature): every rate x%.2f at cluster age 0, decaying to x1 with a time constant "
           "of %.0f days; x%.2f over ages %.0f-%.0f days and x%.2f over %.0f-%.0f days, a "
           "ratio of %.2f (published %.2f)\n  source: %s\n\n",
           b->initial_multiple, b->time_constant_s / 86400, early, b->early_from_s / 86400,
           b->early_to_s / 86400, late, b->late_from_s / 86400, b->late_to_s / 86400,
           early / late, b->published_ratio, b->source);
}

/* "failure_burn_in": the decay's parameters, its evidence's ratio, source. */
static int burnin_json(cJSON *json, err_t *err)
{
    failure_burnin_t b;
    int rc = failure_load_burnin(&b, err);
    if (rc)
        return rc;
    cJSON *o = cJSON_AddObjectToObject(json, "failure_burn_in");
    if (!o || !json_add_number(o, "initial_multiple", b.initial_multiple) ||
        !json_add_number(o, "time_constant_days", b.time_constant_s / 86400) ||
        !json_add_number(o, "published_ratio", b.published_ratio) ||
        !json_add_number(o, "model_ratio",
                         failure_burnin_mean(&b, b.early_from_s, b.early_to_s) /
                             failure_burnin_mean(&b, b.late_from_s, b.late_to_s)) ||
        !cJSON_AddStringToObject(o, "source", b.source))
        return err_set(err, ERR_RUNTIME, "out of memory");
    return ERR_OK;
}

/* Spot capacity's preemptions (prices.json spot), the rate --spot adds
 * beside the failure classes: printed as text, or as "spot" in json. */
static int spot_section(cJSON *json, err_t *err)
{
    double rate, expo, wait_s;
    char basis[512];
    int rc = price_spot_defaults(&rate, &expo, &wait_s, err);
    if (!rc)
        rc = price_spot_basis(basis, sizeof basis, err);
    if (rc)
        return rc;
    if (json) {
        cJSON *o = cJSON_AddObjectToObject(json, "spot");
        if (!o || !json_add_number(o, "preemptions_per_node_hour", rate) ||
            !json_add_number(o, "node_exponent", expo) || !json_add_number(o, "wait_s", wait_s) ||
            !cJSON_AddStringToObject(o, "basis", basis))
            return err_set(err, ERR_RUNTIME, "out of memory");
        return ERR_OK;
    }
    printf("Spot capacity (--spot, budget's spot quotes): %.3g preemptions an hour of one node, "
           "x nodes^%.3g for a gang, %.2f h waiting for capacity after each\n  source: %s (the "
           "traces' counts in topologies/catalog/prices.json spot)\n\n",
           rate, expo, wait_s / 3600, basis);
    return ERR_OK;
}

static bool failure_json_row(cJSON *arr, const failure_set_t *fs, const failure_class_t *f,
                             double week)
{
    cJSON *o = cJSON_CreateObject();
    return o && cJSON_AddItemToArray(arr, o) && cJSON_AddStringToObject(o, "set", fs->name) &&
           cJSON_AddStringToObject(o, "environment", fs->environment) &&
           cJSON_AddStringToObject(o, "architectures", fs->architectures) &&
           cJSON_AddStringToObject(o, "scope",
                                   fs->scope == FAIL_SCOPE_CLUSTER ? "cluster" : "job") &&
           cJSON_AddStringToObject(o, "covers", failure_level_name(fs->covers)) &&
           json_add_number(o, "year", fs->year) &&
           cJSON_AddBoolToObject(o, "set_is_evidence", fs->evidence) &&
           cJSON_AddStringToObject(o, "counts", fs->counts) &&
           cJSON_AddStringToObject(o, "class", f->name) &&
           cJSON_AddStringToObject(o, "kind", failure_kind_name(f->kind)) &&
           cJSON_AddStringToObject(o, "component", failure_component_name(f->component)) &&
           json_add_number(o, "rate_per_component_hour", f->rate_per_component_hour) &&
           json_add_number(o, "per_1k_gpus_per_week", week) &&
           cJSON_AddBoolToObject(o, "hang", f->hang) &&
           cJSON_AddStringToObject(o, "evidence", f->evidence) &&
           cJSON_AddStringToObject(o, "source", f->source);
}

static int section_failures(cJSON *json, const cmd_args_t *a, err_t *err)
{
    (void)a;
    static const char *hdr[] = {"set",  "environment", "counts", "class", "kind", "per",
                                "per 1M component-hours", "per 1k GPUs per week", "evidence",
                                "description"};
    table_t *t = json ? NULL : table_create(10, hdr);
    cJSON *arr = json ? cJSON_AddArrayToObject(json, "failures") : NULL;
    if (t) {
        table_align_right(t, 6);
        table_align_right(t, 7);
    }
    failure_set_t *sets = NULL;
    size_t n = 0;
    int rc = failure_load_all(&sets, &n, err);
    /* A 1,024-GPU DGX-style job (8 GPUs and NICs per node) for the weekly column. */
    cluster_t ref;
    memset(&ref, 0, sizeof ref);
    ref.n_gpus = 1024;
    ref.gpus_per_node = ref.gpus_per_host = 8;
    ref.nics_per_node = 8;
    for (size_t s = 0; s < n && rc == ERR_OK; s++) {
        const failure_set_t *fs = &sets[s];
        for (int i = 0; i < fs->n_classes; i++) {
            const failure_class_t *f = &fs->classes[i];
            double week = failure_job_rate_per_hour(f, &ref) * 24 * 7;
            if (t) {
                char rate[32];
                table_add_rowf(t, "%s\t%s\t%s %s\t%s\t%s\t%s\t%s\t%.2f\t%s\t%s", fs->name,
                               fs->environment, fs->scope == FAIL_SCOPE_CLUSTER ? "cluster" : "job",
                               failure_level_name(fs->covers), f->name,
                               failure_kind_name(f->kind), failure_component_name(f->component),
                               numfmt_real(1e6 * f->rate_per_component_hour, rate, sizeof rate),
                               week,
                               f->copied_from[0] ? "copied" : f->evidence[0] ? f->evidence : "-",
                               f->description);
                continue;
            }
            if (!failure_json_row(arr, fs, f, week)) {
                rc = err_set(err, ERR_RUNTIME, "out of memory");
                break;
            }
        }
    }
    if (!rc && json)
        rc = burnin_json(json, err);
    if (!rc && json)
        rc = spot_section(json, err);
    if (rc || json) {
        free(sets);
        table_destroy(t);
        return rc;
    }
    rc = finish_table(t, "Failure rates by environment (defaults by environment and GPU "
                         "architecture; counts: job or cluster, and the widest level the "
                         "evidence covers; sources below and in topologies/catalog/failures.json)",
                      err);
    if (!rc)
        print_failure_sources(sets, n);
    failure_burnin_t b;
    if (!rc && !(rc = failure_load_burnin(&b, err)))
        print_burnin(&b);
    if (!rc)
        rc = spot_section(NULL, err);
    free(sets);
    return rc;
}

static int section_storage(cJSON *json, const cmd_args_t *a, err_t *err)
{
    (void)a;
    static const char *hdr[] = {"storage", "kind", "write GB/s", "read GB/s", "per client GB/s",
                                "description"};
    table_t *t = json ? NULL : table_create(6, hdr);
    cJSON *arr = json ? cJSON_AddArrayToObject(json, "storage") : NULL;
    for (int k = 2; t && k < 5; k++)
        table_align_right(t, k);
    storage_t *s = NULL;
    size_t n = 0;
    int rc = storage_load_all(&s, &n, err);
    for (size_t i = 0; i < n && rc == ERR_OK; i++) {
        char w[40], r[40], c[24];
        if (s[i].per_gpu_gbs > 0)
            snprintf(w, sizeof w, "%.3g per GPU", s[i].per_gpu_gbs);
        else if (s[i].per_tib_gbs > 0)
            snprintf(w, sizeof w, "%.3g per TiB", s[i].per_tib_gbs);
        else if (s[i].write_gbs > 0)
            snprintf(w, sizeof w, "%.4g", s[i].write_gbs);
        else
            snprintf(w, sizeof w, "clients");
        snprintf(r, sizeof r, "%s", w);
        if (s[i].read_gbs > 0 && s[i].read_gbs != s[i].write_gbs)
            snprintf(r, sizeof r, "%.4g", s[i].read_gbs);
        snprintf(c, sizeof c, s[i].client_write_gbs > 0 ? "%.3g" : "node's", s[i].client_write_gbs);
        if (t) {
            table_add_rowf(t, "%s%s\t%s\t%s\t%s\t%s\t%s", s[i].name, s[i].assumed ? "?" : "",
                           s[i].kind, w, r, c, s[i].description);
            continue;
        }
        cJSON *o = cJSON_CreateObject();
        if (!o || !cJSON_AddItemToArray(arr, o) || !cJSON_AddStringToObject(o, "name", s[i].name) ||
            !cJSON_AddStringToObject(o, "kind", s[i].kind) ||
            !json_add_number(o, "write_gbs", s[i].write_gbs) ||
            !json_add_number(o, "read_gbs", s[i].read_gbs) ||
            !json_add_number(o, "per_gpu_gbs", s[i].per_gpu_gbs) ||
            !json_add_number(o, "per_tib_gbs", s[i].per_tib_gbs) ||
            !json_add_number(o, "client_write_gbs", s[i].client_write_gbs) ||
            !json_add_number(o, "client_read_gbs", s[i].client_read_gbs) ||
            !cJSON_AddBoolToObject(o, "assumed", s[i].assumed) ||
            !cJSON_AddStringToObject(o, "source", s[i].source))
            rc = err_set(err, ERR_RUNTIME, "out of memory");
    }
    free(s);
    if (rc || json) {
        table_destroy(t);
        return rc;
    }
    return finish_table(t, "Checkpoint storage (? = some figure ASSUMED; sources in "
                           "topologies/catalog/storage.json)",
                        err);
}

/* The profile's figures as a JSON array of {name, value, class, source}. */
static cJSON *figures_json(const prov_figure_t *f, int n)
{
    cJSON *arr = cJSON_CreateArray();
    for (int i = 0; arr && i < n; i++) {
        cJSON *o = cJSON_CreateObject();
        if (!o || !cJSON_AddItemToArray(arr, o) ||
            !cJSON_AddStringToObject(o, "name", f[i].name) ||
            !json_add_number(o, "value", f[i].value) ||
            !cJSON_AddStringToObject(o, "class", prov_kind_name(f[i].kind)) ||
            !cJSON_AddStringToObject(o, "source", f[i].text)) {
            cJSON_Delete(arr);
            return NULL;
        }
    }
    return arr;
}

/* Every figure of one profile: its class and (the start of) its source. */
static int print_figures(const profile_t *p, const prov_figure_t *f, int n, err_t *err)
{
    static const char *hdr[] = {"figure", "value", "class", "source"};
    table_t *t = table_create(4, hdr);
    if (!t)
        return err_set(err, ERR_RUNTIME, "out of memory");
    table_align_right(t, 1);
    for (int i = 0; i < n; i++) {
        char src[100];
        snprintf(src, sizeof src, "%s", f[i].text);
        if (strlen(f[i].text) >= sizeof src)
            memcpy(src + sizeof src - 4, "...", 4);
        table_add_rowf(t, "%s\t%.4g\t%s\t%s", f[i].name, f[i].value, prov_kind_name(f[i].kind),
                       src);
    }
    char title[96];
    snprintf(title, sizeof title, "Profile %s: every figure, its class and source", p->gpu);
    return finish_table(t, title, err);
}

static int section_profiles(cJSON *json, const cmd_args_t *a, err_t *err)
{
    bool figures = cmd_has(a, "--figures");
    char **names = NULL;
    size_t n = 0;
    int rc = catalog_list("profile/catalog", &names, &n, err);
    if (rc)
        return rc;
    static const char *hdr[] = {"gpu", "GEMM eff bf16", "fp8", "sustained", "measured",
                                "fitted", "assumed", "sourced", "description"};
    table_t *t = json ? NULL : table_create(9, hdr);
    cJSON *arr = json ? cJSON_AddArrayToObject(json, "profiles") : NULL;
    if (t)
        for (int c = 1; c <= 7; c++)
            table_align_right(t, c);
    for (size_t i = 0; i < n && rc == ERR_OK; i++) {
        profile_t p;
        if ((rc = prof_load_default(names[i], &p, err)))
            break;
        prov_figure_t f[PROV_MAX_FIGURES];
        int nf = prov_figures(&p, f, PROV_MAX_FIGURES), count[4] = {0};
        prov_kind_t sustained = PROV_SOURCED;
        for (int k = 0; k < nf; k++) {
            count[f[k].kind]++;
            if (strcmp(f[k].name, "gemm.sustained_factor") == 0)
                sustained = f[k].kind;
        }
        double bf = p.gemm_max_eff[DTYPE_BF16] > 0 ? p.gemm_max_eff[DTYPE_BF16]
                                                   : p.gemm_max_eff[DTYPE_FP16];
        if (t) {
            char fp8[16] = "-";
            if (p.gemm_max_eff[DTYPE_FP8] > 0)
                snprintf(fp8, sizeof fp8, "%.3f", p.gemm_max_eff[DTYPE_FP8]);
            table_add_rowf(t, "%s\t%.3f\t%s\t%.3f %s\t%d\t%d\t%d\t%d\t%s", p.gpu, bf, fp8,
                           p.sustained_factor, prov_kind_name(sustained), count[PROV_MEASURED],
                           count[PROV_FITTED], count[PROV_ASSUMED], count[PROV_SOURCED],
                           p.description);
        } else {
            cJSON *o = cJSON_CreateObject(), *fj = NULL;
            if (!o || !cJSON_AddItemToArray(arr, o) ||
                !cJSON_AddStringToObject(o, "gpu", p.gpu) ||
                !cJSON_AddStringToObject(o, "origin", p.origin) ||
                !json_add_number(o, "gemm_max_efficiency_bf16", bf) ||
                !json_add_number(o, "sustained_factor", p.sustained_factor) ||
                !(fj = figures_json(f, nf)) || !cJSON_AddItemToObject(o, "figures", fj))
                rc = err_set(err, ERR_RUNTIME, "out of memory");
        }
        prof_free(&p);
    }
    if (rc || json) {
        catalog_free_names(names, n);
        table_destroy(t);
        return rc;
    }
    rc = finish_table(t, "Default cost profiles (profile/catalog/*.json): each figure is measured, "
                         "fitted to published runs, assumed, or sourced (--figures lists them)",
                      err);
    for (size_t i = 0; figures && i < n && rc == ERR_OK; i++) {
        profile_t p;
        if ((rc = prof_load_default(names[i], &p, err)))
            break;
        prov_figure_t f[PROV_MAX_FIGURES];
        rc = print_figures(&p, f, prov_figures(&p, f, PROV_MAX_FIGURES), err);
        prof_free(&p);
    }
    catalog_free_names(names, n);
    return rc;
}

static const struct {
    const char *name;
    section_fn fn;
} sections[] = {{"models", section_models},     {"gpus", section_gpus},
                {"frameworks", section_frameworks},
                {"fabrics", section_fabrics},   {"clusters", section_clusters},
                {"prices", section_prices},     {"failures", section_failures},
                {"storage", section_storage},   {"profiles", section_profiles},
                {"codecs", cmd_sites_catalog}}; /* last: only when named */
enum { N_SECTIONS = sizeof sections / sizeof sections[0] };

static int run(const cmd_args_t *a, err_t *err)
{
    int rc = ERR_OK;
    bool want[N_SECTIONS];
    for (int i = 0; i < N_SECTIONS; i++)
        want[i] = a->n_positional == 0 && i < N_SECTIONS - 1; /* codecs: when named */
    for (int p = 0; p < a->n_positional; p++) {
        int hit = -1;
        const char *names[N_SECTIONS];
        for (int i = 0; i < N_SECTIONS; i++) {
            names[i] = sections[i].name;
            if (strcmp(a->positional[p], sections[i].name) == 0)
                hit = i;
        }
        if (hit < 0) {
            int best = names_closest(a->positional[p], names, N_SECTIONS);
            return err_setf(err, ERR_INPUT, NULL, a->positional[p],
                            "unknown catalog section%s%s%s (models, gpus, frameworks, fabrics, "
                            "clusters, prices, failures, storage, profiles, codecs)",
                            best >= 0 ? "; did you mean '" : "",
                            best >= 0 ? names[best] : "", best >= 0 ? "'?" : "");
        }
        want[hit] = true;
    }
    bool as_json = cmd_machine_output(a);
    cJSON *json = as_json ? cJSON_CreateObject() : NULL;
    if (as_json && !json)
        return err_set(err, ERR_RUNTIME, "out of memory");
    for (int i = 0; i < N_SECTIONS && rc == ERR_OK; i++)
        if (want[i])
            rc = sections[i].fn(json, a, err);
    if (rc == ERR_OK && json)
        rc = cmd_emit(a, json, NULL, err);
    cJSON_Delete(json);
    return rc;
}

static const cmd_opt_t own_opts[] = {
    {"--figures", NULL, NULL,
     "with profiles: every figure of each profile, whether it is measured, fitted to published "
     "runs, assumed or sourced, and its source", CMD_WORD},
};
static const cmd_group_t own_group = {"Catalog", own_opts, sizeof own_opts / sizeof own_opts[0]};
static const cmd_group_t *const groups[] = {&own_group, &CMD_OUTPUT_OPTS};

const cmd_command_t CMD_CMD_CATALOG = {
    "catalog",
    "list models, GPUs, fabrics, clusters, prices and failure rates",
    "scaleplan catalog [models|gpus|frameworks|fabrics|clusters|prices|failures|storage|profiles|codecs] "
    "[--figures] [--json|--csv]",
    "List the built-in catalogs. Every figure's source is kept next to it in\n"
                       "the JSON files; set SCALEPLAN_CATALOG to a directory laid out like the\n"
                       "source tree to use edited copies without rebuilding. codecs (gradient\n"
                       "codecs, --grad-codec) is listed only when named.",
    groups,
    sizeof groups / sizeof groups[0],
    run,
    7,
};
