/*
 * test_group.c - XProf step grouping on small hand-built profiles: roots and
 * their names, nesting, launch -> kernel links, producer/consumer contexts,
 * root levels, TensorFlow loops, loop ops, pre-grouped files, the GPU
 * rule (ungrouped kernels inherit the latest group; Steps markers) and TPU
 * planes (grouping lines, the lock step, MergeHostSteps, GroupLine).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <string.h>
#include <unistd.h>

#include "xplane/group.h"
#include "pbw.h"
#include "tplane.h"
#include "reader/xspace.h"

/* Stat metadata ids used by every test plane. */
enum {
    S_ROOT = 1,
    S_STEP_NUM,
    S_CORR,
    S_GROUP,
    S_ASYNC,
    S_ITER,
    S_STEP_ID,
    S_PT,
    S_P,
    S_CT,
    S_C,
    S_STEP_NAME,
    S_COUNT
};

static const char *const stat_names[S_COUNT] = {
    NULL, "_r",  "step_num", "correlation_id", "group_id", "_a", "iter_num", "id", "_pt",
    "_p", "_ct", "_c",       "step_name",
};

static void plane_begin(struct tplane *tp, int64_t id, const char *name, int with_group_stat)
{
    tplane_begin(tp, id, name, stat_names, S_COUNT, S_STEP_NAME, with_group_stat ? 0 : S_GROUP);
}

/* Open, decode and group the space; the caller frees with done(). */
struct fixture {
    char *path;
    struct xspace *xs;
    struct xp_groups *g;
};

static void load(struct fixture *fx, struct pbw *space)
{
    struct xp_err err;

    fx->path = pbw_tmpfile(space->p, space->n, ".xplane.pb");
    free(space->p);
    assert_int_equal(xspace_open(fx->path, &fx->xs, &err), 0);
    assert_int_equal(xspace_decode(fx->xs, 1, &err), 0);
    assert_int_equal(xp_groups_build(fx->xs, &fx->g, &err), 0);
}

static void done(struct fixture *fx)
{
    xp_groups_free(fx->g);
    xspace_close(fx->xs);
    unlink(fx->path);
    free(fx->path);
}

#define L(x) ((int64_t)(x))

/* Two annotated steps; kernels linked by correlation id; the GPU rule. */
static void test_steps_and_kernels(void **state)
{
    struct pbw space = {0};
    struct tplane host, gpu;
    struct fixture fx;

    (void)state;
    plane_begin(&host, 0, "/host:CPU", 0);
    tplane_event(&host, "train", 0, 1000, S_ROOT, L(1), S_STEP_NUM, L(7), 0);
    tplane_event(&host, "launch", 100, 100, S_CORR, L(5), 0);
    tplane_event(&host, "train", 2000, 1000, S_ROOT, L(1), S_STEP_NUM, L(8), 0);
    tplane_event(&host, "launch", 2100, 100, S_CORR, L(6), 0);
    tplane_line_end(&host, 1, "python");
    tplane_event(&host, "other", 5000, 10, 0);
    tplane_line_end(&host, 2, "thread");
    tplane_end(&host, &space);
    plane_begin(&gpu, 7, "/device:GPU:0", 0);
    tplane_event(&gpu, "k", 50, 10, 0);
    tplane_event(&gpu, "k", 300, 100, S_CORR, L(5), 0);
    tplane_event(&gpu, "k", 500, 100, 0);
    tplane_event(&gpu, "k", 2300, 100, S_CORR, L(6), 0);
    tplane_event(&gpu, "k", 2500, 100, S_CORR, L(99), 0);
    tplane_line_end(&gpu, 3, "Stream #3");
    tplane_end(&gpu, &space);
    load(&fx, &space);

    assert_int_equal(fx.g->pre_grouped, 0);
    assert_int_equal(fx.g->ngroups, 2);
    assert_string_equal(fx.g->groups[0].name, "train 7");
    assert_string_equal(fx.g->groups[1].name, "train 8");
    assert_int_equal(fx.g->groups[0].step_num, 7);
    assert_int_equal(fx.g->groups[0].named_root, 1);
    assert_int_equal(fx.g->groups[1].root_event, 2);
    /* host */
    assert_int_equal(xp_group_of(fx.g, 0, 0, 0), 0);
    assert_int_equal(xp_group_of(fx.g, 0, 0, 1), 0);
    assert_int_equal(xp_group_of(fx.g, 0, 0, 2), 1);
    assert_int_equal(xp_group_of(fx.g, 0, 0, 3), 1);
    assert_int_equal(xp_group_of(fx.g, 0, 1, 0), -1);
    /* GPU: before any group, linked, inherited, linked, inherited */
    assert_int_equal(xp_group_of(fx.g, 1, 0, 0), -1);
    assert_int_equal(xp_group_of(fx.g, 1, 0, 1), 0);
    assert_int_equal(xp_group_of(fx.g, 1, 0, 2), 0);
    assert_int_equal(xp_group_of(fx.g, 1, 0, 3), 1);
    assert_int_equal(xp_group_of(fx.g, 1, 0, 4), 1);
    /* Steps markers: one per run of a group, spanning its events */
    assert_int_equal(fx.g->nsteps[1], 2);
    assert_int_equal(fx.g->steps[1][0].group_id, 0);
    assert_int_equal(fx.g->steps[1][0].begin_ps, 300);
    assert_int_equal(fx.g->steps[1][0].end_ps, 600);
    assert_int_equal(fx.g->steps[1][1].group_id, 1);
    assert_int_equal(fx.g->steps[1][1].begin_ps, 2300);
    assert_int_equal(fx.g->steps[1][1].end_ps, 2600);
    assert_int_equal(fx.g->nsteps[0], 0);
    done(&fx);
}

/* No root anywhere: nothing is grouped, no markers (JAX without
 * StepTraceAnnotation). */
static void test_no_roots(void **state)
{
    struct pbw space = {0};
    struct tplane host, gpu;
    struct fixture fx;

    (void)state;
    plane_begin(&host, 0, "/host:CPU", 0);
    tplane_event(&host, "launch", 100, 100, S_CORR, L(5), 0);
    tplane_line_end(&host, 1, "python");
    tplane_end(&host, &space);
    plane_begin(&gpu, 1, "/device:GPU:0", 0);
    tplane_event(&gpu, "k", 300, 100, S_CORR, L(5), 0);
    tplane_line_end(&gpu, 3, "Stream #3");
    tplane_end(&gpu, &space);
    load(&fx, &space);
    assert_int_equal(fx.g->ngroups, 0);
    assert_int_equal(xp_group_of(fx.g, 0, 0, 0), -1);
    assert_int_equal(xp_group_of(fx.g, 1, 0, 0), -1);
    assert_int_equal(fx.g->nsteps[1], 0);
    done(&fx);
}

/* A TensorFlow loop op anywhere turns grouping off (CheckLoopOp). */
static void test_loop_op(void **state)
{
    struct pbw space = {0};
    struct tplane host;
    struct fixture fx;

    (void)state;
    plane_begin(&host, 0, "/host:CPU", 0);
    tplane_event(&host, "train", 0, 1000, S_ROOT, L(1), S_STEP_NUM, L(1), 0);
    tplane_event(&host, "WhileOp-EvalCond", 10, 10, 0);
    tplane_line_end(&host, 1, "python");
    tplane_end(&host, &space);
    load(&fx, &space);
    assert_int_equal(fx.g->ngroups, 0);
    assert_int_equal(xp_group_of(fx.g, 0, 0, 0), -1);
    done(&fx);
}

/* Root levels: a nested root of the same level is not a group of its own;
 * a higher-level root is grouped first and keeps its subtree. */
static void test_root_levels(void **state)
{
    struct pbw space = {0};
    struct tplane host;
    struct fixture fx;

    (void)state;
    plane_begin(&host, 0, "/host:CPU", 0);
    tplane_event(&host, "outer", 0, 1000, S_ROOT, L(1), 0);
    tplane_event(&host, "inner", 100, 100, S_ROOT, L(1), 0);
    tplane_event(&host, "batch", 300, 100, S_ROOT, L(2), 0);
    tplane_event(&host, "work", 310, 10, 0);
    tplane_event(&host, "tail", 600, 10, 0);
    tplane_line_end(&host, 1, "python");
    tplane_end(&host, &space);
    load(&fx, &space);
    assert_int_equal(fx.g->ngroups, 2);
    /* level 2 first: "batch 0"; then "outer" gets id 1, named by its id */
    assert_string_equal(fx.g->groups[0].name, "batch 0");
    assert_string_equal(fx.g->groups[1].name, "outer 1");
    assert_int_equal(xp_group_of(fx.g, 0, 0, 2), 0);
    assert_int_equal(xp_group_of(fx.g, 0, 0, 3), 0);
    assert_int_equal(xp_group_of(fx.g, 0, 0, 0), 1);
    assert_int_equal(xp_group_of(fx.g, 0, 0, 1), 1);
    assert_int_equal(xp_group_of(fx.g, 0, 0, 4), 1);
    /* "outer" met "batch": group 1 is a parent of group 0 */
    assert_int_equal(fx.g->nlinks, 1);
    assert_int_equal(fx.g->links[0].parent, 1);
    assert_int_equal(fx.g->links[0].child, 0);
    done(&fx);
}

/* Serving: PreprocessXPlane makes ProcessBatch a root of level 2 and
 * BatchingSessionRun one of level 1 (whatever _r they carry); any _r is a
 * root level, -1 and 0 included (EventNode::IsRoot is has_value()). A
 * request whose propagation meets its batch's group records it as a child
 * (GroupMetadata parents / children). */
static void test_inference_roots(void **state)
{
    struct pbw space = {0};
    struct tplane host;
    struct fixture fx;

    (void)state;
    plane_begin(&host, 0, "/host:CPU", 0);
    tplane_event(&host, "BatchingSessionRun", 0, 1000, S_ROOT, L(5), S_PT, L(8), S_P, L(1), 0);
    tplane_event(&host, "UserRoot", 2000, 100, S_ROOT, L(-1), 0);
    tplane_line_end(&host, 1, "request_1");
    tplane_event(&host, "BatchingSessionRun", 100, 800, S_PT, L(8), S_P, L(1), 0);
    tplane_event(&host, "ZeroRoot", 3000, 100, S_ROOT, L(0), 0);
    tplane_line_end(&host, 2, "request_2");
    tplane_event(&host, "ProcessBatch", 200, 600, S_CT, L(8), S_C, L(1), 0);
    tplane_event(&host, "SessionRun", 250, 500, 0);
    tplane_line_end(&host, 3, "batch");
    tplane_end(&host, &space);
    load(&fx, &space);
    assert_int_equal(fx.g->has_metadata, 1);
    assert_int_equal(fx.g->ngroups, 5);
    /* level 2, then level 1 by time, then 0, then -1 */
    assert_int_equal(xp_group_of(fx.g, 0, 2, 0), 0); /* ProcessBatch */
    assert_int_equal(xp_group_of(fx.g, 0, 2, 1), 0); /* its SessionRun */
    assert_int_equal(xp_group_of(fx.g, 0, 0, 0), 1); /* request 1 */
    assert_int_equal(xp_group_of(fx.g, 0, 1, 0), 2); /* request 2 */
    assert_int_equal(xp_group_of(fx.g, 0, 1, 1), 3); /* _r = 0 */
    assert_int_equal(xp_group_of(fx.g, 0, 0, 1), 4); /* _r = -1 */
    assert_string_equal(fx.g->groups[0].name, "ProcessBatch 0");
    assert_string_equal(fx.g->groups[4].name, "UserRoot 4");
    /* both requests are parents of the batch */
    assert_int_equal(fx.g->nlinks, 2);
    assert_int_equal(fx.g->links[0].parent, 1);
    assert_int_equal(fx.g->links[0].child, 0);
    assert_int_equal(fx.g->links[1].parent, 2);
    assert_int_equal(fx.g->links[1].child, 0);
    done(&fx);
}

/* A producer context links a consumer on another thread; async events are
 * not nested. */
static void test_contexts_and_async(void **state)
{
    struct pbw space = {0};
    struct tplane host;
    struct fixture fx;

    (void)state;
    plane_begin(&host, 0, "/host:CPU", 0);
    tplane_event(&host, "train", 0, 1000, S_ROOT, L(1), S_STEP_NUM, L(3), 0);
    tplane_event(&host, "produce", 10, 10, S_PT, L(9), S_P, L(42), 0);
    tplane_event(&host, "async", 50, 10, S_ASYNC, L(1), 0);
    tplane_line_end(&host, 1, "main");
    tplane_event(&host, "consume", 5000, 100, S_CT, L(9), S_C, L(42), 0);
    tplane_event(&host, "inside", 5010, 10, 0);
    tplane_event(&host, "stranger", 5200, 10, S_CT, L(9), S_C, L(43), 0);
    tplane_line_end(&host, 2, "worker");
    tplane_end(&host, &space);
    load(&fx, &space);
    assert_int_equal(fx.g->ngroups, 1);
    assert_string_equal(fx.g->groups[0].name, "train 3");
    assert_int_equal(xp_group_of(fx.g, 0, 0, 1), 0);
    assert_int_equal(xp_group_of(fx.g, 0, 0, 2), -1); /* async: not a child */
    assert_int_equal(xp_group_of(fx.g, 0, 1, 0), 0);
    assert_int_equal(xp_group_of(fx.g, 0, 1, 1), 0);
    assert_int_equal(xp_group_of(fx.g, 0, 1, 2), -1);
    done(&fx);
}

/* TensorFlow loops: each iteration's first executor event is a root, named
 * by its iter_num (an implicit root gets no name prefix). */
static void test_tf_loop(void **state)
{
    struct pbw space = {0};
    struct tplane host;
    struct fixture fx;

    (void)state;
    plane_begin(&host, 0, "/host:CPU", 0);
    tplane_event(&host, "ExecutorState::Process", 0, 100, S_STEP_ID, L(3), S_ITER, L(0), 0);
    tplane_event(&host, "ExecutorState::Process", 500, 100, S_STEP_ID, L(3), S_ITER, L(1), 0);
    tplane_line_end(&host, 1, "a");
    tplane_event(&host, "ExecutorState::Process", 520, 10, S_STEP_ID, L(3), S_ITER, L(1), 0);
    tplane_line_end(&host, 2, "b");
    tplane_end(&host, &space);
    load(&fx, &space);
    assert_int_equal(fx.g->ngroups, 2);
    assert_string_equal(fx.g->groups[0].name, "0");
    assert_string_equal(fx.g->groups[1].name, "1");
    assert_int_equal(fx.g->groups[1].named_root, 0);
    assert_int_equal(xp_group_of(fx.g, 0, 0, 0), 0);
    assert_int_equal(xp_group_of(fx.g, 0, 0, 1), 1);
    assert_int_equal(xp_group_of(fx.g, 0, 1, 0), 1);
    done(&fx);
}

/* A file saved grouped: ids and names are read back, the Steps line gives
 * the markers, nothing is inherited. */
static void test_pre_grouped(void **state)
{
    struct pbw space = {0};
    struct tplane gpu;
    struct fixture fx;

    (void)state;
    plane_begin(&gpu, 4, "/device:GPU:4", 1);
    tplane_event(&gpu, "k", 100, 10, S_CORR, L(1), S_GROUP, L(2), 0);
    tplane_event(&gpu, "k", 200, 10, S_CORR, L(2), 0);
    tplane_line_end(&gpu, 3, "Stream #3");
    tplane_event(&gpu, "2", 90, 200, S_GROUP, L(2), S_STEP_NAME, "step two", 0);
    tplane_line_end(&gpu, (int64_t)(int32_t)0xdeadbeef, "Steps");
    tplane_end(&gpu, &space);
    load(&fx, &space);
    assert_int_equal(fx.g->pre_grouped, 1);
    assert_int_equal(fx.g->ngroups, 3);
    assert_string_equal(fx.g->groups[2].name, "step two");
    assert_string_equal(fx.g->groups[0].name, "0");
    assert_int_equal(xp_group_of(fx.g, 0, 0, 0), 2);
    assert_int_equal(xp_group_of(fx.g, 0, 0, 1), -1);
    assert_int_equal(fx.g->nsteps[0], 1);
    assert_int_equal(fx.g->steps[0][0].group_id, 2);
    assert_int_equal(fx.g->steps[0][0].begin_ps, 90);
    assert_int_equal(fx.g->steps[0][0].end_ps, 290);
    done(&fx);
}

static void test_derived_ids(void **state)
{
    (void)state;
    assert_true(xp_line_id_is_derived((int64_t)(int32_t)0xdeadbeef));
    assert_true(xp_line_id_is_derived(-559038734));
    assert_true(xp_line_id_is_derived(-559038348));
    assert_false(xp_line_id_is_derived(-559038347));
    assert_false(xp_line_id_is_derived(1));
}

/* TPU planes without host links: the lock step numbers each TensorCore's
 * Steps events 0, 1 ... (cores share ids; SparseCores are left out), the
 * other lines take the group of the Steps event they overlap, ends
 * inclusive (an op starting where a step ends is the earlier step's), and
 * the markers are the Steps events. A core without a Steps line is grouped
 * by its XLA Modules line. */
static void test_tpu_lock_step(void **state)
{
    struct pbw space = {0};
    struct tplane tc0, tc1, sc, tc2;
    struct fixture fx;

    (void)state;
    plane_begin(&tc0, 0, "/device:TPU:0", 0);
    tplane_event(&tc0, "op", 10, 10, 0);
    tplane_event(&tc0, "op", 100, 10, 0);
    tplane_event(&tc0, "op", 150, 10, 0);
    tplane_event(&tc0, "op", 500, 10, 0);
    tplane_line_end(&tc0, 3, "XLA Ops");
    tplane_event(&tc0, "0", 0, 100, S_STEP_NUM, L(40), 0);
    tplane_event(&tc0, "1", 100, 100, S_STEP_NUM, L(41), 0);
    tplane_line_end(&tc0, 1, "Steps");
    tplane_end(&tc0, &space);
    plane_begin(&tc1, 1, "/device:TPU:1", 0);
    tplane_event(&tc1, "0", 0, 90, 0);
    tplane_event(&tc1, "1", 100, 90, 0);
    tplane_event(&tc1, "2", 200, 90, 0);
    tplane_line_end(&tc1, 1, "Steps");
    tplane_end(&tc1, &space);
    plane_begin(&sc, 2, "/device:TPU:0 SparseCore 0", 0);
    tplane_event(&sc, "0", 0, 100, 0);
    tplane_line_end(&sc, 1, "Sparse Core Steps");
    tplane_event(&sc, "op", 10, 10, 0);
    tplane_line_end(&sc, 2, "Sparse Core Ops");
    tplane_end(&sc, &space);
    plane_begin(&tc2, 3, "/device:TPU:2", 0);
    tplane_line_end(&tc2, 1, "Steps");
    tplane_event(&tc2, "jit_f(1)", 0, 50, 0);
    tplane_line_end(&tc2, 2, "XLA Modules");
    tplane_event(&tc2, "op", 10, 10, 0);
    tplane_line_end(&tc2, 3, "XLA Ops");
    tplane_end(&tc2, &space);
    load(&fx, &space);

    assert_int_equal(fx.g->ngroups, 3);
    /* implicit roots: no event name; step_num when there is one, else the id
     * (core 1 renames groups 0 and 1, as XProf's metadata keeps the last) */
    assert_string_equal(fx.g->groups[0].name, "0");
    assert_string_equal(fx.g->groups[2].name, "2");
    assert_int_equal(fx.g->groups[0].named_root, 0);
    assert_int_equal(xp_group_of(fx.g, 0, 1, 0), 0);
    assert_int_equal(xp_group_of(fx.g, 0, 1, 1), 1);
    assert_int_equal(xp_group_of(fx.g, 0, 0, 0), 0);
    assert_int_equal(xp_group_of(fx.g, 0, 0, 1), 0); /* starts where step 0 ends */
    assert_int_equal(xp_group_of(fx.g, 0, 0, 2), 1);
    assert_int_equal(xp_group_of(fx.g, 0, 0, 3), -1); /* after every step */
    assert_int_equal(xp_group_of(fx.g, 1, 0, 2), 2);
    assert_int_equal(xp_group_of(fx.g, 2, 0, 0), -1); /* SparseCore: no lock step */
    assert_int_equal(xp_group_of(fx.g, 2, 1, 0), -1);
    assert_int_equal(xp_group_of(fx.g, 3, 1, 0), 0); /* module line groups core 2 */
    assert_int_equal(xp_group_of(fx.g, 3, 2, 0), 0);
    assert_int_equal(fx.g->nsteps[0], 2);
    assert_int_equal(fx.g->steps[0][1].group_id, 1);
    assert_int_equal(fx.g->steps[0][1].begin_ps, 100);
    assert_int_equal(fx.g->steps[0][1].end_ps, 200);
    assert_int_equal(fx.g->nsteps[3], 0);
    done(&fx);
}

/* A host root reaching TPU steps through contexts: no lock step; two Steps
 * events of one group merge into one marker, an ungrouped one is dropped,
 * and ops take the merged step's group. */
static void test_tpu_host_links(void **state)
{
    struct pbw space = {0};
    struct tplane host, tc;
    struct fixture fx;

    (void)state;
    plane_begin(&host, 0, "/host:CPU", 0);
    tplane_event(&host, "train", 0, 1000, S_ROOT, L(1), S_STEP_NUM, L(5), 0);
    tplane_event(&host, "launch", 10, 10, S_PT, L(1), S_P, L(77), 0);
    tplane_line_end(&host, 1, "python");
    tplane_end(&host, &space);
    plane_begin(&tc, 1, "/device:TPU:0", 0);
    tplane_event(&tc, "0", 0, 100, 0);
    tplane_event(&tc, "1", 100, 100, 0);
    tplane_event(&tc, "2", 200, 100, 0);
    tplane_line_end(&tc, 1, "Steps");
    tplane_event(&tc, "m", 110, 50, S_CT, L(1), S_C, L(77), 0);
    tplane_event(&tc, "m", 210, 50, S_CT, L(1), S_C, L(77), 0);
    tplane_line_end(&tc, 2, "XLA Modules");
    tplane_event(&tc, "op", 20, 10, 0);
    tplane_event(&tc, "op", 120, 10, 0);
    tplane_event(&tc, "op", 280, 10, 0);
    tplane_line_end(&tc, 3, "XLA Ops");
    tplane_end(&tc, &space);
    load(&fx, &space);

    assert_int_equal(fx.g->ngroups, 1);
    assert_string_equal(fx.g->groups[0].name, "train 5");
    assert_int_equal(xp_group_of(fx.g, 1, 0, 0), -1); /* step 0: not reached */
    assert_int_equal(xp_group_of(fx.g, 1, 0, 1), 0);
    assert_int_equal(xp_group_of(fx.g, 1, 0, 2), 0);
    assert_int_equal(xp_group_of(fx.g, 1, 2, 0), -1);
    assert_int_equal(xp_group_of(fx.g, 1, 2, 1), 0);
    assert_int_equal(xp_group_of(fx.g, 1, 2, 2), 0);
    assert_int_equal(fx.g->nsteps[1], 1); /* steps 1 and 2 merged, 0 dropped */
    assert_int_equal(fx.g->steps[1][0].begin_ps, 100);
    assert_int_equal(fx.g->steps[1][0].end_ps, 300);
    /* as the trace viewer draws the Steps line: 0 gone, 1 to 300, 2 merged */
    assert_true(xp_tpu_step_end(fx.g, 1, 0, 0, 100) == XP_STEP_DROPPED);
    assert_int_equal(xp_tpu_step_end(fx.g, 1, 0, 1, 200), 300);
    assert_true(xp_tpu_step_end(fx.g, 1, 0, 2, 300) == XP_STEP_DROPPED);
    assert_int_equal(xp_tpu_step_end(fx.g, 1, 2, 0, 30), 30); /* other lines as they are */
    done(&fx);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_steps_and_kernels), cmocka_unit_test(test_no_roots),
        cmocka_unit_test(test_loop_op),           cmocka_unit_test(test_root_levels),
        cmocka_unit_test(test_inference_roots),   cmocka_unit_test(test_contexts_and_async),
        cmocka_unit_test(test_tf_loop),           cmocka_unit_test(test_pre_grouped),
        cmocka_unit_test(test_derived_ids),       cmocka_unit_test(test_tpu_lock_step),
        cmocka_unit_test(test_tpu_host_links),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
