/*
 * group.c - XProf's step grouping of one host's events (see group.h).
 *
 * A port, in our own words, of GroupTfEvents (openxla/xla
 * xla/tsl/profiler/utils/group_events.cc) and of the GPU part of
 * GenerateDerivedTimeLines (openxla/xprof xprof/utils/derived_timeline.cc):
 *
 *   1. every event of every plane is a node; edges are nesting on a line,
 *      KernelLaunch -> KernelExecute by correlation_id, ExecutorState::Process
 *      -> IteratorGetNext by (id, iter_num) and producer -> consumer contexts;
 *   2. roots (any stat _r, -1 and 0 included; TraceContext; ProcessBatch and
 *      BatchingSessionRun, whose levels PreprocessXPlane sets; or the first
 *      executor event of each TensorFlow loop iteration) are sorted and each
 *      one that is not under a grouped root of its level claims, breadth
 *      first, every descendant not yet grouped; a group met on the way
 *      becomes its child (GroupMetadata parents / children);
 *   3. on GPU planes ungrouped events inherit the latest group in time order
 *      and the Steps markers are the maximal same-group runs;
 *   4. TPU planes (GroupTpuEventsOSS): only the grouping line's events are
 *      nodes in step 1, with PreprocessXPlane's TPU launch contexts between
 *      host DoEnqueueProgram and XLA Modules events; TensorCores that no
 *      root reached get groups in lock step, and afterwards their Steps
 *      events merge per group and the other lines take the groups of the
 *      Steps events (group_tpu.c).
 *
 * A profile that already holds group_id stats (old TensorFlow profilers) is
 * read as is, with its own Steps line. The fast path: a profile without any
 * possible root (most JAX traces) is answered without decoding a stat.
 *
 * This file builds a grouping: it picks the path (pre-grouped, nothing to
 * group, the full forest), sets up and releases the forest, runs its passes
 * in order and attaches the result tables; the passes live in the other
 * group_*.c files (listed in group_int.h).
 */
#include "group_int.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/arena.h"
#include "base/bigalloc.h"
#include "base/sort.h"

static struct xp_groups *groups_new(const struct xspace *xs)
{
    struct xp_groups *g = calloc(1, sizeof(*g));
    struct groups_mem *m = calloc(1, sizeof(*m));

    if (g == NULL || m == NULL) {
        free(g);
        free(m);
        return NULL;
    }
    arena_init(&m->arena);
    g->mem = m;
    g->xs = xs;
    g->steps = calloc(xs->nplanes ? xs->nplanes : 1, sizeof(*g->steps));
    g->nsteps = calloc(xs->nplanes ? xs->nplanes : 1, sizeof(*g->nsteps));
    g->steps_derived = calloc(xs->nplanes ? xs->nplanes : 1, 1);
    if (g->steps == NULL || g->nsteps == NULL || g->steps_derived == NULL) {
        xp_groups_free(g);
        return NULL;
    }
    return g;
}

void xp_groups_free(struct xp_groups *g)
{
    struct groups_mem *m;
    uint32_t p;

    if (g == NULL)
        return;
    m = g->mem;
    if (g->steps != NULL) {
        for (p = 0; p < g->xs->nplanes; p++)
            free(g->steps[p]);
    }
    if (g->tpu_step_end != NULL) {
        for (p = 0; p < g->xs->nplanes; p++)
            free(g->tpu_step_end[p]);
    }
    free(g->tpu_step_end);
    free(g->tpu_step_line);
    free(g->steps);
    free(g->nsteps);
    free(g->steps_derived);
    free(g->groups);
    if (m != NULL) {
        big_free(m->gid_block);
        big_free(m->eager_block);
        arena_free(&m->arena);
        free(m);
    }
    free(g);
}

const int32_t *xp_groups_flat(const struct xp_groups *g)
{
    const struct groups_mem *m = g != NULL ? g->mem : NULL;

    return m != NULL && g->event_group != NULL ? m->gid_block : NULL;
}

/* Point event_group (and event_eager) of every line into one block. */
int gr_attach_tables(struct xp_groups *g, int32_t *gid, uint8_t *eager, const uint32_t *line_base)
{
    struct groups_mem *m = g->mem;
    const struct xspace *xs = g->xs;
    uint32_t p, l, flat = 0;

    m->gid_block = gid;
    m->eager_block = eager;
    g->event_group = arena_alloc(&m->arena, (xs->nplanes ? xs->nplanes : 1) * sizeof(int32_t **));
    if (g->event_group == NULL)
        return -ENOMEM;
    if (eager != NULL) {
        g->event_eager =
            arena_alloc(&m->arena, (xs->nplanes ? xs->nplanes : 1) * sizeof(uint8_t **));
        if (g->event_eager == NULL)
            return -ENOMEM;
    }
    for (p = 0; p < xs->nplanes; p++) {
        uint32_t nl = xs->planes[p].nlines;
        g->event_group[p] = arena_alloc(&m->arena, (nl ? nl : 1) * sizeof(int32_t *));
        if (g->event_group[p] == NULL)
            return -ENOMEM;
        if (eager != NULL) {
            g->event_eager[p] = arena_alloc(&m->arena, (nl ? nl : 1) * sizeof(uint8_t *));
            if (g->event_eager[p] == NULL)
                return -ENOMEM;
        }
        for (l = 0; l < nl; l++, flat++) {
            g->event_group[p][l] = gid + line_base[flat];
            if (eager != NULL)
                g->event_eager[p][l] = eager + line_base[flat];
        }
    }
    return 0;
}

static int link_cmp(const void *x, const void *y)
{
    const struct group_link *a = x, *b = y;

    if (a->parent != b->parent)
        return a->parent < b->parent ? -1 : 1;
    return a->child < b->child ? -1 : a->child > b->child;
}

int gr_attach_links(struct xp_groups *g, const struct vec *links)
{
    struct groups_mem *m = g->mem;
    struct group_link *v = links->v;
    size_t i, n = 0;

    g->has_metadata = 1;
    if (links->n == 0)
        return 0;
    xp_qsort(v, links->n, sizeof(*v), link_cmp);
    g->links = arena_alloc(&m->arena, links->n * sizeof(*g->links));
    if (g->links == NULL)
        return -ENOMEM;
    for (i = 0; i < links->n; i++) {
        if (n > 0 && g->links[n - 1].parent == v[i].parent && g->links[n - 1].child == v[i].child)
            continue;
        g->links[n].parent = v[i].parent;
        g->links[n].child = v[i].child;
        n++;
    }
    g->nlinks = (uint32_t)n;
    return 0;
}

/* Per-line base offsets into one node numbering. */
static int number_lines(const struct xspace *xs, uint32_t **basep, uint32_t *nlinesp, uint32_t *np,
                        struct xp_err *err)
{
    uint32_t p, l, flat = 0, nlines = 0;
    uint64_t n = 0;
    uint32_t *base;

    for (p = 0; p < xs->nplanes; p++)
        nlines += xs->planes[p].nlines;
    base = malloc(((size_t)nlines + 1) * sizeof(uint32_t));
    if (base == NULL)
        return xp_err_set(err, -ENOMEM, "out of memory");
    for (p = 0; p < xs->nplanes; p++) {
        for (l = 0; l < xs->planes[p].nlines; l++) {
            base[flat++] = (uint32_t)n;
            n += xs->planes[p].lines[l].nevents;
        }
    }
    if (n >= UINT32_MAX) {
        free(base);
        return xp_err_set(err, -EIO, "%s: too many events to group (%" PRIu64 ")", xs->path, n);
    }
    base[nlines] = (uint32_t)n;
    *basep = base;
    *nlinesp = nlines;
    *np = (uint32_t)n;
    return 0;
}

static void forest_free(struct forest *f)
{
    free(f->line_plane);
    free(f->line_index);
    free(f->plane_first);
    big_free(f->type);
    big_free(f->flags);
    big_free(f->nest_parent);
    big_free(f->by_child);
    big_free(f->by_parent);
    free(f->vis_key);
    free(f->vis_gen);
    gr_vec_free(&f->queue);
    gr_vec_free(&f->cross);
    gr_free_kernel_lists(f);
    free(f->launches);
    free(f->executes);
    gr_vec_free(&f->executors);
    gr_vec_free(&f->iterators);
    gr_vec_free(&f->contexts);
    gr_vec_free(&f->roots);
    gr_vec_free(&f->tfdata_ids);
    gr_vec_free(&f->loop_roots);
    gr_vec_free(&f->links);
    gr_vec_free(&f->tpu_tc_lines);
}

/* The full event forest: GroupTfEvents, then the GPU derived timeline. */
static int group_full(struct xp_groups *g, uint8_t **mtype, uint32_t *line_base, uint32_t nlines,
                      uint32_t n)
{
    const struct xspace *xs = g->xs;
    struct forest f;
    uint32_t p, l, flat = 0;
    int rc = -ENOMEM;

    memset(&f, 0, sizeof(f));
    f.xs = xs;
    f.mtype = mtype;
    f.nlines = nlines;
    f.line_base = line_base;
    f.n = n;
    f.cross.size = sizeof(struct edge);
    f.launches = calloc((size_t)nlines + 1, sizeof(*f.launches));
    f.executes = calloc((size_t)nlines + 1, sizeof(*f.executes));
    f.executors.size = f.iterators.size = f.contexts.size = sizeof(struct keyed);
    f.roots.size = sizeof(struct root_node);
    f.loop_roots.size = f.queue.size = sizeof(uint32_t);
    f.links.size = sizeof(struct group_link);
    f.tpu_tc_lines.size = sizeof(uint32_t);
    f.tfdata_ids.size = sizeof(int64_t);
    f.line_plane = malloc(((size_t)nlines + 1) * sizeof(uint32_t));
    f.line_index = malloc(((size_t)nlines + 1) * sizeof(uint32_t));
    f.plane_first = malloc(((size_t)xs->nplanes + 1) * sizeof(uint32_t));
    f.type = big_malloc((size_t)n + 1);
    f.flags = big_calloc((size_t)n + 1, 1);
    f.nest_parent = big_malloc(((size_t)n + 1) * sizeof(uint32_t));
    f.gid = big_malloc(((size_t)n + 1) * sizeof(int32_t));
    if (f.line_plane == NULL || f.line_index == NULL || f.plane_first == NULL || f.type == NULL ||
        f.launches == NULL || f.executes == NULL || f.flags == NULL || f.nest_parent == NULL ||
        f.gid == NULL)
        goto out;
    for (p = 0; p < xs->nplanes; p++) {
        f.plane_first[p] = flat;
        for (l = 0; l < xs->planes[p].nlines; l++, flat++) {
            f.line_plane[flat] = p;
            f.line_index[flat] = l;
        }
    }
    f.gid[n] = -1; /* the rest is set line by line */
    if ((rc = gr_gather(&f)) != 0)
        goto out;
    if (f.tfdata_ids.n > 1)
        xp_qsort(f.tfdata_ids.v, f.tfdata_ids.n, sizeof(int64_t), gr_cmp_i64);
    if ((rc = gr_tf_loops(&f)) != 0)
        goto out;
    /* ConnectInterThread, in XProf's order, then the contexts */
    if ((rc = gr_connect_keyed(&f, &f.executors, &f.iterators, 1, 0)) != 0 ||
        (rc = gr_connect_keyed(&f, &f.executors, &f.iterators, 1, 1)) != 0 ||
        (rc = gr_connect_kernels(&f)) != 0 || (rc = gr_connect_contexts(&f)) != 0)
        goto out;
    if ((rc = gr_sort_cross(&f)) != 0)
        goto out;
    if ((rc = gr_create_groups(&f, g)) != 0 || (rc = gr_attach_links(g, &f.links)) != 0)
        goto out;
    /* GroupTpuEventsOSS: then GroupTpuXPlaneEvents on the device planes */
    if (f.tpu_space && (rc = gr_group_tpu_planes(&f, g)) != 0)
        goto out;
    if (g->ngroups > 0 && (rc = gr_derive_gpu_timeline(&f, g)) != 0)
        goto out;
    rc = gr_attach_tables(g, f.gid, f.eager, line_base);
    f.gid = NULL;
    f.eager = NULL;
out:
    big_free(f.gid);
    big_free(f.eager);
    forest_free(&f);
    return rc;
}

int xp_groups_build(const struct xspace *xs, struct xp_groups **gp, struct xp_err *err)
{
    struct xp_groups *g;
    uint32_t *line_base = NULL, nlines = 0, n = 0;
    uint8_t **mtype = NULL;
    int loop_op = 0, rc;

    *gp = NULL;
    g = groups_new(xs);
    if (g == NULL)
        return xp_err_set(err, -ENOMEM, "out of memory");
    if (xspace_is_grouped(xs)) {
        g->pre_grouped = 1;
        if ((rc = number_lines(xs, &line_base, &nlines, &n, err)) != 0)
            goto fail;
        rc = gr_read_pre_grouped(g, line_base, n);
    } else if ((mtype = gr_metadata_types(xs)) == NULL) {
        rc = -ENOMEM;
    } else if (!gr_scan_metadata(xs, mtype, &loop_op) || loop_op) {
        rc = 0; /* nothing can be grouped: every event reads -1 */
    } else {
        if ((rc = number_lines(xs, &line_base, &nlines, &n, err)) != 0) {
            free(mtype);
            goto fail;
        }
        rc = group_full(g, mtype, line_base, nlines, n);
    }
    free(mtype);
    free(line_base);
    if (rc != 0) {
        xp_err_set(err, rc, "%s: grouping events: %s", xs->path, strerror(-rc));
        goto fail;
    }
    *gp = g;
    return 0;
fail:
    xp_groups_free(g);
    return rc;
}

static int build_groups(struct snapshot *snap, const void *arg, void **value, struct xp_err *err)
{
    struct xspace *xs;
    struct xp_groups *g;
    int rc = snapshot_xspace_decoded(snap, arg, &xs, err);

    if (rc != 0)
        return rc;
    rc = xp_groups_build(xs, &g, err);
    *value = g;
    return rc;
}

static void free_groups(void *value)
{
    xp_groups_free(value);
}

static const struct snapshot_part groups_part = {"groups", build_groups, free_groups};

int snapshot_groups(struct snapshot *snap, const char *host, const struct xp_groups **gp,
                    struct xp_err *err)
{
    void *v;
    int rc;

    rc = snapshot_part(snap, &groups_part, host, NULL, host, &v, err);
    *gp = rc == 0 ? v : NULL;
    return rc;
}
