/*
 * op_stats_input_table.c - the tables printed from an input-pipeline
 * analysis (see op_stats_input.h): the generic step-time table
 * (GenerateGenericInputPipelineAnalysisDataTable), the TPU one
 * (GenerateTpuInputPipelineAnalysisDataTable) and the diagnostics.
 *
 * Both step-time tables have the same shape: a step-number column, time
 * columns, a tooltip column and more number columns, the step-time summary
 * as properties, one row per step. Their columns, properties and their
 * order are XProf's and stay spelled out per table.
 */
#include "op_stats_input_int.h"

#include <stddef.h>
#include <stdio.h>

/* A column of a table: role NULL for a plain column. */
struct ip_col {
    const char *id;
    const char *type;
    const char *label;
    const char *role;
};

static void add_cols(struct dt_table *t, const struct ip_col *cols, size_t n)
{
    size_t i;

    for (i = 0; i < n; i++) {
        if (cols[i].role != NULL)
            dt_col_role(t, cols[i].id, cols[i].type, cols[i].label, cols[i].role);
        else
            dt_col(t, cols[i].id, cols[i].type, cols[i].label);
    }
}

/* "<prefix>_average", "_standard_deviation", "_minimum", "_maximum" of a
 * summary, with `digits` decimals. */
static void summary_props_digits(struct dt_table *t, const char *prefix, const struct ip_summary *s,
                                 int digits)
{
    char key[96];

    snprintf(key, sizeof(key), "%s_average", prefix);
    dt_propf(t, key, "%.*f", digits, s->avg);
    snprintf(key, sizeof(key), "%s_standard_deviation", prefix);
    dt_propf(t, key, "%.*f", digits, s->sdv);
    snprintf(key, sizeof(key), "%s_minimum", prefix);
    dt_propf(t, key, "%.*f", digits, s->min);
    snprintf(key, sizeof(key), "%s_maximum", prefix);
    dt_propf(t, key, "%.*f", digits, s->max);
}

/* The same with one decimal. */
static void summary_props(struct dt_table *t, const char *prefix, const struct ip_summary *s)
{
    summary_props_digits(t, prefix, s, 1);
}

/* "<prefix>_avg" and "<prefix>_sdv" of a summary, one decimal. */
static void avg_sdv_props(struct dt_table *t, const char *prefix, const struct ip_summary *s)
{
    char key[96];

    snprintf(key, sizeof(key), "%s_avg", prefix);
    dt_propf(t, key, "%.1f", s->avg);
    snprintf(key, sizeof(key), "%s_sdv", prefix);
    dt_propf(t, key, "%.1f", s->sdv);
}

/* One step row: its number, the numbers before the tooltip, the tooltip and
 * the numbers after it. */
static void step_row(struct dt_table *t, const char *step, const double *before, size_t nbefore,
                     const char *tooltip, const double *after, size_t nafter)
{
    size_t i;

    dt_row(t);
    dt_str(t, step);
    for (i = 0; i < nbefore; i++)
        dt_num(t, before[i]);
    dt_str(t, tooltip);
    for (i = 0; i < nafter; i++)
        dt_num(t, after[i]);
}

static const struct ip_col generic_cols[] = {
    {"stepnum", "string", "Step number", NULL},
    {"deviceComputeTimeMs", "number", "Device compute", NULL},
    {"deviceToDeviceTimeMs", "number", "Device to device", NULL},
    {"deviceCollectivesTimeMs", "number", "Device collective communication", NULL},
    {"hostComputeTimeMs", "number", "Host compute", NULL},
    {"kernelLaunchTimeMs", "number", "Kernel launch", NULL},
    {"infeedTimeMs", "number", "Input", NULL},
    {"outfeedTimeMs", "number", "Output", NULL},
    {"compileTimeMs", "number", "Compilation", NULL},
    {"otherTimeMs", "number", "All others", NULL},
    {"tooltip", "string", "tooltip", "tooltip"},
    {"stepTimeMs", "number", "Step time", NULL},
};

void ip_step_table(const struct ip_analysis *a, struct dt_table *t)
{
    uint32_t i;

    if (a->tpu_steps != NULL) {
        ip_tpu_step_table(a, t);
        return;
    }
    add_cols(t, generic_cols, sizeof(generic_cols) / sizeof(generic_cols[0]));
    dt_prop(t, "step_time_graph_column_ids",
            "stepnum,deviceComputeTimeMs,deviceToDeviceTimeMs,deviceCollectivesTimeMs,"
            "hostComputeTimeMs,kernelLaunchTimeMs,infeedTimeMs,outfeedTimeMs,compileTimeMs,"
            "otherTimeMs, tooltip");
    dt_prop(t, "hardware_type", a->hardware_type);
    summary_props(t, "steptime_ms", &a->step_time);
    avg_sdv_props(t, "device_compute_time_ms", &a->device_compute);
    avg_sdv_props(t, "device_to_device_time_ms", &a->device_to_device);
    avg_sdv_props(t, "device_collectives_time_ms", &a->device_collectives);
    avg_sdv_props(t, "infeed_time_ms", &a->input);
    avg_sdv_props(t, "outfeed_time_ms", &a->output);
    avg_sdv_props(t, "host_compute_time_ms", &a->host_compute);
    avg_sdv_props(t, "kernel_launch_time_ms", &a->host_prepare);
    avg_sdv_props(t, "compile_time_ms", &a->host_compile);
    avg_sdv_props(t, "other_time_ms", &a->unknown);
    dt_prop(t, "input_conclusion", a->input_statement);
    dt_prop(t, "device_collectives_bottleneck", a->device_collectives_statement);
    dt_prop(t, "device_collectives_statement", a->device_collectives_statement);
    dt_prop(t, "kernel_launch_bottleneck", a->kernel_launch_statement);
    dt_prop(t, "kernel_launch_statement", a->kernel_launch_statement);
    dt_prop(t, "all_other_bottleneck", a->all_other_statement);
    dt_prop(t, "all_other_statement", a->all_other_statement);
    dt_prop(t, "summary_nextstep", a->summary_next_step);
    for (i = 0; i < a->nsteps; i++) {
        const struct ip_step *s = &a->steps[i];
        double input_ms = s->host_wait_input_ms + s->host_to_device_ms;
        double before[] = {s->device_compute_ms, s->device_to_device_ms, s->device_collectives_ms,
                           s->host_compute_ms,   s->host_prepare_ms,     input_ms,
                           s->output_ms,         s->host_compile_ms,     s->unknown_ms};
        char tip[1024];
        snprintf(tip, sizeof(tip),
                 "Step %s, duration: %.2f ms\n-All others: %.2f ms\n-Compilation: %.2f ms\n"
                 "-Output: %.2f ms\n-Input: %.2f ms\n-Kernel launch: %.2f ms\n"
                 "-Host compute: %.2f ms\n-Device collectives: %.2f ms\n"
                 "-Device to device: %.2f ms\n-Device compute: %.2f ms",
                 s->name, s->step_time_ms, s->unknown_ms, s->host_compile_ms, s->output_ms,
                 input_ms, s->host_prepare_ms, s->host_compute_ms, s->device_collectives_ms,
                 s->device_to_device_ms, s->device_compute_ms);
        step_row(t, s->name, before, sizeof(before) / sizeof(before[0]), tip, &s->step_time_ms, 1);
    }
}

static const struct ip_col tpu_cols[] = {
    {"stepnum", "string", "stepnum", NULL},
    {"tcComputeTimeMs", "number", "TensorCore compute (in ms)", NULL},
    {"scv0ComputeTimeMs", "number", "SparseCoreV0 compute (in ms)", NULL},
    {"scv0InfeedTimeMs", "number", "SparseCoreV0 input (in ms)", NULL},
    {"tcInfeedTimeMs", "number", "TensorCore input (in ms)", NULL},
    {"tcOutfeedTimeMs", "number", "TensorCore output (in ms)", NULL},
    {"tcIdleTimeMs", "number", "TensorCore idle (in ms)", NULL},
    {"hostTransferTimeMs", "number", "Host transfer (in ms)", NULL},
    {"tooltip", "string", "tooltip", "tooltip"},
    {"infeedPercentAverage", "number", "% step time waiting for input data", NULL},
    {"infeedPercentMin", "number", "Infeed percent min", "interval"},
    {"infeedPercentMax", "number", "Infeed percent max", "interval"},
};

/* The columns of a run with SparseCores: no SparseCoreV0 ones. */
static int tpu_col_shown(const struct ip_analysis *a, const struct ip_col *c)
{
    return !a->has_sparse_core || strncmp(c->id, "scv0", 4) != 0;
}

void ip_tpu_step_table(const struct ip_analysis *a, struct dt_table *t)
{
    uint32_t i, k;

    for (i = 0; i < sizeof(tpu_cols) / sizeof(tpu_cols[0]); i++) {
        if (tpu_col_shown(a, &tpu_cols[i]))
            add_cols(t, &tpu_cols[i], 1);
    }
    dt_prop(t, "hardware_type", a->hardware_type);
    /* two decimals: XProf 2.23.2 prints "0.00" here (its published sources
     * say OneDigit, as for the generic table) */
    summary_props_digits(t, "steptime_ms", &a->step_time, 2);
    summary_props(t, "infeed_percent", &a->input_percent);
    dt_prop(t, "step_time_graph_column_ids",
            a->has_sparse_core ? "stepnum,tcComputeTimeMs,tcInfeedTimeMs,tcOutfeedTimeMs,"
                                 "tcIdleTimeMs,hostTransferTimeMs,tooltip"
                               : "stepnum,tcComputeTimeMs,scv0ComputeTimeMs,scv0InfeedTimeMs,"
                                 "tcInfeedTimeMs,tcOutfeedTimeMs,tcIdleTimeMs,hostTransferTimeMs,"
                                 "tooltip");
    /* TpuStepTimeBreakdown averages: two decimals, unlike the generic table */
    if (!a->has_sparse_core) {
        dt_propf(t, "scv0_compute_ms_average", "%.2f", a->scv0_compute.avg);
        dt_propf(t, "scv0_infeed_ms_average", "%.2f", a->scv0_infeed.avg);
    }
    dt_propf(t, "tc_compute_ms_average", "%.2f", a->tc_compute.avg);
    dt_propf(t, "tc_infeed_ms_average", "%.2f", a->tc_infeed.avg);
    dt_propf(t, "tc_outfeed_ms_average", "%.2f", a->tc_outfeed.avg);
    dt_propf(t, "tc_idle_ms_average", "%.2f", a->tc_idle.avg);
    dt_propf(t, "host_transfer_ms_average", "%.2f", a->host_transfer.avg);
    /* the SparseCore averages when every step has SparseCore time */
    if (a->has_sparse_core && a->sc_step_time.min > 0) {
        dt_propf(t, "sc_compute_ms_average", "%.2f", a->sc_compute.avg);
        dt_propf(t, "sc_infeed_ms_average", "%.2f", a->sc_infeed.avg);
        dt_propf(t, "sc_outfeed_ms_average", "%.2f", a->sc_outfeed.avg);
        dt_propf(t, "sc_idle_ms_average", "%.2f", a->sc_idle.avg);
        dt_propf(t, "sc_step_time_ms_average", "%.1f", a->sc_step_time.avg);
    }
    dt_prop(t, "input_conclusion", a->input_statement);
    dt_prop(t, "output_conclusion", a->output_statement);
    dt_prop(t, "summary_nextstep", a->summary_next_step);
    for (i = 0; i < a->ntpu_steps; i++) {
        const struct ip_tpu_step *d = &a->tpu_steps[i];
        double all_reduce = d->all_reduce_compute_ms + d->all_reduce_sync_ms;
        double non_idle = d->tc_compute_ms + d->scv0_compute_ms + d->tc_infeed_ms +
                          d->scv0_infeed_ms + all_reduce + d->tc_outfeed_ms;
        /* the number cells of tpu_cols[1..7], those of shown columns */
        double all[] = {d->tc_compute_ms, d->scv0_compute_ms, d->scv0_infeed_ms,  d->tc_infeed_ms,
                        d->tc_outfeed_ms, d->tc_idle_ms,      d->host_transfer_ms};
        double before[sizeof(all) / sizeof(all[0])];
        double after[] = {d->infeed_percent_avg, d->infeed_percent_min, d->infeed_percent_max};
        size_t nbefore = 0;
        char num[16], tip[256];
        for (k = 0; k < sizeof(all) / sizeof(all[0]); k++) {
            if (tpu_col_shown(a, &tpu_cols[1 + k]))
                before[nbefore++] = all[k];
        }
        snprintf(num, sizeof(num), "%u", d->step_number);
        snprintf(tip, sizeof(tip),
                 "step %u:\nTime waiting for input data = %.3f ms, Step time = %.3f ms",
                 d->step_number, d->tc_infeed_ms + d->scv0_infeed_ms,
                 non_idle + d->tc_idle_ms - all_reduce);
        step_row(t, num, before, nbefore, tip, after, sizeof(after) / sizeof(after[0]));
    }
}

void ip_diagnostics_table(struct dt_table *t, const char *const *warnings, uint32_t nwarnings,
                          const char *const *errors, uint32_t nerrors)
{
    uint32_t i;

    dt_col(t, "severity", "string", "Severity");
    dt_col(t, "message", "string", "Message");
    for (i = 0; i < nwarnings; i++) {
        dt_row(t);
        dt_str(t, "WARNING");
        dt_str(t, warnings[i]);
    }
    for (i = 0; i < nerrors; i++) {
        dt_row(t);
        dt_str(t, "ERROR");
        dt_str(t, errors[i]);
    }
}
