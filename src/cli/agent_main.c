/*
 * agent_main.c - the command-line front end of XProf's agent CLI: `xprofs
 * <command> ...` binds the words as Python Fire does, prints --help, runs
 * the command through the engine (src/agent/) and prints what it answers,
 * with XProf's exit code.
 */
#include "agent_main.h"

#include <stdio.h>
#include <stdlib.h>

#include "agent/agent.h"
#include "agent_remote.h"

static void print_help(const struct agent_command *cmd)
{
    const struct agent_param *p;
    char usage[512];
    struct agent_spec spec = {cmd->name, cmd->params, cmd->varkw};
    int any = 0;

    agent_usage_line(&spec, usage, sizeof(usage));
    printf("NAME\n    xprof %s - %s\n\nSYNOPSIS\n    %s\n\n", cmd->name, cmd->help, usage);
    printf("POSITIONAL ARGUMENTS\n");
    for (p = cmd->params; p->name != NULL; p++) {
        if (p->flags & AP_POSITIONAL)
            printf("    %s%s\n", p->name, p->flags & AP_REQUIRED ? "" : " (optional)");
    }
    printf("\nFLAGS\n");
    for (p = cmd->params; p->name != NULL; p++) {
        printf("    --%s\n", p->name);
        any = 1;
    }
    if (!any)
        printf("    (none)\n");
    printf("\nNOTES\n    Positional arguments may also be given as flags; the session also as\n"
           "    --session_dir, --session_path or --source. See docs/agent-cli.md.\n");
}

int agent_main(int argc, char **argv)
{
    const struct agent_command *cmd = agent_find(argv[1]);
    struct agent_output res;
    struct agent_spec spec;
    struct agent_args args;
    struct agent_remote remote;
    char msg[2048];
    int rc;

    if (cmd == NULL)
        return 2;
    if (agent_wants_help(argc - 2, argv + 2)) {
        print_help(cmd);
        return 0;
    }
    spec.command = cmd->name;
    spec.params = cmd->params;
    spec.varkw = cmd->varkw;
    agent_localize_urls(argc, argv, 2, &remote);
    rc = agent_bind(&spec, argc - 2, argv + 2, &args, msg, sizeof(msg));
    if (rc == AGENT_FIRE_ERROR) {
        /* Fire's own errors: its text on stderr, nothing on stdout */
        fprintf(stderr, "ERROR: %s\n", msg);
        agent_remote_close(&remote);
        return AGENT_E_USAGE;
    }
    if (rc != 0 || agent_render(cmd, &args, NULL, NULL, &res) != 0) {
        if (rc == 0)
            agent_args_free(&args);
        fprintf(stderr, "INTERNAL_ERROR: out of memory\n");
        agent_remote_close(&remote);
        return AGENT_E_INTERNAL;
    }
    agent_args_free(&args);
    if (fwrite(res.text, 1, res.len, stdout) != res.len || fflush(stdout) != 0)
        res.code = res.code ? res.code : AGENT_E_INTERNAL;
    if (res.errline[0] != '\0' && res.code != 0)
        fprintf(stderr, "%s\n", res.errline);
    free(res.text);
    agent_remote_close(&remote);
    return res.code;
}
