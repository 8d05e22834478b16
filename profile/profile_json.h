/* profile_json: a profile as a JSON document ("scaleplan-profile/1").
 *
 * The edge between profile_t and its file form, for the calibrator (which
 * writes measured profiles) and for tests; everything else loads and saves
 * profiles by path through profile.h.
 */
#ifndef SCALEPLAN_PROFILE_PROFILE_JSON_H
#define SCALEPLAN_PROFILE_PROFILE_JSON_H

#include <cjson/cJSON.h>

#include "profile/profile.h"

/* Fill p from a parsed profile document; file names it in errors (which
 * name the key). Catalog figures come from the GPU the profile names.
 * On error p owns nothing. */
int prof_from_json(const cJSON *root, const char *file, profile_t *p, err_t *err);

/* Serialise p; the caller deletes the result. NULL on OOM. */
cJSON *prof_to_json(const profile_t *p);

#endif
