/*
 * op_stats_inference_latency.c - the inference latency of the overview page
 * (XProf's ComputeInferenceLatencyResult, compute_inference_latency.cc).
 *
 * Every request of every model is split into host, device and communication
 * time (host = total - device - (read + write)); the requests are sorted by
 * total time and percentile p takes the request at index (int64)(p / 100 *
 * count), a lower bound. The average of the four times (SafeDivide by the
 * count) follows the percentiles as the last breakdown.
 */
#include "op_stats_inference.h"

#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/sort.h"

static const double target_percentiles[INF_NPERCENTILES] = {50.0, 75.0, 90.0, 99.0, 99.9};

double inference_safe_divide(int64_t count, double num)
{
    if (count == 0 || fabs(num) < 1.0e-20)
        return 0.0;
    return num / (double)count;
}

/* A request's breakdown with its position (std::sort is not stable: ties
 * keep the models' order here). */
struct ranked {
    struct inf_breakdown b;
    uint32_t pos;
};

static int ranked_cmp(const void *x, const void *y)
{
    const struct ranked *a = x, *b = y;

    if (a->b.total_us != b->b.total_us)
        return a->b.total_us < b->b.total_us ? -1 : 1;
    return a->pos < b->pos ? -1 : a->pos > b->pos;
}

/* ComputeBreakdownFromSessionRun. */
static struct inf_breakdown breakdown(const struct inf_request *r)
{
    struct inf_breakdown b;

    b.total_us = (double)(r->end_ps - r->start_ps) / 1e6;
    b.device_us = (double)r->device_time_ps / 1e6;
    b.communication_us = (double)(r->read_from_device_time_ps + r->write_to_device_time_ps) / 1e6;
    b.host_us = b.total_us - b.device_us - b.communication_us;
    return b;
}

int inference_latency(const struct inference_stats *st, struct inference_latency *out)
{
    struct inf_breakdown avg = {0, 0, 0, 0};
    struct ranked *all;
    double per_sec = 0, max_us = 0, min_us = DBL_MAX;
    uint32_t n = 0, m, i, k;

    memset(out, 0, sizeof(*out));
    if (st == NULL || st->nmodels == 0)
        return 0;
    for (m = 0; m < st->nmodels; m++)
        n += st->models[m].nrequests;
    if (n == 0)
        return 0;
    all = malloc(n * sizeof(*all));
    if (all == NULL)
        return -ENOMEM;
    k = 0;
    for (m = 0; m < st->nmodels; m++) {
        const struct inf_model *md = &st->models[m];
        per_sec += md->request_throughput;
        for (i = 0; i < md->nrequests; i++) {
            struct inf_breakdown b = breakdown(&md->requests[i]);
            avg.total_us += b.total_us;
            avg.device_us += b.device_us;
            avg.communication_us += b.communication_us;
            avg.host_us += b.total_us - b.device_us - b.communication_us;
            if (b.total_us > max_us)
                max_us = b.total_us;
            if (b.total_us < min_us)
                min_us = b.total_us;
            all[k].b = b;
            all[k].pos = k;
            k++;
        }
    }
    out->sessions_per_second = per_sec;
    out->max_latency_us = max_us;
    out->min_latency_us = min_us;
    xp_qsort(all, n, sizeof(*all), ranked_cmp);
    for (i = 0; i < INF_NPERCENTILES; i++) {
        int64_t index = (int64_t)(target_percentiles[i] / 100.0 * n);
        out->percentiles[i] = target_percentiles[i];
        out->breakdowns[i] = all[index].b;
    }
    out->breakdowns[INF_NPERCENTILES].total_us = inference_safe_divide(n, avg.total_us);
    out->breakdowns[INF_NPERCENTILES].host_us = inference_safe_divide(n, avg.host_us);
    out->breakdowns[INF_NPERCENTILES].device_us = inference_safe_divide(n, avg.device_us);
    out->breakdowns[INF_NPERCENTILES].communication_us =
        inference_safe_divide(n, avg.communication_us);
    out->nbreakdowns = INF_NPERCENTILES + 1;
    free(all);
    return 0;
}
