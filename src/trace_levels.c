/*
 * trace_levels.c - finishing a trace index: XProf's storage step in memory.
 *
 * After a builder has added every event, tv_finish
 *   1. orders tracks as the JSON lists them and groups events by track,
 *      sorted by XProf's comparator inside each track (tracks in parallel);
 *   2. walks all events in global comparator order (a k-way merge of the
 *      tracks) to number events sharing a start time (XProf's "serial", the
 *      uid of a response) and to drop those numbered 256 or more, as XProf's
 *      one-byte SSTable key does;
 *   3. assigns each event its zoom level as GetEventsByLevel does: flows are
 *      decided first, globally in time order (their own merge, run beside
 *      step 2; the twelve trackers' flow maps are one map there, since every
 *      flow event passes every tracker), then every track runs twelve
 *      trackers, one per level (tracks in parallel);
 *   4. lists stored events per level in comparator order (the SSTable order).
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
    ve->has_flow = e->flow != 0;
    ve->flow_id = e->flow ? TV_FLOW_ID(h->flows[e->flow - 1]) : 0;
    ve->type = e->flow ? TV_FLOW_TYPE(h->flows[e->flow - 1]) : 0;
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

/* --- step 2: global order, uids, span ------------------------------------------- */

/* A min-heap of track cursors keyed by the comparator; each slot caches the
 * start of its next event, which decides most comparisons. */
struct merge_heap {
    const struct tv_host *h; /* the host */
    uint64_t *ts;            /* per heap slot: start of its next event */
    uint32_t *pos;           /* per heap slot: next event index */
    uint32_t *end;           /* per heap slot: end of its track */
    uint32_t n;              /* slots in use */
};

static int heap_less(const struct merge_heap *m, uint32_t a, uint32_t b)
{
    if (m->ts[a] != m->ts[b])
        return m->ts[a] < m->ts[b];
    return tv_event_cmp(m->h, &m->h->events[m->pos[a]], &m->h->events[m->pos[b]]) < 0;
}

static void heap_swap(struct merge_heap *m, uint32_t a, uint32_t b)
{
    uint64_t t = m->ts[a];
    uint32_t p = m->pos[a], e = m->end[a];

    m->ts[a] = m->ts[b];
    m->pos[a] = m->pos[b];
    m->end[a] = m->end[b];
    m->ts[b] = t;
    m->pos[b] = p;
    m->end[b] = e;
}

static void heap_down(struct merge_heap *m, uint32_t i)
{
    for (;;) {
        uint32_t l = 2 * i + 1, r = l + 1, s = i;
        if (l < m->n && heap_less(m, l, s))
            s = l;
        if (r < m->n && heap_less(m, r, s))
            s = r;
        if (s == i)
            return;
        heap_swap(m, i, s);
        i = s;
    }
}

/* Serials, drops and span, given the events in global order one at a
 * time (writes only serial and flags of the events). */
struct numbering {
    uint64_t last_ts; /* start of the previous event */
    uint64_t serial;  /* its serial */
};

static void number_event(struct tv_host *h, struct numbering *st, struct tv_event *e)
{
    const uint64_t max_ts = UINT64_MAX / 2;

    if (e->ts == st->last_ts)
        st->serial++;
    else
        st->serial = 0;
    st->last_ts = e->ts;
    e->serial = (uint8_t)st->serial;
    if (st->serial >= 256)
        e->flags |= TV_EV_DROPPED;
    /* XProf's ExpandTraceSpan. */
    if (e->ts <= max_ts && (!h->has_span || e->ts < h->min_ps))
        h->min_ps = e->ts;
    if (e->ts + e->dur <= max_ts && (!h->has_span || e->ts + e->dur > h->max_ps))
        h->max_ps = e->ts + e->dur;
    h->has_span = 1;
}

/* The next position at or after p (before end) of an event with a flow. */
static uint32_t next_flow(const struct tv_host *h, uint32_t p, uint32_t end)
{
    while (p < end && h->events[p].flow == 0)
        p++;
    return p;
}

/* All events (or, with flows_only, those with a flow) in global comparator
 * order: a heap merge of the tracks. *np = how many. All events are also
 * numbered (number_event) as they come out. */
static int global_order(struct tv_host *h, int flows_only, uint32_t **orderp, uint32_t *np)
{
    struct merge_heap m = {h, NULL, NULL, NULL, 0};
    struct numbering st = {UINT64_MAX, 0};
    uint32_t *order = big_malloc((h->nevents ? h->nevents : 1) * sizeof(*order));
    uint32_t t, i = 0;

    m.ts = malloc((h->ntracks + 1) * sizeof(*m.ts));
    m.pos = malloc((h->ntracks + 1) * sizeof(*m.pos));
    m.end = malloc((h->ntracks + 1) * sizeof(*m.end));
    if (order == NULL || m.ts == NULL || m.pos == NULL || m.end == NULL) {
        big_free(order);
        free(m.ts);
        free(m.pos);
        free(m.end);
        return -ENOMEM;
    }
    for (t = 0; t < h->ntracks; t++) {
        uint32_t first = h->tracks[t].first, end = first + h->tracks[t].count;
        if (flows_only)
            first = next_flow(h, first, end);
        if (first == end)
            continue;
        m.pos[m.n] = first;
        m.end[m.n] = end;
        m.ts[m.n] = h->events[first].ts;
        m.n++;
    }
    for (t = m.n; t-- > 0;)
        heap_down(&m, t);
    while (m.n > 0) {
        if (!flows_only)
            number_event(h, &st, &h->events[m.pos[0]]);
        order[i++] = m.pos[0]++;
        if (flows_only)
            m.pos[0] = next_flow(h, m.pos[0], m.end[0]);
        if (m.pos[0] == m.end[0]) {
            m.n--;
            if (m.n == 0)
                break;
            heap_swap(&m, 0, m.n);
        } else {
            m.ts[0] = h->events[m.pos[0]].ts;
        }
        heap_down(&m, 0);
    }
    free(m.ts);
    free(m.pos);
    free(m.end);
    *orderp = order;
    *np = i;
    return 0;
}

/* --- step 3: zoom levels ------------------------------------------------------------ */

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

/* Flows first (CalculateFlowVisibility): for each flow record, the first
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
        uint64_t packed = h->flows[e->flow - 1];
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
        flow_level[e->flow - 1] = fs->first;
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
        if (e->flow != 0) {
            uint8_t fl = flow_level[e->flow - 1];
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

/* Work shared by the level threads: tracks are taken one at a time. */
struct level_work {
    struct tv_host *h;         /* the host */
    const uint32_t *tracks;    /* track indices, most events first */
    const uint8_t *flow_level; /* per flow record */
    pthread_mutex_t lock;      /* guards next and rc */
    uint32_t next;             /* next track to do */
    int rc;                    /* first failure */
};

static void *level_worker(void *arg)
{
    struct level_work *w = arg;

    for (;;) {
        uint32_t t;
        int rc;
        pthread_mutex_lock(&w->lock);
        t = w->next++;
        pthread_mutex_unlock(&w->lock);
        if (t >= w->h->ntracks)
            return NULL;
        rc = track_levels(w->h, w->tracks[t], w->flow_level);
        if (rc != 0) {
            pthread_mutex_lock(&w->lock);
            w->rc = rc;
            pthread_mutex_unlock(&w->lock);
        }
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

static int all_track_levels(struct tv_host *h, const uint8_t *flow_level, int nthreads)
{
    uint32_t *tracks = malloc((h->ntracks ? h->ntracks : 1) * sizeof(*tracks)), t;
    struct level_work w = {h, tracks, flow_level, PTHREAD_MUTEX_INITIALIZER, 0, 0};
    pthread_t tids[16];
    int i, started = 0;

    if (tracks == NULL)
        return -ENOMEM;
    for (t = 0; t < h->ntracks; t++)
        tracks[t] = t;
    qsort_r(tracks, h->ntracks, sizeof(*tracks), count_desc, h);
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
    pthread_mutex_destroy(&w.lock);
    free(tracks);
    return w.rc;
}

/* --- step 4: the level index ------------------------------------------------------- */

static int build_level_index(struct tv_host *h, const uint32_t *order)
{
    uint32_t count[TV_LEVELS] = {0}, fill[TV_LEVELS], i, total = 0;
    int L;

    for (i = 0; i < h->nevents; i++) {
        const struct tv_event *e = &h->events[i];
        if (!(e->flags & TV_EV_DROPPED))
            count[e->level]++;
    }
    for (L = 0; L < TV_LEVELS; L++) {
        h->level_start[L] = total;
        fill[L] = total;
        total += count[L];
    }
    h->level_start[TV_LEVELS] = total;
    h->by_level = big_malloc((total ? total : 1) * sizeof(*h->by_level));
    if (h->by_level == NULL)
        return -ENOMEM;
    for (i = 0; i < h->nevents; i++) {
        const struct tv_event *e = &h->events[order[i]];
        if (!(e->flags & TV_EV_DROPPED))
            h->by_level[fill[e->level]++] = order[i];
    }
    return 0;
}

/* The two independent parts of ordering, run side by side: the global
 * order with serials and span (writes serial and flags), and the flow
 * events' own order with their levels (reads only what the comparator
 * and the trackers read). */
struct order_work {
    struct tv_host *h;   /* the host */
    uint32_t *order;     /* all events, comparator order */
    uint8_t *flow_level; /* per flow record */
};

static int order_part(void *arg, size_t part)
{
    struct order_work *w = arg;
    uint32_t *flow_order = NULL, n;
    int rc;

    if (part == 0)
        return global_order(w->h, 0, &w->order, &n);
    if (w->h->nflows == 0)
        return 0;
    rc = global_order(w->h, 1, &flow_order, &n);
    if (rc == 0)
        rc = flow_levels(w->h, flow_order, n, w->flow_level);
    big_free(flow_order);
    return rc;
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

int tv_finish(struct tv_host *h, int nthreads, struct xp_err *err)
{
    struct order_work work = {NULL, NULL, NULL};
    uint32_t *order = NULL, i, j;
    uint8_t *flow_level = NULL;
    int rc;

    rc = build_name_ranks(h);
    if (rc == 0)
        rc = order_tracks(h, nthreads);
    if (rc != 0)
        goto fail;
    flow_level = big_malloc(h->nflows ? h->nflows : 1);
    if (flow_level == NULL) {
        rc = -ENOMEM;
        goto fail;
    }
    work.h = h;
    work.flow_level = flow_level;
    rc = parallel_for(2, nthreads, order_part, &work);
    order = work.order;
    if (rc == 0)
        rc = all_track_levels(h, flow_level, nthreads);
    if (rc == 0)
        rc = build_level_index(h, order);
    if (rc != 0)
        goto fail;
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
    big_free(order);
    big_free(flow_level);
    if (h->build != NULL)
        free(h->build->slots);
    free(h->build);
    h->build = NULL;
    return 0;
fail:
    big_free(order);
    big_free(flow_level);
    return xp_err_set(err, rc, "%s: out of memory while indexing the trace", h->hostname);
}
