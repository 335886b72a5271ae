/*
 * trace_levels_tracks.c - step 2 of finishing a trace index per track
 * (XProf's ProcessTrackEventsParallel): each event's zoom level from the
 * visibility trackers of a range of levels, one per level; the level
 * threads run the flows' pass beside the tracks without a flow, then the
 * tracks with one.
 */
#include "trace_levels_int.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "base/grow.h"

static int coarse_push(struct coarse_list *l, uint32_t i)
{
    if (xp_grow((void **)&l->v, &l->cap, l->n, sizeof(*l->v)) != 0)
        return -ENOMEM;
    l->v[l->n++] = i;
    return 0;
}

/* Levels of one track's events (ProcessTrackEventsParallel) on the
 * trackers of levels rg: per event, tv_vis_visible on the trackers until
 * one shows it, tv_vis_set on the rest (an event with a flow takes the
 * level its flow decided, or the first its duration reaches; one placed
 * below rg.from already is set on them all); written out for one row,
 * without flows. */
static int track_levels(struct tv_host *h, uint32_t t, const uint8_t *flow_level,
                        struct level_range rg, struct coarse_list *placed)
{
    struct tv_vis vis[NTRACKERS];
    uint64_t res[NTRACKERS];
    const struct tv_track *tr = &h->tracks[t];
    uint32_t i;
    int L, rc = 0;

    for (L = rg.from; L < rg.to; L++) {
        res[L] = tv_level_resolution(L);
        if (tv_vis_init(&vis[L], res[L], 1) != 0) {
            while (L-- > rg.from)
                tv_vis_free(&vis[L]);
            return -ENOMEM;
        }
    }
    for (i = tr->first; i < tr->first + tr->count; i++) {
        struct tv_event *e = &h->events[i];
        uint64_t dur = tv_dur(h, e), end = e->ts + dur;
        int set_from;
        if ((int)e->level < rg.from) {
            /* placed by a coarser pass: not written again (windows may be
             * reading it) */
            set_from = rg.from;
            L = -1;
        } else if (e->has_flow) {
            uint8_t fl = flow_level[e->src];
            for (L = rg.from; L < rg.to; L++) {
                if (L >= fl || dur >= res[L])
                    break;
            }
            set_from = L;
        } else if (tr->has_tid) {
            for (L = rg.from; L < rg.to; L++) {
                struct tv_row *r = vis[L].rows;
                uint32_t depth = tv_row_depth(r, e->ts);
                if (dur >= res[L] || depth >= r->depth || (e->ts - r->stack[depth]) >= res[L]) {
                    tv_row_push(&vis[L], r, depth, end);
                    break;
                }
            }
            set_from = L + 1;
        } else {
            for (L = rg.from; L < rg.to; L++) {
                struct tv_row *r = vis[L].rows;
                if (!r->has_count || (e->ts - r->last_count) >= res[L]) {
                    r->last_count = e->ts;
                    r->has_count = 1;
                    break;
                }
            }
            set_from = L + 1;
        }
        if (L >= 0)
            e->level = L < rg.to || rg.to == NTRACKERS ? (unsigned)L : TV_LEVEL_FINER;
        if (placed != NULL && L >= 0 && L < rg.to && coarse_push(placed, i) != 0)
            rc = -ENOMEM;
        for (L = set_from; L < rg.to; L++) {
            struct tv_row *r = vis[L].rows;
            if (tr->has_tid) {
                tv_row_push(&vis[L], r, tv_row_depth(r, e->ts), end);
            } else {
                r->last_count = e->ts;
                r->has_count = 1;
            }
        }
    }
    for (L = rg.from; L < rg.to; L++) {
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
    uint8_t *own_level;         /* its level in the flows' pass, or NULL */
    struct level_range range;   /* the levels assigned */
    struct coarse_list *placed; /* per track: the events placed, or NULL */
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
            rc = tvl_flow_levels(w->h, w->flow_order, w->nflow_events, w->flow_level, w->own_level,
                                 w->range);
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
        rc = track_levels(w->h, w->tracks[t], w->flow_level, w->range,
                          w->placed != NULL ? &w->placed[w->tracks[t]] : NULL);
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

int tvl_all_levels(struct tv_host *h, const uint32_t *flow_order, uint32_t nflow_events,
                   uint8_t *flow_level, uint8_t *own_level, const uint8_t *track_flows,
                   struct level_range rg, struct coarse_list *placed, int nthreads)
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
    w.own_level = own_level;
    w.range = rg;
    w.placed = placed;
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
