/* model_load: a model by catalog name (normalised, aliases, "did you mean"
 * on a miss) or from a Hugging Face config.json file or checkout folder
 * (models/model.h). Apart from models/model.c because it reads the files
 * through models/hfconfig.h, which builds on models/model.h: model.c
 * includes no reader, and no include circle is left between them
 * (tools/check-circles.sh). */
#include "models/model.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "common/catalog.h"
#include "common/json.h"
#include "common/names.h"
#include "common/strfmt.h"
#include "models/hfconfig.h"

#define CATALOG_DIR "models/catalog"

/* The model name for a config file: its stem, or for ".../NAME/config.json"
 * the directory name, which is how Hugging Face checkouts are laid out.
 * ERR_INPUT when it does not fit out (cap bytes): a name identifies the
 * model (checkpoints compare it), so it is never cut. */
static int name_from_path(const char *path, char *out, size_t cap, err_t *err)
{
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    const char *start = base;
    size_t n = strlen(base);
    if (strcmp(base, "config.json") == 0 && base > path + 1) {
        const char *end = base - 1; /* the '/' before config.json */
        start = end;
        while (start > path && start[-1] != '/')
            start--;
        n = (size_t)(end - start);
    } else if (n > 5 && strcmp(base + n - 5, ".json") == 0) {
        n -= 5;
    }
    if (n >= cap)
        return err_setf(err, ERR_INPUT, path, NULL,
                        "the model's name '%.*s' (from the file name) is longer than %zu "
                        "characters; rename the file or its folder",
                        (int)n, start, cap - 1);
    memcpy(out, start, n);
    out[n] = '\0';
    return ERR_OK;
}

/* The catalog file of model `name` (heap; NULL on OOM). */
static char *catalog_rel(const char *name) { return str_printf(CATALOG_DIR "/%s.json", name); }

static int load_file(const char *path, const model_load_opts_t *opts, model_t *m, notes_t *notes,
                     err_t *err)
{
    cJSON *root = NULL;
    int rc = json_parse_file(path, &root, err);
    if (rc)
        return rc;
    char name[MODEL_NAME_MAX];
    if (!(rc = name_from_path(path, name, sizeof name, err)))
        rc = model_from_config_ex(root, path, name, opts, m, notes, err);
    cJSON_Delete(root);
    return rc;
}

static int load_catalog_entry(const char *name, const model_load_opts_t *opts, model_t *m,
                              notes_t *notes, err_t *err)
{
    char origin[CATALOG_ORIGIN_MAX];
    char *rel = catalog_rel(name);
    char *text = NULL;
    size_t len = 0;
    int rc = rel ? catalog_read(rel, &text, &len, origin, sizeof origin, err)
                 : err_set(err, ERR_RUNTIME, "out of memory");
    free(rel);
    if (rc)
        return rc;
    cJSON *root = NULL;
    rc = json_parse_text(text, len, origin, &root, err);
    free(text);
    if (rc)
        return rc;
    model_load_opts_t own = opts ? *opts : (model_load_opts_t){0};
    own.catalog_entry = true;
    rc = model_from_config_ex(root, origin, name, &own, m, notes, err);
    cJSON_Delete(root);
    return rc;
}

/* Whether a catalog file lists alias among its "aliases". */
static bool catalog_has_alias(const char *name, const char *alias)
{
    char *rel = catalog_rel(name);
    char *text = NULL;
    size_t len = 0;
    err_t ignored;
    int rc = rel ? catalog_read(rel, &text, &len, NULL, 0, &ignored) : ERR_RUNTIME;
    free(rel);
    if (rc)
        return false;
    cJSON *root = cJSON_ParseWithLength(text, len);
    free(text);
    bool found = false;
    const cJSON *aliases = root ? cJSON_GetObjectItemCaseSensitive(root, "aliases")
                                : NULL;
    const cJSON *a;
    cJSON_ArrayForEach(a, aliases)
    {
        if (cJSON_IsString(a)) {
            char norm[MODEL_NAME_MAX];
            names_normalize(a->valuestring, norm, sizeof norm);
            if (strcmp(norm, alias) == 0)
                found = true;
        }
    }
    cJSON_Delete(root);
    return found;
}

int model_catalog_names(char ***names, size_t *count, err_t *err)
{
    return catalog_list(CATALOG_DIR, names, count, err);
}

static int load_by_name(const char *query, const model_load_opts_t *opts, model_t *m,
                        notes_t *notes, err_t *err)
{
    /* "meta-llama/Meta-Llama-3-70B" -> "meta-llama-3-70b" */
    const char *slash = strrchr(query, '/');
    const char *tail = slash ? slash + 1 : query;
    char norm[MODEL_NAME_MAX];
    names_normalize(tail, norm, sizeof norm);
    /* a name too long for the buffer is no catalog name: not looked up cut */
    bool fits = strlen(tail) < sizeof norm;
    char *rel = catalog_rel(norm);
    if (!rel)
        return err_set(err, ERR_RUNTIME, "out of memory");
    bool exists = fits && catalog_exists(rel);
    free(rel);
    if (exists)
        return load_catalog_entry(norm, opts, m, notes, err);
    char **names = NULL;
    size_t n = 0;
    int rc = model_catalog_names(&names, &n, err);
    if (rc)
        return rc;
    for (size_t i = 0; fits && i < n; i++) {
        if (catalog_has_alias(names[i], norm)) {
            rc = load_catalog_entry(names[i], opts, m, notes, err);
            catalog_free_names(names, n);
            return rc;
        }
    }
    catalog_free_names(names, n);
    return catalog_unknown_name(CATALOG_DIR, query, "--model", "model",
                                "scaleplan catalog models",
                                "; a path to a config.json works too", err);
}

int model_load_ex(const char *name_or_path, const model_load_opts_t *opts, model_t *m,
                  notes_t *notes, err_t *err)
{
    if (!name_or_path || !*name_or_path)
        return err_setf(err, ERR_INPUT, NULL, "--model",
                        "needs a catalog name or a config.json path");
    struct stat st;
    size_t n = strlen(name_or_path);
    bool looks_like_file = (n > 5 && strcasecmp(name_or_path + n - 5, ".json") == 0);
    if (stat(name_or_path, &st) == 0 && S_ISREG(st.st_mode))
        return load_file(name_or_path, opts, m, notes, err);
    if (looks_like_file)
        return err_setf(err, ERR_INPUT, name_or_path, NULL,
                        "no such file");
    if (stat(name_or_path, &st) == 0 && S_ISDIR(st.st_mode)) {
        /* A Hugging Face checkout directory: use its config.json. */
        char *path = str_printf("%s/config.json", name_or_path);
        int rc = path ? load_file(path, opts, m, notes, err)
                      : err_set(err, ERR_RUNTIME, "out of memory");
        free(path);
        return rc;
    }
    return load_by_name(name_or_path, opts, m, notes, err);
}

int model_load(const char *name_or_path, model_t *m, err_t *err)
{
    return model_load_ex(name_or_path, NULL, m, NULL, err);
}
