#include "topologies/failure.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common/catalog.h"

#define FAILURE_FILE "topologies/catalog/failures.json"

static const char *component_names[FAIL_COMPONENT_COUNT] = {"gpu", "node",
                                                            "nic", "job"};

static const char *kind_names[FAIL_KIND_COUNT] = {"hardware",  "software",   "network",
                                                  "storage",   "planned",    "stability",
                                                  "preemption", "unknown"};

static const char *level_names[FAIL_LEVEL_COUNT] = {"gpu", "hardware", "unexpected", "all"};

const char *failure_level_name(failure_level_t l)
{
    return l < FAIL_LEVEL_COUNT ? level_names[l] : "?";
}

const char *failure_component_name(failure_component_t c)
{
    return c < FAIL_COMPONENT_COUNT ? component_names[c] : "?";
}

const char *failure_kind_name(failure_kind_t k)
{
    return k < FAIL_KIND_COUNT ? kind_names[k] : "?";
}

/* A JSON array of strings into "a,b,c" (cap bytes). */
static int join_strings(const cJSON *obj, const char *key, const json_ctx_t *ctx, char *out,
                        size_t cap, err_t *err)
{
    out[0] = '\0';
    const cJSON *arr;
    int rc = json_get_array(obj, key, ctx, JSON_OPTIONAL, &arr, err);
    if (rc || !arr)
        return rc;
    json_ctx_t actx = json_ctx_member(ctx, key);
    int i = 0;
    const cJSON *e;
    cJSON_ArrayForEach(e, arr)
    {
        json_ctx_t ectx = json_ctx_index(&actx, i++);
        if (!cJSON_IsString(e))
            return err_setf(err, ERR_INPUT, ectx.file, ectx.path, "must be a string");
        size_t used = strlen(out);
        if (used + strlen(e->valuestring) + 2 > cap)
            return err_setf(err, ERR_INPUT, ectx.file, ectx.path, "list too long");
        snprintf(out + used, cap - used, "%s%s", used ? "," : "", e->valuestring);
    }
    return ERR_OK;
}

/* Whether the comma-separated list holds word. */
static bool list_has(const char *list, const char *word)
{
    size_t n = strlen(word);
    for (const char *p = list; *p;) {
        const char *end = strchr(p, ',');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        if (len == n && strncmp(p, word, n) == 0)
            return true;
        if (!end)
            break;
        p = end + 1;
    }
    return false;
}

/* Case-insensitive substring test. */
static bool contains_ci(const char *hay, const char *needle);

bool failure_set_from(const failure_set_t *s, const char *title)
{
    char keys[sizeof s->source_key];
    snprintf(keys, sizeof keys, "%s", s->source_key);
    for (char *save = NULL, *k = strtok_r(keys, "|", &save); k; k = strtok_r(NULL, "|", &save))
        if (*k && contains_ci(title, k))
            return true;
    return false;
}

bool failure_set_covers(const failure_set_t *s, const char *arch)
{
    return list_has(s->architectures, arch);
}

static int class_from_json(const cJSON *obj, const json_ctx_t *ctx,
                           failure_class_t *f, err_t *err)
{
    memset(f, 0, sizeof *f);
    char comp[16] = "", dist[16] = "exponential", repair[24] = "replace_node", kind[16] = "";
    int rc;
    f->weibull_shape = 1.0;
    f->unexpected = true;
    if ((rc = json_expect_object(obj, ctx, err)) ||
        (rc = json_get_string(obj, "name", ctx, JSON_REQUIRED, f->name,
                              sizeof f->name, err)) ||
        (rc = json_get_string(obj, "description", ctx, JSON_OPTIONAL,
                              f->description, sizeof f->description, err)) ||
        (rc = json_get_string(obj, "component", ctx, JSON_REQUIRED, comp,
                              sizeof comp, err)) ||
        (rc = json_get_double(obj, "rate_per_component_hour", ctx,
                              JSON_REQUIRED, 0, 1.0,
                              &f->rate_per_component_hour, err)) ||
        (rc = json_get_string(obj, "distribution", ctx, JSON_OPTIONAL, dist,
                              sizeof dist, err)) ||
        (rc = json_get_double(obj, "weibull_shape", ctx, JSON_OPTIONAL, 0.05,
                              20, &f->weibull_shape, err)) ||
        (rc = json_get_bool(obj, "unexpected", ctx, JSON_OPTIONAL,
                            &f->unexpected, err)) ||
        (rc = json_get_double(obj, "detect_s", ctx, JSON_OPTIONAL, 0, 1e6,
                              &f->detect_s, err)) ||
        (rc = json_get_string(obj, "repair", ctx, JSON_OPTIONAL, repair,
                              sizeof repair, err)) ||
        (rc = json_get_string(obj, "kind", ctx, JSON_REQUIRED, kind, sizeof kind, err)) ||
        (rc = json_get_string(obj, "category", ctx, JSON_OPTIONAL, f->category,
                              sizeof f->category, err)) ||
        (rc = join_strings(obj, "evidence", ctx, f->evidence, sizeof f->evidence, err)) ||
        (rc = json_get_string(obj, "copied_from", ctx, JSON_OPTIONAL, f->copied_from,
                              sizeof f->copied_from, err)) ||
        (rc = json_get_double(obj, "count", ctx, JSON_OPTIONAL, 0, 1e9, &f->count, err)) ||
        (rc = json_get_bool(obj, "hang", ctx, JSON_OPTIONAL, &f->hang, err)) ||
        (rc = json_get_string(obj, "source", ctx, JSON_REQUIRED, f->source,
                              sizeof f->source, err)))
        return rc;
    int kk = -1;
    for (int i = 0; i < FAIL_KIND_COUNT; i++)
        if (strcmp(kind, kind_names[i]) == 0)
            kk = i;
    if (kk < 0)
        return err_setf(err, ERR_INPUT, ctx->file, ctx->path,
                        "kind: unknown '%s' (hardware, software, network, storage, planned, "
                        "stability, preemption or unknown)",
                        kind);
    f->kind = (failure_kind_t)kk;
    f->unexpected = f->kind != FAIL_KIND_PLANNED;
    int k = -1;
    for (int i = 0; i < FAIL_COMPONENT_COUNT; i++)
        if (strcmp(comp, component_names[i]) == 0)
            k = i;
    if (k < 0)
        return err_setf(err, ERR_INPUT, ctx->file, ctx->path,
                        "component: unknown '%s' (gpu, node, nic or job)", comp);
    f->component = (failure_component_t)k;
    if (strcmp(dist, "weibull") == 0)
        f->weibull = true;
    else if (strcmp(dist, "exponential") != 0)
        return err_setf(err, ERR_INPUT, ctx->file, ctx->path,
                        "distribution: unknown '%s' (exponential or weibull)", dist);
    if (strcmp(repair, "reschedule") == 0)
        f->repair = REPAIR_RESCHEDULE;
    else if (strcmp(repair, "replace_node") == 0)
        f->repair = REPAIR_REPLACE_NODE;
    else
        return err_setf(err, ERR_INPUT, ctx->file, ctx->path,
                        "repair: unknown '%s' (replace_node or reschedule)", repair);
    return ERR_OK;
}

static int set_from_json(const cJSON *obj, const json_ctx_t *ctx, void *out,
                         err_t *err)
{
    failure_set_t *s = out;
    memset(s, 0, sizeof *s);
    int rc;
    const cJSON *classes;
    char scope[16] = "job", covers[16] = "all";
    s->evidence = true;
    if ((rc = json_expect_object(obj, ctx, err)) ||
        (rc = json_get_string(obj, "name", ctx, JSON_REQUIRED, s->name,
                              sizeof s->name, err)) ||
        (rc = json_get_string(obj, "description", ctx, JSON_OPTIONAL,
                              s->description, sizeof s->description, err)) ||
        (rc = json_get_string(obj, "environment", ctx, JSON_REQUIRED, s->environment,
                              sizeof s->environment, err)) ||
        (rc = join_strings(obj, "architectures", ctx, s->architectures, sizeof s->architectures,
                           err)) ||
        (rc = json_get_string(obj, "scope", ctx, JSON_OPTIONAL, scope, sizeof scope, err)) ||
        (rc = json_get_string(obj, "counts", ctx, JSON_REQUIRED, s->counts, sizeof s->counts,
                              err)) ||
        (rc = json_get_string(obj, "covers", ctx, JSON_OPTIONAL, covers, sizeof covers, err)) ||
        (rc = json_get_int(obj, "year", ctx, JSON_OPTIONAL, 0, 2100, &s->year, err)) ||
        (rc = json_get_bool(obj, "evidence", ctx, JSON_OPTIONAL, &s->evidence, err)) ||
        (rc = json_get_string(obj, "source_key", ctx, JSON_REQUIRED, s->source_key,
                              sizeof s->source_key, err)) ||
        (rc = json_get_string(obj, "source", ctx, JSON_REQUIRED, s->source, sizeof s->source,
                              err)) ||
        (rc = json_get_array(obj, "classes", ctx, JSON_REQUIRED, &classes, err)))
        return rc;
    if (strcmp(scope, "job") == 0)
        s->scope = FAIL_SCOPE_JOB;
    else if (strcmp(scope, "cluster") == 0)
        s->scope = FAIL_SCOPE_CLUSTER;
    else
        return err_setf(err, ERR_INPUT, ctx->file, ctx->path,
                        "scope: unknown '%s' (job or cluster)", scope);
    int lv = -1;
    for (int i = 0; i < FAIL_LEVEL_COUNT; i++)
        if (strcmp(covers, level_names[i]) == 0)
            lv = i;
    if (lv < 0)
        return err_setf(err, ERR_INPUT, ctx->file, ctx->path,
                        "covers: unknown '%s' (gpu, hardware, unexpected or all)", covers);
    s->covers = (failure_level_t)lv;
    json_ctx_t arr = json_ctx_member(ctx, "classes");
    int n = cJSON_GetArraySize(classes);
    if (n < 1 || n > FAILURE_MAX_CLASSES)
        return err_setf(err, ERR_INPUT, ctx->file, arr.path,
                        "must hold 1 to %d classes (got %d)",
                        FAILURE_MAX_CLASSES, n);
    for (int i = 0; i < n; i++) {
        json_ctx_t c = json_ctx_index(&arr, i);
        if ((rc = class_from_json(cJSON_GetArrayItem(classes, i), &c,
                                  &s->classes[i], err)))
            return rc;
    }
    s->n_classes = n;
    return ERR_OK;
}

int failure_load_set(const char *name, failure_set_t *out, err_t *err)
{
    failure_choice_t ch;
    if (!name || !*name) {
        int rc = failure_choose(NULL, "hopper", &ch, err);
        if (rc)
            return rc;
        name = ch.set;
    }
    return catalog_load_named(FAILURE_FILE, "rate_sets", name, "--failure-rates",
                              "scaleplan catalog failures", set_from_json, out,
                              err);
}

int failure_load_all(failure_set_t **sets, size_t *count, err_t *err)
{
    return catalog_load_table(FAILURE_FILE, "rate_sets", sizeof(**sets), set_from_json,
                              (void **)sets, count, err);
}

double failure_components(const cluster_t *c, failure_component_t comp)
{
    switch (comp) {
    case FAIL_PER_GPU:
        return c->n_gpus;
    case FAIL_PER_NODE:
        return cluster_hosts(c); /* physical servers, not NVLink domains */
    case FAIL_PER_NIC:
        /* A partly used node still brings all its rails into the job only
         * in proportion to the GPUs that use them. */
        return (double)c->n_gpus * c->nics_per_node / c->gpus_per_node;
    default:
        return 1;
    }
}

double failure_job_rate_per_hour(const failure_class_t *f, const cluster_t *c)
{
    return f->rate_per_component_hour * failure_components(c, f->component);
}

int failure_load_guides(failure_guides_t *out, err_t *err)
{
    memset(out, 0, sizeof *out);
    cJSON *root = NULL;
    char origin[CATALOG_ORIGIN_MAX];
    int rc = catalog_parse(FAILURE_FILE, &root, origin, sizeof origin, err);
    if (rc)
        return rc;
    json_ctx_t ctx = json_ctx_root(origin);
    const cJSON *g = NULL, *rows = NULL;
    if ((rc = json_get_object(root, "planning_guides", &ctx, JSON_REQUIRED, &g, err)))
        goto out;
    json_ctx_t gctx = json_ctx_member(&ctx, "planning_guides");
    if ((rc = json_get_string(g, "source", &gctx, JSON_REQUIRED, out->source, sizeof out->source,
                              err)) ||
        (rc = json_get_array(g, "per_week", &gctx, JSON_REQUIRED, &rows, err)))
        goto out;
    json_ctx_t actx = json_ctx_member(&gctx, "per_week");
    int n = cJSON_GetArraySize(rows);
    if (n < 1 || n > FAILURE_MAX_GUIDES) {
        rc = err_setf(err, ERR_INPUT, origin, actx.path, "must hold 1 to %d rows (got %d)",
                      FAILURE_MAX_GUIDES, n);
        goto out;
    }
    for (int i = 0; i < n; i++) {
        json_ctx_t e = json_ctx_index(&actx, i);
        const cJSON *o = cJSON_GetArrayItem(rows, i);
        failure_guide_t *r = &out->rows[i];
        if ((rc = json_expect_object(o, &e, err)) ||
            (rc = json_get_int(o, "gpus", &e, JSON_REQUIRED, 1, 1 << 24, &r->gpus, err)) ||
            (rc = json_get_string(o, "interruptions", &e, JSON_REQUIRED, r->per_week,
                                  sizeof r->per_week, err)))
            goto out;
    }
    out->n = n;
out:
    cJSON_Delete(root);
    return rc;
}

/* Read the environments and defaults tables. */
static int env_list(const cJSON *root, const json_ctx_t *ctx, char *buf, size_t cap, err_t *err)
{
    const cJSON *envs;
    int rc = json_get_array(root, "environments", ctx, JSON_REQUIRED, &envs, err);
    if (rc)
        return rc;
    buf[0] = '\0';
    json_ctx_t actx = json_ctx_member(ctx, "environments");
    int i = 0;
    const cJSON *e;
    cJSON_ArrayForEach(e, envs)
    {
        json_ctx_t ectx = json_ctx_index(&actx, i++);
        char name[24];
        if ((rc = json_get_string(e, "name", &ectx, JSON_REQUIRED, name, sizeof name, err)))
            return rc;
        size_t used = strlen(buf);
        snprintf(buf + used, cap - used, "%s%s", used ? ", " : "", name);
    }
    return ERR_OK;
}

int failure_environments(char *buf, size_t cap, err_t *err)
{
    cJSON *root = NULL;
    char origin[CATALOG_ORIGIN_MAX];
    int rc = catalog_parse(FAILURE_FILE, &root, origin, sizeof origin, err);
    if (rc)
        return rc;
    json_ctx_t ctx = json_ctx_root(origin);
    rc = env_list(root, &ctx, buf, cap, err);
    cJSON_Delete(root);
    return rc;
}

int failure_choose(const char *environment, const char *arch, failure_choice_t *out, err_t *err)
{
    memset(out, 0, sizeof *out);
    cJSON *root = NULL;
    char origin[CATALOG_ORIGIN_MAX];
    int rc = catalog_parse(FAILURE_FILE, &root, origin, sizeof origin, err);
    if (rc)
        return rc;
    json_ctx_t ctx = json_ctx_root(origin);
    char envs[200];
    const cJSON *defaults;
    if ((rc = env_list(root, &ctx, envs, sizeof envs, err)) ||
        (rc = json_get_array(root, "defaults", &ctx, JSON_REQUIRED, &defaults, err)))
        goto out;
    if (!environment || !*environment) {
        out->environment_default = true;
        if ((rc = json_get_string(root, "default_environment", &ctx, JSON_REQUIRED,
                                  out->environment, sizeof out->environment, err)))
            goto out;
    } else {
        snprintf(out->environment, sizeof out->environment, "%s", environment);
    }
    char probe[40];
    snprintf(probe, sizeof probe, "%s", out->environment);
    {
        /* the environment must be one of the list */
        char list[210];
        snprintf(list, sizeof list, "%s", envs);
        bool known = false;
        for (char *save = NULL, *w = strtok_r(list, ", ", &save); w; w = strtok_r(NULL, ", ", &save))
            known = known || strcmp(w, probe) == 0;
        if (!known) {
            rc = err_setf(err, ERR_INPUT, NULL, "--environment", "unknown '%s' (use %s)",
                          out->environment, envs);
            goto out;
        }
    }
    json_ctx_t dctx = json_ctx_member(&ctx, "defaults");
    const cJSON *hit = NULL;
    bool exact = false;
    int i = 0;
    const cJSON *e;
    cJSON_ArrayForEach(e, defaults)
    {
        json_ctx_t ectx = json_ctx_index(&dctx, i++);
        char env[24], archs[64];
        if ((rc = json_get_string(e, "environment", &ectx, JSON_REQUIRED, env, sizeof env, err)) ||
            (rc = join_strings(e, "architectures", &ectx, archs, sizeof archs, err)))
            goto out;
        if (strcmp(env, out->environment) != 0)
            continue;
        if (arch && list_has(archs, arch)) {
            hit = e;
            exact = true;
            break;
        }
        if (!hit && list_has(archs, "*"))
            hit = e;
    }
    if (!hit) {
        rc = err_setf(err, ERR_INPUT, origin, "defaults", "no default rate set for environment '%s'",
                      out->environment);
        goto out;
    }
    json_ctx_t hctx = json_ctx_member(&dctx, "?");
    char chain[FAILURE_MAX_CHAIN * 33];
    if ((rc = join_strings(hit, "sets", &hctx, chain, sizeof chain, err)))
        goto out;
    for (char *save = NULL, *w = strtok_r(chain, ",", &save); w && out->n_chain < FAILURE_MAX_CHAIN;
         w = strtok_r(NULL, ",", &save))
        snprintf(out->chain[out->n_chain++], sizeof out->chain[0], "%s", w);
    if (out->n_chain == 0) {
        rc = err_setf(err, ERR_INPUT, origin, "defaults", "an entry lists no sets");
        goto out;
    }
    snprintf(out->set, sizeof out->set, "%s", out->chain[0]);
    /* an assumption unless the set's own evidence matches the job */
    failure_set_t fs;
    if ((rc = catalog_load_named(FAILURE_FILE, "rate_sets", out->set, "--failure-rates",
                                 "scaleplan catalog failures", set_from_json, &fs, err)))
        goto out;
    out->assumed = !exact || !arch || !failure_set_covers(&fs, arch) ||
                   (strcmp(fs.environment, out->environment) != 0 &&
                    strcmp(fs.environment, "any") != 0);
    snprintf(out->why, sizeof out->why, "the default for %s GPUs on a%s %s cluster%s%s",
             arch ? arch : "these", strchr("aeiou", out->environment[0]) ? "n" : "",
             out->environment, out->environment_default ? " (the default environment)" : "",
             out->assumed ? "; ASSUMED: its evidence is from another GPU generation or setting"
                          : "");
out:
    cJSON_Delete(root);
    return rc;
}

/* Case-insensitive substring test. */
static bool contains_ci(const char *hay, const char *needle)
{
    size_t n = strlen(needle);
    for (; *hay; hay++)
        if (strncasecmp(hay, needle, n) == 0)
            return true;
    return n == 0;
}

int failure_environment_of(const char *text, char *env, size_t cap, err_t *err)
{
    env[0] = '\0';
    cJSON *root = NULL;
    char origin[CATALOG_ORIGIN_MAX];
    int rc = catalog_parse(FAILURE_FILE, &root, origin, sizeof origin, err);
    if (rc)
        return rc;
    json_ctx_t ctx = json_ctx_root(origin);
    const cJSON *kw, *rules;
    if (!(rc = json_get_object(root, "environment_keywords", &ctx, JSON_REQUIRED, &kw, err))) {
        json_ctx_t kctx = json_ctx_member(&ctx, "environment_keywords");
        if (!(rc = json_get_array(kw, "rules", &kctx, JSON_REQUIRED, &rules, err))) {
            json_ctx_t rctx = json_ctx_member(&kctx, "rules");
            int i = 0;
            const cJSON *e;
            cJSON_ArrayForEach(e, rules)
            {
                json_ctx_t ectx = json_ctx_index(&rctx, i++);
                char match[64], name[24];
                if ((rc = json_get_string(e, "match", &ectx, JSON_REQUIRED, match, sizeof match,
                                          err)) ||
                    (rc = json_get_string(e, "environment", &ectx, JSON_REQUIRED, name,
                                          sizeof name, err)))
                    break;
                if (contains_ci(text, match)) {
                    snprintf(env, cap, "%s", name);
                    break;
                }
            }
        }
    }
    cJSON_Delete(root);
    return rc;
}

static int window_days(const cJSON *ev, const char *key, const json_ctx_t *ctx, double *from_s,
                       double *to_s, err_t *err)
{
    const cJSON *w = NULL;
    int rc = json_get_array(ev, key, ctx, JSON_REQUIRED, &w, err);
    if (rc)
        return rc;
    json_ctx_t wctx = json_ctx_member(ctx, key);
    const cJSON *a = cJSON_GetArrayItem(w, 0), *b = cJSON_GetArrayItem(w, 1);
    if (cJSON_GetArraySize(w) != 2 || !cJSON_IsNumber(a) || !cJSON_IsNumber(b) ||
        !(a->valuedouble >= 0) || !(b->valuedouble > a->valuedouble))
        return err_setf(err, ERR_INPUT, ctx->file, wctx.path,
                        "must be [from, to] in days with 0 <= from < to");
    *from_s = a->valuedouble * 86400;
    *to_s = b->valuedouble * 86400;
    return ERR_OK;
}

int failure_load_burnin(failure_burnin_t *out, err_t *err)
{
    memset(out, 0, sizeof *out);
    cJSON *root = NULL;
    char origin[CATALOG_ORIGIN_MAX];
    int rc = catalog_parse(FAILURE_FILE, &root, origin, sizeof origin, err);
    if (rc)
        return rc;
    json_ctx_t ctx = json_ctx_root(origin);
    const cJSON *b = NULL, *ev = NULL;
    double tau_days = 0;
    if ((rc = json_get_object(root, "burn_in", &ctx, JSON_REQUIRED, &b, err)))
        goto out;
    json_ctx_t bctx = json_ctx_member(&ctx, "burn_in");
    json_ctx_t ectx = json_ctx_member(&bctx, "evidence");
    if ((rc = json_get_double(b, "initial_multiple", &bctx, JSON_REQUIRED, 1, 1000,
                              &out->initial_multiple, err)) ||
        (rc = json_get_double(b, "time_constant_days", &bctx, JSON_REQUIRED, 1e-3, 3650,
                              &tau_days, err)) ||
        (rc = json_get_string(b, "source", &bctx, JSON_REQUIRED, out->source, sizeof out->source,
                              err)) ||
        (rc = json_get_object(b, "evidence", &bctx, JSON_REQUIRED, &ev, err)) ||
        (rc = window_days(ev, "early_window_days", &ectx, &out->early_from_s, &out->early_to_s,
                          err)) ||
        (rc = window_days(ev, "late_window_days", &ectx, &out->late_from_s, &out->late_to_s,
                          err)) ||
        (rc = json_get_double(ev, "published_ratio", &ectx, JSON_REQUIRED, 1e-3, 1e3,
                              &out->published_ratio, err)))
        goto out;
    out->time_constant_s = tau_days * 86400;
out:
    cJSON_Delete(root);
    return rc;
}

double failure_burnin_multiple(const failure_burnin_t *b, double age_s)
{
    return 1 + (b->initial_multiple - 1) * exp(-age_s / b->time_constant_s);
}

double failure_burnin_extra_s(const failure_burnin_t *b, double age_s, double t_s)
{
    double tau = b->time_constant_s;
    /* -expm1 keeps the small-t difference exact */
    return (b->initial_multiple - 1) * tau * exp(-age_s / tau) * -expm1(-t_s / tau);
}

double failure_burnin_mean(const failure_burnin_t *b, double from_s, double to_s)
{
    return 1 + failure_burnin_extra_s(b, from_s, to_s - from_s) / (to_s - from_s);
}
