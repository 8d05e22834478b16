/* One row set up for the simulator (split off from published.c, issue
 * 34): rules 1-4 applied in turn into a scenario, and rule 5's search of
 * the fastest choices the row leaves open. */
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "validate/publishedInt.h"

/* ------------------------------------------------------------ one row */

void pub_skip(pub_row_t *v, const char *why)
{
    v->skipped = true;
    snprintf(v->reason, sizeof v->reason, "%s", why);
}

/* Rule 4's batch: every framework runs whole micro-batches on every
 * data-parallel rank, so a published batch that does not divide by
 * micro-batch x DP ("1,538 sequences" on DP 12 with micro-batch 4, a batch
 * given as "2M tokens") was rounded in the writing; the nearest multiple
 * (at least one) is replayed, and the row says so. With the micro-batch
 * open, the multiple of DP. */
static void round_batch(layout_t *l, int dp, bool mb_open, pub_row_t *v)
{
    long long unit = (long long)(mb_open ? 1 : l->micro_batch) * dp;
    if (unit <= 0 || l->global_batch <= 0 || l->global_batch % unit == 0)
        return;
    long long k = llround((double)l->global_batch / (double)unit);
    k = k < 1 ? 1 : k;
    if (k * unit > INT_MAX)
        return; /* left for the layout's own check to refuse */
    char what[200];
    snprintf(what, sizeof what,
             "global batch %d sequences does not divide by micro-batch x DP = %lld: replayed "
             "with %lld, the nearest multiple",
             l->global_batch, unit, k * unit);
    l->global_batch = (int)(k * unit);
    pub_add_assumed(v, what);
}

/* Rule 3's fallback: a framework column no preset family names (a
 * launcher or trainer such as the Hugging Face Trainer or Accelerate, or an
 * in-house framework) runs the engine its zero_or_fsdp column names:
 * DeepSpeed for ZeRO, PyTorch FSDP for FSDP (torchtitan's FSDP2 when the
 * row also splits the model: TP, PP or CP), PyTorch DDP for DDP alone; and
 * where that column names none, or DDP with the model split, Megatron-LM,
 * the reference of tensor and pipeline parallelism; each engine's latest
 * preset (the source's date says nothing of an engine it does not name). */
static int engine_for_unnamed(catalog_t *cat, const char *fw_text, const char *zero_text,
                              bool split, bool fp16, bool fp8, const char *lead,
                              fw_preset_t *fw)
{
    const char *engine, *why;
    /* FSDP named beside a ZeRO stage ("FSDP (ZeRO-2 style)") is PyTorch
     * FSDP sharding to that stage: the ZeRO word alone means DeepSpeed,
     * unless the row trains in fp8 or fp4, which DeepSpeed does not
     * (DeepSeek-V3's in-house ZeRO-1 in fp8): then Megatron-Core's
     * distributed optimizer (ZeRO-1) or FSDP (ZeRO-3) */
    bool fsdp = pub_has(zero_text, "FSDP") || pub_has(zero_text, "SHARD_GRAD_OP");
    if (!pub_has(zero_text, "DeepSpeed") && pub_has(zero_text, "ZeRO") && !fsdp && fp8)
        engine = "Megatron-LM",
        why = "ZeRO in fp8 or fp4, which DeepSpeed does not train: Megatron-Core's sharding";
    else if (pub_has(zero_text, "DeepSpeed") || (pub_has(zero_text, "ZeRO") && !fsdp))
        engine = "DeepSpeed", why = "the engine its ZeRO/FSDP column names";
    else if (fsdp && split && fp16)
        engine = "Megatron-LM",
        why = "FSDP with the model split in fp16, which torchtitan does not train: Megatron-Core's "
              "FSDP";
    else if (fsdp)
        engine = split ? "torchtitan" : "FSDP",
        why = split ? "FSDP with the model split, as torchtitan runs it"
                    : "the engine its ZeRO/FSDP column names";
    else if (pub_has(zero_text, "DDP") && !split)
        engine = "DDP", why = "the engine its ZeRO/FSDP column names";
    else
        engine = "Megatron-LM", why = "no engine named: Megatron-LM's parallelism";
    err_t ignore;
    if (fw_match_in(cat, engine, "", fw, &ignore))
        return -1;
    snprintf(fw->matched_by, sizeof fw->matched_by,
             "framework '%.60s' %s: replayed with %s (%s%s%.40s%s)", fw_text, lead, fw->name,
             why, zero_text[0] ? ": '" : "", zero_text, zero_text[0] ? "'" : "");
    return 0;
}

/* Sequence parallelism the framework needs (an MoE model with TP under
 * Megatron-Core: scenario_finish's note) is no longer open, and is said. */
static void implied_sp(row_setup_t *r, pub_row_t *v)
{
    if (!notes_has(&r->s.notes, "--sequence-parallel"))
        return;
    r->sp_open = false;
    for (size_t k = 0; k < r->s.notes.n; k++)
        if (strcmp(r->s.notes.items[k].field, "--sequence-parallel") == 0)
            pub_add_assumed(v, r->s.notes.items[k].text);
}

/* The global batch in sequences the notes give when its columns are empty
 * (a count of tokens over the sequence), said; 0 when they give none. */
static int batch_from_notes(const char *notes, int seq_len, pub_row_t *v)
{
    bool tokens;
    double b = pub_notes_batch(notes, &tokens);
    if (tokens)
        b = seq_len > 0 && b >= seq_len ? b / seq_len : 0;
    if (!(b >= 1 && b < 1e8))
        return 0;
    char what[120];
    snprintf(what, sizeof what, "global batch of %.0f sequences read from the notes%s", round(b),
             tokens ? " (its tokens over the sequence length)" : "");
    pub_add_assumed(v, what);
    return (int)llround(b);
}

/* A row's parallel degrees, 1 where a column leaves one out. */
typedef struct {
    int tp, pp, cp, ep;
} row_degrees_t;

static row_degrees_t row_degrees(const csv_t *c, int i)
{
    int tp = pub_lead_int(pub_cell(c, i, "tp")), pp = pub_lead_int(pub_cell(c, i, "pp"));
    const char *cpsp = pub_cell(c, i, "cp_or_sp");
    int cp = pub_degree_in(cpsp, "CP"), ep = pub_degree_in(cpsp, "EP");
    if (!cp)
        cp = pub_degree_in(cpsp, "context parallel");
    if (!cp)
        cp = pub_degree_in(cpsp, "context parallelism");
    row_degrees_t d = {tp ? tp : 1, pp ? pp : 1, cp ? cp : 1, ep ? ep : 1};
    return d;
}

/* Rule 3 into r->fw: the preset the framework column names, or the
 * engine that runs the row in its place; *zero_text is the ZeRO/FSDP text
 * rule 4 reads (the framework column where that names the engine).
 * v->skipped when none runs it. */
static int setup_framework(catalog_t *cat, const csv_t *c, int i, const row_degrees_t *d,
                           pub_row_t *v, row_setup_t *r, const char **zero_text, err_t *err)
{
    const char *fw_text = pub_cell(c, i, "framework");
    err_t e;
    bool split = d->tp > 1 || d->pp > 1 || d->cp > 1;
    *zero_text = pub_cell(c, i, "zero_or_fsdp");
    const char *prec_text = pub_cell(c, i, "precision");
    bool fp16 = pub_has_word(prec_text, "fp16") || pub_has(prec_text, "float16");
    bool fp8 =
        pub_has(prec_text, "fp8") || pub_has(prec_text, "fp4") || pub_has(prec_text, "float8");
    int mrc = fw_match_in(cat, fw_text, pub_cell(c, i, "source_title"), &r->fw, &e);
    if (mrc == ERR_RUNTIME) {
        *err = e;
        return mrc;
    }
    if (mrc) {
        if (!fw_text[0] || engine_for_unnamed(cat, fw_text, *zero_text, split, fp16, fp8,
                                              "has no preset", &r->fw)) {
            pub_skip(v, e.msg);
            return ERR_OK;
        }
        r->stand_in = true;
    } else if (split && !r->fw.caps.tp && !r->fw.caps.pp && !fw_caps_cp(&r->fw.caps)) {
        if (!(*zero_text)[0])
            *zero_text = fw_text; /* the engine the framework column names */
        /* a column naming only the engine ("FSDP", "DDP": metaseq's
         * "FSDP + Megatron TP") with the model split: that engine's preset
         * runs no TP, PP or CP, so the engine that runs it with them */
        if (engine_for_unnamed(cat, fw_text, *zero_text, split, fp16, fp8,
                               "names an engine whose preset does not split the model",
                               &r->fw)) {
            pub_skip(v, "no preset runs this engine with the model split");
            return ERR_OK;
        }
    }
    snprintf(v->group, sizeof v->group, "%s", r->fw.name);
    return ERR_OK;
}

/* Rule 1 into *m: the columns' architecture (on the block of the catalog
 * model cm of that name where in_catalog), else the catalog model the
 * model column names. v->skipped when neither gives one. */
static void setup_model(const csv_t *c, int i, const row_degrees_t *d, const model_t *cm,
                        bool in_catalog, const row_setup_t *r, pub_row_t *v, model_t *m)
{
    err_t e;
    int got = pub_model_from_columns(c, i, d->tp, m, &e);
    if (got < 0) {
        pub_skip(v, e.msg);
        return;
    }
    /* the columns cannot describe experts: a mixture-of-experts row (EP > 1,
     * or "MoE" in its notes) takes the catalog model of that name when its
     * layers and width agree with the columns */
    bool same = got > 0 && in_catalog && cm->n_layers == m->n_layers && cm->hidden == m->hidden;
    if (same && model_is_moe(cm) && (d->ep > 1 || pub_has(pub_cell(c, i, "notes"), "MoE")))
        *m = *cm;
    else if (same && !model_is_moe(cm))
        *m = pub_catalog_block(cm, m, c, i);
    /* a GPT block drops out as the framework's GPT recipes set it */
    if (got > 0 && m->family == MODEL_FAMILY_GPT)
        m->dropout = r->fw.gpt_dropout;
    if (got == 0 && pub_model_from_catalog(pub_cell(c, i, "model"), m, &e)) {
        char why[240];
        snprintf(why, sizeof why, "model not in the catalog: %s", e.msg);
        pub_skip(v, why);
        return;
    }
    v->moe = v->moe || model_is_moe(m);
    snprintf(v->model_key, sizeof v->model_key, "L%d-H%d-A%d-K%d-F%d-V%d", m->n_layers,
             m->hidden, m->n_heads, m->n_kv_heads, m->ffn, m->vocab);
}

/* Rule 2's GPU count into v->gpus: the num_gpus column's GPUs, or its
 * nodes of the row's cluster (the GPU's default where it names none), or
 * the product of the parallel degrees; said where it is not the plain
 * count. */
static void row_gpu_count(catalog_t *cat, const csv_t *c, int i, const row_degrees_t *d,
                          const char *cluster, const gpu_t *g, pub_row_t *v)
{
    int tp = d->tp, pp = d->pp, cp = d->cp;
    const char *gpus_text = pub_cell(c, i, "num_gpus");
    v->gpus = pub_lead_int(gpus_text);
    if (pub_int_before(gpus_text, "GPU") > 0) {
        /* "8 nodes (64 GPUs)": the GPUs */
        v->gpus = pub_int_before(gpus_text, "GPU");
    } else if (pub_int_before(gpus_text, "node") > 0) {
        /* "48 nodes": that many of the row's (or the GPU's default) nodes */
        cluster_t cl;
        err_t ignore;
        if (cluster_load_in(cat, cluster[0] ? cluster : g->default_cluster, &cl, &ignore) == 0 &&
            cl.gpus_per_node > 0) {
            long all = (long)pub_int_before(gpus_text, "node") * cl.gpus_per_node;
            if (all <= 1 << 24) {
                v->gpus = (int)all;
                char what[160];
                snprintf(what, sizeof what, "GPUs as %d nodes x %d GPUs per node (%s)",
                         pub_int_before(gpus_text, "node"), cl.gpus_per_node, cl.name);
                pub_add_assumed(v, what);
            }
        }
    }
    if (v->gpus > 0 && pub_lead_int(pub_cell(c, i, "dp")) > 0 &&
        (long)tp * pp * cp * pub_lead_int(pub_cell(c, i, "dp")) != v->gpus) {
        char what[200];
        snprintf(what, sizeof what,
                 "the dp column says %d, but %d GPUs over TP x PP x CP = %d give %d: the GPU "
                 "count used",
                 pub_lead_int(pub_cell(c, i, "dp")), v->gpus, tp * pp * cp,
                 v->gpus / (tp * pp * cp));
        pub_add_assumed(v, what);
    }
    if (!v->gpus && pub_lead_int(pub_cell(c, i, "dp")) > 0) {
        /* no GPU count: the product of the parallel degrees the row gives */
        long all = (long)tp * pp * cp * pub_lead_int(pub_cell(c, i, "dp"));
        if (all <= 1 << 24) {
            v->gpus = (int)all;
            pub_add_assumed(v, "GPUs as TP x PP x CP x DP (no num_gpus)");
        }
    }
}

/* Rule 2 and the scenario begun: the catalog GPU and cluster the gpu_type
 * column names, the GPU count, model m on them under r->fw into r->s.
 * v->skipped when the GPU is unknown or the scenario cannot begin. */
static void setup_cluster(catalog_t *cat, const csv_t *c, int i, const row_degrees_t *d,
                         model_t *m, pub_row_t *v, row_setup_t *r)
{
    err_t e;
    gpu_t g;
    const char *gpu_text = pub_cell(c, i, "gpu_type");
    if (pub_row_gpu(cat, gpu_text, &g)) {
        char why[240];
        snprintf(why, sizeof why, "GPU '%.160s' not in the catalog", gpu_text);
        pub_skip(v, why);
        return;
    }
    snprintf(v->gpu, sizeof v->gpu, "%s", g.name);
    char cluster[160];
    pub_row_cluster(cat, gpu_text, &g, cluster, sizeof cluster);
    pub_row_positions(c, i, m, v);
    scenario_spec_t spec = {0};
    spec.cluster.catalog = cat;
    spec.model_given = m;
    spec.framework = r->fw.name;
    row_gpu_count(cat, c, i, d, cluster, &g, v);
    spec.cluster.n_gpus = v->gpus;
    if (cluster[0])
        spec.cluster.cluster = cluster;
    else
        spec.cluster.gpu = g.name;
    spec.cluster.fabric = pub_row_fabric(gpu_text);
    spec.cluster.nics_per_node = pub_row_nics(gpu_text);
    spec.cluster.gpus_per_node = pub_row_gpus_per_node(gpu_text);
    if (scenario_begin(&spec, &r->s, &e))
        pub_skip(v, e.msg);
}

/* Rule 4's parallelism: the degrees, sequence parallelism, the pipeline
 * schedule, ZeRO and offload (zero_text), recompute and precision, into
 * r->s.layout. */
static void setup_parallel(const csv_t *c, int i, const row_degrees_t *d, const char *zero_text,
                           pub_row_t *v, row_setup_t *r)
{
    int tp = d->tp, pp = d->pp;
    const char *cpsp = pub_cell(c, i, "cp_or_sp");
    layout_t *l = &r->s.layout;
    l->tp = tp;
    l->pp = pp;
    l->cp = d->cp;
    l->ep = d->ep;
    /* the MoE recipes behind the published runs keep each expert whole
     * (expert TP 1: Megatron-Bridge's perf matrix, NeMo's Mixtral configs) */
    l->etp = d->ep > 1 ? 1 : 0;
    l->sp_off = pub_has(cpsp, "no SP") || pub_has(cpsp, "SP=False") || pub_has(cpsp, "SP: no");
    bool sp_named =
        (pub_has_word(cpsp, "SP") || pub_has(cpsp, "sequence parallel")) && !l->sp_off;
    l->sequence_parallel = sp_named || (r->fw.sp_with_tp && tp > 1 && !l->sp_off);
    /* Megatron-LM takes --sequence-parallel as an argument (off by
     * default): a row with TP that does not say leaves it open */
    r->sp_open = tp > 1 && !l->sequence_parallel && r->fw.caps.sp && !pub_has(cpsp, "SP") &&
                 !pub_has(cpsp, "sequence parallel");
    const char *vpp_text = pub_cell(c, i, "vpp_or_interleave");
    l->vpp = pub_row_vpp(vpp_text, pp, 2);
    if (l->vpp > 1)
        l->schedule = SCHEDULE_INTERLEAVED;
    /* a schedule named there: DualPipe (DeepSeek-V3's) as the DualPipeV
     * the simulator runs, where the preset runs it; GPipe */
    if (pp > 1 && pub_has(vpp_text, "DualPipe")) {
        if (r->fw.caps.schedule[SCHEDULE_DUALPIPEV]) {
            l->schedule = SCHEDULE_DUALPIPEV;
            l->vpp = 2;
            pub_add_assumed(v, "DualPipe as DualPipeV, two stages a rank in a V");
        } else {
            l->schedule = SCHEDULE_1F1B;
            l->vpp = 1;
            char what[160];
            snprintf(what, sizeof what, "DualPipe: %s runs no DualPipeV, replayed with 1F1B",
                     r->fw.name);
            pub_add_assumed(v, what);
        }
    } else if (pp > 1 && pub_has(vpp_text, "GPipe")) {
        l->schedule = SCHEDULE_GPIPE;
        l->vpp = 1;
    }
    pub_row_zero(zero_text, l);
    pub_row_offload(zero_text, l);
    pub_row_recompute(pub_cell(c, i, "act_recompute"), &r->fw, l);
    r->recompute_given = pub_cell(c, i, "act_recompute")[0] != '\0';
    r->vpp_given = pub_cell(c, i, "vpp_or_interleave")[0] != '\0';
    r->s.fp8_recipe_fixed = pub_row_precision(pub_cell(c, i, "precision"), &r->fw, l);
    l->seq_len = pub_lead_tokens(pub_cell(c, i, "seq_len"));
}

/* Rule 4's batch: the micro-batch and global batch in sequences as the
 * framework counts them over dp data-parallel ranks, what the row leaves
 * open, rounded to whole micro-batches. */
static void setup_batch(const csv_t *c, int i, int pp, int dp, pub_row_t *v, row_setup_t *r)
{
    layout_t *l = &r->s.layout;
    const char *mb_text = pub_cell(c, i, "micro_batch");
    const char *gb_text = pub_cell(c, i, "global_batch_seqs");
    int mb = pub_lead_int(mb_text) ? pub_lead_int(mb_text) : pub_first_int(mb_text);
    /* the batch in sequences; a count of tokens there ("4M tokens"), or
     * only in global_batch_tokens, divided by the sequence */
    bool gb_tokens = pub_has(gb_text, "token");
    int gb = gb_tokens ? 0 : pub_lead_int(gb_text);
    if (!gb && l->seq_len > 0) {
        double tokens =
            pub_lead_num_base(gb_tokens ? gb_text : pub_cell(c, i, "global_batch_tokens"), true);
        if (isfinite(tokens) && tokens >= l->seq_len && tokens < 1e15) {
            gb = (int)llround(tokens / l->seq_len);
            pub_add_assumed(v,
                            "global batch in sequences from its tokens over the sequence length");
        }
    }
    if (!gb)
        gb = batch_from_notes(pub_cell(c, i, "notes"), l->seq_len, v);
    switch (r->fw.batch) {
    case FW_BATCH_WHOLE_SHARE:
        l->micro_batch = dp > 0 && gb ? gb / dp : 1;
        l->global_batch = gb;
        break;
    case FW_BATCH_LOCAL_SPLIT_PP:
    case FW_BATCH_LOCAL_SIZE1: {
        /* without pipeline stages the whole local batch is one micro-batch;
         * with them torchtitan (December 2024) splits it into one per
         * pipeline rank, interleaved or not (9dec370 pipelining_utils.py:
         * n_microbatches defaults to pipeline_parallel_degree; later
         * versions count the virtual stages) */
        int local = mb ? mb : 1;
        int micro = pp == 1 ? local : r->fw.batch == FW_BATCH_LOCAL_SIZE1 ? 1 : local / pp;
        l->micro_batch = micro > 0 ? micro : 1;
        l->global_batch = gb ? gb : local * dp;
        break;
    }
    default:
        l->micro_batch = mb ? mb : 1;
        l->global_batch = gb;
        r->mb_open = r->open_choices = mb == 0;
        break;
    }
    /* "interleaved" with no count: Megatron-LM takes the count as an
     * argument (--num-layers-per-virtual-pipeline-stage), so the row leaves
     * it open; torchtitan's presets have their own default (2 a rank) */
    const char *vpp_text = pub_cell(c, i, "vpp_or_interleave");
    if (pp > 1 && r->fw.pp_split == LAYOUT_SPLIT_MEGATRON && pub_has(vpp_text, "nterleav") &&
        !strpbrk(vpp_text, "0123456789")) {
        r->vpp_count_open = true;
        r->vpp_given = false;
        r->open_choices = true;
    }
    round_batch(l, dp, r->mb_open, v);
}

/* Rules 1-4 into r->s, names looked up in cat; v->skipped when the row
 * cannot be replayed. */
int pub_setup_row(catalog_t *cat, const csv_t *c, int i, pub_row_t *v, row_setup_t *r,
                  err_t *err)
{
    err_t e;
    row_degrees_t d = row_degrees(c, i);
    /* a mixture-of-experts row is one before anything can refuse it (the
     * dense summary leaves it out either way) */
    model_t cm;
    bool in_catalog = pub_model_from_catalog(pub_cell(c, i, "model"), &cm, &e) == 0;
    v->moe = d.ep > 1 || (in_catalog && model_is_moe(&cm));
    const char *zero_text;
    int rc = setup_framework(cat, c, i, &d, v, r, &zero_text, err); /* rule 3 */
    if (rc || v->skipped)
        return rc;
    model_t m;
    setup_model(c, i, &d, &cm, in_catalog, r, v, &m); /* rule 1 */
    if (v->skipped)
        return ERR_OK;
    setup_cluster(cat, c, i, &d, &m, v, r); /* rule 2 */
    if (v->skipped)
        return ERR_OK;
    /* rule 4 */
    int dp = v->gpus / (d.tp * d.pp * d.cp); /* the count the scenario began with */
    setup_parallel(c, i, &d, zero_text, v, r);
    setup_batch(c, i, d.pp, dp, v, r);
    layout_t *l = &r->s.layout;
    pub_notes_flags(pub_cell(c, i, "notes"), &r->s.opt, l);
    pub_framework_flags(pub_cell(c, i, "framework"), &r->s.opt, l);
    /* a stand-in lends its parallelism, not its model code: torchtitan's
     * Llama repeats the grouped K/V heads before attention (and so before a
     * context-parallel exchange); an in-house stack need not (Llama 3's
     * all-gathers the grouped K and V, arXiv:2407.21783 sec. 3.3.2) */
    if (r->stand_in)
        r->s.opt.kv_repeated = false;
    /* DeepSpeed's partition_method naming the embeddings too (BLOOM's
     * --pp-partition-method 'type:transformer|embedding') */
    layout_split_rule_t split_rule = r->fw.pp_split;
    if (split_rule == LAYOUT_SPLIT_BALANCED &&
        pub_has(pub_cell(c, i, "notes"), "transformer|embedding"))
        split_rule = LAYOUT_SPLIT_BALANCED_EMBED;
    if (split_rule == LAYOUT_SPLIT_MEGATRON)
        pub_uneven_split(l, &r->s.model);
    else if (pub_framework_split(l, &r->s.model, split_rule, &e)) {
        pub_skip(v, e.msg);
        return ERR_OK;
    }
    if (scenario_finish(&r->s, NULL, &e)) {
        pub_skip(v, e.msg);
        return ERR_OK;
    }
    implied_sp(r, v);
    return ERR_OK;
}

/* Whether vpp chunks a pipeline rank split the layers as base's uneven
 * split leaves them: the layers left after the first and last (virtual)
 * stages' own counts divide evenly over the others (layout_finalize's
 * rule; with no uneven split, the layers over PP x VPP). */
static bool vpp_splits(const layout_t *base, const model_t *m, int vpp)
{
    int first = base->first_stage_layers, last = base->last_stage_layers;
    int special = (first != 0) + (last != 0);
    int rest = m->n_layers - layout_split_layers(first) - layout_split_layers(last);
    int middle = base->pp * vpp - special;
    return middle > 0 && rest >= middle && rest % middle == 0;
}

/* Rule 5: the fastest micro-batch, recompute and interleaving that fit;
 * a recompute or interleaving the row gives stays as given (keep), unless
 * nothing fits with it. */
int pub_open_choices(sim_ctx_t *ctx, row_setup_t *r, bool keep, sim_result_t *best,
                     bool *found, err_t *err)
{
    layout_t base = r->s.layout, winner = base;
    const model_t *m = &r->s.model;
    double best_t = INFINITY;
    static const int open_mbs[] = {1, 2, 4, 8};
    const int *mbs = r->mb_open ? open_mbs : &base.micro_batch;
    size_t n_mbs = r->mb_open ? sizeof open_mbs / sizeof open_mbs[0] : 1;
    /* (a first and last chunk without layers leave L + 2 slots) */
    int max_vpp = (m->n_layers + 2) / (base.pp > 0 ? base.pp : 1);
    bool fixed_rc = keep && r->recompute_given, fixed_vpp = keep && r->vpp_given;
    for (int sp = 0; sp <= (r->sp_open ? 1 : 0); sp++)
    for (size_t a = 0; a < n_mbs; a++)
        for (int rcmp = RECOMPUTE_NONE; rcmp <= RECOMPUTE_FULL; rcmp++)
            for (int vpp = r->vpp_count_open ? 2 : 1; vpp <= max_vpp; vpp++) {
                if (!vpp_splits(&base, m, vpp) || (vpp > 1 && base.pp < 2))
                    continue;
                if ((fixed_rc && rcmp != (int)base.recompute) || (fixed_vpp && vpp != base.vpp))
                    continue;
                layout_t t = base;
                if (sp)
                    t.sequence_parallel = true;
                t.micro_batch = mbs[a];
                t.recompute = (recompute_t)rcmp;
                t.vpp = vpp;
                t.schedule = fixed_vpp       ? base.schedule
                             : vpp > 1 ? SCHEDULE_INTERLEAVED
                                       : SCHEDULE_1F1B;
                t.grad_accum = 0;
                err_t ignore;
                if (layout_finalize(&t, m, t.n_gpus, &ignore))
                    continue;
                sim_input_t in = r->s.input;
                in.layout = &t;
                sim_result_t res;
                int rc = sim_run_step(ctx, &in, &res, err);
                if (rc)
                    return rc;
                if (res.fits && res.step_time_s < best_t) {
                    best_t = res.step_time_s;
                    *best = res;
                    winner = t;
                }
            }
    *found = isfinite(best_t);
    if (*found)
        r->s.layout = winner;
    return ERR_OK;
}
