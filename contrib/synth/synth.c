/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Generator set-up: builds the program, interns every event and stat name of
 * the /host:CPU and GPU planes (stat names first, then the strings that
 * ref_value stats point to), encodes the planes' metadata maps once, and
 * derives the step period from the worst-case step.
 */
#include "synth.h"

#include "alloc.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "rng.h"

#define US 1000

static const char *const host_event_names[HE_COUNT] = {
    [HE_STEP] = "train_step",
    [HE_INPUT_WAIT] = "input_wait",
    [HE_MODEL_WAIT] = "model_and_wait",
    [HE_NEXT_BATCH] = "$train.py:98 next_batch",
    [HE_PIPE_NEXT] = "$input_pipeline.py:64 __next__",
    [HE_ITER_NEXT] = "$iterator.py:233 _next_internal",
    [HE_ASARRAY] = "$numpy.py:5234 asarray",
    [HE_UPDATE] = "$train.py:141 update",
    [HE_SHARD] = "$train.py:120 shard_batch",
    [HE_DEVICE_PUT] = "$api.py:2530 device_put",
    [HE_BSE_ADD] = "BufferSequencingEvent::ExecuteOrAddToFutureTasks",
    [HE_PARSE_ARGS] = "ParseArguments",
    [HE_EXECUTE] = "PjRtStreamExecutorLoadedExecutable::Execute",
    [HE_FETCH] = "$train.py:152 fetch_metrics",
    [HE_FLOAT] = "$array.py:640 __float__",
    [HE_VALUE] = "$array.py:612 _value",
    [HE_LOG] = "$train.py:171 log_metrics",
    [HE_HELPER] = "PjRtStreamExecutorLoadedExecutable::ExecuteHelper",
    [HE_ENQUEUE] = "PjRtStreamExecutorLoadedExecutable::EnqueueExecution",
    [HE_SEMAPHORE] = "ComputeSemaphoreAcquire",
    [HE_BUFFERS] = "Build buffer allocations",
    [HE_THUNKS] = "GpuExecutable::ExecuteThunks",
    [HE_PREPARE] = "Thunks::Prepare",
    [HE_INITIALIZE] = "Thunks::Initialize",
    [HE_THUNK_EXEC] = "ThunkExecutor::Execute",
    [HE_CALLBACK] = "ThenExecuteCallback",
    [HE_OUTPUTS] = "MakeOutputBuffers",
    [HE_BSE_EXEC] = "BufferSequencingEvent::Execute",
    [HE_TO_DEVICE] = "PjRtStreamExecutorBuffer::CopyToDeviceHelper::async_copy_to_device",
    [HE_TO_HOST] = "PjRtStreamExecutorBuffer::CopyToHostAsync",
    [HE_H2D_API] = NULL, /* vendor API names, filled in tables_host() */
    [HE_D2H_API] = NULL,
};

static const char *const host_stat_names[HS_COUNT] = {
    [HS_STEP_NUM] = "step_num",
    [HS_R] = "_r",
    [HS_PT] = "_pt",
    [HS_P] = "_p",
    [HS_CT] = "_ct",
    [HS_C] = "_c",
    [HS_DEVICE_ID] = "device_id",
    [HS_CORR] = "correlation_id",
    [HS_MEMCPY] = "memcpy_details",
    [HS_TF_OP] = "tf_op",
    [HS_NAME] = "name",
    [HS_HLO_OP] = "hlo_op",
    [HS_HLO_MODULE] = "hlo_module",
    [HS_PROGRAM_ID] = "program_id",
    [HS_MODULE_NAME] = "module_name",
};

static const char *const dev_stat_names[DS_COUNT] = {
    [DS_VENDOR] = "device_vendor",
    [DS_CLOCK] = "clock_rate",
    [DS_CORES] = "core_count",
    [DS_BANDWIDTH] = "memory_bandwidth",
    [DS_MEMORY] = "memory_size",
    [DS_CC_MAJOR] = "compute_cap_major",
    [DS_CC_MINOR] = "compute_cap_minor",
    [DS_CORR] = "correlation_id",
    [DS_KERNEL_DETAILS] = "kernel_details",
    [DS_MEMCPY] = "memcpy_details",
    [DS_TF_OP] = "tf_op",
    [DS_NAME] = "name",
    [DS_HLO_OP] = "hlo_op",
    [DS_HLO_MODULE] = "hlo_module",
    [DS_PROGRAM_ID] = "program_id",
};

/* Bytes of the input batch copied to each GPU, and of the metrics copied back. */
#define H2D_BYTES 8388608
#define D2H_BYTES 16

size_t synth_op_index(const struct synth *sy, size_t m, size_t i)
{
    size_t k, base = 0;

    for (k = 0; k < m; k++)
        base += sy->prog.mods[k].n_ops;
    return base + i;
}

/* Interns the host plane names and records their ids; 0 or -ENOMEM. */
static int tables_host(struct synth *sy)
{
    struct pool *p = &sy->prog.pool;
    size_t m, i, idx = 0;
    int k;

    for (k = 0; k < HE_COUNT; k++) {
        const char *name = host_event_names[k];
        if (k == HE_STEP)
            name = sy->step_name;
        else if (k == HE_H2D_API)
            name = sy->v->memcpy_h2d_api;
        else if (k == HE_D2H_API)
            name = sy->v->memcpy_d2h_api;
        sy->he[k] = strtab_id(&sy->hev, name);
    }
    for (k = 0; k < HS_COUNT; k++)
        sy->hs[k] = strtab_id(&sy->hst, host_stat_names[k]);
    sy->h_xla_ref = strtab_id(&sy->hst, "XlaModule:");
    for (m = 0; m < sy->prog.n_mods; m++) {
        const struct module *mod = &sy->prog.mods[m];
        const char *pjit = pool_printf(p, "PjitFunction(%s)", mod->fn);
        const char *xla = pool_printf(p, "%s:XLA GPU module", mod->name);

        if (pjit == NULL || xla == NULL)
            return -ENOMEM;
        sy->mids[m].h_pjit = strtab_id(&sy->hev, pjit);
        sy->mids[m].h_gpu_module = strtab_id(&sy->hev, xla);
        sy->mids[m].h_module = strtab_id(&sy->hst, mod->name);
        for (i = 0; i < mod->n_ops; i++, idx++) {
            const struct op *op = &mod->ops[i];
            sy->ids[idx].h_thunk = strtab_id(&sy->hev, op->hlo);
            if (op->launch_api != NULL)
                sy->ids[idx].h_launch = strtab_id(&sy->hev, op->launch_api);
            sy->ids[idx].h_hlo = strtab_id(&sy->hst, op->hlo);
            sy->ids[idx].h_scope = strtab_id(&sy->hst, op->scope);
        }
    }
    return 0;
}

/* Interns the GPU plane names and records their ids. */
static void tables_device(struct synth *sy)
{
    size_t m, i, idx = 0;
    int k;

    for (k = 0; k < DS_COUNT; k++)
        sy->ds[k] = strtab_id(&sy->dst, dev_stat_names[k]);
    sy->d_xla_ref = strtab_id(&sy->dst, "XlaModule:");
    sy->de_h2d = strtab_id(&sy->dev, sy->v->memcpy_h2d_dev);
    sy->de_d2h = strtab_id(&sy->dev, sy->v->memcpy_d2h_dev);
    for (m = 0; m < sy->prog.n_mods; m++) {
        const struct module *mod = &sy->prog.mods[m];

        sy->mids[m].d_module = strtab_id(&sy->dst, mod->name);
        for (i = 0; i < mod->n_ops; i++, idx++) {
            const struct op *op = &mod->ops[i];
            if (op->kind == OP_WAIT)
                continue;
            sy->ids[idx].d_kernel = strtab_id(&sy->dev, op->kernel);
            sy->ids[idx].d_details = strtab_id(&sy->dst, op->details);
            sy->ids[idx].d_hlo = strtab_id(&sy->dst, op->hlo);
            sy->ids[idx].d_scope = strtab_id(&sy->dst, op->scope);
        }
    }
}

/* Interns the memcpy_details strings of every GPU's copies; 0 or -ENOMEM. */
static int tables_copies(struct synth *sy)
{
    struct pool *p = &sy->prog.pool;
    int g;

    for (g = 0; g < sy->opt->n_gpus; g++) {
        const char *h2d = vendor_memcpy_details(sy->v, p, H2D_BYTES, g);
        const char *d2h = vendor_memcpy_details(sy->v, p, D2H_BYTES, g);

        if (h2d == NULL || d2h == NULL)
            return -ENOMEM;
        sy->h2d_ref_h[g] = strtab_id(&sy->hst, h2d);
        sy->d2h_ref_h[g] = strtab_id(&sy->hst, d2h);
        sy->h2d_ref_d[g] = strtab_id(&sy->dst, h2d);
        sy->d2h_ref_d[g] = strtab_id(&sy->dst, d2h);
    }
    return 0;
}

/* Encodes the metadata maps and device plane stats; 0 or -ENOMEM. */
static int encode_tails(struct synth *sy)
{
    const struct vendor *v = sy->v;
    struct wbuf *t = &sy->dev_tail;

    strtab_write_event_metadata(&sy->hev, &sy->host_tail);
    strtab_write_stat_metadata(&sy->hst, &sy->host_tail);
    if (sy->opt->alloc_events > 0)
        alloc_tail(&sy->host_tail);
    strtab_write_event_metadata(&sy->dev, t);
    strtab_write_stat_metadata(&sy->dst, t);
    pb_stat_bytes(t, 6, sy->ds[DS_VENDOR], PB_STAT_STR, v->device_vendor, strlen(v->device_vendor));
    pb_stat_varint(t, 6, sy->ds[DS_CLOCK], PB_STAT_INT64, (uint64_t)v->clock_rate_khz);
    pb_stat_varint(t, 6, sy->ds[DS_CORES], PB_STAT_INT64, (uint64_t)v->core_count);
    pb_stat_varint(t, 6, sy->ds[DS_BANDWIDTH], PB_STAT_UINT64, v->memory_bandwidth);
    pb_stat_varint(t, 6, sy->ds[DS_MEMORY], PB_STAT_UINT64, v->memory_size);
    pb_stat_varint(t, 6, sy->ds[DS_CC_MAJOR], PB_STAT_INT64, (uint64_t)v->cc_major);
    pb_stat_varint(t, 6, sy->ds[DS_CC_MINOR], PB_STAT_INT64, (uint64_t)v->cc_minor);
    if (wb_ok(&sy->host_tail) != 0 || wb_ok(t) != 0)
        return -ENOMEM;
    return 0;
}

/* Builds tables, tails and step timing for the training-loop profile. */
static int init_train(struct synth *sy)
{
    int rc;

    sy->ids = pool_alloc(&sy->prog.pool, sy->prog.n_ops * sizeof(*sy->ids));
    if (sy->ids == NULL)
        return -ENOMEM;
    rc = tables_host(sy);
    tables_device(sy);
    if (rc == 0)
        rc = tables_copies(sy);
    if (rc == 0)
        rc = strtab_ok(&sy->hev);
    if (rc == 0)
        rc = strtab_ok(&sy->hst);
    if (rc == 0)
        rc = strtab_ok(&sy->dev);
    if (rc == 0)
        rc = strtab_ok(&sy->dst);
    if (rc == 0)
        rc = encode_tails(sy);
    if (rc == 0)
        rc = plan_init(&sy->plan, sy->prog.n_ops, sy->prog.n_mods, sy->opt->n_gpus);
    if (rc != 0)
        return rc;
    sy->t0_ns = 2000 * US;
    sy->period_ns = plan_worst_step(sy, &sy->plan) + 60 * US;
    return 0;
}

int synth_init(struct synth *sy, const struct synth_opts *opt)
{
    int rc;

    memset(sy, 0, sizeof(*sy));
    sy->opt = opt;
    sy->v = opt->vendor;
    sy->step_name = opt->steps4 ? "learner_step" : "train_step";
    rc = program_build(&sy->prog,
                       opt->compare  ? PROGRAM_COMPARE
                       : opt->steps4 ? PROGRAM_TINY
                                     : PROGRAM_TRAIN,
                       sy->v, opt->seed);
    if (rc == 0 && !opt->steps4)
        rc = init_train(sy);
    if (rc != 0) {
        fprintf(stderr, "xprofs-synth: cannot set up the generator: %s\n", strerror(-rc));
        synth_release(sy);
    }
    return rc;
}

void synth_set_host(struct synth *sy, int h)
{
    uint64_t r = rng_key(sy->opt->seed, (uint64_t)h, 0x746964ULL, 0);
    int g;

    sy->host = h;
    sy->host_key = rng_key(sy->opt->seed, (uint64_t)h, 0x686f7374ULL, 0);
    snprintf(sy->hostname, sizeof(sy->hostname), "synth-host-%d", h);
    sy->tids.python = 1000 + (int64_t)(r % 30000);
    sy->tids.pool = sy->tids.python + 17;
    for (g = 0; g < SYNTH_MAX_GPUS; g++)
        sy->tids.exec[g] = sy->tids.python + 40 + 3 * g;
}

void synth_release(struct synth *sy)
{
    plan_release(&sy->plan);
    strtab_release(&sy->hev);
    strtab_release(&sy->hst);
    strtab_release(&sy->dev);
    strtab_release(&sy->dst);
    wb_release(&sy->host_tail);
    wb_release(&sy->dev_tail);
    program_release(&sy->prog);
    memset(sy, 0, sizeof(*sy));
}
