/*
 * op_stats_input.c - input-pipeline analysis (see op_stats_input.h): the
 * generic (GPU/CPU) step details and summaries, the host input ops and the
 * bottleneck statements.
 */
#include "op_stats_input_int.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

void ip_acc_add(struct stat_acc *s, double v)
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
struct ip_summary ip_acc_summary(const struct stat_acc *s)
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

/* InputAnalysis: the input classification and statement from the input and
 * 'All Others' shares of the step time (TPU passes 0 for the latter). Returns
 * 1 when the statement is about 'All Others' time. */
int ip_classify_input(struct ip_analysis *a, double input_pct, double all_other_pct)
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

void ip_no_step_time(struct ip_analysis *a)
{
    a->input_classification = "unknown";
    snprintf(a->input_statement, sizeof(a->input_statement),
             "No step time measured. Therefore we cannot tell where the performance "
             "bottleneck is.");
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
        ip_no_step_time(a);
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
    all_other_reported = ip_classify_input(a, input_pct, all_other_pct);
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
        ip_acc_add(&st, max_ms);
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
            ip_acc_add(&ip, 100.0 * op_safe_div(s->host_wait_input_ms + s->host_to_device_ms,
                                                s->step_time_ms));
            ip_acc_add(&unk, s->unknown_ms);
            ip_acc_add(&hwi, s->host_wait_input_ms);
            ip_acc_add(&h2d, s->host_to_device_ms);
            ip_acc_add(&in, s->host_wait_input_ms + s->host_to_device_ms);
            ip_acc_add(&out, s->output_ms);
            ip_acc_add(&dc, s->device_compute_ms);
            ip_acc_add(&d2d, s->device_to_device_ms);
            ip_acc_add(&coll, s->device_collectives_ms);
            ip_acc_add(&hc, s->host_compute_ms);
            ip_acc_add(&hp, s->host_prepare_ms);
            ip_acc_add(&comp, s->host_compile_ms);
        }
    }
    a->step_time = ip_acc_summary(&st);
    a->input_percent = ip_acc_summary(&ip);
    a->unknown = ip_acc_summary(&unk);
    a->host_wait_input = ip_acc_summary(&hwi);
    a->host_to_device = ip_acc_summary(&h2d);
    a->input = ip_acc_summary(&in);
    a->output = ip_acc_summary(&out);
    a->device_compute = ip_acc_summary(&dc);
    a->device_to_device = ip_acc_summary(&d2d);
    a->device_collectives = ip_acc_summary(&coll);
    a->host_compute = ip_acc_summary(&hc);
    a->host_prepare = ip_acc_summary(&hp);
    a->host_compile = ip_acc_summary(&comp);
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
        ip_tpu_bottleneck(a);
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
