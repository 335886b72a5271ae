/*
 * test_gpu_timeline.c - TraceLens's interval algebra and metrics, name
 * classification, CPython set order and the float text, against hand-checked
 * values, a brute-force unit-grid measure on random intervals, and (for the
 * float text) the former printf/strtod implementation kept here as the oracle,
 * on edge cases and half a million values of the shapes the tables print
 * (XPROFS_PYREPR_N=1000000 makes it 32 million).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <errno.h>
#include <float.h>
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

/* ---- the float text against the previous implementation ------------------ */

/* The former gt_pyrepr, kept as the oracle: thousandths / millionths fast
 * paths, else the shortest %e precision (1..16, bisection) that strtod reads
 * back, laid out as Python's repr. */
static void oracle_pyrepr(double v, char *buf, size_t n)
{
    char tmp[40], digits[20];
    int prec, exp10, nd, k, pos;
    char *e;

    if (isnan(v)) {
        snprintf(buf, n, "nan");
        return;
    }
    if (isinf(v)) {
        snprintf(buf, n, v > 0 ? "inf" : "-inf");
        return;
    }
    if (v == 0) {
        snprintf(buf, n, signbit(v) ? "-0.0" : "0.0");
        return;
    }
    if (fabs(v) >= 1e-4) {
        static const struct {
            double scale;
            double limit;
            int places;
            long long div;
        } fast[] = {{1e3, 1e12, 3, 1000}, {1e6, 1e9, 6, 1000000}};
        size_t f;
        for (f = 0; f < sizeof(fast) / sizeof(fast[0]); f++) {
            double t;
            if (fabs(v) >= fast[f].limit)
                continue;
            t = round(v * fast[f].scale);
            if (t / fast[f].scale == v) {
                long long q = llabs((long long)t);
                int len = snprintf(tmp, sizeof(tmp), "%s%lld.%0*lld", v < 0 ? "-" : "",
                                   q / fast[f].div, fast[f].places, q % fast[f].div);
                while (len > 2 && tmp[len - 1] == '0' && tmp[len - 2] != '.')
                    tmp[--len] = 0;
                snprintf(buf, n, "%s", tmp);
                return;
            }
        }
    }
    {
        int lo = 1, hi = 16;
        while (lo < hi) {
            int mid = (lo + hi) / 2;
            snprintf(tmp, sizeof(tmp), "%.*e", mid - 1, v);
            if (strtod(tmp, NULL) == v)
                hi = mid;
            else
                lo = mid + 1;
        }
        prec = lo;
        snprintf(tmp, sizeof(tmp), "%.*e", prec - 1, v);
    }
    e = strchr(tmp, 'e');
    exp10 = atoi(e + 1);
    nd = 0;
    for (k = tmp[0] == '-' ? 1 : 0; tmp + k < e; k++) {
        if (tmp[k] != '.')
            digits[nd++] = tmp[k];
    }
    while (nd > 1 && digits[nd - 1] == '0')
        nd--;
    digits[nd] = 0;
    pos = 0;
    if (v < 0)
        buf[pos++] = '-';
    if (exp10 < -4 || exp10 >= 16) {
        pos += snprintf(buf + pos, n - pos, "%c", digits[0]);
        if (nd > 1)
            pos += snprintf(buf + pos, n - pos, ".%s", digits + 1);
        snprintf(buf + pos, n - pos, "e%c%02d", exp10 < 0 ? '-' : '+', abs(exp10));
    } else if (exp10 < 0) {
        pos += snprintf(buf + pos, n - pos, "0.");
        for (k = 0; k < -exp10 - 1; k++)
            buf[pos++] = '0';
        snprintf(buf + pos, n - pos, "%s", digits);
    } else {
        for (k = 0; k <= exp10; k++)
            buf[pos++] = k < nd ? digits[k] : '0';
        buf[pos++] = '.';
        if (nd > exp10 + 1)
            snprintf(buf + pos, n - pos, "%s", digits + exp10 + 1);
        else
            snprintf(buf + pos, n - pos, "0");
    }
}

/* 64 random bits (xorshift64*). */
static uint64_t next_bits(uint64_t *state)
{
    uint64_t x = *state;

    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    *state = x;
    return x * 2685821657736338717ull;
}

static double bits_to_double(uint64_t bits)
{
    double v;

    memcpy(&v, &bits, sizeof(v));
    return v;
}

/* Compare gt_pyrepr with the oracle on v, -v and both neighbours of v;
 * returns the number of values that differ (printed). */
static int compare_with_oracle(double v)
{
    double cases[4];
    int k, bad = 0;

    cases[0] = v;
    cases[1] = -v;
    cases[2] = nextafter(v, INFINITY);
    cases[3] = nextafter(v, -INFINITY);
    for (k = 0; k < 4; k++) {
        char got[64], want[64];
        size_t len = gt_pyrepr(cases[k], got, sizeof(got));
        oracle_pyrepr(cases[k], want, sizeof(want));
        if (strcmp(got, want) != 0 || len != strlen(want)) {
            if (bad < 10)
                fprintf(stderr, "pyrepr(%a): got %s, want %s\n", cases[k], got, want);
            bad++;
        }
    }
    return bad;
}

/* A value of the shapes the tables print, by kind. */
static double sample_value(uint64_t *state, int kind)
{
    uint64_t r = next_bits(state), r2 = next_bits(state);
    double a, b;

    switch (kind) {
    case 0: /* difference of two µs timestamps with ps resolution */
        a = (double)(r % 100000000000000000ull) / 1e6;
        b = (double)((r % 100000000000000000ull) - r2 % (1ull << (r % 50))) / 1e6;
        return a - b;
    case 1: /* difference of two µs timestamps with ns resolution */
        a = (double)(r % 10000000000000000ull) / 1e3;
        b = (double)((r % 10000000000000000ull) - r2 % (1ull << (r % 45))) / 1e3;
        return a - b;
    case 2: /* a mean: a sum of durations over a count */
        return (double)(r % 1000000000000ull) / 1e3 / (double)(r2 % 10000 + 1);
    case 3: /* a percentage */
        return (double)(r % 1000000000ull) / (double)(r2 % 1000000000ull + 1) * 100;
    case 4: /* ms from µs */
        return (double)(r % 100000000000000ull) / 1e6 / 1e3;
    case 5: /* any bit pattern */
        return bits_to_double(r);
    case 6: /* a mantissa at a decimal scale around the exact range's ends */
        return ldexp((double)(r >> 11), -53) * pow(10, (double)(int)(r2 % 26) - 6);
    default: /* few significant bits: ties and short decimals */
        return ldexp((double)(r % 4096), (int)(r2 % 80) - 60);
    }
}

static void test_pyrepr_oracle_edges(void **state)
{
    int bad = 0, e, k;

    (void)state;
    for (e = -330; e <= 310; e++) {
        bad += compare_with_oracle(pow(10, e));
        for (k = 1; k < 10; k++)
            bad += compare_with_oracle(k * pow(10, e) + 5 * pow(10, e - 1));
    }
    for (e = -1074; e <= 1023; e++)
        bad += compare_with_oracle(ldexp(1, e));
    bad += compare_with_oracle(1e-4);
    bad += compare_with_oracle(1e15);
    bad += compare_with_oracle(9.999999999999999e14);
    bad += compare_with_oracle(99999999999999.99);
    bad += compare_with_oracle(0.5);
    bad += compare_with_oracle(1e12);
    bad += compare_with_oracle(1e9);
    bad += compare_with_oracle(DBL_MAX);
    bad += compare_with_oracle(DBL_MIN);
    bad += compare_with_oracle(DBL_TRUE_MIN);
    bad += compare_with_oracle(0.1 + 0.2);
    bad += compare_with_oracle(15761.300999999978 / 1e3);
    assert_int_equal(bad, 0);
}

/* Values of each shape, and their negatives and neighbours
 * (XPROFS_PYREPR_N sets how many per shape). */
static void test_pyrepr_oracle_random(void **state)
{
    const char *env = getenv("XPROFS_PYREPR_N");
    long per_kind = env != NULL ? atol(env) : 15000, i;
    uint64_t seed = 0x9e3779b97f4a7c15ull;
    int kind, bad = 0;

    (void)state;
    for (kind = 0; kind < 8; kind++) {
        for (i = 0; i < per_kind; i++)
            bad += compare_with_oracle(sample_value(&seed, kind));
    }
    assert_int_equal(bad, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_merge_touching),       cmocka_unit_test(test_subtract),
        cmocka_unit_test(test_metrics_example),      cmocka_unit_test(test_metrics_empty),
        cmocka_unit_test(test_metrics_random),       cmocka_unit_test(test_classify),
        cmocka_unit_test(test_pyset_order),          cmocka_unit_test(test_pyrepr),
        cmocka_unit_test(test_pyrepr_random),        cmocka_unit_test(test_pyrepr_oracle_edges),
        cmocka_unit_test(test_pyrepr_oracle_random),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
