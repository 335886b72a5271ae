/*
 * op_stats_inference.h - XProf's InferenceStats, reduced to what the overview
 * page's inference latency table reads.
 *
 * op_stats_inference.c          one host: the requests of its /host:CPU plane
 *                               and their device / transfer times
 *                               (GenerateInferenceStats, inference_stats.cc)
 * op_stats_inference_combine.c  all hosts of a snapshot: model ids merged and
 *                               requests regrouped by model
 *                               (inference_stats_combiner.cc,
 *                               inference_stats_grouping.cc), once per snapshot
 * op_stats_inference_latency.c  the latency percentiles
 *                               (compute_inference_latency.cc)
 *
 * Only the overview page asks for it, and only for a run that is not training,
 * as overview_page_processor.cc does. Batch details, tensor patterns, the host
 * breakdown (preprocess, runtime, postprocess, batch formation, idle), batching
 * parameters and sampling are not computed: none of them reaches the table.
 */
#ifndef XPROFS_OP_STATS_INFERENCE_H
#define XPROFS_OP_STATS_INFERENCE_H

#include <stdint.h>

#include "base/arena.h"
#include "base/err.h"
#include "xplane/group.h"
#include "session/session.h"
#include "reader/xspace.h"

/* RequestDetail: the fields the latency table reads. */
struct inf_request {
    int64_t request_id;                /* group id of the request */
    int32_t model_index;               /* index into the model ids, -1 = none */
    int32_t host_id;                   /* host index in the snapshot */
    uint64_t start_ps;                 /* request start */
    uint64_t end_ps;                   /* request end */
    uint64_t device_time_ps;           /* device compute, not overlapped */
    uint64_t read_from_device_time_ps; /* device-to-host transfers */
    uint64_t write_to_device_time_ps;  /* host-to-device transfers */
};

/* PerHostInferenceStats and the host's ModelIdDatabase. */
struct inf_host {
    struct arena arena;           /* model id strings */
    const char **model_ids;       /* by index, in order of first use */
    uint32_t nmodel_ids;          /* entries in model_ids */
    uint32_t model_ids_cap;       /* allocated entries */
    struct inf_request *requests; /* sorted by (duration, start) */
    uint32_t nrequests;           /* entries in requests */
};

/* PerModelInferenceStats. */
struct inf_model {
    const char *id;                    /* model id ("ALL" when the run names none) */
    struct inf_request *requests;      /* sorted by (duration, start) */
    uint32_t nrequests;                /* entries in requests */
    double request_throughput;         /* requests per second over their span */
    double request_average_latency_us; /* mean request duration */
};

/* InferenceStats after RegroupInferenceStatsByModel. */
struct inference_stats {
    struct arena arena;       /* model ids */
    struct inf_model *models; /* by model index */
    uint32_t nmodels;         /* entries in models */
};

/* One row of latency: LatencyBreakdown. */
struct inf_breakdown {
    double total_us;
    double host_us;
    double device_us;
    double communication_us;
};

#define INF_NPERCENTILES 5

/* OverviewInferenceLatency. nbreakdowns is 0 (no request) or
 * INF_NPERCENTILES + 1: the percentiles, then the average. */
struct inference_latency {
    double percentiles[INF_NPERCENTILES];
    struct inf_breakdown breakdowns[INF_NPERCENTILES + 1];
    uint32_t nbreakdowns;
    double sessions_per_second; /* sum of the models' request throughput */
    double max_latency_us;
    double min_latency_us;
};

/* The requests of one host (host_id = its index in the snapshot) from its
 * decoded profile and grouping. Returns 0 or -ENOMEM; free with
 * inf_host_free. */
int inference_host_stats(const struct xspace *xs, const struct xp_groups *g, int32_t host_id,
                         struct inf_host *out);
void inf_host_free(struct inf_host *h);

/* CombineInferenceStatsResult for hosts[0..n) in order, then
 * RegroupInferenceStatsByModel. Returns 0 or -ENOMEM; free with
 * inference_stats_free. */
int inference_combine(const struct inf_host *hosts, uint32_t n, struct inference_stats *out);
void inference_stats_free(struct inference_stats *st);

/* The inference stats of host in snap, or of all its xplane hosts when host
 * is NULL; built once per snapshot and owned by it. */
int snapshot_inference_stats(struct snapshot *snap, const char *host,
                             const struct inference_stats **stp, struct xp_err *err);

/* ComputeInferenceLatencyResult. Returns 0 or -ENOMEM. */
int inference_latency(const struct inference_stats *st, struct inference_latency *out);

/* SafeDivide of compute_inference_latency.cc: 0 when count is 0 or
 * |num| < 1e-20, else num / count. */
double inference_safe_divide(int64_t count, double num);

#endif
