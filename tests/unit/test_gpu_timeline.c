/*
 * test_gpu_timeline.c - TraceLens's interval algebra and metrics, name
 * classification, CPython set order and the float text, against hand-checked
 * values and a brute-force unit-grid measure on random intervals.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpu_timeline.h"

static void test_merge_touching(void **state)
{
    struct gt_interval v[] = {{5, 7}, {0, 2}, {2, 3}, {6, 9}, {10, 11}};
    size_t n;

    (void)state;
    n = gt_merge(v, 5);
    assert_int_equal(n, 3); /* [0,3] (touching merge), [5,9], [10,11] */
    assert_true(v[0].start == 0 && v[0].end == 3);
    assert_true(v[1].start == 5 && v[1].end == 9);
    assert_true(v[2].start == 10 && v[2].end == 11);
    assert_true(gt_length(v, n) == 8);
}

static void test_subtract(void **state)
{
    struct gt_interval a[] = {{1, 2}, {4, 6}};
    struct gt_interval b[] = {{0, 5}, {5.5, 8}};
    struct gt_interval out[8];
    size_t n;

    (void)state;
    n = gt_subtract(a, 2, b, 2, out);
    /* [0,5] minus a -> [0,1], [2,4]; [5.5,8] minus a -> [6,8] */
    assert_int_equal(n, 3);
    assert_true(out[0].start == 0 && out[0].end == 1);
    assert_true(out[1].start == 2 && out[1].end == 4);
    assert_true(out[2].start == 6 && out[2].end == 8);
}

/* Hand-checked example: comp [0,10]; comm [5,15]; memcpy [12,20] and [30,31]. */
static void test_metrics_example(void **state)
{
    struct gt_interval comp[] = {{0, 10}}, comm[] = {{5, 15}}, mem[] = {{30, 31}, {12, 20}};
    struct gt_interval *cls[3] = {comp, comm, mem};
    size_t n[3] = {1, 1, 2};
    double m[GT_NMETRICS];

    (void)state;
    assert_int_equal(gt_metrics(cls, n, m), 0);
    assert_true(m[GT_COMPUTATION_TIME] == 10);
    assert_true(m[GT_TOTAL_COMM_TIME] == 10);
    assert_true(m[GT_EXPOSED_COMM_TIME] == 5);   /* [10,15] */
    assert_true(m[GT_TOTAL_MEMCPY_TIME] == 9);   /* 8 + 1 */
    assert_true(m[GT_EXPOSED_MEMCPY_TIME] == 6); /* [15,20] + [30,31] */
    assert_true(m[GT_BUSY_TIME] == 21);          /* [0,20] + [30,31] */
    assert_true(m[GT_TOTAL_TIME] == 31);
    assert_true(m[GT_IDLE_TIME] == 10);
}

static void test_metrics_empty(void **state)
{
    struct gt_interval *cls[3] = {NULL, NULL, NULL};
    size_t n[3] = {0, 0, 0};
    double m[GT_NMETRICS];

    (void)state;
    assert_int_equal(gt_metrics(cls, n, m), -EINVAL);
}

/* Random integer intervals: compare with a measure on a unit grid. */
static void test_metrics_random(void **state)
{
    enum { GRID = 400, N = 60 };
    unsigned seed = 12345;
    int round;

    (void)state;
    for (round = 0; round < 200; round++) {
        struct gt_interval v[3][N], *cls[3] = {v[0], v[1], v[2]};
        size_t n[3];
        unsigned char cover[3][GRID];
        double m[GT_NMETRICS], expect_comp = 0, expect_xcomm = 0, expect_xmem = 0, busy = 0;
        int c, i, lo = GRID, hi = 0;

        memset(cover, 0, sizeof(cover));
        for (c = 0; c < 3; c++) {
            n[c] = (size_t)(rand_r(&seed) % (N / 2));
            for (i = 0; i < (int)n[c]; i++) {
                int s = rand_r(&seed) % (GRID - 40), d = rand_r(&seed) % 40, k;
                v[c][i].start = s;
                v[c][i].end = s + d;
                for (k = s; k < s + d; k++)
                    cover[c][k] = 1;
                if (s < lo)
                    lo = s;
                if (s + d > hi)
                    hi = s + d;
            }
        }
        if (n[0] + n[1] + n[2] == 0)
            continue;
        for (i = 0; i < GRID; i++) {
            expect_comp += cover[0][i];
            expect_xcomm += cover[1][i] && !cover[0][i];
            expect_xmem += cover[2][i] && !cover[0][i] && !cover[1][i];
            busy += cover[0][i] || cover[1][i] || cover[2][i];
        }
        assert_int_equal(gt_metrics(cls, n, m), 0);
        assert_true(m[GT_COMPUTATION_TIME] == expect_comp);
        assert_true(m[GT_EXPOSED_COMM_TIME] == expect_xcomm);
        assert_true(m[GT_EXPOSED_MEMCPY_TIME] == expect_xmem);
        assert_true(m[GT_BUSY_TIME] == busy);
        assert_true(m[GT_TOTAL_TIME] == hi - lo);
        assert_true(fabs(m[GT_COMPUTATION_TIME] + m[GT_EXPOSED_COMM_TIME] +
                         m[GT_EXPOSED_MEMCPY_TIME] + m[GT_IDLE_TIME] - m[GT_TOTAL_TIME]) < 1e-6);
    }
}

static void test_classify(void **state)
{
    (void)state;
    assert_int_equal(gt_classify_jax("CopyDeviceToDevice"), GT_MEMCPY);
    assert_int_equal(gt_classify_jax("MemcpyH2D"), GT_MEMCPY);
    assert_int_equal(gt_classify_jax("Memset"), GT_MEMCPY);
    assert_int_equal(gt_classify_jax("void rcclGenericKernel<1>"), GT_COMMUNICATION);
    assert_int_equal(gt_classify_jax("ncclDevKernel_AllReduce"), GT_COMMUNICATION);
    assert_int_equal(gt_classify_jax("Cross_Device_Reduce_1stage"), GT_COMMUNICATION);
    assert_int_equal(gt_classify_jax("input_transpose_fusion"), GT_COMPUTATION);
    assert_int_equal(gt_classify_pytorch("gpu_memcpy", "x"), GT_MEMCPY);
    assert_int_equal(gt_classify_pytorch("gpu_memset", "Memset"), GT_COMPUTATION);
    assert_int_equal(gt_classify_pytorch("kernel", "__amd_rocclr_copyBufferRectAligned.kd"),
                     GT_MEMCPY);
    assert_int_equal(gt_classify_pytorch("kernel", "MEMORY_COPY_HOST_TO_DEVICE"), GT_MEMCPY);
    assert_int_equal(gt_classify_pytorch("kernel", "MEMORY_COPY_HOST_TO_DEVICEx"), GT_COMPUTATION);
    assert_int_equal(gt_classify_pytorch("kernel", "__amd_rocclr_fillBufferAligned"),
                     GT_COMPUTATION);
    assert_int_equal(gt_classify_pytorch("kernel", "ncclKernel"), GT_COMMUNICATION);
}

static void test_pyset_order(void **state)
{
    int64_t out[64];
    int64_t a[] = {1, 8}, b[] = {1, 9}, c[] = {9, 1}, d[] = {1, 2, 3, 4, 5, 6, 7, 8};
    int64_t e[] = {8, 1, 8};

    (void)state;
    /* Values checked with CPython 3.11: list({1, 8}) == [8, 1], etc. */
    assert_int_equal(gt_pyset_order(a, 2, out), 2);
    assert_true(out[0] == 8 && out[1] == 1);
    gt_pyset_order(b, 2, out);
    assert_true(out[0] == 1 && out[1] == 9);
    gt_pyset_order(c, 2, out);
    assert_true(out[0] == 9 && out[1] == 1);
    assert_int_equal(gt_pyset_order(d, 8, out), 8); /* resized to 32 slots: ascending */
    assert_true(out[0] == 1 && out[7] == 8);
    assert_int_equal(gt_pyset_order(e, 3, out), 2);
    assert_true(out[0] == 8 && out[1] == 1);
}

static void test_pyrepr(void **state)
{
    char buf[64];

    (void)state;
    gt_pyrepr(0.0, buf, sizeof(buf));
    assert_string_equal(buf, "0.0");
    gt_pyrepr(100.0, buf, sizeof(buf));
    assert_string_equal(buf, "100.0");
    gt_pyrepr(1950.96, buf, sizeof(buf));
    assert_string_equal(buf, "1950.96");
    gt_pyrepr(15761.300999999978 / 1e3, buf, sizeof(buf));
    assert_string_equal(buf, "15.76130099999998");
    gt_pyrepr(1e-05, buf, sizeof(buf));
    assert_string_equal(buf, "1e-05");
    gt_pyrepr(0.0001, buf, sizeof(buf));
    assert_string_equal(buf, "0.0001");
    gt_pyrepr(1e16, buf, sizeof(buf));
    assert_string_equal(buf, "1e+16");
    gt_pyrepr(-2.5, buf, sizeof(buf));
    assert_string_equal(buf, "-2.5");
    gt_pyrepr(0.06926099999999999, buf, sizeof(buf));
    assert_string_equal(buf, "0.06926099999999999");
}

/* Random values: the text reads back as the value and no shorter precision
 * would (the fast path for thousandths agrees with the general search). */
static void test_pyrepr_random(void **state)
{
    unsigned seed = 99;
    int i;

    (void)state;
    for (i = 0; i < 20000; i++) {
        char buf[64], tmp[64];
        double v;
        int digits = 0, k, p;
        if (i % 2)
            v = (double)((long long)rand_r(&seed) * 977 % 2000000000000LL) / 1000;
        else
            v = (double)rand_r(&seed) / (double)(rand_r(&seed) + 1) * 1e3;
        gt_pyrepr(v, buf, sizeof(buf));
        for (k = 0; buf[k] != 0 && buf[k] != 'e'; k++)
            digits += buf[k] >= '0' && buf[k] <= '9';
        for (p = 1; p <= 17; p++) {
            snprintf(tmp, sizeof(tmp), "%.*e", p - 1, v);
            if (strtod(tmp, NULL) == v)
                break;
        }
        if (p <= 16) {
            assert_true(strtod(buf, NULL) == v);
            /* as many significant digits as the shortest form (leading
             * "0." zeros and trailing ".0" do not count) */
            snprintf(tmp, sizeof(tmp), "%.*e", p - 1, v);
            assert_true(strtod(buf, NULL) == strtod(tmp, NULL));
            assert_true(digits <= p + 6);
        } else {
            snprintf(tmp, sizeof(tmp), "%.15e", v);
            assert_true(strtod(buf, NULL) == strtod(tmp, NULL));
        }
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_merge_touching),  cmocka_unit_test(test_subtract),
        cmocka_unit_test(test_metrics_example), cmocka_unit_test(test_metrics_empty),
        cmocka_unit_test(test_metrics_random),  cmocka_unit_test(test_classify),
        cmocka_unit_test(test_pyset_order),     cmocka_unit_test(test_pyrepr),
        cmocka_unit_test(test_pyrepr_random),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
