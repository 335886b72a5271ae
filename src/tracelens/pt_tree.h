/*
 * pt_tree.h - TraceLens's call tree of a PyTorch trace (Trace2Tree's
 * TraceToTree, as TreePerfAnalyzer builds it by default): every event's
 * parent, found the way TraceLens finds it.
 *
 *   - Host events (cat cpu_op, cuda_runtime, cuda_driver; python_function
 *     too when asked) nest by time on their own (pid, tid): taken in start
 *     order (ties in file order), an event's parent is the innermost open
 *     event that has not ended when it starts (an end equal to the start
 *     counts as ended). An event that outlasts that parent is attached to the
 *     grandparent when it overlaps the parent's end by less than 1 µs and the
 *     parent is not a thread root ("event bleed"); otherwise it is left out
 *     of the tree (no parent, no children).
 *   - A GPU event (cat kernel, gpu_memcpy, gpu_memset) hangs from the
 *     runtime launch that reaches it (gt_pt_links: correlation or External
 *     id, the ac2g flow pair, graph launches).
 *
 * Event indices are TraceLens's UIDs (positions in traceEvents, "M" events
 * included). Events without "ts" take no part.
 */
#ifndef XPROFS_PT_TREE_H
#define XPROFS_PT_TREE_H

#include <stdint.h>

#include "reader/ctrace.h"

#define PT_NONE UINT32_MAX /* no parent */

/* What an event is to the tree (its "cat"). */
enum pt_kind {
    PT_OTHER = 0, /* anything else (metadata, ac2g, annotations, ...) */
    PT_CPU_OP,    /* cpu_op */
    PT_RUNTIME,   /* cuda_runtime or cuda_driver */
    PT_PYTHON,    /* python_function */
    PT_GPU,       /* kernel, gpu_memcpy or gpu_memset */
};

struct pt_tree {
    uint32_t nevents; /* = ct->nevents */
    uint32_t *parent; /* per event: its parent's index, or PT_NONE */
    uint8_t *kind;    /* per event: enum pt_kind */
    uint8_t *in_tree; /* per event: 1 for a host event that joined the tree
                       * (a root or a child), 0 otherwise */
};

/* Build the tree of ct into *t (python_function events join the host tree
 * when add_python_func is 1, as TraceLens's add_python_func=True). Returns 0
 * or -ENOMEM; free with pt_tree_free. */
int pt_tree_build(const struct ctrace *ct, int add_python_func, struct pt_tree *t);

void pt_tree_free(struct pt_tree *t);

#endif
