/*
 * op_stats_input_int.h - what the pieces of the input-pipeline analysis
 * share (internal to op_stats_input*.c; the API is op_stats_input.h).
 *
 * op_stats_input.c       the generic (GPU/CPU) analysis: steps, host input
 *                        ops, bottleneck statements
 * op_stats_input_tpu.c   TPU: per-step TensorCore details, output statement
 * op_stats_input_table.c the tables: step time (generic and TPU), diagnostics
 */
#ifndef XPROFS_OP_STATS_INPUT_INT_H
#define XPROFS_OP_STATS_INPUT_INT_H

#include <stdint.h>

#include "op_stats_input.h"

#define PS_PER_MS 1000000000.0

/* tsl::Stat<double>. */
struct stat_acc {
    uint64_t n;
    double sum, sumsq, min, max;
};

/* Add a sample. */
void ip_acc_add(struct stat_acc *s, double v);

/* GetStepSummaryForSampleStats. */
struct ip_summary ip_acc_summary(const struct stat_acc *s);

/* InputAnalysis: the input classification and statement from the input and
 * 'All Others' shares of the step time (TPU passes 0 for the latter).
 * Returns 1 when the statement is about 'All Others' time. */
int ip_classify_input(struct ip_analysis *a, double input_pct, double all_other_pct);

/* The classification and statement of a run without step time. */
void ip_no_step_time(struct ip_analysis *a);

/* ComputeTpuBottleneckAnalysis (op_stats_input_tpu.c). */
void ip_tpu_bottleneck(struct ip_analysis *a);

#endif
