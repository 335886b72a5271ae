/*
 * test_derived.c - the derived lines of one hand-built GPU stream: framework
 * ops and name scopes from TensorFlow kernels' tf_op stats (merged while the
 * name and group stay the same; a finished stack of equal spans shrunk by
 * 1 ns per level), and from an XLA op's HLO instruction (with its module,
 * op and source lines), and the display ids that put them after the stream;
 * compacted lines (no times, one line alone or all of them) still give
 * every event's names and group, and a line of repeated ops keeps one name
 * pair per op and 8 bytes per event; the Launch Stats of a host plane big
 * enough to be counted in parts, against a count written here.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "base/bigalloc.h"
#include "xplane/derived.h"
#include "xplane/group.h"
#include "pbw.h"
#include "tplane.h"
#include "reader/xspace.h"

enum { S_KERNEL = 1, S_TF_OP, S_HLO_OP, S_HLO_MODULE, S_PROGRAM, S_HLO_PROTO };

static void add_stat_meta(struct pbw *plane, int64_t id, const char *name)
{
    struct pbw entry = {0}, sm = {0};

    pbw_uint(&sm, 1, (uint64_t)id);
    pbw_str(&sm, 2, name);
    pbw_uint(&entry, 1, (uint64_t)id);
    pbw_msg(&entry, 2, &sm);
    pbw_msg(plane, 5, &entry);
}

static void str_stat(struct pbw *ev, int64_t id, const char *v)
{
    struct pbw st = {0};

    pbw_uint(&st, 1, (uint64_t)id);
    pbw_str(&st, 5, v);
    pbw_msg(ev, 4, &st);
}

/* A kernel (or, without kernel_details, a memcpy) at [off, off + dur) ps. */
static void add_event(struct pbw *line, int64_t off, int64_t dur, int kernel, const char *tf_op,
                      const char *hlo_op)
{
    struct pbw ev = {0}, st = {0};

    pbw_uint(&ev, 1, 1);
    pbw_uint(&ev, 2, (uint64_t)off);
    pbw_uint(&ev, 3, (uint64_t)dur);
    if (kernel)
        str_stat(&ev, S_KERNEL, "regs:32");
    if (tf_op != NULL)
        str_stat(&ev, S_TF_OP, tf_op);
    if (hlo_op != NULL) {
        str_stat(&ev, S_HLO_OP, hlo_op);
        str_stat(&ev, S_HLO_MODULE, "jit_f");
        pbw_uint(&st, 1, S_PROGRAM);
        pbw_uint(&st, 3, 3);
        pbw_msg(&ev, 4, &st);
    }
    pbw_msg(line, 4, &ev);
}

static void metadata_plane(struct pbw *space)
{
    struct pbw plane = {0}, entry = {0}, em = {0}, st = {0}, proto = {0}, mod = {0}, comp = {0},
               in = {0}, md = {0};

    pbw_str(&md, 1, "dot_general");
    pbw_str(&md, 2, "jit(f)/dot_general");
    pbw_str(&md, 3, "/src/model.py");
    pbw_uint(&md, 4, 42);
    pbw_str(&in, 1, "fusion.1");
    pbw_msg(&in, 7, &md);
    pbw_msg(&comp, 2, &in);
    pbw_str(&mod, 1, "jit_f");
    pbw_msg(&mod, 3, &comp);
    pbw_msg(&proto, 1, &mod);
    pbw_uint(&st, 1, S_HLO_PROTO);
    pbw_bytes(&st, 6, proto.p, proto.n);
    free(proto.p);
    pbw_uint(&em, 1, 3);
    pbw_str(&em, 2, "jit_f(3)");
    pbw_msg(&em, 5, &st);
    pbw_uint(&entry, 1, 3);
    pbw_msg(&entry, 2, &em);
    pbw_uint(&plane, 1, 99);
    pbw_str(&plane, 2, "/host:metadata");
    pbw_msg(&plane, 4, &entry);
    add_stat_meta(&plane, S_HLO_PROTO, "Hlo Proto");
    pbw_msg(space, 1, &plane);
}

/* /device:GPU:0 holding the one stream line (its events given, metadata
 * 1 "kernel", the five stats the derivation reads). */
static void gpu_plane_of(struct pbw *space, struct pbw *events)
{
    struct pbw plane = {0}, line = {0}, entry = {0}, em = {0};

    pbw_uint(&line, 1, 10);
    pbw_str(&line, 2, "Stream #10(Compute)");
    pbw_raw(&line, events->p, events->n);
    free(events->p);
    memset(events, 0, sizeof(*events));
    pbw_uint(&plane, 1, 0);
    pbw_str(&plane, 2, "/device:GPU:0");
    pbw_msg(&plane, 3, &line);
    pbw_uint(&em, 1, 1);
    pbw_str(&em, 2, "kernel");
    pbw_uint(&entry, 1, 1);
    pbw_msg(&entry, 2, &em);
    pbw_msg(&plane, 4, &entry);
    add_stat_meta(&plane, S_KERNEL, "kernel_details");
    add_stat_meta(&plane, S_TF_OP, "tf_op");
    add_stat_meta(&plane, S_HLO_OP, "hlo_op");
    add_stat_meta(&plane, S_HLO_MODULE, "hlo_module");
    add_stat_meta(&plane, S_PROGRAM, "program_id");
    pbw_msg(space, 1, &plane);
}

static void gpu_plane(struct pbw *space)
{
    struct pbw events = {0};

    add_event(&events, 0, 1000000, 1, "model/dense/MatMul:MatMul", NULL);
    add_event(&events, 2000000, 1000000, 1, "model/dense/MatMul:MatMul", NULL);
    add_event(&events, 4000000, 1000000, 1, "model/dense/BiasAdd:BiasAdd", NULL);
    add_event(&events, 6000000, 1000000, 0, "model/x:Y", NULL); /* not a kernel */
    add_event(&events, 8000000, 1000000, 1, "other/Relu:Relu", NULL);
    add_event(&events, 10000000, 1000000, 1, "ignored:Ignored", "fusion.1");
    gpu_plane_of(space, &events);
}

static const struct dv_line *line_named(const struct derived *dv, const char *name)
{
    uint32_t i;

    for (i = 0; i < dv->nlines; i++) {
        if (strcmp(dv->lines[i].name, name) == 0)
            return &dv->lines[i];
    }
    fail_msg("no line %s", name);
    return NULL;
}

static void check_event(const struct dv_line *l, uint32_t i, const char *name, const char *shown,
                        uint64_t ts, uint64_t dur)
{
    const struct dv_event *e;

    assert_true(i < l->nev);
    e = &l->ev[i];
    assert_string_equal(derived_name(l, i), name);
    if (shown == NULL)
        assert_null(derived_display(l, i));
    else
        assert_string_equal(derived_display(l, i), shown);
    assert_int_equal(e->ts, ts);
    assert_int_equal(e->dur, dur);
    assert_int_equal(e->group, -1);
}

static void test_stream(void **state)
{
    struct pbw space = {0};
    struct xspace *xs = NULL;
    struct derived *dv = NULL;
    struct xp_err err;
    const struct dv_line *l;

    (void)state;
    memset(&err, 0, sizeof(err));
    gpu_plane(&space);
    metadata_plane(&space);
    assert_int_equal(xspace_open_buffer("t.xplane.pb", space.p, space.n, &xs, &err), 0);
    assert_int_equal(xspace_decode(xs, 1, &err), 0);
    assert_int_equal(derived_build(xs, NULL, NULL, &dv, &err), 0);
    assert_int_equal(dv->nlines, 5);

    l = line_named(dv, "Framework Name Scope - from #10");
    assert_int_equal(l->nev, 4);
    check_event(l, 0, "model", NULL, 0, 5000000);
    check_event(l, 1, "dense", NULL, 0, 4999000); /* equal spans: 1 ns shorter */
    check_event(l, 2, "other", NULL, 8000000, 1000000);
    check_event(l, 3, "jit(f)", NULL, 10000000, 1000000);
    assert_int_equal(l->display_id, 2);

    l = line_named(dv, "Framework Ops - from #10");
    assert_int_equal(l->nev, 4);
    check_event(l, 0, "model/dense/MatMul:MatMul", "MatMul", 0, 3000000);
    check_event(l, 1, "model/dense/BiasAdd:BiasAdd", "BiasAdd", 4000000, 1000000);
    check_event(l, 2, "other/Relu:Relu", "Relu", 8000000, 1000000);
    /* An XLA op's framework op comes from the HLO, not its tf_op stat. */
    check_event(l, 3, "jit(f)/dot_general:dot_general", "dot_general", 10000000, 1000000);
    assert_int_equal(l->display_id, 3);

    l = line_named(dv, "XLA Modules - from #10");
    assert_int_equal(l->nev, 1);
    check_event(l, 0, "jit_f(3)", NULL, 10000000, 1000000);
    assert_int_equal(l->display_id, 4);

    l = line_named(dv, "XLA Ops - from #10");
    assert_int_equal(l->nev, 1);
    check_event(l, 0, "3/fusion.1", "fusion.1", 10000000, 1000000);
    assert_int_equal(l->display_id, 5);

    l = line_named(dv, "Source code - from #10");
    assert_int_equal(l->nev, 1);
    check_event(l, 0, "model.py:42", NULL, 10000000, 1000000);
    assert_int_equal(l->display_id, 6);

    assert_int_equal(dv->display_ids[0][0], 1); /* the stream itself */
    derived_free(dv);
    xspace_close(xs);
    free(space.p);
}

/* What the accessors say about one event. */
struct seen {
    const char *name, *display, *long_name, *step_name;
    int32_t group;
};

static struct seen seen_of(const struct dv_line *l, uint32_t k)
{
    struct seen x = {derived_name(l, k), derived_display(l, k), derived_long_name(l, k),
                     derived_step_name(l, k), derived_group(l, k)};
    return x;
}

static void test_compact(void **state)
{
    struct pbw space = {0};
    struct xspace *xs = NULL;
    struct derived *dv = NULL;
    struct xp_err err;
    struct seen before[64];
    uint32_t i, k, n = 0;
    const struct dv_line *l;

    (void)state;
    memset(&err, 0, sizeof(err));
    gpu_plane(&space);
    metadata_plane(&space);
    assert_int_equal(xspace_open_buffer("t.xplane.pb", space.p, space.n, &xs, &err), 0);
    assert_int_equal(xspace_decode(xs, 1, &err), 0);
    assert_int_equal(derived_build(xs, NULL, NULL, &dv, &err), 0);
    for (i = 0; i < dv->nlines; i++) {
        for (k = 0; k < dv->lines[i].nev; k++) {
            assert_true(n < 64);
            before[n++] = seen_of(&dv->lines[i], k);
        }
    }
    /* One line alone first (as the trace builder does once a line is in
     * the index): the others keep their times until derived_compact. */
    assert_true(dv->nlines >= 2);
    derived_compact_line(&dv->lines[0]);
    assert_null(dv->lines[0].ev);
    assert_non_null(dv->lines[0].kept);
    assert_non_null(dv->lines[1].ev);
    assert_null(dv->lines[1].kept);
    derived_compact(dv);
    for (i = 0, n = 0; i < dv->nlines; i++) {
        assert_null(dv->lines[i].ev);
        assert_non_null(dv->lines[i].kept);
        for (k = 0; k < dv->lines[i].nev; k++, n++) {
            struct seen now = seen_of(&dv->lines[i], k);
            assert_ptr_equal(now.name, before[n].name);
            assert_ptr_equal(now.display, before[n].display);
            assert_ptr_equal(now.long_name, before[n].long_name);
            assert_ptr_equal(now.step_name, before[n].step_name);
            assert_int_equal(now.group, before[n].group);
        }
    }
    /* By hand: an event with a display name, and one without. */
    l = line_named(dv, "Framework Ops - from #10");
    assert_string_equal(derived_display(l, 1), "BiasAdd");
    assert_string_equal(derived_long_name(l, 1), "model/dense/BiasAdd:BiasAdd");
    l = line_named(dv, "Framework Name Scope - from #10");
    assert_string_equal(derived_name(l, 3), "jit(f)");
    assert_null(derived_long_name(l, 3));
    assert_int_equal(derived_group(l, 3), -1);
    derived_free(dv);
    xspace_close(xs);
    free(space.p);
}

/* A line of 3,000 events over three ops (a display name as a tail of the
 * name, one of its own, and none) holds three name pairs while it is built
 * and after it is compacted to 8 bytes per event, and reads back the same
 * names, display names and groups. */
static void test_compact_shares_names(void **state)
{
    static const char *names[] = {"jit(f)/dot.1", "model/dense/MatMul:MatMul", "fusion.2"};
    static const char *shown = "MatMul";
    struct dv_line l;
    uint32_t k, n = 3000;

    (void)state;
    memset(&l, 0, sizeof(l));
    l.ev = big_malloc(n * sizeof(*l.ev));
    assert_non_null(l.ev);
    assert_int_equal(sizeof(*l.ev), 24);
    l.cap = n;
    for (k = 0; k < n; k++) {
        struct dv_event *e = &l.ev[k];
        const char *display = k % 3 == 0 ? names[0] + 4 : k % 3 == 1 ? shown : NULL;
        memset(e, 0, sizeof(*e));
        e->ts = 10 * (uint64_t)k;
        e->dur = 5;
        e->group = (int32_t)(k / 7) - 1;
        assert_int_equal(derived_line_ref(&l, names[k % 3], display, &e->ref), 0);
        assert_int_equal(e->ref, k < 3 ? k : l.ev[k - 3].ref);
        l.nev = k + 1;
    }
    assert_int_equal(l.nrefs, 3);
    assert_ptr_equal(derived_display(&l, 1), shown);
    derived_compact_line(&l);
    assert_null(l.ev);
    assert_non_null(l.kept);
    assert_int_equal(sizeof(*l.kept), 8);
    assert_int_equal(l.nrefs, 3);
    assert_null(l.ref_slots);
    for (k = 0; k < n; k++) {
        assert_ptr_equal(derived_name(&l, k), names[k % 3]);
        assert_int_equal(derived_group(&l, k), (int32_t)(k / 7) - 1);
        if (k % 3 == 0) {
            assert_ptr_equal(derived_display(&l, k), names[0] + 4);
            assert_ptr_equal(derived_long_name(&l, k), names[0]);
        } else if (k % 3 == 1) {
            assert_ptr_equal(derived_display(&l, k), shown);
            assert_ptr_equal(derived_long_name(&l, k), names[1]);
        } else {
            assert_null(derived_display(&l, k));
            assert_null(derived_long_name(&l, k));
        }
    }
    big_free(l.kept);
    free(l.refs);
}

/* A kernel with an hlo_op but neither hlo_module nor program_id (found by
 * the tools' fuzz target: the op's name was built from a NULL module with
 * memcpy, undefined behaviour that the sanitized run of this test stops
 * at): an XLA Ops event named "/<op>", no module event. */
static void test_op_without_module(void **state)
{
    struct pbw space = {0}, events = {0}, ev = {0};
    struct xspace *xs = NULL;
    struct derived *dv = NULL;
    struct xp_err err;
    const struct dv_line *l;
    uint32_t k;

    (void)state;
    memset(&err, 0, sizeof(err));
    pbw_uint(&ev, 1, 1);
    pbw_uint(&ev, 2, 0);
    pbw_uint(&ev, 3, 1000);
    str_stat(&ev, S_KERNEL, "regs:32");
    str_stat(&ev, S_HLO_OP, "fusion.7");
    pbw_msg(&events, 4, &ev);
    gpu_plane_of(&space, &events);
    assert_int_equal(xspace_open_buffer("t.xplane.pb", space.p, space.n, &xs, &err), 0);
    assert_int_equal(xspace_decode(xs, 1, &err), 0);
    assert_int_equal(derived_build(xs, NULL, NULL, &dv, &err), 0);
    l = line_named(dv, "XLA Ops - from #10");
    assert_int_equal(l->nev, 1);
    check_event(l, 0, "/fusion.7", "fusion.7", 0, 1000);
    for (k = 0; k < dv->nlines; k++)
        assert_string_not_equal(dv->lines[k].name, "XLA Modules - from #10");
    derived_free(dv);
    xspace_close(xs);
    free(space.p);
}

/* --- Launch Stats counted in parts ---------------------------------------------- */

enum { LS_ROOT = 1, LS_STEP_NUM, LS_CORR, LS_DEVICE, LS_COUNT };
static const char *const ls_stats[LS_COUNT] = {NULL, "_r", "step_num", "correlation_id",
                                               "device_id"};

#define LS_STEPS 23      /* the middle of the host events falls inside step 11 */
#define LS_PER_STEP 3000 /* 69,000 launches: over the size counted in parts */
#define LS_STEP_PS 3000000

/* Launch i of step s: its device (steps s % 5 == 0 launch on GPU 0 only),
 * start and duration. */
static int ls_device(int s, int i)
{
    return s % 5 == 0 ? 0 : (i + s) % 2;
}

static int64_t ls_start(int s, int i)
{
    return (int64_t)s * LS_STEP_PS + 100 + (int64_t)i * 900;
}

static int64_t ls_dur(int s, int i)
{
    return 200 + (i * 37 + s * 11) % 600;
}

static void test_launch_stats_in_parts(void **state)
{
    struct pbw space = {0};
    struct tplane host, gpu;
    struct xspace *xs;
    struct xp_groups *g;
    struct derived *dv;
    struct xp_err err = {0};
    int64_t corr = 1;
    int s, i, d;

    (void)state;
    tplane_begin(&host, 0, "/host:CPU", ls_stats, LS_COUNT, 0, 0);
    for (s = 0; s < LS_STEPS; s++) {
        tplane_event(&host, "train", (int64_t)s * LS_STEP_PS, LS_STEP_PS - 10, LS_ROOT, (int64_t)1,
                     LS_STEP_NUM, (int64_t)(s + 1), 0);
        for (i = 0; i < LS_PER_STEP; i++)
            tplane_event(&host, "launch", ls_start(s, i), ls_dur(s, i), LS_CORR, corr++, LS_DEVICE,
                         (int64_t)ls_device(s, i), 0);
    }
    tplane_line_end(&host, 1, "python");
    /* outside every step: no group, not counted */
    tplane_event(&host, "launch", (int64_t)LS_STEPS * LS_STEP_PS + 5, 50, LS_CORR, corr++,
                 LS_DEVICE, (int64_t)1, 0);
    tplane_line_end(&host, 2, "other");
    tplane_end(&host, &space);
    for (d = 0; d < 2; d++) {
        tplane_begin(&gpu, 10 + d, d == 0 ? "/device:GPU:0" : "/device:GPU:1", ls_stats, LS_COUNT,
                     0, 0);
        tplane_event(&gpu, "kernel", 1000, 100, LS_CORR, (int64_t)(1 + d), 0);
        tplane_line_end(&gpu, 7, "Stream #7(Compute)");
        tplane_end(&gpu, &space);
    }
    assert_int_equal(xspace_open_buffer("t.xplane.pb", space.p, space.n, &xs, &err), 0);
    assert_int_equal(xspace_decode(xs, 2, &err), 0);
    assert_int_equal(xp_groups_build(xs, &g, &err), 0);
    assert_int_equal(g->ngroups, LS_STEPS);
    assert_int_equal(derived_build(xs, g, NULL, &dv, &err), 0);
    for (d = 0; d < 2; d++) {
        const struct dv_line *l = NULL;
        uint32_t k, n = 0;
        for (k = 0; k < dv->nlines; k++) {
            if (strcmp(dv->lines[k].name, "Launch Stats") == 0 &&
                strcmp(xs->planes[dv->lines[k].plane].name,
                       d == 0 ? "/device:GPU:0" : "/device:GPU:1") == 0)
                l = &dv->lines[k];
        }
        assert_non_null(l);
        for (s = 0; s < LS_STEPS; s++) {
            /* the step's launches on GPU d, counted here */
            int64_t count = 0, begin = INT64_MAX, end = 0, most = 0, sum = 0;
            const struct dv_launch *ls;
            char name[64];
            for (i = 0; i < LS_PER_STEP; i++) {
                if (ls_device(s, i) != d)
                    continue;
                count++;
                if (ls_start(s, i) < begin)
                    begin = ls_start(s, i);
                if (ls_start(s, i) + ls_dur(s, i) > end)
                    end = ls_start(s, i) + ls_dur(s, i);
                if (ls_dur(s, i) > most)
                    most = ls_dur(s, i);
                sum += ls_dur(s, i);
            }
            if (count == 0)
                continue;
            assert_true(n < l->nev);
            snprintf(name, sizeof(name), "Launch Stats for train %d", s + 1);
            assert_string_equal(derived_name(l, n), name);
            assert_int_equal(l->ev[n].group, s);
            assert_int_equal(l->ev[n].ts, begin);
            assert_int_equal(l->ev[n].dur, end - begin);
            ls = derived_launch(l, n);
            assert_non_null(ls);
            assert_int_equal(ls->num_launches, count);
            assert_true(ls->max_launch_us == (double)most / 1e6);
            assert_true(ls->avg_launch_us == (double)sum / (double)count / 1e6);
            n++;
        }
        assert_int_equal(n, l->nev);
        /* GPU 1 has no launch in steps s % 5 == 0 */
        assert_int_equal(n, d == 0 ? LS_STEPS : LS_STEPS - 5);
    }
    derived_free(dv);
    xp_groups_free(g);
    xspace_close(xs);
    free(space.p);
}

/* --- the Steps line from the grouping's markers ------------------------------------ */

#define ST_STEPS 3
#define ST_STEP_PS 1000000

/* Three steps on the host, each with two launches; on GPU 0 each step's
 * kernels on two streams and ungrouped kernels (they take the latest group
 * in time order, ProcessUngroupedEvents): one between them, one on the
 * second stream with the first kernel's start and duration (it comes after
 * it, on a later line: merged the other way round, it would take the step
 * before's group and stretch that step). variant 1 adds an empty line whose
 * id only the derived lines count as derived (the Steps line is then made
 * by its own walk of the events), variant 2 an ungrouped kernel starting
 * before 0 (the grouping's markers are then not used either), variant 3
 * writes the second stream's events out of order (the grouping then sorts
 * the plane's events instead of merging its lines). */
static void steps_profile(struct pbw *space, int variant)
{
    struct tplane host, gpu;
    int s, k;

    memset(space, 0, sizeof(*space));
    tplane_begin(&host, 0, "/host:CPU", ls_stats, LS_COUNT, 0, 0);
    for (s = 0; s < ST_STEPS; s++) {
        int64_t at = (int64_t)s * ST_STEP_PS;
        tplane_event(&host, "train", at, ST_STEP_PS - 10, LS_ROOT, (int64_t)1, LS_STEP_NUM,
                     (int64_t)(s + 1), 0);
        tplane_event(&host, "launch", at + 100, 50, LS_CORR, (int64_t)(10 * s + 1), LS_DEVICE,
                     (int64_t)0, 0);
        tplane_event(&host, "launch", at + 200, 50, LS_CORR, (int64_t)(10 * s + 2), LS_DEVICE,
                     (int64_t)0, 0);
    }
    tplane_line_end(&host, 1, "python");
    tplane_end(&host, space);
    tplane_begin(&gpu, 10, "/device:GPU:0", ls_stats, LS_COUNT, 0, 0);
    if (variant == 2)
        tplane_event(&gpu, "early", -5, 1, 0);
    for (s = 0; s < ST_STEPS; s++) {
        int64_t at = (int64_t)s * ST_STEP_PS;
        tplane_event(&gpu, "kernel", at + 300, 100000, LS_CORR, (int64_t)(10 * s + 1), 0);
        tplane_event(&gpu, "ungrouped", at + 500000, 1000, 0);
    }
    tplane_line_end(&gpu, 7, "Stream #7(Compute)");
    for (k = 0; k < ST_STEPS; k++) {
        int64_t at;
        s = variant == 3 ? ST_STEPS - 1 - k : k;
        at = (int64_t)s * ST_STEP_PS;
        tplane_event(&gpu, "tie", at + 300, 100000, 0);
        tplane_event(&gpu, "copy", at + 400, 700000, LS_CORR, (int64_t)(10 * s + 2), 0);
    }
    tplane_line_end(&gpu, 8, "Stream #8(Memcpy)");
    if (variant == 1)
        tplane_line_end(&gpu, (int64_t)(int32_t)0xdeadbeef + 500, "odd");
    tplane_end(&gpu, space);
}

static void test_steps_from_markers(void **state)
{
    int variant;

    (void)state;
    for (variant = 0; variant < 4; variant++) {
        struct pbw space;
        struct xspace *xs;
        struct xp_groups *g;
        struct derived *dv;
        struct xp_err err = {0};
        const struct dv_line *l = NULL;
        uint32_t k;
        int s;

        steps_profile(&space, variant);
        assert_int_equal(xspace_open_buffer("t.xplane.pb", space.p, space.n, &xs, &err), 0);
        assert_int_equal(xspace_decode(xs, 2, &err), 0);
        assert_int_equal(xp_groups_build(xs, &g, &err), 0);
        assert_int_equal(g->ngroups, ST_STEPS);
        assert_int_equal(g->nsteps[1], ST_STEPS);
        assert_int_equal(g->steps_derived[1], variant != 2);
        assert_int_equal(derived_build(xs, g, NULL, &dv, &err), 0);
        for (k = 0; k < dv->nlines; k++) {
            if (strcmp(dv->lines[k].name, "Steps") == 0)
                l = &dv->lines[k];
        }
        assert_non_null(l);
        assert_int_equal(l->plane, 1);
        assert_int_equal(l->nev, ST_STEPS);
        for (s = 0; s < ST_STEPS; s++) {
            char name[16];
            snprintf(name, sizeof(name), "%d", s);
            /* from the first kernel to the end of the copy, the ungrouped
             * kernel inside */
            assert_int_equal(l->ev[s].ts, (uint64_t)s * ST_STEP_PS + 300);
            assert_int_equal(l->ev[s].dur, 700400 - 300);
            assert_int_equal(l->ev[s].group, s);
            assert_string_equal(derived_name(l, s), name);
        }
        derived_free(dv);
        xp_groups_free(g);
        xspace_close(xs);
        free(space.p);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_stream),
        cmocka_unit_test(test_compact),
        cmocka_unit_test(test_compact_shares_names),
        cmocka_unit_test(test_op_without_module),
        cmocka_unit_test(test_launch_stats_in_parts),
        cmocka_unit_test(test_steps_from_markers),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
