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

#include "reader/ctrace.h"
#include "tracelens/gpu_timeline.h"
#include "base/np_arith.h"

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
    assert_string_equal(buf, "15.761300999999978");
    /* 17 digits where no 16 read back (TraceLens's owlv2 reference) */
    gt_pyrepr(14.570259033203126, buf, sizeof(buf));
    assert_string_equal(buf, "14.570259033203126");
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
        /* Python's repr: reads back as v, with the fewest digits that do
         * (leading "0." zeros and trailing ".0" do not count) */
        assert_true(strtod(buf, NULL) == v);
        snprintf(tmp, sizeof(tmp), "%.*e", p - 1, v);
        assert_true(strtod(buf, NULL) == strtod(tmp, NULL));
        assert_true(digits <= p + 6);
    }
}

/* ---- the float text against the previous implementation ------------------ */

/* The former gt_pyrepr, kept as the oracle: thousandths / millionths fast
 * paths, else the shortest %e precision (1..17, bisection) that strtod reads
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
        int lo = 1, hi = 17;
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

/* ---- PyTorch linking with many graph launches ------------------------------ */

/* What the generator wrote, event by event (in file order). */
enum gen_kind { GEN_GRAPH, GEN_LAUNCH, GEN_FLOW_S, GEN_FLOW_F, GEN_KERNEL };

struct gen_event {
    enum gen_kind kind;
    int64_t corr;
    int tid;
};

struct gen {
    char *text;
    size_t len, cap;
    struct gen_event *ev;
    size_t nev;
};

static void gen_add(struct gen *g, enum gen_kind kind, int64_t corr, int tid, double ts)
{
    char line[256];
    int n = 0;

    switch (kind) {
    case GEN_GRAPH:
    case GEN_LAUNCH:
        n = snprintf(line, sizeof(line),
                     "%s{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"%s\",\"pid\":1,"
                     "\"tid\":2,\"ts\":%.3f,\"dur\":1,\"args\":{\"correlation\":%lld}}",
                     g->nev ? "," : "", kind == GEN_GRAPH ? "cudaGraphLaunch" : "cudaLaunchKernel",
                     ts, (long long)corr);
        break;
    case GEN_FLOW_S:
    case GEN_FLOW_F:
        n = snprintf(line, sizeof(line),
                     ",{\"ph\":\"%c\",\"cat\":\"ac2g\",\"name\":\"ac2g\",\"id\":%lld,\"pid\":%d,"
                     "\"tid\":%d,\"ts\":%.3f,\"bp\":\"e\"}",
                     kind == GEN_FLOW_S ? 's' : 'f', (long long)corr, kind == GEN_FLOW_S ? 1 : 0,
                     kind == GEN_FLOW_S ? 2 : tid, ts);
        break;
    case GEN_KERNEL:
        n = snprintf(line, sizeof(line),
                     "%s{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k%lld\",\"pid\":0,\"tid\":%d,"
                     "\"ts\":%.3f,\"dur\":2,\"args\":{\"correlation\":%lld}}",
                     g->nev ? "," : "", (long long)(corr % 7), tid, ts, (long long)corr);
        break;
    }
    assert_true(n > 0 && (size_t)n < sizeof(line));
    if (g->len + (size_t)n + 8 > g->cap) {
        g->cap = (g->cap + (size_t)n + 8) * 2;
        g->text = realloc(g->text, g->cap);
        assert_non_null(g->text);
    }
    memcpy(g->text + g->len, line, (size_t)n);
    g->len += (size_t)n;
    g->ev = realloc(g->ev, (g->nev + 1) * sizeof(*g->ev));
    assert_non_null(g->ev);
    g->ev[g->nev].kind = kind;
    g->ev[g->nev].corr = corr;
    g->ev[g->nev].tid = tid;
    g->nev++;
}

/* TraceLens's linking by brute force over the generator's record: runtime
 * events in file order; a graph launch links every kernel of its id, a plain
 * launch the kernel its flow pair points at; later links overwrite. */
static void links_bruteforce(const struct gen *g, uint32_t *parent)
{
    size_t i, j;

    for (i = 0; i < g->nev; i++)
        parent[i] = UINT32_MAX;
    for (i = 0; i < g->nev; i++) {
        const struct gen_event *e = &g->ev[i];
        if (e->kind == GEN_GRAPH) {
            for (j = 0; j < g->nev; j++) {
                if (g->ev[j].kind == GEN_KERNEL && g->ev[j].corr == e->corr)
                    parent[j] = (uint32_t)i;
            }
        } else if (e->kind == GEN_LAUNCH) {
            size_t s = SIZE_MAX, f = SIZE_MAX, k = SIZE_MAX;
            for (j = 0; j < g->nev; j++) {
                if (g->ev[j].kind == GEN_FLOW_S && g->ev[j].corr == e->corr)
                    s = j;
                if (g->ev[j].kind == GEN_FLOW_F && g->ev[j].corr == e->corr)
                    f = j;
            }
            if (s == SIZE_MAX || f == SIZE_MAX)
                continue;
            for (j = 0; j < g->nev; j++) {
                if (g->ev[j].kind == GEN_KERNEL && g->ev[j].corr == e->corr &&
                    g->ev[j].tid == g->ev[f].tid)
                    k = j; /* the last event of (pid, tid, id) */
            }
            if (k != SIZE_MAX)
                parent[k] = (uint32_t)i;
        }
    }
}

static void test_pt_links_graph_launches(void **state)
{
    struct gen g = {NULL, 0, 0, NULL, 0};
    uint64_t seed = 12345;
    int64_t next_corr = 1, graph_corrs[4096];
    size_t ngraph = 0, step, i, graph_linked = 0, overwritten = 0;
    uint32_t *want, *got = NULL;
    struct ctrace *ct = NULL;
    struct xp_err err;
    double ts = 0;

    (void)state;
    memset(&err, 0, sizeof(err));
    gen_add(&g, GEN_KERNEL, 999999, 9, ts); /* never launched */
    for (step = 0; step < 2000; step++) {
        unsigned r;
        int64_t c;
        int k, nk;
        seed = seed * 6364136223846793005ull + 1442695040888963407ull;
        r = (unsigned)(seed >> 33) % 100;
        ts += 5;
        if (r < 55 || ngraph == 0) {
            /* A new graph: some of its kernels come before the launch. */
            c = next_corr++;
            nk = 1 + (int)((seed >> 20) % 4);
            for (k = 0; k < nk; k++) {
                if (k == 0 && (seed >> 40) % 3 == 0)
                    gen_add(&g, GEN_KERNEL, c, 8, ts - 1);
                else if (k == 0)
                    gen_add(&g, GEN_GRAPH, c, 2, ts);
                else
                    gen_add(&g, GEN_KERNEL, c, 8, ts + k);
            }
            if ((seed >> 40) % 3 == 0)
                gen_add(&g, GEN_GRAPH, c, 2, ts);
            if (ngraph < 4096)
                graph_corrs[ngraph++] = c;
        } else if (r < 70) {
            /* The same graph launched again: the later launch wins. */
            c = graph_corrs[(seed >> 24) % ngraph];
            gen_add(&g, GEN_GRAPH, c, 2, ts);
        } else if (r < 95) {
            /* A plain launch with its flow pair; sometimes with a graph's id. */
            c = r < 85 ? next_corr++ : graph_corrs[(seed >> 24) % ngraph];
            gen_add(&g, GEN_LAUNCH, c, 2, ts);
            gen_add(&g, GEN_FLOW_S, c, 2, ts);
            gen_add(&g, GEN_FLOW_F, c, 7, ts + 1);
            gen_add(&g, GEN_KERNEL, c, 7, ts + 1);
        } else {
            gen_add(&g, GEN_KERNEL, next_corr++, 8, ts); /* unlinked */
        }
    }
    {
        size_t body = g.len;
        char *text = malloc(body + 32);
        assert_non_null(text);
        memcpy(text, "{\"traceEvents\":[", 16);
        memcpy(text + 16, g.text, body);
        memcpy(text + 16 + body, "]}", 2);
        assert_int_equal(ctrace_load_mem("graphs.json", text, body + 18, &ct, &err), 0);
        free(text);
    }
    assert_int_equal(ct->nevents, g.nev);
    want = malloc(g.nev * sizeof(*want));
    assert_non_null(want);
    links_bruteforce(&g, want);
    assert_int_equal(gt_pt_links(ct, &got), 0);
    for (i = 0; i < g.nev; i++) {
        if (got[i] != want[i])
            fail_msg("event %zu: parent %u, want %u", i, got[i], want[i]);
        if (want[i] != UINT32_MAX && g.ev[want[i]].kind == GEN_GRAPH)
            graph_linked++;
        if (g.ev[i].kind == GEN_KERNEL && g.ev[i].tid == 7 && want[i] != UINT32_MAX &&
            g.ev[want[i]].kind == GEN_GRAPH)
            overwritten++; /* a flow link overwritten by a later graph launch */
    }
    /* The cases all occur. */
    assert_true(graph_linked > 1500);
    assert_true(overwritten > 0);
    assert_int_equal(got[0], UINT32_MAX);
    free(want);
    free(got);
    free(g.text);
    free(g.ev);
    ctrace_free(ct);
}

/* ---- numpy arithmetic (np_arith.c) ------------------------------------------ */

static double np_test_value(size_t i)
{
    return (double)((i * 7919) % 1009) / 997.0 + (double)i / 3.0;
}

/* numpy 1.24's np.sum of np_test_value(0..n), printed by numpy itself
 * (float.hex); several differ from "first element + pairwise sum of the rest". */
static void test_np_sum(void **state)
{
    static const struct {
        size_t n;
        double sum;
    } want[] = {
        {1, 0x0.0p+0},
        {2, 0x1.3120f3c2b7ad2p+0},
        {3, 0x1.4827077243461p+1},
        {5, 0x1.76332ed15a77fp+2},
        {7, 0x1.3b2f80a4553f6p+3},
        {8, 0x1.a43f563071a9ep+3},
        {9, 0x1.09885854387d5p+4},
        {15, 0x1.514ed4179f744p+5},
        {16, 0x1.7f2e79b5895f4p+5},
        {17, 0x1.ae7e808e6c03cp+5},
        {31, 0x1.555a205a62161p+7},
        {100, 0x1.a940c53318e82p+10},
        {127, 0x1.55711341fd6eap+11},
        {128, 0x1.5ad3c831fc101p+11},
        {129, 0x1.603c3ea6e6946p+11},
        {200, 0x1.a4f0015e93ba8p+12},
        {257, 0x1.5ab56b3e90fd6p+13},
        {1000, 0x1.462f1929da82fp+17},
        {1001, 0x1.46d5f3136dcfep+17},
        {4099, 0x1.5600cc093e653p+21},
    };
    double v[4099];
    size_t i, k, first_plus_rest_differs = 0;

    (void)state;
    for (i = 0; i < 4099; i++)
        v[i] = np_test_value(i);
    for (k = 0; k < sizeof(want) / sizeof(want[0]); k++) {
        size_t n = want[k].n;
        if (np_sum(v, n) != want[k].sum)
            fail_msg("n=%zu: %a, numpy %a", n, np_sum(v, n), want[k].sum);
        if (n > 1 && v[0] + np_sum(v + 1, n - 1) != want[k].sum)
            first_plus_rest_differs++;
    }
    assert_true(first_plus_rest_differs >= 3);
    assert_true(np_sum(v, 0) == 0);
}

/* pandas' sort_values(ascending=False) order, ties included, as pandas 1.5.3
 * printed it (Series([(i * 37) % 5 ...]).sort_values(ascending=False).index). */
static void test_np_order_desc(void **state)
{
    static const size_t want40[] = {32, 2,  27, 7,  22, 37, 17, 12, 14, 34, 29, 24, 19, 39,
                                    9,  4,  16, 31, 11, 1,  21, 36, 6,  26, 38, 3,  28, 13,
                                    8,  18, 33, 23, 35, 0,  30, 25, 15, 10, 5,  20};
    static const size_t want12[] = {2, 7, 4, 9, 1, 6, 11, 3, 8, 0, 5, 10};
    double v[40];
    size_t order[40], i;

    (void)state;
    for (i = 0; i < 40; i++)
        v[i] = (double)((i * 37) % 5);
    assert_int_equal(np_order_desc(v, 40, order), 0);
    for (i = 0; i < 40; i++)
        assert_int_equal(order[i], want40[i]);
    assert_int_equal(np_order_desc(v, 12, order), 0);
    for (i = 0; i < 12; i++)
        assert_int_equal(order[i], want12[i]);
    assert_int_equal(np_order_desc(v, 0, order), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_merge_touching),
        cmocka_unit_test(test_subtract),
        cmocka_unit_test(test_metrics_example),
        cmocka_unit_test(test_metrics_empty),
        cmocka_unit_test(test_metrics_random),
        cmocka_unit_test(test_classify),
        cmocka_unit_test(test_pyset_order),
        cmocka_unit_test(test_pyrepr),
        cmocka_unit_test(test_pyrepr_random),
        cmocka_unit_test(test_pyrepr_oracle_edges),
        cmocka_unit_test(test_pyrepr_oracle_random),
        cmocka_unit_test(test_pt_links_graph_launches),
        cmocka_unit_test(test_np_sum),
        cmocka_unit_test(test_np_order_desc),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
