/*
 * hlo_module_int.h - what the HloModuleProto reader's files share: the
 * growable id lists, the field readers, the per-instruction ids and read
 * status, and the module reader itself. Not for other modules: see
 * hlo_module.h.
 *
 * The reader is split by job: hlo_read_util.c (repeated and varint fields,
 * arena copies), hlo_shape.c (ShapeProto and the shape helpers),
 * hlo_instr_attrs.c (windows, dimension numbers, replica groups, metadata),
 * hlo_instr.c (one HloInstructionProto), hlo_module.c (the module: two passes
 * and the id linking), hlo_module_text.c (stack frames and instruction texts,
 * printed by hlo_text*.c) and hlo_host_modules.c (the modules of a host).
 *
 * Field readers return 0, -1 (bad framing), -2 (bad packed values) or
 * -ENOMEM unless they say otherwise.
 */
#ifndef XPROFS_HLO_MODULE_INT_H
#define XPROFS_HLO_MODULE_INT_H

#include <stddef.h>
#include <stdint.h>

#include "base/arena.h"
#include "hlo_module.h"
#include "hlo_text.h"
#include "base/wire.h"

/* A growable int64 list used while one message is read. */
struct i64vec {
    int64_t *v;   /* values */
    uint32_t n;   /* entries */
    uint32_t cap; /* allocated entries */
};

/* Ids read with an instruction, resolved once the computation is known. */
struct hlo_raw_ids {
    int64_t id;             /* the instruction's id */
    struct i64vec operands; /* operand ids */
    struct i64vec called;   /* called computation ids */
    int32_t stack_frame_id; /* metadata.stack_frame_id, 0 = none */
};

/* Whether the fields only the cost model reads were readable. */
struct hlo_read_status {
    int graph_bad;      /* some were not */
    int window_corrupt; /* a window was not (op_stats reads windows too) */
};

/* ---- hlo_read_util.c ---- */

/* A repeated int64 field, packed (LEN) or not (VARINT), appended to x. */
int hlo_read_i64s(struct wire *w, int type, struct i64vec *x);
/* A copy of x in the arena (NULL for an empty list); *ok cleared on OOM. */
const int64_t *hlo_vec_keep(struct arena *a, const struct i64vec *x, int *ok);
/* A varint field into *out; another wire type is skipped. 0 or -1. */
int hlo_read_varint(struct wire *w, int type, int64_t *out);
/* A NUL-terminated arena copy of the bytes of s, NULL on OOM. */
const char *hlo_keep_str(struct arena *a, struct wire s);

/* ---- hlo_shape.c ---- */

/* ShapeProto into s (tuple elements allocated in the arena); depth counts
 * the enclosing tuples. */
int hlo_read_shape(struct arena *a, struct wire w, struct hlo_shape *s, int depth);

/* ---- hlo_instr_attrs.c ---- */

/* Window into nd->window, noting window / base dilation. */
int hlo_read_window(struct arena *a, struct wire w, struct hlo_node *nd);
/* ConvolutionDimensionNumbers into nd. */
int hlo_read_conv_dims(struct arena *a, struct wire w, struct hlo_node *nd);
/* DotDimensionNumbers: the lhs contracting dimensions into nd. */
int hlo_read_dot_dims(struct arena *a, struct wire w, struct hlo_node *nd);
/* RaggedDotDimensionNumbers into nd. */
int hlo_read_ragged_dims(struct arena *a, struct wire w, struct hlo_node *nd);
/* Size of one ReplicaGroup (count of replica_ids). */
int hlo_group_size(struct wire w, int64_t *size);
/* CollectiveDeviceListProto: the largest group into nd. */
int hlo_read_device_list(struct wire w, struct hlo_node *nd);
/* OpMetadata into nd, its stack_frame_id into *frame_id. Returns 0, -1 (bad
 * wire data) or -ENOMEM. */
int hlo_read_metadata(struct arena *a, struct wire w, struct hlo_node *nd, int32_t *frame_id);

/* ---- hlo_instr.c ---- */

/* One HloInstructionProto into nd and its ids; bad bytes inside fields only
 * the cost model reads are noted in st. Returns 0, -1 (corrupt) or -ENOMEM. */
int hlo_read_instr(struct arena *a, struct wire w, struct hlo_node *nd, struct hlo_raw_ids *ids,
                   struct hlo_read_status *st);

/* ---- hlo_module_text.c ---- */

/* The bytes that instruction texts and stack strings may take, shared by
 * the modules read with it (the modules of a host): HLO_TEXT_BUDGET_BASE
 * plus 4 times the bytes of each module read. A string that does not fit
 * spends the rest: it and every later one are "" (counted in truncated)
 * until a later module adds its share. */
struct hlo_text_budget {
    size_t left;        /* bytes still to spend */
    uint32_t truncated; /* texts and stack strings left "" for want of it */
};

#define HLO_TEXT_BUDGET_BASE ((size_t)1 << 20)

/* A budget of HLO_TEXT_BUDGET_BASE, before any module's share. */
void hlo_text_budget_init(struct hlo_text_budget *b);

/* The stack_frame formats (hlo_node.stack_frame). */
enum hlo_frames_format {
    HLO_FRAMES_OP_STATS, /* XProf's GetOpLocationStack: "file:line:col\n" per
                          * frame, ending at an empty or unknown frame */
    HLO_FRAMES_JOINED,   /* XProf's BuildStackFrames: "file:line:col" lines
                          * joined by '\n', a frame without a readable
                          * location as ":-1:-1" */
};

/* The read's last step: each node's stack_frame in format fmt, from
 * raw[i].stack_frame_id and the module's stack_frame_index (frames: its
 * bytes, an empty view when none), and, when by_id is not NULL (g is linked;
 * by_id as in struct hlo_text_src), the text of every node outside fusion
 * computations. spans are the nodes' bytes; the strings spend budget (which
 * this call does not grow). scratch is the writer to print with (a writer
 * that never spills, emptied first; NULL: one of its own). Returns 0 or
 * -ENOMEM. */
int hlo_module_texts(struct hlo_graph *g, const struct hlo_instr_span *spans,
                     const struct hlo_id_ix *by_id, const struct hlo_raw_ids *raw,
                     struct wire frames, enum hlo_frames_format fmt, struct hlo_text_budget *budget,
                     struct out *scratch);

/* ---- hlo_module.c ---- */

/* What a module read makes besides the graph (hlo_read_module_opts). */
enum {
    HLO_READ_TEXTS = 1,  /* print each instruction's text (hlo_node.text) */
    HLO_READ_JOINED = 2, /* stack_frame as HLO_FRAMES_JOINED (the memory
                          * viewer's), else HLO_FRAMES_OP_STATS */
};

/* How to read a module. */
struct hlo_read_opts {
    unsigned flags;                 /* HLO_READ_* */
    struct out *scratch;            /* writer to print with, reused between
                                     * modules; NULL: one of its own */
    struct hlo_text_budget *budget; /* shared budget (the read adds the
                                     * module's share); NULL: one of the
                                     * module's own */
};

/* Read the module into g, linked when whole, as opts says (NULL: no texts,
 * stack frames as op_stats reads them). Returns 0, -1 (corrupt: g is empty)
 * or -ENOMEM (g is empty). */
int hlo_read_module_opts(const uint8_t *p, size_t n, struct hlo_graph *g,
                         struct hlo_read_status *st, const struct hlo_read_opts *opts);
/* The same with no texts (text is "" everywhere) and op_stats' stack frames. */
int hlo_read_module(const uint8_t *p, size_t n, struct hlo_graph *g, struct hlo_read_status *st);
/* The same, printing the instructions' texts with writer scratch (reused
 * between modules; NULL: a writer of its own) within a budget of the
 * module's own. */
int hlo_read_module_with(const uint8_t *p, size_t n, struct hlo_graph *g,
                         struct hlo_read_status *st, struct out *scratch);

#endif
