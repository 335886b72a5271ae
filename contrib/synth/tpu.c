/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The tpu scenario: planes /device:TPU:0 and /device:TPU:1 as the TPU
 * runtime writes them. Each has three lines: "Steps" (one event per step,
 * named by its number), "XLA Modules" (one jit_train_step(5) run per step)
 * and "XLA Ops" (the HLO ops, nested: a root op of symbol 0 holds every op,
 * a while holds a fusion and a convolution). The ops' program_id,
 * symbol_id, hlo_category, tf_op, flops, model_flops, bytes_accessed and
 * deduplicated_name are stats of their event metadata; events carry
 * group_id (the step), custom-calls also flops and bytes_accessed. Plane
 * stats give device_type_string, the peak flop rate and the seven peak
 * bandwidths (HBM, SRAM, CMEM, VMEM read/write) and has_megacore. Times are fixed
 * microseconds that differ per core and step: see README.md.
 *
 * With --steps or --size-mb the same planes grow for benchmarks: N steps,
 * and the while op runs its fusion and convolution TPU_WHILE_REPS times
 * per step, as an XLA while loop repeats its body.
 */
#include "tpu.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "planes.h"
#include "tpu_counters.h"
#include "xplane.h"

#define US 1000000LL      /* ps */
#define N_STEPS 3         /* steps of the small fixed profile */
#define TPU_WHILE_REPS 64 /* while iterations per step of a grown profile */
#define N_CORES 2
#define TS_NS 1000000 /* timestamp_ns of every line */
#define PROGRAM_ID 5

/* Stat metadata ids. */
enum {
    T_GROUP_ID = TPU_STAT_GROUP_ID,
    T_STEP_NUM,
    T_PROGRAM_ID,
    T_SYMBOL_ID,
    T_CATEGORY,
    T_TF_OP,
    T_FLOPS,
    T_MODEL_FLOPS,
    T_BYTES,
    T_DEDUP,
    T_DEVICE_TYPE,
    T_PEAK_TFLOPS,
    T_PEAK_HBM,
    T_PEAK_SRAM_RD,
    T_PEAK_SRAM_WR,
    T_PEAK_CMEM_RD,
    T_PEAK_CMEM_WR,
    T_PEAK_VMEM_RD,
    T_PEAK_VMEM_WR,
    T_HAS_MEGACORE,
    T_COUNT
};
static const char *const stat_names[T_COUNT] = {"",
                                                "group_id",
                                                "step_num",
                                                "program_id",
                                                "symbol_id",
                                                "hlo_category",
                                                "tf_op",
                                                "flops",
                                                "model_flops",
                                                "bytes_accessed",
                                                "deduplicated_name",
                                                "device_type_string",
                                                "peak_teraflops_per_second",
                                                "peak_hbm_bw_gigabytes_per_second",
                                                "peak_sram_rd_bw_gigabytes_per_second",
                                                "peak_sram_wr_bw_gigabytes_per_second",
                                                "peak_cmem_rd_bw_gigabytes_per_second",
                                                "peak_cmem_wr_bw_gigabytes_per_second",
                                                "peak_vmem_rd_bw_gigabytes_per_second",
                                                "peak_vmem_wr_bw_gigabytes_per_second",
                                                "has_megacore"};

/* Event metadata: ids 1..steps are the step names, then these, counted
 * from the number of steps (meta_id). */
enum { E_MODULE = 1, E_ROOT, E_INFEED, E_WHILE, E_FUSION, E_CONV, E_ALLREDUCE, E_CUSTOM, E_END };

/* An HLO op: metadata and its time in a step (us from the step start). */
static const struct tpu_op {
    int64_t meta;
    const char *name;         /* metadata name */
    const char *display_name; /* "" if none */
    int64_t symbol_id;
    const char *category;
    const char *tf_op;
    uint64_t flops, model_flops, bytes; /* per occurrence (0: stat absent) */
    int64_t t0, t1;                     /* us from the step start */
    int64_t core_us, step_us;           /* end moves by core_us per core, step_us per step */
} ops[] = {
    {E_ROOT, "jit_train_step", "", 0, "", "", 0, 0, 0, 6, 870, 0, 0},
    {E_INFEED, "infeed.1", "", 1, "infeed", "jit(train_step)/infeed:infeed", 0, 0, 4096, 10, 60, 0,
     0},
    {E_WHILE, "while.2", "", 2, "control flow", "jit(train_step)/while:while", 0, 0, 0, 70, 570, 0,
     0},
    {E_FUSION, "fusion.3", "", 3, "loop fusion", "jit(train_step)/while/body/add:add", 1000000, 0,
     400000, 80, 280, 5, 0},
    {E_CONV,
     "%convolution.4 = f32[8,128]{1,0} convolution(f32[8,64]{1,0} %p0, f32[64,128]{1,0} %p1)",
     "convolution.4", 4, "convolution",
     "jit(train_step)/while/body/conv_general_dilated:conv_general_dilated", 500000000, 400000000,
     2000000, 300, 560, 0, -1},
    {E_ALLREDUCE, "all-reduce.5", "", 5, "all-reduce", "jit(train_step)/psum:psum", 0, 0, 1000000,
     600, 700, 20, 0},
    {E_CUSTOM,
     "%custom-call.6 = f32[8,128]{1,0} custom-call(f32[8,128]{1,0} %p0), "
     "custom_call_target=\"tpu_custom_call\", frontend_attributes={kernel_metadata={"
     "\"xprof_metadata\": \"{\\\"tile\\\": [8, 128], \\\"kernel\\\": \\\"mosaic\\\"}\"}}",
     "custom-call.6", 6, "custom-call", "jit(train_step)/custom_call:custom_call", 100, 0, 1024,
     710, 760, 0, 2},
};
#define N_OPS (sizeof(ops) / sizeof(ops[0]))

/* What the line generators share: ungrouped comes first, since
 * tpu_put_group reads it through the context pointer. */
struct tpu_gen {
    int ungrouped;   /* no group_id stats */
    int64_t n_steps; /* steps */
    int reps;        /* fusion and convolution runs per while op */
    int dcn;         /* --scenario tpu_dcn: DCN collectives too */
    int host;        /* the host index */
};

static int64_t meta_id(const struct tpu_gen *g, int e)
{
    return g->n_steps + e;
}

/* Step k of core c: start and end in us from the line timestamp. Lengths
 * vary with k mod 8, so that steps of a grown profile never overlap. */
static int64_t step_begin(int64_t k, int c)
{
    return 100 + k * 1000 + c;
}

static int64_t step_end(int64_t k, int c)
{
    return step_begin(k, c) + 900 + 10 * (k % 8) + 3 * c;
}

void tpu_put_group(const void *ungrouped, struct emit *em, int64_t k)
{
    if (!*(const int *)ungrouped)
        xev_int(em, TPU_STAT_GROUP_ID, k);
}

/* Line generators: arg is the core; ctx the ungrouped flag. */
static int gen_steps(void *ctx, int c, struct emit *em)
{
    const struct tpu_gen *g = ctx;
    int64_t k;

    for (k = 0; k < g->n_steps; k++) {
        int64_t b = step_begin(k, c);
        xev_begin(em, 1 + k, b * US, (step_end(k, c) - b) * US);
        tpu_put_group(ctx, em, k);
        xev_int(em, T_STEP_NUM, k);
        xev_end(em);
    }
    return em->err;
}

static int gen_modules(void *ctx, int c, struct emit *em)
{
    const struct tpu_gen *g = ctx;
    int64_t k;

    for (k = 0; k < g->n_steps; k++) {
        int64_t b = step_begin(k, c);
        xev_begin(em, meta_id(g, E_MODULE), (b + 5) * US, (875 + 10 * (k % 8)) * US);
        tpu_put_group(ctx, em, k);
        xev_end(em);
    }
    return em->err;
}

/* The fusion and convolution runs of a grown profile's while op: run r of
 * reps gets an equal slot of [80, 560) us from the step start S; the
 * fusion fills [0.0, 0.4) of it and the convolution [0.5, 0.9). */
static void gen_while_body(const struct tpu_gen *g, int64_t k, int64_t b, struct emit *em)
{
    int64_t slot = 480 * US / g->reps;
    int r;

    for (r = 0; r < g->reps; r++) {
        int64_t s = (b + 80) * US + r * slot;
        xev_begin(em, meta_id(g, E_FUSION), s, slot * 4 / 10);
        tpu_put_group(g, em, k);
        xev_end(em);
        xev_begin(em, meta_id(g, E_CONV), s + slot / 2, slot * 4 / 10);
        tpu_put_group(g, em, k);
        xev_end(em);
    }
}

static int gen_ops(void *ctx, int c, struct emit *em)
{
    const struct tpu_gen *g = ctx;
    int64_t k;
    size_t i;

    for (k = 0; k < g->n_steps; k++) {
        int64_t b = step_begin(k, c);
        for (i = 0; i < N_OPS; i++) {
            const struct tpu_op *op = &ops[i];
            int64_t t1 = op->t1 + op->core_us * c + op->step_us * (k % 8);
            if (g->reps > 1 && (op->meta == E_FUSION || op->meta == E_CONV)) {
                if (op->meta == E_FUSION)
                    gen_while_body(g, k, b, em);
                continue;
            }
            xev_begin(em, meta_id(g, op->meta), (b + op->t0) * US, (t1 - op->t0) * US);
            tpu_put_group(ctx, em, k);
            if (strcmp(op->category, "custom-call") == 0) {
                xev_uint(em, T_FLOPS, 3000 + (uint64_t)k);
                xev_uint(em, T_BYTES, 2048);
            }
            xev_end(em);
        }
        if (g->dcn)
            tpu_dcn_events(em, meta_id(g, E_END), b * US, k, c, g->host, ctx);
    }
    return em->err;
}

/* Step k's start on core 0, in ps after the line timestamp. */
static int64_t step0_ps(int64_t k)
{
    return step_begin(k, 0) * US;
}

/* Metadata, stat metadata and plane stats of TensorCore plane c; with
 * counters (cg not NULL) also the counters' metadata, the chip's device
 * type and the device_id and global_chip_id (100 + c) stats. */
static void tpu_tail(struct wbuf *tail, const struct tpu_gen *g, const struct tpu_counter_gen *cg,
                     int c)
{
    int ungrouped = g->ungrouped;
    char name[32];
    size_t i;
    int64_t k;

    for (k = 0; k < g->n_steps; k++) {
        snprintf(name, sizeof(name), "%lld", (long long)k);
        pb_named_entry(tail, 4, 1 + k, name);
    }
    pb_named_entry(tail, 4, meta_id(g, E_MODULE), "jit_train_step(5)");
    for (i = 0; i < N_OPS; i++) {
        const struct tpu_op *op = &ops[i];
        struct wbuf v = WBUF_INIT;
        pb_int(&v, 1, meta_id(g, op->meta));
        pb_str(&v, 2, op->name);
        if (op->display_name[0] != '\0')
            pb_str(&v, 4, op->display_name);
        pb_stat_varint(&v, 5, T_PROGRAM_ID, PB_STAT_INT64, PROGRAM_ID);
        pb_stat_varint(&v, 5, T_SYMBOL_ID, PB_STAT_INT64, (uint64_t)op->symbol_id);
        if (op->category[0] != '\0')
            pb_stat_bytes(&v, 5, T_CATEGORY, PB_STAT_STR, op->category, strlen(op->category));
        if (op->tf_op[0] != '\0')
            pb_stat_bytes(&v, 5, T_TF_OP, PB_STAT_STR, op->tf_op, strlen(op->tf_op));
        if (op->flops)
            pb_stat_varint(&v, 5, T_FLOPS, PB_STAT_UINT64, op->flops);
        if (op->model_flops)
            pb_stat_varint(&v, 5, T_MODEL_FLOPS, PB_STAT_UINT64, op->model_flops);
        if (op->bytes)
            pb_stat_varint(&v, 5, T_BYTES, PB_STAT_UINT64, op->bytes);
        if (op->symbol_id != 0)
            pb_stat_bytes(&v, 5, T_DEDUP, PB_STAT_STR,
                          op->display_name[0] ? op->display_name : op->name,
                          strlen(op->display_name[0] ? op->display_name : op->name));
        pb_map_entry(tail, 4, meta_id(g, op->meta), &v);
        if (v.failed)
            tail->failed = 1;
        wb_release(&v);
    }
    for (i = 1; i < T_COUNT; i++) {
        if (!(ungrouped && i == T_GROUP_ID)) /* ungrouped: no group_id stat at all */
            pb_named_entry(tail, 5, (int64_t)i, stat_names[i]);
    }
    if (g->dcn) {
        struct tpu_dcn_stats st = {T_PROGRAM_ID, T_SYMBOL_ID, T_CATEGORY, T_COUNT};
        tpu_dcn_metadata(tail, meta_id(g, E_END), &st);
        pb_named_entry(tail, 5, T_COUNT, "dcn_collective_info");
    }
    if (cg != NULL) {
        const char *type = tpu_counters_device_type(cg->chip);
        tpu_counters_tail(tail, cg);
        pb_stat_bytes(tail, 6, T_DEVICE_TYPE, PB_STAT_STR, type, strlen(type));
        pb_stat_varint(tail, 6, TC_STAT_DEVICE_ID, PB_STAT_INT64, (uint64_t)c);
        pb_stat_varint(tail, 6, TC_STAT_GLOBAL_CHIP_ID, PB_STAT_INT64, (uint64_t)(100 + c));
    } else {
        pb_stat_bytes(tail, 6, T_DEVICE_TYPE, PB_STAT_STR, "TPU v4", 6);
    }
    pb_stat_double(tail, 6, T_PEAK_TFLOPS, 275.0);
    pb_stat_double(tail, 6, T_PEAK_HBM, 1200.0);
    pb_stat_double(tail, 6, T_PEAK_SRAM_RD, 1600.0);
    pb_stat_double(tail, 6, T_PEAK_SRAM_WR, 1500.0);
    pb_stat_double(tail, 6, T_PEAK_CMEM_RD, 800.0);
    pb_stat_double(tail, 6, T_PEAK_CMEM_WR, 700.0);
    pb_stat_double(tail, 6, T_PEAK_VMEM_RD, 4000.0);
    pb_stat_double(tail, 6, T_PEAK_VMEM_WR, 3500.0);
    pb_stat_varint(tail, 6, T_HAS_MEGACORE, PB_STAT_INT64, 1);
}

/* Writes (or counts, sink NULL) host h's XSpace with n_steps steps of reps
 * while iterations; adds its bytes to *bytes. */
static int tpu_emit(struct synth *sy, int h, struct sink *sink, int64_t n_steps, int reps,
                    uint64_t *bytes)
{
    const struct synth_opts *o = sy->opt;
    struct tpu_gen g = {o->tpu_raw, n_steps, reps, o->tpu_dcn, h};
    struct tpu_counter_gen cg = {o->counters, 0,
                                 meta_id(&g, E_END) + 1 + (o->tpu_dcn ? TPU_DCN_NOPS : 0), o->seed};
    int64_t n_samples = o->counters >= 0 ? o->counter_samples : 0, k;
    struct xline_desc *lines = calloc((size_t)(3 + n_samples), sizeof(*lines));
    char(*line_names)[32] = calloc((size_t)(n_samples + 1), sizeof(*line_names));
    int c, rc = 0;

    if (lines == NULL || line_names == NULL)
        rc = -ENOMEM;
    if (o->counters >= 0)
        cg.width = tpu_counters_width(o->counters, (uint32_t)o->counter_width);
    synth_set_host(sy, h);
    if (rc == 0 && g.dcn)
        rc = tpu_dcn_metadata_plane(sink, bytes);
    for (c = 0; rc == 0 && c < N_CORES; c++) {
        struct wbuf tail = WBUF_INIT;
        char name[32];
        struct xplane_desc plane = {c, name, lines, (size_t)(3 + n_samples), &tail, NULL};
        tpu_tail(&tail, &g, o->counters >= 0 ? &cg : NULL, c);
        rc = wb_ok(&tail);
        lines[0] = (struct xline_desc){1, "Steps", TS_NS, gen_steps, &g, c};
        lines[1] = (struct xline_desc){2, "XLA Modules", TS_NS, gen_modules, &g, c};
        lines[2] = (struct xline_desc){3, "XLA Ops", TS_NS, gen_ops, &g, c};
        for (k = 0; k < n_samples; k++) {
            snprintf(line_names[k], sizeof(line_names[k]), "counters_%lld", (long long)k);
            lines[3 + k] = (struct xline_desc){100 + k,           line_names[k], TS_NS,
                                               tpu_counters_line, &cg,           (int)(k * 2 + c)};
        }
        snprintf(name, sizeof(name), "/device:TPU:%d", c);
        if (rc == 0)
            rc = xplane_write(sink, &plane, bytes);
        wb_release(&tail);
    }
    free(lines);
    free(line_names);
    if (rc == 0 && sy->opt->tpu_sc)
        rc = tpu_sc_write(sink, N_CORES, g.ungrouped, bytes);
    if (rc == 0 && g.dcn)
        rc = tpu_dcn_host_plane(sink, n_steps, step0_ps, TS_NS, bytes);
    if (rc == 0)
        rc = planes_write_task_env(sink, planes_wall_start(h), planes_wall_start(h) + 4000000,
                                   bytes);
    if (rc == 0)
        rc = xspace_write_hostname(sink, sy->hostname, bytes);
    if (rc == -ENOMEM)
        fprintf(stderr, "xprofs-synth: out of memory\n");
    return rc;
}

int tpu_write(struct synth *sy, int h, struct sink *sink, int64_t n_steps)
{
    uint64_t bytes = 0;

    if (n_steps <= 0)
        return tpu_emit(sy, h, sink, N_STEPS, 1, &bytes);
    return tpu_emit(sy, h, sink, n_steps, TPU_WHILE_REPS, &bytes);
}

int tpu_choose_steps(struct synth *sy, uint64_t target_bytes, int64_t *n_steps)
{
    int64_t n0 = 1, n1 = 1001, n;
    uint64_t b0 = 0, b1, per_step;
    int round, rc;

    /* Steps grow a little with their number (varints, names), so a line
     * through two counted sizes is drawn again through the estimate. */
    *n_steps = 1;
    rc = tpu_emit(sy, 0, NULL, n0, TPU_WHILE_REPS, &b0);
    for (round = 0; round < 3 && rc == 0; round++) {
        b1 = 0;
        rc = tpu_emit(sy, 0, NULL, n1, TPU_WHILE_REPS, &b1);
        if (rc != 0 || b1 <= b0)
            break;
        per_step = (b1 - b0) / (uint64_t)(n1 - n0);
        n = 1;
        if (target_bytes > b0)
            n = n0 + (int64_t)((target_bytes - b0 + per_step / 2) / per_step);
        *n_steps = n;
        if (n == n1 || n == n0)
            break;
        n1 = n;
    }
    return rc;
}
