/* SPDX-License-Identifier: Apache-2.0 */
/*
 * /host:CPU lines: the Python thread (step annotation, input_wait,
 * model_and_wait and Python-tracer calls), one PjRt execute thread per GPU
 * (ExecuteHelper > EnqueueExecution > ExecuteThunks > thunks > launches) and
 * the thread-pool thread issuing the input and metrics copies.
 */
#include "lines.h"
#include "synth.h"

#define US 1000

/* XLA's PjRt context type for producer/consumer links (_pt/_ct). */
#define CONTEXT_PJRT 5

int64_t lines_host_ts(const void *sy)
{
    return ((const struct synth *)sy)->t0_ns - 1000;
}

void lines_span(struct emit *em, int64_t ts_ns, int64_t meta, int64_t t0, int64_t t1)
{
    xev_begin(em, meta, (t0 - ts_ns) * 1000, (t1 - t0) * 1000);
}

/* Plain host event without stats. */
static void host_ev(struct emit *em, const struct synth *sy, enum host_event e, int64_t t0,
                    int64_t t1)
{
    lines_span(em, lines_host_ts(sy), sy->he[e], t0, t1);
    xev_end(em);
}

/* Host event producing context ctx (_pt = PjRt, _p = ctx). */
static void producer(struct emit *em, const struct synth *sy, int64_t meta, int64_t t0, int64_t t1,
                     int64_t ctx)
{
    lines_span(em, lines_host_ts(sy), meta, t0, t1);
    xev_int(em, sy->hs[HS_PT], CONTEXT_PJRT);
    xev_int(em, sy->hs[HS_P], ctx);
    xev_end(em);
}

/* Host event consuming context ctx (_ct = PjRt, _c = ctx). */
static void consumer(struct emit *em, const struct synth *sy, int64_t meta, int64_t t0, int64_t t1,
                     int64_t ctx)
{
    lines_span(em, lines_host_ts(sy), meta, t0, t1);
    xev_int(em, sy->hs[HS_CT], CONTEXT_PJRT);
    xev_int(em, sy->hs[HS_C], ctx);
    xev_end(em);
}

/* The Python thread's events of the step in pl (step number s). */
static void python_step(struct emit *em, const struct synth *sy, const struct plan *pl, int64_t s)
{
    size_t m;

    lines_span(em, lines_host_ts(sy), sy->he[HE_STEP], pl->step0, pl->step1);
    xev_int(em, sy->hs[HS_STEP_NUM], s);
    xev_int(em, sy->hs[HS_R], 1);
    xev_end(em);
    host_ev(em, sy, HE_INPUT_WAIT, pl->iw0, pl->iw1);
    host_ev(em, sy, HE_NEXT_BATCH, pl->iw0 + 2 * US, pl->iw1 - 2 * US);
    host_ev(em, sy, HE_PIPE_NEXT, pl->iw0 + 4 * US, pl->iw1 - 4 * US);
    host_ev(em, sy, HE_ITER_NEXT, pl->iw0 + 6 * US, pl->iw1 - 12 * US);
    host_ev(em, sy, HE_ASARRAY, pl->iw1 - 10 * US, pl->iw1 - 6 * US);
    host_ev(em, sy, HE_MODEL_WAIT, pl->mw0, pl->mw1);
    host_ev(em, sy, HE_UPDATE, pl->mw0 + 2 * US, pl->update1);
    host_ev(em, sy, HE_SHARD, pl->shard0, pl->shard1);
    host_ev(em, sy, HE_DEVICE_PUT, pl->shard0 + 2 * US, pl->shard1 - 2 * US);
    producer(em, sy, sy->he[HE_BSE_ADD], pl->bse_h2d0, pl->bse_h2d0 + 3 * US, pl->ctx_h2d);
    for (m = 0; m < pl->n_mods; m++) {
        const struct plan_dispatch *d = &pl->disp[m];

        lines_span(em, lines_host_ts(sy), sy->mids[m].h_pjit, d->pjit0, d->pjit1);
        xev_end(em);
        host_ev(em, sy, HE_PARSE_ARGS, d->parse0, d->parse1);
        producer(em, sy, sy->he[HE_EXECUTE], d->exec0, d->exec1, d->ctx);
    }
    host_ev(em, sy, HE_FETCH, pl->fetch0, pl->fetch1);
    host_ev(em, sy, HE_FLOAT, pl->fetch0 + 2 * US, pl->fetch1 - 1 * US);
    host_ev(em, sy, HE_VALUE, pl->fetch0 + 4 * US, pl->fetch1 - 2 * US);
    producer(em, sy, sy->he[HE_BSE_ADD], pl->bse_d2h0, pl->bse_d2h0 + 3 * US, pl->ctx_d2h);
    host_ev(em, sy, HE_LOG, pl->log0, pl->log1);
}

int lines_python(void *ctx, int unused, struct emit *em)
{
    struct synth *sy = ctx;
    int64_t s;

    (void)unused;
    for (s = sy->s_begin; s < sy->s_end && em->err == 0; s++) {
        plan_step(sy, s, &sy->plan);
        python_step(em, sy, &sy->plan, s);
    }
    return em->err;
}

/* Thunks of module m on GPU g, each with its kernel launch. */
static void execute_thunks(struct emit *em, const struct synth *sy, const struct plan *pl, size_t m,
                           int g)
{
    const struct module *mod = &sy->prog.mods[m];
    int64_t ts = lines_host_ts(sy);
    size_t i;

    for (i = 0; i < mod->n_ops; i++) {
        size_t idx = synth_op_index(sy, m, i);
        const struct plan_op *p = plan_op_at(pl, idx, g);
        const struct op_ids *id = &sy->ids[idx];

        lines_span(em, ts, id->h_thunk, p->thunk0, p->thunk1);
        xev_end(em);
        if (mod->ops[i].kind == OP_WAIT)
            continue;
        lines_span(em, ts, id->h_launch, p->launch0, p->launch1);
        xev_uint(em, sy->hs[HS_DEVICE_ID], (uint64_t)g);
        xev_uint(em, sy->hs[HS_CORR], p->corr);
        xev_ref(em, sy->hs[HS_TF_OP], sy->h_xla_ref);
        xev_ref(em, sy->hs[HS_NAME], id->h_scope);
        xev_ref(em, sy->hs[HS_HLO_OP], id->h_hlo);
        xev_ref(em, sy->hs[HS_HLO_MODULE], sy->mids[m].h_module);
        xev_int(em, sy->hs[HS_PROGRAM_ID], mod->program_id);
        xev_end(em);
    }
}

/* One ExecuteHelper of module m on GPU g's execute thread. */
static void execute_module(struct emit *em, const struct synth *sy, const struct plan *pl, size_t m,
                           int g)
{
    const struct plan_exec *e = plan_exec_at(pl, m, g);
    int64_t ts = lines_host_ts(sy);

    host_ev(em, sy, HE_HELPER, e->helper0, e->helper1);
    consumer(em, sy, sy->he[HE_ENQUEUE], e->helper0 + 1 * US, e->enqueue1, pl->disp[m].ctx);
    host_ev(em, sy, HE_SEMAPHORE, e->helper0 + 2 * US, e->helper0 + 3 * US);
    host_ev(em, sy, HE_BUFFERS, e->helper0 + 4 * US, e->buffers1);
    lines_span(em, ts, sy->he[HE_THUNKS], e->thunks0, e->thunks1);
    xev_ref(em, sy->hs[HS_MODULE_NAME], sy->mids[m].h_module);
    xev_end(em);
    lines_span(em, ts, sy->mids[m].h_gpu_module, e->thunks0 + 1 * US, e->thunks1 - 1 * US);
    xev_end(em);
    host_ev(em, sy, HE_PREPARE, e->thunks0 + 2 * US, e->thunks0 + 4 * US);
    host_ev(em, sy, HE_INITIALIZE, e->thunks0 + 5 * US, e->thunks0 + 7 * US);
    host_ev(em, sy, HE_THUNK_EXEC, e->thunks0 + 8 * US, e->thunks1 - 2 * US);
    execute_thunks(em, sy, pl, m, g);
    host_ev(em, sy, HE_CALLBACK, e->callback0, e->callback1);
    host_ev(em, sy, HE_OUTPUTS, e->outputs0, e->outputs1);
}

int lines_execute(void *ctx, int gpu, struct emit *em)
{
    struct synth *sy = ctx;
    int64_t s;
    size_t m;

    for (s = sy->s_begin; s < sy->s_end && em->err == 0; s++) {
        plan_step(sy, s, &sy->plan);
        for (m = 0; m < sy->plan.n_mods; m++)
            execute_module(em, sy, &sy->plan, m, gpu);
    }
    return em->err;
}

/* One BufferSequencingEvent::Execute issuing a copy to or from every GPU. */
static void pool_copies(struct emit *em, const struct synth *sy, int64_t t0, int64_t t1,
                        int64_t ctx, enum host_event what, enum host_event api,
                        const struct plan_copy *c, const int64_t *details)
{
    int g;

    consumer(em, sy, sy->he[HE_BSE_EXEC], t0, t1, ctx);
    host_ev(em, sy, what, t0 + 1 * US, t1 - 1 * US);
    for (g = 0; g < sy->opt->n_gpus; g++) {
        lines_span(em, lines_host_ts(sy), sy->he[api], c[g].launch0, c[g].launch1);
        xev_uint(em, sy->hs[HS_DEVICE_ID], (uint64_t)g);
        xev_uint(em, sy->hs[HS_CORR], c[g].corr);
        xev_ref(em, sy->hs[HS_MEMCPY], details[g]);
        xev_end(em);
    }
}

int lines_pool(void *ctx, int unused, struct emit *em)
{
    struct synth *sy = ctx;
    const struct plan *pl = &sy->plan;
    int64_t s;

    (void)unused;
    for (s = sy->s_begin; s < sy->s_end && em->err == 0; s++) {
        plan_step(sy, s, &sy->plan);
        pool_copies(em, sy, pl->pool_h2d0, pl->pool_h2d1, pl->ctx_h2d, HE_TO_DEVICE, HE_H2D_API,
                    pl->h2d, sy->h2d_ref_h);
        pool_copies(em, sy, pl->pool_d2h0, pl->pool_d2h1, pl->ctx_d2h, HE_TO_HOST, HE_D2H_API,
                    pl->d2h, sy->d2h_ref_h);
    }
    return em->err;
}
