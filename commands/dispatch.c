#include "commands/dispatch.h"

#include <stdio.h>
#include <string.h>

static const cmd_command_t *const commands[] = {
    &CMD_CMD_PLAN,     &CMD_CMD_CATALOG,  &CMD_CMD_MODEL,     &CMD_CMD_SIM,
    &CMD_CMD_RELIABILITY, &CMD_CMD_BUDGET, &CMD_CMD_TRAIN,    &CMD_CMD_VALIDATE,
    &CMD_CMD_PREFLIGHT, &CMD_CMD_REPORT,  &CMD_CMD_CALIBRATE, &CMD_CMD_CLUSTER,
    &CMD_CMD_POWER,
};

int cmd_command_count(void)
{
    return (int)(sizeof commands / sizeof commands[0]);
}

const cmd_command_t *cmd_command_at(int i)
{
    return i >= 0 && i < cmd_command_count() ? commands[i] : NULL;
}

const cmd_command_t *cmd_command_find(const char *name)
{
    for (int i = 0; name && i < cmd_command_count(); i++)
        if (strcmp(name, commands[i]->name) == 0)
            return commands[i];
    return NULL;
}

int cmd_command_run(const cmd_command_t *c, int argc, char **argv, catalog_t *cat,
                    char **capture, err_t *err)
{
    cmd_args_t a;
    int rc = cmd_parse(argc, argv, c->groups, c->n_groups, c->max_operands, &a, err);
    if (rc)
        return rc;
    if (a.help) {
        cmd_print_help(stdout, c->usage, c->description, c->groups, c->n_groups);
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
