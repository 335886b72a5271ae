/*
 * kernel_launchers_unique_args.c - kernel_launchers_unique_args.csv of
 * PyTorch runs: TraceLens's get_df_kernel_launchers_unique_args over
 * kernel_launchers.csv's rows, one row per distinct (name, op category,
 * process / thread names, Input Dims, Input type, Input Strides, Concrete
 * Inputs), with the mean and sum of the direct and subtree kernel times.
 * `?include_pct=1` adds the percentage columns, `?event_name=N` keeps the
 * launchers named N (src/tracelens/pt_unique_args.c computes it).
 */
#include <errno.h>

#include "tracelens/pt_launchers.h"
#include "tool.h"

static const struct query_key unique_args_keys[] = {
    {"event_name", Q_STRING, 0, 0},
    {"include_pct", Q_BOOL, 0, 1},
    {NULL, Q_STRING, 0, 0},
};

static int unique_args_csv(struct tool_ctx *ctx, struct out *o)
{
    struct host_list hl = tool_hosts(ctx);
    struct pt_unique_opts opt = {NULL, 0, 0};
    double v;

    if (!pt_launchers_serves(&hl))
        return xp_err_set(ctx->err, -ENOENT, "kernel_launchers_unique_args.csv: PyTorch runs only");
    opt.event_name = query_get(ctx->q, "event_name");
    opt.include_pct = query_num(ctx->q, "include_pct", &v) && v != 0;
    return pt_unique_args_csv(&hl, &opt, o, ctx->err);
}

static int listed_pt(const struct snapshot *snap)
{
    return snapshot_count(snap, SRC_PT_TRACE) > 0;
}

const struct tool tool_kernel_launchers_unique_args_csv = {
    .file = "kernel_launchers_unique_args.csv",
    .scope = TOOL_RUN | TOOL_HOST,
    .keys = unique_args_keys,
    .listed = listed_pt,
    .produce = unique_args_csv,
};
