/*
 * test_agent_steps.c - get_step_trace's and check_host_boundness's answers
 * (src/agent/agent_step_trace.c, agent_host_bound.c) on hand-written tool
 * files: the branches the corpus does not reach (the legacy pod schema,
 * tied bottlenecks, the overview fallback, the duty-cycle and missing-HLO
 * gates, barrier-cores) and JSON of the wrong shape. Each expected value
 * is worked out by hand from XProf's Python.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "agent/agent_pyjson.h"
#include "agent/agent_steps.h"

/* A run of fixed tool files: the JSON text of each, NULL for no data. */
struct fake {
    const char *pod, *ipa, *overview, *profile;
    double barrier_ms;
    long nbarrier;
    int fail; /* the rc every tool answers, when nonzero */
};

static cJSON *fake_tool(void *arg, const char *file, const char *query, int *rc)
{
    const struct fake *f = arg;
    const char *text = NULL;

    (void)query;
    *rc = f->fail;
    if (f->fail)
        return NULL;
    if (strcmp(file, "pod_viewer.json") == 0)
        text = f->pod;
    else if (strcmp(file, "input_pipeline_analyzer.json") == 0)
        text = f->ipa;
    else if (strcmp(file, "overview_page.json") == 0)
        text = f->overview;
    else if (strcmp(file, "op_profile.json") == 0)
        text = f->profile;
    return text ? cJSON_Parse(text) : NULL;
}

static void fake_barriers(void *arg, double *avg_ms, long *count)
{
    const struct fake *f = arg;

    *avg_ms = f->barrier_ms;
    *count = f->nbarrier;
}

/* json.dumps(answer) (no indent) of get_step_trace. */
static char *trace(struct fake *f, const struct pyval *want, const char *core, long long limit,
                   int include)
{
    struct agent_steps_src src = {fake_tool, fake_barriers, f};
    cJSON *answer = NULL;
    char *s;

    assert_int_equal(agent_step_trace_build(&src, "sess", want, core, limit, include, &answer), 0);
    assert_non_null(answer);
    s = pyj_dumps(answer, -1);
    cJSON_Delete(answer);
    return s;
}

static char *bound(struct fake *f, const char *func)
{
    struct agent_steps_src src = {fake_tool, fake_barriers, f};
    cJSON *answer = NULL;
    char *s;

    assert_int_equal(agent_host_boundness_build(&src, "sess", func, &answer), 0);
    assert_non_null(answer);
    s = pyj_dumps(answer, -1);
    cJSON_Delete(answer);
    return s;
}

static void assert_has(const char *s, const char *part)
{
    if (strstr(s, part) == NULL)
        fail_msg("missing %s in %s", part, s);
}

/* Legacy TPU fields: compute 2.0, all-reduce 0.5 + send 0.2 ms of 4.0. */
static void test_pod_legacy_schema(void **state)
{
    struct fake f = {
        "{\"podStatsSequence\": {\"podStatsMap\": [{\"stepNum\": 3, \"podStatsPerCore\": {"
        "\"0\": {\"totalDurationUs\": 4000, \"highFlopsComputeUs\": 1000, \"crsDurationUs\": "
        "500, \"sendDurationUs\": 100},"
        "\"1\": {\"totalDurationUs\": 4000, \"highFlopsComputeUs\": 3000, \"crsDurationUs\": "
        "500, \"sendDurationUs\": 300}}}]}}",
        NULL,
        NULL,
        NULL,
        0,
        0,
        0};
    char *s = trace(&f, NULL, NULL, 20, 0);

    (void)state;
    assert_string_equal(
        s, "{\"step_breakdown\": [{\"step_num\": 3, \"step_time_ms\": 4.0, \"compute_time_ms\": "
           "2.0, \"compute_percent\": 50.0, \"communication_time_ms\": 0.7, "
           "\"communication_percent\": 17.5, \"infeed_time_ms\": 0.0, \"infeed_percent\": 0.0, "
           "\"outfeed_time_ms\": 0.0, \"outfeed_percent\": 0.0, \"bottleneck\": \"Compute\", "
           "\"idle_time_ms\": 1.3, \"idle_percent\": 32.5, \"communication_breakdown_ms\": "
           "{\"all_reduce_ms\": 0.5, \"send_ms\": 0.2, \"recv_ms\": 0.0}}]}");
    free(s);
}

/* Counter.most_common: a tie goes to the first seen; a step whose
 * breakdown is all zero is left out; a core filter keeps one core. */
static void test_pod_bottlenecks_and_filters(void **state)
{
    struct fake f = {
        "{\"podStatsSequence\": {\"podStatsMap\": ["
        "{\"stepNum\": \"7\", \"podStatsPerCore\": {"
        "\"a\": {\"totalDurationUs\": 1000, \"bottleneck\": \"Output\", \"stepBreakdownUs\": "
        "{\"7\": 600}},"
        "\"b\": {\"totalDurationUs\": 1000, \"bottleneck\": \"Input\", \"stepBreakdownUs\": "
        "{\"6\": 600}},"
        "\"c\": {\"totalDurationUs\": 1000, \"bottleneck\": \"Input\", \"stepBreakdownUs\": "
        "{\"6\": 600}},"
        "\"d\": {\"totalDurationUs\": 1000, \"bottleneck\": \"Output\", \"step_breakdown_us\": "
        "{\"7\": 600}}}},"
        "{\"stepNum\": 8, \"podStatsPerCore\": {\"a\": {\"totalDurationUs\": 1000, "
        "\"stepBreakdownUs\": {\"9\": 1000}}}},"
        "\"junk\", {\"stepNum\": 9, \"podStatsPerCore\": [1, 2]}]}}",
        NULL,
        NULL,
        NULL,
        0,
        0,
        0};
    struct pyval seven = {PY_INT, 7, 0, NULL};
    char *s = trace(&f, NULL, NULL, 0, 1);

    (void)state;
    assert_has(s, "\"step_num\": 7, \"step_time_ms\": 1.0");
    assert_has(s, "\"bottleneck\": \"Output\"");
    assert_has(s, "\"total_steps\": 1,");
    assert_has(s, "\"infeed_time_ms\": 0.3, \"infeed_percent\": 30.0, \"outfeed_time_ms\": 0.3");
    assert_has(s, "\"primary_bottleneck\": \"Output\"");
    free(s);
    s = trace(&f, &seven, "b", 0, 0);
    assert_has(s, "\"infeed_time_ms\": 0.6, \"infeed_percent\": 60.0, \"outfeed_time_ms\": 0.0");
    assert_has(s, "\"bottleneck\": \"Input\"");
    free(s);
}

/* The step table: no step time column (the sum), the infeed percent
 * column, "Idle / Other" the biggest, a string step number kept. */
static void test_input_pipeline(void **state)
{
    struct fake f = {
        "{\"podStatsSequence\": {\"podStatsMap\": []}}",
        "[{\"cols\": [], \"rows\": []}, {\"cols\": [{\"id\": \"stepnum\"}, {\"id\": "
        "\"deviceComputeTimeMs\"}, {\"id\": \"infeedTimeMs\"}, {\"id\": \"otherTimeMs\"}, "
        "{\"id\": \"infeedPercentAverage\"}], \"p\": {\"summary_conclusion\": \"ok\"}, "
        "\"rows\": [{\"c\": [{\"v\": \"s1\"}, {\"v\": 1.0}, {\"v\": 0.5}, {\"v\": 2.5}, "
        "{\"v\": 12.345}]}]}]",
        NULL,
        NULL,
        0,
        0,
        0};
    char *s = trace(&f, NULL, NULL, 20, 1);

    (void)state;
    assert_has(s, "\"step_num\": \"s1\", \"step_time_ms\": 4.0, \"compute_time_ms\": 1.0, "
                  "\"compute_percent\": 25.0");
    assert_has(s, "\"infeed_time_ms\": 0.5, \"infeed_percent\": 12.35");
    assert_has(s, "\"bottleneck\": \"Idle / Other\", \"idle_time_ms\": 2.5, \"idle_percent\": "
                  "62.5}");
    assert_has(s, "\"is_aggregate\": false, \"conclusion\": \"ok\"}");
    free(s);
}

/* No steps anywhere: the overview's averages, stat_step_time in ms. */
static void test_overview_fallback_and_no_data(void **state)
{
    struct fake f = {NULL,
                     NULL,
                     "[{\"p\": {\"stat_step_time\": \"12.5 ms\", \"tc_infeed_ms_average\": "
                     "\"8\", \"num_steps\": \"x\", \"step_count\": 3}}]",
                     NULL,
                     0,
                     0,
                     0};
    char *s = trace(&f, NULL, NULL, 20, 1);

    (void)state;
    assert_string_equal(
        s, "{\"summary\": {\"total_steps\": 3, \"step_time_ms_average\": 12.5, "
           "\"step_time_ms_min\": 12.5, \"step_time_ms_max\": 12.5, \"step_time_ms_stddev\": "
           "0.0, \"compute_time_ms_average\": 4.5, \"compute_percent\": 36.0, "
           "\"communication_time_ms_average\": 0.0, \"communication_percent\": 0.0, "
           "\"infeed_time_ms_average\": 8.0, \"infeed_percent\": 64.0, "
           "\"outfeed_time_ms_average\": 0.0, \"outfeed_percent\": 0.0, \"primary_bottleneck\": "
           "\"Input / Infeed\", \"idle_time_ms_average\": 0.0, \"idle_percent\": 0.0, "
           "\"is_aggregate\": true, \"note\": \"Aggregated overview statistics (individual step "
           "breakdown not available).\"}, \"step_breakdown\": []}");
    free(s);
    f.overview = "{\"not\": \"a list\"}";
    s = trace(&f, NULL, NULL, 20, 1);
    assert_string_equal(s, "{\"status\": \"NO_DATA\", \"message\": \"No step trace data found "
                           "for session 'sess' (the trace may lack step markers). Consider "
                           "using 'list_xplane_events' to get more performance insights.\"}");
    free(s);
    f.fail = 4;
    {
        struct agent_steps_src src = {fake_tool, fake_barriers, &f};
        cJSON *answer = NULL;
        assert_int_equal(agent_step_trace_build(&src, "sess", NULL, NULL, 20, 1, &answer), 4);
        assert_null(answer);
    }
}

#define OVERVIEW(duty, cores)                                                                      \
    "[{\"p\": {\"device_duty_cycle_percent\": \"" duty "\"}}, {\"p\": {\"steptime_ms_average\": "  \
    "\"100.0\"}, \"rows\": [{}, {}, {}, {}, {}, {}, {}, {}, {}, {}]}, {\"p\": "                    \
    "{\"device_core_count\": \"" cores "\"}}]"

/* 10 steps of 100 ms on 8 cores, 7360 ms of matmul: idle ratio 8.7 %. */
static void test_host_bound_duty_cycle_gate(void **state)
{
    struct fake f = {NULL,
                     NULL,
                     OVERVIEW("90.0%", "8"),
                     "{\"byCategory\": {\"children\": [{\"name\": \"matmul\", \"metrics\": "
                     "{\"occurrences\": 1, \"rawTime\": 7360000000000.0}}]}}",
                     0,
                     0,
                     0};
    char *s = bound(&f, NULL);

    (void)state;
    assert_has(s, "\"status\": \"NOT_HOST_BOUND\"");
    assert_has(s, "\"idle_time_ratio_percent\": 8.7,");
    assert_has(s, "\"scaled_compute_time_ms\": 920.0,");
    assert_has(s, "\"reasons\": [\"TPU duty cycle (90.0%) is high and idle ratio is low.\"], "
                  "\"recommendations\": []}");
    free(s);
    f.profile = NULL; /* no HLO data */
    s = bound(&f, NULL);
    assert_has(s, "\"status\": \"UNKNOWN\"");
    assert_has(s, "TPU duty cycle is high (90.0%), but HLO telemetry is missing.");
    free(s);
}

/* Leaves by name and category into compute, HBM, ICI; barrier-cores out
 * of the idle time; a core count of 0 reads as 1. */
static void test_host_bound_times_and_barriers(void **state)
{
    struct fake f = {
        NULL,
        NULL,
        OVERVIEW("15.0%", "0"),
        "{\"byCategory\": {\"children\": [{\"name\": \"All-Reduce.1\", \"metrics\": "
        "{\"occurrences\": 1, \"rawTime\": 50000000000.0}}, {\"name\": \"copy-start\", "
        "\"metrics\": {\"occurrences\": 1, \"rawTime\": 30000000000.0}}, {\"name\": \"x\", "
        "\"xla\": {\"category\": \"convolution\"}, \"metrics\": {\"occurrences\": 2, \"rawTime\": "
        "120000000000.0}}, {\"name\": \"zero\", \"metrics\": {\"occurrences\": 0, \"rawTime\": "
        "9e15}}, {\"name\": \"cat\", \"children\": [{\"name\": \"y\", \"xla\": {\"category\": "
        "\"collective-permute\"}, \"metrics\": {\"occurrences\": 1, \"rawTime\": 1e10}}]}]}}",
        5.0,
        3,
        0};
    char *s = bound(&f, "train_step");

    (void)state;
    assert_has(s, "\"scaled_compute_time_ms\": 120.0, \"scaled_hbm_time_ms\": 30.0, "
                  "\"scaled_ici_time_ms\": 60.0, \"scaled_barrier_time_ms\": 50.0, "
                  "\"pure_idle_time_ms\": 740.0, \"total_duration_ms\": 1000.0, "
                  "\"number_of_steps\": 10, \"core_count\": 1}");
    assert_has(s, "\"idle_time_ratio_percent\": 284.62,");
    assert_has(s, "\"equivalent_idle_chips\": 0.74,");
    assert_has(s, "\"- MXU Idleness (0.0%) is <= 70.0%.\"]");
    free(s);
}

/* No steps: INSUFFICIENT_DATA; an overview of another shape: UNKNOWN. */
static void test_host_bound_without_steps(void **state)
{
    struct fake f = {
        NULL, NULL, "[{\"p\": {}}, {\"p\": {\"steptime_ms_average\": \"0.0\"}}]", NULL, 0, 0, 0};
    char *s = bound(&f, NULL);

    (void)state;
    assert_string_equal(
        s, "{\"status\": \"INSUFFICIENT_DATA\", \"reasons\": [\"Session sess lacks valid step "
           "timing duration telemetry in overview_page.json.\"], \"recommendations\": "
           "[\"Capture a new XProf trace with step profiling enabled to measure host "
           "boundness.\"]}");
    free(s);
    f.overview = "\"text\"";
    s = bound(&f, NULL);
    assert_string_equal(s, "{\"status\": \"UNKNOWN\", \"error\": \"Unexpected overview data "
                           "format for session sess\"}");
    free(s);
    f.overview = NULL;
    s = bound(&f, NULL);
    assert_string_equal(s, "{\"status\": \"UNKNOWN\", \"error\": \"No overview data returned "
                           "for session sess\"}");
    free(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_pod_legacy_schema),
        cmocka_unit_test(test_pod_bottlenecks_and_filters),
        cmocka_unit_test(test_input_pipeline),
        cmocka_unit_test(test_overview_fallback_and_no_data),
        cmocka_unit_test(test_host_bound_duty_cycle_gate),
        cmocka_unit_test(test_host_bound_times_and_barriers),
        cmocka_unit_test(test_host_bound_without_steps),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
