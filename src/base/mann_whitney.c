/*
 * mann_whitney.c - the Mann-Whitney U test (see mann_whitney.h): ranks of
 * the pooled sample with ties given their mean rank, U from the first
 * sample's rank sum, and the normal approximation of its distribution.
 */
#include "mann_whitney.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>

struct mw_value {
    double v;  /* the value */
    int first; /* 1: from the first sample */
};

static int by_value(const void *pa, const void *pb)
{
    double a = ((const struct mw_value *)pa)->v, b = ((const struct mw_value *)pb)->v;

    return (a > b) - (a < b);
}

int mann_whitney(const double *a, size_t na, const double *b, size_t nb, struct mw_result *r)
{
    size_t n = na + nb, i, j, k;
    struct mw_value *all = malloc(n * sizeof(*all));
    double rank_sum = 0, ties = 0, mu, sigma, u2, big;

    if (all == NULL)
        return -ENOMEM;
    for (i = 0; i < na; i++)
        all[i] = (struct mw_value){a[i], 1};
    for (i = 0; i < nb; i++)
        all[na + i] = (struct mw_value){b[i], 0};
    qsort(all, n, sizeof(*all), by_value);
    for (i = 0; i < n; i = j) {
        double t, mean_rank;
        for (j = i + 1; j < n && all[j].v == all[i].v; j++)
            ;
        t = (double)(j - i);
        mean_rank = (double)(i + 1 + j) / 2; /* ranks i+1 .. j */
        for (k = i; k < j; k++)
            if (all[k].first)
                rank_sum += mean_rank;
        ties += t * t * t - t;
    }
    free(all);
    r->u = rank_sum - (double)na * (double)(na + 1) / 2;
    u2 = (double)na * (double)nb - r->u;
    big = r->u > u2 ? r->u : u2;
    mu = (double)na * (double)nb / 2;
    sigma = sqrt((double)na * (double)nb / 12 *
                 ((double)(n + 1) - (n > 1 ? ties / ((double)n * (double)(n - 1)) : 0)));
    if (!(sigma > 0)) {
        r->z = 0;
        r->p = 1;
        return 0;
    }
    r->z = (big - mu - 0.5) / sigma;
    r->p = erfc(r->z / sqrt(2));
    if (r->p > 1)
        r->p = 1;
    return 0;
}
