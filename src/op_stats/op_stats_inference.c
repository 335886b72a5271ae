/*
 * op_stats_inference.c - the inference requests and batches of one host and
 * their times (XProf's GenerateInferenceStats, xprof/convert/inference_stats.cc).
 *
 * On the /host:CPU plane, after the step grouping:
 *   1. requests are the grouped events of one request type: BatchingSessionRun
 *      if the plane has one, else TfrtModelRun, else ServingModelRun, else
 *      SessionRun and RunGraph; then the user-defined roots (_r = -1, or
 *      _r = 1 on a "ModelServerRequest_..." event). A group that a ProcessBatch
 *      event holds is a batch, never a request; a request's related batch ids
 *      are its child groups;
 *   2. model ids come from the model_id stat of SessionRun / TfrtModelRun /
 *      ServingModelRun / user roots of the same group (a batching request
 *      takes its first batch's model, a user root without one takes its
 *      batches' model if they all agree);
 *   3. a request spans every host event of its group; it is stretched to the
 *      end of its first batch (XProf compares has_end_time_ps() booleans, so
 *      the "last" batch is the first one found), and its batching delay runs
 *      from its start to that batch's start; a batch's delay from its
 *      earliest request's start to its own;
 *   4. its events, each with a type of xprof/utils/event_span.h: host-to-device
 *      (WriteHbm, TransferH2DRequest, TransferPreprocessedH2DRequest, and the
 *      tpu::System::TransferToDevice issue/done pairs), device-to-host
 *      (ReadHbm, TransferD2HRequest, TransferFromDevice pairs) and device
 *      compute (the "XLA Modules" events of the TensorCore planes
 *      /device:TPU:<n>), each given to the request of its group, to every
 *      request that is a parent of its group (a batch's requests) and to the
 *      batch of its group; then the host breakdown made from timestamps
 *      (TPU execute, program launch, CompleteCallbacks, batch schedule,
 *      concat input): preprocessing, runtime, postprocessing, batch formation;
 *   5. made non-overlapping (the higher priority type wins), their durations
 *      summed per type, the gaps between them idle time;
 *   6. tensor patterns from Linearize / Delinearize / FastPath events with
 *      shape and layout stats, batch padding from ConcatInputTensors (and
 *      the other padding events), batching parameters from /host:tfstreamz.
 * XProf always passes DeviceType::kTpu here, so GPU profiles get transfer
 * events only (no GPU device time).
 */
#include "op_stats_inference.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/hash.h"
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
    K_SCHED_SPLIT, /* kScheduleEventTypes, in XProf's order */
    K_SCHED_NOSPLIT,
    K_SCHED_EAGER,
    K_SCHED_ASBS,
    K_EXEC_LOCAL, /* kTPUExecuteTypes, in XProf's order */
    K_EXEC_REMOTE,
    K_EXEC_INIT,
    K_EXEC_SYSTEM,
    K_LAUNCH,    /* DoEnqueueProgram, DoEnqueueContinuationProgram */
    K_CALLBACKS, /* CompleteCallbacks */
    K_CONCAT,    /* kPaddingEventTypes, in XProf's order */
    K_ORBAX_CONCAT,
    K_MERGE,
    K_BRAIN_RUN,
    K_TENSOR, /* Linearize, Delinearize, TransferBufferFromDevice-FastPath */
    K_COUNT
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
    {"ScheduleWithSplit", K_SCHED_SPLIT},
    {"ScheduleWithoutSplit", K_SCHED_NOSPLIT},
    {"ScheduleWithEagerSplit", K_SCHED_EAGER},
    {"ASBSQueue::Schedule", K_SCHED_ASBS},
    {"TPUPartitionedCallOp-ExecuteLocal", K_EXEC_LOCAL},
    {"TPUPartitionedCallOp-ExecuteRemote", K_EXEC_REMOTE},
    {"TPUPartitionedCallOp-InitializeVarOnTPU", K_EXEC_INIT},
    {"tpu::System::Execute", K_EXEC_SYSTEM},
    {"DoEnqueueProgram", K_LAUNCH},
    {"DoEnqueueContinuationProgram", K_LAUNCH},
    {"CompleteCallbacks", K_CALLBACKS},
    {"ConcatInputTensors", K_CONCAT},
    {"OrbaxServing::ConcatInputBuffers", K_ORBAX_CONCAT},
    {"MergeInputTensors", K_MERGE},
    {"BrainSessionRun", K_BRAIN_RUN},
    {"Linearize", K_TENSOR},
    {"Delinearize", K_TENSOR},
    {"TransferBufferFromDevice-FastPath", K_TENSOR},
};

/* EventType values (priorities) of xprof/utils/event_span.h used here. */
enum {
    EV_PREPROCESS = 20,
    EV_POSTPROCESS = 30,
    EV_BATCH_FORMATION = 40,
    EV_RUNTIME = 50,
    EV_H2D = 80,
    EV_D2H = 130,
    EV_COMPUTE_32 = 140
};

/* A host event that plays a role. */
struct hev {
    uint32_t line;     /* line index */
    uint32_t event;    /* event index */
    uint8_t kind;      /* enum inf_kind */
    uint8_t user_root; /* a user-defined root */
    int32_t gid;       /* group id, -1 if none */
};

/* An event given to a request or batch. */
struct span {
    int64_t begin; /* ps */
    int64_t end;   /* ps */
    int type;      /* EventType */
};

/* A growing list of spans. */
struct spans {
    struct span *v;
    uint32_t n;
    uint32_t cap;
};

/* RequestEvents::EventTimestamps of one group id; bit i of has says field
 * i is set (0 schedule, 1 concat input, 2 execute, 3 launch, 4 callback). */
struct stamp {
    int64_t gid;
    int64_t t[5];
    unsigned has;
};

enum { TS_SCHEDULE, TS_CONCAT, TS_EXECUTE, TS_LAUNCH, TS_CALLBACK };

/* A list of host event indexes (tensor events). */
struct hlist {
    uint32_t *v;
    uint32_t n;
    uint32_t cap;
};

/* RequestEvents. */
struct req {
    int64_t gid;         /* group id = request id */
    int32_t model_index; /* -1 none; 0 when XProf leaves it zero-initialised */
    int64_t begin;       /* request timespan, (0, 0) until an event is seen */
    int64_t end;
    struct spans spans;   /* events */
    struct stamp *stamps; /* timestamps by group id */
    uint32_t nstamps;
    uint32_t stamps_cap;
    int64_t delay;          /* batching_request_delay_ps */
    int32_t size;           /* batching_request_size */
    uint32_t related_first; /* related batch ids in out->related */
    uint32_t nrelated;
    struct hlist tensors; /* tensor events */
    uint32_t pattern;     /* 1 + tensor pattern index, 0 none */
    uint64_t tensor_ps;   /* their summed durations */
};

/* BatchEvents. */
struct bat {
    int64_t gid;         /* group id = batch id */
    uint32_t hev;        /* its (last) ProcessBatch event */
    int32_t model_index; /* BatchDetail's default 0 until a request is found */
    int32_t padding;
    int32_t size_after_padding;
    uint64_t delay;
    struct spans spans;   /* events */
    struct hlist tensors; /* tensor events */
    uint32_t pattern;     /* 1 + tensor pattern index, 0 none */
    uint64_t tensor_ps;
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
    struct bat *bats; /* in order of their first ProcessBatch event */
    uint32_t nbats;
    uint32_t bats_cap;
    struct idmap req_of;       /* gid -> request index */
    struct idmap bat_of;       /* gid -> batch index */
    struct idmap batch_groups; /* gid of a ProcessBatch -> 0 */
    struct idmap model_of;     /* gid -> index into model_names */
    const char **model_names;  /* model id strings (arena) */
    uint32_t nmodel_names;
    uint32_t model_names_cap;
    struct inf_host *out;  /* model ids go here */
    int64_t model_stat;    /* stat metadata id of "model_id" */
    int64_t size_stat;     /* "batching_input_task_size" */
    int64_t padding_stat;  /* "padding_amount" */
    int64_t bsap_stat;     /* "batch_size_after_padding" */
    int64_t shape_stat;    /* "shape" */
    int64_t layout_stat;   /* "layout" */
    uint32_t related_cap;  /* allocated out->related */
    uint32_t patterns_cap; /* allocated out->patterns */
};

/* Grow *v (of *cap entries of size bytes) to hold n + 1. Returns 0 or -ENOMEM. */
static int grow(void **v, uint32_t n, uint32_t *cap, size_t size)
{
    uint32_t nc;
    void *p;

    if (n < *cap)
        return 0;
    nc = *cap ? *cap * 2 : 8;
    p = realloc(*v, (size_t)nc * size);
    if (p == NULL)
        return -ENOMEM;
    *v = p;
    *cap = nc;
    return 0;
}

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
    /* related_batch_ids: every child group, ascending */
    r->related_first = w->out->nrelated;
    for (i = first; i < first + n; i++) {
        struct inf_host *o = w->out;
        if ((rc = grow((void **)&o->related, o->nrelated, &w->related_cap, sizeof(int64_t))) != 0)
            return rc;
        o->related[o->nrelated++] = w->g->links[i].child;
        r->nrelated++;
    }
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
    int has[K_COUNT] = {0};
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

static int add_span(struct spans *sp, int type, int64_t begin, int64_t end)
{
    if (grow((void **)&sp->v, sp->n, &sp->cap, sizeof(*sp->v)) != 0)
        return -ENOMEM;
    sp->v[sp->n++] = (struct span){begin, end, type};
    return 0;
}

/* UpdateRequestEvents for the request of gid and every request that is a
 * parent of gid (a batch's requests), then UpdateBatchEvents for the batch of
 * gid. */
static int give(struct work *w, int64_t gid, int type, int64_t begin, int64_t end)
{
    uint32_t v = idmap_get(&w->req_of, gid), first, n, i;
    int rc;

    if (v != IDMAP_NONE && (rc = add_span(&w->reqs[v].spans, type, begin, end)) != 0)
        return rc;
    if (has_group(w, gid)) {
        n = parents_of(w, gid, &first);
        for (i = first; i < first + n; i++) {
            v = idmap_get(&w->req_of, w->by_child[i].parent);
            if (v != IDMAP_NONE && (rc = add_span(&w->reqs[v].spans, type, begin, end)) != 0)
                return rc;
        }
    }
    v = idmap_get(&w->bat_of, gid);
    if (v != IDMAP_NONE)
        return add_span(&w->bats[v].spans, type, begin, end);
    return 0;
}

/* Set timestamp field f of group gid in request r (TS_LAUNCH keeps the
 * minimum, the others the last value). */
static int stamp_one(struct req *r, int64_t gid, int f, int64_t t)
{
    struct stamp *st = NULL;
    uint32_t i;

    for (i = 0; i < r->nstamps; i++) {
        if (r->stamps[i].gid == gid) {
            st = &r->stamps[i];
            break;
        }
    }
    if (st == NULL) {
        if (grow((void **)&r->stamps, r->nstamps, &r->stamps_cap, sizeof(*r->stamps)) != 0)
            return -ENOMEM;
        st = &r->stamps[r->nstamps++];
        memset(st, 0, sizeof(*st));
        st->gid = gid;
    }
    if (f == TS_LAUNCH && (st->has & (1u << f)) && st->t[f] <= t)
        return 0;
    st->t[f] = t;
    st->has |= 1u << f;
    return 0;
}

/* UpdateEventTimestamps: the request of gid and its parent requests, each
 * under gid. */
static int stamp(struct work *w, int64_t gid, int f, int64_t t)
{
    uint32_t v = idmap_get(&w->req_of, gid), first, n, i;
    int rc;

    if (v != IDMAP_NONE && (rc = stamp_one(&w->reqs[v], gid, f, t)) != 0)
        return rc;
    if (!has_group(w, gid))
        return 0;
    n = parents_of(w, gid, &first);
    for (i = first; i < first + n; i++) {
        v = idmap_get(&w->req_of, w->by_child[i].parent);
        if (v != IDMAP_NONE && (rc = stamp_one(&w->reqs[v], gid, f, t)) != 0)
            return rc;
    }
    return 0;
}

/* Stamp field f with the start of every grouped event of kinds k0..k1, kind
 * after kind (XProf's order of event types). */
static int stamp_kinds(struct work *w, enum inf_kind k0, enum inf_kind k1, int f)
{
    uint32_t i;
    int k, rc;

    for (k = k0; k <= (int)k1; k++) {
        for (i = 0; i < w->nhevs; i++) {
            const struct hev *h = &w->hevs[i];
            const struct xp_line *ln;
            const struct xp_event *ev;
            if (h->kind != k || h->gid < 0)
                continue;
            ev = hev_event(w, h, &ln);
            if ((rc = stamp(w, h->gid, f, xp_event_start_ps(ln, ev))) != 0)
                return rc;
        }
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
    /* the start of TPU runtime, its end, the start of host postprocessing */
    if ((rc = stamp_kinds(w, K_EXEC_LOCAL, K_EXEC_SYSTEM, TS_EXECUTE)) != 0 ||
        (rc = stamp_kinds(w, K_LAUNCH, K_LAUNCH, TS_LAUNCH)) != 0)
        return rc;
    return stamp_kinds(w, K_CALLBACKS, K_CALLBACKS, TS_CALLBACK);
}

/* The schedule events: the start of batch formation, and the request size of
 * the schedule event's own request (the last one with the stat wins). */
static int schedules(struct work *w)
{
    uint32_t i, v;
    int k, rc;
    struct xp_stat st;

    for (k = K_SCHED_SPLIT; k <= K_SCHED_ASBS; k++) {
        for (i = 0; i < w->nhevs; i++) {
            const struct hev *h = &w->hevs[i];
            const struct xp_line *ln;
            const struct xp_event *ev;
            if (h->kind != k || h->gid < 0)
                continue;
            ev = hev_event(w, h, &ln);
            if ((rc = stamp(w, h->gid, TS_SCHEDULE, xp_event_start_ps(ln, ev))) != 0)
                return rc;
            v = idmap_get(&w->req_of, h->gid);
            if (v != IDMAP_NONE && stat_by_id(w->host, ln, ev, w->size_stat, &st))
                w->reqs[v].size = (int32_t)xp_stat_int(&st);
        }
    }
    return 0;
}

/* BuildBatchEventsMap's batches: one per group id of a ProcessBatch event
 * with group metadata (its last event gives the span). */
static int find_batches(struct work *w)
{
    uint32_t i, v;
    int rc;

    for (i = 0; i < w->nhevs; i++) {
        const struct hev *h = &w->hevs[i];
        struct bat *b;
        if (h->kind != K_PROCESS_BATCH || h->gid < 0 || !has_group(w, h->gid))
            continue;
        v = idmap_get(&w->bat_of, h->gid);
        if (v != IDMAP_NONE) {
            w->bats[v].hev = i;
            continue;
        }
        if ((rc = grow((void **)&w->bats, w->nbats, &w->bats_cap, sizeof(*w->bats))) != 0 ||
            (rc = idmap_set(&w->bat_of, h->gid, w->nbats)) != 0)
            return rc;
        b = &w->bats[w->nbats++];
        memset(b, 0, sizeof(*b));
        b->gid = h->gid;
        b->hev = i;
    }
    return 0;
}

/* The padding events: the start of batch processing for requests, padding
 * and batch size for the batch of the event's group (both stats needed). */
static int paddings(struct work *w)
{
    uint32_t i, v;
    int k, rc;
    struct xp_stat pad, size;

    for (k = K_CONCAT; k <= K_BRAIN_RUN; k++) {
        for (i = 0; i < w->nhevs; i++) {
            const struct hev *h = &w->hevs[i];
            const struct xp_line *ln;
            const struct xp_event *ev;
            if (h->kind != k || h->gid < 0)
                continue;
            ev = hev_event(w, h, &ln);
            if ((rc = stamp(w, h->gid, TS_CONCAT, xp_event_start_ps(ln, ev))) != 0)
                return rc;
            v = idmap_get(&w->bat_of, h->gid);
            if (v == IDMAP_NONE || !stat_by_id(w->host, ln, ev, w->padding_stat, &pad) ||
                !stat_by_id(w->host, ln, ev, w->bsap_stat, &size))
                continue;
            w->bats[v].size_after_padding = (int32_t)xp_stat_int(&size);
            w->bats[v].padding = (int32_t)xp_stat_int(&pad);
        }
    }
    return 0;
}

static int64_t bat_start(const struct work *w, const struct bat *b)
{
    const struct xp_line *ln;
    const struct xp_event *ev = hev_event(w, &w->hevs[b->hev], &ln);

    return xp_event_start_ps(ln, ev);
}

static int64_t bat_end(const struct work *w, const struct bat *b)
{
    const struct xp_line *ln;
    const struct xp_event *ev = hev_event(w, &w->hevs[b->hev], &ln);

    return xp_event_end_ps(ln, ev);
}

/* A batch's model: its smallest related request's (parents, ascending). */
static void batch_models(struct work *w)
{
    uint32_t i, first, n, v;

    for (i = 0; i < w->nbats; i++) {
        struct bat *b = &w->bats[i];
        n = parents_of(w, b->gid, &first);
        if (n == 0)
            continue;
        v = idmap_get(&w->req_of, (int32_t)w->by_child[first].parent);
        if (v != IDMAP_NONE)
            b->model_index = w->reqs[v].model_index;
    }
}

/* GenerateRequestAndBatchDelay. XProf compares has_start_time_ps() and
 * has_end_time_ps() booleans, so a request's "first" and "last" batch are
 * both the first of its related ids that is a batch: its delay is measured
 * to that batch's start and the request stretched to that batch's end. */
static void delays(struct work *w)
{
    uint32_t i, k, first, n, v;

    for (i = 0; i < w->nreqs; i++) {
        struct req *r = &w->reqs[i];
        for (k = 0; k < r->nrelated; k++) {
            v = idmap_get(&w->bat_of, w->out->related[r->related_first + k]);
            if (v == IDMAP_NONE)
                continue;
            r->delay = bat_start(w, &w->bats[v]) - r->begin;
            if (r->end < bat_end(w, &w->bats[v]))
                r->end = bat_end(w, &w->bats[v]);
            break;
        }
    }
    for (i = 0; i < w->nbats; i++) {
        struct bat *b = &w->bats[i];
        const struct req *fr = NULL;
        n = parents_of(w, b->gid, &first);
        for (k = first; k < first + n; k++) {
            v = idmap_get(&w->req_of, w->by_child[k].parent);
            if (v != IDMAP_NONE && (fr == NULL || fr->begin > w->reqs[v].begin))
                fr = &w->reqs[v];
        }
        if (fr != NULL)
            b->delay = (uint64_t)(bat_start(w, b) - fr->begin);
    }
}

/* Timespan::FromEndPoints: an empty span at begin when end < begin. */
static int add_between(struct spans *sp, int type, int64_t begin, int64_t end)
{
    return add_span(sp, type, begin, end < begin ? begin : end);
}

static int stamp_cmp(const void *x, const void *y)
{
    const struct stamp *a = x, *b = y;

    return a->gid < b->gid ? -1 : a->gid > b->gid;
}

/* GenerateRequestDetailedBreakdown for one request: host runtime per group,
 * preprocessing, postprocessing and batch formation. Group ids are walked in
 * ascending order (XProf: hash order) where it matters, for the first of
 * several batch schedule events. */
static int breakdown(struct req *r)
{
    int64_t exec = 0, concat = 0, cb = 0, sched = 0, dev_end = 0;
    int has_exec = 0, has_concat = 0, has_cb = 0, has_sched = 0, rc;
    uint32_t i;

    xp_qsort(r->stamps, r->nstamps, sizeof(*r->stamps), stamp_cmp);
    for (i = 0; i < r->nstamps; i++) {
        const struct stamp *st = &r->stamps[i];
        if (st->has & (1u << TS_EXECUTE)) {
            if (!has_exec || st->t[TS_EXECUTE] < exec)
                exec = st->t[TS_EXECUTE];
            has_exec = 1;
            if ((st->has & (1u << TS_LAUNCH)) &&
                (rc = add_between(&r->spans, EV_RUNTIME, st->t[TS_EXECUTE], st->t[TS_LAUNCH])) != 0)
                return rc;
        }
        if ((st->has & (1u << TS_CONCAT)) && (!has_concat || st->t[TS_CONCAT] < concat)) {
            concat = st->t[TS_CONCAT];
            has_concat = 1;
        }
        if ((st->has & (1u << TS_CALLBACK)) && (!has_cb || st->t[TS_CALLBACK] > cb)) {
            cb = st->t[TS_CALLBACK];
            has_cb = 1;
        }
        if ((st->has & (1u << TS_SCHEDULE)) && !has_sched) {
            sched = st->t[TS_SCHEDULE];
            has_sched = 1;
        }
    }
    if (has_exec && (rc = add_between(&r->spans, EV_PREPROCESS, r->begin, exec)) != 0)
        return rc;
    if (has_cb) {
        if ((rc = add_between(&r->spans, EV_POSTPROCESS, cb, r->end)) != 0)
            return rc;
    } else {
        for (i = 0; i < r->spans.n; i++) {
            if (r->spans.v[i].type == EV_COMPUTE_32 && r->spans.v[i].end > dev_end)
                dev_end = r->spans.v[i].end;
        }
        if (dev_end != 0 && (rc = add_between(&r->spans, EV_POSTPROCESS, dev_end, r->end)) != 0)
            return rc;
    }
    if (has_sched && has_concat &&
        (rc = add_between(&r->spans, EV_BATCH_FORMATION, sched, concat)) != 0)
        return rc;
    return 0;
}

/* ---- tensor patterns (GenerateTensorDetails) ------------------------------ */

/* A sub pattern: "<name> <shape> <layout>". */
static char *sub_pattern(const struct work *w, uint32_t hi)
{
    const struct xp_line *ln;
    const struct xp_event *ev = hev_event(w, &w->hevs[hi], &ln);
    const char *name = xp_event_meta(w->host, ev)->name;
    struct xp_stat shape, layout;
    size_t ns, nl, nn = strlen(name);
    char *p;

    if (!stat_by_id(w->host, ln, ev, w->shape_stat, &shape) ||
        !stat_by_id(w->host, ln, ev, w->layout_stat, &layout))
        return NULL;
    /* StrOrRefValue: the text of a string or reference, else "" */
    ns = shape.kind == XP_STAT_STR || shape.kind == XP_STAT_REF ? shape.len : 0;
    nl = layout.kind == XP_STAT_STR || layout.kind == XP_STAT_REF ? layout.len : 0;
    p = malloc(nn + ns + nl + 3);
    if (p == NULL)
        return NULL;
    memcpy(p, name, nn);
    p[nn] = ' ';
    memcpy(p + nn + 1, shape.str, ns);
    p[nn + 1 + ns] = ' ';
    memcpy(p + nn + 2 + ns, layout.str, nl);
    p[nn + 2 + ns + nl] = '\0';
    return p;
}

static int str_cmp(const void *x, const void *y)
{
    return strcmp(*(char *const *)x, *(char *const *)y);
}

/* GenerateTensorPattern: the sorted sub patterns joined by "<br>", into the
 * host's pattern table; *pattern = 1 + its index, or 0 when an event lacks
 * a shape or layout. Returns 0 or -ENOMEM. */
static int tensor_pattern(struct work *w, struct idmap *seen, const struct hlist *tl,
                          uint32_t *pattern)
{
    struct inf_host *o = w->out;
    char **subs = calloc(tl->n ? tl->n : 1, sizeof(*subs));
    size_t len = 0, off = 0;
    uint32_t i, v;
    uint64_t h;
    char *joined = NULL;
    int rc = 0, complete = 1;

    *pattern = 0;
    if (subs == NULL)
        return -ENOMEM;
    for (i = 0; i < tl->n && complete; i++) {
        subs[i] = sub_pattern(w, tl->v[i]);
        complete = subs[i] != NULL;
        len += complete ? strlen(subs[i]) + 4 : 0;
    }
    /* a NULL is a missing stat (or out of memory, which leaves the pattern
     * out the same way) */
    if (!complete)
        goto out;
    xp_qsort(subs, tl->n, sizeof(*subs), str_cmp);
    joined = arena_alloc(&o->arena, len + 1);
    if (joined == NULL) {
        rc = -ENOMEM;
        goto out;
    }
    for (i = 0; i < tl->n; i++) {
        size_t n = strlen(subs[i]);
        if (i > 0) {
            memcpy(joined + off, "<br>", 4);
            off += 4;
        }
        memcpy(joined + off, subs[i], n);
        off += n;
    }
    joined[off] = '\0';
    h = fnv64_str(joined) & INT64_MAX;
    v = idmap_get(seen, (int64_t)h);
    if (v != IDMAP_NONE && strcmp(o->patterns[v], joined) == 0) {
        *pattern = v + 1;
        goto out;
    }
    for (v = 0; v < o->npatterns; v++) { /* a hash collision: look them all up */
        if (strcmp(o->patterns[v], joined) == 0) {
            *pattern = v + 1;
            goto out;
        }
    }
    if ((rc = grow((void **)&o->patterns, o->npatterns, &w->patterns_cap, sizeof(char *))) != 0)
        goto out;
    if (idmap_get(seen, (int64_t)h) == IDMAP_NONE &&
        (rc = idmap_set(seen, (int64_t)h, o->npatterns)) != 0)
        goto out;
    o->patterns[o->npatterns++] = joined;
    *pattern = o->npatterns;
out:
    for (i = 0; i < tl->n; i++)
        free(subs[i]);
    free(subs);
    return rc;
}

static int add_hev(struct hlist *l, uint32_t i)
{
    if (grow((void **)&l->v, l->n, &l->cap, sizeof(*l->v)) != 0)
        return -ENOMEM;
    l->v[l->n++] = i;
    return 0;
}

static uint64_t tensor_time(const struct work *w, const struct hlist *tl)
{
    uint64_t t = 0;
    uint32_t i;

    for (i = 0; i < tl->n; i++) {
        const struct xp_line *ln;
        t += (uint64_t)hev_event(w, &w->hevs[tl->v[i]], &ln)->duration_ps;
    }
    return t;
}

/* GenerateTensorDetails: Linearize, Delinearize and
 * TransferBufferFromDevice-FastPath events go to the request of their group,
 * else to its batch; each owner's events make one pattern. Patterns are
 * numbered requests first (in order of initialisation), then batches (XProf:
 * hash order), which changes only the order of the pattern table. */
static int tensor_details(struct work *w)
{
    struct idmap seen = {0};
    uint32_t i, v;
    int rc = 0;

    for (i = 0; i < w->nhevs && rc == 0; i++) {
        const struct hev *h = &w->hevs[i];
        if (h->kind != K_TENSOR || h->gid < 0)
            continue;
        if ((v = idmap_get(&w->req_of, h->gid)) != IDMAP_NONE)
            rc = add_hev(&w->reqs[v].tensors, i);
        else if ((v = idmap_get(&w->bat_of, h->gid)) != IDMAP_NONE)
            rc = add_hev(&w->bats[v].tensors, i);
    }
    for (i = 0; i < w->nreqs && rc == 0; i++) {
        struct req *r = &w->reqs[i];
        if (r->tensors.n == 0)
            continue;
        rc = tensor_pattern(w, &seen, &r->tensors, &r->pattern);
        r->tensor_ps = tensor_time(w, &r->tensors);
    }
    for (i = 0; i < w->nbats && rc == 0; i++) {
        struct bat *b = &w->bats[i];
        if (b->tensors.n == 0)
            continue;
        rc = tensor_pattern(w, &seen, &b->tensors, &b->pattern);
        b->tensor_ps = tensor_time(w, &b->tensors);
    }
    idmap_free(&seen);
    return rc;
}

/* ---- non-overlapped times (ToNonOverlappedEvents) ------------------------- */

#define NSLOTS 7 /* the EventTypes given to requests, in ascending priority */

static const int slot_type[NSLOTS] = {EV_PREPROCESS, EV_POSTPROCESS, EV_BATCH_FORMATION, EV_RUNTIME,
                                      EV_H2D,        EV_D2H,         EV_COMPUTE_32};

struct bound {
    int64_t t;
    int slot;  /* index into slot_type: ascending priority */
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
    int i;

    for (i = 0; i < NSLOTS - 1 && slot_type[i] != type; i++)
        ;
    return i;
}

/* ToNonOverlappedEvents, then the time of each type into sum[slot] and the
 * time of none (UNKNOWN_TIME: idle) into *idle. XProf's PriorityTracker is
 * run as is: after each boundary the interval to the next one belongs to
 * the current maximum type, which drops only when an event of that type
 * ends with no other open (so a zero-length event, whose end sorts before
 * its start, keeps its type current until another event of the type ends).
 * Returns 0 or -ENOMEM. */
static int non_overlapped(const struct spans *sp, uint64_t sum[NSLOTS], uint64_t *idle)
{
    struct bound *b;
    uint32_t n = sp->n * 2, i;
    int64_t count[NSLOTS] = {0};
    int cur = -1; /* UNKNOWN_TIME */

    memset(sum, 0, NSLOTS * sizeof(*sum));
    *idle = 0;
    if (sp->n == 0)
        return 0;
    b = malloc(n * sizeof(*b));
    if (b == NULL)
        return -ENOMEM;
    for (i = 0; i < sp->n; i++) {
        b[2 * i] = (struct bound){sp->v[i].begin, slot_of(sp->v[i].type), 1};
        b[2 * i + 1] = (struct bound){sp->v[i].end, slot_of(sp->v[i].type), 0};
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
        if (cur >= 0)
            sum[cur] += len;
        else
            *idle += len;
    }
    free(b);
    return 0;
}

/* RequestEventsToDetails' sums. */
static int request_times(const struct req *r, struct inf_request *d)
{
    uint64_t sum[NSLOTS], idle;
    int rc = non_overlapped(&r->spans, sum, &idle);

    if (rc != 0)
        return rc;
    d->host_preprocessing_ps = sum[0];
    d->host_postprocessing_ps = sum[1];
    d->host_batch_formation_ps = sum[2];
    d->host_runtime_ps = sum[3];
    d->write_to_device_time_ps = sum[4];
    d->read_from_device_time_ps = sum[5];
    d->device_time_ps = sum[6];
    d->idle_time_ps = (double)(int64_t)idle;
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

static int batch_cmp(const void *x, const void *y)
{
    const struct inf_batch *a = x, *b = y;
    uint64_t da = a->end_ps - a->start_ps, db = b->end_ps - b->start_ps;

    if (da != db)
        return da < db ? -1 : 1;
    if (a->start_ps != b->start_ps)
        return a->start_ps < b->start_ps ? -1 : 1;
    return a->batch_id < b->batch_id ? -1 : a->batch_id > b->batch_id;
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
        struct req *r = &w->reqs[i];
        struct inf_request *d = &o->requests[o->nrequests];
        if (r->end <= r->begin)
            continue;
        if ((rc = breakdown(r)) != 0)
            return rc;
        d->request_id = r->gid;
        d->model_index = r->model_index;
        d->host_id = host_id;
        d->start_ps = (uint64_t)r->begin;
        d->end_ps = (uint64_t)r->end;
        d->batching_request_delay_ps = (uint64_t)r->delay;
        d->batching_request_size = r->size;
        d->tensor_pattern = r->pattern;
        d->tensor_time_ps = r->tensor_ps;
        d->related_first = r->related_first;
        d->nrelated = r->nrelated;
        if ((rc = request_times(r, d)) != 0)
            return rc;
        o->nrequests++;
    }
    xp_qsort(o->requests, o->nrequests, sizeof(*o->requests), request_cmp);
    return 0;
}

/* BuildBatchDetails: every batch, sorted by duration. */
static int batch_details(struct work *w, int32_t host_id)
{
    struct inf_host *o = w->out;
    uint64_t sum[NSLOTS], idle;
    uint32_t i;
    int rc;

    o->batches = calloc(w->nbats ? w->nbats : 1, sizeof(*o->batches));
    if (o->batches == NULL)
        return -ENOMEM;
    for (i = 0; i < w->nbats; i++) {
        const struct bat *b = &w->bats[i];
        struct inf_batch *d = &o->batches[i];
        if ((rc = non_overlapped(&b->spans, sum, &idle)) != 0)
            return rc;
        d->batch_id = b->gid;
        d->model_index = b->model_index;
        d->host_id = host_id;
        d->start_ps = (uint64_t)bat_start(w, b);
        d->end_ps = (uint64_t)bat_end(w, b);
        d->batch_delay_ps = b->delay;
        d->device_time_ps = sum[6];
        d->padding_amount = b->padding;
        d->batch_size_after_padding = b->size_after_padding;
        d->tensor_pattern = b->pattern;
        d->tensor_time_ps = b->tensor_ps;
    }
    o->nbatches = w->nbats;
    xp_qsort(o->batches, o->nbatches, sizeof(*o->batches), batch_cmp);
    return 0;
}

static void work_free(struct work *w)
{
    uint32_t i;

    for (i = 0; i < w->nreqs; i++) {
        free(w->reqs[i].spans.v);
        free(w->reqs[i].stamps);
        free(w->reqs[i].tensors.v);
    }
    for (i = 0; i < w->nbats; i++) {
        free(w->bats[i].spans.v);
        free(w->bats[i].tensors.v);
    }
    free(w->reqs);
    free(w->bats);
    free(w->hevs);
    free(w->by_child);
    free(w->model_names);
    idmap_free(&w->req_of);
    idmap_free(&w->bat_of);
    idmap_free(&w->batch_groups);
    idmap_free(&w->model_of);
}

void inf_host_free(struct inf_host *h)
{
    if (h == NULL)
        return;
    free(h->model_ids);
    free(h->requests);
    free(h->batches);
    free(h->related);
    free(h->patterns);
    free(h->params);
    arena_free(&h->arena);
    memset(h, 0, sizeof(*h));
}

/* ---- batching parameters (ParseTfstreamzForBatchingParameter) ----------- */

/* ParseModelName: the model_name label of "param{k=v, k=v}" into *name,
 * *n; 1 if found. */
static int parse_model_name(const char *param, const char **name, size_t *n)
{
    const char *b = strchr(param, '{'), *e = strrchr(param, '}'), *p;

    if (b == NULL || e == NULL || e <= b)
        return 0;
    for (p = b + 1; p <= e;) {
        const char *end = p, *eq = NULL, *q;
        int neq = 0;
        while (end < e && !(end[0] == ',' && end + 1 < e && end[1] == ' '))
            end++;
        for (q = p; q < end; q++) {
            if (*q == '=') {
                neq++;
                eq = eq ? eq : q;
            }
        }
        if (neq == 1 && (size_t)(eq - p) == 10 && memcmp(p, "model_name", 10) == 0) {
            *name = eq + 1;
            *n = (size_t)(end - eq - 1);
            return 1;
        }
        p = end + 2;
    }
    return 0;
}

/* The parameters of model name[0..n) in *list, added if new. */
static struct inf_params *params_of(struct inf_host *o, uint32_t *cap, const char *name, size_t n)
{
    uint32_t i;
    struct inf_params *pr;

    for (i = 0; i < o->nparams; i++) {
        if (strlen(o->params[i].model_id) == n && memcmp(o->params[i].model_id, name, n) == 0)
            return &o->params[i];
    }
    if (grow((void **)&o->params, o->nparams, cap, sizeof(*o->params)) != 0)
        return NULL;
    pr = &o->params[o->nparams];
    memset(pr, 0, sizeof(*pr));
    pr->model_id = arena_strndup(&o->arena, name, n);
    pr->allowed_batch_sizes = "";
    if (pr->model_id == NULL)
        return NULL;
    o->nparams++;
    return pr;
}

/* One "/tensorflow/serving/batching/<param>{model_name=...}" stat. */
static int batching_stat(struct inf_host *o, uint32_t *cap, const struct xp_plane *p,
                         const struct xp_stat *st)
{
    static const char prefix[] = "/tensorflow/serving/batching/";
    const char *name = xp_stat_name(p, st), *detail, *model;
    struct inf_params *pr;
    size_t n;

    if (strncmp(name, prefix, sizeof(prefix) - 1) != 0)
        return 0;
    detail = name + sizeof(prefix) - 1;
    if (!parse_model_name(detail, &model, &n))
        return 0;
    if ((pr = params_of(o, cap, model, n)) == NULL)
        return -ENOMEM;
    if (strncmp(detail, "num_batch_threads", 17) == 0)
        pr->num_batch_threads = xp_stat_int(st);
    else if (strncmp(detail, "batch_timeout_micros", 20) == 0)
        pr->batch_timeout_micros = xp_stat_int(st);
    else if (strncmp(detail, "max_batch_size", 14) == 0)
        pr->max_batch_size = xp_stat_int(st);
    else if (strncmp(detail, "max_enqueued_batches", 20) == 0)
        pr->max_enqueued_batches = xp_stat_int(st);
    else if (strncmp(detail, "allowed_batch_sizes", 19) == 0) {
        int text = st->kind == XP_STAT_STR || st->kind == XP_STAT_REF;
        pr->allowed_batch_sizes = arena_strndup(&o->arena, text ? st->str : "", text ? st->len : 0);
        if (pr->allowed_batch_sizes == NULL)
            return -ENOMEM;
    }
    return 0;
}

/* The model id of a Session.Run id without a ":<version>" suffix, as its
 * length; 0 when the version is not a number (XProf logs and skips it). */
static size_t unversioned(const char *id)
{
    const char *c = strrchr(id, ':'), *q;

    if (c == NULL)
        return strlen(id);
    q = c + 1;
    if (*q == '+' || *q == '-')
        q++;
    if (*q == '\0')
        return 0;
    for (; *q; q++) {
        if (*q < '0' || *q > '9')
            return 0;
    }
    return (size_t)(c - id);
}

/* ParseTfstreamzForBatchingParameter: the last of the two snapshots of
 * /host:tfstreamz; parameters are kept per Session.Run model id (a TFstreamz
 * model name matches the ids that are it, or it plus ":<version>"). */
static int inference_tfstreamz(const struct xspace *xs, struct inf_host *o)
{
    const struct xp_plane *p = xspace_find_plane(xs, "/host:tfstreamz");
    struct inf_host tmp;
    const struct xp_event *ev;
    const struct xp_event_meta *m;
    struct xp_stat_iter it;
    struct xp_stat st;
    uint32_t cap = 0, i, j, ocap = 0;
    int rc = 0, r;

    if (p == NULL || p->nlines == 0 || p->lines[0].nevents != 2 || p->lines[0].events == NULL)
        return 0;
    memset(&tmp, 0, sizeof(tmp));
    arena_init(&tmp.arena);
    ev = &p->lines[0].events[1];
    xp_stat_iter_init(&it, p, &p->lines[0], ev);
    while (rc == 0 && (r = xp_stat_next(&it, &st)) == 1)
        rc = batching_stat(&tmp, &cap, p, &st);
    m = xp_event_meta(p, ev);
    for (i = 0; rc == 0 && i < m->nstats; i++)
        rc = batching_stat(&tmp, &cap, p, &m->stats[i]);
    /* each host model id whose unversioned name has parameters */
    for (i = 0; rc == 0 && i < o->nmodel_ids; i++) {
        size_t n = unversioned(o->model_ids[i]);
        for (j = 0; n > 0 && j < tmp.nparams; j++) {
            struct inf_params *d;
            if (strlen(tmp.params[j].model_id) != n ||
                memcmp(tmp.params[j].model_id, o->model_ids[i], n) != 0)
                continue;
            if (grow((void **)&o->params, o->nparams, &ocap, sizeof(*o->params)) != 0) {
                rc = -ENOMEM;
                break;
            }
            d = &o->params[o->nparams++];
            *d = tmp.params[j];
            d->model_id = o->model_ids[i];
            d->allowed_batch_sizes =
                arena_strndup(&o->arena, d->allowed_batch_sizes, strlen(d->allowed_batch_sizes));
            if (d->allowed_batch_sizes == NULL)
                rc = -ENOMEM;
            break;
        }
    }
    free(tmp.params);
    arena_free(&tmp.arena);
    return rc;
}

/* The steps of GenerateInferenceStats after the request detection. */
static int host_steps(struct work *w)
{
    int rc;

    request_timespans(w);
    if ((rc = schedules(w)) != 0 || (rc = find_batches(w)) != 0 || (rc = device_events(w)) != 0 ||
        (rc = paddings(w)) != 0)
        return rc;
    batch_models(w);
    delays(w);
    return tensor_details(w);
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
    w.size_stat = xp_plane_stat_id_by_name(w.host, "batching_input_task_size");
    w.padding_stat = xp_plane_stat_id_by_name(w.host, "padding_amount");
    w.bsap_stat = xp_plane_stat_id_by_name(w.host, "batch_size_after_padding");
    w.shape_stat = xp_plane_stat_id_by_name(w.host, "shape");
    w.layout_stat = xp_plane_stat_id_by_name(w.host, "layout");
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
    if (rc == 0)
        rc = host_steps(&w);
    if (rc == 0)
        rc = request_details(&w, host_id);
    if (rc == 0)
        rc = batch_details(&w, host_id);
    if (rc == 0)
        rc = inference_tfstreamz(xs, out);
    work_free(&w);
    if (rc != 0)
        inf_host_free(out);
    return rc;
}
