/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The "compiled model" a synthetic profile executes: XLA modules made of ops
 * (fusion kernels, BLAS gemms, all-reduce start/done pairs) with their HLO
 * names, kernel names, JAX name scopes, launch details and base durations.
 */
#ifndef SYNTH_PROGRAM_H
#define SYNTH_PROGRAM_H

#include <stddef.h>
#include <stdint.h>

#include "pool.h"
#include "vendor.h"

enum op_kind {
    OP_FUSION, /* XLA fusion kernel on the compute stream */
    OP_GEMM,   /* BLAS custom-call kernel on the compute stream */
    OP_COLL,   /* all-reduce-start: collective kernel on the collective stream */
    OP_WAIT    /* all-reduce-done: no kernel, later compute waits for the collective */
};

/* One HLO instruction of an entry computation and what executing it looks like. */
struct op {
    enum op_kind kind;       /* what the op does on the device */
    const char *hlo;         /* instruction name, e.g. "loop_add_fusion.3" */
    const char *kernel;      /* device event name; NULL for OP_WAIT */
    const char *scope;       /* JAX name stack ("name" stat, HLO op_name) */
    const char *details;     /* kernel_details; NULL for OP_WAIT */
    const char *opcode;      /* HLO opcode */
    const char *fusion_kind; /* "kLoop"/"kInput" for fusions, else NULL */
    const char *root_opcode; /* opcode of the fused computation root, else NULL */
    const char *launch_api;  /* host API that launches the kernel; NULL for OP_WAIT */
    int64_t dur_ns;          /* base device duration */
    int coll;                /* OP_WAIT: index in the module of its OP_COLL */
    int elem_type;           /* xla.PrimitiveType of the result */
    int n_dims;              /* result rank */
    int64_t dims[4];         /* result dimensions */
    int source_line;         /* line in train.py (HLO metadata) */
};

/* One jitted function: an XLA module run once per step. */
struct module {
    const char *name;   /* module name, e.g. "jit_train_step" */
    const char *fn;     /* Python function, e.g. "train_step" */
    int64_t program_id; /* XLA program id (metadata plane key) */
    struct op *ops;     /* ops in execution order (pool-owned) */
    size_t n_ops;       /* number of ops */
    size_t n_launches;  /* ops with a kernel launch (all but OP_WAIT) */
};

#define PROGRAM_MAX_MODULES 2

struct program {
    struct pool pool;                        /* owns every string and op array */
    struct module mods[PROGRAM_MAX_MODULES]; /* modules in the order a step runs them */
    size_t n_mods;                           /* modules used */
    size_t n_ops;                            /* ops over all modules */
};

enum program_shape {
    PROGRAM_TRAIN,  /* transformer training step + metrics update */
    PROGRAM_TINY,   /* one module of one fusion and one gemm (steps4) */
    PROGRAM_COMPARE /* the same and one more fusion (compare) */
};

/*
 * Builds the program. Durations vary with seed (a model is "compiled" once per
 * seed). Returns 0 or -ENOMEM; on failure the program is released.
 */
int program_build(struct program *pr, enum program_shape shape, const struct vendor *v,
                  uint64_t seed);

/* Frees everything the program owns; accepts a zeroed program. */
void program_release(struct program *pr);

#endif
