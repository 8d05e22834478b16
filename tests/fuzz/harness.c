/* The shared pieces of the fuzz targets (fuzz.h). */
#include "tests/fuzz/fuzz.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/error.h"
#include "common/fileio.h"
#include "common/json.h"

/* The scratch folder, removed at exit. */
static char scratch[256];

static void remove_scratch(void)
{
    if (scratch[0])
        fuzz_clear(scratch);
}

const char *fuzz_dir(void)
{
    if (!scratch[0]) {
        struct stat st;
        const char *base = stat("/dev/shm", &st) == 0 && S_ISDIR(st.st_mode) ? "/dev/shm"
                           : getenv("TMPDIR")                               ? getenv("TMPDIR")
                                                                            : "/tmp";
        snprintf(scratch, sizeof scratch, "%s/scaleplan-fuzz-XXXXXX", base);
        if (!mkdtemp(scratch)) {
            perror("fuzz: mkdtemp");
            abort();
        }
        atexit(remove_scratch);
    }
    return scratch;
}

const char *fuzz_write(const char *name, const uint8_t *data, size_t size)
{
    static char path[512];
    snprintf(path, sizeof path, "%s/%s", fuzz_dir(), name);
    err_t err;
    char *slash = strrchr(path, '/');
    *slash = '\0';
    if (fileio_mkdirs(path, &err) != 0)
        return NULL;
    *slash = '/';
    return fileio_write_atomic(path, data, size, &err) == 0 ? path : NULL;
}

cJSON *fuzz_json(const uint8_t *data, size_t size)
{
    cJSON *root = NULL;
    err_t err;
    return json_parse_text((const char *)data, size, "fuzz.json", &root, &err) == 0 ? root : NULL;
}

void fuzz_clear(const char *path)
{
    err_t err;
    fileio_remove_tree(path, &err);
}
