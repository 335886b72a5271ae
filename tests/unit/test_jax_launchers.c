/*
 * test_jax_launchers.c - the JAX kernel launcher core: kernel categories
 * (name keywords in JaxOpKeys order, the hlo_op's winning but for flash
 * attention), which names are kernels, the hlo_op category cache (growth,
 * truncation, embedded NULs) and launch starts by correlation id from a
 * Chrome trace.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tracelens/jax_launchers_int.h"

static void test_kernel_category(void **state)
{
    (void)state;
    assert_string_equal(jax_kernel_category("Cijk_Alik_Bljk", NULL), "GEMM");
    assert_string_equal(jax_kernel_category("loop_fusion_3", NULL), JAX_UNCATEGORIZED);
    assert_string_equal(jax_kernel_category("loop_fusion_3", ""), JAX_UNCATEGORIZED);
    /* The op's category wins over the name's... */
    assert_string_equal(jax_kernel_category("Cijk_x", "all-reduce.rccl"),
                        "Communication rccl/nccl");
    assert_string_equal(jax_kernel_category("loop_fusion_3", "conv.1"), "Conv");
    /* ... but the name's stays when the op matches nothing ... */
    assert_string_equal(jax_kernel_category("Cijk_x", "convolution.1"), "GEMM");
    /* ... and flash attention names keep theirs. */
    assert_string_equal(jax_kernel_category("fmha_fwd_d128", "gemm.7"), "FA FWD");
    assert_string_equal(jax_kernel_category("FmhaBwd_x", "conv.2"), "FA BWD");
    assert_string_equal(jax_kernel_category("kernel_func_3", "nccl"), "FA V3");
    /* Categories are tried in JaxOpKeys order: GEMM before FA FWD. */
    assert_string_equal(jax_kernel_category("gemm_then_fmha_fwd", NULL), "GEMM");
    assert_null(jax_match_category("transpose_7"));
    assert_string_equal(jax_match_category("te_fused_attn_fwd"), "TE");
}

static void test_is_kernel_name(void **state)
{
    (void)state;
    assert_int_equal(jax_is_kernel_name("MemcpyDtoH"), 0);
    assert_int_equal(jax_is_kernel_name("COPY_start"), 0);
    assert_int_equal(jax_is_kernel_name("memset32"), 0);
    assert_int_equal(jax_is_kernel_name("xcopy"), 1);
    assert_int_equal(jax_is_kernel_name("mem"), 1);
    assert_int_equal(jax_is_kernel_name(""), 1);
    assert_int_equal(jax_is_kernel_name("Cijk"), 1);
}

static void test_op_cache(void **state)
{
    struct jax_op_cache c;
    char(*texts)[32] = calloc(2000, sizeof(*texts));
    char(*longtext)[JAX_HLO_OP_MAX + 64] = malloc(3 * sizeof(*longtext));
    const char *cat;
    int i, round;

    (void)state;
    assert_non_null(texts);
    assert_non_null(longtext);
    memset(&c, 0, sizeof(c));
    for (i = 0; i < 2000; i++)
        snprintf(texts[i], sizeof(texts[i]), i % 3 == 0 ? "conv.%d" : "add.%d", i);
    /* Twice: the first round fills and grows the table, the second hits. */
    for (round = 0; round < 2; round++) {
        for (i = 0; i < 2000; i++) {
            assert_int_equal(jax_op_category(&c, texts[i], strlen(texts[i]), &cat), 0);
            if (i % 3 == 0)
                assert_string_equal(cat, "Conv");
            else
                assert_null(cat);
        }
    }
    assert_int_equal(c.used, 2000);
    assert_true(c.nslots >= 4000);
    /* Only the first JAX_HLO_OP_MAX bytes are matched (three buffers: the
     * cache keeps pointers to the texts it has seen). */
    for (i = 0; i < 3; i++) {
        static const size_t at[3] = {JAX_HLO_OP_MAX, JAX_HLO_OP_MAX - 4, JAX_HLO_OP_MAX - 3};
        memset(longtext[i], 'x', JAX_HLO_OP_MAX + 64);
        memcpy(longtext[i] + at[i], "gemm", 4);
        assert_int_equal(jax_op_category(&c, longtext[i], JAX_HLO_OP_MAX + 64, &cat), 0);
        if (i == 1)
            assert_string_equal(cat, "GEMM");
        else
            assert_null(cat);
    }
    /* A NUL ends the text. */
    assert_int_equal(jax_op_category(&c, "ab\0gemm", 7, &cat), 0);
    assert_null(cat);
    assert_int_equal(jax_op_category(&c, "gemm\0ab", 7, &cat), 0);
    assert_string_equal(cat, "GEMM");
    jax_op_cache_free(&c);
    assert_null(c.slots);
    free(texts);
    free(longtext);
}

static const char trace[] =
    "{\"traceEvents\":[\n"
    " {\"ph\":\"X\",\"name\":\"launch\",\"pid\":701,\"tid\":1,\"ts\":10,\"dur\":1,"
    "\"args\":{\"correlation_id\":7}},\n"
    " {\"ph\":\"X\",\"name\":\"launch\",\"pid\":701,\"tid\":2,\"ts\":4.5,\"dur\":1,"
    "\"args\":{\"correlation_id\":3}},\n"
    " {\"ph\":\"X\",\"name\":\"launch\",\"pid\":701,\"tid\":2,\"ts\":20,\"dur\":1,"
    "\"args\":{\"correlation_id\":7}},\n"
    " {\"ph\":\"X\",\"name\":\"kernel\",\"pid\":1,\"tid\":5,\"ts\":30,\"dur\":2,"
    "\"args\":{\"correlation_id\":9}},\n"
    " {\"ph\":\"X\",\"name\":\"other\",\"pid\":\"701\",\"tid\":1,\"ts\":40,\"dur\":1,"
    "\"args\":{\"correlation_id\":11}},\n"
    " {\"ph\":\"X\",\"name\":\"launch\",\"pid\":701,\"tid\":1,\"ts\":50,\"dur\":1}\n"
    "]}\n";

static void test_json_launches(void **state)
{
    struct ctrace *ct = NULL;
    struct xp_err err = {0};
    struct jax_launches t;

    (void)state;
    assert_int_equal(ctrace_load_mem("t.trace.json", trace, sizeof(trace) - 1, &ct, &err), 0);
    assert_int_equal(jax_json_launches(ct, &t), 0);
    assert_int_equal(t.n, 2);
    assert_true(jax_launch_ts(&t, 3) == 4.5);
    assert_true(jax_launch_ts(&t, 7) == 10);   /* the first in file order */
    assert_true(isnan(jax_launch_ts(&t, 9)));  /* not a host event */
    assert_true(isnan(jax_launch_ts(&t, 11))); /* a string pid */
    assert_true(isnan(jax_launch_ts(&t, 0)));
    jax_launches_free(&t);
    assert_null(t.sorted);
    assert_true(isnan(jax_launch_ts(&t, 3)));
    ctrace_free(ct);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_kernel_category),
        cmocka_unit_test(test_is_kernel_name),
        cmocka_unit_test(test_op_cache),
        cmocka_unit_test(test_json_launches),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
