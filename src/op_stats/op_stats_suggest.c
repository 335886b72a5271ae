/*
 * op_stats_suggest.c - XProf's smart suggestion rules and their signals
 * (see op_stats_suggest.h; xprof/convert/smart_suggestion/ rules,
 * signal_provider.h, constants.h).
 *
 * Signals, as SignalProvider reads them from the run's combined op_stats:
 * HBM utilization is the overview's memory_bw_utilization_relative_to_hw_limit
 * (0 here, as overview_page.json prints it), MXU utilization its
 * mxu_utilization_percent; the input percent, enqueue and non-enqueue time
 * the input-pipeline analysis' (TPU: the TPU bottleneck's infeed percent);
 * the TensorCore idle percent the TPU step-time breakdown's mean idle over
 * the mean step time (TPU runs only); collective and data-shuffle percents
 * the mean over steps of the category self time of the TensorCores over
 * their summed step time (floats, as tsl::Stat<float> sums them); barrier-cores
 * and debug_print the event time fractions (op_stats_event_fraction.h),
 * with the modified z-score of each host's mean for stragglers.
 */
#include "op_stats_suggest.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/sort.h"
#include "op_stats_event_fraction.h"
#include "op_stats_input.h"

/* constants.h */
#define HBM_LOW 50.0
#define HBM_HIGH 70.0
#define MXU_LOW 50.0
#define MXU_HIGH 70.0
#define INFEED_THRESHOLD 10.0
#define COLLECTIVE_THRESHOLD 30.0
#define DATA_SHUFFLE_THRESHOLD 30.0
#define DATA_TRANSFER_THRESHOLD 30.0
#define HOST_PROCESSING_THRESHOLD 50.0
#define TC_IDLE_THRESHOLD 10.0
#define SPECIAL_OP_THRESHOLD 10.0
#define DEBUG_PRINT_THRESHOLD 5.0
#define ZERO_EPSILON 1e-6
#define SPARSE_CORE_BASE 1000000u

struct signals {
    const struct host_list *hl;
    const struct op_stats *os;
    struct ip_analysis ip;
    double input_percent; /* InputPipelineAnalysisResult.input_percent */
    struct ef_result barrier, debug;
    int have_barrier, have_debug;
    struct xp_err *err;
};

/* A growing text. */
struct text {
    char *s;
    size_t n, cap;
    int oom;
};

static void put(struct text *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void put(struct text *t, const char *fmt, ...)
{
    va_list ap;
    int len;

    if (t->oom)
        return;
    va_start(ap, fmt);
    len = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (len < 0) {
        t->oom = 1;
        return;
    }
    if (t->n + (size_t)len + 1 > t->cap) {
        size_t cap = (t->cap ? t->cap * 2 : 1024) + (size_t)len;
        char *s = realloc(t->s, cap);
        if (s == NULL) {
            t->oom = 1;
            return;
        }
        t->s = s;
        t->cap = cap;
    }
    va_start(ap, fmt);
    vsnprintf(t->s + t->n, (size_t)len + 1, fmt, ap);
    va_end(ap);
    t->n += (size_t)len;
}

/* tsl::Stat<float>: the sum in float, the mean in double; 0 when empty. */
static double float_avg(const float *v, uint32_t n)
{
    float sum = 0;
    uint32_t i;

    for (i = 0; i < n; i++)
        sum += v[i];
    return n > 0 ? (double)sum / (double)n : 0.0;
}

/* ---- signals ------------------------------------------------------------- */

static int is_collective(const char *c)
{
    static const char *const names[] = {"all-reduce",
                                        "all-reduce fusion",
                                        "all-reduce-scatter fusion",
                                        "all-to-all",
                                        "all-gather",
                                        "all-gather-start",
                                        "all-gather-done",
                                        "all-gather fusion",
                                        "reduce-scatter",
                                        "collective-permute",
                                        "collective-permute-done",
                                        "collective-permute-start",
                                        "megacore fusion",
                                        "host recv",
                                        "host recv-done",
                                        "host send",
                                        "host send-done",
                                        NULL};
    int i;

    for (i = 0; names[i] != NULL; i++) {
        if (strcmp(names[i], c) == 0)
            return 1;
    }
    return 0;
}

static int is_data_shuffle(const char *c)
{
    static const char *const names[] = {"broadcast",
                                        "concatenate",
                                        "data formatting",
                                        "dynamic-slice",
                                        "dynamic-update-slice",
                                        "gather",
                                        "pad",
                                        "reverse",
                                        "scatter",
                                        "select",
                                        "select-and-scatter",
                                        "shuffle",
                                        "slice",
                                        "sort",
                                        NULL};
    int i;

    for (i = 0; names[i] != NULL; i++) {
        if (strcmp(names[i], c) == 0)
            return 1;
    }
    return 0;
}

/* GetTimeFractionEachStepImpl + CalculateAveragePercent: per step the
 * TensorCores' self time of the categories over their summed step time. */
static double avg_category_percent(const struct op_stats *os, int (*pred)(const char *))
{
    float sum = 0;
    uint32_t n = 0, s, c, k;

    for (s = 0; s < os->nsteps; s++) {
        const struct step_entry *se = &os->steps[s];
        uint64_t total = 0, cat = 0;
        if (se->ncores == 0)
            continue;
        for (c = 0; c < se->ncores; c++) {
            if (se->cores[c].core_id >= SPARSE_CORE_BASE)
                continue;
            total += se->cores[c].duration_ps;
            for (k = 0; k < se->cores[c].ncategories; k++) {
                if (pred(se->cores[c].categories[k].name))
                    cat += se->cores[c].categories[k].ps;
            }
        }
        if (total == 0)
            continue;
        sum += (float)cat / (float)total;
        n++;
    }
    return n > 0 ? (double)sum / (double)n * 100.0 : 0.0;
}

/* ComputeTpuBottleneckAnalysis' infeed percent over the TPU steps. */
static double tpu_input_percent(const struct ip_analysis *a)
{
    double step = 0, infeed = 0;
    uint32_t i;

    for (i = 0; i < a->ntpu_steps; i++) {
        const struct ip_tpu_step *d = &a->tpu_steps[i];
        step += d->tc_compute_ms + d->scv0_compute_ms + d->tc_infeed_ms + d->scv0_infeed_ms +
                d->all_reduce_compute_ms + d->all_reduce_sync_ms + d->tc_outfeed_ms + d->tc_idle_ms;
        infeed += d->tc_infeed_ms + d->scv0_infeed_ms;
    }
    return step == 0 ? 0.0 : 100.0 * infeed / step;
}

static double hbm_utilization(const struct signals *sg)
{
    (void)sg;
    return 0.0; /* overview_page's memory_bw_utilization_relative_to_hw_limit */
}

static double mxu_utilization(const struct signals *sg)
{
    return sg->os->mxu_utilization_percent;
}

static double enqueue_us(const struct signals *sg)
{
    return sg->ip.enqueue_us;
}

static double non_enqueue_us(const struct signals *sg)
{
    return sg->ip.demanded_file_read_us + sg->ip.advanced_file_read_us + sg->ip.preprocessing_us +
           sg->ip.unclassified_non_enqueue_us;
}

static double enqueue_percent_of_input(const struct signals *sg)
{
    double e = enqueue_us(sg), t = e + non_enqueue_us(sg);

    return t == 0 ? 0.0 : e / t * 100.0;
}

static double non_enqueue_percent_of_input(const struct signals *sg)
{
    double ne = non_enqueue_us(sg), t = ne + enqueue_us(sg);

    return t == 0 ? 0.0 : ne / t * 100.0;
}

static int is_input_bound(const struct signals *sg)
{
    return sg->input_percent > INFEED_THRESHOLD;
}

static int is_latency_bound(const struct signals *sg)
{
    return mxu_utilization(sg) < MXU_LOW && hbm_utilization(sg) < HBM_LOW;
}

static int load_fractions(struct signals *sg, const char *event, struct ef_result *r, int *have)
{
    int rc;

    if (*have)
        return 0;
    if ((rc = ef_analyze(sg->hl, event, r, sg->err)) != 0)
        return rc;
    *have = 1;
    return 0;
}

/* Per host with fractions: its mean percent (GetPerHostAvgEventTimePercent). */
static double host_avg_percent(const struct ef_host *h)
{
    return float_avg(h->fractions, h->n) * 100.0;
}

static int dbl_cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;

    return x < y ? -1 : x > y;
}

/* StatWithPercentiles::percentile(50): the element at n * 50 / 100 in order. */
static double median_of(double *v, uint32_t n)
{
    xp_qsort(v, n, sizeof(*v), dbl_cmp);
    return v[(size_t)n * 50 / 100];
}

/* ---- rules ---------------------------------------------------------------- */

static int add(struct ss_report *r, const char *rule, struct text *t)
{
    if (t->oom || t->s == NULL) {
        free(t->s);
        return -ENOMEM;
    }
    r->v[r->n].rule_name = rule;
    r->v[r->n].text = t->s;
    r->n++;
    return 0;
}

static int barrier_cores_rule(struct signals *sg, struct ss_report *r)
{
    struct text t = {0};
    double pct, *avg = NULL, *dev = NULL, median, mad;
    uint32_t i, n = 0, nstrag = 0;
    int rc;

    if ((rc = load_fractions(sg, "barrier-cores", &sg->barrier, &sg->have_barrier)) != 0)
        return rc;
    pct = float_avg(sg->barrier.chip_fractions, sg->barrier.nchip) * 100.0;
    if (!(pct >= SPECIAL_OP_THRESHOLD))
        return 0;
    /* GetHostStragglers: modified z-scores of the hosts' means, 3 hosts or more */
    avg = calloc(sg->barrier.nhosts + 1, sizeof(*avg));
    dev = calloc(sg->barrier.nhosts + 1, sizeof(*dev));
    if (avg == NULL || dev == NULL) {
        free(avg);
        free(dev);
        return -ENOMEM;
    }
    for (i = 0; i < sg->barrier.nhosts; i++) {
        if (sg->barrier.hosts[i].n > 0)
            avg[n++] = host_avg_percent(&sg->barrier.hosts[i]);
    }
    put(&t,
        "<p>Your program is likely bottlenecked by <b>TPU barrier-cores</b> operations: "
        "<b> an average of %.1f%% of each step time</b> is spent on these operations. This "
        "often indicates a synchronization issue between workers in a distributed training "
        "setup. Please consider the following optimizations:</p><ul>",
        pct);
    if (n >= 3) {
        double *sorted = dev; /* scratch for the median */
        memcpy(sorted, avg, n * sizeof(*avg));
        median = median_of(sorted, n);
        for (i = 0; i < n; i++)
            dev[i] = fabs(avg[i] - median);
        mad = median_of(dev, n);
        for (i = 0; i < sg->barrier.nhosts; i++) {
            const struct ef_host *h = &sg->barrier.hosts[i];
            double x, score = 0.0;
            if (h->n == 0)
                continue;
            x = host_avg_percent(h);
            if (mad == 0) {
                if (fabs(x - median) > ZERO_EPSILON)
                    score = INFINITY;
            } else {
                score = 0.6745 * (x - median) / fmax(mad, 0.1);
            }
            if (fabs(score) > 3.5) {
                if (nstrag++ == 0)
                    put(&t, "<li><b>Investigate Stragglers:</b> The following hosts are "
                            "identified as potential stragglers with significantly different "
                            "barrier time fraction compared to others:<ul>");
                put(&t,
                    "<li>Host <b>%s</b> average barrier-cores time fraction: <b>%.1f%%</b></li>",
                    h->hostname, x);
            }
        }
    }
    free(avg);
    free(dev);
    if (nstrag > 0)
        put(&t, "</ul></li>");
    else
        put(&t, "<li><b>Investigate Workload Balance:</b> Check for stragglers, i.e., workers "
                "that are significantly slower than others. Uneven workloads can cause faster "
                "workers to wait at the barrier.</li>");
    put(&t, "<li><b>Optimize Collective Operations:</b> Operations like AllReduce involve "
            "synchronization. Ensure they are used efficiently. Check the size of data being "
            "communicated.</li><li><b>Check Network:</b> Network latency or bandwidth can be a "
            "bottleneck for distributed operations, causing workers to wait longer at "
            "barriers.</li><li><b>Improve Data Input Pipeline:</b> Ensure your data loading and "
            "preprocessing pipeline is efficient and balanced across all workers. A slow input "
            "pipeline on one worker can stall all others.</li></ul>");
    return add(r, "BarrierCoresRule", &t);
}

static int collective_bound_rule(struct signals *sg, struct ss_report *r)
{
    struct text t = {0};
    double pct = avg_category_percent(sg->os, is_collective);

    if (!(pct >= COLLECTIVE_THRESHOLD))
        return 0;
    put(&t,
        "<p>Your program is likely bottlenecked by <b>Collective operations (e.g., AllReduce, "
        "AllGather)</b>. An average of <b>%.1f%%</b> of each step is spent on these "
        "operations. This suggests that your model is collective communication-bound. Please "
        "consider the following optimizations:</p><ul><li><b>Overlap Communication with "
        "Computation:</b> Try to schedule collective operations to overlap with computation "
        "to hide communication latency.</li><li><b>Investigate Workload Balance and Input "
        "Pipeline:</b> Check for stragglers, i.e., workers that are significantly slower "
        "than others. Uneven workloads and data loading can cause faster workers to wait "
        "during collective operations.</li><li><b>Optimize Collective Operations:</b> Reduce "
        "the amount of data transferred between devices by using lower precision data "
        "formats for gradients (e.g., bfloat16).</li><li><b>Check Network:</b> Network "
        "latency or bandwidth can be a bottleneck for distributed operations, causing "
        "workers to wait longer during collectives.</li></ul>",
        pct);
    return add(r, "CollectiveBoundRule", &t);
}

static int compute_bound_rule(struct signals *sg, struct ss_report *r)
{
    struct text t = {0};
    double hbm = hbm_utilization(sg), mxu = mxu_utilization(sg);

    if (!(mxu > MXU_HIGH && hbm < HBM_LOW))
        return 0;
    put(&t,
        "<p>Your program is likely bottlenecked by <b>Compute Operations</b>: High MXU "
        "utilization of <b>%.1f%%</b> and low HBM Bandwidth utilization of <b>%.1f%%</b> "
        "indicates that the primary bottleneck is the raw processing power of the hardware. "
        "Please consider the following optimizations: </p><ul><li><b>Use Mixed "
        "Precision:</b> Using bfloat16 for computations and storing weights can "
        "significantly speed up matrix multiplications and reduce memory usage. Ensure that "
        "this does not negatively impact your model's convergence.</li><li><b>Optimize Your "
        "Kernels:</b> If you are using custom operations, profile them to identify any "
        "inefficiencies. For standard operations, ensure you are using the latest version "
        "of your framework and libraries (e.g., CUDA, cuDNN for GPUs) which often include "
        "optimized kernels.</li><li><b>Experiment with Batch Size:</b> While a large batch "
        "size can improve hardware utilization, an excessively large batch size might not "
        "always be optimal. Experiment with different batch sizes to find the sweet spot "
        "for your specific model and hardware.</li><li><b>Switching to a Mixture of Experts "
        "(MoE) Strategy:</b> Consider switching to a Mixture of Experts (MoE) architecture "
        "by replacing one massive FFN with several smaller expert networks to leverage "
        "SparseCores. The SparseCore handles the gating logic\xe2\x80\x94"
        "deciding which specific expert should handle which token. It performs the routing "
        "(scatter/gather). It effectively trades excess Compute (MXU) load for Memory "
        "Bandwidth and Sparse Core utilization.</li></ul>",
        mxu, hbm);
    return add(r, "ComputeBoundRule", &t);
}

static int data_shuffle_bound_rule(struct signals *sg, struct ss_report *r)
{
    struct text t = {0};
    double pct = avg_category_percent(sg->os, is_data_shuffle);

    if (!(pct >= DATA_SHUFFLE_THRESHOLD))
        return 0;
    put(&t,
        "<p>Your program is likely bottlenecked by <b>Data Shuffle operations (e.g., sort, "
        "gather, scatter)</b>. An average of <b>%.1f%%</b> of each step is spent on these "
        "operations. Please consider the following optimizations:</p><ul><li><b>Optimize "
        "Gather, Scatter Operations:</b> If gather, scatter operations are the bottleneck, "
        "review their implementation. Ensure that the dimensions of tensors involved in "
        "gather and scatter operations are multiples of 128 (common for most TPUs).</li></ul>",
        pct);
    return add(r, "DataShuffleBoundRule", &t);
}

static int data_transfer_bound_rule(struct signals *sg, struct ss_report *r)
{
    struct text t = {0};
    double enq = enqueue_percent_of_input(sg);

    if (!is_input_bound(sg) || !(enq >= DATA_TRANSFER_THRESHOLD))
        return 0;
    put(&t,
        "<p>Your program is likely bottlenecked by <b>data transfer</b> between Host and "
        "Device: <b>%.1f%% of the total step time</b> is spent on enqueuing data to the "
        "device. Please consider the following optimizations:</p><ul><li><b>Combine small "
        "data chunks:</b> Transferring many small chunks of data can be inefficient. Try to "
        "batch them into fewer, larger transfers.</li><li><b>Check transfer size:</b> "
        "Ensure the size of data being transferred in each batch is optimal for the "
        "hardware.</li><li><b>Use prefetching:</b> Overlap data transfer with "
        "computation.</li></ul>",
        sg->input_percent * enq / 100);
    return add(r, "DataTransferBoundRule", &t);
}

static int debug_print_rule(struct signals *sg, struct ss_report *r)
{
    struct text t = {0};
    double max = 0.0;
    uint32_t i;
    int any = 0, rc;

    if ((rc = load_fractions(sg, "debug_print", &sg->debug, &sg->have_debug)) != 0)
        return rc;
    for (i = 0; i < sg->debug.nhosts; i++) {
        double x;
        if (sg->debug.hosts[i].n == 0)
            continue;
        x = host_avg_percent(&sg->debug.hosts[i]);
        if (x >= DEBUG_PRINT_THRESHOLD) {
            any = 1;
            if (x > max)
                max = x;
        }
    }
    if (!any)
        return 0;
    put(&t,
        "<p>Your program is likely bottlenecked by <b>debug_print</b> operations: <b> up to "
        "%.1f%% of step time</b> is spent on these operations on some hosts. This often "
        "indicates the debug print operations causes busy waiting for other workers in a "
        "distributed training setup. Please consider the following optimizations:</p><ul>"
        "<li><b>Investigate Hosts with High Debug Print Time:</b> The following hosts have "
        "high debug_print time fraction compared to others:<ul>",
        max);
    for (i = 0; i < sg->debug.nhosts; i++) {
        double x;
        if (sg->debug.hosts[i].n == 0)
            continue;
        x = host_avg_percent(&sg->debug.hosts[i]);
        if (x >= DEBUG_PRINT_THRESHOLD)
            put(&t, "<li>Host <b>%s</b> average debug_print time fraction: <b>%.1f%%</b></li>",
                sg->debug.hosts[i].hostname, x);
    }
    put(&t, "</ul></li><li><b>Check for debug print usage:</b> Check for "
            "<code>jax.debug.print</code> calls in your code.</li></ul>");
    return add(r, "DebugPrintRule", &t);
}

static int host_processing_bound_rule(struct signals *sg, struct ss_report *r)
{
    struct text t = {0};
    double ne = non_enqueue_percent_of_input(sg);

    if (!is_input_bound(sg) || !(ne >= HOST_PROCESSING_THRESHOLD))
        return 0;
    put(&t,
        "<p>Your program is likely bottlenecked by <b>Host-side Processing</b> in the input "
        "pipeline: <b>%.1f%% of the total step time</b> is spent on host-side input data "
        "processing. Please consider the following optimizations:</p><ul><li><b>Optimize "
        "Data Reading:</b> Ensure efficient file reading patterns. Use prefetching and "
        "interleaving to load data in parallel and in advance.</li><li><b>Parallelize Data "
        "Preprocessing:</b> Utilize parallel processing techniques for CPU-bound "
        "preprocessing steps.</li><li><b>Offline Preprocessing:</b> For static datasets, "
        "consider performing expensive preprocessing steps offline and saving the "
        "results.</li><li><b>Tuning Parameters:</b> Experiment with buffer sizes, the number "
        "of parallel threads, and prefetch distances in your input pipeline to find the "
        "best settings.</li></ul>",
        sg->input_percent * ne / 100);
    return add(r, "HostProcessingBoundRule", &t);
}

static int input_bound_rule(struct signals *sg, struct ss_report *r)
{
    struct text t = {0};

    if (!is_input_bound(sg) || !(fabs(non_enqueue_percent_of_input(sg)) < ZERO_EPSILON) ||
        !(fabs(enqueue_percent_of_input(sg)) < ZERO_EPSILON))
        return 0;
    put(&t,
        "<p>Your program is likely <b>input-bound</b> : <b>%.1f%% of step time</b> is spent "
        "on input operations. Please consider the following documentations to optimize your "
        "input pipeline:</p><ul></ul>",
        sg->input_percent);
    return add(r, "InputBoundRule", &t);
}

static int memory_bound_rule(struct signals *sg, struct ss_report *r)
{
    struct text t = {0};
    double hbm = hbm_utilization(sg), mxu = mxu_utilization(sg);

    if (!(hbm > HBM_HIGH && mxu < MXU_LOW))
        return 0;
    put(&t,
        "<p>Your program is likely bottlenecked by <b>Memory Operations</b>: High HBM "
        "Bandwidth utilization of <b>%.1f%%</b> and low MXU utilization of <b>%.1f%%</b> "
        "indicates that processors are often waiting for data. Please consider the "
        "following optimizations:</p><ul><li><b>Increase the Batch Size:</b> A larger batch "
        "size increases the computational work (the matrix multiplications in your model) "
        "done for each data loading step. This improves the ratio of computation to memory "
        "access, which should directly increase MXU utilization.</li><li><b>Utilize "
        "Gradient Accumulation:</b> This technique processes several smaller batches "
        "sequentially and only updates the model weights after accumulating the gradients "
        "from all of them. This simulates a larger effective batch size without a "
        "proportional increase in memory usage.</li><li><b>Increase Model Depth or "
        "Width:</b> Make the model larger by adding more layers or increasing the size of "
        "the hidden dimensions to improve the MXU utilization.</li><li><b>Optimize the Data "
        "Format:</b> Store your dataset in a format optimized for high-throughput reads, "
        "such as TFRecord for TensorFlow or Petastorm for PyTorch. These formats are more "
        "efficient than reading individual image or text files.</li></ul>",
        hbm, mxu);
    return add(r, "MemoryBoundRule", &t);
}

static int tensor_core_idle_bound_rule(struct signals *sg, struct ss_report *r)
{
    struct text t = {0};
    double pct;

    /* TpuStepTimeBreakdown unpacks only on TPU runs */
    if (!is_latency_bound(sg) || sg->os->hardware_type != HW_TPU)
        return 0;
    pct = sg->ip.step_time.avg == 0 ? 0.0 : sg->ip.tc_idle.avg / sg->ip.step_time.avg * 100.0;
    if (!(pct > TC_IDLE_THRESHOLD))
        return 0;
    put(&t,
        "<p>Your program is likely bottlenecked by <b>TensorCore Idle Time</b>: High "
        "TensorCore idle time percentage of <b>%.1f%%</b> indicates that TensorCores are "
        "spending a significant amount of time waiting, not working. Please consider the "
        "following optimizations: </p><ul><li><b>Reduce Kernel Launch Overhead:</b> Batch "
        "small operations into larger ones to reduce the number of kernel launches.</li>"
        "<li><b>Minimize Python Overhead:</b> Enclose more operations within compiled graphs "
        "or functions to reduce Python interpreter overhead between steps.</li><li><b>Avoid "
        "Small CPU Ops:</b> Shift small, frequent operations from the CPU to the device if "
        "possible.</li><li><b>Use Asynchronous Operations:</b> Employ asynchronous execution "
        "for tasks like checkpointing or metric logging to prevent blocking device "
        "execution.</li></ul>",
        pct);
    return add(r, "TensorCoreIdleBoundRule", &t);
}

int ss_run(const struct host_list *hl, const struct op_stats *os, enum ss_rule_set rules,
           struct ss_report *r, struct xp_err *err)
{
    static int (*const all[])(struct signals *, struct ss_report *) = {barrier_cores_rule,
                                                                       collective_bound_rule,
                                                                       compute_bound_rule,
                                                                       data_shuffle_bound_rule,
                                                                       data_transfer_bound_rule,
                                                                       debug_print_rule,
                                                                       host_processing_bound_rule,
                                                                       input_bound_rule,
                                                                       memory_bound_rule,
                                                                       tensor_core_idle_bound_rule,
                                                                       NULL};
    struct signals sg;
    int i, rc = 0;

    memset(r, 0, sizeof(*r));
    memset(&sg, 0, sizeof(sg));
    sg.hl = hl;
    sg.os = os;
    sg.err = err;
    if ((rc = ip_analyze(os, &sg.ip)) != 0)
        return xp_err_set(err, rc, "smart suggestions: out of memory");
    sg.input_percent =
        os->hardware_type == HW_TPU ? tpu_input_percent(&sg.ip) : sg.ip.input_percent_total;
    for (i = 0; rc == 0 && all[i] != NULL; i++) {
        if (rules == SS_3P_RULES && all[i] != barrier_cores_rule)
            continue;
        rc = all[i](&sg, r);
        if (rc == -ENOMEM)
            xp_err_set(err, rc, "smart suggestions: out of memory");
    }
    ip_free(&sg.ip);
    ef_free(&sg.barrier);
    ef_free(&sg.debug);
    return rc;
}

void ss_free(struct ss_report *r)
{
    uint32_t i;

    for (i = 0; i < r->n; i++)
        free(r->v[i].text);
    memset(r, 0, sizeof(*r));
}
