/*
 * group_tpu.c - the TPU part of XProf's grouping (GroupTpuEventsOSS and
 * GroupTpuXPlaneEvents, openxla/xla xla/tsl/profiler/utils/group_events.cc):
 *
 *   - a TPU core plane's grouping line: its step line if that has events,
 *     else its module line (the gather pass makes only that line's events
 *     nodes);
 *   - the lock step: when no TensorCore step node was reached by a host
 *     group, each core's grouping-line events are groups of their own,
 *     numbered from the next id in line order, every core from the same id;
 *   - then, on every device plane: the Steps line's consecutive events of
 *     one group merge into one marker and its ungrouped events are dropped
 *     (MergeHostSteps; unless none is grouped), and every event of the other
 *     lines takes the group of the grouping-line event it overlaps
 *     (GroupLine, ends inclusive).
 * The merged markers go to g->steps[plane] as device timespans (the span
 * from device_offset_ps / device_duration_ps when the first merged event
 * has both, else the events' own span), which is what the TPU step db reads.
 */
#include "group_int.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "reader/tpu_planes.h"

int gr_tpu_grouping_line(const struct xp_plane *pl)
{
    int step = -1, module = -1;
    uint32_t l;

    for (l = 0; l < pl->nlines; l++) {
        if (tpu_is_step_line(pl->lines[l].name))
            step = (int)l;
        else if (tpu_is_module_line(pl->lines[l].name))
            module = (int)l;
    }
    if (step >= 0 && pl->lines[step].nevents > 0)
        return step;
    if (module >= 0 && pl->lines[module].nevents > 0)
        return module;
    return -1;
}

int gr_on_tpu_parent_line(const struct forest *f, uint32_t node)
{
    uint32_t p, l, e;
    const char *name;

    gr_node_where(f, node, &p, &l, &e);
    name = f->xs->planes[p].lines[l].name;
    return tpu_is_step_line(name) || tpu_is_module_line(name);
}

/* RootNeedsGrouping of a step node (root level 0): not grouped, and no
 * ancestor is a root of level 0. */
static int needs_grouping(struct forest *f, uint32_t node, int *rc)
{
    if (f->gid[node] >= 0)
        return 0;
    return gr_find_ancestor(f, node, 0, -1, 0, rc) == NO_NODE;
}

int gr_tpu_lock_step(struct forest *f, struct xp_groups *g, int32_t next)
{
    const uint32_t *lines = f->tpu_tc_lines.v;
    size_t c;
    uint32_t node;
    int rc = 0;

    for (c = 0; c < f->tpu_tc_lines.n; c++) {
        for (node = f->line_base[lines[c]]; node < f->line_base[lines[c] + 1]; node++) {
            if (!needs_grouping(f, node, &rc))
                return rc; /* some step node is grouped: no lock step */
        }
    }
    for (c = 0; c < f->tpu_tc_lines.n && rc == 0; c++) {
        int32_t id = next;
        for (node = f->line_base[lines[c]]; node < f->line_base[lines[c] + 1] && rc == 0; node++) {
            if (needs_grouping(f, node, &rc) && rc == 0)
                rc = gr_process_root(f, g, node, id++);
        }
    }
    return rc;
}

/* One event of a grouping line as GroupLine reads it: its own span (merged
 * Steps events span from the first to the last) and group. */
struct group_span {
    int64_t begin, end;
    int32_t gid;
};

/* Room for the Steps dispositions of every plane (once). */
static int tpu_step_tables(struct xp_groups *g, uint32_t nplanes)
{
    uint32_t p;

    if (g->tpu_step_end != NULL)
        return 0;
    g->tpu_step_line = malloc((nplanes ? nplanes : 1) * sizeof(*g->tpu_step_line));
    g->tpu_step_end = calloc(nplanes ? nplanes : 1, sizeof(*g->tpu_step_end));
    if (g->tpu_step_line == NULL || g->tpu_step_end == NULL)
        return -ENOMEM;
    for (p = 0; p < nplanes; p++)
        g->tpu_step_line[p] = -1;
    return 0;
}

/* MergeHostSteps of a Steps line: the merged events' spans and groups into
 * *spans (raw spans, for GroupLine), their device spans into the plane's
 * markers, and each event's end or XP_STEP_DROPPED into tpu_step_end. */
static int merge_steps(struct forest *f, struct xp_groups *g, uint32_t p, uint32_t l,
                       struct group_span **spans, uint32_t *nspans)
{
    const struct xp_plane *pl = &f->xs->planes[p];
    const struct xp_line *ln = &pl->lines[l];
    uint32_t base = f->line_base[f->plane_first[p] + l], e, n = 0, kept = 0, head = 0;
    size_t cnt = ln->nevents ? ln->nevents : 1;
    struct group_span *v = malloc(cnt * sizeof(*v));
    struct xp_step_marker *mk = malloc(cnt * sizeof(*mk));
    int64_t *ends = malloc(cnt * sizeof(*ends));
    int merging = 0, dev = 0;

    if (v == NULL || mk == NULL || ends == NULL || tpu_step_tables(g, f->xs->nplanes) != 0) {
        free(v);
        free(mk);
        free(ends);
        return -ENOMEM;
    }
    for (e = 0; e < ln->nevents; e++) {
        const struct xp_event *ev = &ln->events[e];
        int32_t gid = f->gid[base + e];
        int64_t b = xp_event_start_ps(ln, ev), end = b + ev->duration_ps, db, de;
        int has;
        ends[e] = XP_STEP_DROPPED;
        if (gid < 0) {
            merging = 0; /* dropped: an ungrouped step */
            continue;
        }
        kept++;
        has = tpu_device_span(pl, ln, ev, &db, &de);
        if (!merging || v[n - 1].gid != gid) {
            v[n] = (struct group_span){b, end, gid};
            mk[n] = (struct xp_step_marker){gid, db, de};
            ends[e] = end;
            head = e;
            dev = has;
            merging = 1;
            n++;
            continue;
        }
        /* a multi-module step: the first event now ends where this one does */
        v[n - 1].end = end;
        ends[head] = end;
        if (dev) {
            if (db < mk[n - 1].begin_ps)
                mk[n - 1].begin_ps = db;
            if (de > mk[n - 1].end_ps)
                mk[n - 1].end_ps = de;
        } else {
            mk[n - 1].end_ps = end;
        }
    }
    if (kept == 0) {
        /* no Steps event is grouped: XProf leaves the line as it is */
        for (e = 0; e < ln->nevents; e++)
            ends[e] = xp_event_start_ps(ln, &ln->events[e]) + ln->events[e].duration_ps;
        n = 0;
    }
    free(g->steps[p]);
    g->steps[p] = mk;
    g->nsteps[p] = n;
    g->tpu_step_line[p] = (int32_t)l;
    g->tpu_step_end[p] = ends;
    *spans = v;
    *nspans = n;
    return 0;
}

/* The grouping line's events as GroupLine reads them (not the Steps line). */
static int line_spans(struct forest *f, uint32_t p, uint32_t l, struct group_span **spans,
                      uint32_t *nspans)
{
    const struct xp_line *ln = &f->xs->planes[p].lines[l];
    uint32_t base = f->line_base[f->plane_first[p] + l], e;
    struct group_span *v = malloc((ln->nevents ? ln->nevents : 1) * sizeof(*v));

    if (v == NULL)
        return -ENOMEM;
    for (e = 0; e < ln->nevents; e++) {
        int64_t b = xp_event_start_ps(ln, &ln->events[e]);
        v[e] = (struct group_span){b, b + ln->events[e].duration_ps, f->gid[base + e]};
    }
    *spans = v;
    *nspans = ln->nevents;
    return 0;
}

/* GroupLine: each event of line l without a group takes the group of the
 * grouping event it overlaps (GroupQueue over XEventContextTracker: the
 * event found last while it still overlaps, else the next one that ends at
 * or after the event's start and starts at or before its end). */
static void group_line(struct forest *f, uint32_t p, uint32_t l, const struct group_span *gs,
                       uint32_t ngs)
{
    const struct xp_line *ln = &f->xs->planes[p].lines[l];
    uint32_t base = f->line_base[f->plane_first[p] + l], e;
    int64_t cur = -1, i;
    int cached = 0;

    for (e = 0; e < ln->nevents; e++) {
        int64_t b = xp_event_start_ps(ln, &ln->events[e]), end = b + ln->events[e].duration_ps;
        if (!cached || !(gs[cur].begin <= end && b <= gs[cur].end)) {
            cached = cur >= 0 && gs[cur].begin <= end && b <= gs[cur].end;
            for (i = cur + 1; !cached && i < (int64_t)ngs; i++) {
                if (gs[i].begin > end)
                    break;
                if (gs[i].end < b)
                    continue;
                cur = i;
                cached = 1;
            }
        }
        /* an event's first group_id stat is the one read */
        if (cached && gs[cur].gid >= 0 && f->gid[base + e] < 0)
            f->gid[base + e] = gs[cur].gid;
    }
}

int gr_group_tpu_planes(struct forest *f, struct xp_groups *g)
{
    uint32_t p, l;

    for (p = 0; p < f->xs->nplanes; p++) {
        const struct xp_plane *pl = &f->xs->planes[p];
        struct group_span *gs = NULL;
        uint32_t ngs = 0;
        int step = -1, grouping, rc;
        if (strncmp(pl->name, "/device", 7) != 0 && strncmp(pl->name, "#Chip", 5) != 0)
            continue;
        if ((grouping = gr_tpu_grouping_line(pl)) < 0)
            continue;
        for (l = 0; l < pl->nlines; l++) {
            if (tpu_is_step_line(pl->lines[l].name))
                step = (int)l;
        }
        rc = step >= 0 ? merge_steps(f, g, p, (uint32_t)step, &gs, &ngs) : 0;
        if (rc == 0 && grouping != step) {
            free(gs);
            gs = NULL;
            rc = line_spans(f, p, (uint32_t)grouping, &gs, &ngs);
        }
        if (rc != 0)
            return rc;
        for (l = 0; l < pl->nlines; l++) {
            if ((int)l != step)
                group_line(f, p, l, gs, ngs);
        }
        free(gs);
    }
    return 0;
}

void gr_tpu_launch_ids(const struct xp_plane *pl, struct tpu_launch_ids *ids)
{
    ids->device_ordinal = xp_plane_stat_id_by_name(pl, "device_ordinal");
    ids->queue_id = xp_plane_stat_id_by_name(pl, "queue_id");
    ids->run_id = xp_plane_stat_id_by_name(pl, "run_id");
    ids->core_type = xp_plane_stat_id_by_name(pl, "core_type");
}

/* The event's own stat id as an unsigned integer: 1 and *v when present. */
static int own_uint(const struct xp_plane *pl, const struct xp_line *ln, const struct xp_event *ev,
                    int64_t id, uint64_t *v)
{
    struct xp_stat st;

    if (id == XP_NO_STAT || !xp_event_own_stat(pl, ln, ev, id, &st))
        return 0;
    *v = (uint64_t)xp_stat_int(&st);
    return 1;
}

/* splitmix64's finaliser. */
static uint64_t mix(uint64_t x)
{
    x ^= x >> 30;
    x *= 0xbf58476d1ce4e5b9ull;
    x ^= x >> 27;
    x *= 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

int gr_tpu_launch_context(const struct xp_plane *pl, const struct xp_line *ln,
                          const struct xp_event *ev, const struct tpu_launch_ids *ids,
                          int64_t ordinal, uint64_t *id)
{
    uint64_t dev, queue, run, core = 0;

    if (!own_uint(pl, ln, ev, ids->queue_id, &queue) || !own_uint(pl, ln, ev, ids->run_id, &run))
        return 0;
    if (ordinal >= 0) {
        dev = (uint64_t)ordinal;
    } else {
        if (!own_uint(pl, ln, ev, ids->device_ordinal, &dev))
            return 0;
        run &= GR_RUN_ID_MASK; /* HostRunIdMutator */
    }
    own_uint(pl, ln, ev, ids->core_type, &core); /* 0 when absent */
    *id = mix(mix(mix(mix(dev) ^ queue) ^ run) ^ core);
    return 1;
}
