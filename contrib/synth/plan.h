/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Timeline of one training step on one host: when every host event starts
 * and ends and when every launch runs on each GPU. All times are ns since the
 * profile start. A step depends only on (seed, host, step), so each line
 * generator recomputes the steps it writes, in any order.
 */
#ifndef SYNTH_PLAN_H
#define SYNTH_PLAN_H

#include <stddef.h>
#include <stdint.h>

struct synth;

/* One op on one GPU: host thunk and launch on the execute thread, device run. */
struct plan_op {
    int64_t thunk0, thunk1;   /* thunk event on the execute thread */
    int64_t launch0, launch1; /* launch API call inside it (unused for waits) */
    int64_t dev0, dev1;       /* kernel on its stream (unused for waits) */
    uint64_t corr;            /* correlation id of the launch and the kernel */
};

/* A host-to-device or device-to-host copy of one GPU. */
struct plan_copy {
    int64_t launch0, launch1; /* API call on the thread pool line */
    int64_t dev0, dev1;       /* copy on the memcpy stream */
    uint64_t corr;            /* correlation id */
};

/* Dispatch of one module from Python: PjitFunction(...) and its children. */
struct plan_dispatch {
    int64_t pjit0, pjit1;   /* PjitFunction(fn) */
    int64_t parse0, parse1; /* ParseArguments */
    int64_t exec0, exec1;   /* PjRtStreamExecutorLoadedExecutable::Execute */
    int64_t ctx;            /* _p / _c context id linking it to the execute threads */
};

/* One module on one GPU's execute thread. */
struct plan_exec {
    int64_t helper0, helper1;     /* ExecuteHelper */
    int64_t enqueue1;             /* EnqueueExecution ends (starts at helper0 + 1 us) */
    int64_t buffers1;             /* Build buffer allocations ends */
    int64_t thunks0, thunks1;     /* GpuExecutable::ExecuteThunks */
    int64_t callback0, callback1; /* ThenExecuteCallback */
    int64_t outputs0, outputs1;   /* MakeOutputBuffers */
};

struct plan {
    int n_gpus;                   /* GPUs per host */
    size_t n_ops;                 /* ops over all modules */
    size_t n_mods;                /* modules */
    int64_t step0, step1;         /* the step annotation */
    int64_t iw0, iw1;             /* input_wait */
    int64_t mw0, mw1;             /* model_and_wait */
    int64_t update1;              /* Python update() call, starts at mw0 + 2 us */
    int64_t shard0, shard1;       /* shard_batch (device_put inside) */
    int64_t bse_h2d0;             /* ExecuteOrAddToFutureTasks for the input copy (3 us) */
    int64_t fetch0, fetch1;       /* fetch_metrics (__float__, _value inside) */
    int64_t bse_d2h0;             /* ExecuteOrAddToFutureTasks for the metrics copy */
    int64_t log0, log1;           /* log_metrics after the step */
    int64_t pool_h2d0, pool_h2d1; /* BufferSequencingEvent::Execute of the input copy */
    int64_t pool_d2h0, pool_d2h1; /* same for the metrics copy */
    int64_t ctx_h2d, ctx_d2h;     /* _p / _c context ids of the copies */
    struct plan_dispatch *disp;   /* [n_mods] */
    struct plan_exec *exec;       /* [n_mods * n_gpus], module-major */
    struct plan_op *ops;          /* [n_ops * n_gpus], op-major */
    struct plan_copy *h2d;        /* [n_gpus] */
    struct plan_copy *d2h;        /* [n_gpus] */
    int cached;                   /* 1: the fields hold step cached_step of cached_key */
    int64_t cached_step;          /* step last computed by plan_step() */
    uint64_t cached_key;          /* host key it was computed for */
};

/* Allocates the arrays for the synth's program and GPU count; 0 or -ENOMEM. */
int plan_init(struct plan *pl, size_t n_ops, size_t n_mods, int n_gpus);

/* Frees the arrays; accepts a zeroed plan. */
void plan_release(struct plan *pl);

/* Fills pl with step s of the current host (nothing to do if pl already holds it). */
void plan_step(const struct synth *sy, int64_t s, struct plan *pl);

/*
 * Longest time a step can take from its start to the end of its last host
 * event (every random choice at its maximum); the step period derives from it.
 */
int64_t plan_worst_step(const struct synth *sy, struct plan *pl);

/* Plan entry of op `op` (program order) on GPU g. */
struct plan_op *plan_op_at(const struct plan *pl, size_t op, int g);

/* Plan entry of module m on GPU g. */
struct plan_exec *plan_exec_at(const struct plan *pl, size_t m, int g);

#endif
