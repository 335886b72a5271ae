/*
 * derived.c - XProf's derived GPU lines (see derived.h), ported from
 * xprof/utils/derived_timeline.cc: DeriveStepEventsFromGroups,
 * DeriveEventsFromAnnotations (XLA Modules / XLA Ops per stream, display id
 * renumbering) and DeriveEventsFromHostTrace (Launch Stats).
 */
#include "sort.h"
#include "derived.h"
#include "bigalloc.h"
#include "parallel.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define THREAD_ID_DERIVED_MIN ((int64_t)(int32_t)0xdeadbeef)
#define THREAD_ID_STEP_INFO THREAD_ID_DERIVED_MIN
#define THREAD_ID_KERNEL_LAUNCH (THREAD_ID_DERIVED_MIN + 1)
#define THREAD_ID_HOST_XLA_REGION_END (THREAD_ID_DERIVED_MIN + 49 + 240)
/* Per-stream lines (newer XLA): a range after the host XLA regions. */
#define THREAD_ID_DEVICE_DERIVED_MIN (THREAD_ID_HOST_XLA_REGION_END + 1)
#define LINES_PER_STREAM 6 /* name scope, tf op, module, op, overhead, source */
#define THREAD_ID_DEVICE_DERIVED_MAX (THREAD_ID_DEVICE_DERIVED_MIN + 100 * LINES_PER_STREAM)
#define OFF_MODULE 2
#define OFF_OP 3

int derived_is_thread_id(int64_t id)
{
    int32_t t = (int32_t)id; /* XProf passes the id as an int */

    return t >= THREAD_ID_DERIVED_MIN && t <= THREAD_ID_DEVICE_DERIVED_MAX;
}

/* An event of the plane in XProf's sorted order (start, longer first). */
struct sorted_ev {
    uint64_t ts;    /* start ps */
    uint64_t dur;   /* duration ps */
    uint32_t line;  /* line index */
    uint32_t event; /* event index */
};

static int sorted_cmp(const void *a, const void *b)
{
    const struct sorted_ev *x = a, *y = b;

    if (x->ts != y->ts)
        return x->ts < y->ts ? -1 : 1;
    if (x->dur != y->dur)
        return x->dur > y->dur ? -1 : 1;
    if (x->line != y->line)
        return x->line < y->line ? -1 : 1;
    return x->event < y->event ? -1 : x->event > y->event;
}

static int sorted_cmp_ctx(const void *a, const void *b, void *ctx)
{
    (void)ctx;
    return sorted_cmp(a, b);
}

/* Events of the given lines (all non-derived lines if only < 0), sorted. */
static int sorted_events(const struct xp_plane *pl, int64_t only, struct sorted_ev **outp,
                         uint32_t *np)
{
    uint32_t l, e, n = 0, k = 0;
    struct sorted_ev *v;

    for (l = 0; l < pl->nlines; l++) {
        if ((only >= 0 && l != (uint64_t)only) || derived_is_thread_id(pl->lines[l].id))
            continue;
        n += pl->lines[l].nevents;
    }
    v = big_malloc((n ? n : 1) * sizeof(*v));
    if (v == NULL)
        return -ENOMEM;
    for (l = 0; l < pl->nlines; l++) {
        const struct xp_line *ln = &pl->lines[l];
        if ((only >= 0 && l != (uint64_t)only) || derived_is_thread_id(ln->id))
            continue;
        for (e = 0; e < ln->nevents; e++) {
            v[k].ts = (uint64_t)xp_event_start_ps(ln, &ln->events[e]);
            v[k].dur = (uint64_t)ln->events[e].duration_ps;
            v[k].line = l;
            v[k].event = e;
            k++;
        }
    }
    if (xp_sort_runs(v, n, sizeof(*v), sorted_cmp_ctx, NULL) != 0) {
        big_free(v);
        return -ENOMEM;
    }
    *outp = v;
    *np = n;
    return 0;
}

/* --- lines under construction (DerivedXLineBuilder) ------------------------- */

#define MAX_LEVELS 64

struct builder_line {
    struct derived *dv;          /* owner */
    int32_t li;                  /* index in dv->lines, -1 until it gets an event */
    uint32_t plane;              /* plane index */
    int64_t id;                  /* XLine id */
    const char *name;            /* line name */
    int32_t last[MAX_LEVELS];    /* event index of the last event per level, -1 */
    int nlevels;                 /* levels ever used (XProf's map size) */
    struct builder_line *dep[2]; /* lines reset with this one at level 0 */
    uint32_t hint;               /* first allocation of events (an upper bound if known) */
};

static struct dv_line *line_of(struct builder_line *b)
{
    return b->li >= 0 ? &b->dv->lines[b->li] : NULL;
}

static int line_materialize(struct builder_line *b)
{
    struct derived *dv = b->dv;
    struct dv_line *l;

    if (b->li >= 0)
        return 0;
    l = realloc(dv->lines, (dv->nlines + 1) * sizeof(*l));
    if (l == NULL)
        return -ENOMEM;
    dv->lines = l;
    l = &dv->lines[dv->nlines];
    memset(l, 0, sizeof(*l));
    l->plane = b->plane;
    l->id = b->id;
    l->name = b->name;
    b->li = (int32_t)dv->nlines++;
    return 0;
}

static void builder_init(struct builder_line *b, struct derived *dv, uint32_t plane, int64_t id,
                         const char *name)
{
    int i;

    memset(b, 0, sizeof(*b));
    b->dv = dv;
    b->li = -1;
    b->plane = plane;
    b->id = id;
    b->name = name;
    for (i = 0; i < MAX_LEVELS; i++)
        b->last[i] = -1;
}

static struct dv_event *last_event(struct builder_line *b, int level)
{
    struct dv_line *l = line_of(b);

    if (level >= MAX_LEVELS || b->last[level] < 0 || l == NULL)
        return NULL;
    return &l->ev[b->last[level]];
}

/* XProf's AdjustDurationForTraceViewer: shrink a stack of events with equal
 * spans by 1 ns per level so the viewer stacks them deterministically. */
static void adjust_durations(struct builder_line *b, int level)
{
    int max_level = level, i;
    int64_t max_shrink_ns, shrink_ns = 0;
    uint64_t last_ts = 0, last_dur = 0;
    int have_last = 0;
    struct dv_event *top;

    if (level >= b->nlevels || last_event(b, level) == NULL)
        return;
    for (; max_level < b->nlevels; max_level++) {
        if (last_event(b, max_level) == NULL)
            break;
    }
    max_level--;
    if (max_level <= level)
        return;
    top = last_event(b, max_level);
    max_shrink_ns = (int64_t)(top->dur / 1000) - 1;
    for (i = level; i <= max_level; i++) {
        struct dv_event *cur = last_event(b, i);
        uint64_t ts = cur->ts, dur = cur->dur;
        if (shrink_ns < max_shrink_ns && have_last && last_ts == ts && last_dur == dur)
            shrink_ns++;
        last_ts = ts;
        last_dur = dur;
        have_last = 1;
        if (shrink_ns)
            cur->dur = dur - 1000 * (uint64_t)shrink_ns;
    }
}

static void reset_last(struct builder_line *b, int level)
{
    int i;

    adjust_durations(b, level);
    for (i = level; i < MAX_LEVELS; i++)
        b->last[i] = -1;
    if (level == 0) {
        for (i = 0; i < 2; i++) {
            if (b->dep[i] != NULL)
                reset_last(b->dep[i], 0);
        }
    }
}

/* XProf's ExpandOrAddLevelEvent on a GPU plane (no gap rule). */
static int expand_or_add(struct builder_line *b, const char *name, const char *display, uint64_t ts,
                         uint64_t dur, int64_t group, int level)
{
    struct dv_event *last;
    struct dv_line *l;

    if (level >= MAX_LEVELS)
        return 0;
    if (level >= b->nlevels)
        b->nlevels = level + 1;
    last = last_event(b, level);
    if (last != NULL && strcmp(last->name, name) == 0 && last->group == group) {
        uint64_t begin = last->ts < ts ? last->ts : ts;
        uint64_t end = last->ts + last->dur > ts + dur ? last->ts + last->dur : ts + dur;
        last->ts = begin;
        last->dur = end - begin;
        return 0;
    }
    reset_last(b, level);
    if (line_materialize(b) != 0)
        return -ENOMEM;
    l = line_of(b);
    if (l->nev == l->cap) {
        uint32_t cap = l->cap ? l->cap * 2 : b->hint > 64 ? b->hint : 64;
        struct dv_event *ev = big_realloc(l->ev, cap * sizeof(*ev));
        if (ev == NULL)
            return -ENOMEM;
        l->ev = ev;
        l->cap = cap;
    }
    last = &l->ev[l->nev];
    memset(last, 0, sizeof(*last));
    last->ts = ts;
    last->dur = dur;
    /* Names are copied only when an event is created: expanding is common. */
    last->name = arena_strndup(&b->dv->arena, name, strlen(name));
    last->display = display != NULL ? arena_strndup(&b->dv->arena, display, strlen(display)) : NULL;
    if (last->name == NULL || (display != NULL && last->display == NULL))
        return -ENOMEM;
    last->group = group;
    b->last[level] = (int32_t)l->nev++;
    return 0;
}

/* --- string helpers --------------------------------------------------------- */

static const char *dv_strdup(struct derived *dv, const char *s, size_t n)
{
    return arena_strndup(&dv->arena, s, n);
}

/* --- Steps -------------------------------------------------------------------- */

static int derive_steps(struct derived *dv, const struct xspace *xs, uint32_t p,
                        const struct xp_groups *g)
{
    const struct xp_plane *pl = &xs->planes[p];
    struct sorted_ev *v;
    struct builder_line steps;
    uint32_t n, i;
    int any = 0, rc = 0;

    if (g == NULL)
        return 0;
    for (i = 0; i < pl->nlines && !any; i++) {
        uint32_t e;
        for (e = 0; e < pl->lines[i].nevents && !any; e++)
            any = xp_group_of(g, p, i, e) >= 0;
    }
    if (!any)
        return 0;
    if (sorted_events(pl, -1, &v, &n) != 0)
        return -ENOMEM;
    builder_init(&steps, dv, p, THREAD_ID_STEP_INFO, "Steps");
    for (i = 0; i < n && rc == 0; i++) {
        int32_t grp = xp_group_of(g, p, v[i].line, v[i].event);
        char name[24];
        if (grp < 0)
            continue;
        {
            /* The step's name is its group id: same group, same name. */
            struct dv_event *last = last_event(&steps, 0);
            if (last != NULL && last->group == grp) {
                uint64_t end = v[i].ts + v[i].dur;
                if (end > last->ts + last->dur)
                    last->dur = end - last->ts;
                continue;
            }
        }
        snprintf(name, sizeof(name), "%d", grp);
        rc = expand_or_add(&steps, name, NULL, v[i].ts, v[i].dur, grp, 0);
    }
    big_free(v);
    if (rc == 0 && steps.li >= 0) {
        struct dv_line *l = line_of(&steps);
        for (i = 0; i < l->nev; i++) {
            if (l->ev[i].group >= 0 && (uint32_t)l->ev[i].group < g->ngroups)
                l->ev[i].step_name = g->groups[l->ev[i].group].name;
        }
    }
    return rc;
}

/* --- XLA Modules / XLA Ops per stream ------------------------------------------ */

/* What DeriveEventsFromAnnotations reads from a kernel event's own stats. */
struct kernel_stats {
    int is_kernel;      /* kernel_details non-empty */
    const char *module; /* hlo_module */
    size_t module_len;  /* its length */
    const char *ops;    /* hlo_op ("a::b" for nested) */
    size_t ops_len;     /* its length */
    int has_program;    /* program_id present */
    uint64_t program;   /* its value */
};

static void read_kernel_stats(const struct xp_plane *pl, const struct xp_line *ln,
                              const struct xp_event *ev, struct kernel_stats *ks)
{
    struct xp_stat_iter it;
    struct xp_stat st;

    memset(ks, 0, sizeof(*ks));
    xp_stat_iter_init(&it, pl, ln, ev);
    while (xp_stat_next(&it, &st) == 1) {
        int is_str = st.kind == XP_STAT_STR || st.kind == XP_STAT_REF;
        if (st.meta_id == pl->stat_id[XS_KERNEL_DETAILS] && is_str) {
            ks->is_kernel = st.len > 0;
        } else if (st.meta_id == pl->stat_id[XS_HLO_MODULE] && is_str) {
            ks->module = st.str;
            ks->module_len = st.len;
        } else if (st.meta_id == pl->stat_id[XS_HLO_OP] && is_str) {
            ks->ops = st.str;
            ks->ops_len = st.len;
        } else if (st.meta_id == pl->stat_id[XS_PROGRAM_ID] &&
                   (st.kind == XP_STAT_INT || st.kind == XP_STAT_UINT)) {
            ks->has_program = 1;
            ks->program = st.v.u;
        }
    }
}

/* Give back the unused part of a line sized by its hint. */
static void shrink_line(struct builder_line *b)
{
    struct dv_line *l = line_of(b);
    struct dv_event *ev;

    if (l == NULL || l->nev == 0 || l->cap == l->nev)
        return;
    ev = big_realloc(l->ev, l->nev * sizeof(*ev));
    if (ev != NULL) {
        l->ev = ev;
        l->cap = l->nev;
    }
}

/* Derive the module and op lines of one stream. */
static int derive_stream(struct derived *dv, const struct xspace *xs, uint32_t p, uint32_t l,
                         int64_t first_id, const struct xp_groups *g)
{
    const struct xp_plane *pl = &xs->planes[p];
    const struct xp_line *stream = &pl->lines[l];
    struct builder_line modules, ops;
    char name[64];
    struct sorted_ev *v;
    uint32_t n, i;
    int rc = 0;
    const char *mod_name, *op_name;

    snprintf(name, sizeof(name), "XLA Modules - from #%lld", (long long)stream->id);
    mod_name = dv_strdup(dv, name, strlen(name));
    snprintf(name, sizeof(name), "XLA Ops - from #%lld", (long long)stream->id);
    op_name = dv_strdup(dv, name, strlen(name));
    if (mod_name == NULL || op_name == NULL)
        return -ENOMEM;
    builder_init(&ops, dv, p, first_id + OFF_OP, op_name);
    builder_init(&modules, dv, p, first_id + OFF_MODULE, mod_name);
    modules.dep[0] = &ops;
    if (sorted_events(pl, l, &v, &n) != 0)
        return -ENOMEM;
    /* At most one module event per kernel; ops lines have one level or few. */
    modules.hint = n;
    ops.hint = n;
    for (i = 0; i < n && rc == 0; i++) {
        const struct xp_event *ev = &stream->events[v[i].event];
        struct kernel_stats ks;
        int64_t grp = g != NULL ? xp_group_of(g, p, l, v[i].event) : -1;
        read_kernel_stats(pl, stream, ev, &ks);
        if (!ks.is_kernel)
            continue;
        if (ks.module_len > 0) {
            char small[256];
            char *mname = ks.module_len + 32 <= sizeof(small) ? small : malloc(ks.module_len + 32);
            if (mname == NULL)
                return -ENOMEM;
            memcpy(mname, ks.module, ks.module_len);
            if (ks.has_program)
                snprintf(mname + ks.module_len, 32, "(%llu)", (unsigned long long)ks.program);
            else
                mname[ks.module_len] = '\0';
            rc = expand_or_add(&modules, mname, NULL, v[i].ts, v[i].dur, grp, 0);
            if (mname != small)
                free(mname);
        }
        if (rc == 0 && ks.ops_len > 0) {
            /* One level per "::"-separated op, named "<program>/<op>". */
            char prefix[64];
            size_t plen, start = 0;
            int level = 0;
            if (ks.has_program)
                snprintf(prefix, sizeof(prefix), "%llu/", (unsigned long long)ks.program);
            else
                snprintf(prefix, sizeof(prefix), "%.*s/",
                         (int)(ks.module_len < 60 ? ks.module_len : 60), ks.module);
            plen = strlen(prefix);
            while (rc == 0) {
                const char *sep = NULL;
                size_t k, end;
                for (k = start; k + 1 < ks.ops_len; k++) {
                    if (ks.ops[k] == ':' && ks.ops[k + 1] == ':') {
                        sep = ks.ops + k;
                        break;
                    }
                }
                end = sep != NULL ? (size_t)(sep - ks.ops) : ks.ops_len;
                {
                    char small[512];
                    size_t need = plen + 2 * (end - start) + 2;
                    char *full = need <= sizeof(small) ? small : malloc(need);
                    char *disp;
                    if (full == NULL)
                        return -ENOMEM;
                    memcpy(full, prefix, plen);
                    memcpy(full + plen, ks.ops + start, end - start);
                    full[plen + end - start] = '\0';
                    disp = full + plen + (end - start) + 1;
                    memcpy(disp, ks.ops + start, end - start);
                    disp[end - start] = '\0';
                    rc = expand_or_add(&ops, full, disp, v[i].ts, v[i].dur, grp, level++);
                    if (full != small)
                        free(full);
                }
                if (sep == NULL)
                    break;
                start = end + 2;
            }
            if (rc == 0)
                reset_last(&ops, level);
        }
    }
    big_free(v);
    shrink_line(&modules);
    shrink_line(&ops);
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

static int derive_annotations(struct derived *dv, const struct xspace *xs, uint32_t p,
                              const struct xp_groups *g)
{
    const struct xp_plane *pl = &xs->planes[p];
    struct stream_ref *streams = malloc((pl->nlines + 1) * sizeof(*streams));
    uint32_t ns = 0, i, next_index = 1;
    int64_t next_id = THREAD_ID_DEVICE_DERIVED_MIN;
    int rc = 0;

    dv->display_ids[p] = calloc(pl->nlines + 1, sizeof(int64_t));
    if (streams == NULL || dv->display_ids[p] == NULL) {
        free(streams);
        return -ENOMEM;
    }
    for (i = 0; i < pl->nlines; i++) {
        if (derived_is_thread_id(pl->lines[i].id))
            continue;
        streams[ns].line = i;
        streams[ns].compute = strstr(pl->lines[i].name, "Compute") != NULL;
        streams[ns].nevents = pl->lines[i].nevents;
        ns++;
    }
    xp_qsort(streams, ns, sizeof(*streams), stream_cmp);
    for (i = 0; i < ns && rc == 0; i++) {
        uint32_t first_line = dv->nlines, k;
        if (next_id + LINES_PER_STREAM > THREAD_ID_DEVICE_DERIVED_MAX)
            break;
        rc = derive_stream(dv, xs, p, streams[i].line, next_id, g);
        /* Display ids: the stream, then its five derived lines in id order
         * (name scope, tf op, module, op, source), empty ones included. */
        dv->display_ids[p][streams[i].line] = next_index;
        for (k = first_line; k < dv->nlines; k++) {
            int64_t off = dv->lines[k].id - next_id;
            int slot = off == 0 ? 1 : off == 1 ? 2 : off == 2 ? 3 : off == 3 ? 4 : 5;
            dv->lines[k].display_id = next_index + slot;
        }
        next_index += 6;
        next_id += LINES_PER_STREAM;
    }
    free(streams);
    return rc;
}

/* --- Launch Stats ---------------------------------------------------------------- */

struct launch_info {
    int64_t group;    /* group id */
    uint64_t begin;   /* union of launch spans */
    uint64_t end;     /* end of it */
    int64_t count;    /* launches */
    uint64_t max_dur; /* longest launch, ps */
    double sum_dur;   /* total, ps */
};

static int derive_launch_stats(struct derived *dv, const struct xspace *xs,
                               const uint32_t *gpu_planes, uint32_t ngpu, const struct xp_groups *g)
{
    const struct xp_plane *host = xspace_find_plane(xs, "/host:CPU");
    struct launch_info **info;
    uint32_t *ninfo, *last, hp, l, e, d;
    int rc = 0;

    if (host == NULL || g == NULL || ngpu == 0)
        return 0;
    hp = (uint32_t)(host - xs->planes);
    info = calloc(ngpu, sizeof(*info));
    ninfo = calloc(ngpu, sizeof(*ninfo));
    last = calloc(ngpu, sizeof(*last));
    if (info == NULL || ninfo == NULL || last == NULL) {
        free(info);
        free(ninfo);
        free(last);
        return -ENOMEM;
    }
    for (l = 0; l < host->nlines && rc == 0; l++) {
        const struct xp_line *ln = &host->lines[l];
        if (derived_is_thread_id(ln->id))
            continue;
        for (e = 0; e < ln->nevents && rc == 0; e++) {
            const struct xp_event *ev = &ln->events[e];
            struct xp_stat_iter it;
            struct xp_stat st;
            int has_dev = 0, has_corr = 0;
            int64_t dev = 0;
            int32_t grp = xp_group_of(g, hp, l, e);
            uint64_t ts, dur;
            uint32_t k;
            if (grp < 0 || strncmp(xp_event_meta(host, ev)->name, "cu", 2) == 0)
                continue;
            xp_stat_iter_init(&it, host, ln, ev);
            while (xp_stat_next(&it, &st) == 1) {
                if (st.kind != XP_STAT_INT && st.kind != XP_STAT_UINT)
                    continue;
                if (st.meta_id == host->stat_id[XS_DEVICE_ID]) {
                    has_dev = 1;
                    dev = st.v.i;
                } else if (st.meta_id == host->stat_id[XS_CORRELATION_ID]) {
                    has_corr = 1;
                }
            }
            if (!has_dev || !has_corr || dev < 0 || dev >= (int64_t)ngpu)
                continue;
            ts = (uint64_t)xp_event_start_ps(ln, ev);
            dur = (uint64_t)ev->duration_ps;
            /* Launches come in runs of one group: try the last one first. */
            k = last[dev];
            if (k >= ninfo[dev] || info[dev][k].group != grp) {
                for (k = 0; k < ninfo[dev] && info[dev][k].group != grp; k++)
                    ;
            }
            last[dev] = k;
            if (k == ninfo[dev]) {
                struct launch_info *ni = realloc(info[dev], (k + 1) * sizeof(*ni));
                if (ni == NULL) {
                    rc = -ENOMEM;
                    break;
                }
                info[dev] = ni;
                memset(&ni[k], 0, sizeof(ni[k]));
                ni[k].group = grp;
                ni[k].begin = ts;
                ni[k].end = ts + dur;
                ninfo[dev]++;
            }
            if (ts < info[dev][k].begin)
                info[dev][k].begin = ts;
            if (ts + dur > info[dev][k].end)
                info[dev][k].end = ts + dur;
            info[dev][k].count++;
            if (dur > info[dev][k].max_dur)
                info[dev][k].max_dur = dur;
            info[dev][k].sum_dur += (double)dur;
        }
    }
    for (d = 0; d < ngpu && rc == 0; d++) {
        struct builder_line launch;
        uint32_t k;
        if (ninfo[d] == 0)
            continue;
        builder_init(&launch, dv, gpu_planes[d], THREAD_ID_KERNEL_LAUNCH, "Launch Stats");
        for (k = 0; k < ninfo[d] && rc == 0; k++) {
            const struct launch_info *li = &info[d][k];
            const char *gname;
            char *name;
            struct dv_event *de;
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
            reset_last(&launch, 0);
            rc = expand_or_add(&launch, name, NULL, li->begin, li->end - li->begin, li->group, 0);
            free(name);
            de = last_event(&launch, 0);
            if (rc == 0 && de != NULL) {
                de->launch = 1;
                de->num_launches = li->count;
                de->max_launch_us = (double)li->max_dur / 1e6;
                de->avg_launch_us = li->sum_dur / (double)li->count / 1e6;
            }
        }
    }
    for (d = 0; d < ngpu; d++)
        free(info[d]);
    free(info);
    free(ninfo);
    free(last);
    return rc;
}

/* One parallel task of derived_build: the lines of one GPU plane (Steps,
 * then its streams' lines) or the Launch Stats lines, into a part of its
 * own (own arena and lines); the parts are joined in XProf's order after. */
struct part_task {
    struct derived *dv;        /* the result: display_ids are written here */
    const struct xspace *xs;   /* the profile */
    const struct xp_groups *g; /* grouping, or NULL */
    const uint32_t *gpu;       /* GPU plane indices */
    uint32_t ngpu;             /* entries in gpu */
    struct derived **parts;    /* [0] launch stats, [1 + i] plane gpu[i] */
    uint32_t *nsteps;          /* [1 + i]: lines of part 1 + i that are Steps lines */
};

static struct derived *part_new(const struct derived *dv)
{
    struct derived *part = calloc(1, sizeof(*part));

    if (part == NULL)
        return NULL;
    arena_init(&part->arena);
    part->display_ids = dv->display_ids; /* shared: each plane writes its own entry */
    part->nplanes = dv->nplanes;
    return part;
}

static int part_run(void *arg, size_t i)
{
    struct part_task *t = arg;
    struct derived *part = part_new(t->dv);
    int rc;

    if (part == NULL)
        return -ENOMEM;
    t->parts[i] = part;
    if (i == 0)
        return derive_launch_stats(part, t->xs, t->gpu, t->ngpu, t->g);
    rc = derive_steps(part, t->xs, t->gpu[i - 1], t->g);
    t->nsteps[i] = part->nlines;
    if (rc == 0)
        rc = derive_annotations(part, t->xs, t->gpu[i - 1], t->g);
    return rc;
}

/* Append lines [from, to) of part to dv (moving their events). */
static int take_lines(struct derived *dv, struct derived *part, uint32_t from, uint32_t to)
{
    struct dv_line *l;

    if (to <= from)
        return 0;
    l = realloc(dv->lines, (dv->nlines + (to - from)) * sizeof(*l));
    if (l == NULL)
        return -ENOMEM;
    dv->lines = l;
    memcpy(&dv->lines[dv->nlines], &part->lines[from], (to - from) * sizeof(*l));
    dv->nlines += to - from;
    return 0;
}

int derived_build(const struct xspace *xs, const struct xp_groups *g, struct derived **dvp,
                  struct xp_err *err)
{
    struct derived *dv = calloc(1, sizeof(*dv));
    uint32_t *gpu = malloc((xs->nplanes + 1) * sizeof(*gpu));
    uint32_t ngpu = 0, i;
    struct part_task t;
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
    t.parts = calloc(ngpu + 1, sizeof(*t.parts));
    t.nsteps = calloc(ngpu + 1, sizeof(*t.nsteps));
    if (dv->display_ids == NULL || t.parts == NULL || t.nsteps == NULL)
        rc = -ENOMEM;
    if (rc == 0)
        rc = parallel_for(ngpu + 1, 0, part_run, &t);
    /* XProf's order: Steps of every plane, the streams' lines of every
     * plane, then Launch Stats. */
    for (i = 1; i <= ngpu && rc == 0; i++)
        rc = take_lines(dv, t.parts[i], 0, t.nsteps[i]);
    for (i = 1; i <= ngpu && rc == 0; i++)
        rc = take_lines(dv, t.parts[i], t.nsteps[i], t.parts[i]->nlines);
    if (rc == 0)
        rc = take_lines(dv, t.parts[0], 0, t.parts[0]->nlines);
    if (t.parts != NULL) {
        /* Keep the parts' arenas (the names); their lines now belong to dv
         * (or, on failure, are freed with the part). */
        for (i = 0; i <= ngpu; i++) {
            if (t.parts[i] != NULL && rc == 0)
                t.parts[i]->nlines = 0;
            if (t.parts[i] != NULL)
                t.parts[i]->display_ids = NULL;
        }
        if (rc != 0)
            dv->nlines = 0; /* the events still belong to the parts */
        dv->parts = t.parts;
        dv->nparts = ngpu + 1;
    }
    free(t.nsteps);
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
    for (i = 0; i < dv->nlines; i++)
        big_free(dv->lines[i].ev);
    free(dv->lines);
    if (dv->display_ids != NULL) {
        for (i = 0; i < dv->nplanes; i++)
            free(dv->display_ids[i]);
    }
    free(dv->display_ids);
    for (i = 0; i < dv->nparts; i++)
        derived_free(dv->parts[i]);
    free(dv->parts);
    arena_free(&dv->arena);
    free(dv);
}
