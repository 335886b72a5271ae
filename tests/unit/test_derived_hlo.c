/*
 * test_derived_hlo.c - the HLO symbols of the derived GPU lines: framework
 * op names and their display names and name scopes (tf_op_utils.cc rules),
 * and the instructions read from a hand-built /host:metadata plane (program
 * ids, first module of a program, op_name ":" op_type, basename:line), and
 * which modules of hostile bytes the shared HLO reader (hlo_module.h) keeps
 * for the derived lines and for op_stats.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <string.h>

#include "xplane/derived_hlo.h"
#include "hlo/hlo_module.h"
#include "op_stats/op_stats_hlo.h"
#include "pbw.h"
#include "reader/xspace.h"

static void check_shown(const char *full, const char *want, int want_iter)
{
    size_t len;
    int iter;
    const char *s = derived_tf_op_shown(full, strlen(full), &len, &iter);

    assert_int_equal(iter, want_iter);
    assert_int_equal(len, strlen(want));
    assert_memory_equal(s, want, len);
}

static void test_shown(void **state)
{
    (void)state;
    check_shown("model/dense/MatMul:MatMul", "MatMul", 0);                     /* TensorFlow */
    check_shown("jit(f)/jit(main)/dot_general:dot_general", "dot_general", 0); /* JAX */
    check_shown("jit(f)/transpose[permutation=(1, 0)]:", "transpose", 0); /* JAX, derived type */
    check_shown("jit(f)/add_3:", "add", 0);                               /* numeric suffix */
    check_shown("kernel:", "kernel", 0);
    check_shown(":", "", 0);                        /* empty metadata: TensorFlow, no type */
    check_shown("Iterator::Batch::Map", "Map", 1);  /* tf.data */
    check_shown("foo bar:Baz  ", "foo bar:Baz", 0); /* unknown: the name, right-trimmed */
    check_shown("MEMCPYHToD", "MemcpyHToD", 0);
}

struct scopes {
    char got[8][32];
    int n;
};

static int collect(void *arg, const char *s, size_t n)
{
    struct scopes *sc = arg;

    assert_true(sc->n < 8 && n < 32);
    memcpy(sc->got[sc->n], s, n);
    sc->got[sc->n][n] = '\0';
    sc->n++;
    return 0;
}

static void test_scopes(void **state)
{
    struct scopes sc;
    const char *jax = "jit(f)/jit(main)/layer_0/dot_general:";
    const char *tf = "model//dense/MatMul:MatMul";
    const char *data = "Iterator::Batch::Map";

    (void)state;
    memset(&sc, 0, sizeof(sc));
    assert_int_equal(derived_tf_op_scopes(jax, strlen(jax), collect, &sc), 0);
    assert_int_equal(sc.n, 3);
    assert_string_equal(sc.got[0], "jit(f)");
    assert_string_equal(sc.got[1], "jit(main)");
    assert_string_equal(sc.got[2], "layer_0");
    memset(&sc, 0, sizeof(sc));
    assert_int_equal(derived_tf_op_scopes(tf, strlen(tf), collect, &sc), 0);
    assert_int_equal(sc.n, 3); /* an empty scope is kept */
    assert_string_equal(sc.got[1], "");
    memset(&sc, 0, sizeof(sc));
    assert_int_equal(derived_tf_op_scopes(data, strlen(data), collect, &sc), 0);
    assert_int_equal(sc.n, 0); /* only TensorFlow and JAX ops have scopes */
}

/* An HloInstructionProto with optional metadata. */
static void add_instr(struct pbw *comp, const char *name, const char *op_name, const char *op_type,
                      const char *file, int32_t line)
{
    struct pbw in = {0}, md = {0};

    pbw_str(&in, 1, name);
    pbw_str(&in, 2, "fusion");
    if (op_name != NULL) {
        if (op_type != NULL)
            pbw_str(&md, 1, op_type);
        pbw_str(&md, 2, op_name);
        if (file != NULL) {
            pbw_str(&md, 3, file);
            pbw_uint(&md, 4, (uint64_t)(int64_t)line);
        }
        pbw_msg(&in, 7, &md);
    }
    pbw_msg(comp, 2, &in);
}

/* An HloProto of one module; the instruction "tag" says which module; extra
 * (n bytes, may be NULL) is appended to the bytes of instruction "tag". */
static void hlo_proto_extra(struct pbw *out, const char *tag, const void *extra, size_t n)
{
    struct pbw mod = {0}, comp = {0}, in = {0}, md = {0};

    add_instr(&comp, "fusion.1", "jit(f)/jit(main)/dot_general", "dot_general",
              "/work/src/model.py", 42);
    add_instr(&comp, "param.0", NULL, NULL, NULL, 0);
    add_instr(&comp, "copy.2", "model/dense/MatMul", "MatMul", "train.py", -1);
    add_instr(&comp, "fusion.1", "later/duplicate", "", NULL, 0); /* the first one is kept */
    {
        struct pbw loop = {0}; /* a fusion with its kind (field 11) */
        pbw_str(&loop, 1, "loop.3");
        pbw_str(&loop, 2, "fusion");
        pbw_str(&loop, 11, "kLoop");
        pbw_msg(&comp, 2, &loop);
    }
    pbw_str(&in, 1, "tag");
    pbw_str(&in, 2, "convolution");
    pbw_str(&md, 2, tag);
    pbw_msg(&in, 7, &md);
    if (extra != NULL)
        pbw_raw(&in, extra, n);
    pbw_msg(&comp, 2, &in);
    pbw_str(&mod, 1, "jit_f");
    pbw_msg(&mod, 3, &comp);
    pbw_msg(out, 1, &mod);
}

/* A metadata event id with the HloProto bytes proto[0..n) and, when
 * program >= 0, a program_id stat. */
static void add_proto(struct pbw *plane, int64_t id, const void *proto, size_t n, int64_t program)
{
    struct pbw entry = {0}, em = {0}, st = {0};

    pbw_uint(&em, 1, (uint64_t)id);
    pbw_str(&em, 2, "jit_f");
    pbw_uint(&st, 1, 1);
    pbw_bytes(&st, 6, proto, n);
    pbw_msg(&em, 5, &st);
    if (program >= 0) {
        pbw_uint(&st, 1, 2);
        pbw_uint(&st, 4, (uint64_t)program);
        pbw_msg(&em, 5, &st);
    }
    pbw_uint(&entry, 1, (uint64_t)id);
    pbw_msg(&entry, 2, &em);
    pbw_msg(plane, 4, &entry);
}

static void add_module_extra(struct pbw *plane, int64_t id, const char *tag, int64_t program,
                             const void *extra, size_t n)
{
    struct pbw proto = {0};

    hlo_proto_extra(&proto, tag, extra, n);
    add_proto(plane, id, proto.p, proto.n, program);
    free(proto.p);
}

static void add_module(struct pbw *plane, int64_t id, const char *tag, int64_t program)
{
    add_module_extra(plane, id, tag, program, NULL, 0);
}

static void add_stat_meta(struct pbw *plane, int64_t id, const char *name)
{
    struct pbw entry = {0}, sm = {0};

    pbw_uint(&sm, 1, (uint64_t)id);
    pbw_str(&sm, 2, name);
    pbw_uint(&entry, 1, (uint64_t)id);
    pbw_msg(&entry, 2, &sm);
    pbw_msg(plane, 5, &entry);
}

static void test_modules(void **state)
{
    struct pbw space = {0}, plane = {0};
    struct xspace *xs = NULL;
    struct derived_hlo *h = NULL;
    struct hlo_modules *mods = NULL;
    struct xp_err err;
    const struct dh_instr *in;

    (void)state;
    memset(&err, 0, sizeof(err));
    pbw_uint(&plane, 1, 7);
    pbw_str(&plane, 2, "/host:metadata");
    add_stat_meta(&plane, 1, "Hlo Proto");
    add_stat_meta(&plane, 2, "program_id");
    add_module(&plane, 3, "first", -1); /* program 3 (the metadata id) */
    add_module(&plane, 4, "second", 3); /* program 3 again: the first wins */
    add_module(&plane, 5, "third", 9);  /* program 9 (the program_id stat) */
    pbw_msg(&space, 1, &plane);
    assert_int_equal(xspace_open_buffer("t.xplane.pb", space.p, space.n, &xs, &err), 0);
    assert_int_equal(xspace_decode(xs, 1, &err), 0);
    assert_int_equal(hlo_modules_read(xs, &mods, &err), 0);
    assert_int_equal(mods->nmods, 2); /* the second module of program 3 is not read */
    assert_int_equal(derived_hlo_build(mods, &h, &err), 0);
    assert_int_equal(h->nmods, 2);

    in = derived_hlo_find(h, 3, "fusion.1xyz", 8); /* a name given by length */
    assert_non_null(in);
    assert_string_equal(in->tf_op, "jit(f)/jit(main)/dot_general:dot_general");
    assert_string_equal(in->tf_shown, "dot_general");
    assert_int_equal(in->nscopes, 2);
    assert_string_equal(in->scopes[0], "jit(f)");
    assert_string_equal(in->scopes[1], "jit(main)");
    assert_string_equal(in->source, "model.py:42");

    in = derived_hlo_find(h, 3, "param.0", 7);
    assert_non_null(in);
    assert_string_equal(in->tf_op, ":"); /* TraceMeOp of empty metadata */
    assert_null(in->tf_shown);
    assert_int_equal(in->nscopes, 0);
    assert_null(in->source);

    in = derived_hlo_find(h, 9, "copy.2", 6);
    assert_non_null(in);
    assert_string_equal(in->tf_op, "model/dense/MatMul:MatMul");
    assert_string_equal(in->tf_shown, "MatMul");
    assert_string_equal(in->source, "train.py:-1");
    /* Equal strings are stored once. */
    assert_ptr_equal(in->tf_op, derived_hlo_find(h, 3, "copy.2", 6)->tf_op);

    assert_string_equal(derived_hlo_find(h, 3, "tag", 3)->tf_op, "first:");
    assert_string_equal(derived_hlo_find(h, 9, "tag", 3)->tf_op, "third:");
    assert_null(derived_hlo_find(h, 4, "fusion.1", 8)); /* no program 4 */
    assert_null(derived_hlo_find(h, 3, "fusion", 6));
    assert_null(derived_hlo_find(h, 3, "zzz", 3));
    derived_hlo_free(h);
    hlo_modules_free(mods);
    xspace_close(xs);
    free(space.p);
}

/* A metadata event whose HloProto bytes are empty (the stat's view has no
 * pointer) is an empty module, read without arithmetic on the missing
 * pointer: clang's UBSan (make test-clang) reported NULL + 0 in wire_init. */
static void test_empty_proto_bytes(void **state)
{
    struct pbw space = {0}, plane = {0};
    struct xspace *xs = NULL;
    struct hlo_modules *mods = NULL;
    struct derived_hlo *h = NULL;
    struct xp_err err;

    (void)state;
    memset(&err, 0, sizeof(err));
    pbw_uint(&plane, 1, 7);
    pbw_str(&plane, 2, "/host:metadata");
    add_stat_meta(&plane, 1, "Hlo Proto");
    add_stat_meta(&plane, 2, "program_id");
    add_proto(&plane, 3, NULL, 0, 5);
    add_module(&plane, 4, "kept", 6);
    pbw_msg(&space, 1, &plane);
    assert_int_equal(xspace_open_buffer("t.xplane.pb", space.p, space.n, &xs, &err), 0);
    assert_int_equal(xspace_decode(xs, 1, &err), 0);
    assert_int_equal(hlo_modules_read(xs, &mods, &err), 0);
    assert_int_equal(derived_hlo_build(mods, &h, &err), 0);
    assert_null(derived_hlo_find(h, 5, "tag", 3));
    assert_string_equal(derived_hlo_find(h, 6, "tag", 3)->tf_op, "kept:");
    derived_hlo_free(h);
    hlo_modules_free(mods);
    xspace_close(xs);
    free(space.p);
}

/* Hostile HLO bytes: a corrupt proto is skipped; a module whose window is
 * unreadable serves the derived lines but not op_stats (which reads
 * windows); bad bytes only the cost model reads keep the names. */
static void test_hostile(void **state)
{
    /* Window { dimensions: LEN 9 } with 1 byte left; a shape with a cut varint. */
    static const uint8_t bad_window[] = {0x7a, 0x02, 0x0a, 0x09};
    static const uint8_t bad_shape[] = {0x1a, 0x02, 0x10, 0x80};
    static const uint8_t dilated[] = {0x7a, 0x04, 0x0a, 0x02, 0x28, 0x02}; /* window_dilation 2 */
    static const uint8_t truncated[] = {0x0a, 0x05, 0x0a, 0x01};
    struct pbw space = {0}, plane = {0};
    struct xspace *xs = NULL;
    struct derived_hlo *h = NULL;
    struct hlo_map *m = NULL;
    struct hlo_modules *mods = NULL;
    const struct hlo_instr *oi;
    struct xp_err err;

    (void)state;
    memset(&err, 0, sizeof(err));
    pbw_uint(&plane, 1, 7);
    pbw_str(&plane, 2, "/host:metadata");
    add_stat_meta(&plane, 1, "Hlo Proto");
    add_stat_meta(&plane, 2, "program_id");
    add_proto(&plane, 3, truncated, sizeof(truncated), -1);                   /* corrupt: skipped */
    add_module_extra(&plane, 4, "second", 3, bad_window, sizeof(bad_window)); /* derived only */
    add_module_extra(&plane, 5, "third", 3, dilated, sizeof(dilated));        /* op_stats */
    add_module(&plane, 6, "fourth", 3);                                       /* not read */
    add_module_extra(&plane, 7, "fifth", 9, bad_shape, sizeof(bad_shape));    /* names only */
    pbw_msg(&space, 1, &plane);
    assert_int_equal(xspace_open_buffer("t.xplane.pb", space.p, space.n, &xs, &err), 0);
    assert_int_equal(xspace_decode(xs, 1, &err), 0);
    assert_int_equal(hlo_modules_read(xs, &mods, &err), 0);
    assert_int_equal(mods->nmods, 3);
    assert_int_equal(mods->mods[0].window_corrupt, 1);
    assert_int_equal(mods->mods[0].g.linked, 0);
    assert_int_equal(mods->mods[1].window_corrupt, 0);
    assert_int_equal(mods->mods[1].g.linked, 1);
    assert_int_equal(mods->mods[2].program_id, 9);
    assert_int_equal(mods->mods[2].g.linked, 0);
    assert_int_equal(mods->mods[2].g.nnodes, 6); /* four add_instr, loop.3 and tag */

    assert_int_equal(derived_hlo_build(mods, &h, &err), 0);
    assert_int_equal(h->nmods, 2);
    assert_string_equal(derived_hlo_find(h, 3, "tag", 3)->tf_op, "second:");
    assert_string_equal(derived_hlo_find(h, 9, "tag", 3)->tf_op, "fifth:");

    assert_int_equal(hlo_map_build(mods, &m, &err), 0);
    assert_int_equal(m->nmods, 2);
    oi = hlo_map_find(m, 3, "tag", 3);
    assert_non_null(oi);
    assert_string_equal(oi->op_name, "third");
    assert_string_equal(oi->category, "convolution window-dilated");
    oi = hlo_map_find(m, 9, "tag", 3);
    assert_non_null(oi);
    assert_string_equal(oi->provenance, "fifth:");
    assert_string_equal(oi->category, "convolution");
    assert_int_equal(oi->flops, 0); /* no cost model on a module that is not whole */
    assert_string_equal(hlo_map_find(m, 9, "fusion.1", 8)->category, "custom fusion");
    assert_string_equal(hlo_map_find(m, 9, "loop.3", 6)->category, "loop fusion");

    hlo_map_free(m);
    derived_hlo_free(h);
    hlo_modules_free(mods);
    xspace_close(xs);
    free(space.p);
}

/* An HloProto of a module main(p) whose tuple "t" names the wide parameter
 * p 200 times: about 14 KB of text from about 300 bytes. */
static void wide_proto(struct pbw *out)
{
    struct pbw mod = {0}, comp = {0}, in = {0}, shape = {0}, layout = {0}, dims = {0}, m2m = {0},
               ops = {0};
    int i;

    for (i = 0; i < 10; i++) {
        pbw_varint(&dims, (uint64_t)(1000 + i));
        pbw_varint(&m2m, (uint64_t)(9 - i));
    }
    for (i = 0; i < 200; i++)
        pbw_varint(&ops, 1);
    pbw_uint(&shape, 2, 11); /* F32 */
    pbw_bytes(&shape, 3, dims.p, dims.n);
    pbw_bytes(&layout, 1, m2m.p, m2m.n);
    pbw_msg(&shape, 5, &layout);
    pbw_str(&in, 1, "p");
    pbw_str(&in, 2, "parameter");
    pbw_msg(&in, 3, &shape);
    pbw_uint(&in, 35, 1);
    pbw_msg(&comp, 2, &in);
    pbw_str(&in, 1, "t");
    pbw_str(&in, 2, "tuple");
    pbw_uint(&shape, 2, 11);
    pbw_msg(&in, 3, &shape);
    pbw_uint(&in, 35, 2);
    pbw_bytes(&in, 36, ops.p, ops.n);
    pbw_msg(&comp, 2, &in);
    pbw_str(&comp, 1, "main");
    pbw_uint(&comp, 5, 1);
    pbw_uint(&comp, 6, 2);
    pbw_str(&mod, 1, "wide");
    pbw_msg(&mod, 3, &comp);
    pbw_uint(&mod, 6, 1);
    pbw_msg(out, 1, &mod);
    free(dims.p);
    free(m2m.p);
    free(ops.p);
}

/* The texts of all the modules of a host share one budget, 1 MiB plus 4
 * times the modules' bytes: 100 small modules with 14 KB of text each get
 * their texts until it is spent, the later ones none, and the host counts
 * what was left out. (A budget per module, with a floor of 32 MiB each,
 * let a thousand small modules make 34 GB of text.) */
static void test_shared_text_budget(void **state)
{
    struct pbw space = {0}, plane = {0}, proto = {0};
    struct xspace *xs = NULL;
    struct hlo_modules *mods = NULL;
    struct xp_err err;
    size_t text = 0, bytes = 0;
    uint32_t i, empty = 0;

    (void)state;
    memset(&err, 0, sizeof(err));
    pbw_uint(&plane, 1, 7);
    pbw_str(&plane, 2, "/host:metadata");
    add_stat_meta(&plane, 1, "Hlo Proto");
    add_stat_meta(&plane, 2, "program_id");
    wide_proto(&proto);
    for (i = 0; i < 100; i++)
        add_proto(&plane, 3 + i, proto.p, proto.n, 1000 + i);
    pbw_msg(&space, 1, &plane);
    assert_int_equal(xspace_open_buffer("t.xplane.pb", space.p, space.n, &xs, &err), 0);
    assert_int_equal(xspace_decode(xs, 1, &err), 0);
    assert_int_equal(hlo_modules_read(xs, &mods, &err), 0);
    assert_int_equal(mods->nmods, 100);
    for (i = 0; i < mods->nmods; i++) {
        const struct hlo_graph *g = &mods->mods[i].g;
        assert_int_equal(g->nnodes, 2);
        assert_string_equal(g->nodes[1].name, "t");
        text += strlen(g->nodes[0].text) + strlen(g->nodes[1].text);
        empty += g->nodes[1].text[0] == '\0';
        if (i == 0)
            assert_true(strlen(g->nodes[1].text) > 14000);
    }
    bytes = 100 * (proto.n - 3); /* each module without its HloProto framing */
    assert_true(text <= ((size_t)1 << 20) + 4 * bytes);
    assert_true(text > ((size_t)1 << 20)); /* most of it spent */
    assert_true(empty > 10 && empty < 50);
    assert_string_equal(mods->mods[99].g.nodes[1].text, "");
    assert_true(mods->texts_truncated >= empty);
    hlo_modules_free(mods);
    xspace_close(xs);
    free(proto.p);
    free(space.p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_shown),
        cmocka_unit_test(test_scopes),
        cmocka_unit_test(test_modules),
        cmocka_unit_test(test_hostile),
        cmocka_unit_test(test_empty_proto_bytes),
        cmocka_unit_test(test_shared_text_budget),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
