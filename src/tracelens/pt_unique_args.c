/*
 * pt_unique_args.c - TraceLens's get_df_kernel_launchers_unique_args over the
 * launcher rows of a PyTorch run: kernel_launchers_unique_args.csv (the
 * default agg_metrics=["mean"], optionally include_pct and one event_name)
 * and perf_report/ops_unique_args.csv (generate_perf_report_pytorch's call:
 * mean, median, std, min, max, include_pct, the kernel_details summary and
 * its truncated form).
 *
 * Rows group by the str() of name, op category, process_name,
 * process_label, thread_name and the four args columns, in order of first
 * sight (groupby sort=False); a run of several hosts groups by host too and
 * adds a host column. Numbers follow pandas 1.5 / numpy 1.24: group mean and
 * sum with Kahan compensation in row order, the median of the two middle
 * values, std by Welford's update with ddof=1 (NaN for one row); the kernel
 * statistics with numpy's pairwise sums and np.std (ddof=0). Rows sort by
 * total_direct_kernel_time_sum descending, then ex_UID.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pt_launchers.h"
#include "pt_launchers_int.h"
#include "pt_pyrepr.h"
#include "base/np_arith.h"
#include "base/sort.h"

/* One launcher row that passed the event_name filter. */
struct urow {
    const struct pt_host *h;
    const struct pt_launcher *l;
    int host;     /* index into hl */
    size_t off;   /* its cells in the cell buffer */
    size_t len;   /* their bytes */
    uint32_t ord; /* row position */
};

/* One group of rows with equal cells. */
struct ugroup {
    uint32_t first; /* index into the sorted row order of its first row */
    uint32_t n;     /* its rows */
    uint32_t ord;   /* position of its first row (order of first sight) */
    double sum;     /* total_direct_kernel_time_sum */
    uint32_t ex_uid;
};

/* Rows by cells (ctx: the cell buffer), then host, then position. */
static int urow_cmp(const void *a, const void *b, void *ctx)
{
    const struct urow *x = a, *y = b;
    const char *cells = ctx;
    size_t n = x->len < y->len ? x->len : y->len;
    int c = memcmp(cells + x->off, cells + y->off, n);

    if (c != 0)
        return c;
    if (x->len != y->len)
        return x->len < y->len ? -1 : 1;
    if (x->host != y->host)
        return x->host < y->host ? -1 : 1;
    return x->ord < y->ord ? -1 : x->ord > y->ord;
}

static int ugroup_first_cmp(const void *a, const void *b)
{
    const struct ugroup *x = a, *y = b;

    return x->ord < y->ord ? -1 : x->ord > y->ord;
}

/* sort_values(["total_direct_kernel_time_sum", "ex_UID"], [False, True]);
 * rows of equal keys keep their order (hosts of a multi-host run). */
static int ugroup_sum_cmp(const void *a, const void *b)
{
    const struct ugroup *x = a, *y = b;

    if (x->sum != y->sum)
        return x->sum > y->sum ? -1 : 1;
    if (x->ex_uid != y->ex_uid)
        return x->ex_uid < y->ex_uid ? -1 : 1;
    return x->ord < y->ord ? -1 : x->ord > y->ord;
}

/* ---- pandas' group statistics ------------------------------------------------- */

struct gstats {
    double mean, median, std, min, max, sum;
};

static int dbl_cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;

    return x < y ? -1 : x > y;
}

/* The statistics of v[0..n) (row order; n > 0; v is reordered). */
static void group_stats(double *v, size_t n, struct gstats *s)
{
    double sum = 0, comp = 0, mean = 0, m2 = 0;
    size_t i;

    s->min = s->max = v[0];
    for (i = 0; i < n; i++) {
        double y = v[i] - comp, t = sum + y, old = mean;
        comp = t - sum - y;
        sum = t;
        mean += (v[i] - old) / (double)(i + 1);
        m2 += (v[i] - old) * (v[i] - mean);
        if (v[i] < s->min)
            s->min = v[i];
        if (v[i] > s->max)
            s->max = v[i];
    }
    s->sum = sum;
    s->mean = sum / (double)n;
    s->std = n > 1 ? sqrt(m2 / (double)(n - 1)) : NAN;
    xp_qsort(v, n, sizeof(*v), dbl_cmp);
    s->median = n % 2 ? v[n / 2] : (v[n / 2] + v[n / 2 - 1]) / 2;
}

/* ---- writing ------------------------------------------------------------------ */

/* Write the cells at p (count of them) as CSV fields, each followed by ','. */
static const char *put_cells(struct out *o, const char *p, int count)
{
    int c;

    for (c = 0; c < count; c++) {
        uint32_t len;
        memcpy(&len, p + 1, sizeof(len));
        if (p[0] != 0)
            out_csv_str(o, p + 5, len);
        out_putc(o, ',');
        p += 5 + len;
    }
    return p;
}

static void put_num(struct out *o, double v, int as_int)
{
    if (isnan(v))
        return;
    pt_put_time(o, v, as_int);
}

static void buf_num(struct pt_buf *b, double v, int as_int)
{
    char num[48];

    if (as_int) {
        snprintf(num, sizeof(num), "%.0f", v);
    } else {
        pt_float_repr(v, num, sizeof(num));
    }
    pt_buf_puts(b, num);
}

/* One position of the kernel_details summary. */
struct kpos {
    uint32_t event; /* the template's kernel */
    double *dur;    /* its durations over the group's rows */
    size_t n;
    int is_int; /* every duration a JSON integer (numpy int64) */
    double total, mean, median, std, min, max;
};

static int kpos_cmp(const void *a, const void *b)
{
    const struct kpos *x = a, *y = b;

    if (x->total != y->total)
        return x->total < y->total ? -1 : 1;
    return 0;
}

/* The direct kernels of launcher l sorted by ts (stable) into k. */
static void kernels_by_ts(const struct pt_host *h, const struct pt_launcher *l, uint32_t *k)
{
    const struct ctrace *ct = h->ct;
    uint32_t i, j;

    for (i = 0; i < l->nkernels; i++) {
        uint32_t e = h->kernels[l->first + i];
        for (j = i; j > 0 && ct->events[k[j - 1]].ts > ct->events[e].ts; j--)
            k[j] = k[j - 1];
        k[j] = e;
    }
}

/* The stream member of event e as repr (None when absent). */
static void put_stream(struct pt_buf *b, const struct ctrace *ct, uint32_t e)
{
    const char *args, *val;
    size_t alen, vlen;

    args = ctrace_event_args_text(ct, &ct->events[e], &alen);
    if (args == NULL || !pt_json_member(args, alen, "stream", &val, &vlen) ||
        pt_json_repr(b, val, vlen, 0) != 0)
        pt_buf_puts(b, "None");
}

/* Python's name[:64] + "..." when the name has more than 64 characters. */
static void put_trunc_name(struct pt_buf *b, const char *s)
{
    size_t i = 0, chars = 0, cut = 0, n = strlen(s);

    for (i = 0; i < n; i++) {
        if (((unsigned char)s[i] & 0xc0) != 0x80) {
            if (chars == 64)
                cut = i;
            chars++;
        }
    }
    if (chars <= 64) {
        pt_str_repr(b, s, n);
        return;
    }
    {
        char *t = malloc(cut + 4);
        if (t == NULL) {
            b->oom = 1;
            return;
        }
        memcpy(t, s, cut);
        memcpy(t + cut, "...", 4);
        pt_str_repr(b, t, cut + 3);
        free(t);
    }
}

int pt_put_kernel_details(struct out *o, const struct pt_klist *lists, size_t n)
{
    const struct ctrace *ct;
    const uint32_t *tmpl;
    struct kpos *pos;
    double *store;
    struct pt_buf b;
    size_t i, p, t;
    uint32_t nk;
    int rc = 0;

    /* the template: the first non-empty list; none: an empty summary */
    for (t = 0; t < n && lists[t].n == 0; t++)
        ;
    if (t == n) {
        out_puts(o, "[],,");
        return 0;
    }
    ct = lists[t].ct;
    tmpl = lists[t].k;
    nk = lists[t].n;
    pos = calloc(nk + 1, sizeof(*pos));
    store = malloc((n * nk + 1) * sizeof(*store));
    memset(&b, 0, sizeof(b));
    if (pos == NULL || store == NULL) {
        rc = -ENOMEM;
        goto out;
    }
    for (p = 0; p < nk; p++) {
        pos[p].event = tmpl[p];
        pos[p].dur = store + p * n;
        pos[p].is_int = 1;
    }
    for (i = 0; i < n; i++) {
        if (lists[i].n != nk)
            continue; /* TraceLens skips a row of another length */
        for (p = 0; p < nk; p++) {
            const struct ctrace_event *ev = &lists[i].ct->events[lists[i].k[p]];
            pos[p].dur[pos[p].n++] = ev->dur;
            pos[p].is_int &= (ev->flags & CT_DUR_INT) != 0;
        }
    }
    for (p = 0; p < nk; p++) {
        struct kpos *q = &pos[p];
        double *x = malloc((q->n + 1) * sizeof(*x));
        size_t j;
        if (x == NULL) {
            rc = -ENOMEM;
            goto out;
        }
        q->total = np_sum(q->dur, q->n);
        q->mean = q->total / (double)q->n;
        q->min = q->max = q->dur[0];
        for (j = 0; j < q->n; j++) {
            double d = q->dur[j] - q->mean;
            x[j] = d * d;
            if (q->dur[j] < q->min)
                q->min = q->dur[j];
            if (q->dur[j] > q->max)
                q->max = q->dur[j];
        }
        q->std = sqrt(np_sum(x, q->n) / (double)q->n);
        memcpy(x, q->dur, q->n * sizeof(*x));
        xp_qsort(x, q->n, sizeof(*x), dbl_cmp);
        q->median = q->n % 2 ? x[q->n / 2] : (x[q->n / 2 - 1] + x[q->n / 2]) / 2;
        free(x);
    }
    /* sort by (total_duration_us, name), stable */
    for (p = 1; p < nk; p++) {
        struct kpos t = pos[p];
        size_t j = p;
        while (j > 0) {
            const struct kpos *a = &pos[j - 1];
            int c = kpos_cmp(a, &t);
            if (c == 0)
                c = strcmp(ctrace_str(ct, ct->events[a->event].name),
                           ctrace_str(ct, ct->events[t.event].name));
            if (c <= 0)
                break;
            pos[j] = pos[j - 1];
            j--;
        }
        pos[j] = t;
    }
    pt_buf_putc(&b, '[');
    for (p = 0; p < nk; p++) {
        const struct kpos *q = &pos[p];
        const char *name = ctrace_str(ct, ct->events[q->event].name);
        char cnt[24];
        if (p > 0)
            pt_buf_puts(&b, ", ");
        pt_buf_puts(&b, "{'name': ");
        pt_str_repr(&b, name, strlen(name));
        pt_buf_puts(&b, ", 'stream': ");
        put_stream(&b, ct, q->event);
        snprintf(cnt, sizeof(cnt), "%zu", q->n);
        pt_buf_puts(&b, ", 'count': ");
        pt_buf_puts(&b, cnt);
        pt_buf_puts(&b, ", 'total_duration_us': ");
        buf_num(&b, q->total, q->is_int);
        pt_buf_puts(&b, ", 'mean_duration_us': ");
        buf_num(&b, q->mean, 0);
        pt_buf_puts(&b, ", 'median_duration_us': ");
        buf_num(&b, q->median, 0);
        pt_buf_puts(&b, ", 'std_dev_duration_us': ");
        buf_num(&b, q->std, 0);
        pt_buf_puts(&b, ", 'min_duration_us': ");
        buf_num(&b, q->min, q->is_int);
        pt_buf_puts(&b, ", 'max_duration_us': ");
        buf_num(&b, q->max, q->is_int);
        pt_buf_putc(&b, '}');
    }
    pt_buf_putc(&b, ']');
    pt_put_buf(o, &b);
    out_putc(o, ',');
    pt_buf_putc(&b, '[');
    for (p = 0; p < nk; p++) {
        const struct kpos *q = &pos[p];
        if (p > 0)
            pt_buf_puts(&b, ", ");
        pt_buf_puts(&b, "{'name': ");
        put_trunc_name(&b, ctrace_str(ct, ct->events[q->event].name));
        pt_buf_puts(&b, ", 'stream': ");
        put_stream(&b, ct, q->event);
        pt_buf_puts(&b, ", 'mean_duration_us': ");
        buf_num(&b, pt_np_round2(q->mean), 0); /* np.float64 */
        pt_buf_putc(&b, '}');
    }
    pt_buf_putc(&b, ']');
    pt_put_buf(o, &b);
    out_putc(o, ',');
    if (b.oom)
        rc = -ENOMEM;
out:
    pt_buf_free(&b);
    free(pos);
    free(store);
    return rc;
}

/* kernel_details_summary and trunc_kernel_details of the group's rows
 * r[0..n), each a CSV field followed by ','. */
static int put_kernel_details(struct out *o, const struct urow *r, size_t n)
{
    struct pt_klist *lists = malloc((n + 1) * sizeof(*lists));
    uint32_t *store, total = 0;
    size_t i;
    int rc;

    if (lists == NULL)
        return -ENOMEM;
    for (i = 0; i < n; i++)
        total += r[i].l->nkernels;
    store = malloc(((size_t)total + 1) * sizeof(*store));
    if (store == NULL) {
        free(lists);
        return -ENOMEM;
    }
    for (i = 0, total = 0; i < n; i++) {
        kernels_by_ts(r[i].h, r[i].l, store + total);
        lists[i].ct = r[i].h->ct;
        lists[i].k = store + total;
        lists[i].n = r[i].l->nkernels;
        total += r[i].l->nkernels;
    }
    rc = pt_put_kernel_details(o, lists, n);
    free(store);
    free(lists);
    return rc;
}

static void put_header(struct out *o, const struct pt_unique_opts *opt, int multi)
{
    out_puts(o, "name,op category,process_name,process_label,thread_name,Input Dims,Input type,"
                "Input Strides,Concrete Inputs,");
    if (multi)
        out_puts(o, "host,");
    out_puts(o, "operation_count,total_direct_kernel_time_mean,total_subtree_kernel_time_mean,");
    if (opt->report)
        out_puts(o, "total_direct_kernel_time_median,total_subtree_kernel_time_median,"
                    "total_direct_kernel_time_std,total_subtree_kernel_time_std,"
                    "total_direct_kernel_time_min,total_subtree_kernel_time_min,"
                    "total_direct_kernel_time_max,total_subtree_kernel_time_max,");
    out_puts(o, "total_direct_kernel_time_sum,total_subtree_kernel_time_sum,ex_UID");
    if (opt->report)
        out_puts(o, ",kernel_details_summary,trunc_kernel_details");
    if (opt->include_pct)
        out_puts(o, ",Percentage (%),Cumulative Percentage (%)");
    out_putc(o, '\n');
}

/* One output row of group g; pct < 0 for none. Returns 0 or -ENOMEM. */
static int put_row(struct out *o, const struct pt_unique_opts *opt, const struct host_list *hl,
                   const char *cells, const struct urow *r, size_t n, const int int_cols[2],
                   double *d, double *s, double pct, double cum)
{
    struct gstats ds, ss;
    size_t i;
    int rc = 0;

    for (i = 0; i < n; i++) {
        d[i] = r[i].l->direct_us;
        s[i] = r[i].l->subtree_us;
    }
    group_stats(d, n, &ds);
    group_stats(s, n, &ss);
    put_cells(o, cells + r[0].off, 9);
    if (hl->n > 1) {
        const char *host = hl->names[r[0].host];
        out_csv_str(o, host, strlen(host));
        out_putc(o, ',');
    }
    out_u64(o, n);
    out_putc(o, ',');
    pt_put_float(o, ds.mean);
    out_putc(o, ',');
    pt_put_float(o, ss.mean);
    out_putc(o, ',');
    if (opt->report) {
        pt_put_float(o, ds.median);
        out_putc(o, ',');
        pt_put_float(o, ss.median);
        out_putc(o, ',');
        pt_put_float(o, ds.std);
        out_putc(o, ',');
        pt_put_float(o, ss.std);
        out_putc(o, ',');
        put_num(o, ds.min, int_cols[0]);
        out_putc(o, ',');
        put_num(o, ss.min, int_cols[1]);
        out_putc(o, ',');
        put_num(o, ds.max, int_cols[0]);
        out_putc(o, ',');
        put_num(o, ss.max, int_cols[1]);
        out_putc(o, ',');
    }
    put_num(o, ds.sum, int_cols[0]);
    out_putc(o, ',');
    put_num(o, ss.sum, int_cols[1]);
    out_putc(o, ',');
    out_u64(o, r[0].l->uid);
    if (opt->report) {
        out_putc(o, ',');
        rc = put_kernel_details(o, r, n);
        /* put_kernel_details ends with ','; take the next field's place */
        if (rc == 0 && opt->include_pct) {
            pt_put_float(o, pct);
            out_putc(o, ',');
            pt_put_float(o, cum);
        }
        out_putc(o, '\n');
        return rc;
    }
    if (opt->include_pct) {
        out_putc(o, ',');
        pt_put_float(o, pct);
        out_putc(o, ',');
        pt_put_float(o, cum);
    }
    out_putc(o, '\n');
    return rc;
}

/* Collect the rows of hs[0..nh) that pass the filter, with their cells. */
static int collect(const struct pt_host *const *hs, int nh, const char *event_name,
                   struct urow **rp, size_t *np, struct pt_buf *cells)
{
    struct urow *r = NULL;
    size_t n = 0, cap = 0;
    int h, rc = 0;

    for (h = 0; h < nh && rc == 0; h++) {
        struct pt_meta *m = NULL;
        uint32_t k;
        if (hs[h] == NULL)
            continue;
        rc = pt_meta_collect(hs[h]->ct, &m);
        for (k = 0; rc == 0 && k < hs[h]->n; k++) {
            const struct pt_launcher *l = &hs[h]->v[k];
            const struct ctrace *ct = hs[h]->ct;
            if (event_name != NULL && strcmp(ctrace_str(ct, ct->events[l->uid].name), event_name))
                continue;
            if (n == cap) {
                struct urow *nr;
                cap = cap ? cap * 2 : 256;
                nr = realloc(r, cap * sizeof(*nr));
                if (nr == NULL) {
                    rc = -ENOMEM;
                    break;
                }
                r = nr;
            }
            r[n].h = hs[h];
            r[n].l = l;
            r[n].host = h;
            r[n].off = cells->n;
            r[n].ord = (uint32_t)n;
            rc = pt_group_cells(ct, l, m, cells);
            r[n].len = cells->n - r[n].off;
            n++;
        }
        pt_meta_free(m);
    }
    *rp = r;
    *np = n;
    return rc;
}

int pt_unique_args_csv(const struct host_list *hl, const struct pt_unique_opts *opt, struct out *o,
                       struct xp_err *err)
{
    const struct pt_host **hs = calloc((size_t)hl->n + 1, sizeof(*hs));
    struct pt_buf cells;
    struct urow *r = NULL;
    struct ugroup *g = NULL;
    double *d = NULL, *s = NULL, *sums = NULL, total = 0, cum = 0;
    size_t nr = 0, ng = 0, i, j;
    int nh = 0, rc, int_cols[2];

    memset(&cells, 0, sizeof(cells));
    if (hs == NULL)
        return xp_err_set(err, -ENOMEM, "out of memory");
    rc = pt_all_hosts(hl, hs, &nh, err);
    if (rc != 0)
        goto done;
    pt_int_columns(hs, nh, &int_cols[0], &int_cols[1]);
    rc = collect(hs, nh, opt->event_name, &r, &nr, &cells);
    g = malloc((nr + 1) * sizeof(*g));
    d = malloc((nr + 1) * sizeof(*d));
    s = malloc((nr + 1) * sizeof(*s));
    sums = malloc((nr + 1) * sizeof(*sums));
    if (rc != 0 || g == NULL || d == NULL || s == NULL || sums == NULL) {
        rc = xp_err_set(err, -ENOMEM, "out of memory");
        goto done;
    }
    /* group: sort by cells (then host, row), then groups in first-seen order */
    xp_qsort_r(r, nr, sizeof(*r), urow_cmp, cells.p);
    for (i = 0; i < nr; i = j) {
        struct gstats st;
        for (j = i + 1; j < nr && r[j].host == r[i].host && r[j].len == r[i].len &&
                        memcmp(cells.p + r[j].off, cells.p + r[i].off, r[i].len) == 0;
             j++)
            ;
        g[ng].first = (uint32_t)i;
        g[ng].n = (uint32_t)(j - i);
        g[ng].ord = r[i].ord;
        g[ng].ex_uid = r[i].l->uid;
        for (size_t k = i; k < j; k++)
            d[k - i] = r[k].l->direct_us;
        group_stats(d, j - i, &st);
        g[ng].sum = st.sum;
        ng++;
    }
    xp_qsort(g, ng, sizeof(*g), ugroup_first_cmp);
    xp_qsort(g, ng, sizeof(*g), ugroup_sum_cmp);
    for (i = 0; i < ng; i++)
        sums[i] = g[i].sum;
    total = np_sum(sums, ng);
    put_header(o, opt, hl->n > 1);
    for (i = 0; i < ng && rc == 0; i++) {
        double pct = sums[i] / total * 100;
        cum = i == 0 ? pct : cum + pct;
        rc = put_row(o, opt, hl, cells.p, r + g[i].first, g[i].n, int_cols, d, s, pct, cum);
    }
    if (rc != 0)
        xp_err_set(err, rc, "out of memory");
done:
    pt_buf_free(&cells);
    free(hs);
    free(r);
    free(g);
    free(d);
    free(s);
    free(sums);
    return rc;
}
