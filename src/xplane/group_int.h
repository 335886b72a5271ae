/*
 * group_int.h - what the pieces of the step grouping share (internal to
 * group*.c; the public API is group.h).
 *
 * group.c            building a grouping: the fast paths, the forest's
 *                    setup and teardown, the result tables, snapshot_groups
 * group_types.c      the role of each event metadata (event types)
 * group_forest.c     forest basics: arrays, node position, spans, stats
 * group_gather.c     pass 1: types, roots, nesting and keyed lists per line
 * group_links.c      links across threads (kernels, iterators, contexts)
 * group_tf.c         TensorFlow loops, tf.data ids, eager execution
 * group_search.c     searches up the forest, group id propagation
 * group_name.c       roots in order, group creation and names
 * group_gpu.c        GPU derived timeline: inherited ids, Steps markers
 * group_tpu.c        TPU planes: grouping lines, merged Steps, GroupLine
 * group_pregrouped.c profiles that already carry group ids
 */
#ifndef XPROFS_GROUP_INT_H
#define XPROFS_GROUP_INT_H

#include <errno.h>
#include <stddef.h>
#include <stdint.h>

#include "base/arena.h"
#include "base/bigalloc.h"
#include "group.h"
#include "reader/xspace.h"

/* Event types the grouping tells apart (HostEventType subset). */
enum ev_type {
    ET_NONE,               /* no type: may become a kernel launch / execute */
    ET_NAMED,              /* a host event type that plays no role here */
    ET_TRACE_CONTEXT,      /* legacy root */
    ET_FUNCTION_RUN,       /* implicit root */
    ET_SESSION_RUN,        /* implicit root */
    ET_RUN_GRAPH,          /* implicit root */
    ET_EXECUTOR,           /* ExecutorState::Process, implicit root */
    ET_EAGER_EXECUTE,      /* EagerExecute */
    ET_ITER_GET_NEXT,      /* IteratorGetNextOp::DoCompute */
    ET_ITER_GET_NEXT_O,    /* IteratorGetNextAsOptionalOp::DoCompute */
    ET_TFDATA_RUN,         /* InstantiatedCapturedFunction::Run* */
    ET_LOOP_OP,            /* a TensorFlow loop op: no grouping at all */
    ET_TFOP_RUN,           /* a "name:Type" TensorFlow op */
    ET_KERNEL_LAUNCH,      /* host event with correlation_id */
    ET_KERNEL_EXECUTE,     /* device event with correlation_id */
    ET_PROCESS_BATCH,      /* ProcessBatch, OrbaxServing::ProcessBatch: root level 2 */
    ET_BATCHING_RUN,       /* BatchingSessionRun: root level 1 */
    ET_ENQUEUE_PROGRAM,    /* DoEnqueueProgram: produces a TPU launch context */
    ET_COMPLETE_CALLBACKS, /* CompleteCallbacks: consumes one */
};

/* PreprocessXPlane's TPU launch contexts (ContextType::kTpuLaunch): host
 * DoEnqueueProgram events produce, CompleteCallbacks and the XLA Modules
 * events of a TensorCore consume, the context of (device_ordinal, queue_id,
 * run_id, core_type); the host's run_id is cut to its 28 low bits. The ids
 * are ours (only equality matters). */
#define GR_TPU_LAUNCH_CONTEXT 12
#define GR_RUN_ID_MASK ((1ull << 28) - 1)

/* The stat metadata ids of a plane that the TPU launch contexts read. */
struct tpu_launch_ids {
    int64_t device_ordinal, queue_id, run_id, core_type; /* XP_NO_STAT if absent */
};

/* Their ids in plane pl. */
void gr_tpu_launch_ids(const struct xp_plane *pl, struct tpu_launch_ids *ids);

/* The launch context id of an event: 1 and *id when it has queue_id and
 * run_id stats (and device_ordinal, when ordinal is negative: a host event;
 * else ordinal is the TensorCore's), else 0. */
int gr_tpu_launch_context(const struct xp_plane *pl, const struct xp_line *ln,
                          const struct xp_event *ev, const struct tpu_launch_ids *ids,
                          int64_t ordinal, uint64_t *id);

/* A link from a parent node to a child node. */
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

/* A kernel launch or execute: its correlation id. Packed to 12 bytes: a
 * GPU profile holds one per launch and one per kernel (fresh memory, the
 * dear part of a cold build). */
struct corr_node {
    uint64_t corr; /* correlation_id */
    uint32_t node; /* node */
} __attribute__((packed));

/* A group met by another group's propagation: GroupMetadata's parents and
 * children. */
struct group_link {
    int32_t parent; /* the propagating group */
    int32_t child;  /* the group it met */
};

/* A root and its level (stat _r, 1 for TraceContext, 2 for ProcessBatch,
 * 1 for BatchingSessionRun). */
struct root_node {
    uint32_t node; /* node */
    int32_t level; /* any value: -1 and 0 are roots too */
};

/* A growable array of elements of one size. */
struct vec {
    void *v;     /* elements */
    size_t n;    /* used */
    size_t cap;  /* allocated */
    size_t size; /* element size */
};

/* A new element at the end of a, or NULL when out of memory. */
static inline void *gr_vec_push(struct vec *a)
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

/* Node flags. */
#define NF_ASYNC 1u   /* is_async: takes no part in nesting */
#define NF_XPARENT 2u /* has a parent across threads */
#define NF_XCHILD 4u  /* has a child across threads */
#define NF_ROOT 8u    /* has a root level (an _r stat, or a type that sets one) */
#define NF_HIDDEN                                                                                  \
    16u /* on a TPU plane but not on its grouping line: no node for                                \
           XProf (ConnectIntraThreadTPU); GroupLine gives its group */

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
    struct vec links;        /* struct group_link, as met (duplicates kept) */
    int has_eager_execute;   /* an EagerExecute event metadata exists */
    int tpu_space;           /* a "/device:TPU:" plane exists (GroupTpuEventsOSS) */
    struct vec tpu_tc_lines; /* uint32_t flat grouping lines of the TensorCores, plane order */
    /* search scratch */
    struct vec queue;   /* uint32_t search queue */
    uint32_t *vis_key;  /* visited set of an upward search: node + 1 */
    uint32_t *vis_gen;  /* generation of each slot */
    uint32_t vis_cap;   /* slots (power of two) */
    uint32_t vis_stamp; /* current generation */
    uint32_t vis_self;  /* start node visited but not queued, or NO_NODE */
};

/* Timespan order: begin ascending, longer first. */
static inline int gr_span_less(int64_t b1, int64_t d1, int64_t b2, int64_t d2)
{
    return b1 < b2 || (b1 == b2 && d1 > d2);
}

/* Record a link across threads (in XProf's edge order). */
static inline int gr_add_cross(struct forest *f, uint32_t parent, uint32_t child)
{
    struct edge *ed = gr_vec_push(&f->cross);

    if (ed == NULL)
        return -ENOMEM;
    ed->parent = parent;
    ed->child = child;
    return 0;
}

/* The implicit roots (their group names carry no event name). */
static inline int gr_is_implicit_root(enum ev_type t)
{
    return t == ET_FUNCTION_RUN || t == ET_SESSION_RUN || t == ET_RUN_GRAPH || t == ET_EXECUTOR;
}

/* The storage behind an xp_groups (its mem). */
struct groups_mem {
    struct arena arena;   /* names, per-line tables */
    int32_t *gid_block;   /* all group ids, one block */
    uint8_t *eager_block; /* all eager flags, or NULL */
    size_t ngroups_cap;   /* slots in groups */
};

/* ---- group_types.c ---- */

/* The type of every event metadata ([plane][metadata], one block to free). */
uint8_t **gr_metadata_types(const struct xspace *xs);

/* 1 if anything in the profile makes a root possible; *loop_op = 1 if a
 * TensorFlow loop op exists (then nothing is grouped). */
int gr_scan_metadata(const struct xspace *xs, uint8_t *const *mtype, int *loop_op);

/* ---- group_forest.c ---- */

void gr_vec_free(struct vec *a);

/* Append src's elements to dst (same element size) and free src. */
int gr_vec_append(struct vec *dst, struct vec *src);

/* Where node sits: plane, line and event. */
void gr_node_where(const struct forest *f, uint32_t node, uint32_t *p, uint32_t *l, uint32_t *e);

/* The flat line (index into line_base) holding node. */
uint32_t gr_node_line(const struct forest *f, uint32_t node);

/* Absolute start and duration of node. */
void gr_node_span(const struct forest *f, uint32_t node, int64_t *begin, int64_t *dur);

/* The stat of type t on node itself. */
int gr_node_stat(const struct forest *f, uint32_t node, enum xp_stat_type t, struct xp_stat *st);

/* qsort orders: keyed nodes by keys then insertion order; int64_t values. */
int gr_keyed_cmp(const void *a, const void *b);
int gr_cmp_i64(const void *a, const void *b);

/* ---- group_gather.c ---- */

/* Pass 1 over every line (see group_gather.c). */
int gr_gather(struct forest *f);

/* ---- group_links.c ---- */

/* Connect parents to children that share a key (ConnectInterThread); with
 * match_tag only children whose tag is `tag`. */
int gr_connect_keyed(struct forest *f, struct vec *parents, struct vec *children, int match_tag,
                     uint32_t tag);

/* KernelLaunch -> KernelExecute by correlation id; frees the kernel lists. */
int gr_connect_kernels(struct forest *f);

/* Context producers -> consumers (ConnectContextGroups). */
int gr_connect_contexts(struct forest *f);

/* The cross edges sorted by child and by parent, and the node flags. */
int gr_sort_cross(struct forest *f);

/* Release the per-line kernel launch / execute lists. */
void gr_free_kernel_lists(struct forest *f);

/* ---- group_tf.c ---- */

/* 1 if id is the step id of a tf.data captured function (sorted tfdata_ids). */
int gr_is_tfdata_id(const struct forest *f, int64_t id);

/* ProcessTensorFlowLoop: loop_roots and their links. */
int gr_tf_loops(struct forest *f);

/* MarkEagerlyExecuted*: the eager flags of kernels and TensorFlow ops. */
int gr_mark_eager(struct forest *f);

/* ---- group_search.c ---- */

/* Breadth-first search over parents for a type or a root level (see
 * group_search.c); NO_NODE if none, *rc set on allocation failure. */
uint32_t gr_find_ancestor(struct forest *f, uint32_t node, int include_self, int want_type,
                          int32_t level, int *rc);

/* GetContextStat: the stat on node or its nearest ancestor. */
int gr_context_stat(struct forest *f, uint32_t node, enum xp_stat_type t, struct xp_stat *st,
                    int *rc);

/* PropagateGroupId from root. */
int gr_propagate(struct forest *f, uint32_t root, int32_t g);

/* ---- group_name.c ---- */

/* The group's name (GetGroupName) and record it: ProcessRootEvent after
 * the propagation from root. An id already recorded (the TPU lock step
 * gives one id per core) takes the new name. */
int gr_process_root(struct forest *f, struct xp_groups *g, uint32_t root, int32_t id);

/* Record group id with its name, step number and root event. */
int gr_add_group(struct xp_groups *g, int64_t id, const char *name, int64_t step_num, uint32_t p,
                 uint32_t l, uint32_t e, int named_root);

/* CreateEventGroups and MarkEagerlyExecuted*. */
int gr_create_groups(struct forest *f, struct xp_groups *g);

/* ---- group_gpu.c ---- */

/* ProcessUngroupedEvents + DeriveStepEventsFromGroups on every GPU plane. */
int gr_derive_gpu_timeline(struct forest *f, struct xp_groups *g);

/* ---- group_tpu.c ---- */

/* GetGroupingLineForTPU: the plane's last "Steps" / "Sparse Core Steps"
 * line if it has events, else its last module line if that has events; the
 * line index, or -1. */
int gr_tpu_grouping_line(const struct xp_plane *pl);

/* 1 if node sits on a TPU step or module line (IsTPUParentLineEvent). */
int gr_on_tpu_parent_line(const struct forest *f, uint32_t node);

/* The lock-step fallback of CreateEventGroups: when no TensorCore step node
 * got a group, each core's grouping-line events get ids next, next + 1 ...
 * in line order (every core from the same next). */
int gr_tpu_lock_step(struct forest *f, struct xp_groups *g, int32_t next);

/* GroupTpuXPlaneEvents on every device plane: the Steps line's merged
 * markers into g->steps (MergeHostSteps), and every other line's events
 * the group of the grouping-line event they overlap (GroupLine). */
int gr_group_tpu_planes(struct forest *f, struct xp_groups *g);

/* ---- group_pregrouped.c ---- */

/* Read the groups of a profile saved already grouped. */
int gr_read_pre_grouped(struct xp_groups *g, uint32_t *line_base, uint32_t n);

/* ---- group.c ---- */

/* Point event_group (and event_eager) of every line into one block. */
int gr_attach_tables(struct xp_groups *g, int32_t *gid, uint8_t *eager, const uint32_t *line_base);
/* Sort and deduplicate the links met by the propagations into g->links. */
int gr_attach_links(struct xp_groups *g, const struct vec *links);

#endif
