/* bridge: Megatron-Bridge recipe overrides and launch commands read into a
 * layout (sim --bridge-overrides); reports/launch writes them. */
#include "inputs/bridge.h"

#include <ctype.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int to_int(const char *v, const char *origin, int line, const char *key, int *out,
                  err_t *err)
{
    char *end;
    long x = strtol(v, &end, 10);
    if (end == v || *end || x < 0 || x > (1L << 30))
        return err_setf(err, ERR_INPUT, origin, NULL, "line %d: %s: not a whole number ('%s')",
                        line, key, v);
    *out = (int)x;
    return ERR_OK;
}

static int to_bool(const char *v, const char *origin, int line, const char *key, bool *out,
                   err_t *err)
{
    if (strcmp(v, "true") == 0 || strcmp(v, "True") == 0)
        *out = true;
    else if (strcmp(v, "false") == 0 || strcmp(v, "False") == 0)
        *out = false;
    else
        return err_setf(err, ERR_INPUT, origin, NULL, "line %d: %s: use true or false ('%s')",
                        line, key, v);
    return ERR_OK;
}

/* One word of a Bridge launch command or override list: shell-like
 * splitting at blanks, '\\' + newline continuing the line, '#' comments,
 * quotes removed. Returns false at the end of the text. */
typedef struct {
    const char *s;
    size_t pos;
    int line;
} words_in_t;

static bool next_word(words_in_t *in, char *out, size_t cap, int *line)
{
    const char *s = in->s;
    for (;;) {
        while (s[in->pos] == ' ' || s[in->pos] == '\t' || s[in->pos] == '\r' ||
               s[in->pos] == '\n' || (s[in->pos] == '\\' && s[in->pos + 1] == '\n')) {
            if (s[in->pos] == '\\')
                in->pos++;
            if (s[in->pos] == '\n')
                in->line++;
            in->pos++;
        }
        if (s[in->pos] != '#')
            break;
        while (s[in->pos] && s[in->pos] != '\n')
            in->pos++;
    }
    if (!s[in->pos])
        return false;
    *line = in->line;
    size_t n = 0;
    char quote = 0;
    while (s[in->pos] && (quote || !strchr(" \t\r\n", s[in->pos]))) {
        char c = s[in->pos++];
        if (!quote && (c == '\'' || c == '"')) {
            quote = c;
            continue;
        }
        if (quote && c == quote) {
            quote = 0;
            continue;
        }
        if (c == '\n')
            in->line++;
        if (n + 1 < cap)
            out[n++] = c;
    }
    out[n] = '\0';
    return true;
}

/* Whether word is KEY=VALUE with a dotted config key (model.x, train.y)
 * or the mixed_precision recipe. */
static bool override_word(const char *w)
{
    const char *eq = strchr(w, '=');
    if (!eq || eq == w)
        return false;
    if ((size_t)(eq - w) == strlen("mixed_precision") && strncmp(w, "mixed_precision", 15) == 0)
        return true;
    bool dot = false;
    for (const char *p = w; p < eq; p++) {
        if (*p == '.')
            dot = true;
        else if (!(isalnum((unsigned char)*p) || *p == '_'))
            return false;
    }
    return dot;
}

static int perf_flag(const char *w);
static bool perf_value(const char *text, int f, char *out, size_t cap);

int bridge_recipe(const char *text, char *recipe, size_t cap)
{
    words_in_t in = {text, 0, 1};
    char w[512];
    int line;
    bool next = false;
    recipe[0] = '\0';
    while (next_word(&in, w, sizeof w, &line)) {
        if (next) {
            snprintf(recipe, cap, "%s", w);
            next = false;
        } else if (strcmp(w, "--recipe") == 0) {
            next = true;
        } else if (strncmp(w, "--recipe=", 9) == 0) {
            snprintf(recipe, cap, "%s", w + 9);
        } else if (strcmp(w, "-mr") == 0 || strcmp(w, "--model_recipe_name") == 0) {
            /* the performance launcher names the model part alone
             * (llama31_405b): as a pretraining recipe */
            if (next_word(&in, w, sizeof w, &line))
                snprintf(recipe, cap, "%s_pretrain", w);
        }
    }
    if (!recipe[0]) {
        /* the launcher of Bridge v0.2: -m MODEL -s SIZE (llama3 70b) */
        char m[128], sz[128];
        int fm = perf_flag("--model_name"), fs = perf_flag("-s"), ff = perf_flag("-m");
        if (perf_value(text, fs, sz, sizeof sz) &&
            (perf_value(text, fm, m, sizeof m) || perf_value(text, ff, m, sizeof m)))
            snprintf(recipe, cap, "%s_%s_pretrain", m, sz);
    }
    return recipe[0] ? 1 : 0;
}

int bridge_recipe_parts(const char *recipe, bridge_recipe_t *out)
{
    memset(out, 0, sizeof *out);
    out->precision = -1;
    /* <model>_<pretrain|sft|peft|finetune>_<N>gpu_<gpu>_<precision>[_...]_config */
    static const char *const kinds[] = {"_pretrain", "_sft", "_peft", "_finetune"};
    const char *cut = NULL;
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++) {
        const char *at = strstr(recipe, kinds[i]);
        if (at && (!cut || at < cut))
            cut = at;
    }
    if (!cut || cut == recipe)
        return 0;
    /* the model: its words joined by '-', Bridge's llama31 / llama32 /
     * qwen25 / 1p5b spellings as the catalog writes them */
    char name[sizeof out->model] = "";
    size_t n = 0;
    if ((size_t)(cut - recipe) >= sizeof name)
        return 0; /* longer than any catalog name: not a model part scaleplan knows */
    for (const char *p = recipe; p < cut; p++) {
        if (*p == '_')
            name[n++] = '-';
        else if (*p == 'p' && p > recipe && isdigit((unsigned char)p[-1]) && p + 1 < cut &&
                 isdigit((unsigned char)p[1]))
            name[n++] = '.';
        else
            name[n++] = *p;
    }
    name[n] = '\0';
    static const struct {
        const char *bridge, *catalog;
    } FAMILY[] = {{"llama31-", "llama3.1-"}, {"llama32-", "llama3.2-"}, {"llama33-", "llama3.3-"},
                  {"qwen25-", "qwen2.5-"},   {"qwen35-", "qwen3.5-"}};
    for (size_t i = 0; i < sizeof FAMILY / sizeof FAMILY[0]; i++) {
        size_t k = strlen(FAMILY[i].bridge);
        if (strncmp(name, FAMILY[i].bridge, k) == 0) {
            char rest[sizeof name];
            snprintf(rest, sizeof rest, "%s", name + k);
            int w = snprintf(name, sizeof name, "%s%s", FAMILY[i].catalog, rest);
            if (w < 0 || (size_t)w >= sizeof name)
                return 0; /* as above: no catalog name is that long */
            break;
        }
    }
    snprintf(out->model, sizeof out->model, "%s", name);
    /* _<N>gpu_<gpu>_<precision> */
    const char *p = strchr(cut + 1, '_');
    char gpu[16] = "";
    int gpus = 0;
    if (p && sscanf(p, "_%dgpu_%15[a-z0-9]", &gpus, gpu) == 2 && gpus > 0) {
        out->gpus = gpus;
        static const struct {
            const char *bridge, *catalog;
        } GPUS[] = {{"h100", "h100-sxm"}, {"h200", "h200"},   {"b200", "b200"}, {"b300", "b300"},
                    {"gb200", "gb200"},   {"gb300", "gb300"}, {"a100", "a100-80g"}};
        for (size_t i = 0; i < sizeof GPUS / sizeof GPUS[0]; i++)
            if (strcmp(gpu, GPUS[i].bridge) == 0)
                snprintf(out->gpu, sizeof out->gpu, "%s", GPUS[i].catalog);
        const char *q = strstr(p, gpu) + strlen(gpu);
        static const struct {
            const char *word;
            precision_t precision;
        } PREC[] = {{"_bf16", PRECISION_BF16},     {"_fp8cs", PRECISION_FP8_CS},
                    {"_fp8mx", PRECISION_MXFP8},   {"_fp8sc", PRECISION_FP8_BLOCK},
                    {"_fp8ds", PRECISION_FP8},     {"_nvfp4", PRECISION_NVFP4}};
        for (size_t i = 0; i < sizeof PREC / sizeof PREC[0]; i++) {
            size_t k = strlen(PREC[i].word);
            if (strncmp(q, PREC[i].word, k) == 0 && (q[k] == '_' || q[k] == '\0'))
                out->precision = (int)PREC[i].precision;
        }
    }
    return 1;
}

/* Megatron-Bridge's performance launcher (scripts/performance/
 * setup_experiment.py, argument_parser.py): the flags that set the layout,
 * each with the override key it stands for, and those that name the run. */
typedef enum { PF_INT, PF_VPP, PF_BOOL, PF_LIST, PF_RUN } perf_kind_t;

static const struct {
    const char *shrt, *lng;
    const char *key; /* the override it sets ("" for the run's naming flags) */
    perf_kind_t kind;
} PERF_FLAGS[] = {
    {"-tp", "--tensor_model_parallel_size", "model.tensor_model_parallel_size", PF_INT},
    {"-pp", "--pipeline_model_parallel_size", "model.pipeline_model_parallel_size", PF_INT},
    {"-cp", "--context_parallel_size", "model.context_parallel_size", PF_INT},
    {"-vp", "--virtual_pipeline_model_parallel_size", "model.virtual_pipeline_model_parallel_size",
     PF_VPP},
    {"-ep", "--expert_model_parallel_size", "model.expert_model_parallel_size", PF_INT},
    {"-et", "--expert_tensor_parallel_size", "model.expert_tensor_parallel_size", PF_INT},
    {"-mb", "--micro_batch_size", "train.micro_batch_size", PF_INT},
    {"-gb", "--global_batch_size", "train.global_batch_size", PF_INT},
    {"-sl", "--seq_length", "model.seq_length", PF_INT},
    {"-rl", "--recompute_num_layers", "model.recompute_num_layers", PF_INT},
    {NULL, "--use_megatron_fsdp", "ddp.use_megatron_fsdp", PF_BOOL},
    {NULL, "--recompute_modules", "model.recompute_modules", PF_LIST},
    {"-m", "--model_family_name", "", PF_RUN},
    {NULL, "--model_name", "", PF_RUN},
    {"-s", "--model_size", "", PF_RUN},
    {NULL, "--task", "", PF_RUN},
    {NULL, "--config_variant", "", PF_RUN},
    {"-mr", "--model_recipe_name", "", PF_RUN},
    {"-ng", "--num_gpus", "", PF_RUN},
    {"-g", "--gpu", "", PF_RUN},
    {"-c", "--compute_dtype", "", PF_RUN},
    {"-gn", "--gpus_per_node", "", PF_RUN},
};

static int perf_flag(const char *w)
{
    for (size_t i = 0; i < sizeof PERF_FLAGS / sizeof PERF_FLAGS[0]; i++)
        if ((PERF_FLAGS[i].shrt && strcmp(w, PERF_FLAGS[i].shrt) == 0) ||
            strcmp(w, PERF_FLAGS[i].lng) == 0)
            return (int)i;
    return -1;
}

/* The value after flag index f in text (the performance launcher's
 * --flag VALUE), or NULL. */
static bool perf_value(const char *text, int f, char *out, size_t cap)
{
    words_in_t in = {text, 0, 1};
    char w[512];
    int line;
    bool next = false, found = false;
    while (next_word(&in, w, sizeof w, &line)) {
        if (next) {
            snprintf(out, cap, "%s", w);
            found = true;
            next = false;
        } else if (perf_flag(w) == f) {
            next = true;
        }
    }
    return found;
}

void bridge_perf_run(const char *text, bridge_recipe_t *out)
{
    char v[128];
    int f;
    if ((f = perf_flag("-ng")) >= 0 && perf_value(text, f, v, sizeof v) && atoi(v) > 0)
        out->gpus = atoi(v);
    if ((f = perf_flag("-g")) >= 0 && perf_value(text, f, v, sizeof v)) {
        bridge_recipe_t g;
        char name[160]; /* v is under 128 characters: the whole name fits */
        int w = snprintf(name, sizeof name, "x_pretrain_1gpu_%s_bf16_config", v);
        if (w > 0 && (size_t)w < sizeof name && bridge_recipe_parts(name, &g) && g.gpu[0])
            snprintf(out->gpu, sizeof out->gpu, "%s", g.gpu);
    }
    if ((f = perf_flag("-c")) >= 0 && perf_value(text, f, v, sizeof v)) {
        /* bf16, fp8_cs, fp8_mx, fp8_sc, nvfp4: the recipe-name spellings
         * without the underscore */
        char word[32] = "", name[160];
        size_t n = 0;
        for (const char *p = v; *p && n + 1 < sizeof word; p++)
            if (*p != '_')
                word[n++] = *p;
        word[n] = '\0';
        bridge_recipe_t g;
        int w = snprintf(name, sizeof name, "x_pretrain_1gpu_h100_%s_config", word);
        if (w > 0 && (size_t)w < sizeof name && bridge_recipe_parts(name, &g) &&
            g.precision >= 0)
            out->precision = g.precision;
    }
}

/* An architecture override must describe the model being simulated. */
static int check_arch(const model_t *m, const char *origin, int line, const char *k,
                      const char *v, err_t *err)
{
    static const struct {
        const char *key;
        size_t offset;
    } ARCH[] = {
        {"model.num_layers", offsetof(model_t, n_layers)},
        {"model.hidden_size", offsetof(model_t, hidden)},
        {"model.num_attention_heads", offsetof(model_t, n_heads)},
        {"model.num_query_groups", offsetof(model_t, n_kv_heads)},
        {"model.ffn_hidden_size", offsetof(model_t, ffn)},
    };
    for (size_t i = 0; i < sizeof ARCH / sizeof ARCH[0]; i++) {
        if (strcmp(k, ARCH[i].key) != 0)
            continue;
        int x, have = *(const int *)((const char *)m + ARCH[i].offset);
        int rc = to_int(v, origin, line, k, &x, err);
        if (rc)
            return rc;
        if (x != have)
            return err_setf(err, ERR_INPUT, origin, NULL,
                            "line %d: %s=%d, but %s has %d; give --model for a model with this "
                            "architecture (a config.json)",
                            line, k, x, m->display, have);
        return ERR_OK;
    }
    return ERR_OK;
}

int bridge_read_overrides(const char *text, const char *origin, const model_t *m, layout_t *l,
                     err_t *err)
{
    return bridge_read_overrides_notes(text, origin, m, l, NULL, err);
}

/* What a Bridge text has said so far beyond the layout's own fields. */
typedef struct {
    int rc_layers;     /* model.recompute_num_layers (1 unless given) */
    bool account;      /* the embedding and the loss count as layers in the split */
    bool fsdp;         /* ddp.use_megatron_fsdp */
    bool block;        /* model.recompute_method=block */
    char strategy[32]; /* ddp.data_parallel_sharding_strategy */
} overrides_t;

/* A flag of the performance launcher at word (flag index pf): its value
 * read from in, and word rewritten as the KEY=VALUE override it stands for;
 * *skip when there is no override to apply (the run's naming flags, read
 * by the caller; --recompute_modules, applied here). ERR_INPUT naming the
 * line when the value is missing or bad. */
static int perf_override(words_in_t *in, int pf, char *word, size_t cap, int line,
                         const char *origin, layout_t *l, overrides_t *st, bool *skip,
                         err_t *err)
{
    char value[256];
    int vline;
    *skip = false;
    if (!next_word(in, value, sizeof value, &vline))
        return err_setf(err, ERR_INPUT, origin, NULL, "line %d: %s needs a value", line, word);
    if (PERF_FLAGS[pf].kind == PF_RUN) {
        *skip = true; /* model, GPUs, precision: read by the caller */
        return ERR_OK;
    }
    if (PERF_FLAGS[pf].kind == PF_VPP && (strcmp(value, "None") == 0 || strcmp(value, "-1") == 0))
        snprintf(value, sizeof value, "null");
    if (PERF_FLAGS[pf].kind == PF_INT &&
        strcmp(PERF_FLAGS[pf].key, "model.recompute_num_layers") == 0) {
        /* Megatron's block recompute of that many layers */
        st->block = true;
        l->recompute = RECOMPUTE_FULL;
    }
    if (PERF_FLAGS[pf].kind == PF_LIST) {
        /* the performance scripts' --recompute_modules: selective
         * recompute of those modules */
        if (layout_parse_recompute_modules(value, word, &l->recompute_modules, err))
            return err_setf(err, ERR_INPUT, origin, word, "line %d: %s", line, err->msg);
        l->recompute = RECOMPUTE_SELECTIVE;
        *skip = true;
        return ERR_OK;
    }
    snprintf(word, cap, "%s=%s", PERF_FLAGS[pf].key, value);
    return ERR_OK;
}

/* A word of the launch command around the overrides: the recipe (which
 * names the model: read by bridge_recipe), its options and the launcher,
 * none of which change the layout; noted (the launch command once). */
static void note_launch_word(notes_t *notes, const char *word, int line, bool *launcher_noted)
{
    if (strncmp(word, "--", 2) == 0 && strncmp(word, "--recipe", 8) != 0)
        notes_add(notes, NOTE_IGNORED, word, "line %d: a launcher option: no effect on "
                                             "the layout",
                  line);
    else if (!*launcher_noted && strncmp(word, "--recipe", 8) != 0 && strchr(word, '=') == NULL) {
        notes_add(notes, NOTE_IGNORED, word, "line %d: the launch command; its overrides are read",
                  line);
        *launcher_noted = true;
    } else if (strchr(word, '=') && word[0] != '-')
        notes_add(notes, NOTE_IGNORED, word,
                  "line %d: an environment variable or option without a config key", line);
}

/* One override k=v (at line) onto l and st; an architecture key must
 * agree with m. Keys that do not change the layout (overlap switches, ...)
 * are passed over. ERR_INPUT naming the line and key. */
static int apply_override(const char *k, const char *v, const char *origin, int line,
                          const model_t *m, layout_t *l, overrides_t *st, err_t *err)
{
    int rc = check_arch(m, origin, line, k, v, err);
    if (rc)
        return rc;
    bool b;
    if (strcmp(k, "model.tensor_model_parallel_size") == 0)
        rc = to_int(v, origin, line, k, &l->tp, err);
    else if (strcmp(k, "model.pipeline_model_parallel_size") == 0)
        rc = to_int(v, origin, line, k, &l->pp, err);
    else if (strcmp(k, "model.context_parallel_size") == 0)
        rc = to_int(v, origin, line, k, &l->cp, err);
    else if (strcmp(k, "model.expert_model_parallel_size") == 0)
        rc = to_int(v, origin, line, k, &l->ep, err);
    else if (strcmp(k, "model.expert_tensor_parallel_size") == 0)
        rc = to_int(v, origin, line, k, &l->etp, err);
    else if (strcmp(k, "model.virtual_pipeline_model_parallel_size") == 0) {
        l->vpp = 1;
        if (strcmp(v, "null") != 0 && strcmp(v, "None") != 0)
            rc = to_int(v, origin, line, k, &l->vpp, err);
        l->schedule = l->vpp > 1 ? SCHEDULE_INTERLEAVED : SCHEDULE_1F1B;
    } else if (strcmp(k, "model.num_layers_in_first_pipeline_stage") == 0)
        rc = to_int(v, origin, line, k, &l->first_stage_layers, err);
    else if (strcmp(k, "model.num_layers_in_last_pipeline_stage") == 0)
        rc = to_int(v, origin, line, k, &l->last_stage_layers, err);
    else if (strcmp(k, "model.account_for_embedding_in_pipeline_split") == 0 ||
             strcmp(k, "model.account_for_loss_in_pipeline_split") == 0)
        rc = to_bool(v, origin, line, k, &st->account, err);
    else if (strcmp(k, "model.sequence_parallel") == 0) {
        rc = to_bool(v, origin, line, k, &l->sequence_parallel, err);
        l->sp_off = !l->sequence_parallel; /* said off: not implied */
    }
    else if (strcmp(k, "model.seq_length") == 0 || strcmp(k, "dataset.seq_length") == 0)
        rc = to_int(v, origin, line, k, &l->seq_len, err);
    else if (strcmp(k, "train.micro_batch_size") == 0)
        rc = to_int(v, origin, line, k, &l->micro_batch, err);
    else if (strcmp(k, "train.global_batch_size") == 0)
        rc = to_int(v, origin, line, k, &l->global_batch, err);
    else if (strcmp(k, "model.recompute_granularity") == 0) {
        if (strcmp(v, "null") == 0 || strcmp(v, "None") == 0)
            l->recompute = RECOMPUTE_NONE;
        else if ((rc = layout_parse_recompute(v, &l->recompute, err)))
            rc = err_setf(err, ERR_INPUT, origin, NULL, "line %d: %s: %s", line, k, err->msg);
    } else if (strcmp(k, "model.recompute_modules") == 0) {
        if (strcmp(v, "null") != 0 && strcmp(v, "None") != 0 &&
            layout_parse_recompute_modules(v, k, &l->recompute_modules, err))
            rc = err_setf(err, ERR_INPUT, origin, NULL, "line %d: %s", line, err->msg);
    } else if (strcmp(k, "model.recompute_method") == 0)
        st->block = strcmp(v, "block") == 0;
    else if (strcmp(k, "model.recompute_num_layers") == 0 && strcmp(v, "null") != 0 &&
             strcmp(v, "None") != 0)
        rc = to_int(v, origin, line, k, &st->rc_layers, err);
    else if (strcmp(k, "ddp.use_distributed_optimizer") == 0)
        rc = to_bool(v, origin, line, k, &l->distributed_optimizer, err);
    else if (strcmp(k, "ddp.use_megatron_fsdp") == 0)
        rc = to_bool(v, origin, line, k, &st->fsdp, err);
    else if (strcmp(k, "ddp.data_parallel_sharding_strategy") == 0)
        snprintf(st->strategy, sizeof st->strategy, "%s", v);
    else if (strcmp(k, "ddp.grad_reduce_in_fp32") == 0) {
        if (!(rc = to_bool(v, origin, line, k, &b, err)))
            l->grad_bytes = b ? 4 : 2;
    } else if (strcmp(k, "mixed_precision") == 0) {
        precision_t p = PRECISION_BF16;
        bool found = false;
        for (int i = 0; i < PRECISION_COUNT && !found; i++) {
            const char *name = layout_bridge_precision((precision_t)i);
            if (name && strcmp(name, v) == 0) {
                p = (precision_t)i;
                found = true;
            }
        }
        if (!found)
            rc = err_setf(err, ERR_INPUT, origin, NULL, "line %d: mixed_precision: unknown "
                                                       "recipe '%s'",
                          line, v);
        l->precision = p;
    }
    return rc;
}

/* After the last override: block recompute's layers, recompute modules
 * outside selective recompute dropped (said), FSDP's ZeRO stage, and the
 * embedding and the loss counted in the pipeline split (given, or implied
 * where the layers split only so), which lightens the first and last
 * chunks. ERR_INPUT when they cannot hold. */
static int finish_overrides(const char *origin, const model_t *m, layout_t *l, overrides_t *st,
                            notes_t *notes, err_t *err)
{
    /* block recompute: the first N layers of each virtual stage (N >= 1:
     * Megatron's block with none recomputes nothing, which the recompute
     * setting says more plainly) */
    if (st->block && l->recompute == RECOMPUTE_FULL && st->rc_layers < 1)
        return err_setf(err, ERR_INPUT, origin, "model.recompute_num_layers",
                        "block recompute needs at least 1 layer (got %d); set "
                        "model.recompute_granularity=null for none",
                        st->rc_layers);
    l->recompute_layers = st->block && l->recompute == RECOMPUTE_FULL ? st->rc_layers : 0;
    if (l->recompute_modules && l->recompute != RECOMPUTE_SELECTIVE) {
        /* Megatron reads the modules only under selective granularity */
        notes_add(notes, NOTE_IGNORED, "model.recompute_modules",
                  "applies to selective recompute only; this run's is %s",
                  layout_recompute_name(l->recompute));
        l->recompute_modules = 0;
    }
    if (st->fsdp)
        l->zero = strcmp(st->strategy, "optim_grads") == 0 ? 2 : 3;
    long stages = (long)(l->pp > 0 ? l->pp : 1) * (l->vpp > 0 ? l->vpp : 1);
    if (!st->account && l->vpp > 1 && !l->first_stage_layers && !l->last_stage_layers &&
        m->n_layers % stages != 0 && (m->n_layers + 2) % stages == 0) {
        /* the layers split only with the embedding and the loss counted,
         * as Bridge's recipes for such models set it (llama31_405b:
         * account_for_embedding/loss_in_pipeline_split True) */
        st->account = true;
        notes_add(notes, NOTE_ASSUMED, "model.account_for_embedding_in_pipeline_split",
                  "true with account_for_loss_in_pipeline_split: %d layers split over %ld "
                  "(virtual) stages only with the embedding and the loss counted as layers",
                  m->n_layers, stages);
    }
    if (st->account && l->vpp > 1 && l->pp > 0) { /* (PP 0 is the layout check's to refuse) */
        /* the embedding and the loss count as one layer each: (L + 2) /
         * (PP x VPP) per chunk, the first and last chunks one lighter */
        long chunks = (long)l->pp * l->vpp;
        if ((m->n_layers + 2) % chunks)
            return err_setf(err, ERR_INPUT, origin, NULL,
                            "account_for_embedding/loss_in_pipeline_split: %d layers + 2 do not "
                            "split into %ld chunks",
                            m->n_layers, chunks);
        int lighter = (int)((m->n_layers + 2) / chunks) - 1;
        l->first_stage_layers = l->last_stage_layers = lighter > 0 ? lighter : LAYOUT_STAGE_EMPTY;
    }
    return ERR_OK;
}

int bridge_read_overrides_notes(const char *text, const char *origin, const model_t *m, layout_t *l,
                                notes_t *notes, err_t *err)
{
    int rc = ERR_OK, line = 0;
    overrides_t st = {.rc_layers = 1, .strategy = "optim_grads_params"};
    bool launcher_noted = false, skip;
    words_in_t in = {text, 0, 1};
    char word[1024];
    while (!rc && next_word(&in, word, sizeof word, &line)) {
        if (strcmp(word, "--recipe") == 0 || strncmp(word, "--recipe=", 9) == 0)
            notes_add(notes, NOTE_ASSUMED, word,
                      "line %d: the recipe's own settings are not known to scaleplan: the "
                      "framework preset's defaults and these overrides are what is simulated",
                      line);
        int pf = perf_flag(word);
        if (pf >= 0) {
            if ((rc = perf_override(&in, pf, word, sizeof word, line, origin, l, &st, &skip, err)))
                return rc;
            if (skip)
                continue;
        }
        if (!override_word(word)) {
            note_launch_word(notes, word, line, &launcher_noted);
            continue;
        }
        char *eq = strchr(word, '=');
        *eq = '\0';
        rc = apply_override(word, eq + 1, origin, line, m, l, &st, err);
    }
    if (rc)
        return rc;
    return finish_overrides(origin, m, l, &st, notes, err);
}

/* ------------------------------------------------------------ options */

/* What the options' keys said, applied once all are read (their order in
 * the text does not matter). */
typedef struct {
    bool dispatcher_set, impl_set, scope_set;
    moe_dispatch_t dispatcher;
    char impl[32];
    unsigned scopes;
} bridge_opts_t;

/* "[attn,moe_router]", "attn moe_router" or "['attn']" into HOST_GRAPH_*. */
static int read_scope_list(const char *v, const char *origin, int line, const char *k,
                           unsigned *out, err_t *err)
{
    char list[256];
    size_t n = 0;
    for (const char *p = v; *p && n + 1 < sizeof list; p++)
        if (*p != '[' && *p != ']' && *p != '\'' && *p != '"')
            list[n++] = *p;
    list[n] = '\0';
    *out = 0;
    if (host_graph_scopes_parse(list, NULL, out, err))
        return err_setf(err, ERR_INPUT, origin, NULL, "line %d: %s: %s", line, k, err->msg);
    return ERR_OK;
}

static int option_key(const char *k, const char *v, const char *origin, int line,
                      bridge_opts_t *st, err_t *err)
{
    if (strcmp(k, "model.moe_token_dispatcher_type") == 0) {
        st->dispatcher_set = true;
        if (strcmp(v, "alltoall") == 0 || strcmp(v, "allgather") == 0 || strcmp(v, "flex") == 0)
            return moe_dispatch_parse(v, k, &st->dispatcher, err);
        return err_setf(err, ERR_INPUT, origin, NULL,
                        "line %d: %s: use alltoall, allgather or flex ('%s')", line, k, v);
    }
    if (strcmp(k, "model.moe_flex_dispatcher_backend") == 0) {
        /* HybridEP is priced as DeepEP (sim/scenario.h) */
        if (strcmp(v, "deepep") != 0 && strcmp(v, "hybridep") != 0)
            return err_setf(err, ERR_INPUT, origin, NULL, "line %d: %s: use deepep or hybridep ('%s')",
                            line, k, v);
        return ERR_OK;
    }
    if (strcmp(k, "model.cuda_graph_impl") == 0) {
        static const char *const impls[] = {"none", "local", "transformer_engine",
                                            "full_iteration"};
        for (size_t i = 0; i < sizeof impls / sizeof *impls; i++)
            if (strcmp(v, impls[i]) == 0) {
                st->impl_set = true;
                snprintf(st->impl, sizeof st->impl, "%s", v);
                return ERR_OK;
            }
        return err_setf(err, ERR_INPUT, origin, NULL,
                        "line %d: %s: use none, local, transformer_engine or full_iteration "
                        "('%s')",
                        line, k, v);
    }
    if (strcmp(k, "model.cuda_graph_scope") == 0) {
        st->scope_set = true;
        return read_scope_list(v, origin, line, k, &st->scopes, err);
    }
    return ERR_OK;
}

int bridge_read_options(const char *text, const char *origin, sim_options_t *o, err_t *err)
{
    bridge_opts_t st = {0};
    words_in_t in = {text, 0, 1};
    char word[1024];
    int line = 0, rc = ERR_OK;
    while (!rc && next_word(&in, word, sizeof word, &line)) {
        if (!override_word(word))
            continue;
        char *eq = strchr(word, '=');
        *eq = '\0';
        rc = option_key(word, eq + 1, origin, line, &st, err);
    }
    if (rc)
        return rc;
    if (st.dispatcher_set) {
        o->moe.dispatcher = st.dispatcher;
        o->moe.dispatcher_given = true;
    }
    /* Megatron-Core: no graphs without an implementation; full_iteration
     * captures the step; else the scopes named, the whole layer when none
     * is (transformer_config.py cuda_graph_scope's default) */
    if (st.impl_set) {
        o->host.graph_scopes_given = true;
        if (strcmp(st.impl, "none") == 0)
            o->host.graph_scopes = 0;
        else if (strcmp(st.impl, "full_iteration") == 0)
            o->host.graph_scopes = HOST_GRAPH_FULL;
        else
            o->host.graph_scopes = st.scope_set && st.scopes
                                       ? st.scopes
                                       : HOST_GRAPH_ATTN | HOST_GRAPH_MLP | HOST_GRAPH_MOE;
    }
    return ERR_OK;
}

/* ------------------------------------------------------------ performance layouts */

/* Megatron-Bridge's performance configs (inputs/bridge_perf_configs.tsv,
 * generated from scripts/performance/configs/FAMILY/..._workload_base_configs.py
 * by tools/gen-bridge-perf-configs.py): the layout each recipe runs on each
 * GPU in each precision. 0 = not set (the recipe's own). */
typedef struct {
    const char *release, *recipe, *task, *gpu, *precision, *variant;
    int gpus, tp, pp, cp, vpp, ep, etp, mbs, gbs, fsdp, offload_layers, recompute_layers;
    const char *recompute_modules;
    int seq_len;
} perf_config_t;

static const perf_config_t PERF_CONFIGS[] = {
#include "inputs/bridge_perf_configs.inc"
};

int bridge_perf_layout(const char *text, const char *gpu, layout_t *l, char *what,
                            size_t cap)
{
    char m[128] = "", sz[128] = "", mr[128] = "", g[32] = "", c[32] = "bf16", task[32] = "pretrain",
         variant[16] = "v2", ng[32] = "", gb[32] = "";
    perf_value(text, perf_flag("-s"), sz, sizeof sz);
    if (!perf_value(text, perf_flag("--model_name"), m, sizeof m))
        perf_value(text, perf_flag("-m"), m, sizeof m);
    perf_value(text, perf_flag("-mr"), mr, sizeof mr);
    perf_value(text, perf_flag("-g"), g, sizeof g);
    perf_value(text, perf_flag("-c"), c, sizeof c);
    perf_value(text, perf_flag("--task"), task, sizeof task);
    perf_value(text, perf_flag("--config_variant"), variant, sizeof variant);
    perf_value(text, perf_flag("-ng"), ng, sizeof ng);
    perf_value(text, perf_flag("-gb"), gb, sizeof gb);
    char recipe[300];
    const char *release;
    if (sz[0] && m[0]) { /* v0.2: -m llama3 -s 70b */
        snprintf(recipe, sizeof recipe, "%s_%s", m, sz);
        release = "v0.2.2";
    } else if (mr[0]) { /* v0.3 on: -m llama -mr llama3_70b */
        snprintf(recipe, sizeof recipe, "%s", mr);
        release = "v0.5.0";
    } else {
        return 0;
    }
    for (char *p = recipe; *p; p++)
        *p = (char)tolower((unsigned char)*p);
    if (!g[0] && gpu) {
        /* the GPU scaleplan was given, as Bridge names it */
        static const char *const NAMES[] = {"gb300", "gb200", "b300", "b200", "h100"};
        for (size_t i = 0; i < sizeof NAMES / sizeof NAMES[0] && !g[0]; i++)
            if (strncmp(gpu, NAMES[i], strlen(NAMES[i])) == 0)
                snprintf(g, sizeof g, "%s", NAMES[i]);
    }
    const perf_config_t *hit = NULL;
    for (int pass = 0; pass < 2 && !hit; pass++) /* the variant asked for, then v1 */
        for (size_t i = 0; i < sizeof PERF_CONFIGS / sizeof PERF_CONFIGS[0]; i++) {
            const perf_config_t *x = &PERF_CONFIGS[i];
            if (strcmp(x->release, release) == 0 && strcmp(x->recipe, recipe) == 0 &&
                strcmp(x->task, task) == 0 && strcmp(x->gpu, g) == 0 &&
                strcmp(x->precision, c) == 0 &&
                (x->variant[0] == '-' || strcmp(x->variant, pass ? "v1" : variant) == 0)) {
                hit = x;
                break;
            }
        }
    if (!hit) {
        snprintf(what, cap, "%s %s on %s in %s has no performance config in Megatron-Bridge %s",
                 recipe, task, g[0] ? g : "(no -g)", c, release);
        return -1;
    }
    l->tp = hit->tp;
    l->pp = hit->pp;
    l->cp = hit->cp;
    l->vpp = hit->vpp > 0 ? hit->vpp : 1;
    l->schedule = l->vpp > 1 ? SCHEDULE_INTERLEAVED : SCHEDULE_1F1B;
    l->ep = hit->ep;
    l->etp = hit->etp;
    l->micro_batch = hit->mbs;
    l->global_batch = hit->gbs;
    int n = atoi(ng);
    if (n > 0 && n != hit->gpus && !gb[0]) /* Bridge scales the batch with the GPUs */
        l->global_batch = (int)((double)hit->gbs / hit->gpus * n);
    l->sequence_parallel = hit->tp > 1;
    if (hit->seq_len > 0)
        l->seq_len = hit->seq_len;
    if (hit->fsdp) {
        l->zero = 3;
        l->distributed_optimizer = false;
    }
    if (hit->offload_layers > 0) {
        l->offload |= LAYOUT_OFFLOAD_ACTIVATIONS;
        l->offload_act_layers = hit->offload_layers;
    }
    if (hit->recompute_layers > 0) {
        l->recompute = RECOMPUTE_FULL;
        l->recompute_layers = hit->recompute_layers;
    } else if (hit->recompute_modules[0]) {
        err_t ignore;
        if (layout_parse_recompute_modules(hit->recompute_modules, "recompute_modules",
                                           &l->recompute_modules, &ignore) == ERR_OK)
            l->recompute = RECOMPUTE_SELECTIVE;
    }
    snprintf(what, cap,
             "TP %d PP %d CP %d VPP %d EP %d, micro-batch %d, global batch %d%s, from Megatron-Bridge "
             "%s's performance config %s %s %s %s%s%s (%d GPUs)",
             l->tp, l->pp, l->cp, l->vpp, l->ep, l->micro_batch, l->global_batch,
             l->global_batch != hit->gbs ? " (scaled to the GPUs)" : "", release, recipe, task,
             hit->gpu, hit->precision, hit->variant[0] != '-' ? " " : "",
             hit->variant[0] != '-' ? hit->variant : "", hit->gpus);
    return 1;
}
