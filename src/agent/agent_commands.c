/*
 * agent_commands.c - the table of agent commands: each with its
 * parameters in XProf's order (positional first, then keyword-only) as
 * Fire sees the wrapped function (logdir and bypass_cache added).
 */
#include <stddef.h>

#include "agent.h"
#include "agent_cmds.h"

#define POS AP_POSITIONAL
#define REQ (AP_POSITIONAL | AP_REQUIRED)

static const struct agent_param p_session[] = {
    {"session_id", REQ}, {"bypass_cache", POS}, {"logdir", 0}, {NULL, 0}};
static const struct agent_param p_session_kw[] = {
    {"session_id", REQ}, {"bypass_cache", 0}, {"logdir", 0}, {NULL, 0}};
static const struct agent_param p_overview[] = {
    {"session_id", REQ}, {"include_command", POS}, {"bypass_cache", POS}, {"logdir", 0}, {NULL, 0}};
static const struct agent_param p_top_hlo_ops[] = {{"session_id", REQ},    {"limit", 0},
                                                   {"category_filter", 0}, {"bypass_cache", 0},
                                                   {"logdir", 0},          {NULL, 0}};
static const struct agent_param p_hlo_op_profile[] = {
    {"session_id", REQ}, {"top_n", POS}, {"bypass_cache", POS}, {"logdir", 0}, {NULL, 0}};
static const struct agent_param p_list_events[] = {
    {"session_id", REQ}, {"plane_regex", 0}, {"event_regex", 0}, {"start_time_ps", 0},
    {"end_time_ps", 0},  {"max_events", 0},  {"offset", 0},      {"bypass_cache", 0},
    {"logdir", 0},       {NULL, 0}};
static const struct agent_param p_aggregate_events[] = {{"session_id", REQ},  {"plane_regex", POS},
                                                        {"event_regex", POS}, {"bypass_cache", POS},
                                                        {"logdir", 0},        {NULL, 0}};
static const struct agent_param p_xspace_proto[] = {{"session_id", REQ},  {"as_text", POS},
                                                    {"output_path", POS}, {"bypass_cache", POS},
                                                    {"logdir", 0},        {NULL, 0}};
static const struct agent_param p_utilization[] = {
    {"session_id", REQ}, {"host", 0},   {"device", 0}, {"node", 0},
    {"bypass_cache", 0}, {"logdir", 0}, {NULL, 0}};
static const struct agent_param p_roofline[] = {{"session_id", REQ}, {"top_n", 0},  {"group_by", 0},
                                                {"bypass_cache", 0}, {"logdir", 0}, {NULL, 0}};
static const struct agent_param p_kernel_stats[] = {{"source", POS},
                                                    {"session_id", POS},
                                                    {"kernel_name", 0},
                                                    {"limit", 0},
                                                    {"output_format", 0},
                                                    {"include_summary", 0},
                                                    {"device_to_use", 0},
                                                    {"trace_matchers", 0},
                                                    {"bypass_cache", 0},
                                                    {"logdir", 0},
                                                    {NULL, 0}};
static const struct agent_param p_avg_step_time[] = {{"source", REQ},      {"func_name", 0},
                                                     {"output_format", 0}, {"bypass_cache", 0},
                                                     {"logdir", 0},        {NULL, 0}};
static const struct agent_param p_module_content[] = {
    {"session_id", REQ},   {"fmt", POS},        {"module_name", POS}, {"max_lines", POS},
    {"print_metadata", 0}, {"bypass_cache", 0}, {"logdir", 0},        {NULL, 0}};
static const struct agent_param p_neighborhood[] = {
    {"session_id", REQ},   {"instruction_name", REQ}, {"radius", POS}, {"module_name", POS},
    {"print_metadata", 0}, {"bypass_cache", 0},       {"logdir", 0},   {NULL, 0}};
static const struct agent_param p_hlo_text[] = {{"session_id", REQ},
                                                {"path", POS},
                                                {"module_name", POS},
                                                {"op_name", POS},
                                                {"bypass_cache", POS},
                                                {"logdir", 0},
                                                {NULL, 0}};
static const struct agent_param p_graph_viewer[] = {
    {"session_id", POS},     {"symbol_id", 0},   {"symbol_type", 0},
    {"graph_type", 0},       {"module_name", 0}, {"output_type", 0},
    {"show_metadata", 0},    {"node_name", 0},   {"graph_width", 0},
    {"merge_fusion", 0},     {"tag", 0},         {"tool", 0},
    {"op_profile_limit", 0}, {"use_xplane", 0},  {"bypass_cache", 0},
    {"logdir", 0},           {NULL, 0}};
static const struct agent_param p_peak_allocations[] = {
    {"session_id", REQ},  {"limit", 0},           {"min_size_mib", 0},
    {"output_format", 0}, {"include_summary", 0}, {"aggregate_instructions", 0},
    {"bypass_cache", 0},  {"logdir", 0},          {NULL, 0}};
static const struct agent_param p_upload[] = {
    {"file_path", REQ}, {"ttl", POS},        {"tag", POS}, {"run_name", POS},
    {"logdir", 0},      {"bypass_cache", 0}, {NULL, 0}};
static const struct agent_param p_parity[] = {{"kernel_ref", REQ},
                                              {"kernel_candidate", REQ},
                                              {"shapes", REQ},
                                              {"dtype_str", POS},
                                              {"tier", POS},
                                              {"max_allowed_ulp", POS},
                                              {"p99_9_allowed_ulp", POS},
                                              {"seed", POS},
                                              {"logdir", 0},
                                              {"bypass_cache", 0},
                                              {NULL, 0}};
static const struct agent_param p_host_bound[] = {
    {"session_id", REQ}, {"func_name", POS}, {"logdir", 0}, {"bypass_cache", 0}, {NULL, 0}};
static const struct agent_param p_step_trace[] = {
    {"session_id", REQ},    {"step_num", 0},     {"limit", 0},  {"device_core", 0},
    {"include_summary", 0}, {"bypass_cache", 0}, {"logdir", 0}, {NULL, 0}};
static const struct agent_param p_kernel_util[] = {
    {"session_id", REQ},   {"kernel_name", 0}, {"duration_us", 0},
    {"force_duration", 0}, {"host", 0},        {"device", 0},
    {"output_format", 0},  {"raw_bytes", 0},   {"bypass_cache", 0},
    {"logdir", 0},         {NULL, 0}};
static const struct agent_param p_llo[] = {
    {"session_id", REQ}, {"host", POS}, {"bypass_cache", POS}, {"logdir", 0}, {NULL, 0}};

const struct agent_command agent_commands[] = {
    {"aggregate_xplane_events", p_aggregate_events, 0, 1, agent_aggregate_xplane_events,
     "statistics of the durations of matching events, by name"},
    {"check_host_boundness", p_host_bound, 0, 1, agent_check_host_boundness,
     "is the workload host-bound: XProf's four-condition gate"},
    {"compute_utilization", p_kernel_util, 0, 1, agent_get_kernel_utilization,
     "get_kernel_utilization under a second name"},
    {"get_avg_step_time", p_avg_step_time, 0, 0, agent_get_avg_step_time,
     "the mean duration of the XLA Modules events of the device planes"},
    {"get_device_information", p_session, 0, 1, agent_get_device_information,
     "the roofline model's device constants"},
    {"get_graph_viewer", p_graph_viewer, 0, 0, agent_get_graph_viewer,
     "graph viewer data of an HLO module (text, DOT, HTML)"},
    {"get_hlo_module_content", p_module_content, 0, 1, agent_get_hlo_module_content,
     "the text of an HLO module"},
    {"get_hlo_neighborhood", p_neighborhood, 0, 1, agent_get_hlo_neighborhood,
     "the operands and users around an HLO instruction"},
    {"get_hlo_op_profile", p_hlo_op_profile, 0, 1, agent_get_hlo_op_profile,
     "the HLO ops of the op profile with the most self time"},
    {"get_hlo_stats", p_session_kw, 0, 1, agent_get_hlo_stats,
     "the hlo_stats tool's data, with each op's HLO text"},
    {"get_hlo_text", p_hlo_text, 0, 1, agent_get_hlo_text,
     "a module's text, or an instruction's neighborhood; optionally saved"},
    {"get_hosts", p_session, 0, 1, agent_get_hosts, "the hosts of the session"},
    {"get_kernel_stats", p_kernel_stats, 0, 0, agent_get_kernel_stats,
     "total, count and mean duration per kernel of the device planes"},
    {"get_kernel_utilization", p_kernel_util, 0, 1, agent_get_kernel_utilization,
     "hardware compute utilization per kernel (TPU counters)"},
    {"get_kpi_metrics", p_session_kw, 0, 1, agent_get_kpi_metrics,
     "step time, duty cycle, utilization, peak memory, accelerator"},
    {"get_llo_analysis", p_llo, 0, 1, agent_get_llo_analysis, "LLO analysis (not in OSS)"},
    {"get_llo_debug_string", p_llo, 0, 1, agent_get_llo_analysis, "LLO debug string (not in OSS)"},
    {"get_memory_profile", p_session_kw, 0, 1, agent_get_memory_profile,
     "HBM capacity and peak usage"},
    {"get_peak_allocations", p_peak_allocations, 0, 1, agent_get_peak_allocations,
     "the modules by peak HBM and their biggest buffers"},
    {"get_overview", p_overview, 0, 1, agent_get_overview,
     "performance summary and run environment"},
    {"get_profile_summary", p_session, 0, 1, agent_get_profile_summary,
     "text summary: total time and the top operations"},
    {"get_roofline_model", p_roofline, 0, 1, agent_get_roofline_model,
     "program and per-op roofline: intensity, efficiency, bound"},
    {"get_step_trace", p_step_trace, 0, 1, agent_get_step_trace,
     "per step compute, communication, infeed, outfeed and idle time"},
    {"get_top_hlo_ops", p_top_hlo_ops, 0, 1, agent_get_top_hlo_ops,
     "top HLO ops by self time, FLOPs and bytes accessed"},
    {"get_utilization_viewer", p_utilization, 0, 1, agent_get_utilization_viewer,
     "hardware utilization counters"},
    {"get_xspace_proto", p_xspace_proto, 1, 1, agent_get_xspace_proto,
     "the raw XSpace bytes of a one-host session"},
    {"list_hlo_modules", p_session_kw, 0, 1, agent_list_hlo_modules,
     "the HLO modules of the session"},
    {"list_xplane_events", p_list_events, 0, 1, agent_list_xplane_events,
     "matching events of the timeline"},
    {"upload_trace", p_upload, 1, 0, agent_upload_trace,
     "copy a trace into <logdir>/plugins/profile/<run_name>/"},
    {"verify_numerical_parity", p_parity, 0, 0, agent_verify_numerical_parity,
     "ULP parity of two kernels (needs Python: not available)"},
    {NULL, NULL, 0, 0, NULL, NULL},
};
