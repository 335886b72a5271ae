/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The learner_step scenarios (steps4, compare). Thread 1 ("python3") holds
 * the learner_step steps, each with input_wait then model_and_wait; inside
 * model_and_wait a PjitFunction(learner_step) hands work (_p/_c) to thread
 * 2, whose ExecuteHelper launches one kernel per op, run on /device:GPU:0.
 * Every time comes from the scenario's plan (learner_plan.h, README.md).
 */
#include "steps4.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "learner_plan.h"
#include "lines.h"
#include "planes.h"
#include "xplane.h"

#define US 1000
#define HOST_TS_NS 50000   /* timestamp_ns of both host lines */
#define DEVICE_TS_NS 60000 /* timestamp_ns of the GPU stream line */
#define CONTEXT_PJRT 5

/* Op i's thunk on thread 2 starts this long after model_and_wait (20 us;
 * its launch at +5 us, 10 us). */
#define THUNK_US(i) (40 + 30 * (int64_t)(i))

/* Host stat names (ids 1..13 in this order). */
enum {
    S_STEP_NUM = 1,
    S_R,
    S_PT,
    S_P,
    S_CT,
    S_C,
    S_DEVICE_ID,
    S_CORR,
    S_TF_OP,
    S_NAME,
    S_HLO_OP,
    S_HLO_MODULE,
    S_PROGRAM_ID
};
static const char *const host_stats[] = {
    "step_num",       "_r",    "_pt",  "_p",     "_ct",        "_c",        "device_id",
    "correlation_id", "tf_op", "name", "hlo_op", "hlo_module", "program_id"};

/* Device stat names (ids 1..14: 7 plane stats, then the kernel stats). */
enum {
    D_VENDOR = 1,
    D_CLOCK,
    D_CORES,
    D_BANDWIDTH,
    D_MEMORY,
    D_CC_MAJOR,
    D_CC_MINOR,
    D_CORR,
    D_DETAILS,
    D_TF_OP,
    D_NAME,
    D_HLO_OP,
    D_HLO_MODULE,
    D_PROGRAM_ID
};
static const char *const dev_stats[] = {"device_vendor",
                                        "clock_rate",
                                        "core_count",
                                        "memory_bandwidth",
                                        "memory_size",
                                        "compute_cap_major",
                                        "compute_cap_minor",
                                        "correlation_id",
                                        "kernel_details",
                                        "tf_op",
                                        "name",
                                        "hlo_op",
                                        "hlo_module",
                                        "program_id"};

/* Metadata tables and ids of the scenario. */
struct s4 {
    struct synth *sy;                 /* tiny program and vendor */
    struct learner_plan plan;         /* every time */
    struct strtab hev, hst, dev, dst; /* host/device event and stat names */
    int64_t e_step, e_input, e_model, e_pjit, e_execute, e_helper;
    int64_t e_thunk[LEARNER_MAX_OPS], e_launch[LEARNER_MAX_OPS]; /* host events per op */
    int64_t h_xla, h_module;                                     /* host refs */
    int64_t h_hlo[LEARNER_MAX_OPS], h_scope[LEARNER_MAX_OPS];    /* host refs per op */
    int64_t d_kernel[LEARNER_MAX_OPS];                           /* device events per op */
    int64_t d_xla, d_module;                                     /* device refs */
    int64_t d_hlo[LEARNER_MAX_OPS], d_scope[LEARNER_MAX_OPS];    /* device refs per op */
    int64_t d_details[LEARNER_MAX_OPS];
};

/* Interns every name (stat names first, in enum order); 0 or -ENOMEM. */
static int s4_tables(struct s4 *t)
{
    const struct module *m = &t->sy->prog.mods[0];
    char pjit[64];
    size_t i;

    for (i = 0; i < sizeof(host_stats) / sizeof(host_stats[0]); i++)
        strtab_id(&t->hst, host_stats[i]);
    for (i = 0; i < sizeof(dev_stats) / sizeof(dev_stats[0]); i++)
        strtab_id(&t->dst, dev_stats[i]);
    snprintf(pjit, sizeof(pjit), "PjitFunction(%s)", m->fn);
    t->e_step = strtab_id(&t->hev, "learner_step");
    t->e_input = strtab_id(&t->hev, "input_wait");
    t->e_model = strtab_id(&t->hev, "model_and_wait");
    t->e_pjit = strtab_id(&t->hev, pjit);
    t->e_execute = strtab_id(&t->hev, "PjRtStreamExecutorLoadedExecutable::Execute");
    t->e_helper = strtab_id(&t->hev, "PjRtStreamExecutorLoadedExecutable::ExecuteHelper");
    t->h_xla = strtab_id(&t->hst, "XlaModule:");
    t->h_module = strtab_id(&t->hst, m->name);
    t->d_xla = strtab_id(&t->dst, "XlaModule:");
    t->d_module = strtab_id(&t->dst, m->name);
    for (i = 0; i < (size_t)t->plan.nops; i++) {
        const struct op *op = &m->ops[i];

        t->e_thunk[i] = strtab_id(&t->hev, op->hlo);
        t->e_launch[i] = strtab_id(&t->hev, op->launch_api);
        t->h_hlo[i] = strtab_id(&t->hst, op->hlo);
        t->h_scope[i] = strtab_id(&t->hst, op->scope);
        t->d_kernel[i] = strtab_id(&t->dev, op->kernel);
        t->d_hlo[i] = strtab_id(&t->dst, op->hlo);
        t->d_scope[i] = strtab_id(&t->dst, op->scope);
        t->d_details[i] = strtab_id(&t->dst, op->details);
    }
    if (strtab_ok(&t->hev) || strtab_ok(&t->hst) || strtab_ok(&t->dev) || strtab_ok(&t->dst))
        return -ENOMEM;
    return 0;
}

/* Event [t0, t1) in microseconds since the profile start, on a line at ts_ns. */
static void span_us(struct emit *em, int64_t ts_ns, int64_t meta, int64_t t0, int64_t t1)
{
    lines_span(em, ts_ns, meta, t0 * US, t1 * US);
}

/* Thread 1: the steps and the dispatch inside model_and_wait. */
static int s4_python(void *ctx, int unused, struct emit *em)
{
    const struct s4 *t = ctx;
    int64_t k;

    (void)unused;
    for (k = 0; k < t->plan.nsteps; k++) {
        const struct learner_step *s = &t->plan.steps[k];

        span_us(em, HOST_TS_NS, t->e_step, s->step0, s->step1);
        xev_int(em, S_STEP_NUM, k);
        xev_int(em, S_R, 1);
        xev_end(em);
        span_us(em, HOST_TS_NS, t->e_input, s->iw0, s->iw1);
        xev_end(em);
        span_us(em, HOST_TS_NS, t->e_model, s->mw0, s->mw1);
        xev_end(em);
        span_us(em, HOST_TS_NS, t->e_pjit, s->mw0 + 5, s->mw0 + 25);
        xev_end(em);
        span_us(em, HOST_TS_NS, t->e_execute, s->mw0 + 10, s->mw0 + 20);
        xev_int(em, S_PT, CONTEXT_PJRT);
        xev_int(em, S_P, k + 1);
        xev_end(em);
    }
    return em->err;
}

/* The correlation id of op i's launch and kernel in step k. */
static uint64_t s4_correlation(const struct s4 *t, int64_t k, int i)
{
    return (uint64_t)(t->plan.nops * k + 1 + i);
}

/* Thunk and launch on thread 2 of op i of step k. */
static void s4_launch(const struct s4 *t, struct emit *em, int64_t k, int i)
{
    int64_t t0 = t->plan.steps[k].mw0 + THUNK_US(i);

    span_us(em, HOST_TS_NS, t->e_thunk[i], t0, t0 + 20);
    xev_end(em);
    span_us(em, HOST_TS_NS, t->e_launch[i], t0 + 5, t0 + 15);
    xev_uint(em, S_DEVICE_ID, 0);
    xev_uint(em, S_CORR, s4_correlation(t, k, i));
    xev_ref(em, S_TF_OP, t->h_xla);
    xev_ref(em, S_NAME, t->h_scope[i]);
    xev_ref(em, S_HLO_OP, t->h_hlo[i]);
    xev_ref(em, S_HLO_MODULE, t->h_module);
    xev_int(em, S_PROGRAM_ID, t->sy->prog.mods[0].program_id);
    xev_end(em);
}

/* Thread 2: one ExecuteHelper per step, consuming the step's context. */
static int s4_execute(void *ctx, int unused, struct emit *em)
{
    const struct s4 *t = ctx;
    int64_t k, mw0;
    int i;

    (void)unused;
    for (k = 0; k < t->plan.nsteps; k++) {
        mw0 = t->plan.steps[k].mw0;
        span_us(em, HOST_TS_NS, t->e_helper, mw0 + 30, mw0 + 70 + 30 * t->plan.nops);
        xev_int(em, S_CT, CONTEXT_PJRT);
        xev_int(em, S_C, k + 1);
        xev_end(em);
        for (i = 0; i < t->plan.nops; i++) {
            if (t->plan.steps[k].kernel_us[i] > 0)
                s4_launch(t, em, k, i);
        }
    }
    return em->err;
}

/* GPU stream: the fusion and the gemm kernel of every step. */
static int s4_gpu(void *ctx, int unused, struct emit *em)
{
    const struct s4 *t = ctx;
    int64_t k;
    int i;

    (void)unused;
    for (k = 0; k < t->plan.nsteps; k++) {
        for (i = 0; i < t->plan.nops; i++) {
            const struct learner_step *st = &t->plan.steps[k];
            if (st->kernel_us[i] == 0)
                continue;
            span_us(em, DEVICE_TS_NS, t->d_kernel[i], st->kernel0[i],
                    st->kernel0[i] + st->kernel_us[i]);
            xev_uint(em, D_CORR, s4_correlation(t, k, i));
            xev_ref(em, D_DETAILS, t->d_details[i]);
            xev_ref(em, D_TF_OP, t->d_xla);
            xev_ref(em, D_NAME, t->d_scope[i]);
            xev_ref(em, D_HLO_OP, t->d_hlo[i]);
            xev_ref(em, D_HLO_MODULE, t->d_module);
            xev_int(em, D_PROGRAM_ID, t->sy->prog.mods[0].program_id);
            xev_end(em);
        }
    }
    return em->err;
}

/* Encodes the GPU plane tail: metadata maps and the vendor's device caps. */
static void s4_device_tail(const struct s4 *t, struct wbuf *tail)
{
    const struct vendor *v = t->sy->v;

    strtab_write_event_metadata(&t->dev, tail);
    strtab_write_stat_metadata(&t->dst, tail);
    pb_stat_bytes(tail, 6, D_VENDOR, PB_STAT_STR, v->device_vendor, strlen(v->device_vendor));
    pb_stat_varint(tail, 6, D_CLOCK, PB_STAT_INT64, (uint64_t)v->clock_rate_khz);
    pb_stat_varint(tail, 6, D_CORES, PB_STAT_INT64, (uint64_t)v->core_count);
    pb_stat_varint(tail, 6, D_BANDWIDTH, PB_STAT_UINT64, v->memory_bandwidth);
    pb_stat_varint(tail, 6, D_MEMORY, PB_STAT_UINT64, v->memory_size);
    pb_stat_varint(tail, 6, D_CC_MAJOR, PB_STAT_INT64, (uint64_t)v->cc_major);
    pb_stat_varint(tail, 6, D_CC_MINOR, PB_STAT_INT64, (uint64_t)v->cc_minor);
}

/* Writes every plane of the scenario in the corpus' order. */
static int s4_planes(struct s4 *t, struct sink *sink, const char *host, uint64_t start)
{
    struct wbuf htail = WBUF_INIT, dtail = WBUF_INIT;
    char stream[32];
    struct xline_desc gpu_line = {7, stream, DEVICE_TS_NS, s4_gpu, t, 0};
    struct xline_desc host_lines[2] = {
        {1, "python3", HOST_TS_NS, s4_python, t, 0},
        {2, "py_xla_execute/2", HOST_TS_NS, s4_execute, t, 0},
    };
    struct xplane_desc gpu = {0, "/device:GPU:0", &gpu_line, 1, &dtail, NULL};
    struct xplane_desc cpu = {0, "/host:CPU", host_lines, 2, &htail, NULL};
    uint64_t bytes = 0;
    int rc;

    snprintf(stream, sizeof(stream), "Stream #7(%s)", t->sy->v->compute_stream);
    strtab_write_event_metadata(&t->hev, &htail);
    strtab_write_stat_metadata(&t->hst, &htail);
    s4_device_tail(t, &dtail);
    rc = wb_ok(&htail);
    if (rc == 0)
        rc = wb_ok(&dtail);
    if (rc == 0)
        rc = planes_write_metadata(sink, &t->sy->prog, &bytes);
    if (rc == 0)
        rc = xplane_write(sink, &gpu, &bytes);
    if (rc == 0)
        rc = xplane_write(sink, &cpu, &bytes);
    if (rc == 0)
        rc = planes_write_task_env(sink, start, start + (uint64_t)t->plan.stop_us * US, &bytes);
    if (rc == 0)
        rc = xspace_write_hostname(sink, host, &bytes);
    wb_release(&htail);
    wb_release(&dtail);
    return rc;
}

int steps4_write(struct synth *sy, int h, struct sink *sink)
{
    struct s4 t;
    int rc;

    memset(&t, 0, sizeof(t));
    t.sy = sy;
    synth_set_host(sy, h);
    rc = learner_plan_build(&t.plan, sy->opt, &sy->prog);
    if (rc == 0)
        rc = s4_tables(&t);
    if (rc == 0)
        rc = s4_planes(&t, sink, sy->hostname, planes_wall_start(h));
    if (rc == -ENOMEM)
        fprintf(stderr, "xprofs-synth: out of memory\n");
    strtab_release(&t.hev);
    strtab_release(&t.hst);
    strtab_release(&t.dev);
    strtab_release(&t.dst);
    learner_plan_release(&t.plan);
    return rc;
}
