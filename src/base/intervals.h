/*
 * intervals.h - time intervals: sums, unions, and nesting without double counting.
 *
 * A span is a closed interval [lo, hi] of integer time (picoseconds in the
 * tools), hi >= lo; zero-length spans are points. Its measure is hi - lo.
 *
 * Nesting (xp_nest) turns spans that lie on one thread into a tree, the way a
 * trace viewer draws them: a span's parent is the innermost earlier span that
 * contains it entirely (closed containment, as XProf's Timespan::Includes);
 * spans that no other span contains hang from a virtual root. For each node
 * it measures the union of its children clipped to the node (so self time is
 * the node's measure minus that union, never negative, never counted twice)
 * and the time it shares with its siblings. It is iterative: nesting 100,000
 * deep costs a heap stack, not the C stack.
 */
#ifndef XPROFS_INTERVALS_H
#define XPROFS_INTERVALS_H

#include <stddef.h>
#include <stdint.h>

struct xp_span {
    int64_t lo; /* start */
    int64_t hi; /* end, >= lo */
};

/* Sum of the measures of v[0..n) (overlaps counted as often as they occur). */
int64_t xp_spans_sum(const struct xp_span *v, size_t n);

/* Sort v by lo ascending, then hi descending (outer spans before the spans
 * they contain). Not stable. */
void xp_spans_sort(struct xp_span *v, size_t n);

/* Measure of the union of v[0..n); sorts v in place (xp_spans_sort). */
int64_t xp_spans_union(struct xp_span *v, size_t n);

/* Measure of the union of v[0..n) intersected with [lo, hi]; sorts v. */
int64_t xp_spans_union_within(struct xp_span *v, size_t n, int64_t lo, int64_t hi);

/* 1 if a contains b (closed: a.lo <= b.lo and b.hi <= a.hi). */
static inline int xp_span_includes(struct xp_span a, struct xp_span b)
{
    return a.lo <= b.lo && b.hi <= a.hi;
}

/* Measure of a intersected with b (0 if they do not meet). */
static inline int64_t xp_span_overlap(struct xp_span a, struct xp_span b)
{
    int64_t lo = a.lo > b.lo ? a.lo : b.lo;
    int64_t hi = a.hi < b.hi ? a.hi : b.hi;
    return hi > lo ? hi - lo : 0;
}

#define XP_NEST_ROOT UINT32_MAX /* parent of a top-level span */

/* What xp_nest finds for one span. */
struct xp_nest_node {
    uint32_t parent;     /* index of the parent span, or XP_NEST_ROOT */
    uint32_t depth;      /* 1 for children of the root, parent's depth + 1 */
    int64_t children_ps; /* measure of the union of its children, clipped to it */
    int64_t overlap_ps;  /* measure of it covered by its siblings */
};

/* Reusable working memory of xp_nest (one per thread). Zero it, or use
 * XP_NEST_WORK_INIT; release with xp_nest_work_release. */
struct xp_nest_frame;
struct xp_nest_work {
    struct xp_nest_frame *frames; /* the stack */
    size_t cap;                   /* entries allocated */
};

#define XP_NEST_WORK_INIT                                                                          \
    {                                                                                              \
        NULL, 0                                                                                    \
    }

void xp_nest_work_release(struct xp_nest_work *w);

/* Nest v[0..n), which must be sorted as xp_spans_sort sorts (ties in any
 * order), under a virtual root spanning root. Fills out[0..n) and
 * *root_children_ps (union of the top-level spans clipped to root). Spans
 * need not lie inside root: top-level spans that leave it are its children
 * all the same, only their time inside it counts for the root.
 * Siblings never contain one another, so their ends strictly increase; a
 * span's sibling overlap is therefore what its previous sibling and its next
 * sibling cover of it. Returns 0 or -ENOMEM. */
int xp_nest(const struct xp_span *v, uint32_t n, struct xp_span root, struct xp_nest_work *w,
            struct xp_nest_node *out, int64_t *root_children_ps);

#endif
