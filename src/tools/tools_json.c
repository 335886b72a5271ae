/*
 * tools_json.c - tools.json: the tool tags of a run, as XProf's run_tools
 * route returns them (xprof/convert/xplane_to_tool_names.cc), limited to the
 * tools this build serves, in XProf's order.
 */
#include <string.h>

#include "op_stats/dcn_slack.h"
#include "reader/stats.h"
#include "tool.h"

/* XProf's display order; tags not listed here follow alphabetically. */
static const char *const tag_order[] = {
    "overview_page",
    "trace_viewer",
    "trace_viewer@",
    "graph_viewer",
    "op_profile",
    "hlo_op_profile",
    "input_pipeline_analyzer",
    "input_pipeline",
    "kernel_stats",
    "memory_profile",
    "memory_viewer",
    "roofline_model",
    "perf_counters",
    "pod_viewer",
    "framework_op_stats",
    "tensorflow_stats",
    "hlo_op_stats",
    "hlo_stats",
    "inference_profile",
    "megascale_stats",
    NULL,
};

static int tag_rank(const char *tag)
{
    int i;

    for (i = 0; tag_order[i] != NULL; i++) {
        if (strcmp(tag_order[i], tag) == 0)
            return i;
    }
    return 1000;
}

/* Whether some host has a plane whose name starts with prefix. */
static int has_plane(struct tool_ctx *ctx, const char *prefix)
{
    size_t n = strlen(prefix);
    uint32_t h, p;

    for (h = 0; h < ctx->snap->nhosts; h++) {
        struct xspace *xs;
        if (snapshot_xspace(ctx->snap, ctx->snap->hosts[h], &xs, NULL) != 0)
            continue;
        for (p = 0; p < xs->nplanes; p++) {
            if (strncmp(xs->planes[p].name, prefix, n) == 0)
                return 1;
        }
    }
    return 0;
}

static int has_gpu_plane(struct tool_ctx *ctx)
{
    return has_plane(ctx, "/device:GPU:");
}

/* Whether the run has HLO protos: .hlo_proto.pb files, or a host whose
 * /host:metadata plane has the Hlo Proto stat (XProf lists memory_viewer
 * and graph_viewer then). */
static int has_hlo(struct tool_ctx *ctx)
{
    uint32_t h, p;

    if (snapshot_count(ctx->snap, SRC_HLO_PROTO) > 0)
        return 1;
    for (h = 0; h < ctx->snap->nhosts; h++) {
        struct xspace *xs;
        if (snapshot_host_file(ctx->snap, ctx->snap->hosts[h], SRC_XPLANE) == NULL ||
            snapshot_xspace(ctx->snap, ctx->snap->hosts[h], &xs, NULL) != 0)
            continue;
        for (p = 0; p < xs->nplanes; p++) {
            const struct xp_plane *pl = &xs->planes[p];
            if (strcmp(pl->name, "/host:metadata") == 0 &&
                (pl->stat_id[XS_HLO_PROTO] != XP_NO_STAT ||
                 xp_plane_stat_id_by_name(pl, "HLO Proto") != XP_NO_STAT))
                return 1;
        }
    }
    return 0;
}

/* XProf's has_dcn_collective_stats: the first host has MegaScale: events. */
static int has_megascale(struct tool_ctx *ctx)
{
    struct xspace *xs;

    return ctx->snap->nhosts > 0 &&
           snapshot_xspace(ctx->snap, ctx->snap->hosts[0], &xs, NULL) == 0 &&
           dcn_xspace_has_megascale(xs);
}

/* Whether the first host has a TPU event with a counter_value stat (XProf
 * lists perf_counters and utilization_viewer then): planes without the
 * stat's metadata are passed over without decoding. */
static int has_counters(struct tool_ctx *ctx)
{
    struct xspace *xs;
    uint32_t p, l, e;
    int maybe = 0;

    if (ctx->snap->nhosts == 0 ||
        snapshot_host_file(ctx->snap, ctx->snap->hosts[0], SRC_XPLANE) == NULL ||
        snapshot_xspace(ctx->snap, ctx->snap->hosts[0], &xs, NULL) != 0)
        return 0;
    for (p = 0; p < xs->nplanes; p++)
        if (strncmp(xs->planes[p].name, "/device:TPU:", 12) == 0 &&
            xs->planes[p].stat_id[XS_COUNTER_VALUE] != XP_NO_STAT)
            maybe = 1;
    if (!maybe || snapshot_xspace_decoded(ctx->snap, ctx->snap->hosts[0], &xs, NULL) != 0)
        return 0;
    for (p = 0; p < xs->nplanes; p++) {
        const struct xp_plane *pl = &xs->planes[p];
        if (strncmp(pl->name, "/device:TPU:", 12) != 0 ||
            pl->stat_id[XS_COUNTER_VALUE] == XP_NO_STAT)
            continue;
        for (l = 0; l < pl->nlines; l++) {
            for (e = 0; e < pl->lines[l].nevents; e++) {
                struct xp_stat st;
                if (xp_event_stat(pl, &pl->lines[l], &pl->lines[l].events[e], XS_COUNTER_VALUE,
                                  &st))
                    return 1;
            }
        }
    }
    return 0;
}

static int tools_produce(struct tool_ctx *ctx, struct out *o)
{
    const char *tags[64];
    int n = 0, i, j, has_streaming = 0;

    for (i = 0; tool_table[i] != NULL && n < 64; i++) {
        const struct tool *t = tool_table[i];
        if (t->tag == NULL || !(t->scope & TOOL_RUN) || (t->listed && !t->listed(ctx->snap)))
            continue;
        for (j = 0; j < n; j++) {
            if (strcmp(tags[j], t->tag) == 0)
                break;
        }
        if (j < n)
            continue;
        /* tools XProf serves but never lists (xplane_to_tool_names.cc) */
        if (strcmp(t->tag, "smart_suggestion") == 0 || strcmp(t->tag, "pod_viewer") == 0 ||
            strcmp(t->tag, "inference_profile") == 0)
            continue;
        if (strcmp(t->tag, "kernel_stats") == 0 && !has_gpu_plane(ctx))
            continue;
        if ((strcmp(t->tag, "memory_viewer") == 0 || strcmp(t->tag, "graph_viewer") == 0) &&
            !has_hlo(ctx))
            continue;
        /* the HLO op views need HLO modules (GPU) or a TPU's own op stats */
        if ((strcmp(t->tag, "hlo_stats") == 0 || strcmp(t->tag, "op_profile") == 0 ||
             strcmp(t->tag, "roofline_model") == 0) &&
            !has_hlo(ctx) && !has_plane(ctx, "/device:TPU:"))
            continue;
        if (strcmp(t->tag, "megascale_stats") == 0 && !has_megascale(ctx))
            continue;
        if ((strcmp(t->tag, "perf_counters") == 0 || strcmp(t->tag, "utilization_viewer") == 0) &&
            !has_counters(ctx))
            continue;
        if (strcmp(t->tag, "trace_viewer@") == 0)
            has_streaming = 1;
        tags[n++] = t->tag;
    }
    /* Insertion sort by XProf's rank, then name. */
    for (i = 1; i < n; i++) {
        const char *t = tags[i];
        for (j = i; j > 0; j--) {
            int a = tag_rank(tags[j - 1]), b = tag_rank(t);
            if (a < b || (a == b && strcmp(tags[j - 1], t) <= 0))
                break;
            tags[j] = tags[j - 1];
        }
        tags[j] = t;
    }
    out_putc(o, '[');
    for (i = 0, j = 0; i < n; i++) {
        if (has_streaming && strcmp(tags[i], "trace_viewer") == 0)
            continue;
        if (j++ > 0)
            out_puts(o, ", ");
        out_json_cstr(o, tags[i]);
    }
    out_puts(o, "]\n");
    return 0;
}

const struct tool tool_tools_json = {
    .file = "tools.json",
    .scope = TOOL_RUN,
    .produce = tools_produce,
};
