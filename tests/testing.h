/* testing: the small layer over CUnit that every suite uses.
 *
 * A suite is a named table of test functions, registered from the one
 * table in test_main.c. Numeric checks state a relative tolerance and print
 * both numbers when they fail. End-to-end helpers run the real scaleplan
 * binary (SCALEPLAN_BIN) and capture its exit status, stdout and stderr.
 */
#ifndef SCALEPLAN_TESTS_TESTING_H
#define SCALEPLAN_TESTS_TESTING_H

#include <stdbool.h>
#include <stddef.h>

#include <CUnit/CUnit.h>

#include "common/error.h"

typedef struct {
    const char *name;
    CU_TestFunc fn;
} test_case_t;

typedef struct {
    const char *name;
    const test_case_t *cases;
    size_t n_cases;
} test_suite_t;

#define TEST_SUITE(var, title, ...)                                          \
    static const test_case_t var##_cases[] = {__VA_ARGS__};                  \
    const test_suite_t var = {title, var##_cases,                            \
                              sizeof var##_cases / sizeof var##_cases[0]}

#define TEST(fn) {#fn, fn}

/* |actual - expected| <= rel * |expected| (or <= rel when expected is 0). */
void check_rel_at(double actual, double expected, double rel, const char *what,
                  const char *file, int line);
#define CHECK_REL(actual, expected, rel) \
    check_rel_at((actual), (expected), (rel), #actual, __FILE__, __LINE__)

/* The call failed with this code and its message contains every needle
 * (a NULL-terminated list). */
void check_err_at(int rc, const err_t *err, int code, const char *const *needles,
                  const char *what, const char *file, int line);
#define CHECK_ERR(rc, err, code, ...)                                        \
    do {                                                                     \
        const char *needles_[] = {__VA_ARGS__, NULL};                        \
        check_err_at((rc), (err), (code), needles_, #rc, __FILE__, __LINE__); \
    } while (0)

/* Run "scaleplan ARGS" through sh; capture output (heap, caller frees;
 * NULL pointers skip capture). Returns the exit status, or -1 if the
 * binary could not be run. */
int run_cli(const char *args, char **out, char **errout);

/* run_cli with shell words put in front of the binary: environment
 * assignments ("LD_DEBUG=libs ") or a launcher. */
int run_cli_env(const char *prefix, const char *args, char **out, char **errout);

/* run_cli under a time limit: the command is killed after limit_s seconds
 * (exit status 137 then). */
int run_cli_limited(int limit_s, const char *args, char **out, char **errout);

/* run_cli, checking (CUnit) that it exits rc_expected; on a mismatch the
 * command, both statuses and what came out are printed. out and err as
 * run_cli's (NULL skips capture). Returns the exit status. */
int cmd_expect(const char *args, int rc_expected, char **out, char **err);

/* cmd_expect, then the standard output parsed as JSON (heap, caller frees
 * with cJSON_Delete; NULL when it is not JSON). */
struct cJSON *cmd_expect_json(const char *args, int rc_expected);

/* Whether mpirun is on PATH (multi-rank tests skip, saying so, when not). */
bool mpi_available(void);

/* "mpirun -np RANKS scaleplan ARGS", as run_cli (allowing root and
 * oversubscription, for containers and 2-core CI machines). */
int run_mpi(int ranks, const char *args, char **out, char **errout);
/* ... killed after limit_s seconds (exit status 137 then). */
int run_mpi_limited(int limit_s, int ranks, const char *args, char **out, char **errout);

/* The whole file as a NUL-terminated heap string, NULL if unreadable. */
char *slurp(const char *path);

/* Path of a fixture under tests/fixtures (static buffer per call site). */
const char *fixture(const char *name);

/* Every key of Megatron-Bridge overrides text (KEY=VALUE lines, '#'
 * comments) is one Bridge documents (fixtures/launch/bridge_keys.txt). */
void check_bridge_keys(const char *text);

/* A fresh temporary directory (mkdtemp); removed by the caller with
 * remove_tree. */
int make_temp_dir(char *buf, size_t cap);

/* Write text to a new temporary file and its path into path (cap bytes);
 * 0, or -1 when it cannot (the caller removes the file). */
int write_temp_text(const char *text, char *path, size_t cap);

/* A path under dir at least min_len bytes long, of 40-byte folder names
 * (heap, caller frees; not created). */
char *deep_path(const char *dir, size_t min_len);
void remove_tree(const char *path);

/* Number of lines in s (a trailing newline does not start a new line). */
int count_lines(const char *s);

#endif
