/*
 * test_trace_background.c - a trace index built for a zoomed-out window
 * through a real snapshot (snapshot_trace_index): coarse at first, completed by
 * a later request that reads deeper, or in the background once a request
 * was answered from it when background completion is on (the mount's
 * default), and not when it is off.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tplane.h"
#include "session/session.h"
#include "trace/trace_index.h"

#define NEVENTS 600000 /* over XProf's 500,000: windows are down-sampled */

/* One /host:CPU line of NEVENTS events 1 ns apart, every 100th one long. */
static void write_profile(const char *path)
{
    static const char *const no_stats[1] = {NULL};
    struct pbw space = {0};
    struct tplane host;
    int fd, i;

    tplane_begin(&host, 1, "/host:CPU", no_stats, 1, 0, 0);
    for (i = 0; i < NEVENTS; i++)
        tplane_event(&host, "op", (int64_t)i * 1000, i % 100 == 0 ? 90000 : 50, 0);
    tplane_line_end(&host, 1, "line");
    tplane_end(&host, &space);
    fd = open(path, O_CREAT | O_WRONLY | O_TRUNC, 0644);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, space.p, space.n), (ssize_t)space.n);
    close(fd);
    free(space.p);
}

struct fixture {
    char dir[64];
    char path[128];
};

static int setup(void **state)
{
    struct fixture *f = calloc(1, sizeof(*f));

    assert_non_null(f);
    strcpy(f->dir, "/tmp/test_trace_background_XXXXXX");
    assert_non_null(mkdtemp(f->dir));
    snprintf(f->path, sizeof(f->path), "%s/h.xplane.pb", f->dir);
    write_profile(f->path);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    struct fixture *f = *state;

    unlink(f->path);
    rmdir(f->dir);
    free(f);
    return 0;
}

/* The index of a fresh snapshot, built for the whole range at 8000 bins. */
static const struct tv_host *coarse_index(const struct fixture *f, struct session **sp,
                                          struct snapshot **snapp)
{
    struct tv_window whole = {0, 0, 8000, 0};
    const struct tv_host *h = NULL;
    struct xp_err err = {0};

    *sp = session_new("run", f->dir, f->dir);
    assert_non_null(*sp);
    assert_int_equal(session_snapshot(*sp, snapp, &err), 0);
    assert_int_equal(snapshot_trace_index(*snapp, "h", &whole, &h, &err), 0);
    assert_non_null(h);
    assert_int_equal(h->nevents, NEVENTS);
    /* Coarse: only the levels that window reads are listed. */
    assert_int_equal(tv_levels_of(h)->known, tv_window_level(h, &whole));
    assert_true(tv_levels_of(h)->known < TV_LEVELS - 1);
    return h;
}

static void test_deeper_request_completes(void **state)
{
    struct tv_window deep = {0.1, 0.1001, 8000, 0};
    const struct tv_host *h, *again = NULL;
    struct snapshot *snap;
    struct session *s;
    struct xp_err err = {0};
    uint32_t *idx = NULL, n = 0;

    h = coarse_index(*state, &s, &snap);
    assert_true(tv_window_level(h, &deep) > tv_levels_of(h)->known);
    assert_int_equal(tv_select_window(h, &deep, &idx, &n), -EINVAL);
    assert_int_equal(snapshot_trace_index(snap, "h", &deep, &again, &err), 0);
    assert_ptr_equal(again, h);
    assert_int_equal(tv_levels_of(h)->known, TV_LEVELS - 1);
    assert_int_equal(tv_select_window(h, &deep, &idx, &n), 0);
    assert_true(n > 0);
    free(idx);
    snapshot_unref(snap);
    session_unref(s);
}

static void test_background_completion(void **state)
{
    const struct tv_host *h;
    struct snapshot *snap;
    struct session *s;

    /* Off (as in `xprofs cat`): answering leaves the index coarse. */
    trace_index_background(0);
    h = coarse_index(*state, &s, &snap);
    trace_index_answered(snap, h);
    trace_index_drain();
    assert_true(tv_levels_of(h)->known < TV_LEVELS - 1);
    snapshot_unref(snap);
    session_unref(s);
    /* On (the mount): completed on a thread of its own, which holds the
     * snapshot while it runs. */
    trace_index_background(1);
    h = coarse_index(*state, &s, &snap);
    trace_index_answered(snap, h);
    trace_index_answered(snap, h); /* started once */
    session_unref(s);
    trace_index_drain();
    assert_int_equal(tv_levels_of(h)->known, TV_LEVELS - 1);
    assert_non_null(tv_levels_of(h)->older);
    snapshot_unref(snap);
    trace_index_background(0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_deeper_request_completes, setup, teardown),
        cmocka_unit_test_setup_teardown(test_background_completion, setup, teardown),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
