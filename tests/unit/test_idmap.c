/*
 * test_idmap.c - the int64 -> uint32 map: sized once (idmap_init +
 * idmap_put) and growing (idmap_set from a zeroed struct), checked against
 * a plain array of the keys put.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdlib.h>

#include "base/idmap.h"

/* Distinct keys over the whole int64 range, extremes included. */
static int64_t key_of(uint32_t i)
{
    if (i == 0)
        return INT64_MIN;
    if (i == 1)
        return INT64_MAX;
    if (i == 2)
        return 0;
    return (int64_t)((uint64_t)i * 0x9E3779B97F4A7C15ull) | 1;
}

static void test_sized(void **state)
{
    struct idmap m;
    uint32_t i, n = 1000;

    (void)state;
    assert_int_equal(idmap_init(&m, n), 0);
    for (i = 0; i < n; i++)
        idmap_put(&m, key_of(i), i * 3);
    idmap_put(&m, key_of(5), 7); /* overwrite */
    for (i = 0; i < n; i++)
        assert_int_equal(idmap_get(&m, key_of(i)), i == 5 ? 7 : i * 3);
    assert_int_equal(idmap_get(&m, key_of(n)), IDMAP_NONE);
    idmap_free(&m);
}

static void test_growing(void **state)
{
    struct idmap m = {0};
    uint32_t i, n = 100000;

    (void)state;
    assert_int_equal(idmap_get(&m, 42), IDMAP_NONE); /* empty, never allocated */
    for (i = 0; i < n; i++) {
        assert_int_equal(idmap_set(&m, key_of(i), i), 0);
        assert_int_equal(m.n, i + 1);
        assert_true(2 * m.n <= m.mask + 1); /* at most half full */
    }
    for (i = 0; i < n; i += 7)
        assert_int_equal(idmap_set(&m, key_of(i), 0), 0); /* overwrites count once */
    assert_int_equal(m.n, n);
    for (i = 0; i < n; i++)
        assert_int_equal(idmap_get(&m, key_of(i)), i % 7 == 0 ? 0 : i);
    for (i = n; i < n + 1000; i++)
        assert_int_equal(idmap_get(&m, key_of(i)), IDMAP_NONE);
    idmap_free(&m);
    assert_int_equal(m.n, 0);
    assert_int_equal(idmap_get(&m, key_of(3)), IDMAP_NONE);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sized),
        cmocka_unit_test(test_growing),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
