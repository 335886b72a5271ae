/*
 * test_pt_perf_vector.c - TraceLens's vector perf models (pt_perf_vector.c)
 * on hand-made args: flops, bytes, category and the str()'d params, worked
 * out by hand from PerfModel/perf_model.py's formulas; and the args on which
 * the Python code raises (the op is then left out).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "tracelens/pt_perf_model.h"
#include "tracelens/pt_perf_sheet_int.h"

static int model(const char *name, const char *json, struct pt_perf *p, struct grow *r)
{
    cJSON *args = cJSON_Parse(json);
    int rc;

    assert_non_null(args);
    rc = r != NULL ? pt_vector_model(name, args, p, r) : pt_perf_model(name, args, p);
    cJSON_Delete(args);
    return rc;
}

static void free_params(struct grow *r)
{
    int i;

    for (i = 0; i < MAX_PARAMS; i++)
        free(r->params[i]);
    memset(r, 0, sizeof(*r));
}

static void test_layer_norm(void **state)
{
    struct pt_perf p;
    struct grow r;

    (void)state;
    memset(&r, 0, sizeof(r));
    /* (1, 141, 512) bf16, affine with bias: flops 3C + 3N + 3C + 2N, bytes
     * 2N*2 + 6*C*2 (mean, var, weight, bias, running stats) */
    assert_int_equal(
        model("aten::layer_norm",
              "{\"Input Dims\": [[1, 141, 512], [], [512], [512], [], []],"
              "\"Input type\": [\"c10::BFloat16\", \"ScalarList\", \"c10::BFloat16\","
              "\"c10::BFloat16\", \"Scalar\", \"Scalar\"],"
              "\"Input Strides\": [[72192, 512, 1], [], [1], [1], [], []],"
              "\"Concrete Inputs\": [\"\", \"[512]\", \"\", \"\", \"1e-12\", \"True\"]}",
              &p, &r),
        0);
    assert_true(p.flops == 364032.0);
    assert_true(p.has_bytes && p.bytes == 294912.0);
    assert_string_equal(p.category, "NORM_fwd");
    assert_string_equal(p.sheet, "Normalization");
    assert_string_equal(p.maf, "vector");
    assert_string_equal(p.precision, "bf16");
    assert_int_equal(r.nparams, 8);
    assert_string_equal(r.params[0], "(1, 141, 512)");
    assert_string_equal(r.params[1], "('c10::BFloat16', None)");
    assert_string_equal(r.params[3], "None");
    assert_string_equal(r.params[4], "512");
    assert_int_equal(r.kind[4], PK_INT);
    assert_string_equal(r.params[5], "True");
    free_params(&r);
}

static void test_group_norm_backward_float_channels(void **state)
{
    struct pt_perf p;
    struct grow r;

    (void)state;
    memset(&r, 0, sizeof(r));
    /* C = 32 / 4 = 8.0; N = 2*32*4 = 256; epc = 32; training: 0 + 4*32 + 5*32 */
    assert_int_equal(model("aten::native_group_norm_backward",
                           "{\"Input Dims\": [[2,32,4],[2,32,4],[2,4],[2,4],[32],[],[],[],[],[]],"
                           "\"Input type\": [\"float\",\"float\",\"float\",\"float\",\"float\"],"
                           "\"Input Strides\": [[128,4,1],[128,4,1],[4,1],[4,1],[1]],"
                           "\"Concrete Inputs\": [\"\",\"\",\"\",\"\",\"\",\"2\",\"32\",\"4\","
                           "\"4\",\"[True, False, True]\"]}",
                           &p, &r),
                     0);
    assert_true(p.flops == 8.0 * (4 * 32.0 + 5 * 32.0));
    /* 256*4 + 256*4*2 + 8*4 (invstd) + 8*4 (weight) + 8*4*2 (grads) */
    assert_true(p.bytes == 1024 + 2048 + 32 + 32 + 64);
    assert_string_equal(p.category, "NORM_bwd");
    assert_string_equal(r.params[4], "8.0");
    assert_int_equal(r.kind[4], PK_FLOAT);
    assert_string_equal(r.params[8], "[True, False, True]");
    free_params(&r);
}

static void test_binary_broadcast_and_scalar(void **state)
{
    struct pt_perf p;
    struct grow r;

    (void)state;
    memset(&r, 0, sizeof(r));
    /* (4,1,64) * (1,8,64) -> 2048 out; bytes 256*2 + 512*2 + 2048*2 */
    assert_int_equal(model("aten::mul",
                           "{\"Input Dims\": [[4,1,64],[1,8,64]],"
                           "\"Input type\": [\"c10::BFloat16\",\"c10::BFloat16\"],"
                           "\"Input Strides\": [[64,64,1],[512,64,1]]}",
                           &p, &r),
                     0);
    assert_true(p.flops == 2048.0 && p.bytes == 512 + 1024 + 4096);
    assert_string_equal(r.params[2], "('c10::BFloat16', 'c10::BFloat16', None)");
    assert_string_equal(r.params[5], "None");
    free_params(&r);
    /* A scalar second input: out takes the first input's size (4 bytes). */
    assert_int_equal(model("aten::div",
                           "{\"Input Dims\": [[64],[]], \"Input type\": [\"float\",\"Scalar\"],"
                           "\"Input Strides\": [[1],[]]}",
                           &p, NULL),
                     0);
    assert_true(p.bytes == 64 * 4 + 4 + 64 * 4);
    /* Shapes that do not broadcast: get_broadcast_shape raises. */
    assert_int_equal(model("aten::add",
                           "{\"Input Dims\": [[3,4],[5,4]], \"Input type\": [\"float\",\"float\"],"
                           "\"Input Strides\": [[4,1],[4,1]]}",
                           &p, NULL),
                     -EINVAL);
}

static void test_unary_pad_and_unknown_dtype(void **state)
{
    struct pt_perf p;
    struct grow r;

    (void)state;
    memset(&r, 0, sizeof(r));
    assert_int_equal(model("aten::replication_pad2d",
                           "{\"Input Dims\": [[1,3,4,4],[]], \"Input type\": [\"float\",\"\"],"
                           "\"Input Strides\": [[48,16,4,1],[]],"
                           "\"Concrete Inputs\": [\"\", \"[1, 1, 2, 2]\"]}",
                           &p, &r),
                     0);
    /* out (1, 3, 8, 6): 144 elements; bytes 48*4 + 144*4 */
    assert_true(p.flops == 144.0 && p.bytes == 192 + 576);
    assert_string_equal(r.params[5], "(1, 3, 8, 6)");
    assert_string_equal(r.params[6], "[1, 1, 2, 2]");
    assert_int_equal(r.order[0], 4); /* input_shape comes first in its dict */
    free_params(&r);
    /* aten_unary_elementwise checks for an unknown size: bytes None. */
    assert_int_equal(model("aten::neg",
                           "{\"Input Dims\": [[8]], \"Input type\": [\"c10::ComplexFloat\"],"
                           "\"Input Strides\": [[1]]}",
                           &p, NULL),
                     0);
    assert_false(p.has_bytes);
    assert_null(p.precision);
    /* The pad's bytes() does not: the op is left out. */
    assert_int_equal(
        model("aten::replication_pad1d",
              "{\"Input Dims\": [[2,50],[]], \"Input type\": [\"c10::ComplexFloat\",\"\"],"
              "\"Input Strides\": [[50,1],[]], \"Concrete Inputs\": [\"\", \"[3, 3]\"]}",
              &p, NULL),
        -EINVAL);
}

static void test_reduce(void **state)
{
    struct pt_perf p;
    struct grow r;

    (void)state;
    memset(&r, 0, sizeof(r));
    /* Concrete Inputs are strings: no dim is read, one output element. */
    assert_int_equal(model("aten::mean",
                           "{\"Input Dims\": [[16, 512], []], \"Input type\": [\"float\"],"
                           "\"Concrete Inputs\": [\"\", \"[-1]\"]}",
                           &p, &r),
                     0);
    assert_true(p.flops == 8192.0 && p.bytes == 8192 * 4 + 4);
    assert_string_equal(r.params[1], "1");
    assert_string_equal(r.params[3], "mean");
    free_params(&r);
    /* A JSON list dim with keepdim: (4, 1, 8). */
    assert_int_equal(model("aten::amax",
                           "{\"Input Dims\": [[4, 6, 8]], \"Input type\": [\"float\"],"
                           "\"Concrete Inputs\": [\"\", [1], true]}",
                           &p, &r),
                     0);
    assert_string_equal(r.params[1], "32");
    assert_string_equal(r.params[3], "max");
    free_params(&r);
    /* No Input Dims: zeros, no reduce_type, bytes None. */
    assert_int_equal(model("aten::sum", "{}", &p, &r), 0);
    assert_true(p.flops == 0.0 && !p.has_bytes);
    assert_int_equal(r.nparams, 3);
    assert_string_equal(r.params[2], "(None, None)");
    free_params(&r);
}

static void test_not_modelled(void **state)
{
    struct pt_perf p;

    (void)state;
    assert_true(pt_vector_known("aten::cudnn_instance_norm_backward"));
    assert_int_equal(
        model("aten::cudnn_instance_norm_backward", "{\"Input Dims\": [[1]]}", &p, NULL), -EINVAL);
    assert_false(pt_vector_known("aten::softmax"));
    assert_int_equal(model("aten::layer_norm", "{\"Input Dims\": \"x\"}", &p, NULL), -EINVAL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_layer_norm),
        cmocka_unit_test(test_group_norm_backward_float_channels),
        cmocka_unit_test(test_binary_broadcast_and_scalar),
        cmocka_unit_test(test_unary_pad_and_unknown_dtype),
        cmocka_unit_test(test_reduce),
        cmocka_unit_test(test_not_modelled),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
