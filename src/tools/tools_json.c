/*
 * tools_json.c - tools.json: the tool tags of a run, as XProf's run_tools
 * route returns them (xprof/convert/xplane_to_tool_names.cc), limited to the
 * tools this build serves, in XProf's order.
 */
#include <string.h>

#include "host_facts.h"

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

/* The facts of host h (all 0 when they cannot be had). */
static struct host_facts facts_of(struct tool_ctx *ctx, uint32_t h)
{
    static const struct host_facts none;
    const struct host_facts *f;

    if (host_facts_get(ctx->snap, ctx->snap->hosts[h], &f, NULL) != 0)
        return none;
    return *f;
}

static int has_gpu_plane(struct tool_ctx *ctx)
{
    for (uint32_t h = 0; h < ctx->snap->nhosts; h++)
        if (facts_of(ctx, h).gpu_plane)
            return 1;
    return 0;
}

static int has_tpu_plane(struct tool_ctx *ctx)
{
    for (uint32_t h = 0; h < ctx->snap->nhosts; h++)
        if (facts_of(ctx, h).tpu_plane)
            return 1;
    return 0;
}

/* Whether the run has HLO protos: .hlo_proto.pb files, or a host whose
 * /host:metadata plane has the Hlo Proto stat (XProf lists memory_viewer
 * and graph_viewer then). */
static int has_hlo(struct tool_ctx *ctx)
{
    if (snapshot_count(ctx->snap, SRC_HLO_PROTO) > 0)
        return 1;
    for (uint32_t h = 0; h < ctx->snap->nhosts; h++)
        if (facts_of(ctx, h).hlo_metadata)
            return 1;
    return 0;
}

/* XProf's has_dcn_collective_stats: the first host has MegaScale: events. */
static int has_megascale(struct tool_ctx *ctx)
{
    return ctx->snap->nhosts > 0 && facts_of(ctx, 0).megascale;
}

/* Whether the first host has a TPU event with a counter_value stat (XProf
 * lists perf_counters and utilization_viewer then). */
static int has_counters(struct tool_ctx *ctx)
{
    return ctx->snap->nhosts > 0 && facts_of(ctx, 0).tpu_counter_ev;
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
            !has_hlo(ctx) && !has_tpu_plane(ctx))
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
