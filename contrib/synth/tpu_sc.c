/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The SparseCore planes of --scenario tpu_sc: "/device:TPU:0 SparseCore 0"
 * and "... SparseCore 1", as the TPU runtime writes them beside the
 * TensorCore planes of tpu.c. Each has three lines: "Sparse Core Steps" (one
 * event per step, named by its number), "Sparse Core Modules" (one module
 * run per step) and "Sparse Core Ops" (a gather and a scatter per step, not
 * nested). Ops carry program_id, symbol_id and hlo_category in their
 * metadata; every event carries group_id (the step). The planes have a
 * core_details stat (CoreDetails: core_num, local_chip_id 0), which is what
 * makes XProf mark them is_sparse_core. Ungrouped (tpu_sc_raw): no group_id
 * stat at all.
 *
 * Times, in us from the line timestamp, for step k on SparseCore s:
 *   step    [100 + 1000k + 2 + s, + 890 + 15k + 10s)
 *   gather  [step + 10, step + 300 + 5s)
 *   scatter [step + 320, step + 700 + 10k)
 * SparseCore 1 has no op in step 2, so step 2 is no step of the profile
 * (steps are those every core with steps has). Step 1's SparseCore 1 marker
 * (915 us) is longer than every TensorCore marker of step 1 (913 us).
 */
#include "tpu.h"

#include <stdio.h>
#include <string.h>

#include "xplane.h"

#define US 1000000 /* ps */
#define N_STEPS 3
#define N_SPARSE_CORES 2
#define TS_NS 1000000 /* timestamp_ns of every line, as on the TensorCores */
#define PROGRAM_ID 5

/* Stat metadata ids. */
enum {
    S_GROUP_ID = TPU_STAT_GROUP_ID,
    S_PROGRAM_ID,
    S_SYMBOL_ID,
    S_CATEGORY,
    S_CORE_DETAILS,
    S_COUNT
};
static const char *const stat_names[S_COUNT] = {"",          "group_id",     "program_id",
                                                "symbol_id", "hlo_category", "core_details"};

/* Event metadata: ids 1..N_STEPS are the step names, then these. */
enum { E_MODULE = N_STEPS + 1, E_GATHER, E_SCATTER };

static int64_t step_begin(int k, int s)
{
    return 100 + (int64_t)k * 1000 + 2 + s;
}

static int64_t step_len(int k, int s)
{
    return 890 + 15 * (int64_t)k + 10 * s;
}

/* Line generators: arg is the SparseCore; ctx the ungrouped flag. */
static int gen_steps(void *ctx, int s, struct emit *em)
{
    int k;

    for (k = 0; k < N_STEPS; k++) {
        xev_begin(em, 1 + k, step_begin(k, s) * US, step_len(k, s) * US);
        tpu_put_group(ctx, em, k);
        xev_end(em);
    }
    return em->err;
}

static int gen_modules(void *ctx, int s, struct emit *em)
{
    int k;

    for (k = 0; k < N_STEPS; k++) {
        xev_begin(em, E_MODULE, (step_begin(k, s) + 5) * US, (step_len(k, s) - 10) * US);
        tpu_put_group(ctx, em, k);
        xev_end(em);
    }
    return em->err;
}

static int gen_ops(void *ctx, int s, struct emit *em)
{
    int k;

    for (k = 0; k < N_STEPS; k++) {
        int64_t b = step_begin(k, s);
        if (k == 2 && s == 1)
            continue;
        xev_begin(em, E_GATHER, (b + 10) * US, (290 + 5 * (int64_t)s) * US);
        tpu_put_group(ctx, em, k);
        xev_end(em);
        xev_begin(em, E_SCATTER, (b + 320) * US, (380 + 10 * (int64_t)k) * US);
        tpu_put_group(ctx, em, k);
        xev_end(em);
    }
    return em->err;
}

/* An op's metadata. */
static void put_op_meta(struct wbuf *tail, int64_t id, const char *name, int64_t symbol,
                        const char *category)
{
    struct wbuf v = WBUF_INIT;

    pb_int(&v, 1, id);
    pb_str(&v, 2, name);
    pb_stat_varint(&v, 5, S_PROGRAM_ID, PB_STAT_INT64, PROGRAM_ID);
    pb_stat_varint(&v, 5, S_SYMBOL_ID, PB_STAT_INT64, (uint64_t)symbol);
    pb_stat_bytes(&v, 5, S_CATEGORY, PB_STAT_STR, category, strlen(category));
    pb_map_entry(tail, 4, id, &v);
    if (v.failed)
        tail->failed = 1;
    wb_release(&v);
}

/* Metadata, stat metadata and the core_details stat of SparseCore s. */
static void sc_tail(struct wbuf *tail, int s, int ungrouped)
{
    struct wbuf details = WBUF_INIT;
    char name[32];
    int i, k;

    for (k = 0; k < N_STEPS; k++) {
        snprintf(name, sizeof(name), "%d", k);
        pb_named_entry(tail, 4, 1 + k, name);
    }
    pb_named_entry(tail, 4, E_MODULE, "sparse_core_embedding(5)");
    put_op_meta(tail, E_GATHER, "sc-gather.11", 11, "sparse core gather");
    put_op_meta(tail, E_SCATTER, "sc-scatter.12", 12, "sparse core scatter");
    for (i = 1; i < S_COUNT; i++) {
        if (!(ungrouped && i == S_GROUP_ID))
            pb_named_entry(tail, 5, i, stat_names[i]);
    }
    pb_int(&details, 3, s); /* core_num */
    pb_int(&details, 4, 0); /* local_chip_id */
    pb_stat_bytes(tail, 6, S_CORE_DETAILS, PB_STAT_BYTES, details.data, details.len);
    if (details.failed)
        tail->failed = 1;
    wb_release(&details);
}

int tpu_sc_write(struct sink *sink, int first_id, int ungrouped, uint64_t *bytes)
{
    int s, rc = 0;

    for (s = 0; rc == 0 && s < N_SPARSE_CORES; s++) {
        struct wbuf tail = WBUF_INIT;
        char name[48];
        struct xline_desc lines[3] = {
            {1, "Sparse Core Steps", TS_NS, gen_steps, &ungrouped, s},
            {2, "Sparse Core Modules", TS_NS, gen_modules, &ungrouped, s},
            {3, "Sparse Core Ops", TS_NS, gen_ops, &ungrouped, s},
        };
        struct xplane_desc plane = {first_id + s, name, lines, 3, &tail, NULL};
        snprintf(name, sizeof(name), "/device:TPU:0 SparseCore %d", s);
        sc_tail(&tail, s, ungrouped);
        rc = wb_ok(&tail);
        if (rc == 0)
            rc = xplane_write(sink, &plane, bytes);
        wb_release(&tail);
    }
    return rc;
}
