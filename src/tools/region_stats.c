/*
 * region_stats.c - per region name summaries of collected step rows (see
 * region_stats.h): rows grouped by name, inclusive time as the union of a
 * name's intervals per thread, medians and p90 as numpy interpolates them.
 */
#include "region_stats.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/np_arith.h"
#include "base/sort.h"

/* One selected row. */
struct region_entry {
    const char *name; /* region name */
    uint32_t thread;  /* thread number across hosts (union per thread) */
    uint32_t depth;   /* its depth */
    int64_t lo;       /* start */
    int64_t incl;     /* inclusive ps */
    int64_t self;     /* self ps */
};

int region_thread_selected(const struct region_filter *f, const struct xp_steps_thread *t)
{
    char id[24];

    if (f->thread == NULL)
        return 1;
    snprintf(id, sizeof(id), "%" PRId64, t->id);
    return strcmp(f->thread, t->name) == 0 || strcmp(f->thread, id) == 0;
}

int region_depth_selected(const struct region_filter *f, uint32_t depth)
{
    return (int64_t)depth >= f->min_depth && (int64_t)depth <= f->max_depth;
}

int region_collect_model(struct region_collect *c, const struct xp_steps *m,
                         const struct region_filter *f)
{
    uint32_t s, r, base = c->threads;

    c->threads += m->nthreads;
    for (s = 0; s < m->nsteps; s++) {
        const struct xp_steps_step *st = &m->steps[s];
        if (!region_thread_selected(f, &m->threads[st->thread]))
            continue;
        c->steps++;
        c->step_ps += m->rows[st->row].dur_ps;
        for (r = st->row; r < st->row + st->nrows; r++) {
            const struct xp_steps_row *row = &m->rows[r];
            if (!region_depth_selected(f, row->depth))
                continue;
            if (c->n == c->cap) {
                uint64_t cap = c->cap ? 2 * c->cap : 1024;
                struct region_entry *ne = realloc(c->e, cap * sizeof(*ne));
                if (ne == NULL)
                    return -ENOMEM;
                c->e = ne;
                c->cap = cap;
            }
            c->e[c->n++] = (struct region_entry){row->name,     base + st->thread, row->depth,
                                                 row->start_ps, row->dur_ps,       row->self_ps};
        }
    }
    return 0;
}

static int entry_cmp(const void *pa, const void *pb)
{
    const struct region_entry *a = pa, *b = pb;
    int c = a->name == b->name ? 0 : strcmp(a->name, b->name);

    if (c != 0)
        return c;
    if (a->thread != b->thread)
        return a->thread < b->thread ? -1 : 1;
    if (a->lo != b->lo)
        return a->lo < b->lo ? -1 : 1;
    return a->incl > b->incl ? -1 : a->incl < b->incl;
}

static int i64_cmp(const void *pa, const void *pb)
{
    int64_t a = *(const int64_t *)pa, b = *(const int64_t *)pb;

    return a < b ? -1 : a > b;
}

/* min, median, mean, max, p90 of v[0..n) (sorted here) with sum. */
static void summarize(int64_t *v, uint64_t n, int64_t sum, double out5[5])
{
    xp_qsort(v, n, sizeof(*v), i64_cmp);
    out5[0] = (double)v[0];
    out5[1] = np_percentile_sorted(v, n, 0.5);
    out5[2] = (double)sum / (double)n;
    out5[3] = (double)v[n - 1];
    out5[4] = np_percentile_sorted(v, n, 0.9);
}

/* Aggregate e[lo..hi) (one name, sorted by thread then start) into *a. */
static void aggregate(const struct region_entry *e, uint64_t lo, uint64_t hi, int64_t *tmp,
                      struct region_stat *a)
{
    int64_t incl_sum = 0, self_sum = 0, run_lo = 0, run_hi = 0;
    uint64_t i, n = hi - lo;

    a->name = e[lo].name;
    a->count = n;
    a->min_depth = UINT32_MAX;
    a->incl_total = 0;
    for (i = lo; i < hi; i++) {
        int64_t end = e[i].lo + e[i].incl;
        if (e[i].depth < a->min_depth)
            a->min_depth = e[i].depth;
        incl_sum += e[i].incl;
        self_sum += e[i].self;
        if (i == lo || e[i].thread != e[i - 1].thread || e[i].lo > run_hi) {
            a->incl_total += run_hi - run_lo;
            run_lo = e[i].lo;
            run_hi = end;
        } else if (end > run_hi) {
            run_hi = end;
        }
    }
    a->incl_total += run_hi - run_lo;
    a->self_total = self_sum;
    for (i = 0; i < n; i++)
        tmp[i] = e[lo + i].incl;
    summarize(tmp, n, incl_sum, a->incl);
    for (i = 0; i < n; i++)
        tmp[i] = e[lo + i].self;
    summarize(tmp, n, self_sum, a->self);
}

static int stat_cmp(const void *pa, const void *pb)
{
    const struct region_stat *a = pa, *b = pb;

    if (a->min_depth != b->min_depth)
        return a->min_depth < b->min_depth ? -1 : 1;
    if (a->incl_total != b->incl_total)
        return a->incl_total > b->incl_total ? -1 : 1;
    return strcmp(a->name, b->name);
}

int region_stats_of(struct region_collect *c, struct region_stat **out, uint64_t *n)
{
    struct region_stat *stats = NULL;
    int64_t *tmp = NULL;
    uint64_t i, j, ns = 0;

    *out = NULL;
    *n = 0;
    if (c->n == 0)
        return 0;
    xp_qsort(c->e, c->n, sizeof(*c->e), entry_cmp);
    stats = malloc(c->n * sizeof(*stats));
    tmp = malloc(c->n * sizeof(*tmp));
    if (stats == NULL || tmp == NULL) {
        free(stats);
        free(tmp);
        return -ENOMEM;
    }
    for (i = 0; i < c->n; i = j) {
        for (j = i + 1; j < c->n && strcmp(c->e[j].name, c->e[i].name) == 0; j++)
            ;
        aggregate(c->e, i, j, tmp, &stats[ns++]);
    }
    if (ns > 1)
        xp_qsort(stats, ns, sizeof(*stats), stat_cmp);
    free(tmp);
    *out = stats;
    *n = ns;
    return 0;
}

void region_collect_free(struct region_collect *c)
{
    free(c->e);
    memset(c, 0, sizeof(*c));
}
