/*
 * collectives.c - collectives.csv of PyTorch runs: per collective call of
 * the job, matched across its ranks (the run's hosts), kind, sizes, each
 * rank's start, duration and wait, skews, algorithm and bus bandwidth, as
 * TraceLens's NcclAnalyser computes them (src/tracelens/pt_collectives.c).
 */
#include "tracelens/pt_collectives.h"
#include "tool.h"

static int collectives_csv(struct tool_ctx *ctx, struct out *o)
{
    struct host_list hl = tool_hosts(ctx);

    return pt_collectives_csv(&hl, o, ctx->err);
}

static int listed_pt(const struct snapshot *snap)
{
    return snapshot_count(snap, SRC_PT_TRACE) > 0;
}

const struct tool tool_collectives_csv = {
    .file = "collectives.csv",
    .scope = TOOL_RUN,
    .listed = listed_pt,
    .produce = collectives_csv,
};
