/* summary: the parts of the HTML report a person reads first and last.
 *
 * summary_plan writes the plan report's one-page summary, the page a budget
 * holder can print or forward: what to reserve, how long and what it
 * costs, the layout in the one notation (models/layout_text.h) with its
 * framework and precision, what to measure before each doubling, the first
 * thing to check, and each framework's best. Numbers are formatted by
 * common/numfmt.h (no exponents); the exact values stay in the tables below
 * and in result.json.
 *
 * summary_glossary writes the glossary: every term of the notation and the
 * tables as a sentence, with the flag or key each framework uses for it
 * (reports/glossary.h).
 *
 * Both append to h; keys missing from the result leave their line out
 * (the report checks the keys it needs before).
 */
#ifndef SCALEPLAN_REPORTS_SUMMARY_H
#define SCALEPLAN_REPORTS_SUMMARY_H

#include <cjson/cJSON.h>

#include "reports/html.h"

/* <section id="summary"> for a plan result r (plan --json). */
void summary_plan(const cJSON *r, html_t *h);

/* <section id="glossary">, all terms. */
void summary_glossary(html_t *h);

#endif
