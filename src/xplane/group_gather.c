/*
 * group_gather.c - pass 1 of the grouping: one line at a time (lines in
 * parallel), the type, root level and nesting parent of every event and the
 * keyed lists (kernels, executors, iterators, contexts) that link events
 * across threads; the lists are merged in line order. A TPU plane is one
 * job (ConnectIntraThreadTPU): only its grouping line's events are nodes,
 * neither nested nor roots, and the contexts of the events they include on
 * the other lines are theirs.
 */
#include "group_int.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "base/parallel.h"
#include "base/sort.h"
#include "reader/tpu_planes.h"

static int push_keyed(struct vec *v, uint64_t k1, uint64_t k2, uint64_t k3, uint32_t tag,
                      uint32_t node)
{
    struct keyed *k = gr_vec_push(v);

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
    struct corr_node *c = gr_vec_push(v);

    if (c == NULL)
        return -ENOMEM;
    c->corr = corr;
    c->node = node;
    return 0;
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

    /* Field by field: a memset of the struct (rep stos) costs more than
     * the rest of this per event. */
    s->has_pt = s->has_p = s->has_ct = s->has_c = 0;
    s->has_r = s->has_id = s->has_iter = s->has_corr = 0;
    s->pt = s->ct = s->r = s->id = s->iter = 0;
    s->p = s->c = s->corr = 0;
    s->is_async = 0;
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

/* What one line contributes besides its per-node arrays. */
struct line_out {
    struct vec launches, executes, executors, iterators, contexts, roots, tfdata_ids;
};

/* Per plane facts the line pass reads. */
struct plane_facts {
    const struct xp_plane *pl;    /* the plane */
    struct xp_pick pick;          /* the stats grouping reads */
    int is_host;                  /* "/host:CPU" */
    int any_stat;                 /* some stat that matters for grouping is known here */
    int has_pid;                  /* the plane has a process id */
    int64_t pid;                  /* its value */
    int tpu;                      /* a "/device:TPU:" plane: gathered whole by its first line */
    int grouping_line;            /* TPU core planes: the grouping line, or -1 */
    struct tpu_launch_ids launch; /* the stats of TPU launch contexts */
    int64_t ordinal;              /* a TensorCore's device ordinal, else -1 */
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
    gr_vec_free(&o->launches);
    gr_vec_free(&o->executes);
    gr_vec_free(&o->executors);
    gr_vec_free(&o->iterators);
    gr_vec_free(&o->contexts);
    gr_vec_free(&o->roots);
    gr_vec_free(&o->tfdata_ids);
}

/* The contexts of an event's stats, as node's (SetContextGroup). */
static int push_contexts(struct line_out *o, const struct ev_stats *s, const struct plane_facts *pf,
                         uint32_t node)
{
    uint64_t pid = pf->has_pid ? (uint64_t)pf->pid : 0;
    uint32_t pid_tag = pf->has_pid ? 1 : 0;
    int rc = 0;

    if (s->has_pt && s->has_p)
        rc = push_keyed(&o->contexts, (uint64_t)s->pt, s->p, pid, pid_tag, node);
    if (rc == 0 && s->has_ct && s->has_c)
        rc = push_keyed(&o->contexts, (uint64_t)s->ct, s->c, pid, pid_tag | 2, node);
    return rc;
}

/* What a node of type t adds to the keyed lists. */
static int push_lists(struct line_out *o, const struct ev_stats *s, enum ev_type t,
                      const struct plane_facts *pf, uint32_t node)
{
    int rc = push_contexts(o, s, pf, node);

    if (rc == 0 && t == ET_EXECUTOR && s->has_id && s->has_iter)
        rc = push_keyed(&o->executors, (uint64_t)s->id, (uint64_t)s->iter, 0, 0, node);
    if (rc == 0 && (t == ET_ITER_GET_NEXT || t == ET_ITER_GET_NEXT_O) && s->has_id && s->has_iter)
        rc = push_keyed(&o->iterators, (uint64_t)s->id, (uint64_t)s->iter, 0,
                        t == ET_ITER_GET_NEXT_O, node);
    if (rc == 0 && t == ET_KERNEL_LAUNCH)
        rc = push_corr(&o->launches, s->corr, node);
    if (rc == 0 && t == ET_KERNEL_EXECUTE)
        rc = push_corr(&o->executes, s->corr, node);
    if (rc == 0 && t == ET_TFDATA_RUN && s->has_id) {
        int64_t *id = gr_vec_push(&o->tfdata_ids);
        if (id == NULL)
            rc = -ENOMEM;
        else
            *id = s->id;
    }
    return rc;
}

/* PreprocessXPlane's TPU launch context of a host DoEnqueueProgram
 * (producer) or CompleteCallbacks (consumer) event, replacing its own. */
static void launch_context(const struct plane_facts *pf, const struct xp_line *ln,
                           const struct xp_event *ev, enum ev_type t, struct ev_stats *s)
{
    uint64_t id;

    if (!gr_tpu_launch_context(pf->pl, ln, ev, &pf->launch, -1, &id))
        return;
    if (t == ET_ENQUEUE_PROGRAM) {
        s->has_pt = s->has_p = 1;
        s->pt = GR_TPU_LAUNCH_CONTEXT;
        s->p = id;
    } else {
        s->has_ct = s->has_c = 1;
        s->ct = GR_TPU_LAUNCH_CONTEXT;
        s->c = id;
    }
}

/* The stats of a TPU plane's event, with the launch context an XLA Modules
 * event of a TensorCore consumes (TpuModuleLineMutator). */
static void tpu_event_stats(const struct plane_facts *pf, const struct xp_line *ln,
                            const struct xp_event *ev, struct ev_stats *s)
{
    uint64_t id;

    if (pf->any_stat)
        read_ev_stats(&pf->pick, ln, ev, s);
    else
        memset(s, 0, sizeof(*s));
    if (pf->ordinal >= 0 && strcmp(ln->name, "XLA Modules") == 0 &&
        gr_tpu_launch_context(pf->pl, ln, ev, &pf->launch, pf->ordinal, &id)) {
        s->has_ct = s->has_c = 1;
        s->ct = GR_TPU_LAUNCH_CONTEXT;
        s->c = id;
    }
}

/* A TPU plane (ConnectIntraThreadTPU): every event is hidden but those of
 * the grouping line, which are device nodes without nesting or root level;
 * an event of another line that the first grouping event ending after its
 * start includes gives its contexts to that event. */
static int gather_tpu_plane(struct forest *f, const struct plane_facts *pf, uint32_t p,
                            uint32_t first_flat, struct line_out *o)
{
    const struct xp_plane *pl = &f->xs->planes[p];
    const uint8_t *mtype = f->mtype[p];
    const struct xp_line *gl;
    uint32_t l, e, gbase;
    int rc = 0;

    for (l = 0; l < pl->nlines; l++) {
        uint32_t base = f->line_base[first_flat + l];
        for (e = 0; e < pl->lines[l].nevents; e++) {
            f->type[base + e] = ET_NONE;
            f->nest_parent[base + e] = NO_NODE;
            f->gid[base + e] = -1;
            f->flags[base + e] = (uint8_t)((int)l == pf->grouping_line ? 0 : NF_HIDDEN);
        }
    }
    if (pf->grouping_line < 0)
        return 0;
    gl = &pl->lines[pf->grouping_line];
    gbase = f->line_base[first_flat + (uint32_t)pf->grouping_line];
    for (e = 0; e < gl->nevents && rc == 0; e++) {
        enum ev_type t = (enum ev_type)mtype[gl->events[e].meta];
        struct ev_stats s;
        tpu_event_stats(pf, gl, &gl->events[e], &s);
        if (t == ET_NONE && s.has_corr)
            t = ET_KERNEL_EXECUTE;
        f->type[gbase + e] = (uint8_t)t;
        rc = push_lists(o, &s, t, pf, gbase + e);
    }
    for (l = 0; l < pl->nlines && rc == 0; l++) {
        const struct xp_line *ln = &pl->lines[l];
        uint32_t parent = 0;
        if ((int)l == pf->grouping_line)
            continue;
        for (e = 0; e < ln->nevents && rc == 0; e++) {
            const struct xp_event *ev = &ln->events[e], *pe;
            int64_t b = xp_event_start_ps(ln, ev), end = b + ev->duration_ps, pb;
            struct ev_stats s;
            while (parent < gl->nevents &&
                   xp_event_start_ps(gl, &gl->events[parent]) + gl->events[parent].duration_ps <= b)
                parent++;
            if (parent == gl->nevents)
                break;
            pe = &gl->events[parent];
            pb = xp_event_start_ps(gl, pe);
            if (!(pb <= b && end <= pb + pe->duration_ps))
                continue;
            tpu_event_stats(pf, ln, ev, &s);
            rc = push_contexts(o, &s, pf, gbase + parent);
        }
    }
    return rc;
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

    if (pf->tpu) {
        uint32_t first = f->plane_first[p];
        return flat == first ? gather_tpu_plane(f, pf, p, first, o) : 0;
    }
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
        int is_root = 1, rc = 0;

        if (pf->any_stat)
            read_ev_stats(&pf->pick, ln, ev, &s);
        else
            memset(&s, 0, sizeof(s));
        if (t == ET_NONE && s.has_corr)
            t = pf->is_host ? ET_KERNEL_LAUNCH : ET_KERNEL_EXECUTE;
        if (t == ET_ENQUEUE_PROGRAM || t == ET_COMPLETE_CALLBACKS)
            launch_context(pf, ln, ev, t, &s);
        f->type[node] = (uint8_t)t;
        f->nest_parent[node] = NO_NODE;
        f->gid[node] = -1;
        /* PreprocessXPlane's root mutators set _r of ProcessBatch (2) and
         * BatchingSessionRun (1), replacing any value the event had */
        if (t == ET_PROCESS_BATCH)
            level = 2;
        else if (t == ET_BATCHING_RUN)
            level = 1;
        else if (s.has_r)
            level = (int32_t)s.r;
        else if (t == ET_TRACE_CONTEXT)
            level = 1;
        else
            is_root = 0;
        /* EventNode::IsRoot is root_level_.has_value(): any _r value,
         * -1 (user-defined roots) and 0 included */
        if (is_root) {
            struct root_node *r = gr_vec_push(&o->roots);
            if (r == NULL) {
                rc = -ENOMEM;
            } else {
                r->node = node;
                r->level = level;
                f->flags[node] |= NF_ROOT;
            }
        }
        if (rc == 0)
            rc = push_lists(o, &s, t, pf, node);
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

/* Two line indices, the line with more events first (ctx: the lines' first
 * event indices, one past the end included). */
static int bigger_line_first(const void *a, const void *b, void *ctx)
{
    const uint32_t *base = ctx;
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    uint32_t nx = base[x + 1] - base[x], ny = base[y + 1] - base[y];

    if (nx != ny)
        return nx > ny ? -1 : 1;
    return x < y ? -1 : x > y;
}

/* Pass 1 over every line, then the lists merged in line order (the order a
 * single pass would have made them in). */
int gr_gather(struct forest *f)
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
        job.facts[p].grouping_line = -1;
        job.facts[p].pl = pl;
        job.facts[p].ordinal = -1;
        gr_tpu_launch_ids(pl, &job.facts[p].launch);
        if (strncmp(pl->name, "/device:TPU:", 12) == 0) {
            enum tpu_core_kind kind = tpu_plane_core(pl->name);
            f->tpu_space = 1;
            job.facts[p].tpu = 1;
            if (kind != TPU_NOT_A_CORE)
                job.facts[p].grouping_line = gr_tpu_grouping_line(pl);
            if (kind == TPU_TENSOR_CORE && pl->name[12] != '\0')
                job.facts[p].ordinal = strtoll(pl->name + 12, NULL, 10); /* ParseDeviceOrdinal */
            if (kind == TPU_TENSOR_CORE && job.facts[p].grouping_line >= 0) {
                uint32_t *tl = gr_vec_push(&f->tpu_tc_lines);
                if (tl == NULL) {
                    rc = -ENOMEM;
                    goto out;
                }
                *tl = f->plane_first[p] + (uint32_t)job.facts[p].grouping_line;
            }
        }
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
    xp_qsort_r(job.order, f->nlines, sizeof(*job.order), bigger_line_first, (void *)f->line_base);
    if ((rc = parallel_for(f->nlines, 0, gather_line, &job)) != 0)
        goto out;
    for (i = 0; i < f->nlines && rc == 0; i++) {
        struct line_out *o = &job.outs[i];
        /* kernel lists stay per line (they are big: no copy) */
        f->launches[i] = o->launches;
        f->executes[i] = o->executes;
        memset(&o->launches, 0, sizeof(o->launches));
        memset(&o->executes, 0, sizeof(o->executes));
        if ((rc = gr_vec_append(&f->executors, &o->executors)) != 0 ||
            (rc = gr_vec_append(&f->iterators, &o->iterators)) != 0 ||
            (rc = gr_vec_append(&f->contexts, &o->contexts)) != 0 ||
            (rc = gr_vec_append(&f->roots, &o->roots)) != 0 ||
            (rc = gr_vec_append(&f->tfdata_ids, &o->tfdata_ids)) != 0)
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
