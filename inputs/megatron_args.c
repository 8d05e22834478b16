/* megatron_args: Megatron-LM pretrain_gpt.py arguments as read, each
 * checked against the flag table, which comes from Megatron-LM's own parser
 * (inputs/megatron_flags.tsv) plus older releases' spellings. What they
 * mean for the model, layout and options is megatron_interp.c's. */
#include "inputs/megatron_argsInt.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/strfmt.h"
#include "common/names.h"

/* ------------------------------------------------------------ the table */

static const mflag_t FLAGS[] = {
#include "inputs/megatron_flags.inc"
};

/* Spellings of older releases (v1.0 2020 to core_v0.12 2025) that the
 * current parser no longer has, with what they meant then. Flags the
 * interpreter below reads are marked 'Y'. */
static const mflag_t LEGACY[] = {
    {"--checkpoint-num-layers", "checkpoint_num_layers", MF_INT, 0, "", "1", 'Y'},
    {"--activations-checkpoint-method", "recompute_method", MF_CHOICE, 0, "uniform,block", "None",
     'Y'},
    {"--activations-checkpoint-num-layers", "recompute_num_layers", MF_INT, 0, "", "1", 'Y'},
    {"--distribute-checkpointed-activations", "distribute_saved_activations", MF_ON, 0, "",
     "False", 'Y'},
    {"--fp8-e4m3", "fp8_e4m3", MF_ON, 0, "", "False", 'Y'},
    {"--fp8-hybrid", "fp8_hybrid", MF_ON, 0, "", "False", 'Y'},
    {"--use-custom-fsdp", "use_custom_fsdp", MF_ON, 0, "", "False", 'Y'},
    {"--overlap-p2p-communication", "overlap_p2p_communication", MF_ON, 0, "", "False", 'Y'},
    {"--no-async-tensor-model-parallel-allreduce", "async_tensor_model_parallel_allreduce",
     MF_OFF, 0, "", "True", 'Y'},
    {"--delay-param-gather", "delay_param_gather", MF_ON, 0, "", "False", 'Y'},
    {"--no-delay-grad-reduce", "delay_grad_reduce", MF_OFF, 0, "", "True", 'Y'},
    {"--standalone-embedding-stage", "standalone_embedding_stage", MF_ON, 0, "", "False", 'Y'},
    {"--pipeline-model-parallel-split-rank", "pipeline_model_parallel_split_rank", MF_INT, 0, "",
     "None", 'Y'},
    {"--moe-extended-tp", "moe_extended_tp", MF_ON, 0, "", "False", 'Y'},
    {"--layernorm-epsilon", "layernorm_epsilon", MF_FLOAT, 0, "", "1e-05", 'Y'},
    {"--no-query-key-layer-scaling", "apply_query_key_layer_scaling", MF_OFF, 0, "", "True", 'N'},
    {"--no-scatter-gather-tensors-in-pipeline", "scatter_gather_tensors_in_pipeline", MF_OFF, 0,
     "", "True", 'Y'},
    {"--use-contiguous-buffers-in-ddp", "use_contiguous_buffers_in_ddp", MF_ON, 0, "", "False",
     'N'},
    {"--no-contiguous-buffers-in-local-ddp", "use_contiguous_buffers_in_local_ddp", MF_OFF, 0, "",
     "True", 'N'},
    {"--data-impl", "data_impl", MF_CHOICE, 0, "lazy,cached,mmap,infer", "'infer'", 'N'},
    {"--mmap-warmup", "mmap_warmup", MF_ON, 0, "", "False", 'N'},
    {"--img-dim", "img_dim", MF_INT, 0, "", "224", 'N'},
    {"--hybrid-attention-ratio", "hybrid_attention_ratio", MF_FLOAT, 0, "", "0.0", 'Y'},
    {"--hybrid-mlp-ratio", "hybrid_mlp_ratio", MF_FLOAT, 0, "", "0.0", 'Y'},
    {"--fp32-allreduce", "fp32_allreduce", MF_ON, 0, "", "False", 'Y'},
    {"--min-scale", "min_scale", MF_FLOAT, 0, "", "1", 'N'},
    {"--log-batch-size-to-tensorboard", "log_batch_size_to_tensorboard", MF_ON, 0, "", "False",
     'N'},
    {"--no-log-learnig-rate-to-tensorboard", "log_learning_rate_to_tensorboard", MF_OFF, 0, "",
     "True", 'N'},
    {"--override-lr-scheduler", "override_lr_scheduler", MF_ON, 0, "", "False", 'N'},
    {"--use-checkpoint-lr-scheduler", "use_checkpoint_lr_scheduler", MF_ON, 0, "", "False", 'N'},
    {"--retriever-seq-length", "retriever_seq_length", MF_INT, 0, "", "256", 'N'},
    {"--retro-add-retriever", "retro_add_retriever", MF_ON, 0, "", "False", 'Y'},
    {"--retro-cyclic-train-iters", "retro_cyclic_train_iters", MF_INT, 0, "", "None", 'N'},
    {"--retro-encoder-attention-dropout", "retro_encoder_attention_dropout", MF_FLOAT, 0, "",
     "0.1", 'N'},
    {"--retro-encoder-hidden-dropout", "retro_encoder_hidden_dropout", MF_FLOAT, 0, "", "0.1",
     'N'},
    {"--retro-encoder-layers", "retro_encoder_layers", MF_INT, 0, "", "2", 'N'},
    {"--retro-project-dir", "retro_project_dir", MF_STRING, 0, "", "None", 'N'},
    {"--retro-workdir", "retro_workdir", MF_STRING, 0, "", "None", 'N'},
    {"--s3-cache-path", "s3_cache_path", MF_STRING, 0, "", "None", 'N'},
    {"--tiktoken-special-tokens", "tiktoken_special_tokens", MF_STRING, -1, "", "None", 'N'},
    {"--use-legacy-models", "use_legacy_models", MF_ON, 0, "", "False", 'N'},
    {"--embedding-weights-in-fp32", "embedding_weights_in_fp32", MF_ON, 0, "", "False", 'Y'},
    {"--enable-one-logger", "enable_one_logger", MF_ON, 0, "", "False", 'N'},
    {"--one-logger-entity", "one_logger_entity", MF_STRING, 0, "", "'hwinf_dcm'", 'N'},
    {"--encoder-pipeline-model-parallel-size", "encoder_pipeline_model_parallel_size", MF_INT, 0,
     "", "0", 'Y'},
    {"--encoder-tensor-model-parallel-size", "encoder_tensor_model_parallel_size", MF_INT, 0, "",
     "0", 'Y'},
    {"--faiss-use-gpu", "faiss_use_gpu", MF_ON, 0, "", "False", 'N'},
    {"--keep-fp8-transpose-cache-when-using-custom-fsdp",
     "keep_fp8_transpose_cache_when_using_custom_fsdp", MF_ON, 0, "", "False", 'Y'},
    {"--moe-token-dropping", "moe_token_dropping", MF_ON, 0, "", "False", 'Y'},
    {"--moe-use-legacy-grouped-gemm", "moe_use_legacy_grouped_gemm", MF_ON, 0, "", "False", 'Y'},
    {"--no-scaled-masked-softmax-fusion", "scaled_masked_softmax_fusion", MF_OFF, 0, "", "True",
     'Y'},
    {"--scaled-upper-triang-masked-softmax-fusion", "scaled_upper_triang_masked_softmax_fusion",
     MF_ON, 0, "", "False", 'Y'},
    {"--DDP-impl", "DDP_impl", MF_CHOICE, 0, "local,torch", "'local'", 'N'},
    {"--report-topk-accuracies", "report_topk_accuracies", MF_INT, -1, "", "[]", 'N'},
};

#define N_FLAGS (sizeof FLAGS / sizeof FLAGS[0])
#define N_LEGACY (sizeof LEGACY / sizeof LEGACY[0])

static const mflag_t *flag_at(size_t i)
{
    return i < N_FLAGS ? &FLAGS[i] : &LEGACY[i - N_FLAGS];
}

/* Whether spelling is one of f's '|'-separated spellings; *negative is
 * set for the --no-x half of a --x/--no-x pair. */
static bool spelled(const mflag_t *f, const char *spelling, size_t len, bool *negative)
{
    const char *p = f->flags;
    int index = 0;
    while (*p) {
        size_t n = strcspn(p, "|");
        if (n == len && strncmp(p, spelling, len) == 0) {
            *negative = f->kind == MF_BOOL && index > 0;
            return true;
        }
        p += n;
        if (*p == '|')
            p++;
        index++;
    }
    return false;
}

/* The flag spelled name[0..len) ("--num-layers") or whose dest it is
 * ("num_layers"); NULL when unknown. */
static const mflag_t *find_flag(const char *name, size_t len, bool *negative)
{
    *negative = false;
    bool dest = len < 2 || name[0] != '-';
    for (size_t i = 0; i < N_FLAGS + N_LEGACY; i++) {
        const mflag_t *f = flag_at(i);
        if (dest ? (strlen(f->dest) == len && strncmp(f->dest, name, len) == 0)
                 : spelled(f, name, len, negative))
            return f;
    }
    return NULL;
}

/* ------------------------------------------------------------ stored arguments */

void megatron_args_init(megatron_args_t *a, const char *origin)
{
    memset(a, 0, sizeof *a);
    str_label(a->origin, sizeof a->origin, origin && *origin ? origin : "megatron arguments");
}

void megatron_args_free(megatron_args_t *a)
{
    if (!a)
        return;
    for (size_t i = 0; i < a->n_args; i++)
        free(a->args[i].value);
    free(a->args);
    notes_free(&a->notes);
    a->args = NULL;
    a->n_args = a->cap_args = 0;
}

/* (megatron_argsInt.h) */
megatron_arg_t *megatron_arg_of(const megatron_args_t *a, const char *dest)
{
    for (size_t i = 0; i < a->n_args; i++)
        if (strcmp(a->args[i].flag->dest, dest) == 0)
            return &a->args[i];
    return NULL;
}

/* Suggest the closest known spelling for an unknown flag. */
static int unknown_flag(const megatron_args_t *a, const char *name, size_t len, err_t *err)
{
    char word[96];
    snprintf(word, sizeof word, "%.*s", (int)(len < 90 ? len : 90), name);
    size_t n = N_FLAGS + N_LEGACY;
    const char **cands = malloc(n * sizeof *cands);
    char (*first)[96] = malloc(n * sizeof *first);
    int best = -1;
    if (cands && first) {
        for (size_t i = 0; i < n; i++) {
            const mflag_t *f = flag_at(i);
            const char *src = word[0] == '-' ? f->flags : f->dest;
            snprintf(first[i], sizeof first[i], "%.*s", (int)strcspn(src, "|"), src);
            cands[i] = first[i];
        }
        best = names_closest(word, cands, n);
    }
    int rc;
    if (best >= 0)
        rc = err_setf(err, ERR_INPUT, a->origin, word,
                      "not a Megatron-LM pretrain_gpt.py argument; did you mean %s?", cands[best]);
    else
        rc = err_setf(err, ERR_INPUT, a->origin, word,
                      "not a Megatron-LM pretrain_gpt.py argument (scaleplan knows the "
                      "flags of megatron/training/arguments.py and older releases' spellings)");
    free(cands);
    free(first);
    return rc;
}

/* A value as the argument block prints it, turned into plain text: list
 * brackets, quotes and commas become spaces, "Enum.member" becomes
 * "member". Writes into out. */
static void plain_value(const char *v, char *out, size_t cap)
{
    size_t o = 0;
    for (const char *p = v; *p && o + 1 < cap; p++) {
        char c = *p;
        if (c == '[' || c == ']' || c == '\'' || c == '"' || c == ',' || c == '(' || c == ')')
            c = ' ';
        if (c == ' ' && (o == 0 || out[o - 1] == ' '))
            continue;
        out[o++] = c;
    }
    while (o > 0 && out[o - 1] == ' ')
        o--;
    out[o] = '\0';
    /* AttnBackend.flash -> flash, torch.bfloat16 -> bfloat16 */
    const char *dot = strchr(out, '.');
    if (dot && !strchr(out, ' ') && isalpha((unsigned char)out[0]) &&
        isalpha((unsigned char)dot[1]))
        memmove(out, dot + 1, strlen(dot + 1) + 1);
}

/* (megatron_argsInt.h) */
bool megatron_parse_long(const char *s, long *out)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (end == s || *end != '\0' || errno)
        return false;
    *out = v;
    return true;
}

bool megatron_parse_double(const char *s, double *out)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (end == s || *end != '\0' || errno || !isfinite(v))
        return false;
    *out = v;
    return true;
}

/* Whether word is one of the comma-separated choices. */
static bool among(const char *choices, const char *word)
{
    size_t len = strlen(word);
    for (const char *p = choices; *p;) {
        size_t n = strcspn(p, ",");
        if (n == len && strncmp(p, word, n) == 0)
            return true;
        p += n;
        if (*p == ',')
            p++;
    }
    return false;
}

/* Check a value against the flag's kind. */
static int check_value(const megatron_args_t *a, const mflag_t *f, const char *spelling,
                       const char *value, err_t *err)
{
    char word[256];
    const char *p = value;
    do {
        size_t n = strcspn(p, " ");
        snprintf(word, sizeof word, "%.*s", (int)(n < 250 ? n : 250), p);
        long l;
        double d;
        if (f->kind == MF_INT && !megatron_parse_long(word, &l)) {
            if (strchr(word, '$'))
                return err_setf(err, ERR_INPUT, a->origin, spelling,
                                "'%s' is a shell variable the text does not set; give the number",
                                word);
            return err_setf(err, ERR_INPUT, a->origin, spelling, "expects an integer (got '%s')",
                            word);
        }
        if (f->kind == MF_FLOAT && !megatron_parse_double(word, &d))
            return err_setf(err, ERR_INPUT, a->origin, spelling, "expects a number (got '%s')",
                            word);
        if (f->kind == MF_CHOICE && f->choices[0] && !among(f->choices, word))
            return err_setf(err, ERR_INPUT, a->origin, spelling,
                            "invalid choice '%s' (choose from %s)", word, f->choices);
        p += n;
        while (*p == ' ')
            p++;
    } while (*p && f->nargs != 0);
    if (f->nargs == 0 && strchr(value, ' ') && f->kind != MF_STRING)
        return err_setf(err, ERR_INPUT, a->origin, spelling, "expects one value (got '%s')",
                        value);
    return ERR_OK;
}

static int store(megatron_args_t *a, const mflag_t *f, const char *spelling, size_t len,
                 const char *value, err_t *err)
{
    megatron_arg_t *slot = megatron_arg_of(a, f->dest);
    if (!slot) {
        if (a->n_args == a->cap_args) {
            size_t cap = a->cap_args ? 2 * a->cap_args : 64;
            megatron_arg_t *p = realloc(a->args, cap * sizeof *p);
            if (!p)
                return err_set(err, ERR_RUNTIME, "out of memory reading Megatron arguments");
            a->args = p;
            a->cap_args = cap;
        }
        slot = &a->args[a->n_args++];
        memset(slot, 0, sizeof *slot);
    }
    char *copy = strdup(value);
    if (!copy)
        return err_set(err, ERR_RUNTIME, "out of memory reading Megatron arguments");
    free(slot->value);
    slot->flag = f;
    slot->value = copy;
    slot->used = false;
    snprintf(slot->spelling, sizeof slot->spelling, "%.*s", (int)(len < 90 ? len : 90), spelling);
    return ERR_OK;
}

/* Drop a stored argument ("None" in an argument block). */
static void unset(megatron_args_t *a, const char *dest)
{
    megatron_arg_t *slot = megatron_arg_of(a, dest);
    if (!slot)
        return;
    free(slot->value);
    size_t i = (size_t)(slot - a->args);
    memmove(slot, slot + 1, (a->n_args - i - 1) * sizeof *slot);
    a->n_args--;
}

static int set_len(megatron_args_t *a, const char *name, size_t len, const char *value,
                   err_t *err)
{
    bool negative;
    const mflag_t *f = find_flag(name, len, &negative);
    if (!f)
        return unknown_flag(a, name, len, err);
    char spelling[96];
    snprintf(spelling, sizeof spelling, "%.*s", (int)(len < 90 ? len : 90), name);
    bool is_switch = f->kind == MF_ON || f->kind == MF_OFF || f->kind == MF_BOOL;
    if (value && strcmp(value, "None") == 0) {
        unset(a, f->dest);
        return ERR_OK;
    }
    if (is_switch) {
        const char *v;
        if (!value) {
            bool on = f->kind == MF_OFF ? false : !negative;
            v = on ? "True" : "False";
        } else if (strcmp(value, "True") == 0 || strcmp(value, "False") == 0) {
            v = value; /* the dest's value, as the argument block prints it */
        } else {
            return err_setf(err, ERR_INPUT, a->origin, spelling,
                            "is a switch and takes no value (got '%s')", value);
        }
        return store(a, f, spelling, strlen(spelling), v, err);
    }
    if (!value || !*value)
        return err_setf(err, ERR_INPUT, a->origin, spelling, "needs a value");
    char plain[1024];
    plain_value(value, plain, sizeof plain);
    if (!plain[0])
        return err_setf(err, ERR_INPUT, a->origin, spelling, "needs a value");
    if (f->perf == 'N' && (f->kind == MF_INT || f->kind == MF_FLOAT || f->kind == MF_CHOICE)) {
        /* a flag with no effect on speed or memory whose value today's
         * parser would not take (an older release's meaning: v1.0's
         * --warmup .01 was a fraction): said, not refused */
        err_t ignore;
        if (check_value(a, f, spelling, plain, &ignore)) {
            notes_add(&a->notes, NOTE_IGNORED, spelling,
                      "'%s' is not what today's Megatron-LM takes (%s); an older release's "
                      "meaning? no effect on speed or memory",
                      plain, ignore.msg);
            return ERR_OK;
        }
    }
    /* Python-style lists of a string flag keep their text (moe_layer_freq
     * patterns such as "([0]*3+[1]*58)" must survive as written). */
    const char *stored = (f->kind == MF_STRING && f->nargs == 0) ? value : plain;
    int rc = check_value(a, f, spelling, plain, err);
    if (rc)
        return rc;
    return store(a, f, spelling, strlen(spelling), stored, err);
}

int megatron_args_set(megatron_args_t *a, const char *name, const char *value, err_t *err)
{
    if (!name || !*name)
        return err_setf(err, ERR_INPUT, a->origin, NULL, "empty argument name");
    return set_len(a, name, strlen(name), value, err);
}

/* (megatron_argsInt.h) */
const char *megatron_flag_name(const char *dest, char *buf, size_t cap)
{
    for (size_t i = 0; i < N_FLAGS + N_LEGACY; i++)
        if (strcmp(flag_at(i)->dest, dest) == 0) {
            const char *f = flag_at(i)->flags;
            snprintf(buf, cap, "%.*s", (int)strcspn(f, "|"), f);
            return buf;
        }
    snprintf(buf, cap, "%s", dest);
    return buf;
}

/* (megatron_argsInt.h) */
bool megatron_arg_at_default(const megatron_arg_t *x)
{
    char d[256], v[256];
    plain_value(x->flag->def, d, sizeof d);
    plain_value(x->value, v, sizeof v);
    if (strcmp(d, v) == 0)
        return true;
    double dd, vv;
    if (megatron_parse_double(d, &dd) && megatron_parse_double(v, &vv))
        return dd == vv;
    if (strcmp(d, "None") == 0 && strcmp(v, "False") == 0)
        return true; /* switches whose default is None act as False */
    return false;
}

/* ------------------------------------------------------------ word lists */

/* (megatron_argsInt.h) */
bool megatron_is_flag_word(const char *w)
{
    return w[0] == '-' && w[1] == '-' && w[2] != '\0';
}

int megatron_args_parse_argv(megatron_args_t *a, int argc, const char *const *argv, err_t *err)
{
    for (int i = 0; i < argc; i++) {
        const char *w = argv[i];
        if (!megatron_is_flag_word(w)) {
            if (w[0] == '\0')
                continue;
            return err_setf(err, ERR_INPUT, a->origin, w,
                            "unexpected word after %s (Megatron arguments start with --; a "
                            "script's unquoted ${ARRAY[@]} splits a quoted item with blanks "
                            "into words, as bash does)",
                            i > 0 ? argv[i - 1] : "nothing");
        }
        const char *eq = strchr(w, '=');
        size_t len = eq ? (size_t)(eq - w) : strlen(w);
        bool negative;
        const mflag_t *f = find_flag(w, len, &negative);
        if (!f)
            return unknown_flag(a, w, len, err);
        bool is_switch = f->kind == MF_ON || f->kind == MF_OFF || f->kind == MF_BOOL;
        int rc;
        if (is_switch) {
            if (eq)
                return err_setf(err, ERR_INPUT, a->origin, w, "is a switch and takes no value");
            if (i + 1 < argc && argv[i + 1][0] && !megatron_is_flag_word(argv[i + 1]))
                return err_setf(err, ERR_INPUT, a->origin, argv[i + 1],
                                "unexpected word after the switch %.*s", (int)len, w);
            rc = set_len(a, w, len, NULL, err);
        } else if (eq) {
            rc = set_len(a, w, len, eq + 1, err);
        } else if (f->nargs == 0) {
            if (i + 1 >= argc || megatron_is_flag_word(argv[i + 1]))
                return err_setf(err, ERR_INPUT, a->origin, w, "needs a value");
            rc = set_len(a, w, len, argv[++i], err);
        } else {
            /* One or more values, up to the next flag. */
            char joined[1024] = "";
            int j = i + 1;
            for (; j < argc && !megatron_is_flag_word(argv[j]); j++) {
                if (strlen(joined) + strlen(argv[j]) + 2 > sizeof joined)
                    return err_setf(err, ERR_INPUT, a->origin, w, "too many values");
                if (joined[0])
                    strcat(joined, " ");
                strcat(joined, argv[j]);
            }
            if (j == i + 1)
                return err_setf(err, ERR_INPUT, a->origin, w, "needs at least one value");
            i = j - 1;
            rc = set_len(a, w, len, joined, err);
        }
        if (rc)
            return rc;
    }
    return ERR_OK;
}

int megatron_args_read(const char *text, size_t len, const char *origin, megatron_args_t *a,
                       err_t *err)
{
    megatron_args_init(a, origin);
    int rc = megatron_args_parse_text(a, text, len, err);
    return rc ? rc : megatron_args_finish(a, err);
}
