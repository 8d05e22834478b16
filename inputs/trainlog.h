/* trainlog: the training logs teams already have, read into one plain
 * record.
 *
 * One reader per format sits behind a small table of (detect, parse)
 * functions: Megatron-LM and Megatron-Bridge iteration lines, NeMo 2's
 * progress printer, torchtitan's metric lines, DeepSpeed's engine lines, the
 * Hugging Face Trainer's console output, and a plain CSV or JSON form
 * (step, seconds, tokens) for anything else. Line formats follow the
 * frameworks' print statements (see tests/fixtures/logs/README.md for the
 * versions; tests/fixtures/real/logs holds real pastes). GPT-NeoX's iteration
 * lines are Megatron's with "samples/sec: X |" in front; Composer's console
 * blocks (llm-foundry) are read by trainlog_composer. Every reader fills the
 * same trainlog_t:
 *
 *   records   one per logged step (or logging interval), with the line it
 *             came from; figures a line does not carry are NAN
 *   settings  the configuration the log prints, as command-line options
 *             (scaleplan's flag names, or Megatron-LM's own for its
 *             argument block), each with its line
 *   steady    warm-up records dropped, the rest summarised with their spread
 *
 * Lines a launcher prefixes with the rank that printed them ("[rank3]:",
 * "[default3]:", "3: ", "[1,3]<stdout>:") are read as that rank's; records
 * are then folded so each step counts once: the lowest rank that logs
 * steps is kept, and a record repeating the step just logged (every rank
 * printing the same line, unprefixed) is dropped. A step counter that goes
 * back starts a new run (a restart); each run has its own warm-up.
 *
 * Parsing takes bytes (any bytes: the readers are fuzz targets) and never
 * reads past len. A log that is not one of the formats, a record line that
 * is malformed or cut short, or a log without a single step time is an
 * ERR_INPUT of one line naming the file and the line:
 *     run.log: line 412: elapsed time per iteration (ms): not a number ('2l77.0')
 */
#ifndef SCALEPLAN_INPUTS_TRAINLOG_H
#define SCALEPLAN_INPUTS_TRAINLOG_H

#include <stdbool.h>
#include <stddef.h>

#include "common/error.h"

/* Step-time components some logs report (DeepSpeed's wall-clock
 * breakdown): seconds per optimizer step. */
typedef enum {
    TLOG_PART_FORWARD = 0,   /* forward passes */
    TLOG_PART_BACKWARD,      /* backward compute, without the reduction */
    TLOG_PART_GRAD_REDUCE,   /* data-parallel gradient reduction */
    TLOG_PART_OPTIMIZER,     /* the optimizer step */
    TLOG_PART_COUNT
} tlog_part_t;

/* "forward", "backward", "grad_reduce", "optimizer". */
const char *trainlog_part_name(tlog_part_t p);

typedef struct {
    long step;             /* iteration as the framework counts it */
    int line;              /* 1-based line of the file it came from */
    long covers;           /* iterations the figures average over (>= 1) */
    double step_time_s;    /* seconds per iteration; NAN when not logged */
    double tokens_per_s;   /* whole job (the plain forms); NAN */
    double tokens_per_s_per_gpu; /* as logged (torchtitan tps, NeMo); NAN */
    double samples_per_s;  /* whole job (DeepSpeed, HF); NAN */
    double tflops_per_gpu; /* the framework's own FLOP count; NAN */
    double mfu;            /* fraction, the framework's own; NAN */
    double memory_gib;     /* peak memory as logged at this step; NAN */
    double loss;           /* NAN */
    double part_s[TLOG_PART_COUNT]; /* NAN where not logged */
    bool skipped;          /* the optimizer skipped the step (fp16 overflow) */
    bool derived;          /* step_time_s came from throughput and a batch,
                              not from the log's own timing */
} tlog_record_t;

/* One piece of configuration the log prints, as an option: "--tp" "8",
 * or "--sequence-parallel" "" for a switch that is on. */
typedef struct {
    char *name;  /* heap, as the log has it (any length) */
    char *value; /* heap */
    int line;
} tlog_setting_t;

/* A summary of the steady-state records. */
typedef struct {
    int n;          /* records summarised */
    double mean;    /* weighted by the iterations each record covers */
    double sd;      /* standard deviation of the records (0 for one) */
    double cv;      /* sd / mean */
    double min, max;
} tlog_stat_t;

typedef struct {
    char *file;            /* heap: as given, for messages (any length) */
    char format[16];       /* the reader's name: "megatron", "nemo", ... */
    char framework[48];    /* "Megatron-LM", "Megatron-Bridge", ... */

    tlog_record_t *records; /* heap, in log order */
    int n_records;
    tlog_setting_t *settings; /* heap; scaleplan's option names */
    int n_settings;
    tlog_setting_t *args;  /* heap; Megatron-LM's argument block verbatim:
                              dest names and Python values
                              ("tensor_model_parallel_size" "8") */
    int n_args;

    /* What the log says about the run as a whole (0 / NAN when it does not). */
    int n_gpus;            /* world size */
    double samples_per_step; /* global batch in sequences */
    double tokens_per_step;  /* global batch in tokens */
    double memory_gib;     /* the peak over the memory reports and ranks */
    char memory_kind[48];  /* what that peak counts: "max reserved", ... */
    int memory_line;
    int batch_line;        /* line giving samples/tokens_per_step; 0 */
    int gpus_line;         /* line giving n_gpus; 0 */
    double params;         /* total parameters the log prints (per-rank
                              shard counts summed over the distinct
                              (tensor, pipeline) ranks); 0 when none */
    int params_line;       /* the (last) line giving them */
    char params_how[96];   /* how they were counted, "" for one figure */
    double gpu_memory_gib; /* the device's capacity, when the log prints it */
    double final_samples_per_s; /* HF train_samples_per_second, whole run */
    char caveat[200];      /* what the reader had to assume, "" if nothing */

    /* Steady state: leading warm-up records dropped (start-up, allocator
     * and communicator set-up, compilation), skipped steps left out. */
    int warmup;            /* records dropped */
    int first_steady;      /* index of the first steady record */
    tlog_stat_t step_time_s;
    tlog_stat_t tflops_per_gpu, mfu;  /* as the framework counts them */
    double part_s[TLOG_PART_COUNT];   /* steady means; NAN where not logged */
    char note[240];        /* how the steady state was taken */
    char step_time_from[160]; /* where the steady step times come from:
                              the log's own lines, or its throughput with
                              the batch and GPU count (and whence those) */
    int runs;              /* runs in the log (a step count that restarts
                              begins one); warm-up is found in each */
    int folded;            /* records dropped as another rank's copy or a
                              repeat of the step just logged */
} trainlog_t;

/* What the caller knows beyond the log (command-line flags), for logs that
 * give throughput instead of step times: 0 = unknown. */
typedef struct {
    int n_gpus;
    double samples_per_step;
    double tokens_per_step;
} tlog_known_t;

/* Read the log in text[0..len) (not NUL-terminated; any bytes). format
 * names a reader (trainlog_format_name) or is NULL to detect it; file
 * names the log in messages. On success *out holds the records, the
 * settings and the steady state (trainlog_settle with what the log itself
 * knows). On error *out is left empty (file too; safe to trainlog_free). */
int trainlog_parse(const char *text, size_t len, const char *file, const char *format,
                   trainlog_t *out, err_t *err);

/* The same for a file. ERR_INPUT when it cannot be read. */
int trainlog_read(const char *path, const char *format, trainlog_t *out, err_t *err);

/* (Re)derive step times from throughput with what is known (the log's own
 * figures win over known's), drop the warm-up and summarise the steady
 * state. ERR_INPUT naming the file when no record gives a step time. */
int trainlog_settle(trainlog_t *t, const tlog_known_t *known, err_t *err);

/* The value of setting name (its last occurrence), or NULL. */
const char *trainlog_setting(const trainlog_t *t, const char *name);

/* Free what t owns; t is empty afterwards. Safe on a zeroed record. */
void trainlog_free(trainlog_t *t);

/* The readers, in detection order: "megatron" (GPT-NeoX too), "nemo",
 * "torchtitan", "deepspeed", "hf", "composer", "csv", "json". */
int trainlog_format_count(void);
const char *trainlog_format_name(int i);
const char *trainlog_format_title(int i);

#endif
