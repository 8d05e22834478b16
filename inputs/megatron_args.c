/* megatron_args: Megatron-LM pretrain_gpt.py arguments into a model, a
 * layout and simulator options. The flag table comes from Megatron-LM's
 * own parser (inputs/megatron_flags.tsv); the rules that turn flags into
 * sizes follow megatron/training/arguments.py validate_args and the
 * tokenizer's vocabulary padding at the commit the table names. */
#include "inputs/megatron_args.h"


#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/strfmt.h"
#include "common/names.h"

/* ------------------------------------------------------------ the table */

typedef enum {
    MF_ON,     /* store_true switch */
    MF_OFF,    /* store_false switch (--no-x / --disable-x; dest is the positive name) */
    MF_BOOL,   /* --x / --no-x pair */
    MF_INT,
    MF_FLOAT,
    MF_CHOICE,
    MF_STRING
} mf_kind_t;

typedef struct {
    const char *flags;   /* spellings separated by '|' */
    const char *dest;    /* argparse dest (the name the argument block prints) */
    mf_kind_t kind;
    int nargs;           /* 0: one value, -1: one or more */
    const char *choices; /* comma-separated, "" = any */
    const char *def;     /* Python repr of the default */
    char perf;           /* 'Y' affects speed or memory, 'N' does not */
} mflag_t;

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

struct megatron_arg {
    const mflag_t *flag;
    char spelling[96]; /* as the user wrote it, for messages */
    char *value;       /* normalised text; switches "True"/"False" */
    bool used;         /* read by the interpreter */
};

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

static megatron_arg_t *arg_of(const megatron_args_t *a, const char *dest)
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

static bool parse_long(const char *s, long *out)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (end == s || *end != '\0' || errno)
        return false;
    *out = v;
    return true;
}

static bool parse_double(const char *s, double *out)
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
        if (f->kind == MF_INT && !parse_long(word, &l)) {
            if (strchr(word, '$'))
                return err_setf(err, ERR_INPUT, a->origin, spelling,
                                "'%s' is a shell variable the text does not set; give the number",
                                word);
            return err_setf(err, ERR_INPUT, a->origin, spelling, "expects an integer (got '%s')",
                            word);
        }
        if (f->kind == MF_FLOAT && !parse_double(word, &d))
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
    megatron_arg_t *slot = arg_of(a, f->dest);
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
    megatron_arg_t *slot = arg_of(a, dest);
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

/* ------------------------------------------------------------ word lists */

static bool is_flag_word(const char *w)
{
    return w[0] == '-' && w[1] == '-' && w[2] != '\0';
}

int megatron_args_parse_argv(megatron_args_t *a, int argc, const char *const *argv, err_t *err)
{
    for (int i = 0; i < argc; i++) {
        const char *w = argv[i];
        if (!is_flag_word(w)) {
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
            if (i + 1 < argc && argv[i + 1][0] && !is_flag_word(argv[i + 1]))
                return err_setf(err, ERR_INPUT, a->origin, argv[i + 1],
                                "unexpected word after the switch %.*s", (int)len, w);
            rc = set_len(a, w, len, NULL, err);
        } else if (eq) {
            rc = set_len(a, w, len, eq + 1, err);
        } else if (f->nargs == 0) {
            if (i + 1 >= argc || is_flag_word(argv[i + 1]))
                return err_setf(err, ERR_INPUT, a->origin, w, "needs a value");
            rc = set_len(a, w, len, argv[++i], err);
        } else {
            /* One or more values, up to the next flag. */
            char joined[1024] = "";
            int j = i + 1;
            for (; j < argc && !is_flag_word(argv[j]); j++) {
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
} shell_t;

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

/* Expand one $-expression at sh->pos (just after '$'). Array expansions
 * ("${A[@]}") outside double quotes add whole words to out directly; other
 * expansions append to the word in b. */
static int expand(shell_t *sh, wbuf_t *b, words_t *out, bool quoted)
{
    const char *s = sh->s;
    size_t p = sh->pos;
    const char *name;
    size_t n = 0;
    bool braced = p < sh->len && s[p] == '{';
    bool array = false, at = false;
    const char *def = NULL;
    size_t def_len = 0;
    if (braced) {
        size_t close = p + 1;
        while (close < sh->len && s[close] != '}')
            close++;
        if (close >= sh->len)
            return wb_put(sh, b, "$", 1);
        name = s + p + 1;
        /* a positional parameter (${1:-default}): never set in the text */
        bool positional = name < s + close && isdigit((unsigned char)name[0]);
        while (name + n < s + close &&
               (positional ? isdigit((unsigned char)name[n]) != 0 : name_char(name[n], n == 0)))
            n++;
        const char *rest = name + n;
        if (rest + 3 <= s + close && (strncmp(rest, "[@]", 3) == 0 || strncmp(rest, "[*]", 3) == 0)) {
            array = true;
            at = rest[1] == '@';
        }
        else if (rest + 2 <= s + close && strncmp(rest, ":-", 2) == 0) {
            def = rest + 2;
            def_len = (size_t)(s + close - def);
            /* a quoted default ("MOCK" or 'MOCK') is its text */
            if (def_len >= 2 && (def[0] == '"' || def[0] == '\'') && def[def_len - 1] == def[0]) {
                def++;
                def_len -= 2;
            }
        }
        sh->pos = close + 1;
    } else if (p < sh->len && s[p] == '(') {
        /* $(command): kept as written; a value that needs it will say so. */
        size_t depth = 0, q = p;
        for (; q < sh->len; q++) {
            if (s[q] == '(')
                depth++;
            else if (s[q] == ')' && --depth == 0)
                break;
        }
        size_t end = q < sh->len ? q + 1 : q;
        int rc = wb_put(sh, b, "$", 1) || wb_put(sh, b, s + p, end - p);
        sh->pos = end;
        return rc;
    } else {
        name = s + p;
        while (p + n < sh->len && name_char(name[n], n == 0))
            n++;
        if (n == 0)
            return wb_put(sh, b, "$", 1);
        sh->pos = p + n;
    }
    shvar_t *v = var_find(sh, name, n);
    if (!v) {
        if (def)
            return wb_put(sh, b, def, def_len);
        /* Unknown (set outside the text): kept as written. */
        char kept[96];
        int k = snprintf(kept, sizeof kept, "${%.*s}", (int)(n < 80 ? n : 80), name);
        return wb_put(sh, b, kept, (size_t)k);
    }
    if (array && (!quoted || at)) {
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
            while (sh->pos < sh->len && s[sh->pos] != '\n')
                sh->pos++;
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
        if (!parse_long(v, &x) || x < 1 || x > (1 << 24)) {
            notes_add(&a->notes, NOTE_IGNORED, w,
                      "launcher value '%s' is not a fixed count; give --gpus", v);
            continue;
        }
        *dst = (int)x;
    }
    return 0;
}

/* Decide what one command is: assignments, the training command (words
 * after a Python script), pasted flags, or something else. */
static int take_command(shell_t *sh, int start)
{
    words_t *cmd = &sh->cmd;
    int skip = start;
    if (cmd->n > start && strcmp(cmd->w[start], "export") == 0)
        skip = start + 1;
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
        if (read_launcher(sh, cmd, script))
            return -1;
        for (int i = script + 1; i < cmd->n; i++)
            if (words_push(sh, dst, cmd->w[i], strlen(cmd->w[i])))
                return -1;
        return 0;
    }
    if (is_flag_word(cmd->w[first]) && !sh->chose_script) {
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
        else if (op[0] == '-' && parse_long(x, &u) && parse_long(y, &v)) {
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

/* The if / elif / else / fi words at the start of the command just read:
 * updates which branch is read and sets *start to the first word of what
 * remains of the command. Returns 1 when that remainder is to be read, 0
 * when not (a condition, a branch not read), -1 on error. */
static int control(shell_t *sh, int *start)
{
    words_t *cmd = &sh->cmd;
    int i = 0;
    while (i < cmd->n) {
        const char *w = cmd->w[i];
        sh_if_t *top = sh->n_ifs ? &sh->ifs[sh->n_ifs - 1] : NULL;
        if (top && top->in_cond && strcmp(w, "then") != 0) {
            /* another test of the condition, joined by the last operator */
            top->cond = join_tests(top->cond, top->op, eval_test(cmd, i));
            snprintf(top->op, sizeof top->op, "%s", sh->sep);
            return 0;
        }
        if (top && top->in_cond) { /* then: decide the branch */
            top->in_cond = false;
            if (top->cond < 0 && !top->unknown && top->outer) {
                top->unknown = true;
                notes_add(&sh->a->notes, NOTE_IGNORED, "if",
                          "line %d: a condition the text does not decide (a file test or a "
                          "value set outside it): none of this if's branches was read",
                          top->line);
            }
            top->active = top->outer && !top->taken && !top->unknown && top->cond == 1;
            top->taken = top->taken || top->active;
            i++;
            continue;
        }
        if (strcmp(w, "if") == 0 || (top && strcmp(w, "elif") == 0)) {
            if (w[0] == 'i') {
                if (sh->n_ifs == SH_MAX_IF)
                    return err_setf(sh->err, ERR_INPUT, sh->a->origin, NULL,
                                    "line %d: if nested more than %d deep", sh->line,
                                    SH_MAX_IF),
                           -1;
                bool outer = sh_active(sh);
                top = &sh->ifs[sh->n_ifs++];
                memset(top, 0, sizeof *top);
                top->outer = outer;
                top->line = sh->line;
            }
            top->active = false;
            top->in_cond = true;
            top->cond = eval_test(cmd, i + 1);
            snprintf(top->op, sizeof top->op, "%s", sh->sep);
            return 0;
        }
        if (top && strcmp(w, "else") == 0) {
            top->active = top->outer && !top->taken && !top->unknown;
            top->taken = true;
            i++;
            continue;
        }
        if (top && strcmp(w, "fi") == 0) {
            sh->n_ifs--;
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

int megatron_args_parse_text(megatron_args_t *a, const char *text, size_t len, err_t *err)
{
    shell_t sh;
    memset(&sh, 0, sizeof sh);
    sh.a = a;
    sh.s = text;
    sh.len = len;
    sh.line = 1;
    sh.err = err;
    int rc = ERR_OK;
    for (;;) {
        int r = read_words(&sh, &sh.cmd, false);
        if (r < 0) {
            rc = sh.too_big ? too_big(&sh)
                 : sh.oom   ? err_set(err, ERR_RUNTIME, "out of memory reading Megatron arguments")
                            : ERR_INPUT;
            goto out;
        }
        int start = 0, run = sh.cmd.n ? control(&sh, &start) : 0;
        if (run < 0) {
            rc = ERR_INPUT;
            goto out;
        }
        if (run && take_command(&sh, start)) {
            rc = sh.too_big ? too_big(&sh)
                            : err_set(err, ERR_RUNTIME, "out of memory reading Megatron arguments");
            goto out;
        }
        words_free(&sh.cmd);
        if (r == 0)
            break;
    }
    if (sh.oom || sh.too_big) {
        rc = sh.too_big ? too_big(&sh)
                        : err_set(err, ERR_RUNTIME, "out of memory reading Megatron arguments");
        goto out;
    }
    rc = megatron_args_parse_argv(a, sh.chosen.n, (const char *const *)sh.chosen.w, err);
out:
    a->expanded_bytes += sh.made;
    words_free(&sh.cmd);
    words_free(&sh.chosen);
    for (int i = 0; i < sh.n_vars; i++)
        words_free(&sh.vars[i].value);
    free(sh.vars);
    return rc;
}

/* ------------------------------------------------------------ interpretation */

typedef struct {
    megatron_args_t *a;
    err_t *err;
} interp_t;

/* The stored argument for dest (marked as read), or NULL. */
static megatron_arg_t *get(interp_t *in, const char *dest)
{
    megatron_arg_t *x = arg_of(in->a, dest);
    if (x)
        x->used = true;
    return x;
}

static const char *spelling_of(const megatron_arg_t *x)
{
    return x->spelling;
}

/* The flag's first spelling (for messages about absent flags). */
static const char *flag_name(const char *dest, char *buf, size_t cap)
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

static bool get_switch(interp_t *in, const char *dest, bool def)
{
    megatron_arg_t *x = get(in, dest);
    return x ? strcmp(x->value, "True") == 0 : def;
}

/* An integer argument in [lo, hi]; *present says whether it was given. */
static int get_int(interp_t *in, const char *dest, long lo, long hi, int *out, bool *present)
{
    megatron_arg_t *x = get(in, dest);
    if (present)
        *present = x != NULL;
    if (!x)
        return ERR_OK;
    long v;
    if (!parse_long(x->value, &v) || v < lo || v > hi)
        return err_setf(in->err, ERR_INPUT, in->a->origin, spelling_of(x),
                        "must be an integer from %ld to %ld (got '%s')", lo, hi, x->value);
    *out = (int)v;
    return ERR_OK;
}

static int get_double(interp_t *in, const char *dest, double lo, double hi, double *out,
                      bool *present)
{
    megatron_arg_t *x = get(in, dest);
    if (present)
        *present = x != NULL;
    if (!x)
        return ERR_OK;
    double v;
    if (!parse_double(x->value, &v) || v < lo || v > hi)
        return err_setf(in->err, ERR_INPUT, in->a->origin, spelling_of(x),
                        "must be a number from %g to %g (got '%s')", lo, hi, x->value);
    *out = v;
    return ERR_OK;
}

static const char *get_str(interp_t *in, const char *dest)
{
    megatron_arg_t *x = get(in, dest);
    return x ? x->value : NULL;
}

/* Refuse an argument scaleplan cannot count or simulate exactly. */
static int refuse_if(interp_t *in, const char *dest, bool when, const char *why)
{
    megatron_arg_t *x = arg_of(in->a, dest);
    if (!x || !when)
        return ERR_OK;
    x->used = true;
    return err_setf(in->err, ERR_INPUT, in->a->origin, spelling_of(x), "%s", why);
}

#define MAX_WIDTH 10000000L
#define MAX_LAYERS 100000L
#define MAX_VOCAB 100000000L

/* The vocabulary the model has: the tokenizer's size padded to a multiple
 * of --make-vocab-size-divisible-by x TP (Megatron's
 * vocab_size_with_padding). */
static int vocab_size(interp_t *in, int tp, int *vocab)
{
    megatron_args_t *a = in->a;
    int rc, padded = 0, given = 0, divisible = 128;
    bool have_padded = false, have_vocab = false, have_div = false;
    if ((rc = get_int(in, "padded_vocab_size", 1, MAX_VOCAB, &padded, &have_padded)) ||
        (rc = get_int(in, "vocab_size", 1, MAX_VOCAB, &given, &have_vocab)) ||
        (rc = get_int(in, "make_vocab_size_divisible_by", 1, 1 << 20, &divisible, &have_div)))
        return rc;
    const char *tok = get_str(in, "tokenizer_type");
    if (have_padded) {
        *vocab = padded;
        return ERR_OK;
    }
    long orig;
    if (tok && strcmp(tok, "GPT2BPETokenizer") == 0) {
        orig = 50257; /* the GPT-2 BPE vocabulary (Radford et al. 2019) */
        if (have_vocab)
            notes_add(&a->notes, NOTE_IGNORED, "--vocab-size",
                      "GPT2BPETokenizer has 50257 tokens; --vocab-size is not used");
    } else if (have_vocab) {
        orig = given;
        if (!tok || strcmp(tok, "NullTokenizer") != 0)
            notes_add(&a->notes, NOTE_ASSUMED, "--vocab-size",
                      "%d taken as the size of the %s tokenizer's vocabulary", given,
                      tok ? tok : "(default)");
    } else {
        char name[64];
        return err_setf(in->err, ERR_INPUT, a->origin, flag_name("vocab_size", name, sizeof name),
                        "the vocabulary size comes from the tokenizer files (%s); add "
                        "--vocab-size N or --padded-vocab-size N",
                        tok ? tok : "no --tokenizer-type");
    }
    long multiple = (long)divisible * tp;
    long after = (orig + multiple - 1) / multiple * multiple;
    if (after > MAX_VOCAB)
        return err_setf(in->err, ERR_INPUT, a->origin, "--vocab-size",
                        "padded vocabulary %ld is too large", after);
    *vocab = (int)after;
    if (after != orig)
        notes_add(&a->notes, NOTE_ASSUMED, "--make-vocab-size-divisible-by",
                  "vocabulary %ld padded to %ld (a multiple of %d x TP %d, as Megatron pads it)",
                  orig, after, divisible, tp);
    return ERR_OK;
}

/* Model name from the origin: the file's stem, else "megatron-args". */
static void model_name(const megatron_args_t *a, char *out, size_t cap)
{
    const char *base = strrchr(a->origin, '/');
    base = base ? base + 1 : a->origin;
    size_t n = strcspn(base, ".");
    if (n == 0 || strchr(a->origin, ' ') || base[0] == '-')
        snprintf(out, cap, "megatron-args");
    else
        snprintf(out, cap, "%.*s", (int)n, base);
}

/* --moe-layer-freq: an integer N (every N-th block, from block 0) or a
 * Python list pattern as Megatron accepts it: "[0,1,1]", "([0]*3+[1]*58)",
 * or the argument block's "[0, 0, 1, ...]". */
static int moe_pattern(interp_t *in, const char *text, model_t *m)
{
    long n;
    if (parse_long(text, &n)) {
        if (n < 1)
            return err_setf(in->err, ERR_INPUT, in->a->origin, "--moe-layer-freq",
                            "must be a positive integer or a list (got %ld)", n);
        for (int i = 0; i < m->n_layers; i++)
            model_moe_set_layer(m, i, i % n == 0);
        return ERR_OK;
    }
    char buf[4096];
    size_t k = 0;
    for (const char *p = text; *p && k + 1 < sizeof buf; p++)
        if (!strchr(" \t\"'", *p))
            buf[k++] = *p;
    buf[k] = '\0';
    char *p = buf;
    size_t len = strlen(p);
    if (len >= 2 && p[0] == '(' && p[len - 1] == ')') {
        p[len - 1] = '\0';
        p++;
    }
    int layer = 0;
    while (*p) {
        if (*p != '[')
            goto bad;
        char *close = strchr(p, ']');
        if (!close)
            goto bad;
        int items[256], n_items = 0;
        for (char *q = p + 1; q < close;) {
            char *end;
            long v = strtol(q, &end, 10);
            if (end == q || (v != 0 && v != 1) || n_items == 256)
                goto bad;
            items[n_items++] = (int)v;
            q = end;
            if (*q == ',')
                q++;
        }
        long times = 1;
        p = close + 1;
        if (*p == '*') {
            char *end;
            times = strtol(p + 1, &end, 10);
            if (end == p + 1 || times < 0 || times > 100000)
                goto bad;
            p = end;
        }
        for (long t = 0; t < times; t++)
            for (int i = 0; i < n_items; i++, layer++)
                if (layer < MODEL_MAX_MOE_LAYERS)
                    model_moe_set_layer(m, layer, items[i] == 1);
        if (*p == '+')
            p++;
        else if (*p)
            goto bad;
    }
    if (layer != m->n_layers)
        return err_setf(in->err, ERR_INPUT, in->a->origin, "--moe-layer-freq",
                        "the pattern has %d entries for --num-layers %d", layer, m->n_layers);
    return ERR_OK;
bad:
    return err_setf(in->err, ERR_INPUT, in->a->origin, "--moe-layer-freq",
                    "'%.60s' is not an integer or a list of 0/1 such as ([0]*3+[1]*58)", text);
}

/* Mixture of experts (Megatron-Core's MoELayer: TopKRouter weight and, with
 * biases on, its bias; experts with the MLP's structure and biases; one
 * shared-expert MLP, optionally gated). */
static int build_moe(interp_t *in, model_t *m, bool bias)
{
    megatron_args_t *a = in->a;
    int rc, experts = 0;
    bool has_experts;
    if ((rc = get_int(in, "num_experts", 1, 1 << 20, &experts, &has_experts)) || !has_experts)
        return rc;
    model_moe_t *e = &m->moe;
    e->n_experts = experts;
    e->top_k = 2;
    bool has_ffn, has_shared;
    if ((rc = get_int(in, "moe_router_topk", 1, 1 << 20, &e->top_k, NULL)) ||
        (rc = get_int(in, "moe_ffn_hidden_size", 1, MAX_WIDTH, &e->expert_ffn, &has_ffn)) ||
        (rc = get_int(in, "moe_shared_expert_intermediate_size", 1, MAX_WIDTH, &e->shared_ffn,
                      &has_shared)) ||
        (rc = get_int(in, "moe_router_num_groups", 1, 1 << 20, &e->n_groups, NULL)) ||
        (rc = get_int(in, "moe_router_group_topk", 1, 1 << 20, &e->group_topk, NULL)))
        return rc;
    if (!has_ffn) {
        e->expert_ffn = m->ffn;
        notes_add(&a->notes, NOTE_ASSUMED, "--moe-ffn-hidden-size",
                  "not given: --ffn-hidden-size %d (Megatron's default)", m->ffn);
    }
    e->n_shared = has_shared ? 1 : 0;
    e->shared_gate = get_switch(in, "moe_shared_expert_gate", false);
    e->router_bias = e->expert_bias = bias;
    if (m->n_layers > MODEL_MAX_MOE_LAYERS)
        return err_setf(in->err, ERR_INPUT, a->origin, "--num-layers",
                        "a mixture-of-experts model may have at most %d layers (got %d)",
                        MODEL_MAX_MOE_LAYERS, m->n_layers);
    const char *freq = get_str(in, "moe_layer_freq");
    if ((rc = moe_pattern(in, freq ? freq : "1", m)))
        return rc;
    if (get_switch(in, "moe_router_enable_expert_bias", false))
        notes_add(&a->notes, NOTE_ASSUMED, "--moe-router-enable-expert-bias",
                  "the routing score bias is a buffer in Megatron-Core, not a parameter");
    return ERR_OK;
}

/* QK layer norm, multi-latent attention, multi-token prediction. */
static int build_attention_variants(interp_t *in, model_t *m, bool bias)
{
    megatron_args_t *a = in->a;
    int rc;
    bool qk_norm = get_switch(in, "qk_layernorm", false);
    (void)get_switch(in, "qk_l2_norm", false); /* a norm without weights */
    if (get_switch(in, "multi_latent_attention", false)) {
        model_mla_t *x = &m->mla;
        x->kv_lora_rank = 32;
        x->qk_nope_dim = 128;
        x->qk_rope_dim = 64;
        x->v_dim = 128;
        if ((rc = get_int(in, "q_lora_rank", 1, MAX_WIDTH, &x->q_lora_rank, NULL)) ||
            (rc = get_int(in, "kv_lora_rank", 1, MAX_WIDTH, &x->kv_lora_rank, NULL)) ||
            (rc = get_int(in, "qk_head_dim", 1, MAX_WIDTH, &x->qk_nope_dim, NULL)) ||
            (rc = get_int(in, "qk_pos_emb_head_dim", 0, MAX_WIDTH, &x->qk_rope_dim, NULL)) ||
            (rc = get_int(in, "v_head_dim", 1, MAX_WIDTH, &x->v_dim, NULL)))
            return rc;
        if (bias)
            return err_setf(in->err, ERR_INPUT, a->origin, "--multi-latent-attention",
                            "with biases on every linear is not counted exactly; add "
                            "--disable-bias-linear as DeepSeek recipes do");
        /* Megatron's MLA norms the latents only with --qk-layernorm. */
        x->no_latent_norms = !qk_norm;
        m->head_dim = x->qk_nope_dim + x->qk_rope_dim;
        m->n_kv_heads = m->n_heads;
        m->pos = MODEL_POS_ROPE;
    } else if (qk_norm) {
        m->qk_norm = MODEL_QK_NORM_HEAD;
    }
    return get_int(in, "mtp_num_layers", 0, 64, &m->n_mtp, NULL);
}

static int build_model(interp_t *in, int tp)
{
    megatron_args_t *a = in->a;
    model_t *m = &a->model;
    int rc;
    bool has_l, has_h, has_a;
    memset(m, 0, sizeof *m);
    int L = 0, H = 0, A = 0;
    if ((rc = get_int(in, "num_layers", 1, MAX_LAYERS, &L, &has_l)))
        return rc;
    if (!has_l && (rc = get_int(in, "encoder_num_layers", 1, MAX_LAYERS, &L, &has_l)))
        return rc;
    if ((rc = get_int(in, "hidden_size", 1, MAX_WIDTH, &H, &has_h)) ||
        (rc = get_int(in, "num_attention_heads", 1, MAX_WIDTH, &A, &has_a)))
        return rc;
    if (!has_l && !has_h && !has_a) {
        a->have_model = false;
        return ERR_OK;
    }
    if (!has_l || !has_h || !has_a)
        return err_setf(in->err, ERR_INPUT, a->origin,
                        !has_l ? "--num-layers" : !has_h ? "--hidden-size" : "--num-attention-heads",
                        "missing: the architecture needs --num-layers, --hidden-size and "
                        "--num-attention-heads");
    /* What scaleplan cannot count exactly. */
    if ((rc = refuse_if(in, "is_hybrid_model", get_switch(in, "is_hybrid_model", false),
                        "hybrid Mamba models are not supported (scaleplan models attention "
                        "transformers)")) ||
        (rc = refuse_if(in, "hybrid_layer_pattern", true,
                        "hybrid Mamba models are not supported (scaleplan models attention "
                        "transformers)")) ||
        (rc = refuse_if(in, "decoder_num_layers", true,
                        "encoder-decoder models are not supported (scaleplan models "
                        "decoder-only transformers)")) ||
        (rc = refuse_if(in, "experimental_attention_variant", true,
                        "experimental attention variants are not modeled")) ||
        (rc = refuse_if(in, "moe_latent_size", true,
                        "MoE latent projections are not modeled")))
        return rc;
    m->n_layers = L;
    m->hidden = H;
    m->n_heads = A;
    model_name(a, m->name, sizeof m->name);
    snprintf(m->display, sizeof m->display, "Megatron-LM model (%s)", a->origin);
    snprintf(m->source, sizeof m->source, "%s (Megatron-LM arguments)", a->origin);

    /* Attention: kv channels and query groups (validate_args). */
    bool has_kv;
    int kv_channels = 0;
    if ((rc = get_int(in, "kv_channels", 1, MAX_WIDTH, &kv_channels, &has_kv)))
        return rc;
    if (!has_kv) {
        if (H % A != 0)
            return err_setf(in->err, ERR_INPUT, a->origin, "--num-attention-heads",
                            "%d must divide --hidden-size %d when --kv-channels is not given", A,
                            H);
        kv_channels = H / A;
    }
    m->head_dim = kv_channels;
    bool gqa = get_switch(in, "group_query_attention", false);
    int groups = 1;
    bool has_groups;
    if ((rc = get_int(in, "num_query_groups", 1, MAX_WIDTH, &groups, &has_groups)))
        return rc;
    m->n_kv_heads = gqa ? groups : A;
    if (has_groups && !gqa && groups != A)
        notes_add(&a->notes, NOTE_IGNORED, "--num-query-groups",
                  "has no effect without --group-query-attention (Megatron uses one group "
                  "per head)");

    /* MLP: Megatron's defaults for the FFN width. */
    bool swiglu = get_switch(in, "swiglu", false);
    bool geglu = get_switch(in, "quick_geglu", false);
    bool sq_relu = get_switch(in, "squared_relu", false);
    (void)get_switch(in, "openai_gelu", false); /* a GELU either way */
    bool has_ffn;
    if ((rc = get_int(in, "ffn_hidden_size", 1, MAX_WIDTH, &m->ffn, &has_ffn)))
        return rc;
    if (!has_ffn) {
        m->ffn = swiglu ? (int)((4.0 * H * 2 / 3) / 64) * 64 : 4 * H;
        notes_add(&a->notes, NOTE_ASSUMED, "--ffn-hidden-size",
                  "not given: %d (Megatron's default: %s)", m->ffn,
                  swiglu ? "4h x 2/3 rounded down to a multiple of 64 with --swiglu" : "4h");
    }
    m->mlp = (swiglu || geglu) ? MODEL_MLP_SWIGLU : MODEL_MLP_GELU;
    m->family = swiglu ? MODEL_FAMILY_LLAMA : MODEL_FAMILY_GPT;
    if (sq_relu)
        notes_add(&a->notes, NOTE_ASSUMED, "--squared-relu",
                  "a non-gated MLP (two weight matrices), priced like GELU");

    /* Normalization. */
    const char *norm = get_str(in, "normalization");
    if (!norm)
        notes_add(&a->notes, NOTE_ASSUMED, "--normalization",
                  "not given: LayerNorm (Megatron's default)");
    m->norm = norm && strcmp(norm, "RMSNorm") == 0 ? MODEL_NORM_RMSNORM : MODEL_NORM_LAYERNORM;
    (void)get_switch(in, "apply_layernorm_1p", false); /* same weights and cost */
    m->norm_eps = 1e-5;
    if ((rc = get_double(in, "layernorm_epsilon", 1e-12, 0.1, &m->norm_eps, NULL)))
        return rc;

    /* Positions. */
    const char *pos = get_str(in, "position_embedding_type");
    bool rotary_legacy = get_switch(in, "use_rotary_position_embeddings", false);
    bool add_pos = get_switch(in, "add_position_embedding", true);
    if (pos && strcmp(pos, "relative") == 0)
        return err_setf(in->err, ERR_INPUT, a->origin, "--position-embedding-type",
                        "relative position biases (T5) are not modeled");
    if (rotary_legacy || (pos && (strcmp(pos, "rope") == 0 || strcmp(pos, "yarn") == 0 ||
                                  strcmp(pos, "mrope") == 0)))
        m->pos = MODEL_POS_ROPE;
    else if ((pos && strcmp(pos, "none") == 0) || !add_pos)
        m->pos = MODEL_POS_NONE;
    else {
        m->pos = MODEL_POS_LEARNED;
        if (!pos)
            notes_add(&a->notes, NOTE_ASSUMED, "--position-embedding-type",
                      "not given: learned_absolute (Megatron's default): a learned table of "
                      "--max-position-embeddings rows");
    }
    m->rope_theta = m->pos == MODEL_POS_ROPE ? 10000.0 : 0;
    int rotary_base = 10000;
    bool has_base;
    if ((rc = get_int(in, "rotary_base", 1, 2000000000L, &rotary_base, &has_base)))
        return rc;
    if (m->pos == MODEL_POS_ROPE)
        m->rope_theta = rotary_base;
    double rotary_percent = 1.0;
    if ((rc = get_double(in, "rotary_percent", 0, 1, &rotary_percent, NULL)))
        return rc;
    bool has_maxpos, has_seq;
    int seq = 0;
    if ((rc = get_int(in, "max_position_embeddings", 1, 100000000L, &m->max_seq, &has_maxpos)) ||
        (rc = get_int(in, "seq_length", 1, 100000000L, &seq, &has_seq)))
        return rc;
    if (!has_maxpos) {
        if (!has_seq)
            return err_setf(in->err, ERR_INPUT, a->origin, "--max-position-embeddings",
                            "missing (Megatron requires it; give it or --seq-length)");
        m->max_seq = seq;
        notes_add(&a->notes, NOTE_ASSUMED, "--max-position-embeddings",
                  "not given (Megatron requires it): taken as --seq-length %d", seq);
    }

    /* Embeddings, biases, dropout. */
    m->tied_embeddings = !get_switch(in, "untie_embeddings_and_output_weights", false);
    bool bias = get_switch(in, "add_bias_linear", true);
    m->qkv_bias = bias || get_switch(in, "add_qkv_bias", false);
    m->out_bias = m->mlp_bias = bias;
    double hdrop = 0.1, adrop = 0.1;
    bool has_hd, has_ad;
    if ((rc = get_double(in, "hidden_dropout", 0, 1, &hdrop, &has_hd)) ||
        (rc = get_double(in, "attention_dropout", 0, 1, &adrop, &has_ad)))
        return rc;
    m->dropout = fmax(hdrop, adrop);
    if (!has_hd || !has_ad)
        notes_add(&a->notes, NOTE_ASSUMED, !has_hd ? "--hidden-dropout" : "--attention-dropout",
                  "not given: 0.1 (Megatron's default); dropout masks are kept for backward");
    if (hdrop != adrop)
        notes_add(&a->notes, NOTE_ASSUMED, "--attention-dropout",
                  "hidden dropout %g and attention dropout %g differ: memory counts masks "
                  "for both at %g",
                  hdrop, adrop, m->dropout);
    if ((rc = vocab_size(in, tp, &m->vocab)) || (rc = build_attention_variants(in, m, bias)) ||
        (rc = build_moe(in, m, bias)))
        return rc;
    a->have_model = true;
    return model_validate(m, a->origin, in->err);
}

static int build_layout(interp_t *in)
{
    megatron_args_t *a = in->a;
    layout_t *l = &a->layout;
    int rc;
    const long big = 1 << 24;
    bool has_tp, has_legacy_tp;
    int legacy_tp = 1;
    if ((rc = get_int(in, "tensor_model_parallel_size", 1, big, &l->tp, &has_tp)) ||
        (rc = get_int(in, "model_parallel_size", 1, big, &legacy_tp, &has_legacy_tp)) ||
        (rc = get_int(in, "pipeline_model_parallel_size", 1, LAYOUT_MAX_PP, &l->pp, NULL)) ||
        (rc = get_int(in, "context_parallel_size", 1, big, &l->cp, NULL)) ||
        (rc = get_int(in, "expert_model_parallel_size", 1, big, &l->ep, NULL)) ||
        (rc = get_int(in, "expert_tensor_parallel_size", 1, big, &l->etp, NULL)) ||
        (rc = get_int(in, "micro_batch_size", 1, big, &l->micro_batch, NULL)) ||
        (rc = get_int(in, "batch_size", 1, big, &l->micro_batch, NULL)) ||
        (rc = get_int(in, "global_batch_size", 1, 1L << 30, &l->global_batch, NULL)) ||
        (rc = get_int(in, "seq_length", 1, 100000000L, &l->seq_len, NULL)) ||
        (rc = get_int(in, "decoder_first_pipeline_num_layers", 1, MAX_LAYERS,
                      &l->first_stage_layers, NULL)) ||
        (rc = get_int(in, "decoder_last_pipeline_num_layers", 1, MAX_LAYERS,
                      &l->last_stage_layers, NULL)))
        return rc;
    if (has_legacy_tp && !has_tp)
        l->tp = legacy_tp;
    if (!arg_of(a, "seq_length") && a->have_model)
        notes_add(&a->notes, NOTE_ASSUMED, "--seq-length",
                  "not given: the model's positions, at most 8192");
    if (get_str(in, "rampup_batch_size"))
        notes_add(&a->notes, NOTE_ASSUMED, "--rampup-batch-size",
                  "the step is simulated at the full --global-batch-size");
    /* The embedding and the loss may count as one layer each in the split
     * (Megatron's --account-for-embedding/loss-in-pipeline-split); Megatron
     * adds them before dividing the layers into virtual stages too
     * (megatron/training/arguments.py validate_args). */
    bool acc_emb = get_switch(in, "account_for_embedding_in_pipeline_split", false);
    bool acc_loss = get_switch(in, "account_for_loss_in_pipeline_split", false);
    /* Virtual pipeline stages. */
    int per_vstage = 0, vstages = 0;
    bool has_pv, has_vs;
    if ((rc = get_int(in, "num_layers_per_virtual_pipeline_stage", 1, MAX_LAYERS, &per_vstage,
                      &has_pv)) ||
        (rc = get_int(in, "num_virtual_stages_per_pipeline_rank", 1, 1024, &vstages, &has_vs)))
        return rc;
    if (has_vs)
        l->vpp = vstages;
    else if (has_pv) {
        if (!a->have_model)
            return err_setf(in->err, ERR_INPUT, a->origin,
                            "--num-layers-per-virtual-pipeline-stage",
                            "needs --num-layers to give the number of virtual stages");
        long denom = (long)l->pp * per_vstage;
        long split_layers = a->model.n_layers + (l->pp > 1 ? acc_emb + acc_loss : 0);
        if (split_layers % denom != 0)
            return err_setf(in->err, ERR_INPUT, a->origin,
                            "--num-layers-per-virtual-pipeline-stage",
                            "--num-layers %d%s%s must divide by PP x %d = %ld",
                            a->model.n_layers,
                            l->pp > 1 && acc_emb ? " + the embedding" : "",
                            l->pp > 1 && acc_loss ? " + the loss" : "", per_vstage, denom);
        l->vpp = (int)(split_layers / denom);
    }
    if (l->vpp > 1)
        l->schedule = SCHEDULE_INTERLEAVED;
    /* With the embedding or the loss counted as a layer, the first and
     * last virtual stages are one layer lighter. */
    if ((acc_emb || acc_loss) && l->pp > 1) {
        if (!a->have_model)
            return err_setf(in->err, ERR_INPUT, a->origin,
                            "--account-for-embedding-in-pipeline-split", "needs --num-layers");
        long chunks = (long)l->pp * l->vpp, total = a->model.n_layers + acc_emb + acc_loss;
        if (total % chunks)
            return err_setf(in->err, ERR_INPUT, a->origin,
                            "--account-for-embedding-in-pipeline-split",
                            "%d layers%s%s do not split into PP x VPP = %ld equal chunks",
                            a->model.n_layers, acc_emb ? " + the embedding" : "",
                            acc_loss ? " + the loss" : "", chunks);
        /* one layer a chunk leaves the embedding or the loss alone on its
         * chunk, which Megatron-Core builds */
        int lighter = (int)(total / chunks) - 1;
        if (lighter == 0)
            lighter = LAYOUT_STAGE_EMPTY;
        if (acc_emb)
            l->first_stage_layers = lighter;
        if (acc_loss)
            l->last_stage_layers = lighter;
    }
    l->sequence_parallel = get_switch(in, "sequence_parallel", false);
    l->distributed_optimizer = get_switch(in, "use_distributed_optimizer", false);

    /* FSDP variants: the sharding strategy is a ZeRO stage. */
    /* each switch read (and so marked as used), whichever is set */
    bool fsdp2 = get_switch(in, "use_torch_fsdp2", false);
    bool mfsdp = get_switch(in, "use_megatron_fsdp", false);
    bool cfsdp = get_switch(in, "use_custom_fsdp", false);
    bool fsdp = fsdp2 || mfsdp || cfsdp;
    const char *strategy = get_str(in, "data_parallel_sharding_strategy");
    if (fsdp) {
        if (!strategy || strcmp(strategy, "optim_grads_params") == 0)
            l->zero = 3;
        else if (strcmp(strategy, "optim_grads") == 0)
            l->zero = 2;
        else if (strcmp(strategy, "optim") == 0)
            l->zero = 1;
        else
            l->zero = 0;
        if (l->zero >= 2 && l->distributed_optimizer) {
            l->distributed_optimizer = false;
            notes_add(&a->notes, NOTE_ASSUMED, "--use-distributed-optimizer",
                      "FSDP shards the optimizer state itself (ZeRO-%d)", l->zero);
        }
    }

    /* Recompute. */
    const char *gran = get_str(in, "recompute_granularity");
    if (get_switch(in, "recompute_activations", false))
        l->recompute = RECOMPUTE_SELECTIVE;
    if (gran && strcmp(gran, "selective") == 0)
        l->recompute = RECOMPUTE_SELECTIVE;
    if ((gran && strcmp(gran, "full") == 0) || get_switch(in, "checkpoint_activations", false))
        l->recompute = RECOMPUTE_FULL;
    const char *method = get_str(in, "recompute_method");
    int rc_layers = 0;
    bool has_rcl;
    if ((rc = get_int(in, "recompute_num_layers", 1, MAX_LAYERS, &rc_layers, &has_rcl)))
        return rc;
    if (l->recompute == RECOMPUTE_FULL && method && strcmp(method, "block") == 0)
        l->recompute_layers = has_rcl ? rc_layers : 1; /* Megatron's default: 1 */
    else if (l->recompute == RECOMPUTE_FULL && has_rcl && rc_layers > 1)
        notes_add(&a->notes, NOTE_ASSUMED, "--recompute-num-layers",
                  "uniform recompute in groups of %d layers is simulated with one checkpoint "
                  "per layer",
                  rc_layers);
    const char *modules = get_str(in, "recompute_modules");
    if (modules && l->recompute == RECOMPUTE_SELECTIVE &&
        layout_parse_recompute_modules(modules, "--recompute-modules", &l->recompute_modules,
                                       in->err))
        /* the same reason, addressed to the launch file */
        return err_readdress(in->err, a->origin, "--recompute-modules");
    else if (modules && l->recompute != RECOMPUTE_SELECTIVE)
        notes_add(&a->notes, NOTE_IGNORED, "--recompute-modules",
                  "'%s' names what selective recompute rebuilds; this run's recompute is %s",
                  modules, layout_recompute_name(l->recompute));
    if (get_switch(in, "distribute_saved_activations", false))
        notes_add(&a->notes, NOTE_IGNORED, "--distribute-saved-activations",
                  "checkpoints split across TP are not modeled");

    /* Precision and gradients. */
    bool bf16 = get_switch(in, "bf16", false), fp16 = get_switch(in, "fp16", false);
    bool fp8 = get_str(in, "fp8") != NULL || get_switch(in, "fp8_e4m3", false) ||
               get_switch(in, "fp8_hybrid", false);
    if (bf16 && fp16)
        return err_setf(in->err, ERR_INPUT, a->origin, "--fp16",
                        "cannot be combined with --bf16");
    if (fp8 && !bf16 && !fp16)
        notes_add(&a->notes, NOTE_ASSUMED, "--fp8-format",
                  "fp8 GEMMs with bf16 elsewhere (no --bf16 or --fp16 given)");
    l->precision = fp8    ? PRECISION_FP8
                   : bf16 ? PRECISION_BF16
                   : fp16 ? PRECISION_FP16
                          : PRECISION_FP32;
    /* The fp8 recipe (Megatron's default "delayed" is the plain fp8 the
     * framework preset names) and fp4 (NVFP4, Transformer Engine). */
    const char *recipe = fp8 ? get_str(in, "fp8_recipe") : NULL;
    if (fp8 && recipe) {
        if (strcmp(recipe, "tensorwise") == 0)
            l->precision = PRECISION_FP8_CS;
        else if (strcmp(recipe, "mxfp8") == 0)
            l->precision = PRECISION_MXFP8;
        else if (strcmp(recipe, "blockwise") == 0)
            l->precision = PRECISION_FP8_BLOCK;
        else if (strcmp(recipe, "custom") == 0)
            notes_add(&a->notes, NOTE_ASSUMED, "--fp8-recipe",
                      "custom: priced as per-tensor delayed scaling");
        else if (strcmp(recipe, "delayed") != 0)
            return err_setf(in->err, ERR_INPUT, a->origin, "--fp8-recipe",
                            "'%s' is not one of Megatron's recipes (delayed, tensorwise, "
                            "mxfp8, blockwise, custom)",
                            recipe);
    }
    const char *fp4 = get_str(in, "fp4");
    const char *fp4_recipe = get_str(in, "fp4_recipe");
    if (fp4) {
        if (fp4_recipe && strcmp(fp4_recipe, "nvfp4") != 0 && strcmp(fp4_recipe, "custom") != 0)
            return err_setf(in->err, ERR_INPUT, a->origin, "--fp4-recipe",
                            "'%s' is not one of Megatron's recipes (nvfp4, custom)", fp4_recipe);
        l->precision = PRECISION_NVFP4;
        if (fp4_recipe && strcmp(fp4_recipe, "custom") == 0)
            notes_add(&a->notes, NOTE_ASSUMED, "--fp4-recipe", "custom: priced as NVFP4");
    }
    if (l->precision == PRECISION_FP32)
        notes_add(&a->notes, NOTE_ASSUMED, "--bf16",
                  "neither --bf16 nor --fp16: Megatron trains in fp32");
    if (fp8 && fp16)
        notes_add(&a->notes, NOTE_ASSUMED, "--fp16",
                  "fp8 GEMMs are simulated with bf16 elsewhere");
    bool reduce_bf16 = get_switch(in, "grad_reduce_in_bf16", false);
    bool accum_fp32 = get_switch(in, "accumulate_allreduce_grads_in_fp32", false) ||
                      get_switch(in, "fp32_allreduce", false);
    if (l->precision == PRECISION_FP32)
        l->grad_bytes = 4;
    else if (l->precision == PRECISION_FP16)
        l->grad_bytes = accum_fp32 ? 4 : 2;
    else /* bf16 and fp8: fp32 main grads unless reduced in bf16 */
        l->grad_bytes = reduce_bf16 ? 2 : 4;

    /* Offload: activations of N blocks per stage, the optimizer (a share). */
    int act_layers = 0;
    double fraction = 1.0;
    bool has_act, has_fraction;
    if ((rc = get_int(in, "cpu_offloading_num_layers", 0, MAX_LAYERS, &act_layers, &has_act)) ||
        (rc = get_double(in, "optimizer_offload_fraction", 0, 1, &fraction, &has_fraction)))
        return rc;
    if (act_layers > 0) {
        l->offload |= LAYOUT_OFFLOAD_ACTIVATIONS;
        l->offload_act_layers = act_layers;
    }
    if (get_switch(in, "optimizer_cpu_offload", false)) {
        l->offload |= LAYOUT_OFFLOAD_OPTIMIZER;
        l->offload_fraction = fraction < 1 ? fraction : 0;
    } else if (has_fraction && fraction < 1) {
        notes_add(&a->notes, NOTE_IGNORED, "--optimizer-offload-fraction",
                  "has no effect without --optimizer-cpu-offload");
    }
    if (get_switch(in, "fine_grained_activation_offloading", false))
        notes_add(&a->notes, NOTE_IGNORED, "--fine-grained-activation-offloading",
                  "module-level activation offload is not modeled (block-level "
                  "--cpu-offloading-num-layers is)");

    /* Attention kernel. */
    const char *backend = get_str(in, "attention_backend");
    const char *impl = get_str(in, "transformer_impl");
    bool flash = get_switch(in, "use_flash_attn", false);
    if (backend && (strcmp(backend, "unfused") == 0 || strcmp(backend, "local") == 0) && !flash)
        l->flash_attention = false;
    else if (impl && strcmp(impl, "local") == 0 && !flash && !backend) {
        l->flash_attention = false;
        notes_add(&a->notes, NOTE_ASSUMED, "--transformer-impl",
                  "local without --use-flash-attn: unfused attention");
    } else
        l->flash_attention = true;
    return ERR_OK;
}

/* What the run captures in CUDA graphs: nothing without --cuda-graph-impl,
 * the whole iteration with full_iteration, else the scopes named
 * (--cuda-graph-scope, --cuda-graph-modules in later releases) or, when
 * none is, the whole layer (Megatron-Core's default scope). */
static int read_cuda_graphs(interp_t *in, unsigned *scopes)
{
    const char *impl = get_str(in, "cuda_graph_impl");
    bool legacy = get_switch(in, "enable_cuda_graph", false);
    *scopes = 0;
    if ((!impl || strcmp(impl, "none") == 0) && !legacy)
        return ERR_OK;
    if (impl && strcmp(impl, "full_iteration") == 0) {
        *scopes = HOST_GRAPH_FULL;
        return ERR_OK;
    }
    const char *dest = get(in, "cuda_graph_modules") ? "cuda_graph_modules"
                                                       : "cuda_graph_scope_deprecated";
    megatron_arg_t *x = get(in, dest);
    if (!x || strcmp(x->value, "[]") == 0 || strcmp(x->value, "None") == 0) {
        *scopes = HOST_GRAPH_ATTN | HOST_GRAPH_MLP | HOST_GRAPH_MOE;
        return ERR_OK;
    }
    if (host_graph_scopes_parse(x->value, NULL, scopes, in->err))
        return err_setf(in->err, ERR_INPUT, in->a->origin, spelling_of(x), "%s", in->err->msg);
    return ERR_OK;
}

static int build_options(interp_t *in)
{
    megatron_args_t *a = in->a;
    sim_options_t *o = &a->opt;
    int rc;
    /* Megatron-LM leaves DP overlap off unless asked. */
    o->overlap_grad_reduce = get_switch(in, "overlap_grad_reduce", false);
    o->overlap_param_gather = get_switch(in, "overlap_param_gather", false);
    o->tp_comm_overlap = get_switch(in, "tp_comm_overlap", false);
    o->async_tp_grad = get_switch(in, "async_tensor_model_parallel_allreduce", true);
    if (get_switch(in, "overlap_p2p_communication", false))
        o->overlap_p2p = 1;
    if (!get_switch(in, "overlap_p2p_comm", true))
        o->overlap_p2p = 0;
    int bucket = 0;
    bool has_bucket;
    if ((rc = get_int(in, "ddp_bucket_size", 1, 2000000000L, &bucket, &has_bucket)))
        return rc;
    if (has_bucket)
        o->bucket_params = bucket;
    o->fp8_param_gather = get_switch(in, "fp8_param_gather", false);
    /* mixture of experts: Megatron's defaults unless given */
    const char *disp = get_str(in, "moe_token_dispatcher_type");
    o->moe.dispatcher = MOE_DISPATCH_ALLGATHER;
    if (disp && (strcmp(disp, "deepep") == 0 ||
                 moe_dispatch_parse(disp, "--moe-token-dispatcher-type", &o->moe.dispatcher,
                                    in->err)))
        return err_setf(in->err, ERR_INPUT, a->origin, "--moe-token-dispatcher-type",
                        "'%s' is not one of Megatron's dispatchers (allgather, alltoall, flex)",
                        disp);
    o->moe.dispatcher_given = disp != NULL;
    o->moe.grouped_gemm = get_switch(in, "moe_grouped_gemm", false);
    o->moe.permute_fusion = get_switch(in, "moe_permute_fusion", false);
    o->moe.shared_overlap = get_switch(in, "moe_shared_expert_overlap", false);
    o->moe.a2a_overlap = get_switch(in, "overlap_moe_expert_parallel_comm", false);
    const char *cf = get_str(in, "moe_expert_capacity_factor"); /* None: dropless */
    if (cf && strcmp(cf, "None") != 0 &&
        (rc = get_double(in, "moe_expert_capacity_factor", 1e-6, 1e6, &o->moe.capacity_factor,
                         NULL)))
        return rc;
    o->moe.pad_to_capacity = get_switch(in, "moe_pad_expert_input_to_capacity", false) &&
                             o->moe.capacity_factor > 0;
    o->host.router_fusion = get_switch(in, "moe_router_fusion", false);
    return read_cuda_graphs(in, &o->host.graph_scopes);
}

void megatron_args_options(const megatron_args_t *a, sim_options_t *o)
{
    o->overlap_grad_reduce = a->opt.overlap_grad_reduce;
    o->overlap_param_gather = a->opt.overlap_param_gather;
    o->tp_comm_overlap = a->opt.tp_comm_overlap;
    o->async_tp_grad = a->opt.async_tp_grad;
    o->overlap_p2p = a->opt.overlap_p2p;
    o->bucket_params = a->opt.bucket_params;
    o->fp8_param_gather = a->opt.fp8_param_gather;
    /* how MoE blocks run; the imbalance is the run's, not the command's */
    double imbalance = o->moe.imbalance;
    bool given = o->moe.imbalance_given;
    o->moe = a->opt.moe;
    o->moe.imbalance = imbalance;
    o->moe.imbalance_given = given;
    /* the host's costs stay the preset's; what the run fuses and captures is
     * the file's */
    o->host.router_fusion = a->opt.host.router_fusion;
    o->host.graph_scopes = a->opt.host.graph_scopes;
}

/* Arguments the parser's table marks as affecting speed or memory that in
 * fact only set initialisation or run length. */
static bool no_effect(const char *dest)
{
    static const char *const dests[] = {"init_method_std", "embedding_init_method_std",
                                        "train_iters", "train_samples",
                                        "distributed_timeout_minutes", "exit_interval",
                                        "exit_duration_in_mins", "seed"};
    for (size_t i = 0; i < sizeof dests / sizeof dests[0]; i++)
        if (strcmp(dest, dests[i]) == 0)
            return true;
    return false;
}

/* Whether a stored value equals the flag's default (then saying it was
 * ignored would be noise: it changes nothing). */
static bool at_default(const megatron_arg_t *x)
{
    char d[256], v[256];
    plain_value(x->flag->def, d, sizeof d);
    plain_value(x->value, v, sizeof v);
    if (strcmp(d, v) == 0)
        return true;
    double dd, vv;
    if (parse_double(d, &dd) && parse_double(v, &vv))
        return dd == vv;
    if (strcmp(d, "None") == 0 && strcmp(v, "False") == 0)
        return true; /* switches whose default is None act as False */
    return false;
}

int megatron_args_finish(megatron_args_t *a, err_t *err)
{
    interp_t in = {a, err};
    layout_defaults(&a->layout);
    sim_options_default(&a->opt);
    int rc;
    /* TP first: the vocabulary padding depends on it. */
    int tp = 1, legacy = 1;
    bool has_tp, has_legacy;
    if ((rc = get_int(&in, "tensor_model_parallel_size", 1, 1 << 24, &tp, &has_tp)) ||
        (rc = get_int(&in, "model_parallel_size", 1, 1 << 24, &legacy, &has_legacy)))
        return rc;
    if (!has_tp && has_legacy)
        tp = legacy;
    if ((rc = build_model(&in, tp)) || (rc = build_layout(&in)) || (rc = build_options(&in)))
        return rc;
    a->world_size = 0;
    if (a->nproc_per_node > 0) {
        long world = (long)a->nproc_per_node * (a->nnodes > 0 ? a->nnodes : 1);
        if (world <= (1 << 24))
            a->world_size = (int)world;
    }
    /* Everything else: accepted, and said when it changes anything. */
    for (size_t i = 0; i < a->n_args; i++) {
        megatron_arg_t *x = &a->args[i];
        if (x->used || at_default(x))
            continue;
        if (!a->have_model && x->flag->perf == 'Y' && arg_of(a, "num_layers") == NULL &&
            (strcmp(x->flag->dest, "swiglu") == 0 || strcmp(x->flag->dest, "ffn_hidden_size") == 0))
            notes_add(&a->notes, NOTE_IGNORED, x->spelling,
                      "architecture flag without --num-layers/--hidden-size/"
                      "--num-attention-heads: the model comes from elsewhere");
        else if (x->flag->perf == 'Y' && !no_effect(x->flag->dest))
            notes_add(&a->notes, NOTE_IGNORED, x->spelling,
                      "accepted; its effect on speed or memory is not modeled");
        else
            notes_add(&a->notes, NOTE_IGNORED, x->spelling, "no effect on speed or memory");
    }
    if (a->notes.oom)
        return err_set(err, ERR_RUNTIME, "out of memory listing the ignored arguments");
    return ERR_OK;
}

int megatron_args_read(const char *text, size_t len, const char *origin, megatron_args_t *a,
                       err_t *err)
{
    megatron_args_init(a, origin);
    int rc = megatron_args_parse_text(a, text, len, err);
    return rc ? rc : megatron_args_finish(a, err);
}
