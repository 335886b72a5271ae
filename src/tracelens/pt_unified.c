/*
 * pt_unified.c - perf_report/unified_perf_summary.csv of PyTorch runs:
 * TraceLens's build_df_unified_perf_table (collect_unified_perf_events with
 * its defaults) summarized by summarize_df_unified_perf_table as
 * generate_perf_report_pytorch calls it (mean, median, std, min, max,
 * include_pct; no call stacks, no overlap columns).
 *
 * The ops: from each outermost cpu_op of a thread, in start order, depth
 * first: a node without a GPU event below it is skipped; one with a perf
 * model is taken whole; one with a cpu_op below it that has a perf model and
 * a GPU event (python_function nodes transparent) goes on to its children;
 * a leaf (a launch with a GPU event among its runtime children) is taken
 * unless one of its GPU events is a collective; else its children are
 * walked. Then each GPU event no taken op covers (collectives left out)
 * becomes a "<parent>-><kernel> (Synthetic Op)" of its own, with the fields
 * of its launch when no cpu_op is above it (grouped by launch, in launch
 * order), else of the nearest cpu_op; they get UIDs after the trace's last.
 *
 * Per op: Kernel Time = busy time of its GPU events (TraceLens's
 * gpu_events: ordered by the launch that reaches them); with a perf model,
 * GFLOPS, Data Moved, FLOPS/Byte, TB/s, TFLOPS/s, Compute Spec and the
 * params dict (pt_perf_row); a model that raises leaves them empty (one
 * that raises NotImplementedError, the op out, but its GPU events count as
 * covered: they get no synthetic op either). Rows
 * group by the str() of name, op category, process / thread names and the
 * four args columns, sort by Kernel Time sum (descending), then ex_UID.
 *
 * Not made (the file is then not served, -ENOENT): runs of several hosts,
 * traces with autograd backward events (TraceLens's 1:1 backward linking to
 * a forward perf model), ops with a TraceLens perf model we lack
 * (pt_unified_gap.inc, Triton-compiled kernels), and runs where no op's
 * model succeeds (the perf columns are then absent).
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "gpu_timeline.h"
#include "pt_launchers.h"
#include "pt_launchers_int.h"
#include "pt_nodes.h"
#include "pt_perf_model.h"
#include "pt_perf_sheet_int.h"
#include "pt_pyrepr.h"
#include "base/np_arith.h"
#include "base/sort.h"

#include "pt_unified_gap.inc"

#define NUNMODELLED (sizeof(unmodelled) / sizeof(unmodelled[0]))

/* One op of the unified table. */
struct uop {
    uint32_t ev;   /* its event (a synthetic op: its parent's) */
    uint32_t uid;  /* UID (a synthetic op's own) */
    uint32_t ord;  /* row position */
    int has_model; /* has_perf_model */
    int ok;        /* the model gave metrics (g holds them) */
    struct grow g; /* pt_perf_row's row when has_model */
    double busy;   /* Kernel Time (µs) */
    int busy_int;  /* as a Python int */
    uint32_t *k;   /* its GPU events, in gpu_events order */
    uint32_t nk;   /* entries in k */
    char *cells;   /* the nine grouping cells (pt_group_cells' layout) */
    size_t ncells; /* their bytes */
    char *params;  /* repr of the params dict, NULL for None */
};

/* The walk's state. */
struct walk {
    const struct pt_nodes *nd;
    const struct pt_meta *meta;
    const char **cat; /* per event: its launcher's op category, or NULL */
    uint32_t *first;  /* per event: its launcher's earliest kernel */
    uint8_t *visited; /* per event */
    uint8_t *covered; /* per GPU event: under a taken op */
    uint8_t *model;   /* per name id: 0 unknown, 1 has a model, 2 none */
    uint32_t *stack;  /* room for the trace's events */
    uint32_t *gpu;    /* same */
    struct uop *v;    /* the ops */
    size_t n, cap;
    int oom;
};

static int unmodelled_cmp(const void *key, const void *entry)
{
    return strcmp(key, *(const char *const *)entry);
}

/* 1 when TraceLens models op name and we do not. */
static int lacks_model(const char *name)
{
    if (strncmp(name, "triton_poi_", 11) == 0 || strncmp(name, "triton_red_", 11) == 0 ||
        strncmp(name, "triton_per_", 11) == 0)
        return 1;
    return bsearch(name, unmodelled, NUNMODELLED, sizeof(unmodelled[0]), unmodelled_cmp) != NULL;
}

static const char *ev_name(const struct ctrace *ct, uint32_t e)
{
    return ctrace_str(ct, ct->events[e].name);
}

static int has_model(struct walk *w, uint32_t e)
{
    const struct ctrace *ct = w->nd->ct;
    uint32_t id = ct->events[e].name;

    if (id == 0)
        return 0;
    if (w->model[id] == 0)
        w->model[id] = pt_perf_model_known(ctrace_str(ct, id)) ? 1 : 2;
    return w->model[id] == 1;
}

/* _has_descendant_cpu_op_with_own_perf_model: a cpu_op strictly below e
 * (through cpu_ops and python_functions) with a model and a GPU event. */
static int model_below(struct walk *w, uint32_t e)
{
    const struct pt_nodes *nd = w->nd;
    uint32_t depth = 0, k;

    for (k = nd->child_first[e]; k < nd->child_first[e + 1]; k++)
        w->stack[depth++] = nd->children[k];
    while (depth > 0) {
        uint32_t c = w->stack[--depth];
        int kind = nd->t.kind[c];
        if (kind != PT_PYTHON && kind != PT_CPU_OP)
            continue;
        if (kind == PT_CPU_OP && has_model(w, c) && nd->has_gpu[c])
            return 1;
        for (k = nd->child_first[c]; k < nd->child_first[c + 1]; k++)
            w->stack[depth++] = nd->children[k];
    }
    return 0;
}

/* has_kernel_descendant of _is_leaf_cpu_op: a GPU child, through runtime
 * and python_function children, within max_depth levels. */
static int kernel_child(const struct pt_nodes *nd, uint32_t e, int max_depth)
{
    uint32_t k;

    if (max_depth <= 0)
        return 0;
    for (k = nd->child_first[e]; k < nd->child_first[e + 1]; k++) {
        uint32_t c = nd->children[k];
        int kind = nd->t.kind[c];
        if (kind == PT_GPU)
            return 1;
        if ((kind == PT_RUNTIME || kind == PT_PYTHON) && kernel_child(nd, c, max_depth - 1))
            return 1;
    }
    return 0;
}

/* The GPU events below e in TraceLens's gpu_events order (by the launch
 * that reaches them, then file order) into w->gpu; returns their count. */
static uint32_t gpu_events(struct walk *w, uint32_t e)
{
    const struct pt_nodes *nd = w->nd;
    uint32_t depth = 0, n = 0, k, i, j;

    w->stack[depth++] = e;
    while (depth > 0) {
        uint32_t c = w->stack[--depth];
        if (nd->t.kind[c] == PT_GPU) {
            w->gpu[n++] = c;
            continue;
        }
        for (k = nd->child_first[c]; k < nd->child_first[c + 1]; k++)
            w->stack[depth++] = nd->children[k];
    }
    for (i = 1; i < n; i++) {
        uint32_t g = w->gpu[i], pg = nd->t.parent[g];
        for (j = i; j > 0; j--) {
            uint32_t h = w->gpu[j - 1], ph = nd->t.parent[h];
            if (ph < pg || (ph == pg && h < g))
                break;
            w->gpu[j] = h;
        }
        w->gpu[j] = g;
    }
    return n;
}

static int any_collective(struct walk *w, uint32_t e)
{
    uint32_t n = gpu_events(w, e), i;

    for (i = 0; i < n; i++) {
        if (gt_is_communication(ev_name(w->nd->ct, w->gpu[i])))
            return 1;
    }
    return 0;
}

/* Mark the GPU events below e covered. */
static void cover(struct walk *w, uint32_t e)
{
    uint32_t n = gpu_events(w, e), i;

    for (i = 0; i < n; i++)
        w->covered[w->gpu[i]] = 1;
}

/* Append one cell to b (pt_group_cells' layout). */
static void put_cell(struct pt_buf *b, const char *s, size_t n)
{
    uint32_t len = (uint32_t)n;

    pt_buf_putc(b, 1);
    pt_buf_write(b, (const char *)&len, sizeof(len));
    pt_buf_write(b, s, n);
}

/* The params dict of row g as Python's repr into b. */
static void params_repr(const struct grow *g, struct pt_buf *b)
{
    const char *const *names = pt_sheet_param_names(g->sheet);
    int k;

    pt_buf_putc(b, '{');
    for (k = 0; k < g->nparams; k++) {
        int p = g->order[k];
        const char *t = g->params[p] != NULL ? g->params[p] : "None";
        if (k > 0)
            pt_buf_puts(b, ", ");
        pt_str_repr(b, names[p], strlen(names[p]));
        pt_buf_puts(b, ": ");
        /* str() of a Python str is its text; repr() quotes it */
        if (strcmp(names[p], "convNd") == 0 || strcmp(names[p], "reduce_type") == 0)
            pt_str_repr(b, t, strlen(t));
        else
            pt_buf_puts(b, t);
    }
    pt_buf_putc(b, '}');
}

/* Add op e (synthetic: name is "<parent>-><kernel> (Synthetic Op)" and the
 * one GPU event kernel; else name NULL) to the ops. */
static void add_op(struct walk *w, uint32_t e, const char *name, uint32_t kernel, uint32_t uid)
{
    const struct ctrace *ct = w->nd->ct;
    struct pt_launcher fake;
    struct pt_buf cells, tmp;
    struct uop *u;
    int rc;

    if (w->oom)
        return;
    if (w->n == w->cap) {
        size_t cap = w->cap ? 2 * w->cap : 64;
        struct uop *v = realloc(w->v, cap * sizeof(*v));
        if (v == NULL) {
            w->oom = 1;
            return;
        }
        w->v = v;
        w->cap = cap;
    }
    u = &w->v[w->n];
    memset(u, 0, sizeof(*u));
    u->ev = e;
    u->uid = uid;
    u->ord = (uint32_t)w->n;
    w->n++;
    if (name == NULL && has_model(w, e)) {
        u->has_model = 1;
        rc = pt_perf_row(w->nd, w->meta, NULL, e, w->stack, w->gpu, &u->g);
        if (rc < 0) {
            w->oom = 1;
            return;
        }
        u->ok = rc == 0;
        if (u->ok) {
            memset(&tmp, 0, sizeof(tmp));
            params_repr(&u->g, &tmp);
            pt_buf_putc(&tmp, 0);
            if (tmp.oom) {
                pt_buf_free(&tmp);
                w->oom = 1;
                return;
            }
            u->params = tmp.p;
        }
    }
    u->nk = name != NULL ? 1 : gpu_events(w, e);
    if (name != NULL)
        w->gpu[0] = kernel;
    u->k = malloc((size_t)u->nk * sizeof(*u->k) + 1);
    if (u->k == NULL) {
        w->oom = 1;
        return;
    }
    memcpy(u->k, w->gpu, (size_t)u->nk * sizeof(*u->k));
    if (name == NULL)
        cover(w, e);
    if (u->ok) {
        u->busy = u->g.busy;
        u->busy_int = u->g.busy_int;
    } else {
        int ok;
        u->busy = pt_busy_time(ct, u->k, u->nk, &u->busy_int, &ok);
        if (!ok) {
            w->oom = 1;
            return;
        }
    }
    /* the cells: the op category is its launcher's (get_kernel_launchers
     * left kernel_details on it), else the name's alone */
    memset(&fake, 0, sizeof(fake));
    fake.uid = e;
    if (name != NULL)
        fake.category = pt_op_category(name, w->cat[e] != NULL ? ev_name(ct, w->first[e]) : NULL);
    else
        fake.category = w->cat[e] != NULL ? w->cat[e] : pt_op_category(ev_name(ct, e), NULL);
    memset(&tmp, 0, sizeof(tmp));
    memset(&cells, 0, sizeof(cells));
    if (pt_group_cells(ct, &fake, w->meta, &tmp) != 0) {
        w->oom = 1;
    } else if (name != NULL) {
        uint32_t len;
        memcpy(&len, tmp.p + 1, sizeof(len));
        put_cell(&cells, name, strlen(name));
        pt_buf_write(&cells, tmp.p + 5 + len, tmp.n - 5 - len);
    } else {
        cells = tmp;
        memset(&tmp, 0, sizeof(tmp));
    }
    pt_buf_free(&tmp);
    if (cells.oom)
        w->oom = 1;
    u->cells = cells.p;
    u->ncells = cells.n;
}

/* collect_unified_perf_events' traverse, from e. */
static void traverse(struct walk *w, uint32_t e)
{
    const struct pt_nodes *nd = w->nd;
    uint32_t k;

    if (w->visited[e] || w->oom)
        return;
    w->visited[e] = 1;
    if (nd->t.kind[e] != PT_CPU_OP || !nd->has_gpu[e])
        return;
    if (has_model(w, e)) {
        /* taken, but a model raising NotImplementedError leaves it out */
        if (!pt_vector_not_implemented(ev_name(nd->ct, e)))
            add_op(w, e, NULL, 0, e);
        else
            cover(w, e);
        return;
    }
    if (!model_below(w, e) && kernel_child(nd, e, 10)) {
        if (!any_collective(w, e))
            add_op(w, e, NULL, 0, e);
        return;
    }
    for (k = nd->child_first[e]; k < nd->child_first[e + 1]; k++)
        traverse(w, nd->children[k]);
}

/* The synthetic ops of the GPU events no op covers. */
static int synthetic_ops(struct walk *w)
{
    const struct pt_nodes *nd = w->nd;
    const struct ctrace *ct = nd->ct;
    uint32_t n = ct->nevents, i, next = n, *orphan, *with_op, norphan = 0, nwith = 0;
    uint8_t *covered = w->covered;

    orphan = malloc(((size_t)n + 1) * sizeof(*orphan));
    with_op = malloc(((size_t)n + 1) * 2 * sizeof(*with_op));
    if (orphan == NULL || with_op == NULL) {
        free(orphan);
        free(with_op);
        return -ENOMEM;
    }
    for (i = 0; i < n; i++) {
        uint32_t p;
        if (nd->t.kind[i] != PT_GPU || covered[i] || gt_is_communication(ev_name(ct, i)))
            continue;
        for (p = nd->t.parent[i]; p != PT_NONE && nd->t.kind[p] != PT_CPU_OP; p = nd->t.parent[p])
            ;
        if (p != PT_NONE) {
            with_op[2 * nwith] = i;
            with_op[2 * nwith + 1] = p;
            nwith++;
        } else if (nd->t.parent[i] != PT_NONE) {
            orphan[norphan++] = i;
        }
    }
    /* orphans grouped by their launch, launches in order of first sight */
    for (i = 0; i < norphan && !w->oom; i++) {
        uint32_t p = nd->t.parent[orphan[i]], q;
        if (p == PT_NONE)
            continue;
        for (q = i; q < norphan && !w->oom; q++) {
            uint32_t g = orphan[q];
            struct pt_buf name;
            if (g == PT_NONE || nd->t.parent[g] != p)
                continue;
            memset(&name, 0, sizeof(name));
            pt_buf_puts(&name, ev_name(ct, p));
            pt_buf_puts(&name, "->");
            pt_buf_puts(&name, ev_name(ct, g));
            pt_buf_puts(&name, " (Synthetic Op)");
            pt_buf_putc(&name, 0);
            if (name.oom)
                w->oom = 1;
            else
                add_op(w, p, name.p, g, next++);
            pt_buf_free(&name);
            orphan[q] = PT_NONE;
        }
    }
    for (i = 0; i < nwith && !w->oom; i++) {
        uint32_t g = with_op[2 * i], p = with_op[2 * i + 1];
        struct pt_buf name;
        memset(&name, 0, sizeof(name));
        pt_buf_puts(&name, ev_name(ct, p));
        pt_buf_puts(&name, "->");
        pt_buf_puts(&name, ev_name(ct, g));
        pt_buf_puts(&name, " (Synthetic Op)");
        pt_buf_putc(&name, 0);
        if (name.oom)
            w->oom = 1;
        else
            add_op(w, p, name.p, g, next++);
        pt_buf_free(&name);
    }
    free(orphan);
    free(with_op);
    return w->oom ? -ENOMEM : 0;
}

/* ---- the summary ------------------------------------------------------------- */

struct ugrp {
    uint32_t first; /* index into the sorted ops */
    uint32_t n;     /* its ops */
    uint32_t ord;   /* first sight */
    uint32_t uid;   /* ex_UID */
    double sum;     /* Kernel Time (µs)_sum */
};

static int uop_cmp(const void *a, const void *b)
{
    const struct uop *x = a, *y = b;
    size_t n = x->ncells < y->ncells ? x->ncells : y->ncells;
    int c = memcmp(x->cells, y->cells, n);

    if (c != 0)
        return c;
    if (x->ncells != y->ncells)
        return x->ncells < y->ncells ? -1 : 1;
    return x->ord < y->ord ? -1 : x->ord > y->ord;
}

static int ugrp_cmp(const void *a, const void *b)
{
    const struct ugrp *x = a, *y = b;

    if (x->sum != y->sum)
        return x->sum > y->sum ? -1 : 1;
    if (x->uid != y->uid)
        return x->uid < y->uid ? -1 : 1;
    return x->ord < y->ord ? -1 : x->ord > y->ord;
}

static void put_f(struct out *o, double v)
{
    out_putc(o, ',');
    pt_put_float(o, v);
}

static void put_t(struct out *o, double v, int as_int)
{
    out_putc(o, ',');
    if (!isnan(v))
        pt_put_time(o, v, as_int);
}

/* The statistics of one column over the ops u[0..n) (pick: 1 TB/s, 2 TFLOPS/s, 3 Kernel Time, 4
 * GFLOPS, 5 Data Moved, 6 FLOPS/Byte; the perf columns are NaN where the model gave none). */
static void column(const struct uop *u, size_t n, int pick, double *v, double *scratch,
                   struct pt_nstats *st)
{
    size_t i;

    for (i = 0; i < n; i++) {
        const struct grow *g = &u[i].g;
        if (pick == 3)
            v[i] = u[i].busy;
        else if (!u[i].ok)
            v[i] = NAN;
        else
            v[i] = pick == 1   ? g->tbs
                   : pick == 2 ? g->tflops
                   : pick == 4 ? g->gflops
                   : pick == 5 ? g->mb
                               : g->fpb;
    }
    pt_nan_stats(v, n, scratch, st);
}

/* The duration column of u[0..n) into v. */
static void durations(const struct ctrace *ct, const struct uop *u, size_t n, double *v)
{
    size_t i;

    for (i = 0; i < n; i++)
        v[i] = ct->events[u[i].ev].dur;
}

static int write_group(struct out *o, const struct ctrace *ct, const struct uop *u, size_t n,
                       int dur_int, int kt_int, double pct, double cum, double *v, double *scratch)
{
    struct pt_nstats d, tbs, tfl, kt, s;
    struct pt_klist *lists;
    const char *p = u[0].cells, *spec = NULL, *params = NULL;
    size_t i;
    int c, rc;

    for (c = 0; c < 9; c++) {
        uint32_t len;
        memcpy(&len, p + 1, sizeof(len));
        if (c > 0)
            out_putc(o, ',');
        if (p[0] != 0)
            out_csv_str(o, p + 5, len);
        p += 5 + len;
    }
    durations(ct, u, n, v);
    pt_nan_stats(v, n, scratch, &d);
    column(u, n, 1, v, scratch, &tbs);
    column(u, n, 2, v, scratch, &tfl);
    column(u, n, 3, v, scratch, &kt);
    out_printf(o, ",%u,%zu", u[0].uid, n);
    put_t(o, d.sum, dur_int);
    put_f(o, d.mean);
    put_f(o, d.std);
    column(u, n, 4, v, scratch, &s);
    put_f(o, s.first);
    column(u, n, 5, v, scratch, &s);
    put_f(o, s.first);
    column(u, n, 6, v, scratch, &s);
    put_f(o, s.first);
    for (i = 0; i < n && spec == NULL; i++) {
        if (u[i].ok)
            spec = u[i].g.spec;
    }
    out_putc(o, ',');
    if (spec != NULL)
        out_csv_str(o, spec, strlen(spec));
    put_f(o, tbs.mean);
    put_f(o, tbs.std);
    put_f(o, tfl.mean);
    put_f(o, tfl.std);
    put_f(o, kt.mean);
    put_f(o, kt.std);
    put_t(o, kt.sum, kt_int);
    put_f(o, d.median);
    put_t(o, d.min, dur_int);
    put_t(o, d.max, dur_int);
    put_f(o, tbs.median);
    put_f(o, tbs.min);
    put_f(o, tbs.max);
    put_f(o, tfl.median);
    put_f(o, tfl.min);
    put_f(o, tfl.max);
    put_f(o, kt.median);
    put_t(o, kt.min, kt_int);
    put_t(o, kt.max, kt_int);
    out_putc(o, ',');
    lists = malloc((n + 1) * sizeof(*lists));
    if (lists == NULL)
        return -ENOMEM;
    for (i = 0; i < n; i++) {
        lists[i].ct = ct;
        lists[i].k = u[i].k;
        lists[i].n = u[i].nk;
    }
    rc = pt_put_kernel_details(o, lists, n);
    free(lists);
    if (rc != 0)
        return rc;
    for (i = 0; i < n && params == NULL; i++)
        params = u[i].params;
    if (params != NULL)
        out_csv_str(o, params, strlen(params));
    out_puts(o, u[0].has_model ? ",True" : ",False");
    put_f(o, pct);
    put_f(o, cum);
    out_putc(o, '\n');
    return 0;
}

static void uops_free(struct uop *v, size_t n)
{
    size_t i;

    for (i = 0; i < n; i++) {
        int p;
        for (p = 0; p < MAX_PARAMS; p++)
            free(v[i].g.params[p]);
        free(v[i].g.kernels);
        free(v[i].g.cells);
        free(v[i].k);
        free(v[i].cells);
        free(v[i].params);
    }
    free(v);
}

/* The host of hl with the PyTorch trace, or -ENOENT (none, or several). */
static int only_host(const struct host_list *hl, struct xp_err *err)
{
    int h, found = -1;

    for (h = 0; h < hl->n; h++) {
        if (snapshot_host_file(hl->snap, hl->names[h], SRC_PT_TRACE) == NULL)
            continue;
        if (found >= 0)
            return xp_err_set(err, -ENOENT,
                              "perf_report/unified_perf_summary.csv: not made yet for runs of "
                              "several hosts");
        found = h;
    }
    if (found < 0)
        return xp_err_set(err, -ENOENT, "perf_report/unified_perf_summary.csv: no PyTorch trace");
    return found;
}

/* -ENOENT when the trace has what this port does not make. */
static int check_supported(const struct ctrace *ct, const struct pt_nodes *nd, struct xp_err *err)
{
    uint32_t i;

    for (i = 0; i < ct->nevents; i++) {
        const char *name;
        if (ct->events[i].name == 0 || nd->t.kind[i] == PT_GPU || nd->t.kind[i] == PT_OTHER)
            continue;
        name = ev_name(ct, i);
        if (strncmp(name, "autograd::engine::evaluate_function:", 36) == 0)
            return xp_err_set(err, -ENOENT,
                              "perf_report/unified_perf_summary.csv: not made yet for traces "
                              "with autograd backward ops");
        if (nd->t.kind[i] == PT_CPU_OP && lacks_model(name))
            return xp_err_set(err, -ENOENT,
                              "perf_report/unified_perf_summary.csv: not made yet: no perf "
                              "model for \"%s\"",
                              name);
    }
    return 0;
}

int pt_unified_summary_csv(const struct host_list *hl, struct out *o, struct xp_err *err)
{
    const struct pt_host **hs = NULL;
    const struct pt_nodes *nd;
    const struct ctrace *ct;
    struct pt_meta *meta = NULL;
    struct walk w;
    struct ugrp *g = NULL;
    double *v = NULL, *scratch = NULL, *sums = NULL, total, cum = 0;
    uint32_t i, *firstk = NULL;
    size_t ng = 0, a, b;
    int h, nh = 0, rc, dur_int = 1, kt_int = 1, any_ok = 0;

    memset(&w, 0, sizeof(w));
    h = only_host(hl, err);
    if (h < 0)
        return h;
    rc = snapshot_pt_nodes(hl->snap, hl->names[h], 0, &nd, err);
    if (rc != 0)
        return rc;
    ct = nd->ct;
    rc = check_supported(ct, nd, err);
    if (rc != 0)
        return rc;
    hs = calloc((size_t)hl->n + 1, sizeof(*hs));
    if (hs == NULL)
        return xp_err_set(err, -ENOMEM, "out of memory");
    rc = pt_all_hosts(hl, hs, &nh, err);
    if (rc != 0) {
        free(hs);
        return rc;
    }
    w.nd = nd;
    w.cat = calloc((size_t)ct->nevents + 1, sizeof(*w.cat));
    firstk = calloc((size_t)ct->nevents + 1, sizeof(*firstk));
    w.first = firstk;
    w.visited = calloc((size_t)ct->nevents + 1, 1);
    w.covered = calloc((size_t)ct->nevents + 1, 1);
    w.model = calloc((size_t)ctrace_str_count(ct) + 1, 1);
    w.stack = malloc(((size_t)ct->nevents + 1) * sizeof(*w.stack));
    w.gpu = malloc(((size_t)ct->nevents + 1) * sizeof(*w.gpu));
    if (w.cat == NULL || firstk == NULL || w.visited == NULL || w.covered == NULL ||
        w.model == NULL || w.stack == NULL || w.gpu == NULL || pt_meta_collect(ct, &meta) != 0) {
        rc = xp_err_set(err, -ENOMEM, "out of memory");
        goto out;
    }
    w.meta = meta;
    for (i = 0; hs[h] != NULL && i < hs[h]->n; i++) {
        const struct pt_launcher *l = &hs[h]->v[i];
        w.cat[l->uid] = l->category;
        firstk[l->uid] = l->first_kernel;
    }
    /* the walk: TraceLens's cpu_root_nodes, the outermost cpu_ops */
    for (i = 0; i < nd->nroots && !w.oom; i++) {
        uint32_t e = nd->roots[i];
        if (nd->t.in_tree[e] && nd->t.kind[e] == PT_CPU_OP)
            traverse(&w, e);
    }
    if (w.oom || synthetic_ops(&w) != 0) {
        rc = xp_err_set(err, -ENOMEM, "out of memory");
        goto out;
    }
    for (a = 0; a < w.n; a++) {
        dur_int &= (ct->events[w.v[a].ev].flags & CT_DUR_INT) != 0;
        kt_int &= w.v[a].busy_int;
        any_ok |= w.v[a].ok;
    }
    if (w.n == 0 || !any_ok) {
        rc = xp_err_set(err, -ENOENT,
                        w.n == 0 ? "perf_report/unified_perf_summary.csv: no op launches a GPU "
                                   "kernel"
                                 : "perf_report/unified_perf_summary.csv: not made yet for runs "
                                   "where no op has perf metrics");
        goto out;
    }
    xp_qsort(w.v, w.n, sizeof(*w.v), uop_cmp);
    g = malloc((w.n + 1) * sizeof(*g));
    v = malloc((w.n + 1) * sizeof(*v));
    scratch = malloc((w.n + 1) * sizeof(*scratch));
    sums = malloc((w.n + 1) * sizeof(*sums));
    if (g == NULL || v == NULL || scratch == NULL || sums == NULL) {
        rc = xp_err_set(err, -ENOMEM, "out of memory");
        goto out;
    }
    for (a = 0; a < w.n; a = b) {
        struct pt_nstats st;
        for (b = a + 1; b < w.n; b++) {
            if (w.v[b].ncells != w.v[a].ncells ||
                memcmp(w.v[b].cells, w.v[a].cells, w.v[a].ncells) != 0)
                break;
        }
        column(w.v + a, b - a, 3, v, scratch, &st);
        g[ng].first = (uint32_t)a;
        g[ng].n = (uint32_t)(b - a);
        g[ng].ord = w.v[a].ord;
        g[ng].uid = w.v[a].uid;
        g[ng].sum = st.sum;
        ng++;
    }
    xp_qsort(g, ng, sizeof(*g), ugrp_cmp);
    for (a = 0; a < ng; a++)
        sums[a] = g[a].sum;
    total = np_sum(sums, ng);
    out_puts(o, "name,op category,process_name,process_label,thread_name,Input Dims,Input type,"
                "Input Strides,Concrete Inputs,ex_UID,operation_count,total_duration_us,"
                "mean_duration_us,std_duration_us,GFLOPS,Data Moved (MB),FLOPS/Byte,Compute Spec,"
                "TB/s_mean,TB/s_std,TFLOPS/s_mean,TFLOPS/s_std,Kernel Time (\xc2\xb5s)_mean,"
                "Kernel Time (\xc2\xb5s)_std,Kernel Time (\xc2\xb5s)_sum,duration_us_median,"
                "duration_us_min,duration_us_max,TB/s_median,TB/s_min,TB/s_max,TFLOPS/s_median,"
                "TFLOPS/s_min,TFLOPS/s_max,Kernel Time (\xc2\xb5s)_median,"
                "Kernel Time (\xc2\xb5s)_min,Kernel Time (\xc2\xb5s)_max,kernel_details_summary,"
                "trunc_kernel_details,perf_params,has_perf_model,Percentage (%),"
                "Cumulative Percentage (%)\n");
    for (a = 0; a < ng && rc == 0; a++) {
        double pct = g[a].sum / total * 100;
        cum = a == 0 ? pct : cum + pct;
        rc = write_group(o, ct, w.v + g[a].first, g[a].n, dur_int, kt_int, pct, cum, v, scratch);
        if (rc != 0)
            xp_err_set(err, rc, "out of memory");
    }
out:
    uops_free(w.v, w.n);
    pt_meta_free(meta);
    free(w.cat);
    free(firstk);
    free(w.visited);
    free(w.covered);
    free(w.model);
    free(w.stack);
    free(w.gpu);
    free(g);
    free(v);
    free(scratch);
    free(sums);
    free(hs);
    return rc;
}
