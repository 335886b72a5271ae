/*
 * test_op_stats_tpu.c - TPU perf_env (GetPerfEnvFromXPlane / MakePerfEnvForTpu)
 * and duty cycle, plain and high-confidence (DutyCycleTracker /
 * DutyCycleCombiner, IsCustomCallEventOffDuty) on hand-built
 * XSpaces, SparseCore plane names (GetSparseCoreId) and the SparseCore part
 * of the TPU per-step input-pipeline data (ComputeTpuPerStepDataAcrossCores)
 * on a hand-built step db, checked against hand-worked values.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "op_stats/op_stats_input.h"
#include "op_stats/op_stats_tpu_int.h"
#include "pbw.h"

/* Stat metadata ids of the test planes. */
enum { S_CATEGORY = 1, S_CORE, S_TFLOPS, S_HBM, S_SRAM_RD, S_CMEM_WR, S_VMEM_RD, S_MEGACORE };

static void put_stat_meta(struct pbw *plane, int64_t id, const char *name)
{
    struct pbw entry = {0}, value = {0};

    pbw_uint(&value, 1, (uint64_t)id);
    pbw_str(&value, 2, name);
    pbw_uint(&entry, 1, (uint64_t)id);
    pbw_msg(&entry, 2, &value);
    pbw_msg(plane, 5, &entry);
}

/* Event metadata id with an hlo_category stat ("" for none). */
static void put_event_meta(struct pbw *plane, int64_t id, const char *category)
{
    struct pbw entry = {0}, value = {0}, st = {0};

    pbw_uint(&value, 1, (uint64_t)id);
    pbw_str(&value, 2, "op");
    if (category[0] != '\0') {
        pbw_uint(&st, 1, S_CATEGORY);
        pbw_str(&st, 5, category);
        pbw_msg(&value, 5, &st);
    }
    pbw_uint(&entry, 1, (uint64_t)id);
    pbw_msg(&entry, 2, &value);
    pbw_msg(plane, 4, &entry);
}

static void put_event(struct pbw *line, int64_t meta, int64_t offset_ps, int64_t duration_ps)
{
    struct pbw ev = {0};

    pbw_uint(&ev, 1, (uint64_t)meta);
    pbw_uint(&ev, 2, (uint64_t)offset_ps);
    pbw_uint(&ev, 3, (uint64_t)duration_ps);
    pbw_msg(line, 4, &ev);
}

static void put_double_stat(struct pbw *plane, int64_t id, double v)
{
    struct pbw st = {0};

    pbw_uint(&st, 1, (uint64_t)id);
    pbw_double(&st, 2, v);
    pbw_msg(plane, 6, &st);
}

/* core_details: CoreDetails {local_chip_id = chip} */
static void put_core_details(struct pbw *plane, uint32_t chip)
{
    struct pbw st = {0};
    uint8_t cd[] = {0x20, (uint8_t)chip};

    pbw_uint(&st, 1, S_CORE);
    pbw_bytes(&st, 6, cd, sizeof(cd));
    pbw_msg(plane, 6, &st);
}

static void plane_begin(struct pbw *plane, int64_t id, const char *name)
{
    pbw_uint(plane, 1, (uint64_t)id);
    pbw_str(plane, 2, name);
    put_stat_meta(plane, S_CATEGORY, "hlo_category");
    put_stat_meta(plane, S_CORE, "core_details");
    put_stat_meta(plane, S_TFLOPS, "peak_teraflops_per_second");
    put_stat_meta(plane, S_HBM, "peak_hbm_bw_gigabytes_per_second");
    put_stat_meta(plane, S_SRAM_RD, "peak_sram_rd_bw_gigabytes_per_second");
    put_stat_meta(plane, S_CMEM_WR, "peak_cmem_wr_bw_gigabytes_per_second");
    put_stat_meta(plane, S_VMEM_RD, "peak_vmem_rd_bw_gigabytes_per_second");
    put_stat_meta(plane, S_MEGACORE, "has_megacore");
    put_event_meta(plane, 1, "");
    put_event_meta(plane, 2, "infeed");
    put_event_meta(plane, 3, "megacore fusion");
    put_event_meta(plane, 4, "convolution");
}

static void line_begin(struct pbw *line, int64_t id, const char *name, int64_t ts_ns)
{
    pbw_uint(line, 1, (uint64_t)id);
    pbw_str(line, 2, name);
    pbw_uint(line, 3, (uint64_t)ts_ns);
}

/* Opens the space, decodes it and runs fn on a fresh op_stats. */
static void with_space(struct pbw *space, int (*fn)(struct host_ctx *), struct op_stats *os,
                       struct xspace **xsp)
{
    struct xp_err err;
    struct host_ctx ctx;

    assert_int_equal(xspace_open_buffer("test", space->p, space->n, xsp, &err), 0);
    assert_int_equal(xspace_decode(*xsp, 1, &err), 0);
    memset(os, 0, sizeof(*os));
    arena_init(&os->arena);
    op_db_init(&os->device_db);
    op_db_init(&os->host_db);
    memset(&ctx, 0, sizeof(ctx));
    ctx.xs = *xsp;
    ctx.os = os;
    assert_int_equal(fn(&ctx), 0);
}

static void done(struct op_stats *os, struct xspace *xs, struct pbw *space)
{
    op_db_free(&os->device_db);
    op_db_free(&os->host_db);
    arena_free(&os->arena);
    xspace_close(xs);
    free(space->p);
}

static void test_perf_env(void **state)
{
    struct pbw space = {0}, plane = {0}, st = {0};
    struct op_stats os;
    struct xspace *xs;

    (void)state;
    plane_begin(&plane, 0, "/device:TPU:0");
    put_double_stat(&plane, S_TFLOPS, 275.0);
    put_double_stat(&plane, S_HBM, 1200.0);
    put_double_stat(&plane, S_SRAM_RD, 1600.0);
    put_double_stat(&plane, S_CMEM_WR, 700.0);
    put_double_stat(&plane, S_VMEM_RD, 4000.0);
    pbw_uint(&st, 1, S_MEGACORE);
    pbw_uint(&st, 4, 1);
    pbw_msg(&plane, 6, &st);
    pbw_msg(&space, 1, &plane);
    with_space(&space, op_stats_env, &os, &xs);
    assert_int_equal(os.hardware_type, HW_TPU);
    assert_int_equal(os.npeak_bws, 7);
    /* HBM, SRAM rd, SRAM wr, CMEM rd, CMEM wr, VMEM rd, VMEM wr; absent = 0 */
    assert_true(os.peak_bws[0] == 1200.0 && os.peak_bws[1] == 1600.0 && os.peak_bws[2] == 0.0);
    assert_true(os.peak_bws[3] == 0.0 && os.peak_bws[4] == 700.0);
    assert_true(os.peak_bws[5] == 4000.0 && os.peak_bws[6] == 0.0);
    assert_true(os.peak_tflops == 275.0);
    assert_true(os.ridge_point == 275.0 * 1e3 / 1200.0);
    assert_int_equal(os.has_cmem, 1); /* the CMEM write peak */
    assert_int_equal(os.has_megacore, 1);
    assert_int_equal(os.has_merged_vmem, 0);
    done(&os, xs, &space);
}

/*
 * Planes (times in ps, line timestamp 0 unless said):
 *   TPU:0, chip 5: XLA Ops [100,200) [150,300) on duty, infeed [400,500),
 *                  XLA Modules [50,600)        -> spans [100,300)
 *   TPU:1, chip 5: XLA Ops [250,350), megacore fusion [700,900)
 *                                              -> chip 5: [100,350) = 250, window 900
 *   TPU:2 (no core details): line at 1 ns: XLA Ops [0,100) -> [1000,1100);
 *                  Sparse Core Ops (infeed category, still busy) [200,300)
 *                  -> [1200,1300): busy 200, window 1300
 *   busy = 250 + 200 = 450, idle = (900 - 250) + (1300 - 200) = 1750.
 */
static void test_duty_cycle(void **state)
{
    struct pbw space = {0}, p0 = {0}, p1 = {0}, p2 = {0}, l = {0};
    struct op_stats os;
    struct xspace *xs;

    (void)state;
    plane_begin(&p0, 0, "/device:TPU:0");
    put_core_details(&p0, 5);
    line_begin(&l, 1, "XLA Ops", 0);
    put_event(&l, 1, 100, 100);
    put_event(&l, 4, 150, 150);
    put_event(&l, 2, 400, 100);
    pbw_msg(&p0, 3, &l);
    line_begin(&l, 2, "XLA Modules", 0);
    put_event(&l, 1, 50, 550);
    pbw_msg(&p0, 3, &l);
    pbw_msg(&space, 1, &p0);

    plane_begin(&p1, 1, "/device:TPU:1");
    put_core_details(&p1, 5);
    line_begin(&l, 1, "XLA Ops", 0);
    put_event(&l, 4, 250, 100);
    put_event(&l, 3, 700, 200);
    pbw_msg(&p1, 3, &l);
    pbw_msg(&space, 1, &p1);

    plane_begin(&p2, 2, "/device:TPU:2");
    line_begin(&l, 1, "XLA Ops", 1);
    put_event(&l, 4, 0, 100);
    pbw_msg(&p2, 3, &l);
    line_begin(&l, 3, "Sparse Core Ops", 1);
    put_event(&l, 2, 200, 100);
    pbw_msg(&p2, 3, &l);
    pbw_msg(&space, 1, &p2);

    with_space(&space, op_stats_tpu_duty, &os, &xs);
    assert_int_equal(os.device_db.busy_time_ps, 450);
    assert_int_equal(os.device_db.idle_time_ps, 1750);
    done(&os, xs, &space);
}

/* Stat metadata of the high-confidence test plane (after plane_begin's). */
enum { S_FLOPS = 20, S_MODEL_FLOPS, S_USES_ICI };

/* An event whose own stats are the given (stat id, kind, value) triples:
 * kind 'u' uint, 'i' int, 's' string (value: str). */
static void put_event_stats(struct pbw *line, int64_t meta, int64_t offset_ps, int64_t duration_ps,
                            int64_t stat, int kind, uint64_t v, const char *str)
{
    struct pbw ev = {0}, st = {0};

    pbw_uint(&ev, 1, (uint64_t)meta);
    pbw_uint(&ev, 2, (uint64_t)offset_ps);
    pbw_uint(&ev, 3, (uint64_t)duration_ps);
    if (stat != 0) {
        pbw_uint(&st, 1, (uint64_t)stat);
        if (kind == 's')
            pbw_str(&st, 5, str);
        else
            pbw_uint(&st, kind == 'u' ? 3 : 4, v);
        pbw_msg(&ev, 4, &st);
    }
    pbw_msg(line, 4, &ev);
}

/*
 * High-confidence duty cycle (ConstructDutyCycleTrackers, IsCustomCallEventOffDuty),
 * TPU:0 without core details, times in ps:
 *   [0,100)     custom-call (metadata), no flops        plain busy, HC idle
 *   [200,300)   custom-call, event uses_ici = 1         busy in both
 *   [400,500)   category only on the event: custom-call, event model_flops 3: both
 *   [600,700)   category only on the event: custom-call  plain busy, HC idle
 *   [800,900)   category only on the event: infeed       idle in both
 *   [1000,1100) custom-call, metadata flops 9            busy in both
 *   plain: busy 500, idle 600; HC: busy 300, idle 800.
 * TPU:1 has core details (device_ordinal 3) and no events: core_id_to_details
 * gets (1, "localhost", 3); its window is empty.
 */
static void test_duty_cycle_high_confidence(void **state)
{
    struct pbw space = {0}, p0 = {0}, p1 = {0}, l = {0}, entry = {0}, value = {0}, st = {0},
               cd = {0};
    const uint8_t details[] = {0x10, 3, 0x20, 0};
    struct op_stats os;
    struct xspace *xs;

    (void)state;
    plane_begin(&p0, 0, "/device:TPU:0");
    put_stat_meta(&p0, S_FLOPS, "flops");
    put_stat_meta(&p0, S_MODEL_FLOPS, "model_flops");
    put_stat_meta(&p0, S_USES_ICI, "uses_ici");
    put_event_meta(&p0, 5, "custom-call");
    /* metadata 6: custom-call with flops 9 */
    pbw_uint(&value, 1, 6);
    pbw_str(&value, 2, "cc");
    pbw_uint(&st, 1, S_CATEGORY);
    pbw_str(&st, 5, "custom-call");
    pbw_msg(&value, 5, &st); /* resets st */
    pbw_uint(&st, 1, S_FLOPS);
    pbw_uint(&st, 3, 9);
    pbw_msg(&value, 5, &st);
    pbw_uint(&entry, 1, 6);
    pbw_msg(&entry, 2, &value);
    pbw_msg(&p0, 4, &entry);
    line_begin(&l, 1, "XLA Ops", 0);
    put_event(&l, 5, 0, 100);
    put_event_stats(&l, 5, 200, 100, S_USES_ICI, 'i', 1, NULL);
    {
        /* two event stats: the category and model flops */
        struct pbw ev = {0}, s1 = {0}, s2 = {0};
        pbw_uint(&ev, 1, 1);
        pbw_uint(&ev, 2, 400);
        pbw_uint(&ev, 3, 100);
        pbw_uint(&s1, 1, S_CATEGORY);
        pbw_str(&s1, 5, "custom-call");
        pbw_msg(&ev, 4, &s1);
        pbw_uint(&s2, 1, S_MODEL_FLOPS);
        pbw_uint(&s2, 3, 3);
        pbw_msg(&ev, 4, &s2);
        pbw_msg(&l, 4, &ev);
    }
    put_event_stats(&l, 1, 600, 100, S_CATEGORY, 's', 0, "custom-call");
    put_event_stats(&l, 1, 800, 100, S_CATEGORY, 's', 0, "infeed");
    put_event(&l, 6, 1000, 100);
    pbw_msg(&p0, 3, &l);
    pbw_msg(&space, 1, &p0);

    plane_begin(&p1, 1, "/device:TPU:1");
    pbw_uint(&cd, 1, S_CORE);
    pbw_bytes(&cd, 6, details, sizeof(details));
    pbw_msg(&p1, 6, &cd);
    pbw_msg(&space, 1, &p1);

    with_space(&space, op_stats_tpu_duty, &os, &xs);
    assert_int_equal(os.device_db.busy_time_ps, 500);
    assert_int_equal(os.device_db.idle_time_ps, 600);
    assert_int_equal(os.device_db.busy_time_hc_ps, 300);
    assert_int_equal(os.device_db.idle_time_hc_ps, 800);
    assert_int_equal(os.ncore_details, 1);
    assert_int_equal(os.core_details[0].core_id, 1);
    assert_int_equal(os.core_details[0].device_ordinal, 3);
    assert_string_equal(os.core_details[0].hostname, "localhost");
    done(&os, xs, &space);
}

static void test_sparse_core_plane_names(void **state)
{
    (void)state;
    /* /device:TPU:[0-9]+ SparseCore ([0-9]+) and /device:TPU:([0-9]*), whole names */
    assert_int_equal(tpu_plane_core("/device:TPU:0 SparseCore 0"), TPU_SPARSE_CORE);
    assert_int_equal(tpu_plane_core("/device:TPU:12 SparseCore 345"), TPU_SPARSE_CORE);
    assert_int_equal(tpu_plane_core("/device:TPU:0"), TPU_TENSOR_CORE);
    assert_int_equal(tpu_plane_core("/device:TPU:"), TPU_TENSOR_CORE);
    assert_int_equal(tpu_plane_core("/device:TPU: SparseCore 0"), TPU_NOT_A_CORE);
    assert_int_equal(tpu_plane_core("/device:TPU:0 SparseCore "), TPU_NOT_A_CORE);
    assert_int_equal(tpu_plane_core("/device:TPU:0 SparseCore 1x"), TPU_NOT_A_CORE);
    assert_int_equal(tpu_plane_core("/device:TPU:0  SparseCore 1"), TPU_NOT_A_CORE);
    assert_int_equal(tpu_plane_core("/device:GPU:0 SparseCore 1"), TPU_NOT_A_CORE);
    assert_int_equal(tpu_plane_core("/device:TPU:0 SparseCoreV0"), TPU_NOT_A_CORE);
    assert_int_equal(tpu_plane_core("/device:TPU:0 Foo"), TPU_NOT_A_CORE);
}

/* One core of a step: duration and categories (IDLE included). */
static void set_core(struct step_core *c, uint32_t core_id, uint64_t dur_us,
                     const struct step_category *cats, uint32_t ncats)
{
    memset(c, 0, sizeof(*c));
    c->core_id = core_id;
    c->step_name = "";
    c->duration_ps = dur_us * 1000000;
    c->categories = cats;
    c->ncategories = ncats;
}

static void test_sparse_core_step_data(void **state)
{
    /* step 0: TensorCore 0 (1000 us: 100 us infeed, 800 us conv, 100 idle);
     * SparseCores 1000002 (900 us, 300 idle) and 1000003 (950 us, 150 idle)
     * step 1: the same TensorCore, one SparseCore (800 us, 200 idle) */
    static const struct step_category tc[] = {
        {"IDLE", 100000000}, {"convolution", 800000000}, {"infeed", 100000000}};
    static const struct step_category sc2[] = {{"IDLE", 300000000}, {"gather", 600000000}};
    static const struct step_category sc3[] = {{"IDLE", 150000000}, {"gather", 800000000}};
    static const struct step_category sc4[] = {{"IDLE", 200000000}, {"gather", 600000000}};
    struct step_core c0[3], c1[2];
    struct step_entry steps[2];
    struct op_stats os;
    struct ip_analysis a;

    (void)state;
    memset(&os, 0, sizeof(os));
    op_db_init(&os.host_db);
    op_db_init(&os.device_db);
    os.hardware_type = HW_TPU;
    os.device_type = "TPU v4";
    os.has_sparse_core = 1;
    set_core(&c0[0], 0, 1000, tc, 3);
    set_core(&c0[1], 1000002, 900, sc2, 2);
    set_core(&c0[2], 1000003, 950, sc3, 2);
    set_core(&c1[0], 0, 1000, tc, 3);
    set_core(&c1[1], 1000004, 800, sc4, 2);
    steps[0] = (struct step_entry){.step_num = 0, .cores = c0, .ncores = 3};
    steps[1] = (struct step_entry){.step_num = 1, .cores = c1, .ncores = 2};
    os.steps = steps;
    os.nsteps = 2;
    assert_int_equal(ip_analyze(&os, &a), 0);
    assert_int_equal(a.ntpu_steps, 2);
    assert_true(a.has_sparse_core);
    /* compute: min(900 - 300, 950 - 150) = 600 us; idle avg (300 + 150) / 2;
     * step time avg (900 + 950) / 2 */
    assert_float_equal(a.tpu_steps[0].sc_compute_ms, 0.6, 1e-12);
    assert_float_equal(a.tpu_steps[0].sc_idle_ms, 0.225, 1e-12);
    assert_float_equal(a.tpu_steps[0].sc_step_time_ms, 0.925, 1e-12);
    assert_float_equal(a.tpu_steps[1].sc_compute_ms, 0.6, 1e-12);
    assert_float_equal(a.tpu_steps[1].sc_idle_ms, 0.2, 1e-12);
    assert_float_equal(a.tpu_steps[1].sc_step_time_ms, 0.8, 1e-12);
    assert_float_equal(a.tpu_steps[0].sc_infeed_ms, 0, 0);
    assert_float_equal(a.tpu_steps[0].sc_outfeed_ms, 0, 0);
    /* the TensorCore figures ignore the SparseCores */
    assert_float_equal(a.tpu_steps[0].tc_infeed_ms, 0.1, 1e-12);
    assert_float_equal(a.tpu_steps[0].tc_idle_ms, 0.1, 1e-12);
    assert_float_equal(a.step_time.max, 1.0, 1e-12);
    /* summaries over the steps */
    assert_float_equal(a.sc_compute.avg, 0.6, 1e-12);
    assert_float_equal(a.sc_step_time.avg, 0.8625, 1e-12);
    assert_float_equal(a.sc_step_time.min, 0.8, 1e-12);
    assert_float_equal(a.sc_idle.max, 0.225, 1e-12);
    ip_free(&a);
    op_db_free(&os.host_db);
    op_db_free(&os.device_db);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_perf_env),
        cmocka_unit_test(test_duty_cycle),
        cmocka_unit_test(test_duty_cycle_high_confidence),
        cmocka_unit_test(test_sparse_core_plane_names),
        cmocka_unit_test(test_sparse_core_step_data),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
