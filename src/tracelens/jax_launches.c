/*
 * jax_launches.c - the host launch start of a GPU kernel's correlation id,
 * for GPU_kernel_launch_latency (jax_launchers_int.h): collected from the
 * /host:CPU planes of an xspace or the pid 701 events of a JAX Chrome trace,
 * indexed densely by id when the ids allow, else sorted for bsearch.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "jax_launchers_int.h"
#include "base/sort.h"

/* Order of correlation ids. */
static int corr_cmp(const void *a, const void *b)
{
    const struct jax_corr *x = a, *y = b;
    return x->id < y->id ? -1 : x->id > y->id;
}

/* corr_cmp for xp_sort_runs. */
static int corr_cmp_ctx(const void *a, const void *b, void *ctx)
{
    (void)ctx;
    return corr_cmp(a, b);
}

/* Sort by id: host events come in runs of ascending ids (one per thread),
 * which xp_sort_runs merges; qsort when out of memory for that. */
static void corr_sort(struct jax_corr *v, size_t n)
{
    if (xp_sort_runs(v, n, sizeof(*v), corr_cmp_ctx, NULL) != 0)
        xp_qsort(v, n, sizeof(*v), corr_cmp);
}

/* The start of id in the sorted v[0..n), NaN when none. */
static double corr_find(const struct jax_corr *v, size_t n, int64_t id)
{
    size_t lo = 0, hi = n;

    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (v[mid].id < id)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < n && v[lo].id == id ? v[lo].ts : NAN;
}

/* Forget the table. */
void jax_launches_free(struct jax_launches *t)
{
    free(t->sorted);
    free(t->dense);
    memset(t, 0, sizeof(*t));
}

/* The start of id, NaN when none. */
double jax_launch_ts(const struct jax_launches *t, int64_t id)
{
    if (t->dense != NULL) {
        uint64_t slot = (uint64_t)id - (uint64_t)t->base;
        return slot < t->range ? t->dense[slot] : NAN;
    }
    return corr_find(t->sorted, t->n, id);
}

/* Index v[0..n) (taken over) keeping the latest start per id: directly when
 * the ids span less than four times their number, else sorted. */
static int launches_latest(struct jax_launches *t, struct jax_corr *v, size_t n)
{
    int64_t lo, hi;
    size_t i, w;

    memset(t, 0, sizeof(*t));
    if (n == 0) {
        free(v);
        return 0;
    }
    lo = hi = v[0].id;
    for (i = 1; i < n; i++) {
        if (v[i].id < lo)
            lo = v[i].id;
        if (v[i].id > hi)
            hi = v[i].id;
    }
    if ((uint64_t)hi - (uint64_t)lo < 4 * (uint64_t)n + 1024) {
        t->range = (uint64_t)hi - (uint64_t)lo + 1;
        t->base = lo;
        t->dense = malloc(t->range * sizeof(*t->dense));
        if (t->dense != NULL) {
            for (i = 0; i < t->range; i++)
                t->dense[i] = NAN;
            for (i = 0; i < n; i++) {
                double *d = &t->dense[(uint64_t)v[i].id - (uint64_t)lo];
                if (isnan(*d) || v[i].ts > *d)
                    *d = v[i].ts;
            }
            free(v);
            return 0;
        }
    }
    corr_sort(v, n);
    for (i = 0, w = 0; i < n; i++) {
        if (w > 0 && v[w - 1].id == v[i].id) {
            if (v[i].ts > v[w - 1].ts)
                v[w - 1].ts = v[i].ts;
            continue;
        }
        v[w++] = v[i];
    }
    t->sorted = v;
    t->n = w;
    return 0;
}

/* Append (id, ts) to the growing array *v; on failure it is freed.
 * Returns 0 or -ENOMEM. */
static int corr_push(struct jax_corr **v, size_t *n, size_t *cap, int64_t id, double ts)
{
    if (*n == *cap) {
        size_t c = *cap ? *cap * 2 : 1024;
        struct jax_corr *nv = realloc(*v, c * sizeof(*nv));
        if (nv == NULL) {
            free(*v);
            *v = NULL;
            return -ENOMEM;
        }
        *v = nv;
        *cap = c;
    }
    (*v)[*n].id = id;
    (*v)[*n].ts = ts;
    (*n)++;
    return 0;
}

/* Host-side events with a correlation id on /host:CPU planes. Where several
 * share an id, the last in trace order (thread, then time) wins, as in
 * TraceLens's linking loop. */
int jax_xspace_launches(const struct xspace *xs, struct jax_launches *t)
{
    struct jax_corr *v = NULL;
    size_t n = 0, cap = 0;
    uint32_t p, l, e;

    for (p = 0; p < xs->nplanes; p++) {
        const struct xp_plane *pl = &xs->planes[p];
        if (strncmp(pl->name, "/host:CPU", 9) != 0 || pl->stat_id[XS_CORRELATION_ID] == XP_NO_STAT)
            continue;
        for (l = 0; l < pl->nlines; l++) {
            const struct xp_line *ln = &pl->lines[l];
            for (e = 0; e < ln->nevents; e++) {
                struct xp_stat st;
                if (!xp_event_stat(pl, ln, &ln->events[e], XS_CORRELATION_ID, &st))
                    continue;
                if (corr_push(&v, &n, &cap, xp_stat_int(&st),
                              (double)xp_event_start_ps(ln, &ln->events[e]) / 1e6) != 0)
                    return -ENOMEM;
            }
        }
    }
    return launches_latest(t, v, n);
}

/* Host events (pid 701) of a JAX Chrome trace with a correlation id. */
int jax_json_launches(const struct ctrace *ct, struct jax_launches *t)
{
    struct jax_corr *v = NULL;
    size_t n = 0, cap = 0, i, w;

    for (i = 0; i < ct->nevents; i++) {
        const struct ctrace_event *ev = &ct->events[i];
        if (ev->pid != 701 || (ev->flags & CT_PID_STR) || ev->correlation == CT_NONE)
            continue;
        if (corr_push(&v, &n, &cap, ev->correlation, ev->ts) != 0)
            return -ENOMEM;
    }
    if (n > 0) {
        corr_sort(v, n);
        for (i = 0, w = 0; i < n; i++) {
            if (w > 0 && v[w - 1].id == v[i].id)
                continue;
            v[w++] = v[i];
        }
        n = w;
    }
    memset(t, 0, sizeof(*t));
    t->sorted = v;
    t->n = n;
    return 0;
}
