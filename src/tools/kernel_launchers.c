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
#include <stdlib.h>
#include <string.h>

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

/* A kernel row. Names point into the snapshot's profiles. */
struct row {
    char *name;           /* kernel name (owned) */
    const char *category; /* static */
    double ts;            /* µs */
    double dur;           /* µs */
    int64_t pid;          /* TraceLens gpu pid */
    int64_t tid;          /* stream */
    double latency;       /* µs, NaN if no launching host event */
    int host;             /* index among the covered hosts */
};

struct rows {
    struct row *v;
    size_t n, cap;
};

static int rows_push(struct rows *r, const struct row *x)
{
    if (r->n == r->cap) {
        size_t cap = r->cap ? r->cap * 2 : 256;
        struct row *v = realloc(r->v, cap * sizeof(*v));
        if (v == NULL)
            return -ENOMEM;
        r->v = v;
        r->cap = cap;
    }
    r->v[r->n++] = *x;
    return 0;
}

static void rows_free(struct rows *r)
{
    size_t i;

    for (i = 0; i < r->n; i++)
        free(r->v[i].name);
    free(r->v);
}

/* Is a GPU stream event a kernel (TraceLens's "kernel" category)? */
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
        qsort(v, n, sizeof(*v), corr_cmp);
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

static int rows_from_xspace(const struct xspace *xs, int host, struct rows *r)
{
    struct corr *corrs = NULL;
    size_t ncorrs = 0;
    uint32_t p, l, e;
    int rc = xspace_corrs(xs, &corrs, &ncorrs);

    if (rc != 0)
        return rc;
    for (p = 0; p < xs->nplanes && rc == 0; p++) {
        const struct xp_plane *pl = &xs->planes[p];
        int64_t pid;
        if (strncmp(pl->name, "/device:GPU:", 12) != 0)
            continue;
        pid = 1 + pl->id > 500 || 1 + pl->id < 1 ? 1 : 1 + pl->id;
        for (l = 0; l < pl->nlines && rc == 0; l++) {
            const struct xp_line *ln = &pl->lines[l];
            const char *lname = ln->display_name[0] ? ln->display_name : ln->name;
            if (strncmp(lname, "Stream", 6) != 0)
                continue;
            for (e = 0; e < ln->nevents; e++) {
                const struct xp_event *ev = &ln->events[e];
                const struct xp_event_meta *m = xp_event_meta(pl, ev);
                const char *name = m->display_name[0] ? m->display_name : m->name;
                struct xp_stat st;
                char hlo_op[512];
                struct row x;
                if (!is_kernel_name(name))
                    continue;
                memset(&x, 0, sizeof(x));
                hlo_op[0] = 0;
                if (xp_event_stat(pl, ln, ev, XS_HLO_OP, &st))
                    stat_string(&st, hlo_op, sizeof(hlo_op));
                x.name = strdup(name);
                if (x.name == NULL) {
                    rc = -ENOMEM;
                    break;
                }
                x.category = kernel_category(name, hlo_op);
                x.ts = (double)xp_event_start_ps(ln, ev) / 1e6;
                x.dur = (double)(ev->duration_ps > 0 ? ev->duration_ps : 1) / 1e6;
                x.pid = pid;
                x.tid = (uint32_t)(ln->display_id ? ln->display_id : ln->id);
                x.latency = NAN;
                if (xp_event_stat(pl, ln, ev, XS_CORRELATION_ID, &st))
                    x.latency = x.ts - corr_find(corrs, ncorrs, xp_stat_int(&st));
                x.host = host;
                rc = rows_push(r, &x);
                if (rc != 0)
                    free(x.name);
            }
        }
    }
    free(corrs);
    return rc;
}

static int rows_from_json(const struct ctrace *ct, int host, struct rows *r)
{
    struct corr *corrs = NULL;
    size_t ncorrs = 0, cap = 0, i, w;
    int rc = 0;

    for (i = 0; i < ct->nevents; i++) {
        const struct ctrace_event *ev = &ct->events[i];
        if (ev->pid != 701 || (ev->flags & CT_PID_STR) || ev->correlation == CT_NONE)
            continue;
        if (ncorrs == cap) {
            struct corr *nv;
            cap = cap ? cap * 2 : 1024;
            nv = realloc(corrs, cap * sizeof(*nv));
            if (nv == NULL) {
                free(corrs);
                return -ENOMEM;
            }
            corrs = nv;
        }
        corrs[ncorrs].id = ev->correlation;
        corrs[ncorrs].ts = ev->ts;
        ncorrs++;
    }
    if (ncorrs > 0) {
        qsort(corrs, ncorrs, sizeof(*corrs), corr_cmp);
        for (i = 0, w = 0; i < ncorrs; i++) {
            if (w > 0 && corrs[w - 1].id == corrs[i].id)
                continue;
            corrs[w++] = corrs[i];
        }
        ncorrs = w;
    }
    for (i = 0; i < ct->nevents && rc == 0; i++) {
        const struct ctrace_event *ev = &ct->events[i];
        const char *name = ctrace_str(ct, ev->name);
        struct row x;
        char hlo_op[512];
        cJSON *args, *op;
        if (ev->ph == 'M' || !(ev->flags & CT_HAS_TS) || !(ev->flags & CT_HAS_DUR))
            continue;
        if (strstr(ctrace_event_process_name(ct, ev), "/device:GPU") == NULL ||
            strncmp(ctrace_event_thread_name(ct, ev), "Stream", 6) != 0 || !is_kernel_name(name))
            continue;
        hlo_op[0] = 0;
        args = ctrace_event_args(ct, ev);
        op = cJSON_GetObjectItemCaseSensitive(args, "hlo_op");
        if (cJSON_IsString(op)) {
            strncpy(hlo_op, op->valuestring, sizeof(hlo_op) - 1);
            hlo_op[sizeof(hlo_op) - 1] = 0;
        }
        cJSON_Delete(args);
        memset(&x, 0, sizeof(x));
        x.name = strdup(name);
        if (x.name == NULL)
            return -ENOMEM;
        x.category = kernel_category(name, hlo_op);
        x.ts = ev->ts;
        x.dur = ev->dur;
        x.pid = ev->pid;
        x.tid = ev->tid;
        x.latency =
            ev->correlation != CT_NONE ? ev->ts - corr_find(corrs, ncorrs, ev->correlation) : NAN;
        x.host = host;
        rc = rows_push(r, &x);
        if (rc != 0)
            free(x.name);
    }
    free(corrs);
    return rc;
}

/* Trace order: host, pid, tid, then start ascending, longer first. */
static int row_cmp(const void *a, const void *b)
{
    const struct row *x = a, *y = b;

    if (x->host != y->host)
        return x->host < y->host ? -1 : 1;
    if (x->pid != y->pid)
        return x->pid < y->pid ? -1 : 1;
    if (x->tid != y->tid)
        return x->tid < y->tid ? -1 : 1;
    if (x->ts != y->ts)
        return x->ts < y->ts ? -1 : 1;
    if (x->dur != y->dur)
        return x->dur > y->dur ? -1 : 1;
    return strcmp(x->name, y->name);
}

static int collect(struct tool_ctx *ctx, struct rows *r)
{
    int i, n = tool_host_count(ctx), rc;

    memset(r, 0, sizeof(*r));
    for (i = 0; i < n; i++) {
        const char *host = tool_host(ctx, i);
        if (snapshot_host_file(ctx->snap, host, SRC_XPLANE) != NULL) {
            struct xspace *xs;
            rc = snapshot_xspace_decoded(ctx->snap, host, &xs, ctx->err);
            if (rc == 0)
                rc = rows_from_xspace(xs, i, r);
        } else if (snapshot_host_file(ctx->snap, host, SRC_TRACE_JSON) != NULL &&
                   snapshot_host_file(ctx->snap, host, SRC_PT_TRACE) == NULL) {
            const struct ctrace *ct;
            rc = ctrace_snapshot(ctx->snap, host, &ct, ctx->err);
            if (rc == 0)
                rc = rows_from_json(ct, i, r);
        } else {
            continue;
        }
        if (rc == -ENOMEM)
            xp_err_set(ctx->err, rc, "out of memory");
        if (rc != 0) {
            rows_free(r);
            return rc;
        }
    }
    if (r->n == 0) {
        rows_free(r);
        return xp_err_set(ctx->err, -ENOENT, "no GPU kernels found (JAX/XLA profiles only)");
    }
    qsort(r->v, r->n, sizeof(*r->v), row_cmp);
    return 0;
}

static void put_num(struct out *o, double v)
{
    char buf[48];

    if (isnan(v))
        return;
    gt_pyrepr(v, buf, sizeof(buf));
    out_puts(o, buf);
}

static int launchers_csv(struct tool_ctx *ctx, struct out *o)
{
    struct rows r;
    size_t i;
    int multi = tool_host_count(ctx) > 1, rc = collect(ctx, &r);

    if (rc != 0)
        return rc;
    out_puts(o, "name,op category,total_direct_kernel_time,direct_kernel_count,pid,tid,"
                "GPU_kernel_launch_latency");
    out_puts(o, multi ? ",host\n" : "\n");
    for (i = 0; i < r.n; i++) {
        const struct row *x = &r.v[i];
        out_csv_str(o, x->name, strlen(x->name));
        out_putc(o, ',');
        out_csv_str(o, x->category, strlen(x->category));
        out_putc(o, ',');
        put_num(o, x->dur);
        out_puts(o, ",1,");
        out_i64(o, x->pid);
        out_putc(o, ',');
        out_i64(o, x->tid);
        out_putc(o, ',');
        put_num(o, x->latency);
        if (multi) {
            const char *h = tool_host(ctx, x->host);
            out_putc(o, ',');
            out_csv_str(o, h, strlen(h));
        }
        out_putc(o, '\n');
    }
    rows_free(&r);
    return 0;
}

/* ---- summaries -------------------------------------------------------------- */

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

static int key_cmp(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Groups of rows by name (by_category = 0) or category, sorted by key, then
 * stably by sum descending (pandas' sort_values on these sizes). */
static int make_groups(const struct rows *r, int by_category, struct group **gp, size_t *np)
{
    const char **keys = malloc(r->n * sizeof(*keys));
    struct group *g;
    size_t i, n = 0, k;

    if (keys == NULL)
        return -ENOMEM;
    for (i = 0; i < r->n; i++)
        keys[i] = by_category ? r->v[i].category : r->v[i].name;
    qsort(keys, r->n, sizeof(*keys), key_cmp);
    g = calloc(r->n, sizeof(*g));
    if (g == NULL) {
        free(keys);
        return -ENOMEM;
    }
    for (i = 0; i < r->n; i++) {
        if (n > 0 && strcmp(g[n - 1].key, keys[i]) == 0)
            continue;
        g[n++].key = keys[i];
    }
    free(keys);
    /* Sums in row order (pandas' groupby visits rows in order). */
    for (i = 0; i < r->n; i++) {
        const char *key = by_category ? r->v[i].category : r->v[i].name;
        size_t lo = 0, hi = n;
        double y, t;
        while (lo < hi) {
            size_t mid = (lo + hi) / 2;
            if (strcmp(g[mid].key, key) < 0)
                lo = mid + 1;
            else
                hi = mid;
        }
        k = lo;
        y = r->v[i].dur - g[k].comp;
        t = g[k].sum + y;
        g[k].comp = t - g[k].sum - y;
        g[k].sum = t;
        g[k].count++;
    }
    /* Stable insertion sort by sum, descending. */
    for (i = 1; i < n; i++) {
        struct group x = g[i];
        size_t j = i;
        while (j > 0 && g[j - 1].sum < x.sum) {
            g[j] = g[j - 1];
            j--;
        }
        g[j] = x;
    }
    for (i = 0; i < n; i++)
        g[i].ms = g[i].sum / 1000;
    *gp = g;
    *np = n;
    return 0;
}

/* Distinct pids among the rows. */
static size_t distinct_pids(const struct rows *r)
{
    size_t i, k, n = 0;
    int64_t *seen = malloc(r->n * sizeof(*seen));

    if (seen == NULL)
        return 1;
    for (i = 0; i < r->n; i++) {
        for (k = 0; k < n && seen[k] != r->v[i].pid; k++)
            ;
        if (k == n)
            seen[n++] = r->v[i].pid;
    }
    free(seen);
    return n ? n : 1;
}

static int summary(struct tool_ctx *ctx, struct out *o, int by_category)
{
    struct rows r;
    struct group *g;
    double *ms, total, cum = 0;
    size_t n, i, ngpus;
    int rc = collect(ctx, &r);

    if (rc != 0)
        return rc;
    rc = make_groups(&r, by_category, &g, &n);
    if (rc != 0) {
        rows_free(&r);
        return xp_err_set(ctx->err, rc, "out of memory");
    }
    ms = malloc(n * sizeof(*ms));
    if (ms == NULL) {
        free(g);
        rows_free(&r);
        return xp_err_set(ctx->err, -ENOMEM, "out of memory");
    }
    for (i = 0; i < n; i++)
        ms[i] = g[i].ms;
    total = numpy_sum(ms, n);
    ngpus = distinct_pids(&r);
    if (by_category)
        out_puts(o, "op category,Count,total_direct_kernel_time_ms,Percentage (%),"
                    "Cumulative Percentage (%),time ms per gpu\n");
    else
        out_puts(o, "name,total_direct_kernel_time_sum,Count,total_direct_kernel_time_ms,"
                    "Percentage (%),Cumulative Percentage (%),time ms per gpu\n");
    for (i = 0; i < n; i++) {
        double pct = g[i].ms / total * 100;
        cum = i == 0 ? pct : cum + pct;
        out_csv_str(o, g[i].key, strlen(g[i].key));
        out_putc(o, ',');
        if (!by_category) {
            put_num(o, g[i].sum);
            out_putc(o, ',');
        }
        out_u64(o, g[i].count);
        out_putc(o, ',');
        put_num(o, g[i].ms);
        out_putc(o, ',');
        put_num(o, pct);
        out_putc(o, ',');
        put_num(o, cum);
        out_putc(o, ',');
        put_num(o, g[i].ms / (double)ngpus);
        out_putc(o, '\n');
    }
    free(ms);
    free(g);
    rows_free(&r);
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
