/*
 * perf_report.c - the files of perf_report/ of PyTorch runs: the sheets TraceLens's
 * generate_perf_report_pytorch writes with its defaults, one CSV each, as its
 * output_csvs_dir holds them: gpu_timeline.csv, ops_summary_by_category.csv,
 * ops_summary.csv (the kernel launcher summaries), ops_unique_args.csv (the
 * unique-args table with the report's statistics and kernel details),
 * unified_perf_summary.csv (every op with a perf model or launching kernels,
 * pt_unified.c; not made for every run, see there) and
 * GEMM.csv, SDPA_fwd.csv, SDPA_bwd.csv, CONV_fwd.csv, CONV_bwd.csv,
 * BinaryElementwise.csv, UnaryElementwise.csv, Normalization.csv and
 * Reduce_fwd.csv (roofline sheets, pt_perf_sheet.c; the vector models are
 * pt_perf_vector.c's, the flash / aiter attention ones pt_perf_sdpa.c's),
 * short_kernel_histogram.csv and short_kernels_summary.csv (its short_kernel_study,
 * on here as in TraceLens's own regression references, pt_short_kernels.c),
 * coll_analysis.csv (NcclAnalyser's summary of the collectives; ranks = hosts).
 * SDPA_bwd and CONV_bwd hold the backward ops TraceLens models directly
 * (convolution_backward, flash_attn's varlen backward). Not yet: their rows
 * from TraceLens's bwd=True pass (forward ops linked to their autograd
 * backward by sequence number; Reduce_bwd too), unified_perf_summary.
 */
#include <errno.h>

#include "tracelens/pt_collectives.h"
#include "tracelens/pt_launchers.h"
#include "tool.h"

extern const struct tool tool_gpu_timeline_csv;

static int listed_pt(const struct snapshot *snap)
{
    return snapshot_count(snap, SRC_PT_TRACE) > 0;
}

/* The hosts of the call, or -ENOENT when they are not a PyTorch run's. */
static int pt_hosts(struct tool_ctx *ctx, struct host_list *hl)
{
    *hl = tool_hosts(ctx);
    if (!pt_launchers_serves(hl))
        return xp_err_set(ctx->err, -ENOENT, "perf_report: PyTorch runs only");
    return 0;
}

static int timeline_csv(struct tool_ctx *ctx, struct out *o)
{
    struct host_list hl;
    int rc = pt_hosts(ctx, &hl);

    return rc != 0 ? rc : tool_gpu_timeline_csv.produce(ctx, o);
}

static int by_category_csv(struct tool_ctx *ctx, struct out *o)
{
    struct host_list hl;
    int rc = pt_hosts(ctx, &hl);

    return rc != 0 ? rc : pt_kernel_launchers_by_category_csv(&hl, o, ctx->err);
}

static int summary_csv(struct tool_ctx *ctx, struct out *o)
{
    struct host_list hl;
    int rc = pt_hosts(ctx, &hl);

    return rc != 0 ? rc : pt_kernel_launchers_summary_csv(&hl, o, ctx->err);
}

static int unique_args_csv(struct tool_ctx *ctx, struct out *o)
{
    struct pt_unique_opts opt = {NULL, 1, 1};
    struct host_list hl;
    int rc = pt_hosts(ctx, &hl);

    return rc != 0 ? rc : pt_unique_args_csv(&hl, &opt, o, ctx->err);
}

static int unified_csv(struct tool_ctx *ctx, struct out *o)
{
    struct host_list hl;
    int rc = pt_hosts(ctx, &hl);

    return rc != 0 ? rc : pt_unified_summary_csv(&hl, o, ctx->err);
}

static int gemm_csv(struct tool_ctx *ctx, struct out *o)
{
    struct host_list hl;
    int rc = pt_hosts(ctx, &hl);

    return rc != 0 ? rc : pt_perf_sheet_csv(&hl, "GEMM", o, ctx->err);
}

static int conv_fwd_csv(struct tool_ctx *ctx, struct out *o)
{
    struct host_list hl;
    int rc = pt_hosts(ctx, &hl);

    return rc != 0 ? rc : pt_perf_sheet_csv(&hl, "CONV_fwd", o, ctx->err);
}

static int roofline_sheet(struct tool_ctx *ctx, struct out *o, const char *sheet)
{
    struct host_list hl;
    int rc = pt_hosts(ctx, &hl);

    return rc != 0 ? rc : pt_perf_sheet_csv(&hl, sheet, o, ctx->err);
}

static int sdpa_bwd_csv(struct tool_ctx *ctx, struct out *o)
{
    return roofline_sheet(ctx, o, "SDPA_bwd");
}

static int conv_bwd_csv(struct tool_ctx *ctx, struct out *o)
{
    return roofline_sheet(ctx, o, "CONV_bwd");
}

static int binary_csv(struct tool_ctx *ctx, struct out *o)
{
    return roofline_sheet(ctx, o, "BinaryElementwise");
}

static int unary_csv(struct tool_ctx *ctx, struct out *o)
{
    return roofline_sheet(ctx, o, "UnaryElementwise");
}

static int norm_csv(struct tool_ctx *ctx, struct out *o)
{
    return roofline_sheet(ctx, o, "Normalization");
}

static int reduce_fwd_csv(struct tool_ctx *ctx, struct out *o)
{
    return roofline_sheet(ctx, o, "Reduce_fwd");
}

static int coll_analysis_csv(struct tool_ctx *ctx, struct out *o)
{
    struct host_list hl;
    int rc = pt_hosts(ctx, &hl);

    return rc != 0 ? rc : pt_coll_summary_csv(&hl, o, ctx->err);
}

static int short_histogram_csv(struct tool_ctx *ctx, struct out *o)
{
    struct host_list hl;
    int rc = pt_hosts(ctx, &hl);

    return rc != 0 ? rc : pt_short_kernel_histogram_csv(&hl, o, ctx->err);
}

static int short_summary_csv(struct tool_ctx *ctx, struct out *o)
{
    struct host_list hl;
    int rc = pt_hosts(ctx, &hl);

    return rc != 0 ? rc : pt_short_kernels_summary_csv(&hl, o, ctx->err);
}

static int sdpa_fwd_csv(struct tool_ctx *ctx, struct out *o)
{
    struct host_list hl;
    int rc = pt_hosts(ctx, &hl);

    return rc != 0 ? rc : pt_perf_sheet_csv(&hl, "SDPA_fwd", o, ctx->err);
}

const struct tool tool_perf_report_gpu_timeline_csv = {
    .file = "perf_report/gpu_timeline.csv",
    .scope = TOOL_RUN | TOOL_HOST,
    .listed = listed_pt,
    .produce = timeline_csv,
};

const struct tool tool_perf_report_ops_summary_by_category_csv = {
    .file = "perf_report/ops_summary_by_category.csv",
    .scope = TOOL_RUN | TOOL_HOST,
    .listed = listed_pt,
    .produce = by_category_csv,
};

const struct tool tool_perf_report_ops_summary_csv = {
    .file = "perf_report/ops_summary.csv",
    .scope = TOOL_RUN | TOOL_HOST,
    .listed = listed_pt,
    .produce = summary_csv,
};

const struct tool tool_perf_report_ops_unique_args_csv = {
    .file = "perf_report/ops_unique_args.csv",
    .scope = TOOL_RUN | TOOL_HOST,
    .listed = listed_pt,
    .produce = unique_args_csv,
};

const struct tool tool_perf_report_unified_perf_summary_csv = {
    .file = "perf_report/unified_perf_summary.csv",
    .scope = TOOL_RUN | TOOL_HOST,
    .listed = listed_pt,
    .produce = unified_csv,
};

const struct tool tool_perf_report_gemm_csv = {
    .file = "perf_report/GEMM.csv",
    .scope = TOOL_RUN | TOOL_HOST,
    .listed = listed_pt,
    .produce = gemm_csv,
};

const struct tool tool_perf_report_sdpa_fwd_csv = {
    .file = "perf_report/SDPA_fwd.csv",
    .scope = TOOL_RUN | TOOL_HOST,
    .listed = listed_pt,
    .produce = sdpa_fwd_csv,
};

const struct tool tool_perf_report_conv_fwd_csv = {
    .file = "perf_report/CONV_fwd.csv",
    .scope = TOOL_RUN | TOOL_HOST,
    .listed = listed_pt,
    .produce = conv_fwd_csv,
};

const struct tool tool_perf_report_sdpa_bwd_csv = {
    .file = "perf_report/SDPA_bwd.csv",
    .scope = TOOL_RUN | TOOL_HOST,
    .listed = listed_pt,
    .produce = sdpa_bwd_csv,
};

const struct tool tool_perf_report_conv_bwd_csv = {
    .file = "perf_report/CONV_bwd.csv",
    .scope = TOOL_RUN | TOOL_HOST,
    .listed = listed_pt,
    .produce = conv_bwd_csv,
};

const struct tool tool_perf_report_binary_csv = {
    .file = "perf_report/BinaryElementwise.csv",
    .scope = TOOL_RUN | TOOL_HOST,
    .listed = listed_pt,
    .produce = binary_csv,
};

const struct tool tool_perf_report_unary_csv = {
    .file = "perf_report/UnaryElementwise.csv",
    .scope = TOOL_RUN | TOOL_HOST,
    .listed = listed_pt,
    .produce = unary_csv,
};

const struct tool tool_perf_report_norm_csv = {
    .file = "perf_report/Normalization.csv",
    .scope = TOOL_RUN | TOOL_HOST,
    .listed = listed_pt,
    .produce = norm_csv,
};

const struct tool tool_perf_report_reduce_fwd_csv = {
    .file = "perf_report/Reduce_fwd.csv",
    .scope = TOOL_RUN | TOOL_HOST,
    .listed = listed_pt,
    .produce = reduce_fwd_csv,
};

const struct tool tool_perf_report_coll_analysis_csv = {
    .file = "perf_report/coll_analysis.csv",
    .scope = TOOL_RUN | TOOL_HOST,
    .listed = listed_pt,
    .produce = coll_analysis_csv,
};

const struct tool tool_perf_report_short_kernel_histogram_csv = {
    .file = "perf_report/short_kernel_histogram.csv",
    .scope = TOOL_RUN | TOOL_HOST,
    .listed = listed_pt,
    .produce = short_histogram_csv,
};

const struct tool tool_perf_report_short_kernels_summary_csv = {
    .file = "perf_report/short_kernels_summary.csv",
    .scope = TOOL_RUN | TOOL_HOST,
    .listed = listed_pt,
    .produce = short_summary_csv,
};

/* The sheets in TraceLens's order, for perf_report.xlsx (perf_report_xlsx.c). */
const struct tool *const perf_report_sheets[] = {
    &tool_perf_report_gpu_timeline_csv,
    &tool_perf_report_ops_summary_by_category_csv,
    &tool_perf_report_ops_summary_csv,
    &tool_perf_report_ops_unique_args_csv,
    &tool_perf_report_unified_perf_summary_csv,
    &tool_perf_report_gemm_csv,
    &tool_perf_report_sdpa_fwd_csv,
    &tool_perf_report_sdpa_bwd_csv,
    &tool_perf_report_conv_fwd_csv,
    &tool_perf_report_conv_bwd_csv,
    &tool_perf_report_binary_csv,
    &tool_perf_report_unary_csv,
    &tool_perf_report_norm_csv,
    &tool_perf_report_reduce_fwd_csv,
    &tool_perf_report_short_kernel_histogram_csv,
    &tool_perf_report_short_kernels_summary_csv,
    &tool_perf_report_coll_analysis_csv,
    NULL,
};

const char *const perf_report_sheet_names[] = {
    "gpu_timeline",
    "ops_summary_by_category",
    "ops_summary",
    "ops_unique_args",
    "unified_perf_summary",
    "GEMM",
    "SDPA_fwd",
    "SDPA_bwd",
    "CONV_fwd",
    "CONV_bwd",
    "BinaryElementwise",
    "UnaryElementwise",
    "Normalization",
    "Reduce_fwd",
    "short_kernel_histogram",
    "short_kernels_summary",
    "coll_analysis",
    NULL,
};
