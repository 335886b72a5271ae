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
 *   2. roots (stat _r > 0, or TraceContext; or the first executor event of
 *      each TensorFlow loop iteration) are sorted and each one that is not
 *      under a grouped root of its level claims, breadth first, every
 *      descendant not yet grouped;
 *   3. on GPU planes ungrouped events inherit the latest group in time order
 *      and the Steps markers are the maximal same-group runs.
 *
 * A profile that already holds group_id stats (old TensorFlow profilers) is
 * read as is, with its own Steps line. The fast path: a profile without any
 * possible root (most JAX traces) is answered without decoding a stat.
 */
#include "sort.h"
#include "group.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arena.h"
#include "bigalloc.h"
#include "op_stats_tfop.h"
#include "parallel.h"
#include "wire.h"

/* Event types the grouping tells apart (HostEventType subset). */
enum ev_type {
    ET_NONE,            /* no type: may become a kernel launch / execute */
    ET_NAMED,           /* a host event type that plays no role here */
    ET_TRACE_CONTEXT,   /* legacy root */
    ET_FUNCTION_RUN,    /* implicit root */
    ET_SESSION_RUN,     /* implicit root */
    ET_RUN_GRAPH,       /* implicit root */
    ET_EXECUTOR,        /* ExecutorState::Process, implicit root */
    ET_EAGER_EXECUTE,   /* EagerExecute */
    ET_ITER_GET_NEXT,   /* IteratorGetNextOp::DoCompute */
    ET_ITER_GET_NEXT_O, /* IteratorGetNextAsOptionalOp::DoCompute */
    ET_TFDATA_RUN,      /* InstantiatedCapturedFunction::Run* */
    ET_LOOP_OP,         /* a TensorFlow loop op: no grouping at all */
    ET_TFOP_RUN,        /* a "name:Type" TensorFlow op */
    ET_KERNEL_LAUNCH,   /* host event with correlation_id */
    ET_KERNEL_EXECUTE,  /* device event with correlation_id */
};

static const struct {
    const char *name;
    enum ev_type type;
} known_types[] = {
    {"UnknownHostEventType", ET_NAMED},
    {"TraceContext", ET_TRACE_CONTEXT},
    {"SessionRun", ET_SESSION_RUN},
    {"FunctionRun", ET_FUNCTION_RUN},
    {"RunGraph", ET_RUN_GRAPH},
    {"RunGraphDone", ET_NAMED},
    {"TfOpRun", ET_NAMED},
    {"EagerExecute", ET_EAGER_EXECUTE},
    {"ExecutorState::Process", ET_EXECUTOR},
    {"ExecutorDoneCallback", ET_NAMED},
    {"MemoryAllocation", ET_NAMED},
    {"MemoryDeallocation", ET_NAMED},
    {"RemotePerfCounter", ET_NAMED},
    {"InstantiatedCapturedFunction::Run", ET_TFDATA_RUN},
    {"InstantiatedCapturedFunction::RunWithBorrowedArgs", ET_TFDATA_RUN},
    {"InstantiatedCapturedFunction::RunInstantiated", ET_TFDATA_RUN},
    {"InstantiatedCapturedFunction::RunAsync", ET_TFDATA_RUN},
    {"ParallelForOp", ET_LOOP_OP},
    {"ForeverOp", ET_LOOP_OP},
    {"WhileOp-EvalCond", ET_LOOP_OP},
    {"WhileOp-StartBody", ET_LOOP_OP},
    {"ForOp", ET_LOOP_OP},
    {"IteratorGetNextOp::DoCompute", ET_ITER_GET_NEXT},
    {"IteratorGetNextAsOptionalOp::DoCompute", ET_ITER_GET_NEXT_O},
    {"Iterator", ET_NAMED},
    {"Iterator::Prefetch::Generator", ET_NAMED},
    {"PrefetchProduce", ET_NAMED},
    {"PrefetchConsume", ET_NAMED},
    {"ParallelInterleaveProduce", ET_NAMED},
    {"ParallelInterleaveConsume", ET_NAMED},
    {"ParallelInterleaveInitializeInput", ET_NAMED},
    {"ParallelMapProduce", ET_NAMED},
    {"ParallelMapConsume", ET_NAMED},
    {"MapAndBatchProduce", ET_NAMED},
    {"MapAndBatchConsume", ET_NAMED},
    {"ParseExampleProduce", ET_NAMED},
    {"ParseExampleConsume", ET_NAMED},
    {"ParallelBatchProduce", ET_NAMED},
    {"ParallelBatchConsume", ET_NAMED},
    {"BatchingSessionRun", ET_NAMED},
    {"ProcessBatch", ET_NAMED},
    {"BrainSessionRun", ET_NAMED},
    {"ConcatInputTensors", ET_NAMED},
    {"MergeInputTensors", ET_NAMED},
    {"ScheduleWithoutSplit", ET_NAMED},
    {"ScheduleWithSplit", ET_NAMED},
    {"ScheduleWithEagerSplit", ET_NAMED},
    {"ASBSQueue::Schedule", ET_NAMED},
    {"TfrtModelRun", ET_NAMED},
    {"ServingModelRun", ET_NAMED},
    {"KernelLaunch", ET_NAMED},
    {"KernelExecute", ET_NAMED},
    {"EnqueueRequestLocked", ET_NAMED},
    {"RunProgramRequest", ET_NAMED},
    {"HostCallbackRequest", ET_NAMED},
    {"TransferH2DRequest", ET_NAMED},
    {"TransferPreprocessedH2DRequest", ET_NAMED},
    {"TransferD2HRequest", ET_NAMED},
    {"OnDeviceSendRequest", ET_NAMED},
    {"OnDeviceRecvRequest", ET_NAMED},
    {"OnDeviceSendRecvLocalRequest", ET_NAMED},
    {"CustomWait", ET_NAMED},
    {"OnDeviceSendRequestMulti", ET_NAMED},
    {"OnDeviceRecvRequestMulti", ET_NAMED},
    {"PjrtAsyncWait", ET_NAMED},
    {"DoEnqueueProgram", ET_NAMED},
    {"DoEnqueueContinuationProgram", ET_NAMED},
    {"WriteHbm", ET_NAMED},
    {"ReadHbm", ET_NAMED},
    {"TpuExecuteOp", ET_NAMED},
    {"CompleteCallbacks", ET_NAMED},
    {"TPUPartitionedCallOp-InitializeVarOnTPU", ET_NAMED},
    {"TPUPartitionedCallOp-ExecuteRemote", ET_NAMED},
    {"TPUPartitionedCallOp-ExecuteLocal", ET_NAMED},
    {"Linearize", ET_NAMED},
    {"Delinearize", ET_NAMED},
    {"TransferBufferFromDevice-FastPath", ET_NAMED},
    {"tpu::System::TransferToDevice=>IssueEvent", ET_NAMED},
    {"tpu::System::TransferToDevice=>IssueEvent=>Done", ET_NAMED},
    {"tpu::System::TransferFromDevice=>IssueEvent", ET_NAMED},
    {"tpu::System::TransferFromDevice=>IssueEvent=>Done", ET_NAMED},
    {"tpu::System::Execute", ET_NAMED},
};

/* The type of an event metadata name (TfXPlaneVisitor's type getters). */
static enum ev_type name_type(const char *name)
{
    size_t i;
    struct tfop op;

    for (i = 0; i < sizeof(known_types) / sizeof(known_types[0]); i++) {
        if (strcmp(known_types[i].name, name) == 0)
            return known_types[i].type;
    }
    tfop_parse(name, strlen(name), &op);
    if (op.category == TFOP_TENSORFLOW)
        return ET_TFOP_RUN;
    if (op.category == TFOP_TFDATA)
        return ET_NAMED; /* Iterator */
    return ET_NONE;
}

static int is_implicit_root(enum ev_type t)
{
    return t == ET_FUNCTION_RUN || t == ET_SESSION_RUN || t == ET_RUN_GRAPH || t == ET_EXECUTOR;
}

/* ---- growable arrays ---------------------------------------------------- */

struct edge {
    uint32_t parent; /* node */
    uint32_t child;  /* node */
};

/* A keyed node: (step id, iter) pairs, contexts. */
struct keyed {
    uint64_t k1;   /* first key */
    uint64_t k2;   /* second key */
    uint64_t k3;   /* third key (pid, or 0) */
    uint32_t tag;  /* role, pid presence ... */
    uint32_t node; /* node */
    uint32_t seq;  /* insertion order */
};

/* A kernel launch or execute: its correlation id. */
struct corr_node {
    uint64_t corr; /* correlation_id */
    uint32_t node; /* node */
};

/* A root and its level (stat _r, or 1 for TraceContext). */
struct root_node {
    uint32_t node; /* node */
    int32_t level; /* > 0 */
};

struct vec {
    void *v;     /* elements */
    size_t n;    /* used */
    size_t cap;  /* allocated */
    size_t size; /* element size */
};

static void *vec_push(struct vec *a)
{
    if (a->n == a->cap) {
        size_t cap = a->cap ? a->cap * 2 : 64;
        void *v = big_realloc(a->v, cap * a->size);
        if (v == NULL)
            return NULL;
        a->v = v;
        a->cap = cap;
    }
    return (char *)a->v + a->size * a->n++;
}

static void vec_free(struct vec *a)
{
    big_free(a->v);
    a->v = NULL;
    a->n = a->cap = 0;
}

/* Append src's elements to dst (same element size) and free src. */
static int vec_append(struct vec *dst, struct vec *src)
{
    if (src->n == 0) {
        vec_free(src);
        return 0;
    }
    if (dst->n == 0 && dst->cap == 0) {
        *dst = *src;
        memset(src, 0, sizeof(*src));
        src->size = dst->size;
        return 0;
    }
    if (dst->n + src->n > dst->cap) {
        size_t cap = dst->n + src->n;
        void *v = big_realloc(dst->v, cap * dst->size);
        if (v == NULL)
            return -ENOMEM;
        dst->v = v;
        dst->cap = cap;
    }
    memcpy((char *)dst->v + dst->n * dst->size, src->v, src->n * src->size);
    dst->n += src->n;
    vec_free(src);
    return 0;
}

/* ---- the forest ----------------------------------------------------------- */

/* Node flags. */
#define NF_ASYNC 1u   /* is_async: takes no part in nesting */
#define NF_XPARENT 2u /* has a parent across threads */
#define NF_XCHILD 4u  /* has a child across threads */
#define NF_ROOT 8u    /* has a root level > 0 */

#define NO_NODE UINT32_MAX

/*
 * Nesting on a line is a tree whose subtrees are contiguous node ranges: the
 * descendants of node x are the nodes after x, async ones skipped, up to the
 * first whose parent is before x (or none). So one parent per node replaces
 * the edge list; only the links across threads (loops, launches, contexts)
 * are kept as edges, sorted once by child (parents in XProf's edge order)
 * and once by parent.
 */
struct forest {
    const struct xspace *xs; /* the profile */
    uint32_t nlines;         /* lines of all planes */
    uint32_t *line_base;     /* [flat line] -> first node; [nlines] = node count */
    uint32_t *line_plane;    /* [flat line] -> plane index */
    uint32_t *line_index;    /* [flat line] -> line index in its plane */
    uint32_t *plane_first;   /* [plane] -> first flat line */
    uint8_t **mtype;         /* [plane][metadata] -> enum ev_type (not owned) */
    uint32_t n;              /* nodes */
    uint8_t *type;           /* [node] -> enum ev_type */
    uint8_t *flags;          /* [node] -> NF_* */
    uint32_t *nest_parent;   /* [node] -> enclosing event on its line, or NO_NODE */
    int32_t *gid;            /* [node] -> group id or -1 */
    uint8_t *eager;          /* [node] -> is_eager, or NULL */
    struct vec cross;        /* struct edge: links across threads, in XProf's order */
    struct edge *by_child;   /* cross sorted by child (stable) */
    struct edge *by_parent;  /* cross sorted by parent */
    struct vec *launches;    /* [flat line] struct corr_node: kernel launches */
    struct vec *executes;    /* [flat line] struct corr_node: kernel executes */
    struct vec executors;    /* struct keyed: (id, iter_num) of ExecutorState::Process */
    struct vec iterators;    /* struct keyed: (id, iter_num), tag = 0 / 1 (optional op) */
    struct vec contexts;     /* struct keyed: (type, id, pid), tag = role | pid flag */
    struct vec roots;        /* struct root_node, in node order */
    struct vec tfdata_ids;   /* int64_t step ids of tf.data captured functions */
    struct vec loop_roots;   /* uint32_t first events of TF loop iterations */
    int has_eager_execute;   /* an EagerExecute event metadata exists */
    /* search scratch */
    struct vec queue;   /* uint32_t search queue */
    uint32_t *vis_key;  /* visited set of an upward search: node + 1 */
    uint32_t *vis_gen;  /* generation of each slot */
    uint32_t vis_cap;   /* slots (power of two) */
    uint32_t vis_stamp; /* current generation */
    uint32_t vis_self;  /* start node visited but not queued, or NO_NODE */
};

/* Where node sits: plane, line and event. */
static void node_where(const struct forest *f, uint32_t node, uint32_t *p, uint32_t *l, uint32_t *e)
{
    uint32_t lo = 0, hi = f->nlines;

    while (hi - lo > 1) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (f->line_base[mid] <= node)
            lo = mid;
        else
            hi = mid;
    }
    /* skip empty lines that share the base */
    while (lo + 1 < f->nlines && f->line_base[lo + 1] <= node)
        lo++;
    *p = f->line_plane[lo];
    *l = f->line_index[lo];
    *e = node - f->line_base[lo];
}

static void node_span(const struct forest *f, uint32_t node, int64_t *begin, int64_t *dur)
{
    uint32_t p, l, e;
    const struct xp_line *ln;

    node_where(f, node, &p, &l, &e);
    ln = &f->xs->planes[p].lines[l];
    *begin = xp_event_start_ps(ln, &ln->events[e]);
    *dur = ln->events[e].duration_ps;
}

/* Timespan order: begin ascending, longer first. */
static int span_less(int64_t b1, int64_t d1, int64_t b2, int64_t d2)
{
    return b1 < b2 || (b1 == b2 && d1 > d2);
}

/* The stat with metadata id `id` among the event's own stats (GetStat). */
static int event_stat_by_id(const struct xp_plane *p, const struct xp_line *l,
                            const struct xp_event *e, int64_t id, struct xp_stat *st)
{
    struct xp_stat_iter it;

    if (id == XP_NO_STAT)
        return 0;
    xp_stat_iter_init(&it, p, l, e);
    while (xp_stat_next(&it, st) == 1) {
        if (st->meta_id == id)
            return 1;
    }
    return 0;
}

static int node_stat(const struct forest *f, uint32_t node, enum xp_stat_type t, struct xp_stat *st)
{
    uint32_t p, l, e;
    const struct xp_plane *pl;

    node_where(f, node, &p, &l, &e);
    pl = &f->xs->planes[p];
    return event_stat_by_id(pl, &pl->lines[l], &pl->lines[l].events[e], pl->stat_id[t], st);
}

/* Root level of a node (0 = not a root). */
static int32_t root_level(const struct forest *f, uint32_t node)
{
    const struct root_node *r = f->roots.v;
    size_t lo = 0, hi = f->roots.n;

    if (!(f->flags[node] & NF_ROOT))
        return 0;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (r[mid].node < node)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < f->roots.n && r[lo].node == node ? r[lo].level : 0;
}

static int add_cross(struct forest *f, uint32_t parent, uint32_t child)
{
    struct edge *ed = vec_push(&f->cross);

    if (ed == NULL)
        return -ENOMEM;
    ed->parent = parent;
    ed->child = child;
    return 0;
}

static int push_keyed(struct vec *v, uint64_t k1, uint64_t k2, uint64_t k3, uint32_t tag,
                      uint32_t node)
{
    struct keyed *k = vec_push(v);

    if (k == NULL)
        return -ENOMEM;
    k->k1 = k1;
    k->k2 = k2;
    k->k3 = k3;
    k->tag = tag;
    k->node = node;
    k->seq = 0; /* numbered once all lines are merged */
    return 0;
}

static int push_corr(struct vec *v, uint64_t corr, uint32_t node)
{
    struct corr_node *c = vec_push(v);

    if (c == NULL)
        return -ENOMEM;
    c->corr = corr;
    c->node = node;
    return 0;
}

static int keyed_cmp(const void *a, const void *b)
{
    const struct keyed *x = a, *y = b;

    if (x->k1 != y->k1)
        return x->k1 < y->k1 ? -1 : 1;
    if (x->k2 != y->k2)
        return x->k2 < y->k2 ? -1 : 1;
    if (x->k3 != y->k3)
        return x->k3 < y->k3 ? -1 : 1;
    if ((x->tag & 1) != (y->tag & 1)) /* pid flag groups apart */
        return (x->tag & 1) < (y->tag & 1) ? -1 : 1;
    return x->seq < y->seq ? -1 : x->seq > y->seq;
}
struct ev_stats {
    int has_pt, has_p, has_ct, has_c, has_r, has_id, has_iter, has_corr;
    int64_t pt, ct, r, id, iter;
    uint64_t p, c, corr;
    int is_async;
};

/* The stats grouping reads, in xp_pick slot order. */
static const enum xp_stat_type ev_stat_types[] = {
    XS_PRODUCER_TYPE, XS_PRODUCER_ID, XS_CONSUMER_TYPE, XS_CONSUMER_ID,   XS_IS_ROOT,
    XS_IS_ASYNC,      XS_STEP_ID,     XS_ITER_NUM,      XS_CORRELATION_ID};
#define NEV_STATS (sizeof(ev_stat_types) / sizeof(ev_stat_types[0]))

/* Numeric value of a stat as grouping reads it (double truncated, a ref as
 * its id); 0 for strings and bytes, which grouping ignores. */
static int numeric_stat(const struct xp_stat *st, int64_t *v)
{
    switch (st->kind) {
    case XP_STAT_DOUBLE:
        *v = (int64_t)st->v.d;
        return 1;
    case XP_STAT_UINT:
    case XP_STAT_REF:
        *v = (int64_t)st->v.u;
        return 1;
    case XP_STAT_INT:
        *v = st->v.i;
        return 1;
    default:
        return 0;
    }
}

static void read_ev_stats(const struct xp_pick *pk, const struct xp_line *ln,
                          const struct xp_event *ev, struct ev_stats *s)
{
    struct xp_stat st[NEV_STATS];
    uint32_t found = xp_pick_event(pk, ln, ev, st);
    int64_t v;

    memset(s, 0, sizeof(*s));
    if (found == 0)
        return;
    if ((found & 1u) && numeric_stat(&st[0], &v)) {
        s->has_pt = 1;
        s->pt = v;
    }
    if ((found & 2u) && numeric_stat(&st[1], &v)) {
        s->has_p = 1;
        s->p = (uint64_t)v;
    }
    if ((found & 4u) && numeric_stat(&st[2], &v)) {
        s->has_ct = 1;
        s->ct = v;
    }
    if ((found & 8u) && numeric_stat(&st[3], &v)) {
        s->has_c = 1;
        s->c = (uint64_t)v;
    }
    if ((found & 16u) && numeric_stat(&st[4], &v)) {
        s->has_r = 1;
        s->r = v;
    }
    if ((found & 32u) && numeric_stat(&st[5], &v))
        s->is_async = v != 0;
    if ((found & 64u) && numeric_stat(&st[6], &v)) {
        s->has_id = 1;
        s->id = v;
    }
    if ((found & 128u) && numeric_stat(&st[7], &v)) {
        s->has_iter = 1;
        s->iter = v;
    }
    if ((found & 256u) && numeric_stat(&st[8], &v)) {
        s->has_corr = 1;
        s->corr = (uint64_t)v;
    }
}

/* ---- pass 1: one line at a time, lines in parallel ------------------------ */

/* What one line contributes besides its per-node arrays. */
struct line_out {
    struct vec launches, executes, executors, iterators, contexts, roots, tfdata_ids;
};

/* Per plane facts the line pass reads. */
struct plane_facts {
    struct xp_pick pick; /* the stats grouping reads */
    int is_host;         /* "/host:CPU" */
    int any_stat;        /* some stat that matters for grouping is known here */
    int has_pid;         /* the plane has a process id */
    int64_t pid;         /* its value */
};

struct gather_job {
    struct forest *f;
    struct plane_facts *facts; /* [plane] */
    struct line_out *outs;     /* [flat line] */
    uint32_t *order;           /* flat lines, biggest first */
};

static void line_out_init(struct line_out *o)
{
    memset(o, 0, sizeof(*o));
    o->launches.size = o->executes.size = sizeof(struct corr_node);
    o->executors.size = o->iterators.size = o->contexts.size = sizeof(struct keyed);
    o->roots.size = sizeof(struct root_node);
    o->tfdata_ids.size = sizeof(int64_t);
}

static void line_out_free(struct line_out *o)
{
    vec_free(&o->launches);
    vec_free(&o->executes);
    vec_free(&o->executors);
    vec_free(&o->iterators);
    vec_free(&o->contexts);
    vec_free(&o->roots);
    vec_free(&o->tfdata_ids);
}

/* Types, root levels, nesting and the keyed lists of one line. */
static int gather_line(void *arg, size_t i)
{
    struct gather_job *job = arg;
    struct forest *f = job->f;
    uint32_t flat = job->order[i];
    uint32_t p = f->line_plane[flat];
    const struct xp_plane *pl = &f->xs->planes[p];
    const struct xp_line *ln = &pl->lines[f->line_index[flat]];
    const struct plane_facts *pf = &job->facts[p];
    const uint8_t *mtype = f->mtype[p];
    struct line_out *o = &job->outs[flat];
    uint32_t base = f->line_base[flat], e;
    uint32_t *stack;
    size_t depth = 0;
    uint64_t pid = pf->has_pid ? (uint64_t)pf->pid : 0;
    uint32_t pid_tag = pf->has_pid ? 1 : 0;

    if (ln->nevents == 0)
        return 0;
    stack = malloc(ln->nevents * sizeof(*stack));
    if (stack == NULL)
        return -ENOMEM;
    for (e = 0; e < ln->nevents; e++) {
        const struct xp_event *ev = &ln->events[e];
        uint32_t node = base + e;
        enum ev_type t = (enum ev_type)mtype[ev->meta];
        struct ev_stats s;
        int64_t b = xp_event_start_ps(ln, ev), end = b + ev->duration_ps;
        int32_t level = 0;
        int rc = 0;

        if (pf->any_stat)
            read_ev_stats(&pf->pick, ln, ev, &s);
        else
            memset(&s, 0, sizeof(s));
        if (t == ET_NONE && s.has_corr)
            t = pf->is_host ? ET_KERNEL_LAUNCH : ET_KERNEL_EXECUTE;
        f->type[node] = (uint8_t)t;
        f->nest_parent[node] = NO_NODE;
        f->gid[node] = -1;
        if (s.has_r)
            level = (int32_t)s.r;
        else if (t == ET_TRACE_CONTEXT)
            level = 1;
        if (level > 0) {
            struct root_node *r = vec_push(&o->roots);
            if (r == NULL) {
                rc = -ENOMEM;
            } else {
                r->node = node;
                r->level = level;
                f->flags[node] |= NF_ROOT;
            }
        }
        if (rc == 0 && s.has_pt && s.has_p)
            rc = push_keyed(&o->contexts, (uint64_t)s.pt, s.p, pid, pid_tag, node);
        if (rc == 0 && s.has_ct && s.has_c)
            rc = push_keyed(&o->contexts, (uint64_t)s.ct, s.c, pid, pid_tag | 2, node);
        if (rc == 0 && t == ET_EXECUTOR && s.has_id && s.has_iter)
            rc = push_keyed(&o->executors, (uint64_t)s.id, (uint64_t)s.iter, 0, 0, node);
        if (rc == 0 && (t == ET_ITER_GET_NEXT || t == ET_ITER_GET_NEXT_O) && s.has_id && s.has_iter)
            rc = push_keyed(&o->iterators, (uint64_t)s.id, (uint64_t)s.iter, 0,
                            t == ET_ITER_GET_NEXT_O, node);
        if (rc == 0 && t == ET_KERNEL_LAUNCH)
            rc = push_corr(&o->launches, s.corr, node);
        if (rc == 0 && t == ET_KERNEL_EXECUTE)
            rc = push_corr(&o->executes, s.corr, node);
        if (rc == 0 && t == ET_TFDATA_RUN && s.has_id) {
            int64_t *id = vec_push(&o->tfdata_ids);
            if (id == NULL)
                rc = -ENOMEM;
            else
                *id = s.id;
        }
        if (rc != 0) {
            free(stack);
            return rc;
        }
        if (s.is_async) {
            f->flags[node] |= NF_ASYNC;
            continue;
        }
        while (depth > 0) {
            uint32_t top = stack[depth - 1];
            const struct xp_event *te = &ln->events[top - base];
            int64_t tb = xp_event_start_ps(ln, te), tend = tb + te->duration_ps;
            if (tb <= b && end <= tend) {
                f->nest_parent[node] = top;
                break;
            }
            depth--;
        }
        stack[depth++] = node;
    }
    free(stack);
    return 0;
}

static const uint32_t *sort_nevents; /* qsort context; guarded by sort_lock */
static pthread_mutex_t sort_lock = PTHREAD_MUTEX_INITIALIZER;

static int bigger_line_first(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    uint32_t nx = sort_nevents[x + 1] - sort_nevents[x], ny = sort_nevents[y + 1] - sort_nevents[y];

    if (nx != ny)
        return nx > ny ? -1 : 1;
    return x < y ? -1 : x > y;
}

/* Pass 1 over every line, then the lists merged in line order (the order a
 * single pass would have made them in). */
static int gather(struct forest *f)
{
    const struct xspace *xs = f->xs;
    struct gather_job job;
    struct keyed *k;
    uint32_t p, i;
    size_t j;
    int rc = 0;

    job.f = f;
    job.facts = calloc(xs->nplanes ? xs->nplanes : 1, sizeof(*job.facts));
    job.outs = calloc(f->nlines ? f->nlines : 1, sizeof(*job.outs));
    job.order = malloc((f->nlines ? f->nlines : 1) * sizeof(*job.order));
    if (job.facts == NULL || job.outs == NULL || job.order == NULL) {
        rc = -ENOMEM;
        goto out;
    }
    for (p = 0; p < xs->nplanes; p++) {
        const struct xp_plane *pl = &xs->planes[p];
        struct xp_stat st;
        int64_t ids[NEV_STATS];
        size_t w;
        job.facts[p].is_host = strcmp(pl->name, "/host:CPU") == 0;
        for (w = 0; w < NEV_STATS; w++) {
            ids[w] = pl->stat_id[ev_stat_types[w]];
            job.facts[p].any_stat |= ids[w] != XP_NO_STAT;
        }
        if (xp_pick_init(&job.facts[p].pick, pl, ids, NEV_STATS, 1) != 0) {
            rc = -ENOMEM;
            goto out;
        }
        if (xp_plane_stat(pl, XS_PROCESS_ID, &st)) {
            job.facts[p].has_pid = 1;
            job.facts[p].pid = (int32_t)xp_stat_int(&st);
        }
        for (i = 0; i < pl->nemeta; i++) {
            if (f->mtype[p][i] == ET_EAGER_EXECUTE)
                f->has_eager_execute = 1;
        }
    }
    for (i = 0; i < f->nlines; i++) {
        line_out_init(&job.outs[i]);
        job.order[i] = i;
    }
    pthread_mutex_lock(&sort_lock);
    sort_nevents = f->line_base;
    xp_qsort(job.order, f->nlines, sizeof(*job.order), bigger_line_first);
    pthread_mutex_unlock(&sort_lock);
    if ((rc = parallel_for(f->nlines, 0, gather_line, &job)) != 0)
        goto out;
    for (i = 0; i < f->nlines && rc == 0; i++) {
        struct line_out *o = &job.outs[i];
        /* kernel lists stay per line (they are big: no copy) */
        f->launches[i] = o->launches;
        f->executes[i] = o->executes;
        memset(&o->launches, 0, sizeof(o->launches));
        memset(&o->executes, 0, sizeof(o->executes));
        if ((rc = vec_append(&f->executors, &o->executors)) != 0 ||
            (rc = vec_append(&f->iterators, &o->iterators)) != 0 ||
            (rc = vec_append(&f->contexts, &o->contexts)) != 0 ||
            (rc = vec_append(&f->roots, &o->roots)) != 0 ||
            (rc = vec_append(&f->tfdata_ids, &o->tfdata_ids)) != 0)
            break;
    }
    k = f->executors.v;
    for (j = 0; j < f->executors.n; j++)
        k[j].seq = (uint32_t)j;
    k = f->iterators.v;
    for (j = 0; j < f->iterators.n; j++)
        k[j].seq = (uint32_t)j;
    k = f->contexts.v;
    for (j = 0; j < f->contexts.n; j++)
        k[j].seq = (uint32_t)j;
out:
    if (job.outs != NULL) {
        for (i = 0; i < f->nlines; i++)
            line_out_free(&job.outs[i]);
    }
    free(job.outs);
    if (job.facts != NULL) {
        for (p = 0; p < xs->nplanes; p++)
            xp_pick_free(&job.facts[p].pick);
    }
    free(job.facts);
    free(job.order);
    return rc;
}

/* ---- links across threads --------------------------------------------------- */

static size_t hash_cap(size_t n)
{
    size_t cap = 16;

    while (cap < n * 2)
        cap *= 2;
    return cap;
}

/* Connect parents to children that share a key (ConnectInterThread); for a
 * key held by several parents the last inserted one wins. */
static int connect_keyed(struct forest *f, struct vec *parents, struct vec *children, int match_tag,
                         uint32_t tag)
{
    struct keyed *pv = parents->v, *cv = children->v;
    uint32_t *slot;
    size_t cap, i, mask;

    if (parents->n == 0 || children->n == 0)
        return 0;
    cap = hash_cap(parents->n);
    mask = cap - 1;
    slot = calloc(cap, sizeof(uint32_t));
    if (slot == NULL)
        return -ENOMEM;
    for (i = 0; i < parents->n; i++) {
        uint64_t h = (pv[i].k1 * 0x9e3779b97f4a7c15ULL) ^ (pv[i].k2 * 0xc2b2ae3d27d4eb4fULL);
        size_t s = (size_t)(h >> 17) & mask;
        while (slot[s] != 0) {
            struct keyed *o = &pv[slot[s] - 1];
            if (o->k1 == pv[i].k1 && o->k2 == pv[i].k2)
                break;
            s = (s + 1) & mask;
        }
        if (slot[s] == 0 || pv[slot[s] - 1].seq < pv[i].seq)
            slot[s] = (uint32_t)i + 1;
    }
    for (i = 0; i < children->n; i++) {
        uint64_t h = (cv[i].k1 * 0x9e3779b97f4a7c15ULL) ^ (cv[i].k2 * 0xc2b2ae3d27d4eb4fULL);
        size_t s = (size_t)(h >> 17) & mask;
        if (match_tag && cv[i].tag != tag)
            continue;
        while (slot[s] != 0) {
            struct keyed *o = &pv[slot[s] - 1];
            if (o->k1 == cv[i].k1 && o->k2 == cv[i].k2) {
                if (add_cross(f, o->node, cv[i].node) != 0) {
                    free(slot);
                    return -ENOMEM;
                }
                break;
            }
            s = (s + 1) & mask;
        }
    }
    free(slot);
    return 0;
}

static void free_kernel_lists(struct forest *f)
{
    uint32_t i;

    for (i = 0; i < f->nlines; i++) {
        if (f->launches != NULL)
            vec_free(&f->launches[i]);
        if (f->executes != NULL)
            vec_free(&f->executes[i]);
    }
}

/* KernelLaunch -> KernelExecute by correlation id; the last launch of an id
 * wins. Launches and executes are read line by line in line order (the order
 * one pass would have seen them). The lists are released afterwards. */
static int connect_kernels(struct forest *f)
{
    uint64_t lo = UINT64_MAX, hi = 0;
    size_t nl = 0, ne = 0, i;
    uint32_t l;
    int rc = 0;

    for (l = 0; l < f->nlines; l++) {
        const struct corr_node *pv = f->launches[l].v;
        nl += f->launches[l].n;
        ne += f->executes[l].n;
        for (i = 0; i < f->launches[l].n; i++) {
            if (pv[i].corr < lo)
                lo = pv[i].corr;
            if (pv[i].corr > hi)
                hi = pv[i].corr;
        }
    }
    if (nl == 0 || ne == 0)
        goto out;
    if (f->cross.cap < f->cross.n + ne) {
        struct edge *v = big_realloc(f->cross.v, (f->cross.n + ne) * sizeof(*v));
        if (v == NULL) {
            rc = -ENOMEM;
            goto out;
        }
        f->cross.v = v;
        f->cross.cap = f->cross.n + ne;
    }
    if (hi - lo < (uint64_t)nl * 4) {
        /* dense ids (the usual case): a direct table of launch node + 1 */
        uint32_t *slot = big_calloc((size_t)(hi - lo) + 1, sizeof(uint32_t));
        if (slot == NULL) {
            rc = -ENOMEM;
            goto out;
        }
        for (l = 0; l < f->nlines; l++) {
            const struct corr_node *pv = f->launches[l].v;
            for (i = 0; i < f->launches[l].n; i++)
                slot[pv[i].corr - lo] = pv[i].node + 1;
        }
        for (l = 0; l < f->nlines && rc == 0; l++) {
            const struct corr_node *cv = f->executes[l].v;
            for (i = 0; i < f->executes[l].n && rc == 0; i++) {
                uint64_t c = cv[i].corr;
                if (c >= lo && c <= hi && slot[c - lo] != 0)
                    rc = add_cross(f, slot[c - lo] - 1, cv[i].node);
            }
        }
        big_free(slot);
    } else {
        size_t cap = hash_cap(nl), mask = cap - 1;
        struct corr_node *tab = big_malloc(cap * sizeof(*tab));
        if (tab == NULL) {
            rc = -ENOMEM;
            goto out;
        }
        for (i = 0; i < cap; i++)
            tab[i].node = NO_NODE;
        for (l = 0; l < f->nlines; l++) {
            const struct corr_node *pv = f->launches[l].v;
            for (i = 0; i < f->launches[l].n; i++) {
                size_t s = (size_t)((pv[i].corr * 0x9e3779b97f4a7c15ULL) >> 17) & mask;
                while (tab[s].node != NO_NODE && tab[s].corr != pv[i].corr)
                    s = (s + 1) & mask;
                tab[s] = pv[i];
            }
        }
        for (l = 0; l < f->nlines && rc == 0; l++) {
            const struct corr_node *cv = f->executes[l].v;
            for (i = 0; i < f->executes[l].n && rc == 0; i++) {
                size_t s = (size_t)((cv[i].corr * 0x9e3779b97f4a7c15ULL) >> 17) & mask;
                while (tab[s].node != NO_NODE) {
                    if (tab[s].corr == cv[i].corr) {
                        rc = add_cross(f, tab[s].node, cv[i].node);
                        break;
                    }
                    s = (s + 1) & mask;
                }
            }
        }
        big_free(tab);
    }
out:
    free_kernel_lists(f);
    return rc;
}

/* Producers of a context become parents of all its consumers, unless both
 * sides hold 64 or more events (ConnectContextGroups). */
static int connect_contexts(struct forest *f)
{
    struct keyed *v = f->contexts.v;
    size_t n = f->contexts.n, i = 0, j, a, b;

    if (n > 1)
        xp_qsort(v, n, sizeof(*v), keyed_cmp);
    while (i < n) {
        size_t nprod = 0, ncons = 0;
        for (j = i; j < n && v[j].k1 == v[i].k1 && v[j].k2 == v[i].k2 && v[j].k3 == v[i].k3 &&
                    (v[j].tag & 1) == (v[i].tag & 1);
             j++) {
            if (v[j].tag & 2)
                ncons++;
            else
                nprod++;
        }
        if (!(nprod >= 64 && ncons >= 64)) {
            for (a = i; a < j; a++) {
                if (v[a].tag & 2)
                    continue;
                for (b = i; b < j; b++) {
                    if ((v[b].tag & 2) && add_cross(f, v[a].node, v[b].node) != 0)
                        return -ENOMEM;
                }
            }
        }
        i = j;
    }
    return 0;
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

    return x < y ? -1 : x > y;
}

static int is_tfdata_id(const struct forest *f, int64_t id)
{
    return f->tfdata_ids.n > 0 &&
           bsearch(&id, f->tfdata_ids.v, f->tfdata_ids.n, sizeof(int64_t), cmp_i64) != NULL;
}

/* ProcessTensorFlowLoop: the first executor event of each iteration of a
 * real loop becomes a root and parents the iteration's other events. */
static int tf_loops(struct forest *f)
{
    struct keyed *v = f->executors.v;
    size_t n = f->executors.n, i = 0, j, k;
    struct vec firsts = {.size = sizeof(uint32_t)};
    int rc = 0;

    if (n > 1)
        xp_qsort(v, n, sizeof(*v), keyed_cmp);
    while (i < n) {
        size_t loop_end = i, iters = 0;
        int only_zero;
        while (loop_end < n && v[loop_end].k1 == v[i].k1)
            loop_end++;
        for (j = i; j < loop_end; j = k) {
            for (k = j; k < loop_end && v[k].k2 == v[j].k2; k++)
                ;
            iters++;
        }
        only_zero = iters == 1 && v[i].k2 == 0;
        if (!is_tfdata_id(f, (int64_t)v[i].k1) && !only_zero) {
            for (j = i; j < loop_end; j = k) {
                uint32_t first = v[j].node;
                int64_t fb, fd;
                node_span(f, first, &fb, &fd);
                for (k = j; k < loop_end && v[k].k2 == v[j].k2; k++) {
                    int64_t b, d;
                    node_span(f, v[k].node, &b, &d);
                    if (span_less(b, d, fb, fd)) {
                        first = v[k].node;
                        fb = b;
                        fd = d;
                    }
                }
                for (k = j; k < loop_end && v[k].k2 == v[j].k2; k++) {
                    if (v[k].node != first && add_cross(f, first, v[k].node) != 0) {
                        rc = -ENOMEM;
                        goto out;
                    }
                }
                {
                    uint32_t *r = vec_push(&firsts);
                    if (r == NULL) {
                        rc = -ENOMEM;
                        goto out;
                    }
                    *r = first;
                }
            }
        }
        i = loop_end;
    }
    /* iterations in time order of their first events (insertion sort: few) */
    {
        uint32_t *r = firsts.v;
        for (i = 1; i < firsts.n; i++) {
            uint32_t x = r[i];
            int64_t xb, xd;
            node_span(f, x, &xb, &xd);
            for (j = i; j > 0; j--) {
                int64_t yb, yd;
                node_span(f, r[j - 1], &yb, &yd);
                if (!span_less(xb, xd, yb, yd))
                    break;
                r[j] = r[j - 1];
            }
            r[j] = x;
        }
    }
    f->loop_roots = firsts;
    return 0;
out:
    vec_free(&firsts);
    return rc;
}

/* Stable LSD radix sort of edges by child (by_child = 1) or parent, 16 bits
 * a pass; tmp holds n edges. The result ends in v. */
static int radix_edges(struct edge *v, struct edge *tmp, size_t n, int by_child)
{
    size_t *count = malloc(65536 * sizeof(size_t));
    int pass;

    if (count == NULL)
        return -ENOMEM;
    for (pass = 0; pass < 2; pass++) {
        int sh = pass * 16;
        size_t i, sum = 0;
        struct edge *src = pass == 0 ? v : tmp, *dst = pass == 0 ? tmp : v;
        memset(count, 0, 65536 * sizeof(size_t));
        for (i = 0; i < n; i++)
            count[((by_child ? src[i].child : src[i].parent) >> sh) & 0xffff]++;
        for (i = 0; i < 65536; i++) {
            size_t c = count[i];
            count[i] = sum;
            sum += c;
        }
        for (i = 0; i < n; i++)
            dst[count[((by_child ? src[i].child : src[i].parent) >> sh) & 0xffff]++] = src[i];
    }
    free(count);
    return 0;
}

/* The cross edges sorted by child and by parent, and the node flags. */
static int sort_cross(struct forest *f)
{
    size_t m = f->cross.n, i;
    struct edge *tmp;

    if (m == 0)
        return 0;
    f->by_child = f->cross.v;
    f->cross.v = NULL;
    f->cross.n = f->cross.cap = 0;
    f->by_parent = big_malloc(m * sizeof(struct edge));
    tmp = big_malloc(m * sizeof(struct edge));
    f->cross.n = m; /* by_child still holds them for forest_free */
    if (f->by_parent == NULL || tmp == NULL) {
        big_free(tmp);
        return -ENOMEM;
    }
    for (i = 0; i < m; i++) {
        f->flags[f->by_child[i].child] |= NF_XPARENT;
        f->flags[f->by_child[i].parent] |= NF_XCHILD;
    }
    memcpy(f->by_parent, f->by_child, m * sizeof(struct edge));
    if (radix_edges(f->by_child, tmp, m, 1) != 0 || radix_edges(f->by_parent, tmp, m, 0) != 0) {
        big_free(tmp);
        return -ENOMEM;
    }
    big_free(tmp);
    return 0;
}

/* First index in a sorted edge array whose key (child or parent) >= node. */
static size_t edge_lower(const struct edge *v, size_t m, int by_child, uint32_t node)
{
    size_t lo = 0, hi = m;

    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if ((by_child ? v[mid].child : v[mid].parent) < node)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* ---- searches ------------------------------------------------------------- */

/* Start an upward search: an empty visited set. */
static int vis_start(struct forest *f)
{
    if (f->vis_cap == 0) {
        f->vis_cap = 64;
        f->vis_key = calloc(f->vis_cap, sizeof(uint32_t));
        f->vis_gen = calloc(f->vis_cap, sizeof(uint32_t));
        if (f->vis_key == NULL || f->vis_gen == NULL)
            return -ENOMEM;
    }
    if (++f->vis_stamp == 0) {
        memset(f->vis_gen, 0, f->vis_cap * sizeof(uint32_t));
        f->vis_stamp = 1;
    }
    f->queue.n = 0;
    f->vis_self = NO_NODE;
    return 0;
}

static int vis_insert_slot(struct forest *f, uint32_t node)
{
    uint32_t mask = f->vis_cap - 1, s = (uint32_t)((node * 0x9e3779b9u) >> 7) & mask;

    while (f->vis_gen[s] == f->vis_stamp) {
        if (f->vis_key[s] == node)
            return 0;
        s = (s + 1) & mask;
    }
    f->vis_gen[s] = f->vis_stamp;
    f->vis_key[s] = node;
    return 1;
}

/* Mark node visited and queue it; 0 if it was already visited. */
static int vis_add(struct forest *f, uint32_t node, int *rc)
{
    uint32_t *q;

    if ((f->queue.n + 2) * 2 > f->vis_cap) {
        /* grow: every visited node is in the queue */
        uint32_t cap = f->vis_cap * 2;
        uint32_t *k = calloc(cap, sizeof(uint32_t)), *g = calloc(cap, sizeof(uint32_t));
        size_t i;
        if (k == NULL || g == NULL) {
            free(k);
            free(g);
            *rc = -ENOMEM;
            return 0;
        }
        free(f->vis_key);
        free(f->vis_gen);
        f->vis_key = k;
        f->vis_gen = g;
        f->vis_cap = cap;
        f->vis_stamp = 1;
        if (f->vis_self != NO_NODE)
            vis_insert_slot(f, f->vis_self);
        for (i = 0; i < f->queue.n; i++)
            vis_insert_slot(f, ((uint32_t *)f->queue.v)[i]);
    }
    if (!vis_insert_slot(f, node))
        return 0;
    q = vec_push(&f->queue);
    if (q == NULL) {
        *rc = -ENOMEM;
        return 0;
    }
    *q = node;
    return 1;
}

/* Queue the parents of x (nesting parent first, then the cross links in
 * edge order) that were not visited yet. */
static void add_parents(struct forest *f, uint32_t x, int *rc)
{
    if (f->nest_parent[x] != NO_NODE)
        vis_add(f, f->nest_parent[x], rc);
    if (f->flags[x] & NF_XPARENT) {
        size_t i = edge_lower(f->by_child, f->cross.n, 1, x);
        for (; i < f->cross.n && f->by_child[i].child == x && *rc == 0; i++)
            vis_add(f, f->by_child[i].parent, rc);
    }
}

/* Breadth-first search over parents from node (itself included when
 * include_self) for the first node that has `want_type`, or whose root level
 * equals `level` (when want_type < 0). Returns the node or NO_NODE; *rc is
 * set on allocation failure. */
static uint32_t find_ancestor(struct forest *f, uint32_t node, int include_self, int want_type,
                              int32_t level, int *rc)
{
    size_t head = 0;

    if ((*rc = vis_start(f)) != 0)
        return NO_NODE;
    if (include_self) {
        vis_add(f, node, rc);
    } else {
        vis_insert_slot(f, node);
        f->vis_self = node;
        add_parents(f, node, rc);
    }
    while (head < f->queue.n && *rc == 0) {
        uint32_t x = ((uint32_t *)f->queue.v)[head++];
        if (want_type >= 0 ? f->type[x] == want_type : root_level(f, x) == level)
            return x;
        add_parents(f, x, rc);
    }
    return NO_NODE;
}

/* GetContextStat: the stat on node or its nearest ancestor (BFS). */
static int context_stat(struct forest *f, uint32_t node, enum xp_stat_type t, struct xp_stat *st,
                        int *rc)
{
    size_t head = 0;

    if ((*rc = vis_start(f)) != 0)
        return 0;
    vis_add(f, node, rc);
    while (head < f->queue.n && *rc == 0) {
        uint32_t x = ((uint32_t *)f->queue.v)[head++];
        if (node_stat(f, x, t, st))
            return 1;
        add_parents(f, x, rc);
    }
    return 0;
}

/* The end (exclusive) of the line holding node. */
static uint32_t line_end(const struct forest *f, uint32_t node)
{
    uint32_t lo = 0, hi = f->nlines;

    while (hi - lo > 1) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (f->line_base[mid] <= node)
            lo = mid;
        else
            hi = mid;
    }
    while (lo + 1 < f->nlines && f->line_base[lo + 1] <= node)
        lo++;
    return f->line_base[lo + 1];
}

/* PropagateGroupId: every node reachable from root through nodes not yet
 * grouped gets g. Nesting subtrees are walked as ranges (a grouped node's
 * subtree is skipped whole); cross links go through a queue of nodes. */
static int propagate(struct forest *f, uint32_t root, int32_t g)
{
    struct vec *q = &f->queue;
    size_t head = 0;

    if (f->gid[root] >= 0)
        return 0;
    f->gid[root] = g;
    q->n = 0;
    {
        uint32_t *r = vec_push(q);
        if (r == NULL)
            return -ENOMEM;
        *r = root;
    }
    while (head < q->n) {
        uint32_t x = ((uint32_t *)q->v)[head++], i, end = line_end(f, x);
        size_t next_edge = f->cross.n; /* by_parent index after the last node's edges */
        /* the nesting subtree of x */
        for (i = x + 1; i < end;) {
            if (f->flags[i] & NF_ASYNC) {
                i++;
                continue;
            }
            if (f->nest_parent[i] == NO_NODE || f->nest_parent[i] < x)
                break; /* past the subtree */
            if (f->gid[i] >= 0) {
                /* grouped already: skip its subtree */
                uint32_t y = i++;
                while (i < end && ((f->flags[i] & NF_ASYNC) ||
                                   (f->nest_parent[i] != NO_NODE && f->nest_parent[i] >= y)))
                    i++;
                continue;
            }
            f->gid[i] = g;
            if (f->flags[i] & NF_XCHILD) {
                /* its cross children: queue them (its subtree is walked here);
                 * the walk goes up in node order, so the edges are found
                 * from where the last node's ended */
                size_t k = next_edge;
                if (k >= f->cross.n || f->by_parent[k].parent > i ||
                    (k + 8 < f->cross.n && f->by_parent[k + 8].parent < i))
                    k = edge_lower(f->by_parent, f->cross.n, 0, i);
                else
                    while (k < f->cross.n && f->by_parent[k].parent < i)
                        k++;
                for (; k < f->cross.n && f->by_parent[k].parent == i; k++) {
                    uint32_t c = f->by_parent[k].child, *r;
                    if (f->gid[c] >= 0)
                        continue;
                    f->gid[c] = g;
                    if ((r = vec_push(q)) == NULL)
                        return -ENOMEM;
                    *r = c;
                }
                next_edge = k;
            }
            i++;
        }
        if (f->flags[x] & NF_XCHILD) {
            size_t k = edge_lower(f->by_parent, f->cross.n, 0, x);
            for (; k < f->cross.n && f->by_parent[k].parent == x; k++) {
                uint32_t c = f->by_parent[k].child, *r;
                if (f->gid[c] >= 0)
                    continue;
                f->gid[c] = g;
                if ((r = vec_push(q)) == NULL)
                    return -ENOMEM;
                *r = c;
            }
        }
    }
    return 0;
}
/* ---- result --------------------------------------------------------------- */

struct groups_mem {
    struct arena arena;   /* names, per-line tables */
    int32_t *gid_block;   /* all group ids, one block */
    uint8_t *eager_block; /* all eager flags, or NULL */
    size_t ngroups_cap;   /* slots in groups */
};

static int add_group(struct xp_groups *g, int64_t id, const char *name, int64_t step_num,
                     uint32_t p, uint32_t l, uint32_t e, int named_root)
{
    struct groups_mem *m = g->mem;
    struct xp_group *gr;

    if (g->ngroups == m->ngroups_cap) {
        size_t cap = m->ngroups_cap ? m->ngroups_cap * 2 : 16;
        struct xp_group *ng = realloc(g->groups, cap * sizeof(*ng));
        if (ng == NULL)
            return -ENOMEM;
        g->groups = ng;
        m->ngroups_cap = cap;
    }
    gr = &g->groups[g->ngroups++];
    gr->id = id;
    gr->name = arena_strndup(&m->arena, name, strlen(name));
    gr->step_num = step_num;
    gr->root_plane = p;
    gr->root_line = l;
    gr->root_event = e;
    gr->named_root = named_root;
    return gr->name == NULL ? -ENOMEM : 0;
}

/* The group's name (GetGroupName) and record it. */
static int process_root(struct forest *f, struct xp_groups *g, uint32_t root, int32_t id)
{
    struct xp_stat st;
    char name[512];
    size_t len = 0;
    int64_t num;
    int64_t step_num = -1;
    uint32_t p, l, e;
    const struct xp_plane *pl;
    int rc;

    if ((rc = propagate(f, root, id)) != 0)
        return rc;
    node_where(f, root, &p, &l, &e);
    pl = &f->xs->planes[p];
    name[0] = '\0';
    if (context_stat(f, root, XS_GRAPH_TYPE, &st, &rc)) {
        if (st.kind == XP_STAT_STR || st.kind == XP_STAT_REF || st.kind == XP_STAT_BYTES)
            len = (size_t)snprintf(name, sizeof(name), "%.*s ", (int)(st.len > 400 ? 400 : st.len),
                                   st.str);
        else
            len = (size_t)snprintf(name, sizeof(name), " ");
    } else if (rc == 0 && !is_implicit_root((enum ev_type)f->type[root])) {
        len = (size_t)snprintf(name, sizeof(name), "%.400s ",
                               xp_event_meta(pl, &pl->lines[l].events[e])->name);
    }
    if (rc != 0)
        return rc;
    num = f->gid[root] >= 0 ? f->gid[root] : 0;
    if (context_stat(f, root, XS_ITER_NUM, &st, &rc)) {
        num = xp_stat_int(&st);
        step_num = num;
    } else if (rc == 0 && context_stat(f, root, XS_STEP_NUM, &st, &rc)) {
        num = xp_stat_int(&st);
        step_num = num;
    }
    if (rc != 0)
        return rc;
    if (len >= sizeof(name))
        len = sizeof(name) - 1;
    snprintf(name + len, sizeof(name) - len, "%" PRId64, num);
    return add_group(g, id, name, step_num, p, l, e,
                     !is_implicit_root((enum ev_type)f->type[root]));
}

/* A root with what orders it: level (higher first), then timespan, then node. */
struct sort_root {
    int32_t level;
    uint32_t node;
    int64_t begin;
    int64_t dur;
};

static int sort_root_cmp(const void *x, const void *y)
{
    const struct sort_root *a = x, *b = y;

    if (a->level != b->level)
        return a->level > b->level ? -1 : 1;
    if (span_less(a->begin, a->dur, b->begin, b->dur))
        return -1;
    if (span_less(b->begin, b->dur, a->begin, a->dur))
        return 1;
    return a->node < b->node ? -1 : a->node > b->node;
}

/* MarkEagerlyExecuted*: kernels and TensorFlow ops under an EagerExecute
 * whose is_func is 0. */
static int mark_eager(struct forest *f)
{
    uint32_t i;
    int rc = 0;

    f->eager = big_calloc(f->n ? f->n : 1, 1);
    if (f->eager == NULL)
        return -ENOMEM;
    for (i = 0; i < f->n; i++) {
        uint32_t x, p, l, e;
        struct xp_stat st;
        const struct xp_plane *pl;
        int64_t id;
        if (f->type[i] != ET_KERNEL_EXECUTE && f->type[i] != ET_TFOP_RUN)
            continue;
        x = find_ancestor(f, i, 1, ET_EAGER_EXECUTE, 0, &rc);
        if (rc != 0)
            return rc;
        if (x == NO_NODE)
            continue;
        node_where(f, x, &p, &l, &e);
        pl = &f->xs->planes[p];
        id = xp_plane_stat_id_by_name(pl, "is_func");
        if (event_stat_by_id(pl, &pl->lines[l], &pl->lines[l].events[e], id, &st) &&
            xp_stat_int(&st) == 0)
            f->eager[i] = 1;
    }
    return 0;
}

/* CreateEventGroups and MarkEagerlyExecuted*. */
static int create_groups(struct forest *f, struct xp_groups *g)
{
    int32_t next = 0;
    size_t i;
    int rc = 0;

    if (f->loop_roots.n > 0) {
        uint32_t *r = f->loop_roots.v;
        for (i = 0; i < f->loop_roots.n; i++) {
            if ((rc = process_root(f, g, r[i], next++)) != 0)
                return rc;
        }
    } else if (f->roots.n > 0) {
        const struct root_node *rn = f->roots.v;
        struct sort_root *r = malloc(f->roots.n * sizeof(*r));
        size_t n = 0;
        if (r == NULL)
            return -ENOMEM;
        for (i = 0; i < f->roots.n; i++) {
            struct xp_stat st;
            if (f->tfdata_ids.n > 0 && node_stat(f, rn[i].node, XS_STEP_ID, &st) &&
                is_tfdata_id(f, xp_stat_int(&st)))
                continue;
            r[n].level = rn[i].level;
            r[n].node = rn[i].node;
            node_span(f, rn[i].node, &r[n].begin, &r[n].dur);
            n++;
        }
        if (n > 1)
            xp_qsort(r, n, sizeof(*r), sort_root_cmp);
        for (i = 0; i < n && rc == 0; i++) {
            if (f->gid[r[i].node] >= 0)
                continue;
            if (find_ancestor(f, r[i].node, 0, -1, r[i].level, &rc) != NO_NODE || rc != 0)
                continue;
            rc = process_root(f, g, r[i].node, next++);
        }
        free(r);
        if (rc != 0)
            return rc;
    }
    if (f->has_eager_execute)
        return mark_eager(f);
    return 0;
}

/* ---- GPU derived timeline -------------------------------------------------- */

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
    int rc = 0;

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

/* ---- assembling xp_groups --------------------------------------------------- */

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
    if (g->steps == NULL || g->nsteps == NULL) {
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
    free(g->steps);
    free(g->nsteps);
    free(g->groups);
    if (m != NULL) {
        big_free(m->gid_block);
        big_free(m->eager_block);
        arena_free(&m->arena);
        free(m);
    }
    free(g);
}

/* Point event_group (and event_eager) of every line into one block. */
static int attach_tables(struct xp_groups *g, int32_t *gid, uint8_t *eager,
                         const uint32_t *line_base)
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

static int is_gpu_plane(const struct xp_plane *pl)
{
    return strncmp(pl->name, "/device:GPU:", 12) == 0;
}

/* IsXSpaceGrouped: some plane has a "group_id" stat metadata. */
static int space_is_grouped(const struct xspace *xs)
{
    uint32_t p;

    for (p = 0; p < xs->nplanes; p++) {
        if (xs->planes[p].stat_id[XS_GROUP_ID] != XP_NO_STAT)
            return 1;
    }
    return 0;
}

/* The type of every event metadata ([plane][metadata], one block). */
static uint8_t **metadata_types(const struct xspace *xs)
{
    size_t total = 0, off;
    uint32_t p, i;
    uint8_t **mt;

    for (p = 0; p < xs->nplanes; p++)
        total += xs->planes[p].nemeta;
    off = (xs->nplanes ? xs->nplanes : 1) * sizeof(uint8_t *);
    mt = malloc(off + (total ? total : 1));
    if (mt == NULL)
        return NULL;
    total = 0;
    for (p = 0; p < xs->nplanes; p++) {
        const struct xp_plane *pl = &xs->planes[p];
        mt[p] = (uint8_t *)mt + off + total;
        for (i = 0; i < pl->nemeta; i++)
            mt[p][i] = (uint8_t)name_type(pl->emeta[i].name);
        total += pl->nemeta;
    }
    return mt;
}

/* Does anything in the profile make a root or a loop op possible? */
static int scan_metadata(const struct xspace *xs, uint8_t *const *mtype, int *loop_op)
{
    uint32_t p, i;
    int possible = 0;

    *loop_op = 0;
    for (p = 0; p < xs->nplanes; p++) {
        const struct xp_plane *pl = &xs->planes[p];
        if (pl->stat_id[XS_IS_ROOT] != XP_NO_STAT)
            possible = 1;
        for (i = 0; i < pl->nemeta; i++) {
            enum ev_type t = (enum ev_type)mtype[p][i];
            if (t == ET_LOOP_OP)
                *loop_op = 1;
            if (t == ET_TRACE_CONTEXT || t == ET_EXECUTOR)
                possible = 1;
        }
    }
    return possible;
}

/* Files saved already grouped: read group_id stats and the Steps lines. */
static int read_pre_grouped(struct xp_groups *g, uint32_t *line_base, uint32_t n)
{
    const struct xspace *xs = g->xs;
    int32_t *gid = big_malloc(((size_t)n ? n : 1) * sizeof(int32_t));
    int64_t max_id = -1;
    char **names = NULL;
    uint32_t p, l, e, flat = 0;
    int rc;

    if (gid == NULL)
        return -ENOMEM;
    for (p = 0; p < xs->nplanes; p++) {
        const struct xp_plane *pl = &xs->planes[p];
        int64_t gsid = pl->stat_id[XS_GROUP_ID];
        for (l = 0; l < pl->nlines; l++, flat++) {
            const struct xp_line *ln = &pl->lines[l];
            int32_t *row = gid + line_base[flat];
            for (e = 0; e < ln->nevents; e++) {
                struct xp_stat st;
                row[e] = -1;
                if (gsid != XP_NO_STAT && event_stat_by_id(pl, ln, &ln->events[e], gsid, &st)) {
                    int64_t v = xp_stat_int(&st);
                    if (v >= 0 && v < (1 << 24)) {
                        row[e] = (int32_t)v;
                        if (v > max_id)
                            max_id = v;
                    }
                }
            }
        }
    }
    if ((rc = attach_tables(g, gid, NULL, line_base)) != 0)
        return rc;
    /* group names from step_name stats; Steps lines give the markers */
    if (max_id >= 0) {
        names = calloc((size_t)max_id + 1, sizeof(*names));
        if (names == NULL)
            return -ENOMEM;
    }
    flat = 0;
    for (p = 0; p < xs->nplanes; p++) {
        const struct xp_plane *pl = &xs->planes[p];
        int64_t snid = pl->stat_id[XS_STEP_NAME];
        size_t cap = 0;
        for (l = 0; l < pl->nlines; l++, flat++) {
            const struct xp_line *ln = &pl->lines[l];
            int32_t *row = gid + line_base[flat];
            int is_steps = (int32_t)ln->id == (int32_t)0xdeadbeef;
            for (e = 0; e < ln->nevents; e++) {
                struct xp_stat st;
                if (row[e] < 0)
                    continue;
                if (is_steps && strncmp(pl->name, "/device:", 8) == 0) {
                    int64_t b = xp_event_start_ps(ln, &ln->events[e]);
                    if (g->nsteps[p] == cap) {
                        size_t nc = cap ? cap * 2 : 16;
                        struct xp_step_marker *ns = realloc(g->steps[p], nc * sizeof(*ns));
                        if (ns == NULL) {
                            rc = -ENOMEM;
                            goto out;
                        }
                        g->steps[p] = ns;
                        cap = nc;
                    }
                    g->steps[p][g->nsteps[p]++] =
                        (struct xp_step_marker){row[e], b, b + ln->events[e].duration_ps};
                }
                if (names[row[e]] == NULL && snid != XP_NO_STAT &&
                    event_stat_by_id(pl, ln, &ln->events[e], snid, &st) &&
                    (st.kind == XP_STAT_STR || st.kind == XP_STAT_REF)) {
                    names[row[e]] =
                        arena_strndup(&((struct groups_mem *)g->mem)->arena, st.str, st.len);
                    if (names[row[e]] == NULL) {
                        rc = -ENOMEM;
                        goto out;
                    }
                }
            }
        }
    }
    rc = 0;
    for (e = 0; (int64_t)e <= max_id && rc == 0; e++) {
        char buf[32];
        snprintf(buf, sizeof(buf), "%u", e);
        rc = add_group(g, e, names[e] ? names[e] : buf, -1, 0, 0, 0, 0);
    }
out:
    free(names);
    return rc;
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
    vec_free(&f->queue);
    vec_free(&f->cross);
    free_kernel_lists(f);
    free(f->launches);
    free(f->executes);
    vec_free(&f->executors);
    vec_free(&f->iterators);
    vec_free(&f->contexts);
    vec_free(&f->roots);
    vec_free(&f->tfdata_ids);
    vec_free(&f->loop_roots);
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
    if ((rc = gather(&f)) != 0)
        goto out;
    if (f.tfdata_ids.n > 1)
        xp_qsort(f.tfdata_ids.v, f.tfdata_ids.n, sizeof(int64_t), cmp_i64);
    if ((rc = tf_loops(&f)) != 0)
        goto out;
    /* ConnectInterThread, in XProf's order, then the contexts */
    if ((rc = connect_keyed(&f, &f.executors, &f.iterators, 1, 0)) != 0 ||
        (rc = connect_keyed(&f, &f.executors, &f.iterators, 1, 1)) != 0 ||
        (rc = connect_kernels(&f)) != 0 || (rc = connect_contexts(&f)) != 0)
        goto out;
    if ((rc = sort_cross(&f)) != 0)
        goto out;
    if ((rc = create_groups(&f, g)) != 0)
        goto out;
    if (g->ngroups > 0) {
        uint32_t *gpus = malloc((xs->nplanes ? xs->nplanes : 1) * sizeof(uint32_t));
        struct derive_job job = {&f, g, gpus};
        uint32_t ngpu = 0;
        if (gpus == NULL) {
            rc = -ENOMEM;
            goto out;
        }
        for (p = 0; p < xs->nplanes; p++) {
            if (is_gpu_plane(&xs->planes[p]))
                gpus[ngpu++] = p;
        }
        rc = parallel_for(ngpu, 0, derive_one, &job);
        free(gpus);
        if (rc != 0)
            goto out;
    }
    rc = attach_tables(g, f.gid, f.eager, line_base);
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
    if (space_is_grouped(xs)) {
        g->pre_grouped = 1;
        if ((rc = number_lines(xs, &line_base, &nlines, &n, err)) != 0)
            goto fail;
        rc = read_pre_grouped(g, line_base, n);
    } else if ((mtype = metadata_types(xs)) == NULL) {
        rc = -ENOMEM;
    } else if (!scan_metadata(xs, mtype, &loop_op) || loop_op) {
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

int snapshot_groups(struct snapshot *snap, const char *host, const struct xp_groups **gp,
                    struct xp_err *err)
{
    char key[512];
    void *v;
    int rc;

    snprintf(key, sizeof(key), "groups:%s", host);
    rc = snapshot_intermediate(snap, key, build_groups, free_groups, host, &v, err);
    *gp = rc == 0 ? v : NULL;
    return rc;
}
