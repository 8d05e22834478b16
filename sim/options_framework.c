/* options_framework: a framework preset (sim/framework.h) loaded and
 * applied to sim_options_t and the layout, declared in sim/costs.h.
 *
 * Kept apart from the cost modules: sim/framework.h includes sim/costs.h
 * for sim_options_t, so the file that calls the preset reader is one that
 * nothing in costs includes back (tools/check-circles.sh). */
#include "sim/costs.h"
#include "frameworks/framework.h"

int sim_options_framework(const char *name, const char *gpu, sim_options_t *o, layout_t *l,
                          err_t *err)
{
    return sim_options_framework_in(NULL, name, gpu, o, l, err);
}

int sim_options_framework_in(catalog_t *cat, const char *name, const char *gpu, sim_options_t *o,
                             layout_t *l, err_t *err)
{
    fw_preset_t p;
    int rc = fw_load_in(cat, name, &p, err);
    if (rc)
        return rc;
    fw_apply(&p, o, l);
    fw_apply_gpu(&p, gpu, NULL, o);
    return ERR_OK;
}
