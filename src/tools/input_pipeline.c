/*
 * input_pipeline.c - input_pipeline_analyzer.json: XProf's input pipeline
 * payload, a JSON list of 5 tables: max infeed core (empty off TPU), step
 * time, host input ops, recommendation, diagnostics
 * (InputPipelineAnalysisResultToDataTableJson).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "out/datatable.h"
#include "op_stats/op_stats.h"
#include "op_stats/op_stats_input.h"
#include "tool.h"

/* GenerateMaxInfeedCoreTable: TPU runs only (an empty table otherwise); a
 * column per step, rows "Step number" and "Core name" (the core with the
 * longest infeed, "host:device_ordinal", or "unknown"). Returns 0 or
 * -ENOMEM. */
static int max_infeed_core_table(const struct ip_analysis *a, struct dt_table *t)
{
    char id[16];
    uint32_t i;

    if (a->tpu_steps == NULL)
        return 0;
    dt_col(t, "index", "string", "Index");
    for (i = 0; i < a->ntpu_steps; i++) {
        snprintf(id, sizeof(id), "%u", i);
        dt_col_copy(t, id, "string", id);
    }
    dt_row(t);
    dt_str(t, "Step number");
    for (i = 0; i < a->ntpu_steps; i++) {
        snprintf(id, sizeof(id), "%u", a->tpu_steps[i].step_number);
        dt_str(t, id);
    }
    dt_row(t);
    dt_str(t, "Core name");
    for (i = 0; i < a->ntpu_steps; i++) {
        const struct core_details *c = a->tpu_steps[i].max_infeed_core;
        size_t n = c != NULL ? strlen(c->hostname) + 12 : 0;
        char *name = c != NULL ? malloc(n) : NULL;
        if (c == NULL) {
            dt_str(t, "unknown");
            continue;
        }
        if (name == NULL)
            return -ENOMEM;
        snprintf(name, n, "%s:%u", c->hostname, c->device_ordinal);
        dt_str(t, name);
        free(name);
    }
    return 0;
}

static void host_table(const struct ip_analysis *a, struct dt_table *t)
{
    uint32_t i;

    dt_col(t, "opName", "string", "Input Op");
    dt_col(t, "count", "number", "Count");
    dt_col(t, "timeInMs", "number", "Total Time (in ms)");
    dt_col(t, "timeInPercent", "number", "Total Time (as % of total input-processing time)");
    dt_col(t, "selfTimeInMs", "number", "Total Self Time (in ms)");
    dt_col(t, "selfTimeInPercent", "number",
           "Total Self Time (as % of total input-processing time)");
    dt_col(t, "category", "string", "Category");
    for (i = 0; i < a->ninput_ops; i++) {
        const struct ip_input_op *op = &a->input_ops[i];
        dt_row(t);
        dt_str(t, op->name);
        dt_num(t, (double)op->count);
        dt_num(t, op->time_ms);
        dt_num(t, op->time_percent / 100.0);
        dt_num(t, op->self_ms);
        dt_num(t, op->self_percent / 100.0);
        dt_str(t, op->category);
    }
    dt_propf(t, "enqueue_us", "%.3f", a->enqueue_us);
    dt_propf(t, "demanded_file_read_us", "%.3f", a->demanded_file_read_us);
    dt_propf(t, "advanced_file_read_us", "%.3f", a->advanced_file_read_us);
    dt_propf(t, "preprocessing_us", "%.3f", a->preprocessing_us);
    dt_propf(t, "unclassified_nonequeue_us", "%.3f", a->unclassified_non_enqueue_us);
}

static void advice(struct dt_table *t, const char *s)
{
    dt_row(t);
    dt_str(t, s);
}

static void recommendation_table(struct dt_table *t)
{
    dt_col(t, "link", "string", "link");
    advice(t, "Enqueuing data: you may want to combine small input data chunks into fewer but "
              "larger chunks.");
    advice(t, "Data preprocessing: you may increase num_parallel_calls in <a "
              "href=\"https://www.tensorflow.org/api_docs/python/tf/data/Dataset#map\" "
              "target=\"_blank\">Dataset map()</a> or preprocess the data OFFLINE.");
    advice(t, "Reading data from files in advance: you may tune parameters in the following "
              "tf.data API (<a "
              "href=\"https://www.tensorflow.org/api_docs/python/tf/data/Dataset#prefetch\" "
              "target=\"_blank\">prefetch size</a>, <a "
              "href=\"https://www.tensorflow.org/api_docs/python/tf/data/Dataset#interleave\" "
              "target=\"_blank\">interleave cycle_length</a>, <a "
              "href=\"https://www.tensorflow.org/api_docs/python/tf/data/"
              "TFRecordDataset#class_tfrecorddataset\" target=\"_blank\">reader "
              "buffer_size</a>)");
    advice(t, "Reading data from files on demand: you should read data IN ADVANCE using the "
              "following tf.data API (<a "
              "href=\"https://www.tensorflow.org/api_docs/python/tf/data/Dataset#prefetch\" "
              "target=\"_blank\">prefetch</a>, <a "
              "href=\"https://www.tensorflow.org/api_docs/python/tf/data/Dataset#interleave\" "
              "target=\"_blank\">interleave</a>, <a "
              "href=\"https://www.tensorflow.org/api_docs/python/tf/data/"
              "TFRecordDataset#class_tfrecorddataset\" target=\"_blank\">reader buffer</a>)");
    advice(t, "Other data reading or processing: you may consider using the <a "
              "href=\"https://www.tensorflow.org/programmers_guide/datasets\" "
              "target=\"_blank\">tf.data API</a> (if you are not using it now)");
}

static int input_pipeline_produce(struct tool_ctx *ctx, struct out *o)
{
    const struct op_stats *os;
    struct ip_analysis a;
    struct dt_table t[5];
    int rc, i;

    if ((rc = snapshot_op_stats(ctx->snap, ctx->host, &os, ctx->err)) != 0)
        return rc;
    if ((rc = ip_analyze(os, &a)) != 0)
        return xp_err_set(ctx->err, rc, "input_pipeline_analyzer: out of memory");
    for (i = 0; i < 5; i++)
        dt_init(&t[i]);
    rc = max_infeed_core_table(&a, &t[0]);
    ip_step_table(&a, &t[1]);
    host_table(&a, &t[2]);
    recommendation_table(&t[3]);
    ip_diagnostics_table(&t[4], a.warnings, a.nwarnings, NULL, 0);
    for (i = 0; i < 5; i++) {
        if (dt_failed(&t[i]))
            rc = -ENOMEM;
    }
    if (rc == 0)
        dt_write_json_list(t, 5, o);
    for (i = 0; i < 5; i++)
        dt_free(&t[i]);
    ip_free(&a);
    if (rc != 0)
        return xp_err_set(ctx->err, rc, "input_pipeline_analyzer: out of memory");
    return 0;
}

const struct tool tool_input_pipeline_analyzer_json = {
    .file = "input_pipeline_analyzer.json",
    .tag = "input_pipeline_analyzer",
    .scope = TOOL_RUN | TOOL_HOST,
    .listed = tool_listed_xplane,
    .produce = input_pipeline_produce,
};
