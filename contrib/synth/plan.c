/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Step timeline: Python front (input_wait, shard_batch, one PjitFunction per
 * module), execute threads (one per GPU, thunks with launches), thread-pool
 * copies, GPU streams (compute kernels in order, all-reduces synchronised
 * across GPUs, copies), then the Python wait for the metrics copy. Times are
 * only sums and maxima of random durations, so with every choice at its
 * maximum (plan_worst_step) the result bounds every real step.
 */
#include "plan.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "rng.h"
#include "synth.h"

#define US 1000

/*
 * Random durations of one step: independent splitmix64 streams for the Python
 * thread, each GPU's execute thread, each GPU's streams and the op factors
 * shared by all GPUs. plan_compute() draws from them in a fixed order.
 */
struct picker {
    uint64_t main;                 /* Python and thread-pool choices */
    uint64_t shared;               /* per-op factors common to every GPU */
    uint64_t exec[SYNTH_MAX_GPUS]; /* execute thread of each GPU */
    uint64_t dev[SYNTH_MAX_GPUS];  /* streams of each GPU */
    int64_t scale[SYNTH_MAX_GPUS]; /* GPU speed factor of the step (per mille) */
    int worst;                     /* 1: every choice is its maximum */
};

/* Next uniform choice in [lo, hi] from stream *st, or hi in worst mode. */
static int64_t pick(const struct picker *pk, uint64_t *st, int64_t lo, int64_t hi)
{
    if (pk->worst)
        return hi;
    return rng_range(rng_next(st), lo, hi);
}

/* Seeds the streams of step s from the host key (or sets worst mode). */
static void picker_init(struct picker *pk, uint64_t key, int64_t s, int n_gpus, int worst)
{
    uint64_t k = rng_key(key, (uint64_t)s, 0x73746570ULL, 0);
    int g;

    memset(pk, 0, sizeof(*pk));
    pk->worst = worst;
    pk->main = rng_key(k, 1, 0, 0);
    pk->shared = rng_key(k, 2, 0, 0);
    for (g = 0; g < n_gpus; g++) {
        pk->exec[g] = rng_key(k, 3, (uint64_t)g, 0);
        pk->dev[g] = rng_key(k, 4, (uint64_t)g, 0);
        pk->scale[g] = pick(pk, &pk->dev[g], 980, 1020);
    }
}

static int64_t max2(int64_t a, int64_t b)
{
    return a > b ? a : b;
}

int plan_init(struct plan *pl, size_t n_ops, size_t n_mods, int n_gpus)
{
    size_t g = (size_t)n_gpus;

    memset(pl, 0, sizeof(*pl));
    pl->n_gpus = n_gpus;
    pl->n_ops = n_ops;
    pl->n_mods = n_mods;
    pl->disp = calloc(n_mods, sizeof(*pl->disp));
    pl->exec = calloc(n_mods * g, sizeof(*pl->exec));
    pl->ops = calloc(n_ops * g, sizeof(*pl->ops));
    pl->h2d = calloc(g, sizeof(*pl->h2d));
    pl->d2h = calloc(g, sizeof(*pl->d2h));
    if (!pl->disp || !pl->exec || !pl->ops || !pl->h2d || !pl->d2h) {
        plan_release(pl);
        return -ENOMEM;
    }
    return 0;
}

void plan_release(struct plan *pl)
{
    free(pl->disp);
    free(pl->exec);
    free(pl->ops);
    free(pl->h2d);
    free(pl->d2h);
    memset(pl, 0, sizeof(*pl));
}

struct plan_op *plan_op_at(const struct plan *pl, size_t op, int g)
{
    return &pl->ops[op * (size_t)pl->n_gpus + (size_t)g];
}

struct plan_exec *plan_exec_at(const struct plan *pl, size_t m, int g)
{
    return &pl->exec[m * (size_t)pl->n_gpus + (size_t)g];
}

/* Step start, input_wait, shard_batch and the PjitFunction dispatches. */
static void plan_front(struct picker *pk, int64_t start, struct plan *pl)
{
    uint64_t *st = &pk->main;
    int64_t stall = 0;
    size_t m;

    pl->step0 = start + pick(pk, st, 0, 20 * US);
    pl->iw0 = pl->step0 + 3 * US;
    if (pick(pk, st, 0, 99) >= 95) /* one step in 20 waits for a slow input batch */
        stall = pick(pk, st, 0, 4000 * US);
    pl->iw1 = pl->iw0 + pick(pk, st, 80 * US, 1200 * US) + stall;
    pl->mw0 = pl->iw1 + 3 * US;
    pl->shard0 = pl->mw0 + 4 * US;
    pl->bse_h2d0 = pl->shard0 + 5 * US;
    pl->shard1 = pl->bse_h2d0 + 5 * US + pick(pk, st, 3 * US, 8 * US);
    for (m = 0; m < pl->n_mods; m++) {
        struct plan_dispatch *d = &pl->disp[m];

        d->pjit0 = (m == 0 ? pl->shard1 : pl->disp[m - 1].pjit1) + 3 * US;
        d->parse0 = d->pjit0 + 2 * US;
        d->parse1 = d->parse0 + pick(pk, st, 4 * US, 8 * US);
        d->exec0 = d->parse1 + 2 * US;
        d->exec1 = d->exec0 + pick(pk, st, 12 * US, 20 * US);
        d->pjit1 = d->exec1 + 3 * US;
    }
    pl->update1 = pl->disp[pl->n_mods - 1].pjit1 + 2 * US;
    pl->fetch0 = pl->update1 + 2 * US;
    pl->bse_d2h0 = pl->fetch0 + 6 * US;
}

/* Host duration of the launch API call of an op. */
static int64_t launch_time(struct picker *pk, uint64_t *st, const struct op *op)
{
    if (op->kind == OP_GEMM)
        return pick(pk, st, 7 * US, 13 * US);
    if (op->kind == OP_COLL)
        return pick(pk, st, 5 * US, 9 * US);
    return pick(pk, st, 3 * US, 7 * US);
}

/* Thunks of module m on GPU g's execute thread, starting at `cursor`; returns the end. */
static int64_t plan_thunks(const struct synth *sy, struct picker *pk, size_t m, int g,
                           int64_t cursor, struct plan *pl)
{
    const struct module *mod = &sy->prog.mods[m];
    uint64_t *st = &pk->exec[g];
    size_t i, idx = synth_op_index(sy, m, 0);

    for (i = 0; i < mod->n_ops; i++, idx++) {
        struct plan_op *p = plan_op_at(pl, idx, g);

        p->thunk0 = cursor;
        if (mod->ops[i].kind == OP_WAIT) {
            p->thunk1 = p->thunk0 + pick(pk, st, 1 * US, 2 * US);
        } else {
            p->launch0 = p->thunk0 + pick(pk, st, 600, 1200);
            p->launch1 = p->launch0 + launch_time(pk, st, &mod->ops[i]);
            p->thunk1 = p->launch1 + pick(pk, st, 800, 2 * US);
        }
        cursor = p->thunk1 + pick(pk, st, 300, 1200);
    }
    return cursor;
}

/* Execute threads: one ExecuteHelper per module and GPU, thunks inside. */
static void plan_exec_threads(const struct synth *sy, struct picker *pk, struct plan *pl)
{
    int64_t free_at[SYNTH_MAX_GPUS] = {0};
    size_t m;
    int g;

    for (m = 0; m < pl->n_mods; m++) {
        for (g = 0; g < pl->n_gpus; g++) {
            struct plan_exec *e = plan_exec_at(pl, m, g);
            uint64_t *st = &pk->exec[g];
            int64_t end;

            e->helper0 =
                max2(pl->disp[m].exec0 + pick(pk, st, 4 * US, 24 * US), free_at[g] + 2 * US);
            e->buffers1 = e->helper0 + 4 * US + pick(pk, st, 5 * US, 9 * US);
            e->thunks0 = e->buffers1 + 1 * US;
            end = plan_thunks(sy, pk, m, g, e->thunks0 + 9 * US, pl);
            e->thunks1 = end + 3 * US;
            e->enqueue1 = e->thunks1 + 1 * US;
            e->callback0 = e->enqueue1 + 1 * US;
            e->callback1 = e->callback0 + pick(pk, st, 15 * US, 45 * US);
            e->outputs0 = e->callback1 + 1 * US;
            e->outputs1 = e->outputs0 + pick(pk, st, 3 * US, 6 * US);
            e->helper1 = e->outputs1 + 1 * US;
            free_at[g] = e->helper1;
        }
    }
}

/* Copies of all GPUs launched one after the other from the pool thread at t; returns the end. */
static int64_t plan_copies(struct picker *pk, int64_t t, struct plan_copy *c, int n_gpus)
{
    int g;

    for (g = 0; g < n_gpus; g++) {
        c[g].launch0 = t + (g == 0 ? 2 * US : 1 * US);
        c[g].launch1 = c[g].launch0 + pick(pk, &pk->main, 6 * US, 11 * US);
        t = c[g].launch1;
    }
    return t + 2 * US;
}

/* Collective op idx: starts on each GPU when ready, ends together after the slowest. */
static void plan_collective(struct picker *pk, int64_t dur, size_t idx, struct plan *pl,
                            int64_t *coll_free, const int64_t *compute_free)
{
    int64_t ready = 0;
    int g;

    for (g = 0; g < pl->n_gpus; g++) {
        struct plan_op *p = plan_op_at(pl, idx, g);

        p->dev0 = max2(max2(p->launch1 + pick(pk, &pk->dev[g], 3 * US, 6 * US), coll_free[g]),
                       compute_free[g]);
        ready = max2(ready, p->dev0);
    }
    for (g = 0; g < pl->n_gpus; g++) {
        struct plan_op *p = plan_op_at(pl, idx, g);

        p->dev1 = ready + dur;
        coll_free[g] = p->dev1;
    }
}

/* Compute kernel idx on every GPU, in stream order after waits on collectives. */
static void plan_kernel(struct picker *pk, int64_t dur, size_t idx, struct plan *pl,
                        int64_t *compute_free, const int64_t *wait_until)
{
    int g;

    for (g = 0; g < pl->n_gpus; g++) {
        struct plan_op *p = plan_op_at(pl, idx, g);
        uint64_t *st = &pk->dev[g];

        p->dev0 = max2(p->launch1 + pick(pk, st, 3 * US, 6 * US),
                       compute_free[g] + pick(pk, st, 1 * US, 3 * US));
        p->dev0 = max2(p->dev0, wait_until[g]);
        p->dev1 = p->dev0 + dur * pk->scale[g] / 1000;
        compute_free[g] = p->dev1;
    }
}

/* GPU streams: kernels in program order after the input copy, collectives beside them. */
static void plan_devices(const struct synth *sy, struct picker *pk, struct plan *pl,
                         int64_t *compute_free)
{
    int64_t coll_free[SYNTH_MAX_GPUS] = {0}, wait_until[SYNTH_MAX_GPUS] = {0};
    size_t m, i, idx = 0;
    int g;

    for (g = 0; g < pl->n_gpus; g++)
        compute_free[g] = pl->h2d[g].dev1;
    for (m = 0; m < pl->n_mods; m++) {
        const struct module *mod = &sy->prog.mods[m];

        for (i = 0; i < mod->n_ops; i++, idx++) {
            const struct op *op = &mod->ops[i];
            /* per-op factor of the step, the same on every GPU */
            int64_t dur = op->dur_ns * pick(pk, &pk->shared, 900, 1100) / 1000;

            if (op->kind == OP_COLL) {
                plan_collective(pk, dur, idx, pl, coll_free, compute_free);
            } else if (op->kind == OP_WAIT) {
                size_t c = idx - i + (size_t)op->coll;
                for (g = 0; g < pl->n_gpus; g++)
                    wait_until[g] = max2(wait_until[g], plan_op_at(pl, c, g)->dev1);
            } else {
                plan_kernel(pk, dur, idx, pl, compute_free, wait_until);
            }
        }
    }
    for (g = 0; g < pl->n_gpus; g++)
        compute_free[g] = max2(compute_free[g], coll_free[g]);
}

/* Numbers the launches: correlation ids unique over the host's whole profile. */
static void plan_ids(const struct synth *sy, int64_t s, struct plan *pl)
{
    uint64_t per_gpu = 2;
    size_t m, i, idx;
    int g;

    for (m = 0; m < pl->n_mods; m++)
        per_gpu += sy->prog.mods[m].n_launches;
    for (g = 0; g < pl->n_gpus; g++) {
        uint64_t base = 1 + ((uint64_t)s * (uint64_t)pl->n_gpus + (uint64_t)g) * per_gpu;
        uint64_t k = 1;

        pl->h2d[g].corr = base;
        for (idx = 0, m = 0; m < pl->n_mods; m++)
            for (i = 0; i < sy->prog.mods[m].n_ops; i++, idx++)
                if (sy->prog.mods[m].ops[i].kind != OP_WAIT)
                    plan_op_at(pl, idx, g)->corr = base + k++;
        pl->d2h[g].corr = base + k;
    }
    pl->ctx_h2d = 1 + s * (int64_t)(pl->n_mods + 2);
    for (m = 0; m < pl->n_mods; m++)
        pl->disp[m].ctx = pl->ctx_h2d + 1 + (int64_t)m;
    pl->ctx_d2h = pl->ctx_h2d + 1 + (int64_t)pl->n_mods;
}

/* Input copies on the thread pool and the GPUs' copy streams. */
static void plan_inputs(struct picker *pk, struct plan *pl)
{
    int g;

    pl->pool_h2d0 = pl->bse_h2d0 + pick(pk, &pk->main, 6 * US, 12 * US);
    pl->pool_h2d1 = plan_copies(pk, pl->pool_h2d0, pl->h2d, pl->n_gpus);
    for (g = 0; g < pl->n_gpus; g++) {
        struct plan_copy *c = &pl->h2d[g];

        c->dev0 = c->launch1 + pick(pk, &pk->dev[g], 4 * US, 9 * US);
        c->dev1 = c->dev0 + pick(pk, &pk->dev[g], 150 * US, 190 * US);
    }
}

/* Metrics copies after the last kernels; returns when every GPU and thread is done. */
static int64_t plan_outputs(struct picker *pk, struct plan *pl, const int64_t *compute_end)
{
    int64_t done;
    size_t m;
    int g;

    pl->pool_d2h0 =
        max2(pl->bse_d2h0 + pick(pk, &pk->main, 6 * US, 12 * US), pl->pool_h2d1 + 3 * US);
    pl->pool_d2h1 = plan_copies(pk, pl->pool_d2h0, pl->d2h, pl->n_gpus);
    done = pl->pool_d2h1;
    for (g = 0; g < pl->n_gpus; g++) {
        struct plan_copy *c = &pl->d2h[g];

        c->dev0 = max2(c->launch1 + pick(pk, &pk->dev[g], 4 * US, 9 * US),
                       compute_end[g] + pick(pk, &pk->dev[g], 2 * US, 4 * US));
        c->dev1 = c->dev0 + pick(pk, &pk->dev[g], 8 * US, 15 * US);
        done = max2(done, c->dev1);
        for (m = 0; m < pl->n_mods; m++)
            done = max2(done, plan_exec_at(pl, m, g)->helper1);
    }
    return done;
}

/* Whole step s starting at `start` (before its jitter). */
static void plan_compute(const struct synth *sy, struct picker *pk, int64_t s, int64_t start,
                         struct plan *pl)
{
    int64_t compute_end[SYNTH_MAX_GPUS];
    int64_t wait;

    plan_front(pk, start, pl);
    plan_exec_threads(sy, pk, pl);
    plan_inputs(pk, pl);
    plan_devices(sy, pk, pl, compute_end);
    wait = plan_outputs(pk, pl, compute_end) + pick(pk, &pk->main, 5 * US, 12 * US);
    pl->fetch1 = wait + 2 * US;
    pl->mw1 = wait + 4 * US;
    pl->step1 = pl->mw1 + 3 * US;
    pl->log0 = pl->step1 + pick(pk, &pk->main, 8 * US, 20 * US);
    pl->log1 = pl->log0 + pick(pk, &pk->main, 30 * US, 90 * US);
    plan_ids(sy, s, pl);
}

void plan_step(const struct synth *sy, int64_t s, struct plan *pl)
{
    struct picker pk;

    if (pl->cached && pl->cached_step == s && pl->cached_key == sy->host_key)
        return;
    picker_init(&pk, sy->host_key, s, pl->n_gpus, 0);
    plan_compute(sy, &pk, s, sy->t0_ns + s * sy->period_ns, pl);
    pl->cached = 1;
    pl->cached_step = s;
    pl->cached_key = sy->host_key;
}

int64_t plan_worst_step(const struct synth *sy, struct plan *pl)
{
    struct picker pk;

    picker_init(&pk, 0, 0, pl->n_gpus, 1);
    plan_compute(sy, &pk, 0, 0, pl);
    pl->cached = 0;
    return pl->log1;
}
