/*
 * test_hlo_text.c - the HLO text printer (hlo_text.h) on instructions built
 * byte by byte, against strings written out by hand from XLA's printing
 * code (HloInstruction::ToString with XProf's options): shapes and layouts,
 * names, operands, the attributes of the common opcodes, constants,
 * shardings, control predecessors, frontend attributes, called
 * computations, async ops; the stack frames of instructions (a chain, a
 * cycle, ids out of range); and hostile modules (bad ids, huge shapes,
 * garbage inside attributes, texts past the cut).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "hlo/hlo_module.h"
#include "hlo/hlo_module_int.h"
#include "hlo/hlo_text.h"
#include "out/out.h"
#include "pbw.h"

enum {
    PRED = 1,
    S8 = 2,
    S32 = 4,
    U32 = 8,
    F32 = 11,
    TUPLE = 13,
    OPAQUE = 14,
    BF16 = 16,
    TOKEN = 17,
    F8E5M2 = 19,
    F8E4M3FN = 20,
    S4 = 21,
};

/* ---- builders ---- */

static void packed(struct pbw *w, uint32_t field, const int64_t *v, int n)
{
    struct pbw in = {0};
    int i;

    for (i = 0; i < n; i++)
        pbw_varint(&in, (uint64_t)v[i]);
    pbw_bytes(w, field, in.p, in.n);
    free(in.p);
}

#define LIST(...) (const int64_t[]){__VA_ARGS__}, (int)(sizeof((int64_t[]){__VA_ARGS__}) / 8)

/* A LayoutProto with minor_to_major m2m. */
static struct pbw layout(const int64_t *m2m, int n)
{
    struct pbw l = {0};

    if (n > 0)
        packed(&l, 1, m2m, n);
    return l;
}

/* Add a tile to a layout. */
static void tile(struct pbw *l, const int64_t *dims, int n)
{
    struct pbw t = {0};

    packed(&t, 1, dims, n);
    pbw_msg(l, 6, &t);
}

/* A ShapeProto of type and dims with layout l (consumed; NULL: none). */
static struct pbw shape(int type, const int64_t *dims, int n, struct pbw *l)
{
    struct pbw s = {0};

    pbw_uint(&s, 2, (uint64_t)type);
    if (n > 0)
        packed(&s, 3, dims, n);
    if (l != NULL)
        pbw_msg(&s, 5, l);
    return s;
}

/* An array ShapeProto with the default (row-major) layout. */
static struct pbw array(int type, const int64_t *dims, int n)
{
    struct pbw l;
    int64_t *m2m = malloc(((size_t)n + 1) * sizeof(*m2m));
    int i;

    assert_non_null(m2m);
    for (i = 0; i < n; i++)
        m2m[i] = n - 1 - i;
    l = layout(m2m, n);
    free(m2m);
    return shape(type, dims, n, &l);
}

#define ARR(type, ...) array(type, LIST(__VA_ARGS__))

/* A scalar with a present, empty layout. */
static struct pbw scalar(int type)
{
    struct pbw l = {0};

    return shape(type, NULL, 0, &l);
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
static void instr(struct pbw *comp, const char *name, const char *opcode, struct pbw shp,
                  int64_t id, const int64_t *ops, int nops, struct pbw *extra)
{
    struct pbw in = {0};

    pbw_str(&in, 1, name);
    pbw_str(&in, 2, opcode);
    pbw_msg(&in, 3, &shp);
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

#define NOOPS NULL, 0

static void param(struct pbw *comp, const char *name, struct pbw shp, int64_t id, int number)
{
    struct pbw x = {0};

    pbw_uint(&x, 9, (uint64_t)number);
    instr(comp, name, "parameter", shp, id, NOOPS, &x);
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

/* called_computation_ids. */
static struct pbw called(const int64_t *ids, int n)
{
    struct pbw x = {0};

    packed(&x, 38, ids, n);
    return x;
}

/* Append fields b (consumed) to x. */
static void append(struct pbw *x, struct pbw b)
{
    pbw_raw(x, b.p, b.n);
    free(b.p);
}

/* A computation "add" (id 100): f32[] x + y. */
static void add_region(struct pbw *m)
{
    struct pbw c = {0};

    param(&c, "x", scalar(F32), 1, 0);
    param(&c, "y", scalar(F32), 2, 1);
    instr(&c, "sum", "add", scalar(F32), 3, LIST(1, 2), NULL);
    comp_end(m, &c, "add", 100, 3);
}

/* Read module m (freed) into g, which must link. */
static void read_module(struct pbw *m, struct hlo_graph *g)
{
    assert_int_equal(hlo_graph_read(m->p, m->n, g), 0);
    free(m->p);
    memset(m, 0, sizeof(*m));
}

/* The node called name. */
static const struct hlo_node *node(const struct hlo_graph *g, const char *name)
{
    uint32_t i;

    for (i = 0; i < g->nnodes; i++) {
        if (strcmp(g->nodes[i].name, name) == 0)
            return &g->nodes[i];
    }
    fail_msg("no instruction %s", name);
    return NULL;
}

static void expect_text(const struct hlo_graph *g, const char *name, const char *want)
{
    assert_string_equal(node(g, name)->text, want);
}

/* ---- shapes ---- */

/* What hlo_shape_print writes for s. */
static char *shape_text(const struct hlo_shape *s, int with_layout)
{
    struct out o;
    char *t;
    size_t n;

    out_init(&o);
    hlo_shape_print(&o, s, with_layout);
    n = out_len(&o);
    t = calloc(n + 1, 1);
    assert_non_null(t);
    if (n > 0)
        memcpy(t, o.chunks[0], n);
    out_discard(&o);
    return t;
}

static void expect_shape(const struct hlo_shape *s, int with_layout, const char *want)
{
    char *t = shape_text(s, with_layout);

    assert_string_equal(t, want);
    free(t);
}

/* Shapes by hand: types, scalars, layouts, tiles, memory spaces, element
 * sizes, dynamic dimensions, tuples (nested, annotated every fifth). */
static void test_hlo_text_shape_print(void **state)
{
    int64_t d23[] = {2, 3}, m10[] = {1, 0}, d4[] = {4}, m0[] = {0}, dyn[] = {4, INT64_MIN};
    int64_t t1[] = {8, 128}, t2[] = {2, 1}, t3[] = {128}, tc[] = {INT64_MIN, 2};
    struct hlo_tile tiles[2] = {{2, t1}, {2, t2}}, one[1] = {{1, t3}}, comb[1] = {{2, tc}};
    struct hlo_layout_more tiled = {2, tiles, 0, 0, 0, 0, 0, NULL};
    struct hlo_layout_more scal = {1, one, 0, 0, 0, 0, 0, NULL};
    struct hlo_layout_more combine = {1, comb, 0, 0, 0, 0, 0, NULL};
    uint8_t dflags[] = {1, 1};
    struct hlo_shape s, el[6], inner[2];
    int i;

    (void)state;
    memset(&s, 0, sizeof(s));
    s.type = F32;
    expect_shape(&s, 1, "f32[]");
    s.has_layout = 1;
    expect_shape(&s, 1, "f32[]");
    s.more = &scal;
    expect_shape(&s, 1, "f32[]{:T(128)}");
    expect_shape(&s, 0, "f32[]");
    s.more = NULL;
    s.memory_space = 2;
    s.type = U32;
    expect_shape(&s, 1, "u32[]{:S(2)}");

    memset(&s, 0, sizeof(s));
    s.type = BF16;
    s.ndims = 2;
    s.dims = d23;
    s.has_layout = 1;
    s.nminor = 2;
    s.minor_to_major = m10;
    expect_shape(&s, 1, "bf16[2,3]{1,0}");
    expect_shape(&s, 0, "bf16[2,3]");
    s.more = &tiled;
    s.memory_space = 3;
    expect_shape(&s, 1, "bf16[2,3]{1,0:T(8,128)(2,1)S(3)}");
    s.more = &combine;
    s.memory_space = 0;
    expect_shape(&s, 1, "bf16[2,3]{1,0:T(*,2)}");
    s.more = NULL;
    s.type = S4;
    s.element_bits = 4;
    expect_shape(&s, 1, "s4[2,3]{1,0:E(4)}");
    s.element_bits = 0;
    s.type = F32;
    s.dims = dyn;
    s.dynamic = dflags;
    expect_shape(&s, 1, "f32[<=4,?]{1,0}");
    s.dynamic = NULL;
    s.has_layout = 0;
    s.type = PRED;
    s.dims = d23;
    expect_shape(&s, 1, "pred[2,3]");

    memset(inner, 0, sizeof(inner));
    inner[0].type = S32;
    inner[1].type = PRED;
    memset(el, 0, sizeof(el));
    for (i = 0; i < 6; i++) {
        el[i].type = F8E4M3FN;
        el[i].ndims = 1;
        el[i].dims = d4;
        el[i].has_layout = 1;
        el[i].nminor = 1;
        el[i].minor_to_major = m0;
    }
    el[1].type = TUPLE;
    el[1].ndims = 0;
    el[1].ntuple = 2;
    el[1].tuple = inner;
    el[2].type = TOKEN;
    el[3].type = OPAQUE;
    el[4].type = F8E5M2;
    memset(&s, 0, sizeof(s));
    s.type = TUPLE;
    s.ntuple = 6;
    s.tuple = el;
    expect_shape(&s, 1,
                 "(f8e4m3fn[4]{0}, (s32[], pred[]), token[], opaque[], f8e5m2[4]{0}, "
                 "/*index=5*/f8e4m3fn[4]{0})");
    s.ntuple = 0;
    expect_shape(&s, 1, "()");
}

/* ---- instructions ---- */

/* A fusion with TPU layouts (tiles, memory spaces) read from the proto,
 * kind and calls; instructions inside the fusion computation get no text;
 * a tuple annotates its fifth operand. */
static void test_hlo_text_fusion(void **state)
{
    struct pbw m = {0}, f = {0}, c = {0}, x = {0}, l, ts[2];
    struct hlo_graph g;
    int i;

    (void)state;
    param(&f, "p0", ARR(BF16, 6, 4096, 4096), 1, 0);
    param(&f, "p1", scalar(BF16), 2, 1);
    instr(&f, "r", "tuple", tuple2(scalar(F32), ARR(BF16, 2048, 4096)), 3, NOOPS, NULL);
    comp_end(&m, &f, "fused_computation.20", 1, 3);

    l = layout(LIST(2, 1, 0));
    tile(&l, LIST(8, 128));
    tile(&l, LIST(2, 1));
    param(&c, "param.3", shape(BF16, LIST(6, 4096, 4096), &l), 10, 0);
    l = (struct pbw){0};
    tile(&l, LIST(256));
    pbw_uint(&l, 8, 6);
    param(&c, "add.30", shape(BF16, NULL, 0, &l), 11, 1);
    ts[0] = (struct pbw){0};
    tile(&ts[0], LIST(128));
    ts[1] = layout(LIST(1, 0));
    tile(&ts[1], LIST(8, 128));
    tile(&ts[1], LIST(2, 1));
    pbw_uint(&ts[1], 8, 3);
    pbw_str(&x, 11, "kOutput");
    append(&x, called(LIST(1)));
    instr(&c, "convert_reduce_fusion.4", "fusion",
          tuple2(shape(F32, NULL, 0, &ts[0]), shape(BF16, LIST(2048, 4096), &ts[1])), 12,
          LIST(10, 11), &x);
    for (i = 0; i < 6; i++) {
        char name[8];
        snprintf(name, sizeof(name), "v%d", i);
        param(&c, name, scalar(F32), 20 + i, 2 + i);
    }
    instr(&c, "t", "tuple", scalar(F32), 30, LIST(20, 21, 22, 23, 24, 25), NULL);
    comp_end(&m, &c, "main", 2, 12);
    read_module(&m, &g);
    expect_text(&g, "convert_reduce_fusion.4",
                "%convert_reduce_fusion.4 = (f32[]{:T(128)}, "
                "bf16[2048,4096]{1,0:T(8,128)(2,1)S(3)}) "
                "fusion(bf16[6,4096,4096]{2,1,0:T(8,128)(2,1)} %param.3, "
                "bf16[]{:T(256)S(6)} %add.30), kind=kOutput, calls=%fused_computation.20");
    expect_text(&g, "param.3", "%param.3 = bf16[6,4096,4096]{2,1,0:T(8,128)(2,1)} parameter(0)");
    expect_text(&g, "t",
                "%t = f32[] tuple(f32[] %v0, f32[] %v1, f32[] %v2, f32[] %v3, f32[] %v4, "
                "/*index=5*/f32[] %v5)");
    expect_text(&g, "p0", "");
    expect_text(&g, "r", "");
    hlo_graph_free(&g);
}

/* A SliceDimensions message into x. */
static void slice_dim(struct pbw *x, int64_t start, int64_t limit, int64_t stride)
{
    struct pbw d = {0};

    pbw_uint(&d, 1, (uint64_t)start);
    pbw_uint(&d, 2, (uint64_t)limit);
    pbw_uint(&d, 3, (uint64_t)stride);
    pbw_msg(x, 17, &d);
}

/* Slices (strides shown unless all 1), dimensions, reduce with to_apply,
 * concatenate, iota, pad, dynamic-slice, sort, get-tuple-element, reshape. */
static void test_hlo_text_array_ops(void **state)
{
    struct pbw m = {0}, c = {0}, x = {0}, pc = {0}, d = {0};
    struct hlo_graph g;

    (void)state;
    add_region(&m);
    param(&c, "p", ARR(F32, 4, 3), 1, 0);
    param(&c, "z", scalar(F32), 2, 1);
    slice_dim(&x, 0, 2, 1);
    slice_dim(&x, 1, 3, 2);
    instr(&c, "slice.1", "slice", ARR(F32, 2, 1), 3, LIST(1), &x);
    slice_dim(&x, 0, 2, 1);
    slice_dim(&x, 1, 3, 1);
    instr(&c, "slice.2", "slice", ARR(F32, 2, 2), 4, LIST(1), &x);
    packed(&x, 14, LIST(1, 0));
    instr(&c, "tr", "transpose", ARR(F32, 3, 4), 5, LIST(1), &x);
    packed(&x, 14, LIST(1));
    append(&x, called(LIST(100)));
    instr(&c, "red", "reduce", ARR(F32, 4), 6, LIST(1, 2), &x);
    packed(&x, 14, LIST(0));
    instr(&c, "cat", "concatenate", ARR(F32, 8, 3), 7, LIST(1, 1), &x);
    packed(&x, 14, LIST(0, 1));
    instr(&c, "bc", "broadcast", ARR(F32, 4, 3, 2), 8, LIST(1), &x);
    packed(&x, 14, LIST(1));
    instr(&c, "io", "iota", ARR(S32, 4, 3), 9, NOOPS, &x);
    pbw_uint(&d, 1, 0);
    pbw_uint(&d, 2, 0);
    pbw_msg(&pc, 1, &d);
    pbw_uint(&d, 1, 1);
    pbw_uint(&d, 2, 1);
    pbw_msg(&pc, 1, &d);
    pbw_msg(&x, 21, &pc);
    instr(&c, "pad", "pad", ARR(F32, 4, 5), 10, LIST(1, 2), &x);
    pbw_uint(&d, 1, 0);
    pbw_uint(&d, 2, 0);
    pbw_msg(&pc, 1, &d);
    pbw_uint(&d, 1, (uint64_t)-1);
    pbw_uint(&d, 2, 1);
    pbw_uint(&d, 3, 2);
    pbw_msg(&pc, 1, &d);
    pbw_msg(&x, 21, &pc);
    instr(&c, "pad.i", "pad", ARR(F32, 4, 7), 11, LIST(1, 2), &x);
    packed(&x, 20, LIST(2, 2));
    instr(&c, "ds", "dynamic-slice", ARR(F32, 2, 2), 12, LIST(1, 13, 13), &x);
    param(&c, "i", scalar(S32), 13, 2);
    packed(&x, 14, LIST(0));
    pbw_uint(&x, 60, 1);
    append(&x, called(LIST(100)));
    instr(&c, "sort", "sort", ARR(F32, 4, 3), 14, LIST(1), &x);
    pbw_uint(&x, 13, 1);
    instr(&c, "gte", "get-tuple-element", scalar(S32), 15, LIST(16), &x);
    instr(&c, "tup", "tuple", tuple2(scalar(F32), scalar(S32)), 16, LIST(2, 13), NULL);
    instr(&c, "rs", "reshape", ARR(F32, 12), 17, LIST(1), NULL);
    comp_end(&m, &c, "main", 1, 17);
    read_module(&m, &g);
    expect_text(&g, "slice.1",
                "%slice.1 = f32[2,1]{1,0} slice(f32[4,3]{1,0} %p), slice={[0:2:1], [1:3:2]}");
    expect_text(&g, "slice.2",
                "%slice.2 = f32[2,2]{1,0} slice(f32[4,3]{1,0} %p), slice={[0:2], [1:3]}");
    expect_text(&g, "tr", "%tr = f32[3,4]{1,0} transpose(f32[4,3]{1,0} %p), dimensions={1,0}");
    expect_text(
        &g, "red",
        "%red = f32[4]{0} reduce(f32[4,3]{1,0} %p, f32[] %z), dimensions={1}, to_apply=%add");
    expect_text(
        &g, "cat",
        "%cat = f32[8,3]{1,0} concatenate(f32[4,3]{1,0} %p, f32[4,3]{1,0} %p), dimensions={0}");
    expect_text(&g, "bc", "%bc = f32[4,3,2]{2,1,0} broadcast(f32[4,3]{1,0} %p), dimensions={0,1}");
    expect_text(&g, "io", "%io = s32[4,3]{1,0} iota(), iota_dimension=1");
    expect_text(&g, "pad", "%pad = f32[4,5]{1,0} pad(f32[4,3]{1,0} %p, f32[] %z), padding=0_0x1_1");
    expect_text(&g, "pad.i",
                "%pad.i = f32[4,7]{1,0} pad(f32[4,3]{1,0} %p, f32[] %z), padding=0_0_0x-1_1_2");
    expect_text(&g, "ds",
                "%ds = f32[2,2]{1,0} dynamic-slice(f32[4,3]{1,0} %p, s32[] %i, s32[] %i), "
                "dynamic_slice_sizes={2,2}");
    expect_text(&g, "sort",
                "%sort = f32[4,3]{1,0} sort(f32[4,3]{1,0} %p), dimensions={0}, is_stable=true, "
                "to_apply=%add");
    expect_text(&g, "gte", "%gte = s32[] get-tuple-element((f32[], s32[]) %tup), index=1");
    expect_text(&g, "rs", "%rs = f32[12]{0} reshape(f32[4,3]{1,0} %p)");
    expect_text(&g, "i", "%i = s32[] parameter(2)");
    expect_text(&g, "sum", "%sum = f32[] add(f32[] %x, f32[] %y)");
    hlo_graph_free(&g);
}

/* A window dimension into w. */
static void window_dim(struct pbw *w, int64_t size, int64_t stride, int64_t lo, int64_t hi,
                       int64_t wdil, int64_t bdil)
{
    struct pbw d = {0};

    pbw_uint(&d, 1, (uint64_t)size);
    pbw_uint(&d, 2, (uint64_t)stride);
    pbw_uint(&d, 3, (uint64_t)lo);
    pbw_uint(&d, 4, (uint64_t)hi);
    pbw_uint(&d, 5, (uint64_t)wdil);
    pbw_uint(&d, 6, (uint64_t)bdil);
    pbw_msg(w, 1, &d);
}

/* Convolution dimension numbers b01f / 01io / b01f into x. */
static void conv_numbers(struct pbw *x)
{
    struct pbw d = {0};

    pbw_uint(&d, 7, 0);
    pbw_uint(&d, 8, 3);
    packed(&d, 11, LIST(1, 2));
    pbw_uint(&d, 3, 2);
    pbw_uint(&d, 4, 3);
    packed(&d, 6, LIST(0, 1));
    pbw_uint(&d, 9, 0);
    pbw_uint(&d, 10, 3);
    packed(&d, 12, LIST(1, 2));
    pbw_msg(x, 16, &d);
}

/* Convolutions (window, dim_labels, groups, dilations), dots (batch and
 * contracting dimensions, operand precision), reduce-window. */
static void test_hlo_text_conv_dot(void **state)
{
    struct pbw m = {0}, c = {0}, x = {0}, w = {0}, dn = {0}, pr = {0};
    struct hlo_graph g;

    (void)state;
    add_region(&m);
    param(&c, "x", ARR(F32, 1, 8, 8, 4), 1, 0);
    param(&c, "k", ARR(F32, 3, 3, 2, 16), 2, 1);
    window_dim(&w, 3, 1, 1, 1, 1, 1);
    window_dim(&w, 3, 1, 1, 1, 1, 1);
    pbw_msg(&x, 15, &w);
    conv_numbers(&x);
    pbw_uint(&x, 50, 2);
    instr(&c, "conv", "convolution", ARR(F32, 1, 8, 8, 16), 3, LIST(1, 2), &x);
    window_dim(&w, 3, 2, 0, 1, 2, 1);
    window_dim(&w, 1, 1, 0, 0, 1, 3);
    pbw_msg(&x, 15, &w);
    conv_numbers(&x);
    pbw_uint(&x, 58, 4);
    instr(&c, "conv.d", "convolution", ARR(F32, 1, 4, 24, 16), 4, LIST(1, 2), &x);
    param(&c, "a", ARR(F32, 2, 3, 4), 5, 2);
    param(&c, "b", ARR(F32, 2, 4, 5), 6, 3);
    packed(&dn, 3, LIST(0));
    packed(&dn, 1, LIST(2));
    packed(&dn, 4, LIST(0));
    packed(&dn, 2, LIST(1));
    pbw_msg(&x, 30, &dn);
    packed(&pr, 1, LIST(0, 2));
    pbw_msg(&x, 51, &pr);
    instr(&c, "dot", "dot", ARR(F32, 2, 3, 5), 7, LIST(5, 6), &x);
    param(&c, "m1", ARR(F32, 3, 4), 8, 4);
    param(&c, "m2", ARR(F32, 4, 5), 9, 5);
    packed(&dn, 1, LIST(1));
    packed(&dn, 2, LIST(0));
    pbw_msg(&x, 30, &dn);
    packed(&pr, 1, LIST(0, 0, 1));
    pbw_uint(&pr, 2, 6);
    pbw_msg(&x, 51, &pr);
    instr(&c, "dot.2", "dot", ARR(F32, 3, 5), 10, LIST(8, 9), &x);
    param(&c, "z", scalar(F32), 11, 6);
    window_dim(&w, 2, 2, 0, 0, 1, 1);
    pbw_msg(&x, 15, &w);
    append(&x, called(LIST(100)));
    instr(&c, "rw", "reduce-window", ARR(F32, 2, 4, 5), 12, LIST(6, 11), &x);
    comp_end(&m, &c, "main", 1, 12);
    read_module(&m, &g);
    expect_text(&g, "conv",
                "%conv = f32[1,8,8,16]{3,2,1,0} convolution(f32[1,8,8,4]{3,2,1,0} %x, "
                "f32[3,3,2,16]{3,2,1,0} %k), window={size=3x3 pad=1_1x1_1}, "
                "dim_labels=b01f_01io->b01f, feature_group_count=2");
    expect_text(&g, "conv.d",
                "%conv.d = f32[1,4,24,16]{3,2,1,0} convolution(f32[1,8,8,4]{3,2,1,0} %x, "
                "f32[3,3,2,16]{3,2,1,0} %k), window={size=3x1 stride=2x1 pad=0_1x0_0 "
                "lhs_dilate=1x3 rhs_dilate=2x1}, dim_labels=b01f_01io->b01f, "
                "batch_group_count=4");
    expect_text(&g, "dot",
                "%dot = f32[2,3,5]{2,1,0} dot(f32[2,3,4]{2,1,0} %a, f32[2,4,5]{2,1,0} %b), "
                "lhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_batch_dims={0}, "
                "rhs_contracting_dims={1}, operand_precision={default,highest}");
    expect_text(&g, "dot.2",
                "%dot.2 = f32[3,5]{1,0} dot(f32[3,4]{1,0} %m1, f32[4,5]{1,0} %m2), "
                "lhs_contracting_dims={1}, rhs_contracting_dims={0}, "
                "algorithm=dot_bf16_bf16_f32");
    expect_text(&g, "rw",
                "%rw = f32[2,4,5]{2,1,0} reduce-window(f32[2,4,5]{2,1,0} %b, f32[] %z), "
                "window={size=2 stride=2}, to_apply=%add");
    hlo_graph_free(&g);
}

/* Compare directions and non-default types; custom calls (escaped targets,
 * side effects, schedules, API versions, operand layouts); rng. */
static void test_hlo_text_compare_custom_call(void **state)
{
    struct pbw m = {0}, c = {0}, x = {0}, s;
    struct hlo_graph g;

    (void)state;
    param(&c, "a", ARR(F32, 4), 1, 0);
    param(&c, "b", ARR(F32, 4), 2, 1);
    param(&c, "i", ARR(S32, 4), 3, 2);
    pbw_str(&x, 63, "LT");
    instr(&c, "lt", "compare", ARR(PRED, 4), 4, LIST(1, 2), &x);
    pbw_str(&x, 63, "LT");
    pbw_str(&x, 72, "TOTALORDER");
    instr(&c, "lt.t", "compare", ARR(PRED, 4), 5, LIST(1, 2), &x);
    pbw_str(&x, 63, "GE");
    pbw_str(&x, 72, "FLOAT");
    instr(&c, "ge", "compare", ARR(PRED, 4), 6, LIST(1, 2), &x);
    pbw_str(&x, 63, "EQ");
    pbw_str(&x, 72, "SIGNED");
    instr(&c, "eq", "compare", ARR(PRED, 4), 7, LIST(3, 3), &x);
    pbw_str(&x, 63, "NE");
    pbw_str(&x, 72, "UNSIGNED");
    instr(&c, "ne", "compare", ARR(PRED, 4), 8, LIST(3, 3), &x);
    instr(&c, "old", "less-than", ARR(PRED, 4), 9, LIST(1, 2), NULL);
    pbw_str(&x, 28, "__cublas$gemm");
    pbw_uint(&x, 77, 1);
    instr(&c, "gemm", "custom-call", tuple2(ARR(F32, 4), ARR(S8, 16)), 10, LIST(1, 2), &x);
    pbw_str(&x, 28, "my\"op\n\x01");
    pbw_uint(&x, 65, 1);
    pbw_uint(&x, 76, 1);
    pbw_uint(&x, 77, 4);
    pbw_uint(&x, 56, 1);
    s = ARR(F32, 4);
    pbw_msg(&x, 57, &s);
    instr(&c, "cc", "custom-call", ARR(F32, 4), 11, LIST(1), &x);
    instr(&c, "cc.0", "custom-call", ARR(F32, 4), 12, LIST(1), NULL);
    pbw_uint(&x, 70, 2);
    instr(&c, "rng", "rng-bit-generator", tuple2(ARR(U32, 2), ARR(U32, 4)), 13, LIST(14), &x);
    param(&c, "st", ARR(U32, 2), 14, 3);
    comp_end(&m, &c, "main", 1, 11);
    read_module(&m, &g);
    expect_text(&g, "lt", "%lt = pred[4]{0} compare(f32[4]{0} %a, f32[4]{0} %b), direction=LT");
    expect_text(
        &g, "lt.t",
        "%lt.t = pred[4]{0} compare(f32[4]{0} %a, f32[4]{0} %b), direction=LT, type=TOTALORDER");
    expect_text(&g, "ge", "%ge = pred[4]{0} compare(f32[4]{0} %a, f32[4]{0} %b), direction=GE");
    expect_text(&g, "eq", "%eq = pred[4]{0} compare(s32[4]{0} %i, s32[4]{0} %i), direction=EQ");
    expect_text(
        &g, "ne",
        "%ne = pred[4]{0} compare(s32[4]{0} %i, s32[4]{0} %i), direction=NE, type=UNSIGNED");
    expect_text(&g, "old", "%old = pred[4]{0} compare(f32[4]{0} %a, f32[4]{0} %b), direction=LT");
    expect_text(&g, "gemm",
                "%gemm = (f32[4]{0}, s8[16]{0}) custom-call(f32[4]{0} %a, f32[4]{0} %b), "
                "custom_call_target=\"__cublas$gemm\"");
    expect_text(
        &g, "cc",
        "%cc = f32[4]{0} custom-call(f32[4]{0} %a), custom_call_target=\"my\\\"op\\n\\001\", "
        "operand_layout_constraints={f32[4]{0}}, custom_call_has_side_effect=true, "
        "schedule=SCHEDULE_LATEST, api_version=API_VERSION_TYPED_FFI");
    expect_text(&g, "cc.0",
                "%cc.0 = f32[4]{0} custom-call(f32[4]{0} %a), custom_call_target=\"\", "
                "api_version=API_VERSION_UNSPECIFIED");
    expect_text(&g, "rng",
                "%rng = (u32[2]{0}, u32[4]{0}) rng-bit-generator(u32[2]{0} %st), "
                "algorithm=rng_philox");
    hlo_graph_free(&g);
}

/* A ReplicaGroup into x as field f. */
static void group(struct pbw *x, uint32_t f, const int64_t *ids, int n)
{
    struct pbw r = {0};

    packed(&r, 1, ids, n);
    pbw_msg(x, f, &r);
}

/* An IotaReplicaGroupListProto into x as field f. */
static void iota_list(struct pbw *x, uint32_t f, int64_t groups, int64_t per, const int64_t *dims,
                      int nd, const int64_t *perm, int np)
{
    struct pbw l = {0};

    pbw_uint(&l, 1, (uint64_t)groups);
    pbw_uint(&l, 2, (uint64_t)per);
    if (nd > 0)
        packed(&l, 3, dims, nd);
    if (np > 0)
        packed(&l, 4, perm, np);
    pbw_msg(x, f, &l);
}

/* Collectives: channel ids, explicit replica groups, iota lists (in
 * collective_device_list and on their own), mesh axes, dimensions, global
 * device ids, to_apply; collective-permute pairs; send / recv. */
static void test_hlo_text_collectives(void **state)
{
    struct pbw m = {0}, c = {0}, x = {0}, dl = {0}, mesh = {0}, ax = {0}, ml = {0}, p = {0};
    struct hlo_graph g;

    (void)state;
    add_region(&m);
    param(&c, "a", ARR(F32, 8), 1, 0);
    pbw_uint(&x, 26, 1);
    group(&x, 49, LIST(0, 1));
    group(&x, 49, LIST(2, 3));
    pbw_uint(&x, 71, 1);
    append(&x, called(LIST(100)));
    instr(&c, "ar", "all-reduce", ARR(F32, 8), 2, LIST(1), &x);
    iota_list(&dl, 2, 2, 2, LIST(4), LIST(0));
    pbw_msg(&x, 87, &dl);
    packed(&x, 14, LIST(0));
    instr(&c, "ag", "all-gather", ARR(F32, 16), 3, LIST(1), &x);
    iota_list(&x, 92, 2, 2, LIST(2, 2), LIST(1, 0));
    packed(&x, 14, LIST(0));
    pbw_uint(&x, 26, 3);
    append(&x, called(LIST(100)));
    instr(&c, "rs", "reduce-scatter", ARR(F32, 4), 4, LIST(1), &x);
    pbw_str(&ax, 1, "'fsdp'");
    pbw_uint(&ax, 2, 4);
    pbw_msg(&mesh, 1, &ax);
    pbw_msg(&ml, 1, &mesh);
    pbw_uint(&ax, 1, 0);
    pbw_msg(&ml, 2, &ax);
    pbw_msg(&x, 93, &ml);
    pbw_uint(&x, 26, 1);
    pbw_uint(&x, 71, 1);
    append(&x, called(LIST(100)));
    instr(&c, "psum", "all-reduce", ARR(F32, 8), 5, LIST(1), &x);
    group(&dl, 1, LIST(0, 1, 2, 3));
    pbw_msg(&x, 87, &dl);
    pbw_uint(&x, 56, 1);
    instr(&c, "a2a", "all-to-all", ARR(F32, 8), 6, LIST(1), &x);
    append(&x, called(LIST(100)));
    instr(&c, "ar.s", "all-reduce-start", ARR(F32, 8), 7, LIST(1), &x);
    instr(&c, "ar.d", "all-reduce-done", ARR(F32, 8), 8, LIST(7), NULL);
    pbw_uint(&x, 26, 2);
    pbw_uint(&p, 1, 0);
    pbw_uint(&p, 2, 1);
    pbw_msg(&x, 52, &p);
    pbw_uint(&p, 1, 1);
    pbw_uint(&p, 2, 0);
    pbw_msg(&x, 52, &p);
    instr(&c, "cp", "collective-permute", ARR(F32, 8), 9, LIST(1), &x);
    instr(&c, "tok", "after-all", shape(TOKEN, NULL, 0, NULL), 10, NOOPS, NULL);
    pbw_uint(&x, 26, 5);
    pbw_uint(&x, 47, 1);
    instr(&c, "send", "send", tuple2(ARR(F32, 8), scalar(U32)), 11, LIST(1, 10), &x);
    comp_end(&m, &c, "main", 1, 9);
    read_module(&m, &g);
    expect_text(&g, "ar",
                "%ar = f32[8]{0} all-reduce(f32[8]{0} %a), channel_id=1, "
                "replica_groups={{0,1},{2,3}}, use_global_device_ids=true, to_apply=%add");
    expect_text(
        &g, "ag",
        "%ag = f32[16]{0} all-gather(f32[8]{0} %a), replica_groups=[2,2]<=[4], dimensions={0}");
    expect_text(&g, "rs",
                "%rs = f32[4]{0} reduce-scatter(f32[8]{0} %a), channel_id=3, "
                "replica_groups=[2,2]<=[2,2]T(1,0), dimensions={0}, to_apply=%add");
    expect_text(
        &g, "psum",
        "%psum = f32[8]{0} all-reduce(f32[8]{0} %a), channel_id=1, "
        "replica_groups=mesh['fsdp'=4] {'fsdp'}, use_global_device_ids=true, to_apply=%add");
    expect_text(&g, "a2a",
                "%a2a = f32[8]{0} all-to-all(f32[8]{0} %a), replica_groups={{0,1,2,3}}, "
                "constrain_layout=true");
    expect_text(
        &g, "ar.s",
        "%ar.s = f32[8]{0} all-reduce-start(f32[8]{0} %a), replica_groups={}, to_apply=%add");
    expect_text(&g, "ar.d", "%ar.d = f32[8]{0} all-reduce-done(f32[8]{0} %ar.s)");
    expect_text(&g, "cp",
                "%cp = f32[8]{0} collective-permute(f32[8]{0} %a), channel_id=2, "
                "source_target_pairs={{0,1},{1,0}}");
    expect_text(&g, "tok", "%tok = token[] after-all()");
    expect_text(&g, "send",
                "%send = (f32[8]{0}, u32[]) send(f32[8]{0} %a, token[] %tok), channel_id=5, "
                "is_host_transfer=true");
    hlo_graph_free(&g);
}

/* A LiteralProto of shape s (consumed) with values already in v (consumed). */
static void literal(struct pbw *x, struct pbw s, struct pbw *v)
{
    struct pbw l = {0};

    pbw_msg(&l, 1, &s);
    if (v != NULL) {
        pbw_raw(&l, v->p, v->n);
        free(v->p);
        memset(v, 0, sizeof(*v));
    }
    pbw_msg(x, 8, &l);
}

/* Packed floats as field f. */
static void floats(struct pbw *w, uint32_t f, const float *v, int n)
{
    pbw_bytes(w, f, v, (size_t)n * sizeof(*v));
}

/* Constants: scalars of several types, small arrays (in layout order), the
 * elided forms, a literal too short for its shape. */
static void test_hlo_text_constants(void **state)
{
    struct pbw m = {0}, c = {0}, x = {0}, v = {0}, l;
    struct hlo_graph g;
    const float one = 1.0f, tenth = 0.1f, third = 1.0f / 3, ninf = -1.0f / 0.0f;
    const float four[] = {1, 2, 3, 4};
    const uint8_t bf[] = {0xc0, 0x3f}, f8[] = {0x38, 0x7f};

    (void)state;
    floats(&v, 8, &one, 1);
    literal(&x, scalar(F32), &v);
    instr(&c, "c1", "constant", scalar(F32), 1, NOOPS, &x);
    floats(&v, 8, &tenth, 1);
    literal(&x, scalar(F32), &v);
    instr(&c, "c2", "constant", scalar(F32), 2, NOOPS, &x);
    floats(&v, 8, &third, 1);
    literal(&x, scalar(F32), &v);
    instr(&c, "c3", "constant", scalar(F32), 3, NOOPS, &x);
    floats(&v, 8, &ninf, 1);
    literal(&x, scalar(F32), &v);
    instr(&c, "c4", "constant", scalar(F32), 4, NOOPS, &x);
    packed(&v, 4, LIST(-3));
    literal(&x, scalar(S32), &v);
    instr(&c, "c5", "constant", scalar(S32), 5, NOOPS, &x);
    packed(&v, 2, LIST(1));
    literal(&x, scalar(PRED), &v);
    instr(&c, "c6", "constant", scalar(PRED), 6, NOOPS, &x);
    pbw_bytes(&v, 13, bf, 2);
    literal(&x, scalar(BF16), &v);
    instr(&c, "c7", "constant", scalar(BF16), 7, NOOPS, &x);
    packed(&v, 4, LIST(1, 2));
    literal(&x, ARR(S32, 2), &v);
    instr(&c, "c8", "constant", ARR(S32, 2), 8, NOOPS, &x);
    floats(&v, 8, four, 4);
    literal(&x, ARR(F32, 2, 2), &v);
    instr(&c, "c9", "constant", ARR(F32, 2, 2), 9, NOOPS, &x);
    floats(&v, 8, four, 4);
    l = layout(LIST(0, 1));
    literal(&x, shape(F32, LIST(2, 2), &l), &v);
    instr(&c, "c10", "constant", ARR(F32, 2, 2), 10, NOOPS, &x);
    packed(&v, 2, LIST(1, 0, 1));
    literal(&x, ARR(PRED, 3), &v);
    instr(&c, "c11", "constant", ARR(PRED, 3), 11, NOOPS, &x);
    floats(&v, 8, four, 4);
    literal(&x, ARR(F32, 11), &v);
    instr(&c, "c12", "constant", ARR(F32, 11), 12, NOOPS, &x);
    instr(&c, "c13", "constant", ARR(F32, 2), 13, NOOPS, NULL);
    floats(&v, 8, four, 1);
    literal(&x, ARR(F32, 2), &v);
    instr(&c, "c14", "constant", ARR(F32, 2), 14, NOOPS, &x);
    pbw_bytes(&v, 20, f8, 2);
    literal(&x, ARR(F8E4M3FN, 2), &v);
    instr(&c, "c15", "constant", ARR(F8E4M3FN, 2), 15, NOOPS, &x);
    floats(&v, 8, four, 1);
    literal(&x, ARR(F32, 1, 1, 1, 1), &v);
    instr(&c, "c16", "constant", ARR(F32, 1, 1, 1, 1), 16, NOOPS, &x);
    comp_end(&m, &c, "main", 1, 16);
    read_module(&m, &g);
    expect_text(&g, "c1", "%c1 = f32[] constant(1)");
    expect_text(&g, "c2", "%c2 = f32[] constant(0.1)");
    expect_text(&g, "c3", "%c3 = f32[] constant(0.333333343)");
    expect_text(&g, "c4", "%c4 = f32[] constant(-inf)");
    expect_text(&g, "c5", "%c5 = s32[] constant(-3)");
    expect_text(&g, "c6", "%c6 = pred[] constant(true)");
    expect_text(&g, "c7", "%c7 = bf16[] constant(1.5)");
    expect_text(&g, "c8", "%c8 = s32[2]{0} constant({1, 2})");
    expect_text(&g, "c9", "%c9 = f32[2,2]{1,0} constant({ { 1, 2 }, { 3, 4 } })");
    expect_text(&g, "c10", "%c10 = f32[2,2]{1,0} constant({ { 1, 3 }, { 2, 4 } })");
    expect_text(&g, "c11", "%c11 = pred[3]{0} constant({1, 0, 1})");
    expect_text(&g, "c12", "%c12 = f32[11]{0} constant({...})");
    expect_text(&g, "c13", "%c13 = f32[2]{0} constant({...})");
    expect_text(&g, "c14", "%c14 = f32[2]{0} constant({...})");
    expect_text(&g, "c15", "%c15 = f8e4m3fn[2]{0} constant({1, nan})");
    expect_text(&g, "c16",
                "%c16 = f32[1,1,1,1]{3,2,1,0} constant({ { /*i0=0*/ { /*i1=0*/ {1} } } })");
    hlo_graph_free(&g);
}

/* An OpSharding of type with tile dims and devices (n < 0: none). */
static struct pbw sharding(int type, const int64_t *dims, int nd, const int64_t *dev, int ndev)
{
    struct pbw s = {0};

    pbw_uint(&s, 1, (uint64_t)type);
    if (nd > 0)
        packed(&s, 3, dims, nd);
    if (ndev > 0)
        packed(&s, 4, dev, ndev);
    return s;
}

/* The parameter name with sharding sh (consumed) of shape shp. */
static void sharded(struct pbw *c, const char *name, struct pbw shp, int64_t id, struct pbw *sh)
{
    struct pbw x = {0};

    pbw_uint(&x, 9, (uint64_t)(id - 1));
    pbw_msg(&x, 40, sh);
    instr(c, name, "parameter", shp, id, NOOPS, &x);
}

/* Shardings: replicated, maximal, explicit and iota tiles, partial
 * replication (devices sorted per group, degenerate forms), subgroups,
 * shard groups, tuples and the tuple normalization of a non-tuple
 * sharding; an invalid one is left out. */
static void test_hlo_text_sharding(void **state)
{
    struct pbw m = {0}, c = {0}, s, t, e;
    struct hlo_graph g;

    (void)state;
    s = sharding(0, NOOPS, NOOPS);
    sharded(&c, "rep", ARR(F32, 4), 1, &s);
    s = sharding(1, NOOPS, LIST(1));
    sharded(&c, "max", ARR(F32, 4), 2, &s);
    s = sharding(3, LIST(2, 1), LIST(0, 1));
    sharded(&c, "tiled", ARR(F32, 4, 2), 3, &s);
    s = sharding(3, LIST(4, 1), NOOPS);
    packed(&s, 9, LIST(4));
    packed(&s, 10, LIST(0));
    sharded(&c, "iota", ARR(F32, 4, 2), 4, &s);
    s = sharding(3, LIST(2, 2), NOOPS);
    packed(&s, 9, LIST(2, 2));
    packed(&s, 10, LIST(1, 0));
    sharded(&c, "iota.t", ARR(F32, 4, 2), 5, &s);
    s = sharding(3, LIST(2, 2), LIST(1, 0, 3, 2));
    pbw_uint(&s, 6, 1);
    sharded(&c, "partial", ARR(F32, 4), 6, &s);
    s = sharding(3, LIST(1, 4), LIST(0, 1, 2, 3));
    pbw_uint(&s, 6, 1);
    sharded(&c, "partial.r", ARR(F32, 4), 7, &s);
    s = sharding(3, LIST(2, 2), LIST(0, 1, 2, 3));
    packed(&s, 8, LIST(4));
    sharded(&c, "manual", ARR(F32, 4), 8, &s);
    s = sharding(0, NOOPS, NOOPS);
    pbw_uint(&s, 11, 1);
    pbw_uint(&s, 12, 3);
    sharded(&c, "group", ARR(F32, 4), 9, &s);
    t = sharding(2, NOOPS, NOOPS);
    e = sharding(0, NOOPS, NOOPS);
    pbw_msg(&t, 5, &e);
    e = sharding(1, NOOPS, LIST(0));
    pbw_msg(&t, 5, &e);
    sharded(&c, "tup", tuple2(scalar(F32), scalar(F32)), 10, &t);
    s = sharding(0, NOOPS, NOOPS);
    sharded(&c, "norm", tuple2(scalar(F32), tuple2(scalar(F32), scalar(S32))), 11, &s);
    s = sharding(3, LIST(2, 2), LIST(0, 1, 2));
    sharded(&c, "bad", ARR(F32, 4), 12, &s);
    s = sharding(3, LIST(2, 4), LIST(7, 6, 5, 4, 3, 2, 1, 0));
    packed(&s, 8, LIST(4, 0));
    sharded(&c, "mixed", ARR(F32, 4), 13, &s);
    comp_end(&m, &c, "main", 1, 1);
    read_module(&m, &g);
    expect_text(&g, "rep", "%rep = f32[4]{0} parameter(0), sharding={replicated}");
    expect_text(&g, "max", "%max = f32[4]{0} parameter(1), sharding={maximal device=1}");
    expect_text(&g, "tiled", "%tiled = f32[4,2]{1,0} parameter(2), sharding={devices=[2,1]0,1}");
    expect_text(&g, "iota", "%iota = f32[4,2]{1,0} parameter(3), sharding={devices=[4,1]<=[4]}");
    expect_text(&g, "iota.t",
                "%iota.t = f32[4,2]{1,0} parameter(4), sharding={devices=[2,2]<=[2,2]T(1,0)}");
    expect_text(&g, "partial",
                "%partial = f32[4]{0} parameter(5), "
                "sharding={devices=[2,2]0,1,2,3 last_tile_dim_replicate}");
    expect_text(&g, "partial.r", "%partial.r = f32[4]{0} parameter(6), sharding={replicated}");
    expect_text(&g, "manual",
                "%manual = f32[4]{0} parameter(7), sharding={devices=[2,2]0,1,2,3 "
                "last_tile_dims={manual}}");
    expect_text(&g, "group", "%group = f32[4]{0} parameter(8), sharding={replicated shard_as 3}");
    expect_text(&g, "tup",
                "%tup = (f32[], f32[]) parameter(9), sharding={{replicated}, {maximal device=0}}");
    expect_text(&g, "norm",
                "%norm = (f32[], (f32[], s32[])) parameter(10), "
                "sharding={{replicated}, {replicated}, {replicated}}");
    expect_text(&g, "bad", "%bad = f32[4]{0} parameter(11)");
    expect_text(&g, "mixed",
                "%mixed = f32[4]{0} parameter(12), "
                "sharding={devices=[2,4]4,5,6,7,0,1,2,3 last_tile_dims={manual, replicated}}");
    hlo_graph_free(&g);
}

/* A FrontendAttributes map entry into map. */
static void attr(struct pbw *map, const char *k, const char *v)
{
    struct pbw e = {0};

    pbw_str(&e, 1, k);
    pbw_str(&e, 2, v);
    pbw_msg(map, 1, &e);
}

/* Control predecessors (each once, in order, unknown ids left out),
 * frontend attributes (sorted, JSON dicts bare, others quoted and
 * escaped), statistics; names as XLA sanitizes them. */
static void test_hlo_text_generic_attrs(void **state)
{
    struct pbw m = {0}, c = {0}, x = {0}, fa = {0}, st = {0}, s1 = {0};
    struct hlo_graph g;
    double v = 0.5;

    (void)state;
    param(&c, "a", scalar(F32), 1, 0);
    param(&c, "b", scalar(F32), 2, 1);
    packed(&x, 37, LIST(2, 1, 2, 99));
    instr(&c, "n", "negate", scalar(F32), 3, LIST(1), &x);
    attr(&fa, "b", "q\"");
    attr(&fa, "a", " {\"x\": \"}\"} ");
    attr(&fa, "c", "1");
    attr(&fa, "c", "2");
    pbw_msg(&x, 68, &fa);
    instr(&c, "f", "negate", scalar(F32), 4, LIST(1), &x);
    pbw_uint(&st, 1, 1);
    pbw_str(&s1, 1, "count_nan");
    pbw_double(&s1, 2, v);
    pbw_msg(&st, 2, &s1);
    pbw_str(&s1, 1, "count_inf");
    pbw_double(&s1, 2, 100);
    pbw_msg(&st, 2, &s1);
    pbw_msg(&x, 82, &st);
    instr(&c, "s", "negate", scalar(F32), 5, LIST(1), &x);
    instr(&c, "1a b", "negate", scalar(F32), 6, LIST(1), NULL);
    instr(&c, "f32", "negate", scalar(F32), 7, LIST(6), NULL);
    instr(&c, "__x", "negate", scalar(F32), 8, LIST(7), NULL);
    instr(&c, "__xla_y", "negate", scalar(F32), 9, LIST(8), NULL);
    comp_end(&m, &c, "main", 1, 3);
    read_module(&m, &g);
    expect_text(&g, "n", "%n = f32[] negate(f32[] %a), control-predecessors={%b, %a}");
    expect_text(&g, "f",
                "%f = f32[] negate(f32[] %a), frontend_attributes={a= {\"x\": \"}\"} ,"
                "b=\"q\\\"\",c=\"2\"}");
    expect_text(&g, "s",
                "%s = f32[] negate(f32[] %a), statistics={visualizing_index=1,count_nan=0.5,"
                "count_inf=100}");
    expect_text(&g, "1a b", "%_a_b = f32[] negate(f32[] %a)");
    expect_text(&g, "f32", "%f32_ = f32[] negate(f32[] %_a_b)");
    expect_text(&g, "__x", "%a_x = f32[] negate(f32[] %f32_)");
    expect_text(&g, "__xla_y", "%__xla_y = f32[] negate(f32[] %a_x)");
    hlo_graph_free(&g);
}

/* Called computations by name: while, conditional (pred and index forms),
 * call, custom-call with computations, map, select-and-scatter, scatter,
 * gather numbers. */
static void test_hlo_text_called(void **state)
{
    struct pbw m = {0}, c = {0}, b = {0}, x = {0}, w = {0}, dn = {0};
    struct hlo_graph g;

    (void)state;
    add_region(&m);
    param(&b, "q", scalar(F32), 1, 0);
    instr(&b, "bneg", "negate", scalar(F32), 2, LIST(1), NULL);
    comp_end(&m, &b, "body", 101, 2);
    param(&b, "r", scalar(F32), 1, 0);
    instr(&b, "bcmp", "constant", scalar(PRED), 2, NOOPS, NULL);
    comp_end(&m, &b, "cond", 102, 2);
    param(&c, "a", scalar(F32), 1, 0);
    param(&c, "p", scalar(PRED), 2, 1);
    param(&c, "k", scalar(S32), 3, 2);
    x = called(LIST(101, 102));
    instr(&c, "w", "while", scalar(F32), 4, LIST(1), &x);
    x = called(LIST(101, 101));
    instr(&c, "if", "conditional", scalar(F32), 5, LIST(2, 1, 1), &x);
    x = called(LIST(101, 101, 101));
    instr(&c, "case", "conditional", scalar(F32), 6, LIST(3, 1, 1, 1), &x);
    x = called(LIST(101));
    pbw_uint(&x, 89, 1);
    instr(&c, "call", "call", scalar(F32), 7, LIST(1), &x);
    x = called(LIST(101, 100));
    pbw_str(&x, 28, "foo");
    pbw_uint(&x, 77, 1);
    instr(&c, "cc", "custom-call", scalar(F32), 8, LIST(1), &x);
    param(&c, "v", ARR(F32, 4), 9, 3);
    x = called(LIST(100));
    instr(&c, "map", "map", ARR(F32, 4), 10, LIST(9, 9), &x);
    window_dim(&w, 2, 2, 0, 0, 1, 1);
    pbw_msg(&x, 15, &w);
    append(&x, called(LIST(102, 100)));
    instr(&c, "sas", "select-and-scatter", ARR(F32, 4), 11, LIST(9, 9, 1), &x);
    param(&c, "ix", ARR(S32, 2, 1), 12, 4);
    packed(&dn, 1, LIST(1));
    packed(&dn, 2, LIST(0));
    packed(&dn, 3, LIST(0));
    pbw_uint(&dn, 4, 1);
    pbw_msg(&x, 48, &dn);
    pbw_uint(&x, 67, 1);
    append(&x, called(LIST(100)));
    instr(&c, "sc", "scatter", ARR(F32, 4), 13, LIST(9, 12, 9), &x);
    packed(&dn, 1, LIST(1));
    packed(&dn, 2, LIST(0));
    packed(&dn, 3, LIST(0));
    packed(&dn, 5, LIST(2));
    pbw_uint(&dn, 4, 1);
    pbw_msg(&x, 33, &dn);
    packed(&x, 34, LIST(1, 3));
    instr(&c, "ga", "gather", ARR(F32, 2, 3), 14, LIST(9, 12), &x);
    comp_end(&m, &c, "main", 1, 4);
    read_module(&m, &g);
    expect_text(&g, "w", "%w = f32[] while(f32[] %a), condition=%cond, body=%body");
    expect_text(&g, "if",
                "%if = f32[] conditional(pred[] %p, f32[] %a, f32[] %a), true_computation=%body, "
                "false_computation=%body");
    expect_text(&g, "case",
                "%case = f32[] conditional(s32[] %k, f32[] %a, f32[] %a, f32[] %a), "
                "branch_computations={%body, %body, %body}");
    expect_text(&g, "call", "%call = f32[] call(f32[] %a), to_apply=%body, is_composite=true");
    expect_text(&g, "cc",
                "%cc = f32[] custom-call(f32[] %a), custom_call_target=\"foo\", "
                "called_computations={%body, %add}");
    expect_text(&g, "map",
                "%map = f32[4]{0} map(f32[4]{0} %v, f32[4]{0} %v), dimensions={0}, to_apply=%add");
    expect_text(&g, "sas",
                "%sas = f32[4]{0} select-and-scatter(f32[4]{0} %v, f32[4]{0} %v, f32[] %a), "
                "window={size=2 stride=2}, select=%cond, scatter=%add");
    expect_text(
        &g, "sc",
        "%sc = f32[4]{0} scatter(f32[4]{0} %v, s32[2,1]{1,0} %ix, f32[4]{0} %v), "
        "update_window_dims={1}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, "
        "index_vector_dim=1, indices_are_sorted=true, to_apply=%add");
    expect_text(&g, "ga",
                "%ga = f32[2,3]{1,0} gather(f32[4]{0} %v, s32[2,1]{1,0} %ix), offset_dims={1}, "
                "collapsed_slice_dims={0}, start_index_map={0}, operand_batching_dims={2}, "
                "index_vector_dim=1, slice_sizes={1,3}");
    expect_text(&g, "bneg", "%bneg = f32[] negate(f32[] %q)");
    hlo_graph_free(&g);
}

/* Async ops: an async-start whose computation is one instruction prints
 * under the wrapped opcode with its attributes; one that is not prints
 * plainly with calls=; copy-start. */
static void test_hlo_text_async(void **state)
{
    struct pbw m = {0}, w = {0}, c = {0}, x = {0};
    struct hlo_graph g;

    (void)state;
    add_region(&m);
    param(&w, "p0", ARR(F32, 8), 1, 0);
    group(&x, 49, LIST(0, 1));
    packed(&x, 14, LIST(0));
    append(&x, called(LIST(100)));
    instr(&w, "rs", "reduce-scatter", ARR(F32, 4), 2, LIST(1), &x);
    comp_end(&m, &w, "wrapped", 101, 2);
    param(&w, "q0", ARR(F32, 8), 1, 0);
    instr(&w, "n1", "negate", ARR(F32, 8), 2, LIST(1), NULL);
    instr(&w, "n2", "negate", ARR(F32, 8), 3, LIST(2), NULL);
    comp_end(&m, &w, "two", 102, 3);
    param(&c, "a", ARR(F32, 8), 1, 0);
    x = called(LIST(101));
    pbw_str(&x, 79, "side");
    instr(&c, "rs-start", "async-start", tuple2(tuple2(ARR(F32, 8), ARR(F32, 8)), ARR(F32, 4)), 2,
          LIST(1), &x);
    instr(&c, "rs-update", "async-update", tuple2(tuple2(ARR(F32, 8), ARR(F32, 8)), ARR(F32, 4)), 3,
          LIST(2), NULL);
    instr(&c, "rs-done", "async-done", ARR(F32, 4), 4, LIST(3), NULL);
    x = called(LIST(102));
    instr(&c, "st2", "async-start", tuple2(ARR(F32, 8), ARR(F32, 8)), 5, LIST(1), &x);
    instr(&c, "d2", "async-done", ARR(F32, 8), 6, LIST(5), NULL);
    pbw_uint(&x, 73, 1);
    instr(&c, "cs", "copy-start", tuple2(ARR(F32, 8), ARR(F32, 8)), 7, LIST(1), &x);
    instr(&c, "cd", "copy-done", ARR(F32, 8), 8, LIST(7), NULL);
    comp_end(&m, &c, "main", 1, 4);
    read_module(&m, &g);
    expect_text(
        &g, "rs-start",
        "%rs-start = ((f32[8]{0}, f32[8]{0}), f32[4]{0}) reduce-scatter-start(f32[8]{0} %a), "
        "async_execution_thread=\"side\", replica_groups={{0,1}}, dimensions={0}, to_apply=%add");
    expect_text(
        &g, "rs-update",
        "%rs-update = ((f32[8]{0}, f32[8]{0}), f32[4]{0}) reduce-scatter-update(((f32[8]{0}, "
        "f32[8]{0}), f32[4]{0}) %rs-start)");
    expect_text(
        &g, "rs-done",
        "%rs-done = f32[4]{0} reduce-scatter-done(((f32[8]{0}, f32[8]{0}), f32[4]{0}) %rs-update)");
    expect_text(
        &g, "rs",
        "%rs = f32[4]{0} reduce-scatter(f32[8]{0} %p0), replica_groups={{0,1}}, dimensions={0}, "
        "to_apply=%add");
    expect_text(&g, "st2", "%st2 = (f32[8]{0}, f32[8]{0}) async-start(f32[8]{0} %a), calls=%two");
    expect_text(&g, "d2", "%d2 = f32[8]{0} async-done((f32[8]{0}, f32[8]{0}) %st2)");
    expect_text(
        &g, "cs",
        "%cs = (f32[8]{0}, f32[8]{0}) copy-start(f32[8]{0} %a), cross_program_prefetch_index=0");
    expect_text(&g, "cd", "%cd = f32[8]{0} copy-done((f32[8]{0}, f32[8]{0}) %cs)");
    hlo_graph_free(&g);
}

/* ---- stack frames ---- */

/* An instruction "name" (negate of nothing) with metadata.stack_frame_id. */
static void framed(struct pbw *c, const char *name, int64_t id, int64_t frame)
{
    struct pbw x = {0}, md = {0};

    pbw_str(&md, 1, "op");
    pbw_uint(&md, 15, (uint64_t)frame);
    pbw_msg(&x, 7, &md);
    instr(c, name, "constant", scalar(F32), id, NOOPS, &x);
}

/* A FileLocation / StackFrame message into idx as field f. */
static void ints(struct pbw *idx, uint32_t f, const int64_t *v, int n)
{
    struct pbw e = {0};
    int i;

    for (i = 0; i < n; i++)
        pbw_uint(&e, (uint32_t)i + 1, (uint64_t)v[i]);
    pbw_msg(idx, f, &e);
}

/* Stack frames in both forms, on one stack index: a chain of three
 * (innermost first), a cycle (cut after as many steps as frames), ids out of
 * range, a frame whose location is out of range, an empty frame inside a
 * chain, no frame id. op_stats' form (GetOpLocationStack) ends each frame
 * with '\n' and stops at an empty or unknown frame; the memory viewer's
 * (BuildStackFrames) joins the frames with '\n' and keeps those without a
 * location as ":-1:-1". */
static void test_hlo_text_stack_frames(void **state)
{
    struct pbw m = {0}, c = {0}, idx = {0};
    struct hlo_graph g;
    struct hlo_read_status st = {0, 0};
    struct hlo_read_opts joined = {HLO_READ_JOINED, NULL, NULL};

    (void)state;
    pbw_str(&idx, 1, "a.py");
    pbw_str(&idx, 1, "b.py");
    pbw_str(&idx, 2, "f");
    pbw_str(&idx, 2, "g");
    ints(&idx, 3, LIST(1, 1, 10, 2)); /* location 1: a.py:10:2 */
    ints(&idx, 3, LIST(2, 2, 20, 4)); /* location 2: b.py:20:4 */
    ints(&idx, 3, LIST(1, 2, 30, 6)); /* location 3: a.py:30:6 */
    ints(&idx, 3, LIST(0, 0, 0, 0));  /* location 4: empty */
    ints(&idx, 4, LIST(1, 0));        /* frame 1 */
    ints(&idx, 4, LIST(2, 1));        /* frame 2 */
    ints(&idx, 4, LIST(3, 2));        /* frame 3 */
    ints(&idx, 4, LIST(1, 5));        /* frame 4 -> 5 */
    ints(&idx, 4, LIST(2, 4));        /* frame 5 -> 4 */
    ints(&idx, 4, LIST(9, 0));        /* frame 6: location out of range */
    ints(&idx, 4, LIST(3, 8));        /* frame 7 -> 8 */
    ints(&idx, 4, LIST(4, 1));        /* frame 8: empty */
    ints(&idx, 4, LIST(1, 99));       /* frame 9 -> out of range */
    ints(&idx, 3, LIST(0, 1, 5, 0));  /* location 5: no file, function f */
    ints(&idx, 4, LIST(5, 0));        /* frame 10 */
    framed(&c, "chain", 1, 3);
    framed(&c, "cycle", 2, 4);
    framed(&c, "far", 3, 99);
    framed(&c, "neg", 4, -1);
    framed(&c, "badloc", 5, 6);
    framed(&c, "empty", 6, 7);
    framed(&c, "up", 7, 9);
    framed(&c, "none", 8, 0);
    framed(&c, "chain2", 9, 3);
    framed(&c, "nofile", 10, 10);
    comp_end(&m, &c, "main", 1, 1);
    pbw_msg(&m, 17, &idx);
    assert_int_equal(hlo_read_module_opts(m.p, m.n, &g, &st, &joined), 0);
    assert_string_equal(node(&g, "chain")->stack_frame, "a.py:30:6\nb.py:20:4\na.py:10:2");
    assert_ptr_equal(node(&g, "chain")->stack_frame, node(&g, "chain2")->stack_frame);
    assert_string_equal(node(&g, "cycle")->stack_frame, /* 10 frames: 10 steps */
                        "a.py:10:2\nb.py:20:4\na.py:10:2\nb.py:20:4\na.py:10:2\n"
                        "b.py:20:4\na.py:10:2\nb.py:20:4\na.py:10:2\nb.py:20:4");
    assert_string_equal(node(&g, "far")->stack_frame, "");
    assert_string_equal(node(&g, "neg")->stack_frame, "");
    assert_string_equal(node(&g, "badloc")->stack_frame, ":-1:-1");
    assert_string_equal(node(&g, "empty")->stack_frame, "a.py:30:6\n:0:0\na.py:10:2");
    assert_string_equal(node(&g, "up")->stack_frame, "a.py:10:2");
    assert_string_equal(node(&g, "none")->stack_frame, "");
    assert_string_equal(node(&g, "nofile")->stack_frame, ":5:0");
    assert_string_equal(node(&g, "chain")->text, ""); /* no texts asked for */
    hlo_graph_free(&g);
    read_module(&m, &g);
    assert_string_equal(node(&g, "chain")->stack_frame, "a.py:30:6\nb.py:20:4\na.py:10:2\n");
    assert_ptr_equal(node(&g, "chain")->stack_frame, node(&g, "chain2")->stack_frame);
    assert_string_equal(node(&g, "cycle")->stack_frame, /* 10 frames: 10 steps */
                        "a.py:10:2\nb.py:20:4\na.py:10:2\nb.py:20:4\na.py:10:2\n"
                        "b.py:20:4\na.py:10:2\nb.py:20:4\na.py:10:2\nb.py:20:4\n");
    assert_string_equal(node(&g, "far")->stack_frame, "");
    assert_string_equal(node(&g, "neg")->stack_frame, "");
    assert_string_equal(node(&g, "badloc")->stack_frame, "");
    assert_string_equal(node(&g, "empty")->stack_frame, "a.py:30:6\n");
    assert_string_equal(node(&g, "up")->stack_frame, "a.py:10:2\n");
    assert_string_equal(node(&g, "none")->stack_frame, "");
    assert_string_equal(node(&g, "nofile")->stack_frame, ":5:0\n");
    expect_text(&g, "chain", "%chain = f32[] constant({...})");
    hlo_graph_free(&g);
}

/* ---- hostile modules ---- */

/* Operands that do not resolve: the module reads, unlinked, with no texts
 * but its stack frames. */
static void test_hlo_text_unlinked(void **state)
{
    struct pbw m = {0}, c = {0}, idx = {0};
    struct hlo_graph g;
    struct hlo_read_status st = {0, 0};

    (void)state;
    pbw_str(&idx, 1, "a.py");
    ints(&idx, 3, LIST(1, 0, 1, 1));
    ints(&idx, 4, LIST(1, 0));
    framed(&c, "f", 1, 1);
    instr(&c, "n", "negate", scalar(F32), 2, LIST(77), NULL);
    comp_end(&m, &c, "main", 1, 2);
    pbw_msg(&m, 17, &idx);
    assert_int_equal(hlo_read_module(m.p, m.n, &g, &st), 0);
    assert_int_equal(g.linked, 0);
    assert_string_equal(node(&g, "n")->text, "");
    assert_string_equal(node(&g, "f")->text, "");
    assert_string_equal(node(&g, "f")->stack_frame, "a.py:1:1\n");
    hlo_graph_free(&g);
    assert_int_equal(hlo_graph_read(m.p, m.n, &g), -1);
    free(m.p);
}

/* Huge and odd shapes, garbage inside the attributes the printer alone
 * reads (left out), bad literals, a rank too high for a literal, an
 * overflowing sharding, repeated control predecessors, async ops without a
 * computation: printed without crashing. */
static void test_hlo_text_hostile(void **state)
{
    struct pbw m = {0}, c = {0}, x = {0}, s = {0}, v = {0}, dn = {0};
    struct hlo_graph g;
    int64_t dims[300];
    const float one = 1;
    const char *t;
    int i;

    (void)state;
    for (i = 0; i < 300; i++)
        dims[i] = i == 0 ? INT64_MAX : i == 1 ? -5 : 1;
    param(&c, "huge", array(F32, dims, 300), 1, 0);
    pbw_bytes(&x, 40, "\xff\xff\xff", 3);
    pbw_bytes(&x, 68, "\x0a\x05\x0a", 3);
    pbw_bytes(&x, 21, "\x0a\x05\x08", 3);
    instr(&c, "junk", "pad", ARR(F32, 2), 2, LIST(1, 1), &x);
    packed(&dn, 1, LIST(0));
    pbw_msg(&x, 30, &dn);
    pbw_bytes(&x, 51, "\x0a\xff", 2);
    instr(&c, "junk.dot", "dot", ARR(F32, 2), 3, LIST(6, 6), &x);
    pbw_bytes(&x, 8, "\x0a\x80", 2);
    instr(&c, "badlit", "constant", ARR(F32, 2), 4, NOOPS, &x);
    floats(&v, 8, &one, 1);
    literal(&x, array(F32, dims + 2, 70), &v);
    instr(&c, "deep", "constant", array(F32, dims + 2, 70), 5, NOOPS, &x);
    param(&c, "small", ARR(F32, 2), 6, 1);
    pbw_uint(&s, 1, 3);
    packed(&s, 3, LIST(INT64_MAX, INT64_MAX));
    packed(&s, 4, LIST(0, 1));
    pbw_msg(&x, 40, &s);
    packed(&x, 37, LIST(1, 1, 1, 1));
    instr(&c, "ovf", "negate", ARR(F32, 2), 7, LIST(6), &x);
    pbw_str(&x, 79, "main");
    instr(&c, "as", "async-start", ARR(F32, 2), 8, LIST(6), &x);
    instr(&c, "ad", "async-done", ARR(F32, 2), 9, LIST(8), NULL);
    comp_end(&m, &c, "main", 1, 9);
    read_module(&m, &g);
    t = node(&g, "huge")->text;
    assert_true(strncmp(t, "%huge = f32[9223372036854775807,-5,1,1,", 39) == 0);
    assert_non_null(strstr(t, ",1]{299,298,"));
    t = node(&g, "junk")->text;
    assert_true(strncmp(t, "%junk = f32[2]{0} pad(f32[9223372036854775807,-5,", 48) == 0);
    assert_non_null(strstr(t, "1,0} %huge)"));
    assert_string_equal(t + strlen(t) - 7, " %huge)"); /* no attribute */
    t = node(&g, "junk.dot")->text;
    expect_text(&g, "junk.dot",
                "%junk.dot = f32[2]{0} dot(f32[2]{0} %small, f32[2]{0} %small), "
                "lhs_contracting_dims={0}, rhs_contracting_dims={}");
    expect_text(&g, "badlit", "%badlit = f32[2]{0} constant({...})");
    assert_non_null(strstr(node(&g, "deep")->text, " constant({...})"));
    expect_text(&g, "ovf",
                "%ovf = f32[2]{0} negate(f32[2]{0} %small), control-predecessors={%huge}");
    expect_text(&g, "as", "%as = f32[2]{0} async-start(f32[2]{0} %small)");
    expect_text(&g, "ad", "%ad = f32[2]{0} async-done(f32[2]{0} %as)");
    hlo_graph_free(&g);
}

/* A text longer than XProf's cut is cut at HLO_TEXT_MAX bytes. */
static void test_hlo_text_cut(void **state)
{
    struct pbw m = {0}, c = {0};
    struct hlo_graph g;
    int64_t dims[64], *ops;
    int i, n = 60000;

    (void)state;
    for (i = 0; i < 64; i++)
        dims[i] = 1000 + i;
    param(&c, "p", array(F32, dims, 64), 1, 0);
    ops = malloc((size_t)n * sizeof(*ops));
    assert_non_null(ops);
    for (i = 0; i < n; i++)
        ops[i] = 1;
    instr(&c, "t", "tuple", scalar(F32), 2, ops, n, NULL);
    free(ops);
    comp_end(&m, &c, "main", 1, 2);
    read_module(&m, &g);
    assert_int_equal(strlen(node(&g, "t")->text), HLO_TEXT_MAX);
    assert_true(strncmp(node(&g, "t")->text, "%t = f32[] tuple(f32[1000,1001,", 31) == 0);
    hlo_graph_free(&g);
}

/* A module main(p) whose tuples t1, t2 name the wide parameter p 200 times
 * each: about 14 KB of text apiece from a few hundred bytes, and a stack
 * frame on t2. */
static struct pbw wide_module(void)
{
    struct pbw m = {0}, c = {0}, idx = {0};
    int64_t dims[10], ops[200];
    int i;

    for (i = 0; i < 10; i++)
        dims[i] = 1000 + i;
    for (i = 0; i < 200; i++)
        ops[i] = 1;
    param(&c, "p", array(F32, dims, 10), 1, 0);
    instr(&c, "t1", "tuple", scalar(F32), 2, ops, 200, NULL);
    framed(&c, "f", 3, 1);
    instr(&c, "t2", "tuple", scalar(F32), 4, ops, 200, NULL);
    comp_end(&m, &c, "main", 1, 4);
    pbw_str(&idx, 1, "a.py");
    ints(&idx, 3, LIST(1, 0, 1, 1));
    ints(&idx, 4, LIST(1, 0));
    pbw_msg(&m, 17, &idx);
    return m;
}

/* Texts past a shared budget are "" and counted, those before it kept; the
 * budget grows by 4 times each module's bytes, so a second module read
 * with it prints texts again until that share is spent. */
static void test_hlo_text_budget(void **state)
{
    struct pbw m = wide_module();
    struct hlo_graph g;
    struct hlo_read_status st = {0, 0};
    struct hlo_text_budget b = {0, 0}; /* no base: 4 x the module's bytes */
    struct hlo_read_opts opts = {HLO_READ_TEXTS, NULL, &b};
    size_t left;

    (void)state;
    assert_true(4 * m.n < 14000); /* one tuple's text does not fit */
    assert_int_equal(hlo_read_module_opts(m.p, m.n, &g, &st, &opts), 0);
    assert_true(strncmp(node(&g, "p")->text, "%p = f32[1000,", 14) == 0);
    assert_string_equal(node(&g, "f")->stack_frame, "a.py:1:1\n"); /* frames come first */
    expect_text(&g, "t1", ""); /* too big: the budget is spent */
    expect_text(&g, "f", "");
    expect_text(&g, "t2", "");
    assert_int_equal(b.truncated, 3);
    assert_int_equal(b.left, 0);
    hlo_graph_free(&g);

    /* the next module has its share: p and f fit again, t1 not */
    assert_int_equal(hlo_read_module_opts(m.p, m.n, &g, &st, &opts), 0);
    assert_true(strncmp(node(&g, "p")->text, "%p = f32[1000,", 14) == 0);
    expect_text(&g, "t1", "");
    assert_int_equal(b.truncated, 6);
    hlo_graph_free(&g);

    /* a budget that holds them all: every text is printed in full */
    b.left = 100000;
    b.truncated = 0;
    assert_int_equal(hlo_read_module_opts(m.p, m.n, &g, &st, &opts), 0);
    left = 100000 + 4 * m.n;
    assert_int_equal(strlen(node(&g, "t1")->text), strlen(node(&g, "t2")->text));
    assert_true(strlen(node(&g, "t1")->text) > 14000);
    left -= strlen(node(&g, "p")->text) + strlen(node(&g, "t1")->text) +
            strlen(node(&g, "f")->text) + strlen(node(&g, "t2")->text) +
            strlen(node(&g, "f")->stack_frame);
    assert_int_equal(b.left, left);
    assert_int_equal(b.truncated, 0);
    hlo_graph_free(&g);
    free(m.p);
}

/* A literal field (8) of shape shp holding the s32 values 1 and 2. */
static void s32_pair(struct pbw *x, struct pbw shp)
{
    struct pbw vals = {0}, l = {0};

    pbw_varint(&vals, 1);
    pbw_varint(&vals, 2);
    pbw_bytes(&l, 4, vals.p, vals.n); /* LiteralProto.s32s */
    free(vals.p);
    literal(x, shp, &l);
}

/* A constant shaped s32[4, 2^62] (its literal too) with two values: the
 * element count overflows, and is too big, not 0 (it used to wrap to 0, pass
 * the limits, and have the printer walk 2^62 elements of a 2-element
 * array). The same literal of a custom-call is left out; a small literal
 * under a huge instruction shape is elided as XLA elides it. */
static void test_hlo_text_constant_wrap(void **state)
{
    struct pbw m = {0}, c = {0}, x = {0};
    const int64_t wrap[] = {4, (int64_t)1 << 62};
    struct hlo_graph g;

    (void)state;
    s32_pair(&x, shape(S32, wrap, 2, NULL));
    instr(&c, "c", "constant", shape(S32, wrap, 2, NULL), 1, NOOPS, &x);
    s32_pair(&x, shape(S32, wrap, 2, NULL));
    instr(&c, "cc", "custom-call", scalar(S32), 2, NOOPS, &x);
    s32_pair(&x, ARR(S32, 2));
    instr(&c, "small", "constant", shape(S32, wrap, 2, NULL), 3, NOOPS, &x);
    s32_pair(&x, ARR(S32, 2));
    instr(&c, "fine", "constant", ARR(S32, 2), 4, NOOPS, &x);
    comp_end(&m, &c, "main", 1, 1);
    read_module(&m, &g);
    expect_text(&g, "c", "%c = s32[4,4611686018427387904] constant({...})");
    expect_text(&g, "cc",
                "%cc = s32[] custom-call(), custom_call_target=\"\", "
                "api_version=API_VERSION_UNSPECIFIED");
    expect_text(&g, "small", "%small = s32[4,4611686018427387904] constant({...})");
    expect_text(&g, "fine", "%fine = s32[2]{0} constant({1, 2})");
    hlo_graph_free(&g);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_hlo_text_shape_print),
        cmocka_unit_test(test_hlo_text_fusion),
        cmocka_unit_test(test_hlo_text_array_ops),
        cmocka_unit_test(test_hlo_text_conv_dot),
        cmocka_unit_test(test_hlo_text_compare_custom_call),
        cmocka_unit_test(test_hlo_text_collectives),
        cmocka_unit_test(test_hlo_text_constants),
        cmocka_unit_test(test_hlo_text_sharding),
        cmocka_unit_test(test_hlo_text_generic_attrs),
        cmocka_unit_test(test_hlo_text_called),
        cmocka_unit_test(test_hlo_text_async),
        cmocka_unit_test(test_hlo_text_stack_frames),
        cmocka_unit_test(test_hlo_text_unlinked),
        cmocka_unit_test(test_hlo_text_hostile),
        cmocka_unit_test(test_hlo_text_cut),
        cmocka_unit_test(test_hlo_text_constant_wrap),
        cmocka_unit_test(test_hlo_text_budget),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
