/* catalog: the data files scaleplan ships, compiled into the binary.
 *
 * Model configs (JSON files in models/catalog), GPU/fabric/price/failure tables
 * (topologies/catalog/...) and default cost profiles (profile/catalog/)
 * are JSON in the source tree, where users read and edit them. The build
 * embeds them so an installed binary needs no data directory. Setting
 * SCALEPLAN_CATALOG to a directory laid out like the source tree makes files
 * there take precedence over (and add to) the built-in ones, so an edited
 * catalog is used without rebuilding.
 */
#ifndef SCALEPLAN_COMMON_CATALOG_H
#define SCALEPLAN_COMMON_CATALOG_H

#include <stdbool.h>
#include <stddef.h>

#include "common/error.h"
#include "common/json.h"

struct cJSON;

typedef struct {
    const char *path; /* relative to the source root, e.g. "models/catalog/gpt2.json" */
    const char *text; /* file contents, NUL-terminated */
    size_t len;
} catalog_entry_t;

/* Generated at build time by tools/embed.c from the catalog files. */
extern const catalog_entry_t catalog_embedded[];
extern const size_t catalog_embedded_count;

/* Bytes of a buffer for a catalog file's name in messages (origin): the
 * longest path the system opens (Linux PATH_MAX), so that any override
 * file fits; one that does not is refused, never cut. */
#define CATALOG_ORIGIN_MAX 4096

/* Read catalog file relpath. *text is a heap copy (NUL-terminated) that the
 * caller frees; origin receives the name to use in messages (the override
 * file's path, or relpath). A file in neither place is ERR_INPUT, and so is
 * a name longer than origin_cap - 1 (naming $SCALEPLAN_CATALOG; *text is
 * NULL then). Origins of the other calls below are copied the same way. */
int catalog_read(const char *relpath, char **text, size_t *len, char *origin,
                 size_t origin_cap, err_t *err);

/* Whether relpath exists in the override directory or the binary. */
int catalog_exists(const char *relpath);

/* The names (file stems) of the *.json files directly inside dir (e.g.
 * "models/catalog"), built-in and override together, sorted and unique.
 * *names is a heap array of heap strings freed with catalog_free_names.
 * Returns 0 or ERR_RUNTIME on OOM / unreadable override directory. */
int catalog_list(const char *dir, char ***names, size_t *count, err_t *err);
void catalog_free_names(char **names, size_t count);

/* Find a named entry in a catalog table: relpath holds an object whose
 * member array_key is an array of objects, each with a "name" and optional
 * "aliases". The query is normalised (names_normalize) and matched against
 * both. On success *root owns the parsed document (cJSON_Delete it), *entry
 * points inside it, *index is its position and origin names the file. A
 * miss is ERR_INPUT naming flag, with a "did you mean" suggestion and the
 * catalog command (list_hint, e.g. "scaleplan catalog gpus") that lists
 * every name. */
int catalog_find_named(const char *relpath, const char *array_key,
                       const char *query, const char *flag,
                       const char *list_hint, struct cJSON **root,
                       const struct cJSON **entry, int *index, char *origin,
                       size_t origin_cap, err_t *err);

/* Parses one table entry into the record at out; ctx names the entry. */
typedef int (*catalog_entry_parser_t)(const struct cJSON *obj,
                                      const json_ctx_t *ctx, void *out,
                                      err_t *err);

/* Find the entry called query in table array_key of relpath (as
 * catalog_find_named) and parse it into out with parse. */
int catalog_load_named(const char *relpath, const char *array_key,
                       const char *query, const char *flag,
                       const char *list_hint, catalog_entry_parser_t parse,
                       void *out, err_t *err);

/* Parse every entry of table array_key of relpath into a heap array of
 * elements of elem_size bytes (*out, freed by the caller). */
int catalog_load_table(const char *relpath, const char *array_key,
                       size_t elem_size, catalog_entry_parser_t parse,
                       void **out, size_t *count, err_t *err);

/* ERR_INPUT for a name missing from the catalog directory dir: "unknown
 * <what> 'query'; did you mean 'x'? (<list_hint> lists all<alt>)" where alt
 * says what else the flag accepts (e.g. "; a JSON file works too"). */
int catalog_unknown_name(const char *dir, const char *query, const char *flag,
                         const char *what, const char *list_hint,
                         const char *alt, err_t *err);

/* Parse catalog file relpath into *root (caller deletes); origin as above. */
int catalog_parse(const char *relpath, struct cJSON **root, char *origin,
                  size_t origin_cap, err_t *err);

/* Parsed catalog files kept for reuse: an opaque handle that a caller
 * creates and hands down to the loaders (main() makes one per process), so
 * each catalog file is read and parsed once however many names are looked
 * up in it. Its documents are never modified. A file is read the first time
 * it is asked for, $SCALEPLAN_CATALOG as it is then. Not for concurrent use:
 * names are looked up while setting up, before any parallel sweep. Where a
 * function takes a catalog_t *, NULL means: parse the file for this call. */
typedef struct catalog catalog_t;

/* A new, empty handle; NULL on OOM. */
catalog_t *catalog_create(void);
/* Free every document; NULL is fine. */
void catalog_destroy(catalog_t *cat);

/* Memos: a reader that turns a catalog entry into a flat struct (no
 * pointers inside) may keep a copy under a key naming everything the
 * result depends on, so that the next read of the same entry through the
 * same catalog is a copy (the library's loops read one preset thousands of
 * times). catalog_memo_get copies the blob stored under key into out when
 * one of that size is there; catalog_memo_put stores a copy (-1 when out
 * of memory or cat is NULL: nothing kept, which only costs the next read
 * its parse). */
bool catalog_memo_get(const catalog_t *cat, const char *key, void *out, size_t size);
int catalog_memo_put(catalog_t *cat, const char *key, const void *blob, size_t size);

/* The parsed file relpath, parsed now if it was not yet (errors as
 * catalog_parse; a failed parse is not kept). *root and *origin (the name
 * for messages) belong to cat until catalog_destroy. */
int catalog_get(catalog_t *cat, const char *relpath, const struct cJSON **root,
                const char **origin, err_t *err);

/* The parsed file relpath from cat, or (cat NULL) parsed now into *owned,
 * which the caller deletes (NULL when cat holds the document); origin gets
 * the name for messages. Errors as catalog_parse. */
int catalog_doc(catalog_t *cat, const char *relpath, const struct cJSON **root,
                struct cJSON **owned, char *origin, size_t origin_cap, err_t *err);

/* catalog_load_named on the document from cat (NULL: parse it now). */
int catalog_lookup_named(catalog_t *cat, const char *relpath, const char *array_key,
                         const char *query, const char *flag, const char *list_hint,
                         catalog_entry_parser_t parse, void *out, err_t *err);

#endif
