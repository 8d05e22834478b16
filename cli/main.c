/* scaleplan: plan large-scale LLM training before reserving GPUs.
 *
 * The command line is a client of the library's public interface
 * (include/scaleplan.h), as the Python module is: main() hands the words
 * after the program's name to sp_command and is the only place that turns
 * a failed call into its message on stderr and an exit status (2 for bad
 * input, 1 for runtime failures). The context it opens keeps the parsed
 * catalog, so each catalog file is parsed once per run.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/names.h"
#include "scaleplan.h"

#define MAX_COMMANDS 32

static void usage(FILE *out)
{
    fprintf(out,
            "usage: scaleplan COMMAND [options]   (scaleplan COMMAND --help for its options)\n\n"
            "scaleplan tells, before you reserve GPUs, how a training run will behave at\n"
            "scale: GPU counts, parallel layouts, step time, failures and cost.\n\ncommands:\n");
    for (int i = 0; i < sp_command_count(); i++)
        fprintf(out, "  %-12s %s\n", sp_command_name(i), sp_command_summary(i));
    fprintf(out, "\nexamples:\n"
                 "  scaleplan catalog gpus\n"
                 "  scaleplan model --model llama3-70b --tp 8 --pp 4 --gpus 256 --gpu h100-sxm\n"
                 "  scaleplan sim --model llama3-70b --gpu h100-sxm --gpus 256 --tp 8 --pp 4 \\\n"
                 "      --sequence-parallel --recompute selective --global-batch 512\n");
}

/* Every command's options, one per line (sp_options_table): the CLI
 * robustness suite (tests/robust/run.sh) reads its flags from here, so a
 * new flag is covered as soon as it is in a table. */
static int list_options(void)
{
    char *text = sp_options_table();
    if (!text) {
        fprintf(stderr, "scaleplan: out of memory\n");
        return 1;
    }
    fputs(text, stdout);
    sp_free(text);
    return fflush(stdout) == 0 ? 0 : 1;
}

static int unknown_command(const char *word)
{
    const char *names[MAX_COMMANDS];
    int n = sp_command_count() < MAX_COMMANDS ? sp_command_count() : MAX_COMMANDS;
    for (int i = 0; i < n; i++)
        names[i] = sp_command_name(i);
    int best = names_closest(word, names, (size_t)n);
    if (best >= 0)
        fprintf(stderr,
                "scaleplan: unknown command '%s'; did you mean '%s'? (scaleplan --help lists all)\n",
                word, names[best]);
    else
        fprintf(stderr, "scaleplan: unknown command '%s' (scaleplan --help lists all)\n", word);
    return 2;
}

static int is_command(const char *word)
{
    for (int i = 0; i < sp_command_count(); i++)
        if (strcmp(word, sp_command_name(i)) == 0)
            return 1;
    return 0;
}

/* Run the command on its words; its message and exit status on failure. */
static int run_command(int argc, char **argv)
{
    sp_context_t *ctx = sp_context_new();
    if (!ctx) {
        fprintf(stderr, "scaleplan %s: out of memory\n", argv[0]);
        return 1;
    }
    int rc = sp_command(ctx, argc, argv);
    if (rc != SP_OK)
        fprintf(stderr, "%s\n", sp_last_error(ctx));
    sp_context_free(ctx);
    if (rc == SP_OK)
        return fflush(stdout) == 0 ? 0 : 1;
    return rc == SP_ERR_INPUT ? 2 : 1;
}

int main(int argc, char **argv)
{
    /* A write past the file size limit (ulimit -f) then fails with EFBIG
     * through the usual error path (a checkpoint's temporary file removed,
     * one line, exit 1) instead of killing the process. */
    signal(SIGXFSZ, SIG_IGN);
    if (sp_abi_version() != SP_ABI_VERSION) {
        fprintf(stderr, "scaleplan: library ABI %d, this program was built for %d\n",
                sp_abi_version(), SP_ABI_VERSION);
        return 1;
    }
    if (argc < 2 || strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 ||
        strcmp(argv[1], "help") == 0) {
        usage(stdout);
        return argc < 2 ? 2 : 0;
    }
    if (strcmp(argv[1], "--list-options") == 0)
        return list_options();
    if (strcmp(argv[1], "--version") == 0) {
        /* the build's optional parts, from the settings make recorded */
        printf("scaleplan %s (%s)\n", sp_version(), sp_build_features());
        return 0;
    }
    if (!is_command(argv[1]))
        return unknown_command(argv[1]);
    return run_command(argc - 1, argv + 1);
}
