/*
 * kernel_launchers.c - kernel_launchers.csv, kernel_launchers_summary.csv and
 * kernel_launchers_summary_by_category.csv, as TraceLens's JAX analyser makes
 * them: on JAX/XLA profiles each GPU kernel is its own launcher
 * (total_direct_kernel_time = its duration), categorised by the JaxOpKeys
 * keywords on the kernel name, then on its hlo_op, else
 * "Uncategorized Events/XLA". GPU_kernel_launch_latency = kernel start minus
 * the start of the host event (pid 701, /host:CPU) with the same
 * correlation_id. Summaries group by name / category with pandas' arithmetic
 * (Kahan group sums, numpy pairwise totals, running cumulative percentages).
 *
 * Sources: .xplane.pb hosts and JAX Chrome traces. PyTorch traces are not
 * served here (TraceLens's PyTorch launchers need its CPU-op tree).
 */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "sort.h"
#include "ctrace.h"
#include "gpu_timeline.h"
#include "tool.h"

/* TraceLens's JaxOpKeys.ClassCategories, in its order. */
struct category {
    const char *name;
    const char *keys[5];
};

static const struct category categories[] = {
    {"GEMM", {"Cijk", "gemm", "nvjet", "cublasLt", NULL}},
    {"FA BWD", {"FmhaBwd", "flash_bprop", "ck_fused_attn::dk_dv_reduce_thd", "fmha_bwd", NULL}},
    {"FA FWD", {"FmhaFwd", "flash_fprop", "fmha_fwd", NULL}},
    {"FA V3", {"kernel_func", NULL}},
    {"Conv", {"conv_", "conv.", "conv-", NULL}},
    {"TE", {"transformer_engine", "te_fused_attn", NULL}},
    {"Communication rccl/nccl", {"rccl", "nccl", NULL}},
};

#define NCATEGORIES (sizeof(categories) / sizeof(categories[0]))
#define UNCATEGORIZED "Uncategorized Events/XLA"
/* Marks event metadata that is not a kernel (memcpy, memset). */
static const char not_kernel[] = "not a kernel";
#define NOT_KERNEL not_kernel

static const char *match_category(const char *s)
{
    size_t c, k;

    for (c = 0; c < NCATEGORIES; c++) {
        for (k = 0; categories[c].keys[k] != NULL; k++) {
            if (strstr(s, categories[c].keys[k]) != NULL)
                return categories[c].name;
        }
    }
    return NULL;
}

/* The category of a kernel from its name and hlo_op (may be NULL). */
static const char *kernel_category(const char *name, const char *hlo_op)
{
    const char *by_name = match_category(name), *by_op;
    int fa = by_name != NULL && strncmp(by_name, "FA ", 3) == 0;

    if (hlo_op != NULL && hlo_op[0] != 0 && !fa) {
        by_op = match_category(hlo_op);
        if (by_op != NULL)
            return by_op;
    }
    return by_name != NULL ? by_name : UNCATEGORIZED;
}

static int is_kernel_name(const char *name)
{
    static const char *const not_kernels[] = {"copy", "memcpy", "memset"};
    size_t k, i;

    for (k = 0; k < 3; k++) {
        const char *p = not_kernels[k];
        for (i = 0; p[i] != 0 && tolower((unsigned char)name[i]) == p[i]; i++)
            ;
        if (p[i] == 0)
            return 0;
    }
    return 1;
}

/* correlation id -> host launch start (µs), sorted for bsearch. */
struct corr {
    int64_t id;
    double ts;
};

static int corr_cmp(const void *a, const void *b)
{
    const struct corr *x = a, *y = b;
    return x->id < y->id ? -1 : x->id > y->id;
}

static double corr_find(const struct corr *v, size_t n, int64_t id)
{
    struct corr key = {id, 0};
    const struct corr *c = bsearch(&key, v, n, sizeof(key), corr_cmp);
    return c != NULL ? c->ts : NAN;
}

static int stat_string(const struct xp_stat *st, char *buf, size_t n)
{
    size_t len;

    if (st->kind != XP_STAT_STR && st->kind != XP_STAT_REF)
        return 0;
    len = st->len < n - 1 ? st->len : n - 1;
    memcpy(buf, st->str, len);
    buf[len] = 0;
    return 1;
}

/* Host-side events with a correlation id on /host:CPU planes. Where several
 * share an id, the last in trace order (thread, then time) wins, as in
 * TraceLens's linking loop. */
static int xspace_corrs(const struct xspace *xs, struct corr **vp, size_t *np)
{
    struct corr *v = NULL;
    size_t n = 0, cap = 0, i, w;
    uint32_t p, l, e;

    for (p = 0; p < xs->nplanes; p++) {
        const struct xp_plane *pl = &xs->planes[p];
        if (strncmp(pl->name, "/host:CPU", 9) != 0 || pl->stat_id[XS_CORRELATION_ID] == XP_NO_STAT)
            continue;
        for (l = 0; l < pl->nlines; l++) {
            const struct xp_line *ln = &pl->lines[l];
            for (e = 0; e < ln->nevents; e++) {
                struct xp_stat st;
                if (!xp_event_stat(pl, ln, &ln->events[e], XS_CORRELATION_ID, &st))
                    continue;
                if (n == cap) {
                    struct corr *nv;
                    cap = cap ? cap * 2 : 1024;
                    nv = realloc(v, cap * sizeof(*nv));
                    if (nv == NULL) {
                        free(v);
                        return -ENOMEM;
                    }
                    v = nv;
                }
                v[n].id = xp_stat_int(&st);
                v[n].ts = (double)xp_event_start_ps(ln, &ln->events[e]) / 1e6;
                n++;
            }
        }
    }
    /* Stable by id: mergesort-free approach, keep the latest start. */
    if (n > 0) {
        xp_qsort(v, n, sizeof(*v), corr_cmp);
        for (i = 0, w = 0; i < n; i++) {
            if (w > 0 && v[w - 1].id == v[i].id) {
                if (v[i].ts > v[w - 1].ts)
                    v[w - 1].ts = v[i].ts;
                continue;
            }
            v[w++] = v[i];
        }
        n = w;
    }
    *vp = v;
    *np = n;
    return 0;
}

/* ---- visiting kernels in trace order ---------------------------------------- */

/* One kernel as the visitor hands it over. name points into the profile. */
struct kernel {
    const char *name;     /* kernel name */
    const char *category; /* static */
    double ts;            /* µs */
    double dur;           /* µs */
    int64_t pid;          /* TraceLens gpu pid */
    int64_t tid;          /* stream */
    int64_t corr;         /* correlation id, CT_NONE if none or not asked */
    int host;             /* index among the covered hosts */
};

typedef int (*kernel_fn)(void *arg, const struct kernel *k);

/* A GPU stream line in trace order: (pid, tid), then file order. */
struct line_ref {
    const struct xp_plane *plane;
    const struct xp_line *line;
    int64_t pid;
    int64_t tid;
    uint32_t seq;
};

static int line_ref_cmp(const void *a, const void *b)
{
    const struct line_ref *x = a, *y = b;

    if (x->pid != y->pid)
        return x->pid < y->pid ? -1 : 1;
    if (x->tid != y->tid)
        return x->tid < y->tid ? -1 : 1;
    return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* Events of one line for the order comparator. */
static const struct xp_line *sort_line;

static int event_order_cmp(const void *a, const void *b)
{
    const struct xp_event *x = &sort_line->events[*(const uint32_t *)a];
    const struct xp_event *y = &sort_line->events[*(const uint32_t *)b];

    if (x->offset_ps != y->offset_ps)
        return x->offset_ps < y->offset_ps ? -1 : 1;
    if (x->duration_ps != y->duration_ps)
        return x->duration_ps > y->duration_ps ? -1 : 1;
    return *(const uint32_t *)a < *(const uint32_t *)b ? -1 : 1;
}

/* The events of a line in (start, longer first) order: NULL when the file
 * order already is that order, else a sorted index array (caller frees). */
static int line_order(const struct xp_line *ln, uint32_t **idxp)
{
    uint32_t e, *idx;

    *idxp = NULL;
    for (e = 1; e < ln->nevents; e++) {
        const struct xp_event *a = &ln->events[e - 1], *b = &ln->events[e];
        if (a->offset_ps > b->offset_ps ||
            (a->offset_ps == b->offset_ps && a->duration_ps < b->duration_ps))
            break;
    }
    if (e >= ln->nevents)
        return 0;
    idx = malloc(ln->nevents * sizeof(*idx));
    if (idx == NULL)
        return -ENOMEM;
    for (e = 0; e < ln->nevents; e++)
        idx[e] = e;
    sort_line = ln; /* qsort has no context argument; callers are serialised */
    xp_qsort(idx, ln->nevents, sizeof(*idx), event_order_cmp);
    *idxp = idx;
    return 0;
}

static pthread_mutex_t sort_lock = PTHREAD_MUTEX_INITIALIZER;

static int visit_xspace(const struct xspace *xs, int host, int want_corr, kernel_fn fn, void *arg)
{
    struct line_ref *refs = NULL;
    const char **name_cat = NULL;
    size_t n = 0, cap = 0, i;
    uint32_t p, l;
    int rc = 0;

    for (p = 0; p < xs->nplanes; p++) {
        const struct xp_plane *pl = &xs->planes[p];
        if (strncmp(pl->name, "/device:GPU:", 12) != 0)
            continue;
        for (l = 0; l < pl->nlines; l++) {
            const struct xp_line *ln = &pl->lines[l];
            const char *lname = ln->display_name[0] ? ln->display_name : ln->name;
            if (ln->nevents == 0 || strncmp(lname, "Stream", 6) != 0)
                continue;
            if (n == cap) {
                struct line_ref *v;
                cap = cap ? cap * 2 : 64;
                v = realloc(refs, cap * sizeof(*v));
                if (v == NULL) {
                    free(refs);
                    return -ENOMEM;
                }
                refs = v;
            }
            refs[n].plane = pl;
            refs[n].line = ln;
            refs[n].pid = 1 + pl->id > 500 || 1 + pl->id < 1 ? 1 : 1 + pl->id;
            refs[n].tid = (uint32_t)(ln->display_id ? ln->display_id : ln->id);
            refs[n].seq = (uint32_t)n;
            n++;
        }
    }
    if (n > 0)
        xp_qsort(refs, n, sizeof(*refs), line_ref_cmp);
    for (i = 0; i < n && rc == 0; i++) {
        const struct xp_plane *pl = refs[i].plane;
        const struct xp_line *ln = refs[i].line;
        uint32_t *idx, k;
        if (i == 0 || pl != refs[i - 1].plane) {
            /* Per event metadata: kernel or not, and the category its name
             * gives (names repeat; matching them is not free). */
            free(name_cat);
            name_cat = malloc((pl->nemeta ? pl->nemeta : 1) * sizeof(*name_cat));
            if (name_cat == NULL) {
                rc = -ENOMEM;
                break;
            }
            for (k = 0; k < pl->nemeta; k++) {
                const struct xp_event_meta *m = &pl->emeta[k];
                const char *name = m->display_name[0] ? m->display_name : m->name;
                name_cat[k] = is_kernel_name(name) ? match_category(name) : NOT_KERNEL;
            }
        }
        pthread_mutex_lock(&sort_lock);
        rc = line_order(ln, &idx);
        pthread_mutex_unlock(&sort_lock);
        if (rc != 0)
            break;
        for (k = 0; k < ln->nevents && rc == 0; k++) {
            const struct xp_event *ev = &ln->events[idx != NULL ? idx[k] : k];
            const struct xp_event_meta *m = xp_event_meta(pl, ev);
            struct kernel x;
            struct xp_stat st;
            char hlo_op[512];
            const char *by_name = name_cat[ev->meta];
            if (by_name == NOT_KERNEL)
                continue;
            x.name = m->display_name[0] ? m->display_name : m->name;
            x.category = by_name != NULL ? by_name : UNCATEGORIZED;
            if ((by_name == NULL || strncmp(by_name, "FA ", 3) != 0) &&
                pl->stat_id[XS_HLO_OP] != XP_NO_STAT && xp_event_stat(pl, ln, ev, XS_HLO_OP, &st) &&
                stat_string(&st, hlo_op, sizeof(hlo_op)))
                x.category = kernel_category(x.name, hlo_op);
            x.ts = (double)xp_event_start_ps(ln, ev) / 1e6;
            x.dur = (double)(ev->duration_ps > 0 ? ev->duration_ps : 1) / 1e6;
            x.pid = refs[i].pid;
            x.tid = refs[i].tid;
            x.corr = CT_NONE;
            if (want_corr && xp_event_stat(pl, ln, ev, XS_CORRELATION_ID, &st))
                x.corr = xp_stat_int(&st);
            x.host = host;
            rc = fn(arg, &x);
        }
        free(idx);
    }
    free(name_cat);
    free(refs);
    return rc;
}

/* JAX Chrome trace: GPU stream events, ordered by (pid, tid, ts, longer
 * first, file order) through an index array. */
static const struct ctrace *sort_ct;

static int ct_order_cmp(const void *a, const void *b)
{
    const struct ctrace_event *x = &sort_ct->events[*(const uint32_t *)a];
    const struct ctrace_event *y = &sort_ct->events[*(const uint32_t *)b];

    if (x->pid != y->pid)
        return x->pid < y->pid ? -1 : 1;
    if (x->tid != y->tid)
        return x->tid < y->tid ? -1 : 1;
    if (x->ts != y->ts)
        return x->ts < y->ts ? -1 : 1;
    if (x->dur != y->dur)
        return x->dur > y->dur ? -1 : 1;
    return *(const uint32_t *)a < *(const uint32_t *)b ? -1 : 1;
}

static int visit_json(const struct ctrace *ct, int host, kernel_fn fn, void *arg)
{
    uint32_t *idx = malloc((ct->nevents ? ct->nevents : 1) * sizeof(*idx)), n = 0, i;
    int rc = 0;

    if (idx == NULL)
        return -ENOMEM;
    for (i = 0; i < ct->nevents; i++) {
        const struct ctrace_event *ev = &ct->events[i];
        if (ev->ph == 'M' || !(ev->flags & CT_HAS_TS) || !(ev->flags & CT_HAS_DUR) ||
            (ev->flags & (CT_PID_STR | CT_TID_STR)))
            continue;
        if (strstr(ctrace_event_process_name(ct, ev), "/device:GPU") == NULL ||
            strncmp(ctrace_event_thread_name(ct, ev), "Stream", 6) != 0 ||
            !is_kernel_name(ctrace_str(ct, ev->name)))
            continue;
        idx[n++] = i;
    }
    pthread_mutex_lock(&sort_lock);
    sort_ct = ct;
    xp_qsort(idx, n, sizeof(*idx), ct_order_cmp);
    pthread_mutex_unlock(&sort_lock);
    for (i = 0; i < n && rc == 0; i++) {
        const struct ctrace_event *ev = &ct->events[idx[i]];
        struct kernel x;
        char hlo_op[512];
        cJSON *args = ctrace_event_args(ct, ev);
        cJSON *op = cJSON_GetObjectItemCaseSensitive(args, "hlo_op");
        hlo_op[0] = 0;
        if (cJSON_IsString(op)) {
            strncpy(hlo_op, op->valuestring, sizeof(hlo_op) - 1);
            hlo_op[sizeof(hlo_op) - 1] = 0;
        }
        cJSON_Delete(args);
        x.name = ctrace_str(ct, ev->name);
        x.category = kernel_category(x.name, hlo_op);
        x.ts = ev->ts;
        x.dur = ev->dur;
        x.pid = ev->pid;
        x.tid = ev->tid;
        x.corr = ev->correlation;
        x.host = host;
        rc = fn(arg, &x);
    }
    free(idx);
    return rc;
}

/* Host events (pid 701) of a JAX Chrome trace with a correlation id. */
static int json_corrs(const struct ctrace *ct, struct corr **vp, size_t *np)
{
    struct corr *v = NULL;
    size_t n = 0, cap = 0, i, w;

    for (i = 0; i < ct->nevents; i++) {
        const struct ctrace_event *ev = &ct->events[i];
        if (ev->pid != 701 || (ev->flags & CT_PID_STR) || ev->correlation == CT_NONE)
            continue;
        if (n == cap) {
            struct corr *nv;
            cap = cap ? cap * 2 : 1024;
            nv = realloc(v, cap * sizeof(*nv));
            if (nv == NULL) {
                free(v);
                return -ENOMEM;
            }
            v = nv;
        }
        v[n].id = ev->correlation;
        v[n].ts = ev->ts;
        n++;
    }
    if (n > 0) {
        xp_qsort(v, n, sizeof(*v), corr_cmp);
        for (i = 0, w = 0; i < n; i++) {
            if (w > 0 && v[w - 1].id == v[i].id)
                continue;
            v[w++] = v[i];
        }
        n = w;
    }
    *vp = v;
    *np = n;
    return 0;
}

/* Per-host state handed to the callbacks. */
struct visit_ctx {
    kernel_fn fn;       /* the caller's callback */
    void *arg;          /* its argument */
    struct corr *corrs; /* this host's launches, when asked */
    size_t ncorrs;
    uint64_t count; /* kernels seen */
};

/* Visit the kernels of every covered JAX host in trace order. With want_corr,
 * k->corr is set and corr_ts() answers the launch time. */
static int visit(struct tool_ctx *ctx, int want_corr, struct visit_ctx *vc)
{
    int i, n = tool_host_count(ctx), rc = 0;

    for (i = 0; i < n && rc == 0; i++) {
        const char *host = tool_host(ctx, i);
        vc->corrs = NULL;
        vc->ncorrs = 0;
        if (snapshot_host_file(ctx->snap, host, SRC_XPLANE) != NULL) {
            struct xspace *xs;
            rc = snapshot_xspace_decoded(ctx->snap, host, &xs, ctx->err);
            if (rc != 0)
                return rc;
            if (want_corr)
                rc = xspace_corrs(xs, &vc->corrs, &vc->ncorrs);
            if (rc == 0)
                rc = visit_xspace(xs, i, want_corr, vc->fn, vc);
        } else if (snapshot_host_file(ctx->snap, host, SRC_TRACE_JSON) != NULL &&
                   snapshot_host_file(ctx->snap, host, SRC_PT_TRACE) == NULL) {
            const struct ctrace *ct;
            rc = ctrace_snapshot(ctx->snap, host, &ct, ctx->err);
            if (rc != 0)
                return rc;
            if (want_corr)
                rc = json_corrs(ct, &vc->corrs, &vc->ncorrs);
            if (rc == 0)
                rc = visit_json(ct, i, vc->fn, vc);
        }
        free(vc->corrs);
        vc->corrs = NULL;
        if (rc == -ENOMEM)
            return xp_err_set(ctx->err, rc, "out of memory");
    }
    if (rc == 0 && vc->count == 0)
        return xp_err_set(ctx->err, -ENOENT, "no GPU kernels found (JAX/XLA profiles only)");
    return rc;
}

static void put_num(struct out *o, double v)
{
    char buf[48];

    if (isnan(v))
        return;
    gt_pyrepr(v, buf, sizeof(buf));
    out_puts(o, buf);
}

/* ---- kernel_launchers.csv ----------------------------------------------------- */

struct csv_ctx {
    struct visit_ctx vc; /* first: the callbacks get a struct visit_ctx * */
    struct tool_ctx *ctx;
    struct out *o;
    int multi;
};

static int write_row(void *arg, const struct kernel *k)
{
    struct csv_ctx *c = arg;
    struct out *o = c->o;
    double latency = NAN;

    c->vc.count++;
    if (k->corr != CT_NONE)
        latency = k->ts - corr_find(c->vc.corrs, c->vc.ncorrs, k->corr);
    out_csv_str(o, k->name, strlen(k->name));
    out_putc(o, ',');
    out_csv_str(o, k->category, strlen(k->category));
    out_putc(o, ',');
    put_num(o, k->dur);
    out_puts(o, ",1,");
    out_i64(o, k->pid);
    out_putc(o, ',');
    out_i64(o, k->tid);
    out_putc(o, ',');
    put_num(o, latency);
    if (c->multi) {
        const char *h = tool_host(c->ctx, k->host);
        out_putc(o, ',');
        out_csv_str(o, h, strlen(h));
    }
    out_putc(o, '\n');
    return 0;
}

static int launchers_csv(struct tool_ctx *ctx, struct out *o)
{
    struct csv_ctx c;

    memset(&c, 0, sizeof(c));
    c.vc.fn = write_row;
    c.ctx = ctx;
    c.o = o;
    c.multi = tool_host_count(ctx) > 1;
    out_puts(o, "name,op category,total_direct_kernel_time,direct_kernel_count,pid,tid,"
                "GPU_kernel_launch_latency");
    out_puts(o, c.multi ? ",host\n" : "\n");
    return visit(ctx, 1, &c.vc);
}
struct group {
    const char *key; /* name or category */
    double sum;      /* Kahan sum of durations, µs */
    double comp;     /* Kahan compensation */
    uint64_t count;  /* kernels */
    double ms;       /* sum / 1000 */
};

/* numpy's pairwise sum of v[0..n) (its add.reduce inner loop). */
static double pairwise_sum(const double *v, size_t n)
{
    if (n < 8) {
        double res = 0.;
        size_t i;
        for (i = 0; i < n; i++)
            res += v[i];
        return res;
    }
    if (n <= 128) {
        double r[8], res;
        size_t i, j;
        for (j = 0; j < 8; j++)
            r[j] = v[j];
        for (i = 8; i < n - (n % 8); i += 8) {
            for (j = 0; j < 8; j++)
                r[j] += v[i + j];
        }
        res = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]));
        for (; i < n; i++)
            res += v[i];
        return res;
    }
    {
        size_t n2 = n / 2;
        n2 -= n2 % 8;
        return pairwise_sum(v, n2) + pairwise_sum(v + n2, n - n2);
    }
}

/* numpy's sum of a 1-D array: first element, plus the pairwise rest. */
static double numpy_sum(const double *v, size_t n)
{
    if (n == 0)
        return 0;
    return v[0] + pairwise_sum(v + 1, n - 1);
}

/* Groups keyed by name or category, with pandas' Kahan group sums. */
struct group_ctx {
    struct visit_ctx vc; /* first: the callbacks get a struct visit_ctx * */
    int by_category;
    struct group *groups;
    size_t ngroups, cap;
    uint32_t *slots; /* hash slots: group index + 1, 0 = empty */
    size_t nslots;
    int64_t pids[512]; /* distinct pids seen (xplane gpu pids are at most 500) */
    size_t npids;
};

static uint64_t key_hash(const char *s)
{
    uint64_t h = 1469598103934665603ull;

    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h;
}

static int group_slots_grow(struct group_ctx *g)
{
    size_t nslots = g->nslots ? g->nslots * 2 : 256, i;
    uint32_t *slots = calloc(nslots, sizeof(*slots));

    if (slots == NULL)
        return -ENOMEM;
    for (i = 0; i < g->ngroups; i++) {
        size_t s = key_hash(g->groups[i].key) & (nslots - 1);
        while (slots[s] != 0)
            s = (s + 1) & (nslots - 1);
        slots[s] = (uint32_t)(i + 1);
    }
    free(g->slots);
    g->slots = slots;
    g->nslots = nslots;
    return 0;
}

static int add_to_group(void *arg, const struct kernel *k)
{
    struct group_ctx *g = arg;
    const char *key = g->by_category ? k->category : k->name;
    struct group *gr;
    size_t s, i;
    double y, t;

    g->vc.count++;
    for (i = 0; i < g->npids && g->pids[i] != k->pid; i++)
        ;
    if (i == g->npids && g->npids < sizeof(g->pids) / sizeof(g->pids[0]))
        g->pids[g->npids++] = k->pid;
    if ((g->ngroups + 1) * 2 > g->nslots && group_slots_grow(g) != 0)
        return -ENOMEM;
    s = key_hash(key) & (g->nslots - 1);
    while (g->slots[s] != 0 && strcmp(g->groups[g->slots[s] - 1].key, key) != 0)
        s = (s + 1) & (g->nslots - 1);
    if (g->slots[s] == 0) {
        if (g->ngroups == g->cap) {
            size_t cap = g->cap ? g->cap * 2 : 64;
            struct group *v = realloc(g->groups, cap * sizeof(*v));
            if (v == NULL)
                return -ENOMEM;
            g->groups = v;
            g->cap = cap;
        }
        memset(&g->groups[g->ngroups], 0, sizeof(*g->groups));
        g->groups[g->ngroups].key = key;
        g->slots[s] = (uint32_t)(++g->ngroups);
    }
    gr = &g->groups[g->slots[s] - 1];
    y = k->dur - gr->comp;
    t = gr->sum + y;
    gr->comp = t - gr->sum - y;
    gr->sum = t;
    gr->count++;
    return 0;
}

static int group_key_cmp(const void *a, const void *b)
{
    return strcmp(((const struct group *)a)->key, ((const struct group *)b)->key);
}

static int summary(struct tool_ctx *ctx, struct out *o, int by_category)
{
    struct group_ctx g;
    double *ms = NULL, total, cum = 0;
    size_t i;
    int rc;

    memset(&g, 0, sizeof(g));
    g.vc.fn = add_to_group;
    g.by_category = by_category;
    rc = visit(ctx, 0, &g.vc);
    if (rc == 0 && (ms = malloc(g.ngroups * sizeof(*ms))) == NULL)
        rc = xp_err_set(ctx->err, -ENOMEM, "out of memory");
    if (rc != 0) {
        free(g.groups);
        free(g.slots);
        return rc;
    }
    /* groupby sorts by key; sort_values(descending) keeps ties in that order. */
    xp_qsort(g.groups, g.ngroups, sizeof(*g.groups), group_key_cmp);
    for (i = 1; i < g.ngroups; i++) {
        struct group x = g.groups[i];
        size_t j = i;
        while (j > 0 && g.groups[j - 1].sum < x.sum) {
            g.groups[j] = g.groups[j - 1];
            j--;
        }
        g.groups[j] = x;
    }
    for (i = 0; i < g.ngroups; i++)
        ms[i] = g.groups[i].ms = g.groups[i].sum / 1000;
    total = numpy_sum(ms, g.ngroups);
    if (by_category)
        out_puts(o, "op category,Count,total_direct_kernel_time_ms,Percentage (%),"
                    "Cumulative Percentage (%),time ms per gpu\n");
    else
        out_puts(o, "name,total_direct_kernel_time_sum,Count,total_direct_kernel_time_ms,"
                    "Percentage (%),Cumulative Percentage (%),time ms per gpu\n");
    for (i = 0; i < g.ngroups; i++) {
        const struct group *gr = &g.groups[i];
        double pct = gr->ms / total * 100;
        cum = i == 0 ? pct : cum + pct;
        out_csv_str(o, gr->key, strlen(gr->key));
        out_putc(o, ',');
        if (!by_category) {
            put_num(o, gr->sum);
            out_putc(o, ',');
        }
        out_u64(o, gr->count);
        out_putc(o, ',');
        put_num(o, gr->ms);
        out_putc(o, ',');
        put_num(o, pct);
        out_putc(o, ',');
        put_num(o, cum);
        out_putc(o, ',');
        put_num(o, gr->ms / (double)g.npids);
        out_putc(o, '\n');
    }
    free(ms);
    free(g.groups);
    free(g.slots);
    return 0;
}

static int summary_csv(struct tool_ctx *ctx, struct out *o)
{
    return summary(ctx, o, 0);
}

static int summary_by_category_csv(struct tool_ctx *ctx, struct out *o)
{
    return summary(ctx, o, 1);
}

/* Listed for runs with xplane or JAX trace JSON hosts. */
static int listed_jax(const struct snapshot *snap)
{
    return snapshot_count(snap, SRC_XPLANE) > 0 || snapshot_count(snap, SRC_TRACE_JSON) > 0;
}

const struct tool tool_kernel_launchers_csv = {
    .file = "kernel_launchers.csv",
    .scope = TOOL_RUN | TOOL_HOST,
    .listed = listed_jax,
    .produce = launchers_csv,
};

const struct tool tool_kernel_launchers_summary_csv = {
    .file = "kernel_launchers_summary.csv",
    .scope = TOOL_RUN | TOOL_HOST,
    .listed = listed_jax,
    .produce = summary_csv,
};

const struct tool tool_kernel_launchers_summary_by_category_csv = {
    .file = "kernel_launchers_summary_by_category.csv",
    .scope = TOOL_RUN | TOOL_HOST,
    .listed = listed_jax,
    .produce = summary_by_category_csv,
};
