/*
 * test_hlo_cost.c - XLA's GPU cost model (hlo_cost.c) on small HLO modules
 * built byte by byte, against flops and bytes worked out by hand: a dot, two
 * convolutions, elementwise and multi-output fusions, a fusion reading a
 * slice of its parameter, a reduce, cuBLAS / unknown custom calls, the 8-bit
 * device-flops adjustment, ragged dots (and their malformed dimension
 * numbers), async-start, topk / all-to-all / collective-permute, the
 * size of an opaque value and a malformed module.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "hlo/hlo_cost.h"
#include "hlo/hlo_module.h"
#include "pbw.h"

enum { S8 = 2, S32 = 4, F32 = 11, TUPLE = 13, OPAQUE = 14 };

static void packed(struct pbw *w, uint32_t field, const int64_t *v, int n)
{
    struct pbw in = {0};
    int i;

    for (i = 0; i < n; i++)
        pbw_varint(&in, (uint64_t)v[i]);
    pbw_bytes(w, field, in.p, in.n);
    free(in.p);
}

/* An array ShapeProto with the default (row-major) layout. */
static struct pbw array(int type, const int64_t *dims, int n)
{
    struct pbw s = {0}, layout = {0};
    int64_t m2m[8];
    int i;

    for (i = 0; i < n; i++)
        m2m[i] = n - 1 - i;
    pbw_uint(&s, 2, (uint64_t)type);
    if (n > 0)
        packed(&s, 3, dims, n);
    if (n > 0)
        packed(&layout, 1, m2m, n);
    else
        pbw_uint(&layout, 16, 1); /* a present, empty layout */
    pbw_msg(&s, 5, &layout);
    return s;
}

#define ARR(type, ...)                                                                             \
    array(type, (const int64_t[]){__VA_ARGS__}, sizeof((int64_t[]){__VA_ARGS__}) / sizeof(int64_t))

static struct pbw scalar(int type)
{
    return array(type, NULL, 0);
}

static struct pbw tuple2(struct pbw a, struct pbw b)
{
    struct pbw s = {0};

    pbw_uint(&s, 2, TUPLE);
    pbw_msg(&s, 4, &a);
    pbw_msg(&s, 4, &b);
    return s;
}

/* One instruction into comp; extra holds further encoded fields (or NULL). */
static void instr(struct pbw *comp, const char *name, const char *opcode, struct pbw shape,
                  int64_t id, const int64_t *ops, int nops, struct pbw *extra)
{
    struct pbw in = {0};

    pbw_str(&in, 1, name);
    pbw_str(&in, 2, opcode);
    pbw_msg(&in, 3, &shape);
    pbw_uint(&in, 35, (uint64_t)id);
    if (nops > 0)
        packed(&in, 36, ops, nops);
    if (extra != NULL) {
        pbw_raw(&in, extra->p, extra->n);
        free(extra->p);
        memset(extra, 0, sizeof(*extra));
    }
    pbw_msg(comp, 2, &in);
}

static void param(struct pbw *comp, const char *name, struct pbw shape, int64_t id, int number)
{
    struct pbw x = {0};

    pbw_uint(&x, 9, (uint64_t)number);
    instr(comp, name, "parameter", shape, id, NULL, 0, &x);
}

/* Finish a computation into the module. */
static void comp_end(struct pbw *module, struct pbw *comp, const char *name, int64_t id,
                     int64_t root)
{
    pbw_str(comp, 1, name);
    pbw_uint(comp, 5, (uint64_t)id);
    pbw_uint(comp, 6, (uint64_t)root);
    pbw_msg(module, 3, comp);
}

static struct pbw called(int64_t comp)
{
    struct pbw x = {0};

    packed(&x, 38, &comp, 1);
    return x;
}

struct result {
    struct hlo_graph g;
    struct hlo_cost *cost;
};

static void analyse(struct pbw *module, int64_t entry, struct result *r)
{
    pbw_uint(module, 6, (uint64_t)entry);
    assert_int_equal(hlo_graph_read(module->p, module->n, &r->g), 0);
    r->cost = calloc(r->g.nnodes, sizeof(*r->cost));
    assert_non_null(r->cost);
    assert_int_equal(hlo_cost_analyze(&r->g, r->cost), 0);
    free(module->p);
}

static const struct hlo_cost *cost_of(const struct result *r, const char *name)
{
    uint32_t i;

    for (i = 0; i < r->g.nnodes; i++) {
        if (strcmp(r->g.nodes[i].name, name) == 0)
            return &r->cost[i];
    }
    fail_msg("no instruction %s", name);
    return NULL;
}

static void done(struct result *r)
{
    free(r->cost);
    hlo_graph_free(&r->g);
}

static void expect(const struct hlo_cost *c, int64_t model, int64_t device, int64_t bytes,
                   int64_t rd, int64_t wr)
{
    assert_int_equal(c->model_flops, model);
    assert_int_equal(c->device_flops, device);
    assert_int_equal(c->bytes_accessed, bytes);
    assert_int_equal(c->hbm_read, rd);
    assert_int_equal(c->hbm_write, wr);
}

/* f32[64,32] x f32[32,16]: 2*64*16*32 flops; bytes = both inputs + output. */
static void test_dot(void **state)
{
    struct pbw m = {0}, c = {0}, x = {0}, dn = {0};
    struct result r;
    int64_t one = 1, zero = 0;

    (void)state;
    param(&c, "a", ARR(F32, 64, 32), 1, 0);
    param(&c, "b", ARR(F32, 32, 16), 2, 1);
    packed(&dn, 1, &one, 1);
    packed(&dn, 2, &zero, 1);
    pbw_msg(&x, 30, &dn);
    instr(&c, "dot", "dot", ARR(F32, 64, 16), 3, (const int64_t[]){1, 2}, 2, &x);
    comp_end(&m, &c, "main", 1, 3);
    analyse(&m, 1, &r);
    expect(cost_of(&r, "dot"), 65536, 65536, (2048 + 512 + 1024) * 4, (2048 + 512) * 4, 4096);
    expect(cost_of(&r, "a"), 0, 0, 0, 0, 0);
    done(&r);
}

/* Convolution dimension numbers bf01 / oi01 / bf01. */
static void conv_dims(struct pbw *x, int nspatial)
{
    struct pbw d = {0};
    int64_t sp[2] = {2, 3};

    pbw_uint(&d, 7, 0); /* input_batch_dimension */
    pbw_uint(&d, 8, 1); /* input_feature_dimension */
    packed(&d, 11, sp, nspatial);
    pbw_uint(&d, 3, 1); /* kernel_input_feature_dimension */
    pbw_uint(&d, 4, 0); /* kernel_output_feature_dimension */
    packed(&d, 6, sp, nspatial);
    pbw_uint(&d, 9, 0);  /* output_batch_dimension */
    pbw_uint(&d, 10, 1); /* output_feature_dimension */
    packed(&d, 12, sp, nspatial);
    pbw_msg(x, 16, &d);
}

static void window_dim(struct pbw *win, int64_t size, int64_t stride, int64_t pad)
{
    struct pbw d = {0};

    pbw_uint(&d, 1, (uint64_t)size);
    pbw_uint(&d, 2, (uint64_t)stride);
    pbw_uint(&d, 3, (uint64_t)pad);
    pbw_uint(&d, 4, (uint64_t)pad);
    pbw_uint(&d, 5, 1);
    pbw_uint(&d, 6, 1);
    pbw_msg(win, 1, &d);
}

/* A 3x3 valid convolution of f32[1,8,10,10] by f32[16,8,3,3] into
 * f32[1,16,8,8]: every output element is 8*3*3 multiply-adds. */
static void test_convolution(void **state)
{
    struct pbw m = {0}, c = {0}, x = {0}, win = {0};
    struct result r;

    (void)state;
    param(&c, "in", ARR(F32, 1, 8, 10, 10), 1, 0);
    param(&c, "k", ARR(F32, 16, 8, 3, 3), 2, 1);
    window_dim(&win, 3, 1, 0);
    window_dim(&win, 3, 1, 0);
    pbw_msg(&x, 15, &win);
    conv_dims(&x, 2);
    instr(&c, "conv", "convolution", ARR(F32, 1, 16, 8, 8), 3, (const int64_t[]){1, 2}, 2, &x);
    comp_end(&m, &c, "main", 1, 3);
    analyse(&m, 1, &r);
    expect(cost_of(&r, "conv"), 1024 * 72 * 2, 1024 * 72 * 2, (800 + 1152 + 1024) * 4,
           (800 + 1152) * 4, 1024 * 4);
    done(&r);
}

/* 1-D, size 3, stride 2, padding 1 on both sides, 2 feature groups:
 * f32[2,4,5] by f32[6,2,3] into f32[2,6,3]. Output o reads inputs
 * 2o-1 .. 2o+1, of which 2, 3 and 2 lie in [0,5): 7 positions; per
 * position (4/2) input features * 6 outputs * batch 2. */
static void test_convolution_strided_grouped(void **state)
{
    struct pbw m = {0}, c = {0}, x = {0}, win = {0};
    struct result r;

    (void)state;
    param(&c, "in", ARR(F32, 2, 4, 5), 1, 0);
    param(&c, "k", ARR(F32, 6, 2, 3), 2, 1);
    window_dim(&win, 3, 2, 1);
    pbw_msg(&x, 15, &win);
    conv_dims(&x, 1);
    pbw_uint(&x, 50, 2); /* feature_group_count */
    instr(&c, "conv", "convolution", ARR(F32, 2, 6, 3), 3, (const int64_t[]){1, 2}, 2, &x);
    comp_end(&m, &c, "main", 1, 3);
    analyse(&m, 1, &r);
    assert_int_equal(cost_of(&r, "conv")->model_flops, 2 * 6 * 2 * 7 * 2);
    done(&r);
}

/* fusion(p0, p1) = multiply(exponential(add(p0, p1)), p0) on f32[1024]:
 * per element add 3 + exp 86 (sm_86 profile) + multiply 3 flops; p0 is
 * read once although used twice. */
static void test_elementwise_fusion(void **state)
{
    struct pbw m = {0}, f = {0}, c = {0}, x;
    struct result r;

    (void)state;
    param(&f, "p0", ARR(F32, 1024), 10, 0);
    param(&f, "p1", ARR(F32, 1024), 11, 1);
    instr(&f, "add", "add", ARR(F32, 1024), 12, (const int64_t[]){10, 11}, 2, NULL);
    instr(&f, "exp", "exponential", ARR(F32, 1024), 13, (const int64_t[]){12}, 1, NULL);
    instr(&f, "mul", "multiply", ARR(F32, 1024), 14, (const int64_t[]){13, 10}, 2, NULL);
    comp_end(&m, &f, "fused", 2, 14);
    param(&c, "a", ARR(F32, 1024), 1, 0);
    param(&c, "b", ARR(F32, 1024), 2, 1);
    x = called(2);
    pbw_str(&x, 11, "kLoop");
    instr(&c, "fusion", "fusion", ARR(F32, 1024), 3, (const int64_t[]){1, 2}, 2, &x);
    comp_end(&m, &c, "main", 1, 3);
    analyse(&m, 1, &r);
    expect(cost_of(&r, "fusion"), 92 * 1024, 92 * 1024, 3 * 4096, 2 * 4096, 4096);
    expect(cost_of(&r, "exp"), 86 * 1024, 86 * 1024, 2 * 4096, 4096, 4096);
    done(&r);
}

/* An s8 input: device flops are half the model flops (8-bit adjustment). */
static void test_int8_adjustment(void **state)
{
    struct pbw m = {0}, f = {0}, c = {0}, x;
    struct result r;

    (void)state;
    param(&f, "p0", ARR(S8, 1024), 10, 0);
    instr(&f, "cvt", "convert", ARR(F32, 1024), 11, (const int64_t[]){10}, 1, NULL);
    instr(&f, "neg", "negate", ARR(F32, 1024), 12, (const int64_t[]){11}, 1, NULL);
    comp_end(&m, &f, "fused", 2, 12);
    param(&c, "a", ARR(S8, 1024), 1, 0);
    x = called(2);
    pbw_str(&x, 11, "kLoop");
    instr(&c, "fusion", "fusion", ARR(F32, 1024), 3, (const int64_t[]){1}, 1, &x);
    comp_end(&m, &c, "main", 1, 3);
    analyse(&m, 1, &r);
    expect(cost_of(&r, "fusion"), 6 * 1024, 3 * 1024, 1024 + 4096, 1024, 4096);
    done(&r);
}

/* A fusion reading a tenth of its parameter through a slice: the parameter
 * read is 10% of its bytes; negate costs 3 flops per output element. */
static void test_slice_fusion(void **state)
{
    struct pbw m = {0}, f = {0}, c = {0}, x;
    struct result r;

    (void)state;
    param(&f, "p0", ARR(F32, 100), 10, 0);
    instr(&f, "slice", "slice", ARR(F32, 10), 11, (const int64_t[]){10}, 1, NULL);
    instr(&f, "neg", "negate", ARR(F32, 10), 12, (const int64_t[]){11}, 1, NULL);
    comp_end(&m, &f, "fused", 2, 12);
    param(&c, "a", ARR(F32, 100), 1, 0);
    x = called(2);
    pbw_str(&x, 11, "kLoop");
    instr(&c, "fusion", "fusion", ARR(F32, 10), 3, (const int64_t[]){1}, 1, &x);
    comp_end(&m, &c, "main", 1, 3);
    analyse(&m, 1, &r);
    expect(cost_of(&r, "fusion"), 30, 30, 40 + 40, 40, 40);
    done(&r);
}

/* A two-output fusion: the output bytes are both elements, written as two
 * leaves. */
static void test_tuple_fusion(void **state)
{
    struct pbw m = {0}, f = {0}, c = {0}, x;
    struct result r;

    (void)state;
    param(&f, "p0", ARR(F32, 16), 10, 0);
    instr(&f, "neg", "negate", ARR(F32, 16), 11, (const int64_t[]){10}, 1, NULL);
    instr(&f, "abs", "abs", ARR(F32, 16), 12, (const int64_t[]){10}, 1, NULL);
    instr(&f, "t", "tuple", tuple2(ARR(F32, 16), ARR(F32, 16)), 13, (const int64_t[]){11, 12}, 2,
          NULL);
    comp_end(&m, &f, "fused", 2, 13);
    param(&c, "a", ARR(F32, 16), 1, 0);
    x = called(2);
    pbw_str(&x, 11, "kLoop");
    instr(&c, "fusion", "fusion", tuple2(ARR(F32, 16), ARR(F32, 16)), 3, (const int64_t[]){1}, 1,
          &x);
    comp_end(&m, &c, "main", 1, 3);
    analyse(&m, 1, &r);
    expect(cost_of(&r, "fusion"), 96, 96, 192, 64, 128);
    done(&r);
}

/* reduce(f32[32,128], 0) over dimension 1 with an f32 add (3 flops in the
 * profile) applied 32*128 - 32 times; bytes = output + input + the init
 * value once per output element. */
static void test_reduce(void **state)
{
    struct pbw m = {0}, reg = {0}, c = {0}, x;
    struct result r;
    int64_t dim = 1;

    (void)state;
    param(&reg, "x", scalar(F32), 20, 0);
    param(&reg, "y", scalar(F32), 21, 1);
    instr(&reg, "sum", "add", scalar(F32), 22, (const int64_t[]){20, 21}, 2, NULL);
    comp_end(&m, &reg, "region", 2, 22);
    param(&c, "in", ARR(F32, 32, 128), 1, 0);
    instr(&c, "zero", "constant", scalar(F32), 2, NULL, 0, NULL);
    x = called(2);
    packed(&x, 14, &dim, 1);
    instr(&c, "reduce", "reduce", ARR(F32, 32), 3, (const int64_t[]){1, 2}, 2, &x);
    comp_end(&m, &c, "main", 1, 3);
    analyse(&m, 1, &r);
    expect(cost_of(&r, "reduce"), 3 * (4096 - 32), 3 * (4096 - 32), 128 + 16384 + 128, 16384 + 128,
           128);
    expect(cost_of(&r, "sum"), 3, 3, 12, 8, 4);
    done(&r);
}

/* A legacy cuBLAS GEMM custom call returning (result, workspace): flops from
 * the backend config's contracting dimension, the workspace not counted;
 * an unknown custom call has unknown (zero) costs; an 8-bit cuBLASLt GEMM
 * is adjusted to half its flops on the device. */
static void test_custom_calls(void **state)
{
    static const char config[] =
        "{\"gemm_backend_config\":{\"dot_dimension_numbers\":{\"lhs_contracting_dimensions\":"
        "[\"1\"],\"rhs_contracting_dimensions\":[\"0\"]}}}";
    struct pbw m = {0}, c = {0}, x = {0};
    struct result r;

    (void)state;
    param(&c, "a", ARR(F32, 128, 64), 1, 0);
    param(&c, "b", ARR(F32, 64, 32), 2, 1);
    pbw_str(&x, 28, "__cublas$gemm");
    pbw_str(&x, 43, config);
    instr(&c, "gemm", "custom-call", tuple2(ARR(F32, 128, 32), ARR(S8, 1000)), 3,
          (const int64_t[]){1, 2}, 2, &x);
    pbw_str(&x, 28, "my_kernel");
    instr(&c, "other", "custom-call", ARR(F32, 128, 64), 4, (const int64_t[]){1}, 1, &x);
    param(&c, "a8", ARR(S8, 128, 64), 6, 2);
    param(&c, "b8", ARR(S8, 64, 32), 7, 3);
    pbw_str(&x, 28, "__cublas$lt$matmul");
    pbw_str(&x, 43, config);
    instr(&c, "gemm8", "custom-call", tuple2(ARR(F32, 128, 32), ARR(S8, 1000)), 8,
          (const int64_t[]){6, 7}, 2, &x);
    instr(&c, "t", "tuple", tuple2(tuple2(ARR(F32, 128, 32), ARR(S8, 1000)), ARR(F32, 128, 64)), 5,
          (const int64_t[]){3, 4}, 2, NULL);
    comp_end(&m, &c, "main", 1, 5);
    analyse(&m, 1, &r);
    expect(cost_of(&r, "gemm"), 2 * 128 * 32 * 64, 2 * 128 * 32 * 64,
           (128 * 64 + 64 * 32 + 128 * 32) * 4, (128 * 64 + 64 * 32) * 4, 0);
    expect(cost_of(&r, "other"), 0, 0, 0, 0, 0);
    /* 8-bit cuBLASLt inputs: device flops are half (XProf's S8GemmAdjustment) */
    expect(cost_of(&r, "gemm8"), 2 * 128 * 32 * 64, 128 * 32 * 64,
           128 * 64 + 64 * 32 + 128 * 32 * 4, 128 * 64 + 64 * 32, 0);
    done(&r);
}

/* RaggedDotDimensionNumbers (instruction field 90): dot_dimension_numbers
 * with lhs_contracting {contracting} (when >= 0), rhs_group_dimensions
 * 0 .. ngroups-1. */
static void ragged_dims(struct pbw *x, int64_t contracting, int ngroups)
{
    struct pbw rd = {0}, dn = {0};
    int64_t groups[8] = {0, 1, 2, 3, 4, 5, 6, 7};

    if (contracting >= 0) {
        packed(&dn, 1, &contracting, 1);
        pbw_msg(&rd, 1, &dn);
    }
    if (ngroups > 0)
        packed(&rd, 3, groups, ngroups);
    pbw_msg(x, 90, &rd);
}

/* XLA's HandleRaggedDot (tensorflow third_party/xla 037c4f1b): GetDotFlops
 * over the lhs contracting dimensions of the ragged dimension numbers and
 * the result with dimension i deleted for each i below the number of rhs
 * group dimensions (original dimensions 0, 2, 4 ...); bytes are the
 * defaults (all operands read, the output written).
 *  - "non-contracting" f32[64,32] x f32[4,32,16] (group sizes s32[4]) ->
 *    f32[64,16], one rhs group dimension: [64,16] loses dimension 0 ->
 *    [16], so 2*16*32 = 1024 flops (not 2*64*32*16: XLA's rule);
 *  - "contracting" f32[8,12] x f32[12,5] -> f32[3,8,5], no group
 *    dimension: 2*120*12 = 2880;
 *  - two group dimensions on f32[2,3,5,7]: dimensions 0 and 2 go, [3,7]
 *    remains: 2*21*11 = 462 with the lhs f32[3,11] contracting 11. */
static void test_ragged_dot(void **state)
{
    struct pbw m = {0}, c = {0}, x = {0};
    struct result r;

    (void)state;
    param(&c, "lhs", ARR(F32, 64, 32), 1, 0);
    param(&c, "rhs", ARR(F32, 4, 32, 16), 2, 1);
    param(&c, "sizes", ARR(S32, 4), 3, 2);
    ragged_dims(&x, 1, 1);
    instr(&c, "rd", "ragged-dot", ARR(F32, 64, 16), 4, (const int64_t[]){1, 2, 3}, 3, &x);
    param(&c, "l2", ARR(F32, 8, 12), 5, 3);
    param(&c, "r2", ARR(F32, 12, 5), 6, 4);
    param(&c, "s2", ARR(S32, 3), 7, 5);
    ragged_dims(&x, 1, 0);
    instr(&c, "rd2", "ragged-dot", ARR(F32, 3, 8, 5), 8, (const int64_t[]){5, 6, 7}, 3, &x);
    param(&c, "l3", ARR(F32, 3, 11), 9, 6);
    ragged_dims(&x, 1, 2);
    instr(&c, "rd3", "ragged-dot", ARR(F32, 2, 3, 5, 7), 10, (const int64_t[]){9, 9, 7}, 3, &x);
    instr(&c, "t", "tuple", tuple2(ARR(F32, 64, 16), ARR(F32, 3, 8, 5)), 11,
          (const int64_t[]){4, 8}, 2, NULL);
    comp_end(&m, &c, "main", 1, 11);
    analyse(&m, 1, &r);
    /* bytes: out 4096 + lhs 8192 + rhs 8192 + sizes 16; 32-bit inputs */
    expect(cost_of(&r, "rd"), 2 * 16 * 32, 2 * 16 * 32, 4096 + 8192 + 8192 + 16, 8192 + 8192 + 16,
           4096);
    expect(cost_of(&r, "rd2"), 2 * 120 * 12, 2 * 120 * 12, 480 + 384 + 240 + 12, 384 + 240 + 12,
           480);
    assert_int_equal(cost_of(&r, "rd3")->model_flops, 2 * 21 * 11);
    done(&r);
}

/* Malformed ragged dimension numbers. Missing (no field 90): no contracting
 * and no group dimension, 2*|out| flops, as XLA prices empty numbers.
 * Hostile: a contracting dimension past the lhs rank counts 1 (where XLA
 * would fail a check) and more group dimensions than the result can lose
 * delete what exists (here dimension 0 of [6,5]: 2*5 flops). Bad bytes
 * inside field 90 (a truncated packed list, a sub-message longer than its
 * field): the module is refused, as XLA's proto parser refuses it. */
static void test_ragged_dot_malformed(void **state)
{
    static const uint8_t bad_packed[] = {0x1a, 0x01, 0xff};    /* groups: cut varint */
    static const uint8_t bad_sub[] = {0x0a, 0x02, 0x0a, 0x05}; /* dot dims: too long */
    const uint8_t *bad[2] = {bad_packed, bad_sub};
    size_t badn[2] = {sizeof(bad_packed), sizeof(bad_sub)};
    struct pbw m = {0}, c = {0}, x = {0};
    struct result r;
    int i;

    (void)state;
    param(&c, "lhs", ARR(F32, 6, 4), 1, 0);
    param(&c, "rhs", ARR(F32, 2, 4, 5), 2, 1);
    param(&c, "sizes", ARR(S32, 2), 3, 2);
    instr(&c, "bare", "ragged-dot", ARR(F32, 6, 5), 4, (const int64_t[]){1, 2, 3}, 3, NULL);
    ragged_dims(&x, 9, 5);
    instr(&c, "hostile", "ragged-dot", ARR(F32, 6, 5), 5, (const int64_t[]){1, 2, 3}, 3, &x);
    instr(&c, "noops", "ragged-dot", ARR(F32, 6, 5), 6, NULL, 0, NULL);
    instr(&c, "t", "tuple", tuple2(ARR(F32, 6, 5), ARR(F32, 6, 5)), 7, (const int64_t[]){4, 5}, 2,
          NULL);
    comp_end(&m, &c, "main", 1, 7);
    pbw_uint(&m, 6, 1);
    assert_int_equal(hlo_graph_read(m.p, m.n, &r.g), 0);
    r.cost = calloc(r.g.nnodes, sizeof(*r.cost));
    assert_non_null(r.cost);
    /* a ragged dot without operands: XLA's analysis fails, nothing priced */
    assert_int_equal(hlo_cost_analyze(&r.g, r.cost), -1);
    assert_int_equal(r.cost[0].bytes_accessed, 0);
    done(&r);
    free(m.p);

    memset(&m, 0, sizeof(m));
    memset(&c, 0, sizeof(c));
    param(&c, "lhs", ARR(F32, 6, 4), 1, 0);
    param(&c, "rhs", ARR(F32, 2, 4, 5), 2, 1);
    param(&c, "sizes", ARR(S32, 2), 3, 2);
    instr(&c, "bare", "ragged-dot", ARR(F32, 6, 5), 4, (const int64_t[]){1, 2, 3}, 3, NULL);
    ragged_dims(&x, 9, 5);
    instr(&c, "hostile", "ragged-dot", ARR(F32, 6, 5), 5, (const int64_t[]){1, 2, 3}, 3, &x);
    instr(&c, "t", "tuple", tuple2(ARR(F32, 6, 5), ARR(F32, 6, 5)), 7, (const int64_t[]){4, 5}, 2,
          NULL);
    comp_end(&m, &c, "main", 1, 7);
    analyse(&m, 1, &r);
    assert_int_equal(cost_of(&r, "bare")->model_flops, 2 * 30);
    assert_int_equal(cost_of(&r, "hostile")->model_flops, 2 * 5);
    done(&r);

    for (i = 0; i < 2; i++) {
        struct hlo_graph g;
        memset(&m, 0, sizeof(m));
        memset(&c, 0, sizeof(c));
        param(&c, "lhs", ARR(F32, 6, 4), 1, 0);
        pbw_bytes(&x, 90, bad[i], badn[i]);
        instr(&c, "rd", "ragged-dot", ARR(F32, 6, 5), 2, (const int64_t[]){1, 1, 1}, 3, &x);
        comp_end(&m, &c, "main", 1, 2);
        pbw_uint(&m, 6, 1);
        assert_int_equal(hlo_graph_read(m.p, m.n, &g), -1);
        free(m.p);
    }
}

/* One ReplicaGroup {0 .. n-1} (instruction field 49). */
static void replica_group(struct pbw *x, int n)
{
    struct pbw g = {0};
    int64_t ids[8] = {0, 1, 2, 3, 4, 5, 6, 7};

    packed(&g, 1, ids, n);
    pbw_msg(x, 49, &g);
}

/* A three-element tuple shape. */
static struct pbw tuple3(struct pbw a, struct pbw b, struct pbw c)
{
    struct pbw s = tuple2(a, b);

    pbw_msg(&s, 4, &c);
    return s;
}

/* GpuHloCostAnalysis::HandleAsyncStart (tensorflow third_party/xla
 * 144a213c): the wrapped instruction (root of the async computation) is
 * visited in place with the running visitor, which leaves the async-start
 * with empty properties; a wrapped reduce-scatter is then priced again on
 * the async-start. The call's sum includes the wrapped instruction.
 *  - async negate of f32[1024]: the negate costs 3*1024 flops (default
 *    profile) and 4096 + 4096 bytes; the async-start 0 everywhere;
 *    async-done the defaults: output 4096 + its operand (a tuple, 8 bytes
 *    per element pointer: 3*8 = 24), HBM write 4096, read 0 (no leaf
 *    operand bytes recorded for a tuple operand); call = the body's sum:
 *    3072 flops, 8192 + 4120 bytes.
 *  - async reduce-scatter of f32[1024] over 4 ranks into f32[256] with an
 *    add: 4096 bytes transferred, 1024 per rank, write 1024*4 + read
 *    1024*7 = 11264 bytes and 3*256 flops, on both the reduce-scatter and
 *    the async-start (which has no HBM split: its operand and output keys
 *    were dropped). */
static void test_async_start(void **state)
{
    struct pbw m = {0}, a = {0}, rs = {0}, reg = {0}, body = {0}, c = {0}, x;
    struct result r;
    struct pbw start_shape =
        tuple3(tuple2(ARR(F32, 1024), ARR(F32, 1024)), ARR(F32, 1024), scalar(S32));

    (void)state;
    /* the async computation: negate(q) */
    param(&a, "q", ARR(F32, 1024), 40, 0);
    instr(&a, "neg", "negate", ARR(F32, 1024), 41, (const int64_t[]){40}, 1, NULL);
    comp_end(&m, &a, "async_comp", 4, 41);
    /* the reducer and the async reduce-scatter computation */
    param(&reg, "x", scalar(F32), 50, 0);
    param(&reg, "y", scalar(F32), 51, 1);
    instr(&reg, "sum", "add", scalar(F32), 52, (const int64_t[]){50, 51}, 2, NULL);
    comp_end(&m, &reg, "region", 5, 52);
    param(&rs, "rq", ARR(F32, 1024), 60, 0);
    x = called(5);
    replica_group(&x, 4);
    instr(&rs, "rs", "reduce-scatter", ARR(F32, 256), 61, (const int64_t[]){60}, 1, &x);
    comp_end(&m, &rs, "rs_comp", 6, 61);
    /* the body: async-start / async-done of the negate */
    param(&body, "bp", ARR(F32, 1024), 30, 0);
    x = called(4);
    instr(&body, "start", "async-start", start_shape, 31, (const int64_t[]){30}, 1, &x);
    instr(&body, "done", "async-done", ARR(F32, 1024), 32, (const int64_t[]){31}, 1, NULL);
    comp_end(&m, &body, "body", 3, 32);
    /* main: call(body), and an async reduce-scatter */
    param(&c, "in", ARR(F32, 1024), 1, 0);
    x = called(3);
    instr(&c, "call", "call", ARR(F32, 1024), 2, (const int64_t[]){1}, 1, &x);
    x = called(6);
    instr(&c, "rs-start", "async-start",
          tuple3(tuple2(ARR(F32, 1024), ARR(F32, 1)), ARR(F32, 256), scalar(S32)), 3,
          (const int64_t[]){1}, 1, &x);
    instr(&c, "t", "tuple", tuple2(ARR(F32, 1024), ARR(F32, 1)), 4, (const int64_t[]){2, 3}, 2,
          NULL);
    comp_end(&m, &c, "main", 1, 4);
    analyse(&m, 1, &r);
    expect(cost_of(&r, "neg"), 3072, 3072, 8192, 4096, 4096);
    expect(cost_of(&r, "q"), 0, 0, 0, 0, 0);
    expect(cost_of(&r, "start"), 0, 0, 0, 0, 0);
    expect(cost_of(&r, "done"), 0, 0, 4096 + 24, 0, 4096);
    assert_int_equal(cost_of(&r, "call")->model_flops, 3072);
    assert_int_equal(cost_of(&r, "call")->bytes_accessed, 8192 + 4096 + 24);
    expect(cost_of(&r, "rs"), 768, 768, 11264, 4096, 1024);
    expect(cost_of(&r, "rs-start"), 768, 768, 11264, 0, 0);
    done(&r);
}

/* Opcodes whose XLA handlers add nothing to the defaults (HloCostAnalysis
 * HandleTopK, GpuHloCostAnalysis HandleAllToAll / HandleCollectivePermute,
 * which only record bytes transferred): no flops; bytes = every operand
 * read + the output written.
 *  - topk of f32[8,100] -> (f32[8,5], s32[8,5]): 3200 read, the output
 *    written as its two leaves 160 + 160 (HBM write 0: no per-leaf output
 *    bytes are recorded);
 *  - all-to-all f32[4,256] -> f32[4,256]: 4096 + 4096;
 *  - collective-permute f32[512] -> f32[512]: 2048 + 2048. */
static void test_default_collectives_topk(void **state)
{
    struct pbw m = {0}, c = {0}, x = {0};
    struct result r;

    (void)state;
    param(&c, "in", ARR(F32, 8, 100), 1, 0);
    pbw_uint(&x, 81, 5); /* k */
    pbw_uint(&x, 85, 1); /* largest */
    instr(&c, "topk", "topk", tuple2(ARR(F32, 8, 5), ARR(S32, 8, 5)), 2, (const int64_t[]){1}, 1,
          &x);
    param(&c, "a", ARR(F32, 4, 256), 3, 1);
    replica_group(&x, 4);
    instr(&c, "a2a", "all-to-all", ARR(F32, 4, 256), 4, (const int64_t[]){3}, 1, &x);
    param(&c, "p", ARR(F32, 512), 5, 2);
    pbw_uint(&x, 26, 1); /* channel_id */
    instr(&c, "cp", "collective-permute", ARR(F32, 512), 6, (const int64_t[]){5}, 1, &x);
    instr(&c, "t", "tuple", tuple2(ARR(F32, 4, 256), ARR(F32, 512)), 7, (const int64_t[]){4, 6}, 2,
          NULL);
    comp_end(&m, &c, "main", 1, 7);
    analyse(&m, 1, &r);
    expect(cost_of(&r, "topk"), 0, 0, 3200 + 320, 3200, 0);
    expect(cost_of(&r, "a2a"), 0, 0, 8192, 4096, 4096);
    expect(cost_of(&r, "cp"), 0, 0, 4096, 2048, 2048);
    done(&r);
}

/* ShapeUtil::ByteSizeOf of an opaque value is one pointer (8 bytes) and
 * such a shape counts as laid out (LayoutUtil::HasLayout holds for
 * non-arrays): a copy of one reads 8 and writes 8 bytes; no HBM split, as
 * the leaves carry no layout (hence no memory space). */
static void test_opaque_size(void **state)
{
    struct pbw m = {0}, c = {0}, o = {0};
    struct result r;

    (void)state;
    pbw_uint(&o, 2, OPAQUE);
    param(&c, "o", o, 1, 0);
    memset(&o, 0, sizeof(o));
    pbw_uint(&o, 2, OPAQUE);
    instr(&c, "copy", "copy", o, 2, (const int64_t[]){1}, 1, NULL);
    comp_end(&m, &c, "main", 1, 2);
    analyse(&m, 1, &r);
    expect(cost_of(&r, "copy"), 0, 0, 16, 0, 0);
    done(&r);
}

/* An operand id that names no instruction: the module is refused. */
static void test_malformed(void **state)
{
    struct pbw m = {0}, c = {0};
    struct hlo_graph g;

    (void)state;
    param(&c, "a", ARR(F32, 4), 1, 0);
    instr(&c, "neg", "negate", ARR(F32, 4), 2, (const int64_t[]){7}, 1, NULL);
    comp_end(&m, &c, "main", 1, 2);
    assert_int_equal(hlo_graph_read(m.p, m.n, &g), -1);
    assert_int_equal(hlo_graph_read(m.p, m.n / 2, &g), -1);
    free(m.p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_dot),
        cmocka_unit_test(test_convolution),
        cmocka_unit_test(test_convolution_strided_grouped),
        cmocka_unit_test(test_elementwise_fusion),
        cmocka_unit_test(test_int8_adjustment),
        cmocka_unit_test(test_slice_fusion),
        cmocka_unit_test(test_tuple_fusion),
        cmocka_unit_test(test_reduce),
        cmocka_unit_test(test_custom_calls),
        cmocka_unit_test(test_ragged_dot),
        cmocka_unit_test(test_ragged_dot_malformed),
        cmocka_unit_test(test_async_start),
        cmocka_unit_test(test_default_collectives_topk),
        cmocka_unit_test(test_opaque_size),
        cmocka_unit_test(test_malformed),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
