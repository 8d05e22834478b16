/* The folders' include graph (docs/ARCHITECTURE.md): tools/check-layers.sh
 * passes on this tree and fails on a tree with a back edge. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "tests/testing.h"

static int run_script(const char *root)
{
    char cmd[600];
    snprintf(cmd, sizeof cmd, "sh tools/check-layers.sh %s >/dev/null 2>&1", root);
    int rc = system(cmd);
    return rc == -1 ? -1 : (rc >> 8) & 0xff;
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
    char sub[400];
    snprintf(sub, sizeof sub, "%s/sim", dir);
    CU_ASSERT_EQUAL(mkdir(sub, 0755), 0);
    snprintf(sub, sizeof sub, "%s/profile", dir);
    CU_ASSERT_EQUAL(mkdir(sub, 0755), 0);
    write_file(dir, "profile/profile.h", "#include \"topologies/gpu.h\"\n");
    write_file(dir, "sim/step.c", "#include \"profile/profile.h\"\n");
    CU_ASSERT_EQUAL(run_script(dir), 0);
    /* the simulator reaching into the measurement tools is a back edge */
    write_file(dir, "sim/costs.c", "#include <math.h>\n#include \"calibrate/fit.h\"\n");
    CU_ASSERT_EQUAL(run_script(dir), 1);
    remove_tree(dir);
}

TEST_SUITE(suite_layers, "layers", TEST(test_tree_is_a_dag), TEST(test_back_edge_fails));
