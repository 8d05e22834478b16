#include "reports/glossary.h"

#include <ctype.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

/* Sources of the framework names: Megatron-LM megatron/training/arguments.py;
 * NeMo 2 / Megatron Bridge: megatron.core ModelParallelConfig and
 * TransformerConfig fields, which both recipes set; DeepSpeed's ds_config
 * (deepspeed/runtime/config.py, zero/config.py) and PipelineModule;
 * torchtitan torchtitan/config/job_config.py (section.key). */
static const glossary_entry_t ENTRIES[] = {
    {"TP", "tensor-parallel GPUs",
     "Tensor parallelism (TP): the matrices of every layer are split over this many GPUs, which "
     "exchange activations inside each layer, so TP belongs inside one NVLink domain.",
     "--tensor-model-parallel-size", "tensor_model_parallel_size", "tensor_parallel.autotp_size",
     "parallelism.tensor_parallel_degree"},
    {"CP", "context-parallel GPUs",
     "Context parallelism (CP): each sequence is split over this many GPUs, which exchange keys "
     "and values in attention; it keeps long-sequence activations in memory.",
     "--context-parallel-size", "context_parallel_size",
     "sequence_parallel_size (Ulysses, Megatron-DeepSpeed --ds-sequence-parallel-size)",
     "parallelism.context_parallel_degree"},
    {"PP", "pipeline stages",
     "Pipeline parallelism (PP): the layers are cut into this many stages on different GPUs, and "
     "micro-batches flow through them; the idle fill and drain is the pipeline bubble.",
     "--pipeline-model-parallel-size", "pipeline_model_parallel_size",
     "PipelineModule(num_stages=N) (pipeline_parallel_degree in Megatron-DeepSpeed)",
     "parallelism.pipeline_parallel_degree"},
    {"VPP", "virtual stages per pipeline GPU (interleaved 1F1B)",
     "Virtual pipeline (VPP): each pipeline GPU holds this many non-adjacent chunks of layers and "
     "runs the interleaved 1F1B schedule, which shrinks the bubble by that factor for more "
     "point-to-point traffic.",
     "--num-virtual-stages-per-pipeline-rank (older: --virtual-pipeline-model-parallel-size)",
     "virtual_pipeline_model_parallel_size", "-",
     "parallelism.pipeline_parallel_schedule = \"Interleaved1F1B\" with "
     "parallelism.pipeline_parallel_layers_per_stage"},
    {"DualPipeV", "DeepSeek's DualPipeV pipeline schedule",
     "DualPipeV: DeepSeek-V3's pipeline schedule, two stages per GPU folded in a V, which overlaps "
     "one micro-batch's forward with another's backward.",
     "-", "-", "-", "parallelism.pipeline_parallel_schedule = \"DualPipeV\""},
    {"GPipe", "GPipe schedule (all forwards, then all backwards)",
     "GPipe: the pipeline schedule that runs every micro-batch's forward before any backward; "
     "simple, with the activations of all micro-batches held at once.",
     "-", "-", "-", "parallelism.pipeline_parallel_schedule = \"GPipe\""},
    {"EP", "expert-parallel GPUs",
     "Expert parallelism (EP): a mixture-of-experts layer's experts are spread over this many GPUs, "
     "and tokens travel to their experts and back by all-to-all.",
     "--expert-model-parallel-size", "expert_model_parallel_size", "ep_size (deepspeed.moe.layer.MoE)",
     "parallelism.expert_parallel_degree"},
    {"ETP", "tensor-parallel GPUs inside each expert",
     "Expert tensor parallelism (ETP): each expert's matrices split over this many GPUs, set apart "
     "from the dense layers' TP.",
     "--expert-tensor-parallel-size", "expert_tensor_parallel_size", "-",
     "parallelism.expert_tensor_parallel_degree"},
    {"DP", "data-parallel replicas",
     "Data parallelism (DP): this many copies of the model (GPUs / (TP x CP x PP)) each train on "
     "their share of the batch and average gradients every step.",
     "derived: GPUs / (TP x PP x CP)", "derived (data_parallel_size)", "derived",
     "parallelism.data_parallel_shard_degree x parallelism.data_parallel_replicate_degree"},
    {"mb", "micro-batch, sequences per GPU per pass",
     "Micro-batch (mb): sequences one GPU processes in one forward and backward pass; the step "
     "accumulates gradients over global batch / (mb x DP) of them.",
     "--micro-batch-size", "micro_batch_size", "train_micro_batch_size_per_gpu",
     "training.local_batch_size (parallelism.pipeline_parallel_microbatch_size with PP)"},
    {"gb", "global batch, sequences per optimizer step",
     "Global batch (gb): sequences in one optimizer step over all replicas.", "--global-batch-size",
     "global_batch_size", "train_batch_size", "training.global_batch_size"},
    {"SP", "sequence parallel (activations outside TP's matrices split over TP)",
     "Sequence parallelism (SP): with TP, the layer norms and dropouts work on a 1/TP slice of the "
     "sequence, which saves activation memory at the same communication volume.",
     "--sequence-parallel", "sequence_parallel", "-", "on with TP (parallelism.tensor_parallel_degree)"},
    {"dist-opt", "distributed optimizer (optimizer state sharded over DP)",
     "Distributed optimizer (dist-opt): the optimizer state and master weights are sharded over "
     "the data-parallel replicas, as ZeRO-1 does; weights stay whole on each GPU.",
     "--use-distributed-optimizer", "use_distributed_optimizer", "zero_optimization.stage = 1",
     "(FSDP shards more: parallelism.data_parallel_shard_degree)"},
    {"ZeRO-1", "optimizer state sharded over DP",
     "ZeRO-1: the optimizer state is sharded over the data-parallel replicas.",
     "--use-distributed-optimizer", "use_distributed_optimizer", "zero_optimization.stage = 1", "-"},
    {"ZeRO-2", "optimizer state and gradients sharded over DP",
     "ZeRO-2: the optimizer state and the gradients are sharded over the data-parallel replicas.",
     "-", "-", "zero_optimization.stage = 2", "-"},
    {"FSDP", "fully sharded data parallel (ZeRO-3)",
     "Fully sharded data parallelism (FSDP, ZeRO-3): weights, gradients and optimizer state are all "
     "sharded over the replicas, and each layer's weights are gathered just before use.",
     "--use-megatron-fsdp --data-parallel-sharding-strategy optim_grads_params (or --use-torch-fsdp2)",
     "use_megatron_fsdp, data_parallel_sharding_strategy",
     "zero_optimization.stage = 3", "parallelism.data_parallel_shard_degree"},
    {"rc=full", "full activation recompute (:N = the first N layers of each chunk)",
     "Full recompute (rc=full): only each layer's input is kept and the whole layer's forward runs "
     "again in the backward pass; rc=full:N recomputes only the first N layers of each pipeline "
     "chunk (the block method).",
     "--recompute-granularity full --recompute-method block --recompute-num-layers N",
     "recompute_granularity, recompute_method, recompute_num_layers",
     "activation_checkpointing (with deepspeed.checkpointing.checkpoint)",
     "activation_checkpoint.mode = \"full\""},
    {"rc=sel", "selective recompute (attention scores; named modules in brackets)",
     "Selective recompute (rc=sel): only the cheap, memory-hungry parts are recomputed: the "
     "attention scores by default, or the modules named in brackets (attn, norm, mlp, act, moe, "
     "up, shared).",
     "--recompute-granularity selective --recompute-modules", "recompute_granularity, recompute_modules",
     "-", "activation_checkpoint.mode = \"selective\""},
    {"rc=ops", "op-level selective recompute (torchtitan's policy)",
     "Op-level recompute (rc=ops): torchtitan's selective policy, which saves the outputs of "
     "matrix multiplies and recomputes the cheap operations between them.",
     "-", "-", "-", "activation_checkpoint.mode = \"selective\", selective_ac_option = \"op\""},
    {"fp8", "FP8 matrix multiplies", "FP8: matrix multiplies in 8-bit floating point with scaling "
     "(Transformer Engine recipes); bf16 when not shown.",
     "--fp8-format hybrid", "fp8 (fp8_recipe)", "-", "float8 converters (model.converters)"},
    {"offload", "state kept in host memory",
     "Offload: the named state (optimizer, params, activations) lives in host memory and moves to "
     "the GPU when used.",
     "--optimizer-cpu-offload", "optimizer_cpu_offload", "zero_optimization.offload_optimizer",
     "-"},
    {"MFU", "model FLOPs utilization, against the bf16 dense peak",
     "Model FLOPs utilization (MFU): the model's FLOPs per second (3 x forward, Megatron's count) "
     "per GPU over the GPU's dense bf16 peak, whatever precision the run uses.",
     "-", "-", "-", "-"},
    {"HFU", "hardware FLOPs utilization, MFU with recomputed work counted",
     "Hardware FLOPs utilization (HFU): as MFU, but counting the FLOPs activation recompute "
     "spends again.", "-", "-", "-", "-"},
    {"P10", "1 run in 10 finishes by then", NULL, NULL, NULL, NULL, NULL},
    {"P50", "median over the simulated runs",
     "P10, P50, P90: the 10th percentile, the median and the 90th percentile over the Monte "
     "Carlo runs of failures and restarts; 9 runs in 10 finish by P90.", "-", "-", "-", "-"},
    {"P90", "9 runs in 10 finish by then", NULL, NULL, NULL, NULL, NULL},
    {"MTBF", "mean time between the job's interruptions",
     "MTBF: the mean time between interruptions of the whole job (every GPU, node and link it "
     "uses), from the failure rates.", "-", "-", "-", "-"},
};
enum { N_ENTRIES = sizeof ENTRIES / sizeof ENTRIES[0] };

const glossary_entry_t *glossary_entries(int *n)
{
    *n = N_ENTRIES;
    return ENTRIES;
}

const glossary_entry_t *glossary_find(const char *token, size_t len)
{
    while (len > 0 && strchr(",;.)", token[len - 1]))
        len--;
    while (len > 0 && strchr("(", token[0])) {
        token++;
        len--;
    }
    const glossary_entry_t *best = NULL;
    size_t best_len = 0;
    for (int i = 0; i < N_ENTRIES; i++) {
        size_t t = strlen(ENTRIES[i].term);
        if (t > len || strncmp(token, ENTRIES[i].term, t) != 0 || t <= best_len)
            continue;
        char next = t < len ? token[t] : '\0';
        if (next == '\0' || isdigit((unsigned char)next) || next == '=' || next == ':' ||
            next == '(') {
            best = &ENTRIES[i];
            best_len = t;
        }
    }
    return best;
}

int glossary_legend(const char *text, char *buf, size_t cap)
{
    bool used[N_ENTRIES] = {false};
    int any = 0;
    for (const char *p = text ? text : ""; *p;) {
        size_t n = strcspn(p, " \n\t");
        const glossary_entry_t *e = n ? glossary_find(p, n) : NULL;
        if (e && !used[e - ENTRIES]) {
            used[e - ENTRIES] = true;
            any++;
        }
        p += n;
        p += strspn(p, " \n\t");
    }
    if (cap)
        buf[0] = '\0';
    int len = 0;
    if (!any)
        return 0;
    len = snprintf(cap ? buf : NULL, cap, "legend:");
    int k = 0;
    for (int i = 0; i < N_ENTRIES; i++) {
        if (!used[i])
            continue;
        size_t at = (size_t)len;
        len += snprintf(at < cap ? buf + at : NULL, at < cap ? cap - at : 0, "%s %s: %s",
                        k++ ? ";" : "", ENTRIES[i].term, ENTRIES[i].gloss);
    }
    return len;
}
