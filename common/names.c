#include "common/names.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>

void names_normalize(const char *text, char *out, size_t cap)
{
    if (cap == 0)
        return;
    size_t o = 0;
    for (const char *p = text; *p && o + 1 < cap; p++) {
        char c = (char)tolower((unsigned char)*p);
        if (c == '_' || c == ' ')
            c = '-';
        out[o++] = c;
    }
    out[o] = '\0';
    static const char *vendors[] = {"nvidia-", "amd-", "instinct-"};
    for (size_t i = 0; i < sizeof vendors / sizeof vendors[0]; i++) {
        size_t n = strlen(vendors[i]);
        if (strncmp(out, vendors[i], n) == 0)
            memmove(out, out + n, strlen(out + n) + 1);
    }
}

int names_distance(const char *a, const char *b)
{
    enum { MAXLEN = 64 };
    size_t la = strlen(a), lb = strlen(b);
    if (la > MAXLEN)
        la = MAXLEN;
    if (lb > MAXLEN)
        lb = MAXLEN;
    int prev[MAXLEN + 1], cur[MAXLEN + 1];
    for (size_t j = 0; j <= lb; j++)
        prev[j] = (int)j;
    for (size_t i = 1; i <= la; i++) {
        cur[0] = (int)i;
        for (size_t j = 1; j <= lb; j++) {
            int same = tolower((unsigned char)a[i - 1]) ==
                       tolower((unsigned char)b[j - 1]);
            int best = prev[j - 1] + (same ? 0 : 1);
            if (prev[j] + 1 < best)
                best = prev[j] + 1;
            if (cur[j - 1] + 1 < best)
                best = cur[j - 1] + 1;
            cur[j] = best;
        }
        memcpy(prev, cur, sizeof(int) * (lb + 1));
    }
    return prev[lb];
}

int names_closest(const char *query, const char *const *candidates, size_t n)
{
    int best = -1, best_d = 1 << 30;
    for (size_t i = 0; i < n; i++) {
        int d = names_distance(query, candidates[i]);
        /* A candidate that contains the query ("h100" in "h100-sxm") is a
         * strong hint even when the edit distance is large. */
        if (strstr(candidates[i], query) && strlen(query) >= 3)
            d = d < 2 ? d : 2;
        if (d < best_d) {
            best_d = d;
            best = (int)i;
        }
    }
    int limit = (int)strlen(query) / 3 + 2;
    return best_d <= limit ? best : -1;
}
