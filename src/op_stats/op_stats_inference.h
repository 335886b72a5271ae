/*
 * op_stats_inference.h - XProf's InferenceStats: the requests and batches of
 * a serving run per model, for the overview page's inference latency table
 * and the inference_profile tool.
 *
 * op_stats_inference.c          one host: the requests of its /host:CPU plane
 *                               and their device / transfer times
 *                               (GenerateInferenceStats, inference_stats.cc)
 * op_stats_inference_combine.c  all hosts of a snapshot: model ids merged and
 *                               requests regrouped by model
 *                               (inference_stats_combiner.cc,
 *                               inference_stats_grouping.cc), once per snapshot
 * op_stats_inference_aggregate.c the per-model averages, per batch size
 *                               results and tensor pattern results
 *                               (AggregatePerModelInferenceStats,
 *                               GenerateTensorTransferAggregatedResult)
 * op_stats_inference_sample.c   the requests and batches a table shows
 *                               (inference_stats_sampler.cc)
 * op_stats_inference_latency.c  the latency percentiles
 *                               (compute_inference_latency.cc)
 *
 * The overview page asks for it only for a run that is not training, as
 * overview_page_processor.cc does; inference_profile.json always.
 * Invariants: a tensor pattern field is 1 + an index into the owner's
 * pattern table, 0 for none; related batch ids of a request are
 * related[related_first .. related_first + nrelated) of its owner.
 */
#ifndef XPROFS_OP_STATS_INFERENCE_H
#define XPROFS_OP_STATS_INFERENCE_H

#include <stdint.h>

#include "base/arena.h"
#include "base/err.h"
#include "xplane/group.h"
#include "session/session.h"
#include "reader/xspace.h"

/* RequestDetail. */
struct inf_request {
    int64_t request_id;                 /* group id of the request */
    int32_t model_index;                /* index into the model ids, -1 = none */
    int32_t host_id;                    /* host index in the snapshot */
    uint64_t start_ps;                  /* request start */
    uint64_t end_ps;                    /* request end */
    uint64_t device_time_ps;            /* device compute, not overlapped */
    uint64_t read_from_device_time_ps;  /* device-to-host transfers */
    uint64_t write_to_device_time_ps;   /* host-to-device transfers */
    uint64_t batching_request_delay_ps; /* first batch start - request start (wraps) */
    int32_t batching_request_size;      /* batching_input_task_size of its schedule */
    uint32_t tensor_pattern;            /* its own tensor pattern: 1 + index, 0 none */
    uint64_t tensor_time_ps;            /* linearize/delinearize time of it */
    uint64_t host_preprocessing_ps;     /* request start -> first TPU execute */
    uint64_t host_batch_formation_ps;   /* batch schedule -> first concat input */
    uint64_t host_runtime_ps;           /* TPU execute -> program launch */
    uint64_t host_postprocessing_ps;    /* last callback (or device end) -> end */
    double idle_time_ps;                /* none of the above (a double, as XProf's) */
    uint32_t related_first;             /* related batch ids: first in the owner's pool */
    uint32_t nrelated;                  /* and their count (sorted ascending) */
};

/* BatchDetail. */
struct inf_batch {
    int64_t batch_id;                 /* group id of the ProcessBatch */
    int32_t model_index;              /* its first request's model (0 if none found) */
    int32_t host_id;                  /* host index in the snapshot */
    uint64_t start_ps;                /* ProcessBatch start */
    uint64_t end_ps;                  /* ProcessBatch end */
    uint64_t batch_delay_ps;          /* start - its first request's start (wraps) */
    uint64_t device_time_ps;          /* device compute, not overlapped */
    int32_t padding_amount;           /* padding_amount stat */
    int32_t batch_size_after_padding; /* batch_size_after_padding stat */
    uint32_t tensor_pattern;          /* 1 + pattern index, 0 none */
    uint64_t tensor_time_ps;          /* linearize/delinearize time */
};

/* BatchingParameters of one model id (TFstreamz). */
struct inf_params {
    const char *model_id;            /* the model id it belongs to */
    int64_t num_batch_threads;       /* num_batch_threads */
    int64_t batch_timeout_micros;    /* batch_timeout_micros */
    int64_t max_batch_size;          /* max_batch_size */
    int64_t max_enqueued_batches;    /* max_enqueued_batches */
    const char *allowed_batch_sizes; /* allowed_batch_sizes ("" if unset) */
};

/* PerHostInferenceStats and the host's ModelIdDatabase. */
struct inf_host {
    struct arena arena;           /* model id strings */
    const char **model_ids;       /* by index, in order of first use */
    uint32_t nmodel_ids;          /* entries in model_ids */
    uint32_t model_ids_cap;       /* allocated entries */
    struct inf_request *requests; /* sorted by (duration, start) */
    uint32_t nrequests;           /* entries in requests */
    struct inf_batch *batches;    /* sorted by (duration, start) */
    uint32_t nbatches;            /* entries in batches */
    int64_t *related;             /* pool of the requests' related batch ids */
    uint32_t nrelated;            /* entries in related */
    const char **patterns;        /* TensorPatternDatabase (strings in arena) */
    uint32_t npatterns;           /* entries in patterns */
    struct inf_params *params;    /* batching parameters by model id */
    uint32_t nparams;             /* entries in params */
};

#define INF_NTENSOR_PERCENTILES 6

/* TensorPatternResult. */
struct inf_tensor_result {
    uint32_t pattern;                          /* pattern index */
    uint64_t count;                            /* occurrences */
    uint64_t time_ps[INF_NTENSOR_PERCENTILES]; /* at 50, 75, 90, 95, 99, 99.9 % */
};

/* PerBatchSizeAggregatedResult. */
struct inf_batch_size {
    int32_t batch_size;         /* batch_size_after_padding */
    struct inf_request request; /* average request of this size */
    struct inf_batch batch;     /* average batch of this size */
    double request_throughput;  /* share of the model's request throughput */
    double batch_throughput;    /* share of the model's batch throughput */
};

/* PerModelInferenceStats. */
struct inf_model {
    const char *id;                    /* model id ("ALL" when the run names none) */
    struct inf_request *requests;      /* sorted by (duration, start) */
    uint32_t nrequests;                /* entries in requests */
    double request_throughput;         /* requests per second over their span */
    double request_average_latency_us; /* mean request duration */
    struct inf_batch *batches;         /* sorted by (duration, start) */
    uint32_t nbatches;                 /* entries in batches */
    double batch_throughput;           /* batches per second over their span */
    double batch_average_latency_us;   /* mean batch duration */
    struct inf_request avg_request;    /* aggregated_request_detail */
    struct inf_batch avg_batch;        /* aggregated_batch_detail */
    struct inf_batch_size *sizes;      /* per batch size, ascending */
    uint32_t nsizes;                   /* entries in sizes */
    struct inf_tensor_result *tensors; /* per tensor pattern, ascending index */
    uint32_t ntensors;                 /* entries in tensors */
};

/* InferenceStats after RegroupInferenceStatsByModel. */
struct inference_stats {
    struct arena arena;        /* model ids, patterns, parameters */
    struct inf_model *models;  /* by model index */
    uint32_t nmodels;          /* entries in models */
    int64_t *related;          /* pool of every request's related batch ids */
    uint32_t nrelated;         /* entries in related */
    const char **patterns;     /* combined TensorPatternDatabase */
    uint32_t npatterns;        /* entries in patterns */
    struct inf_params *params; /* combined batching parameters */
    uint32_t nparams;          /* entries in params */
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

/* AggregatePerModelInferenceStats and GenerateTensorTransferAggregatedResult
 * for every model of st (called by inference_combine). Returns 0 or -ENOMEM. */
int inference_aggregate(struct inference_stats *st);

/* PercentileSelector: the rows a table shows, as indexes into the sorted
 * data, with their percentile. */
struct inf_pick {
    uint32_t index;    /* into the model's requests or batches */
    double percentile; /* 100 * rank / n */
};

/* SamplePerModelInferenceStats: requests of m ordered by column (XProf's
 * column labels: "Latency" and unknown names order by latency) and picked;
 * *picks is malloc'd (free it), *n its length. Returns 0 or -ENOMEM. */
int inference_sample_requests(const struct inf_model *m, const char *column,
                              struct inf_pick **picks, uint32_t *n);
int inference_sample_batches(const struct inf_model *m, const char *column, struct inf_pick **picks,
                             uint32_t *n);

/* CalculateBatchingEfficiency: (size - padding) / size, 0 for size 0. */
double inference_batching_efficiency(const struct inf_batch *b);

/* ComputeInferenceLatencyResult. Returns 0 or -ENOMEM. */
int inference_latency(const struct inference_stats *st, struct inference_latency *out);

/* SafeDivide of compute_inference_latency.cc: 0 when count is 0 or
 * |num| < 1e-20, else num / count. */
double inference_safe_divide(int64_t count, double num);

#endif
