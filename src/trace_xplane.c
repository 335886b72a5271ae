/*
 * trace_xplane.c - one host's xplane as XProf's streaming trace viewer sees
 * it (xprof/convert/xplane_to_trace_container.cc after
 * PreprocessSingleHostXSpace), into a trace index.
 *
 * Processes: /host:CPU* planes (sorted by name) are pids 701, 702, ...; GPU
 * planes (else TPU planes) 1 + plane id (1 when above 500); CUSTOM planes
 * 501 + id; named "<host> <plane name>". Threads: one per line with events,
 * except "_counters_" (its events are counter samples) and "counters_*"
 * lines; tid = low 32 bits of the display id. An event's name is its
 * step_name stat, else its metadata display name (the full name then becomes
 * arg long_name), else its name; internal event types are hidden.
 *
 * A host that is not grouped yet gets what XProf's preprocessing adds: flows
 * from correlation ids (host launch -> device kernel) and producer/consumer
 * stats, group ids from the shared grouping (group.h), step_name on explicit
 * step roots, and the derived GPU lines (derived.h). A host already grouped
 * (group_id stats in the file) is taken as it is, as XProf does.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "derived.h"
#include "group.h"
#include "trace_index.h"
#include "trace_json.h"
#include "trace_xplane.h"

#define HOST_PID_FIRST 701
#define DEVICE_PID_FIRST 1
#define DEVICE_PID_LAST 500
#define CUSTOM_PID_FIRST 501
#define MAX_LONG_NAME 10000
#define ARG_INTERN_MIN 17 /* string args longer than 16 bytes are interned */
#define MAX_HLO_IDS 4     /* "hlo_text" stat metadata ids cached per plane */

enum { CTX_GPU_LAUNCH = 9, MAX_CONTEXT = 15 /* later context types read as generic */ };

static const char *const internal_events[] = {
    "MemoryAllocation",
    "MemoryDeallocation",
    "PrefetchProduce",
    "PrefetchConsume",
    "ParallelInterleaveProduce",
    "ParallelInterleaveConsume",
    "ParallelInterleaveInitializeInput",
    "ParallelMapProduce",
    "ParallelMapConsume",
    "MapAndBatchProduce",
    "MapAndBatchConsume",
    "ParseExampleProduce",
    "ParseExampleConsume",
    NULL,
};

int tv_is_internal_event(const char *name)
{
    int i;

    for (i = 0; internal_events[i] != NULL; i++) {
        if (strcmp(name, internal_events[i]) == 0)
            return 1;
    }
    return 0;
}

static int starts_with(const char *s, const char *prefix)
{
    return strncmp(s, prefix, strlen(prefix)) == 0;
}

/* What the stats of one event mean to the trace viewer. */
struct special {
    int has_flow;                     /* a flow stat (last one wins) */
    uint64_t flow;                    /* its XFlow value */
    int has_group;                    /* a group_id stat */
    int64_t group;                    /* its value */
    int is_async;                     /* an _a stat */
    const char *step_name;            /* step_name stat (last non-empty one) */
    size_t step_len;                  /* its length */
    int has_corr;                     /* correlation_id (for synthesized flows) */
    uint64_t corr;                    /* its uint64 value (0 if stored as int64) */
    int has_pt, has_p, has_ct, has_c; /* producer / consumer stats */
    int64_t pt, p, ct, c;             /* their values */
};

/* Fold one stat into sp (XProf's ConvertXStatsToTraceEventArguments). */
static void fold_stat(const struct xp_plane *pl, const struct xp_stat *st, struct special *sp)
{
    int64_t id = st->meta_id;
    int is_int = st->kind == XP_STAT_INT || st->kind == XP_STAT_UINT;

    if (id == pl->stat_id[XS_CORRELATION_ID]) {
        sp->has_corr = 1;
        sp->corr = st->kind == XP_STAT_UINT ? st->v.u : 0;
    } else if (id == pl->stat_id[XS_PRODUCER_TYPE] && is_int) {
        sp->has_pt = 1;
        sp->pt = st->v.i;
    } else if (id == pl->stat_id[XS_PRODUCER_ID] && is_int) {
        sp->has_p = 1;
        sp->p = st->v.i;
    } else if (id == pl->stat_id[XS_CONSUMER_TYPE] && is_int) {
        sp->has_ct = 1;
        sp->ct = st->v.i;
    } else if (id == pl->stat_id[XS_CONSUMER_ID] && is_int) {
        sp->has_c = 1;
        sp->c = st->v.i;
    }
    if (!is_int && st->kind != XP_STAT_STR && st->kind != XP_STAT_REF)
        return;
    if (id == pl->stat_id[XS_FLOW] && is_int) {
        sp->has_flow = 1;
        sp->flow = st->v.u;
    } else if (id == pl->stat_id[XS_GROUP_ID] && is_int) {
        sp->has_group = 1;
        sp->group = st->v.i;
    } else if (id == pl->stat_id[XS_IS_ASYNC] && is_int) {
        sp->is_async = 1;
    } else if (id == pl->stat_id[XS_STEP_NAME] && !is_int) {
        sp->step_name = st->str;
        sp->step_len = st->len;
    }
}

/* XFlow's fields. */
static unsigned flow_type_of(uint64_t v)
{
    switch (v & 3) {
    case 1:
        return TV_FLOW_END; /* in */
    case 2:
        return TV_FLOW_START; /* out */
    case 3:
        return TV_FLOW_MID;
    default:
        return TV_FLOW_NONE;
    }
}

/* A plane the trace viewer shows, with its pid. */
struct shown_plane {
    uint32_t index; /* in xs->planes */
    uint32_t pid;   /* before the host offset */
};

static int plane_name_cmp(const void *a, const void *b, void *arg)
{
    const struct xspace *xs = arg;
    const struct shown_plane *x = a, *y = b;

    return strcmp(xs->planes[x->index].name, xs->planes[y->index].name);
}

/* XProf's plane selection (ConvertXSpaceToTraceEventsContainer). */
static int select_planes(const struct xspace *xs, struct shown_plane **outp, uint32_t *np)
{
    struct shown_plane *out = malloc((xs->nplanes + 1) * sizeof(*out));
    uint32_t n = 0, i, nhost, ngpu = 0;

    if (out == NULL)
        return -ENOMEM;
    for (i = 0; i < xs->nplanes; i++) {
        if (starts_with(xs->planes[i].name, "/host:CPU"))
            out[n++].index = i;
    }
    qsort_r(out, n, sizeof(*out), plane_name_cmp, (void *)xs);
    for (i = 0; i < n; i++)
        out[i].pid = HOST_PID_FIRST + i;
    nhost = n;
    for (i = 0; i < xs->nplanes; i++) {
        if (starts_with(xs->planes[i].name, "/device:GPU:"))
            ngpu++;
    }
    for (i = 0; i < xs->nplanes; i++) {
        const char *name = xs->planes[i].name;
        if (ngpu > 0 ? starts_with(name, "/device:GPU:") : starts_with(name, "/device:TPU:")) {
            int64_t pid = DEVICE_PID_FIRST + xs->planes[i].id;
            out[n].index = i;
            out[n].pid = (pid > DEVICE_PID_LAST || pid < 0) ? DEVICE_PID_FIRST : (uint32_t)pid;
            n++;
        }
    }
    for (i = 0; i < xs->nplanes; i++) {
        if (starts_with(xs->planes[i].name, "/device:CUSTOM:")) {
            out[n].index = i;
            out[n].pid = (uint32_t)(CUSTOM_PID_FIRST + xs->planes[i].id);
            n++;
        }
    }
    (void)nhost;
    *outp = out;
    *np = n;
    return 0;
}

/* Is the device a TPU core or non-core (full_dma applies, details lists it)? */
static void device_kind(const char *name, int *core, int *noncore)
{
    *core = strstr(name, "/device:TPU:") != NULL || strstr(name, "TensorNode") != NULL ||
            strstr(name, "TPU Core") != NULL;
    *noncore = strstr(name, "#Chip") != NULL &&
               (strstr(name, "Host Interface") != NULL || strstr(name, "HBM") != NULL ||
                strstr(name, "ICI Router") != NULL);
}

/* Per plane: cached facts about each event metadata. */
struct meta_info {
    uint32_t name;    /* string id of the shown name (display or name), 0 = not yet */
    uint8_t internal; /* hidden event type */
    uint8_t display;  /* has a display name */
    uint8_t frames;   /* its frames were recorded */
};

/* Host-building state. */
struct builder {
    struct tv_host *h;                /* the index */
    struct xsrc *src;                 /* the source record (kept for args) */
    const struct xspace *xs;          /* the profile */
    const struct xp_groups *groups;   /* grouping, or NULL */
    int preprocess;                   /* 1: add flows, groups, derived lines */
    uint64_t host_id;                 /* for synthesized flow ids */
    struct meta_info *meta;           /* of the current plane */
    uint32_t nmeta;                   /* entries in meta */
    const struct xp_plane *hlo_plane; /* plane of hlo_ids */
    int64_t hlo_ids[MAX_HLO_IDS];     /* its stat metadata ids named "hlo_text" */
    uint32_t nhlo_ids;                /* how many (more than MAX_HLO_IDS: not cached) */
};

/* Record the "@@" frames an event with metadata m produces (long_name). */
static int meta_frames(struct builder *b, const struct xp_event_meta *m)
{
    size_t n = strlen(m->name);

    if (n > MAX_LONG_NAME) {
        char *buf = malloc(MAX_LONG_NAME + 16);
        int rc;
        if (buf == NULL)
            return -ENOMEM;
        memcpy(buf, m->name, MAX_LONG_NAME);
        memcpy(buf + MAX_LONG_NAME, "...<truncated>", 14);
        rc = tv_add_frame(b->h, buf, MAX_LONG_NAME + 14);
        free(buf);
        return rc;
    }
    if (n >= ARG_INTERN_MIN)
        return tv_add_frame(b->h, m->name, n);
    return 0;
}

/* 1 if the stat's metadata is named "hlo_text" (ids of the current plane
 * cached by add_plane; any plane when the cache is not set). */
static int is_hlo_text(const struct builder *b, const struct xp_plane *pl, const struct xp_stat *st)
{
    uint32_t i;

    if (b->nhlo_ids > MAX_HLO_IDS || b->hlo_plane != pl)
        return strcmp(xp_stat_name(pl, st), "hlo_text") == 0;
    for (i = 0; i < b->nhlo_ids; i++) {
        if (b->hlo_ids[i] == st->meta_id)
            return 1;
    }
    return 0;
}

/* Cache the ids of the plane's stat metadata named "hlo_text". */
static void cache_hlo_ids(struct builder *b, const struct xp_plane *pl)
{
    uint32_t i;

    b->hlo_plane = pl;
    b->nhlo_ids = 0;
    for (i = 0; i < pl->nsmeta; i++) {
        /* The id must resolve to this entry, as xp_stat_name resolves it. */
        if (strcmp(pl->smeta[i].name, "hlo_text") != 0 ||
            xp_plane_stat_meta(pl, pl->smeta[i].id) != &pl->smeta[i])
            continue;
        if (b->nhlo_ids < MAX_HLO_IDS)
            b->hlo_ids[b->nhlo_ids] = pl->smeta[i].id;
        b->nhlo_ids++;
    }
}

/* hlo_text string stats of length > 16 are "@@" frames too. */
static int stat_frame(struct builder *b, const struct xp_plane *pl, const struct xp_stat *st)
{
    if ((st->kind == XP_STAT_STR || st->kind == XP_STAT_REF) && st->len >= ARG_INTERN_MIN &&
        is_hlo_text(b, pl, st))
        return tv_add_frame(b->h, st->str, st->len);
    return 0;
}

/* Cached info of metadata index mi of plane pl. */
static struct meta_info *meta_of(struct builder *b, const struct xp_plane *pl, uint32_t mi)
{
    struct meta_info *info = &b->meta[mi];
    const struct xp_event_meta *m = &pl->emeta[mi];
    uint32_t i;

    if (info->name != 0)
        return info;
    info->internal = tv_is_internal_event(m->name);
    info->display = m->display_name[0] != '\0';
    info->name = tv_cstr(b->h, info->display ? m->display_name : m->name);
    if (info->name == 0)
        return NULL;
    if (!info->internal) {
        if (info->display && meta_frames(b, m) != 0)
            return NULL;
        for (i = 0; i < m->nstats; i++) {
            if (stat_frame(b, pl, &m->stats[i]) != 0)
                return NULL;
        }
    }
    return info;
}

/* The group root's step_name, when grouping named it (explicit roots). */
static const char *root_step_name(const struct builder *b, uint32_t p, uint32_t l, uint32_t e,
                                  int32_t group)
{
    const struct xp_group *g;
    const struct xp_plane *pl;
    struct xp_stat st;

    if (b->groups == NULL || group < 0 || (uint32_t)group >= b->groups->ngroups)
        return NULL;
    g = &b->groups->groups[group];
    if (g->root_plane != p || g->root_line != l || g->root_event != e)
        return NULL;
    pl = &b->xs->planes[p];
    if (!xp_event_stat(pl, &pl->lines[l], &pl->lines[l].events[e], XS_IS_ROOT, &st))
        return NULL;
    return g->name;
}

/* Collect the special stats of one event, including what preprocessing adds. */
static void event_specials(struct builder *b, uint32_t p, uint32_t l, uint32_t ei,
                           struct special *sp, int32_t *group)
{
    const struct xp_plane *pl = &b->xs->planes[p];
    const struct xp_line *ln = &pl->lines[l];
    const struct xp_event *ev = &ln->events[ei];
    const struct xp_event_meta *m = &pl->emeta[ev->meta];
    struct xp_stat_iter it;
    struct xp_stat st;
    struct special own;
    uint32_t i;

    memset(sp, 0, sizeof(*sp));
    for (i = 0; i < m->nstats; i++)
        fold_stat(pl, &m->stats[i], sp);
    memset(&own, 0, sizeof(own));
    xp_stat_iter_init(&it, pl, ln, ev);
    while (xp_stat_next(&it, &st) == 1) {
        fold_stat(pl, &st, sp);
        fold_stat(pl, &st, &own);
        /* Frames are best effort: a missing one only loses an "sf". */
        (void)stat_frame(b, pl, &st);
    }
    *group = sp->has_group ? (int32_t)sp->group : TV_NO_GROUP;
    if (!b->preprocess)
        return;
    /* AddFlowsToXplane: from the event's own stats, appended after them. */
    if (own.has_corr) {
        int is_host = starts_with(pl->name, "/host:CPU");
        sp->has_flow = 1;
        sp->flow = xsrc_flow(b->host_id, own.corr, 0, is_host ? 2 : 1, CTX_GPU_LAUNCH);
    }
    if (own.has_pt && own.has_p) {
        unsigned ctx = own.pt >= 0 && own.pt <= MAX_CONTEXT ? (unsigned)own.pt : 0;
        sp->has_flow = 1;
        sp->flow = xsrc_flow(b->host_id, (uint64_t)own.p, 1 + ctx, 2, ctx);
    }
    if (own.has_ct && own.has_c) {
        unsigned ctx = own.ct >= 0 && own.ct <= MAX_CONTEXT ? (unsigned)own.ct : 0;
        sp->has_flow = 1;
        sp->flow = xsrc_flow(b->host_id, (uint64_t)own.c, 1 + ctx, 1, ctx);
    }
    if (b->groups != NULL) {
        int32_t g = xp_group_of(b->groups, p, l, ei);
        if (g >= 0)
            *group = g;
    }
}

/* Add the events of one file line. */
static int add_line(struct builder *b, uint32_t p, uint32_t l, uint32_t pid, uint32_t tid,
                    int counter)
{
    const struct xp_plane *pl = &b->xs->planes[p];
    const struct xp_line *ln = &pl->lines[l];
    uint32_t base = xsrc_line_base(b->src, p, l), ei;
    int64_t thread_track = counter ? -1 : tv_track_thread(b->h, pid, tid);

    if (!counter && thread_track < 0)
        return -ENOMEM;
    for (ei = 0; ei < ln->nevents; ei++) {
        const struct xp_event *ev = &ln->events[ei];
        struct meta_info *info = meta_of(b, pl, ev->meta);
        struct special sp;
        struct tv_event te;
        const char *root_name;
        int64_t track = thread_track;

        if (info == NULL)
            return -ENOMEM;
        if (info->internal)
            continue;
        memset(&te, 0, sizeof(te));
        event_specials(b, p, l, ei, &sp, &te.group);
        te.ts = (uint64_t)xp_event_start_ps(ln, ev);
        te.dur = (uint64_t)ev->duration_ps;
        te.src = base + ei;
        te.name = info->name;
        root_name = b->preprocess ? root_step_name(b, p, l, ei, te.group) : NULL;
        if (root_name != NULL && root_name[0] != '\0') {
            te.name = tv_cstr(b->h, root_name);
        } else if (sp.step_name != NULL && sp.step_len > 0) {
            te.name = tv_str(b->h, sp.step_name, sp.step_len);
        }
        if (te.name == 0)
            return -ENOMEM;
        if (counter) {
            te.flags = TV_EV_COUNTER;
            te.dur = 0;
            track = tv_track_channel(b->h, pid, te.name);
        } else if (sp.has_flow) {
            te.flow =
                tv_add_flow(b->h, sp.flow >> 2, flow_type_of(sp.flow), (unsigned)(sp.flow >> 58));
            if (te.flow == 0)
                return -ENOMEM;
            if (sp.is_async) {
                te.flags = TV_EV_ASYNC;
                track = tv_track_channel(b->h, pid, te.name);
            }
        }
        if (track < 0)
            return -ENOMEM;
        te.track = (uint32_t)track;
        if (tv_add_event(b->h, &te) != 0)
            return -ENOMEM;
    }
    return 0;
}

/* Add the events of one derived line. */
static int add_derived_line(struct builder *b, uint32_t di, uint32_t pid)
{
    const struct dv_line *dl = &b->src->dv->lines[di];
    uint32_t tid = (uint32_t)(dl->display_id != 0 ? dl->display_id : dl->id), k;
    uint32_t name = tv_cstr(b->h, dl->name);
    int64_t track = tv_track_thread(b->h, pid, tid);

    if (name == 0 || track < 0 || tv_add_resource(b->h, pid, tid, name) != 0)
        return -ENOMEM;
    for (k = 0; k < dl->nev; k++) {
        const struct dv_event *de = &dl->ev[k];
        struct tv_event te;
        size_t name_len;
        memset(&te, 0, sizeof(te));
        te.ts = de->ts;
        te.dur = de->dur;
        te.track = (uint32_t)track;
        te.src = xsrc_derived_base(b->src, di) + k;
        te.group = de->group >= 0 ? (int32_t)de->group : TV_NO_GROUP;
        if (de->step_name != NULL && de->step_name[0] != '\0')
            te.name = tv_cstr(b->h, de->step_name);
        else
            te.name = tv_cstr(b->h, de->display != NULL ? de->display : de->name);
        if (te.name == 0 || tv_add_event(b->h, &te) != 0)
            return -ENOMEM;
        if (de->display != NULL && (name_len = strlen(de->name)) >= ARG_INTERN_MIN) {
            /* One frame per distinct full name: intern it to find new ones. */
            uint32_t before = tv_str_count(b->h);
            uint32_t full = tv_str(b->h, de->name, name_len);
            if (full == 0)
                return -ENOMEM;
            if (tv_str_count(b->h) != before && tv_add_frame(b->h, de->name, name_len) != 0)
                return -ENOMEM;
        }
    }
    return 0;
}

/* The display id XProf shows for a file line. */
static int64_t line_display_id(const struct builder *b, uint32_t p, uint32_t l)
{
    const struct xp_line *ln = &b->xs->planes[p].lines[l];
    const struct derived *dv = b->src->dv;

    if (dv != NULL && p < dv->nplanes && dv->display_ids[p] != NULL && dv->display_ids[p][l] != 0)
        return dv->display_ids[p][l];
    return ln->display_id != 0 ? ln->display_id : ln->id;
}

/* Add one shown plane. */
static int add_plane(struct builder *b, const struct shown_plane *sp)
{
    const struct xp_plane *pl = &b->xs->planes[sp->index];
    const struct derived *dv = b->src->dv;
    char *pname;
    uint32_t l, nlines = 0;
    int rc = 0, dev, core, noncore;

    for (l = 0; l < pl->nlines; l++) {
        /* Derivation removes empty lines from GPU planes. */
        if (dv == NULL || pl->lines[l].nevents > 0 || !starts_with(pl->name, "/device:GPU:"))
            nlines++;
    }
    for (l = 0; dv != NULL && l < dv->nlines; l++)
        nlines += dv->lines[l].plane == sp->index;
    if (nlines == 0)
        return 0;
    pname = malloc(strlen(b->h->hostname) + strlen(pl->name) + 2);
    if (pname == NULL)
        return -ENOMEM;
    sprintf(pname, "%s %s", b->h->hostname, pl->name);
    dev = tv_add_device(b->h, sp->pid, pname);
    free(pname);
    if (dev < 0)
        return -ENOMEM;
    device_kind(pl->name, &core, &noncore);
    b->h->devices[dev].tpu |= core || noncore;
    b->h->tpu |= core;
    free(b->meta);
    b->nmeta = pl->nemeta;
    b->meta = calloc(pl->nemeta ? pl->nemeta : 1, sizeof(*b->meta));
    if (b->meta == NULL)
        return -ENOMEM;
    cache_hlo_ids(b, pl);
    for (l = 0; l < pl->nlines && rc == 0; l++) {
        const struct xp_line *ln = &pl->lines[l];
        int counter = strcmp(ln->name, "_counters_") == 0;
        uint32_t tid = (uint32_t)line_display_id(b, sp->index, l);
        if (ln->nevents == 0 || starts_with(ln->name, "counters_"))
            continue;
        if (!counter) {
            const char *shown = ln->display_name[0] != '\0' ? ln->display_name : ln->name;
            uint32_t name = tv_cstr(b->h, shown);
            if (name == 0 || tv_add_resource(b->h, sp->pid, tid, name) != 0)
                return -ENOMEM;
        }
        rc = add_line(b, sp->index, l, sp->pid, tid, counter);
    }
    for (l = 0; dv != NULL && l < dv->nlines && rc == 0; l++) {
        if (dv->lines[l].plane == sp->index)
            rc = add_derived_line(b, l, sp->pid);
    }
    return rc;
}

/* 1 if some plane already has group_id stats (XProf's IsXSpaceGrouped). */
static int space_grouped(const struct xspace *xs)
{
    uint32_t i;

    for (i = 0; i < xs->nplanes; i++) {
        if (xs->planes[i].stat_id[XS_GROUP_ID] != XP_NO_STAT)
            return 1;
    }
    return 0;
}

int tv_build_xplane(struct snapshot *snap, const char *host, struct tv_host **hp,
                    struct xp_err *err)
{
    struct builder b;
    struct xspace *xs;
    struct shown_plane *planes = NULL;
    uint32_t nplanes = 0, i;
    uint64_t total = 0;
    int rc;

    memset(&b, 0, sizeof(b));
    rc = snapshot_xspace_decoded(snap, host, &xs, err);
    if (rc != 0)
        return rc;
    b.xs = xs;
    b.preprocess = !space_grouped(xs);
    if (b.preprocess) {
        rc = snapshot_groups(snap, host, &b.groups, err);
        if (rc != 0)
            return rc;
    }
    b.host_id = xs->nhostnames > 0 ? tj_std_hash(xs->hostnames[0], strlen(xs->hostnames[0])) : 0;
    b.h = tv_host_new(host);
    if (b.h == NULL)
        return xp_err_set(err, -ENOMEM, "%s: out of memory", host);
    rc = xsrc_new(xs, b.groups, b.preprocess, &b.src);
    if (rc == 0)
        b.src->host_id = b.host_id;
    if (rc == 0 && b.preprocess)
        rc = derived_build(xs, b.groups, &b.src->dv, err);
    if (rc == 0) {
        xsrc_index_derived(b.src);
        b.h->source = b.src;
        b.h->source_free = xsrc_free;
        b.h->args = xsrc_args;
        b.h->counter = xsrc_counter;
        for (i = 0; i < xs->nplanes; i++)
            total += xs->planes[i].nevents;
        if (b.src->dv != NULL) {
            for (i = 0; i < b.src->dv->nlines; i++)
                total += b.src->dv->lines[i].nev;
        }
        rc = tv_reserve(b.h, total);
    }
    if (rc == 0)
        rc = select_planes(xs, &planes, &nplanes);
    for (i = 0; i < nplanes && rc == 0; i++)
        rc = add_plane(&b, &planes[i]);
    free(planes);
    free(b.meta);
    if (rc == 0)
        rc = tv_finish(b.h, (int)sysconf(_SC_NPROCESSORS_ONLN), err);
    else if (err->code == 0)
        xp_err_set(err, rc, "%s: out of memory while building the trace", host);
    if (rc != 0) {
        tv_host_free(b.h);
        return rc;
    }
    *hp = b.h;
    return 0;
}
