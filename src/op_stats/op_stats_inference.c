/*
 * op_stats_inference.c - the inference requests of one host and their times
 * (XProf's GenerateInferenceStats, xprof/convert/inference_stats.cc, as far
 * as the overview page's latency table reads it).
 *
 * On the /host:CPU plane, after the step grouping:
 *   1. requests are the grouped events of one request type: BatchingSessionRun
 *      if the plane has one, else TfrtModelRun, else ServingModelRun, else
 *      SessionRun and RunGraph; then the user-defined roots (_r = -1, or
 *      _r = 1 on a "ModelServerRequest_..." event). A group that a ProcessBatch
 *      event holds is a batch, never a request;
 *   2. model ids come from the model_id stat of SessionRun / TfrtModelRun /
 *      ServingModelRun / user roots of the same group (a batching request
 *      takes its first batch's model, a user root without one takes its
 *      batches' model if they all agree);
 *   3. a request spans every host event of its group; it is stretched to the
 *      end of its first batch (XProf compares has_end_time_ps() booleans, so
 *      the "last" batch is the first one found);
 *   4. its events, each with a type of xprof/utils/event_span.h: host-to-device
 *      (WriteHbm, TransferH2DRequest, TransferPreprocessedH2DRequest, and the
 *      tpu::System::TransferToDevice issue/done pairs), device-to-host
 *      (ReadHbm, TransferD2HRequest, TransferFromDevice pairs) and device
 *      compute (the "XLA Modules" events of the TensorCore planes
 *      /device:TPU:<n>), each given to the request of its group and to every
 *      request that is a parent of its group (a batch's requests);
 *   5. made non-overlapping (the higher priority type wins), their durations
 *      summed per type.
 * XProf always passes DeviceType::kTpu here, so GPU profiles get transfer
 * events only (no GPU device time). The host-side breakdown (preprocess,
 * runtime, postprocess, batch formation) has lower priorities than the three
 * sums above, so leaving it out changes none of them.
 */
#include "op_stats_inference.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/sort.h"
#include "reader/tpu_planes.h"

enum inf_kind {
    K_NONE,
    K_SESSION_RUN,     /* SessionRun */
    K_RUN_GRAPH,       /* RunGraph */
    K_BATCHING_RUN,    /* BatchingSessionRun */
    K_TFRT_RUN,        /* TfrtModelRun */
    K_SERVING_RUN,     /* ServingModelRun */
    K_PROCESS_BATCH,   /* ProcessBatch, OrbaxServing::ProcessBatch */
    K_D2H,             /* ReadHbm, TransferD2HRequest */
    K_H2D,             /* WriteHbm, TransferH2DRequest, TransferPreprocessedH2DRequest */
    K_TO_DEVICE_ISSUE, /* tpu::System::TransferToDevice=>IssueEvent */
    K_TO_DEVICE_DONE,  /* ...=>Done */
    K_FROM_DEVICE_ISSUE,
    K_FROM_DEVICE_DONE,
};

static const struct {
    const char *name;
    enum inf_kind kind;
} kind_names[] = {
    {"SessionRun", K_SESSION_RUN},
    {"RunGraph", K_RUN_GRAPH},
    {"BatchingSessionRun", K_BATCHING_RUN},
    {"TfrtModelRun", K_TFRT_RUN},
    {"ServingModelRun", K_SERVING_RUN},
    {"ProcessBatch", K_PROCESS_BATCH},
    {"OrbaxServing::ProcessBatch", K_PROCESS_BATCH},
    {"ReadHbm", K_D2H},
    {"TransferD2HRequest", K_D2H},
    {"WriteHbm", K_H2D},
    {"TransferH2DRequest", K_H2D},
    {"TransferPreprocessedH2DRequest", K_H2D},
    {"tpu::System::TransferToDevice=>IssueEvent", K_TO_DEVICE_ISSUE},
    {"tpu::System::TransferToDevice=>IssueEvent=>Done", K_TO_DEVICE_DONE},
    {"tpu::System::TransferFromDevice=>IssueEvent", K_FROM_DEVICE_ISSUE},
    {"tpu::System::TransferFromDevice=>IssueEvent=>Done", K_FROM_DEVICE_DONE},
};

/* EventType values (priorities) of xprof/utils/event_span.h used here. */
enum { EV_H2D = 80, EV_D2H = 130, EV_COMPUTE_32 = 140 };

/* A host event that plays a role. */
struct hev {
    uint32_t line;     /* line index */
    uint32_t event;    /* event index */
    uint8_t kind;      /* enum inf_kind */
    uint8_t user_root; /* a user-defined root */
    int32_t gid;       /* group id, -1 if none */
};

/* An event given to a request. */
struct span {
    int64_t begin; /* ps */
    int64_t end;   /* ps */
    int type;      /* EventType */
};

/* RequestEvents. */
struct req {
    int64_t gid;         /* group id = request id */
    int32_t model_index; /* -1 none; 0 when XProf leaves it zero-initialised */
    int64_t begin;       /* request timespan, (0, 0) until an event is seen */
    int64_t end;
    struct span *spans; /* events */
    uint32_t nspans;
    uint32_t spans_cap;
};

/* Everything one host's computation holds. */
struct work {
    const struct xspace *xs;
    const struct xp_groups *g;
    const struct xp_plane *host;    /* /host:CPU */
    struct xp_group_link *by_child; /* g->links sorted by child */
    struct hev *hevs;               /* events that play a role, in plane order */
    uint32_t nhevs;
    struct req *reqs; /* in order of initialisation */
    uint32_t nreqs;
    uint32_t reqs_cap;
    struct idmap req_of;       /* gid -> request index */
    struct idmap batch_groups; /* gid of a ProcessBatch -> 0 */
    struct idmap model_of;     /* gid -> index into model_names */
    const char **model_names;  /* model id strings (arena) */
    uint32_t nmodel_names;
    uint32_t model_names_cap;
    struct inf_host *out; /* model ids go here */
    int64_t model_stat;   /* stat metadata id of "model_id" */
};

static enum inf_kind kind_of(const char *name)
{
    size_t i;

    for (i = 0; i < sizeof(kind_names) / sizeof(kind_names[0]); i++) {
        if (strcmp(kind_names[i].name, name) == 0)
            return kind_names[i].kind;
    }
    return K_NONE;
}

/* XEventVisitor::GetStat of a stat known by metadata id: the event's own
 * stats first, then its metadata's. */
static int stat_by_id(const struct xp_plane *p, const struct xp_line *l, const struct xp_event *e,
                      int64_t id, struct xp_stat *st)
{
    const struct xp_event_meta *m = xp_event_meta(p, e);
    uint32_t i;

    if (id == XP_NO_STAT)
        return 0;
    if (xp_event_own_stat(p, l, e, id, st))
        return 1;
    for (i = 0; i < m->nstats; i++) {
        if (m->stats[i].meta_id == id) {
            *st = m->stats[i];
            return 1;
        }
    }
    return 0;
}

static const struct xp_event *hev_event(const struct work *w, const struct hev *h,
                                        const struct xp_line **lp)
{
    *lp = &w->host->lines[h->line];
    return &(*lp)->events[h->event];
}

/* AssignIndexToModelId: -1 for "", else the id's index (added if new). */
static int assign_model(struct work *w, const char *id, int32_t *index)
{
    struct inf_host *o = w->out;
    uint32_t i;

    *index = -1;
    if (id == NULL || id[0] == '\0')
        return 0;
    for (i = 0; i < o->nmodel_ids; i++) {
        if (strcmp(o->model_ids[i], id) == 0) {
            *index = (int32_t)i;
            return 0;
        }
    }
    if (o->nmodel_ids == o->model_ids_cap) {
        uint32_t nc = o->model_ids_cap ? o->model_ids_cap * 2 : 4;
        const char **v = realloc(o->model_ids, nc * sizeof(*v));
        if (v == NULL)
            return -ENOMEM;
        o->model_ids = v;
        o->model_ids_cap = nc;
    }
    o->model_ids[o->nmodel_ids] = id; /* points into w->out->arena */
    *index = (int32_t)o->nmodel_ids++;
    return 0;
}

/* The model id string of a group from InitializeModelIdMap, or NULL. */
static const char *model_of(const struct work *w, int64_t gid)
{
    uint32_t v = idmap_get(&w->model_of, gid);

    return v != IDMAP_NONE ? w->model_names[v] : NULL;
}

/* GroupMetadata exists for gid (XProf's map holds every group it made). */
static int has_group(const struct work *w, int64_t gid)
{
    return w->g->has_metadata && gid >= 0 && gid < (int64_t)w->g->ngroups;
}

/* The children of gid: links[*first .. *first + count). */
static uint32_t children_of(const struct work *w, int64_t gid, uint32_t *first)
{
    const struct xp_group_link *v = w->g->links;
    uint32_t lo = 0, hi = w->g->nlinks, i;

    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (v[mid].parent < gid)
            lo = mid + 1;
        else
            hi = mid;
    }
    *first = lo;
    for (i = lo; i < w->g->nlinks && v[i].parent == gid; i++)
        ;
    return i - lo;
}

/* The parents of gid: by_child[*first .. *first + count). */
static uint32_t parents_of(const struct work *w, int64_t gid, uint32_t *first)
{
    const struct xp_group_link *v = w->by_child;
    uint32_t lo = 0, hi = w->g->nlinks, i;

    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (v[mid].child < gid)
            lo = mid + 1;
        else
            hi = mid;
    }
    *first = lo;
    for (i = lo; i < w->g->nlinks && v[i].child == gid; i++)
        ;
    return i - lo;
}

static int link_by_child_cmp(const void *x, const void *y)
{
    const struct xp_group_link *a = x, *b = y;

    if (a->child != b->child)
        return a->child < b->child ? -1 : 1;
    return a->parent < b->parent ? -1 : a->parent > b->parent;
}

/* Pass over the host plane: the events that play a role. */
static int collect(struct work *w)
{
    const struct xp_plane *p = w->host;
    uint8_t *kinds = malloc(p->nemeta ? p->nemeta : 1);
    size_t cap = 0;
    uint32_t i, l, e;
    int has_root_stat = p->stat_id[XS_IS_ROOT] != XP_NO_STAT;

    if (kinds == NULL)
        return -ENOMEM;
    for (i = 0; i < p->nemeta; i++)
        kinds[i] = (uint8_t)kind_of(p->emeta[i].name);
    for (l = 0; l < p->nlines; l++) {
        const struct xp_line *ln = &p->lines[l];
        for (e = 0; e < ln->nevents; e++) {
            const struct xp_event *ev = &ln->events[e];
            const struct xp_event_meta *m = xp_event_meta(p, ev);
            enum inf_kind k = (enum inf_kind)kinds[ev->meta];
            int user_root = 0;
            struct xp_stat st;
            if (has_root_stat && k != K_PROCESS_BATCH && k != K_BATCHING_RUN &&
                xp_event_stat(p, ln, ev, XS_IS_ROOT, &st)) {
                /* ProcessBatch and BatchingSessionRun hold _r = 2 / 1 after
                 * PreprocessXPlane: never user-defined roots */
                int64_t r = xp_stat_int(&st);
                user_root = r == -1 || (r == 1 && strncmp(m->name, "ModelServerRequest_", 19) == 0);
            }
            if (k == K_NONE && !user_root)
                continue;
            if (w->nhevs == cap) {
                size_t nc = cap ? cap * 2 : 64;
                struct hev *v = realloc(w->hevs, nc * sizeof(*v));
                if (v == NULL) {
                    free(kinds);
                    return -ENOMEM;
                }
                w->hevs = v;
                cap = nc;
            }
            w->hevs[w->nhevs++] =
                (struct hev){l, e, (uint8_t)k, (uint8_t)user_root,
                             xp_group_of(w->g, (uint32_t)(p - w->xs->planes), l, e)};
        }
    }
    free(kinds);
    return 0;
}

/* InitializeModelIdMap for one event. */
static int note_model(struct work *w, const struct hev *h)
{
    const struct xp_line *ln;
    const struct xp_event *ev = hev_event(w, h, &ln);
    struct xp_stat st;
    char buf[64];
    const char *s;
    char *copy;

    if (h->gid < 0 || !stat_by_id(w->host, ln, ev, w->model_stat, &st))
        return 0;
    if (st.kind == XP_STAT_STR || st.kind == XP_STAT_REF || st.kind == XP_STAT_BYTES)
        copy = arena_strndup(&w->out->arena, st.str, st.len);
    else {
        s = xp_stat_to_string(&st, buf, sizeof(buf));
        copy = arena_strndup(&w->out->arena, s, strlen(s));
    }
    if (copy == NULL)
        return -ENOMEM;
    if (w->nmodel_names == w->model_names_cap) {
        uint32_t nc = w->model_names_cap ? w->model_names_cap * 2 : 16;
        const char **v = realloc(w->model_names, nc * sizeof(*v));
        if (v == NULL)
            return -ENOMEM;
        w->model_names = v;
        w->model_names_cap = nc;
    }
    w->model_names[w->nmodel_names] = copy;
    return idmap_set(&w->model_of, h->gid, w->nmodel_names++);
}

/* InitializeRequestEvents. */
static int init_request(struct work *w, int64_t gid, int batching, int user_defined)
{
    struct req *r;
    uint32_t first, n, i;
    int rc;

    if (w->nreqs == w->reqs_cap) {
        uint32_t nc = w->reqs_cap ? w->reqs_cap * 2 : 16;
        struct req *v = realloc(w->reqs, nc * sizeof(*v));
        if (v == NULL)
            return -ENOMEM;
        w->reqs = v;
        w->reqs_cap = nc;
    }
    if ((rc = idmap_set(&w->req_of, gid, w->nreqs)) != 0)
        return rc;
    r = &w->reqs[w->nreqs++];
    memset(r, 0, sizeof(*r)); /* the map entry exists before any check */
    r->gid = gid;
    if (!has_group(w, gid))
        return 0;
    n = children_of(w, gid, &first);
    if (batching) {
        /* the first batch's model (children are a hash set in XProf: the
         * smallest id here) */
        if (n == 0)
            return 0;
        return assign_model(w, model_of(w, w->g->links[first].child), &r->model_index);
    }
    if (user_defined) {
        const char *id = model_of(w, gid);
        int32_t all = -1, idx;
        int same = 1;
        if (id != NULL)
            return assign_model(w, id, &r->model_index);
        if (n == 0)
            return 0;
        for (i = first; i < first + n; i++) {
            if ((rc = assign_model(w, model_of(w, w->g->links[i].child), &idx)) != 0)
                return rc;
            if (all == -1)
                all = idx;
            else if (idx != all)
                same = 0;
        }
        r->model_index = same ? all : -1;
        return 0;
    }
    return assign_model(w, model_of(w, gid), &r->model_index);
}

/* BuildRequestEventsMap's request detection. */
static int find_requests(struct work *w)
{
    int has[K_FROM_DEVICE_DONE + 1] = {0};
    enum inf_kind types[2];
    uint32_t ntypes, t, i;
    int batching, rc;
    static const enum inf_kind model_kinds[] = {K_SESSION_RUN, K_TFRT_RUN, K_SERVING_RUN};

    for (i = 0; i < w->nhevs; i++) {
        const struct hev *h = &w->hevs[i];
        has[h->kind] = 1;
        if (h->kind == K_PROCESS_BATCH && h->gid >= 0 &&
            (rc = idmap_set(&w->batch_groups, h->gid, 0)) != 0)
            return rc;
    }
    for (t = 0; t < 3; t++) {
        for (i = 0; i < w->nhevs; i++) {
            if (w->hevs[i].kind == model_kinds[t] && (rc = note_model(w, &w->hevs[i])) != 0)
                return rc;
        }
    }
    for (i = 0; i < w->nhevs; i++) {
        if (w->hevs[i].user_root && (rc = note_model(w, &w->hevs[i])) != 0)
            return rc;
    }
    batching = has[K_BATCHING_RUN];
    if (batching) {
        types[0] = K_BATCHING_RUN;
        ntypes = 1;
    } else if (has[K_TFRT_RUN]) {
        types[0] = K_TFRT_RUN;
        ntypes = 1;
    } else if (has[K_SERVING_RUN]) {
        types[0] = K_SERVING_RUN;
        ntypes = 1;
    } else {
        types[0] = K_SESSION_RUN;
        types[1] = K_RUN_GRAPH;
        ntypes = 2;
    }
    for (t = 0; t < ntypes; t++) {
        for (i = 0; i < w->nhevs; i++) {
            const struct hev *h = &w->hevs[i];
            if (h->kind != types[t] || h->gid < 0 ||
                idmap_get(&w->batch_groups, h->gid) != IDMAP_NONE ||
                idmap_get(&w->req_of, h->gid) != IDMAP_NONE)
                continue;
            if ((rc = init_request(w, h->gid, batching, 0)) != 0)
                return rc;
        }
    }
    for (i = 0; i < w->nhevs; i++) {
        const struct hev *h = &w->hevs[i];
        if (!h->user_root || h->gid < 0 || idmap_get(&w->batch_groups, h->gid) != IDMAP_NONE ||
            idmap_get(&w->req_of, h->gid) != IDMAP_NONE)
            continue;
        if ((rc = init_request(w, h->gid, 0, 1)) != 0)
            return rc;
    }
    return 0;
}

/* UpdateRequestTimespan: every host event of a request's group. */
static void request_timespans(struct work *w)
{
    const struct xp_plane *p = w->host;
    uint32_t pi = (uint32_t)(p - w->xs->planes), l, e;

    for (l = 0; l < p->nlines; l++) {
        const struct xp_line *ln = &p->lines[l];
        for (e = 0; e < ln->nevents; e++) {
            int32_t gid = xp_group_of(w->g, pi, l, e);
            uint32_t v;
            struct req *r;
            int64_t b, end;
            if (gid < 0 || (v = idmap_get(&w->req_of, gid)) == IDMAP_NONE)
                continue;
            r = &w->reqs[v];
            b = xp_event_start_ps(ln, &ln->events[e]);
            end = xp_event_end_ps(ln, &ln->events[e]);
            r->begin = r->begin == 0 ? b : (b < r->begin ? b : r->begin);
            if (end > r->end)
                r->end = end;
        }
    }
}

static int add_span(struct req *r, int type, int64_t begin, int64_t end)
{
    if (r->nspans == r->spans_cap) {
        uint32_t nc = r->spans_cap ? r->spans_cap * 2 : 8;
        struct span *v = realloc(r->spans, nc * sizeof(*v));
        if (v == NULL)
            return -ENOMEM;
        r->spans = v;
        r->spans_cap = nc;
    }
    r->spans[r->nspans++] = (struct span){begin, end, type};
    return 0;
}

/* UpdateRequestEvents: the request of gid and every request that is a parent
 * of gid. */
static int give(struct work *w, int64_t gid, int type, int64_t begin, int64_t end)
{
    uint32_t v = idmap_get(&w->req_of, gid), first, n, i;
    int rc;

    if (v != IDMAP_NONE && (rc = add_span(&w->reqs[v], type, begin, end)) != 0)
        return rc;
    if (!has_group(w, gid))
        return 0;
    n = parents_of(w, gid, &first);
    for (i = first; i < first + n; i++) {
        v = idmap_get(&w->req_of, w->by_child[i].parent);
        if (v != IDMAP_NONE && (rc = add_span(&w->reqs[v], type, begin, end)) != 0)
            return rc;
    }
    return 0;
}

/* UpdateTpuDataTransferEventsInTpuSystem for one direction: issue/done pairs
 * by consumer id (_c), the last issue of an id and the last later done. */
static int system_transfers(struct work *w, enum inf_kind issue, enum inf_kind done, int type)
{
    struct idmap start = {0}, stop = {0};
    uint32_t *order = NULL, norder = 0, order_cap = 0, i;
    int rc = 0;

    for (i = 0; i < w->nhevs && rc == 0; i++) {
        const struct hev *h = &w->hevs[i];
        const struct xp_line *ln;
        const struct xp_event *ev;
        struct xp_stat st;
        if ((h->kind != issue && h->kind != done) || h->gid < 0)
            continue;
        ev = hev_event(w, h, &ln);
        if (!xp_event_stat(w->host, ln, ev, XS_CONSUMER_ID, &st))
            continue;
        if (h->kind == issue) {
            if (idmap_get(&start, xp_stat_int(&st)) == IDMAP_NONE) {
                /* ids in order of their first issue event */
                if (norder == order_cap) {
                    uint32_t nc = order_cap ? order_cap * 2 : 16;
                    uint32_t *v = realloc(order, nc * sizeof(*v));
                    if (v == NULL) {
                        rc = -ENOMEM;
                        break;
                    }
                    order = v;
                    order_cap = nc;
                }
                order[norder++] = i;
            }
            rc = idmap_set(&start, xp_stat_int(&st), i);
        }
    }
    /* the done events, after every issue event is known */
    for (i = 0; i < w->nhevs && rc == 0; i++) {
        const struct hev *h = &w->hevs[i];
        const struct xp_line *ln, *sl;
        const struct xp_event *ev, *sev;
        struct xp_stat st;
        uint32_t s;
        if (h->kind != done || h->gid < 0)
            continue;
        ev = hev_event(w, h, &ln);
        if (!xp_event_stat(w->host, ln, ev, XS_CONSUMER_ID, &st) ||
            (s = idmap_get(&start, xp_stat_int(&st))) == IDMAP_NONE)
            continue;
        sev = hev_event(w, &w->hevs[s], &sl);
        if (xp_event_start_ps(sl, sev) < xp_event_start_ps(ln, ev))
            rc = idmap_set(&stop, xp_stat_int(&st), i);
    }
    for (i = 0; i < norder && rc == 0; i++) {
        const struct hev *sh = &w->hevs[order[i]];
        const struct xp_line *sl, *dl;
        const struct xp_event *sev = hev_event(w, sh, &sl), *dev;
        struct xp_stat st;
        uint32_t s, d;
        if (!xp_event_stat(w->host, sl, sev, XS_CONSUMER_ID, &st))
            continue;
        s = idmap_get(&start, xp_stat_int(&st));
        d = idmap_get(&stop, xp_stat_int(&st));
        if (s == IDMAP_NONE || d == IDMAP_NONE)
            continue;
        /* the id's last issue event and its last later done event */
        sev = hev_event(w, &w->hevs[s], &sl);
        dev = hev_event(w, &w->hevs[d], &dl);
        rc = give(w, w->hevs[s].gid, type, xp_event_start_ps(sl, sev), xp_event_end_ps(dl, dev));
    }
    free(order);
    idmap_free(&start);
    idmap_free(&stop);
    return rc;
}

/* BuildTPUDeviceEvents, the parts that make device and transfer times. */
static int device_events(struct work *w)
{
    uint32_t i, p, l, e;
    int rc;

    /* ReadHbm, TransferD2HRequest, WriteHbm, TransferH2DRequest, ... */
    for (i = 0; i < w->nhevs; i++) {
        const struct hev *h = &w->hevs[i];
        const struct xp_line *ln;
        const struct xp_event *ev;
        if ((h->kind != K_D2H && h->kind != K_H2D) || h->gid < 0)
            continue;
        ev = hev_event(w, h, &ln);
        if ((rc = give(w, h->gid, h->kind == K_D2H ? EV_D2H : EV_H2D, xp_event_start_ps(ln, ev),
                       xp_event_end_ps(ln, ev))) != 0)
            return rc;
    }
    if ((rc = system_transfers(w, K_TO_DEVICE_ISSUE, K_TO_DEVICE_DONE, EV_H2D)) != 0 ||
        (rc = system_transfers(w, K_FROM_DEVICE_ISSUE, K_FROM_DEVICE_DONE, EV_D2H)) != 0)
        return rc;
    for (p = 0; p < w->xs->nplanes; p++) {
        const struct xp_plane *pl = &w->xs->planes[p];
        if (tpu_plane_core(pl->name) != TPU_TENSOR_CORE)
            continue;
        for (l = 0; l < pl->nlines; l++) {
            const struct xp_line *ln = &pl->lines[l];
            if (strcmp(ln->name, "XLA Modules") != 0)
                continue;
            for (e = 0; e < ln->nevents; e++) {
                int32_t gid = xp_group_of(w->g, p, l, e);
                if (gid < 0)
                    continue;
                if ((rc = give(w, gid, EV_COMPUTE_32, xp_event_start_ps(ln, &ln->events[e]),
                               xp_event_end_ps(ln, &ln->events[e]))) != 0)
                    return rc;
            }
        }
    }
    return 0;
}

/* BuildBatchEventsMap's batch spans, then GenerateRequestAndBatchDelay's
 * stretch of a request to the end of its "last" batch. */
static int stretch_to_batches(struct work *w)
{
    struct idmap batch = {0};
    uint32_t i, first, n, k;
    int rc = 0;

    for (i = 0; i < w->nhevs && rc == 0; i++) {
        const struct hev *h = &w->hevs[i];
        if (h->kind == K_PROCESS_BATCH && h->gid >= 0 && has_group(w, h->gid))
            rc = idmap_set(&batch, h->gid, i); /* the last event of a group wins */
    }
    for (i = 0; i < w->nreqs && rc == 0; i++) {
        struct req *r = &w->reqs[i];
        if (!has_group(w, r->gid))
            continue;
        n = children_of(w, r->gid, &first);
        for (k = first; k < first + n; k++) {
            uint32_t v = idmap_get(&batch, w->g->links[k].child);
            const struct xp_line *ln;
            const struct xp_event *ev;
            int64_t end;
            if (v == IDMAP_NONE)
                continue;
            ev = hev_event(w, &w->hevs[v], &ln);
            end = xp_event_end_ps(ln, ev);
            if (r->end < end)
                r->end = end;
            break; /* only the first batch found counts */
        }
    }
    idmap_free(&batch);
    return rc;
}

struct bound {
    int64_t t;
    int slot;  /* 0 H2D, 1 D2H, 2 compute: ascending priority */
    int start; /* 1 start, 0 end */
};

/* GenerateEventBoundaries' order: time, then ends before starts, then the
 * higher priority first. */
static int bound_cmp(const void *x, const void *y)
{
    const struct bound *a = x, *b = y;

    if (a->t != b->t)
        return a->t < b->t ? -1 : 1;
    if (a->start != b->start)
        return a->start ? 1 : -1;
    return a->slot > b->slot ? -1 : a->slot < b->slot;
}

static int slot_of(int type)
{
    return type == EV_H2D ? 0 : type == EV_D2H ? 1 : 2;
}

/* ToNonOverlappedEvents, then the per-type sums of RequestEventsToDetails.
 * XProf's PriorityTracker is run as is: after each boundary the interval to
 * the next one belongs to the current maximum type, which drops only when an
 * event of that type ends with no other open (so a zero-length event, whose
 * end sorts before its start, keeps its type current until another event of
 * the type ends). The host-side events XProf also holds have lower
 * priorities than these three types and change none of their sums. */
static int request_times(const struct req *r, struct inf_request *d)
{
    struct bound *b;
    uint32_t n = r->nspans * 2, i;
    int64_t count[3] = {0, 0, 0};
    int cur = -1; /* UNKNOWN_TIME or a host-side type */

    if (r->nspans == 0)
        return 0;
    b = malloc(n * sizeof(*b));
    if (b == NULL)
        return -ENOMEM;
    for (i = 0; i < r->nspans; i++) {
        b[2 * i] = (struct bound){r->spans[i].begin, slot_of(r->spans[i].type), 1};
        b[2 * i + 1] = (struct bound){r->spans[i].end, slot_of(r->spans[i].type), 0};
    }
    xp_qsort(b, n, sizeof(*b), bound_cmp);
    for (i = 0; i + 1 < n; i++) {
        int k = b[i].slot;
        uint64_t len = (uint64_t)(b[i + 1].t - b[i].t);
        if (b[i].start) {
            count[k]++;
            if (k > cur)
                cur = k;
        } else {
            count[k]--;
            if (k == cur && count[k] == 0) {
                int j;
                for (j = k - 1; j >= 0 && count[j] <= 0; j--)
                    ;
                cur = j;
            }
        }
        if (cur == 2)
            d->device_time_ps += len;
        else if (cur == 1)
            d->read_from_device_time_ps += len;
        else if (cur == 0)
            d->write_to_device_time_ps += len;
    }
    free(b);
    return 0;
}

static int request_cmp(const void *x, const void *y)
{
    const struct inf_request *a = x, *b = y;
    uint64_t da = a->end_ps - a->start_ps, db = b->end_ps - b->start_ps;

    if (da != db)
        return da < db ? -1 : 1;
    if (a->start_ps != b->start_ps)
        return a->start_ps < b->start_ps ? -1 : 1;
    return a->request_id < b->request_id ? -1 : a->request_id > b->request_id;
}

/* BuildRequestDetails: requests with a duration, sorted by duration. */
static int request_details(struct work *w, int32_t host_id)
{
    struct inf_host *o = w->out;
    uint32_t i;
    int rc;

    o->requests = calloc(w->nreqs ? w->nreqs : 1, sizeof(*o->requests));
    if (o->requests == NULL)
        return -ENOMEM;
    for (i = 0; i < w->nreqs; i++) {
        const struct req *r = &w->reqs[i];
        struct inf_request *d = &o->requests[o->nrequests];
        if (r->end <= r->begin)
            continue;
        d->request_id = r->gid;
        d->model_index = r->model_index;
        d->host_id = host_id;
        d->start_ps = (uint64_t)r->begin;
        d->end_ps = (uint64_t)r->end;
        if ((rc = request_times(r, d)) != 0)
            return rc;
        o->nrequests++;
    }
    xp_qsort(o->requests, o->nrequests, sizeof(*o->requests), request_cmp);
    return 0;
}

static void work_free(struct work *w)
{
    uint32_t i;

    for (i = 0; i < w->nreqs; i++)
        free(w->reqs[i].spans);
    free(w->reqs);
    free(w->hevs);
    free(w->by_child);
    free(w->model_names);
    idmap_free(&w->req_of);
    idmap_free(&w->batch_groups);
    idmap_free(&w->model_of);
}

void inf_host_free(struct inf_host *h)
{
    if (h == NULL)
        return;
    free(h->model_ids);
    free(h->requests);
    arena_free(&h->arena);
    memset(h, 0, sizeof(*h));
}

int inference_host_stats(const struct xspace *xs, const struct xp_groups *g, int32_t host_id,
                         struct inf_host *out)
{
    struct work w;
    int rc;

    memset(out, 0, sizeof(*out));
    arena_init(&out->arena);
    memset(&w, 0, sizeof(w));
    w.xs = xs;
    w.g = g;
    w.out = out;
    w.host = xspace_find_plane(xs, "/host:CPU");
    if (w.host == NULL)
        return 0;
    w.model_stat = xp_plane_stat_id_by_name(w.host, "model_id");
    if (g->nlinks > 0) {
        w.by_child = malloc(g->nlinks * sizeof(*w.by_child));
        if (w.by_child == NULL)
            return -ENOMEM;
        memcpy(w.by_child, g->links, g->nlinks * sizeof(*w.by_child));
        xp_qsort(w.by_child, g->nlinks, sizeof(*w.by_child), link_by_child_cmp);
    }
    rc = collect(&w);
    if (rc == 0)
        rc = find_requests(&w);
    if (rc == 0 && w.nreqs > 0) {
        request_timespans(&w);
        rc = device_events(&w);
        if (rc == 0)
            rc = stretch_to_batches(&w);
    }
    if (rc == 0)
        rc = request_details(&w, host_id);
    work_free(&w);
    if (rc != 0)
        inf_host_free(out);
    return rc;
}
