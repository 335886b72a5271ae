/*
 * op_stats_tpu_steps.c - the step db of TPU planes: TensorCores and
 * SparseCores (XProf's ConvertDeviceTraceXPlaneToStepEvents,
 * IntersectCombineStepEvents across cores, StepEventsToPerCoreStepInfo).
 *
 * Per core, markers are the step line's events with a group_id (`Steps` on
 * a TensorCore, `Sparse Core Steps` on a SparseCore), and the op line's
 * events with a group_id (`XLA Ops`... on a TensorCore, `Sparse Core Ops` on
 * a SparseCore) go through an ancestor stack by device timespan, each op's
 * self time landing in its group's per-core db. A core's steps are the
 * groups with both; steps are those every core with steps has; the step
 * time is the longest marker over all cores, SparseCores included. Each
 * TensorCore gets its category_ps for that step time (self time by HLO
 * category, plus IDLE = step time - op time); a SparseCore gets the same
 * for its own longest marker (StepTimeOnCore), under core id
 * TPU_SPARSE_CORE_BASE + plane id.
 *
 * The step's hlo_metrics_db (its TensorCores' per-core dbs combined, which
 * XProf's roofline Average and per-step records read) is kept as sums
 * (struct op_db_sums): each op occurrence adds what FromXEvent and
 * AdjustFlopsAndBytesAccessed give it (metadata flops, model flops, bytes
 * and memory breakdown per occurrence; a custom-call's event stats too) to
 * its group's innermost or infeed/outfeed sums; a core's total time is
 * max(op time, step time) (SetTotalTimePs). Constant memory per step.
 */
#include "op_stats_tpu_int.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "xplane/group.h"
#include "base/grow.h"
#include "base/sort.h"

/* Self time of one op category in one step of one core. */
struct tpu_cat_time {
    int64_t group;    /* step (group id) */
    const char *name; /* category (not NUL-terminated) */
    uint32_t len;     /* bytes in name */
    uint64_t ps;      /* self time */
};

/* One group's op sums on a TensorCore (its per-core db's sums), then on
 * all of the host's (merge_sums: one core's at a time are held apart). */
struct tpu_group_sums {
    int64_t group;       /* step (group id) */
    struct op_sums ops;  /* innermost ops but infeed/outfeed */
    struct op_sums feed; /* innermost infeed/outfeed ops */
};

/* What an op's metadata gives one occurrence (FromXEvent, then
 * AdjustFlopsAndBytesAccessed spread over the occurrences), cached by
 * metadata. */
struct tpu_op_info {
    const struct xp_event_meta *md; /* key; NULL: an empty slot */
    int op;                         /* program id and a nonzero symbol id */
    int kind;                       /* TPU_KIND_* */
    int custom_call;                /* category "custom-call": event stats add up */
    const char *category;           /* hlo_category (not NUL-terminated), or "" */
    uint32_t len;                   /* bytes in category */
    uint64_t flops, model_flops;    /* per occurrence; model: flops when 0 (not custom-call) */
    uint64_t bytes;                 /* bytes_accessed per occurrence */
    struct op_mem_access mem[8];    /* memory breakdown per occurrence */
    uint32_t nmem;
};

enum { TPU_KIND_OTHER, TPU_KIND_INNER, TPU_KIND_FEED };

/* Slots of the metadata cache (a power of two). */
#define OP_INFO_SLOTS 256

/* An all-reduce op of one core and its step (AddCollectiveOpEvent). */
struct group_all_reduce {
    int64_t group;
    struct all_reduce_info info;
};

/* A step marker of one core. */
struct tpu_marker {
    int64_t group;
    int64_t begin, end; /* device timespan */
};

/* An op event with a group id on the step ancestor stack. */
struct tpu_step_frame {
    uint32_t event;
    int64_t group;
    int64_t begin, end;
    uint64_t children;
};

/* The step events of one TensorCore plane. */
struct tpu_core_steps {
    uint32_t core_id;           /* plane id; TPU_SPARSE_CORE_BASE + plane id on a SparseCore */
    int sparse;                 /* 1: a SparseCore */
    struct tpu_marker *markers; /* sorted by group, line order within one */
    uint32_t nmarkers, markers_cap;
    struct tpu_cat_time *times; /* sorted by (group, category), summed */
    uint32_t ntimes, times_cap;
    int64_t *groups; /* groups of the step events (ops and a marker), sorted */
    uint32_t ngroups, groups_cap;
    struct group_all_reduce *all_reduce; /* sorted by group, line order within one */
    uint32_t nall_reduce, all_reduce_cap;
    struct tpu_group_sums *sums; /* TensorCores: sorted by group, summed (until merged) */
    uint32_t nsums, sums_cap;
    struct tpu_op_info *info; /* OP_INFO_SLOTS entries, NULL on a SparseCore */
};

static int marker_cmp(const void *a, const void *b, void *ctx)
{
    const struct tpu_marker *x = a, *y = b;

    (void)ctx;
    return x->group < y->group ? -1 : x->group > y->group;
}

/* Order by the int64_t group at the start of both (groups, all-reduce ops). */
static int group_cmp(const void *a, const void *b, void *ctx)
{
    const int64_t *x = a, *y = b;

    (void)ctx;
    return *x < *y ? -1 : *x > *y;
}

static int cat_cmp(const void *a, const void *b, void *ctx)
{
    const struct tpu_cat_time *x = a, *y = b;
    uint32_t n = x->len < y->len ? x->len : y->len;
    int c;

    (void)ctx;
    if (x->group != y->group)
        return x->group < y->group ? -1 : 1;
    c = n > 0 ? memcmp(x->name, y->name, n) : 0;
    if (c != 0)
        return c;
    return x->len < y->len ? -1 : x->len > y->len;
}

/* The self time of (group, category) goes to an entry of the last
 * TIMES_REUSE when one has that key; else to a new one. Entries with equal
 * keys are summed after sorting anyway: this only keeps the array about
 * as long as steps x categories, not as long as the ops. */
#define TIMES_REUSE 64

static int add_cat_time(struct tpu_core_steps *cs, int64_t group, const char *name, uint32_t len,
                        uint64_t ps)
{
    struct tpu_cat_time *t;
    uint32_t i, stop = cs->ntimes > TIMES_REUSE ? cs->ntimes - TIMES_REUSE : 0;

    for (i = cs->ntimes; i > stop; i--) {
        t = &cs->times[i - 1];
        if (t->group != group)
            break;
        if (t->len == len && (t->name == name || memcmp(t->name, name, len) == 0)) {
            t->ps += ps;
            return 0;
        }
    }
    if (xp_grow((void **)&cs->times, &cs->times_cap, cs->ntimes, sizeof(*cs->times)) != 0)
        return -ENOMEM;
    cs->times[cs->ntimes++] = (struct tpu_cat_time){group, name, len, ps};
    return 0;
}

/* The cached metadata facts of md (filled on first use). */
static const struct tpu_op_info *op_info(const struct tpu_ids *ids, struct tpu_core_steps *cs,
                                         const struct xp_event_meta *md)
{
    uintptr_t h = (uintptr_t)md;
    struct tpu_op_info *in;
    struct xp_stat prog, sym, st;

    h ^= h >> 17;
    h *= 0x9e3779b1u;
    in = &cs->info[(h >> 8) & (OP_INFO_SLOTS - 1)];
    if (in->md == md)
        return in;
    memset(in, 0, sizeof(*in));
    in->md = md;
    in->category = "";
    in->op = tpu_meta_stat(md, ids->program_id, &prog) && tpu_meta_stat(md, ids->symbol_id, &sym) &&
             tpu_stat_u64(&sym) != 0;
    if (!in->op)
        return in;
    if (tpu_meta_stat(md, ids->hlo_category, &st) &&
        (st.kind == XP_STAT_STR || st.kind == XP_STAT_REF)) {
        in->category = st.str;
        in->len = (uint32_t)st.len;
    }
    if (op_may_have_inner_ops(in->category, in->len))
        in->kind = TPU_KIND_INNER;
    else if (op_is_infeed_or_outfeed(in->category, in->len))
        in->kind = TPU_KIND_FEED;
    in->custom_call = in->len == 11 && memcmp(in->category, "custom-call", 11) == 0;
    if (tpu_meta_stat(md, ids->flops, &st))
        in->flops = tpu_stat_u64(&st);
    if (tpu_meta_stat(md, ids->model_flops, &st))
        in->model_flops = tpu_stat_u64(&st);
    if (in->model_flops == 0 && !in->custom_call)
        in->model_flops = in->flops;
    if (tpu_meta_stat(md, ids->bytes_accessed, &st))
        in->bytes = tpu_stat_u64(&st);
    if (tpu_meta_stat(md, ids->memory_breakdown, &st))
        tpu_mem_breakdown(&st, in->mem, &in->nmem);
    return in;
}

/* The sums of group g on cs: the last entry when it is g's, else a new one
 * (entries of one group are summed after sorting anyway). NULL: no memory. */
static struct tpu_group_sums *group_sums(struct tpu_core_steps *cs, int64_t g)
{
    if (cs->nsums > 0 && cs->sums[cs->nsums - 1].group == g)
        return &cs->sums[cs->nsums - 1];
    if (xp_grow((void **)&cs->sums, &cs->sums_cap, cs->nsums, sizeof(*cs->sums)) != 0)
        return NULL;
    memset(&cs->sums[cs->nsums], 0, sizeof(cs->sums[cs->nsums]));
    cs->sums[cs->nsums].group = g;
    return &cs->sums[cs->nsums++];
}

/* One occurrence of an op of group g added to the group's sums. */
static int add_op_sums(const struct xp_plane *p, const struct xp_line *l, const struct tpu_ids *ids,
                       const struct tpu_step_frame *f, const struct tpu_op_info *in,
                       struct tpu_core_steps *cs)
{
    const struct xp_event *e = &l->events[f->event];
    struct tpu_group_sums *gs;
    struct op_sums *s;
    uint64_t flops = in->flops, model = in->model_flops, bytes = in->bytes;
    struct xp_stat st;

    if (in->kind == TPU_KIND_INNER)
        return 0;
    if ((gs = group_sums(cs, f->group)) == NULL)
        return -ENOMEM;
    s = in->kind == TPU_KIND_FEED ? &gs->feed : &gs->ops;
    if (in->custom_call) {
        /* MergeOpMetrics sums a custom-call's event stats */
        if (xp_event_own_stat(p, l, e, ids->bytes_accessed, &st))
            bytes += tpu_stat_u64(&st);
        if (xp_event_own_stat(p, l, e, ids->model_flops, &st))
            model += tpu_stat_u64(&st);
        if (xp_event_own_stat(p, l, e, ids->flops, &st))
            flops += tpu_stat_u64(&st);
    }
    s->flops += flops;
    s->flops_v2 += (double)flops;
    s->model_flops += model;
    s->model_flops_v2 += (double)model;
    s->bytes_accessed += bytes;
    s->time_ps += (uint64_t)(f->end - f->begin);
    op_mem_combine(s->mem, &s->nmem, in->mem, in->nmem);
    return 0;
}

/* A step frame leaves the stack: its group has a per-core op metrics db,
 * and its self time goes to (group, category) when the event names an op
 * (program id and a nonzero symbol id); on a TensorCore its flops and
 * bytes go to the group's sums. */
static int pop_step_op(const struct xp_plane *p, const struct xp_line *l, const struct tpu_ids *ids,
                       const struct tpu_step_frame *f, struct tpu_core_steps *cs)
{
    const struct xp_event_meta *md = xp_event_meta(p, &l->events[f->event]);
    struct xp_stat prog, sym, cat;
    const char *name = "";
    uint32_t len = 0;
    int rc;

    /* groups are sorted and made unique later: a repeat of the last one
     * adds nothing */
    if (cs->ngroups == 0 || cs->groups[cs->ngroups - 1] != f->group) {
        if (xp_grow((void **)&cs->groups, &cs->groups_cap, cs->ngroups, sizeof(*cs->groups)) != 0)
            return -ENOMEM;
        cs->groups[cs->ngroups++] = f->group;
    }
    if (cs->info != NULL) {
        const struct tpu_op_info *in = op_info(ids, cs, md);
        if (!in->op)
            return 0;
        if ((rc = add_op_sums(p, l, ids, f, in, cs)) != 0)
            return rc;
        return add_cat_time(cs, f->group, in->category, in->len,
                            (uint64_t)(f->end - f->begin) - f->children);
    }
    if (!tpu_meta_stat(md, ids->program_id, &prog) || !tpu_meta_stat(md, ids->symbol_id, &sym) ||
        tpu_stat_u64(&sym) == 0)
        return 0;
    if (tpu_meta_stat(md, ids->hlo_category, &cat) &&
        (cat.kind == XP_STAT_STR || cat.kind == XP_STAT_REF)) {
        name = cat.str;
        len = (uint32_t)cat.len;
    }
    return add_cat_time(cs, f->group, name, len, (uint64_t)(f->end - f->begin) - f->children);
}

/* Where a core's events have their groups: the grouping (ungrouped files:
 * XProf groups them before reading group_id stats), or their own group_id
 * stats (files saved grouped), which the grouping has read already where
 * their values are 0 .. 2^24 - 1 (gr_read_pre_grouped). */
struct group_source {
    const struct xp_groups *groups; /* NULL: read the stats */
    const struct xp_groups *saved;  /* a grouped file's stats as read, or NULL */
    uint32_t plane;                 /* plane index */
};

/* The group of event i of line li: 1 and *group if it has one. */
static int event_group(const struct group_source *gs, const struct xp_plane *p, uint32_t li,
                       uint32_t i, int64_t *group)
{
    const struct xp_line *l = &p->lines[li];
    struct xp_stat st;
    int32_t g;

    if (gs->groups != NULL) {
        g = xp_group_of(gs->groups, gs->plane, li, i);
        *group = g;
        return g >= 0;
    }
    if (gs->saved != NULL && (g = xp_group_of(gs->saved, gs->plane, li, i)) >= 0) {
        *group = g;
        return 1;
    }
    /* no group_id stat (as the decoder saw: xp_line.gids), or one the
     * grouping did not keep */
    if (l->gids != NULL && l->gids[i] == XP_GID_NONE)
        return 0;
    if (!xp_event_own_stat(p, l, &l->events[i], p->stat_id[XS_GROUP_ID], &st))
        return 0;
    *group = (int64_t)tpu_stat_u64(&st);
    return 1;
}

/* GetAllReduceInfo of an op with an all_reduce_unique_id stat: its start is
 * its device_offset_ps when it has one, its end that start +
 * device_duration_ps when it has one (the event's own stats, as XEvent
 * GetStat reads them). */
static int note_all_reduce(const struct xp_plane *p, const struct xp_line *l,
                           const struct xp_event *e, const struct tpu_ids *ids, int64_t group,
                           struct tpu_core_steps *cs)
{
    struct xp_stat id, st;
    struct all_reduce_info *ar;

    if (!xp_event_own_stat(p, l, e, ids->all_reduce_unique_id, &id))
        return 0;
    if (xp_grow((void **)&cs->all_reduce, &cs->all_reduce_cap, cs->nall_reduce,
                sizeof(*cs->all_reduce)) != 0)
        return -ENOMEM;
    cs->all_reduce[cs->nall_reduce].group = group;
    ar = &cs->all_reduce[cs->nall_reduce++].info;
    ar->id = tpu_stat_u64(&id);
    ar->begin_ps = xp_event_start_ps(l, e);
    ar->end_ps = xp_event_end_ps(l, e);
    if (xp_event_own_stat(p, l, e, p->stat_id[XS_DEVICE_OFFSET_PS], &st))
        ar->begin_ps = (int64_t)tpu_stat_u64(&st);
    if (xp_event_own_stat(p, l, e, p->stat_id[XS_DEVICE_DURATION_PS], &st))
        ar->end_ps = ar->begin_ps + (int64_t)tpu_stat_u64(&st);
    return 0;
}

/* The op line's events with a group id through the ancestor stack
 * (ConvertTpuDeviceTraceXLineToStepEvents). */
static int tpu_line_steps(const struct group_source *gs, const struct xp_plane *p, uint32_t li,
                          const struct tpu_ids *ids, struct tpu_core_steps *cs)
{
    const struct xp_line *l = &p->lines[li];
    struct tpu_step_frame *stack = malloc((l->nevents ? l->nevents : 1) * sizeof(*stack));
    uint32_t nstack = 0, i;
    int64_t group, b, en;
    int rc = 0;

    if (stack == NULL)
        return -ENOMEM;
    for (i = 0; rc == 0 && i < l->nevents; i++) {
        if (!event_group(gs, p, li, i, &group))
            continue;
        tpu_device_span(p, l, &l->events[i], &b, &en);
        while (nstack > 0 && !(stack[nstack - 1].begin <= b && en <= stack[nstack - 1].end)) {
            rc = pop_step_op(p, l, ids, &stack[nstack - 1], cs);
            nstack--;
            if (rc != 0)
                break;
        }
        if (nstack > 0)
            stack[nstack - 1].children += (uint64_t)(en - b);
        stack[nstack++] =
            (struct tpu_step_frame){.event = i, .group = group, .begin = b, .end = en};
        rc = note_all_reduce(p, l, &l->events[i], ids, group, cs);
    }
    while (rc == 0 && nstack > 0) {
        rc = pop_step_op(p, l, ids, &stack[nstack - 1], cs);
        nstack--;
    }
    free(stack);
    return rc;
}

/* The first of n entries of size bytes at base, sorted by the int64_t
 * group each starts with (markers, category times, all-reduce ops, groups),
 * whose group is g or later: a binary search, since every step asks. */
static uint32_t group_first(const void *base, uint32_t n, size_t size, int64_t g)
{
    uint32_t lo = 0, hi = n;

    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        int64_t mg;
        memcpy(&mg, (const char *)base + (size_t)mid * size, sizeof(mg));
        if (mg < g)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* 1 if the group-sorted markers of cs have group g; *pos: its first. */
static int find_marker(const struct tpu_core_steps *cs, int64_t g, uint32_t *pos)
{
    *pos = group_first(cs->markers, cs->nmarkers, sizeof(*cs->markers), g);
    return *pos < cs->nmarkers && cs->markers[*pos].group == g;
}

/* 1 if the core's step events hold group g. */
static int core_has_group(const struct tpu_core_steps *cs, int64_t g)
{
    uint32_t k = group_first(cs->groups, cs->ngroups, sizeof(*cs->groups), g);

    return k < cs->ngroups && cs->groups[k] == g;
}

/* 1 if l is the step line of a core (`Steps` / `Sparse Core Steps`, or the
 * step-info thread id). */
static int is_core_step_line(const struct xp_line *l, int sparse)
{
    return (int32_t)l->id == (int32_t)0xdeadbeef ||
           strcmp(l->name, sparse ? "Sparse Core Steps" : "Steps") == 0;
}

/* 1 if l is the op line of a core. */
static int is_core_op_line(const struct xp_line *l, int sparse)
{
    if (xp_line_id_is_derived(l->id))
        return 0;
    return sparse ? strcmp(l->name, "Sparse Core Ops") == 0 : tpu_is_op_line(l->name);
}

/* The markers of a grouped core: its Steps line as the grouping merged it
 * (device timespans already). */
static int grouped_markers(const struct group_source *gs, struct tpu_core_steps *cs)
{
    const struct xp_step_marker *mk = gs->groups->steps[gs->plane];
    uint32_t i, n = gs->groups->nsteps[gs->plane];

    for (i = 0; i < n; i++) {
        if (xp_grow((void **)&cs->markers, &cs->markers_cap, cs->nmarkers, sizeof(*cs->markers)) !=
            0)
            return -ENOMEM;
        cs->markers[cs->nmarkers++] = (struct tpu_marker){
            .group = mk[i].group_id, .begin = mk[i].begin_ps, .end = mk[i].end_ps};
    }
    return 0;
}

static int sums_cmp(const void *a, const void *b, void *ctx)
{
    const struct tpu_group_sums *x = a, *y = b;

    (void)ctx;
    return x->group < y->group ? -1 : x->group > y->group;
}

/* Step markers and per-step category times of one TensorCore or SparseCore
 * plane; its step events are the groups with ops that also have a marker.
 * sums: a TensorCore's per-step op sums too. */
static int tpu_core_steps(const struct group_source *gs, const struct xp_plane *p, int sparse,
                          int sums, struct tpu_core_steps *cs)
{
    struct tpu_ids ids = {
        .program_id = p->stat_id[XS_PROGRAM_ID],
        .symbol_id = p->stat_id[XS_SYMBOL_ID],
        .hlo_category = p->stat_id[XS_HLO_CATEGORY],
        .flops = p->stat_id[XS_FLOPS],
        .model_flops = p->stat_id[XS_MODEL_FLOPS],
        .bytes_accessed = p->stat_id[XS_BYTES_ACCESSED],
        .all_reduce_unique_id = xp_plane_stat_id_by_name(p, "all_reduce_unique_id"),
        .memory_breakdown = xp_plane_stat_id_by_name(p, "memory_access_breakdown"),
    };
    uint32_t li, i, k, pos, op_line = UINT32_MAX;
    int64_t group;
    int rc;

    cs->sparse = sparse;
    cs->core_id = sparse ? TPU_SPARSE_CORE_BASE + (uint32_t)p->id : (uint32_t)p->id;
    if (sums && !sparse && (cs->info = calloc(OP_INFO_SLOTS, sizeof(*cs->info))) == NULL)
        return -ENOMEM;
    for (li = 0; li < p->nlines; li++) {
        const struct xp_line *l = &p->lines[li];
        if (is_core_step_line(l, sparse)) {
            cs->nmarkers = 0; /* one step line per core: the last one counts */
            for (i = 0; i < l->nevents && gs->groups == NULL; i++) {
                struct tpu_marker *m;
                if (!event_group(gs, p, li, i, &group))
                    continue;
                if (xp_grow((void **)&cs->markers, &cs->markers_cap, cs->nmarkers,
                            sizeof(*cs->markers)) != 0)
                    return -ENOMEM;
                m = &cs->markers[cs->nmarkers++];
                m->group = group;
                tpu_device_span(p, l, &l->events[i], &m->begin, &m->end);
            }
        } else if (is_core_op_line(l, sparse)) {
            op_line = li; /* one op line per core: the last one counts */
        }
    }
    if (gs->groups != NULL && (rc = grouped_markers(gs, cs)) != 0)
        return rc;
    if (op_line != UINT32_MAX && (rc = tpu_line_steps(gs, p, op_line, &ids, cs)) != 0)
        return rc;
    free(cs->info);
    cs->info = NULL;
    if (xp_sort_runs(cs->sums, cs->nsums, sizeof(*cs->sums), sums_cmp, NULL) != 0 ||
        xp_sort_runs(cs->markers, cs->nmarkers, sizeof(*cs->markers), marker_cmp, NULL) != 0 ||
        xp_sort_runs(cs->times, cs->ntimes, sizeof(*cs->times), cat_cmp, NULL) != 0 ||
        xp_sort_runs(cs->groups, cs->ngroups, sizeof(*cs->groups), group_cmp, NULL) != 0 ||
        xp_sort_runs(cs->all_reduce, cs->nall_reduce, sizeof(*cs->all_reduce), group_cmp, NULL) !=
            0)
        return -ENOMEM;
    for (i = 0, k = 0; i < cs->ntimes; i++) {
        if (k > 0 && cat_cmp(&cs->times[k - 1], &cs->times[i], NULL) == 0)
            cs->times[k - 1].ps += cs->times[i].ps;
        else
            cs->times[k++] = cs->times[i];
    }
    cs->ntimes = k;
    for (i = 0, k = 0; i < cs->nsums; i++) {
        if (k > 0 && cs->sums[k - 1].group == cs->sums[i].group) {
            op_sums_add(&cs->sums[k - 1].ops, &cs->sums[i].ops);
            op_sums_add(&cs->sums[k - 1].feed, &cs->sums[i].feed);
        } else {
            cs->sums[k++] = cs->sums[i];
        }
    }
    cs->nsums = k;
    for (i = 0, k = 0; i < cs->ngroups; i++) {
        if ((k == 0 || cs->groups[k - 1] != cs->groups[i]) && find_marker(cs, cs->groups[i], &pos))
            cs->groups[k++] = cs->groups[i];
    }
    cs->ngroups = k;
    return 0;
}

int tpu_step_category_cmp(const void *a, const void *b, void *ctx)
{
    (void)ctx;
    return strcmp(((const struct step_category *)a)->name, ((const struct step_category *)b)->name);
}

/* The core's all-reduce ops of step g into out (the step's
 * all_reduce_db_per_core entry). */
static int core_all_reduce(struct op_stats *os, const struct tpu_core_steps *cs, int64_t g,
                           struct step_core *out)
{
    struct all_reduce_info *v;
    uint32_t a, n = 0, i;

    a = group_first(cs->all_reduce, cs->nall_reduce, sizeof(*cs->all_reduce), g);
    while (a + n < cs->nall_reduce && cs->all_reduce[a + n].group == g)
        n++;
    if (n == 0)
        return 0;
    v = arena_alloc(&os->arena, n * sizeof(*v));
    if (v == NULL)
        return -ENOMEM;
    for (i = 0; i < n; i++)
        v[i] = cs->all_reduce[a + i].info;
    out->all_reduce = v;
    out->nall_reduce = n;
    return 0;
}

/* One step's core: category_ps of its op metrics db after
 * SetTotalTimePs(step time) and AddIdleOp, and its all-reduce ops; a
 * TensorCore's total time added to hlo (the step's combined db). */
static int core_step(struct op_stats *os, const struct tpu_core_steps *cs, int64_t g, int64_t begin,
                     int64_t dur, struct step_core *out, struct op_db_sums *hlo)
{
    struct step_category *cats;
    uint64_t op_ps = 0, idle;
    uint32_t t = group_first(cs->times, cs->ntimes, sizeof(*cs->times), g), n = 0, i, j = 0;
    int has_idle = 0;

    while (t + n < cs->ntimes && cs->times[t + n].group == g)
        n++;
    cats = arena_alloc(&os->arena, (n + 1) * sizeof(*cats));
    if (cats == NULL)
        return -ENOMEM;
    for (i = 0; i < n; i++)
        op_ps += cs->times[t + i].ps;
    idle = (uint64_t)dur > op_ps ? (uint64_t)dur - op_ps : 0;
    if (!cs->sparse)
        hlo->total_time_ps += op_ps + idle; /* SetTotalTimePs, then the combiner */
    for (i = 0; i < n; i++) {
        const struct tpu_cat_time *ct = &cs->times[t + i];
        cats[j].name = arena_strndup(&os->arena, ct->name, ct->len);
        if (cats[j].name == NULL)
            return -ENOMEM;
        cats[j].ps = ct->ps;
        if (strcmp(cats[j].name, "IDLE") == 0) {
            cats[j].ps += idle; /* the IDLE row lands in the same key */
            has_idle = 1;
        }
        j++;
    }
    if (!has_idle)
        cats[j++] = (struct step_category){"IDLE", idle};
    if (xp_sort_runs(cats, j, sizeof(*cats), tpu_step_category_cmp, NULL) != 0)
        return -ENOMEM;
    memset(out, 0, sizeof(*out));
    out->core_id = cs->core_id;
    out->step_num = (uint32_t)g;
    out->step_name = "";
    out->begin_ps = (uint64_t)begin;
    out->duration_ps = (uint64_t)dur;
    out->categories = cats;
    out->ncategories = j;
    return core_all_reduce(os, cs, g, out);
}

static int step_core_cmp(const void *a, const void *b, void *ctx)
{
    const struct step_core *x = a, *y = b;

    (void)ctx;
    return x->core_id < y->core_id ? -1 : x->core_id > y->core_id;
}

/* The longest marker of group g on core cs (the first of equal ones):
 * *begin and *dur stay as they are when none is longer than *dur. */
static void longest_marker(const struct tpu_core_steps *cs, int64_t g, int64_t *begin, int64_t *dur)
{
    uint32_t m;

    if (!find_marker(cs, g, &m))
        return;
    for (; m < cs->nmarkers && cs->markers[m].group == g; m++) {
        int64_t len = cs->markers[m].end - cs->markers[m].begin;
        if (len > *dur) {
            *begin = cs->markers[m].begin;
            *dur = len;
        }
    }
}

/* The op sums of the TensorCores with step events, by group. */
struct tpu_host_sums {
    struct tpu_group_sums *v; /* sorted by group, unique */
    uint32_t n, cap;
};

/* One step of the db: every core with step events has the group; step
 * time is the longest marker over all cores (markers in plane order); a
 * SparseCore's is its own longest marker. os->steps has room for it. */
static int tpu_one_step(struct op_stats *os, const struct tpu_core_steps *cores, uint32_t ncores,
                        uint32_t nonempty, const struct tpu_host_sums *sums, int64_t g)
{
    struct step_core *sc;
    struct op_db_sums *hlo;
    int64_t begin = 0, dur = 0;
    uint32_t c, k = 0;
    int rc;

    for (c = 0; c < ncores; c++) {
        if (cores[c].ngroups > 0 && !core_has_group(&cores[c], g))
            return 0;
    }
    for (c = 0; c < ncores; c++) {
        if (cores[c].ngroups > 0)
            longest_marker(&cores[c], g, &begin, &dur);
    }
    if (dur <= 0)
        return 0; /* no step marker observed for the step: skipped */
    sc = arena_alloc(&os->arena, nonempty * sizeof(*sc));
    hlo = arena_alloc(&os->arena, sizeof(*hlo));
    if (sc == NULL || hlo == NULL)
        return -ENOMEM;
    memset(hlo, 0, sizeof(*hlo));
    for (c = 0; c < ncores; c++) {
        int64_t core_begin = begin, core_dur = dur;
        if (cores[c].ngroups == 0)
            continue;
        if (cores[c].sparse) {
            core_begin = 0;
            core_dur = 0;
            longest_marker(&cores[c], g, &core_begin, &core_dur);
        }
        if ((rc = core_step(os, &cores[c], g, core_begin, core_dur, &sc[k++], hlo)) != 0)
            return rc;
    }
    if (xp_sort_runs(sc, k, sizeof(*sc), step_core_cmp, NULL) != 0)
        return -ENOMEM;
    c = group_first(sums->v, sums->n, sizeof(*sums->v), g);
    if (c < sums->n && sums->v[c].group == g) {
        op_sums_add(&hlo->ops, &sums->v[c].ops);
        op_sums_add(&hlo->feed, &sums->v[c].feed);
    }
    os->steps[os->nsteps].step_num = (uint32_t)g;
    os->steps[os->nsteps].cores = sc;
    os->steps[os->nsteps].ncores = k;
    os->steps[os->nsteps].hlo = hlo;
    /* hlo_metrics_db_complete_steps_only: every step's combined */
    op_db_sums_add(&os->complete_steps, hlo);
    os->nsteps++;
    return 0;
}

/* The step db of the TensorCore and SparseCore planes (in plane order): the steps that
 * every core with step events has, in ascending group order. */
static int tpu_step_db(struct op_stats *os, const struct tpu_core_steps *cores, uint32_t ncores,
                       const struct tpu_host_sums *sums)
{
    const struct tpu_core_steps *base = NULL;
    struct step_entry *steps;
    uint32_t c, i, nonempty = 0;
    int rc;

    for (c = 0; c < ncores; c++) {
        if (cores[c].ngroups == 0)
            continue;
        nonempty++;
        if (base == NULL)
            base = &cores[c];
    }
    if (base == NULL)
        return 0;
    /* room for every group of the first core, the most steps there can be */
    if (base->ngroups > SIZE_MAX / sizeof(*os->steps) - os->nsteps)
        return -ENOMEM;
    steps = realloc(os->steps, (os->nsteps + base->ngroups) * sizeof(*steps));
    if (steps == NULL)
        return -ENOMEM;
    os->steps = steps;
    for (i = 0; i < base->ngroups; i++) {
        if ((rc = tpu_one_step(os, cores, ncores, nonempty, sums, base->groups[i])) != 0)
            return rc;
    }
    return 0;
}

/* A TensorCore's sums (sorted, unique groups) merged into the host's in
 * place, from the back, the host's array grown to the merged length only;
 * the core's are freed. Returns 0 or -ENOMEM. */
static int merge_sums(struct tpu_host_sums *h, struct tpu_core_steps *cs)
{
    uint32_t i = 0, j = 0, k = 0;
    int rc = 0;

    if (cs->nsums == 0 || cs->ngroups == 0)
        goto out;
    /* the merged length */
    while (i < h->n || j < cs->nsums) {
        if (j == cs->nsums || (i < h->n && h->v[i].group < cs->sums[j].group)) {
            i++;
        } else {
            if (i < h->n && h->v[i].group == cs->sums[j].group)
                i++;
            j++;
        }
        k++;
    }
    if (k > h->cap) {
        struct tpu_group_sums *v = realloc(h->v, (size_t)k * sizeof(*v));
        if (v == NULL) {
            rc = -ENOMEM;
            goto out;
        }
        h->v = v;
        h->cap = k;
    }
    /* k - i is the number of the core's groups not yet written that the
     * host lacks: a write never lands on an entry still to be read */
    i = h->n;
    j = cs->nsums;
    h->n = k;
    while (j > 0) {
        const struct tpu_group_sums *src = &cs->sums[j - 1];
        if (i > 0 && h->v[i - 1].group > src->group) {
            h->v[--k] = h->v[--i];
        } else if (i > 0 && h->v[i - 1].group == src->group) {
            struct tpu_group_sums t = h->v[--i];
            op_sums_add(&t.ops, &src->ops);
            op_sums_add(&t.feed, &src->feed);
            h->v[--k] = t;
            j--;
        } else {
            h->v[--k] = *src;
            j--;
        }
    }
out:
    free(cs->sums);
    cs->sums = NULL;
    cs->nsums = cs->sums_cap = 0;
    return rc;
}

/* Where the groups of plane p's events come from. */
static struct group_source source_of(const struct xp_groups *groups, uint32_t p)
{
    struct group_source gs = {NULL, NULL, p};

    /* an ungrouped file: XProf groups it first (GroupTpuEventsOSS) */
    if (groups != NULL && !groups->pre_grouped)
        gs.groups = groups;
    else if (groups != NULL)
        gs.saved = groups;
    return gs;
}

/* Step events of every TensorCore and SparseCore plane, then the host's
 * step db. has_sparse_core: a SparseCore plane has core details (XProf
 * marks those CoreDetails is_sparse_core). */
int op_stats_tpu_steps(struct host_ctx *ctx)
{
    const struct xspace *xs = ctx->xs;
    struct tpu_core_steps *cores = calloc(xs->nplanes ? xs->nplanes : 1, sizeof(*cores));
    struct tpu_host_sums sums = {NULL, 0, 0};
    uint32_t p, n = 0;
    int rc = 0;

    if (cores == NULL)
        return -ENOMEM;
    for (p = 0; rc == 0 && p < xs->nplanes; p++) {
        const struct xp_plane *pl = &xs->planes[p];
        uint32_t chip;
        int sparse = tpu_plane_core(pl->name) == TPU_SPARSE_CORE;
        if (strncmp(pl->name, "/device:TPU:", 12) != 0)
            continue;
        if (sparse && tpu_core_details(pl, &chip))
            ctx->os->has_sparse_core = 1;
        struct group_source gs = source_of(ctx->groups, p);
        rc = tpu_core_steps(&gs, pl, sparse, 1, &cores[n++]);
        if (rc == 0)
            rc = merge_sums(&sums, &cores[n - 1]);
    }
    if (rc == 0)
        rc = tpu_step_db(ctx->os, cores, n, &sums);
    for (p = 0; p < n; p++) {
        free(cores[p].markers);
        free(cores[p].times);
        free(cores[p].groups);
        free(cores[p].all_reduce);
        free(cores[p].sums);
        free(cores[p].info);
    }
    free(cores);
    free(sums.v);
    return rc;
}

int tpu_event_group(const struct xspace *xs, const struct xp_groups *groups, uint32_t p,
                    uint32_t li, uint32_t i, int64_t *group)
{
    struct group_source gs = source_of(groups, p);

    return event_group(&gs, &xs->planes[p], li, i, group);
}

int tpu_plane_steps(const struct xspace *xs, const struct xp_groups *groups, uint32_t p,
                    struct tpu_plane_step **steps, uint32_t *n)
{
    const struct xp_plane *pl = &xs->planes[p];
    struct group_source gs = source_of(groups, p);
    struct tpu_core_steps cs;
    uint32_t i;
    int rc;

    *steps = NULL;
    *n = 0;
    memset(&cs, 0, sizeof(cs));
    rc = tpu_core_steps(&gs, pl, tpu_plane_core(pl->name) == TPU_SPARSE_CORE, 0, &cs);
    if (rc == 0 && cs.ngroups > 0 && (*steps = calloc(cs.ngroups, sizeof(**steps))) == NULL)
        rc = -ENOMEM;
    for (i = 0; rc == 0 && i < cs.ngroups; i++) {
        int64_t begin = 0, dur = 0;
        longest_marker(&cs, cs.groups[i], &begin, &dur);
        (*steps)[i].group = cs.groups[i];
        (*steps)[i].duration_ps = dur > 0 ? (uint64_t)dur : 0;
    }
    if (rc == 0)
        *n = cs.ngroups;
    free(cs.markers);
    free(cs.times);
    free(cs.groups);
    free(cs.all_reduce);
    free(cs.sums);
    free(cs.info);
    return rc;
}
