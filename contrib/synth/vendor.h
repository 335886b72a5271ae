/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What differs between an AMD (ROCm) and an NVIDIA (CUDA) capture: device
 * capabilities, stream line names, runtime API names, kernel name spellings
 * and the kernel_details / memcpy_details formats, as the corpus shows them.
 */
#ifndef SYNTH_VENDOR_H
#define SYNTH_VENDOR_H

#include <stdint.h>

#include "pool.h"

struct vendor {
    const char *key;            /* --vendor value: "amd" or "nvidia" */
    const char *device_vendor;  /* plane stat device_vendor */
    int64_t clock_rate_khz;     /* plane stat clock_rate */
    int64_t core_count;         /* plane stat core_count (CUs or SMs) */
    uint64_t memory_bandwidth;  /* plane stat memory_bandwidth, bytes/s */
    uint64_t memory_size;       /* plane stat memory_size, bytes */
    int64_t cc_major;           /* plane stat compute_cap_major */
    int64_t cc_minor;           /* plane stat compute_cap_minor */
    const char *compute_stream; /* suffix of kernel streams: "Kernel" / "Compute" */
    const char *kernel_suffix;  /* appended to XLA kernel names (".kd" on ROCm) */
    const char *launch_fusion;  /* host API launching XLA fusion kernels */
    const char *launch_gemm;    /* host API launching BLAS kernels */
    const char *launch_coll;    /* host API launching collective kernels */
    const char *memcpy_h2d_api; /* host API of a host-to-device copy */
    const char *memcpy_d2h_api; /* host API of a device-to-host copy */
    const char *memcpy_h2d_dev; /* device event name of a host-to-device copy */
    const char *memcpy_d2h_dev; /* device event name of a device-to-host copy */
    const char *coll_kernel;    /* collective (all-reduce) kernel name */
};

/* Returns the vendor named key ("amd", "nvidia"), or NULL. */
const struct vendor *vendor_find(const char *key);

/* Number of distinct BLAS gemm kernel names vendor_gemm_kernel() makes. */
int vendor_n_gemm_kernels(void);

/* Returns gemm kernel name number i (0 <= i < vendor_n_gemm_kernels()), or NULL (OOM). */
const char *vendor_gemm_kernel(const struct vendor *v, struct pool *p, int i);

/*
 * Returns the kernel_details string of a kernel with the given grid, block
 * and shared memory (formatted as the vendor's profiler does), or NULL (OOM).
 */
const char *vendor_kernel_details(const struct vendor *v, struct pool *p, int grid, int block,
                                  int shared);

/* Returns the memcpy_details string of a copy of `bytes` to device `dest`, or NULL. */
const char *vendor_memcpy_details(const struct vendor *v, struct pool *p, int64_t bytes, int dest);

#endif
