#include "commands/dispatch.h"

#include <stdio.h>
#include <string.h>

static const cli_command_t *const commands[] = {
    &CLI_CMD_PLAN,     &CLI_CMD_CATALOG,  &CLI_CMD_MODEL,     &CLI_CMD_SIM,
    &CLI_CMD_RELIABILITY, &CLI_CMD_BUDGET, &CLI_CMD_TRAIN,    &CLI_CMD_VALIDATE,
    &CLI_CMD_PREFLIGHT, &CLI_CMD_REPORT,  &CLI_CMD_CALIBRATE, &CLI_CMD_CLUSTER,
    &CLI_CMD_POWER,
};

int cli_command_count(void)
{
    return (int)(sizeof commands / sizeof commands[0]);
}

const cli_command_t *cli_command_at(int i)
{
    return i >= 0 && i < cli_command_count() ? commands[i] : NULL;
}

const cli_command_t *cli_command_find(const char *name)
{
    for (int i = 0; name && i < cli_command_count(); i++)
        if (strcmp(name, commands[i]->name) == 0)
            return commands[i];
    return NULL;
}

int cli_command_run(const cli_command_t *c, int argc, char **argv, catalog_t *cat,
                    char **capture, err_t *err)
{
    cli_args_t a;
    int rc = cli_parse(argc, argv, c->groups, c->n_groups, c->max_operands, &a, err);
    if (rc)
        return rc;
    if (a.help) {
        cli_print_help(stdout, c->usage, c->description, c->groups, c->n_groups);
        return ERR_OK;
    }
    a.capture = capture;
    a.catalog = cat ? cat : catalog_create();
    if (!a.catalog)
        return err_set(err, ERR_RUNTIME, "out of memory");
    rc = c->run(&a, err);
    if (!cat)
        catalog_destroy(a.catalog);
    return rc;
}
