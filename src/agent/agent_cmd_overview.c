/*
 * agent_cmd_overview.c - the session summary commands of XProf's agent
 * CLI: get_overview, get_kpi_metrics, get_device_information, get_hosts,
 * reshaped from overview_page.json and roofline_model.json as XProf's
 * get_overview_tool.py and xprof_data.py do.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent.h"
#include "agent_cmds.h"
#include "agent_pyjson.h"

static const char *const perf_keys[] = {"steptime_ms_average",
                                        "steptime_ms_standard_deviation",
                                        "tc_idle_ms_average",
                                        "tc_infeed_ms_average",
                                        "tc_outfeed_ms_average",
                                        "host_transfer_ms_average",
                                        "sc_step_time_ms_average",
                                        "sc_idle_ms_average",
                                        "sc_infeed_ms_average",
                                        "sc_outfeed_ms_average",
                                        "mxu_utilization_percent",
                                        "flop_rate_utilization_relative_to_roofline",
                                        "device_duty_cycle_percent",
                                        "memory_bw_utilization_relative_to_hw_limit",
                                        "program_goodput_percent",
                                        "host_tf_op_percent",
                                        "device_tf_op_percent",
                                        "host_op_time_eager_percent",
                                        "device_op_time_eager_percent",
                                        "device_idle_time_percent",
                                        "hbm_bw_utilization_percent",
                                        "host_idle_time_percent",
                                        NULL};

static const char *const env_keys[] = {
    "is_training", "profile_start_time", "profile_duration_ms", "host_count", "task_count",
    "device_type", "device_core_count",  "change_list",         "build_time", "build_target",
    NULL};

static int in_list(const char *const *list, const char *key)
{
    int i;

    for (i = 0; list[i] != NULL; i++) {
        if (strcmp(list[i], key) == 0)
            return 1;
    }
    return 0;
}

static int starts(const char *s, const char *prefix)
{
    return strncmp(s, prefix, strlen(prefix)) == 0;
}

/* Python's "not v or v in ('0.0%', '0%', '0.0', 0, 0.0)" of a p value. */
static int zeroish(const cJSON *v)
{
    if (v == NULL || cJSON_IsNull(v) || cJSON_IsFalse(v))
        return 1;
    if (cJSON_IsNumber(v))
        return v->valuedouble == 0;
    if (cJSON_IsString(v))
        return v->valuestring[0] == '\0' || strcmp(v->valuestring, "0.0%") == 0 ||
               strcmp(v->valuestring, "0%") == 0 || strcmp(v->valuestring, "0.0") == 0;
    return 0;
}

/* The first row of roofline_model.json's first table, by column id. */
static cJSON *roofline_program_row(struct agent_ctx *ctx, cJSON **doc)
{
    cJSON *table, *cols, *rows, *cells, *row = NULL, *col, *cell;
    int i = 0;

    *doc = NULL;
    if (agent_tool_json(ctx, "roofline_model.json", NULL, doc) != 0)
        return NULL;
    table = cJSON_IsArray(*doc) ? cJSON_GetArrayItem(*doc, 0) : NULL;
    cols = table ? cJSON_GetObjectItemCaseSensitive(table, "cols") : NULL;
    rows = table ? cJSON_GetObjectItemCaseSensitive(table, "rows") : NULL;
    cells = rows ? cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(rows, 0), "c") : NULL;
    if (cols == NULL || cells == NULL)
        return NULL;
    row = cJSON_CreateObject();
    cJSON_ArrayForEach(col, cols)
    {
        cJSON *id = cJSON_GetObjectItemCaseSensitive(col, "id");
        cJSON *v;
        cell = cJSON_GetArrayItem(cells, i++);
        v = cJSON_IsObject(cell) ? cJSON_GetObjectItemCaseSensitive(cell, "v") : cell;
        if (row != NULL && cJSON_IsString(id))
            pyj_set(row, id->valuestring, v ? cJSON_Duplicate(v, 1) : cJSON_CreateNull());
    }
    return row;
}

static int add_pct(cJSON *obj, const char *key, double v)
{
    char buf[64];

    snprintf(buf, sizeof(buf), "%.2f%%", v * 100.0);
    return pyj_add_str(obj, key, buf);
}

/* _populate_roofline_fallback. */
static void roofline_fallback(struct agent_ctx *ctx, cJSON *perf)
{
    int needs_flop = zeroish(
        cJSON_GetObjectItemCaseSensitive(perf, "flop_rate_utilization_relative_to_roofline"));
    int needs_mem = zeroish(cJSON_GetObjectItemCaseSensitive(
                        perf, "memory_bw_utilization_relative_to_hw_limit")) &&
                    zeroish(cJSON_GetObjectItemCaseSensitive(perf, "hbm_bw_utilization_percent"));
    cJSON *doc, *row, *bound;
    double v;

    if (!needs_flop && !needs_mem)
        return;
    row = roofline_program_row(ctx, &doc);
    ctx->msg[0] = '\0'; /* a failure here is logged by XProf, not reported */
    if (row == NULL) {
        cJSON_Delete(doc);
        return;
    }
    if (agent_py_float(cJSON_GetObjectItemCaseSensitive(row, "roofline_efficiency"), &v)) {
        add_pct(perf, "roofline_efficiency_percent", v);
        if (needs_flop)
            add_pct(perf, "flop_rate_utilization_relative_to_roofline", v);
    }
    if (agent_py_float(cJSON_GetObjectItemCaseSensitive(row, "compute_efficiency"), &v))
        add_pct(perf, "compute_efficiency_percent", v);
    if (agent_py_float(cJSON_GetObjectItemCaseSensitive(row, "max_mem_bw_utilization"), &v)) {
        add_pct(perf, "max_mem_bw_utilization_percent", v);
        if (needs_mem) {
            add_pct(perf, "memory_bw_utilization_relative_to_hw_limit", v);
            add_pct(perf, "hbm_bw_utilization_percent", v);
        }
    }
    bound = cJSON_GetObjectItemCaseSensitive(row, "bound_by");
    if (bound != NULL && !zeroish(bound))
        pyj_set(perf, "bound_by", cJSON_Duplicate(bound, 1));
    if (agent_py_float(cJSON_GetObjectItemCaseSensitive(row, "operational_intensity"), &v))
        pyj_add_float(perf, "operational_intensity_flop_per_byte", py_round(v, 4));
    cJSON_Delete(row);
    cJSON_Delete(doc);
}

/* The overview as get_overview builds it, into *out. 0, -ENOENT (no
 * data: msg says so), or an AGENT_E_* code. */
static int build_overview(struct agent_ctx *ctx, int include_command, cJSON **out)
{
    cJSON *doc, *section, *all, *perf, *env, *kv;
    const char *hostname = NULL, *bns = NULL, *command = NULL;
    int rc;

    *out = NULL;
    rc = agent_tool_json(ctx, "overview_page.json", NULL, &doc);
    if (rc != 0)
        return rc;
    if (!cJSON_IsArray(doc) || cJSON_GetArraySize(doc) == 0) {
        cJSON_Delete(doc);
        return agent_answer_error(ctx, "Unexpected overview page data format") == 0
                   ? 1
                   : AGENT_E_INTERNAL;
    }
    all = cJSON_CreateObject();
    perf = cJSON_CreateObject();
    env = cJSON_CreateObject();
    cJSON_ArrayForEach(section, doc)
    {
        cJSON *p = cJSON_GetObjectItemCaseSensitive(section, "p");
        cJSON_ArrayForEach(kv, p) pyj_set(all, kv->string, cJSON_Duplicate(kv, 1));
    }
    /* the run environment table: the first with a host_id column */
    cJSON_ArrayForEach(section, doc)
    {
        cJSON *cols = cJSON_GetObjectItemCaseSensitive(section, "cols");
        cJSON *rows = cJSON_GetObjectItemCaseSensitive(section, "rows");
        cJSON *cells, *col;
        int i = 0, found = 0;
        if (cols == NULL || rows == NULL)
            continue;
        cells = cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(rows, 0), "c");
        cJSON_ArrayForEach(col, cols)
        {
            cJSON *id = cJSON_GetObjectItemCaseSensitive(col, "id");
            found |= cJSON_IsString(id) && strcmp(id->valuestring, "host_id") == 0;
        }
        if (!found || cJSON_GetArraySize(cells) == 0)
            continue;
        cJSON_ArrayForEach(col, cols)
        {
            cJSON *id = cJSON_GetObjectItemCaseSensitive(col, "id");
            cJSON *v = cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(cells, i++), "v");
            const char *s = cJSON_IsString(v) ? v->valuestring : NULL;
            if (!cJSON_IsString(id))
                continue;
            if (strcmp(id->valuestring, "host_id") == 0)
                hostname = s;
            else if (strcmp(id->valuestring, "bns_address") == 0)
                bns = s;
            else if (strcmp(id->valuestring, "command_line") == 0)
                command = s;
        }
        break;
    }
    cJSON_ArrayForEach(kv, all)
    {
        if (starts(kv->string, "stat_") || starts(kv->string, "sc_") ||
            in_list(perf_keys, kv->string))
            pyj_set(perf, kv->string, cJSON_Duplicate(kv, 1));
    }
    roofline_fallback(ctx, perf);
    cJSON_ArrayForEach(kv, all)
    {
        if (starts(kv->string, "run_") || in_list(env_keys, kv->string)) {
            if (strcmp(kv->string, "run_command") == 0 && !include_command)
                continue;
            pyj_set(env, kv->string, cJSON_Duplicate(kv, 1));
        }
    }
    if (hostname != NULL && hostname[0])
        pyj_add_str(env, "hostname", hostname);
    if (bns != NULL && bns[0])
        pyj_add_str(env, "bns", bns);
    if (include_command && command != NULL && command[0] &&
        cJSON_GetObjectItemCaseSensitive(env, "run_command") == NULL)
        pyj_add_str(env, "run_command", command);
    if (cJSON_GetObjectItemCaseSensitive(all, "device_type") != NULL)
        pyj_set(env, "device_type",
                cJSON_Duplicate(cJSON_GetObjectItemCaseSensitive(all, "device_type"), 1));
    /* (the xmanager id of Google's command lines has no use here) */
    *out = cJSON_CreateObject();
    if (*out == NULL || pyj_set(*out, "performance_summary", perf) != 0 ||
        pyj_set(*out, "run_environment", env) != 0) {
        cJSON_Delete(*out);
        *out = NULL;
        rc = agent_fail(ctx, AGENT_E_INTERNAL, "out of memory");
    }
    cJSON_Delete(all);
    cJSON_Delete(doc);
    return rc;
}

int agent_get_overview(struct agent_ctx *ctx)
{
    cJSON *ov;
    int rc = build_overview(ctx, agent_bool(ctx, "include_command", 0), &ov);

    if (rc == 1)
        return 0; /* the error answer is set */
    if (rc == -ENOENT)
        return agent_answer_error(ctx, "No overview data returned for the session");
    if (rc != 0)
        return rc;
    return agent_answer_json(ctx, ov, 2);
}

static cJSON *dup_or_na(const cJSON *obj, const char *key)
{
    const cJSON *v = obj ? cJSON_GetObjectItemCaseSensitive(obj, key) : NULL;
    return v ? cJSON_Duplicate(v, 1) : cJSON_CreateString("N/A");
}

int agent_get_kpi_metrics(struct agent_ctx *ctx)
{
    cJSON *ov, *perf, *env, *out, *acc;
    int rc = build_overview(ctx, 0, &ov);

    if (rc == 1) {
        /* get_overview answered an error: say so as get_kpi_metrics does */
        cJSON *e = cJSON_Parse(ctx->out);
        cJSON *m = e ? cJSON_GetObjectItemCaseSensitive(e, "error") : NULL;
        rc = agent_answer_error(ctx, "Error in get_overview: %s",
                                cJSON_IsString(m) ? m->valuestring : "");
        cJSON_Delete(e);
        return rc;
    }
    if (rc == -ENOENT)
        return agent_answer_error(
            ctx, "Error in get_overview: No overview data returned for the session");
    if (rc != 0)
        return rc;
    perf = cJSON_GetObjectItemCaseSensitive(ov, "performance_summary");
    env = cJSON_GetObjectItemCaseSensitive(ov, "run_environment");
    out = cJSON_CreateObject();
    acc = cJSON_CreateObject();
    pyj_set(out, "step_time_ms", dup_or_na(perf, "steptime_ms_average"));
    pyj_set(out, "duty_cycle_percent", dup_or_na(perf, "device_duty_cycle_percent"));
    pyj_set(out, "mxu_utilization_percent", dup_or_na(perf, "mxu_utilization_percent"));
    pyj_set(out, "roofline_utilization",
            dup_or_na(perf, "flop_rate_utilization_relative_to_roofline"));
    pyj_set(out, "peak_hbm_gib", agent_memory_peak_gib(ctx));
    pyj_set(acc, "device_type", dup_or_na(env, "device_type"));
    pyj_set(acc, "device_core_count", dup_or_na(env, "device_core_count"));
    pyj_set(out, "accelerator_info", acc);
    cJSON_Delete(ov);
    return agent_answer_json(ctx, out, 2);
}

int agent_get_device_information(struct agent_ctx *ctx)
{
    cJSON *doc, *table, *p, *kv, *out;
    int rc = agent_tool_json(ctx, "roofline_model.json", NULL, &doc);

    if (rc == -ENOENT)
        return agent_answer_error(ctx, "No roofline model data returned");
    if (rc != 0)
        return rc;
    table = cJSON_IsArray(doc) ? cJSON_GetArrayItem(doc, 0) : NULL;
    if (table == NULL) {
        cJSON_Delete(doc);
        return agent_answer_error(ctx, "Unexpected roofline model data format");
    }
    p = cJSON_GetObjectItemCaseSensitive(table, "p");
    out = cJSON_CreateObject();
    cJSON_ArrayForEach(kv, p)
    {
        double v;
        if (agent_py_float(kv, &v) && !cJSON_IsBool(kv))
            pyj_add_float(out, kv->string, v);
        else
            pyj_set(out, kv->string, cJSON_Duplicate(kv, 1));
    }
    cJSON_Delete(doc);
    return agent_answer_json(ctx, out, 2);
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Host = the last '.'-separated part of the file name less .xplane.pb. */
int agent_get_hosts(struct agent_ctx *ctx)
{
    char **names = calloc((size_t)ctx->nxplanes + 1, sizeof(*names));
    cJSON *out, *list;
    int i, n = 0;

    if (names == NULL)
        return agent_fail(ctx, AGENT_E_INTERNAL, "out of memory");
    for (i = 0; i < ctx->nxplanes; i++) {
        const char *base = strrchr(ctx->xplanes[i], '/');
        char stem[1024], *dot;
        size_t len;
        base = base ? base + 1 : ctx->xplanes[i];
        snprintf(stem, sizeof(stem), "%s", base);
        len = strlen(stem);
        if (len > 10 && strcmp(stem + len - 10, ".xplane.pb") == 0)
            stem[len - 10] = '\0';
        dot = strrchr(stem, '.');
        names[n++] = strdup(dot ? dot + 1 : stem);
    }
    qsort(names, (size_t)n, sizeof(*names), cmp_str);
    out = cJSON_CreateObject();
    list = cJSON_CreateArray();
    for (i = 0; i < n; i++) {
        if (names[i] != NULL &&
            (i == 0 || names[i - 1] == NULL || strcmp(names[i], names[i - 1]) != 0)) {
            cJSON *h = cJSON_CreateObject();
            pyj_add_str(h, "hostname", names[i]);
            cJSON_AddItemToArray(list, h);
        }
    }
    for (i = 0; i < n; i++)
        free(names[i]);
    free(names);
    pyj_set(out, "hosts", list);
    return agent_answer_json(ctx, out, 2);
}
