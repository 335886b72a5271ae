/*
 * test_pt_tree.c - TraceLens's call tree of a PyTorch trace on a small
 * hand-made trace (nesting by time per thread, event bleed below and above
 * 1 µs, ties in file order, python_function in or out, launch -> kernel),
 * and the Python helpers the launcher tables lean on (CPython's set order,
 * repr of floats / strings / JSON args, round(x, 2)), the walkable tree
 * of call_tree.txt / modules.txt (children order, roots, GPU reach, busy
 * time) and the perf models of roofline.csv. Expected values were
 * worked out by hand from TraceLens's rules or printed by CPython 3.11.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "reader/ctrace.h"
#include "tracelens/pt_launchers.h"
#include "tracelens/pt_nodes.h"
#include "tracelens/pt_perf_model.h"
#include "tracelens/pt_pyrepr.h"
#include "tracelens/pt_pyset.h"
#include "tracelens/pt_tree.h"

/* UIDs are positions in traceEvents (comments give them). */
static const char doc[] =
    "{\"traceEvents\":[\n"
    /* 0 */ "{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":1,\"tid\":0,\"args\":{\"name\":\"p\"}}"
    ",\n"
    /* 1 */ "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"outer\",\"pid\":1,\"tid\":1,\"ts\":0,"
    "\"dur\":100},\n"
    /* 2 */ "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"aten::mm\",\"pid\":1,\"tid\":1,\"ts\":10,"
    "\"dur\":20},\n"
    /* 3 */ "{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"cudaLaunchKernel\",\"pid\":1,"
    "\"tid\":1,\"ts\":12,\"dur\":5,\"args\":{\"correlation\":1}},\n"
    /* 4 */ "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k1\",\"pid\":0,\"tid\":7,\"ts\":50,"
    "\"dur\":5,\"args\":{\"correlation\":1,\"stream\":7}},\n"
    /* 5 */ "{\"ph\":\"s\",\"cat\":\"ac2g\",\"name\":\"ac2g\",\"id\":1,\"pid\":1,\"tid\":1,"
    "\"ts\":12},\n"
    /* 6 */ "{\"ph\":\"f\",\"cat\":\"ac2g\",\"name\":\"ac2g\",\"id\":1,\"pid\":0,\"tid\":7,"
    "\"ts\":50,\"bp\":\"e\"},\n"
    /* 7: starts 0.5 µs before aten::mm ends and outlasts it: moves up to outer */
    "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"bleed\",\"pid\":1,\"tid\":1,\"ts\":29.5,"
    "\"dur\":10},\n"
    /* 8: overlaps bleed's end by 4.5 µs: left out of the tree */
    "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"big_bleed\",\"pid\":1,\"tid\":1,\"ts\":35,"
    "\"dur\":80},\n"
    /* 9: inside bleed (8 was never pushed) */
    "{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"cudaMemsetAsync\",\"pid\":1,\"tid\":1,"
    "\"ts\":36,\"dur\":1},\n"
    /* 10: another thread: a root */
    "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"other_thread\",\"pid\":1,\"tid\":2,\"ts\":11,"
    "\"dur\":5},\n"
    /* 11: python_function: in the tree only with add_python_func */
    "{\"ph\":\"X\",\"cat\":\"python_function\",\"name\":\"nn.Module: L\",\"pid\":1,\"tid\":1,"
    "\"ts\":40,\"dur\":10},\n"
    /* 12: a launch under 11 (or under outer without python functions) */
    "{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"cudaLaunchKernel\",\"pid\":1,\"tid\":1,"
    "\"ts\":41,\"dur\":1,\"args\":{\"correlation\":2}},\n"
    /* 13: starts exactly when outer ends: outer has ended */
    "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"edge\",\"pid\":1,\"tid\":1,\"ts\":100,"
    "\"dur\":5},\n"
    /* 14, 15: same start: file order decides, the second nests in the first */
    "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"a\",\"pid\":1,\"tid\":3,\"ts\":200,\"dur\":10},\n"
    "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"b\",\"pid\":1,\"tid\":3,\"ts\":200,\"dur\":5},\n"
    /* 16, 17: a sub-µs bleed past a thread root is left out */
    "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"root\",\"pid\":1,\"tid\":4,\"ts\":300,"
    "\"dur\":10},\n"
    "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"late\",\"pid\":1,\"tid\":4,\"ts\":309.5,"
    "\"dur\":10},\n"
    /* 18: a kernel of launch 12 (flow pair 19, 20), listed before its events */
    "{\"ph\":\"X\",\"cat\":\"gpu_memset\",\"name\":\"Memset\",\"pid\":0,\"tid\":7,\"ts\":60,"
    "\"dur\":1,\"args\":{\"correlation\":2}},\n"
    "{\"ph\":\"s\",\"cat\":\"ac2g\",\"name\":\"ac2g\",\"id\":2,\"pid\":1,\"tid\":1,\"ts\":41},\n"
    "{\"ph\":\"f\",\"cat\":\"ac2g\",\"name\":\"ac2g\",\"id\":2,\"pid\":0,\"tid\":7,\"ts\":60,"
    "\"bp\":\"e\"},\n"
    /* 21: a kernel nothing launches */
    "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"orphan\",\"pid\":0,\"tid\":7,\"ts\":70,"
    "\"dur\":1,\"args\":{\"correlation\":99}}\n"
    "]}\n";

static struct ctrace *load_doc(void)
{
    struct ctrace *ct = NULL;
    struct xp_err err = {0};

    assert_int_equal(ctrace_load_mem("tree.json", doc, strlen(doc), &ct, &err), 0);
    assert_int_equal(ct->nevents, 22);
    return ct;
}

static void test_tree_without_python(void **state)
{
    static const uint32_t want[22] = {
        PT_NONE, PT_NONE, 1,       2,       3,  PT_NONE, PT_NONE, 1,  PT_NONE, 7,       PT_NONE,
        PT_NONE, 1,       PT_NONE, PT_NONE, 14, PT_NONE, PT_NONE, 12, PT_NONE, PT_NONE, PT_NONE};
    struct ctrace *ct = load_doc();
    struct pt_tree t;
    uint32_t i;

    (void)state;
    assert_int_equal(pt_tree_build(ct, 0, &t), 0);
    assert_int_equal(t.nevents, 22);
    for (i = 0; i < 22; i++) {
        if (t.parent[i] != want[i])
            fail_msg("event %u: parent %u, want %u", i, t.parent[i], want[i]);
    }
    assert_int_equal(t.kind[0], PT_OTHER);
    assert_int_equal(t.kind[1], PT_CPU_OP);
    assert_int_equal(t.kind[3], PT_RUNTIME);
    assert_int_equal(t.kind[4], PT_GPU);
    assert_int_equal(t.kind[11], PT_PYTHON);
    assert_int_equal(t.kind[18], PT_GPU);
    pt_tree_free(&t);
    ctrace_free(ct);
}

static void test_tree_with_python(void **state)
{
    struct ctrace *ct = load_doc();
    struct pt_tree t;

    (void)state;
    assert_int_equal(pt_tree_build(ct, 1, &t), 0);
    assert_int_equal(t.parent[11], 1);
    assert_int_equal(t.parent[12], 11);
    assert_int_equal(t.parent[18], 12);
    assert_int_equal(t.parent[9], 7);
    pt_tree_free(&t);
    ctrace_free(ct);
}

static void test_tree_membership(void **state)
{
    static const uint32_t in[] = {1, 2, 3, 7, 9, 10, 12, 13, 14, 15, 16};
    static const uint32_t out[] = {0, 4, 5, 8, 11, 17, 18, 21};
    struct ctrace *ct = load_doc();
    struct pt_tree t;
    size_t i;

    (void)state;
    assert_int_equal(pt_tree_build(ct, 0, &t), 0);
    for (i = 0; i < sizeof(in) / sizeof(in[0]); i++)
        assert_int_equal(t.in_tree[in[i]], 1);
    for (i = 0; i < sizeof(out) / sizeof(out[0]); i++)
        assert_int_equal(t.in_tree[out[i]], 0);
    pt_tree_free(&t);
    assert_int_equal(pt_tree_build(ct, 1, &t), 0);
    assert_int_equal(t.in_tree[11], 1);
    pt_tree_free(&t);
    ctrace_free(ct);
}

static void expect_children(const struct pt_nodes *nd, uint32_t i, const uint32_t *want, uint32_t n)
{
    uint32_t k;

    assert_int_equal(nd->child_first[i + 1] - nd->child_first[i], n);
    for (k = 0; k < n; k++)
        assert_int_equal(nd->children[nd->child_first[i] + k], want[k]);
}

static void test_nodes(void **state)
{
    /* Host children by start, then GPU events; roots include the events the
     * bleed rule left out (8, 17), by start. */
    static const uint32_t kids1[] = {2, 7, 12}, kids2[] = {3}, kids3[] = {4}, kids12[] = {18};
    static const uint32_t roots[] = {1, 10, 8, 13, 14, 16, 17};
    static const uint32_t gpu[] = {4, 18};
    struct ctrace *ct = load_doc();
    struct pt_nodes nd;
    char name[80];
    uint32_t i;
    int is_int, ok;
    double busy;

    (void)state;
    assert_int_equal(pt_nodes_build(ct, 0, &nd), 0);
    expect_children(&nd, 1, kids1, 3);
    expect_children(&nd, 2, kids2, 1);
    expect_children(&nd, 3, kids3, 1);
    expect_children(&nd, 12, kids12, 1);
    assert_int_equal(nd.nroots, 7);
    for (i = 0; i < 7; i++)
        assert_int_equal(nd.roots[i], roots[i]);
    assert_true(nd.has_gpu[1] && nd.has_gpu[2] && nd.has_gpu[3] && nd.has_gpu[12]);
    assert_false(nd.has_gpu[7] || nd.has_gpu[9] || nd.has_gpu[10] || nd.has_gpu[13]);
    busy = pt_busy_time(ct, gpu, 2, &is_int, &ok);
    assert_true(ok);
    assert_true(is_int);
    assert_true(busy == 6.0);
    pt_node_name(ct, 1, 3, name, sizeof(name));
    assert_string_equal(name, "out..");
    pt_node_name(ct, 1, 5, name, sizeof(name));
    assert_string_equal(name, "outer");
    pt_nodes_free(&nd);
    /* With python functions the module call sits between outer and launch 12. */
    assert_int_equal(pt_nodes_build(ct, 1, &nd), 0);
    assert_int_equal(nd.t.parent[12], 11);
    assert_true(nd.has_gpu[11]);
    pt_nodes_free(&nd);
    ctrace_free(ct);
}

static int model(const char *name, const char *json, struct pt_perf *p)
{
    cJSON *args = cJSON_Parse(json);
    int rc;

    assert_non_null(args);
    rc = pt_perf_model(name, args, p);
    cJSON_Delete(args);
    return rc;
}

static void test_perf_models(void **state)
{
    struct pt_perf p;

    (void)state;
    assert_true(pt_perf_model_known("aten::addmm"));
    assert_false(pt_perf_model_known("aten::linear"));
    /* mm (64x32)@(32x128) bf16: 2*64*128*32 FLOPs, (64*32 + 32*128 + 64*128) * 2 bytes */
    assert_int_equal(model("aten::mm",
                           "{\"Input Dims\":[[64,32],[32,128]],"
                           "\"Input type\":[\"c10::BFloat16\",\"c10::BFloat16\"]}",
                           &p),
                     0);
    assert_string_equal(p.category, "GEMM");
    assert_true(p.flops == 524288.0);
    assert_true(p.has_bytes && p.bytes == 28672.0);
    assert_string_equal(p.precision, "bf16");
    /* addmm adds M*N FLOPs and N bias elements */
    assert_int_equal(model("aten::addmm",
                           "{\"Input Dims\":[[4],[8,16],[16,4]],"
                           "\"Input type\":[\"float\",\"float\",\"float\"]}",
                           &p),
                     0);
    assert_true(p.flops == 1056.0);
    assert_true(p.bytes == 4.0 * (128 + 64 + 32 + 4));
    /* bmm: batch 3 of (5x7)@(7x2); 2-d shapes make TraceLens fail */
    assert_int_equal(
        model("aten::bmm",
              "{\"Input Dims\":[[3,5,7],[3,7,2]],\"Input type\":[\"float\",\"float\"]}", &p),
        0);
    assert_true(p.flops == 3.0 * 2 * 5 * 2 * 7);
    assert_int_equal(model("aten::bmm",
                           "{\"Input Dims\":[[5,7],[7,2]],\"Input type\":[\"float\",\"float\"]}",
                           &p),
                     -EINVAL);
    /* an unknown dtype: FLOPs but no bytes */
    assert_int_equal(
        model("aten::mm", "{\"Input Dims\":[[2,2],[2,2]],\"Input type\":[\"bool\",\"bool\"]}", &p),
        0);
    assert_false(p.has_bytes);
    assert_null(p.precision);
    /* conv2d x (1,3,8,8) w (4,3,3,3) stride 2 pad 1 -> out (1,4,4,4) */
    assert_int_equal(model("aten::convolution",
                           "{\"Input Dims\":[[1,3,8,8],[4,3,3,3],[4],[],[],[],[],[],[]],"
                           "\"Input type\":[\"float\",\"float\",\"float\"],"
                           "\"Concrete Inputs\":[\"\",\"\",\"\",\"[2, 2]\",\"[1]\",\"\","
                           "\"False\",\"[0, 0]\",\"1\"]}",
                           &p),
                     0);
    assert_string_equal(p.category, "CONV_fwd");
    assert_true(p.flops == 2.0 * 27 * 64);
    assert_true(p.bytes == 4.0 * (192 + 108 + 64));
    /* SDPA (B=2, H=4, N=16, d=8), causal halves the FLOPs */
    assert_int_equal(model("aten::_scaled_dot_product_flash_attention",
                           "{\"Input Dims\":[[2,4,16,8],[2,4,16,8],[2,4,16,8]],"
                           "\"Input type\":[\"c10::Half\",\"c10::Half\"],"
                           "\"Concrete Inputs\":[\"\",\"\",\"\",\"0.\",\"True\",\"False\"]}",
                           &p),
                     0);
    assert_string_equal(p.category, "SDPA_fwd");
    assert_true(p.flops == 2.0 * 4 * 2 * 16 * 16 * 8);
    assert_true(p.bytes == 2.0 * 4 * (2 * 16 * 4 * 8));
    assert_string_equal(p.precision, "fp16");
    /* causal with N_Q != N_KV is an error in TraceLens */
    assert_int_equal(model("aten::_scaled_dot_product_flash_attention",
                           "{\"Input Dims\":[[2,4,16,8],[2,4,32,8],[2,4,32,8]],"
                           "\"Input type\":[\"c10::Half\",\"c10::Half\"],"
                           "\"Concrete Inputs\":[\"\",\"\",\"\",\"0.\",\"True\",\"False\"]}",
                           &p),
                     -EINVAL);
    /* missing args */
    assert_int_equal(model("aten::mm", "{}", &p), -EINVAL);
}

static void test_op_category(void **state)
{
    (void)state;
    assert_string_equal(pt_op_category("aten::addmm", "x"), "GEMM");
    assert_string_equal(pt_op_category("aten::native_layer_norm", NULL), "NORM_fwd");
    assert_string_equal(pt_op_category("aten::add", NULL), "elementwise");
    assert_string_equal(pt_op_category("triton_poi_fused", NULL), "triton");
    assert_string_equal(pt_op_category("aten::foo", "void at::native::reduce_kernel<1>"), "reduce");
    assert_string_equal(pt_op_category("aten::foo", "reduce_kernel"), "other");
    assert_string_equal(pt_op_category("aten::_flash_attention_forward", "flash"), "other");
}

/* list(s) after the given adds / discards, as CPython 3.11 prints it. */
static void check_set(const int64_t *ops, size_t nops, const int64_t *want, size_t nwant)
{
    struct pt_pyset s;
    int64_t got[64];
    size_t i;

    assert_int_equal(pt_pyset_init(&s), 0);
    for (i = 0; i < nops; i++) {
        if (ops[i] >= 0)
            assert_int_equal(pt_pyset_add(&s, ops[i]), 0);
        else
            pt_pyset_discard(&s, -ops[i] - 1);
    }
    assert_int_equal(pt_pyset_items(&s, got), nwant);
    for (i = 0; i < nwant; i++)
        assert_int_equal(got[i], want[i]);
    pt_pyset_free(&s);
}

#define DISCARD(v) (-(v)-1)

static void test_pyset_order(void **state)
{
    static const int64_t a[] = {2446, 783, 2815, 3156};
    static const int64_t a_want[] = {2815, 3156, 2446, 783};
    static const int64_t b[] = {0, 8, 16, 24, 32, DISCARD(8), DISCARD(16), 48, 56};
    static const int64_t b_want[] = {0, 32, 48, 24, 56};
    static const int64_t c[] = {5, 13, 21, 29, 37, 45, 53, DISCARD(13), 61, DISCARD(5), 69};
    static const int64_t c_want[] = {37, 69, 45, 61, 21, 53, 29};

    (void)state;
    check_set(a, 4, a_want, 4);
    check_set(b, 9, b_want, 5);
    check_set(c, 11, c_want, 7);
}

static void test_float_repr(void **state)
{
    static const struct {
        double v;
        const char *want;
    } cases[] = {
        {63.857156495249946, "63.857156495249946"},
        {0.30000000000000004, "0.30000000000000004"},
        {1e-5, "1e-05"},
        {1.5e16, "1.5e+16"},
        {123456789012345678.0, "1.2345678901234568e+17"},
        {9999999999999998.0, "9999999999999998.0"},
        {0.0001, "0.0001"},
        {-2.5, "-2.5"},
        {3.0, "3.0"},
    };
    char buf[48];
    size_t i;

    (void)state;
    for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        pt_float_repr(cases[i].v, buf, sizeof(buf));
        assert_string_equal(buf, cases[i].want);
    }
    assert_true(pt_round2(0.125) == 0.12);
    assert_true(pt_round2(0.375) == 0.38);
    assert_true(pt_round2(2.675) == 2.67);
    assert_true(pt_round2(0.285) == 0.28);
}

static void check_json(const char *json, int tuples, const char *want)
{
    struct pt_buf b;

    memset(&b, 0, sizeof(b));
    assert_int_equal(pt_json_repr(&b, json, strlen(json), tuples), 0);
    pt_buf_putc(&b, 0);
    assert_false(b.oom);
    assert_string_equal(b.p, want);
    pt_buf_free(&b);
}

static void test_json_repr(void **state)
{
    struct pt_buf b;
    const char *val;
    size_t vlen;
    static const char args[] = "{\"Input Dims\": [[1, 4], [], [3]], \"x\": 1, \"x\": 2}";

    (void)state;
    check_json("[[1, 4], [], [3]]", 1, "((1, 4), (), (3,))");
    check_json("[\"\"]", 1, "('',)");
    check_json("[1, 2.50, -0, null, true, {\"a\": [1, [2]]}]", 1,
               "(1, 2.5, 0, None, True, {'a': [1, [2]]})");
    check_json("[[1], \"a'b\", \"a\\\"b'c\"]", 0, "[[1], \"a'b\", 'a\"b\\'c']");
    check_json("\"t\\tn\\n\\u0001\\u00e9\\u00a0\"", 0, "'t\\tn\\n\\x01\xc3\xa9\\xa0'");
    check_json("[1e-05, 1E2]", 1, "(1e-05, 100.0)");
    assert_true(pt_json_member(args, strlen(args), "Input Dims", &val, &vlen));
    assert_int_equal(vlen, strlen("[[1, 4], [], [3]]"));
    assert_true(pt_json_member(args, strlen(args), "x", &val, &vlen));
    assert_int_equal(val[0], '2');
    assert_false(pt_json_member(args, strlen(args), "y", &val, &vlen));
    memset(&b, 0, sizeof(b));
    assert_int_not_equal(pt_json_repr(&b, "[1,", 3, 1), 0);
    assert_int_not_equal(pt_json_repr(&b, "{\"a\" 1}", 7, 1), 0);
    pt_buf_free(&b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_tree_without_python), cmocka_unit_test(test_tree_with_python),
        cmocka_unit_test(test_tree_membership),     cmocka_unit_test(test_nodes),
        cmocka_unit_test(test_perf_models),         cmocka_unit_test(test_op_category),
        cmocka_unit_test(test_pyset_order),         cmocka_unit_test(test_float_repr),
        cmocka_unit_test(test_json_repr),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
