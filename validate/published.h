/* published: replay published training runs through the simulator.
 *
 * A published run is a row of a CSV in the schema of
 * tests/fixtures/validation/throughput.csv (../shared/validation): the
 * model, the GPUs, the parallel layout, the framework and version, and what
 * the run measured. One set of row-independent rules turns a row's
 * configuration columns into a simulation; the result columns are read only
 * to compare. The rules, in order:
 *
 *  1. Model: the architecture columns (layers, hidden, heads, kv_heads,
 *     ffn, vocab) when given - on the block of the catalog model of that
 *     name when its layers and hidden agree (its norms, MLP, positions,
 *     biases; its KV heads, FFN and vocabulary where the columns are
 *     blank), else a name of a Llama-style family (llama, mistral, qwen,
 *     deepseek, gemma, ...) is a Llama block (RMSNorm, SwiGLU, RoPE,
 *     untied embeddings, no biases), any other a Megatron GPT block
 *     (LayerNorm, GELU, learned positions, tied embeddings, biases, ffn 4 x
 *     hidden when blank); blank columns: the catalog model whose name or
 *     alias matches the model column (a released variant, "-Instruct",
 *     "-Base", "-Chat", "-hf", names its base model). A blank vocabulary is GPT-2's
 *     50257 padded as Megatron pads it (a multiple of 128 x TP). The columns
 *     cannot describe experts: a mixture-of-experts row (EP > 1 in cp_or_sp
 *     or "MoE" in its notes) whose model names a catalog MoE model with the
 *     same layers and hidden size runs that model.
 *  2. GPU: the catalog GPU whose aliases match the gpu_type text (see
 *     topologies/catalog/gpus.json); the catalog cluster its parentheses
 *     name ("(DGX A100)", "(Grand Teton)", an AWS instance type "p5.48xlarge"
 *     for aws-p5), else its default cluster; a network it names ("RoCE
 *     400G", "EFA", "NDR") replaces the cluster's scale-out fabric, at the
 *     speed a number standing alone before "G"/"Gb" gives ("RoCE 400 Gb/s";
 *     the 100 of "H100" is no speed); the GPUs per node it states ("4 per
 *     node", "8 GPUs per node") replace the cluster's.
 *  3. Framework: the preset whose match patterns fit the framework column
 *     (and source title) (sim/catalog/frameworks.json); its defaults fill
 *     what the row leaves out. A version with no preset of its own ("NeMo
 *     25.07", "Megatron-Bridge / NeMo 26.02", torchtitan dated by its
 *     source title) runs the family's latest preset released no later
 *     (the oldest for a version before them all, the latest when no
 *     version is named: "Megatron-LM" alone is today's Megatron-Core; a
 *     source title's arXiv identifier dates it, "arXiv:2402.15627" February
 *     2024), and
 *     the row's assumptions say which. Flags the notes name: Megatron's
 *     --overlap-grad-reduce, --overlap-param-gather, --use-distributed-
 *     optimizer, --tp-comm-overlap, --sequence-parallel; NeMo's
 *     "tp_comm_overlap=true" (ub_tp_comm_overlap in NeMo 1.0) turns
 *     Transformer Engine's TP overlap on, with TE's default roles where the
 *     preset has no userbuffers setting for the model, "=false" off. A
 *     framework no preset family names
 *     (a launcher or trainer: the Hugging Face Trainer, Accelerate; an
 *     in-house framework) runs the engine its zero_or_fsdp column names:
 *     ZeRO or DeepSpeed -> deepspeed, FSDP -> fsdp (torchtitan's FSDP2 when
 *     the row also has TP, PP or CP; FSDP beside a ZeRO stage, "FSDP
 *     (ZeRO-2 style)", is FSDP sharding to that stage; ZeRO in fp8 or fp4,
 *     which DeepSpeed does not train, is Megatron-Core's), DDP -> pytorch-ddp;
 *     with none named
 *     (or DDP with the model split) Megatron-LM; each engine's latest
 *     preset; the row says so. Such a stand-in lends its parallelism, not
 *     its model code: K/V heads stay grouped (torchtitan's Llama repeats
 *     them). An empty framework column is refused.
 *  4. Layout: tp, pp; CP and EP from cp_or_sp ("CP=2; EP=8", "CP 2",
 *     "cp2", "context parallel 2"); sequence parallelism when the column
 *     says SP or the preset runs SP with TP; virtual stages from
 *     vpp_or_interleave ("VP=6", "VPP=6", "(=3 chunks per PP rank)",
 *     "interleaved (3)", a bare number; "interleaved" alone under a
 *     Megatron-LM preset, which has no default count, leaves the count to
 *     rule 5; "DualPipe" as DualPipeV where the
 *     preset runs it, else 1F1B, said; "GPipe"); ZeRO/FSDP from zero_or_fsdp
 *     (ZeRO-N, "ZeRO stage N", FSDP = stage 3, SHARD_GRAD_OP = stage 2,
 *     "distributed optimizer"; "offload" there: the optimizer on the host,
 *     with "param" the parameters too, "NVMe" on drives); recompute from
 *     act_recompute (full, or any
 *     "yes", "AC", "activation checkpointing"; "N layers" with it is
 *     Megatron's block recompute of N layers; selective = attention core,
 *     or named modules ("RMSNorm and MLA up-projections recomputed", as
 *     Megatron's --recompute-modules); blockwise fp8 also from DeepSeek-V3's
 *     "1x128 tiles, 128x128 blocks"; NICs per node from "N x <fabric>";
 *     InfiniBand's generation from its speed ("200 Gb/s InfiniBand": HDR);
 *     op-level = torchtitan's selective policy; "no", "none", "off" = none;
 *     blank = the preset's default); precision from its column (fp16,
 *     bf16, fp32/tf32, fp8 and its scaling recipe: "current scaling",
 *     "tensorwise" or "dynamic" per-tensor current scaling, "delayed" or
 *     "amax_history" Transformer Engine's delayed scaling, "rowwise",
 *     "blockwise", MXFP8, else the preset's own fp8; NVFP4 or a bare FP4); the batch from
 *     micro_batch (its first number: "mbs=1") and global_batch_seqs as the
 *     preset's batch rule reads them, a batch given in tokens ("4,194,304
 *     tokens", or global_batch_tokens alone) divided by the sequence; a
 *     batch that does not divide by micro-batch x DP (rounded in the
 *     writing: "1,538" on DP 12 with micro-batch 4) runs as the nearest
 *     multiple, said. Numbers read with thousands separators ("14,080") and a k/M/B
 *     suffix ("1.2k" tokens/s is 1,200), binary for sequence lengths and
 *     batches of tokens ("8K" is 8,192, "4M tokens" 4,194,304). A GPU
 *     count given as nodes ("48 nodes") is that many of the row's nodes
 *     ("8 nodes (64 GPUs)": the GPUs); a dp column that disagrees with the
 *     GPU count is said, the GPU count used. Pipeline stages that do not divide
 *     the layers get an uneven first and last stage with the embedding and
 *     the loss counted as one layer each (Megatron), or the framework's own
 *     split (DeepSpeed's balanced partition; with notes naming
 *     'type:transformer|embedding', over the layers and both embeddings).
 *  5. Open choices: a row that gives no micro-batch is run with the
 *     fastest micro-batch, and the recompute and interleaving it leaves
 *     blank (and sequence parallelism, with TP under a preset that takes
 *     it as an argument, when the row does not say), that fit, as a tuned
 *     run would (what it gives stays, unless nothing fits with it); the
 *     row says so. A row whose layout is given whole is timed as given,
 *     and its memory checked: one that does not fit is marked, not
 *     refused (pub_row_t fits).
 *  6. Metric: tokens/s per GPU where the row has it, else seconds per
 *     iteration, else TFLOP/s per GPU on the row's own basis (hardware
 *     FLOPs with recompute, or model FLOPs), else MFU (HFU) as that share
 *     of the GPU's dense bf16 peak (fp8 peak where the row says "FP8
 *     peak"), else a throughput or step time written in other_result
 *     ("19.561 samples/s", "85,459 tokens/s (all GPUs)", "104.7 s/iter";
 *     the whole job's unless it says per GPU). error = predicted throughput /
 *     published - 1 (for a step time, published / predicted - 1).
 *
 * Rows the rules cannot replay (an unknown GPU or model, a layout the
 * framework would refuse, a framework no preset family names) are
 * reported as skipped with the reason, and count as failed (100% error) in
 * the summary.
 */
#ifndef SCALEPLAN_VALIDATE_PUBLISHED_H
#define SCALEPLAN_VALIDATE_PUBLISHED_H

#include <stdbool.h>

#include "common/catalog.h"
#include "common/error.h"
#include "models/layout.h"
#include "models/model.h"
#include "profile/profile.h"

typedef enum { PUB_TOKENS_PER_S = 0, PUB_STEP_TIME, PUB_HW_TFLOPS, PUB_MODEL_TFLOPS } pub_metric_t;

typedef struct {
    char row_id[16];
    char group[40];      /* the framework preset: errors are summarised per group */
    char model[64];      /* the row's model column */
    char gpu[32];        /* catalog GPU the gpu_type column names */
    char profile_gpu[32]; /* (a name, not a path: holds GPU_NAME_MAX, checked where set)
                            the GPU of the cluster it ran on, whose profile priced
                            it (a variant of gpu: v100-dgx2h for a DGX-2H's V100) */
    char layout[200];    /* layout_describe of what was simulated */
    int gpus;
    pub_metric_t metric;
    double published;    /* in the metric's unit */
    double predicted;
    double error;        /* see rule 6 */
    double published_tps_gpu, predicted_tps_gpu; /* tokens/s per GPU (for ordering) */
    char model_key[64];  /* model identity for ordering pairs (name + size) */
    bool skipped;
    char reason[240];    /* why it was skipped */
    bool moe;            /* a mixture-of-experts row: EP > 1 in its columns, or
                            its model (the catalog's of that name, or the one
                            replayed) has experts; known for a skipped row too */
    char assumed[640];   /* choices the row left open and how they were made
                            ("; " between them) */
    bool open_choices;   /* micro-batch, recompute and interleaving were the
                            fastest that fit (rule 5) */
    bool fits;           /* the simulated layout fits in the GPU's memory (and
                            the host's with offload); a row that does not is
                            timed all the same (its layout is the row's) */
    double memory_gib;   /* the simulated peak per GPU, GiB (NAN when skipped) */
    double capacity_gib; /* the GPU's memory, GiB (NAN when skipped) */
    /* what was simulated, for re-use (e.g. ranking the row's layout in a
     * layout search): valid when not skipped */
    model_t sim_model;
    layout_t sim_layout;
    char framework[32];  /* preset name */
    char cluster[64];    /* catalog cluster name */
} pub_row_t;

typedef struct {
    const profile_t *profile; /* replaces the default profile for its GPU; may be NULL */
    bool progress;            /* progress bar on stderr */
    catalog_t *catalog;       /* where names are looked up; NULL: the replay
                                 parses each catalog file once for itself */
    const char *only_gpu;     /* replay only the rows on this catalog GPU (the
                                 others are skipped, reason "another GPU");
                                 NULL: every row */
} pub_options_t;

/* Replay every row of csv_path. *rows is a heap array (freed by the
 * caller). A file needs the columns row_id, model, gpu_type and framework
 * and one result column (tokens_per_sec_per_gpu, sec_per_iter,
 * tflops_per_gpu, mfu_pct or hfu_pct); the schema's other columns may be
 * left out and read as empty. ERR_INPUT for an unreadable CSV or a missing
 * column (named). */
int pub_replay(const char *csv_path, const pub_options_t *opt, pub_row_t **rows, int *n,
               err_t *err);

const char *pub_metric_name(pub_metric_t m);

/* Whether a row is of a dense model: not a mixture-of-experts row
 * (pub_row_t moe; a skipped one included), no expert parallelism, and not
 * skipped for needing experts. */
bool pub_row_dense(const pub_row_t *r);

/* Median and 90th percentile of |error| over rows (skipped ones count as
 * 100%), keeping those for which keep(row) is true (NULL = all). */
void pub_summary(const pub_row_t *rows, int n, bool (*keep)(const pub_row_t *), double *median,
                 double *p90, int *count);

typedef struct {
    char group[40];
    int rows, skipped;
    double median, p90, worst;
} pub_group_t;

/* One summary per group, in the order groups first appear. *groups is a
 * heap array. ERR_RUNTIME on OOM. */
int pub_groups(const pub_row_t *rows, int n, pub_group_t **groups, int *n_groups, err_t *err);

/* Pairs of rows of one model on one GPU count whose published tokens/s per
 * GPU differ by more than min_gap (0.03 = 3%): how many, and how many the
 * simulator orders the other way round. *wrong lists those (heap, pairs of
 * row indices); may be NULL. */
int pub_ordering(const pub_row_t *rows, int n, double min_gap, int *pairs, int *misordered,
                 int **wrong, err_t *err);

#endif
