/*
 * tpu_counters.c - the TPU counter tables and XProf's utilization metrics
 * of one counter sample (see tpu_counters.h). The metric order, names,
 * units and arithmetic (uint64 sums that wrap, then doubles) are those of
 * xprof/convert/tpu_generic_utilization_utils.cc and the per-core loop of
 * xplane_to_utilization_viewer.cc.
 */
#include "tpu_counters.h"

#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const struct tpu_counter_name v6e_table[] = {
#include "tpu_counter_ids_v6e.inc"
};

static const struct tpu_counter_name v7x_table[] = {
#include "tpu_counter_ids_v7x.inc"
};

#define NV6E (sizeof(v6e_table) / sizeof(v6e_table[0]))
#define NV7X (sizeof(v7x_table) / sizeof(v7x_table[0]))

/* Table indexes sorted by name, for resolving names (made once). */
static uint32_t *by_name[2];
static pthread_once_t by_name_once = PTHREAD_ONCE_INIT;
static const struct tpu_counter_name *sort_table;

static int cmp_index(const void *a, const void *b)
{
    return strcmp(sort_table[*(const uint32_t *)a].name, sort_table[*(const uint32_t *)b].name);
}

static void make_by_name(void)
{
    int c;

    for (c = 0; c < 2; c++) {
        size_t n, i;
        const struct tpu_counter_name *t = tpu_counter_table((enum tpu_chip)c, &n);
        uint32_t *ix = malloc(n * sizeof(*ix));
        if (ix == NULL)
            continue;
        for (i = 0; i < n; i++)
            ix[i] = (uint32_t)i;
        sort_table = t;
        qsort(ix, n, sizeof(*ix), cmp_index);
        by_name[c] = ix;
    }
}

enum tpu_chip tpu_chip_of_device_type(const char *s, size_t len)
{
    if (len == 11 && memcmp(s, "TPU v6 Lite", 11) == 0)
        return TPU_CHIP_V6E;
    if (len == 7 && memcmp(s, "TPU v7x", 7) == 0)
        return TPU_CHIP_V7X;
    return TPU_CHIP_NONE;
}

enum tpu_chip tpu_chip_of_short_name(const char *name)
{
    if (strcmp(name, "v6e") == 0)
        return TPU_CHIP_V6E;
    if (strcmp(name, "v7x") == 0)
        return TPU_CHIP_V7X;
    return TPU_CHIP_NONE;
}

const struct tpu_counter_name *tpu_counter_table(enum tpu_chip chip, size_t *n)
{
    if (chip == TPU_CHIP_V7X) {
        *n = NV7X;
        return v7x_table;
    }
    *n = NV6E;
    return v6e_table;
}

double tpu_chip_frequency_hz(enum tpu_chip chip)
{
    return chip == TPU_CHIP_V7X ? 1.9e9 : 1.75e9;
}

/* Name resolution while building a plan. */
struct resolver {
    struct tpu_plan *p;
    const uint32_t *sorted;
    struct xp_err *err;
    int rc;
};

/* The index of the formatted name; a missing name is an error when
 * required, else the zero slot. */
static uint32_t resolve(struct resolver *r, int required, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static uint32_t resolve(struct resolver *r, int required, const char *fmt, ...)
{
    char name[160];
    size_t lo = 0, hi = r->p->ntable;
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(name, sizeof(name), fmt, ap);
    va_end(ap);
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        int c = strcmp(r->p->table[r->sorted[mid]].name, name);
        if (c == 0)
            return r->sorted[mid];
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (required && r->rc == 0)
        r->rc = xp_err_set(r->err, -EINVAL, "TPU counter table lacks %s", name);
    return r->p->zero;
}

#define TC6 "VF_CHIP_TC_TCS_TC_MISC_TCS_STATS_TCS_STATS_COUNTERS_UNPRIVILEGED_COUNT_"
#define TC7 "VF_CHIP_DIE%d_TC_TCS_TC_MISC_TCS_STATS_TCS_STATS_COUNTERS_UNPRIVILEGED_COUNT_"
#define PWR7 "VF_CHIP_DIE%d_PWRMGR_PWRMGR_TC_THROTTLE_CORE_DEBUG_STATS_UNPRIVILEGED_"
#define HBMS "_CMN_HI_FREQ_STATS_COUNTERS_UNPRIVILEGED_"
#define SCS_ "_SC_STATS_COUNTERS_UNPRIVILEGED_COUNT_"

static const char *const matmul_kinds[8] = {"LMR_BF16", "LMR_I8",  "LMR_I4",    "VREG_I4",
                                            "VREG_I8",  "VREG_F8", "VREG_BF16", "VREG_F32"};
enum {
    MM_LMR_BF16,
    MM_LMR_I8,
    MM_LMR_I4,
    MM_VREG_I4,
    MM_VREG_I8,
    MM_VREG_F8,
    MM_VREG_BF16,
    MM_VREG_F32
};
static const char *const vpu_ops[5] = {"FADD", "FMUL", "MISC", "INT", "FMAC"};
static const char *const xlu_kinds[4] = {"PACKED_XLU", "ROTATE_PERMUTE_INSTRUCTION_XLU",
                                         "ROTATE_PERMUTE_SET_INSTRUCTION_XLU", "TRANSPOSE_XLU"};
static const char *const tec_names[4] = {"TEC_SCALAR_ISSUE", "TEC_S0_INSTRUCTION",
                                         "TEC_S1_INSTRUCTION", "TEC_SMISC_INSTRUCTION"};
static const char *const vec_names[8] = {"VECTOR_ISSUE",    "V0_INSTRUCTION",  "V1_INSTRUCTION",
                                         "V2_INSTRUCTION",  "VLD_INSTRUCTION", "VST_INSTRUCTION",
                                         "VEX_INSTRUCTION", "VRES_INSTRUCTION"};
static const char *const scs_names[4] = {"SCALAR_ISSUE", "S0_INSTRUCTION", "S1_INSTRUCTION",
                                         "SMISC_INSTRUCTION"};

/* A tensor-core counter NAME of core (v7x: die = core). */
static uint32_t tc(struct resolver *r, int core, int required, const char *name)
{
    if (r->p->chip == TPU_CHIP_V6E)
        return resolve(r, required, TC6 "%s", name);
    return resolve(r, required, TC7 "%s", core, name);
}

static void plan_tc(struct resolver *r, int core, struct tpu_tc_plan *t)
{
    int v6e = r->p->chip == TPU_CHIP_V6E, i, u, k, n, s, ps;
    char name[64];

    t->cycles = v6e ? tc(r, core, 1, "CYCLES") : resolve(r, 1, PWR7 "CYCLE_COUNT", core);
    t->skipped[0] = v6e ? r->p->zero : resolve(r, 1, PWR7 "CLOCKS_SKIPPED", core);
    t->skipped[1] = v6e ? r->p->zero : resolve(r, 1, PWR7 "EXT_THROTTLE_CLOCKS_SKIPPED", core);
    t->skipped[2] = v6e ? r->p->zero : resolve(r, 1, PWR7 "LDIDT_DROOP_CLOCKS_SKIPPED", core);
    for (i = 0; i < 2; i++) {
        snprintf(name, sizeof(name), "SCALAR_ALU_INSTRUCTION_%d", i);
        t->scalar[i] = tc(r, core, 1, name);
        snprintf(name, sizeof(name), "VLD_INSTRUCTION_%d", i);
        t->vld[i] = tc(r, core, 1, name);
        snprintf(name, sizeof(name), "MATPUSH_CYCLES_MXU_%d", i);
        t->matpush[i] = tc(r, core, 1, name);
    }
    for (i = 0; i < 4; i++) {
        snprintf(name, sizeof(name), "VECTOR_ALU_INSTRUCTION_%d", i);
        t->valu[i] = tc(r, core, 1, name);
    }
    for (k = 0; k < 5; k++) {
        for (i = 0; i < 4; i++) {
            snprintf(name, sizeof(name), "VPU_VALU_%s_OPS_%d", vpu_ops[k], i);
            t->vpu_ops[k * 4 + i] = tc(r, core, 1, name);
        }
    }
    t->vst = tc(r, core, 1, "VST_INSTRUCTION");
    for (i = 0; i < 3; i++) {
        snprintf(name, sizeof(name), "MXU_BUSY_%d", i);
        t->mxu_busy[i] = tc(r, core, 1, name);
        snprintf(name, sizeof(name), "XLU_BUSY_%d", i);
        t->xlu_busy[i] = tc(r, core, 1, name);
    }
    for (k = 0; k < 8; k++) {
        /* v7x has no integer matmul counters and XProf reads none there */
        int used =
            v6e || k == MM_LMR_BF16 || k == MM_VREG_F8 || k == MM_VREG_BF16 || k == MM_VREG_F32;
        for (u = 0; u < 2; u++) {
            snprintf(name, sizeof(name), "MATMUL_%s_MXU_%d", matmul_kinds[k], u);
            t->matmul[k][u] = used ? tc(r, core, 1, name) : r->p->zero;
        }
    }
    for (u = 0; u < 2; u++) {
        for (k = 0; k < 4; k++) {
            snprintf(name, sizeof(name), "%s_%d", xlu_kinds[k], u);
            t->xlu[u][k] = tc(r, core, 1, name);
        }
    }
    t->hbm_cycles = tc(r, core, 1, "CYCLES");
    for (i = 0; i < TPU_HBM_RD; i++)
        t->hbm_rd[i] = r->p->zero;
    for (i = 0; i < TPU_HBM_WR; i++)
        t->hbm_wr[i] = r->p->zero;
    n = 0;
    for (s = 0; s < (v6e ? 2 : 4); s++) {
        for (i = 0; i < 16; i++) {
            for (ps = 0; ps < 2; ps++) {
                int w = (n / 2) * 4 + ps * 2;
                if (v6e) {
                    t->hbm_rd[n] =
                        resolve(r, 1, "VF_CHIP_HBM_%d_HBMC_%d" HBMS "RD_RESP_PS%d", s, i, ps);
                    t->hbm_wr[w] =
                        resolve(r, 1, "VF_CHIP_HBM_%d_HBMC_%d" HBMS "WR_REQ_PS%d", s, i, ps);
                    t->hbm_wr[w + 1] = resolve(
                        r, 1, "VF_CHIP_HBM_%d_HBMC_%d" HBMS "PARTIAL_WRITE_REQ_PS%d", s, i, ps);
                } else {
                    t->hbm_rd[n] =
                        resolve(r, 1, "VF_CHIP_DIE%d_HBM_%d_SS_HBMC_%d" HBMS "RD_RESP_PS%d", core,
                                s, i, ps);
                    t->hbm_wr[w] = resolve(
                        r, 1, "VF_CHIP_DIE%d_HBM_%d_SS_HBMC_%d" HBMS "WR_REQ_PS%d", core, s, i, ps);
                    t->hbm_wr[w + 1] = resolve(
                        r, 1, "VF_CHIP_DIE%d_HBM_%d_SS_HBMC_%d" HBMS "PARTIAL_WRITE_REQ_PS%d", core,
                        s, i, ps);
                }
                n++;
            }
        }
    }
}

static uint32_t sc_counter(struct resolver *r, int die, int core, const char *unit, int tile,
                           const char *name)
{
    if (r->p->chip == TPU_CHIP_V6E) {
        if (tile < 0)
            return resolve(r, 1, "VF_CHIP_SC_%d_%s" SCS_ "%s", core, unit, name);
        return resolve(r, 1, "VF_CHIP_SC_%d_%s_%d" SCS_ "%s", core, unit, tile, name);
    }
    if (tile < 0)
        return resolve(r, 1, "VF_CHIP_DIE%d_SC_%d_%s" SCS_ "%s", die, core, unit, name);
    return resolve(r, 1, "VF_CHIP_DIE%d_SC_%d_%s_%d" SCS_ "%s", die, core, unit, tile, name);
}

static void plan_sc(struct resolver *r, int die, int core, struct tpu_sc_plan *s)
{
    int v6e = r->p->chip == TPU_CHIP_V6E, k, t;
    const char *scalar_unit = v6e ? "SCT" : "SCTD", *vector_unit = v6e ? "SCT" : "SCTC";

    s->node = v6e ? (uint32_t)core : (uint32_t)((die << 1) + core);
    s->tec_cycles = sc_counter(r, die, core, scalar_unit, 0, "CYCLES");
    for (k = 0; k < 4; k++)
        for (t = 0; t < TPU_TILES; t++)
            s->tec[k][t] = sc_counter(r, die, core, scalar_unit, t, tec_names[k]);
    for (k = 0; k < 8; k++)
        for (t = 0; t < TPU_TILES; t++)
            s->vec[k][t] = sc_counter(r, die, core, vector_unit, t, vec_names[k]);
    s->scs_cycles = sc_counter(r, die, core, "SCS", -1, "CYCLES");
    for (k = 0; k < 4; k++)
        s->scs[k] = sc_counter(r, die, core, "SCS", -1, scs_names[k]);
}

int tpu_plan_init(struct tpu_plan *p, enum tpu_chip chip, struct xp_err *err)
{
    struct resolver r = {p, NULL, err, 0};
    size_t i;
    int d, c;

    memset(p, 0, sizeof(*p));
    p->chip = chip;
    p->table = tpu_counter_table(chip, &p->ntable);
    p->zero = (uint32_t)p->ntable;
    pthread_once(&by_name_once, make_by_name);
    r.sorted = by_name[chip == TPU_CHIP_V7X ? 1 : 0];
    if (r.sorted == NULL || idmap_init(&p->by_id, (uint32_t)p->ntable) != 0)
        return xp_err_set(err, -ENOMEM, "out of memory for the TPU counter table");
    for (i = 0; i < p->ntable; i++)
        idmap_put(&p->by_id, (int64_t)p->table[i].id, (uint32_t)i);
    p->ntc = chip == TPU_CHIP_V6E ? 1 : 2;
    for (c = 0; c < p->ntc; c++)
        plan_tc(&r, c, &p->tc[c]);
    p->nsc = 0;
    for (d = 0; d < p->ntc; d++)
        for (c = 0; c < 2; c++)
            plan_sc(&r, d, c, &p->sc[p->nsc++]);
    if (chip == TPU_CHIP_V6E) {
        p->nici = 2;
        for (c = 0; c < 2; c++) {
            p->ici_rd[c] = resolve(&r, 1,
                                   "VF_CHIP_OCI_ICR_PERF_COUNTERS_FIFO_STATS_COUNTERS_"
                                   "UNPRIVILEGED_BN_RD_REQ_%d_INSERTION_COUNT",
                                   c);
            p->ici_wr[c] = resolve(&r, 1,
                                   "VF_CHIP_OCI_ICR_PERF_COUNTERS_FIFO_STATS_COUNTERS_"
                                   "UNPRIVILEGED_BN_WR_REQ_%d_INSERTION_COUNT",
                                   c);
        }
        p->ici_cycles = p->tc[0].hbm_cycles;
        p->kernel_cycles[0] = p->tc[0].hbm_cycles;
        p->nkernel_cycles = 1;
    } else {
        p->nici = 4;
        for (c = 0; c < 4; c++) {
            p->ici_rd[c] = resolve(&r, 1,
                                   "VF_CHIP_DIE1_OCI_ICR_%d_PERF_COUNTERS_FIFO_STATS_COUNTERS_"
                                   "UNPRIVILEGED_BN_RD_REQ_0_INSERTION_COUNT",
                                   c);
            p->ici_wr[c] = resolve(&r, 1,
                                   "VF_CHIP_DIE1_OCI_ICR_%d_PERF_COUNTERS_FIFO_STATS_COUNTERS_"
                                   "UNPRIVILEGED_BN_WR_REQ_0_INSERTION_COUNT",
                                   c);
        }
        p->ici_cycles = p->tc[0].cycles;
        p->kernel_cycles[0] = p->tc[0].cycles;
        p->kernel_cycles[1] = p->tc[1].cycles;
        p->nkernel_cycles = 2;
    }
    if (r.rc != 0)
        tpu_plan_free(p);
    return r.rc;
}

void tpu_plan_free(struct tpu_plan *p)
{
    idmap_free(&p->by_id);
}

/* Metric output. */
struct metrics {
    struct tpu_metric *out;
    int n;
};

static void add(struct metrics *m, uint64_t node, const char *name, double achieved, double peak,
                const char *unit)
{
    struct tpu_metric *t;

    if (m->n >= TPU_MAX_METRICS)
        return;
    t = &m->out[m->n++];
    t->node = node;
    snprintf(t->name, sizeof(t->name), "%s", name);
    t->achieved = achieved;
    t->peak = peak;
    t->unit = unit;
}

static const char k_instructions[] = "instructions", k_cycles[] = "cycles", k_bytes[] = "bytes",
                  k_percent[] = "percent";

static uint64_t sum(const uint64_t *v, const uint32_t *ix, int n)
{
    uint64_t s = 0;
    int i;

    for (i = 0; i < n; i++)
        s += v[ix[i]];
    return s;
}

/* MXU cycles of one unit over matmul kinds weighted by cycles per
 * instruction (XProf's kCpiMxu*). */
static uint64_t mxu_cycles(const struct tpu_tc_plan *t, const uint64_t *v, int unit,
                           const int *kinds, const uint64_t *cpi, int n)
{
    uint64_t s = 0;
    int i;

    for (i = 0; i < n; i++)
        s += cpi[i] * v[t->matmul[kinds[i]][unit]];
    return s;
}

static const int bf16_v6e[] = {MM_LMR_BF16, MM_VREG_F8, MM_VREG_BF16, MM_VREG_F32};
static const uint64_t bf16_v6e_cpi[] = {4, 8, 8, 4};
static const int i8_v6e[] = {MM_LMR_I8, MM_VREG_I8};
static const int i4_v6e[] = {MM_LMR_I4, MM_VREG_I4};
static const uint64_t int_cpi[] = {2, 8};
static const int bf16_v7x[] = {MM_LMR_BF16, MM_VREG_BF16, MM_VREG_F32};
static const uint64_t bf16_v7x_cpi[] = {4, 8, 4};
static const int f8_v7x[] = {MM_VREG_F8};
static const uint64_t f8_v7x_cpi[] = {8};

/* ComputeTpuGenericTcUnitUtilization */
static void tc_metrics(const struct tpu_plan *p, int core, const uint64_t *v, struct metrics *m)
{
    const struct tpu_tc_plan *t = &p->tc[core];
    int v6e = p->chip == TPU_CHIP_V6E, u;
    uint64_t cycles = v[t->cycles], valu, vpu, matpush;
    double cf = (double)cycles;
    uint64_t mxu[2];

    if (cycles == 0)
        return;
    if (!v6e) {
        add(m, core, "Clocks Skipped", (double)v[t->skipped[0]], cf, k_cycles);
        add(m, core, "Ext Throttle Clocks Skipped", (double)v[t->skipped[1]], cf, k_cycles);
        add(m, core, "LDIDT Droop Clocks Skipped", (double)v[t->skipped[2]], cf, k_cycles);
    }
    add(m, core, "Scalar Unit", (double)sum(v, t->scalar, 2), (double)(cycles * 2), k_instructions);
    valu = sum(v, t->valu, 4);
    add(m, core, "Vector ALUs", (double)valu, (double)(cycles * 4), k_instructions);
    vpu = sum(v, t->vpu_ops, 20);
    add(m, core, "VPU Utilization", (double)vpu, (double)(cycles * 4), k_instructions);
    add(m, core, "Vmem Stores", (double)v[t->vst], cf, k_instructions);
    add(m, core, "Vmem Loads", (double)sum(v, t->vld, 2), (double)(cycles * 2), k_instructions);
    add(m, core, "No MXU Busy", (double)v[t->mxu_busy[0]], cf, k_cycles);
    add(m, core, "1 MXU Busy", (double)v[t->mxu_busy[1]], cf, k_cycles);
    add(m, core, "2 MXU Busy", (double)v[t->mxu_busy[2]], cf, k_cycles);
    add(m, core, "Avg MXU Busy", 0.5 * (double)v[t->mxu_busy[1]] + (double)v[t->mxu_busy[2]], cf,
        k_cycles);
    if (v6e) {
        uint64_t bf[2], i8[2], i4[2];
        for (u = 0; u < 2; u++) {
            bf[u] = mxu_cycles(t, v, u, bf16_v6e, bf16_v6e_cpi, 4);
            i8[u] = mxu_cycles(t, v, u, i8_v6e, int_cpi, 2);
            i4[u] = mxu_cycles(t, v, u, i4_v6e, int_cpi, 2);
            mxu[u] = bf[u] + i8[u] + i4[u];
        }
        add(m, core, "MXU0", (double)mxu[0], cf, k_cycles);
        add(m, core, "MXU1", (double)mxu[1], cf, k_cycles);
        add(m, core, "MXU BF16", (double)(bf[0] + bf[1]), (double)(cycles * 2), k_cycles);
        add(m, core, "MXU I8", (double)(i8[0] + i8[1]), (double)(cycles * 2), k_cycles);
        add(m, core, "MXU I4", (double)(i4[0] + i4[1]), (double)(cycles * 2), k_cycles);
    } else {
        uint64_t bf[2], f8[2];
        for (u = 0; u < 2; u++) {
            bf[u] = mxu_cycles(t, v, u, bf16_v7x, bf16_v7x_cpi, 3);
            f8[u] = mxu_cycles(t, v, u, f8_v7x, f8_v7x_cpi, 1);
            mxu[u] = bf[u] + f8[u];
        }
        add(m, core, "MXU0", (double)mxu[0], cf, k_cycles);
        add(m, core, "MXU1", (double)mxu[1], cf, k_cycles);
        add(m, core, "MXU BF16", (double)(bf[0] + bf[1]), (double)(cycles * 2), k_cycles);
        add(m, core, "MXU E4M3 + E5M2", (double)(f8[0] + f8[1]), (double)(cycles * 2), k_cycles);
    }
    matpush = sum(v, t->matpush, 2);
    add(m, core, "MXU matpush", (double)matpush, (double)(cycles * 2), k_cycles);
    add(m, core, "No XLU Busy", (double)v[t->xlu_busy[0]], cf, k_cycles);
    add(m, core, "1 XLU Busy", (double)v[t->xlu_busy[1]], cf, k_cycles);
    add(m, core, "2 XLUs Busy", (double)v[t->xlu_busy[2]], cf, k_cycles);
    add(m, core, "Avg XLU Busy", 0.5 * (double)v[t->xlu_busy[1]] + (double)v[t->xlu_busy[2]], cf,
        k_cycles);
    add(m, core, "XLU0", (double)sum(v, t->xlu[0], 4), (double)(cycles / (v6e ? 4 : 1)),
        k_instructions);
    add(m, core, "XLU1", (double)sum(v, t->xlu[1], 4), (double)(cycles / (v6e ? 4 : 1)),
        k_instructions);
}

/* ComputeTpuGenericBandwidthUtilization */
static void hbm_metrics(const struct tpu_plan *p, int core, const uint64_t *v, struct metrics *m)
{
    const struct tpu_tc_plan *t = &p->tc[core];
    uint64_t rd = sum(v, t->hbm_rd, TPU_HBM_RD) * 32, wr = sum(v, t->hbm_wr, TPU_HBM_WR) * 32;
    uint64_t cycles = v[t->hbm_cycles];
    double gib = 1024.0 * 1024.0 * 1024.0, total;
    double peak_bw = p->chip == TPU_CHIP_V6E ? 1525.5 * gib : 3433.0 * gib;
    char name[40];

    if (cycles == 0)
        return;
    snprintf(name, sizeof(name), "HBM Rd+Wr - core %d", core);
    add(m, 0, name, (double)(rd + wr), peak_bw * ((double)cycles / tpu_chip_frequency_hz(p->chip)),
        k_bytes);
    total = (double)(rd + wr);
    if (total > 0) {
        add(m, core, "HBM Read Ratio", (double)rd, total, k_percent);
        add(m, core, "HBM Write Ratio", (double)wr, total, k_percent);
    }
}

/* ComputeTpuGenericIciBandwidthUtilization */
static void ici_metrics(const struct tpu_plan *p, const uint64_t *v, struct metrics *m)
{
    uint64_t rd = sum(v, p->ici_rd, p->nici) * 128, wr = sum(v, p->ici_wr, p->nici) * 128;
    uint64_t cycles = v[p->ici_cycles];
    double peak;

    if (cycles == 0)
        return;
    peak = 294947368421.0526 * ((double)cycles / 1e9);
    add(m, 0, "ICI (Read)", (double)rd, peak, k_bytes);
    add(m, 0, "ICI (Write)", (double)wr, peak, k_bytes);
}

static const char *const tec_metric[4] = {"TEC Scalar Issue", "TEC Scalar Issue: S0 slot",
                                          "TEC Scalar Issue: S1 slot",
                                          "TEC Scalar Issue: Smisc slot"};
static const char *const vec_metric_v6e[8] = {
    "SC Vector Issue",          "SC Vector Issue:V0 Slot",   "SC Vector Issue: V1 Slot",
    "SC Vector Issue: V2 Slot", "SC Vector Issue: VLD Slot", "SC Vector Issue: VST Slot",
    "SC Vector Issue:VEX Slot", "SC Vector Issue:VRES Slot"};
static const char *const vec_metric_v7x[8] = {
    "SC Vector Issue",           "SC Vector Issue: V0 Slot",  "SC Vector Issue: V1 Slot",
    "SC Vector Issue: V2 Slot",  "SC Vector Issue: VLD Slot", "SC Vector Issue: VST Slot",
    "SC Vector Issue: VEX Slot", "SC Vector Issue: VRES Slot"};
static const char *const scs_metric[4] = {"SCS Scalar Issue", "SCS: S0 Slot", "SCS: S1 Slot",
                                          "SCS: Smisc Slot"};

/* ComputeTpuv6eScUnitUtilization / ComputeTpuv7xScUnitUtilization */
static void sc_metrics(const struct tpu_plan *p, const struct tpu_sc_plan *s, const uint64_t *v,
                       struct metrics *m)
{
    const char *const *vec = p->chip == TPU_CHIP_V6E ? vec_metric_v6e : vec_metric_v7x;
    double peak = (double)(v[s->tec_cycles] * TPU_TILES), scs_peak = (double)v[s->scs_cycles];
    int k;

    for (k = 0; k < 4; k++)
        add(m, s->node, tec_metric[k], (double)sum(v, s->tec[k], TPU_TILES), peak, k_instructions);
    for (k = 0; k < 8; k++)
        add(m, s->node, vec[k], (double)sum(v, s->vec[k], TPU_TILES), peak, k_instructions);
    for (k = 0; k < 4; k++)
        add(m, s->node, scs_metric[k], (double)v[s->scs[k]], scs_peak, k_instructions);
}

int tpu_metrics(const struct tpu_plan *p, const uint64_t *v, struct tpu_metric *out)
{
    struct metrics m = {out, 0};
    int core, i;

    for (core = 0; core < p->ntc; core++) {
        tc_metrics(p, core, v, &m);
        hbm_metrics(p, core, v, &m);
        ici_metrics(p, v, &m); /* once per core, as XProf repeats it */
    }
    for (i = 0; i < p->nsc; i++)
        sc_metrics(p, &p->sc[i], v, &m);
    return m.n;
}
