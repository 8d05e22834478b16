/* plan_entries: the frameworks a layout search runs, with their MoE
 * dispatcher and CUDA graph variants (plan/planInt.h), and how output names
 * them. */
#include "plan/planInt.h"

#include <stdio.h>
#include <string.h>

#include "common/catalog.h"
#include "sim/scenario.h"

int plan_fw_index(const plan_fw_best_t *all, int n, const char *name, precision_t precision)
{
    for (int i = 0; i < n; i++)
        if (strcmp(all[i].name, name) == 0 && all[i].precision == precision)
            return i;
    return -1;
}

void plan_fw_label(const plan_fw_best_t *f, const plan_fw_best_t *all, int n, char *buf, int cap)
{
    bool vary = false;
    for (int i = 0; i < n; i++)
        vary = vary || all[i].precision != all[0].precision;
    if (vary)
        snprintf(buf, (size_t)cap, "%s %s", f->name, layout_precision_name(f->precision));
    else
        snprintf(buf, (size_t)cap, "%s", f->name);
    char pick[96];
    plan_moe_pick_name(&f->moe, pick, sizeof pick);
    if (*pick && f->found)
        snprintf(buf + strlen(buf), (size_t)cap - strlen(buf), " %s", pick);
}

void plan_moe_pick_name(const plan_moe_pick_t *p, char *buf, int cap)
{
    *buf = 0;
    if (!p->searched)
        return;
    if (p->dispatchers_searched)
        snprintf(buf, (size_t)cap, "%s", moe_dispatch_name(p->dispatcher));
    if (p->scopes_searched) {
        char names[96] = "none";
        if (p->graph_scopes)
            host_graph_scopes_name(p->graph_scopes, names, sizeof names);
        for (char *c = names; *c; c++)
            *c = *c == ' ' ? '+' : *c;
        snprintf(buf + strlen(buf), (size_t)cap - strlen(buf), "%sgraphs=%s", *buf ? " " : "",
                 names);
    }
}


/* ------------------------------------------------------------ frameworks */



/* The preset's options with the precision's costs; false when it cannot
 * train in p. */
static int fw_setup(const fw_preset_t *fw, const char *gpu, const char *model,
                    const plan_space_t *s, precision_t p, plan_fw_t *f, err_t *err)
{
    memset(f, 0, sizeof *f);
    f->fw = *fw;
    int rc;
    layout_t scratch;
    layout_defaults(&scratch);
    fw_apply(&f->fw, &f->opt, &scratch);
    fw_apply_gpu(&f->fw, gpu, model, &f->opt);
    if (s->adjust_options && (rc = s->adjust_options(&f->opt, s->adjust_ctx, err)))
        return rc;
    f->flash = scratch.flash_attention;
    f->precision = p == PRECISION_FP8 ? f->fw.fp8_recipe : p;
    if (!(f->fw.caps.precisions & (1u << f->precision)))
        return err_setf(err, ERR_INPUT, NULL, "--precision", "%s does not train in %s",
                        f->fw.name, layout_precision_name(f->precision));
    return sim_options_precision(&f->opt, f->precision, err);
}

int plan_options(const plan_space_t *s, const char *framework, const char *gpu,
                 const char *model, precision_t precision, const plan_moe_pick_t *pick,
                 sim_options_t *o, err_t *err)
{
    fw_preset_t fw;
    int rc = fw_load(framework, &fw, err);
    if (rc)
        return rc;
    plan_fw_t f;
    if ((rc = fw_setup(&fw, gpu, model, s, precision, &f, err)))
        return rc;
    *o = f.opt;
    if (pick && pick->searched) {
        o->moe.dispatcher = pick->dispatcher;
        o->host.graph_scopes = pick->graph_scopes;
    }
    return ERR_OK;
}

/* A --schedule constraint naming only schedules the framework does not
 * run leaves it nothing with pipeline stages: say so rather than fall back
 * to layouts without them. */
static int check_schedules(const plan_space_t *s, const fw_preset_t *fw, err_t *err)
{
    if (!s->schedule_mask)
        return ERR_OK;
    char asked[96] = "", runs[96] = "";
    for (int k = 0; k < SCHEDULE_COUNT; k++) {
        if (fw->caps.schedule[k] && (s->schedule_mask & (1u << k)))
            return ERR_OK;
        char *dst = (s->schedule_mask & (1u << k)) ? asked : fw->caps.schedule[k] ? runs : NULL;
        if (dst)
            snprintf(dst + strlen(dst), 96 - strlen(dst), "%s%s", *dst ? ", " : "",
                     layout_schedule_name((schedule_t)k));
    }
    return err_setf(err, ERR_INPUT, NULL, "--schedule", "%s does not run %s; it runs %s",
                    fw->name, asked, runs);
}

/* The precisions to search, in precision_t order (plan_space_t). */
static int precisions_of(const plan_space_t *s, precision_t out[PRECISION_COUNT])
{
    if (!s->precision_mask) {
        out[0] = s->precision;
        return 1;
    }
    int n = 0;
    for (int k = 0; k < PRECISION_COUNT; k++)
        if (s->precision_mask & (1u << k))
            out[n++] = (precision_t)k;
    return n;
}

/* Whether f's dispatcher and CUDA graph scopes are searched at all: a
 * mixture-of-experts model under a framework with expert parallelism. */
static bool moe_searchable(const plan_fw_t *f, const model_t *m, const plan_space_t *s)
{
    return !s->keep_moe_options && model_is_moe(m) && f->fw.caps.ep;
}

/* The dispatchers f runs in the search, its own first: the one the user or
 * the run's file named, else each the framework offers, DeepEP only on
 * GPUs it runs on (scenario_deepep_unsupported). How many (1..3). */
static int dispatchers_of(const plan_fw_t *f, const model_t *m, const gpu_t *g,
                          const plan_space_t *s, moe_dispatch_t out[3])
{
    moe_dispatch_t own = f->opt.moe.dispatcher;
    int n = 0;
    if (moe_searchable(f, m, s) && !f->opt.moe.dispatcher_given)
        for (int d = 0; d < 3; d++)
            if (f->fw.caps.dispatchers[d] &&
                (d != MOE_DISPATCH_DEEPEP || !scenario_deepep_unsupported(g)))
                out[n++] = (moe_dispatch_t)d;
    for (int k = 0; k < n; k++) /* its own first, when it is among them */
        if (out[k] == own) {
            out[k] = out[0];
            out[0] = own;
        }
    if (!n)
        out[n++] = own;
    return n;
}

/* Megatron-Core's CUDA graph scopes where f prices its host's issue costs
 * and runs Megatron-Core's MoE layer (sp_with_moe_tp: the frameworks whose
 * launch writes --cuda-graph-scope), unless the user or the run's file
 * named them: the recipe's, none, and the attention with the router and
 * the dispatcher's preprocess (the most a dropless run captures: a whole
 * "moe" block needs fixed token counts, sim cost_host_graphs_possible).
 * How many (1..3), the recipe's first. */
static int scopes_of(const plan_fw_t *f, const model_t *m, const plan_space_t *s,
                     unsigned out[3])
{
    static const unsigned TRY[] = {0, HOST_GRAPH_ATTN | HOST_GRAPH_MOE_ROUTER |
                                          HOST_GRAPH_MOE_PREPROCESS};
    int n = 0;
    out[n++] = f->opt.host.graph_scopes;
    if (!moe_searchable(f, m, s) || f->opt.host.op_us <= 0 || f->opt.host.graph_scopes_given ||
        !f->fw.caps.sp_with_moe_tp)
        return n;
    for (size_t k = 0; k < sizeof TRY / sizeof *TRY; k++)
        if (TRY[k] != out[0])
            out[n++] = TRY[k];
    return n;
}

/* f (just added as fws[*n - 1]) with each other dispatcher and scope set
 * searched, as entries that price f's layouts (base) in the same slot. */
static void add_variants(const model_t *m, const gpu_t *g, const plan_space_t *s,
                         plan_fw_t *fws, int *n)
{
    plan_fw_t *f = &fws[*n - 1];
    moe_dispatch_t ds[3];
    unsigned gs[3];
    int nd = dispatchers_of(f, m, g, s, ds), ng = scopes_of(f, m, s, gs);
    f->opt.moe.dispatcher = ds[0]; /* DeepEP where it does not run: alltoall */
    f->moe = (plan_moe_pick_t){nd * ng > 1, nd > 1, ng > 1, ds[0], gs[0]};
    for (int i = 0; i < nd; i++)
        for (int j = 0; j < ng && *n < PLAN_MAX_VARIANTS; j++) {
            if (!i && !j)
                continue;
            plan_fw_t v = *f;
            v.opt.moe.dispatcher = ds[i];
            v.opt.host.graph_scopes = gs[j];
            v.moe.dispatcher = ds[i];
            v.moe.graph_scopes = gs[j];
            v.other_scopes = j > 0;
            fws[(*n)++] = v;
        }
}

/* Preset `name` in each precision it trains in (one precision: the error
 * when it does not); a precision that maps to one already added (fp8 and
 * the preset's fp8 recipe) is added once, each in its own slot with its
 * variants (add_variants). */
static int add_framework(const fw_preset_t *fw, const gpu_t *g, const model_t *m,
                         const plan_space_t *s, bool strict, plan_fw_t *fws, int *n,
                         int *slots, err_t *err)
{
    precision_t ps[PRECISION_COUNT];
    int np = precisions_of(s, ps), added = 0, first = *n;
    err_t why = {0};
    for (int k = 0; k < np && *slots < PLAN_MAX_FRAMEWORKS && *n < PLAN_MAX_VARIANTS; k++) {
        plan_fw_t f;
        err_t e;
        if (fw_setup(fw, g->name, m->name, s, ps[k], &f, &e)) {
            if (!why.code)
                why = e;
            continue;
        }
        bool again = false;
        for (int i = first; i < *n; i++)
            again = again || fws[i].precision == f.precision;
        if (again)
            continue;
        f.slot = (*slots)++;
        f.base = *n;
        fws[(*n)++] = f;
        add_variants(m, g, s, fws, n);
        added++;
    }
    if (!added && strict) {
        *err = why;
        return why.code ? why.code : ERR_INPUT;
    }
    return ERR_OK;
}

/* One framework (space->framework) or every plannable preset, each in every
 * precision searched that it trains in. */
int plan_entries(const plan_space_t *s, const gpu_t *g, const model_t *m, plan_fw_t *fws, int *n,
                 int *slots, err_t *err)
{
    *n = *slots = 0;
    fw_preset_t fw;
    if (s->framework && *s->framework) {
        int rc = fw_load(s->framework, &fw, err);
        if (rc || (rc = fw_check_model(&fw, m, err)) ||
            (rc = add_framework(&fw, g, m, s, true, fws, n, slots, err)))
            return rc;
        if ((s->rc_modules & ~(unsigned)LAYOUT_RC_CORE_ATTN) && !fws[0].fw.caps.recompute_modules)
            return err_setf(err, ERR_INPUT, NULL, "--recompute-modules",
                            "%s's selective recompute rebuilds the attention core only "
                            "(recompute modules: megatron-core, Megatron-Bridge)",
                            fws[0].fw.name);
        return check_schedules(s, &fws[0].fw, err);
    }
    char **names = NULL;
    size_t count = 0;
    int rc = fw_names(&names, &count, err);
    if (rc)
        return rc;
    for (size_t i = 0; i < count && *slots < PLAN_MAX_FRAMEWORKS; i++) {
        if ((rc = fw_load(names[i], &fw, err)))
            break;
        if (!fw.plannable || fw_check_model(&fw, m, NULL) != ERR_OK)
            continue; /* (a hybrid model: cmd_plan says which were skipped) */
        if ((rc = add_framework(&fw, g, m, s, false, fws, n, slots, err)))
            break;
    }
    catalog_free_names(names, count);
    if (!rc && *n == 0) {
        char list[96] = "";
        precision_t ps[PRECISION_COUNT];
        int np = precisions_of(s, ps);
        for (int k = 0; k < np; k++)
            snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s", k ? " or " : "",
                     layout_precision_name(ps[k]));
        rc = err_setf(err, ERR_INPUT, NULL, "--precision",
                      "no plannable framework trains in %s (scaleplan catalog frameworks)", list);
    }
    return rc;
}
