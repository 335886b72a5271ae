/*
 * trace_levels_order.c - XProf's event comparator, and step 1 of finishing
 * a trace index: tracks in the order the JSON lists them, events grouped by
 * track and sorted by the comparator inside each track (tracks in parallel).
 * Until then each event's track is in the building state's track_of[], or
 * in the runs of slots a builder declared (tv_add_run: track_of is made
 * from them only when the runs are out of order or some event moved); from
 * then on it is where the event stands (tv_track_at).
 */
#include "base/sort.h"
#include "trace_levels_int.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/bigalloc.h"
#include "base/parallel.h"

/* Comparator key of a track: pid, then threads before channels, then tid. */
static uint64_t track_key(const struct tv_track *t)
{
    return ((uint64_t)t->pid << 33) | ((uint64_t)(t->has_tid ? 0 : 1) << 32) |
           (t->has_tid ? t->tid : 0);
}

/* The comparator from the tracks on (starts and durations tie). */
static int cmp_from_tracks(const struct tv_host *h, const struct tv_event *a, uint32_t ta,
                           const struct tv_event *b, uint32_t tb)
{
    uint64_t ka, kb;
    uint32_t ra, rb;

    if (ta != tb) {
        ka = track_key(&h->tracks[ta]);
        kb = track_key(&h->tracks[tb]);
        if (ka != kb)
            return ka < kb ? -1 : 1;
    }
    ra = h->name_rank[a->name];
    rb = h->name_rank[b->name];
    if (ra != rb)
        return ra < rb ? -1 : 1;
    if (ta != tb)
        return ta < tb ? -1 : 1;
    return a->src < b->src ? -1 : a->src > b->src;
}

/* Starts, then durations (descending); 0 when both tie. */
static int cmp_times(const struct tv_host *h, const struct tv_event *a, const struct tv_event *b)
{
    uint64_t da, db;

    if (a->ts != b->ts)
        return a->ts < b->ts ? -1 : 1;
    da = tv_dur(h, a);
    db = tv_dur(h, b);
    if (da != db)
        return da > db ? -1 : 1;
    return 0;
}

int tv_event_cmp_tracks(const struct tv_host *h, const struct tv_event *a, uint32_t ta,
                        const struct tv_event *b, uint32_t tb)
{
    int c = cmp_times(h, a, b);

    return c != 0 ? c : cmp_from_tracks(h, a, ta, b, tb);
}

int tv_event_cmp(const struct tv_host *h, const struct tv_event *a, const struct tv_event *b)
{
    int c = cmp_times(h, a, b);

    if (c != 0)
        return c;
    return cmp_from_tracks(h, a, tv_track_at(h, (uint32_t)(a - h->events)), b,
                           tv_track_at(h, (uint32_t)(b - h->events)));
}

void tv_vis_event_of(const struct tv_host *h, const struct tv_event *e, struct tv_vis_event *ve)
{
    ve->ts = e->ts;
    ve->dur = tv_dur(h, e);
    ve->row = tv_track_at(h, (uint32_t)(e - h->events));
    ve->has_tid = h->tracks[ve->row].has_tid;
    ve->has_flow = e->has_flow;
    ve->flow_id = e->has_flow ? TV_FLOW_ID(h->flows[e->src]) : 0;
    ve->type = e->has_flow ? TV_FLOW_TYPE(h->flows[e->src]) : 0;
}

int tv_merge_runs(const struct tv_host *h, uint32_t *idx, const uint64_t *ts, const uint32_t *runs,
                  uint32_t nruns)
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
            uint32_t p = pos[k];
            if (p >= runs[k + 1])
                continue;
            /* Starts decide; the comparator only breaks their ties. */
            if (best < 0 || ts[p] < ts[pos[best]] ||
                (ts[p] == ts[pos[best]] &&
                 tv_event_cmp(h, &h->events[idx[p]], &h->events[idx[pos[best]]]) < 0))
                best = (int)k;
        }
        tmp[i] = idx[pos[best]++];
    }
    memcpy(idx, tmp, total * sizeof(*tmp));
    free(tmp);
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

/* The comparator of two events of one track, with the host as
 * qsort_r-style context. */
static int track_cmp(const void *a, const void *b, void *h)
{
    return tv_event_cmp_tracks(h, a, 0, b, 0);
}

/* Sort the events of track t by the comparator (a parallel_for item). */
static int sort_track(void *arg, size_t t)
{
    struct tv_host *h = arg;
    struct tv_event *ev = &h->events[h->tracks[t].first];

    return xp_sort_runs(ev, h->tracks[t].count, sizeof(*ev), track_cmp, h);
}

/* The pass over every event that renumbers tracks, in parts run in
 * parallel: each part counts its events per new track and notes whether
 * its track numbers never go down (events already grouped by track). */
struct renumber {
    struct tv_host *h;
    const uint32_t *new_of_old; /* new track number of each old one */
    uint32_t nparts;            /* parts of the event array */
    uint32_t *counts;           /* [part * ntracks + track]: its events */
    uint8_t *grouped;           /* per part: track numbers never go down */
};

static int renumber_part(void *arg, size_t p)
{
    struct renumber *r = arg;
    struct tv_host *h = r->h;
    uint32_t n = h->ntracks, first = (uint32_t)((uint64_t)h->nevents * p / r->nparts);
    uint32_t end = (uint32_t)((uint64_t)h->nevents * (p + 1) / r->nparts), i, prev = 0;
    uint32_t *counts = &r->counts[(size_t)p * n], *track_of = h->build->track_of;
    uint8_t grouped = 1;

    for (i = first; i < end; i++) {
        uint32_t t = r->new_of_old[track_of[i]];
        if (track_of[i] != t)
            track_of[i] = t;
        counts[t]++;
        if (t < prev)
            grouped = 0;
        prev = t;
    }
    r->grouped[p] = grouped;
    return 0;
}

/* Renumber every event's track (new_of_old) and count each new track's
 * events into sorted[].count; returns 1 if the events were grouped by
 * track in the new order already, 0 if not, or -ENOMEM. */
static int renumber_events(struct tv_host *h, const uint32_t *new_of_old, struct tv_track *sorted,
                           int nthreads)
{
    struct renumber r;
    uint32_t n = h->ntracks, p, t;
    int grouped = 1, rc;

    memset(&r, 0, sizeof(r));
    r.h = h;
    r.new_of_old = new_of_old;
    r.nparts = nthreads > 1 && h->nevents >= (1u << 16) ? (uint32_t)nthreads : 1;
    r.counts = calloc((size_t)r.nparts * n, sizeof(*r.counts));
    r.grouped = malloc(r.nparts);
    rc = r.counts != NULL && r.grouped != NULL ? 0 : -ENOMEM;
    if (rc == 0)
        rc = parallel_for(r.nparts, (int)r.nparts, renumber_part, &r);
    for (p = 0; rc == 0 && p < r.nparts; p++) {
        /* Grouped: every part is, and no part starts below where the one
         * before it ended. */
        uint32_t first = (uint32_t)((uint64_t)h->nevents * p / r.nparts);
        for (t = 0; t < n; t++)
            sorted[t].count += r.counts[(size_t)p * n + t];
        if (!r.grouped[p] || (first > 0 && first < h->nevents &&
                              h->build->track_of[first] < h->build->track_of[first - 1]))
            grouped = 0;
    }
    free(r.counts);
    free(r.grouped);
    return rc != 0 ? rc : grouped;
}

static int run_cmp(const void *a, const void *b)
{
    const struct tv_run *x = a, *y = b;

    return x->first < y->first ? -1 : x->first > y->first;
}

/* The layout of declared runs (track numbers renumbered by new_of_old):
 * each new track's events counted into sorted[].count; returns 1 if the
 * runs are grouped by track in the new order already and no event moved,
 * else 0 with track_of made from the runs and moves (or -ENOMEM, or
 * -EINVAL if the runs do not cover every slot once, or an event has no
 * track). */
static int runs_layout(struct tv_host *h, const uint32_t *new_of_old, struct tv_track *sorted)
{
    struct tv_build *b = h->build;
    uint32_t at = 0, k, i, prev = 0, *track_of;
    int grouped = b->nmoves == 0;

    if (b->nruns > 1)
        qsort(b->runs, b->nruns, sizeof(*b->runs), run_cmp);
    for (k = 0; k < b->nruns; k++) {
        const struct tv_run *r = &b->runs[k];
        uint32_t t;
        if (r->first != at || r->n > h->nevents - at)
            return -EINVAL;
        at += r->n;
        if (r->track == TV_RUN_MOVED) {
            grouped = 0;
            continue;
        }
        if (r->track >= h->ntracks)
            return -EINVAL;
        t = new_of_old[r->track];
        if (t < prev)
            grouped = 0;
        prev = t;
    }
    if (at != h->nevents)
        return -EINVAL;
    if (grouped) {
        for (k = 0; k < b->nruns; k++)
            sorted[new_of_old[b->runs[k].track]].count += b->runs[k].n;
        return 1;
    }
    track_of = big_malloc((h->nevents ? h->nevents : 1) * sizeof(*track_of));
    if (track_of == NULL)
        return -ENOMEM;
    for (k = 0; k < b->nruns; k++) {
        const struct tv_run *r = &b->runs[k];
        uint32_t t = r->track == TV_RUN_MOVED ? UINT32_MAX : new_of_old[r->track];
        for (i = r->first; i < r->first + r->n; i++)
            track_of[i] = t;
    }
    for (k = 0; k < b->nmoves; k++) {
        const struct tv_move *m = &b->moves[k];
        if (m->slot >= h->nevents || m->track >= h->ntracks) {
            big_free(track_of);
            return -EINVAL;
        }
        track_of[m->slot] = new_of_old[m->track];
    }
    for (i = 0; i < h->nevents; i++) {
        if (track_of[i] == UINT32_MAX) {
            big_free(track_of);
            return -EINVAL;
        }
        sorted[track_of[i]].count++;
    }
    b->track_of = track_of;
    return 0;
}

int tvl_order_tracks(struct tv_host *h, int nthreads)
{
    uint32_t n = h->ntracks, i, t;
    uint32_t *old_of_new, *new_of_old, *next;
    struct tv_track *sorted;
    int rc = 0, grouped;

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
    if (h->build->runs_mode)
        grouped = runs_layout(h, new_of_old, sorted);
    else
        grouped = renumber_events(h, new_of_old, sorted, nthreads);
    if (grouped < 0) {
        free(sorted);
        free(new_of_old);
        free(old_of_new);
        free(next);
        return grouped;
    }
    /* First event of each track; then, unless the events are grouped by
     * track already, an in-place bucket permutation. */
    for (t = 0, i = 0; t < n; t++) {
        sorted[t].first = i;
        next[t] = i;
        i += sorted[t].count;
    }
    next[n] = i;
    free(h->tracks);
    h->tracks = sorted;
    for (t = 0; t < n && !grouped; t++) {
        uint32_t end = sorted[t].first + sorted[t].count, *track_of = h->build->track_of;
        while (next[t] < end) {
            uint32_t at = next[t];
            if (track_of[at] == t) {
                next[t]++;
            } else {
                struct tv_event tmp = h->events[at];
                uint32_t tt = track_of[at], dst = next[tt]++;
                h->events[at] = h->events[dst];
                track_of[at] = track_of[dst];
                h->events[dst] = tmp;
                track_of[dst] = tt;
            }
        }
    }
    /* From here on an event's track is where it stands. */
    big_free(h->build->track_of);
    h->build->track_of = NULL;
    rc = tv_track_blocks(h);
    if (rc != 0) {
        free(new_of_old);
        free(old_of_new);
        free(next);
        return rc;
    }
    /* Sort inside each track unless already sorted (tracks in parallel). */
    rc = parallel_for(n, nthreads, sort_track, h);
    free(new_of_old);
    free(old_of_new);
    free(next);
    return rc;
}
