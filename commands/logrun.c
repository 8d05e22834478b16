#include "commands/logrun.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* Options for which a log only gives a guess; the user's flag decides. */
static bool guessed(const char *name)
{
    return strcmp(name, "--model") == 0 || strcmp(name, "--gpu") == 0 ||
           strcmp(name, "--framework") == 0;
}

/* Switches that undo each other. */
static const char *opposite(const char *name)
{
    static const char *const pairs[][2] = {{"--overlap-grad-reduce", "--no-overlap-grad-reduce"},
                                           {"--overlap-param-gather", "--no-overlap-param-gather"},
                                           {"--overlap-p2p", "--no-overlap-p2p"}};
    for (size_t i = 0; i < sizeof pairs / sizeof pairs[0]; i++)
        for (int k = 0; k < 2; k++)
            if (strcmp(name, pairs[i][k]) == 0)
                return pairs[i][1 - k];
    return NULL;
}

static bool same_value(const char *x, const char *y)
{
    char *ex, *ey;
    double a = strtod(x, &ex), b = strtod(y, &ey);
    if (ex != x && !*ex && ey != y && !*ey)
        return a == b;
    return strcasecmp(x, y) == 0;
}

/* Whether the user named a model (--model or the first bare word). */
static bool user_model(const cmd_args_t *a)
{
    return cmd_has(a, "--model") || a->n_positional > 0;
}

/* The argument block into megatron_args. Entries it does not take are
 * values validate_args derives (data_parallel_size, world_size, rank, ...)
 * or flags of a release its table lacks; an empty string or list is an
 * unset argument. Those are skipped and counted; a value megatron_args
 * refuses for a flag it knows is an error naming the line. */
static int read_block(logrun_t *r, err_t *err)
{
    megatron_args_init(&r->margs, r->log.file);
    megatron_args_t probe;
    megatron_args_init(&probe, r->log.file);
    int rc = ERR_OK;
    for (int i = 0; i < r->log.n_args && !rc; i++) {
        const tlog_setting_t *x = &r->log.args[i];
        if (!x->value[0] || strcmp(x->value, "[]") == 0) {
            r->margs_skipped++;
            continue;
        }
        err_t e;
        if (megatron_args_set(&r->margs, x->name, x->value, &e) == ERR_OK)
            continue;
        /* "None" is accepted for every argument megatron_args knows */
        if (megatron_args_set(&probe, x->name, "None", NULL) != ERR_OK) {
            r->margs_skipped++;
            continue;
        }
        char where[32];
        snprintf(where, sizeof where, "line %d", x->line);
        rc = err_setf(err, ERR_INPUT, r->log.file, where, "argument block: %s", e.msg);
    }
    megatron_args_free(&probe);
    if (!rc && (rc = megatron_args_finish(&r->margs, err)) == ERR_OK)
        r->has_margs = true;
    return rc;
}

/* With the argument block read, layout flags and --model would change what
 * the log fixes. */
static int refuse_layout_flags(const cmd_args_t *a, const logrun_t *r, err_t *err)
{
    if (user_model(a) && r->margs.have_model)
        return err_setf(err, ERR_INPUT, r->log.file, "--model",
                        "the log's argument block gives the architecture; drop --model");
    for (int i = 0; i < CMD_LAYOUT_OPTS.n; i++) {
        const char *name = CMD_LAYOUT_OPTS.opts[i].name;
        if (cmd_has(a, name))
            return err_setf(err, ERR_INPUT, r->log.file, name,
                            "the log's argument block gives the layout; drop %s", name);
    }
    return ERR_OK;
}

static int add_word(logrun_t *r, const char *name, const char *value, err_t *err)
{
    size_t len = strlen(name) + (value && *value ? strlen(value) + 1 : 0) + 1;
    char *w = malloc(len), **grown = realloc(r->words, (size_t)(r->n_words + 1) * sizeof *grown);
    if (!w || !grown) {
        free(w);
        if (grown)
            r->words = grown;
        return err_set(err, ERR_RUNTIME, "out of memory");
    }
    r->words = grown;
    if (value && *value)
        snprintf(w, len, "%s=%s", name, value);
    else
        snprintf(w, len, "%s", name);
    r->words[r->n_words++] = w;
    return ERR_OK;
}

/* Whether setting i is the last one of its option (a log may say a thing
 * twice, e.g. the world size line and the argument block). */
static bool last_of_its_option(const trainlog_t *t, int i)
{
    for (int k = i + 1; k < t->n_settings; k++)
        if (strcmp(t->settings[k].name, t->settings[i].name) == 0)
            return false;
    return true;
}

/* The value of a batch option as the user, the log's settings or its
 * argument block give it; 0 when none does. */
static double batch_given(const cmd_args_t *a, const logrun_t *r, const char *name)
{
    const char *v = cmd_get(a, name);
    if (!v)
        v = trainlog_setting(&r->log, name);
    if (v)
        return strtod(v, NULL);
    if (!r->has_margs)
        return 0;
    return strcmp(name, "--seq-len") == 0 ? r->margs.layout.seq_len : r->margs.layout.global_batch;
}

/* Whether x is a whole number within a millionth (a batch the log
 * derived from tokens and samples). */
static bool whole(double x)
{
    return x >= 1 && fabs(x - round(x)) <= 1e-6 * x;
}

/* The batch the log records in tokens (the plain forms' tokens column) or
 * sequences, as --global-batch and --seq-len where nothing else gives
 * them: the measured throughput is the log's tokens over its seconds, so
 * a batch assumed instead would make every measured rate wrong. */
static int batch_from_log(const cmd_args_t *a, logrun_t *r, err_t *err)
{
    double tokens = r->log.tokens_per_step, samples = r->log.samples_per_step;
    const char *flag_tokens = cmd_get(a, "--tokens-per-step");
    if (flag_tokens && tokens > 0 && fabs(strtod(flag_tokens, NULL) - tokens) > 1e-6 * tokens)
        return err_setf(err, ERR_INPUT, r->log.file, "--tokens-per-step",
                        "the log records %.0f tokens a step; the command line says %s", tokens,
                        flag_tokens);
    if (!(tokens > 0) && flag_tokens)
        tokens = strtod(flag_tokens, NULL);
    double gb = batch_given(a, r, "--global-batch"), seq = batch_given(a, r, "--seq-len");
    if (!(tokens > 0)) {
        if (samples > 0 && !(gb > 0) && whole(samples)) {
            char v[32];
            snprintf(v, sizeof v, "%.0f", samples);
            return add_word(r, "--global-batch", v, err);
        }
        return ERR_OK;
    }
    if (!(seq > 0) && samples > 0)
        seq = tokens / samples;
    if (!(seq > 0) && gb > 0)
        seq = tokens / gb;
    if (!(seq > 0))
        return err_setf(err, ERR_INPUT, r->log.file, "--seq-len",
                        "%s %.0f tokens a step but neither the sequence length nor the batch in "
                        "sequences: give --seq-len (or --global-batch)",
                        r->log.tokens_per_step > 0 ? "the log records" : "--tokens-per-step gives",
                        tokens);
    if (!whole(seq) || !whole(tokens / seq))
        return err_setf(err, ERR_INPUT, r->log.file, "--seq-len",
                        "the log records %.0f tokens a step, which is not a whole number of "
                        "%.0f-token sequences",
                        tokens, seq);
    char v[32];
    int rc = ERR_OK;
    if (!cmd_get(a, "--seq-len") && !trainlog_setting(&r->log, "--seq-len") && !r->has_margs) {
        snprintf(v, sizeof v, "%.0f", round(seq));
        rc = add_word(r, "--seq-len", v, err);
    }
    if (!rc && !(gb > 0)) {
        snprintf(v, sizeof v, "%.0f", round(tokens / seq));
        rc = add_word(r, "--global-batch", v, err);
    }
    return rc;
}

/* The batch the run was simulated with against the tokens a step the log
 * records: a flag that contradicts the log is an error, not a rate. */
static int batch_agrees(const cmd_args_t *a, const logrun_t *r, err_t *err)
{
    const layout_t *l = &r->s.layout;
    double tokens = r->log.tokens_per_step, mine = (double)l->global_batch * l->seq_len;
    const char *flag_tokens = cmd_get(a, "--tokens-per-step");
    if (!(tokens > 0) && flag_tokens) {
        tokens = strtod(flag_tokens, NULL);
        if (fabs(mine - tokens) > 1e-6 * tokens)
            return err_setf(err, ERR_INPUT, NULL, "--tokens-per-step",
                            "%s; a global batch of %d x %d tokens makes %.0f", flag_tokens,
                            l->global_batch, l->seq_len, mine);
    }
    if (!(tokens > 0) || fabs(mine - tokens) <= 1e-6 * tokens)
        return ERR_OK;
    return err_setf(err, ERR_INPUT, r->log.file, "--global-batch",
                    "the log records %.0f tokens a step; a global batch of %d x %d tokens makes "
                    "%.0f",
                    tokens, l->global_batch, l->seq_len, mine);
}

/* "log line N" for the log's setting name, or "" when it has none. */
static bool from_setting(const logrun_t *r, const char *name, char *buf, size_t cap)
{
    for (int i = r->log.n_settings - 1; i >= 0; i--)
        if (strcmp(r->log.settings[i].name, name) == 0) {
            snprintf(buf, cap, "log line %d", r->log.settings[i].line);
            return true;
        }
    return false;
}

/* Where the run's batch, sequence length and GPU count come from, in the
 * order they are taken: the user's flag decides where given (a flag that
 * contradicts the log is refused elsewhere), then the log's settings and
 * argument block, then the figures the log's lines carry. A figure none
 * gives is an error naming the flag to give: a default batch, sequence
 * length or GPU count would turn the log's throughput into a wrong step
 * time or rate that nothing flags. */
static int figure_sources(const cmd_args_t *a, logrun_t *r, err_t *err)
{
    const trainlog_t *t = &r->log;
    const layout_t *ml = r->has_margs ? &r->margs.layout : NULL;
    /* batch */
    if (cmd_has(a, "--global-batch"))
        snprintf(r->from_batch, sizeof r->from_batch, "flag --global-batch");
    else if (from_setting(r, "--global-batch", r->from_batch, sizeof r->from_batch))
        ;
    else if (ml && ml->global_batch > 0)
        snprintf(r->from_batch, sizeof r->from_batch, "log's argument block");
    else if ((t->samples_per_step > 0 || t->tokens_per_step > 0) && t->batch_line > 0)
        snprintf(r->from_batch, sizeof r->from_batch, "log line %d", t->batch_line);
    else if (cmd_has(a, "--tokens-per-step"))
        snprintf(r->from_batch, sizeof r->from_batch, "flag --tokens-per-step");
    else
        return err_setf(err, ERR_INPUT, t->file, NULL,
                        "the log gives no global batch: give --global-batch (sequences) or "
                        "--tokens-per-step");
    /* sequence length */
    if (cmd_has(a, "--seq-len"))
        snprintf(r->from_seq, sizeof r->from_seq, "flag --seq-len");
    else if (from_setting(r, "--seq-len", r->from_seq, sizeof r->from_seq))
        ;
    else if (ml && ml->seq_len > 0)
        snprintf(r->from_seq, sizeof r->from_seq, "log's argument block");
    else if (t->tokens_per_step > 0 && t->batch_line > 0)
        snprintf(r->from_seq, sizeof r->from_seq, "log line %d (tokens over sequences a step)",
                 t->batch_line);
    else if (cmd_has(a, "--tokens-per-step"))
        snprintf(r->from_seq, sizeof r->from_seq, "flag --tokens-per-step over the batch");
    else
        return err_setf(err, ERR_INPUT, t->file, NULL,
                        "the log gives no sequence length: give --seq-len");
    /* GPUs */
    if (cmd_has(a, "--gpus"))
        snprintf(r->from_gpus, sizeof r->from_gpus, "flag --gpus");
    else if (from_setting(r, "--gpus", r->from_gpus, sizeof r->from_gpus))
        ;
    else if (t->n_gpus > 0 && t->gpus_line > 0)
        snprintf(r->from_gpus, sizeof r->from_gpus, "log line %d", t->gpus_line);
    else if (ml && ml->n_gpus > 0)
        snprintf(r->from_gpus, sizeof r->from_gpus, "log's argument block");
    else
        return err_setf(err, ERR_INPUT, t->file, NULL, "the log gives no GPU count: give --gpus");
    return ERR_OK;
}

/* The parameter count the log prints against the model's: more than 10%
 * apart means --model (or the log's own guess of it) is not the log's
 * model. Per-rank shard counts were summed by the reader. */
static int params_agree(const logrun_t *r, err_t *err)
{
    const trainlog_t *t = &r->log;
    if (!(t->params > 0))
        return ERR_OK;
    model_params_t mp;
    model_params(&r->s.model, &mp);
    if (!(mp.total > 0) || fabs(t->params / mp.total - 1) <= 0.10)
        return ERR_OK;
    char where[32];
    snprintf(where, sizeof where, "line %d", t->params_line);
    return err_setf(err, ERR_INPUT, t->file, t->params_line > 0 ? where : NULL,
                    "the log counts %.4g parameters%s%s; %s has %.4g (more than 10%% apart): "
                    "give the log's model with --model",
                    t->params, t->params_how[0] ? ", " : "", t->params_how, r->s.model.display,
                    mp.total);
}

/* The log's settings as options, checked against the user's flags, then
 * the user's own words. */
static int merge(const cmd_args_t *a, logrun_t *r, err_t *err)
{
    int rc = add_word(r, a->argc > 0 ? a->argv[0] : "validate", NULL, err);
    size_t used = 0;
    r->from_log[0] = '\0';
    for (int i = 0; i < r->log.n_settings && !rc; i++) {
        const tlog_setting_t *x = &r->log.settings[i];
        if (!last_of_its_option(&r->log, i) || !cmd_find_opt(a, x->name))
            continue;
        const cmd_opt_t *o = cmd_find_opt(a, x->name);
        const char *mine = cmd_get(a, o->name), *opp = opposite(o->name);
        char where[32];
        snprintf(where, sizeof where, "line %d", x->line);
        if (opp && cmd_has(a, opp))
            return err_setf(err, ERR_INPUT, r->log.file, where,
                            "the log says %s; the command line says %s", o->name, opp);
        bool user_said = mine || (strcmp(o->name, "--model") == 0 && user_model(a));
        if (user_said && guessed(o->name))
            continue;
        if (mine && o->metavar && !same_value(mine, x->value))
            return err_setf(err, ERR_INPUT, r->log.file, where,
                            "the log says %s %s; the command line says %s %s", o->name,
                            x->value, o->name, mine);
        if (mine)
            continue;
        rc = add_word(r, o->name, o->metavar ? x->value : NULL, err);
        if (!rc && used < sizeof r->from_log) {
            int k = snprintf(r->from_log + used, sizeof r->from_log - used, "%s%s%s%s",
                             used ? ", " : "", o->name, o->metavar ? " " : "",
                             o->metavar ? x->value : "");
            if (k > 0)
                used += (size_t)k;
            if (x->line > 0 && used < sizeof r->from_log) {
                k = snprintf(r->from_log + used, sizeof r->from_log - used, " (line %d)", x->line);
                if (k > 0)
                    used += (size_t)k;
            }
        }
    }
    if (!rc)
        rc = batch_from_log(a, r, err);
    if (!rc)
        rc = figure_sources(a, r, err);
    for (int i = 1; i < a->argc && !rc; i++)
        rc = add_word(r, a->argv[i], NULL, err);
    if (rc)
        return rc;
    if ((rc = cmd_parse(r->n_words, r->words, a->groups, a->n_groups, 0, &r->args, err)))
        return rc;
    r->args.catalog = a->catalog; /* the run's parsed catalog */
    return ERR_OK;
}

/* The run for the simulator side: the steady state of the log. */
static void measured(logrun_t *r, const char *path)
{
    dbl_measured_t *m = &r->m;
    const trainlog_t *t = &r->log;
    m->label = path;
    m->in = r->s.input;
    m->step_time_s = t->step_time_s.mean;
    m->step_cv = isfinite(t->step_time_s.cv) ? t->step_time_s.cv : 0;
    m->memory_gib = t->memory_gib > 0 ? t->memory_gib : NAN;
    m->memory_kind = t->memory_kind;
    m->comp_s[DBL_COMP_COMPUTE] = t->part_s[TLOG_PART_FORWARD] + t->part_s[TLOG_PART_BACKWARD];
    m->comp_s[DBL_COMP_GRAD_REDUCE] = t->part_s[TLOG_PART_GRAD_REDUCE];
    m->comp_s[DBL_COMP_OPTIMIZER] = t->part_s[TLOG_PART_OPTIMIZER];
}

/* Refuse a steady state no GPU could deliver: the fastest steady step's
 * model FLOPs per GPU above the dense peak of the fastest type the run's
 * precision computes in. Such a log has the wrong batch, GPU count or
 * model for the run, or a step time that is not a step's. */
static int physical(const logrun_t *r, err_t *err)
{
    const trainlog_t *t = &r->log;
    const sim_input_t *in = &r->s.input;
    double ceiling = sim_ceiling_tflops(in);
    int fastest = -1;
    for (int i = t->first_steady; i >= 0 && i < t->n_records; i++) {
        const tlog_record_t *x = &t->records[i];
        if (x->skipped || !(x->step_time_s > 0))
            continue;
        if (fastest < 0 || x->step_time_s < t->records[fastest].step_time_s)
            fastest = i;
    }
    if (fastest < 0 || !(ceiling > 0))
        return ERR_OK;
    const tlog_record_t *x = &t->records[fastest];
    double implied = sim_implied_tflops(in, x->step_time_s);
    if (!(implied > ceiling))
        return ERR_OK;
    char where[32];
    snprintf(where, sizeof where, "line %d", x->line);
    return err_setf(err, ERR_INPUT, t->file, where,
                    "a step of %.4g s implies %.0f model TFLOP/s per GPU (%.0f%% of the %s's "
                    "%.0f TFLOP/s dense peak): no GPU runs that fast, so the model, the batch "
                    "(%d x %d tokens) or the GPU count (%d) is not the log's run",
                    x->step_time_s, implied, 100 * implied / ceiling, in->cluster->gpu.name,
                    ceiling, in->layout->global_batch, in->layout->seq_len, in->layout->n_gpus);
}

int logrun_load(const cmd_args_t *a, const char *path, logrun_t *r, err_t *err)
{
    memset(r, 0, sizeof *r);
    int rc = trainlog_read(path, cmd_get(a, "--log-format"), &r->log, err);
    if (rc)
        return rc;
    if (r->log.n_args > 0 &&
        ((rc = read_block(r, err)) || (rc = refuse_layout_flags(a, r, err))))
        return rc;
    if ((rc = merge(a, r, err)))
        return rc;
    cmd_base_t base = {r->has_margs && r->margs.have_model ? &r->margs.model : NULL,
                       r->has_margs ? &r->margs.layout : NULL,
                       r->has_margs ? &r->margs.opt : NULL};
    if ((rc = cmd_scenario_from(&r->args, &base, &r->s, err))) {
        /* say which log the missing or wrong flag is for */
        if (strncmp(err->msg, path, strlen(path)) != 0)
            err_prefix(err, path);
        return rc;
    }
    const layout_t *l = &r->s.layout;
    tlog_known_t known = {l->n_gpus, l->global_batch, (double)l->global_batch * l->seq_len};
    if ((rc = batch_agrees(a, r, err)) || (rc = params_agree(r, err)) ||
        (rc = trainlog_settle(&r->log, &known, err)) || (rc = physical(r, err)))
        return rc;
    snprintf(r->from_step, sizeof r->from_step, "%s%s", r->log.step_time_from,
             r->log.step_time_s.n > 0 && r->log.records[r->log.first_steady].derived
                 ? " (batch and GPU count as above)"
                 : "");
    measured(r, path);
    return ERR_OK;
}

void logrun_free(logrun_t *r)
{
    trainlog_free(&r->log);
    megatron_args_free(&r->margs);
    scenario_free(&r->s);
    for (int i = 0; i < r->n_words; i++)
        free(r->words[i]);
    free(r->words);
    memset(r, 0, sizeof *r);
}
