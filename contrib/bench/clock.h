/*
 * clock.h - the one clock of the benchmark programs: monotonic seconds.
 */
#ifndef XPROFS_BENCH_CLOCK_H
#define XPROFS_BENCH_CLOCK_H

#include <time.h>

static inline double bench_now(void)
{
    struct timespec t;

    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

#endif
