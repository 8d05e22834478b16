/* checkpoint: atomic, checksummed saves; rotation; asynchronous writes;
 * resume from the newest valid checkpoint, skipping damaged ones; refusal
 * of another run's checkpoint. One process (a world of one rank). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/fileio.h"
#include "trainer/checkpoint.h"

#include "tests/testing.h"

#define NP 1000
#define NO 1000

typedef struct {
    float params[NP], m[NO], v[NO];
} state_buf_t;

static void fill(state_buf_t *s, float base)
{
    for (int i = 0; i < NP; i++)
        s->params[i] = base + (float)i * 0.001f;
    for (int i = 0; i < NO; i++) {
        s->m[i] = -base - (float)i;
        s->v[i] = base * 2 + (float)i;
    }
}

static ckpt_config_t config(const char *dir, int keep, bool async)
{
    ckpt_config_t c;
    memset(&c, 0, sizeof c);
    c.dir = dir;
    c.keep = keep;
    c.async = async;
    snprintf(c.model, sizeof c.model, "tiny-gpt");
    c.n_params = NP;
    c.n_opt = NO;
    c.tp = 1;
    c.dp = 1;
    return c;
}

static int count_steps(const char *dir)
{
    int n = 0;
    char path[512];
    for (int s = 0; s <= 100; s++) {
        snprintf(path, sizeof path, "%s/step-%08d/manifest.json", dir, s);
        n += access(path, F_OK) == 0;
    }
    return n;
}

static void save_steps(const char *dir, int keep, bool async, int from, int to)
{
    dist_group_t world = {0, 1, NULL, NULL, NULL};
    ckpt_config_t c = config(dir, keep, async);
    ckpt_writer_t *w = NULL;
    err_t err;
    CU_ASSERT_EQUAL_FATAL(ckpt_writer_create(&c, &world, &w, &err), 0);
    state_buf_t *b = malloc(sizeof *b);
    for (int s = from; s <= to; s++) {
        fill(b, (float)s);
        ckpt_state_t st = {b->params, b->m, b->v, s};
        double blocking = -1;
        CU_ASSERT_EQUAL(ckpt_save(w, &st, &blocking, &err), 0);
        CU_ASSERT(blocking >= 0);
        /* the snapshot is taken: changing the state now must not matter */
        fill(b, -1);
    }
    CU_ASSERT_EQUAL(ckpt_writer_close(w, &err), 0);
    free(b);
}

static void test_save_rotate_resume(void)
{
    for (int async = 0; async <= 1; async++) {
        char dir[256];
        CU_ASSERT_EQUAL_FATAL(make_temp_dir(dir, sizeof dir), 0);
        save_steps(dir, 2, async, 1, 5);
        CU_ASSERT_EQUAL(count_steps(dir), 2); /* keep 2: steps 4 and 5 */
        dist_group_t world = {0, 1, NULL, NULL, NULL};
        ckpt_config_t c = config(dir, 2, false);
        state_buf_t *b = calloc(1, sizeof *b), *want = malloc(sizeof *want);
        ckpt_state_t st = {b->params, b->m, b->v, 0};
        ckpt_resume_info_t info;
        err_t err;
        CU_ASSERT_EQUAL_FATAL(ckpt_resume(&c, &world, "auto", &st, &info, &err), 0);
        CU_ASSERT_EQUAL(info.step, 5);
        CU_ASSERT_EQUAL(st.step, 5);
        CU_ASSERT_EQUAL(info.n_notes, 0);
        fill(want, 5);
        CU_ASSERT_EQUAL(memcmp(b, want, sizeof *b), 0);
        free(b), free(want);
        remove_tree(dir);
    }
}

static void test_damaged_checkpoints_are_skipped(void)
{
    char dir[256], path[512];
    CU_ASSERT_EQUAL_FATAL(make_temp_dir(dir, sizeof dir), 0);
    save_steps(dir, 10, false, 1, 4);
    err_t err;
    /* step 4: one flipped byte; step 3: truncated shard; step 2: broken
     * manifest. Step 1 is the newest good one. */
    snprintf(path, sizeof path, "%s/step-00000004/rank-00000.bin", dir);
    char *data = NULL;
    size_t len = 0;
    CU_ASSERT_EQUAL_FATAL(fileio_read_all(path, &data, &len, &err), 0);
    data[len / 2] ^= 0x10;
    CU_ASSERT_EQUAL_FATAL(fileio_write_atomic(path, data, len, &err), 0);
    snprintf(path, sizeof path, "%s/step-00000003/rank-00000.bin", dir);
    CU_ASSERT_EQUAL_FATAL(fileio_write_atomic(path, data, len / 3, &err), 0);
    free(data);
    snprintf(path, sizeof path, "%s/step-00000002/manifest.json", dir);
    CU_ASSERT_EQUAL_FATAL(fileio_write_atomic(path, "{\"format\": ", 11, &err), 0);
    /* and a save that never committed (no manifest) at step 9 */
    snprintf(path, sizeof path, "%s/step-00000009", dir);
    CU_ASSERT_EQUAL_FATAL(fileio_mkdirs(path, &err), 0);
    dist_group_t world = {0, 1, NULL, NULL, NULL};
    ckpt_config_t c = config(dir, 10, false);
    state_buf_t *b = calloc(1, sizeof *b), *want = malloc(sizeof *want);
    ckpt_state_t st = {b->params, b->m, b->v, 0};
    ckpt_resume_info_t info;
    CU_ASSERT_EQUAL_FATAL(ckpt_resume(&c, &world, "auto", &st, &info, &err), 0);
    CU_ASSERT_EQUAL(info.step, 1);
    CU_ASSERT_EQUAL_FATAL(info.n_notes, 4);
    CU_ASSERT_PTR_NOT_NULL(strstr(info.notes[0], "no manifest"));
    CU_ASSERT_PTR_NOT_NULL(strstr(info.notes[1], "checksum"));
    CU_ASSERT_PTR_NOT_NULL(strstr(info.notes[2], "truncated"));
    CU_ASSERT_PTR_NOT_NULL(strstr(info.notes[3], "damaged manifest"));
    fill(want, 1);
    CU_ASSERT_EQUAL(memcmp(b, want, sizeof *b), 0);
    /* asking for a damaged one by name is an error, not a silent skip */
    snprintf(path, sizeof path, "%s/step-00000004", dir);
    CHECK_ERR(ckpt_resume(&c, &world, path, &st, &info, &err), &err, ERR_INPUT, "checksum");
    /* a checkpoint of another run is refused */
    ckpt_config_t other = c;
    snprintf(other.model, sizeof other.model, "tiny-llama");
    CHECK_ERR(ckpt_resume(&other, &world, "auto", &st, &info, &err), &err, ERR_INPUT,
              "another run", "tiny-llama");
    other = c;
    other.tp = 2;
    CHECK_ERR(ckpt_resume(&other, &world, "auto", &st, &info, &err), &err, ERR_INPUT, "TP 1 x DP 1");
    /* nothing at all: a fresh start */
    char empty[256];
    CU_ASSERT_EQUAL_FATAL(make_temp_dir(empty, sizeof empty), 0);
    ckpt_config_t none = config(empty, 1, false);
    CU_ASSERT_EQUAL(ckpt_resume(&none, &world, "auto", &st, &info, &err), 0);
    CU_ASSERT_EQUAL(info.step, -1);
    free(b), free(want);
    remove_tree(dir);
    remove_tree(empty);
}

static void test_unwritable_directory(void)
{
    dist_group_t world = {0, 1, NULL, NULL, NULL};
    ckpt_config_t c = config("/proc/scaleplan-no-such-dir", 1, false);
    ckpt_writer_t *w = NULL;
    err_t err;
    CHECK_ERR(ckpt_writer_create(&c, &world, &w, &err), &err, ERR_RUNTIME, "/proc");
    c = config("/tmp", 0, false);
    CHECK_ERR(ckpt_writer_create(&c, &world, &w, &err), &err, ERR_INPUT, "--checkpoint-keep");
}

/* Issue 17 row 9: numbers of a manifest are checked before any cast. A
 * "step" that is not a whole number from 0 to 2^53 (1e300, -3, 2.5) makes
 * the manifest unusable: skipped when resuming automatically, an error by
 * name. (The old cast of 1e300 to long was undefined behaviour, which
 * make asan catches with -fsanitize=float-cast-overflow.) */
static void test_manifest_numbers_checked(void)
{
    static const char *steps[] = {"1e300", "-3", "2.5", "\"7\"", "1e19"};
    for (size_t k = 0; k < sizeof steps / sizeof steps[0]; k++) {
        char dir[256], path[512];
        CU_ASSERT_EQUAL_FATAL(make_temp_dir(dir, sizeof dir), 0);
        save_steps(dir, 10, false, 1, 2);
        snprintf(path, sizeof path, "%s/step-00000002/manifest.json", dir);
        char *text = slurp(path);
        CU_ASSERT_PTR_NOT_NULL_FATAL(text);
        char *at = strstr(text, "\"step\":");
        CU_ASSERT_PTR_NOT_NULL_FATAL(at);
        char *end = at + strcspn(at, ",");
        char edited[8192];
        snprintf(edited, sizeof edited, "%.*s\"step\": %s%s", (int)(at - text), text, steps[k],
                 end);
        free(text);
        err_t err;
        CU_ASSERT_EQUAL_FATAL(fileio_write_atomic(path, edited, strlen(edited), &err), 0);
        dist_group_t world = {0, 1, NULL, NULL, NULL};
        ckpt_config_t c = config(dir, 10, false);
        state_buf_t *b = calloc(1, sizeof *b);
        ckpt_state_t st = {b->params, b->m, b->v, 0};
        ckpt_resume_info_t info;
        CU_ASSERT_EQUAL(ckpt_resume(&c, &world, "auto", &st, &info, &err), 0);
        CU_ASSERT_EQUAL(info.step, 1);
        CU_ASSERT_TRUE(info.n_notes == 1 && strstr(info.notes[0], "not a scaleplan-checkpoint"));
        snprintf(path, sizeof path, "%s/step-00000002", dir);
        CHECK_ERR(ckpt_resume(&c, &world, path, &st, &info, &err), &err, ERR_INPUT,
                  "not a scaleplan-checkpoint");
        free(b);
        remove_tree(dir);
    }
}

/* The run's settings in the manifest: another value is refused naming it,
 * unless allow_changes, which resumes and lists the change; a fresh run
 * into a folder with checkpoints is refused unless overwrite. */
static void test_settings_recorded(void)
{
    char dir[256];
    CU_ASSERT_EQUAL_FATAL(make_temp_dir(dir, sizeof dir), 0);
    dist_group_t world = {0, 1, NULL, NULL, NULL};
    ckpt_config_t c = config(dir, 5, false);
    err_t err;
    CU_ASSERT_EQUAL(ckpt_setting(&c, "seed", &err, "%d", 1), 0);
    CU_ASSERT_EQUAL(ckpt_setting(&c, "lr", &err, "%.17g", 6e-4), 0);
    CU_ASSERT_EQUAL(ckpt_check_fresh(&c, &world, false, &err), 0); /* empty: fine */
    ckpt_writer_t *w = NULL;
    CU_ASSERT_EQUAL_FATAL(ckpt_writer_create(&c, &world, &w, &err), 0);
    state_buf_t *b = malloc(sizeof *b);
    fill(b, 3);
    ckpt_state_t st = {b->params, b->m, b->v, 3};
    CU_ASSERT_EQUAL(ckpt_save(w, &st, NULL, &err), 0);
    CU_ASSERT_EQUAL(ckpt_writer_close(w, &err), 0);
    ckpt_resume_info_t info;
    CU_ASSERT_EQUAL(ckpt_resume(&c, &world, "auto", &st, &info, &err), 0);
    CU_ASSERT_EQUAL(info.step, 3);
    CU_ASSERT_STRING_EQUAL(info.changed, "");
    ckpt_config_t other = c;
    snprintf(other.settings[0].value, sizeof other.settings[0].value, "2");
    CHECK_ERR(ckpt_resume(&other, &world, "auto", &st, &info, &err), &err, ERR_INPUT,
              "seed 1 in the checkpoint, 2 in this run", "--allow-changes");
    other.allow_changes = true;
    CU_ASSERT_EQUAL(ckpt_resume(&other, &world, "auto", &st, &info, &err), 0);
    CU_ASSERT_EQUAL(info.step, 3);
    CU_ASSERT_PTR_NOT_NULL(strstr(info.changed, "seed 1 in the checkpoint, 2 in this run"));
    /* a fresh run */
    CHECK_ERR(ckpt_check_fresh(&c, &world, false, &err), &err, ERR_INPUT, "--checkpoint-dir",
              "step 3", "--overwrite");
    CU_ASSERT_EQUAL(ckpt_check_fresh(&c, &world, true, &err), 0);
    CU_ASSERT_EQUAL(count_steps(dir), 0);
    free(b);
    remove_tree(dir);
}

TEST_SUITE(suite_checkpoint, "checkpoint", TEST(test_save_rotate_resume),
           TEST(test_damaged_checkpoints_are_skipped), TEST(test_unwritable_directory),
           TEST(test_manifest_numbers_checked), TEST(test_settings_recorded));
