/* torchtitan: job-config TOML into a model name, a layout and simulator
 * options. Keys and defaults from torchtitan/config/job_config.py (the
 * JobConfig dataclasses) at 238fa995 (2026-02-23, the last TOML-based
 * commit) and the renames before it; flavors from torchtitan/models/<name>/__init__.py. */
#include "inputs/torchtitan.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/fileio.h"
#include "inputs/pyregistry.h"
#include "inputs/toml.h"

/* The torchtitan generation whose keys a file uses: its presets differ in
 * defaults, and in how the pipeline's stages split the layers. */
typedef enum {
    TT_GEN_2024_12, /* [training] batch_size (torchtitan 9dec370) */
    TT_GEN_2025_06, /* local_batch_size (820504e) */
    TT_GEN_2025_12  /* expert parallelism, DualPipeV, first/last_stage_less_layers */
} tt_gen_t;

typedef struct {
    toml_doc_t *doc;
    torchtitan_t *t;
    const char *file;
    err_t *err;
    tt_gen_t gen;
    bool model_given; /* --model replaces the config's model: an unknown flavor is no error */
} tt_t;

/* The entry at the first of the spellings that is present (newest first),
 * marked as read; NULL when none is. */
static toml_entry_t *find_any(tt_t *x, const char *const *keys)
{
    toml_entry_t *found = NULL;
    for (const char *const *k = keys; *k; k++) {
        toml_entry_t *e = toml_find(x->doc, *k);
        if (e) {
            e->used = true;
            if (!found)
                found = e;
        }
    }
    return found;
}

#define KEYS(...) ((const char *const[]){__VA_ARGS__, NULL})

static int want_int(tt_t *x, const char *const *keys, long lo, long hi, int *out, bool *present)
{
    toml_entry_t *e = find_any(x, keys);
    if (present)
        *present = e != NULL;
    if (!e)
        return ERR_OK;
    double v = e->v.type == TOML_INT ? (double)e->v.i : e->v.type == TOML_FLOAT ? e->v.f : NAN;
    if ((e->v.type != TOML_INT && e->v.type != TOML_FLOAT) || v != floor(v) || v < lo || v > hi)
        return err_setf(x->err, ERR_INPUT, x->file, e->key,
                        "line %d: must be a whole number from %ld to %ld", e->v.line, lo, hi);
    *out = (int)v;
    return ERR_OK;
}

static int want_bool(tt_t *x, const char *const *keys, bool *out, bool *present)
{
    toml_entry_t *e = find_any(x, keys);
    if (present)
        *present = e != NULL;
    if (!e)
        return ERR_OK;
    if (e->v.type != TOML_BOOL)
        return err_setf(x->err, ERR_INPUT, x->file, e->key, "line %d: must be true or false",
                        e->v.line);
    *out = e->v.b;
    return ERR_OK;
}

static int want_str(tt_t *x, const char *const *keys, const char **out)
{
    toml_entry_t *e = find_any(x, keys);
    if (!e)
        return ERR_OK;
    if (e->v.type != TOML_STRING)
        return err_setf(x->err, ERR_INPUT, x->file, e->key, "line %d: must be a string",
                        e->v.line);
    *out = e->v.str;
    return ERR_OK;
}

/* Whether a string array at keys holds one of the words. */
static int array_has(tt_t *x, const char *const *keys, const char *const *words, bool *out)
{
    toml_entry_t *e = find_any(x, keys);
    *out = false;
    if (!e)
        return ERR_OK;
    if (e->v.type != TOML_ARRAY)
        return err_setf(x->err, ERR_INPUT, x->file, e->key, "line %d: must be a list of names",
                        e->v.line);
    for (int i = 0; i < e->v.n_items; i++) {
        const toml_value_t *it = &e->v.items[i];
        if (it->type != TOML_STRING)
            return err_setf(x->err, ERR_INPUT, x->file, e->key,
                            "line %d: must be a list of names", e->v.line);
        for (const char *const *w = words; *w; w++)
            if (strcmp(it->str, *w) == 0)
                *out = true;
    }
    return ERR_OK;
}

/* ------------------------------------------------------------ the model */

/* torchtitan's llama3 "debugmodel": dim 256, 6 layers, 16 heads, FFN from
 * multiple_of 256 (int(8 x 256 / 3) rounded up to 768), a 2048-token test
 * vocabulary, RoPE base 500000 (torchtitan/models/llama3/__init__.py). */
static void debug_model(model_t *m)
{
    memset(m, 0, sizeof *m);
    snprintf(m->name, sizeof m->name, "torchtitan-debugmodel");
    snprintf(m->display, sizeof m->display, "torchtitan llama3 debugmodel");
    snprintf(m->source, sizeof m->source,
             "torchtitan/models/llama3/__init__.py debugmodel: dim 256, 6 layers, 16 heads, "
             "FFN 768, vocab 2048");
    snprintf(m->arch, sizeof m->arch, "llama");
    m->family = MODEL_FAMILY_LLAMA;
    m->norm = MODEL_NORM_RMSNORM;
    m->mlp = MODEL_MLP_SWIGLU;
    m->act = MODEL_ACT_SILU;
    m->pos = MODEL_POS_ROPE;
    m->n_layers = 6;
    m->hidden = 256;
    m->n_heads = m->n_kv_heads = 16;
    m->head_dim = 16;
    m->ffn = 768;
    m->vocab = 2048;
    m->max_seq = 131072;
    m->norm_eps = 1e-5;
    m->rope_theta = 500000;
}

static int model(tt_t *x)
{
    torchtitan_t *t = x->t;
    const char *name = "llama3", *flavor = "debugmodel";
    bool has_name = toml_find(x->doc, "model.name") != NULL;
    bool has_flavor = toml_find(x->doc, "model.flavor") != NULL;
    int rc;
    if ((rc = want_str(x, KEYS("model.name"), &name)) ||
        (rc = want_str(x, KEYS("model.flavor"), &flavor)))
        return rc;
    if (!has_name || !has_flavor)
        notes_add(&t->notes, NOTE_ASSUMED, "model", "%s: torchtitan's default %s %s",
                  !has_name ? "model.name absent" : "model.flavor absent", name, flavor);
    char base[64];
    snprintf(base, sizeof base, "%s", flavor);
    char *suffix = strchr(base, '_');
    if (suffix) {
        notes_add(&t->notes, NOTE_ASSUMED, "model.flavor",
                  "'%s': the %s variant is simulated with the standard attention kernel", flavor,
                  suffix + 1);
        *suffix = '\0';
    }
    if (strcmp(name, "llama3") == 0 && strcmp(base, "debugmodel") == 0) {
        debug_model(&t->model);
        t->have_model = true;
        return ERR_OK;
    }
    char known[256] = "";
    const model_torchtitan_t *f;
    for (size_t i = 0; (f = model_torchtitan(i)); i++) {
        if (strcmp(f->name, name) == 0 && strcmp(f->flavor, base) == 0) {
            snprintf(t->model_name, sizeof t->model_name, "%s", f->catalog);
            return ERR_OK;
        }
        if (strcmp(f->name, name) == 0) {
            size_t n = strlen(known);
            snprintf(known + n, sizeof known - n, "%s%s", n ? ", " : "", f->flavor);
        }
    }
    if (x->model_given) {
        notes_add(&t->notes, NOTE_IGNORED, "model.flavor",
                  "%s %s is not in scaleplan's catalog: --model gives the model", name, flavor);
        return ERR_OK;
    }
    return err_setf(x->err, ERR_INPUT, x->file, "model.flavor",
                    "%s %s is not in scaleplan's catalog (%s%s); give --model NAME or a "
                    "config.json",
                    name, flavor, known[0] ? known : "no flavors of this model",
                    strcmp(name, "llama3") == 0 ? ", debugmodel" : "");
}

/* ------------------------------------------------------------ the layout */

/* What the first and last stages count in place of layers (the embedding,
 * the norm and output head): pipeline_parallel_first/last_stage_less_layers
 * since late 2025, one each before (torchtitan f64cf3c, 2025-04); nothing
 * in the 2024 generation. */
static int stage_weights(tt_t *x, int *in_w, int *out_w)
{
    *in_w = *out_w = x->gen == TT_GEN_2024_12 ? 0 : 1;
    int rc;
    if ((rc = want_int(x, KEYS("parallelism.pipeline_parallel_first_stage_less_layers"), 0,
                       100000, in_w, NULL)) ||
        (rc = want_int(x, KEYS("parallelism.pipeline_parallel_last_stage_less_layers"), 0,
                       100000, out_w, NULL)))
        return rc;
    return ERR_OK;
}

/* Stages per rank from pipeline_parallel_layers_per_stage, as torchtitan
 * derives them: in 2024 the key did not exist (layers / (PP x per stage),
 * kept for files that mix generations); from 2025-04 the embedding and the
 * output count as layers (distributed/pipeline.py generate_split_points at
 * 820504e: an exact fit of layers + 2 onto PP ranks of per-stage stages);
 * from late 2025 the stages are ceil((layers + weights) / per stage),
 * divisible by PP (distributed/pipeline_parallel.py
 * _get_pipeline_metadata). Single-stage schedules need one per rank. */
static int stages_per_rank(tt_t *x, layout_t *l, int n_layers, int per_stage)
{
    const char *key = "parallelism.pipeline_parallel_layers_per_stage";
    int in_w, out_w, rc;
    if ((rc = stage_weights(x, &in_w, &out_w)))
        return rc;
    long eff = (long)n_layers + in_w + out_w, per_rank;
    if (x->gen == TT_GEN_2024_12) {
        if (l->schedule != SCHEDULE_INTERLEAVED)
            return ERR_OK;
        long stages = (long)l->pp * per_stage;
        if (n_layers % stages != 0)
            return err_setf(x->err, ERR_INPUT, x->file, key,
                            "%d layers do not split into PP %d x %d-layer stages", n_layers,
                            l->pp, per_stage);
        l->vpp = (int)(n_layers / stages);
        return ERR_OK;
    }
    if (x->gen == TT_GEN_2025_06) {
        if (eff % l->pp != 0 || (eff / l->pp) % per_stage != 0)
            return err_setf(x->err, ERR_INPUT, x->file, key,
                            "%d layers + the embedding and output (%ld) do not fit PP %d ranks of "
                            "%d-layer stages exactly, as this torchtitan requires",
                            n_layers, eff, l->pp, per_stage);
        per_rank = eff / l->pp / per_stage;
    } else {
        long stages = (eff + per_stage - 1) / per_stage;
        if (stages % l->pp != 0)
            return err_setf(x->err, ERR_INPUT, x->file, key,
                            "%ld stages of %d layers (for %d layers + %d + %d for the first and "
                            "last stages) do not divide by PP %d",
                            stages, per_stage, n_layers, in_w, out_w, l->pp);
        per_rank = stages / l->pp;
    }
    bool looped = l->schedule == SCHEDULE_INTERLEAVED;
    if (looped ? per_rank < 2 : per_rank != 1)
        return err_setf(x->err, ERR_INPUT, x->file, key,
                        "%d gives %ld stages per rank; the %s schedule needs %s", per_stage,
                        per_rank, looped ? "looped" : "single-stage",
                        looped ? "at least 2" : "exactly 1");
    if (looped)
        l->vpp = (int)per_rank;
    return ERR_OK;
}

/* The split points, when given as a non-empty list (an empty list is the
 * default: generate them); not marked as read. */
static const toml_entry_t *split_points_entry(tt_t *x)
{
    const toml_entry_t *e = toml_find(x->doc, "parallelism.pipeline_parallel_split_points");
    if (!e)
        e = toml_find(x->doc, "experimental.pipeline_parallel_split_points");
    return e && e->v.type == TOML_ARRAY && e->v.n_items > 0 ? e : NULL;
}

/* Layers per stage from pipeline_parallel_split_points ("layers.N", where
 * each stage after the first begins). */
static int split_points(tt_t *x, toml_entry_t *e, int n_layers, int V, int *sizes)
{
    if (e->v.type != TOML_ARRAY)
        return err_setf(x->err, ERR_INPUT, x->file, e->key,
                        "line %d: must be a list of \"layers.N\" names", e->v.line);
    if (e->v.n_items != V - 1)
        return err_setf(x->err, ERR_INPUT, x->file, e->key,
                        "line %d: %d split points for %d (virtual) stages; give %d",
                        e->v.line, e->v.n_items, V, V - 1);
    int prev = 0;
    for (int i = 0; i < e->v.n_items; i++) {
        const toml_value_t *it = &e->v.items[i];
        char *end = NULL;
        long at = it->type == TOML_STRING && strncmp(it->str, "layers.", 7) == 0
                      ? strtol(it->str + 7, &end, 10)
                      : -1;
        if (!end || *end || at <= prev || at >= n_layers)
            return err_setf(x->err, ERR_INPUT, x->file, e->key,
                            "line %d: item %d must be \"layers.N\" with N increasing from 1 "
                            "to %d",
                            e->v.line, i + 1, n_layers - 1);
        sizes[i] = (int)at - prev;
        prev = (int)at;
    }
    sizes[V - 1] = n_layers - prev;
    return ERR_OK;
}

/* Layers per stage as torchtitan generates them without split points:
 * its generation's rule (layout_split_rule_t). */
static int generated_split(tt_t *x, int n_layers, int V, int *sizes)
{
    int in_w, out_w, rc;
    if ((rc = stage_weights(x, &in_w, &out_w)))
        return rc;
    layout_split_rule_t rule =
        x->gen == TT_GEN_2024_12 ? LAYOUT_SPLIT_EXTRA_MIDDLE : LAYOUT_SPLIT_WEIGHTED;
    if ((rc = layout_rule_stage_sizes(rule, n_layers, V, in_w, out_w, sizes,
                                      "parallelism.pipeline_parallel_degree", x->err)))
        err_prefix(x->err, x->file);
    return rc;
}

/* The pipeline's stages as torchtitan splits the layers (split points,
 * else its generation's rule), into the layout's uneven split; a note
 * says the split, and where the simulator's equal middle stages
 * approximate it. */
static int stage_split(tt_t *x, layout_t *l, int n_layers)
{
    long stages = (long)l->pp * l->vpp;
    if (stages < 2)
        return ERR_OK;
    /* (what each stage must hold is checked with the weights below) */
    if (stages > (long)n_layers + 200000)
        return err_setf(x->err, ERR_INPUT, x->file, "parallelism.pipeline_parallel_degree",
                        "%ld (virtual) stages for %d layers", stages, n_layers);
    int V = (int)stages;
    toml_entry_t *pts = find_any(x, KEYS("parallelism.pipeline_parallel_split_points",
                                         "experimental.pipeline_parallel_split_points"));
    if (pts && pts->v.type == TOML_ARRAY && pts->v.n_items == 0)
        pts = NULL; /* the default: generate them */
    int *sizes = calloc((size_t)V, sizeof *sizes);
    if (!sizes)
        return err_set(x->err, ERR_RUNTIME, "out of memory splitting the pipeline stages");
    int rc = pts ? split_points(x, pts, n_layers, V, sizes) : generated_split(x, n_layers, V, sizes);
    bool approx = false;
    const char *what = pts ? pts->key : "parallelism.pipeline_parallel_degree";
    if (!rc && (rc = layout_set_stage_sizes(l, sizes, V, n_layers, what, &approx, x->err)))
        err_prefix(x->err, x->file);
    if (!rc && (l->first_stage_layers || l->last_stage_layers)) {
        char list[160];
        layout_format_stage_sizes(sizes, V, list, sizeof list);
        int first = layout_split_layers(l->first_stage_layers);
        int last = layout_split_layers(l->last_stage_layers);
        int middle = V > 2 ? (n_layers - first - last) / (V - 2) : 0;
        if (approx)
            notes_add(&x->t->notes, NOTE_ASSUMED, what,
                      "torchtitan places %s layers on the %d stages; simulated as %d, %d x %d, "
                      "%d (equal middle stages: the largest stage and the total kept)",
                      list, V, first, V - 2, middle, last);
        else
            notes_add(&x->t->notes, NOTE_ASSUMED, what,
                      "torchtitan places %s layers on the %d stages", list, V);
    }
    free(sizes);
    return rc;
}

static int schedule(tt_t *x, layout_t *l, int n_layers)
{
    const char *sched = "1F1B";
    int rc;
    if ((rc = want_str(x,
                       KEYS("parallelism.pipeline_parallel_schedule",
                            "experimental.pipeline_parallel_schedule"),
                       &sched)))
        return rc;
    int per_stage = 0;
    bool has_per_stage;
    if ((rc = want_int(x, KEYS("parallelism.pipeline_parallel_layers_per_stage"), 1, 100000,
                       &per_stage, &has_per_stage)))
        return rc;
    if (l->pp <= 1)
        return ERR_OK;
    static const char *const looped[] = {"Interleaved1F1B", "LoopedBFS", "InterleavedZeroBubble",
                                         "ZBVZeroBubble"};
    if (strcmp(sched, "1F1B") == 0) {
        l->schedule = SCHEDULE_1F1B;
    } else if (strcmp(sched, "GPipe") == 0) {
        l->schedule = SCHEDULE_GPIPE;
    } else if (strcmp(sched, "DualPipeV") == 0) {
        /* two stages per rank in a V (torchtitan 803906b8f, PyTorch's
         * ScheduleDualPipeV) */
        l->schedule = SCHEDULE_DUALPIPEV;
        l->vpp = 2;
        if (has_per_stage && n_layers > 0 && (long)l->pp * 2 * per_stage != n_layers)
            return err_setf(x->err, ERR_INPUT, x->file,
                            "parallelism.pipeline_parallel_layers_per_stage",
                            "DualPipeV holds two stages per rank: %d layers on PP %d need %g "
                            "layers per stage, not %d",
                            n_layers, l->pp, (double)n_layers / (2.0 * l->pp), per_stage);
    } else {
        bool is_looped = false;
        for (size_t i = 0; i < sizeof looped / sizeof looped[0]; i++)
            is_looped = is_looped || strcmp(sched, looped[i]) == 0;
        if (!is_looped)
            return err_setf(x->err, ERR_INPUT, x->file, "parallelism.pipeline_parallel_schedule",
                            "'%s' is not a schedule scaleplan knows (1F1B, GPipe, "
                            "Interleaved1F1B, LoopedBFS, InterleavedZeroBubble, ZBVZeroBubble, "
                            "DualPipeV)",
                            sched);
        l->schedule = SCHEDULE_INTERLEAVED;
        if (strcmp(sched, "Interleaved1F1B") != 0)
            notes_add(&x->t->notes, NOTE_ASSUMED, "parallelism.pipeline_parallel_schedule",
                      "%s is simulated as interleaved 1F1B (the same stages per rank)", sched);
        const toml_entry_t *pts = split_points_entry(x);
        if (!has_per_stage && pts) {
            /* the split points say how many stages there are */
            int stages = pts->v.n_items + 1;
            if (stages % l->pp != 0 || stages / l->pp < 2)
                return err_setf(x->err, ERR_INPUT, x->file, pts->key,
                                "line %d: %d stages (from %d split points) are not 2 or more "
                                "per rank on PP %d",
                                pts->v.line, stages, pts->v.n_items, l->pp);
            l->vpp = stages / l->pp;
        } else if (!has_per_stage) {
            l->vpp = 2;
            notes_add(&x->t->notes, NOTE_ASSUMED, "parallelism.pipeline_parallel_layers_per_stage",
                      "absent: 2 stages per rank for the looped schedule");
        }
    }
    if (has_per_stage && n_layers > 0 && l->schedule != SCHEDULE_DUALPIPEV &&
        (rc = stages_per_rank(x, l, n_layers, per_stage)))
        return rc;
    return n_layers > 0 ? stage_split(x, l, n_layers) : ERR_OK;
}

/* The batch: local_batch_size per rank (batch_size before 2025-06),
 * global_batch_size for accumulation over dp data-parallel ranks; with PP
 * micro-batches of pipeline_parallel_microbatch_size (or, before it, the
 * local batch split per stage); the sequence length. Into l. */
static int batch_sizes(tt_t *x, layout_t *l, int pp, int dp)
{
    torchtitan_t *t = x->t;
    const long big = 1 << 24;
    int rc;
    int local = 8, global = -1, pp_mbs = 1, pp_n = 0;
    bool has_local, has_mbs;
    if ((rc = want_int(x, KEYS("training.local_batch_size", "training.batch_size"), 1, big, &local,
                       &has_local)) ||
        (rc = want_int(x, KEYS("training.global_batch_size"), -1, 1L << 30, &global, NULL)) ||
        (rc = want_int(x, KEYS("parallelism.pipeline_parallel_microbatch_size"), 1, big, &pp_mbs,
                       &has_mbs)) ||
        (rc = want_int(x, KEYS("experimental.pipeline_parallel_microbatches"), 1, big, &pp_n,
                       NULL)) ||
        (rc = want_int(x, KEYS("training.seq_len"), 1, 100000000L, &l->seq_len, NULL)))
        return rc;
    if (!has_local)
        notes_add(&t->notes, NOTE_ASSUMED, "training.local_batch_size",
                  "absent: torchtitan's default 8");
    if (!toml_find(x->doc, "training.seq_len"))
        l->seq_len = 2048; /* JobConfig default */
    /* Before pipeline_parallel_microbatch_size (2025), torchtitan split the
     * local batch into experimental.pipeline_parallel_microbatches
     * micro-batches, by default one per stage (torchtitan 9dec370
     * parallelisms/pipeline_llama.py: "pipeline_parallel_microbatches or
     * parallel_dims.pp"); the 2024 keys ([training] batch_size) mean that
     * generation. */
    if (pp > 1 && !has_mbs && (pp_n > 0 || toml_find(x->doc, "training.batch_size"))) {
        int n = pp_n > 0 ? pp_n : pp;
        if (local % n != 0)
            return err_setf(x->err, ERR_INPUT, x->file,
                            pp_n > 0 ? "experimental.pipeline_parallel_microbatches"
                                     : "training.batch_size",
                            "the local batch %d must split into %d pipeline micro-batches%s", local,
                            n, pp_n > 0 ? "" : " (one per stage, this generation's default)");
        pp_mbs = local / n;
    }
    if (pp > 1) {
        if (local % pp_mbs != 0)
            return err_setf(x->err, ERR_INPUT, x->file,
                            "parallelism.pipeline_parallel_microbatch_size",
                            "%d must divide local_batch_size %d", pp_mbs, local);
        l->micro_batch = pp_mbs;
    } else {
        l->micro_batch = local;
    }
    long gb = global > 0 ? global : (long)local * dp;
    if (gb > (1L << 30))
        return err_setf(x->err, ERR_INPUT, x->file, "training.global_batch_size", "too large");
    l->global_batch = (int)gb;
    if (global > 0 && global % ((long)local * dp) != 0)
        return err_setf(x->err, ERR_INPUT, x->file, "training.global_batch_size",
                        "%d must be a multiple of local_batch_size x data-parallel ranks = %ld",
                        global, (long)local * dp);
    return ERR_OK;
}

static int layout(tt_t *x, int n_gpus, int n_layers)
{
    torchtitan_t *t = x->t;
    layout_t *l = &t->layout;
    int rc;
    const long big = 1 << 24;
    int rep = 1, shard = -1, tp = 1, pp = 1, cp = 1, ep = 1, etp = 1;
    bool has_shard, has_etp, has_old_dp;
    int old_dp = -1;
    if ((rc = want_int(x,
                       KEYS("parallelism.data_parallel_replicate_degree",
                            "training.data_parallel_replicate_degree"),
                       1, big, &rep, NULL)) ||
        (rc = want_int(x,
                       KEYS("parallelism.data_parallel_shard_degree",
                            "training.data_parallel_shard_degree"),
                       -1, big, &shard, &has_shard)) ||
        (rc = want_int(x, KEYS("training.data_parallel_degree"), -1, big, &old_dp, &has_old_dp)) ||
        (rc = want_int(x, KEYS("parallelism.tensor_parallel_degree", "training.tensor_parallel_degree"),
                       1, big, &tp, NULL)) ||
        (rc = want_int(x,
                       KEYS("parallelism.pipeline_parallel_degree",
                            "experimental.pipeline_parallel_degree",
                            "training.pipeline_parallel_degree"),
                       1, big, &pp, NULL)) ||
        (rc = want_int(x,
                       KEYS("parallelism.context_parallel_degree",
                            "experimental.context_parallel_degree"),
                       1, big, &cp, NULL)) ||
        (rc = want_int(x, KEYS("parallelism.expert_parallel_degree"), 1, big, &ep, NULL)) ||
        (rc = want_int(x, KEYS("parallelism.expert_tensor_parallel_degree"), 1, big, &etp,
                       &has_etp)))
        return rc;
    if (!has_shard && has_old_dp)
        shard = old_dp; /* before HSDP (2024-09) one data_parallel_degree, FSDP */
    if (shard == 0)
        return err_setf(x->err, ERR_INPUT, x->file, "parallelism.data_parallel_shard_degree",
                        "must be -1 (the remaining GPUs) or a positive degree");
    long others = (long)rep * tp * pp * cp;
    if (shard == -1) {
        if (!n_gpus) /* the example gives each expert group a data-parallel home */
            return err_setf(x->err, ERR_INPUT, x->file, "parallelism.data_parallel_shard_degree",
                            "-1 takes the GPUs the other degrees leave; give --gpus N, a "
                            "multiple of replicate x TP x PP x CP = %ld (e.g. --gpus %ld)",
                            others, others * (ep > 8 ? ep : 8));
        if (n_gpus % others != 0)
            return err_setf(x->err, ERR_INPUT, x->file, "parallelism",
                            "--gpus %d is not a multiple of replicate x TP x PP x CP = %ld",
                            n_gpus, others);
        shard = (int)(n_gpus / others);
        notes_add(&t->notes, NOTE_ASSUMED, "parallelism.data_parallel_shard_degree",
                  "-1: %d, the GPUs the other degrees leave of %d", shard, n_gpus);
    }
    long world = others * shard;
    if (n_gpus && world != n_gpus)
        return err_setf(x->err, ERR_INPUT, x->file, "parallelism",
                        "the degrees multiply to %ld GPUs but --gpus is %d (torchtitan refuses "
                        "a mismatch)",
                        world, n_gpus);
    t->world_size = world <= big ? (int)world : 0;
    l->tp = tp;
    l->pp = pp;
    l->cp = cp;
    l->ep = ep;
    if (has_etp)
        l->etp = etp;
    l->sequence_parallel = tp > 1; /* torchtitan's TP plan shards the norms along the sequence */
    /* ... through DTensor: the GEMMs' gathered inputs are saved whole */
    l->sp_saves_gathered = tp > 1;
    /* FSDP shards over data_parallel_shard x context_parallel ranks: it is
     * applied when either is above 1 (torchtitan parallelize_llama.py:
     * dp_shard_enabled or cp_enabled, mesh "dp_shard_cp") */
    if (shard > 1 || cp > 1) {
        /* fsdp_reshard_after_forward (torchtitan 2025 on): "never" keeps
         * the parameters gathered from the forward to the backward,
         * ZeRO-2; "default" reshards unless the model is pipelined (where
         * the simulator keeps the stage gathered at either stage),
         * "always" reshards */
        const char *reshard = "default";
        if ((rc = want_str(x, KEYS("parallelism.fsdp_reshard_after_forward"), &reshard)))
            return rc;
        if (strcmp(reshard, "default") && strcmp(reshard, "always") && strcmp(reshard, "never"))
            return err_setf(x->err, ERR_INPUT, x->file, "parallelism.fsdp_reshard_after_forward",
                            "must be \"default\", \"always\" or \"never\" (got \"%s\")",
                            reshard);
        l->zero = strcmp(reshard, "never") == 0 ? 2 : 3;
        if (rep > 1)
            notes_add(&t->notes, NOTE_ASSUMED, "parallelism.data_parallel_replicate_degree",
                      "HSDP (replicate %d x shard %d): simulated with the state sharded over "
                      "all %d data-parallel ranks",
                      rep, shard, rep * shard);
    }
    int dp = rep * shard;
    if ((rc = batch_sizes(x, l, pp, dp)))
        return rc;
    return schedule(x, l, n_layers);
}

static int recompute(tt_t *x)
{
    layout_t *l = &x->t->layout;
    const char *mode = "selective", *option = "2";
    bool has_mode = toml_find(x->doc, "activation_checkpoint.mode") != NULL;
    int rc;
    toml_entry_t *opt = toml_find(x->doc, "activation_checkpoint.selective_ac_option");
    if ((rc = want_str(x, KEYS("activation_checkpoint.mode"), &mode)))
        return rc;
    if (opt) {
        opt->used = true;
        if (opt->v.type == TOML_STRING)
            option = opt->v.str;
    }
    if (!has_mode)
        notes_add(&x->t->notes, NOTE_ASSUMED, "activation_checkpoint.mode",
                  "absent: torchtitan's default selective (every 2nd block)");
    if (strcmp(mode, "none") == 0) {
        l->recompute = RECOMPUTE_NONE;
    } else if (strcmp(mode, "full") == 0) {
        l->recompute = RECOMPUTE_FULL;
    } else if (strcmp(mode, "selective") == 0) {
        if (strcmp(option, "op") == 0) {
            l->recompute = RECOMPUTE_OPS; /* torchtitan's op-level policy */
        } else {
            l->recompute = RECOMPUTE_FULL;
            notes_add(&x->t->notes, NOTE_ASSUMED, "activation_checkpoint.selective_ac_option",
                      "'%s' (every N-th block checkpointed) is simulated as full recompute of "
                      "every block",
                      option);
        }
    } else if (strcmp(mode, "memory_budget") == 0) {
        l->recompute = RECOMPUTE_SELECTIVE;
        notes_add(&x->t->notes, NOTE_ASSUMED, "activation_checkpoint.mode",
                  "memory_budget is simulated as selective recompute of the attention core");
    } else {
        return err_setf(x->err, ERR_INPUT, x->file, "activation_checkpoint.mode",
                        "'%s' is not none, selective, full or memory_budget", mode);
    }
    return ERR_OK;
}

static int precision(tt_t *x)
{
    torchtitan_t *t = x->t;
    layout_t *l = &t->layout;
    int rc;
    bool float8 = false, mx = false, old_fp8 = false, has;
    if ((rc = array_has(x, KEYS("model.converters"),
                        KEYS("float8", "quantize.linear.float8", "quantize.grouped_mm.float8"),
                        &float8)) ||
        (rc = array_has(x, KEYS("model.converters"),
                        KEYS("mx", "quantize.linear.mx", "quantize.grouped_mm.mx"), &mx)) ||
        (rc = want_bool(x, KEYS("float8.enable_float8_linear"), &old_fp8, &has)))
        return rc;
    toml_entry_t *e = toml_find(x->doc, "training.fp8_linear");
    if (e) {
        e->used = true;
        old_fp8 = old_fp8 || (e->v.type == TOML_STRING && e->v.str[0]) ||
                  (e->v.type == TOML_BOOL && e->v.b);
    }
    const char *param = "bfloat16", *reduce = "float32", *dtype = "float32";
    if ((rc = want_str(x, KEYS("training.mixed_precision_param"), &param)) ||
        (rc = want_str(x, KEYS("training.mixed_precision_reduce"), &reduce)) ||
        (rc = want_str(x, KEYS("training.dtype"), &dtype)))
        return rc;
    const char *recipe = NULL;
    if ((rc = want_str(x, KEYS("quantize.linear.float8.recipe_name", "float8.recipe_name"),
                       &recipe)))
        return rc;
    if (float8 || old_fp8) {
        bool gather = false;
        if ((rc = want_bool(x,
                            KEYS("quantize.linear.float8.enable_fsdp_float8_all_gather",
                                 "float8.enable_fsdp_float8_all_gather"),
                            &gather, NULL)))
            return rc;
        t->fp8_all_gather = gather;
    }
    if (mx) {
        l->precision = PRECISION_MXFP8;
    } else if (float8 || old_fp8) {
        /* torchao's default (recipe_name unset) is tensorwise dynamic
         * scaling: the plain fp8 the torchtitan preset names. */
        l->precision = PRECISION_FP8;
        if (recipe && strncmp(recipe, "rowwise", 7) == 0)
            l->precision = PRECISION_FP8_ROWWISE;
        else if (recipe && strcmp(recipe, "tensorwise") != 0)
            notes_add(&t->notes, NOTE_ASSUMED, "quantize.linear.float8.recipe_name",
                      "'%s' priced as the preset's fp8 recipe", recipe);
        if (recipe && strcmp(recipe, "rowwise_with_gw_hp") == 0)
            notes_add(&t->notes, NOTE_ASSUMED, "quantize.linear.float8.recipe_name",
                      "rowwise_with_gw_hp: the weight-gradient GEMM in bf16 is priced as fp8");
    } else if (strcmp(param, "float32") == 0 && strcmp(dtype, "float32") == 0) {
        l->precision = PRECISION_FP32;
    } else {
        l->precision = PRECISION_BF16;
    }
    if (strcmp(dtype, "bfloat16") == 0)
        notes_add(&t->notes, NOTE_ASSUMED, "training.dtype",
                  "bfloat16 (pure bf16 training, no fp32 master weights): memory is counted "
                  "with fp32 optimizer state");
    /* FSDP2 reduces gradients in mixed_precision_reduce (fp32 by default):
     * the reduce-scatter's bytes; the gradients it leaves are sharded in
     * the fp32 parameters' dtype whatever it is (the presets' accounting:
     * 2 + 2 + 12 bytes a parameter = fp32 parameter, gradient and moments) */
    t->reduce_bytes = strcmp(reduce, "bfloat16") == 0 ? 2 : 4;
    return ERR_OK;
}

static int options(tt_t *x)
{
    torchtitan_t *t = x->t;
    int rc;
    bool async_tp = false, offload = false, compile = false;
    if ((rc = want_bool(x,
                        KEYS("parallelism.enable_async_tensor_parallel",
                             "experimental.enable_async_tensor_parallel"),
                        &async_tp, NULL)) ||
        (rc = want_bool(x, KEYS("training.enable_cpu_offload"), &offload, NULL)) ||
        (rc = want_bool(x, KEYS("compile.enable", "training.compile"), &compile, NULL)))
        return rc;
    /* compile.components (late 2025, default model and loss): the model's
     * elementwise kernels are fused only when "model" is among them, the
     * loss compiled only when "loss" is (before the list, training.compile
     * compiled both where the preset's compile covers the loss) */
    bool has_model = true, has_loss = true;
    const toml_entry_t *comp = toml_find(x->doc, "compile.components");
    if (comp && ((rc = array_has(x, KEYS("compile.components"), KEYS("model"), &has_model)) ||
                 (rc = array_has(x, KEYS("compile.components"), KEYS("loss"), &has_loss))))
        return rc;
    bool loss = compile && has_loss;
    if (compile && !has_model) {
        compile = false;
        notes_add(&t->notes, NOTE_ASSUMED, "compile.components",
                  "without \"model\": the model runs eager (unfused elementwise kernels)");
    }
    if (async_tp && t->layout.tp > 1 && !compile)
        return err_setf(x->err, ERR_INPUT, x->file, "parallelism.enable_async_tensor_parallel",
                        "async TP needs the model compiled (compile.enable with \"model\" in "
                        "compile.components); torchtitan refuses it otherwise");
    if (async_tp && t->layout.tp > 1)
        t->opt.tp_comm_overlap = true;
    t->async_tp = async_tp && t->layout.tp > 1;
    t->compiled = compile;
    t->compiled_loss = loss;
    if (compile)
        sim_options_compiled_model(&t->opt);
    t->opt.fp8_param_gather = t->fp8_all_gather;
    if (offload) {
        /* FSDP2 CPUOffloadPolicy: parameters, gradients and the optimizer step on the host. */
        t->layout.offload |= LAYOUT_OFFLOAD_OPTIMIZER;
        if (t->layout.zero >= 3)
            t->layout.offload |= LAYOUT_OFFLOAD_PARAMS;
    }
    return ERR_OK;
}

/* Sections and keys that do not change speed or memory ('N') or are
 * accepted without being modeled ('M'). Sections are matched by prefix. */
static const struct {
    const char *prefix;
    char kind;
} OTHER[] = {
    {"job.", 'N'},          {"profiling.", 'N'},       {"metrics.", 'N'},
    {"optimizer.early_step_in_backward", 'M'},        {"optimizer.", 'N'},
    {"lr_scheduler.", 'N'}, {"checkpoint.", 'N'},      {"validation.", 'N'},
    {"comm.", 'N'},         {"fault_tolerance.", 'N'}, {"memory_estimation.", 'N'},
    {"debug.", 'N'},        {"experimental.", 'M'},    {"float8.", 'M'},
    {"quantize.", 'M'},     {"mx.", 'M'},              {"compile.", 'N'},
    {"activation_checkpoint.", 'M'},                  {"model.", 'N'},
    {"parallelism.", 'M'},  {"training.steps", 'N'},   {"training.max_norm", 'N'},
    {"training.dataset", 'N'}, {"training.warmup_steps", 'N'}, {"training.seed", 'N'},
    {"training.deterministic", 'N'}, {"training.gc_freq", 'M'}, {"training.", 'M'},
};

static void other_notes(tt_t *x)
{
    bool fp8 = x->t->layout.precision == PRECISION_FP8;
    char said[64][48];
    int n_said = 0;
    for (size_t i = 0; i < x->doc->n; i++) {
        toml_entry_t *e = &x->doc->entries[i];
        if (e->used)
            continue;
        char kind = 0;
        const char *prefix = NULL;
        for (size_t k = 0; k < sizeof OTHER / sizeof OTHER[0] && !kind; k++)
            if (strncmp(e->key, OTHER[k].prefix, strlen(OTHER[k].prefix)) == 0) {
                kind = OTHER[k].kind;
                prefix = OTHER[k].prefix;
            }
        bool quant = strncmp(e->key, "quantize.", 9) == 0 || strncmp(e->key, "float8.", 7) == 0 ||
                     strncmp(e->key, "mx.", 3) == 0;
        if (quant && !fp8) {
            kind = 'N'; /* settings of a converter model.converters does not enable */
            prefix = "quantize.";
        }
        if (kind == 'M') {
            notes_add(&x->t->notes, NOTE_IGNORED, e->key, "accepted; its effect is not modeled");
            continue;
        }
        if (kind == 'N') {
            /* One note per section of settings without effect. */
            char section[48];
            snprintf(section, sizeof section, "%.*s", (int)strcspn(e->key, "."), e->key);
            bool dup = false;
            for (int s = 0; s < n_said; s++)
                dup = dup || strcmp(said[s], section) == 0;
            if (dup)
                continue;
            if (n_said < 64)
                snprintf(said[n_said++], sizeof said[0], "%s", section);
            if (quant)
                notes_add(&x->t->notes, NOTE_IGNORED, section,
                          "[%s...]: no effect (no Float8/MX converter in model.converters)",
                          section);
            else if (prefix[strlen(prefix) - 1] == '.')
                notes_add(&x->t->notes, NOTE_IGNORED, section,
                          "[%s]: no effect on speed or memory", section);
            else
                notes_add(&x->t->notes, NOTE_IGNORED, e->key, "no effect on speed or memory");
            continue;
        }
        notes_add(&x->t->notes, NOTE_IGNORED, e->key, "not a torchtitan job-config key");
    }
}

/* The generation whose keys the file uses: [training] batch_size until
 * June 2025, local_batch_size after; expert parallelism, DualPipeV, the
 * first/last_stage_less_layers weights and the [compile] section (compile
 * had been a [training] key) came after June 2025 (torchtitan job_config.py
 * at c08fa570a, not at 820504e). */
static tt_gen_t file_generation(toml_doc_t *doc)
{
    if (toml_find(doc, "training.batch_size"))
        return TT_GEN_2024_12;
    const toml_entry_t *sched = toml_find(doc, "parallelism.pipeline_parallel_schedule");
    if (toml_find(doc, "parallelism.expert_parallel_degree") || toml_find(doc, "compile.enable") ||
        toml_find(doc, "compile.components") ||
        toml_find(doc, "parallelism.pipeline_parallel_first_stage_less_layers") ||
        toml_find(doc, "parallelism.pipeline_parallel_last_stage_less_layers") ||
        (sched && sched->v.type == TOML_STRING && strcmp(sched->v.str, "DualPipeV") == 0))
        return TT_GEN_2025_12;
    return TT_GEN_2025_06;
}

/* doc (freed here) into t; a registry (python) is of the newest generation. */
static int read_doc(toml_doc_t *doc, const char *file, int n_gpus, bool model_given, bool python,
                    torchtitan_t *t, err_t *err)
{
    int rc;
    tt_t x = {doc, t, file, err, python ? TT_GEN_2025_12 : file_generation(doc), model_given};
    if ((rc = model(&x)))
        goto out;
    /* Layers, for the stages of looped schedules: the debug model's, or
     * the catalog model's looked up by the caller later (0 here). */
    int layers = t->have_model ? t->model.n_layers : 0;
    if (!t->have_model && t->model_name[0]) {
        model_t m;
        err_t ignore;
        if (model_load(t->model_name, &m, &ignore) == 0)
            layers = m.n_layers;
    }
    if ((rc = layout(&x, n_gpus, layers)) || (rc = recompute(&x)) || (rc = precision(&x)) ||
        (rc = options(&x)))
        goto out;
    other_notes(&x);
    static const char *const presets[] = {"torchtitan-2024-12", "torchtitan-2025-06",
                                          "torchtitan-2025-12"};
    snprintf(t->framework, sizeof t->framework, "%s", presets[x.gen]);
    if (t->notes.oom)
        rc = err_set(err, ERR_RUNTIME, "out of memory listing the torchtitan notes");
out:
    toml_free(doc);
    return rc;
}

static int read_text(const char *text, size_t len, const char *file, int n_gpus,
                     bool model_given, torchtitan_t *t, err_t *err)
{
    memset(t, 0, sizeof *t);
    layout_defaults(&t->layout);
    sim_options_default(&t->opt);
    toml_doc_t doc;
    int rc = toml_parse(text, len, file, &doc, err);
    return rc ? rc : read_doc(&doc, file, n_gpus, model_given, false, t, err);
}

int torchtitan_read_registry(const char *text, size_t len, const char *file,
                             const char *function, int n_gpus, bool model_given, torchtitan_t *t,
                             err_t *err)
{
    memset(t, 0, sizeof *t);
    layout_defaults(&t->layout);
    sim_options_default(&t->opt);
    toml_doc_t doc;
    int rc = pyregistry_read(text, len, file, function, &doc, &t->notes, err);
    return rc ? rc : read_doc(&doc, file, n_gpus, model_given, true, t, err);
}

int torchtitan_read(const char *text, size_t len, const char *file, int n_gpus, torchtitan_t *t,
                    err_t *err)
{
    return read_text(text, len, file, n_gpus, false, t, err);
}

int torchtitan_read_file(const char *path, int n_gpus, torchtitan_t *t, err_t *err)
{
    return torchtitan_read_file_as(path, NULL, n_gpus, false, t, err);
}

int torchtitan_read_file_as(const char *path, const char *function, int n_gpus,
                            bool model_given, torchtitan_t *t, err_t *err)
{
    char *data = NULL;
    size_t len = 0;
    memset(t, 0, sizeof *t);
    int rc = fileio_read_all(path, &data, &len, err);
    if (rc)
        return rc;
    size_t n = strlen(path);
    if (n > 3 && strcmp(path + n - 3, ".py") == 0)
        rc = torchtitan_read_registry(data, len, path, function, n_gpus, model_given, t, err);
    else
        rc = read_text(data, len, path, n_gpus, model_given, t, err);
    free(data);
    return rc;
}

void torchtitan_free(torchtitan_t *t)
{
    if (t)
        notes_free(&t->notes);
}

void torchtitan_options(const torchtitan_t *t, sim_options_t *o)
{
    if (t->async_tp)
        o->tp_comm_overlap = true;
    if (t->compiled)
        sim_options_compiled_model(o);
    if (t->compiled_loss)
        sim_options_compiled_loss(o);
    o->fp8_param_gather = t->fp8_all_gather;
    if (t->reduce_bytes)
        o->reduce_bytes = t->reduce_bytes;
}
