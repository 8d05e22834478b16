/* numfmt: every number a person reads, formatted in one place.
 *
 * Human-readable outputs (tables, recommendations, the HTML report's prose)
 * print numbers through these functions so that one notation holds
 * everywhere: counts with SI suffixes (1.0B, 2.0T, 594k), durations in the
 * largest sensible unit (7.06 s, 48.8 min, 19.5 d), money with thousands
 * separators and cents only under $100 ($73,854, $42.50), percentages with
 * their basis ("46.9% of bf16 dense peak"). No function here ever writes an
 * exponent (1e+03, 2e+12): values too small for three significant digits
 * after the point print as "<0.001", non-finite values as "n/a".
 * Machine-readable outputs (--json, --csv) keep full precision and do not
 * use this module.
 *
 * Each printer writes into a caller buffer of cap bytes (32 is always
 * enough) and returns it, for use as a printf argument; a smaller buffer
 * cuts the text, never overruns.
 */
#ifndef SCALEPLAN_COMMON_NUMFMT_H
#define SCALEPLAN_COMMON_NUMFMT_H

#include <stddef.h>

/* A count with an SI suffix and three significant digits: 950, 1.0k, 75.3k,
 * 594k, 3.42M, 1.0B, 2.0T, 963Z. One decimal is always kept below 10 so a
 * round number still reads as rounded ("1.0B"); a value that rounds up to
 * 1000 of one suffix is written with the next ("999.7M" -> "1.0B"). Below
 * 1000: whole numbers as they are, others to three significant digits
 * (0.125, 12.5). */
const char *numfmt_count(double v, char *buf, size_t cap);

/* A plain real number with three significant digits, trailing zeros
 * dropped, and no exponent (0.00697, 12.5, 2.8, 1234); whole numbers with
 * thousands separators from 10,000 up (16,384). */
const char *numfmt_real(double v, char *buf, size_t cap);

/* A whole number with thousands separators: 16,384. */
const char *numfmt_int(double v, char *buf, size_t cap);

/* A duration in seconds in the largest sensible unit: 850 us, 12.3 ms,
 * 7.06 s, 48.8 min, 6.5 h, 19.5 d, 3.2 y; centuries as a count of years
 * (1.2k y). */
const char *numfmt_duration(double seconds, char *buf, size_t cap);

/* US dollars: thousands separators; cents only under $100 ($42.50, $478,
 * $96,955, $14,770,269). */
const char *numfmt_usd(double usd, char *buf, size_t cap);

/* A fraction as a percentage with one decimal and its basis:
 * numfmt_pct(0.469, "of bf16 dense peak") -> "46.9% of bf16 dense peak";
 * basis NULL or "" gives the bare "46.9%". */
const char *numfmt_pct(double fraction, const char *basis, char *buf, size_t cap);

/* Thousands separators, in place, in text that is a plain number
 * ("-1234567.5" -> "-1,234,567.5") with five or more integer digits; any
 * other text, or one that would not fit in cap bytes, is left as it is. */
void numfmt_group(char *buf, size_t cap);

#endif
