/* The accuracy bar: every published run with a full configuration in
 * tests/fixtures/validation/throughput.csv, replayed through the simulator
 * with the default profiles, within 5% median and 15% worst error (on the
 * basis each source reports: s/iter, or hardware or model TFLOP/s). Rows
 * that leave layout choices open must stay within the same worst bound
 * with the fastest choice that fits. `make validate` prints the table. */
#include <stdio.h>
#include <stdlib.h>

#include "sim/validation.h"
#include "tests/testing.h"

static void test_published_runs(void)
{
    val_row_t *rows;
    int n;
    err_t e;
    int rc = val_run(fixture("validation/throughput.csv"), NULL, &rows, &n, &e);
    if (rc)
        fprintf(stderr, "validation: %s\n", e.msg);
    CU_ASSERT_EQUAL_FATAL(rc, 0);
    CU_ASSERT_EQUAL(n, 35);
    int skipped = 0;
    for (int i = 0; i < n; i++)
        if (rows[i].skipped) {
            skipped++;
            fprintf(stderr, "%s skipped: %s\n", rows[i].row_id, rows[i].note);
        }
    CU_ASSERT_EQUAL(skipped, 0);
    double med, worst;
    int k;
    val_summary(rows, n, true, &med, &worst, &k);
    CU_ASSERT_TRUE(k >= 26);
    CU_ASSERT_TRUE(med <= 0.05);
    CU_ASSERT_TRUE(worst <= 0.15);
    if (med > 0.05 || worst > 0.15)
        fprintf(stderr, "\nfull-configuration rows: median %.1f%% worst %.1f%%\n", 100 * med,
                100 * worst);
    val_summary(rows, n, false, &med, &worst, &k);
    CU_ASSERT_TRUE(worst <= 0.15);
    free(rows);
}

TEST_SUITE(suite_validation, "validation", TEST(test_published_runs));
