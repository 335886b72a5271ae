/*
 * utilization_viewer.c - utilization_viewer.json: XProf's utilization
 * viewer (tag "utilization_viewer"; xprof/convert/
 * xplane_to_utilization_viewer.cc): for every TPU plane of a chip XProf has
 * counter tables for (TPU v6e, v7x; tpu_counters.h) and with a device_id
 * stat, every line holding counter events is one sample, and each sample
 * gives XProf's utilization metrics, one row each: host (always 0),
 * device, sample (the line id), node, name, achieved, peak, unit. Device
 * and sample pass through int32 and uint64 as in XProf's TpuCounterUtil.
 *
 * XProf takes one host. A run without counter samples answers XProf's
 * empty table and says why in errors.txt.
 */
#include <errno.h>
#include <string.h>

#include "host_facts.h"
#include "hw_common.h"
#include "tpu_sample.h"

static const struct query_key uv_keys[] = {
    {"host", Q_STRING, 0, 0},
    {NULL, 0, 0, 0},
};

static const char uv_cols[] =
    "{\"cols\":[{\"id\":\"host\",\"label\":\"Host\",\"type\":\"number\"},"
    "{\"id\":\"device\",\"label\":\"Device\",\"type\":\"number\"},"
    "{\"id\":\"sample\",\"label\":\"Sample\",\"type\":\"number\"},"
    "{\"id\":\"node\",\"label\":\"Node\",\"type\":\"number\"},"
    "{\"id\":\"name\",\"label\":\"Name\",\"type\":\"string\"},"
    "{\"id\":\"achieved\",\"label\":\"Achieved\",\"type\":\"number\"},"
    "{\"id\":\"peak\",\"label\":\"Peak\",\"type\":\"number\"},"
    "{\"id\":\"unit\",\"label\":\"Unit\",\"type\":\"string\"}],\"rows\":[";

/* XProf's int -> uint64 -> double of an id held as int. */
static double as_int_id(int64_t v)
{
    return (double)(uint64_t)(int64_t)(int32_t)v;
}

/* The rows of one plane; *rows counts them. */
static int plane_rows(struct tool_ctx *ctx, const struct tpu_plan *plan, const struct xp_plane *pl,
                      int64_t device_id, int ordered, uint64_t *rows, struct out *o)
{
    struct tpu_sampler s;
    struct tpu_metric m[TPU_MAX_METRICS];
    uint32_t l;
    int rc, i, n;

    if ((rc = tpu_sampler_init(&s, plan, pl, ctx->err)) != 0)
        return rc;
    for (l = 0; l < pl->nlines && rc == 0; l++) {
        const struct xp_line *ln = &pl->lines[l];
        if (tpu_sample_line(&s, ln, ordered ? TPU_SAMPLE_ORDERED : TPU_SAMPLE_LAST, NULL) == 0)
            continue;
        n = tpu_metrics(plan, s.v, m);
        if (*rows + (uint64_t)n > HW_MAX_ROWS) {
            rc = xp_err_set(ctx->err, -EIO,
                            "%s: more than %d utilization rows (one sample of counters per line "
                            "of %s, %u lines): too many to answer",
                            ctx->tool->file, HW_MAX_ROWS, pl->name, pl->nlines);
            break;
        }
        for (i = 0; i < n; i++) {
            out_puts(o, *rows > 0 ? ",{\"c\":[" : "{\"c\":[");
            hw_num_cell(o, 0.0, 1);
            hw_num_cell(o, as_int_id(device_id), 0);
            hw_num_cell(o, as_int_id(ln->id), 0);
            hw_num_cell(o, (double)m[i].node, 0);
            hw_str_cell(o, m[i].name, strlen(m[i].name), 0);
            hw_num_cell(o, m[i].achieved, 0);
            hw_num_cell(o, m[i].peak, 0);
            hw_str_cell(o, m[i].unit, strlen(m[i].unit), 0);
            out_puts(o, "]}");
            (*rows)++;
        }
    }
    tpu_sampler_free(&s);
    return rc;
}

static int uv_produce(struct tool_ctx *ctx, struct out *o)
{
    struct tpu_plan plans[2];
    int have_plan[2] = {0, 0}, grouped, rc, c;
    const char *host = NULL, *why = "it has no TPU plane";
    const struct host_facts *f;
    struct xspace *xs = NULL;
    uint64_t rows = 0;
    uint32_t p;

    if ((rc = hw_one_host(ctx, "Utilization viewer tool", &host)) != 0)
        return rc;
    if (snapshot_host_file(ctx->snap, host, SRC_XPLANE) == NULL)
        return xp_err_set(ctx->err, -ENOENT, "%s has no xplane for the utilization viewer", host);
    if ((rc = host_facts_get(ctx->snap, host, &f, ctx->err)) != 0)
        return rc;
    if (f->tpu_plane && (rc = snapshot_xspace_decoded(ctx->snap, host, &xs, ctx->err)) != 0)
        return rc;
    grouped = xs != NULL && xspace_is_grouped(xs);
    out_puts(o, uv_cols);
    for (p = 0; xs != NULL && p < xs->nplanes && rc == 0; p++) {
        const struct xp_plane *pl = &xs->planes[p];
        struct hw_tpu_identity id;
        if (strncmp(pl->name, "/device:TPU:", 12) != 0)
            continue;
        hw_tpu_identity(pl, &id);
        if (id.chip == TPU_CHIP_NONE) {
            why = "its TPU planes are of a chip XProf has no counter tables for (only TPU v6 "
                  "Lite and TPU v7x)";
            continue;
        }
        if (id.device_id == -1) {
            why = "its TPU planes have no device_id stat";
            continue;
        }
        if (!tpu_plane_has_counters(pl)) {
            why = "its TPU planes have no counter_value stats (no counter planes)";
            continue;
        }
        c = id.chip == TPU_CHIP_V7X;
        if (!have_plan[c]) {
            if ((rc = tpu_plan_init(&plans[c], id.chip, ctx->err)) != 0)
                break;
            have_plan[c] = 1;
        }
        why = "its TPU planes hold no counter samples";
        rc = plane_rows(ctx, &plans[c], pl, id.device_id, !grouped && hw_is_tensor_core(pl->name),
                        &rows, o);
    }
    for (c = 0; c < 2; c++)
        if (have_plan[c])
            tpu_plan_free(&plans[c]);
    if (rc != 0)
        return rc;
    out_puts(o, "]}");
    if (rows == 0)
        snapshot_log(ctx->snap, "%s: empty, as XProf answers it: host %s: %s", ctx->tool->file,
                     host, why);
    return 0;
}

const struct tool tool_utilization_viewer_json = {
    .file = "utilization_viewer.json",
    .tag = "utilization_viewer",
    .scope = TOOL_RUN | TOOL_HOST,
    .flags = TOOL_ONE_HOST,
    .keys = uv_keys,
    .listed = tool_listed_xplane,
    .produce = uv_produce,
};
