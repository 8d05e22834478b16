#include "cluster/spot.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/fileio.h"

/* One data row "t_s,spot_gpus" into the trace (grown as needed). */
static int row(const char *path, int line, const char *text, int spot_gpus, int gpn,
               cspot_trace_t *t, int *cap, err_t *err)
{
    double at_s, gpus;
    int used = 0;
    if (sscanf(text, "%lf,%lf%n", &at_s, &gpus, &used) != 2 ||
        (text[used] && text[used] != '\r'))
        return err_set(err, ERR_INPUT, "%s: line %d: row: not t_s,spot_gpus (got '%.40s')",
                       path, line, text);
    if (!isfinite(at_s) || at_s < 0 || at_s > 1e12 ||
        (t->n && (int64_t)llround(at_s * 1000) <= t->at_ms[t->n - 1]))
        return err_set(err, ERR_INPUT, "%s: line %d: t_s: must be 0 or more and rise row by row",
                       path, line);
    if (!isfinite(gpus) || gpus < 0 || gpus > spot_gpus || gpus != floor(gpus))
        return err_set(err, ERR_INPUT, "%s: line %d: spot_gpus: a whole number from 0 to the "
                       "spot share's %d", path, line, spot_gpus);
    if (t->n == *cap) {
        int c = *cap ? 2 * *cap : 64;
        int64_t *a = realloc(t->at_ms, (size_t)c * sizeof *a);
        if (a)
            t->at_ms = a;
        int *g = a ? realloc(t->nodes, (size_t)c * sizeof *g) : NULL;
        if (!g)
            return err_set(err, ERR_RUNTIME, "out of memory reading %s", path);
        t->nodes = g;
        *cap = c;
    }
    t->at_ms[t->n] = (int64_t)llround(at_s * 1000);
    t->nodes[t->n++] = (int)gpus / gpn;
    return ERR_OK;
}

int cspot_trace_read(const char *path, int spot_gpus, int gpus_per_node, cspot_trace_t *out,
                     err_t *err)
{
    char *data = NULL;
    size_t len = 0;
    memset(out, 0, sizeof *out);
    int rc = fileio_read_all(path, &data, &len, err), cap = 0, line = 0;
    for (char *p = data, *next; !rc && p && *p; p = next) {
        next = strchr(p, '\n');
        if (next)
            *next++ = '\0';
        line++;
        if (line == 1) {
            if (strncmp(p, "t_s,spot_gpus", 13) != 0)
                rc = err_set(err, ERR_INPUT, "%s: line 1: header: must be t_s,spot_gpus", path);
            continue;
        }
        if (*p && *p != '\r')
            rc = row(path, line, p, spot_gpus, gpus_per_node, out, &cap, err);
    }
    if (!rc && out->n == 0)
        rc = err_set(err, ERR_INPUT, "%s: no rows (t_s,spot_gpus)", path);
    free(data);
    if (rc)
        cspot_trace_free(out);
    return rc;
}

void cspot_trace_free(cspot_trace_t *t)
{
    free(t->at_ms);
    free(t->nodes);
    memset(t, 0, sizeof *t);
}
