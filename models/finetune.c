#include "models/finetune.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>

void finetune_defaults(finetune_t *f)
{
    f->mode = FINETUNE_NONE;
    f->rank = FINETUNE_DEFAULT_RANK;
    /* LLaMA-Factory's lora_target: all, axolotl's lora_target_linear: true
     * and Unsloth's q,k,v,o,gate,up,down: every linear of the block (PEFT's
     * own default for Llama is q_proj,v_proj: --lora-targets q,v) */
    f->targets = FINETUNE_T_ALL;
    f->base_bits = 16;
}

bool finetune_frozen(const finetune_t *f)
{
    return f->mode == FINETUNE_LORA || f->mode == FINETUNE_QLORA;
}

static const char *const mode_names[FINETUNE_COUNT] = {"none", "lora", "qlora", "full"};

const char *finetune_mode_name(finetune_mode_t m)
{
    return m >= 0 && m < FINETUNE_COUNT ? mode_names[m] : "?";
}

int finetune_parse_mode(const char *text, finetune_mode_t *out, err_t *err)
{
    for (int i = 0; i < FINETUNE_COUNT; i++)
        if (strcmp(text, mode_names[i]) == 0) {
            *out = (finetune_mode_t)i;
            return ERR_OK;
        }
    return err_setf(err, ERR_INPUT, NULL, "--finetune", "use lora, qlora or full (got '%s')",
                    text);
}

/* One target word: scaleplan's short name, PEFT's Llama module name, or a
 * group. */
static const struct {
    const char *name, *peft;
    unsigned bits;
} target_words[] = {
    {"q", "q_proj", FINETUNE_T_Q},          {"k", "k_proj", FINETUNE_T_K},
    {"v", "v_proj", FINETUNE_T_V},          {"o", "o_proj", FINETUNE_T_O},
    {"gate", "gate_proj", FINETUNE_T_GATE}, {"up", "up_proj", FINETUNE_T_UP},
    {"down", "down_proj", FINETUNE_T_DOWN}, {"all", "all-linear", FINETUNE_T_ALL},
    {"attention", "attn", FINETUNE_T_Q | FINETUNE_T_K | FINETUNE_T_V | FINETUNE_T_O},
    {"mlp", "ffn", FINETUNE_T_GATE | FINETUNE_T_UP | FINETUNE_T_DOWN},
};
enum { N_TARGET_WORDS = sizeof target_words / sizeof target_words[0] };

static unsigned target_word(const char *w, size_t n)
{
    for (int i = 0; i < N_TARGET_WORDS; i++) {
        const char *a = target_words[i].name, *b = target_words[i].peft;
        if ((strlen(a) == n && strncmp(w, a, n) == 0) || (strlen(b) == n && strncmp(w, b, n) == 0))
            return target_words[i].bits;
    }
    return 0;
}

int finetune_parse_targets(const char *text, unsigned *out, err_t *err)
{
    unsigned mask = 0;
    const char *p = text;
    while (*p) {
        while (*p == ',' || isspace((unsigned char)*p))
            p++;
        if (!*p)
            break;
        size_t n = 0;
        while (p[n] && p[n] != ',' && !isspace((unsigned char)p[n]))
            n++;
        unsigned bits = target_word(p, n);
        if (!bits)
            return err_setf(err, ERR_INPUT, NULL, "--lora-targets",
                            "unknown module '%.*s': use q,k,v,o,gate,up,down (or all, attention, "
                            "mlp)",
                            (int)(n > 40 ? 40 : n), p);
        mask |= bits;
        p += n;
    }
    if (!mask)
        return err_setf(err, ERR_INPUT, NULL, "--lora-targets",
                        "name at least one module: q,k,v,o,gate,up,down");
    *out = mask;
    return ERR_OK;
}

void finetune_targets_name(unsigned targets, char *buf, int cap)
{
    int used = 0;
    if (cap > 0)
        buf[0] = '\0';
    for (int i = 0; i < 7 && used < cap; i++) {
        if (!(targets & target_words[i].bits))
            continue;
        int n = snprintf(buf + used, (size_t)(cap - used), "%s%s", used ? "," : "",
                         target_words[i].name);
        if (n < 0)
            return;
        used += n;
    }
}

/* in and out widths of target i (0..6) of m, whole (before TP), and whether
 * the linear is column-parallel (its out split over TP) or row-parallel. */
static void target_dims(const model_t *m, int i, double *in, double *out, bool *col)
{
    double h = m->hidden, qw = model_q_width(m), kvw = model_kv_width(m), f = m->ffn;
    static const bool cols[7] = {true, true, true, false, true, true, false};
    const double ins[7] = {h, h, h, qw, h, h, f}, outs[7] = {qw, kvw, kvw, h, f, f, h};
    *in = ins[i];
    *out = outs[i];
    *col = cols[i];
}

int finetune_check(const finetune_t *f, const model_t *m, err_t *err)
{
    if (f->base_bits != 4 && f->base_bits != 8 && f->base_bits != 16)
        return err_setf(err, ERR_INPUT, NULL, "--base-bits", "use 4, 8 or 16 (got %d)",
                        f->base_bits);
    if (f->mode == FINETUNE_QLORA && f->base_bits == 16)
        return err_setf(err, ERR_INPUT, NULL, "--base-bits",
                        "qlora quantizes the frozen base: use 4 or 8 (or --finetune lora)");
    if (!finetune_frozen(f)) {
        if (f->base_bits != 16)
            return err_setf(err, ERR_INPUT, NULL, "--base-bits",
                            "a quantized base is frozen: use it with --finetune lora or qlora");
        return ERR_OK;
    }
    if (m->hybrid.n_layers_hybrid > 0) /* models/hybrid.h */
        return err_setf(err, ERR_INPUT, NULL, "--finetune",
                        "%s has hybrid layers (Mamba-2, Gated DeltaNet or MLP-only blocks): "
                        "adapters on them are not modelled (full fine-tuning is)",
                        m->name);
    bool gated = m->mlp == MODEL_MLP_SWIGLU;
    for (int i = 0; i < 7; i++) {
        unsigned bit = 1u << i;
        if (!(f->targets & bit))
            continue;
        const char *name = target_words[i].name;
        if (model_is_mla(m) && bit <= FINETUNE_T_V)
            return err_setf(err, ERR_INPUT, NULL, "--lora-targets",
                            "%s has multi-latent attention, no %s projection (target o, or "
                            "the MLP)", m->name, name);
        if (bit == FINETUNE_T_GATE && !gated)
            return err_setf(err, ERR_INPUT, NULL, "--lora-targets",
                            "%s's MLP has no gate (use up,down)", m->name);
        if (bit >= FINETUNE_T_GATE && model_is_moe(m))
            return err_setf(err, ERR_INPUT, NULL, "--lora-targets",
                            "%s has mixture-of-experts MLPs: adapters on routed experts are not "
                            "priced (use --lora-targets q,k,v,o)", m->name);
        double in, out;
        bool col;
        target_dims(m, i, &in, &out, &col);
        double width = in < out ? in : out;
        if (f->rank < 1 || f->rank > width)
            return err_setf(err, ERR_INPUT, NULL, "--lora-rank",
                            "must be 1..%.0f, the narrowest side of %s (got %d)", width, name,
                            f->rank);
    }
    return ERR_OK;
}

double finetune_adapter_params_block(const finetune_t *f, const model_t *m, int tp)
{
    if (!finetune_frozen(f))
        return 0;
    double sum = 0;
    for (int i = 0; i < 7; i++) {
        if (!(f->targets & (1u << i)))
            continue;
        if (i == 4 && m->mlp != MODEL_MLP_SWIGLU)
            continue;
        double in, out;
        bool col;
        target_dims(m, i, &in, &out, &col);
        /* A column-parallel linear's A sees the whole input, its B the
         * rank's output shard; a row-parallel one the other way round */
        sum += col ? f->rank * (in + out / tp) : f->rank * (in / tp + out);
    }
    return sum;
}

double finetune_block_linear_params(const model_t *m, int tp)
{
    double h = m->hidden, qw = model_q_width(m), f = m->ffn;
    double gate = m->mlp == MODEL_MLP_SWIGLU ? 3 : 2;
    if (model_is_moe(m) || model_is_mla(m)) {
        /* blocks of different kinds: their mean, less the norms */
        double sum = 0;
        for (int i = 0; i < m->n_layers; i++) {
            double dense, experts;
            model_block_params_gpu(m, i, tp, 1, tp, &dense, &experts);
            sum += dense + experts - model_norms_per_layer(m) * model_norm_params(m, h);
        }
        return m->n_layers > 0 ? sum / m->n_layers : 0;
    }
    return (h * (qw + model_kv_proj_width(m)) + qw * h + gate * h * f) / tp;
}

double finetune_base_bytes_per_param(const finetune_t *f)
{
    if (!finetune_frozen(f) || f->base_bits == 16)
        return 2;
    return (f->base_bits == 4 ? FINETUNE_NF4_BITS : FINETUNE_INT8_BITS) / 8;
}

double finetune_act_elements_per_token(const finetune_t *f)
{
    if (!finetune_frozen(f))
        return 0;
    int n = 0;
    for (unsigned t = f->targets; t; t &= t - 1)
        n++;
    return (double)n * f->rank;
}

void finetune_notes(const finetune_t *f, bool rank_given, bool targets_given, notes_t *notes)
{
    if (f->mode == FINETUNE_FULL) {
        notes_add(notes, NOTE_ASSUMED, "--finetune",
                  "full fine-tuning priced as pretraining: every parameter trained, bf16 "
                  "weights, fp32 Adam (the trainers' full mode); MFU counts 6N");
        return;
    }
    if (!finetune_frozen(f))
        return;
    char names[64];
    finetune_targets_name(f->targets, names, sizeof names);
    if (!rank_given)
        notes_add(notes, NOTE_ASSUMED, "--lora-rank",
                  "%d (LLaMA-Factory's and Unsloth's default; PEFT's LoraConfig has 8)", f->rank);
    if (!targets_given)
        notes_add(notes, NOTE_ASSUMED, "--lora-targets",
                  "%s (LLaMA-Factory lora_target: all, axolotl lora_target_linear: true; PEFT's "
                  "Llama default is q,v)", names);
    notes_add(notes, NOTE_ASSUMED, "--finetune",
              "%s: frozen %s base (no gradients, no optimizer state, no weight-gradient GEMMs), "
              "rank-%d adapters on %s in fp32 with fp32 gradients and Adam (16 bytes a parameter)",
              finetune_mode_name(f->mode),
              f->base_bits == 4 ? "NF4 (4.127 bits, double quantization)"
                                : f->base_bits == 8 ? "int8" : "bf16",
              f->rank, names);
    if (f->base_bits < 16)
        notes_add(notes, NOTE_ASSUMED, "--base-bits",
                  "%d-bit base dequantized to bf16 before each GEMM, forward and backward, "
                  "priced as a memory-bound pass (bitsandbytes' kernels are slower: Qwen-7B's "
                  "published Q-LoRA step is 7.0 s where 4.6 s is priced)",
                  f->base_bits);
    notes_add(notes, NOTE_ASSUMED, "MFU",
              "counts the work a frozen-base step runs: base linears 4N (forward and input "
              "gradient), attention 3x its forward, adapters 6 x theirs; HF Trainer's total_flos "
              "counts 6N over all parameters");
}
