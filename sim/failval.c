#include "sim/failval.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common/csv.h"
#include "sim/reliability.h"
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

/* A published figure: "148", "~10", ">=35", "70+", ">100", "1-2", ">90".
 * False when the text holds no number. */
static bool parse_value(const char *text, double *lo, double *hi, bool *lower_bound)
{
    *lower_bound = false;
    const char *p = text;
    while (*p == ' ' || *p == '~')
        p++;
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

/* "54 days", "11 months, ...", "1 week (...)", "~2 months": days, or 0. */
static double parse_window_days(const char *text)
{
    const char *p = text;
    while (*p == ' ' || *p == '~')
        p++;
    char *end;
    double v = strtod(p, &end);
    if (end == p || !(v > 0))
        return 0;
    while (*end == ' ')
        end++;
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

static match_t aggregate_match(const char *cat, const char *item, const char *unit)
{
    if (strcasecmp(cat, "total") == 0)
        return has(item, "planned") && !has(item, "unexpected")
                   ? M_PLANNED
                   : has(item, "unexpected") ? M_UNEXPECTED : M_ALL;
    if (has(cat, "GPU (all"))
        return M_GPU;
    if (has(cat, "MTTF"))
        return has(unit, "projected") ? M_HARDWARE : M_UNEXPECTED; /* projected from r_f */
    if (strcasecmp(cat, "all") == 0)
        return M_UNEXPECTED;
    if (strcasecmp(cat, "hardware") == 0 && !has(item, "manual") && !has(item, "automatic"))
        return M_HARDWARE;
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

/* The default set for the record and the held-out one. */
static int choose_sets(fv_row_t *r, const cluster_t *c, const char *text, const char *title,
                       failure_set_t *set, failure_set_t *held, bool *have_held, err_t *err)
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
    r->in_fit = has(title, set->source_key);
    failure_set_t def;
    if ((rc = failure_load_set(NULL, &def, err)))
        return rc;
    r->default_source = has(title, def.source_key);
    *have_held = false;
    for (int k = 0; k < ch.n_chain && !*have_held; k++) {
        if ((rc = failure_load_set(ch.chain[k], held, err)))
            return rc;
        if (!has(title, held->source_key)) {
            *have_held = true;
            snprintf(r->heldout_set, sizeof r->heldout_set, "%s", held->name);
        }
    }
    return ERR_OK;
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

/* One record. */
static int replay_row(const csv_t *t, int i, const char *file, fv_row_t *r, err_t *err)
{
    memset(r, 0, sizeof *r);
    snprintf(r->row_id, sizeof r->row_id, "%s", csv_get(t, i, "row_id"));
    snprintf(r->file, sizeof r->file, "%s", file);
    const char *title = csv_get(t, i, "source_title");
    const char *system = csv_get(t, i, "system_or_run");
    const char *gpu_text = csv_get(t, i, "gpu_type");
    const char *cat = csv_get(t, i, "category"), *item = csv_get(t, i, "item");
    const char *unit = csv_get(t, i, "unit"), *value = csv_get(t, i, "count_or_value");
    snprintf(r->source, sizeof r->source, "%s", title);
    snprintf(r->system, sizeof r->system, "%s", system);
    snprintf(r->item, sizeof r->item, "%s", item);
    r->gpus = atoi(csv_get(t, i, "num_gpus"));
    r->window_days = parse_window_days(csv_get(t, i, "observation_window"));
    if (r->gpus < 1)
        return skip(r, "no GPU count"), ERR_OK;
    if (!(r->window_days > 0))
        return skip(r, "no observation window"), ERR_OK;
    /* a record without a GPU type takes the one its source gives for the
     * same GPU count */
    char gpu_buf[96];
    snprintf(gpu_buf, sizeof gpu_buf, "%s", gpu_text);
    for (int k = 0; !gpu_buf[0] && k < csv_rows(t); k++)
        if (k != i && strcmp(csv_get(t, k, "source_title"), title) == 0 &&
            atoi(csv_get(t, k, "num_gpus")) == r->gpus && csv_get(t, k, "gpu_type")[0])
            snprintf(gpu_buf, sizeof gpu_buf, "%s", csv_get(t, k, "gpu_type"));
    cluster_t c;
    if (!resolve_gpu(gpu_buf, &c, r->gpus))
        return skip(r, "the GPU type is not stated or not in the catalog"), ERR_OK;
    snprintf(r->gpu, sizeof r->gpu, "%s", c.gpu.name);
    double lo, hi;
    if (!parse_value(value, &lo, &hi, &r->lower_bound))
        return skip(r, "no number to compare"), ERR_OK;
    r->published = lo;
    r->published_high = hi;
    bool goodput = has(cat, "goodput") || unit[0] == '%';
    bool mttf = has(unit, "MTTF");
    bool count = has(unit, "interruption") || has(unit, "restart") || has(unit, "failure") ||
                 has(unit, "case") || has(unit, "host");
    if (!goodput && !mttf && !count)
        return skip(r, "not a count, a time to failure or a goodput"), ERR_OK;
    char text[400];
    snprintf(text, sizeof text, "%s %s %s", system, gpu_buf, title);
    failure_set_t set, held;
    bool have_held;
    int rc = choose_sets(r, &c, text, title, &set, &held, &have_held, err);
    if (rc)
        return rc;
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
    /* what is compared: the record's own classes, or an aggregate */
    match_t m = aggregate_match(cat, item, unit);
    double hours = r->window_days * 24, rate = 0;
    bool fell_back = false, per_category = false;
    int hits = 0;
    char category[32] = "";
    if (m == M_NONE) {
        rate = evidence_rate(&set, &c, r->row_id, &hits, category, sizeof category);
        if (hits == 0)
            return skip(r, "no class of the rate set counts what this record counts"), ERR_OK;
        snprintf(r->counts, sizeof r->counts, "%s", hits == 1 ? "its own class" : "its classes");
        /* the record covers its source's whole category: comparable with
         * another set's classes of that category */
        per_category = strcasecmp(category, "GPU") == 0 && count_category(&set, category) == hits;
    } else {
        rate = rate_of(&set, &c, m, &fell_back);
        snprintf(r->counts, sizeof r->counts, "%s%s", match_name(m),
                 fell_back ? " (no GPU category: hardware)" : "");
    }
    if (mttf) {
        /* compare rates per GPU-hour: 1 / (GPUs x MTTF) */
        r->measure = FV_RATE;
        double mttf_h = lo * (has(unit, "day") ? 24 : 1);
        r->published = r->published_high = 1 / (r->gpus * mttf_h);
        r->lower_bound = false;
        r->predicted = rate / r->gpus;
    } else {
        r->measure = FV_COUNT;
        r->predicted = rate * hours;
    }
    r->error = error_of(r->predicted, r->published, r->published_high, r->lower_bound);
    /* held out: the next default set from another source */
    match_t hm = m != M_NONE ? m : per_category ? M_GPU : M_NONE;
    if (have_held && hm != M_NONE) {
        double hr = rate_of(&held, &c, hm, &fell_back);
        r->heldout = true;
        r->heldout_predicted = mttf ? hr / r->gpus : hr * hours;
        r->heldout_error =
            error_of(r->heldout_predicted, r->published, r->published_high, r->lower_bound);
    }
    return ERR_OK;
}

int fv_replay(const char *const *paths, int n_paths, fv_row_t **rows, int *n, err_t *err)
{
    *rows = NULL;
    *n = 0;
    fv_row_t *out = NULL;
    int total = 0, rc = ERR_OK;
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
            rc = replay_row(t, i, base, &out[total++], err);
        csv_free(t);
    }
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
