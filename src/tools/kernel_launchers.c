/*
 * kernel_launchers.c - kernel_launchers.csv, kernel_launchers_summary.csv,
 * kernel_launchers_summary_by_category.csv and xla_summary.csv, as
 * TraceLens's JAX analyser writes them with pandas (numbers in Python's
 * repr, NaN as an empty field). The kernels, categories, launch latencies
 * and summary rows come from src/tracelens/jax_launchers.h; a run with more than one
 * host adds a `host` column to kernel_launchers.csv.
 *
 * Sources: .xplane.pb hosts and JAX Chrome traces. PyTorch runs get
 * TraceLens's CPU-op launchers instead (pt_launchers.h, hooked in below).
 */
#include <math.h>
#include <string.h>

#include "tracelens/gpu_timeline.h"
#include "tracelens/jax_launchers.h"
#include "tracelens/pt_launchers.h"
#include "tool.h"

/* A float cell in Python's repr; NaN is an empty field. */
static void put_num(struct out *o, double v)
{
    char buf[48];

    if (isnan(v))
        return;
    out_write(o, buf, gt_pyrepr(v, buf, sizeof(buf)));
}

/* ---- kernel_launchers.csv ----------------------------------------------------- */

struct csv_ctx {
    const struct host_list *hl;
    struct out *o;
    int multi; /* more than one host: a host column */
};

/* One row: the name as a field, then the rest of the line composed in a
 * buffer and written at once. */
static int write_row(void *arg, const struct jax_kernel *k)
{
    struct csv_ctx *c = arg;
    struct out *o = c->o;
    char line[192];
    size_t len = 0, clen = strlen(k->category);

    if (k->name_plain)
        out_write(o, k->name, k->name_len);
    else
        out_csv_str(o, k->name, k->name_len);
    line[len++] = ',';
    memcpy(line + len, k->category, clen); /* categories are plain fields */
    len += clen;
    line[len++] = ',';
    len += gt_pyrepr(k->dur, line + len, 48);
    memcpy(line + len, ",1,", 3);
    len += 3;
    len += out_format_i64(line + len, k->pid);
    line[len++] = ',';
    len += out_format_i64(line + len, k->tid);
    line[len++] = ',';
    if (!isnan(k->launch_latency))
        len += gt_pyrepr(k->launch_latency, line + len, 48);
    if (c->multi) {
        const char *h = c->hl->names[k->host];
        out_write(o, line, len);
        out_putc(o, ',');
        out_csv_str(o, h, strlen(h));
        len = 0;
    }
    line[len++] = '\n';
    out_write(o, line, len);
    return 0;
}

/* kernel_launchers.csv of a JAX run. */
static int launchers_csv(struct tool_ctx *ctx, struct out *o)
{
    struct host_list hl = tool_hosts(ctx);
    struct csv_ctx c;

    c.hl = &hl;
    c.o = o;
    c.multi = hl.n > 1;
    out_puts(o, "name,op category,total_direct_kernel_time,direct_kernel_count,pid,tid,"
                "GPU_kernel_launch_latency");
    out_puts(o, c.multi ? ",host\n" : "\n");
    return jax_visit(&hl, 1, 1, write_row, &c, ctx->err);
}

/* ---- the summaries ------------------------------------------------------------ */

/* One summary file of a JAX run; by category drops the sum column. */
static int summary(struct tool_ctx *ctx, struct out *o, enum jax_group_by by)
{
    struct host_list hl = tool_hosts(ctx);
    struct jax_summary s;
    size_t i;
    int rc, by_category = by == JAX_BY_CATEGORY;

    rc = jax_summarize(&hl, by, &s, ctx->err);
    if (rc != 0)
        return rc;
    if (by_category)
        out_puts(o, "op category,Count,total_direct_kernel_time_ms,Percentage (%),"
                    "Cumulative Percentage (%),time ms per gpu\n");
    else
        out_puts(o, "name,total_direct_kernel_time_sum,Count,total_direct_kernel_time_ms,"
                    "Percentage (%),Cumulative Percentage (%),time ms per gpu\n");
    for (i = 0; i < s.ngroups; i++) {
        const struct jax_group *gr = &s.groups[i];
        out_csv_str(o, gr->key, strlen(gr->key));
        out_putc(o, ',');
        if (!by_category) {
            put_num(o, gr->sum);
            out_putc(o, ',');
        }
        out_u64(o, gr->count);
        out_putc(o, ',');
        put_num(o, gr->ms);
        out_putc(o, ',');
        put_num(o, gr->pct);
        out_putc(o, ',');
        put_num(o, gr->cum);
        out_putc(o, ',');
        put_num(o, gr->ms_per_gpu);
        out_putc(o, '\n');
    }
    jax_summary_free(&s);
    return 0;
}

static int summary_csv(struct tool_ctx *ctx, struct out *o)
{
    return summary(ctx, o, JAX_BY_NAME);
}

static int summary_by_category_csv(struct tool_ctx *ctx, struct out *o)
{
    return summary(ctx, o, JAX_BY_CATEGORY);
}

static int xla_summary_csv(struct tool_ctx *ctx, struct out *o)
{
    return summary(ctx, o, JAX_BY_XLA_NAME);
}

/* Listed for runs with xplane or JAX trace JSON hosts. */
static int listed_jax(const struct snapshot *snap)
{
    return snapshot_count(snap, SRC_XPLANE) > 0 || snapshot_count(snap, SRC_TRACE_JSON) > 0;
}

/* ---- PyTorch runs: TraceLens's CPU-op launchers (pt_launchers.c) ----------- */

/* The three kernel_launchers files: TraceLens's CPU-op launchers for
 * PyTorch runs, the JAX analyser's otherwise. */
static int launchers_csv_any(struct tool_ctx *ctx, struct out *o)
{
    struct host_list hl = tool_hosts(ctx);

    return pt_launchers_serves(&hl) ? pt_kernel_launchers_csv(&hl, o, ctx->err)
                                    : launchers_csv(ctx, o);
}

static int summary_csv_any(struct tool_ctx *ctx, struct out *o)
{
    struct host_list hl = tool_hosts(ctx);

    return pt_launchers_serves(&hl) ? pt_kernel_launchers_summary_csv(&hl, o, ctx->err)
                                    : summary_csv(ctx, o);
}

static int summary_by_category_csv_any(struct tool_ctx *ctx, struct out *o)
{
    struct host_list hl = tool_hosts(ctx);

    return pt_launchers_serves(&hl) ? pt_kernel_launchers_by_category_csv(&hl, o, ctx->err)
                                    : summary_by_category_csv(ctx, o);
}

static int listed_any(const struct snapshot *snap)
{
    return listed_jax(snap) || snapshot_count(snap, SRC_PT_TRACE) > 0;
}

const struct tool tool_kernel_launchers_csv = {
    .file = "kernel_launchers.csv",
    .scope = TOOL_RUN | TOOL_HOST,
    .listed = listed_any,
    .produce = launchers_csv_any,
};

const struct tool tool_kernel_launchers_summary_csv = {
    .file = "kernel_launchers_summary.csv",
    .scope = TOOL_RUN | TOOL_HOST,
    .listed = listed_any,
    .produce = summary_csv_any,
};

const struct tool tool_kernel_launchers_summary_by_category_csv = {
    .file = "kernel_launchers_summary_by_category.csv",
    .scope = TOOL_RUN | TOOL_HOST,
    .listed = listed_any,
    .produce = summary_by_category_csv_any,
};

/* TraceLens's JAX report (generate_perf_report_jax.py) also writes xla_summary:
 * the kernels of category "Uncategorized Events/XLA", grouped by name with its
 * digits removed, summarised as kernel_launchers_summary. */
const struct tool tool_xla_summary_csv = {
    .file = "xla_summary.csv",
    .scope = TOOL_RUN | TOOL_HOST,
    .listed = listed_jax,
    .produce = xla_summary_csv,
};
