/*
 * op_stats_input_tpu.c - the TPU part of the input-pipeline analysis
 * (ComputeTpuInputPipelineAnalysisResult): per-step TensorCore and
 * SparseCore details across cores, their summaries and the TPU bottleneck
 * statements; and MayFixTpuStepAnalysis, which moves host input time into
 * the TensorCore steps when they have no infeed op.
 */
#include "op_stats_input_int.h"
#include "op_stats_int.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/sort.h"

/* category_ps of a core's step, 0 when absent. */
static uint64_t cat_ps(const struct step_core *c, const char *name)
{
    uint32_t i;

    for (i = 0; i < c->ncategories; i++) {
        if (strcmp(c->categories[i].name, name) == 0)
            return c->categories[i].ps;
    }
    return 0;
}

/* TpuStepBreakdown of a TensorCore step (ConvertGenericStepBreakdownToTpuStepBreakdown). */
struct tpu_breakdown {
    uint64_t infeed, outfeed, wait_scv0, host_send_recv, idle;
};

static void tpu_breakdown(const struct step_core *c, struct tpu_breakdown *b)
{
    uint64_t total = 0, scv0_in;
    uint32_t i;

    for (i = 0; i < c->ncategories; i++) {
        if (strcmp(c->categories[i].name, "IDLE") != 0)
            total += c->categories[i].ps;
    }
    b->infeed = cat_ps(c, "infeed");
    b->outfeed = cat_ps(c, "outfeed");
    /* BreakdownSparseCoreV0Infeed: the infeed not matched by an outfeed is
     * the wait for SparseCoreV0 */
    scv0_in = cat_ps(c, "sparsecorev0 infeed");
    if (scv0_in > 0) {
        uint64_t out = cat_ps(c, "sparsecorev0 outfeed");
        b->wait_scv0 = scv0_in - (scv0_in < out ? scv0_in : out);
    } else {
        b->wait_scv0 = cat_ps(c, "sparsecorev0 infeed wait");
    }
    b->host_send_recv = cat_ps(c, "host send") + cat_ps(c, "host send-done") +
                        cat_ps(c, "host recv") + cat_ps(c, "host recv-done");
    b->idle = c->duration_ps - total; /* profile time - time in ops */
}

/* A SparseCore's step (its GenericStepBreakdown): the step time, compute
 * (the time not IDLE) and idle. */
static void sc_step(const struct step_core *c, struct stat_acc *step, struct stat_acc *compute,
                    struct stat_acc *idle)
{
    uint64_t idle_ps = cat_ps(c, "IDLE");

    ip_acc_add(step, (double)c->duration_ps);
    ip_acc_add(compute, (double)(c->duration_ps - idle_ps));
    ip_acc_add(idle, (double)idle_ps);
}

/* The shortest duration of all-reduce id over every core of the step (the
 * MinMap of ComputePerStepAllReduceBreakdownAcrossCores). */
static uint64_t min_all_reduce(const struct step_entry *se, uint64_t id)
{
    uint64_t best = UINT64_MAX;
    uint32_t i, k;

    for (i = 0; i < se->ncores; i++) {
        for (k = 0; k < se->cores[i].nall_reduce; k++) {
            const struct all_reduce_info *ar = &se->cores[i].all_reduce[k];
            uint64_t d = (uint64_t)(ar->end_ps - ar->begin_ps);
            if (ar->id == id && d < best)
                best = d;
        }
    }
    return best;
}

/* A core's all-reduce breakdown: each op's shortest duration over the
 * cores is compute, the rest synchronisation. */
static void all_reduce_breakdown(const struct step_entry *se, const struct step_core *c,
                                 uint64_t *compute, uint64_t *sync)
{
    uint32_t k;

    *compute = *sync = 0;
    for (k = 0; k < c->nall_reduce; k++) {
        const struct all_reduce_info *ar = &c->all_reduce[k];
        uint64_t d = (uint64_t)(ar->end_ps - ar->begin_ps), least = min_all_reduce(se, ar->id);
        *compute += least;
        *sync += d - least;
    }
}

/* The core_id_to_details entry of core id, NULL if none. */
static const struct core_details *details_of(const struct op_stats *os, uint32_t id)
{
    uint32_t i;

    for (i = 0; i < os->ncore_details; i++) {
        if (os->core_details[i].core_id == id)
            return &os->core_details[i];
    }
    return NULL;
}

/* ComputeTpuPerStepDataAcrossCores. */
static void tpu_step(const struct op_stats *os, const struct step_entry *se, struct ip_tpu_step *d)
{
    struct stat_acc infeed_pct = {0}, step = {0}, optimal = {0}, outfeed = {0}, host = {0};
    struct stat_acc sc_time = {0}, sc_compute = {0}, sc_idle = {0};
    uint64_t max_infeed = 0, max_wait_scv0 = 0, ar_compute = 0, ar_sync = 0;
    double non_idle;
    uint32_t i;

    memset(d, 0, sizeof(*d));
    d->step_number = se->ncores > 0 ? se->cores[0].step_num : se->step_num;
    for (i = 0; i < se->ncores; i++) {
        const struct step_core *c = &se->cores[i];
        struct tpu_breakdown b;
        if (c->core_id >= 1000000) {
            sc_step(c, &sc_time, &sc_compute, &sc_idle);
            continue;
        }
        tpu_breakdown(c, &b);
        ip_acc_add(&step, (double)c->duration_ps);
        if (b.wait_scv0 > max_wait_scv0)
            max_wait_scv0 = b.wait_scv0;
        ip_acc_add(&outfeed, (double)b.outfeed);
        if (c->nall_reduce > 0) {
            /* the core with the longest all-reduce time gives the step's */
            uint64_t compute, sync;
            all_reduce_breakdown(se, c, &compute, &sync);
            if (compute + sync > ar_compute + ar_sync) {
                ar_compute = compute;
                ar_sync = sync;
            }
        }
        ip_acc_add(&infeed_pct, 100.0 * (double)b.infeed / (double)c->duration_ps);
        ip_acc_add(&optimal, (double)(c->duration_ps - (b.infeed + b.outfeed + b.host_send_recv +
                                                        b.idle + b.wait_scv0)));
        ip_acc_add(&host, (double)b.host_send_recv);
        if (b.infeed > max_infeed) {
            max_infeed = b.infeed;
            d->max_infeed_core = details_of(os, c->core_id);
        }
    }
    if (outfeed.n > 0)
        d->tc_outfeed_ms = outfeed.sum / (double)outfeed.n / PS_PER_MS;
    if (optimal.n > 0)
        d->tc_compute_ms = optimal.min / PS_PER_MS;
    if (host.n > 0)
        d->host_transfer_ms = host.max / PS_PER_MS;
    d->tc_infeed_ms = (double)max_infeed / PS_PER_MS;
    /* scv0_infeed_percent is never set: all of the wait is SparseCoreV0 compute */
    d->scv0_compute_ms = (double)max_wait_scv0 / PS_PER_MS;
    d->scv0_infeed_ms = 0;
    d->all_reduce_compute_ms = (double)ar_compute / PS_PER_MS;
    d->all_reduce_sync_ms = (double)ar_sync / PS_PER_MS;
    if (step.n > 0) {
        non_idle = d->tc_compute_ms + d->scv0_compute_ms + d->tc_infeed_ms + d->scv0_infeed_ms +
                   d->all_reduce_compute_ms + d->all_reduce_sync_ms + d->tc_outfeed_ms;
        d->tc_idle_ms = step.min / PS_PER_MS - non_idle;
    }
    if (d->tc_idle_ms < 0)
        d->tc_idle_ms = 0;
    if (infeed_pct.n > 0) {
        d->infeed_percent_avg = infeed_pct.sum / (double)infeed_pct.n;
        d->infeed_percent_min = infeed_pct.min;
        d->infeed_percent_max = infeed_pct.max;
    }
    if (sc_compute.n > 0)
        d->sc_compute_ms = sc_compute.min / PS_PER_MS;
    if (sc_idle.n > 0)
        d->sc_idle_ms = sc_idle.sum / (double)sc_idle.n / PS_PER_MS; /* never negative */
    if (sc_time.n > 0)
        d->sc_step_time_ms = sc_time.sum / (double)sc_time.n / PS_PER_MS;
}

int ip_tpu_analyze(const struct op_stats *os, struct ip_analysis *a)
{
    struct stat_acc pct = {0}, tcc = {0}, scc = {0}, sci = {0}, tci = {0}, tco = {0}, idle = {0},
                    host = {0};
    struct stat_acc sc_compute = {0}, sc_infeed = {0}, sc_outfeed = {0}, sc_idle = {0},
                    sc_time = {0};
    uint32_t i;

    a->tpu_steps = calloc(os->nsteps ? os->nsteps : 1, sizeof(*a->tpu_steps));
    if (a->tpu_steps == NULL)
        return -ENOMEM;
    for (i = 0; i < os->nsteps; i++) {
        struct ip_tpu_step *d = &a->tpu_steps[a->ntpu_steps++];
        tpu_step(os, &os->steps[i], d);
        ip_acc_add(&pct, d->infeed_percent_max);
        ip_acc_add(&tcc, d->tc_compute_ms);
        ip_acc_add(&scc, d->scv0_compute_ms);
        ip_acc_add(&sci, d->scv0_infeed_ms);
        ip_acc_add(&tci, d->tc_infeed_ms);
        ip_acc_add(&tco, d->tc_outfeed_ms);
        ip_acc_add(&idle, d->tc_idle_ms);
        ip_acc_add(&host, d->host_transfer_ms);
        ip_acc_add(&sc_compute, d->sc_compute_ms);
        ip_acc_add(&sc_infeed, d->sc_infeed_ms);
        ip_acc_add(&sc_outfeed, d->sc_outfeed_ms);
        ip_acc_add(&sc_idle, d->sc_idle_ms);
        ip_acc_add(&sc_time, d->sc_step_time_ms);
    }
    a->input_percent = ip_acc_summary(&pct);
    a->tc_compute = ip_acc_summary(&tcc);
    a->scv0_compute = ip_acc_summary(&scc);
    a->scv0_infeed = ip_acc_summary(&sci);
    a->tc_infeed = ip_acc_summary(&tci);
    a->tc_outfeed = ip_acc_summary(&tco);
    a->tc_idle = ip_acc_summary(&idle);
    a->host_transfer = ip_acc_summary(&host);
    a->has_sparse_core = os->has_sparse_core;
    a->sc_compute = ip_acc_summary(&sc_compute);
    a->sc_infeed = ip_acc_summary(&sc_infeed);
    a->sc_outfeed = ip_acc_summary(&sc_outfeed);
    a->sc_idle = ip_acc_summary(&sc_idle);
    a->sc_step_time = ip_acc_summary(&sc_time);
    return 0;
}

/* ComputeTpuBottleneckAnalysis with all cores profiled: the input and
 * output statements over the sum of the steps (TensorCore idle, all-reduce
 * and SparseCoreV0 statements are not printed by the tables). */
void ip_tpu_bottleneck(struct ip_analysis *a)
{
    double step = 0, infeed = 0, outfeed = 0, infeed_pct, outfeed_pct;
    uint32_t i;

    for (i = 0; i < a->ntpu_steps; i++) {
        const struct ip_tpu_step *d = &a->tpu_steps[i];
        step += d->tc_compute_ms + d->scv0_compute_ms + d->tc_infeed_ms + d->scv0_infeed_ms +
                d->all_reduce_compute_ms + d->all_reduce_sync_ms + d->tc_outfeed_ms + d->tc_idle_ms;
        infeed += d->tc_infeed_ms + d->scv0_infeed_ms;
        outfeed += d->tc_outfeed_ms;
    }
    a->output_statement[0] = '\0';
    if (step == 0) {
        ip_no_step_time(a);
        return;
    }
    infeed_pct = 100.0 * infeed / step;
    outfeed_pct = 100.0 * outfeed / step;
    ip_classify_input(a, infeed_pct, 0);
    if (outfeed_pct >= 20)
        snprintf(a->output_statement, sizeof(a->output_statement),
                 "Your program is HIGHLY output-bound because %.1f%% of the total step time "
                 "sampled is spent on output. Therefore, you should first focus on reducing "
                 "the output time.",
                 outfeed_pct);
    else if (outfeed_pct >= 5)
        snprintf(a->output_statement, sizeof(a->output_statement),
                 "Your program is MODERATELY output-bound because %.1f%% of the total step "
                 "time sampled is spent on output. Therefore, you would need to reduce both "
                 "the output time and other time.",
                 outfeed_pct);
}

/* HasTpuInfeedOp: some device op is a host or SparseCoreV0 infeed. */
static int has_infeed_op(const struct op_metrics_db *db)
{
    uint32_t i;

    for (i = 0; i < db->nrows; i++) {
        if (strcmp(db->rows[i].category, "infeed") == 0 ||
            strcmp(db->rows[i].category, "sparsecorev0 infeed") == 0)
            return 1;
    }
    return 0;
}

/* TotalInputPs: the host's input wait and host-to-device time in a step. */
static uint64_t total_input_ps(const struct step_details *d)
{
    uint64_t ps = 0;
    uint32_t i;

    for (i = 0; i < d->nevents; i++) {
        if (d->events[i].type == EV_HOST_WAIT_INPUT / 10 ||
            d->events[i].type == EV_HOST_TO_DEVICE / 10)
            ps += (uint64_t)(d->events[i].end - d->events[i].begin);
    }
    return ps;
}

/* One TensorCore step: IDLE * ratio of it becomes "infeed". */
static int fix_core(struct op_stats *os, struct step_core *c, double ratio)
{
    struct step_category *cats;
    uint32_t i, n = c->ncategories, idle = UINT32_MAX, infeed = UINT32_MAX;
    uint64_t moved;

    for (i = 0; i < n; i++) {
        if (strcmp(c->categories[i].name, "IDLE") == 0)
            idle = i;
        else if (strcmp(c->categories[i].name, "infeed") == 0)
            infeed = i;
    }
    if (idle == UINT32_MAX || c->categories[idle].ps == 0)
        return 0;
    cats = arena_alloc(&os->arena, (n + 1) * sizeof(*cats));
    if (cats == NULL)
        return -ENOMEM;
    memcpy(cats, c->categories, n * sizeof(*cats));
    if (infeed == UINT32_MAX) {
        cats[n] = (struct step_category){"infeed", 0};
        infeed = n++;
    }
    /* uint64 * double, stored back in a uint64 (truncated) */
    moved = (uint64_t)((double)cats[idle].ps * ratio);
    cats[infeed].ps = moved;
    cats[idle].ps -= moved;
    if (xp_sort_runs(cats, n, sizeof(*cats), tpu_step_category_cmp, NULL) != 0)
        return -ENOMEM;
    c->categories = cats;
    c->ncategories = n;
    return 0;
}

int ip_tpu_fix_steps(struct op_stats *os, const struct step_events *host_steps)
{
    uint32_t i, j;
    int rc;

    if (has_infeed_op(&os->device_db))
        return 0;
    for (i = 0; i < os->nsteps; i++) {
        struct step_entry *se = &os->steps[i];
        const struct step_details *d;
        struct ip_tpu_step step;
        uint64_t input;
        double ratio;
        if (se->step_num >= host_steps->n || !host_steps->by_group[se->step_num].present)
            continue; /* the host has no such step: nothing to fix */
        d = &host_steps->by_group[se->step_num];
        if ((input = total_input_ps(d)) == 0)
            continue;
        tpu_step(os, se, &step);
        ratio = op_safe_div((double)input / PS_PER_MS, step.tc_idle_ms);
        if (ratio > 1.0)
            ratio = 1.0;
        for (j = 0; j < se->ncores; j++) {
            /* SparseCores keep their idle time */
            if (se->cores[j].core_id < 1000000 && (rc = fix_core(os, &se->cores[j], ratio)) != 0)
                return rc;
        }
    }
    return 0;
}
