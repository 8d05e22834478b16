/* megatron_args: Megatron-LM pretrain_gpt.py arguments as read, each
 * checked against the flag table, which comes from Megatron-LM's own parser
 * (inputs/megatron_flags.tsv) plus older releases' spellings. What they
 * mean for the model, layout and options is megatron_interp.c's. */
#include "inputs/megatronInt.h"

#include <ctype.h>
#include <errno.h>
#include <fnmatch.h>
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

/* (megatronInt.h) */
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

/* (megatronInt.h) */
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

/* (megatronInt.h) */
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

/* (megatronInt.h) */
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

/* (megatronInt.h) */
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

/* ------------------------------------------------------------ shell text */

/* The text is split the way a shell would for the parts launch scripts
 * use: comments, backslash-newline, quotes, NAME=value, NAME+=value,
 * NAME=( ... ) and NAME+=( ... ) assignments, $NAME / ${NAME} / ${NAME[@]}
 * / ${NAME:-default} expansions (unquoted ones split at blanks), commands
 * ended by newlines, ';', '&&', '||' and '|', and if / elif / else / fi
 * whose conditions are string tests ([[ A == B ]], [ A != B ], -z, -n,
 * joined by || and &&, negated by !): a branch whose condition is false
 * is not read, and when a condition cannot be decided (a file test, a
 * value from outside the text) no branch of that if is read, with a
 * note. (An assignment on the same line as its "then" is read before the
 * condition is decided.) */

typedef struct {
    char **w;
    int n, cap;
} words_t;

typedef struct {
    char name[64];
    words_t value; /* one word for a scalar */
} shvar_t;

/* One open if: which of its branches is read. */
typedef struct {
    bool outer;   /* the if itself is read (its enclosing branch is) */
    bool in_cond; /* reading the condition (before its then) */
    int cond;     /* the condition so far: 1 true, 0 false, -1 undecided */
    char op[3];   /* the operator joining the next test ("||", "&&") */
    bool taken;   /* a branch has been read: the later ones are not */
    bool unknown; /* a condition was undecided: no branch is read */
    bool active;  /* the branch being read now is */
    int line;     /* where the if is */
    char kind;    /* 'i' if, 'f' for, 'w' while / until, 'c' case */
    bool until;   /* an until loop: its condition negated */
    char var[64]; /* for: the loop variable */
    words_t items; /* for: the values (the first is read); case: its word */
    bool arm_wait; /* case: the next command starts with a pattern */
    char pats[256]; /* case: patterns of the arm so far (a|b), one a line */
} sh_if_t;

#define SH_MAX_IF 32

typedef struct {
    megatron_args_t *a;
    const char *s;
    size_t len, pos;
    int line;
    char sep[3];       /* what ended the last command: "\n", ";", "||", "&&", "|", "&" */
    sh_if_t ifs[SH_MAX_IF];
    int n_ifs;
    shvar_t *vars;
    int n_vars, cap_vars;
    words_t cmd;       /* the command being read */
    words_t chosen;    /* the training command (or the pasted flags) */
    bool chose_script; /* chosen holds a command with a Python script */
    int oom;
    bool too_big;      /* the expansions passed MEGATRON_MAX_EXPANDED_BYTES */
    size_t made;       /* bytes of words made so far, the text's own included */
    err_t *err;
    bool collect;      /* keep the script and every word after it (Bridge) */
    int depth;         /* texts read inside texts (heredocs, bash -c, eval) */
    /* a heredoc of the command being read: its delimiter, then its body */
    bool hd_pending, hd_quoted, hd_strip;
    char hd_delim[64];
    char *heredoc;
    char *herestring;  /* the word after <<< */
    int hs_index;      /* where in the command that word is (-1: none) */
    bool noted_args;   /* "$@" / $# said once */
    int sb_nodes, sb_tasks; /* #SBATCH --nodes, --ntasks-per-node / --gpus-per-node */
    bool single;       /* the script runs as "python script.py": one process */
} shell_t;

#define SH_MAX_DEPTH 8

/* Charge n bytes of words against the cap: every byte of a word, read or
 * expanded, passes here, so a variable that doubles itself stops the
 * reader after MEGATRON_MAX_EXPANDED_BYTES of work, not of memory. */
static int sh_charge(shell_t *sh, size_t n)
{
    if (n > MEGATRON_MAX_EXPANDED_BYTES - sh->made) {
        sh->too_big = true;
        return -1;
    }
    sh->made += n;
    return 0;
}

static void words_free(words_t *w)
{
    for (int i = 0; i < w->n; i++)
        free(w->w[i]);
    free(w->w);
    memset(w, 0, sizeof *w);
}

static int words_push(shell_t *sh, words_t *w, const char *text, size_t n)
{
    if (w->n >= MEGATRON_MAX_WORDS) {
        sh->too_big = true;
        return -1;
    }
    if (sh_charge(sh, n + 1))
        return -1;
    if (w->n == w->cap) {
        int cap = w->cap ? 2 * w->cap : 32;
        char **p = realloc(w->w, (size_t)cap * sizeof *p);
        if (!p)
            return sh->oom = 1, -1;
        w->w = p;
        w->cap = cap;
    }
    char *c = malloc(n + 1);
    if (!c)
        return sh->oom = 1, -1;
    if (n) /* an empty quoted word ("") has no text at all */
        memcpy(c, text, n);
    c[n] = '\0';
    w->w[w->n++] = c;
    return 0;
}

static shvar_t *var_find(shell_t *sh, const char *name, size_t n)
{
    for (int i = 0; i < sh->n_vars; i++)
        if (strlen(sh->vars[i].name) == n && strncmp(sh->vars[i].name, name, n) == 0)
            return &sh->vars[i];
    return NULL;
}

static shvar_t *var_set(shell_t *sh, const char *name, size_t n)
{
    shvar_t *v = var_find(sh, name, n);
    if (v) {
        words_free(&v->value);
        return v;
    }
    if (sh->n_vars == sh->cap_vars) {
        int cap = sh->cap_vars ? 2 * sh->cap_vars : 16;
        shvar_t *p = realloc(sh->vars, (size_t)cap * sizeof *p);
        if (!p)
            return sh->oom = 1, NULL;
        sh->vars = p;
        sh->cap_vars = cap;
    }
    v = &sh->vars[sh->n_vars++];
    memset(v, 0, sizeof *v);
    snprintf(v->name, sizeof v->name, "%.*s", (int)(n < 63 ? n : 63), name);
    return v;
}

/* Whether the command being read is in a branch that is read. */
static bool sh_active(const shell_t *sh)
{
    if (sh->n_ifs == 0)
        return true;
    const sh_if_t *t = &sh->ifs[sh->n_ifs - 1];
    return t->outer && t->active && !t->in_cond;
}

/* A growing buffer for the word being read. */
typedef struct {
    char *b;
    size_t n, cap;
    bool any;     /* the word exists even if empty ("" or '') */
    bool split;   /* an unquoted expansion: split it on blanks */
} wbuf_t;

static int wb_put(shell_t *sh, wbuf_t *b, const char *t, size_t n)
{
    if (sh_charge(sh, n))
        return -1;
    if (b->n + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 64;
        while (cap < b->n + n + 1)
            cap *= 2;
        char *p = realloc(b->b, cap);
        if (!p)
            return sh->oom = 1, -1;
        b->b = p;
        b->cap = cap;
    }
    memcpy(b->b + b->n, t, n);
    b->n += n;
    b->b[b->n] = '\0';
    b->any = true;
    return 0;
}

static bool name_char(char c, bool first)
{
    return c == '_' || isalpha((unsigned char)c) || (!first && isdigit((unsigned char)c));
}

static int word_end(shell_t *sh, wbuf_t *b, words_t *out);

static int expand(shell_t *sh, wbuf_t *b, words_t *out, bool quoted);

/* Expand the text t[0..n) as a word (quotes removed, $-expressions
 * expanded), appending to b: the default of ${X:-...}, a pattern, the
 * inside of $((...)). */
static int expand_text(shell_t *sh, const char *t, size_t n, wbuf_t *b, words_t *out,
                       bool quoted)
{
    const char *s0 = sh->s;
    size_t len0 = sh->len, pos0 = sh->pos;
    int rc = 0;
    sh->s = t;
    sh->len = n;
    sh->pos = 0;
    bool dq = false;
    while (!rc && sh->pos < sh->len) {
        char c = t[sh->pos];
        if (c == '\'' && !dq) {
            size_t end = sh->pos + 1;
            while (end < n && t[end] != '\'')
                end++;
            rc = wb_put(sh, b, t + sh->pos + 1, (end < n ? end : n) - sh->pos - 1);
            b->any = true;
            sh->pos = end < n ? end + 1 : n;
        } else if (c == '"') {
            dq = !dq;
            b->any = true;
            sh->pos++;
        } else if (c == '\\' && sh->pos + 1 < n) {
            rc = wb_put(sh, b, t + sh->pos + 1, 1);
            sh->pos += 2;
        } else if (c == '$') {
            sh->pos++;
            rc = expand(sh, b, out, quoted || dq);
        } else {
            rc = wb_put(sh, b, &c, 1);
            sh->pos++;
        }
    }
    sh->s = s0;
    sh->len = len0;
    sh->pos = pos0;
    return rc;
}

/* Shell arithmetic over integers: + - * / % and parentheses, names read
 * as variables. false when the text cannot decide it (a value from
 * outside the text, anything else). */
typedef struct {
    shell_t *sh;
    const char *p;
    bool ok;
} arith_t;

static long arith_sum(arith_t *x);

static void arith_blank(arith_t *x)
{
    while (*x->p == ' ' || *x->p == '\t' || *x->p == '\n')
        x->p++;
}

static long arith_atom(arith_t *x)
{
    arith_blank(x);
    if (*x->p == '(') {
        x->p++;
        long v = arith_sum(x);
        arith_blank(x);
        if (*x->p == ')')
            x->p++;
        else
            x->ok = false;
        return v;
    }
    if (*x->p == '-' || *x->p == '+') {
        bool neg = *x->p++ == '-';
        long v = arith_atom(x);
        return neg ? -v : v;
    }
    if (isdigit((unsigned char)*x->p)) {
        char *end;
        errno = 0;
        long v = strtol(x->p, &end, 10);
        if (errno)
            x->ok = false;
        x->p = end;
        return v;
    }
    if (name_char(*x->p, true)) {
        const char *n = x->p;
        while (name_char(*x->p, false))
            x->p++;
        shvar_t *v = var_find(x->sh, n, (size_t)(x->p - n));
        long l;
        if (!v || v->value.n != 1 || !megatron_parse_long(v->value.w[0], &l)) {
            x->ok = false;
            return 0;
        }
        return l;
    }
    x->ok = false;
    return 0;
}

static long arith_product(arith_t *x)
{
    long v = arith_atom(x);
    for (;;) {
        arith_blank(x);
        char op = *x->p;
        if (op != '*' && op != '/' && op != '%')
            return v;
        x->p++;
        long w = arith_atom(x);
        if (op == '*') {
            if (w != 0 && (labs(v) > (1L << 40) || labs(w) > (1L << 40))) {
                x->ok = false;
                return 0;
            }
            v *= w;
        } else if (w == 0) {
            x->ok = false;
            return 0;
        } else {
            v = op == '/' ? v / w : v % w;
        }
    }
}

static long arith_sum(arith_t *x)
{
    long v = arith_product(x);
    for (;;) {
        arith_blank(x);
        char op = *x->p;
        if (op != '+' && op != '-')
            return v;
        x->p++;
        long w = arith_product(x);
        if (labs(v) > (1L << 50) || labs(w) > (1L << 50)) {
            x->ok = false;
            return 0;
        }
        v = op == '+' ? v + w : v - w;
    }
}

/* The value of $((t[0..n))), or false when the text does not decide it. */
static bool arith_eval(shell_t *sh, const char *t, size_t n, long *out)
{
    wbuf_t tmp = {0};
    words_t none = {0};
    if (expand_text(sh, t, n, &tmp, &none, true)) {
        free(tmp.b);
        words_free(&none);
        return false;
    }
    words_free(&none);
    arith_t x = {sh, tmp.b ? tmp.b : "", true};
    long v = arith_sum(&x);
    arith_blank(&x);
    bool ok = x.ok && *x.p == '\0' && tmp.b && !strchr(tmp.b, '$');
    free(tmp.b);
    *out = v;
    return ok;
}

/* Whether a variable holds nothing ("" or no items). */
static bool var_empty(const shvar_t *v)
{
    return v->value.n == 0 || (v->value.n == 1 && v->value.w[0][0] == '\0');
}

/* ${X%pat} ${X%%pat} ${X#pat} ${X##pat}: the value without the shortest
 * or longest suffix or prefix matching the glob pattern. */
static void strip_pattern(char *v, const char *pat, bool suffix, bool longest)
{
    size_t n = strlen(v);
    char *copy = strdup(v);
    if (!copy)
        return;
    for (size_t k = 0; k <= n; k++) {
        size_t cut;
        if (suffix) {
            size_t at = longest ? k : n - k;
            if (fnmatch(pat, copy + at, 0) == 0) {
                v[at] = '\0';
                break;
            }
        } else {
            cut = longest ? n - k : k;
            char saved = copy[cut];
            copy[cut] = '\0';
            bool match = fnmatch(pat, copy, 0) == 0;
            copy[cut] = saved;
            if (match) {
                memmove(v, v + cut, n - cut + 1);
                break;
            }
        }
    }
    free(copy);
}

/* What "$@", "$*" and $# stand for: the script's own arguments, which a
 * file read alone does not have (they are empty, as when it runs with
 * none). Said once. */
static void note_args(shell_t *sh)
{
    if (sh->noted_args)
        return;
    sh->noted_args = true;
    notes_add(&sh->a->notes, NOTE_ASSUMED, "$@",
              "line %d: the script's own arguments are taken as none (as when it runs without "
              "any); flags it would pass on go on scaleplan's command line",
              sh->line);
}

/* Just past the parenthesis that closes the one at sh->s[p] (the end of
 * the text when none does). */
static size_t paren_end(const shell_t *sh, size_t p)
{
    size_t depth = 0, q = p;
    for (; q < sh->len; q++) {
        if (sh->s[q] == '(')
            depth++;
        else if (sh->s[q] == ')' && --depth == 0)
            break;
    }
    return q < sh->len ? q + 1 : q;
}

/* Expand one $-expression at sh->pos (just after '$'). Array expansions
 * ("${A[@]}") outside double quotes add whole words to out directly; other
 * expansions append to the word in b. */
static int expand(shell_t *sh, wbuf_t *b, words_t *out, bool quoted)
{
    const char *s = sh->s;
    size_t p = sh->pos;
    if (p + 1 < sh->len && s[p] == '(' && s[p + 1] == '(') {
        /* $((arithmetic)) */
        size_t end = paren_end(sh, p);
        sh->pos = end;
        long v;
        if (end - p >= 4 && arith_eval(sh, s + p + 2, end - p - 4, &v)) {
            char num[32];
            int k = snprintf(num, sizeof num, "%ld", v);
            return wb_put(sh, b, num, (size_t)k);
        }
        return wb_put(sh, b, "$", 1) || wb_put(sh, b, s + p, end - p);
    }
    if (p < sh->len && s[p] == '(') {
        /* $(command): kept as written; a value that needs it will say so. */
        size_t end = paren_end(sh, p);
        int rc = wb_put(sh, b, "$", 1) || wb_put(sh, b, s + p, end - p);
        sh->pos = end;
        return rc;
    }
    if (p < sh->len && (s[p] == '@' || s[p] == '*' || s[p] == '#')) {
        sh->pos = p + 1;
        note_args(sh);
        b->any = b->any || s[p] == '#';
        return s[p] == '#' ? wb_put(sh, b, "0", 1) : 0;
    }
    if (p < sh->len && (s[p] == '?' || s[p] == '$' || s[p] == '!' || s[p] == '-')) {
        sh->pos = p + 1;
        char kept[3] = {'$', s[p], '\0'};
        return wb_put(sh, b, kept, 2);
    }
    const char *name;
    size_t n = 0;
    bool array = false, at = false, length = false;
    const char *op = NULL, *arg = NULL;
    size_t op_len = 0, arg_len = 0;
    if (p < sh->len && s[p] == '{') {
        /* the matching brace: ${A:-${B}_x} nests */
        size_t close = p + 1, depth = 1;
        for (; close < sh->len; close++) {
            if (s[close] == '{' && s[close - 1] == '$')
                depth++;
            else if (s[close] == '}' && --depth == 0)
                break;
        }
        if (close >= sh->len)
            return wb_put(sh, b, "$", 1);
        name = s + p + 1;
        sh->pos = close + 1;
        if ((name[0] == '@' || name[0] == '*' || name[0] == '#') && name + 1 == s + close) {
            note_args(sh);
            return name[0] == '#' ? wb_put(sh, b, "0", 1) : 0;
        }
        if (name[0] == '#' && name + 1 < s + close) {
            length = true;
            name++;
        }
        /* a positional parameter (${1:-default}): never set in the text */
        bool positional = name < s + close && isdigit((unsigned char)name[0]);
        while (name + n < s + close &&
               (positional ? isdigit((unsigned char)name[n]) != 0 : name_char(name[n], n == 0)))
            n++;
        const char *rest = name + n;
        if (rest + 3 <= s + close &&
            (strncmp(rest, "[@]", 3) == 0 || strncmp(rest, "[*]", 3) == 0)) {
            array = true;
            at = rest[1] == '@';
            rest += 3;
        }
        static const char *const OPS[] = {":-", ":=", ":+", ":?", "%%", "##", "-", "=", "+",
                                          "?",  "%",  "#"};
        for (size_t i = 0; i < sizeof OPS / sizeof OPS[0] && rest < s + close; i++) {
            size_t k = strlen(OPS[i]);
            if ((size_t)(s + close - rest) >= k && strncmp(rest, OPS[i], k) == 0) {
                op = OPS[i];
                op_len = k;
                arg = rest + k;
                arg_len = (size_t)(s + close - arg);
                break;
            }
        }
        if (!op && rest != s + close) {
            /* something else (${A/x/y}, ${A:1:2}): kept as written */
            return wb_put(sh, b, "$", 1) || wb_put(sh, b, s + p, close + 1 - p);
        }
    } else {
        name = s + p;
        while (p + n < sh->len && name_char(name[n], n == 0))
            n++;
        if (n == 0 && p < sh->len && isdigit((unsigned char)s[p]))
            n = 1; /* $1 */
        if (n == 0)
            return wb_put(sh, b, "$", 1);
        sh->pos = p + n;
    }
    (void)op_len;
    shvar_t *v = var_find(sh, name, n);
    if (length) {
        char num[32];
        int k = snprintf(num, sizeof num, "%zu",
                         !v ? (size_t)0 : array ? (size_t)v->value.n
                                                : (v->value.n ? strlen(v->value.w[0]) : 0));
        return wb_put(sh, b, num, (size_t)k);
    }
    if (op) {
        bool colon = op[0] == ':';
        char kind = colon ? op[1] : op[0];
        bool missing = !v || (colon && var_empty(v));
        if ((kind == '-' || kind == '=') && missing) {
            if (kind == '=' && sh_active(sh) && !isdigit((unsigned char)name[0])) {
                /* ${X:=default} assigns as well */
                wbuf_t tmp = {0};
                words_t none = {0};
                int rc = expand_text(sh, arg, arg_len, &tmp, &none, true);
                words_free(&none);
                shvar_t *nv = rc ? NULL : var_set(sh, name, n);
                if (!rc && (!nv || words_push(sh, &nv->value, tmp.b ? tmp.b : "", tmp.n)))
                    rc = -1;
                free(tmp.b);
                if (rc)
                    return rc;
            }
            size_t before = b->n;
            if (expand_text(sh, arg, arg_len, b, out, quoted))
                return -1;
            if (!quoted && b->n > before)
                b->split = true;
            b->any = true;
            return 0;
        }
        if (kind == '+') {
            if (missing)
                return 0;
            if (expand_text(sh, arg, arg_len, b, out, quoted))
                return -1;
            if (!quoted)
                b->split = true;
            return 0;
        }
        if (kind == '?' && missing)
            return err_setf(sh->err, ERR_INPUT, sh->a->origin, NULL,
                            "line %d: ${%.*s%s...} stops the script when %.*s is not set; set it "
                            "in the file",
                            sh->line, (int)(n < 60 ? n : 60), name, op, (int)(n < 60 ? n : 60),
                            name),
                   -1;
        if ((kind == '%' || kind == '#') && v && !array) {
            wbuf_t pat = {0};
            words_t none = {0};
            int rc = expand_text(sh, arg, arg_len, &pat, &none, true);
            words_free(&none);
            char *val = rc ? NULL : strdup(v->value.n ? v->value.w[0] : "");
            if (!rc && val) {
                strip_pattern(val, pat.b ? pat.b : "", kind == '%', op_len == 2);
                rc = wb_put(sh, b, val, strlen(val));
                if (!rc && !quoted && val[0])
                    b->split = true;
            } else if (!rc) {
                rc = -1;
                sh->oom = 1;
            }
            free(val);
            free(pat.b);
            return rc;
        }
    }
    if (!v) {
        /* Unknown (set outside the text): kept as written. */
        char kept[96];
        int k = snprintf(kept, sizeof kept, "${%.*s}", (int)(n < 80 ? n : 80), name);
        return wb_put(sh, b, kept, (size_t)k);
    }
    /* in an assignment (X="... ${A[@]}") the items are joined with blanks */
    bool assigning = false;
    if (b->any && b->b) {
        size_t e = strcspn(b->b, "=");
        assigning = e > 0 && e < b->n;
        for (size_t i = 0; assigning && i < e; i++)
            assigning = name_char(b->b[i], i == 0) || (b->b[i] == '+' && i == e - 1 && i > 0);
    }
    if (array && (!quoted || at) && !assigning) {
        /* Words of the array become words of the command ("${A[@]}" too);
         * unquoted, each item is split at blanks as well ("--fp8-format
         * hybrid" as one item is two words). */
        for (int i = 0; i < v->value.n; i++) {
            if (i == 0 && b->any) {
                if (wb_put(sh, b, v->value.w[0], strlen(v->value.w[0])))
                    return -1;
                if (!quoted)
                    b->split = true;
                continue;
            }
            if (b->any) {
                if (word_end(sh, b, out))
                    return -1;
            }
            if (wb_put(sh, b, v->value.w[i], strlen(v->value.w[i])))
                return -1;
            b->any = true;
            if (!quoted)
                b->split = true;
        }
        return 0;
    }
    for (int i = 0; i < v->value.n; i++) {
        if (i && wb_put(sh, b, " ", 1))
            return -1;
        if (wb_put(sh, b, v->value.w[i], strlen(v->value.w[i])))
            return -1;
    }
    if (!quoted && v->value.n)
        b->split = true;
    return 0;
}

/* Finish the word in b into out (splitting an unquoted expansion). */
static int word_end(shell_t *sh, wbuf_t *b, words_t *out)
{
    if (!b->any)
        return 0;
    int rc = 0;
    if (b->split) {
        char *p = b->b;
        while (*p && !rc) {
            while (*p == ' ' || *p == '\t' || *p == '\n')
                p++;
            size_t n = strcspn(p, " \t\n");
            if (n)
                rc = words_push(sh, out, p, n);
            p += n;
        }
    } else {
        rc = words_push(sh, out, b->b, b->n);
    }
    b->n = 0;
    b->any = b->split = false;
    if (b->b)
        b->b[0] = '\0';
    return rc;
}

/* A #SBATCH line's node and task counts (--nodes=N / -N N,
 * --ntasks-per-node=M, --gpus-per-node=M). */
static void sbatch_directive(shell_t *sh, const char *t, size_t n)
{
    char line[512];
    snprintf(line, sizeof line, "%.*s", (int)(n < 511 ? n : 511), t);
    static const struct {
        const char *flag;
        int which; /* 0 nodes, 1 tasks */
    } F[] = {{"--nodes", 0}, {"-N", 0}, {"--ntasks-per-node", 1}, {"--gpus-per-node", 1}};
    for (char *w = strtok(line, " \t"); w; w = strtok(NULL, " \t")) {
        for (size_t i = 0; i < sizeof F / sizeof F[0]; i++) {
            size_t k = strlen(F[i].flag);
            if (strncmp(w, F[i].flag, k) != 0 || (w[k] != '=' && w[k] != '\0'))
                continue;
            const char *v = w[k] == '=' ? w + k + 1 : strtok(NULL, " \t");
            long x;
            if (v && megatron_parse_long(v, &x) && x > 0 && x < (1 << 20))
                *(F[i].which ? &sh->sb_tasks : &sh->sb_nodes) = (int)x;
        }
    }
}

/* Skip one word of shell text at sh->pos (a redirection's target):
 * blanks first, then up to the next blank or operator, quotes kept
 * together. */
static void skip_word(shell_t *sh)
{
    const char *s = sh->s;
    while (sh->pos < sh->len && (s[sh->pos] == ' ' || s[sh->pos] == '\t'))
        sh->pos++;
    char quote = 0;
    while (sh->pos < sh->len) {
        char c = s[sh->pos];
        if (quote) {
            if (c == quote)
                quote = 0;
        } else if (c == '\'' || c == '"') {
            quote = c;
        } else if (strchr(" \t\r\n;&|<>()", c)) {
            break;
        }
        sh->pos++;
    }
}

/* A heredoc's body with $-expressions and \$ \\ \` escapes expanded (its
 * quotes are text), into a new string. */
static char *heredoc_expand(shell_t *sh, const char *t, size_t n)
{
    wbuf_t b = {0};
    words_t none = {0};
    const char *s0 = sh->s;
    size_t len0 = sh->len, pos0 = sh->pos;
    int rc = 0;
    sh->s = t;
    sh->len = n;
    sh->pos = 0;
    while (!rc && sh->pos < n) {
        char c = t[sh->pos];
        if (c == '\\' && sh->pos + 1 < n && strchr("$\\`\n", t[sh->pos + 1])) {
            if (t[sh->pos + 1] != '\n')
                rc = wb_put(sh, &b, t + sh->pos + 1, 1);
            sh->pos += 2;
        } else if (c == '$') {
            sh->pos++;
            rc = expand(sh, &b, &none, true);
        } else {
            rc = wb_put(sh, &b, &c, 1);
            sh->pos++;
        }
    }
    sh->s = s0;
    sh->len = len0;
    sh->pos = pos0;
    words_free(&none);
    if (rc) {
        free(b.b);
        return NULL;
    }
    if (!b.b)
        b.b = strdup("");
    return b.b;
}

/* The body of the heredoc announced on the line just ended: the lines up
 * to its delimiter (leading tabs dropped for <<-), expanded unless the
 * delimiter was quoted. */
static int read_heredoc(shell_t *sh)
{
    const char *s = sh->s;
    size_t start = sh->pos, body_end = sh->pos;
    size_t dl = strlen(sh->hd_delim);
    bool found = false;
    while (sh->pos < sh->len) {
        size_t line = sh->pos, eol = line;
        while (eol < sh->len && s[eol] != '\n')
            eol++;
        size_t from = line;
        while (sh->hd_strip && from < eol && s[from] == '\t')
            from++;
        size_t to = eol;
        while (to > from && (s[to - 1] == '\r' || s[to - 1] == ' '))
            to--;
        sh->pos = eol < sh->len ? eol + 1 : eol;
        sh->line++;
        if (to - from == dl && strncmp(s + from, sh->hd_delim, dl) == 0) {
            found = true;
            break;
        }
        body_end = sh->pos;
    }
    if (!found)
        body_end = sh->pos;
    sh->hd_pending = false;
    free(sh->heredoc);
    sh->heredoc = NULL;
    /* <<- drops the tabs that start each line */
    char *raw = malloc(body_end - start + 1);
    if (!raw)
        return sh->oom = 1, -1;
    size_t k = 0;
    bool bol = true;
    for (size_t i = start; i < body_end; i++) {
        if (sh->hd_strip && bol && s[i] == '\t')
            continue;
        bol = s[i] == '\n';
        raw[k++] = s[i];
    }
    raw[k] = '\0';
    if (sh_charge(sh, k)) {
        free(raw);
        return -1;
    }
    if (sh->hd_quoted) {
        sh->heredoc = raw;
        return 0;
    }
    sh->heredoc = heredoc_expand(sh, raw, k);
    free(raw);
    return sh->heredoc ? 0 : -1;
}

/* A redirection at sh->pos ('<' or '>', or "&>"): a heredoc (<<WORD,
 * <<-WORD, <<'WORD') is noted for the end of the line; a here-string
 * (<<< WORD) becomes the next word, marked; any other (> file, 2>&1,
 * < file) is dropped with its target. b holds the word read so far (the
 * "2" of 2>&1 is dropped). */
static int redirection(shell_t *sh, wbuf_t *b, words_t *out)
{
    const char *s = sh->s;
    size_t p = sh->pos;
    if (b->any && !b->split) {
        bool digits = true;
        for (size_t i = 0; i < b->n; i++)
            digits = digits && isdigit((unsigned char)b->b[i]);
        if (digits) {
            b->n = 0;
            b->any = false;
            b->b[0] = '\0';
        }
    }
    if (word_end(sh, b, out))
        return -1;
    if (p + 2 < sh->len && strncmp(s + p, "<<<", 3) == 0) {
        sh->pos = p + 3;
        sh->hs_index = out->n; /* the next word is the here-string */
        return 0;
    }
    if (p + 1 < sh->len && strncmp(s + p, "<<", 2) == 0) {
        sh->pos = p + 2;
        bool strip = sh->pos < sh->len && s[sh->pos] == '-';
        if (strip)
            sh->pos++;
        while (sh->pos < sh->len && (s[sh->pos] == ' ' || s[sh->pos] == '\t'))
            sh->pos++;
        char delim[64];
        size_t k = 0;
        bool quoted = false;
        while (sh->pos < sh->len && !strchr(" \t\r\n;&|<>()", s[sh->pos])) {
            char c = s[sh->pos++];
            if (c == '\'' || c == '"' || c == '\\') {
                quoted = true;
                continue;
            }
            if (k + 1 < sizeof delim)
                delim[k++] = c;
        }
        delim[k] = '\0';
        if (k == 0)
            return 0;
        sh->hd_pending = true;
        sh->hd_quoted = quoted;
        sh->hd_strip = strip;
        snprintf(sh->hd_delim, sizeof sh->hd_delim, "%s", delim);
        return 0;
    }
    /* > >> >| < <> >& &> 2>&1: the operator, then its target unless it
     * duplicates a descriptor (>&1, <&-) */
    while (sh->pos < sh->len && strchr("<>&|", s[sh->pos])) {
        if (s[sh->pos] == '|' && (sh->pos == p || s[sh->pos - 1] != '>'))
            break;
        sh->pos++;
    }
    if (s[sh->pos - 1] == '&' && sh->pos > p + 1 && sh->pos < sh->len &&
        (isdigit((unsigned char)s[sh->pos]) || s[sh->pos] == '-')) {
        while (sh->pos < sh->len && (isdigit((unsigned char)s[sh->pos]) || s[sh->pos] == '-'))
            sh->pos++;
        return 0;
    }
    skip_word(sh);
    return 0;
}

/* Read one word list up to the end of a command (or, inside an array
 * assignment, up to ')'). Returns 1 at a command end, 2 at ')', 0 at the
 * end of the text, -1 on error. */
static int read_words(shell_t *sh, words_t *out, bool in_array)
{
    wbuf_t b = {0};
    int result = 0;
    const char *s = sh->s;
    while (sh->pos < sh->len) {
        char c = s[sh->pos];
        if (c == '\\') {
            if (sh->pos + 1 < sh->len && s[sh->pos + 1] == '\n') {
                sh->pos += 2;
                sh->line++;
                continue;
            }
            if (sh->pos + 1 < sh->len) {
                if (wb_put(sh, &b, s + sh->pos + 1, 1))
                    goto fail;
                sh->pos += 2;
                continue;
            }
            sh->pos++;
            continue;
        }
        if (c == '\'') {
            size_t end = sh->pos + 1;
            while (end < sh->len && s[end] != '\'')
                end++;
            if (end >= sh->len) {
                err_setf(sh->err, ERR_INPUT, sh->a->origin, NULL,
                         "line %d: a single quote is not closed", sh->line);
                goto fail;
            }
            if (wb_put(sh, &b, s + sh->pos + 1, end - sh->pos - 1))
                goto fail;
            b.any = true;
            sh->pos = end + 1;
            continue;
        }
        if (c == '"') {
            sh->pos++;
            b.any = true;
            bool closed = false;
            while (sh->pos < sh->len) {
                char d = s[sh->pos];
                if (d == '"') {
                    closed = true;
                    sh->pos++;
                    break;
                }
                if (d == '\\' && sh->pos + 1 < sh->len && strchr("\"\\$`\n", s[sh->pos + 1])) {
                    if (s[sh->pos + 1] != '\n' && wb_put(sh, &b, s + sh->pos + 1, 1))
                        goto fail;
                    sh->pos += 2;
                    continue;
                }
                if (d == '$') {
                    sh->pos++;
                    if (expand(sh, &b, out, true))
                        goto fail;
                    continue;
                }
                if (d == '\n')
                    sh->line++;
                if (wb_put(sh, &b, &d, 1))
                    goto fail;
                sh->pos++;
            }
            if (!closed) {
                err_setf(sh->err, ERR_INPUT, sh->a->origin, NULL,
                         "line %d: a double quote is not closed", sh->line);
                goto fail;
            }
            continue;
        }
        if (c == '$') {
            sh->pos++;
            if (expand(sh, &b, out, false))
                goto fail;
            continue;
        }
        if (c == '#' && !b.any) {
            size_t from = sh->pos;
            while (sh->pos < sh->len && s[sh->pos] != '\n')
                sh->pos++;
            if (sh->pos - from > 8 && strncmp(s + from, "#SBATCH", 7) == 0)
                sbatch_directive(sh, s + from + 7, sh->pos - from - 7);
            continue;
        }
        if (c == ' ' || c == '\t' || c == '\r') {
            if (word_end(sh, &b, out))
                goto fail;
            sh->pos++;
            continue;
        }
        if (c == '\n') {
            if (word_end(sh, &b, out))
                goto fail;
            sh->pos++;
            sh->line++;
            if (sh->hd_pending && read_heredoc(sh))
                goto fail;
            if (!in_array) {
                snprintf(sh->sep, sizeof sh->sep, "\n");
                result = 1;
                goto done;
            }
            continue;
        }
        if (in_array && c == ')') {
            if (word_end(sh, &b, out))
                goto fail;
            sh->pos++;
            result = 2;
            goto done;
        }
        if (!in_array && c == '<' && sh->pos + 1 < sh->len && !strchr("<&", s[sh->pos + 1])) {
            /* a placeholder as docs write one (--save <Specify path>):
             * its text, not a redirection */
            size_t close = sh->pos + 1;
            while (close < sh->len && !strchr("<>\n", s[close]))
                close++;
            if (close < sh->len && s[close] == '>' && close > sh->pos + 1) {
                for (; sh->pos <= close; sh->pos++) {
                    char t = s[sh->pos] == ' ' || s[sh->pos] == '\t' ? '_' : s[sh->pos];
                    if (wb_put(sh, &b, &t, 1))
                        goto fail;
                }
                continue;
            }
        }
        if (!in_array && (c == '<' || c == '>' ||
                          (c == '&' && sh->pos + 1 < sh->len && s[sh->pos + 1] == '>'))) {
            if (redirection(sh, &b, out))
                goto fail;
            continue;
        }
        if (!in_array && (c == ';' || c == '|' || c == '&')) {
            if (word_end(sh, &b, out))
                goto fail;
            size_t from = sh->pos;
            while (sh->pos < sh->len && strchr(";|&", s[sh->pos]))
                sh->pos++;
            size_t n = sh->pos - from;
            snprintf(sh->sep, sizeof sh->sep, "%.*s", (int)(n < 2 ? n : 2), s + from);
            result = 1;
            goto done;
        }
        /* NAME=( starts an array assignment, NAME+=( an append. */
        if (!in_array && c == '(' && b.any && b.n > 1 && b.b[b.n - 1] == '=' && !b.split) {
            bool append = b.n > 2 && b.b[b.n - 2] == '+';
            size_t n = b.n - 1 - (append ? 1 : 0);
            bool ok = n > 0;
            for (size_t i = 0; i < n; i++)
                ok = ok && name_char(b.b[i], i == 0);
            if (ok) {
                words_t items = {0};
                sh->pos++;
                int r = read_words(sh, &items, true);
                if (r < 0) {
                    words_free(&items);
                    goto fail;
                }
                if (r != 2) {
                    words_free(&items);
                    err_setf(sh->err, ERR_INPUT, sh->a->origin, NULL,
                             "line %d: the array %.*s=( ... ) is not closed", sh->line, (int)n,
                             b.b);
                    goto fail;
                }
                if (!sh_active(sh)) {
                    /* in a branch that is not read */
                    words_free(&items);
                } else if (append && var_find(sh, b.b, n)) {
                    shvar_t *v = var_find(sh, b.b, n);
                    for (int i = 0; i < items.n; i++)
                        if (words_push(sh, &v->value, items.w[i], strlen(items.w[i]))) {
                            words_free(&items);
                            goto fail;
                        }
                    words_free(&items);
                } else {
                    shvar_t *v = var_set(sh, b.b, n);
                    if (!v) {
                        words_free(&items);
                        goto fail;
                    }
                    v->value = items;
                }
                b.n = 0;
                b.any = false;
                continue;
            }
        }
        if (wb_put(sh, &b, &c, 1))
            goto fail;
        sh->pos++;
    }
    if (in_array) {
        result = 0;
        goto done;
    }
    if (word_end(sh, &b, out))
        goto fail;
done:
    if (word_end(sh, &b, out))
        goto fail;
    free(b.b);
    return result;
fail:
    free(b.b);
    return -1;
}

/* NAME=value words at the start of a command: record them; returns how
 * many words they took. */
static int assignments(shell_t *sh, const words_t *cmd, int from)
{
    int i = from;
    for (; i < cmd->n; i++) {
        const char *w = cmd->w[i];
        const char *eq = strchr(w, '=');
        if (!eq || eq == w)
            break;
        bool append = eq > w + 1 && eq[-1] == '+';
        const char *name_end = append ? eq - 1 : eq;
        bool ok = name_end > w;
        for (const char *p = w; p < name_end; p++)
            ok = ok && name_char(*p, p == w);
        if (!ok)
            break;
        shvar_t *old = append ? var_find(sh, w, (size_t)(name_end - w)) : NULL;
        if (old && old->value.n == 1) {
            /* NAME+=value on a scalar: the texts joined */
            size_t a = strlen(old->value.w[0]), b = strlen(eq + 1);
            if (sh_charge(sh, a + b))
                return -1;
            char *joined = malloc(a + b + 1);
            if (!joined)
                return sh->oom = 1, -1;
            memcpy(joined, old->value.w[0], a);
            memcpy(joined + a, eq + 1, b + 1);
            free(old->value.w[0]);
            old->value.w[0] = joined;
            continue;
        }
        if (old) {
            /* NAME+=value on an array: one more item */
            if (words_push(sh, &old->value, eq + 1, strlen(eq + 1)))
                return -1;
            continue;
        }
        shvar_t *v = var_set(sh, w, (size_t)(name_end - w));
        if (!v || words_push(sh, &v->value, eq + 1, strlen(eq + 1)))
            return -1;
    }
    return i - from;
}

static bool ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), m = strlen(suffix);
    return n >= m && strcmp(s + n - m, suffix) == 0;
}

/* torchrun / python -m torch.distributed.run options before the script:
 * --nproc_per_node N and --nnodes N give the world size. */
static int read_launcher(shell_t *sh, const words_t *cmd, int script)
{
    megatron_args_t *a = sh->a;
    for (int i = 0; i < script; i++) {
        const char *w = cmd->w[i], *slash = strrchr(w, '/');
        if (strcmp(slash ? slash + 1 : w, "torchrun") == 0 ||
            strcmp(w, "torch.distributed.run") == 0 || strcmp(w, "torch.distributed.launch") == 0)
            a->nproc_per_node = 1; /* torchrun's default, unless given below */
    }
    for (int i = 0; i < script; i++) {
        const char *w = cmd->w[i];
        const char *eq = strchr(w, '=');
        size_t len = eq ? (size_t)(eq - w) : strlen(w);
        int *dst = NULL;
        if ((len == 16 && strncmp(w, "--nproc_per_node", len) == 0) ||
            (len == 16 && strncmp(w, "--nproc-per-node", len) == 0))
            dst = &a->nproc_per_node;
        else if (len == 8 && strncmp(w, "--nnodes", len) == 0)
            dst = &a->nnodes;
        if (!dst)
            continue;
        const char *v = eq ? eq + 1 : (i + 1 < script ? cmd->w[++i] : "");
        long x;
        if (!megatron_parse_long(v, &x) || x < 1 || x > (1 << 24)) {
            notes_add(&a->notes, NOTE_IGNORED, w,
                      "launcher value '%s' is not a fixed count; give --gpus", v);
            continue;
        }
        *dst = (int)x;
    }
    return 0;
}

static int run_text(shell_t *sh, const char *text, size_t len);

static const char *base_name(const char *w)
{
    const char *slash = strrchr(w, '/');
    return slash ? slash + 1 : w;
}

/* bash -c TEXT / sh -c TEXT anywhere in the command (srun ... bash -x -c
 * "..."): the index of TEXT, or -1. */
static int shell_c_text(const words_t *cmd, int first)
{
    for (int i = first; i < cmd->n; i++) {
        const char *b = base_name(cmd->w[i]);
        if (strcmp(b, "bash") != 0 && strcmp(b, "sh") != 0 && strcmp(b, "zsh") != 0)
            continue;
        for (int j = i + 1; j < cmd->n && cmd->w[j][0] == '-'; j++)
            if (cmd->w[j][1] != '-' && strchr(cmd->w[j], 'c'))
                return j + 1 < cmd->n ? j + 1 : -1;
        return -1;
    }
    return -1;
}

/* The words of a command joined with blanks, as eval reads them. */
static char *join_words(shell_t *sh, const words_t *cmd, int from)
{
    size_t n = 1;
    for (int i = from; i < cmd->n; i++)
        n += strlen(cmd->w[i]) + 1;
    char *t = malloc(n);
    if (!t)
        return sh->oom = 1, NULL;
    t[0] = '\0';
    for (int i = from; i < cmd->n; i++) {
        if (i > from)
            strcat(t, " ");
        strcat(t, cmd->w[i]);
    }
    return t;
}

/* read [-r] A B ... <<< WORD: WORD split at IFS (blanks, or the IFS the
 * text set) into the names. */
static int read_herestring(shell_t *sh, const words_t *cmd, int first)
{
    shvar_t *ifs = var_find(sh, "IFS", 3);
    const char *sep = ifs && ifs->value.n == 1 && ifs->value.w[0][0] ? ifs->value.w[0] : " \t\n";
    const char *p = sh->herestring;
    int names = first + 1;
    while (names < cmd->n && cmd->w[names][0] == '-')
        names++;
    for (int i = names; i < cmd->n; i++) {
        const char *name = cmd->w[i];
        bool ok = name_char(name[0], true);
        for (const char *q = name; ok && *q; q++)
            ok = name_char(*q, q == name);
        if (!ok)
            continue;
        size_t n = i == cmd->n - 1 ? strlen(p) : strcspn(p, sep);
        shvar_t *v = var_set(sh, name, strlen(name));
        if (!v || words_push(sh, &v->value, p, n))
            return -1;
        p += n;
        if (*p)
            p++;
    }
    return 0;
}

/* Decide what one command is: assignments, the training command (words
 * after a Python script), pasted flags, a text to read as a script (a
 * heredoc given to sbatch or bash, bash -c TEXT, eval), or something
 * else. */
static int take_command(shell_t *sh, int start)
{
    words_t *cmd = &sh->cmd;
    int skip = start;
    if (cmd->n > start && (strcmp(cmd->w[start], "export") == 0 ||
                           strcmp(cmd->w[start], "local") == 0 ||
                           strcmp(cmd->w[start], "declare") == 0 ||
                           strcmp(cmd->w[start], "readonly") == 0)) {
        skip = start + 1;
        while (skip < cmd->n && cmd->w[skip][0] == '-' && cmd->w[skip][1] != '-')
            skip++; /* declare -a, export -n */
    }
    int k = assignments(sh, cmd, skip);
    if (k < 0)
        return -1;
    for (int i = skip; i < skip + k; i++) {
        const char *w = cmd->w[i];
        if (skip || cmd->n > skip + k)
            notes_add(&sh->a->notes, NOTE_IGNORED, w,
                      "environment variable: its effect is not modeled");
    }
    int first = skip + k;
    if (first >= cmd->n)
        return 0;
    const char *verb = base_name(cmd->w[first]);
    /* ':' and true only expand their words (: "${TP:=8}") */
    if (strcmp(verb, ":") == 0 || strcmp(verb, "true") == 0)
        return 0;
    if (strcmp(verb, "unset") == 0) {
        for (int i = first + 1; i < cmd->n; i++) {
            shvar_t *v = var_find(sh, cmd->w[i], strlen(cmd->w[i]));
            if (v) {
                words_free(&v->value);
                int at = (int)(v - sh->vars);
                sh->vars[at] = sh->vars[--sh->n_vars];
            }
        }
        return 0;
    }
    if (strcmp(verb, "read") == 0 && sh->herestring)
        return read_herestring(sh, cmd, first);
    /* a heredoc given to a batch system or a shell is the launch script */
    if (sh->heredoc) {
        char *body = sh->heredoc;
        sh->heredoc = NULL;
        int rc = 0;
        if (strcmp(verb, "sbatch") == 0 || strcmp(verb, "bash") == 0 ||
            strcmp(verb, "sh") == 0 || strcmp(verb, "zsh") == 0 || strcmp(verb, "srun") == 0 ||
            strcmp(verb, "salloc") == 0 || strcmp(verb, "qsub") == 0) {
            rc = run_text(sh, body, strlen(body));
            free(body);
            return rc;
        }
        notes_add(&sh->a->notes, NOTE_IGNORED, cmd->w[first],
                  "line %d: a heredoc given to %s, not a shell: its text is not read", sh->line,
                  verb);
        free(body);
    }
    if (strcmp(verb, "eval") == 0) {
        char *t = join_words(sh, cmd, first + 1);
        int rc = t ? run_text(sh, t, strlen(t)) : -1;
        free(t);
        return rc;
    }
    int c = shell_c_text(cmd, first);
    if (c >= 0) {
        char *t = strdup(cmd->w[c]);
        if (!t)
            return sh->oom = 1, -1;
        int rc = run_text(sh, t, strlen(t));
        free(t);
        return rc;
    }
    if (strcmp(verb, "source") == 0 || strcmp(verb, ".") == 0) {
        notes_add(&sh->a->notes, NOTE_IGNORED, cmd->w[first],
                  "line %d: %s is not read (only this text is); the flags it would set go "
                  "in the text or on scaleplan's command line",
                  sh->line, first + 1 < cmd->n ? cmd->w[first + 1] : "the sourced file");
        return 0;
    }
    int script = -1;
    for (int i = first; i < cmd->n; i++)
        if (ends_with(cmd->w[i], ".py")) {
            script = i;
            break;
        }
    words_t *dst = &sh->chosen;
    if (script >= 0) {
        /* The last script command wins: launch scripts sometimes echo the
         * command first. */
        words_free(dst);
        sh->chose_script = true;
        snprintf(sh->a->script, sizeof sh->a->script, "%s", base_name(cmd->w[script]));
        /* "python script.py" with no launcher around it: one process */
        sh->single = sh->depth == 0;
        for (int i = first; i < script; i++) {
            const char *b = base_name(cmd->w[i]);
            if (!(strncmp(b, "python", 6) == 0 || (cmd->w[i][0] == '-' && strcmp(b, "-m") != 0)))
                sh->single = false;
        }
        if (read_launcher(sh, cmd, script))
            return -1;
        for (int i = sh->collect ? script : script + 1; i < cmd->n; i++)
            if (words_push(sh, dst, cmd->w[i], strlen(cmd->w[i])))
                return -1;
        return 0;
    }
    if (megatron_is_flag_word(cmd->w[first]) && !sh->chose_script) {
        for (int i = first; i < cmd->n; i++)
            if (words_push(sh, dst, cmd->w[i], strlen(cmd->w[i])))
                return -1;
        return 0;
    }
    notes_add(&sh->a->notes, NOTE_IGNORED, cmd->w[first],
              "a shell command other than the training command");
    return 0;
}

/* Whether a word still holds something the text does not give (a
 * variable set outside it, a positional parameter, a command's output). */
static bool undecided_word(const char *w)
{
    return strchr(w, '$') != NULL || strchr(w, '`') != NULL;
}

/* One test of a condition, cmd->w[from..n): [[ A == B ]], [ A != B ],
 * [[ -z A ]], [[ -n A ]], [[ A ]], numeric -eq/-ne/-lt/-le/-gt/-ge, true,
 * false, each optionally negated by !: 1 true, 0 false, -1 when the text
 * cannot decide it (another test, an unexpanded value, a glob pattern). */
static int eval_test(const words_t *cmd, int from)
{
    char *const *w = cmd->w;
    int i = from, n = cmd->n;
    bool neg = false;
    if (i < n && strcmp(w[i], "!") == 0) {
        neg = true;
        i++;
    }
    if (i == n - 1 && (strcmp(w[i], "true") == 0 || strcmp(w[i], ":") == 0))
        return !neg;
    if (i == n - 1 && strcmp(w[i], "false") == 0)
        return neg;
    const char *close = i < n && strcmp(w[i], "[[") == 0 ? "]]"
                        : i < n && strcmp(w[i], "[") == 0 ? "]"
                                                          : NULL;
    if (!close || n - i < 2 || strcmp(w[n - 1], close) != 0)
        return -1;
    int a = i + 1, b = n - 1;
    if (a < b && strcmp(w[a], "!") == 0) {
        neg = !neg;
        a++;
    }
    for (int k = a; k < b; k++)
        if (undecided_word(w[k]))
            return -1;
    int r = -1;
    if (b - a == 1) {
        r = w[a][0] != '\0';
    } else if (b - a == 2 && strcmp(w[a], "-z") == 0) {
        r = w[a + 1][0] == '\0';
    } else if (b - a == 2 && strcmp(w[a], "-n") == 0) {
        r = w[a + 1][0] != '\0';
    } else if (b - a == 3) {
        const char *x = w[a], *op = w[a + 1], *y = w[a + 2];
        bool glob = strcmp(close, "]]") == 0 && strpbrk(y, "*?[") != NULL;
        long u, v;
        if ((strcmp(op, "==") == 0 || strcmp(op, "=") == 0) && !glob)
            r = strcmp(x, y) == 0;
        else if (strcmp(op, "!=") == 0 && !glob)
            r = strcmp(x, y) != 0;
        else if (op[0] == '-' && megatron_parse_long(x, &u) && megatron_parse_long(y, &v)) {
            r = strcmp(op, "-eq") == 0   ? u == v
                : strcmp(op, "-ne") == 0 ? u != v
                : strcmp(op, "-lt") == 0 ? u < v
                : strcmp(op, "-le") == 0 ? u <= v
                : strcmp(op, "-gt") == 0 ? u > v
                : strcmp(op, "-ge") == 0 ? u >= v
                                         : -1;
        }
    }
    return r < 0 ? -1 : neg ? !r : r;
}

/* a || b and a && b over true (1), false (0) and undecided (-1). */
static int join_tests(int a, const char *op, int b)
{
    if (strcmp(op, "&&") == 0)
        return a == 0 || b == 0 ? 0 : a == 1 && b == 1 ? 1 : -1;
    return a == 1 || b == 1 ? 1 : a == 0 && b == 0 ? 0 : -1;
}

/* Close the innermost open if, loop or case. */
static void pop_frame(shell_t *sh)
{
    sh_if_t *t = &sh->ifs[--sh->n_ifs];
    words_free(&t->items);
}

static sh_if_t *push_frame(shell_t *sh, char kind)
{
    if (sh->n_ifs == SH_MAX_IF) {
        err_setf(sh->err, ERR_INPUT, sh->a->origin, NULL,
                 "line %d: if, loops and case nested more than %d deep", sh->line, SH_MAX_IF);
        return NULL;
    }
    bool outer = sh_active(sh);
    sh_if_t *top = &sh->ifs[sh->n_ifs++];
    memset(top, 0, sizeof *top);
    top->outer = outer;
    top->line = sh->line;
    top->kind = kind;
    return top;
}

/* The if / elif / else / fi, for / while / until ... do / done and case /
 * esac words at the start of the command just read: updates which part
 * is read and sets *start to the first word of what remains of the
 * command. Returns 1 when that remainder is to be read, 0 when not (a
 * condition, a part not read), -1 on error.
 *
 * A loop's body is read once: a for loop's with its first value (a note
 * names how many there were), a while loop's when its condition holds
 * (and the text can decide it). A case's branches are not read (they
 * choose on the script's arguments, which a file read alone has none
 * of), with a note. */
static int control(shell_t *sh, int *start)
{
    words_t *cmd = &sh->cmd;
    int i = 0;
    while (i < cmd->n) {
        const char *w = cmd->w[i];
        sh_if_t *top = sh->n_ifs ? &sh->ifs[sh->n_ifs - 1] : NULL;
        const char *closer = top && top->kind == 'w' ? "do" : "then";
        if (top && top->in_cond && strcmp(w, closer) != 0) {
            /* another test of the condition, joined by the last operator */
            top->cond = join_tests(top->cond, top->op, eval_test(cmd, i));
            snprintf(top->op, sizeof top->op, "%s", sh->sep);
            return 0;
        }
        if (top && top->in_cond) { /* then / do: decide the branch or the body */
            top->in_cond = false;
            int cond = top->cond;
            if (top->until && cond >= 0)
                cond = !cond;
            if (cond < 0 && !top->unknown && top->outer) {
                top->unknown = true;
                notes_add(&sh->a->notes, NOTE_IGNORED, top->kind == 'w' ? "while" : "if",
                          top->kind == 'w'
                              ? "line %d: a loop condition the text does not decide: its body "
                                "was not read"
                              : "line %d: a condition the text does not decide (a file test or "
                                "a value set outside it): none of this if's branches was read",
                          top->line);
            }
            top->active = top->outer && !top->taken && !top->unknown && cond == 1;
            top->taken = top->taken || top->active;
            if (top->kind == 'w' && top->active)
                notes_add(&sh->a->notes, NOTE_ASSUMED, "while",
                          "line %d: the loop's body is read once", top->line);
            i++;
            continue;
        }
        if (strcmp(w, "if") == 0 || (top && top->kind == 'i' && strcmp(w, "elif") == 0)) {
            if (w[0] == 'i' && !(top = push_frame(sh, 'i')))
                return -1;
            top->active = false;
            top->in_cond = true;
            top->cond = eval_test(cmd, i + 1);
            snprintf(top->op, sizeof top->op, "%s", sh->sep);
            return 0;
        }
        if (strcmp(w, "while") == 0 || strcmp(w, "until") == 0) {
            if (!(top = push_frame(sh, 'w')))
                return -1;
            top->until = w[0] == 'u';
            top->in_cond = true;
            top->cond = eval_test(cmd, i + 1);
            snprintf(top->op, sizeof top->op, "%s", sh->sep);
            return 0;
        }
        if (strcmp(w, "for") == 0) {
            if (!(top = push_frame(sh, 'f')))
                return -1;
            if (i + 1 < cmd->n)
                snprintf(top->var, sizeof top->var, "%s", cmd->w[i + 1]);
            int j = i + 2;
            bool in = j < cmd->n && strcmp(cmd->w[j], "in") == 0;
            bool c_style = i + 1 < cmd->n && strncmp(cmd->w[i + 1], "((", 2) == 0;
            for (j = in ? j + 1 : cmd->n; j < cmd->n && strcmp(cmd->w[j], "do") != 0; j++)
                if (words_push(sh, &top->items, cmd->w[j], strlen(cmd->w[j])))
                    return -1;
            top->unknown = c_style || !name_char(top->var[0], true);
            for (int x = 0; x < top->items.n; x++)
                top->unknown = top->unknown || undecided_word(top->items.w[x]);
            if (!in && !c_style)
                note_args(sh); /* for X; do: over the script's arguments */
            if (j < cmd->n) { /* "for x in a b; do" read as one command */
                i = j;
                continue;
            }
            return 0;
        }
        if (top && strcmp(w, "do") == 0 && top->kind == 'f') {
            if (top->unknown && top->outer)
                notes_add(&sh->a->notes, NOTE_IGNORED, "for",
                          "line %d: a loop over values the text does not give: its body was "
                          "not read",
                          top->line);
            top->active = top->outer && !top->unknown && top->items.n > 0;
            if (top->active) {
                shvar_t *v = var_set(sh, top->var, strlen(top->var));
                if (!v || words_push(sh, &v->value, top->items.w[0], strlen(top->items.w[0])))
                    return -1;
                if (top->items.n > 1)
                    notes_add(&sh->a->notes, NOTE_ASSUMED, "for",
                              "line %d: a loop over %d values of %s: only the first (%s) is "
                              "read; give the others' flags on scaleplan's command line to "
                              "simulate them",
                              top->line, top->items.n, top->var, top->items.w[0]);
            }
            i++;
            continue;
        }
        if (top && strcmp(w, "done") == 0 && (top->kind == 'f' || top->kind == 'w')) {
            pop_frame(sh);
            i++;
            continue;
        }
        if (strcmp(w, "case") == 0) {
            if (!(top = push_frame(sh, 'c')))
                return -1;
            const char *subject = i + 1 < cmd->n ? cmd->w[i + 1] : "$";
            if (words_push(sh, &top->items, subject, strlen(subject)))
                return -1;
            top->unknown = undecided_word(subject);
            top->arm_wait = true;
            if (top->outer && top->unknown)
                notes_add(&sh->a->notes, NOTE_IGNORED, "case",
                          "line %d: a case on a value the text does not give (%s): none of "
                          "its branches was read",
                          sh->line, subject);
            return 0;
        }
        if (top && top->kind == 'c' && top->arm_wait && strcmp(w, "esac") != 0) {
            /* PATTERN) or A|B) starting an arm: read when it matches */
            size_t len = strlen(w), used = strlen(top->pats);
            bool last = len > 0 && w[len - 1] == ')';
            snprintf(top->pats + used, sizeof top->pats - used, "%.*s\n",
                     (int)(last ? len - 1 : len), w[0] == '(' ? w + 1 : w);
            if (!last)
                return 0; /* the pattern goes on after '|' */
            bool match = false;
            for (char *p = top->pats; *p;) {
                char *nl = strchr(p, '\n');
                if (nl)
                    *nl = '\0';
                match = match || fnmatch(p, top->items.w[0], 0) == 0;
                p = nl ? nl + 1 : p + strlen(p);
            }
            top->pats[0] = '\0';
            top->arm_wait = false;
            top->active = top->outer && !top->taken && !top->unknown && match;
            top->taken = top->taken || top->active;
            i++;
            continue;
        }
        if (top && top->kind == 'c' && strcmp(w, "esac") == 0) {
            pop_frame(sh);
            i++;
            continue;
        }
        if (top && top->kind == 'i' && strcmp(w, "else") == 0) {
            top->active = top->outer && !top->taken && !top->unknown;
            top->taken = true;
            i++;
            continue;
        }
        if (top && top->kind == 'i' && strcmp(w, "fi") == 0) {
            pop_frame(sh);
            i++;
            continue;
        }
        break;
    }
    *start = i;
    return i < cmd->n && sh_active(sh);
}

/* The refusal of a text whose expansions pass the caps, at its line. */
static int too_big(shell_t *sh)
{
    return err_setf(sh->err, ERR_INPUT, sh->a->origin, NULL,
                    "line %d: expanding the variables makes more than %d MiB of words or %d "
                    "words in one list (a variable that grows by itself?); no launch script "
                    "needs that many",
                    sh->line, (int)(MEGATRON_MAX_EXPANDED_BYTES >> 20), MEGATRON_MAX_WORDS);
}

/* Read the commands of sh->s from sh->pos to its end. 0, or -1 with
 * sh->err set (or sh->oom / sh->too_big). */
static int sh_run(shell_t *sh)
{
    for (;;) {
        sh->hs_index = -1;
        int r = read_words(sh, &sh->cmd, false);
        if (r < 0)
            return -1;
        free(sh->herestring);
        sh->herestring = NULL;
        if (sh->hs_index >= 0 && sh->hs_index < sh->cmd.n) {
            /* the word after <<< is read's input, not an argument */
            sh->herestring = sh->cmd.w[sh->hs_index];
            memmove(sh->cmd.w + sh->hs_index, sh->cmd.w + sh->hs_index + 1,
                    (size_t)(sh->cmd.n - sh->hs_index - 1) * sizeof *sh->cmd.w);
            sh->cmd.n--;
        }
        int start = 0, run = sh->cmd.n ? control(sh, &start) : 0;
        if (run < 0)
            return -1;
        if (run && take_command(sh, start))
            return -1;
        words_free(&sh->cmd);
        if (sh->n_ifs && sh->ifs[sh->n_ifs - 1].kind == 'c' && strcmp(sh->sep, ";;") == 0) {
            /* ;; ends the arm */
            sh->ifs[sh->n_ifs - 1].arm_wait = true;
            sh->ifs[sh->n_ifs - 1].active = false;
        }
        if (!sh->hd_pending) {
            /* a heredoc belongs to the command that announced it */
            free(sh->heredoc);
            sh->heredoc = NULL;
        }
        if (r == 0)
            return 0;
    }
}

/* Read text as a script inside the one being read (a heredoc given to
 * sbatch, bash -c TEXT, eval): the same variables, its own position. */
static int run_text(shell_t *sh, const char *text, size_t len)
{
    if (sh->depth >= SH_MAX_DEPTH)
        return err_setf(sh->err, ERR_INPUT, sh->a->origin, NULL,
                        "line %d: scripts inside scripts nested more than %d deep", sh->line,
                        SH_MAX_DEPTH),
               -1;
    const char *s0 = sh->s;
    size_t len0 = sh->len, pos0 = sh->pos;
    int line0 = sh->line, n_ifs0 = sh->n_ifs;
    words_t cmd0 = sh->cmd;
    char sep0[3];
    memcpy(sep0, sh->sep, sizeof sep0);
    memset(&sh->cmd, 0, sizeof sh->cmd);
    sh->s = text;
    sh->len = len;
    sh->pos = 0;
    sh->depth++;
    int rc = sh_run(sh);
    sh->depth--;
    words_free(&sh->cmd);
    while (sh->n_ifs > n_ifs0) /* an if the inner text left open */
        pop_frame(sh);
    sh->cmd = cmd0;
    sh->s = s0;
    sh->len = len0;
    sh->pos = pos0;
    sh->line = line0;
    sh->hd_pending = false;
    memcpy(sh->sep, sep0, sizeof sep0);
    return rc;
}

/* Read a shell text into sh (the words of its training command into
 * sh->chosen). ERR_OK or the refusal. */
static int shell_read(shell_t *sh, megatron_args_t *a, const char *text, size_t len, bool collect,
                      err_t *err)
{
    memset(sh, 0, sizeof *sh);
    sh->collect = collect;
    sh->a = a;
    sh->s = text;
    sh->len = len;
    sh->line = 1;
    sh->err = err;
    sh->hs_index = -1;
    int r = sh_run(sh);
    int rc = ERR_OK;
    if (r == 0 && !collect && a->nproc_per_node == 0 && sh->chose_script) {
        if (sh->sb_nodes > 0 && sh->sb_tasks > 0) {
            a->nnodes = sh->sb_nodes;
            a->nproc_per_node = sh->sb_tasks;
            notes_add(&a->notes, NOTE_ASSUMED, "#SBATCH",
                      "%d nodes x %d tasks per node, from the file's #SBATCH lines",
                      sh->sb_nodes, sh->sb_tasks);
        } else if (sh->single) {
            a->nnodes = a->nproc_per_node = 1;
            notes_add(&a->notes, NOTE_ASSUMED, a->script,
                      "run by python without a launcher: one process, one GPU");
        }
    }
    if (r < 0 || sh->oom || sh->too_big)
        rc = sh->too_big ? too_big(sh)
             : sh->oom   ? err_set(err, ERR_RUNTIME, "out of memory reading Megatron arguments")
                         : ERR_INPUT;
    a->expanded_bytes += sh->made;
    return rc;
}

static void shell_free(shell_t *sh)
{
    words_free(&sh->cmd);
    words_free(&sh->chosen);
    for (int i = 0; i < sh->n_vars; i++)
        words_free(&sh->vars[i].value);
    free(sh->vars);
    while (sh->n_ifs > 0)
        pop_frame(sh);
    free(sh->heredoc);
    free(sh->herestring);
}

int megatron_args_parse_text(megatron_args_t *a, const char *text, size_t len, err_t *err)
{
    shell_t sh;
    int rc = shell_read(&sh, a, text, len, false, err);
    if (!rc)
        rc = megatron_args_parse_argv(a, sh.chosen.n, (const char *const *)sh.chosen.w, err);
    shell_free(&sh);
    return rc;
}

int megatron_shell_command(const char *text, size_t len, const char *origin, char **out,
                           notes_t *notes, err_t *err)
{
    megatron_args_t a;
    megatron_args_init(&a, origin);
    shell_t sh;
    *out = NULL;
    int rc = shell_read(&sh, &a, text, len, true, err);
    if (!rc && sh.chose_script) {
        size_t n = 1;
        for (int i = 0; i < sh.chosen.n; i++)
            n += strlen(sh.chosen.w[i]) + 3;
        char *t = malloc(n);
        if (!t) {
            rc = err_set(err, ERR_RUNTIME, "out of memory reading a launch command");
        } else {
            /* one word a line: the Bridge readers split at blanks, and a
             * word with blanks in it is quoted */
            size_t k = 0;
            for (int i = 0; i < sh.chosen.n; i++) {
                const char *w = sh.chosen.w[i];
                bool q = strpbrk(w, " \t") != NULL && !strchr(w, '"');
                k += (size_t)sprintf(t + k, q ? "\"%s\"\n" : "%s\n", w);
            }
            t[k] = '\0';
            *out = t;
        }
    }
    if (notes)
        notes_append(notes, &a.notes);
    shell_free(&sh);
    megatron_args_free(&a);
    return rc;
}

int megatron_args_read(const char *text, size_t len, const char *origin, megatron_args_t *a,
                       err_t *err)
{
    megatron_args_init(a, origin);
    int rc = megatron_args_parse_text(a, text, len, err);
    return rc ? rc : megatron_args_finish(a, err);
}
