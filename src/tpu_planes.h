/*
 * tpu_planes.h - what TPU plane and line names say (xla's tpu_xplane_utils
 * and xplane_schema names): which planes are TensorCores or SparseCores, and
 * which lines hold a core's steps and modules.
 */
#ifndef XPROFS_TPU_PLANES_H
#define XPROFS_TPU_PLANES_H

/* What a plane named "/device:TPU:..." is. */
enum tpu_core_kind {
    TPU_NOT_A_CORE,  /* not a TPU core plane */
    TPU_TENSOR_CORE, /* "/device:TPU:<n>" (GetTensorCoreId; the number may be empty) */
    TPU_SPARSE_CORE, /* "/device:TPU:<n> SparseCore <m>" (GetSparseCoreId) */
};

/* The kind of the plane named name. */
enum tpu_core_kind tpu_plane_core(const char *name);

/* 1 if name is a step line: "Steps" or "Sparse Core Steps". */
int tpu_is_step_line(const char *name);

/* 1 if name is a module line: "XLA Modules" or "Sparse Core Modules". */
int tpu_is_module_line(const char *name);

#endif
