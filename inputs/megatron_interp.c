/* megatron_interp: the arguments megatron_args read turned into a model,
 * a layout and simulator options (megatron_args_finish), with what was
 * ignored or assumed as notes. The rules that turn flags into sizes follow
 * megatron/training/arguments.py validate_args and the tokenizer's
 * vocabulary padding at the commit the flag table names. */
#include "inputs/megatron_argsInt.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "models/hybrid.h"

typedef struct {
    megatron_args_t *a;
    err_t *err;
} interp_t;

/* The stored argument for dest (marked as read), or NULL. */
static megatron_arg_t *get(interp_t *in, const char *dest)
{
    megatron_arg_t *x = megatron_arg_of(in->a, dest);
    if (x)
        x->used = true;
    return x;
}

static const char *spelling_of(const megatron_arg_t *x)
{
    return x->spelling;
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
    if (!megatron_parse_long(x->value, &v) || v < lo || v > hi)
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
    if (!megatron_parse_double(x->value, &v) || v < lo || v > hi)
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
    megatron_arg_t *x = megatron_arg_of(in->a, dest);
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
    if (!tok && (strcmp(a->script, "pretrain_gpt.py") == 0 ||
                 strcmp(a->script, "pretrain_gpt2.py") == 0)) {
        /* pretrain_gpt.py's args_defaults (every release since v1.0) */
        tok = "GPT2BPETokenizer";
        if (!have_padded)
            notes_add(&a->notes, NOTE_ASSUMED, "--tokenizer-type",
                      "not given: GPT2BPETokenizer (%s's default)", a->script);
    }
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
        return err_setf(in->err, ERR_INPUT, a->origin, megatron_flag_name("vocab_size", name, sizeof name),
                        "the vocabulary size comes from the tokenizer files (%s%s), which "
                        "scaleplan does not read; give --vocab-size N (the tokenizer's size, "
                        "before Megatron's padding)",
                        tok ? tok : "no --tokenizer-type",
                        get_str(in, "tokenizer_model") ? ", --tokenizer-model" : "");
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
    if (megatron_parse_long(text, &n)) {
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

/* Whether the run is a hybrid Mamba model (its layer pattern, its script
 * pretrain_mamba.py / pretrain_hybrid.py, or --is-hybrid-model) and its
 * pattern: --hybrid-override-pattern, else --hybrid-layer-pattern (NULL
 * when none is given). Megatron's automatic allocation from
 * --hybrid-attention-ratio / --hybrid-mlp-ratio is refused naming the
 * flag: the pattern must be given. */
static int hybrid_pattern(interp_t *in, const char **dest, const char **pat, bool *hybrid)
{
    megatron_args_t *a = in->a;
    static const char *const PATTERN[] = {"hybrid_override_pattern", "hybrid_layer_pattern"};
    for (size_t i = 0; i < 2 && !*pat; i++)
        if (megatron_arg_of(a, PATTERN[i]) && !megatron_arg_at_default(megatron_arg_of(a, PATTERN[i]))) {
            *dest = PATTERN[i];
            *pat = get_str(in, PATTERN[i]);
        }
    static const char *const RATIO[] = {"hybrid_attention_ratio", "hybrid_mlp_ratio"};
    for (size_t i = 0; i < 2; i++) {
        int rc = refuse_if(in, RATIO[i],
                           !*pat && megatron_arg_of(a, RATIO[i]) && !megatron_arg_at_default(megatron_arg_of(a, RATIO[i])),
                           "Megatron's automatic layer allocation is not reproduced; give the "
                           "layers with --hybrid-override-pattern (M Mamba-2, * attention, - "
                           "MLP, E MoE)");
        if (rc)
            return rc;
    }
    *hybrid = *pat || get_switch(in, "is_hybrid_model", false) ||
              strcmp(a->script, "pretrain_mamba.py") == 0 ||
              strcmp(a->script, "pretrain_hybrid.py") == 0;
    return ERR_OK;
}

/* A hybrid Mamba model's blocks and Mamba-2 sizes (Megatron MambaMixer:
 * d_inner = 2 x hidden, heads d_inner / --mamba-head-dim unless
 * --mamba-num-heads, conv width 4, chunk 128). Without a pattern every
 * layer is Mamba-2 (the allocation with both ratios 0), said. */
static int build_hybrid(interp_t *in, model_t *m, const char *dest, const char *pat)
{
    megatron_args_t *a = in->a;
    char all[MODEL_MAX_MOE_LAYERS + 1];
    const char *flag = dest ? spelling_of(megatron_arg_of(a, dest)) : "--num-layers";
    int want = m->n_layers, rc;
    if (!pat) {
        if (want > MODEL_MAX_MOE_LAYERS)
            return err_setf(in->err, ERR_INPUT, a->origin, flag, "more than %d layers",
                            MODEL_MAX_MOE_LAYERS);
        memset(all, 'M', (size_t)want);
        all[want] = '\0';
        pat = all;
        notes_add(&a->notes, NOTE_ASSUMED, "--hybrid-override-pattern",
                  "not given: every layer Mamba-2 (Megatron's allocation with no attention or "
                  "MLP ratio)");
    }
    if ((rc = model_hybrid_set_pattern(m, pat, a->origin, flag, in->err)))
        return rc;
    if (m->n_layers != want)
        return err_setf(in->err, ERR_INPUT, a->origin, flag,
                        "has %d layers but --num-layers is %d", m->n_layers, want);
    m->norms_per_layer = 1; /* one pre-norm per layer */
    model_hybrid_t *h = &m->hybrid;
    h->ssm_state = 128, h->ssm_head_dim = 64, h->ssm_groups = 8, h->ssm_conv = 4;
    h->ssm_chunk = 128;
    bool has_heads = false;
    if ((rc = get_int(in, "mamba_state_dim", 1, MAX_WIDTH, &h->ssm_state, NULL)) ||
        (rc = get_int(in, "mamba_head_dim", 1, MAX_WIDTH, &h->ssm_head_dim, NULL)) ||
        (rc = get_int(in, "mamba_num_groups", 1, MAX_WIDTH, &h->ssm_groups, NULL)) ||
        (rc = get_int(in, "mamba_num_heads", 1, MAX_WIDTH, &h->ssm_heads, &has_heads)))
        return rc;
    if (!has_heads) {
        if ((2L * m->hidden) % h->ssm_head_dim != 0)
            return err_setf(in->err, ERR_INPUT, a->origin, "--mamba-head-dim",
                            "must divide 2 x --hidden-size %d (got %d)", 2 * m->hidden,
                            h->ssm_head_dim);
        h->ssm_heads = (int)(2L * m->hidden / h->ssm_head_dim);
    }
    return ERR_OK;
}

/* Attention: the head width (--kv-channels, else hidden / heads) and the
 * query groups (validate_args). */
static int read_attention(interp_t *in, model_t *m)
{
    megatron_args_t *a = in->a;
    int H = m->hidden, A = m->n_heads;
    int rc;
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
    return ERR_OK;
}

/* The MLP: its kind and width (Megatron's default FFN width when not
 * given). */
static int read_mlp(interp_t *in, model_t *m)
{
    megatron_args_t *a = in->a;
    int H = m->hidden;
    int rc;
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
    return ERR_OK;
}

/* Normalization: LayerNorm or RMSNorm and its epsilon. */
static int read_norm(interp_t *in, model_t *m)
{
    megatron_args_t *a = in->a;
    int rc;
    const char *norm = get_str(in, "normalization");
    if (!norm)
        notes_add(&a->notes, NOTE_ASSUMED, "--normalization",
                  "not given: LayerNorm (Megatron's default)");
    m->norm = norm && strcmp(norm, "RMSNorm") == 0 ? MODEL_NORM_RMSNORM : MODEL_NORM_LAYERNORM;
    (void)get_switch(in, "apply_layernorm_1p", false); /* same weights and cost */
    m->norm_eps = 1e-5;
    if ((rc = get_double(in, "layernorm_epsilon", 1e-12, 0.1, &m->norm_eps, NULL)))
        return rc;
    return ERR_OK;
}

/* Positions: learned, rotary (its base) or none, and the longest
 * sequence. */
static int read_positions(interp_t *in, model_t *m)
{
    megatron_args_t *a = in->a;
    int rc;
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
    return ERR_OK;
}

/* Embeddings (tied or not), biases (*bias_out: on the linear layers) and
 * dropout. */
static int read_biases_dropout(interp_t *in, model_t *m, bool *bias_out)
{
    megatron_args_t *a = in->a;
    int rc;
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
    *bias_out = bias;
    return ERR_OK;
}

/* The model the architecture flags give (a->model, a->have_model): the
 * sizes, then each part in Megatron's order; none when the text gives no
 * architecture flag. tp pads the vocabulary. */
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
    /* Hybrid Mamba models (models/hybrid.h): the layer pattern gives the
     * layers when --num-layers does not */
    const char *pat_dest = NULL, *pat = NULL;
    bool hybrid = false;
    if ((rc = hybrid_pattern(in, &pat_dest, &pat, &hybrid)))
        return rc;
    if (pat && !has_l) {
        for (const char *c = pat; *c; c++)
            L += *c != '|';
        has_l = L > 0;
    }
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
    if ((rc = refuse_if(in, "decoder_num_layers", true,
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
    bool bias;
    if ((rc = read_attention(in, m)) || (rc = read_mlp(in, m)) || (rc = read_norm(in, m)) ||
        (rc = read_positions(in, m)) || (rc = read_biases_dropout(in, m, &bias)))
        return rc;
    if ((rc = vocab_size(in, tp, &m->vocab)) || (rc = build_attention_variants(in, m, bias)) ||
        (rc = build_moe(in, m, bias)) ||
        (hybrid && (rc = build_hybrid(in, m, pat_dest, pat))))
        return rc;
    a->have_model = true;
    return model_validate(m, a->origin, in->err);
}

/* The split of layers over pipeline stages: virtual stages (given, or
 * from --num-layers-per-virtual-pipeline-stage) and the embedding or the
 * loss counted as a layer (Megatron's
 * --account-for-embedding/loss-in-pipeline-split), which makes the first
 * and last virtual stages one layer lighter. */
static int read_pipeline_split(interp_t *in, layout_t *l)
{
    megatron_args_t *a = in->a;
    int rc;
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
    return ERR_OK;
}

/* Sequence parallelism, the distributed optimizer and the FSDP variants,
 * whose sharding strategy is a ZeRO stage. */
static void read_sharding(interp_t *in, layout_t *l)
{
    megatron_args_t *a = in->a;
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
}

/* Recompute: none, selective (its modules) or full (uniform or block). */
static int read_recompute(interp_t *in, layout_t *l)
{
    megatron_args_t *a = in->a;
    int rc;
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
    return ERR_OK;
}

/* Precision (bf16, fp16, fp8 and its recipe, NVFP4) and the bytes of a
 * gradient. */
static int read_precision(interp_t *in, layout_t *l)
{
    megatron_args_t *a = in->a;
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
    return ERR_OK;
}

/* Offload: activations of N blocks per stage, the optimizer (a share). */
static int read_offload(interp_t *in, layout_t *l)
{
    megatron_args_t *a = in->a;
    int rc;
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
    return ERR_OK;
}

/* The attention kernel: flash unless the flags ask for unfused
 * attention. */
static void read_attention_kernel(interp_t *in, layout_t *l)
{
    megatron_args_t *a = in->a;
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
}

/* The layout the layout flags give (a->layout, from layout_defaults):
 * parallel sizes and batch, then each part in Megatron's order. */
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
    if (!megatron_arg_of(a, "seq_length") && a->have_model)
        notes_add(&a->notes, NOTE_ASSUMED, "--seq-length",
                  "not given: the model's positions, at most 8192");
    if (get_str(in, "rampup_batch_size"))
        notes_add(&a->notes, NOTE_ASSUMED, "--rampup-batch-size",
                  "the step is simulated at the full --global-batch-size");
    if ((rc = read_pipeline_split(in, l)))
        return rc;
    read_sharding(in, l);
    if ((rc = read_recompute(in, l)) || (rc = read_precision(in, l)) || (rc = read_offload(in, l)))
        return rc;
    read_attention_kernel(in, l);
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
    /* Megatron-LM's arguments say the whole run: no capacity is dropless,
     * whatever a framework's recipe would set */
    o->moe.capacity_factor = 0;
    o->moe.drop_from_recipe = false;
    const char *cf = get_str(in, "moe_expert_capacity_factor"); /* None: dropless */
    if (cf && strcmp(cf, "None") != 0 &&
        (rc = get_double(in, "moe_expert_capacity_factor", 1e-6, 1e6, &o->moe.capacity_factor,
                         NULL)))
        return rc;
    o->moe.pad_to_capacity = get_switch(in, "moe_pad_expert_input_to_capacity", false) &&
                             o->moe.capacity_factor > 0;
    o->host.router_fusion = get_switch(in, "moe_router_fusion", false);
    o->host.graph_scopes_given = true; /* the file says what it captures, if nothing */
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
    /* how MoE blocks run, as far as the arguments say it; what they cannot
     * say (the release's kernels: probabilities in the activation, scatter
     * adds, fp8 dispatch) stays the preset's, and the imbalance is the
     * run's, not the command's */
    const moe_opts_t *m = &a->opt.moe;
    o->moe.dispatcher = m->dispatcher;
    o->moe.dispatcher_given = m->dispatcher_given;
    o->moe.grouped_gemm = m->grouped_gemm;
    o->moe.permute_fusion = m->permute_fusion;
    o->moe.shared_overlap = m->shared_overlap;
    o->moe.a2a_overlap = m->a2a_overlap;
    o->moe.capacity_factor = m->capacity_factor;
    o->moe.pad_to_capacity = m->pad_to_capacity;
    o->moe.drop_from_recipe = false;
    /* the host's costs stay the preset's; what the run fuses and captures is
     * the file's */
    o->host.router_fusion = a->opt.host.router_fusion;
    o->host.graph_scopes = a->opt.host.graph_scopes;
    o->host.graph_scopes_given = a->opt.host.graph_scopes_given;
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
        if (x->used || megatron_arg_at_default(x))
            continue;
        if (!a->have_model && x->flag->perf == 'Y' && megatron_arg_of(a, "num_layers") == NULL &&
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
