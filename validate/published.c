#include "validate/published.h"

#include <ctype.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common/csv.h"
#include "common/names.h"
#include "common/progress.h"
#include "common/units.h"
#include "frameworks/framework.h"
#include "sim/scenario.h"
#include "sim/step.h"

const char *pub_metric_name(pub_metric_t m)
{
    static const char *names[] = {"tokens/s/GPU", "s/iter", "hw TFLOP/s", "model TFLOP/s"};
    return m <= PUB_MODEL_TFLOPS ? names[m] : "?";
}

/* ------------------------------------------------------------ text */

/* A row's cell, "" for a column the file does not have (only REQUIRED
 * ones must be there). */
static const char *cell(const csv_t *c, int row, const char *column)
{
    const char *v = csv_get(c, row, column);
    return v ? v : "";
}

/* The first place needle stands in hay, case aside; NULL when nowhere. */
static const char *find_ci(const char *hay, const char *needle)
{
    size_t n = strlen(needle);
    for (const char *p = hay; p && *p; p++)
        if (strncasecmp(p, needle, n) == 0)
            return p;
    return NULL;
}

static bool has(const char *hay, const char *needle)
{
    return find_ci(hay, needle) != NULL;
}

/* The number a cell starts with ("8192 (default config)", "14,080",
 * "~1.2k", "4M tokens"), NAN if none: thousands separated by commas, and a
 * k, M or B right after the digits scales it by powers of 1000, or by
 * powers of 1024 where binary is set (sequence lengths and batches of
 * tokens: "8K" is 8,192, "4M tokens" 4,194,304). */
static double lead_num_base(const char *s, bool binary)
{
    if (!s)
        return NAN;
    while (*s == ' ' || *s == '~')
        s++;
    char digits[64];
    size_t n = 0;
    const char *p = s;
    if (*p == '+' || *p == '-')
        digits[n++] = *p++;
    for (; *p && n + 1 < sizeof digits; p++) {
        if (isdigit((unsigned char)*p) || *p == '.' || *p == 'e' || *p == 'E' ||
            ((*p == '+' || *p == '-') && n && (digits[n - 1] == 'e' || digits[n - 1] == 'E')))
            digits[n++] = *p;
        else if (*p == ',' && n && isdigit((unsigned char)digits[n - 1]) &&
                 isdigit((unsigned char)p[1]) && isdigit((unsigned char)p[2]) &&
                 isdigit((unsigned char)p[3]) && !isdigit((unsigned char)p[4]))
            continue; /* a thousands separator */
        else
            break;
    }
    digits[n] = '\0';
    char *end;
    double v = strtod(digits, &end);
    if (end == digits)
        return NAN;
    /* what strtod left of the copy ("1e" of "1 each") stays unread */
    const char *after = p - (size_t)(digits + n - end);
    static const struct {
        char c;
        int power;
    } suffix[] = {{'k', 1}, {'K', 1}, {'M', 2}, {'B', 3}};
    for (size_t i = 0; i < sizeof suffix / sizeof suffix[0]; i++)
        if (*after == suffix[i].c && !isalpha((unsigned char)after[1]))
            return v * pow(binary ? 1024 : 1000, suffix[i].power);
    return v;
}

static double lead_num(const char *s)
{
    return lead_num_base(s, false);
}

/* A token count: lead_num with binary suffixes, rounded. */
static int lead_tokens(const char *s)
{
    double v = lead_num_base(s, true);
    return isfinite(v) && v >= 0 && v < 1e9 ? (int)llround(v) : 0;
}

static int lead_int(const char *s)
{
    double v = lead_num(s);
    return isfinite(v) && v >= 0 && v < 1e9 ? (int)v : 0;
}

/* The integer after key in text ("CP=2; EP=8" with key "EP="), 0 if absent. */
static int int_after(const char *text, const char *key)
{
    size_t n = strlen(key);
    for (const char *p = text; p && *p; p++)
        if (strncasecmp(p, key, n) == 0)
            return lead_int(p + n);
    return 0;
}

/* A parallel degree named by word in text: "CP=2", "CP 2", "cp2", "CP: 2",
 * "context parallel 2" for the word "CP" or "context parallel"; the word
 * stands alone ("CPU" is not "CP"). 0 if absent. */
static int degree_in(const char *text, const char *word)
{
    size_t n = strlen(word);
    for (const char *p = text; p && *p; p++) {
        if (strncasecmp(p, word, n) != 0 || (p > text && isalpha((unsigned char)p[-1])) ||
            isalpha((unsigned char)p[n]))
            continue;
        const char *q = p + n;
        q += strspn(q, " =:");
        if (isdigit((unsigned char)*q))
            return lead_int(q);
    }
    return 0;
}

/* Whether word stands alone in text (no letters either side). */
static bool has_word(const char *text, const char *word)
{
    size_t n = strlen(word);
    for (const char *p = text; p && *p; p++)
        if (strncasecmp(p, word, n) == 0 && (p == text || !isalpha((unsigned char)p[-1])) &&
            !isalpha((unsigned char)p[n]))
            return true;
    return false;
}

/* Where the number written just before at starts (spaces between them
 * allowed): digits and thousands separators, with decimal a point too;
 * NULL when there is none or it ends a longer token ("-8", "1e9", "x8"). */
static const char *number_before(const char *text, const char *at, bool decimal)
{
    const char *q = at;
    while (q > text && q[-1] == ' ')
        q--;
    const char *end = q;
    while (q > text &&
           (isdigit((unsigned char)q[-1]) || q[-1] == ',' || (decimal && q[-1] == '.')))
        q--;
    if (q == end || (q > text && (isalpha((unsigned char)q[-1]) || q[-1] == '-' ||
                                  q[-1] == '+' || q[-1] == '.')))
        return NULL;
    return q;
}

/* The whole number just before word in text ("8 nodes (64 GPUs)" with
 * "GPU": 64; thousands separators allowed), 0 if none. */
static int int_before(const char *text, const char *word)
{
    for (const char *p = find_ci(text, word); p; p = find_ci(p + 1, word)) {
        const char *q = number_before(text, p, false);
        if (q && isdigit((unsigned char)*q))
            return lead_int(q);
    }
    return 0;
}

/* The first whole number in text ("mbs=1", "1 (inferred)"), 0 if none. */
static int first_int(const char *text)
{
    for (const char *p = text; p && *p; p++)
        if (isdigit((unsigned char)*p))
            return lead_int(p);
    return 0;
}

/* A global batch the notes give ("GBS 2048", "global batch size: 1,536",
 * "global_batch_size=256", "global batch 4M tokens"): sequences, or tokens
 * when "token" follows the number (*tokens set). 0 when none is named. */
static double notes_batch(const char *notes, bool *tokens)
{
    static const char *const keys[] = {"global_batch_size", "global batch size",
                                       "global batch", "GBS"};
    *tokens = false;
    for (size_t k = 0; k < sizeof keys / sizeof keys[0]; k++) {
        size_t n = strlen(keys[k]);
        for (const char *p = find_ci(notes, keys[k]); p; p = find_ci(p + 1, keys[k])) {
            if ((p > notes && isalpha((unsigned char)p[-1])) || isalpha((unsigned char)p[n]))
                continue;
            const char *q = p + n;
            q += strspn(q, " =:");
            if (strncasecmp(q, "of ", 3) == 0)
                q += 3;
            if (!isdigit((unsigned char)*q))
                continue;
            double v = lead_num_base(q, true);
            const char *after = q + strspn(q, "0123456789,.kKMB ");
            *tokens = strncasecmp(after, "token", 5) == 0;
            return isfinite(v) && v >= 1 ? v : 0;
        }
    }
    return 0;
}

/* ------------------------------------------------------------ rule 1: model */

/* The architecture the columns give, or 0 when they leave it out. */
static int model_from_columns(const csv_t *c, int i, int tp, model_t *m, err_t *err)
{
    int layers = lead_int(cell(c, i, "layers")), hidden = lead_int(cell(c, i, "hidden"));
    int heads = lead_int(cell(c, i, "heads"));
    if (!layers || !hidden || !heads)
        return 0;
    const char *name = cell(c, i, "model");
    memset(m, 0, sizeof *m);
    snprintf(m->name, sizeof m->name, "%s", name);
    snprintf(m->display, sizeof m->display, "%s", name);
    snprintf(m->source, sizeof m->source, "throughput.csv %s", cell(c, i, "row_id"));
    /* Llama-style blocks (RMSNorm, gated MLP, rotary positions, no biases):
     * Llama and the families built on its design */
    static const char *const llama_like[] = {"llama",   "mistral",  "mixtral", "qwen",
                                             "internlm", "baichuan", "deepseek", "olmo",
                                             "gemma",   "granite",  "phi-3",   "phi3"};
    bool llama = false;
    for (size_t k = 0; k < sizeof llama_like / sizeof llama_like[0]; k++)
        llama = llama || has(name, llama_like[k]);
    m->family = llama ? MODEL_FAMILY_LLAMA : MODEL_FAMILY_GPT;
    m->norm = llama ? MODEL_NORM_RMSNORM : MODEL_NORM_LAYERNORM;
    m->mlp = llama ? MODEL_MLP_SWIGLU : MODEL_MLP_GELU;
    m->pos = llama ? MODEL_POS_ROPE : MODEL_POS_LEARNED;
    m->n_layers = layers;
    m->hidden = hidden;
    m->n_heads = heads;
    m->n_kv_heads = lead_int(cell(c, i, "kv_heads"));
    if (!m->n_kv_heads)
        m->n_kv_heads = heads;
    m->head_dim = hidden / heads;
    m->ffn = lead_int(cell(c, i, "ffn"));
    if (!m->ffn)
        m->ffn = 4 * hidden;
    m->vocab = lead_int(cell(c, i, "vocab"));
    if (!m->vocab) {
        /* GPT-2's BPE vocabulary padded as Megatron pads it: to a multiple of
         * 128 x TP (--make-vocab-size-divisible-by 128). */
        int mult = 128 * (tp > 0 ? tp : 1);
        m->vocab = (50257 + mult - 1) / mult * mult;
    }
    m->max_seq = lead_tokens(cell(c, i, "seq_len"));
    m->tied_embeddings = !llama;
    m->qkv_bias = m->out_bias = m->mlp_bias = !llama;
    m->norm_eps = 1e-5;
    m->rope_theta = llama ? 500000 : 0;
    int rc = model_validate(m, cell(c, i, "row_id"), err);
    return rc ? -rc : 1;
}

/* What the replay of row v assumed, one more clause of its list. */
static void add_assumed(pub_row_t *v, const char *what)
{
    size_t n = strlen(v->assumed);
    snprintf(v->assumed + n, sizeof v->assumed - n, "%s%s", n ? "; " : "", what);
}

/* A published run trained at its sequence length, so a learned position
 * table as long as it existed (llm-foundry's benchmark MPTs size theirs to
 * the run; a named model's table may be shorter): extended, and said. Rotary
 * and ALiBi models have no table to outgrow. */
static void row_positions(const csv_t *c, int i, model_t *m, pub_row_t *v)
{
    int seq = lead_tokens(cell(c, i, "seq_len"));
    if (m->pos != MODEL_POS_LEARNED || seq <= m->max_seq)
        return;
    char what[200];
    snprintf(what, sizeof what, "learned positions of %s extended from %d to the run's %d",
             m->name, m->max_seq, seq);
    m->max_seq = seq;
    add_assumed(v, what);
}

/* A dense row whose model names a catalog model of the same depth and
 * width: the catalog's block (norms, MLP, positions, biases, tied
 * embeddings: what the columns cannot say), with the sizes the columns
 * give (heads, KV heads, FFN, vocabulary, positions). */
static model_t catalog_block(const model_t *catalog, const model_t *cols, const csv_t *c, int i)
{
    model_t m = *catalog;
    m.n_heads = cols->n_heads;
    if (lead_int(cell(c, i, "kv_heads")))
        m.n_kv_heads = cols->n_kv_heads;
    else if (m.n_heads != catalog->n_heads)
        m.n_kv_heads = m.n_heads;
    if (m.n_heads != catalog->n_heads)
        m.head_dim = m.hidden / m.n_heads;
    if (lead_int(cell(c, i, "ffn")))
        m.ffn = cols->ffn;
    if (lead_int(cell(c, i, "vocab")))
        m.vocab = cols->vocab;
    if (m.pos == MODEL_POS_LEARNED && cols->max_seq > m.max_seq)
        m.max_seq = cols->max_seq;
    return m;
}

/* The catalog model named by the model column ("LLAMA2-70B", "MPT-70b"). */
static int model_from_catalog(const char *name, model_t *m, err_t *err)
{
    char buf[96];
    snprintf(buf, sizeof buf, "%s", name);
    /* "Nemotron-340B" and "GPT3-5B" are catalog names once normalised;
     * drop a parenthesised remark */
    char *paren = strchr(buf, '(');
    if (paren)
        *paren = '\0';
    size_t len = strlen(buf);
    while (len && buf[len - 1] == ' ')
        buf[--len] = '\0';
    /* a Hugging Face repository name: the organisation before the slash
     * ("meta-llama/Llama-3.1-70B") and Meta's "Meta-" prefix of the Llama 3
     * releases ("Meta-Llama-3.1-70B") name no different network */
    char *name_start = buf;
    if (strchr(name_start, '/'))
        name_start = strrchr(name_start, '/') + 1;
    if (strncasecmp(name_start, "Meta-", 5) == 0 && strncasecmp(name_start + 5, "Llama", 5) == 0)
        name_start += 5;
    memmove(buf, name_start, strlen(name_start) + 1);
    int rc = model_load(buf, m, err);
    /* a released variant trains the same network: "Llama-3.1-8B-Instruct",
     * "Qwen3-30B-A3B-Base" are their base models */
    static const char *const variants[] = {"instruct", "base", "chat", "hf", "it", "sft"};
    for (int tries = 0; rc && tries < 2; tries++) {
        char *cut = strrchr(buf, '-');
        char *sp = strrchr(buf, ' ');
        if (sp > cut)
            cut = sp;
        bool variant = false;
        for (size_t k = 0; cut && k < sizeof variants / sizeof variants[0]; k++)
            variant = variant || strcasecmp(cut + 1, variants[k]) == 0;
        if (!variant)
            break;
        *cut = '\0';
        err_t again;
        if (model_load(buf, m, &again) == 0)
            rc = ERR_OK;
    }
    return rc;
}

/* ------------------------------------------------------------ rule 2: GPU */

/* The GPU named by the start of text: the words before "(" or ",", then
 * shorter and shorter word prefixes ("H100 96GB HBM2e 2.4TB/s" ... "H100
 * 96GB HBM2e"). */
static int row_gpu(catalog_t *cat, const char *text, gpu_t *g)
{
    char buf[160];
    snprintf(buf, sizeof buf, "%s", text);
    buf[strcspn(buf, "(,")] = '\0';
    for (;;) {
        size_t len = strlen(buf);
        while (len && buf[len - 1] == ' ')
            buf[--len] = '\0';
        if (!len)
            return -1;
        err_t ignore;
        if (gpu_load_in(cat, buf, g, &ignore) == 0)
            return 0;
        char *sp = strrchr(buf, ' ');
        if (!sp)
            return -1;
        *sp = '\0';
    }
}

/* A catalog cluster named in the text's parentheses or after its commas
 * ("(DGX A100, Selene, HDR IB)", "(NVL72)", "(Grand Teton)") that holds
 * this GPU (or a variant of its family), tried as the word itself and as
 * "<gpu>-<word>". Empty when none. */
static void row_cluster(catalog_t *cat, const char *text, const gpu_t *g, char *out, size_t cap)
{
    out[0] = '\0';
    const char *p = text + strcspn(text, "(,");
    char family[32];
    snprintf(family, sizeof family, "%s", g->name);
    family[strcspn(family, "-")] = '\0';
    while (*p) {
        p += strspn(p, "(),; ");
        size_t n = strcspn(p, "(),;");
        if (!n)
            break;
        char word[96], tries[4][160];
        snprintf(word, sizeof word, "%.*s", (int)n, p);
        snprintf(tries[0], sizeof tries[0], "%s", word);
        snprintf(tries[1], sizeof tries[1], "%s-%s", g->name, word);
        /* an AWS instance type ("AWS p5.48xlarge", "p4d") names aws-p5 */
        const char *inst = word;
        if (strncasecmp(inst, "AWS ", 4) == 0)
            inst += 4;
        snprintf(tries[2], sizeof tries[2], "aws-%.*s", (int)strcspn(inst, ". "), inst);
        snprintf(tries[3], sizeof tries[3], "%.*s", (int)strcspn(word, " "), word);
        for (int k = 0; k < 4; k++) {
            cluster_t cl;
            err_t ignore;
            if (cluster_load_in(cat, tries[k], &cl, &ignore) == 0 &&
                strncmp(cl.gpu.name, family, strlen(family)) == 0) {
                snprintf(out, cap, "%s", tries[k]);
                return;
            }
        }
        p += n;
    }
}

/* The link speed the text states in Gb/s (800, 400, 200 or 100), 0 when
 * none: a number standing alone ("400 Gb/s", "400G", "400Gbps"), not part
 * of a longer token (the 100 of "H100", the 80 of "80GB"). */
static int row_link_gbps(const char *text)
{
    static const int speeds[] = {800, 400, 200, 100};
    for (const char *p = text; *p; p++) {
        if (!isdigit((unsigned char)*p) || (p > text && isalnum((unsigned char)p[-1])))
            continue;
        char *end;
        long v = strtol(p, &end, 10);
        const char *q = end;
        while (*q == ' ')
            q++;
        bool gbit = (q[0] == 'G' || q[0] == 'g') && (q[1] == 'b' || !isalpha((unsigned char)q[1]));
        for (size_t k = 0; gbit && k < sizeof speeds / sizeof speeds[0]; k++)
            if (v == speeds[k])
                return speeds[k];
        p = end - 1;
    }
    return 0;
}

/* The scale-out fabric the GPU text names ("RoCE 400G", "EFA", "NDR
 * InfiniBand"), NULL when none: RoCE at the speed it gives (400 Gb/s when
 * none), EFA as the p5's v2, InfiniBand by its generation, or by its speed
 * ("200 Gb/s InfiniBand": the generation that runs it per port). */
static const char *row_fabric(const char *text)
{
    if (has(text, "Omni-Path") || has(text, "OmniPath") || has_word(text, "OPA"))
        return "opa-100";
    int gbps = row_link_gbps(text);
    if (has(text, "RoCE"))
        return gbps == 100 ? "roce-100" : gbps == 200 ? "roce-200" : "roce-400";
    if (has_word(text, "EFA"))
        return "efa-v2";
    static const char *const ib[][2] = {
        {"XDR", "ib-xdr"}, {"NDR", "ib-ndr"}, {"HDR", "ib-hdr"}, {"EDR", "ib-edr"}};
    for (size_t k = 0; k < sizeof ib / sizeof ib[0]; k++)
        if (has_word(text, ib[k][0]))
            return ib[k][1];
    if ((has(text, "InfiniBand") || has_word(text, "IB")) && gbps) {
        return gbps == 800 ? "ib-xdr" : gbps == 400 ? "ib-ndr" : gbps == 200 ? "ib-hdr" : "ib-edr";
    }
    return NULL;
}

/* The scale-out links per node the GPU text counts: a number just before
 * the fabric's word ("4 OmniPath links", "8x HDR", "4 x Omni-Path") or
 * before "NICs", "HCAs" or "rails" ("8 NICs per node"); 0 when none. */
static int row_nics(const char *text)
{
    static const char *const words[] = {"Omni-Path", "OmniPath", "OPA", "RoCE", "EFA", "XDR", "NDR",
                                        "HDR", "EDR", "ConnectX", "NICs", "HCAs", "rails"};
    for (size_t w = 0; w < sizeof words / sizeof words[0]; w++) {
        for (const char *p = strstr(text, words[w]); p; p = strstr(p + 1, words[w])) {
            const char *q = p;
            while (q > text && q[-1] == ' ')
                q--;
            if (q > text && (q[-1] == 'x' || q[-1] == 'X')) {
                q--;
                while (q > text && q[-1] == ' ')
                    q--;
            }
            const char *end = q;
            while (q > text && isdigit((unsigned char)q[-1]))
                q--;
            if (q == end || (q > text && (isalnum((unsigned char)q[-1]) || q[-1] == '.')))
                continue;
            int n = atoi(q);
            if (n >= 1 && n <= 64)
                return n;
        }
    }
    return 0;
}

/* The GPUs per node the GPU text states ("4 per node", "8 GPUs per node"),
 * 0 when none. */
static int row_gpus_per_node(const char *text)
{
    int n = int_before(text, "per node");
    if (n <= 0)
        n = int_before(text, "GPUs per node");
    return n >= 1 && n <= 72 ? n : 0;
}

/* ------------------------------------------------------------ rule 4: layout */

static int row_vpp(const char *text, int pp, int stages_per_rank_interleaved)
{
    int v = degree_in(text, "VP");
    if (!v)
        v = degree_in(text, "VPP");
    if (v)
        return v;
    if (has(text, "(="))
        return lead_int(strstr(text, "(=") + 2);
    if (isdigit((unsigned char)text[0]))
        return lead_int(text);
    if (has(text, "interleaved") && strchr(text, '(') && pp > 1 &&
        isdigit((unsigned char)strchr(text, '(')[1]))
        return lead_int(strchr(text, '(') + 1);
    if (has(text, "interleaved") && pp > 1)
        return stages_per_rank_interleaved;
    return 1;
}

/* Host offload the ZeRO/FSDP column (or the notes) names: DeepSpeed's
 * offload_optimizer / --cpu-optimizer ("optimizer offloaded to CPU"), its
 * offload_param, NVMe for either. */
static void row_offload(const char *text, layout_t *l)
{
    if (!has(text, "offload") && !has(text, "cpu-optimizer") && !has(text, "CPU optimizer"))
        return;
    if (has(text, "param"))
        l->offload |= LAYOUT_OFFLOAD_PARAMS | LAYOUT_OFFLOAD_OPTIMIZER;
    else
        l->offload |= LAYOUT_OFFLOAD_OPTIMIZER;
    if (has(text, "NVMe"))
        l->offload_nvme = true;
}

static void row_zero(const char *text, layout_t *l)
{
    if (has(text, "ZeRO-"))
        l->zero = int_after(text, "ZeRO-");
    else if (has(text, "ZeRO stage"))
        l->zero = int_after(text, "ZeRO stage");
    else if (degree_in(text, "ZeRO"))
        l->zero = degree_in(text, "ZeRO");
    else if (has(text, "SHARD_GRAD_OP"))
        l->zero = 2;
    else if (has(text, "FSDP"))
        l->zero = 3;
    if (l->zero >= 2)
        l->distributed_optimizer = false; /* parameters and gradients sharded too */
    if (has(text, "distributed opt"))
        l->distributed_optimizer = true;
}

/* Returns false (with the reason) for a recompute mode it cannot model. */
/* The selective-recompute modules an act_recompute cell names, word by
 * word: Megatron's --recompute-modules names and the brief ones tables
 * print (layout_rc_module_word: "moe" the whole MoE block, "act" its
 * experts' activation, Megatron's moe_act), and prose ("RMSNorm",
 * "up-projections", "SwiGLU", "activation function", "attention core",
 * "shared experts"). */
static unsigned row_rc_modules(const char *text)
{
    unsigned rc = 0;
    for (const char *p = text; *p;) {
        size_t n = 0;
        while (p[n] && (isalnum((unsigned char)p[n]) || p[n] == '_' || p[n] == '-'))
            n++;
        if (!n) {
            p++;
            continue;
        }
        char w[48];
        snprintf(w, sizeof w, "%.*s", (int)n, p);
        rc |= layout_rc_module_word(w, strlen(w));
        if (find_ci(w, "norm"))
            rc |= LAYOUT_RC_LAYERNORM;
        if (find_ci(w, "up-proj") || find_ci(w, "up_proj"))
            rc |= LAYOUT_RC_MLA_UP_PROJ;
        if (strcasecmp(w, "SwiGLU") == 0 || strcasecmp(w, "GeLU") == 0)
            rc |= LAYOUT_RC_MOE_ACT;
        p += n;
    }
    if (has(text, "activation function"))
        rc |= LAYOUT_RC_MOE_ACT;
    if (has(text, "attention core"))
        rc |= LAYOUT_RC_CORE_ATTN;
    if (has(text, "shared expert"))
        rc |= LAYOUT_RC_SHARED_EXPERTS;
    return rc;
}

static void row_recompute(const char *text, const fw_preset_t *fw, layout_t *l)
{
    if (!text[0]) {
        l->recompute = fw->recompute;
        return;
    }
    /* named modules recomputed ("RMSNorm and MLA up-projections
     * recomputed", Megatron's --recompute-modules layernorm mla_up_proj
     * moe_act) are Megatron's selective granularity, not the whole block */
    unsigned named = row_rc_modules(text);
    bool modules = !has(text, "full") &&
                   (named || has(text, "MLA") || has(text, "recompute-modules") ||
                    has(text, "recompute_modules"));
    if (has(text, "op-level") || has(text, "per-op") || has(text, "default config (selective"))
        l->recompute = RECOMPUTE_OPS;
    else if (has(text, "selective") || modules)
        l->recompute = RECOMPUTE_SELECTIVE;
    else if (has_word(text, "no") || has_word(text, "none") || has_word(text, "off") ||
             has_word(text, "false") || has(text, "without") || has(text, "disabled"))
        l->recompute = RECOMPUTE_NONE;
    else if (has(text, "full") || has_word(text, "yes") || has_word(text, "true") ||
             has_word(text, "on") || has_word(text, "AC") || has(text, "checkpoint") ||
             has(text, "recompute") || has(text, "block") || has(text, "partial"))
        l->recompute = RECOMPUTE_FULL;
    else
        l->recompute = RECOMPUTE_NONE;
    /* "block, 4 layers", "partial (2 layers)": Megatron's block recompute of
     * the first N layers of each (virtual) stage */
    if (l->recompute == RECOMPUTE_FULL && has(text, "layer") && first_int(text) > 0)
        l->recompute_layers = first_int(text);
    /* the modules named, as Megatron-Core's --recompute-modules (a preset
     * without them rebuilds the attention core) */
    if (l->recompute == RECOMPUTE_SELECTIVE && modules && fw->caps.recompute_modules)
        l->recompute_modules = named;
}

/* The precision column: the recipe it names; a bare "fp8" is the preset's
 * default fp8 recipe. */
static bool row_precision(const char *text, const fw_preset_t *fw, layout_t *l)
{
    bool fp8 = has(text, "fp8") || has(text, "float8");
    if (has(text, "nvfp4"))
        l->precision = PRECISION_NVFP4;
    else if (has(text, "mxfp4"))
        l->precision = PRECISION_MXFP4;
    else if (has(text, "fp4"))
        l->precision = PRECISION_NVFP4; /* Blackwell's fp4 training recipe */
    else if (has(text, "mxfp8") || has(text, "FP8-MX") || has(text, "fp8_mx"))
        l->precision = PRECISION_MXFP8;
    /* the scaling words describe fp8 only ("fp16 with dynamic loss
     * scaling" is fp16) */
    else if (fp8 && (has(text, "blockwise") || has(text, "subchannel") ||
                     has(text, "block-wise") || has(text, "128x128") || has(text, "1x128") ||
                     has(text, "fine-grained")))
        l->precision = PRECISION_FP8_BLOCK; /* DeepSeek-V3's tiles and blocks */
    else if (fp8 && has(text, "rowwise"))
        l->precision = PRECISION_FP8_ROWWISE;
    else if (fp8 && (has(text, "current scaling") || has(text, "FP8-CS") ||
                     has(text, "tensorwise") || has(text, "dynamic")))
        l->precision = PRECISION_FP8_CS;
    else if (fp8 && (has(text, "delayed") || has(text, "amax_history"))) {
        l->precision = PRECISION_FP8; /* Transformer Engine's delayed scaling */
        return true;
    } else if (fp8)
        l->precision = fw->fp8_recipe;
    else if (has(text, "fp16"))
        l->precision = PRECISION_FP16;
    else if (!has(text, "bf16") && (has(text, "fp32") || has(text, "tf32") || has(text, "float32")))
        l->precision = PRECISION_FP32;
    else
        l->precision = PRECISION_BF16;
    return false;
}

/* Megatron's uneven split when the stages do not divide the layers: the
 * embedding and the loss count as one layer each, so the first and last
 * (virtual) stage hold one layer fewer. */
static void uneven_split(layout_t *l, const model_t *m)
{
    int V = l->pp * l->vpp;
    if (V < 2 || m->n_layers % V == 0)
        return;
    if ((m->n_layers + 2) % V == 0) {
        /* one layer a chunk leaves the first with the embedding alone and
         * the last with the loss alone (Megatron-Core builds such chunks) */
        int per = (m->n_layers + 2) / V;
        l->first_stage_layers = l->last_stage_layers = per > 1 ? per - 1 : LAYOUT_STAGE_EMPTY;
        return;
    }
    /* the embedding, each multi-token-prediction module and the loss
     * counted as a layer each (Megatron-Bridge's DeepSeek-V3 layout
     * "Et|(tt|)*30mL": 1 layer first, 0 last) */
    int slots = m->n_layers + 2 + m->n_mtp;
    if (m->n_mtp > 0 && slots % V == 0 && slots / V >= 1 + m->n_mtp) {
        int per = slots / V;
        l->first_stage_layers = per > 1 ? per - 1 : LAYOUT_STAGE_EMPTY;
        int last = per - 1 - m->n_mtp;
        l->last_stage_layers = last > 0 ? last : LAYOUT_STAGE_EMPTY;
    }
}

/* The framework's own split of the layers over its stages (torchtitan:
 * layout_split_rule_t), the embedding and output head counted as one layer
 * each where the rule weighs them; equal middle stages approximate an
 * uneven middle (layout_set_stage_sizes). */
static int framework_split(layout_t *l, const model_t *m, layout_split_rule_t rule, err_t *err)
{
    int V = l->pp * l->vpp;
    if (V < 2 || V > m->n_layers + 2)
        return ERR_OK; /* the layout's own check says what is wrong */
    int *sizes = calloc((size_t)V, sizeof *sizes);
    if (!sizes)
        return err_set(err, ERR_RUNTIME, "out of memory splitting the pipeline stages");
    bool approx;
    int rc = layout_rule_stage_sizes(rule, m->n_layers, V, 1, 1, sizes, "pp", err);
    if (!rc)
        rc = layout_set_stage_sizes(l, sizes, V, m->n_layers, "pp", &approx, err);
    free(sizes);
    return rc;
}

/* Megatron-LM flags a row's notes name ("overlap flags: --overlap-grad-reduce
 * --overlap-param-gather --tp-comm-overlap"). */
/* The MoE settings a row's notes name, as the project's MoE sets write them
 * ("DeepEP", "HybridEP" (priced as DeepEP); "1F1B (EP) overlap on|off";
 * "CUDA graphs attn, moe_router, moe_preprocess"): the run's own, over the
 * preset's recipe. A graph list that does not parse is left out. */
static void notes_moe_flags(const char *notes, sim_options_t *o)
{
    if (has(notes, "DeepEP") || has(notes, "HybridEP")) {
        o->moe.dispatcher = MOE_DISPATCH_DEEPEP;
        o->moe.dispatcher_given = true;
    }
    if (has(notes, "(EP) overlap on"))
        o->moe.a2a_overlap = true;
    else if (has(notes, "(EP) overlap off"))
        o->moe.a2a_overlap = false;
    const char *g = find_ci(notes, "CUDA graphs ");
    if (!g)
        return;
    g += strlen("CUDA graphs ");
    size_t len = strcspn(g, ";");
    char *list = strndup(g, len);
    unsigned scopes;
    err_t e;
    if (list && host_graph_scopes_parse(list, NULL, &scopes, &e) == ERR_OK)
        o->host.graph_scopes = scopes;
    free(list);
}

static void notes_flags(const char *notes, sim_options_t *o, layout_t *l)
{
    if (has(notes, "--overlap-grad-reduce"))
        o->overlap_grad_reduce = true;
    if (has(notes, "--overlap-param-gather")) {
        /* only the distributed optimizer gathers parameters */
        o->overlap_param_gather = true;
        l->distributed_optimizer = true;
    }
    if (has(notes, "--use-distributed-optimizer"))
        l->distributed_optimizer = true;
    if (has(notes, "--tp-comm-overlap") && l->tp > 1) {
        /* Transformer Engine's TP overlap runs with sequence parallelism */
        o->tp_comm_overlap = true;
        l->sequence_parallel = true;
    }
    if (has(notes, "--sequence-parallel"))
        l->sequence_parallel = true;
    /* NeMo's switch (ub_tp_comm_overlap in NeMo 1.0, the comm-overlap
     * callback's tp_comm_overlap in NeMo 2.0): on, Transformer Engine's
     * default roles where the preset has no userbuffers setting for the
     * model (TE initializes userbuffers with its defaults when the recipe
     * gives no config); off, none */
    if (has(notes, "tp_comm_overlap=true") && l->tp > 1) {
        o->tp_comm_overlap = true;
        o->tp_overlap.off_unmatched = false;
        l->sequence_parallel = true;
    } else if (has(notes, "tp_comm_overlap=false")) {
        o->tp_comm_overlap = false;
    }
    /* Megatron's --moe-router-force-load-balancing: every expert gets its
     * share of the tokens */
    if (has(notes, "forced balance")) {
        o->moe.imbalance = 1;
        o->moe.imbalance_given = true;
    }
    notes_moe_flags(notes, o);
}

/* Features the framework column names ("torchtitan 3D + compile + Float8
 * + AsyncTP"): compiled elementwise kernels, asynchronous (overlapped) TP. */
static void framework_flags(const char *text, sim_options_t *o, layout_t *l)
{
    if (has(text, "compile"))
        sim_options_compiled(o);
    if ((has(text, "async TP") || has(text, "AsyncTP")) && l->tp > 1) {
        o->tp_comm_overlap = true;
        l->sequence_parallel = true;
    }
}

/* ------------------------------------------------------------ one row */

typedef struct {
    scenario_t s;
    fw_preset_t fw;
    bool stand_in;     /* the framework has no preset: fw runs its engine */
    bool open_choices; /* micro-batch (and recompute) left to the fastest */
    bool recompute_given, vpp_given; /* the row's own choices, kept open or not */
    bool mb_open;        /* no micro-batch given */
    bool sp_open;        /* TP without a word on sequence parallelism, under a
                            preset that runs it but not by default */
    bool vpp_count_open; /* "interleaved" without a count under a Megatron-LM
                            preset, which has no default count */
} row_setup_t;

static void skip(pub_row_t *v, const char *why)
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
    add_assumed(v, what);
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
    bool fsdp = has(zero_text, "FSDP") || has(zero_text, "SHARD_GRAD_OP");
    if (!has(zero_text, "DeepSpeed") && has(zero_text, "ZeRO") && !fsdp && fp8)
        engine = "Megatron-LM",
        why = "ZeRO in fp8 or fp4, which DeepSpeed does not train: Megatron-Core's sharding";
    else if (has(zero_text, "DeepSpeed") || (has(zero_text, "ZeRO") && !fsdp))
        engine = "DeepSpeed", why = "the engine its ZeRO/FSDP column names";
    else if (fsdp && split && fp16)
        engine = "Megatron-LM",
        why = "FSDP with the model split in fp16, which torchtitan does not train: Megatron-Core's "
              "FSDP";
    else if (fsdp)
        engine = split ? "torchtitan" : "FSDP",
        why = split ? "FSDP with the model split, as torchtitan runs it"
                    : "the engine its ZeRO/FSDP column names";
    else if (has(zero_text, "DDP") && !split)
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
            add_assumed(v, r->s.notes.items[k].text);
}

/* The global batch in sequences the notes give when its columns are empty
 * (a count of tokens over the sequence), said; 0 when they give none. */
static int batch_from_notes(const char *notes, int seq_len, pub_row_t *v)
{
    bool tokens;
    double b = notes_batch(notes, &tokens);
    if (tokens)
        b = seq_len > 0 && b >= seq_len ? b / seq_len : 0;
    if (!(b >= 1 && b < 1e8))
        return 0;
    char what[120];
    snprintf(what, sizeof what, "global batch of %.0f sequences read from the notes%s", round(b),
             tokens ? " (its tokens over the sequence length)" : "");
    add_assumed(v, what);
    return (int)llround(b);
}

/* Rules 1-4 into r->s, names looked up in cat; v->skipped when the row
 * cannot be replayed. */
static int setup_row(catalog_t *cat, const csv_t *c, int i, pub_row_t *v, row_setup_t *r,
                     err_t *err)
{
    const char *fw_text = cell(c, i, "framework");
    err_t e;
    int tp = lead_int(cell(c, i, "tp")), pp = lead_int(cell(c, i, "pp"));
    const char *cpsp = cell(c, i, "cp_or_sp");
    int cp = degree_in(cpsp, "CP"), ep = degree_in(cpsp, "EP");
    if (!cp)
        cp = degree_in(cpsp, "context parallel");
    if (!cp)
        cp = degree_in(cpsp, "context parallelism");
    tp = tp ? tp : 1;
    pp = pp ? pp : 1;
    cp = cp ? cp : 1;
    ep = ep ? ep : 1;
    /* a mixture-of-experts row is one before anything can refuse it (the
     * dense summary leaves it out either way) */
    model_t cm;
    bool in_catalog = model_from_catalog(cell(c, i, "model"), &cm, &e) == 0;
    v->moe = ep > 1 || (in_catalog && model_is_moe(&cm));
    /* rule 3 */
    bool split = tp > 1 || pp > 1 || cp > 1;
    const char *zero_text = cell(c, i, "zero_or_fsdp");
    const char *prec_text = cell(c, i, "precision");
    bool fp16 = has_word(prec_text, "fp16") || has(prec_text, "float16");
    bool fp8 = has(prec_text, "fp8") || has(prec_text, "fp4") || has(prec_text, "float8");
    int mrc = fw_match_in(cat, fw_text, cell(c, i, "source_title"), &r->fw, &e);
    if (mrc == ERR_RUNTIME) {
        *err = e;
        return mrc;
    }
    if (mrc) {
        if (!fw_text[0] ||
            engine_for_unnamed(cat, fw_text, zero_text, split, fp16, fp8, "has no preset", &r->fw)) {
            skip(v, e.msg);
            return ERR_OK;
        }
        r->stand_in = true;
    } else if (split && !r->fw.caps.tp && !r->fw.caps.pp && !fw_caps_cp(&r->fw.caps)) {
        if (!zero_text[0])
            zero_text = fw_text; /* the engine the framework column names */
        /* a column naming only the engine ("FSDP", "DDP": metaseq's
         * "FSDP + Megatron TP") with the model split: that engine's preset
         * runs no TP, PP or CP, so the engine that runs it with them */
        if (engine_for_unnamed(cat, fw_text, zero_text, split, fp16, fp8,
                               "names an engine whose preset does not split the model",
                               &r->fw)) {
            skip(v, "no preset runs this engine with the model split");
            return ERR_OK;
        }
    }
    snprintf(v->group, sizeof v->group, "%s", r->fw.name);
    /* rule 1 */
    model_t m;
    int got = model_from_columns(c, i, tp, &m, &e);
    if (got < 0) {
        skip(v, e.msg);
        return ERR_OK;
    }
    /* the columns cannot describe experts: a mixture-of-experts row (EP > 1,
     * or "MoE" in its notes) takes the catalog model of that name when its
     * layers and width agree with the columns */
    bool same = got > 0 && in_catalog && cm.n_layers == m.n_layers && cm.hidden == m.hidden;
    if (same && model_is_moe(&cm) && (ep > 1 || has(cell(c, i, "notes"), "MoE")))
        m = cm;
    else if (same && !model_is_moe(&cm))
        m = catalog_block(&cm, &m, c, i);
    /* a GPT block drops out as the framework's GPT recipes set it */
    if (got > 0 && m.family == MODEL_FAMILY_GPT)
        m.dropout = r->fw.gpt_dropout;
    if (got == 0 && model_from_catalog(cell(c, i, "model"), &m, &e)) {
        char why[240];
        snprintf(why, sizeof why, "model not in the catalog: %s", e.msg);
        skip(v, why);
        return ERR_OK;
    }
    v->moe = v->moe || model_is_moe(&m);
    snprintf(v->model_key, sizeof v->model_key, "L%d-H%d-A%d-K%d-F%d-V%d", m.n_layers, m.hidden,
             m.n_heads, m.n_kv_heads, m.ffn, m.vocab);
    /* rule 2 */
    gpu_t g;
    const char *gpu_text = cell(c, i, "gpu_type");
    if (row_gpu(cat, gpu_text, &g)) {
        char why[240];
        snprintf(why, sizeof why, "GPU '%.160s' not in the catalog", gpu_text);
        skip(v, why);
        return ERR_OK;
    }
    snprintf(v->gpu, sizeof v->gpu, "%s", g.name);
    char cluster[160];
    row_cluster(cat, gpu_text, &g, cluster, sizeof cluster);
    row_positions(c, i, &m, v);
    scenario_spec_t spec = {0};
    spec.cluster.catalog = cat;
    spec.model_given = &m;
    spec.framework = r->fw.name;
    const char *gpus_text = cell(c, i, "num_gpus");
    spec.cluster.n_gpus = v->gpus = lead_int(gpus_text);
    if (int_before(gpus_text, "GPU") > 0) {
        /* "8 nodes (64 GPUs)": the GPUs */
        spec.cluster.n_gpus = v->gpus = int_before(gpus_text, "GPU");
    } else if (int_before(gpus_text, "node") > 0) {
        /* "48 nodes": that many of the row's (or the GPU's default) nodes */
        cluster_t cl;
        err_t ignore;
        if (cluster_load_in(cat, cluster[0] ? cluster : g.default_cluster, &cl, &ignore) == 0 &&
            cl.gpus_per_node > 0) {
            long all = (long)int_before(gpus_text, "node") * cl.gpus_per_node;
            if (all <= 1 << 24) {
                spec.cluster.n_gpus = v->gpus = (int)all;
                char what[160];
                snprintf(what, sizeof what, "GPUs as %d nodes x %d GPUs per node (%s)",
                         int_before(gpus_text, "node"), cl.gpus_per_node, cl.name);
                add_assumed(v, what);
            }
        }
    }
    if (v->gpus > 0 && lead_int(cell(c, i, "dp")) > 0 &&
        (long)tp * pp * cp * lead_int(cell(c, i, "dp")) != v->gpus) {
        char what[200];
        snprintf(what, sizeof what,
                 "the dp column says %d, but %d GPUs over TP x PP x CP = %d give %d: the GPU "
                 "count used",
                 lead_int(cell(c, i, "dp")), v->gpus, tp * pp * cp, v->gpus / (tp * pp * cp));
        add_assumed(v, what);
    }
    if (!v->gpus && lead_int(cell(c, i, "dp")) > 0) {
        /* no GPU count: the product of the parallel degrees the row gives */
        long all = (long)tp * pp * cp * lead_int(cell(c, i, "dp"));
        if (all <= 1 << 24) {
            spec.cluster.n_gpus = v->gpus = (int)all;
            add_assumed(v, "GPUs as TP x PP x CP x DP (no num_gpus)");
        }
    }
    if (cluster[0])
        spec.cluster.cluster = cluster;
    else
        spec.cluster.gpu = g.name;
    spec.cluster.fabric = row_fabric(gpu_text);
    spec.cluster.nics_per_node = row_nics(gpu_text);
    spec.cluster.gpus_per_node = row_gpus_per_node(gpu_text);
    int rc = scenario_begin(&spec, &r->s, &e);
    if (rc) {
        skip(v, e.msg);
        return ERR_OK;
    }
    /* rule 4 */
    layout_t *l = &r->s.layout;
    l->tp = tp;
    l->pp = pp;
    l->cp = cp;
    l->ep = ep;
    /* the MoE recipes behind the published runs keep each expert whole
     * (expert TP 1: Megatron-Bridge's perf matrix, NeMo's Mixtral configs) */
    l->etp = ep > 1 ? 1 : 0;
    int dp = spec.cluster.n_gpus / (tp * pp * cp);
    l->sp_off = has(cpsp, "no SP") || has(cpsp, "SP=False") || has(cpsp, "SP: no");
    bool sp_named = (has_word(cpsp, "SP") || has(cpsp, "sequence parallel")) && !l->sp_off;
    l->sequence_parallel = sp_named || (r->fw.sp_with_tp && tp > 1 && !l->sp_off);
    /* Megatron-LM takes --sequence-parallel as an argument (off by
     * default): a row with TP that does not say leaves it open */
    r->sp_open = tp > 1 && !l->sequence_parallel && r->fw.caps.sp && !has(cpsp, "SP") &&
                 !has(cpsp, "sequence parallel");
    const char *vpp_text = cell(c, i, "vpp_or_interleave");
    l->vpp = row_vpp(vpp_text, pp, 2);
    if (l->vpp > 1)
        l->schedule = SCHEDULE_INTERLEAVED;
    /* a schedule named there: DualPipe (DeepSeek-V3's) as the DualPipeV
     * the simulator runs, where the preset runs it; GPipe */
    if (pp > 1 && has(vpp_text, "DualPipe")) {
        if (r->fw.caps.schedule[SCHEDULE_DUALPIPEV]) {
            l->schedule = SCHEDULE_DUALPIPEV;
            l->vpp = 2;
            add_assumed(v, "DualPipe as DualPipeV, two stages a rank in a V");
        } else {
            l->schedule = SCHEDULE_1F1B;
            l->vpp = 1;
            char what[160];
            snprintf(what, sizeof what, "DualPipe: %s runs no DualPipeV, replayed with 1F1B",
                     r->fw.name);
            add_assumed(v, what);
        }
    } else if (pp > 1 && has(vpp_text, "GPipe")) {
        l->schedule = SCHEDULE_GPIPE;
        l->vpp = 1;
    }
    row_zero(zero_text, l);
    row_offload(zero_text, l);
    row_recompute(cell(c, i, "act_recompute"), &r->fw, l);
    r->recompute_given = cell(c, i, "act_recompute")[0] != '\0';
    r->vpp_given = cell(c, i, "vpp_or_interleave")[0] != '\0';
    r->s.fp8_recipe_fixed = row_precision(cell(c, i, "precision"), &r->fw, l);
    l->seq_len = lead_tokens(cell(c, i, "seq_len"));
    const char *mb_text = cell(c, i, "micro_batch"), *gb_text = cell(c, i, "global_batch_seqs");
    int mb = lead_int(mb_text) ? lead_int(mb_text) : first_int(mb_text);
    /* the batch in sequences; a count of tokens there ("4M tokens"), or
     * only in global_batch_tokens, divided by the sequence */
    bool gb_tokens = has(gb_text, "token");
    int gb = gb_tokens ? 0 : lead_int(gb_text);
    if (!gb && l->seq_len > 0) {
        double tokens = lead_num_base(gb_tokens ? gb_text : cell(c, i, "global_batch_tokens"), true);
        if (isfinite(tokens) && tokens >= l->seq_len && tokens < 1e15) {
            gb = (int)llround(tokens / l->seq_len);
            add_assumed(v, "global batch in sequences from its tokens over the sequence length");
        }
    }
    if (!gb)
        gb = batch_from_notes(cell(c, i, "notes"), l->seq_len, v);
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
    if (pp > 1 && r->fw.pp_split == LAYOUT_SPLIT_MEGATRON && has(vpp_text, "nterleav") &&
        !strpbrk(vpp_text, "0123456789")) {
        r->vpp_count_open = true;
        r->vpp_given = false;
        r->open_choices = true;
    }
    round_batch(l, dp, r->mb_open, v);
    notes_flags(cell(c, i, "notes"), &r->s.opt, l);
    framework_flags(fw_text, &r->s.opt, l);
    /* a stand-in lends its parallelism, not its model code: torchtitan's
     * Llama repeats the grouped K/V heads before attention (and so before a
     * context-parallel exchange); an in-house stack need not (Llama 3's
     * all-gathers the grouped K and V, arXiv:2407.21783 sec. 3.3.2) */
    if (r->stand_in)
        r->s.opt.kv_repeated = false;
    /* DeepSpeed's partition_method naming the embeddings too (BLOOM's
     * --pp-partition-method 'type:transformer|embedding') */
    layout_split_rule_t split_rule = r->fw.pp_split;
    if (split_rule == LAYOUT_SPLIT_BALANCED && has(cell(c, i, "notes"), "transformer|embedding"))
        split_rule = LAYOUT_SPLIT_BALANCED_EMBED;
    if (split_rule == LAYOUT_SPLIT_MEGATRON)
        uneven_split(l, &r->s.model);
    else if (framework_split(l, &r->s.model, split_rule, &e)) {
        skip(v, e.msg);
        return ERR_OK;
    }
    if ((rc = scenario_finish(&r->s, NULL, &e))) {
        skip(v, e.msg);
        return ERR_OK;
    }
    implied_sp(r, v);
    (void)err;
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
static int open_choices(sim_ctx_t *ctx, row_setup_t *r, bool keep, sim_result_t *best,
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

/* One more assumption of the row's replay. */
/* Rule 6's last resort: a row that gives only MFU (or HFU) is compared as
 * model (hardware) TFLOP/s, the percentage of the GPU's dense bf16 peak
 * (the basis of the Megatron, PaLM and Llama 3 papers' MFU), or of its fp8
 * peak where the row says so ("FP8 peak"). False when it gives neither. */
/* The number written just before text + at ("19.561 samples/s"): digits,
 * a decimal point and thousands separators, NAN when none. */
static double num_before(const char *text, const char *at)
{
    const char *q = number_before(text, at, true);
    return q ? lead_num(q) : NAN;
}

/* The number after the first occurrence of key, past spaces and a colon
 * ("samples per second: 19.561"), NAN when none. */
static double num_after(const char *text, const char *key)
{
    const char *p = find_ci(text, key);
    if (!p)
        return NAN;
    p += strlen(key);
    p += strspn(p, " :=");
    return isdigit((unsigned char)*p) ? lead_num(p) : NAN;
}

/* The first of keys in text, NULL when none. */
static const char *find_any(const char *text, const char *const *keys, size_t n)
{
    const char *p = NULL;
    for (size_t k = 0; k < n && !p; k++)
        p = find_ci(text, keys[k]);
    return p;
}

/* Rule 6's last resort: a throughput or step time written in other_result
 * ("19.561 samples/s", "samples per second: 19.561", "85,459 tokens/s
 * (all GPUs)", "104.7 s/iter"). Samples and tokens a second are the whole
 * job's unless the text says "per GPU"; false when it gives none. */
static bool other_result_metric(const char *text, double seq, int gpus, double *tps_gpu,
                                double *step_s)
{
    *tps_gpu = *step_s = NAN;
    bool per_gpu = has(text, "per GPU") || has(text, "/GPU");
    static const char *const samples[] = {"samples/s", "samples/sec", "sequences/s", "seqs/s",
                                          "samples per second", "sequences per second"};
    static const char *const tokens[] = {"tokens/s", "tokens/sec", "tok/s", "tokens per second"};
    static const char *const steps[] = {"s/iter", "s/step", "sec/iter", "s per iteration",
                                        "seconds per iteration", "s per step",
                                        "seconds per step"};
    const char *at;
    double v;
    if ((at = find_any(text, samples, sizeof samples / sizeof samples[0]))) {
        v = num_before(text, at);
        if (!(isfinite(v) && v > 0))
            v = num_after(at, strchr(at, ':') ? ":" : " ");
        if (isfinite(v) && v > 0 && seq > 0 && gpus > 0)
            *tps_gpu = v * seq / (per_gpu ? 1 : gpus);
    } else if ((at = find_any(text, tokens, sizeof tokens / sizeof tokens[0]))) {
        v = num_before(text, at);
        if (isfinite(v) && v > 0 && gpus > 0)
            *tps_gpu = per_gpu ? v : v / gpus;
    } else if ((at = find_any(text, steps, sizeof steps / sizeof steps[0]))) {
        v = num_before(text, at);
        if (isfinite(v) && v > 0)
            *step_s = v;
    }
    return isfinite(*tps_gpu) || isfinite(*step_s);
}

static bool mfu_as_tflops(const csv_t *c, int i, const gpu_t *g, const sim_result_t *res,
                          pub_row_t *v)
{
    double mfu = lead_num(cell(c, i, "mfu_pct")), hfu = lead_num(cell(c, i, "hfu_pct"));
    bool use_hfu = !(isfinite(mfu) && mfu > 0);
    double pct = use_hfu ? hfu : mfu;
    if (!(isfinite(pct) && pct > 0 && pct <= 100))
        return false;
    const char *said[] = {cell(c, i, "other_result"), cell(c, i, "notes"),
                          cell(c, i, "tflops_basis")};
    bool fp8 = false;
    for (int k = 0; k < 3; k++)
        fp8 = fp8 || has(said[k], "FP8 peak");
    double peak = g->peak_tflops[fp8 ? DTYPE_FP8 : DTYPE_BF16];
    if (!(peak > 0))
        peak = g->peak_tflops[DTYPE_FP16];
    if (!(peak > 0))
        return false;
    v->metric = use_hfu ? PUB_HW_TFLOPS : PUB_MODEL_TFLOPS;
    v->published = pct / 100 * peak;
    v->predicted = use_hfu ? res->hardware_tflops_per_gpu : res->model_tflops_per_gpu;
    v->published_tps_gpu = v->predicted_tps_gpu * v->published / v->predicted;
    char what[160];
    snprintf(what, sizeof what, "only %s given: %.4g%% of the %s dense peak (%.0f TFLOP/s)",
             use_hfu ? "HFU" : "MFU", pct, fp8 ? "fp8" : "bf16", peak);
    add_assumed(v, what);
    return true;
}

static int run_row(catalog_t *cat, const csv_t *c, int i, const pub_options_t *o, sim_ctx_t *ctx,
                   pub_row_t *v, err_t *err)
{
    row_setup_t r;
    memset(&r, 0, sizeof r);
    int rc = setup_row(cat, c, i, v, &r, err);
    if (rc || v->skipped)
        goto out;
    /* a catalog GPU name: as long as the field at most, never cut */
    _Static_assert(sizeof v->profile_gpu >= sizeof r.s.cluster.gpu.name,
                   "profile_gpu holds any GPU name");
    memcpy(v->profile_gpu, r.s.cluster.gpu.name, sizeof r.s.cluster.gpu.name);
    if (o && o->only_gpu && strcmp(o->only_gpu, r.s.cluster.gpu.name) != 0) {
        skip(v, "another GPU");
        goto out;
    }
    if (r.fw.matched_by[0])
        add_assumed(v, r.fw.matched_by);
    if (o && o->profile && strcmp(o->profile->gpu, r.s.cluster.gpu.name) == 0)
        r.s.input.profile = o->profile;
    sim_result_t res;
    if (r.open_choices) {
        bool found = false;
        bool kept = r.recompute_given || r.vpp_given;
        if ((rc = open_choices(ctx, &r, true, &res, &found, err)))
            goto out;
        if (!found && kept) {
            if ((rc = open_choices(ctx, &r, false, &res, &found, err)))
                goto out;
            if (found)
                add_assumed(v, "nothing fits in memory with the row's recompute and "
                               "interleaving: they are chosen too");
        }
        if (!found) {
            skip(v, "no micro-batch, recompute and interleaving choice fits in memory");
            goto out;
        }
        if (r.vpp_count_open)
            add_assumed(v, "interleaved without a count: the fastest count that fits");
        if (r.mb_open)
            add_assumed(v, kept ? "the row gives no micro-batch: the fastest that fits"
                                : "the row gives no micro-batch or recompute: the fastest "
                                  "choice that fits");
        v->open_choices = true;
    } else if ((rc = sim_run_step(ctx, &r.s.input, &res, err))) {
        goto out;
    }
    layout_describe(&r.s.layout, v->layout, sizeof v->layout);
    /* the row's own layout is timed whether it fits or not, and says which */
    v->fits = res.fits;
    v->memory_gib = res.memory.total_bytes / GIB;
    v->capacity_gib = res.capacity_gib;
    v->sim_model = r.s.model;
    v->sim_layout = r.s.layout;
    snprintf(v->framework, sizeof v->framework, "%s", r.fw.name);
    snprintf(v->cluster, sizeof v->cluster, "%s", r.s.cluster.name);
    const layout_t *l = &r.s.layout;
    double tokens_step = (double)l->global_batch * l->seq_len;
    v->predicted_tps_gpu = res.tokens_per_s / l->n_gpus;
    double tps = lead_num(cell(c, i, "tokens_per_sec_per_gpu"));
    double spi = lead_num(cell(c, i, "sec_per_iter"));
    double tflops = lead_num(cell(c, i, "tflops_per_gpu"));
    /* hardware FLOPs where the basis says so ("hardware FLOPs incl.
     * recompute", "HFU") */
    const char *basis = cell(c, i, "tflops_basis");
    bool hw = has(basis, "hardware") || has_word(basis, "HFU");
    if (isfinite(tps) && tps > 0) {
        v->metric = PUB_TOKENS_PER_S;
        v->published = tps;
        v->predicted = v->predicted_tps_gpu;
        v->published_tps_gpu = tps;
    } else if (isfinite(spi) && spi > 0) {
        v->metric = PUB_STEP_TIME;
        v->published = spi;
        v->predicted = res.step_time_s;
        v->published_tps_gpu = tokens_step / spi / l->n_gpus;
    } else if (isfinite(tflops) && tflops > 0) {
        v->metric = hw ? PUB_HW_TFLOPS : PUB_MODEL_TFLOPS;
        v->published = tflops;
        v->predicted = hw ? res.hardware_tflops_per_gpu : res.model_tflops_per_gpu;
        v->published_tps_gpu = v->predicted_tps_gpu * tflops / v->predicted;
    } else if (mfu_as_tflops(c, i, &r.s.cluster.gpu, &res, v)) {
        /* compared as TFLOP/s */
    } else {
        double o_tps, o_step;
        if (!other_result_metric(cell(c, i, "other_result"), l->seq_len, l->n_gpus, &o_tps,
                                 &o_step)) {
            skip(v, "the row gives no tokens/s, step time, TFLOP/s, MFU or HFU");
            goto out;
        }
        add_assumed(v, "the result read from other_result");
        if (isfinite(o_tps)) {
            v->metric = PUB_TOKENS_PER_S;
            v->published = v->published_tps_gpu = o_tps;
            v->predicted = v->predicted_tps_gpu;
        } else {
            v->metric = PUB_STEP_TIME;
            v->published = o_step;
            v->predicted = res.step_time_s;
            v->published_tps_gpu = tokens_step / o_step / l->n_gpus;
        }
    }
    v->error = v->metric == PUB_STEP_TIME ? v->published / v->predicted - 1
                                          : v->predicted / v->published - 1;
out:
    scenario_free(&r.s);
    return rc;
}

/* The columns a file must have; any other column of the schema may be
 * left out and reads as empty. */
static const char *const REQUIRED[] = {"row_id", "model", "gpu_type", "framework"};
static const char *const METRICS[] = {"tokens_per_sec_per_gpu", "sec_per_iter", "tflops_per_gpu",
                                      "mfu_pct", "hfu_pct", "other_result"};

int pub_replay(const char *csv_path, const pub_options_t *opt, pub_row_t **rows, int *n,
               err_t *err)
{
    *rows = NULL;
    *n = 0;
    csv_t *c;
    int rc = csv_load(csv_path, &c, err);
    if (rc)
        return rc;
    for (size_t k = 0; k < sizeof REQUIRED / sizeof REQUIRED[0]; k++)
        if (!csv_get(c, 0, REQUIRED[k])) {
            csv_free(c);
            return err_setf(err, ERR_INPUT, csv_path, REQUIRED[k],
                            "missing column (the schema of shared/validation/throughput.csv)");
        }
    bool metric = false;
    for (size_t k = 0; k < sizeof METRICS / sizeof METRICS[0]; k++)
        metric = metric || csv_get(c, 0, METRICS[k]);
    if (!metric) {
        csv_free(c);
        return err_setf(err, ERR_INPUT, csv_path, NULL,
                        "no result column: give tokens_per_sec_per_gpu, sec_per_iter, "
                        "tflops_per_gpu, mfu_pct, hfu_pct or other_result (the schema of "
                        "shared/validation/throughput.csv)");
    }
    int count = csv_rows(c);
    pub_row_t *out = calloc((size_t)(count > 0 ? count : 1), sizeof *out);
    sim_ctx_t *ctx = sim_ctx_create();
    catalog_t *own = NULL, *cat = opt ? opt->catalog : NULL;
    if (!cat)
        cat = own = catalog_create();
    if (!out || !ctx || !cat) {
        rc = err_set(err, ERR_RUNTIME, "out of memory");
        goto done;
    }
    progress_t *bar = opt && opt->progress ? progress_create("replaying published runs", count)
                                           : NULL;
    for (int i = 0; i < count && !rc; i++) {
        snprintf(out[i].row_id, sizeof out[i].row_id, "%s", cell(c, i, "row_id"));
        snprintf(out[i].model, sizeof out[i].model, "%s", cell(c, i, "model"));
        out[i].memory_gib = out[i].capacity_gib = NAN;
        rc = run_row(cat, c, i, opt, ctx, &out[i], err);
        if (rc)
            err_prefix(err, out[i].row_id);
        progress_update(bar, i + 1);
    }
    progress_destroy(bar);
done:
    catalog_destroy(own);
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

/* ------------------------------------------------------------ summaries */

bool pub_row_dense(const pub_row_t *r)
{
    return !r->moe && !strstr(r->reason, "mixture-of-experts") && r->sim_layout.ep <= 1 &&
           !model_is_moe(&r->sim_model);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double row_abs_error(const pub_row_t *r)
{
    return r->skipped ? 1.0 : fabs(r->error);
}

/* Median and 90th percentile (nearest rank) of v[0..k), sorted in place. */
static void quantiles(double *v, int k, double *median, double *p90)
{
    if (k == 0) {
        *median = *p90 = 0;
        return;
    }
    qsort(v, (size_t)k, sizeof *v, cmp_double);
    *median = k % 2 ? v[k / 2] : 0.5 * (v[k / 2 - 1] + v[k / 2]);
    int r = (int)ceil(0.9 * k) - 1;
    *p90 = v[r < 0 ? 0 : r];
}

void pub_summary(const pub_row_t *rows, int n, bool (*keep)(const pub_row_t *), double *median,
                 double *p90, int *count)
{
    double *e = malloc((size_t)(n > 0 ? n : 1) * sizeof *e);
    int k = 0;
    for (int i = 0; e && i < n; i++)
        if (!keep || keep(&rows[i]))
            e[k++] = row_abs_error(&rows[i]);
    quantiles(e, k, median, p90);
    *count = k;
    free(e);
}

int pub_groups(const pub_row_t *rows, int n, pub_group_t **groups, int *n_groups, err_t *err)
{
    *groups = NULL;
    *n_groups = 0;
    pub_group_t *g = calloc((size_t)(n > 0 ? n : 1), sizeof *g);
    double *e = malloc((size_t)(n > 0 ? n : 1) * sizeof *e);
    if (!g || !e) {
        free(g);
        free(e);
        return err_set(err, ERR_RUNTIME, "out of memory");
    }
    int ng = 0;
    for (int i = 0; i < n; i++) {
        const char *name = rows[i].group[0] ? rows[i].group : "(no framework)";
        int k = 0;
        while (k < ng && strcmp(g[k].group, name) != 0)
            k++;
        if (k < ng)
            continue;
        pub_group_t *x = &g[ng++];
        snprintf(x->group, sizeof x->group, "%s", name);
        int m = 0;
        for (int j = i; j < n; j++) {
            const char *nj = rows[j].group[0] ? rows[j].group : "(no framework)";
            if (strcmp(nj, name) != 0)
                continue;
            x->rows++;
            x->skipped += rows[j].skipped;
            e[m++] = row_abs_error(&rows[j]);
            if (row_abs_error(&rows[j]) > x->worst)
                x->worst = row_abs_error(&rows[j]);
        }
        quantiles(e, m, &x->median, &x->p90);
    }
    free(e);
    *groups = g;
    *n_groups = ng;
    return ERR_OK;
}

int pub_ordering(const pub_row_t *rows, int n, double min_gap, int *pairs, int *misordered,
                 int **wrong, err_t *err)
{
    *pairs = *misordered = 0;
    int cap = 64, k = 0;
    int *w = wrong ? malloc((size_t)cap * 2 * sizeof *w) : NULL;
    if (wrong && !w)
        return err_set(err, ERR_RUNTIME, "out of memory");
    for (int a = 0; a < n; a++)
        for (int b = a + 1; b < n; b++) {
            const pub_row_t *x = &rows[a], *y = &rows[b];
            if (x->skipped || y->skipped || x->gpus != y->gpus ||
                strcmp(x->model_key, y->model_key) != 0)
                continue;
            double hi = fmax(x->published_tps_gpu, y->published_tps_gpu);
            double lo = fmin(x->published_tps_gpu, y->published_tps_gpu);
            if (!(lo > 0) || hi / lo - 1 <= min_gap)
                continue;
            (*pairs)++;
            bool pub = x->published_tps_gpu > y->published_tps_gpu;
            bool pred = x->predicted_tps_gpu > y->predicted_tps_gpu;
            if (pub == pred)
                continue;
            (*misordered)++;
            if (!w)
                continue;
            if (k == cap) {
                int *nw = realloc(w, (size_t)cap * 4 * sizeof *w);
                if (!nw) {
                    free(w);
                    return err_set(err, ERR_RUNTIME, "out of memory");
                }
                w = nw;
                cap *= 2;
            }
            w[2 * k] = a;
            w[2 * k + 1] = b;
            k++;
        }
    if (wrong)
        *wrong = w;
    return ERR_OK;
}
