/*
 * pt_nodes.h - TraceLens's Trace2Tree of a PyTorch trace as a walkable tree:
 * the parents of pt_tree.h plus each node's children in TraceLens's order
 * (host children by start, ties in file order, then the GPU events a launch
 * reaches in file order), whether a GPU event lies below each node
 * (TraceLens's "gpu_events"; nodes without one are its non_gpu_path), and
 * the roots. Built once per snapshot, host and python_function choice.
 */
#ifndef XPROFS_PT_NODES_H
#define XPROFS_PT_NODES_H

#include <stdint.h>

#include "reader/ctrace.h"
#include "out/out.h"
#include "pt_tree.h"
#include "session/session.h"

struct pt_nodes {
    const struct ctrace *ct; /* owned by the snapshot */
    struct pt_tree t;        /* parents, kinds, tree membership */
    uint32_t *child_first;   /* children of i: children[child_first[i]..child_first[i+1]) */
    uint32_t *children;
    uint8_t *has_gpu; /* per event: a GPU event hangs below it (or it is one) */
    uint32_t *roots;  /* host events without a parent (tree roots, and events the
                       * bleed rule left out), by (ts, index) */
    uint32_t nroots;  /* entries in roots */
    int python;       /* python_function events joined the tree */
};

/* The nodes of host's PyTorch trace (add_python_func as TraceLens's flag).
 * Returns 0 or a negative errno with err set. Valid while the snapshot is. */
int snapshot_pt_nodes(struct snapshot *snap, const char *host, int add_python_func,
                      const struct pt_nodes **np, struct xp_err *err);

/* Build / free directly (tests). */
int pt_nodes_build(const struct ctrace *ct, int add_python_func, struct pt_nodes *n);
void pt_nodes_free(struct pt_nodes *n);

/* Busy time of the GPU events ev[0..n) as TraceLens's GPUEventAnalyser
 * computes it (union of [ts, ts + dur), summed in start order), and in
 * *is_int whether Python's result is an int. 0 for n = 0. *ok is 1, or 0
 * when memory ran out (the result is then meaningless). */
double pt_busy_time(const struct ctrace *ct, const uint32_t *ev, uint32_t n, int *is_int, int *ok);

/* The name of event i cut as TraceLens prints it: at most max code points,
 * ".." appended when cut; "Unknown" when absent. Writes into buf (n bytes). */
void pt_node_name(const struct ctrace *ct, uint32_t i, size_t max, char *buf, size_t n);

/* A tree to print: the children of i are kids[first[i]..first[i+1]), and
 * only those with keep[child] != 0 are printed (keep NULL: all). */
struct pt_tree_view {
    const uint32_t *first;
    const uint32_t *kids;
    const uint8_t *keep;
};

/* Print the subtree of root as TraceLens's traverse_subtree_and_print lays
 * it out: each node on its own line after the "├── " / "└── " connector,
 * under a prefix of "│   " / "    " per level; line() writes the text after
 * the connector (no newline). Depth-first without recursion. Returns 0 or
 * -ENOMEM. */
int pt_print_tree(struct out *o, const struct pt_tree_view *view, uint32_t root,
                  void (*line)(struct out *o, uint32_t node, void *arg), void *arg);

/* 1 if the run has PyTorch trace files (the tree tools are listed). */
int pt_run_listed(const struct snapshot *snap);

#endif
