/*
 * test_intervals.c - unit tests of src/base/intervals.c: sums, unions, and the
 * iterative nesting checked against a brute-force model on random spans.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "base/intervals.h"

/* The issue's example: [0,10], [2,7], [8,12] us: union 12, sum 19. */
static void test_intervals_issue_example(void **state)
{
    struct xp_span v[] = {{8, 12}, {0, 10}, {2, 7}};

    assert_int_equal(xp_spans_sum(v, 3), 19);
    assert_int_equal(xp_spans_union(v, 3), 12);
    /* Sorted by the union: outer first. */
    assert_int_equal(v[0].lo, 0);
    assert_int_equal(v[1].lo, 2);
    assert_int_equal(v[2].lo, 8);
}

static void test_intervals_union_edges(void **state)
{
    struct xp_span none[1];
    struct xp_span touch[] = {{0, 5}, {5, 9}};
    struct xp_span gap[] = {{10, 12}, {0, 3}};
    struct xp_span points[] = {{4, 4}, {4, 4}, {7, 7}};
    struct xp_span clip[] = {{0, 10}, {8, 12}, {20, 30}};

    assert_int_equal(xp_spans_union(none, 0), 0);
    assert_int_equal(xp_spans_sum(none, 0), 0);
    assert_int_equal(xp_spans_union(touch, 2), 9);
    assert_int_equal(xp_spans_union(gap, 2), 5);
    assert_int_equal(xp_spans_union(points, 3), 0);
    assert_int_equal(xp_spans_sum(points, 3), 0);
    /* Clipped to the step [2, 10]: [2,10] only. */
    assert_int_equal(xp_spans_union_within(clip, 3, 2, 10), 8);
    assert_int_equal(xp_span_overlap((struct xp_span){0, 10}, (struct xp_span){8, 12}), 2);
    assert_int_equal(xp_span_overlap((struct xp_span){0, 5}, (struct xp_span){5, 9}), 0);
    assert_true(xp_span_includes((struct xp_span){0, 5}, (struct xp_span){5, 5}));
    assert_false(xp_span_includes((struct xp_span){0, 5}, (struct xp_span){4, 6}));
}

/* Step [0,10] with children [2,7] and [8,12] (crossing the step's end). */
static void test_intervals_nest_issue_step(void **state)
{
    struct xp_span v[] = {{2, 7}, {8, 12}};
    struct xp_nest_node out[2];
    struct xp_nest_work w = XP_NEST_WORK_INIT;
    int64_t root = -1;

    assert_int_equal(xp_nest(v, 2, (struct xp_span){0, 10}, &w, out, &root), 0);
    assert_int_equal(out[0].parent, XP_NEST_ROOT);
    assert_int_equal(out[1].parent, XP_NEST_ROOT);
    assert_int_equal(out[0].depth, 1);
    /* Children inside the step: [2,7] and [8,10] -> 7; unattributed 3. */
    assert_int_equal(root, 7);
    assert_int_equal(out[0].overlap_ps, 0);
    assert_int_equal(out[1].overlap_ps, 0);
    xp_nest_work_release(&w);
}

/* Overlapping siblings [0,6] and [4,9] inside [0,10], with [5,6] inside the first
 * ... no: [5,6] is inside both; it hangs from the latest one containing it. */
static void test_intervals_nest_overlap(void **state)
{
    struct xp_span v[] = {{0, 6}, {4, 9}, {5, 6}, {9, 9}};
    struct xp_nest_node out[4];
    struct xp_nest_work w = XP_NEST_WORK_INIT;
    int64_t root;

    assert_int_equal(xp_nest(v, 4, (struct xp_span){0, 10}, &w, out, &root), 0);
    assert_int_equal(out[0].parent, XP_NEST_ROOT);
    assert_int_equal(out[1].parent, XP_NEST_ROOT);
    assert_int_equal(out[2].parent, 1);
    assert_int_equal(out[2].depth, 2);
    assert_int_equal(out[3].parent, 1); /* zero length at the end of [4,9] */
    assert_int_equal(out[0].overlap_ps, 2);
    assert_int_equal(out[1].overlap_ps, 2);
    assert_int_equal(out[1].children_ps, 1);
    assert_int_equal(root, 9);
    xp_nest_work_release(&w);
}

/* 100,000 nested spans: iterative, depth grows to n, each has one child. */
static void test_intervals_nest_deep(void **state)
{
    uint32_t n = 100000, i;
    struct xp_span *v = malloc(n * sizeof(*v));
    struct xp_nest_node *out = malloc(n * sizeof(*out));
    struct xp_nest_work w = XP_NEST_WORK_INIT;
    int64_t root;

    assert_non_null(v);
    assert_non_null(out);
    for (i = 0; i < n; i++)
        v[i] = (struct xp_span){i, 2 * (int64_t)n - i};
    assert_int_equal(xp_nest(v, n, (struct xp_span){0, 2 * (int64_t)n}, &w, out, &root), 0);
    assert_int_equal(root, 2 * (int64_t)n);
    for (i = 1; i < n; i++) {
        assert_int_equal(out[i].parent, i - 1);
        assert_int_equal(out[i].depth, i + 1);
    }
    for (i = 0; i + 1 < n; i++)
        assert_int_equal(out[i].children_ps, 2 * (int64_t)n - 2 * (i + 1));
    assert_int_equal(out[n - 1].children_ps, 0);
    xp_nest_work_release(&w);
    free(v);
    free(out);
}

/* Brute force over unit cells: endpoints are small integers. */
#define GRID 40

static int64_t cover_count(const struct xp_span *v, const int *in, int n, int64_t lo, int64_t hi)
{
    int64_t t, total = 0;
    int k;

    for (t = lo; t < hi; t++) {
        for (k = 0; k < n; k++) {
            if (in[k] && v[k].lo <= t && t + 1 <= v[k].hi) {
                total++;
                break;
            }
        }
    }
    return total;
}

static void check_random(unsigned seed, int n)
{
    struct xp_span v[64], root = {2, GRID - 2};
    struct xp_nest_node out[64];
    struct xp_nest_work w = XP_NEST_WORK_INIT;
    uint32_t parent[64];
    int in[64], i, j;
    int64_t got_root, want_root;

    srand(seed);
    for (i = 0; i < n; i++) {
        int64_t a = rand() % GRID, len = rand() % 3 == 0 ? 0 : rand() % (GRID / 2);
        v[i] = (struct xp_span){a, a + len};
    }
    xp_spans_sort(v, (size_t)n);
    assert_int_equal(xp_nest(v, (uint32_t)n, root, &w, out, &got_root), 0);
    /* Parent: the latest earlier span that contains it. */
    for (i = 0; i < n; i++) {
        parent[i] = XP_NEST_ROOT;
        for (j = i - 1; j >= 0; j--) {
            if (xp_span_includes(v[j], v[i])) {
                parent[i] = (uint32_t)j;
                break;
            }
        }
        assert_int_equal(out[i].parent, parent[i]);
    }
    for (i = 0; i < n; i++) {
        uint32_t want_depth = parent[i] == XP_NEST_ROOT ? 1 : out[parent[i]].depth + 1;
        int64_t want_children, want_overlap;
        assert_int_equal(out[i].depth, want_depth);
        for (j = 0; j < n; j++)
            in[j] = parent[j] == (uint32_t)i;
        want_children = cover_count(v, in, n, v[i].lo, v[i].hi);
        assert_int_equal(out[i].children_ps, want_children);
        for (j = 0; j < n; j++)
            in[j] = j != i && parent[j] == parent[i];
        want_overlap = cover_count(v, in, n, v[i].lo, v[i].hi);
        assert_int_equal(out[i].overlap_ps, want_overlap);
    }
    for (j = 0; j < n; j++)
        in[j] = parent[j] == XP_NEST_ROOT;
    want_root = cover_count(v, in, n, root.lo, root.hi);
    assert_int_equal(got_root, want_root);
    xp_nest_work_release(&w);
}

static void test_intervals_nest_brute_force(void **state)
{
    unsigned seed;

    for (seed = 1; seed <= 3000; seed++)
        check_random(seed, 1 + (int)(seed % 40));
}

/* Union against the brute force, too. */
static void test_intervals_union_brute_force(void **state)
{
    struct xp_span v[32];
    int in[32], i, n;
    unsigned seed;

    for (seed = 1; seed <= 500; seed++) {
        srand(seed);
        n = 1 + (int)(seed % 30);
        for (i = 0; i < n; i++) {
            int64_t a = rand() % GRID;
            v[i] = (struct xp_span){a, a + rand() % 10};
            in[i] = 1;
        }
        assert_int_equal(xp_spans_union_within(v, (size_t)n, 5, 30), cover_count(v, in, n, 5, 30));
        assert_int_equal(xp_spans_union(v, (size_t)n), cover_count(v, in, n, 0, 2 * GRID));
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_intervals_issue_example),
        cmocka_unit_test(test_intervals_union_edges),
        cmocka_unit_test(test_intervals_nest_issue_step),
        cmocka_unit_test(test_intervals_nest_overlap),
        cmocka_unit_test(test_intervals_nest_deep),
        cmocka_unit_test(test_intervals_nest_brute_force),
        cmocka_unit_test(test_intervals_union_brute_force),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
