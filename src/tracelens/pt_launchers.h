/*
 * pt_launchers.h - TraceLens's kernel launchers of a PyTorch trace
 * (TreePerf/tree_perf.py get_kernel_launchers with its defaults, then
 * get_df_kernel_launchers, get_df_kernel_launchers_summary and
 * get_df_kernel_launchers_summary_by_category), served as
 * kernel_launchers.csv, kernel_launchers_summary.csv and
 * kernel_launchers_summary_by_category.csv.
 *
 * Each GPU event that a runtime launch reaches (pt_tree.h), except
 * communication kernels (nccl / rccl / cross_device_reduce in the name), is
 * a direct kernel of its launcher: the nearest cpu_op above the launch,
 * passing python_function nodes and cpu_ops named "execute"; the launch
 * itself when there is none. Per launcher: total_direct_kernel_time = busy
 * time (interval union) of its direct kernels, total_subtree_kernel_time =
 * busy time of every GPU event under it, the op category (pt_op_category),
 * the GPU events on other streams overlapping its kernels by 1 µs or more,
 * its Input Dims / Input type / Input Strides / Concrete Inputs args, and
 * the process / thread names of its (pid, tid). Rows are in launcher start
 * order. Summaries group by name / op category with pandas' arithmetic.
 */
#ifndef XPROFS_PT_LAUNCHERS_H
#define XPROFS_PT_LAUNCHERS_H

#include <stddef.h>
#include <stdint.h>

#include "base/err.h"
#include "out/out.h"
#include "session/session.h"

/* 1 when the hosts of hl are a PyTorch run's (its first host has a PyTorch
 * trace), so the pt_* writers below serve them. */
int pt_launchers_serves(const struct host_list *hl);

/* The three files of the hosts of hl. Return 0 or a negative errno with err
 * set (-ENOENT when no GPU kernel is launched). */
int pt_kernel_launchers_csv(const struct host_list *hl, struct out *o, struct xp_err *err);
int pt_kernel_launchers_summary_csv(const struct host_list *hl, struct out *o, struct xp_err *err);
int pt_kernel_launchers_by_category_csv(const struct host_list *hl, struct out *o,
                                        struct xp_err *err);

/* kernel_launchers_unique_args.csv (report 0) and perf_report/ops_unique_args.csv
 * (report 1: the perf report's statistics and kernel details) of the hosts of
 * hl: TraceLens's get_df_kernel_launchers_unique_args (pt_unique_args.c). */
struct pt_unique_opts {
    const char *event_name; /* only launchers of this name, or NULL */
    int include_pct;        /* Percentage (%) and Cumulative Percentage (%) */
    int report;             /* the perf report's form */
};
int pt_unique_args_csv(const struct host_list *hl, const struct pt_unique_opts *opt, struct out *o,
                       struct xp_err *err);

/* perf_report/<sheet>.csv of the hosts of hl: TraceLens's roofline sheet
 * "GEMM", "SDPA_fwd", "SDPA_bwd", "CONV_fwd", "CONV_bwd" or a vector sheet
 * (pt_perf_sheet.c). -ENOENT when no op of the sheet has a perf model (or
 * for another sheet). */
int pt_perf_sheet_csv(const struct host_list *hl, const char *sheet, struct out *o,
                      struct xp_err *err);

/* perf_report/unified_perf_summary.csv of the hosts of hl: TraceLens's
 * build_df_unified_perf_table summarized by summarize_df_unified_perf_table
 * (pt_unified.c). -ENOENT when no op launches a GPU kernel, and for what the
 * port does not make yet (pt_unified.c's head says what). */
int pt_unified_summary_csv(const struct host_list *hl, struct out *o, struct xp_err *err);

/* perf_report/short_kernel_histogram.csv and short_kernels_summary.csv of
 * the hosts of hl: TraceLens's get_dfs_short_kernels (pt_short_kernels.c). */
int pt_short_kernel_histogram_csv(const struct host_list *hl, struct out *o, struct xp_err *err);
int pt_short_kernels_summary_csv(const struct host_list *hl, struct out *o, struct xp_err *err);

/* ---- the summary rows ----------------------------------------------------------
 *
 * The rows of kernel_launchers_summary.csv (by name) and of
 * kernel_launchers_summary_by_category.csv (by op category), as the files
 * print them and for C callers (the run report): one computation, the
 * files are written from these rows. Rows are in the files' order: total
 * direct kernel time, longest first (pandas' order of ties).
 */
enum pt_summary_key {
    PT_SUMMARY_BY_NAME,     /* kernel_launchers_summary.csv */
    PT_SUMMARY_BY_CATEGORY, /* kernel_launchers_summary_by_category.csv */
};

struct pt_summary_row {
    const char *key;               /* name, or op category (owned by the snapshot / static) */
    const char *const *categories; /* Categories: the group's op categories, sorted, distinct */
    size_t ncategories;            /* entries in categories (1 by op category) */
    uint64_t count;                /* Count: the launcher rows of the group */
    double direct_us;              /* total_direct_kernel_time_sum, µs */
    double subtree_us;             /* total_subtree_kernel_time_sum, µs */
    double direct_ms;              /* total_direct_kernel_time_ms */
    double subtree_ms;             /* total_subtree_kernel_time_ms */
    double pct;                    /* Percentage (%) of the total direct time */
    double cum_pct;                /* Cumulative Percentage (%) */
};

struct pt_summary {
    struct pt_summary_row *rows; /* in the file's order */
    size_t n;                    /* entries in rows */
    int direct_int;              /* the direct time column is int64 (printed as ints) */
    int subtree_int;             /* same for the subtree time column */
    const char **cats;           /* storage of the rows' categories */
};

/* The summary rows of the hosts of hl into *s. The strings stay valid while
 * hl's snapshot lives; release *s with pt_summary_release. Returns 0 or a
 * negative errno with err set (-ENOENT when no GPU kernel is launched); *s
 * is empty on failure. */
int pt_summary_build(const struct host_list *hl, enum pt_summary_key by, struct pt_summary *s,
                     struct xp_err *err);

/* Free the rows of s and empty it. NULL is a no-op. */
void pt_summary_release(struct pt_summary *s);

/* TraceLens's categorize_torch_op for an op name and the name of its first
 * kernel (by start; NULL if none): a static string (pt_opcat.c). */
const char *pt_op_category(const char *name, const char *first_kernel);

#endif
