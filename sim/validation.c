#include "sim/validation.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/csv.h"
#include "common/json.h"
#include "models/layout_json.h"
#include "sim/plan.h"
#include "sim/step.h"

const char *val_metric_name(val_metric_t m)
{
    static const char *names[] = {"s/iter", "hw TFLOP/s", "model TFLOP/s"};
    return m <= VAL_MODEL_TFLOPS ? names[m] : "?";
}

static double num(const char *s)
{
    if (!s || !*s)
        return NAN;
    char *end;
    double v = strtod(s, &end);
    return end == s ? NAN : v;
}

static int inum(const char *s)
{
    double v = num(s);
    return isfinite(v) ? (int)v : 0;
}

/* Megatron's GPT as the sources ran it: LayerNorm, GELU, learned
 * positions, tied embeddings, dropout 0.1, biases, ffn = 4h unless given. */
static void row_model(const csv_t *c, int i, model_t *m)
{
    memset(m, 0, sizeof *m);
    snprintf(m->name, sizeof m->name, "%s", csv_get(c, i, "model"));
    snprintf(m->display, sizeof m->display, "%s", csv_get(c, i, "model"));
    snprintf(m->source, sizeof m->source, "throughput.csv %s", csv_get(c, i, "row_id"));
    m->family = MODEL_FAMILY_GPT;
    m->norm = MODEL_NORM_LAYERNORM;
    m->mlp = MODEL_MLP_GELU;
    m->pos = MODEL_POS_LEARNED;
    m->n_layers = inum(csv_get(c, i, "layers"));
    m->hidden = inum(csv_get(c, i, "hidden"));
    m->n_heads = inum(csv_get(c, i, "heads"));
    m->n_kv_heads = inum(csv_get(c, i, "kv_heads"));
    if (m->n_kv_heads == 0)
        m->n_kv_heads = m->n_heads;
    m->head_dim = m->n_heads ? m->hidden / m->n_heads : 0;
    m->ffn = inum(csv_get(c, i, "ffn"));
    if (m->ffn == 0)
        m->ffn = 4 * m->hidden;
    m->vocab = inum(csv_get(c, i, "vocab"));
    m->max_seq = inum(csv_get(c, i, "seq_len"));
    m->tied_embeddings = true;
    m->qkv_bias = m->out_bias = m->mlp_bias = true;
    m->dropout = 0.1;
}

static const char *row_gpu(const char *gpu_type)
{
    if (strstr(gpu_type, "H100"))
        return "h100-sxm";
    if (strstr(gpu_type, "A100"))
        return "a100-80g";
    return NULL;
}

/* Chunks per PP rank from "interleaved; 5 layers per virtual stage (=3
 * chunks per PP rank)" or "3 (calculon reconstruction)"; 1 otherwise. */
static int row_vpp(const char *text)
{
    const char *eq = strstr(text, "(=");
    if (eq)
        return inum(eq + 2);
    if (text[0] >= '0' && text[0] <= '9')
        return inum(text);
    return 1;
}

/* DP degree of a row: its column, else GPUs / (TP x PP). */
static int v_gpus_over_model(const csv_t *c, int i)
{
    int dp = inum(csv_get(c, i, "dp"));
    if (dp > 0)
        return dp;
    int mp = inum(csv_get(c, i, "tp")) * inum(csv_get(c, i, "pp"));
    return mp > 0 ? inum(csv_get(c, i, "num_gpus")) / mp : 0;
}

static const char *row_framework(const char *framework, const char *source)
{
    if (strstr(framework, "Megatron-Core"))
        return "megatron-core";
    if (strstr(source, "Korthikanti"))
        return "megatron-2022";
    return "megatron-2021";
}

/* For rows that leave micro-batch, recompute and interleaving open: the
 * fastest combination that fits in memory, as a tuned run would use. *l
 * is left at the winner. */
static int best_open_choices(sim_ctx_t *ctx, const model_t *m, layout_t *l, const cluster_t *cl,
                             const profile_t *p, const sim_options_t *opt, sim_result_t *best,
                             err_t *err)
{
    layout_t base = *l, winner = *l;
    double best_t = INFINITY;
    bool found = false;
    static const int mbs[] = {1, 2, 4, 8};
    int per_stage = m->n_layers / (base.pp > 0 ? base.pp : 1);
    for (size_t a = 0; a < sizeof mbs / sizeof mbs[0]; a++)
        for (int rcmp = RECOMPUTE_NONE; rcmp <= RECOMPUTE_FULL; rcmp++)
            for (int vpp = 1; vpp <= per_stage; vpp++) {
                if (per_stage % vpp || (vpp > 1 && base.pp < 2))
                    continue;
                layout_t t = base;
                t.micro_batch = mbs[a];
                t.recompute = (recompute_t)rcmp;
                t.vpp = vpp;
                t.schedule = t.vpp > 1 ? SCHEDULE_INTERLEAVED : SCHEDULE_1F1B;
                t.grad_accum = 0;
                err_t ignore;
                if (layout_finalize(&t, m, t.n_gpus, &ignore))
                    continue;
                sim_input_t in = {m, &t, cl, p, *opt};
                sim_result_t r;
                int rc = sim_run_step(ctx, &in, &r, err);
                if (rc)
                    return rc;
                if (r.fits && r.step_time_s < best_t) {
                    best_t = r.step_time_s;
                    *best = r;
                    winner = t;
                    found = true;
                }
            }
    if (!found)
        return err_set(err, ERR_INPUT, "no layout choice fits in memory");
    *l = winner;
    return ERR_OK;
}

/* Everything a row describes: model, cluster, layout, framework options.
 * Sets v->skipped (with a note) for rows scaleplan cannot rebuild. */
static int row_setup(const csv_t *c, int i, val_row_t *v, model_t *m, layout_t *l, cluster_t *cl,
                     sim_options_t *opt, const char **framework_out, err_t *err)
{
    row_model(c, i, m);
    snprintf(v->model, sizeof v->model, "%s", m->name);
    const char *gpu = row_gpu(csv_get(c, i, "gpu_type"));
    if (!gpu || model_validate(m, v->row_id, err)) {
        v->skipped = true;
        snprintf(v->note, sizeof v->note, "%s", gpu ? err->msg : "GPU type not in the catalog");
        return ERR_OK;
    }
    snprintf(v->gpu, sizeof v->gpu, "%s", gpu);
    v->gpus = inum(csv_get(c, i, "num_gpus"));
    const char *framework = row_framework(csv_get(c, i, "framework"), csv_get(c, i, "source_title"));
    *framework_out = framework;
    const char *recompute = csv_get(c, i, "act_recompute");
    const char *mb_text = csv_get(c, i, "micro_batch");

    layout_defaults(l);
    int rc = sim_options_framework(framework, opt, l, err);
    if (rc)
        return rc;
    l->tp = inum(csv_get(c, i, "tp"));
    l->pp = inum(csv_get(c, i, "pp"));
    l->vpp = row_vpp(csv_get(c, i, "vpp_or_interleave"));
    if (l->vpp > 1)
        l->schedule = SCHEDULE_INTERLEAVED;
    l->micro_batch = mb_text[0] ? inum(mb_text) : 1;
    bool era_2020 = strstr(csv_get(c, i, "framework"), "2020") != NULL;
    if (!mb_text[0] && era_2020) {
        /* Megatron-LM before pipelining (2020) had no gradient accumulation:
         * each DP rank ran its whole batch share at once. */
        int dp = v_gpus_over_model(c, i);
        l->micro_batch = dp > 0 ? inum(csv_get(c, i, "global_batch_seqs")) / dp : 1;
    }
    l->global_batch = inum(csv_get(c, i, "global_batch_seqs"));
    l->seq_len = m->max_seq;
    l->sequence_parallel = strncmp(csv_get(c, i, "cp_or_sp"), "SP", 2) == 0;
    l->precision = strstr(csv_get(c, i, "precision"), "bf16") ? PRECISION_BF16 : PRECISION_FP16;
    v->full_config = mb_text[0] != '\0' || era_2020;
    if (strstr(recompute, "selective"))
        l->recompute = RECOMPUTE_SELECTIVE;
    else if (strstr(recompute, "full"))
        l->recompute = RECOMPUTE_FULL;
    else if (!recompute[0] && strstr(framework, "2021"))
        /* The 2020 tables report hardware FLOPs that only match with
         * --checkpoint-activations (the 96Bslh^2 count). */
        l->recompute = RECOMPUTE_FULL;
    if (strcmp(framework, "megatron-core") == 0) {
        /* The H100 table's flags: --overlap-grad-reduce --overlap-param-gather
         * --tp-comm-overlap, which need the distributed optimizer and SP. */
        l->distributed_optimizer = true;
        l->sequence_parallel = l->tp > 1;
        opt->tp_comm_overlap = l->tp > 1;
        snprintf(v->note, sizeof v->note,
                 "source gives no micro-batch, recompute or interleaving: the fastest choice "
                 "that fits");
    }
    cluster_spec_t spec = {.gpu = gpu, .n_gpus = v->gpus};
    if ((rc = cluster_resolve(&spec, cl, err)) || (rc = layout_finalize(l, m, v->gpus, err))) {
        v->skipped = true;
        snprintf(v->note, sizeof v->note, "%s", err->msg);
        return ERR_OK;
    }
    return ERR_OK;
}

static int run_row(const csv_t *c, int i, const profile_t *override, sim_ctx_t *ctx,
                   val_row_t *v, err_t *err)
{
    model_t m;
    layout_t l;
    cluster_t cl;
    sim_options_t opt;
    const char *framework = NULL;
    int rc = row_setup(c, i, v, &m, &l, &cl, &opt, &framework, err);
    if (rc || v->skipped)
        return rc;
    const char *gpu = v->gpu;
    bool hw_basis = strstr(csv_get(c, i, "tflops_basis"), "hardware") != NULL;
    profile_t prof;
    bool own = !(override && strcmp(override->gpu, gpu) == 0);
    if (own && (rc = prof_load_default(gpu, &prof, err)))
        return rc;
    const profile_t *p = own ? &prof : override;
    sim_result_t r;
    if (v->full_config) {
        sim_input_t in = {&m, &l, &cl, p, opt};
        rc = sim_run_step(ctx, &in, &r, err);
    } else {
        rc = best_open_choices(ctx, &m, &l, &cl, p, &opt, &r, err);
    }
    if (own)
        prof_free(&prof);
    if (rc)
        return rc;
    layout_describe(&l, v->layout, sizeof v->layout);
    double spi = num(csv_get(c, i, "sec_per_iter"));
    if (isfinite(spi)) {
        v->metric = VAL_STEP_TIME;
        v->published = spi;
        v->predicted = r.step_time_s;
        v->error = spi / r.step_time_s - 1;
    } else {
        v->metric = hw_basis ? VAL_HW_TFLOPS : VAL_MODEL_TFLOPS;
        v->published = num(csv_get(c, i, "tflops_per_gpu"));
        v->predicted = hw_basis ? r.hardware_tflops_per_gpu : r.model_tflops_per_gpu;
        v->error = v->predicted / v->published - 1;
    }
    return ERR_OK;
}

int val_run(const char *csv_path, const profile_t *profile, val_row_t **rows, int *n,
            err_t *err)
{
    *rows = NULL;
    *n = 0;
    csv_t *c;
    int rc = csv_load(csv_path, &c, err);
    if (rc)
        return rc;
    int count = csv_rows(c);
    val_row_t *out = calloc((size_t)(count > 0 ? count : 1), sizeof *out);
    sim_ctx_t *ctx = sim_ctx_create();
    if (!out || !ctx) {
        rc = err_set(err, ERR_RUNTIME, "out of memory");
        goto done;
    }
    for (int i = 0; i < count && !rc; i++) {
        snprintf(out[i].row_id, sizeof out[i].row_id, "%s", csv_get(c, i, "row_id"));
        rc = run_row(c, i, profile, ctx, &out[i], err);
        if (rc)
            err_prefix(err, out[i].row_id);
    }
done:
    sim_ctx_destroy(ctx);
    csv_free(c);
    if (rc) {
        free(out);
        return rc;
    }
    *rows = out;
    *n = count;
    return ERR_OK;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

void val_summary(const val_row_t *rows, int n, bool full_only, double *median, double *worst,
                 int *count)
{
    double *e = malloc((size_t)(n > 0 ? n : 1) * sizeof *e);
    int k = 0;
    *worst = 0;
    for (int i = 0; e && i < n; i++) {
        if (rows[i].skipped || (full_only && !rows[i].full_config))
            continue;
        e[k++] = fabs(rows[i].error);
        if (fabs(rows[i].error) > *worst)
            *worst = fabs(rows[i].error);
    }
    if (k > 0) {
        qsort(e, (size_t)k, sizeof *e, cmp_double);
        *median = k % 2 ? e[k / 2] : 0.5 * (e[k / 2 - 1] + e[k / 2]);
    } else {
        *median = 0;
    }
    *count = k;
    free(e);
}

int val_rank(const char *csv_path, val_rank_t **rows, int *n, err_t *err)
{
    *rows = NULL;
    *n = 0;
    csv_t *c;
    int rc = csv_load(csv_path, &c, err);
    if (rc)
        return rc;
    int count = csv_rows(c);
    val_rank_t *out = calloc((size_t)(count > 0 ? count : 1), sizeof *out);
    if (!out) {
        csv_free(c);
        return err_set(err, ERR_RUNTIME, "out of memory");
    }
    int k = 0;
    for (int i = 0; i < count && !rc; i++) {
        val_row_t v;
        memset(&v, 0, sizeof v);
        snprintf(v.row_id, sizeof v.row_id, "%s", csv_get(c, i, "row_id"));
        model_t m;
        layout_t l;
        cluster_t cl;
        sim_options_t opt;
        const char *framework = NULL;
        rc = row_setup(c, i, &v, &m, &l, &cl, &opt, &framework, err);
        if (rc || v.skipped || !v.full_config)
            continue;
        profile_t p;
        if ((rc = prof_load_default(v.gpu, &p, err)))
            break;
        /* the search space of the row's framework: Megatron-LM of 2020-2022
         * had neither context parallelism nor FSDP */
        plan_space_t space;
        plan_space_default(&space);
        space.framework = framework;
        space.precision = l.precision;
        space.seq_len = l.seq_len;
        space.global_batch_min = space.global_batch_max = l.global_batch;
        space.allow_cp = space.allow_fsdp = strcmp(framework, "megatron-core") == 0;
        /* selective recompute and sequence parallelism arrived in 2022 */
        space.allow_sp = space.allow_selective = strcmp(framework, "megatron-2021") != 0;
        plan_search_t ps;
        rc = plan_search(&m, &cl, &p, &space, &l, &ps, err);
        prof_free(&p);
        if (rc)
            break;
        val_rank_t *r = &out[k++];
        snprintf(r->row_id, sizeof r->row_id, "%s", v.row_id);
        snprintf(r->model, sizeof r->model, "%s", v.model);
        r->gpus = v.gpus;
        r->rank = ps.rank_of_reference;
        r->candidates = ps.candidates;
        r->simulated = ps.simulated;
        r->published_step_s = ps.reference_step_s;
        r->best_step_s = ps.found ? ps.result.step_time_s : 0;
        r->best_tokens_per_s = ps.found ? ps.result.tokens_per_s : 0;
        r->published_tokens_per_s = ps.reference_step_s > 0
                                        ? (double)l.global_batch * l.seq_len / ps.reference_step_s
                                        : 0;
        layout_describe(&l, r->published_layout, sizeof r->published_layout);
        if (ps.found)
            layout_describe(&ps.layout, r->best_layout, sizeof r->best_layout);
    }
    csv_free(c);
    if (rc) {
        free(out);
        return rc;
    }
    *rows = out;
    *n = k;
    return ERR_OK;
}

/* ------------------------------------------------------------ measured runs */

/* Model, cluster, framework and layout of the run in root. */
static int measured_scenario(const cJSON *root, const char *file, const char *profile,
                             val_measured_t *m, err_t *err)
{
    json_ctx_t ctx = json_ctx_root(file);
    int rc = json_expect_object(root, &ctx, err);
    if (rc)
        return rc;
    char model[128] = "", gpu[64] = "";
    int gpus = 0, per_node = 0;
    const cJSON *cfg = NULL, *lay = NULL;
    snprintf(m->framework, sizeof m->framework, "megatron-core");
    if ((rc = json_get_string(root, "model", &ctx, JSON_REQUIRED, model, sizeof model, err)) ||
        (rc = json_get_string(root, "gpu", &ctx, JSON_REQUIRED, gpu, sizeof gpu, err)) ||
        (rc = json_get_int(root, "gpus", &ctx, JSON_REQUIRED, 1, 1 << 24, &gpus, err)) ||
        (rc = json_get_int(root, "gpus_per_node", &ctx, JSON_OPTIONAL, 1, 4096, &per_node, err)) ||
        (rc = json_get_object(root, "model_config", &ctx, JSON_OPTIONAL, &cfg, err)) ||
        (rc = json_get_object(root, "layout", &ctx, JSON_REQUIRED, &lay, err)) ||
        (rc = json_get_string(root, "framework", &ctx, JSON_OPTIONAL, m->framework,
                              sizeof m->framework, err)))
        return rc;
    if (strcmp(gpu, "cpu") == 0)
        return err_setf(err, ERR_INPUT, file, "gpu",
                        "this run was measured on the CPU; the simulator models GPUs, so validate "
                        "a run made with --device cuda on a catalog GPU");
    model_t given;
    scenario_spec_t spec = {0};
    spec.model = model;
    if (cfg) {
        if ((rc = model_from_config(cfg, file, model, &given, err)))
            return rc;
        spec.model_given = &given;
    }
    spec.cluster.gpu = gpu;
    spec.cluster.n_gpus = gpus;
    spec.cluster.gpus_per_node = per_node;
    spec.framework = m->framework;
    scenario_t *s = &m->s;
    if ((rc = scenario_begin(&spec, s, err)))
        return rc;
    /* a trainer run that did not apply the config's dropout keeps no masks */
    if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(root, "dropout_disabled")))
        s->model.dropout = 0;
    json_ctx_t lctx = json_ctx_member(&ctx, "layout");
    if ((rc = layout_from_json(lay, &lctx, &s->layout, err)))
        return rc;
    /* the run says whether its gradient reduction overlapped the backward */
    const cJSON *ov = cJSON_GetObjectItemCaseSensitive(root, "overlap_grad_reduce");
    if (cJSON_IsBool(ov))
        s->opt.overlap_grad_reduce = cJSON_IsTrue(ov);
    return scenario_finish(s, profile, err);
}

/* What was measured: the step, its parts, tokens/s and memory. */
static int measured_figures(const cJSON *root, const char *file, val_measured_t *m, err_t *err)
{
    json_ctx_t ctx = json_ctx_root(file);
    int rc = json_get_double(root, "step_time_s", &ctx, JSON_REQUIRED, 1e-12, 1e9,
                             &m->step_time_s, err);
    if (rc)
        return rc;
    const cJSON *bd = NULL;
    if ((rc = json_get_object(root, "breakdown_s", &ctx, JSON_OPTIONAL, &bd, err)))
        return rc;
    json_ctx_t bctx = json_ctx_member(&ctx, "breakdown_s");
    for (int i = 0; bd && i < BD_COUNT; i++) {
        const char *key = sim_bd_name((sim_bd_t)i);
        if ((rc = json_get_double(bd, key, &bctx, JSON_OPTIONAL, 0, 1e9, &m->part_s[i], err)))
            return rc;
        m->has_part[i] = true;
    }
    const cJSON *tps = cJSON_GetObjectItemCaseSensitive(root, "tokens_per_s");
    const cJSON *mt = cJSON_GetObjectItemCaseSensitive(
        cJSON_GetObjectItemCaseSensitive(root, "memory_gib"), "total");
    m->tokens_per_s = cJSON_IsNumber(tps) ? tps->valuedouble : NAN;
    m->memory_gib = cJSON_IsNumber(mt) ? mt->valuedouble : NAN;
    return ERR_OK;
}

int val_measured_load(const char *path, const char *profile, val_measured_t *m, err_t *err)
{
    memset(m, 0, sizeof *m);
    cJSON *root = NULL;
    int rc = json_parse_file(path, &root, err);
    if (rc)
        return rc;
    if (!(rc = measured_scenario(root, path, profile, m, err)))
        rc = measured_figures(root, path, m, err);
    cJSON_Delete(root);
    return rc;
}

void val_measured_free(val_measured_t *m)
{
    scenario_free(&m->s);
}

static double rel_error(double predicted, double measured)
{
    return measured > 0 ? (predicted - measured) / measured : NAN;
}

void val_measured_compare(const val_measured_t *m, const sim_result_t *r, double flag_over,
                          val_component_t *c, int *n)
{
    *n = 0;
    val_component_t *step = &c[(*n)++];
    snprintf(step->name, sizeof step->name, "step");
    step->predicted_s = r->step_time_s;
    step->measured_s = m->step_time_s;
    for (int i = 0; i < BD_COUNT; i++) {
        if (!m->has_part[i])
            continue;
        double meas = m->part_s[i], pred = r->breakdown_s[i];
        if (meas < 0.005 * m->step_time_s && pred < 0.005 * r->step_time_s)
            continue;
        val_component_t *k = &c[(*n)++];
        snprintf(k->name, sizeof k->name, "%s", sim_bd_name((sim_bd_t)i));
        k->predicted_s = pred;
        k->measured_s = meas;
    }
    for (int i = 0; i < *n; i++) {
        c[i].error = rel_error(c[i].predicted_s, c[i].measured_s);
        c[i].flagged = !(fabs(c[i].error) <= flag_over);
    }
}
