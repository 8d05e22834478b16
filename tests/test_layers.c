/* The folders' include graph (docs/ARCHITECTURE.md): tools/check-layers.sh
 * passes on this tree and fails on a tree with a back edge or a private
 * header included outside its module; tools/check-circles.sh fails on an
 * include circle between modules not in its allowlist. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "tests/testing.h"

static int run_check(const char *script, const char *root)
{
    char cmd[600];
    snprintf(cmd, sizeof cmd, "sh tools/%s %s >/dev/null 2>&1", script, root);
    int rc = system(cmd);
    return rc == -1 ? -1 : (rc >> 8) & 0xff;
}

static int run_script(const char *root)
{
    return run_check("check-layers.sh", root);
}

static void make_dir(const char *dir, const char *rel)
{
    char sub[400];
    snprintf(sub, sizeof sub, "%s/%s", dir, rel);
    CU_ASSERT_EQUAL(mkdir(sub, 0755), 0);
}

static void write_file(const char *dir, const char *rel, const char *text)
{
    char path[600];
    snprintf(path, sizeof path, "%s/%s", dir, rel);
    FILE *f = fopen(path, "w");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    fputs(text, f);
    fclose(f);
}

static void test_tree_is_a_dag(void)
{
    CU_ASSERT_EQUAL(run_script("."), 0);
}

static void test_back_edge_fails(void)
{
    char dir[256];
    CU_ASSERT_EQUAL_FATAL(make_temp_dir(dir, sizeof dir), 0);
    make_dir(dir, "sim");
    make_dir(dir, "profile");
    write_file(dir, "profile/profile.h", "#include \"topologies/gpu.h\"\n");
    write_file(dir, "sim/step.c", "#include \"profile/profile.h\"\n");
    CU_ASSERT_EQUAL(run_script(dir), 0);
    /* the simulator reaching into the measurement tools is a back edge */
    write_file(dir, "sim/costs.c", "#include <math.h>\n#include \"calibrate/fit.h\"\n");
    CU_ASSERT_EQUAL(run_script(dir), 1);
    remove_tree(dir);
}

/* sim/costsInt.h is shared by sim/cost*.c only. */
static void test_private_header_fails(void)
{
    char dir[256];
    CU_ASSERT_EQUAL_FATAL(make_temp_dir(dir, sizeof dir), 0);
    make_dir(dir, "sim");
    write_file(dir, "sim/costsInt.h", "#include \"sim/costs.h\"\n");
    write_file(dir, "sim/cost_tp.c", "#include \"sim/costsInt.h\"\n");
    CU_ASSERT_EQUAL(run_script(dir), 0);
    write_file(dir, "sim/step.c", "#include \"sim/costsInt.h\"\n");
    CU_ASSERT_EQUAL(run_script(dir), 1);
    remove_tree(dir);
}

static void test_tree_has_no_new_circle(void)
{
    CU_ASSERT_EQUAL(run_check("check-circles.sh", "."), 0);
}

/* x.c + x.h (+ xInt.h) is one module; a cycle between modules fails unless
 * listed, and a listed cycle that is gone fails too. */
static void test_circle_fails(void)
{
    char dir[256];
    CU_ASSERT_EQUAL_FATAL(make_temp_dir(dir, sizeof dir), 0);
    make_dir(dir, "sim");
    make_dir(dir, "tools");
    write_file(dir, "tools/circles-allowlist.txt", "# none\n");
    write_file(dir, "sim/a.h", "#include <math.h>\n");
    write_file(dir, "sim/aInt.h", "#include \"sim/a.h\"\n"); /* part of sim/a */
    write_file(dir, "sim/a.c", "#include \"sim/aInt.h\"\n#include \"sim/b.h\"\n");
    write_file(dir, "sim/b.h", "#include <math.h>\n");
    write_file(dir, "sim/b.c", "#include \"sim/b.h\"\n");
    CU_ASSERT_EQUAL(run_check("check-circles.sh", dir), 0);
    write_file(dir, "sim/b.h", "#include \"sim/a.h\"\n");
    CU_ASSERT_EQUAL(run_check("check-circles.sh", dir), 1);
    write_file(dir, "tools/circles-allowlist.txt", "sim/b sim/a: known (issue 34)\n");
    CU_ASSERT_EQUAL(run_check("check-circles.sh", dir), 0);
    write_file(dir, "sim/b.h", "#include <math.h>\n");
    CU_ASSERT_EQUAL(run_check("check-circles.sh", dir), 1);
    remove_tree(dir);
}

TEST_SUITE(suite_layers, "layers", TEST(test_tree_is_a_dag), TEST(test_back_edge_fails),
           TEST(test_private_header_fails), TEST(test_tree_has_no_new_circle),
           TEST(test_circle_fails));
