/*
 * compare.h - one run against another (compare.md, compare.json and the
 * compare_*.csv files; docs/compare.md). The run asked for is "run", the
 * run named by ?base= is "base"; a delta is run minus base.
 *
 * Definitions:
 *   steps     the step annotation's occurrences of every host (steps.csv's
 *             depth-0 rows); step time = their inclusive time. The test of a
 *             change is Mann-Whitney's U (two-sided, normal approximation
 *             with tie and continuity corrections) of the two runs' step
 *             times; significant when p < 0.05.
 *   per step  a run's total divided by its step count (the steps of its
 *             host with the most steps; 1 when it has none, with a warning)
 *   regions   regions.csv's rows of each run matched by name: median
 *             inclusive and self time, and self time per step, whose deltas
 *             add up to the mean step time's delta; a region's share of the
 *             step-time change is its self-per-step delta over that delta
 *   ops       xplane runs: HLO ops (op_stats' device rows, IDLE left out,
 *             matched by name) and framework ops (framework_op_stats.json's
 *             device rows); PyTorch runs: CPU ops by the GPU time of the
 *             kernels they launch (kernel_launchers_summary.csv); time per
 *             step, its delta, and share of change = delta over the sum of
 *             the deltas of the same kind; "added" / "removed" when only one
 *             run has it
 *   kernels   kernel_stats' kernels (xplane; by name and op) or the kernel
 *             events by name (PyTorch), the same way
 *   gpus      per device (the i-th host of each run, by device name): busy,
 *             idle, exposed communication and memcpy (gpu_timeline.csv)
 */
#ifndef XPROFS_COMPARE_H
#define XPROFS_COMPARE_H

#include <stdint.h>

#include "base/mann_whitney.h"
#include "region_stats.h"
#include "run_numbers.h"
#include "tool.h"
#include "tracelens/pt_launchers.h"

#define COMPARE_ALPHA 0.05
#define COMPARE_MIN_STEPS 3

/* A named time of one run: an op or a kernel. */
struct cmp_item {
    const char *kind;   /* "hlo_op", "framework_op", "cpu_op", "kernel" */
    const char *name;   /* op or kernel name (owned by the run) */
    const char *detail; /* category, or a kernel's op; "" when none */
    double total_us;    /* its time over the run */
    double count;       /* its occurrences over the run */
};

/* The numbers of one side. */
struct cmp_run {
    const char *name;        /* run name as the mount shows it */
    struct snapshot *snap;   /* the run */
    const char *kind;        /* "xplane", "pytorch_trace", "chrome_trace" */
    const char *device_type; /* op_stats' device type; "" when none */
    const char *step_name;   /* the first host's step annotation, NULL if none */
    int64_t *step_ps;        /* every step's time */
    uint32_t nsteps;         /* entries in step_ps */
    uint32_t steps_per_host; /* steps of the host with the most */
    double per_step;         /* the divisor of per-step times (>= 1) */
    struct stat5 step_us;    /* step time in µs */
    struct region_stat *regions;
    uint64_t nregions;
    struct cmp_item *ops, *kernels;
    size_t nops, nkernels;
    struct run_gpu *gpus;
    int ngpus;
    struct run_fw_op *fw; /* owns the framework ops' names */
    uint32_t nfw;
    struct run_kernel *xk;        /* owns nothing; kernels point into op_stats */
    struct run_pt_kernel *ptk;    /* PyTorch kernels */
    struct pt_summary pt_ops;     /* PyTorch CPU ops */
    struct run_warnings warnings; /* what failed while gathering */
};

/* One matched row of both runs. */
struct cmp_row {
    const char *kind, *name, *detail;
    double base_us, run_us;       /* per step */
    double base_count, run_count; /* per step */
    double delta_us;              /* run_us - base_us */
    double share;                 /* of the kind's total delta; NAN if that is 0 */
    const char *status;           /* "both", "added", "removed" */
};

struct cmp_region {
    const struct region_stat *base, *run; /* either may be NULL */
    const char *name;
    uint32_t min_depth;
    double base_self_per_step, run_self_per_step; /* µs */
    double share; /* self-per-step delta over the mean step delta; NAN if none */
    const char *status;
};

struct cmp_gpu {
    const struct run_gpu *base, *run; /* either may be NULL */
    const char *status;
};

struct compare {
    struct cmp_run base, run;
    int tested;          /* 1: both have steps, mw holds the test */
    struct mw_result mw; /* the test */
    double median_delta_us, median_ratio, mean_delta_us;
    struct cmp_region *regions;
    size_t nregions;
    const struct cmp_region *most; /* the region (depth >= 1) of largest |self delta| */
    struct cmp_row *ops, *kernels;
    size_t nops, nkernels;
    struct cmp_gpu *gpus;
    size_t ngpus;
    struct run_warnings warnings; /* why the runs may not be comparable */
};

/* compare_run.c: the numbers of snap (run name) into *r; 0 or -ENOMEM. */
int cmp_run_gather(struct snapshot *snap, struct cmp_run *r);
/* The order of a run's ops and kernels (kind, name, a kernel's op), in which
 * items of one key are one item. */
int cmp_item_order(const struct cmp_item *a, const struct cmp_item *b);
void cmp_run_free(struct cmp_run *r);

/* compare_diff.c: match c->base and c->run; 0 or -ENOMEM. */
int cmp_diff(struct compare *c);
void cmp_diff_free(struct compare *c);

/* The verdict on step time in one sentence into buf (compare_diff.c). */
void cmp_verdict(const struct compare *c, char *buf, size_t n);

/* compare_write.c and compare_csv.c: the files. */
void cmp_write_md(struct out *o, const struct compare *c);
void cmp_write_json(struct out *o, const struct compare *c);
void cmp_write_steps_csv(struct out *o, const struct compare *c);
void cmp_write_ops_csv(struct out *o, const struct compare *c);
void cmp_write_kernels_csv(struct out *o, const struct compare *c);
void cmp_write_gpus_csv(struct out *o, const struct compare *c);

#endif
