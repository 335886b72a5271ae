/*
 * compare.c - compare.md, compare.json and compare_{steps,ops,kernels,
 * gpu_timeline}.csv: this run against the run named by ?base= (compare.h,
 * docs/compare.md). Found by lookup only, and made afresh on every open:
 * the file depends on two runs, and the cache knows one run's sources.
 */
#include <errno.h>
#include <string.h>

#include "compare.h"

static const struct query_key compare_keys[] = {
    {"base", Q_STRING, 0, 0},
    {NULL, Q_STRING, 0, 0},
};

/* The base run's current snapshot, referenced; 0 or -EINVAL with a reason. */
static int open_base(struct tool_ctx *ctx, struct snapshot **snapp)
{
    const char *name = query_get(ctx->q, "base");
    struct session *s;
    int rc;

    *snapp = NULL;
    if (name == NULL || name[0] == '\0')
        return xp_err_set(ctx->err, -EINVAL,
                          "base= names the run to compare against, as the mount shows it "
                          "(jax/2025_01_01, '/' as %%2F in a mounted path)");
    if (strcmp(name, ctx->snap->session->name) == 0)
        return xp_err_set(ctx->err, -EINVAL, "base=%s is this run: name another run", name);
    if (ctx->cat == NULL)
        return xp_err_set(ctx->err, -EINVAL, "base=%s: no other run can be read from here", name);
    s = catalog_find(ctx->cat, name);
    if (s == NULL) {
        catalog_rescan(ctx->cat, 0);
        s = catalog_find(ctx->cat, name);
    }
    if (s == NULL)
        return xp_err_set(ctx->err, -EINVAL, "base=%s: no run of that name in this log directory",
                          name);
    rc = session_snapshot(s, snapp, ctx->err);
    session_unref(s);
    if (rc == 0 && (*snapp)->nhosts == 0) {
        snapshot_unref(*snapp);
        *snapp = NULL;
        return xp_err_set(ctx->err, -EINVAL, "base=%s: that run holds no profile", name);
    }
    return rc;
}

static int produce(struct tool_ctx *ctx, struct out *o,
                   void (*write)(struct out *o, const struct compare *c))
{
    struct snapshot *base;
    struct compare c;
    int rc = open_base(ctx, &base);

    if (rc != 0)
        return rc;
    memset(&c, 0, sizeof(c));
    rc = cmp_run_gather(base, &c.base);
    if (rc == 0)
        rc = cmp_run_gather(ctx->snap, &c.run);
    if (rc == 0)
        rc = cmp_diff(&c);
    if (rc == 0)
        write(o, &c);
    cmp_diff_free(&c);
    cmp_run_free(&c.run);
    cmp_run_free(&c.base);
    /* what this file read of the base must still be its sources */
    if (rc == 0 && (snapshot_sources_cut(base, ctx->err) != 0 ||
                    snapshot_sources_unchanged(base, ctx->err) != 0))
        rc = ctx->err->code;
    snapshot_unref(base);
    if (rc == -ENOMEM)
        return xp_err_set(ctx->err, rc, "compare: out of memory");
    return rc;
}

static int produce_md(struct tool_ctx *ctx, struct out *o)
{
    return produce(ctx, o, cmp_write_md);
}

static int produce_json(struct tool_ctx *ctx, struct out *o)
{
    return produce(ctx, o, cmp_write_json);
}

static int produce_steps(struct tool_ctx *ctx, struct out *o)
{
    return produce(ctx, o, cmp_write_steps_csv);
}

static int produce_ops(struct tool_ctx *ctx, struct out *o)
{
    return produce(ctx, o, cmp_write_ops_csv);
}

static int produce_kernels(struct tool_ctx *ctx, struct out *o)
{
    return produce(ctx, o, cmp_write_kernels_csv);
}

static int produce_gpus(struct tool_ctx *ctx, struct out *o)
{
    return produce(ctx, o, cmp_write_gpus_csv);
}

const struct tool tool_compare_md = {
    .file = "compare.md",
    .scope = TOOL_RUN,
    .flags = TOOL_UNCACHED | TOOL_UNLISTED,
    .keys = compare_keys,
    .listed = tool_listed_any_trace,
    .produce = produce_md,
};

const struct tool tool_compare_json = {
    .file = "compare.json",
    .scope = TOOL_RUN,
    .flags = TOOL_UNCACHED | TOOL_UNLISTED,
    .keys = compare_keys,
    .listed = tool_listed_any_trace,
    .produce = produce_json,
};

const struct tool tool_compare_steps_csv = {
    .file = "compare_steps.csv",
    .scope = TOOL_RUN,
    .flags = TOOL_UNCACHED | TOOL_UNLISTED,
    .keys = compare_keys,
    .listed = tool_listed_any_trace,
    .produce = produce_steps,
};

const struct tool tool_compare_ops_csv = {
    .file = "compare_ops.csv",
    .scope = TOOL_RUN,
    .flags = TOOL_UNCACHED | TOOL_UNLISTED,
    .keys = compare_keys,
    .listed = tool_listed_any_trace,
    .produce = produce_ops,
};

const struct tool tool_compare_kernels_csv = {
    .file = "compare_kernels.csv",
    .scope = TOOL_RUN,
    .flags = TOOL_UNCACHED | TOOL_UNLISTED,
    .keys = compare_keys,
    .listed = tool_listed_any_trace,
    .produce = produce_kernels,
};

const struct tool tool_compare_gpu_timeline_csv = {
    .file = "compare_gpu_timeline.csv",
    .scope = TOOL_RUN,
    .flags = TOOL_UNCACHED | TOOL_UNLISTED,
    .keys = compare_keys,
    .listed = tool_listed_any_trace,
    .produce = produce_gpus,
};
