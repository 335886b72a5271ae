/*
 * intervals.c - interval sums, unions and iterative nesting; see intervals.h.
 */
#include "sort.h"
#include "intervals.h"

#include <errno.h>
#include <stdlib.h>

/* One open span on the nesting stack, with the running union of its children. */
struct xp_nest_frame {
    uint32_t idx;    /* span index, or XP_NEST_ROOT */
    uint32_t depth;  /* its depth (root: 0) */
    int64_t lo;      /* its start (clip bound) */
    int64_t hi;      /* its end (clip bound) */
    int64_t run_lo;  /* current merged run of its children */
    int64_t run_hi;  /* end of that run */
    int64_t covered; /* measure of the runs already closed */
    uint32_t last;   /* its latest child, or XP_NEST_ROOT */
};

int64_t xp_spans_sum(const struct xp_span *v, size_t n)
{
    int64_t sum = 0;
    size_t i;

    for (i = 0; i < n; i++)
        sum += v[i].hi - v[i].lo;
    return sum;
}

static int span_cmp(const void *a, const void *b)
{
    const struct xp_span *x = a, *y = b;

    if (x->lo != y->lo)
        return x->lo < y->lo ? -1 : 1;
    if (x->hi != y->hi)
        return x->hi > y->hi ? -1 : 1;
    return 0;
}

void xp_spans_sort(struct xp_span *v, size_t n)
{
    if (n > 1)
        xp_qsort(v, n, sizeof(*v), span_cmp);
}

int64_t xp_spans_union_within(struct xp_span *v, size_t n, int64_t lo, int64_t hi)
{
    int64_t covered = 0, run_lo = lo, run_hi = lo;
    size_t i;

    xp_spans_sort(v, n);
    for (i = 0; i < n; i++) {
        int64_t a = v[i].lo > lo ? v[i].lo : lo;
        int64_t b = v[i].hi < hi ? v[i].hi : hi;
        if (b <= a)
            continue;
        if (a > run_hi) {
            covered += run_hi - run_lo;
            run_lo = a;
            run_hi = b;
        } else if (b > run_hi) {
            run_hi = b;
        }
    }
    return covered + (run_hi - run_lo);
}

int64_t xp_spans_union(struct xp_span *v, size_t n)
{
    if (n == 0)
        return 0;
    xp_spans_sort(v, n);
    return xp_spans_union_within(v, n, v[0].lo, INT64_MAX);
}

void xp_nest_work_release(struct xp_nest_work *w)
{
    free(w->frames);
    w->frames = NULL;
    w->cap = 0;
}

static int work_reserve(struct xp_nest_work *w, size_t need)
{
    struct xp_nest_frame *f;
    size_t cap = w->cap ? w->cap : 64;

    if (need <= w->cap)
        return 0;
    while (cap < need)
        cap *= 2;
    f = realloc(w->frames, cap * sizeof(*f));
    if (f == NULL)
        return -ENOMEM;
    w->frames = f;
    w->cap = cap;
    return 0;
}

/* Add child span c (clipped to the frame) to the frame's running union. */
static void frame_add_child(struct xp_nest_frame *f, struct xp_span c)
{
    int64_t a = c.lo > f->lo ? c.lo : f->lo;
    int64_t b = c.hi < f->hi ? c.hi : f->hi;

    if (b <= a)
        return;
    if (a > f->run_hi) {
        f->covered += f->run_hi - f->run_lo;
        f->run_lo = a;
        f->run_hi = b;
    } else if (b > f->run_hi) {
        f->run_hi = b;
    }
}

/* Sibling overlap of span s, given the end of what earlier siblings cover of
 * it (prev_end, stored in out->overlap_ps until now) and the start of its next
 * sibling's cover (next_lo; s.hi when none). */
static void finish_overlap(struct xp_span s, struct xp_nest_node *node, int64_t next_lo)
{
    int64_t prev_end = node->overlap_ps;

    if (next_lo <= prev_end)
        node->overlap_ps = s.hi - s.lo;
    else
        node->overlap_ps = (prev_end - s.lo) + (s.hi - next_lo);
}

/* Close the top frame: its union is final, its last child has no next sibling. */
static void frame_close(const struct xp_span *v, struct xp_nest_frame *f, struct xp_nest_node *out,
                        int64_t *children)
{
    if (f->last != XP_NEST_ROOT)
        finish_overlap(v[f->last], &out[f->last], v[f->last].hi);
    *children = f->covered + (f->run_hi - f->run_lo);
}

/* Make span i a child of frame f (the innermost open span containing it). */
static void adopt(const struct xp_span *v, uint32_t i, struct xp_nest_frame *f,
                  struct xp_nest_node *out)
{
    struct xp_span s = v[i];

    out[i].parent = f->idx;
    out[i].depth = f->depth + 1;
    out[i].children_ps = 0;
    out[i].overlap_ps = s.lo; /* end of the earlier siblings' cover: none yet */
    if (f->last != XP_NEST_ROOT) {
        struct xp_span p = v[f->last];
        /* Earlier siblings end no later than the previous one (ends increase). */
        if (p.hi > s.lo)
            out[i].overlap_ps = p.hi < s.hi ? p.hi : s.hi;
        finish_overlap(p, &out[f->last], s.lo < p.hi ? s.lo : p.hi);
    }
    f->last = i;
    frame_add_child(f, s);
}

int xp_nest(const struct xp_span *v, uint32_t n, struct xp_span root, struct xp_nest_work *w,
            struct xp_nest_node *out, int64_t *root_children_ps)
{
    struct xp_nest_frame *f;
    size_t top = 0;
    uint32_t i;

    if (work_reserve(w, (size_t)n + 1) != 0)
        return -ENOMEM;
    f = w->frames;
    f[0] = (struct xp_nest_frame){XP_NEST_ROOT, 0,       root.lo, root.hi,
                                  root.lo,      root.lo, 0,       XP_NEST_ROOT};
    for (i = 0; i < n; i++) {
        /* Sorted input: every open span starts at or before v[i]; it contains
         * v[i] unless v[i] ends later. */
        while (top > 0 && v[i].hi > f[top].hi) {
            frame_close(v, &f[top], out, &out[f[top].idx].children_ps);
            top--;
        }
        adopt(v, i, &f[top], out);
        top++;
        f[top] = (struct xp_nest_frame){i,       out[i].depth, v[i].lo, v[i].hi,
                                        v[i].lo, v[i].lo,      0,       XP_NEST_ROOT};
    }
    while (top > 0) {
        frame_close(v, &f[top], out, &out[f[top].idx].children_ps);
        top--;
    }
    frame_close(v, &f[0], out, root_children_ps);
    return 0;
}
