/*
 * hlo_text.h - HLO as XLA prints it: shapes (ShapeUtil::HumanString and
 * HumanStringWithLayout) and instructions (HloInstruction::ToString with the
 * options XProf's UncachedExpression passes: no metadata, no backend config,
 * no infeed/outfeed config, operand shapes printed, large constants elided;
 * the other options at their defaults).
 *
 * The instruction printer reads the instruction's own HloInstructionProto
 * bytes for the attributes the cost model never needs (slices, padding,
 * comparison directions, gather/scatter numbers, literals, sharding ...) and
 * the linked graph for operand names and shapes and called computations.
 * A module read with HLO_READ_TEXTS (hlo_module_int.h: hlo_modules_read,
 * hlo_graph_read) prints every instruction outside fusion computations into
 * hlo_node.text while the module bytes are at hand. What is not printed is
 * listed at the top of hlo_text.c.
 *
 * Printing is bounded: every loop stops once the writer holds more than the
 * limit the caller passes, so a hostile instruction costs at most about that
 * many bytes of work whatever its proto says.
 */
#ifndef XPROFS_HLO_TEXT_H
#define XPROFS_HLO_TEXT_H

#include <stddef.h>
#include <stdint.h>

#include "hlo_module.h"
#include "out/out.h"

/* XProf's cut of an instruction's text (kMaxHlolNameSize). */
#define HLO_TEXT_MAX 1000000

/* One instruction's HloInstructionProto bytes and id. */
struct hlo_instr_span {
    const uint8_t *p; /* the message bytes (alive while printing) */
    size_t n;         /* their length */
    int64_t id;       /* the instruction's id */
};

/* An (id, node) pair: by_id tables sort them by id within a computation. */
struct hlo_id_ix {
    int64_t id;  /* instruction id */
    uint32_t ix; /* node index */
};

/* What the instruction printer reads besides the graph. */
struct hlo_text_src {
    const struct hlo_instr_span *spans; /* one per node of the graph */
    const struct hlo_id_ix *by_id;      /* one per node: the nodes of computation c
                                         * at comps[c].first.., sorted by id; NULL:
                                         * control predecessors are left out */
    int large_constants;                /* print_large_constants: array constants
                                         * of up to HLO_TEXT_LARGE_CONSTANT
                                         * elements print their literal (else
                                         * those of up to ten) */
};

/* Elements of a constant printed at most with large_constants. */
#define HLO_TEXT_LARGE_CONSTANT ((uint64_t)1 << 22)

/* Shape s as XLA prints it: "f32[2,3]{1,0}" with_layout, else "f32[2,3]";
 * tuples as "(f32[2]{0}, s32[])". Writes into o (errors sticky in o). */
void hlo_shape_print(struct out *o, const struct hlo_shape *s, int with_layout);

/* Node of the linked graph g as XProf's expression: "%name = shape
 * opcode(operands), attributes". Writes into o (errors sticky in o) and
 * stops soon after o holds limit bytes (the caller cuts the text there); an
 * attribute it cannot read is left out. */
void hlo_instr_print(struct out *o, const struct hlo_graph *g, const struct hlo_text_src *src,
                     uint32_t node, size_t limit);

#endif
