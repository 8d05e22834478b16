/* args_inputs: the framework inputs a command line names (Megatron
 * arguments, a torchtitan config, an accelerate config, a DeepSpeed config,
 * Megatron-Bridge overrides) read and merged with the flags into one
 * scenario: cli_scenario and cli_scenario_from of cli/args.h. */
#include "commands/argsInt.h"

#include <stdlib.h>
#include <string.h>

#include "common/fileio.h"
#include "inputs/accelerate.h"
#include "inputs/bridge.h"
#include "inputs/megatron_args.h"
#include "inputs/torchtitan.h"
#include "reports/launch.h"

static const cli_opt_t input_opts[] = {
    {"--megatron-args", NULL, "\"ARGS\"",
     "a Megatron-LM pretrain_gpt.py argument list or launch command, quoted: architecture, "
     "layout, precision and overlap flags are read (hybrid models' --hybrid-override-pattern "
     "and --mamba-* too); the rest listed as ignored; a plan --emit "
     "megatron file runs as the preset it was planned for unless --framework", CLI_WORD},
    {"--megatron-args-file", NULL, "FILE", "the same from a file (a launch script works)",
     CLI_WORD},
    {"--vocab-size", NULL, "N",
     "the tokenizer's vocabulary size, for Megatron arguments that name a tokenizer "
     "(--tokenizer-model) without giving its size; padded as the arguments say",
     CLI_KIND(CLI_COUNT, 1, 1e8)},
    {"--torchtitan", NULL, "FILE.toml|FILE.py",
     "a torchtitan job config: model flavor, parallelism, batch, activation checkpointing, "
     "float8, compile; runs as the torchtitan preset of its generation unless --framework",
     CLI_WORD},
    {"--accelerate-config", NULL, "FILE.yaml",
     "a Hugging Face accelerate config (accelerate config's YAML): distributed_type (DEEPSPEED, "
     "FSDP, MULTI_GPU), num_processes as --gpus, mixed_precision, ZeRO stage and offload or a "
     "deepspeed_config_file, FSDP sharding, offload and activation checkpointing; needs "
     "--seq-len and --micro-batch (or --global-batch), which no such file holds",
     CLI_WORD},
    {"--torchtitan-config", NULL, "NAME",
     "with --torchtitan config_registry.py (torchtitan's Python configs since February 2026): "
     "the function of the job (llama3_8b), read by structure, never run",
     CLI_WORD},
    {"--bridge-overrides", NULL, "FILE",
     "Megatron-Bridge / NeMo 2 recipe overrides (KEY=VALUE lines, as plan --emit nemo writes "
     "them, or a whole run_recipe.py or performance setup_experiment.py launch command): "
     "parallel sizes, batch, recompute, precision; the recipe's name (or -mr, -ng, -g, -c) "
     "gives the model, GPU, GPU count and precision the flags do not; runs as the preset a "
     "plan --emit nemo file was planned for, else the newest Megatron-Bridge preset, unless "
     "--framework",
     CLI_WORD},
};
const cli_group_t CLI_INPUT_OPTS = {"Framework inputs (explicit flags override them)",
                                    input_opts, sizeof input_opts / sizeof input_opts[0]};

/* The framework inputs a command line names, read before the scenario. */
typedef struct {
    megatron_args_t mg;
    bool have_mg;
    torchtitan_t tt;
    bool have_tt;
    accelerate_t acc;
    bool have_acc;
    char planned_for[FW_NAME_MAX]; /* the preset a scaleplan export names */
} cli_inputs_t;

static void inputs_free(cli_inputs_t *in)
{
    if (in->have_mg)
        megatron_args_free(&in->mg);
    if (in->have_tt)
        torchtitan_free(&in->tt);
    if (in->have_acc)
        accelerate_free(&in->acc);
}

static int read_inputs(const cli_args_t *a, int n_gpus, cli_inputs_t *in, err_t *err)
{
    memset(in, 0, sizeof *in);
    const char *text = cli_get(a, "--megatron-args");
    const char *file = cli_get(a, "--megatron-args-file");
    const char *toml = cli_get(a, "--torchtitan");
    if (text && file)
        return err_setf(err, ERR_INPUT, NULL, "--megatron-args-file",
                        "give the Megatron arguments once (--megatron-args or "
                        "--megatron-args-file)");
    if (cli_get(a, "--bridge-overrides") && (toml || text || file))
        return err_setf(err, ERR_INPUT, NULL, "--bridge-overrides",
                        "give one framework's inputs (Bridge overrides, Megatron arguments or a "
                        "torchtitan config)");
    if (toml && (text || file))
        return err_setf(err, ERR_INPUT, NULL, "--torchtitan",
                        "give one framework's inputs (Megatron arguments or a torchtitan "
                        "config)");
    const char *acc = cli_get(a, "--accelerate-config");
    if (acc && (toml || text || file || cli_get(a, "--bridge-overrides") ||
                cli_get(a, "--deepspeed")))
        return err_setf(err, ERR_INPUT, NULL, "--accelerate-config",
                        "give one framework's inputs (an accelerate config names its DeepSpeed "
                        "config itself, in deepspeed_config_file)");
    if (acc) {
        in->have_acc = true;
        return accelerate_read_file(acc, &in->acc, err);
    }
    if (toml) {
        in->have_tt = true;
        return torchtitan_read_file_as(toml, cli_get(a, "--torchtitan-config"), n_gpus,
                                       cli_get(a, "--model") || a->n_positional > 0, &in->tt,
                                       err);
    }
    if (!text && !file)
        return ERR_OK;
    char *data = NULL;
    size_t len = 0;
    if (file) {
        int rc = fileio_read_all(file, &data, &len, err);
        if (rc)
            return rc;
    }
    in->have_mg = true;
    megatron_args_init(&in->mg, file ? file : "--megatron-args");
    int rc = megatron_args_parse_text(&in->mg, file ? data : text, file ? len : strlen(text), err);
    /* scaleplan's --vocab-size fills what a file that only names its
     * tokenizer leaves out (and overrides a size it gives) */
    const char *vocab = cli_get(a, "--vocab-size");
    if (!rc && vocab) {
        rc = megatron_args_set(&in->mg, "--vocab-size", vocab, err);
        if (!rc)
            notes_add(&in->mg.notes, NOTE_ASSUMED, "--vocab-size",
                      "%s, from scaleplan's command line", vocab);
    }
    if (!rc)
        rc = megatron_args_finish(&in->mg, err);
    if (!rc)
        launch_planned_for(file ? data : text, in->planned_for, sizeof in->planned_for);
    free(data);
    return rc;
}

/* An accelerate config onto the scenario's layout; explicit flags come
 * after. It holds no batch size: unless its DeepSpeed config gives one, the
 * flags must. */
static int apply_accelerate(const cli_args_t *a, const accelerate_t *acc, bool gpus_from_file,
                            scenario_t *s, err_t *err)
{
    deepspeed_given_t g;
    int rc;
    if ((rc = cli_args_deepspeed_given(a, &s->model, &g, err)) ||
        (rc = accelerate_apply(acc, &g, &s->layout, &s->opt, &s->notes, err)))
        return rc;
    if (gpus_from_file)
        notes_add(&s->notes, NOTE_ASSUMED, "--gpus", "%d, the config's num_processes",
                  acc->n_processes);
    const char *file = cli_get(a, "--accelerate-config");
    if (!acc->ds_config_path && !cli_has(a, "--micro-batch") && !cli_has(a, "--global-batch"))
        return err_setf(err, ERR_INPUT, file, "--micro-batch",
                        "an accelerate config does not give the batch size (the training "
                        "script does): add --micro-batch N (sequences per GPU), e.g. "
                        "--micro-batch 1, or --global-batch N");
    /* activation checkpointing is the training script's (gradient_checkpointing)
     * unless fsdp_config says it; a DeepSpeed config's own reader says its own */
    bool rc_flag = cli_has(a, "--recompute") || cli_has(a, "--recompute-activations") ||
                   cli_has(a, "--checkpoint-activations");
    if (!acc->ds_config_path && !rc_flag && !acc->recompute_read)
        notes_add(&s->notes, NOTE_ASSUMED, "activation checkpointing",
                  "%s: an accelerate config does not say (the training script's "
                  "gradient_checkpointing does); --recompute full sets it",
                  layout_recompute_name(s->layout.recompute));
    /* a precision the file asks for that its backend's preset does not run:
     * said against the file, with the flag that sets another */
    bool precision_flag = cli_has(a, "--precision") || cli_has(a, "--bf16") ||
                          cli_has(a, "--fp16") || cli_has(a, "--fp8-format");
    if (acc->have_precision && !precision_flag && !cli_has(a, "--framework") &&
        !(s->fw.caps.precisions & (1u << s->layout.precision)))
        return err_setf(err, ERR_INPUT, file, "mixed_precision",
                        "%s: scaleplan's %s preset does not train in it (accelerate runs it "
                        "through Transformer Engine or torchao): add --precision bf16 to "
                        "simulate the job without it, or --framework NAME",
                        layout_precision_name(s->layout.precision), s->fw.name);
    return ERR_OK;
}

int cli_scenario(const cli_args_t *a, scenario_t *s, err_t *err)
{
    return cli_scenario_from(a, NULL, s, err);
}

/* A Megatron-Bridge input (--bridge-overrides): its text and what its
 * launch command's recipe says where the flags do not. */
typedef struct {
    const char *path;         /* the file, NULL when not given */
    char *data;               /* its text; a launch script's: the words of the Bridge command */
    notes_t notes;            /* what the shell reader said of a launch script */
    char recipe_name[160];    /* the recipe, "performance launcher", or "" */
    bridge_recipe_t recipe;   /* the model, GPU count, GPU and precision it names */
    bool model, gpu, gpus;    /* taken from the recipe (the flags did not say) */
} bridge_in_t;

/* Read the --bridge-overrides file into b: a launch script is expanded to
 * the Bridge command it runs; the recipe's name (or the performance
 * launcher's flags) is read for the model, GPUs and precision. The
 * preset a scaleplan export names goes to in->planned_for. */
static int read_bridge(const cli_args_t *a, cli_inputs_t *in, bridge_in_t *b, err_t *err)
{
    memset(b, 0, sizeof *b);
    b->recipe.precision = -1;
    b->path = cli_get(a, "--bridge-overrides");
    if (!b->path)
        return ERR_OK;
    int rc = fileio_read_all(b->path, &b->data, NULL, err);
    if (rc)
        return rc;
    launch_planned_for(b->data, in->planned_for, sizeof in->planned_for);
    /* a launch script (variables, loops, heredocs): the words of the
     * Bridge command it runs, as the shell expands them */
    char *cmd = NULL;
    err_t shell_err;
    if (megatron_shell_command(b->data, strlen(b->data), b->path, &cmd, &b->notes, &shell_err) ==
            ERR_OK &&
        cmd) {
        free(b->data);
        b->data = cmd;
    } else {
        free(cmd);
        notes_free(&b->notes);
        memset(&b->notes, 0, sizeof b->notes);
    }
    if (bridge_recipe(b->data, b->recipe_name, sizeof b->recipe_name))
        bridge_recipe_parts(b->recipe_name, &b->recipe);
    bridge_perf_run(b->data, &b->recipe);
    if (!b->recipe_name[0] && (b->recipe.gpus || b->recipe.gpu[0] || b->recipe.precision >= 0))
        snprintf(b->recipe_name, sizeof b->recipe_name, "performance launcher");
    return ERR_OK;
}

/* Without --framework, the framework the inputs name: a torchtitan or
 * accelerate config's, DeepSpeed, the preset a scaleplan export was
 * planned for, or the newest Megatron-Bridge for Bridge overrides; NULL
 * when --framework is given or nothing names one. */
static const char *framework_of_inputs(const cli_args_t *a, const cli_inputs_t *in,
                                       const char *framework)
{
    fw_preset_t planned;
    err_t no_preset;
    /* a scaleplan export names the preset it was planned for */
    bool from_plan = in->planned_for[0] && fw_load(in->planned_for, &planned, &no_preset) == ERR_OK;
    if (!framework && in->have_tt)
        return in->tt.framework;
    if (!framework && in->have_acc)
        return in->acc.framework;
    if (!framework && cli_get(a, "--deepspeed"))
        return "deepspeed";
    if (!framework && from_plan)
        return in->planned_for;
    if (!framework && cli_get(a, "--bridge-overrides"))
        return launch_framework(LAUNCH_NEMO);
    return NULL;
}

/* The model of the scenario into spec: a torchtitan config's (unless
 * --model), the Megatron arguments' (refusing --model as well), the base's,
 * the one a Bridge recipe names, or --model; and the GPU count a launch
 * file gives when the flags do not (*from_launcher). */
static int choose_model(const cli_args_t *a, const cli_base_t *base, cli_inputs_t *in,
                        bridge_in_t *b, scenario_spec_t *spec, bool *toml_model_ignored,
                        bool *from_launcher, err_t *err)
{
    int rc;
    if (in->have_tt) {
        if (cli_get(a, "--model") || a->n_positional > 0) {
            *toml_model_ignored = true;
            if ((rc = cli_args_model_name(a, &spec->model, err)))
                return rc;
        } else if (in->tt.have_model) {
            spec->model_given = &in->tt.model;
        } else {
            spec->model = in->tt.model_name;
        }
        if (!spec->cluster.n_gpus && in->tt.world_size) {
            spec->cluster.n_gpus = in->tt.world_size;
            *from_launcher = true;
        }
    } else if (in->have_mg && in->mg.have_model) {
        if (cli_get(a, "--model") || a->n_positional > 0)
            return err_setf(err, ERR_INPUT, NULL, "--model",
                            "the Megatron arguments define the model (--num-layers, "
                            "--hidden-size, ...); give one or the other");
        spec->model_given = &in->mg.model;
    } else if (base && base->model) {
        spec->model_given = base->model;
    } else if (b->recipe.model[0] && !cli_get(a, "--model") && a->n_positional == 0) {
        model_t probe;
        err_t ignore;
        if (model_load(b->recipe.model, &probe, &ignore))
            return err_setf(err, ERR_INPUT, b->path, "--recipe",
                            "%s names the model '%s', which is not in scaleplan's catalog "
                            "(scaleplan catalog models); give --model NAME or a config.json",
                            b->recipe_name, b->recipe.model);
        spec->model = b->recipe.model;
        b->model = true;
    } else if ((rc = cli_args_model_name(a, &spec->model, err))) {
        return rc;
    }
    if (in->have_acc && !spec->cluster.n_gpus && in->acc.n_processes) {
        spec->cluster.n_gpus = in->acc.n_processes;
        *from_launcher = true;
    }
    if (in->have_mg && !spec->cluster.n_gpus && in->mg.world_size) {
        spec->cluster.n_gpus = in->mg.world_size;
        *from_launcher = true;
    }
    return ERR_OK;
}

/* A torchtitan config's or the Megatron arguments' layout and options
 * onto the scenario (they define what runs; explicit flags come after),
 * with their notes. */
static void apply_launch_file(const cli_inputs_t *in, bool toml_model_ignored,
                              bool from_launcher, scenario_t *s)
{
    if (in->have_tt) {
        notes_append(&s->notes, &in->tt.notes);
        s->layout = in->tt.layout;
        torchtitan_options(&in->tt, &s->opt);
        if (toml_model_ignored)
            notes_add(&s->notes, NOTE_IGNORED, "model.flavor",
                      "the torchtitan config's model is replaced by --model");
        if (from_launcher)
            notes_add(&s->notes, NOTE_ASSUMED, "--gpus",
                      "%d, the product of the config's parallel degrees", in->tt.world_size);
    }
    if (in->have_mg) {
        /* The command line defines what runs: its layout and options
         * replace the preset's; explicit flags below still override. */
        notes_append(&s->notes, &in->mg.notes);
        s->layout = in->mg.layout;
        megatron_args_options(&in->mg, &s->opt);
        if (from_launcher)
            notes_add(&s->notes, NOTE_ASSUMED, "--gpus",
                      "%d from the launcher (torchrun --nproc_per_node x --nnodes)",
                      in->mg.world_size);
    }
}

/* The Bridge input onto the scenario: the performance launcher's release
 * layout for its recipe on gpu, then the overrides, then what the recipe
 * gave (model, GPU, GPUs, precision unless something says another), said. */
static int apply_bridge(const cli_args_t *a, const bridge_in_t *b, const char *gpu,
                        scenario_t *s, err_t *err)
{
    notes_append(&s->notes, &b->notes);
    /* the performance launcher's recipe runs its own layout on that GPU
     * in that precision; the command's flags come after */
    char what[400];
    int perf = bridge_perf_layout(b->data, gpu, &s->layout, what, sizeof what);
    if (perf > 0)
        notes_add(&s->notes, NOTE_ASSUMED, "--model_recipe_name", "%s", what);
    else if (perf < 0)
        notes_add(&s->notes, NOTE_ASSUMED, "--model_recipe_name",
                  "%s: the framework preset's layout and the command's flags are "
                  "simulated",
                  what);
    int rc = bridge_read_overrides_notes(b->data, b->path, &s->model, &s->layout, &s->notes, err);
    if (rc)
        return rc;
    if (b->model)
        notes_add(&s->notes, NOTE_ASSUMED, "--model", "%s, from the launch command (%s)",
                  b->recipe.model, b->recipe_name);
    if (b->gpu)
        notes_add(&s->notes, NOTE_ASSUMED, "--gpu", "%s, from the launch command (%s)",
                  b->recipe.gpu, b->recipe_name);
    if (b->gpus)
        notes_add(&s->notes, NOTE_ASSUMED, "--gpus", "%d, from the launch command (%s)",
                  b->recipe.gpus, b->recipe_name);
    bool precision_given = strstr(b->data, "mixed_precision=") || cli_get(a, "--precision") ||
                           cli_has(a, "--bf16") || cli_has(a, "--fp16") ||
                           cli_has(a, "--fp8-format");
    if (b->recipe.precision >= 0 && !precision_given) {
        s->layout.precision = (precision_t)b->recipe.precision;
        notes_add(&s->notes, NOTE_ASSUMED, "mixed_precision", "%s, from the launch command (%s)",
                  layout_precision_name(s->layout.precision), b->recipe_name);
    }
    return ERR_OK;
}

int cli_scenario_from(const cli_args_t *a, const cli_base_t *base, scenario_t *s, err_t *err)
{
    memset(s, 0, sizeof *s);
    scenario_spec_t spec = {0};
    cli_inputs_t in;
    bridge_in_t b;
    int rc;
    spec.framework = cli_get(a, "--framework");
    spec.assume_architecture = cli_get(a, "--assume-architecture");
    memset(&in, 0, sizeof in);
    memset(&b, 0, sizeof b);
    if ((rc = cli_cluster_spec(a, &spec.cluster, err)) ||
        (rc = read_inputs(a, spec.cluster.n_gpus, &in, err)) ||
        (rc = read_bridge(a, &in, &b, err)))
        goto out;
    /* a Megatron-Bridge launch command's recipe names the model, the GPUs
     * and the precision where the flags do not */
    if (b.recipe.gpu[0] && !spec.cluster.gpu && !spec.cluster.cluster) {
        spec.cluster.gpu = b.recipe.gpu;
        b.gpu = true;
    }
    if (b.recipe.gpus && !spec.cluster.n_gpus) {
        spec.cluster.n_gpus = b.recipe.gpus;
        b.gpus = true;
    }
    /* Without --framework, the inputs name the framework that runs them. */
    const char *fw_assumed = framework_of_inputs(a, &in, spec.framework);
    if (fw_assumed)
        spec.framework = fw_assumed;
    bool from_launcher = false, toml_model_ignored = false;
    if ((rc = choose_model(a, base, &in, &b, &spec, &toml_model_ignored, &from_launcher, err)) ||
        (rc = scenario_begin(&spec, s, err)))
        goto out;
    if (fw_assumed)
        notes_add(&s->notes, NOTE_ASSUMED, "--framework",
                  "%s (the framework of the %s; --framework overrides)", s->fw.name,
                  in.have_tt                         ? "torchtitan config"
                  : in.have_acc                      ? "accelerate config"
                  : fw_assumed == in.planned_for     ? "plan the configuration was written from"
                  : cli_get(a, "--bridge-overrides") ? "Megatron-Bridge overrides"
                                                     : "DeepSpeed config");
    /* what the base fixes replaces the preset's defaults; flags come last */
    if (base && base->layout)
        s->layout = *base->layout;
    if (base && base->opt)
        s->opt = *base->opt;
    apply_launch_file(&in, toml_model_ignored, from_launcher, s);
    if (in.have_acc && (rc = apply_accelerate(a, &in.acc, from_launcher, s, err)))
        goto out;
    if (b.path && (rc = apply_bridge(a, &b, spec.cluster.gpu, s, err)))
        goto out;
    if ((rc = cli_layout_flags(a, &s->model, &s->layout, &s->opt, &s->notes, err)) ||
        (rc = cli_sim_switches(a, &s->opt, err)))
        goto out;
    /* a launch file or --grad-dtype says the gradients' size; otherwise the
     * framework's, for the precision the run ends with */
    s->grad_bytes_fixed = in.have_tt || in.have_mg || (base && base->layout) ||
                          cli_get(a, "--grad-dtype") != NULL;
    /* no batch from flags or inputs: the plan's default, said */
    if (!in.have_tt && !in.have_mg && !in.have_acc && !cli_get(a, "--deepspeed") && !b.path &&
        !(base && base->layout))
        scenario_default_batch(&s->model, &s->layout, s->cluster.n_gpus, &s->notes);
    rc = scenario_finish(s, cli_get(a, "--profile"), err);
    if (rc == ERR_INPUT && from_launcher && !strstr(err->msg, "--gpus")) {
        /* the GPU count was the launch file's: say how to give another */
        size_t n = strlen(err->msg);
        snprintf(err->msg + n, sizeof err->msg - n,
                 " (%d GPUs from the launch file; give --gpus N for the job's count)",
                 s->cluster.n_gpus);
    }
out:
    inputs_free(&in);
    notes_free(&b.notes);
    free(b.data);
    return rc;
}
