/* json: reading and writing JSON through cJSON with errors that say where.
 *
 * Every reader takes a json_ctx_t naming the file and the path of the object
 * inside it, so a bad value is reported as
 *     llama.json: num_attention_heads: must be an integer >= 1 (got -3)
 *     gpus.json: gpus[3].peak_tflops.bf16: must be a finite number (got "x")
 * Readers validate range and type and never leave a silent default: an
 * optional field that is absent leaves *out untouched and returns 0; one
 * that is present but wrong is an error.
 */
#ifndef SCALEPLAN_COMMON_JSON_H
#define SCALEPLAN_COMMON_JSON_H

#include <stdbool.h>
#include <stddef.h>

#include <cjson/cJSON.h>

#include "common/error.h"

#define JSON_PATH_MAX 192

/* Where an object sits: the file (or other source name) and the dotted path
 * from the document root ("" at the root). A path longer than
 * JSON_PATH_MAX - 1 keeps its end after "..." (the member being read,
 * which is what a message must name). */
typedef struct {
    const char *file;
    char path[JSON_PATH_MAX];
} json_ctx_t;

typedef enum { JSON_OPTIONAL = 0, JSON_REQUIRED = 1 } json_need_t;

/* A root context for file. */
json_ctx_t json_ctx_root(const char *file);
/* The context of member key of parent. */
json_ctx_t json_ctx_member(const json_ctx_t *parent, const char *key);
/* The context of element index of an array at parent. */
json_ctx_t json_ctx_index(const json_ctx_t *parent, int index);

/* Parse text (len bytes, need not be NUL-terminated) named name. A syntax
 * error or trailing garbage is ERR_INPUT with line and column. An empty
 * document is an error too. The bare values Infinity, -Infinity and NaN
 * that Python's json module (and transformers' config files) write are
 * read as non-finite numbers: the number readers below refuse them where a
 * finite number is needed, naming the key. Caller frees *root with
 * cJSON_Delete. */
int json_parse_text(const char *text, size_t len, const char *name,
                    cJSON **root, err_t *err);

/* Read and parse a file; errors name the path. */
int json_parse_file(const char *path, cJSON **root, err_t *err);

/* Refuse a key given twice in one object anywhere under node (ctx names
 * node): JSON leaves the meaning open (cJSON's lookups take the first,
 * Python's json the last), and a config with two "num_attention_heads" is
 * a mistake either way. ERR_INPUT naming the file and the key's path. */
int json_check_unique_keys(const cJSON *node, const json_ctx_t *ctx, err_t *err);

/* Numbers. The value must be finite and in [lo, hi]. */
int json_get_double(const cJSON *obj, const char *key, const json_ctx_t *ctx,
                    json_need_t need, double lo, double hi, double *out,
                    err_t *err);
/* A reader that takes obj[key] as it is (an optional figure kept as NaN
 * when absent) first calls this: ERR_INPUT naming the key when the value
 * is a non-finite number (Infinity, -Infinity, NaN); 0 otherwise, absent
 * or of another type included. */
int json_check_finite(const cJSON *obj, const char *key, const json_ctx_t *ctx, err_t *err);
/* Integers: a JSON number with no fractional part, in [lo, hi]. */
int json_get_int(const cJSON *obj, const char *key, const json_ctx_t *ctx,
                 json_need_t need, long lo, long hi, int *out, err_t *err);
/* Large integer counts (e.g. message sizes in bytes) up to 2^53. */
int json_get_long(const cJSON *obj, const char *key, const json_ctx_t *ctx,
                  json_need_t need, long long lo, long long hi, long long *out,
                  err_t *err);
int json_get_bool(const cJSON *obj, const char *key, const json_ctx_t *ctx,
                  json_need_t need, bool *out, err_t *err);
/* Strings are copied into out (capacity cap, NUL-terminated); a string that
 * does not fit is an error rather than silently cut. */
int json_get_string(const cJSON *obj, const char *key, const json_ctx_t *ctx,
                    json_need_t need, char *out, size_t cap, err_t *err);
/* Objects and arrays: *out is set to the member or NULL when optional and
 * absent. A member of the wrong type is an error. */
int json_get_object(const cJSON *obj, const char *key, const json_ctx_t *ctx,
                    json_need_t need, const cJSON **out, err_t *err);
int json_get_array(const cJSON *obj, const char *key, const json_ctx_t *ctx,
                   json_need_t need, const cJSON **out, err_t *err);

/* Check that obj is a JSON object; the error names ctx. */
int json_expect_object(const cJSON *obj, const json_ctx_t *ctx, err_t *err);

/* Print root (formatted) and write it atomically to path. */
int json_write_file(const char *path, const cJSON *root, err_t *err);

/* Add a number member rounded to a sensible number of significant digits
 * (so outputs do not show 0.30000000000000004). Returns false on OOM. */
bool json_add_number(cJSON *obj, const char *key, double value);

/* Print root to stdout followed by a newline. Returns 0 or ERR_RUNTIME. */
int json_print_stdout(const cJSON *root, err_t *err);

#endif
