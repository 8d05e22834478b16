/* Hybrid layer patterns (models/hybrid.h, models/hybrid_config.h): the
 * input as a Megatron pattern string (--hybrid-override-pattern) and as a
 * config.json's hybrid keys laid over a small base model; what loads is
 * validated and counted (parameters, FLOPs, saved activations, the
 * kernels' FLOPs). Errors are one non-empty line; a model that validates
 * has positive parameters and no more active than total. */
#include "tests/fuzz/fuzz.h"

#include <string.h>

#include "models/flops.h"
#include "models/hybrid.h"
#include "models/hybrid_config.h"
#include "models/layout.h"
#include "models/memory.h"
#include "models/model.h"

static void base(model_t *m)
{
    memset(m, 0, sizeof *m);
    m->n_layers = 4, m->hidden = 64, m->n_heads = 4, m->n_kv_heads = 2, m->head_dim = 16;
    m->ffn = 128, m->vocab = 100, m->max_seq = 256, m->norm = MODEL_NORM_RMSNORM;
    m->mlp = MODEL_MLP_SWIGLU, m->pos = MODEL_POS_ROPE;
    m->moe.n_experts = 4, m->moe.top_k = 2, m->moe.expert_ffn = 32;
    m->hybrid.ssm_state = 16, m->hybrid.ssm_heads = 4, m->hybrid.ssm_head_dim = 32;
    m->hybrid.ssm_groups = 2, m->hybrid.ssm_conv = 4, m->hybrid.ssm_chunk = 64;
}

static void one_line(int rc, const err_t *e)
{
    if (rc && (e->msg[0] == '\0' || strchr(e->msg, '\n')))
        __builtin_trap();
}

static void use(model_t *m)
{
    err_t e;
    int rc = model_validate(m, "fuzz", &e);
    one_line(rc, &e);
    if (rc)
        return;
    model_params_t p;
    model_params(m, &p);
    if (!(p.total > 0) || p.active > p.total * (1 + 1e-12))
        __builtin_trap();
    model_flops_t f;
    model_flops(m, 256, &f);
    if (!(f.fwd_per_token_total > 0))
        __builtin_trap();
    layout_t l;
    layout_defaults(&l);
    l.global_batch = 8;
    l.seq_len = 256;
    if (layout_finalize(&l, m, 8, &e) == 0) {
        model_memory_t mem;
        model_memory_peak(m, &l, NULL, &mem);
        if (!(mem.total_bytes > 0))
            __builtin_trap();
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    /* as a pattern: the bytes up to the first NUL */
    char pat[1024];
    size_t n = size < sizeof pat - 1 ? size : sizeof pat - 1;
    memcpy(pat, data, n);
    pat[n] = '\0';
    model_t m;
    base(&m);
    err_t e;
    int rc = model_hybrid_set_pattern(&m, pat, "fuzz", "--hybrid-override-pattern", &e);
    one_line(rc, &e);
    if (rc == 0)
        use(&m);
    /* as a config's hybrid keys */
    cJSON *root = fuzz_json(data, size);
    if (!root)
        return 0;
    base(&m);
    json_ctx_t ctx = json_ctx_root("config.json");
    notes_t notes;
    notes_init(&notes);
    rc = model_hybrid_config_read(root, &ctx, "config.json", &m, &notes, &e);
    one_line(rc, &e);
    if (rc == 0 && model_is_hybrid(&m))
        use(&m);
    notes_free(&notes);
    cJSON_Delete(root);
    return 0;
}
