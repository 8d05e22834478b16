/* accelerate: accelerate's config YAML read through inputs/yaml into a
 * preset, a layout and notes. The defaults are accelerate's own
 * (accelerate/utils/dataclasses.py: DeepSpeedPlugin zero_stage 2,
 * offload "none", gradient_accumulation_steps 1; FullyShardedDataParallelPlugin
 * FULL_SHARD, no CPU offload; mixed_precision "no"), the key names those of
 * accelerate/commands/config/config_args.py and cluster.py (v0.20 to v1.x). */
#include "inputs/accelerate.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common/fileio.h"
#include "common/strfmt.h"
#include "inputs/yaml.h"

typedef struct {
    toml_doc_t doc;
    const char *file;
    accelerate_t *t;
    bool single; /* distributed_type NO: one process */
    bool precision_defaulted; /* mixed_precision absent */
    int fsdp_version;         /* fsdp_config.fsdp_version, 0 = absent */
    char backend[32];         /* the preset distributed_type names, before any switch */
    err_t *err;
} ax_t;

/* The entry at key, marked read; NULL when absent. */
static toml_entry_t *get(ax_t *x, const char *key)
{
    toml_entry_t *e = toml_find(&x->doc, key);
    if (e)
        e->used = true;
    return e;
}

/* A string value; an integer is written out (fsdp_sharding_strategy: 1). */
static int want_word(ax_t *x, const char *key, char *buf, size_t cap, bool *got)
{
    toml_entry_t *e = get(x, key);
    *got = e != NULL;
    if (!e)
        return ERR_OK;
    if (e->v.type == TOML_STRING)
        snprintf(buf, cap, "%s", e->v.str);
    else if (e->v.type == TOML_INT)
        snprintf(buf, cap, "%lld", e->v.i);
    else if (e->v.type == TOML_BOOL)
        snprintf(buf, cap, "%s", e->v.b ? "true" : "false");
    else
        return err_setf(x->err, ERR_INPUT, x->file, key, "line %d: expected a word, got a %s",
                        e->v.line, toml_type_name(e->v.type));
    return ERR_OK;
}

static int want_int(ax_t *x, const char *key, long long lo, long long hi, int *out, bool *got)
{
    toml_entry_t *e = get(x, key);
    *got = e != NULL;
    if (!e)
        return ERR_OK;
    if (e->v.type != TOML_INT)
        return err_setf(x->err, ERR_INPUT, x->file, key, "line %d: expected an integer, got a %s",
                        e->v.line, toml_type_name(e->v.type));
    if (e->v.i < lo || e->v.i > hi)
        return err_setf(x->err, ERR_INPUT, x->file, key, "line %d: must be %lld to %lld (got %lld)",
                        e->v.line, lo, hi, e->v.i);
    *out = (int)e->v.i;
    return ERR_OK;
}

/* A boolean; accelerate also writes "true"/"false" as strings. */
static int want_bool(ax_t *x, const char *key, bool *out, bool *got)
{
    toml_entry_t *e = get(x, key);
    *got = e != NULL;
    if (!e)
        return ERR_OK;
    if (e->v.type == TOML_BOOL)
        *out = e->v.b;
    else if (e->v.type == TOML_STRING && (!strcasecmp(e->v.str, "true") ||
                                          !strcasecmp(e->v.str, "false")))
        *out = strcasecmp(e->v.str, "true") == 0;
    else
        return err_setf(x->err, ERR_INPUT, x->file, key, "line %d: expected true or false",
                        e->v.line);
    return ERR_OK;
}

/* distributed_type: which preset runs the job. */
static int read_backend(ax_t *x)
{
    static const struct {
        const char *type, *framework;
    } backends[] = {{"DEEPSPEED", "deepspeed"},
                    {"FSDP", "fsdp"},
                    {"MULTI_GPU", "pytorch-ddp"},
                    {"NO", "pytorch-ddp"}};
    char type[64];
    bool got, cpu = false, got_cpu;
    int rc;
    if ((rc = want_word(x, "distributed_type", type, sizeof type, &got)) ||
        (rc = want_bool(x, "use_cpu", &cpu, &got_cpu)))
        return rc;
    if (!got)
        return err_setf(x->err, ERR_INPUT, x->file, "distributed_type",
                        "missing: add distributed_type: DEEPSPEED, FSDP or MULTI_GPU");
    if (cpu)
        return err_setf(x->err, ERR_INPUT, x->file, "use_cpu",
                        "true: the job runs on CPUs, which scaleplan does not price");
    for (size_t i = 0; i < sizeof backends / sizeof backends[0]; i++)
        if (strcmp(type, backends[i].type) == 0) {
            snprintf(x->t->framework, sizeof x->t->framework, "%s", backends[i].framework);
            x->single = strcmp(type, "NO") == 0;
            snprintf(x->backend, sizeof x->backend, "%s", backends[i].framework);
            return ERR_OK;
        }
    return err_setf(x->err, ERR_INPUT, x->file, "distributed_type",
                    "%s is not read here (DEEPSPEED, FSDP, MULTI_GPU and NO are): give the "
                    "layout as flags (--framework, --tp, --zero, ...) without --accelerate-config",
                    type);
}

/* num_processes and mixed_precision, whatever the backend. */
static int read_common(ax_t *x)
{
    accelerate_t *t = x->t;
    bool got;
    int rc;
    if ((rc = want_int(x, "num_processes", 1, 1000000, &t->n_processes, &got)))
        return rc;
    if (!got && x->single)
        t->n_processes = 1;
    toml_entry_t *e = get(x, "mixed_precision");
    const char *mp = !e ? "no" : e->v.type == TOML_BOOL && !e->v.b ? "no"
                               : e->v.type == TOML_STRING ? e->v.str : NULL;
    static const struct {
        const char *name;
        precision_t p;
    } modes[] = {{"no", PRECISION_FP32}, {"fp16", PRECISION_FP16},
                 {"bf16", PRECISION_BF16}, {"fp8", PRECISION_FP8}};
    for (size_t i = 0; mp && i < sizeof modes / sizeof modes[0]; i++)
        if (strcmp(mp, modes[i].name) == 0) {
            t->have_precision = true;
            t->precision = modes[i].p;
        }
    if (!t->have_precision)
        return err_setf(x->err, ERR_INPUT, x->file, "mixed_precision",
                        "line %d: use no, fp16, bf16 or fp8", e ? e->v.line : 0);
    x->precision_defaulted = e == NULL;
    return ERR_OK;
}

/* "none", "cpu" or "nvme" for one kind of state. */
static int offload_device(ax_t *x, const char *key, int bit)
{
    char dev[32];
    bool got;
    int rc = want_word(x, key, dev, sizeof dev, &got);
    if (rc || !got || strcmp(dev, "none") == 0)
        return rc;
    if (strcmp(dev, "cpu") && strcmp(dev, "nvme"))
        return err_setf(x->err, ERR_INPUT, x->file, key, "'%s' is not an offload device "
                        "(none, cpu, nvme)", dev);
    x->t->offload |= bit;
    if (strcmp(dev, "nvme") == 0)
        x->t->offload_nvme = true;
    return ERR_OK;
}

/* Where accelerate finds deepspeed_config_file: from the directory it is
 * launched in; a corpus of configs keeps it next to the YAML, tried second. */
static int locate(ax_t *x, const char *given, int line)
{
    const char *slash = strrchr(x->file, '/');
    size_t dir = slash ? (size_t)(slash - x->file) + 1 : 0;
    size_t cap = dir + strlen(given) + 1;
    char *beside = malloc(cap);
    if (!beside)
        return err_set(x->err, ERR_RUNTIME, "out of memory reading %s", x->file);
    snprintf(beside, cap, "%.*s%s", (int)dir, x->file, given);
    const char *tries[] = {given, given[0] == '/' ? NULL : beside};
    for (size_t i = 0; i < 2; i++) {
        FILE *f = tries[i] ? fopen(tries[i], "rb") : NULL;
        if (f) {
            fclose(f);
            x->t->ds_config_path = strdup(tries[i]);
            free(beside);
            return x->t->ds_config_path ? ERR_OK
                                        : err_set(x->err, ERR_RUNTIME, "out of memory");
        }
    }
    free(beside);
    return err_setf(x->err, ERR_INPUT, x->file, "deepspeed_config.deepspeed_config_file",
                    "line %d: '%s' is found neither from the current directory nor next to the "
                    "YAML: run from the launch directory or write the file's path",
                    line, given);
}

/* The deepspeed_config block. */
static int read_deepspeed(ax_t *x)
{
    accelerate_t *t = x->t;
    bool got;
    int rc;
    toml_entry_t *file = get(x, "deepspeed_config.deepspeed_config_file");
    if (file && file->v.type == TOML_STRING && strcmp(file->v.str, "none") != 0)
        return locate(x, file->v.str, file->v.line);
    t->zero = 2;
    if ((rc = want_int(x, "deepspeed_config.zero_stage", 0, 3, &t->zero, &got)))
        return rc;
    if (!got)
        notes_add(&t->notes, NOTE_ASSUMED, "deepspeed_config.zero_stage",
                  "absent: accelerate's default stage 2 (--zero sets yours)");
    if ((rc = want_int(x, "deepspeed_config.gradient_accumulation_steps", 1, 1000000,
                       &t->grad_accum, &got)))
        return rc;
    if (!got)
        notes_add(&t->notes, NOTE_ASSUMED, "deepspeed_config.gradient_accumulation_steps",
                  "absent: accelerate's default 1 (--grad-accum or --global-batch sets yours)");
    if ((rc = offload_device(x, "deepspeed_config.offload_optimizer_device",
                             LAYOUT_OFFLOAD_OPTIMIZER)) ||
        (rc = offload_device(x, "deepspeed_config.offload_param_device", LAYOUT_OFFLOAD_PARAMS)))
        return rc;
    if ((t->offload & LAYOUT_OFFLOAD_PARAMS) && t->zero < 3)
        return err_setf(x->err, ERR_INPUT, x->file, "deepspeed_config.offload_param_device",
                        "parameter offload needs zero_stage 3 (got %d)", t->zero);
    if (!toml_find(&x->doc, "deepspeed_config.offload_optimizer_device") ||
        !toml_find(&x->doc, "deepspeed_config.offload_param_device"))
        notes_add(&t->notes, NOTE_ASSUMED, "deepspeed_config.offload",
                  "a device absent: accelerate's default none (kept on the GPU)");
    return ERR_OK;
}

/* FSDP's sharding as a ZeRO stage: by name or by its enum number. */
static int sharding_stage(ax_t *x, const char *key, const char *v, int *zero)
{
    static const struct {
        const char *name, *number;
        int zero;
        bool hybrid;
    } kinds[] = {{"FULL_SHARD", "1", 3, false},       {"SHARD_GRAD_OP", "2", 2, false},
                 {"NO_SHARD", "3", 0, false},         {"HYBRID_SHARD", "4", 3, true},
                 {"_HYBRID_SHARD_ZERO2", "5", 2, true}, {"true", NULL, 3, false},
                 {"false", NULL, 2, false}};
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++)
        if (strcmp(v, kinds[i].name) == 0 || (kinds[i].number && !strcmp(v, kinds[i].number))) {
            *zero = kinds[i].zero;
            if (kinds[i].hybrid)
                notes_add(&x->t->notes, NOTE_ASSUMED, key,
                          "%s (sharded within a node, replicated across nodes): simulated with "
                          "the state sharded over every data-parallel rank", kinds[i].name);
            return ERR_OK;
        }
    return err_setf(x->err, ERR_INPUT, x->file, key,
                    "'%s' is not a sharding strategy (FULL_SHARD, SHARD_GRAD_OP, NO_SHARD, "
                    "HYBRID_SHARD, _HYBRID_SHARD_ZERO2, or 1 to 5)", v);
}

/* The fsdp_config block. */
static int read_fsdp(ax_t *x)
{
    accelerate_t *t = x->t;
    char v[64];
    bool got, got2, off = false, ckpt = false;
    int rc;
    /* accelerate 1.x renamed fsdp_sharding_strategy fsdp_reshard_after_forward */
    const char *keys[] = {"fsdp_config.fsdp_sharding_strategy",
                          "fsdp_config.fsdp_reshard_after_forward"};
    t->zero = 3;
    bool any = false;
    for (size_t i = 0; i < 2; i++) {
        if ((rc = want_word(x, keys[i], v, sizeof v, &got)))
            return rc;
        if (got && (rc = sharding_stage(x, keys[i], v, &t->zero)))
            return rc;
        any = any || got;
    }
    if (!any)
        notes_add(&t->notes, NOTE_ASSUMED, "fsdp_config.fsdp_sharding_strategy",
                  "absent: accelerate's default FULL_SHARD (--zero sets yours)");
    if ((rc = want_int(x, "fsdp_config.fsdp_version", 1, 2, &x->fsdp_version, &got)))
        return rc;
    if ((rc = want_bool(x, "fsdp_config.fsdp_offload_params", &off, &got)) ||
        (rc = want_bool(x, "fsdp_config.fsdp_activation_checkpointing", &ckpt, &got2)))
        return rc;
    if (off) /* FSDP's CPUOffload: parameters, gradients and the optimizer step on the host */
        t->offload |= LAYOUT_OFFLOAD_OPTIMIZER | (t->zero == 3 ? LAYOUT_OFFLOAD_PARAMS : 0);
    t->full_recompute = ckpt;
    t->recompute_read = true;
    if (!got)
        notes_add(&t->notes, NOTE_ASSUMED, "fsdp_config.fsdp_offload_params",
                  "absent: accelerate's default false (nothing offloaded)");
    if (!got2)
        notes_add(&t->notes, NOTE_ASSUMED, "fsdp_config.fsdp_activation_checkpointing",
                  "absent: none (the training script may checkpoint; --recompute full sets it)");
    return ERR_OK;
}

/* parallelism_config (accelerate 1.10+): the N-D degrees; the data-parallel
 * shard size is what the GPUs leave over the others. */
static int read_parallelism(ax_t *x)
{
    accelerate_t *t = x->t;
    int rep = 1, shard = 0, rc;
    bool got;
    t->tp = t->cp = t->sp = 1;
    if ((rc = want_int(x, "parallelism_config.parallelism_config_tp_size", 1, 65536, &t->tp,
                       &got)) ||
        (rc = want_int(x, "parallelism_config.parallelism_config_cp_size", 1, 65536, &t->cp,
                       &got)) ||
        (rc = want_int(x, "parallelism_config.parallelism_config_sp_size", 1, 65536, &t->sp,
                       &got)) ||
        (rc = want_int(x, "parallelism_config.parallelism_config_dp_replicate_size", 1,
                       1000000, &rep, &got)) ||
        (rc = want_int(x, "parallelism_config.parallelism_config_dp_shard_size", 1, 1000000,
                       &shard, &got)))
        return rc;
    long long ranks = (long long)t->tp * t->cp * t->sp * rep * (shard ? shard : 1);
    if (t->n_processes && shard && ranks != t->n_processes)
        return err_setf(x->err, ERR_INPUT, x->file, "parallelism_config",
                        "the sizes multiply to %lld, not num_processes %d", ranks,
                        t->n_processes);
    if (t->sp > 1 && (t->cp > 1 || strcmp(t->framework, "deepspeed") != 0))
        return err_setf(x->err, ERR_INPUT, x->file, "parallelism_config.parallelism_config_sp_size",
                        "%d: Ulysses sequence parallelism runs under distributed_type DEEPSPEED "
                        "and without cp_size (accelerate's sp_backend is deepspeed)", t->sp);
    if (t->sp > 1)
        notes_add(&t->notes, NOTE_ASSUMED, "parallelism_config.parallelism_config_sp_size",
                  "%d: DeepSpeed-Ulysses, simulated as all-to-all context parallelism over %d "
                  "GPUs", t->sp, t->sp);
    /* FSDP2 with DTensor TP or CP is the stack torchtitan builds on;
     * scaleplan's fsdp preset (FSDP1-era) has neither */
    if (strcmp(t->framework, "fsdp") == 0 && (t->tp > 1 || t->cp > 1)) {
        snprintf(t->framework, sizeof t->framework, "torchtitan-2025-06");
        notes_add(&t->notes, NOTE_ASSUMED, "distributed_type",
                  "FSDP with parallelism_config TP %d x CP %d: FSDP2 with DTensor tensor and "
                  "context parallelism, simulated as the torchtitan-2025-06 preset (the same "
                  "PyTorch stack; --framework overrides)", t->tp, t->cp);
    }
    if (rep > 1 && t->zero == 3)
        notes_add(&t->notes, NOTE_ASSUMED, "parallelism_config.parallelism_config_dp_replicate_size",
                  "HSDP (replicate %d): simulated with the state sharded over every "
                  "data-parallel rank", rep);
    return ERR_OK;
}

/* Why a key that is read no further is left out (framework: the preset
 * distributed_type names, whose block is read). */
static const char *ignored_why(const char *key, const char *framework)
{
    static const char *const blocks[][2] = {{"deepspeed_config.", "deepspeed"},
                                            {"fsdp_config.", "fsdp"}};
    for (size_t i = 0; i < 2; i++)
        if (strncmp(key, blocks[i][0], strlen(blocks[i][0])) == 0 &&
            strcmp(framework, blocks[i][1]) != 0)
            return "a block distributed_type does not use";
    if (strstr(key, "gradient_clipping"))
        return "clipping costs one norm over the gradients: not modeled";
    if (strcmp(key, "num_machines") == 0)
        return "the node shape comes from --gpu or --cluster (their GPUs per node), not from "
               "the machine count";
    return "no effect on step time or memory modeled (launch, placement, saving, wrapping)";
}

static int read_doc(ax_t *x)
{
    int rc;
    if ((rc = read_backend(x)) || (rc = read_common(x)))
        return rc;
    accelerate_t *t = x->t;
    if (strcmp(t->framework, "deepspeed") == 0)
        rc = read_deepspeed(x);
    else if (strcmp(t->framework, "fsdp") == 0)
        rc = read_fsdp(x);
    if (rc || (rc = read_parallelism(x)))
        return rc;
    if (x->fsdp_version == 2 && strcmp(t->framework, "fsdp") == 0)
        notes_add(&t->notes, NOTE_ASSUMED, "fsdp_config.fsdp_version",
                  "2: FSDP2 simulated with the fsdp preset's costs (FSDP1's flat-parameter "
                  "gathers); --framework torchtitan-2025-06 prices FSDP2 as torchtitan runs it");
    /* with a deepspeed_config_file, the file's fp16/bf16 decide */
    if (x->precision_defaulted && t->ds_config_path)
        t->have_precision = false;
    else if (x->precision_defaulted)
        notes_add(&t->notes, NOTE_ASSUMED, "mixed_precision",
                  "absent: accelerate's default no (fp32 training; --precision sets yours)");
    if (t->ds_config_path)
        for (size_t i = 0; i < x->doc.n; i++)
            if (!x->doc.entries[i].used &&
                strncmp(x->doc.entries[i].key, "deepspeed_config.", 17) == 0) {
                x->doc.entries[i].used = true;
                notes_add(&t->notes, NOTE_IGNORED, x->doc.entries[i].key,
                          "the deepspeed_config_file decides it (accelerate ignores it then)");
            }
    for (size_t i = 0; i < x->doc.n; i++)
        if (!x->doc.entries[i].used)
            notes_add(&t->notes, NOTE_IGNORED, x->doc.entries[i].key, "%s",
                      ignored_why(x->doc.entries[i].key, x->backend));
    return t->notes.oom ? err_set(x->err, ERR_RUNTIME, "out of memory reading %s", x->file)
                        : ERR_OK;
}

int accelerate_read(const char *text, size_t len, const char *file, accelerate_t *t, err_t *err)
{
    memset(t, 0, sizeof *t);
    ax_t x = {.file = file ? file : "accelerate config", .t = t, .err = err};
    int rc = yaml_parse(text, len, x.file, &x.doc, err);
    if (!rc)
        rc = read_doc(&x);
    toml_free(&x.doc);
    return rc;
}

int accelerate_read_file(const char *path, accelerate_t *t, err_t *err)
{
    memset(t, 0, sizeof *t);
    char *data = NULL;
    size_t len = 0;
    int rc = fileio_read_all(path, &data, &len, err);
    if (rc)
        return rc;
    rc = accelerate_read(data, len, path, t, err);
    free(data);
    return rc;
}

/* The deepspeed_config_file, its "auto" values from the command line, else
 * from the YAML's own precision, as accelerate fills them. */
static int apply_ds_file(const accelerate_t *t, const deepspeed_given_t *given, layout_t *l,
                         sim_options_t *o, notes_t *notes, err_t *err)
{
    deepspeed_given_t g;
    memset(&g, 0, sizeof g);
    if (given)
        g = *given;
    if (!g.have_precision) {
        g.have_precision = t->have_precision;
        g.precision = t->precision;
    }
    return deepspeed_apply_file(t->ds_config_path, &g, l, o, notes, err);
}

int accelerate_apply(const accelerate_t *t, const deepspeed_given_t *given, layout_t *l,
                     sim_options_t *o, notes_t *notes, err_t *err)
{
    notes_append(notes, &t->notes);
    if (t->tp > 1)
        l->tp = t->tp;
    if (t->cp > 1)
        l->cp = t->cp;
    if (t->sp > 1) {
        l->cp = t->sp;
        if (o)
            o->cp_comm = CP_A2A;
    }
    if (t->ds_config_path)
        return apply_ds_file(t, given, l, o, notes, err);
    l->zero = t->zero;
    l->offload |= t->offload;
    l->offload_nvme = l->offload_nvme || t->offload_nvme;
    if (t->have_precision)
        l->precision = t->precision;
    if (t->grad_accum > 0)
        l->grad_accum = t->grad_accum;
    if (t->full_recompute)
        l->recompute = RECOMPUTE_FULL;
    return ERR_OK;
}

void accelerate_free(accelerate_t *t)
{
    if (!t)
        return;
    free(t->ds_config_path);
    notes_free(&t->notes);
    memset(t, 0, sizeof *t);
}
