/*
 * op_stats_host.c - the /host:CPU plane: host framework op metrics and, for
 * hosts without devices, host step events.
 *
 * Ports of ConvertHostThreadsXPlaneToOpMetricsDb
 * (xprof/convert/xplane_to_op_metrics_db.cc, HostOpMetricsDbBuilder of
 * xprof/utils/op_utils.cc) and ConvertHostThreadsXPlaneToStepEvents
 * (xprof/convert/xplane_to_step_events.cc).
 */
#include "sort.h"
#include "op_stats_int.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "op_stats_tfop.h"

int op_event_stat(const struct xp_plane *p, const struct xp_line *l, const struct xp_event *e,
                  int64_t id, struct xp_stat *st)
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

struct activity {
    int64_t ts;        /* time */
    uint32_t op_id;    /* pairs begin and end */
    uint8_t is_end;    /* 0 = begin */
    uint8_t is_eager;  /* is_eager stat */
    struct host_op op; /* the op */
};

static int activity_cmp(const void *a, const void *b)
{
    const struct activity *x = a, *y = b;

    if (x->ts != y->ts)
        return x->ts < y->ts ? -1 : 1;
    /* stable: insertion order is (op_id, begin before end) */
    if (x->op_id != y->op_id)
        return x->op_id < y->op_id ? -1 : 1;
    return (int)x->is_end - (int)y->is_end;
}

struct open_op {
    uint32_t op_id;       /* id */
    int64_t start;        /* begin time */
    uint64_t children_ps; /* time of ops that ended while on top */
};

/* HostOpMetricsDbBuilder::EnterOp. */
static int enter_host_op(struct op_stats *os, struct op_metrics_db *db, const struct host_op *op,
                         int is_eager, uint64_t time_ps, uint64_t children_ps)
{
    uint64_t self = time_ps - children_ps;
    struct op_metrics *m = op_db_row(db, &os->arena, (uint64_t)op->id, op->name, op->name_len);

    if (m == NULL)
        return -ENOMEM;
    if (m->category[0] == '\0' && op->type_len > 0) {
        char *c = arena_strndup(&os->arena, op->type, op->type_len);
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

/* Replay one line's activities (ProcessTfActivities). */
static int replay(struct op_stats *os, struct op_metrics_db *db, struct activity *acts, size_t n)
{
    struct open_op *stack;
    size_t depth = 0, i;
    int64_t last_infeed_begin = 0, last_infeed_dur = 0;
    int have_infeed = 0;
    int rc = 0;

    if (n == 0)
        return 0;
    xp_qsort(acts, n, sizeof(*acts), activity_cmp);
    stack = malloc(n * sizeof(*stack));
    if (stack == NULL)
        return -ENOMEM;
    for (i = 0; i < n && rc == 0; i++) {
        const struct activity *a = &acts[i];
        if (!a->is_end) {
            stack[depth++] = (struct open_op){a->op_id, a->ts, 0};
            continue;
        }
        /* pop until the matching id */
        while (depth > 0) {
            struct open_op top = stack[--depth];
            if (top.op_id != a->op_id)
                continue;
            {
                int64_t dur = a->ts > top.start ? a->ts - top.start : 0;
                rc = enter_host_op(os, db, &a->op, a->is_eager, (uint64_t)dur, top.children_ps);
                if (depth > 0)
                    stack[depth - 1].children_ps += (uint64_t)dur;
                if (a->op.type_len >= 13 && memcmp(a->op.type, "InfeedEnqueue", 13) == 0) {
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
    op_db_set_total_time(db, (uint64_t)(acts[n - 1].ts - acts[0].ts));
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

/* ConvertHostThreadsXLineToStepEvents for one line, into se. */
static int host_line_steps(struct host_ctx *ctx, uint32_t p, uint32_t l, struct step_events *se,
                           const uint64_t (*parents)[2], size_t nparents)
{
    const struct xp_plane *pl = &ctx->xs->planes[p];
    const struct xp_line *ln = &pl->lines[l];
    int64_t stage_name_id = xp_plane_stat_id_by_name(pl, "_ipl_stage_name");
    struct ipl_ref *stack = malloc((ln->nevents ? ln->nevents : 1) * sizeof(*stack));
    size_t depth = 0;
    uint32_t e, gi;
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
        size_t k;

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
        if (has_ct && has_c) {
            for (k = 0; k < nparents; k++) {
                if (parents[k][0] == ct && parents[k][1] == c) {
                    cur.is_desc = 1;
                    break;
                }
            }
        }
        while (depth > 0 && !(stack[depth - 1].begin <= b && end <= stack[depth - 1].end))
            depth--;
        if (depth > 0)
            cur.is_desc = cur.is_desc || stack[depth - 1].is_desc || stack[depth - 1].is_stage;
        stack[depth++] = cur;
        if (group < 0 || (uint32_t)group >= se->n)
            continue;
        if (is_explicit_marker(name)) {
            rc = step_add_marker(&se->by_group[group], b, end, MK_HOST_EXPLICIT);
        } else if (step_name_len > 0) {
            rc = step_add_marker(&se->by_group[group], b, end, MK_HOST_IMPLICIT);
        } else if (is_real_cpu_compute(name)) {
            rc = step_add_event(
                &se->by_group[group], b, end,
                classify_cpu_event(name, 0, corr >= 0, cur.is_stage && !cur.is_desc));
        }
        if (rc == 0 && step_name_len > 0) {
            char *nm = arena_strndup(&ctx->os->arena, step_name, step_name_len);
            if (nm == NULL)
                rc = -ENOMEM;
            else
                se->by_group[group].step_name = nm;
            se->by_group[group].present = 1;
        }
    }
    (void)gi;
    free(stack);
    return rc;
}

static int stage_cmp(const void *a, const void *b)
{
    int64_t x = ((const struct stage_op *)a)->stage_id, y = ((const struct stage_op *)b)->stage_id;

    return x < y ? -1 : x > y;
}

/* The stats the host op pass reads, each the first of its id on the event,
 * found in one walk over the event's stats. */
struct host_ev_stats {
    int has_stage_id, has_is_eager, has_tf_op;
    struct xp_stat stage_id, is_eager, tf_op;
};

static void read_host_ev_stats(const struct xp_plane *pl, const struct xp_line *ln,
                               const struct xp_event *ev, int64_t stage_id_id,
                               struct host_ev_stats *hs)
{
    int64_t eager_id = pl->stat_id[XS_IS_EAGER], tf_op_id = pl->stat_id[XS_TF_OP];
    struct xp_stat_iter it;
    struct xp_stat st;

    hs->has_stage_id = hs->has_is_eager = hs->has_tf_op = 0;
    if (stage_id_id == XP_NO_STAT && eager_id == XP_NO_STAT && tf_op_id == XP_NO_STAT)
        return;
    xp_stat_iter_init(&it, pl, ln, ev);
    while (xp_stat_next(&it, &st) == 1) {
        if (!hs->has_stage_id && stage_id_id != XP_NO_STAT && st.meta_id == stage_id_id) {
            hs->has_stage_id = 1;
            hs->stage_id = st;
        }
        if (!hs->has_is_eager && eager_id != XP_NO_STAT && st.meta_id == eager_id) {
            hs->has_is_eager = 1;
            hs->is_eager = st;
        }
        if (!hs->has_tf_op && tf_op_id != XP_NO_STAT && st.meta_id == tf_op_id) {
            hs->has_tf_op = 1;
            hs->tf_op = st;
        }
    }
}

int op_stats_host_plane(struct host_ctx *ctx, uint32_t p, int has_device,
                        struct step_events *host_steps)
{
    const struct xp_plane *pl = &ctx->xs->planes[p];
    struct op_stats *os = ctx->os;
    struct host_op *by_meta = calloc(pl->nemeta ? pl->nemeta : 1, sizeof(*by_meta));
    struct stage_op *stages = NULL;
    size_t nstages = 0, stages_cap = 0, nacts, acts_cap = 0;
    struct activity *acts = NULL;
    int64_t stage_id_id = xp_plane_stat_id_by_name(pl, "_ipl_stage_id");
    int64_t stage_cat_id = xp_plane_stat_id_by_name(pl, "_ipl_stage_cat");
    uint64_t(*parents)[2] = NULL;
    size_t nparents = 0, parents_cap = 0;
    uint32_t i, l, e;
    int rc = 0;

    if (by_meta == NULL)
        return -ENOMEM;
    /* legacy ops by metadata name */
    for (i = 1; i < pl->nemeta; i++) {
        struct tfop op;
        const char *nm = pl->emeta[i].name;
        if (nm[0] == '\0')
            continue;
        tfop_parse(nm, strlen(nm), &op);
        if (op.category != TFOP_UNKNOWN)
            by_meta[i] = (struct host_op){op.name, op.name_len, op.type, op.type_len, 0, 1};
    }
    /* input-pipeline stages by stage id (first seen wins) */
    if (stage_id_id != XP_NO_STAT && stage_cat_id != XP_NO_STAT) {
        for (l = 0; l < pl->nlines; l++) {
            const struct xp_line *ln = &pl->lines[l];
            for (e = 0; e < ln->nevents; e++) {
                struct xp_stat sid, scat;
                const char *nm = xp_event_meta(pl, &ln->events[e])->name;
                if (nm[0] == '\0' || !op_event_stat(pl, ln, &ln->events[e], stage_id_id, &sid) ||
                    !op_event_stat(pl, ln, &ln->events[e], stage_cat_id, &scat))
                    continue;
                if (nstages == stages_cap) {
                    size_t nc = stages_cap ? stages_cap * 2 : 16;
                    struct stage_op *v = realloc(stages, nc * sizeof(*v));
                    if (v == NULL) {
                        rc = -ENOMEM;
                        goto out;
                    }
                    stages = v;
                    stages_cap = nc;
                }
                stages[nstages].stage_id = xp_stat_int(&sid);
                stages[nstages].op = (struct host_op){
                    nm,
                    strlen(nm),
                    (scat.kind == XP_STAT_STR || scat.kind == XP_STAT_REF) ? scat.str : "",
                    (scat.kind == XP_STAT_STR || scat.kind == XP_STAT_REF) ? scat.len : 0,
                    xp_stat_int(&sid),
                    1};
                nstages++;
            }
        }
        /* stable sort keeps the first of a stage id first */
        for (i = 1; i < nstages; i++) {
            struct stage_op x = stages[i];
            size_t j = i;
            while (j > 0 && stage_cmp(&stages[j - 1], &x) > 0) {
                stages[j] = stages[j - 1];
                j--;
            }
            stages[j] = x;
        }
    }
    for (l = 0; l < pl->nlines; l++) {
        const struct xp_line *ln = &pl->lines[l];
        struct op_metrics_db line_db;
        uint32_t op_id = 0;

        if (xp_line_id_is_derived(ln->id))
            continue;
        nacts = 0;
        if (acts_cap < (size_t)ln->nevents * 4) {
            struct activity *v = realloc(acts, ((size_t)ln->nevents * 4 + 1) * sizeof(*v));
            if (v == NULL) {
                rc = -ENOMEM;
                goto out;
            }
            acts = v;
            acts_cap = (size_t)ln->nevents * 4 + 1;
        }
        for (e = 0; e < ln->nevents; e++) {
            const struct xp_event *ev = &ln->events[e];
            const struct host_op *op = NULL;
            struct xp_stat st;
            int64_t b = xp_event_start_ps(ln, ev), end = b + ev->duration_ps;
            int eager = 0;
            struct stage_op key, *found;
            struct host_ev_stats hs;

            read_host_ev_stats(pl, ln, ev, stage_id_id, &hs);
            if (hs.has_stage_id) {
                key.stage_id = xp_stat_int(&hs.stage_id);
                found = nstages == 0 ? NULL
                                     : bsearch(&key, stages, nstages, sizeof(*stages), stage_cmp);
                while (found != NULL && found > stages && found[-1].stage_id == key.stage_id)
                    found--;
                if (found != NULL)
                    op = &found->op;
            } else if (by_meta[ev->meta].valid) {
                op = &by_meta[ev->meta];
            }
            if (op != NULL) {
                if (hs.has_is_eager)
                    eager = xp_stat_int(&hs.is_eager) != 0;
                else
                    eager = xp_group_is_eager(ctx->groups, p, l, e);
                op_id++;
                acts[nacts++] = (struct activity){b, op_id, 0, (uint8_t)eager, *op};
                acts[nacts++] = (struct activity){end, op_id, 1, (uint8_t)eager, *op};
            }
            st = hs.tf_op;
            if (hs.has_tf_op && (st.kind == XP_STAT_STR || st.kind == XP_STAT_REF) && st.len > 0) {
                struct tfop top;
                struct host_op hop;
                tfop_parse(st.str, st.len, &top);
                hop = (struct host_op){top.name, top.name_len, top.type, top.type_len, 0, 1};
                op_id++;
                acts[nacts++] = (struct activity){b, op_id, 0, 0, hop};
                acts[nacts++] = (struct activity){end, op_id, 1, 0, hop};
            }
        }
        op_db_init(&line_db);
        rc = replay(os, &line_db, acts, nacts);
        if (rc == 0) {
            op_db_add_idle(&line_db, &os->arena);
            op_db_combine(&os->host_db, &os->arena, &line_db, 0);
            if (line_db.oom || os->host_db.oom)
                rc = -ENOMEM;
        }
        op_db_free(&line_db);
        if (rc != 0)
            goto out;
    }
    /* host step events (used for hosts without devices) */
    if (!has_device && host_steps != NULL) {
        for (l = 0; l < pl->nlines; l++) {
            const struct xp_line *ln = &pl->lines[l];
            for (e = 0; e < ln->nevents; e++) {
                struct xp_stat pt, pp;
                if (op_event_stat(pl, ln, &ln->events[e], pl->stat_id[XS_PRODUCER_TYPE], &pt) &&
                    op_event_stat(pl, ln, &ln->events[e], pl->stat_id[XS_PRODUCER_ID], &pp)) {
                    if (nparents == parents_cap) {
                        size_t nc = parents_cap ? parents_cap * 2 : 16;
                        uint64_t(*v)[2] = realloc(parents, nc * sizeof(*v));
                        if (v == NULL) {
                            rc = -ENOMEM;
                            goto out;
                        }
                        parents = v;
                        parents_cap = nc;
                    }
                    parents[nparents][0] = (uint64_t)xp_stat_int(&pt);
                    parents[nparents][1] = (uint64_t)xp_stat_int(&pp);
                    nparents++;
                }
            }
        }
        for (l = 0; l < pl->nlines && rc == 0; l++) {
            struct step_events line_steps;
            if ((rc = step_events_init(&line_steps, host_steps->n)) != 0)
                goto out;
            rc = host_line_steps(ctx, p, l, &line_steps, (const uint64_t(*)[2])parents, nparents);
            if (rc == 0)
                rc = step_events_union(host_steps, &line_steps);
            step_events_free(&line_steps);
        }
    }
out:
    free(parents);
    free(acts);
    free(stages);
    free(by_meta);
    return rc;
}
