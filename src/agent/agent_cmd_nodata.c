/*
 * agent_cmd_nodata.c - agent commands whose data XProf itself cannot make
 * from an open-source profile of this kind (hardware counters, LLO): they
 * answer what XProf answers then.
 */
#include <stdio.h>

#include "agent.h"
#include "agent_cmds.h"
#include "agent_pyjson.h"

/* utilization_viewer needs the TPU performance counters XProf's
 * utilization_viewer tool reads; no file here: XProf's answer for a
 * session that returns none. */
int agent_get_utilization_viewer(struct agent_ctx *ctx)
{
    cJSON *o = cJSON_CreateObject();
    char msg[1200];

    snprintf(msg, sizeof(msg), "No data returned for session %s", ctx->session_id);
    pyj_add_str(o, "status", "NO_DATA");
    pyj_add_str(o, "message", msg);
    return agent_answer_json(ctx, o, 2);
}

int agent_get_llo_analysis(struct agent_ctx *ctx)
{
    cJSON *o = cJSON_CreateObject();

    pyj_add_str(o, "status", "UNAVAILABLE");
    pyj_add_str(o, "reason", "LLO_ANALYSIS_UNSUPPORTED_IN_OSS");
    pyj_add_str(o, "message", "LLO analysis is not available in the open-source build of XProf.");
    return agent_answer_json(ctx, o, 2);
}
