/* compose: which source of a scenario wins (inputs/compose.h): the
 * framework inputs read, then laid over the preset and base in the
 * header's order, the flags last through the caller's hook. */
#include "inputs/compose.h"

#include <stdlib.h>
#include <string.h>

#include "common/fileio.h"
#include "inputs/accelerate.h"
#include "inputs/bridge.h"
#include "inputs/megatron_args.h"
#include "inputs/torchtitan.h"

/* The preset a file scaleplan wrote was planned for: its "# planned for
 * NAME" line (reports/launch writes it), into name; false when the text
 * has none or the name does not fit. */
static bool planned_for(const char *text, char *name, size_t cap)
{
    static const char tag[] = "# planned for ";
    for (const char *p = text; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
        if (strncmp(p, tag, sizeof tag - 1) != 0)
            continue;
        const char *b = p + sizeof tag - 1;
        size_t n = strcspn(b, "; \n");
        if (n == 0 || n >= cap)
            return false;
        memcpy(name, b, n);
        name[n] = '\0';
        return true;
    }
    return false;
}

/* The framework inputs a command line names, read before the scenario. */
typedef struct {
    megatron_args_t mg;
    bool have_mg;
    torchtitan_t tt;
    bool have_tt;
    accelerate_t acc;
    bool have_acc;
    char planned_for[FW_NAME_MAX]; /* the preset a scaleplan export names */
} compose_inputs_t;

static void inputs_free(compose_inputs_t *in)
{
    if (in->have_mg)
        megatron_args_free(&in->mg);
    if (in->have_tt)
        torchtitan_free(&in->tt);
    if (in->have_acc)
        accelerate_free(&in->acc);
}

static int read_inputs(const compose_sources_t *src, int n_gpus, compose_inputs_t *in, err_t *err)
{
    memset(in, 0, sizeof *in);
    const char *text = src->megatron_args;
    const char *file = src->megatron_args_file;
    const char *toml = src->torchtitan;
    if (text && file)
        return err_setf(err, ERR_INPUT, NULL, "--megatron-args-file",
                        "give the Megatron arguments once (--megatron-args or "
                        "--megatron-args-file)");
    if (src->bridge_overrides && (toml || text || file))
        return err_setf(err, ERR_INPUT, NULL, "--bridge-overrides",
                        "give one framework's inputs (Bridge overrides, Megatron arguments or a "
                        "torchtitan config)");
    if (toml && (text || file))
        return err_setf(err, ERR_INPUT, NULL, "--torchtitan",
                        "give one framework's inputs (Megatron arguments or a torchtitan "
                        "config)");
    const char *acc = src->accelerate_config;
    if (acc && (toml || text || file || src->bridge_overrides ||
                src->deepspeed))
        return err_setf(err, ERR_INPUT, NULL, "--accelerate-config",
                        "give one framework's inputs (an accelerate config names its DeepSpeed "
                        "config itself, in deepspeed_config_file)");
    if (acc) {
        in->have_acc = true;
        return accelerate_read_file(acc, &in->acc, err);
    }
    if (toml) {
        in->have_tt = true;
        return torchtitan_read_file_as(toml, src->torchtitan_config, n_gpus,
                                       src->model != NULL, &in->tt,
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
    const char *vocab = src->vocab_size;
    if (!rc && vocab) {
        rc = megatron_args_set(&in->mg, "--vocab-size", vocab, err);
        if (!rc)
            notes_add(&in->mg.notes, NOTE_ASSUMED, "--vocab-size",
                      "%s, from scaleplan's command line", vocab);
    }
    if (!rc)
        rc = megatron_args_finish(&in->mg, err);
    if (!rc)
        planned_for(file ? data : text, in->planned_for, sizeof in->planned_for);
    free(data);
    return rc;
}

/* An accelerate config onto the scenario's layout; explicit flags come
 * after. It holds no batch size: unless its DeepSpeed config gives one, the
 * flags must. */
static int apply_accelerate(const compose_sources_t *src, const accelerate_t *acc,
                            bool gpus_from_file, scenario_t *s, err_t *err)
{
    deepspeed_given_t g;
    int rc;
    if ((rc = src->deepspeed_given(src->flags, &s->model, &g, err)) ||
        (rc = accelerate_apply(acc, &g, &s->layout, &s->opt, &s->notes, err)))
        return rc;
    if (gpus_from_file)
        notes_add(&s->notes, NOTE_ASSUMED, "--gpus", "%d, the config's num_processes",
                  acc->n_processes);
    const char *file = src->accelerate_config;
    if (!acc->ds_config_path && !src->micro_batch && !src->global_batch)
        return err_setf(err, ERR_INPUT, file, "--micro-batch",
                        "an accelerate config does not give the batch size (the training "
                        "script does): add --micro-batch N (sequences per GPU), e.g. "
                        "--micro-batch 1, or --global-batch N");
    /* activation checkpointing is the training script's (gradient_checkpointing)
     * unless fsdp_config says it; a DeepSpeed config's own reader says its own */
    bool rc_flag = src->recompute;
    if (!acc->ds_config_path && !rc_flag && !acc->recompute_read)
        notes_add(&s->notes, NOTE_ASSUMED, "activation checkpointing",
                  "%s: an accelerate config does not say (the training script's "
                  "gradient_checkpointing does); --recompute full sets it",
                  layout_recompute_name(s->layout.recompute));
    /* a precision the file asks for that its backend's preset does not run:
     * said against the file, with the flag that sets another */
    bool precision_flag = src->precision;
    if (acc->have_precision && !precision_flag && !src->framework &&
        !(s->fw.caps.precisions & (1u << s->layout.precision)))
        return err_setf(err, ERR_INPUT, file, "mixed_precision",
                        "%s: scaleplan's %s preset does not train in it (accelerate runs it "
                        "through Transformer Engine or torchao): add --precision bf16 to "
                        "simulate the job without it, or --framework NAME",
                        layout_precision_name(s->layout.precision), s->fw.name);
    return ERR_OK;
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
static int read_bridge(const compose_sources_t *src, compose_inputs_t *in, bridge_in_t *b,
                       err_t *err)
{
    memset(b, 0, sizeof *b);
    b->recipe.precision = -1;
    b->path = src->bridge_overrides;
    if (!b->path)
        return ERR_OK;
    int rc = fileio_read_all(b->path, &b->data, NULL, err);
    if (rc)
        return rc;
    planned_for(b->data, in->planned_for, sizeof in->planned_for);
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
static const char *framework_of_inputs(const compose_sources_t *src, const compose_inputs_t *in,
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
    if (!framework && src->deepspeed)
        return "deepspeed";
    if (!framework && from_plan)
        return in->planned_for;
    if (!framework && src->bridge_overrides)
        return src->bridge_framework;
    return NULL;
}

/* The model of the scenario into spec: a torchtitan config's (unless
 * --model), the Megatron arguments' (refusing --model as well), the base's,
 * the one a Bridge recipe names, or --model; and the GPU count a launch
 * file gives when the flags do not (*from_launcher). */
static int choose_model(const compose_sources_t *src, const compose_base_t *base,
                        compose_inputs_t *in, bridge_in_t *b, scenario_spec_t *spec,
                        bool *toml_model_ignored, bool *from_launcher, err_t *err)
{
    if (in->have_tt) {
        if (src->model != NULL) {
            *toml_model_ignored = true;
            spec->model = src->model;
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
        if (src->model != NULL)
            return err_setf(err, ERR_INPUT, NULL, "--model",
                            "the Megatron arguments define the model (--num-layers, "
                            "--hidden-size, ...); give one or the other");
        spec->model_given = &in->mg.model;
    } else if (base && base->model) {
        spec->model_given = base->model;
    } else if (b->recipe.model[0] && !src->model) {
        model_t probe;
        err_t ignore;
        if (model_load(b->recipe.model, &probe, &ignore))
            return err_setf(err, ERR_INPUT, b->path, "--recipe",
                            "%s names the model '%s', which is not in scaleplan's catalog "
                            "(scaleplan catalog models); give --model NAME or a config.json",
                            b->recipe_name, b->recipe.model);
        spec->model = b->recipe.model;
        b->model = true;
    } else if (!(spec->model = src->model)) {
        return err_setf(err, ERR_INPUT, NULL, "--model",
                        "say which model: --model NAME (scaleplan catalog "
                        "models) or --model path/to/config.json");
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
static void apply_launch_file(const compose_inputs_t *in, bool toml_model_ignored,
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
static int apply_bridge(const compose_sources_t *src, const bridge_in_t *b, const char *gpu,
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
    if (rc || (rc = bridge_read_options(b->data, b->path, &s->opt, err)))
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
    bool precision_given = strstr(b->data, "mixed_precision=") || src->precision;
    if (b->recipe.precision >= 0 && !precision_given) {
        s->layout.precision = (precision_t)b->recipe.precision;
        notes_add(&s->notes, NOTE_ASSUMED, "mixed_precision", "%s, from the launch command (%s)",
                  layout_precision_name(s->layout.precision), b->recipe_name);
    }
    return ERR_OK;
}

int compose_scenario(const compose_sources_t *src, const compose_base_t *base, scenario_t *s,
                     err_t *err)
{
    memset(s, 0, sizeof *s);
    scenario_spec_t spec = {0};
    compose_inputs_t in;
    bridge_in_t b;
    int rc;
    spec.framework = src->framework;
    spec.assume_architecture = src->assume_architecture;
    memset(&in, 0, sizeof in);
    memset(&b, 0, sizeof b);
    spec.cluster = src->cluster;
    if ((rc = read_inputs(src, spec.cluster.n_gpus, &in, err)) ||
        (rc = read_bridge(src, &in, &b, err)))
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
    const char *fw_assumed = framework_of_inputs(src, &in, spec.framework);
    if (fw_assumed)
        spec.framework = fw_assumed;
    bool from_launcher = false, toml_model_ignored = false;
    if ((rc = choose_model(src, base, &in, &b, &spec, &toml_model_ignored, &from_launcher, err)) ||
        (rc = scenario_begin(&spec, s, err)))
        goto out;
    if (fw_assumed)
        notes_add(&s->notes, NOTE_ASSUMED, "--framework",
                  "%s (the framework of the %s; --framework overrides)", s->fw.name,
                  in.have_tt                         ? "torchtitan config"
                  : in.have_acc                      ? "accelerate config"
                  : fw_assumed == in.planned_for     ? "plan the configuration was written from"
                  : src->bridge_overrides ? "Megatron-Bridge overrides"
                                                     : "DeepSpeed config");
    /* what the base fixes replaces the preset's defaults; flags come last */
    if (base && base->layout)
        s->layout = *base->layout;
    if (base && base->opt)
        s->opt = *base->opt;
    apply_launch_file(&in, toml_model_ignored, from_launcher, s);
    if (in.have_acc && (rc = apply_accelerate(src, &in.acc, from_launcher, s, err)))
        goto out;
    if (b.path && (rc = apply_bridge(src, &b, spec.cluster.gpu, s, err)))
        goto out;
    if ((rc = src->apply_flags(src->flags, s, err)))
        goto out;
    /* a launch file or --grad-dtype says the gradients' size; otherwise the
     * framework's, for the precision the run ends with */
    s->grad_bytes_fixed = in.have_tt || in.have_mg || (base && base->layout) ||
                          src->grad_dtype;
    /* no batch from flags or inputs: the plan's default, said */
    if (!in.have_tt && !in.have_mg && !in.have_acc && !src->deepspeed && !b.path &&
        !(base && base->layout))
        scenario_default_batch(&s->model, &s->layout, s->cluster.n_gpus, &s->notes);
    rc = scenario_finish(s, src->profile, err);
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
