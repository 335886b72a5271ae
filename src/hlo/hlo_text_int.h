/*
 * hlo_text_int.h - what the HLO text printer's files share (hlo_text.h is
 * the interface): wire helpers that walk repeated fields in place, the
 * fields of one instruction read in a single pass, and the printers of
 * values, shapes, literals, shardings and replica groups.
 *
 * The printer is split by job: hlo_text.c (an instruction: name, shape,
 * opcode, operands, the attributes every instruction may have),
 * hlo_text_attrs.c (the attributes of each opcode), hlo_text_values.c
 * (types, shapes, layouts, numbers, literals, escapes, wire helpers) and
 * hlo_text_sharding.c (HloSharding and collective device lists).
 *
 * Every printer takes the writer's limit: loops stop once out_len passes it.
 */
#ifndef XPROFS_HLO_TEXT_INT_H
#define XPROFS_HLO_TEXT_INT_H

#include <stddef.h>
#include <stdint.h>

#include "base/wire.h"
#include "hlo_text.h"

/* ---- wire helpers (hlo_text_values.c) ---- */

/* The values of a repeated varint field of one message, packed or not, in
 * order. Bad bytes end the walk. */
struct txt_rep {
    struct wire msg;    /* the rest of the message */
    struct wire packed; /* the rest of the packed run being read */
    uint32_t field;     /* the field number */
};

void txt_rep_init(struct txt_rep *r, struct wire msg, uint32_t field);
/* The next value into *v: 1, or 0 at the end. */
int txt_rep_next(struct txt_rep *r, uint64_t *v);
/* The number of values of the field (a walk of its own). */
uint64_t txt_rep_count(struct wire msg, uint32_t field);

/* The next length-delimited field `field` of *cur into *sub: 1, or 0 at the
 * end (or on bad bytes). *cur moves past it. */
int txt_msg_next(struct wire *cur, uint32_t field, struct wire *sub);
/* The last varint field `field` of msg into *v (unchanged when absent):
 * 1 when found. */
int txt_varint(struct wire msg, uint32_t field, int64_t *v);
/* The last length-delimited field `field` of msg into *sub: 1 when found. */
int txt_msg(struct wire msg, uint32_t field, struct wire *sub);
/* Whether the view holds a field (p is set when it was found). */
static inline int txt_has(struct wire w)
{
    return w.p != NULL;
}

/* ---- writers (hlo_text_values.c) ---- */

/* Mark o as out of memory (sticky, as its own failed allocations): a
 * printer's scratch allocation failed. */
static inline void txt_oom(struct out *o)
{
    o->oom = 1;
}

/* Whether o holds more than limit bytes (or failed): printers stop. */
static inline int txt_full(const struct out *o, size_t limit)
{
    return out_len(o) > limit || out_failed(o);
}

/* The values of a repeated varint field, as signed decimals joined by sep. */
void txt_i64s(struct out *o, struct wire msg, uint32_t field, const char *sep, size_t limit);
/* "{a,b,c}" of a repeated varint field. */
void txt_braced_i64s(struct out *o, struct wire msg, uint32_t field, size_t limit);
/* s[0..n) as absl::CEscape writes it. */
void txt_cescape(struct out *o, const uint8_t *s, size_t n, size_t limit);
/* At most limit bytes of s[0..n). */
void txt_bytes(struct out *o, const void *s, size_t n, size_t limit);
/* A name as XLA keeps it (NameUniquer::GetSanitizedName), after "%". */
void txt_name(struct out *o, const char *s, size_t n, size_t limit);
/* A double as absl::StrCat prints it (six significant digits). */
void txt_g6(struct out *o, double v);

/* ---- values (hlo_text_values.c) ---- */

/* primitive_util::LowercasePrimitiveTypeName ("invalid" when unknown). */
const char *txt_type_name(int64_t type);
/* Whether a PrimitiveType is an array element type (primitive_util). */
int txt_is_array(int64_t type);
/* Shape s, with its layout when with_layout. */
void txt_shape(struct out *o, const struct hlo_shape *s, int with_layout, size_t limit);
/* A ShapeProto's bytes as a shape with layout ("" when unreadable). */
void txt_shape_proto(struct out *o, struct wire w, size_t limit);
/* The leaves of a (tuple) shape, at least 1 (HloSharding::RequiredLeaves). */
uint64_t txt_leaf_count(const struct hlo_shape *s);
/* The elements of array shape s into *count: 0, or -1 (*count 0) when a
 * dimension is negative or the product passes max or overflows (a hostile
 * shape such as [4, 2^62] must not wrap to a small count). */
int txt_elements(const struct hlo_shape *s, uint64_t max, uint64_t *count);
/* prefix, then a LiteralProto without its shape on one line (constant(...)),
 * as LiteralBase::PrintWithoutShapeOneline; with_shape also prints the shape
 * with layout first (PrintWithLayoutOneline). Returns 0, or -1 when the
 * literal cannot be printed (nothing written, not even prefix). */
int txt_literal(struct out *o, const char *prefix, struct wire lit, int with_shape, size_t limit);

/* txt_literal for literals of at most max_elements elements (txt_literal:
 * 65536). */
int txt_literal_max(struct out *o, const char *prefix, struct wire lit, int with_shape,
                    uint64_t max_elements, size_t limit);

/* A literal of any shape, tuples included ("( {1, 2}, 3 )"), as
 * LiteralBase::PrintWithoutShapeOneline, each array of at most max_elements
 * elements. Returns 0, or -1 with nothing written. */
int txt_tuple_literal(struct out *o, struct wire lit, uint64_t max_elements, size_t limit);

/* ---- shardings and device lists (hlo_text_sharding.c) ---- */

/* prefix, then an OpSharding as HloSharding::ToString (without metadata),
 * normalized to a tuple over shape (may be NULL) as XLA does. Returns 0, or
 * -1 when it is not a valid sharding (nothing written, not even prefix). */
int txt_sharding(struct out *o, const char *prefix, struct wire sharding,
                 const struct hlo_shape *shape, size_t limit);

struct txt_instr;
/* The collective device list of a collective (replica_groups=...): iota,
 * mesh axes or explicit groups, "{}" when none. */
void txt_replica_groups(struct out *o, const struct txt_instr *in, size_t limit);

/* ---- one instruction ---- */

/* The fields of one HloInstructionProto, read in one pass (the last of a
 * singular field wins); sub-messages and strings are views into its bytes,
 * p NULL when absent. Repeated fields are walked in `all` when printed. */
struct txt_instr {
    const struct hlo_graph *g;       /* its graph */
    const struct hlo_text_src *src;  /* every node's bytes */
    uint32_t node;                   /* its node */
    const struct hlo_node *nd;       /* g->nodes[node] */
    struct wire all;                 /* the whole message */
    struct wire literal;             /* 8 */
    struct wire window;              /* 15 */
    struct wire conv_dims;           /* 16 */
    struct wire padding;             /* 21 */
    struct wire outfeed_shape;       /* 29 */
    struct wire dot_dims;            /* 30 */
    struct wire gather_dims;         /* 33 */
    struct wire sharding;            /* 40 */
    struct wire scatter_dims;        /* 48 */
    struct wire precision;           /* 51 */
    struct wire triangular;          /* 59 */
    struct wire param_repl;          /* 61 */
    struct wire cholesky;            /* 62 */
    struct wire cmp_dir;             /* 63 */
    struct wire frontend;            /* 68 */
    struct wire cmp_type;            /* 72 */
    struct wire async_thread;        /* 79 */
    struct wire statistics;          /* 82 */
    struct wire device_list;         /* 87 */
    struct wire ragged_dims;         /* 90 */
    struct wire accuracy;            /* 91 */
    struct wire iota_list;           /* 92 */
    struct wire mesh_list;           /* 93 */
    struct wire target;              /* 28 */
    int64_t channel_id;              /* 26 */
    int64_t all_reduce_id;           /* 45 */
    int64_t exponent_bits;           /* 18 */
    int64_t mantissa_bits;           /* 19 */
    int64_t distribution;            /* 23 */
    int64_t feature_index;           /* 25 */
    int64_t fft_type;                /* 31 */
    int64_t feature_groups;          /* 50 */
    int64_t batch_groups;            /* 58 */
    int64_t delta;                   /* 66 */
    int64_t rng_algorithm;           /* 70 */
    int64_t padding_type;            /* 75 */
    int64_t schedule;                /* 76 */
    int64_t api_version;             /* 77 */
    int64_t prefetch_index;          /* 80 */
    int64_t k;                       /* 81 */
    uint32_t epsilon;                /* 24, the float's bits */
    unsigned has_epsilon : 1;        /* 24 given */
    unsigned has_prefetch_index : 1; /* 80 given */
    unsigned is_host_transfer : 1;   /* 47 */
    unsigned constrain_layout : 1;   /* 56 */
    unsigned is_stable : 1;          /* 60 */
    unsigned side_effect : 1;        /* 65 */
    unsigned sorted_indices : 1;     /* 67 */
    unsigned unique_indices : 1;     /* 69 */
    unsigned use_global_ids : 1;     /* 71 */
    unsigned cross_program : 1;      /* 73 */
    unsigned largest : 1;            /* 85 */
    unsigned is_composite : 1;       /* 89 */
};

/* What an opcode prints (its HloInstruction subclass). */
enum txt_kind {
    K_NONE,
    K_ALL_GATHER,
    K_ALL_REDUCE,
    K_ALL_TO_ALL,
    K_ASYNC_START,
    K_ASYNC_OTHER,
    K_BATCH_NORM,
    K_CALL,
    K_CHOLESKY,
    K_COLLECTIVE,
    K_COMPARE,
    K_CONDITIONAL,
    K_CONSTANT,
    K_CONV,
    K_COPY_START,
    K_CUSTOM_CALL,
    K_DIM0,
    K_DIMS,
    K_DIM_SIZE,
    K_DOT,
    K_DYNAMIC_SLICE,
    K_FFT,
    K_FUSION,
    K_GATHER,
    K_GTE,
    K_IOTA,
    K_MAP,
    K_OUTFEED,
    K_PAD,
    K_PARAMETER,
    K_PERMUTE,
    K_RAGGED_DOT,
    K_REDUCE,
    K_REDUCE_PRECISION,
    K_REDUCE_SCATTER,
    K_REDUCE_WINDOW,
    K_RESHAPE,
    K_RNG,
    K_RNG_BIT_GENERATOR,
    K_RNG_STATE,
    K_SCALED_DOT,
    K_SCAN,
    K_SCATTER,
    K_SELECT_AND_SCATTER,
    K_SEND_RECV,
    K_SLICE,
    K_SORT,
    K_TOPK,
    K_TRIANGULAR_SOLVE,
    K_UNARY_ACCURACY,
    K_WHILE,
};

/* The kind of an opcode string (K_COMPARE for the old "less-than" ...). */
enum txt_kind txt_opcode_kind(const char *opcode);

/* Read node's fields (its bytes in src). 0, or -1 when it has none. */
int txt_instr_read(struct txt_instr *in, const struct hlo_graph *g, const struct hlo_text_src *src,
                   uint32_t node);
/* The opcode's own attributes (PrintExtraAttributesImpl), each after ", ".
 * depth counts async wrappers (hlo_text.c prints the wrapped instruction). */
void txt_opcode_attrs(struct out *o, const struct txt_instr *in, size_t limit, int depth);
/* Every attribute of in (HloInstruction::PrintExtraAttributes). */
void txt_extra_attrs(struct out *o, const struct txt_instr *in, size_t limit, int depth);
/* The start of the async chain node belongs to, or UINT32_MAX. */
uint32_t txt_async_start(const struct hlo_graph *g, uint32_t node);
/* The root of the computation an async-start wraps when it can expand into
 * that one instruction (HloComputation::CanExpandIntoSingleInstruction),
 * else UINT32_MAX. */
uint32_t txt_async_wrapped(const struct hlo_graph *g, uint32_t start);

#endif
