#include "models/layout.h"

#include "common/json.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

void layout_defaults(layout_t *l)
{
    memset(l, 0, sizeof *l);
    l->tp = l->pp = l->cp = l->ep = l->dp = l->vpp = 1;
    l->micro_batch = 1;
    l->global_batch = 0; /* = micro_batch * dp * max(grad_accum, 1) */
    l->grad_accum = 0;   /* derived; a value set before finalize is a request */
    l->seq_len = 0; /* = model's max_seq, capped at 8192 */
    l->zero = 0;
    l->recompute = RECOMPUTE_NONE;
    l->precision = PRECISION_BF16;
    l->schedule = SCHEDULE_1F1B;
    l->flash_attention = true;
    l->grad_bytes = 2;
    l->n_gpus = 1;
    finetune_defaults(&l->ft);
}

static const char *schedule_names[SCHEDULE_COUNT] = {"gpipe", "1f1b", "interleaved",
                                                     "dualpipev"};
static const char *recompute_names[RECOMPUTE_COUNT] = {"none", "selective", "full", "ops"};
static const char *precision_names[PRECISION_COUNT] = {
    "bf16", "fp16", "fp8", "fp32", "fp8-cs", "mxfp8", "fp8-block", "fp8-rowwise", "nvfp4", "mxfp4"};

bool layout_precision_quantized(precision_t p)
{
    return p == PRECISION_FP8 || p >= PRECISION_FP8_CS;
}

bool layout_precision_fp4(precision_t p)
{
    return p == PRECISION_NVFP4 || p == PRECISION_MXFP4;
}

const char *layout_schedule_name(schedule_t s)
{
    return s < SCHEDULE_COUNT ? schedule_names[s] : "?";
}
const char *layout_recompute_name(recompute_t r)
{
    return r < RECOMPUTE_COUNT ? recompute_names[r] : "?";
}
const char *layout_precision_name(precision_t p)
{
    return p < PRECISION_COUNT ? precision_names[p] : "?";
}

/* Find text among names[0..n); report the accepted names on a miss. */
static int parse_enum(const char *text, const char *const *names, int n,
                      const char *flag, int *out, err_t *err)
{
    for (int i = 0; i < n; i++)
        if (text && strcasecmp(text, names[i]) == 0) {
            *out = i;
            return ERR_OK;
        }
    char list[128] = "";
    for (int i = 0; i < n; i++) {
        strncat(list, names[i], sizeof list - strlen(list) - 1);
        if (i + 1 < n)
            strncat(list, ", ", sizeof list - strlen(list) - 1);
    }
    return err_setf(err, ERR_INPUT, NULL, flag, "unknown value '%s' (use one of: %s)",
                    text ? text : "", list);
}

int layout_parse_schedule(const char *text, schedule_t *out, err_t *err)
{
    int v;
    /* Megatron and DeepSpeed spellings of the same schedules. */
    if (text && (strcasecmp(text, "pipedream-flush") == 0 ||
                 strcasecmp(text, "1f1b-flush") == 0))
        text = "1f1b";
    if (text && (strcasecmp(text, "interleaved-1f1b") == 0 ||
                 strcasecmp(text, "vpp") == 0))
        text = "interleaved";
    int rc = parse_enum(text, schedule_names, SCHEDULE_COUNT, "--schedule", &v, err);
    if (!rc)
        *out = (schedule_t)v;
    return rc;
}

int layout_parse_recompute(const char *text, recompute_t *out, err_t *err)
{
    int v;
    int rc = parse_enum(text, recompute_names, RECOMPUTE_COUNT, "--recompute", &v, err);
    if (!rc)
        *out = (recompute_t)v;
    return rc;
}

static const char *const rc_module_names[] = {"core_attn", "layernorm",   "mlp",
                                              "moe_act",   "moe",         "mla_up_proj",
                                              "shared_experts"};
static const char *const rc_module_brief[] = {"attn", "norm", "mlp", "act", "moe", "up", "shared"};
enum { RC_MODULES = sizeof rc_module_names / sizeof rc_module_names[0] };
#define RC_MODULE_LIST                                                                    \
    "core_attn, layernorm, mlp, moe_act, moe, mla_up_proj or shared_experts (or attn, norm, "   \
    "act, up, shared)"

unsigned layout_rc_module_word(const char *word, size_t n)
{
    /* Megatron's names and the brief ones this project prints ("act" is
     * Megatron's moe_act, not a dense MLP's activation: a dense MLP is
     * rebuilt whole by "mlp") */
    for (int i = 0; i < RC_MODULES; i++)
        if ((strlen(rc_module_names[i]) == n && strncasecmp(word, rc_module_names[i], n) == 0) ||
            (strlen(rc_module_brief[i]) == n && strncasecmp(word, rc_module_brief[i], n) == 0))
            return 1u << i;
    return 0;
}

int layout_parse_recompute_modules(const char *text, const char *flag, unsigned *out, err_t *err)
{
    unsigned mask = 0;
    const char *p = text;
    for (;;) {
        while (*p && strchr("[]'\", \t", *p))
            p++;
        if (!*p)
            break;
        size_t n = strcspn(p, "[]'\", \t");
        unsigned bit = layout_rc_module_word(p, n);
        if (!bit)
            return err_setf(err, ERR_INPUT, NULL, flag,
                            "unknown module '%.*s' (use " RC_MODULE_LIST ")",
                            (int)(n < 40 ? n : 40), p);
        mask |= bit;
        p += n;
    }
    if (!mask)
        return err_setf(err, ERR_INPUT, NULL, flag, "names no module (use " RC_MODULE_LIST ")");
    *out = mask;
    return ERR_OK;
}

int layout_recompute_modules_name(unsigned modules, const char *sep, bool brief, char *buf,
                                  int cap)
{
    size_t need = 0;
    bool cut = cap <= 0;
    if (cap > 0)
        buf[0] = '\0';
    for (int i = 0; i < RC_MODULES; i++) {
        if (!(modules & (1u << i)))
            continue;
        const char *w = brief ? rc_module_brief[i] : rc_module_names[i];
        size_t add = (need ? strlen(sep) : 0) + strlen(w);
        /* whole names only: past the first that does not fit, none */
        cut = cut || need + add >= (size_t)cap;
        if (!cut)
            snprintf(buf + need, (size_t)cap - need, "%s%s", need ? sep : "", w);
        need += add;
    }
    return (int)need;
}

unsigned layout_rc_modules(const layout_t *l)
{
    if (l->recompute != RECOMPUTE_SELECTIVE)
        return 0;
    return l->recompute_modules ? l->recompute_modules : LAYOUT_RC_CORE_ATTN;
}

int layout_parse_precision(const char *text, precision_t *out, err_t *err)
{
    int v;
    int rc = parse_enum(text, precision_names, PRECISION_COUNT, "--precision", &v, err);
    if (!rc)
        *out = (precision_t)v;
    return rc;
}

int layout_parse_offload(const char *text, layout_t *l, err_t *err)
{
    int bits = 0, layers = 0;
    bool nvme = false;
    const char *p = text ? text : "";
    if (!*p)
        return err_setf(err, ERR_INPUT, NULL, "--offload",
                        "needs a list: optimizer, params, activations (or none)");
    while (*p) {
        size_t n = strcspn(p, ",");
        char word[48];
        snprintf(word, sizeof word, "%.*s", (int)(n < 47 ? n : 47), p);
        char *eq = strchr(word, '=');
        if (eq)
            *eq++ = '\0';
        if (strcasecmp(word, "optimizer") == 0 || strcasecmp(word, "opt") == 0)
            bits |= LAYOUT_OFFLOAD_OPTIMIZER;
        else if (strcasecmp(word, "params") == 0 || strcasecmp(word, "parameters") == 0)
            bits |= LAYOUT_OFFLOAD_PARAMS;
        else if (strcasecmp(word, "activations") == 0 || strcasecmp(word, "act") == 0) {
            bits |= LAYOUT_OFFLOAD_ACTIVATIONS;
            if (eq) {
                char *end;
                long v = strtol(eq, &end, 10);
                if (end == eq || *end || v < 1 || v > 100000)
                    return err_setf(err, ERR_INPUT, NULL, "--offload",
                                    "activations=N needs a number of blocks (got '%s')", eq);
                layers = (int)v;
            }
        } else if (strcasecmp(word, "nvme") == 0)
            nvme = true;
        else if (strcasecmp(word, "none") == 0)
            ;
        else
            return err_setf(err, ERR_INPUT, NULL, "--offload",
                            "unknown part '%s' (use optimizer, params, activations[=N], nvme, "
                            "none)",
                            word);
        p += n;
        if (*p == ',')
            p++;
    }
    if (nvme && !(bits & (LAYOUT_OFFLOAD_OPTIMIZER | LAYOUT_OFFLOAD_PARAMS)))
        return err_setf(err, ERR_INPUT, NULL, "--offload",
                        "nvme places offloaded optimizer state or parameters; add optimizer "
                        "or params");
    l->offload = bits;
    l->offload_nvme = nvme;
    l->offload_act_layers = layers;
    return ERR_OK;
}

void layout_offload_name(const layout_t *l, char *buf, int cap)
{
    buf[0] = '\0';
    static const struct {
        int bit;
        const char *name;
    } parts[] = {{LAYOUT_OFFLOAD_OPTIMIZER, "optimizer"},
                 {LAYOUT_OFFLOAD_PARAMS, "params"},
                 {LAYOUT_OFFLOAD_ACTIVATIONS, "activations"}};
    for (size_t i = 0; i < sizeof parts / sizeof parts[0]; i++)
        if (l->offload & parts[i].bit) {
            size_t n = strlen(buf);
            snprintf(buf + n, (size_t)cap - n, "%s%s", n ? "," : "", parts[i].name);
        }
    if (l->offload_nvme && buf[0]) {
        size_t n = strlen(buf);
        snprintf(buf + n, (size_t)cap - n, ",nvme");
    }
}

int layout_offload_act_layers(const layout_t *l, int layers)
{
    if (!(l->offload & LAYOUT_OFFLOAD_ACTIVATIONS) || layers <= 1)
        return 0;
    int n = l->offload_act_layers > 0 ? l->offload_act_layers : layers - 1;
    return n < layers ? n : layers - 1;
}

int layout_weight_bytes(precision_t p)
{
    return p == PRECISION_FP32 ? 4 : 2;
}

int layout_default_seq_len(const model_t *m)
{
    return m->max_seq < 8192 ? m->max_seq : 8192;
}

int layout_etp(const layout_t *l)
{
    return l->etp > 0 ? l->etp : l->tp;
}

double layout_expert_dp(const layout_t *l)
{
    double ranks = (double)l->tp * l->cp * l->dp;
    double e = (double)l->ep * layout_etp(l);
    return ranks / e >= 1 ? ranks / e : 1;
}

static int check_degree(int v, const char *flag, err_t *err)
{
    if (v < 1 || v > (1 << 24))
        return err_setf(err, ERR_INPUT, NULL, flag,
                        "must be a whole number from 1 to %d (got %d)", 1 << 24, v);
    return ERR_OK;
}

/* Check the pipeline split of m->n_layers over pp ranks and vpp chunks: an
 * uneven split gives the first and last virtual stages their own layer
 * counts and splits the rest evenly over the others. */
static int check_pipeline_split(const layout_t *l, const model_t *m, err_t *err)
{
    int L = m->n_layers, p = l->pp, V = l->pp * l->vpp;
    int first = l->first_stage_layers, last = l->last_stage_layers;
    if (first < 0 && first != LAYOUT_STAGE_EMPTY)
        return err_setf(err, ERR_INPUT, NULL, "--first-stage-layers", "must not be negative");
    if (last < 0 && last != LAYOUT_STAGE_EMPTY)
        return err_setf(err, ERR_INPUT, NULL, "--last-stage-layers", "must not be negative");
    /* a first stage with the embedding alone or a last one with the loss
     * alone is a stage without layers the split asked for */
    int empty = (first == LAYOUT_STAGE_EMPTY) + (last == LAYOUT_STAGE_EMPTY);
    if (p > L + empty || V > L + empty)
        return err_setf(err, ERR_INPUT, NULL, "--pp",
                        "%d pipeline stages (x %d virtual) for %d layers; a stage needs "
                        "at least one layer",
                        p, l->vpp, L);
    if (first || last) {
        int special = (first != 0) + (last != 0);
        first = layout_split_layers(first);
        last = layout_split_layers(last);
        if (V <= special)
            return err_setf(err, ERR_INPUT, NULL, "--first-stage-layers",
                            "an uneven split needs more than %d (virtual) stages", special);
        int rest = L - first - last, middle = V - special;
        if (rest < middle || rest % middle != 0)
            return err_setf(err, ERR_INPUT, NULL, "--first-stage-layers",
                            "the %d layers left after the first/last stages "
                            "(%d/%d) must split evenly over the other %d (virtual) stages",
                            rest, first, last, middle);
        return ERR_OK;
    }
    if (L % V != 0) {
        if (l->vpp > 1)
            return err_setf(err, ERR_INPUT, NULL, "--vpp",
                            "num_layers %d must divide by PP x VPP = %d x %d",
                            L, p, l->vpp);
        return err_setf(err, ERR_INPUT, NULL, "--pp",
                        "num_layers %d must divide by PP %d (or give "
                        "--first-stage-layers/--last-stage-layers for an "
                        "uneven split)",
                        L, p);
    }
    return ERR_OK;
}

/* Phase 1: every degree and setting in its range. */
static int check_ranges(const layout_t *l, int n_gpus, err_t *err)
{
    int rc;
    if (n_gpus < 1 || n_gpus > (1 << 24))
        return err_setf(err, ERR_INPUT, NULL, "--gpus",
                        "must be from 1 to %d (got %d)", 1 << 24, n_gpus);
    if ((rc = check_degree(l->tp, "--tp", err)) ||
        (rc = check_degree(l->pp, "--pp", err)) ||
        (rc = check_degree(l->cp, "--cp", err)) ||
        (rc = check_degree(l->ep, "--ep", err)) ||
        (l->etp != 0 && (rc = check_degree(l->etp, "--etp", err))) ||
        (rc = check_degree(l->vpp, "--vpp", err)) ||
        (rc = check_degree(l->micro_batch, "--micro-batch", err)))
        return rc;
    if (l->global_batch < 0)
        return err_setf(err, ERR_INPUT, NULL, "--global-batch",
                        "must not be negative (got %d)", l->global_batch);
    if (l->zero < 0 || l->zero > 3)
        return err_setf(err, ERR_INPUT, NULL, "--zero",
                        "must be 0, 1, 2 or 3 (got %d)", l->zero);
    if (l->grad_bytes != 2 && l->grad_bytes != 4)
        return err_setf(err, ERR_INPUT, NULL, "--grad-dtype",
                        "gradients are 2 (bf16) or 4 (fp32) bytes (got %d)",
                        l->grad_bytes);
    return ERR_OK;
}

/* Phase 2: the model splits the way Megatron-LM would split it. */
static int check_model_split(const layout_t *l, const model_t *m, err_t *err)
{
    if (!model_is_moe(m) && l->ep != 1)
        return err_setf(err, ERR_INPUT, NULL, "--ep",
                        "expert parallelism needs a mixture-of-experts model; "
                        "%s is dense (use --ep 1)",
                        m->name);
    if (!model_is_moe(m) && l->etp != 0 && l->etp != l->tp)
        return err_setf(err, ERR_INPUT, NULL, "--etp",
                        "expert tensor parallelism needs a mixture-of-experts model; "
                        "%s is dense",
                        m->name);
    if (model_is_moe(m)) {
        if (m->moe.n_experts % l->ep != 0)
            return err_setf(err, ERR_INPUT, NULL, "--ep",
                            "%d routed experts must divide evenly over EP %d (each EP rank "
                            "holds whole experts)",
                            m->moe.n_experts, l->ep);
        if (m->moe.expert_ffn % layout_etp(l) != 0)
            return err_setf(err, ERR_INPUT, NULL, "--etp",
                            "expert width %d must divide by expert TP %d", m->moe.expert_ffn,
                            layout_etp(l));
        if (m->moe.shared_ffn % l->tp != 0)
            return err_setf(err, ERR_INPUT, NULL, "--tp",
                            "shared-expert width %d must divide by TP %d", m->moe.shared_ffn,
                            l->tp);
    }
    if (m->n_heads % l->tp != 0)
        return err_setf(err, ERR_INPUT, NULL, "--tp",
                        "num_attention_heads %d must divide by TP (%d does not divide %d)",
                        m->n_heads, l->tp, m->n_heads);
    if (m->n_kv_heads % l->tp != 0)
        return err_setf(err, ERR_INPUT, NULL, "--tp",
                        "num_key_value_heads %d must divide by TP %d (Megatron "
                        "splits whole query groups across TP ranks)",
                        m->n_kv_heads, l->tp);
    if (!model_heads_split(m, l->tp))
        return err_setf(err, ERR_INPUT, NULL, "--tp",
                        "the full-attention blocks' %d query and %d key/value heads must "
                        "divide by TP %d (whole query groups on each TP rank)",
                        m->full_attn.n_heads, m->full_attn.n_kv_heads, l->tp);
    bool has_dense = !model_is_moe(m) || m->moe.n_moe_layers < m->n_layers;
    if (has_dense && m->ffn % l->tp != 0)
        return err_setf(err, ERR_INPUT, NULL, "--tp",
                        "intermediate size %d must divide by TP %d", m->ffn, l->tp);
    if (l->vpp > 1 && l->schedule != SCHEDULE_INTERLEAVED && l->schedule != SCHEDULE_DUALPIPEV)
        return err_setf(err, ERR_INPUT, NULL, "--vpp",
                        "virtual pipeline stages need --schedule interleaved (got %s)",
                        layout_schedule_name(l->schedule));
    return check_pipeline_split(l, m, err);
}

/* Phase 3: DP from the GPU count, then the sequence and the schedule. */
static int derive_dp_and_sequence(layout_t *l, const model_t *m, int n_gpus, err_t *err)
{
    long long mp = (long long)l->tp * l->pp * l->cp;
    if (mp > n_gpus || n_gpus % mp != 0)
        return err_setf(err, ERR_INPUT, NULL, "--gpus",
                        "%d GPUs cannot be split into TP x PP x CP = %d x %d x %d = "
                        "%lld; the GPU count must be a multiple of it",
                        n_gpus, l->tp, l->pp, l->cp, mp);
    l->dp = (int)(n_gpus / mp);
    l->n_gpus = n_gpus;
    long long dense_ranks = (long long)l->tp * l->cp * l->dp;
    long long expert_ranks = (long long)l->ep * layout_etp(l);
    if (dense_ranks % expert_ranks != 0)
        return err_setf(err, ERR_INPUT, NULL, "--ep",
                        "EP x ETP = %d x %d must divide TP x CP x DP = %d x %d x %d = %lld "
                        "(experts are laid out inside the dense model-parallel and "
                        "data-parallel ranks of a stage)",
                        l->ep, layout_etp(l), l->tp, l->cp, l->dp, dense_ranks);
    if (l->seq_len < 0)
        return err_setf(err, ERR_INPUT, NULL, "--seq-len",
                        "must be positive (got %d)", l->seq_len);
    if (l->seq_len == 0)
        l->seq_len = layout_default_seq_len(m);
    if (m->pos == MODEL_POS_LEARNED && l->seq_len > m->max_seq)
        return err_setf(err, ERR_INPUT, NULL, "--seq-len",
                        "%d is longer than the %d learned positions of %s",
                        l->seq_len, m->max_seq, m->name);
    if (l->tp == 1)
        l->sequence_parallel = false; /* no TP group to split over */
    if (l->sequence_parallel && l->seq_len % l->tp != 0)
        return err_setf(err, ERR_INPUT, NULL, "--seq-len",
                        "%d must divide by TP %d with sequence parallelism",
                        l->seq_len, l->tp);
    if (l->cp > 1 && l->seq_len % (2 * l->cp) != 0)
        return err_setf(err, ERR_INPUT, NULL, "--cp",
                        "sequence length %d must divide by 2 x CP = %d (context "
                        "parallelism splits it into 2 x CP load-balanced chunks)",
                        l->seq_len, 2 * l->cp);
    if (l->schedule == SCHEDULE_DUALPIPEV && l->pp < 2)
        return err_setf(err, ERR_INPUT, NULL, "--schedule",
                        "dualpipev needs --pp of at least 2");
    if (l->schedule == SCHEDULE_INTERLEAVED) {
        if (l->pp < 2)
            return err_setf(err, ERR_INPUT, NULL, "--schedule",
                            "interleaved needs --pp of at least 2");
        if (l->vpp < 2)
            return err_setf(err, ERR_INPUT, NULL, "--schedule",
                            "interleaved needs --vpp of at least 2");
    }
    return ERR_OK;
}

/* What can be offloaded with this sharding. */
static int check_offload_err(const layout_t *l, err_t *err)
{
    if ((l->offload & LAYOUT_OFFLOAD_PARAMS) && l->zero < 3)
        return err_setf(err, ERR_INPUT, NULL, "--offload",
                        "params needs --zero 3 (parameters are offloaded from their ZeRO-3 / "
                        "FSDP shards; got ZeRO-%d)",
                        l->zero);
    if (!(l->offload_fraction >= 0 && l->offload_fraction <= 1))
        return err_setf(err, ERR_INPUT, NULL, "--offload",
                        "the offloaded share of the optimizer must be from 0 to 1 (got %g)",
                        l->offload_fraction);
    if (l->offload_act_layers < 0)
        return err_setf(err, ERR_INPUT, NULL, "--offload",
                        "activation offload needs a positive number of blocks");
    return ERR_OK;
}

/* Phase 4: the batch - global batch, gradient accumulation, and what the
 * schedule and the optimizer sharding need of them. */
static int derive_batch(layout_t *l, err_t *err)
{
    long long per_step = (long long)l->micro_batch * l->dp;
    if (l->grad_accum < 0)
        return err_setf(err, ERR_INPUT, NULL, "--grad-accum",
                        "must be positive (got %d)", l->grad_accum);
    if (l->global_batch == 0) {
        long long gb = per_step * (l->grad_accum > 0 ? l->grad_accum : 1);
        if (gb > (1 << 30))
            return err_setf(err, ERR_INPUT, NULL, "--global-batch",
                            "micro-batch x DP x accumulation = %lld sequences is too large",
                            gb);
        l->global_batch = (int)gb;
    }
    if (l->global_batch % per_step != 0)
        return err_setf(err, ERR_INPUT, NULL, "--global-batch",
                        "%d sequences must divide by micro-batch x DP = %d x %d = %lld",
                        l->global_batch, l->micro_batch, l->dp, per_step);
    int requested = l->grad_accum;
    l->grad_accum = (int)(l->global_batch / per_step);
    if (requested > 0 && requested != l->grad_accum)
        return err_setf(err, ERR_INPUT, NULL, "--grad-accum",
                        "%d micro-batches per step were asked for, but global batch "
                        "%d / (micro-batch %d x DP %d) = %d",
                        requested, l->global_batch, l->micro_batch, l->dp,
                        l->grad_accum);
    if (l->schedule == SCHEDULE_INTERLEAVED && l->grad_accum % l->pp != 0)
        return err_setf(err, ERR_INPUT, NULL, "--global-batch",
                        "the interleaved schedule needs micro-batches per step "
                        "(%d) to be a multiple of PP %d",
                        l->grad_accum, l->pp);
    /* deepseek-ai/DualPipe dualpipev.py asserts num_chunks >= num_ranks * 2 */
    if (l->schedule == SCHEDULE_DUALPIPEV && l->grad_accum < 2 * l->pp)
        return err_setf(err, ERR_INPUT, NULL, "--global-batch",
                        "dualpipev needs at least 2 x PP = %d micro-batches per step (got %d); "
                        "raise --global-batch or lower --micro-batch",
                        2 * l->pp, l->grad_accum);
    if (l->distributed_optimizer && l->zero > 1)
        return err_setf(err, ERR_INPUT, NULL, "--distributed-optimizer",
                        "already shards optimizer states (ZeRO-1); it cannot be "
                        "combined with --zero %d",
                        l->zero);
    return check_offload_err(l, err);
}

int layout_finalize(layout_t *l, const model_t *m, int n_gpus, err_t *err)
{
    int rc;
    if (l->schedule == SCHEDULE_DUALPIPEV) {
        /* the V: every rank holds exactly two stages */
        if (l->vpp > 2)
            return err_setf(err, ERR_INPUT, NULL, "--vpp",
                            "dualpipev holds two stages per rank (a V); --vpp must be 2 "
                            "or left out (got %d)",
                            l->vpp);
        l->vpp = 2;
    }
    if (l->recompute_layers < 0 || l->recompute_layers > 100000)
        return err_setf(err, ERR_INPUT, NULL, "--recompute-num-layers",
                        "must be from 1 to 100000 (got %d)", l->recompute_layers);
    if (l->recompute_layers > 0 && l->recompute != RECOMPUTE_FULL)
        return err_setf(err, ERR_INPUT, NULL, "--recompute-num-layers",
                        "recomputes whole layers: it needs --recompute full (got --recompute %s)",
                        layout_recompute_name(l->recompute));
    if (l->recompute_modules & ~(unsigned)LAYOUT_RC_ALL)
        return err_setf(err, ERR_INPUT, NULL, "--recompute-modules", "unknown module bits");
    if (l->recompute_modules && l->recompute != RECOMPUTE_SELECTIVE)
        return err_setf(err, ERR_INPUT, NULL, "--recompute-modules",
                        "names what selective recompute rebuilds: it needs --recompute selective "
                        "(got --recompute %s)",
                        layout_recompute_name(l->recompute));
    if ((rc = check_ranges(l, n_gpus, err)) || (rc = check_model_split(l, m, err)) ||
        (rc = derive_dp_and_sequence(l, m, n_gpus, err)) || (rc = derive_batch(l, err)))
        return rc;
    if ((l->offload & LAYOUT_OFFLOAD_ACTIVATIONS) && l->offload_act_layers > 0)
        for (int s = 0; s < l->pp; s++)
            if (layout_stage_layers(l, m, s) <= l->offload_act_layers)
                return err_setf(err, ERR_INPUT, NULL, "--offload",
                                "activations=%d must be fewer than the %d blocks of pipeline "
                                "stage %d (one stays on the GPU)",
                                l->offload_act_layers, layout_stage_layers(l, m, s), s);
    return ERR_OK;
}

int layout_split_layers(int stage_layers)
{
    return stage_layers > 0 ? stage_layers : 0;
}

int layout_chunk_layers(const layout_t *l, const model_t *m, int vs)
{
    int V = l->pp * l->vpp, first = l->first_stage_layers, last = l->last_stage_layers;
    if (!first && !last)
        return m->n_layers / V;
    if (vs == 0 && first)
        return layout_split_layers(first);
    if (vs == V - 1 && last)
        return layout_split_layers(last);
    int middle = V - (first != 0) - (last != 0);
    return (m->n_layers - layout_split_layers(first) - layout_split_layers(last)) / middle;
}

int layout_rule_stage_sizes(layout_split_rule_t rule, int n_layers, int n_stages, int in_w,
                            int out_w, int *sizes, const char *what, err_t *err)
{
    if (n_stages < 1 || n_stages > n_layers + in_w + out_w)
        return err_setf(err, ERR_INPUT, NULL, what, "%d (virtual) stages for %d layers",
                        n_stages, n_layers);
    if (rule == LAYOUT_SPLIT_EXTRA_MIDDLE) {
        /* torchtitan 9dec370 parallelisms/pipelining_utils.py
         * generate_split_points */
        int base = n_layers / n_stages, extra = n_layers % n_stages, used = 0;
        for (int i = 0; i < n_stages - 1; i++) {
            int more = i > 0 && extra > 0;
            extra -= more;
            sizes[i] = base + more;
            used += sizes[i];
        }
        sizes[n_stages - 1] = n_layers - used;
        return ERR_OK;
    }
    if (rule == LAYOUT_SPLIT_BALANCED_EMBED) {
        /* DeepSpeed's partition_balanced over the layers matching
         * 'transformer|embedding': the input embedding first and the tied
         * output embedding last weigh one layer each */
        int units = n_layers + 2;
        int mid = (units + n_stages - 1) / n_stages;
        int rest = units - (n_stages - 2) * mid;
        if (n_stages < 3 || rest < 2 || rest - rest / 2 > mid)
            return err_setf(err, ERR_INPUT, NULL, what,
                            "%d stages cannot share %d layers and the two embeddings evenly",
                            n_stages, n_layers);
        for (int i = 1; i < n_stages - 1; i++)
            sizes[i] = mid;
        sizes[0] = rest / 2 - 1;
        sizes[n_stages - 1] = rest - rest / 2 - 1;
        return ERR_OK;
    }
    if (rule == LAYOUT_SPLIT_BALANCED) {
        /* DeepSpeed runtime/pipe/module.py PipelineModule._partition_layers
         * with partition_method 'type:transformer' (Megatron-DeepSpeed's
         * GPT pipeline model): ds_utils.partition_balanced over the
         * transformer layers, whose heaviest stage is ceil(layers /
         * stages); the first and last stages, which also hold the
         * embedding and the output layer, take what the middle ones leave */
        int mid = (n_layers + n_stages - 1) / n_stages;
        int rest = n_layers - (n_stages - 2) * mid;
        if (n_stages >= 3 && rest >= 2 && rest - rest / 2 <= mid) {
            for (int i = 1; i < n_stages - 1; i++)
                sizes[i] = mid;
            sizes[0] = rest / 2;
            sizes[n_stages - 1] = rest - rest / 2;
        } else {
            for (int i = 0; i < n_stages; i++)
                sizes[i] = n_layers / n_stages + (i < n_layers % n_stages);
        }
        return ERR_OK;
    }
    /* torchtitan distributed/pipeline.py generate_split_points (820504e) and
     * pipeline_parallel.py _generate_llm_fqn_per_model_part (late 2025):
     * the stages share layers + in_w + out_w, the remainder to the first */
    long eff = (long)n_layers + in_w + out_w;
    long per = eff / n_stages, extra = eff % n_stages;
    if (rule != LAYOUT_SPLIT_WEIGHTED || per < in_w || per < out_w || per < 1)
        return err_setf(err, ERR_INPUT, NULL, what,
                        "%d (virtual) stages for %d layers + %d + %d for the first and last "
                        "stages leave a stage without what it must hold",
                        n_stages, n_layers, in_w, out_w);
    for (int i = 0; i < n_stages; i++)
        sizes[i] = (int)(per + (i < extra ? 1 : 0));
    sizes[0] -= in_w;
    sizes[n_stages - 1] -= out_w;
    return ERR_OK;
}

void layout_format_stage_sizes(const int *sizes, int n, char *buf, size_t cap)
{
    if (!cap)
        return;
    buf[0] = '\0';
    size_t used = 0;
    for (int i = 0; i < n; i++) {
        int w = snprintf(buf + used, cap - used, "%s%d", i ? "/" : "", sizes[i]);
        if (w < 0 || used + (size_t)w + 5 >= cap) {
            snprintf(buf + used, cap - used, "/...");
            return;
        }
        used += (size_t)w;
    }
}

int layout_set_stage_sizes(layout_t *l, const int *sizes, int n_stages, int n_layers,
                           const char *what, bool *approximated, err_t *err)
{
    *approximated = false;
    long sum = 0;
    bool all_equal = true;
    for (int i = 0; i < n_stages; i++) {
        if (sizes[i] < 0)
            return err_setf(err, ERR_INPUT, NULL, what, "stage %d would hold %d layers", i,
                            sizes[i]);
        sum += sizes[i];
        all_equal = all_equal && sizes[i] == sizes[0];
    }
    if (n_stages < 1 || sum != n_layers)
        return err_setf(err, ERR_INPUT, NULL, what,
                        "the %d stages hold %ld layers, not the model's %d", n_stages, sum,
                        n_layers);
    l->first_stage_layers = l->last_stage_layers = 0;
    if (n_stages == 1 || all_equal)
        return ERR_OK;
    int first = sizes[0] > 0 ? sizes[0] : LAYOUT_STAGE_EMPTY;
    if (n_stages == 2) {
        /* the second stage is the rest */
        l->first_stage_layers = first;
        return ERR_OK;
    }
    int middle = 0;
    for (int i = 1; i < n_stages - 1; i++) {
        if (sizes[i] > middle)
            middle = sizes[i];
        *approximated = *approximated || sizes[i] != sizes[1];
    }
    int last = n_layers - sizes[0] - (n_stages - 2) * middle;
    if (last < 0)
        return err_setf(err, ERR_INPUT, NULL, what,
                        "the split %d/%d.../%d leaves the last stage no layers when the "
                        "middle stages hold %d each; give --first-stage-layers and "
                        "--last-stage-layers",
                        sizes[0], sizes[1], sizes[n_stages - 1], middle);
    *approximated = *approximated || last != sizes[n_stages - 1];
    l->first_stage_layers = first;
    l->last_stage_layers = last > 0 ? last : LAYOUT_STAGE_EMPTY;
    return ERR_OK;
}

int layout_vstage(const layout_t *l, int stage, int chunk)
{
    if (l->schedule == SCHEDULE_DUALPIPEV)
        return chunk == 0 ? stage : 2 * l->pp - 1 - stage;
    return chunk * l->pp + stage;
}

int layout_vstage_rank(const layout_t *l, int vs)
{
    if (l->schedule == SCHEDULE_DUALPIPEV)
        return vs < l->pp ? vs : 2 * l->pp - 1 - vs;
    return vs % l->pp;
}

int layout_vstage_chunk(const layout_t *l, int vs)
{
    if (l->schedule == SCHEDULE_DUALPIPEV)
        return vs < l->pp ? 0 : 1;
    return vs / l->pp;
}

int layout_head_rank(const layout_t *l)
{
    return layout_vstage_rank(l, l->pp * l->vpp - 1);
}

int layout_chunk_recomputed(const layout_t *l, const model_t *m, int vs)
{
    if (l->recompute != RECOMPUTE_FULL)
        return 0;
    int n = layout_chunk_layers(l, m, vs);
    return l->recompute_layers > 0 && l->recompute_layers < n ? l->recompute_layers : n;
}

int layout_stage_recomputed(const layout_t *l, const model_t *m, int stage)
{
    int n = 0;
    for (int c = 0; c < l->vpp; c++)
        n += layout_chunk_recomputed(l, m, layout_vstage(l, stage, c));
    return n;
}

int layout_stage_layers(const layout_t *l, const model_t *m, int stage)
{
    int n = 0;
    for (int c = 0; c < l->vpp; c++)
        n += layout_chunk_layers(l, m, layout_vstage(l, stage, c));
    return n;
}

double layout_inflight_microbatches(const layout_t *l, int stage)
{
    int p = l->pp, m = l->grad_accum, v = l->vpp;
    if (p <= 1)
        return 1;
    switch (l->schedule) {
    case SCHEDULE_GPIPE:
        return m;
    case SCHEDULE_DUALPIPEV: {
        double held = p + 0.5;
        return held < m ? held : m;
    }
    case SCHEDULE_INTERLEAVED: {
        long long chunks = 2LL * (p - stage - 1) + (long long)(v - 1) * p + 1;
        if (chunks > (long long)m * v)
            chunks = (long long)m * v;
        return (double)chunks / v;
    }
    default:
        return (p - stage) < m ? (p - stage) : m;
    }
}

void layout_describe(const layout_t *l, char *buf, int cap)
{
    char vpp[40] = "", zero[16];
    if (l->vpp > 1)
        snprintf(vpp, sizeof vpp, " VPP%d", l->vpp);
    if (l->ep > 1 || l->etp > 0) {
        size_t n = strlen(vpp);
        if (l->etp > 0)
            snprintf(vpp + n, sizeof vpp - n, " EP%d ETP%d", l->ep, l->etp);
        else
            snprintf(vpp + n, sizeof vpp - n, " EP%d", l->ep);
    }
    if (l->distributed_optimizer)
        snprintf(zero, sizeof zero, "dist-opt");
    else
        snprintf(zero, sizeof zero, "ZeRO-%d", l->zero);
    char off[80] = "";
    if (l->offload) {
        char names[64];
        layout_offload_name(l, names, sizeof names);
        snprintf(off, sizeof off, " offload=%s", names);
    }
    if (l->ft.mode != FINETUNE_NONE) {
        size_t n = strlen(off);
        if (finetune_frozen(&l->ft))
            snprintf(off + n, sizeof off - n, " %s r%d base%d", finetune_mode_name(l->ft.mode),
                     l->ft.rank, l->ft.base_bits);
        else
            snprintf(off + n, sizeof off - n, " %s", finetune_mode_name(l->ft.mode));
    }
    char rc_layers[120] = "";
    if (l->recompute == RECOMPUTE_FULL && l->recompute_layers > 0)
        snprintf(rc_layers, sizeof rc_layers, "(first %d)", l->recompute_layers);
    if (l->recompute == RECOMPUTE_SELECTIVE && l->recompute_modules &&
        l->recompute_modules != LAYOUT_RC_CORE_ATTN) {
        char names[100];
        layout_recompute_modules_name(l->recompute_modules, ",", false, names, sizeof names);
        snprintf(rc_layers, sizeof rc_layers, "(%s)", names);
    }
    snprintf(buf, (size_t)cap,
             "TP%d PP%d%s CP%d DP%d mb%d gb%d (x%d) %s %s recompute=%s%s%s %s%s",
             l->tp, l->pp, vpp, l->cp, l->dp, l->micro_batch, l->global_batch,
             l->grad_accum, layout_schedule_name(l->schedule), zero,
             layout_recompute_name(l->recompute), rc_layers, l->sequence_parallel ? " SP" : "",
             layout_precision_name(l->precision), off);
}

const char *layout_bridge_precision(precision_t p)
{
    switch (p) {
    case PRECISION_BF16:
        return "bf16_mixed";
    case PRECISION_FP16:
        return "fp16_mixed";
    case PRECISION_FP8:
        return "bf16_with_fp8_delayed_scaling_mixed";
    case PRECISION_FP8_CS:
        return "bf16_with_fp8_current_scaling_mixed";
    case PRECISION_MXFP8:
        return "bf16_with_mxfp8_mixed";
    case PRECISION_FP8_BLOCK:
        return "bf16_with_fp8_subchannel_scaling_mixed";
    case PRECISION_NVFP4:
        return "bf16_with_nvfp4_mixed";
    default:
        return NULL;
    }
}
