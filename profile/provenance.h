/* provenance: where each figure of a cost profile comes from.
 *
 * Every constant in a profile carries a source text. This module reads
 * those texts back as a list of figures, each classed as
 *
 *   measured  read off a measurement (a benchmark table, MAMF, calibrate)
 *   fitted    chosen so the model matches published training runs (the
 *             text says which rows)
 *   assumed   an assumption (the text says ASSUMED or "assumed")
 *   sourced   a datasheet, paper or code figure
 *
 * so that `scaleplan catalog profiles` can list them and `scaleplan sim`
 * can say which of its inputs are assumptions. A source text that covers
 * several figures ("tile ...; k_half ...; sustained_factor ...") is split
 * at semicolons and each clause is matched to the figure it names.
 */
#ifndef SCALEPLAN_PROFILE_PROVENANCE_H
#define SCALEPLAN_PROFILE_PROVENANCE_H

#include "profile/profile.h"

typedef enum { PROV_MEASURED = 0, PROV_FITTED, PROV_ASSUMED, PROV_SOURCED } prov_kind_t;

#define PROV_MAX_FIGURES 40
#define PROV_TEXT_MAX 400

typedef struct {
    char name[40];   /* "gemm.sustained_factor", "attention.cudnn", ... */
    double value;    /* the figure (a kernel's forward plateau for attention) */
    prov_kind_t kind;
    char text[PROV_TEXT_MAX]; /* the clause of the source that covers it */
} prov_figure_t;

/* "measured", "fitted", "assumed", "sourced". */
const char *prov_kind_name(prov_kind_t k);

/* Class of a source clause: "fitted" or "assumed", whichever it says
 * first ("ASSUMED equal to the fitted factor of ..." is an assumption),
 * else measured, else sourced. */
prov_kind_t prov_classify(const char *text);

/* The profile's figures with their class, at most max; returns the count. */
int prov_figures(const profile_t *p, prov_figure_t *out, int max);

#endif
