#include "inputs/trainlog.h"

#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/fileio.h"
#include "common/strfmt.h"
#include "inputs/trainlogInt.h"

/* Detection order: a Megatron-DeepSpeed log also carries DeepSpeed's engine
 * lines, but its iteration lines are the ones with step times, so Megatron
 * comes first; the plain forms come last (they recognise a header only). */
static const tlog_reader_t *const readers[] = {
    &TLOG_READER_MEGATRON, &TLOG_READER_NEMO, &TLOG_READER_TORCHTITAN, &TLOG_READER_DEEPSPEED,
    &TLOG_READER_HF,       &TLOG_READER_COMPOSER, &TLOG_READER_NANOTRON, &TLOG_READER_MAXTEXT,
    &TLOG_READER_NANOGPT,  &TLOG_READER_LITGPT, &TLOG_READER_CSV, &TLOG_READER_JSON,
};
enum { N_READERS = sizeof readers / sizeof readers[0] };

int trainlog_format_count(void)
{
    return N_READERS;
}

const char *trainlog_format_name(int i)
{
    return i >= 0 && i < N_READERS ? readers[i]->name : NULL;
}

const char *trainlog_format_title(int i)
{
    return i >= 0 && i < N_READERS ? readers[i]->title : NULL;
}

const char *trainlog_part_name(tlog_part_t p)
{
    static const char *names[] = {"forward", "backward", "grad_reduce", "optimizer"};
    return p < TLOG_PART_COUNT ? names[p] : "?";
}

/* ------------------------------------------------------------ text */

/* Remove ANSI escape sequences (ESC [ params letter, or a lone ESC) in place. */
static void strip_ansi(char *s)
{
    char *w = s;
    for (const char *r = s; *r;) {
        if (*r != '\x1b') {
            *w++ = *r++;
            continue;
        }
        r++;
        if (*r == '[') {
            r++;
            while (*r && ((*r >= '0' && *r <= '9') || *r == ';' || *r == '?'))
                r++;
            if (*r)
                r++; /* the final letter */
        }
    }
    *w = '\0';
}

/* Digits at *p as a rank (at most 7 of them); -1 when there are none. */
static int read_rank(const char **p)
{
    int v = 0, n = 0;
    while (**p >= '0' && **p <= '9' && n < 7) {
        v = v * 10 + (**p - '0');
        (*p)++;
        n++;
    }
    return n > 0 && !(**p >= '0' && **p <= '9') ? v : -1;
}

/* The prefix a launcher adds to every line, with the rank it names:
 * torchrun --tee's "[rank3]:" and "[default3]:", srun --label's "3: ",
 * mpirun --tag-output's "[1,3]<stdout>:", each also after blanks. Returns
 * the text after it and sets *rank (-1 when there is no prefix). */
static char *strip_launcher(char *s, int *rank)
{
    static const char *const tags[] = {"[rank", "[default"};
    /* a paste may indent the line (bigscience's chronicles: " [default7]:") */
    const char *b = tlog_skip_blanks(s);
    const char *p;
    *rank = -1;
    for (size_t k = 0; k < sizeof tags / sizeof tags[0]; k++) {
        size_t n = strlen(tags[k]);
        p = b + n;
        if (strncmp(b, tags[k], n) != 0)
            continue;
        int r = read_rank(&p);
        if (r >= 0 && p[0] == ']' && p[1] == ':') {
            *rank = r;
            return (char *)p + 2;
        }
    }
    p = b;
    if (*p == '[' && (p++, read_rank(&p) >= 0) && *p == ',') {
        p++;
        int r = read_rank(&p);
        if (r >= 0 && (strncmp(p, "]<stdout>:", 10) == 0 || strncmp(p, "]<stderr>:", 10) == 0)) {
            *rank = r;
            return (char *)p + 10;
        }
    }
    p = tlog_skip_blanks(s);
    int r = read_rank(&p);
    if (r >= 0 && p[0] == ':' && p[1] == ' ') {
        *rank = r;
        return (char *)p + 2;
    }
    return s;
}

static void text_free(tlog_text_t *t)
{
    free(t->rank_of_line);
    free(t->lines);
    free(t->buf);
    memset(t, 0, sizeof *t);
}

/* Split text into cleaned lines; a NUL byte reads as a blank. */
static int text_split(const char *text, size_t len, const char *file, tlog_text_t *t, err_t *err)
{
    memset(t, 0, sizeof *t);
    t->file = file;
    size_t breaks = 1;
    for (size_t i = 0; i < len; i++)
        breaks += text[i] == '\n' || text[i] == '\r';
    size_t file_lines = 1;
    for (size_t i = 0; i < len; i++)
        file_lines += text[i] == '\n';
    if (file_lines > (size_t)1 << 30)
        return err_setf(err, ERR_INPUT, file, NULL, "more than 2^30 lines");
    t->buf = malloc(len + 1);
    t->lines = malloc(breaks * sizeof *t->lines);
    t->rank_of_line = malloc((file_lines + 1) * sizeof *t->rank_of_line);
    if (!t->buf || !t->lines || !t->rank_of_line) {
        text_free(t);
        return err_set(err, ERR_RUNTIME, "out of memory reading %s", file);
    }
    int line = 1;
    size_t start = 0;
    for (size_t i = 0; i <= len; i++) {
        char c = i < len ? text[i] : '\n';
        if (c != '\n' && c != '\r') {
            t->buf[i] = c ? c : ' ';
            continue;
        }
        t->buf[i] = '\0';
        int rank;
        char *s = t->buf + start;
        strip_ansi(s); /* before the prefix: torchrun colours it too */
        s = strip_launcher(s, &rank);
        t->lines[t->n].s = s;
        t->lines[t->n].line = line;
        t->lines[t->n].rank = rank;
        /* a carriage-return piece without a prefix keeps its line's rank */
        if (t->n_file_lines < line) {
            t->rank_of_line[line] = rank;
            t->n_file_lines = line;
        } else if (rank >= 0) {
            t->rank_of_line[line] = rank;
        }
        t->n++;
        if (c == '\n')
            line++;
        start = i + 1;
    }
    t->cut = len > 0 && text[len - 1] != '\n' && text[len - 1] != '\r';
    return ERR_OK;
}

/* ------------------------------------------------------------ helpers */

const char *tlog_skip_blanks(const char *s)
{
    while (*s == ' ' || *s == '\t')
        s++;
    return s;
}

bool tlog_number(const char *s, bool commas, double *out, const char **end)
{
    const char *p = tlog_skip_blanks(s);
    char buf[64];
    size_t n = 0;
    int digits = 0;
    bool room = true;
    *end = s;
    if (*p == '+' || *p == '-')
        buf[n++] = *p++;
    for (;; p++) {
        if (*p >= '0' && *p <= '9') {
            room = room && n < 40; /* beyond 1e40 is not a log's figure */
            if (room)
                buf[n++] = *p;
            digits++;
        } else if (!(commas && *p == ',' && digits > 0 && p[1] >= '0' && p[1] <= '9')) {
            break;
        }
    }
    if (*p == '.') {
        buf[n++] = '.';
        for (p++; *p >= '0' && *p <= '9'; p++) {
            if (n < 56) /* digits past a double's precision are dropped */
                buf[n++] = *p;
            digits++;
        }
    }
    if (digits == 0 || !room)
        return false;
    if ((*p == 'e' || *p == 'E') &&
        ((p[1] >= '0' && p[1] <= '9') ||
         ((p[1] == '+' || p[1] == '-') && p[2] >= '0' && p[2] <= '9'))) {
        buf[n++] = *p++;
        if (*p == '+' || *p == '-')
            buf[n++] = *p++;
        int k = 0;
        for (; *p >= '0' && *p <= '9'; p++)
            if (k++ < 4)
                buf[n++] = *p;
        if (k > 4)
            return false;
    }
    buf[n] = '\0';
    double v = strtod(buf, NULL);
    if (!isfinite(v))
        return false;
    *out = v;
    *end = p;
    return true;
}

bool tlog_value_after(const char *line, const char *key, bool commas, const char *follow,
                      double *out, bool *bad)
{
    const char *k = strstr(line, key);
    if (!k)
        return false;
    const char *end;
    if (!tlog_number(k + strlen(key), commas, out, &end) ||
        (follow && *end && *end != ' ' && *end != '\t' && !strchr(follow, *end))) {
        *bad = true;
        return false;
    }
    return true;
}

const tlog_line_t *tlog_find(const tlog_text_t *t, const char *needle)
{
    for (int i = 0; i < t->n; i++)
        if (strstr(t->lines[i].s, needle))
            return &t->lines[i];
    return NULL;
}

bool tlog_any_line(const tlog_text_t *t, bool (*is_line)(const char *s))
{
    for (int i = 0; i < t->n; i++)
        if (is_line(t->lines[i].s))
            return true;
    return false;
}

bool tlog_is_cut(const tlog_text_t *t, const tlog_line_t *l)
{
    return t->cut && t->n > 0 && l == &t->lines[t->n - 1];
}

int tlog_bad(const tlog_text_t *t, int line, err_t *err, const char *fmt, ...)
{
    char reason[ERR_MSG_MAX], where[32];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(reason, sizeof reason, fmt, ap);
    va_end(ap);
    snprintf(where, sizeof where, "line %d", line);
    return err_setf(err, ERR_INPUT, t->file, where, "%s", reason);
}

tlog_record_t *tlog_add_record(trainlog_t *t, long step, int line)
{
    /* the capacity is 16, then doubles whenever the count reaches a power of two */
    int n = t->n_records;
    if (n == 0 || (n >= 16 && (n & (n - 1)) == 0)) {
        if (n >= (1 << 28))
            return NULL;
        tlog_record_t *r = realloc(t->records, (size_t)(n ? 2 * n : 16) * sizeof *r);
        if (!r)
            return NULL;
        t->records = r;
    }
    tlog_record_t *r = &t->records[t->n_records++];
    r->step = step;
    r->line = line;
    r->covers = 1;
    r->step_time_s = r->tokens_per_s = r->tokens_per_s_per_gpu = r->samples_per_s = NAN;
    r->tflops_per_gpu = r->mfu = r->memory_gib = r->loss = NAN;
    for (int k = 0; k < TLOG_PART_COUNT; k++)
        r->part_s[k] = NAN;
    r->skipped = r->derived = false;
    return r;
}

static int add_pair(tlog_setting_t **arr, int *n, const char *file, const char *name,
                    const char *value, int line, err_t *err)
{
    if ((*n & (*n - 1)) == 0) { /* 0, 1, 2, 4, ...: grow to the next power of two */
        tlog_setting_t *s = realloc(*arr, (size_t)(*n ? 2 * *n : 1) * sizeof *s);
        if (!s)
            return err_set(err, ERR_RUNTIME, "out of memory reading %s", file);
        *arr = s;
    }
    tlog_setting_t *s = &(*arr)[*n];
    s->name = str_printf("%s", name);
    s->value = str_printf("%s", value);
    if (!s->name || !s->value) {
        free(s->name);
        free(s->value);
        return err_set(err, ERR_RUNTIME, "out of memory reading %s", file);
    }
    s->line = line;
    (*n)++;
    return ERR_OK;
}

int tlog_add_setting(trainlog_t *t, const char *name, const char *value, int line, err_t *err)
{
    return add_pair(&t->settings, &t->n_settings, t->file, name, value, line, err);
}

int tlog_add_arg(trainlog_t *t, const char *name, const char *value, int line, err_t *err)
{
    return add_pair(&t->args, &t->n_args, t->file, name, value, line, err);
}

const char *trainlog_setting(const trainlog_t *t, const char *name)
{
    for (int i = t->n_settings - 1; i >= 0; i--)
        if (strcmp(t->settings[i].name, name) == 0)
            return t->settings[i].value;
    return NULL;
}

void trainlog_free(trainlog_t *t)
{
    free(t->records);
    for (int i = 0; i < t->n_settings; i++) {
        free(t->settings[i].name);
        free(t->settings[i].value);
    }
    free(t->settings);
    for (int i = 0; i < t->n_args; i++) {
        free(t->args[i].name);
        free(t->args[i].value);
    }
    free(t->args);
    free(t->file);
    memset(t, 0, sizeof *t);
}

/* ------------------------------------------------------------ steady state */

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median_of(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* Step times the log does not print, from the throughput it does; the
 * number of records so derived. */
static int derive_step_times(trainlog_t *t, const tlog_known_t *known)
{
    int gpus = t->n_gpus > 0 ? t->n_gpus : known ? known->n_gpus : 0;
    double samples = t->samples_per_step > 0 ? t->samples_per_step
                     : known                 ? known->samples_per_step
                                             : 0;
    double tokens = t->tokens_per_step > 0 ? t->tokens_per_step : known ? known->tokens_per_step : 0;
    int derived = 0;
    for (int i = 0; i < t->n_records; i++) {
        tlog_record_t *r = &t->records[i];
        if (isfinite(r->step_time_s) && !r->derived)
            continue;
        r->derived = true;
        derived++;
        if (tokens > 0 && r->tokens_per_s > 0)
            r->step_time_s = tokens / r->tokens_per_s;
        else if (tokens > 0 && gpus > 0 && r->tokens_per_s_per_gpu > 0)
            r->step_time_s = tokens / (r->tokens_per_s_per_gpu * gpus);
        else if (samples > 0 && r->samples_per_s > 0)
            r->step_time_s = samples / r->samples_per_s;
        else {
            r->step_time_s = NAN;
            derived--;
        }
    }
    return derived;
}

/* Mean (weighted by covered iterations), spread and range of field over
 * the records in idx. */
static tlog_stat_t summarise(const trainlog_t *t, const int *idx, int n, size_t offset)
{
    tlog_stat_t st = {0, NAN, NAN, NAN, NAN, NAN};
    double wsum = 0, sum = 0, plain = 0;
    int k = 0;
    for (int i = 0; i < n; i++) {
        const tlog_record_t *r = &t->records[idx[i]];
        double v = *(const double *)((const char *)r + offset);
        if (!isfinite(v))
            continue;
        double w = (double)(r->covers > 0 ? r->covers : 1);
        wsum += w;
        sum += w * v;
        plain += v;
        st.min = k == 0 ? v : fmin(st.min, v);
        st.max = k == 0 ? v : fmax(st.max, v);
        k++;
    }
    if (k == 0)
        return st;
    st.n = k;
    st.mean = sum / wsum;
    double avg = plain / k, ss = 0;
    for (int i = 0; i < n; i++) {
        const tlog_record_t *r = &t->records[idx[i]];
        double v = *(const double *)((const char *)r + offset);
        if (isfinite(v))
            ss += (v - avg) * (v - avg);
    }
    st.sd = k > 1 ? sqrt(ss / (k - 1)) : 0;
    st.cv = st.mean > 0 ? st.sd / st.mean : NAN;
    return st;
}

/* Leading records more than thr above the steady level are warm-up: the
 * level is the median of the later half of the timed records, thr the
 * larger of 1% and four robust standard deviations (1.4826 x the median
 * absolute deviation) of that half, so a jitter of a few tenths of a
 * percent keeps every record and a second step 3% slow is dropped. */
static int warmup_count(const double *times, int n, double *level)
{
    int half = (n + 1) / 2;
    double *v = malloc((size_t)half * sizeof *v);
    if (!v) {
        *level = times[n - 1];
        return 0;
    }
    memcpy(v, times + (n - half), (size_t)half * sizeof *v);
    double m = median_of(v, half);
    for (int i = 0; i < half; i++)
        v[i] = fabs(v[i] - m);
    double mad = median_of(v, half);
    free(v);
    double thr = fmax(0.01, 4 * 1.4826 * mad / m);
    int w = 0;
    while (w < n - 1 && times[w] > m * (1 + thr))
        w++;
    *level = m;
    return w;
}

/* The steady records of one run, valid[0..n) (indices into the records,
 * times[] their step times): the leading warm-up and the first step of
 * training (compilation, allocation) dropped, then steps far above the
 * run's level (checkpoint saves, evaluation) unless a short neighbour
 * makes up for them. Kept indices go to *kept
 * (advanced); returns the warm-up count: the run's records from index
 * from (skipped steps too) before its first steady one. Adds the outliers
 * to *outliers. */
static int steady_of_run(const trainlog_t *t, int from, const int *valid, const double *times,
                         int n, int **kept, int *outliers)
{
    double level;
    int w = warmup_count(times, n, &level);
    /* the run's first training step compiles and allocates: a first record
     * that covers step 1 at the run's logging interval (a pasted part of a
     * log starts later, and its first record's span is unknown) */
    const tlog_record_t *r0 = &t->records[valid[0]];
    if (w == 0 && n >= 3 && r0->step - r0->covers < 1 &&
        r0->covers <= t->records[valid[1]].covers)
        w = 1;
    int warm = valid[w < n ? w : n - 1] - from;
    for (int i = w; i < n; i++) {
        /* a long step next to a short one whose pair averages the level is
         * time the timer gave the wrong step (LitGPT on TPU prints 953.72
         * then 5788.97 ms around a 3,371 ms level): both are kept */
        bool paired = false;
        for (int j = i - 1; j <= i + 1; j += 2)
            paired = paired || (j >= w && j < n && times[j] < level / 1.5 &&
                                fabs(0.5 * (times[i] + times[j]) - level) <= 0.1 * level);
        if (times[i] > 1.5 * level && !paired) {
            (*outliers)++;
            continue;
        }
        *(*kept)++ = valid[i];
    }
    return warm;
}

/* The steady records over every run of the log; their count. A step
 * counter that goes back begins a run (a restart); each has its own
 * warm-up and level. */
static int steady_records(trainlog_t *t, const int *valid, const double *times, int nv, int *idx,
                          int *outliers)
{
    int *kept = idx, a = 0;
    t->runs = 0;
    t->warmup = 0;
    *outliers = 0;
    while (a < nv) {
        int b = a + 1;
        while (b < nv && t->records[valid[b]].step > t->records[valid[b - 1]].step)
            b++;
        t->runs++;
        t->warmup += steady_of_run(t, a == 0 ? 0 : valid[a], valid + a, times + a, b - a, &kept,
                                   outliers);
        a = b;
    }
    return (int)(kept - idx);
}

/* "steady state: steps 3-20 (18 records); warm-up dropped: ..." */
static void describe_steady(trainlog_t *t, const int *idx, int ns, int outliers, int derived)
{
    const tlog_record_t *first = &t->records[idx[0]], *last = &t->records[idx[ns - 1]];
    size_t cap = sizeof t->note, n = 0;
    int k = snprintf(t->note, cap, "steady state: steps %ld-%ld (%d records%s)",
                     first->step - first->covers + 1, last->step, ns,
                     t->runs > 1 ? ", over the log's runs" : "");
    n = k > 0 ? (size_t)k : 0;
#define NOTE_ADD(...)                                                                             \
    do {                                                                                          \
        if (n < cap) {                                                                            \
            int m_ = snprintf(t->note + n, cap - n, __VA_ARGS__);                                 \
            n += m_ > 0 ? (size_t)m_ : 0;                                                         \
        }                                                                                         \
    } while (0)
    if (t->runs > 1)
        NOTE_ADD("; %d runs (the step count restarts), warm-up found in each", t->runs);
    if (t->warmup > 0)
        NOTE_ADD("; warm-up dropped: %d record%s before step %ld", t->warmup,
                 t->warmup == 1 ? "" : "s", first->step - first->covers + 1);
    if (outliers > 0)
        NOTE_ADD("; %d later step%s over 1.5x the steady level left out", outliers,
                 outliers == 1 ? "" : "s");
    if (t->folded > 0)
        NOTE_ADD("; %d record%s folded (other ranks' copies, repeated steps)", t->folded,
                 t->folded == 1 ? "" : "s");
    if (ns == 1)
        NOTE_ADD("; one record, so no spread");
#undef NOTE_ADD
    snprintf(t->step_time_from, sizeof t->step_time_from, "%s, lines %d-%d",
             derived > 0 ? "the log's throughput over the batch" : "the log's own step times",
             first->line, last->line);
}

/* Why a log has no steady step time, for the strict settle: every timed
 * step skipped, no record with a time or a rate, or rates without the
 * batch and GPU count that turn them into seconds. */
static int no_steady_state(const trainlog_t *t, int skipped, err_t *err)
{
    if (skipped > 0)
        return err_setf(err, ERR_INPUT, t->file, NULL,
                        "no step to measure: each of the log's %d timed steps was skipped by "
                        "the optimizer (fp16 loss-scale overflow)",
                        skipped);
    int rates = 0;
    for (int i = 0; i < t->n_records; i++)
        rates += t->records[i].tokens_per_s > 0 || t->records[i].tokens_per_s_per_gpu > 0 ||
                 t->records[i].samples_per_s > 0;
    if (rates == 0)
        return err_setf(err, ERR_INPUT, t->file, NULL,
                        "no step time in the log: none of its %d records carries a step time "
                        "or a throughput",
                        t->n_records);
    return err_setf(err, ERR_INPUT, t->file, NULL,
                    "no step time in the log: its %d records give throughput only, and "
                    "turning that into seconds per step needs the GPU count and the batch "
                    "(--gpus, --global-batch, --seq-len)",
                    t->n_records);
}

/* Settle: strict callers need a steady step time; the parse-time pass
 * accepts a log whose throughput waits for the command line's figures. */
static int settle(trainlog_t *t, const tlog_known_t *known, bool strict, err_t *err)
{
    int derived = derive_step_times(t, known);
    t->warmup = 0;
    t->first_steady = -1;
    memset(&t->step_time_s, 0, sizeof t->step_time_s);
    t->step_time_s.mean = t->tflops_per_gpu.mean = t->mfu.mean = NAN;
    t->note[0] = t->step_time_from[0] = '\0';
    for (int k = 0; k < TLOG_PART_COUNT; k++)
        t->part_s[k] = NAN;
    size_t cap = (size_t)(t->n_records > 0 ? t->n_records : 1);
    int *idx = malloc(cap * sizeof *idx), *valid = malloc(cap * sizeof *valid);
    double *times = malloc(cap * sizeof *times);
    if (!idx || !times || !valid) {
        free(idx);
        free(valid);
        free(times);
        return err_set(err, ERR_RUNTIME, "out of memory reading %s", t->file);
    }
    int nv = 0, skipped = 0;
    for (int i = 0; i < t->n_records; i++) {
        const tlog_record_t *r = &t->records[i];
        bool timed = r->step_time_s > 0 && isfinite(r->step_time_s);
        skipped += timed && r->skipped;
        if (!r->skipped && timed) {
            valid[nv] = i;
            times[nv++] = r->step_time_s;
        }
    }
    int rc = ERR_OK, outliers = 0, ns = nv > 0 ? steady_records(t, valid, times, nv, idx, &outliers) : 0;
    if (ns == 0) {
        if (strict)
            rc = no_steady_state(t, skipped, err);
        goto out;
    }
    t->first_steady = idx[0];
    t->step_time_s = summarise(t, idx, ns, offsetof(tlog_record_t, step_time_s));
    t->tflops_per_gpu = summarise(t, idx, ns, offsetof(tlog_record_t, tflops_per_gpu));
    t->mfu = summarise(t, idx, ns, offsetof(tlog_record_t, mfu));
    for (int k = 0; k < TLOG_PART_COUNT; k++) {
        tlog_stat_t p = summarise(t, idx, ns, offsetof(tlog_record_t, part_s) + (size_t)k * sizeof(double));
        t->part_s[k] = p.mean;
    }
    describe_steady(t, idx, ns, outliers, derived);
out:
    free(idx);
    free(valid);
    free(times);
    return rc;
}

int trainlog_settle(trainlog_t *t, const tlog_known_t *known, err_t *err)
{
    return settle(t, known, true, err);
}

/* ------------------------------------------------------------ folding */

static int rank_of(const tlog_text_t *t, int line)
{
    return line >= 1 && line <= t->n_file_lines ? t->rank_of_line[line] : -1;
}

/* One record per step: the lowest rank that logs steps is kept (records
 * from unprefixed lines too), and a record repeating the step just kept
 * is another rank's unprefixed copy of the same line. */
static void fold_records(trainlog_t *out, const tlog_text_t *t)
{
    int keep = -1;
    for (int i = 0; i < out->n_records; i++) {
        int r = rank_of(t, out->records[i].line);
        if (r >= 0 && (keep < 0 || r < keep))
            keep = r;
    }
    int w = 0;
    for (int i = 0; i < out->n_records; i++) {
        const tlog_record_t *x = &out->records[i];
        int r = rank_of(t, x->line);
        if ((r >= 0 && r != keep) || (w > 0 && out->records[w - 1].step == x->step)) {
            out->folded++;
            continue;
        }
        out->records[w++] = *x;
    }
    out->n_records = w;
    /* A run's first record counts its iterations from step 0, which is
     * only right when the log starts with the run: a pasted part of a log
     * starting at iteration 122 does not average 122 iterations. The span
     * is taken as the run's next interval when it is more than twice that
     * (a progress bar's first redraw may span two steps, legitimately). */
    for (int i = 0; i + 1 < w; i++) {
        tlog_record_t *x = &out->records[i];
        const tlog_record_t *next = &out->records[i + 1];
        bool first = i == 0 || x->step < out->records[i - 1].step;
        if (first && next->step > x->step && x->covers > 2 * next->covers)
            x->covers = next->covers;
    }
    /* Likewise inside a paste that elides lines ("[...]" between iteration
     * 7010 and 7220, bigscience tr8-104B chronicles): a record spanning
     * more than twice the run's logging interval averages one interval. */
    long interval = 0;
    for (int i = 1; i < w; i++)
        if (out->records[i].step > out->records[i - 1].step &&
            (interval == 0 || out->records[i].covers < interval))
            interval = out->records[i].covers;
    for (int i = 1; interval > 0 && i < w; i++)
        if (out->records[i].covers > 2 * interval)
            out->records[i].covers = interval;
}

/* ------------------------------------------------------------ parameter count */

/* DeepSpeed's flops profiler: "params of model = params per GPU * mp_size:
 * 1575.59 M" (K, M, G/B, T suffixes as its number_to_string prints). */
static bool profiler_params(const char *s, double *v)
{
    static const char key[] = "params of model = params per GPU * mp_size:";
    const char *k = strstr(s, key), *end;
    if (!k || !tlog_number(k + sizeof key - 1, false, v, &end))
        return false;
    end = tlog_skip_blanks(end);
    double scale = *end == 'K' ? 1e3 : *end == 'M' ? 1e6 : *end == 'G' || *end == 'B' ? 1e9
                 : *end == 'T' ? 1e12 : 1;
    *v *= scale;
    return true;
}

/* Per-rank parameter counts: Megatron-LM's "number of parameters on
 * (tensor, pipeline) model parallel rank (0, 1): N" and the older
 * "number of parameters on model parallel rank 1: N" (GPT-NeoX,
 * Megatron-DeepSpeed), summed once per distinct shard; DeepSpeed's
 * pipeline engine "TOTAL_PARAMS=N" and flops profiler; llm-foundry's
 * "n_params: N". Only
 * where the reader found no count of its own. */
static void scan_params(trainlog_t *out, const tlog_text_t *t)
{
    enum { MAX_SHARDS = 4096 };
    static const char *const shard_keys[] = {"number of parameters on (tensor, pipeline) model "
                                             "parallel rank (",
                                             "number of parameters on model parallel rank "};
    long seen[64];
    int n_seen = 0, shards = 0, line = 0;
    double sum = 0, total = 0;
    for (int i = 0; i < t->n; i++) {
        const char *s = t->lines[i].s, *k;
        double v;
        bool bad = false;
        for (size_t j = 0; j < 2; j++) {
            if (!(k = strstr(s, shard_keys[j])))
                continue;
            const char *p = k + strlen(shard_keys[j]), *colon = strstr(p, ":");
            char *e;
            long a = strtol(p, &e, 10), b = 0;
            if (j == 0 && *e == ',')
                b = strtol(e + 1, &e, 10);
            long key = a * MAX_SHARDS + b;
            bool dup = false;
            for (int q = 0; q < n_seen; q++)
                dup = dup || seen[q] == key;
            if (dup || !colon || !tlog_value_after(colon, ":", false, "", &v, &bad) || n_seen == 64)
                continue;
            seen[n_seen++] = key;
            sum += v;
            shards++;
            line = t->lines[i].line;
        }
        if ((tlog_value_after(s, "TOTAL_PARAMS=", false, " (", &v, &bad) ||
             tlog_value_after(s, "n_params:", false, "", &v, &bad) ||
             profiler_params(s, &v)) &&
            v > 0) {
            total = v;
            out->params_line = t->lines[i].line;
        }
    }
    if (shards > 0) {
        out->params = sum;
        out->params_line = line;
        if (shards > 1)
            snprintf(out->params_how, sizeof out->params_how,
                     "summed over the %d model-parallel ranks' counts", shards);
    } else if (total > 0) {
        out->params = total;
    }
}

/* ------------------------------------------------------------ entry points */

static const tlog_reader_t *reader_named(const char *name)
{
    for (int i = 0; i < N_READERS; i++)
        if (strcmp(readers[i]->name, name) == 0)
            return readers[i];
    return NULL;
}

int trainlog_parse(const char *text, size_t len, const char *file, const char *format,
                   trainlog_t *out, err_t *err)
{
    memset(out, 0, sizeof *out);
    const char *name = file && *file ? file : "log";
    if (!(out->file = str_printf("%s", name)))
        return err_set(err, ERR_RUNTIME, "out of memory");
    const tlog_reader_t *rd = NULL;
    int rc = ERR_OK;
    if (format && !(rd = reader_named(format))) {
        char list[160] = "";
        for (int i = 0; i < N_READERS; i++)
            snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s", i ? ", " : "",
                     readers[i]->name);
        rc = err_setf(err, ERR_INPUT, NULL, "--log-format", "unknown format '%s' (use %s)",
                      format, list);
        goto out;
    }
    tlog_text_t t;
    if ((rc = text_split(text, len, out->file, &t, err)))
        goto out;
    for (int i = 0; !rd && i < N_READERS; i++)
        if (readers[i]->detect(&t))
            rd = readers[i];
    if (!rd) {
        text_free(&t);
        rc = err_setf(err, ERR_INPUT, out->file, NULL,
                      "not a training log scaleplan reads: no Megatron-LM/Bridge iteration line, "
                      "NeMo progress line, torchtitan step line, DeepSpeed throughput line, "
                      "Hugging Face Trainer output, Composer batch block, nanotron iteration line, "
                      "MaxText step line, nanoGPT or LitGPT iter line, or step,seconds CSV/JSON");
        goto out;
    }
    snprintf(out->format, sizeof out->format, "%s", rd->name);
    snprintf(out->framework, sizeof out->framework, "%s", rd->title);
    rc = rd->parse(&t, out, err);
    if (!rc)
        fold_records(out, &t);
    if (!rc && !(out->params > 0))
        scan_params(out, &t);
    text_free(&t);
    if (!rc && out->n_records == 0)
        rc = err_setf(err, ERR_INPUT, out->file, NULL, "no training steps in this %s log",
                      rd->title);
    if (!rc)
        rc = settle(out, NULL, false, err);
out:
    if (rc)
        trainlog_free(out); /* the file's name too: the message already has it */
    return rc;
}

int trainlog_read(const char *path, const char *format, trainlog_t *out, err_t *err)
{
    memset(out, 0, sizeof *out);
    char *data = NULL;
    size_t len = 0;
    int rc = fileio_read_all(path, &data, &len, err);
    if (rc)
        return rc;
    rc = trainlog_parse(data, len, path, format, out, err);
    free(data);
    return rc;
}
