/*
 * agent_cmd_steps.c - the step commands of XProf's agent CLI,
 * get_step_trace and check_host_boundness: their flags, the run's tool
 * files and its barrier-cores events handed to agent_step_trace.c and
 * agent_host_bound.c.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent.h"
#include "agent_cmds.h"
#include "agent_steps.h"
#include "reader/xspace.h"

/* A tool's JSON, or NULL (no data: *rc 0) or *rc an AGENT_E_* code. */
static cJSON *tool_or_null(void *arg, const char *file, const char *query, int *rc)
{
    struct agent_ctx *ctx = arg;
    cJSON *doc = NULL;

    *rc = agent_tool_json(ctx, file, query, &doc);
    if (*rc == -ENOENT) {
        *rc = 0;
        ctx->msg[0] = '\0';
        return NULL;
    }
    return *rc == 0 ? doc : NULL;
}

/* The host name of a trace file, as get_hosts spells it. */
static void host_of(const char *path, char *buf, size_t n)
{
    const char *base = strrchr(path, '/');
    char *dot;
    size_t len;

    snprintf(buf, n, "%s", base ? base + 1 : path);
    len = strlen(buf);
    if (len > 10 && strcmp(buf + len - 10, ".xplane.pb") == 0)
        buf[len - 10] = '\0';
    dot = strrchr(buf, '.');
    if (dot != NULL)
        memmove(buf, dot + 1, strlen(dot + 1) + 1);
}

/* _get_avg_barrier_cores_time_per_event: the barrier-cores events of the
 * TPU:0 / GPU:0 planes of the first host's traces: mean ms and count. A
 * trace that cannot be read counts as none (XProf logs and goes on). */
static void barrier_cores(struct agent_ctx *ctx, double *avg_ms, long *count)
{
    char first[1024] = "", h[1024];
    double total_us = 0;
    int f;

    *avg_ms = 0;
    *count = 0;
    for (f = 0; f < ctx->nxplanes; f++) {
        host_of(ctx->xplanes[f], h, sizeof(h));
        if (f == 0 || strcmp(h, first) < 0)
            snprintf(first, sizeof(first), "%s", h);
    }
    for (f = 0; f < ctx->nxplanes; f++) {
        struct xspace *xs;
        uint32_t p, l, i;
        host_of(ctx->xplanes[f], h, sizeof(h));
        if (strcmp(h, first) != 0)
            continue;
        if (agent_open_xspace(ctx, ctx->xplanes[f], &xs) != 0) {
            ctx->msg[0] = '\0';
            *avg_ms = 0;
            *count = 0;
            return;
        }
        for (p = 0; p < xs->nplanes; p++) {
            const struct xp_plane *pl = &xs->planes[p];
            if (strstr(pl->name, "TPU:0") == NULL && strstr(pl->name, "GPU:0") == NULL)
                continue;
            for (l = 0; l < pl->nlines; l++) {
                const struct xp_line *ln = &pl->lines[l];
                for (i = 0; i < ln->nevents; i++) {
                    const struct xp_event_meta *m = &pl->emeta[ln->events[i].meta];
                    const char *name = m->display_name[0] ? m->display_name : m->name;
                    if (strcmp(name, "barrier-cores") != 0)
                        continue;
                    total_us += (double)ln->events[i].duration_ps / 1e6;
                    (*count)++;
                }
            }
        }
        xspace_close(xs);
    }
    if (*count > 0)
        *avg_ms = total_us / (double)*count / 1000.0;
}

static void barriers(void *arg, double *avg_ms, long *count)
{
    barrier_cores(arg, avg_ms, count);
}

int agent_get_step_trace(struct agent_ctx *ctx)
{
    struct agent_steps_src src = {tool_or_null, barriers, ctx};
    const struct pyval *want = agent_arg(ctx->args, "step_num");
    const char *core = agent_str(ctx, "device_core", NULL);
    int rc, include = agent_bool(ctx, "include_summary", 1);
    long long limit;
    cJSON *answer;

    if ((rc = agent_int(ctx, "limit", 20, &limit)) != 0)
        return rc;
    rc = agent_step_trace_build(&src, ctx->session_id, want, core, limit, include, &answer);
    if (rc != 0)
        return rc < 0 ? agent_fail(ctx, AGENT_E_INTERNAL, "out of memory") : rc;
    return agent_answer_json(ctx, answer, 2);
}

/* A failure to read the op profile is XProf's missing HLO data (logged,
 * not reported). */
static cJSON *tool_quiet(void *arg, const char *file, const char *query, int *rc)
{
    struct agent_ctx *ctx = arg;
    cJSON *doc = tool_or_null(arg, file, query, rc);

    if (*rc != 0 && strcmp(file, "overview_page.json") != 0) {
        *rc = 0;
        ctx->msg[0] = '\0';
    }
    return doc;
}

int agent_check_host_boundness(struct agent_ctx *ctx)
{
    struct agent_steps_src src = {tool_quiet, barriers, ctx};
    cJSON *answer;
    int rc;

    rc = agent_host_boundness_build(&src, ctx->session_id, agent_str(ctx, "func_name", NULL),
                                    &answer);
    if (rc != 0)
        return rc < 0 ? agent_fail(ctx, AGENT_E_INTERNAL, "out of memory") : rc;
    return agent_answer_json(ctx, answer, 2);
}
