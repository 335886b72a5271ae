/*
 * roofline_model.json - XProf's roofline model: [roofline table, diagnostics]
 * (xprof/convert/op_stats_to_roofline_model.cc, roofline_model_processor.cc).
 *
 * The records are built twice, with and without infeed/outfeed ops, and the
 * two lists concatenated. Each list: a "Program" record summing the
 * innermost ops (calls, conditionals, whiles and megacore fusions are
 * skipped) over the device's total time, then the top 1,000 ops by self
 * time; then an "Average" program record over the complete steps
 * (hlo_metrics_db_complete_steps_only, its times divided by the number of
 * steps) and one program record per step (the step's hlo_metrics_db). On
 * TPU those come from op_stats' per-step sums (struct op_db_sums: what the
 * program record takes from the step's TensorCore op dbs, made in
 * op_stats_tpu_steps.c and combined across hosts); a TPU run without steps
 * has the Average of an empty db, as XProf's. On GPU the per-step op
 * databases XProf fills are empty, so those records are zeros, as XProf's
 * are.
 *
 * GPU tables have the SHM/L1 columns, other devices the CMEM/VMEM ones;
 * `p` holds the peaks and ridge points as absl::StrCat prints doubles.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "out/datatable.h"
#include "op_stats/op_profile_tree.h"
#include "op_stats/op_stats.h"
#include "tool.h"

#define MAX_RECORDS 1000

/* RooflineModelDatabase's header. */
struct roof_db {
    int gpu;                   /* device type contains "GPU" */
    double peak_flop_rate;     /* GFLOP/s */
    double peak_hbm_bw;        /* GiB/s */
    double peak_cmem_read_bw;  /* GiB/s, TPU with CMEM */
    double peak_cmem_write_bw; /* GiB/s */
    double peak_vmem_read_bw;  /* GiB/s, GPU: SRAM read; TPU merged VMEM */
    double peak_vmem_write_bw; /* GiB/s */
    int megacore, has_cmem, has_merged_vmem;
};

enum rec_type { REC_ALL = 1, REC_AVERAGE_STEP = 3, REC_PER_STEP = 4 };

struct roof_ctx {
    const struct op_stats *os;
    struct roof_db db;
    struct dt_table *t;
};

static void init_db(const struct op_stats *os, struct roof_db *db)
{
    memset(db, 0, sizeof(*db));
    db->gpu = strstr(os->device_type, "GPU") != NULL;
    db->peak_flop_rate = os->peak_tflops * 1e3;
    db->peak_hbm_bw = op_giga_to_gibi(op_peak_bw(os, 0));
    if (os->hardware_type == HW_TPU) {
        db->megacore = os->has_megacore;
        db->has_cmem = os->has_cmem;
        db->has_merged_vmem = os->has_merged_vmem;
        if (db->has_cmem) {
            db->peak_cmem_read_bw = op_giga_to_gibi(op_peak_bw(os, 3));
            db->peak_cmem_write_bw = op_giga_to_gibi(op_peak_bw(os, 4));
        } else if (db->has_merged_vmem) {
            db->peak_vmem_read_bw = op_giga_to_gibi(op_peak_bw(os, 5));
            db->peak_vmem_write_bw = op_giga_to_gibi(op_peak_bw(os, 6));
        }
    } else {
        db->has_merged_vmem = 1;
        db->peak_vmem_read_bw = op_giga_to_gibi(op_peak_bw(os, 1));
        db->peak_vmem_write_bw = op_giga_to_gibi(op_peak_bw(os, 2));
    }
}

/* IsInfeedOrOutfeed. */
static int is_in_out_feed(const char *category)
{
    return op_is_infeed_or_outfeed(category, strlen(category));
}

/* MayHaveInnerOps. */
static int may_have_inner_ops(const char *category)
{
    return op_may_have_inner_ops(category, strlen(category));
}

static void columns(struct roof_ctx *c)
{
    struct dt_table *t = c->t;

    dt_col(t, "step", "string", "Step");
    dt_col(t, "rank", "number", "Rank");
    dt_col(t, "category", "string", "Category");
    dt_col(t, "operation", "string", "Operation");
    dt_col(t, "occurrences", "number", "# Occurrences");
    dt_col(t, "total_time", "number", "Total Time (us)");
    dt_col(t, "avg_time", "number", "Avg. time (us)");
    dt_col(t, "total_self_time", "number", "Total self time (us)");
    dt_col(t, "avg_self_time", "number", "Avg. self time (us)");
    dt_col(t, "total_self_time_percent", "number", "Total self time (%)");
    dt_col(t, "cumulative_total_self_time_percent", "number", "Cumulative total self time (%)");
    if (!c->db.gpu)
        dt_col(t, "dma_stall_percent", "number", "%time stalled by DMA");
    dt_col(t, "measured_flop_rate", "number", "Normalized FLOP Rate (GFLOP/s)");
    dt_col(t, "model_flop_rate", "number", "Model FLOP Rate (GFLOP/s)");
    dt_col(t, "measured_memory_bw", "number", "Memory BW (GiB/s)");
    dt_col(t, "hbm_bw", "number", "HBM BW (GiB/s)");
    if (c->db.gpu) {
        dt_col(t, "vmem_write_bw", "number", "SHM/L1 BW (GiB/s)");
    } else {
        dt_col(t, "cmem_read_bw", "number", "CMEM Read BW (GiB/s)");
        dt_col(t, "cmem_write_bw", "number", "CMEM Write BW (GiB/s)");
        dt_col(t, "vmem_read_bw", "number", "VMEM Read BW (GiB/s)");
        dt_col(t, "vmem_write_bw", "number", "VMEM Write BW (GiB/s)");
    }
    dt_col(t, "operational_intensity", "number", "Operational Intensity (FLOP/Byte)");
    dt_col(t, "hbm_operational_intensity", "number", "HBM Operational Intensity (FLOP/Byte)");
    if (c->db.gpu) {
        dt_col(t, "vmem_write_operational_intensity", "number",
               "SHM/L1 Operational Intensity (FLOP/Byte)");
    } else {
        dt_col(t, "cmem_read_operational_intensity", "number",
               "CMEM Read Operational Intensity (FLOP/Byte)");
        dt_col(t, "cmem_write_operational_intensity", "number",
               "CMEM Write Operational Intensity (FLOP/Byte)");
        dt_col(t, "vmem_read_operational_intensity", "number",
               "VMEM Read Operational Intensity (FLOP/Byte)");
        dt_col(t, "vmem_write_operational_intensity", "number",
               "VMEM Write Operational Intensity (FLOP/Byte)");
    }
    dt_col(t, "bottleneck_operational_intensity", "number",
           "Bottleneck Operational Intensity (FLOP/Byte)");
    dt_col(t, "bound_by", "string", "Bound by");
    dt_col(t, "total_time_per_core", "number", "Total Time per core (us)");
    dt_col(t, "total_time_in_percentage", "number", "Total Time (%)");
    dt_col(t, "optimal_flop_rate", "number", "Optimal FLOP Rate (GFLOP/s)");
    dt_col(t, "roofline_efficiency", "number", "Roofline efficiency (%)");
    dt_col(t, "compute_efficiency", "number", "FLOP Rate / Peak (%)");
    dt_col(t, "max_mem_bw_utilization", "number",
           "Max memory BW utilization (among supported memories) (%)");
    dt_col(t, "include_infeed_outfeed", "boolean", "Include Infeed/Outfeed");
    dt_col(t, "hlo_module_id", "string", "Program ID");
    dt_col(t, "source_info", "string", "Source Info");
}

static double max2(double a, double b)
{
    return a > b ? a : b;
}

/* ConvertOpMetricsToRooflineModelRecord and its table row. rank, frac and
 * cum are the record's rank and self-time fractions. */
static int add_record(struct roof_ctx *c, const struct op_metrics *m, enum rec_type type,
                      uint32_t step, uint64_t total_time_ps, int include, double rank, double frac,
                      double cum)
{
    const struct roof_db *db = &c->db;
    struct dt_table *t = c->t;
    struct op_roofline r;
    double total_us = (double)m->time_ps / 1e6, self_us = (double)m->self_time_ps / 1e6;
    double avg_us = op_safe_div(total_us, (double)m->occurrences);
    double avg_self_us = op_safe_div(self_us, (double)m->occurrences);
    double cmem_wr, cmem_rd, vmem_rd, vmem_wr, flops_u, hbm_u, mem_u, eff;
    char label[24], pid[24];
    char *src = op_source_info_html(m);

    if (src == NULL)
        return -ENOMEM;
    if (type == REC_AVERAGE_STEP) {
        total_us = op_safe_div(total_us, (double)c->os->nsteps);
        self_us = op_safe_div(self_us, (double)c->os->nsteps);
    }
    op_roofline(m, c->os, &r);
    cmem_wr = db->has_cmem ? op_safe_div(r.cmem_write_bw, db->peak_cmem_write_bw) : 0;
    cmem_rd = db->has_cmem ? op_safe_div(r.cmem_read_bw, db->peak_cmem_read_bw) : 0;
    vmem_rd = db->has_merged_vmem ? op_safe_div(r.vmem_read_bw, db->peak_vmem_read_bw) : 0;
    vmem_wr = db->has_merged_vmem ? op_safe_div(r.vmem_write_bw, db->peak_vmem_write_bw) : 0;
    flops_u = op_safe_div(r.measured_flop_rate, db->peak_flop_rate);
    hbm_u = op_safe_div(r.hbm_bw, db->peak_hbm_bw);
    mem_u = max2(max2(max2(cmem_wr, cmem_rd), max2(hbm_u, vmem_wr)), vmem_rd);
    eff = max2(mem_u, flops_u);

    if (type == REC_ALL)
        snprintf(label, sizeof(label), "Total");
    else if (type == REC_AVERAGE_STEP)
        snprintf(label, sizeof(label), "Average");
    else
        snprintf(label, sizeof(label), "%u", step);
    snprintf(pid, sizeof(pid), "%llu", (unsigned long long)m->hlo_module_id);
    dt_row(t);
    dt_str(t, label);
    dt_num(t, rank);
    dt_str(t, m->category);
    dt_str(t, m->name);
    dt_num(t, (double)m->occurrences);
    dt_num(t, total_us);
    dt_num(t, avg_us);
    dt_num(t, self_us);
    dt_num(t, avg_self_us);
    dt_num(t, frac);
    dt_num(t, cum);
    if (!db->gpu)
        dt_num(t, op_safe_div((double)m->dma_stall_ps, (double)m->time_ps));
    dt_num(t, r.measured_flop_rate);
    dt_num(t, r.model_flop_rate);
    dt_num(t, r.measured_memory_bw);
    dt_num(t, r.hbm_bw);
    if (db->gpu) {
        dt_num(t, r.vmem_write_bw);
    } else {
        dt_num(t, r.cmem_read_bw);
        dt_num(t, r.cmem_write_bw);
        dt_num(t, r.vmem_read_bw);
        dt_num(t, r.vmem_write_bw);
    }
    dt_num(t, r.operational_intensity);
    dt_num(t, r.hbm_operational_intensity);
    if (db->gpu) {
        dt_num(t, r.vmem_write_oi);
    } else {
        dt_num(t, r.cmem_read_oi);
        dt_num(t, r.cmem_write_oi);
        dt_num(t, r.vmem_read_oi);
        dt_num(t, r.vmem_write_oi);
    }
    dt_num(t, r.bottleneck_operational_intensity);
    dt_str(t, r.bound_by);
    dt_num(t, op_safe_div(total_us, (double)c->os->device_core_count));
    dt_num(t, op_safe_div((double)m->time_ps, (double)total_time_ps));
    dt_num(t, op_safe_div(r.measured_flop_rate, eff));
    dt_num(t, eff);
    dt_num(t, flops_u);
    dt_num(t, mem_u);
    dt_bool(t, include);
    dt_str(t, pid);
    dt_str(t, src);
    free(src);
    return 0;
}

/* The Program op of GenerateRooflineModelProgramRecord, no sums yet. */
static void program_op(struct op_metrics *p)
{
    memset(p, 0, sizeof(*p));
    p->name = p->category = "Program";
    p->provenance = p->deduplicated_name = p->long_name = p->source_file = p->stack_frame = "";
    p->occurrences = 1;
}

/* s added to the Program op. */
static void program_add(struct op_metrics *p, const struct op_sums *s)
{
    p->flops += s->flops;
    p->flops_v2 += s->flops_v2;
    p->model_flops += s->model_flops;
    p->model_flops_v2 += s->model_flops_v2;
    p->bytes_accessed += s->bytes_accessed;
    op_mem_combine(p->mem, &p->nmem, s->mem, s->nmem);
}

/* GenerateRooflineModelProgramRecord over a db kept as sums (NULL: an
 * empty db). */
static int program_record_sums(struct roof_ctx *c, const struct op_db_sums *db, enum rec_type type,
                               uint32_t step, int include)
{
    struct op_metrics p;
    uint64_t total = db != NULL ? db->total_time_ps : 0;

    program_op(&p);
    if (db != NULL) {
        program_add(&p, &db->ops);
        if (include)
            program_add(&p, &db->feed);
        else
            total -= db->feed.time_ps;
    }
    p.time_ps = total;
    return add_record(c, &p, type, step, p.time_ps, include, 0, 0, 0);
}

/* GenerateRooflineModelProgramRecord over db. */
static int program_record(struct roof_ctx *c, const struct op_metrics_db *db, enum rec_type type,
                          uint32_t step, int include)
{
    struct op_metrics p;
    uint64_t feed = 0, total = db->total_time_ps;
    uint32_t i;

    program_op(&p);
    for (i = 0; i < db->nrows; i++) {
        const struct op_metrics *m = &db->rows[i];
        if (may_have_inner_ops(m->category))
            continue;
        if (!include && is_in_out_feed(m->category)) {
            feed += m->time_ps;
            continue;
        }
        p.flops += m->flops;
        p.flops_v2 += m->flops_v2;
        p.model_flops += m->model_flops;
        p.model_flops_v2 += m->model_flops_v2;
        p.bytes_accessed += m->bytes_accessed;
        op_db_combine_mem(&p, m);
    }
    p.time_ps = total - feed;
    return add_record(c, &p, type, step, p.time_ps, include, 0, 0, 0);
}

/* ConvertOpMetricsDbToRooflineModelRecords over the device db. */
static int op_records(struct roof_ctx *c, int include)
{
    const struct op_metrics_db *db = &c->os->device_db;
    const struct op_metrics **rows;
    uint64_t feed = 0, total;
    uint32_t n, i;
    double rank = 0, cum = 0, total_us;
    int rc = program_record(c, db, REC_ALL, 0, include);

    if (rc != 0)
        return rc;
    for (i = 0; !include && i < db->nrows; i++) {
        if (is_in_out_feed(db->rows[i].category))
            feed += db->rows[i].time_ps;
    }
    total = db->total_time_ps - feed;
    total_us = (double)total / 1e6;
    rows = op_db_sorted(db, MAX_RECORDS, &n);
    if (rows == NULL)
        return -ENOMEM;
    for (i = 0; rc == 0 && i < n; i++) {
        double frac;
        if (rows[i]->occurrences == 0 || (!include && is_in_out_feed(rows[i]->category)))
            continue;
        frac = op_safe_div((double)rows[i]->self_time_ps / 1e6, total_us);
        rank += 1;
        cum += frac;
        rc = add_record(c, rows[i], REC_ALL, 0, total, include, rank, frac, cum);
    }
    free(rows);
    return rc;
}

/* ConvertOpStatsToRooflineModel(include_infeed_outfeed)'s records. */
static int records(struct roof_ctx *c, int include)
{
    const struct op_stats *os = c->os;
    uint32_t i;
    int rc = op_records(c, include);

    if (rc != 0)
        return rc;
    /* the complete steps' and each step's op db (empty on GPU: see the top) */
    rc = program_record_sums(c, os->hardware_type == HW_TPU ? &os->complete_steps : NULL,
                             REC_AVERAGE_STEP, 0, include);
    for (i = 0; rc == 0 && i < os->nsteps; i++)
        rc = program_record_sums(c, os->steps[i].hlo, REC_PER_STEP, os->steps[i].step_num, include);
    return rc;
}

/* RidgePoint. */
static double ridge(double flops, double bw)
{
    return op_safe_div(flops, op_gibi_to_giga(bw));
}

/* absl::StrCat of a double: %.6g. */
static void prop_g(struct dt_table *t, const char *key, double v)
{
    dt_propf(t, key, "%.6g", v);
}

static void properties(struct roof_ctx *c)
{
    const struct roof_db *db = &c->db;
    struct dt_table *t = c->t;

    dt_prop(t, "device_type", c->os->device_type);
    prop_g(t, "peak_flop_rate", db->peak_flop_rate);
    prop_g(t, "peak_hbm_bw", db->peak_hbm_bw);
    prop_g(t, "peak_vmem_write_bw", db->peak_vmem_write_bw);
    prop_g(t, "hbm_ridge_point", ridge(db->peak_flop_rate, db->peak_hbm_bw));
    prop_g(t, "vmem_write_ridge_point", ridge(db->peak_flop_rate, db->peak_vmem_write_bw));
    if (db->gpu)
        return;
    dt_propf(t, "megacore", "%d", db->megacore != 0);
    dt_propf(t, "has_cmem", "%d", db->has_cmem != 0);
    dt_propf(t, "has_merged_vmem", "%d", db->has_merged_vmem != 0);
    prop_g(t, "peak_cmem_read_bw", db->peak_cmem_read_bw);
    prop_g(t, "peak_cmem_write_bw", db->peak_cmem_write_bw);
    prop_g(t, "peak_vmem_read_bw", db->peak_vmem_read_bw);
    prop_g(t, "cmem_read_ridge_point", ridge(db->peak_flop_rate, db->peak_cmem_read_bw));
    prop_g(t, "cmem_write_ridge_point", ridge(db->peak_flop_rate, db->peak_cmem_write_bw));
    prop_g(t, "vmem_read_ridge_point", ridge(db->peak_flop_rate, db->peak_vmem_read_bw));
    prop_g(t, "time_scale_multiplier", op_profile_dvfs_multiplier(&c->os->device_db));
}

/* PopulateStepDiagnostics into a diagnostics table. */
static int diagnostics(const struct op_stats *os, struct dt_table *t)
{
    const char *w[2];
    char dropped[256];
    uint32_t n = 0;

    if (os->use_incomplete_step)
        w[n++] = op_msg_incomplete_step;
    else if (os->nsteps == 0)
        w[n++] = os->empty_intersect ? op_msg_empty_intersect : op_msg_no_step_marker;
    if (os->num_steps_dropped > 0) {
        snprintf(dropped, sizeof(dropped),
                 "%u steps dropped. This might happen when you profile many hosts and/or many "
                 "steps. You could try to profile shorter or reduce the number of hosts you "
                 "profile.",
                 os->num_steps_dropped);
        w[n++] = dropped;
    }
    dt_col(t, "severity", "string", "Severity");
    dt_col(t, "message", "string", "Message");
    for (uint32_t i = 0; i < n; i++) {
        dt_row(t);
        dt_str(t, "WARNING");
        dt_str(t, w[i]);
    }
    return dt_failed(t) ? -ENOMEM : 0;
}

static int produce(struct tool_ctx *ctx, struct out *o, int csv)
{
    struct roof_ctx c;
    struct dt_table t[2];
    int rc;

    memset(&c, 0, sizeof(c));
    if ((rc = snapshot_op_stats(ctx->snap, ctx->host, &c.os, ctx->err)) != 0)
        return rc;
    if (c.os->device_db.nrows <= 1) /* IDLE at most */
        tool_note_no_hlo(ctx, csv ? "roofline_model.csv" : "roofline_model.json");
    dt_init(&t[0]);
    dt_init(&t[1]);
    c.t = &t[0];
    if (c.os->hardware_type == HW_GPU || c.os->hardware_type == HW_TPU) {
        init_db(c.os, &c.db);
        columns(&c);
        rc = records(&c, 1);
        if (rc == 0)
            rc = records(&c, 0);
        if (rc == 0)
            properties(&c);
    } else {
        /* an empty database: XProf's other-device table, no rows */
        init_db(c.os, &c.db);
        c.db.gpu = 0;
        columns(&c);
    }
    if (rc == 0)
        rc = diagnostics(c.os, &t[1]);
    if (rc == 0 && (dt_failed(&t[0]) || dt_failed(&t[1])))
        rc = -ENOMEM;
    if (rc == 0) {
        if (csv) {
            dt_write_csv(&t[0], o);
        } else {
            dt_write_json_list(t, 2, o);
        }
    }
    dt_free(&t[0]);
    dt_free(&t[1]);
    if (rc != 0)
        return xp_err_set(ctx->err, rc, "roofline_model: out of memory");
    return 0;
}

static int roofline_model_json(struct tool_ctx *ctx, struct out *o)
{
    return produce(ctx, o, 0);
}

static int roofline_model_csv(struct tool_ctx *ctx, struct out *o)
{
    return produce(ctx, o, 1);
}

const struct tool tool_roofline_model_json = {
    .file = "roofline_model.json",
    .tag = "roofline_model",
    .scope = TOOL_RUN | TOOL_HOST,
    .listed = tool_listed_xplane,
    .produce = roofline_model_json,
};

const struct tool tool_roofline_model_csv = {
    .file = "roofline_model.csv",
    .tag = "roofline_model",
    .scope = TOOL_RUN | TOOL_HOST,
    .listed = tool_listed_xplane,
    .produce = roofline_model_csv,
};
