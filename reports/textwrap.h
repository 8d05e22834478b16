/* textwrap: long sentences printed as a block a person can read in a
 * terminal, broken at spaces.
 */
#ifndef SCALEPLAN_REPORTS_TEXTWRAP_H
#define SCALEPLAN_REPORTS_TEXTWRAP_H

#include <stdio.h>

/* Print lead then text to f, breaking text at spaces so that no line is
 * longer than width columns (a word longer than a line stays whole), the
 * continuation lines indented by indent spaces; ends with a newline.
 * lead counts toward the first line's width. */
void textwrap_print(FILE *f, const char *lead, const char *text, int indent, int width);

/* glossary_legend of text, printed wrapped under a table ("  legend: TP
 * tensor-parallel GPUs, ..."), indented by indent; nothing when text names
 * no term. */
void textwrap_legend(FILE *f, const char *text, int indent, int width);

#endif
