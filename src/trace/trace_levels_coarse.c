/*
 * trace_levels_coarse.c - step 3 of a coarse finish: the uids and the
 * level index of the coarse levels alone.
 *
 * An event's uid (XProf's serial) is its place among the events that start
 * when it does, in comparator order, so the uids of the coarse events need
 * only the events that share a start with one of them: their distinct
 * starts are sorted, every track is intersected with them (galloping, since
 * a track is sorted by start and the starts are few), and the events found
 * are put in comparator order (grouped by start with a counting sort, each
 * group then sorted by the comparator: groups are small) and numbered. The
 * same order lists the coarse events level by level: the level index of
 * levels 0..upto, each in comparator order, as the global merge would list
 * them.
 */
#include "base/sort.h"
#include "trace_levels_int.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/bigalloc.h"
#include "base/grow.h"
#include "base/parallel.h"

#define COARSE_PARTS 16 /* parts of the event array, for the threads */
#define COARSE_MAX_SHARE                                                                           \
    4                  /* more than 1 event in 4 coarse, or sharing a start                        \
                          with one: merge them all instead */
#define TIE_BATCH 4096 /* ties a part finds between looks at the total */

/* An event sharing its start with a coarse event. */
struct tie {
    uint32_t start; /* its start's rank among the coarse starts */
    uint32_t idx;   /* index in events */
    uint32_t track; /* its track */
    uint8_t level;  /* its level (TV_LEVEL_FINER if not coarse) */
    uint8_t stored; /* not dropped (set when numbered) */
};

/* A growable list of ties. */
struct tie_list {
    struct tie *v;
    uint32_t n, cap;
};

struct coarse_work {
    const struct tv_host *h;
    uint64_t *starts;   /* coarse starts, then distinct and sorted */
    uint32_t nstarts;   /* entries in starts */
    uint32_t tie_limit; /* more ties than this: declined */
    uint32_t tie_total; /* ties found so far (atomic, by batches) */
    struct tie_list ties[COARSE_PARTS];
};

static uint32_t part_from(const struct tv_host *h, size_t p)
{
    return (uint32_t)((uint64_t)h->nevents * p / COARSE_PARTS);
}

static int tie_push(struct tie_list *l, uint32_t start, uint32_t idx, uint32_t track,
                    unsigned level)
{
    if (xp_grow((void **)&l->v, &l->cap, l->n, sizeof(*l->v)) != 0)
        return -ENOMEM;
    l->v[l->n].start = start;
    l->v[l->n].idx = idx;
    l->v[l->n].track = track;
    l->v[l->n].level = (uint8_t)level;
    l->v[l->n].stored = 0;
    l->n++;
    return 0;
}

/* Key k of 64-bit keys stride bytes apart from keys. */
static inline uint64_t key_at(const char *keys, size_t stride, uint32_t k)
{
    uint64_t v;

    memcpy(&v, keys + (size_t)k * stride, sizeof(v));
    return v;
}

/* First k in [i, end) whose key is >= ts, the keys ascending (the starts
 * of events, or the coarse starts themselves): doubling steps, then
 * halves. */
static uint32_t gallop(const char *keys, size_t stride, uint32_t i, uint32_t end, uint64_t ts)
{
    uint32_t step = 1, lo = i, hi;

    while (lo + step < end && key_at(keys, stride, lo + step) < ts) {
        lo += step;
        step *= 2;
    }
    hi = lo + step < end ? lo + step : end;
    /* key lo < ts unless lo == i; the answer is in (lo, hi] or lo */
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (key_at(keys, stride, mid) < ts)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static uint32_t gallop_events(const struct tv_event *ev, uint32_t i, uint32_t end, uint64_t ts)
{
    return gallop((const char *)&ev->ts, sizeof(*ev), i, end, ts);
}

static uint32_t gallop_starts(const uint64_t *v, uint32_t j, uint32_t end, uint64_t ts)
{
    return gallop((const char *)v, sizeof(*v), j, end, ts);
}

/* Count a batch of ties into the total: -E2BIG past the limit (so many
 * events share the coarse starts that the global merge is as cheap, and
 * takes less memory). */
static int count_ties(struct coarse_work *w, uint32_t n)
{
    uint32_t total = __atomic_add_fetch(&w->tie_total, n, __ATOMIC_RELAXED);

    return total > w->tie_limit ? -E2BIG : 0;
}

/* The events of part p that start at one of the coarse starts, track by
 * track (a parallel_for item). */
static int ties_part(void *arg, size_t p)
{
    struct coarse_work *w = arg;
    const struct tv_host *h = w->h;
    const struct tv_event *ev = h->events;
    uint32_t i = part_from(h, p), end = part_from(h, p + 1), t, counted = 0;

    if (i >= end)
        return 0;
    for (t = tv_track_at(h, i); i < end; t++) {
        uint32_t seg_end = h->tracks[t].first + h->tracks[t].count, j;
        if (seg_end > end)
            seg_end = end;
        if (i >= seg_end)
            continue;
        j = gallop_starts(w->starts, 0, w->nstarts, ev[i].ts);
        while (i < seg_end && j < w->nstarts) {
            uint64_t ts = ev[i].ts, c = w->starts[j];
            if (ts < c) {
                i = gallop_events(ev, i, seg_end, c);
            } else if (ts > c) {
                j = gallop_starts(w->starts, j, w->nstarts, ts);
            } else {
                if (tie_push(&w->ties[p], j, i, t, ev[i].level) != 0)
                    return -ENOMEM;
                if (w->ties[p].n - counted >= TIE_BATCH) {
                    if (count_ties(w, w->ties[p].n - counted) != 0)
                        return -E2BIG;
                    counted = w->ties[p].n;
                }
                i++;
            }
        }
        i = seg_end;
    }
    return count_ties(w, w->ties[p].n - counted);
}

static int tie_cmp(const void *a, const void *b, void *arg)
{
    const struct tv_host *h = arg;
    const struct tie *x = a, *y = b;

    return tv_event_cmp_tracks(h, &h->events[x->idx], x->track, &h->events[y->idx], y->track);
}

/* Sort one group of ties (one start) by the comparator: insertion for the
 * usual few, qsort for a crowd. */
#define GROUP_INSERTION 16

static void sort_group(const struct tv_host *h, struct tie *g, uint32_t n)
{
    uint32_t i, j;

    if (n > GROUP_INSERTION) {
        qsort_r(g, n, sizeof(*g), tie_cmp, (void *)h);
        return;
    }
    for (i = 1; i < n; i++) {
        struct tie x = g[i];
        for (j = i; j > 0 && tie_cmp(&g[j - 1], &x, (void *)h) > 0; j--)
            g[j] = g[j - 1];
        g[j] = x;
    }
}

/* The ties to sort, for the threads: cut into parts at starts' groups. */
struct group_sort {
    const struct tv_host *h;
    struct tie *all; /* grouped by start */
    uint32_t n;      /* entries in all */
};

/* Where part p of the grouped ties begins: its share moved on to the next
 * group's first tie (n for the end). */
static uint32_t group_cut(const struct group_sort *gs, size_t p)
{
    uint32_t i = (uint32_t)((uint64_t)gs->n * p / COARSE_PARTS);

    while (i > 0 && i < gs->n && gs->all[i].start == gs->all[i - 1].start)
        i++;
    return i;
}

/* Sort the groups of part p (a parallel_for item). */
static int sort_groups_part(void *arg, size_t p)
{
    struct group_sort *gs = arg;
    uint32_t i = group_cut(gs, p), end = group_cut(gs, p + 1), at;

    for (; i < end; i = at) {
        for (at = i + 1; at < end && gs->all[at].start == gs->all[i].start; at++)
            ;
        if (at - i > 1)
            sort_group(gs->h, &gs->all[i], at - i);
    }
    return 0;
}

/* Distinct coarse starts, sorted, into w->starts. Returns 0, 1 (too many
 * coarse events) or -ENOMEM. */
static int coarse_starts(struct coarse_work *w, const struct coarse_list *placed)
{
    const struct tv_host *h = w->h;
    uint32_t total = 0, i, n = 0, t;
    int rc;

    for (t = 0; t < h->ntracks; t++)
        total += placed[t].n;
    if (total > h->nevents / COARSE_MAX_SHARE)
        return 1;
    w->starts = big_malloc((total ? total : 1) * sizeof(*w->starts));
    if (w->starts == NULL)
        return -ENOMEM;
    /* each track's starts ascend: one run a track */
    for (t = 0; t < h->ntracks; t++) {
        for (i = 0; i < placed[t].n; i++)
            w->starts[n++] = h->events[placed[t].v[i]].ts;
    }
    rc = xp_sort_runs_u64(w->starts, total);
    if (rc != 0)
        return rc;
    n = 0;
    for (i = 0; i < total; i++) {
        if (n == 0 || w->starts[n - 1] != w->starts[i])
            w->starts[n++] = w->starts[i];
    }
    w->nstarts = n;
    return 0;
}

/* The ties of every part in comparator order, in one array (*np entries):
 * counted per start, placed by start (in index order, so by track), each
 * start's group then sorted (the groups shared out among the threads).
 * Returns 0, 1 (too many ties) or -ENOMEM. */
static int ordered_ties(struct coarse_work *w, int nthreads, struct tie **tiesp, uint32_t *np)
{
    const struct tv_host *h = w->h;
    struct tie *all;
    struct group_sort gs;
    uint32_t n = 0, i, *next;
    size_t p;
    int rc;

    w->tie_limit = w->h->nevents / COARSE_MAX_SHARE;
    rc = parallel_for(COARSE_PARTS, nthreads, ties_part, w);
    if (rc == -E2BIG)
        return 1;
    if (rc != 0)
        return rc;
    for (p = 0; p < COARSE_PARTS; p++)
        n += w->ties[p].n;
    all = big_malloc((n ? n : 1) * sizeof(*all));
    next = calloc((size_t)w->nstarts + 1, sizeof(*next));
    if (all == NULL || next == NULL) {
        big_free(all);
        free(next);
        return -ENOMEM;
    }
    for (p = 0; p < COARSE_PARTS; p++) {
        for (i = 0; i < w->ties[p].n; i++)
            next[w->ties[p].v[i].start + 1]++;
    }
    for (i = 0; i < w->nstarts; i++)
        next[i + 1] += next[i];
    for (p = 0; p < COARSE_PARTS; p++) {
        for (i = 0; i < w->ties[p].n; i++)
            all[next[w->ties[p].v[i].start]++] = w->ties[p].v[i];
    }
    free(next);
    gs.h = h;
    gs.all = all;
    gs.n = n;
    rc = parallel_for(COARSE_PARTS, nthreads, sort_groups_part, &gs);
    if (rc != 0) {
        big_free(all);
        return rc;
    }
    *tiesp = all;
    *np = n;
    return 0;
}

/* Number the coarse events among their ties, then list the stored ones by
 * level. */
static int number_and_list(struct tv_host *h, int upto, struct tie *ties, uint32_t n,
                           struct tv_levels **lvp)
{
    struct tv_levels *lv = calloc(1, sizeof(*lv));
    uint32_t count[TV_LEVELS] = {0}, fill[TV_LEVELS], i, total = 0, serial = 0;
    int L;

    if (lv == NULL)
        return -ENOMEM;
    for (i = 0; i < n; i++) {
        struct tv_event *e;
        serial = i > 0 && ties[i - 1].start == ties[i].start ? serial + 1 : 0;
        if (ties[i].level > upto)
            continue;
        e = &h->events[ties[i].idx];
        e->serial = (uint8_t)serial;
        if (serial >= 256) {
            e->flags |= TV_EV_DROPPED;
        } else {
            ties[i].stored = 1;
            count[ties[i].level]++;
        }
    }
    for (L = 0; L < TV_LEVELS; L++) {
        lv->start[L] = total;
        fill[L] = total;
        total += count[L];
    }
    lv->start[TV_LEVELS] = total;
    lv->by_level = big_malloc((total ? total : 1) * sizeof(*lv->by_level));
    if (lv->by_level == NULL) {
        free(lv);
        return -ENOMEM;
    }
    for (i = 0; i < n; i++) {
        if (ties[i].stored)
            lv->by_level[fill[ties[i].level]++] = ties[i].idx;
    }
    lv->known = upto;
    *lvp = lv;
    return 0;
}

int tvl_coarse_index(struct tv_host *h, int upto, const struct coarse_list *placed, int nthreads,
                     struct tv_levels **lvp)
{
    struct coarse_work w;
    struct tie *ties = NULL;
    uint32_t nties = 0;
    size_t p;
    int rc;

    memset(&w, 0, sizeof(w));
    w.h = h;
    rc = coarse_starts(&w, placed);
    if (rc == 0)
        rc = ordered_ties(&w, nthreads, &ties, &nties);
    big_free(w.starts);
    for (p = 0; p < COARSE_PARTS; p++)
        free(w.ties[p].v);
    if (rc == 0)
        rc = number_and_list(h, upto, ties, nties, lvp);
    big_free(ties);
    return rc;
}
