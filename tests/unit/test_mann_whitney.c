/*
 * test_mann_whitney.c - the Mann-Whitney U test against values worked out
 * by hand from its definition (and R's wilcox.test(exact = FALSE)).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <math.h>

#include "base/mann_whitney.h"

/* {1,2,3} against {4,5,6}: U1 = 0, U2 = 9, mu = 4.5, sigma^2 = 9/12 * 7;
 * z = (9 - 4.5 - 0.5) / sqrt(5.25); R: W = 0, p-value = 0.08086. */
static void test_separated(void **state)
{
    const double a[] = {1, 2, 3}, b[] = {4, 5, 6};
    struct mw_result r;

    (void)state;
    assert_int_equal(mann_whitney(a, 3, b, 3, &r), 0);
    assert_true(r.u == 0);
    assert_true(fabs(r.z - 4.0 / sqrt(5.25)) < 1e-12);
    assert_true(fabs(r.p - erfc(4.0 / sqrt(5.25) / sqrt(2))) < 1e-12);
    assert_true(fabs(r.p - 0.08086) < 5e-6);
    /* swapped: the same p, U of the other side */
    assert_int_equal(mann_whitney(b, 3, a, 3, &r), 0);
    assert_true(r.u == 9);
    assert_true(fabs(r.p - 0.08086) < 5e-6);
}

/* {1,2,2} against {2,3,3,4}: pooled ranks 1, 3,3,3 (the three 2s), 5.5,5.5
 * (the 3s), 7; R1 = 1 + 3 + 3 = 7, U1 = 7 - 6 = 1, U2 = 11; ties: the 2s
 * (27 - 3 = 24) and the 3s (8 - 2 = 6), 30 / (7 * 6); sigma^2 = 12/12 *
 * (8 - 30/42); z = (11 - 6 - 0.5) / sigma. */
static void test_ties(void **state)
{
    const double a[] = {1, 2, 2}, b[] = {2, 3, 3, 4};
    double sigma = sqrt(8 - 30.0 / 42), z = 4.5 / sigma;
    struct mw_result r;

    (void)state;
    assert_int_equal(mann_whitney(a, 3, b, 4, &r), 0);
    assert_true(r.u == 1);
    assert_true(fabs(r.z - z) < 1e-12);
    assert_true(fabs(r.p - erfc(z / sqrt(2))) < 1e-12);
}

/* Every value equal: no evidence of a difference, p = 1. Identical samples
 * of distinct values: U1 = U2, z = -0.5 / sigma, p capped at 1. */
static void test_no_difference(void **state)
{
    const double a[] = {5, 5, 5}, b[] = {5, 5}, c[] = {1, 2, 3, 4};
    struct mw_result r;

    (void)state;
    assert_int_equal(mann_whitney(a, 3, b, 2, &r), 0);
    assert_true(r.p == 1);
    assert_int_equal(mann_whitney(c, 4, c, 4, &r), 0);
    assert_true(r.u == 8);
    assert_true(r.p == 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_separated),
        cmocka_unit_test(test_ties),
        cmocka_unit_test(test_no_difference),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
