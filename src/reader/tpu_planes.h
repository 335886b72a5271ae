/*
 * tpu_planes.h - what TPU plane and line names say (xla's tpu_xplane_utils
 * and xplane_schema names): which planes are TensorCores or SparseCores, and
 * which lines hold a core's steps and modules; and an event's device span.
 */
#ifndef XPROFS_TPU_PLANES_H
#define XPROFS_TPU_PLANES_H

#include <stdint.h>

#include "xspace.h"

/* What a plane named "/device:TPU:..." is. */
enum tpu_core_kind {
    TPU_NOT_A_CORE,  /* not a TPU core plane */
    TPU_TENSOR_CORE, /* "/device:TPU:<n>" (GetTensorCoreId; the number may be empty) */
    TPU_SPARSE_CORE, /* "/device:TPU:<n> SparseCore <m>" (GetSparseCoreId) */
};

/* The kind of the plane named name. */
enum tpu_core_kind tpu_plane_core(const char *name);

/* GetDeviceEventTimespan: the event's own device_offset_ps and
 * device_duration_ps stats when it has both (returns 1), else its own span
 * (returns 0). */
int tpu_device_span(const struct xp_plane *p, const struct xp_line *l, const struct xp_event *e,
                    int64_t *begin, int64_t *end);

/* 1 if name is a step line: "Steps" or "Sparse Core Steps". */
int tpu_is_step_line(const char *name);

/* 1 if name is a module line: "XLA Modules" or "Sparse Core Modules". */
int tpu_is_module_line(const char *name);

#endif
