#include "common/plugin.h"

#include <dlfcn.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifndef PATH_MAX
#define PATH_MAX 4096
#endif

/* The folder of the running executable (no trailing slash) into dir;
 * false when /proc/self/exe cannot be read. */
static bool exe_dir(char *dir, size_t cap)
{
    char buf[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
    if (n <= 0)
        return false;
    buf[n] = '\0';
    char *slash = strrchr(buf, '/');
    if (!slash)
        return false;
    *slash = '\0';
    snprintf(dir, cap, "%s", buf);
    return true;
}

static bool readable(const char *path)
{
    return access(path, R_OK) == 0;
}

bool plugin_find(const char *file, char *path, size_t cap)
{
    char dirs[3][PATH_MAX];
    int n = 0;
    const char *env = getenv("SCALEPLAN_PLUGIN_DIR");
    if (env && *env)
        snprintf(dirs[n++], PATH_MAX, "%s", env);
    char exe[PATH_MAX];
    if (exe_dir(exe, sizeof exe)) {
        snprintf(dirs[n++], PATH_MAX, "%s", exe);
        snprintf(dirs[n++], PATH_MAX, "%.*s/../lib/scaleplan", PATH_MAX - 20, exe);
    }
    for (int i = 0; i < n; i++) {
        snprintf(path, cap, "%s/%s", dirs[i], file);
        if (readable(path))
            return true;
    }
    /* not found: the folders searched, for the caller's message */
    size_t used = 0;
    path[0] = '\0';
    for (int i = 0; i < n && used < cap; i++)
        used += (size_t)snprintf(path + used, cap - used, "%s%s", i ? ", " : "", dirs[i]);
    if (n == 0)
        snprintf(path, cap, "(no folder: /proc/self/exe unreadable and SCALEPLAN_PLUGIN_DIR unset)");
    return false;
}

int plugin_symbol(const char *file, const char *symbol, plugin_scope_t scope, const char *hint,
                  const void **sym, err_t *err)
{
    *sym = NULL;
    char path[PATH_MAX + 64];
    if (!plugin_find(file, path, sizeof path))
        return err_set(err, ERR_RUNTIME,
                       "%s not found (looked in %s); it is built next to the scaleplan binary, or "
                       "set SCALEPLAN_PLUGIN_DIR to its folder",
                       file, path);
    /* dlopen of a file already open returns the same handle */
    void *h = dlopen(path, RTLD_NOW | (scope == PLUGIN_GLOBAL ? RTLD_GLOBAL : RTLD_LOCAL));
    if (!h) {
        const char *why = dlerror();
        return err_set(err, ERR_RUNTIME, "cannot load %s: %s%s%s", path, why ? why : "unknown error",
                       hint ? "; " : "", hint ? hint : "");
    }
    dlerror();
    void *p = dlsym(h, symbol);
    if (!p)
        return err_set(err, ERR_RUNTIME, "%s has no symbol %s (a plug-in of another version?)",
                       path, symbol);
    *sym = p;
    return ERR_OK;
}
