/*
 * sort.h - sorting helpers: qsort that accepts empty arrays, and a merge of
 * ascending runs for arrays that are mostly in order already.
 *
 * qsort's array argument is declared non-null, and an empty array is often a
 * NULL pointer here; UBSan (rightly) reports such calls. xp_qsort skips arrays
 * of fewer than two elements, so callers need no guard.
 */
#ifndef XPROFS_SORT_H
#define XPROFS_SORT_H

#include <stdint.h>
#include <stdlib.h>

static inline void xp_qsort(void *base, size_t n, size_t size,
                            int (*cmp)(const void *, const void *))
{
    if (n > 1)
        qsort(base, n, size, cmp);
}

/* Comparator with a context pointer (like qsort_r's). */
typedef int (*xp_cmp_ctx_fn)(const void *a, const void *b, void *ctx);

/* qsort_r (glibc's argument order) with xp_qsort's leniency: a comparator
 * that needs more than the two elements gets ctx, so no global and no lock
 * carry it. */
static inline void xp_qsort_r(void *base, size_t n, size_t size, xp_cmp_ctx_fn cmp, void *ctx)
{
    if (n > 1)
        qsort_r(base, n, size, cmp, ctx);
}

/* Sort base[0..n) of size-byte elements by cmp, stably: find the ascending
 * runs and merge them pairwise, so the cost follows the number of runs, not
 * the number of elements (events of one timeline come almost sorted).
 * Returns 0 or -ENOMEM (the array is then unchanged). */
int xp_sort_runs(void *base, size_t n, size_t size, xp_cmp_ctx_fn cmp, void *ctx);

/* The same for plain 64-bit keys, ascending (no comparator calls). */
int xp_sort_runs_u64(uint64_t *v, size_t n);

/* Sort v[0..n) ascending: a radix sort (three passes of 11 bits) for long
 * arrays, qsort for short ones. Returns 0 or -ENOMEM (v then unchanged). */
int xp_sort_u32(uint32_t *v, size_t n);

#endif
