/* Tests of models/hfconfig's reading by structure and of the 2025-26
 * configs (issue 37 item 1, issue 36 "Models"): every config under
 * tests/fixtures/real/configs read with the library call model_load and
 * checked against the total and active counts its model card publishes
 * (tests/fixtures/real/configs/SOURCES.md), the catalog entries built from
 * them checked the same way, the layer kinds scaleplan cannot price refused
 * naming the key, and --assume-architecture refused where the named reader
 * would drop experts or MLA. */
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "common/json.h"
#include "models/flops.h"
#include "models/hfconfig.h"
#include "models/model.h"
#include "tests/real_corpus.h"
#include "tests/testing.h"

/* tests/fixtures/real/configs/DIR/config.json into path (cap bytes). */
static const char *real(const char *dir, char *path, size_t cap)
{
    snprintf(path, cap, "%sreal/configs/%s/config.json", fixture(""), dir);
    return path;
}

/* How a publisher counts "active" parameters. */
enum {
    ACT_DENSE = 0,    /* dense: active = total */
    ACT_ALL = 1,      /* embeddings and output head included (Qwen, Llama 4) */
    ACT_NO_INPUT = 2, /* input embedding excluded (DeepSeek, Kimi) */
    ACT_NO_EMB = 3,   /* both excluded (GLM, MiniMax) */
    ACT_COARSE = 4    /* MoE whose card rounds the active count to one digit
                         ("A3B") under no stated convention: total checked,
                         active not (SOURCES.md gives scaleplan's) */
};

typedef struct {
    const char *dir;     /* fixture directory */
    const char *catalog; /* the catalog entry built from it, or NULL */
    double pub_total, tol_total;   /* the card's figure and its printed precision */
    double pub_active, tol_active;
    int conv;
    bool with_mtp; /* the published total includes the MTP modules */
} real_row_t;

/* Published figures: tests/fixtures/real/configs/SOURCES.md names each
 * card. The tolerance is 3% of the figure or the card's rounding (half its
 * last printed digit, e.g. "1T" -> 0.05T, "355B" -> 0.5B), whichever is
 * wider. */
static const real_row_t ROWS[] = {
    {"Kimi-K2-Instruct", "kimi-k2", 1e12, 0.03e12, 32e9, 0.96e9, ACT_NO_INPUT, false},
    {"DeepSeek-V3.2-Exp", "deepseek-v3.2", 685e9, 20.55e9, 37e9, 1.11e9, ACT_NO_INPUT, true},
    {"GLM-5", "glm-5", 744e9, 22.32e9, 40e9, 1.2e9, ACT_NO_EMB, false},
    {"GLM-4.5", "glm-4.5", 355e9, 10.65e9, 32e9, 0.96e9, ACT_NO_EMB, false},
    {"GLM-4.5-Air", "glm-4.5-air", 106e9, 3.18e9, 12e9, 0.5e9, ACT_NO_EMB, false},
    {"MiniMax-M2", "minimax-m2", 230e9, 6.9e9, 10e9, 0.5e9, ACT_NO_EMB, false},
    {"Llama-4-Maverick-17B-128E", "llama4-maverick", 400e9, 12e9, 17e9, 0.51e9, ACT_ALL, false},
    {"Qwen3-Coder-480B-A35B-Instruct", NULL, 480e9, 14.4e9, 35e9, 1.05e9, ACT_ALL, false},
    {"Qwen3-0.6B", NULL, 0.6e9, 0.05e9, 0, 0, ACT_DENSE, false},
    {"Qwen3-1.7B", NULL, 1.7e9, 0.051e9, 0, 0, ACT_DENSE, false},
    {"Qwen3-4B", NULL, 4.0e9, 0.12e9, 0, 0, ACT_DENSE, false},
    {"Qwen3-14B", NULL, 14.8e9, 0.444e9, 0, 0, ACT_DENSE, false},
    {"Qwen3-32B", NULL, 32.8e9, 0.984e9, 0, 0, ACT_DENSE, false},
    {"Llama-3.2-1B", NULL, 1.23e9, 0.0369e9, 0, 0, ACT_DENSE, false},
    {"Llama-3.2-3B", NULL, 3.21e9, 0.0963e9, 0, 0, ACT_DENSE, false},
    {"Llama-3.3-70B-Instruct", NULL, 70.6e9, 2.118e9, 0, 0, ACT_DENSE, false},
    {"Mistral-Small-24B-Base-2501", NULL, 24e9, 0.72e9, 0, 0, ACT_DENSE, false},
    {"Mistral-Nemo-Base-2407", NULL, 12e9, 0.5e9, 0, 0, ACT_DENSE, false},
    {"Phi-4-mini-instruct", NULL, 3.8e9, 0.114e9, 0, 0, ACT_DENSE, false},
    {"OLMo-2-0325-32B", NULL, 32e9, 0.96e9, 0, 0, ACT_DENSE, false},
    {"SmolLM3-3B", NULL, 3e9, 0.5e9, 0, 0, ACT_DENSE, false},
    {"MiMo-7B-Base", NULL, 7.83e9, 0.235e9, 0, 0, ACT_DENSE, true},
    /* Gemma 3 report: 1,416M embedding + 25,600M non-embedding */
    {"gemma-3-27b-pt", NULL, 27.016e9, 0.81e9, 0, 0, ACT_DENSE, false},
    /* Copies of the Hub configs in mlc-ai/mlc-llm's model_preset.py (SOURCES.md) */
    {"Llama-2-7b", NULL, 7e9, 0.5e9, 0, 0, ACT_DENSE, false},         /* Llama 2 paper: 7B */
    {"Llama-2-13b-hf", NULL, 13e9, 0.5e9, 0, 0, ACT_DENSE, false},    /* 13B */
    {"Llama-2-70b", NULL, 70e9, 2.1e9, 0, 0, ACT_DENSE, false},       /* 70B */
    {"CodeLlama-7b-hf", NULL, 7e9, 0.5e9, 0, 0, ACT_DENSE, false},    /* Code Llama paper */
    {"CodeLlama-13b", NULL, 13e9, 0.5e9, 0, 0, ACT_DENSE, false},
    {"CodeLlama-34b", NULL, 34e9, 1.02e9, 0, 0, ACT_DENSE, false},
    {"TinyLlama-1.1B-Chat-v0.4", NULL, 1.1e9, 0.05e9, 0, 0, ACT_DENSE, false},
    {"TinyLlama-1.1B-Chat-v1.0", NULL, 1.1e9, 0.05e9, 0, 0, ACT_DENSE, false},
    {"Mistral-7B-v0.1", NULL, 7.3e9, 0.219e9, 0, 0, ACT_DENSE, false},  /* announcement: 7.3B */
    {"Mistral-7B-v0.3", NULL, 7.25e9, 0.2175e9, 0, 0, ACT_DENSE, false}, /* HF page 7.25B */
    /* 3.4B language model (+0.4B vision encoder, not modelled) */
    {"Ministral-3-3B-2512", NULL, 3.4e9, 0.102e9, 0, 0, ACT_DENSE, false},
    {"Mixtral-8x7B-v0.1", NULL, 46.7e9, 1.401e9, 12.9e9, 0.387e9, ACT_ALL, false},
    {"gpt2-medium", NULL, 355e6, 10.65e6, 0, 0, ACT_DENSE, false},
    {"RedPajama-INCITE-3B-v1", NULL, 2.8e9, 0.084e9, 0, 0, ACT_DENSE, false},
    {"Phi-3.5-mini-instruct", NULL, 3.8e9, 0.114e9, 0, 0, ACT_DENSE, false},
    {"Qwen-1_8B", NULL, 1.8e9, 0.054e9, 0, 0, ACT_DENSE, false},
    {"Qwen1.5-MoE-A2.7B", NULL, 14.3e9, 0.429e9, 2.7e9, 0.081e9, ACT_ALL, false},
    {"DeepSeek-V2-Lite-mlc", NULL, 15.7e9, 0.471e9, 2.4e9, 0.072e9, ACT_NO_INPUT, false},
    {"deepseek-moe-16b", NULL, 16.4e9, 0.492e9, 2.8e9, 0.084e9, ACT_ALL, false},
    {"stablelm-3b-4e1t", NULL, 2.795e9, 0.084e9, 0, 0, ACT_DENSE, false},
    {"stablelm-2-zephyr-1_6b", NULL, 1.6e9, 0.05e9, 0, 0, ACT_DENSE, false},
    {"internlm-7b", NULL, 7e9, 0.5e9, 0, 0, ACT_DENSE, false},
    {"internlm2-7b", NULL, 7.74e9, 0.232e9, 0, 0, ACT_DENSE, false},   /* HF page 7.74B */
    {"internlm2_5-7b", NULL, 7.74e9, 0.232e9, 0, 0, ACT_DENSE, false},
    /* Gemma report: 524,550,144 embedding + 1,981,884,416 non-embedding */
    {"gemma-2b", NULL, 2.506e9, 0.075e9, 0, 0, ACT_DENSE, false},
    /* Gemma 2 report, Table 1: embedding + non-embedding parameters */
    {"gemma-2-2b", NULL, 2.614e9, 0.078e9, 0, 0, ACT_DENSE, false},
    {"gemma-2-2b-jpn-it", NULL, 2.614e9, 0.078e9, 0, 0, ACT_DENSE, false},
    {"gemma-2-9b", NULL, 9.242e9, 0.277e9, 0, 0, ACT_DENSE, false},
    {"gemma-2-27b", NULL, 27.228e9, 0.817e9, 0, 0, ACT_DENSE, false},
    /* Gemma 3 report, Table 1: 302M embedding + 698M non-embedding */
    {"gemma-3-1b-it", NULL, 1.0e9, 0.03e9, 0, 0, ACT_DENSE, false},
    {"Llama-3.1-8B", NULL, 8.03e9, 0.241e9, 0, 0, ACT_DENSE, false},   /* HF page 8.03B */
    {"Llama-3.1-70B", NULL, 70.6e9, 2.118e9, 0, 0, ACT_DENSE, false},  /* HF page 70.6B */
    {"Qwen2-0.5B", NULL, 0.494e9, 0.0148e9, 0, 0, ACT_DENSE, false},   /* HF pages */
    {"Qwen2-1.5B", NULL, 1.54e9, 0.0462e9, 0, 0, ACT_DENSE, false},
    {"Qwen2.5-3B", NULL, 3.09e9, 0.0927e9, 0, 0, ACT_DENSE, false},    /* card: 3.09B */
    {"Qwen2-7B", NULL, 7.62e9, 0.229e9, 0, 0, ACT_DENSE, false},
    {"starcoder2-7b-mlc", NULL, 7e9, 0.5e9, 0, 0, ACT_DENSE, false},
    {"SmolLM-1.7B", NULL, 1.7e9, 0.051e9, 0, 0, ACT_DENSE, false},
    {"SmolLM-360M", NULL, 360e6, 10.8e6, 0, 0, ACT_DENSE, false},
    {"SmolLM-135M", NULL, 135e6, 4.05e6, 0, 0, ACT_DENSE, false},
    {"SmolLM2-360M", NULL, 360e6, 10.8e6, 0, 0, ACT_DENSE, false},
    {"SmolLM2-135M", NULL, 135e6, 4.05e6, 0, 0, ACT_DENSE, false},
    {"aya-23-8B", NULL, 8e9, 0.5e9, 0, 0, ACT_DENSE, false},
    {"OLMo-2-1124-7B-mlc", NULL, 7.3e9, 0.219e9, 0, 0, ACT_DENSE, false}, /* HF page 7.3B */
    {"OLMo-2-1124-13B", NULL, 13.7e9, 0.411e9, 0, 0, ACT_DENSE, false},  /* HF page 13.7B */
    /* hybrid layer patterns (models/hybrid.h): Nemotron-H paper and cards,
     * Qwen3-Next and Qwen3.5 cards */
    {"Nemotron-H-8B-Base-8K", NULL, 8e9, 0.5e9, 0, 0, ACT_DENSE, false},
    {"Nemotron-H-47B-Base-8K", NULL, 47e9, 1.41e9, 0, 0, ACT_DENSE, false},
    {"Nemotron-H-56B-Base-8K", NULL, 56e9, 1.68e9, 0, 0, ACT_DENSE, false},
    {"Qwen3-Next-80B-A3B-Instruct", NULL, 80e9, 2.4e9, 3e9, 0.5e9, ACT_COARSE, false},
    {"Qwen3.5-35B-A3B", NULL, 35e9, 1.05e9, 3e9, 0.5e9, ACT_COARSE, false},
    /* IBM's card: 32B total, 9B active (Mamba-2 + MoE in every block) */
    {"granite-4.0-h-small", NULL, 32e9, 0.96e9, 9e9, 0.5e9, ACT_ALL, false},
    /* AI21's card: 52B total, 12B active (Mamba-1 + attention, MoE every
     * other block) */
    {"AI21-Jamba-1.5-Mini", NULL, 52e9, 1.56e9, 12e9, 0.5e9, ACT_ALL, false},
    {"Kimi-Linear-48B-A3B-Instruct", NULL, 48e9, 1.44e9, 3e9, 0.5e9, ACT_NO_INPUT, false},
    /* MiniMax-01 card: 456B total, 45.9B activated (lightning + softmax
     * attention, MoE) */
    {"MiniMax-M1", NULL, 456e9, 13.68e9, 45.9e9, 1.377e9, ACT_NO_EMB, false},
    /* Nemotron-NAS block_configs (models/hfconfig_nas.c): the cards' 49B
     * (HF page 49.9B) and 253B */
    {"Llama-3_3-Nemotron-Super-49B-v1", NULL, 49.9e9, 1.497e9, 0, 0, ACT_DENSE, false},
    {"Llama-3_1-Nemotron-Ultra-253B-v1", NULL, 253e9, 7.59e9, 0, 0, ACT_DENSE, false},
    /* Hub config copies in ai-dynamo/aiconfigurator (SOURCES.md); the
     * figures are the model cards' (or, where the row says so, the name's) */
    {"Qwen3-8B", NULL, 8.2e9, 0.246e9, 0, 0, ACT_DENSE, false},
    {"Qwen3-32B-aic", NULL, 32.8e9, 0.984e9, 0, 0, ACT_DENSE, false},
    {"Qwen3-32B-FP8", NULL, 32.8e9, 0.984e9, 0, 0, ACT_DENSE, false},
    {"Qwen3-235B-A22B", NULL, 235e9, 7.05e9, 22e9, 0.66e9, ACT_ALL, false},
    {"Qwen3-235B-A22B-FP8", NULL, 235e9, 7.05e9, 22e9, 0.66e9, ACT_ALL, false},
    {"Qwen3-30B-A3B", NULL, 30.5e9, 0.915e9, 3.3e9, 0.099e9, ACT_ALL, false},
    {"Qwen3-30B-A3B-FP8", NULL, 30.5e9, 0.915e9, 3.3e9, 0.099e9, ACT_ALL, false},
    {"Meta-Llama-3.1-405B", NULL, 405e9, 12.15e9, 0, 0, ACT_DENSE, false},
    {"Llama-3.1-70B-Instruct-FP8", NULL, 70.6e9, 2.118e9, 0, 0, ACT_DENSE, false},
    {"Llama-4-Scout-17B-16E-Instruct", NULL, 109e9, 3.27e9, 17e9, 0.51e9, ACT_ALL, false},
    {"Llama-4-Maverick-17B-128E-Instruct", NULL, 400e9, 12e9, 17e9, 0.51e9, ACT_ALL, false},
    {"Mixtral-8x22B-v0.1", NULL, 141e9, 4.23e9, 39e9, 1.17e9, ACT_ALL, false},
    /* gpt-oss model card, Table 1: total and active parameters (the
     * active count leaves the input embedding out) */
    {"gpt-oss-120b", NULL, 116.83e9, 3.505e9, 5.13e9, 0.154e9, ACT_NO_INPUT, false},
    {"gpt-oss-20b", NULL, 20.91e9, 0.627e9, 3.61e9, 0.108e9, ACT_NO_INPUT, false},
    {"DeepSeek-V3", NULL, 671e9, 20.13e9, 37e9, 1.11e9, ACT_NO_INPUT, false},
    {"DeepSeek-R1", NULL, 671e9, 20.13e9, 37e9, 1.11e9, ACT_NO_INPUT, false},
    {"DeepSeek-V3.2", NULL, 685e9, 20.55e9, 37e9, 1.11e9, ACT_NO_INPUT, true},
    {"Kimi-K2.5", NULL, 1e12, 0.03e12, 32e9, 0.96e9, ACT_NO_INPUT, false},
    {"Kimi-K2-Instruct-aic", NULL, 1e12, 0.03e12, 32e9, 0.96e9, ACT_NO_INPUT, false},
    {"GLM-5-aic", NULL, 744e9, 22.32e9, 40e9, 1.2e9, ACT_NO_EMB, false},
    {"Qwen3.5-397B-A17B", NULL, 397e9, 11.91e9, 17e9, 0.51e9, ACT_ALL, false},
    {"Qwen3.5-122B-A10B", NULL, 122e9, 3.66e9, 10e9, 0.5e9, ACT_ALL, false},
    {"Qwen3.5-27B", NULL, 27e9, 0.81e9, 0, 0, ACT_DENSE, false},
    {"Qwen3-VL-235B-A22B-Instruct", NULL, 235e9, 7.05e9, 22e9, 0.66e9, ACT_ALL, false},
    {"Qwen3-VL-30B-A3B-Instruct", NULL, 30e9, 0.9e9, 3e9, 0.5e9, ACT_COARSE, false},
    /* card: 31.6B total, 3.6B active with the embeddings */
    {"NVIDIA-Nemotron-3-Nano-30B-A3B-BF16", NULL, 31.6e9, 0.948e9, 3.6e9, 0.108e9, ACT_ALL,
     false},
    /* LatentMoE (moe_latent_size); the name's 120B total, 12B active under
     * no stated convention (scaleplan: 12.8B with the embeddings) */
    {"NVIDIA-Nemotron-3-Super-120B-A12B-FP8", NULL, 120e9, 3.6e9, 12e9, 0.5e9, ACT_COARSE,
     false},
    /* layers_block_type lists: Ultra the name's 550B-A55B; Lightning has
     * Nano's dimensions (hidden 2688, 52 layers, 128 experts of 1856, top
     * 6), so Nano's card's 31.6B (its name says 30B-A3B) */
    {"NVIDIA-Nemotron-3-Ultra-550B-A55B-BF16", NULL, 550e9, 16.5e9, 55e9, 1.65e9, ACT_COARSE,
     false},
    {"NVIDIA-Nemotron-3.5-Lightning-30B-A3B-NVFP4", NULL, 31.6e9, 0.948e9, 3e9, 0.5e9,
     ACT_COARSE, false},
    /* Hub files aiconfigurator kept at an earlier commit (SOURCES.md) */
    {"Qwen2.5-1.5B", NULL, 1.54e9, 0.0462e9, 0, 0, ACT_DENSE, false},
    {"Qwen2.5-7B", NULL, 7.61e9, 0.228e9, 0, 0, ACT_DENSE, false},
    {"Qwen2.5-32B", NULL, 32.5e9, 0.975e9, 0, 0, ACT_DENSE, false},
    {"Qwen2.5-72B", NULL, 72.7e9, 2.181e9, 0, 0, ACT_DENSE, false},
    {"Qwen3-Next-80B-A3B-Thinking", NULL, 80e9, 2.4e9, 3e9, 0.5e9, ACT_COARSE, false},
    {"Qwen3-VL-235B-A22B-Thinking", NULL, 235e9, 7.05e9, 22e9, 0.66e9, ACT_ALL, false},
    {"DeepSeek-R1-Distill-Qwen-32B", NULL, 32.8e9, 0.984e9, 0, 0, ACT_DENSE, false},
    {"DeepSeek-V3.1", NULL, 671e9, 20.13e9, 37e9, 1.11e9, ACT_NO_INPUT, false},
    {"Llama-2-7b-hf", NULL, 7e9, 0.5e9, 0, 0, ACT_DENSE, false},
    {"Llama-2-13b-hf-aic", NULL, 13e9, 0.5e9, 0, 0, ACT_DENSE, false},
    {"Llama-2-70b-hf", NULL, 70e9, 2.1e9, 0, 0, ACT_DENSE, false},
    {"Kimi-K2-Thinking", NULL, 1e12, 0.03e12, 32e9, 0.96e9, ACT_NO_INPUT, false},
    {"DeepSeek-V3-0324-NVFP4", NULL, 671e9, 20.13e9, 37e9, 1.11e9, ACT_NO_INPUT, false},
    {"Qwen3-30B-A3B-NVFP4", NULL, 30.5e9, 0.915e9, 3.3e9, 0.099e9, ACT_ALL, false},
    /* more Hub files from the same copies: the same models' other checkpoints
     * (FP8, NVFP4) and Hub files of models rebuilt above (-aic) */
    {"Qwen3-0.6B-aic", NULL, 0.6e9, 0.05e9, 0, 0, ACT_DENSE, false},
    {"Qwen3-1.7B-aic", NULL, 1.7e9, 0.051e9, 0, 0, ACT_DENSE, false},
    {"Meta-Llama-3.1-8B", NULL, 8.03e9, 0.241e9, 0, 0, ACT_DENSE, false},
    {"Meta-Llama-3.1-70B", NULL, 70.6e9, 2.118e9, 0, 0, ACT_DENSE, false},
    {"Mixtral-8x7B-v0.1-aic", NULL, 46.7e9, 1.401e9, 12.9e9, 0.387e9, ACT_ALL, false},
    {"Llama-3_3-Nemotron-Super-49B-v1-aic", NULL, 49.9e9, 1.497e9, 0, 0, ACT_DENSE, false},
    {"Nemotron-H-56B-Base-8K-aic", NULL, 56e9, 1.68e9, 0, 0, ACT_DENSE, false},
    {"MiMo-7B-Base-aic", NULL, 7.83e9, 0.235e9, 0, 0, ACT_DENSE, true},
    {"Qwen3-Coder-480B-A35B-Instruct-aic", NULL, 480e9, 14.4e9, 35e9, 1.05e9, ACT_ALL, false},
    {"DeepSeek-V3.1-NVFP4", NULL, 671e9, 20.13e9, 37e9, 1.11e9, ACT_NO_INPUT, false},
    {"DeepSeek-V3.2-NVFP4", NULL, 685e9, 20.55e9, 37e9, 1.11e9, ACT_NO_INPUT, true},
    {"Qwen3-235B-A22B-NVFP4", NULL, 235e9, 7.05e9, 22e9, 0.66e9, ACT_ALL, false},
    {"GLM-5-FP8", NULL, 744e9, 22.32e9, 40e9, 1.2e9, ACT_NO_EMB, false},
    {"Kimi-K2.5-NVFP4", NULL, 1e12, 0.03e12, 32e9, 0.96e9, ACT_NO_INPUT, false},
    {"Qwen3.5-397B-A17B-NVFP4", NULL, 397e9, 11.91e9, 17e9, 0.51e9, ACT_ALL, false},
    {"Qwen3.5-122B-A10B-NVFP4", NULL, 122e9, 3.66e9, 10e9, 0.5e9, ACT_ALL, false},
    {"NVIDIA-Nemotron-3-Nano-30B-A3B-NVFP4", NULL, 31.6e9, 0.948e9, 3.6e9, 0.108e9, ACT_ALL,
     false},
    {"NVIDIA-Nemotron-3-Super-120B-A12B-NVFP4", NULL, 120e9, 3.6e9, 12e9, 0.5e9, ACT_COARSE,
     false},
    {"NVIDIA-Nemotron-3-Ultra-550B-A55B-FP8", NULL, 550e9, 16.5e9, 55e9, 1.65e9, ACT_COARSE,
     false},
    {"NVIDIA-Nemotron-3-Ultra-550B-A55B-NVFP4", NULL, 550e9, 16.5e9, 55e9, 1.65e9, ACT_COARSE,
     false},
    {"Qwen3-32B-FP8-Static-PerTensor", NULL, 32.8e9, 0.984e9, 0, 0, ACT_DENSE, false},
    {"Qwen3-VL-4B-Instruct", NULL, 4e9, 0.12e9, 0, 0, ACT_DENSE, false},
    {"Qwen3-VL-8B-Instruct", NULL, 8e9, 0.5e9, 0, 0, ACT_DENSE, false},
    {"Qwen3-VL-32B-Instruct", NULL, 32e9, 0.96e9, 0, 0, ACT_DENSE, false},
    {"Qwen3-VL-32B-Thinking", NULL, 32e9, 0.96e9, 0, 0, ACT_DENSE, false},
    /* Gemma 4 (model cards: 30.7B; 25.2B total, 3.8B active, embeddings
     * included); the exact module sums are pinned in tests/test_gemma4.c */
    {"Gemma-4-31B-it", "gemma-4-31b", 30.7e9, 0.921e9, 0, 0, ACT_DENSE, false},
    {"gemma-4-26B-A4B", "gemma-4-26b-a4b", 25.2e9, 0.756e9, 3.8e9, 0.114e9, ACT_ALL, false},
    /* poolside's Laguna XS.2 (33B total, 3B activated); its exact module
     * sum is pinned in tests/test_gemma4.c */
    {"Laguna-XS.2-FP8", "laguna-xs.2", 33e9, 0.99e9, 3e9, 0.5e9, ACT_ALL, false},
};

/* The published basis of p's active count under convention conv. */
static double active_basis(const model_params_t *p, int conv)
{
    switch (conv) {
    case ACT_NO_INPUT:
        return p->active - p->word_embedding;
    case ACT_NO_EMB:
        return p->active - p->word_embedding - p->output_head;
    default:
        return p->active;
    }
}

static void check_row(const real_row_t *r, const model_t *m, const char *what)
{
    model_params_t p;
    model_params(m, &p);
    char label[160];
    snprintf(label, sizeof label, "%s total", what);
    double total = p.total + (r->with_mtp ? p.mtp : 0);
    check_rel_at(total, r->pub_total, r->tol_total / r->pub_total, label, __FILE__, __LINE__);
    snprintf(label, sizeof label, "%s active", what);
    if (r->conv == ACT_DENSE) {
        CU_ASSERT_FALSE(model_is_moe(m));
        return;
    }
    CU_ASSERT_TRUE(model_is_moe(m));
    if (r->conv == ACT_COARSE)
        return;
    check_rel_at(active_basis(&p, r->conv), r->pub_active, r->tol_active / r->pub_active, label,
                 __FILE__, __LINE__);
}

/* Real configs scaleplan must refuse: the key the one-line refusal names
 * (layers it cannot price, or a block shape reading by structure cannot
 * count; tests/fixtures/real/configs/SOURCES.md). */
static const struct {
    const char *dir, *key;
} REFUSED[] = {
    /* types scaleplan neither knows by name nor can read by structure */
    {"gpt-j-6b", "num_hidden_layers"},
    {"gpt_bigcode-santacoder", "num_hidden_layers"},
    {"phi-1_5", "num_hidden_layers"},
    {"phi-2", "num_hidden_layers"},
    {"chatglm3-6b", "num_hidden_layers"},
    /* 2026 Hub configs (ai-dynamo/aiconfigurator copies) with blocks reading
     * by structure cannot count, or an activation scaleplan does not price */
    {"MiMo-V2-Flash", "swa_num_key_value_heads"},
    {"MiniMax-M3", "dense_intermediate_size"},
    {"Kimi-K3", "hidden_act"},
    {"DeepSeek-V4-Flash", "compress_ratios"},
};

/* LatentMoE (moe_latent_size) on Nemotron 3 Super: against the same file
 * without the key, each of its 40 MoE blocks loses 512 routed experts'
 * 2 x 2688 x (4096 - 1024) weights (squared-ReLU experts: up and down) and
 * gains the two projections 2 x 4096 x 1024: 40 x (8,455,716,864 -
 * 8,388,608) = 337,893,130,240 fewer parameters (121B against the card's
 * 120B, where the expert-at-hidden reading gave 458.6B); the experts'
 * GEMM FLOPs a token scale by 1024 / 4096. */
static void test_latent_moe(void)
{
    char path[512];
    cJSON *root = NULL;
    err_t e;
    real("NVIDIA-Nemotron-3-Super-120B-A12B-FP8", path, sizeof path);
    CU_ASSERT_EQUAL_FATAL(json_parse_file(path, &root, &e), 0);
    model_t lat, full;
    CU_ASSERT_EQUAL_FATAL(model_from_config(root, path, "lat", &lat, &e), 0);
    cJSON_DeleteItemFromObjectCaseSensitive(root, "moe_latent_size");
    CU_ASSERT_EQUAL_FATAL(model_from_config(root, path, "full", &full, &e), 0);
    cJSON_Delete(root);
    model_params_t a, b;
    model_params(&lat, &a);
    model_params(&full, &b);
    CU_ASSERT_EQUAL(lat.moe.latent, 1024);
    CHECK_REL(b.total - a.total, 337893130240.0, 0);
    model_flops_t fa, fb;
    model_flops(&lat, 4096, &fa);
    model_flops(&full, 4096, &fb);
    CHECK_REL(fa.fwd_per_token[FLOP_EXPERT_IN], fb.fwd_per_token[FLOP_EXPERT_IN] / 4, 1e-12);
    CHECK_REL(fa.fwd_per_token[FLOP_EXPERT_OUT], fb.fwd_per_token[FLOP_EXPERT_OUT] / 4, 1e-12);
}

/* Whether m's counts match row r within its tolerances (no assertion:
 * the corpus report counts with it). */
static bool row_right(const real_row_t *r, const model_t *m)
{
    model_params_t p;
    model_params(m, &p);
    double total = p.total + (r->with_mtp ? p.mtp : 0);
    if (!(fabs(total - r->pub_total) <= r->tol_total))
        return false;
    if (r->conv == ACT_DENSE)
        return !model_is_moe(m);
    if (r->conv == ACT_COARSE)
        return model_is_moe(m);
    return model_is_moe(m) && fabs(active_basis(&p, r->conv) - r->pub_active) <= r->tol_active;
}

/* The --assume-architecture NAME a refusal suggests, copied into name;
 * false when it suggests none. */
static bool suggested_assume(const char *msg, char *name, size_t cap)
{
    const char *s = strstr(msg, "--assume-architecture ");
    if (!s)
        return false;
    s += strlen("--assume-architecture ");
    size_t n = strspn(s, "abcdefghijklmnopqrstuvwxyz0123456789_-.");
    if (n == 0 || n >= cap)
        return false;
    memcpy(name, s, n);
    name[n] = '\0';
    return true;
}

/* One refused config: one line naming the key; where the refusal suggests
 * a reading, that reading loads (counted in t). */
static bool refusal_right(const char *dir, const char *key, real_tally_t *t)
{
    char path[512], assume[64];
    model_t m;
    err_t e;
    int rc = model_load(real(dir, path, sizeof path), &m, &e);
    bool ok = rc == ERR_INPUT && strstr(e.msg, key) && !strchr(e.msg, '\n');
    if (ok && suggested_assume(e.msg, assume, sizeof assume)) {
        model_load_opts_t o = {.assume_architecture = assume};
        err_t e2;
        t->fixes_tried++;
        bool fixed = model_load_ex(path, &o, &m, NULL, &e2) == ERR_OK;
        t->fixes_worked += fixed;
        if (!fixed)
            fprintf(stderr, "\n  %s: the suggested --assume-architecture %s fails: %s", dir,
                    assume, e2.msg);
        ok = fixed;
    }
    if (!ok)
        fprintf(stderr, "\n  %s: want a one-line refusal naming %s, got rc %d: %s", dir, key, rc,
                rc ? e.msg : "(read)");
    return ok;
}

/* One directory of real/configs against its row (read or refused). */
static void tally_dir(const char *dir, real_tally_t *t)
{
    t->files++;
    for (size_t i = 0; i < sizeof ROWS / sizeof ROWS[0]; i++) {
        if (strcmp(ROWS[i].dir, dir) != 0)
            continue;
        char path[512];
        model_t m;
        err_t e;
        bool ok = model_load(real(dir, path, sizeof path), &m, &e) == ERR_OK &&
                  row_right(&ROWS[i], &m);
        if (!ok)
            fprintf(stderr, "\n  %s: not read as its card says", dir);
        t->right += ok;
        return;
    }
    for (size_t i = 0; i < sizeof REFUSED / sizeof REFUSED[0]; i++)
        if (strcmp(REFUSED[i].dir, dir) == 0) {
            bool ok = refusal_right(dir, REFUSED[i].key, t);
            t->right += ok;
            t->refused += ok;
            return;
        }
    t->unlisted++;
    fprintf(stderr, "\n  real/configs/%s: no row in tests/test_hfstructure.c", dir);
}

void real_configs_tally(real_tally_t *t)
{
    memset(t, 0, sizeof *t);
    char root[512];
    snprintf(root, sizeof root, "%sreal/configs", fixture(""));
    DIR *d = opendir(root);
    if (!d)
        return;
    for (struct dirent *ent; (ent = readdir(d));) {
        char path[1024];
        struct stat st;
        snprintf(path, sizeof path, "%s/%s/config.json", root, ent->d_name);
        if (ent->d_name[0] != '.' && stat(path, &st) == 0)
            tally_dir(ent->d_name, t);
    }
    closedir(d);
}

/* Every real config, and the catalog entry made from it, against its card;
 * the whole folder (refusals included) through the corpus tally. */
static void test_real_configs(void)
{
    for (size_t i = 0; i < sizeof ROWS / sizeof ROWS[0]; i++) {
        char path[512];
        model_t m;
        err_t e;
        if (model_load(real(ROWS[i].dir, path, sizeof path), &m, &e)) {
            fprintf(stderr, "%s: %s\n", ROWS[i].dir, e.msg);
            CU_FAIL("real config did not load");
            continue;
        }
        check_row(&ROWS[i], &m, ROWS[i].dir);
        if (!ROWS[i].catalog)
            continue;
        if (model_load(ROWS[i].catalog, &m, &e)) {
            fprintf(stderr, "%s: %s\n", ROWS[i].catalog, e.msg);
            CU_FAIL("catalog entry did not load");
            continue;
        }
        check_row(&ROWS[i], &m, ROWS[i].catalog);
    }
    real_tally_t t;
    real_configs_tally(&t);
    fprintf(stderr, "\n  real configs: %d of %d read right (%d refused naming the key; %d of %d "
                    "suggested fixes load)\n",
            t.right, t.files, t.refused, t.fixes_worked, t.fixes_tried);
    CU_ASSERT_EQUAL(t.right, t.files);
    CU_ASSERT_EQUAL(t.unlisted, 0);
    CU_ASSERT_EQUAL(t.fixes_worked, t.fixes_tried);
    CU_ASSERT_TRUE(t.files >= 60);
}

/* The catalog's Grok-1 (xai-org/grok-1 run.py/model.py): 314B (README).
 * By hand: tied embedding 131072 x 6144 = 805,306,368; a block: attention
 * 6144 x (6144 + 2 x 1024) + 6144 x 6144 = 88,080,384, router 8 x 6144,
 * 8 gated experts of 3 x 6144 x 32768, two RMSNorms of 6144: 4,919,980,032;
 * 64 blocks + embedding + final norm = 315,684,034,560. A dense reading
 * (the failure issue 36 names) would be about 8x smaller per block. */
static void test_grok1(void)
{
    model_t m;
    err_t e;
    CU_ASSERT_EQUAL_FATAL(model_load("grok-1", &m, &e), 0);
    model_params_t p;
    model_params(&m, &p);
    CU_ASSERT_EQUAL(m.moe.n_experts, 8);
    CU_ASSERT_EQUAL(m.moe.top_k, 2);
    CU_ASSERT_EQUAL(m.moe.n_moe_layers, 64);
    CHECK_REL(p.total, 315684034560.0, 0);
    CHECK_REL(p.total, 314e9, 0.03);
}

/* GLM-4.5-Air counted tensor by tensor (transformers' Glm4Moe modules):
 * embedding and untied head 2 x 151552 x 4096; a block's two RMSNorms
 * 2 x 4096 and attention q 4096 x 12288 + 12288 bias, k and v 4096 x 1024
 * + 1024 bias each, o 12288 x 4096 without bias (attention_bias covers Q, K
 * and V only); block 0 a dense MLP 3 x 4096 x 10944; blocks 1-45 a router
 * 128 x 4096 with its 128 score-correction biases, 128 experts and one
 * shared expert of 3 x 4096 x 1408; final norm 4096. Total
 * 106,852,251,264; active (8 experts) 13,424,129,664. */
static void test_glm45_air_exact(void)
{
    char path[512];
    model_t m;
    err_t e;
    CU_ASSERT_EQUAL_FATAL(model_load(real("GLM-4.5-Air", path, sizeof path), &m, &e), 0);
    model_params_t p;
    model_params(&m, &p);
    CHECK_REL(p.total, 106852251264.0, 0);
    CHECK_REL(p.active, 13424129664.0, 0);
}

/* MiniMax-M2 tensor by tensor (MiniMaxM2 modules): embedding and untied
 * head 2 x 200064 x 3072; a block's two RMSNorms, q 3072 x 6144, k and v
 * 3072 x 1024, o 6144 x 3072, QK norms over the whole projections (6144 +
 * 1024: qk_norm_type per_layer), router 256 x 3072 with 256 routing biases
 * and 256 experts of 3 x 3072 x 1536 (intermediate_size is the experts'
 * width); final norm. Total 228,689,764,864; active 11,030,553,088. */
static void test_minimax_m2_exact(void)
{
    char path[512];
    model_t m;
    err_t e;
    CU_ASSERT_EQUAL_FATAL(model_load(real("MiniMax-M2", path, sizeof path), &m, &e), 0);
    model_params_t p;
    model_params(&m, &p);
    CHECK_REL(p.total, 228689764864.0, 0);
    CHECK_REL(p.active, 11030553088.0, 0);
}

/* DeepSeek-V3.2's indexer, counted: the same config as DeepSeek-V3
 * (tests/fixtures/hf) plus, a block, wq_b 1536 x 64 x 128 = 12,582,912,
 * wk 7168 x 128 = 917,504, k_norm 2 x 128 and weights_proj 7168 x 64 =
 * 458,752: 13,959,424 x 61 blocks = 851,524,864. */
static void test_indexer_counted(void)
{
    char path[512];
    model_t v32, v3;
    err_t e;
    CU_ASSERT_EQUAL_FATAL(model_load(real("DeepSeek-V3.2-Exp", path, sizeof path), &v32, &e), 0);
    snprintf(path, sizeof path, "%shf/DeepSeek-V3/config.json", fixture(""));
    CU_ASSERT_EQUAL_FATAL(model_load(path, &v3, &e), 0);
    model_params_t a, b;
    model_params(&v32, &a);
    model_params(&v3, &b);
    CU_ASSERT_EQUAL(v32.indexer.n_heads, 64);
    CU_ASSERT_EQUAL(v32.indexer.topk, 2048);
    CHECK_REL(a.total - b.total, 851524864.0, 0);
}

/* Parse text and read it; returns the status. */
static int read_text(const char *text, const char *assume, model_t *m, notes_t *n, err_t *e)
{
    cJSON *root = cJSON_Parse(text);
    CU_ASSERT_PTR_NOT_NULL_FATAL(root);
    model_load_opts_t o = {.assume_architecture = assume};
    int rc = model_from_config_ex(root, "config.json", "x", &o, m, n, e);
    cJSON_Delete(root);
    return rc;
}

/* A model_type scaleplan does not know is read from its keys and said so;
 * the experts' keys and their placement are read in every naming (each
 * expert naming with each placement below). By hand for the config
 * below (hidden 64, 4 heads of 16, 2 kv heads, vocab 100, untied, 4
 * blocks, the first dense of 256, 8 experts of 32 top 2 and 2 shared):
 * attention 64 x 64 + 2 x 64 x 32 + 64 x 64 = 12,288; norms 128; a dense
 * MLP 3 x 64 x 256 = 49,152; an expert 3 x 64 x 32 = 6,144; a MoE block
 * 12,288 + 128 + 8 x 64 + 8 x 6,144 + 2 x 6,144 = 74,368; total 2 x 6,400
 * + 64 + (12,288 + 128 + 49,152) + 3 x 74,368 = 297,536. */
static void test_unknown_type_by_structure(void)
{
    static const char *const namings[] = {
        "\"moe_num_experts\": 8, \"moe_k\": 2, \"moe_num_shared_experts\": 2",
        "\"n_routed_experts\": 8, \"num_experts_per_tok\": 2, \"n_shared_experts\": 2",
        "\"num_local_experts\": 8, \"top_k\": 2, \"shared_expert_intermediate_size\": 64",
    };
    /* the first dense block placed by each naming of the placement */
    static const char *const placements[] = {
        "\"first_k_dense_replace\": 1",
        "\"mlp_only_layers\": [0]",
        "\"moe_layer_start_index\": 1, \"moe_layer_interval\": 1",
        "\"moe_layers\": [1, 2, 3]",
        "\"mlp_layer_types\": [\"dense\", \"sparse\", \"sparse\", \"sparse\"]",
    };
    for (size_t k = 0; k < 15; k++) {
        size_t i = k % 3, j = k % 5; /* every naming with every placement */
        char text[1024];
        snprintf(text, sizeof text,
                 "{\"model_type\": \"future_moe\", \"hidden_size\": 64, \"num_hidden_layers\": 4, "
                 "\"num_attention_heads\": 4, \"num_key_value_heads\": 2, \"intermediate_size\": "
                 "256, \"moe_intermediate_size\": 32, %s, "
                 "\"vocab_size\": 100, \"tie_word_embeddings\": false, %s}",
                 placements[j], namings[i]);
        model_t m;
        err_t e;
        notes_t n;
        notes_init(&n);
        CU_ASSERT_EQUAL_FATAL(read_text(text, NULL, &m, &n, &e), 0);
        CU_ASSERT_TRUE(notes_has(&n, "model_type"));
        CU_ASSERT_STRING_EQUAL(m.arch, "future_moe");
        model_params_t p;
        model_params(&m, &p);
        CHECK_REL(p.total, 297536.0, 0);
        CU_ASSERT_EQUAL(m.moe.n_moe_layers, 3);
        notes_free(&n);
    }
}

/* Kimi K2 under a name scaleplan does not know counts as kimi_k2 does, and
 * what structure cannot read is refused naming the key. */
static void test_structure_matches_named(void)
{
    char path[512];
    model_t named, renamed;
    err_t e;
    CU_ASSERT_EQUAL_FATAL(model_load(real("Kimi-K2-Instruct", path, sizeof path), &named, &e), 0);
    FILE *f = fopen(path, "r");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    static char buf[8192];
    size_t len = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[len] = '\0';
    char *t = strstr(buf, "\"kimi_k2\"");
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    memcpy(t, "\"kimi_k9\"", 9);
    CU_ASSERT_EQUAL_FATAL(read_text(buf, NULL, &renamed, NULL, &e), 0);
    model_params_t a, b;
    model_params(&named, &a);
    model_params(&renamed, &b);
    CHECK_REL(b.total, a.total, 0);
    CHECK_REL(b.active, a.active, 0);
    /* and inside a wrapper scaleplan does not know (Kimi K2.5's kimi_k25
     * holds its language model in text_config): the language model, the
     * vision tower said to be left out */
    memcpy(t, "\"kimi_k2\"", 9);
    static char wrapped[9000];
    snprintf(wrapped, sizeof wrapped,
             "{\"model_type\": \"kimi_k25\", \"vision_config\": {}, \"text_config\": %s}", buf);
    notes_t wn;
    notes_init(&wn);
    CU_ASSERT_EQUAL_FATAL(read_text(wrapped, NULL, &renamed, &wn, &e), 0);
    model_params(&renamed, &b);
    CHECK_REL(b.total, a.total, 0);
    CU_ASSERT_STRING_EQUAL(renamed.arch, "kimi_k2");
    CU_ASSERT_TRUE(notes_has(&wn, "vision_config"));
    notes_free(&wn);
    /* a decoder's keys without any model_type: read by structure, said */
    notes_t n;
    notes_init(&n);
    CU_ASSERT_EQUAL(read_text("{\"hidden_size\": 64, \"num_hidden_layers\": 2, "
                              "\"num_attention_heads\": 4, \"intermediate_size\": 128, "
                              "\"vocab_size\": 10}",
                              NULL, &renamed, &n, &e),
                    0);
    CU_ASSERT_TRUE(notes_has(&n, "model_type"));
    notes_free(&n);
    /* what structure cannot read is refused naming the key */
    CHECK_ERR(read_text("{\"model_type\": \"future\", \"hidden_size\": 64}", NULL, &renamed, NULL,
                        &e),
              &e, ERR_INPUT, "num_hidden_layers", "by structure");
    CHECK_ERR(read_text("{\"model_type\": \"future\", \"hidden_size\": 64, \"num_hidden_layers\": "
                        "2, \"num_attention_heads\": 4, \"intermediate_size\": 128, "
                        "\"vocab_size\": 10, \"num_experts\": 4}",
                        NULL, &renamed, NULL, &e),
              &e, ERR_INPUT, "num_experts_per_tok", "num_experts");
}

/* Layers the simulator cannot price, and blocks of a shape reading by
 * structure cannot count (a type not known by name with Gemma 4's wider
 * full-attention heads; gemma4 itself is read by its own reader), are
 * refused naming the key, also inside a multimodal wrapper's text_config. */
static void test_unpriced_layers_refused(void)
{
    static const char *const texts[] = {
        "{\"model_type\": \"future\", \"hidden_size\": 64, \"num_hidden_layers\": 2, "
        "\"num_attention_heads\": 4, \"intermediate_size\": 128, \"vocab_size\": 10, "
        "\"head_dim\": 16, \"global_head_dim\": 32}",
        "{\"model_type\": \"future_vl\", \"text_config\": {\"model_type\": \"future\", "
        "\"hidden_size\": 64, \"num_hidden_layers\": 2, \"num_attention_heads\": 4, "
        "\"intermediate_size\": 128, \"vocab_size\": 10, \"head_dim\": 16, "
        "\"global_head_dim\": 32}}",
    };
    model_t m;
    err_t e;
    for (size_t i = 0; i < sizeof texts / sizeof texts[0]; i++)
        CHECK_ERR(read_text(texts[i], NULL, &m, NULL, &e), &e, ERR_INPUT, "global_head_dim",
                  "another head size", "by structure cannot");
    CHECK_ERR(read_text("{\"model_type\": \"lfm2\", \"hidden_size\": 64, \"layer_types\": "
                        "[\"conv\", \"full_attention\"]}",
                        NULL, &m, NULL, &e),
              &e, ERR_INPUT, "layer_types", "'conv' layers");
    /* block_configs under a type whose reader does not read them (only
     * nemotron-nas and deci do: models/hfconfig_nas.c) */
    CHECK_ERR(read_text("{\"model_type\": \"llama\", \"hidden_size\": 64, \"block_configs\": "
                        "[{\"attention\": {\"no_op\": true}}]}",
                        NULL, &m, NULL, &e),
              &e, ERR_INPUT, "block_configs", "not modelled");
}

/* layers_block_type, NemotronHConfig's list form of the pattern: read as
 * the same letters (mamba M, attention *, moe E, mlp -), so the list and
 * the string give one model; a list of another length than the layers, or
 * an entry of another kind, is refused naming the list (and the entry). */
static void test_block_type_list(void)
{
    static const char *base =
        "\"model_type\": \"nemotron_h\", \"hidden_size\": 64, \"num_attention_heads\": 4, "
        "\"num_key_value_heads\": 2, \"intermediate_size\": 128, \"vocab_size\": 100, "
        "\"mamba_num_heads\": 4, \"mamba_head_dim\": 32, \"ssm_state_size\": 16, "
        "\"n_groups\": 2, \"n_routed_experts\": 4, \"num_experts_per_tok\": 2, "
        "\"moe_intermediate_size\": 32";
    char text[1024];
    model_t a, b;
    err_t e;
    snprintf(text, sizeof text, "{%s, \"num_hidden_layers\": 4, \"hybrid_override_pattern\": "
             "\"M*E-\"}", base);
    CU_ASSERT_EQUAL_FATAL(read_text(text, NULL, &a, NULL, &e), 0);
    snprintf(text, sizeof text, "{%s, \"layers_block_type\": [\"mamba\", \"attention\", "
             "\"moe\", \"mlp\"]}", base);
    CU_ASSERT_EQUAL_FATAL(read_text(text, NULL, &b, NULL, &e), 0);
    model_params_t pa, pb;
    model_params(&a, &pa);
    model_params(&b, &pb);
    CU_ASSERT_EQUAL(b.n_layers, 4);
    CHECK_REL(pb.total, pa.total, 0);
    CU_ASSERT_EQUAL(memcmp(a.hybrid.block, b.hybrid.block, 4), 0);
    snprintf(text, sizeof text, "{%s, \"num_hidden_layers\": 3, \"layers_block_type\": "
             "[\"mamba\", \"attention\", \"moe\", \"mlp\"]}", base);
    CHECK_ERR(read_text(text, NULL, &b, NULL, &e), &e, ERR_INPUT, "layers_block_type",
              "4 entries but num_hidden_layers is 3");
    snprintf(text, sizeof text, "{%s, \"layers_block_type\": [\"mamba\", \"conv\"]}", base);
    CHECK_ERR(read_text(text, NULL, &b, NULL, &e), &e, ERR_INPUT, "layers_block_type[1]",
              "'conv'");
    /* a latent width that is not a positive size */
    snprintf(text, sizeof text, "{%s, \"hybrid_override_pattern\": \"M*E-\", "
             "\"num_hidden_layers\": 4, \"moe_latent_size\": -16}", base);
    CHECK_ERR(read_text(text, NULL, &b, NULL, &e), &e, ERR_INPUT, "config.json",
              "moe_latent_size");
}

/* Bad values in the keys reading by structure uses: one line naming the
 * key (and the entry), never a model. */
static void test_structure_bad_values(void)
{
    static const struct {
        const char *extra, *key, *why;
    } rows[] = {
        {"\"num_experts\": 0, \"top_k\": 1", "num_experts", "between 1"},
        {"\"num_experts\": 4, \"top_k\": 9", "num_experts_per_tok", "routed experts"},
        {"\"num_experts\": 4, \"top_k\": 2, \"mlp_layer_types\": [\"dense\"]",
         "mlp_layer_types", "1 entries for 4 blocks"},
        {"\"num_experts\": 4, \"top_k\": 2, \"moe_layers\": [99]", "moe_layers[0]", "0 to 3"},
        {"\"num_experts\": 4, \"top_k\": 2, \"n_shared_experts\": -1", "n_shared_experts",
         "between 0"},
        {"\"kv_lora_rank\": 16, \"qk_nope_head_dim\": 8, \"qk_rope_head_dim\": 8, "
         "\"v_head_dim\": 16, \"index_n_heads\": 4",
         "index_head_dim", "missing"},
        {"\"hybrid_override_pattern\": 5", "hybrid_override_pattern", "string"},
        {"\"use_qk_norm\": \"yes\"", "use_qk_norm", "true or false"},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        char text[1024];
        snprintf(text, sizeof text,
                 "{\"model_type\": \"zz\", \"hidden_size\": 64, \"num_hidden_layers\": 4, "
                 "\"num_attention_heads\": 4, \"intermediate_size\": 128, \"vocab_size\": 10, "
                 "%s}",
                 rows[i].extra);
        model_t m;
        err_t e;
        CHECK_ERR(read_text(text, NULL, &m, NULL, &e), &e, ERR_INPUT, rows[i].key, rows[i].why);
    }
}

/* --assume-architecture naming a reader that would drop what the config
 * describes is refused with the key and a reading that counts it (Kimi K2
 * read as llama would be 39B, not 1.03T). */
static void test_assume_checked(void)
{
    char path[512];
    model_t m;
    err_t e;
    model_load_opts_t o = {.assume_architecture = "llama"};
    real("Kimi-K2-Instruct", path, sizeof path);
    CHECK_ERR(model_load_ex(path, &o, &m, NULL, &e), &e, ERR_INPUT, "kv_lora_rank",
              "deepseek_v3");
    o.assume_architecture = "deepseek_v3";
    CU_ASSERT_EQUAL(model_load_ex(path, &o, &m, NULL, &e), 0);
    model_params_t p;
    model_params(&m, &p);
    CHECK_REL(p.total, 1e12, 0.03);
    o.assume_architecture = "llama";
    CHECK_ERR(model_load_ex(real("MiniMax-M2", path, sizeof path), &o, &m, NULL, &e), &e,
              ERR_INPUT, "num_local_experts", "routed experts", "by structure");
}

/* Reader fixes the real configs showed: the first Qwen's intermediate_size
 * counts both gated projections (an odd one is refused), and a type read by
 * structure takes its configuration class's tie_word_embeddings default,
 * said by name (Cohere ties: Aya 23 8B is 8.03B, not 9.08B). */
static void test_corpus_reader_fixes(void)
{
    model_t m;
    err_t e;
    notes_t n;
    static const char base[] = "\"hidden_size\": 64, \"num_hidden_layers\": 2, "
                               "\"num_attention_heads\": 4, \"vocab_size\": 100";
    char text[512];
    snprintf(text, sizeof text, "{\"model_type\": \"qwen\", %s, \"intermediate_size\": 256}",
             base);
    notes_init(&n);
    CU_ASSERT_EQUAL_FATAL(read_text(text, NULL, &m, &n, &e), 0);
    CU_ASSERT_EQUAL(m.ffn, 128);
    CU_ASSERT_TRUE(m.qkv_bias);
    CU_ASSERT_TRUE(notes_has(&n, "intermediate_size"));
    notes_free(&n);
    snprintf(text, sizeof text, "{\"model_type\": \"qwen\", %s, \"intermediate_size\": 255}",
             base);
    CHECK_ERR(read_text(text, NULL, &m, NULL, &e), &e, ERR_INPUT, "intermediate_size", "even");
    snprintf(text, sizeof text, "{\"model_type\": \"cohere\", %s, \"intermediate_size\": 256}",
             base);
    notes_init(&n);
    CU_ASSERT_EQUAL_FATAL(read_text(text, NULL, &m, &n, &e), 0);
    CU_ASSERT_TRUE(m.tied_embeddings);
    bool said = false;
    for (size_t i = 0; i < n.n; i++)
        said |= strstr(n.items[i].text, "cohere's default, true") != NULL;
    CU_ASSERT_TRUE(said);
    notes_free(&n);
}

TEST_SUITE(suite_hfstructure, "hfstructure", TEST(test_real_configs),
           TEST(test_corpus_reader_fixes), TEST(test_grok1), TEST(test_glm45_air_exact),
           TEST(test_minimax_m2_exact),
           TEST(test_indexer_counted), TEST(test_unknown_type_by_structure),
           TEST(test_structure_matches_named),
           TEST(test_unpriced_layers_refused), TEST(test_structure_bad_values),
           TEST(test_assume_checked), TEST(test_latent_moe),
           TEST(test_block_type_list));
