/*
 * pt_short_kernels.c - perf_report/short_kernel_histogram.csv and
 * short_kernels_summary.csv of PyTorch runs: TraceLens's get_dfs_short_kernels
 * (generate_perf_report_pytorch with short_kernel_study, threshold 10 µs,
 * 100 bins, as its own regression references are made).
 *
 * The kernels: every event of cat "kernel" (not memcpy / memset, linked or
 * not) shorter than 10 µs. The histogram is numpy's np.histogram of their
 * durations (linspace edges, numpy's bin search). The summary groups the
 * kernels whose launch lies under a cpu_op (the nearest one above the
 * launch, as get_kernel_details walks) by the cpu_op's name, Input Dims,
 * Input Strides, Concrete Inputs (tuples; a kernel missing any is left out,
 * as pandas' groupby drops NA keys) and the kernel name, in order of first
 * sight: sum, count and mean of the durations, the sum's share of the GPU
 * timeline's total time, sorted by sum descending then the other columns
 * ascending. A run of several hosts groups by host too and adds a host
 * column.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpu_timeline.h"
#include "pt_launchers.h"
#include "pt_nodes.h"
#include "pt_pyrepr.h"
#include "base/grow.h"
#include "base/sort.h"

#define SHORT_US 10.0
#define NBINS 100

/* One short kernel with its summary key. */
struct skern {
    int host;
    uint32_t ev;
    double dur;
    char *key; /* the key cells (cpu_op name, dims, strides, concrete, kernel
                * name), each NUL-terminated, one after another; NULL: no key */
    size_t key_len;
    uint32_t ord;
};

static int dbl_cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;

    return x < y ? -1 : x > y;
}

/* Append the text of a cell to b followed by NUL. */
static void put_cell(struct pt_buf *b, const char *s, size_t n)
{
    pt_buf_write(b, s, n);
    pt_buf_putc(b, '\0');
}

/* The key of kernel e: 0 and the cells in b, 1 when it has none (no cpu_op
 * above, or a missing arg). */
static int kernel_key(const struct pt_nodes *nd, uint32_t e, struct pt_buf *b, struct pt_buf *t)
{
    static const char *const keys[3] = {"Input Dims", "Input Strides", "Concrete Inputs"};
    const struct ctrace *ct = nd->ct;
    uint32_t p = nd->t.parent[e];
    const char *args, *val, *name;
    size_t alen, vlen;
    int k;

    while (p != PT_NONE && nd->t.kind[p] != PT_CPU_OP)
        p = nd->t.parent[p];
    if (p == PT_NONE || nd->t.parent[e] == PT_NONE)
        return 1;
    name = ctrace_str(ct, ct->events[p].name);
    put_cell(b, name, strlen(name));
    args = ctrace_event_args_text(ct, &ct->events[p], &alen);
    for (k = 0; k < 3; k++) {
        if (args == NULL || !pt_json_member(args, alen, keys[k], &val, &vlen) ||
            (vlen == 4 && memcmp(val, "null", 4) == 0))
            return 1;
        t->n = 0;
        if (pt_json_repr(t, val, vlen, 1) != 0)
            return 1;
        put_cell(b, t->p, t->n);
    }
    name = ctrace_str(ct, ct->events[e].name);
    put_cell(b, name, strlen(name));
    return 0;
}

/* The short kernels of every PyTorch host of hl into *vp, *np. */
static int collect(const struct host_list *hl, int with_keys, struct skern **vp, size_t *np,
                   double *total_us, struct xp_err *err)
{
    struct skern *v = NULL;
    size_t n = 0;
    uint32_t cap = 0;
    int h, rc = 0;

    for (h = 0; h < hl->n && rc == 0; h++) {
        const struct pt_nodes *nd;
        const struct gt_host *g;
        const struct ctrace *ct;
        uint32_t kernel, i;
        struct pt_buf t;
        if (snapshot_host_file(hl->snap, hl->names[h], SRC_PT_TRACE) == NULL)
            continue;
        rc = snapshot_pt_nodes(hl->snap, hl->names[h], 0, &nd, err);
        if (rc == 0 && with_keys) {
            rc = snapshot_gpu_timeline(hl->snap, hl->names[h], &g, err);
            if (rc == 0)
                total_us[h] = g->ndevices > 0 ? g->devices[0].metric[GT_TOTAL_TIME] : NAN;
        }
        if (rc != 0)
            break;
        ct = nd->ct;
        kernel = ctrace_str_find(ct, "kernel");
        memset(&t, 0, sizeof(t));
        for (i = 0; kernel != 0 && i < ct->nevents && rc == 0; i++) {
            const struct ctrace_event *e = &ct->events[i];
            struct pt_buf b;
            if (e->cat != kernel || e->ph == 'M' || !(e->dur < SHORT_US))
                continue;
            if (xp_grow((void **)&v, &cap, (uint32_t)n, sizeof(*v)) != 0) {
                rc = xp_err_set(err, -ENOMEM, "out of memory");
                break;
            }
            memset(&v[n], 0, sizeof(v[n]));
            v[n].host = h;
            v[n].ev = i;
            v[n].dur = e->dur;
            v[n].ord = (uint32_t)n;
            memset(&b, 0, sizeof(b));
            if (with_keys && kernel_key(nd, i, &b, &t) == 0) {
                v[n].key = b.p;
                v[n].key_len = b.n;
                if (b.oom)
                    rc = xp_err_set(err, -ENOMEM, "out of memory");
            } else {
                pt_buf_free(&b);
            }
            n++;
        }
        pt_buf_free(&t);
    }
    *vp = v;
    *np = n;
    return rc;
}

static void free_kernels(struct skern *v, size_t n)
{
    size_t i;

    for (i = 0; i < n; i++)
        free(v[i].key);
    free(v);
}

static void put_num(struct out *o, double v)
{
    char num[48];

    pt_float_repr(v, num, sizeof(num));
    out_puts(o, num);
}

int pt_short_kernel_histogram_csv(const struct host_list *hl, struct out *o, struct xp_err *err)
{
    struct skern *v = NULL;
    size_t n = 0, i;
    double *x = NULL, edges[NBINS + 1], lo, hi, step, norm;
    uint64_t count[NBINS];
    int rc = collect(hl, 0, &v, &n, NULL, err), b;

    if (rc != 0)
        goto out;
    out_puts(o, "bin_start,bin_end,count\n");
    if (n == 0)
        goto out; /* TraceLens: the empty frame's header */
    x = malloc(n * sizeof(*x));
    if (x == NULL) {
        rc = xp_err_set(err, -ENOMEM, "out of memory");
        goto out;
    }
    for (i = 0; i < n; i++)
        x[i] = v[i].dur;
    xp_qsort(x, n, sizeof(*x), dbl_cmp);
    lo = x[0];
    hi = x[n - 1];
    if (lo == hi) { /* numpy widens an empty range by 0.5 either way */
        lo -= 0.5;
        hi += 0.5;
    }
    /* np.linspace(lo, hi, NBINS + 1): i * step + lo, the last edge hi */
    step = (hi - lo) / NBINS;
    for (b = 0; b <= NBINS; b++)
        edges[b] = (double)b * step + lo;
    edges[NBINS] = hi;
    memset(count, 0, sizeof(count));
    norm = NBINS / (hi - lo);
    for (i = 0; i < n; i++) {
        /* numpy's uniform-bin search, then its corrections at the edges */
        long k = (long)((x[i] - lo) * norm);
        if (k == NBINS)
            k--;
        if (x[i] < edges[k])
            k--;
        else if (x[i] >= edges[k + 1] && k != NBINS - 1)
            k++;
        count[k]++;
    }
    for (b = 0; b < NBINS; b++) {
        put_num(o, edges[b]);
        out_putc(o, ',');
        put_num(o, edges[b + 1]);
        out_printf(o, ",%llu\n", (unsigned long long)count[b]);
    }
out:
    free(x);
    free_kernels(v, n);
    return rc;
}

/* ---- the summary ----------------------------------------------------------------- */

struct sgroup {
    size_t first, n; /* into the sorted kernels */
    double sum, mean, pct;
    uint32_t ord; /* first sight */
    int host;
};

static int skern_cmp(const void *a, const void *b)
{
    const struct skern *x = a, *y = b;
    size_t n = x->key_len < y->key_len ? x->key_len : y->key_len;
    int c;

    if (x->host != y->host)
        return x->host < y->host ? -1 : 1;
    c = memcmp(x->key, y->key, n);
    if (c != 0)
        return c;
    if (x->key_len != y->key_len)
        return x->key_len < y->key_len ? -1 : 1;
    return x->ord < y->ord ? -1 : x->ord > y->ord;
}

/* sort_values([sum] + the other columns, [False] + [True]...) of the grouped
 * frame (stable, so full ties keep first-sight order). The other columns
 * are the value columns (count, mean, percent); the keys are the index. */
static int sgroup_cmp(const void *a, const void *b)
{
    const struct sgroup *x = a, *y = b;

    if (x->sum != y->sum)
        return x->sum > y->sum ? -1 : 1;
    if (x->n != y->n)
        return x->n < y->n ? -1 : 1;
    if (x->mean != y->mean)
        return x->mean < y->mean ? -1 : 1;
    if (x->pct != y->pct)
        return x->pct < y->pct ? -1 : 1;
    return x->ord < y->ord ? -1 : x->ord > y->ord;
}

int pt_short_kernels_summary_csv(const struct host_list *hl, struct out *o, struct xp_err *err)
{
    struct skern *v = NULL, *keyed = NULL;
    struct sgroup *g = NULL;
    double *total_us = calloc((size_t)hl->n + 1, sizeof(*total_us));
    size_t n = 0, nk = 0, ng = 0, i, j;
    int rc, c, multi = hl->n > 1;

    if (total_us == NULL)
        return xp_err_set(err, -ENOMEM, "out of memory");
    rc = collect(hl, 1, &v, &n, total_us, err);
    if (rc != 0)
        goto out;
    keyed = malloc((n + 1) * sizeof(*keyed));
    g = malloc((n + 1) * sizeof(*g));
    if (keyed == NULL || g == NULL) {
        rc = xp_err_set(err, -ENOMEM, "out of memory");
        goto out;
    }
    for (i = 0; i < n; i++) {
        if (v[i].key != NULL)
            keyed[nk++] = v[i];
    }
    if (nk == 0) {
        out_putc(o, '\n'); /* pandas' to_csv of TraceLens's empty frame */
        goto out;
    }
    xp_qsort(keyed, nk, sizeof(*keyed), skern_cmp);
    for (i = 0; i < nk; i = j) {
        double sum = 0, comp = 0;
        for (j = i;
             j < nk && keyed[j].host == keyed[i].host && keyed[j].key_len == keyed[i].key_len &&
             memcmp(keyed[j].key, keyed[i].key, keyed[i].key_len) == 0;
             j++) {
            double y = keyed[j].dur - comp, t = sum + y;
            comp = t - sum - y;
            sum = t;
        }
        g[ng].first = i;
        g[ng].n = j - i;
        g[ng].sum = sum;
        g[ng].mean = sum / (double)(j - i);
        /* TraceLens: sum / (total_time_ms * 1e3) * 100, total_time_ms = µs / 1000 */
        g[ng].pct = sum / ((total_us[keyed[i].host] / 1000) * 1e3) * 100;
        g[ng].ord = keyed[i].ord;
        g[ng].host = keyed[i].host;
        ng++;
    }
    xp_qsort(g, ng, sizeof(*g), sgroup_cmp);
    out_puts(o, "Parent cpu_op,Input dims,Input strides,Concrete Inputs,Kernel name,"
                "Short Kernel duration (\xc2\xb5s) sum,Short Kernel count,"
                "Short Kernel duration (\xc2\xb5s) mean,"
                "Short Kernel duration (\xc2\xb5s) percent of total time");
    out_puts(o, multi ? ",host\n" : "\n");
    for (i = 0; i < ng; i++) {
        const char *k = keyed[g[i].first].key;
        for (c = 0; c < 5; c++) {
            out_csv_str(o, k, strlen(k));
            out_putc(o, ',');
            k += strlen(k) + 1;
        }
        put_num(o, g[i].sum);
        out_printf(o, ",%zu,", g[i].n);
        put_num(o, g[i].mean);
        out_putc(o, ',');
        put_num(o, g[i].pct);
        if (multi) {
            out_putc(o, ',');
            out_csv_str(o, hl->names[g[i].host], strlen(hl->names[g[i].host]));
        }
        out_putc(o, '\n');
    }
out:
    free(keyed);
    free(g);
    free(total_us);
    free_kernels(v, n);
    return rc;
}
