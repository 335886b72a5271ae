/*
 * grow.c - doubling arrays (grow.h).
 */
#include "grow.h"

#include <errno.h>
#include <stdlib.h>

int xp_grow(void **v, uint32_t *cap, uint32_t n, size_t size)
{
    uint32_t c;
    void *nv;

    if (n < *cap)
        return 0;
    if (*cap > UINT32_MAX / 2)
        return -ENOMEM;
    c = *cap ? *cap * 2 : 8;
    nv = realloc(*v, (size_t)c * size);
    if (nv == NULL)
        return -ENOMEM;
    *v = nv;
    *cap = c;
    return 0;
}
