/*
 * test_op_stats_inference.c - the inference latency of the overview page:
 * percentile indexes (lower bound, p / 100 * n), the average appended after
 * the percentiles, SafeDivide's epsilon rule, empty input, and the
 * combination of hosts (model ids renumbered, requests without a model
 * dropped, "ALL" when no host names a model, request throughput) and one
 * host's requests from hand-built profiles (XProf's PriorityTracker with a
 * zero-length event, tpu::System transfer pairs, RunGraph requests, a
 * pre-grouped file without group metadata).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "xplane/group.h"
#include "op_stats/op_stats_inference.h"
#include "pbw.h"
#include "tplane.h"
#include "reader/xspace.h"

#define US 1000000ull /* ps */

/* A request of total/device/read/write microseconds starting at start_us. */
static struct inf_request req(uint64_t start_us, uint64_t total_us, uint64_t dev_us,
                              uint64_t read_us, uint64_t write_us, int32_t model)
{
    struct inf_request r;

    memset(&r, 0, sizeof(r));
    r.model_index = model;
    r.start_ps = start_us * US;
    r.end_ps = (start_us + total_us) * US;
    r.device_time_ps = dev_us * US;
    r.read_from_device_time_ps = read_us * US;
    r.write_to_device_time_ps = write_us * US;
    return r;
}

/* One model holding n requests of totals 10, 20, ... given in reverse order. */
static void one_model(struct inference_stats *st, struct inf_model *m, struct inf_request *r,
                      uint32_t n)
{
    uint32_t i;

    for (i = 0; i < n; i++)
        r[i] = req(1000 * i, 10 * (n - i), n - i, 2, 1, 0);
    memset(st, 0, sizeof(*st));
    memset(m, 0, sizeof(*m));
    m->id = "ALL";
    m->requests = r;
    m->nrequests = n;
    m->request_throughput = 5.5;
    st->models = m;
    st->nmodels = 1;
}

static void test_percentile_index(void **state)
{
    static const uint32_t sizes[] = {1, 7, 10, 1000};
    /* (int64)(p / 100 * n) for p = 50, 75, 90, 99, 99.9 */
    static const int64_t want[4][5] = {
        {0, 0, 0, 0, 0}, {3, 5, 6, 6, 6}, {5, 7, 9, 9, 9}, {500, 750, 900, 990, 999}};
    static const double pct[5] = {50.0, 75.0, 90.0, 99.0, 99.9};
    struct inf_request *r = malloc(1000 * sizeof(*r));
    struct inference_stats st;
    struct inf_model m;
    struct inference_latency lat;
    size_t s;
    int i;

    (void)state;
    assert_non_null(r);
    for (s = 0; s < 4; s++) {
        uint32_t n = sizes[s];
        one_model(&st, &m, r, n);
        assert_int_equal(inference_latency(&st, &lat), 0);
        assert_int_equal(lat.nbreakdowns, 6);
        for (i = 0; i < 5; i++) {
            /* sorted by total: the k-th smallest total is 10 * (k + 1) us */
            double total = 10.0 * (double)(want[s][i] + 1);
            assert_true(lat.percentiles[i] == pct[i]);
            assert_true(lat.breakdowns[i].total_us == total);
            /* device = total / 10, communication = 2 + 1, host = the rest */
            assert_true(lat.breakdowns[i].device_us == total / 10);
            assert_true(lat.breakdowns[i].communication_us == 3.0);
            assert_true(lat.breakdowns[i].host_us == total - total / 10 - 3.0);
        }
        assert_true(lat.max_latency_us == 10.0 * n);
        assert_true(lat.min_latency_us == 10.0);
        assert_true(lat.sessions_per_second == 5.5);
    }
    free(r);
}

/* The average follows the percentiles (index 5) and is not the first
 * breakdown: the overview's "Avg" row shows breakdowns[0], the median. */
static void test_average_last(void **state)
{
    struct inf_request r[4];
    struct inference_stats st;
    struct inf_model m;
    struct inference_latency lat;

    (void)state;
    /* totals 100, 200, 300, 1400: mean 500, median (index 2) 300 */
    r[0] = req(0, 1400, 400, 100, 100, 0);
    r[1] = req(2000, 100, 50, 0, 0, 0);
    r[2] = req(3000, 300, 100, 10, 20, 0);
    r[3] = req(4000, 200, 0, 0, 0, 0);
    memset(&st, 0, sizeof(st));
    memset(&m, 0, sizeof(m));
    m.requests = r;
    m.nrequests = 4;
    st.models = &m;
    st.nmodels = 1;
    assert_int_equal(inference_latency(&st, &lat), 0);
    assert_true(lat.breakdowns[0].total_us == 300.0);
    assert_true(lat.breakdowns[0].host_us == 300.0 - 100.0 - 30.0);
    /* mean of (1400, 100, 300, 200) = 500; device (400 + 50 + 100) / 4;
     * communication (200 + 30) / 4; host (800 + 50 + 170 + 200) / 4 */
    assert_true(lat.breakdowns[5].total_us == 500.0);
    assert_true(lat.breakdowns[5].device_us == 137.5);
    assert_true(lat.breakdowns[5].communication_us == 57.5);
    assert_true(lat.breakdowns[5].host_us == 305.0);
    assert_true(lat.breakdowns[0].total_us != lat.breakdowns[5].total_us);
}

static void test_safe_divide(void **state)
{
    (void)state;
    assert_true(inference_safe_divide(0, 5.0) == 0.0);
    assert_true(inference_safe_divide(4, 2.0) == 0.5);
    /* |num| < 1e-20 reads as 0, either sign */
    assert_true(inference_safe_divide(3, 9.9e-21) == 0.0);
    assert_true(inference_safe_divide(3, -9.9e-21) == 0.0);
    assert_true(inference_safe_divide(2, 1e-19) == 5e-20);
    assert_true(inference_safe_divide(2, -4.0) == -2.0);
}

/* A device time below 1e-20 us in the sum averages to exactly 0; other sums
 * divide normally. */
static void test_average_epsilon(void **state)
{
    struct inf_request r[2];
    struct inference_stats st;
    struct inf_model m;
    struct inference_latency lat;

    (void)state;
    r[0] = req(0, 10, 0, 0, 0, 0);
    r[1] = req(100, 30, 0, 0, 0, 0);
    memset(&st, 0, sizeof(st));
    memset(&m, 0, sizeof(m));
    m.requests = r;
    m.nrequests = 2;
    st.models = &m;
    st.nmodels = 1;
    assert_int_equal(inference_latency(&st, &lat), 0);
    assert_true(lat.breakdowns[5].device_us == 0.0);
    assert_true(lat.breakdowns[5].communication_us == 0.0);
    assert_true(lat.breakdowns[5].total_us == 20.0);
    assert_true(lat.breakdowns[5].host_us == 20.0);
}

static void test_empty(void **state)
{
    struct inference_stats st;
    struct inf_model m[2];
    struct inference_latency lat;

    (void)state;
    memset(&st, 0, sizeof(st));
    assert_int_equal(inference_latency(NULL, &lat), 0);
    assert_int_equal(lat.nbreakdowns, 0);
    assert_int_equal(inference_latency(&st, &lat), 0);
    assert_int_equal(lat.nbreakdowns, 0);
    /* models without requests: no rows either */
    memset(m, 0, sizeof(m));
    st.models = m;
    st.nmodels = 2;
    assert_int_equal(inference_latency(&st, &lat), 0);
    assert_int_equal(lat.nbreakdowns, 0);
    assert_true(lat.sessions_per_second == 0.0);
}

/* Two hosts: host 0 names models x (0) and y (1), host 1 names z (0) and
 * x (1); combined ids x, y, z. A request without a model (-1) is dropped. */
static void test_combine(void **state)
{
    struct inf_host h[2];
    struct inf_request r0[3], r1[2];
    const char *ids0[2] = {"x", "y"}, *ids1[2] = {"z", "x"};
    struct inference_stats st;
    struct inference_latency lat;

    (void)state;
    memset(h, 0, sizeof(h));
    r0[0] = req(0, 100, 10, 0, 0, 0);    /* x */
    r0[1] = req(500, 200, 20, 0, 0, -1); /* no model: dropped */
    r0[2] = req(1000, 300, 30, 0, 0, 1); /* y */
    r1[0] = req(100, 150, 15, 0, 0, 1);  /* x */
    r1[1] = req(2000, 400, 40, 0, 0, 0); /* z */
    h[0].model_ids = ids0;
    h[0].nmodel_ids = 2;
    h[0].requests = r0;
    h[0].nrequests = 3;
    h[1].model_ids = ids1;
    h[1].nmodel_ids = 2;
    h[1].requests = r1;
    h[1].nrequests = 2;
    assert_int_equal(inference_combine(h, 2, &st), 0);
    assert_int_equal(st.nmodels, 3);
    assert_string_equal(st.models[0].id, "x");
    assert_string_equal(st.models[1].id, "y");
    assert_string_equal(st.models[2].id, "z");
    assert_int_equal(st.models[0].nrequests, 2);
    assert_true(st.models[0].requests[0].end_ps == 100 * US);
    assert_true(st.models[0].requests[1].start_ps == 100 * US);
    assert_int_equal(st.models[1].nrequests, 1);
    assert_int_equal(st.models[2].nrequests, 1);
    /* x: 2 requests over [0, 250) us = 8000 per second; mean 125 us */
    assert_true(st.models[0].request_throughput == 2 / 250e-6);
    assert_true(st.models[0].request_average_latency_us == 125.0);
    assert_int_equal(inference_latency(&st, &lat), 0);
    /* totals 100, 150, 300, 400 (the 200 us request is gone): 50% = 300 */
    assert_true(lat.breakdowns[0].total_us == 300.0);
    assert_true(lat.max_latency_us == 400.0);
    inference_stats_free(&st);

    /* no model ids anywhere: one model "ALL" with every request, -1 too */
    h[0].nmodel_ids = 0;
    h[1].nmodel_ids = 0;
    assert_int_equal(inference_combine(h, 2, &st), 0);
    assert_int_equal(st.nmodels, 1);
    assert_string_equal(st.models[0].id, "ALL");
    assert_int_equal(st.models[0].nrequests, 5);
    /* ordered by duration: 100, 150, 200, 300, 400 */
    assert_true(st.models[0].requests[2].end_ps - st.models[0].requests[2].start_ps == 200 * US);
    inference_stats_free(&st);

    /* no host at all */
    assert_int_equal(inference_combine(h, 0, &st), 0);
    assert_int_equal(st.nmodels, 0);
    inference_stats_free(&st);
}

/* ---- hand-built profiles ------------------------------------------------ */

enum { S_R = 1, S_MODEL, S_PT, S_P, S_CT, S_C, S_GROUP, S_COUNT };
static const char *const stat_names[S_COUNT] = {NULL, "_r",  "model_id", "_pt",
                                                "_p", "_ct", "_c",       "group_id"};

static void plane_begin(struct tplane *tp, int64_t id, const char *name, int with_group)
{
    tplane_begin(tp, id, name, stat_names, S_COUNT, S_MODEL, with_group ? 0 : S_GROUP);
}

/* An event of [b, e) us: (stat, value) pairs end with 0; S_MODEL takes a
 * string, the others an int64. */
static void event(struct tplane *tp, const char *name, int64_t b, int64_t e, ...)
{
    va_list ap;

    va_start(ap, e);
    tplane_eventv(tp, name, b * (int64_t)US, (e - b) * (int64_t)US, ap);
    va_end(ap);
}

/* Group the space and compute its requests into *h. */
static void host_stats(struct pbw *space, struct inf_host *h)
{
    struct xp_err err;
    struct xspace *xs;
    struct xp_groups *g;
    char *path = pbw_tmpfile(space->p, space->n, ".xplane.pb");

    free(space->p);
    assert_int_equal(xspace_open(path, &xs, &err), 0);
    assert_int_equal(xspace_decode(xs, 1, &err), 0);
    assert_int_equal(xp_groups_build(xs, &g, &err), 0);
    assert_int_equal(inference_host_stats(xs, g, 0, h), 0);
    xp_groups_free(g);
    xspace_close(xs);
    unlink(path);
    free(path);
}

#define L(x) ((int64_t)(x))

/* A zero-length module: its end sorts before its start, so XProf's tracker
 * keeps device compute current from then on (no other module ends): the
 * write and read that follow count as device time. A second request without
 * the zero-length event splits normally. RunGraph is a request type too. A
 * request starting at time 0 loses its start (XProf's "unset" test). */
static void test_host_priority_tracker(void **state)
{
    struct pbw space = {0};
    struct tplane host, tpu;
    struct inf_host h;

    (void)state;
    plane_begin(&host, 0, "/host:CPU", 0);
    event(&host, "SessionRun", 0, 1000, S_R, L(1), S_MODEL, "m", S_PT, L(7), S_P, L(1), 0);
    event(&host, "WriteHbm", 200, 300, 0);
    event(&host, "ReadHbm", 500, 600, 0);
    event(&host, "RunGraph", 2000, 2600, S_R, L(1), S_MODEL, "m", S_PT, L(7), S_P, L(2), 0);
    event(&host, "WriteHbm", 2100, 2200, 0);
    event(&host, "ReadHbm", 2350, 2500, 0);
    tplane_line_end(&host, 1, "serving");
    tplane_end(&host, &space);
    plane_begin(&tpu, 0, "/device:TPU:0", 0);
    event(&tpu, "serve", 100, 100, S_CT, L(7), S_C, L(1), 0);
    event(&tpu, "serve", 2150, 2400, S_CT, L(7), S_C, L(2), 0);
    tplane_line_end(&tpu, 2, "XLA Modules");
    tplane_end(&tpu, &space);
    host_stats(&space, &h);

    assert_int_equal(h.nmodel_ids, 1);
    assert_string_equal(h.model_ids[0], "m");
    assert_int_equal(h.nrequests, 2);
    /* sorted by duration: RunGraph (600 us) first */
    assert_true(h.requests[0].start_ps == 2000 * US);
    assert_true(h.requests[0].end_ps == 2600 * US);
    /* write [2100, 2200) loses [2150, 2200) to the module [2150, 2400);
     * read [2350, 2500) loses [2350, 2400) */
    assert_true(h.requests[0].device_time_ps == 250 * US);
    assert_true(h.requests[0].write_to_device_time_ps == 50 * US);
    assert_true(h.requests[0].read_from_device_time_ps == 100 * US);
    /* UpdateRequestTimespan reads a begin of 0 as unset: the SessionRun at
     * 0 is forgotten by the next event of its group, so the request is
     * [200, 1000) */
    assert_true(h.requests[1].start_ps == 200 * US);
    assert_true(h.requests[1].end_ps == 1000 * US);
    /* boundaries 100 (module end, then start), 200, 300, 500, 600 and the
     * end 1000 of the host postprocessing that runs from the module's end
     * (100, no CompleteCallbacks) to the request's: device stays current
     * over [100, 1000) */
    assert_true(h.requests[1].device_time_ps == 900 * US);
    assert_true(h.requests[1].host_postprocessing_ps == 0);
    assert_true(h.requests[1].idle_time_ps == 0.0);
    assert_true(h.requests[1].write_to_device_time_ps == 0);
    assert_true(h.requests[1].read_from_device_time_ps == 0);
    assert_int_equal(h.requests[1].model_index, 0);
    inf_host_free(&h);
}

/* tpu::System transfers: an issue event and the later done event of the
 * same _c make one host-to-device span [issue start, done end); a done event
 * that does not follow its issue is ignored. A request without model id
 * among requests with one has model index -1. */
static void test_host_system_transfers(void **state)
{
    struct pbw space = {0};
    struct tplane host;
    struct inf_host h;

    (void)state;
    plane_begin(&host, 0, "/host:CPU", 0);
    event(&host, "SessionRun", 0, 1000, S_R, L(1), S_MODEL, "m", 0);
    event(&host, "tpu::System::TransferToDevice=>IssueEvent", 100, 110, S_C, L(42), 0);
    event(&host, "tpu::System::TransferToDevice=>IssueEvent=>Done", 300, 320, S_C, L(42), 0);
    event(&host, "tpu::System::TransferFromDevice=>IssueEvent", 600, 610, S_C, L(43), 0);
    event(&host, "tpu::System::TransferFromDevice=>IssueEvent=>Done", 550, 560, S_C, L(43), 0);
    event(&host, "SessionRun", 2000, 2100, S_R, L(1), 0);
    tplane_line_end(&host, 1, "serving");
    tplane_end(&host, &space);
    host_stats(&space, &h);

    assert_int_equal(h.nrequests, 2);
    assert_int_equal(h.requests[0].model_index, -1); /* the 100 us one */
    assert_int_equal(h.requests[1].model_index, 0);
    assert_true(h.requests[1].write_to_device_time_ps == 220 * US);
    assert_true(h.requests[1].read_from_device_time_ps == 0);
    inf_host_free(&h);
}

/* A file saved with group_id stats: XProf skips the grouping, so its group
 * metadata is empty; a request is still made (with the model index left at
 * zero), and nothing reaches it through parents. */
static void test_host_pre_grouped(void **state)
{
    struct pbw space = {0};
    struct tplane host;
    struct inf_host h;

    (void)state;
    plane_begin(&host, 0, "/host:CPU", 1);
    event(&host, "SessionRun", 1000, 1500, S_MODEL, "m", S_GROUP, L(5), 0);
    event(&host, "WriteHbm", 1100, 1200, S_GROUP, L(5), 0);
    event(&host, "other", 1600, 1700, S_GROUP, L(5), 0);
    tplane_line_end(&host, 1, "serving");
    tplane_end(&host, &space);
    host_stats(&space, &h);

    assert_int_equal(h.nmodel_ids, 0);
    assert_int_equal(h.nrequests, 1);
    assert_int_equal(h.requests[0].request_id, 5);
    assert_int_equal(h.requests[0].model_index, 0);
    /* the request spans every event of its group */
    assert_true(h.requests[0].start_ps == 1000 * US);
    assert_true(h.requests[0].end_ps == 1700 * US);
    assert_true(h.requests[0].write_to_device_time_ps == 100 * US);
    inf_host_free(&h);
}

/* XProf's PercentileSelector: all of at most 60 requests; of 1000, up to 10
 * from each percentile's range: [50, 51), [75, 76), [90, 91), [99, 99.5),
 * [99.9, 99.95) and [99.99, 99.995) (the last range holds no rank of 1000,
 * and the search for it starts where the 99th's ended). Another column
 * re-sorts, stably. */
static void test_sample(void **state)
{
    struct inf_request *r = calloc(1000, sizeof(*r));
    struct inference_stats st;
    struct inf_model m;
    struct inf_pick *p;
    uint32_t n, i;

    (void)state;
    assert_non_null(r);
    one_model(&st, &m, r, 60);
    assert_int_equal(inference_sample_requests(&m, "", &p, &n), 0);
    assert_int_equal(n, 60);
    assert_true(p[59].index == 59 && p[59].percentile == 100.0 * 59 / 60);
    free(p);
    one_model(&st, &m, r, 1000);
    for (i = 0; i < 1000; i++)
        r[i].batching_request_size = (int32_t)(1000 - i) / 2;
    assert_int_equal(inference_sample_requests(&m, "Latency", &p, &n), 0);
    assert_int_equal(n, 36);
    assert_int_equal(p[0].index, 500);
    assert_int_equal(p[9].index, 509);
    assert_int_equal(p[10].index, 750);
    assert_int_equal(p[30].index, 990);
    assert_int_equal(p[34].index, 994);
    assert_int_equal(p[35].index, 999);
    assert_true(p[35].percentile == 99.9);
    free(p);
    /* by request size: sizes 500, 499, 499, ... descending with the index,
     * so the order reverses, pairs of equal sizes keeping theirs */
    assert_int_equal(inference_sample_requests(&m, "Request size", &p, &n), 0);
    assert_int_equal(n, 36);
    assert_int_equal(m.requests[p[0].index].batching_request_size, 250);
    assert_true(p[0].index < p[1].index || m.requests[p[0].index].batching_request_size !=
                                               m.requests[p[1].index].batching_request_size);
    free(p);
    free(r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_percentile_index),
        cmocka_unit_test(test_average_last),
        cmocka_unit_test(test_safe_divide),
        cmocka_unit_test(test_average_epsilon),
        cmocka_unit_test(test_empty),
        cmocka_unit_test(test_combine),
        cmocka_unit_test(test_sample),
        cmocka_unit_test(test_host_priority_tracker),
        cmocka_unit_test(test_host_system_transfers),
        cmocka_unit_test(test_host_pre_grouped),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
