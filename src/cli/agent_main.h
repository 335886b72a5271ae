/*
 * agent_main.h - `xprofs <command> ...` for XProf's agent commands
 * (src/agent/, docs/agent-cli.md).
 */
#ifndef XPROFS_AGENT_MAIN_H
#define XPROFS_AGENT_MAIN_H

/* Run `xprofs argv[1] argv[2...]` (argv[1] a command agent_is_command
 * knows): prints the answer or error, returns the exit code. */
int agent_main(int argc, char **argv);

#endif
