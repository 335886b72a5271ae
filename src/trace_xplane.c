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
 *
 * Events are added in parallel: every shown line (file or derived) is cut
 * into jobs of at most XP_SPLIT events; a first pass counts each job's shown
 * events and marks the metadata they use, those metadata are then named once
 * (names, frames, their own special stats), each job gets its slots in
 * track output order, and a second pass fills the slots, reading each
 * event's own stats once. Strings, frames and channel tracks are shared: a
 * worker takes the builder's lock for them (rare: step names, hlo_text,
 * counters, async events); flows and group ids go to the host's arrays by
 * source record. A derived line drops its events' times as soon as its last
 * run is filled (derived_compact_line): the index holds them.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "derived.h"
#include "group.h"
#include "parallel.h"
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

/* Which well-known stats a stat metadata id stands for (bits). */
enum stat_role {
    R_CORR = 1 << 0,
    R_PT = 1 << 1,
    R_P = 1 << 2,
    R_CT = 1 << 3,
    R_C = 1 << 4,
    R_FLOW = 1 << 5,
    R_GROUP = 1 << 6,
    R_ASYNC = 1 << 7,
    R_STEP = 1 << 8,
    R_HLO = 1 << 9, /* named "hlo_text" */
};

#define ROLE_TABLE_MAX 65536 /* ids below this are looked up in a table */

/* Role lookup of one plane's stat ids. */
struct stat_roles {
    uint16_t *table; /* role bits by id, when every role id is small */
    uint32_t size;   /* entries in table (0: compare ids instead) */
    int64_t ids[9];  /* ids of the roles R_CORR..R_STEP, by bit */
    int64_t *hlo;    /* ids named "hlo_text" */
    uint32_t nhlo;   /* entries in hlo */
    int any;         /* some role exists: stats must be read */
};

static const int role_stat[9] = {
    XS_CORRELATION_ID, XS_PRODUCER_TYPE, XS_PRODUCER_ID, XS_CONSUMER_TYPE, XS_CONSUMER_ID,
    XS_FLOW,           XS_GROUP_ID,      XS_IS_ASYNC,    XS_STEP_NAME,
};

static uint16_t role_of(const struct stat_roles *r, int64_t id)
{
    uint16_t bits = 0;
    uint32_t i;

    if (r->size > 0)
        return id >= 0 && id < (int64_t)r->size ? r->table[id] : 0;
    for (i = 0; i < 9; i++) {
        if (r->ids[i] == id)
            bits |= (uint16_t)(1u << i);
    }
    for (i = 0; i < r->nhlo; i++) {
        if (r->hlo[i] == id)
            bits |= R_HLO;
    }
    return bits;
}

/* xp_stat_next_wanted's filter: stats with a role. */
static int has_role(const void *ctx, int64_t id)
{
    return role_of(ctx, id) != 0;
}

static void roles_free(struct stat_roles *r)
{
    free(r->table);
    free(r->hlo);
    memset(r, 0, sizeof(*r));
}

/* The roles of pl's stat ids. Returns 0 or -ENOMEM. */
static int roles_init(struct stat_roles *r, const struct xp_plane *pl)
{
    int64_t max = -1;
    int small = 1;
    uint32_t i;

    memset(r, 0, sizeof(*r));
    r->hlo = malloc((pl->nsmeta ? pl->nsmeta : 1) * sizeof(*r->hlo));
    if (r->hlo == NULL)
        return -ENOMEM;
    for (i = 0; i < pl->nsmeta; i++) {
        /* The id must resolve to this entry, as xp_stat_name resolves it. */
        if (strcmp(pl->smeta[i].name, "hlo_text") == 0 &&
            xp_plane_stat_meta(pl, pl->smeta[i].id) == &pl->smeta[i])
            r->hlo[r->nhlo++] = pl->smeta[i].id;
    }
    for (i = 0; i < 9; i++)
        r->ids[i] = pl->stat_id[role_stat[i]];
    for (i = 0; i < 9 + r->nhlo; i++) {
        int64_t id = i < 9 ? r->ids[i] : r->hlo[i - 9];
        if (id == XP_NO_STAT)
            continue;
        r->any = 1;
        if (id < 0 || id >= ROLE_TABLE_MAX)
            small = 0;
        else if (id > max)
            max = id;
    }
    if (!small || max < 0)
        return 0;
    r->table = calloc((size_t)max + 1, sizeof(*r->table));
    if (r->table == NULL) {
        roles_free(r);
        return -ENOMEM;
    }
    for (i = 0; i < 9 + r->nhlo; i++) {
        int64_t id = i < 9 ? r->ids[i] : r->hlo[i - 9];
        if (id != XP_NO_STAT)
            r->table[id] |= (uint16_t)(i < 9 ? 1u << i : R_HLO);
    }
    r->size = (uint32_t)max + 1;
    return 0;
}

/* What an event's metadata stats set, folded once per metadata. */
struct meta_special {
    uint64_t flow;         /* XFlow value, when has_flow */
    int64_t group;         /* group_id, when has_group */
    const char *step_name; /* step_name stat, or NULL */
    size_t step_len;       /* its length */
    uint8_t has_flow;      /* a flow stat */
    uint8_t has_group;     /* a group_id stat */
    uint8_t is_async;      /* an _a stat */
};

/* Per plane: cached facts about each event metadata. */
struct meta_info {
    uint32_t name;    /* string id of the shown name (display or name) */
    uint32_t special; /* 1 + index into plane_state.specials, 0 if none */
    uint8_t internal; /* hidden event type */
    uint8_t used;     /* some shown event has it */
};

/* A shown plane while its events are added. */
struct plane_state {
    const struct xp_plane *pl;     /* the plane */
    uint32_t index;                /* in xs->planes */
    uint32_t pid;                  /* before the host offset */
    int is_host;                   /* a /host:CPU plane */
    struct meta_info *meta;        /* per event metadata */
    struct meta_special *specials; /* metadata with special stats */
    uint32_t nspecials;            /* entries in specials */
    struct stat_roles roles;       /* its stat ids */
};

/* A run of events of one file line or derived line, added by one worker. */
struct line_job {
    int derived;    /* 1: a derived line (line = its index in dv) */
    uint32_t plane; /* index into the plane states */
    uint32_t line;  /* line index in the plane, or derived line index */
    uint32_t first; /* first event */
    uint32_t end;   /* past the last event */
    uint32_t tid;   /* thread id */
    int counter;    /* a "_counters_" line */
    int64_t track;  /* thread track (-1 for counters) */
    uint32_t out;   /* its first slot, counted from builder.out */
    uint32_t count; /* events it adds */
};

/* Host-building state. */
struct builder {
    struct tv_host *h;              /* the index */
    struct xsrc *src;               /* the source record (kept for args) */
    const struct xspace *xs;        /* the profile */
    const struct xp_groups *groups; /* grouping, or NULL */
    int preprocess;                 /* 1: add flows, groups, derived lines */
    uint64_t host_id;               /* for synthesized flow ids */
    struct plane_state *planes;     /* shown planes */
    uint32_t nplanes;               /* entries in planes */
    struct line_job *jobs;          /* file line runs */
    uint32_t njobs;                 /* entries in jobs */
    struct tv_event *out;           /* first slot of the file events */
    pthread_mutex_t lock;           /* guards h's strings, frames, tracks */
    uint8_t *frame_done;            /* per string id: derived frame recorded */
    uint32_t *dv_jobs_left;         /* per derived line: its jobs not yet filled */
    uint32_t nframe_done;           /* entries in frame_done */
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

/* hlo_text string stats of length > 16 are "@@" frames too. */
static int is_frame_stat(const struct xp_stat *st, uint16_t role)
{
    return (role & R_HLO) && (st->kind == XP_STAT_STR || st->kind == XP_STAT_REF) &&
           st->len >= ARG_INTERN_MIN;
}

/* Fill the cached info of metadata mi of a plane (single-threaded). */
static int meta_fill(struct builder *b, struct plane_state *ps, uint32_t mi)
{
    struct meta_info *info = &ps->meta[mi];
    const struct xp_event_meta *m = &ps->pl->emeta[mi];
    struct special sp;
    uint32_t i;
    int display = m->display_name[0] != '\0';

    info->name = tv_cstr(b->h, display ? m->display_name : m->name);
    if (info->name == 0)
        return -ENOMEM;
    if (display && meta_frames(b, m) != 0)
        return -ENOMEM;
    memset(&sp, 0, sizeof(sp));
    for (i = 0; i < m->nstats; i++) {
        const struct xp_stat *st = &m->stats[i];
        fold_stat(ps->pl, st, &sp);
        if (is_frame_stat(st, role_of(&ps->roles, st->meta_id)) &&
            tv_add_frame(b->h, st->str, st->len) != 0)
            return -ENOMEM;
    }
    if (sp.has_flow || sp.has_group || sp.is_async || sp.step_name != NULL) {
        struct meta_special *x = &ps->specials[ps->nspecials];
        x->flow = sp.flow;
        x->group = sp.group;
        x->step_name = sp.step_name;
        x->step_len = sp.step_len;
        x->has_flow = (uint8_t)sp.has_flow;
        x->has_group = (uint8_t)sp.has_group;
        x->is_async = (uint8_t)sp.is_async;
        info->special = ++ps->nspecials;
    }
    return 0;
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

/* Fold one of the event's own stats (XProf's ConvertXStatsToTraceEventArguments,
 * as fold_stat, with the role looked up once). */
static void fold_own(const struct xp_stat *st, uint16_t r, struct special *sp)
{
    int is_int = st->kind == XP_STAT_INT || st->kind == XP_STAT_UINT;

    if (r & R_CORR) {
        sp->has_corr = 1;
        sp->corr = st->kind == XP_STAT_UINT ? st->v.u : 0;
    } else if ((r & R_PT) && is_int) {
        sp->has_pt = 1;
        sp->pt = st->v.i;
    } else if ((r & R_P) && is_int) {
        sp->has_p = 1;
        sp->p = st->v.i;
    } else if ((r & R_CT) && is_int) {
        sp->has_ct = 1;
        sp->ct = st->v.i;
    } else if ((r & R_C) && is_int) {
        sp->has_c = 1;
        sp->c = st->v.i;
    }
    if (!is_int && st->kind != XP_STAT_STR && st->kind != XP_STAT_REF)
        return;
    if ((r & R_FLOW) && is_int) {
        sp->has_flow = 1;
        sp->flow = st->v.u;
    } else if ((r & R_GROUP) && is_int) {
        sp->has_group = 1;
        sp->group = st->v.i;
    } else if ((r & R_ASYNC) && is_int) {
        sp->is_async = 1;
    } else if ((r & R_STEP) && !is_int) {
        sp->step_name = st->str;
        sp->step_len = st->len;
    }
}

/* Collect the special stats of one event, including what preprocessing adds:
 * the metadata's folded stats, then the event's own (which win). */
static int event_specials(struct builder *b, const struct plane_state *ps, uint32_t l, uint32_t ei,
                          const struct meta_info *info, struct special *sp, int32_t *group)
{
    const struct xp_plane *pl = ps->pl;
    const struct xp_line *ln = &pl->lines[l];
    const struct xp_event *ev = &ln->events[ei];
    struct xp_stat_iter it;
    struct xp_stat st;
    struct special own;

    memset(sp, 0, sizeof(*sp));
    if (info->special != 0) {
        const struct meta_special *x = &ps->specials[info->special - 1];
        sp->has_flow = x->has_flow;
        sp->flow = x->flow;
        sp->has_group = x->has_group;
        sp->group = x->group;
        sp->is_async = x->is_async;
        sp->step_name = x->step_name;
        sp->step_len = x->step_len;
    }
    memset(&own, 0, sizeof(own));
    if (ps->roles.any) {
        xp_stat_iter_init(&it, pl, ln, ev);
        while (xp_stat_next_wanted(&it, &st, has_role, &ps->roles) == 1) {
            uint16_t r = role_of(&ps->roles, st.meta_id);
            fold_own(&st, r, &own);
            if (is_frame_stat(&st, r)) {
                int rc;
                pthread_mutex_lock(&b->lock);
                rc = tv_add_frame(b->h, st.str, st.len);
                pthread_mutex_unlock(&b->lock);
                if (rc != 0)
                    return -ENOMEM;
            }
        }
    }
    if (own.has_flow) {
        sp->has_flow = 1;
        sp->flow = own.flow;
    }
    if (own.has_group) {
        sp->has_group = 1;
        sp->group = own.group;
    }
    sp->is_async |= own.is_async;
    if (own.step_name != NULL) {
        sp->step_name = own.step_name;
        sp->step_len = own.step_len;
    }
    *group = sp->has_group ? (int32_t)sp->group : TV_NO_GROUP;
    if (!b->preprocess)
        return 0;
    /* AddFlowsToXplane: from the event's own stats, appended after them. */
    if (own.has_corr) {
        sp->has_flow = 1;
        sp->flow = xsrc_flow(b->host_id, own.corr, 0, ps->is_host ? 2 : 1, CTX_GPU_LAUNCH);
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
        int32_t g = xp_group_of(b->groups, ps->index, l, ei);
        if (g >= 0)
            *group = g;
    }
    return 0;
}

/* tv_str / tv_track_channel under the builder's lock (0 / -1 on no memory). */
static uint32_t locked_str(struct builder *b, const char *s, size_t n)
{
    uint32_t id;

    pthread_mutex_lock(&b->lock);
    id = tv_str(b->h, s, n);
    pthread_mutex_unlock(&b->lock);
    return id;
}

static int64_t locked_channel(struct builder *b, uint32_t pid, uint32_t name)
{
    int64_t t;

    pthread_mutex_lock(&b->lock);
    t = tv_track_channel(b->h, pid, name);
    pthread_mutex_unlock(&b->lock);
    return t;
}

/* Count the shown events of a job and mark the metadata they use. */
static int count_job(void *arg, size_t j)
{
    struct builder *b = arg;
    struct line_job *job = &b->jobs[j];
    struct plane_state *ps = &b->planes[job->plane];
    const struct xp_line *ln;
    uint32_t ei, n = 0;

    if (job->derived) {
        job->count = job->end - job->first;
        return 0;
    }
    ln = &ps->pl->lines[job->line];

    for (ei = job->first; ei < job->end; ei++) {
        struct meta_info *info = &ps->meta[ln->events[ei].meta];
        if (info->internal)
            continue;
        n++;
        if (!__atomic_load_n(&info->used, __ATOMIC_RELAXED))
            __atomic_store_n(&info->used, 1, __ATOMIC_RELAXED);
    }
    job->count = n;
    return 0;
}

/* Interned names of a derived job, by text pointer (the derived events
 * share their name strings): a small direct-mapped cache. */
#define NAME_CACHE 4096 /* holds every distinct name of typical lines */

struct name_cache {
    const char *text[NAME_CACHE]; /* cached pointer, NULL = empty */
    uint32_t id[NAME_CACHE];      /* its string id */
};

static uint32_t cache_slot(const char *p)
{
    uintptr_t x = (uintptr_t)p;

    return (uint32_t)((x >> 3) ^ (x >> 11)) & (NAME_CACHE - 1);
}

/* The string id of text (interned under the lock on a miss); 0 = no memory. */
static uint32_t cached_str(struct builder *b, struct name_cache *c, const char *text)
{
    uint32_t s = cache_slot(text);

    if (c->text[s] != text) {
        uint32_t id = locked_str(b, text, strlen(text));
        if (id == 0)
            return 0;
        c->text[s] = text;
        c->id[s] = id;
    }
    return c->id[s];
}

/* Record the "@@" frame of a derived event's full name, once per distinct
 * name (call with the lock held). */
static int derived_frame(struct builder *b, const char *name, size_t len)
{
    uint32_t full = tv_str(b->h, name, len);

    if (full == 0)
        return -ENOMEM;
    if (full >= b->nframe_done) {
        uint32_t n = full + 1 > 2 * b->nframe_done ? full + 1 : 2 * b->nframe_done;
        uint8_t *d = realloc(b->frame_done, n);
        if (d == NULL)
            return -ENOMEM;
        memset(d + b->nframe_done, 0, n - b->nframe_done);
        b->frame_done = d;
        b->nframe_done = n;
    }
    if (!b->frame_done[full]) {
        if (tv_add_frame(b->h, name, len) != 0)
            return -ENOMEM;
        b->frame_done[full] = 1;
    }
    return 0;
}

/* Add the events of a run of one derived line into its slots. */
static int fill_derived(struct builder *b, const struct line_job *job)
{
    const struct dv_line *dl = &b->src->dv->lines[job->line];
    uint32_t base = xsrc_derived_base(b->src, job->line), k;
    struct name_cache *names = calloc(1, sizeof(*names));
    struct name_cache *framed = calloc(1, sizeof(*framed));
    int rc = 0;

    if (names == NULL || framed == NULL) {
        free(names);
        free(framed);
        return -ENOMEM;
    }
    for (k = job->first; k < job->end && rc == 0; k++) {
        const struct dv_event *de = &dl->ev[k];
        struct tv_event *te = &b->out[job->out + (k - job->first)];
        const char *shown, *step_name = derived_step_name(dl, k);
        memset(te, 0, sizeof(*te));
        te->ts = de->ts;
        te->dur = de->dur;
        te->track = (uint32_t)job->track;
        te->src = base + k;
        if (step_name != NULL && step_name[0] != '\0')
            shown = step_name;
        else
            shown = de->display != 0 ? derived_display(dl, k) : de->name;
        te->name = cached_str(b, names, shown);
        if (te->name == 0) {
            rc = -ENOMEM;
            break;
        }
        if (de->display != 0 && framed->text[cache_slot(de->name)] != de->name) {
            size_t len = strlen(de->name);
            if (len >= ARG_INTERN_MIN) {
                pthread_mutex_lock(&b->lock);
                rc = derived_frame(b, de->name, len);
                pthread_mutex_unlock(&b->lock);
            }
            framed->text[cache_slot(de->name)] = de->name;
        }
    }
    free(names);
    free(framed);
    /* The index holds the times of the line's events once its last job is
     * done: give their half of the line back now. */
    if (__atomic_sub_fetch(&b->dv_jobs_left[job->line], 1, __ATOMIC_ACQ_REL) == 0)
        derived_compact_line(&b->src->dv->lines[job->line]);
    return rc;
}

/* Add the events of one job into its slots (runs on several threads). */
static int fill_job(void *arg, size_t j)
{
    struct builder *b = arg;
    const struct line_job *job = &b->jobs[j];
    const struct plane_state *ps = &b->planes[job->plane];
    const struct xp_line *ln;
    uint32_t base, ei, slot = job->out, chan_name = 0;
    int64_t chan_track = -1;

    if (job->derived)
        return fill_derived(b, job);
    ln = &ps->pl->lines[job->line];
    base = xsrc_line_base(b->src, ps->index, job->line);

    for (ei = job->first; ei < job->end; ei++) {
        const struct xp_event *ev = &ln->events[ei];
        const struct meta_info *info = &ps->meta[ev->meta];
        struct tv_event *te;
        struct special sp;
        const char *root_name;
        int64_t track = job->track;
        int32_t group;

        if (info->internal)
            continue;
        te = &b->out[slot];
        memset(te, 0, sizeof(*te));
        if (event_specials(b, ps, job->line, ei, info, &sp, &group) != 0)
            return -ENOMEM;
        te->ts = (uint64_t)xp_event_start_ps(ln, ev);
        te->dur = (uint64_t)ev->duration_ps;
        te->src = base + ei;
        te->name = info->name;
        b->h->groups[te->src] = group;
        root_name = b->preprocess ? root_step_name(b, ps->index, job->line, ei, group) : NULL;
        if (root_name != NULL && root_name[0] != '\0')
            te->name = locked_str(b, root_name, strlen(root_name));
        else if (sp.step_name != NULL && sp.step_len > 0)
            te->name = locked_str(b, sp.step_name, sp.step_len);
        if (te->name == 0)
            return -ENOMEM;
        if (job->counter || (sp.has_flow && sp.is_async)) {
            if (chan_track < 0 || chan_name != te->name) {
                chan_name = te->name;
                chan_track = locked_channel(b, ps->pid, te->name);
                if (chan_track < 0)
                    return -ENOMEM;
            }
        }
        if (job->counter) {
            te->flags = TV_EV_COUNTER;
            te->dur = 0;
            track = chan_track;
        } else if (sp.has_flow) {
            b->h->flows[te->src] =
                tv_flow_pack(sp.flow >> 2, flow_type_of(sp.flow), (unsigned)(sp.flow >> 58));
            te->has_flow = 1;
            if (sp.is_async) {
                te->flags = TV_EV_ASYNC;
                track = chan_track;
            }
        }
        te->track = (uint32_t)track;
        slot++;
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

/* Append a job (grown by doubling). */
static int push_job(struct builder *b, uint32_t *cap, const struct line_job *job)
{
    if (b->njobs == *cap) {
        uint32_t n = *cap ? *cap * 2 : 64;
        struct line_job *v = realloc(b->jobs, n * sizeof(*v));
        if (v == NULL)
            return -ENOMEM;
        b->jobs = v;
        *cap = n;
    }
    b->jobs[b->njobs++] = *job;
    return 0;
}

/* Queue job over events [0, n) in runs of XP_SPLIT events. */
static int push_runs(struct builder *b, uint32_t *cap, struct line_job *job, uint32_t n)
{
    uint32_t first;

    for (first = 0; first < n; first += XP_SPLIT) {
        job->first = first;
        job->end = n - first > XP_SPLIT ? first + XP_SPLIT : n;
        if (push_job(b, cap, job) != 0)
            return -ENOMEM;
    }
    return 0;
}

/* Declare one shown plane (process, threads, thread tracks) and queue its
 * file lines as jobs. *shown is set when the plane has something to show. */
static int declare_plane(struct builder *b, const struct shown_plane *sp, uint32_t *jobs_cap,
                         int *shown)
{
    const struct xp_plane *pl = &b->xs->planes[sp->index];
    const struct derived *dv = b->src->dv;
    struct plane_state *ps = &b->planes[b->nplanes];
    char *pname;
    uint32_t l, nlines = 0, i;
    int dev, core, noncore, rc;

    *shown = 0;
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
    memset(ps, 0, sizeof(*ps));
    ps->pl = pl;
    ps->index = sp->index;
    ps->pid = sp->pid;
    ps->is_host = starts_with(pl->name, "/host:CPU");
    b->nplanes++;
    *shown = 1;
    ps->meta = calloc(pl->nemeta ? pl->nemeta : 1, sizeof(*ps->meta));
    if (ps->meta == NULL)
        return -ENOMEM;
    for (i = 0; i < pl->nemeta; i++)
        ps->meta[i].internal = (uint8_t)tv_is_internal_event(pl->emeta[i].name);
    rc = roles_init(&ps->roles, pl);
    if (rc != 0)
        return rc;
    for (l = 0; l < pl->nlines; l++) {
        const struct xp_line *ln = &pl->lines[l];
        struct line_job job;
        memset(&job, 0, sizeof(job));
        job.plane = b->nplanes - 1;
        job.line = l;
        job.counter = strcmp(ln->name, "_counters_") == 0;
        job.tid = (uint32_t)line_display_id(b, sp->index, l);
        job.track = -1;
        if (ln->nevents == 0 || starts_with(ln->name, "counters_"))
            continue;
        if (!job.counter) {
            const char *shown_name = ln->display_name[0] != '\0' ? ln->display_name : ln->name;
            uint32_t name = tv_cstr(b->h, shown_name);
            if (name == 0 || tv_add_resource(b->h, sp->pid, job.tid, name) != 0)
                return -ENOMEM;
            job.track = tv_track_thread(b->h, sp->pid, job.tid);
            if (job.track < 0)
                return -ENOMEM;
        }
        if (push_runs(b, jobs_cap, &job, ln->nevents) != 0)
            return -ENOMEM;
    }
    for (l = 0; dv != NULL && l < dv->nlines; l++) {
        const struct dv_line *dl = &dv->lines[l];
        struct line_job job;
        uint32_t name;
        if (dl->plane != sp->index)
            continue;
        memset(&job, 0, sizeof(job));
        job.derived = 1;
        job.plane = b->nplanes - 1;
        job.line = l;
        job.tid = (uint32_t)(dl->display_id != 0 ? dl->display_id : dl->id);
        name = tv_cstr(b->h, dl->name);
        job.track = tv_track_thread(b->h, sp->pid, job.tid);
        if (name == 0 || job.track < 0 || tv_add_resource(b->h, sp->pid, job.tid, name) != 0)
            return -ENOMEM;
        if (push_runs(b, jobs_cap, &job, dl->nev) != 0)
            return -ENOMEM;
    }
    return 0;
}

/* Where a job's events go: by track in output order (pid, channels, then
 * threads by tid), so that finishing moves few events. Counter lines go to
 * channels; async events found later move then. */
static uint64_t job_key(const struct builder *b, const struct line_job *job)
{
    uint64_t pid = b->planes[job->plane].pid;

    if (job->counter)
        return pid << 33;
    return (pid << 33) | (1ull << 32) | job->tid;
}

static int job_order_cmp(const void *x, const void *y, void *arg)
{
    const struct builder *b = arg;
    uint32_t i = *(const uint32_t *)x, j = *(const uint32_t *)y;
    uint64_t ki = job_key(b, &b->jobs[i]), kj = job_key(b, &b->jobs[j]);

    if (ki != kj)
        return ki < kj ? -1 : 1;
    return i < j ? -1 : i > j;
}

/* Assign each job its first slot; returns the number of events. */
static int place_jobs(struct builder *b, uint32_t *totalp)
{
    uint32_t *order = malloc((b->njobs ? b->njobs : 1) * sizeof(*order)), i, total = 0;

    if (order == NULL)
        return -ENOMEM;
    for (i = 0; i < b->njobs; i++)
        order[i] = i;
    qsort_r(order, b->njobs, sizeof(*order), job_order_cmp, b);
    for (i = 0; i < b->njobs; i++) {
        struct line_job *job = &b->jobs[order[i]];
        job->out = total;
        total += job->count;
    }
    free(order);
    *totalp = total;
    return 0;
}

/* Every shown plane's file and derived events: count them (in parallel),
 * name the metadata they use, then fill the slots (in parallel). */
static int add_planes(struct builder *b, const struct shown_plane *planes, uint32_t nplanes,
                      int nthreads)
{
    uint32_t jobs_cap = 0, i, m, total = 0;
    int rc = 0, shown;

    b->planes = calloc(nplanes ? nplanes : 1, sizeof(*b->planes));
    if (b->planes == NULL)
        return -ENOMEM;
    for (i = 0; i < nplanes && rc == 0; i++)
        rc = declare_plane(b, &planes[i], &jobs_cap, &shown);
    if (rc == 0)
        rc = parallel_for(b->njobs, nthreads, count_job, b);
    for (i = 0; i < b->nplanes && rc == 0; i++) {
        struct plane_state *ps = &b->planes[i];
        ps->specials = malloc((ps->pl->nemeta ? ps->pl->nemeta : 1) * sizeof(*ps->specials));
        if (ps->specials == NULL)
            return -ENOMEM;
        for (m = 0; m < ps->pl->nemeta && rc == 0; m++) {
            if (ps->meta[m].used)
                rc = meta_fill(b, ps, m);
        }
    }
    if (rc == 0)
        rc = place_jobs(b, &total);
    if (rc == 0 && b->src->dv != NULL) {
        b->dv_jobs_left =
            calloc(b->src->dv->nlines ? b->src->dv->nlines : 1, sizeof(*b->dv_jobs_left));
        if (b->dv_jobs_left == NULL)
            return -ENOMEM;
        for (i = 0; i < b->njobs; i++) {
            if (b->jobs[i].derived)
                b->dv_jobs_left[b->jobs[i].line]++;
        }
    }
    if (rc == 0 && total > 0) {
        /* Flows and group ids of file events, by source record. */
        rc = tv_alloc_events(b->h, total, &b->out);
        if (rc == 0)
            rc = tv_alloc_flows(b->h, b->src->nfile);
        if (rc == 0)
            rc = tv_alloc_groups(b->h, b->src->nfile);
        if (rc == 0)
            rc = parallel_for(b->njobs, nthreads, fill_job, b);
    }
    return rc;
}

static void builder_free(struct builder *b)
{
    uint32_t i;

    for (i = 0; i < b->nplanes; i++) {
        free(b->planes[i].meta);
        free(b->planes[i].specials);
        roles_free(&b->planes[i].roles);
    }
    free(b->planes);
    free(b->jobs);
    free(b->frame_done);
    free(b->dv_jobs_left);
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
    const struct hlo_modules *hlo = NULL;
    struct xspace *xs;
    struct shown_plane *planes = NULL;
    uint32_t nplanes = 0, i;
    uint64_t total = 0;
    int rc, nthreads = parallel_cores();

    memset(&b, 0, sizeof(b));
    pthread_mutex_init(&b.lock, NULL);
    rc = snapshot_xspace_decoded(snap, host, &xs, err);
    if (rc != 0)
        goto out;
    b.xs = xs;
    b.preprocess = !space_grouped(xs);
    if (b.preprocess) {
        rc = snapshot_groups(snap, host, &b.groups, err);
        if (rc != 0)
            goto out;
    }
    b.host_id = xs->nhostnames > 0 ? tj_std_hash(xs->hostnames[0], strlen(xs->hostnames[0])) : 0;
    b.h = tv_host_new(host);
    if (b.h == NULL) {
        rc = xp_err_set(err, -ENOMEM, "%s: out of memory", host);
        goto out;
    }
    rc = xsrc_new(xs, b.groups, b.preprocess, &b.src);
    if (rc == 0)
        b.src->host_id = b.host_id;
    if (rc == 0 && b.preprocess)
        rc = snapshot_hlo_modules(snap, host, &hlo, err);
    if (rc == 0 && b.preprocess)
        rc = derived_build(xs, b.groups, hlo, &b.src->dv, err);
    if (rc == 0)
        rc = xsrc_index_derived(b.src);
    if (rc == 0) {
        b.h->source = b.src;
        b.h->source_free = xsrc_free;
        b.h->args = xsrc_args;
        b.h->counter = xsrc_counter;
        b.h->group_of = xsrc_group;
        for (i = 0; i < xs->nplanes; i++)
            total += xs->planes[i].nevents;
        if (b.src->dv != NULL) {
            for (i = 0; i < b.src->dv->nlines; i++)
                total += b.src->dv->lines[i].nev;
        }
        rc = tv_reserve(b.h, total);
    } else if (b.src != NULL) {
        xsrc_free(b.src);
    }
    if (rc == 0)
        rc = select_planes(xs, &planes, &nplanes);
    if (rc == 0)
        rc = add_planes(&b, planes, nplanes, nthreads);
    free(planes);
    /* Lines with no run shown still hold their times: give their half back
     * too before finishing needs memory. */
    if (rc == 0)
        derived_compact(b.src->dv);
    if (rc == 0)
        rc = tv_finish(b.h, nthreads, err);
    else if (err->code == 0)
        xp_err_set(err, rc, "%s: out of memory while building the trace", host);
    if (rc != 0) {
        tv_host_free(b.h);
        goto out;
    }
    *hp = b.h;
out:
    builder_free(&b);
    pthread_mutex_destroy(&b.lock);
    return rc;
}
