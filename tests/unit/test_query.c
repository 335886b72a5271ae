/*
 * test_query.c - `?k=v` options: decoding, type and range checks, canonical form.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <errno.h>
#include <string.h>

#include "base/query.h"

static const struct query_key keys[] = {
    {"start_time_ms", Q_DOUBLE, 0, 1e12},
    {"resolution", Q_INT, 0, 1e7},
    {"search_prefix", Q_STRING, 0, 0},
    {"full_dma", Q_BOOL, 0, 0},
    {NULL, Q_STRING, 0, 0},
};

static int parse(const char *s, struct query *q, struct xp_err *err)
{
    return query_parse(s, keys, q, err);
}

static void test_good(void **state)
{
    struct query q;
    struct xp_err err = {0};
    double v;
    char canon[256];

    (void)state;
    assert_int_equal(parse("resolution=8000&start_time_ms=1.5&search_prefix=a%2Fb+c", &q, &err), 0);
    assert_int_equal(q.n, 3);
    assert_int_equal(query_num(&q, "resolution", &v), 1);
    assert_true(v == 8000);
    assert_int_equal(query_num(&q, "start_time_ms", &v), 1);
    assert_true(v == 1.5);
    assert_string_equal(query_get(&q, "search_prefix"), "a/b c");
    assert_null(query_get(&q, "full_dma"));
    query_canonical(&q, canon, sizeof(canon));
    assert_string_equal(canon, "resolution=8000&search_prefix=a%2Fb%20c&start_time_ms=1.5");
    query_free(&q);
    assert_int_equal(parse("", &q, &err), 0);
    assert_int_equal(q.n, 0);
    assert_int_equal(parse("full_dma=true", &q, &err), 0);
    assert_int_equal(query_num(&q, "full_dma", &v), 1);
    assert_true(v == 1);
    query_free(&q);
}

static void expect_einval(const char *s, const char *reason)
{
    struct query q;
    struct xp_err err = {0};

    assert_int_equal(parse(s, &q, &err), -EINVAL);
    if (strstr(err.msg, reason) == NULL)
        fail_msg("'%s': reason '%s' does not mention '%s'", s, err.msg, reason);
}

static void test_bad(void **state)
{
    (void)state;
    expect_einval("foo=1", "unknown option 'foo'");
    expect_einval("start_time_ms=abc", "not a number");
    expect_einval("start_time_ms=nan", "not a finite number");
    expect_einval("start_time_ms=inf", "not a finite number");
    expect_einval("start_time_ms=1e400", "not a finite number");
    expect_einval("start_time_ms=-1", "out of range");
    expect_einval("start_time_ms=", "empty value");
    expect_einval("resolution=1.5", "not an integer");
    expect_einval("resolution=1&resolution=2", "given twice");
    expect_einval("full_dma=maybe", "not true or false");
    expect_einval("a%zz=1", "%-escape");
    expect_einval("search_prefix=%00", "%-escape");
    expect_einval("resolution=1&&full_dma=1", "empty option");
    expect_einval("resolution=1&", "ends with '&'");
    expect_einval("start_time_ms=0x10", "not a number");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_good),
        cmocka_unit_test(test_bad),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
