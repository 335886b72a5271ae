/*
 * trace_levels_int.h - what the pieces of finishing a trace index share
 * (internal to trace_levels*.c; tv_finish is in trace_index.h, the shared
 * comparator in trace_levels.h).
 *
 * trace_levels.c        tv_finish: the steps in order, name ranks, the span,
 *                       the level index's slots
 * trace_levels_order.c  XProf's comparator; step 1: tracks in output order,
 *                       events sorted inside each track
 * trace_levels_merge.c  the loser-tree merge of the tracks, the global order
 *                       cut into parts: flow events in order, then uids,
 *                       drops and the level index's entries
 * trace_levels_flows.c  step 2's flow pass (CalculateFlowVisibility)
 * trace_levels_tracks.c step 2's per-track levels, the level threads
 * trace_levels_coarse.c step 3 of a coarse finish: uids and the level
 *                       index of the coarse levels without the global merge
 *
 * Step 2 runs over a range of levels [from, to): a coarse finish assigns
 * [0, upto + 1) and leaves TV_LEVEL_FINER on the other events, tv_complete
 * then runs [upto + 1, NTRACKERS) with the earlier levels as given. A
 * tracker's state depends only on the events placed at its level or a
 * coarser one, so the two ranges give what one pass over all levels gives.
 */
#ifndef XPROFS_TRACE_LEVELS_INT_H
#define XPROFS_TRACE_LEVELS_INT_H

#include <stdint.h>

#include "trace_levels.h"

#define NTRACKERS (TV_LEVELS - 1)

/* What tv_complete needs from a coarse finish (tv_host.rest). */
struct tv_rest {
    int from;             /* first level not assigned */
    uint32_t nparts;      /* parts of the global order tv_finish chose */
    uint32_t *flow_order; /* events with a flow in global order */
    uint32_t nflow_events;
    uint8_t *flow_level;  /* per source record with a flow: its flow's
                             level, `from` if finer */
    uint8_t *own_level;   /* per source record with a flow: the level its
                             event took in the flows' pass, `from` if finer */
    uint8_t *track_flows; /* per track: it has an event with a flow */
};

/* The global order is cut into parts by start time (every event with one
 * start falls into one part, so uids never cross a part), merged side by
 * side. bound[p * ntracks + t] is the first event of track t in part p;
 * row nparts holds the track ends. */
struct order_parts {
    struct tv_host *h;     /* the host */
    uint32_t nparts;       /* parts */
    uint64_t *lo_ts;       /* [nparts] first start of each part (0 for part 0) */
    uint32_t *bound;       /* [(nparts + 1) * ntracks] */
    uint32_t *out;         /* [nparts + 1] events before each part */
    uint32_t *spare;       /* the flows' order block once done (room for every
                              event): by_level takes it, its pages are in use */
    uint32_t *by_level;    /* the level index being filled */
    uint32_t *level_slot;  /* [nparts * TV_LEVELS] first by_level slot of each
                              part's events of each level, dropped ones counted */
    uint32_t *level_fill;  /* [nparts * TV_LEVELS] next by_level slot of each */
    uint32_t *flow_order;  /* events with a flow: part p's from out[p] while
                              merging, then all in global order */
    uint32_t *flow_count;  /* [nparts] events with a flow in each part */
    uint32_t nflow_events; /* entries of flow_order once merged */
    uint8_t *part_flows;   /* [nparts * ntracks] track t has an event with a
                              flow in part p */
    int from;              /* events of levels below it are numbered already */
};

/* --- step 1 (trace_levels_order.c) --------------------------------------------- */

/* Tracks in output order, each event's track renumbered, events grouped
 * by track and sorted inside each (tracks in parallel). Returns 0 or -ENOMEM. */
int tvl_order_tracks(struct tv_host *h, int nthreads);

/* --- the parts of the global order (trace_levels_merge.c) ------------------------ */

/* Choose at most want parts of about equal size from a sample of starts,
 * and find every track's bounds. Returns 0 or -ENOMEM. */
int tvl_plan_parts(struct order_parts *w, uint32_t want);

void tvl_parts_free(struct order_parts *w);

/* The events with a flow in global order (the parts merged side by side,
 * then moved together) into flow_order, and the tracks that have one. */
int tvl_order_flows(struct order_parts *w, int nthreads, uint8_t *track_flows);

/* Merge part p, numbering its events and listing its stored events in
 * its slots of each level (parallel_for item). Events of a level below
 * w->from keep the uid a coarse finish gave them. */
int tvl_order_one_part(void *arg, size_t p);

/* --- step 2 (trace_levels_flows.c, trace_levels_tracks.c) -------------------------- */

/* Levels [from, to) of a pass (to == NTRACKERS: an event shown at none is
 * at the last level; else it is left TV_LEVEL_FINER). */
struct level_range {
    int from, to;
};

/* The events a coarse pass placed on one track, ascending. */
struct coarse_list {
    uint32_t *v; /* event indices */
    uint32_t n;  /* entries */
    uint32_t cap;
};

/* Flows first (CalculateFlowVisibility), on the trackers of levels r: for
 * each event with a flow (by source record), the first level at which its
 * flow is visible (r.to = none there) into flow_level, and the level its
 * own event took into own_level (unless NULL; read back when r.from > 0:
 * levels below r.from are given). flow_order lists the events with a flow
 * in global comparator order. */
int tvl_flow_levels(struct tv_host *h, const uint32_t *flow_order, uint32_t nflow_events,
                    uint8_t *flow_level, uint8_t *own_level, struct level_range r);

/* The flows' levels (from the events with a flow in global order), then
 * every track's, over levels r; track_flows[t]: track t has an event with
 * a flow. Events with a level below r.from keep it. With placed (one list
 * per track) the events given a level in r are listed there. */
int tvl_all_levels(struct tv_host *h, const uint32_t *flow_order, uint32_t nflow_events,
                   uint8_t *flow_level, uint8_t *own_level, const uint8_t *track_flows,
                   struct level_range r, struct coarse_list *placed, int nthreads);

/* --- step 3 of a coarse finish (trace_levels_coarse.c) -------------------------- */

/* Uids (and drops) of the events of levels 0..upto (listed per track in
 * placed), found among the events sharing their starts, and the level
 * index of those levels. Returns 0, 1 when those events are too many for
 * this to pay (nothing done), or -ENOMEM. */
int tvl_coarse_index(struct tv_host *h, int upto, const struct coarse_list *placed, int nthreads,
                     struct tv_levels **lvp);

#endif
