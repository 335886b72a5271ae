/*
 * agent_cmd_roofline.c - get_roofline_model of XProf's agent CLI: the
 * program row, the device constants and the top operations of
 * roofline_model.json's first table, reshaped as XProf's
 * get_roofline_model_tool.py does (percent strings, rounded rates).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent.h"
#include "agent_cmds.h"
#include "agent_pyjson.h"
#include "agent_regex.h"

static const cJSON *get(const cJSON *dict, const char *key)
{
    return cJSON_GetObjectItemCaseSensitive(dict, key);
}

static double fval(const cJSON *dict, const char *key)
{
    return agent_safe_float(get(dict, key), 0.0);
}

/* f"{safe_float(v) * 100.0:.2f}%" */
static int add_pct(cJSON *o, const char *key, const cJSON *v)
{
    char buf[64];

    snprintf(buf, sizeof(buf), "%.2f%%", agent_safe_float(v, 0.0) * 100.0);
    return pyj_add_str(o, key, buf);
}

/* calc_mem_util_str: the utilization column when positive, else the
 * bandwidth over the first positive peak of device_info. */
static int add_mem_util(cJSON *o, const char *key, const cJSON *prog, const cJSON *device,
                        const char *util_key, const char *bw_key, const char *peak1,
                        const char *peak2)
{
    const cJSON *val = get(prog, util_key);
    const char *peaks[2] = {peak1, peak2};
    double bw, peak = 0;
    char buf[64];
    int i;

    if (val != NULL && !cJSON_IsNull(val) && agent_safe_float(val, 0.0) > 0)
        return add_pct(o, key, val);
    bw = fval(prog, bw_key);
    if (bw == 0.0 && strncmp(bw_key, "hbm_", 4) == 0)
        bw = fval(prog, "hbm_bw");
    for (i = 0; i < 2; i++) {
        const cJSON *p = get(device, peaks[i]);
        if (p != NULL && agent_safe_float(p, 0.0) > 0) {
            peak = agent_safe_float(p, 0.0);
            break;
        }
    }
    if (peak > 0) {
        snprintf(buf, sizeof(buf), "%.2f%%", bw / peak * 100.0);
        return pyj_add_str(o, key, buf);
    }
    if (val != NULL && !cJSON_IsNull(val))
        return add_pct(o, key, val);
    return pyj_add_str(o, key, "N/A");
}

/* dict.get(key, dflt) copied. */
static cJSON *dup_get(const cJSON *dict, const char *key, const char *dflt)
{
    const cJSON *v = get(dict, key);
    return v ? cJSON_Duplicate(v, 1) : cJSON_CreateString(dflt);
}

static cJSON *program_metrics(const cJSON *prog, const cJSON *device)
{
    cJSON *m = cJSON_CreateObject();

    pyj_set(m, "bound_by", dup_get(prog, "bound_by", "Unknown"));
    pyj_add_float(m, "operational_intensity_flop_per_byte",
                  py_round(fval(prog, "operational_intensity"), 4));
    pyj_add_float(m, "bottleneck_operational_intensity_flop_per_byte",
                  py_round(fval(prog, "bottleneck_operational_intensity"), 4));
    add_pct(m, "roofline_efficiency_percent", get(prog, "roofline_efficiency"));
    add_pct(m, "compute_efficiency_percent", get(prog, "compute_efficiency"));
    add_pct(m, "max_mem_bw_utilization_percent", get(prog, "max_mem_bw_utilization"));
    pyj_add_float(m, "optimal_flop_rate_gflops", py_round(fval(prog, "optimal_flop_rate"), 2));
    add_pct(m, "dma_stall_percent", get(prog, "dma_stall_percent"));
    pyj_add_float(m, "measured_flop_rate_gflops", py_round(fval(prog, "measured_flop_rate"), 2));
    pyj_add_float(m, "model_flop_rate_gflops", py_round(fval(prog, "model_flop_rate"), 2));
    pyj_add_float(m, "measured_memory_bw_gibs", py_round(fval(prog, "measured_memory_bw"), 2));
    pyj_add_float(m, "hbm_bw_gibs", py_round(fval(prog, "hbm_bw"), 2));
    add_mem_util(m, "hbm_read_bw_utilization_percent", prog, device, "hbm_read_bw_utilization",
                 "hbm_read_bw", "peak_hbm_read_bw", "peak_hbm_bw");
    add_mem_util(m, "hbm_write_bw_utilization_percent", prog, device, "hbm_write_bw_utilization",
                 "hbm_write_bw", "peak_hbm_write_bw", "peak_hbm_bw");
    add_mem_util(m, "cmem_read_bw_utilization_percent", prog, device, "cmem_read_bw_utilization",
                 "cmem_read_bw", "peak_cmem_read_bw", "peak_cmem_bw");
    add_mem_util(m, "cmem_write_bw_utilization_percent", prog, device, "cmem_write_bw_utilization",
                 "cmem_write_bw", "peak_cmem_write_bw", "peak_cmem_bw");
    add_mem_util(m, "vmem_read_bw_utilization_percent", prog, device, "vmem_read_bw_utilization",
                 "vmem_read_bw", "peak_vmem_read_bw", "peak_vmem_bw");
    add_mem_util(m, "vmem_write_bw_utilization_percent", prog, device, "vmem_write_bw_utilization",
                 "vmem_write_bw", "peak_vmem_write_bw", "peak_vmem_bw");
    pyj_add_float(m, "total_time_ms", py_round(fval(prog, "total_time") / 1000.0, 3));
    return m;
}

/* _strip_html_tags: the title attribute (newlines as " -> "), else the
 * text less its tags, stripped. */
static char *strip_html(const cJSON *v)
{
    const char *s = cJSON_IsString(v) ? v->valuestring : "";
    const char *t = strstr(s, "title=");
    size_t len = strlen(s), i, j = 0;
    char *out = malloc(len * 4 + 1);

    if (out == NULL)
        return NULL;
    while (t != NULL) {
        char q = t[6];
        const char *end;
        if ((q == '\'' || q == '"') && (end = t + 7 + strcspn(t + 7, "'\"")) > t + 7 &&
            (*end == '\'' || *end == '"')) {
            for (i = 7; t + i < end; i++) {
                if (t[i] == '\n') {
                    memcpy(out + j, " -> ", 4);
                    j += 4;
                } else {
                    out[j++] = t[i];
                }
            }
            out[j] = '\0';
            return out;
        }
        t = strstr(t + 1, "title=");
    }
    for (i = 0; i < len; i++) {
        if (s[i] == '<' && strchr(s + i + 1, '>') != NULL && s[i + 1] != '>') {
            i = (size_t)(strchr(s + i + 1, '>') - s);
            continue;
        }
        out[j++] = s[i];
    }
    out[j] = '\0';
    for (i = 0; out[i] == ' ' || out[i] == '\t' || out[i] == '\n' || out[i] == '\r'; i++)
        ;
    memmove(out, out + i, j - i + 1);
    j -= i;
    while (j > 0 && strchr(" \t\n\r\f\v", out[j - 1]) != NULL)
        out[--j] = '\0';
    return out;
}

/* r_dict.get(a) or r_dict.get(b, "") */
static cJSON *name_or(const cJSON *r, const char *a, const char *b)
{
    const cJSON *v = get(r, a);
    int truthy = v != NULL && !cJSON_IsNull(v) && !cJSON_IsFalse(v) &&
                 !(cJSON_IsString(v) && v->valuestring[0] == '\0') &&
                 !(cJSON_IsNumber(v) && v->valuedouble == 0);
    return truthy ? cJSON_Duplicate(v, 1) : dup_get(r, b, "");
}

/* str() of a value as Python prints it. */
static cJSON *str_of(const cJSON *v)
{
    char buf[64];

    if (v == NULL)
        return cJSON_CreateString("");
    if (cJSON_IsString(v))
        return cJSON_CreateString(v->valuestring);
    if (cJSON_IsNull(v))
        return cJSON_CreateString("None");
    if (cJSON_IsBool(v))
        return cJSON_CreateString(cJSON_IsTrue(v) ? "True" : "False");
    py_float_repr(v->valuedouble, buf, sizeof(buf));
    return cJSON_CreateString(buf);
}

struct op_rec {
    cJSON *item;
    double time_ms;
    long seq;
};

static int by_time_desc(const void *a, const void *b)
{
    const struct op_rec *x = a, *y = b;
    if (x->time_ms != y->time_ms)
        return x->time_ms < y->time_ms ? 1 : -1;
    return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static cJSON *op_record(const cJSON *r, double self_us)
{
    cJSON *op = cJSON_CreateObject();
    char *src = strip_html(get(r, "source_info"));

    pyj_add_int(op, "rank", (double)(long long)fval(r, "rank"));
    pyj_set(op, "name", name_or(r, "operation", "hlo_name"));
    pyj_set(op, "category", name_or(r, "category", "hlo_category"));
    pyj_add_float(op, "total_self_time_ms", py_round(self_us / 1000.0, 3));
    add_pct(op, "total_self_time_percent", get(r, "total_self_time_percent"));
    pyj_add_float(op, "operational_intensity_flop_per_byte",
                  py_round(fval(r, "operational_intensity"), 4));
    pyj_add_float(op, "bottleneck_operational_intensity_flop_per_byte",
                  py_round(fval(r, "bottleneck_operational_intensity"), 4));
    add_pct(op, "roofline_efficiency_percent", get(r, "roofline_efficiency"));
    add_pct(op, "compute_efficiency_percent", get(r, "compute_efficiency"));
    add_pct(op, "max_mem_bw_utilization_percent", get(r, "max_mem_bw_utilization"));
    pyj_add_float(op, "optimal_flop_rate_gflops", py_round(fval(r, "optimal_flop_rate"), 2));
    add_pct(op, "dma_stall_percent", get(r, "dma_stall_percent"));
    pyj_set(op, "bound_by", dup_get(r, "bound_by", "Unknown"));
    pyj_set(op, "hlo_module_id", str_of(get(r, "hlo_module_id")));
    pyj_add_str(op, "source_info", src ? src : "");
    free(src);
    return op;
}

/* 1 if an earlier record has the same rank and name. */
static int seen(const struct op_rec *recs, long n, const cJSON *op)
{
    const cJSON *rank = get(op, "rank"), *name = get(op, "name");
    long i;

    for (i = 0; i < n; i++) {
        if (cJSON_Compare(get(recs[i].item, "rank"), rank, 1) &&
            cJSON_Compare(get(recs[i].item, "name"), name, 1))
            return 1;
    }
    return 0;
}

static int answer_ops(struct agent_ctx *ctx, const cJSON *cols, const cJSON *rows, cJSON *out,
                      long long top_n)
{
    long nrows = cJSON_GetArraySize(rows), n = 0, i, keep;
    struct op_rec *recs = calloc((size_t)nrows + 1, sizeof(*recs));
    cJSON *list = cJSON_CreateArray();

    if (recs == NULL || list == NULL) {
        free(recs);
        cJSON_Delete(list);
        return agent_fail(ctx, AGENT_E_INTERNAL, "out of memory");
    }
    for (i = 1; i < nrows; i++) {
        cJSON *r = agent_row_dict(cols, cJSON_GetArrayItem(rows, (int)i));
        double self_us = fval(r, "total_self_time");
        if (r != NULL && self_us > 0) {
            cJSON *op = op_record(r, self_us);
            if (seen(recs, n, op)) {
                cJSON_Delete(op);
            } else {
                recs[n].item = op;
                recs[n].time_ms = py_round(self_us / 1000.0, 3);
                recs[n].seq = n;
                n++;
            }
        }
        cJSON_Delete(r);
    }
    qsort(recs, (size_t)n, sizeof(*recs), by_time_desc);
    keep = agent_py_slice(n, top_n);
    for (i = 0; i < n; i++) {
        if (i < keep)
            cJSON_AddItemToArray(list, recs[i].item);
        else
            cJSON_Delete(recs[i].item);
    }
    free(recs);
    pyj_set(out, "top_operations", list);
    pyj_add_int(out, "total_operations_analyzed", (double)n);
    return 0;
}

int agent_get_roofline_model(struct agent_ctx *ctx)
{
    cJSON *doc, *table, *cols, *rows, *props, *kv, *device, *out, *prog;
    long long top_n;
    char repr[1200], msg[1300];
    int rc;

    if ((rc = agent_int(ctx, "top_n", 15, &top_n)) != 0)
        return rc;
    rc = agent_tool_json(ctx, "roofline_model.json", NULL, &doc);
    if (rc == -ENOENT) {
        out = cJSON_CreateObject();
        py_str_repr(ctx->session_id, repr, sizeof(repr));
        snprintf(msg, sizeof(msg), "No roofline model data found for session %s.", repr);
        pyj_add_str(out, "status", "NO_DATA");
        pyj_add_str(out, "message", msg);
        return agent_answer_json(ctx, out, 2);
    }
    if (rc != 0)
        return rc;
    table = cJSON_IsArray(doc) ? cJSON_GetArrayItem(doc, 0) : NULL;
    if (table == NULL) {
        cJSON_Delete(doc);
        return agent_answer_error(ctx, "Unexpected roofline model data format: expected list");
    }
    cols = cJSON_GetObjectItemCaseSensitive(table, "cols");
    rows = cJSON_GetObjectItemCaseSensitive(table, "rows");
    props = cJSON_GetObjectItemCaseSensitive(table, "p");
    device = cJSON_CreateObject();
    cJSON_ArrayForEach(kv, props)
    {
        double v;
        if (agent_py_float(kv, &v))
            pyj_add_float(device, kv->string, v);
        else
            pyj_set(device, kv->string, cJSON_Duplicate(kv, 1));
    }
    out = cJSON_CreateObject();
    if (cJSON_GetArraySize(rows) == 0) {
        pyj_add_str(out, "status", "NO_DATA");
        pyj_add_str(out, "message", "Roofline model table has no rows");
        pyj_set(out, "device_info", device);
        cJSON_Delete(doc);
        return agent_answer_json(ctx, out, 2);
    }
    prog = agent_row_dict(cols, cJSON_GetArrayItem(rows, 0));
    pyj_set(out, "program", program_metrics(prog, device));
    pyj_set(out, "device_info", device);
    rc = answer_ops(ctx, cols, rows, out, top_n);
    cJSON_Delete(prog);
    cJSON_Delete(doc);
    if (rc != 0) {
        cJSON_Delete(out);
        return rc;
    }
    return agent_answer_json(ctx, out, 2);
}
