#include "calibrate/nccltests.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common/fileio.h"
#include "common/json.h"

#define MAX_COLS 48
#define MAX_TOKEN 96

/* ------------------------------------------------ shared helpers */

static const char *base_name(const char *path)
{
    const char *s = strrchr(path, '/');
    return s ? s + 1 : path;
}

/* The collective named in text (a test name, program path or file name),
 * case-insensitive. 1 = found, 0 = none named, -1 = a test scaleplan does
 * not model (*what names it). */
static int op_from_name(const char *text, coll_op_t *op, const char **what)
{
    static const struct {
        const char *needle;
        int op; /* -1: not modeled */
    } names[] = {
        {"reduce_scatter", COLL_REDUCE_SCATTER}, {"reducescatter", COLL_REDUCE_SCATTER},
        {"all_reduce", COLL_ALL_REDUCE},         {"allreduce", COLL_ALL_REDUCE},
        {"all_gather", COLL_ALL_GATHER},         {"allgather", COLL_ALL_GATHER},
        {"alltoallv", -1},                       {"alltoall", COLL_ALL_TO_ALL},
        {"all_to_all", COLL_ALL_TO_ALL},         {"sendrecv", COLL_SEND_RECV},
        {"send_recv", COLL_SEND_RECV},           {"broadcast", COLL_BROADCAST},
        {"bcast", COLL_BROADCAST},               {"hypercube", -1},
        {"reduce", -1},                          {"gather", -1},
        {"scatter", -1},
    };
    char low[256];
    size_t n = strlen(text);
    if (n >= sizeof low)
        n = sizeof low - 1;
    for (size_t i = 0; i < n; i++)
        low[i] = (char)tolower((unsigned char)text[i]);
    low[n] = '\0';
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (strstr(low, names[i].needle)) {
            if (names[i].op < 0) {
                *what = names[i].needle;
                return -1;
            }
            *op = (coll_op_t)names[i].op;
            return 1;
        }
    return 0;
}

static int resolve_op(const char *name, const char *program, const char *file, coll_op_t *op,
                      err_t *err)
{
    const char *cands[] = {program, file};
    for (int i = 0; i < 2; i++) {
        if (!cands[i] || !cands[i][0])
            continue;
        const char *what = NULL;
        int r = op_from_name(i == 1 ? base_name(cands[i]) : cands[i], op, &what);
        if (r > 0)
            return ERR_OK;
        if (r < 0)
            return err_setf(err, ERR_INPUT, name, NULL,
                            "'%s' tests a collective scaleplan does not model (all_reduce, "
                            "all_gather, reduce_scatter, broadcast, sendrecv, alltoall)",
                            what);
    }
    return err_setf(err, ERR_INPUT, name, NULL,
                    "cannot tell which collective this log measured: keep its '# Collective "
                    "test starting' line or name the file after the nccl-tests binary "
                    "(e.g. all_reduce_perf.log)");
}

/* A group size from the busbw/algbw ratio of the log's widest row: the
 * nccl-tests factor is 2(n-1)/n for all-reduce and (n-1)/n for all-gather,
 * reduce-scatter and all-to-all. 0 when it cannot be told. */
static int ranks_from_ratio(coll_op_t op, double ratio)
{
    double n;
    if (op == COLL_ALL_REDUCE && ratio < 1.999)
        n = 2 / (2 - ratio);
    else if ((op == COLL_ALL_GATHER || op == COLL_REDUCE_SCATTER || op == COLL_ALL_TO_ALL) &&
             ratio < 0.9995)
        n = 1 / (1 - ratio);
    else
        return 0;
    long r = lround(n);
    if (r < 2 || fabs(n - (double)r) > 0.15)
        return 0;
    return (int)r;
}

/* Distinct host names, for the node count. */
typedef struct {
    char (*names)[64];
    int n, cap;
} hosts_t;

static int hosts_add(hosts_t *h, const char *name, err_t *err)
{
    for (int i = 0; i < h->n; i++)
        if (strcmp(h->names[i], name) == 0)
            return ERR_OK;
    if (h->n == h->cap) {
        int cap = h->cap ? 2 * h->cap : 16;
        char(*grown)[64] = realloc(h->names, (size_t)cap * sizeof *grown);
        if (!grown)
            return err_set(err, ERR_RUNTIME, "out of memory reading a log");
        h->names = grown;
        h->cap = cap;
    }
    snprintf(h->names[h->n++], 64, "%s", name);
    return ERR_OK;
}

/* Settle the group size and node count, check every row's busbw against
 * the nccl-tests definition, and name the source. rows_line[i] is the
 * line of row i in a text log (0 for JSON; field names row_path). */
static int finish(const char *name, const nccltests_hint_t *hint, int log_ranks, int log_nodes,
                  const char *device, const char *version, const int *rows_line, meas_coll_t *out,
                  err_t *err)
{
    int n = log_ranks;
    if (hint && hint->n_ranks > 0) {
        if (log_ranks > 0 && log_ranks != hint->n_ranks)
            return err_setf(err, ERR_INPUT, name, NULL,
                            "the log lists %d ranks but --ranks says %d", log_ranks,
                            hint->n_ranks);
        n = hint->n_ranks;
    }
    if (n <= 0) {
        /* the widest row carries the most digits of the ratio */
        int wide = 0;
        for (int i = 1; i < out->n; i++)
            if (out->busbw_gbs[i] > out->busbw_gbs[wide])
                wide = i;
        double algbw = out->bytes[wide] / out->time_us[wide] / 1e3;
        n = algbw > 0 ? ranks_from_ratio(out->op, out->busbw_gbs[wide] / algbw) : 0;
        if (n <= 0)
            return err_setf(err, ERR_INPUT, name, NULL,
                            "the log does not list its ranks ('#  Rank' lines) and its "
                            "busbw/algbw ratio does not tell them: pass --ranks N");
    }
    int nodes = log_nodes > 0 ? log_nodes : 1;
    if (hint && hint->nodes > 0)
        nodes = hint->nodes;
    if (nodes > n)
        return err_setf(err, ERR_INPUT, name, NULL, "%d nodes for %d ranks is impossible", nodes,
                        n);
    out->n_ranks = n;
    out->nodes = nodes;
    double factor = prof_bus_factor(out->op, n);
    for (int i = 0; i < out->n; i++) {
        double expect = out->bytes[i] / out->time_us[i] / 1e3 * factor;
        double got = out->busbw_gbs[i];
        /* printed with 2 decimals (or 3-4 significant digits) and the time
         * with 4-5 digits: 1% or half a unit of the last digit */
        if (fabs(expect - got) > 0.01 * got + 0.006) {
            char where[32] = "";
            if (rows_line && rows_line[i] > 0)
                snprintf(where, sizeof where, ":%d", rows_line[i]);
            return err_setf(err, ERR_INPUT, NULL, NULL,
                            "%s%s: busbw %.2f GB/s does not match %d ranks (size/time x %.4g = "
                            "%.2f); pass --ranks N if the group size is wrong",
                            name, where, got, n, factor, expect);
        }
    }
    snprintf(out->source, sizeof out->source,
             "nccl-tests log %s (%s%s%d rank%s on %d node%s%s%s)", base_name(name),
             device && device[0] ? device : "", device && device[0] ? ", " : "", n,
             n == 1 ? "" : "s", nodes, nodes == 1 ? "" : "s", version && version[0] ? ", " : "",
             version ? version : "");
    return ERR_OK;
}

static int add_row(meas_coll_t *out, int *rows_line, int line, double bytes, double time_us,
                   double busbw, const char *name, err_t *err)
{
    if (out->n == MEAS_MAX_COLL_POINTS)
        return err_setf(err, ERR_INPUT, NULL, NULL, "%s:%d: more than %d sizes in one log", name,
                        line, MEAS_MAX_COLL_POINTS);
    if (out->n > 0 && !(bytes > out->bytes[out->n - 1]))
        return err_setf(err, ERR_INPUT, NULL, NULL,
                        "%s:%d: size %.0f does not follow %.0f (one increasing sweep per log)",
                        name, line, bytes, out->bytes[out->n - 1]);
    if (!(time_us > 0))
        return err_setf(err, ERR_INPUT, NULL, NULL, "%s:%d: time must be positive (got %g)",
                        name, line, time_us);
    if (rows_line)
        rows_line[out->n] = line;
    out->bytes[out->n] = bytes;
    out->time_us[out->n] = time_us;
    out->busbw_gbs[out->n] = busbw;
    out->n++;
    return ERR_OK;
}

/* ------------------------------------------------ text logs */

typedef struct {
    int n;
    char tok[MAX_COLS + 4][MAX_TOKEN];
    int too_many; /* more tokens than stored */
} tokens_t;

static void tokenize(const char *s, tokens_t *t)
{
    t->n = 0;
    t->too_many = 0;
    while (*s) {
        while (*s == ' ' || *s == '\t')
            s++;
        if (!*s)
            break;
        size_t len = strcspn(s, " \t");
        if (t->n < MAX_COLS + 4) {
            size_t c = len < MAX_TOKEN - 1 ? len : MAX_TOKEN - 1;
            memcpy(t->tok[t->n], s, c);
            t->tok[t->n][c] = '\0';
        } else {
            t->too_many++;
        }
        t->n++;
        s += len;
    }
}

static bool is_uint(const char *s)
{
    if (!*s)
        return false;
    for (; *s; s++)
        if (!isdigit((unsigned char)*s))
            return false;
    return true;
}

/* A finite number filling the whole token. */
static bool parse_num(const char *s, double *v)
{
    char *end;
    errno = 0;
    *v = strtod(s, &end);
    return end != s && *end == '\0' && errno == 0 && isfinite(*v);
}

/* The column layout of the results table. */
typedef struct {
    int n_cols;
    bool timestamp; /* a trailing "timestamp" column takes two tokens */
    int size, type, redop;
    int time, algbw, busbw, wrong;          /* out-of-place */
    int time_in, algbw_in, busbw_in, wrong_in; /* in-place */
} layout_t;

static bool read_layout(const tokens_t *t, layout_t *l)
{
    memset(l, 0, sizeof *l);
    l->size = l->type = l->redop = -1;
    l->time = l->algbw = l->busbw = l->wrong = -1;
    l->time_in = l->algbw_in = l->busbw_in = l->wrong_in = -1;
    if (t->n > MAX_COLS || t->too_many)
        return false;
    int times = 0;
    for (int i = 0; i < t->n; i++) {
        const char *w = t->tok[i];
        if (strcmp(w, "size") == 0)
            l->size = i;
        else if (strcmp(w, "type") == 0)
            l->type = i;
        else if (strcmp(w, "redop") == 0)
            l->redop = i;
        else if (strcmp(w, "timestamp") == 0)
            l->timestamp = true;
        else if (strcmp(w, "time") == 0 || strcmp(w, "cputime") == 0) {
            if (times == 0)
                l->time = i;
            else if (times == 1)
                l->time_in = i;
            times++;
        } else if (strcmp(w, "algbw") == 0) {
            if (l->time_in < 0)
                l->algbw = l->algbw < 0 ? i : l->algbw;
            else if (l->algbw_in < 0)
                l->algbw_in = i;
        } else if (strcmp(w, "busbw") == 0) {
            if (l->time_in < 0)
                l->busbw = l->busbw < 0 ? i : l->busbw;
            else if (l->busbw_in < 0)
                l->busbw_in = i;
        } else if (strcmp(w, "#wrong") == 0 || strcmp(w, "wrong") == 0 ||
                   strcmp(w, "error") == 0) {
            if (l->time_in < 0)
                l->wrong = l->wrong < 0 ? i : l->wrong;
            else if (l->wrong_in < 0)
                l->wrong_in = i;
        }
    }
    l->n_cols = t->n;
    return l->size == 0 && l->time > l->size && l->algbw > l->time && l->busbw > l->algbw;
}

/* Parse "Rank N [Group G] Pid P on HOST device D [BUS] NAME" (the text
 * after '#'). Returns false when the line is something else. */
static bool parse_rank_line(const char *s, char *host, size_t host_cap, char *dev, size_t dev_cap)
{
    while (*s == ' ')
        s++;
    if (strncmp(s, "Rank", 4) != 0 || !isspace((unsigned char)s[4]))
        return false;
    const char *on = strstr(s, " on ");
    const char *device = strstr(s, " device ");
    if (!on || !device || device < on)
        return false;
    on += 4;
    while (*on == ' ')
        on++;
    size_t hl = strcspn(on, " ");
    snprintf(host, host_cap, "%.*s", (int)(hl < 63 ? hl : 63), on);
    const char *p = strchr(device, ']');
    if (p) {
        p++;
        while (*p == ' ')
            p++;
        snprintf(dev, dev_cap, "%s", p);
        size_t dl = strlen(dev);
        while (dl > 0 && isspace((unsigned char)dev[dl - 1]))
            dev[--dl] = '\0';
    }
    return true;
}

/* Next line of text: [*pos, end of line); returns its length without the
 * newline (and a trailing '\r'), or -1 at the end. */
static long next_line(const char *text, size_t len, size_t *pos, const char **line)
{
    if (*pos >= len)
        return -1;
    const char *s = text + *pos;
    const char *nl = memchr(s, '\n', len - *pos);
    size_t l = nl ? (size_t)(nl - s) : len - *pos;
    *pos += l + (nl ? 1 : 0);
    *line = s;
    if (l > 0 && s[l - 1] == '\r')
        l--;
    return (long)l;
}

static int parse_text(const char *text, size_t len, const char *name,
                      const nccltests_hint_t *hint, meas_coll_t *out, char *device,
                      size_t device_cap, err_t *err)
{
    char test[128] = "", version[64] = "", first_type[24] = "", buf[1024];
    hosts_t hosts = {NULL, 0, 0};
    int ranks = 0, lineno = 0, last_row_line = 0, footer_line = 0;
    bool have_layout = false, footer = false;
    layout_t lay;
    memset(&lay, 0, sizeof lay);
    tokens_t *t = malloc(sizeof *t);
    int *rows_line = calloc(MEAS_MAX_COLL_POINTS, sizeof *rows_line);
    int rc = ERR_OK;
    if (!t || !rows_line) {
        rc = err_set(err, ERR_RUNTIME, "out of memory reading %s", name);
        goto out;
    }
    size_t pos = 0;
    const char *line;
    long l;
    while ((l = next_line(text, len, &pos, &line)) >= 0) {
        lineno++;
        size_t cl = (size_t)l < sizeof buf - 1 ? (size_t)l : sizeof buf - 1;
        memcpy(buf, line, cl);
        buf[cl] = '\0';
        const char *s = buf;
        while (*s == ' ' || *s == '\t')
            s++;
        if (*s == '\0')
            continue;
        if (*s == '#') {
            s++;
            const char *k;
            char host[64], dev[96] = "";
            if ((k = strstr(s, "Collective test starting:"))) {
                k += strlen("Collective test starting:");
                while (*k == ' ')
                    k++;
                snprintf(test, sizeof test, "%s", k);
            } else if ((k = strstr(s, "nccl-tests version "))) {
                k += strlen("nccl-tests version ");
                snprintf(version, sizeof version, "nccl-tests %.*s", (int)strcspn(k, " "), k);
            } else if (parse_rank_line(s, host, sizeof host, dev, sizeof dev)) {
                ranks++;
                if ((rc = hosts_add(&hosts, host, err)))
                    goto out;
                if (device && device_cap && !device[0] && dev[0])
                    snprintf(device, device_cap, "%s", dev);
            } else if (strstr(s, "Out of bounds values")) {
                const char *c = strchr(s, ':');
                long bad = c ? strtol(c + 1, NULL, 10) : 0;
                if (bad > 0) {
                    rc = err_setf(err, ERR_INPUT, NULL, NULL,
                                  "%s:%d: the log reports %ld out-of-bounds values (the run "
                                  "failed its data check)",
                                  name, lineno, bad);
                    goto out;
                }
                footer_line = lineno;
            } else if (strstr(s, "Avg bus bandwidth")) {
                footer = true;
                footer_line = lineno;
            } else {
                tokens_t *h = t;
                tokenize(s, h);
                layout_t cand;
                if (read_layout(h, &cand)) {
                    if (have_layout) {
                        rc = err_setf(err, ERR_INPUT, NULL, NULL,
                                      "%s:%d: a second results table (one test per log)", name,
                                      lineno);
                        goto out;
                    }
                    lay = cand;
                    have_layout = true;
                }
            }
            continue;
        }
        if (!have_layout)
            continue; /* launcher output before the table */
        tokenize(s, t);
        if (t->n == 0 || !is_uint(t->tok[0]))
            continue; /* NCCL INFO and other output mixed in */
        if (footer_line) {
            rc = err_setf(err, ERR_INPUT, NULL, NULL,
                          "%s:%d: a result row after the log's footer (one test per log)", name,
                          lineno);
            goto out;
        }
        int expect = lay.n_cols + (lay.timestamp ? 1 : 0);
        if (t->n != expect) {
            rc = err_setf(err, ERR_INPUT, NULL, NULL, "%s:%d: expected %d columns, got %d", name,
                          lineno, expect, t->n);
            goto out;
        }
        double size, time_us, algbw, busbw, wrong = 0;
        int ti = lay.time, ai = lay.algbw, bi = lay.busbw, wi = lay.wrong;
        const char *bad = NULL;
        if (!parse_num(t->tok[0], &size))
            bad = "size";
        else if (!parse_num(t->tok[ti], &time_us))
            bad = "time";
        else if (ai < 0 || !parse_num(t->tok[ai], &algbw))
            bad = "algbw";
        else if (bi < 0 || !parse_num(t->tok[bi], &busbw))
            bad = "busbw";
        else if (wi >= 0 && strcmp(t->tok[wi], "N/A") != 0 && !parse_num(t->tok[wi], &wrong))
            bad = "#wrong";
        if (bad) {
            rc = err_setf(err, ERR_INPUT, NULL, NULL, "%s:%d: %s is not a number", name, lineno,
                          bad);
            goto out;
        }
        (void)algbw;
        if (wrong > 0) {
            rc = err_setf(err, ERR_INPUT, NULL, NULL,
                          "%s:%d: %.0f wrong elements reported (the run failed its data check)",
                          name, lineno, wrong);
            goto out;
        }
        if (lay.type >= 0) {
            if (!first_type[0])
                snprintf(first_type, sizeof first_type, "%s", t->tok[lay.type]);
            else if (strcmp(first_type, t->tok[lay.type]) != 0) {
                rc = err_setf(err, ERR_INPUT, NULL, NULL,
                              "%s:%d: data type %s after %s: import one type per log (-d)",
                              name, lineno, t->tok[lay.type], first_type);
                goto out;
            }
        }
        if (size == 0)
            continue; /* nothing moved: no bandwidth to fit */
        if ((rc = add_row(out, rows_line, lineno, size, time_us, busbw, name, err)))
            goto out;
        last_row_line = lineno;
    }
    if (!have_layout) {
        rc = err_setf(err, ERR_INPUT, name, NULL,
                      "no nccl-tests results table (expected a '#  size  count  type ... time  "
                      "algbw  busbw' header)");
        goto out;
    }
    if (out->n == 0) {
        rc = err_setf(err, ERR_INPUT, NULL, NULL, "%s:%d: the results table has no rows", name,
                      lineno);
        goto out;
    }
    if (!footer) {
        rc = err_setf(err, ERR_INPUT, NULL, NULL,
                      "%s:%d: the log ends before its '# Avg bus bandwidth' line (truncated?)",
                      name, last_row_line > lineno ? last_row_line : lineno);
        goto out;
    }
    if ((rc = resolve_op(name, test, name, &out->op, err)))
        goto out;
    rc = finish(name, hint, ranks, hosts.n, device, version, rows_line, out, err);
out:
    free(hosts.names);
    free(t);
    free(rows_line);
    return rc;
}

/* ------------------------------------------------ JSON logs */

static int parse_json(const char *text, size_t len, const char *name, const nccltests_hint_t *hint,
                      meas_coll_t *out, char *device, size_t device_cap, err_t *err)
{
    cJSON *root = NULL;
    hosts_t hosts = {NULL, 0, 0};
    int rc = json_parse_text(text, len, name, &root, err);
    if (rc)
        return rc;
    json_ctx_t top = json_ctx_root(name);
    const cJSON *results, *config, *args, *devices = NULL;
    int nthreads = 1, ngpus = 1;
    char program[256] = "", version[64] = "";
    if ((rc = json_expect_object(root, &top, err)) ||
        (rc = json_get_array(root, "results", &top, JSON_REQUIRED, &results, err)) ||
        (rc = json_get_object(root, "config", &top, JSON_OPTIONAL, &config, err)) ||
        (rc = json_get_array(root, "args", &top, JSON_OPTIONAL, &args, err)))
        goto out;
    const cJSON *ver = cJSON_GetObjectItemCaseSensitive(root, "nccl_version");
    if (cJSON_IsNumber(ver) && ver->valueint > 0) {
        int v = ver->valueint; /* NCCL_VERSION_CODE: 2.9 on x 10000, earlier x 1000 */
        if (v >= 10000)
            snprintf(version, sizeof version, "NCCL %d.%d.%d", v / 10000, (v % 10000) / 100,
                     v % 100);
        else
            snprintf(version, sizeof version, "NCCL %d.%d.%d", v / 1000, (v % 1000) / 100,
                     v % 100);
    }
    if (args && cJSON_GetArraySize(args) > 0 && cJSON_IsString(cJSON_GetArrayItem(args, 0)))
        snprintf(program, sizeof program, "%s",
                 base_name(cJSON_GetArrayItem(args, 0)->valuestring));
    json_ctx_t cctx = json_ctx_member(&top, "config");
    if (config &&
        ((rc = json_get_int(config, "nthreads", &cctx, JSON_OPTIONAL, 1, 1 << 16, &nthreads, err)) ||
         (rc = json_get_int(config, "ngpus", &cctx, JSON_OPTIONAL, 1, 1 << 16, &ngpus, err)) ||
         (rc = json_get_array(config, "devices", &cctx, JSON_OPTIONAL, &devices, err))))
        goto out;
    int log_ranks = 0;
    if (devices) {
        json_ctx_t dctx = json_ctx_member(&cctx, "devices");
        int nd = cJSON_GetArraySize(devices);
        for (int i = 0; i < nd; i++) {
            const cJSON *d = cJSON_GetArrayItem(devices, i);
            json_ctx_t ic = json_ctx_index(&dctx, i);
            char host[64] = "", info[96] = "";
            if ((rc = json_expect_object(d, &ic, err)) ||
                (rc = json_get_string(d, "hostname", &ic, JSON_OPTIONAL, host, sizeof host, err)) ||
                (rc = json_get_string(d, "device_info", &ic, JSON_OPTIONAL, info, sizeof info,
                                      err)))
                goto out;
            if ((rc = hosts_add(&hosts, host, err)))
                goto out;
            if (device && device_cap && !device[0] && info[0])
                snprintf(device, device_cap, "%s", info);
        }
        /* one devices entry per process, each driving nthreads x ngpus ranks */
        log_ranks = nd * nthreads * ngpus;
    }
    json_ctx_t rctx = json_ctx_member(&top, "results");
    char first_type[24] = "";
    for (int i = 0; i < cJSON_GetArraySize(results); i++) {
        const cJSON *r = cJSON_GetArrayItem(results, i), *res;
        json_ctx_t ic = json_ctx_index(&rctx, i);
        long long size;
        char type[24] = "";
        if ((rc = json_expect_object(r, &ic, err)) ||
            (rc = json_get_long(r, "size", &ic, JSON_REQUIRED, 0, 1LL << 53, &size, err)) ||
            (rc = json_get_string(r, "type", &ic, JSON_OPTIONAL, type, sizeof type, err)))
            goto out;
        const char *which = "out_of_place";
        res = cJSON_GetObjectItemCaseSensitive(r, which);
        if (!cJSON_IsObject(res)) {
            which = "in_place";
            if ((rc = json_get_object(r, which, &ic, JSON_REQUIRED, &res, err)))
                goto out;
        }
        json_ctx_t pctx = json_ctx_member(&ic, which);
        double time_us = 0, busbw = 0, wrong = 0;
        /* "cpu_time" when nccl-tests ran with -C (report CPU time) */
        const char *tkey = cJSON_GetObjectItemCaseSensitive(res, "cpu_time") ? "cpu_time" : "time";
        if ((rc = json_get_double(res, tkey, &pctx, JSON_REQUIRED, 1e-9, 1e15, &time_us, err)) ||
            (rc = json_get_double(res, "bus_bw", &pctx, JSON_REQUIRED, 0, 1e9, &busbw, err)))
            goto out;
        const cJSON *nw = cJSON_GetObjectItemCaseSensitive(res, "nwrong");
        if (nw && !cJSON_IsNull(nw) &&
            (rc = json_get_double(res, "nwrong", &pctx, JSON_REQUIRED, 0, 1e18, &wrong, err)))
            goto out;
        if (wrong > 0) {
            rc = err_setf(err, ERR_INPUT, name, pctx.path,
                          "nwrong: %.0f wrong elements (the run failed its data check)", wrong);
            goto out;
        }
        if (type[0]) {
            if (!first_type[0])
                snprintf(first_type, sizeof first_type, "%s", type);
            else if (strcmp(type, first_type) != 0) {
                rc = err_setf(err, ERR_INPUT, name, ic.path,
                              "type: %s after %s: import one type per log (-d)", type,
                              first_type);
                goto out;
            }
        }
        if (size == 0)
            continue;
        if ((rc = add_row(out, NULL, 0, (double)size, time_us, busbw, name, err))) {
            /* name the JSON element instead of a line */
            err_readdress(err, name, ic.path);
            goto out;
        }
    }
    if (out->n == 0) {
        rc = err_setf(err, ERR_INPUT, name, "results", "no results with a size above 0");
        goto out;
    }
    if ((rc = resolve_op(name, program, name, &out->op, err)))
        goto out;
    rc = finish(name, hint, log_ranks, hosts.n, device, version, NULL, out, err);
out:
    free(hosts.names);
    cJSON_Delete(root);
    return rc;
}

/* ------------------------------------------------ entry points */

int nccltests_parse(const char *text, size_t len, const char *name, const nccltests_hint_t *hint,
                    meas_coll_t *out, char *device, size_t device_cap, err_t *err)
{
    memset(out, 0, sizeof *out);
    snprintf(out->algo, sizeof out->algo, "default");
    if (device && device_cap)
        device[0] = '\0';
    size_t i = 0;
    while (i < len && isspace((unsigned char)text[i]))
        i++;
    if (i == len)
        return err_setf(err, ERR_INPUT, name, NULL, "empty log");
    if (text[i] == '{') {
        int rc = parse_json(text, len, name, hint, out, device, device_cap, err);
        if (rc == ERR_OK) {
            /* an NCCL_ALGO in the recorded environment names the algorithm */
            static const char key[] = "\"NCCL_ALGO=";
            const size_t kl = sizeof key - 1;
            for (size_t p = 0; p + kl <= len; p++) {
                if (memcmp(text + p, key, kl) != 0)
                    continue;
                size_t a = p + kl, al = 0;
                while (a + al < len && al < sizeof out->algo - 1 &&
                       !strchr("\",;", text[a + al]))
                    al++;
                if (al == 0)
                    break;
                snprintf(out->algo, sizeof out->algo, "%.*s", (int)al, text + a);
                for (char *c = out->algo; *c; c++)
                    *c = (char)tolower((unsigned char)*c);
                break;
            }
        }
        return rc;
    }
    return parse_text(text, len, name, hint, out, device, device_cap, err);
}

int nccltests_load(const char *path, const nccltests_hint_t *hint, meas_coll_t *out,
                   char *device, size_t device_cap, err_t *err)
{
    char *text = NULL;
    size_t len = 0;
    memset(out, 0, sizeof *out);
    int rc = fileio_read_all(path, &text, &len, err);
    if (rc)
        return rc;
    rc = nccltests_parse(text, len, path, hint, out, device, device_cap, err);
    free(text);
    return rc;
}
