/*
 * op_stats_combine.c - all hosts' op_stats as one (CombineAllOpStats of
 * xprof/convert/op_stats_combiner.cc, step alignment of
 * xprof/utils/step_intersection.cc).
 *
 * Steps are aligned to the chief (the host whose steps span the least time)
 * by the offset that maximises the overlap of step spans; the common range
 * is kept and renumbered 0..; each host's cores are re-keyed
 * host * 1000 + core.
 */
#include "base/sort.h"
#include "op_stats_int.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* The step's span over its cores (StepTimespan). */
static void step_span(const struct step_entry *s, uint64_t *begin, uint64_t *dur)
{
    uint64_t lo = UINT64_MAX, hi = 0;
    uint32_t i;

    *begin = *dur = 0;
    if (s->ncores == 0)
        return;
    if (s->ncores == 1) {
        *begin = s->cores[0].begin_ps;
        *dur = s->cores[0].duration_ps;
        return;
    }
    for (i = 0; i < s->ncores; i++) {
        uint64_t b = s->cores[i].begin_ps, e = b + s->cores[i].duration_ps;
        if (b < lo)
            lo = b;
        if (e > hi)
            hi = e;
    }
    if (lo < hi) {
        *begin = lo;
        *dur = hi - lo;
    }
}

struct align {
    uint32_t begin_sub;   /* first step of the host */
    uint32_t begin_chief; /* matching chief step */
    uint32_t num;         /* steps aligned */
};

static void find_alignment(const struct op_stats *sub, const struct op_stats *chief,
                           struct align *a)
{
    uint32_t ns = sub->nsteps, nc = chief->nsteps, si = 0, ci = 0;
    uint64_t *sim;
    int best_k = 0, found = 0, k;
    uint64_t best = 0;

    a->begin_sub = a->begin_chief = a->num = 0;
    if (ns == 0 || nc == 0)
        return;
    sim = calloc((size_t)ns + nc, sizeof(uint64_t));
    if (sim == NULL)
        return;
    while (si < ns && ci < nc) {
        uint64_t sb, sd, cb, cd, lo, hi;
        step_span(&sub->steps[si], &sb, &sd);
        if (sd == 0) {
            si++;
            continue;
        }
        step_span(&chief->steps[ci], &cb, &cd);
        if (cd == 0) {
            ci++;
            continue;
        }
        lo = sb > cb ? sb : cb;
        hi = sb + sd < cb + cd ? sb + sd : cb + cd;
        sim[ci - si + (ns - 1)] += lo < hi ? hi - lo : 0;
        if (sb + sd < cb + cd)
            si++;
        else if (cb + cd < sb + sd)
            ci++;
        else {
            si++;
            ci++;
        }
    }
    for (k = 0; k < (int)nc; k++) {
        if (!found || sim[k + ns - 1] > best) {
            best = sim[k + ns - 1];
            best_k = k;
            found = 1;
        }
    }
    for (k = -1; k >= -((int)ns - 1); k--) {
        if (sim[k + ns - 1] > best) {
            best = sim[k + ns - 1];
            best_k = k;
        }
    }
    free(sim);
    a->begin_sub = best_k >= 0 ? 0 : (uint32_t)-best_k;
    a->begin_chief = best_k >= 0 ? (uint32_t)best_k : 0;
    a->num = ns - a->begin_sub < nc - a->begin_chief ? ns - a->begin_sub : nc - a->begin_chief;
}

static int str_ptr_cmp(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Whether host h takes part in the step intersection: every host when no
 * host has an accelerator, else the hosts with one. */
static int counts_steps(const struct op_stats *s, int no_accel)
{
    return no_accel || s->hardware_type > HW_CPU_ONLY;
}

/* The chief: the counted host of least total step span, or -1. */
static int pick_chief(const struct op_stats *const *src, uint32_t n, int no_accel)
{
    uint64_t min_dur = UINT64_MAX;
    int chief = -1;
    uint32_t h, i;

    for (h = 0; h < n; h++) {
        uint64_t lo = UINT64_MAX, hi = 0, total;
        if (!counts_steps(src[h], no_accel))
            continue;
        for (i = 0; i < src[h]->nsteps; i++) {
            uint64_t b, d;
            step_span(&src[h]->steps[i], &b, &d);
            if (d > 0) {
                if (b < lo)
                    lo = b;
                if (b + d > hi)
                    hi = b + d;
            }
        }
        total = lo < hi ? hi - lo : 0;
        if (chief < 0 || total < min_dur) {
            min_dur = total;
            chief = (int)h;
        }
    }
    return chief;
}

/* Each counted host's steps aligned to the chief's into al[h], and the
 * chief's steps that every host has: *begin and *nsteps (0 when none, with
 * dst->empty_intersect set when the ranges do not meet). */
static void intersect_steps(struct op_stats *dst, const struct op_stats *const *src, uint32_t n,
                            int no_accel, int chief, struct align *al, uint32_t *begin,
                            uint32_t *nsteps)
{
    uint32_t max_begin = 0, min_end = UINT32_MAX, h;

    *begin = *nsteps = 0;
    if (chief < 0 || src[chief]->nsteps == 0)
        return;
    for (h = 0; h < n; h++) {
        if (!counts_steps(src[h], no_accel))
            continue;
        if ((int)h == chief)
            al[h].num = src[h]->nsteps;
        else
            find_alignment(src[h], src[chief], &al[h]);
        if (al[h].begin_chief > max_begin)
            max_begin = al[h].begin_chief;
        if (al[h].begin_chief + al[h].num < min_end)
            min_end = al[h].begin_chief + al[h].num;
    }
    if (max_begin > min_end) {
        dst->empty_intersect = 1;
    } else {
        *begin = max_begin;
        *nsteps = min_end - max_begin;
    }
}

/* Step i of the intersection: the cores of every counted host's aligned
 * step, core ids made unique as host * 1000 + core. */
static int combine_step(struct op_stats *dst, const struct op_stats *const *src, uint32_t n,
                        int no_accel, const struct align *al, uint32_t begin, uint32_t i)
{
    uint32_t ncores = 0, h, j;
    struct step_core *cores;
    struct op_db_sums *hlo = NULL;

    dst->steps[i].step_num = i;
    for (h = 0; h < n; h++) {
        if (counts_steps(src[h], no_accel))
            ncores += src[h]->steps[al[h].begin_sub + (begin - al[h].begin_chief) + i].ncores;
    }
    cores = arena_alloc(&dst->arena, (ncores ? ncores : 1) * sizeof(*cores));
    if (cores == NULL)
        return -ENOMEM;
    ncores = 0;
    for (h = 0; h < n; h++) {
        const struct step_entry *s;
        if (!counts_steps(src[h], no_accel))
            continue;
        s = &src[h]->steps[al[h].begin_sub + (begin - al[h].begin_chief) + i];
        if (s->hlo != NULL) {
            /* the per-step and complete-steps combiners (CombinePerCoreStepInfo) */
            if (hlo == NULL && (hlo = arena_alloc(&dst->arena, sizeof(*hlo))) == NULL)
                return -ENOMEM;
            if (dst->steps[i].hlo == NULL) {
                memset(hlo, 0, sizeof(*hlo));
                dst->steps[i].hlo = hlo;
            }
            op_db_sums_add(hlo, s->hlo);
            if (!src[h]->use_incomplete_step)
                op_db_sums_add(&dst->complete_steps, s->hlo);
        }
        for (j = 0; j < s->ncores; j++) {
            cores[ncores] = s->cores[j];
            cores[ncores].core_id = h * 1000 + s->cores[j].core_id;
            cores[ncores].step_num = i;
            ncores++;
        }
    }
    dst->steps[i].cores = cores;
    dst->steps[i].ncores = ncores;
    return 0;
}

/* XProf's step intersection over the hosts (CombineAllOpStats with
 * StepIntersection): the steps every counted host has. */
static int combine_steps(struct op_stats *dst, const struct op_stats *const *src, uint32_t n,
                         int no_accel)
{
    struct align *al = calloc(n ? n : 1, sizeof(*al));
    uint32_t begin, nsteps, i;
    int rc = 0;

    if (al == NULL)
        return -ENOMEM;
    intersect_steps(dst, src, n, no_accel, pick_chief(src, n, no_accel), al, &begin, &nsteps);
    dst->steps = calloc(nsteps ? nsteps : 1, sizeof(*dst->steps));
    if (dst->steps == NULL) {
        free(al);
        return -ENOMEM;
    }
    dst->nsteps = nsteps;
    for (i = 0; i < nsteps && rc == 0; i++)
        rc = combine_step(dst, src, n, no_accel, al, begin, i);
    free(al);
    return rc;
}

/* One host's databases, environment, diagnostics and utilization added. */
static int combine_host(struct op_stats *dst, const struct op_stats *s)
{
    uint32_t i;
    int rc;

    op_db_combine(&dst->host_db, &dst->arena, &s->host_db, 0);
    op_db_combine(&dst->device_db, &dst->arena, &s->device_db, 1);
    if (dst->host_db.oom || dst->device_db.oom)
        return -ENOMEM;
    for (i = 0; i < s->nhostnames; i++) {
        if ((rc = op_stats_add_string(dst, &dst->hostnames, &dst->nhostnames, s->hostnames[i],
                                      1)) != 0)
            return rc;
    }
    dst->host_count = (int32_t)dst->nhostnames;
    if (strcmp(s->device_type, "CPU") != 0 && strcmp(s->device_type, "Device") != 0) {
        dst->device_type = s->device_type;
        dst->device_core_count += s->device_core_count;
    } else if (dst->device_type[0] == '\0') {
        dst->device_type = s->device_type;
    }
    if (s->hardware_type > dst->hardware_type)
        dst->hardware_type = s->hardware_type;
    dst->has_sparse_core |= s->has_sparse_core;
    dst->task_count += s->task_count;
    dst->host_trace_level = s->host_trace_level;
    dst->is_training = s->is_training;
    if (s->peak_tflops > 0)
        dst->peak_tflops = s->peak_tflops;
    if (s->npeak_bws > 0 && dst->npeak_bws == 0) {
        memcpy(dst->peak_bws, s->peak_bws, sizeof(dst->peak_bws));
        dst->npeak_bws = s->npeak_bws;
    }
    if (s->ridge_point > 0)
        dst->ridge_point = s->ridge_point;
    for (i = 0; i < s->nerrors; i++) {
        if ((rc = op_stats_add_string(dst, &dst->errors, &dst->nerrors, s->errors[i], 0)) != 0)
            return rc;
    }
    for (i = 0; i < s->nwarnings; i++) {
        if ((rc = op_stats_add_string(dst, &dst->warnings, &dst->nwarnings, s->warnings[i], 0)) !=
            0)
            return rc;
    }
    dst->mxu_utilization_percent += s->mxu_utilization_percent;
    dst->hbm_utilization_percent += s->hbm_utilization_percent;
    return 0;
}

/* core_id_to_details of every host, re-keyed host * 1000 + core
 * (CombineCoreIdMap). */
static int combine_core_details(struct op_stats *dst, const struct op_stats *const *src, uint32_t n)
{
    uint32_t total = 0, h, i;

    for (h = 0; h < n; h++)
        total += src[h]->ncore_details;
    if (total == 0)
        return 0;
    dst->core_details = arena_alloc(&dst->arena, total * sizeof(*dst->core_details));
    if (dst->core_details == NULL)
        return -ENOMEM;
    for (h = 0; h < n; h++) {
        for (i = 0; i < src[h]->ncore_details; i++) {
            struct core_details *d = &dst->core_details[dst->ncore_details++];
            *d = src[h]->core_details[i];
            d->core_id = h * 1000 + d->core_id;
            d->hostname = arena_strndup(&dst->arena, d->hostname, strlen(d->hostname));
            if (d->hostname == NULL)
                return -ENOMEM;
        }
    }
    return 0;
}

/* Every host's kernel reports, then XProf's sort and cut. */
static int combine_kernels(struct op_stats *dst, const struct op_stats *const *src, uint32_t n)
{
    uint32_t nkernels = 0, h;

    for (h = 0; h < n; h++)
        nkernels += src[h]->nkernels;
    dst->kernels = malloc((nkernels ? nkernels : 1) * sizeof(*dst->kernels));
    if (dst->kernels == NULL)
        return -ENOMEM;
    for (h = 0; h < n; h++) {
        if (src[h]->nkernels > 0)
            memcpy(dst->kernels + dst->nkernels, src[h]->kernels,
                   src[h]->nkernels * sizeof(*dst->kernels));
        dst->nkernels += src[h]->nkernels;
    }
    kernels_sort_top(dst);
    return 0;
}

int op_stats_combine(struct op_stats *dst, const struct op_stats *const *src, uint32_t n)
{
    int no_accel = 1, rc;
    uint32_t h;

    for (h = 0; h < n; h++) {
        if (src[h]->hardware_type > HW_CPU_ONLY)
            no_accel = 0;
    }
    if ((rc = combine_steps(dst, src, n, no_accel)) != 0)
        return rc;
    dst->device_type = "";
    for (h = 0; h < n; h++) {
        if ((rc = combine_host(dst, src[h])) != 0)
            return rc;
    }
    if (dst->nhostnames > 1)
        xp_qsort(dst->hostnames, dst->nhostnames, sizeof(*dst->hostnames), str_ptr_cmp);
    if ((rc = combine_kernels(dst, src, n)) != 0)
        return rc;
    if ((rc = combine_core_details(dst, src, n)) != 0)
        return rc;
    /* The high-confidence duty cycle: OpMetricsDbCombiner does not add it
     * up, so only a single host (CombineAllOpStats copies its op_stats)
     * keeps it. */
    if (n == 1) {
        dst->device_db.busy_time_hc_ps = src[0]->device_db.busy_time_hc_ps;
        dst->device_db.idle_time_hc_ps = src[0]->device_db.idle_time_hc_ps;
    }
    if (n > 0) {
        dst->mxu_utilization_percent /= n;
        dst->hbm_utilization_percent /= n;
    }
    return 0;
}
