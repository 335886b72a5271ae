/* dbg_timer.h - TEMPORARY phase timers (remove before finishing). */
#ifndef XPROFS_DBG_TIMER_H
#define XPROFS_DBG_TIMER_H
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
static inline double dbg_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}
static inline double dbg_cpu(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}
#define DBG_T(label, w0, c0)                                                                       \
    do {                                                                                           \
        if (getenv("XPROFS_T"))                                                                    \
            fprintf(stderr, "T %-24s wall %.3f cpu %.3f\n", label, dbg_now() - (w0),              \
                    dbg_cpu() - (c0));                                                             \
        w0 = dbg_now();                                                                            \
        c0 = dbg_cpu();                                                                            \
    } while (0)
#endif
