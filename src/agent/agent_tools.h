/*
 * agent_tools.h - the agent commands as files of the mount:
 * <run>/cli/<command>.json?flag=value answers what `xprofs <command>
 * <run dir> --flag=value` prints, byte for byte (values read as Python
 * literals, as Fire reads the command line). upload_trace and
 * verify_numerical_parity, which write or run programs, and the flags
 * that name files to write (output_path, path) are not offered.
 */
#ifndef XPROFS_AGENT_TOOLS_H
#define XPROFS_AGENT_TOOLS_H

#include "tools/tool.h"

/* The tool of cli/<file> ("get_overview.json"), or NULL. */
const struct tool *agent_cli_tool(const char *file);

/* fn(arg, "<command>.json", 0) for each command offered, in name order;
 * the first nonzero return stops and is returned. */
int agent_cli_list(int (*fn)(void *arg, const char *name, int is_dir), void *arg);

#endif
