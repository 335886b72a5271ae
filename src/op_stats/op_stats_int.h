/*
 * op_stats_int.h - the pieces op_stats is built from (internal to op_stats_*.c).
 *
 * Step events (xprof/utils/event_span.h) are kept per group id in an array
 * (group ids are dense: 0.. in XProf's numbering). Kernel reports are merged
 * in a hash map keyed by every field XProf keys them by.
 */
#ifndef XPROFS_OP_STATS_INT_H
#define XPROFS_OP_STATS_INT_H

#include <stdint.h>

#include "xplane/group.h"
#include "op_stats.h"
#include "out/out.h"
#include "op_stats_hlo.h"
#include "reader/xspace.h"

enum marker_kind {
    MK_DEVICE,        /* kDeviceStepMarker */
    MK_HOST_EXPLICIT, /* kExplicitHostStepMarker */
    MK_HOST_IMPLICIT, /* kImplicitHostStepMarker */
};

struct step_marker {
    int64_t begin; /* absolute ps */
    int64_t end;   /* absolute ps */
    uint8_t kind;  /* enum marker_kind */
};

struct step_event {
    int64_t begin; /* absolute ps */
    int64_t end;   /* absolute ps */
    uint8_t type;  /* EventType / 10 */
};

/* StepDetails. */
struct step_details {
    struct step_marker *markers; /* markers_ */
    uint32_t nmarkers, markers_cap;
    struct step_event *events; /* events_ */
    uint32_t nevents, events_cap;
    uint64_t xfer_occurrence[3]; /* device memory transfers: H2D, D2H, D2D */
    double xfer_time_us[3];
    uint64_t xfer_bytes[3];
    const char *step_name; /* step_name_ (arena), or NULL */
    int present;           /* the step exists in the map */
};

struct step_events {
    struct step_details *by_group; /* indexed by group id */
    uint32_t n;                    /* slots */
};

int step_events_init(struct step_events *se, uint32_t n);
void step_events_free(struct step_events *se);
int step_add_marker(struct step_details *d, int64_t begin, int64_t end, uint8_t kind);
int step_add_event(struct step_details *d, int64_t begin, int64_t end, uint8_t type);
/* Room for more markers and events in d (one allocation for many combines). */
int step_details_reserve(struct step_details *d, uint32_t more_markers, uint32_t more_events);
/* Free d's markers and events (the step stays present, with none). */
void step_details_release(struct step_details *d);
/* StepDetails::Combine(src) into dst. */
int step_details_combine(struct step_details *dst, const struct step_details *src);
/* UnionCombineStepEvents(src, dst). */
int step_events_union(struct step_events *dst, const struct step_events *src);

/* MayFixTpuStepAnalysis: when no device op is an infeed, each TensorCore
 * step's IDLE time is split, as the host's input time in that step (of
 * host_steps, by step number) is to the step's TensorCore idle time, into
 * "infeed" and IDLE (op_stats_input_tpu.c). Returns 0 or -ENOMEM. */
int ip_tpu_fix_steps(struct op_stats *os, const struct step_events *host_steps);

/* Order of step_category entries: by name (op_stats_tpu_steps.c). */
int tpu_step_category_cmp(const void *a, const void *b, void *ctx);

/* Kernel report key + value, merged (InsertOrUpdateKernelReport). */
struct kernel_map {
    struct kernel_report *v; /* entries; strings point into `arena` */
    uint32_t n, cap;
    uint32_t *index; /* open-addressing slots (+1) */
    uint32_t index_cap;
};

int kernel_map_add(struct kernel_map *km, struct arena *arena, const struct kernel_report *k);
void kernel_map_free(struct kernel_map *km);
/* CopyTopKDurationKernelReportsToDb into os->kernels (copies). */
int kernel_map_to_db(const struct kernel_map *km, struct op_stats *os);
/* Sort os->kernels by XProf's order and keep 1000 (multi-host merge). */
void kernels_sort_top(struct op_stats *os);

/* Everything one host's conversion needs. */
struct host_ctx {
    const struct xspace *xs;
    const struct xp_groups *groups;
    const struct hlo_map *hlo;
    struct op_stats *os;
    struct step_events steps;  /* combined step events of the device planes */
    struct kernel_map kernels; /* kernel reports */
};

/* What one GPU plane gives, before it is merged into the host's op_stats. */
struct gpu_plane_out {
    struct arena *arena;           /* the plane's strings (kept by the op_stats) */
    struct op_metrics_db db;       /* device op metrics of the plane */
    struct step_events steps;      /* its step events */
    int any_event;                 /* 1: steps goes into the union */
    struct kernel_report *kernels; /* kernel reports, first seen first */
    uint32_t nkernels;             /* entries in kernels */
};

/* One GPU plane: device op metrics, step events, kernel reports into out
 * (out->db initialised, out->steps zeroed, out->arena set). Reads ctx only,
 * so planes can run in parallel. */
int op_stats_gpu_plane(const struct host_ctx *ctx, uint32_t plane, struct gpu_plane_out *out);

/* Merge a plane's results into ctx (in plane order): kernel reports and the
 * device db. Its step events (out->steps when out->any_event) are united
 * into ctx->steps by the caller, in plane order per group. */
int gpu_plane_merge(struct host_ctx *ctx, struct gpu_plane_out *out);
void gpu_plane_out_free(struct gpu_plane_out *out);

/* The host plane: host op metrics db, and host step events for hosts
 * without devices. */
int op_stats_host_plane(struct host_ctx *ctx, uint32_t plane, int has_device,
                        struct step_events *host_steps);

/* The same in three phases, so that lines run in parallel (with each other
 * and with GPU planes): host_plane_begin (serial), host_plane_line for every
 * line (any thread, any order), host_plane_end (serial: the line results
 * merged in line order, then host step events). host_plane_free always. */
struct host_plane_work;
int host_plane_begin(struct host_ctx *ctx, uint32_t plane, struct host_plane_work **wp);
int host_plane_line(struct host_plane_work *w, uint32_t line);
int host_plane_end(struct host_plane_work *w, int has_device, struct step_events *host_steps);
void host_plane_free(struct host_plane_work *w);

/* Step events -> step db (ToNonOverlapped, ConvertStepEventsToStepDb) and
 * precision stats into os. Consumes the markers and events of se (each
 * step's arrays are released once its breakdown is known). */
int op_stats_step_db(struct op_stats *os, struct step_events *se, int has_device);

/* TPU TensorCore planes: their device op metrics combined into ctx->os. */
int op_stats_tpu_planes(struct host_ctx *ctx);

/* Run environment, perf env, diagnostics, counters. */
int op_stats_env(struct host_ctx *ctx);

/* Append a copy of s (in os's arena) to the list *v of *n strings, unless
 * dedup and it is there already. 0 or -ENOMEM. (op_stats_env.c) */
int op_stats_add_string(struct op_stats *os, const char ***v, uint32_t *n, const char *s,
                        int dedup);

/* Combine per-host op stats into one (CombineAllOpStats). */
int op_stats_combine(struct op_stats *dst, const struct op_stats *const *src, uint32_t n);

void op_stats_free(struct op_stats *os);

/* One host's op_stats as bytes (op_stats_persist.c), for the persistent
 * cache; errors are o's (sticky). */
void op_stats_save(const struct op_stats *os, struct out *o);
/* The op_stats op_stats_save wrote to p[0..n) (free with op_stats_free):
 * 0, -EINVAL when the bytes are not such (another layout, cut short), or
 * -ENOMEM. */
int op_stats_load(const char *p, size_t n, struct op_stats **osp);

#endif
