/*
 * agent_tools.c - the mount's cli/<command>.json files (agent_tools.h):
 * a struct tool per agent command, its query keys the command's flags,
 * produced by agent_render on the snapshot the mount reads.
 */
#include "agent_tools.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent.h"

#define AGENT_TOOLS_MAX 64

struct cli_tool {
    struct tool tool;                          /* file "cli/<command>.json" */
    const struct agent_command *cmd;           /* its command */
    char file[96];                             /* the tool's file name */
    struct query_key keys[AGENT_MAX_ARGS + 1]; /* its flags */
};

static struct cli_tool cli_tools[AGENT_TOOLS_MAX];
static int ncli_tools;
static pthread_once_t cli_once = PTHREAD_ONCE_INIT;

static int offered(const char *command)
{
    return strcmp(command, "upload_trace") != 0 && strcmp(command, "verify_numerical_parity") != 0;
}

/* Flags the mount does not take: the session (the run is the directory),
 * --logdir, and paths to write. */
static int flag_offered(const char *name)
{
    return strcmp(name, "session_id") != 0 && strcmp(name, "source") != 0 &&
           strcmp(name, "logdir") != 0 && strcmp(name, "output_path") != 0 &&
           strcmp(name, "path") != 0;
}

static const struct cli_tool *tool_of(const struct tool *t)
{
    int i;

    for (i = 0; i < ncli_tools; i++) {
        if (&cli_tools[i].tool == t)
            return &cli_tools[i];
    }
    return NULL;
}

static void args_free(struct agent_args *a)
{
    int i;

    for (i = 0; i < a->n; i++) {
        free(a->names[i]);
        pyval_free(&a->vals[i]);
    }
    a->n = 0;
}

static int cli_produce(struct tool_ctx *ctx, struct out *o)
{
    const struct cli_tool *ct = tool_of(ctx->tool);
    struct agent_output res;
    struct agent_args args;
    int i, rc = 0;

    if (ct == NULL)
        return xp_err_set(ctx->err, -EINVAL, "not an agent command");
    memset(&args, 0, sizeof(args));
    for (i = 0; i < ctx->q->n && rc == 0; i++) {
        args.names[args.n] = strdup(ctx->q->params[i].name);
        if (args.names[args.n] == NULL)
            rc = -ENOMEM;
        else if ((rc = pylit_parse(ctx->q->params[i].value, &args.vals[args.n])) != 0)
            free(args.names[args.n]);
        else
            args.n++;
    }
    if (rc == 0)
        rc = agent_render(ct->cmd, &args, ctx->snap, ctx->snap->session->dir, &res);
    args_free(&args);
    if (rc != 0)
        return xp_err_set(ctx->err, -ENOMEM, "out of memory");
    if (res.code == 0)
        out_write(o, res.text, res.len);
    free(res.text);
    switch (res.code) {
    case AGENT_OK:
        return 0;
    case AGENT_E_PATH:
        return xp_err_set(ctx->err, -ENOENT, "%s", res.errline);
    case AGENT_E_USAGE:
    case AGENT_E_VALUE:
        return xp_err_set(ctx->err, -EINVAL, "%s", res.errline);
    default:
        return xp_err_set(ctx->err, -EIO, "%s", res.errline);
    }
}

static void build_tools(void)
{
    const struct agent_command *c;

    for (c = agent_commands; c->name != NULL && ncli_tools < AGENT_TOOLS_MAX; c++) {
        struct cli_tool *ct = &cli_tools[ncli_tools];
        const struct agent_param *p;
        int k = 0;
        if (!offered(c->name))
            continue;
        ct->cmd = c;
        snprintf(ct->file, sizeof(ct->file), "cli/%s.json", c->name);
        for (p = c->params; p->name != NULL && k < AGENT_MAX_ARGS; p++) {
            if (!flag_offered(p->name))
                continue;
            ct->keys[k].name = p->name;
            ct->keys[k].type = Q_STRING;
            k++;
        }
        ct->keys[k].name = NULL;
        ct->tool.file = ct->file;
        ct->tool.tag = NULL;
        ct->tool.scope = TOOL_RUN;
        ct->tool.flags = 0;
        ct->tool.keys = ct->keys;
        ct->tool.listed = tool_listed_xplane;
        ct->tool.produce = cli_produce;
        ncli_tools++;
    }
}

const struct tool *agent_cli_tool(const char *file)
{
    int i;

    pthread_once(&cli_once, build_tools);
    for (i = 0; i < ncli_tools; i++) {
        if (strcmp(cli_tools[i].file + 4, file) == 0)
            return &cli_tools[i].tool;
    }
    return NULL;
}

int agent_cli_list(int (*fn)(void *arg, const char *name, int is_dir), void *arg)
{
    int i, rc = 0;

    pthread_once(&cli_once, build_tools);
    for (i = 0; i < ncli_tools && rc == 0; i++)
        rc = fn(arg, cli_tools[i].file + 4, 0);
    return rc;
}
