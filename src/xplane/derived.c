/*
 * derived.c - XProf's derived GPU lines (see derived.h), ported from
 * xprof/utils/derived_timeline.cc: DeriveStepEventsFromGroups,
 * DeriveEventsFromAnnotations (per stream: Framework Name Scope, Framework
 * Ops, XLA Modules, XLA Ops and Source code, with GenerateDerivedTimeLines'
 * HLO symbol resolver (derived_hlo.h); display id renumbering) and
 * DeriveEventsFromHostTrace (Launch Stats).
 * The builder is in derived_line.c, a stream's lines in derived_stream.c,
 * compaction and the readers of an event's names in derived_compact.c.
 */
#include "derived_int.h"
#include "base/bigalloc.h"
#include "base/grow.h"
#include "base/idmap.h"
#include "base/parallel.h"
#include "base/sort.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int derived_is_thread_id(int64_t id)
{
    int32_t t = (int32_t)id; /* XProf passes the id as an int */

    return t >= THREAD_ID_DERIVED_MIN && t <= THREAD_ID_DEVICE_DERIVED_MAX;
}

/* --- Steps -------------------------------------------------------------------- */

/* The grouping's Steps markers of plane p are this line's events when it
 * derived them from the same events in the same order: from every event of
 * the plane (starting at or after 0, where its signed order and ours agree)
 * on the lines both count as not derived. */
static int markers_are_steps(const struct xp_plane *pl, const struct xp_groups *g, uint32_t p)
{
    uint32_t l;

    if (g->steps_derived == NULL || !g->steps_derived[p])
        return 0;
    for (l = 0; l < pl->nlines; l++) {
        if (!derived_is_thread_id(pl->lines[l].id) != !xp_line_id_is_derived(pl->lines[l].id))
            return 0;
    }
    return 1;
}

/* The Steps line from the grouping's markers: maximal runs of one group in
 * time order, as the walk below makes them. */
static int steps_from_markers(struct builder_line *steps, const struct xp_groups *g, uint32_t p)
{
    uint32_t k;
    int rc = 0;

    for (k = 0; k < g->nsteps[p] && rc == 0; k++) {
        const struct xp_step_marker *m = &g->steps[p][k];
        char name[24];
        snprintf(name, sizeof(name), "%d", (int32_t)m->group_id);
        rc = dvb_expand_or_add(steps, name, NULL, 0, NULL, (uint64_t)m->begin_ps,
                               (uint64_t)(m->end_ps - m->begin_ps), (int32_t)m->group_id, 0);
    }
    return rc;
}

/* The Steps line by its own walk: the plane's events sorted, maximal runs
 * of one group in time order. */
static int steps_by_walk(struct builder_line *steps, const struct xp_plane *pl,
                         const struct xp_groups *g, uint32_t p)
{
    struct sorted_ev *v;
    uint32_t n, i;
    int any = 0, rc = 0;

    for (i = 0; i < pl->nlines && !any; i++) {
        uint32_t e;
        for (e = 0; e < pl->lines[i].nevents && !any; e++)
            any = xp_group_of(g, p, i, e) >= 0;
    }
    if (!any)
        return 0;
    if (dv_sorted_events(pl, -1, &v, &n) != 0)
        return -ENOMEM;
    for (i = 0; i < n && rc == 0; i++) {
        int32_t grp = xp_group_of(g, p, v[i].line, v[i].event);
        char name[24];
        if (grp < 0)
            continue;
        {
            /* The step's name is its group id: same group, same name. */
            struct dv_event *last = dvb_last(steps, 0);
            if (last != NULL && last->group == grp) {
                uint64_t end = v[i].ts + v[i].dur;
                if (end > last->ts + last->dur)
                    last->dur = end - last->ts;
                continue;
            }
        }
        snprintf(name, sizeof(name), "%d", grp);
        rc = dvb_expand_or_add(steps, name, NULL, 0, NULL, v[i].ts, v[i].dur, grp, 0);
    }
    big_free(v);
    return rc;
}

static int derive_steps(struct derived *dv, const struct xspace *xs, uint32_t p,
                        const struct xp_groups *g)
{
    const struct xp_plane *pl = &xs->planes[p];
    struct builder_line steps;
    int rc;

    if (g == NULL)
        return 0;
    dvb_init(&steps, dv, p, THREAD_ID_STEP_INFO, "Steps");
    if (markers_are_steps(pl, g, p))
        rc = steps_from_markers(&steps, g, p);
    else
        rc = steps_by_walk(&steps, pl, g, p);
    if (rc == 0 && steps.li >= 0)
        dvb_line(&steps)->steps = g;
    return rc;
}

/* Streams first by "Compute" in the name, then by event count, descending. */
struct stream_ref {
    uint32_t line;    /* line index */
    int compute;      /* name contains "Compute" */
    uint32_t nevents; /* its events */
};

static int stream_cmp(const void *a, const void *b)
{
    const struct stream_ref *x = a, *y = b;

    if (x->compute != y->compute)
        return x->compute ? -1 : 1;
    if (x->nevents != y->nevents)
        return x->nevents > y->nevents ? -1 : 1;
    return x->line < y->line ? -1 : x->line > y->line;
}

/* One stream's lines (DeriveEventsFromAnnotations for one stream): its
 * derived ids start at first_id, and its display ids at first_index (the
 * stream, then its five derived lines in id order: name scope, tf op,
 * module, op, source; empty ones included). */
static int derive_stream(struct derived *dv, const struct xspace *xs, uint32_t p, uint32_t line,
                         int64_t first_id, int64_t first_index, const struct xp_groups *g,
                         const struct derived_hlo *hlo)
{
    uint32_t k;
    int rc = dv_derive_stream(dv, xs, p, line, first_id, g, hlo);

    dv->display_ids[p][line] = first_index;
    for (k = 0; k < dv->nlines; k++) {
        int64_t off = dv->lines[k].id - first_id;
        int slot = off == 0 ? 1 : off == 1 ? 2 : off == 2 ? 3 : off == 3 ? 4 : 5;
        dv->lines[k].display_id = first_index + slot;
    }
    return rc;
}

/* --- Launch Stats ---------------------------------------------------------------- */

struct launch_info {
    int32_t group;    /* group id */
    uint64_t begin;   /* union of launch spans */
    uint64_t end;     /* end of it */
    int64_t count;    /* launches */
    uint64_t max_dur; /* longest launch, ps */
    double sum_dur;   /* total, ps */
};

/* One device's launch groups in order of first launch, found by group id:
 * launches come in runs of one group, so the last one is tried first. */
struct launch_table {
    struct launch_info *v; /* groups */
    uint32_t n, cap;       /* entries in v, room */
    uint32_t last;         /* entry of the last launch */
    struct idmap index;    /* group id -> entry */
};

/* The entry of group grp in t, added when new; NULL when out of memory. */
static struct launch_info *launch_entry(struct launch_table *t, int32_t grp, uint64_t ts,
                                        uint64_t dur)
{
    uint32_t k = t->last;
    struct launch_info *li;

    if (k >= t->n || t->v[k].group != grp)
        k = idmap_get(&t->index, grp);
    if (k == IDMAP_NONE) {
        k = t->n;
        if (xp_grow((void **)&t->v, &t->cap, k, sizeof(*t->v)) != 0 ||
            idmap_set(&t->index, grp, k) != 0)
            return NULL;
        li = &t->v[t->n++];
        memset(li, 0, sizeof(*li));
        li->group = grp;
        li->begin = ts;
        li->end = ts + dur;
    }
    t->last = k;
    return &t->v[k];
}

/* What LaunchEventStats reads from a host event's own stats. */
struct launch_stats {
    int has_device;      /* device_id present */
    int has_correlation; /* correlation_id present */
    int64_t device;      /* device_id */
};

static void launch_stat(void *ctx, const struct xp_plane *pl, int which, const struct lite_stat *st)
{
    struct launch_stats *ls = ctx;

    (void)pl;
    if (st->kind != XP_STAT_INT && st->kind != XP_STAT_UINT)
        return;
    if (which == 0) {
        ls->has_device = 1;
        ls->device = (int64_t)st->u;
    } else {
        ls->has_correlation = 1;
    }
}

/* Record li's stats as those of event k of the Launch Stats line l. */
static int set_launch(struct dv_line *l, uint32_t k, const struct launch_info *li)
{
    if (k >= l->nlaunch) {
        uint32_t n = l->nev > k ? l->nev : k + 1;
        if (n < l->nlaunch * 2 && l->nlaunch < UINT32_MAX / 2)
            n = l->nlaunch * 2; /* doubled: one call per event */
        struct dv_launch *v = realloc(l->launch, n * sizeof(*v));
        if (v == NULL)
            return -ENOMEM;
        memset(v + l->nlaunch, 0, (n - l->nlaunch) * sizeof(*v));
        l->launch = v;
        l->nlaunch = n;
    }
    l->launch[k].num_launches = li->count;
    l->launch[k].max_launch_us = (double)li->max_dur / 1e6;
    l->launch[k].avg_launch_us = li->sum_dur / (double)li->count / 1e6;
    return 0;
}

/* The host plane's Launch Stats ids, or NULL when it has no launches to
 * count (a launch has both a device_id and a correlation_id). */
static const struct xp_plane *launch_host(const struct xspace *xs, uint32_t ngpu,
                                          const struct xp_groups *g, int64_t ids[2])
{
    const struct xp_plane *host = xspace_find_plane(xs, "/host:CPU");

    if (host == NULL || g == NULL || ngpu == 0 || host->stat_id[XS_DEVICE_ID] == XP_NO_STAT ||
        host->stat_id[XS_CORRELATION_ID] == XP_NO_STAT)
        return NULL;
    ids[0] = host->stat_id[XS_DEVICE_ID];
    ids[1] = host->stat_id[XS_CORRELATION_ID];
    return host;
}

/* Count the launches among host events [from, to) (numbered over the
 * plane's lines in order) into tables[ngpu] (LaunchEventStats). */
static int launch_count(const struct xspace *xs, uint32_t ngpu, const struct xp_groups *g,
                        uint64_t from, uint64_t to, struct launch_table *tables)
{
    int64_t ids[2];
    const struct xp_plane *host = launch_host(xs, ngpu, g, ids);
    uint64_t at = 0;
    uint32_t hp, l, e;

    if (host == NULL)
        return 0;
    hp = (uint32_t)(host - xs->planes);
    for (l = 0; l < host->nlines && at < to; at += host->lines[l].nevents, l++) {
        const struct xp_line *ln = &host->lines[l];
        uint32_t first = from > at ? (uint32_t)(from - at) : 0, end = ln->nevents;
        if (at + end > to)
            end = (uint32_t)(to - at);
        if (first >= end || derived_is_thread_id(ln->id))
            continue;
        for (e = first; e < end; e++) {
            const struct xp_event *ev = &ln->events[e];
            struct launch_stats ls = {0, 0, 0};
            int32_t grp = xp_group_of(g, hp, l, e);
            struct launch_info *li;
            int64_t dev;
            uint64_t ts, dur;
            if (grp < 0 || strncmp(xp_event_meta(host, ev)->name, "cu", 2) == 0)
                continue;
            dv_each_stat(host, ln, ev, ids, 2, launch_stat, &ls);
            dev = ls.device;
            if (!ls.has_device || !ls.has_correlation || dev < 0 || dev >= (int64_t)ngpu)
                continue;
            ts = (uint64_t)xp_event_start_ps(ln, ev);
            dur = (uint64_t)ev->duration_ps;
            li = launch_entry(&tables[dev], grp, ts, dur);
            if (li == NULL)
                return -ENOMEM;
            if (ts < li->begin)
                li->begin = ts;
            if (ts + dur > li->end)
                li->end = ts + dur;
            li->count++;
            if (dur > li->max_dur)
                li->max_dur = dur;
            li->sum_dur += (double)dur;
        }
    }
    return 0;
}

/* Add the counts of a later stretch of host events (src) to dst: what
 * one pass over both would have counted, groups in order of first launch.
 * (The sums of durations are sums of integers below 2^53 ps: exact in
 * any order.) */
static int launch_merge(struct launch_table *dst, const struct launch_table *src)
{
    uint32_t k;

    for (k = 0; k < src->n; k++) {
        const struct launch_info *s = &src->v[k];
        struct launch_info *d = launch_entry(dst, s->group, s->begin, s->end - s->begin);
        if (d == NULL)
            return -ENOMEM;
        if (d->count == 0) {
            *d = *s;
            continue;
        }
        if (s->begin < d->begin)
            d->begin = s->begin;
        if (s->end > d->end)
            d->end = s->end;
        d->count += s->count;
        if (s->max_dur > d->max_dur)
            d->max_dur = s->max_dur;
        d->sum_dur += s->sum_dur;
    }
    return 0;
}

static void launch_tables_free(struct launch_table *tables, uint32_t ngpu)
{
    uint32_t d;

    if (tables == NULL)
        return;
    for (d = 0; d < ngpu; d++) {
        free(tables[d].v);
        idmap_free(&tables[d].index);
    }
    free(tables);
}

/* The Launch Stats line of every device with launches, from its table. */
static int launch_lines(struct derived *dv, const uint32_t *gpu_planes, uint32_t ngpu,
                        const struct xp_groups *g, const struct launch_table *tables)
{
    uint32_t d;
    int rc = 0;

    for (d = 0; d < ngpu && rc == 0; d++) {
        struct builder_line launch;
        uint32_t k;
        if (tables[d].n == 0)
            continue;
        dvb_init(&launch, dv, gpu_planes[d], THREAD_ID_KERNEL_LAUNCH, "Launch Stats");
        for (k = 0; k < tables[d].n && rc == 0; k++) {
            const struct launch_info *li = &tables[d].v[k];
            const char *gname;
            char *name;
            const struct dv_event *de;
            if (li->group < 0 || (uint64_t)li->group >= g->ngroups)
                continue;
            gname = g->groups[li->group].name;
            name = malloc(strlen(gname) + 20);
            if (name == NULL) {
                rc = -ENOMEM;
                break;
            }
            sprintf(name, "Launch Stats for %s", gname);
            /* Every group gets its own event: level 0 is reset first. */
            dvb_reset(&launch, 0);
            rc = dvb_expand_or_add(&launch, name, NULL, 0, NULL, li->begin, li->end - li->begin,
                                   li->group, 0);
            free(name);
            de = dvb_last(&launch, 0);
            if (rc == 0 && de != NULL)
                rc = set_launch(dvb_line(&launch), (uint32_t)(de - dvb_line(&launch)->ev), li);
        }
    }
    return rc;
}

/* One parallel task of derived_build, into a part of its own (own arena
 * and lines): the Launch Stats lines, one GPU plane's Steps line, or one
 * stream's lines. The parts are joined in XProf's order after. */
enum task_kind { TASK_LAUNCH, TASK_STEPS, TASK_STREAM };

struct dv_task {
    int kind;                    /* enum task_kind */
    uint32_t plane;              /* TASK_STEPS, TASK_STREAM: index in xs->planes */
    uint32_t line;               /* TASK_STREAM: the stream's line */
    int64_t first_id;            /* TASK_STREAM: its first derived line id */
    int64_t first_index;         /* TASK_STREAM: its display id */
    uint64_t cost;               /* events it reads (the longest run first) */
    struct derived *part;        /* its lines, once run */
    uint64_t from, to;           /* TASK_LAUNCH: its stretch of host events */
    struct launch_table *tables; /* TASK_LAUNCH: its counts per device */
};

/* Host events from which the Launch Stats are counted in parts, one a
 * thread (merged in order after), and what a host event costs against a
 * kernel of a stream task (which goes through all its stats and builds
 * five lines; most host events are not launches). */
#define LAUNCH_SPLIT_FROM 65536
#define LAUNCH_COST_SHARE 8

struct task_list {
    struct derived *dv;            /* the result: display_ids are written here */
    const struct xspace *xs;       /* the profile */
    const struct xp_groups *g;     /* grouping, or NULL */
    const struct derived_hlo *hlo; /* HLO instructions, or NULL */
    const uint32_t *gpu;           /* GPU plane indices */
    uint32_t ngpu;                 /* entries in gpu */
    struct dv_task *tasks;         /* launch parts, then per plane: steps, streams */
    uint32_t ntasks;               /* entries in tasks */
    uint32_t nlaunch;              /* launch parts (tasks[0 .. nlaunch)) */
    uint32_t *order;               /* task indices, most costly first */
};

static struct derived *part_new(const struct derived *dv)
{
    struct derived *part = calloc(1, sizeof(*part));

    if (part == NULL)
        return NULL;
    arena_init(&part->arena);
    part->display_ids = dv->display_ids; /* shared: each stream writes its own entry */
    part->nplanes = dv->nplanes;
    return part;
}

static int task_run(void *arg, size_t i)
{
    struct task_list *t = arg;
    struct dv_task *task = &t->tasks[t->order[i]];
    struct derived *part = part_new(t->dv);
    const struct xp_line *ln;
    int rc;

    if (part == NULL)
        return -ENOMEM;
    task->part = part;
    if (task->kind == TASK_LAUNCH) {
        task->tables = calloc(t->ngpu ? t->ngpu : 1, sizeof(*task->tables));
        if (task->tables == NULL)
            return -ENOMEM;
        return launch_count(t->xs, t->ngpu, t->g, task->from, task->to, task->tables);
    }
    if (task->kind == TASK_STEPS)
        return derive_steps(part, t->xs, task->plane, t->g);
    rc = derive_stream(part, t->xs, task->plane, task->line, task->first_id, task->first_index,
                       t->g, t->hlo);
    /* Nothing else here reads the stream's bytes: a big mapped profile lets
     * them go (the page cache keeps them). */
    ln = &t->xs->planes[task->plane].lines[task->line];
    if (ln->body != NULL)
        xspace_release(t->xs, (size_t)(ln->body - t->xs->data), ln->body_len);
    return rc;
}

static uint64_t plane_events(const struct xp_plane *pl)
{
    uint64_t n = 0;
    uint32_t i;

    for (i = 0; i < pl->nlines; i++)
        n += pl->lines[i].nevents;
    return n;
}

/* Queue plane p's tasks: its Steps line, then its streams ("Compute"
 * streams first, then by event count) with their ids, as long as ids
 * last. */
static int plan_plane(struct task_list *t, uint32_t p)
{
    const struct xp_plane *pl = &t->xs->planes[p];
    struct stream_ref *streams = malloc((pl->nlines + 1) * sizeof(*streams));
    uint32_t ns = 0, i;
    int64_t next_id = THREAD_ID_DEVICE_DERIVED_MIN, next_index = 1;

    t->dv->display_ids[p] = calloc(pl->nlines + 1, sizeof(int64_t));
    if (streams == NULL || t->dv->display_ids[p] == NULL) {
        free(streams);
        return -ENOMEM;
    }
    t->tasks[t->ntasks++] =
        (struct dv_task){.kind = TASK_STEPS, .plane = p, .cost = plane_events(pl)};
    for (i = 0; i < pl->nlines; i++) {
        if (derived_is_thread_id(pl->lines[i].id))
            continue;
        streams[ns].line = i;
        streams[ns].compute = strstr(pl->lines[i].name, "Compute") != NULL;
        streams[ns].nevents = pl->lines[i].nevents;
        ns++;
    }
    xp_qsort(streams, ns, sizeof(*streams), stream_cmp);
    for (i = 0; i < ns && next_id + LINES_PER_STREAM <= THREAD_ID_DEVICE_DERIVED_MAX; i++) {
        t->tasks[t->ntasks++] = (struct dv_task){.kind = TASK_STREAM,
                                                 .plane = p,
                                                 .line = streams[i].line,
                                                 .first_id = next_id,
                                                 .first_index = next_index,
                                                 .cost = streams[i].nevents};
        next_index += 6;
        next_id += LINES_PER_STREAM;
    }
    free(streams);
    return 0;
}

static int cost_desc(const void *a, const void *b, void *arg)
{
    const struct dv_task *tasks = arg;
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

    if (tasks[x].cost != tasks[y].cost)
        return tasks[x].cost > tasks[y].cost ? -1 : 1;
    return x < y ? -1 : x > y;
}

/* The tasks: Launch Stats in parts, then per GPU plane its Steps and
 * streams. */
static int plan_tasks(struct task_list *t)
{
    int64_t ids[2];
    const struct xp_plane *host = launch_host(t->xs, t->ngpu, t->g, ids);
    uint64_t hosted = host ? plane_events(host) : 0;
    uint32_t nlaunch = 1, ntasks, i;
    int cores = parallel_cores(), rc = 0;

    /* (at least two parts, so that one core counts and merges the same way) */
    if (hosted >= LAUNCH_SPLIT_FROM)
        nlaunch = cores < 2 ? 2 : cores > 16 ? 16 : (uint32_t)cores;
    ntasks = nlaunch;
    for (i = 0; i < t->ngpu; i++)
        ntasks += 1 + t->xs->planes[t->gpu[i]].nlines;
    t->tasks = calloc(ntasks, sizeof(*t->tasks));
    t->order = malloc(ntasks * sizeof(*t->order));
    if (t->tasks == NULL || t->order == NULL)
        return -ENOMEM;
    for (i = 0; i < nlaunch; i++) {
        struct dv_task *k = &t->tasks[i];
        k->kind = TASK_LAUNCH;
        k->from = hosted * i / nlaunch;
        k->to = hosted * (i + 1) / nlaunch;
        k->cost = (k->to - k->from) / LAUNCH_COST_SHARE;
    }
    t->nlaunch = nlaunch;
    t->ntasks = nlaunch;
    for (i = 0; i < t->ngpu && rc == 0; i++)
        rc = plan_plane(t, t->gpu[i]);
    for (i = 0; i < t->ntasks; i++)
        t->order[i] = i;
    qsort_r(t->order, t->ntasks, sizeof(*t->order), cost_desc, t->tasks);
    return rc;
}

/* Append the lines of part to dv (moving their events). */
static int take_lines(struct derived *dv, struct derived *part)
{
    struct dv_line *l;

    if (part == NULL || part->nlines == 0)
        return 0;
    l = realloc(dv->lines, (dv->nlines + part->nlines) * sizeof(*l));
    if (l == NULL)
        return -ENOMEM;
    dv->lines = l;
    memcpy(&dv->lines[dv->nlines], part->lines, part->nlines * sizeof(*l));
    dv->nlines += part->nlines;
    return 0;
}

int derived_build(const struct xspace *xs, const struct xp_groups *g, const struct hlo_modules *hlo,
                  struct derived **dvp, struct xp_err *err)
{
    struct derived *dv = calloc(1, sizeof(*dv));
    uint32_t *gpu = malloc((xs->nplanes + 1) * sizeof(*gpu));
    uint32_t ngpu = 0, i;
    struct task_list t;
    int rc = 0;

    if (dv == NULL || gpu == NULL) {
        free(dv);
        free(gpu);
        return xp_err_set(err, -ENOMEM, "%s: out of memory deriving lines", xs->path);
    }
    arena_init(&dv->arena);
    dv->nplanes = xs->nplanes;
    dv->display_ids = calloc(xs->nplanes + 1, sizeof(*dv->display_ids));
    for (i = 0; i < xs->nplanes; i++) {
        if (strncmp(xs->planes[i].name, "/device:GPU:", 12) == 0)
            gpu[ngpu++] = i;
    }
    memset(&t, 0, sizeof(t));
    t.dv = dv;
    t.xs = xs;
    t.g = g;
    t.gpu = gpu;
    t.ngpu = ngpu;
    if (dv->display_ids == NULL)
        rc = -ENOMEM;
    if (rc == 0 && ngpu > 0) {
        struct hlo_modules *own = NULL;
        if (hlo == NULL) {
            rc = hlo_modules_read(xs, &own, err);
            hlo = own;
        }
        if (rc == 0)
            rc = derived_hlo_build(hlo, &dv->hlo, err);
        hlo_modules_free(own);
        t.hlo = dv->hlo;
        if (rc != 0) {
            free(gpu);
            derived_free(dv);
            return rc;
        }
    }
    if (rc == 0)
        rc = plan_tasks(&t);
    if (rc == 0)
        rc = parallel_for(t.ntasks, 0, task_run, &t);
    /* The Launch Stats parts' counts, in order, make the first part's lines. */
    for (i = 1; i < t.nlaunch && rc == 0; i++) {
        uint32_t d;
        for (d = 0; d < ngpu && rc == 0; d++)
            rc = launch_merge(&t.tasks[0].tables[d], &t.tasks[i].tables[d]);
    }
    if (rc == 0 && t.nlaunch > 0)
        rc = launch_lines(t.tasks[0].part, gpu, ngpu, g, t.tasks[0].tables);
    for (i = 0; i < t.nlaunch; i++)
        launch_tables_free(t.tasks[i].tables, ngpu);
    /* XProf's order: Steps of every plane, the streams' lines of every
     * plane, then Launch Stats. */
    for (i = 1; i < t.ntasks && rc == 0; i++) {
        if (t.tasks[i].kind == TASK_STEPS)
            rc = take_lines(dv, t.tasks[i].part);
    }
    for (i = 1; i < t.ntasks && rc == 0; i++) {
        if (t.tasks[i].kind == TASK_STREAM)
            rc = take_lines(dv, t.tasks[i].part);
    }
    if (rc == 0 && t.ntasks > 0)
        rc = take_lines(dv, t.tasks[0].part);
    /* Keep the parts' arenas (the names); their lines now belong to dv (or,
     * on failure, are freed with the part). */
    dv->parts = calloc(t.ntasks ? t.ntasks : 1, sizeof(*dv->parts));
    if (dv->parts == NULL && rc == 0)
        rc = -ENOMEM;
    for (i = 0; i < t.ntasks; i++) {
        struct derived *part = t.tasks[i].part;
        if (part == NULL)
            continue;
        if (rc == 0)
            part->nlines = 0;
        part->display_ids = NULL;
        if (dv->parts != NULL)
            dv->parts[dv->nparts++] = part;
        else
            derived_free(part);
    }
    if (rc != 0)
        dv->nlines = 0; /* the events still belong to the parts */
    free(t.tasks);
    free(t.order);
    free(gpu);
    if (rc != 0) {
        derived_free(dv);
        return xp_err_set(err, rc, "%s: out of memory deriving lines", xs->path);
    }
    *dvp = dv;
    return 0;
}

void derived_free(struct derived *dv)
{
    uint32_t i;

    if (dv == NULL)
        return;
    for (i = 0; i < dv->nlines; i++) {
        big_free(dv->lines[i].ev);
        big_free(dv->lines[i].kept);
        free(dv->lines[i].refs);
        free(dv->lines[i].launch);
        free(dv->lines[i].ref_slots);
    }
    free(dv->lines);
    if (dv->display_ids != NULL) {
        for (i = 0; i < dv->nplanes; i++)
            free(dv->display_ids[i]);
    }
    free(dv->display_ids);
    for (i = 0; i < dv->nparts; i++)
        derived_free(dv->parts[i]);
    free(dv->parts);
    derived_hlo_free(dv->hlo);
    dv_intern_free(dv->intern);
    arena_free(&dv->arena);
    free(dv);
}

const struct dv_launch *derived_launch(const struct dv_line *l, uint32_t k)
{
    /* Every event of a Launch Stats line has its stats (count >= 1). */
    if (k >= l->nlaunch || l->launch[k].num_launches == 0)
        return NULL;
    return &l->launch[k];
}
