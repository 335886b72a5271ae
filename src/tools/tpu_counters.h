/*
 * tpu_counters.h - XProf's TPU performance-counter tables and the
 * utilization metrics it computes from one counter sample
 * (xprof/convert/tpu_generic_utilization_utils.cc, driven by
 * xplane_to_utilization_viewer.cc), for the chips XProf has tables for:
 * TPU v6e ("TPU v6 Lite") and TPU v7x.
 *
 * The tables are data (tpu_counter_ids_<chip>.inc, each naming its source
 * file and commit in XProf). A plan resolves, once per chip, every counter
 * the metrics read to its index in the table; a sample is then a dense
 * array of values by table index (counters outside the table never count,
 * as XProf's metrics never ask for them), so one sample costs a few
 * thousand additions however many counter events it has.
 */
#ifndef XPROFS_TPU_COUNTERS_H
#define XPROFS_TPU_COUNTERS_H

#include <stddef.h>
#include <stdint.h>

#include "base/err.h"
#include "base/idmap.h"

enum tpu_chip {
    TPU_CHIP_NONE = -1,
    TPU_CHIP_V6E = 0, /* device_type_string "TPU v6 Lite" */
    TPU_CHIP_V7X = 1, /* device_type_string "TPU v7x" */
};

struct tpu_counter_name {
    const char *name; /* XProf's enum name, upper case */
    uint64_t id;      /* the counter id (performance_counter_id) */
};

/* The chip of an exact device_type_string (XProf's ShouldProcessDevice), or
 * TPU_CHIP_NONE. */
enum tpu_chip tpu_chip_of_device_type(const char *device_type, size_t len);

/* The chip of XProf's names_only device_type ("v6e", "v7x"), or NONE. */
enum tpu_chip tpu_chip_of_short_name(const char *name);

/* A chip's table, in XProf's enum order; *n gets its length. */
const struct tpu_counter_name *tpu_counter_table(enum tpu_chip chip, size_t *n);

/* The tensor-core frequency XProf assumes (Hz). */
double tpu_chip_frequency_hz(enum tpu_chip chip);

#define TPU_TILES 16
#define TPU_HBM_RD 128 /* read counters of one die */
#define TPU_HBM_WR 256 /* write counters of one die */

/* Indexes into the sample array; plan->zero is a slot that stays 0. */
struct tpu_tc_plan {
    uint32_t cycles;      /* v6e: TC COUNT_CYCLES; v7x: PWRMGR CYCLE_COUNT */
    uint32_t skipped[3];  /* v7x: clocks skipped, ext throttle, LDIDT droop */
    uint32_t scalar[2];   /* SCALAR_ALU_INSTRUCTION_0/1 */
    uint32_t valu[4];     /* VECTOR_ALU_INSTRUCTION_0..3 */
    uint32_t vpu_ops[20]; /* VPU_VALU_{FADD,FMUL,MISC,INT,FMAC}_OPS_0..3 */
    uint32_t vst;         /* VST_INSTRUCTION */
    uint32_t vld[2];      /* VLD_INSTRUCTION_0/1 */
    uint32_t mxu_busy[3]; /* MXU_BUSY_0..2 */
    /* MATMUL_<kind>_MXU_<unit>, kinds in enum tpu_matmul order */
    uint32_t matmul[8][2];
    uint32_t matpush[2];         /* MATPUSH_CYCLES_MXU_0/1 */
    uint32_t xlu_busy[3];        /* XLU_BUSY_0..2 */
    uint32_t xlu[2][4];          /* PACKED, ROTATE_PERMUTE, ROTATE_PERMUTE_SET, TRANSPOSE */
    uint32_t hbm_cycles;         /* TC COUNT_CYCLES of the core's die */
    uint32_t hbm_rd[TPU_HBM_RD]; /* zero-padded as XProf's arrays are */
    uint32_t hbm_wr[TPU_HBM_WR];
};

struct tpu_sc_plan {
    uint32_t node;              /* v6e: core; v7x: (die << 1) + core */
    uint32_t tec_cycles;        /* tile 0 CYCLES */
    uint32_t tec[4][TPU_TILES]; /* TEC_SCALAR_ISSUE, S0, S1, SMISC */
    uint32_t vec[8][TPU_TILES]; /* VECTOR_ISSUE, V0, V1, V2, VLD, VST, VEX, VRES (v6e order) */
    uint32_t scs_cycles;        /* SCS CYCLES */
    uint32_t scs[4];            /* SCALAR_ISSUE, S0, S1, SMISC */
};

struct tpu_plan {
    enum tpu_chip chip;
    const struct tpu_counter_name *table; /* the chip's table */
    size_t ntable;                        /* its length */
    uint32_t zero;                        /* = ntable: the slot that stays 0 */
    struct idmap by_id;                   /* counter id -> table index */
    int ntc;                              /* tensor cores: 1 (v6e) or 2 (v7x) */
    struct tpu_tc_plan tc[2];
    int nsc; /* SparseCores: 2 (v6e) or 4 (v7x) */
    struct tpu_sc_plan sc[4];
    uint32_t ici_rd[4], ici_wr[4]; /* ICI flit counters (v6e: 2 of each) */
    int nici;
    uint32_t ici_cycles;       /* v6e: TC CYCLES; v7x: die 0 CYCLE_COUNT */
    uint32_t kernel_cycles[2]; /* what kernel_utilization fills in */
    int nkernel_cycles;
};

/* Resolve every counter of chip's metrics. 0, or -ENOMEM / -EINVAL (a name
 * missing from the table: a bad table) with err set. */
int tpu_plan_init(struct tpu_plan *p, enum tpu_chip chip, struct xp_err *err);
void tpu_plan_free(struct tpu_plan *p);

/* The table index of counter id, or p->zero when the table lacks it. */
static inline uint32_t tpu_plan_index(const struct tpu_plan *p, uint64_t id)
{
    uint32_t i = idmap_get(&p->by_id, (int64_t)id);

    return i == IDMAP_NONE ? p->zero : i;
}

/* One row of XProf's utilization table. */
struct tpu_metric {
    uint64_t node;    /* node id */
    char name[40];    /* metric name */
    double achieved;  /* achieved */
    double peak;      /* peak */
    const char *unit; /* "instructions", "cycles", "bytes", "percent" */
};

#define TPU_MAX_METRICS 192

/* The metrics of one sample: v[i] is the value of table entry i (v has
 * p->ntable + 1 entries, v[p->zero] == 0), in XProf's order. Returns the
 * number written to out (at most TPU_MAX_METRICS). */
int tpu_metrics(const struct tpu_plan *p, const uint64_t *v, struct tpu_metric *out);

#endif
