/*
 * hlo_cost_int.h - the pieces of the cost analysis (internal to hlo_cost*.c).
 *
 * hlo_cost.c      the visitor: visiting order, defaults, sums, the results
 * hlo_cost_props.c properties (XLA's HloCostAnalysis::Properties) and shapes
 * hlo_cost_ops.c  opcode tables and the handlers of single instructions
 * hlo_cost_visit.c the dispatch by opcode and the handlers that read called
 *                 computations (reduce, reduce-window, control flow)
 * hlo_cost_fusion.c fusions: utilizations, parameter reads, outputs
 */
#ifndef XPROFS_HLO_COST_INT_H
#define XPROFS_HLO_COST_INT_H

#include <stdint.h>

#include "hlo_cost.h"
#include "hlo_module.h"

enum kv_kind {
    KV_OPERAND_BYTES, /* bytes accessed of operand `operand` at subshape `sub` */
    KV_OPERAND_UTIL,  /* utilization of operand `operand` */
    KV_OUTPUT_BYTES,  /* output bytes at subshape `sub` */
};

struct kv {
    uint8_t kind;    /* enum kv_kind */
    int32_t operand; /* operand number, 0 for outputs */
    int32_t sub;     /* subshape ordinal, 0 for utilizations */
    float value;     /* property value */
};

/* HloCostAnalysis::Properties. */
struct props {
    float flops;       /* kFlopsKey */
    float transc;      /* kTranscendentalsKey */
    float bytes;       /* kBytesAccessedKey */
    float adjust;      /* device_flops_adjustment */
    float util;        /* kUtilizationKey (fused instructions) */
    float ir_size;     /* kIRSizeKey */
    struct kv *kv;     /* keyed properties */
    uint32_t nkv, cap; /* entries, allocated */
};

struct analysis {
    const struct hlo_graph *g;
    struct props *node;  /* per node */
    struct props *sum;   /* per computation */
    uint8_t *done;       /* per computation: 1 analysing, 2 analysed */
    uint8_t *state;      /* per node: 1 visiting, 2 visited */
    int8_t *elementwise; /* per computation: fused comp all elementwise (-1 unknown) */
    struct props cur;    /* current_properties_ */
    int oom;             /* sticky allocation failure */
    uint32_t depth;      /* computations being analysed, nested */
    uint32_t ew_depth;   /* fused computations being tested, nested */
};

/* Nesting limit of called computations (deeper modules are refused, as a
 * guard against hostile files; real ones nest a few levels). */
#define HC_MAX_DEPTH 256

/* One subshape in pre-order. */
struct sub {
    const struct hlo_shape *s; /* the subshape */
    int32_t ord;               /* its ordinal */
    int32_t depth;             /* index length */
    int32_t first;             /* index[0], -1 for the root */
    int32_t parent;            /* ordinal of the parent, -1 for the root */
};

struct subs {
    struct sub *v;
    uint32_t n, cap;
};

/* ---- properties and shapes (hlo_cost_props.c) ---- */

/* A keyed property, 0 when absent. */
float hc_kv_get(const struct props *p, int kind, int32_t operand, int32_t sub);
/* The slot of a key, created at 0; NULL (an->oom set) when out of memory. */
float *hc_kv_slot(struct analysis *an, struct props *p, int kind, int32_t operand, int32_t sub);
void hc_kv_set(struct analysis *an, struct props *p, int kind, int32_t operand, int32_t sub,
               float v);
void hc_props_clear(struct props *p);
/* dst = a copy of src (keyed properties included). */
void hc_props_copy(struct analysis *an, struct props *dst, const struct props *src);
/* Every non-zero key of src into dst: summed, or (max) the maximum. */
void hc_props_merge(struct analysis *an, struct props *dst, const struct props *src, int max);
/* The keys a caller copies from a subcomputation (flops, transcendentals,
 * adjustment) times factor, replacing or (accumulate) adding. */
void hc_copy_scaled(struct props *cur, const struct props *sub, int64_t factor, int accumulate);
int hc_is_array(const struct hlo_shape *s);
/* ShapeUtil::ByteSizeOf (8-byte tuple pointers), not gated on layouts. */
int64_t hc_byte_size(const struct hlo_shape *s);
/* GetShapeSize: 0 for a shape without a layout. */
int64_t hc_shape_size(const struct hlo_shape *s);
/* Every subshape of s in pre-order (malloc'd; empty with an->oom on OOM). */
struct subs hc_subshapes(struct analysis *an, const struct hlo_shape *s);
int hc_op_is(const struct hlo_node *nd, const char *op);
/* 1 if op is in the NULL-terminated list. */
int hc_in_list(const char *op, const char *const *list);
const struct hlo_shape *hc_operand_shape(const struct analysis *an, const struct hlo_node *nd,
                                         uint32_t i);
/* Output bytes, operand bytes (operands 0..nops) and their total at once. */
void hc_transfers(struct analysis *an, int64_t output, const int64_t *ops, uint32_t nops);
/* Dimension d of s, 0 when out of range. */
int64_t hc_dim_of(const struct hlo_shape *s, int64_t d);

/* ---- single instructions (hlo_cost_ops.c) ---- */

/* Flops per element of an elementwise op (sm_86 profile, default 3). */
int64_t hc_flops_per_element(const char *opcode, int32_t type);
/* No bytes accessed (parameters, constants ...); operands too when asked. */
void hc_zero_outputs(struct analysis *an, const struct hlo_node *nd, int operands);
void hc_handle_bitcast(struct analysis *an);
/* A transpose that only relabels the layout (ShapeUtil::TransposeIsBitcast). */
int hc_transpose_is_bitcast(const struct analysis *an, const struct hlo_node *nd);
/* HloCostAnalysis::GetDotFlops. */
int64_t hc_dot_flops(const struct hlo_shape *lhs, const struct hlo_shape *out,
                     const int64_t *contracting, uint32_t ncontracting);
/* HloCostAnalysis::GetConvolutionFlops. */
int64_t hc_conv_flops(const struct hlo_node *nd, const struct hlo_shape *lhs,
                      const struct hlo_shape *rhs, const struct hlo_shape *out);
/* The device-flops adjustment of flops for inputs of the given bit width. */
float hc_adjusted(float flops, int bits);
/* Handlers: 0, -1 (XLA's analysis fails) or -ENOMEM. */
int hc_handle_custom_call(struct analysis *an, const struct hlo_node *nd);
int hc_handle_ragged_dot(struct analysis *an, const struct hlo_node *nd);
int hc_handle_slicing(struct analysis *an, const struct hlo_node *nd);
int hc_handle_gather(struct analysis *an, const struct hlo_node *nd);
int hc_handle_scatter(struct analysis *an, const struct hlo_node *nd);
int hc_handle_collective(struct analysis *an, const struct hlo_node *nd);

/* ---- dispatch (hlo_cost_visit.c) ---- */

/* The opcode's handler over an->cur (already holding the defaults). */
int hc_visit(struct analysis *an, uint32_t node);

/* ---- fusions (hlo_cost_fusion.c) ---- */

int hc_is_elementwise(struct analysis *an, uint32_t node);
int hc_handle_fusion(struct analysis *an, uint32_t node);

/* ---- the visitor (hlo_cost.c) ---- */

/* The analysed sum of computation c (analysed on first use), or NULL with
 * *rc set. */
const struct props *hc_subcomputation(struct analysis *an, uint32_t c, int *rc);
/* HloInstruction::Accept with the running visitor: visit node and what it
 * reads that is not visited yet, adding to the sum of computation c; an->cur
 * is left empty when anything was visited. Returns 0, -1 (a cycle, or
 * nested too deep) or -ENOMEM. */
int hc_accept(struct analysis *an, uint32_t node, uint32_t c);

#endif
