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
 * A window that reads only coarse levels (a zoomed-out view: the whole range
 * at the UI's resolution reads levels 0..3) needs only steps 1 and 2 up to
 * its deepest level (tv_finish_for: the other events are left
 * TV_LEVEL_FINER), and uids of those levels' events alone: they are found
 * among the events that share their starts, without merging all events
 * (trace_levels_coarse.c). tv_complete then runs step 2 on the levels left
 * and step 3 for every event, as one tv_finish would have.
 * This file runs the steps, with step 0 (name ranks for the comparator), the
 * span and the level index's slots; step 1 is in trace_levels_order.c, step
 * 2 in trace_levels_flows.c and trace_levels_tracks.c, the merges of steps
 * 2 and 3 in trace_levels_merge.c, a coarse step 3 in trace_levels_coarse.c
 * (trace_levels_int.h).
 * One deliberate difference: a flow's decided visibility is forgotten at its
 * FLOW_END event (XProf keeps it for the whole trace), which bounds memory by
 * the flows still open; only a flow id reused after its end can differ.
 */
#include "base/sort.h"
#include "trace_levels_int.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/bigalloc.h"
#include "base/parallel.h"

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

/* XProf's ExpandTraceSpan over every event in comparator order: the first
 * event sets the span when its start and end count (at most SPAN_MAX_TS),
 * every later counted start and end widens it. The first event has the
 * smallest start, so the span is the smallest start (0 if it does not
 * count) and the largest counted end: per part of the event array, folded. */
#define SPAN_MAX_TS (UINT64_MAX / 2)
#define SPAN_PARTS 8

struct span_work {
    const struct tv_host *h;
    uint64_t min_ts[SPAN_PARTS];  /* smallest start of each part */
    uint64_t max_end[SPAN_PARTS]; /* largest counted end */
    uint8_t has_end[SPAN_PARTS];  /* some end counts */
};

static int span_part(void *arg, size_t p)
{
    struct span_work *w = arg;
    const struct tv_host *h = w->h;
    uint32_t from = (uint32_t)((uint64_t)h->nevents * p / SPAN_PARTS);
    uint32_t to = (uint32_t)((uint64_t)h->nevents * (p + 1) / SPAN_PARTS), i;
    uint64_t min_ts = UINT64_MAX, max_end = 0;
    int has_end = 0;

    for (i = from; i < to; i++) {
        const struct tv_event *e = &h->events[i];
        uint64_t end = e->ts + tv_dur(h, e);
        if (e->ts < min_ts)
            min_ts = e->ts;
        if (end <= SPAN_MAX_TS && (!has_end || end > max_end)) {
            max_end = end;
            has_end = 1;
        }
    }
    w->min_ts[p] = min_ts;
    w->max_end[p] = max_end;
    w->has_end[p] = (uint8_t)has_end;
    return 0;
}

static int host_span(struct tv_host *h, int nthreads)
{
    struct span_work w;
    uint64_t min_ts = UINT64_MAX, max_end = 0;
    int p, rc;

    h->has_span = h->nevents > 0;
    h->min_ps = h->max_ps = 0;
    if (h->nevents == 0)
        return 0;
    memset(&w, 0, sizeof(w));
    w.h = h;
    rc = parallel_for(SPAN_PARTS, nthreads, span_part, &w);
    if (rc != 0)
        return rc;
    for (p = 0; p < SPAN_PARTS; p++) {
        if (w.min_ts[p] < min_ts)
            min_ts = w.min_ts[p];
        if (w.has_end[p] && w.max_end[p] > max_end)
            max_end = w.max_end[p];
    }
    h->min_ps = min_ts <= SPAN_MAX_TS ? min_ts : 0;
    h->max_ps = max_end;
    return 0;
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
 * those of the parts before it. Allocates w->by_level. */
static int plan_level_index(struct order_parts *w, int nthreads)
{
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
        w->by_level = w->spare;
        w->spare = NULL;
    } else {
        w->by_level = big_malloc((total ? total : 1) * sizeof(*w->by_level));
    }
    if (w->by_level == NULL)
        return -ENOMEM;
    return 0;
}

/* Close the holes the dropped events left (each part's run of a level
 * moves down to follow the runs before it) and set lv's level starts. */
static void close_level_index(struct order_parts *w, struct tv_levels *lv)
{
    uint32_t to = 0, p, i;
    int L;

    for (L = 0; L < TV_LEVELS; L++) {
        lv->start[L] = to;
        for (p = 0; p < w->nparts; p++) {
            uint32_t from, n;
            i = p * TV_LEVELS + (uint32_t)L;
            from = w->level_slot[i];
            n = w->level_fill[i] - from;
            if (to != from)
                memmove(&w->by_level[to], &w->by_level[from], n * sizeof(*w->by_level));
            to += n;
        }
    }
    lv->start[TV_LEVELS] = to;
}

/* Step 3 over every event: uids of the events of levels from.. (the
 * others keep theirs) and the complete level index into *lvp. */
static int full_level_index(struct order_parts *w, int from, int nthreads, struct tv_levels **lvp)
{
    struct tv_levels *lv = calloc(1, sizeof(*lv));
    int rc;

    if (lv == NULL)
        return -ENOMEM;
    w->from = from;
    rc = plan_level_index(w, nthreads);
    if (rc == 0)
        rc = parallel_for(w->nparts, nthreads, tvl_order_one_part, w);
    if (rc != 0) {
        big_free(w->by_level);
        w->by_level = NULL;
        free(lv);
        return rc;
    }
    close_level_index(w, lv);
    lv->by_level = w->by_level;
    lv->known = TV_LEVELS - 1;
    w->by_level = NULL;
    *lvp = lv;
    return 0;
}

/* --- the finish -------------------------------------------------------------------- */

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

void tvl_rest_free(struct tv_rest *r)
{
    if (r == NULL)
        return;
    big_free(r->flow_order);
    big_free(r->flow_level);
    big_free(r->own_level);
    free(r->track_flows);
    free(r);
}

/* Steps 2 and 3 of the levels not assigned yet (r->from on), over the
 * global order planned in w, then the complete level index in place of
 * the coarse one (if any); numbered is 1 when the events of the levels
 * before are numbered already. With take_flows the flows' order block
 * (room for every event when it comes straight from step 2) becomes the
 * level index; else it stays in r until this succeeds, so a failed
 * completion can be tried again. */
static int complete_levels(struct tv_host *h, struct order_parts *w, struct tv_rest *r,
                           int numbered, int take_flows, int nthreads)
{
    struct level_range rg = {r->from, NTRACKERS};
    struct tv_levels *lv = NULL;
    int rc;

    rc = tvl_all_levels(h, r->flow_order, r->nflow_events, r->flow_level, r->own_level,
                        r->track_flows, rg, NULL, nthreads);
    if (rc == 0 && take_flows) {
        w->spare = r->flow_order;
        r->flow_order = NULL;
    }
    if (rc == 0)
        rc = full_level_index(w, numbered ? r->from : 0, nthreads, &lv);
    if (rc != 0)
        return rc;
    lv->older = h->levels;
    __atomic_store_n(&h->levels, lv, __ATOMIC_RELEASE);
    return 0;
}

/* What a coarse finish keeps for tv_complete: the flows' order, shrunk to
 * its entries. */
static void keep_rest(struct tv_host *h, struct tv_rest *r, uint32_t nparts, int from)
{
    uint32_t *order;

    r->from = from;
    r->nparts = nparts;
    if (r->flow_order != NULL && r->nflow_events > 0) {
        order = big_realloc(r->flow_order, r->nflow_events * sizeof(*order));
        if (order != NULL)
            r->flow_order = order;
    }
    h->rest = r;
}

/* Steps 1-3, the levels as deep as window win reads, or with win NULL as
 * deep as upto (TV_LEVELS - 1: all). */
static int finish(struct tv_host *h, int nthreads, uint32_t nparts, const struct tv_window *win,
                  int upto, struct xp_err *err)
{
    struct order_parts w;
    struct tv_rest *r = calloc(1, sizeof(*r));
    struct tv_levels *lv = NULL;
    struct coarse_list *placed = NULL;
    uint32_t i, j;
    int rc = r != NULL ? 0 : -ENOMEM, coarse;

    memset(&w, 0, sizeof(w));
    w.h = h;
    /* Long durations by source record before anything reads a duration. */
    if (h->nlong_durs > 1)
        xp_qsort(h->long_durs, h->nlong_durs, sizeof(*h->long_durs), long_dur_cmp);
    if (rc == 0)
        rc = build_name_ranks(h);
    if (rc == 0)
        rc = tvl_order_tracks(h, nthreads);
    if (rc == 0)
        rc = host_span(h, nthreads);
    if (rc == 0 && win != NULL)
        upto = tv_window_level(h, win);
    /* Levels 0..upto need trackers 0..upto; all twelve leave none. */
    coarse = upto + 1 < NTRACKERS;
    if (rc == 0)
        rc = tvl_plan_parts(&w, nparts);
    if (rc == 0) {
        r->flow_level = big_malloc(h->nflows ? h->nflows : 1);
        r->own_level = coarse ? big_malloc(h->nflows ? h->nflows : 1) : NULL;
        r->track_flows = calloc(h->ntracks ? h->ntracks : 1, 1);
        if (r->flow_level == NULL || (coarse && r->own_level == NULL) || r->track_flows == NULL)
            rc = -ENOMEM;
    }
    if (rc == 0 && h->nflows > 0) {
        rc = tvl_order_flows(&w, nthreads, r->track_flows);
        r->flow_order = w.flow_order;
        r->nflow_events = w.nflow_events;
        w.flow_order = NULL;
    }
    if (rc == 0 && coarse) {
        struct level_range rg = {0, upto + 1};
        placed = calloc(h->ntracks ? h->ntracks : 1, sizeof(*placed));
        rc = placed != NULL ? 0 : -ENOMEM;
        if (rc == 0)
            rc = tvl_all_levels(h, r->flow_order, r->nflow_events, r->flow_level, r->own_level,
                                r->track_flows, rg, placed, nthreads);
        if (rc == 0)
            rc = tvl_coarse_index(h, upto, placed, nthreads, &lv);
        for (i = 0; placed != NULL && i < h->ntracks; i++)
            free(placed[i].v);
        free(placed);
        if (rc == 0) {
            h->levels = lv;
            keep_rest(h, r, w.nparts, upto + 1);
            r = NULL;
        } else if (rc == 1) {
            /* Too many coarse events: complete at once. */
            r->from = upto + 1;
            rc = complete_levels(h, &w, r, 0, 1, nthreads);
        }
    } else if (rc == 0) {
        r->from = 0;
        rc = complete_levels(h, &w, r, 0, 1, nthreads);
    }
    tvl_rest_free(r);
    tvl_parts_free(&w);
    if (rc != 0)
        return xp_err_set(err, rc, "%s: %s while indexing the trace", h->hostname,
                          rc == -ENOMEM ? "out of memory" : "inconsistent builder state");
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

int tv_finish_parts(struct tv_host *h, int nthreads, uint32_t nparts, struct xp_err *err)
{
    return finish(h, nthreads, nparts, NULL, TV_LEVELS - 1, err);
}

int tv_finish_parts_upto(struct tv_host *h, int nthreads, uint32_t nparts, int upto,
                         struct xp_err *err)
{
    if (upto < 0 || upto >= TV_LEVELS)
        upto = TV_LEVELS - 1;
    return finish(h, nthreads, nparts, NULL, upto, err);
}

/* A few parts per thread, so that the threads end together. */
static uint32_t parts_for(const struct tv_host *h, int nthreads)
{
    uint32_t parts = h->nevents / TV_PART_EVENTS, most = 4 * (uint32_t)nthreads;

    return parts > most ? most : parts;
}

int tv_finish_for(struct tv_host *h, int nthreads, const struct tv_window *win, struct xp_err *err)
{
    if (nthreads <= 0)
        nthreads = parallel_cores();
    return finish(h, nthreads, parts_for(h, nthreads), win, TV_LEVELS - 1, err);
}

int tv_finish(struct tv_host *h, int nthreads, struct xp_err *err)
{
    return tv_finish_for(h, nthreads, NULL, err);
}

int tv_complete(struct tv_host *h, int nthreads, struct xp_err *err)
{
    struct order_parts w;
    int rc = 0;

    if (nthreads <= 0)
        nthreads = parallel_cores();
    pthread_mutex_lock(&h->complete_lock);
    if (h->rest != NULL) {
        memset(&w, 0, sizeof(w));
        w.h = h;
        rc = tvl_plan_parts(&w, h->rest->nparts);
        if (rc == 0)
            rc = complete_levels(h, &w, h->rest, 1, 0, nthreads);
        tvl_parts_free(&w);
        if (rc == 0) {
            tvl_rest_free(h->rest);
            h->rest = NULL;
        }
    }
    pthread_mutex_unlock(&h->complete_lock);
    if (rc != 0)
        return xp_err_set(err, rc, "%s: out of memory while completing the trace index",
                          h->hostname);
    return 0;
}
