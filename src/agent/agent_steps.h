/*
 * agent_steps.h - the answers of get_step_trace and check_host_boundness
 * as functions of the run's tool files (agent_step_trace.c,
 * agent_host_bound.c), so that they can be fed any JSON.
 */
#ifndef XPROFS_AGENT_STEPS_H
#define XPROFS_AGENT_STEPS_H

#include <cjson/cJSON.h>

#include "agent_pylit.h"

/* Where the answers read from. */
struct agent_steps_src {
    /* The JSON of a tool file ("pod_viewer.json", query or NULL): the
     * caller frees it; NULL with *rc 0 when the tool has no data, NULL
     * with *rc nonzero on failure (returned as it is). */
    cJSON *(*tool)(void *arg, const char *file, const char *query, int *rc);
    /* The barrier-cores events of the first host's TPU:0 / GPU:0 planes:
     * their mean duration in ms and their count. */
    void (*barriers)(void *arg, double *avg_ms, long *count);
    void *arg;
};

/* get_step_trace's answer into *answer (the steps, or XProf's NO_DATA
 * object): step_num (NULL or None: every step), device_core (NULL: all),
 * limit (<= 0: all), include_summary. 0, -ENOMEM, or the tool's rc. */
int agent_step_trace_build(const struct agent_steps_src *src, const char *session,
                           const struct pyval *step_num, const char *device_core, long long limit,
                           int include_summary, cJSON **answer);

/* check_host_boundness's answer into *answer; func_name may be NULL. 0,
 * -ENOMEM, or the overview's rc. */
int agent_host_boundness_build(const struct agent_steps_src *src, const char *session,
                               const char *func_name, cJSON **answer);

#endif
