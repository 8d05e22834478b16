/* preflight: the checklist planning guides ask a team to pass on its own
 * hardware before scaling up, run with the reference trainer.
 *
 * Each check starts `scaleplan train` (the binary named in the config) as
 * child processes - under mpirun for the multi-rank ones - and compares
 * what they print with --json: losses of two ways of computing the same
 * thing, a killed and resumed job against an uninterrupted one, a measured
 * step against the simulator (`scaleplan validate`). Every check ends pass,
 * fail or skip (with the reason) and the figure it was judged on. The
 * checks, their order and tolerances are one table in preflight.c.
 */
#ifndef SCALEPLAN_TRAINER_PREFLIGHT_H
#define SCALEPLAN_TRAINER_PREFLIGHT_H

#include "common/error.h"

typedef enum { PF_PASS = 0, PF_FAIL, PF_SKIP } pf_verdict_t;

#define PF_N_CHECKS 6

typedef struct {
    const char *name;     /* what the check asks (static) */
    pf_verdict_t verdict;
    char figure[240];     /* the figure it was judged on, or why it was skipped */
} pf_check_t;

typedef struct {
    const char *self;   /* the scaleplan binary the checks start */
    const char *dir;    /* an existing work folder for the runs' files */
    const char *model;  /* --model of the runs; NULL = a 2-layer GPT written into dir */
    const char *device; /* "cpu" or "cuda" */
    const char *mpirun; /* launcher of the multi-rank runs */
    int ranks, steps, micro_batch, seq_len;
} pf_config_t;

/* CPU, mpirun, 2 ranks, 6 steps, micro-batch 2, 32 tokens; self and dir
 * are the caller's to set. */
void pf_config_default(pf_config_t *c);

/* Run every check in order, filling checks[]. A check that fails is a
 * verdict, not an error; the return is ERR_INPUT for a bad device and
 * ERR_RUNTIME when a run cannot be started at all. */
int pf_run(const pf_config_t *cfg, pf_check_t checks[PF_N_CHECKS], err_t *err);

/* "pass", "fail", "skip". */
const char *pf_verdict_name(pf_verdict_t v);

#endif
