/* Tests of reports/table: alignment, shortening to the width, CSV. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "reports/table.h"
#include "tests/testing.h"

static char *render(const table_t *t, int width, int csv)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (!f)
        return NULL;
    if (csv)
        table_print_csv(t, f);
    else
        table_print(t, f, 0, width);
    fclose(f);
    return buf;
}

static void test_alignment(void)
{
    const char *hdr[] = {"name", "value"};
    table_t *t = table_create(2, hdr);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    table_align_right(t, 1);
    CU_ASSERT_EQUAL(table_add_rowf(t, "alpha\t1"), 0);
    CU_ASSERT_EQUAL(table_add_rowf(t, "b\t12345"), 0);
    char *s = render(t, 1000, 0);
    CU_ASSERT_STRING_EQUAL(s, "name   value\nalpha      1\nb      12345\n");
    free(s);
    table_destroy(t);
}

static void test_shortened_to_width(void)
{
    const char *hdr[] = {"id", "description"};
    table_t *t = table_create(2, hdr);
    table_add_rowf(t, "1\tthis description is far too long for a narrow terminal");
    char *s = render(t, 30, 0);
    char *line2 = strchr(s, '\n') + 1;
    CU_ASSERT_TRUE(strlen(line2) <= 31);
    CU_ASSERT_PTR_NOT_NULL(strstr(line2, "..."));
    free(s);
    table_destroy(t);
}

static void test_csv(void)
{
    const char *hdr[] = {"a", "b"};
    table_t *t = table_create(2, hdr);
    table_add_rowf(t, "x,y\tsay \"hi\"");
    char *s = render(t, 0, 1);
    CU_ASSERT_STRING_EQUAL(s, "a,b\n\"x,y\",\"say \"\"hi\"\"\"\n");
    free(s);
    table_destroy(t);
}

TEST_SUITE(suite_table, "table", TEST(test_alignment), TEST(test_shortened_to_width),
           TEST(test_csv));
