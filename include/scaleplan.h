/* scaleplan.h: the library's public interface (libscaleplan.so / .a).
 *
 * One call per command, each returning the document `scaleplan COMMAND
 * ... --json` prints, byte for byte: the same inputs, the same checks,
 * the same one-line messages. A Python module (python/scaleplan) and any
 * other language reach scaleplan through these few functions.
 *
 *     sp_context_t *ctx = sp_context_new();
 *     char *doc = NULL;
 *     int rc = sp_run(ctx, "sim", "{\"model\": \"gpt3-175b\", \"gpu\": \"a100-80g\", "
 *                     "\"gpus\": 64, \"tp\": 8, \"pp\": 8, \"global_batch\": 64}", &doc);
 *     if (rc == SP_OK) { use(doc); sp_free(doc); }
 *     else fprintf(stderr, "%s\n", sp_last_error(ctx));
 *     sp_context_free(ctx);
 *
 * The spec is a JSON object of the command's flags: a key is a flag's name
 * without its dashes, with '-' or '_' between words ("global_batch" or
 * "global-batch" is --global-batch); a value is the flag's value (a string
 * or a number), true for a switch (false leaves it off), or an array for
 * a flag given more than once (validate's "log"). The key "args" holds the
 * bare words a command takes (catalog's sections, report's file). "json"
 * is implied.
 *
 * Threads: a context is used by one thread at a time; contexts on different
 * threads run in parallel. A context keeps the parsed catalog between calls
 * (the catalog files are parsed once).
 *
 * Status: SP_OK, SP_ERR_INPUT (the input is wrong: a flag, a file, a value;
 * the CLI's exit code 2) or SP_ERR_RUNTIME (exit code 1: out of memory, a
 * file that cannot be written, a result such as "does not fit" that the
 * CLI also reports as a failure). sp_last_error then holds the message the
 * CLI prints, "scaleplan COMMAND: ..." on one line. Commands whose result is
 * not a document (train, preflight, calibrate on a GPU, report's files)
 * are run all the same; their document is the one their --json prints.
 */
#ifndef SCALEPLAN_H
#define SCALEPLAN_H

#ifdef __cplusplus
extern "C" {
#endif

/* Incremented when a declaration below changes incompatibly. */
#define SP_ABI_VERSION 1

enum { SP_OK = 0, SP_ERR_RUNTIME = 1, SP_ERR_INPUT = 2 };

typedef struct sp_context sp_context_t;

/* SP_ABI_VERSION as the library was built: compare with the header's. */
int sp_abi_version(void);

/* The library's version text ("0.1.0"). */
const char *sp_version(void);

/* A new context, or NULL when out of memory. */
sp_context_t *sp_context_new(void);

/* Free a context (NULL is fine). */
void sp_context_free(sp_context_t *ctx);

/* Run a command on a spec (above). On SP_OK *out_json is the document,
 * heap text to release with sp_free; otherwise sp_last_error says why and
 * *out_json is NULL, or, where the CLI prints a document and then fails
 * (sim of a layout that does not fit: "fits": false, exit 1), that
 * document. A spec that is not a JSON object, a key that is
 * no flag of the command, a value of the wrong kind: SP_ERR_INPUT. */
int sp_run(sp_context_t *ctx, const char *command, const char *spec_json, char **out_json);

/* The fast path for loops: the step time in seconds `sim` gives for the
 * spec (a `sim` spec as above), without building or parsing a document.
 * The same inputs, checks and one-line messages as sp_run(ctx, "sim",
 * ...); a layout that does not fit is SP_ERR_RUNTIME unless the spec sets
 * "allow_oom": true. *step_s is 0 on failure. */
int sp_step_time(sp_context_t *ctx, const char *spec_json, double *step_s);

/* The command line's entry (cli/main.c is a client of this header): run
 * a command on its words as typed, argv[0] the command's name, the rest
 * its flags and bare words. Its text, or its document when the words say
 * --json, goes to standard output; --help prints the command's help. The
 * same status and sp_last_error as sp_run. */
int sp_command(sp_context_t *ctx, int argc, char **argv);

/* The commands, in `scaleplan --help` order: their number, and the name
 * and one-line summary of the i-th (NULL when i is out of range). */
int sp_command_count(void);
const char *sp_command_name(int i);
const char *sp_command_summary(int i);

/* Every command's options, one a line: command, option, alias ("-" when
 * none), metavar ("-" for a switch) and value kind, tab-separated (what
 * `scaleplan --list-options` prints; the CLI robustness suite reads it).
 * Heap text to release with sp_free, or NULL when out of memory. */
char *sp_options_table(void);

/* The build's optional parts ("CUDA plug-in (sm_80/...) + PTX ..., MPI
 * plug-in"), as `scaleplan --version` prints them. */
const char *sp_build_features(void);

/* The message of the context's last failed call ("" after a success). */
const char *sp_last_error(const sp_context_t *ctx);

/* Release text the library returned. */
void sp_free(void *p);

#ifdef __cplusplus
}
#endif

#endif
