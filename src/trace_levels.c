/*
 * trace_levels.c - finishing a trace index: XProf's storage step in memory.
 *
 * After a builder has added every event, tv_finish
 *   1. orders tracks as the JSON lists them and groups events by track,
 *      sorted by XProf's comparator inside each track (tracks in parallel);
 *   2. assigns each event its zoom level as GetEventsByLevel does: flows are
 *      decided first, globally in time order (a k-way merge of the tracks'
 *      flow events with a loser tree, in the parts of step 3 side by side,
 *      then one serial pass; the twelve trackers' flow maps are one map
 *      there, since every flow event passes every tracker), then every
 *      track runs twelve trackers, one per level (tracks in parallel; the
 *      tracks without a flow do not wait for the flows' pass);
 *   3. walks all events in global comparator order (the same merge over all
 *      events) to number events sharing a start time (XProf's "serial", the
 *      uid of a response), to drop those numbered 256 or more, as XProf's
 *      one-byte SSTable key does, and to list the stored events per level in
 *      comparator order (the SSTable order) straight into the level index;
 *      the order is cut into parts by start time (equal starts stay in one
 *      part, so numbering never crosses a part) that are merged side by side,
 *      each into slots counted beforehand (dropped events leave holes, closed
 *      afterwards).
 * This file runs the steps, with step 0 (name ranks for the comparator), the
 * span and the level index's slots; step 1 is in trace_levels_order.c, step
 * 2 in trace_levels_flows.c and trace_levels_tracks.c, the merges of steps
 * 2 and 3 in trace_levels_merge.c (trace_levels_int.h).
 * One deliberate difference: a flow's decided visibility is forgotten at its
 * FLOW_END event (XProf keeps it for the whole trace), which bounds memory by
 * the flows still open; only a flow id reused after its end can differ.
 */
#include "sort.h"
#include "trace_levels_int.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "bigalloc.h"
#include "parallel.h"

/* --- step 0: name ranks ----------------------------------------------------- */

/* XProf compares event.name(), which is empty for names longer than 32
 * bytes (those are interned in its name table). */
static int rank_cmp(const void *a, const void *b, void *arg)
{
    const struct tv_host *h = arg;
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    size_t lx = tv_len(h, x) > 32 ? 0 : tv_len(h, x);
    size_t ly = tv_len(h, y) > 32 ? 0 : tv_len(h, y);
    int c = memcmp(tv_text(h, x), tv_text(h, y), lx < ly ? lx : ly);

    if (c != 0)
        return c;
    return lx < ly ? -1 : lx > ly;
}

static int build_name_ranks(struct tv_host *h)
{
    uint32_t n = tv_str_count(h), i, rank = 0;
    uint32_t *ids = malloc(n * sizeof(*ids));

    h->name_rank = malloc(n * sizeof(*h->name_rank));
    if (ids == NULL || h->name_rank == NULL) {
        free(ids);
        return -ENOMEM;
    }
    for (i = 0; i < n; i++)
        ids[i] = i;
    qsort_r(ids, n, sizeof(*ids), rank_cmp, h);
    for (i = 0; i < n; i++) {
        if (i > 0 && rank_cmp(&ids[i - 1], &ids[i], h) != 0)
            rank++;
        h->name_rank[ids[i]] = rank;
    }
    free(ids);
    return 0;
}

/* --- the span -------------------------------------------------------------------- */

/* Fold a run's summary into the host's span, as if its events came next:
 * the first event of the trace sets the span when it counts, later ones
 * only widen it. */
static void span_add(struct tv_host *h, const struct span_part *s)
{
    if (!s->any)
        return;
    if (!h->has_span) {
        if (s->first_ts <= SPAN_MAX_TS)
            h->min_ps = s->first_ts;
        if (s->first_end <= SPAN_MAX_TS)
            h->max_ps = s->first_end;
        h->has_span = 1;
    }
    if (s->has_min && s->min_ts < h->min_ps)
        h->min_ps = s->min_ts;
    if (s->has_max && s->max_end > h->max_ps)
        h->max_ps = s->max_end;
}

/* --- step 3: the level index ------------------------------------------------------ */

/* Events of part p per level, dropped or not (their numbers are not known
 * yet), into its level_slot row (read by track ranges, in memory order). */
static int count_part_levels(void *arg, size_t p)
{
    struct order_parts *w = arg;
    const struct tv_host *h = w->h;
    uint32_t nt = h->ntracks, t, i, *count = &w->level_slot[p * TV_LEVELS];

    memset(count, 0, TV_LEVELS * sizeof(*count));
    for (t = 0; t < nt; t++) {
        uint32_t end = w->bound[(p + 1) * nt + t];
        for (i = w->bound[p * nt + t]; i < end; i++)
            count[h->events[i].level]++;
    }
    return 0;
}

/* Slots of by_level per part and level: per level, part p's events follow
 * those of the parts before it. Allocates by_level. */
static int plan_level_index(struct order_parts *w, int nthreads)
{
    struct tv_host *h = w->h;
    uint32_t total = 0, p, i;
    int L, rc;

    rc = parallel_for(w->nparts, nthreads, count_part_levels, w);
    if (rc != 0)
        return rc;
    for (L = 0; L < TV_LEVELS; L++) {
        for (p = 0; p < w->nparts; p++) {
            uint32_t n;
            i = p * TV_LEVELS + (uint32_t)L;
            n = w->level_slot[i];
            w->level_slot[i] = total;
            w->level_fill[i] = total;
            total += n;
        }
    }
    if (w->spare != NULL) {
        h->by_level = w->spare;
        w->spare = NULL;
    } else {
        h->by_level = big_malloc((total ? total : 1) * sizeof(*h->by_level));
    }
    if (h->by_level == NULL)
        return -ENOMEM;
    return 0;
}

/* Close the holes the dropped events left (each part's run of a level
 * moves down to follow the runs before it) and set level_start. */
static void close_level_index(struct order_parts *w)
{
    struct tv_host *h = w->h;
    uint32_t to = 0, p, i;
    int L;

    for (L = 0; L < TV_LEVELS; L++) {
        h->level_start[L] = to;
        for (p = 0; p < w->nparts; p++) {
            uint32_t from, n;
            i = p * TV_LEVELS + (uint32_t)L;
            from = w->level_slot[i];
            n = w->level_fill[i] - from;
            if (to != from)
                memmove(&h->by_level[to], &h->by_level[from], n * sizeof(*h->by_level));
            to += n;
        }
    }
    h->level_start[TV_LEVELS] = to;
}

static int device_cmp(const void *a, const void *b)
{
    const struct tv_device *x = a, *y = b;

    return x->pid < y->pid ? -1 : x->pid > y->pid;
}

static int long_dur_cmp(const void *a, const void *b)
{
    const struct tv_long_dur *x = a, *y = b;

    return x->src < y->src ? -1 : x->src > y->src;
}

static int frame_cmp(const void *a, const void *b)
{
    const struct tv_frame *x = a, *y = b;

    return x->hash < y->hash ? -1 : x->hash > y->hash;
}

int tv_finish_parts(struct tv_host *h, int nthreads, uint32_t nparts, struct xp_err *err)
{
    struct order_parts w;
    uint8_t *track_flows = NULL;
    uint32_t i, j, p;
    int rc;

    memset(&w, 0, sizeof(w));
    w.h = h;
    /* Long durations by source record before anything reads a duration. */
    if (h->nlong_durs > 1)
        xp_qsort(h->long_durs, h->nlong_durs, sizeof(*h->long_durs), long_dur_cmp);
    rc = build_name_ranks(h);
    if (rc == 0)
        rc = tvl_order_tracks(h, nthreads);
    if (rc == 0)
        rc = tvl_plan_parts(&w, nparts);
    if (rc == 0) {
        w.flow_level = big_malloc(h->nflows ? h->nflows : 1);
        if (w.flow_level == NULL)
            rc = -ENOMEM;
    }
    if (rc == 0) {
        track_flows = calloc(h->ntracks ? h->ntracks : 1, 1);
        if (track_flows == NULL)
            rc = -ENOMEM;
    }
    /* Levels: the flows' (beside the tracks without a flow), then the
     * tracks with one. */
    if (rc == 0 && h->nflows > 0)
        rc = tvl_order_flows(&w, nthreads, track_flows);
    if (rc == 0)
        rc = tvl_all_levels(h, w.flow_order, w.nflow_events, w.flow_level, track_flows, nthreads);
    free(track_flows);
    w.spare = w.flow_order;
    w.flow_order = NULL;
    big_free(w.flow_level);
    /* The parts of the global order, straight into the level index. */
    if (rc == 0)
        rc = plan_level_index(&w, nthreads);
    if (rc == 0)
        rc = parallel_for(w.nparts, nthreads, tvl_order_one_part, &w);
    if (rc == 0)
        close_level_index(&w);
    for (p = 0; rc == 0 && p < w.nparts; p++)
        span_add(h, &w.span[p]);
    big_free(w.spare);
    tvl_parts_free(&w);
    if (rc != 0)
        return xp_err_set(err, rc, "%s: out of memory while indexing the trace", h->hostname);
    if (h->ndevices > 1)
        xp_qsort(h->devices, h->ndevices, sizeof(*h->devices), device_cmp);
    /* Stack frames: ascending hash, duplicates removed. */
    if (h->nframes > 1)
        xp_qsort(h->frames, h->nframes, sizeof(*h->frames), frame_cmp);
    for (i = 0, j = 0; i < h->nframes; i++) {
        if (j > 0 && h->frames[j - 1].hash == h->frames[i].hash)
            continue;
        h->frames[j++] = h->frames[i];
    }
    h->nframes = j;
    tv_build_end(h);
    return 0;
}

int tv_finish(struct tv_host *h, int nthreads, struct xp_err *err)
{
    uint32_t parts = h->nevents / TV_PART_EVENTS, most;

    if (nthreads <= 0)
        nthreads = parallel_cores();
    /* A few parts per thread, so that the threads end together. */
    most = 4 * (uint32_t)nthreads;
    if (parts > most)
        parts = most;
    return tv_finish_parts(h, nthreads, parts, err);
}
