/*
 * pt_summary.c - the rows of kernel_launchers_summary.csv and
 * kernel_launchers_summary_by_category.csv of PyTorch runs (struct
 * pt_summary, for the writers below and for other callers such as the run
 * report): TraceLens's get_df_kernel_launchers_summary / _summary_by_category
 * over the launcher rows, with pandas 1.5 / numpy 1.24 arithmetic so the
 * digits agree: groupby sorts the keys and sums with Kahan compensation in
 * row order, sort_values(ascending=False) is numpy's introsort argsort of the
 * reversed column (its order of ties included), Series.sum() is numpy's
 * pairwise sum, cumsum runs left to right.
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

/* The launcher rows of hs[0..n) into *rowsp (caller frees), *nrows, keyed
 * by name or op category. Returns 0 or -ENOMEM. */
static int collect_rows(const struct pt_host *const *hs, int n, enum pt_summary_key by,
                        struct row **rowsp, size_t *nrows)
{
    struct row *rows;
    size_t m = 0;
    int h;

    for (h = 0; h < n; h++)
        m += hs[h] != NULL ? hs[h]->n : 0;
    rows = malloc((m + 1) * sizeof(*rows));
    if (rows == NULL)
        return -ENOMEM;
    m = 0;
    for (h = 0; h < n; h++) {
        uint32_t k;
        for (k = 0; hs[h] != NULL && k < hs[h]->n; k++) {
            const struct pt_launcher *l = &hs[h]->v[k];
            const struct ctrace_event *ev = &hs[h]->ct->events[l->uid];
            rows[m].key =
                by == PT_SUMMARY_BY_CATEGORY ? l->category : ctrace_str(hs[h]->ct, ev->name);
            rows[m].category = l->category;
            rows[m].direct_us = l->direct_us;
            rows[m].subtree_us = l->subtree_us;
            rows[m].order = (uint32_t)m;
            m++;
        }
    }
    *rowsp = rows;
    *nrows = m;
    return 0;
}

/* Group the rows (sorted by key) into g[0..*ngroups), with their sums. */
static void group_rows(const struct row *rows, size_t nrows, struct group *g, size_t *ngroups)
{
    size_t i, j, n = 0;

    for (i = 0; i < nrows; i = j) {
        struct group *p = &g[n++];
        memset(p, 0, sizeof(*p));
        p->key = rows[i].key;
        p->first = i;
        for (j = i; j < nrows && strcmp(rows[j].key, rows[i].key) == 0; j++) {
            kahan(&p->sum, &p->comp, rows[j].direct_us);
            kahan(&p->sub_sum, &p->sub_comp, rows[j].subtree_us);
            p->count++;
        }
        p->n = j - i;
    }
    *ngroups = n;
}

/* Fill s->rows from the sorted groups: times, shares, and each group's
 * sorted distinct op categories into s->cats. Returns 0 or -ENOMEM. */
static int fill_summary(struct pt_summary *s, const struct group *g, size_t ngroups,
                        const struct row *rows, size_t nrows)
{
    double *ms = malloc((ngroups + 1) * sizeof(*ms)), total, cum = 0;
    size_t i, k, used = 0;

    s->rows = calloc(ngroups + 1, sizeof(*s->rows));
    s->cats = malloc((nrows + 1) * sizeof(*s->cats));
    if (ms == NULL || s->rows == NULL || s->cats == NULL) {
        free(ms);
        return -ENOMEM;
    }
    for (i = 0; i < ngroups; i++)
        ms[i] = g[i].sum / 1000;
    total = np_sum(ms, ngroups);
    for (i = 0; i < ngroups; i++) {
        struct pt_summary_row *r = &s->rows[i];
        const char **c = s->cats + used;
        size_t nc = 0;
        r->key = g[i].key;
        r->count = g[i].count;
        r->direct_us = g[i].sum;
        r->subtree_us = g[i].sub_sum;
        r->direct_ms = ms[i];
        r->subtree_ms = g[i].sub_sum / 1000;
        r->pct = ms[i] / total * 100;
        cum = i == 0 ? r->pct : cum + r->pct;
        r->cum_pct = cum;
        for (k = 0; k < g[i].n; k++)
            c[k] = rows[g[i].first + k].category;
        xp_qsort(c, g[i].n, sizeof(*c), category_cmp);
        for (k = 0; k < g[i].n; k++) {
            if (k == 0 || strcmp(c[k], c[nc - 1]) != 0)
                c[nc++] = c[k];
        }
        r->categories = c;
        r->ncategories = nc;
        used += nc;
    }
    s->n = ngroups;
    free(ms);
    return 0;
}

int pt_summary_build(const struct host_list *hl, enum pt_summary_key by, struct pt_summary *s,
                     struct xp_err *err)
{
    const struct pt_host **hs = calloc((size_t)hl->n + 1, sizeof(*hs));
    struct row *rows = NULL;
    struct group *groups = NULL;
    size_t nrows = 0, ngroups = 0;
    int n = 0, rc;

    memset(s, 0, sizeof(*s));
    if (hs == NULL)
        return xp_err_set(err, -ENOMEM, "out of memory");
    rc = pt_all_hosts(hl, hs, &n, err);
    if (rc != 0)
        goto out;
    pt_int_columns(hs, n, &s->direct_int, &s->subtree_int);
    if (collect_rows(hs, n, by, &rows, &nrows) != 0)
        goto nomem;
    groups = malloc((nrows + 1) * sizeof(*groups));
    if (groups == NULL)
        goto nomem;
    /* groupby sorts the keys; sums run in row order within a group. */
    xp_qsort(rows, nrows, sizeof(*rows), row_cmp);
    group_rows(rows, nrows, groups, &ngroups);
    if (sort_desc(groups, ngroups) != 0 || fill_summary(s, groups, ngroups, rows, nrows) != 0)
        goto nomem;
    goto out;
nomem:
    rc = xp_err_set(err, -ENOMEM, "out of memory");
out:
    if (rc != 0)
        pt_summary_release(s);
    free(hs);
    free(rows);
    free(groups);
    return rc;
}

void pt_summary_release(struct pt_summary *s)
{
    if (s == NULL)
        return;
    free(s->rows);
    free(s->cats);
    memset(s, 0, sizeof(*s));
}

/* ---- the two files ------------------------------------------------------------ */

/* Categories: repr() of the sorted list of a row's op categories. */
static int put_categories(struct out *o, const struct pt_summary_row *r)
{
    struct pt_buf b;
    size_t k;
    int rc = 0;

    memset(&b, 0, sizeof(b));
    pt_buf_putc(&b, '[');
    for (k = 0; k < r->ncategories; k++) {
        if (k > 0)
            pt_buf_puts(&b, ", ");
        pt_str_repr(&b, r->categories[k], strlen(r->categories[k]));
    }
    pt_buf_putc(&b, ']');
    if (b.oom)
        rc = -ENOMEM;
    else
        pt_put_buf(o, &b);
    pt_buf_free(&b);
    return rc;
}

static int write_summary(const struct host_list *hl, struct out *o, enum pt_summary_key by,
                         struct xp_err *err)
{
    struct pt_summary s;
    size_t i;
    int rc = pt_summary_build(hl, by, &s, err);

    if (rc != 0)
        return rc;
    if (by == PT_SUMMARY_BY_CATEGORY)
        out_puts(o, "op category,Count,total_direct_kernel_time_ms,Percentage (%),"
                    "Cumulative Percentage (%)\n");
    else
        out_puts(o, "name,total_direct_kernel_time_sum,total_subtree_kernel_time_sum,"
                    "total_direct_kernel_time_ms,total_subtree_kernel_time_ms,Count,Categories,"
                    "Percentage (%),Cumulative Percentage (%)\n");
    for (i = 0; i < s.n && rc == 0; i++) {
        const struct pt_summary_row *r = &s.rows[i];
        out_csv_str(o, r->key, strlen(r->key));
        out_putc(o, ',');
        if (by == PT_SUMMARY_BY_CATEGORY) {
            out_u64(o, r->count);
            out_putc(o, ',');
            pt_put_float(o, r->direct_ms);
        } else {
            pt_put_time(o, r->direct_us, s.direct_int);
            out_putc(o, ',');
            pt_put_time(o, r->subtree_us, s.subtree_int);
            out_putc(o, ',');
            pt_put_float(o, r->direct_ms);
            out_putc(o, ',');
            pt_put_float(o, r->subtree_ms);
            out_putc(o, ',');
            out_u64(o, r->count);
            out_putc(o, ',');
            rc = put_categories(o, r);
        }
        out_putc(o, ',');
        pt_put_float(o, r->pct);
        out_putc(o, ',');
        pt_put_float(o, r->cum_pct);
        out_putc(o, '\n');
    }
    pt_summary_release(&s);
    if (rc != 0)
        return xp_err_set(err, rc, "out of memory");
    return 0;
}

int pt_kernel_launchers_summary_csv(const struct host_list *hl, struct out *o, struct xp_err *err)
{
    return write_summary(hl, o, PT_SUMMARY_BY_NAME, err);
}

int pt_kernel_launchers_by_category_csv(const struct host_list *hl, struct out *o,
                                        struct xp_err *err)
{
    return write_summary(hl, o, PT_SUMMARY_BY_CATEGORY, err);
}
