#include "calibrate/nccltests.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common/fileio.h"
#include "common/json.h"

#define MAX_COLS 48
#define MAX_TOKEN 96
#define MAX_RANK_ID (1 << 20) /* rank numbers tracked for distinct counting */

/* ------------------------------------------------ collectives */

/* How nccl-tests turns algbw (size / time) into busbw for n ranks
 * (nccl-tests doc/PERFORMANCE.md and each src/<test>.cu GetBw). */
typedef enum {
    BUS_2NM1_N, /* 2(n-1)/n: all_reduce */
    BUS_NM1_N,  /* (n-1)/n: all_gather, reduce_scatter, alltoall, gather, scatter, hypercube */
    BUS_ONE,    /* 1: broadcast, reduce, sendrecv */
} bus_kind_t;

typedef struct {
    const char *needle; /* as found in a binary, test or file name (lower case) */
    const char *name;   /* canonical nccl-tests name */
    int op;             /* coll_op_t, or -1: a collective scaleplan does not model */
    bus_kind_t bus;
} coll_def_t;

/* Longer names first: "reduce_scatter" before "reduce", "all_gather"
 * before "gather". */
static const coll_def_t coll_defs[] = {
    {"reduce_scatter", "reduce_scatter", COLL_REDUCE_SCATTER, BUS_NM1_N},
    {"reducescatter", "reduce_scatter", COLL_REDUCE_SCATTER, BUS_NM1_N},
    {"all_reduce", "all_reduce", COLL_ALL_REDUCE, BUS_2NM1_N},
    {"allreduce", "all_reduce", COLL_ALL_REDUCE, BUS_2NM1_N},
    {"all_gather", "all_gather", COLL_ALL_GATHER, BUS_NM1_N},
    {"allgather", "all_gather", COLL_ALL_GATHER, BUS_NM1_N},
    {"alltoallv", "alltoallv", -1, BUS_NM1_N},
    {"alltoall", "alltoall", COLL_ALL_TO_ALL, BUS_NM1_N},
    {"all_to_all", "alltoall", COLL_ALL_TO_ALL, BUS_NM1_N},
    {"sendrecv", "sendrecv", COLL_SEND_RECV, BUS_ONE},
    {"send_recv", "sendrecv", COLL_SEND_RECV, BUS_ONE},
    {"broadcast", "broadcast", COLL_BROADCAST, BUS_ONE},
    {"bcast", "broadcast", COLL_BROADCAST, BUS_ONE},
    {"hypercube", "hypercube", -1, BUS_NM1_N},
    {"reduce", "reduce", -1, BUS_ONE},
    {"gather", "gather", -1, BUS_NM1_N},
    {"scatter", "scatter", -1, BUS_NM1_N},
};

static const char *base_name(const char *path)
{
    const char *s = strrchr(path, '/');
    return s ? s + 1 : path;
}

/* The collective named in text (a test name, program path or file name),
 * case-insensitive; NULL when none is named. */
static const coll_def_t *coll_from_name(const char *text)
{
    char low[256];
    size_t n = strlen(text);
    if (n >= sizeof low)
        n = sizeof low - 1;
    for (size_t i = 0; i < n; i++)
        low[i] = (char)tolower((unsigned char)text[i]);
    low[n] = '\0';
    for (size_t i = 0; i < sizeof coll_defs / sizeof coll_defs[0]; i++)
        if (strstr(low, coll_defs[i].needle))
            return &coll_defs[i];
    return NULL;
}

static double bus_factor(bus_kind_t k, int n)
{
    if (n <= 1)
        return k == BUS_ONE ? 1.0 : 0.0;
    return k == BUS_2NM1_N ? 2.0 * (n - 1) / n : k == BUS_NM1_N ? (double)(n - 1) / n : 1.0;
}

/* A group size from busbw/algbw (2(n-1)/n or (n-1)/n); 0 when the ratio
 * cannot tell (factor 1, or not near an integer n >= 2). */
static int ranks_from_ratio(bus_kind_t k, double ratio)
{
    double n;
    if (k == BUS_2NM1_N && ratio < 1.999)
        n = 2 / (2 - ratio);
    else if (k == BUS_NM1_N && ratio < 0.9995)
        n = 1 / (1 - ratio);
    else
        return 0;
    long r = lround(n);
    if (r < 2 || fabs(n - (double)r) > 0.15)
        return 0;
    return (int)r;
}

static void add_note(nccltests_reading_t *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void add_note(nccltests_reading_t *r, const char *fmt, ...)
{
    if (r->n_notes >= NCCLTESTS_MAX_NOTES)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->notes[r->n_notes++], NCCLTESTS_NOTE_MAX, fmt, ap);
    va_end(ap);
}

/* Which collective the log measured: its test name, else an nccl-tests
 * command line pasted with it, else the caller's --collective, else the
 * file name. A collective the log names that contradicts --collective is
 * refused; so is a log nothing names. */
static int resolve_collective(const char *name, const char *test, const char *program,
                              const nccltests_hint_t *hint, nccltests_reading_t *r,
                              const coll_def_t **out, err_t *err)
{
    const coll_def_t *log = test[0] ? coll_from_name(test) : NULL, *given = NULL;
    bool from_program = false;
    if (!log && program[0] && (log = coll_from_name(program)))
        from_program = true;
    if (hint && hint->collective && hint->collective[0]) {
        if (!(given = coll_from_name(hint->collective)))
            return err_setf(err, ERR_INPUT, NULL, "--collective",
                            "unknown nccl-tests collective '%s' (all_reduce, all_gather, "
                            "reduce_scatter, broadcast, reduce, alltoall, sendrecv, scatter, "
                            "gather, hypercube)",
                            hint->collective);
        if (log && strcmp(log->name, given->name) != 0)
            return err_setf(err, ERR_INPUT, name, NULL,
                            "the log measured %s (its %s) but --collective says %s", log->name,
                            from_program ? "command line" : "test name", given->name);
    }
    *out = log ? log : given;
    if (!*out && (*out = coll_from_name(base_name(name))))
        add_note(r, "%s: collective %s taken from the file name", base_name(name), (*out)->name);
    else if (log && from_program)
        add_note(r, "%s: collective %s taken from the command line pasted with the table",
                 base_name(name), log->name);
    if (!*out)
        return err_setf(err, ERR_INPUT, name, NULL,
                        "cannot tell which collective this log measured (no '# Collective test "
                        "starting' line or *_perf command): pass --collective NAME");
    return ERR_OK;
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

/* What a log says of its group, for settle_ranks. */
typedef struct {
    int listed;    /* distinct ranks in "#  Rank" lines or JSON devices; 0 = none */
    int nccl_info; /* largest "nranks N" of NCCL INFO lines; 0 = none */
    int command;   /* ranks the pasted command line starts; 0 = cannot tell */
    int nodes;     /* distinct hosts; 0 = none */
} group_facts_t;

/* The group size: listed ranks, else --ranks, else NCCL's nranks, else
 * the busbw/algbw ratio of the widest row; notes say which was inferred. */
static int settle_ranks(const char *name, const nccltests_hint_t *hint, const group_facts_t *g,
                        const coll_def_t *def, nccltests_reading_t *r, int *n, err_t *err)
{
    const meas_coll_t *s = &r->series;
    *n = g->listed;
    if (hint && hint->n_ranks > 0) {
        if (g->listed > 0 && g->listed != hint->n_ranks)
            return err_setf(err, ERR_INPUT, name, NULL,
                            "the log lists %d ranks but --ranks says %d", g->listed,
                            hint->n_ranks);
        *n = hint->n_ranks;
    }
    if (*n > 0)
        return ERR_OK;
    if (g->nccl_info > 0) {
        *n = g->nccl_info;
        add_note(r, "%s: %d ranks taken from NCCL's 'nranks' lines (no '#  Rank' lines)",
                 base_name(name), *n);
        return ERR_OK;
    }
    if (g->command > 0) {
        *n = g->command;
        add_note(r, "%s: %d ranks taken from the pasted command line (launcher -np x -t x -g; "
                    "no '#  Rank' lines)",
                 base_name(name), *n);
        return ERR_OK;
    }
    int wide = 0; /* the widest row carries the most digits of the ratio */
    for (int i = 1; i < s->n; i++)
        if (s->busbw_gbs[i] > s->busbw_gbs[wide])
            wide = i;
    double algbw = s->bytes[wide] / s->time_us[wide] / 1e3;
    /* busbw is printed with 2 decimals: below 1 GB/s the ratio has too few
     * digits to tell 8 ranks from 16 */
    *n = algbw > 0 && s->busbw_gbs[wide] >= 1.0
             ? ranks_from_ratio(def->bus, s->busbw_gbs[wide] / algbw)
             : 0;
    if (*n <= 0)
        return err_setf(err, ERR_INPUT, name, NULL,
                        "the log does not list its ranks ('#  Rank' lines) and its "
                        "busbw/algbw ratio does not tell them: pass --ranks N");
    add_note(r, "%s: %d ranks inferred from busbw/algbw %.3f (no '#  Rank' lines; --ranks N "
                "overrides)",
             base_name(name), *n, s->busbw_gbs[wide] / algbw);
    return ERR_OK;
}

/* Settle the group size and node count, check every row's busbw against
 * the nccl-tests definition, and name the source. rows_line[i] is the
 * line of row i in a text log (NULL for JSON). */
static int finish(const char *name, const nccltests_hint_t *hint, const group_facts_t *g,
                  const char *version, const int *rows_line, const coll_def_t *def,
                  nccltests_reading_t *r, err_t *err)
{
    meas_coll_t *out = &r->series;
    snprintf(r->collective, sizeof r->collective, "%s", def->name);
    r->modeled = def->op >= 0;
    out->op = def->op >= 0 ? (coll_op_t)def->op : COLL_ALL_REDUCE;
    int n, rc;
    if ((rc = settle_ranks(name, hint, g, def, r, &n, err)))
        return rc;
    int nodes = g->nodes > 0 ? g->nodes : 1;
    if (hint && hint->nodes > 0)
        nodes = hint->nodes;
    else if (g->nodes == 0 && n > 1)
        add_note(r, "%s: 1 node assumed for %d ranks (no host names in the log; --nodes N "
                    "overrides)",
                 base_name(name), n);
    if (nodes > n)
        return err_setf(err, ERR_INPUT, name, NULL, "%d nodes for %d ranks is impossible", nodes,
                        n);
    out->n_ranks = n;
    out->nodes = nodes;
    double factor = bus_factor(def->bus, n);
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
                            "%s%s: busbw %.2f GB/s does not match %d ranks of %s (size/time x "
                            "%.4g = %.2f); pass --ranks N if the group size is wrong",
                            name, where, got, n, def->name, factor, expect);
        }
    }
    const char *dev = r->device;
    snprintf(out->source, sizeof out->source,
             "nccl-tests log %s (%s%s%d rank%s on %d node%s%s%s)", base_name(name), dev,
             dev[0] ? ", " : "", n, n == 1 ? "" : "s", nodes, nodes == 1 ? "" : "s",
             version && version[0] ? ", " : "", version ? version : "");
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
    int n; /* tokens stored */
    char tok[MAX_COLS + 4][MAX_TOKEN];
    int too_many; /* tokens beyond those stored */
} tokens_t;

static void tokenize(const char *s, tokens_t *t)
{
    t->n = 0;
    t->too_many = 0;
    while (*s) {
        while (*s == ' ' || *s == '\t' || *s == '\r')
            s++;
        if (!*s)
            break;
        size_t len = strcspn(s, " \t\r");
        if (t->n < MAX_COLS + 4) {
            size_t c = len < MAX_TOKEN - 1 ? len : MAX_TOKEN - 1;
            memcpy(t->tok[t->n], s, c);
            t->tok[t->n][c] = '\0';
            t->n++;
        } else {
            t->too_many++;
        }
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

/* The column layout of the results table. Columns from the first time on
 * are counted from the right end of a row (tail of them), so blank redop
 * or root cells in front (alltoall, older versions) do not shift them. */
typedef struct {
    int n_cols;   /* header tokens */
    int lead;     /* columns before the first time: size count type [redop root] */
    int blankable; /* of those, how many may be blank (redop, root) */
    int tail;     /* tokens from the first time to the end of a row */
    int type;     /* column of the data type, -1 none */
    int time, algbw, busbw, wrong;             /* out-of-place, offsets from the first time */
    int time_in, algbw_in, busbw_in, wrong_in; /* in-place, -1 none */
    bool deviation; /* older versions' "error" column: the largest deviation
                       (2e-06), not a count; the footer counts failures */
} layout_t;

static void layout_clear(layout_t *l)
{
    memset(l, 0, sizeof *l);
    l->type = -1;
    l->time = l->algbw = l->busbw = l->wrong = -1;
    l->time_in = l->algbw_in = l->busbw_in = l->wrong_in = -1;
}

/* Index (from the first time column) of one of the four columns of a
 * block. */
static void place_block_col(layout_t *l, const char *w, int off, int times)
{
    bool in = times >= 2;
    int *algbw = in ? &l->algbw_in : &l->algbw, *busbw = in ? &l->busbw_in : &l->busbw,
        *wrong = in ? &l->wrong_in : &l->wrong;
    if (strcmp(w, "algbw") == 0 && *algbw < 0)
        *algbw = off;
    else if (strcmp(w, "busbw") == 0 && *busbw < 0)
        *busbw = off;
    else if ((strcmp(w, "#wrong") == 0 || strcmp(w, "wrong") == 0 || strcmp(w, "error") == 0) &&
             *wrong < 0) {
        *wrong = off;
        l->deviation = strcmp(w, "error") == 0;
    }
}

static bool read_layout(const tokens_t *t, layout_t *l)
{
    layout_clear(l);
    if (t->n > MAX_COLS || t->too_many || t->n < 4 || strcmp(t->tok[0], "size") != 0)
        return false;
    int first_time = -1, times = 0, extra = 0;
    for (int i = 1; i < t->n; i++) {
        const char *w = t->tok[i];
        if (first_time < 0) {
            if (strcmp(w, "type") == 0)
                l->type = i;
            else if (strcmp(w, "redop") == 0 || strcmp(w, "root") == 0)
                l->blankable++;
        }
        if (strcmp(w, "time") == 0 || strcmp(w, "cputime") == 0) {
            if (first_time < 0)
                first_time = i;
            times++;
            if (times == 1)
                l->time = i - first_time;
            else if (times == 2)
                l->time_in = i - first_time;
        } else if (strcmp(w, "timestamp") == 0) {
            extra++; /* a date and a clock: two tokens in a row */
        } else if (first_time >= 0) {
            place_block_col(l, w, i - first_time, times);
        }
    }
    l->n_cols = t->n;
    l->lead = first_time;
    l->tail = first_time < 0 ? 0 : t->n - first_time + extra;
    return first_time > 0 && l->algbw > l->time && l->busbw > l->algbw;
}

/* The layout nccl-tests prints, for a table pasted without its column
 * header: a row of 10-13 tokens has size, count, type, up to two of redop
 * and root, then two blocks of time algbw busbw #wrong; 6-9 tokens one
 * block. */
static bool implicit_layout(const tokens_t *t, layout_t *l)
{
    layout_clear(l);
    int tail = t->n >= 10 && t->n <= 13 ? 8 : t->n >= 6 && t->n <= 9 ? 4 : 0;
    if (!tail || !is_uint(t->tok[0]) || !is_uint(t->tok[1]) ||
        !isalpha((unsigned char)t->tok[2][0]))
        return false;
    l->lead = t->n - tail;
    l->n_cols = 3 + 2 + tail; /* size count type redop root */
    l->blankable = 2;
    l->tail = tail;
    l->type = 2;
    l->time = 0, l->algbw = 1, l->busbw = 2, l->wrong = 3;
    if (tail == 8)
        l->time_in = 4, l->algbw_in = 5, l->busbw_in = 6, l->wrong_in = 7;
    double v;
    for (int i = 0; i < tail; i++) {
        const char *w = t->tok[t->n - tail + i];
        if (!parse_num(w, &v) && !((i % 4) == 3 && strcmp(w, "N/A") == 0))
            return false;
    }
    return true;
}

/* Parse "Rank N [Group G] Pid P on HOST device D [BUS] NAME" (the text
 * after '#'). Returns false when the line is something else. */
static bool parse_rank_line(const char *s, long *rank, char *host, size_t host_cap, char *dev,
                            size_t dev_cap)
{
    while (*s == ' ')
        s++;
    if (strncmp(s, "Rank", 4) != 0 || !isspace((unsigned char)s[4]))
        return false;
    char *after;
    *rank = strtol(s + 4, &after, 10);
    const char *on = strstr(s, " on ");
    const char *device = strstr(s, " device ");
    if (after == s + 4 || *rank < 0 || !on || !device || device < on)
        return false;
    on += 4;
    while (*on == ' ')
        on++;
    size_t hl = strcspn(on, " ");
    snprintf(host, host_cap, "%.*s", (int)(hl < 63 ? hl : 63), on);
    const char *p = strchr(device, ']');
    dev[0] = '\0';
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

/* A launcher's label in front of a line: mpirun --tag-output
 * "[1,0]<stdout>:", "[0]" or "[rank0]:" (torchrun, pdsh-style), srun -l
 * "0: ". Copies the label's text to lab ("" when none) and returns the
 * line after it. */
static const char *strip_label(const char *s, char *lab, size_t cap)
{
    const char *p = s;
    lab[0] = '\0';
    while (*p == ' ')
        p++;
    if (*p == '[') {
        const char *q = p + 1;
        while (isalpha((unsigned char)*q))
            q++;
        const char *digits = q;
        while (isdigit((unsigned char)*q) || *q == ',')
            q++;
        if (q == digits || *q != ']' || !isdigit((unsigned char)*digits))
            return s;
        snprintf(lab, cap, "%.*s", (int)(q - (p + 1)), p + 1);
        q++;
        if (*q == '<') { /* <stdout>: or <stderr>: */
            const char *gt = strchr(q, '>');
            if (!gt || gt - q > 8)
                return s;
            q = gt + 1;
        }
        if (*q == ':')
            q++;
        return q;
    }
    const char *q = p;
    while (isdigit((unsigned char)*q))
        q++;
    if (q > p && q - p < 8 && *q == ':' && (q[1] == ' ' || q[1] == '\0')) {
        snprintf(lab, cap, "%.*s", (int)(q - p), p);
        return q + 1;
    }
    return s;
}

/* Everything read so far from a text log. */
typedef struct {
    const char *name;
    const nccltests_hint_t *hint;
    nccltests_reading_t *r;
    tokens_t *t;
    int *rows_line;
    char test[128], program[128], version[64], first_type[MAX_TOKEN];
    char label[32];     /* the launcher label whose table is kept */
    bool labelled;      /* label holds a kept label */
    int skipped_labels; /* lines of other labels' tables skipped */
    hosts_t hosts;
    unsigned char *rank_seen; /* one flag per rank number, grown as rank lines come */
    long rank_cap;
    group_facts_t group;
    bool have_layout, implicit, footer;
    bool continued; /* the previous line ended with '\\' */
    int lineno, footer_line, last_row_line;
    layout_t lay;
} text_log_t;

/* The count after an option at tokens i (-g 8, -g8); 0 when none. */
static long option_count(const tokens_t *t, int i, const char *opt, const char *long_opt)
{
    const char *w = t->tok[i];
    size_t ol = strlen(opt);
    const char *num = NULL;
    if ((strcmp(w, opt) == 0 || (long_opt && strcmp(w, long_opt) == 0)) && i + 1 < t->n)
        num = t->tok[i + 1];
    else if (strncmp(w, opt, ol) == 0 && isdigit((unsigned char)w[ol]))
        num = w + ol;
    return num && is_uint(num) && strlen(num) < 8 ? strtol(num, NULL, 10) : 0;
}

static bool is_launcher(const char *w)
{
    static const char *const names[] = {"mpirun", "mpiexec", "orterun", "srun"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (strcmp(base_name(w), names[i]) == 0)
            return true;
    return false;
}

/* The ranks a command starts: the launcher's -np (1 without a launcher)
 * x -t threads x -g GPUs; 0 when a launcher gives no -np. */
static int command_ranks(const tokens_t *t, int perf)
{
    long procs = 1, threads = 1, gpus = 1, v;
    bool launcher = false, np = false;
    for (int i = 0; i < perf; i++) {
        if (is_launcher(t->tok[i]))
            launcher = true;
        else if (launcher && ((v = option_count(t, i, "-np", "--np")) ||
                              (v = option_count(t, i, "-n", "--ntasks")))) {
            procs = v;
            np = true;
        }
    }
    for (int i = perf + 1; i < t->n; i++) {
        if ((v = option_count(t, i, "-g", "--ngpus")))
            gpus = v;
        else if ((v = option_count(t, i, "-t", "--nthreads")))
            threads = v;
    }
    long n = procs * threads * gpus;
    bool command = launcher || (perf + 1 < t->n && t->tok[perf + 1][0] == '-');
    return !command || (launcher && !np) || n >= MAX_RANK_ID ? 0 : (int)n;
}

/* The binary of an nccl-tests command line pasted with the log
 * ("$ mpirun -np 16 ... ./build/all_gather_perf -b 8 -g 1") and the ranks
 * it starts (not when the command continues from an earlier line, whose
 * options are not seen). */
static void note_program(text_log_t *x, const char *s)
{
    bool continued = x->continued;
    size_t len = strlen(s);
    x->continued = len > 0 && s[len - 1] == '\\';
    if (x->program[0] || x->have_layout || strstr(s, "Collective test"))
        return;
    tokenize(s, x->t);
    for (int i = 0; i < x->t->n; i++) {
        const char *w = base_name(x->t->tok[i]);
        if (strstr(w, "_perf") && coll_from_name(w)) {
            snprintf(x->program, sizeof x->program, "%s", w);
            x->group.command = continued ? 0 : command_ranks(x->t, i);
            return;
        }
    }
}

/* NCCL's "comm 0x.. rank R nranks N cudaDev .." lines give the group size
 * when the log has no rank lines. */
static void note_nccl_info(text_log_t *x, const char *s)
{
    const char *k = strstr(s, " nranks ");
    if (!k || !strstr(s, "NCCL INFO"))
        return;
    long n = strtol(k + 8, NULL, 10);
    if (n > x->group.nccl_info && n < MAX_RANK_ID)
        x->group.nccl_info = (int)n;
}

static int on_rank_line(text_log_t *x, long rank, const char *host, const char *dev, err_t *err)
{
    if (rank >= MAX_RANK_ID)
        return err_setf(err, ERR_INPUT, NULL, NULL, "%s:%d: rank %ld is beyond %d", x->name,
                        x->lineno, rank, MAX_RANK_ID);
    if (rank >= x->rank_cap) {
        long cap = rank + 64 < MAX_RANK_ID ? rank + 64 : MAX_RANK_ID;
        unsigned char *grown = realloc(x->rank_seen, (size_t)cap);
        if (!grown)
            return err_set(err, ERR_RUNTIME, "out of memory reading %s", x->name);
        memset(grown + x->rank_cap, 0, (size_t)(cap - x->rank_cap));
        x->rank_seen = grown;
        x->rank_cap = cap;
    }
    if (!x->rank_seen[rank]) {
        x->rank_seen[rank] = 1;
        x->group.listed++;
    }
    int rc = hosts_add(&x->hosts, host, err);
    if (!rc && !x->r->device[0] && dev[0])
        snprintf(x->r->device, sizeof x->r->device, "%s", dev);
    return rc;
}

/* A "#" line: test name, version, rank lines, the column header, the
 * footer. */
static int on_comment(text_log_t *x, const char *s, err_t *err)
{
    const char *k;
    char host[64], dev[96];
    long rank;
    if ((k = strstr(s, "Collective test starting:")) || (k = strstr(s, "Collective test concluded:"))) {
        k = strchr(k, ':') + 1;
        while (*k == ' ')
            k++;
        if (!x->test[0]) /* the opening line, else the closing one of a cut paste */
            snprintf(x->test, sizeof x->test, "%s", k);
    } else if ((k = strstr(s, "nccl-tests version "))) {
        k += strlen("nccl-tests version ");
        snprintf(x->version, sizeof x->version, "nccl-tests %.*s", (int)strcspn(k, " "), k);
    } else if (parse_rank_line(s, &rank, host, sizeof host, dev, sizeof dev)) {
        return on_rank_line(x, rank, host, dev, err);
    } else if (strstr(s, "Out of bounds values")) {
        const char *c = strchr(s, ':');
        long bad = c ? strtol(c + 1, NULL, 10) : 0;
        if (bad > 0)
            return err_setf(err, ERR_INPUT, NULL, NULL,
                            "%s:%d: the log reports %ld out-of-bounds values (the run "
                            "failed its data check)",
                            x->name, x->lineno, bad);
        x->footer_line = x->lineno;
    } else if (strstr(s, "Avg bus bandwidth")) {
        x->footer = true;
        x->footer_line = x->lineno;
    } else {
        layout_t cand;
        tokenize(s, x->t);
        if (read_layout(x->t, &cand)) {
            if (x->have_layout && x->r->series.n > 0)
                return err_setf(err, ERR_INPUT, NULL, NULL,
                                "%s:%d: a second results table (one test per log: split the "
                                "paste into one file per table)",
                                x->name, x->lineno);
            x->lay = cand; /* a header repeated before any row: the same table */
            x->have_layout = true;
        }
    }
    return ERR_OK;
}

/* Check the four cells of one block (time algbw busbw #wrong): numbers,
 * #wrong may be N/A. A #wrong count above 0 in the block imported fails
 * the run's data check (a deviation, 2e-06, is left to the footer's
 * count; an implicit layout tells them apart by the cell's form). */
static int check_block(const text_log_t *x, const tokens_t *t, int base, const int idx[4],
                       bool imported, double val[4], err_t *err)
{
    static const char *const what[4] = {"time", "algbw", "busbw", "#wrong"};
    for (int c = 0; c < 4; c++) {
        val[c] = 0;
        if (idx[c] < 0)
            continue;
        const char *w = t->tok[base + idx[c]];
        if (c == 3 && strcmp(w, "N/A") == 0)
            continue;
        if (!parse_num(w, &val[c]))
            return err_setf(err, ERR_INPUT, NULL, NULL, "%s:%d: %s is not a number", x->name,
                            x->lineno, what[c]);
    }
    const char *w = idx[3] >= 0 ? t->tok[base + idx[3]] : "0";
    bool deviation = x->lay.deviation || (x->implicit && strpbrk(w, ".eE"));
    if (imported && !deviation && val[3] > 0)
        return err_setf(err, ERR_INPUT, NULL, NULL,
                        "%s:%d: %.0f wrong elements reported (the run failed its data check)",
                        x->name, x->lineno, val[3]);
    return ERR_OK;
}

/* One result row: size, type, then the blocks counted from the right. */
static int on_row(text_log_t *x, err_t *err)
{
    const tokens_t *t = x->t;
    const layout_t *l = &x->lay;
    if (x->footer_line)
        return err_setf(err, ERR_INPUT, NULL, NULL,
                        "%s:%d: a result row after the log's footer (one test per log)", x->name,
                        x->lineno);
    int lead = t->n - l->tail;
    if (t->too_many || lead > l->lead || lead < l->lead - l->blankable || lead < 1)
        return err_setf(err, ERR_INPUT, NULL, NULL, "%s:%d: expected %d columns, got %d",
                        x->name, x->lineno, l->lead + l->tail, t->n);
    double size, out[4], in[4];
    int oi[4] = {l->time, l->algbw, l->busbw, l->wrong};
    int ii[4] = {l->time_in, l->algbw_in, l->busbw_in, l->wrong_in};
    int rc;
    if (!parse_num(t->tok[0], &size))
        return err_setf(err, ERR_INPUT, NULL, NULL, "%s:%d: size is not a number", x->name,
                        x->lineno);
    if ((rc = check_block(x, t, lead, oi, true, out, err)) ||
        (rc = check_block(x, t, lead, ii, false, in, err)))
        return rc;
    if (l->type >= 0 && l->type < lead) {
        const char *type = t->tok[l->type];
        if (!x->first_type[0])
            snprintf(x->first_type, sizeof x->first_type, "%s", type);
        else if (strcmp(x->first_type, type) != 0)
            return err_setf(err, ERR_INPUT, NULL, NULL,
                            "%s:%d: data type %s after %s: import one type per log (-d)",
                            x->name, x->lineno, type, x->first_type);
    }
    /* a row short of a blank redop or root: its algbw must be size/time
     * (nccl-tests' definition for every collective), or the cells were
     * read shifted (a row cut short) */
    if (size > 0 && lead < l->lead && fabs(size / out[0] / 1e3 - out[1]) > 0.01 * out[1] + 0.006)
        return err_setf(err, ERR_INPUT, NULL, NULL,
                        "%s:%d: expected %d columns, got %d (algbw %.2f is not size/time)",
                        x->name, x->lineno, l->lead + l->tail, t->n, out[1]);
    if (size == 0)
        return ERR_OK; /* nothing moved: no bandwidth to fit */
    x->last_row_line = x->lineno;
    return add_row(&x->r->series, x->rows_line, x->lineno, size, out[0], out[2], x->name, err);
}

/* A size pasted with digit groups (1_073_741_824, as some write them)
 * loses its underscores; any other token is left as it is. */
static void ungroup_digits(char *w)
{
    if (!isdigit((unsigned char)w[0]) || strspn(w, "0123456789_") != strlen(w))
        return;
    char *o = w;
    for (const char *c = w; *c; c++)
        if (*c != '_')
            *o++ = *c;
    *o = '\0';
}

/* One line after its label is taken off. */
static int on_line(text_log_t *x, const char *s, const char *lab, err_t *err)
{
    while (*s == ' ' || *s == '\t')
        s++;
    if (*s == '\0')
        return ERR_OK;
    bool table_line = *s == '#' || isdigit((unsigned char)*s);
    if (table_line && lab[0]) {
        /* each rank of a job built without MPI prints its own table: keep
         * the first label's */
        if (!x->labelled) {
            snprintf(x->label, sizeof x->label, "%s", lab);
            x->labelled = true;
        } else if (strcmp(x->label, lab) != 0) {
            x->skipped_labels++;
            return ERR_OK;
        }
    }
    if (*s == '#')
        return on_comment(x, s + 1, err);
    note_nccl_info(x, s);
    tokenize(s, x->t);
    ungroup_digits(x->t->tok[0]);
    if (x->t->n == 0 || !is_uint(x->t->tok[0])) {
        note_program(x, s);
        /* a paste rendered as markdown loses the '#': the header, rank
         * lines and footer without it */
        return on_comment(x, s, err);
    }
    if (!x->have_layout) {
        if (!implicit_layout(x->t, &x->lay))
            return ERR_OK;
        x->have_layout = x->implicit = true;
    }
    return on_row(x, err);
}

/* After the last line: the table must have rows; what was missing or
 * inferred is said. */
static int text_finish(text_log_t *x, err_t *err)
{
    nccltests_reading_t *r = x->r;
    const char *b = base_name(x->name);
    if (!x->have_layout)
        return err_setf(err, ERR_INPUT, x->name, NULL,
                        "no nccl-tests results table (expected a '#  size  count  type ... time  "
                        "algbw  busbw' header or rows of size, count, type, time, algbw, busbw)");
    if (r->series.n == 0)
        return err_setf(err, ERR_INPUT, NULL, NULL, "%s:%d: the results table has no rows",
                        x->name, x->lineno);
    if (x->implicit)
        add_note(r, "%s: no column header: read as nccl-tests prints its columns (size count "
                    "type [redop root] time algbw busbw #wrong, out-of-place first)",
                 b);
    if (!x->footer)
        add_note(r, "%s: no '# Avg bus bandwidth' line after line %d: read the %d size%s given "
                    "(the paste may end early)",
                 b, x->last_row_line, r->series.n, r->series.n == 1 ? "" : "s");
    if (x->skipped_labels)
        add_note(r, "%s: kept the table of launcher label [%s]; %d lines of other ranks' "
                    "copies skipped",
                 b, x->label, x->skipped_labels);
    const coll_def_t *def;
    int rc = resolve_collective(x->name, x->test, x->program, x->hint, r, &def, err);
    if (rc)
        return rc;
    x->group.nodes = x->hosts.n;
    return finish(x->name, x->hint, &x->group, x->version, x->rows_line, def, r, err);
}

static int parse_text(const char *text, size_t len, const char *name,
                      const nccltests_hint_t *hint, nccltests_reading_t *r, err_t *err)
{
    text_log_t *x = calloc(1, sizeof *x);
    char *buf = malloc(1024);
    int rc = ERR_OK;
    if (!x || !buf || !(x->t = malloc(sizeof *x->t)) ||
        !(x->rows_line = calloc(MEAS_MAX_COLL_POINTS, sizeof *x->rows_line))) {
        rc = err_set(err, ERR_RUNTIME, "out of memory reading %s", name);
        goto out;
    }
    x->name = name;
    x->hint = hint;
    x->r = r;
    size_t pos = 0;
    const char *line;
    long l;
    while ((l = next_line(text, len, &pos, &line)) >= 0) {
        x->lineno++;
        size_t cl = (size_t)l < 1023 ? (size_t)l : 1023;
        memcpy(buf, line, cl);
        buf[cl] = '\0';
        char lab[32];
        /* a carriage return inside a line (a progress meter) starts it over */
        const char *s = strrchr(buf, '\r') ? strrchr(buf, '\r') + 1 : buf;
        s = strip_label(s, lab, sizeof lab);
        if ((rc = on_line(x, s, lab, err)))
            goto out;
    }
    rc = text_finish(x, err);
out:
    if (x) {
        free(x->hosts.names);
        free(x->rank_seen);
        free(x->t);
        free(x->rows_line);
    }
    free(x);
    free(buf);
    return rc;
}

/* ------------------------------------------------ JSON logs */

/* The -J file's config.devices: host names (for the node count) and the
 * first device's name. */
static int json_devices(const cJSON *devices, const json_ctx_t *cctx, hosts_t *hosts,
                        nccltests_reading_t *rd, err_t *err)
{
    json_ctx_t dctx = json_ctx_member(cctx, "devices");
    int rc = ERR_OK;
    for (int i = 0; i < cJSON_GetArraySize(devices) && !rc; i++) {
        const cJSON *d = cJSON_GetArrayItem(devices, i);
        json_ctx_t ic = json_ctx_index(&dctx, i);
        char host[64] = "", info[96] = "";
        if ((rc = json_expect_object(d, &ic, err)) ||
            (rc = json_get_string(d, "hostname", &ic, JSON_OPTIONAL, host, sizeof host, err)) ||
            (rc = json_get_string(d, "device_info", &ic, JSON_OPTIONAL, info, sizeof info, err)) ||
            (rc = hosts_add(hosts, host, err)))
            break;
        if (!rd->device[0] && info[0])
            snprintf(rd->device, sizeof rd->device, "%s", info);
    }
    return rc;
}

static int parse_json(const char *text, size_t len, const char *name, const nccltests_hint_t *hint,
                      nccltests_reading_t *rd, err_t *err)
{
    meas_coll_t *out = &rd->series;
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
    /* one devices entry per process, each driving nthreads x ngpus ranks */
    if (devices && (rc = json_devices(devices, &cctx, &hosts, rd, err)))
        goto out;
    if (devices)
        log_ranks = cJSON_GetArraySize(devices) * nthreads * ngpus;
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
    const coll_def_t *def;
    if ((rc = resolve_collective(name, program, "", hint, rd, &def, err)))
        goto out;
    group_facts_t g = {log_ranks, 0, 0, hosts.n};
    rc = finish(name, hint, &g, version, NULL, def, rd, err);
out:
    free(hosts.names);
    cJSON_Delete(root);
    return rc;
}

/* ------------------------------------------------ entry points */

/* An NCCL_ALGO in the recorded environment of a JSON log names the
 * algorithm. */
static void algo_from_env(const char *text, size_t len, meas_coll_t *out)
{
    static const char key[] = "\"NCCL_ALGO=";
    const size_t kl = sizeof key - 1;
    for (size_t p = 0; p + kl <= len; p++) {
        if (memcmp(text + p, key, kl) != 0)
            continue;
        size_t a = p + kl, al = 0;
        while (a + al < len && al < sizeof out->algo - 1 && !strchr("\",;", text[a + al]))
            al++;
        if (al == 0)
            return;
        snprintf(out->algo, sizeof out->algo, "%.*s", (int)al, text + a);
        for (char *c = out->algo; *c; c++)
            *c = (char)tolower((unsigned char)*c);
        return;
    }
}

int nccltests_read(const char *text, size_t len, const char *name, const nccltests_hint_t *hint,
                   nccltests_reading_t *out, err_t *err)
{
    memset(out, 0, sizeof *out);
    snprintf(out->series.algo, sizeof out->series.algo, "default");
    size_t i = 0;
    while (i < len && isspace((unsigned char)text[i]))
        i++;
    if (i == len)
        return err_setf(err, ERR_INPUT, name, NULL, "empty log");
    if (text[i] != '{')
        return parse_text(text, len, name, hint, out, err);
    int rc = parse_json(text, len, name, hint, out, err);
    if (rc == ERR_OK)
        algo_from_env(text, len, &out->series);
    return rc;
}

int nccltests_read_file(const char *path, const nccltests_hint_t *hint, nccltests_reading_t *out,
                        err_t *err)
{
    char *text = NULL;
    size_t len = 0;
    memset(out, 0, sizeof *out);
    int rc = fileio_read_all(path, &text, &len, err);
    if (rc)
        return rc;
    rc = nccltests_read(text, len, path, hint, out, err);
    free(text);
    return rc;
}

/* A reading as a series of a modeled collective. */
static int to_series(const nccltests_reading_t *r, const char *name, meas_coll_t *out,
                     char *device, size_t device_cap, err_t *err)
{
    if (!r->modeled)
        return err_setf(err, ERR_INPUT, name, NULL,
                        "a %s table (%d sizes, %d ranks): scaleplan's profile models all_reduce, "
                        "all_gather, reduce_scatter, broadcast, sendrecv and alltoall only",
                        r->collective, r->series.n, r->series.n_ranks);
    *out = r->series;
    if (device && device_cap)
        snprintf(device, device_cap, "%s", r->device);
    return ERR_OK;
}

int nccltests_parse(const char *text, size_t len, const char *name, const nccltests_hint_t *hint,
                    meas_coll_t *out, char *device, size_t device_cap, err_t *err)
{
    memset(out, 0, sizeof *out);
    if (device && device_cap)
        device[0] = '\0';
    nccltests_reading_t *r = malloc(sizeof *r);
    if (!r)
        return err_set(err, ERR_RUNTIME, "out of memory reading %s", name);
    int rc = nccltests_read(text, len, name, hint, r, err);
    if (!rc)
        rc = to_series(r, name, out, device, device_cap, err);
    free(r);
    return rc;
}

int nccltests_load(const char *path, const nccltests_hint_t *hint, meas_coll_t *out,
                   char *device, size_t device_cap, err_t *err)
{
    memset(out, 0, sizeof *out);
    if (device && device_cap)
        device[0] = '\0';
    nccltests_reading_t *r = malloc(sizeof *r);
    if (!r)
        return err_set(err, ERR_RUNTIME, "out of memory reading %s", path);
    int rc = nccltests_read_file(path, hint, r, err);
    if (!rc)
        rc = to_series(r, path, out, device, device_cap, err);
    free(r);
    return rc;
}
