/*
 * overview_page.c - overview_page.json: XProf's overview page payload, a JSON
 * list of 7 elements: analysis, step time, run environment, recommendation,
 * inference latency, {}, diagnostics (xprof/convert/op_stats_to_overview_page.cc).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/sort.h"
#include "out/datatable.h"
#include "op_stats/op_stats.h"
#include "op_stats/op_stats_inference.h"
#include "op_stats/op_stats_input.h"
#include "tool.h"

/* StrFormatToPercentage. */
static void pct_prop(struct dt_table *t, const char *key, double v)
{
    if (v >= 0)
        dt_propf(t, key, "%.1f%%", v);
    else
        dt_prop(t, key, "unknown");
}

/* ComputeAnalysisResult + the analysis DataTable. */
static int analysis_table(const struct op_stats *os, struct dt_table *t)
{
    struct op_metrics_db tf;
    struct arena arena;
    const struct op_metrics **top;
    struct op_kernel_group *groups;
    uint32_t ntop, ngroups, i;
    uint64_t num_host = 0, host_self = 0, host_eager = 0, num_dev = 0, dev_self = 0, dev_eager = 0,
             c16 = os->device_db.precision_16_ps, c32 = os->device_db.precision_32_ps;
    double cumulative = 0;
    int gpu = strstr(os->device_type, "GPU") != NULL;

    arena_init(&arena);
    op_db_tf_from_device(&tf, &arena, &os->device_db, 0);
    top = op_db_sorted(&tf, 10, &ntop);
    groups = op_kernels_by_op(os, &ngroups);
    if (tf.oom || top == NULL || groups == NULL) {
        free(top);
        free(groups);
        op_db_free(&tf);
        arena_free(&arena);
        return -ENOMEM;
    }
    for (i = 0; i < os->host_db.nrows; i++) {
        const struct op_metrics *m = &os->host_db.rows[i];
        num_host += m->occurrences;
        if (!op_is_idle(m)) {
            host_self += m->self_time_ps;
            if (m->is_eager)
                host_eager += m->self_time_ps;
        }
    }
    for (i = 0; i < tf.nrows; i++) {
        const struct op_metrics *m = &tf.rows[i];
        num_dev += m->occurrences;
        if (!op_is_idle(m)) {
            dev_self += m->self_time_ps;
            if (m->is_eager)
                dev_eager += m->self_time_ps;
        }
    }
    dt_col(t, "selfTimePercent", "number", "Time (%)");
    dt_col(t, "cumulativeTimePercent", "number", "Cumulative time (%)");
    dt_col(t, "category", "string", "Category");
    dt_col(t, "operation", "string", "Operation");
    if (gpu) {
        dt_col(t, "flopRate", "number", "GFLOPs/Sec");
        dt_col(t, "tcEligibility", "boolean", "TensorCore eligibility");
        dt_col(t, "tcUtilization", "boolean", "Op is using TensorCore");
    } else {
        dt_col(t, "flopRate", "number", "Bf16 Normalized Flop Rate(GFLOPs/Sec)");
    }
    for (i = 0; i < ntop; i++) {
        const struct op_metrics *m = top[i];
        double frac = op_safe_div((double)m->self_time_ps, (double)tf.total_time_ps);
        const struct op_kernel_group *g = op_kernel_group_find(groups, ngroups, m->name);
        cumulative += frac;
        dt_row(t);
        dt_num(t, frac);
        dt_num(t, cumulative);
        dt_str(t, m->category);
        dt_str(t, m->name);
        dt_num(t, op_safe_div(m->flops_v2, (double)m->time_ps / 1e3));
        if (gpu) {
            dt_bool(t, g != NULL && g->is_op_tensor_core_eligible);
            dt_bool(t, g != NULL && g->tensor_core_duration_ns != 0);
        }
    }
    dt_propf(t, "host_trace_level", "%d", os->host_trace_level);
    pct_prop(t, "host_tf_op_percent",
             100.0 * op_safe_div((double)num_host, (double)(num_host + num_dev)));
    pct_prop(t, "device_tf_op_percent",
             100.0 * op_safe_div((double)num_dev, (double)(num_host + num_dev)));
    pct_prop(t, "host_op_time_eager_percent",
             100.0 * op_safe_div((double)host_eager, (double)host_self));
    pct_prop(t, "device_op_time_eager_percent",
             100.0 * op_safe_div((double)dev_eager, (double)dev_self));
    dt_prop(t, "remark_text", "");
    dt_prop(t, "remark_color", "");
    pct_prop(t, "mxu_utilization_percent", os->mxu_utilization_percent);
    pct_prop(t, "hbm_utilization_percent", os->hbm_utilization_percent);
    if (gpu) {
        pct_prop(t, "device_compute_16bit_percent",
                 100.0 * op_safe_div((double)c16, (double)(c16 + c32)));
        pct_prop(t, "device_compute_32bit_percent",
                 100.0 * op_safe_div((double)c32, (double)(c16 + c32)));
    } else {
        /* TPU-only figures; zero for other device types */
        double dev_idle = 0, host_idle = 0, duty = 0, duty_hc = 0;
        if (os->hardware_type == HW_TPU) {
            dev_idle = (1.0 - op_safe_div((double)os->device_db.total_op_time_ps,
                                          (double)os->device_db.total_time_ps)) *
                       100.0;
            host_idle = (1.0 - op_safe_div((double)os->host_db.total_op_time_ps,
                                           (double)os->host_db.total_time_ps)) *
                        100.0;
            duty = op_safe_div((double)os->device_db.busy_time_ps,
                               (double)(os->device_db.busy_time_ps + os->device_db.idle_time_ps)) *
                   100.0;
            duty_hc = op_safe_div(
                          (double)os->device_db.busy_time_hc_ps,
                          (double)(os->device_db.busy_time_hc_ps + os->device_db.idle_time_hc_ps)) *
                      100.0;
        }
        pct_prop(t, "flop_rate_utilization_relative_to_roofline", 0.0);
        pct_prop(t, "memory_bw_utilization_relative_to_hw_limit", 0.0);
        pct_prop(t, "device_idle_time_percent", dev_idle);
        pct_prop(t, "device_duty_cycle_percent", duty);
        pct_prop(t, "device_duty_cycle_high_confidence_percent", duty_hc);
        pct_prop(t, "host_idle_time_percent", host_idle);
    }
    /* AddCommonStats: absl::StrCat of the double, six significant digits */
    if (os->hardware_type == HW_TPU && os->device_db.idle_time_hc_ps > 0)
        dt_propf(t, "idle_time_high_confidence_ps", "%.6g", (double)os->device_db.idle_time_hc_ps);
    free(top);
    free(groups);
    op_db_free(&tf);
    arena_free(&arena);
    return 0;
}

static void run_env_table(const struct op_stats *os, struct dt_table *t)
{
    dt_col(t, "host_id", "string", "host_id");
    dt_col(t, "command_line", "string", "command_line");
    dt_col(t, "start_time", "string", "start_time");
    dt_col(t, "bns_address", "string", "bns_address");
    if (os->host_count >= 0)
        dt_propf(t, "host_count", "%d", os->host_count);
    else
        dt_prop(t, "host_count", "unknown");
    if (os->task_count > 0 && os->host_count > 0)
        dt_propf(t, "task_count", "%d (num tasks per host = %d)", os->task_count,
                 os->task_count / os->host_count);
    else if (os->task_count >= 0)
        dt_propf(t, "task_count", "%d", os->task_count);
    else
        dt_prop(t, "task_count", "unknown");
    dt_prop(t, "device_type", os->device_type);
    if (os->device_core_count >= 0)
        dt_propf(t, "device_core_count", "%d", os->device_core_count);
    else
        dt_prop(t, "device_core_count", "unknown");
    dt_prop(t, "is_training", os->is_training ? "true" : "false");
}

static void tip(struct dt_table *t, const char *type, const char *link, const char *desc)
{
    dt_row(t);
    dt_str(t, type);
    dt_str(t, link);
    dt_str(t, desc);
}

static void recommendation_table(const struct op_stats *os, const struct ip_analysis *a,
                                 struct dt_table *t)
{
    enum hardware_type hw = op_parse_hardware_type(os->device_type);
    const char *dev = op_hardware_type_name(hw);
    uint64_t c16 = os->device_db.precision_16_ps, total = c16 + os->device_db.precision_32_ps;
    char buf[512];

    dt_col(t, "tip_type", "string", "tip_type");
    dt_col(t, "link", "string", "link");
    dt_col(t, "description", "string", "description");
    tip(t, "faq", "Refer to the TF2 Profiler FAQ", "Tool troubleshooting / FAQ");
    tip(t, "host",
        "input_pipeline_analyzer (especially Section 3 for the breakdown of input operations on "
        "the Host)",
        "Next steps for reducing the Host time");
    tip(t, "host",
        "trace_viewer (look at the activities on the timeline of each Host Thread near the "
        "bottom of the trace view)",
        "Next steps for reducing the Host time");
    snprintf(buf, sizeof(buf), "%s (identify the time-consuming operations executed on the %s)",
             hw == HW_TPU ? "op_profile" : "framework_op_stats", dev);
    tip(t, "device", buf, "Next steps for reducing the Device time");
    snprintf(buf, sizeof(buf),
             "trace_viewer (look at the activities on the timeline of each %s in the trace view)",
             hw == HW_TPU ? "TPU core" : dev);
    tip(t, "device", buf, "Next steps for reducing the Device time");
    tip(t, "doc",
        "<a href=\"https://www.tensorflow.org/guide/data_performance_analysis\" "
        "target=\"_blank\">Analyze tf.data performance with the TF Profiler</a>",
        "Other useful resources");
    tip(t, "doc",
        "<a href=\"https://www.tensorflow.org/guide/data_performance\" target=\"_blank\">Better "
        "performance with the tf.data API</a>",
        "Other useful resources");
    dt_prop(t, "bottleneck", a->input_classification);
    dt_prop(t, "statement", a->input_statement);
    dt_prop(t, "kernel_launch_bottleneck", a->kernel_launch_classification);
    dt_prop(t, "kernel_launch_statement", a->kernel_launch_statement);
    dt_prop(t, "all_other_bottleneck", a->all_other_classification);
    dt_prop(t, "all_other_statement", a->all_other_statement);
    buf[0] = '\0';
    if (total > 0) {
        double p16 = 100.0 * (double)c16 / (double)total;
        if (p16 < 10)
            snprintf(buf, sizeof(buf),
                     "Only %.1f%% of device computation is 16 bit. So you might want to replace "
                     "more 32-bit Ops by 16-bit Ops to improve performance (if the reduced "
                     "accuracy is acceptable).",
                     p16);
    }
    dt_prop(t, "precision_statement", buf);
    dt_prop(t, "device_collectives_bottleneck", a->device_collectives_classification);
    dt_prop(t, "device_collectives_statement", a->device_collectives_statement);
    if (strcmp(a->input_classification, "host") == 0)
        dt_prop(t, "non_bottleneck_tip_types", "device");
    else if (strcmp(a->input_classification, "device") == 0)
        dt_prop(t, "non_bottleneck_tip_types", "host");
    else
        dt_prop(t, "non_bottleneck_tip_types", "");
}

/* AddLatencyRow: the times in ms. */
static void latency_row(struct dt_table *t, const char *label, const struct inf_breakdown *b)
{
    dt_row(t);
    dt_str(t, label);
    dt_num(t, b->host_us / 1000);
    dt_num(t, b->device_us / 1000);
    dt_num(t, b->communication_us / 1000);
    dt_num(t, b->total_us / 1000);
}

/* GenerateInferenceLatencyDataTable. Rows only for a run that is not
 * training (overview_page_processor.cc); XProf's "Avg" row shows the first
 * breakdown, the 50th percentile, and the real average is never shown. */
static int latency_table(struct tool_ctx *ctx, const struct op_stats *os, struct dt_table *t)
{
    const struct inference_stats *st;
    struct inference_latency lat;
    char label[32];
    uint32_t i;
    int rc;

    dt_col(t, "percentile", "string", "percentile");
    dt_col(t, "hostTimeMs", "number", "Host time (in ms)");
    dt_col(t, "deviceTimeMs", "number", "Device time (in ms)");
    dt_col(t, "communicationTimeMs", "number", "Host-device communication time (in ms)");
    dt_col(t, "totalTimeMs", "number", "Total latency (in ms)");
    if (os->is_training)
        return 0;
    if ((rc = snapshot_inference_stats(ctx->snap, ctx->host, &st, ctx->err)) != 0)
        return rc;
    if ((rc = inference_latency(st, &lat)) != 0)
        return xp_err_set(ctx->err, rc, "overview_page: out of memory");
    if (lat.nbreakdowns > 0)
        latency_row(t, "Avg", &lat.breakdowns[0]);
    for (i = 0; i < INF_NPERCENTILES && lat.nbreakdowns > 0; i++) {
        snprintf(label, sizeof(label), "%.1f%%", lat.percentiles[i]);
        latency_row(t, label, &lat.breakdowns[i]);
    }
    return 0;
}

static int str_cmp(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* PopulateOverviewDiagnostics. */
static int diagnostics_table(const struct op_stats *os, const struct ip_analysis *a,
                             struct dt_table *t)
{
    uint32_t ne = os->nerrors, nw = os->nwarnings + a->nwarnings, i;
    const char **errors = malloc((ne + 1) * sizeof(*errors));
    const char **warnings = malloc((nw + 1) * sizeof(*warnings));

    if (errors == NULL || warnings == NULL) {
        free(errors);
        free(warnings);
        return -ENOMEM;
    }
    if (os->nerrors > 0)
        memcpy(errors, os->errors, os->nerrors * sizeof(*errors));
    if (ne > 1)
        xp_qsort(errors, ne, sizeof(*errors), str_cmp);
    if (ne == 0 && strcmp(os->device_type, "CPU") != 0 && os->device_core_count <= 0)
        errors[ne++] = "No TensorCore device trace was collected. This might happen if your job "
                       "hadn't been run on the device when sampling was turned on. You could try "
                       "the sampling again later.";
    if (os->nwarnings > 0)
        memcpy(warnings, os->warnings, os->nwarnings * sizeof(*warnings));
    for (i = 0; i < a->nwarnings; i++)
        warnings[os->nwarnings + i] = a->warnings[i];
    ip_diagnostics_table(t, warnings, nw, errors, ne);
    free(errors);
    free(warnings);
    return 0;
}

static int overview_produce(struct tool_ctx *ctx, struct out *o)
{
    const struct op_stats *os;
    struct ip_analysis a;
    struct dt_table t[6];
    int rc, i;

    if ((rc = snapshot_op_stats(ctx->snap, ctx->host, &os, ctx->err)) != 0)
        return rc;
    if ((rc = ip_analyze(os, &a)) != 0)
        return xp_err_set(ctx->err, rc, "overview_page: out of memory");
    for (i = 0; i < 6; i++)
        dt_init(&t[i]);
    rc = analysis_table(os, &t[0]);
    ip_step_table(&a, &t[1]);
    run_env_table(os, &t[2]);
    recommendation_table(os, &a, &t[3]);
    if (rc == 0 && (rc = latency_table(ctx, os, &t[4])) != 0) {
        for (i = 0; i < 6; i++)
            dt_free(&t[i]);
        ip_free(&a);
        return rc;
    }
    if (rc == 0)
        rc = diagnostics_table(os, &a, &t[5]);
    for (i = 0; rc == 0 && i < 6; i++) {
        if (dt_failed(&t[i]))
            rc = -ENOMEM;
    }
    if (rc == 0) {
        out_putc(o, '[');
        for (i = 0; i < 5; i++) {
            dt_write_json(&t[i], o);
            out_putc(o, ',');
        }
        out_puts(o, " {},");
        dt_write_json(&t[5], o);
        out_putc(o, ']');
    }
    for (i = 0; i < 6; i++)
        dt_free(&t[i]);
    ip_free(&a);
    if (rc != 0)
        return xp_err_set(ctx->err, rc, "overview_page: out of memory");
    return 0;
}

const struct tool tool_overview_page_json = {
    .file = "overview_page.json",
    .tag = "overview_page",
    .scope = TOOL_RUN | TOOL_HOST,
    .listed = tool_listed_xplane,
    .produce = overview_produce,
};
