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
static const struct agent_param p_llo[] = {
    {"session_id", REQ}, {"host", POS}, {"bypass_cache", POS}, {"logdir", 0}, {NULL, 0}};

const struct agent_command agent_commands[] = {
    {"aggregate_xplane_events", p_aggregate_events, 0, 1, agent_aggregate_xplane_events,
     "statistics of the durations of matching events, by name"},
    {"get_device_information", p_session, 0, 1, agent_get_device_information,
     "the roofline model's device constants"},
    {"get_hlo_op_profile", p_hlo_op_profile, 0, 1, agent_get_hlo_op_profile,
     "the HLO ops of the op profile with the most self time"},
    {"get_hosts", p_session, 0, 1, agent_get_hosts, "the hosts of the session"},
    {"get_kpi_metrics", p_session_kw, 0, 1, agent_get_kpi_metrics,
     "step time, duty cycle, utilization, peak memory, accelerator"},
    {"get_llo_analysis", p_llo, 0, 1, agent_get_llo_analysis, "LLO analysis (not in OSS)"},
    {"get_llo_debug_string", p_llo, 0, 1, agent_get_llo_analysis, "LLO debug string (not in OSS)"},
    {"get_memory_profile", p_session_kw, 0, 1, agent_get_memory_profile,
     "HBM capacity and peak usage"},
    {"get_overview", p_overview, 0, 1, agent_get_overview,
     "performance summary and run environment"},
    {"get_profile_summary", p_session, 0, 1, agent_get_profile_summary,
     "text summary: total time and the top operations"},
    {"get_top_hlo_ops", p_top_hlo_ops, 0, 1, agent_get_top_hlo_ops,
     "top HLO ops by self time, FLOPs and bytes accessed"},
    {"get_utilization_viewer", p_utilization, 0, 1, agent_get_utilization_viewer,
     "hardware utilization counters"},
    {"get_xspace_proto", p_xspace_proto, 1, 1, agent_get_xspace_proto,
     "the raw XSpace bytes of a one-host session"},
    {"list_xplane_events", p_list_events, 0, 1, agent_list_xplane_events,
     "matching events of the timeline"},
    {NULL, NULL, 0, 0, NULL, NULL},
};
