/* SPDX-License-Identifier: Apache-2.0 */
/*
 * String arena: formatted strings live in large blocks that are all freed at
 * once by pool_release(). Used for every name the generator builds.
 */
#ifndef SYNTH_POOL_H
#define SYNTH_POOL_H

#include <stddef.h>

struct pool_block;

struct pool {
    struct pool_block *head; /* newest block, NULL when empty */
};

#define POOL_INIT                                                                                  \
    {                                                                                              \
        NULL                                                                                       \
    }

/*
 * Returns a NUL-terminated formatted string owned by the pool, or NULL when
 * out of memory. It lives until pool_release().
 */
char *pool_printf(struct pool *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Returns n zeroed bytes owned by the pool (aligned for any scalar), or NULL. */
void *pool_alloc(struct pool *p, size_t n);

/* Frees every block; the pool is empty afterwards. Accepts an empty pool. */
void pool_release(struct pool *p);

#endif
