/* model_types: the types of models/model.h (model_t and the structs and
 * enums it is made of, its parameter counts, the loader's options), apart
 * from the functions, so that a module the model's functions call
 * (models/hybrid, models/moe_layers) can take a model_t without including
 * model.h back. Read model.h for what each describes.
 */
#ifndef SCALEPLAN_MODELS_MODEL_TYPES_H
#define SCALEPLAN_MODELS_MODEL_TYPES_H

#include <stdbool.h>
#include <stdint.h>

typedef enum { MODEL_FAMILY_GPT = 0, MODEL_FAMILY_LLAMA = 1 } model_family_t;
typedef enum { MODEL_NORM_LAYERNORM = 0, MODEL_NORM_RMSNORM = 1 } model_norm_t;
/* The MLP's structure: MODEL_MLP_GELU is any plain MLP (up and down
 * matrices; the activation is in model_act_t), MODEL_MLP_SWIGLU any gated
 * one (gate, up and down; SwiGLU, GeGLU). */
typedef enum { MODEL_MLP_GELU = 0, MODEL_MLP_SWIGLU = 1 } model_mlp_t;
typedef enum {
    MODEL_POS_LEARNED = 0, /* a learned table of max_seq x hidden */
    MODEL_POS_ROPE = 1,    /* rotary (no parameters) */
    MODEL_POS_NONE = 2     /* no position parameters or rotation (ALiBi, NoPE) */
} model_pos_t;
typedef enum {
    MODEL_ACT_GELU = 0, /* GELU (exact or tanh); GeGLU when gated */
    MODEL_ACT_SILU = 1, /* SiLU; SwiGLU when gated */
    MODEL_ACT_RELU = 2,
    MODEL_ACT_RELU2 = 3 /* squared ReLU (Nemotron, Primer) */
} model_act_t;
typedef enum {
    MODEL_QK_NORM_NONE = 0,
    MODEL_QK_NORM_HEAD = 1, /* one norm over head_dim shared by all heads (Qwen3, Gemma 3) */
    MODEL_QK_NORM_FULL = 2  /* over the whole Q and K projections (OLMo 2, OLMoE) */
} model_qk_norm_t;

#define MODEL_NAME_MAX 64
/* Layers a mixture-of-experts model may have (bounds its layer mask). */
#define MODEL_MAX_MOE_LAYERS 4096

/* The attention blocks without the sliding window (the n_layers -
 * window_layers that attend to the whole sequence) in a shape of their own:
 * Gemma 4's full-attention blocks have wider heads (global_head_dim), their
 * own key/value heads (num_global_key_value_heads) and, with
 * attention_k_eq_v, keys that serve as values (no V projection; the values
 * are the keys' projection under their own weightless norm); a config's
 * num_attention_heads_per_layer may give them another number of query
 * heads than the windowed blocks (poolside's Laguna). On when head_dim > 0
 * (every field then set); never with MLA or a hybrid layer pattern.
 * Source: transformers Gemma4TextAttention
 * (src/transformers/models/gemma4/modeling_gemma4.py @
 * c308a309e651a7e033f683353f3f75aa66d29502). */
typedef struct {
    int head_dim;   /* per head, queries and keys alike; 0: off */
    int n_heads;    /* query heads */
    int n_kv_heads; /* key/value heads */
    bool k_eq_v;    /* no V projection: values are the keys */
} model_full_attn_t;

/* Gemma 4's per-layer inputs (E2B/E4B; transformers Gemma4TextModel and
 * Gemma4TextDecoderLayer @ c308a309e651a7e033f683353f3f75aa66d29502): a
 * second embedding table of vocab rows of n_layers x dim, looked up by
 * token, and a projection hidden -> n_layers x dim with an RMSNorm over
 * dim, both before the first block; in every block a gate hidden -> dim
 * and a projection dim -> hidden with an RMSNorm over hidden after the MLP.
 * On when dim > 0. */
typedef struct {
    int dim;   /* hidden_size_per_layer_input */
    int vocab; /* vocab_size_per_layer_input */
} model_ple_t;

/* Multi-head latent attention (DeepSeek-V2/V3; Megatron
 * --multi-latent-attention). On when kv_lora_rank > 0. Queries go through
 * an optional low-rank q_a (hidden -> q_lora_rank, RMSNorm) and q_b
 * (-> heads x (qk_nope + qk_rope)); keys and values through kv_a (hidden ->
 * kv_lora_rank + qk_rope, RMSNorm over kv_lora_rank) and kv_b
 * (kv_lora_rank -> heads x (qk_nope + v)); the output projection reads
 * heads x v. */
typedef struct {
    int q_lora_rank;  /* 0: queries projected directly (q_proj) */
    int kv_lora_rank; /* > 0 turns MLA on */
    int qk_nope_dim;  /* per head, the part without rotary */
    int qk_rope_dim;  /* per head, the rotary part (one key head shared) */
    int v_dim;        /* per head */
    bool no_latent_norms; /* no RMSNorm on the q and kv latents (Megatron
                             without --qk-layernorm); HF configs have them */
} model_mla_t;

/* The sparse-attention indexer of DeepSeek-V3.2 and GLM-5 (DeepSeek Sparse
 * Attention; transformers' DeepseekV32/GlmMoeDsa Indexer, DeepSeek-V3.2-Exp
 * inference/model.py). On when n_heads > 0. Each block holds wq_b
 * (q_lora_rank -> n_heads x head_dim; hidden -> ... without a query
 * latent), wk (hidden -> head_dim), a LayerNorm over head_dim (weight and
 * bias) and weights_proj (hidden -> n_heads); it scores every earlier key
 * and keeps topk of them for the block's attention. */
typedef struct {
    int n_heads;  /* indexer heads (index_n_heads); 0: no indexer */
    int head_dim; /* per indexer head (index_head_dim) */
    int topk;     /* keys each query attends to (index_topk) */
    int own_layers; /* blocks with an indexer of their own (GLM-5.2's
                       indexer_types "full"); the others ("shared") reuse the
                       keys the last one selected and hold no indexer
                       weights. 0: every block */
} model_indexer_t;

/* Mixture of experts. A model is MoE when n_experts > 0; which blocks have
 * an MoE MLP instead of the dense one (of width model_t.ffn) is
 * layer_mask (bit i = block i), so DeepSeek's first_k_dense_replace and
 * moe_layer_freq, Qwen-MoE's decoder_sparse_step and mlp_only_layers,
 * Llama 4's interleave step and Megatron's --moe-layer-freq patterns all
 * reduce to it. Each MoE block holds:
 *   - a router: n_experts x hidden (+ n_experts when router_bias);
 *   - n_experts routed experts, each an MLP of width expert_ffn with the
 *     model's MLP structure (gated or not), with biases when expert_bias;
 *     top_k of them process each token;
 *   - shared experts: one MLP of width shared_ffn (n_shared experts of
 *     DeepSeek count as one MLP of n_shared x their width) that every
 *     token goes through, with biases when the model's mlp_bias is set, and,
 *     when shared_gate, a sigmoid gate (hidden -> 1) on its output
 *     (Qwen2-MoE). */
typedef struct {
    int n_experts;   /* routed experts per MoE block; 0 = dense model */
    int top_k;       /* routed experts per token */
    int expert_ffn;  /* one routed expert's MLP width */
    int shared_ffn;  /* total width of the shared expert MLP; 0 = none */
    int n_shared;    /* shared experts it is made of (for display) */
    bool shared_gate;
    bool router_bias; /* a vector of n_experts on the router: gpt-oss's
                         linear bias, DeepSeek-V3's score correction */
    bool expert_bias; /* biases on every expert linear (gpt-oss) */
    int n_groups;     /* group-limited routing (DeepSeek's n_group): the
                         experts split into this many consecutive groups;
                         0 or 1: no limit */
    int group_topk;   /* groups a token may use (DeepSeek's topk_group) */
    int latent;       /* LatentMoE (Nemotron 3's moe_latent_size): the routed
                         experts read and write tokens of this width, not
                         hidden; each MoE block adds a down projection
                         hidden -> latent before the dispatch and an up
                         projection latent -> hidden after the combine (no
                         bias unless mlp_bias). 0: experts at hidden */
    int n_moe_layers; /* blocks with an MoE MLP (bits set in layer_mask) */
    uint64_t layer_mask[MODEL_MAX_MOE_LAYERS / 64];
} model_moe_t;

/* Hybrid layer patterns (models/hybrid.h): blocks whose token mixer is
 * not attention, or that have a mixer or an MLP only. block[i] holds block
 * i's model_mixer_t in its low bits and MODEL_BLOCK_NO_MLP when the block
 * has no MLP (a Nemotron-H / Megatron 'M' or '*' layer); a block with
 * MODEL_MIXER_NONE is an MLP (or MoE) layer alone ('-', 'E'). On when
 * n_layers_hybrid > 0; every other model leaves it zero (attention + MLP
 * in every block). */
typedef enum {
    MODEL_MIXER_ATTENTION = 0, /* the model's attention (as configured) */
    MODEL_MIXER_MAMBA2 = 1,    /* Mamba-2 (SSD) mixer */
    MODEL_MIXER_GDN = 2,       /* Gated DeltaNet (linear attention, delta rule) */
    MODEL_MIXER_MAMBA1 = 3,    /* Mamba-1 selective scan (Jamba) */
    MODEL_MIXER_KDA = 4,       /* Kimi Delta Attention (Kimi Linear) */
    MODEL_MIXER_LIGHTNING = 5, /* lightning (linear) attention (MiniMax-01/M1) */
    MODEL_MIXER_NONE = 6,      /* no mixer: an MLP layer */
    MODEL_MIXER_COUNT
} model_mixer_t;
#define MODEL_BLOCK_MIXER_MASK 0x0f
/* The mixers that are not attention: MODEL_MIXER_MAMBA2 up to this one. */
#define MODEL_MIXER_LAST_SCAN MODEL_MIXER_LIGHTNING
#define MODEL_BLOCK_NO_MLP 0x10

typedef struct {
    int n_layers_hybrid; /* = n_layers when on, 0 otherwise */
    /* Mamba-2 (state-spaces/mamba Mamba2; Megatron MambaMixer) */
    int ssm_state;     /* d_state N per group (ssm_state_size, --mamba-state-dim) */
    int ssm_heads;     /* nheads (mamba_num_heads, --mamba-num-heads) */
    int ssm_head_dim;  /* P per head (mamba_head_dim, --mamba-head-dim) */
    int ssm_groups;    /* groups sharing B and C (n_groups, --mamba-num-groups) */
    int ssm_conv;      /* causal conv1d width (conv_kernel) */
    int ssm_chunk;     /* SSD chunk length, tokens (chunk_size) */
    /* Gated DeltaNet (Qwen3-Next: fla chunk_gated_delta_rule) */
    int gdn_k_heads, gdn_v_heads; /* linear_num_key_heads, linear_num_value_heads */
    int gdn_k_dim, gdn_v_dim;     /* per head: linear_key_head_dim, linear_value_head_dim */
    int gdn_conv;                 /* linear_conv_kernel_dim */
    int gdn_chunk;                /* chunkwise form's chunk, tokens */
    /* Kimi Delta Attention uses the gdn_* sizes (key heads = value heads,
     * key size = value size = head_dim) and two low-rank gates of this
     * rank (f_a/f_b: the per-channel decay; g_a/g_b: the output gate) */
    int kda_gate_rank;
    /* Lightning attention (MiniMax) uses gdn_k_heads and gdn_k_dim for its
     * heads and head size, gdn_chunk for its block length */
    /* Mamba-1 (Jamba's JambaMambaMixer; state and conv above) */
    int ssm_inner;                /* d_inner (mamba_expand x hidden) */
    int ssm_dt_rank;              /* dt_rank (mamba_dt_rank) */
    bool ssm_conv_bias, ssm_proj_bias; /* mamba_conv_bias, mamba_proj_bias */
    bool ssm_dt_norms;            /* RMSNorms on dt, B and C (Jamba) */
    bool par_mamba2;              /* every attention block also runs a Mamba-2
                                     mixer beside it on the same normed input,
                                     the two outputs summed (Falcon-H1) */
    bool ssm_no_norm;             /* the Mamba-2 mixer has no gated RMSNorm
                                     (Falcon-H1's mamba_rms_norm false) */
    bool attn_out_gate;           /* attention blocks gate their output with a
                                     second query-width projection (Qwen3-Next) */
    unsigned char block[MODEL_MAX_MOE_LAYERS];
} model_hybrid_t;

typedef struct {
    char name[MODEL_NAME_MAX]; /* catalog name, or the config file's stem */
    char display[96];          /* human name, e.g. "Llama 3 70B" */
    char source[640];          /* where the architecture figures come from */
    char arch[32];             /* the architecture read ("llama", "gpt2", "deepseek_v3") */
    model_family_t family;
    model_norm_t norm;
    model_mlp_t mlp;
    model_pos_t pos;
    model_act_t act;  /* the MLP's activation (the gate's when gated) */
    int n_layers;     /* transformer blocks */
    int hidden;       /* d_model */
    int n_heads;      /* query heads */
    int n_kv_heads;   /* key/value heads (== n_heads without GQA) */
    int head_dim;     /* per head; hidden / n_heads unless the config says
                         (MLA: the query/key head, qk_nope + qk_rope) */
    int ffn;          /* dense MLP inner width (each of gate and up when gated) */
    int vocab;        /* vocabulary size (as configured, before TP padding) */
    int max_seq;      /* positions the model supports */
    int pos_extra_rows;   /* learned position rows beyond max_seq (OPT: 2) */
    bool tied_embeddings; /* output head shares the word embedding */
    bool qkv_bias;        /* bias on the Q, K, V projections */
    bool out_bias;        /* bias on the attention output projection */
    bool mlp_bias;        /* biases on the MLP linears */
    bool norm_weightless; /* norms without parameters (OLMo's LayerNorm) */
    int norms_per_layer;  /* norm modules per block; 0 means the usual 2
                             (Gemma 2/3: 4, Falcon-7B's parallel block: 1) */
    model_qk_norm_t qk_norm;
    bool attn_sinks;      /* a learned sink logit per head (gpt-oss) */
    bool attn_head_gate;  /* a gate per query head on the attention output:
                             g_proj, hidden -> heads, no bias (Laguna's
                             per-head softplus gating); the per-element gate
                             of Qwen3-Next is model_hybrid_t.attn_out_gate */
    double dropout;       /* hidden/attention dropout probability; > 0 means
                             dropout masks are kept for backward */
    double norm_eps;      /* epsilon of LayerNorm/RMSNorm */
    double rope_theta;    /* RoPE base frequency (rotary models) */
    double rope_fraction; /* share of head_dim that is rotated; 0 means 1 */
    int window;           /* sliding-window attention span, tokens; 0 = none */
    int window_layers;    /* blocks that use the window */
    model_full_attn_t full_attn; /* the other blocks' own shape (Gemma 4) */
    model_ple_t ple;      /* per-layer inputs (Gemma 4 E2B/E4B) */
    int kv_shared_layers; /* the last blocks reuse an earlier block's keys
                             and values: no K/V projections or key norm of
                             their own (Gemma 4's num_kv_shared_layers) */
    int kv_shared_full;   /* of those, full-attention blocks */
    model_mla_t mla;
    model_indexer_t indexer;
    model_moe_t moe;
    int n_mtp;            /* multi-token prediction modules (DeepSeek-V3's
                             num_nextn_predict_layers, Megatron
                             --mtp-num-layers): each an embedding/hidden
                             norm pair, a 2h -> h projection, one block like
                             the last main block and a final norm, sharing
                             the embedding and output head */
    model_hybrid_t hybrid; /* Mamba-2 / Gated DeltaNet / MLP-only blocks */
} model_t;

/* Parameter counts (numbers of parameters, not bytes). */
typedef struct {
    double word_embedding;     /* vocab x hidden */
    double position_embedding; /* learned position table */
    double attention;          /* one block: Q, K, V, output (+ biases, QK
                                  norms, sinks; MLA's projections and norms) */
    double mlp;                /* one dense block: MLP weights (+ biases) */
    double norms;              /* one block: its norms (not QK norms) */
    double per_layer;          /* one dense block: attention + mlp + norms */
    double final_norm;
    double output_head;        /* untied LM head; 0 when tied */
    double per_layer_inputs;   /* Gemma 4's per-layer input table (an
                                  embedding, outside non_embedding) */
    double per_layer_proj;     /* its projection and norm before the blocks */
    double ple_block;          /* one block's per-layer input gate,
                                  projection and norm (in per_layer) */
    /* Mixture of experts (0 for dense models). */
    double router;             /* one MoE block's router */
    double expert;             /* one routed expert */
    double shared_expert;      /* one MoE block's shared experts (+ gate) */
    double moe_layer;          /* one MoE block: attention + norms + router +
                                  every routed expert + shared */
    double moe_layer_active;   /* the same with top_k routed experts */
    int n_dense_layers, n_moe_layers;
    double mtp;                /* all multi-token prediction modules (not in
                                  total) */
    double mtp_active;
    double total;              /* unique parameters of the model (without MTP) */
    double active;             /* parameters one token uses: total minus the
                                  routed experts it skips (embeddings and head
                                  included; = total for dense models) */
    double non_embedding;      /* total without word/position embeddings and
                                  the untied output head */
} model_params_t;

/* How to load: assume_architecture reads a config's model_type as another
 * supported one ("llama"), for architectures scaleplan does not know that
 * follow one it does. */
typedef struct {
    const char *assume_architecture; /* NULL: the config's own model_type */
    bool catalog_entry; /* set by the loader for scaleplan's own catalog files: the class
                           defaults of their absent keys are part of the vetted entry
                           and not listed as assumed (a user's config lists each) */
} model_load_opts_t;

#endif
