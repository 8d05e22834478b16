/* finetune: what fine-tuning changes in a training step's memory and work.
 *
 * Pretraining (FINETUNE_NONE) and full fine-tuning train every parameter
 * the same way; the trainers (TRL's SFTTrainer, LLaMA-Factory, axolotl,
 * ms-swift) run full fine-tuning as pretraining with the same optimizer,
 * so scaleplan prices it as such. LoRA (Hu et al. 2021) freezes the base:
 * no base gradients, no base optimizer state, no weight-gradient GEMMs; a
 * pair of adapters A [r x in] and B [out x r] per targeted linear is
 * trained instead. QLoRA (Dettmers et al. 2023) also stores the frozen base
 * linears in 4-bit NF4 (or 8-bit) and dequantizes each to bf16 before its
 * GEMM, forward and backward.
 *
 * Adapters are kept in fp32 with fp32 gradients and Adam moments (PEFT's
 * default autocast_adapter_dtype=True casts bf16 adapters up to fp32), 16
 * bytes a parameter. Which modules are adapted is a FINETUNE_T_* mask.
 */
#ifndef SCALEPLAN_MODELS_FINETUNE_H
#define SCALEPLAN_MODELS_FINETUNE_H

#include <stdbool.h>

#include "common/error.h"
#include "common/notes.h"
#include "models/model.h"

typedef enum {
    FINETUNE_NONE = 0, /* pretraining: every parameter trained */
    FINETUNE_LORA = 1, /* frozen 16-bit base (or --base-bits 8/4), adapters */
    FINETUNE_QLORA = 2, /* frozen 4-bit NF4 base (or 8-bit), adapters */
    FINETUNE_FULL = 3, /* every parameter trained, as pretraining */
    FINETUNE_COUNT
} finetune_mode_t;

/* Targeted linears (PEFT's target_modules, Llama names). */
enum {
    FINETUNE_T_Q = 1u << 0,    /* q_proj */
    FINETUNE_T_K = 1u << 1,    /* k_proj */
    FINETUNE_T_V = 1u << 2,    /* v_proj */
    FINETUNE_T_O = 1u << 3,    /* o_proj */
    FINETUNE_T_GATE = 1u << 4, /* gate_proj (gated MLPs only) */
    FINETUNE_T_UP = 1u << 5,   /* up_proj (a plain MLP's first, fc1) */
    FINETUNE_T_DOWN = 1u << 6, /* down_proj (a plain MLP's second, fc2) */
    FINETUNE_T_ALL = (1u << 7) - 1
};

/* The default rank: PEFT LoraConfig r=8, but LLaMA-Factory's lora_rank,
 * axolotl's examples and Unsloth's notebooks use 16; ASSUMED and said. */
#define FINETUNE_DEFAULT_RANK 16

/* NF4 with double quantization: 4 bits a weight plus 8/64 + 32/(64 x 256)
 * = 0.127 bits of quantization constants (Dettmers et al. 2023, sec. 3,
 * "Double Quantization"): 4.127 bits = 0.516 bytes a parameter. */
#define FINETUNE_NF4_BITS 4.127
/* LLM.int8 (Dettmers et al. 2022): 1 byte a weight plus one fp32 absmax
 * per output row, about 0 for rows thousands wide; counted as 8 bits. */
#define FINETUNE_INT8_BITS 8.0

typedef struct {
    finetune_mode_t mode;
    int rank;          /* adapters' rank r (LoRA, QLoRA) */
    unsigned targets;  /* FINETUNE_T_* mask (LoRA, QLoRA) */
    int base_bits;     /* frozen base linears' bits: 16, 8 or 4 */
} finetune_t;

/* Pretraining: mode NONE, rank 16, every target, 16-bit base. */
void finetune_defaults(finetune_t *f);

/* Whether the base is frozen (LoRA or QLoRA). */
bool finetune_frozen(const finetune_t *f);

/* "none", "lora", "qlora", "full". */
const char *finetune_mode_name(finetune_mode_t m);

/* Parses "lora|qlora|full" (also "none"); ERR_INPUT naming --finetune. */
int finetune_parse_mode(const char *text, finetune_mode_t *out, err_t *err);

/* Parses a list of q,k,v,o,gate,up,down (PEFT's q_proj, ..., down_proj
 * and "all", "attention", "mlp" too; commas or spaces) into a mask;
 * ERR_INPUT naming --lora-targets and the unknown word. */
int finetune_parse_targets(const char *text, unsigned *out, err_t *err);

/* "q,k,v,o,gate,up,down": the mask's names, into buf of cap bytes. */
void finetune_targets_name(unsigned targets, char *buf, int cap);

/* Checks f against m: rank 1..min(hidden, every targeted width), every
 * target a module m has (no q/k/v in multi-latent attention, no gate in
 * a plain MLP, no MLP adapters on mixture-of-experts blocks: routed
 * experts' adapters are not priced), base bits 4, 8 or 16 (QLoRA: 4 or 8;
 * full fine-tuning: 16). ERR_INPUT naming the flag. */
int finetune_check(const finetune_t *f, const model_t *m, err_t *err);

/* Adapter parameters of one block on one GPU of a TP group of tp:
 * r x (in + out) per target, the TP-split side of each divided by tp
 * (A of a column-parallel linear and B of a row-parallel one replicated).
 * 0 when the base is not frozen. */
double finetune_adapter_params_block(const finetune_t *f, const model_t *m, int tp);

/* Weights of one block's linears on one GPU (what QLoRA quantizes; norms
 * and biases stay 16-bit): q, k, v, o and the MLP's matrices over tp. */
double finetune_block_linear_params(const model_t *m, int tp);

/* Bytes a frozen base linear's parameter takes: 2, 1 or 4.127 / 8. */
double finetune_base_bytes_per_param(const finetune_t *f);

/* Elements one token keeps for the backward per block from its adapters:
 * the rank-r intermediate x A of each target. */
double finetune_act_elements_per_token(const finetune_t *f);

/* Adds the notes a run with f prints: the rank and targets when assumed
 * (rank_given, targets_given false), what MFU counts, what is modeled. */
void finetune_notes(const finetune_t *f, bool rank_given, bool targets_given, notes_t *notes);

#endif
