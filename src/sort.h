/*
 * sort.h - qsort that accepts empty arrays.
 *
 * qsort's array argument is declared non-null, and an empty array is often a
 * NULL pointer here; UBSan (rightly) reports such calls. xp_qsort skips arrays
 * of fewer than two elements, so callers need no guard.
 */
#ifndef XPROFS_SORT_H
#define XPROFS_SORT_H

#include <stdlib.h>

static inline void xp_qsort(void *base, size_t n, size_t size,
                            int (*cmp)(const void *, const void *))
{
    if (n > 1)
        qsort(base, n, size, cmp);
}

#endif
