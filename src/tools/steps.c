/*
 * steps.c - steps.csv, steps.json, regions.csv, regions.json: where each step
 * spent its time, nesting-aware (our own tool; the model is src/xplane/steps.h).
 *
 * steps.csv: one row per step occurrence, then one per region inside it
 * (events of the step's thread that start inside it, nested by containment),
 * ordered by step start; times in microseconds from the profile start,
 * exact to the picosecond: XLine times for an xplane (the profiler counts
 * them from the capture's start; the trace viewer's ts), and for a Chrome
 * trace the time since its earliest event (steps.json's clock_origin_us
 * holds that event's ts; to the nanosecond past 2^32 us, where a double
 * holds no finer time).
 *   host               host of the profile
 *   thread_id          XLine id (Chrome trace: tid)
 *   thread             line / thread name
 *   step_name          the step annotation's name
 *   step_num           its step_num, else iter_num, else its ordinal
 *   id                 row number within the host (a step's rows are consecutive)
 *   parent_id          id of the parent row; empty on a step row
 *   depth              0 step, 1 its direct children, ...
 *   region             the row's event name as the trace viewer shows it
 *                      (display name, else name); a step row: the step's name
 *   parent             the parent row's name; empty on a step row
 *   start_us           start
 *   incl_us            inclusive duration
 *   self_us            incl_us minus children_union_us
 *   children_union_us  union of the direct children's intervals clipped to
 *                      this row (nested or overlapping time counted once)
 *   unattributed_us    step rows: step time no child covers (= self_us)
 *   naive_sum_us       step rows: incl_us of the step plus of all its regions,
 *                      the double count a hand sum gives; never use it as time
 *   fits               region rows: true if it lies inside its parent and
 *                      shares no time with a sibling
 *   outside_parent_us  region rows: its time past its parent's end (only a
 *                      step's direct children can leave their parent)
 *   overlap_us         region rows: its time also covered by a sibling
 * regions.csv: one row per region name (steps included) over the rows above:
 *   region, min_depth, count, then for incl and self: *_total_us, *_min_us,
 *   *_median_us, *_mean_us, *_max_us, *_p90_us (median and p90 interpolate
 *   linearly, as numpy does), and share_of_step_time = incl_total_us / the
 *   steps' incl total. incl_total_us is the union of the name's intervals per
 *   thread, so a name nested in itself is not counted twice.
 * steps.json / regions.json: {"hosts": [{host, source, step_names, steps,
 * clock_origin_us, reason}],
 * "rows": [...]} with the same keys; empty fields are null, fits a boolean.
 * Options (all four files): step=NAME (the step annotation), thread=NAME or
 * id, min_depth=N, max_depth=N. No steps: the header (or no rows) and a
 * one-line reason in errors.txt.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/np_arith.h"
#include "base/sort.h"
#include "region_stats.h"
#include "tool.h"
#include "xplane/steps.h"

static const struct query_key steps_keys[] = {
    {"max_depth", Q_INT, 0, 1e9}, {"min_depth", Q_INT, 0, 1e9}, {"step", Q_STRING, 0, 0},
    {"thread", Q_STRING, 0, 0},   {NULL, Q_STRING, 0, 0},
};

/* The options of one request. */
struct opts {
    const char *step;         /* step annotation, NULL to detect */
    struct region_filter sel; /* the thread (name or id, NULL for all) and depths kept */
};

static int get_opts(const struct tool_ctx *ctx, struct opts *op)
{
    double v;

    op->step = query_get(ctx->q, "step");
    op->sel.thread = query_get(ctx->q, "thread");
    if (op->step != NULL && op->step[0] == '\0')
        return xp_err_set(ctx->err, -EINVAL, "step= needs the name of a step annotation");
    if (op->sel.thread != NULL && op->sel.thread[0] == '\0')
        return xp_err_set(ctx->err, -EINVAL, "thread= needs a thread name or id");
    op->sel.min_depth = query_num(ctx->q, "min_depth", &v) ? (int64_t)v : 0;
    op->sel.max_depth = query_num(ctx->q, "max_depth", &v) ? (int64_t)v : INT64_MAX;
    if (op->sel.min_depth > op->sel.max_depth)
        return xp_err_set(ctx->err, -EINVAL, "min_depth %" PRId64 " is above max_depth %" PRId64,
                          op->sel.min_depth, op->sel.max_depth);
    return 0;
}

/* Microseconds of ps exactly ("12.5", "-0.000001", "3"). */
static void put_us(struct out *o, int64_t ps)
{
    uint64_t a = ps < 0 ? (uint64_t)0 - (uint64_t)ps : (uint64_t)ps;
    char buf[40];
    int n;

    n = snprintf(buf, sizeof(buf), "%s%" PRIu64, ps < 0 ? "-" : "", a / 1000000);
    if (a % 1000000 != 0) {
        n += snprintf(buf + n, sizeof(buf) - (size_t)n, ".%06" PRIu64, a % 1000000);
        while (buf[n - 1] == '0')
            buf[--n] = '\0';
    }
    out_write(o, buf, (size_t)n);
}

/* Microseconds of a fractional ps value (means, percentiles): exact when it
 * is a whole number of ps, else to 1e-6 ps, the decimal digits of ps with
 * the point moved (no second rounding through a division). */
static void put_us_f(struct out *o, double ps)
{
    char buf[80], res[90];
    int n, dot, i, r = 0;

    if (ps == floor(ps) && fabs(ps) < 9e18) {
        put_us(o, (int64_t)ps);
        return;
    }
    if (!isfinite(ps) || fabs(ps) >= 9e18) {
        out_number(o, ps / 1e6);
        return;
    }
    n = snprintf(buf, sizeof(buf), "%.6f", fabs(ps)); /* "ddd.dddddd" */
    dot = n - 7;
    if (ps < 0)
        res[r++] = '-';
    if (dot <= 6) { /* under 1 us */
        res[r++] = '0';
        res[r++] = '.';
        for (i = dot; i < 6; i++)
            res[r++] = '0';
        memcpy(res + r, buf, (size_t)dot);
        r += dot;
    } else {
        memcpy(res + r, buf, (size_t)(dot - 6));
        r += dot - 6;
        res[r++] = '.';
        memcpy(res + r, buf + dot - 6, 6);
        r += 6;
    }
    memcpy(res + r, buf + dot + 1, 6);
    r += 6;
    while (res[r - 1] == '0')
        r--;
    if (res[r - 1] == '.')
        r--;
    out_write(o, res, (size_t)r);
}

/* ---- steps.csv / steps.json ---------------------------------------------- */

static const char *const step_cols[] = {
    "host",
    "thread_id",
    "thread",
    "step_name",
    "step_num",
    "id",
    "parent_id",
    "depth",
    "region",
    "parent",
    "start_us",
    "incl_us",
    "self_us",
    "children_union_us",
    "unattributed_us",
    "naive_sum_us",
    "fits",
    "outside_parent_us",
    "overlap_us",
    NULL,
};

/* A field writer for both formats. */
struct fw {
    struct out *o;           /* destination */
    int json;                /* 1: JSON object members, 0: CSV fields */
    int col;                 /* next column */
    const char *const *cols; /* column names */
};

static void fw_key(struct fw *w)
{
    if (w->col > 0)
        out_putc(w->o, ',');
    if (w->json) {
        out_putc(w->o, '"');
        out_puts(w->o, w->cols[w->col]);
        out_puts(w->o, "\":");
    }
    w->col++;
}

static void fw_str(struct fw *w, const char *s)
{
    fw_key(w);
    if (w->json)
        out_json_cstr(w->o, s);
    else
        out_csv_str(w->o, s, strlen(s));
}

static void fw_i64(struct fw *w, int64_t v)
{
    fw_key(w);
    out_i64(w->o, v);
}

static void fw_us(struct fw *w, int64_t ps)
{
    fw_key(w);
    put_us(w->o, ps);
}

static void fw_usf(struct fw *w, double ps)
{
    fw_key(w);
    put_us_f(w->o, ps);
}

static void fw_null(struct fw *w)
{
    fw_key(w);
    if (w->json)
        out_puts(w->o, "null");
}

static void fw_bool(struct fw *w, int b)
{
    fw_key(w);
    out_puts(w->o, b ? "true" : "false");
}

static void write_header(struct out *o, const char *const *cols)
{
    int i;

    for (i = 0; cols[i] != NULL; i++) {
        if (i > 0)
            out_putc(o, ',');
        out_puts(o, cols[i]);
    }
    out_putc(o, '\n');
}

/* One row r of step st; *first: no JSON row written yet. */
static void write_step_row(struct out *o, int json, int *first, const char *host,
                           const struct xp_steps *m, const struct xp_steps_step *st, uint32_t r)
{
    const struct xp_steps_row *row = &m->rows[r], *step = &m->rows[st->row];
    const struct xp_steps_thread *t = &m->threads[st->thread];
    struct fw w = {o, json, 0, step_cols};

    if (json)
        out_puts(o, *first ? "\n{" : ",\n{");
    *first = 0;
    fw_str(&w, host);
    fw_i64(&w, t->id);
    fw_str(&w, t->name);
    fw_str(&w, step->name);
    fw_i64(&w, st->step_num);
    fw_i64(&w, r);
    if (row->parent == XP_STEPS_NONE)
        fw_null(&w);
    else
        fw_i64(&w, row->parent);
    fw_i64(&w, row->depth);
    fw_str(&w, row->name);
    if (row->parent == XP_STEPS_NONE)
        fw_null(&w);
    else
        fw_str(&w, m->rows[row->parent].name);
    fw_key(&w);
    put_us(o, row->start_ps);
    fw_us(&w, row->dur_ps);
    fw_us(&w, row->self_ps);
    fw_us(&w, row->dur_ps - row->self_ps);
    if (row->parent == XP_STEPS_NONE) {
        fw_us(&w, row->self_ps);
        fw_us(&w, st->naive_sum_ps);
        fw_null(&w);
        fw_null(&w);
        fw_null(&w);
    } else {
        const struct xp_steps_row *p = &m->rows[row->parent];
        int64_t outside = row->start_ps + row->dur_ps - (p->start_ps + p->dur_ps);
        if (outside < 0)
            outside = 0;
        fw_null(&w);
        fw_null(&w);
        fw_bool(&w, outside == 0 && row->overlap_ps == 0);
        fw_us(&w, outside);
        fw_us(&w, row->overlap_ps);
    }
    out_puts(o, json ? "}" : "\n");
}

/* The hosts the request covers that have a trace the model can read. */
static int host_readable(const struct tool_ctx *ctx, const char *host)
{
    return snapshot_host_file(ctx->snap, host, SRC_XPLANE) != NULL ||
           snapshot_host_file(ctx->snap, host, SRC_TRACE_JSON) != NULL ||
           snapshot_host_file(ctx->snap, host, SRC_PT_TRACE) != NULL;
}

/* A step= or thread= that selects nothing is a mistake in the request, not
 * an empty answer: -EINVAL with the reason. models[0..n) may hold NULLs
 * (hosts without a trace). */
static int check_selection(const struct tool_ctx *ctx, const struct opts *op,
                           const struct xp_steps *const *models, int n)
{
    uint32_t s, nsteps = 0, selected = 0;
    int i;

    for (i = 0; i < n; i++) {
        const struct xp_steps *m = models[i];
        if (m == NULL)
            continue;
        nsteps += m->nsteps;
        for (s = 0; s < m->nsteps; s++)
            selected += region_thread_selected(&op->sel, &m->threads[m->steps[s].thread]);
    }
    if (op->step != NULL && nsteps == 0)
        return xp_err_set(ctx->err, -EINVAL, "step=%s: no event of that name in this %s", op->step,
                          ctx->host != NULL ? "host" : "run");
    if (op->sel.thread != NULL && nsteps > 0 && selected == 0)
        return xp_err_set(ctx->err, -EINVAL, "thread=%s: no step on a thread of that name or id",
                          op->sel.thread);
    return 0;
}

/* The step model of every covered host with a trace into models[0..n)
 * (NULL for the others), then check_selection. */
static int get_models(struct tool_ctx *ctx, const struct opts *op, const struct xp_steps **models,
                      int n)
{
    int i, rc = 0;

    for (i = 0; i < n && rc == 0; i++) {
        if (host_readable(ctx, tool_host(ctx, i)))
            rc = snapshot_steps(ctx->snap, tool_host(ctx, i), op->step, &models[i], ctx->err);
    }
    return rc != 0 ? rc : check_selection(ctx, op, models, n);
}

/* JSON "hosts" entry of one model. */
static void write_host_info(struct out *o, const char *host, const struct xp_steps *m, int first)
{
    uint32_t i;

    out_puts(o, first ? "\n{\"host\":" : ",\n{\"host\":");
    out_json_cstr(o, host);
    out_puts(o, ",\"source\":");
    out_json_cstr(o, xp_steps_source_name(m->source));
    out_puts(o, ",\"step_names\":[");
    for (i = 0; i < m->nstep_names && m->nsteps > 0; i++) {
        if (i > 0)
            out_putc(o, ',');
        out_json_cstr(o, m->step_names[i]);
    }
    out_puts(o, "],\"steps\":");
    out_u64(o, m->nsteps);
    out_puts(o, ",\"clock_origin_us\":");
    out_number(o, m->origin_us);
    out_puts(o, ",\"reason\":");
    if (m->reason[0])
        out_json_cstr(o, m->reason);
    else
        out_puts(o, "null");
    out_putc(o, '}');
}

/* Every selected row of one host's model. */
static void write_host_rows(struct out *o, int json, int *first, const char *host,
                            const struct xp_steps *m, const struct opts *op)
{
    uint32_t s, r;

    for (s = 0; s < m->nsteps; s++) {
        const struct xp_steps_step *st = &m->steps[s];
        if (!region_thread_selected(&op->sel, &m->threads[st->thread]))
            continue;
        for (r = st->row; r < st->row + st->nrows; r++) {
            if (region_depth_selected(&op->sel, m->rows[r].depth))
                write_step_row(o, json, first, host, m, st, r);
        }
    }
}

static int steps_write(struct tool_ctx *ctx, struct out *o, int json)
{
    const struct xp_steps **models;
    struct opts op;
    int i, n = tool_host_count(ctx), rc, first = 1;

    rc = get_opts(ctx, &op);
    if (rc != 0)
        return rc;
    models = calloc((size_t)n + 1, sizeof(*models));
    if (models == NULL)
        return xp_err_set(ctx->err, -ENOMEM, "out of memory");
    rc = get_models(ctx, &op, models, n);
    if (rc != 0) {
        free(models);
        return rc;
    }
    if (json) {
        out_puts(o, "{\"hosts\":[");
        for (i = 0; i < n; i++) {
            if (models[i] != NULL) {
                write_host_info(o, tool_host(ctx, i), models[i], first);
                first = 0;
            }
        }
        out_puts(o, "],\n\"rows\":[");
        first = 1;
    } else {
        write_header(o, step_cols);
    }
    for (i = 0; i < n; i++) {
        if (models[i] != NULL)
            write_host_rows(o, json, &first, tool_host(ctx, i), models[i], &op);
    }
    if (json)
        out_puts(o, "]}\n");
    free(models);
    return 0;
}

static int steps_csv_produce(struct tool_ctx *ctx, struct out *o)
{
    return steps_write(ctx, o, 0);
}

static int steps_json_produce(struct tool_ctx *ctx, struct out *o)
{
    return steps_write(ctx, o, 1);
}

/* ---- regions.csv / regions.json ------------------------------------------ */

static const char *const region_cols[] = {
    "region",       "min_depth",      "count",        "incl_total_us",
    "incl_min_us",  "incl_median_us", "incl_mean_us", "incl_max_us",
    "incl_p90_us",  "self_total_us",  "self_min_us",  "self_median_us",
    "self_mean_us", "self_max_us",    "self_p90_us",  "share_of_step_time",
    NULL,
};

static void write_agg(struct out *o, int json, int first, const struct region_stat *a,
                      int64_t step_ps)
{
    struct fw w = {o, json, 0, region_cols};
    int k;

    if (json)
        out_puts(o, first ? "\n{" : ",\n{");
    fw_str(&w, a->name);
    fw_i64(&w, a->min_depth);
    fw_i64(&w, (int64_t)a->count);
    fw_us(&w, a->incl_total);
    for (k = 0; k < 5; k++)
        fw_usf(&w, a->incl[k]);
    fw_us(&w, a->self_total);
    for (k = 0; k < 5; k++)
        fw_usf(&w, a->self[k]);
    if (step_ps > 0) {
        fw_key(&w);
        out_printf(o, "%.10g", (double)a->incl_total / (double)step_ps);
    } else {
        fw_null(&w);
    }
    out_puts(o, json ? "}" : "\n");
}

/* Group the collected rows by name, summarize, sort and write. */
static int write_aggs(struct out *o, int json, struct region_collect *c)
{
    struct region_stat *stats;
    uint64_t i, n;

    if (region_stats_of(c, &stats, &n) != 0)
        return -ENOMEM;
    for (i = 0; i < n; i++)
        write_agg(o, json, i == 0, &stats[i], c->step_ps);
    free(stats);
    return 0;
}

static int regions_write(struct tool_ctx *ctx, struct out *o, int json)
{
    struct region_collect c;
    const struct xp_steps **models;
    struct opts op;
    int i, n = tool_host_count(ctx), rc, first = 1;

    memset(&c, 0, sizeof(c));
    rc = get_opts(ctx, &op);
    if (rc != 0)
        return rc;
    models = calloc((size_t)n + 1, sizeof(*models));
    if (models == NULL)
        return xp_err_set(ctx->err, -ENOMEM, "out of memory");
    rc = get_models(ctx, &op, models, n);
    if (rc != 0) {
        free(models);
        return rc;
    }
    if (json)
        out_puts(o, "{\"hosts\":[");
    else
        write_header(o, region_cols);
    for (i = 0; i < n && rc == 0; i++) {
        const struct xp_steps *m = models[i];
        if (m == NULL)
            continue;
        if (json)
            write_host_info(o, tool_host(ctx, i), m, first);
        first = 0;
        if (region_collect_model(&c, m, &op.sel) != 0)
            rc = xp_err_set(ctx->err, -ENOMEM, "out of memory");
    }
    if (rc == 0 && json)
        out_puts(o, "],\n\"rows\":[");
    if (rc == 0 && write_aggs(o, json, &c) != 0)
        rc = xp_err_set(ctx->err, -ENOMEM, "out of memory");
    if (rc == 0 && json)
        out_puts(o, "]}\n");
    region_collect_free(&c);
    free(models);
    return rc;
}

static int regions_csv_produce(struct tool_ctx *ctx, struct out *o)
{
    return regions_write(ctx, o, 0);
}

static int regions_json_produce(struct tool_ctx *ctx, struct out *o)
{
    return regions_write(ctx, o, 1);
}

/* Listed for runs with an XSpace or a Chrome trace (PyTorch's included). */
static int steps_listed(const struct snapshot *snap)
{
    return snapshot_count(snap, SRC_XPLANE) > 0 || snapshot_count(snap, SRC_TRACE_JSON) > 0 ||
           snapshot_count(snap, SRC_PT_TRACE) > 0;
}

const struct tool tool_steps_csv = {
    .file = "steps.csv",
    .scope = TOOL_RUN | TOOL_HOST,
    .keys = steps_keys,
    .listed = steps_listed,
    .produce = steps_csv_produce,
};

const struct tool tool_steps_json = {
    .file = "steps.json",
    .scope = TOOL_RUN | TOOL_HOST,
    .keys = steps_keys,
    .listed = steps_listed,
    .produce = steps_json_produce,
};

const struct tool tool_regions_csv = {
    .file = "regions.csv",
    .scope = TOOL_RUN | TOOL_HOST,
    .keys = steps_keys,
    .listed = steps_listed,
    .produce = regions_csv_produce,
};

const struct tool tool_regions_json = {
    .file = "regions.json",
    .scope = TOOL_RUN | TOOL_HOST,
    .keys = steps_keys,
    .listed = steps_listed,
    .produce = regions_json_produce,
};
