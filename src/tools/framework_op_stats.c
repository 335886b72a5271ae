/*
 * framework_op_stats.c - framework_op_stats.json (two tables: with and
 * without IDLE) and framework_op_stats.csv (the first one), as XProf's
 * tensorflow/framework op stats (xprof/convert/op_stats_to_tf_stats.cc).
 *
 * Device rows come first (top 500 by self time), then host rows (top 500);
 * the rank keeps counting from device into host rows, percentages are
 * fractions, and the FLOP-rate column label says FLOPs/s while holding
 * GFLOP/s: XProf's quirks, kept.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "out/datatable.h"
#include "op_stats/op_stats.h"
#include "xplane/tfop.h"
#include "tool.h"

#define MAX_OPS 500

struct fw_ctx {
    const struct op_stats *os;
    struct op_kernel_group *groups;
    uint32_t ngroups;
    int gpu;
    int training;
    double rank;
    double device_cum;
    double host_cum;
};

static void add_record(struct fw_ctx *c, struct dt_table *t, const struct op_metrics *m,
                       int on_device, double total_us)
{
    struct op_roofline r;
    double total = (double)m->time_ps / 1e6, self = (double)m->self_time_ps / 1e6;
    double dev_frac = 0, host_frac = 0, tc = 0;

    op_roofline(m, c->os, &r);
    c->rank += 1;
    if (on_device) {
        const struct op_kernel_group *g = op_kernel_group_find(c->groups, c->ngroups, m->name);
        dev_frac = op_safe_div(self, total_us);
        c->device_cum += dev_frac;
        if (g != NULL)
            tc = op_safe_div((double)g->tensor_core_duration_ns, (double)g->total_duration_ns);
    } else {
        host_frac = op_safe_div(self, total_us);
        c->host_cum += host_frac;
    }
    dt_row(t);
    dt_num(t, c->rank);
    dt_str(t, on_device ? "Device" : "Host");
    dt_str(t, m->category);
    dt_str(t, m->name);
    dt_num(t, (double)m->occurrences);
    dt_num(t, total);
    dt_num(t, op_safe_div(total, (double)m->occurrences));
    dt_num(t, self);
    dt_num(t, op_safe_div(self, (double)m->occurrences));
    dt_num(t, dev_frac);
    dt_num(t, on_device ? c->device_cum : 0.0);
    dt_num(t, host_frac);
    dt_num(t, on_device ? 0.0 : c->host_cum);
    dt_num(t, r.measured_flop_rate);
    dt_num(t, r.model_flop_rate);
    dt_num(t, r.measured_memory_bw);
    dt_num(t, r.operational_intensity);
    if (c->gpu)
        dt_num(t, tc);
    dt_str(t, r.bound_by);
    dt_str(t, m->is_eager ? "Eager" : "Function");
    if (!c->training &&
        tfop_is_training_op(m->name, strlen(m->name), m->category, strlen(m->category)))
        c->training = 1;
}

static int side(struct fw_ctx *c, struct dt_table *t, const struct op_metrics_db *db, int on_device,
                int exclude_idle)
{
    uint32_t n, i;
    const struct op_metrics **rows = op_db_sorted(db, MAX_OPS, &n);
    double total_us = (double)(exclude_idle ? db->total_op_time_ps : db->total_time_ps) / 1e6;

    if (rows == NULL)
        return -ENOMEM;
    for (i = 0; i < n; i++) {
        if (exclude_idle && op_is_idle(rows[i]))
            continue;
        add_record(c, t, rows[i], on_device, total_us);
    }
    free(rows);
    return 0;
}

static int stats_table(struct fw_ctx *c, const struct op_metrics_db *device, int exclude_idle,
                       struct dt_table *t)
{
    int rc;

    dt_col(t, "rank", "number", "Rank");
    dt_col(t, "host_or_device", "string", "Host/device");
    dt_col(t, "type", "string", "Operation Type");
    dt_col(t, "operation", "string", "Operation Name");
    dt_col(t, "occurrences", "number", "#Occurrences");
    dt_col(t, "total_time", "number", "Total time (us)");
    dt_col(t, "avg_time", "number", "Avg. time (us)");
    dt_col(t, "total_self_time", "number", "Total self-time (us)");
    dt_col(t, "avg_self_time", "number", "Avg. self-time (us)");
    dt_col(t, "device_total_self_time_percent", "number", "Total self-time on Device (%)");
    dt_col(t, "device_cumulative_total_self_time_percent", "number",
           "Cumulative total-self time on Device (%)");
    dt_col(t, "host_total_self_time_percent", "number", "Total self-time on Host (%)");
    dt_col(t, "Host_cumulative_total_self_time_percent", "number",
           "Cumulative total-self time on Host (%)");
    dt_col(t, "measured_flop_rate", "number", "Normalized FLOP Rate (FLOPs/s)");
    dt_col(t, "model_flop_rate", "number", "Model FLOP Rate (GFLOP/s)");
    dt_col(t, "measured_memory_bw", "number", "Measured Memory BW (GBytes/Sec)");
    dt_col(t, "operational_intensity", "number", "Operational Intensity (FLOPs/Byte)");
    if (c->gpu)
        dt_col(t, "gpu_tensorcore_utilization", "number", "GPU TensorCore utilization");
    dt_col(t, "bound_by", "string", "Bound by");
    dt_col(t, "eager", "string", "Execution mode");
    c->rank = c->device_cum = c->host_cum = 0;
    c->training = 0;
    if ((rc = side(c, t, device, 1, exclude_idle)) != 0 ||
        (rc = side(c, t, &c->os->host_db, 0, exclude_idle)) != 0)
        return rc;
    dt_prop(t, "task_type", c->training ? "Training" : "Inference");
    dt_prop(t, "architecture_type", "Unknown");
    return dt_failed(t) ? -ENOMEM : 0;
}

static int produce(struct tool_ctx *ctx, struct out *o, int csv)
{
    struct fw_ctx c;
    struct op_metrics_db device;
    struct arena arena;
    struct dt_table t[2];
    int rc, i;

    memset(&c, 0, sizeof(c));
    if ((rc = snapshot_op_stats(ctx->snap, ctx->host, &c.os, ctx->err)) != 0)
        return rc;
    c.gpu = strstr(c.os->device_type, "GPU") != NULL;
    c.groups = op_kernels_by_op(c.os, &c.ngroups);
    arena_init(&arena);
    op_db_tf_from_device(&device, &arena, &c.os->device_db, 1);
    dt_init(&t[0]);
    dt_init(&t[1]);
    rc = c.groups == NULL || device.oom ? -ENOMEM : 0;
    if (rc == 0)
        rc = stats_table(&c, &device, 0, &t[0]);
    if (rc == 0 && !csv)
        rc = stats_table(&c, &device, 1, &t[1]);
    if (rc == 0) {
        if (csv) {
            dt_write_csv(&t[0], o);
        } else {
            dt_write_json_list(t, 2, o);
        }
    }
    for (i = 0; i < 2; i++)
        dt_free(&t[i]);
    op_db_free(&device);
    arena_free(&arena);
    free(c.groups);
    if (rc != 0)
        return xp_err_set(ctx->err, rc, "framework_op_stats: out of memory");
    return 0;
}

static int framework_op_stats_json(struct tool_ctx *ctx, struct out *o)
{
    return produce(ctx, o, 0);
}

static int framework_op_stats_csv(struct tool_ctx *ctx, struct out *o)
{
    return produce(ctx, o, 1);
}

const struct tool tool_framework_op_stats_json = {
    .file = "framework_op_stats.json",
    .tag = "framework_op_stats",
    .scope = TOOL_RUN | TOOL_HOST,
    .listed = tool_listed_xplane,
    .produce = framework_op_stats_json,
};

const struct tool tool_framework_op_stats_csv = {
    .file = "framework_op_stats.csv",
    .tag = "framework_op_stats",
    .scope = TOOL_RUN | TOOL_HOST,
    .listed = tool_listed_xplane,
    .produce = framework_op_stats_csv,
};
