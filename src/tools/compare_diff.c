/*
 * compare_diff.c - two runs' numbers matched (compare.h): the test of step
 * time, regions, ops and kernels by name, GPUs by host and device, and the
 * warnings that say when the runs are not comparable.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compare.h"

/* A run whose first step took COLD_FACTOR times the median of its others
 * looks cold (compilation, caches and allocators warming up). */
#define COLD_FACTOR 3.0

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

    return (x > y) - (x < y);
}

/* The first step's time over the median of the later ones; 0 when the run
 * has fewer than COMPARE_MIN_STEPS steps (or no memory to sort them). */
static double first_step_ratio(const struct cmp_run *r)
{
    int64_t *later, median2;
    uint32_t n;

    if (r->nsteps < COMPARE_MIN_STEPS)
        return 0;
    n = r->nsteps - 1;
    later = malloc(n * sizeof(*later));
    if (later == NULL)
        return 0;
    memcpy(later, r->step_ps + 1, n * sizeof(*later));
    qsort(later, n, sizeof(*later), cmp_i64);
    median2 = n % 2 ? 2 * later[n / 2] : later[n / 2 - 1] + later[n / 2];
    free(later);
    return median2 > 0 ? 2.0 * (double)r->step_ps[0] / (double)median2 : 0;
}

/* One run cold and the other warm: their step times measure different things. */
static void check_warm(struct compare *c)
{
    const struct cmp_run *runs[2] = {&c->base, &c->run};
    double ratio[2];
    int i;

    for (i = 0; i < 2; i++)
        ratio[i] = first_step_ratio(runs[i]);
    for (i = 0; i < 2; i++) {
        if (ratio[i] >= COLD_FACTOR && ratio[1 - i] > 0 && ratio[1 - i] < COLD_FACTOR)
            run_warn(&c->warnings,
                     "%s looks cold and %s warm: the first step of %s took %.1f times the "
                     "median of its others (compilation or warm-up), of %s %.1f times; "
                     "compare runs that both include or both skip their first steps",
                     runs[i]->name, runs[1 - i]->name, runs[i]->name, ratio[i], runs[1 - i]->name,
                     ratio[1 - i]);
    }
}

static void check_comparable(struct compare *c)
{
    const struct cmp_run *b = &c->base, *r = &c->run;
    int i;

    if (strcmp(b->kind, r->kind) != 0)
        run_warn(&c->warnings,
                 "different kinds of profile: %s is %s, %s is %s; ops and kernels are not "
                 "compared",
                 b->name, b->kind, r->name, r->kind);
    if (b->device_type[0] && r->device_type[0] && strcmp(b->device_type, r->device_type) != 0)
        run_warn(&c->warnings, "different devices: %s ran on %s, %s on %s", b->name, b->device_type,
                 r->name, r->device_type);
    if (b->ngpus != r->ngpus)
        run_warn(&c->warnings, "different GPU counts: %s has %d, %s has %d", b->name, b->ngpus,
                 r->name, r->ngpus);
    if (b->nsteps < COMPARE_MIN_STEPS || r->nsteps < COMPARE_MIN_STEPS)
        run_warn(&c->warnings,
                 "too few steps to compare step times: %s has %u, %s has %u (at least %d "
                 "each are needed)",
                 b->name, b->nsteps, r->name, r->nsteps, COMPARE_MIN_STEPS);
    if ((b->step_name == NULL) != (r->step_name == NULL) ||
        (b->step_name != NULL && strcmp(b->step_name, r->step_name) != 0))
        run_warn(&c->warnings, "different step annotations: %s has %s, %s has %s", b->name,
                 b->step_name ? b->step_name : "none", r->name,
                 r->step_name ? r->step_name : "none");
    if (b->steps_per_host == 0 || r->steps_per_host == 0)
        run_warn(&c->warnings, "%s", "a run without steps: times per step are its totals");
    check_warm(c);
    for (i = 0; i < b->warnings.n; i++)
        run_warn(&c->warnings, "%s", b->warnings.msg[i]);
    for (i = 0; i < r->warnings.n; i++)
        run_warn(&c->warnings, "%s", r->warnings.msg[i]);
}

static int test_steps(struct compare *c)
{
    const struct cmp_run *b = &c->base, *r = &c->run;
    double *x, *y;
    uint32_t i;
    int rc;

    c->median_delta_us = r->step_us.median - b->step_us.median;
    c->median_ratio = b->step_us.median > 0 ? r->step_us.median / b->step_us.median : NAN;
    c->mean_delta_us = b->nsteps && r->nsteps ? r->step_us.mean - b->step_us.mean : NAN;
    if (b->nsteps < COMPARE_MIN_STEPS || r->nsteps < COMPARE_MIN_STEPS)
        return 0;
    x = malloc(b->nsteps * sizeof(*x));
    y = malloc(r->nsteps * sizeof(*y));
    if (x == NULL || y == NULL) {
        free(x);
        free(y);
        return -ENOMEM;
    }
    for (i = 0; i < b->nsteps; i++)
        x[i] = (double)b->step_ps[i];
    for (i = 0; i < r->nsteps; i++)
        y[i] = (double)r->step_ps[i];
    /* U of the run against the base: large when the run's steps are longer */
    rc = mann_whitney(y, r->nsteps, x, b->nsteps, &c->mw);
    c->tested = rc == 0;
    free(x);
    free(y);
    return rc;
}

static int region_by_name(const void *pa, const void *pb)
{
    const struct region_stat *a = *(const struct region_stat *const *)pa;
    const struct region_stat *b = *(const struct region_stat *const *)pb;

    return strcmp(a->name, b->name);
}

/* Pointers to v[0..n) by name (free). */
static const struct region_stat **regions_by_name(const struct region_stat *v, uint64_t n)
{
    const struct region_stat **p = malloc((n + 1) * sizeof(*p));
    uint64_t i;

    if (p == NULL)
        return NULL;
    for (i = 0; i < n; i++)
        p[i] = &v[i];
    qsort(p, n, sizeof(*p), region_by_name);
    return p;
}

static double abs_delta(const struct cmp_region *g)
{
    return fabs(g->run_self_per_step - g->base_self_per_step);
}

static int region_delta_desc(const void *pa, const void *pb)
{
    const struct cmp_region *a = pa, *b = pb;
    double x = abs_delta(a), y = abs_delta(b);

    if (x != y)
        return x > y ? -1 : 1;
    if (a->min_depth != b->min_depth)
        return a->min_depth < b->min_depth ? -1 : 1;
    return strcmp(a->name, b->name);
}

static int match_regions(struct compare *c)
{
    const struct cmp_run *b = &c->base, *r = &c->run;
    const struct region_stat **pb = regions_by_name(b->regions, b->nregions);
    const struct region_stat **pr = regions_by_name(r->regions, r->nregions);
    uint64_t i = 0, j = 0;
    size_t k;

    c->regions = calloc(b->nregions + r->nregions + 1, sizeof(*c->regions));
    if (pb == NULL || pr == NULL || c->regions == NULL) {
        free(pb);
        free(pr);
        return -ENOMEM;
    }
    while (i < b->nregions || j < r->nregions) {
        struct cmp_region *g = &c->regions[c->nregions++];
        int d = i == b->nregions ? 1 : j == r->nregions ? -1 : strcmp(pb[i]->name, pr[j]->name);
        g->base = d <= 0 ? pb[i++] : NULL;
        g->run = d >= 0 ? pr[j++] : NULL;
        g->name = g->base ? g->base->name : g->run->name;
        g->min_depth = g->base ? g->base->min_depth : g->run->min_depth;
        if (g->run && g->run->min_depth < g->min_depth)
            g->min_depth = g->run->min_depth;
        g->base_self_per_step = g->base ? (double)g->base->self_total / 1e6 / b->per_step : 0;
        g->run_self_per_step = g->run ? (double)g->run->self_total / 1e6 / r->per_step : 0;
        g->status = d == 0 ? "both" : d < 0 ? "removed" : "added";
    }
    free(pb);
    free(pr);
    if (c->nregions > 1)
        qsort(c->regions, c->nregions, sizeof(*c->regions), region_delta_desc);
    for (k = 0; k < c->nregions; k++) {
        struct cmp_region *g = &c->regions[k];
        g->share = isfinite(c->mean_delta_us) && c->mean_delta_us != 0
                       ? (g->run_self_per_step - g->base_self_per_step) / c->mean_delta_us
                       : NAN;
        if (c->most == NULL && g->min_depth >= 1 && abs_delta(g) > 0)
            c->most = g;
    }
    return 0;
}

static int row_delta_desc(const void *pa, const void *pb)
{
    const struct cmp_row *a = pa, *b = pb;
    double x = fabs(a->delta_us), y = fabs(b->delta_us);
    int c;

    if (x != y)
        return x > y ? -1 : 1;
    if ((c = strcmp(a->kind, b->kind)) != 0)
        return c;
    if ((c = strcmp(a->name, b->name)) != 0)
        return c;
    return strcmp(a->detail, b->detail);
}

/* Match items a (base) and b (run), both in cmp_item_order, into *rows. */
static int match_items(const struct cmp_item *a, size_t na, double per_a, const struct cmp_item *b,
                       size_t nb, double per_b, struct cmp_row **rows, size_t *nrows)
{
    size_t i = 0, j = 0, k, l;
    struct cmp_row *v = calloc(na + nb + 1, sizeof(*v));

    *rows = v;
    *nrows = 0;
    if (v == NULL)
        return -ENOMEM;
    while (i < na || j < nb) {
        struct cmp_row *w = &v[(*nrows)++];
        int d = i == na ? 1 : j == nb ? -1 : cmp_item_order(&a[i], &b[j]);
        const struct cmp_item *x = d <= 0 ? &a[i++] : NULL, *y = d >= 0 ? &b[j++] : NULL;
        const struct cmp_item *any = x ? x : y;
        w->kind = any->kind;
        w->name = any->name;
        w->detail = any->detail;
        w->base_us = x ? x->total_us / per_a : 0;
        w->run_us = y ? y->total_us / per_b : 0;
        w->base_count = x ? x->count / per_a : 0;
        w->run_count = y ? y->count / per_b : 0;
        w->delta_us = w->run_us - w->base_us;
        w->status = d == 0 ? "both" : d < 0 ? "removed" : "added";
    }
    /* share of the change of its kind (rows of a kind are consecutive) */
    for (k = 0; k < *nrows; k = l) {
        double sum = 0;
        for (l = k; l < *nrows && strcmp(v[l].kind, v[k].kind) == 0; l++)
            sum += v[l].delta_us;
        for (i = k; i < l; i++)
            v[i].share = sum != 0 ? v[i].delta_us / sum : NAN;
    }
    if (*nrows > 1)
        qsort(v, *nrows, sizeof(*v), row_delta_desc);
    return 0;
}

static int match_gpus(struct compare *c)
{
    const struct cmp_run *b = &c->base, *r = &c->run;
    char *used = calloc((size_t)b->ngpus + 1, 1);
    int i, j;

    c->gpus = calloc((size_t)(b->ngpus + r->ngpus) + 1, sizeof(*c->gpus));
    if (used == NULL || c->gpus == NULL) {
        free(used);
        return -ENOMEM;
    }
    for (j = 0; j < r->ngpus; j++) {
        const struct run_gpu *g = &r->gpus[j];
        int h = snapshot_host_index(r->snap, g->host);
        struct cmp_gpu *m = &c->gpus[c->ngpus++];
        m->run = g;
        for (i = 0; i < b->ngpus; i++) {
            if (!used[i] && snapshot_host_index(b->snap, b->gpus[i].host) == h &&
                strcmp(b->gpus[i].device, g->device) == 0)
                break;
        }
        if (i < b->ngpus) {
            used[i] = 1;
            m->base = &b->gpus[i];
        }
        m->status = m->base ? "both" : "added";
    }
    for (i = 0; i < b->ngpus; i++) {
        if (!used[i])
            c->gpus[c->ngpus++] = (struct cmp_gpu){&b->gpus[i], NULL, "removed"};
    }
    free(used);
    return 0;
}

int cmp_diff(struct compare *c)
{
    int same_kind = strcmp(c->base.kind, c->run.kind) == 0, rc;

    check_comparable(c);
    if ((rc = test_steps(c)) != 0 || (rc = match_regions(c)) != 0)
        return rc;
    if (same_kind) {
        rc = match_items(c->base.ops, c->base.nops, c->base.per_step, c->run.ops, c->run.nops,
                         c->run.per_step, &c->ops, &c->nops);
        if (rc == 0)
            rc = match_items(c->base.kernels, c->base.nkernels, c->base.per_step, c->run.kernels,
                             c->run.nkernels, c->run.per_step, &c->kernels, &c->nkernels);
        if (rc != 0)
            return rc;
    }
    return match_gpus(c);
}

void cmp_diff_free(struct compare *c)
{
    free(c->regions);
    free(c->ops);
    free(c->kernels);
    free(c->gpus);
    c->regions = NULL;
    c->ops = c->kernels = NULL;
    c->gpus = NULL;
}

void cmp_verdict(const struct compare *c, char *buf, size_t n)
{
    const struct cmp_run *b = &c->base, *r = &c->run;

    if (!c->tested) {
        snprintf(buf, n,
                 "Step time not tested: %s has %u steps and %s %u (the test needs at least %d "
                 "each).",
                 b->name, b->nsteps, r->name, r->nsteps, COMPARE_MIN_STEPS);
        return;
    }
    if (c->mw.p < COMPARE_ALPHA)
        snprintf(buf, n,
                 "Step time %s: median %.3f µs in %s, %.3f µs in %s (%+.3f µs, x%.3f); the "
                 "difference is significant (Mann-Whitney U, two-sided, p = %.3g < %.2f).",
                 c->median_delta_us > 0 ? "grew" : "shrank", b->step_us.median, b->name,
                 r->step_us.median, r->name, c->median_delta_us, c->median_ratio, c->mw.p,
                 COMPARE_ALPHA);
    else
        snprintf(buf, n,
                 "No significant difference in step time: median %.3f µs in %s, %.3f µs in %s "
                 "(%+.3f µs); Mann-Whitney U, two-sided, p = %.3g >= %.2f.",
                 b->step_us.median, b->name, r->step_us.median, r->name, c->median_delta_us,
                 c->mw.p, COMPARE_ALPHA);
}
