/* planInt: private to plan/plan*.c (as sim/costsInt.h): the frameworks one
 * layout search runs (plan/plan.h, plan/plan_entries.c): each preset
 * in each precision searched, a slot of plan_search_t.per_framework, and,
 * for a mixture-of-experts model, its variants: the same preset with
 * another MoE token dispatcher or CUDA graph scope set, which price the
 * layouts their base enumerates (plan/plan.c).
 *
 * Pure functions over the catalog's presets; no state. */
#ifndef SCALEPLAN_PLAN_PLANINT_H
#define SCALEPLAN_PLAN_PLANINT_H

#include "plan/plan.h"

/* One entry: a preset's options in one precision with one dispatcher and
 * one set of graph scopes. */
typedef struct {
    fw_preset_t fw;
    sim_options_t opt;
    precision_t precision;
    bool flash;
    int slot;            /* its entry of plan_search_t.per_framework */
    int base;            /* the entry whose layouts it prices (itself when
                            it enumerates them) */
    bool other_scopes;   /* its CUDA graph scopes are not the base's */
    plan_moe_pick_t moe; /* its dispatcher and scopes, when searched */
} plan_fw_t;

/* The entries of s on GPU g for model m, each base followed by its
 * variants: into fws[0..*n) (PLAN_MAX_VARIANTS at most) over *slots slots
 * (PLAN_MAX_FRAMEWORKS at most). ERR_INPUT when a named framework cannot
 * run m or train in the precision, or when nothing plannable does. */
int plan_entries(const plan_space_t *s, const gpu_t *g, const model_t *m, plan_fw_t *fws, int *n,
                 int *slots, err_t *err);

#endif
