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
 */
#ifndef XPROFS_TRACE_LEVELS_INT_H
#define XPROFS_TRACE_LEVELS_INT_H

#include <stdint.h>

#include "trace_levels.h"

#define NTRACKERS (TV_LEVELS - 1)

/* XProf's ExpandTraceSpan over a run of events, summarised so that runs
 * combine in order (span_add): starts and ends above max_ts are ignored. */
#define SPAN_MAX_TS (UINT64_MAX / 2)

struct span_part {
    int any;            /* the run has events */
    uint64_t first_ts;  /* its first event's start */
    uint64_t first_end; /* and end */
    int has_min;        /* some start counts */
    uint64_t min_ts;    /* smallest counted start */
    int has_max;        /* some end counts */
    uint64_t max_end;   /* largest counted end */
};

/* The global order is cut into parts by start time (every event with one
 * start falls into one part, so uids never cross a part), merged side by
 * side. bound[p * ntracks + t] is the first event of track t in part p;
 * row nparts holds the track ends. */
struct order_parts {
    struct tv_host *h;      /* the host */
    uint32_t nparts;        /* parts */
    uint64_t *lo_ts;        /* [nparts] first start of each part (0 for part 0) */
    uint32_t *bound;        /* [(nparts + 1) * ntracks] */
    uint32_t *out;          /* [nparts + 1] events before each part */
    uint32_t *spare;        /* the flows' order block once done (room for every
                               event): by_level takes it, its pages are in use */
    struct span_part *span; /* [nparts] span summaries */
    uint32_t *level_slot;   /* [nparts * TV_LEVELS] first by_level slot of each
                               part's events of each level, dropped ones counted */
    uint32_t *level_fill;   /* [nparts * TV_LEVELS] next by_level slot of each */
    uint8_t *flow_level;    /* per source record with a flow: its level */
    uint32_t *flow_order;   /* events with a flow: part p's from out[p] while
                               merging, then all in global order */
    uint32_t *flow_count;   /* [nparts] events with a flow in each part */
    uint32_t nflow_events;  /* entries of flow_order once merged */
    uint8_t *part_flows;    /* [nparts * ntracks] track t has an event with a
                               flow in part p */
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

/* Merge part p, numbering its events, summarising its span and listing
 * its stored events in its slots of each level (parallel_for item). */
int tvl_order_one_part(void *arg, size_t p);

/* --- step 2 (trace_levels_flows.c, trace_levels_tracks.c) -------------------------- */

/* Flows first (CalculateFlowVisibility): for each event with a flow (by
 * source record), the first level at which its flow is visible (NTRACKERS =
 * none). flow_order lists the events with a flow in global comparator order. */
int tvl_flow_levels(struct tv_host *h, const uint32_t *flow_order, uint32_t nflow_events,
                    uint8_t *flow_level);

/* The flows' levels (from the events with a flow in global order), then
 * every track's; track_flows[t]: track t has an event with a flow. */
int tvl_all_levels(struct tv_host *h, const uint32_t *flow_order, uint32_t nflow_events,
                   uint8_t *flow_level, const uint8_t *track_flows, int nthreads);

#endif
