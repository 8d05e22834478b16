#include "common/catalog.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "common/fileio.h"
#include "common/json.h"
#include "common/names.h"
#include "common/strfmt.h"

/* The override directory, or NULL. Read on each call: tests set it. */
static const char *override_dir(void)
{
    const char *d = getenv("SCALEPLAN_CATALOG");
    return (d && *d) ? d : NULL;
}

static const catalog_entry_t *find_embedded(const char *relpath)
{
    for (size_t i = 0; i < catalog_embedded_count; i++)
        if (strcmp(catalog_embedded[i].path, relpath) == 0)
            return &catalog_embedded[i];
    return NULL;
}

/* The override file for relpath (heap) in *out when $SCALEPLAN_CATALOG
 * holds one, else NULL. ERR_RUNTIME on OOM (no silent fall back to the
 * built-in file). */
static int override_path(const char *relpath, char **out, err_t *err)
{
    *out = NULL;
    const char *dir = override_dir();
    if (!dir)
        return ERR_OK;
    char *path = str_printf("%s/%s", dir, relpath);
    if (!path)
        return err_set(err, ERR_RUNTIME, "out of memory");
    struct stat st;
    if (stat(path, &st) == 0 && S_ISREG(st.st_mode))
        *out = path;
    else
        free(path);
    return ERR_OK;
}

/* Copy name into origin (cap bytes, may be NULL): ERR_INPUT naming
 * $SCALEPLAN_CATALOG when it does not fit, never a cut name. Callers'
 * buffers hold CATALOG_ORIGIN_MAX bytes: every path the system opens. */
static int set_origin(char *origin, size_t cap, const char *name, err_t *err)
{
    if (!origin)
        return ERR_OK;
    size_t n = strlen(name);
    if (n >= cap)
        return err_setf(err, ERR_INPUT, NULL, "SCALEPLAN_CATALOG",
                        "a catalog file's path of %zu bytes is longer than the %zu kept for it; "
                        "use a shorter folder (%s)",
                        n, cap - 1, name);
    memcpy(origin, name, n + 1);
    return ERR_OK;
}

int catalog_exists(const char *relpath)
{
    char *path = NULL;
    err_t ignored;
    int rc = override_path(relpath, &path, &ignored);
    int found = (!rc && path) || find_embedded(relpath);
    free(path);
    return found;
}

int catalog_read(const char *relpath, char **text, size_t *len, char *origin,
                 size_t origin_cap, err_t *err)
{
    *text = NULL;
    char *path = NULL;
    int rc = override_path(relpath, &path, err);
    if (rc)
        return rc;
    if (path) {
        rc = set_origin(origin, origin_cap, path, err);
        if (!rc)
            rc = fileio_read_all(path, text, len, err);
        free(path);
        return rc;
    }
    const catalog_entry_t *e = find_embedded(relpath);
    if (!e)
        return err_setf(err, ERR_INPUT, relpath, NULL,
                        "not in the built-in catalog%s",
                        override_dir() ? " nor in $SCALEPLAN_CATALOG" : "");
    char *copy = malloc(e->len + 1);
    if (!copy)
        return err_setf(err, ERR_RUNTIME, relpath, NULL, "out of memory");
    if ((rc = set_origin(origin, origin_cap, relpath, err))) {
        free(copy);
        return rc;
    }
    memcpy(copy, e->text, e->len + 1);
    *text = copy;
    if (len)
        *len = e->len;
    return ERR_OK;
}

/* A growable list of unique names. */
typedef struct {
    char **v;
    size_t n, cap;
} name_list_t;

static int list_add(name_list_t *l, const char *name, size_t len)
{
    for (size_t i = 0; i < l->n; i++)
        if (strlen(l->v[i]) == len && strncmp(l->v[i], name, len) == 0)
            return 0;
    if (l->n == l->cap) {
        size_t cap = l->cap ? 2 * l->cap : 32;
        char **v = realloc(l->v, cap * sizeof *v);
        if (!v)
            return -1;
        l->v = v;
        l->cap = cap;
    }
    char *s = malloc(len + 1);
    if (!s)
        return -1;
    memcpy(s, name, len);
    s[len] = '\0';
    l->v[l->n++] = s;
    return 0;
}

/* If path is "<dir>/<stem>.json" with no further '/', the stem's length. */
static size_t json_stem_in(const char *path, const char *dir, const char **stem)
{
    size_t dl = strlen(dir);
    if (strncmp(path, dir, dl) != 0 || path[dl] != '/')
        return 0;
    const char *s = path + dl + 1;
    if (strchr(s, '/'))
        return 0;
    size_t n = strlen(s);
    if (n <= 5 || strcmp(s + n - 5, ".json") != 0)
        return 0;
    *stem = s;
    return n - 5;
}

static int cmp_names(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

int catalog_list(const char *dir, char ***names, size_t *count, err_t *err)
{
    name_list_t l = {0};
    *names = NULL;
    *count = 0;
    for (size_t i = 0; i < catalog_embedded_count; i++) {
        const char *stem;
        size_t n = json_stem_in(catalog_embedded[i].path, dir, &stem);
        if (n && list_add(&l, stem, n) != 0)
            goto out_oom;
    }
    const char *od = override_dir();
    if (od) {
        char *path = str_printf("%s/%s", od, dir);
        if (!path)
            goto out_oom;
        DIR *d = opendir(path);
        free(path);
        if (d) {
            struct dirent *de;
            while ((de = readdir(d)) != NULL) {
                size_t n = strlen(de->d_name);
                if (n > 5 && strcmp(de->d_name + n - 5, ".json") == 0 &&
                    list_add(&l, de->d_name, n - 5) != 0) {
                    closedir(d);
                    goto out_oom;
                }
            }
            closedir(d);
        }
    }
    if (l.n)
        qsort(l.v, l.n, sizeof *l.v, cmp_names);
    *names = l.v;
    *count = l.n;
    return ERR_OK;
out_oom:
    catalog_free_names(l.v, l.n);
    return err_set(err, ERR_RUNTIME, "out of memory listing %s", dir);
}

void catalog_free_names(char **names, size_t count)
{
    if (!names)
        return;
    for (size_t i = 0; i < count; i++)
        free(names[i]);
    free(names);
}

int catalog_parse(const char *relpath, cJSON **root, char *origin,
                  size_t origin_cap, err_t *err)
{
    char *text = NULL;
    size_t len = 0;
    char name[CATALOG_ORIGIN_MAX];
    *root = NULL;
    int rc = catalog_read(relpath, &text, &len, name, sizeof name, err);
    if (rc)
        return rc;
    rc = json_parse_text(text, len, name, root, err);
    free(text);
    /* catalog files are data users edit (SCALEPLAN_CATALOG): a key given
     * twice is refused as in their own files */
    json_ctx_t top = json_ctx_root(name);
    if (!rc && (rc = json_check_unique_keys(*root, &top, err))) {
        cJSON_Delete(*root);
        *root = NULL;
    }
    if (!rc && (rc = set_origin(origin, origin_cap, name, err))) {
        cJSON_Delete(*root);
        *root = NULL;
    }
    return rc;
}

/* Whether entry e is called norm, by name or alias. */
static int entry_matches(const cJSON *e, const char *norm)
{
    char buf[128];
    const cJSON *name = cJSON_GetObjectItemCaseSensitive(e, "name");
    if (cJSON_IsString(name)) {
        names_normalize(name->valuestring, buf, sizeof buf);
        if (strcmp(buf, norm) == 0)
            return 1;
    }
    const cJSON *aliases = cJSON_GetObjectItemCaseSensitive(e, "aliases");
    const cJSON *a;
    cJSON_ArrayForEach(a, aliases)
    {
        if (!cJSON_IsString(a))
            continue;
        names_normalize(a->valuestring, buf, sizeof buf);
        if (strcmp(buf, norm) == 0)
            return 1;
    }
    return 0;
}

/* Find the entry called query in table array_key of the parsed document
 * root (named file in messages); a miss as catalog_find_named says. */
static int find_in_doc(const cJSON *root, const char *file, const char *array_key,
                       const char *query, const char *flag, const char *list_hint,
                       const cJSON **entry, int *index, err_t *err)
{
    *entry = NULL;
    json_ctx_t ctx = json_ctx_root(file);
    const cJSON *arr;
    int rc;
    if ((rc = json_get_array(root, array_key, &ctx, JSON_REQUIRED, &arr, err)))
        return rc;
    char norm[128];
    names_normalize(query ? query : "", norm, sizeof norm);
    int i = 0;
    const cJSON *e;
    cJSON_ArrayForEach(e, arr)
    {
        if (entry_matches(e, norm)) {
            *entry = e;
            if (index)
                *index = i;
            return ERR_OK;
        }
        i++;
    }
    /* A miss: suggest the closest name. */
    int n = cJSON_GetArraySize(arr);
    const char **names = calloc((size_t)(n > 0 ? n : 1), sizeof *names);
    if (!names)
        return err_set(err, ERR_RUNTIME, "out of memory");
    int k = 0;
    cJSON_ArrayForEach(e, arr)
    {
        const cJSON *name = cJSON_GetObjectItemCaseSensitive(e, "name");
        if (cJSON_IsString(name))
            names[k++] = name->valuestring;
    }
    int best = names_closest(norm, names, (size_t)k);
    if (best >= 0)
        rc = err_setf(err, ERR_INPUT, NULL, flag,
                      "unknown name '%s'; did you mean '%s'? (%s lists all)",
                      query ? query : "", names[best], list_hint);
    else
        rc = err_setf(err, ERR_INPUT, NULL, flag,
                      "unknown name '%s' (%s lists all)", query ? query : "",
                      list_hint);
    free(names);
    return rc;
}

int catalog_find_named(const char *relpath, const char *array_key,
                       const char *query, const char *flag,
                       const char *list_hint, cJSON **root,
                       const cJSON **entry, int *index, char *origin,
                       size_t origin_cap, err_t *err)
{
    char file[CATALOG_ORIGIN_MAX];
    *entry = NULL;
    int rc = catalog_parse(relpath, root, file, sizeof file, err);
    if (rc)
        return rc;
    if ((rc = set_origin(origin, origin_cap, file, err)) ||
        (rc = find_in_doc(*root, file, array_key, query, flag, list_hint, entry, index, err))) {
        cJSON_Delete(*root);
        *root = NULL;
    }
    return rc;
}

/* Parse the entry of table array_key found at index of the document from
 * file origin. */
static int parse_found(const cJSON *entry, const char *origin, const char *array_key, int index,
                       catalog_entry_parser_t parse, void *out, err_t *err)
{
    json_ctx_t top = json_ctx_root(origin);
    json_ctx_t arr = json_ctx_member(&top, array_key);
    json_ctx_t ctx = json_ctx_index(&arr, index);
    return parse(entry, &ctx, out, err);
}

int catalog_load_named(const char *relpath, const char *array_key,
                       const char *query, const char *flag,
                       const char *list_hint, catalog_entry_parser_t parse,
                       void *out, err_t *err)
{
    cJSON *root = NULL;
    const cJSON *entry;
    int index = 0;
    char origin[CATALOG_ORIGIN_MAX];
    int rc = catalog_find_named(relpath, array_key, query, flag, list_hint,
                                &root, &entry, &index, origin, sizeof origin,
                                err);
    if (rc)
        return rc;
    rc = parse_found(entry, origin, array_key, index, parse, out, err);
    cJSON_Delete(root);
    return rc;
}

/* ------------------------------------------------------------ kept documents */

struct catalog {
    struct catalog_doc {
        char *relpath; /* heap */
        char *origin;  /* heap: the name for messages */
        cJSON *root;
    } *docs;
    int n, cap;
    struct catalog_memo {
        char *key;  /* heap */
        void *blob; /* heap: a copy of what was read */
        size_t size;
    } *memos;
    int n_memos, cap_memos;
};

catalog_t *catalog_create(void)
{
    return calloc(1, sizeof(catalog_t));
}

void catalog_destroy(catalog_t *cat)
{
    if (!cat)
        return;
    for (int i = 0; i < cat->n; i++) {
        cJSON_Delete(cat->docs[i].root);
        free(cat->docs[i].relpath);
        free(cat->docs[i].origin);
    }
    free(cat->docs);
    for (int i = 0; i < cat->n_memos; i++) {
        free(cat->memos[i].key);
        free(cat->memos[i].blob);
    }
    free(cat->memos);
    free(cat);
}

bool catalog_memo_get(const catalog_t *cat, const char *key, void *out, size_t size)
{
    for (int i = 0; cat && i < cat->n_memos; i++)
        if (cat->memos[i].size == size && strcmp(cat->memos[i].key, key) == 0) {
            memcpy(out, cat->memos[i].blob, size);
            return true;
        }
    return false;
}

int catalog_memo_put(catalog_t *cat, const char *key, const void *blob, size_t size)
{
    if (!cat)
        return -1;
    if (cat->n_memos == cat->cap_memos) {
        int cap = cat->cap_memos ? 2 * cat->cap_memos : 8;
        struct catalog_memo *m = realloc(cat->memos, (size_t)cap * sizeof *m);
        if (!m)
            return -1;
        cat->memos = m;
        cat->cap_memos = cap;
    }
    char *k = strdup(key);
    void *b = malloc(size);
    if (!k || !b) {
        free(k);
        free(b);
        return -1;
    }
    memcpy(b, blob, size);
    cat->memos[cat->n_memos++] = (struct catalog_memo){k, b, size};
    return 0;
}

int catalog_get(catalog_t *cat, const char *relpath, const cJSON **root,
                const char **origin, err_t *err)
{
    for (int i = 0; i < cat->n; i++)
        if (strcmp(cat->docs[i].relpath, relpath) == 0) {
            *root = cat->docs[i].root;
            *origin = cat->docs[i].origin;
            return ERR_OK;
        }
    if (cat->n == cat->cap) {
        int cap = cat->cap ? 2 * cat->cap : 8;
        struct catalog_doc *d = realloc(cat->docs, (size_t)cap * sizeof *d);
        if (!d)
            return err_set(err, ERR_RUNTIME, "out of memory reading %s", relpath);
        cat->docs = d;
        cat->cap = cap;
    }
    struct catalog_doc *d = &cat->docs[cat->n];
    char name[CATALOG_ORIGIN_MAX];
    int rc = catalog_parse(relpath, &d->root, name, sizeof name, err);
    if (rc)
        return rc;
    if (!(d->relpath = str_printf("%s", relpath)) || !(d->origin = str_printf("%s", name))) {
        free(d->relpath);
        cJSON_Delete(d->root);
        return err_set(err, ERR_RUNTIME, "out of memory reading %s", relpath);
    }
    cat->n++;
    *root = d->root;
    *origin = d->origin;
    return ERR_OK;
}

int catalog_doc(catalog_t *cat, const char *relpath, const cJSON **root, cJSON **owned,
                char *origin, size_t origin_cap, err_t *err)
{
    *owned = NULL;
    if (!cat) {
        int rc = catalog_parse(relpath, owned, origin, origin_cap, err);
        *root = *owned;
        return rc;
    }
    const char *name;
    int rc = catalog_get(cat, relpath, root, &name, err);
    if (!rc)
        rc = set_origin(origin, origin_cap, name, err);
    return rc;
}

int catalog_lookup_named(catalog_t *cat, const char *relpath, const char *array_key,
                         const char *query, const char *flag, const char *list_hint,
                         catalog_entry_parser_t parse, void *out, err_t *err)
{
    if (!cat)
        return catalog_load_named(relpath, array_key, query, flag, list_hint, parse, out, err);
    const cJSON *root, *entry;
    const char *origin;
    int index = 0;
    int rc = catalog_get(cat, relpath, &root, &origin, err);
    if (!rc)
        rc = find_in_doc(root, origin, array_key, query, flag, list_hint, &entry, &index, err);
    if (!rc)
        rc = parse_found(entry, origin, array_key, index, parse, out, err);
    return rc;
}

int catalog_load_table(const char *relpath, const char *array_key,
                       size_t elem_size, catalog_entry_parser_t parse,
                       void **out, size_t *count, err_t *err)
{
    *out = NULL;
    *count = 0;
    cJSON *root = NULL;
    char origin[CATALOG_ORIGIN_MAX];
    int rc = catalog_parse(relpath, &root, origin, sizeof origin, err);
    if (rc)
        return rc;
    json_ctx_t top = json_ctx_root(origin);
    json_ctx_t arr_ctx = json_ctx_member(&top, array_key);
    const cJSON *arr;
    if ((rc = json_get_array(root, array_key, &top, JSON_REQUIRED, &arr, err)))
        goto out_free_root;
    int n = cJSON_GetArraySize(arr);
    char *list = calloc((size_t)(n > 0 ? n : 1), elem_size);
    if (!list) {
        rc = err_set(err, ERR_RUNTIME, "out of memory");
        goto out_free_root;
    }
    for (int i = 0; i < n; i++) {
        json_ctx_t ctx = json_ctx_index(&arr_ctx, i);
        rc = parse(cJSON_GetArrayItem(arr, i), &ctx, list + (size_t)i * elem_size,
                   err);
        if (rc) {
            free(list);
            goto out_free_root;
        }
    }
    *out = list;
    *count = (size_t)n;
out_free_root:
    cJSON_Delete(root);
    return rc;
}

int catalog_unknown_name(const char *dir, const char *query, const char *flag,
                         const char *what, const char *list_hint,
                         const char *alt, err_t *err)
{
    char **names = NULL;
    size_t n = 0;
    int rc = catalog_list(dir, &names, &n, err);
    if (rc)
        return rc;
    char norm[128];
    names_normalize(query, norm, sizeof norm);
    int best = names_closest(norm, (const char *const *)names, n);
    if (best >= 0)
        rc = err_setf(err, ERR_INPUT, NULL, flag,
                      "unknown %s '%s'; did you mean '%s'? (%s lists all%s)", what,
                      query, names[best], list_hint, alt ? alt : "");
    else
        rc = err_setf(err, ERR_INPUT, NULL, flag, "unknown %s '%s' (%s lists all%s)",
                      what, query, list_hint, alt ? alt : "");
    catalog_free_names(names, n);
    return rc;
}
