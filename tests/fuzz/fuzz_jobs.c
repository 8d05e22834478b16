/* A GPU-pool job list (scaleplan cluster --trace): the first byte picks
 * the format (cluster/jobs.h), the rest is the file; a list that reads
 * and has durations is replayed under two policies on a pool that holds
 * its largest job (short lists only, so each input stays fast). */
#include "tests/fuzz/fuzz.h"

#include "cluster/formats.h"
#include "cluster/replay.h"

#define MAX_REPLAYED_JOBS 200

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    int n_formats;
    const cjobs_format_t *formats = cjobs_formats(&n_formats);
    const cjobs_format_t *fmt = &formats[data[0] % n_formats];
    const char *path = fuzz_write("jobs.csv", data + 1, size - 1);
    if (!path)
        return 0;
    cjobs_t l;
    err_t err;
    if (cjobs_read(fmt, path, &l, &err) != 0)
        return 0;
    int largest = 1;
    bool timed = l.n <= MAX_REPLAYED_JOBS;
    for (int i = 0; i < l.n; i++) {
        largest = l.jobs[i].gpus > largest ? l.jobs[i].gpus : largest;
        timed = timed && l.jobs[i].duration_ms > 0;
    }
    static const char *const policies[] = {"backfill", "las"};
    for (int p = 0; timed && p < 2; p++) {
        creplay_config_t c;
        creplay_config_default(&c, (largest + 7) / 8 * 8);
        c.gpus_per_node = 8;
        c.policy = cpolicy_find(policies[p]);
        creplay_result_t r;
        if (creplay_run(&l, &c, &r, &err) == 0)
            creplay_result_free(&r);
    }
    cjobs_free(&l);
    return 0;
}
