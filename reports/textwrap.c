#include "reports/textwrap.h"

#include <stdlib.h>
#include <string.h>

#include "reports/glossary.h"

void textwrap_print(FILE *f, const char *lead, const char *text, int indent, int width)
{
    int col = (int)strlen(lead ? lead : "");
    fputs(lead ? lead : "", f);
    int first = 1;
    for (const char *p = text ? text : ""; *p;) {
        p += strspn(p, " ");
        size_t n = strcspn(p, " ");
        if (n == 0)
            break;
        if (!first && col + 1 + (int)n > width) {
            fprintf(f, "\n%*s", indent, "");
            col = indent;
        } else if (!first) {
            fputc(' ', f);
            col++;
        }
        fwrite(p, 1, n, f);
        col += (int)n;
        first = 0;
        p += n;
    }
    fputc('\n', f);
}

void textwrap_legend(FILE *f, const char *text, int indent, int width)
{
    int n = glossary_legend(text, NULL, 0);
    if (n <= 0)
        return;
    char *buf = malloc((size_t)n + 1);
    if (!buf) { /* no legend rather than a cut one */
        fprintf(f, "%*s(legend: out of memory)\n", indent, "");
        return;
    }
    glossary_legend(text, buf, (size_t)n + 1);
    char lead[64];
    snprintf(lead, sizeof lead, "%*s", indent, "");
    textwrap_print(f, lead, buf, indent + 8, width);
    free(buf);
}
