/*
 * test_hlo_kernel_metadata.c - ExtractXprofKernelMetadata
 * (hlo/hlo_kernel_metadata.c) on hand-made expressions: XProf's own three
 * cases (xla_op_utils_test.cc), the forms XLA's printer gives the attribute
 * (a JSON dict or a C-escaped string), and nlohmann's dump (sorted keys,
 * number types, escapes, the last of repeated keys).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hlo/hlo_kernel_metadata.h"

/* The metadata of expression s, "" when none. */
static char *meta(const char *s)
{
    static char got[4096];
    char *m = NULL;

    assert_int_equal(hlo_kernel_metadata(s, strlen(s), &m), 0);
    got[0] = 0;
    if (m != NULL) {
        assert_true(strlen(m) < sizeof(got));
        strcpy(got, m);
        free(m);
    }
    return got;
}

/* "%c = f32[] custom-call(), custom_call_target=\"t\", frontend_attributes={" A "}". */
static char *with_attrs(const char *attrs)
{
    static char s[4096];

    strcpy(s, "%c.1 = f32[] custom-call(f32[] %p), custom_call_target=\"tpu_custom_call\", "
              "frontend_attributes={");
    strcat(s, attrs);
    strcat(s, "}");
    return meta(s);
}

static void test_xprof_cases(void **state)
{
    (void)state;
    assert_string_equal(
        meta("\n  %blah.1 = bf16[4096,2048]{1,0:T(8,128)(2,1)}\n    custom-call(s32[]{:T(128)} "
             "%bitcast), custom_call_target=\"tpu_custom_call\",\n    frontend_attributes={\n"
             "      kernel_metadata={\"xprof_metadata\": \"{\\\"whatever\\\": {\\\"I\\\": "
             "\\\"want\\\"}}\"}}\n"),
        "{\"whatever\":{\"I\":\"want\"}}");
    assert_string_equal(
        meta("\n  %blah.1 = bf16[4096,2048]{1,0:T(8,128)(2,1)}\n    custom-call(s32[]{:T(128)} "
             "%bitcast), custom_call_target=\"tpu_custom_call\",\n    frontend_attributes={\n"
             "      kernel_metadata={\"xprof_metadata\": \"{broken_json\\\"}}\"}}\n"),
        "");
    assert_string_equal(meta("\n  %blah.1 = bf16[4096,2048]{1,0:T(8,128)(2,1)}\n    "
                             "custom-call(s32[]{:T(128)} %bitcast), "
                             "custom_call_target=\"tpu_custom_call\",\n    frontend_attributes={\n"
                             "      kernel_metadata={}\"}}\n"),
                        "");
}

static void test_attribute_forms(void **state)
{
    (void)state;
    /* a dict member, not a string: dumped as it is */
    assert_string_equal(with_attrs("kernel_metadata={\"xprof_metadata\": {\"b\": 1, \"a\": [true, "
                                   "null, \"x\"]}}"),
                        "{\"a\":[true,null,\"x\"],\"b\":1}");
    /* a C-escaped string value, other attributes around it */
    assert_string_equal(with_attrs("_xla_x=\"1\",kernel_metadata=\"{\\\"xprof_metadata\\\": "
                                   "{\\\"k\\\": \\\"v\\\\n\\\"}}\",z=\"2\""),
                        "{\"k\":\"v\\n\"}");
    /* octal escapes of the printer */
    assert_string_equal(with_attrs("kernel_metadata=\"{\\\"xprof_metadata\\\":\\0620}\""), "20");
    /* no xprof_metadata member, another key, an array */
    assert_string_equal(with_attrs("kernel_metadata={\"xprof\": 1, \"x\": \"xprof_metadata\"}"),
                        "");
    assert_string_equal(with_attrs("other={\"xprof_metadata\": 1}"), "");
    assert_string_equal(with_attrs("kernel_metadata=\"[\\\"xprof_metadata\\\"]\""), "");
    /* xprof_metadata only inside metadata={...} or a string: not the attribute */
    assert_string_equal(
        meta("%a = f32[] add(f32[] %x, f32[] %y), metadata={op_name=\"xprof_metadata\""
             " frontend_attributes={kernel_metadata={\"xprof_metadata\":1}}}"),
        "");
    /* no attribute at all, an unterminated map */
    assert_string_equal(meta("%xprof_metadata = f32[] add(f32[] %x, f32[] %y)"), "");
    assert_string_equal(meta("%a = f32[] add(f32[] %x), frontend_attributes={kernel_metadata="
                             "{\"xprof_metadata\":1}"),
                        "");
    /* the last of a repeated attribute key */
    assert_string_equal(with_attrs("kernel_metadata={\"xprof_metadata\":1},kernel_metadata="
                                   "{\"xprof_metadata\":2}"),
                        "2");
}

static void test_dump(void **state)
{
    (void)state;
    /* sorted keys (bytewise), the last value of a repeated key */
    assert_string_equal(with_attrs("kernel_metadata={\"xprof_metadata\": {\"b\":1,\"B\":2,\"a\":3,"
                                   "\"b\":4, \"aa\": {}}}"),
                        "{\"B\":2,\"a\":3,\"aa\":{},\"b\":4}");
    /* integers, unsigned, overflow to double, doubles */
    assert_string_equal(with_attrs("kernel_metadata={\"xprof_metadata\": [-0, -12, "
                                   "18446744073709551615, 18446744073709551616, 1.0, 0.1, 1e20, "
                                   "1.5e-7, 0.0001, 123456789012345678.0, -0.0, 2.5E+3]}"),
                        "[0,-12,18446744073709551615,1.8446744073709552e+19,1.0,0.1,1e+20,"
                        "1.5e-07,0.0001,1.2345678901234568e+17,-0.0,2500.0]");
    /* string escapes: \u escapes decoded, controls as \u00xx, '/' plain */
    assert_string_equal(
        with_attrs("kernel_metadata={\"xprof_metadata\": [\"\\u00e9\\/\\u0001\\t\", "
                   "\"\\ud83d\\ude00\"]}"),
        "[\"\xc3\xa9/\\u0001\\t\",\"\xf0\x9f\x98\x80\"]");
    /* invalid JSON: a lone surrogate, trailing bytes, a bad literal, raw
     * control bytes, a leading zero */
    assert_string_equal(with_attrs("kernel_metadata={\"xprof_metadata\": \"\\ud83d\"}"), "");
    assert_string_equal(with_attrs("kernel_metadata={\"xprof_metadata\": tru}"), "");
    assert_string_equal(with_attrs("kernel_metadata=\"{\\\"xprof_metadata\\\": 1} x\""), "");
    assert_string_equal(with_attrs("kernel_metadata=\"{\\\"xprof_metadata\\\": \\\"a\\nb\\\"}\""),
                        "");
    assert_string_equal(with_attrs("kernel_metadata={\"xprof_metadata\": 012}"), "");
    /* a string member that is not JSON itself */
    assert_string_equal(with_attrs("kernel_metadata={\"xprof_metadata\": \"plain\"}"), "");
    assert_string_equal(with_attrs("kernel_metadata={\"xprof_metadata\": \"\\\"plain\\\"\"}"),
                        "\"plain\"");
}

static void test_deep(void **state)
{
    char *s = malloc(3 * 4000 + 200);
    size_t i, n = 0;

    (void)state;
    assert_non_null(s);
    n += (size_t)sprintf(s, "%%c = f32[] custom-call(), frontend_attributes={kernel_metadata="
                            "{\"xprof_metadata\":");
    for (i = 0; i < 4000; i++)
        s[n++] = '[';
    for (i = 0; i < 4000; i++)
        s[n++] = ']';
    strcpy(s + n, "}}");
    assert_string_equal(meta(s), "");
    free(s);
}

/* Mutated expressions (bytes replaced, cut): no crash, 0 returned, and
 * any answer is NUL-terminated text. */
static void test_mutations(void **state)
{
    static const char seed[] =
        "%c = f32[] custom-call(f32[] %p), custom_call_target=\"t\", "
        "frontend_attributes={a=\"\\\"\","
        "kernel_metadata={\"xprof_metadata\": \"{\\\"k\\\": [1, -2.5e3, \\\"\\\\u00e9\\\"], "
        "\\\"z\\\": {}}\"}}";
    static const char pool[] = "{}[]\",:\\ue0-.9xprof_metadata=";
    char buf[sizeof(seed)];
    uint32_t rng = 12345;
    int i, j;

    (void)state;
    assert_string_equal(meta(seed), "{\"k\":[1,-2500.0,\"\xc3\xa9\"],\"z\":{}}");
    for (i = 0; i < 20000; i++) {
        size_t n = sizeof(seed) - 1;
        char *m = NULL;
        memcpy(buf, seed, sizeof(seed));
        for (j = 0; j < 1 + i % 4; j++) {
            rng = rng * 1103515245u + 12345u;
            buf[(rng >> 8) % n] = pool[(rng >> 20) % (sizeof(pool) - 1)];
        }
        if (i % 7 == 0)
            n = (rng >> 4) % n;
        assert_int_equal(hlo_kernel_metadata(buf, n, &m), 0);
        if (m != NULL)
            assert_true(strlen(m) < 4096);
        free(m);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_xprof_cases), cmocka_unit_test(test_attribute_forms),
        cmocka_unit_test(test_dump),        cmocka_unit_test(test_deep),
        cmocka_unit_test(test_mutations),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
