/*
 * kernel_stats.c - kernel_stats.json and kernel_stats.csv: the GPU kernel
 * stats table (GenerateKernelStatsDataTable,
 * xprof/convert/xplane_to_kernel_stats_db.cc), one row per kernel report,
 * top 1000 by total duration; the CSV is csv_writer.py's form of it.
 */
#include <errno.h>
#include <stdio.h>

#include "out/datatable.h"
#include "op_stats/op_stats.h"
#include "tool.h"

/* No GPU gives a thread more than 512 registers (AMD; NVIDIA 255). */
#define MAX_REGISTERS_PER_THREAD 512

/* A value the profile got wrong stays as the profile says, with a warning
 * in errors.txt, so that nobody takes it for ours: the ROCm tracer writes
 * values such as 2,191,500,840 registers per thread. */
static void warn_implausible(struct tool_ctx *ctx, const struct op_stats *os)
{
    const struct kernel_report *first = NULL;
    uint32_t i, n = 0;

    for (i = 0; i < os->nkernels; i++) {
        if (os->kernels[i].registers_per_thread > MAX_REGISTERS_PER_THREAD) {
            first = first ? first : &os->kernels[i];
            n++;
        }
    }
    if (first != NULL)
        snapshot_log(ctx->snap,
                     "kernel_stats: warning: %u kernel%s the profile gives more than %d "
                     "registers per thread (%s: %u), shown as the profile says",
                     n, n == 1 ? " to which" : "s to which", MAX_REGISTERS_PER_THREAD, first->name,
                     first->registers_per_thread);
}

static int kernel_table(struct tool_ctx *ctx, struct dt_table *t)
{
    const struct op_stats *os;
    uint32_t i;
    int rc;

    if ((rc = snapshot_op_stats(ctx->snap, ctx->host, &os, ctx->err)) != 0)
        return rc;
    warn_implausible(ctx, os);
    dt_col(t, "rank", "number", "Rank");
    dt_col(t, "kernel_name", "string", "Kernel Name");
    dt_col(t, "registers_per_thread", "number", "Registers per thread");
    dt_col(t, "shmem_bytes", "number", "Shared Mem bytes");
    dt_col(t, "block_dim", "string", "Block dim");
    dt_col(t, "grid_dim", "string", "Grid dim");
    dt_col(t, "occupancy_pct", "number", "Theoretical Occupancy %");
    dt_col(t, "is_op_tensor_core_eligible", "boolean", "Op is TensorCore eligible");
    dt_col(t, "is_kernel_using_tensor_core", "boolean", "Kernel uses TensorCore");
    dt_col(t, "op_name", "string", "Op Name");
    dt_col(t, "occurrences", "number", "Occurrences");
    dt_col(t, "total_duration_us", "number", "Total Duration (\xce\xbcs)");
    dt_col(t, "avg_duration_us", "number", "Avg Duration (\xce\xbcs)");
    dt_col(t, "min_duration_us", "number", "Min Duration (\xce\xbcs)");
    dt_col(t, "max_duration_us", "number", "Max Duration (\xce\xbcs)");
    for (i = 0; i < os->nkernels; i++) {
        const struct kernel_report *k = &os->kernels[i];
        char dims[64];
        dt_row(t);
        dt_num(t, (double)(i + 1));
        dt_str(t, k->name);
        dt_num(t, (double)k->registers_per_thread);
        dt_num(t, (double)((uint64_t)k->static_shmem_bytes + k->dynamic_shmem_bytes));
        snprintf(dims, sizeof(dims), "%u,%u,%u", k->block_dim[0], k->block_dim[1], k->block_dim[2]);
        dt_str(t, dims);
        snprintf(dims, sizeof(dims), "%u,%u,%u", k->grid_dim[0], k->grid_dim[1], k->grid_dim[2]);
        dt_str(t, dims);
        dt_num(t, k->occupancy_pct);
        dt_bool(t, k->is_op_tensor_core_eligible);
        dt_bool(t, k->is_kernel_using_tensor_core);
        dt_str(t, k->op_name);
        dt_num(t, (double)k->occurrences);
        dt_num(t, (double)k->total_duration_ns / 1e3);
        dt_num(t, (double)(k->occurrences ? k->total_duration_ns / k->occurrences : 0) / 1e3);
        dt_num(t, (double)k->min_duration_ns / 1e3);
        dt_num(t, (double)k->max_duration_ns / 1e3);
    }
    return dt_failed(t) ? xp_err_set(ctx->err, -ENOMEM, "kernel_stats: out of memory") : 0;
}

static int produce(struct tool_ctx *ctx, struct out *o, int csv)
{
    struct dt_table t;
    int rc;

    dt_init(&t);
    rc = kernel_table(ctx, &t);
    if (rc == 0) {
        if (csv)
            dt_write_csv(&t, o);
        else
            dt_write_json(&t, o);
    }
    dt_free(&t);
    return rc;
}

static int kernel_stats_json(struct tool_ctx *ctx, struct out *o)
{
    return produce(ctx, o, 0);
}

static int kernel_stats_csv(struct tool_ctx *ctx, struct out *o)
{
    return produce(ctx, o, 1);
}

const struct tool tool_kernel_stats_json = {
    .file = "kernel_stats.json",
    .tag = "kernel_stats",
    .scope = TOOL_RUN | TOOL_HOST,
    .listed = tool_listed_xplane,
    .produce = kernel_stats_json,
};

const struct tool tool_kernel_stats_csv = {
    .file = "kernel_stats.csv",
    .tag = "kernel_stats",
    .scope = TOOL_RUN | TOOL_HOST,
    .listed = tool_listed_xplane,
    .produce = kernel_stats_csv,
};
