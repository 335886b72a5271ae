/*
 * test_memory_viewer.c - the memory picture of an HLO module (hlo_buffers.h)
 * on HloProtos built byte by byte: the peak of a trace with ALLOC, FREE and
 * SHARE_WITH events, its position and the buffers live there, small buffers
 * folded into one object, the indefinite allocations added to every point,
 * a canonical buffer revived by a SHARE_WITH after its FREE, the trace
 * chosen by colour, the timeline blocks, and hostile inputs: ids that name
 * nothing, a trace touching two allocations, a double free, a buffer
 * sharing with itself, negative sizes, unknown event kinds, missing parts,
 * cut bytes and a million events.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "hlo/hlo_buffers.h"
#include "pbw.h"

enum { F32 = 11, TUPLE = 13 };
enum { ALLOC = 0, FREE = 1, SHARE = 2 };
enum { THREAD_LOCAL = 1, PARAM = 2, LIVE_OUT = 4, CONSTANT = 8, IS_TUPLE = 16 };

#define MIB (1 << 20)

static void packed(struct pbw *w, uint32_t field, const int64_t *v, int n)
{
    struct pbw in = {0};
    int i;

    for (i = 0; i < n; i++)
        pbw_varint(&in, (uint64_t)v[i]);
    pbw_bytes(w, field, in.p, in.n);
    free(in.p);
}

/* An f32 array ShapeProto with the row-major layout. */
static struct pbw f32(int64_t d0, int64_t d1)
{
    struct pbw s = {0}, layout = {0};
    int64_t dims[2] = {d0, d1}, m2m[2] = {1, 0};
    int n = d1 > 0 ? 2 : 1;

    pbw_uint(&s, 2, F32);
    packed(&s, 3, dims, n);
    packed(&layout, 1, n == 2 ? m2m : (int64_t[]){0}, n);
    pbw_msg(&s, 5, &layout);
    return s;
}

/* An instruction of the computation being built. */
static void instr(struct pbw *comp, const char *name, const char *opcode, struct pbw shape,
                  int64_t id, const char *op_name, const char *file)
{
    struct pbw in = {0}, meta = {0};

    pbw_str(&in, 1, name);
    pbw_str(&in, 2, opcode);
    pbw_msg(&in, 3, &shape);
    if (op_name != NULL)
        pbw_str(&meta, 2, op_name);
    if (file != NULL) {
        pbw_str(&meta, 3, file);
        pbw_uint(&meta, 4, 7);
    }
    pbw_msg(&in, 7, &meta);
    pbw_uint(&in, 35, (uint64_t)id);
    pbw_msg(comp, 2, &in);
}

/* The module of the tests: main(p0) with a, b, c, d and the output tuple;
 * graph_bad: "d" also has dimensions whose packed bytes are bad (a field
 * only the cost model reads). */
static struct pbw module_of(int graph_bad)
{
    struct pbw m = {0}, c = {0}, tup = {0}, el = f32(2048, 1024);

    instr(&c, "p0", "parameter", f32(1024, 1024), 1, "jit(f)/p", NULL);
    instr(&c, "a", "fusion", f32(1024, 1024), 2, "jit(f)/mul", "f.py");
    instr(&c, "b", "fusion", f32(256, 0), 3, "jit(f)/small", NULL);
    instr(&c, "c", "fusion", f32(2048, 1024), 4, "jit(f)/add", NULL);
    instr(&c, "d", "bitcast", f32(2048, 1024), 5, NULL, NULL);
    if (graph_bad) {
        struct pbw e = {0};
        pbw_str(&e, 1, "e");
        pbw_str(&e, 2, "constant");
        pbw_uint(&e, 35, 7);
        pbw_bytes(&e, 14, "\xff", 1);
        pbw_msg(&c, 2, &e);
    }
    pbw_uint(&tup, 2, TUPLE);
    pbw_msg(&tup, 4, &el);
    instr(&c, "out", "tuple", tup, 6, NULL, NULL);
    pbw_str(&c, 1, "main.7");
    pbw_uint(&c, 5, 1);
    pbw_uint(&c, 6, 6);
    pbw_str(&m, 1, "jit_f");
    pbw_str(&m, 2, "main.7");
    pbw_msg(&m, 3, &c);
    pbw_uint(&m, 6, 1);
    return m;
}

/* A LogicalBufferProto; index < 0: no shape index. */
static void lb(struct pbw *ba, int64_t id, int64_t size, int64_t instr_id, int64_t index,
               int64_t color)
{
    struct pbw b = {0}, loc = {0};

    pbw_uint(&b, 1, (uint64_t)id);
    pbw_uint(&b, 2, (uint64_t)size);
    pbw_uint(&loc, 4, (uint64_t)instr_id);
    if (index >= 0)
        packed(&loc, 3, &index, 1);
    pbw_msg(&b, 3, &loc);
    if (color != 0)
        pbw_uint(&b, 4, (uint64_t)color);
    pbw_msg(ba, 1, &b);
}

/* A BufferAllocationProto with assigned (logical buffer, offset, size)
 * triples. */
static void alloc(struct pbw *ba, int64_t index, int64_t size, int flags, int64_t color,
                  const int64_t *assigned, int n)
{
    struct pbw a = {0};
    int i;

    pbw_uint(&a, 1, (uint64_t)index);
    pbw_uint(&a, 2, (uint64_t)size);
    if (flags & THREAD_LOCAL)
        pbw_uint(&a, 3, 1);
    if (flags & PARAM)
        pbw_uint(&a, 5, 1);
    if (flags & LIVE_OUT)
        pbw_uint(&a, 7, 1);
    if (color != 0)
        pbw_uint(&a, 8, (uint64_t)color);
    for (i = 0; i < n; i++) {
        struct pbw as = {0};
        pbw_uint(&as, 1, (uint64_t)assigned[3 * i]);
        pbw_uint(&as, 2, (uint64_t)assigned[3 * i + 1]);
        pbw_uint(&as, 3, (uint64_t)assigned[3 * i + 2]);
        pbw_msg(&a, 9, &as);
    }
    if (flags & IS_TUPLE)
        pbw_uint(&a, 11, 1);
    if (flags & CONSTANT)
        pbw_uint(&a, 12, 1);
    pbw_msg(ba, 3, &a);
}

/* An event of the trace being built. */
static void event(struct pbw *tr, int64_t kind, int64_t buf, const char *name, int64_t share)
{
    struct pbw e = {0};

    if (kind != 0)
        pbw_uint(&e, 1, (uint64_t)kind);
    pbw_uint(&e, 2, (uint64_t)buf);
    pbw_str(&e, 4, name);
    if (share != 0)
        pbw_uint(&e, 5, (uint64_t)share);
    pbw_msg(tr, 1, &e);
}

/* The buffers of the tests: p0's parameter (4 MiB), a (4 MiB), b (1 KiB),
 * c (8 MiB), d sharing c, the output (8 MiB). */
static void buffers(struct pbw *ba)
{
    lb(ba, 10, 4 * MIB, 1, -1, 0);
    lb(ba, 11, 4 * MIB, 2, -1, 0);
    lb(ba, 12, 1024, 3, -1, 0);
    lb(ba, 13, 8 * MIB, 4, -1, 0);
    lb(ba, 14, 8 * MIB, 5, -1, 0);
    lb(ba, 15, 8 * MIB, 6, 0, 0);
    alloc(ba, 0, 4 * MIB, PARAM, 0, (const int64_t[]){10, 0, 4 * MIB}, 1);
    alloc(ba, 1, 12 * MIB + 1024, 0, 0,
          (const int64_t[]){11, 0, 4 * MIB, 12, 12 * MIB, 1024, 13, 4 * MIB, 8 * MIB, 14, 4 * MIB,
                            8 * MIB},
          4);
    alloc(ba, 2, 8 * MIB, LIVE_OUT, 0, (const int64_t[]){15, 0, 8 * MIB}, 1);
}

/* The trace of the tests: a, b, c allocated (the peak), a freed, d shares
 * c, c then d and b freed. */
static void trace(struct pbw *ba)
{
    struct pbw tr = {0};

    event(&tr, ALLOC, 11, "a", 0);
    event(&tr, ALLOC, 12, "b", 0);
    event(&tr, ALLOC, 13, "c", 0);
    event(&tr, FREE, 11, "c", 0);
    event(&tr, SHARE, 14, "d", 13);
    event(&tr, FREE, 13, "d", 0);
    event(&tr, FREE, 14, "out", 0);
    event(&tr, FREE, 12, "out", 0);
    pbw_msg(ba, 4, &tr);
}

/* An HloProto of module m (freed) and the assignment ba (freed). */
static struct pbw proto_of(struct pbw m, struct pbw *ba)
{
    struct pbw hp = {0};

    pbw_msg(&hp, 1, &m);
    if (ba != NULL)
        pbw_msg(&hp, 3, ba);
    return hp;
}

/* An HloProto of the module of the tests and the assignment ba (freed). */
static struct pbw proto(struct pbw *ba)
{
    return proto_of(module_of(0), ba);
}

/* Build from hp (freed) with colour 0; returns the error code. */
static int build(struct pbw *hp, struct hlo_mem *m, struct xp_err *err)
{
    int rc = hlo_mem_build(hp->p, hp->n, 0, m, err);

    free(hp->p);
    memset(hp, 0, sizeof(*hp));
    return rc;
}

static const char *node_name(const struct hlo_mem *m, int32_t lbuf)
{
    return m->g.nodes[m->lbufs[lbuf].node].name;
}

static void test_memory_viewer_peak(void **state)
{
    static const int64_t want[] = {0,
                                   4 * MIB,
                                   4 * MIB + 1024,
                                   12 * MIB + 1024,
                                   8 * MIB + 1024,
                                   8 * MIB + 1024,
                                   8 * MIB + 1024,
                                   1024,
                                   0};
    struct pbw ba = {0}, hp;
    struct hlo_mem m;
    struct xp_err err = {0};
    uint32_t i;

    (void)state;
    buffers(&ba);
    trace(&ba);
    hp = proto(&ba);
    assert_int_equal(build(&hp, &m, &err), 0);
    assert_string_equal(m.module_name, "jit_f");
    assert_string_equal(m.entry_name, "main.7");
    assert_int_equal(m.trace, 0);
    assert_int_equal(m.ntimeline, 9);
    for (i = 0; i < 9; i++)
        assert_int_equal(m.heap[i], want[i]);
    assert_int_equal(m.name_lens[8], 0);
    assert_memory_equal(m.names[3], "c", 1);
    assert_int_equal(m.peak, 12 * MIB + 1024);
    assert_int_equal(m.peak_position, 2);
    /* unpadded: f32 elements * 4, the output's element through its index */
    assert_int_equal(m.peak_unpadded, 12 * MIB + 1024);
    assert_int_equal(m.indefinite_bytes, 12 * MIB);
    /* the parameter and the output, then a and c live at the peak, then
     * b folded into the small object */
    assert_int_equal(m.nobjects, 5);
    assert_string_equal(node_name(&m, m.objects[0].lbuf), "p0");
    assert_string_equal(node_name(&m, m.objects[1].lbuf), "out");
    assert_string_equal(node_name(&m, m.objects[2].lbuf), "a");
    assert_string_equal(node_name(&m, m.objects[3].lbuf), "c");
    assert_int_equal(m.objects[4].lbuf, HLO_MEM_NO_ID);
    assert_int_equal(m.objects[4].size, 1024);
    for (i = 0; i < 5; i++)
        assert_int_equal(m.objects[i].color, (int)i);
    /* largest first, ties in peak order */
    assert_int_equal(m.by_size[0], 1);
    assert_int_equal(m.by_size[1], 3);
    assert_int_equal(m.by_size[2], 0);
    assert_int_equal(m.by_size[3], 2);
    assert_int_equal(m.by_size[4], 4);
    assert_string_equal(m.lbufs[m.objects[1].lbuf].shape_str, "f32[2048,1024]{1,0}");
    assert_int_equal(m.entry_param_bytes, 4 * MIB);
    assert_int_equal(m.live_out_bytes, 8 * MIB);
    assert_int_equal(m.total_bytes, 24 * MIB + 1024);
    assert_int_equal(m.indefinite_alloc_bytes, 12 * MIB);
    assert_int_equal(m.non_reusable_bytes, 0);
    hlo_mem_free(&m);
}

static void test_memory_viewer_spans_and_blocks(void **state)
{
    struct pbw ba = {0}, hp;
    struct hlo_mem m;
    struct xp_err err = {0};
    struct out o;

    (void)state;
    buffers(&ba);
    trace(&ba);
    hp = proto(&ba);
    assert_int_equal(build(&hp, &m, &err), 0);
    /* a, b, c from their ALLOC to their last FREE; d is a sharer without a
     * revival, so has no span */
    assert_int_equal(m.nspans, 3);
    assert_int_equal(m.spans[0].id, 11);
    assert_int_equal(m.spans[0].start, 0);
    assert_int_equal(m.spans[0].limit, 3);
    assert_int_equal(m.spans[1].id, 12);
    assert_int_equal(m.spans[1].limit, 7);
    assert_int_equal(m.spans[2].id, 13);
    assert_int_equal(m.spans[2].start, 2);
    assert_int_equal(m.spans[2].limit, 6);
    /* one container (the temporary allocation), a, b and c; d shares */
    assert_true(m.timeline);
    assert_int_equal(m.nblocks, 4);
    assert_int_equal(m.blocks[0].lbuf, HLO_MEM_NO_ID);
    assert_string_equal(m.blocks[0].color, "#ffffff");
    assert_int_equal(m.blocks[0].end_step, 8);
    assert_string_equal(node_name(&m, m.blocks[1].lbuf), "a");
    /* a and c are heap objects 2 and 3: their palette colours */
    assert_string_equal(m.blocks[1].color, "#81c784");
    assert_string_equal(m.blocks[3].color, "#4dd0e1");
    assert_true(m.blocks[2].offset == 12.0 * MIB);
    memset(&o, 0, sizeof(o));
    out_init(&o);
    hlo_mem_dot(&m, 1, &o);
    assert_false(out_failed(&o));
    assert_true(o.len > 100 && o.len < OUT_CHUNK);
    assert_memory_equal(o.chunks[0], "graph G {\n epsilon=0.5 \n inputscale=72 \n", 40);
    assert_non_null(memmem(o.chunks[0], o.len, "invisible_dummy_buffer_assignment", 33));
    assert_non_null(memmem(o.chunks[0], o.len, "hlo_op:c\nshape:f32[2048,1024]{1,0}", 34));
    out_discard(&o);
    hlo_mem_free(&m);
}

/* x allocated and freed, then y shares x's memory: the sharer is shown. */
static void test_memory_viewer_share_after_free(void **state)
{
    struct pbw ba = {0}, tr = {0}, hp;
    struct hlo_mem m;
    struct xp_err err = {0};

    (void)state;
    lb(&ba, 1, 64 * 1024, 2, -1, 0);
    lb(&ba, 2, 64 * 1024, 4, -1, 0);
    alloc(&ba, 0, 64 * 1024, 0, 0, (const int64_t[]){1, 0, 65536, 2, 0, 65536}, 2);
    event(&tr, ALLOC, 1, "a", 0);
    event(&tr, FREE, 1, "a", 0);
    event(&tr, SHARE, 2, "c", 1);
    event(&tr, FREE, 2, "c", 0);
    pbw_msg(&ba, 4, &tr);
    hp = proto(&ba);
    assert_int_equal(build(&hp, &m, &err), 0);
    assert_int_equal(m.heap[3], 64 * 1024);
    assert_int_equal(m.heap[4], 0);
    assert_int_equal(m.peak_position, 0);
    assert_int_equal(m.nobjects, 1);
    assert_string_equal(node_name(&m, m.objects[0].lbuf), "a");
    hlo_mem_free(&m);

    /* the same, with the revival as the peak: y stands for x */
    memset(&ba, 0, sizeof(ba));
    memset(&tr, 0, sizeof(tr));
    lb(&ba, 1, 64 * 1024, 2, -1, 0);
    lb(&ba, 2, 64 * 1024, 4, -1, 0);
    lb(&ba, 3, 64 * 1024, 3, -1, 0);
    alloc(&ba, 0, 128 * 1024, 0, 0, (const int64_t[]){1, 0, 65536, 2, 0, 65536, 3, 65536, 65536},
          3);
    event(&tr, ALLOC, 1, "a", 0);
    event(&tr, FREE, 1, "a", 0);
    event(&tr, ALLOC, 3, "b", 0);
    event(&tr, SHARE, 2, "c", 1);
    event(&tr, FREE, 2, "c", 0);
    event(&tr, FREE, 3, "c", 0);
    pbw_msg(&ba, 4, &tr);
    hp = proto(&ba);
    assert_int_equal(build(&hp, &m, &err), 0);
    assert_int_equal(m.peak, 128 * 1024);
    assert_int_equal(m.peak_position, 3);
    assert_int_equal(m.nobjects, 2);
    assert_string_equal(node_name(&m, m.objects[0].lbuf), "b");
    assert_string_equal(node_name(&m, m.objects[1].lbuf), "c");
    hlo_mem_free(&m);
}

/* Colour 1 has no allocation with a trace: the trace with most events of
 * that colour is used; no trace at all leaves an empty timeline. */
static void test_memory_viewer_colour(void **state)
{
    struct pbw ba = {0}, tr = {0}, hp;
    struct hlo_mem m;
    struct xp_err err = {0};

    (void)state;
    lb(&ba, 1, 32768, 2, -1, 1);
    alloc(&ba, 0, 32768, THREAD_LOCAL, 1, (const int64_t[]){1, 0, 32768}, 1);
    event(&tr, ALLOC, 1, "a", 0);
    event(&tr, FREE, 1, "a", 0);
    pbw_msg(&ba, 4, &tr);
    hp = proto(&ba);
    assert_int_equal(hlo_mem_build(hp.p, hp.n, 1, &m, &err), 0);
    assert_int_equal(m.trace, 0);
    assert_int_equal(m.peak, 32768);
    /* the thread-local allocation is indefinite; colour 1 shows no
     * indefinite heap objects but counts their bytes */
    assert_int_equal(m.indefinite_bytes, 32768);
    assert_int_equal(m.nobjects, 1);
    assert_int_equal(m.non_reusable_bytes, 32768);
    assert_false(m.timeline);
    hlo_mem_free(&m);
    assert_int_equal(hlo_mem_build(hp.p, hp.n, 0, &m, &err), 0);
    assert_int_equal(m.trace, HLO_MEM_NO_ID);
    assert_int_equal(m.ntimeline, 0);
    assert_int_equal(m.nobjects, 0);
    hlo_mem_free(&m);
    free(hp.p);
}

/* Ids that name nothing are skipped as XProf skips them. */
static void test_memory_viewer_unknown_ids(void **state)
{
    struct pbw ba = {0}, tr = {0}, hp;
    struct hlo_mem m;
    struct xp_err err = {0};

    (void)state;
    lb(&ba, 1, 65536, 2, -1, 0);
    lb(&ba, 2, 65536, 999, -1, 0); /* no such instruction */
    alloc(&ba, 0, 65536, 0, 0, (const int64_t[]){1, 0, 65536, 2, 0, 65536, 77, 0, 1}, 3);
    event(&tr, ALLOC, 1, "a", 0);
    event(&tr, ALLOC, 2, "x", 0);
    event(&tr, ALLOC, -5, "x", 0);
    event(&tr, SHARE, 1, "x", 12345);
    event(&tr, FREE, 1, "a", 0);
    pbw_msg(&ba, 4, &tr);
    hp = proto(&ba);
    assert_int_equal(build(&hp, &m, &err), 0);
    assert_int_equal(m.nlbufs, 1);
    assert_int_equal(m.ntimeline, 6);
    assert_int_equal(m.peak, 65536);
    assert_int_equal(m.heap[5], 0);
    hlo_mem_free(&m);
}

/* Build ba and expect a failure rc whose reason holds text. */
static void expect_failure(struct pbw *ba, int rc, const char *text)
{
    struct pbw hp = proto(ba);
    struct hlo_mem m;
    struct xp_err err = {0};

    assert_int_equal(build(&hp, &m, &err), rc);
    assert_int_equal(err.code, rc);
    if (strstr(err.msg, text) == NULL)
        fail_msg("reason '%s' lacks '%s'", err.msg, text);
    assert_int_equal(m.nlbufs, 0);
}

static void test_memory_viewer_hostile(void **state)
{
    struct pbw ba = {0}, tr = {0};

    (void)state;
    /* a trace touching two allocations */
    lb(&ba, 1, 65536, 2, -1, 0);
    lb(&ba, 2, 65536, 3, -1, 0);
    alloc(&ba, 0, 65536, 0, 0, (const int64_t[]){1, 0, 65536}, 1);
    alloc(&ba, 1, 65536, 0, 0, (const int64_t[]){2, 0, 65536}, 1);
    event(&tr, ALLOC, 1, "a", 0);
    event(&tr, ALLOC, 2, "b", 0);
    pbw_msg(&ba, 4, &tr);
    expect_failure(&ba, -EIO, "single buffer allocation");

    /* a double free */
    lb(&ba, 1, 65536, 2, -1, 0);
    alloc(&ba, 0, 65536, 0, 0, (const int64_t[]){1, 0, 65536}, 1);
    event(&tr, ALLOC, 1, "a", 0);
    event(&tr, FREE, 1, "a", 0);
    event(&tr, FREE, 1, "a", 0);
    pbw_msg(&ba, 4, &tr);
    expect_failure(&ba, -EIO, "freed more than once");

    /* a buffer sharing with itself, directly and through another */
    lb(&ba, 1, 65536, 2, -1, 0);
    lb(&ba, 2, 65536, 3, -1, 0);
    alloc(&ba, 0, 65536, 0, 0, (const int64_t[]){1, 0, 65536, 2, 0, 65536}, 2);
    event(&tr, ALLOC, 1, "a", 0);
    event(&tr, SHARE, 2, "b", 1);
    event(&tr, SHARE, 1, "a", 2);
    pbw_msg(&ba, 4, &tr);
    expect_failure(&ba, -EIO, "shares with itself");
    lb(&ba, 1, 65536, 2, -1, 0);
    alloc(&ba, 0, 65536, 0, 0, (const int64_t[]){1, 0, 65536}, 1);
    event(&tr, SHARE, 1, "a", 1);
    pbw_msg(&ba, 4, &tr);
    expect_failure(&ba, -EIO, "shares with itself");

    /* an unknown event kind */
    lb(&ba, 1, 65536, 2, -1, 0);
    alloc(&ba, 0, 65536, 0, 0, (const int64_t[]){1, 0, 65536}, 1);
    event(&tr, 7, 1, "a", 0);
    pbw_msg(&ba, 4, &tr);
    expect_failure(&ba, -EIO, "unhandled event kind 7");

    /* negative sizes and offsets */
    lb(&ba, 1, -4, 2, -1, 0);
    alloc(&ba, 0, 65536, 0, 0, (const int64_t[]){1, 0, 65536}, 1);
    expect_failure(&ba, -EIO, "negative size");
    lb(&ba, 1, 4, 2, -1, 0);
    alloc(&ba, 0, -1, 0, 0, (const int64_t[]){1, 0, 65536}, 1);
    expect_failure(&ba, -EIO, "negative size");
    lb(&ba, 1, 4, 2, -1, 0);
    alloc(&ba, 0, 8, 0, 0, (const int64_t[]){1, -8, 4}, 1);
    expect_failure(&ba, -EIO, "negative offset");

    /* an allocation index twice */
    alloc(&ba, 3, 8, 0, 0, NULL, 0);
    alloc(&ba, 3, 8, 0, 0, NULL, 0);
    expect_failure(&ba, -EIO, "appears twice");

    /* no buffer assignment; no module */
    expect_failure(NULL, -ENOENT, "no buffer assignment");
}

static void test_memory_viewer_malformed(void **state)
{
    struct pbw ba = {0}, hp;
    struct hlo_mem m;
    struct xp_err err = {0};
    size_t cut;
    int rc;

    (void)state;
    assert_int_equal(hlo_mem_build((const uint8_t *)"\x1a\x05\x0a", 3, 0, &m, &err), -EIO);
    assert_int_equal(hlo_mem_build((const uint8_t *)"", 0, 0, &m, &err), -ENOENT);
    buffers(&ba);
    trace(&ba);
    hp = proto(&ba);
    /* every cut either reads (a shorter proto) or fails with a reason */
    for (cut = 0; cut < hp.n; cut++) {
        memset(&err, 0, sizeof(err));
        rc = hlo_mem_build(hp.p, cut, 0, &m, &err);
        if (rc == 0)
            hlo_mem_free(&m);
        else
            assert_true(err.msg[0] != '\0' && (rc == -EIO || rc == -ENOENT));
    }
    free(hp.p);
}

/* A module with a bad field only the cost model reads is shown (XProf's
 * memory viewer never reads those fields). */
static void test_memory_viewer_graph_bad(void **state)
{
    struct pbw ba = {0}, hp;
    struct hlo_mem m;
    struct xp_err err = {0};

    (void)state;
    buffers(&ba);
    trace(&ba);
    hp = proto_of(module_of(1), &ba);
    assert_int_equal(build(&hp, &m, &err), 0);
    assert_int_equal(m.g.linked, 0);
    assert_int_equal(m.g.nnodes, 7);
    assert_int_equal(m.peak, 12 * MIB + 1024);
    assert_int_equal(m.nobjects, 5);
    assert_string_equal(node_name(&m, m.objects[3].lbuf), "c");
    hlo_mem_free(&m);
}

/* An instruction with metadata.stack_frame_id frame (and source_file file
 * at line 7 when not NULL). */
static void framed(struct pbw *comp, const char *name, int64_t id, const char *file, int64_t frame)
{
    struct pbw in = {0}, meta = {0}, shp = f32(128, 128);

    pbw_str(&in, 1, name);
    pbw_str(&in, 2, "fusion");
    pbw_msg(&in, 3, &shp);
    if (file != NULL) {
        pbw_str(&meta, 3, file);
        pbw_uint(&meta, 4, 7);
    }
    pbw_uint(&meta, 15, (uint64_t)frame);
    pbw_msg(&in, 7, &meta);
    pbw_uint(&in, 35, (uint64_t)id);
    pbw_msg(comp, 2, &in);
}

/* A StackFrameIndexProto entry (FileLocation or StackFrame) of n ints. */
static void ints(struct pbw *idx, uint32_t field, const int64_t *v, int n)
{
    struct pbw e = {0};
    int i;

    for (i = 0; i < n; i++)
        pbw_uint(&e, (uint32_t)i + 1, (uint64_t)v[i]);
    pbw_msg(idx, field, &e);
}

/* Stack frames as XProf's memory viewer builds them (BuildStackFrames):
 * "file:line:col" lines joined by '\n', a frame without a readable
 * location kept as ":-1:-1"; the source info is the metadata's file, else
 * the first frame's. The module is read without instruction texts. */
static void test_memory_viewer_stack_frames(void **state)
{
    struct pbw m = {0}, c = {0}, idx = {0}, ba = {0}, hp = {0};
    struct hlo_mem mem;
    struct xp_err err = {0};
    const struct hlo_node *nd;
    int32_t line;

    (void)state;
    pbw_str(&idx, 1, "a.py");
    pbw_str(&idx, 1, "b.py");
    ints(&idx, 3, (const int64_t[]){1, 0, 3, 1}, 4); /* location 1: a.py:3:1 */
    ints(&idx, 3, (const int64_t[]){2, 0, 7, 2}, 4); /* location 2: b.py:7:2 */
    ints(&idx, 4, (const int64_t[]){2, 0}, 2);       /* frame 1: b.py:7:2 */
    ints(&idx, 4, (const int64_t[]){1, 1}, 2);       /* frame 2: a.py:3:1, then 1 */
    ints(&idx, 4, (const int64_t[]){9, 1}, 2);       /* frame 3: no location, then 1 */
    framed(&c, "x", 1, NULL, 2);
    framed(&c, "y", 2, NULL, 3);
    framed(&c, "z", 3, "z.py", 2);
    pbw_str(&c, 1, "main");
    pbw_uint(&c, 5, 1);
    pbw_uint(&c, 6, 3);
    pbw_str(&m, 1, "framed");
    pbw_msg(&m, 3, &c);
    pbw_uint(&m, 6, 1);
    pbw_msg(&m, 17, &idx);
    lb(&ba, 1, 65536, 1, -1, 0);
    alloc(&ba, 0, 65536, 0, 0, (const int64_t[]){1, 0, 65536}, 1);
    hp = proto_of(m, &ba);
    assert_int_equal(build(&hp, &mem, &err), 0);
    nd = &mem.g.nodes[0];
    assert_string_equal(nd->stack_frame, "a.py:3:1\nb.py:7:2");
    assert_string_equal(hlo_mem_source(&mem.arena, nd, &line), "a.py");
    assert_int_equal(line, 3);
    assert_string_equal(nd->text, ""); /* no texts printed */
    nd = &mem.g.nodes[1];
    assert_string_equal(nd->stack_frame, ":-1:-1\nb.py:7:2");
    assert_string_equal(hlo_mem_source(&mem.arena, nd, &line), ""); /* no file: no source */
    nd = &mem.g.nodes[2];
    assert_string_equal(nd->stack_frame, "a.py:3:1\nb.py:7:2");
    assert_string_equal(hlo_mem_source(&mem.arena, nd, &line), "z.py");
    assert_int_equal(line, 7);
    hlo_mem_free(&mem);
}

/* A million events (one buffer allocated and freed over and over), then a
 * heap that only grows (200000 buffers live at the peak): linear time. */
static void test_memory_viewer_many_events(void **state)
{
    struct pbw ba = {0}, tr = {0}, hp;
    struct hlo_mem m;
    struct xp_err err = {0};
    struct timespec t0, t1;
    int64_t i, n = 200000;

    (void)state;
    lb(&ba, 1, 65536, 2, -1, 0);
    alloc(&ba, 0, 65536, 0, 0, (const int64_t[]){1, 0, 65536}, 1);
    for (i = 0; i < 500000; i++) {
        event(&tr, ALLOC, 1, "a", 0);
        event(&tr, FREE, 1, "a", 0);
    }
    pbw_msg(&ba, 4, &tr);
    hp = proto(&ba);
    clock_gettime(CLOCK_MONOTONIC, &t0);
    assert_int_equal(build(&hp, &m, &err), 0);
    assert_int_equal(m.ntimeline, 1000001);
    assert_int_equal(m.peak_position, 0);
    hlo_mem_free(&m);

    memset(&ba, 0, sizeof(ba));
    memset(&tr, 0, sizeof(tr));
    {
        struct pbw a = {0};
        pbw_uint(&a, 1, 0);
        pbw_uint(&a, 2, (uint64_t)n * 32768);
        for (i = 0; i < n; i++) {
            struct pbw as = {0};
            lb(&ba, i + 1, 32768, 2, -1, 0);
            pbw_uint(&as, 1, (uint64_t)i + 1);
            pbw_uint(&as, 2, (uint64_t)i * 32768);
            pbw_uint(&as, 3, 32768);
            pbw_msg(&a, 9, &as);
            event(&tr, ALLOC, i + 1, "a", 0);
        }
        for (i = 0; i < n; i++)
            event(&tr, FREE, i + 1, "a", 0);
        pbw_msg(&ba, 3, &a);
    }
    pbw_msg(&ba, 4, &tr);
    hp = proto(&ba);
    assert_int_equal(build(&hp, &m, &err), 0);
    assert_int_equal(m.peak_position, n - 1);
    assert_int_equal(m.nobjects, n);
    assert_int_equal(m.nblocks, n + 1);
    hlo_mem_free(&m);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    /* generous for sanitizer builds; quadratic work would take minutes */
    assert_true(t1.tv_sec - t0.tv_sec < 60);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_memory_viewer_peak),
        cmocka_unit_test(test_memory_viewer_spans_and_blocks),
        cmocka_unit_test(test_memory_viewer_share_after_free),
        cmocka_unit_test(test_memory_viewer_colour),
        cmocka_unit_test(test_memory_viewer_unknown_ids),
        cmocka_unit_test(test_memory_viewer_hostile),
        cmocka_unit_test(test_memory_viewer_malformed),
        cmocka_unit_test(test_memory_viewer_graph_bad),
        cmocka_unit_test(test_memory_viewer_stack_frames),
        cmocka_unit_test(test_memory_viewer_many_events),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
