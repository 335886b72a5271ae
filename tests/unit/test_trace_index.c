/*
 * test_trace_index.c - XProf's down-sampling: the visibility rule on
 * hand-checked events, uids and the 256 cap, zoom levels, windows against a
 * brute-force overlap filter, the 500,000-event threshold and thinning, and
 * zoom levels of events with flows against the plain per-level trackers,
 * the global order merged in parts against a plain sort, and durations
 * too long for the 24-byte records.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "trace/trace_index.h"
#include "trace/trace_levels.h"
#include "trace/trace_vis.h"

static struct tv_vis_event row_event(uint64_t ts, uint64_t dur)
{
    struct tv_vis_event e = {ts, dur, 0, 1, 0, 0, 0};

    return e;
}

static void test_visibility_rule(void **state)
{
    struct tv_vis v;
    struct tv_vis_event e;

    assert_int_equal(tv_vis_init(&v, 10, 2), 0);
    e = row_event(0, 100); /* long enough */
    assert_true(tv_vis_visible(&v, &e));
    e = row_event(5, 2); /* first at depth 1 */
    assert_true(tv_vis_visible(&v, &e));
    e = row_event(8, 1); /* depth 1, 1 ps after the last one there */
    assert_false(tv_vis_visible(&v, &e));
    e = row_event(20, 1); /* depth 1, 13 ps after it */
    assert_true(tv_vis_visible(&v, &e));
    e = row_event(105, 1); /* depth 0, 5 ps after the long one */
    assert_false(tv_vis_visible(&v, &e));
    /* Counters: at most one sample per 10 ps. */
    e = row_event(0, 0);
    e.row = 1;
    e.has_tid = 0;
    assert_true(tv_vis_visible(&v, &e));
    e.ts = 5;
    assert_false(tv_vis_visible(&v, &e));
    e.ts = 12;
    assert_true(tv_vis_visible(&v, &e));
    e.ts = 13;
    assert_false(tv_vis_visible(&v, &e));
    e.ts = 30;
    assert_true(tv_vis_visible(&v, &e));
    tv_vis_free(&v);
}

/* tv_row_depth against XProf's definition (the first stack entry from the
 * bottom that ended at or before the start), on stacks far deeper than its
 * linear scan and not ordered (events that overlap without nesting push
 * later ends above earlier ones). */
static void test_row_depth_deep(void **state)
{
    struct tv_vis v;
    struct tv_row *r;
    uint64_t seed = 12345, ts = 1000000;
    uint32_t i, d, deepest = 0;

    (void)state;
    assert_int_equal(tv_vis_init(&v, 10, 1), 0);
    r = &v.rows[0];
    for (i = 0; i < 200000; i++) {
        uint32_t got, want;
        seed = seed * 6364136223846793005ull + 1442695040888963407ull;
        /* mostly nested deeper and deeper, sometimes a step back in depth
         * or a start past some ends */
        if ((seed >> 60) == 0)
            ts += (seed >> 40) % 5000;
        else
            ts += (seed >> 40) % 3;
        got = tv_row_depth(r, ts);
        for (want = 0; want < r->depth && r->stack[want] > ts; want++)
            ;
        assert_int_equal(got, want);
        /* usually a long event (its end before or after its parent's:
         * the stack is not ordered), sometimes a short one; now and then
         * pushed lower, as the other trackers of a level do */
        d = (seed >> 33) % 64 == 0 && got > 0 ? got - 1 - (uint32_t)((seed >> 20) % got) : got;
        tv_row_push(&v, r, d,
                    ts + 1 + ((seed >> 27) % 16 == 0 ? (seed >> 8) % 100 : (seed >> 8) % 3000000));
        assert_false(v.oom);
        if (r->depth > deepest)
            deepest = r->depth;
    }
    assert_true(deepest > 10 * TV_ROW_SCAN);
    tv_vis_free(&v);
}

static void test_flow_visibility(void **state)
{
    struct tv_vis v;
    struct tv_vis_event e;

    assert_int_equal(tv_vis_init(&v, 10, 1), 0);
    e = row_event(0, 100);
    assert_true(tv_vis_visible(&v, &e));
    /* A tiny flow event right after: its flow is decided visible because no
     * flow was visible on the row yet; the END event then follows it. */
    e = row_event(101, 1);
    e.has_flow = 1;
    e.flow_id = 7;
    e.type = TV_FLOW_START;
    assert_true(tv_vis_visible(&v, &e));
    e = row_event(103, 1);
    e.has_flow = 1;
    e.flow_id = 7;
    e.type = TV_FLOW_END;
    assert_true(tv_vis_visible(&v, &e));
    /* Another tiny flow 2 ps later is hidden (last flow end too close). */
    e = row_event(105, 1);
    e.has_flow = 1;
    e.flow_id = 8;
    e.type = TV_FLOW_START;
    assert_false(tv_vis_visible(&v, &e));
    tv_vis_free(&v);
}

static void test_flowmap(void **state)
{
    struct tv_flowmap m;
    uint8_t v;
    uint64_t i;

    tv_flowmap_init(&m);
    for (i = 0; i < 5000; i++)
        assert_true(tv_flowmap_put_new(&m, i * 7919, (uint8_t)(i & 1)));
    assert_false(tv_flowmap_put_new(&m, 7919, 0));
    for (i = 0; i < 5000; i += 2)
        tv_flowmap_erase(&m, i * 7919);
    for (i = 0; i < 5000; i++) {
        int present = tv_flowmap_get(&m, i * 7919, &v);
        assert_int_equal(present, (int)(i & 1));
        if (present)
            assert_int_equal(v, 1);
    }
    tv_flowmap_free(&m);
}

/* A host with one process and `rows` threads; events made by fill(). */
static struct tv_host *make_host(void (*fill)(struct tv_host *, uint32_t), uint32_t n)
{
    struct tv_host *h = tv_host_new("test");
    struct xp_err err = {0};

    assert_non_null(h);
    assert_true(tv_add_device(h, 1, "test /device:GPU:0") >= 0);
    fill(h, n);
    assert_int_equal(tv_finish(h, 2, &err), 0);
    return h;
}

static void add(struct tv_host *h, uint32_t tid, uint64_t ts, uint64_t dur, const char *name,
                uint32_t src)
{
    struct tv_new_event e;
    int64_t track = tv_track_thread(h, 1, tid);

    assert_true(track >= 0);
    memset(&e, 0, sizeof(e));
    e.ts = ts;
    e.dur = dur;
    e.name = tv_cstr(h, name);
    e.track = (uint32_t)track;
    e.src = src;
    assert_int_equal(tv_add_event(h, &e), 0);
}

/* 300 events at one time (uids 0..255 kept, the rest dropped), then a few. */
static void fill_same_start(struct tv_host *h, uint32_t n)
{
    uint32_t i;

    assert_int_equal(tv_add_resource(h, 1, 1, tv_cstr(h, "row")), 0);
    for (i = 0; i < n; i++)
        add(h, 1, 1000, 1000 - i, "x", i);
    add(h, 1, 5000, 10, "late", n);
}

static void test_uids_and_cap(void **state)
{
    struct tv_host *h = make_host(fill_same_start, 300);
    uint32_t i, dropped = 0, seen[256] = {0};

    assert_int_equal(h->nevents, 301);
    assert_int_equal(tv_num_events(h), 257);
    for (i = 0; i < h->nevents; i++) {
        const struct tv_event *e = &h->events[i];
        if (e->flags & TV_EV_DROPPED) {
            dropped++;
            continue;
        }
        if (e->ts == 1000) {
            /* Longest first: uid = position among equal starts. */
            assert_int_equal(e->serial, 1000 - tv_dur(h, e));
            seen[e->serial]++;
        } else {
            assert_int_equal(e->serial, 0);
        }
    }
    assert_int_equal(dropped, 44);
    for (i = 0; i < 256; i++)
        assert_int_equal(seen[i], 1);
    assert_true(tv_find_event(h, 1000, 3, "x", 997) >= 0);
    assert_true(tv_find_event(h, 1000, 3, "x", 996) < 0);
    assert_true(tv_find_event(h, 1000, 300, "x", 700) < 0);
    tv_host_free(h);
}

/* Pseudo-random nested and overlapping events on 4 rows. */
static void fill_random(struct tv_host *h, uint32_t n)
{
    uint64_t x = 12345, t[4] = {0, 0, 0, 0};
    uint32_t i;

    for (i = 0; i < 4; i++)
        assert_int_equal(tv_add_resource(h, 1, i + 1, tv_cstr(h, "row")), 0);
    for (i = 0; i < n; i++) {
        uint32_t row;
        uint64_t dur;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        row = (uint32_t)(x % 4);
        dur = 1 + (x >> 8) % (x % 97 == 0 ? 50000000 : 20000);
        add(h, row + 1, t[row], dur, (x & 16) ? "a" : "b", i);
        t[row] += 1 + (x >> 20) % 30000;
    }
}

/* Indices of stored events overlapping [b, e], in output order. */
static uint32_t brute_window(const struct tv_host *h, uint64_t b, uint64_t e, uint32_t *out)
{
    uint32_t i, n = 0;

    for (i = 0; i < h->nevents; i++) {
        const struct tv_event *ev = &h->events[i];
        if (!(ev->flags & TV_EV_DROPPED) && ev->ts <= e && b <= ev->ts + tv_dur(h, ev))
            out[n++] = i;
    }
    return n;
}

static void test_windows_match_brute_force(void **state)
{
    struct tv_host *h = make_host(fill_random, 20000);
    uint32_t *want = malloc(h->nevents * sizeof(*want)), *got, n, nw, k;
    static const double windows[][2] = {
        {0, 0}, {0.001, 0.002}, {10, 20}, {50, 50.5}, {0, 1}, {120, 1e9}, {33.3, 33.3},
    };

    assert_non_null(want);
    for (k = 0; k < sizeof(windows) / sizeof(windows[0]); k++) {
        struct tv_window w = {windows[k][0], windows[k][1], 8000, 0};
        uint64_t b = (uint64_t)(w.start_ms * 1e9), e = (uint64_t)(w.end_ms * 1e9);
        if (b < h->min_ps)
            b = h->min_ps;
        if (e == 0 || e > h->max_ps)
            e = h->max_ps;
        /* Under 500,000 events a resolution does not down-sample. */
        assert_int_equal(tv_select_window(h, &w, &got, &n), 0);
        if (b == e) {
            assert_true(n > 0); /* an instant window cannot filter */
        } else {
            nw = brute_window(h, b, e, want);
            assert_int_equal(n, nw);
            assert_memory_equal(got, want, n * sizeof(*got));
        }
        free(got);
    }
    free(want);
    tv_host_free(h);
}

/* Durations of 2^48 ps (281 s) and more are kept beside the 24-byte
 * records: they read back exactly, order longest first, and windows past
 * 2^48 ps still see the events that overlap them. */
#define LONG_A (1ull << 50)
#define LONG_B ((1ull << 48) + 7)
#define HUGE_D (UINT64_MAX - 10000)

static void fill_long(struct tv_host *h, uint32_t n)
{
    (void)n;
    assert_int_equal(tv_add_resource(h, 1, 1, tv_cstr(h, "row")), 0);
    assert_int_equal(tv_add_resource(h, 1, 2, tv_cstr(h, "other")), 0);
    add(h, 1, 1000, 5, "short", 0);
    add(h, 1, 1000, LONG_B, "b", 1);
    add(h, 2, 1000, LONG_A, "a", 2);
    add(h, 1, 1000, TV_DUR_LONG - 1, "just under", 3);
    add(h, 2, 2000, HUGE_D - 2000, "huge", 4);
}

static void test_long_durations(void **state)
{
    struct tv_host *h = make_host(fill_long, 0);
    static const uint64_t dur_of[] = {5, LONG_B, LONG_A, TV_DUR_LONG - 1, HUGE_D - 2000};
    static const uint8_t serial_of[] = {3, 1, 0, 2, 0};
    struct tv_window w = {2.0, 3.0, 0, 0}; /* 2e9..3e9 ps: after the short ones */
    uint32_t i, *got = NULL, n = 0;

    (void)state;
    assert_int_equal(h->nevents, 5);
    assert_int_equal(h->nlong_durs, 3);
    for (i = 0; i < h->nevents; i++) {
        const struct tv_event *e = &h->events[i];
        assert_int_equal(tv_dur(h, e), dur_of[e->src]);
        /* uid: longest first among the events starting at 1000 ps */
        assert_int_equal(e->serial, serial_of[e->src]);
    }
    /* the huge end is past what XProf's span counts (2^63) */
    assert_int_equal(h->max_ps, 1000 + LONG_A);
    assert_int_equal(tv_select_window(h, &w, &got, &n), 0);
    assert_int_equal(n, 4); /* every event but "short" overlaps it */
    for (i = 0; i < n; i++)
        assert_int_not_equal(h->events[got[i]].src, 0);
    free(got);
    tv_host_free(h);
}

static void test_levels_are_monotonic(void **state)
{
    struct tv_host *h = make_host(fill_random, 20000);
    const struct tv_levels *lv = tv_levels_of(h);
    uint32_t i;
    int L;

    /* An event stored at level L is at least R[L] long, or was visible by
     * spacing; every event long enough for a level is stored at or above it. */
    for (i = 0; i < h->nevents; i++) {
        const struct tv_event *e = &h->events[i];
        for (L = 0; L < TV_LEVELS - 1; L++) {
            if (tv_dur(h, e) >= tv_level_resolution(L)) {
                assert_true(e->level <= L);
                break;
            }
        }
    }
    /* by_level lists each stored event once, sorted by start inside a level. */
    for (L = 0; L < TV_LEVELS; L++) {
        for (i = lv->start[L] + 1; i < lv->start[L + 1]; i++)
            assert_true(h->events[lv->by_level[i - 1]].ts <= h->events[lv->by_level[i]].ts);
    }
    assert_int_equal(lv->start[TV_LEVELS], tv_num_events(h));
    tv_host_free(h);
}

static void test_downsampling_over_threshold(void **state)
{
    struct tv_host *h = make_host(fill_random, TV_STREAMING_THRESHOLD);
    struct tv_window full = {0, 0, 0, 0}, coarse = {0, 0, 100, 0};
    uint32_t *all, *thin, nall, nthin, i, j = 0;
    uint64_t res_ps;

    assert_int_equal(tv_select_window(h, &full, &all, &nall), 0);
    assert_int_equal(nall, tv_num_events(h));
    assert_int_equal(tv_select_window(h, &coarse, &thin, &nthin), 0);
    /* 100 bins over the trace: a small subset, containing every event at
     * least one bin long, and nothing else than stored events. */
    res_ps = (uint64_t)((h->max_ps - h->min_ps) / 100);
    assert_true(nthin > 0 && nthin < nall / 20);
    for (i = 0; i < h->nevents; i++) {
        if ((h->events[i].flags & TV_EV_DROPPED) || tv_dur(h, &h->events[i]) < res_ps)
            continue;
        while (j < nthin && thin[j] < i)
            j++;
        assert_true(j < nthin && thin[j] == i);
    }
    free(all);
    free(thin);
    tv_host_free(h);
}

/* Nested events with flows on 3 threads and an async channel: flow ids are
 * reused after their END, some flows span rows, some events have none. */
static void fill_flows(struct tv_host *h, uint32_t n)
{
    uint64_t x = 777, t[4] = {0, 0, 0, 0};
    uint32_t i, next_id = 1, open[8] = {0};
    int64_t chan = tv_track_channel(h, 1, tv_cstr(h, "async"));

    assert_true(chan >= 0);
    for (i = 0; i < 3; i++)
        assert_int_equal(tv_add_resource(h, 1, i + 1, tv_cstr(h, "row")), 0);
    for (i = 0; i < n; i++) {
        struct tv_new_event e;
        uint32_t row, slot;
        int64_t track;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        row = (uint32_t)(x % 4);
        track = row == 3 ? chan : tv_track_thread(h, 1, row + 1);
        assert_true(track >= 0);
        memset(&e, 0, sizeof(e));
        e.ts = t[row];
        e.dur = 1 + (x >> 8) % ((x >> 40) % 31 == 0 ? 90000000 : 3000000);
        e.name = tv_cstr(h, (x & 32) ? "k" : "m");
        e.track = (uint32_t)track;
        e.src = i;
        slot = (uint32_t)(x >> 50) % 8;
        if (row == 3 || (x >> 33) % 5 != 0) {
            unsigned type;
            if (open[slot] == 0) {
                open[slot] = next_id++;
                type = TV_FLOW_START;
            } else if ((x >> 45) % 3 == 0) {
                type = TV_FLOW_MID;
            } else {
                type = TV_FLOW_END;
            }
            assert_int_equal(tv_set_flow(h, i, open[slot] % 5 + 1, type, 9), 0);
            e.has_flow = 1;
            if (row == 3)
                e.flags = TV_EV_ASYNC;
            if (type == TV_FLOW_END)
                open[slot] = 0;
        }
        assert_int_equal(tv_add_event(h, &e), 0);
        t[row] += 1 + (x >> 20) % 2000000;
    }
}

/* fill_flows, and two threads without a flow (their levels need not wait
 * for the flows' pass): nested runs of long and short events. */
static void fill_flows_and_plain(struct tv_host *h, uint32_t n)
{
    uint64_t x = 99, t = 0;
    uint32_t i;

    fill_flows(h, n);
    for (i = 0; i < n / 2; i++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        add(h, 4 + (uint32_t)(x % 2), t, 1 + (x >> 8) % ((x >> 40) % 17 == 0 ? 60000000 : 900000),
            (x & 32) ? "k" : "p", n + i);
        t += 1 + (x >> 20) % 1500000;
    }
}

static const struct tv_host *sort_host;

static int cmp_global(const void *a, const void *b)
{
    return tv_event_cmp(sort_host, &sort_host->events[*(const uint32_t *)a],
                        &sort_host->events[*(const uint32_t *)b]);
}

/* XProf's GetEventsByLevel with one tracker per level and per map, as
 * upstream writes it: the flows in global order first, then each track. */
static void reference_levels(const struct tv_host *h, uint8_t *level)
{
    struct tv_vis vis[TV_LEVELS - 1];
    struct tv_flowmap first;
    uint32_t *order = malloc(h->nevents * sizeof(*order)), i, t;
    uint8_t *flow_level = calloc(h->nflows + 1, 1);
    int L;

    assert_non_null(order);
    assert_non_null(flow_level);
    for (i = 0; i < h->nevents; i++)
        order[i] = i;
    sort_host = h;
    qsort(order, h->nevents, sizeof(*order), cmp_global);
    tv_flowmap_init(&first);
    for (L = 0; L < TV_LEVELS - 1; L++)
        assert_int_equal(tv_vis_init(&vis[L], tv_level_resolution(L), h->ntracks), 0);
    for (i = 0; i < h->nevents; i++) {
        const struct tv_event *e = &h->events[order[i]];
        struct tv_vis_event ve;
        if (!e->has_flow)
            continue;
        tv_vis_event_of(h, e, &ve);
        for (L = 0; L < TV_LEVELS - 1; L++) {
            if (tv_vis_visible(&vis[L], &ve))
                break;
        }
        flow_level[e->src] =
            tv_flowmap_first(&first, ve.flow_id, (uint8_t)L, ve.type == TV_FLOW_END, TV_LEVELS - 1);
        for (L++; L < TV_LEVELS - 1; L++)
            tv_vis_set(&vis[L], &ve, 1);
    }
    for (L = 0; L < TV_LEVELS - 1; L++)
        tv_vis_free(&vis[L]);
    tv_flowmap_free(&first);
    for (t = 0; t < h->ntracks; t++) {
        for (L = 0; L < TV_LEVELS - 1; L++)
            assert_int_equal(tv_vis_init(&vis[L], tv_level_resolution(L), 1), 0);
        for (i = h->tracks[t].first; i < h->tracks[t].first + h->tracks[t].count; i++) {
            const struct tv_event *e = &h->events[i];
            struct tv_vis_event ve;
            tv_vis_event_of(h, e, &ve);
            ve.row = 0;
            if (e->has_flow) {
                for (L = 0; L < TV_LEVELS - 1; L++) {
                    if (L >= flow_level[e->src] || tv_dur(h, e) >= tv_level_resolution(L))
                        break;
                }
                if (L < TV_LEVELS - 1)
                    tv_vis_set(&vis[L], &ve, 0);
            } else {
                for (L = 0; L < TV_LEVELS - 1; L++) {
                    if (tv_vis_visible(&vis[L], &ve))
                        break;
                }
            }
            level[i] = (uint8_t)L;
            for (L++; L < TV_LEVELS - 1; L++)
                tv_vis_set(&vis[L], &ve, 0);
        }
        for (L = 0; L < TV_LEVELS - 1; L++)
            tv_vis_free(&vis[L]);
    }
    free(order);
    free(flow_level);
}

static void test_flow_levels_match_trackers(void **state)
{
    struct tv_host *h = make_host(fill_flows, 30000);
    uint8_t *want = malloc(h->nevents);
    uint32_t i, per_level[TV_LEVELS] = {0}, used = 0;
    int L;

    assert_non_null(want);
    reference_levels(h, want);
    for (i = 0; i < h->nevents; i++) {
        assert_int_equal(h->events[i].level, want[i]);
        per_level[want[i]]++;
    }
    /* The data reaches several levels, so the comparison means something. */
    for (L = 0; L < TV_LEVELS; L++)
        used += per_level[L] > 0;
    assert_true(used >= 4);
    free(want);
    tv_host_free(h);
}

/* Equal starts across rows (clusters of up to 400, some over the 256 cap),
 * starts and ends near and above XProf's span limit, an end that wraps. */
static void fill_ties(struct tv_host *h, uint32_t n)
{
    uint64_t x = 4242, t = 1000;
    uint32_t i;

    for (i = 0; i < 3; i++)
        assert_int_equal(tv_add_resource(h, 1, i + 1, tv_cstr(h, "row")), 0);
    for (i = 0; i < n; i++) {
        uint32_t row;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        row = (uint32_t)(x % 3);
        if (x % 400 == 0)
            t += 1 + (x >> 9) % 50;
        add(h, row + 1, t, 1 + (x >> 12) % 40, (x & 64) ? "p" : "q", i);
    }
    add(h, 2, UINT64_MAX / 2 - 5, 3, "edge", n);
    add(h, 3, UINT64_MAX / 2 - 5, 30, "edge", n + 1);
    add(h, 1, UINT64_MAX / 2 + 7, 1, "above", n + 2);
    add(h, 2, UINT64_MAX - 3, 10, "wraps", n + 3);
}

/* Every start above the span limit: the span keeps its initial values. */
static void fill_high(struct tv_host *h, uint32_t n)
{
    uint32_t i;

    assert_int_equal(tv_add_resource(h, 1, 1, tv_cstr(h, "row")), 0);
    for (i = 0; i < n; i++)
        add(h, 1 + i % 2, UINT64_MAX / 2 + 100 + i / 3, 5, "h", i);
}

/* A long event, then n empty ones at one time under it: the first of
 * those is shown at level 0 (the first at its depth), the others at none
 * (no length, and no time after it). */
static void fill_crowded(struct tv_host *h, uint32_t n)
{
    uint32_t i;

    assert_int_equal(tv_add_resource(h, 1, 1, tv_cstr(h, "row")), 0);
    add(h, 1, 0, 1000000000000ull, "long", 0);
    for (i = 0; i < n; i++)
        add(h, 1, 1000, 0, "empty", i + 1);
}

/* tv_finish with the global order in nparts parts on nthreads threads
 * against the plain way: sort every event by the comparator, number equal
 * starts, drop uids from 256, widen the span one event at a time, and list
 * each level's stored events in that order. */
static void check_parts(void (*fill)(struct tv_host *, uint32_t), uint32_t n, uint32_t nparts,
                        int nthreads)
{
    struct tv_host *h = tv_host_new("test");
    const struct tv_levels *lv;
    struct xp_err err = {0};
    uint32_t *order, i, serial = 0, fill_at[TV_LEVELS], count[TV_LEVELS] = {0};
    uint8_t *want;
    uint64_t last = UINT64_MAX, min_ps = 0, max_ps = 0, limit = UINT64_MAX / 2;
    int has_span = 0, L;

    assert_non_null(h);
    assert_true(tv_add_device(h, 1, "test /device:GPU:0") >= 0);
    fill(h, n);
    /* The flows' order reads only the tracks tv_add_event marked, or all. */
    if (nparts % 2 == 1)
        tv_flows_marked(h);
    assert_int_equal(tv_finish_parts(h, nthreads, nparts, &err), 0);
    lv = tv_levels_of(h);
    assert_int_equal(lv->known, TV_LEVELS - 1);
    order = malloc(h->nevents * sizeof(*order));
    want = malloc(h->nevents ? h->nevents : 1);
    assert_non_null(order);
    assert_non_null(want);
    /* Levels (flows decided over the parts' merges) as the plain trackers. */
    reference_levels(h, want);
    for (i = 0; i < h->nevents; i++)
        assert_int_equal(h->events[i].level, want[i]);
    for (i = 0; i < h->nevents; i++)
        order[i] = i;
    sort_host = h;
    qsort(order, h->nevents, sizeof(*order), cmp_global);
    for (i = 0; i < h->nevents; i++) {
        const struct tv_event *e = &h->events[order[i]];
        uint64_t end = e->ts + tv_dur(h, e);
        serial = e->ts == last ? serial + 1 : 0;
        last = e->ts;
        assert_int_equal(e->serial, (uint8_t)serial);
        assert_int_equal((e->flags & TV_EV_DROPPED) != 0, serial >= 256);
        if (e->ts <= limit && (!has_span || e->ts < min_ps))
            min_ps = e->ts;
        if (end <= limit && (!has_span || end > max_ps))
            max_ps = end;
        has_span = 1;
        if (serial < 256)
            count[e->level]++;
    }
    assert_int_equal(h->has_span, has_span);
    assert_true(h->min_ps == min_ps);
    assert_true(h->max_ps == max_ps);
    for (L = 0; L < TV_LEVELS; L++) {
        assert_int_equal(lv->start[L + 1] - lv->start[L], count[L]);
        fill_at[L] = lv->start[L];
    }
    for (i = 0; i < h->nevents; i++) {
        const struct tv_event *e = &h->events[order[i]];
        if (!(e->flags & TV_EV_DROPPED))
            assert_int_equal(lv->by_level[fill_at[e->level]++], order[i]);
    }
    free(want);
    free(order);
    tv_host_free(h);
}

static void test_parallel_order_matches_sort(void **state)
{
    static const uint32_t parts[] = {1, 2, 5, 16, 64};
    uint32_t i;

    for (i = 0; i < sizeof(parts) / sizeof(parts[0]); i++) {
        int threads = 1 + (int)(i % 3);
        check_parts(fill_random, 20000, parts[i], threads);
        check_parts(fill_flows, 20000, parts[i], threads);
        check_parts(fill_flows_and_plain, 12000, parts[i], threads);
        check_parts(fill_same_start, 300, parts[i], threads);
        check_parts(fill_ties, 30000, parts[i], threads);
        check_parts(fill_high, 50, parts[i], threads);
        check_parts(fill_random, 1, parts[i], threads);
    }
}

/* A host of one process filled by fill, not finished. */
static struct tv_host *filled_host(void (*fill)(struct tv_host *, uint32_t), uint32_t n)
{
    struct tv_host *h = tv_host_new("test");

    assert_non_null(h);
    assert_true(tv_add_device(h, 1, "test /device:GPU:0") >= 0);
    fill(h, n);
    return h;
}

/* The level index of levels 0..upto of a and b alike. */
static void assert_levels_equal(const struct tv_levels *a, const struct tv_levels *b, int upto)
{
    int L;

    for (L = 0; L <= upto; L++) {
        uint32_t n = a->start[L + 1] - a->start[L];
        assert_int_equal(b->start[L + 1] - b->start[L], n);
        if (n > 0)
            assert_memory_equal(&a->by_level[a->start[L]], &b->by_level[b->start[L]],
                                n * sizeof(*a->by_level));
    }
}

/* A finish down to level upto, then tv_complete, against one tv_finish
 * (which check_parts holds to the plain way): the coarse levels, their
 * uids, drops and level index as the whole has them and every other event
 * left TV_LEVEL_FINER; once completed, every event and the level index
 * byte for byte. Returns 1 if the finish stopped at upto (else it found
 * the coarse levels too full and completed at once). */
static int check_staged(void (*fill)(struct tv_host *, uint32_t), uint32_t n, uint32_t nparts,
                        int nthreads, int upto)
{
    struct tv_host *whole = filled_host(fill, n), *h = filled_host(fill, n);
    const struct tv_levels *wl, *lv;
    struct xp_err err = {0};
    uint32_t i;
    int coarse;

    assert_int_equal(tv_finish_parts(whole, nthreads, nparts, &err), 0);
    assert_int_equal(tv_finish_parts_upto(h, nthreads, nparts, upto, &err), 0);
    wl = tv_levels_of(whole);
    lv = tv_levels_of(h);
    assert_int_equal(h->nevents, whole->nevents);
    assert_true(h->min_ps == whole->min_ps && h->max_ps == whole->max_ps);
    coarse = lv->known < TV_LEVELS - 1;
    if (coarse) {
        assert_int_equal(lv->known, upto);
        for (i = 0; i < h->nevents; i++) {
            const struct tv_event *a = &whole->events[i], *b = &h->events[i];
            assert_true(a->ts == b->ts && a->src == b->src && a->name == b->name);
            if (a->level <= upto) {
                assert_int_equal(b->level, a->level);
                assert_int_equal(b->serial, a->serial);
                assert_int_equal(b->flags, a->flags);
            } else {
                assert_int_equal(b->level, TV_LEVEL_FINER);
            }
        }
        assert_levels_equal(wl, lv, upto);
        assert_null(lv->older);
    }
    assert_int_equal(tv_complete(h, nthreads, &err), 0);
    assert_int_equal(tv_complete(h, nthreads, &err), 0); /* a no-op now */
    lv = tv_levels_of(h);
    assert_int_equal(lv->known, TV_LEVELS - 1);
    assert_true(coarse == (lv->older != NULL));
    if (h->nevents > 0)
        assert_memory_equal(h->events, whole->events, h->nevents * sizeof(*h->events));
    assert_levels_equal(wl, lv, TV_LEVELS - 1);
    tv_host_free(whole);
    tv_host_free(h);
    return coarse;
}

static void test_coarse_then_complete(void **state)
{
    static const uint32_t parts[] = {1, 3, 16};
    uint32_t i, stopped = 0;
    int upto;

    (void)state;
    for (upto = 0; upto < TV_LEVELS - 2; upto++) {
        for (i = 0; i < sizeof(parts) / sizeof(parts[0]); i++) {
            int threads = 1 + (int)((i + (uint32_t)upto) % 2);
            stopped += check_staged(fill_flows, 20000, parts[i], threads, upto);
            stopped += check_staged(fill_flows_and_plain, 12000, parts[i], threads, upto);
            stopped += check_staged(fill_random, 20000, parts[i], threads, upto);
            stopped += check_staged(fill_ties, 30000, parts[i], threads, upto);
            stopped += check_staged(fill_same_start, 300, parts[i], threads, upto);
            stopped += check_staged(fill_high, 50, parts[i], threads, upto);
            stopped += check_staged(fill_long, 0, parts[i], threads, upto);
            stopped += check_staged(fill_crowded, 300, parts[i], threads, upto);
            stopped += check_staged(fill_random, 1, parts[i], threads, upto);
        }
    }
    /* Both ways were taken: the coarse stop, and at once when too full. */
    assert_true(stopped > 20);
    assert_true(stopped < (TV_LEVELS - 2) * 3 * 8);
}

/* Few coarse events, but most events share a start with one (300 at one
 * time): their uids would take more than a quarter of the events through
 * the coarse way, so the finish completes the index at once. */
static void test_coarse_declines_crowded_starts(void **state)
{
    struct tv_host *h = filled_host(fill_crowded, 300);
    struct xp_err err = {0};
    uint32_t i, coarse = 0;

    (void)state;
    assert_int_equal(tv_finish_parts_upto(h, 2, 1, 3, &err), 0);
    assert_int_equal(tv_levels_of(h)->known, TV_LEVELS - 1);
    for (i = 0; i < h->nevents; i++)
        coarse += h->events[i].level <= 3;
    assert_int_equal(coarse, 2);
    tv_host_free(h);
}

/* After tv_finish of five threads' events (source record s on thread
 * tid_of[s], n of them): tracks ascend by tid, each track's range holds
 * exactly its own events (tv_track_at agrees), and every source record is
 * there once. */
static void assert_tracks_hold(const struct tv_host *h, const uint32_t *tid_of, uint32_t n)
{
    uint8_t *seen = calloc(n, 1);
    uint32_t t, i, total = 0;

    assert_non_null(seen);
    assert_int_equal(h->ntracks, 5);
    for (t = 0; t < h->ntracks; t++) {
        const struct tv_track *tr = &h->tracks[t];
        assert_int_equal(tr->tid, t + 1);
        assert_int_equal(tr->first, total);
        for (i = tr->first; i < tr->first + tr->count; i++) {
            const struct tv_event *e = &h->events[i];
            assert_int_equal(tv_track_at(h, i), t);
            assert_true(e->src < n);
            assert_int_equal(tid_of[e->src], tr->tid);
            assert_int_equal(seen[e->src], 0);
            seen[e->src] = 1;
        }
        total += tr->count;
    }
    assert_int_equal(total, n);
    free(seen);
}

/* Events of five threads added in one of three orders; after tv_finish
 * every track's range holds exactly its own events, tracks ascend by tid,
 * and every source record is there once. 150,000 events, so that the
 * renumbering pass runs in parts on two threads. */
enum track_order { ORDER_SHUFFLED, ORDER_GROUPED, ORDER_GROUPED_TWICE };

static void check_tracks_grouped(enum track_order how)
{
    static const uint32_t created[5] = {5, 3, 1, 4, 2}; /* track ids != output order */
    struct tv_host *h = tv_host_new("test");
    struct xp_err err = {0};
    const uint32_t n = 150000;
    uint32_t *tid_of = malloc(n * sizeof(*tid_of)), i;
    uint64_t x = 99;

    assert_non_null(h);
    assert_non_null(tid_of);
    assert_true(tv_add_device(h, 1, "test /device:GPU:0") >= 0);
    for (i = 0; i < 5; i++)
        assert_int_equal(tv_add_resource(h, 1, created[i], tv_cstr(h, "row")), 0);
    /* Grouped orders: tids 1..5 in runs over the whole array, or twice
     * over, once per half (the two parts of the renumbering pass). */
    const uint32_t run = how == ORDER_GROUPED_TWICE ? n / 2 : n;
    for (i = 0; i < n; i++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        tid_of[i] = how == ORDER_SHUFFLED ? 1 + (uint32_t)(x % 5) : 1 + (i % run) * 5 / run;
        add(h, tid_of[i], 1000 + (x % 100000), 1 + x % 50, "e", i);
    }
    assert_int_equal(tv_finish(h, 2, &err), 0);
    assert_tracks_hold(h, tid_of, n);
    free(tid_of);
    tv_host_free(h);
}

static void test_tracks_grouped_after_finish(void **state)
{
    (void)state;
    check_tracks_grouped(ORDER_SHUFFLED);
    check_tracks_grouped(ORDER_GROUPED);
    check_tracks_grouped(ORDER_GROUPED_TWICE);
}

/* A builder that declares runs of slots (tv_add_run) instead of each
 * event's track: five threads' runs of 3,000 slots declared in output
 * order or not, some events moved to another thread (one run entirely);
 * after tv_finish every track holds exactly its events, as if each
 * event's track had been given. */
static void check_runs(int shuffled, int moves)
{
    static const uint32_t created[5] = {5, 3, 1, 4, 2};
    struct tv_host *h = tv_host_new("test");
    struct xp_err err = {0};
    const uint32_t run = 3000, nruns = 10, n = run * nruns;
    uint32_t *tid_of = malloc(n * sizeof(*tid_of)), i, first;
    int64_t track_of_tid[6];
    uint64_t x = 7;

    assert_non_null(h);
    assert_non_null(tid_of);
    assert_int_equal(tv_runs_begin(h), 0);
    assert_true(tv_add_device(h, 1, "test /device:GPU:0") >= 0);
    for (i = 0; i < 5; i++) {
        assert_int_equal(tv_add_resource(h, 1, created[i], tv_cstr(h, "row")), 0);
        track_of_tid[created[i]] = tv_track_thread(h, 1, created[i]);
        assert_true(track_of_tid[created[i]] >= 0);
    }
    assert_int_equal(tv_alloc_events(h, n, &first), 0);
    assert_int_equal(first, 0);
    for (i = 0; i < nruns; i++) {
        /* run i: tid 1 + i / 2 in output order, or shuffled */
        uint32_t tid = shuffled ? 1 + (i * 3) % 5 : 1 + i / 2, k;
        int all_moved = moves && i == 4;
        assert_int_equal(
            tv_add_run(h, i * run, run, all_moved ? TV_RUN_MOVED : (uint32_t)track_of_tid[tid]), 0);
        for (k = 0; k < run; k++) {
            struct tv_new_event e;
            uint32_t s = i * run + k;
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            memset(&e, 0, sizeof(e));
            e.ts = 1000 + x % 100000;
            e.dur = 1 + x % 50;
            e.name = tv_cstr(h, "e");
            e.src = s;
            tid_of[s] = tid;
            if (all_moved || (moves && x % 7 == 0))
                tid_of[s] = 1 + (uint32_t)(x % 5);
            assert_int_equal(tv_put_event(h, s, &e), 0);
            if (all_moved || tid_of[s] != tid)
                assert_int_equal(tv_move_event(h, s, (uint32_t)track_of_tid[tid_of[s]]), 0);
        }
    }
    assert_int_equal(tv_finish(h, 2, &err), 0);
    assert_tracks_hold(h, tid_of, n);
    free(tid_of);
    tv_host_free(h);
}

static void test_tracks_from_runs(void **state)
{
    (void)state;
    check_runs(0, 0);
    check_runs(1, 0);
    check_runs(0, 1);
    check_runs(1, 1);
}

static void test_search(void **state)
{
    struct tv_host *h = make_host(fill_random, 2000);
    uint32_t *got, n, i, want = 0;

    assert_int_equal(tv_select_search(h, "a", 0, &got, &n), 0);
    for (i = 0; i < h->nevents; i++)
        want += strcmp(tv_text(h, h->events[i].name), "a") == 0;
    assert_int_equal(n, want);
    for (i = 0; i < n; i++)
        assert_string_equal(tv_text(h, h->events[got[i]].name), "a");
    free(got);
    tv_host_free(h);
}

/* Group ids by source record: an owned table answers what the fill wrote;
 * a shared one (a session's grouping, read in place) answers its entries,
 * a negative one as none; a record past either table asks the builder's
 * group_of, and with none there is no group. */
static int32_t group_of_seven(const struct tv_host *h, const struct tv_event *e)
{
    (void)h;
    return e->src == 7 ? 70 : TV_NO_GROUP;
}

static void test_group_tables(void **state)
{
    static const int32_t shared[4] = {3, -1, -2, 0};
    struct tv_host *h = tv_host_new("test");
    struct tv_event e;

    (void)state;
    assert_non_null(h);
    memset(&e, 0, sizeof(e));
    e.src = 7;
    assert_int_equal(tv_event_group(h, &e), TV_NO_GROUP);
    h->group_of = group_of_seven;
    assert_int_equal(tv_event_group(h, &e), 70);
    assert_int_equal(tv_alloc_groups(h, 4), 0);
    h->groups_own[0] = 5;
    h->groups_own[2] = -2;
    e.src = 0;
    assert_int_equal(tv_event_group(h, &e), 5);
    e.src = 2;
    assert_int_equal(tv_event_group(h, &e), -2); /* a file's own value, kept */
    tv_share_groups(h, shared, 4);
    assert_null(h->groups_own);
    e.src = 0;
    assert_int_equal(tv_event_group(h, &e), 3);
    e.src = 1;
    assert_int_equal(tv_event_group(h, &e), TV_NO_GROUP);
    e.src = 2;
    assert_int_equal(tv_event_group(h, &e), TV_NO_GROUP);
    e.src = 3;
    assert_int_equal(tv_event_group(h, &e), 0);
    e.src = 7;
    assert_int_equal(tv_event_group(h, &e), 70);
    tv_host_free(h); /* frees nothing of shared */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_visibility_rule),
        cmocka_unit_test(test_row_depth_deep),
        cmocka_unit_test(test_flow_visibility),
        cmocka_unit_test(test_flowmap),
        cmocka_unit_test(test_uids_and_cap),
        cmocka_unit_test(test_windows_match_brute_force),
        cmocka_unit_test(test_levels_are_monotonic),
        cmocka_unit_test(test_downsampling_over_threshold),
        cmocka_unit_test(test_flow_levels_match_trackers),
        cmocka_unit_test(test_search),
        cmocka_unit_test(test_parallel_order_matches_sort),
        cmocka_unit_test(test_coarse_then_complete),
        cmocka_unit_test(test_coarse_declines_crowded_starts),
        cmocka_unit_test(test_tracks_grouped_after_finish),
        cmocka_unit_test(test_tracks_from_runs),
        cmocka_unit_test(test_long_durations),
        cmocka_unit_test(test_group_tables),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
