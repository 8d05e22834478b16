/* units: parsing and printing the quantities users type and read.
 *
 * Parsers take a label (usually the flag, e.g. "--tokens") for messages, and
 * return ERR_INPUT with an example of the accepted form when the text is not
 * understood. Every parser rejects NaN, infinities and negative values;
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
/* Whole numbers for flags like --gpus 1024 or --tp 8 (no suffixes except
 * k/K = 1024 for GPU counts like 16k). Must lie in [lo, hi]. */
int units_parse_int(const char *text, const char *what, long lo, long hi,
                    long *out, err_t *err);

/* ERR_INPUT unless value > 0. */
int units_positive(double value, const char *what, err_t *err);

const char *units_fmt_count(double v, char *buf, size_t cap);     /* 1.50T */
const char *units_fmt_bytes(double bytes, char *buf, size_t cap); /* 80.0 GiB */
const char *units_fmt_bandwidth(double bytes_per_s, char *buf,
                                size_t cap);                          /* 50.0 GB/s */
const char *units_fmt_duration(double seconds, char *buf, size_t cap); /* 3.2 h */
const char *units_fmt_usd(double usd, char *buf, size_t cap); /* $1,234,567 */

#define GIB (1024.0 * 1024.0 * 1024.0)

#endif
