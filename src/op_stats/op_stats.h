/*
 * op_stats.h - XProf's OpStats: the intermediate every statistics tool reads.
 *
 * One op_stats per host (ConvertXSpaceToOpStats after the per-host step
 * grouping) and one combined for all hosts of a run (CombineAllOpStats with
 * step intersection), each computed once per snapshot through
 * snapshot_op_stats(). The model follows XProf's protos
 * (plugin/xprof/protobuf/op_stats.proto, op_metrics.proto, steps_db.proto,
 * kernel_stats.proto) field for field where a tool reads the field:
 *
 *   device_db   device op metrics (GPU: one row per (program id, HLO op), + IDLE)
 *   host_db     host framework op metrics (+ IDLE)
 *   steps       the step database (per step, per core: time and breakdown)
 *   kernels     kernel stats db (top 1000 kernels by total duration)
 *   env         run environment, perf_env, diagnostics, counters
 *
 * HLO lookups (category, provenance, cost) go through op_stats_hlo.h, so the
 * HLO tools (hlo_stats, op_profile, roofline_model) read the same rows. All
 * strings are owned by the op_stats arena. Read-only once built.
 */
#ifndef XPROFS_OP_STATS_H
#define XPROFS_OP_STATS_H

#include <stddef.h>
#include <stdint.h>

#include "base/arena.h"
#include "base/err.h"
#include "session/session.h"

/* EventType of xprof/utils/event_span.h (values are priorities). */
enum step_event_type {
    EV_UNKNOWN_TIME = 0,
    EV_HOST_COMPUTE = 10,
    EV_HOST_PREPROCESS = 20,
    EV_HOST_POSTPROCESS = 30,
    EV_HOST_BATCH_FORMATION = 40,
    EV_HOST_RUNTIME = 50,
    EV_HOST_COMPILE = 60,
    EV_HOST_TO_HOST = 70,
    EV_HOST_TO_DEVICE = 80,
    EV_HOST_PREPARE = 90,
    EV_DEVICE_COLLECTIVES = 100,
    EV_HOST_WAIT_INPUT = 110,
    EV_DEVICE_TO_DEVICE = 120,
    EV_DEVICE_TO_HOST = 130,
    EV_DEVICE_COMPUTE_32 = 140,
    EV_DEVICE_COMPUTE_16 = 150,
    EV_DEVICE_WAIT_DEVICE = 160,
    EV_DEVICE_WAIT_HOST = 170,
};
#define EV_NTYPES 18 /* index = value / 10 */

enum hardware_type {
    HW_UNKNOWN = 0,  /* UNKNOWN_HARDWARE */
    HW_CPU_ONLY = 1, /* CPU_ONLY */
    HW_GPU = 2,      /* GPU */
    HW_TPU = 3,      /* TPU */
};

/* One entry of OpMetrics.memory_accessed_breakdown. */
struct op_mem_access {
    uint64_t memory_space; /* 1 = HBM */
    int op_type;           /* OperationType: OP_MEM_UNKNOWN, OP_MEM_READ, OP_MEM_WRITE */
    uint64_t bytes;        /* bytes accessed */
};

/* OpMetrics. */
struct op_metrics {
    uint64_t hlo_module_id;        /* program id; 0 for framework ops */
    const char *name;              /* HLO op or framework op name */
    const char *category;          /* HLO category or framework op type */
    const char *provenance;        /* framework op "name:type" of an HLO op */
    const char *deduplicated_name; /* HLO deduplicated name */
    const char *long_name;         /* HLO expression ("" when unknown) */
    int is_eager;                  /* eagerly executed */
    uint64_t occurrences;          /* executions */
    uint64_t time_ps;              /* total time */
    uint64_t self_time_ps;         /* time without children */
    uint64_t min_time_ps;          /* shortest execution */
    uint64_t flops;                /* device flops (integer) */
    uint64_t model_flops;          /* model flops (integer) */
    double flops_v2;               /* device flops (double) */
    double model_flops_v2;         /* model flops (double) */
    uint64_t bytes_accessed;       /* bytes accessed */
    uint32_t num_cores;            /* cores the op ran on */
    struct op_mem_access mem[8];   /* memory breakdown (by space and type) */
    uint32_t nmem;                 /* entries in mem */
    /* source_info (xprof's SourceInfo): from the HLO instruction's metadata
     * on GPU, the event metadata's source stats on TPU */
    const char *source_file;     /* file_name, "" when none */
    int32_t source_line;         /* line_number */
    const char *stack_frame;     /* stack_frame: "file:line:col\n" per frame, or "" */
    int core_type;               /* TpuCoreType: OP_CORE_UNKNOWN, _TENSOR, _SPARSE */
    int autotuned;               /* OpMetrics.autotuned */
    uint64_t dma_stall_ps;       /* dma_stall_ps */
    uint64_t normalized_time_ps; /* normalized_time_ps (DVFS; 0 when not traced) */
    double vdd_energy_j;         /* vdd_energy_j */
};

/* OpMetrics.MemoryAccessed.OperationType. */
enum { OP_MEM_UNKNOWN = 0, OP_MEM_READ = 1, OP_MEM_WRITE = 2 };

/* OpMetrics.TpuCoreType. */
enum { OP_CORE_UNKNOWN = 0, OP_CORE_TENSOR = 1, OP_CORE_SPARSE = 2 };

/* OpMetricsDb: rows in insertion order plus a (module id, name) index. */
struct op_metrics_db {
    struct op_metrics *rows;          /* in insertion order */
    uint32_t nrows;                   /* rows */
    uint32_t cap;                     /* allocated rows */
    uint32_t *index;                  /* open-addressing hash of row numbers (+1) */
    uint32_t index_cap;               /* slots (power of two) */
    uint64_t total_time_ps;           /* total time */
    uint64_t total_op_time_ps;        /* time in ops (self) */
    uint64_t precision_16_ps;         /* precision_stats.compute_16bit_ps */
    uint64_t precision_32_ps;         /* precision_stats.compute_32bit_ps */
    uint64_t host_infeed_enq_ps;      /* total_host_infeed_enq_duration_ps */
    uint64_t host_infeed_enq_diff_ps; /* total_host_infeed_enq_start_timestamp_ps_diff */
    uint64_t busy_time_ps;            /* TPU duty cycle: busy time (op_stats_tpu_duty.c) */
    uint64_t idle_time_ps;            /* TPU duty cycle: idle time in the active windows */
    uint64_t busy_time_hc_ps;         /* busy_time_high_confidence_ps (also drops opaque
                                         custom-calls); not summed across hosts */
    uint64_t idle_time_hc_ps;         /* idle_time_high_confidence_ps */
    int oom;                          /* sticky allocation failure */
};

/* One entry of core_id_to_details (TPU planes with a core_details stat). */
struct core_details {
    uint32_t core_id;        /* plane id; host * 1000 + that when combined */
    const char *hostname;    /* the XSpace's hostname, "localhost" if none */
    uint32_t device_ordinal; /* CoreDetails.device_ordinal */
};

/* One entry of a TPU step's GenericStepBreakdown.category_ps. */
struct step_category {
    const char *name; /* HLO category ("IDLE": the step time no op covers) */
    uint64_t ps;      /* self time of the category's ops in the step */
};

/* AllReduceInfo: an op with an all_reduce_unique_id on a TPU core, its
 * device span. */
struct all_reduce_info {
    uint64_t id;      /* all_reduce_unique_id */
    int64_t begin_ps; /* device_offset_ps, else the event's start */
    int64_t end_ps;   /* begin + device_duration_ps, else the event's end */
};

/* StepInfoResult of one core. */
struct step_core {
    uint32_t core_id;            /* 1 for a GPU host; TPU: plane id, SparseCores from
                                    1000000; host * 1000 + that when combined */
    uint32_t step_num;           /* step number */
    const char *step_name;       /* "" when none */
    uint64_t begin_ps;           /* step start */
    uint64_t duration_ps;        /* step time */
    uint64_t type_ps[EV_NTYPES]; /* GenericStepBreakdown.type_ps by EventType / 10 */
    uint32_t type_present;       /* bit i: type_ps has key i*10 (even when 0) */
    /* TPU TensorCores: category_ps, sorted by name (NULL / 0 otherwise) */
    const struct step_category *categories;
    uint32_t ncategories;
    /* TPU cores: the all-reduce ops of the step (all_reduce_db_per_core) */
    const struct all_reduce_info *all_reduce;
    uint32_t nall_reduce;
};

/* A sum over ops of what the roofline's Program record takes from each
 * (GenerateRooflineModelProgramRecord). */
struct op_sums {
    uint64_t flops;              /* sum of flops */
    uint64_t model_flops;        /* sum of model_flops */
    double flops_v2;             /* sum of flops_v2 */
    double model_flops_v2;       /* sum of model_flops_v2 */
    uint64_t bytes_accessed;     /* sum of bytes_accessed */
    uint64_t time_ps;            /* sum of time_ps */
    struct op_mem_access mem[8]; /* CombineMemoryAccessedBreakdown of theirs */
    uint32_t nmem;               /* entries in mem */
};

/* An op metrics db reduced to what XProf reads of the step db's per-step
 * databases (PerCoreStepInfo.hlo_metrics_db) and of their combination
 * (hlo_metrics_db_complete_steps_only): its total time and the sums of
 * its innermost ops (MayHaveInnerOps false), apart for infeed/outfeed
 * ones. A constant size per step, whatever the ops. */
struct op_db_sums {
    uint64_t total_time_ps; /* total_time_ps */
    struct op_sums ops;     /* innermost ops, infeed/outfeed ones excepted */
    struct op_sums feed;    /* innermost infeed/outfeed ops (IsInfeedOrOutfeed) */
};

/* PerCoreStepInfo. */
struct step_entry {
    uint32_t step_num;       /* step number (group id; 0.. after combining) */
    struct step_core *cores; /* step_info_per_core, sorted by core id */
    uint32_t ncores;         /* entries in cores */
    /* TPU: hlo_metrics_db, the step's TensorCore op dbs combined (in the
     * arena); NULL elsewhere (XProf's is empty there) */
    struct op_db_sums *hlo;
};

/* KernelReport with its aggregated value. */
struct kernel_report {
    const char *name; /* kernel name */
    uint32_t registers_per_thread;
    uint32_t static_shmem_bytes;
    uint32_t dynamic_shmem_bytes;
    uint32_t block_dim[3];
    uint32_t grid_dim[3];
    double occupancy_pct;
    int is_kernel_using_tensor_core;
    int is_op_tensor_core_eligible;
    const char *op_name; /* framework op ("" when none) */
    uint64_t occurrences;
    uint64_t total_duration_ns;
    uint64_t min_duration_ns;
    uint64_t max_duration_ns;
};

struct op_stats {
    struct arena arena;               /* every string */
    struct arena *plane_arenas;       /* strings made by GPU planes in parallel */
    uint32_t nplane_arenas;           /* entries in plane_arenas */
    struct op_metrics_db device_db;   /* device_op_metrics_db */
    struct op_metrics_db host_db;     /* host_op_metrics_db */
    struct step_entry *steps;         /* step_db.step_sequence */
    uint32_t nsteps;                  /* entries in steps */
    int empty_intersect;              /* step_db.empty_intersect */
    uint32_t num_steps_dropped;       /* step_db.num_steps_dropped */
    int use_incomplete_step;          /* step_db.use_incomplete_step */
    struct op_db_sums complete_steps; /* hlo_metrics_db_complete_steps_only (TPU; combined) */
    struct kernel_report *kernels;    /* kernel_stats_db, sorted, <= 1000 */
    uint32_t nkernels;                /* entries in kernels */
    /* run_environment */
    const char **hostnames; /* sorted, unique */
    uint32_t nhostnames;
    int32_t host_count;
    int32_t task_count;
    const char *device_type; /* "AMD GPU - gfx942", "GPU", "CPU" ... */
    int32_t device_core_count;
    enum hardware_type hardware_type;
    int has_sparse_core;               /* TPU: core_id_to_details has a SparseCore */
    struct core_details *core_details; /* core_id_to_details, by core id (in arena) */
    uint32_t ncore_details;            /* entries in core_details */
    int is_training;
    int32_t host_trace_level;
    /* perf_env */
    double peak_tflops; /* peak_tera_flops_per_second */
    /* GB/s: HBM, SRAM read, SRAM write (GPU: 3 entries); TPU also CMEM
     * read, CMEM write, VMEM read, VMEM write */
    double peak_bws[7];
    uint32_t npeak_bws;  /* 0 when unknown */
    int has_cmem;        /* TPU: a CMEM peak bandwidth > 0 */
    int has_merged_vmem; /* TPU: plane stat has_merged_vmem */
    int has_megacore;    /* TPU: plane stat has_megacore */
    double ridge_point;
    /* diagnostics */
    const char **errors;
    uint32_t nerrors;
    const char **warnings;
    uint32_t nwarnings;
    /* performance_counter_result */
    double mxu_utilization_percent;
    double hbm_utilization_percent;
};

/* The op_stats of host in snap, or of all hosts combined when host is NULL.
 * Built once per snapshot; the result stays owned by the snapshot. A run
 * with no xplane host gives -ENOENT. */
int snapshot_op_stats(struct snapshot *snap, const char *host, const struct op_stats **osp,
                      struct xp_err *err);

/* ---- the op metrics db (op_stats_db.c) ---------------------------------- */

void op_db_init(struct op_metrics_db *db);
void op_db_free(struct op_metrics_db *db);
/* The row of (module id, name), created (zeroed, name copied into arena) if
 * new; NULL when out of memory (db->oom set). */
struct op_metrics *op_db_row(struct op_metrics_db *db, struct arena *arena, uint64_t module_id,
                             const char *name, size_t name_len);
/* CombineMemoryAccessedBreakdown: src's memory breakdown added to dst's. */
void op_db_combine_mem(struct op_metrics *dst, const struct op_metrics *src);
/* The same over arrays: n entries of src added to dst's *ndst (at most 8). */
void op_mem_combine(struct op_mem_access *dst, uint32_t *ndst, const struct op_mem_access *src,
                    uint32_t n);
/* MayHaveInnerOps / IsInfeedOrOutfeed of a category of len bytes. */
int op_may_have_inner_ops(const char *category, size_t len);
int op_is_infeed_or_outfeed(const char *category, size_t len);
/* src's sums added to dst's (OpMetricsDbCombiner::Combine, as far as the
 * sums go). */
void op_sums_add(struct op_sums *dst, const struct op_sums *src);
void op_db_sums_add(struct op_db_sums *dst, const struct op_db_sums *src);
/* AddIdleOp: an IDLE row of total_time - total_op_time. */
void op_db_add_idle(struct op_metrics_db *db, struct arena *arena);
/* SetTotalTimePs: max(total_op_time, t). */
void op_db_set_total_time(struct op_metrics_db *db, uint64_t t);
/* OpMetricsDbCombiner::Combine(src) into dst. */
void op_db_combine(struct op_metrics_db *dst, struct arena *arena, const struct op_metrics_db *src,
                   int update_num_cores);
/* Rows sorted by (self time desc, name asc), at most max (0 = all). Returns
 * a malloc'd array of pointers and its length in *n; NULL when out of memory. */
const struct op_metrics **op_db_sorted(const struct op_metrics_db *db, uint32_t max, uint32_t *n);
/* 1 if the row is the IDLE row (category "IDLE"). */
int op_is_idle(const struct op_metrics *m);

/* CreateTfMetricsDbFromDeviceOpMetricsDb. */
void op_db_tf_from_device(struct op_metrics_db *tf, struct arena *arena,
                          const struct op_metrics_db *device, int with_idle);

/* ---- helpers shared by the tools ----------------------------------------- */

/* SafeDivide. */
double op_safe_div(double x, double y);
/* GigaToGibi / GibiToGiga (xla/tsl/profiler/utils/math_utils.h). */
double op_giga_to_gibi(double giga);
double op_gibi_to_giga(double gibi);
/* GetMemoryPeakBandwidth: peak_bws[i] in GB/s, else the HBM peak. */
double op_peak_bw(const struct op_stats *os, uint32_t i);

/* Roofline metrics of one row (SetRooflineMetrics). */
struct op_roofline {
    double measured_flop_rate;    /* GFLOP/s */
    double model_flop_rate;       /* GFLOP/s */
    double measured_memory_bw;    /* GiB/s */
    double operational_intensity; /* FLOP/byte */
    double hbm_bw;                /* GiB/s */
    double hbm_operational_intensity;
    double cmem_read_bw, cmem_write_bw, vmem_read_bw, vmem_write_bw; /* GiB/s */
    double cmem_read_oi, cmem_write_oi, vmem_read_oi, vmem_write_oi; /* FLOP/byte */
    const char *bound_by; /* "Compute", "HBM", "CMEM Read" ... "Shm/L1", "Unknown" */
    double bottleneck_operational_intensity;
};
void op_roofline(const struct op_metrics *m, const struct op_stats *os, struct op_roofline *r);

/* IsRematerialization: ".remat" in the expression's name part, or a framework
 * op under "/rematted_computation/". */
int op_is_rematerialization(const struct op_metrics *m);
/* IsOutsideCompilationOp: a framework op ending ":XlaSendToHost" or
 * ":XlaRecvFromHost", or a host-transfer send-done. */
int op_is_outside_compilation(const struct op_metrics *m);

/* SourceInfoFormattedText: "<div class='source-info-cell' title='STACK'>FILE:
 * LINE</div>" with STACK and FILE HTML-escaped, "" when the op has no file
 * or its line is -1. A malloc'd string, NULL when out of memory. */
char *op_source_info_html(const struct op_metrics *m);

/* ParseHardwareType(device_type). */
enum hardware_type op_parse_hardware_type(const char *device_type);
const char *op_hardware_type_name(enum hardware_type t);

/* Kernel stats grouped by op name (GroupKernelReportsByOpName). */
struct op_kernel_group {
    const char *op_name;
    int is_op_tensor_core_eligible;
    uint64_t total_duration_ns;
    uint64_t tensor_core_duration_ns;
};
/* Sorted by op_name; malloc'd; *n entries. NULL when out of memory. */
struct op_kernel_group *op_kernels_by_op(const struct op_stats *os, uint32_t *n);
const struct op_kernel_group *op_kernel_group_find(const struct op_kernel_group *g, uint32_t n,
                                                   const char *op_name);

/* Step diagnostics (PopulateStepDiagnostics) and overview diagnostics:
 * severity rows appended to a table by the caller; the strings. */
extern const char *const op_msg_no_step_marker;
extern const char *const op_msg_empty_intersect;
extern const char *const op_msg_incomplete_step;

#endif
