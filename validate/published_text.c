/* A cell's text read as numbers and words (split off from published.c,
 * issue 34): the numbers and degrees the columns write as other tables
 * spell them ("8K", "14,080", "~1.2k", "TP=8", "8 nodes (64 GPUs)"). */
#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "validate/publishedInt.h"

/* ------------------------------------------------------------ text */

/* A row's cell, "" for a column the file does not have (only REQUIRED
 * ones must be there). */
const char *pub_cell(const csv_t *c, int row, const char *column)
{
    const char *v = csv_get(c, row, column);
    return v ? v : "";
}

/* The first place needle stands in hay, case aside; NULL when nowhere. */
const char *pub_find_ci(const char *hay, const char *needle)
{
    size_t n = strlen(needle);
    for (const char *p = hay; p && *p; p++)
        if (strncasecmp(p, needle, n) == 0)
            return p;
    return NULL;
}

bool pub_has(const char *hay, const char *needle)
{
    return pub_find_ci(hay, needle) != NULL;
}

/* The number a cell starts with ("8192 (default config)", "14,080",
 * "~1.2k", "4M tokens"), NAN if none: thousands separated by commas, and a
 * k, M or B right after the digits scales it by powers of 1000, or by
 * powers of 1024 where binary is set (sequence lengths and batches of
 * tokens: "8K" is 8,192, "4M tokens" 4,194,304). */
double pub_lead_num_base(const char *s, bool binary)
{
    if (!s)
        return NAN;
    while (*s == ' ' || *s == '~')
        s++;
    char digits[64];
    size_t n = 0;
    const char *p = s;
    if (*p == '+' || *p == '-')
        digits[n++] = *p++;
    for (; *p && n + 1 < sizeof digits; p++) {
        if (isdigit((unsigned char)*p) || *p == '.' || *p == 'e' || *p == 'E' ||
            ((*p == '+' || *p == '-') && n && (digits[n - 1] == 'e' || digits[n - 1] == 'E')))
            digits[n++] = *p;
        else if (*p == ',' && n && isdigit((unsigned char)digits[n - 1]) &&
                 isdigit((unsigned char)p[1]) && isdigit((unsigned char)p[2]) &&
                 isdigit((unsigned char)p[3]) && !isdigit((unsigned char)p[4]))
            continue; /* a thousands separator */
        else
            break;
    }
    digits[n] = '\0';
    char *end;
    double v = strtod(digits, &end);
    if (end == digits)
        return NAN;
    /* what strtod left of the copy ("1e" of "1 each") stays unread */
    const char *after = p - (size_t)(digits + n - end);
    static const struct {
        char c;
        int power;
    } suffix[] = {{'k', 1}, {'K', 1}, {'M', 2}, {'B', 3}};
    for (size_t i = 0; i < sizeof suffix / sizeof suffix[0]; i++)
        if (*after == suffix[i].c && !isalpha((unsigned char)after[1]))
            return v * pow(binary ? 1024 : 1000, suffix[i].power);
    return v;
}

double pub_lead_num(const char *s)
{
    return pub_lead_num_base(s, false);
}

/* A token count: lead_num with binary suffixes, rounded. */
int pub_lead_tokens(const char *s)
{
    double v = pub_lead_num_base(s, true);
    return isfinite(v) && v >= 0 && v < 1e9 ? (int)llround(v) : 0;
}

int pub_lead_int(const char *s)
{
    double v = pub_lead_num(s);
    return isfinite(v) && v >= 0 && v < 1e9 ? (int)v : 0;
}

/* The integer after key in text ("CP=2; EP=8" with key "EP="), 0 if absent. */
int pub_int_after(const char *text, const char *key)
{
    size_t n = strlen(key);
    for (const char *p = text; p && *p; p++)
        if (strncasecmp(p, key, n) == 0)
            return pub_lead_int(p + n);
    return 0;
}

/* A parallel degree named by word in text: "CP=2", "CP 2", "cp2", "CP: 2",
 * "context parallel 2" for the word "CP" or "context parallel"; the word
 * stands alone ("CPU" is not "CP"). 0 if absent. */
int pub_degree_in(const char *text, const char *word)
{
    size_t n = strlen(word);
    for (const char *p = text; p && *p; p++) {
        if (strncasecmp(p, word, n) != 0 || (p > text && isalpha((unsigned char)p[-1])) ||
            isalpha((unsigned char)p[n]))
            continue;
        const char *q = p + n;
        q += strspn(q, " =:");
        if (isdigit((unsigned char)*q))
            return pub_lead_int(q);
    }
    return 0;
}

/* Whether word stands alone in text (no letters either side). */
bool pub_has_word(const char *text, const char *word)
{
    size_t n = strlen(word);
    for (const char *p = text; p && *p; p++)
        if (strncasecmp(p, word, n) == 0 && (p == text || !isalpha((unsigned char)p[-1])) &&
            !isalpha((unsigned char)p[n]))
            return true;
    return false;
}

/* Where the number written just before at starts (spaces between them
 * allowed): digits and thousands separators, with decimal a point too;
 * NULL when there is none or it ends a longer token ("-8", "1e9", "x8"). */
static const char *number_before(const char *text, const char *at, bool decimal)
{
    const char *q = at;
    while (q > text && q[-1] == ' ')
        q--;
    const char *end = q;
    while (q > text &&
           (isdigit((unsigned char)q[-1]) || q[-1] == ',' || (decimal && q[-1] == '.')))
        q--;
    if (q == end || (q > text && (isalpha((unsigned char)q[-1]) || q[-1] == '-' ||
                                  q[-1] == '+' || q[-1] == '.')))
        return NULL;
    return q;
}

/* The whole number just before word in text ("8 nodes (64 GPUs)" with
 * "GPU": 64; thousands separators allowed), 0 if none. */
int pub_int_before(const char *text, const char *word)
{
    for (const char *p = pub_find_ci(text, word); p; p = pub_find_ci(p + 1, word)) {
        const char *q = number_before(text, p, false);
        if (q && isdigit((unsigned char)*q))
            return pub_lead_int(q);
    }
    return 0;
}

/* The first whole number in text ("mbs=1", "1 (inferred)"), 0 if none. */
int pub_first_int(const char *text)
{
    for (const char *p = text; p && *p; p++)
        if (isdigit((unsigned char)*p))
            return pub_lead_int(p);
    return 0;
}

/* A global batch the notes give ("GBS 2048", "global batch size: 1,536",
 * "global_batch_size=256", "global batch 4M tokens"): sequences, or tokens
 * when "token" follows the number (*tokens set). 0 when none is named. */
double pub_notes_batch(const char *notes, bool *tokens)
{
    static const char *const keys[] = {"global_batch_size", "global batch size",
                                       "global batch", "GBS"};
    *tokens = false;
    for (size_t k = 0; k < sizeof keys / sizeof keys[0]; k++) {
        size_t n = strlen(keys[k]);
        for (const char *p = pub_find_ci(notes, keys[k]); p; p = pub_find_ci(p + 1, keys[k])) {
            if ((p > notes && isalpha((unsigned char)p[-1])) || isalpha((unsigned char)p[n]))
                continue;
            const char *q = p + n;
            q += strspn(q, " =:");
            if (strncasecmp(q, "of ", 3) == 0)
                q += 3;
            if (!isdigit((unsigned char)*q))
                continue;
            double v = pub_lead_num_base(q, true);
            const char *after = q + strspn(q, "0123456789,.kKMB ");
            *tokens = strncasecmp(after, "token", 5) == 0;
            return isfinite(v) && v >= 1 ? v : 0;
        }
    }
    return 0;
}

/* The number written just before text + at ("19.561 samples/s"): digits,
 * a decimal point and thousands separators, NAN when none. */
double pub_num_before(const char *text, const char *at)
{
    const char *q = number_before(text, at, true);
    return q ? pub_lead_num(q) : NAN;
}

/* The number after the first occurrence of key, past spaces and a colon
 * ("samples per second: 19.561"), NAN when none. */
double pub_num_after(const char *text, const char *key)
{
    const char *p = pub_find_ci(text, key);
    if (!p)
        return NAN;
    p += strlen(key);
    p += strspn(p, " :=");
    return isdigit((unsigned char)*p) ? pub_lead_num(p) : NAN;
}

/* The first of keys in text, NULL when none. */
const char *pub_find_any(const char *text, const char *const *keys, size_t n)
{
    const char *p = NULL;
    for (size_t k = 0; k < n && !p; k++)
        p = pub_find_ci(text, keys[k]);
    return p;
}
