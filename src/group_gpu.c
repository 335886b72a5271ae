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

#include "bigalloc.h"
#include "parallel.h"
#include "sort.h"

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

/* ProcessUngroupedEvents + DeriveStepEventsFromGroups for one GPU plane. */
static int derive_gpu_plane(struct forest *f, struct xp_groups *g, uint32_t p)
{
    const struct xp_plane *pl = &f->xs->planes[p];
    uint32_t l, e, flat = f->plane_first[p];
    size_t n = 0, i, cap = 0;
    struct sorted_ev *v;
    int32_t cur = -1;
    int rc = 0, negative = 0;

    for (l = 0; l < pl->nlines; l++) {
        if (!xp_line_id_is_derived(pl->lines[l].id))
            n += pl->lines[l].nevents;
    }
    if (n == 0)
        return 0;
    v = big_malloc(n * sizeof(*v));
    if (v == NULL)
        return -ENOMEM;
    n = 0;
    for (l = 0; l < pl->nlines; l++) {
        const struct xp_line *ln = &pl->lines[l];
        if (xp_line_id_is_derived(ln->id))
            continue;
        for (e = 0; e < ln->nevents; e++) {
            v[n].begin = xp_event_start_ps(ln, &ln->events[e]);
            v[n].dur = ln->events[e].duration_ps;
            v[n].node = f->line_base[flat + l] + e;
            negative |= v[n].begin < 0;
            n++;
        }
    }
    if (xp_sort_runs(v, n, sizeof(*v), sorted_ev_cmp_ctx, NULL) != 0) {
        big_free(v);
        return -ENOMEM;
    }
    for (i = 0; i < n && rc == 0; i++) {
        int32_t *gp = &f->gid[v[i].node];
        if (*gp >= 0)
            cur = *gp;
        else if (cur >= 0)
            *gp = cur;
        if (*gp >= 0)
            rc = push_marker(g, p, &cap, *gp, v[i].begin, v[i].begin + v[i].dur);
    }
    big_free(v);
    g->steps_derived[p] = rc == 0 && !negative;
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
