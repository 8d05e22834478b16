/* checkpoint: atomic, checksummed saves; rotation; asynchronous writes;
 * resume from the newest valid checkpoint, skipping damaged ones; refusal
 * of another run's checkpoint. One process (a world of one rank). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "common/fileio.h"
#include "common/strfmt.h"
#include "trainer/checkpoint.h"
#include "trainer/runlock.h"

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
    for (int s = 0; s <= 100; s++) {
        char *path = str_printf("%s/step-%08d/manifest.json", dir, s);
        CU_ASSERT_PTR_NOT_NULL_FATAL(path);
        n += access(path, F_OK) == 0;
        free(path);
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
        ckpt_resume_info_free(&info);
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
    ckpt_resume_info_free(&info);
    /* asking for a damaged one by name is an error, not a silent skip */
    snprintf(path, sizeof path, "%s/step-00000004", dir);
    CHECK_ERR(ckpt_resume(&c, &world, path, &st, &info, &err), &err, ERR_INPUT, "checksum");
    ckpt_resume_info_free(&info);
    /* a checkpoint of another run is refused */
    ckpt_config_t other = c;
    snprintf(other.model, sizeof other.model, "tiny-llama");
    CHECK_ERR(ckpt_resume(&other, &world, "auto", &st, &info, &err), &err, ERR_INPUT,
              "another run", "tiny-llama");
    ckpt_resume_info_free(&info);
    other = c;
    other.tp = 2;
    CHECK_ERR(ckpt_resume(&other, &world, "auto", &st, &info, &err), &err, ERR_INPUT, "TP 1 x DP 1");
    ckpt_resume_info_free(&info);
    /* nothing at all: a fresh start */
    char empty[256];
    CU_ASSERT_EQUAL_FATAL(make_temp_dir(empty, sizeof empty), 0);
    ckpt_config_t none = config(empty, 1, false);
    CU_ASSERT_EQUAL(ckpt_resume(&none, &world, "auto", &st, &info, &err), 0);
    CU_ASSERT_EQUAL(info.step, -1);
    ckpt_resume_info_free(&info);
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
        ckpt_resume_info_free(&info);
        snprintf(path, sizeof path, "%s/step-00000002", dir);
        CHECK_ERR(ckpt_resume(&c, &world, path, &st, &info, &err), &err, ERR_INPUT,
                  "not a scaleplan-checkpoint");
        ckpt_resume_info_free(&info);
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
    CU_ASSERT_PTR_NULL(info.changed);
    ckpt_resume_info_free(&info);
    ckpt_config_t other = c; /* shares c's values: only c is freed */
    char two[] = "2";
    other.settings[0].value = two;
    CHECK_ERR(ckpt_resume(&other, &world, "auto", &st, &info, &err), &err, ERR_INPUT,
              "seed 1 in the checkpoint, 2 in this run", "--allow-changes");
    ckpt_resume_info_free(&info);
    other.allow_changes = true;
    CU_ASSERT_EQUAL(ckpt_resume(&other, &world, "auto", &st, &info, &err), 0);
    CU_ASSERT_EQUAL(info.step, 3);
    CU_ASSERT_TRUE(info.changed && strstr(info.changed, "seed 1 in the checkpoint, 2 in this run"));
    ckpt_resume_info_free(&info);
    /* a fresh run */
    CHECK_ERR(ckpt_check_fresh(&c, &world, false, &err), &err, ERR_INPUT, "--checkpoint-dir",
              "step 3", "--overwrite");
    CU_ASSERT_EQUAL(ckpt_check_fresh(&c, &world, true, &err), 0);
    CU_ASSERT_EQUAL(count_steps(dir), 0);
    ckpt_config_free(&c);
    free(b);
    remove_tree(dir);
}


/* One save of c at step 3 (the state filled with 3). */
static void save_one(const ckpt_config_t *c)
{
    dist_group_t world = {0, 1, NULL, NULL, NULL};
    ckpt_writer_t *w = NULL;
    err_t err;
    CU_ASSERT_EQUAL_FATAL(ckpt_writer_create(c, &world, &w, &err), 0);
    state_buf_t *b = malloc(sizeof *b);
    fill(b, 3);
    ckpt_state_t st = {b->params, b->m, b->v, 3};
    CU_ASSERT_EQUAL(ckpt_save(w, &st, NULL, &err), 0);
    CU_ASSERT_EQUAL(ckpt_writer_close(w, &err), 0);
    free(b);
}

/* Issue 35 row 4: the architecture is recorded, and a resume with any
 * other value of a field (or a field missing on either side) is refused
 * naming it with both values, allow_changes or not. A manifest of the
 * format before (scaleplan-checkpoint/2, no architecture) is refused
 * saying so, automatic or by name: skipping it would start over. */
static void test_architecture_recorded(void)
{
    char dir[256], path[512];
    CU_ASSERT_EQUAL_FATAL(make_temp_dir(dir, sizeof dir), 0);
    dist_group_t world = {0, 1, NULL, NULL, NULL};
    ckpt_config_t c = config(dir, 5, false);
    err_t err;
    CU_ASSERT_EQUAL(ckpt_arch(&c, "n_heads", &err, "%d", 4), 0);
    CU_ASSERT_EQUAL(ckpt_arch(&c, "head_dim", &err, "%d", 8), 0);
    CU_ASSERT_EQUAL(ckpt_arch(&c, "norm", &err, "%s", "layernorm"), 0);
    CHECK_ERR(ckpt_arch(&c, "a_name_longer_than_the_field", &err, "1"), &err, ERR_RUNTIME,
              "too long");
    save_one(&c);
    state_buf_t *b = calloc(1, sizeof *b);
    ckpt_state_t st = {b->params, b->m, b->v, 0};
    ckpt_resume_info_t info;
    CU_ASSERT_EQUAL(ckpt_resume(&c, &world, "auto", &st, &info, &err), 0);
    CU_ASSERT_EQUAL(info.step, 3);
    ckpt_resume_info_free(&info);
    ckpt_config_t other = c; /* shares c's values: only c is freed */
    char eight[] = "8";
    other.arch[0].value = eight;
    for (int allow = 0; allow <= 1; allow++) {
        other.allow_changes = allow;
        CHECK_ERR(ckpt_resume(&other, &world, "auto", &st, &info, &err), &err, ERR_INPUT,
                  "another model architecture", "n_heads 4 in the checkpoint, 8 in this run");
        ckpt_resume_info_free(&info);
    }
    other = c;
    other.n_arch = 2; /* the checkpoint has a field this run does not */
    CHECK_ERR(ckpt_resume(&other, &world, "auto", &st, &info, &err), &err, ERR_INPUT,
              "norm layernorm in the checkpoint, (none) in this run");
    ckpt_resume_info_free(&info);
    /* the manifest as the format before wrote it */
    snprintf(path, sizeof path, "%s/step-00000003/manifest.json", dir);
    char *text = slurp(path);
    cJSON *m = cJSON_Parse(text ? text : "");
    free(text);
    CU_ASSERT_PTR_NOT_NULL_FATAL(m);
    cJSON_DeleteItemFromObject(m, "architecture");
    cJSON_ReplaceItemInObject(m, "format", cJSON_CreateString(CKPT_FORMAT_V2));
    text = cJSON_Print(m);
    cJSON_Delete(m);
    CU_ASSERT_EQUAL_FATAL(fileio_write_atomic(path, text, strlen(text), &err), 0);
    free(text);
    snprintf(path, sizeof path, "%s/step-00000003", dir);
    const char *which[] = {"auto", path};
    for (int k = 0; k < 2; k++) {
        CHECK_ERR(ckpt_resume(&c, &world, which[k], &st, &info, &err), &err, ERR_INPUT,
                  "older scaleplan (scaleplan-checkpoint/2)", "architecture", "--overwrite");
        ckpt_resume_info_free(&info);
    }
    ckpt_config_free(&c);
    free(b);
    remove_tree(dir);
}

/* Issue 35 row 6: one lock per folder. flock locks of two open files
 * conflict even in one process, so a second acquire here stands for a
 * second run: refused naming this process; free again once released. */
static void test_run_lock(void)
{
    char dir[256];
    CU_ASSERT_EQUAL_FATAL(make_temp_dir(dir, sizeof dir), 0);
    runlock_t *first = NULL, *second = NULL;
    err_t err;
    CU_ASSERT_EQUAL_FATAL(runlock_acquire(dir, "--checkpoint-dir", &first, &err), 0);
    char who[64];
    snprintf(who, sizeof who, "pid %ld on host ", (long)getpid());
    CHECK_ERR(runlock_acquire(dir, "--checkpoint-dir", &second, &err), &err, ERR_INPUT,
              "--checkpoint-dir: in use by another training", who, "started ");
    CU_ASSERT_PTR_NULL(second);
    runlock_release(first);
    CU_ASSERT_EQUAL(runlock_acquire(dir, "--checkpoint-dir", &second, &err), 0);
    runlock_release(second);
    CHECK_ERR(runlock_acquire("/proc/scaleplan-no-such-dir", "--checkpoint-dir", &second, &err),
              &err, ERR_RUNTIME, "train.lock");
    remove_tree(dir);
}

/* Issue 35 row 5: after a resume from step 3, the newer step folders are
 * moved into one retired-after-step-00000003-* folder, and an automatic
 * resume finds step 3; after a resume from a folder elsewhere, a step
 * folder of the same step here is retired too. */
static void test_retire_newer(void)
{
    char dir[256], elsewhere[256], path[512];
    CU_ASSERT_EQUAL_FATAL(make_temp_dir(dir, sizeof dir), 0);
    CU_ASSERT_EQUAL_FATAL(make_temp_dir(elsewhere, sizeof elsewhere), 0);
    save_steps(dir, 10, false, 1, 5);
    dist_group_t world = {0, 1, NULL, NULL, NULL};
    ckpt_config_t c = config(dir, 10, false);
    err_t err;
    char *note = NULL;
    snprintf(path, sizeof path, "%s/step-00000003", dir);
    CU_ASSERT_EQUAL(ckpt_retire_newer(&c, &world, 3, path, &note, &err), 0);
    CU_ASSERT_TRUE(note && strstr(note, "moved 2 newer checkpoint folders") &&
                   strstr(note, "steps 4 to 5") && strstr(note, "/retired-after-step-00000003-"));
    free(note);
    CU_ASSERT_EQUAL(count_steps(dir), 3);
    char cmd[700];
    snprintf(cmd, sizeof cmd, "test -f %s/retired-after-step-00000003-*/step-00000005/manifest.json",
             dir);
    CU_ASSERT_EQUAL(system(cmd), 0);
    state_buf_t *b = calloc(1, sizeof *b);
    ckpt_state_t st = {b->params, b->m, b->v, 0};
    ckpt_resume_info_t info;
    CU_ASSERT_EQUAL(ckpt_resume(&c, &world, "auto", &st, &info, &err), 0);
    CU_ASSERT_EQUAL(info.step, 3);
    ckpt_resume_info_free(&info);
    /* nothing newer: nothing moved, no note */
    CU_ASSERT_EQUAL(ckpt_retire_newer(&c, &world, 3, path, &note, &err), 0);
    CU_ASSERT_PTR_NULL(note);
    save_steps(elsewhere, 10, false, 2, 2);
    snprintf(path, sizeof path, "%s/step-00000002", elsewhere);
    CU_ASSERT_EQUAL(ckpt_retire_newer(&c, &world, 2, path, &note, &err), 0);
    CU_ASSERT_TRUE(note && strstr(note, "steps 2 to 3"));
    free(note);
    CU_ASSERT_EQUAL(count_steps(dir), 1);
    free(b);
    remove_tree(dir);
    remove_tree(elsewhere);
}

/* Issue 35 row 7: no fixed-size path buffer. A 600-byte folder (past the
 * old 512-byte buffers) saves and resumes, naming the whole path; one too
 * long for the files under it to fit PATH_MAX is refused naming the flag. */
static void test_long_paths(void)
{
    char dir[256];
    CU_ASSERT_EQUAL_FATAL(make_temp_dir(dir, sizeof dir), 0);
    char *deep = deep_path(dir, 600);
    CU_ASSERT_PTR_NOT_NULL_FATAL(deep);
    save_steps(deep, 2, true, 1, 3);
    CU_ASSERT_EQUAL(count_steps(deep), 2); /* keep 2 */
    dist_group_t world = {0, 1, NULL, NULL, NULL};
    ckpt_config_t c = config(deep, 2, false);
    state_buf_t *b = calloc(1, sizeof *b), *want = malloc(sizeof *want);
    ckpt_state_t st = {b->params, b->m, b->v, 0};
    ckpt_resume_info_t info;
    err_t err;
    CU_ASSERT_EQUAL(ckpt_resume(&c, &world, "auto", &st, &info, &err), 0);
    CU_ASSERT_EQUAL(info.step, 3);
    char *want_path = str_printf("%s/step-00000003", deep);
    CU_ASSERT_TRUE(info.path && want_path && strcmp(info.path, want_path) == 0);
    fill(want, 3);
    CU_ASSERT_EQUAL(memcmp(b, want, sizeof *b), 0);
    ckpt_resume_info_free(&info);
    CU_ASSERT_EQUAL(ckpt_check_path(deep, "--checkpoint-dir", &err), 0);
    char *deeper = deep_path(deep, 5000);
    CU_ASSERT_PTR_NOT_NULL_FATAL(deeper);
    free(deep);
    deep = deeper;
    CHECK_ERR(ckpt_check_path(deep, "--checkpoint-dir", &err), &err, ERR_INPUT,
              "--checkpoint-dir: a path of ", "too long");
    c = config(deep, 2, false);
    ckpt_writer_t *w = NULL;
    CHECK_ERR(ckpt_writer_create(&c, &world, &w, &err), &err, ERR_INPUT, "--checkpoint-dir");
    free(want_path);
    free(deep);
    free(b), free(want);
    remove_tree(dir);
}

TEST_SUITE(suite_checkpoint, "checkpoint", TEST(test_save_rotate_resume),
           TEST(test_damaged_checkpoints_are_skipped), TEST(test_unwritable_directory),
           TEST(test_manifest_numbers_checked), TEST(test_settings_recorded),
           TEST(test_architecture_recorded), TEST(test_run_lock), TEST(test_retire_newer),
           TEST(test_long_paths));
