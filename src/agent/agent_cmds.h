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
int agent_get_kernel_utilization(struct agent_ctx *ctx);

/* agent_cmd_steps.c */
int agent_get_step_trace(struct agent_ctx *ctx);
int agent_check_host_boundness(struct agent_ctx *ctx);

/* agent_cmd_roofline.c */
int agent_get_roofline_model(struct agent_ctx *ctx);

/* agent_cmd_kernels.c */
int agent_get_kernel_stats(struct agent_ctx *ctx);
int agent_get_avg_step_time(struct agent_ctx *ctx);

/* agent_cmd_hlo.c */
int agent_list_hlo_modules(struct agent_ctx *ctx);
int agent_get_hlo_module_content(struct agent_ctx *ctx);
int agent_get_hlo_neighborhood(struct agent_ctx *ctx);
int agent_get_hlo_text(struct agent_ctx *ctx);
int agent_get_graph_viewer(struct agent_ctx *ctx);
int agent_get_hlo_stats(struct agent_ctx *ctx);
/* The run's HLO modules in XProf's order (its <module>.hlo_proto.pb file
 * names, sorted), NO_MODULE left out: *names (free each and the array). */
int agent_hlo_module_names(struct agent_ctx *ctx, char ***names, int *n);
/* Percent-encode a query value into buf. */
void agent_query_encode(const char *s, char *buf, size_t n);

/* agent_cmd_memory.c (get_memory_profile is listed above) */
int agent_get_peak_allocations(struct agent_ctx *ctx);
/* get_memory_profile's peak_memory_usage_gib, or "N/A" where it answers
 * an error (get_kpi_metrics). */
cJSON *agent_memory_peak_gib(struct agent_ctx *ctx);

/* agent_cmd_nodata.c */
int agent_upload_trace(struct agent_ctx *ctx);
int agent_verify_numerical_parity(struct agent_ctx *ctx);

#endif
