/* units: parsing and printing the quantities users type and read.
 *
 * Parsers take a label (usually the flag, e.g. "--tokens") for messages, and
 * return ERR_INPUT with an example of the accepted form when the text is not
 * understood. Every parser rejects NaN, infinities and negative values
 * (-0 included);
 * callers that need strictly positive values say so with units_positive.
 *
 *   counts     2T  1.5e12  500B  300M  8k          (SI: k M B/G T P)
 *   bytes      80GiB  80GB  512MiB  1.5TB  4096    (GiB binary, GB decimal)
 *   bandwidth  400Gbps  400Gb/s  900GB/s  50GBps   (b = bits, B = bytes)
 *   durations  500ms  90s  30m  2h  14d  2w        (bare number = seconds)
 *   prices     $2.49/h  2.49  $98/hr  $1500/day    (result: USD per hour)
 *   money      $500k  500000  $2.5M  1,000,000     (result: USD)
 *
 * Printers write into a caller buffer and return it, for use in printf.
 */
#ifndef SCALEPLAN_COMMON_UNITS_H
#define SCALEPLAN_COMMON_UNITS_H

#include <stddef.h>

#include "common/error.h"

int units_parse_count(const char *text, const char *what, double *out,
                      err_t *err);
int units_parse_bytes(const char *text, const char *what, double *bytes,
                      err_t *err);
int units_parse_bandwidth(const char *text, const char *what,
                          double *bytes_per_s, err_t *err);
int units_parse_duration(const char *text, const char *what, double *seconds,
                         err_t *err);
int units_parse_price(const char *text, const char *what, double *usd_per_hour,
                      err_t *err);
int units_parse_money(const char *text, const char *what, double *usd,
                      err_t *err);
/* The one parser of whole numbers (--gpus 1024, --tp 8, --steps 2k): digits
 * with an optional exponent (1e3) and an optional binary suffix, k or K =
 * 1024 (16k GPUs = 16384) and M = 1024 x 1024. A fraction, a sign-less
 * word or anything after the number is an error. The value is checked
 * against [lo, hi] before it is converted, so no text can overflow. */
int units_parse_int(const char *text, const char *what, long lo, long hi,
                    long *out, err_t *err);

/* A plain number without unit (0.5, 1e-4, -3) in [lo, hi]: NaN,
 * infinities and words are errors, -0 reads as 0. */
int units_parse_real(const char *text, const char *what, double lo, double hi,
                     double *out, err_t *err);

/* ERR_INPUT unless value > 0. */
int units_positive(double value, const char *what, err_t *err);

/* Counts, durations and money print through common/numfmt.h (the one place
 * numbers for people are formatted; no exponents). */
const char *units_fmt_count(double v, char *buf, size_t cap);     /* 1.5T, 594k */
const char *units_fmt_bytes(double bytes, char *buf, size_t cap); /* 80.0 GiB */
const char *units_fmt_bandwidth(double bytes_per_s, char *buf,
                                size_t cap);                          /* 50.0 GB/s */
const char *units_fmt_duration(double seconds, char *buf, size_t cap); /* 3.2 h */
const char *units_fmt_usd(double usd, char *buf, size_t cap); /* $1,234,567; $42.50 */

#define GIB (1024.0 * 1024.0 * 1024.0)

#endif
