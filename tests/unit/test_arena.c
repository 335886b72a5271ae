/*
 * test_arena.c - the bump allocator: alignment, copies, blocks that start
 * small and double (an arena per thread of a 20,000-thread profile must not
 * hold a quarter MiB each), big allocations beside the current block.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <string.h>

#include "base/arena.h"

static void test_small_arena_stays_small(void **state)
{
    struct arena a;
    char *s;

    (void)state;
    arena_init(&a);
    s = arena_strndup(&a, "thread 7", 6);
    assert_non_null(s);
    assert_string_equal(s, "thread");
    assert_true(a.total <= 256);
    arena_free(&a);
    assert_int_equal(a.total, 0);
}

static void test_alignment_and_growth(void **state)
{
    struct arena a;
    size_t i, asked = 0;

    (void)state;
    arena_init(&a);
    for (i = 0; i < 20000; i++) {
        size_t n = 1 + i % 97;
        unsigned char *p = arena_alloc(&a, n);
        assert_non_null(p);
        assert_int_equal((uintptr_t)p % 16, 0);
        memset(p, 0xab, n);
        asked += (n + 15) & ~(size_t)15;
    }
    /* doubling blocks up to 256 KiB: at most a block's worth of slack */
    assert_true(a.total >= asked);
    assert_true(a.total <= asked + 256 * 1024 + 256);
    arena_free(&a);
}

static void test_big_allocation_keeps_current_block(void **state)
{
    struct arena a;
    char *small1, *big, *small2;

    (void)state;
    arena_init(&a);
    small1 = arena_alloc(&a, 16);
    big = arena_alloc(&a, 100000);
    small2 = arena_alloc(&a, 16);
    assert_non_null(small1);
    assert_non_null(big);
    assert_non_null(small2);
    memset(big, 1, 100000);
    /* the big one got a block of its own; the small ones share the first */
    assert_ptr_equal(small2, small1 + 16);
    assert_true(a.total >= 100000 + 256);
    arena_free(&a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_small_arena_stays_small),
        cmocka_unit_test(test_alignment_and_growth),
        cmocka_unit_test(test_big_allocation_keeps_current_block),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
