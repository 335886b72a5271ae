/*
 * pt_summary.c - kernel_launchers_summary.csv and
 * kernel_launchers_summary_by_category.csv of PyTorch runs: TraceLens's
 * get_df_kernel_launchers_summary / _summary_by_category over the launcher
 * rows, with pandas 1.5 / numpy 1.24 arithmetic so the digits agree:
 * groupby sorts the keys and sums with Kahan compensation in row order,
 * sort_values(ascending=False) is numpy's introsort argsort of the reversed
 * column (its order of ties included), Series.sum() is numpy's pairwise sum,
 * cumsum runs left to right.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "pt_launchers.h"
#include "pt_launchers_int.h"
#include "base/np_arith.h"
#include "pt_pyrepr.h"
#include "base/sort.h"

/* A row of the concatenated launcher table, as the summaries read it. */
struct row {
    const char *key;      /* name or op category */
    const char *category; /* op category */
    double direct_us;
    double subtree_us;
    uint32_t order; /* row position */
};

static int row_cmp(const void *a, const void *b)
{
    const struct row *x = a, *y = b;
    int c = strcmp(x->key, y->key);

    if (c != 0)
        return c;
    return x->order < y->order ? -1 : x->order > y->order;
}

/* A group of rows with pandas' Kahan sums (in row order). */
struct group {
    const char *key;
    double sum, comp;         /* total_direct_kernel_time_sum */
    double sub_sum, sub_comp; /* total_subtree_kernel_time_sum */
    uint64_t count;
    size_t first, n; /* its rows */
};

static void kahan(double *sum, double *comp, double v)
{
    double y = v - *comp, t = *sum + y;

    *comp = t - *sum - y;
    *sum = t;
}

/* pandas' sort_values(ascending=False) order of groups by sum (nargsort:
 * argsort of the reversed column, reversed back). */
static int sort_desc(struct group *g, size_t n)
{
    double *rev = calloc(n + 1, sizeof(*rev));
    size_t *idx = malloc((n + 1) * sizeof(*idx)), i;
    struct group *copy = malloc((n + 1) * sizeof(*copy));

    if (rev == NULL || idx == NULL || copy == NULL) {
        free(rev);
        free(idx);
        free(copy);
        return -ENOMEM;
    }
    for (i = 0; i < n; i++)
        rev[i] = g[n - 1 - i].sum;
    np_argsort(rev, idx, n);
    memcpy(copy, g, n * sizeof(*g));
    for (i = 0; i < n; i++)
        g[i] = copy[n - 1 - idx[n - 1 - i]];
    free(rev);
    free(idx);
    free(copy);
    return 0;
}

static int category_cmp(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static int summary(const struct host_list *hl, struct out *o, int by_category, struct xp_err *err)
{
    const struct pt_host **hs = calloc((size_t)hl->n + 1, sizeof(*hs));
    struct row *rows = NULL;
    struct group *groups = NULL;
    const char **cats = NULL;
    double *ms = NULL, total, cum = 0;
    size_t nrows = 0, ngroups = 0, i, j;
    int n = 0, h, rc, int_direct, int_subtree;

    if (hs == NULL)
        return xp_err_set(err, -ENOMEM, "out of memory");
    rc = pt_all_hosts(hl, hs, &n, err);
    if (rc != 0)
        goto out;
    pt_int_columns(hs, n, &int_direct, &int_subtree);
    rc = -ENOMEM;
    for (h = 0; h < n; h++)
        nrows += hs[h] != NULL ? hs[h]->n : 0;
    rows = malloc(nrows * sizeof(*rows));
    groups = malloc(nrows * sizeof(*groups));
    cats = malloc(nrows * sizeof(*cats));
    ms = malloc(nrows * sizeof(*ms));
    if (rows == NULL || groups == NULL || cats == NULL || ms == NULL)
        goto nomem;
    nrows = 0;
    for (h = 0; h < n; h++) {
        uint32_t k;
        for (k = 0; hs[h] != NULL && k < hs[h]->n; k++) {
            const struct pt_launcher *l = &hs[h]->v[k];
            const struct ctrace_event *ev = &hs[h]->ct->events[l->uid];
            rows[nrows].key = by_category ? l->category : ctrace_str(hs[h]->ct, ev->name);
            rows[nrows].category = l->category;
            rows[nrows].direct_us = l->direct_us;
            rows[nrows].subtree_us = l->subtree_us;
            rows[nrows].order = (uint32_t)nrows;
            nrows++;
        }
    }
    /* groupby sorts the keys; sums run in row order within a group. */
    xp_qsort(rows, nrows, sizeof(*rows), row_cmp);
    for (i = 0; i < nrows; i = j) {
        struct group *g = &groups[ngroups++];
        memset(g, 0, sizeof(*g));
        g->key = rows[i].key;
        g->first = i;
        for (j = i; j < nrows && strcmp(rows[j].key, rows[i].key) == 0; j++) {
            kahan(&g->sum, &g->comp, rows[j].direct_us);
            kahan(&g->sub_sum, &g->sub_comp, rows[j].subtree_us);
            g->count++;
        }
        g->n = j - i;
    }
    if (sort_desc(groups, ngroups) != 0)
        goto nomem;
    for (i = 0; i < ngroups; i++)
        ms[i] = groups[i].sum / 1000;
    total = np_sum(ms, ngroups);
    if (by_category)
        out_puts(o, "op category,Count,total_direct_kernel_time_ms,Percentage (%),"
                    "Cumulative Percentage (%)\n");
    else
        out_puts(o, "name,total_direct_kernel_time_sum,total_subtree_kernel_time_sum,"
                    "total_direct_kernel_time_ms,total_subtree_kernel_time_ms,Count,Categories,"
                    "Percentage (%),Cumulative Percentage (%)\n");
    for (i = 0; i < ngroups; i++) {
        const struct group *g = &groups[i];
        double pct = ms[i] / total * 100;
        cum = i == 0 ? pct : cum + pct;
        out_csv_str(o, g->key, strlen(g->key));
        out_putc(o, ',');
        if (by_category) {
            out_u64(o, g->count);
            out_putc(o, ',');
            pt_put_float(o, ms[i]);
        } else {
            struct pt_buf b;
            size_t nc = 0, k;
            pt_put_time(o, g->sum, int_direct);
            out_putc(o, ',');
            pt_put_time(o, g->sub_sum, int_subtree);
            out_putc(o, ',');
            pt_put_float(o, ms[i]);
            out_putc(o, ',');
            pt_put_float(o, g->sub_sum / 1000);
            out_putc(o, ',');
            out_u64(o, g->count);
            out_putc(o, ',');
            /* Categories: the sorted set of the group's op categories. */
            for (k = 0; k < g->n; k++)
                cats[nc++] = rows[g->first + k].category;
            xp_qsort(cats, nc, sizeof(*cats), category_cmp);
            memset(&b, 0, sizeof(b));
            pt_buf_putc(&b, '[');
            for (k = 0; k < nc; k++) {
                if (k > 0 && strcmp(cats[k], cats[k - 1]) == 0)
                    continue;
                if (b.n > 1)
                    pt_buf_puts(&b, ", ");
                pt_str_repr(&b, cats[k], strlen(cats[k]));
            }
            pt_buf_putc(&b, ']');
            if (b.oom) {
                pt_buf_free(&b);
                goto nomem;
            }
            pt_put_buf(o, &b);
            pt_buf_free(&b);
        }
        out_putc(o, ',');
        pt_put_float(o, pct);
        out_putc(o, ',');
        pt_put_float(o, cum);
        out_putc(o, '\n');
    }
    rc = 0;
    goto out;
nomem:
    rc = xp_err_set(err, -ENOMEM, "out of memory");
out:
    free(hs);
    free(rows);
    free(groups);
    free(cats);
    free(ms);
    return rc;
}

int pt_kernel_launchers_summary_csv(const struct host_list *hl, struct out *o, struct xp_err *err)
{
    return summary(hl, o, 0, err);
}

int pt_kernel_launchers_by_category_csv(const struct host_list *hl, struct out *o,
                                        struct xp_err *err)
{
    return summary(hl, o, 1, err);
}
