/*
 * trace_levels.c - finishing a trace index: XProf's storage step in memory.
 *
 * After a builder has added every event, tv_finish
 *   1. orders tracks as the JSON lists them and groups events by track,
 *      sorted by XProf's comparator inside each track;
 *   2. walks all events in global comparator order (a k-way merge of the
 *      tracks) to number events sharing a start time (XProf's "serial", the
 *      uid of a response) and to drop those numbered 256 or more, as XProf's
 *      one-byte SSTable key does;
 *   3. assigns each event its zoom level as GetEventsByLevel does: flows are
 *      decided first, globally in time order, then every track runs twelve
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

static int order_tracks(struct tv_host *h)
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
    /* Sort inside each track unless already sorted. */
    for (t = 0; t < n; t++) {
        struct tv_event *ev = &h->events[sorted[t].first];
        uint32_t c = sorted[t].count;
        if (rc == 0)
            rc = xp_sort_runs(ev, c, sizeof(*ev), track_cmp, h);
    }
    free(new_of_old);
    free(old_of_new);
    free(next);
    return rc;
}

/* --- step 2: global order, uids, span ------------------------------------------- */

/* A min-heap of track cursors keyed by the comparator. */
struct merge_heap {
    const struct tv_host *h; /* the host */
    uint32_t *pos;           /* per heap slot: next event index */
    uint32_t *end;           /* per heap slot: end of its track */
    uint32_t n;              /* slots in use */
};

static int heap_less(const struct merge_heap *m, uint32_t a, uint32_t b)
{
    return tv_event_cmp(m->h, &m->h->events[m->pos[a]], &m->h->events[m->pos[b]]) < 0;
}

static void heap_swap(struct merge_heap *m, uint32_t a, uint32_t b)
{
    uint32_t p = m->pos[a], e = m->end[a];

    m->pos[a] = m->pos[b];
    m->end[a] = m->end[b];
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

/* All events in global comparator order. */
static int global_order(struct tv_host *h, uint32_t **orderp)
{
    struct merge_heap m = {h, NULL, NULL, 0};
    uint32_t *order = big_malloc((h->nevents ? h->nevents : 1) * sizeof(*order));
    uint32_t t, i = 0;

    m.pos = malloc((h->ntracks + 1) * sizeof(*m.pos));
    m.end = malloc((h->ntracks + 1) * sizeof(*m.end));
    if (order == NULL || m.pos == NULL || m.end == NULL) {
        big_free(order);
        free(m.pos);
        free(m.end);
        return -ENOMEM;
    }
    for (t = 0; t < h->ntracks; t++) {
        if (h->tracks[t].count == 0)
            continue;
        m.pos[m.n] = h->tracks[t].first;
        m.end[m.n] = h->tracks[t].first + h->tracks[t].count;
        m.n++;
    }
    for (t = m.n; t-- > 0;)
        heap_down(&m, t);
    while (m.n > 0) {
        order[i++] = m.pos[0]++;
        if (m.pos[0] == m.end[0]) {
            m.n--;
            if (m.n == 0)
                break;
            heap_swap(&m, 0, m.n);
        }
        heap_down(&m, 0);
    }
    free(m.pos);
    free(m.end);
    *orderp = order;
    return 0;
}

static void number_events(struct tv_host *h, const uint32_t *order)
{
    uint64_t last_ts = UINT64_MAX, serial = 0;
    const uint64_t max_ts = UINT64_MAX / 2;
    uint32_t i;

    for (i = 0; i < h->nevents; i++) {
        struct tv_event *e = &h->events[order[i]];
        if (e->ts == last_ts)
            serial++;
        else
            serial = 0;
        last_ts = e->ts;
        e->serial = (uint8_t)serial;
        if (serial >= 256)
            e->flags |= TV_EV_DROPPED;
        /* XProf's ExpandTraceSpan. */
        if (e->ts <= max_ts && (!h->has_span || e->ts < h->min_ps))
            h->min_ps = e->ts;
        if (e->ts + e->dur <= max_ts && (!h->has_span || e->ts + e->dur > h->max_ps))
            h->max_ps = e->ts + e->dur;
        h->has_span = 1;
    }
}

/* --- step 3: zoom levels ------------------------------------------------------------ */

#define NTRACKERS (TV_LEVELS - 1)

/* Flows first (CalculateFlowVisibility): for each flow record, the first
 * level at which its flow is visible (NTRACKERS = none). */
static int flow_levels(struct tv_host *h, const uint32_t *order, uint8_t *flow_level)
{
    struct tv_vis vis[NTRACKERS];
    struct tv_flowmap first;
    uint32_t i;
    int L, rc = 0;

    if (h->nflows == 0)
        return 0;
    tv_flowmap_init(&first);
    for (L = 0; L < NTRACKERS; L++) {
        if (tv_vis_init(&vis[L], tv_level_resolution(L), h->ntracks) != 0) {
            while (L-- > 0)
                tv_vis_free(&vis[L]);
            return -ENOMEM;
        }
    }
    for (i = 0; i < h->nevents; i++) {
        const struct tv_event *e = &h->events[order[i]];
        struct tv_vis_event ve;
        uint8_t lvl;
        if (e->flow == 0)
            continue;
        tv_vis_event_of(h, e, &ve);
        for (L = 0; L < NTRACKERS; L++) {
            if (tv_vis_visible(&vis[L], &ve))
                break;
        }
        lvl = tv_flowmap_first(&first, ve.flow_id, (uint8_t)L, ve.type == TV_FLOW_END, NTRACKERS);
        for (L++; L < NTRACKERS; L++)
            tv_vis_set(&vis[L], &ve, 1);
        flow_level[e->flow - 1] = lvl;
    }
    for (L = 0; L < NTRACKERS; L++) {
        if (vis[L].oom)
            rc = -ENOMEM;
        tv_vis_free(&vis[L]);
    }
    if (first.oom)
        rc = -ENOMEM;
    tv_flowmap_free(&first);
    return rc;
}

/* Levels of one track's events (ProcessTrackEventsParallel). */
static int track_levels(struct tv_host *h, uint32_t t, const uint8_t *flow_level)
{
    struct tv_vis vis[NTRACKERS];
    const struct tv_track *tr = &h->tracks[t];
    uint32_t i;
    int L, rc = 0;

    for (L = 0; L < NTRACKERS; L++) {
        if (tv_vis_init(&vis[L], tv_level_resolution(L), 1) != 0) {
            while (L-- > 0)
                tv_vis_free(&vis[L]);
            return -ENOMEM;
        }
    }
    for (i = tr->first; i < tr->first + tr->count; i++) {
        struct tv_event *e = &h->events[i];
        struct tv_vis_event ve;
        tv_vis_event_of(h, e, &ve);
        ve.row = 0;
        if (e->flow != 0) {
            uint8_t fl = flow_level[e->flow - 1];
            for (L = 0; L < NTRACKERS; L++) {
                if (L >= fl || e->dur >= tv_level_resolution(L))
                    break;
            }
            if (L < NTRACKERS)
                tv_vis_set(&vis[L], &ve, 0);
        } else {
            for (L = 0; L < NTRACKERS; L++) {
                if (tv_vis_visible(&vis[L], &ve))
                    break;
            }
        }
        e->level = (uint8_t)L;
        for (L++; L < NTRACKERS; L++)
            tv_vis_set(&vis[L], &ve, 0);
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
        rc = track_levels(w->h, t, w->flow_level);
        if (rc != 0) {
            pthread_mutex_lock(&w->lock);
            w->rc = rc;
            pthread_mutex_unlock(&w->lock);
        }
    }
}

static int all_track_levels(struct tv_host *h, const uint8_t *flow_level, int nthreads)
{
    struct level_work w = {h, flow_level, PTHREAD_MUTEX_INITIALIZER, 0, 0};
    pthread_t tids[16];
    int i, started = 0;

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
    uint32_t *order = NULL, i, j;
    uint8_t *flow_level = NULL;
    int rc;

    rc = build_name_ranks(h);
    if (rc == 0)
        rc = order_tracks(h);
    if (rc == 0)
        rc = global_order(h, &order);
    if (rc != 0)
        goto fail;
    number_events(h, order);
    flow_level = big_malloc(h->nflows ? h->nflows : 1);
    if (flow_level == NULL) {
        rc = -ENOMEM;
        goto fail;
    }
    rc = flow_levels(h, order, flow_level);
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
