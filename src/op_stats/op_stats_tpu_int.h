/*
 * op_stats_tpu_int.h - what the TPU op metrics (op_stats_tpu.c) and the TPU
 * step db (op_stats_tpu_steps.c) share: stat ids and event helpers.
 */
#ifndef XPROFS_OP_STATS_TPU_INT_H
#define XPROFS_OP_STATS_TPU_INT_H

#include "op_stats_int.h"
#include "reader/tpu_planes.h"

/* The stats of an op event and its metadata, by plane stat id. */
struct tpu_ids {
    int64_t program_id, symbol_id, hlo_category, tf_op, flops, model_flops, bytes_accessed;
    int64_t deduplicated_name, min_duration_ps;
    int64_t all_reduce_unique_id; /* by name (XP_NO_STAT if absent) */
    int64_t source, source_stack, memory_breakdown, dma_stall, vdd_energy; /* by name */
    int64_t time_scale; /* "Time Scale Multiplier" */
};

/* Plane ids of SparseCores start here in the step db (kSparseCoreIndexStart). */
#define TPU_SPARSE_CORE_BASE 1000000u

/* The local_chip_id of the plane's `core_details` stat (a CoreDetails
 * proto): 1 and *chip when the stat is there and parses, else 0. */
int tpu_core_details(const struct xp_plane *p, uint32_t *chip);

/* 1 for the op lines of a TensorCore plane (XLA Ops, Framework Ops,
 * Sparse Core Ops). */
int tpu_is_op_line(const char *name);

/* A metadata stat by plane stat id: 1 and *st when present. */
int tpu_meta_stat(const struct xp_event_meta *md, int64_t id, struct xp_stat *st);

/* Unsigned value of an int or uint stat (IntOrUintValue). */
uint64_t tpu_stat_u64(const struct xp_stat *st);

/* A MemoryAccessBreakdown proto (memory_accessed = 1: operation_type = 1,
 * memory_space = 2, bytes_accessed = 3) appended to mem's *nmem entries (at
 * most 8); unparsable bytes leave none, as ParseFromString failing does. */
void tpu_mem_breakdown(const struct xp_stat *st, struct op_mem_access *mem, uint32_t *nmem);

/* The step db of the TensorCore planes into ctx->os (op_stats_tpu_steps.c). */
int op_stats_tpu_steps(struct host_ctx *ctx);

/* One TPU plane's step events alone (ConvertDeviceTraceXPlaneToStepEvents
 * of that plane, as the event time fraction analyzer reads them): the
 * groups with ops and a marker on the plane, ascending, each with the
 * plane's longest marker as its step time. */
struct tpu_plane_step {
    int64_t group;        /* step (group id) */
    uint64_t duration_ps; /* StepTime: the plane's longest marker of the group */
};

/* The step events of plane p of xs (TensorCore or SparseCore) into a
 * malloc'd array *steps of *n entries (NULL when none). groups: the
 * host's grouping. Returns 0 or -ENOMEM. (op_stats_tpu_steps.c) */
int tpu_plane_steps(const struct xspace *xs, const struct xp_groups *groups, uint32_t p,
                    struct tpu_plane_step **steps, uint32_t *n);

/* The group of event i of line li of plane p as the TPU step db reads it:
 * 1 and *group when it has one. (op_stats_tpu_steps.c) */
int tpu_event_group(const struct xspace *xs, const struct xp_groups *groups, uint32_t p,
                    uint32_t li, uint32_t i, int64_t *group);

/* Busy and idle time of the TPU planes into ctx->os->device_db
 * (op_stats_tpu_duty.c). */
int op_stats_tpu_duty(struct host_ctx *ctx);

#endif
