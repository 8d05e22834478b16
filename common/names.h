/* names: catalog name handling shared by models, GPUs, fabrics and prices.
 *
 * Catalog names are lower-case with '-' separators ("h100-sxm",
 * "llama3-70b"). User spellings are normalised before lookup, and a failed
 * lookup can suggest the nearest known name.
 */
#ifndef SCALEPLAN_COMMON_NAMES_H
#define SCALEPLAN_COMMON_NAMES_H

#include <stddef.h>

/* Lower-case text, turn '_' and ' ' into '-', and drop a leading vendor word
 * ("nvidia-", "amd-"), writing at most cap bytes into out. */
void names_normalize(const char *text, char *out, size_t cap);

/* Edit distance between two strings, case-insensitive (capped at 64). */
int names_distance(const char *a, const char *b);

/* Index of the candidate closest to query, or -1 when none is close enough
 * to be a plausible typo (distance above a third of the query length + 2). */
int names_closest(const char *query, const char *const *candidates, size_t n);

#endif
