/*
 * gpu_timeline.h - TraceLens's GPU timeline: per device, unions of the GPU
 * event intervals by class (computation, communication, memcpy) and the
 * exposed / busy / idle times derived from them.
 *
 * Sources, per host:
 *   - an .xplane.pb: every /device:GPU:N plane is a device with TraceLens's
 *     gpu_pid = 1 + plane id (1 when that exceeds 500); its events on lines
 *     named "Stream #..." count; classified by name (JAX rules);
 *   - a JAX Chrome trace: processes named "/device:GPU..." are devices, events
 *     on threads named "Stream #..." count (same JAX rules);
 *   - a PyTorch trace: one timeline over all kernel / gpu_memcpy / gpu_memset
 *     events that a runtime launch reaches (TraceLens's tree linking), with
 *     the PyTorch rules (ROCm legacy copy kernels are memcpy, memsets are
 *     computation).
 * Times are microseconds as doubles, computed in the same order as TraceLens's
 * Python so results agree to the last bit where the inputs do.
 */
#ifndef XPROFS_GPU_TIMELINE_H
#define XPROFS_GPU_TIMELINE_H

#include <stddef.h>
#include <stdint.h>

#include "base/err.h"
#include "session/session.h"

/* An interval [start, end] in µs. */
struct gt_interval {
    double start;
    double end;
};

enum gt_class {
    GT_COMPUTATION,
    GT_COMMUNICATION,
    GT_MEMCPY,
};

/* The metrics in TraceLens's row order. */
enum gt_metric {
    GT_COMPUTATION_TIME,
    GT_EXPOSED_COMM_TIME,
    GT_EXPOSED_MEMCPY_TIME,
    GT_BUSY_TIME,
    GT_IDLE_TIME,
    GT_TOTAL_TIME,
    GT_TOTAL_COMM_TIME,
    GT_TOTAL_MEMCPY_TIME,
    GT_NMETRICS
};

/* Row names ("computation_time", ...). */
extern const char *const gt_metric_names[GT_NMETRICS];

struct gt_device {
    int64_t gpu_pid;            /* TraceLens's pid of the device; -1 for PyTorch */
    char *name;                 /* "/device:GPU:7", or "all GPUs" (PyTorch) */
    uint64_t nevents;           /* events that counted */
    double metric[GT_NMETRICS]; /* µs */
};

/* The timeline of one host. Devices are in TraceLens's output order (the
 * iteration order of the Python set of GPU pids). */
struct gt_host {
    int pytorch;               /* 1: PyTorch rules (one device, no gpu_pid) */
    struct gt_device *devices; /* entries */
    uint32_t ndevices;         /* count */
};

/* (gt_intervals.c) Interval algebra, exactly TraceLens's (touching intervals
 * merge). */

/* Sort v[0..n) by start and merge in place; returns the merged count. */
size_t gt_merge(struct gt_interval *v, size_t n);

/* The parts of b (merged) not covered by a (merged) into out (room for
 * na + nb entries); returns the count. */
size_t gt_subtract(const struct gt_interval *a, size_t na, const struct gt_interval *b, size_t nb,
                   struct gt_interval *out);

/* Σ (end - start), summed left to right as Python's sum() does. */
double gt_length(const struct gt_interval *v, size_t n);

/* The metrics from the intervals of each class (each array is sorted and
 * merged in place). Returns 0, or -EINVAL when there are no intervals. */
int gt_metrics(struct gt_interval *cls[3], size_t ncls[3], double metric[GT_NMETRICS]);

/* (gt_classify.c) Classify a GPU event name by the JAX rules / the PyTorch
 * rules (cat is "kernel", "gpu_memcpy" or "gpu_memset"). */
enum gt_class gt_classify_jax(const char *name);
enum gt_class gt_classify_pytorch(const char *cat, const char *name);

/* 1 if name holds nccl / rccl / cross_device_reduce (any case). */
int gt_is_communication(const char *name);

/* (gt_devices.c) The order in which CPython iterates a set of small
 * non-negative integers inserted in order v[0..n) (duplicates ignored): writes
 * it into out (room for n) and returns its length. */
size_t gt_pyset_order(const int64_t *v, size_t n, int64_t *out);

struct ctrace;

/* (gt_pt_links.c) PyTorch linking (TraceLens's Trace2Tree): *parentp[i] =
 * index of the cuda_runtime / cuda_driver event that reaches GPU event i
 * (through its correlation or External id, the ac2g flow pair, or a graph
 * launch's correlation), or UINT32_MAX. Caller frees. */
int gt_pt_links(const struct ctrace *ct, uint32_t **parentp);

/* The host's timeline, computed once per snapshot. -ENOENT when the host has
 * no GPU events. */
int snapshot_gpu_timeline(struct snapshot *snap, const char *host, const struct gt_host **gp,
                          struct xp_err *err);

/* (gt_pyrepr.c) A double as TraceLens's CSVs print it: Python's repr() layout
 * ("0.0", "100.0", "1e-05") with the shortest round-trip digits, up to 17
 * ("14.570259033203126"). Returns the text's length (at most n - 1; 32 bytes
 * always suffice). */
size_t gt_pyrepr(double v, char *buf, size_t n);

#endif
