/*
 * test_xspace.c - the .xplane.pb reader: a valid profile read back field by
 * field, and every kind of hostile input refused with a clear error.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <errno.h>
#include <string.h>
#include <fcntl.h>
#include <zlib.h>

#include "pbw.h"
#include "reader/xspace.h"

/* XStat with a metadata id and one value. */
static void stat_int(struct pbw *ev, uint32_t field, int64_t meta, int64_t v)
{
    struct pbw s = {0};
    pbw_uint(&s, 1, (uint64_t)meta);
    pbw_uint(&s, 4, (uint64_t)v);
    pbw_msg(ev, field, &s);
}

static void stat_str(struct pbw *ev, uint32_t field, int64_t meta, const char *v)
{
    struct pbw s = {0};
    pbw_uint(&s, 1, (uint64_t)meta);
    pbw_str(&s, 5, v);
    pbw_msg(ev, field, &s);
}

static void stat_ref(struct pbw *ev, uint32_t field, int64_t meta, uint64_t ref)
{
    struct pbw s = {0};
    pbw_uint(&s, 1, (uint64_t)meta);
    pbw_uint(&s, 7, ref);
    pbw_msg(ev, field, &s);
}

static void stat_meta(struct pbw *plane, int64_t id, const char *name)
{
    struct pbw e = {0}, m = {0};
    pbw_uint(&m, 1, (uint64_t)id);
    pbw_str(&m, 2, name);
    pbw_uint(&e, 1, (uint64_t)id);
    pbw_msg(&e, 2, &m);
    pbw_msg(plane, 5, &e);
}

static void event_meta(struct pbw *plane, int64_t id, const char *name, const char *display)
{
    struct pbw e = {0}, m = {0};
    pbw_uint(&m, 1, (uint64_t)id);
    pbw_str(&m, 2, name);
    if (display)
        pbw_str(&m, 4, display);
    stat_str(&m, 5, 3, "fusion"); /* metadata stat hlo_category */
    pbw_uint(&e, 1, (uint64_t)id);
    pbw_msg(&e, 2, &m);
    pbw_msg(plane, 4, &e);
}

static void event(struct pbw *line, int64_t meta, int64_t off, int64_t dur, int64_t corr)
{
    struct pbw ev = {0};
    pbw_uint(&ev, 1, (uint64_t)meta);
    pbw_uint(&ev, 2, (uint64_t)off);
    pbw_uint(&ev, 3, (uint64_t)dur);
    if (corr >= 0)
        stat_int(&ev, 4, 1, corr);
    pbw_msg(line, 4, &ev);
}

/* A small but complete XSpace: a host plane and a GPU plane. */
static struct pbw build_space(void)
{
    struct pbw space = {0}, plane = {0}, line = {0};
    struct pbw ev = {0};

    pbw_uint(&plane, 1, 7);
    pbw_str(&plane, 2, "/device:GPU:7");
    stat_meta(&plane, 1, "correlation_id");
    stat_meta(&plane, 2, "kernel_details");
    stat_meta(&plane, 3, "hlo_category");
    stat_meta(&plane, 99, "a referenced string");
    event_meta(&plane, 10, "fusion.1", "f1");
    event_meta(&plane, 1ll << 40, "huge id", NULL);
    pbw_uint(&line, 1, 5);
    pbw_str(&line, 2, "Stream #5(Compute)");
    pbw_uint(&line, 3, 1000); /* timestamp_ns */
    event(&line, 10, 0, 500, 42);
    event(&line, 1ll << 40, 1000, 250, 43);
    event(&line, 12345, 2000, -5, -1); /* unknown metadata, negative duration */
    pbw_uint(&ev, 1, 10);
    pbw_uint(&ev, 2, 3000);
    stat_ref(&ev, 4, 2, 99);
    pbw_uint(&ev, 77, 5); /* unknown field */
    pbw_msg(&line, 4, &ev);
    pbw_msg(&plane, 3, &line);
    {
        struct pbw ps = {0};
        pbw_uint(&ps, 1, 3);
        pbw_double(&ps, 2, 1.5);
        pbw_msg(&plane, 6, &ps);
    }
    pbw_msg(&space, 1, &plane);

    pbw_str(&plane, 2, "/host:CPU");
    pbw_uint(&line, 1, 1234);
    pbw_str(&line, 2, "python3");
    pbw_msg(&plane, 3, &line);
    pbw_msg(&space, 1, &plane);
    pbw_str(&space, 4, "host-a");
    return space;
}

static int open_bytes(const void *p, size_t n, struct xspace **xs, struct xp_err *err)
{
    char *path = pbw_tmpfile(p, n, ".xplane.pb");
    int rc = xspace_open(path, xs, err);
    if (rc == 0)
        rc = xspace_decode(*xs, 2, err);
    unlink(path);
    free(path);
    return rc;
}

static void test_valid_profile(void **state)
{
    struct pbw space = build_space();
    struct xspace *xs;
    struct xp_err err = {0};
    const struct xp_plane *gpu;
    const struct xp_line *ln;
    struct xp_stat st;

    (void)state;
    assert_int_equal(open_bytes(space.p, space.n, &xs, &err), 0);
    assert_int_equal(xs->nplanes, 2);
    assert_int_equal(xs->nhostnames, 1);
    assert_string_equal(xs->hostnames[0], "host-a");
    gpu = xspace_find_plane(xs, "/device:GPU:7");
    assert_non_null(gpu);
    assert_int_equal(gpu->id, 7);
    assert_int_equal(gpu->nlines, 1);
    ln = &gpu->lines[0];
    assert_string_equal(ln->name, "Stream #5(Compute)");
    assert_int_equal(ln->nevents, 4);
    assert_int_equal(xp_event_start_ps(ln, &ln->events[0]), 1000000);
    assert_int_equal(ln->events[0].duration_ps, 500);
    assert_string_equal(xp_event_meta(gpu, &ln->events[0])->name, "fusion.1");
    assert_string_equal(xp_event_meta(gpu, &ln->events[0])->display_name, "f1");
    assert_string_equal(xp_event_meta(gpu, &ln->events[1])->name, "huge id");
    /* Missing metadata: the empty entry, not an error. */
    assert_string_equal(xp_event_meta(gpu, &ln->events[2])->name, "");
    assert_int_equal(ln->events[2].duration_ps, 0);
    /* Stats: on the event, then on its metadata. */
    assert_int_equal(xp_event_stat(gpu, ln, &ln->events[0], XS_CORRELATION_ID, &st), 1);
    assert_int_equal(xp_stat_int(&st), 42);
    assert_int_equal(xp_event_stat(gpu, ln, &ln->events[1], XS_CORRELATION_ID, &st), 1);
    assert_int_equal(xp_stat_int(&st), 43);
    assert_int_equal(xp_event_stat(gpu, ln, &ln->events[0], XS_HLO_CATEGORY, &st), 1);
    assert_int_equal(st.len, 6);
    assert_memory_equal(st.str, "fusion", 6);
    assert_int_equal(xp_event_stat(gpu, ln, &ln->events[3], XS_KERNEL_DETAILS, &st), 1);
    assert_int_equal(st.kind, XP_STAT_REF);
    assert_int_equal(st.len, strlen("a referenced string"));
    assert_memory_equal(st.str, "a referenced string", st.len);
    assert_int_equal(xp_event_stat(gpu, ln, &ln->events[2], XS_CORRELATION_ID, &st), 0);
    assert_int_equal(xp_plane_stat(gpu, XS_HLO_CATEGORY, &st), 1);
    assert_true(st.kind == XP_STAT_DOUBLE && st.v.d == 1.5);
    assert_int_equal(xs->nevents, 4);
    xspace_close(xs);
    free(space.p);
}

static void test_gzip(void **state)
{
    struct pbw space = build_space();
    char tmpl[] = "/tmp/xprofs-gz-XXXXXX";
    char path[64];
    struct xspace *xs;
    struct xp_err err = {0};
    gzFile gz;
    int fd = mkstemp(tmpl);

    (void)state;
    assert_true(fd >= 0);
    close(fd);
    snprintf(path, sizeof(path), "%s.xplane.pb.gz", tmpl);
    assert_int_equal(rename(tmpl, path), 0);
    gz = gzopen(path, "wb");
    assert_non_null(gz);
    assert_int_equal(gzwrite(gz, space.p, (unsigned)space.n), (int)space.n);
    gzclose(gz);
    assert_int_equal(xspace_open(path, &xs, &err), 0);
    assert_int_equal(xspace_decode(xs, 1, &err), 0);
    assert_int_equal(xs->nevents, 4);
    xspace_close(xs);
    /* A gzip stream cut in half. */
    assert_int_equal(truncate(path, 20), 0);
    assert_int_equal(xspace_open(path, &xs, &err), -EIO);
    assert_non_null(strstr(err.msg, "gzip"));
    unlink(path);
    free(space.p);
}

/* A file of several read pieces (16 MiB each): every byte arrives in
 * place, whatever piece it was read in. */
static void test_big_file(void **state)
{
    struct pbw space = build_space();
    size_t n = (40u << 20) + 12345, i;
    char *big = malloc(n + 1);
    char tmpl[] = "/tmp/xprofs-big-XXXXXX";
    struct xspace *xs;
    struct xp_err err = {0};
    int fd = mkstemp(tmpl);

    (void)state;
    assert_non_null(big);
    assert_true(fd >= 0);
    for (i = 0; i < n; i++)
        big[i] = (char)('a' + (i * 7 + i / 4096) % 26);
    big[n] = '\0';
    pbw_str(&space, 2, big); /* XSpace.errors */
    assert_int_equal(write(fd, space.p, space.n), (ssize_t)space.n);
    close(fd);
    assert_int_equal(xspace_open(tmpl, &xs, &err), 0);
    assert_int_equal(xs->size, space.n);
    assert_memory_equal(xs->data, space.p, space.n);
    assert_int_equal(xs->nerrors, 1);
    assert_int_equal(strlen(xs->errors[0]), n);
    assert_int_equal(xspace_decode(xs, 2, &err), 0);
    assert_int_equal(xs->nevents, 4);
    xspace_close(xs);
    unlink(tmpl);
    free(big);
    free(space.p);
}

static void expect_eio(const void *p, size_t n, const char *why)
{
    struct xspace *xs = NULL;
    struct xp_err err = {0};
    int rc = open_bytes(p, n, &xs, &err);

    if (rc == 0) {
        xspace_close(xs);
        fail_msg("accepted: %s", why);
    }
    assert_int_equal(rc, -EIO);
    /* The message names the file and says why. */
    assert_non_null(strstr(err.msg, "/tmp/xprofs-test-"));
    if (rc != -EIO)
        xspace_close(xs);
}

static void test_empty_file(void **state)
{
    (void)state;
    expect_eio("", 0, "0-byte file");
}

static void test_every_truncation(void **state)
{
    struct pbw space = build_space();
    size_t cut;

    (void)state;
    /* Every prefix either fails cleanly or (at a message boundary) parses. */
    for (cut = 1; cut < space.n; cut++) {
        struct xspace *xs = NULL;
        struct xp_err err = {0};
        int rc = open_bytes(space.p, cut, &xs, &err);
        if (rc == 0)
            xspace_close(xs);
        else
            assert_int_equal(rc, -EIO);
    }
    free(space.p);
}

static void test_hostile_lengths(void **state)
{
    struct pbw w = {0};

    (void)state;
    /* planes field whose length is 2^60 */
    pbw_key(&w, 1, 2);
    pbw_varint(&w, 1ull << 60);
    pbw_raw(&w, "abc", 3);
    expect_eio(w.p, w.n, "2^60 length");
    w.n = 0;
    /* an 11-byte varint */
    pbw_key(&w, 1, 0);
    pbw_raw(&w, "\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01", 11);
    expect_eio(w.p, w.n, "endless varint");
    w.n = 0;
    /* wire types 6 and 7, field 0 */
    pbw_raw(&w, "\x0e", 1);
    expect_eio(w.p, w.n, "wire type 6");
    w.n = 0;
    pbw_raw(&w, "\x00\x01", 2);
    expect_eio(w.p, w.n, "field 0");
    w.n = 0;
    /* a group (wire type 3) is refused rather than walked */
    pbw_raw(&w, "\x0b\x0c", 2);
    expect_eio(w.p, w.n, "group");
    free(w.p);
}

static void test_event_past_line(void **state)
{
    struct pbw space = {0}, plane = {0}, line = {0};

    (void)state;
    pbw_str(&plane, 2, "/host:CPU");
    pbw_key(&line, 4, 2);
    pbw_varint(&line, 1000); /* event longer than the line */
    pbw_raw(&line, "\x08\x01", 2);
    pbw_msg(&plane, 3, &line);
    pbw_msg(&space, 1, &plane);
    expect_eio(space.p, space.n, "event past its line");
    free(space.p);
}

/* One host line starting at ts_ns with one event (offset, duration in ps);
 * returns xspace_open then xspace_decode's result, the message in *err. */
static int open_one_event(int64_t ts_ns, int64_t off, int64_t dur, struct xp_err *err)
{
    struct pbw space = {0}, plane = {0}, line = {0};
    struct xspace *xs = NULL;
    char *path;
    int rc;

    pbw_str(&plane, 2, "/host:CPU");
    pbw_uint(&line, 1, 1);
    pbw_uint(&line, 3, (uint64_t)ts_ns);
    event(&line, 1, off, dur, -1);
    pbw_msg(&plane, 3, &line);
    pbw_msg(&space, 1, &plane);
    path = pbw_tmpfile(space.p, space.n, ".xplane.pb");
    rc = xspace_open(path, &xs, err);
    if (rc == 0)
        rc = xspace_decode(xs, 2, err);
    xspace_close(xs);
    unlink(path);
    free(path);
    free(space.p);
    return rc;
}

/* Times beyond 2^62 ps either way are refused with a reason (a fuzzed
 * offset near 2^63 overflowed the start's sum); times up to it are read. */
static void test_time_out_of_range(void **state)
{
    const int64_t limit = XP_TIME_LIMIT_PS;
    struct xp_err err = {0};

    (void)state;
    /* at the limit: read */
    assert_int_equal(open_one_event(limit / 1000, 0, limit % 1000, &err), 0);
    assert_int_equal(open_one_event(-(limit / 1000), -(limit % 1000), 0, &err), 0);
    assert_int_equal(open_one_event(1000, 0, limit - 1000000, &err), 0);
    /* a line start beyond it, alone, is an epoch time (test_epoch_line_starts);
     * a negative one is refused at open */
    memset(&err, 0, sizeof(err));
    assert_int_equal(open_one_event(limit / 1000 + 1, 0, 0, &err), 0);
    memset(&err, 0, sizeof(err));
    assert_int_equal(open_one_event(INT64_MIN, 0, 0, &err), -EIO);
    assert_non_null(strstr(err.msg, "line timestamp out of range"));
    /* an event start or end beyond it: refused by the decoder */
    memset(&err, 0, sizeof(err));
    assert_int_equal(open_one_event(50000, INT64_MAX - 63, 0, &err), -EIO);
    assert_non_null(strstr(err.msg, "event time out of range"));
    memset(&err, 0, sizeof(err));
    assert_int_equal(open_one_event(0, limit + 1, 0, &err), -EIO);
    assert_non_null(strstr(err.msg, "event time out of range"));
    memset(&err, 0, sizeof(err));
    assert_int_equal(open_one_event(0, -limit - 1, 0, &err), -EIO);
    assert_non_null(strstr(err.msg, "event time out of range"));
    memset(&err, 0, sizeof(err));
    assert_int_equal(open_one_event(limit / 1000, 0, limit % 1000 + 1, &err), -EIO);
    assert_non_null(strstr(err.msg, "event time out of range"));
    memset(&err, 0, sizeof(err));
    assert_int_equal(open_one_event(0, 1, INT64_MAX, &err), -EIO);
    assert_non_null(strstr(err.msg, "event time out of range"));
}

/* Host lines starting at ts[0..n) ns, one event each at offset 5 ps. */
static int open_lines(const int64_t *ts, int n, struct xspace **xsp, struct xp_err *err)
{
    struct pbw space = {0}, plane = {0};
    int i, rc;

    pbw_str(&plane, 2, "/host:CPU");
    for (i = 0; i < n; i++) {
        struct pbw line = {0};
        pbw_uint(&line, 1, (uint64_t)i + 1);
        pbw_uint(&line, 3, (uint64_t)ts[i]);
        event(&line, 1, 5, 10, -1);
        pbw_msg(&plane, 3, &line);
        free(line.p);
    }
    pbw_msg(&space, 1, &plane);
    rc = xspace_open_buffer("t.xplane.pb", space.p, space.n, xsp, err);
    if (rc == 0)
        rc = xspace_decode(*xsp, 1, err);
    free(space.p);
    free(plane.p);
    return rc;
}

/* Line starts written as epoch times are shifted by the earliest of them,
 * as XProf's NormalizeTimestamps does; lines that start before it (near 0)
 * keep their start; a spread past the limit is still refused. */
static void test_epoch_line_starts(void **state)
{
    const int64_t epoch = INT64_C(1733000000000000000); /* 2024-11-30 in ns */
    const int64_t limit = XP_TIME_LIMIT_PS / 1000;
    const int64_t shifted[3] = {epoch + 1000, 0, epoch};
    const int64_t spread[2] = {epoch, epoch + limit + 1};
    const int64_t negative[2] = {0, -limit - 1};
    struct xp_err err = {0};
    struct xspace *xs = NULL;
    const struct xp_line *ln;

    (void)state;
    assert_int_equal(open_lines(shifted, 3, &xs, &err), 0);
    assert_int_equal(xs->time_shift_ns, epoch);
    ln = xs->planes[0].lines;
    assert_int_equal(ln[0].timestamp_ns, 1000);
    assert_int_equal(ln[1].timestamp_ns, 0);
    assert_int_equal(ln[2].timestamp_ns, 0);
    assert_int_equal(xp_event_start_ps(&ln[0], &ln[0].events[0]), 1000005);
    assert_int_equal(xp_event_start_ps(&ln[2], &ln[2].events[0]), 5);
    xspace_close(xs);
    xs = NULL;
    assert_int_equal(open_lines(spread, 2, &xs, &err), -EIO);
    assert_non_null(strstr(err.msg, "line timestamp out of range"));
    xspace_close(xs);
    xs = NULL;
    memset(&err, 0, sizeof(err));
    assert_int_equal(open_lines(negative, 2, &xs, &err), -EIO);
    assert_non_null(strstr(err.msg, "line timestamp out of range"));
    xspace_close(xs);
    xs = NULL;
    /* Within the limit nothing moves. */
    assert_int_equal(open_lines(negative, 1, &xs, &err), 0);
    assert_int_equal(xs->time_shift_ns, 0);
    xspace_close(xs);
}

static void test_bad_metadata_entry(void **state)
{
    struct pbw space = {0}, plane = {0};

    (void)state;
    pbw_str(&plane, 2, "/host:CPU");
    pbw_bytes(&plane, 4, "\x12\x05\x0a", 3); /* entry value truncated */
    pbw_msg(&space, 1, &plane);
    expect_eio(space.p, space.n, "bad metadata entry");
    free(space.p);
}

static void test_many_events_and_deep_nesting(void **state)
{
    struct pbw space = {0}, plane = {0}, line = {0};
    struct xspace *xs;
    struct xp_err err = {0};
    const struct xp_line *ln;
    uint32_t i, n = 150000;

    (void)state;
    pbw_str(&plane, 2, "/host:CPU");
    event_meta(&plane, 1, "nest", NULL);
    /* 150,000 events, each nested inside the previous one. More than two
     * decode tasks (XP_SPLIT), so the parallel split is exercised. */
    for (i = 0; i < n; i++)
        event(&line, 1, i, 2 * (int64_t)(n - i), -1);
    pbw_msg(&plane, 3, &line);
    pbw_msg(&space, 1, &plane);
    assert_int_equal(open_bytes(space.p, space.n, &xs, &err), 0);
    ln = &xs->planes[0].lines[0];
    assert_int_equal(ln->nevents, n);
    for (i = 0; i < n; i++) {
        assert_int_equal(ln->events[i].offset_ps, i);
        assert_int_equal(ln->events[i].duration_ps, 2 * (int64_t)(n - i));
        assert_int_equal(ln->events[i].meta, 1);
    }
    xspace_close(xs);
    free(space.p);
}

static void test_decode_twice(void **state)
{
    struct pbw space = build_space();
    struct xspace *xs;
    struct xp_err err = {0};

    (void)state;
    assert_int_equal(open_bytes(space.p, space.n, &xs, &err), 0);
    assert_int_equal(xspace_decode(xs, 4, &err), 0);
    assert_int_equal(xs->nevents, 4);
    xspace_close(xs);
    free(space.p);
}

static void test_missing_file(void **state)
{
    struct xspace *xs;
    struct xp_err err = {0};

    (void)state;
    assert_int_equal(xspace_open("/nonexistent/x.xplane.pb", &xs, &err), -ENOENT);
    assert_non_null(strstr(err.msg, "/nonexistent/x.xplane.pb"));
}

/* ---- picking stats (xp_pick_event) against a plain walk (xp_stat_next) ---- */

static const int64_t pick_ids[] = {1, 2, 3, 4, 5, 6, XP_NO_STAT, 1, 200000};
#define NPICK (sizeof(pick_ids) / sizeof(pick_ids[0]))

/* An event whose stats take every shape: usual ones, a value before the
 * id, a repeated id, unknown fields, a long string, an id alone. */
static struct pbw pick_space(void)
{
    struct pbw space = {0}, plane = {0}, line = {0}, ev = {0}, st = {0};
    char longs[300];

    memset(longs, 'q', sizeof(longs) - 1);
    longs[sizeof(longs) - 1] = '\0';
    pbw_str(&plane, 2, "/host:CPU");
    stat_meta(&plane, 1, "a");
    stat_meta(&plane, 2, "b");
    stat_meta(&plane, 3, "c");
    stat_meta(&plane, 200, "referenced");
    stat_meta(&plane, 200000, "big id");
    event_meta(&plane, 10, "ev", NULL);
    pbw_uint(&line, 1, 1);
    pbw_uint(&ev, 1, 10);
    pbw_uint(&ev, 2, 5);
    stat_int(&ev, 4, 1, 7);
    stat_str(&ev, 4, 2, "xy");
    stat_ref(&ev, 4, 3, 200);
    pbw_uint(&st, 1, 4);
    pbw_double(&st, 2, 2.5);
    pbw_msg(&ev, 4, &st);
    pbw_uint(&st, 4, 9); /* value first, then the id */
    pbw_uint(&st, 1, 5);
    pbw_msg(&ev, 4, &st);
    stat_int(&ev, 4, 1, 8); /* id 1 again */
    pbw_uint(&st, 9, 1);    /* unknown field first */
    pbw_uint(&st, 1, 2);
    pbw_str(&st, 5, "zz");
    pbw_msg(&ev, 4, &st);
    stat_str(&ev, 4, 6, longs);
    pbw_uint(&st, 1, 3); /* an id without a value */
    pbw_msg(&ev, 4, &st);
    pbw_uint(&st, 1, 99); /* two ids: the last one counts */
    pbw_uint(&st, 3, 11);
    pbw_uint(&st, 1, 200000);
    pbw_msg(&ev, 4, &st);
    pbw_uint(&ev, 3, 100); /* duration after the stats */
    pbw_msg(&line, 4, &ev);
    pbw_msg(&plane, 3, &line);
    pbw_msg(&space, 1, &plane);
    return space;
}

static void same_stat(const struct xp_stat *a, const struct xp_stat *b)
{
    assert_int_equal(a->meta_id, b->meta_id);
    assert_int_equal(a->kind, b->kind);
    assert_int_equal(a->v.u, b->v.u);
    assert_int_equal(a->len, b->len);
    if (a->len > 0)
        assert_memory_equal(a->str, b->str, a->len);
}

/* xp_stat_next_wanted's filter: the ids of pick_ids. */
static int want_picked(const void *ctx, int64_t id)
{
    size_t i;

    (void)ctx;
    for (i = 0; i < NPICK; i++) {
        if (pick_ids[i] == id && id != XP_NO_STAT)
            return 1;
    }
    return 0;
}

/* The wanted stats of the first event of xs, as xp_stat_next_wanted reads
 * them (through xp_next_stat_body), against a walk of every stat: the
 * same stats in the same order, and the same end (corrupt or not). */
static void check_wanted(const struct xspace *xs)
{
    const struct xp_plane *pl = &xs->planes[0];
    const struct xp_line *ln = &pl->lines[0];
    struct xp_stat_iter a, b;
    struct xp_stat sa, sb;
    int ra, rb;

    xp_stat_iter_init(&a, pl, ln, &ln->events[0]);
    xp_stat_iter_init(&b, pl, ln, &ln->events[0]);
    for (;;) {
        ra = xp_stat_next_wanted(&a, &sa, want_picked, NULL);
        while ((rb = xp_stat_next(&b, &sb)) == 1 && !want_picked(NULL, sb.meta_id))
            ;
        if (ra != 1 || rb != 1)
            break;
        same_stat(&sa, &sb);
    }
    /* a corrupt stat stops both */
    assert_int_equal(ra, rb);
}

/* Pick from the first event of xs in both modes and compare with a walk. */
static void check_pick(const struct xspace *xs)
{
    const struct xp_plane *pl = &xs->planes[0];
    const struct xp_line *ln = &pl->lines[0];
    int last;

    for (last = 0; last < 2; last++) {
        struct xp_pick pk;
        struct xp_stat got[NPICK], want[NPICK], st;
        struct xp_stat_iter it;
        uint32_t found, want_found = 0, i;

        assert_int_equal(xp_pick_init(&pk, pl, pick_ids, NPICK, last), 0);
        found = xp_pick_event(&pk, ln, &ln->events[0], got);
        xp_stat_iter_init(&it, pl, ln, &ln->events[0]);
        while (xp_stat_next(&it, &st) == 1) {
            for (i = 0; i < NPICK && pick_ids[i] != st.meta_id; i++)
                ;
            if (i == NPICK || pick_ids[i] == XP_NO_STAT)
                continue;
            if (last || !(want_found & (1u << i))) {
                want[i] = st;
                want_found |= 1u << i;
            }
        }
        assert_int_equal(found, want_found);
        for (i = 0; i < NPICK; i++) {
            if (found & (1u << i))
                same_stat(&got[i], &want[i]);
        }
        xp_pick_free(&pk);
    }
    check_wanted(xs);
}

static void test_pick_matches_walk(void **state)
{
    struct pbw space = pick_space();
    struct xspace *xs;
    struct xp_err err = {0};
    const struct xp_line *ln;
    size_t ev_at, ev_len, i;
    unsigned seed = 7;

    (void)state;
    assert_int_equal(open_bytes(space.p, space.n, &xs, &err), 0);
    ln = &xs->planes[0].lines[0];
    assert_int_equal(ln->nevents, 1);
    assert_int_equal(ln->events[0].duration_ps, 100);
    check_pick(xs);
    {
        /* the values a walk finds, checked by hand once */
        struct xp_pick pk;
        struct xp_stat got[NPICK];
        uint32_t f;
        assert_int_equal(xp_pick_init(&pk, &xs->planes[0], pick_ids, NPICK, 0), 0);
        f = xp_pick_event(&pk, ln, &ln->events[0], got);
        assert_int_equal(f, 0x13fu); /* 1..6, id 200000; not the unused or repeated slot */
        assert_int_equal(got[0].v.i, 7);
        assert_int_equal(got[2].kind, XP_STAT_REF);
        assert_int_equal(got[2].len, 10);
        assert_memory_equal(got[2].str, "referenced", 10);
        assert_int_equal(got[4].v.i, 9);
        assert_int_equal(got[5].len, 299);
        assert_int_equal(got[8].v.u, 11);
        xp_pick_free(&pk);
        assert_int_equal(xp_pick_init(&pk, &xs->planes[0], pick_ids, NPICK, 1), 0);
        f = xp_pick_event(&pk, ln, &ln->events[0], got);
        assert_int_equal(got[0].v.i, 8);
        assert_int_equal(got[1].len, 2);
        assert_memory_equal(got[1].str, "zz", 2);
        assert_int_equal(got[2].kind, XP_STAT_NONE);
        xp_pick_free(&pk);
    }
    /* corrupt stat bytes (the event's framing kept): both agree */
    ev_at = (size_t)(ln->body + ln->events[0].rec_off - xs->data);
    ev_len = (size_t)(ln->body + ln->body_len - xs->data) - ev_at;
    xspace_close(xs);
    for (i = 0; i < 1000; i++) {
        struct pbw m = {0};
        size_t at = ev_at + 8 + (size_t)rand_r(&seed) % (ev_len - 12);
        pbw_raw(&m, space.p, space.n);
        m.p[at] = (unsigned char)rand_r(&seed);
        xs = NULL;
        if (open_bytes(m.p, m.n, &xs, &err) == 0 && xs->nplanes == 1 && xs->planes[0].nlines == 1 &&
            xs->planes[0].lines[0].nevents >= 1)
            check_pick(xs);
        xspace_close(xs); /* also when only the decode failed */
        free(m.p);
    }
    free(space.p);
}

/* ---- group ids the decoder reads (xp_line.gids) against a walk ---- */

#define GID_STAT 5

/* One event of gid_space: metadata 10 at k * 10 ps, its stats in stats. */
static void gid_event(struct pbw *line, int k, struct pbw *stats)
{
    struct pbw ev = {0};

    pbw_uint(&ev, 1, 10);
    pbw_uint(&ev, 2, (uint64_t)k * 10);
    pbw_uint(&ev, 3, 5);
    if (stats != NULL)
        pbw_raw(&ev, stats->p, stats->n);
    pbw_msg(line, 4, &ev);
    if (stats != NULL) {
        free(stats->p);
        memset(stats, 0, sizeof(*stats));
    }
}

/* Events whose stats take every shape a group_id can (what the decoder
 * should make of each in gid_want). */
static const int32_t gid_want[] = {
    XP_GID_NONE, 7,  9,           XP_GID_WALK, XP_GID_WALK, XP_GID_WALK, XP_GID_WALK, XP_GID_WALK,
    12,          13, XP_GID_WALK, XP_GID_WALK, XP_GID_WALK, XP_GID_NONE, XP_GID_WALK,
};

static struct pbw gid_space(void)
{
    struct pbw space = {0}, plane = {0}, line = {0}, st = {0}, one = {0};
    char longs[300];
    int k = 0;

    memset(longs, 'q', sizeof(longs) - 1);
    longs[sizeof(longs) - 1] = '\0';
    pbw_str(&plane, 2, "/device:TPU:0");
    stat_meta(&plane, 1, "a");
    stat_meta(&plane, 2, "b");
    stat_meta(&plane, GID_STAT, "group_id");
    event_meta(&plane, 10, "op", NULL);
    pbw_uint(&line, 1, 1);
    gid_event(&line, k++, NULL); /* none */
    stat_int(&st, 4, GID_STAT, 7);
    gid_event(&line, k++, &st); /* int64 */
    pbw_uint(&one, 1, GID_STAT);
    pbw_uint(&one, 3, 9);
    pbw_msg(&st, 4, &one);
    gid_event(&line, k++, &st); /* uint64 */
    pbw_uint(&one, 1, GID_STAT);
    pbw_double(&one, 2, 2.5);
    pbw_msg(&st, 4, &one);
    gid_event(&line, k++, &st); /* double */
    stat_str(&st, 4, GID_STAT, "x");
    gid_event(&line, k++, &st); /* string */
    stat_int(&st, 4, GID_STAT, 1);
    stat_int(&st, 4, GID_STAT, 1);
    gid_event(&line, k++, &st); /* two */
    stat_int(&st, 4, GID_STAT, (int64_t)1 << 31);
    gid_event(&line, k++, &st); /* too big */
    stat_int(&st, 4, GID_STAT, -3);
    gid_event(&line, k++, &st); /* negative */
    stat_int(&st, 4, 1, 4);
    stat_str(&st, 4, 2, "zz");
    stat_int(&st, 4, GID_STAT, 12);
    gid_event(&line, k++, &st); /* among others */
    stat_str(&st, 4, 2, longs);
    stat_int(&st, 4, GID_STAT, 13);
    gid_event(&line, k++, &st); /* after a stat of two-byte length */
    pbw_uint(&one, 4, 3);
    pbw_uint(&one, 1, GID_STAT);
    pbw_msg(&st, 4, &one);
    gid_event(&line, k++, &st); /* value first */
    pbw_uint(&one, 1, GID_STAT);
    pbw_msg(&st, 4, &one);
    gid_event(&line, k++, &st); /* id alone */
    pbw_uint(&one, 1, 1);
    pbw_uint(&one, 4, 3);
    pbw_uint(&one, 1, GID_STAT);
    pbw_msg(&st, 4, &one);
    gid_event(&line, k++, &st); /* two ids, the last one counts */
    stat_int(&st, 4, 1, 4);
    gid_event(&line, k++, &st); /* other stats only */
    stat_ref(&st, 4, GID_STAT, 2);
    gid_event(&line, k++, &st); /* a reference */
    pbw_msg(&plane, 3, &line);
    pbw_msg(&space, 1, &plane);
    return space;
}

/* What the decoder says of each event agrees with a walk of its stats:
 * none found, or exactly this one; XP_GID_WALK claims nothing. */
static void check_gids(const struct xspace *xs)
{
    const struct xp_plane *pl = &xs->planes[0];
    const struct xp_line *ln = &pl->lines[0];
    uint32_t e;

    assert_non_null(ln->gids);
    for (e = 0; e < ln->nevents; e++) {
        struct xp_stat_iter it;
        struct xp_stat st, found = {0};
        int n = 0;
        xp_stat_iter_init(&it, pl, ln, &ln->events[e]);
        while (xp_stat_next(&it, &st) == 1) {
            if (st.meta_id == pl->stat_id[XS_GROUP_ID]) {
                found = st;
                n++;
            }
        }
        if (ln->gids[e] == XP_GID_NONE) {
            assert_int_equal(n, 0);
        } else if (ln->gids[e] != XP_GID_WALK) {
            assert_true(ln->gids[e] >= 0);
            assert_int_equal(n, 1);
            assert_true(found.kind == XP_STAT_INT || found.kind == XP_STAT_UINT);
            assert_int_equal(xp_stat_int(&found), ln->gids[e]);
        }
    }
}

static void test_group_ids_match_walk(void **state)
{
    struct pbw space = gid_space(), plain = build_space();
    struct xspace *xs;
    struct xp_err err = {0};
    const struct xp_line *ln;
    size_t ev_at, ev_len, i;
    uint32_t e, p, l;
    unsigned seed = 11;

    (void)state;
    assert_int_equal(open_bytes(space.p, space.n, &xs, &err), 0);
    assert_int_equal(xspace_is_grouped(xs), 1); /* saved grouped: XProf groups nothing */
    ln = &xs->planes[0].lines[0];
    assert_int_equal(ln->nevents, sizeof(gid_want) / sizeof(gid_want[0]));
    for (e = 0; e < ln->nevents; e++)
        assert_int_equal(ln->gids[e], gid_want[e]);
    check_gids(xs);
    ev_at = (size_t)(ln->body + ln->events[0].rec_off - xs->data);
    ev_len = (size_t)(ln->body + ln->body_len - xs->data) - ev_at;
    xspace_close(xs);
    /* corrupt bytes among the events: whatever decodes still agrees */
    for (i = 0; i < 2000; i++) {
        struct pbw m = {0};
        size_t at = ev_at + (size_t)rand_r(&seed) % ev_len;
        pbw_raw(&m, space.p, space.n);
        m.p[at] = (unsigned char)rand_r(&seed);
        xs = NULL;
        if (open_bytes(m.p, m.n, &xs, &err) == 0 && xs->nplanes == 1 && xs->planes[0].nlines == 1 &&
            xs->planes[0].stat_id[XS_GROUP_ID] != XP_NO_STAT)
            check_gids(xs);
        xspace_close(xs);
        free(m.p);
    }
    free(space.p);
    /* planes without a group_id stat keep no gids */
    assert_int_equal(open_bytes(plain.p, plain.n, &xs, &err), 0);
    assert_int_equal(xspace_is_grouped(xs), 0);
    for (p = 0; p < xs->nplanes; p++) {
        assert_int_equal(xs->planes[p].stat_id[XS_GROUP_ID], XP_NO_STAT);
        for (l = 0; l < xs->planes[p].nlines; l++)
            assert_null(xs->planes[p].lines[l].gids);
    }
    xspace_close(xs);
    free(plain.p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_valid_profile),
        cmocka_unit_test(test_gzip),
        cmocka_unit_test(test_big_file),
        cmocka_unit_test(test_empty_file),
        cmocka_unit_test(test_every_truncation),
        cmocka_unit_test(test_hostile_lengths),
        cmocka_unit_test(test_event_past_line),
        cmocka_unit_test(test_bad_metadata_entry),
        cmocka_unit_test(test_time_out_of_range),
        cmocka_unit_test(test_epoch_line_starts),
        cmocka_unit_test(test_many_events_and_deep_nesting),
        cmocka_unit_test(test_decode_twice),
        cmocka_unit_test(test_missing_file),
        cmocka_unit_test(test_pick_matches_walk),
        cmocka_unit_test(test_group_ids_match_walk),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
