/*
 * test_trace_write.c - the traceEvents entries written in parallel batches:
 * the bytes do not depend on where the batches split (inside counter runs,
 * between a counter run and a thread's events, over dropped events, across
 * hosts), and they parse as the entries XProf writes: one object per event,
 * one object per run of counter samples with one "entries" row per sample;
 * with perfetto=1's counter_samples, one object per sample instead.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <cjson/cJSON.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "trace/trace_index.h"
#include "trace/trace_write.h"

/* Counter samples carry one value: their start in ps. */
static int counter_value(const struct tv_host *h, const struct tv_event *e, struct out *o,
                         const char **first_arg_name, struct tv_counter_value *first)
{
    (void)h;
    if (first != NULL) {
        first->kind = TV_COUNTER_UINT;
        first->u = e->ts;
    }
    if (o != NULL) {
        *first_arg_name = "value";
        out_u64(o, e->ts);
    }
    return 1;
}

/* Every event's args: its source record (counter samples of perfetto=1). */
static uint64_t src_args(const struct tv_host *h, const struct tv_event *e, struct out *o,
                         int *first)
{
    (void)h;
    if (!*first)
        out_putc(o, ',');
    *first = 0;
    out_puts(o, "\"src\":");
    out_u64(o, e->src);
    return 0;
}

static void add(struct tv_host *h, int64_t track, uint64_t ts, uint64_t dur, const char *name,
                uint32_t src, int counter)
{
    struct tv_new_event e;

    assert_true(track >= 0);
    memset(&e, 0, sizeof(e));
    e.ts = ts;
    e.dur = dur;
    e.name = tv_cstr(h, name);
    e.track = (uint32_t)track;
    e.src = src;
    e.flags = counter ? TV_EV_COUNTER : 0;
    assert_int_equal(tv_add_event(h, &e), 0);
}

/* Two threads, two counter channels in each of two processes, and 300
 * events at one start on a thread (44 of them dropped: uid >= 256). */
static struct tv_host *make_host(void)
{
    struct tv_host *h = tv_host_new("test");
    struct xp_err err = {0};
    uint32_t i, src = 0, pid;

    assert_non_null(h);
    for (pid = 1; pid <= 2; pid++) {
        int64_t c1, c2, t1, t2;
        assert_true(tv_add_device(h, pid, pid == 1 ? "host A" : "host B") >= 0);
        assert_int_equal(tv_add_resource(h, pid, 1, tv_cstr(h, "one")), 0);
        assert_int_equal(tv_add_resource(h, pid, 2, tv_cstr(h, "two")), 0);
        t1 = tv_track_thread(h, pid, 1);
        t2 = tv_track_thread(h, pid, 2);
        c1 = tv_track_channel(h, pid, tv_cstr(h, "mem"));
        c2 = tv_track_channel(h, pid, tv_cstr(h, "flops"));
        for (i = 0; i < 331; i++) {
            add(h, t1, 1000000 + 7919 * (uint64_t)i, 500 + i % 13, i % 3 ? "k" : "op \"x\"", src++,
                0);
            add(h, t2, 2000000 + 104729 * (uint64_t)(i % 101), 300, "m", src++, 0);
            add(h, c1, 1000 * (uint64_t)i, 0, "mem", src++, 1);
            if (i % 2)
                add(h, c2, 1500 * (uint64_t)i, 0, "flops", src++, 1);
        }
        for (i = 0; i < 300; i++)
            add(h, t2, 777, 1000 - i, "same", src++, 0);
    }
    h->counter = counter_value;
    assert_int_equal(tv_finish(h, 2, &err), 0);
    return h;
}

/* The entries for the parts with batches of batch positions. */
static char *entries(const struct tv_part *parts, int nparts, uint32_t batch, int *first,
                     uint64_t *counters)
{
    struct tv_frames frames = {0};
    struct out o;
    struct blob *b;
    char *s;

    out_init(&o);
    assert_int_equal(tw_write_batched(&o, parts, nparts, &frames, first, counters, batch), 0);
    assert_int_equal(out_finish(&o, &b), 0);
    s = malloc(b->size + 1);
    assert_int_equal(blob_read(b, 0, s, b->size), (ssize_t)b->size);
    s[b->size] = '\0';
    blob_unref(b);
    return s;
}

/* The entries as the JSON array they are written into. */
static cJSON *parse_entries(const char *entries)
{
    size_t len = strlen(entries);
    char *wrapped = malloc(len + 3);
    cJSON *doc;

    assert_non_null(wrapped);
    wrapped[0] = '[';
    memcpy(wrapped + 1, entries, len);
    wrapped[len + 1] = ']';
    wrapped[len + 2] = '\0';
    doc = cJSON_Parse(wrapped);
    free(wrapped);
    assert_non_null(doc);
    return doc;
}

static void test_batches_do_not_change_bytes(void **state)
{
    static const uint32_t batches[] = {1, 2, 3, 5, 64, 999, 4096, 8192};
    struct tv_host *h = make_host();
    struct tv_part parts[2];
    uint32_t i, k, dropped = 0, counters_all = 0, counters_sel = 0, nsel = 0;
    uint64_t counters, want_counters;
    int first;
    char *want;
    cJSON *doc, *it;
    size_t objects = 0, rows = 0;

    (void)state;
    /* Host 1: every stored event; host 2: every third event, by index. */
    memset(parts, 0, sizeof(parts));
    parts[0].h = h;
    parts[0].offset = 1000;
    parts[0].all = 1;
    parts[1].h = h;
    parts[1].offset = 2000;
    parts[1].idx = malloc(h->nevents * sizeof(uint32_t));
    for (i = 0; i < h->nevents; i++) {
        int drop = (h->events[i].flags & TV_EV_DROPPED) != 0;
        int counter = (h->events[i].flags & TV_EV_COUNTER) != 0;
        dropped += drop;
        counters_all += !drop && counter;
        if (i % 3 == 0 && !drop) {
            parts[1].idx[nsel++] = i;
            counters_sel += counter;
        }
    }
    parts[1].n = nsel;
    assert_true(dropped > 0);
    want_counters = counters_all + counters_sel;

    first = 1;
    want = entries(parts, 2, UINT32_MAX, &first, &want_counters);
    assert_int_equal(first, 0);
    assert_int_equal(want_counters, counters_all + counters_sel);
    for (k = 0; k < sizeof(batches) / sizeof(batches[0]); k++) {
        char *got;
        first = 1;
        got = entries(parts, 2, batches[k], &first, &counters);
        assert_int_equal(first, 0);
        assert_int_equal(counters, want_counters);
        assert_string_equal(got, want);
        free(got);
    }
    /* After earlier entries the first one gets its comma too. */
    first = 0;
    {
        char *got = entries(parts, 2, 7, &first, &counters);
        assert_int_equal(got[0], ',');
        assert_string_equal(got + 1, want);
        free(got);
    }

    /* One object per written thread event, one per counter run, one row per
     * counter sample. */
    doc = parse_entries(want);
    cJSON_ArrayForEach(it, doc)
    {
        cJSON *rowsj = cJSON_GetObjectItemCaseSensitive(it, "entries");
        objects++;
        if (rowsj != NULL)
            rows += (size_t)cJSON_GetArraySize(rowsj);
    }
    assert_int_equal(rows, want_counters);
    /* Runs: per part, 2 processes x 2 channels (the selection keeps both). */
    assert_int_equal(objects,
                     (h->nevents - dropped - counters_all) + (nsel - counters_sel) + 2 * 2 * 2);
    cJSON_Delete(doc);
    free(want);
    free(parts[1].idx);
    tv_host_free(h);
}

/* Nothing selected: no bytes, and the comma state stays. */
static void test_empty(void **state)
{
    struct tv_host *h = make_host();
    struct tv_part part;
    uint64_t counters = 7;
    int first = 1;
    char *s;

    (void)state;
    memset(&part, 0, sizeof(part));
    part.h = h;
    s = entries(&part, 1, 3, &first, &counters);
    assert_string_equal(s, "");
    assert_int_equal(first, 1);
    assert_int_equal(counters, 0);
    free(s);
    tv_host_free(h);
}

/* perfetto=1: each counter sample an object of its own, {"pid", "name",
 * "ts", "ph":"C", "args"}, with no "entries" array; thread events as in
 * XProf's form; the bytes again independent of the batches. */
static void test_counter_samples(void **state)
{
    static const uint32_t batches[] = {1, 2, 7, 64, 8192};
    struct tv_host *h = make_host();
    struct tv_part part;
    uint64_t counters, want_counters = 0;
    uint32_t i, k, samples = 0, others = 0;
    int first = 1;
    char *want;
    cJSON *doc, *it;

    (void)state;
    h->args = src_args;
    memset(&part, 0, sizeof(part));
    part.h = h;
    part.offset = 1000;
    part.all = 1;
    part.counter_samples = 1;
    for (i = 0; i < h->nevents; i++) {
        if (h->events[i].flags & TV_EV_DROPPED)
            continue;
        if (h->events[i].flags & TV_EV_COUNTER)
            want_counters++;
        else
            others++;
    }
    want = entries(&part, 1, UINT32_MAX, &first, &counters);
    assert_int_equal(counters, want_counters);
    assert_null(strstr(want, "entries"));
    for (k = 0; k < sizeof(batches) / sizeof(batches[0]); k++) {
        char *got;
        first = 1;
        got = entries(&part, 1, batches[k], &first, &counters);
        assert_string_equal(got, want);
        free(got);
    }
    doc = parse_entries(want);
    cJSON_ArrayForEach(it, doc)
    {
        const cJSON *ph = cJSON_GetObjectItemCaseSensitive(it, "ph");
        const cJSON *ts = cJSON_GetObjectItemCaseSensitive(it, "ts");
        assert_true(cJSON_IsString(ph) && cJSON_IsNumber(ts));
        if (strcmp(ph->valuestring, "C") == 0) {
            const cJSON *args = cJSON_GetObjectItemCaseSensitive(it, "args");
            const cJSON *src = cJSON_GetObjectItemCaseSensitive(args, "src");
            const cJSON *name = cJSON_GetObjectItemCaseSensitive(it, "name");
            uint32_t at;
            assert_true(cJSON_IsNumber(src));
            /* the sample's own record: its name and start (ts in µs) */
            for (at = 0; at < h->nevents && h->events[at].src != (uint32_t)src->valuedouble;)
                at++;
            assert_true(at < h->nevents);
            assert_string_equal(name->valuestring, tv_text(h, h->events[at].name));
            assert_int_equal(llround(ts->valuedouble * 1e6), h->events[at].ts);
            samples++;
        } else {
            assert_string_equal(ph->valuestring, "X");
        }
    }
    assert_int_equal(samples, want_counters);
    assert_int_equal((uint32_t)cJSON_GetArraySize(doc), samples + others);
    cJSON_Delete(doc);
    free(want);
    tv_host_free(h);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_batches_do_not_change_bytes),
        cmocka_unit_test(test_empty),
        cmocka_unit_test(test_counter_samples),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
