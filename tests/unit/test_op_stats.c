/*
 * test_op_stats.c - pieces of op_stats checked against hand-worked values:
 * the framework op name parser (ParseTfOpFullname), the training and
 * TensorCore tests, the input-pipeline bound-by thresholds, the op metrics
 * db (rows, IDLE, combining, sorting) and the framework-op view of it.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "op_stats/op_stats.h"
#include "op_stats/op_stats_input.h"
#include "xplane/tfop.h"

static void check_parse(const char *s, enum tfop_category cat, const char *name, const char *type)
{
    struct tfop op;

    tfop_parse(s, strlen(s), &op);
    assert_int_equal(op.category, cat);
    assert_int_equal(op.name_len, strlen(name));
    assert_memory_equal(op.name, name, op.name_len);
    assert_int_equal(op.type_len, strlen(type));
    assert_memory_equal(op.type, type, op.type_len);
}

static void test_parse(void **state)
{
    (void)state;
    check_parse("model/dense/MatMul:MatMul", TFOP_TENSORFLOW, "model/dense/MatMul", "MatMul");
    check_parse("replica_4/bert/Shape:Shape", TFOP_TENSORFLOW, "replica_4/bert/Shape", "Shape");
    check_parse("jit(step)/shard_map/layer_1/dot_general:", TFOP_JAX,
                "jit(step)/shard_map/layer_1/dot_general", "dot_general");
    check_parse("jit(f)/transpose:transpose[permutation=(0, 3, 1, 2)]", TFOP_JAX,
                "jit(f)/transpose", "transpose");
    check_parse("model/layer_3:", TFOP_JAX, "model/layer_3", "layer");
    check_parse("Model/Conv2D_1:", TFOP_TENSORFLOW, "Model/Conv2D_1", "Conv2D");
    check_parse("x:", TFOP_JAX, "x", "x");
    check_parse("Iterator::Batch::Map", TFOP_TFDATA, "Iterator::Batch::Map", "Dataset");
    check_parse("MemcpyHToD", TFOP_MEMCPY_HTOD, "MemcpyHToD", "MemcpyHToD");
    check_parse("memcpydtoh_async", TFOP_MEMCPY_DTOH, "memcpydtoh_async", "MemcpyDToH");
    check_parse("plain event", TFOP_UNKNOWN, "plain event", "");
    check_parse("a:B:C", TFOP_UNKNOWN, "a:B:C", "");
    check_parse("XlaModule:", TFOP_TENSORFLOW, "XlaModule", "XlaModule");
}

static int training(const char *name, const char *type)
{
    return tfop_is_training_op(name, strlen(name), type, strlen(type));
}

static void test_training_and_tc(void **state)
{
    (void)state;
    assert_true(training("gradient_tape/model/dense/MatMul", "MatMul"));
    assert_true(training("gradients/model/dense/MatMul_grad/MatMul", "MatMul"));
    assert_false(training("model/gradient/MatMul", "MatMul"));
    assert_true(training("jit(f)/transpose(jvp(g))/dot_general", "dot_general"));
    assert_true(training("jit(f)/transpose(jvp(g))/mul", ""));
    assert_false(training("jit(f)/dot_general", "dot_general"));
    assert_true(tfop_tc_eligible("model/Conv2D", 12));
    assert_true(tfop_tc_eligible("a/BatchMatMulV2", 15));
    assert_false(tfop_tc_eligible("jit(f)/dot_general:", 19));
    assert_true(tfop_einsum_tc_eligible("ab,bc->ac", 9));
    assert_false(tfop_einsum_tc_eligible("abc->a", 6));
    assert_false(tfop_einsum_tc_eligible("", 0));
}

/* A one-step op_stats whose step breakdown is given in percent of 100 ms. */
static void one_step(struct op_stats *os, struct step_entry *se, struct step_core *c,
                     double input_pct, double other_pct, double launch_pct, double coll_pct)
{
    const uint64_t ms = 1000000000ULL;

    memset(os, 0, sizeof(*os));
    memset(se, 0, sizeof(*se));
    memset(c, 0, sizeof(*c));
    op_db_init(&os->host_db);
    op_db_init(&os->device_db);
    os->hardware_type = HW_GPU;
    os->device_type = "GPU";
    c->core_id = 1;
    c->step_num = 4;
    c->step_name = "";
    c->duration_ps = 100 * ms;
    c->type_ps[EV_HOST_WAIT_INPUT / 10] = (uint64_t)(input_pct * ms);
    c->type_ps[EV_UNKNOWN_TIME / 10] = (uint64_t)(other_pct * ms);
    c->type_ps[EV_HOST_PREPARE / 10] = (uint64_t)(launch_pct * ms);
    c->type_ps[EV_DEVICE_COLLECTIVES / 10] = (uint64_t)(coll_pct * ms);
    c->type_ps[EV_DEVICE_COMPUTE_32 / 10] =
        (uint64_t)((100 - input_pct - other_pct - launch_pct - coll_pct) * ms);
    se->step_num = 4;
    se->cores = c;
    se->ncores = 1;
    os->steps = se;
    os->nsteps = 1;
}

static void classify(double input, double other, double launch, double coll, const char *want,
                     const char *want_launch, const char *want_other, const char *want_coll,
                     const char *statement_prefix)
{
    struct op_stats os;
    struct step_entry se;
    struct step_core c;
    struct ip_analysis a;

    one_step(&os, &se, &c, input, other, launch, coll);
    assert_int_equal(ip_analyze(&os, &a), 0);
    assert_string_equal(a.input_classification, want);
    assert_string_equal(a.kernel_launch_classification, want_launch);
    assert_string_equal(a.all_other_classification, want_other);
    assert_string_equal(a.device_collectives_classification, want_coll);
    assert_memory_equal(a.input_statement, statement_prefix, strlen(statement_prefix));
    assert_int_equal(a.nsteps, 1);
    assert_string_equal(a.steps[0].name, "4");
    assert_int_equal(a.nwarnings, 0);
    ip_free(&a);
}

static void test_bound_by(void **state)
{
    (void)state;
    /* input >= 20 %: host; >= 5 %: both; else all-other >= 3 %: both */
    classify(20, 0, 0, 0, "host", "no", "no", "no",
             "Your program is HIGHLY input-bound because 20.0%");
    classify(19.9, 0, 0, 0, "both", "no", "no", "no",
             "Your program is MODERATELY input-bound because 19.9%");
    classify(5, 0, 0, 0, "both", "no", "no", "no", "Your program is MODERATELY");
    classify(4.9, 3, 0, 0, "both", "no", "no", "no",
             "Your program is POTENTIALLY input-bound because 3.0%");
    classify(4.9, 2.9, 0, 0, "device", "no", "no", "no",
             "Your program is NOT input-bound because only 4.9%");
    /* kernel launch, collectives, all others: >= 15 high, >= 3 moderate */
    classify(0, 0, 15, 0, "device", "high", "no", "no", "Your program is NOT");
    classify(0, 0, 3, 0, "device", "moderate", "no", "no", "Your program is NOT");
    classify(0, 0, 2.9, 15, "device", "no", "no", "high", "Your program is NOT");
    classify(0, 0, 0, 3, "device", "no", "no", "moderate", "Your program is NOT");
    /* all others reported by the input analysis is not reported again */
    classify(0, 15, 0, 0, "both", "no", "no", "no", "Your program is POTENTIALLY");
    classify(5, 15, 0, 0, "both", "no", "high", "no", "Your program is MODERATELY");
}

/* One op of 1 ms (t_ns = 1e6) with flops, bytes and a memory breakdown. */
static struct op_metrics roof_op(double flops, uint64_t bytes)
{
    struct op_metrics m;

    memset(&m, 0, sizeof(m));
    m.name = m.category = m.provenance = m.deduplicated_name = m.long_name = "";
    m.source_file = m.stack_frame = "";
    m.time_ps = 1000000000ull;
    m.flops_v2 = flops;
    m.bytes_accessed = bytes;
    return m;
}

/* SetRooflineMetrics' bound-by rule: the resource used most (strictly more
 * replaces), on a GPU with 100 TFLOP/s, 1000 GB/s HBM, SRAM peaks; on a TPU
 * with CMEM and VMEM peaks; nothing used is "Unknown". */
static void test_roofline_bound_by(void **state)
{
    struct op_stats os;
    struct op_roofline r;
    struct op_metrics m;
    const double gib = 1073741824.0 / 1e9;

    (void)state;
    memset(&os, 0, sizeof(os));
    os.hardware_type = HW_GPU;
    os.peak_tflops = 100; /* 1e5 GFLOP/s */
    os.peak_bws[0] = 1000, os.peak_bws[1] = 20000, os.peak_bws[2] = 20000;
    os.npeak_bws = 3;
    m = roof_op(0, 0);
    op_roofline(&m, &os, &r);
    assert_string_equal(r.bound_by, "Unknown");
    /* 5e4 GFLOP/s = 50 % of the peak; 100 GB/s = 10 % of HBM: compute */
    m = roof_op(5e10, 100000000);
    op_roofline(&m, &os, &r);
    assert_string_equal(r.bound_by, "Compute");
    assert_true(r.measured_flop_rate == 5e4);
    assert_true(r.operational_intensity == 500);
    assert_true(r.bottleneck_operational_intensity == 500);
    /* 1e4 GFLOP/s = 10 %; 900 GB/s = 90 % of HBM: HBM, its intensity */
    m = roof_op(1e10, 900000000);
    op_roofline(&m, &os, &r);
    assert_string_equal(r.bound_by, "HBM");
    assert_true(fabs(r.hbm_bw - 900 / gib) < 1e-9);
    /* a tie keeps the first resource (compute): strictly more replaces */
    m = roof_op(1e10, 100000000);
    op_roofline(&m, &os, &r);
    assert_string_equal(r.bound_by, "Compute");
    /* GPU Shm/L1 compares the HBM rate with the SRAM write peak: a peak
     * below HBM's makes it win */
    os.peak_bws[2] = 500;
    m = roof_op(1e10, 900000000);
    op_roofline(&m, &os, &r);
    assert_string_equal(r.bound_by, "Shm/L1");
    /* TPU: CMEM write bytes against peak_bws[4] */
    memset(&os, 0, sizeof(os));
    os.hardware_type = HW_TPU;
    os.peak_tflops = 100;
    os.peak_bws[0] = 1000, os.peak_bws[3] = 2000, os.peak_bws[4] = 100;
    os.peak_bws[5] = 4000, os.peak_bws[6] = 4000;
    os.npeak_bws = 7;
    m = roof_op(1e9, 200000000);
    m.mem[0] = (struct op_mem_access){1, OP_MEM_READ, 100000000};
    m.mem[1] = (struct op_mem_access){2, OP_MEM_WRITE, 90000000}; /* 90 GB/s of 100 */
    m.nmem = 2;
    op_roofline(&m, &os, &r);
    assert_string_equal(r.bound_by, "CMEM Write");
    assert_true(fabs(r.cmem_write_bw - 90 / gib) < 1e-9);
    assert_true(r.cmem_read_bw == 0);
    /* a legacy op without a breakdown: every byte is HBM's */
    m = roof_op(1e9, 950000000);
    op_roofline(&m, &os, &r);
    assert_string_equal(r.bound_by, "HBM");
}

static void test_no_steps(void **state)
{
    struct op_stats os;
    struct ip_analysis a;

    (void)state;
    memset(&os, 0, sizeof(os));
    op_db_init(&os.host_db);
    os.hardware_type = HW_GPU;
    os.device_type = "GPU";
    assert_int_equal(ip_analyze(&os, &a), 0);
    assert_string_equal(a.input_classification, "unknown");
    assert_int_equal(a.nwarnings, 1);
    assert_ptr_equal(a.warnings[0], op_msg_no_step_marker);
    assert_string_equal(a.summary_next_step, "You may skip the rest of this page.");
    ip_free(&a);
    os.empty_intersect = 1;
    assert_int_equal(ip_analyze(&os, &a), 0);
    assert_ptr_equal(a.warnings[0], op_msg_empty_intersect);
    ip_free(&a);
}

static void test_db(void **state)
{
    struct arena arena;
    struct op_metrics_db a, b, tf;
    struct op_metrics *m;
    const struct op_metrics **sorted;
    uint32_t n;

    (void)state;
    arena_init(&arena);
    op_db_init(&a);
    op_db_init(&b);
    m = op_db_row(&a, &arena, 7, "fusion.1", 8);
    m->category = "loop fusion";
    m->provenance = "jit(f)/mul:";
    m->occurrences = 2;
    m->time_ps = m->self_time_ps = 300;
    assert_ptr_equal(op_db_row(&a, &arena, 7, "fusion.1", 8), m);
    /* rows are keyed by (module, name) */
    assert_ptr_not_equal(op_db_row(&b, &arena, 8, "fusion.1", 8), NULL);
    assert_int_equal(b.nrows, 1);
    assert_ptr_not_equal(op_db_row(&b, &arena, 9, "fusion.1", 8),
                         op_db_row(&b, &arena, 8, "fusion.1", 8));
    op_db_free(&b);
    op_db_init(&b);
    assert_int_equal(a.nrows, 1);
    a.total_op_time_ps = 300;
    op_db_set_total_time(&a, 200); /* never below the op time */
    assert_int_equal(a.total_time_ps, 300);
    op_db_set_total_time(&a, 1000);
    op_db_add_idle(&a, &arena);
    assert_int_equal(a.nrows, 2);
    assert_string_equal(a.rows[1].name, "IDLE");
    assert_int_equal(a.rows[1].self_time_ps, 700);
    assert_true(op_is_idle(&a.rows[1]));
    m = op_db_row(&b, &arena, 7, "zz", 2);
    m->provenance = "jit(f)/mul:";
    m->occurrences = 5;
    m->time_ps = m->self_time_ps = 300;
    b.total_time_ps = b.total_op_time_ps = 300;
    op_db_combine(&a, &arena, &b, 1);
    assert_int_equal(a.total_time_ps, 1300);
    sorted = op_db_sorted(&a, 0, &n);
    assert_int_equal(n, 3);
    assert_string_equal(sorted[0]->name, "IDLE");
    assert_string_equal(sorted[1]->name, "fusion.1"); /* ties by name */
    assert_string_equal(sorted[2]->name, "zz");
    free(sorted);
    /* framework view: both HLO ops belong to jit(f)/mul; occurrences = max */
    op_db_tf_from_device(&tf, &arena, &a, 0);
    assert_int_equal(tf.nrows, 1);
    assert_string_equal(tf.rows[0].name, "jit(f)/mul");
    assert_string_equal(tf.rows[0].category, "mul");
    assert_int_equal(tf.rows[0].occurrences, 5);
    assert_int_equal(tf.rows[0].self_time_ps, 600);
    assert_int_equal(tf.total_time_ps, 600);
    op_db_free(&tf);
    op_db_tf_from_device(&tf, &arena, &a, 1);
    assert_int_equal(tf.nrows, 2);
    assert_int_equal(tf.total_time_ps, 1300);
    op_db_free(&tf);
    op_db_free(&a);
    op_db_free(&b);
    arena_free(&arena);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse),    cmocka_unit_test(test_training_and_tc),
        cmocka_unit_test(test_bound_by), cmocka_unit_test(test_no_steps),
        cmocka_unit_test(test_db),       cmocka_unit_test(test_roofline_bound_by),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
