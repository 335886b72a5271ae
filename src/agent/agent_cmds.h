/*
 * agent_cmds.h - the agent commands (one function each; the table is
 * agent_commands.c).
 */
#ifndef XPROFS_AGENT_CMDS_H
#define XPROFS_AGENT_CMDS_H

#include "agent.h"

/* agent_cmd_overview.c */
int agent_get_overview(struct agent_ctx *ctx);
int agent_get_kpi_metrics(struct agent_ctx *ctx);
int agent_get_device_information(struct agent_ctx *ctx);
int agent_get_hosts(struct agent_ctx *ctx);
int agent_get_memory_profile(struct agent_ctx *ctx);

/* agent_cmd_ops.c */
int agent_get_top_hlo_ops(struct agent_ctx *ctx);
int agent_get_hlo_op_profile(struct agent_ctx *ctx);
int agent_get_profile_summary(struct agent_ctx *ctx);

/* agent_cmd_xplane.c */
int agent_list_xplane_events(struct agent_ctx *ctx);
int agent_aggregate_xplane_events(struct agent_ctx *ctx);
int agent_get_xspace_proto(struct agent_ctx *ctx);

/* agent_cmd_nodata.c */
int agent_get_utilization_viewer(struct agent_ctx *ctx);
int agent_get_llo_analysis(struct agent_ctx *ctx);

#endif
