/*
 * parallel.h - run a function over the items 0..n-1 on several threads.
 *
 * Items are handed out one at a time from a shared counter, so callers sort
 * the biggest work first. The calling thread is one of the workers. Used by
 * the reader (lines in parallel) and by tools with independent pieces.
 */
#ifndef XPROFS_PARALLEL_H
#define XPROFS_PARALLEL_H

#include <stddef.h>

/* Call fn(arg, i) for every i in [0, n) on up to nthreads threads (0 = one per
 * core). fn returns 0 or a negative errno; after the first failure no new
 * items start. Returns 0 or the first failure. */
int parallel_for(size_t n, int nthreads, int (*fn)(void *arg, size_t i), void *arg);

/* The number of online cores (at least 1). */
int parallel_cores(void);

#endif
