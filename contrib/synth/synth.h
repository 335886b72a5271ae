/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Shared state of one generator run: options, the program, the per-plane
 * name tables with the metadata ids every line generator needs, the step
 * timing constants and the current host.
 */
#ifndef SYNTH_SYNTH_H
#define SYNTH_SYNTH_H

#include <stdint.h>

#include "plan.h"
#include "program.h"
#include "strtab.h"
#include "vendor.h"
#include "wire.h"

#define SYNTH_MAX_GPUS 64
#define SYNTH_MAX_HOSTS 4096

/* Command-line options. */
struct synth_opts {
    const char *out_dir;     /* LOGDIR */
    const char *run;         /* run (session) directory name */
    double size_mb;          /* target MB per host file, 0 = use n_steps */
    uint64_t seed;           /* PRNG seed */
    int n_hosts;             /* files to write */
    int n_gpus;              /* /device:GPU:<n> planes per host */
    int64_t n_steps;         /* steps when size_mb is 0 */
    int gzip;                /* write .xplane.pb.gz */
    int steps4;              /* --scenario steps4 or compare (the learner_step ones) */
    int compare;             /* --scenario compare: seeded steps, injections below */
    const char *slow_region; /* --slow-region NAME:US: that region US longer */
    int64_t slow_region_us;
    const char *drop_op; /* --drop-op HLO: that op's kernel never runs */
    const char *slow_op; /* --slow-op HLO:F: that op's kernel F times longer */
    int64_t slow_op_factor;
    int64_t cold_first_us;       /* --cold-first-step US: step 0's input_wait US longer */
    const char *plan_path;       /* --plan FILE: the learner_step plan as JSON */
    int tpu;                     /* --scenario tpu, tpu_sc, tpu_raw or tpu_sc_raw */
    int tpu_sc;                  /* --scenario tpu_sc: also SparseCore planes */
    int tpu_raw;                 /* --scenario tpu_raw / tpu_sc_raw: no group_id stats */
    int tpu_grown;               /* tpu or tpu_raw with --steps or --size-mb */
    int tpu_dcn;                 /* --scenario tpu_dcn: tpu with DCN collectives */
    int inference;               /* --scenario inference */
    int counters;                /* --counters v6e|v7x: 0 or 1; -1 none */
    int64_t counter_samples;     /* --counter-samples N: sample lines per TPU core */
    int64_t counter_width;       /* --counter-width W: counters per sample (0: all) */
    int64_t alloc_events;        /* --alloc-events N: allocator events on /host:CPU */
    const struct vendor *vendor; /* name spellings and device caps */
};

/* Host (/host:CPU) event metadata, in table order. */
enum host_event {
    HE_STEP,
    HE_INPUT_WAIT,
    HE_MODEL_WAIT,
    HE_NEXT_BATCH,
    HE_PIPE_NEXT,
    HE_ITER_NEXT,
    HE_ASARRAY,
    HE_UPDATE,
    HE_SHARD,
    HE_DEVICE_PUT,
    HE_BSE_ADD,
    HE_PARSE_ARGS,
    HE_EXECUTE,
    HE_FETCH,
    HE_FLOAT,
    HE_VALUE,
    HE_LOG,
    HE_HELPER,
    HE_ENQUEUE,
    HE_SEMAPHORE,
    HE_BUFFERS,
    HE_THUNKS,
    HE_PREPARE,
    HE_INITIALIZE,
    HE_THUNK_EXEC,
    HE_CALLBACK,
    HE_OUTPUTS,
    HE_BSE_EXEC,
    HE_TO_DEVICE,
    HE_TO_HOST,
    HE_H2D_API,
    HE_D2H_API,
    HE_COUNT
};

/* Host stat metadata, in table order. */
enum host_stat {
    HS_STEP_NUM,
    HS_R,
    HS_PT,
    HS_P,
    HS_CT,
    HS_C,
    HS_DEVICE_ID,
    HS_CORR,
    HS_MEMCPY,
    HS_TF_OP,
    HS_NAME,
    HS_HLO_OP,
    HS_HLO_MODULE,
    HS_PROGRAM_ID,
    HS_MODULE_NAME,
    HS_COUNT
};

/* Device (/device:GPU:<n>) stat metadata, in table order. */
enum dev_stat {
    DS_VENDOR,
    DS_CLOCK,
    DS_CORES,
    DS_BANDWIDTH,
    DS_MEMORY,
    DS_CC_MAJOR,
    DS_CC_MINOR,
    DS_CORR,
    DS_KERNEL_DETAILS,
    DS_MEMCPY,
    DS_TF_OP,
    DS_NAME,
    DS_HLO_OP,
    DS_HLO_MODULE,
    DS_PROGRAM_ID,
    DS_COUNT
};

/* Metadata ids of one op (host ids for the execute thread, device ids for streams). */
struct op_ids {
    int64_t h_thunk;   /* host event: thunk named after the HLO op */
    int64_t h_launch;  /* host event: launch API (0 for waits) */
    int64_t h_hlo;     /* host ref: hlo_op value */
    int64_t h_scope;   /* host ref: name value */
    int64_t d_kernel;  /* device event: kernel name */
    int64_t d_hlo;     /* device ref: hlo_op value */
    int64_t d_scope;   /* device ref: name value */
    int64_t d_details; /* device ref: kernel_details value */
};

/* Metadata ids of one module. */
struct module_ids {
    int64_t h_pjit;       /* host event PjitFunction(<fn>) */
    int64_t h_gpu_module; /* host event "<module>:XLA GPU module" */
    int64_t h_module;     /* host ref: module name */
    int64_t d_module;     /* device ref: module name */
};

/* Thread ids of the host lines. */
struct host_tids {
    int64_t python;               /* main Python thread */
    int64_t pool;                 /* PjRt thread pool thread */
    int64_t exec[SYNTH_MAX_GPUS]; /* one execute thread per GPU */
};

struct synth {
    const struct synth_opts *opt;      /* options (not owned) */
    const struct vendor *v;            /* opt->vendor */
    const char *step_name;             /* "train_step" or "learner_step" */
    struct program prog;               /* modules and ops */
    struct strtab hev, hst, dev, dst;  /* host/device event and stat names */
    int64_t he[HE_COUNT];              /* host event ids */
    int64_t hs[HS_COUNT];              /* host stat ids */
    int64_t ds[DS_COUNT];              /* device stat ids */
    int64_t de_h2d, de_d2h;            /* device event ids of the copies */
    int64_t h_xla_ref, d_xla_ref;      /* ref ids of the tf_op value "XlaModule:" */
    int64_t h2d_ref_h[SYNTH_MAX_GPUS]; /* host ref: memcpy_details of each H2D copy */
    int64_t d2h_ref_h[SYNTH_MAX_GPUS]; /* host ref: memcpy_details of each D2H copy */
    int64_t h2d_ref_d[SYNTH_MAX_GPUS]; /* device ref: same strings on GPU planes */
    int64_t d2h_ref_d[SYNTH_MAX_GPUS]; /* device ref: same strings on GPU planes */
    struct op_ids *ids;                /* per op over all modules (program order) */
    struct module_ids mids[PROGRAM_MAX_MODULES];
    struct wbuf host_tail;  /* /host:CPU metadata maps */
    struct wbuf dev_tail;   /* GPU planes' metadata maps and stats */
    int64_t t0_ns;          /* start of step 0 (ns since profile start) */
    int64_t period_ns;      /* distance between step starts */
    int64_t s_begin, s_end; /* steps written: [s_begin, s_end) */
    int host;               /* current host index */
    uint64_t host_key;      /* hash of (seed, host) for the plan */
    char hostname[64];      /* current host name */
    struct host_tids tids;  /* current host's thread ids */
    struct plan plan;       /* scratch: timeline of one step */
};

/* Index of op i of module m in program-order arrays (ids, plan). */
size_t synth_op_index(const struct synth *sy, size_t m, size_t i);

/*
 * Builds the program, the name tables and the encoded plane tails for opts.
 * Returns 0 or a negative errno (message printed); on failure everything is
 * released.
 */
int synth_init(struct synth *sy, const struct synth_opts *opt);

/* Selects host h: name, thread ids, plan key. */
void synth_set_host(struct synth *sy, int h);

/* Frees everything; accepts a zeroed struct. */
void synth_release(struct synth *sy);

#endif
