/* numfmt: the one place numbers for people are formatted. Expected strings
 * are worked by hand from the rules in common/numfmt.h (three significant
 * digits, one decimal kept below 10, SI suffixes, cents under $100). */
#include <math.h>
#include <string.h>

#include "common/numfmt.h"
#include "tests/testing.h"

#define EQ(call, want) CU_ASSERT_STRING_EQUAL(call, want)

static void test_counts(void)
{
    char b[32];
    EQ(numfmt_count(2e12, b, sizeof b), "2.0T");
    EQ(numfmt_count(1e9, b, sizeof b), "1.0B");
    EQ(numfmt_count(594123, b, sizeof b), "594k");
    EQ(numfmt_count(3.4187e6, b, sizeof b), "3.42M");
    EQ(numfmt_count(75012, b, sizeof b), "75.0k");
    EQ(numfmt_count(950, b, sizeof b), "950");
    EQ(numfmt_count(12.5, b, sizeof b), "12.5");
    EQ(numfmt_count(0.125, b, sizeof b), "0.125");
    EQ(numfmt_count(-4.2e6, b, sizeof b), "-4.2M");
    EQ(numfmt_count(NAN, b, sizeof b), "n/a");
    /* the bug of issue 42: %.3g of 999.96 wrote "1e+03M" for a 1B model */
    EQ(numfmt_count(999.96e6, b, sizeof b), "1.0B");
    EQ(numfmt_count(999.6, b, sizeof b), "1.0k");
    EQ(numfmt_count(9.996e6, b, sizeof b), "10.0M");
    EQ(numfmt_count(99.96e3, b, sizeof b), "100k");
    EQ(numfmt_count(9.63e23, b, sizeof b), "963Z");
}

static void test_reals_and_ints(void)
{
    char b[32];
    EQ(numfmt_real(6.97e-6 * 1e6, b, sizeof b), "6.97");
    EQ(numfmt_real(0.0230, b, sizeof b), "0.023");
    EQ(numfmt_real(2.8, b, sizeof b), "2.8");
    EQ(numfmt_real(1.0, b, sizeof b), "1");
    EQ(numfmt_real(0.00001, b, sizeof b), "<0.001");
    EQ(numfmt_real(0, b, sizeof b), "0");
    EQ(numfmt_real(16384, b, sizeof b), "16,384");
    EQ(numfmt_real(9.996, b, sizeof b), "10");
    EQ(numfmt_int(1234567, b, sizeof b), "1,234,567");
    EQ(numfmt_int(-1234, b, sizeof b), "-1,234");
    EQ(numfmt_int(999, b, sizeof b), "999");
    /* grouping in place, plain numbers only */
    char g[32] = "1637978";
    numfmt_group(g, sizeof g);
    EQ(g, "1,637,978");
    snprintf(g, sizeof g, "-12345.678");
    numfmt_group(g, sizeof g);
    EQ(g, "-12,345.678");
    snprintf(g, sizeof g, "1234");
    numfmt_group(g, sizeof g);
    EQ(g, "1234");
    snprintf(g, sizeof g, "1e+12");
    numfmt_group(g, sizeof g);
    EQ(g, "1e+12");
    char tight[8] = "1234567"; /* "1,234,567" does not fit: left as it is */
    numfmt_group(tight, sizeof tight);
    EQ(tight, "1234567");
}

static void test_durations(void)
{
    char b[32];
    EQ(numfmt_duration(7.06, b, sizeof b), "7.06 s");
    EQ(numfmt_duration(48.8 * 60, b, sizeof b), "48.8 min");
    EQ(numfmt_duration(6.5 * 3600, b, sizeof b), "6.5 h");
    EQ(numfmt_duration(19.5 * 86400, b, sizeof b), "19.5 d");
    EQ(numfmt_duration(0.0123, b, sizeof b), "12.3 ms");
    EQ(numfmt_duration(850e-6, b, sizeof b), "850.0 us");
    /* 1,000 days and more in years; a million years as a count */
    EQ(numfmt_duration(3.2 * 365.25 * 86400, b, sizeof b), "3.20 y");
    EQ(numfmt_duration(1.2e6 * 365.25 * 86400, b, sizeof b), "1.2M y");
}

static void test_money_and_percent(void)
{
    char b[48];
    EQ(numfmt_usd(96955.4, b, sizeof b), "$96,955");
    EQ(numfmt_usd(14770269, b, sizeof b), "$14,770,269");
    EQ(numfmt_usd(478.08, b, sizeof b), "$478");
    EQ(numfmt_usd(42.5, b, sizeof b), "$42.50");
    EQ(numfmt_usd(99.996, b, sizeof b), "$100");
    EQ(numfmt_usd(-4189.2, b, sizeof b), "-$4,189");
    EQ(numfmt_usd(0, b, sizeof b), "$0.00");
    EQ(numfmt_usd(INFINITY, b, sizeof b), "n/a");
    EQ(numfmt_pct(0.469, "of bf16 dense peak", b, sizeof b), "46.9% of bf16 dense peak");
    EQ(numfmt_pct(0.5, NULL, b, sizeof b), "50.0%");
    /* a short buffer cuts, never overruns */
    char small[6];
    numfmt_usd(14770269, small, sizeof small);
    CU_ASSERT_EQUAL(strlen(small), 5);
}

/* Property: no printer ever writes an exponent, over 40 decades. */
static void test_never_an_exponent(void)
{
    char b[48];
    for (double v = 1e-12; v < 1e28; v *= 1.7) {
        const char *outs[] = {numfmt_count(v, b, sizeof b)};
        CU_ASSERT_PTR_NULL(strpbrk(outs[0], "e+"));
        CU_ASSERT_PTR_NULL(strpbrk(numfmt_real(v, b, sizeof b), "e+"));
        CU_ASSERT_PTR_NULL(strpbrk(numfmt_usd(v, b, sizeof b), "e+"));
        CU_ASSERT_PTR_NULL(strpbrk(numfmt_duration(v, b, sizeof b), "e+"));
        CU_ASSERT_PTR_NULL(strpbrk(numfmt_int(v, b, sizeof b), "e+"));
    }
}

TEST_SUITE(suite_numfmt, "numfmt", TEST(test_counts), TEST(test_reals_and_ints),
           TEST(test_durations), TEST(test_money_and_percent), TEST(test_never_an_exponent));
