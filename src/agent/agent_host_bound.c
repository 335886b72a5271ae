/*
 * agent_host_bound.c - check_host_boundness's answer (agent_steps.h):
 * XProf's four-condition gate (check_host_boundness_tool.py) over
 * overview_page.json, the op profile by category, the barrier-cores
 * events and the utilization viewer, which has no data here.
 */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent.h"
#include "agent_pyjson.h"
#include "agent_steps.h"

static const cJSON *get(const cJSON *obj, const char *key)
{
    return cJSON_IsObject(obj) ? cJSON_GetObjectItemCaseSensitive(obj, key) : NULL;
}

static char *lower_dup(const char *s)
{
    char *d = strdup(s), *p;

    for (p = d; p != NULL && *p; p++)
        *p = (char)tolower((unsigned char)*p);
    return d;
}

static const char *const ici_patterns[] = {
    "all-reduce",           "all-gather",         "all-to-all", "reduce-scatter",
    "collective-broadcast", "collective-permute", NULL};
static const char *const hbm_patterns[] = {"copy-start", "copy", "copy-done", NULL};

static int any_in(const char *const *pats, const char *a, const char *b)
{
    int i;

    for (i = 0; pats[i] != NULL; i++) {
        if (strstr(a, pats[i]) != NULL || strstr(b, pats[i]) != NULL)
            return 1;
    }
    return 0;
}

/* str(v) of a JSON value, lowercased, malloc'd. */
static char *lower_str(const cJSON *v)
{
    char buf[64];

    if (v == NULL)
        return strdup("");
    if (cJSON_IsString(v))
        return lower_dup(v->valuestring);
    if (cJSON_IsNumber(v)) {
        py_float_repr(v->valuedouble, buf, sizeof(buf));
        if (v->valuedouble == trunc(v->valuedouble) && fabs(v->valuedouble) < 1e15)
            snprintf(buf, sizeof(buf), "%.0f", v->valuedouble);
        return strdup(buf);
    }
    if (cJSON_IsBool(v))
        return strdup(cJSON_IsTrue(v) ? "true" : "false");
    if (cJSON_IsNull(v))
        return strdup("none");
    return strdup("");
}

/* _traverse_and_sum_hlo_times: ps of compute, HBM and ICI leaves. */
static void hlo_times(const cJSON *node, double t[3])
{
    const cJSON *metrics, *children, *child;
    double occ = 0;

    t[0] = t[1] = t[2] = 0;
    if (!cJSON_IsObject(node))
        return;
    metrics = get(node, "metrics");
    if (cJSON_IsObject(metrics) && get(metrics, "occurrences") != NULL)
        agent_py_float(get(metrics, "occurrences"), &occ);
    children = get(node, "children");
    if (cJSON_GetArraySize(children) == 0 && occ > 0) {
        const cJSON *xla = get(node, "xla");
        char *name = lower_str(get(node, "name"));
        char *cat = lower_str(cJSON_IsObject(xla) ? get(xla, "category") : NULL);
        const cJSON *rt = cJSON_IsObject(metrics) ? get(metrics, "rawTime") : NULL;
        double raw = 0;
        if (name != NULL && cat != NULL) {
            if (rt != NULL && !cJSON_IsNull(rt))
                agent_py_float(rt, &raw);
            if (any_in(ici_patterns, name, cat))
                t[2] += raw;
            else if (any_in(hbm_patterns, name, cat))
                t[1] += raw;
            else
                t[0] += raw;
        }
        free(name);
        free(cat);
    }
    if (!cJSON_IsArray(children))
        return;
    cJSON_ArrayForEach(child, children)
    {
        double c[3];
        if (!cJSON_IsObject(child))
            continue;
        hlo_times(child, c);
        t[0] += c[0];
        t[1] += c[1];
        t[2] += c[2];
    }
}

/* The first run of digits of str(v) as an int (max 1), else 1. */
static long long leading_int(const cJSON *v)
{
    char *s = lower_str(v), *p;
    long long n = 1;

    if (v == NULL) {
        free(s);
        return 1;
    }
    for (p = s; p != NULL && *p && !isdigit((unsigned char)*p); p++)
        ;
    if (p != NULL && *p)
        n = strtoll(p, NULL, 10);
    free(s);
    return n > 1 ? n : 1;
}

/* str(v) of a p value (strings as they are, numbers in repr). */
static void value_text(const cJSON *v, char *buf, size_t n)
{
    if (cJSON_IsString(v))
        snprintf(buf, n, "%s", v->valuestring);
    else if (cJSON_IsNumber(v))
        py_float_repr(v->valuedouble, buf, n);
    else if (cJSON_IsBool(v))
        snprintf(buf, n, "%s", cJSON_IsTrue(v) ? "True" : "False");
    else
        snprintf(buf, n, "None");
}

/* Python truthiness of a JSON value. */
static int truthy(const cJSON *v)
{
    if (v == NULL || cJSON_IsNull(v) || cJSON_IsFalse(v))
        return 0;
    if (cJSON_IsNumber(v))
        return v->valuedouble != 0;
    if (cJSON_IsString(v))
        return v->valuestring[0] != '\0';
    if (cJSON_IsArray(v) || cJSON_IsObject(v))
        return cJSON_GetArraySize(v) > 0;
    return 1;
}

static cJSON *strings(const char *const *v, int n)
{
    cJSON *a = cJSON_CreateArray();
    int i;

    for (i = 0; a != NULL && i < n; i++)
        cJSON_AddItemToArray(a, cJSON_CreateString(v[i]));
    return a;
}

static const cJSON *section_item(const cJSON *doc, int i, const char *key)
{
    const cJSON *sec = cJSON_GetArrayItem(doc, i);
    return cJSON_IsObject(sec) ? get(sec, key) : NULL;
}

int agent_host_boundness_build(const struct agent_steps_src *src, const char *session,
                               const char *func, cJSON **answer)
{
    char reasons[8][512], recs[4][512], buf[512];
    const char *r_ptrs[8], *c_ptrs[4];
    const cJSON *over_p, *step_p, *env_p, *v;
    double duty = 0, step_ms = 0, total, t[3] = {0, 0, 0}, comp_ms = 0, hbm_ms = 0, ici_ms = 0;
    double barrier_avg, barrier_ms, idle, pure_idle, active, ratio, chips;
    double idleness = 0, hbm_bw = 0, ici_rd = 0, ici_wr = 0; /* NO_DATA: see below */
    long long cores, steps;
    long nbarrier;
    int rc, hlo_ok = 0, nr = 0, nc = 0, i;
    int idle_high, mxu_high, hbm_low, ici_low;
    const char *status;
    cJSON *doc, *out, *m;

    *answer = NULL;
    doc = src->tool(src->arg, "overview_page.json", NULL, &rc);
    if (rc != 0)
        return rc;
    if (doc == NULL) {
        out = cJSON_CreateObject();
        snprintf(buf, sizeof(buf), "No overview data returned for session %s", session);
        pyj_add_str(out, "status", "UNKNOWN");
        pyj_add_str(out, "error", buf);
        return (*answer = out) != NULL ? 0 : -ENOMEM;
    }
    if (!cJSON_IsArray(doc)) {
        /* XProf also reads a dict (performance_summary, step_time,
         * run_environment); overview_page.json is always the list form */
        cJSON_Delete(doc);
        out = cJSON_CreateObject();
        snprintf(buf, sizeof(buf), "Unexpected overview data format for session %s", session);
        pyj_add_str(out, "status", "UNKNOWN");
        pyj_add_str(out, "error", buf);
        return (*answer = out) != NULL ? 0 : -ENOMEM;
    }
    over_p = section_item(doc, 0, "p");
    step_p = section_item(doc, 1, "p");
    env_p = section_item(doc, 2, "p");
    steps = cJSON_IsObject(cJSON_GetArrayItem(doc, 1))
                ? cJSON_GetArraySize(section_item(doc, 1, "rows"))
                : 0;
    /* float(str(duty).replace("%", "").strip()), 0.0 when it raises */
    v = get(over_p, "device_duty_cycle_percent");
    if (v == NULL)
        snprintf(buf, sizeof(buf), "0.0%%");
    else
        value_text(v, buf, sizeof(buf));
    {
        char clean[512], *w = clean, *p;
        cJSON *tmp;
        for (p = buf; *p && w < clean + sizeof(clean) - 1; p++)
            if (*p != '%')
                *w++ = *p;
        *w = '\0';
        tmp = cJSON_CreateString(clean);
        if (!agent_py_float(tmp, &duty))
            duty = 0.0;
        cJSON_Delete(tmp);
    }
    cores = leading_int(get(env_p, "device_core_count"));
    (void)leading_int(get(env_p, "host_count")); /* the utilization viewer's hosts */
    v = get(step_p, "steptime_ms_average");
    if (!truthy(v))
        v = get(step_p, "sc_step_time_ms_average");
    if (truthy(v))
        value_text(v, buf, sizeof(buf));
    else
        snprintf(buf, sizeof(buf), "0.0");
    {
        /* re.search(r"[\d.]+") */
        char *p = buf, num[512];
        size_t k = 0;
        while (*p && !isdigit((unsigned char)*p) && *p != '.')
            p++;
        while ((isdigit((unsigned char)*p) || *p == '.') && k + 1 < sizeof(num))
            num[k++] = *p++;
        num[k] = '\0';
        step_ms = k > 0 ? strtod(num, NULL) : 0.0;
    }
    cJSON_Delete(doc);
    total = step_ms * (double)steps;
    if (total == 0.0 || steps == 0) {
        out = cJSON_CreateObject();
        snprintf(buf, sizeof(buf),
                 "Session %s lacks valid step timing duration telemetry in overview_page.json.",
                 session);
        pyj_add_str(out, "status", "INSUFFICIENT_DATA");
        r_ptrs[0] = buf;
        pyj_set(out, "reasons", strings(r_ptrs, 1));
        c_ptrs[0] = "Capture a new XProf trace with step profiling enabled to measure host "
                    "boundness.";
        pyj_set(out, "recommendations", strings(c_ptrs, 1));
        return (*answer = out) != NULL ? 0 : -ENOMEM;
    }
    /* the op profile by category (a failure: no HLO data, as XProf logs) */
    doc = src->tool(src->arg, "op_profile.json", "group_by=category", &rc);
    if (doc != NULL) {
        const cJSON *start = get(doc, "byCategory");
        if (!truthy(start))
            start = get(doc, "by_category");
        if (cJSON_IsObject(start) && truthy(start)) {
            hlo_ok = 1;
            hlo_times(start, t);
            comp_ms = (t[0] / 1e9) / (double)cores;
            hbm_ms = (t[1] / 1e9) / (double)cores;
            ici_ms = (t[2] / 1e9) / (double)cores;
        }
    }
    cJSON_Delete(doc);
    src->barriers(src->arg, &barrier_avg, &nbarrier);
    barrier_ms = nbarrier > 0 ? barrier_avg * (double)steps : 0.0;
    idle = total - (comp_ms + hbm_ms + ici_ms);
    pure_idle = idle - barrier_ms > 0.0 ? idle - barrier_ms : 0.0;
    active = total - pure_idle;
    ratio = (active > 0 ? pure_idle / active : 0.0) * 100.0;
    chips = (double)cores * (total > 0 ? pure_idle / total : 0.0);
    /* The utilization viewer needs TPU counters: ours answers NO_DATA ("No
     * data returned for session"), where XProf stops looking and keeps
     * 0.0 for idleness, HBM and ICI utilization. */
    idle_high = ratio > 10.0;
    mxu_high = idleness > 70.0;
    hbm_low = hbm_bw < 30.0;
    ici_low = ici_rd < 30.0 && ici_wr < 30.0;
    if (idle_high && mxu_high && hbm_low && ici_low) {
        status = "HOST_BOUND";
        snprintf(reasons[nr++], 512,
                 "Workload is host-bound: Idle Time Ratio exceeds %.1f%% of active compute.", 10.0);
        snprintf(recs[nc++], 512, "Opportunity Size: Hardware waste = %.1f idle chips.", chips);
        snprintf(recs[nc++], 512,
                 "Review data pipeline for inefficiencies (e.g., tf.data transformations or "
                 "PyGrain).");
        snprintf(recs[nc++], 512, "%s",
                 func != NULL && func[0]
                     ? "Use Lumini xprof_check_host_boundness with func_name to run automated "
                       "step dispersion analysis."
                     : "Provide `func_name` to enable automated Dispersion Analysis and check "
                       "for transient stalls.");
    } else if (duty > 50.0 && (!hlo_ok || !idle_high)) {
        if (!hlo_ok) {
            status = "UNKNOWN";
            snprintf(reasons[nr++], 512,
                     "TPU duty cycle is high (%.1f%%), but HLO telemetry is missing. Unable to "
                     "determine if workload is host-bound.",
                     duty);
        } else {
            status = "NOT_HOST_BOUND";
            snprintf(reasons[nr++], 512, "TPU duty cycle (%.1f%%) is high and idle ratio is low.",
                     duty);
        }
    } else {
        status = "NOT_HOST_BOUND";
        snprintf(reasons[nr++], 512,
                 "Workload is not host-bound. One or more host-bound condition thresholds "
                 "were not met:");
        if (!idle_high)
            snprintf(reasons[nr++], 512, "- Idle Time Ratio (%.1f%%) is <= %.1f%%.", ratio, 10.0);
        if (!mxu_high)
            snprintf(reasons[nr++], 512, "- MXU Idleness (%.1f%%) is <= %.1f%%.", idleness, 70.0);
        if (!hbm_low)
            snprintf(reasons[nr++], 512, "- HBM Bandwidth Utilization (%.1f%%) is >= %.1f%%.",
                     hbm_bw, 30.0);
        if (!ici_low)
            snprintf(reasons[nr++], 512,
                     "- ICI Utilization (Read: %.1f%%, Write: %.1f%%) is >= %.1f%%.", ici_rd,
                     ici_wr, 30.0);
    }
    for (i = 0; i < nr; i++)
        r_ptrs[i] = reasons[i];
    for (i = 0; i < nc; i++)
        c_ptrs[i] = recs[i];
    out = cJSON_CreateObject();
    m = cJSON_CreateObject();
    pyj_add_str(out, "status", status);
    pyj_add_float(m, "tpu_duty_cycle_percent", py_round(duty, 2));
    pyj_add_float(m, "idle_time_ratio_percent", py_round(ratio, 2));
    pyj_add_float(m, "equivalent_idle_chips", py_round(chips, 2));
    pyj_add_float(m, "mxu_idleness_percent", py_round(idleness, 2));
    pyj_add_float(m, "hbm_bandwidth_utilization_percent", py_round(hbm_bw, 2));
    pyj_add_float(m, "ici_read_utilization_percent", py_round(ici_rd, 2));
    pyj_add_float(m, "ici_write_utilization_percent", py_round(ici_wr, 2));
    pyj_add_float(m, "scaled_compute_time_ms", py_round(comp_ms, 2));
    pyj_add_float(m, "scaled_hbm_time_ms", py_round(hbm_ms, 2));
    pyj_add_float(m, "scaled_ici_time_ms", py_round(ici_ms, 2));
    pyj_add_float(m, "scaled_barrier_time_ms", py_round(barrier_ms, 2));
    pyj_add_float(m, "pure_idle_time_ms", py_round(pure_idle, 2));
    pyj_add_float(m, "total_duration_ms", py_round(total, 2));
    pyj_add_int(m, "number_of_steps", (double)steps);
    pyj_add_int(m, "core_count", (double)cores);
    pyj_set(out, "metrics", m);
    pyj_set(out, "reasons", strings(r_ptrs, nr));
    pyj_set(out, "recommendations", strings(c_ptrs, nc));
    if (out == NULL || m == NULL) {
        cJSON_Delete(out);
        return -ENOMEM;
    }
    *answer = out;
    return 0;
}
