/*
 * test_trace_pb.c - the delta-series proto of a tiny hand-built trace,
 * decompressed with libzstd and compared byte for byte with a serialized
 * xprof.TraceDataResponse worked out by hand: varints, packed deltas,
 * durations and name_refs, empty event metadata messages, interning in
 * XProf's walk order with "" first, counter values (double and uint64),
 * processes and threads with their optional sort_index, details and span;
 * then the legacy variant (no serials, no details) and a selection by index.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdlib.h>
#include <string.h>
#include <zstd.h>

#include "trace/trace_index.h"
#include "trace/trace_pb.h"

/* Counter values by source record: 3 double 0.5, 4 uint 300, 5 none. */
static int test_counter(const struct tv_host *h, const struct tv_event *e, struct out *o,
                        const char **first_arg_name, struct tv_counter_value *first)
{
    (void)h;
    assert_null(o); /* the proto asks for the typed value only */
    (void)first_arg_name;
    memset(first, 0, sizeof(*first));
    if (e->src == 3) {
        first->kind = TV_COUNTER_DOUBLE;
        first->d = 0.5;
    } else if (e->src == 4) {
        first->kind = TV_COUNTER_UINT;
        first->u = 300;
    }
    return first->kind != TV_COUNTER_NONE;
}

/* Group 7 for source record 1 only. */
static int32_t test_group(const struct tv_host *h, const struct tv_event *e)
{
    (void)h;
    return e->src == 1 ? 7 : TV_NO_GROUP;
}

static void add(struct tv_host *h, int64_t track, uint64_t ts, uint64_t dur, const char *name,
                uint32_t src, uint8_t flags)
{
    struct tv_new_event e;

    assert_true(track >= 0);
    memset(&e, 0, sizeof(e));
    e.ts = ts;
    e.dur = dur;
    e.name = tv_cstr(h, name);
    e.track = (uint32_t)track;
    e.src = src;
    e.flags = flags;
    e.has_flow = src == 0 || src == 6;
    assert_int_equal(tv_add_event(h, &e), 0);
}

/* pid 1 "h CPU": thread 2 "T" with a, b (same start) and a; counter
 * channel "c" with three samples. pid 2 "h GPU": async channel "q". */
static struct tv_host *make_host(void)
{
    struct tv_host *h = tv_host_new("h");
    struct xp_err err = {0};

    assert_non_null(h);
    assert_true(tv_add_device(h, 1, "h CPU") >= 0);
    assert_true(tv_add_device(h, 2, "h GPU") >= 0);
    assert_int_equal(tv_add_resource(h, 1, 2, tv_cstr(h, "T")), 0);
    add(h, tv_track_thread(h, 1, 2), 100, 5, "a", 0, 0);
    add(h, tv_track_thread(h, 1, 2), 100, 0, "b", 1, 0);
    add(h, tv_track_thread(h, 1, 2), 300, 1, "a", 2, 0);
    add(h, tv_track_channel(h, 1, tv_cstr(h, "c")), 150, 0, "c", 3, TV_EV_COUNTER);
    add(h, tv_track_channel(h, 1, tv_cstr(h, "c")), 200, 0, "c", 4, TV_EV_COUNTER);
    add(h, tv_track_channel(h, 1, tv_cstr(h, "c")), 250, 0, "c", 5, TV_EV_COUNTER);
    add(h, tv_track_channel(h, 2, tv_cstr(h, "q")), 400, 20, "q", 6, TV_EV_ASYNC);
    /* A flow id past 32 bits: the proto's uint32 keeps the low bits (3). */
    assert_int_equal(tv_set_flow(h, 0, 0x100000003ull, TV_FLOW_START, 2), 0);
    assert_int_equal(tv_set_flow(h, 6, 9, TV_FLOW_END, 0), 0);
    assert_int_equal(tv_finish(h, 1, &err), 0);
    h->counter = test_counter;
    h->group_of = test_group;
    assert_int_equal(h->min_ps, 100);
    assert_int_equal(h->max_ps, 420);
    return h;
}

/* The decompressed response; checks the frame declares its size. */
static unsigned char *response(const struct tv_part *part, enum tpb_source source, size_t *n)
{
    struct tpb_options opt = {source, 0};
    struct out o;
    struct blob *b;
    char *z;
    unsigned char *raw;
    unsigned long long size;

    out_init(&o);
    assert_int_equal(trace_pb_write(part, 1, &opt, &o), 0);
    assert_int_equal(out_finish(&o, &b), 0);
    z = malloc(b->size);
    assert_non_null(z);
    assert_int_equal(blob_read(b, 0, z, b->size), b->size);
    size = ZSTD_getFrameContentSize(z, b->size);
    assert_true(size != ZSTD_CONTENTSIZE_UNKNOWN && size != ZSTD_CONTENTSIZE_ERROR);
    raw = malloc(size + 1);
    assert_non_null(raw);
    assert_int_equal(ZSTD_decompress(raw, size, z, b->size), size);
    free(z);
    blob_unref(b);
    *n = size;
    return raw;
}

static const unsigned char expected[] = {
    /* complete_events: pid 1001, tid 2 */
    0x0a, 0x25,                               /* series, 37 bytes */
    0x0a, 0x05, 0x08, 0xe9, 0x07, 0x10, 0x02, /* metadata */
    0x12, 0x04, 0x64, 0x00, 0xc8, 0x01,       /* deltas 100 0 200 */
    0x1a, 0x03, 0x05, 0x00, 0x01,             /* durations 5 0 1 */
    0x22, 0x03, 0x02, 0x04, 0x02,             /* name_refs a b a */
    0x2a, 0x04, 0x08, 0x03, 0x10, 0x03,       /* flow 3, category tf_exec */
    0x2a, 0x04, 0x18, 0x07, 0x20, 0x01,       /* group 7, serial 1 */
    0x2a, 0x00,                               /* nothing */
    /* counter_events: pid 1001, name "c" */
    0x12, 0x1f,                                     /* series, 31 bytes */
    0x0a, 0x05, 0x08, 0xe9, 0x07, 0x18, 0x01,       /* metadata */
    0x12, 0x04, 0x96, 0x01, 0x32, 0x32,             /* deltas 150 50 50 */
    0x2a, 0x09, 0x29, 0, 0, 0, 0, 0, 0, 0xe0, 0x3f, /* double 0.5 */
    0x2a, 0x03, 0x30, 0xac, 0x02,                   /* uint64 300 */
    0x2a, 0x00,                                     /* no value */
    /* async_events: pid 1002, name "q" */
    0x1a, 0x12,                               /* series, 18 bytes */
    0x0a, 0x05, 0x08, 0xea, 0x07, 0x18, 0x05, /* metadata */
    0x12, 0x02, 0x90, 0x03,                   /* deltas 400 */
    0x1a, 0x01, 0x14,                         /* durations 20 */
    0x2a, 0x02, 0x08, 0x09,                   /* flow 9, generic category left out */
    /* metadata: two processes */
    0x22, 0x27, 0x0a, 0x16, 0x0a, 0x05, 'h', ' ', 'C', 'P', 'U', 0x10, 0xe9, 0x07, 0x18, 0xe9, 0x07,
    0x22, 0x07, 0x0a, 0x01, 'T', 0x10, 0x02, 0x18, 0x02, /* thread 2 "T" */
    0x0a, 0x0d, 0x0a, 0x05, 'h', ' ', 'G', 'P', 'U', 0x10, 0xea, 0x07, 0x18, 0xea, 0x07,
    /* interned_strings: "", c, a, tf_exec, b, q */
    0x2a, 0x00, 0x2a, 0x01, 'c', 0x2a, 0x01, 'a', 0x2a, 0x07, 't', 'f', '_', 'e', 'x', 'e', 'c',
    0x2a, 0x01, 'b', 0x2a, 0x01, 'q',
    /* details: mpmd_pipeline_view (false: no value field) */
    0x32, 0x14, 0x0a, 0x12, 'm', 'p', 'm', 'd', '_', 'p', 'i', 'p', 'e', 'l', 'i', 'n', 'e', '_',
    'v', 'i', 'e', 'w',
    /* full_timespan 100 .. 420 */
    0x38, 0x64, 0x40, 0xa4, 0x03};

static void test_streaming_bytes(void **state)
{
    struct tv_host *h = make_host();
    struct tv_part part = {.h = h, .offset = 1000, .all = 1};
    size_t n;
    unsigned char *raw = response(&part, TPB_STREAMING, &n);

    (void)state;
    assert_int_equal(n, sizeof(expected));
    assert_memory_equal(raw, expected, sizeof(expected));
    free(raw);
    tv_host_free(h);
}

/* Find needle in hay; 1 if present. */
static int contains(const unsigned char *hay, size_t n, const unsigned char *needle, size_t k)
{
    size_t i;

    for (i = 0; i + k <= n; i++) {
        if (memcmp(hay + i, needle, k) == 0)
            return 1;
    }
    return 0;
}

static void test_legacy_and_index_selection(void **state)
{
    struct tv_host *h = make_host();
    struct tv_part part = {.h = h, .all = 1};
    static const unsigned char group_only[] = {0x2a, 0x02, 0x18, 0x07};
    static const unsigned char pid1[] = {0x0a, 0x04, 0x08, 0x01, 0x10, 0x02};
    uint32_t idx[2], i, k = 0;
    size_t n;
    unsigned char *raw = response(&part, TPB_LEGACY, &n);

    (void)state;
    /* No serial, no details, pids unshifted, the span still last. */
    assert_true(contains(raw, n, group_only, sizeof(group_only)));
    assert_true(contains(raw, n, pid1, sizeof(pid1)));
    assert_false(contains(raw, n, (const unsigned char *)"mpmd", 4));
    assert_int_equal(raw[n - 5], 0x38);
    free(raw);
    /* The last two thread events only: b (serial 1) and a. */
    for (i = 0; i < h->nevents; i++) {
        if (strcmp(tv_text(h, h->events[i].name), "b") == 0)
            idx[k++] = i;
    }
    for (i = 0; i < h->nevents; i++) {
        if (h->tracks[tv_track_at(h, i)].has_tid && h->events[i].ts == 300)
            idx[k++] = i;
    }
    assert_int_equal(k, 2);
    part.offset = 1000;
    part.idx = idx;
    part.n = 2;
    part.all = 0;
    raw = response(&part, TPB_STREAMING, &n);
    {
        /* clang-format off */
        static const unsigned char want[] = {
            0x0a, 0x1c,                               /* series, 28 bytes */
            0x0a, 0x05, 0x08, 0xe9, 0x07, 0x10, 0x02, /* metadata */
            0x12, 0x03, 0x64, 0xc8, 0x01,             /* deltas 100 200 */
            0x1a, 0x02, 0x00, 0x01,                   /* durations 0 1 */
            0x22, 0x02, 0x01, 0x02,                   /* b = 1, a = 2 */
            0x2a, 0x04, 0x18, 0x07, 0x20, 0x01,       /* group 7, serial 1 */
            0x2a, 0x00,                               /* nothing */
        };
        /* clang-format on */
        static const unsigned char strings[] = {0x2a, 0x00, 0x2a, 0x01, 'b', 0x2a, 0x01, 'a', 0x32};
        assert_memory_equal(raw, want, sizeof(want));
        assert_int_equal(raw[sizeof(want)], 0x22); /* metadata follows */
        assert_true(contains(raw, n, strings, sizeof(strings)));
    }
    free(raw);
    tv_host_free(h);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_streaming_bytes),
        cmocka_unit_test(test_legacy_and_index_selection),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
