/*
 * test_steps.c - unit tests of the step/region model (src/steps*.c): small
 * XSpaces built with protobuf-c, written to a temporary file, read back with
 * the real reader, and checked against hand-computed times.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "xplane/steps.h"
#include "xplane/steps_build.h"
#include "xplane.pb-c.h"
#include "reader/xspace.h"

#define US 1000000LL /* ps per microsecond */
#define NO_NUM INT64_MIN

/* One event of a test profile, times in microseconds. */
struct tev {
    int line;         /* line id (1, 2, ...) */
    const char *name; /* event name */
    int64_t lo, hi;   /* start, end */
    int64_t step_num; /* step_num stat, or NO_NUM */
    int root;         /* 1: add the _r stat */
};

/* Builds one XSpace with plane_name holding ev[0..n); returns it decoded. */
static struct xspace *make_space(const char *plane_name, const struct tev *ev, size_t n)
{
    Xprofs__XSpace space = XPROFS__XSPACE__INIT;
    Xprofs__XPlane plane = XPROFS__XPLANE__INIT, *planes[1] = {&plane};
    Xprofs__XLine lines[4], *line_ptrs[4];
    Xprofs__XEvent *events = calloc(n, sizeof(*events));
    Xprofs__XEvent ***line_events = calloc(4, sizeof(*line_events));
    Xprofs__XStat *stats = calloc(2 * n, sizeof(*stats));
    Xprofs__XStat **stat_ptrs = calloc(2 * n, sizeof(*stat_ptrs));
    Xprofs__EventMetadataEntry em[64], *em_ptrs[64];
    Xprofs__XEventMetadata emv[64];
    Xprofs__StatMetadataEntry sm[2], *sm_ptrs[2] = {&sm[0], &sm[1]};
    Xprofs__XStatMetadata smv[2];
    const char *names[64];
    size_t nnames = 0, i, k, len;
    uint8_t *buf;
    char path[] = "/tmp/test_steps_XXXXXX";
    struct xspace *xs = NULL;
    struct xp_err err;
    int fd;

    assert_non_null(events);
    assert_non_null(line_events);
    for (i = 0; i < 2; i++) {
        xprofs__stat_metadata_entry__init(&sm[i]);
        xprofs__xstat_metadata__init(&smv[i]);
        smv[i].id = (int64_t)i + 1;
        smv[i].name = i == 0 ? "step_num" : "_r";
        sm[i].key = (int64_t)i + 1;
        sm[i].value = &smv[i];
    }
    for (i = 0; i < 4; i++) {
        xprofs__xline__init(&lines[i]);
        lines[i].id = (int64_t)i + 1;
        lines[i].name = i == 0 ? "python3" : i == 1 ? "pjrt" : i == 2 ? "second" : "fourth";
        line_ptrs[i] = &lines[i];
        line_events[i] = calloc(n + 1, sizeof(**line_events));
    }
    for (i = 0; i < n; i++) {
        Xprofs__XLine *l = &lines[ev[i].line - 1];
        for (k = 0; k < nnames && strcmp(names[k], ev[i].name) != 0; k++)
            ;
        if (k == nnames)
            names[nnames++] = ev[i].name;
        xprofs__xevent__init(&events[i]);
        events[i].metadata_id = (int64_t)k + 1;
        events[i].data_case = XPROFS__XEVENT__DATA_OFFSET_PS;
        events[i].offset_ps = ev[i].lo * US;
        events[i].duration_ps = (ev[i].hi - ev[i].lo) * US;
        events[i].stats = &stat_ptrs[2 * i];
        if (ev[i].step_num != NO_NUM) {
            Xprofs__XStat *s = &stats[2 * i + events[i].n_stats];
            xprofs__xstat__init(s);
            s->metadata_id = 1;
            s->value_case = XPROFS__XSTAT__VALUE_INT64_VALUE;
            s->int64_value = ev[i].step_num;
            events[i].stats[events[i].n_stats++] = s;
        }
        if (ev[i].root) {
            Xprofs__XStat *s = &stats[2 * i + events[i].n_stats];
            xprofs__xstat__init(s);
            s->metadata_id = 2;
            s->value_case = XPROFS__XSTAT__VALUE_INT64_VALUE;
            s->int64_value = 1;
            events[i].stats[events[i].n_stats++] = s;
        }
        line_events[ev[i].line - 1][l->n_events++] = &events[i];
    }
    for (i = 0; i < 4; i++)
        lines[i].events = line_events[i];
    for (k = 0; k < nnames; k++) {
        xprofs__event_metadata_entry__init(&em[k]);
        xprofs__xevent_metadata__init(&emv[k]);
        emv[k].id = (int64_t)k + 1;
        emv[k].name = (char *)names[k];
        em[k].key = (int64_t)k + 1;
        em[k].value = &emv[k];
        em_ptrs[k] = &em[k];
    }
    plane.name = (char *)plane_name;
    plane.n_lines = 4;
    plane.lines = line_ptrs;
    plane.n_event_metadata = nnames;
    plane.event_metadata = em_ptrs;
    plane.n_stat_metadata = 2;
    plane.stat_metadata = sm_ptrs;
    space.n_planes = 1;
    space.planes = planes;
    len = xprofs__xspace__get_packed_size(&space);
    buf = malloc(len ? len : 1);
    assert_non_null(buf);
    xprofs__xspace__pack(&space, buf);
    fd = mkstemp(path);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, buf, len), (ssize_t)len);
    close(fd);
    assert_int_equal(xspace_open(path, &xs, &err), 0);
    assert_int_equal(xspace_decode(xs, 1, &err), 0);
    unlink(path);
    free(buf);
    for (i = 0; i < 4; i++)
        free(line_events[i]);
    free(line_events);
    free(events);
    free(stats);
    free(stat_ptrs);
    return xs;
}

static struct xp_steps *model(const struct xspace *xs, const char *step)
{
    struct xp_steps *m = NULL;
    struct xp_err err;

    assert_int_equal(xp_steps_from_xspace(xs, step, &m, &err), 0);
    assert_non_null(m);
    return m;
}

/* The row of step s named name (the k-th such row), or fails. */
static const struct xp_steps_row *find_row(const struct xp_steps *m, uint32_t s, const char *name,
                                           int k)
{
    uint32_t r;

    for (r = m->steps[s].row; r < m->steps[s].row + m->steps[s].nrows; r++) {
        if (strcmp(m->rows[r].name, name) == 0 && k-- == 0)
            return &m->rows[r];
    }
    fail_msg("no row %s in step %u", name, s);
    return NULL;
}

/* 4 learner_steps as in the synth's steps4 scenario; the jitted work runs on
 * another thread and is not a region of the step. */
static void test_steps_four_steps(void **state)
{
    static const int64_t t[4][6] = {{100, 1100, 110, 310, 320, 1070},
                                    {1200, 2000, 1200, 1300, 1300, 2000},
                                    {2100, 3300, 2150, 2550, 2600, 3200},
                                    {3400, 4000, 3410, 3460, 3470, 3990}};
    struct tev ev[4 * 5];
    struct xspace *xs;
    struct xp_steps *m;
    int k, n = 0;

    for (k = 0; k < 4; k++) {
        ev[n++] = (struct tev){1, "learner_step", t[k][0], t[k][1], k, 1};
        ev[n++] = (struct tev){1, "input_wait", t[k][2], t[k][3], NO_NUM, 0};
        ev[n++] = (struct tev){1, "model_and_wait", t[k][4], t[k][5], NO_NUM, 0};
        ev[n++] =
            (struct tev){1, "PjitFunction(learner_step)", t[k][4] + 5, t[k][4] + 25, NO_NUM, 0};
        ev[n++] = (struct tev){2, "ExecuteHelper", t[k][4] + 30, t[k][4] + 130, NO_NUM, 0};
    }
    xs = make_space("/host:CPU", ev, (size_t)n);
    m = model(xs, NULL);
    assert_int_equal(m->source, XP_STEPS_STEP_NUM);
    assert_int_equal(m->nstep_names, 1);
    assert_string_equal(m->step_names[0], "learner_step");
    assert_int_equal(m->nsteps, 4);
    assert_int_equal(m->nthreads, 1);
    assert_int_equal(m->nrows, 16);
    for (k = 0; k < 4; k++) {
        const struct xp_steps_step *st = &m->steps[k];
        const struct xp_steps_row *step = &m->rows[st->row];
        int64_t dur = t[k][1] - t[k][0], iw = t[k][3] - t[k][2], mw = t[k][5] - t[k][4];
        assert_int_equal(st->step_num, k);
        assert_int_equal(step->start_ps, t[k][0] * US);
        assert_int_equal(step->dur_ps, dur * US);
        /* Unattributed = step - (input_wait + model_and_wait): they do not overlap. */
        assert_int_equal(step->self_ps, (dur - iw - mw) * US);
        /* Naive: step + input_wait + model_and_wait + pjit (20 us). */
        assert_int_equal(st->naive_sum_ps, (dur + iw + mw + 20) * US);
        assert_int_equal(find_row(m, (uint32_t)k, "model_and_wait", 0)->self_ps, (mw - 20) * US);
        assert_int_equal(find_row(m, (uint32_t)k, "PjitFunction(learner_step)", 0)->depth, 2);
        assert_int_equal(find_row(m, (uint32_t)k, "input_wait", 0)->overlap_ps, 0);
    }
    /* Hand-computed unattributed: 1000-200-750, 800-100-700, 1200-400-600,
     * 600-50-520 us. */
    assert_int_equal(m->rows[m->steps[0].row].self_ps, 50 * US);
    assert_int_equal(m->rows[m->steps[1].row].self_ps, 0);
    assert_int_equal(m->rows[m->steps[2].row].self_ps, 200 * US);
    assert_int_equal(m->rows[m->steps[3].row].self_ps, 30 * US);
    xp_steps_free(m);
    xspace_close(xs);
}

/* Step [0,10] with children [2,7] and [8,12]: the numbers. */
static void test_steps_child_crosses_end(void **state)
{
    static const struct tev ev[] = {
        {1, "step", 0, 10, 0, 0},
        {1, "a", 2, 7, NO_NUM, 0},
        {1, "b", 8, 12, NO_NUM, 0},
        {1, "after", 12, 13, NO_NUM, 0},
    };
    struct xspace *xs = make_space("/host:CPU", ev, 4);
    struct xp_steps *m = model(xs, NULL);
    const struct xp_steps_row *b;

    assert_int_equal(m->nsteps, 1);
    assert_int_equal(m->steps[0].nrows, 3); /* "after" starts past the step */
    assert_int_equal(m->steps[0].naive_sum_ps, 19 * US);
    assert_int_equal(m->rows[0].self_ps, 3 * US); /* union of children in step: 7 */
    b = find_row(m, 0, "b", 0);
    assert_int_equal(b->parent, 0);
    assert_int_equal(b->depth, 1);
    assert_int_equal(b->overlap_ps, 0);
    assert_int_equal(b->start_ps + b->dur_ps - 10 * US, 2 * US); /* outside its step */
    xp_steps_free(m);
    xspace_close(xs);
}

/* Overlapping siblings [10,50] and [40,80] in a step [0,100]. */
static void test_steps_overlapping_siblings(void **state)
{
    static const struct tev ev[] = {
        {1, "step", 0, 100, 7, 0},
        {1, "a", 10, 50, NO_NUM, 0},
        {1, "b", 40, 80, NO_NUM, 0},
        {1, "c", 45, 48, NO_NUM, 0},
    };
    struct xspace *xs = make_space("/host:CPU", ev, 4);
    struct xp_steps *m = model(xs, NULL);

    assert_int_equal(m->steps[0].step_num, 7);
    assert_int_equal(m->rows[0].self_ps, 30 * US);
    assert_int_equal(find_row(m, 0, "a", 0)->overlap_ps, 10 * US);
    assert_int_equal(find_row(m, 0, "b", 0)->overlap_ps, 10 * US);
    /* c lies in both; it hangs from the later one, b. */
    assert_int_equal(m->rows[find_row(m, 0, "c", 0)->parent].name[0], 'b');
    assert_int_equal(find_row(m, 0, "b", 0)->self_ps, 37 * US);
    assert_int_equal(find_row(m, 0, "a", 0)->self_ps, 40 * US);
    assert_int_equal(m->steps[0].naive_sum_ps, (100 + 40 + 40 + 3) * US);
    xp_steps_free(m);
    xspace_close(xs);
}

/* Zero-length events: a point inside, a point at the end, a zero-length step. */
static void test_steps_zero_length(void **state)
{
    static const struct tev ev[] = {
        {1, "step", 0, 10, 0, 0},  {1, "mark", 5, 5, NO_NUM, 0},    {1, "end", 10, 10, NO_NUM, 0},
        {1, "step", 20, 20, 1, 0}, {1, "inner", 20, 20, NO_NUM, 0},
    };
    struct xspace *xs = make_space("/host:CPU", ev, 5);
    struct xp_steps *m = model(xs, NULL);

    assert_int_equal(m->nsteps, 2);
    assert_int_equal(m->steps[0].nrows, 3);
    assert_int_equal(m->rows[0].self_ps, 10 * US);
    assert_int_equal(find_row(m, 0, "end", 0)->depth, 1);
    assert_int_equal(m->steps[1].nrows, 2);
    assert_int_equal(m->rows[m->steps[1].row].dur_ps, 0);
    assert_int_equal(m->rows[m->steps[1].row].self_ps, 0);
    assert_int_equal(m->steps[1].naive_sum_ps, 0);
    xp_steps_free(m);
    xspace_close(xs);
}

/* Steps on two threads, interleaved in time: sorted by start. */
static void test_steps_two_threads(void **state)
{
    static const struct tev ev[] = {
        {1, "train", 0, 10, 0, 0}, {1, "x", 1, 4, NO_NUM, 0},  {1, "train", 20, 30, 1, 0},
        {3, "train", 5, 15, 0, 0}, {3, "x", 6, 14, NO_NUM, 0}, {2, "x", 0, 100, NO_NUM, 0},
    };
    struct xspace *xs = make_space("/host:CPU", ev, 6);
    struct xp_steps *m = model(xs, NULL);

    assert_int_equal(m->nsteps, 3);
    assert_int_equal(m->nthreads, 2);
    assert_int_equal(m->threads[m->steps[0].thread].id, 1);
    assert_int_equal(m->threads[m->steps[1].thread].id, 3);
    assert_string_equal(m->threads[m->steps[1].thread].name, "second");
    assert_int_equal(m->rows[m->steps[1].row].self_ps, 2 * US);
    assert_int_equal(m->rows[m->steps[0].row].self_ps, 7 * US);
    assert_int_equal(m->steps[2].step_num, 1);
    xp_steps_free(m);
    xspace_close(xs);
}

/* 100,000 nested regions in one step: no recursion, depth 100,000. */
static void test_steps_deep_nesting(void **state)
{
    size_t n = 100001, i;
    struct tev *ev = calloc(n, sizeof(*ev));
    struct xspace *xs;
    struct xp_steps *m;

    assert_non_null(ev);
    ev[0] = (struct tev){1, "step", 0, 1000000, 0, 0};
    for (i = 1; i < n; i++)
        ev[i] = (struct tev){1, "r", (int64_t)i, 1000000 - (int64_t)i, NO_NUM, 0};
    xs = make_space("/host:CPU", ev, n);
    m = model(xs, NULL);
    assert_int_equal(m->nsteps, 1);
    assert_int_equal(m->nrows, n);
    assert_int_equal(m->rows[n - 1].depth, n - 1);
    assert_int_equal(m->rows[n - 1].parent, n - 2);
    assert_int_equal(m->rows[0].self_ps, 2 * US);
    assert_int_equal(m->rows[1].self_ps, 2 * US);
    xp_steps_free(m);
    xspace_close(xs);
    free(ev);
}

/* Detection: _r roots when nothing has step_num; TF markers; nothing;
 * asked names; a step inside a step is a region; hidden events are left out. */
static void test_steps_detection(void **state)
{
    static const struct tev roots[] = {
        {1, "outer", 0, 100, NO_NUM, 1},
        {1, "outer", 10, 20, NO_NUM, 1}, /* nested: a region */
        {1, "MemoryAllocation", 30, 30, NO_NUM, 0},
        {1, "SessionRun", 40, 50, NO_NUM, 0},
    };
    static const struct tev tf[] = {
        {1, "SessionRun", 0, 10, NO_NUM, 0},
        {1, "SessionRun", 20, 30, NO_NUM, 0},
        {1, "op", 2, 3, NO_NUM, 0},
    };
    static const struct tev none[] = {{1, "op", 0, 10, NO_NUM, 0}};
    struct xspace *xs;
    struct xp_steps *m;

    xs = make_space("/host:CPU", roots, 4);
    m = model(xs, NULL);
    assert_int_equal(m->source, XP_STEPS_ROOT);
    assert_int_equal(m->nsteps, 1);
    assert_int_equal(m->steps[0].nrows, 3);
    assert_int_equal(find_row(m, 0, "outer", 1)->depth, 1);
    assert_int_equal(m->steps[0].step_num, 0); /* ordinal */
    xp_steps_free(m);
    m = model(xs, "SessionRun");
    assert_int_equal(m->source, XP_STEPS_ASKED);
    assert_int_equal(m->nsteps, 1);
    assert_int_equal(m->rows[0].start_ps, 40 * US);
    xp_steps_free(m);
    m = model(xs, "nothing_here");
    assert_int_equal(m->source, XP_STEPS_NOTHING);
    assert_int_equal(m->nsteps, 0);
    assert_non_null(strstr(m->reason, "nothing_here"));
    xp_steps_free(m);
    xspace_close(xs);

    xs = make_space("/host:CPU", tf, 3);
    m = model(xs, NULL);
    assert_int_equal(m->source, XP_STEPS_TF_MARKER);
    assert_int_equal(m->nsteps, 2);
    assert_int_equal(m->steps[1].step_num, 1);
    xp_steps_free(m);
    xspace_close(xs);

    xs = make_space("/host:CPU", none, 1);
    m = model(xs, NULL);
    assert_int_equal(m->nsteps, 0);
    assert_int_equal(m->nrows, 0);
    assert_true(strlen(m->reason) > 0);
    xp_steps_free(m);
    xspace_close(xs);

    /* Steps only count on /host: planes. */
    xs = make_space("/device:GPU:0", roots, 4);
    m = model(xs, NULL);
    assert_int_equal(m->nsteps, 0);
    xp_steps_free(m);
    xspace_close(xs);
}

/* Chrome trace: "name N" steps, args step_num as a string, two threads; and a
 * clock in epoch microseconds; both count from the earliest event. */
static void test_steps_chrome_trace(void **state)
{
    static const char json[] =
        "{\"traceEvents\":["
        "{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":1,\"tid\":5,"
        "\"args\":{\"name\":\"main\"}},"
        "{\"ph\":\"X\",\"name\":\"train 3\",\"pid\":1,\"tid\":5,\"ts\":10,\"dur\":20,"
        "\"args\":{\"step_num\":\"3\"}},"
        "{\"ph\":\"X\",\"name\":\"load\",\"pid\":1,\"tid\":5,\"ts\":11.5,\"dur\":4},"
        "{\"ph\":\"X\",\"name\":\"other\",\"pid\":1,\"tid\":6,\"ts\":12,\"dur\":4},"
        "{\"ph\":\"X\",\"name\":\"train 4\",\"pid\":1,\"tid\":5,\"ts\":40,\"dur\":5,"
        "\"args\":{\"step_num\":4}}]}";
    static const char epoch[] = "[{\"ph\":\"X\",\"name\":\"SessionRun\",\"pid\":1,\"tid\":2,"
                                "\"ts\":1700000000000000,\"dur\":10},"
                                "{\"ph\":\"X\",\"name\":\"op\",\"pid\":1,\"tid\":2,"
                                "\"ts\":1700000000000002,\"dur\":3}]";
    struct ctrace *ct;
    struct xp_steps *m;
    struct xp_err err;

    assert_int_equal(ctrace_load_mem("t.json", json, sizeof(json) - 1, &ct, &err), 0);
    assert_int_equal(xp_steps_from_ctrace(ct, NULL, &m, &err), 0);
    assert_int_equal(m->source, XP_STEPS_STEP_NUM);
    assert_string_equal(m->step_names[0], "train");
    assert_int_equal(m->nsteps, 2);
    assert_int_equal(m->steps[0].step_num, 3);
    assert_int_equal(m->steps[1].step_num, 4);
    assert_int_equal(m->steps[0].nrows, 2);
    assert_string_equal(m->rows[0].name, "train");
    assert_int_equal(m->rows[0].self_ps, 16 * US);
    assert_true(m->origin_us == 10.0); /* times count from the earliest event */
    assert_int_equal(m->rows[0].start_ps, 0);
    assert_int_equal(m->rows[1].start_ps, US + US / 2);
    assert_string_equal(m->threads[0].name, "main");
    assert_int_equal(m->threads[0].id, 5);
    xp_steps_free(m);
    assert_int_equal(xp_steps_from_ctrace(ct, "load", &m, &err), 0);
    assert_int_equal(m->nsteps, 1);
    assert_int_equal(m->steps[0].step_num, 0);
    xp_steps_free(m);
    ctrace_free(ct);

    assert_int_equal(ctrace_load_mem("e.json", epoch, sizeof(epoch) - 1, &ct, &err), 0);
    assert_int_equal(xp_steps_from_ctrace(ct, NULL, &m, &err), 0);
    assert_int_equal(m->source, XP_STEPS_TF_MARKER);
    assert_true(m->origin_us == 1700000000000000.0);
    assert_int_equal(m->rows[0].start_ps, 0);
    assert_int_equal(m->rows[0].self_ps, 7 * US);
    xp_steps_free(m);
    ctrace_free(ct);
}

/* The model as the persistent cache keeps it (steps_persist.c): the same
 * model back; every shorter payload, a longer one and another magic are
 * refused. */
static void test_steps_persist_round_trip(void **state)
{
    static const struct tev ev[] = {
        {1, "learner_step", 100, 1100, 0, 1},        {1, "input_wait", 110, 310, NO_NUM, 0},
        {1, "model_and_wait", 320, 1070, NO_NUM, 0}, {1, "learner_step", 1200, 2000, 1, 1},
        {2, "learner_step", 1250, 1900, 7, 1},       {2, "input_wait", 1300, 1400, NO_NUM, 0},
    };
    struct xspace *xs = make_space("/host:CPU", ev, sizeof(ev) / sizeof(ev[0]));
    struct xp_steps *m = model(xs, NULL), *back;
    struct blob *b;
    struct out o;
    char *bytes;
    uint32_t i;

    (void)state;
    out_init(&o);
    st_save(m, &o);
    assert_int_equal(out_finish(&o, &b), 0);
    bytes = malloc(b->size + 1);
    assert_non_null(bytes);
    assert_int_equal(blob_read(b, 0, bytes, b->size), (ssize_t)b->size);
    assert_int_equal(st_load(bytes, b->size, &back), 0);
    assert_int_equal(back->source, m->source);
    assert_string_equal(back->reason, m->reason);
    assert_int_equal(back->nstep_names, m->nstep_names);
    for (i = 0; i < m->nstep_names; i++)
        assert_string_equal(back->step_names[i], m->step_names[i]);
    assert_int_equal(back->nrows, m->nrows);
    for (i = 0; i < m->nrows; i++) {
        assert_int_equal(back->rows[i].start_ps, m->rows[i].start_ps);
        assert_int_equal(back->rows[i].dur_ps, m->rows[i].dur_ps);
        assert_int_equal(back->rows[i].self_ps, m->rows[i].self_ps);
        assert_int_equal(back->rows[i].overlap_ps, m->rows[i].overlap_ps);
        assert_int_equal(back->rows[i].parent, m->rows[i].parent);
        assert_int_equal(back->rows[i].depth, m->rows[i].depth);
        assert_string_equal(back->rows[i].name, m->rows[i].name);
    }
    assert_int_equal(back->nsteps, m->nsteps);
    assert_true(m->nsteps >= 3);
    for (i = 0; i < m->nsteps; i++) { /* field by field: the padding is not kept */
        assert_int_equal(back->steps[i].row, m->steps[i].row);
        assert_int_equal(back->steps[i].nrows, m->steps[i].nrows);
        assert_int_equal(back->steps[i].thread, m->steps[i].thread);
        assert_int_equal(back->steps[i].step_num, m->steps[i].step_num);
        assert_int_equal(back->steps[i].naive_sum_ps, m->steps[i].naive_sum_ps);
    }
    assert_int_equal(back->nthreads, m->nthreads);
    for (i = 0; i < m->nthreads; i++) {
        assert_int_equal(back->threads[i].id, m->threads[i].id);
        assert_string_equal(back->threads[i].name, m->threads[i].name);
    }
    xp_steps_free(back);
    for (size_t n = 0; n < b->size; n++) {
        assert_int_equal(st_load(bytes, n, &back), -EIO);
        assert_null(back);
    }
    bytes[b->size] = 0;
    assert_int_equal(st_load(bytes, b->size + 1, &back), -EIO);
    bytes[0] ^= 1;
    assert_int_equal(st_load(bytes, b->size, &back), -EIO);
    free(bytes);
    blob_unref(b);
    xp_steps_free(m);
    xspace_close(xs);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_steps_four_steps),
        cmocka_unit_test(test_steps_child_crosses_end),
        cmocka_unit_test(test_steps_overlapping_siblings),
        cmocka_unit_test(test_steps_zero_length),
        cmocka_unit_test(test_steps_two_threads),
        cmocka_unit_test(test_steps_deep_nesting),
        cmocka_unit_test(test_steps_detection),
        cmocka_unit_test(test_steps_chrome_trace),
        cmocka_unit_test(test_steps_persist_round_trip),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
