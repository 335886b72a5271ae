/*
 * run_numbers.h - numbers of one run that more than one file shows:
 * summary statistics of a sample, the GPUs' busy and idle times, the
 * framework ops and kernels by time, and a bounded list of warnings.
 * report.* shows one run's; compare.* two runs' side by side.
 */
#ifndef XPROFS_RUN_NUMBERS_H
#define XPROFS_RUN_NUMBERS_H

#include <stdint.h>

#include "op_stats/op_stats.h"
#include "session/session.h"

/* Summary statistics of a sample. */
struct stat5 {
    uint32_t n;
    double median, p90, min, max, mean;
};

/* The summary of the times ps[0..n) (sorted in place) in units of unit_ps
 * (1e9: ms, 1e6: µs); the median and p90 as numpy.percentile. */
void stat5_of(int64_t *ps, uint32_t n, double unit_ps, struct stat5 *s);

#define RUN_MAX_WARNINGS 16

/* Warnings, at most RUN_MAX_WARNINGS (later ones are dropped). */
struct run_warnings {
    char msg[RUN_MAX_WARNINGS][512];
    int n;
};

void run_warn(struct run_warnings *w, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* One GPU of a host (gpu_timeline.csv, TraceLens's definitions). */
struct run_gpu {
    const char *host, *device; /* the snapshot's */
    double busy_us, idle_us, total_us, exposed_comm_us, exposed_memcpy_us;
};

/* The GPUs of hosts[0..nhosts) of snap appended to *v (realloc'd) and *n;
 * a host whose timeline fails is a warning. 0 or -ENOMEM. */
int run_gpus(struct snapshot *snap, const char *const *hosts, int nhosts, struct run_gpu **v,
             int *n, struct run_warnings *w);

/* A framework op of op_stats' device time (framework_op_stats.json's device
 * rows): copies of its names (free with run_fw_ops_free). */
struct run_fw_op {
    char *name, *category;
    uint64_t occurrences;
    double self_us, share_pct, gflops_per_s;
};

/* Every framework op but IDLE, most self time first (then as op_db_sorted
 * orders them), into *v and *n. 0 or -ENOMEM. */
int run_fw_ops(const struct op_stats *os, struct run_fw_op **v, uint32_t *n);
void run_fw_ops_free(struct run_fw_op *v, uint32_t n);

/* A kernel of op_stats (kernel_stats.json): each host's report of a kernel
 * and op added up. Names point into os. */
struct run_kernel {
    const char *name, *op;
    uint64_t occurrences;
    double total_us, share_pct;
    int tensor_core;
};

/* Every kernel of os, longest total first, then name, into *v (free) and *n. */
int run_xp_kernels(const struct op_stats *os, struct run_kernel **v, uint32_t *n);

/* A kernel name of a Chrome trace (PyTorch): its "kernel" events on every
 * host. */
struct run_pt_kernel {
    const char *name; /* owned by the snapshot's trace */
    int host;         /* first host it was seen on (the order of sums) */
    uint64_t occurrences;
    double total_us, max_us, share_pct;
};

/* Every kernel name of the PyTorch traces of hosts[0..nhosts), longest
 * total first, then name, with share_pct of all kernel time, into *v (free)
 * and *n; a host whose trace fails is a warning. 0 or -ENOMEM. */
int run_pt_kernels(struct snapshot *snap, const char *const *hosts, int nhosts,
                   struct run_pt_kernel **v, size_t *n, struct run_warnings *w);

#endif
