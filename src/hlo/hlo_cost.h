/*
 * hlo_cost.h - XLA's GPU cost model over one HLO module, as XProf runs it.
 *
 * XProf prices every HLO instruction of a GPU program with
 * XProfGpuCostAnalysis (xprof/utils/xprof_gpu_cost_analysis.cc), a
 * GpuHloCostAnalysis (xla/service/gpu/model/gpu_hlo_cost_analysis.cc) over
 * HloCostAnalysis (xla/service/hlo_cost_analysis.cc), run on the entry
 * computation (nested computations recursively). Per instruction it keeps
 * float properties (flops, bytes accessed, operand and output bytes per
 * shape index, utilizations) and reports (hlo_cost_analysis_wrapper.cc):
 *
 *   model_flops    = flop_count (-1 -> 0)
 *   device_flops   = flop_count - adjustment (8-bit inputs: half the flops,
 *                    4-bit: a quarter; cuBLASLt GEMMs by operand 0 only)
 *   bytes_accessed = bytes accessed (-1 -> 0)
 *   hbm_read/write = bytes read from / written to memory space 0, summed
 *                    over the leaf shapes, when bytes_accessed > 0
 *
 * Per opcode: dot 2*|out|*|contracting|, ragged dot the same over its
 * result less XLA's "group dimensions" (result dimensions 0, 2, 4 ..., one
 * per rhs group dimension), convolution 2*fma count over the valid window
 * positions, elementwise ops the sm_86 clock-cycle profile per element (3
 * when unlisted), reduce the reducer's cost per reduced element, fusion the
 * fused instructions weighted by their utilization with bytes = outputs +
 * parameter reads, cuBLAS/cuDNN custom calls like dot and convolution,
 * other custom calls unknown (-1), async-start its wrapped instruction
 * visited in place (the async-start itself left empty but for a wrapped
 * reduce-scatter), topk, all-to-all and collective-permute the defaults
 * (XLA's handlers add nothing). The properties are floats and every
 * conversion follows XLA's, so the numbers match bit for bit.
 */
#ifndef XPROFS_HLO_COST_H
#define XPROFS_HLO_COST_H

#include <stdint.h>

#include "hlo_module.h"

struct hlo_cost {
    int64_t model_flops;    /* ModelFlops */
    int64_t device_flops;   /* DeviceFlops */
    int64_t bytes_accessed; /* bytes accessed */
    int64_t hbm_read;       /* HBM bytes read, 0 = none */
    int64_t hbm_write;      /* HBM bytes written, 0 = none */
};

/* The cost of every node of g into out[0..g->nnodes). Returns 0; -1 when
 * XLA's analysis fails on this module (XProf then prices nothing: out is
 * all zero); -ENOMEM. */
int hlo_cost_analyze(const struct hlo_graph *g, struct hlo_cost *out);

/* HloInstruction::IsElementwise by opcode (NULL-terminated; hlo_cost_ops.c). */
extern const char *const hc_elementwise_ops[];

#endif
