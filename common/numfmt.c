#include "common/numfmt.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static void group_thousands(char *buf, size_t cap);

void numfmt_group(char *buf, size_t cap)
{
    char *digits = buf + (buf[0] == '-');
    size_t n = strspn(digits, "0123456789");
    const char *rest = digits + n;
    if (*rest == '.')
        rest += 1 + strspn(rest + 1, "0123456789");
    if (n > 4 && *rest == '\0') /* a plain number with five or more integer digits */
        group_thousands(digits, cap - (size_t)(digits - buf));
}

/* Insert thousands separators into the integer part of a formatted
 * non-negative number in place (buf holds digits, maybe ".ddd"). */
static void group_thousands(char *buf, size_t cap)
{
    size_t int_len = strcspn(buf, ".");
    size_t commas = int_len > 3 ? (int_len - 1) / 3 : 0;
    size_t len = strlen(buf);
    if (commas == 0 || len + commas + 1 > cap)
        return;
    memmove(buf + int_len + commas, buf + int_len, len - int_len + 1);
    size_t src = int_len, dst = int_len + commas;
    for (size_t k = 0; src > 0; k++) {
        if (k > 0 && k % 3 == 0)
            buf[--dst] = ',';
        buf[--dst] = buf[--src];
    }
}

/* "-" before the text of |v| when v is negative. */
static const char *signed_text(double v, const char *abs_text, char *buf, size_t cap)
{
    snprintf(buf, cap, "%s%s", v < 0 ? "-" : "", abs_text);
    return buf;
}

/* |v| (finite, >= 0) to three significant digits, no exponent. */
static void three_digits(double a, char *out, size_t cap)
{
    if (a == 0) {
        snprintf(out, cap, "0");
        return;
    }
    if (a < 0.0005) {
        snprintf(out, cap, "<0.001");
        return;
    }
    int mag = (int)floor(log10(a)); /* 10^mag <= a < 10^(mag+1) */
    int decimals = mag >= 2 ? 0 : 2 - mag;
    if (decimals > 0) {
        /* rounding may carry into the next magnitude (9.996 -> 10.0) */
        double r = round(a * pow(10, decimals)) / pow(10, decimals);
        if (r >= pow(10, mag + 1) && decimals > 0)
            decimals--;
    }
    snprintf(out, cap, "%.*f", decimals, a);
}

const char *numfmt_real(double v, char *buf, size_t cap)
{
    if (!isfinite(v))
        return signed_text(0, "n/a", buf, cap);
    char t[64];
    three_digits(fabs(v), t, sizeof t);
    if (strchr(t, '.')) { /* 0.0230 -> 0.023, 2.80 -> 2.8, 1.00 -> 1 */
        size_t n = strlen(t);
        while (n > 0 && t[n - 1] == '0')
            t[--n] = '\0';
        if (n > 0 && t[n - 1] == '.')
            t[--n] = '\0';
    }
    if (fabs(v) >= 9999.5) {
        snprintf(t, sizeof t, "%.0f", fabs(v));
        group_thousands(t, sizeof t);
    }
    return signed_text(v, t, buf, cap);
}

const char *numfmt_int(double v, char *buf, size_t cap)
{
    if (!isfinite(v))
        return signed_text(0, "n/a", buf, cap);
    char t[64];
    snprintf(t, sizeof t, "%.0f", fabs(v));
    group_thousands(t, sizeof t);
    return signed_text(round(v) < 0 ? -1 : 1, t, buf, cap);
}

const char *numfmt_count(double v, char *buf, size_t cap)
{
    static const char *suffix[] = {"", "k", "M", "B", "T", "P", "E", "Z", "Y"};
    enum { N_SUFFIX = sizeof suffix / sizeof suffix[0] };
    if (!isfinite(v))
        return signed_text(0, "n/a", buf, cap);
    double a = fabs(v);
    char t[64];
    if (a < 999.5) {
        if (a == floor(a))
            snprintf(t, sizeof t, "%.0f", a);
        else
            three_digits(a, t, sizeof t);
        return signed_text(v, t, buf, cap);
    }
    int k = 0;
    while (k + 1 < N_SUFFIX && a >= 999.5) {
        a /= 1000;
        k++;
    }
    /* three significant digits, one decimal kept below 10 */
    double r2 = round(a * 100) / 100, r1 = round(a * 10) / 10;
    if (a < 9.995)
        snprintf(t, sizeof t, r2 == r1 ? "%.1f%s" : "%.2f%s", r2, suffix[k]);
    else if (a < 99.95)
        snprintf(t, sizeof t, "%.1f%s", r1, suffix[k]);
    else
        snprintf(t, sizeof t, "%.0f%s", round(a), suffix[k]);
    return signed_text(v, t, buf, cap);
}

const char *numfmt_duration(double s, char *buf, size_t cap)
{
    if (!isfinite(s))
        snprintf(buf, cap, "n/a");
    else if (s < 1e-3)
        snprintf(buf, cap, "%.1f us", s * 1e6);
    else if (s < 1)
        snprintf(buf, cap, "%.1f ms", s * 1e3);
    else if (s < 120)
        snprintf(buf, cap, "%.2f s", s);
    else if (s < 7200)
        snprintf(buf, cap, "%.1f min", s / 60);
    else if (s < 2 * 86400)
        snprintf(buf, cap, "%.1f h", s / 3600);
    else if (s < 1000 * 86400)
        snprintf(buf, cap, "%.1f d", s / 86400);
    else {
        char y[32];
        snprintf(buf, cap, "%s y", numfmt_count(s / (365.25 * 86400), y, sizeof y));
    }
    return buf;
}

const char *numfmt_usd(double usd, char *buf, size_t cap)
{
    if (!isfinite(usd))
        return signed_text(0, "n/a", buf, cap);
    char t[64];
    if (fabs(usd) < 99.995)
        snprintf(t, sizeof t, "$%.2f", fabs(usd));
    else {
        snprintf(t + 1, sizeof t - 1, "%.0f", fabs(usd));
        group_thousands(t + 1, sizeof t - 1);
        t[0] = '$';
    }
    return signed_text(usd <= -0.005 ? -1 : 1, t, buf, cap);
}

const char *numfmt_pct(double fraction, const char *basis, char *buf, size_t cap)
{
    if (!isfinite(fraction))
        snprintf(buf, cap, "n/a");
    else
        snprintf(buf, cap, "%.1f%%%s%s", 100 * fraction, basis && *basis ? " " : "",
                 basis ? basis : "");
    return buf;
}
