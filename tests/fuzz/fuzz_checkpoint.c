/* A checkpoint on disk (train --resume): the manifest, a NUL byte, then
 * the rank's shard, resumed by a run with 16 parameters (ckpt_resume, both
 * "auto" and the folder by name). */
#include "tests/fuzz/fuzz.h"

#include <stdio.h>
#include <string.h>

#include "trainer/checkpoint.h"

#define NP 16

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const uint8_t *nul = memchr(data, 0, size);
    size_t man = nul ? (size_t)(nul - data) : size;
    char root[512], step[600];
    snprintf(root, sizeof root, "%s/ckpt", fuzz_dir());
    snprintf(step, sizeof step, "%s/step-00000001", root);
    fuzz_clear(root);
    if (!fuzz_write("ckpt/step-00000001/manifest.json", data, man))
        return 0;
    if (nul && !fuzz_write("ckpt/step-00000001/rank-00000.bin", nul + 1, size - man - 1))
        return 0;
    ckpt_config_t c;
    memset(&c, 0, sizeof c);
    c.dir = root;
    c.keep = 1;
    snprintf(c.model, sizeof c.model, "tiny-gpt");
    c.n_params = NP;
    c.n_opt = NP;
    c.tp = c.dp = 1;
    err_t err;
    (void)ckpt_setting(&c, "seed", &err, "1");
    (void)ckpt_arch(&c, "n_heads", &err, "4");
    float params[NP], m[NP], v[NP];
    ckpt_state_t s = {params, m, v, 0};
    dist_group_t world = {0, 1, NULL, NULL, NULL};
    ckpt_resume_info_t info;
    (void)ckpt_resume(&c, &world, "auto", &s, &info, &err);
    ckpt_resume_info_free(&info);
    (void)ckpt_resume(&c, &world, step, &s, &info, &err);
    ckpt_resume_info_free(&info);
    ckpt_config_free(&c);
    return 0;
}
