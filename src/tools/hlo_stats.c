/*
 * hlo_stats.c - hlo_stats.json (XProf's HLO op stats DataTable) and
 * hlo_stats.csv (its data_csv form), from the device op metrics of op_stats
 * (xprof/convert/op_stats_to_hlo_stats.cc).
 *
 * Every device op with occurrences, sorted by self time (then name), with
 * no cap; rank and self-time shares chain from a rank-0 sentinel over the
 * device's total time (IDLE included). The HLO op name is the expression's
 * text before " = " without its "%", the expression itself the op's long
 * name (its name when there is none). XProf's SparseCore children rows (TPU
 * ops with fused SparseCore metrics) are not produced: op_stats keeps no
 * children.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "out/datatable.h"
#include "op_stats/op_stats.h"
#include "tool.h"

static const char *core_type_name(int t)
{
    return t == OP_CORE_TENSOR ? "TensorCore" : t == OP_CORE_SPARSE ? "SparseCore" : "";
}

/* GetHloOpNameFromExpression. */
static void op_name_cell(struct dt_table *t, const char *expr)
{
    const char *eq = strstr(expr, " = ");
    size_t n = eq != NULL ? (size_t)(eq - expr) : strlen(expr);

    if (n > 0 && expr[0] == '%') {
        expr++;
        n--;
    }
    dt_strn(t, expr, n);
}

static void columns(struct dt_table *t)
{
    dt_col(t, "rank", "number", "Rank");
    dt_col(t, "program_id", "string", "Program id");
    dt_col(t, "category", "string", "HLO op category");
    dt_col(t, "hlo_op_name", "string", "HLO op name");
    dt_col(t, "hlo_op_expression", "string", "HLO op text");
    dt_col(t, "tf_op_name", "string", "Framework op name");
    dt_col(t, "occurrences", "number", "#Occurrences");
    dt_col(t, "total_time", "number", "Total time (us)");
    dt_col(t, "avg_time", "number", "Avg. time (us)");
    dt_col(t, "total_self_time", "number", "Total self time (us)");
    dt_col(t, "avg_self_time", "number", "Avg. self time (us)");
    dt_col(t, "total_self_time_percent", "number", "Total self time (%)");
    dt_col(t, "cumulative_total_self_time_percent", "number", "Cumulative total self time (%)");
    dt_col(t, "dma_stall_percent", "number", "%time stalled by DMA");
    dt_col(t, "model_flop_rate", "number", "Model GFLOP/s");
    dt_col(t, "normalized_flop_rate", "number", "Normalized GFLOP/s");
    dt_col(t, "measured_memory_bw", "number", "Measured memory BW (GiB/s)");
    dt_col(t, "hbm_bw", "number", "HBM BW (GiB/s)");
    dt_col(t, "cmem_read_bw", "number", "CMEM Read BW (GiB/s)");
    dt_col(t, "cmem_write_bw", "number", "CMEM Write BW (GiB/s)");
    dt_col(t, "operational_intensity", "number", "Operational intensity (FLOPS/Byte)");
    dt_col(t, "bound_by", "string", "Bound by");
    dt_col(t, "hlo_rematerialization", "string", "Rematerialization");
    dt_col(t, "outside_compilation", "string", "Outside Compilation");
    dt_col(t, "autotuned", "string", "Autotuned");
    dt_col(t, "source_info", "string", "Source Info");
    dt_col(t, "core_type", "string", "TPU core type");
    dt_col(t, "parent_op_name", "string", "Parent op name");
    dt_col(t, "vdd_energy", "number", "VDD Energy (J)");
}

/* One HloStatsRecord as its row. *cum carries the cumulative fraction. */
static int add_row(struct dt_table *t, const struct op_stats *os, const struct op_metrics *m,
                   double rank, double total_us, double *cum)
{
    struct op_roofline r;
    double total = (double)m->time_ps / 1e6, self = (double)m->self_time_ps / 1e6;
    double frac = op_safe_div(self, total_us);
    const char *expr = m->long_name[0] != '\0' ? m->long_name : m->name;
    char pid[24], *src = op_source_info_html(m);

    if (src == NULL)
        return -ENOMEM;
    op_roofline(m, os, &r);
    *cum += frac;
    snprintf(pid, sizeof(pid), "%llu", (unsigned long long)m->hlo_module_id);
    dt_row(t);
    dt_num(t, rank);
    dt_str(t, pid);
    dt_str(t, m->category);
    op_name_cell(t, expr);
    dt_str(t, expr);
    dt_str(t, m->provenance);
    dt_num(t, (double)m->occurrences);
    dt_num(t, total);
    dt_num(t, op_safe_div(total, (double)m->occurrences));
    dt_num(t, self);
    dt_num(t, op_safe_div(self, (double)m->occurrences));
    dt_num(t, frac * 100.0);
    dt_num(t, *cum * 100.0);
    dt_num(t, op_safe_div((double)m->dma_stall_ps, (double)m->time_ps));
    dt_num(t, r.model_flop_rate);
    dt_num(t, r.measured_flop_rate);
    dt_num(t, r.measured_memory_bw);
    dt_num(t, r.hbm_bw);
    dt_num(t, r.cmem_read_bw);
    dt_num(t, r.cmem_write_bw);
    dt_num(t, r.operational_intensity);
    dt_str(t, r.bound_by);
    dt_str(t, op_is_rematerialization(m) ? "Yes" : "No");
    dt_str(t, op_is_outside_compilation(m) ? "Yes" : "No");
    dt_str(t, m->autotuned ? "Yes" : "No");
    dt_str(t, src);
    dt_str(t, core_type_name(m->core_type));
    dt_str(t, "");
    dt_num(t, m->vdd_energy_j);
    free(src);
    return 0;
}

static int produce(struct tool_ctx *ctx, struct out *o, int csv)
{
    const struct op_stats *os;
    const struct op_metrics **rows;
    struct dt_table t;
    uint32_t n, i;
    double total_us, cum = 0, rank = 0;
    int rc = snapshot_op_stats(ctx->snap, ctx->host, &os, ctx->err);

    if (rc != 0)
        return rc;
    rows = op_db_sorted(&os->device_db, 0, &n);
    if (rows == NULL)
        return xp_err_set(ctx->err, -ENOMEM, "hlo_stats: out of memory");
    total_us = (double)os->device_db.total_time_ps / 1e6;
    dt_init(&t);
    columns(&t);
    for (i = 0; rc == 0 && i < n; i++) {
        if (rows[i]->occurrences == 0)
            continue;
        rank += 1;
        rc = add_row(&t, os, rows[i], rank, total_us, &cum);
    }
    free(rows);
    if (rank == 0)
        tool_note_no_hlo(ctx, csv ? "hlo_stats.csv" : "hlo_stats.json");
    else
        tool_note_hlo_texts(ctx, csv ? "hlo_stats.csv" : "hlo_stats.json");
    if (rc == 0 && dt_failed(&t))
        rc = -ENOMEM;
    if (rc == 0) {
        if (csv)
            dt_write_csv(&t, o);
        else
            dt_write_json(&t, o);
    }
    dt_free(&t);
    if (rc != 0)
        return xp_err_set(ctx->err, rc, "hlo_stats: out of memory");
    return 0;
}

static int hlo_stats_json(struct tool_ctx *ctx, struct out *o)
{
    return produce(ctx, o, 0);
}

static int hlo_stats_csv(struct tool_ctx *ctx, struct out *o)
{
    return produce(ctx, o, 1);
}

const struct tool tool_hlo_stats_json = {
    .file = "hlo_stats.json",
    .tag = "hlo_stats",
    .scope = TOOL_RUN | TOOL_HOST,
    .listed = tool_listed_xplane,
    .produce = hlo_stats_json,
};

const struct tool tool_hlo_stats_csv = {
    .file = "hlo_stats.csv",
    .tag = "hlo_stats",
    .scope = TOOL_RUN | TOOL_HOST,
    .listed = tool_listed_xplane,
    .produce = hlo_stats_csv,
};
