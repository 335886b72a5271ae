/*
 * trace_levels_flows.c - step 2's flow pass of finishing a trace index
 * (XProf's CalculateFlowVisibility): the events with a flow, in global
 * order, through the trackers of a range of levels (all twelve, or those a
 * coarse finish needs, or those it left), one map of open flows standing
 * for the trackers' maps; each flow's level is the one its first event
 * decided.
 */
#include "trace_levels_int.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* --- step 2: zoom levels ------------------------------------------------------------ */

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

/* One flow event on a thread through the trackers of levels r
 * (tv_vis_visible until one shows it, tv_vis_set after), shown at level
 * `given` already when that is below r.from: returns its level (r.to =
 * none). */
static int flow_event_rows(struct tv_vis *vis, const struct tv_event *e, uint64_t dur,
                           uint32_t track, struct flow_state *fs, struct level_range rg, int given)
{
    uint64_t end = e->ts + dur;
    int fresh = !(fs->state & FS_VIS), L, level = given < rg.from ? given : NTRACKERS;

    for (L = rg.from; L < rg.to; L++) {
        struct tv_row *r = &vis[L].rows[track];
        uint64_t res = vis[L].res;
        uint16_t bit = (uint16_t)(1u << L);
        uint32_t depth = tv_row_depth(r, e->ts);
        int visible = dur >= res;
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
    return level < NTRACKERS ? level : rg.to;
}

/* One async flow event (a channel row: the counter rule) through the
 * trackers of levels rg, shown at `given` already when below rg.from:
 * returns its level (rg.to = none). */
static int flow_event_channel(struct tv_vis *vis, const struct tv_event *e, uint32_t track,
                              struct level_range rg, int given)
{
    int L, level = given < rg.from ? given : NTRACKERS;

    for (L = rg.from; L < rg.to; L++) {
        struct tv_row *r = &vis[L].rows[track];
        if (level == NTRACKERS && !(!r->has_count || (e->ts - r->last_count) >= vis[L].res))
            continue;
        if (level == NTRACKERS)
            level = L;
        r->last_count = e->ts;
        r->has_count = 1;
    }
    return level < NTRACKERS ? level : rg.to;
}

/* How many events ahead the flows' pass prefetches. */
#define FLOW_PREFETCH 8

int tvl_flow_levels(struct tv_host *h, const uint32_t *flow_order, uint32_t nflow_events,
                    uint8_t *flow_level, uint8_t *own_level, struct level_range rg)
{
    struct tv_vis vis[NTRACKERS];
    struct flow_states open = {NULL, 0, 0};
    uint32_t i;
    int L, rc = 0;

    if (nflow_events == 0)
        return 0;
    for (L = rg.from; L < rg.to; L++) {
        if (tv_vis_init(&vis[L], tv_level_resolution(L), h->ntracks) != 0) {
            while (L-- > rg.from)
                tv_vis_free(&vis[L]);
            return -ENOMEM;
        }
    }
    for (i = 0; i < nflow_events && rc == 0; i++) {
        const struct tv_event *e = &h->events[flow_order[i]];
        uint64_t packed;
        int is_end, level, given;
        uint32_t s, track = tv_track_at(h, flow_order[i]);
        struct flow_state *fs;
        /* Global order jumps between tracks: fetch the event a few steps
         * ahead, and the flow of one that came in already. */
        if (i + 2 * FLOW_PREFETCH < nflow_events)
            __builtin_prefetch(&h->events[flow_order[i + 2 * FLOW_PREFETCH]]);
        if (i + FLOW_PREFETCH < nflow_events)
            __builtin_prefetch(&h->flows[h->events[flow_order[i + FLOW_PREFETCH]].src]);
        packed = h->flows[e->src];
        is_end = TV_FLOW_TYPE(packed) == TV_FLOW_END;
        s = fs_get(&open, TV_FLOW_ID(packed));
        if (s == UINT32_MAX) {
            rc = -ENOMEM;
            break;
        }
        fs = &open.v[s];
        given = rg.from > 0 ? own_level[e->src] : NTRACKERS;
        if (h->tracks[track].has_tid) {
            level = flow_event_rows(vis, e, tv_dur(h, e), track, fs, rg, given);
            fs->state = (uint8_t)(is_end ? fs->state & ~FS_VIS : fs->state | FS_VIS);
        } else {
            level = flow_event_channel(vis, e, track, rg, given);
        }
        if (own_level != NULL)
            own_level[e->src] = (uint8_t)level;
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
    for (L = rg.from; L < rg.to; L++) {
        if (vis[L].oom)
            rc = -ENOMEM;
        tv_vis_free(&vis[L]);
    }
    free(open.v);
    return rc;
}
