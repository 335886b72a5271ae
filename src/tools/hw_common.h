/*
 * hw_common.h - what XProf's hardware tools (perf_counters.json,
 * utilization_viewer.json, kernel_utilization.json) share: the one host a
 * single-XSpace tool takes, a TPU plane's identity from its stats, and the
 * DataTable cells they stream (rows are written as they are made, never
 * held, so 10^7 counter samples cost no memory).
 */
#ifndef XPROFS_HW_COMMON_H
#define XPROFS_HW_COMMON_H

#include "tool.h"
#include "tpu_counters.h"

/* Rows one hardware table may have: past this the tool fails with a
 * reason (about 250 MB of JSON) instead of writing without bound. */
#define HW_MAX_ROWS 2000000

/* The host of a tool that takes one XSpace (XProf: "<what> expects only 1
 * XSpace path but gets N"): ctx->host, ?host=, or the run's only host. */
int hw_one_host(struct tool_ctx *ctx, const char *what, const char **hostp);

/* A TPU plane's device_id and device_type_string plane stats (the last of
 * each wins, as XProf's ForEachStat assigns); -1 / "" when absent. */
struct hw_tpu_identity {
    int64_t device_id;
    const char *device_type; /* not NUL-terminated */
    size_t device_type_len;
    enum tpu_chip chip; /* TPU_CHIP_NONE for a chip XProf has no table for */
};
void hw_tpu_identity(const struct xp_plane *pl, struct hw_tpu_identity *id);

/* 1 if the plane is a TensorCore plane ("/device:TPU:<digits>"). */
int hw_is_tensor_core(const char *plane_name);

/* DataTable cells, as nlohmann prints them. */
void hw_num_cell(struct out *o, double v, int first);
void hw_str_cell(struct out *o, const char *s, size_t n, int first);

#endif
