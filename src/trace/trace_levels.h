/*
 * trace_levels.h - internals shared by the trace index modules: the building
 * state, XProf's event comparator, and the tracker view of an event.
 */
#ifndef XPROFS_TRACE_LEVELS_H
#define XPROFS_TRACE_LEVELS_H

#include <pthread.h>
#include <stdint.h>

#include "base/idmap.h"
#include "trace_index.h"
#include "trace_vis.h"

/* Slots [first, first + n) of one track (tv_add_run); track TV_RUN_MOVED:
 * every event of the run is moved. */
struct tv_run {
    uint32_t first, n, track;
};

/* An event whose track is not its run's (tv_move_event). */
struct tv_move {
    uint32_t slot, track;
};

/* Building state of a tv_host, freed by tv_finish. */
struct tv_build {
    size_t cap;            /* allocated events */
    uint32_t *track_of;    /* [cap] each event's track until tvl_order_tracks
                              (made from the runs there, when declared) */
    int runs_mode;         /* tracks come from runs (tv_runs_begin) */
    struct tv_run *runs;   /* declared runs */
    uint32_t nruns;        /* entries in runs */
    uint32_t runs_cap;     /* allocated runs */
    struct tv_move *moves; /* events off their run's track */
    uint32_t nmoves;       /* entries in moves */
    uint32_t moves_cap;    /* allocated moves */
    pthread_mutex_t lock;  /* guards tv_host.long_durs (tv_put_event runs on
                              several threads; they are sorted by tv_finish) */
    uint32_t long_cap;     /* allocated long_durs */
    uint32_t flow_cap;     /* allocated flows */
    uint32_t frame_cap;    /* allocated frames */
    uint32_t *slots;       /* track hash table (UINT32_MAX = empty) */
    uint32_t nslots;       /* its size */
    uint32_t track_cap;    /* allocated tracks */
    uint32_t device_cap;   /* allocated devices */
    struct idmap devices;  /* pid -> index in devices */
    struct idmap threads;  /* pid << 32 | tid -> index in its device's res */
};

/* The blocks tv_track_at starts from, once events are grouped by track in
 * tracks' order. Returns 0 or -ENOMEM. */
int tv_track_blocks(struct tv_host *h);

/* Sort every process's threads by tid (tv_add_resource appends) and free
 * the building state. */
void tv_build_end(struct tv_host *h);

/* XProf's TraceEventsComparator (start ascending, duration descending, pid,
 * thread before channel, tid, name), with the source record as the last
 * tie-break so the order is total. Returns <0, 0, >0. */
int tv_event_cmp_tracks(const struct tv_host *h, const struct tv_event *a, uint32_t ta,
                        const struct tv_event *b, uint32_t tb);

/* tv_event_cmp_tracks of two events of the built h->events (their tracks
 * found by where they stand). */
int tv_event_cmp(const struct tv_host *h, const struct tv_event *a, const struct tv_event *b);

/* Merge idx[runs[k]..runs[k+1]) for k < nruns, each sorted by tv_event_cmp,
 * into one sorted sequence in place; ts[i] is the start of event idx[i]
 * (the merge reads the events only when starts tie). Returns 0 or -ENOMEM. */
int tv_merge_runs(const struct tv_host *h, uint32_t *idx, const uint64_t *ts, const uint32_t *runs,
                  uint32_t nruns);

/* tv_finish with the global order cut into at most nparts parts by start
 * time, merged side by side (tv_finish picks nparts from the size and the
 * threads: about TV_PART_EVENTS events a part, at most four per thread).
 * The result does not depend on nparts or nthreads. */
#define TV_PART_EVENTS 262144
int tv_finish_parts(struct tv_host *h, int nthreads, uint32_t nparts, struct xp_err *err);

/* tv_finish_parts down to level upto (tv_finish_for's choice, made here by
 * the caller, whatever the event count): levels 0..upto, their uids and
 * their level index, unless the coarse levels hold so many events that
 * the whole is as cheap; tv_complete does the rest. */
int tv_finish_parts_upto(struct tv_host *h, int nthreads, uint32_t nparts, int upto,
                         struct xp_err *err);

/* Free what tv_complete would have needed (NULL is a no-op). */
void tvl_rest_free(struct tv_rest *r);

/* The tracker's view of e (row = its track). */
void tv_vis_event_of(const struct tv_host *h, const struct tv_event *e, struct tv_vis_event *ve);

#endif
