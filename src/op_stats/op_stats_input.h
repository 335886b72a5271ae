/*
 * op_stats_input.h - the input-pipeline analysis of an op_stats, shared by
 * input_pipeline_analyzer and overview_page.
 *
 * A port of the generic (GPU/CPU) path of ConvertOpStatsToInputPipelineAnalysis
 * and ComputeBottleneckAnalysis (xprof/convert/op_stats_to_input_pipeline_analysis.cc)
 * and of the tables both tools print from it; for TPU runs also the per-step
 * TensorCore details and the TPU step-time table.
 */
#ifndef XPROFS_OP_STATS_INPUT_H
#define XPROFS_OP_STATS_INPUT_H

#include "out/datatable.h"
#include "op_stats.h"

/* PerGenericStepDetails. */
struct ip_step {
    char name[64]; /* step name, or its number */
    double step_time_ms;
    double unknown_ms, host_wait_input_ms, host_to_device_ms, output_ms;
    double device_compute_ms, device_to_device_ms, device_collectives_ms;
    double host_compute_ms, host_prepare_ms, host_compile_ms;
};

/* StepSummary (tsl::Stat<double> with sample standard deviation). */
struct ip_summary {
    double avg, sdv, min, max;
};

/* InputOpDetails. */
struct ip_input_op {
    const char *name;
    uint64_t count;
    double time_ms, time_percent, self_ms, self_percent;
    const char *category;
};

/* PerTpuStepDetails (TPU runs: one per step of the step db). */
struct ip_tpu_step {
    uint32_t step_number;
    double tc_compute_ms, scv0_compute_ms, scv0_infeed_ms;
    double tc_infeed_ms, tc_outfeed_ms, tc_idle_ms, host_transfer_ms;
    double all_reduce_compute_ms, all_reduce_sync_ms;
    double infeed_percent_avg, infeed_percent_min, infeed_percent_max;
    /* SparseCores (0 without): compute = min over cores of step - idle,
     * idle and step time = averages; infeed and outfeed are never set from
     * a profile */
    double sc_compute_ms, sc_infeed_ms, sc_outfeed_ms, sc_idle_ms, sc_step_time_ms;
    /* the TensorCore with the longest infeed (the first such core), NULL
     * when no core has infeed time or the core has no core details */
    const struct core_details *max_infeed_core;
};

struct ip_analysis {
    struct ip_tpu_step *tpu_steps; /* TPU runs: the TPU step details */
    uint32_t ntpu_steps;
    /* TpuStepTimeBreakdown (averages are what the tables print) */
    struct ip_summary tc_compute, scv0_compute, scv0_infeed, tc_infeed, tc_outfeed, tc_idle,
        host_transfer;
    /* its sparse_core_step_summary, when has_sparse_core */
    int has_sparse_core;
    struct ip_summary sc_compute, sc_infeed, sc_outfeed, sc_idle, sc_step_time;
    struct ip_step *steps; /* step details */
    uint32_t nsteps;
    struct ip_summary step_time, input_percent;
    struct ip_summary unknown, host_wait_input, host_to_device, input, output;
    struct ip_summary device_compute, device_to_device, device_collectives;
    struct ip_summary host_compute, host_prepare, host_compile;
    struct ip_input_op *input_ops; /* host input ops */
    uint32_t ninput_ops;
    double enqueue_us, demanded_file_read_us, advanced_file_read_us, preprocessing_us,
        unclassified_non_enqueue_us;
    /* BottleneckAnalysis */
    double input_percent_total, output_percent, idle_percent, compute_percent;
    const char *input_classification;
    char input_statement[512];
    char output_statement[512]; /* TPU: TpuBottleneckAnalysis.output_statement */
    const char *kernel_launch_classification;
    char kernel_launch_statement[512];
    const char *all_other_classification;
    char all_other_statement[512];
    const char *device_collectives_classification;
    char device_collectives_statement[512];
    char summary_next_step[512];
    const char *hardware_type; /* "GPU", "CPU_ONLY" ... */
    const char *warnings[2];   /* step diagnostics */
    uint32_t nwarnings;
};

/* Analyse os. Returns 0 or -ENOMEM; free with ip_free. */
int ip_analyze(const struct op_stats *os, struct ip_analysis *a);
void ip_free(struct ip_analysis *a);

/* The generic step-time table (GenerateGenericInputPipelineAnalysisDataTable). */
void ip_step_table(const struct ip_analysis *a, struct dt_table *t);

/* TPU: the per-step details across TensorCores
 * (ComputeTpuPerStepDataAcrossCores, ComputeTpuStepTimeBreakdownInMs) into
 * a; input_percent becomes the summary of each step's largest infeed
 * percent. Returns 0 or -ENOMEM. (op_stats_input_tpu.c) */
int ip_tpu_analyze(const struct op_stats *os, struct ip_analysis *a);

/* TPU: the step-time table (GenerateTpuInputPipelineAnalysisDataTable). */
void ip_tpu_step_table(const struct ip_analysis *a, struct dt_table *t);

/* A diagnostics table: INFO, WARNING, ERROR rows in that order. */
void ip_diagnostics_table(struct dt_table *t, const char *const *warnings, uint32_t nwarnings,
                          const char *const *errors, uint32_t nerrors);

#endif
