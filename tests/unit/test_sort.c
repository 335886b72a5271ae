/*
 * test_sort.c - xp_sort_runs against qsort on random, run-structured and
 * already-sorted arrays, its stability, and xp_qsort on empty arrays.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "sort.h"

struct item {
    int key;   /* sort key */
    int order; /* position before sorting, to check stability */
};

static int by_key(const void *a, const void *b, void *ctx)
{
    const struct item *x = a, *y = b;
    (void)ctx;
    return (x->key > y->key) - (x->key < y->key);
}

static int by_key_then_order(const void *a, const void *b)
{
    const struct item *x = a, *y = b;
    if (x->key != y->key)
        return (x->key > y->key) - (x->key < y->key);
    return (x->order > y->order) - (x->order < y->order);
}

static void check(size_t n, int runs, unsigned seed)
{
    struct item *v = malloc(n * sizeof(*v)), *ref = malloc(n * sizeof(*ref));
    size_t i;

    srand(seed);
    for (i = 0; i < n; i++) {
        /* runs > 0: that many ascending runs; keys repeat to test ties */
        v[i].key = runs > 0 ? (int)((i % (n / (size_t)runs + 1)) / 3) : rand() % 50;
        v[i].order = (int)i;
    }
    memcpy(ref, v, n * sizeof(*v));
    xp_qsort(ref, n, sizeof(*ref), by_key_then_order); /* stable order by construction */
    assert_int_equal(xp_sort_runs(v, n, sizeof(*v), by_key, NULL), 0);
    for (i = 0; i < n; i++) {
        assert_int_equal(v[i].key, ref[i].key);
        assert_int_equal(v[i].order, ref[i].order);
    }
    free(v);
    free(ref);
}

static void test_sort_runs(void **state)
{
    (void)state;
    check(1, 0, 1);
    check(2, 0, 2);
    check(1000, 0, 3);
    check(100000, 0, 4);
    check(100000, 7, 5);
    check(100000, 1, 6);
    check(3, 3, 7);
    assert_int_equal(xp_sort_runs(NULL, 0, sizeof(struct item), by_key, NULL), 0);
}

static void test_qsort_empty(void **state)
{
    (void)state;
    xp_qsort(NULL, 0, sizeof(struct item), by_key_then_order);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sort_runs),
        cmocka_unit_test(test_qsort_empty),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
