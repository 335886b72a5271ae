/*
 * trace_vis.h - XProf's down-sampling test (TraceViewerVisibility).
 *
 * A tracker decides, for events fed in time order, whether each one is
 * distinguishable at a resolution of r picoseconds: per row (track) it keeps
 * a stack of end times of visible events (index = nesting depth) and the end
 * of the last visible flow event; per counter/async channel the time of the
 * last visible sample; per flow id the visibility decided by its first event.
 * The same tracker assigns zoom levels when the index is built
 * (trace_levels_flows.c, trace_levels_tracks.c) and thins a window
 * (trace_select.c).
 */
#ifndef XPROFS_TRACE_VIS_H
#define XPROFS_TRACE_VIS_H

#include <stdint.h>

/* An open-addressing map from 56-bit flow id to a small value, with
 * deletion (backward shift), so it holds only the flows still open. */
struct tv_flowmap {
    uint64_t *keys; /* id + 1; 0 = empty slot */
    uint8_t *vals;  /* value per slot */
    uint32_t cap;   /* slots (power of two) */
    uint32_t n;     /* used slots */
    int oom;        /* sticky allocation failure */
};

void tv_flowmap_init(struct tv_flowmap *m);
void tv_flowmap_free(struct tv_flowmap *m);
/* 1 and *val if present, else 0. */
int tv_flowmap_get(const struct tv_flowmap *m, uint64_t id, uint8_t *val);
/* Insert if absent; returns 1 if inserted, 0 if it was present. */
int tv_flowmap_put_new(struct tv_flowmap *m, uint64_t id, uint8_t val);
void tv_flowmap_set(struct tv_flowmap *m, uint64_t id, uint8_t val);
void tv_flowmap_erase(struct tv_flowmap *m, uint64_t id);
/* The value of id, first inserted as val if absent; then erased when erase
 * is set. Returns if_oom (and sets oom) when the table cannot grow. */
uint8_t tv_flowmap_first(struct tv_flowmap *m, uint64_t id, uint8_t val, int erase, uint8_t if_oom);

/* One row's state. */
struct tv_row {
    uint64_t *stack;     /* end ps of the visible event at each depth */
    uint64_t *low;       /* low[d] = min(stack[0..d]): non-increasing */
    uint32_t depth;      /* entries in stack */
    uint32_t cap;        /* allocated entries */
    uint64_t last_flow;  /* end of the last visible flow event */
    uint64_t last_count; /* time of the last visible counter sample */
    uint8_t has_flow;    /* last_flow is set */
    uint8_t has_count;   /* last_count is set */
};

struct tv_vis {
    uint64_t res;            /* resolution, ps (> 0) */
    struct tv_row *rows;     /* one per track */
    uint32_t nrows;          /* entries in rows */
    struct tv_flowmap flows; /* flow id -> visible (first event decides) */
    int oom;                 /* sticky allocation failure */
};

/* What the tracker needs to know about an event. */
struct tv_vis_event {
    uint64_t ts;      /* start ps */
    uint64_t dur;     /* duration ps */
    uint32_t row;     /* track index */
    int has_tid;      /* 0: counter / async channel */
    int has_flow;     /* event is part of a flow */
    uint64_t flow_id; /* its id */
    unsigned type;    /* enum tv_flow_type */
};

/* A tracker with nrows rows at resolution res. Returns 0 or -ENOMEM. */
int tv_vis_init(struct tv_vis *v, uint64_t res, uint32_t nrows);
void tv_vis_free(struct tv_vis *v);

/* Rows deeper than this are searched by halves (see tv_row_depth). */
#define TV_ROW_SCAN 16

/* Nesting depth in row r for an event starting at begin: the first stack
 * entry that ended at or before begin (XProf scans from the bottom). That
 * is the first d with low[d] <= begin, and low does not increase: deep
 * rows (a recursion 50,000 deep) are searched by halves. */
static inline uint32_t tv_row_depth(const struct tv_row *r, uint64_t begin)
{
    uint32_t d, lo, hi;

    if (r->depth <= TV_ROW_SCAN) {
        for (d = 0; d < r->depth; d++) {
            if (r->stack[d] <= begin)
                break;
        }
        return d;
    }
    lo = 0;
    hi = r->depth;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (r->low[mid] <= begin)
            hi = mid;
        else
            lo = mid + 1;
    }
    return lo;
}

/* Make room in r's stack for index depth; -ENOMEM (and v->oom) if not. */
int tv_row_grow(struct tv_vis *v, struct tv_row *r, uint32_t depth);

/* Truncate r's stack to depth and push end (sets v->oom on no memory). */
static inline void tv_row_push(struct tv_vis *v, struct tv_row *r, uint32_t depth, uint64_t end)
{
    if (depth >= r->cap && tv_row_grow(v, r, depth) != 0)
        return;
    r->stack[depth] = end;
    r->low[depth] = depth > 0 && r->low[depth - 1] < end ? r->low[depth - 1] : end;
    r->depth = depth + 1;
}

/* XProf VisibleAtResolution: decides and records. */
int tv_vis_visible(struct tv_vis *v, const struct tv_vis_event *e);

/* XProf SetVisibleAtResolution: records e as visible. track_flows = 0 skips
 * the flow bookkeeping (rows whose flows are decided elsewhere). */
void tv_vis_set(struct tv_vis *v, const struct tv_vis_event *e, int track_flows);

#endif
