/* libFuzzer target: any bytes as a Hugging Face config.json
 * (models/hfconfig). The reader must return 0 with a valid model or a
 * one-line error, never crash, hang or leak. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "common/json.h"
#include "models/hfconfig.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    cJSON *root = NULL;
    err_t err;
    if (json_parse_text((const char *)data, size, "fuzz.json", &root, &err) != 0)
        return 0;
    static const char *const assume[] = {NULL, "llama", "deepseek_v3", "gpt2"};
    for (size_t i = 0; i < sizeof assume / sizeof assume[0]; i++) {
        model_t m;
        notes_t notes;
        notes_init(&notes);
        model_load_opts_t o = {assume[i]};
        int rc = model_from_config_ex(root, "fuzz.json", "fuzz", &o, &m, &notes, &err);
        if (rc && (err.msg[0] == '\0' || strchr(err.msg, '\n')))
            __builtin_trap();
        if (rc == 0) {
            model_params_t p;
            model_params(&m, &p);
            if (!(p.total > 0) || p.active > p.total)
                __builtin_trap();
        }
        notes_free(&notes);
    }
    cJSON_Delete(root);
    return 0;
}
