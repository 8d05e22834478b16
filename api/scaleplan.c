/* The library's entry points (include/scaleplan.h): a spec becomes the
 * command's own words, which run through the same dispatch as the command
 * line's (commands/dispatch), with the --json document captured instead of
 * printed. The command line itself (cli/main.c) is a client of these
 * entry points: it hands its words to sp_command. What a command accepts,
 * refuses and computes is therefore the same whichever door it came in. */
#include "scaleplan.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "build_config.h"
#include "commands/commands.h"
#include "commands/dispatch.h"
#include "common/catalog.h"
#include "common/error.h"
#include "common/strfmt.h"

#define SP_EXPORT __attribute__((visibility("default")))

struct sp_context {
    catalog_t *catalog;     /* parsed once, kept across calls */
    char error[ERR_MSG_MAX + 64];
};

/* The words of one call: heap strings, argv[0] the command. */
typedef struct {
    char **w;
    int n, cap;
} words_t;

static void words_free(words_t *w)
{
    for (int i = 0; i < w->n; i++)
        free(w->w[i]);
    free(w->w);
    memset(w, 0, sizeof *w);
}

static int words_add(words_t *w, const char *a, const char *b)
{
    if (w->n + 1 >= w->cap) {
        int cap = w->cap ? 2 * w->cap : 32;
        char **p = realloc(w->w, (size_t)cap * sizeof *p);
        if (!p)
            return -1;
        w->w = p;
        w->cap = cap;
    }
    size_t n = strlen(a) + (b ? strlen(b) : 0) + 1;
    char *s = malloc(n);
    if (!s)
        return -1;
    snprintf(s, n, "%s%s", a, b ? b : "");
    w->w[w->n++] = s;
    w->w[w->n] = NULL;
    return 0;
}

static int fail(sp_context_t *ctx, int code, const char *command, const char *msg)
{
    snprintf(ctx->error, sizeof ctx->error, "scaleplan %s: %s", command ? command : "", msg);
    return code;
}

/* One value as the word after its flag: a string as it is, a number as
 * the shortest text that reads back the same. */
static int value_text(const cJSON *v, char *buf, size_t cap)
{
    if (cJSON_IsString(v))
        return snprintf(buf, cap, "%s", v->valuestring) < (int)cap ? 0 : -1;
    if (cJSON_IsNumber(v) && isfinite(v->valuedouble)) {
        double x = v->valuedouble;
        if (x == floor(x) && fabs(x) < 9e15)
            return snprintf(buf, cap, "%.0f", x) < (int)cap ? 0 : -1;
        return snprintf(buf, cap, "%.17g", x) < (int)cap ? 0 : -1;
    }
    return -1;
}

/* "--" and the key with '_' as '-'. */
static void flag_name(const char *key, char *buf, size_t cap)
{
    snprintf(buf, cap, "--%s", key);
    for (char *p = buf + 2; *p; p++)
        if (*p == '_')
            *p = '-';
}

/* The spec's entry key = v as words; a message in why on a bad value. */
static int entry_words(words_t *w, const char *key, const cJSON *v, char *why, size_t cap)
{
    char flag[128], text[4096];
    if (strlen(key) > 100)
        return snprintf(why, cap, "spec: key '%.40s...' is no flag", key), -1;
    flag_name(key, flag, sizeof flag);
    if (cJSON_IsBool(v))
        return cJSON_IsTrue(v) ? words_add(w, flag, NULL) : 0;
    if (cJSON_IsArray(v)) {
        for (const cJSON *x = v->child; x; x = x->next)
            if (entry_words(w, key, x, why, cap))
                return -1;
        return 0;
    }
    if (value_text(v, text, sizeof text))
        return snprintf(why, cap, "spec: %s: a string, a number, true/false or a list", key), -1;
    return words_add(w, flag, NULL) || words_add(w, text, NULL) ? -1 : 0;
}

/* The command's words from the spec: its flags, then "args", then --json. */
static int spec_words(const char *command, const char *spec, words_t *w, char *why, size_t cap)
{
    cJSON *root = cJSON_Parse(spec ? spec : "{}");
    if (!root || !cJSON_IsObject(root)) {
        cJSON_Delete(root);
        snprintf(why, cap, "spec: not a JSON object");
        return SP_ERR_INPUT;
    }
    int rc = words_add(w, command, NULL) ? SP_ERR_RUNTIME : SP_OK;
    const cJSON *args = NULL;
    for (const cJSON *e = root->child; e && !rc; e = e->next) {
        if (strcmp(e->string, "args") == 0) {
            args = e;
            continue;
        }
        if (strcmp(e->string, "json") == 0)
            continue;
        if (entry_words(w, e->string, e, why, cap))
            rc = why[0] ? SP_ERR_INPUT : SP_ERR_RUNTIME;
    }
    char text[4096];
    for (const cJSON *a = args ? (cJSON_IsArray(args) ? args->child : args) : NULL; a && !rc;
         a = cJSON_IsArray(args) ? a->next : NULL) {
        if (value_text(a, text, sizeof text)) {
            snprintf(why, cap, "spec: args: strings or numbers");
            rc = SP_ERR_INPUT;
        } else if (words_add(w, text, NULL)) {
            rc = SP_ERR_RUNTIME;
        }
    }
    if (!rc && words_add(w, "--json", NULL))
        rc = SP_ERR_RUNTIME;
    if (rc == SP_ERR_RUNTIME && !why[0])
        snprintf(why, cap, "out of memory");
    cJSON_Delete(root);
    return rc;
}

SP_EXPORT int sp_abi_version(void)
{
    return SP_ABI_VERSION;
}

SP_EXPORT const char *sp_version(void)
{
    return SCALEPLAN_VERSION;
}

SP_EXPORT sp_context_t *sp_context_new(void)
{
    sp_context_t *ctx = calloc(1, sizeof *ctx);
    if (ctx && !(ctx->catalog = catalog_create())) {
        free(ctx);
        return NULL;
    }
    return ctx;
}

SP_EXPORT void sp_context_free(sp_context_t *ctx)
{
    if (!ctx)
        return;
    catalog_destroy(ctx->catalog);
    free(ctx);
}

SP_EXPORT const char *sp_last_error(const sp_context_t *ctx)
{
    return ctx ? ctx->error : "no context";
}

SP_EXPORT void sp_free(void *p)
{
    free(p);
}

SP_EXPORT int sp_run(sp_context_t *ctx, const char *command, const char *spec_json,
                     char **out_json)
{
    if (out_json)
        *out_json = NULL;
    if (!ctx || !out_json)
        return ctx ? fail(ctx, SP_ERR_INPUT, command, "no place for the result") : SP_ERR_INPUT;
    ctx->error[0] = '\0';
    const cmd_command_t *c = cmd_command_find(command);
    if (!c)
        return fail(ctx, SP_ERR_INPUT, command, "no such command");
    words_t w = {0};
    char why[ERR_MSG_MAX] = "";
    int rc = spec_words(command, spec_json, &w, why, sizeof why);
    if (rc) {
        words_free(&w);
        return fail(ctx, rc, command, why);
    }
    err_t err;
    err_clear(&err);
    rc = cmd_command_run(c, w.n, w.w, ctx->catalog, out_json, &err);
    words_free(&w);
    if (rc)
        return fail(ctx, rc == ERR_INPUT ? SP_ERR_INPUT : SP_ERR_RUNTIME, command,
                    err.msg[0] ? err.msg : "failed");
    if (!*out_json)
        return fail(ctx, SP_ERR_RUNTIME, command, "the command wrote no document");
    return SP_OK;
}

SP_EXPORT int sp_step_time(sp_context_t *ctx, const char *spec_json, double *step_s)
{
    if (!ctx || !step_s)
        return ctx ? fail(ctx, SP_ERR_INPUT, "sim", "no place for the result") : SP_ERR_INPUT;
    *step_s = 0.0;
    ctx->error[0] = '\0';
    words_t w = {0};
    char why[ERR_MSG_MAX] = "";
    int rc = spec_words("sim", spec_json, &w, why, sizeof why);
    if (rc) {
        words_free(&w);
        return fail(ctx, rc, "sim", why);
    }
    err_t err;
    err_clear(&err);
    rc = cmd_sim_step_time(w.n, w.w, ctx->catalog, step_s, &err);
    words_free(&w);
    if (rc)
        return fail(ctx, rc == ERR_INPUT ? SP_ERR_INPUT : SP_ERR_RUNTIME, "sim",
                    err.msg[0] ? err.msg : "failed");
    return SP_OK;
}

SP_EXPORT int sp_command(sp_context_t *ctx, int argc, char **argv)
{
    if (!ctx || argc < 1 || !argv || !argv[0])
        return ctx ? fail(ctx, SP_ERR_INPUT, "", "no command") : SP_ERR_INPUT;
    ctx->error[0] = '\0';
    const cmd_command_t *c = cmd_command_find(argv[0]);
    if (!c)
        return fail(ctx, SP_ERR_INPUT, argv[0], "no such command");
    err_t err;
    err_clear(&err);
    int rc = cmd_command_run(c, argc, argv, ctx->catalog, NULL, &err);
    if (rc)
        return fail(ctx, rc == ERR_INPUT ? SP_ERR_INPUT : SP_ERR_RUNTIME, c->name,
                    err.msg[0] ? err.msg : "failed");
    return SP_OK;
}

SP_EXPORT int sp_command_count(void)
{
    return cmd_command_count();
}

SP_EXPORT const char *sp_command_name(int i)
{
    const cmd_command_t *c = cmd_command_at(i);
    return c ? c->name : NULL;
}

SP_EXPORT const char *sp_command_summary(int i)
{
    const cmd_command_t *c = cmd_command_at(i);
    return c ? c->summary : NULL;
}

/* One command's option rows appended to *text (see sp_options_table);
 * -1 when memory runs out. */
static int options_of(char **text, const cmd_command_t *c)
{
    static const char *kinds[] = {"text",  "int",       "int-span", "real",     "count",
                                  "count-span", "bytes", "bandwidth", "duration", "days",
                                  "price", "money"};
    for (int g = 0; g < c->n_groups; g++)
        for (int k = 0; k < c->groups[g]->n; k++) {
            const cmd_opt_t *o = &c->groups[g]->opts[k];
            if (str_appendf(text, "%s\t%s\t%s\t%s\t%s\n", c->name, o->name,
                            o->alias ? o->alias : "-", o->metavar ? o->metavar : "-",
                            (size_t)o->kind < sizeof kinds / sizeof kinds[0] ? kinds[o->kind]
                                                                             : "?"))
                return -1;
        }
    return 0;
}

SP_EXPORT char *sp_options_table(void)
{
    char *text = NULL;
    if (str_appendf(&text, "%s", ""))
        return NULL;
    for (int i = 0; i < cmd_command_count(); i++)
        if (options_of(&text, cmd_command_at(i))) {
            free(text);
            return NULL;
        }
    return text;
}

SP_EXPORT const char *sp_build_features(void)
{
    return SCALEPLAN_BUILD_FEATURES;
}
