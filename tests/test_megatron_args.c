/* Tests of inputs/megatron_args: whole Megatron-LM launch scripts, flag
 * lists and start-up argument blocks read into a model, a layout and
 * options, with every ignored and assumed argument said; bad input refused
 * with one line naming the flag. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "inputs/megatron_args.h"
#include "tests/testing.h"

static int read_text(const char *text, megatron_args_t *a, err_t *e)
{
    int rc = megatron_args_read(text, strlen(text), "test", a, e);
    if (rc)
        fprintf(stderr, "megatron args: %s\n", e->msg);
    return rc;
}

static bool has_note(const megatron_args_t *a, const char *field, note_kind_t kind)
{
    for (size_t i = 0; i < a->notes.n; i++)
        if (strcmp(a->notes.items[i].field, field) == 0 && a->notes.items[i].kind == kind)
            return true;
    return false;
}

/* tests/fixtures/megatron/llama3_70b_args.txt: the T134 row (Megatron-Bridge
 * 25.11 Llama 3 70B on 64 H100) as a pretrain_gpt.py command line. The
 * model is Llama 3 70B except the vocabulary: NullTokenizer 128256 padded
 * to a multiple of 128 x TP 4 = 512 gives 128512 rows (Megatron-LM's
 * vocab_size_with_padding), so the parameters are the HF count
 * 70,553,706,496 + 2 x 256 x 8192 = 70,557,900,800 (embedding and untied
 * output layer each gain 256 rows). */
static void test_llama3_70b_script(void)
{
    char *text = slurp(fixture("megatron/llama3_70b_args.txt"));
    CU_ASSERT_PTR_NOT_NULL_FATAL(text);
    megatron_args_t a;
    err_t e;
    int rc = megatron_args_read(text, strlen(text), "llama3_70b_args.txt", &a, &e);
    free(text);
    if (rc)
        fprintf(stderr, "%s\n", e.msg);
    CU_ASSERT_EQUAL_FATAL(rc, 0);
    const model_t *m = &a.model;
    CU_ASSERT_TRUE(a.have_model);
    CU_ASSERT_EQUAL(m->n_layers, 80);
    CU_ASSERT_EQUAL(m->hidden, 8192);
    CU_ASSERT_EQUAL(m->ffn, 28672);
    CU_ASSERT_EQUAL(m->n_heads, 64);
    CU_ASSERT_EQUAL(m->n_kv_heads, 8);
    CU_ASSERT_EQUAL(m->head_dim, 128);
    CU_ASSERT_EQUAL(m->vocab, 128512);
    CU_ASSERT_EQUAL(m->max_seq, 8192);
    CU_ASSERT_EQUAL(m->mlp, MODEL_MLP_SWIGLU);
    CU_ASSERT_EQUAL(m->norm, MODEL_NORM_RMSNORM);
    CU_ASSERT_EQUAL(m->pos, MODEL_POS_ROPE);
    CU_ASSERT_FALSE(m->tied_embeddings);
    CU_ASSERT_FALSE(m->qkv_bias || m->out_bias || m->mlp_bias);
    CU_ASSERT_EQUAL(m->dropout, 0);
    CHECK_REL(m->rope_theta, 500000, 0);
    model_params_t p;
    model_params(m, &p);
    CHECK_REL(p.total, 70557900800.0, 0);
    const layout_t *l = &a.layout;
    CU_ASSERT_EQUAL(l->tp, 4);
    CU_ASSERT_EQUAL(l->pp, 8);
    CU_ASSERT_EQUAL(l->vpp, 5); /* 80 layers / (PP 8 x 2 layers per virtual stage) */
    CU_ASSERT_EQUAL(l->schedule, SCHEDULE_INTERLEAVED);
    CU_ASSERT_EQUAL(l->cp, 1);
    CU_ASSERT_TRUE(l->sequence_parallel);
    CU_ASSERT_TRUE(l->distributed_optimizer);
    CU_ASSERT_EQUAL(l->micro_batch, 1);
    CU_ASSERT_EQUAL(l->global_batch, 128);
    CU_ASSERT_EQUAL(l->seq_len, 8192);
    CU_ASSERT_EQUAL(l->precision, PRECISION_FP8_CS); /* --fp8-recipe tensorwise */
    CU_ASSERT_EQUAL(l->grad_bytes, 2); /* --grad-reduce-in-bf16 */
    CU_ASSERT_TRUE(a.opt.fp8_param_gather);
    CU_ASSERT_TRUE(l->flash_attention);
    CU_ASSERT_TRUE(a.opt.overlap_grad_reduce);
    CU_ASSERT_TRUE(a.opt.overlap_param_gather);
    CU_ASSERT_TRUE(a.opt.tp_comm_overlap);
    CU_ASSERT_EQUAL(a.world_size, 64); /* torchrun --nproc_per_node 8 --nnodes 8 */
    /* Said, not silent: training hyper-parameters,
     * the environment, the vocabulary padding. */
    CU_ASSERT_TRUE(has_note(&a, "--lr", NOTE_IGNORED));
    CU_ASSERT_TRUE(has_note(&a, "--save", NOTE_IGNORED));
    CU_ASSERT_FALSE(has_note(&a, "--fp8-recipe", NOTE_IGNORED)); /* read */
    CU_ASSERT_TRUE(has_note(&a, "--manual-gc", NOTE_IGNORED));
    CU_ASSERT_TRUE(has_note(&a, "CUDA_DEVICE_MAX_CONNECTIONS=1", NOTE_IGNORED));
    CU_ASSERT_TRUE(has_note(&a, "--make-vocab-size-divisible-by", NOTE_ASSUMED));
    /* Flags at their default value change nothing and are not listed. */
    CU_ASSERT_FALSE(has_note(&a, "--seed", NOTE_IGNORED));
    CU_ASSERT_FALSE(has_note(&a, "--rotary-percent", NOTE_IGNORED));
    megatron_args_free(&a);
}

/* Bash arrays, variables, ${X:-default}, comments inside arrays and
 * "${ARR[@]}" as launch scripts write them. The FFN width defaults the
 * way validate_args does: 4h for GELU; for SwiGLU int(4h x 2/3 / 64) x 64
 * = int(10922.67 / 64) x 64 = 10880 at h = 4096. */
static void test_shell_script(void)
{
    const char *text =
        "#!/bin/bash\n"
        "GPUS_PER_NODE=8\n"
        "NNODES=${NNODES:-2}\n"
        "MODEL_ARGS=(\n"
        "   --num-layers 32   # blocks\n"
        "   --hidden-size 4096\n"
        "   --num-attention-heads 32\n"
        "   --swiglu\n"
        "   --normalization \"RMSNorm\"\n"
        "   --position-embedding-type rope\n"
        "   --max-position-embeddings 4096\n"
        "   --disable-bias-linear\n"
        ")\n"
        "TRAIN_ARGS=(--micro-batch-size 2 --global-batch-size 256 --seq-length 4096 --bf16)\n"
        "DIST=(--nproc_per_node $GPUS_PER_NODE --nnodes $NNODES)\n"
        "torchrun ${DIST[@]} pretrain_gpt.py \\\n"
        "    ${MODEL_ARGS[@]} \"${TRAIN_ARGS[@]}\" --tokenizer-type NullTokenizer "
        "--vocab-size 32001 --tensor-model-parallel-size 2\n";
    megatron_args_t a;
    err_t e;
    CU_ASSERT_EQUAL_FATAL(read_text(text, &a, &e), 0);
    CU_ASSERT_EQUAL(a.model.n_layers, 32);
    CU_ASSERT_EQUAL(a.model.ffn, 10880);
    CU_ASSERT_TRUE(has_note(&a, "--ffn-hidden-size", NOTE_ASSUMED));
    CU_ASSERT_EQUAL(a.model.vocab, 32256); /* 32001 padded to a multiple of 128 x 2 */
    CU_ASSERT_TRUE(a.model.tied_embeddings); /* Megatron ties unless told not to */
    CU_ASSERT_EQUAL(a.model.dropout, 0.1);   /* Megatron's default, said */
    CU_ASSERT_TRUE(has_note(&a, "--hidden-dropout", NOTE_ASSUMED));
    CU_ASSERT_EQUAL(a.layout.micro_batch, 2);
    CU_ASSERT_EQUAL(a.layout.global_batch, 256);
    CU_ASSERT_EQUAL(a.layout.tp, 2);
    CU_ASSERT_EQUAL(a.layout.precision, PRECISION_BF16);
    CU_ASSERT_EQUAL(a.layout.grad_bytes, 4); /* fp32 main grads with bf16 */
    CU_ASSERT_FALSE(a.opt.overlap_grad_reduce); /* Megatron-LM's default */
    CU_ASSERT_EQUAL(a.world_size, 16);
    megatron_args_free(&a);

    /* The GELU default is 4h; learned positions by default. */
    CU_ASSERT_EQUAL_FATAL(read_text("--num-layers 2 --hidden-size 256 --num-attention-heads 4 "
                                    "--max-position-embeddings 512 --vocab-size 1000 "
                                    "--tokenizer-type NullTokenizer",
                                    &a, &e),
                          0);
    CU_ASSERT_EQUAL(a.model.ffn, 1024);
    CU_ASSERT_EQUAL(a.model.pos, MODEL_POS_LEARNED);
    CU_ASSERT_EQUAL(a.model.vocab, 1024);
    CU_ASSERT_TRUE(a.model.qkv_bias && a.model.mlp_bias); /* add_bias_linear defaults on */
    CU_ASSERT_EQUAL(a.layout.precision, PRECISION_FP32);
    CU_ASSERT_TRUE(has_note(&a, "--bf16", NOTE_ASSUMED));
    megatron_args_free(&a);
}

/* Launch scripts as NVIDIA writes them (Megatron-LM examples/llama/
 * train_llama3_8b_h100_fp8.sh): positional parameters with quoted
 * defaults, arrays grown with +=, items of several words that the unquoted
 * expansion splits, and if / else on string tests; a branch whose test is
 * false is not read, and an if whose test the text cannot decide (a file
 * test) reads no branch and says so. */
static void test_script_control_flow(void)
{
    const char *text =
        "TOKENIZER_ARG=${3:-\"MOCK\"}\n"
        "DTYPE=\"fp8\"\n"
        "LIST=()\n"
        "if [[ \"$TOKENIZER_ARG\" == \"MOCK\" ]] || [[ -z \"$TOKENIZER_ARG\" ]]; then\n"
        "    LIST+=(\n"
        "        \"--tokenizer-type NullTokenizer\"\n"
        "        \"--vocab-size 128256\"\n"
        "    )\n"
        "elif [ \"$DTYPE\" != \"fp8\" ]; then\n"
        "    LIST+=(\"--vocab-size 50000\")\n"
        "else\n"
        "    LIST+=(\"--vocab-size 32000\")\n"
        "fi\n"
        "if [[ \"$DTYPE\" == \"bf16\" ]]; then\n"
        "    LIST+=(--bf16)\n"
        "else\n"
        "    LIST+=(--bf16 \"--fp8-format hybrid\")\n"
        "    if [ -f \"$TOKENIZER_ARG\" ]; then LIST+=(--fp16); fi\n"
        "fi\n"
        "NAME=llama\nNAME+=3\n"
        "if [ ! -f pretrain_gpt.py ]; then\n"
        "    echo missing; exit 1\n"
        "fi\n"
        "torchrun --nproc_per_node 8 pretrain_gpt.py --num-layers 2 --hidden-size 256 "
        "--num-attention-heads 4 --seq-length 512 --max-position-embeddings 512 "
        "--micro-batch-size 1 --global-batch-size 8 --data-cache-path /d/$NAME ${LIST[@]}\n";
    megatron_args_t a;
    err_t e;
    int rc = read_text(text, &a, &e);
    if (rc)
        fprintf(stderr, "%s\n", e.msg);
    CU_ASSERT_EQUAL_FATAL(rc, 0);
    CU_ASSERT_EQUAL(a.model.vocab, 128256); /* the first branch's */
    CU_ASSERT_EQUAL(a.layout.precision, PRECISION_FP8); /* --fp8-format hybrid, two words */
    CU_ASSERT_TRUE(has_note(&a, "if", NOTE_IGNORED)); /* the file tests */
    CU_ASSERT_EQUAL(a.world_size, 8);
    megatron_args_free(&a);
    /* the nested file test read no branch: no --fp16 beside --bf16 */
}

/* The argument block Megatron prints at start-up gives dests and Python
 * values: switches as True/False, unset options as None, lists and enums
 * as Python writes them. */
static void test_argument_block(void)
{
    static const char *const pairs[][2] = {
        {"num_layers", "24"},
        {"hidden_size", "2048"},
        {"num_attention_heads", "16"},
        {"ffn_hidden_size", "8192"},
        {"max_position_embeddings", "2048"},
        {"seq_length", "2048"},
        {"padded_vocab_size", "50304"},
        {"tensor_model_parallel_size", "2"},
        {"pipeline_model_parallel_size", "1"},
        {"sequence_parallel", "True"},
        {"bf16", "True"},
        {"fp16", "False"},
        {"add_bias_linear", "True"},
        {"swiglu", "False"},
        {"num_experts", "None"},
        {"cp_comm_type", "['p2p']"},
        {"attention_backend", "AttnBackend.auto"},
        {"recompute_granularity", "selective"},
        {"seed", "1234"},
        {"lr", "0.0003"},
        {"hidden_dropout", "0.0"},
        {"attention_dropout", "0.0"},
    };
    megatron_args_t a;
    err_t e;
    megatron_args_init(&a, "megatron.log");
    for (size_t i = 0; i < sizeof pairs / sizeof pairs[0]; i++) {
        int rc = megatron_args_set(&a, pairs[i][0], pairs[i][1], &e);
        if (rc)
            fprintf(stderr, "%s\n", e.msg);
        CU_ASSERT_EQUAL(rc, 0);
    }
    CU_ASSERT_EQUAL_FATAL(megatron_args_finish(&a, &e), 0);
    CU_ASSERT_EQUAL(a.model.vocab, 50304);
    CU_ASSERT_EQUAL(a.model.ffn, 8192);
    CU_ASSERT_EQUAL(a.layout.tp, 2);
    CU_ASSERT_TRUE(a.layout.sequence_parallel);
    CU_ASSERT_EQUAL(a.layout.recompute, RECOMPUTE_SELECTIVE);
    CU_ASSERT_TRUE(a.layout.flash_attention);
    CU_ASSERT_TRUE(has_note(&a, "lr", NOTE_IGNORED));
    CU_ASSERT_FALSE(has_note(&a, "cp_comm_type", NOTE_IGNORED)); /* the default */
    megatron_args_free(&a);
}

/* Bad input: one line naming the flag and why. */
static void test_bad_arguments(void)
{
    static const struct {
        const char *text;
        const char *needles[3];
    } cases[] = {
        {"--num-layer 32", {"--num-layer", "did you mean --num-layers"}},
        {"--num-layers thirty", {"--num-layers", "integer"}},
        {"--num-layers $LAYERS", {"--num-layers", "shell variable"}},
        {"--normalization BatchNorm", {"--normalization", "invalid choice", "RMSNorm"}},
        {"--bf16 yes", {"yes", "switch"}},
        {"--hidden-size", {"--hidden-size", "needs a value"}},
        {"--hidden-size 64 --num-attention-heads 4", {"--num-layers", "missing"}},
        {"--num-layers 2 --hidden-size 64 --num-attention-heads 4 --max-position-embeddings 8 "
         "--tokenizer-type HuggingFaceTokenizer",
         {"--vocab-size", "tokenizer"}},
        {"--num-layers 2 --hidden-size 64 --num-attention-heads 3 --max-position-embeddings 8 "
         "--vocab-size 10",
         {"--num-attention-heads", "must divide"}},
        {"--num-layers 4 --hidden-size 64 --num-attention-heads 4 --num-experts 8 "
         "--moe-layer-freq ([0]*1+[1]*2) --max-position-embeddings 8 --vocab-size 10",
         {"--moe-layer-freq", "3 entries", "--num-layers 4"}},
        {"--num-layers 4 --hidden-size 64 --num-attention-heads 4 --num-experts 8 "
         "--moe-layer-freq [0,2] --max-position-embeddings 8 --vocab-size 10",
         {"--moe-layer-freq", "list of 0/1"}},
        {"--num-layers 2 --hidden-size 64 --num-attention-heads 4 --multi-latent-attention "
         "--max-position-embeddings 8 --vocab-size 10",
         {"--multi-latent-attention", "--disable-bias-linear"}},
        {"--num-layers 2 --hidden-size 64 --num-attention-heads 4 --hybrid-layer-pattern M*- "
         "--max-position-embeddings 8 --vocab-size 10",
         {"--hybrid-layer-pattern", "has 3 layers", "--num-layers is 2"}},
        {"--hidden-size 64 --num-attention-heads 4 --hybrid-override-pattern M*X "
         "--max-position-embeddings 8 --vocab-size 10",
         {"--hybrid-override-pattern", "'X'"}},
        {"--hidden-size 64 --num-attention-heads 4 --hybrid-override-pattern M*E "
         "--max-position-embeddings 8 --vocab-size 10",
         {"--hybrid-override-pattern", "no routed experts"}},
        {"--num-layers 4 --hidden-size 64 --num-attention-heads 4 --hybrid-attention-ratio 0.5 "
         "--max-position-embeddings 8 --vocab-size 10",
         {"--hybrid-attention-ratio", "--hybrid-override-pattern"}},
        {"--hidden-size 64 --num-attention-heads 4 --hybrid-override-pattern M*- "
         "--mamba-head-dim 48 --max-position-embeddings 8 --vocab-size 10",
         {"--mamba-head-dim", "must divide"}},
        {"--bf16 --fp16", {"--fp16", "--bf16"}},
        {"torchrun pretrain_gpt.py --seq-length '4096", {"single quote"}},
        {"--bf16 stray", {"stray", "--bf16"}},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        megatron_args_t a;
        err_t e;
        int rc = megatron_args_read(cases[i].text, strlen(cases[i].text), "test", &a, &e);
        const char *const *n = cases[i].needles;
        if (n[2])
            CHECK_ERR(rc, &e, ERR_INPUT, n[0], n[1], n[2]);
        else if (n[1])
            CHECK_ERR(rc, &e, ERR_INPUT, n[0], n[1]);
        else
            CHECK_ERR(rc, &e, ERR_INPUT, n[0]);
        CU_ASSERT_PTR_NULL(strchr(e.msg, '\n'));
        megatron_args_free(&a);
    }
}

/* Flags of older releases keep their meaning: --checkpoint-activations is
 * full recompute (2021), --model-parallel-size is TP (2020),
 * --no-async-tensor-model-parallel-allreduce turns the async TP gradient
 * reduction off. */
static void test_legacy_flags(void)
{
    megatron_args_t a;
    err_t e;
    CU_ASSERT_EQUAL_FATAL(read_text("--num-layers 4 --hidden-size 256 --num-attention-heads 4 "
                                    "--max-position-embeddings 1024 --seq-length 1024 "
                                    "--tokenizer-type GPT2BPETokenizer --model-parallel-size 2 "
                                    "--checkpoint-activations --fp16 "
                                    "--no-async-tensor-model-parallel-allreduce "
                                    "--DDP-impl local",
                                    &a, &e),
                          0);
    CU_ASSERT_EQUAL(a.layout.tp, 2);
    CU_ASSERT_EQUAL(a.layout.recompute, RECOMPUTE_FULL);
    CU_ASSERT_EQUAL(a.model.vocab, 50432); /* 50257 padded to a multiple of 256 */
    CU_ASSERT_FALSE(a.opt.async_tp_grad);
    CU_ASSERT_EQUAL(a.layout.precision, PRECISION_FP16);
    CU_ASSERT_EQUAL(a.layout.grad_bytes, 2);
    megatron_args_free(&a);
}

/* Block recompute keeps its layer count (the first N layers of each
 * virtual stage); uniform recomputes every layer; --recompute-num-layers
 * defaults to 1 as in Megatron. */
static void test_block_recompute(void)
{
    static const struct {
        const char *flags;
        int layers;
    } cases[] = {
        {"--recompute-granularity full --recompute-method block --recompute-num-layers 3", 3},
        {"--recompute-granularity full --recompute-method block", 1},
        {"--recompute-granularity full --recompute-method uniform --recompute-num-layers 2", 0},
        {"--recompute-granularity full", 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char text[512];
        snprintf(text, sizeof text,
                 "--num-layers 8 --hidden-size 256 --num-attention-heads 4 "
                 "--max-position-embeddings 1024 --seq-length 1024 "
                 "--tokenizer-type GPT2BPETokenizer %s",
                 cases[i].flags);
        megatron_args_t a;
        err_t e;
        CU_ASSERT_EQUAL_FATAL(read_text(text, &a, &e), 0);
        CU_ASSERT_EQUAL(a.layout.recompute, RECOMPUTE_FULL);
        CU_ASSERT_EQUAL(a.layout.recompute_layers, cases[i].layers);
        megatron_args_free(&a);
    }
}

/* Megatron adds the embedding and the loss to the layers before dividing
 * them by --num-layers-per-virtual-pipeline-stage (validate_args): Llama 3
 * 405B's 126 layers + 2 on PP 16 are 8 a rank, 2 a virtual stage, so VPP 4
 * with one layer on the first and last virtual stages. Without the two
 * switches 126 does not divide by PP 16 x 2 and is refused. */
static void test_virtual_stages_with_embedding_and_loss(void)
{
    const char *base = "--num-layers 126 --hidden-size 512 --num-attention-heads 8 "
                       "--max-position-embeddings 1024 --seq-length 1024 "
                       "--tokenizer-type GPT2BPETokenizer --pipeline-model-parallel-size 16 "
                       "--num-layers-per-virtual-pipeline-stage 2";
    char text[768];
    snprintf(text, sizeof text,
             "%s --account-for-embedding-in-pipeline-split "
             "--account-for-loss-in-pipeline-split",
             base);
    megatron_args_t a;
    err_t e;
    CU_ASSERT_EQUAL_FATAL(read_text(text, &a, &e), 0);
    CU_ASSERT_EQUAL(a.layout.vpp, 4);
    CU_ASSERT_EQUAL(a.layout.schedule, SCHEDULE_INTERLEAVED);
    CU_ASSERT_EQUAL(a.layout.first_stage_layers, 1);
    CU_ASSERT_EQUAL(a.layout.last_stage_layers, 1);
    megatron_args_free(&a);
    CU_ASSERT_NOT_EQUAL(megatron_args_read(base, strlen(base), "test", &a, &e), 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(e.msg, "--num-layers-per-virtual-pipeline-stage"));
    CU_ASSERT_PTR_NOT_NULL(strstr(e.msg, "126"));
    megatron_args_free(&a);
    /* one layer a virtual stage (NVIDIA's 30-layer 405B proxy on PP 4):
     * VPP 8, the first chunk the embedding alone, the last the loss alone */
    const char *proxy = "--num-layers 30 --hidden-size 512 --num-attention-heads 8 "
                        "--max-position-embeddings 1024 --seq-length 1024 "
                        "--tokenizer-type GPT2BPETokenizer --pipeline-model-parallel-size 4 "
                        "--num-layers-per-virtual-pipeline-stage 1 "
                        "--account-for-embedding-in-pipeline-split "
                        "--account-for-loss-in-pipeline-split";
    CU_ASSERT_EQUAL_FATAL(read_text(proxy, &a, &e), 0);
    CU_ASSERT_EQUAL(a.layout.vpp, 8);
    CU_ASSERT_EQUAL(a.layout.first_stage_layers, LAYOUT_STAGE_EMPTY);
    CU_ASSERT_EQUAL(a.layout.last_stage_layers, LAYOUT_STAGE_EMPTY);
    megatron_args_free(&a);
}

/* DeepSeek-V3 as Megatron-LM arguments (the shape of Megatron-Bridge's
 * deepseek_v3 recipe: MLA with q/kv LoRA ranks 1536/512, 3 dense blocks
 * then 58 MoE blocks of 256 experts of 2048 plus one shared expert, top 8,
 * one MTP layer, no biases, untied, RMSNorm, --qk-layernorm for the latent
 * norms). The main model is HF's 671,026,419,200 parameters less the
 * e_score_correction_bias vectors (a buffer in Megatron-Core: 58 x 256 =
 * 14,848) plus the vocabulary padding (129280 is already a multiple of 128
 * x TP 2 = 256, so none). */
static void test_deepseek_v3_moe(void)
{
    const char *text =
        "--num-layers 61 --hidden-size 7168 --ffn-hidden-size 18432 --num-attention-heads 128 "
        "--multi-latent-attention --q-lora-rank 1536 --kv-lora-rank 512 --qk-head-dim 128 "
        "--qk-pos-emb-head-dim 64 --v-head-dim 128 --qk-layernorm --swiglu "
        "--normalization RMSNorm --position-embedding-type rope --disable-bias-linear "
        "--untie-embeddings-and-output-weights --max-position-embeddings 163840 "
        "--num-experts 256 --moe-router-topk 8 --moe-ffn-hidden-size 2048 "
        "--moe-shared-expert-intermediate-size 2048 --moe-layer-freq ([0]*3+[1]*58) "
        "--moe-router-enable-expert-bias --mtp-num-layers 1 --tokenizer-type NullTokenizer "
        "--vocab-size 129280 --tensor-model-parallel-size 2 --pipeline-model-parallel-size 8 "
        "--expert-model-parallel-size 64 --expert-tensor-parallel-size 1 --seq-length 4096 "
        "--bf16 --attention-dropout 0 --hidden-dropout 0";
    megatron_args_t a;
    err_t e;
    CU_ASSERT_EQUAL_FATAL(read_text(text, &a, &e), 0);
    model_params_t p;
    model_params(&a.model, &p);
    CU_ASSERT_EQUAL(a.model.moe.n_moe_layers, 58);
    CU_ASSERT_FALSE(model_moe_layer(&a.model, 2));
    CU_ASSERT_TRUE(model_moe_layer(&a.model, 3));
    CHECK_REL(p.total, 671026419200.0 - 58 * 256, 0);
    CHECK_REL(p.mtp, 11610068224.0 - 256, 0);
    CU_ASSERT_EQUAL(a.layout.ep, 64);
    CU_ASSERT_EQUAL(a.layout.etp, 1);
    CU_ASSERT_TRUE(has_note(&a, "--moe-router-enable-expert-bias", NOTE_ASSUMED));
    /* Megatron's MoE defaults: the allgather dispatcher, one GEMM per
     * expert, nothing fused or overlapped */
    CU_ASSERT_EQUAL(a.opt.moe.dispatcher, MOE_DISPATCH_ALLGATHER);
    CU_ASSERT_FALSE(a.opt.moe.grouped_gemm || a.opt.moe.a2a_overlap);
    megatron_args_free(&a);
    /* Megatron-Bridge's DeepSeek-V3 settings as flags, written onto a
     * preset's options; the imbalance stays the run's */
    CU_ASSERT_EQUAL_FATAL(read_text("--num-layers 4 --hidden-size 64 --num-attention-heads 4 "
                                    "--num-experts 4 --vocab-size 128 "
                                    "--max-position-embeddings 8 "
                                    "--moe-token-dispatcher-type flex --moe-grouped-gemm "
                                    "--moe-permute-fusion --moe-shared-expert-overlap "
                                    "--overlap-moe-expert-parallel-comm",
                                    &a, &e),
                          0);
    sim_options_t o;
    sim_options_default(&o);
    o.moe.imbalance = 1.2;
    megatron_args_options(&a, &o);
    CU_ASSERT_EQUAL(o.moe.dispatcher, MOE_DISPATCH_DEEPEP);
    CU_ASSERT_TRUE(o.moe.grouped_gemm && o.moe.permute_fusion && o.moe.shared_overlap &&
                   o.moe.a2a_overlap);
    CU_ASSERT_EQUAL(o.moe.imbalance, 1.2);
    /* no router fusion or CUDA graph unless the file asks (library defaults) */
    CU_ASSERT_FALSE(o.host.router_fusion);
    CU_ASSERT_EQUAL(o.host.graph_scopes, 0u);
    megatron_args_free(&a);
    /* the router fused and partial CUDA graphs, as the DeepSeek-V3 GB200
     * guide launches them; a scope without --cuda-graph-impl captures
     * nothing; full_iteration captures the whole step */
    static const struct {
        const char *flags;
        unsigned scopes;
    } graphs[] = {
        {"--moe-router-fusion --cuda-graph-impl transformer_engine --cuda-graph-scope attn "
         "moe_router moe_preprocess",
         HOST_GRAPH_ATTN | HOST_GRAPH_MOE_ROUTER | HOST_GRAPH_MOE_PREPROCESS},
        {"--moe-router-fusion --cuda-graph-scope attn", 0},
        {"--moe-router-fusion --cuda-graph-impl full_iteration", HOST_GRAPH_FULL},
    };
    for (size_t g = 0; g < sizeof graphs / sizeof graphs[0]; g++) {
        char flags[512];
        snprintf(flags, sizeof flags,
                 "--num-layers 4 --hidden-size 64 --num-attention-heads 4 --num-experts 4 "
                 "--vocab-size 128 --max-position-embeddings 8 %s",
                 graphs[g].flags);
        CU_ASSERT_EQUAL_FATAL(read_text(flags, &a, &e), 0);
        sim_options_default(&o);
        megatron_args_options(&a, &o);
        CU_ASSERT_TRUE(o.host.router_fusion);
        CU_ASSERT_EQUAL(o.host.graph_scopes, graphs[g].scopes);
        megatron_args_free(&a);
    }
    CU_ASSERT_EQUAL(read_text("--num-layers 4 --hidden-size 64 --num-attention-heads 4 "
                              "--num-experts 4 --vocab-size 128 --max-position-embeddings 8 "
                              "--cuda-graph-impl transformer_engine "
                              "--cuda-graph-scope moe_preprocess",
                              &a, &e),
                    ERR_INPUT);
    CU_ASSERT_PTR_NOT_NULL(strstr(e.msg, "--cuda-graph-scope: moe_preprocess is captured with"));
    megatron_args_free(&a);
    CU_ASSERT_EQUAL(read_text("--num-layers 4 --hidden-size 64 --num-attention-heads 4 "
                              "--num-experts 4 --moe-token-dispatcher-type nccl",
                              &a, &e),
                    ERR_INPUT);
    CU_ASSERT_PTR_NOT_NULL(strstr(e.msg, "--moe-token-dispatcher-type"));
    megatron_args_free(&a);
    /* The same pattern as an integer: every block MoE with --moe-layer-freq 1,
     * every other with 2 (blocks 0, 2, ...). */
    CU_ASSERT_EQUAL_FATAL(read_text("--num-layers 4 --hidden-size 64 --num-attention-heads 4 "
                                    "--num-experts 4 --moe-layer-freq 2 --disable-bias-linear "
                                    "--max-position-embeddings 8 --vocab-size 128 --qk-layernorm "
                                    "--normalization RMSNorm",
                                    &a, &e),
                          0);
    CU_ASSERT_EQUAL(a.model.moe.n_moe_layers, 2);
    CU_ASSERT_TRUE(model_moe_layer(&a.model, 0) && model_moe_layer(&a.model, 2));
    CU_ASSERT_EQUAL(a.model.moe.expert_ffn, 256); /* --ffn-hidden-size default 4h */
    CU_ASSERT_EQUAL(a.model.qk_norm, MODEL_QK_NORM_HEAD);
    megatron_args_free(&a);
}

/* Offload flags: the GB200 recipes' --cpu-offloading-num-layers (activation
 * offload of N blocks per stage) and Megatron's optimizer CPU offload with a
 * fraction. */
static void test_offload_flags(void)
{
    megatron_args_t a;
    err_t e;
    CU_ASSERT_EQUAL_FATAL(read_text("--num-layers 80 --hidden-size 8192 --num-attention-heads 64 "
                                    "--max-position-embeddings 8192 --vocab-size 128256 "
                                    "--cpu-offloading-num-layers 40 --optimizer-cpu-offload "
                                    "--optimizer-offload-fraction 0.5 --use-distributed-optimizer",
                                    &a, &e),
                          0);
    CU_ASSERT_EQUAL(a.layout.offload, LAYOUT_OFFLOAD_ACTIVATIONS | LAYOUT_OFFLOAD_OPTIMIZER);
    CU_ASSERT_EQUAL(a.layout.offload_act_layers, 40);
    CHECK_REL(a.layout.offload_fraction, 0.5, 0);
    megatron_args_free(&a);
}

/* Precision recipes: --fp8-recipe picks the scaling (delayed stays the
 * plain fp8 the framework preset names), --fp4-format NVFP4; and the
 * options the command line decides go onto a preset's options, leaving
 * the rest (kernels, loss, fp8 caching) the preset's. */
static void test_recipes_and_options(void)
{
    static const struct {
        const char *flags;
        precision_t want;
    } cases[] = {
        {"--bf16 --fp8-format hybrid", PRECISION_FP8},
        {"--bf16 --fp8-format hybrid --fp8-recipe delayed", PRECISION_FP8},
        {"--bf16 --fp8-format hybrid --fp8-recipe tensorwise", PRECISION_FP8_CS},
        {"--bf16 --fp8-format e4m3 --fp8-recipe mxfp8", PRECISION_MXFP8},
        {"--bf16 --fp8-format e4m3 --fp8-recipe blockwise", PRECISION_FP8_BLOCK},
        {"--bf16 --fp4-format e2m1", PRECISION_NVFP4},
        {"--bf16 --fp8-recipe tensorwise", PRECISION_BF16}, /* no fp8: the recipe is moot */
    };
    const char *model = "--num-layers 2 --hidden-size 64 --num-attention-heads 4 "
                        "--max-position-embeddings 8 --vocab-size 128 ";
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char text[512];
        snprintf(text, sizeof text, "%s%s", model, cases[i].flags);
        megatron_args_t a;
        err_t e;
        CU_ASSERT_EQUAL_FATAL(read_text(text, &a, &e), 0);
        if (a.layout.precision != cases[i].want)
            fprintf(stderr, "%s: precision %d, want %d\n", cases[i].flags, a.layout.precision,
                    cases[i].want);
        CU_ASSERT_EQUAL(a.layout.precision, cases[i].want);
        megatron_args_free(&a);
    }
    megatron_args_t a;
    err_t e;
    char text[512];
    snprintf(text, sizeof text, "%s--bf16 --overlap-grad-reduce --fp8-param-gather "
             "--ddp-bucket-size 1000000", model);
    CU_ASSERT_EQUAL_FATAL(read_text(text, &a, &e), 0);
    sim_options_t o;
    memset(&o, 0, sizeof o);
    o.overlap_param_gather = true; /* the preset's; Megatron's default is off */
    o.ce_fwd_bytes = 123;
    snprintf(o.attn_kernel, sizeof o.attn_kernel, "cudnn");
    megatron_args_options(&a, &o);
    CU_ASSERT_TRUE(o.overlap_grad_reduce);
    CU_ASSERT_FALSE(o.overlap_param_gather);
    CU_ASSERT_TRUE(o.fp8_param_gather);
    CHECK_REL(o.bucket_params, 1e6, 0);
    CHECK_REL(o.ce_fwd_bytes, 123, 0);
    CU_ASSERT_STRING_EQUAL(o.attn_kernel, "cudnn");
    megatron_args_free(&a);
}


/* Issue 35.2: a 364-byte script whose variable doubles itself 40 times
 * (a terabyte) exhausted memory. Every byte the reader makes is counted:
 * past MEGATRON_MAX_EXPANDED_BYTES, or MEGATRON_MAX_WORDS words in one
 * list, the text is refused at its line; a real script stays far below. */
static void test_expansion_bounded(void)
{
    static const char *const growers[] = {"A=\"$A$A\"\n", "A=(${A[@]} ${A[@]})\n", "A+=$A\n"};
    for (size_t g = 0; g < sizeof growers / sizeof growers[0]; g++) {
        char text[2048] = "A=xy\n";
        for (int i = 0; i < 40; i++)
            strcat(text, growers[g]);
        strcat(text, "torchrun pretrain_gpt.py --num-layers 2 --hidden-size $A\n");
        megatron_args_t a;
        megatron_args_init(&a, "grow.sh");
        err_t e;
        int rc = megatron_args_parse_text(&a, text, strlen(text), &e);
        CHECK_ERR(rc, &e, ERR_INPUT, "grow.sh: line ", "expanding the variables");
        megatron_args_free(&a);
    }
    /* an empty quoted word has no text at all (fuzz_shell found the
     * memcpy from NULL it made; make asan fails on it) */
    {
        const char *text = "A=\"\"\nB=''\necho \"\" \"$A\" $B\n";
        megatron_args_t a;
        megatron_args_init(&a, "empty.sh");
        err_t e;
        (void)megatron_args_parse_text(&a, text, strlen(text), &e);
        megatron_args_free(&a);
    }
    /* a real launch script: a few kilobytes made */
    char *script = slurp(fixture("megatron/llama3_8b_script_branches.txt"));
    CU_ASSERT_PTR_NOT_NULL_FATAL(script);
    {
        megatron_args_t a;
        megatron_args_init(&a, "script");
        err_t e;
        CU_ASSERT_EQUAL(megatron_args_parse_text(&a, script, strlen(script), &e), 0);
        CU_ASSERT_TRUE(a.expanded_bytes > 0 && a.expanded_bytes < 64 * 1024);
        megatron_args_free(&a);
        free(script);
    }
}

TEST_SUITE(suite_megatron_args, "megatron_args", TEST(test_llama3_70b_script),
           TEST(test_shell_script), TEST(test_script_control_flow), TEST(test_argument_block), TEST(test_bad_arguments),
           TEST(test_legacy_flags), TEST(test_deepseek_v3_moe), TEST(test_offload_flags),
           TEST(test_recipes_and_options), TEST(test_block_recompute),
           TEST(test_virtual_stages_with_embedding_and_loss), TEST(test_expansion_bounded));
