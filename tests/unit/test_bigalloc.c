/*
 * test_bigalloc.c - big arrays: contents survive growth and shrinking across
 * the mapping threshold, calloc'd blocks read zero, big blocks get their own
 * mapping (checked in /proc/self/maps by address); while the pool is held a
 * freed mapping's pages make the next block (no page faults to touch it),
 * a block made of several pooled ranges grows and shrinks with its
 * contents, and the last release unmaps the pool.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <pthread.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>

#include "base/bigalloc.h"

#define MIB ((size_t)1 << 20)

/* Fill n words with a pattern that depends on the index. */
static void fill(uint32_t *v, size_t n)
{
    size_t i;

    for (i = 0; i < n; i++)
        v[i] = (uint32_t)(i * 2654435761u);
}

/* 1 if the first n words still hold fill's pattern. */
static int holds(const uint32_t *v, size_t n)
{
    size_t i;

    for (i = 0; i < n; i++) {
        if (v[i] != (uint32_t)(i * 2654435761u))
            return 0;
    }
    return 1;
}

#ifndef __SANITIZE_ADDRESS__
/* 1 if addr lies in a mapping of /proc/self/maps at least len long. */
static int in_own_mapping(const void *addr, size_t len)
{
    FILE *f = fopen("/proc/self/maps", "r");
    char line[512];
    int found = 0;

    assert_non_null(f);
    while (fgets(line, sizeof(line), f) != NULL) {
        unsigned long lo, hi;
        if (sscanf(line, "%lx-%lx", &lo, &hi) != 2)
            continue;
        if ((uintptr_t)addr >= lo && (uintptr_t)addr < hi && hi - lo >= len)
            found = 1;
    }
    fclose(f);
    return found;
}
#endif

static void test_small_and_big(void **state)
{
    size_t small = 1000, big = XP_BIG_ALLOC / sizeof(uint32_t) + 12345;
    uint32_t *a = big_malloc(small * sizeof(uint32_t));
    uint32_t *b = big_malloc(big * sizeof(uint32_t));

    (void)state;
    assert_non_null(a);
    assert_non_null(b);
    /* Data keeps malloc's alignment; a mapping's is 64 bytes. */
    assert_int_equal((uintptr_t)a % 16, 0);
    assert_int_equal((uintptr_t)b % 64, 0);
    fill(a, small);
    fill(b, big);
    assert_true(holds(a, small));
    assert_true(holds(b, big));
#ifndef __SANITIZE_ADDRESS__
    /* (Under ASan every block comes from malloc.) */
    assert_true(in_own_mapping(b, big * sizeof(uint32_t)));
#endif
    big_free(a);
    big_free(b);
    big_free(NULL);
}

static void test_calloc_zero(void **state)
{
    size_t sizes[] = {1, 4096, XP_BIG_ALLOC + 1, 3 * XP_BIG_ALLOC};
    size_t k, i;

    (void)state;
    for (k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++) {
        unsigned char *p = big_calloc(sizes[k], 1);
        assert_non_null(p);
        for (i = 0; i < sizes[k]; i += 997)
            assert_int_equal(p[i], 0);
        assert_int_equal(p[sizes[k] - 1], 0);
        big_free(p);
    }
    /* n * size overflowing is refused. */
    assert_null(big_calloc(SIZE_MAX / 2, 4));
}

static void test_realloc_keeps_contents(void **state)
{
    size_t n = 100, limit = 4 * XP_BIG_ALLOC / sizeof(uint32_t);
    uint32_t *v = big_realloc(NULL, n * sizeof(uint32_t));

    (void)state;
    assert_non_null(v);
    fill(v, n);
    /* Grow by doubling through the threshold (malloc -> mapping -> mremap). */
    while (n < limit) {
        size_t m = n * 2;
        v = big_realloc(v, m * sizeof(uint32_t));
        assert_non_null(v);
        assert_true(holds(v, n));
        fill(v, m);
        n = m;
    }
    /* Shrink inside the mappings, then back under the threshold. */
    v = big_realloc(v, (XP_BIG_ALLOC + 64));
    assert_non_null(v);
    assert_true(holds(v, (XP_BIG_ALLOC + 64) / sizeof(uint32_t)));
    v = big_realloc(v, 4096);
    assert_non_null(v);
    assert_true(holds(v, 1024));
    big_free(v);
}

#ifndef __SANITIZE_ADDRESS__
static long minor_faults(void)
{
    struct rusage r;

    assert_int_equal(getrusage(RUSAGE_SELF, &r), 0);
    return r.ru_minflt;
}

/* 1 if the page holding p is not mapped any more. */
static int unmapped(const void *p)
{
    unsigned char v[1];
    uintptr_t page = (uintptr_t)p & ~(uintptr_t)4095;

    return mincore((void *)page, 4096, v) != 0;
}

static void test_pool_reuses_pages(void **state)
{
    size_t n = 64 * MIB;
    unsigned char *a, *b;
    long before;
    size_t i;

    (void)state;
    big_pool_hold();
    a = big_malloc(n);
    assert_non_null(a);
    memset(a, 0xab, n);
    big_free(a);
    assert_true(big_pool_bytes() >= n);
    /* Fresh, 64 MiB take at least 32 faults (huge pages) and 16,384
     * without; pooled pages are moved in, present already. */
    before = minor_faults();
    b = big_calloc(n, 1);
    assert_non_null(b);
    for (i = 0; i < n; i += 4096)
        assert_int_equal(b[i], 0);
    assert_int_equal(b[n - 1], 0);
    assert_true(minor_faults() - before < 8);
    assert_int_equal(big_pool_bytes(), 0);
    big_free(b);
    big_pool_release();
    assert_int_equal(big_pool_bytes(), 0);
    assert_true(unmapped(b));
}

static void test_pool_pieces_grow_and_shrink(void **state)
{
    size_t piece = 40 * MIB / sizeof(uint32_t), n = 100 * MIB / sizeof(uint32_t);
    uint32_t *a, *b, *v;

    (void)state;
    big_pool_hold();
    a = big_malloc(piece * sizeof(uint32_t));
    b = big_malloc(piece * sizeof(uint32_t));
    assert_non_null(a);
    assert_non_null(b);
    fill(a, piece);
    fill(b, piece);
    big_free(a);
    big_free(b);
    /* Both ranges and fresh pages after them, several mappings. */
    v = big_malloc(n * sizeof(uint32_t));
    assert_non_null(v);
    assert_int_equal(big_pool_bytes(), 0);
    fill(v, n);
    v = big_realloc(v, 2 * n * sizeof(uint32_t));
    assert_non_null(v);
    assert_true(holds(v, n));
    fill(v, 2 * n);
    v = big_realloc(v, n / 2 * sizeof(uint32_t));
    assert_non_null(v);
    assert_true(holds(v, n / 2));
    big_free(v);
    big_pool_release();
}

static void test_pool_release(void **state)
{
    unsigned char *a, *small;

    (void)state;
    /* Not held: a free unmaps. */
    a = big_malloc(40 * MIB);
    assert_non_null(a);
    memset(a, 1, 40 * MIB);
    big_free(a);
    assert_int_equal(big_pool_bytes(), 0);
    /* Held twice: the pool lives until the second release. */
    big_pool_hold();
    big_pool_hold();
    a = big_malloc(40 * MIB);
    small = big_malloc(4 * MIB);
    assert_non_null(a);
    assert_non_null(small);
    memset(a, 1, 40 * MIB);
    big_free(small); /* under the pool's size: unmapped */
    assert_int_equal(big_pool_bytes(), 0);
    big_free(a);
    assert_true(big_pool_bytes() >= 40 * MIB);
    big_pool_release();
    assert_true(big_pool_bytes() >= 40 * MIB);
    big_pool_release();
    assert_int_equal(big_pool_bytes(), 0);
    assert_true(unmapped(a));
    /* More releases than holds change nothing. */
    big_pool_release();
    assert_int_equal(big_pool_bytes(), 0);
}

/* One thread's blocks: made, grown, shrunk and freed at random, each
 * checked before it changes (one word a MiB, a pattern of its thread). */
#define THREAD_BLOCKS 3
static void *pool_worker(void *arg)
{
    unsigned seed = (unsigned)(uintptr_t)arg * 7919u;
    uint32_t tag = (uint32_t)(uintptr_t)arg << 24;
    uint32_t *v[THREAD_BLOCKS] = {0};
    size_t n[THREAD_BLOCKS] = {0}, i, step = MIB / sizeof(uint32_t);
    int it, k, bad = 0;

    for (it = 0; it < 300 && !bad; it++) {
        size_t m = (32 + (size_t)(rand_r(&seed) % 33)) * MIB / sizeof(uint32_t);
        int op = rand_r(&seed) % 3;
        k = rand_r(&seed) % THREAD_BLOCKS;
        for (i = 0; i < n[k]; i += step)
            bad |= v[k][i] != (tag | (uint32_t)i);
        if (op == 0 || v[k] == NULL) {
            big_free(v[k]);
            v[k] = big_malloc(m * sizeof(uint32_t));
            n[k] = m;
        } else if (op == 1) {
            v[k] = big_realloc(v[k], m * sizeof(uint32_t));
            n[k] = n[k] < m ? n[k] : m;
        } else {
            big_free(v[k]);
            v[k] = NULL;
            n[k] = 0;
        }
        bad |= n[k] > 0 && v[k] == NULL;
        for (i = 0; !bad && i < n[k]; i += step)
            v[k][i] = tag | (uint32_t)i;
    }
    for (k = 0; k < THREAD_BLOCKS; k++)
        big_free(v[k]);
    return bad ? arg : NULL;
}

/* Threads making and freeing blocks from one pool at once: a block grown
 * out of pooled ranges is moved to a new mapping while other threads map
 * theirs (unmapping the old addresses after the move, not before, crashed
 * this every time: checked). */
static void test_pool_threads(void **state)
{
    pthread_t t[3];
    void *ret;
    size_t i;

    (void)state;
    big_pool_hold();
    for (i = 0; i < 3; i++)
        assert_int_equal(pthread_create(&t[i], NULL, pool_worker, (void *)(uintptr_t)(i + 1)), 0);
    for (i = 0; i < 3; i++) {
        assert_int_equal(pthread_join(t[i], &ret), 0);
        assert_null(ret);
    }
    big_pool_release();
    assert_int_equal(big_pool_bytes(), 0);
}
#endif

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_small_and_big),
        cmocka_unit_test(test_calloc_zero),
        cmocka_unit_test(test_realloc_keeps_contents),
#ifndef __SANITIZE_ADDRESS__
        cmocka_unit_test(test_pool_reuses_pages),
        cmocka_unit_test(test_pool_pieces_grow_and_shrink),
        cmocka_unit_test(test_pool_release),
        cmocka_unit_test(test_pool_threads),
#endif
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
