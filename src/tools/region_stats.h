/*
 * region_stats.h - the steps and regions of a run summarized per region
 * name: count, inclusive and self time (total, min, median, mean, max, p90).
 * regions.csv writes them; compare.* compares two runs' (see steps.c for
 * the definitions).
 */
#ifndef XPROFS_REGION_STATS_H
#define XPROFS_REGION_STATS_H

#include <stdint.h>

#include "xplane/steps.h"

/* Which rows count: a thread (name or decimal id, NULL for all) and a depth range. */
struct region_filter {
    const char *thread;
    int64_t min_depth, max_depth;
};

/* Summary of one region name. */
struct region_stat {
    const char *name;        /* region name (the model's) */
    uint32_t min_depth;      /* smallest depth it occurs at */
    uint64_t count;          /* occurrences */
    int64_t incl_total;      /* ps: union of its intervals per thread */
    int64_t self_total;      /* ps: sum of self */
    double incl[5], self[5]; /* ps: min, median, mean, max, p90 */
};

struct region_entry;

/* The rows collected from one or more models. */
struct region_collect {
    struct region_entry *e; /* selected rows */
    uint64_t n, cap;        /* entries used, allocated */
    uint32_t threads;       /* threads numbered so far */
    uint32_t steps;         /* steps selected */
    int64_t step_ps;        /* inclusive time of the selected steps */
};

/* 1 if thread t / depth pass filter f. */
int region_thread_selected(const struct region_filter *f, const struct xp_steps_thread *t);
int region_depth_selected(const struct region_filter *f, uint32_t depth);

/* Add the selected rows of model m to c (zeroed at first). 0 or -ENOMEM. */
int region_collect_model(struct region_collect *c, const struct xp_steps *m,
                         const struct region_filter *f);

/* The summaries of c's rows, one per name, by min_depth, then longest
 * incl_total, then name, into *out (free; NULL when there are none) and *n.
 * Sorts c's rows. 0 or -ENOMEM. */
int region_stats_of(struct region_collect *c, struct region_stat **out, uint64_t *n);

void region_collect_free(struct region_collect *c);

#endif
