/*
 * trace_levels_merge.c - the global comparator order of a trace index: a
 * k-way merge of the sorted tracks with a loser tree, the order cut into
 * parts by start time that are merged side by side. Step 2 takes the events
 * with a flow in order; step 3 numbers events sharing a start (XProf's
 * "serial"), drops those numbered 256 or more and lists the stored events
 * per level in their slots of the level index.
 */
#include "base/sort.h"
#include "trace_levels_int.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/bigalloc.h"
#include "base/parallel.h"

/* --- the merges (steps 2 and 3): global order, uids ------------------------ */

/* A loser tree over track cursors keyed by the comparator (log2 k
 * comparisons per event): node[0] is the winning leaf, node[1..k) the
 * loser of each match. Each leaf caches the start of its next event,
 * which decides most comparisons; a finished leaf caches UINT64_MAX. */
struct merge_tree {
    const struct tv_host *h; /* the host */
    uint32_t k;              /* leaves (a power of two) */
    uint32_t *node;          /* [k] leaf indices */
    uint64_t *ts;            /* [k] per leaf: start of its next event */
    uint32_t *pos;           /* [k] per leaf: next event index */
    uint32_t *end;           /* [k] per leaf: end of its range (pos == end: done) */
    uint32_t *track;         /* [k] per leaf: its track */
    int flows_only;          /* skip events without a flow */
};

/* Does leaf a's next event come before leaf b's? (A finished leaf comes
 * after everything.) */
static int leaf_less(const struct merge_tree *m, uint32_t a, uint32_t b)
{
    int done_a, done_b;

    if (m->ts[a] != m->ts[b])
        return m->ts[a] < m->ts[b];
    /* Equal starts; UINT64_MAX may be a finished leaf or a real start. */
    done_a = m->pos[a] == m->end[a];
    done_b = m->pos[b] == m->end[b];
    if (done_a || done_b)
        return !done_a;
    return tv_event_cmp_tracks(m->h, &m->h->events[m->pos[a]], m->track[a],
                               &m->h->events[m->pos[b]], m->track[b]) < 0;
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
    m->ts[i] = p < m->end[i] ? m->h->events[p].ts : UINT64_MAX;
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

/* Is track t a leaf of a tree over [from[t], to[t])? (A tree of the events
 * with a flow leaves out the tracks known to hold none.) */
static int is_leaf(const struct tv_host *h, const uint32_t *from, const uint32_t *to, uint32_t t,
                   int flows_only)
{
    return from[t] < to[t] && (!flows_only || !h->flows_marked || h->tracks[t].flows);
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
        n += is_leaf(h, from, to, t, flows_only);
    while (k < n)
        k *= 2;
    m->k = k;
    m->node = malloc(k * sizeof(*m->node));
    m->ts = malloc(k * sizeof(*m->ts));
    m->pos = calloc(k, sizeof(*m->pos));
    m->end = calloc(k, sizeof(*m->end));
    m->track = calloc(k, sizeof(*m->track));
    if (m->node == NULL || m->ts == NULL || m->pos == NULL || m->end == NULL || m->track == NULL)
        return -ENOMEM;
    for (t = 0; t < k; t++)
        m->ts[t] = UINT64_MAX; /* padding leaves are finished */
    for (t = 0, n = 0; t < h->ntracks; t++) {
        if (!is_leaf(h, from, to, t, flows_only))
            continue;
        m->end[n] = to[t];
        m->track[n] = t;
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
    free(m->track);
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

/* Serials and drops, given the events in global order one at a time
 * (writes only serial and flags of the events, and not those of levels
 * below from: a coarse finish numbered them, and windows may be reading
 * them). */
struct numbering {
    uint64_t last_ts; /* start of the previous event */
    uint64_t serial;  /* its serial */
    int from;         /* events of levels below it keep their numbers */
};

static void number_event(struct numbering *st, struct tv_event *e)
{
    if (e->ts == st->last_ts)
        st->serial++;
    else
        st->serial = 0;
    st->last_ts = e->ts;
    if (e->level < st->from)
        return;
    e->serial = (uint8_t)st->serial;
    if (st->serial >= 256)
        e->flags |= TV_EV_DROPPED;
}

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
int tvl_plan_parts(struct order_parts *w, uint32_t want)
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
    w->level_slot = malloc(w->nparts * TV_LEVELS * sizeof(*w->level_slot));
    w->level_fill = malloc(w->nparts * TV_LEVELS * sizeof(*w->level_fill));
    if (w->bound == NULL || w->out == NULL || w->level_slot == NULL || w->level_fill == NULL)
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

void tvl_parts_free(struct order_parts *w)
{
    free(w->lo_ts);
    free(w->bound);
    free(w->out);
    free(w->level_slot);
    free(w->level_fill);
    free(w->flow_count);
    free(w->part_flows);
    big_free(w->flow_order);
    big_free(w->spare);
}

/* Merge part p, numbering its events and listing its stored events in its
 * slots of each level (parallel_for item). */
int tvl_order_one_part(void *arg, size_t p)
{
    struct order_parts *w = arg;
    struct tv_host *h = w->h;
    uint32_t nt = h->ntracks, e, *fill = &w->level_fill[p * TV_LEVELS];
    struct numbering st = {UINT64_MAX, 0, w->from};
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
        if (!(ev->flags & TV_EV_DROPPED))
            w->by_level[fill[ev->level]++] = e;
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
    /* The leaves are the tracks with events here (that may have a flow), in
     * order; a leaf starts at its first event with a flow, if any. */
    for (t = 0; rc == 0 && t < nt; t++) {
        if (!is_leaf(h, from, till, t, 1))
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
int tvl_order_flows(struct order_parts *w, int nthreads, uint8_t *track_flows)
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
