#include "validate/failval.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common/csv.h"
#include "run/reliability.h"
#include "topologies/cluster.h"
#include "topologies/failure.h"

/* Case-insensitive substring test. */
static bool has(const char *hay, const char *needle)
{
    if (!hay || !needle)
        return false;
    size_t n = strlen(needle);
    for (; *hay; hay++)
        if (strncasecmp(hay, needle, n) == 0)
            return true;
    return n == 0;
}

/* text with the thousands separators between digits dropped
 * ("1,024" -> "1024"), into buf (cut to cap). */
static void drop_separators(const char *text, char *buf, size_t cap)
{
    size_t k = 0;
    for (const char *p = text; *p && k + 1 < cap; p++)
        if (!(*p == ',' && p > text && isdigit((unsigned char)p[-1]) &&
              isdigit((unsigned char)p[1])))
            buf[k++] = *p;
    buf[k] = '\0';
}

/* Past leading blanks, '~' and hedging words; "over", "more than", "at
 * least" make the figure a lower bound. */
static const char *skip_hedges(const char *p, bool *lower_bound)
{
    static const struct {
        const char *word;
        bool lower_bound;
    } hedges[] = {{"about ", false},  {"approximately ", false}, {"approx. ", false},
                  {"around ", false}, {"roughly ", false},       {"nearly ", false},
                  {"over ", true},    {"more than ", true},      {"at least ", true}};
    for (bool again = true; again;) {
        while (*p == ' ' || *p == '~')
            p++;
        again = false;
        for (size_t i = 0; i < sizeof hedges / sizeof hedges[0] && !again; i++) {
            size_t n = strlen(hedges[i].word);
            if (strncasecmp(p, hedges[i].word, n) == 0) {
                p += n;
                *lower_bound = *lower_bound || hedges[i].lower_bound;
                again = true;
            }
        }
    }
    return p;
}

/* A published figure: "148", "~10", ">=35", "70+", ">100", "1-2", ">90",
 * "about 1,600", "more than 100". False when the text holds no number. */
static bool parse_value(const char *text, double *lo, double *hi, bool *lower_bound)
{
    *lower_bound = false;
    char buf[128];
    drop_separators(text, buf, sizeof buf);
    const char *p = skip_hedges(buf, lower_bound);
    if (*p == '>') {
        *lower_bound = true;
        p++;
        if (*p == '=')
            p++;
    }
    char *end;
    double v = strtod(p, &end);
    if (end == p || !isfinite(v))
        return false;
    *lo = *hi = v;
    if (*end == '+')
        *lower_bound = true;
    else if (*end == '-' && isdigit((unsigned char)end[1]))
        *hi = strtod(end + 1, NULL);
    return true;
}

/* A GPU count cell: "16384", "16,384", "16384 (up to)"; 0 when none. */
static int gpus_of(const char *text)
{
    char buf[64];
    drop_separators(text, buf, sizeof buf);
    return atoi(buf);
}

/* A leading count in figures or words ("54", "two", "a"); *end past it.
 * 0 when there is none. */
static double leading_count(const char *p, const char **end)
{
    static const char *words[] = {"a",   "one",  "two", "three", "four", "five",  "six",
                                  "seven", "eight", "nine", "ten", "eleven", "twelve"};
    char *e;
    double v = strtod(p, &e);
    if (e != p) {
        *end = e;
        return v;
    }
    for (size_t i = 0; i < sizeof words / sizeof words[0]; i++) {
        size_t n = strlen(words[i]);
        if (strncasecmp(p, words[i], n) == 0 && p[n] == ' ') {
            *end = p + n;
            return i == 0 ? 1 : (double)i;
        }
    }
    *end = p;
    return 0;
}

/* "54 days", "11 months, ...", "1 week (...)", "~2 months", "about two
 * months", "48 hours": days, or 0. */
static double parse_window_days(const char *text)
{
    char buf[160];
    bool ignore = false;
    drop_separators(text, buf, sizeof buf);
    const char *end, *p = skip_hedges(buf, &ignore);
    double v = leading_count(p, &end);
    if (!(v > 0) || !isfinite(v))
        return 0;
    while (*end == ' ')
        end++;
    if (strncasecmp(end, "hour", 4) == 0)
        return v / 24;
    if (strncasecmp(end, "day", 3) == 0)
        return v;
    if (strncasecmp(end, "week", 4) == 0)
        return 7 * v;
    if (strncasecmp(end, "month", 5) == 0)
        return v * 365.25 / 12;
    if (strncasecmp(end, "year", 4) == 0)
        return v * 365.25;
    return 0;
}

/* The catalog GPU a record's type names: the longest leading run of its
 * words that resolves ("H100 80GB HBM3 700W" -> "H100 80GB" or "H100"). */
static bool resolve_gpu(const char *text, cluster_t *c, int gpus)
{
    char buf[96];
    snprintf(buf, sizeof buf, "%s", text);
    for (char *p = buf; *p; p++)
        if (*p == '(')
            *p = '\0';
    for (;;) {
        size_t len = strlen(buf);
        while (len > 0 && buf[len - 1] == ' ')
            buf[--len] = '\0';
        if (len == 0)
            return false;
        cluster_spec_t spec = {.gpu = buf, .n_gpus = gpus};
        err_t ignore;
        if (cluster_resolve(&spec, c, &ignore) == 0)
            return true;
        char *sp = strrchr(buf, ' ');
        if (!sp)
            return false;
        *sp = '\0';
    }
}

/* What a record counts, read from its category, item and unit. */
typedef enum {
    M_NONE = 0,
    M_ALL,        /* every interruption */
    M_UNEXPECTED, /* all but planned */
    M_PLANNED,
    M_HARDWARE,   /* the hardware kind */
    M_GPU,        /* the classes of the source's GPU category */
} match_t;

/* A mean time to failure by any of its names (MTTF, MTBF, MTTI, JMTTI). */
static bool mean_time(const char *text)
{
    return has(text, "MTTF") || has(text, "MTBF") || has(text, "MTTI") ||
           has(text, "mean time to") || has(text, "mean time between");
}

static match_t aggregate_match(const char *cat, const char *item, const char *unit)
{
    if (strcasecmp(cat, "total") == 0)
        return has(item, "planned") && !has(item, "unexpected")
                   ? M_PLANNED
                   : has(item, "unexpected") ? M_UNEXPECTED : M_ALL;
    if (has(cat, "GPU (all"))
        return M_GPU;
    if (mean_time(cat))
        return has(unit, "projected") ? M_HARDWARE : M_UNEXPECTED; /* projected from r_f */
    if (has(cat, "node failure rate"))
        return M_HARDWARE; /* node failures: hardware taken out of service */
    if (strcasecmp(cat, "all") == 0)
        return M_UNEXPECTED;
    if (strcasecmp(cat, "hardware") == 0 && !has(item, "manual") && !has(item, "automatic"))
        return M_HARDWARE;
    return M_NONE;
}

/* The level a record names when no class of a set was derived from it:
 * every GPU failure (a GPU category whose item says so, not one part of
 * the GPU such as its memory), hardware failures, infrastructure failures
 * (unexpected interruptions), or none. */
static match_t category_level(const char *cat, const char *item)
{
    if (has(cat, "GPU") && (has(item, "GPU failure") || has(item, "GPU fault")))
        return M_GPU;
    if (has(cat, "hardware"))
        return M_HARDWARE;
    if (has(cat, "infrastructure"))
        return M_UNEXPECTED; /* every cause but the job's own code and planned work */
    return M_NONE;
}

static const char *match_name(match_t m)
{
    static const char *names[] = {"", "all interruptions", "unexpected interruptions",
                                  "planned interruptions", "hardware failures",
                                  "GPU failures"};
    return names[m];
}

static bool class_in(const failure_class_t *f, match_t m)
{
    switch (m) {
    case M_ALL: return true;
    case M_UNEXPECTED: return f->unexpected;
    case M_PLANNED: return !f->unexpected;
    case M_HARDWARE: return f->kind == FAIL_KIND_HARDWARE;
    case M_GPU: return strcasecmp(f->category, "GPU") == 0;
    default: return false;
    }
}

/* Expected interruptions per hour of the classes of s that m selects; a
 * GPU category a set lacks falls back to its hardware kind. */
static double rate_of(const failure_set_t *s, const cluster_t *c, match_t m, bool *fell_back)
{
    double r = 0;
    int hits = 0;
    for (int i = 0; i < s->n_classes; i++)
        if (class_in(&s->classes[i], m)) {
            r += failure_job_rate_per_hour(&s->classes[i], c);
            hits++;
        }
    *fell_back = false;
    if (hits == 0 && m == M_GPU) {
        bool ignore;
        *fell_back = true;
        return rate_of(s, c, M_HARDWARE, &ignore);
    }
    return r;
}

/* Classes of s derived from this record (its id in their evidence). */
static double evidence_rate(const failure_set_t *s, const cluster_t *c, const char *row_id,
                            int *hits, char *category, size_t cap)
{
    double r = 0;
    *hits = 0;
    for (int i = 0; i < s->n_classes; i++) {
        const failure_class_t *f = &s->classes[i];
        char list[70];
        snprintf(list, sizeof list, ",%s,", f->evidence);
        char key[24];
        snprintf(key, sizeof key, ",%s,", row_id);
        if (strstr(list, key)) {
            r += failure_job_rate_per_hour(f, c);
            (*hits)++;
            snprintf(category, cap, "%s", f->category);
        }
    }
    return r;
}

static int count_category(const failure_set_t *s, const char *category)
{
    int n = 0;
    for (int i = 0; i < s->n_classes; i++)
        n += strcasecmp(s->classes[i].category, category) == 0;
    return n;
}

/* error of a prediction against a value, a range or a lower bound */
static double error_of(double pred, double lo, double hi, bool lower_bound)
{
    if (lower_bound)
        return pred >= lo ? 0 : pred / lo - 1;
    if (pred >= lo && pred <= hi)
        return 0;
    return pred < lo ? pred / lo - 1 : pred / hi - 1;
}

/* A model size in the record's text ("Llama 3 405B" -> 405e9), or 0. */
static double params_in(const char *text)
{
    for (const char *p = text; *p; p++) {
        if (!isdigit((unsigned char)*p) || (p > text && isalnum((unsigned char)p[-1])))
            continue;
        char *end;
        double v = strtod(p, &end);
        if ((*end == 'B' || *end == 'b') && !isalnum((unsigned char)end[1]) && v > 0)
            return v * 1e9;
    }
    return 0;
}

static const char *skip(fv_row_t *r, const char *why)
{
    r->skipped = true;
    snprintf(r->reason, sizeof r->reason, "%s", why);
    return NULL;
}

/* The default set for the record (the in-fit view). */
static int choose_set(fv_row_t *r, const cluster_t *c, const char *text, const char *title,
                      failure_set_t *set, err_t *err)
{
    char env[24];
    int rc = failure_environment_of(text, env, sizeof env, err);
    if (rc)
        return rc;
    failure_choice_t ch;
    if ((rc = failure_choose(env, c->gpu.architecture, &ch, err)))
        return rc;
    snprintf(r->environment, sizeof r->environment, "%s", ch.environment);
    snprintf(r->set, sizeof r->set, "%s", ch.set);
    r->set_assumed = ch.assumed;
    if ((rc = failure_load_set(ch.set, set, err)))
        return rc;
    r->in_fit = failure_set_from(set, title);
    failure_set_t def;
    if ((rc = failure_load_set(NULL, &def, err)))
        return rc;
    r->default_source = failure_set_from(&def, title);
    return ERR_OK;
}

/* ---- leave-one-source-out ------------------------------------------- */

typedef struct {
    const failure_set_t *sets; /* every rate set of the catalog */
    size_t n;
} pool_t;

static bool in_level(const failure_class_t *f, failure_level_t l)
{
    switch (l) {
    case FAIL_LEVEL_GPU: return strcasecmp(f->category, "GPU") == 0;
    case FAIL_LEVEL_HARDWARE: return f->kind == FAIL_KIND_HARDWARE;
    case FAIL_LEVEL_UNEXPECTED: return f->unexpected;
    default: return true;
    }
}

/* A set's own evidence at level l: interruptions per hour on cluster c of
 * its classes inside l, copied classes left out. False when the set does
 * not count level l or cannot split it out (no class of that kind). */
static bool level_rate(const failure_set_t *s, const cluster_t *c, failure_level_t l,
                       double *rate)
{
    if (l > s->covers)
        return false;
    double r = 0;
    bool split = l == s->covers;
    for (int i = 0; i < s->n_classes; i++) {
        const failure_class_t *f = &s->classes[i];
        if (f->copied_from[0])
            continue; /* another source's evidence */
        if (in_level(f, l)) {
            r += failure_job_rate_per_hour(f, c);
            split = true;
        }
    }
    *rate = r;
    return split && r > 0;
}

/* The sets a record's prediction may use: evidence, not from its source. */
static bool usable(const failure_set_t *s, const char *title)
{
    return s->evidence && !failure_set_from(s, title);
}

/* shares[l]: the geometric mean, over the usable sets that count both, of
 * rate(level l) / rate(level l + 1); 0 when no set does. */
static void level_shares(const pool_t *p, const cluster_t *c, const char *title,
                         double shares[FAIL_LEVEL_COUNT])
{
    for (int l = 0; l + 1 < FAIL_LEVEL_COUNT; l++) {
        double sum = 0;
        int k = 0;
        for (size_t i = 0; i < p->n; i++) {
            double lo, hi;
            if (usable(&p->sets[i], title) && level_rate(&p->sets[i], c, l, &lo) &&
                level_rate(&p->sets[i], c, l + 1, &hi)) {
                sum += log(lo / hi);
                k++;
            }
        }
        shares[l] = k ? exp(sum / k) : 0;
    }
    shares[FAIL_LEVEL_COUNT - 1] = 1;
}

/* Set s's rate at level m: its own when it can split m out, else from its
 * nearest level through the shares (down: times, up: divided by). */
static bool set_at_level(const failure_set_t *s, const cluster_t *c, failure_level_t m,
                         const double shares[FAIL_LEVEL_COUNT], double *rate)
{
    if (level_rate(s, c, m, rate))
        return true;
    for (int d = 1; d < FAIL_LEVEL_COUNT; d++) {
        double r;
        int below = (int)m - d, above = (int)m + d;
        if (below >= 0 && level_rate(s, c, (failure_level_t)below, &r)) {
            for (int l = below; l < (int)m; l++) {
                /* no source counts planned maintenance besides: none assumed */
                double sh = shares[l] > 0 ? shares[l] : l == FAIL_LEVEL_UNEXPECTED ? 1 : 0;
                if (!(sh > 0))
                    return false;
                r /= sh;
            }
            *rate = r;
            return true;
        }
        if (above < FAIL_LEVEL_COUNT && level_rate(s, c, (failure_level_t)above, &r)) {
            for (int l = (int)m; l < above; l++) {
                double sh = shares[l] > 0 ? shares[l] : l == FAIL_LEVEL_UNEXPECTED ? 1 : 0;
                if (!(sh > 0))
                    return false;
                r *= sh;
            }
            *rate = r;
            return true;
        }
    }
    return false;
}

/* Planned maintenance per hour from a set's planned classes (none: false). */
static bool planned_rate(const failure_set_t *s, const cluster_t *c, double *rate)
{
    *rate = 0;
    for (int i = 0; i < s->n_classes; i++)
        if (!s->classes[i].unexpected && !s->classes[i].copied_from[0])
            *rate += failure_job_rate_per_hour(&s->classes[i], c);
    return *rate > 0;
}

/* The pooled rate per hour of the usable sets of environment env (every
 * environment when env is NULL) at level m (planned when planned): the
 * geometric mean with one vote per source. False when no set predicts. */
static bool pooled(const pool_t *p, const cluster_t *c, const char *title, const char *env,
                   int m, bool planned, const double shares[FAIL_LEVEL_COUNT], double *rate,
                   int *sources, char *names, size_t cap)
{
    double sum = 0, weight = 0;
    *sources = 0;
    names[0] = '\0';
    for (size_t i = 0; i < p->n; i++) {
        const failure_set_t *s = &p->sets[i];
        double r;
        if (!usable(s, title) || (env && strcmp(s->environment, env) != 0))
            continue;
        if (!(planned ? planned_rate(s, c, &r)
                      : set_at_level(s, c, (failure_level_t)m, shares, &r)))
            continue;
        int same = 0; /* sets of this source in the pool: one vote between them */
        for (size_t j = 0; j < p->n; j++) {
            double ignore;
            const failure_set_t *t = &p->sets[j];
            same += usable(t, title) && (!env || strcmp(t->environment, env) == 0) &&
                    strcmp(t->source_key, s->source_key) == 0 &&
                    (planned ? planned_rate(t, c, &ignore)
                             : set_at_level(t, c, (failure_level_t)m, shares, &ignore));
        }
        bool first = true;
        for (size_t j = 0; j < i; j++)
            first = first && !(usable(&p->sets[j], title) &&
                               strcmp(p->sets[j].source_key, s->source_key) == 0 &&
                               (!env || strcmp(p->sets[j].environment, env) == 0));
        *sources += first;
        sum += log(r) / same;
        weight += 1.0 / same;
        size_t used = strlen(names);
        snprintf(names + used, cap - used, "%s%s", used ? "+" : "", s->name);
    }
    if (!(weight > 0))
        return false;
    *rate = exp(sum / weight);
    return true;
}

/* The leave-one-source-out prediction of a record counting level m (or
 * planned maintenance), per hour of the job on c. */
static void heldout_predict(const pool_t *p, fv_row_t *r, const cluster_t *c, const char *title,
                            int m, bool planned, double *rate)
{
    double shares[FAIL_LEVEL_COUNT];
    level_shares(p, c, title, shares);
    char names[200];
    int k;
    r->heldout = pooled(p, c, title, r->environment, m, planned, shares, rate, &k, names,
                        sizeof names);
    if (r->heldout && k == 1 && !strchr(names, '+'))
        snprintf(r->heldout_set, sizeof r->heldout_set, "%s", names);
    else if (r->heldout)
        snprintf(r->heldout_set, sizeof r->heldout_set, "%d sources, %s", k, r->environment);
    else if ((r->heldout = pooled(p, c, title, NULL, m, planned, shares, rate, &k, names,
                                  sizeof names)))
        snprintf(r->heldout_set, sizeof r->heldout_set, "%d sources, every environment", k);
    r->heldout_sources = k;
}

/* The goodput of the record's run under the default policy. */
static int predict_goodput(fv_row_t *r, const cluster_t *c, const failure_set_t *set,
                           const char *system, err_t *err)
{
    double params = params_in(system);
    if (!(params > 0)) {
        skip(r, "no model size in the record (needed for the checkpoint)");
        return ERR_OK;
    }
    rel_config_t cfg;
    int rc = rel_config_init(&cfg, c, set, r->environment, err);
    if (rc)
        return rc;
    cfg.ckpt_bytes = params * REL_CKPT_BYTES_PER_PARAM;
    cfg.step_time_s = 10;
    cfg.tokens_per_step = 16e6;
    cfg.duration_s = r->window_days * 86400;
    snprintf(r->assumed, sizeof r->assumed,
             "checkpoint %.0fB parameters x 12 bytes, the default storage and policy; step 10 s "
             "ASSUMED (sets only the warm-up)",
             params / 1e9);
    rel_result_t res;
    if ((rc = rel_simulate(&cfg, &res, err)))
        return rc;
    r->predicted = res.goodput_mean;
    snprintf(r->counts, sizeof r->counts, "goodput, default policy");
    return ERR_OK;
}

/* |log2(pred / published)| against a value, a range or a lower bound. */
static double log2_error(double pred, double lo, double hi, bool lower_bound)
{
    if (!(pred > 0))
        return INFINITY;
    if (lower_bound)
        return pred >= lo ? 0 : log2(lo / pred);
    if (pred >= lo && pred <= hi)
        return 0;
    return pred < lo ? log2(lo / pred) : log2(pred / hi);
}

/* A leading number of a cell that is negative or not a number is bad
 * input, not a record to skip. */
static int check_cell(const csv_t *t, int i, const char *col, const char *file, err_t *err)
{
    const char *p = csv_get(t, i, col);
    while (*p == ' ' || *p == '~' || *p == '>' || *p == '=')
        p++;
    char *end;
    double v = strtod(p, &end);
    if (end != p && (!isfinite(v) || v < 0))
        return err_setf(err, ERR_INPUT, file, col, "row %s: must be a non-negative number (got '%s')",
                        csv_get(t, i, "row_id"), csv_get(t, i, col));
    return ERR_OK;
}

static match_t level_match(failure_level_t l)
{
    static const match_t m[FAIL_LEVEL_COUNT] = {M_GPU, M_HARDWARE, M_UNEXPECTED, M_ALL};
    return m[l];
}

/* A unit's node-day denominator: "per 1,000 node-days" or
 * "/1000 node-days" -> 1000, "per node-day" -> 1. */
static double node_days_per(const char *unit)
{
    const char *p = strstr(unit, "per ");
    p = p ? p + 4 : strchr(unit, '/');
    if (!p)
        return 1;
    while (*p == '/' || *p == ' ')
        p++;
    double v = 0;
    bool digits = false;
    for (; isdigit((unsigned char)*p) || (*p == ',' && digits); p++)
        if (*p != ',') {
            v = 10 * v + (*p - '0');
            digits = true;
        }
    return digits && v > 0 ? v : 1;
}

static bool node_day_unit(const char *unit)
{
    return has(unit, "node-day") || has(unit, "node day");
}

/* A rate record's figure per GPU-hour: an MTTF of a job on gpus GPUs is
 * 1 / (gpus x MTTF); failures per 1,000 node-days (Kokolis et al.'s r_f)
 * are per server of the record's GPU (c->gpus_per_host GPUs, 8 for the
 * DGX A100s it reports): r_f / 1000 / (GPUs per server x 24 h). */
static double published_rate(const char *unit, double v, int gpus, const cluster_t *c)
{
    if (node_day_unit(unit))
        return v / node_days_per(unit) / (c->gpus_per_host * 24.0);
    double mttf_h = v * (has(unit, "day") ? 24 : 1);
    return 1 / (gpus * mttf_h);
}

/* A count or rate record: the default set's prediction and the held-out
 * one, at the level the record counts. */
static void compare_counts(const pool_t *pool, fv_row_t *r, const cluster_t *c,
                           const failure_set_t *set, const char *title, const char *cat,
                           const char *item, const char *unit, bool as_rate)
{
    match_t m = aggregate_match(cat, item, unit);
    double hours = r->window_days * 24, rate = 0, lo = r->published;
    bool fell_back = false, per_category = false;
    int hits = 0;
    char category[32] = "";
    if (m == M_NONE) {
        rate = evidence_rate(set, c, r->row_id, &hits, category, sizeof category);
        /* no class was derived from this record: the level its category
         * names, if any ("GPU" failures, "hardware" ones) */
        if (hits == 0 && !(m = category_level(cat, item))) {
            skip(r, "no class of the rate set counts what this record counts");
            return;
        }
    }
    if (hits > 0) {
        snprintf(r->counts, sizeof r->counts, "%s", hits == 1 ? "its own class" : "its classes");
        /* the record covers its source's whole category: comparable with
         * another set's classes of that category */
        per_category = strcasecmp(category, "GPU") == 0 && count_category(set, category) == hits;
    } else {
        rate = rate_of(set, c, m, &fell_back);
        snprintf(r->counts, sizeof r->counts, "%s%s", match_name(m),
                 fell_back ? " (no GPU category: hardware)" : "");
    }
    double scale = as_rate ? 1.0 / r->gpus : hours;
    if (as_rate) {
        /* compare rates per GPU-hour */
        r->measure = FV_RATE;
        /* a longer MTTF is a lower rate: the range's ends swap */
        double a = published_rate(unit, lo, r->gpus, c);
        double b = published_rate(unit, r->published_high, r->gpus, c);
        r->published = fmin(a, b);
        r->published_high = fmax(a, b);
        r->lower_bound = false;
    } else {
        r->measure = FV_COUNT;
    }
    r->predicted = rate * scale;
    r->error = error_of(r->predicted, r->published, r->published_high, r->lower_bound);
    /* held out: a rate set derived without the record's source */
    match_t hm = m != M_NONE ? m : per_category ? M_GPU : M_NONE;
    if (hm == M_NONE)
        return;
    int level = 0;
    for (int l = 0; l < FAIL_LEVEL_COUNT; l++)
        if (level_match((failure_level_t)l) == hm)
            level = l;
    double hr = 0;
    heldout_predict(pool, r, c, title, level, hm == M_PLANNED, &hr);
    if (!r->heldout)
        return;
    r->heldout_predicted = hr * scale;
    r->heldout_error =
        error_of(r->heldout_predicted, r->published, r->published_high, r->lower_bound);
    r->heldout_log2 =
        log2_error(r->heldout_predicted, r->published, r->published_high, r->lower_bound);
}

/* The record's GPU type, or its source's for the same GPU count; a record
 * that states none is priced on H100 nodes of 8 (ASSUMED: only the GPU
 * and node counts enter a rate). False when a stated type is unknown. */
static bool record_gpu(const csv_t *t, int i, fv_row_t *r, cluster_t *c, char *buf, size_t cap)
{
    const char *title = csv_get(t, i, "source_title");
    snprintf(buf, cap, "%s", csv_get(t, i, "gpu_type"));
    for (int k = 0; !buf[0] && k < csv_rows(t); k++)
        if (k != i && strcmp(csv_get(t, k, "source_title"), title) == 0 &&
            gpus_of(csv_get(t, k, "num_gpus")) == r->gpus && csv_get(t, k, "gpu_type")[0])
            snprintf(buf, cap, "%s", csv_get(t, k, "gpu_type"));
    if (!buf[0] || has(buf, "not stated")) {
        snprintf(r->assumed, sizeof r->assumed,
                 "GPU type not stated: 8-GPU H100 nodes ASSUMED (only GPU and node counts "
                 "enter a rate)");
        snprintf(buf, cap, "H100");
        r->set_assumed = true;
    }
    return resolve_gpu(buf, c, r->gpus);
}

/* One record. */
static int replay_row(const pool_t *pool, const csv_t *t, int i, const char *file, fv_row_t *r,
                      err_t *err)
{
    memset(r, 0, sizeof *r);
    int rc;
    if ((rc = check_cell(t, i, "count_or_value", file, err)) ||
        (rc = check_cell(t, i, "observation_window", file, err)) ||
        (rc = check_cell(t, i, "num_gpus", file, err)))
        return rc;
    snprintf(r->row_id, sizeof r->row_id, "%s", csv_get(t, i, "row_id"));
    if (strlen(file) >= sizeof r->file)
        return err_setf(err, ERR_INPUT, file, NULL, "a file name longer than %zu bytes",
                        sizeof r->file - 1);
    memcpy(r->file, file, strlen(file) + 1);
    const char *title = csv_get(t, i, "source_title");
    const char *system = csv_get(t, i, "system_or_run");
    const char *cat = csv_get(t, i, "category"), *item = csv_get(t, i, "item");
    const char *unit = csv_get(t, i, "unit"), *value = csv_get(t, i, "count_or_value");
    snprintf(r->source, sizeof r->source, "%s", title);
    snprintf(r->system, sizeof r->system, "%s", system);
    snprintf(r->item, sizeof r->item, "%s", item);
    r->gpus = gpus_of(csv_get(t, i, "num_gpus"));
    r->window_days = parse_window_days(csv_get(t, i, "observation_window"));
    if (r->gpus < 1)
        return skip(r, "no GPU count"), ERR_OK;
    if (!(r->window_days > 0))
        return skip(r, "no observation window"), ERR_OK;
    char gpu_buf[96];
    cluster_t c;
    if (!record_gpu(t, i, r, &c, gpu_buf, sizeof gpu_buf))
        return skip(r, "the GPU type is not in the catalog"), ERR_OK;
    snprintf(r->gpu, sizeof r->gpu, "%s", c.gpu.name);
    double lo, hi;
    if (!parse_value(value, &lo, &hi, &r->lower_bound))
        return skip(r, "no number to compare"), ERR_OK;
    r->published = lo;
    r->published_high = hi;
    bool goodput = has(cat, "goodput") || unit[0] == '%';
    bool as_rate = mean_time(unit) || node_day_unit(unit);
    bool count = has(unit, "interruption") || has(unit, "restart") || has(unit, "failure") ||
                 has(unit, "case") || has(unit, "host") || has(unit, "fault") ||
                 has(unit, "incident") || has(unit, "crash");
    if (!goodput && !as_rate && !count)
        return skip(r, "not a count, a time to failure or a goodput"), ERR_OK;
    char text[400];
    snprintf(text, sizeof text, "%s %s %s", system, gpu_buf, title);
    failure_set_t set;
    bool gpu_assumed = r->set_assumed;
    if ((rc = choose_set(r, &c, text, title, &set, err)))
        return rc;
    r->set_assumed = r->set_assumed || gpu_assumed;
    if (goodput) {
        r->measure = FV_GOODPUT;
        r->published /= 100;
        r->published_high /= 100;
        if ((rc = predict_goodput(r, &c, &set, system, err)))
            return rc;
        if (!r->skipped)
            r->error = error_of(r->predicted, r->published, r->published_high, r->lower_bound);
        return ERR_OK;
    }
    compare_counts(pool, r, &c, &set, title, cat, item, unit, as_rate);
    return ERR_OK;
}

int fv_replay(const char *const *paths, int n_paths, fv_row_t **rows, int *n, err_t *err)
{
    *rows = NULL;
    *n = 0;
    fv_row_t *out = NULL;
    int total = 0, rc = ERR_OK;
    failure_set_t *sets = NULL;
    size_t n_sets = 0;
    if ((rc = failure_load_all(&sets, &n_sets, err)))
        return rc;
    pool_t pool = {sets, n_sets};
    for (int p = 0; p < n_paths && !rc; p++) {
        csv_t *t = NULL;
        if ((rc = csv_load(paths[p], &t, err)))
            break;
        /* a table of nothing would report medians over 0 records as if
         * it had validated something */
        if (csv_rows(t) == 0) {
            rc = err_setf(err, ERR_INPUT, paths[p], NULL,
                          "has no records (the file is empty or holds only a header)");
            csv_free(t);
            break;
        }
        static const char *need[] = {"row_id", "source_title", "system_or_run", "gpu_type",
                                     "num_gpus", "observation_window", "category", "item",
                                     "count_or_value", "unit"};
        for (size_t k = 0; k < sizeof need / sizeof need[0] && !rc; k++)
            if (!csv_get(t, 0, need[k]) && csv_rows(t) > 0)
                rc = err_setf(err, ERR_INPUT, paths[p], need[k],
                              "missing column (the columns of failures.csv)");
        int m = csv_rows(t);
        fv_row_t *grown = rc ? NULL : realloc(out, (size_t)(total + m + 1) * sizeof *out);
        if (!rc && !grown)
            rc = err_set(err, ERR_RUNTIME, "out of memory");
        if (grown)
            out = grown;
        const char *base = strrchr(paths[p], '/');
        base = base ? base + 1 : paths[p];
        for (int i = 0; i < m && !rc; i++)
            rc = replay_row(&pool, t, i, base, &out[total++], err);
        csv_free(t);
    }
    free(sets);
    if (rc) {
        free(out);
        return rc;
    }
    *rows = out;
    *n = total;
    return ERR_OK;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

void fv_summary(const fv_row_t *rows, int n, fv_subset_t which, double *median, double *p90,
                int *count)
{
    *median = *p90 = NAN;
    *count = 0;
    double *v = malloc((size_t)(n > 0 ? n : 1) * sizeof *v);
    if (!v)
        return;
    int k = 0;
    for (int i = 0; i < n; i++) {
        const fv_row_t *r = &rows[i];
        if (r->skipped)
            continue;
        bool g = r->measure == FV_GOODPUT;
        switch (which) {
        case FV_GOODPUTS:
            if (g)
                v[k++] = fabs(r->error);
            break;
        case FV_ALL:
            if (!g)
                v[k++] = fabs(r->error);
            break;
        case FV_OUT_OF_FIT:
            if (!g && !r->in_fit)
                v[k++] = fabs(r->error);
            break;
        case FV_BEYOND_DEFAULT:
            if (!g && !r->default_source)
                v[k++] = fabs(r->error);
            break;
        case FV_HELD_OUT:
            if (!g && r->heldout)
                v[k++] = fabs(r->heldout_error);
            break;
        }
    }
    if (k > 0) {
        qsort(v, (size_t)k, sizeof *v, cmp_double);
        *median = k % 2 ? v[k / 2] : 0.5 * (v[k / 2 - 1] + v[k / 2]);
        *p90 = v[(int)ceil(0.9 * k) - 1];
    }
    *count = k;
    free(v);
}

void fv_heldout_log2(const fv_row_t *rows, int n, double *median, double *worst,
                     const fv_row_t **worst_row, int *count)
{
    *median = *worst = NAN;
    *worst_row = NULL;
    *count = 0;
    double *v = malloc((size_t)(n > 0 ? n : 1) * sizeof *v);
    if (!v)
        return;
    int k = 0;
    for (int i = 0; i < n; i++) {
        const fv_row_t *r = &rows[i];
        if (r->skipped || r->measure == FV_GOODPUT || !r->heldout)
            continue;
        v[k++] = r->heldout_log2;
        if (!*worst_row || r->heldout_log2 > (*worst_row)->heldout_log2)
            *worst_row = r;
    }
    if (k > 0) {
        qsort(v, (size_t)k, sizeof *v, cmp_double);
        *median = k % 2 ? v[k / 2] : 0.5 * (v[k / 2 - 1] + v[k / 2]);
        *worst = v[k - 1];
    }
    *count = k;
    free(v);
}
