/*
 * run_numbers.c - the numbers of one run that report.* and compare.* both
 * show (see run_numbers.h): sample statistics, GPUs, framework ops and
 * kernels, warnings.
 */
#include "run_numbers.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/np_arith.h"
#include "reader/ctrace.h"
#include "tracelens/gpu_timeline.h"

static int cmp_i64(const void *pa, const void *pb)
{
    int64_t a = *(const int64_t *)pa, b = *(const int64_t *)pb;

    return (a > b) - (a < b);
}

void stat5_of(int64_t *ps, uint32_t n, double unit_ps, struct stat5 *s)
{
    double sum = 0;
    uint32_t i;

    memset(s, 0, sizeof(*s));
    s->n = n;
    if (n == 0)
        return;
    qsort(ps, n, sizeof(*ps), cmp_i64);
    for (i = 0; i < n; i++)
        sum += (double)ps[i];
    s->median = np_percentile_sorted(ps, n, 0.5) / unit_ps;
    s->p90 = np_percentile_sorted(ps, n, 0.9) / unit_ps;
    s->min = (double)ps[0] / unit_ps;
    s->max = (double)ps[n - 1] / unit_ps;
    s->mean = sum / n / unit_ps;
}

void run_warn(struct run_warnings *w, const char *fmt, ...)
{
    va_list ap;

    if (w->n == RUN_MAX_WARNINGS)
        return;
    va_start(ap, fmt);
    vsnprintf(w->msg[w->n], sizeof(w->msg[0]), fmt, ap);
    va_end(ap);
    w->n++;
}

/* ---- GPUs ----------------------------------------------------------------------- */

int run_gpus(struct snapshot *snap, const char *const *hosts, int nhosts, struct run_gpu **v,
             int *n, struct run_warnings *w)
{
    int h;

    for (h = 0; h < nhosts; h++) {
        const struct gt_host *g;
        struct xp_err err = {0};
        struct run_gpu *nv;
        uint32_t d;
        int rc = snapshot_gpu_timeline(snap, hosts[h], &g, &err);
        if (rc == -ENOMEM)
            return rc;
        if (rc != 0) {
            run_warn(w, "gpus: %s: %s", hosts[h], err.msg);
            continue;
        }
        nv = realloc(*v, (size_t)(*n + (int)g->ndevices + 1) * sizeof(*nv));
        if (nv == NULL)
            return -ENOMEM;
        *v = nv;
        for (d = 0; d < g->ndevices; d++) {
            const struct gt_device *dev = &g->devices[d];
            struct run_gpu *o = &(*v)[(*n)++];
            o->host = hosts[h];
            o->device = dev->name;
            o->busy_us = dev->metric[GT_BUSY_TIME];
            o->idle_us = dev->metric[GT_IDLE_TIME];
            o->total_us = dev->metric[GT_TOTAL_TIME];
            o->exposed_comm_us = dev->metric[GT_EXPOSED_COMM_TIME];
            o->exposed_memcpy_us = dev->metric[GT_EXPOSED_MEMCPY_TIME];
        }
    }
    return 0;
}

/* ---- framework ops and kernels of op_stats ------------------------------------- */

void run_fw_ops_free(struct run_fw_op *v, uint32_t n)
{
    uint32_t i;

    for (i = 0; v != NULL && i < n; i++) {
        free(v[i].name);
        free(v[i].category);
    }
    free(v);
}

int run_fw_ops(const struct op_stats *os, struct run_fw_op **v, uint32_t *n)
{
    struct op_metrics_db tf;
    struct arena arena;
    const struct op_metrics **rows;
    uint32_t nrows, i;
    double total;
    int rc = 0;

    *v = NULL;
    *n = 0;
    arena_init(&arena);
    op_db_tf_from_device(&tf, &arena, &os->device_db, 0);
    rows = tf.oom ? NULL : op_db_sorted(&tf, 0, &nrows);
    if (rows != NULL)
        *v = calloc(nrows + 1, sizeof(**v));
    if (rows == NULL || *v == NULL) {
        free((void *)rows);
        op_db_free(&tf);
        arena_free(&arena);
        return -ENOMEM;
    }
    total = (double)tf.total_op_time_ps / 1e6;
    for (i = 0; i < nrows && rc == 0; i++) {
        const struct op_metrics *m = rows[i];
        struct run_fw_op *op = &(*v)[*n];
        if (op_is_idle(m))
            continue;
        /* Copies: the framework db and its names go below. */
        op->name = strdup(m->name);
        op->category = strdup(m->category);
        op->occurrences = m->occurrences;
        op->self_us = (double)m->self_time_ps / 1e6;
        op->share_pct = total > 0 ? op->self_us / total * 100 : 0;
        op->gflops_per_s = m->time_ps > 0 ? m->flops_v2 / ((double)m->time_ps / 1e12) / 1e9 : 0;
        (*n)++;
        if (op->name == NULL || op->category == NULL)
            rc = -ENOMEM;
    }
    free((void *)rows);
    op_db_free(&tf);
    arena_free(&arena);
    if (rc != 0) {
        run_fw_ops_free(*v, *n);
        *v = NULL;
        *n = 0;
    }
    return rc;
}

/* Kernels by total time, longest first, then name. */
static int kernel_total_desc(const void *a, const void *b)
{
    const struct run_kernel *x = a, *y = b;

    if (x->total_us != y->total_us)
        return x->total_us > y->total_us ? -1 : 1;
    return strcmp(x->name, y->name);
}

/* 1 if two kernel reports are the same kernel of the same op (the
 * combined op_stats keeps each host's report). */
static int same_kernel(const struct run_kernel *k, const struct kernel_report *r)
{
    return strcmp(k->name, r->name) == 0 && strcmp(k->op ? k->op : "", r->op_name) == 0;
}

int run_xp_kernels(const struct op_stats *os, struct run_kernel **v, uint32_t *n)
{
    struct run_kernel *all = calloc(os->nkernels ? os->nkernels : 1, sizeof(*all));
    double total = 0;
    uint32_t i, j;

    *v = all;
    *n = 0;
    if (all == NULL)
        return -ENOMEM;
    for (i = 0; i < os->nkernels; i++) {
        const struct kernel_report *k = &os->kernels[i];
        total += (double)k->total_duration_ns / 1e3;
        for (j = 0; j < *n && !same_kernel(&all[j], k); j++)
            ;
        if (j == *n) {
            all[j].name = k->name;
            all[j].op = k->op_name;
            all[j].tensor_core = k->is_kernel_using_tensor_core;
            (*n)++;
        }
        all[j].occurrences += k->occurrences;
        all[j].total_us += (double)k->total_duration_ns / 1e3;
    }
    qsort(all, *n, sizeof(*all), kernel_total_desc);
    for (j = 0; j < *n; j++)
        all[j].share_pct = total > 0 ? all[j].total_us / total * 100 : 0;
    return 0;
}

/* ---- kernels of PyTorch traces --------------------------------------------------- */

/* Kernel sums by name, then by first host. */
static int pt_kernel_name_cmp(const void *a, const void *b)
{
    const struct run_pt_kernel *x = a, *y = b;
    int c = strcmp(x->name, y->name);

    if (c != 0)
        return c;
    return (x->host > y->host) - (x->host < y->host);
}

/* Kernel sums by total time, longest first, then name. */
static int pt_kernel_total_desc(const void *a, const void *b)
{
    const struct run_pt_kernel *x = a, *y = b;

    if (x->total_us != y->total_us)
        return x->total_us > y->total_us ? -1 : 1;
    return strcmp(x->name, y->name);
}

/* Append to *v the sums by name of the "kernel" complete events of trace ct
 * (host h), in file order, and add their time to *total. Returns 0 or
 * -ENOMEM. */
static int host_kernel_sums(const struct ctrace *ct, int h, struct run_pt_kernel **v, size_t *n,
                            size_t *cap, double *total)
{
    uint32_t cat = ctrace_str_find(ct, "kernel"), *slot, i;

    if (cat == 0)
        return 0;
    slot = malloc(((size_t)ctrace_str_count(ct) + 1) * sizeof(*slot));
    if (slot == NULL)
        return -ENOMEM;
    memset(slot, 0xff, ((size_t)ctrace_str_count(ct) + 1) * sizeof(*slot));
    for (i = 0; i < ct->nevents; i++) {
        const struct ctrace_event *ev = &ct->events[i];
        struct run_pt_kernel *k;
        if (ev->cat != cat || ev->ph != 'X')
            continue;
        if (slot[ev->name] == UINT32_MAX) {
            if (*n == *cap) {
                size_t c = *cap ? *cap * 2 : 256;
                struct run_pt_kernel *nv = realloc(*v, c * sizeof(*nv));
                if (nv == NULL) {
                    free(slot);
                    return -ENOMEM;
                }
                *v = nv;
                *cap = c;
            }
            memset(&(*v)[*n], 0, sizeof(**v));
            (*v)[*n].name = ctrace_str(ct, ev->name);
            (*v)[*n].host = h;
            slot[ev->name] = (uint32_t)(*n)++;
        }
        k = &(*v)[slot[ev->name]];
        if (k->occurrences++ == 0 || ev->dur > k->max_us)
            k->max_us = ev->dur;
        k->total_us += ev->dur;
        *total += ev->dur;
    }
    free(slot);
    return 0;
}

int run_pt_kernels(struct snapshot *snap, const char *const *hosts, int nhosts,
                   struct run_pt_kernel **out, size_t *nout, struct run_warnings *w)
{
    struct run_pt_kernel *v = NULL;
    size_t n = 0, cap = 0, i, m = 0;
    double total = 0;
    int h, rc = 0;

    *out = NULL;
    *nout = 0;
    for (h = 0; h < nhosts && rc == 0; h++) {
        const struct ctrace *ct;
        struct xp_err err = {0};
        if (snapshot_host_file(snap, hosts[h], SRC_PT_TRACE) == NULL)
            continue;
        rc = snapshot_ctrace(snap, hosts[h], &ct, &err);
        if (rc == 0)
            rc = host_kernel_sums(ct, h, &v, &n, &cap, &total);
        else if (rc != -ENOMEM) {
            run_warn(w, "top_kernels: %s: %s", hosts[h], err.msg);
            rc = 0;
        }
    }
    if (rc != 0) {
        free(v);
        return rc;
    }
    if (n > 1)
        qsort(v, n, sizeof(*v), pt_kernel_name_cmp);
    for (i = 0; i < n; i++) {
        if (m > 0 && strcmp(v[m - 1].name, v[i].name) == 0) {
            v[m - 1].occurrences += v[i].occurrences;
            v[m - 1].total_us += v[i].total_us;
            if (v[i].max_us > v[m - 1].max_us)
                v[m - 1].max_us = v[i].max_us;
            continue;
        }
        v[m++] = v[i];
    }
    if (m > 1)
        qsort(v, m, sizeof(*v), pt_kernel_total_desc);
    for (i = 0; i < m; i++)
        v[i].share_pct = total > 0 ? v[i].total_us / total * 100 : 0;
    *out = v;
    *nout = m;
    return 0;
}
