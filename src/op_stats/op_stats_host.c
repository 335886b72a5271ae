/*
 * op_stats_host.c - the /host:CPU plane: host framework op metrics and, for
 * hosts without devices, host step events.
 *
 * Ports of ConvertHostThreadsXPlaneToOpMetricsDb
 * (xprof/convert/xplane_to_op_metrics_db.cc, HostOpMetricsDbBuilder of
 * xprof/utils/op_utils.cc) and ConvertHostThreadsXPlaneToStepEvents
 * (xprof/convert/xplane_to_step_events.cc).
 */
#include "base/sort.h"
#include "op_stats_int.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "base/bigalloc.h"
#include "base/grow.h"
#include "xplane/tfop.h"

/* A framework op an event stands for. */
struct host_op {
    const char *name; /* view */
    size_t name_len;
    const char *type; /* view */
    size_t type_len;
    int64_t id; /* stage id, or 0 */
    int valid;
};

/* An input-pipeline stage op, keyed by stage id. */
struct stage_op {
    int64_t stage_id;
    struct host_op op;
};

/* One op of a line: what it is, when it began and whether it ran eagerly.
 * Ops are numbered 1.. in the order their events come. */
struct line_op {
    const char *name, *type;     /* views, as in struct host_op */
    uint32_t name_len, type_len; /* their lengths */
    int64_t id;                  /* stage id, or 0 */
    int64_t begin;               /* begin time */
    uint8_t is_eager;            /* is_eager stat */
};

/* A begin or end of an op: time, then op number * 2 + (1 for the end). The
 * replay order is (time, op number, begin before end). */
struct activity {
    int64_t ts;
    uint64_t key;
};

static int activity_less(const struct activity *x, const struct activity *y)
{
    return x->ts < y->ts || (x->ts == y->ts && x->key < y->key);
}

static int activity_cmp(const void *a, const void *b, void *ctx)
{
    const struct activity *x = a, *y = b;

    (void)ctx;
    return activity_less(x, y) ? -1 : activity_less(y, x);
}

struct open_op {
    uint64_t op_id;       /* id */
    int64_t start;        /* begin time */
    uint64_t children_ps; /* time of ops that ended while on top */
};

/* HostOpMetricsDbBuilder::EnterOp. */
static int enter_host_op(struct arena *arena, struct op_metrics_db *db, const struct host_op *op,
                         int is_eager, uint64_t time_ps, uint64_t children_ps)
{
    uint64_t self = time_ps - children_ps;
    struct op_metrics *m = op_db_row(db, arena, (uint64_t)op->id, op->name, op->name_len);

    if (m == NULL)
        return -ENOMEM;
    if (m->category[0] == '\0' && op->type_len > 0) {
        char *c = arena_strndup(arena, op->type, op->type_len);
        if (c == NULL)
            return -ENOMEM;
        m->category = c;
    }
    m->num_cores = 1;
    m->is_eager = m->is_eager || is_eager;
    m->occurrences++;
    m->time_ps += time_ps;
    m->self_time_ps += self;
    db->total_op_time_ps += self;
    return 0;
}

/* The begin of op i: from begins when given, else from the op itself (the
 * ops are in begin order then). */
static struct activity begin_of(const struct line_op *ops, const struct activity *begins, size_t i)
{
    if (begins != NULL)
        return begins[i];
    return (struct activity){ops[i].begin, (uint64_t)(i + 1) << 1};
}

/* Replay one line's activities (ProcessTfActivities): begins and ends each
 * sorted, merged on the fly. */
static int replay(struct arena *arena, struct op_metrics_db *db, const struct line_op *ops,
                  const struct activity *begins, const struct activity *ends, size_t n)
{
    struct open_op *stack;
    size_t depth = 0, i = 0, j = 0;
    int64_t last_infeed_begin = 0, last_infeed_dur = 0, first_ts = 0, last_ts = 0;
    int have_infeed = 0;
    int rc = 0;

    if (n == 0)
        return 0;
    stack = malloc(n * sizeof(*stack));
    if (stack == NULL)
        return -ENOMEM;
    {
        struct activity b0 = begin_of(ops, begins, 0);
        first_ts = activity_less(&ends[0], &b0) ? ends[0].ts : b0.ts;
    }
    while ((i < n || j < n) && rc == 0) {
        struct activity bi, *a;
        const struct line_op *lo;
        struct host_op op;
        if (i < n)
            bi = begin_of(ops, begins, i);
        if (j >= n || (i < n && activity_less(&bi, &ends[j]))) {
            a = &bi;
            i++;
        } else {
            a = (struct activity *)&ends[j++];
        }
        last_ts = a->ts;
        if (!(a->key & 1)) {
            stack[depth++] = (struct open_op){a->key >> 1, a->ts, 0};
            continue;
        }
        lo = &ops[(a->key >> 1) - 1];
        op = (struct host_op){lo->name, lo->name_len, lo->type, lo->type_len, lo->id, 1};
        /* pop until the matching id */
        while (depth > 0) {
            struct open_op top = stack[--depth];
            if (top.op_id != a->key >> 1)
                continue;
            {
                int64_t dur = a->ts > top.start ? a->ts - top.start : 0;
                rc = enter_host_op(arena, db, &op, lo->is_eager, (uint64_t)dur, top.children_ps);
                if (depth > 0)
                    stack[depth - 1].children_ps += (uint64_t)dur;
                if (op.type_len >= 13 && memcmp(op.type, "InfeedEnqueue", 13) == 0) {
                    if (have_infeed) {
                        db->host_infeed_enq_ps += (uint64_t)last_infeed_dur;
                        db->host_infeed_enq_diff_ps += (uint64_t)(top.start - last_infeed_begin);
                    }
                    have_infeed = 1;
                    last_infeed_begin = top.start;
                    last_infeed_dur = dur;
                }
            }
            break;
        }
    }
    op_db_set_total_time(db, (uint64_t)(last_ts - first_ts));
    free(stack);
    return rc;
}

/* ---- host step events ---- */

static int is_explicit_marker(const char *name)
{
    return (strncmp(name, "train", 5) == 0 || strncmp(name, "test", 4) == 0 ||
            strncmp(name, "TraceContext", 12) == 0) &&
           strchr(name, '/') == NULL;
}

static int is_real_cpu_compute(const char *name)
{
    return !(strncmp(name, "EagerExecute", 12) == 0 ||
             strncmp(name, "EagerLocalExecute", 17) == 0 ||
             strncmp(name, "EagerKernelExecute", 18) == 0 ||
             strncmp(name, "FunctionRun", 11) == 0 || is_explicit_marker(name));
}

static uint8_t classify_cpu_event(const char *name, int has_device, int has_corr, int root_stage)
{
    struct tfop op;

    tfop_parse(name, strlen(name), &op);
    if ((op.category != TFOP_UNKNOWN && op.type_len >= 13 &&
         memcmp(op.type, "InfeedEnqueue", 13) == 0) ||
        op.category == TFOP_MEMCPY_HTOD)
        return EV_HOST_TO_DEVICE / 10;
    if (op.category == TFOP_MEMCPY_HTOH)
        return EV_HOST_TO_HOST / 10;
    if (has_device && (has_corr || strncasecmp(name, "ExecutorState::Process", 22) == 0))
        return EV_HOST_PREPARE / 10;
    if (strncasecmp(name, "IteratorGetNext", 15) == 0 || root_stage)
        return EV_HOST_WAIT_INPUT / 10;
    return EV_HOST_COMPUTE / 10;
}

struct ipl_ref {
    int64_t begin, end; /* span */
    int is_stage;       /* has _ipl_stage_name */
    int is_desc;        /* under a stage */
};

/* A producer's (type, id): XProf's async_input_pipeline_parents, kept
 * sorted so that a consumer finds its parent by halves. */
struct ctx_pair {
    uint64_t type;
    uint64_t id;
};

static int pair_cmp(const void *a, const void *b)
{
    const struct ctx_pair *x = a, *y = b;

    if (x->type != y->type)
        return x->type < y->type ? -1 : 1;
    return (x->id > y->id) - (x->id < y->id);
}

/* 1 if (type, id) is one of the n sorted pairs v. */
static int pair_present(const struct ctx_pair *v, size_t n, uint64_t type, uint64_t id)
{
    struct ctx_pair key = {type, id};
    size_t lo = 0, hi = n;

    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = pair_cmp(&v[mid], &key);
        if (c == 0)
            return 1;
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return 0;
}

/* One line's step events: a slot per group, and the groups the line touched
 * (in touched[0..ntouched)), so that combining and clearing them costs what
 * the line holds, not the number of groups. */
struct line_steps {
    struct step_events se; /* slots by group, all empty between lines */
    uint32_t *touched;     /* groups present in se */
    uint32_t ntouched;     /* entries in touched */
};

/* ConvertHostThreadsXLineToStepEvents for one line, into ls (empty). */
static int host_line_steps(struct host_ctx *ctx, uint32_t p, uint32_t l, struct line_steps *ls,
                           const struct ctx_pair *parents, size_t nparents)
{
    struct step_events *se = &ls->se;
    const struct xp_plane *pl = &ctx->xs->planes[p];
    const struct xp_line *ln = &pl->lines[l];
    int64_t stage_name_id = xp_plane_stat_id_by_name(pl, "_ipl_stage_name");
    struct ipl_ref *stack = malloc((ln->nevents ? ln->nevents : 1) * sizeof(*stack));
    size_t depth = 0;
    uint32_t e;
    int rc = 0;

    if (stack == NULL)
        return -ENOMEM;
    for (e = 0; e < ln->nevents && rc == 0; e++) {
        const struct xp_event *ev = &ln->events[e];
        const char *name = xp_event_meta(pl, ev)->name;
        struct xp_stat_iter it;
        struct xp_stat st;
        int64_t corr = -1, b = xp_event_start_ps(ln, ev), end = b + ev->duration_ps;
        int has_ct = 0, has_c = 0, is_stage = 0;
        uint64_t ct = 0, c = 0;
        const char *step_name = NULL;
        size_t step_name_len = 0;
        int32_t group = xp_group_of(ctx->groups, p, l, e);
        struct ipl_ref cur;
        struct step_details *d;
        int was_present;

        xp_stat_iter_init(&it, pl, ln, ev);
        while (xp_stat_next(&it, &st) == 1) {
            if (st.meta_id == pl->stat_id[XS_CORRELATION_ID])
                corr = xp_stat_int(&st);
            else if (st.meta_id == pl->stat_id[XS_STEP_NAME] &&
                     (st.kind == XP_STAT_STR || st.kind == XP_STAT_REF)) {
                step_name = st.str;
                step_name_len = st.len;
            } else if (st.meta_id == stage_name_id)
                is_stage = (st.kind == XP_STAT_STR || st.kind == XP_STAT_REF) && st.len > 0;
            else if (st.meta_id == pl->stat_id[XS_CONSUMER_TYPE]) {
                has_ct = 1;
                ct = (uint64_t)xp_stat_int(&st);
            } else if (st.meta_id == pl->stat_id[XS_CONSUMER_ID]) {
                has_c = 1;
                c = (uint64_t)xp_stat_int(&st);
            }
        }
        /* the step_name XProf's grouping adds to a named root */
        if (step_name == NULL && group >= 0 && !ctx->groups->pre_grouped) {
            const struct xp_group *gr = &ctx->groups->groups[group];
            if (gr->named_root && gr->root_plane == p && gr->root_line == l &&
                gr->root_event == e) {
                step_name = gr->name;
                step_name_len = strlen(gr->name);
            }
        }
        cur.begin = b;
        cur.end = end;
        cur.is_stage = is_stage;
        cur.is_desc = 0;
        if (has_ct && has_c)
            cur.is_desc = pair_present(parents, nparents, ct, c);
        while (depth > 0 && !(stack[depth - 1].begin <= b && end <= stack[depth - 1].end))
            depth--;
        if (depth > 0)
            cur.is_desc = cur.is_desc || stack[depth - 1].is_desc || stack[depth - 1].is_stage;
        stack[depth++] = cur;
        if (group < 0 || (uint32_t)group >= se->n)
            continue;
        d = &se->by_group[group];
        was_present = d->present;
        if (is_explicit_marker(name)) {
            rc = step_add_marker(d, b, end, MK_HOST_EXPLICIT);
        } else if (step_name_len > 0) {
            rc = step_add_marker(d, b, end, MK_HOST_IMPLICIT);
        } else if (is_real_cpu_compute(name)) {
            rc = step_add_event(
                d, b, end, classify_cpu_event(name, 0, corr >= 0, cur.is_stage && !cur.is_desc));
        }
        if (rc == 0 && step_name_len > 0) {
            char *nm = arena_strndup(&ctx->os->arena, step_name, step_name_len);
            if (nm == NULL)
                rc = -ENOMEM;
            else
                d->step_name = nm;
            d->present = 1;
        }
        if (!was_present && d->present)
            ls->touched[ls->ntouched++] = (uint32_t)group;
    }
    free(stack);
    return rc;
}

static int stage_cmp(const void *a, const void *b)
{
    int64_t x = ((const struct stage_op *)a)->stage_id, y = ((const struct stage_op *)b)->stage_id;

    return x < y ? -1 : x > y;
}

/* xp_pick slots of the host op pass. */
enum { HS_STAGE_ID, HS_IS_EAGER, HS_TF_OP, HS_COUNT };

/* What one line gives: its op metrics db, strings in its own arena. */
struct host_line_out {
    struct arena arena;      /* strings of db */
    struct op_metrics_db db; /* the line's ops (+ IDLE) */
    int done;                /* 1: db holds the line */
};

/* Scratch arrays of one line, kept for the next line so that their pages
 * are written fresh only once (page faults cost more than the work). */
struct line_bufs {
    struct line_op *ops;
    struct activity *ends;
    size_t cap; /* entries in each */
};
#define HOST_POOL 8

struct host_plane_work {
    pthread_mutex_t pool_lock;        /* guards pool */
    struct line_bufs pool[HOST_POOL]; /* free scratch arrays */
    uint32_t npool;                   /* entries in pool */
    struct host_ctx *ctx;
    uint32_t p;                 /* plane index */
    struct host_op *by_meta;    /* legacy ops by event metadata */
    struct stage_op *stages;    /* input-pipeline stages, by stage id */
    size_t nstages;             /* entries in stages */
    struct xp_pick pick;        /* stage id, is_eager, tf_op (first of each) */
    struct host_line_out *outs; /* [line] */
};

/* The op of an event by its input-pipeline stage id, or NULL. */
static const struct host_op *stage_op_of(const struct host_plane_work *w, int64_t stage_id)
{
    struct stage_op key, *found;

    if (w->nstages == 0)
        return NULL;
    key.stage_id = stage_id;
    found = bsearch(&key, w->stages, w->nstages, sizeof(*w->stages), stage_cmp);
    while (found != NULL && found > w->stages && found[-1].stage_id == stage_id)
        found--;
    return found != NULL ? &found->op : NULL;
}

/* Add an op of [b, end] to the line's lists. */
static void add_op(struct line_op *ops, struct activity *ends, size_t *n, const struct host_op *op,
                   int eager, int64_t b, int64_t end)
{
    uint64_t id = (uint64_t)*n + 1;

    ops[*n] = (struct line_op){op->name, op->type, (uint32_t)op->name_len, (uint32_t)op->type_len,
                               op->id,   b,        (uint8_t)eager};
    ends[*n] = (struct activity){end, (id << 1) | 1};
    (*n)++;
}

static void bufs_free(struct line_bufs *b)
{
    big_free(b->ops);
    big_free(b->ends);
    memset(b, 0, sizeof(*b));
}

/* Scratch arrays of at least cap entries: a pooled set, or new ones. */
static int bufs_take(struct host_plane_work *w, size_t cap, struct line_bufs *b)
{
    memset(b, 0, sizeof(*b));
    pthread_mutex_lock(&w->pool_lock);
    if (w->npool > 0)
        *b = w->pool[--w->npool];
    pthread_mutex_unlock(&w->pool_lock);
    if (b->cap >= cap)
        return 0;
    bufs_free(b);
    b->ops = big_malloc(cap * sizeof(*b->ops));
    b->ends = big_malloc(cap * sizeof(*b->ends));
    b->cap = cap;
    if (b->ops == NULL || b->ends == NULL) {
        bufs_free(b);
        return -ENOMEM;
    }
    return 0;
}

static void bufs_give(struct host_plane_work *w, struct line_bufs *b)
{
    pthread_mutex_lock(&w->pool_lock);
    if (w->npool < HOST_POOL) {
        w->pool[w->npool++] = *b;
        memset(b, 0, sizeof(*b));
    }
    pthread_mutex_unlock(&w->pool_lock);
    bufs_free(b);
}

int host_plane_line(struct host_plane_work *w, uint32_t l)
{
    const struct xp_plane *pl = &w->ctx->xs->planes[w->p];
    const struct xp_line *ln = &pl->lines[l];
    struct host_line_out *out = &w->outs[l];
    size_t cap = (size_t)ln->nevents * 2, n = 0, k;
    struct line_op *ops = NULL;
    struct activity *begins = NULL, *ends = NULL;
    struct line_bufs bufs;
    uint32_t e;
    int rc = 0, sorted = 1;

    if (xp_line_id_is_derived(ln->id))
        return 0;
    arena_init(&out->arena);
    op_db_init(&out->db);
    out->done = 1;
    memset(&bufs, 0, sizeof(bufs));
    if (cap > 0) {
        if ((rc = bufs_take(w, cap, &bufs)) != 0)
            goto out;
        ops = bufs.ops;
        ends = bufs.ends;
    }
    for (e = 0; e < ln->nevents; e++) {
        const struct xp_event *ev = &ln->events[e];
        const struct host_op *op = NULL;
        int64_t b = xp_event_start_ps(ln, ev), end = b + ev->duration_ps;
        struct xp_stat st[HS_COUNT];
        uint32_t found = xp_pick_event(&w->pick, ln, ev, st);

        if (found & (1u << HS_STAGE_ID))
            op = stage_op_of(w, xp_stat_int(&st[HS_STAGE_ID]));
        else if (w->by_meta[ev->meta].valid)
            op = &w->by_meta[ev->meta];
        if (op != NULL) {
            int eager = (found & (1u << HS_IS_EAGER))
                            ? xp_stat_int(&st[HS_IS_EAGER]) != 0
                            : xp_group_is_eager(w->ctx->groups, w->p, l, e);
            add_op(ops, ends, &n, op, eager, b, end);
        }
        if ((found & (1u << HS_TF_OP)) &&
            (st[HS_TF_OP].kind == XP_STAT_STR || st[HS_TF_OP].kind == XP_STAT_REF) &&
            st[HS_TF_OP].len > 0) {
            struct tfop top;
            struct host_op hop;
            tfop_parse(st[HS_TF_OP].str, st[HS_TF_OP].len, &top);
            hop = (struct host_op){top.name, top.name_len, top.type, top.type_len, 0, 1};
            add_op(ops, ends, &n, &hop, 0, b, end);
        }
    }
    /* begins come in op order, sorted already when the events are (the
     * usual case: then they are read from the ops) */
    for (k = 1; k < n && sorted; k++)
        sorted = ops[k].begin >= ops[k - 1].begin;
    if (!sorted) {
        begins = big_malloc(n * sizeof(*begins));
        if (begins == NULL) {
            rc = -ENOMEM;
            goto out;
        }
        for (k = 0; k < n; k++)
            begins[k] = (struct activity){ops[k].begin, (uint64_t)(k + 1) << 1};
    }
    if ((!sorted && xp_sort_runs(begins, n, sizeof(*begins), activity_cmp, NULL) != 0) ||
        xp_sort_runs(ends, n, sizeof(*ends), activity_cmp, NULL) != 0) {
        rc = -ENOMEM;
        goto out;
    }
    rc = replay(&out->arena, &out->db, ops, begins, ends, n);
    if (rc == 0) {
        op_db_add_idle(&out->db, &out->arena);
        if (out->db.oom)
            rc = -ENOMEM;
    }
out:
    big_free(begins);
    bufs_give(w, &bufs);
    return rc;
}

int host_plane_begin(struct host_ctx *ctx, uint32_t p, struct host_plane_work **wp)
{
    const struct xp_plane *pl = &ctx->xs->planes[p];
    struct host_plane_work *w = calloc(1, sizeof(*w));
    size_t stages_cap = 0;
    int64_t stage_id_id = xp_plane_stat_id_by_name(pl, "_ipl_stage_id");
    int64_t stage_cat_id = xp_plane_stat_id_by_name(pl, "_ipl_stage_cat");
    int64_t pick_ids[HS_COUNT];
    uint32_t i, l, e;

    *wp = w;
    if (w == NULL)
        return -ENOMEM;
    pthread_mutex_init(&w->pool_lock, NULL);
    w->ctx = ctx;
    w->p = p;
    w->by_meta = calloc(pl->nemeta ? pl->nemeta : 1, sizeof(*w->by_meta));
    w->outs = calloc(pl->nlines ? pl->nlines : 1, sizeof(*w->outs));
    pick_ids[HS_STAGE_ID] = stage_id_id;
    pick_ids[HS_IS_EAGER] = pl->stat_id[XS_IS_EAGER];
    pick_ids[HS_TF_OP] = pl->stat_id[XS_TF_OP];
    if (w->by_meta == NULL || w->outs == NULL ||
        xp_pick_init(&w->pick, pl, pick_ids, HS_COUNT, 0) != 0)
        return -ENOMEM;
    /* legacy ops by metadata name */
    for (i = 1; i < pl->nemeta; i++) {
        struct tfop op;
        const char *nm = pl->emeta[i].name;
        if (nm[0] == '\0')
            continue;
        tfop_parse(nm, strlen(nm), &op);
        if (op.category != TFOP_UNKNOWN)
            w->by_meta[i] = (struct host_op){op.name, op.name_len, op.type, op.type_len, 0, 1};
    }
    /* input-pipeline stages by stage id (first seen wins) */
    if (stage_id_id != XP_NO_STAT && stage_cat_id != XP_NO_STAT) {
        for (l = 0; l < pl->nlines; l++) {
            const struct xp_line *ln = &pl->lines[l];
            for (e = 0; e < ln->nevents; e++) {
                struct xp_stat sid, scat;
                const char *nm = xp_event_meta(pl, &ln->events[e])->name;
                if (nm[0] == '\0' ||
                    !xp_event_own_stat(pl, ln, &ln->events[e], stage_id_id, &sid) ||
                    !xp_event_own_stat(pl, ln, &ln->events[e], stage_cat_id, &scat))
                    continue;
                if (w->nstages == stages_cap) {
                    size_t nc = stages_cap ? stages_cap * 2 : 16;
                    struct stage_op *v = realloc(w->stages, nc * sizeof(*v));
                    if (v == NULL)
                        return -ENOMEM;
                    w->stages = v;
                    stages_cap = nc;
                }
                w->stages[w->nstages].stage_id = xp_stat_int(&sid);
                w->stages[w->nstages].op = (struct host_op){
                    nm,
                    strlen(nm),
                    (scat.kind == XP_STAT_STR || scat.kind == XP_STAT_REF) ? scat.str : "",
                    (scat.kind == XP_STAT_STR || scat.kind == XP_STAT_REF) ? scat.len : 0,
                    xp_stat_int(&sid),
                    1};
                w->nstages++;
            }
        }
        /* stable sort keeps the first of a stage id first */
        for (i = 1; i < w->nstages; i++) {
            struct stage_op x = w->stages[i];
            size_t j = i;
            while (j > 0 && stage_cmp(&w->stages[j - 1], &x) > 0) {
                w->stages[j] = w->stages[j - 1];
                j--;
            }
            w->stages[j] = x;
        }
    }
    return 0;
}

/* The (type, id) of every producer event of the plane, sorted, without
 * repeats; *out NULL when there is none. Returns 0 or -ENOMEM. */
static int producer_pairs(const struct xp_plane *pl, struct ctx_pair **out, size_t *n)
{
    struct ctx_pair *v = NULL;
    uint32_t cap = 0, used = 0, i, keep, l, e;

    for (l = 0; l < pl->nlines; l++) {
        const struct xp_line *ln = &pl->lines[l];
        for (e = 0; e < ln->nevents; e++) {
            struct xp_stat pt, pp;
            if (!xp_event_own_stat(pl, ln, &ln->events[e], pl->stat_id[XS_PRODUCER_TYPE], &pt) ||
                !xp_event_own_stat(pl, ln, &ln->events[e], pl->stat_id[XS_PRODUCER_ID], &pp))
                continue;
            if (xp_grow((void **)&v, &cap, used, sizeof(*v)) != 0) {
                free(v);
                return -ENOMEM;
            }
            v[used].type = (uint64_t)xp_stat_int(&pt);
            v[used].id = (uint64_t)xp_stat_int(&pp);
            used++;
        }
    }
    xp_qsort(v, used, sizeof(*v), pair_cmp);
    for (i = 0, keep = 0; i < used; i++) {
        if (keep == 0 || pair_cmp(&v[keep - 1], &v[i]) != 0)
            v[keep++] = v[i];
    }
    *out = v;
    *n = keep;
    return 0;
}

/* Host step events of a host without devices (and of a TPU host): each
 * line's, combined into host_steps (UnionCombineStepEvents). */
static int host_plane_steps(struct host_ctx *ctx, uint32_t p, struct step_events *host_steps)
{
    const struct xp_plane *pl = &ctx->xs->planes[p];
    struct ctx_pair *parents = NULL;
    size_t nparents = 0;
    struct line_steps ls = {{NULL, 0}, NULL, 0};
    uint32_t l, i;
    int rc = producer_pairs(pl, &parents, &nparents);

    if (rc == 0)
        rc = step_events_init(&ls.se, host_steps->n);
    if (rc == 0 &&
        (ls.touched = malloc((host_steps->n ? host_steps->n : 1) * sizeof(*ls.touched))) == NULL)
        rc = -ENOMEM;
    for (l = 0; l < pl->nlines && rc == 0; l++) {
        ls.ntouched = 0;
        rc = host_line_steps(ctx, p, l, &ls, parents, nparents);
        for (i = 0; i < ls.ntouched; i++) {
            struct step_details *d = &ls.se.by_group[ls.touched[i]];
            if (rc == 0)
                rc = step_details_combine(&host_steps->by_group[ls.touched[i]], d);
            step_details_release(d);
            memset(d, 0, sizeof(*d));
        }
    }
    step_events_free(&ls.se);
    free(ls.touched);
    free(parents);
    return rc;
}

int host_plane_end(struct host_plane_work *w, int has_device, struct step_events *host_steps)
{
    struct op_stats *os = w->ctx->os;
    const struct xp_plane *pl = &w->ctx->xs->planes[w->p];
    uint32_t l, i;

    for (l = 0; l < pl->nlines; l++) {
        struct host_line_out *out = &w->outs[l];
        if (!out->done)
            continue;
        /* categories move to the op_stats arena (names are copied by combine) */
        for (i = 0; i < out->db.nrows; i++) {
            struct op_metrics *m = &out->db.rows[i];
            if (m->category[0] != '\0') {
                char *c = arena_strndup(&os->arena, m->category, strlen(m->category));
                if (c == NULL)
                    return -ENOMEM;
                m->category = c;
            }
        }
        op_db_combine(&os->host_db, &os->arena, &out->db, 0);
        if (os->host_db.oom)
            return -ENOMEM;
    }
    /* without devices they are the steps; on TPU MayFixTpuStepAnalysis reads
     * them (XProf makes them as for a host without devices) */
    if ((!has_device || os->hardware_type == HW_TPU) && host_steps != NULL)
        return host_plane_steps(w->ctx, w->p, host_steps);
    return 0;
}

void host_plane_free(struct host_plane_work *w)
{
    uint32_t l;

    if (w == NULL)
        return;
    if (w->outs != NULL) {
        for (l = 0; l < w->ctx->xs->planes[w->p].nlines; l++) {
            if (w->outs[l].done) {
                op_db_free(&w->outs[l].db);
                arena_free(&w->outs[l].arena);
            }
        }
    }
    for (l = 0; l < w->npool; l++)
        bufs_free(&w->pool[l]);
    pthread_mutex_destroy(&w->pool_lock);
    xp_pick_free(&w->pick);
    free(w->outs);
    free(w->stages);
    free(w->by_meta);
    free(w);
}

int op_stats_host_plane(struct host_ctx *ctx, uint32_t p, int has_device,
                        struct step_events *host_steps)
{
    struct host_plane_work *w;
    uint32_t l;
    int rc = host_plane_begin(ctx, p, &w);

    for (l = 0; rc == 0 && l < ctx->xs->planes[p].nlines; l++)
        rc = host_plane_line(w, l);
    if (rc == 0)
        rc = host_plane_end(w, has_device, host_steps);
    host_plane_free(w);
    return rc;
}
