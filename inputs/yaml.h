/* yaml: the YAML subset that launcher configs use (accelerate's
 * default_config.yaml, as `accelerate config` writes it and as teams edit it).
 *
 * Reads block mappings nested by indentation, plain, single- and
 * double-quoted scalars, flow sequences of scalars ([], [0, 1]), block
 * sequences of scalars ("- item" lines) and comments, into the same
 * dotted-path document the TOML reader makes ("deepspeed_config.zero_stage"),
 * so a reader of either format asks the same questions. Scalars are typed as
 * PyYAML's safe_load types them (YAML 1.1): true/false/yes/no/on/off are
 * booleans, digits are integers, decimals and exponents floats, a quoted value
 * is always a string; a key whose value is null (~, null, empty with nothing
 * under it) is not stored, the same as absent. What it does not read it
 * refuses in one line, "file: line N: reason": anchors and aliases, tags,
 * block scalars (| and >), flow mappings other than {}, lists of mappings,
 * multi-line plain scalars, tabs in indentation, a key given twice, nesting
 * deeper than 16 levels, several documents.
 */
#ifndef SCALEPLAN_INPUTS_YAML_H
#define SCALEPLAN_INPUTS_YAML_H

#include <stddef.h>

#include "common/error.h"
#include "inputs/toml.h"

/* Parse text (len bytes; origin names it in messages) into doc, which the
 * caller frees with toml_free whatever this returns. ERR_INPUT with
 * "origin: line N: reason"; ERR_RUNTIME when out of memory. */
int yaml_parse(const char *text, size_t len, const char *origin, toml_doc_t *doc, err_t *err);

#endif
