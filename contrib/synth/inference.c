/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The inference scenario: a small serving profile with hand-chosen times.
 * Even hosts serve without batching: SessionRun requests (_r = 1, a
 * model_id, a WriteHbm and a ReadHbm inside) and one user-defined root
 * (CustomRequest, _r = -1) whose device work runs on the "XLA Modules" line
 * of /device:TPU:0 (and /device:TPU:1 for one request), linked to the
 * request by a producer/consumer context. Odd hosts batch:
 * BatchingSessionRun requests on two request threads hand their work
 * (context) to a ProcessBatch on a batch thread, which holds the SessionRun
 * with the model_id and the transfers and launches the device module. No
 * event carries group_id: the grouping makes the requests. Times are
 * microseconds after the line timestamp; see README.md.
 */
#include "inference.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "planes.h"
#include "xplane.h"

#define US 1000000    /* ps */
#define TS_NS 1000000 /* timestamp_ns of every line */
#define CTX_DEVICE 7  /* context type: request -> device module */
#define CTX_BATCH 8   /* context type: batching request -> ProcessBatch */

/* Stat metadata ids (every plane uses the same table). */
enum {
    S_R = 1,
    S_MODEL_ID,
    S_PT,
    S_P,
    S_CT,
    S_C,
    S_TASK_SIZE,
    S_PADDING,
    S_BSAP,
    S_SHAPE,
    S_LAYOUT,
    S_THREADS,
    S_MAX_SIZE,
    S_TIMEOUT,
    S_ENQUEUED,
    S_ALLOWED,
    S_COUNT
};
static const char *const stat_names[S_COUNT] = {
    "",
    "_r",
    "model_id",
    "_pt",
    "_p",
    "_ct",
    "_c",
    "batching_input_task_size",
    "padding_amount",
    "batch_size_after_padding",
    "shape",
    "layout",
    "/tensorflow/serving/batching/num_batch_threads{model_name=model_c}",
    "/tensorflow/serving/batching/max_batch_size{model_name=model_c}",
    "/tensorflow/serving/batching/batch_timeout_micros{model_name=model_c, op_name=b}",
    "/tensorflow/serving/batching/max_enqueued_batches{model_name=model_c}",
    "/tensorflow/serving/batching/allowed_batch_sizes{model_name=model_c}",
};

/* Event metadata ids. */
enum {
    E_SESSION_RUN = 1,
    E_WRITE_HBM,
    E_READ_HBM,
    E_BATCHING_RUN,
    E_PROCESS_BATCH,
    E_MODULE,
    E_CUSTOM,
    E_EXECUTE,
    E_LAUNCH,
    E_CALLBACKS,
    E_LINEARIZE,
    E_DELINEARIZE,
    E_SCHEDULE,
    E_CONCAT,
    E_STREAMZ,
    E_COUNT
};
static const char *const event_names[E_COUNT] = {
    "",
    "SessionRun",
    "WriteHbm",
    "ReadHbm",
    "BatchingSessionRun",
    "ProcessBatch",
    "serve(3)",
    "CustomRequest",
    "tpu::System::Execute",
    "DoEnqueueProgram",
    "CompleteCallbacks",
    "Linearize",
    "Delinearize",
    "ScheduleWithoutSplit",
    "ConcatInputTensors",
    "TFStreamz",
};

/* A non-batching request (even hosts); 0/0 spans are absent. */
static const struct plain_req {
    int user_root;          /* 1: a CustomRequest with _r = -1, else SessionRun (_r = 1) */
    const char *model;      /* "" = no model_id stat */
    int64_t run0, run1;     /* SessionRun */
    int64_t write0, write1; /* WriteHbm */
    int64_t read0, read1;   /* ReadHbm */
    int64_t dev0, dev1;     /* module on TPU:0 */
    int64_t dev1_0, dev1_1; /* module on TPU:1 */
} plain[] = {
    {0, "model_a:1", 100, 1100, 150, 250, 750, 850, 300, 700, 0, 0},
    {0, "model_b:2", 1200, 1700, 1210, 1260, 1450, 1550, 1300, 1500, 0, 0},
    {0, "model_a:1", 2000, 4000, 2100, 2300, 3500, 3600, 2400, 3400, 2900, 3450},
    {0, "model_b:2", 4200, 4500, 0, 0, 0, 0, 4250, 4350, 0, 0},
    {0, "", 4600, 5400, 0, 0, 0, 0, 4700, 4800, 0, 0},
    {1, "model_b:2", 5600, 5950, 0, 0, 0, 0, 5650, 5750, 0, 0},
};

/* Host breakdown and tensor events nested in a plain request (0/0 spans are
 * absent; see README.md). */
static const struct plain_extra {
    int64_t lin0, lin1;       /* Linearize */
    const char *shape;        /* its shape stat ("f32[8,128]") */
    int64_t exec0, exec1;     /* tpu::System::Execute */
    int64_t launch0, launch1; /* DoEnqueueProgram */
    int64_t cb0, cb1;         /* CompleteCallbacks */
    int64_t delin0, delin1;   /* Delinearize (same shape) */
} extra[] = {
    {102, 108, "f32[8,128]", 120, 140, 260, 290, 900, 950, 960, 980},
    {1201, 1202, "f32[4]", 1203, 1207, 1270, 1280, 0, 0, 0, 0},
    {2001, 2009, "f32[8,128]", 2010, 2050, 2350, 2380, 3700, 3800, 3900, 3950},
};
#define N_EXTRA (sizeof(extra) / sizeof(extra[0]))
#define N_PLAIN (sizeof(plain) / sizeof(plain[0]))

/* A batch (odd hosts) and the requests it serves. */
static const struct batch {
    int64_t pb0, pb1;       /* ProcessBatch on the batch thread */
    int64_t cat0, cat1;     /* ConcatInputTensors inside it */
    int padding, size;      /* its padding_amount, batch_size_after_padding */
    int64_t run0, run1;     /* SessionRun inside it (model_c:3) */
    int64_t write0, write1; /* WriteHbm (0/0: none) */
    int64_t read0, read1;   /* ReadHbm */
    int64_t dev0, dev1;     /* module on TPU:0 */
} batches[] = {
    {400, 1400, 410, 440, 0, 8, 450, 1350, 500, 600, 1200, 1300, 700, 1100},
    {2100, 2800, 2110, 2140, 2, 4, 2150, 2750, 0, 0, 0, 0, 2300, 2500},
};
#define N_BATCHES (sizeof(batches) / sizeof(batches[0]))

/* BatchingSessionRun requests: thread (0 or 1), span, batch index, the
 * ScheduleWithoutSplit inside and its batching_input_task_size. */
static const struct breq {
    int thread;
    int64_t t0, t1;
    int batch;
    int64_t s0, s1;
    int size;
} breqs[] = {
    {0, 100, 1500, 0, 110, 120, 3},
    {1, 200, 1300, 0, 210, 215, 5},
    {0, 2000, 2600, 1, 2010, 2020, 2},
};
#define N_BREQS (sizeof(breqs) / sizeof(breqs[0]))

static void ev(struct emit *em, int64_t meta, int64_t t0, int64_t t1)
{
    xev_begin(em, meta, t0 * US, (t1 - t0) * US);
}

/* A tensor event with its shape and layout. */
static void tensor_ev(struct emit *em, int64_t meta, int64_t t0, int64_t t1, const char *shape)
{
    ev(em, meta, t0, t1);
    xev_str(em, S_SHAPE, shape);
    xev_str(em, S_LAYOUT, "{1,0}");
    xev_end(em);
}

/* An event without stats, when it has a span. */
static void plain_ev(struct emit *em, int64_t meta, int64_t t0, int64_t t1)
{
    if (t1 > 0) {
        ev(em, meta, t0, t1);
        xev_end(em);
    }
}

/* The events nested in plain request r, in time order: Linearize, Execute,
 * WriteHbm, DoEnqueueProgram, ReadHbm, CompleteCallbacks, Delinearize (x is
 * NULL for the requests with transfers only). */
static void gen_nested(struct emit *em, const struct plain_req *r, const struct plain_extra *x)
{
    if (x != NULL) {
        tensor_ev(em, E_LINEARIZE, x->lin0, x->lin1, x->shape);
        plain_ev(em, E_EXECUTE, x->exec0, x->exec1);
    }
    plain_ev(em, E_WRITE_HBM, r->write0, r->write1);
    if (x != NULL)
        plain_ev(em, E_LAUNCH, x->launch0, x->launch1);
    plain_ev(em, E_READ_HBM, r->read0, r->read1);
    if (x != NULL) {
        plain_ev(em, E_CALLBACKS, x->cb0, x->cb1);
        if (x->delin1 > 0)
            tensor_ev(em, E_DELINEARIZE, x->delin0, x->delin1, x->shape);
    }
}

/* Even hosts: the serving thread. */
static int gen_plain_host(void *ctx, int arg, struct emit *em)
{
    size_t i;

    (void)ctx;
    (void)arg;
    for (i = 0; i < N_PLAIN; i++) {
        const struct plain_req *r = &plain[i];
        ev(em, r->user_root ? E_CUSTOM : E_SESSION_RUN, r->run0, r->run1);
        xev_int(em, S_R, r->user_root ? -1 : 1);
        if (r->model[0] != '\0')
            xev_str(em, S_MODEL_ID, r->model);
        xev_int(em, S_PT, CTX_DEVICE);
        xev_uint(em, S_P, 1 + i);
        xev_end(em);
        gen_nested(em, r, i < N_EXTRA ? &extra[i] : NULL);
    }
    return em->err;
}

/* Even hosts: the module events of TPU core `arg`. */
static int gen_plain_device(void *ctx, int arg, struct emit *em)
{
    size_t i;

    (void)ctx;
    for (i = 0; i < N_PLAIN; i++) {
        const struct plain_req *r = &plain[i];
        int64_t t0 = arg == 0 ? r->dev0 : r->dev1_0, t1 = arg == 0 ? r->dev1 : r->dev1_1;
        if (t1 == 0)
            continue;
        ev(em, E_MODULE, t0, t1);
        xev_int(em, S_CT, CTX_DEVICE);
        xev_uint(em, S_C, 1 + i);
        xev_end(em);
    }
    return em->err;
}

/* Odd hosts: request thread `arg` (0 or 1). */
static int gen_batch_requests(void *ctx, int arg, struct emit *em)
{
    size_t i;

    (void)ctx;
    for (i = 0; i < N_BREQS; i++) {
        if (breqs[i].thread != arg)
            continue;
        ev(em, E_BATCHING_RUN, breqs[i].t0, breqs[i].t1);
        xev_int(em, S_PT, CTX_BATCH);
        xev_uint(em, S_P, 1 + (uint64_t)breqs[i].batch);
        xev_end(em);
        ev(em, E_SCHEDULE, breqs[i].s0, breqs[i].s1);
        xev_int(em, S_TASK_SIZE, breqs[i].size);
        xev_end(em);
    }
    return em->err;
}

/* Odd hosts: the batch thread. */
static int gen_batch_thread(void *ctx, int arg, struct emit *em)
{
    size_t i;

    (void)ctx;
    (void)arg;
    for (i = 0; i < N_BATCHES; i++) {
        const struct batch *b = &batches[i];
        ev(em, E_PROCESS_BATCH, b->pb0, b->pb1);
        xev_int(em, S_CT, CTX_BATCH);
        xev_uint(em, S_C, 1 + i);
        xev_end(em);
        ev(em, E_CONCAT, b->cat0, b->cat1);
        xev_int(em, S_PADDING, b->padding);
        xev_int(em, S_BSAP, b->size);
        xev_end(em);
        ev(em, E_SESSION_RUN, b->run0, b->run1);
        xev_str(em, S_MODEL_ID, "model_c:3");
        xev_int(em, S_PT, CTX_DEVICE);
        xev_uint(em, S_P, 101 + i);
        xev_end(em);
        if (b->write1 > 0) {
            ev(em, E_WRITE_HBM, b->write0, b->write1);
            xev_end(em);
        }
        if (b->read1 > 0) {
            ev(em, E_READ_HBM, b->read0, b->read1);
            xev_end(em);
        }
    }
    return em->err;
}

/* Odd hosts: the module events of TPU:0. */
static int gen_batch_device(void *ctx, int arg, struct emit *em)
{
    size_t i;

    (void)ctx;
    (void)arg;
    for (i = 0; i < N_BATCHES; i++) {
        ev(em, E_MODULE, batches[i].dev0, batches[i].dev1);
        xev_int(em, S_CT, CTX_DEVICE);
        xev_uint(em, S_C, 101 + i);
        xev_end(em);
    }
    return em->err;
}

/* Odd hosts: the two TFStreamz snapshots; the second holds model_c's
 * batching parameters (the first, taken before they are set, none). */
static int gen_streamz(void *ctx, int arg, struct emit *em)
{
    (void)ctx;
    (void)arg;
    ev(em, E_STREAMZ, 0, 1);
    xev_end(em);
    ev(em, E_STREAMZ, 6000, 6001);
    xev_int(em, S_THREADS, 4);
    xev_int(em, S_MAX_SIZE, 8);
    xev_int(em, S_TIMEOUT, 1000);
    xev_int(em, S_ENQUEUED, 16);
    xev_str(em, S_ALLOWED, "4,8");
    xev_end(em);
    return em->err;
}

/* Event and stat metadata of a plane (fields 4 and 5). */
static void metadata_tail(struct wbuf *tail)
{
    int i;

    for (i = 1; i < E_COUNT; i++)
        pb_named_entry(tail, 4, i, event_names[i]);
    for (i = 1; i < S_COUNT; i++)
        pb_named_entry(tail, 5, i, stat_names[i]);
}

int inference_write(struct synth *sy, int h, struct sink *sink)
{
    struct wbuf tail = WBUF_INIT;
    uint64_t bytes = 0;
    int batching = h % 2 == 1, c, rc;

    synth_set_host(sy, h);
    metadata_tail(&tail);
    rc = wb_ok(&tail);
    for (c = 0; rc == 0 && c < (batching ? 1 : 2); c++) {
        char name[32];
        struct xline_desc line = {
            2, "XLA Modules", TS_NS, batching ? gen_batch_device : gen_plain_device, NULL, c};
        struct xplane_desc plane = {c, name, &line, 1, &tail, NULL};
        snprintf(name, sizeof(name), "/device:TPU:%d", c);
        rc = xplane_write(sink, &plane, &bytes);
    }
    if (rc == 0 && batching) {
        struct xline_desc lines[3] = {
            {10, "request_thread_1", TS_NS, gen_batch_requests, NULL, 0},
            {11, "request_thread_2", TS_NS, gen_batch_requests, NULL, 1},
            {12, "batch_thread", TS_NS, gen_batch_thread, NULL, 0},
        };
        struct xline_desc zline = {1, "TFStreamz", TS_NS, gen_streamz, NULL, 0};
        struct xplane_desc cpu = {0, "/host:CPU", lines, 3, &tail, NULL};
        struct xplane_desc streamz = {3, "/host:tfstreamz", &zline, 1, &tail, NULL};
        rc = xplane_write(sink, &cpu, &bytes);
        if (rc == 0)
            rc = xplane_write(sink, &streamz, &bytes);
    } else if (rc == 0) {
        struct xline_desc line = {1, "serving_thread", TS_NS, gen_plain_host, NULL, 0};
        struct xplane_desc cpu = {0, "/host:CPU", &line, 1, &tail, NULL};
        rc = xplane_write(sink, &cpu, &bytes);
    }
    if (rc == 0)
        rc = planes_write_task_env(sink, planes_wall_start(h), planes_wall_start(h) + 6000000,
                                   &bytes);
    if (rc == 0)
        rc = xspace_write_hostname(sink, sy->hostname, &bytes);
    if (rc == -ENOMEM)
        fprintf(stderr, "xprofs-synth: out of memory\n");
    wb_release(&tail);
    return rc;
}
