/* Rules 1-4 of validate/published.h column by column (split off from
 * published.c, issue 34): the model, the GPU and its cluster, and the
 * layout, recompute, precision and engine flags a column names. */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "validate/publishedInt.h"

/* ------------------------------------------------------------ rule 1: model */

/* The architecture the columns give, or 0 when they leave it out. */
int pub_model_from_columns(const csv_t *c, int i, int tp, model_t *m, err_t *err)
{
    int layers = pub_lead_int(pub_cell(c, i, "layers"));
    int hidden = pub_lead_int(pub_cell(c, i, "hidden"));
    int heads = pub_lead_int(pub_cell(c, i, "heads"));
    if (!layers || !hidden || !heads)
        return 0;
    const char *name = pub_cell(c, i, "model");
    memset(m, 0, sizeof *m);
    snprintf(m->name, sizeof m->name, "%s", name);
    snprintf(m->display, sizeof m->display, "%s", name);
    snprintf(m->source, sizeof m->source, "throughput.csv %s", pub_cell(c, i, "row_id"));
    /* Llama-style blocks (RMSNorm, gated MLP, rotary positions, no biases):
     * Llama and the families built on its design */
    static const char *const llama_like[] = {"llama",   "mistral",  "mixtral", "qwen",
                                             "internlm", "baichuan", "deepseek", "olmo",
                                             "gemma",   "granite",  "phi-3",   "phi3"};
    bool llama = false;
    for (size_t k = 0; k < sizeof llama_like / sizeof llama_like[0]; k++)
        llama = llama || pub_has(name, llama_like[k]);
    m->family = llama ? MODEL_FAMILY_LLAMA : MODEL_FAMILY_GPT;
    m->norm = llama ? MODEL_NORM_RMSNORM : MODEL_NORM_LAYERNORM;
    m->mlp = llama ? MODEL_MLP_SWIGLU : MODEL_MLP_GELU;
    m->pos = llama ? MODEL_POS_ROPE : MODEL_POS_LEARNED;
    m->n_layers = layers;
    m->hidden = hidden;
    m->n_heads = heads;
    m->n_kv_heads = pub_lead_int(pub_cell(c, i, "kv_heads"));
    if (!m->n_kv_heads)
        m->n_kv_heads = heads;
    m->head_dim = hidden / heads;
    m->ffn = pub_lead_int(pub_cell(c, i, "ffn"));
    if (!m->ffn)
        m->ffn = 4 * hidden;
    m->vocab = pub_lead_int(pub_cell(c, i, "vocab"));
    if (!m->vocab) {
        /* GPT-2's BPE vocabulary padded as Megatron pads it: to a multiple of
         * 128 x TP (--make-vocab-size-divisible-by 128). */
        int mult = 128 * (tp > 0 ? tp : 1);
        m->vocab = (50257 + mult - 1) / mult * mult;
    }
    m->max_seq = pub_lead_tokens(pub_cell(c, i, "seq_len"));
    m->tied_embeddings = !llama;
    m->qkv_bias = m->out_bias = m->mlp_bias = !llama;
    m->norm_eps = 1e-5;
    m->rope_theta = llama ? 500000 : 0;
    int rc = model_validate(m, pub_cell(c, i, "row_id"), err);
    return rc ? -rc : 1;
}

/* What the replay of row v assumed, one more clause of its list. */
void pub_add_assumed(pub_row_t *v, const char *what)
{
    size_t n = strlen(v->assumed);
    snprintf(v->assumed + n, sizeof v->assumed - n, "%s%s", n ? "; " : "", what);
}

/* A published run trained at its sequence length, so a learned position
 * table as long as it existed (llm-foundry's benchmark MPTs size theirs to
 * the run; a named model's table may be shorter): extended, and said. Rotary
 * and ALiBi models have no table to outgrow. */
void pub_row_positions(const csv_t *c, int i, model_t *m, pub_row_t *v)
{
    int seq = pub_lead_tokens(pub_cell(c, i, "seq_len"));
    if (m->pos != MODEL_POS_LEARNED || seq <= m->max_seq)
        return;
    char what[200];
    snprintf(what, sizeof what, "learned positions of %s extended from %d to the run's %d",
             m->name, m->max_seq, seq);
    m->max_seq = seq;
    pub_add_assumed(v, what);
}

/* A dense row whose model names a catalog model of the same depth and
 * width: the catalog's block (norms, MLP, positions, biases, tied
 * embeddings: what the columns cannot say), with the sizes the columns
 * give (heads, KV heads, FFN, vocabulary, positions). */
model_t pub_catalog_block(const model_t *catalog, const model_t *cols, const csv_t *c, int i)
{
    model_t m = *catalog;
    m.n_heads = cols->n_heads;
    if (pub_lead_int(pub_cell(c, i, "kv_heads")))
        m.n_kv_heads = cols->n_kv_heads;
    else if (m.n_heads != catalog->n_heads)
        m.n_kv_heads = m.n_heads;
    if (m.n_heads != catalog->n_heads)
        m.head_dim = m.hidden / m.n_heads;
    if (pub_lead_int(pub_cell(c, i, "ffn")))
        m.ffn = cols->ffn;
    if (pub_lead_int(pub_cell(c, i, "vocab")))
        m.vocab = cols->vocab;
    if (m.pos == MODEL_POS_LEARNED && cols->max_seq > m.max_seq)
        m.max_seq = cols->max_seq;
    return m;
}

/* The catalog model named by the model column ("LLAMA2-70B", "MPT-70b"). */
int pub_model_from_catalog(const char *name, model_t *m, err_t *err)
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
int pub_row_gpu(catalog_t *cat, const char *text, gpu_t *g)
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
void pub_row_cluster(catalog_t *cat, const char *text, const gpu_t *g, char *out, size_t cap)
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
const char *pub_row_fabric(const char *text)
{
    if (pub_has(text, "Omni-Path") || pub_has(text, "OmniPath") || pub_has_word(text, "OPA"))
        return "opa-100";
    int gbps = row_link_gbps(text);
    if (pub_has(text, "RoCE"))
        return gbps == 100 ? "roce-100" : gbps == 200 ? "roce-200" : "roce-400";
    if (pub_has_word(text, "EFA"))
        return "efa-v2";
    static const char *const ib[][2] = {
        {"XDR", "ib-xdr"}, {"NDR", "ib-ndr"}, {"HDR", "ib-hdr"}, {"EDR", "ib-edr"}};
    for (size_t k = 0; k < sizeof ib / sizeof ib[0]; k++)
        if (pub_has_word(text, ib[k][0]))
            return ib[k][1];
    if ((pub_has(text, "InfiniBand") || pub_has_word(text, "IB")) && gbps) {
        return gbps == 800 ? "ib-xdr" : gbps == 400 ? "ib-ndr" : gbps == 200 ? "ib-hdr" : "ib-edr";
    }
    return NULL;
}

/* The scale-out links per node the GPU text counts: a number just before
 * the fabric's word ("4 OmniPath links", "8x HDR", "4 x Omni-Path") or
 * before "NICs", "HCAs" or "rails" ("8 NICs per node"); 0 when none. */
int pub_row_nics(const char *text)
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
int pub_row_gpus_per_node(const char *text)
{
    int n = pub_int_before(text, "per node");
    if (n <= 0)
        n = pub_int_before(text, "GPUs per node");
    return n >= 1 && n <= 72 ? n : 0;
}

/* ------------------------------------------------------------ rule 4: layout */

int pub_row_vpp(const char *text, int pp, int stages_per_rank_interleaved)
{
    int v = pub_degree_in(text, "VP");
    if (!v)
        v = pub_degree_in(text, "VPP");
    if (v)
        return v;
    if (pub_has(text, "(="))
        return pub_lead_int(strstr(text, "(=") + 2);
    if (isdigit((unsigned char)text[0]))
        return pub_lead_int(text);
    if (pub_has(text, "interleaved") && strchr(text, '(') && pp > 1 &&
        isdigit((unsigned char)strchr(text, '(')[1]))
        return pub_lead_int(strchr(text, '(') + 1);
    if (pub_has(text, "interleaved") && pp > 1)
        return stages_per_rank_interleaved;
    return 1;
}

/* Host offload the ZeRO/FSDP column (or the notes) names: DeepSpeed's
 * offload_optimizer / --cpu-optimizer ("optimizer offloaded to CPU"), its
 * offload_param, NVMe for either. */
void pub_row_offload(const char *text, layout_t *l)
{
    if (!pub_has(text, "offload") && !pub_has(text, "cpu-optimizer") &&
        !pub_has(text, "CPU optimizer"))
        return;
    if (pub_has(text, "param"))
        l->offload |= LAYOUT_OFFLOAD_PARAMS | LAYOUT_OFFLOAD_OPTIMIZER;
    else
        l->offload |= LAYOUT_OFFLOAD_OPTIMIZER;
    if (pub_has(text, "NVMe"))
        l->offload_nvme = true;
}

void pub_row_zero(const char *text, layout_t *l)
{
    if (pub_has(text, "ZeRO-"))
        l->zero = pub_int_after(text, "ZeRO-");
    else if (pub_has(text, "ZeRO stage"))
        l->zero = pub_int_after(text, "ZeRO stage");
    else if (pub_degree_in(text, "ZeRO"))
        l->zero = pub_degree_in(text, "ZeRO");
    else if (pub_has(text, "SHARD_GRAD_OP"))
        l->zero = 2;
    else if (pub_has(text, "FSDP"))
        l->zero = 3;
    if (l->zero >= 2)
        l->distributed_optimizer = false; /* parameters and gradients sharded too */
    if (pub_has(text, "distributed opt"))
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
        if (pub_find_ci(w, "norm"))
            rc |= LAYOUT_RC_LAYERNORM;
        if (pub_find_ci(w, "up-proj") || pub_find_ci(w, "up_proj"))
            rc |= LAYOUT_RC_MLA_UP_PROJ;
        if (strcasecmp(w, "SwiGLU") == 0 || strcasecmp(w, "GeLU") == 0)
            rc |= LAYOUT_RC_MOE_ACT;
        p += n;
    }
    if (pub_has(text, "activation function"))
        rc |= LAYOUT_RC_MOE_ACT;
    if (pub_has(text, "attention core"))
        rc |= LAYOUT_RC_CORE_ATTN;
    if (pub_has(text, "shared expert"))
        rc |= LAYOUT_RC_SHARED_EXPERTS;
    return rc;
}

void pub_row_recompute(const char *text, const fw_preset_t *fw, layout_t *l)
{
    if (!text[0]) {
        l->recompute = fw->recompute;
        return;
    }
    /* named modules recomputed ("RMSNorm and MLA up-projections
     * recomputed", Megatron's --recompute-modules layernorm mla_up_proj
     * moe_act) are Megatron's selective granularity, not the whole block */
    unsigned named = row_rc_modules(text);
    bool modules = !pub_has(text, "full") &&
                   (named || pub_has(text, "MLA") || pub_has(text, "recompute-modules") ||
                    pub_has(text, "recompute_modules"));
    if (pub_has(text, "op-level") || pub_has(text, "per-op") ||
        pub_has(text, "default config (selective"))
        l->recompute = RECOMPUTE_OPS;
    else if (pub_has(text, "selective") || modules)
        l->recompute = RECOMPUTE_SELECTIVE;
    else if (pub_has_word(text, "no") || pub_has_word(text, "none") || pub_has_word(text, "off") ||
             pub_has_word(text, "false") || pub_has(text, "without") || pub_has(text, "disabled"))
        l->recompute = RECOMPUTE_NONE;
    else if (pub_has(text, "full") || pub_has_word(text, "yes") || pub_has_word(text, "true") ||
             pub_has_word(text, "on") || pub_has_word(text, "AC") || pub_has(text, "checkpoint") ||
             pub_has(text, "recompute") || pub_has(text, "block") || pub_has(text, "partial"))
        l->recompute = RECOMPUTE_FULL;
    else
        l->recompute = RECOMPUTE_NONE;
    /* "block, 4 layers", "partial (2 layers)": Megatron's block recompute of
     * the first N layers of each (virtual) stage */
    if (l->recompute == RECOMPUTE_FULL && pub_has(text, "layer") && pub_first_int(text) > 0)
        l->recompute_layers = pub_first_int(text);
    /* the modules named, as Megatron-Core's --recompute-modules (a preset
     * without them rebuilds the attention core) */
    if (l->recompute == RECOMPUTE_SELECTIVE && modules && fw->caps.recompute_modules)
        l->recompute_modules = named;
}

/* The precision column: the recipe it names; a bare "fp8" is the preset's
 * default fp8 recipe. */
bool pub_row_precision(const char *text, const fw_preset_t *fw, layout_t *l)
{
    bool fp8 = pub_has(text, "fp8") || pub_has(text, "float8");
    if (pub_has(text, "nvfp4"))
        l->precision = PRECISION_NVFP4;
    else if (pub_has(text, "mxfp4"))
        l->precision = PRECISION_MXFP4;
    else if (pub_has(text, "fp4"))
        l->precision = PRECISION_NVFP4; /* Blackwell's fp4 training recipe */
    else if (pub_has(text, "mxfp8") || pub_has(text, "FP8-MX") || pub_has(text, "fp8_mx"))
        l->precision = PRECISION_MXFP8;
    /* the scaling words describe fp8 only ("fp16 with dynamic loss
     * scaling" is fp16) */
    else if (fp8 && (pub_has(text, "blockwise") || pub_has(text, "subchannel") ||
                     pub_has(text, "block-wise") || pub_has(text, "128x128") ||
                     pub_has(text, "1x128") || pub_has(text, "fine-grained")))
        l->precision = PRECISION_FP8_BLOCK; /* DeepSeek-V3's tiles and blocks */
    else if (fp8 && pub_has(text, "rowwise"))
        l->precision = PRECISION_FP8_ROWWISE;
    else if (fp8 && (pub_has(text, "current scaling") || pub_has(text, "FP8-CS") ||
                     pub_has(text, "tensorwise") || pub_has(text, "dynamic")))
        l->precision = PRECISION_FP8_CS;
    else if (fp8 && (pub_has(text, "delayed") || pub_has(text, "amax_history"))) {
        l->precision = PRECISION_FP8; /* Transformer Engine's delayed scaling */
        return true;
    } else if (fp8)
        l->precision = fw->fp8_recipe;
    else if (pub_has(text, "fp16"))
        l->precision = PRECISION_FP16;
    else if (!pub_has(text, "bf16") &&
             (pub_has(text, "fp32") || pub_has(text, "tf32") || pub_has(text, "float32")))
        l->precision = PRECISION_FP32;
    else
        l->precision = PRECISION_BF16;
    return false;
}

/* Megatron's uneven split when the stages do not divide the layers: the
 * embedding and the loss count as one layer each, so the first and last
 * (virtual) stage hold one layer fewer. */
void pub_uneven_split(layout_t *l, const model_t *m)
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
int pub_framework_split(layout_t *l, const model_t *m, layout_split_rule_t rule, err_t *err)
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
    if (pub_has(notes, "DeepEP") || pub_has(notes, "HybridEP")) {
        o->moe.dispatcher = MOE_DISPATCH_DEEPEP;
        o->moe.dispatcher_given = true;
    }
    if (pub_has(notes, "(EP) overlap on"))
        o->moe.a2a_overlap = true;
    else if (pub_has(notes, "(EP) overlap off"))
        o->moe.a2a_overlap = false;
    const char *g = pub_find_ci(notes, "CUDA graphs ");
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

void pub_notes_flags(const char *notes, sim_options_t *o, layout_t *l)
{
    if (pub_has(notes, "--overlap-grad-reduce"))
        o->overlap_grad_reduce = true;
    if (pub_has(notes, "--overlap-param-gather")) {
        /* only the distributed optimizer gathers parameters */
        o->overlap_param_gather = true;
        l->distributed_optimizer = true;
    }
    if (pub_has(notes, "--use-distributed-optimizer"))
        l->distributed_optimizer = true;
    if (pub_has(notes, "--tp-comm-overlap") && l->tp > 1) {
        /* Transformer Engine's TP overlap runs with sequence parallelism */
        o->tp_comm_overlap = true;
        l->sequence_parallel = true;
    }
    if (pub_has(notes, "--sequence-parallel"))
        l->sequence_parallel = true;
    /* NeMo's switch (ub_tp_comm_overlap in NeMo 1.0, the comm-overlap
     * callback's tp_comm_overlap in NeMo 2.0): on, Transformer Engine's
     * default roles where the preset has no userbuffers setting for the
     * model (TE initializes userbuffers with its defaults when the recipe
     * gives no config); off, none */
    if (pub_has(notes, "tp_comm_overlap=true") && l->tp > 1) {
        o->tp_comm_overlap = true;
        o->tp_overlap.off_unmatched = false;
        l->sequence_parallel = true;
    } else if (pub_has(notes, "tp_comm_overlap=false")) {
        o->tp_comm_overlap = false;
    }
    /* Megatron's --moe-router-force-load-balancing: every expert gets its
     * share of the tokens */
    if (pub_has(notes, "forced balance")) {
        o->moe.imbalance = 1;
        o->moe.imbalance_given = true;
    }
    notes_moe_flags(notes, o);
}

/* Features the framework column names ("torchtitan 3D + compile + Float8
 * + AsyncTP"): compiled elementwise kernels, asynchronous (overlapped) TP. */
void pub_framework_flags(const char *text, sim_options_t *o, layout_t *l)
{
    if (pub_has(text, "compile"))
        sim_options_compiled(o);
    if ((pub_has(text, "async TP") || pub_has(text, "AsyncTP")) && l->tp > 1) {
        o->tp_comm_overlap = true;
        l->sequence_parallel = true;
    }
}
