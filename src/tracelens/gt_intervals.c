/*
 * gt_intervals.c - TraceLens's interval algebra (see gpu_timeline.h): merge,
 * subtract and length of interval lists, and the timeline metrics of one
 * device from the intervals of each class.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "gpu_timeline.h"
#include "base/sort.h"

const char *const gt_metric_names[GT_NMETRICS] = {
    "computation_time", "exposed_comm_time", "exposed_memcpy_time", "busy_time",
    "idle_time",        "total_time",        "total_comm_time",     "total_memcpy_time",
};

static int interval_cmp(const void *a, const void *b)
{
    const struct gt_interval *x = a, *y = b;
    return x->start < y->start ? -1 : x->start > y->start;
}

static int interval_cmp_ctx(const void *a, const void *b, void *ctx)
{
    (void)ctx;
    return interval_cmp(a, b);
}

size_t gt_merge(struct gt_interval *v, size_t n)
{
    size_t i, m = 0;

    if (n == 0)
        return 0;
    /* Intervals come in runs sorted by start (one per stream): merge the
     * runs; qsort if there is no memory for that. */
    if (xp_sort_runs(v, n, sizeof(*v), interval_cmp_ctx, NULL) != 0)
        xp_qsort(v, n, sizeof(*v), interval_cmp);
    for (i = 1; i < n; i++) {
        if (v[i].start <= v[m].end) {
            if (v[i].end > v[m].end)
                v[m].end = v[i].end;
        } else {
            v[++m] = v[i];
        }
    }
    return m + 1;
}

size_t gt_subtract(const struct gt_interval *a, size_t na, const struct gt_interval *b, size_t nb,
                   struct gt_interval *out)
{
    size_t ai = 0, bi, n = 0;

    for (bi = 0; bi < nb; bi++) {
        double cur = b[bi].start, bend = b[bi].end;
        size_t t;
        while (ai < na && a[ai].end <= b[bi].start)
            ai++;
        for (t = ai; t < na && a[t].start < bend; t++) {
            if (a[t].start > cur) {
                out[n].start = cur;
                out[n].end = bend < a[t].start ? bend : a[t].start;
                n++;
            }
            if (a[t].end > cur)
                cur = a[t].end;
            if (cur >= bend)
                break;
        }
        if (cur < bend) {
            out[n].start = cur;
            out[n].end = bend;
            n++;
        }
    }
    return n;
}

double gt_length(const struct gt_interval *v, size_t n)
{
    double sum = 0;
    size_t i;

    for (i = 0; i < n; i++)
        sum += v[i].end - v[i].start;
    return sum;
}

int gt_metrics(struct gt_interval *cls[3], size_t ncls[3], double metric[GT_NMETRICS])
{
    size_t ncomp, ncomm, nmem, nall = ncls[0] + ncls[1] + ncls[2], nx, nmc, nem, ntmp;
    struct gt_interval *all, *tmp, *second;

    if (nall == 0)
        return -EINVAL;
    ncomp = gt_merge(cls[GT_COMPUTATION], ncls[GT_COMPUTATION]);
    ncomm = gt_merge(cls[GT_COMMUNICATION], ncls[GT_COMMUNICATION]);
    nmem = gt_merge(cls[GT_MEMCPY], ncls[GT_MEMCPY]);
    /* The union of all intervals is the union of the merged classes (the
     * same connected pieces), which are fewer and already in order. */
    nall = ncomp + ncomm + nmem;
    ntmp = ncomp + (ncomm > nmem ? ncomm : nmem) + 1;
    all = malloc(nall * sizeof(*all));
    tmp = malloc(ntmp * sizeof(*tmp));
    if (all == NULL || tmp == NULL) {
        free(all);
        free(tmp);
        return -ENOMEM;
    }
    if (ncomp > 0)
        memcpy(all, cls[GT_COMPUTATION], ncomp * sizeof(*all));
    if (ncomm > 0)
        memcpy(all + ncomp, cls[GT_COMMUNICATION], ncomm * sizeof(*all));
    if (nmem > 0)
        memcpy(all + ncomp + ncomm, cls[GT_MEMCPY], nmem * sizeof(*all));
    nall = gt_merge(all, nall);

    metric[GT_TOTAL_TIME] = all[nall - 1].end - all[0].start;
    metric[GT_COMPUTATION_TIME] = gt_length(cls[GT_COMPUTATION], ncomp);
    metric[GT_TOTAL_COMM_TIME] = gt_length(cls[GT_COMMUNICATION], ncomm);
    nx = gt_subtract(cls[GT_COMPUTATION], ncomp, cls[GT_COMMUNICATION], ncomm, tmp);
    metric[GT_EXPOSED_COMM_TIME] = gt_length(tmp, nx);
    metric[GT_TOTAL_MEMCPY_TIME] = gt_length(cls[GT_MEMCPY], nmem);
    /* (memcpy \ comp) \ comm: the first result lives in tmp[0..nmc), the
     * second after it. Each subtraction yields at most nb + na pieces. */
    nmc = gt_subtract(cls[GT_COMPUTATION], ncomp, cls[GT_MEMCPY], nmem, tmp);
    second = malloc((nmc + ncomm + 1) * sizeof(*second));
    if (second == NULL) {
        free(all);
        free(tmp);
        return -ENOMEM;
    }
    nem = gt_subtract(cls[GT_COMMUNICATION], ncomm, tmp, nmc, second);
    metric[GT_EXPOSED_MEMCPY_TIME] = gt_length(second, nem);
    free(second);
    metric[GT_BUSY_TIME] = gt_length(all, nall);
    metric[GT_IDLE_TIME] = metric[GT_TOTAL_TIME] - metric[GT_BUSY_TIME];
    free(all);
    free(tmp);
    return 0;
}
