/* sites: the command-line side of gradient codecs (plan/codec.h) and
 * training across islands (plan/islands.h) for sim and plan: the options
 * --grad-codec, --islands, --island-link and --diloco, their checks (one
 * line, exit 2, before anything is simulated) and what sim and plan print
 * of them (text, or a "grad_codec" / "sites" member of --json). Without
 * these options nothing here runs and no output changes. */
#ifndef SCALEPLAN_COMMANDS_SITES_H
#define SCALEPLAN_COMMANDS_SITES_H

#include <cjson/cJSON.h>

#include "commands/args.h"
#include "plan/codec.h"
#include "plan/ladder.h"
#include "sim/scenario.h"

extern const cmd_group_t CMD_SITES_OPTS;

/* scaleplan catalog codecs: every codec with its wire bits, whether it
 * sums in an all-reduce, its extra tokens, who runs it and its source
 * (json: a "codecs" array added to it instead). */
int cmd_sites_catalog(cJSON *json, const cmd_args_t *a, err_t *err);

/* Whether any of the group's options was given. */
bool cmd_sites_wanted(const cmd_args_t *a);

/* The codec --grad-codec names; "auto": the one the --deepspeed config
 * turns on (plan/codec.h codec_from_ds_config), ERR_INPUT when it turns
 * none on or no config was given. */
int cmd_sites_codec(const cmd_args_t *a, catalog_t *cat, codec_t *c, err_t *err);

/* Check the options against the framework fw (NULL: not named) and, when
 * l is not NULL, the layout: a codec fw does not run, a ZeRO stage the codec
 * does not take, a zero-bandwidth link, --diloco or --island-link without
 * --islands. ERR_INPUT naming the flag. */
int cmd_sites_check(const cmd_args_t *a, const char *fw, const layout_t *l, err_t *err);

/* sim: price the scenario's step with the codec and across the islands;
 * print them (text output) or add them to j (NULL: none). */
int cmd_sites_sim(const cmd_args_t *a, const scenario_t *s, cJSON *j, err_t *err);

/* plan: the same for every feasible rung of l; days and dollars to the
 * same loss; the codec is used at a rung only where it shortens the time
 * to the same loss (and so the cost); islands: synchronous DP or DiLoCo,
 * whichever reaches the same loss sooner. */
int cmd_sites_plan(const cmd_args_t *a, const ladder_input_t *in, const ladder_t *l, cJSON *j,
                   err_t *err);

#endif
