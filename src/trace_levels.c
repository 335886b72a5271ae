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
 * One deliberate difference: a flow's decided visibility is forgotten at its
 * FLOW_END event (XProf keeps it for the whole trace), which bounds memory by
 * the flows still open; only a flow id reused after its end can differ.
 */
#include "sort.h"
#include "trace_levels.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "bigalloc.h"
#include "parallel.h"

/* Comparator key of a track: pid, then threads before channels, then tid. */
static uint64_t track_key(const struct tv_track *t)
{
    return ((uint64_t)t->pid << 33) | ((uint64_t)(t->has_tid ? 0 : 1) << 32) |
           (t->has_tid ? t->tid : 0);
}

int tv_event_cmp(const struct tv_host *h, const struct tv_event *a, const struct tv_event *b)
{
    uint64_t ka, kb;
    uint32_t ra, rb;

    if (a->ts != b->ts)
        return a->ts < b->ts ? -1 : 1;
    if (a->dur != b->dur)
        return a->dur > b->dur ? -1 : 1;
    if (a->track != b->track) {
        ka = track_key(&h->tracks[a->track]);
        kb = track_key(&h->tracks[b->track]);
        if (ka != kb)
            return ka < kb ? -1 : 1;
    }
    ra = h->name_rank[a->name];
    rb = h->name_rank[b->name];
    if (ra != rb)
        return ra < rb ? -1 : 1;
    if (a->track != b->track)
        return a->track < b->track ? -1 : 1;
    return a->src < b->src ? -1 : a->src > b->src;
}

void tv_vis_event_of(const struct tv_host *h, const struct tv_event *e, struct tv_vis_event *ve)
{
    ve->ts = e->ts;
    ve->dur = e->dur;
    ve->row = e->track;
    ve->has_tid = h->tracks[e->track].has_tid;
    ve->has_flow = e->has_flow;
    ve->flow_id = e->has_flow ? TV_FLOW_ID(h->flows[e->src]) : 0;
    ve->type = e->has_flow ? TV_FLOW_TYPE(h->flows[e->src]) : 0;
}

int tv_merge_runs(const struct tv_host *h, uint32_t *idx, const uint32_t *runs, uint32_t nruns)
{
    uint32_t pos[TV_LEVELS + 1], total = runs[nruns], k, i;
    uint32_t *tmp;

    if (nruns <= 1 || total == 0)
        return 0;
    tmp = malloc(total * sizeof(*tmp));
    if (tmp == NULL)
        return -ENOMEM;
    for (k = 0; k < nruns; k++)
        pos[k] = runs[k];
    for (i = 0; i < total; i++) {
        int best = -1;
        for (k = 0; k < nruns; k++) {
            if (pos[k] >= runs[k + 1])
                continue;
            if (best < 0 ||
                tv_event_cmp(h, &h->events[idx[pos[k]]], &h->events[idx[pos[best]]]) < 0)
                best = (int)k;
        }
        tmp[i] = idx[pos[best]++];
    }
    memcpy(idx, tmp, total * sizeof(*tmp));
    free(tmp);
    return 0;
}

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

/* --- step 1: tracks and per-track order ---------------------------------------- */

/* Output order of tracks: pid, channels (by name) before threads (by tid). */
static int track_out_cmp(const void *a, const void *b, void *arg)
{
    const struct tv_host *h = arg;
    const struct tv_track *x = a, *y = b;
    int c;

    if (x->pid != y->pid)
        return x->pid < y->pid ? -1 : 1;
    if (x->has_tid != y->has_tid)
        return x->has_tid ? 1 : -1;
    if (x->has_tid)
        return x->tid < y->tid ? -1 : x->tid > y->tid;
    c = strcmp(tv_text(h, x->name), tv_text(h, y->name));
    return c;
}

/* tv_event_cmp with the host as qsort_r-style context. */
static int track_cmp(const void *a, const void *b, void *h)
{
    return tv_event_cmp(h, a, b);
}

/* Sort the events of track t by the comparator (a parallel_for item). */
static int sort_track(void *arg, size_t t)
{
    struct tv_host *h = arg;
    struct tv_event *ev = &h->events[h->tracks[t].first];

    return xp_sort_runs(ev, h->tracks[t].count, sizeof(*ev), track_cmp, h);
}

static int order_tracks(struct tv_host *h, int nthreads)
{
    uint32_t n = h->ntracks, i, t;
    uint32_t *old_of_new, *new_of_old, *next;
    struct tv_track *sorted;
    int rc = 0;

    if (n == 0)
        return 0;
    sorted = malloc(n * sizeof(*sorted));
    new_of_old = malloc(n * sizeof(*new_of_old));
    old_of_new = malloc(n * sizeof(*old_of_new));
    next = calloc(n + 1, sizeof(*next));
    if (sorted == NULL || new_of_old == NULL || old_of_new == NULL || next == NULL) {
        free(sorted);
        free(new_of_old);
        free(old_of_new);
        free(next);
        return -ENOMEM;
    }
    /* Sort a copy carrying the old index in .first. */
    for (i = 0; i < n; i++) {
        sorted[i] = h->tracks[i];
        sorted[i].first = i;
        sorted[i].count = 0;
    }
    qsort_r(sorted, n, sizeof(*sorted), track_out_cmp, h);
    for (i = 0; i < n; i++) {
        old_of_new[i] = sorted[i].first;
        new_of_old[sorted[i].first] = i;
    }
    for (i = 0; i < h->nevents; i++) {
        h->events[i].track = new_of_old[h->events[i].track];
        sorted[h->events[i].track].count++;
    }
    /* First event of each track; then an in-place bucket permutation. */
    for (t = 0, i = 0; t < n; t++) {
        sorted[t].first = i;
        next[t] = i;
        i += sorted[t].count;
    }
    next[n] = i;
    free(h->tracks);
    h->tracks = sorted;
    for (t = 0; t < n; t++) {
        uint32_t end = sorted[t].first + sorted[t].count;
        while (next[t] < end) {
            struct tv_event *e = &h->events[next[t]];
            if (e->track == t) {
                next[t]++;
            } else {
                struct tv_event tmp = *e;
                uint32_t dst = next[tmp.track]++;
                *e = h->events[dst];
                h->events[dst] = tmp;
            }
        }
    }
    /* Sort inside each track unless already sorted (tracks in parallel). */
    rc = parallel_for(n, nthreads, sort_track, h);
    free(new_of_old);
    free(old_of_new);
    free(next);
    return rc;
}

/* --- the merges (steps 2 and 3): global order, uids, span ------------------ */

/* A loser tree over track cursors keyed by the comparator (log2 k
 * comparisons per event): node[0] is the winning leaf, node[1..k) the
 * loser of each match. Each leaf caches the start of its next event,
 * which decides most comparisons. */
struct merge_tree {
    const struct tv_host *h; /* the host */
    uint32_t k;              /* leaves (a power of two) */
    uint32_t *node;          /* [k] leaf indices */
    uint64_t *ts;            /* [k] per leaf: start of its next event */
    uint32_t *pos;           /* [k] per leaf: next event index */
    uint32_t *end;           /* [k] per leaf: end of its range (pos == end: done) */
    int flows_only;          /* skip events without a flow */
};

/* Does leaf a's next event come before leaf b's? (A finished leaf comes
 * after everything.) */
static int leaf_less(const struct merge_tree *m, uint32_t a, uint32_t b)
{
    int done_a = m->pos[a] == m->end[a], done_b = m->pos[b] == m->end[b];

    if (done_a || done_b)
        return !done_a;
    if (m->ts[a] != m->ts[b])
        return m->ts[a] < m->ts[b];
    return tv_event_cmp(m->h, &m->h->events[m->pos[a]], &m->h->events[m->pos[b]]) < 0;
}

/* The next position at or after p (before end) of an event with a flow. */
static uint32_t next_flow(const struct tv_host *h, uint32_t p, uint32_t end)
{
    while (p < end && !h->events[p].has_flow)
        p++;
    return p;
}

/* Point leaf i at its next event (from p). */
static void leaf_set(struct merge_tree *m, uint32_t i, uint32_t p)
{
    if (m->flows_only)
        p = next_flow(m->h, p, m->end[i]);
    m->pos[i] = p;
    if (p < m->end[i])
        m->ts[i] = m->h->events[p].ts;
}

/* Play the matches below node; returns the winner. */
static uint32_t tree_play(struct merge_tree *m, uint32_t node)
{
    uint32_t a, b;

    if (node >= m->k)
        return node - m->k;
    a = tree_play(m, 2 * node);
    b = tree_play(m, 2 * node + 1);
    if (leaf_less(m, b, a)) {
        m->node[node] = a;
        return b;
    }
    m->node[node] = b;
    return a;
}

/* A tree over the ranges [from[t], to[t]) of the tracks. */
static int tree_init(struct merge_tree *m, const struct tv_host *h, const uint32_t *from,
                     const uint32_t *to, int flows_only)
{
    uint32_t t, n = 0, k = 1;

    memset(m, 0, sizeof(*m));
    m->h = h;
    m->flows_only = flows_only;
    for (t = 0; t < h->ntracks; t++)
        n += from[t] < to[t];
    while (k < n)
        k *= 2;
    m->k = k;
    m->node = malloc(k * sizeof(*m->node));
    m->ts = malloc(k * sizeof(*m->ts));
    m->pos = calloc(k, sizeof(*m->pos));
    m->end = calloc(k, sizeof(*m->end));
    if (m->node == NULL || m->ts == NULL || m->pos == NULL || m->end == NULL)
        return -ENOMEM;
    for (t = 0, n = 0; t < h->ntracks; t++) {
        if (from[t] == to[t])
            continue;
        m->end[n] = to[t];
        leaf_set(m, n, from[t]);
        n++;
    }
    m->node[0] = tree_play(m, 1);
    return 0;
}

static void tree_free(struct merge_tree *m)
{
    free(m->node);
    free(m->ts);
    free(m->pos);
    free(m->end);
}

/* The index of the next event in order (UINT32_MAX when all are done);
 * moves past it. */
static uint32_t tree_pop(struct merge_tree *m)
{
    uint32_t w = m->node[0], p = m->pos[w], n;

    if (p == m->end[w])
        return UINT32_MAX;
    leaf_set(m, w, p + 1);
    for (n = (w + m->k) / 2; n >= 1; n /= 2) {
        if (leaf_less(m, m->node[n], w)) {
            uint32_t loser = w;
            w = m->node[n];
            m->node[n] = loser;
        }
    }
    m->node[0] = w;
    return p;
}

/* Step 2's flow levels. */
static int flow_levels(struct tv_host *h, const uint32_t *flow_order, uint32_t nflow_events,
                       uint8_t *flow_level);

/* Serials and drops, given the events in global order one at a time
 * (writes only serial and flags of the events). */
struct numbering {
    uint64_t last_ts; /* start of the previous event */
    uint64_t serial;  /* its serial */
};

static void number_event(struct numbering *st, struct tv_event *e)
{
    if (e->ts == st->last_ts)
        st->serial++;
    else
        st->serial = 0;
    st->last_ts = e->ts;
    e->serial = (uint8_t)st->serial;
    if (st->serial >= 256)
        e->flags |= TV_EV_DROPPED;
}

/* XProf's ExpandTraceSpan over a run of events, summarised so that runs
 * combine in order (span_add): starts and ends above max_ts are ignored. */
#define SPAN_MAX_TS (UINT64_MAX / 2)

struct span_part {
    int any;            /* the run has events */
    uint64_t first_ts;  /* its first event's start */
    uint64_t first_end; /* and end */
    int has_min;        /* some start counts */
    uint64_t min_ts;    /* smallest counted start */
    int has_max;        /* some end counts */
    uint64_t max_end;   /* largest counted end */
};

static void span_event(struct span_part *s, const struct tv_event *e)
{
    uint64_t end = e->ts + e->dur;

    if (!s->any) {
        s->any = 1;
        s->first_ts = e->ts;
        s->first_end = end;
    }
    if (e->ts <= SPAN_MAX_TS && (!s->has_min || e->ts < s->min_ts)) {
        s->has_min = 1;
        s->min_ts = e->ts;
    }
    if (end <= SPAN_MAX_TS && (!s->has_max || end > s->max_end)) {
        s->has_max = 1;
        s->max_end = end;
    }
}

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

/* The global order is cut into parts by start time (every event with one
 * start falls into one part, so uids never cross a part), merged side by
 * side. bound[p * ntracks + t] is the first event of track t in part p;
 * row nparts holds the track ends. */
struct order_parts {
    struct tv_host *h;      /* the host */
    uint32_t nparts;        /* parts */
    uint64_t *lo_ts;        /* [nparts] first start of each part (0 for part 0) */
    uint32_t *bound;        /* [(nparts + 1) * ntracks] */
    uint32_t *out;          /* [nparts + 1] events before each part */
    uint32_t *spare;        /* the flows' order block once done (room for every
                               event): by_level takes it, its pages are in use */
    struct span_part *span; /* [nparts] span summaries */
    uint32_t *level_slot;   /* [nparts * TV_LEVELS] first by_level slot of each
                               part's events of each level, dropped ones counted */
    uint32_t *level_fill;   /* [nparts * TV_LEVELS] next by_level slot of each */
    uint8_t *flow_level;    /* per source record with a flow: its level */
    uint32_t *flow_order;   /* events with a flow: part p's from out[p] while
                               merging, then all in global order */
    uint32_t *flow_count;   /* [nparts] events with a flow in each part */
    uint32_t nflow_events;  /* entries of flow_order once merged */
    uint8_t *part_flows;    /* [nparts * ntracks] track t has an event with a
                               flow in part p */
};

/* First event of track t at or after start ts (tracks are sorted by start). */
static uint32_t track_lower_bound(const struct tv_host *h, uint32_t t, uint64_t ts)
{
    uint32_t lo = h->tracks[t].first, hi = lo + h->tracks[t].count;

    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (h->events[mid].ts < ts)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* Choose at most want parts of about equal size from a sample of starts,
 * and find every track's bounds. Returns 0 or -ENOMEM. */
static int plan_parts(struct order_parts *w, uint32_t want)
{
    const struct tv_host *h = w->h;
    uint32_t nt = h->ntracks, stride, n = 0, t, p, i;
    uint64_t *sample;

    if (want < 1)
        want = 1;
    if (want > h->nevents / 2 + 1)
        want = h->nevents / 2 + 1;
    stride = h->nevents / (64 * want) + 1;
    sample = malloc((h->nevents / stride + nt + 1) * sizeof(*sample));
    w->lo_ts = malloc(want * sizeof(*w->lo_ts));
    if (sample == NULL || w->lo_ts == NULL) {
        free(sample);
        return -ENOMEM;
    }
    for (t = 0; t < nt; t++) {
        for (i = stride / 2; i < h->tracks[t].count; i += stride)
            sample[n++] = h->events[h->tracks[t].first + i].ts;
    }
    if (xp_sort_runs_u64(sample, n) != 0) {
        free(sample);
        return -ENOMEM;
    }
    w->lo_ts[0] = 0;
    w->nparts = 1;
    for (p = 1; p < want && n > 0; p++) {
        uint64_t s = sample[(uint64_t)p * n / want];
        if (s > w->lo_ts[w->nparts - 1])
            w->lo_ts[w->nparts++] = s;
    }
    free(sample);
    w->bound = malloc(((size_t)w->nparts + 1) * (nt ? nt : 1) * sizeof(*w->bound));
    w->out = malloc((w->nparts + 1) * sizeof(*w->out));
    w->span = calloc(w->nparts, sizeof(*w->span));
    w->level_slot = malloc(w->nparts * TV_LEVELS * sizeof(*w->level_slot));
    w->level_fill = malloc(w->nparts * TV_LEVELS * sizeof(*w->level_fill));
    if (w->bound == NULL || w->out == NULL || w->span == NULL || w->level_slot == NULL ||
        w->level_fill == NULL)
        return -ENOMEM;
    for (p = 0; p <= w->nparts; p++) {
        uint32_t total = 0;
        for (t = 0; t < nt; t++) {
            uint32_t b;
            if (p == 0)
                b = h->tracks[t].first;
            else if (p == w->nparts)
                b = h->tracks[t].first + h->tracks[t].count;
            else
                b = track_lower_bound(h, t, w->lo_ts[p]);
            w->bound[(size_t)p * nt + t] = b;
            total += b - h->tracks[t].first;
        }
        w->out[p] = total;
    }
    return 0;
}

static void parts_free(struct order_parts *w)
{
    free(w->lo_ts);
    free(w->bound);
    free(w->out);
    free(w->span);
    free(w->level_slot);
    free(w->level_fill);
    free(w->flow_count);
    free(w->part_flows);
    big_free(w->flow_order);
}

/* Merge part p, numbering its events, summarising its span and listing
 * its stored events in its slots of each level (parallel_for item). */
static int order_one_part(void *arg, size_t p)
{
    struct order_parts *w = arg;
    struct tv_host *h = w->h;
    uint32_t nt = h->ntracks, e, *fill = &w->level_fill[p * TV_LEVELS];
    struct numbering st = {UINT64_MAX, 0};
    struct merge_tree m;
    int rc;

    if (w->out[p] == w->out[p + 1])
        return 0;
    /* The previous part's events all start before lo_ts (none: as at the
     * start of the trace). */
    if (w->out[p] > 0)
        st.last_ts = w->lo_ts[p] - 1;
    rc = tree_init(&m, h, &w->bound[(size_t)p * nt], &w->bound[((size_t)p + 1) * nt], 0);
    while (rc == 0 && (e = tree_pop(&m)) != UINT32_MAX) {
        struct tv_event *ev = &h->events[e];
        number_event(&st, ev);
        span_event(&w->span[p], ev);
        if (!(ev->flags & TV_EV_DROPPED))
            h->by_level[fill[ev->level]++] = e;
    }
    tree_free(&m);
    return rc;
}

/* Merge part p's events with a flow into flow_order from out[p] (room
 * for all its events) and count them (parallel_for item). */
static int merge_flow_part(void *arg, size_t p)
{
    struct order_parts *w = arg;
    const struct tv_host *h = w->h;
    uint32_t nt = h->ntracks, n = 0, e, t, leaf = 0, *to = &w->flow_order[w->out[p]];
    const uint32_t *from = &w->bound[(size_t)p * nt], *till = &w->bound[((size_t)p + 1) * nt];
    uint8_t *flows = &w->part_flows[(size_t)p * nt];
    struct merge_tree m;
    int rc;

    w->flow_count[p] = 0;
    memset(flows, 0, nt);
    if (w->out[p] == w->out[p + 1])
        return 0;
    rc = tree_init(&m, h, from, till, 1);
    /* The leaves are the tracks with events here, in order; a leaf starts
     * at its first event with a flow, if any. */
    for (t = 0; rc == 0 && t < nt; t++) {
        if (from[t] == till[t])
            continue;
        flows[t] = m.pos[leaf] < m.end[leaf];
        leaf++;
    }
    while (rc == 0 && (e = tree_pop(&m)) != UINT32_MAX)
        to[n++] = e;
    tree_free(&m);
    w->flow_count[p] = n;
    return rc;
}

/* The events with a flow in global order (the parts merged side by side,
 * then moved together) into flow_order, and the tracks that have one. */
static int order_flows(struct order_parts *w, int nthreads, uint8_t *track_flows)
{
    struct tv_host *h = w->h;
    uint32_t n = 0, p, t, nt = h->ntracks;
    int rc;

    w->flow_order = big_malloc((h->nevents ? h->nevents : 1) * sizeof(*w->flow_order));
    w->flow_count = malloc(w->nparts * sizeof(*w->flow_count));
    w->part_flows = malloc((size_t)w->nparts * (nt ? nt : 1));
    if (w->flow_order == NULL || w->flow_count == NULL || w->part_flows == NULL)
        return -ENOMEM;
    rc = parallel_for(w->nparts, nthreads, merge_flow_part, w);
    for (p = 0; rc == 0 && p < w->nparts; p++) {
        uint32_t from = w->out[p], cnt = w->flow_count[p];
        if (from != n)
            memmove(&w->flow_order[n], &w->flow_order[from], cnt * sizeof(*w->flow_order));
        n += cnt;
        for (t = 0; t < nt; t++)
            track_flows[t] |= w->part_flows[(size_t)p * nt + t];
    }
    w->nflow_events = n;
    return rc;
}

/* --- step 2: zoom levels ------------------------------------------------------------ */

#define NTRACKERS (TV_LEVELS - 1)

/* State of one open flow across the twelve flow trackers: the map each
 * tracker keeps (flow id -> visible) holds the same ids in all of them,
 * since every flow event passes every tracker, so one entry carries the
 * twelve values; plus the level its first event decided (CalculateFlowVisibility's
 * own map, which async events reach too). */
struct flow_state {
    uint64_t key;  /* flow id + 1; 0 = empty slot */
    uint16_t vals; /* bit L: tracker L's value */
    uint8_t first; /* level of the flow's first event */
    uint8_t state; /* FS_* bits */
};

enum { FS_FIRST = 1 /* first is set */, FS_VIS = 2 /* vals are set */ };

struct flow_states {
    struct flow_state *v; /* slots (power of two) */
    uint32_t cap;         /* slots */
    uint32_t n;           /* used */
};

static uint32_t fs_home(uint64_t key, uint32_t cap)
{
    key ^= key >> 33;
    key *= 0xff51afd7ed558ccdull;
    key ^= key >> 33;
    return (uint32_t)key & (cap - 1);
}

static int fs_grow(struct flow_states *m)
{
    uint32_t cap = m->cap ? m->cap * 2 : 1024, i;
    struct flow_state *v = calloc(cap, sizeof(*v));

    if (v == NULL)
        return -ENOMEM;
    for (i = 0; i < m->cap; i++) {
        uint32_t s;
        if (m->v[i].key == 0)
            continue;
        s = fs_home(m->v[i].key, cap);
        while (v[s].key != 0)
            s = (s + 1) & (cap - 1);
        v[s] = m->v[i];
    }
    free(m->v);
    m->v = v;
    m->cap = cap;
    return 0;
}

/* The slot of id, made empty-valued if absent; UINT32_MAX on no memory. */
static uint32_t fs_get(struct flow_states *m, uint64_t id)
{
    uint64_t key = id + 1;
    uint32_t s;

    if ((m->n + 1) * 2 > m->cap && fs_grow(m) != 0)
        return UINT32_MAX;
    s = fs_home(key, m->cap);
    while (m->v[s].key != 0 && m->v[s].key != key)
        s = (s + 1) & (m->cap - 1);
    if (m->v[s].key == 0) {
        memset(&m->v[s], 0, sizeof(m->v[s]));
        m->v[s].key = key;
        m->n++;
    }
    return s;
}

/* Remove slot s (backward shift, no tombstones). */
static void fs_erase(struct flow_states *m, uint32_t s)
{
    uint32_t next = (s + 1) & (m->cap - 1);

    while (m->v[next].key != 0) {
        uint32_t home = fs_home(m->v[next].key, m->cap);
        int movable = (next > s) ? (home <= s || home > next) : (home <= s && home > next);
        if (movable) {
            m->v[s] = m->v[next];
            s = next;
        }
        next = (next + 1) & (m->cap - 1);
    }
    m->v[s].key = 0;
    m->n--;
}

/* One flow event on a thread through the trackers (tv_vis_visible until one
 * shows it, tv_vis_set after): returns its level (NTRACKERS = none). */
static int flow_event_rows(struct tv_vis *vis, const struct tv_event *e, struct flow_state *fs)
{
    uint64_t end = e->ts + e->dur;
    int fresh = !(fs->state & FS_VIS), L, level = NTRACKERS;

    for (L = 0; L < NTRACKERS; L++) {
        struct tv_row *r = &vis[L].rows[e->track];
        uint64_t res = vis[L].res;
        uint16_t bit = (uint16_t)(1u << L);
        uint32_t depth = tv_row_depth(r, e->ts);
        int visible = e->dur >= res;
        if (level < NTRACKERS) {
            /* Shown at a lower level: only recorded here. */
            if (fresh)
                fs->vals |= bit;
            r->last_flow = end;
            r->has_flow = 1;
            tv_row_push(&vis[L], r, depth, end);
            continue;
        }
        if (!visible)
            visible = depth >= r->depth || (e->ts - r->stack[depth]) >= res;
        if (fresh) {
            if (!visible)
                visible = !r->has_flow || (end - r->last_flow) >= res;
            fs->vals = (uint16_t)(visible ? fs->vals | bit : fs->vals & ~bit);
        } else if (!visible) {
            visible = (fs->vals & bit) != 0;
        }
        if (visible) {
            r->last_flow = end;
            r->has_flow = 1;
            tv_row_push(&vis[L], r, depth, end);
            level = L;
        }
    }
    return level;
}

/* One async flow event (a channel row: the counter rule) through the
 * trackers: returns its level. */
static int flow_event_channel(struct tv_vis *vis, const struct tv_event *e)
{
    int L, level = NTRACKERS;

    for (L = 0; L < NTRACKERS; L++) {
        struct tv_row *r = &vis[L].rows[e->track];
        if (level == NTRACKERS && !(!r->has_count || (e->ts - r->last_count) >= vis[L].res))
            continue;
        if (level == NTRACKERS)
            level = L;
        r->last_count = e->ts;
        r->has_count = 1;
    }
    return level;
}

/* Flows first (CalculateFlowVisibility): for each event with a flow (by source record), the first
 * level at which its flow is visible (NTRACKERS = none). flow_order lists
 * the events with a flow in global comparator order. */
static int flow_levels(struct tv_host *h, const uint32_t *flow_order, uint32_t nflow_events,
                       uint8_t *flow_level)
{
    struct tv_vis vis[NTRACKERS];
    struct flow_states open = {NULL, 0, 0};
    uint32_t i;
    int L, rc = 0;

    if (nflow_events == 0)
        return 0;
    for (L = 0; L < NTRACKERS; L++) {
        if (tv_vis_init(&vis[L], tv_level_resolution(L), h->ntracks) != 0) {
            while (L-- > 0)
                tv_vis_free(&vis[L]);
            return -ENOMEM;
        }
    }
    for (i = 0; i < nflow_events && rc == 0; i++) {
        const struct tv_event *e = &h->events[flow_order[i]];
        uint64_t packed = h->flows[e->src];
        int is_end = TV_FLOW_TYPE(packed) == TV_FLOW_END;
        uint32_t s = fs_get(&open, TV_FLOW_ID(packed));
        struct flow_state *fs;
        int level;
        if (s == UINT32_MAX) {
            rc = -ENOMEM;
            break;
        }
        fs = &open.v[s];
        if (h->tracks[e->track].has_tid) {
            level = flow_event_rows(vis, e, fs);
            fs->state = (uint8_t)(is_end ? fs->state & ~FS_VIS : fs->state | FS_VIS);
        } else {
            level = flow_event_channel(vis, e);
        }
        if (!(fs->state & FS_FIRST)) {
            fs->first = (uint8_t)level;
            fs->state |= FS_FIRST;
        }
        flow_level[e->src] = fs->first;
        if (is_end)
            fs->state &= (uint8_t)~FS_FIRST;
        if (fs->state == 0)
            fs_erase(&open, s);
    }
    for (L = 0; L < NTRACKERS; L++) {
        if (vis[L].oom)
            rc = -ENOMEM;
        tv_vis_free(&vis[L]);
    }
    free(open.v);
    return rc;
}

/* Levels of one track's events (ProcessTrackEventsParallel): per event,
 * tv_vis_visible on the trackers until one shows it, tv_vis_set on the
 * rest (an event with a flow takes the level its flow decided, or the
 * first its duration reaches); written out for one row, without flows. */
static int track_levels(struct tv_host *h, uint32_t t, const uint8_t *flow_level)
{
    struct tv_vis vis[NTRACKERS];
    uint64_t res[NTRACKERS];
    const struct tv_track *tr = &h->tracks[t];
    uint32_t i;
    int L, rc = 0;

    for (L = 0; L < NTRACKERS; L++) {
        res[L] = tv_level_resolution(L);
        if (tv_vis_init(&vis[L], res[L], 1) != 0) {
            while (L-- > 0)
                tv_vis_free(&vis[L]);
            return -ENOMEM;
        }
    }
    for (i = tr->first; i < tr->first + tr->count; i++) {
        struct tv_event *e = &h->events[i];
        uint64_t end = e->ts + e->dur;
        int set_from;
        if (e->has_flow) {
            uint8_t fl = flow_level[e->src];
            for (L = 0; L < NTRACKERS; L++) {
                if (L >= fl || e->dur >= res[L])
                    break;
            }
            set_from = L;
        } else if (tr->has_tid) {
            for (L = 0; L < NTRACKERS; L++) {
                struct tv_row *r = vis[L].rows;
                uint32_t depth = tv_row_depth(r, e->ts);
                if (e->dur >= res[L] || depth >= r->depth || (e->ts - r->stack[depth]) >= res[L]) {
                    tv_row_push(&vis[L], r, depth, end);
                    break;
                }
            }
            set_from = L + 1;
        } else {
            for (L = 0; L < NTRACKERS; L++) {
                struct tv_row *r = vis[L].rows;
                if (!r->has_count || (e->ts - r->last_count) >= res[L]) {
                    r->last_count = e->ts;
                    r->has_count = 1;
                    break;
                }
            }
            set_from = L + 1;
        }
        e->level = (uint8_t)L;
        for (L = set_from; L < NTRACKERS; L++) {
            struct tv_row *r = vis[L].rows;
            if (tr->has_tid) {
                tv_row_push(&vis[L], r, tv_row_depth(r, e->ts), end);
            } else {
                r->last_count = e->ts;
                r->has_count = 1;
            }
        }
    }
    for (L = 0; L < NTRACKERS; L++) {
        if (vis[L].oom)
            rc = -ENOMEM;
        tv_vis_free(&vis[L]);
    }
    return rc;
}

/* Work shared by the level threads: first the flows' pass (one thread),
 * meanwhile the tracks without a flow, then the tracks with one (which
 * wait for the flows), one at a time. */
struct level_work {
    struct tv_host *h;          /* the host */
    const uint32_t *tracks;     /* track indices: without a flow, then with
                                   one, each most events first */
    uint32_t nfree;             /* tracks without a flow */
    const uint32_t *flow_order; /* events with a flow in global order */
    uint32_t nflow_events;      /* their count */
    uint8_t *flow_level;        /* per source record with a flow: its level */
    pthread_mutex_t lock;       /* guards the fields below */
    pthread_cond_t flows_ready; /* signalled when flows_done is set */
    int flows_taken;            /* a thread runs (or ran) the flows' pass */
    int flows_done;             /* flow_level is written */
    uint32_t next;              /* next track to do */
    int rc;                     /* first failure */
};

static void level_fail(struct level_work *w, int rc)
{
    pthread_mutex_lock(&w->lock);
    if (w->rc == 0)
        w->rc = rc;
    pthread_mutex_unlock(&w->lock);
}

static void *level_worker(void *arg)
{
    struct level_work *w = arg;

    for (;;) {
        uint32_t t;
        int rc;
        pthread_mutex_lock(&w->lock);
        if (!w->flows_taken) {
            w->flows_taken = 1;
            pthread_mutex_unlock(&w->lock);
            rc = flow_levels(w->h, w->flow_order, w->nflow_events, w->flow_level);
            pthread_mutex_lock(&w->lock);
            if (rc != 0 && w->rc == 0)
                w->rc = rc;
            w->flows_done = 1;
            pthread_cond_broadcast(&w->flows_ready);
            pthread_mutex_unlock(&w->lock);
            continue;
        }
        t = w->next++;
        while (t < w->h->ntracks && t >= w->nfree && !w->flows_done)
            pthread_cond_wait(&w->flows_ready, &w->lock);
        rc = w->rc;
        pthread_mutex_unlock(&w->lock);
        if (t >= w->h->ntracks || rc != 0)
            return NULL;
        rc = track_levels(w->h, w->tracks[t], w->flow_level);
        if (rc != 0)
            level_fail(w, rc);
    }
}

static int count_desc(const void *a, const void *b, void *arg)
{
    const struct tv_host *h = arg;
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    uint32_t cx = h->tracks[x].count, cy = h->tracks[y].count;

    if (cx != cy)
        return cx > cy ? -1 : 1;
    return x < y ? -1 : x > y;
}

/* The flows' levels (from the events with a flow in global order), then
 * every track's; track_flows[t]: track t has an event with a flow. */
static int all_levels(struct tv_host *h, const uint32_t *flow_order, uint32_t nflow_events,
                      uint8_t *flow_level, const uint8_t *track_flows, int nthreads)
{
    uint32_t nt = h->ntracks, t, nfree = 0, nflow = 0;
    uint32_t *sorted = malloc((nt ? nt : 1) * sizeof(*sorted));
    uint32_t *tracks = malloc((nt ? nt : 1) * sizeof(*tracks));
    struct level_work w = {.lock = PTHREAD_MUTEX_INITIALIZER,
                           .flows_ready = PTHREAD_COND_INITIALIZER};
    pthread_t tids[16];
    int i, started = 0;

    if (sorted == NULL || tracks == NULL) {
        free(sorted);
        free(tracks);
        return -ENOMEM;
    }
    for (t = 0; t < nt; t++)
        sorted[t] = t;
    qsort_r(sorted, nt, sizeof(*sorted), count_desc, h);
    for (t = 0; t < nt; t++)
        nfree += !track_flows[sorted[t]];
    for (t = 0; t < nt; t++) {
        if (track_flows[sorted[t]])
            tracks[nfree + nflow++] = sorted[t];
        else
            tracks[t - nflow] = sorted[t];
    }
    free(sorted);
    w.h = h;
    w.tracks = tracks;
    w.nfree = nfree;
    w.flow_order = flow_order;
    w.nflow_events = nflow_events;
    w.flow_level = flow_level;
    w.flows_taken = w.flows_done = nflow_events == 0;
    if (nthreads < 1)
        nthreads = 1;
    if (nthreads > 16)
        nthreads = 16;
    for (i = 1; i < nthreads; i++) {
        if (pthread_create(&tids[started], NULL, level_worker, &w) == 0)
            started++;
    }
    level_worker(&w);
    for (i = 0; i < started; i++)
        pthread_join(tids[i], NULL);
    pthread_cond_destroy(&w.flows_ready);
    pthread_mutex_destroy(&w.lock);
    free(tracks);
    return w.rc;
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
    rc = build_name_ranks(h);
    if (rc == 0)
        rc = order_tracks(h, nthreads);
    if (rc == 0)
        rc = plan_parts(&w, nparts);
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
        rc = order_flows(&w, nthreads, track_flows);
    if (rc == 0)
        rc = all_levels(h, w.flow_order, w.nflow_events, w.flow_level, track_flows, nthreads);
    free(track_flows);
    w.spare = w.flow_order;
    w.flow_order = NULL;
    big_free(w.flow_level);
    /* The parts of the global order, straight into the level index. */
    if (rc == 0)
        rc = plan_level_index(&w, nthreads);
    if (rc == 0)
        rc = parallel_for(w.nparts, nthreads, order_one_part, &w);
    if (rc == 0)
        close_level_index(&w);
    for (p = 0; rc == 0 && p < w.nparts; p++)
        span_add(h, &w.span[p]);
    big_free(w.spare);
    parts_free(&w);
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
    if (h->build != NULL)
        free(h->build->slots);
    free(h->build);
    h->build = NULL;
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
