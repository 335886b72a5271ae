/*
 * hlo_view.h - one HloProto's module as XProf's graph viewer sees it
 * (xprof/convert/hlo_proto_to_graph_view.cc after ConvertHloProtoToModule):
 * the linked graph of hlo_module.h plus what XLA's HloModule keeps beside
 * it, in XLA's orders: computations and each computation's instructions by
 * proto id (HloModule / HloComputation::CreateFromProto sort them so), users
 * in creation order, names as NameUniquer sanitizes them, control
 * predecessors, the fusion instruction of each fusion computation and the
 * module fields the text printer needs (schedule, entry layout, aliasing,
 * frontend attributes, stack frames).
 *
 * Three outputs are built on it: the module's text (hlo_view_text.c, XLA's
 * HloModule::ToString with XProf's options), the Graphviz DOT of a
 * neighbourhood or a computation (hlo_view_dot.c, XLA's hlo_graph_dumper),
 * and the lookups XProf's tool makes (FindInstruction, FindComputation).
 *
 * Everything is bounded for hostile modules: orders are computed with
 * explicit stacks and visited marks (a cyclic operand or call graph ends),
 * walks that XLA does without limit carry a step budget, and nesting of
 * drawn subcomputations stops at HLO_VIEW_MAX_NESTING.
 */
#ifndef XPROFS_HLO_VIEW_H
#define XPROFS_HLO_VIEW_H

#include <stddef.h>
#include <stdint.h>

#include "base/arena.h"
#include "base/err.h"
#include "base/wire.h"
#include "hlo_module.h"
#include "hlo_text.h"
#include "out/out.h"

/* No node / computation. */
#define HLO_VIEW_NONE UINT32_MAX

/* Levels of subcomputations drawn inside each other, at most. */
#define HLO_VIEW_MAX_NESTING 64

struct hlo_view {
    struct hlo_graph g;           /* the module, linked */
    struct arena arena;           /* everything below */
    struct hlo_instr_span *spans; /* per node: its HloInstructionProto and id */
    struct hlo_id_ix *by_id;      /* per node: computation c's nodes at
                                   * comps[c].first.., sorted by id */
    struct hlo_text_src src;      /* spans and by_id, for hlo_instr_print */
    const char **names;           /* per node: its name as XLA keeps it */
    const char **comp_names;      /* per computation: the same */
    const char *module_name;      /* the module's name, sanitized */
    int64_t *comp_ids;            /* per computation: its id */
    uint32_t *comp_order;         /* computations by id (HloModule::computations) */
    uint32_t *fusion_of;          /* per computation: the fusion node that calls
                                   * it (the last one read), or HLO_VIEW_NONE */
    uint32_t *only_caller;        /* per computation: its caller when exactly one
                                   * instruction calls it, else HLO_VIEW_NONE */
    uint32_t **ctrl;              /* per node: control predecessors (nodes) */
    uint32_t *nctrl;              /* per node: entries in ctrl */
    struct wire *exec_thread;     /* per computation: execution_thread (8) */
    struct wire host_shape;       /* HloModuleProto fields, p NULL when absent: 4 */
    struct wire schedule;         /* 7 */
    struct wire alias;            /* 8 */
    struct wire donor;            /* 18 */
    struct wire frames;           /* 17 */
    struct wire frontend;         /* 19 */
    int has_schedule;             /* field 7 was given */
    int64_t device_computations;  /* device_assignment.computation_count, -1 none */
};

/* Read the HloProto p[0..n) (which must outlive v) into v. Returns 0, -EIO
 * for a proto without a module or whose module is malformed or does not
 * link, or -ENOMEM, with err. v is empty on failure. */
int hlo_view_open(struct hlo_view *v, const uint8_t *p, size_t n, struct xp_err *err);

/* Release what v holds; a zeroed v is fine. */
void hlo_view_release(struct hlo_view *v);

/* XProf's FindInstruction: the first node, computations and instructions
 * by id, whose name equals name (a leading '%' dropped) ignoring ASCII
 * case; HLO_VIEW_NONE when none. */
uint32_t hlo_view_find_node(const struct hlo_view *v, const char *name);

/* XProf's FindComputation: the first computation by id whose name equals
 * name ignoring ASCII case, or HLO_VIEW_NONE. */
uint32_t hlo_view_find_comp(const struct hlo_view *v, const char *name);

/* The node of instruction id in computation c, or HLO_VIEW_NONE. */
uint32_t hlo_view_node_of_id(const struct hlo_view *v, uint32_t c, int64_t id);

/* Steps through get-tuple-elements hlo_view_adjacent takes, at most. */
#define HLO_VIEW_ADJ_MAX ((size_t)1 << 20)

/* XProf's GetAdjacentNodes of node as nlohmann's dump writes it:
 * {"consumer_names":[...],"operand_names":[...]}, each list the node's
 * users (operands) in order, where one whose name starts with
 * "get-tuple-element" stands for its own users (operands), recursively.
 * Returns 0, -ENOMEM, or -E2BIG past HLO_VIEW_ADJ_MAX steps (o then holds
 * a cut answer). */
int hlo_view_adjacent(const struct hlo_view *v, uint32_t node, struct out *o);

/* The field `field` of node's HloInstructionProto: its last occurrence as
 * a view (1), or 0 when absent. For varints *varint gets the value. */
int hlo_view_field(const struct hlo_view *v, uint32_t node, uint32_t field, struct wire *bytes,
                   int64_t *varint);

/* The computations that call computation c (instructions whose called list
 * holds it), in node order, into out[0..max); returns how many there are. */
uint32_t hlo_view_callers(const struct hlo_view *v, uint32_t c, uint32_t *out, uint32_t max);

/* The values of a repeated varint field of one message, packed or not. */
struct hlo_view_rep {
    struct wire msg;    /* the rest of the message */
    struct wire packed; /* the rest of the packed run being read */
    uint32_t field;     /* the field */
};

/* Start walking field `field` of message msg. */
void hlo_view_rep_init(struct hlo_view_rep *r, struct wire msg, uint32_t field);

/* The next value into *v: 1, or 0 at the end (or on bad bytes). */
int hlo_view_rep_next(struct hlo_view_rep *r, uint64_t *v);

/* Whether shape s is an effective scalar (an array whose dimensions are
 * all 1: ShapeUtil::IsEffectiveScalar). */
int hlo_view_effective_scalar(const struct hlo_shape *s);

/* s[0..n) as absl::CEscape writes it. */
void hlo_view_cescape(struct out *o, const uint8_t *s, size_t n);

/* Bytes one printed instruction may take (hlo_instr_print's limit here). */
#define HLO_VIEW_TEXT_MAX ((size_t)64 << 20)

/* Node as hlo_instr_print prints it (large_constants: with
 * print_large_constants), into scratch (a writer that never
 * spills; rewound first), as one run of bytes *s, *n: scratch's first chunk,
 * or a malloc'ed copy in *copy (the caller frees it; NULL otherwise) when
 * the text is longer than a chunk. Returns 0 or -ENOMEM. */
int hlo_view_instr_text(const struct hlo_view *v, uint32_t node, int large_constants,
                        struct out *scratch, const char **s, size_t *n, char **copy);

/* The parts of a printed instruction "%name = shape opcode(operands)attrs"
 * as offsets into its text; attrs is ", a=1, b=2" or empty. */
struct hlo_view_parts {
    size_t shape, shape_end;       /* the result shape */
    size_t opcode;                 /* the opcode, up to operands - 1 */
    size_t operands, operands_end; /* inside the parentheses */
    size_t attrs;                  /* after the ')' up to the end */
};

/* Split text s[0..n) into *p. 0, or -1 when it does not have that form. */
int hlo_view_split(const char *s, size_t n, struct hlo_view_parts *p);

/* The first byte c at bracket depth 0 and outside quoted strings in
 * s[i..n), or n. Brackets are (), [] and {}; strings are "..." with
 * backslash escapes. */
size_t hlo_view_scan(const char *s, size_t n, size_t i, char c);

/* The whole module as HloModule::ToString prints it with XProf's options:
 * verbose 0 is HloPrintOptions::ShortParsable() (type=short_txt), 1 the
 * default options with large constants (long_txt); metadata= per flag.
 * What differs from XLA is listed at the top of hlo_view_text.c. Returns 0
 * or -ENOMEM (errors are also sticky in o). */
int hlo_view_print_module(const struct hlo_view *v, struct out *o, int verbose, int metadata);

/* What XProf passes to the dumper (xla::HloRenderOptions). */
struct hlo_dot_opts {
    int show_backend_config; /* show_metadata= */
    int show_fusion;         /* !merge_fusion= */
};

/* The DOT of the nodes within radius of node, as XLA's
 * RenderNeighborhoodAround writes it; or, for hlo_view_dot_comp, of the
 * whole computation c (RenderGraph with an empty label). Returns 0 or
 * -ENOMEM. What differs from XLA is listed at the top of hlo_view_dot.c. */
int hlo_view_dot_around(const struct hlo_view *v, uint32_t node, int64_t radius,
                        const struct hlo_dot_opts *opts, struct out *o);
int hlo_view_dot_comp(const struct hlo_view *v, uint32_t c, const struct hlo_dot_opts *opts,
                      struct out *o);

#endif
