/*
 * pt_call_tree.c - call_tree.txt of a PyTorch run: TraceLens's Trace2Tree
 * (CPU op -> runtime launch -> GPU kernel, TreePerfAnalyzer's default tree,
 * python_function events left out) printed exactly as TraceLens's
 * TraceToTree.traverse_subtree_and_print prints it with its defaults
 * (prune_non_gpu=True, no cpu_op fields, no backward links):
 *
 *   └── UID: 12, Category: cpu_op, Name: aten::mm
 *       └── UID: 13, Category: cuda_runtime, Name: cudaLaunchKernel
 *           └── UID: 40, Category: kernel, Name: ampere_sgemm_..., Duration: 7.2
 *
 * UIDs are event positions in traceEvents; names longer than 64 code points
 * are cut and end with ".."; GPU events carry their "dur" as Python prints
 * it. Nodes with no GPU event below them are left out (the node asked for
 * itself is always printed).
 *
 * Without options the file is every root that reaches a GPU event, by start
 * time (ties in file order), each printed as above; a root is a host event
 * without a parent, including one the event-bleed rule left out of its
 * thread's stack (TraceLens still hangs its launches' GPU events from it).
 * Options:
 *   uid=N         the subtree of event N alone (traverse_subtree_and_print)
 *   parents_of=N  event N and its ancestors, as
 *                 TraceToTree.traverse_parents_and_print prints them
 *                 ("Node:", "1-up:", ... each followed by "  UID: ...").
 * A run with several workers prefixes each worker's part with
 * "# host: NAME"; uid and parents_of need a single worker
 * (hosts/<host>/call_tree.txt). A worker's trace where no root reaches a
 * GPU event is an error that says so, not an empty file.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "tracelens/pt_nodes.h"
#include "tracelens/pt_pyrepr.h"
#include "tool.h"

static const struct query_key call_tree_keys[] = {
    {"parents_of", Q_INT, 0, 4294967294.0},
    {"uid", Q_INT, 0, 4294967294.0},
    {NULL, Q_STRING, 0, 0},
};

#define NAME_MAX_POINTS 64

static const char *category(const struct ctrace *ct, uint32_t i)
{
    uint32_t cat = ct->events[i].cat;
    return cat ? ctrace_str(ct, cat) : "None";
}

static int is_gpu_category(const char *cat)
{
    return strcmp(cat, "kernel") == 0 || strcmp(cat, "gpu_memset") == 0 ||
           strcmp(cat, "gpu_memcpy") == 0;
}

/* "UID: N, Category: C, Name: X" and, for GPU events, ", Duration: D"
 * (missing_dur: print "None" for an event without "dur", else nothing). */
static void put_node(struct out *o, const struct ctrace *ct, uint32_t i, int missing_dur)
{
    const struct ctrace_event *e = &ct->events[i];
    const char *cat = category(ct, i);
    char name[4 * NAME_MAX_POINTS + 8], num[40];

    pt_node_name(ct, i, NAME_MAX_POINTS, name, sizeof(name));
    out_printf(o, "UID: %" PRIu32 ", Category: %s, Name: %s", i, cat, name);
    if (!is_gpu_category(cat))
        return;
    if (!(e->flags & CT_HAS_DUR)) {
        if (missing_dur)
            out_puts(o, ", Duration: None");
        return;
    }
    if (e->flags & CT_DUR_INT)
        out_printf(o, ", Duration: %" PRId64, (int64_t)e->dur);
    else {
        pt_float_repr(e->dur, num, sizeof(num));
        out_printf(o, ", Duration: %s", num);
    }
}

/* One line of the subtree print: the node itself. */
static void put_tree_line(struct out *o, uint32_t node, void *arg)
{
    put_node(o, arg, node, 1);
}

/* traverse_subtree_and_print(root). */
static int print_subtree(struct out *o, const struct pt_nodes *nd, uint32_t root)
{
    struct pt_tree_view view = {nd->child_first, nd->children, nd->has_gpu};

    return pt_print_tree(o, &view, root, put_tree_line, (void *)nd->ct);
}

/* traverse_parents_and_print(node). */
static void print_parents(struct out *o, const struct pt_nodes *nd, uint32_t node)
{
    uint32_t depth = 0, p;

    for (p = node; p != PT_NONE; p = nd->t.parent[p], depth++) {
        if (depth == 0)
            out_puts(o, "Node:\n");
        else
            out_printf(o, "%" PRIu32 "-up:\n", depth);
        out_puts(o, "  ");
        put_node(o, nd->ct, p, 0);
        out_putc(o, '\n');
    }
}

/* Print one worker's tree, subtree (uid) or parents (parents_of);
 * *printed: how many roots the whole tree printed (1 for an option). */
static int print_host(struct tool_ctx *ctx, struct out *o, const struct pt_nodes *nd, int has_uid,
                      uint32_t uid, int has_parents, uint32_t parents_of, uint32_t *printed)
{
    uint32_t i;
    int rc;

    *printed = 0;
    if (has_uid || has_parents) {
        uint32_t n = has_uid ? uid : parents_of;
        if (n >= nd->ct->nevents)
            return xp_err_set(ctx->err, -EINVAL,
                              "%s=%" PRIu32 " is not an event of this trace (UIDs 0..%" PRIu32 ")",
                              has_uid ? "uid" : "parents_of", n,
                              nd->ct->nevents ? nd->ct->nevents - 1 : 0);
        *printed = 1;
        if (has_uid)
            return print_subtree(o, nd, uid) != 0 ? xp_err_set(ctx->err, -ENOMEM, "out of memory")
                                                  : 0;
        print_parents(o, nd, parents_of);
        return 0;
    }
    for (i = 0; i < nd->nroots; i++) {
        if (!nd->has_gpu[nd->roots[i]])
            continue;
        rc = print_subtree(o, nd, nd->roots[i]);
        if (rc != 0)
            return xp_err_set(ctx->err, rc, "out of memory");
        (*printed)++;
    }
    return 0;
}

static int call_tree_txt(struct tool_ctx *ctx, struct out *o)
{
    int n = tool_host_count(ctx), i, npt = 0, rc, has_uid, has_parents;
    double v;
    uint32_t uid = 0, parents_of = 0, printed, total = 0;

    has_uid = query_num(ctx->q, "uid", &v);
    if (has_uid)
        uid = (uint32_t)v;
    has_parents = query_num(ctx->q, "parents_of", &v);
    if (has_parents)
        parents_of = (uint32_t)v;
    if (has_uid && has_parents)
        return xp_err_set(ctx->err, -EINVAL, "uid and parents_of cannot be combined");
    for (i = 0; i < n; i++) {
        if (snapshot_host_file(ctx->snap, tool_host(ctx, i), SRC_PT_TRACE) != NULL)
            npt++;
    }
    if (npt == 0)
        return xp_err_set(ctx->err, -ENOENT, "no PyTorch trace in this run");
    if ((has_uid || has_parents) && npt > 1)
        return xp_err_set(ctx->err, -EINVAL, "%s needs one worker: use hosts/<host>/call_tree.txt",
                          has_uid ? "uid" : "parents_of");
    for (i = 0; i < n; i++) {
        const char *host = tool_host(ctx, i);
        const struct pt_nodes *nd;
        if (snapshot_host_file(ctx->snap, host, SRC_PT_TRACE) == NULL)
            continue;
        rc = snapshot_pt_nodes(ctx->snap, host, 0, &nd, ctx->err);
        if (rc != 0)
            return rc;
        if (npt > 1)
            out_printf(o, "# host: %s\n", host);
        rc = print_host(ctx, o, nd, has_uid, uid, has_parents, parents_of, &printed);
        if (rc != 0)
            return rc;
        total += printed;
    }
    /* Nothing to print is said, not an empty file (several workers have
     * their "# host:" lines printed by now). */
    if (total == 0 && npt == 1)
        return xp_err_set(ctx->err, -ENOENT,
                          "no GPU event below any host event of this trace (kernels, memcpys "
                          "and memsets reached from a launch by its correlation id)");
    return 0;
}

const struct tool tool_call_tree_txt = {
    .file = "call_tree.txt",
    .scope = TOOL_RUN | TOOL_HOST,
    .keys = call_tree_keys,
    .listed = pt_run_listed,
    .produce = call_tree_txt,
};
