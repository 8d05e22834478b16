#include "common/units.h"

#include "common/numfmt.h"

#include <ctype.h>
#include <stdbool.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* Split text into a leading number and a unit suffix (spaces between are
 * allowed, trailing spaces ignored). Commas and underscores inside the
 * number are digit separators. Returns 0 and fills *num and unit, or -1. */
static int split_number(const char *text, double *num, char *unit, size_t cap)
{
    char digits[64];
    size_t n = 0;
    const char *p = text;
    while (isspace((unsigned char)*p))
        p++;
    const char *start = p;
    for (; *p && n + 1 < sizeof digits; p++) {
        if (*p == ',' || *p == '_') {
            if (p == start)
                return -1;
            continue;
        }
        if (isdigit((unsigned char)*p) || *p == '.' || *p == '-' ||
            *p == '+') {
            digits[n++] = *p;
            continue;
        }
        /* An exponent only when followed by a digit or sign: "2e12" is a
         * number, while "2E" would not be. */
        if ((*p == 'e' || *p == 'E') && n > 0 &&
            (isdigit((unsigned char)p[1]) ||
             ((p[1] == '-' || p[1] == '+') && isdigit((unsigned char)p[2])))) {
            digits[n++] = *p;
            continue;
        }
        break;
    }
    digits[n] = '\0';
    if (n == 0)
        return -1;
    char *end;
    errno = 0;
    double v = strtod(digits, &end);
    if (*end != '\0' || end == digits)
        return -1;
    while (isspace((unsigned char)*p))
        p++;
    size_t ulen = strlen(p);
    while (ulen > 0 && isspace((unsigned char)p[ulen - 1]))
        ulen--;
    if (ulen + 1 > cap)
        return -1;
    memcpy(unit, p, ulen);
    unit[ulen] = '\0';
    *num = v;
    return 0;
}

static int bad(err_t *err, const char *what, const char *text,
               const char *example)
{
    return err_setf(err, ERR_INPUT, NULL, what, "cannot read '%s'; write %s",
                    text, example);
}

static int check_value(double v, const char *what, const char *text, err_t *err)
{
    if (!isfinite(v))
        return err_setf(err, ERR_INPUT, NULL, what,
                        "must be a finite number (got '%s')", text);
    if (v < 0 || signbit(v))
        return err_setf(err, ERR_INPUT, NULL, what,
                        "must not be negative (got '%s')", text);
    return ERR_OK;
}

int units_positive(double value, const char *what, err_t *err)
{
    if (!(value > 0) || !isfinite(value))
        return err_setf(err, ERR_INPUT, NULL, what,
                        "must be greater than zero (got %g)", value);
    return ERR_OK;
}

static double si_factor(char c)
{
    switch (c) {
    case 'k':
    case 'K':
        return 1e3;
    case 'm': /* counts have no milli; 'm' here means million */
    case 'M':
        return 1e6;
    case 'b':
    case 'B':
    case 'g':
    case 'G':
        return 1e9;
    case 't':
    case 'T':
        return 1e12;
    case 'p':
    case 'P':
        return 1e15;
    default:
        return 0;
    }
}

int units_parse_count(const char *text, const char *what, double *out,
                      err_t *err)
{
    static const char *example = "a count like 2T, 1.5e12, 500B or 300M";
    double v;
    char unit[32];
    if (!text || split_number(text, &v, unit, sizeof unit) != 0)
        return bad(err, what, text ? text : "", example);
    double f = 1;
    if (unit[0]) {
        f = si_factor(unit[0]);
        /* allow a trailing word such as "2T tokens" */
        const char *rest = unit + 1;
        while (isspace((unsigned char)*rest))
            rest++;
        if (f == 0 || (*rest && strcasecmp(rest, "tokens") != 0 &&
                       strcasecmp(rest, "tok") != 0))
            return bad(err, what, text, example);
    }
    v *= f;
    int rc = check_value(v, what, text, err);
    if (rc)
        return rc;
    *out = v;
    return ERR_OK;
}

struct unit_entry {
    const char *name;
    double factor;
};

static int lookup_unit(const struct unit_entry *table, const char *unit,
                       int case_sensitive, double *factor)
{
    for (const struct unit_entry *e = table; e->name; e++) {
        int same = case_sensitive ? strcmp(e->name, unit) == 0
                                  : strcasecmp(e->name, unit) == 0;
        if (same) {
            *factor = e->factor;
            return 0;
        }
    }
    return -1;
}

/* Parse "<number><unit>" with the unit's factor from table. */
static int parse_scaled(const char *text, const char *what,
                        const struct unit_entry *table, int case_sensitive,
                        const char *example, double *out, err_t *err)
{
    double v, f;
    char unit[32];
    if (!text || split_number(text, &v, unit, sizeof unit) != 0 ||
        lookup_unit(table, unit, case_sensitive, &f) != 0)
        return bad(err, what, text ? text : "", example);
    v *= f;
    int rc = check_value(v, what, text, err);
    if (rc)
        return rc;
    *out = v;
    return ERR_OK;
}

int units_parse_bytes(const char *text, const char *what, double *bytes,
                      err_t *err)
{
    static const struct unit_entry table[] = {
        {"", 1},          {"B", 1},         {"KB", 1e3},
        {"MB", 1e6},      {"GB", 1e9},      {"TB", 1e12},
        {"PB", 1e15},     {"KiB", 1024.0},  {"MiB", 1048576.0},
        {"GiB", GIB},     {"TiB", GIB * 1024}, {"PiB", GIB * 1048576.0},
        {"K", 1e3},       {"M", 1e6},       {"G", 1e9},
        {"T", 1e12},      {NULL, 0}};
    static const char *example = "a size like 80GiB, 80GB or 512MiB";
    return parse_scaled(text, what, table, 0, example, bytes, err);
}

int units_parse_bandwidth(const char *text, const char *what,
                          double *bytes_per_s, err_t *err)
{
    /* Case matters: b is a bit, B a byte. */
    static const struct unit_entry table[] = {
        {"bps", 1.0 / 8},   {"Kbps", 1e3 / 8},  {"Mbps", 1e6 / 8},
        {"Gbps", 1e9 / 8},  {"Tbps", 1e12 / 8}, {"b/s", 1.0 / 8},
        {"Kb/s", 1e3 / 8},  {"Mb/s", 1e6 / 8},  {"Gb/s", 1e9 / 8},
        {"Tb/s", 1e12 / 8}, {"Gbit/s", 1e9 / 8}, {"B/s", 1},
        {"KB/s", 1e3},      {"MB/s", 1e6},      {"GB/s", 1e9},
        {"TB/s", 1e12},     {"Bps", 1},         {"KBps", 1e3},
        {"MBps", 1e6},      {"GBps", 1e9},      {"TBps", 1e12},
        {"GiB/s", GIB},     {"MiB/s", 1048576.0}, {NULL, 0}};
    static const char *example =
        "a bandwidth like 400Gbps (bits) or 900GB/s (bytes)";
    return parse_scaled(text, what, table, 1, example, bytes_per_s, err);
}

int units_parse_duration(const char *text, const char *what, double *seconds,
                         err_t *err)
{
    static const struct unit_entry table[] = {
        {"", 1},           {"us", 1e-6},       {"ms", 1e-3},
        {"s", 1},          {"sec", 1},         {"secs", 1},
        {"second", 1},     {"seconds", 1},     {"m", 60},
        {"min", 60},       {"mins", 60},       {"minute", 60},
        {"minutes", 60},   {"h", 3600},        {"hr", 3600},
        {"hrs", 3600},     {"hour", 3600},     {"hours", 3600},
        {"d", 86400},      {"day", 86400},     {"days", 86400},
        {"w", 604800},     {"week", 604800},   {"weeks", 604800},
        {NULL, 0}};
    static const char *example = "a duration like 90s, 30m, 2h, 14d or 2w";
    return parse_scaled(text, what, table, 0, example, seconds, err);
}

int units_parse_price(const char *text, const char *what, double *usd_per_hour,
                      err_t *err)
{
    static const struct unit_entry per[] = {
        {"", 1},         {"h", 1},          {"hr", 1},
        {"hour", 1},     {"gpu-h", 1},      {"gpu-hr", 1},
        {"gpu-hour", 1}, {"gpuh", 1},       {"day", 1.0 / 24},
        {"d", 1.0 / 24}, {"month", 1.0 / 730}, {"mo", 1.0 / 730},
        {NULL, 0}};
    static const char *example = "a price like $2.49/h or 2.49 (USD per GPU-hour)";
    if (!text)
        return bad(err, what, "", example);
    const char *p = text;
    while (isspace((unsigned char)*p))
        p++;
    if (*p == '$')
        p++;
    double v;
    char unit[32];
    if (split_number(p, &v, unit, sizeof unit) != 0)
        return bad(err, what, text, example);
    const char *u = unit;
    if (*u == '/')
        u++;
    double f;
    if ((unit[0] && unit[0] != '/') || lookup_unit(per, u, 0, &f) != 0)
        return bad(err, what, text, example);
    v *= f;
    int rc = check_value(v, what, text, err);
    if (rc)
        return rc;
    *usd_per_hour = v;
    return ERR_OK;
}

int units_parse_money(const char *text, const char *what, double *usd,
                      err_t *err)
{
    static const char *example = "an amount like $500k, 500000 or $2.5M";
    if (!text)
        return bad(err, what, "", example);
    const char *p = text;
    while (isspace((unsigned char)*p))
        p++;
    if (*p == '$')
        p++;
    double v;
    char unit[32];
    if (split_number(p, &v, unit, sizeof unit) != 0)
        return bad(err, what, text, example);
    double f = 1;
    if (unit[0]) {
        if (unit[1] != '\0')
            return bad(err, what, text, example);
        if (unit[0] == 'k' || unit[0] == 'K')
            f = 1e3;
        else if (unit[0] == 'M' || unit[0] == 'm')
            f = 1e6;
        else if (unit[0] == 'B' || unit[0] == 'b')
            f = 1e9;
        else
            return bad(err, what, text, example);
    }
    v *= f;
    int rc = check_value(v, what, text, err);
    if (rc)
        return rc;
    *usd = v;
    return ERR_OK;
}

/* The number part of a plain numeral: an optional sign, digits with at most
 * one point, an optional exponent. Returns the length of the numeral at
 * text (0 when there is none); strtod is never shown "nan", "inf" or hex. */
static size_t numeral_length(const char *text)
{
    const char *p = text;
    if (*p == '+' || *p == '-')
        p++;
    size_t digits = 0;
    bool point = false;
    for (; isdigit((unsigned char)*p) || (*p == '.' && !point); p++) {
        if (*p == '.')
            point = true;
        else
            digits++;
    }
    if (digits == 0)
        return 0;
    if ((*p == 'e' || *p == 'E') &&
        (isdigit((unsigned char)p[1]) ||
         ((p[1] == '+' || p[1] == '-') && isdigit((unsigned char)p[2])))) {
        p += 2;
        while (isdigit((unsigned char)*p))
            p++;
    }
    return (size_t)(p - text);
}

int units_parse_int(const char *text, const char *what, long lo, long hi,
                    long *out, err_t *err)
{
    if (!text || !*text)
        return err_setf(err, ERR_INPUT, NULL, what, "needs a whole number");
    size_t n = numeral_length(text);
    double factor = 1;
    const char *rest = text + n;
    if (n > 0 && (*rest == 'k' || *rest == 'K')) {
        factor = 1024; /* GPU counts and batch sizes: 16k = 16384 */
        rest++;
    } else if (n > 0 && *rest == 'M') {
        factor = 1024.0 * 1024;
        rest++;
    }
    if (n == 0 || n >= 64 || *rest != '\0')
        return err_setf(err, ERR_INPUT, NULL, what,
                        "must be a whole number like 8, 16k or 1e3 (got '%s')", text);
    char num[64];
    memcpy(num, text, n);
    num[n] = '\0';
    double v = strtod(num, NULL) * factor;
    if (!isfinite(v) || v != floor(v))
        return err_setf(err, ERR_INPUT, NULL, what, "must be a whole number (got '%s')", text);
    /* the range check comes before the conversion to long */
    if (v < (double)lo || v > (double)hi)
        return err_setf(err, ERR_INPUT, NULL, what,
                        "must be between %ld and %ld (got '%s')", lo, hi, text);
    *out = (long)v;
    return ERR_OK;
}

int units_parse_real(const char *text, const char *what, double lo, double hi,
                     double *out, err_t *err)
{
    size_t n = text ? numeral_length(text) : 0;
    if (n == 0 || text[n] != '\0')
        return err_setf(err, ERR_INPUT, NULL, what, "must be a number like 0.5 or 1e-4 (got '%s')",
                        text ? text : "");
    double v = strtod(text, NULL);
    if (!isfinite(v))
        return err_setf(err, ERR_INPUT, NULL, what, "must be a finite number (got '%s')", text);
    if (v == 0)
        v = 0; /* -0 reads as 0 */
    if (!(v >= lo && v <= hi))
        return err_setf(err, ERR_INPUT, NULL, what, "must be from %g to %g (got '%s')", lo, hi,
                        text);
    *out = v;
    return ERR_OK;
}

/* The printers of counts, durations and money are common/numfmt's, the one
 * place numbers for people are formatted. */
const char *units_fmt_count(double v, char *buf, size_t cap)
{
    return numfmt_count(v, buf, cap);
}

const char *units_fmt_bytes(double bytes, char *buf, size_t cap)
{
    static const char *names[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
    double v = bytes;
    size_t i = 0;
    while (fabs(v) >= 1024 && i + 1 < sizeof names / sizeof names[0]) {
        v /= 1024;
        i++;
    }
    if (i == 0)
        snprintf(buf, cap, "%.0f B", v);
    else
        snprintf(buf, cap, fabs(v) < 10 ? "%.2f %s" : "%.1f %s", v, names[i]);
    return buf;
}

const char *units_fmt_bandwidth(double bytes_per_s, char *buf, size_t cap)
{
    static const char *names[] = {"B/s", "KB/s", "MB/s", "GB/s", "TB/s"};
    double v = bytes_per_s;
    size_t i = 0;
    while (fabs(v) >= 1000 && i + 1 < sizeof names / sizeof names[0]) {
        v /= 1000;
        i++;
    }
    snprintf(buf, cap, "%.1f %s", v, names[i]);
    return buf;
}

const char *units_fmt_duration(double s, char *buf, size_t cap)
{
    return numfmt_duration(s, buf, cap);
}

const char *units_fmt_usd(double usd, char *buf, size_t cap)
{
    return numfmt_usd(usd, buf, cap);
}
