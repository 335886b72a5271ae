/*
 * memory_profile.c - memory_profile.json: XProf's memory profile of one host
 * (tag "memory_profile"; src/memory/memory_profile.h computes it), as
 * protobuf's JSON printer writes the MemoryProfile message with every field
 * (64-bit integers quoted, enums by name, fields in number order, the
 * allocator map by key). A host without a /host:CPU plane answers "" as
 * XProf does. memory_profile.csv is ours: the allocations live at each
 * allocator's peak, one row each, for pandas.
 *
 * XProf takes one host: a run of several lists them under hosts/<host>/
 * only, and its run-level name needs ?host=H.
 */
#include <errno.h>
#include <string.h>

#include "memory/memory_profile.h"
#include "out/pbjson.h"
#include "tool.h"
#include "xplane/group.h"

static const struct query_key memory_keys[] = {
    {"host", Q_STRING, 0, 0},
    {NULL, 0, 0, 0},
};

/* The host of the call: ctx->host, ?host=, or the run's only host. */
static int pick_host(struct tool_ctx *ctx, const char **hostp)
{
    const char *host = query_get(ctx->q, "host");

    if (host != NULL && *host != 0) {
        if (snapshot_host_index(ctx->snap, host) < 0)
            return xp_err_set(ctx->err, -EINVAL, "host=%s: no such host in this run", host);
        if (ctx->host != NULL && strcmp(ctx->host, host) != 0)
            return xp_err_set(ctx->err, -EINVAL, "host=%s: this file is of host %s", host,
                              ctx->host);
        *hostp = host;
        return 0;
    }
    if (tool_host_count(ctx) != 1)
        return xp_err_set(ctx->err, -EINVAL,
                          "XProf's memory profile takes one host and this run has %d: add "
                          "?host=<host> or read hosts/<host>/memory_profile.json",
                          tool_host_count(ctx));
    *hostp = tool_host(ctx, 0);
    return 0;
}

static int build(struct tool_ctx *ctx, struct mp_profile **mpp)
{
    const struct xp_groups *g;
    struct xspace *xs;
    const char *host = NULL;
    int rc = pick_host(ctx, &host);

    if (rc != 0)
        return rc;
    if (snapshot_host_file(ctx->snap, host, SRC_XPLANE) == NULL)
        return xp_err_set(ctx->err, -ENOENT, "%s has no xplane for the memory profile", host);
    if ((rc = snapshot_xspace_decoded(ctx->snap, host, &xs, ctx->err)) != 0 ||
        (rc = snapshot_groups(ctx->snap, host, &g, ctx->err)) != 0)
        return rc;
    return mp_profile_build(xs, g, MP_MAX_SNAPSHOTS, mpp, ctx->err);
}

static void key(struct out *o, int *first, const char *name)
{
    if (!*first)
        out_putc(o, ',');
    *first = 0;
    out_putc(o, '"');
    out_puts(o, name);
    out_puts(o, "\":");
}

static void text(struct out *o, const struct mp_profile *mp, uint32_t id)
{
    size_t n;
    const char *s = mp_text(mp, id, &n);

    pbjson_str(o, s, n);
}

static void write_stats(struct out *o, const struct mp_stats *st)
{
    int f = 1;

    out_putc(o, '{');
    key(o, &f, "stackReservedBytes");
    pbjson_i64(o, st->stack_reserved_bytes);
    key(o, &f, "heapAllocatedBytes");
    pbjson_i64(o, st->heap_allocated_bytes);
    key(o, &f, "freeMemoryBytes");
    pbjson_i64(o, st->free_memory_bytes);
    key(o, &f, "fragmentation");
    pbjson_double(o, st->fragmentation);
    key(o, &f, "peakBytesInUse");
    pbjson_i64(o, st->peak_bytes_in_use);
    out_putc(o, '}');
}

static const char *activity_name(enum mp_activity a)
{
    switch (a) {
    case MP_ALLOCATION:
        return "ALLOCATION";
    case MP_DEALLOCATION:
        return "DEALLOCATION";
    default:
        return "UNKNOWN_ACTIVITY";
    }
}

static void write_meta(struct out *o, const struct mp_profile *mp, const struct mp_meta *m)
{
    int f = 1;

    out_putc(o, '{');
    key(o, &f, "memoryActivity");
    out_putc(o, '"');
    out_puts(o, activity_name(m->activity));
    out_putc(o, '"');
    key(o, &f, "requestedBytes");
    pbjson_i64(o, m->requested_bytes);
    key(o, &f, "allocationBytes");
    pbjson_i64(o, m->allocation_bytes);
    key(o, &f, "address");
    pbjson_u64(o, m->address);
    key(o, &f, "tfOpName");
    text(o, mp, m->tf_op_name);
    key(o, &f, "stepId");
    pbjson_i64(o, m->step_id);
    key(o, &f, "regionType");
    text(o, mp, m->region_type);
    key(o, &f, "dataType");
    text(o, mp, m->data_type);
    key(o, &f, "tensorShape");
    text(o, mp, m->tensor_shape);
    out_putc(o, '}');
}

static void write_snapshot(struct out *o, const struct mp_profile *mp, const struct mp_snapshot *sn)
{
    int f = 1;

    out_putc(o, '{');
    key(o, &f, "timeOffsetPs");
    pbjson_i64(o, sn->time_offset_ps);
    key(o, &f, "aggregationStats");
    write_stats(o, &sn->stats);
    key(o, &f, "activityMetadata");
    write_meta(o, mp, &sn->meta);
    out_putc(o, '}');
}

static void write_allocator(struct out *o, const struct mp_profile *mp,
                            const struct mp_allocator *a)
{
    uint32_t i;
    int f = 1, g = 1;

    out_putc(o, '{');
    key(o, &f, "memoryProfileSnapshots");
    out_putc(o, '[');
    for (i = 0; i < a->nkept; i++) {
        if (i > 0)
            out_putc(o, ',');
        write_snapshot(o, mp, &a->snaps[a->kept[i]]);
    }
    out_putc(o, ']');
    key(o, &f, "profileSummary");
    out_putc(o, '{');
    key(o, &g, "peakBytesUsageLifetime");
    pbjson_i64(o, a->summary.peak_bytes_usage_lifetime);
    key(o, &g, "peakStats");
    write_stats(o, &a->summary.peak_stats);
    key(o, &g, "peakStatsTimePs");
    pbjson_i64(o, a->summary.peak_stats_time_ps);
    key(o, &g, "memoryCapacity");
    pbjson_i64(o, a->summary.memory_capacity);
    out_putc(o, '}');
    key(o, &f, "activeAllocations");
    out_putc(o, '[');
    for (i = 0; i < a->nactive; i++) {
        int h = 1;
        if (i > 0)
            out_putc(o, ',');
        out_putc(o, '{');
        key(o, &h, "snapshotIndex");
        pbjson_i64(o, a->active[i].snapshot_index);
        key(o, &h, "specialIndex");
        pbjson_i64(o, a->active[i].special_index);
        key(o, &h, "numOccurrences");
        pbjson_i64(o, a->active[i].num_occurrences);
        out_putc(o, '}');
    }
    out_putc(o, ']');
    key(o, &f, "specialAllocations");
    out_putc(o, '[');
    for (i = 0; i < a->nspecial; i++) {
        if (i > 0)
            out_putc(o, ',');
        write_meta(o, mp, &a->special[i]);
    }
    out_putc(o, ']');
    key(o, &f, "sampledTimelineSnapshots");
    out_putc(o, '[');
    for (i = 0; i < a->nsampled; i++) {
        if (i > 0)
            out_putc(o, ',');
        write_snapshot(o, mp, &a->snaps[a->sampled[i]]);
    }
    out_puts(o, "]}");
}

static void write_profile(struct out *o, const struct mp_profile *mp)
{
    uint32_t i;
    int f = 1;

    out_putc(o, '{');
    key(o, &f, "memoryProfilePerAllocator");
    out_putc(o, '{');
    for (i = 0; i < mp->nallocators; i++) {
        if (i > 0)
            out_putc(o, ',');
        pbjson_str(o, mp->allocators[i].memory_id, strlen(mp->allocators[i].memory_id));
        out_putc(o, ':');
        write_allocator(o, mp, &mp->allocators[i]);
    }
    out_putc(o, '}');
    key(o, &f, "numHosts");
    out_putc(o, '1');
    key(o, &f, "memoryIds");
    out_putc(o, '[');
    for (i = 0; i < mp->nallocators; i++) {
        if (i > 0)
            out_putc(o, ',');
        pbjson_str(o, mp->allocators[i].memory_id, strlen(mp->allocators[i].memory_id));
    }
    out_putc(o, ']');
    key(o, &f, "version");
    out_putc(o, '1');
    key(o, &f, "hloModules");
    out_putc(o, '[');
    for (i = 0; i < mp->nhlo_modules; i++) {
        const struct mp_hlo_module *m = &mp->hlo_modules[i];
        int g = 1;
        if (i > 0)
            out_putc(o, ',');
        out_putc(o, '{');
        key(o, &g, "name");
        text(o, mp, m->name);
        key(o, &g, "startTimePs");
        pbjson_i64(o, m->start_time_ps);
        key(o, &g, "endTimePs");
        pbjson_i64(o, m->end_time_ps);
        key(o, &g, "id");
        pbjson_i64(o, m->id);
        key(o, &g, "planeName");
        text(o, mp, m->plane_name);
        out_putc(o, '}');
    }
    out_puts(o, "]}");
}

static int memory_json(struct tool_ctx *ctx, struct out *o)
{
    struct mp_profile *mp;
    int rc = build(ctx, &mp);

    if (rc != 0)
        return rc;
    if (mp->has_host_plane)
        write_profile(o, mp);
    else
        snapshot_log(ctx->snap,
                     "memory_profile.json: %s has no /host:CPU plane, so XProf's "
                     "answer is empty",
                     ctx->host != NULL ? ctx->host : "the host");
    mp_profile_free(mp);
    return 0;
}

static void csv_text(struct out *o, const struct mp_profile *mp, uint32_t id)
{
    size_t n;
    const char *s = mp_text(mp, id, &n);

    out_csv_str(o, s, n);
}

/* One row per live allocation at each allocator's peak, as the memory
 * profile's breakdown table shows them. */
static int memory_csv(struct tool_ctx *ctx, struct out *o)
{
    struct mp_profile *mp;
    uint32_t i, j;
    int rc = build(ctx, &mp);

    if (rc != 0)
        return rc;
    out_puts(o, "memory_id,op_name,occurrences,allocation_bytes,requested_bytes,total_bytes,"
                "region_type,data_type,shape,step_id,time_ps\n");
    for (i = 0; i < mp->nallocators; i++) {
        const struct mp_allocator *a = &mp->allocators[i];
        for (j = 0; j < a->nactive; j++) {
            const struct mp_active *r = &a->active[j];
            const struct mp_meta *m;
            int64_t time = a->summary.peak_stats_time_ps;
            if (r->snapshot_index < 0) {
                m = &a->special[r->special_index];
            } else {
                m = &a->snaps[a->kept[r->snapshot_index]].meta;
                time = a->snaps[a->kept[r->snapshot_index]].time_offset_ps;
            }
            out_csv_str(o, a->memory_id, strlen(a->memory_id));
            out_putc(o, ',');
            csv_text(o, mp, m->tf_op_name);
            out_putc(o, ',');
            out_i64(o, r->num_occurrences);
            out_putc(o, ',');
            out_i64(o, m->allocation_bytes);
            out_putc(o, ',');
            out_i64(o, m->requested_bytes);
            out_putc(o, ',');
            out_i64(o, (int64_t)((uint64_t)m->allocation_bytes * (uint64_t)r->num_occurrences));
            out_putc(o, ',');
            csv_text(o, mp, m->region_type);
            out_putc(o, ',');
            csv_text(o, mp, m->data_type);
            out_putc(o, ',');
            csv_text(o, mp, m->tensor_shape);
            out_putc(o, ',');
            out_i64(o, m->step_id);
            out_putc(o, ',');
            out_i64(o, time);
            out_putc(o, '\n');
        }
    }
    mp_profile_free(mp);
    return 0;
}

const struct tool tool_memory_profile_json = {
    .file = "memory_profile.json",
    .tag = "memory_profile",
    .scope = TOOL_RUN | TOOL_HOST,
    .flags = TOOL_ONE_HOST,
    .keys = memory_keys,
    .listed = tool_listed_xplane,
    .produce = memory_json,
};

const struct tool tool_memory_profile_csv = {
    .file = "memory_profile.csv",
    .scope = TOOL_RUN | TOOL_HOST,
    .flags = TOOL_ONE_HOST,
    .keys = memory_keys,
    .listed = tool_listed_xplane,
    .produce = memory_csv,
};
