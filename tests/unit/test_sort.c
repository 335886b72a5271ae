/*
 * test_sort.c - xp_sort_runs against qsort on random, run-structured and
 * already-sorted arrays, its stability, xp_sort_u32 (both of its ways) and
 * xp_qsort on empty arrays.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "base/sort.h"

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

static int u64_cmp(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

/* xp_sort_runs_u64 against qsort: random keys (full 64-bit range, ties),
 * run-structured, sorted and descending arrays. */
static void test_sort_runs_u64(void **state)
{
    size_t sizes[] = {0, 1, 2, 3, 17, 1000, 100000}, s, i;
    unsigned seed = 7;

    (void)state;
    for (s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++) {
        size_t n = sizes[s];
        for (int shape = 0; shape < 4; shape++) {
            uint64_t *v = malloc((n ? n : 1) * sizeof(*v)), *ref = malloc((n ? n : 1) * sizeof(*v));
            for (i = 0; i < n; i++) {
                uint64_t r = (uint64_t)rand_r(&seed) << 40 ^ (uint64_t)rand_r(&seed) << 20 ^
                             (uint64_t)rand_r(&seed);
                v[i] = shape == 0   ? r
                       : shape == 1 ? (i % (n / 5 + 1)) / 2 + UINT64_MAX / 2
                       : shape == 2 ? i
                                    : UINT64_MAX - i;
            }
            if (n > 0)
                memcpy(ref, v, n * sizeof(*v));
            xp_qsort(ref, n, sizeof(*ref), u64_cmp);
            assert_int_equal(xp_sort_runs_u64(v, n), 0);
            if (n > 0)
                assert_memory_equal(v, ref, n * sizeof(*v));
            free(v);
            free(ref);
        }
    }
}

static int u32_ref_cmp(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

    return x < y ? -1 : x > y;
}

/* xp_sort_u32 against qsort, below and above its radix threshold: random
 * keys over the whole range (every digit of the three passes used), small
 * keys with ties, sorted and descending arrays. */
static void test_sort_u32(void **state)
{
    size_t sizes[] = {0, 1, 2, 100, 4095, 4096, 4097, 300000}, s, i;
    unsigned seed = 11;

    (void)state;
    for (s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++) {
        size_t n = sizes[s];
        for (int shape = 0; shape < 4; shape++) {
            uint32_t *v = malloc((n ? n : 1) * sizeof(*v)), *ref = malloc((n ? n : 1) * sizeof(*v));
            for (i = 0; i < n; i++) {
                uint32_t r = (uint32_t)rand_r(&seed) << 16 ^ (uint32_t)rand_r(&seed);
                v[i] = shape == 0   ? r | (i % 2 ? 0x80000000u : 0)
                       : shape == 1 ? r % 50
                       : shape == 2 ? (uint32_t)i
                                    : UINT32_MAX - (uint32_t)i;
            }
            if (n > 0)
                memcpy(ref, v, n * sizeof(*v));
            xp_qsort(ref, n, sizeof(*ref), u32_ref_cmp);
            assert_int_equal(xp_sort_u32(v, n), 0);
            if (n > 0)
                assert_memory_equal(v, ref, n * sizeof(*v));
            free(v);
            free(ref);
        }
    }
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
        cmocka_unit_test(test_sort_runs_u64),
        cmocka_unit_test(test_sort_u32),
        cmocka_unit_test(test_qsort_empty),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
