/* A cluster definition file (--cluster FILE): cluster_load. */
#include "tests/fuzz/fuzz.h"

#include "topologies/cluster.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *path = fuzz_write("cluster.json", data, size);
    cluster_t c;
    err_t err;
    if (path && cluster_load(path, &c, &err) == 0) {
        (void)cluster_nodes(&c);
        (void)cluster_hosts(&c);
    }
    return 0;
}
