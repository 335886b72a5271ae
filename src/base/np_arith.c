/*
 * np_arith.c - numpy 1.24 / pandas 1.5 arithmetic (see np_arith.h): the
 * pairwise sum and the introsort argsort, ported from numpy's C loops.
 */
#include "np_arith.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>

/* numpy's pairwise sum of v[0..n) (add.reduce's inner loop). */
static double pairwise(const double *v, size_t n)
{
    double r[8], res = 0.;
    size_t i, j, n2;

    if (n < 8) {
        for (i = 0; i < n; i++)
            res += v[i];
        return res;
    }
    if (n <= 128) {
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
    n2 = n / 2;
    n2 -= n2 % 8;
    return pairwise(v, n2) + pairwise(v + n2, n - n2);
}

double np_sum(const double *v, size_t n)
{
    return pairwise(v, n);
}

/* numpy's "less" for doubles (NaNs last). */
static int np_less(double a, double b)
{
    return a < b || (b != b && a == a);
}

static void swap_idx(size_t *a, size_t *b)
{
    size_t t = *a;
    *a = *b;
    *b = t;
}

/* numpy 1.24's heapsort argsort of idx[0..n) by v (introsort's fallback). */
static void np_aheapsort(const double *v, size_t *idx, size_t n)
{
    size_t *a = idx - 1, i, j, l, tmp;

    for (l = n >> 1; l > 0; --l) {
        tmp = a[l];
        for (i = l, j = l << 1; j <= n;) {
            if (j < n && np_less(v[a[j]], v[a[j + 1]]))
                j += 1;
            if (np_less(v[tmp], v[a[j]])) {
                a[i] = a[j];
                i = j;
                j += j;
            } else {
                break;
            }
        }
        a[i] = tmp;
    }
    for (; n > 1;) {
        tmp = a[n];
        a[n] = a[1];
        n -= 1;
        for (i = 1, j = 2; j <= n;) {
            if (j < n && np_less(v[a[j]], v[a[j + 1]]))
                j++;
            if (np_less(v[tmp], v[a[j]])) {
                a[i] = a[j];
                i = j;
                j += j;
            } else {
                break;
            }
        }
        a[i] = tmp;
    }
}

void np_argsort(const double *v, size_t *idx, size_t n)
{
    size_t *stack[128], **sptr = stack, *pl, *pr, *pm, *pi, *pj, *pk, vi;
    int depth[64], *psdepth = depth, cdepth = 0;
    double vp;
    size_t m;

    for (m = 0; m < n; m++)
        idx[m] = m;
    if (n < 2)
        return;
    for (m = n; m > 1; m >>= 1)
        cdepth++;
    cdepth *= 2;
    pl = idx;
    pr = idx + n - 1;
    for (;;) {
        if (cdepth < 0) {
            np_aheapsort(v, pl, (size_t)(pr - pl) + 1);
            goto stack_pop;
        }
        while (pr - pl > 16) {
            pm = pl + ((pr - pl) >> 1);
            if (np_less(v[*pm], v[*pl]))
                swap_idx(pm, pl);
            if (np_less(v[*pr], v[*pm]))
                swap_idx(pr, pm);
            if (np_less(v[*pm], v[*pl]))
                swap_idx(pm, pl);
            vp = v[*pm];
            pi = pl;
            pj = pr - 1;
            swap_idx(pm, pj);
            for (;;) {
                do {
                    ++pi;
                } while (np_less(v[*pi], vp));
                do {
                    --pj;
                } while (np_less(vp, v[*pj]));
                if (pi >= pj)
                    break;
                swap_idx(pi, pj);
            }
            pk = pr - 1;
            swap_idx(pi, pk);
            if (pi - pl < pr - pi) {
                *sptr++ = pi + 1;
                *sptr++ = pr;
                pr = pi - 1;
            } else {
                *sptr++ = pl;
                *sptr++ = pi - 1;
                pl = pi + 1;
            }
            *psdepth++ = --cdepth;
        }
        for (pi = pl + 1; pi <= pr; ++pi) {
            vi = *pi;
            vp = v[vi];
            pj = pi;
            pk = pi - 1;
            while (pj > pl && np_less(vp, v[*pk]))
                *pj-- = *pk--;
            *pj = vi;
        }
    stack_pop:
        if (sptr == stack)
            break;
        pr = *(--sptr);
        pl = *(--sptr);
        cdepth = *(--psdepth);
    }
}

int np_order_desc(const double *v, size_t n, size_t *order)
{
    double *rev = calloc(n + 1, sizeof(*rev));
    size_t *idx = malloc((n + 1) * sizeof(*idx)), i;

    if (rev == NULL || idx == NULL) {
        free(rev);
        free(idx);
        return -ENOMEM;
    }
    for (i = 0; i < n; i++)
        rev[i] = v[n - 1 - i];
    np_argsort(rev, idx, n);
    for (i = 0; i < n; i++)
        order[i] = n - 1 - idx[n - 1 - i];
    free(rev);
    free(idx);
    return 0;
}

double np_percentile_sorted(const int64_t *v, size_t n, double p)
{
    double pos = p * (double)(n - 1);
    size_t k = (size_t)floor(pos);
    double frac = pos - (double)k;

    if (k + 1 >= n)
        return (double)v[n - 1];
    return (double)v[k] + ((double)v[k + 1] - (double)v[k]) * frac;
}
