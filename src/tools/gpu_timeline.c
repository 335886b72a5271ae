/*
 * gpu_timeline.c - gpu_timeline.csv, gpu_events_averages.csv and
 * gpu_timeline.json: TraceLens's GPU timeline per device and its mean over
 * devices (src/tracelens/gpu_timeline.h computes them); gpu_devices.csv, our
 * own: the same numbers one row per device, one header for every run, times
 * in ms and shares in % to 6 decimals.
 *
 * CSV layout as TraceLens writes it with pandas: `type,time ms,percent` and,
 * for JAX/XLA devices, `gpu_pid`; numbers in Python's repr. A run with more
 * than one host adds a `host` column. Devices follow TraceLens's order.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "tracelens/gpu_timeline.h"
#include "tool.h"

/* One device with the host it belongs to. */
struct dev_ref {
    const char *host;
    const struct gt_device *dev;
    int pytorch;
};

/* Collect the devices of the hosts the call covers. Hosts without GPU
 * events are skipped; none at all is -ENOENT. */
static int collect(struct tool_ctx *ctx, struct dev_ref **refsp, size_t *np, int *any_jax)
{
    int i, n = tool_host_count(ctx), rc, last_rc = -ENOENT;
    struct dev_ref *refs = NULL;
    size_t nrefs = 0;

    *any_jax = 0;
    for (i = 0; i < n; i++) {
        const char *host = tool_host(ctx, i);
        const struct gt_host *g;
        struct dev_ref *v;
        uint32_t d;
        rc = snapshot_gpu_timeline(ctx->snap, host, &g, ctx->err);
        if (rc == -ENOENT)
            continue;
        if (rc != 0) {
            free(refs);
            return rc;
        }
        v = realloc(refs, (nrefs + g->ndevices) * sizeof(*v));
        if (v == NULL) {
            free(refs);
            return xp_err_set(ctx->err, -ENOMEM, "out of memory");
        }
        refs = v;
        for (d = 0; d < g->ndevices; d++) {
            refs[nrefs].host = host;
            refs[nrefs].dev = &g->devices[d];
            refs[nrefs].pytorch = g->pytorch;
            nrefs++;
        }
        if (!g->pytorch)
            *any_jax = 1;
        last_rc = 0;
    }
    if (nrefs == 0) {
        free(refs);
        if (last_rc == -ENOENT)
            return xp_err_set(ctx->err, -ENOENT, "no GPU events found in the trace");
        return last_rc;
    }
    *refsp = refs;
    *np = nrefs;
    return 0;
}

static void put_num(struct out *o, double v)
{
    char buf[48];

    if (isnan(v))
        return; /* pandas writes NaN as an empty field */
    gt_pyrepr(v, buf, sizeof(buf));
    out_puts(o, buf);
}

/* The rows of one metric set: type,time ms,percent[,gpu_pid][,host]. */
static void write_rows(struct out *o, const double *metric, int with_pid, int64_t pid,
                       const char *host)
{
    int k;

    for (k = 0; k < GT_NMETRICS; k++) {
        out_puts(o, gt_metric_names[k]);
        out_putc(o, ',');
        put_num(o, metric[k] / 1e3);
        out_putc(o, ',');
        put_num(o, metric[k] / metric[GT_TOTAL_TIME] * 100);
        if (with_pid) {
            out_putc(o, ',');
            if (pid >= 0)
                out_i64(o, pid);
        }
        if (host != NULL) {
            out_putc(o, ',');
            out_csv_str(o, host, strlen(host));
        }
        out_putc(o, '\n');
    }
}

static int multi_host(const struct tool_ctx *ctx)
{
    return tool_host_count(ctx) > 1;
}

static int timeline_csv(struct tool_ctx *ctx, struct out *o)
{
    struct dev_ref *refs;
    size_t n, i;
    int any_jax, rc = collect(ctx, &refs, &n, &any_jax);

    if (rc != 0)
        return rc;
    out_puts(o, "type,time ms,percent");
    if (any_jax)
        out_puts(o, ",gpu_pid");
    if (multi_host(ctx))
        out_puts(o, ",host");
    out_putc(o, '\n');
    for (i = 0; i < n; i++)
        write_rows(o, refs[i].dev->metric, any_jax, refs[i].pytorch ? -1 : refs[i].dev->gpu_pid,
                   multi_host(ctx) ? refs[i].host : NULL);
    free(refs);
    return 0;
}

/* TraceLens's average: metrics summed in device order, then divided. */
static void average(const struct dev_ref *refs, size_t n, double *avg)
{
    size_t i;
    int k;

    for (k = 0; k < GT_NMETRICS; k++)
        avg[k] = refs[0].dev->metric[k];
    for (i = 1; i < n; i++) {
        for (k = 0; k < GT_NMETRICS; k++)
            avg[k] += refs[i].dev->metric[k];
    }
    for (k = 0; k < GT_NMETRICS; k++)
        avg[k] /= (double)n;
}

static int averages_csv(struct tool_ctx *ctx, struct out *o)
{
    struct dev_ref *refs;
    double avg[GT_NMETRICS];
    size_t n;
    int any_jax, rc = collect(ctx, &refs, &n, &any_jax);

    if (rc != 0)
        return rc;
    average(refs, n, avg);
    out_puts(o, "type,time ms,percent\n");
    write_rows(o, avg, 0, -1, NULL);
    free(refs);
    return 0;
}

static void json_num(struct out *o, double v)
{
    char buf[48];

    if (!isfinite(v)) {
        out_puts(o, "null");
        return;
    }
    gt_pyrepr(v, buf, sizeof(buf));
    out_puts(o, buf);
}

static void json_metrics(struct out *o, const double *metric)
{
    int k;

    out_putc(o, '{');
    for (k = 0; k < GT_NMETRICS; k++) {
        if (k > 0)
            out_putc(o, ',');
        out_json_cstr(o, gt_metric_names[k]);
        out_puts(o, ":{\"time_ms\":");
        json_num(o, metric[k] / 1e3);
        out_puts(o, ",\"percent\":");
        json_num(o, metric[k] / metric[GT_TOTAL_TIME] * 100);
        out_putc(o, '}');
    }
    out_putc(o, '}');
}

static int timeline_json(struct tool_ctx *ctx, struct out *o)
{
    struct dev_ref *refs;
    double avg[GT_NMETRICS];
    size_t n, i;
    int any_jax, rc = collect(ctx, &refs, &n, &any_jax);

    if (rc != 0)
        return rc;
    out_puts(o, "{\"devices\":[");
    for (i = 0; i < n; i++) {
        if (i > 0)
            out_putc(o, ',');
        out_puts(o, "{\"host\":");
        out_json_cstr(o, refs[i].host);
        out_puts(o, ",\"device\":");
        out_json_cstr(o, refs[i].dev->name);
        out_puts(o, ",\"gpu_pid\":");
        if (refs[i].pytorch)
            out_puts(o, "null");
        else
            out_i64(o, refs[i].dev->gpu_pid);
        out_puts(o, ",\"events\":");
        out_u64(o, refs[i].dev->nevents);
        out_puts(o, ",\"metrics\":");
        json_metrics(o, refs[i].dev->metric);
        out_putc(o, '}');
    }
    average(refs, n, avg);
    out_puts(o, "],\"averages\":");
    json_metrics(o, avg);
    out_puts(o, "}\n");
    free(refs);
    return 0;
}

/* gpu_devices.csv's columns after host,device,gpu_pid,events: the metrics
 * in ms (TraceLens's row order), then busy and idle as % of the total. */
static const char *const device_columns[GT_NMETRICS] = {
    [GT_COMPUTATION_TIME] = "computation_ms",
    [GT_EXPOSED_COMM_TIME] = "exposed_comm_ms",
    [GT_EXPOSED_MEMCPY_TIME] = "exposed_memcpy_ms",
    [GT_BUSY_TIME] = "busy_ms",
    [GT_IDLE_TIME] = "idle_ms",
    [GT_TOTAL_TIME] = "total_ms",
    [GT_TOTAL_COMM_TIME] = "total_comm_ms",
    [GT_TOTAL_MEMCPY_TIME] = "total_memcpy_ms",
};

/* v rounded to 6 decimals: the metrics are sums of doubles, and a person
 * reading 0.033792 ms wants no 0.03379200000036508. */
static void put_6dp(struct out *o, double v)
{
    out_decimal(o, (double)llround(v * 1e6), -6);
}

static void put_pct(struct out *o, double part, double total)
{
    out_putc(o, ',');
    if (total > 0)
        put_6dp(o, part / total * 100);
}

static int devices_csv(struct tool_ctx *ctx, struct out *o)
{
    struct dev_ref *refs;
    size_t n, i;
    int k, any_jax, rc = collect(ctx, &refs, &n, &any_jax);

    if (rc != 0)
        return rc;
    out_puts(o, "host,device,gpu_pid,events");
    for (k = 0; k < GT_NMETRICS; k++) {
        out_putc(o, ',');
        out_puts(o, device_columns[k]);
    }
    out_puts(o, ",busy_pct,idle_pct\n");
    for (i = 0; i < n; i++) {
        const double *m = refs[i].dev->metric;
        out_csv_str(o, refs[i].host, strlen(refs[i].host));
        out_putc(o, ',');
        out_csv_str(o, refs[i].dev->name, strlen(refs[i].dev->name));
        out_putc(o, ',');
        if (!refs[i].pytorch)
            out_i64(o, refs[i].dev->gpu_pid);
        out_putc(o, ',');
        out_u64(o, refs[i].dev->nevents);
        for (k = 0; k < GT_NMETRICS; k++) {
            out_putc(o, ',');
            put_6dp(o, m[k] / 1e3);
        }
        put_pct(o, m[GT_BUSY_TIME], m[GT_TOTAL_TIME]);
        put_pct(o, m[GT_IDLE_TIME], m[GT_TOTAL_TIME]);
        out_putc(o, '\n');
    }
    free(refs);
    return 0;
}

const struct tool tool_gpu_devices_csv = {
    .file = "gpu_devices.csv",
    .scope = TOOL_RUN | TOOL_HOST,
    .listed = tool_listed_any_trace,
    .produce = devices_csv,
};

const struct tool tool_gpu_timeline_csv = {
    .file = "gpu_timeline.csv",
    .scope = TOOL_RUN | TOOL_HOST,
    .listed = tool_listed_any_trace,
    .produce = timeline_csv,
};

const struct tool tool_gpu_events_averages_csv = {
    .file = "gpu_events_averages.csv",
    .scope = TOOL_RUN | TOOL_HOST,
    .listed = tool_listed_any_trace,
    .produce = averages_csv,
};

const struct tool tool_gpu_timeline_json = {
    .file = "gpu_timeline.json",
    .scope = TOOL_RUN | TOOL_HOST,
    .listed = tool_listed_any_trace,
    .produce = timeline_json,
};
