/*
 * group_gpu.c - the GPU part of GenerateDerivedTimeLines: on each GPU plane
 * ungrouped events inherit the latest group in time order
 * (ProcessUngroupedEvents) and the Steps markers are the maximal same-group
 * runs (DeriveStepEventsFromGroups).
 */
#include "group_int.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/bigalloc.h"
#include "base/parallel.h"
#include "base/sort.h"

struct sorted_ev {
    int64_t begin; /* absolute start */
    int64_t dur;   /* duration */
    uint32_t node; /* node (also a tie break) */
};

static int sorted_ev_cmp(const void *a, const void *b)
{
    const struct sorted_ev *x = a, *y = b;

    if (x->begin != y->begin)
        return x->begin < y->begin ? -1 : 1;
    if (x->dur != y->dur)
        return x->dur > y->dur ? -1 : 1;
    return x->node < y->node ? -1 : x->node > y->node;
}

static int sorted_ev_cmp_ctx(const void *a, const void *b, void *ctx)
{
    (void)ctx;
    return sorted_ev_cmp(a, b);
}

int xp_line_id_is_derived(int64_t id)
{
    int32_t v = (int32_t)id;

    return v >= (int32_t)0xdeadbeef && v <= (int32_t)0xdeadbeef + 389;
}

static int push_marker(struct xp_groups *g, uint32_t p, size_t *cap, int64_t gid, int64_t b,
                       int64_t end)
{
    if (g->nsteps[p] > 0) {
        struct xp_step_marker *last = &g->steps[p][g->nsteps[p] - 1];
        if (last->group_id == gid) {
            if (end > last->end_ps)
                last->end_ps = end;
            return 0;
        }
    }
    if (g->nsteps[p] == *cap) {
        size_t nc = *cap ? *cap * 2 : 16;
        struct xp_step_marker *ns = realloc(g->steps[p], nc * sizeof(*ns));
        if (ns == NULL)
            return -ENOMEM;
        g->steps[p] = ns;
        *cap = nc;
    }
    g->steps[p][g->nsteps[p]++] = (struct xp_step_marker){gid, b, end};
    return 0;
}

/* The time-order walk of one GPU plane's events (ProcessUngroupedEvents,
 * DeriveStepEventsFromGroups). */
struct plane_walk {
    struct forest *f;
    struct xp_groups *g;
    uint32_t p;   /* the plane */
    size_t cap;   /* allocated markers */
    int32_t cur;  /* the latest group seen */
    int negative; /* some event starts before 0 */
};

/* The next event in time order: an ungrouped one takes the latest group, a
 * grouped one extends the last marker or starts one. */
static int walk_event(struct plane_walk *w, int64_t begin, int64_t dur, uint32_t node)
{
    int32_t *gp = &w->f->gid[node];

    w->negative |= begin < 0;
    if (*gp >= 0)
        w->cur = *gp;
    else if (w->cur >= 0)
        *gp = w->cur;
    if (*gp >= 0)
        return push_marker(w->g, w->p, &w->cap, *gp, begin, begin + dur);
    return 0;
}

/* The lines the walk reads: every line of the plane but derived ones. */
static int walked_line(const struct xp_line *ln)
{
    return !xp_line_id_is_derived(ln->id) && ln->nevents > 0;
}

/* 1 when a line's events are in the walk's order already (start ascending,
 * the longer first), as a profile's lines usually are. */
static int line_in_order(const struct xp_line *ln)
{
    uint32_t e;

    for (e = 1; e < ln->nevents; e++) {
        int64_t a = xp_event_start_ps(ln, &ln->events[e - 1]);
        int64_t b = xp_event_start_ps(ln, &ln->events[e]);
        if (a > b || (a == b && ln->events[e - 1].duration_ps < ln->events[e].duration_ps))
            return 0;
    }
    return 1;
}

/* The next event of one line in the merge. */
struct line_head {
    struct sorted_ev ev; /* the event (node: its tie break) */
    uint32_t line;       /* its line */
    uint32_t e;          /* its index there */
};

static void heap_down(struct line_head *h, uint32_t n, uint32_t i)
{
    for (;;) {
        uint32_t l = 2 * i + 1, m = i;
        struct line_head t;
        if (l < n && sorted_ev_cmp(&h[l].ev, &h[m].ev) < 0)
            m = l;
        if (l + 1 < n && sorted_ev_cmp(&h[l + 1].ev, &h[m].ev) < 0)
            m = l + 1;
        if (m == i)
            return;
        t = h[i];
        h[i] = h[m];
        h[m] = t;
        i = m;
    }
}

/* Event e of line `line` of plane pl (whose first line is flat) as the walk
 * orders it. */
static void event_at(struct sorted_ev *ev, const struct forest *f, const struct xp_plane *pl,
                     uint32_t flat, uint32_t line, uint32_t e)
{
    const struct xp_line *ln = &pl->lines[line];

    ev->begin = xp_event_start_ps(ln, &ln->events[e]);
    ev->dur = ln->events[e].duration_ps;
    ev->node = f->line_base[flat + line] + e;
}

static void head_at(struct line_head *h, const struct forest *f, const struct xp_plane *pl,
                    uint32_t flat, uint32_t line, uint32_t e)
{
    event_at(&h->ev, f, pl, flat, line, e);
    h->line = line;
    h->e = e;
}

/* The walk over lines each in order: merged through a heap of their next
 * events, in the order the sort below gives (ties by node, that is by line,
 * then event), without a copy of the plane's events. */
static int walk_merged(struct plane_walk *w, const struct xp_plane *pl, uint32_t flat)
{
    struct line_head *h = malloc((pl->nlines ? pl->nlines : 1) * sizeof(*h));
    uint32_t n = 0, l;
    int rc = 0;

    if (h == NULL)
        return -ENOMEM;
    for (l = 0; l < pl->nlines; l++) {
        if (walked_line(&pl->lines[l]))
            head_at(&h[n++], w->f, pl, flat, l, 0);
    }
    for (l = n / 2; l-- > 0;)
        heap_down(h, n, l);
    while (n > 0 && rc == 0) {
        rc = walk_event(w, h[0].ev.begin, h[0].ev.dur, h[0].ev.node);
        if (h[0].e + 1 < pl->lines[h[0].line].nevents)
            head_at(&h[0], w->f, pl, flat, h[0].line, h[0].e + 1);
        else
            h[0] = h[--n];
        heap_down(h, n, 0);
    }
    free(h);
    return rc;
}

/* The walk over a copy of the plane's events, sorted. */
static int walk_sorted(struct plane_walk *w, const struct xp_plane *pl, uint32_t flat)
{
    uint32_t l, e;
    size_t n = 0, i;
    struct sorted_ev *v;
    int rc = 0;

    for (l = 0; l < pl->nlines; l++) {
        if (walked_line(&pl->lines[l]))
            n += pl->lines[l].nevents;
    }
    v = big_malloc(n * sizeof(*v)); /* n > 0: derive_gpu_plane saw an event */
    if (v == NULL)
        return -ENOMEM;
    n = 0;
    for (l = 0; l < pl->nlines; l++) {
        if (!walked_line(&pl->lines[l]))
            continue;
        for (e = 0; e < pl->lines[l].nevents; e++)
            event_at(&v[n++], w->f, pl, flat, l, e);
    }
    if (xp_sort_runs(v, n, sizeof(*v), sorted_ev_cmp_ctx, NULL) != 0) {
        big_free(v);
        return -ENOMEM;
    }
    for (i = 0; i < n && rc == 0; i++)
        rc = walk_event(w, v[i].begin, v[i].dur, v[i].node);
    big_free(v);
    return rc;
}

/* ProcessUngroupedEvents + DeriveStepEventsFromGroups for one GPU plane:
 * its events in time order, merged from its lines when each is in order
 * (the usual case), else sorted. */
static int derive_gpu_plane(struct forest *f, struct xp_groups *g, uint32_t p)
{
    const struct xp_plane *pl = &f->xs->planes[p];
    struct plane_walk w = {.f = f, .g = g, .p = p, .cap = 0, .cur = -1, .negative = 0};
    uint32_t l, flat = f->plane_first[p];
    int in_order = 1, any = 0, rc;

    for (l = 0; l < pl->nlines; l++) {
        if (!walked_line(&pl->lines[l]))
            continue;
        any = 1;
        in_order = in_order && line_in_order(&pl->lines[l]);
    }
    if (!any)
        return 0;
    rc = in_order ? walk_merged(&w, pl, flat) : walk_sorted(&w, pl, flat);
    g->steps_derived[p] = rc == 0 && !w.negative;
    return rc;
}

struct derive_job {
    struct forest *f;
    struct xp_groups *g;
    uint32_t *planes; /* GPU planes */
};

static int derive_one(void *arg, size_t i)
{
    struct derive_job *job = arg;

    return derive_gpu_plane(job->f, job->g, job->planes[i]);
}

static int is_gpu_plane(const struct xp_plane *pl)
{
    return strncmp(pl->name, "/device:GPU:", 12) == 0;
}

int gr_derive_gpu_timeline(struct forest *f, struct xp_groups *g)
{
    const struct xspace *xs = f->xs;
    uint32_t *gpus = malloc((xs->nplanes ? xs->nplanes : 1) * sizeof(uint32_t));
    struct derive_job job = {f, g, gpus};
    uint32_t ngpu = 0, p;
    int rc;

    if (gpus == NULL)
        return -ENOMEM;
    for (p = 0; p < xs->nplanes; p++) {
        if (is_gpu_plane(&xs->planes[p]))
            gpus[ngpu++] = p;
    }
    rc = parallel_for(ngpu, 0, derive_one, &job);
    free(gpus);
    return rc;
}
