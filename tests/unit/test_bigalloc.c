/*
 * test_bigalloc.c - big arrays: contents survive growth and shrinking across
 * the mapping threshold, calloc'd blocks read zero, big blocks get their own
 * mapping (checked in /proc/self/maps by address).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bigalloc.h"

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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_small_and_big),
        cmocka_unit_test(test_calloc_zero),
        cmocka_unit_test(test_realloc_keeps_contents),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
