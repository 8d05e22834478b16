/* pubfit: the sustained factor of each GPU's profile that published runs
 * imply.
 *
 * A profile's sustained_factor is the share of the modeled tensor-core
 * throughput that sustained training reaches (the clock under the power
 * limit, library versions, kernels the model does not list). The default
 * profiles fit it to the published runs on their GPU by one rule: the
 * median signed error over that GPU's dense runs is zero. This module
 * applies the rule to any CSV of published runs (the schema of
 * shared/validation/throughput.csv), so that the declared fits can be
 * re-derived and a team can fit the factor to its own runs.
 */
#ifndef SCALEPLAN_VALIDATE_PUBFIT_H
#define SCALEPLAN_VALIDATE_PUBFIT_H

#include "common/error.h"
#include "validate/published.h"

#define PUBFIT_MAX_IDS 512

typedef struct {
    char gpu[32];       /* catalog GPU */
    int rows;           /* dense rows replayed on it (not skipped) */
    char row_ids[PUBFIT_MAX_IDS]; /* "T045, T046, ..." (cut short with "...") */
    double current;     /* the profile's factor (opt->profile's for its GPU,
                           else the default profile's) */
    double fitted;      /* the factor that makes the median signed error zero */
    double median_current, median_fitted; /* median signed error at each */
    bool bracketed;     /* a factor in [0.1, 1.2] (the range a profile accepts) reaches zero; false: fitted is
                           the bound nearest to it */
} pub_fit_t;

/* One fit per GPU that has dense rows in csv_path, in the order the GPUs
 * first appear. opt as for pub_replay (its only_gpu is ignored). Each fit
 * bisects the factor to 1e-4, replaying that GPU's rows at each step (rows
 * with open choices are re-chosen at each factor). *fits is a heap array.
 * ERR_INPUT as pub_replay; ERR_RUNTIME on OOM. */
int pub_fit_sustained(const char *csv_path, const pub_options_t *opt, pub_fit_t **fits, int *n,
                      err_t *err);

/* The profile a fit for gpu starts from (pub_fit_t.current): a copy of
 * opt->profile when it is gpu's, else gpu's default profile (looked up in
 * opt->catalog). The caller frees it with prof_free. */
int pub_fit_profile(const pub_options_t *opt, const char *gpu, profile_t *p, err_t *err);

#endif
