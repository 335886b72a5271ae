/*
 * registry.c - the table of every virtual file a run holds (see tool.h).
 * A new tool adds one line here.
 */
#include "tool.h"

#include <string.h>

extern const struct tool tool_summary_json;
extern const struct tool tool_hosts_json;
extern const struct tool tool_tools_json;
extern const struct tool tool_errors_txt;
extern const struct tool tool_cache_stats_json;
extern const struct tool tool_module_list_json;
extern const struct tool tool_memory_viewer_json;
extern const struct tool tool_memory_profile_json;
extern const struct tool tool_memory_profile_csv;
extern const struct tool tool_graph_viewer_json;

extern const struct tool tool_overview_page_json;
extern const struct tool tool_input_pipeline_analyzer_json;
extern const struct tool tool_framework_op_stats_json;
extern const struct tool tool_framework_op_stats_csv;
extern const struct tool tool_kernel_stats_json;
extern const struct tool tool_kernel_stats_csv;
extern const struct tool tool_op_profile_json;
extern const struct tool tool_hlo_stats_json;
extern const struct tool tool_hlo_stats_csv;
extern const struct tool tool_roofline_model_json;
extern const struct tool tool_roofline_model_csv;
extern const struct tool tool_smart_suggestion_json;
extern const struct tool tool_pod_viewer_json;
extern const struct tool tool_megascale_stats_json;
extern const struct tool tool_inference_profile_json;
extern const struct tool tool_perf_counters_json;
extern const struct tool tool_utilization_viewer_json;
extern const struct tool tool_kernel_utilization_json;

extern const struct tool tool_trace_viewer_json;
extern const struct tool tool_trace_viewer_legacy_json;

extern const struct tool tool_steps_csv;
extern const struct tool tool_steps_json;
extern const struct tool tool_regions_csv;
extern const struct tool tool_regions_json;

extern const struct tool tool_gpu_timeline_csv;
extern const struct tool tool_gpu_events_averages_csv;
extern const struct tool tool_gpu_timeline_json;
extern const struct tool tool_gpu_devices_csv;
extern const struct tool tool_kernel_launchers_csv;
extern const struct tool tool_kernel_launchers_summary_csv;
extern const struct tool tool_kernel_launchers_summary_by_category_csv;
extern const struct tool tool_xla_summary_csv;
extern const struct tool tool_kernel_launchers_unique_args_csv; /* PyTorch runs */
extern const struct tool tool_perf_report_gpu_timeline_csv;     /* perf_report.c */
extern const struct tool tool_perf_report_ops_summary_by_category_csv;
extern const struct tool tool_perf_report_ops_summary_csv;
extern const struct tool tool_perf_report_ops_unique_args_csv;
extern const struct tool tool_perf_report_unified_perf_summary_csv;
extern const struct tool tool_perf_report_gemm_csv;
extern const struct tool tool_perf_report_sdpa_fwd_csv;
extern const struct tool tool_perf_report_sdpa_bwd_csv;
extern const struct tool tool_perf_report_conv_fwd_csv;
extern const struct tool tool_perf_report_conv_bwd_csv;
extern const struct tool tool_perf_report_binary_csv;
extern const struct tool tool_perf_report_unary_csv;
extern const struct tool tool_perf_report_norm_csv;
extern const struct tool tool_perf_report_reduce_fwd_csv;
extern const struct tool tool_perf_report_coll_analysis_csv;
extern const struct tool tool_perf_report_short_kernel_histogram_csv;
extern const struct tool tool_perf_report_short_kernels_summary_csv;
extern const struct tool tool_collectives_csv;  /* collectives.c */
extern const struct tool tool_perf_report_xlsx; /* perf_report_xlsx.c */
extern const struct tool tool_call_tree_txt;    /* PyTorch runs: pt_call_tree.c */
extern const struct tool tool_modules_txt;      /* PyTorch runs: pt_modules.c */
extern const struct tool tool_roofline_csv;     /* PyTorch runs: pt_roofline.c */
extern const struct tool tool_report_md;
extern const struct tool tool_report_json;
extern const struct tool tool_compare_md;
extern const struct tool tool_compare_json;
extern const struct tool tool_compare_steps_csv;
extern const struct tool tool_compare_ops_csv;
extern const struct tool tool_compare_kernels_csv;
extern const struct tool tool_compare_gpu_timeline_csv;

/* clang-format off */
const struct tool *const tool_table[] = {
    /* the run itself (summary.c, hosts.c, tools_json.c, errors.c, module_list.c) */
    &tool_summary_json,
    &tool_hosts_json,
    &tool_tools_json,
    &tool_errors_txt,
    &tool_cache_stats_json,
    &tool_module_list_json,
    /* XProf's op statistics (overview_page.c, input_pipeline.c, framework_op_stats.c, kernel_stats.c) */
    &tool_overview_page_json,
    &tool_input_pipeline_analyzer_json,
    &tool_framework_op_stats_json,
    &tool_framework_op_stats_csv,
    &tool_kernel_stats_json,
    &tool_kernel_stats_csv,
    &tool_op_profile_json,
    /* XProf's HLO views (hlo_stats.c, roofline_model.c) */
    &tool_hlo_stats_json,
    &tool_hlo_stats_csv,
    &tool_roofline_model_json,
    &tool_roofline_model_csv,
    /* XProf's smart suggestions (smart_suggestion.c) */
    &tool_smart_suggestion_json,
    /* XProf's pod viewer: per step and core the step breakdown (pod_viewer.c) */
    &tool_pod_viewer_json,
    /* XProf's Megascale (multi-slice DCN) collective stats (megascale_stats.c) */
    &tool_megascale_stats_json,
    /* XProf's inference profile: per model requests and batches (inference_profile.c) */
    &tool_inference_profile_json,
    /* XProf's hardware tools over TPU counter samples (perf_counters.c,
     * utilization_viewer.c, kernel_utilization.c) */
    &tool_perf_counters_json,
    &tool_utilization_viewer_json,
    &tool_kernel_utilization_json,
    /* XProf's memory viewer of one HLO module (memory_viewer.c) */
    &tool_memory_viewer_json,
    /* XProf's memory profile of one host's allocators (memory_profile.c) */
    &tool_memory_profile_json,
    &tool_memory_profile_csv,
    /* XProf's graph viewer of one HLO module (graph_viewer.c) */
    &tool_graph_viewer_json,
    /* XProf's trace viewer (trace_viewer.c, trace_viewer_legacy.c) */
    &tool_trace_viewer_json,
    &tool_trace_viewer_legacy_json,
    /* steps and regions (steps.c) */
    &tool_steps_csv,
    &tool_steps_json,
    &tool_regions_csv,
    &tool_regions_json,
    /* TraceLens's GPU timeline and kernel launchers (gpu_timeline.c, kernel_launchers.c) */
    &tool_gpu_timeline_csv,
    &tool_gpu_events_averages_csv,
    &tool_gpu_timeline_json,
    &tool_gpu_devices_csv, /* ours: one row per GPU, one header for every run */
    &tool_kernel_launchers_csv,
    &tool_kernel_launchers_summary_csv,
    &tool_kernel_launchers_summary_by_category_csv,
    &tool_xla_summary_csv,
    &tool_kernel_launchers_unique_args_csv,
    /* TraceLens's perf report, one CSV per sheet (perf_report.c) */
    &tool_perf_report_xlsx,
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
    &tool_collectives_csv, /* TraceLens's NCCL analysis of multi-rank runs */
    &tool_call_tree_txt,
    &tool_modules_txt,
    &tool_roofline_csv,
    /* ours: the one-page report of the run (report.c) */
    &tool_report_md,
    &tool_report_json,
    /* ours: this run against ?base=RUN, found by lookup only (compare.c) */
    &tool_compare_md,
    &tool_compare_json,
    &tool_compare_steps_csv,
    &tool_compare_ops_csv,
    &tool_compare_kernels_csv,
    &tool_compare_gpu_timeline_csv,
    NULL,
};
/* clang-format on */

const struct tool *tool_find(const char *file, unsigned scope)
{
    int i;

    for (i = 0; tool_table[i] != NULL; i++) {
        if ((tool_table[i]->scope & scope) && strcmp(tool_table[i]->file, file) == 0)
            return tool_table[i];
    }
    return NULL;
}

int tool_listed_xplane(const struct snapshot *snap)
{
    return snapshot_count(snap, SRC_XPLANE) > 0;
}

int tool_listed_any_trace(const struct snapshot *snap)
{
    return snap->nhosts > 0;
}

int tool_host_count(const struct tool_ctx *ctx)
{
    return ctx->host != NULL ? 1 : (int)ctx->snap->nhosts;
}

const char *tool_host(const struct tool_ctx *ctx, int i)
{
    return ctx->host != NULL ? ctx->host : ctx->snap->hosts[i];
}

struct host_list tool_hosts(const struct tool_ctx *ctx)
{
    struct host_list hl;

    hl.snap = ctx->snap;
    hl.names = ctx->host != NULL ? &ctx->host : ctx->snap->hosts;
    hl.n = tool_host_count(ctx);
    return hl;
}
