/*
 * inference_profile.c - inference_profile.json: XProf's inference tool (tag
 * "inference_profile"; xprof/convert/multi_xspace_to_inference_stats.cc
 * InferenceStatsToDataTableJson) over the run's inference stats
 * (src/op_stats/op_stats_inference.h): a list of DataTables, first the
 * models (sorted by id), then per model its request table, its batch table
 * when some model has batches, and its tensor pattern table when the run has
 * tensor patterns. Rows are the sampled requests / batches
 * (?request_column= / ?batch_column=, XProf's column labels), then one per
 * batch size, then the average. XProf's open-source trace viewer links are
 * empty strings; so are these.
 *
 * hosts/<host>/inference_profile.json is that host alone. A run without
 * inference requests answers what XProf answers then (the model "ALL" with
 * an all-zero average row) and says why in errors.txt. XProf serves the
 * tool without listing it in tools.json.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "op_stats/op_stats_inference.h"
#include "out/datatable.h"
#include "tool.h"

#define IP "inference_profile.json"

static const struct query_key inference_keys[] = {
    {"request_column", Q_STRING, 0, 0},
    {"batch_column", Q_STRING, 0, 0},
    {NULL, 0, 0, 0},
};

/* PicoToMilli. */
static double ms(double ps)
{
    return ps / 1e9;
}

/* AddRequestDetails. */
static void request_row(struct dt_table *t, const struct inf_request *r, const char *percentile,
                        const char *id, int batching, const char *throughput)
{
    dt_row(t);
    dt_str(t, percentile);
    dt_str(t, id);
    dt_num(t, ms((double)(r->end_ps - r->start_ps)));
    if (batching) {
        dt_num(t, r->batching_request_size);
        dt_num(t, ms((double)r->batching_request_delay_ps));
        dt_str(t, throughput);
    }
    dt_num(t, ms((double)r->host_preprocessing_ps));
    dt_num(t, ms((double)r->host_runtime_ps));
    dt_num(t, ms((double)r->write_to_device_time_ps));
    dt_num(t, ms((double)r->read_from_device_time_ps));
    dt_num(t, ms((double)r->device_time_ps));
    dt_num(t, ms((double)r->host_postprocessing_ps));
    dt_num(t, ms(r->idle_time_ps));
    dt_str(t, ""); /* Linkify(GenerateTraceViewerUrl(...)) is "" in open source */
}

/* CreateRequestDataTable. */
static int request_table(struct dt_table *t, const struct inf_model *m, const char *column,
                         int batching)
{
    struct inf_pick *picks;
    uint32_t n, i;
    char a[64], b[64];

    if (inference_sample_requests(m, column, &picks, &n) != 0)
        return -ENOMEM;
    dt_propf(t, "throughput", "%.1f", m->request_throughput);
    dt_propf(t, "averageLatencyMs", "%.3f", m->request_average_latency_us / 1e3);
    dt_col(t, "percentile", "string", "Percentile");
    dt_col(t, "request_id", "string", "Request ID");
    dt_col(t, "latency_ms", "number", "Latency");
    if (batching) {
        dt_col(t, "batching_request_size", "number", "Request size");
        dt_col(t, "host_batch_formation", "number", "Host batch formation");
        dt_col(t, "throughput", "string", "Throughput");
    }
    dt_col(t, "host_preprocessing", "number", "Host preprocess");
    dt_col(t, "host_runtime", "number", "Host runtime");
    dt_col(t, "data_transfer_h2d", "number", "Data transfer H2D");
    dt_col(t, "data_transfer_d2h", "number", "Data transfer D2H");
    dt_col(t, "device_compute", "number", "Device compute");
    dt_col(t, "host_postprocess", "number", "Host postprocess");
    dt_col(t, "idle time", "number", "Idle time");
    dt_col(t, "trace_viewer_url", "string", "Trace Viewer URL");
    for (i = 0; i < n; i++) {
        const struct inf_request *r = &m->requests[picks[i].index];
        snprintf(a, sizeof(a), "%.3f", picks[i].percentile);
        snprintf(b, sizeof(b), "%lld", (long long)r->request_id);
        request_row(t, r, a, b, batching, "N/A");
    }
    free(picks);
    for (i = 0; i < m->nsizes; i++) {
        snprintf(a, sizeof(a), "Batch size %d", (int)m->sizes[i].batch_size);
        snprintf(b, sizeof(b), "%.1f", m->sizes[i].request_throughput);
        request_row(t, &m->sizes[i].request, a, "N/A", batching, b);
    }
    snprintf(b, sizeof(b), "%.1f", m->request_throughput);
    request_row(t, &m->avg_request, "Average", "N/A", batching, b);
    return 0;
}

/* AddBatchDetails. */
static void batch_row(struct dt_table *t, const struct inf_batch *b, const char *percentile,
                      const char *id, const char *throughput)
{
    dt_row(t);
    dt_str(t, percentile);
    dt_str(t, id);
    dt_num(t, ms((double)(b->end_ps - b->start_ps)));
    dt_num(t, b->padding_amount);
    dt_num(t, b->batch_size_after_padding);
    dt_num(t, inference_batching_efficiency(b));
    dt_num(t, ms((double)b->batch_delay_ps));
    dt_str(t, throughput);
    dt_num(t, ms((double)b->device_time_ps));
    dt_str(t, "");
}

/* The batching parameters of model id, or NULL. */
static const struct inf_params *params_of(const struct inference_stats *st, const char *id)
{
    uint32_t i;

    for (i = 0; i < st->nparams; i++) {
        if (strcmp(st->params[i].model_id, id) == 0)
            return &st->params[i];
    }
    return NULL;
}

/* CreateBatchDataTable. */
static int batch_table(struct dt_table *t, const struct inference_stats *st,
                       const struct inf_model *m, const char *column)
{
    static const char *const cols[10][3] = {
        {"percentile", "string", "Percentile"},
        {"batch_id", "string", "Batch ID"},
        {"latency", "number", "Latency"},
        {"padding_amount", "number", "Padding amount"},
        {"batch_size_after_padding", "number", "Batch size after padding"},
        {"batching_efficiency", "number", "Batching efficiency"},
        {"batching_delay_us", "number", "Batching delay"},
        {"throughput", "string", "Throughput"},
        {"device_compute", "number", "Device compute"},
        {"trace_viewer_url", "string", "Trace Viewer URL"},
    };
    const struct inf_params *pr = params_of(st, m->id);
    struct inf_pick *picks;
    uint32_t n, i;
    char a[64], b[64];

    if (inference_sample_batches(m, column, &picks, &n) != 0)
        return -ENOMEM;
    for (i = 0; i < 10; i++)
        dt_col(t, cols[i][0], cols[i][1], cols[i][2]);
    for (i = 0; i < n; i++) {
        const struct inf_batch *bt = &m->batches[picks[i].index];
        snprintf(a, sizeof(a), "%.3f", picks[i].percentile);
        snprintf(b, sizeof(b), "%lld", (long long)bt->batch_id);
        batch_row(t, bt, a, b, "N/A");
    }
    free(picks);
    for (i = 0; i < m->nsizes; i++) {
        snprintf(a, sizeof(a), "Batch size %d", (int)m->sizes[i].batch_size);
        snprintf(b, sizeof(b), "%.1f", m->sizes[i].batch_throughput);
        batch_row(t, &m->sizes[i].batch, a, "N/A", b);
    }
    snprintf(b, sizeof(b), "%.1f", m->batch_throughput);
    batch_row(t, &m->avg_batch, "Aggregated", "N/A", b);
    dt_propf(t, "throughput", "%.1f", m->batch_throughput);
    dt_propf(t, "averageLatencyMs", "%.3f", m->batch_average_latency_us / 1e3);
    if (pr == NULL) {
        dt_prop(t, "hasBatchingParam", "false");
        return 0;
    }
    dt_prop(t, "hasBatchingParam", "true");
    dt_propf(t, "batchingParamNumBatchThreads", "%lld", (long long)pr->num_batch_threads);
    dt_propf(t, "batchingParamMaxBatchSize", "%lld", (long long)pr->max_batch_size);
    dt_propf(t, "batchingParamBatchTimeoutMicros", "%lld", (long long)pr->batch_timeout_micros);
    dt_propf(t, "batchingParamMaxEnqueuedBatches", "%lld", (long long)pr->max_enqueued_batches);
    dt_prop(t, "batchingParamAllowedBatchSizes", pr->allowed_batch_sizes);
    return 0;
}

/* CreateTensorPatternDataTable; the percentile text of
 * GenerateTensorPatternPercentileText ("%.2f%: <std::to_string ms>ms"). */
static int tensor_table(struct dt_table *t, const struct inference_stats *st,
                        const struct inf_model *m)
{
    static const double pct[INF_NTENSOR_PERCENTILES] = {50.0, 75.0, 90.0, 95.0, 99.0, 99.9};
    uint32_t i, j;
    char text[INF_NTENSOR_PERCENTILES * 48];

    dt_col(t, "id", "number", "ID");
    dt_col(t, "tensor_pattern", "string", "Tensor Pattern");
    dt_col(t, "count", "number", "Number of Occurrence");
    dt_col(t, "percentile", "string", "Linearize/Delinearize latency");
    for (i = 0; i < m->ntensors; i++) {
        const struct inf_tensor_result *r = &m->tensors[i];
        size_t off = 0;
        if (r->pattern >= st->npatterns)
            continue;
        for (j = 0; j < INF_NTENSOR_PERCENTILES; j++)
            off += (size_t)snprintf(text + off, sizeof(text) - off, "%s%.2f%%: %fms",
                                    j ? "<br>" : "", pct[j], ms((double)r->time_ps[j]));
        dt_row(t);
        dt_num(t, i);
        dt_str(t, st->patterns[r->pattern]);
        dt_num(t, (double)r->count);
        dt_str(t, text);
    }
    return 0;
}

static int id_cmp(const void *x, const void *y)
{
    const struct inf_model *a = *(const struct inf_model *const *)x;
    const struct inf_model *b = *(const struct inf_model *const *)y;

    return strcmp(a->id, b->id);
}

/* GenerateMetaDataTable and GeneratePerModelInferenceDataTables into
 * tables (room for 1 + 3 * nmodels); returns how many were made, or
 * -ENOMEM. */
static int build_tables(const struct inference_stats *st, const struct query *q,
                        struct dt_table *tables)
{
    const struct inf_model **sorted = malloc((st->nmodels + 1) * sizeof(*sorted));
    const char *rcol = query_get(q, "request_column"), *bcol = query_get(q, "batch_column");
    int batching = 0, patterns = st->npatterns > 0, n = 1, rc = 0;
    uint32_t i;

    if (sorted == NULL)
        return -ENOMEM;
    for (i = 0; i < st->nmodels; i++) {
        sorted[i] = &st->models[i];
        batching |= st->models[i].nbatches > 0;
    }
    qsort(sorted, st->nmodels, sizeof(*sorted), id_cmp);
    dt_init(&tables[0]);
    dt_prop(&tables[0], "hasBatching", batching ? "true" : "false");
    dt_prop(&tables[0], "hasTensorPattern", "false"); /* sic: XProf writes "false" always */
    dt_col(&tables[0], "model_name", "string", "Model Name");
    for (i = 0; i < st->nmodels; i++) {
        dt_row(&tables[0]);
        dt_str(&tables[0], sorted[i]->id);
    }
    for (i = 0; i < st->nmodels && rc == 0; i++) {
        dt_init(&tables[n]);
        rc = request_table(&tables[n++], sorted[i], rcol != NULL ? rcol : "", batching);
        if (rc == 0 && batching) {
            dt_init(&tables[n]);
            rc = batch_table(&tables[n++], st, sorted[i], bcol != NULL ? bcol : "");
        }
        if (rc == 0 && patterns) {
            dt_init(&tables[n]);
            rc = tensor_table(&tables[n++], st, sorted[i]);
        }
    }
    free(sorted);
    for (i = 0; rc == 0 && i < (uint32_t)n; i++) {
        if (dt_failed(&tables[i]))
            rc = -ENOMEM;
    }
    if (rc != 0) {
        for (i = 0; i < (uint32_t)n; i++)
            dt_free(&tables[i]);
        return rc;
    }
    return n;
}

/* The errors.txt lines: why the answer is empty. */
static void note_empty(struct tool_ctx *ctx, const struct inference_stats *st)
{
    uint32_t i, nreq = 0, nbat = 0;
    const char *what = ctx->host != NULL ? ctx->host : "this run";

    for (i = 0; i < st->nmodels; i++) {
        nreq += st->models[i].nrequests;
        nbat += st->models[i].nbatches;
    }
    if (st->nmodels == 0)
        snapshot_log(ctx->snap, IP ": %s has no XPlane host, so XProf gives no inference tables",
                     what);
    else if (nreq == 0 && nbat == 0)
        snapshot_log(ctx->snap,
                     IP ": %s has no inference requests (no SessionRun, BatchingSessionRun, "
                        "TfrtModelRun, ServingModelRun, RunGraph or user-defined root _r = -1 "
                        "with a group on /host:CPU), so XProf's answer is the model \"ALL\" with "
                        "an all-zero average row",
                     what);
}

static int inference_produce(struct tool_ctx *ctx, struct out *o)
{
    const struct inference_stats *st;
    struct dt_table *tables;
    int rc, n, i;

    if ((rc = snapshot_inference_stats(ctx->snap, ctx->host, &st, ctx->err)) != 0)
        return rc;
    tables = calloc(1 + 3 * (size_t)st->nmodels, sizeof(*tables));
    if (tables == NULL)
        return xp_err_set(ctx->err, -ENOMEM, "out of memory");
    n = build_tables(st, ctx->q, tables);
    if (n < 0) {
        free(tables);
        return xp_err_set(ctx->err, n, "out of memory");
    }
    note_empty(ctx, st);
    dt_write_json_list(tables, n, o);
    for (i = 0; i < n; i++)
        dt_free(&tables[i]);
    free(tables);
    return 0;
}

const struct tool tool_inference_profile_json = {
    .file = "inference_profile.json",
    .tag = "inference_profile",
    .scope = TOOL_RUN | TOOL_HOST,
    .keys = inference_keys,
    .listed = tool_listed_xplane,
    .produce = inference_produce,
};
