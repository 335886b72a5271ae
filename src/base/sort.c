/*
 * sort.c - sorting helpers: merges of ascending runs for mostly-sorted arrays,
 * a radix sort of 32-bit keys; see sort.h.
 */
#include "sort.h"

#include <errno.h>
#include <string.h>

#include "bigalloc.h"

int xp_sort_runs(void *base, size_t n, size_t size, xp_cmp_ctx_fn cmp, void *ctx)
{
    char *v = base, *tmp, *src, *dst;
    size_t *runs, nruns = 0, k, r;

    if (n < 2)
        return 0;
    for (k = 1; k < n && cmp(v + (k - 1) * size, v + k * size, ctx) <= 0; k++)
        ;
    if (k >= n)
        return 0;
    runs = big_malloc((n + 1) * sizeof(*runs));
    tmp = big_malloc(n * size);
    if (runs == NULL || tmp == NULL) {
        big_free(runs);
        big_free(tmp);
        return -ENOMEM;
    }
    runs[nruns++] = 0;
    for (k = 1; k < n; k++) {
        if (cmp(v + (k - 1) * size, v + k * size, ctx) > 0)
            runs[nruns++] = k;
    }
    runs[nruns] = n;
    src = v;
    dst = tmp;
    while (nruns > 1) {
        size_t m = 0;
        for (r = 0; r < nruns; r += 2) {
            size_t lo = runs[r], mid = runs[r + 1], i = lo, j = mid, o = lo;
            size_t hi = r + 2 <= nruns ? runs[r + 2] : mid;
            while (i < mid && j < hi) {
                /* ties take the left run first: the merge is stable */
                if (cmp(src + j * size, src + i * size, ctx) < 0)
                    memcpy(dst + o++ * size, src + j++ * size, size);
                else
                    memcpy(dst + o++ * size, src + i++ * size, size);
            }
            memcpy(dst + o * size, src + i * size, (mid - i) * size);
            o += mid - i;
            memcpy(dst + o * size, src + j * size, (hi - j) * size);
            runs[m++] = lo;
        }
        runs[m] = n;
        nruns = m;
        src = dst;
        dst = src == v ? tmp : v;
    }
    if (src != v)
        memcpy(v, src, n * size);
    big_free(runs);
    big_free(tmp);
    return 0;
}

int xp_sort_runs_u64(uint64_t *v, size_t n)
{
    uint64_t *tmp, *src, *dst;
    size_t *runs, nruns = 0, k, r;

    if (n < 2)
        return 0;
    for (k = 1; k < n && v[k - 1] <= v[k]; k++)
        ;
    if (k >= n)
        return 0;
    for (k = 1; k < n; k++)
        nruns += v[k - 1] > v[k];
    runs = malloc((nruns + 2) * sizeof(*runs));
    tmp = big_malloc(n * sizeof(*tmp));
    if (runs == NULL || tmp == NULL) {
        free(runs);
        big_free(tmp);
        return -ENOMEM;
    }
    nruns = 0;
    runs[nruns++] = 0;
    for (k = 1; k < n; k++) {
        if (v[k - 1] > v[k])
            runs[nruns++] = k;
    }
    runs[nruns] = n;
    src = v;
    dst = tmp;
    while (nruns > 1) {
        size_t m = 0;
        for (r = 0; r < nruns; r += 2) {
            size_t lo = runs[r], mid = runs[r + 1], i = lo, j = mid, o = lo;
            size_t hi = r + 2 <= nruns ? runs[r + 2] : mid;
            while (i < mid && j < hi)
                dst[o++] = src[j] < src[i] ? src[j++] : src[i++];
            while (i < mid)
                dst[o++] = src[i++];
            while (j < hi)
                dst[o++] = src[j++];
            runs[m++] = lo;
        }
        runs[m] = n;
        nruns = m;
        src = dst;
        dst = src == v ? tmp : v;
    }
    if (src != v)
        memcpy(v, src, n * sizeof(*v));
    free(runs);
    big_free(tmp);
    return 0;
}

static int u32_cmp(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

    return x < y ? -1 : x > y;
}

/* Below this, qsort beats the radix sort's three passes and counts. */
#define RADIX_FROM 4096
#define RADIX_BITS 11
#define RADIX_SIZE (1u << RADIX_BITS)

int xp_sort_u32(uint32_t *v, size_t n)
{
    size_t *count, k;
    uint32_t *tmp, *src = v, *dst;
    unsigned pass, shift;

    if (n < RADIX_FROM) {
        xp_qsort(v, n, sizeof(*v), u32_cmp);
        return 0;
    }
    tmp = big_malloc(n * sizeof(*tmp));
    count = malloc(3 * RADIX_SIZE * sizeof(*count));
    if (tmp == NULL || count == NULL) {
        big_free(tmp);
        free(count);
        return -ENOMEM;
    }
    /* One pass counts the digits of all three passes. */
    memset(count, 0, 3 * RADIX_SIZE * sizeof(*count));
    for (k = 0; k < n; k++) {
        count[v[k] & (RADIX_SIZE - 1)]++;
        count[RADIX_SIZE + ((v[k] >> RADIX_BITS) & (RADIX_SIZE - 1))]++;
        count[2 * RADIX_SIZE + (v[k] >> (2 * RADIX_BITS))]++;
    }
    dst = tmp;
    for (pass = 0; pass < 3; pass++) {
        size_t *c = &count[pass * RADIX_SIZE], sum = 0, d;
        shift = pass * RADIX_BITS;
        for (d = 0; d < RADIX_SIZE; d++) {
            size_t m = c[d];
            c[d] = sum;
            sum += m;
        }
        for (k = 0; k < n; k++)
            dst[c[(src[k] >> shift) & (RADIX_SIZE - 1)]++] = src[k];
        src = dst;
        dst = src == v ? tmp : v;
    }
    /* Three passes leave the result in tmp. */
    memcpy(v, src, n * sizeof(*v));
    big_free(tmp);
    free(count);
    return 0;
}
