/* Tests of common/units: every accepted spelling, the rejections, and the
 * printers. */
#include <math.h>
#include <string.h>

#include "common/units.h"
#include "tests/testing.h"

static void test_counts(void)
{
    err_t e;
    double v = 0;
    CU_ASSERT_EQUAL(units_parse_count("2T", "--tokens", &v, &e), 0);
    CHECK_REL(v, 2e12, 1e-12);
    CU_ASSERT_EQUAL(units_parse_count("1.5e12", "--tokens", &v, &e), 0);
    CHECK_REL(v, 1.5e12, 1e-12);
    CU_ASSERT_EQUAL(units_parse_count("500B", "--tokens", &v, &e), 0);
    CHECK_REL(v, 5e11, 1e-12);
    CU_ASSERT_EQUAL(units_parse_count("300M", "--tokens", &v, &e), 0);
    CHECK_REL(v, 3e8, 1e-12);
    CU_ASSERT_EQUAL(units_parse_count("15T tokens", "--tokens", &v, &e), 0);
    CHECK_REL(v, 1.5e13, 1e-12);
    CU_ASSERT_EQUAL(units_parse_count("1,000,000", "--tokens", &v, &e), 0);
    CHECK_REL(v, 1e6, 1e-12);
    int rc = units_parse_count("lots", "--tokens", &v, &e);
    CHECK_ERR(rc, &e, ERR_INPUT, "--tokens", "lots", "2T");
    rc = units_parse_count("-2T", "--tokens", &v, &e);
    CHECK_ERR(rc, &e, ERR_INPUT, "--tokens", "negative");
    rc = units_parse_count("1e999", "--tokens", &v, &e);
    CHECK_ERR(rc, &e, ERR_INPUT, "finite");
    rc = units_parse_count("2X", "--tokens", &v, &e);
    CHECK_ERR(rc, &e, ERR_INPUT, "--tokens");
}

static void test_bytes_and_bandwidth(void)
{
    err_t e;
    double v;
    CU_ASSERT_EQUAL(units_parse_bytes("80GiB", "--mem", &v, &e), 0);
    CHECK_REL(v, 80.0 * 1024 * 1024 * 1024, 1e-12);
    CU_ASSERT_EQUAL(units_parse_bytes("80GB", "--mem", &v, &e), 0);
    CHECK_REL(v, 80e9, 1e-12);
    CU_ASSERT_EQUAL(units_parse_bytes("512 MiB", "--mem", &v, &e), 0);
    CHECK_REL(v, 512.0 * 1024 * 1024, 1e-12);
    CU_ASSERT_EQUAL(units_parse_bytes("4096", "--mem", &v, &e), 0);
    CHECK_REL(v, 4096, 1e-12);
    CU_ASSERT_EQUAL(units_parse_bandwidth("400Gbps", "--bw", &v, &e), 0);
    CHECK_REL(v, 50e9, 1e-12); /* 400 Gb/s = 50 GB/s */
    CU_ASSERT_EQUAL(units_parse_bandwidth("400Gb/s", "--bw", &v, &e), 0);
    CHECK_REL(v, 50e9, 1e-12);
    CU_ASSERT_EQUAL(units_parse_bandwidth("900GB/s", "--bw", &v, &e), 0);
    CHECK_REL(v, 900e9, 1e-12);
    CU_ASSERT_EQUAL(units_parse_bandwidth("50GBps", "--bw", &v, &e), 0);
    CHECK_REL(v, 50e9, 1e-12);
    int rc = units_parse_bandwidth("400", "--bw", &v, &e);
    CHECK_ERR(rc, &e, ERR_INPUT, "--bw", "400Gbps");
    rc = units_parse_bytes("80 furlongs", "--mem", &v, &e);
    CHECK_ERR(rc, &e, ERR_INPUT, "--mem");
}

static void test_durations_prices_money(void)
{
    err_t e;
    double v;
    CU_ASSERT_EQUAL(units_parse_duration("30m", "--every", &v, &e), 0);
    CHECK_REL(v, 1800, 1e-12);
    CU_ASSERT_EQUAL(units_parse_duration("14d", "--days", &v, &e), 0);
    CHECK_REL(v, 14 * 86400.0, 1e-12);
    CU_ASSERT_EQUAL(units_parse_duration("2h", "--x", &v, &e), 0);
    CHECK_REL(v, 7200, 1e-12);
    CU_ASSERT_EQUAL(units_parse_duration("90", "--x", &v, &e), 0);
    CHECK_REL(v, 90, 1e-12);
    CU_ASSERT_EQUAL(units_parse_duration("2w", "--x", &v, &e), 0);
    CHECK_REL(v, 14 * 86400.0, 1e-12);
    CU_ASSERT_EQUAL(units_parse_duration("500ms", "--x", &v, &e), 0);
    CHECK_REL(v, 0.5, 1e-12);
    CU_ASSERT_EQUAL(units_parse_price("$2.49/h", "--price", &v, &e), 0);
    CHECK_REL(v, 2.49, 1e-12);
    CU_ASSERT_EQUAL(units_parse_price("2.49", "--price", &v, &e), 0);
    CHECK_REL(v, 2.49, 1e-12);
    CU_ASSERT_EQUAL(units_parse_price("$98/hr", "--price", &v, &e), 0);
    CHECK_REL(v, 98, 1e-12);
    CU_ASSERT_EQUAL(units_parse_price("$48/day", "--price", &v, &e), 0);
    CHECK_REL(v, 2, 1e-12);
    CU_ASSERT_EQUAL(units_parse_money("$500k", "--budget", &v, &e), 0);
    CHECK_REL(v, 5e5, 1e-12);
    CU_ASSERT_EQUAL(units_parse_money("$2.5M", "--budget", &v, &e), 0);
    CHECK_REL(v, 2.5e6, 1e-12);
    CU_ASSERT_EQUAL(units_parse_money("1,000,000", "--budget", &v, &e), 0);
    CHECK_REL(v, 1e6, 1e-12);
    int rc = units_parse_price("$-3/h", "--price", &v, &e);
    CHECK_ERR(rc, &e, ERR_INPUT, "--price");
    rc = units_parse_duration("soon", "--deadline", &v, &e);
    CHECK_ERR(rc, &e, ERR_INPUT, "--deadline", "30m");
    rc = units_positive(0, "--price", &e);
    CHECK_ERR(rc, &e, ERR_INPUT, "--price", "greater than zero");
}

static void test_ints(void)
{
    err_t e;
    long v;
    CU_ASSERT_EQUAL(units_parse_int("16k", "--gpus", 1, 1 << 24, &v, &e), 0);
    CU_ASSERT_EQUAL(v, 16384);
    CU_ASSERT_EQUAL(units_parse_int("256", "--gpus", 1, 1 << 24, &v, &e), 0);
    CU_ASSERT_EQUAL(v, 256);
    int rc = units_parse_int("0", "--gpus", 1, 1 << 24, &v, &e);
    CHECK_ERR(rc, &e, ERR_INPUT, "--gpus", "between 1");
    rc = units_parse_int("8.5", "--tp", 1, 1024, &v, &e);
    CHECK_ERR(rc, &e, ERR_INPUT, "--tp", "whole number");
    rc = units_parse_int("99999999999999999999", "--tp", 1, 1024, &v, &e);
    CHECK_ERR(rc, &e, ERR_INPUT, "--tp");
    /* one parser for every whole-number flag: exponents, k and M */
    CU_ASSERT_EQUAL(units_parse_int("1e3", "--steps", 1, 1 << 24, &v, &e), 0);
    CU_ASSERT_EQUAL(v, 1000);
    CU_ASSERT_EQUAL(units_parse_int("2M", "--steps", 1, 1 << 24, &v, &e), 0);
    CU_ASSERT_EQUAL(v, 2 * 1024 * 1024);
    CU_ASSERT_EQUAL(units_parse_int("-0", "--zero", 0, 3, &v, &e), 0);
    CU_ASSERT_EQUAL(v, 0);
    static const char *bad[] = {"1.5", "nan", "inf", "0x10", "", "abc", "1e308", "2147483648",
                                "12 ", " 12", "1e", "k", "1.3k"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        rc = units_parse_int(bad[i], "--gpus", 1, 1 << 24, &v, &e);
        CHECK_ERR(rc, &e, ERR_INPUT, "--gpus");
    }
    double x;
    CU_ASSERT_EQUAL(units_parse_real("-0", "--lr", 0, 10, &x, &e), 0);
    CU_ASSERT_FALSE(signbit(x));
    CU_ASSERT_EQUAL(units_parse_real("6e-4", "--lr", 0, 10, &x, &e), 0);
    CHECK_REL(x, 6e-4, 1e-12);
    static const char *badx[] = {"nan", "inf", "-inf", "1e999", "", "abc", "0x1p3", "11", "-1"};
    for (size_t i = 0; i < sizeof badx / sizeof badx[0]; i++) {
        rc = units_parse_real(badx[i], "--lr", 0, 10, &x, &e);
        CHECK_ERR(rc, &e, ERR_INPUT, "--lr");
    }
    rc = units_parse_price("-0", "--price", &x, &e);
    CHECK_ERR(rc, &e, ERR_INPUT, "--price", "negative");
}

static void test_printers(void)
{
    char b[64];
    CU_ASSERT_STRING_EQUAL(units_fmt_count(2e12, b, sizeof b), "2.0T");
    CU_ASSERT_STRING_EQUAL(units_fmt_count(70.55e9, b, sizeof b), "70.6B");  /* 70.55 rounds half up */
    CU_ASSERT_STRING_EQUAL(units_fmt_bytes(80.0 * GIB, b, sizeof b), "80.0 GiB");
    CU_ASSERT_STRING_EQUAL(units_fmt_bytes(512, b, sizeof b), "512 B");
    CU_ASSERT_STRING_EQUAL(units_fmt_bandwidth(50e9, b, sizeof b), "50.0 GB/s");
    CU_ASSERT_STRING_EQUAL(units_fmt_duration(3 * 86400.0, b, sizeof b), "3.0 d");
    CU_ASSERT_STRING_EQUAL(units_fmt_duration(0.25, b, sizeof b), "250.0 ms");
    CU_ASSERT_STRING_EQUAL(units_fmt_usd(1234567.4, b, sizeof b), "$1,234,567");
    CU_ASSERT_STRING_EQUAL(units_fmt_usd(2.49, b, sizeof b), "$2.49");
    CU_ASSERT_STRING_EQUAL(units_fmt_usd(NAN, b, sizeof b), "n/a");
}

TEST_SUITE(suite_units, "units", TEST(test_counts), TEST(test_bytes_and_bandwidth),
           TEST(test_durations_prices_money), TEST(test_ints), TEST(test_printers));
