/* megatron_args: a Megatron-LM pretrain_gpt.py argument list, read exactly.
 *
 * Reads the arguments as a user has them: a whole launch script or command
 * line (torchrun ... pretrain_gpt.py --num-layers 80 ..., with shell
 * comments, line continuations, quotes, NAME=value and NAME=( ... ) array
 * assignments and their $NAME / ${NAME[@]} expansions), a plain list of
 * flags, or the (dest, value) pairs of the argument block Megatron prints at
 * start-up ("  num_layers ........ 80"). Every flag of Megatron-LM's
 * arguments.py is known (inputs/megatron_flags.tsv, generated from the
 * real parser) plus the spellings older releases used:
 *
 *   - architecture flags define a model_t (layers, widths, heads, query
 *     groups, kv channels, FFN with Megatron's own default, SwiGLU,
 *     normalization, QK norm, positions, biases, tying, dropout, the
 *     vocabulary padded as Megatron pads it; mixture of experts with
 *     --moe-layer-freq patterns, shared experts, multi-latent attention,
 *     multi-token prediction);
 *   - layout flags (TP, PP, VPP, CP, EP, batch, sequence, ZeRO-like
 *     sharding, recompute, precision, attention kernel) fill a layout_t;
 *   - overlap flags fill sim_options_t (Megatron-LM's own defaults where
 *     the command line says nothing; megatron_args_options writes them
 *     onto a framework preset's options);
 *   - the launcher (torchrun --nproc_per_node x --nnodes) gives the world
 *     size;
 *   - every other flag is accepted and, when its value differs from
 *     Megatron's default, listed in the notes: "no effect on speed or
 *     memory" or "not modeled". Assumed values (defaults Megatron applies,
 *     the padded vocabulary) are listed too.
 *
 * An unknown flag, a bad value, or an architecture scaleplan cannot count
 * exactly (Mamba hybrids, encoder-decoders, experimental attention) is a
 * one-line ERR_INPUT naming the flag.
 *
 * Use: megatron_args_init; any number of megatron_args_parse_text /
 * megatron_args_parse_argv / megatron_args_set calls (later values win, as
 * with argparse); megatron_args_finish; read the fields; megatron_args_free.
 * megatron_args_read does the whole sequence on one text.
 */
#ifndef SCALEPLAN_INPUTS_MEGATRON_ARGS_H
#define SCALEPLAN_INPUTS_MEGATRON_ARGS_H

#include <stdbool.h>
#include <stddef.h>

#include "common/error.h"
#include "common/notes.h"
#include "models/layout.h"
#include "models/model.h"
#include "sim/costs.h"

typedef struct megatron_arg megatron_arg_t; /* one argument as read (private) */

typedef struct {
    /* Results, valid after megatron_args_finish returned 0. */
    model_t model;     /* the architecture flags' model */
    bool have_model;   /* --num-layers, --hidden-size, --num-attention-heads given */
    layout_t layout;   /* layout_defaults + the layout flags; not finalized */
    sim_options_t opt; /* sim_options_default + the overlap flags */
    int world_size;    /* GPUs from the launcher (torchrun --nproc_per_node x
                          --nnodes); 0 when the text has no launcher */
    notes_t notes;     /* ignored and assumed arguments */
    /* Arguments as read (private to the module). */
    char origin[256];  /* file or "--megatron-args", for messages (a longer
                          name keeps its end after "...": str_label) */
    megatron_arg_t *args;
    size_t n_args, cap_args;
    int nproc_per_node, nnodes;
    char script[64];   /* the Python script the launch command runs
                          ("pretrain_gpt.py"), "" when none */
    size_t expanded_bytes; /* bytes of words the shell reader made (also
                              when it refused the text), at most
                              MEGATRON_MAX_EXPANDED_BYTES a text */
} megatron_args_t;

/* Caps on what the shell reader makes of one text: bytes of words (the
 * text's own and every expansion of a variable) and words in one list.
 * Real launch scripts make kilobytes; a variable that doubles itself 40
 * times would make a terabyte. Past either cap the text is refused at the
 * line it had reached (ERR_INPUT). */
#define MEGATRON_MAX_EXPANDED_BYTES ((size_t)4 << 20)
#define MEGATRON_MAX_WORDS 65536

/* An empty argument list; origin names where the arguments come from in
 * error messages and notes (may be NULL). */
void megatron_args_init(megatron_args_t *a, const char *origin);

/* Read a shell text: a launch script, one command line or a list of flags.
 * Words before the Python script (torchrun and its options) are the
 * launcher; words after it are Megatron flags. ERR_INPUT on unknown flags,
 * missing or bad values, unbalanced quotes. */
int megatron_args_parse_text(megatron_args_t *a, const char *text, size_t len, err_t *err);

/* Read flags already split into words ("--num-layers", "80", "--bf16",
 * "--seq-length=4096", ...). */
int megatron_args_parse_argv(megatron_args_t *a, int argc, const char *const *argv,
                             err_t *err);

/* Record one argument by flag ("--num-layers") or dest ("num_layers").
 * value is the text after the flag, NULL for a switch given on a command
 * line, or a value as the start-up argument block prints it: "True" and
 * "False" for switches, "None" for "not set" (the argument is then
 * skipped), lists as "['p2p']" or "[2, 4]", enums as "AttnBackend.flash". */
int megatron_args_set(megatron_args_t *a, const char *name, const char *value, err_t *err);

/* The launch command of a shell text as its words after expansion: the
 * last command that runs a Python script, from the script on (the shell
 * reader of megatron_args_parse_text: variables, arrays, branches, loops,
 * heredocs given to sbatch, bash -c), one word a line, a word with blanks
 * quoted, into *out (malloc'd; NULL when the text runs no script). What
 * the reader assumed or left out is appended to notes (may be NULL). For
 * launch commands of other programs (Megatron-Bridge's run_recipe.py and
 * setup_experiment.py). */
int megatron_shell_command(const char *text, size_t len, const char *origin, char **out,
                           notes_t *notes, err_t *err);

/* Interpret what was read into model, layout, opt, world_size and notes.
 * ERR_INPUT naming the flag for values that contradict each other or that
 * scaleplan cannot model exactly; ERR_RUNTIME on OOM. */
int megatron_args_finish(megatron_args_t *a, err_t *err);

/* init + parse_text + finish on one text. On error *a is still freed by
 * megatron_args_free. */
int megatron_args_read(const char *text, size_t len, const char *origin,
                       megatron_args_t *a, err_t *err);

/* Write onto o (a framework preset's options) what the command line
 * decides: DP and TP overlap, the P2P overlap, the bucket size and the fp8
 * parameter gather, each with Megatron-LM's default where the flag is
 * absent. Whatever else o holds (kernels, loss, fp8 caching, ZeRO-3 path)
 * stays the preset's; opt above is sim_options_default with the same
 * fields written. */
void megatron_args_options(const megatron_args_t *a, sim_options_t *o);

/* Free what a holds; a is then empty (safe to call twice). */
void megatron_args_free(megatron_args_t *a);

#endif
