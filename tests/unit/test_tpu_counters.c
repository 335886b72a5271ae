/*
 * test_tpu_counters.c - XProf's TPU counter tables and utilization metrics
 * (src/tools/tpu_counters.c): every counter the metrics read resolves in
 * both chips' tables, and one hand-filled v6e sample gives the numbers
 * worked out below from tpu_generic_utilization_utils.cc.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "tools/tpu_counters.h"

static uint64_t id_of(enum tpu_chip chip, const char *name)
{
    size_t n, i;
    const struct tpu_counter_name *t = tpu_counter_table(chip, &n);

    for (i = 0; i < n; i++)
        if (strcmp(t[i].name, name) == 0)
            return t[i].id;
    fail_msg("%s not in the table", name);
    return 0;
}

static void test_tables(void **state)
{
    size_t n;
    const struct tpu_counter_name *t;

    (void)state;
    t = tpu_counter_table(TPU_CHIP_V6E, &n);
    assert_int_equal(n, 900);
    assert_string_equal(
        t[0].name, "VF_CHIP_TC_TCS_TC_MISC_TCS_STATS_TCS_STATS_COUNTERS_UNPRIVILEGED_COUNT_CYCLES");
    assert_true(t[0].id == UINT64_C(3257466888));
    t = tpu_counter_table(TPU_CHIP_V7X, &n);
    assert_int_equal(n, 2933);
    assert_int_equal(tpu_chip_of_device_type("TPU v6 Lite", 11), TPU_CHIP_V6E);
    assert_int_equal(tpu_chip_of_device_type("TPU v7x", 7), TPU_CHIP_V7X);
    assert_int_equal(tpu_chip_of_device_type("TPU v7", 6), TPU_CHIP_NONE);
    assert_int_equal(tpu_chip_of_short_name("v7x"), TPU_CHIP_V7X);
    assert_int_equal(tpu_chip_of_short_name("v5p"), TPU_CHIP_NONE);
}

static void test_plans_resolve(void **state)
{
    struct tpu_plan p;
    struct xp_err err = {0};
    uint64_t *v;
    struct tpu_metric m[TPU_MAX_METRICS];

    (void)state;
    assert_int_equal(tpu_plan_init(&p, TPU_CHIP_V7X, &err), 0);
    assert_int_equal(p.ntc, 2);
    assert_int_equal(p.nsc, 4);
    v = calloc(p.ntable + 1, sizeof(*v));
    /* an empty v7x sample: no cycles, so only the 64 SparseCore rows */
    assert_int_equal(tpu_metrics(&p, v, m), 64);
    assert_int_equal(m[0].node, 0);
    assert_int_equal(m[63].node, 3);
    assert_string_equal(m[63].name, "SCS: Smisc Slot");
    free(v);
    tpu_plan_free(&p);
}

static void set(const struct tpu_plan *p, uint64_t *v, const char *suffix, uint64_t value)
{
    char name[160];

    snprintf(name, sizeof(name),
             "VF_CHIP_TC_TCS_TC_MISC_TCS_STATS_TCS_STATS_COUNTERS_UNPRIVILEGED_COUNT_%s", suffix);
    v[tpu_plan_index(p, id_of(TPU_CHIP_V6E, name))] = value;
}

static const struct tpu_metric *find(const struct tpu_metric *m, int n, const char *name)
{
    int i;

    for (i = 0; i < n; i++)
        if (strcmp(m[i].name, name) == 0)
            return &m[i];
    fail_msg("no metric %s", name);
    return NULL;
}

static void test_v6e_sample(void **state)
{
    struct tpu_plan p;
    struct xp_err err = {0};
    struct tpu_metric m[TPU_MAX_METRICS];
    uint64_t *v;
    int n;

    (void)state;
    assert_int_equal(tpu_plan_init(&p, TPU_CHIP_V6E, &err), 0);
    v = calloc(p.ntable + 1, sizeof(*v));
    set(&p, v, "CYCLES", 1000);
    set(&p, v, "MXU_BUSY_1", 500);
    set(&p, v, "MXU_BUSY_2", 100);
    set(&p, v, "MATMUL_LMR_BF16_MXU_0", 10); /* 4 cycles each */
    set(&p, v, "MATMUL_VREG_I8_MXU_1", 3);   /* 8 cycles each */
    set(&p, v, "PACKED_XLU_0", 7);
    set(&p, v, "TRANSPOSE_XLU_0", 1);
    v[tpu_plan_index(&p, id_of(TPU_CHIP_V6E, "VF_CHIP_HBM_1_HBMC_15_CMN_HI_FREQ_STATS_COUNTERS_"
                                             "UNPRIVILEGED_PARTIAL_WRITE_REQ_PS1"))] = 2;
    n = tpu_metrics(&p, v, m);
    /* 21 tensor-core rows, HBM with its two ratios, ICI read and write, 32 SC rows */
    assert_int_equal(n, 21 + 3 + 2 + 32);
    assert_string_equal(m[0].name, "Scalar Unit");
    assert_true(m[0].peak == 2000.0);
    assert_true(find(m, n, "Avg MXU Busy")->achieved == 0.5 * 500 + 100);
    assert_true(find(m, n, "MXU0")->achieved == 40.0);
    assert_true(find(m, n, "MXU1")->achieved == 24.0);
    assert_true(find(m, n, "MXU BF16")->achieved == 40.0);
    assert_true(find(m, n, "MXU BF16")->peak == 2000.0);
    assert_true(find(m, n, "MXU I8")->achieved == 24.0);
    assert_true(find(m, n, "XLU0")->achieved == 8.0);
    assert_true(find(m, n, "XLU0")->peak == 250.0); /* 4 cycles per XLU instruction */
    /* 2 write beats of 32 bytes over 1525.5 GiB/s for 1000 / 1.75e9 s */
    assert_true(find(m, n, "HBM Rd+Wr - core 0")->achieved == 64.0);
    assert_true(find(m, n, "HBM Rd+Wr - core 0")->peak ==
                1525.5 * 1024.0 * 1024.0 * 1024.0 * (1000.0 / 1.75e9));
    assert_true(find(m, n, "HBM Write Ratio")->achieved == 64.0);
    assert_true(find(m, n, "ICI (Read)")->peak == 294947368421.0526 * (1000.0 / 1e9));
    free(v);
    tpu_plan_free(&p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_tables),
        cmocka_unit_test(test_plans_resolve),
        cmocka_unit_test(test_v6e_sample),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
