/*
 * trace_select.c - the three requests a tool makes of a finished trace
 * index (trace_index.h): a window (the levels it reads, merged by XProf's
 * comparator and thinned by the visibility tracker), a search by name
 * prefix, and one event's details by its key.
 */
#include "base/sort.h"
#include "trace_index.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "trace_levels.h"
#include "trace_vis.h"

static const uint64_t level_res[TV_LEVELS] = {
    1000000000000ull, 100000000000ull, 10000000000ull, 1000000000ull, 100000000ull,
    10000000ull,      1000000ull,      100000ull,      10000ull,      1000ull,
    100ull,           10ull,           1ull,
};

uint64_t tv_level_resolution(int level)
{
    return level >= 0 && level < TV_LEVELS ? level_res[level] : 0;
}

uint64_t tv_num_events(const struct tv_host *h)
{
    return tv_levels_of(h)->start[TV_LEVELS];
}

uint32_t tv_frame_number(const struct tv_frame *frames, uint32_t n, uint64_t hash)
{
    uint32_t lo = 0, hi = n;

    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (frames[mid].hash < hash)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < n && frames[lo].hash == hash ? lo + 1 : 0;
}

/* 1 if XProf's TraceEventsFilter / visibility filter drops e: a FLOW_MID
 * event on a TPU process unless full_dma. */
static int dropped_flow_mid(const struct tv_host *h, const struct tv_event *e, int full_dma)
{
    const struct tv_track *t;
    uint32_t i;

    if (full_dma || !e->has_flow || TV_FLOW_TYPE(h->flows[e->src]) != TV_FLOW_MID)
        return 0;
    t = &h->tracks[tv_track_at(h, (uint32_t)(e - h->events))];
    for (i = 0; i < h->ndevices; i++) {
        if (h->devices[i].pid == t->pid)
            return h->devices[i].tpu;
    }
    return 0;
}

/* First position in lv->by_level[lo..hi) whose event starts at or after ts. */
static uint32_t level_lower_bound(const struct tv_host *h, const struct tv_levels *lv, uint32_t lo,
                                  uint32_t hi, uint64_t ts)
{
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (h->events[lv->by_level[mid]].ts < ts)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* A growable list of event indices, with each event's start when asked
 * (ts != NULL once the first entry is pushed with idx_push_ts). */
struct idx_list {
    uint32_t *v;  /* entries */
    uint64_t *ts; /* [cap] start of each entry's event, or NULL */
    uint32_t n;   /* used */
    uint32_t cap; /* allocated */
};

static int idx_grow(struct idx_list *l, int with_ts)
{
    uint32_t cap = l->cap ? l->cap * 2 : 256;
    uint32_t *v = realloc(l->v, cap * sizeof(*v));
    uint64_t *ts;

    if (v == NULL)
        return -ENOMEM;
    l->v = v;
    if (with_ts) {
        ts = realloc(l->ts, cap * sizeof(*ts));
        if (ts == NULL)
            return -ENOMEM;
        l->ts = ts;
    }
    l->cap = cap;
    return 0;
}

static int idx_push(struct idx_list *l, uint32_t x)
{
    if (l->n == l->cap && idx_grow(l, 0) != 0)
        return -ENOMEM;
    l->v[l->n++] = x;
    return 0;
}

static int idx_push_ts(struct idx_list *l, uint32_t x, uint64_t ts)
{
    if (l->n == l->cap && idx_grow(l, 1) != 0)
        return -ENOMEM;
    l->ts[l->n] = ts;
    l->v[l->n++] = x;
    return 0;
}

/* How many events ahead the window's thinning pass prefetches. */
#define WINDOW_PREFETCH 8

/* A window clamped to the trace, in ps, with XProf's resolution: 0 when
 * nothing overlaps it (the trace is empty or ends before it). */
struct window_ps {
    uint64_t begin, end; /* inclusive */
    uint64_t res;        /* ps a bin, 0 = every event */
};

static int window_ps(const struct tv_host *h, const struct tv_window *w, struct window_ps *ps)
{
    uint64_t begin = (uint64_t)(w->start_ms * 1e9), end = (uint64_t)(w->end_ms * 1e9);

    if (!h->has_span)
        return 0;
    if (begin < h->min_ps)
        begin = h->min_ps;
    if (end == 0 || end > h->max_ps)
        end = h->max_ps;
    if (begin > end)
        return 0; /* the window lies after the trace: nothing overlaps */
    ps->begin = begin;
    ps->end = end;
    ps->res = 0;
    if (w->resolution != 0 && h->nevents >= TV_STREAMING_THRESHOLD)
        ps->res = (uint64_t)llround((double)(end - begin) / w->resolution);
    return 1;
}

/* The deepest level read at resolution res (0: all of them). */
static int level_of_res(uint64_t res)
{
    int level;

    if (res == 0)
        return TV_LEVELS - 1;
    for (level = 0; level < TV_LEVELS - 1; level++) {
        if (res >= level_res[level])
            break;
    }
    return level;
}

int tv_window_level(const struct tv_host *h, const struct tv_window *w)
{
    struct window_ps ps;

    /* Nothing to read: no level is worth finishing apart. */
    return window_ps(h, w, &ps) ? level_of_res(ps.res) : TV_LEVELS - 1;
}

int tv_select_window(const struct tv_host *h, const struct tv_window *w, uint32_t **idxp,
                     uint32_t *np)
{
    const struct tv_levels *lv = tv_levels_of(h);
    uint64_t begin, end, res;
    struct window_ps ps;
    struct idx_list loaded = {0}, out = {0};
    uint32_t runs[TV_LEVELS + 1], nruns = 0, i;
    struct tv_vis vis;
    int rc = 0, level;

    *idxp = NULL;
    *np = 0;
    if (!window_ps(h, w, &ps))
        return 0;
    if (lv->known < level_of_res(ps.res))
        return -EINVAL; /* the caller did not ask snapshot_trace_index for w */
    begin = ps.begin;
    end = ps.end;
    res = ps.res;

    /* Read levels 0, 1, ... as XProf's DoLoadFromLevelDbTable does. */
    for (level = 0; level < TV_LEVELS; level++) {
        uint32_t lo = lv->start[level], hi = lv->start[level + 1], p;
        uint64_t from = 0;
        if (level > 0 && begin > level_res[level - 1])
            from = begin - level_res[level - 1];
        runs[nruns++] = loaded.n;
        for (p = level_lower_bound(h, lv, lo, hi, from); p < hi; p++) {
            uint32_t ei = lv->by_level[p];
            uint64_t ts = h->events[ei].ts;
            if (ts > end)
                break;
            if (dropped_flow_mid(h, &h->events[ei], w->full_dma))
                continue;
            if (idx_push_ts(&loaded, ei, ts) != 0) {
                rc = -ENOMEM;
                goto done;
            }
        }
        if (res >= level_res[level])
            break;
    }
    runs[nruns] = loaded.n;

    /* Merge the levels by the comparator, then thin with a fresh tracker. */
    rc = tv_merge_runs(h, loaded.v, loaded.ts, runs, nruns);
    if (rc != 0)
        goto done;
    if (res != 0 && tv_vis_init(&vis, res, h->ntracks) != 0) {
        rc = -ENOMEM;
        goto done;
    }
    for (i = 0; i < loaded.n; i++) {
        const struct tv_event *e = &h->events[loaded.v[i]];
        int keep;
        /* The events lie all over the index: ask for one a few steps ahead. */
        if (i + WINDOW_PREFETCH < loaded.n)
            __builtin_prefetch(&h->events[loaded.v[i + WINDOW_PREFETCH]]);
        if (begin == end) {
            keep = 1; /* an instant window cannot filter */
        } else if (!(begin <= e->ts + tv_dur(h, e) && e->ts <= end)) {
            keep = 0;
        } else if (res == 0) {
            keep = 1;
        } else {
            struct tv_vis_event ve;
            tv_vis_event_of(h, e, &ve);
            keep = tv_vis_visible(&vis, &ve);
        }
        if (keep && idx_push(&out, loaded.v[i]) != 0) {
            rc = -ENOMEM;
            break;
        }
    }
    if (res != 0) {
        if (vis.oom && rc == 0)
            rc = -ENOMEM;
        tv_vis_free(&vis);
    }
    if (rc == 0) {
        /* events[] is in output order: ascending index is the answer. */
        rc = xp_sort_u32(out.v, out.n);
    }
    if (rc == 0) {
        *idxp = out.v;
        *np = out.n;
        out.v = NULL;
    }
done:
    free(loaded.v);
    free(loaded.ts);
    free(out.v);
    return rc;
}

/* Output order of search results: track, then level, start, uid. */
static int cmp_search(const void *a, const void *b, void *arg)
{
    const struct tv_host *h = arg;
    uint32_t i = *(const uint32_t *)a, j = *(const uint32_t *)b;
    const struct tv_event *x = &h->events[i], *y = &h->events[j];
    uint32_t tx = tv_track_at(h, i), ty = tv_track_at(h, j);

    if (tx != ty)
        return tx < ty ? -1 : 1;
    if (x->level != y->level)
        return x->level < y->level ? -1 : 1;
    if (x->ts != y->ts)
        return x->ts < y->ts ? -1 : 1;
    return (int)x->serial - (int)y->serial;
}

int tv_select_search(const struct tv_host *h, const char *prefix, int full_dma, uint32_t **idxp,
                     uint32_t *np)
{
    size_t plen = strlen(prefix);
    uint32_t nstr = tv_str_count(h), i;
    unsigned char *match;
    struct idx_list out = {0};

    *idxp = NULL;
    *np = 0;
    if (tv_levels_of(h)->known < TV_LEVELS - 1)
        return -EINVAL; /* every event's uid is needed */
    match = calloc(nstr ? nstr : 1, 1);
    if (match == NULL)
        return -ENOMEM;
    for (i = 1; i < nstr; i++)
        match[i] = tv_len(h, i) >= plen && memcmp(tv_text(h, i), prefix, plen) == 0;
    for (i = 0; i < h->nevents; i++) {
        const struct tv_event *e = &h->events[i];
        if ((e->flags & TV_EV_DROPPED) || !match[e->name] || dropped_flow_mid(h, e, full_dma))
            continue;
        if (idx_push(&out, i) != 0) {
            free(match);
            free(out.v);
            return -ENOMEM;
        }
    }
    free(match);
    if (out.n > 1)
        qsort_r(out.v, out.n, sizeof(*out.v), cmp_search, (void *)h);
    *idxp = out.v;
    *np = out.n;
    return 0;
}

int64_t tv_find_event(const struct tv_host *h, uint64_t ts, uint64_t uid, const char *name,
                      uint64_t dur)
{
    const struct tv_levels *lv = tv_levels_of(h);
    int level;
    size_t nlen = strlen(name);

    if (uid >= 256)
        return -1; /* XProf cannot form the key */
    for (level = 0; level <= lv->known; level++) {
        uint32_t lo = lv->start[level], hi = lv->start[level + 1], p;
        for (p = level_lower_bound(h, lv, lo, hi, ts); p < hi; p++) {
            const struct tv_event *e = &h->events[lv->by_level[p]];
            if (e->ts != ts)
                break;
            if (e->serial != uid)
                continue;
            if (tv_len(h, e->name) == nlen && memcmp(tv_text(h, e->name), name, nlen) == 0 &&
                tv_dur(h, e) == dur)
                return lv->by_level[p];
            break; /* the key matched another event: try the next level */
        }
    }
    return -1;
}
