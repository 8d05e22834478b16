/* scaleplan: plan large-scale LLM training before reserving GPUs.
 *
 * main() looks up the subcommand in one table, runs it, and is the only
 * place that turns an error record into a message on stderr and an exit
 * status (2 for bad input, 1 for runtime failures). It owns the process's
 * parsed catalog (common/catalog.h), which the command reaches through its
 * arguments, so each catalog file is parsed once per run.
 */
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "build_config.h"
#include "cli/dispatch.h"
#include "common/names.h"

static void usage(FILE *out)
{
    fprintf(out,
            "usage: scaleplan COMMAND [options]   (scaleplan COMMAND --help for its options)\n\n"
            "scaleplan tells, before you reserve GPUs, how a training run will behave at\n"
            "scale: GPU counts, parallel layouts, step time, failures and cost.\n\ncommands:\n");
    for (int i = 0; i < cli_command_count(); i++)
        fprintf(out, "  %-12s %s\n", cli_command_at(i)->name, cli_command_at(i)->summary);
    fprintf(out, "\nexamples:\n"
                 "  scaleplan catalog gpus\n"
                 "  scaleplan model --model llama3-70b --tp 8 --pp 4 --gpus 256 --gpu h100-sxm\n"
                 "  scaleplan sim --model llama3-70b --gpu h100-sxm --gpus 256 --tp 8 --pp 4 \\\n"
                 "      --sequence-parallel --recompute selective --global-batch 512\n");
}

/* Every command's options, one per line: command, option, alias ("-" when
 * none), metavar ("-" for a switch) and value kind, tab-separated. The CLI
 * robustness suite (tests/robust/run.sh) reads its flags from here, so a new
 * flag is covered as soon as it is in a table. */
static void list_options(FILE *out)
{
    static const char *kinds[] = {"text",  "int",       "int-span", "real",     "count",
                                  "count-span", "bytes", "bandwidth", "duration", "days",
                                  "price", "money"};
    for (int i = 0; i < cli_command_count(); i++) {
        const cli_command_t *c = cli_command_at(i);
        for (int g = 0; g < c->n_groups; g++)
            for (int k = 0; k < c->groups[g]->n; k++) {
                const cli_opt_t *o = &c->groups[g]->opts[k];
                fprintf(out, "%s\t%s\t%s\t%s\t%s\n", c->name, o->name,
                        o->alias ? o->alias : "-", o->metavar ? o->metavar : "-",
                        (size_t)o->kind < sizeof kinds / sizeof kinds[0] ? kinds[o->kind] : "?");
            }
    }
}

int main(int argc, char **argv)
{
    /* A write past the file size limit (ulimit -f) then fails with EFBIG
     * through the usual error path (a checkpoint's temporary file removed,
     * one line, exit 1) instead of killing the process. */
    signal(SIGXFSZ, SIG_IGN);
    if (argc < 2 || strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 ||
        strcmp(argv[1], "help") == 0) {
        usage(stdout);
        return argc < 2 ? 2 : 0;
    }
    if (strcmp(argv[1], "--list-options") == 0) {
        list_options(stdout);
        return fflush(stdout) == 0 ? 0 : 1;
    }
    if (strcmp(argv[1], "--version") == 0) {
        /* the build's optional parts, from the settings make recorded */
        printf("scaleplan %s (%s)\n", SCALEPLAN_VERSION, SCALEPLAN_BUILD_FEATURES);
        return 0;
    }
    const cli_command_t *c = cli_command_find(argv[1]);
    if (c) {
        err_t err;
        err_clear(&err);
        int rc = cli_command_run(c, argc - 1, argv + 1, NULL, NULL, &err);
        if (rc == ERR_OK)
            return fflush(stdout) == 0 ? 0 : 1;
        fprintf(stderr, "scaleplan %s: %s\n", c->name, err.msg[0] ? err.msg : "failed");
        return rc == ERR_INPUT ? 2 : 1;
    }
    int n_commands = cli_command_count();
    const char *names[32];
    for (int i = 0; i < n_commands && i < 32; i++)
        names[i] = cli_command_at(i)->name;
    int best = names_closest(argv[1], names, (size_t)(n_commands < 32 ? n_commands : 32));
    if (best >= 0)
        fprintf(stderr, "scaleplan: unknown command '%s'; did you mean '%s'? (scaleplan --help lists all)\n",
                argv[1], names[best]);
    else
        fprintf(stderr, "scaleplan: unknown command '%s' (scaleplan --help lists all)\n", argv[1]);
    return 2;
}
