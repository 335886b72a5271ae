/*
 * op_stats_input.c - input-pipeline analysis (see op_stats_input.h).
 */
#include "op_stats_input.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define PS_PER_MS 1000000000.0

/* tsl::Stat<double>. */
struct stat_acc {
    uint64_t n;
    double sum, sumsq, min, max;
};

static void acc_add(struct stat_acc *s, double v)
{
    if (s->n == 0 || v < s->min)
        s->min = v;
    if (s->n == 0 || v > s->max)
        s->max = v;
    s->n++;
    s->sum += v;
    s->sumsq += v * v;
}

/* GetStepSummaryForSampleStats. */
static struct ip_summary acc_summary(const struct stat_acc *s)
{
    struct ip_summary r = {0, 0, 0, 0};
    double var = 0;

    if (s->n == 0)
        return r;
    r.avg = s->sum / (double)s->n;
    if (s->n > 1 && s->min != s->max)
        var = (s->sumsq - s->sum * s->sum / (double)s->n) / (double)(s->n - 1);
    r.sdv = sqrt(var);
    r.min = s->min;
    r.max = s->max;
    return r;
}

static double ms_of(const struct step_core *c, int type)
{
    return (double)c->type_ps[type / 10] / 1e9;
}

static const struct step_core *core_of(const struct step_entry *s, uint32_t core_id)
{
    uint32_t i;

    for (i = 0; i < s->ncores; i++) {
        if (s->cores[i].core_id == core_id)
            return &s->cores[i];
    }
    return NULL;
}

/* ---- host input ops ---- */

enum ip_cat { IC_ENQUEUE, IC_DEMANDED, IC_ADVANCED, IC_PREPROCESSING, IC_UNKNOWN };

static const char *const ip_cat_name[] = {"Enqueue", "Demanded file read", "Advanced file read",
                                          "Preprocessing", "Unknown"};

static int is_input_op_new(const char *c)
{
    return strcasecmp(c, "enqueue") == 0 || strcasecmp(c, "read") == 0 ||
           strcasecmp(c, "preprocessing") == 0 || strcasecmp(c, "unknown") == 0;
}

static int starts(const char *s, const char *p)
{
    return strncmp(s, p, strlen(p)) == 0;
}

static int ends(const char *s, const char *suffix)
{
    size_t n = strlen(s), m = strlen(suffix);

    return n >= m && strcmp(s + n - m, suffix) == 0;
}

static int is_input_op(const char *c)
{
    return starts(c, "InfeedEnqueue") || strcmp(c, "Dataset") == 0 ||
           strcmp(c, "MemcpyHToD") == 0 || is_input_op_new(c);
}

static enum ip_cat categorize(const char *name, const char *c)
{
    if (is_input_op_new(c)) {
        if (strcasecmp(c, "enqueue") == 0)
            return IC_ENQUEUE;
        if (strcasecmp(c, "read") == 0)
            return IC_DEMANDED;
        if (strcasecmp(c, "preprocessing") == 0)
            return IC_PREPROCESSING;
        return IC_UNKNOWN;
    }
    if (starts(c, "InfeedEnqueue") || strcmp(c, "MemcpyHToD") == 0)
        return IC_ENQUEUE;
    if (ends(name, "::TFRecord") || ends(name, "::TextLine") || ends(name, "::FixedLengthRecord") ||
        ends(name, "::SSTable") || ends(name, "::RecordIO") || ends(name, "::ArrayRecord")) {
        if (strstr(name, "::MemoryReader") || strstr(name, "::MemoryWriter") ||
            strstr(name, "::Interleave") || strstr(name, "::Prefetch") ||
            strstr(name, "::ParallelMap"))
            return IC_ADVANCED;
        return IC_DEMANDED;
    }
    return IC_PREPROCESSING;
}

static int host_result(const struct op_stats *os, struct ip_analysis *a)
{
    uint32_t n, i, k = 0;
    const struct op_metrics **sorted = op_db_sorted(&os->host_db, 0, &n);
    uint64_t input_ps = 0;
    double agg[5] = {0, 0, 0, 0, 0};
    double ratio, non_enqueue, total;

    if (sorted == NULL)
        return -ENOMEM;
    for (i = 0; i < n; i++) {
        if (is_input_op(sorted[i]->category))
            input_ps += sorted[i]->self_time_ps;
    }
    a->input_ops = calloc(n ? n : 1, sizeof(*a->input_ops));
    if (a->input_ops == NULL) {
        free(sorted);
        return -ENOMEM;
    }
    for (i = 0; i < n; i++) {
        const struct op_metrics *m = sorted[i];
        enum ip_cat c;
        if (!is_input_op(m->category))
            continue;
        c = categorize(m->name, m->category);
        a->input_ops[k].name = m->name;
        a->input_ops[k].count = m->occurrences;
        a->input_ops[k].time_ms = (double)m->time_ps / 1e9;
        a->input_ops[k].self_ms = (double)m->self_time_ps / 1e9;
        a->input_ops[k].time_percent = 100.0 * op_safe_div((double)m->time_ps, (double)input_ps);
        a->input_ops[k].self_percent =
            100.0 * op_safe_div((double)m->self_time_ps, (double)input_ps);
        a->input_ops[k].category = ip_cat_name[c];
        agg[c] += (double)m->self_time_ps / 1e6;
        k++;
    }
    free(sorted);
    a->ninput_ops = k;
    if (k == 0)
        return 0;
    /* RatioOfHostToDeviceTimeToStepTime */
    if (os->host_db.host_infeed_enq_diff_ps > 0)
        ratio = op_safe_div((double)os->host_db.host_infeed_enq_ps,
                            (double)os->host_db.host_infeed_enq_diff_ps);
    else if (a->step_time.avg > 0)
        ratio = op_safe_div(a->host_to_device.avg, a->step_time.avg);
    else
        ratio = 0.0;
    if (ratio > 1.0)
        ratio = 1.0;
    total = agg[IC_DEMANDED] + agg[IC_ADVANCED] + agg[IC_PREPROCESSING];
    non_enqueue = ratio != 0.0 ? agg[IC_ENQUEUE] * (1.0 - ratio) / ratio : total;
    a->enqueue_us = agg[IC_ENQUEUE];
    a->demanded_file_read_us = op_safe_div(non_enqueue * agg[IC_DEMANDED], total);
    a->advanced_file_read_us = op_safe_div(non_enqueue * agg[IC_ADVANCED], total);
    a->preprocessing_us = op_safe_div(non_enqueue * agg[IC_PREPROCESSING], total);
    a->unclassified_non_enqueue_us = fmax(0.0, non_enqueue - a->demanded_file_read_us -
                                                   a->advanced_file_read_us - a->preprocessing_us);
    return 0;
}

/* ---- bottleneck ---- */

/* InputAnalysis: the input classification and statement from the input and
 * 'All Others' shares of the step time (TPU passes 0 for the latter). Returns
 * 1 when the statement is about 'All Others' time. */
static int classify_input(struct ip_analysis *a, double input_pct, double all_other_pct)
{
    if (input_pct >= 20) {
        a->input_classification = "host";
        snprintf(a->input_statement, sizeof(a->input_statement),
                 "Your program is HIGHLY input-bound because %.1f%% of the total step time "
                 "sampled is waiting for input. Therefore, you should first focus on reducing "
                 "the input time.",
                 input_pct);
    } else if (input_pct >= 5) {
        a->input_classification = "both";
        snprintf(a->input_statement, sizeof(a->input_statement),
                 "Your program is MODERATELY input-bound because %.1f%% of the total step "
                 "time sampled is waiting for input. Therefore, you would need to reduce both "
                 "the input time and other time.",
                 input_pct);
    } else if (all_other_pct >= 3) {
        a->input_classification = "both";
        snprintf(a->input_statement, sizeof(a->input_statement),
                 "Your program is POTENTIALLY input-bound because %.1f%% of the total step "
                 "time sampled is spent on 'All Others' time (which could be due to I/O or "
                 "Python execution or both).",
                 all_other_pct);
        return 1;
    } else {
        a->input_classification = "device";
        snprintf(a->input_statement, sizeof(a->input_statement),
                 "Your program is NOT input-bound because only %.1f%% of the total step time "
                 "sampled is waiting for input. Therefore, you should focus on reducing other "
                 "time.",
                 input_pct);
    }
    return 0;
}

static void bottleneck(struct ip_analysis *a)
{
    double step = 0, input = 0, output = 0, prepare = 0, compute = 0, collectives = 0, unknown = 0;
    double input_pct, all_other_pct, kl_pct, coll_pct;
    int tfdata =
        a->demanded_file_read_us > 0 || a->advanced_file_read_us > 0 || a->preprocessing_us > 0;
    int all_other_reported = 0;
    uint32_t i;

    for (i = 0; i < a->nsteps; i++) {
        const struct ip_step *s = &a->steps[i];
        step += s->step_time_ms;
        input += s->host_wait_input_ms + s->host_to_device_ms;
        output += s->output_ms;
        prepare += s->host_prepare_ms;
        compute += s->device_compute_ms;
        collectives += s->device_collectives_ms;
        unknown += s->unknown_ms;
    }
    a->kernel_launch_statement[0] = a->all_other_statement[0] = '\0';
    a->device_collectives_statement[0] = '\0';
    if (step == 0) {
        a->input_classification = "unknown";
        snprintf(a->input_statement, sizeof(a->input_statement),
                 "No step time measured. Therefore we cannot tell where the performance "
                 "bottleneck is.");
        a->kernel_launch_classification = a->all_other_classification = "no";
        a->device_collectives_classification = "no";
        return;
    }
    input_pct = 100.0 * input / step;
    a->input_percent_total = input_pct;
    a->output_percent = 100.0 * output / step;
    a->compute_percent = 100.0 * compute / step;
    coll_pct = 100.0 * collectives / step;
    a->idle_percent =
        fmax(0.0, 100.0 - input_pct - a->output_percent - a->compute_percent - coll_pct);
    kl_pct = 100.0 * prepare / step;
    all_other_pct = 100.0 * unknown / step;
    all_other_reported = classify_input(a, input_pct, all_other_pct);
    if (coll_pct >= 15 || coll_pct >= 3) {
        a->device_collectives_classification = coll_pct >= 15 ? "high" : "moderate";
        snprintf(a->device_collectives_statement, sizeof(a->device_collectives_statement),
                 "%.1f %% of the total step time sampled is spent on 'Device Collective "
                 "Communication'.",
                 coll_pct);
    } else {
        a->device_collectives_classification = "no";
    }
    if (kl_pct >= 3) {
        a->kernel_launch_classification = kl_pct >= 15 ? "high" : "moderate";
        snprintf(a->kernel_launch_statement, sizeof(a->kernel_launch_statement),
                 "%.1f %% of the total step time sampled is spent on 'Kernel Launch'.%s", kl_pct,
                 tfdata ? " It could be due to CPU contention with tf.data. In this case, you "
                          "may try to set the environment variable TF_GPU_THREAD_MODE=gpu_private."
                        : "");
    } else {
        a->kernel_launch_classification = "no";
    }
    if (!all_other_reported && all_other_pct >= 3) {
        a->all_other_classification = all_other_pct >= 15 ? "high" : "moderate";
        snprintf(a->all_other_statement, sizeof(a->all_other_statement),
                 "%.1f %% of the total step time sampled is spent on 'All Others' time. This "
                 "could be due to Python execution overhead.",
                 all_other_pct);
    } else {
        a->all_other_classification = "no";
    }
}

/* ComputeTpuBottleneckAnalysis with all cores profiled: the input and
 * output statements over the sum of the steps (TensorCore idle, all-reduce
 * and SparseCoreV0 statements are not printed by the tables). */
static void tpu_bottleneck(struct ip_analysis *a)
{
    double step = 0, infeed = 0, outfeed = 0, infeed_pct, outfeed_pct;
    uint32_t i;

    for (i = 0; i < a->ntpu_steps; i++) {
        const struct ip_tpu_step *d = &a->tpu_steps[i];
        step += d->tc_compute_ms + d->scv0_compute_ms + d->tc_infeed_ms + d->scv0_infeed_ms +
                d->all_reduce_compute_ms + d->all_reduce_sync_ms + d->tc_outfeed_ms + d->tc_idle_ms;
        infeed += d->tc_infeed_ms + d->scv0_infeed_ms;
        outfeed += d->tc_outfeed_ms;
    }
    a->output_statement[0] = '\0';
    if (step == 0) {
        a->input_classification = "unknown";
        snprintf(a->input_statement, sizeof(a->input_statement),
                 "No step time measured. Therefore we cannot tell where the performance "
                 "bottleneck is.");
        return;
    }
    infeed_pct = 100.0 * infeed / step;
    outfeed_pct = 100.0 * outfeed / step;
    classify_input(a, infeed_pct, 0);
    if (outfeed_pct >= 20)
        snprintf(a->output_statement, sizeof(a->output_statement),
                 "Your program is HIGHLY output-bound because %.1f%% of the total step time "
                 "sampled is spent on output. Therefore, you should first focus on reducing "
                 "the output time.",
                 outfeed_pct);
    else if (outfeed_pct >= 5)
        snprintf(a->output_statement, sizeof(a->output_statement),
                 "Your program is MODERATELY output-bound because %.1f%% of the total step "
                 "time sampled is spent on output. Therefore, you would need to reduce both "
                 "the output time and other time.",
                 outfeed_pct);
}

int ip_analyze(const struct op_stats *os, struct ip_analysis *a)
{
    struct stat_acc st = {0}, ip = {0}, unk = {0}, hwi = {0}, h2d = {0}, in = {0}, out = {0},
                    dc = {0}, d2d = {0}, coll = {0}, hc = {0}, hp = {0}, comp = {0};
    uint32_t i, j;
    int rc;
    int tfdata;

    memset(a, 0, sizeof(*a));
    a->hardware_type = op_hardware_type_name(os->hardware_type);
    a->steps = calloc(os->nsteps ? os->nsteps : 1, sizeof(*a->steps));
    if (a->steps == NULL)
        return -ENOMEM;
    for (i = 0; i < os->nsteps; i++) {
        const struct step_entry *se = &os->steps[i];
        const struct step_core *c = core_of(se, 1);
        double max_ms = 0.0;
        for (j = 0; j < se->ncores; j++) {
            double ms;
            if (se->cores[j].core_id >= 1000000)
                continue;
            ms = (double)se->cores[j].duration_ps / PS_PER_MS;
            if (ms > max_ms)
                max_ms = ms;
        }
        acc_add(&st, max_ms);
        if (c == NULL)
            continue;
        {
            struct ip_step *s = &a->steps[a->nsteps++];
            if (c->step_name[0] != '\0')
                snprintf(s->name, sizeof(s->name), "%s", c->step_name);
            else
                snprintf(s->name, sizeof(s->name), "%u", c->step_num);
            s->step_time_ms = (double)c->duration_ps / 1e9;
            s->unknown_ms = ms_of(c, EV_UNKNOWN_TIME);
            s->host_wait_input_ms = ms_of(c, EV_HOST_WAIT_INPUT);
            s->host_to_device_ms = ms_of(c, EV_HOST_TO_DEVICE) + ms_of(c, EV_DEVICE_WAIT_HOST);
            s->output_ms = ms_of(c, EV_DEVICE_TO_HOST);
            s->device_compute_ms = ms_of(c, EV_DEVICE_COMPUTE_16) + ms_of(c, EV_DEVICE_COMPUTE_32);
            s->device_to_device_ms =
                ms_of(c, EV_DEVICE_TO_DEVICE) + ms_of(c, EV_DEVICE_WAIT_DEVICE);
            s->device_collectives_ms = ms_of(c, EV_DEVICE_COLLECTIVES);
            s->host_compute_ms = ms_of(c, EV_HOST_COMPUTE);
            s->host_prepare_ms = ms_of(c, EV_HOST_PREPARE);
            s->host_compile_ms = ms_of(c, EV_HOST_COMPILE);
            acc_add(&ip, 100.0 * op_safe_div(s->host_wait_input_ms + s->host_to_device_ms,
                                             s->step_time_ms));
            acc_add(&unk, s->unknown_ms);
            acc_add(&hwi, s->host_wait_input_ms);
            acc_add(&h2d, s->host_to_device_ms);
            acc_add(&in, s->host_wait_input_ms + s->host_to_device_ms);
            acc_add(&out, s->output_ms);
            acc_add(&dc, s->device_compute_ms);
            acc_add(&d2d, s->device_to_device_ms);
            acc_add(&coll, s->device_collectives_ms);
            acc_add(&hc, s->host_compute_ms);
            acc_add(&hp, s->host_prepare_ms);
            acc_add(&comp, s->host_compile_ms);
        }
    }
    a->step_time = acc_summary(&st);
    a->input_percent = acc_summary(&ip);
    a->unknown = acc_summary(&unk);
    a->host_wait_input = acc_summary(&hwi);
    a->host_to_device = acc_summary(&h2d);
    a->input = acc_summary(&in);
    a->output = acc_summary(&out);
    a->device_compute = acc_summary(&dc);
    a->device_to_device = acc_summary(&d2d);
    a->device_collectives = acc_summary(&coll);
    a->host_compute = acc_summary(&hc);
    a->host_prepare = acc_summary(&hp);
    a->host_compile = acc_summary(&comp);
    if (os->hardware_type == HW_TPU && (rc = ip_tpu_analyze(os, a)) != 0)
        return rc;
    /* PopulateStepDiagnostics */
    if (os->use_incomplete_step)
        a->warnings[a->nwarnings++] = op_msg_incomplete_step;
    else if (os->nsteps == 0)
        a->warnings[a->nwarnings++] =
            os->empty_intersect ? op_msg_empty_intersect : op_msg_no_step_marker;
    if ((rc = host_result(os, a)) != 0)
        return rc;
    bottleneck(a);
    if (a->tpu_steps != NULL)
        tpu_bottleneck(a);
    tfdata =
        a->demanded_file_read_us > 0 || a->advanced_file_read_us > 0 || a->preprocessing_us > 0;
    if (strcmp(a->input_classification, "host") == 0 ||
        strcmp(a->input_classification, "both") == 0) {
        if (!tfdata)
            snprintf(a->summary_next_step, sizeof(a->summary_next_step),
                     "Consider using <a href=\"https://www.tensorflow.org/guide/data\" "
                     "target=\"_blank\">the tf.data API</a> to enable profiler's host-side "
                     "analysis for input pipeline. Profiler currently does not support custom "
                     "input pipeline (please ignore Section 3 below).");
        else
            snprintf(a->summary_next_step, sizeof(a->summary_next_step),
                     "Look at Section 3 for the breakdown of input time on the host.");
    } else {
        snprintf(a->summary_next_step, sizeof(a->summary_next_step),
                 "You may skip the rest of this page.");
    }
    return 0;
}

void ip_free(struct ip_analysis *a)
{
    free(a->steps);
    free(a->tpu_steps);
    free(a->input_ops);
    memset(a, 0, sizeof(*a));
}

static void sum_props(struct dt_table *t, const char *prefix, const struct ip_summary *s)
{
    char key[96];

    snprintf(key, sizeof(key), "%s_avg", prefix);
    dt_propf(t, key, "%.1f", s->avg);
    snprintf(key, sizeof(key), "%s_sdv", prefix);
    dt_propf(t, key, "%.1f", s->sdv);
}

void ip_step_table(const struct ip_analysis *a, struct dt_table *t)
{
    uint32_t i;

    if (a->tpu_steps != NULL) {
        ip_tpu_step_table(a, t);
        return;
    }
    dt_col(t, "stepnum", "string", "Step number");
    dt_col(t, "deviceComputeTimeMs", "number", "Device compute");
    dt_col(t, "deviceToDeviceTimeMs", "number", "Device to device");
    dt_col(t, "deviceCollectivesTimeMs", "number", "Device collective communication");
    dt_col(t, "hostComputeTimeMs", "number", "Host compute");
    dt_col(t, "kernelLaunchTimeMs", "number", "Kernel launch");
    dt_col(t, "infeedTimeMs", "number", "Input");
    dt_col(t, "outfeedTimeMs", "number", "Output");
    dt_col(t, "compileTimeMs", "number", "Compilation");
    dt_col(t, "otherTimeMs", "number", "All others");
    dt_col_role(t, "tooltip", "string", "tooltip", "tooltip");
    dt_col(t, "stepTimeMs", "number", "Step time");
    dt_prop(t, "step_time_graph_column_ids",
            "stepnum,deviceComputeTimeMs,deviceToDeviceTimeMs,deviceCollectivesTimeMs,"
            "hostComputeTimeMs,kernelLaunchTimeMs,infeedTimeMs,outfeedTimeMs,compileTimeMs,"
            "otherTimeMs, tooltip");
    dt_prop(t, "hardware_type", a->hardware_type);
    dt_propf(t, "steptime_ms_average", "%.1f", a->step_time.avg);
    dt_propf(t, "steptime_ms_standard_deviation", "%.1f", a->step_time.sdv);
    dt_propf(t, "steptime_ms_minimum", "%.1f", a->step_time.min);
    dt_propf(t, "steptime_ms_maximum", "%.1f", a->step_time.max);
    sum_props(t, "device_compute_time_ms", &a->device_compute);
    sum_props(t, "device_to_device_time_ms", &a->device_to_device);
    sum_props(t, "device_collectives_time_ms", &a->device_collectives);
    sum_props(t, "infeed_time_ms", &a->input);
    sum_props(t, "outfeed_time_ms", &a->output);
    sum_props(t, "host_compute_time_ms", &a->host_compute);
    sum_props(t, "kernel_launch_time_ms", &a->host_prepare);
    sum_props(t, "compile_time_ms", &a->host_compile);
    sum_props(t, "other_time_ms", &a->unknown);
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
        char tip[1024];
        snprintf(tip, sizeof(tip),
                 "Step %s, duration: %.2f ms\n-All others: %.2f ms\n-Compilation: %.2f ms\n"
                 "-Output: %.2f ms\n-Input: %.2f ms\n-Kernel launch: %.2f ms\n"
                 "-Host compute: %.2f ms\n-Device collectives: %.2f ms\n"
                 "-Device to device: %.2f ms\n-Device compute: %.2f ms",
                 s->name, s->step_time_ms, s->unknown_ms, s->host_compile_ms, s->output_ms,
                 s->host_wait_input_ms + s->host_to_device_ms, s->host_prepare_ms,
                 s->host_compute_ms, s->device_collectives_ms, s->device_to_device_ms,
                 s->device_compute_ms);
        dt_row(t);
        dt_str(t, s->name);
        dt_num(t, s->device_compute_ms);
        dt_num(t, s->device_to_device_ms);
        dt_num(t, s->device_collectives_ms);
        dt_num(t, s->host_compute_ms);
        dt_num(t, s->host_prepare_ms);
        dt_num(t, s->host_wait_input_ms + s->host_to_device_ms);
        dt_num(t, s->output_ms);
        dt_num(t, s->host_compile_ms);
        dt_num(t, s->unknown_ms);
        dt_str(t, tip);
        dt_num(t, s->step_time_ms);
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

/* ---- TPU (ComputeTpuInputPipelineAnalysisResult) ---- */

/* category_ps of a core's step, 0 when absent. */
static uint64_t cat_ps(const struct step_core *c, const char *name)
{
    uint32_t i;

    for (i = 0; i < c->ncategories; i++) {
        if (strcmp(c->categories[i].name, name) == 0)
            return c->categories[i].ps;
    }
    return 0;
}

/* TpuStepBreakdown of a TensorCore step (ConvertGenericStepBreakdownToTpuStepBreakdown). */
struct tpu_breakdown {
    uint64_t infeed, outfeed, wait_scv0, host_send_recv, idle;
};

static void tpu_breakdown(const struct step_core *c, struct tpu_breakdown *b)
{
    uint64_t total = 0, scv0_in;
    uint32_t i;

    for (i = 0; i < c->ncategories; i++) {
        if (strcmp(c->categories[i].name, "IDLE") != 0)
            total += c->categories[i].ps;
    }
    b->infeed = cat_ps(c, "infeed");
    b->outfeed = cat_ps(c, "outfeed");
    /* BreakdownSparseCoreV0Infeed: the infeed not matched by an outfeed is
     * the wait for SparseCoreV0 */
    scv0_in = cat_ps(c, "sparsecorev0 infeed");
    if (scv0_in > 0) {
        uint64_t out = cat_ps(c, "sparsecorev0 outfeed");
        b->wait_scv0 = scv0_in - (scv0_in < out ? scv0_in : out);
    } else {
        b->wait_scv0 = cat_ps(c, "sparsecorev0 infeed wait");
    }
    b->host_send_recv = cat_ps(c, "host send") + cat_ps(c, "host send-done") +
                        cat_ps(c, "host recv") + cat_ps(c, "host recv-done");
    b->idle = c->duration_ps - total; /* profile time - time in ops */
}

/* ComputeTpuPerStepDataAcrossCores (no collectives: all-reduce times 0). */
static void tpu_step(const struct step_entry *se, struct ip_tpu_step *d)
{
    struct stat_acc infeed_pct = {0}, step = {0}, optimal = {0}, outfeed = {0}, host = {0};
    uint64_t max_infeed = 0, max_wait_scv0 = 0;
    double non_idle;
    uint32_t i;

    memset(d, 0, sizeof(*d));
    d->step_number = se->ncores > 0 ? se->cores[0].step_num : se->step_num;
    for (i = 0; i < se->ncores; i++) {
        const struct step_core *c = &se->cores[i];
        struct tpu_breakdown b;
        if (c->core_id >= 1000000)
            continue; /* SparseCores */
        tpu_breakdown(c, &b);
        acc_add(&step, (double)c->duration_ps);
        if (b.wait_scv0 > max_wait_scv0)
            max_wait_scv0 = b.wait_scv0;
        acc_add(&outfeed, (double)b.outfeed);
        acc_add(&infeed_pct, 100.0 * (double)b.infeed / (double)c->duration_ps);
        acc_add(&optimal, (double)(c->duration_ps - (b.infeed + b.outfeed + b.host_send_recv +
                                                     b.idle + b.wait_scv0)));
        acc_add(&host, (double)b.host_send_recv);
        if (b.infeed > max_infeed)
            max_infeed = b.infeed;
    }
    if (outfeed.n > 0)
        d->tc_outfeed_ms = outfeed.sum / (double)outfeed.n / PS_PER_MS;
    if (optimal.n > 0)
        d->tc_compute_ms = optimal.min / PS_PER_MS;
    if (host.n > 0)
        d->host_transfer_ms = host.max / PS_PER_MS;
    d->tc_infeed_ms = (double)max_infeed / PS_PER_MS;
    /* scv0_infeed_percent is never set: all of the wait is SparseCoreV0 compute */
    d->scv0_compute_ms = (double)max_wait_scv0 / PS_PER_MS;
    d->scv0_infeed_ms = 0;
    if (step.n > 0) {
        non_idle = d->tc_compute_ms + d->scv0_compute_ms + d->tc_infeed_ms + d->scv0_infeed_ms +
                   d->all_reduce_compute_ms + d->all_reduce_sync_ms + d->tc_outfeed_ms;
        d->tc_idle_ms = step.min / PS_PER_MS - non_idle;
    }
    if (d->tc_idle_ms < 0)
        d->tc_idle_ms = 0;
    if (infeed_pct.n > 0) {
        d->infeed_percent_avg = infeed_pct.sum / (double)infeed_pct.n;
        d->infeed_percent_min = infeed_pct.min;
        d->infeed_percent_max = infeed_pct.max;
    }
}

int ip_tpu_analyze(const struct op_stats *os, struct ip_analysis *a)
{
    struct stat_acc pct = {0}, tcc = {0}, scc = {0}, sci = {0}, tci = {0}, tco = {0}, idle = {0},
                    host = {0};
    uint32_t i;

    a->tpu_steps = calloc(os->nsteps ? os->nsteps : 1, sizeof(*a->tpu_steps));
    if (a->tpu_steps == NULL)
        return -ENOMEM;
    for (i = 0; i < os->nsteps; i++) {
        struct ip_tpu_step *d = &a->tpu_steps[a->ntpu_steps++];
        tpu_step(&os->steps[i], d);
        acc_add(&pct, d->infeed_percent_max);
        acc_add(&tcc, d->tc_compute_ms);
        acc_add(&scc, d->scv0_compute_ms);
        acc_add(&sci, d->scv0_infeed_ms);
        acc_add(&tci, d->tc_infeed_ms);
        acc_add(&tco, d->tc_outfeed_ms);
        acc_add(&idle, d->tc_idle_ms);
        acc_add(&host, d->host_transfer_ms);
    }
    a->input_percent = acc_summary(&pct);
    a->tc_compute = acc_summary(&tcc);
    a->scv0_compute = acc_summary(&scc);
    a->scv0_infeed = acc_summary(&sci);
    a->tc_infeed = acc_summary(&tci);
    a->tc_outfeed = acc_summary(&tco);
    a->tc_idle = acc_summary(&idle);
    a->host_transfer = acc_summary(&host);
    return 0;
}

void ip_tpu_step_table(const struct ip_analysis *a, struct dt_table *t)
{
    uint32_t i;

    dt_col(t, "stepnum", "string", "stepnum");
    dt_col(t, "tcComputeTimeMs", "number", "TensorCore compute (in ms)");
    dt_col(t, "scv0ComputeTimeMs", "number", "SparseCoreV0 compute (in ms)");
    dt_col(t, "scv0InfeedTimeMs", "number", "SparseCoreV0 input (in ms)");
    dt_col(t, "tcInfeedTimeMs", "number", "TensorCore input (in ms)");
    dt_col(t, "tcOutfeedTimeMs", "number", "TensorCore output (in ms)");
    dt_col(t, "tcIdleTimeMs", "number", "TensorCore idle (in ms)");
    dt_col(t, "hostTransferTimeMs", "number", "Host transfer (in ms)");
    dt_col_role(t, "tooltip", "string", "tooltip", "tooltip");
    dt_col(t, "infeedPercentAverage", "number", "% step time waiting for input data");
    dt_col_role(t, "infeedPercentMin", "number", "Infeed percent min", "interval");
    dt_col_role(t, "infeedPercentMax", "number", "Infeed percent max", "interval");
    dt_prop(t, "hardware_type", a->hardware_type);
    dt_propf(t, "steptime_ms_average", "%.1f", a->step_time.avg);
    dt_propf(t, "steptime_ms_standard_deviation", "%.1f", a->step_time.sdv);
    dt_propf(t, "steptime_ms_minimum", "%.1f", a->step_time.min);
    dt_propf(t, "steptime_ms_maximum", "%.1f", a->step_time.max);
    dt_propf(t, "infeed_percent_average", "%.1f", a->input_percent.avg);
    dt_propf(t, "infeed_percent_standard_deviation", "%.1f", a->input_percent.sdv);
    dt_propf(t, "infeed_percent_minimum", "%.1f", a->input_percent.min);
    dt_propf(t, "infeed_percent_maximum", "%.1f", a->input_percent.max);
    dt_prop(t, "step_time_graph_column_ids",
            "stepnum,tcComputeTimeMs,scv0ComputeTimeMs,scv0InfeedTimeMs,tcInfeedTimeMs,"
            "tcOutfeedTimeMs,tcIdleTimeMs,hostTransferTimeMs,tooltip");
    dt_propf(t, "scv0_compute_ms_average", "%.2f", a->scv0_compute.avg);
    dt_propf(t, "scv0_infeed_ms_average", "%.2f", a->scv0_infeed.avg);
    dt_propf(t, "tc_compute_ms_average", "%.2f", a->tc_compute.avg);
    dt_propf(t, "tc_infeed_ms_average", "%.2f", a->tc_infeed.avg);
    dt_propf(t, "tc_outfeed_ms_average", "%.2f", a->tc_outfeed.avg);
    dt_propf(t, "tc_idle_ms_average", "%.2f", a->tc_idle.avg);
    dt_propf(t, "host_transfer_ms_average", "%.2f", a->host_transfer.avg);
    dt_prop(t, "input_conclusion", a->input_statement);
    dt_prop(t, "output_conclusion", a->output_statement);
    dt_prop(t, "summary_nextstep", a->summary_next_step);
    for (i = 0; i < a->ntpu_steps; i++) {
        const struct ip_tpu_step *d = &a->tpu_steps[i];
        double all_reduce = d->all_reduce_compute_ms + d->all_reduce_sync_ms;
        double non_idle = d->tc_compute_ms + d->scv0_compute_ms + d->tc_infeed_ms +
                          d->scv0_infeed_ms + all_reduce + d->tc_outfeed_ms;
        char num[16], tip[256];
        snprintf(num, sizeof(num), "%u", d->step_number);
        snprintf(tip, sizeof(tip),
                 "step %u:\nTime waiting for input data = %.3f ms, Step time = %.3f ms",
                 d->step_number, d->tc_infeed_ms + d->scv0_infeed_ms,
                 non_idle + d->tc_idle_ms - all_reduce);
        dt_row(t);
        dt_str(t, num);
        dt_num(t, d->tc_compute_ms);
        dt_num(t, d->scv0_compute_ms);
        dt_num(t, d->scv0_infeed_ms);
        dt_num(t, d->tc_infeed_ms);
        dt_num(t, d->tc_outfeed_ms);
        dt_num(t, d->tc_idle_ms);
        dt_num(t, d->host_transfer_ms);
        dt_str(t, tip);
        dt_num(t, d->infeed_percent_avg);
        dt_num(t, d->infeed_percent_min);
        dt_num(t, d->infeed_percent_max);
    }
}
