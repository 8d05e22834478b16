/* scaleplan preflight: the checklist planning guides ask a team to pass on
 * its own hardware before scaling up, run with the reference trainer.
 *
 * The checks themselves are trainer/preflight.h; this file reads the flags,
 * makes the work folder and prints the verdicts.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "commands/args.h"
#include "commands/commands.h"
#include "commands/output.h"
#include "models/model.h"
#include "common/fileio.h"
#include "common/json.h"
#include "reports/table.h"
#include "trainer/preflight.h"

static const cmd_opt_t own_opts[] = {
    {"--device", NULL, "cpu|cuda", "where the checks train (default cpu)", CMD_WORD},
    {"--ranks", NULL, "N", "ranks for the multi-process checks (default 2)", CMD_N(2, 4096)},
    {"--steps", NULL, "N", "steps per run (default 6)", CMD_N(4, 100000)},
    {"--micro-batch", NULL, "N", "sequences per micro-batch (default 2)", CMD_N(1, 4096)},
    {"--seq-len", NULL, "N", "tokens per sequence (default 32)", CMD_N(2, 1 << 20)},
    {"--mpirun", NULL, "CMD", "launcher for multi-rank runs (default mpirun)", CMD_WORD},
    {"--keep", NULL, "DIR", "keep every run's files in DIR (default: a temporary folder, removed)",
     CMD_WORD},
};
static const cmd_group_t own_group = {"Preflight", own_opts, sizeof own_opts / sizeof own_opts[0]};

static cJSON *checks_json(const pf_config_t *p, const char *model, const pf_check_t *c, int n)
{
    cJSON *o = cJSON_CreateObject(), *arr = NULL;
    bool ok = o && cJSON_AddStringToObject(o, "device", p->device) &&
              cJSON_AddStringToObject(o, "model", model) &&
              json_add_number(o, "ranks", p->ranks) && (arr = cJSON_AddArrayToObject(o, "checks"));
    int failed = 0;
    for (int i = 0; ok && i < n; i++) {
        cJSON *e = cJSON_CreateObject();
        failed += c[i].verdict == PF_FAIL;
        ok = e && cJSON_AddItemToArray(arr, e) && cJSON_AddStringToObject(e, "check", c[i].name) &&
             cJSON_AddStringToObject(e, "result", pf_verdict_name(c[i].verdict)) &&
             cJSON_AddStringToObject(e, "figure", c[i].figure);
    }
    ok = ok && json_add_number(o, "failed", failed);
    if (!ok) {
        cJSON_Delete(o);
        return NULL;
    }
    return o;
}

/* What the table prints: FAIL stands out. */
static const char *verdict_text(pf_verdict_t v)
{
    return v == PF_FAIL ? "FAIL" : pf_verdict_name(v);
}

static int run(const cmd_args_t *a, err_t *err)
{
    int rc = ERR_OK;
    pf_config_t p;
    pf_config_default(&p);
    char self[1024], dir[512];
    if (cmd_get(a, "--device"))
        p.device = cmd_get(a, "--device");
    if (cmd_get(a, "--mpirun"))
        p.mpirun = cmd_get(a, "--mpirun");
    p.model = cmd_get(a, "--model");
    if ((rc = cmd_get_int(a, "--ranks", &p.ranks, err)) ||
        (rc = cmd_get_int(a, "--steps", &p.steps, err)) ||
        (rc = cmd_get_int(a, "--micro-batch", &p.micro_batch, err)) ||
        (rc = cmd_get_int(a, "--seq-len", &p.seq_len, err)))
        return rc;
    if (strcmp(p.device, "cpu") != 0 && strcmp(p.device, "cuda") != 0)
        return err_setf(err, ERR_INPUT, NULL, "--device", "must be cpu or cuda (got '%s')", p.device);
    model_t checked; /* a wrong model is this command's input error, not a failed check */
    if (p.model && (rc = model_load(p.model, &checked, err)))
        return rc;
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (n <= 0)
        return err_set(err, ERR_RUNTIME, "cannot find this program's path (/proc/self/exe)");
    self[n] = '\0';
    p.self = self;
    const char *keep = cmd_get(a, "--keep");
    if (keep) {
        snprintf(dir, sizeof dir, "%s", keep);
        if ((rc = fileio_mkdirs(dir, err)))
            return rc;
    } else {
        const char *tmp = getenv("TMPDIR");
        snprintf(dir, sizeof dir, "%s/scaleplan-preflight-XXXXXX", tmp && *tmp ? tmp : "/tmp");
        if (!mkdtemp(dir))
            return err_setf(err, ERR_RUNTIME, dir, NULL, "cannot create a work folder: %s",
                            strerror(errno));
    }
    p.dir = dir;
    pf_check_t checks[PF_N_CHECKS];
    bool json = cmd_machine_output(a);
    if (!json)
        fprintf(stderr, "preflight: running the checks with %s (work folder %s)...\n", p.device,
                dir);
    if ((rc = pf_run(&p, checks, err)))
        goto out;
    int failed = 0, passed = 0;
    for (int i = 0; i < PF_N_CHECKS; i++) {
        failed += checks[i].verdict == PF_FAIL;
        passed += checks[i].verdict == PF_PASS;
    }
    char model[640];
    if (p.model)
        snprintf(model, sizeof model, "%s", p.model);
    else
        snprintf(model, sizeof model, "%s/preflight-gpt.json", dir);
    if (json) {
        cJSON *j = checks_json(&p, model, checks, PF_N_CHECKS);
        rc = j ? cmd_emit(a, j, "checks", err) : err_set(err, ERR_RUNTIME, "out of memory");
        cJSON_Delete(j);
    } else {
        static const char *hdr[] = {"check", "result", "figure"};
        table_t *t = table_create(3, hdr);
        if (!t) {
            rc = err_set(err, ERR_RUNTIME, "out of memory");
            goto out;
        }
        for (int i = 0; i < PF_N_CHECKS; i++)
            table_add_rowf(t, "%s\t%s\t%s", checks[i].name, verdict_text(checks[i].verdict),
                           checks[i].figure);
        rc = table_print(t, stdout, 2, 0);
        table_destroy(t);
        printf("\n  %d passed, %d failed, %d skipped\n", passed, failed,
               PF_N_CHECKS - passed - failed);
    }
    if (!rc && failed > 0)
        rc = err_set(err, ERR_RUNTIME, "%d preflight check%s failed%s%s", failed,
                     failed == 1 ? "" : "s", keep ? "; runs kept in " : "", keep ? keep : "");
out:
    if (!keep) {
        err_t ignored;
        fileio_remove_tree(dir, &ignored);
    }
    return rc;
}

static const cmd_group_t *const groups[] = {&CMD_MODEL_NAME_OPTS,
                                         &own_group,
                                         &CMD_OUTPUT_OPTS};

const cmd_command_t CMD_CMD_PREFLIGHT = {
    "preflight",
    "the pre-scale-up checklist, run with the reference trainer",
    "scaleplan preflight [--device cpu|cuda] [--ranks N] [--model M]",
    "Before scaling up, check on this machine that: a data-parallel run equals\n"
                       "the one-rank run; save + resume equals an uninterrupted run (bit-exact on\n"
                       "the CPU); gradient accumulation equals the large batch; bf16 tracks fp32\n"
                       "(GPU); a killed rank is detected and the job resumes from its last\n"
                       "checkpoint; the measured step is within 10% of the prediction (GPU). Each\n"
                       "check runs scaleplan train (under mpirun for several ranks) and prints\n"
                       "pass, fail or skip with its figure. Exit 1 when a check fails.",
    groups,
    sizeof groups / sizeof groups[0],
    run,
    0,
};
