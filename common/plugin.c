#include "common/plugin.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/strfmt.h"

/* The folder of the running executable (no trailing slash): heap, or
 * NULL when /proc/self/exe cannot be read (or on OOM). readlink cuts a
 * long target silently, so the buffer grows until the target fits. */
static char *exe_dir(void)
{
    for (size_t cap = 256; cap <= ((size_t)1 << 20); cap *= 2) {
        char *buf = malloc(cap);
        if (!buf)
            return NULL;
        ssize_t n = readlink("/proc/self/exe", buf, cap);
        if (n > 0 && (size_t)n < cap) {
            buf[n] = '\0';
            char *slash = strrchr(buf, '/');
            if (slash) {
                *slash = '\0';
                return buf;
            }
        }
        free(buf);
        if (n <= 0 || (size_t)n < cap)
            return NULL; /* unreadable, or a target without a folder */
        /* n == cap: the target may have been cut; read it again, larger */
    }
    return NULL;
}

static bool readable(const char *path)
{
    return access(path, R_OK) == 0;
}

bool plugin_find(const char *file, char **path)
{
    *path = NULL;
    char *dirs[3] = {NULL, NULL, NULL};
    int n = 0;
    bool oom = false, found = false;
    const char *env = getenv("SCALEPLAN_PLUGIN_DIR");
    if (env && *env)
        oom |= !(dirs[n++] = str_printf("%s", env));
    char *exe = exe_dir();
    if (exe) {
        oom |= !(dirs[n++] = str_printf("%s", exe));
        oom |= !(dirs[n++] = str_printf("%s/../lib/scaleplan", exe));
        free(exe);
    }
    for (int i = 0; !oom && !found && i < n; i++) {
        oom = !(*path = str_printf("%s/%s", dirs[i], file));
        found = !oom && readable(*path);
        if (!found) {
            free(*path);
            *path = NULL;
        }
    }
    /* not found: the folders searched, for the caller's message */
    for (int i = 0; !oom && !found && i < n; i++)
        oom = str_appendf(path, "%s%s", i ? ", " : "", dirs[i]) != 0;
    if (!oom && !found && n == 0)
        *path = str_printf("(no folder: /proc/self/exe unreadable and SCALEPLAN_PLUGIN_DIR unset)");
    if (oom) {
        free(*path);
        *path = NULL;
    }
    for (int i = 0; i < n; i++)
        free(dirs[i]);
    return found;
}

int plugin_symbol(const char *file, const char *symbol, plugin_scope_t scope, const char *hint,
                  const void **sym, err_t *err)
{
    *sym = NULL;
    char *path = NULL;
    int rc = ERR_OK;
    if (!plugin_find(file, &path)) {
        rc = path ? err_set(err, ERR_RUNTIME,
                            "%s not found (looked in %s); it is built next to the scaleplan "
                            "binary, or set SCALEPLAN_PLUGIN_DIR to its folder",
                            file, path)
                  : err_set(err, ERR_RUNTIME, "out of memory looking for %s", file);
        goto out_free_path;
    }
    /* dlopen of a file already open returns the same handle */
    void *h = dlopen(path, RTLD_NOW | (scope == PLUGIN_GLOBAL ? RTLD_GLOBAL : RTLD_LOCAL));
    if (!h) {
        const char *why = dlerror();
        rc = err_set(err, ERR_RUNTIME, "cannot load %s: %s%s%s", path, why ? why : "unknown error",
                     hint ? "; " : "", hint ? hint : "");
        goto out_free_path;
    }
    dlerror();
    void *p = dlsym(h, symbol);
    if (!p)
        rc = err_set(err, ERR_RUNTIME, "%s has no symbol %s (a plug-in of another version?)", path,
                     symbol);
    else
        *sym = p;
out_free_path:
    free(path);
    return rc;
}
