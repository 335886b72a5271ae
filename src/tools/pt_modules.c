/*
 * pt_modules.c - modules.txt of a PyTorch run: the nn.Module hierarchy with
 * the GPU time of each module call, from TraceLens's tree built with
 * python_function events (add_python_func=True).
 *
 * A module call is a python_function event in the tree whose name starts
 * with "nn.Module:" (the profiler writes "nn.Module: Linear_3"). Its module
 * children are TraceLens's get_nn_module_children: the nearest module calls
 * below it, passing other nodes, in tree order. TraceLens prints no module
 * tree itself; this file prints it in the layout of its
 * traverse_subtree_and_print, one line per module call:
 *
 *   └── UID: 823, Name: nn.Module: BertLMHeadModel_0, CPU time: 4216.941, GPU time: 310.5, GPU
 * events: 60 ├── UID: 832, Name: nn.Module: BertModel_0, CPU time: 3910.787, GPU time: 280.1, GPU
 * events: 52
 *
 *   UID         the event's position in traceEvents
 *   Name        the event name, uncut
 *   CPU time    its "dur" (µs) as Python prints it
 *   GPU time    busy time (µs) of the GPU events below it, as TraceLens's
 *               nn_module_detail computes gpu_busy_time (union of
 *               [ts, ts + dur) of its "gpu_events", summed in start order);
 *               0 when there are none
 *   GPU events  how many GPU events lie below it (TraceLens's kernel_count)
 *
 * Top-level module calls (no module above them) come in tree order: roots by
 * start time (ties in file order), depth first. Option uid=N: the subtree of
 * module call N alone. A run with several workers prefixes each worker's part
 * with "# host: NAME"; uid needs a single worker. A worker's trace without
 * any module call (profiled without with_stack=True) is an error that says
 * so, not an empty file.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "tracelens/pt_nodes.h"
#include "tracelens/pt_pyrepr.h"
#include "tool.h"

static const struct query_key modules_keys[] = {
    {"uid", Q_INT, 0, 4294967294.0},
    {NULL, Q_STRING, 0, 0},
};

/* The module tree of one worker. */
struct modules {
    const struct pt_nodes *nd;
    uint8_t *is_module; /* per event */
    uint32_t *first;    /* module children of i: kids[first[i]..first[i+1]) */
    uint32_t *kids;
    uint32_t *roots; /* top-level module calls in tree order */
    uint32_t nroots;
    double *gpu_us;   /* per event (modules only) */
    uint8_t *gpu_int; /* GPU time is a Python int */
    uint32_t *gpu_n;  /* GPU events below */
};

static void modules_free(struct modules *m)
{
    free(m->is_module);
    free(m->first);
    free(m->kids);
    free(m->roots);
    free(m->gpu_us);
    free(m->gpu_int);
    free(m->gpu_n);
}

/* The tree in preorder (roots by start, children in order) into order[],
 * with each node's subtree size. Returns the count. */
static uint32_t preorder(const struct pt_nodes *nd, uint32_t *order, uint32_t *stack,
                         uint32_t *size)
{
    uint32_t n = 0, depth, r, k;

    for (r = 0; r < nd->nroots; r++) {
        depth = 0;
        stack[depth++] = nd->roots[r];
        while (depth > 0) {
            uint32_t e = stack[--depth];
            order[n++] = e;
            for (k = nd->child_first[e + 1]; k > nd->child_first[e]; k--)
                stack[depth++] = nd->children[k - 1];
        }
    }
    /* Subtree sizes: children come after their parent in preorder. */
    for (k = 0; k < n; k++)
        size[order[k]] = 1;
    for (k = n; k > 0; k--) {
        uint32_t e = order[k - 1], p = nd->t.parent[e];
        if (p != PT_NONE)
            size[p] += size[e];
    }
    return n;
}

static int is_module_call(const struct pt_nodes *nd, uint32_t i)
{
    const struct ctrace *ct = nd->ct;
    return nd->t.kind[i] == PT_PYTHON &&
           strncmp(ctrace_str(ct, ct->events[i].name), "nn.Module:", 10) == 0;
}

static int modules_build(const struct pt_nodes *nd, struct modules *m)
{
    uint32_t n = nd->ct->nevents, slots = n ? n : 1, count, k, *order, *stack, *size, *anc, *pos,
             *gpu;
    int rc = -ENOMEM;

    memset(m, 0, sizeof(*m));
    m->nd = nd;
    order = malloc(slots * sizeof(*order));
    stack = malloc(slots * sizeof(*stack));
    size = malloc(slots * sizeof(*size));
    anc = malloc(slots * sizeof(*anc));
    pos = malloc(((size_t)n + 1) * sizeof(*pos));
    gpu = malloc(slots * sizeof(*gpu));
    m->is_module = calloc(slots, 1);
    m->first = calloc((size_t)n + 1, sizeof(*m->first));
    m->kids = malloc(slots * sizeof(*m->kids));
    m->roots = malloc(slots * sizeof(*m->roots));
    m->gpu_us = calloc(slots, sizeof(*m->gpu_us));
    m->gpu_int = calloc(slots, 1);
    m->gpu_n = calloc(slots, sizeof(*m->gpu_n));
    if (order == NULL || stack == NULL || size == NULL || anc == NULL || pos == NULL ||
        gpu == NULL || m->is_module == NULL || m->first == NULL || m->kids == NULL ||
        m->roots == NULL || m->gpu_us == NULL || m->gpu_int == NULL || m->gpu_n == NULL)
        goto out;
    count = preorder(nd, order, stack, size);
    /* The nearest module call above each node (parents come first). */
    for (k = 0; k < count; k++) {
        uint32_t e = order[k], p = nd->t.parent[e];
        m->is_module[e] = (uint8_t)is_module_call(nd, e);
        anc[e] = p == PT_NONE ? PT_NONE : m->is_module[p] ? p : anc[p];
        if (m->is_module[e]) {
            if (anc[e] == PT_NONE)
                m->roots[m->nroots++] = e;
            else
                m->first[anc[e] + 1]++;
        }
    }
    for (k = 0; k < n; k++)
        m->first[k + 1] += m->first[k];
    memcpy(pos, m->first, ((size_t)n + 1) * sizeof(*pos));
    for (k = 0; k < count; k++) {
        uint32_t e = order[k];
        if (m->is_module[e] && anc[e] != PT_NONE)
            m->kids[pos[anc[e]]++] = e;
    }
    /* GPU time: the GPU events in each module call's preorder range. */
    for (k = 0; k < count; k++) {
        uint32_t e = order[k], j, ngpu = 0;
        int is_int, ok;
        if (!m->is_module[e])
            continue;
        for (j = k; j < k + size[e]; j++) {
            if (nd->t.kind[order[j]] == PT_GPU)
                gpu[ngpu++] = order[j];
        }
        m->gpu_us[e] = pt_busy_time(nd->ct, gpu, ngpu, &is_int, &ok);
        if (!ok)
            goto out;
        m->gpu_int[e] = (uint8_t)is_int;
        m->gpu_n[e] = ngpu;
    }
    rc = 0;
out:
    free(order);
    free(stack);
    free(size);
    free(anc);
    free(pos);
    free(gpu);
    if (rc != 0)
        modules_free(m);
    return rc;
}

/* A Python number: an int when is_int, else repr of the float. */
static void put_number(struct out *o, double v, int is_int)
{
    char num[40];

    if (is_int) {
        out_printf(o, "%" PRId64, (int64_t)v);
        return;
    }
    pt_float_repr(v, num, sizeof(num));
    out_puts(o, num);
}

static void put_module_line(struct out *o, uint32_t e, void *arg)
{
    const struct modules *m = arg;
    const struct ctrace *ct = m->nd->ct;
    const struct ctrace_event *ev = &ct->events[e];

    out_printf(o, "UID: %" PRIu32 ", Name: %s, CPU time: ", e, ctrace_str(ct, ev->name));
    if (ev->flags & CT_HAS_DUR)
        put_number(o, ev->dur, (ev->flags & CT_DUR_INT) != 0);
    else
        out_puts(o, "None");
    out_puts(o, ", GPU time: ");
    put_number(o, m->gpu_us[e], m->gpu_int[e]);
    out_printf(o, ", GPU events: %" PRIu32, m->gpu_n[e]);
}

/* Print one worker's module calls (or with has_uid the subtree of uid);
 * *nroots: its top-level module calls. */
static int print_host(struct tool_ctx *ctx, struct out *o, const struct pt_nodes *nd, int has_uid,
                      uint32_t uid, uint32_t *nroots)
{
    struct modules m;
    struct pt_tree_view view;
    uint32_t i;
    int rc = modules_build(nd, &m);

    *nroots = 0;
    if (rc != 0)
        return xp_err_set(ctx->err, rc, "out of memory");
    *nroots = m.nroots;
    view.first = m.first;
    view.kids = m.kids;
    view.keep = NULL;
    if (has_uid) {
        if (uid >= nd->ct->nevents || !m.is_module[uid])
            rc = xp_err_set(ctx->err, -EINVAL,
                            "uid=%" PRIu32 " is not an nn.Module call of this trace", uid);
        else
            rc = pt_print_tree(o, &view, uid, put_module_line, &m);
    }
    for (i = 0; !has_uid && rc == 0 && i < m.nroots; i++)
        rc = pt_print_tree(o, &view, m.roots[i], put_module_line, &m);
    modules_free(&m);
    if (rc == -ENOMEM)
        return xp_err_set(ctx->err, rc, "out of memory");
    return rc;
}

static int modules_txt(struct tool_ctx *ctx, struct out *o)
{
    int n = tool_host_count(ctx), i, npt = 0, rc, has_uid;
    double v;
    uint32_t uid = 0, nroots, total = 0;

    has_uid = query_num(ctx->q, "uid", &v);
    if (has_uid)
        uid = (uint32_t)v;
    for (i = 0; i < n; i++) {
        if (snapshot_host_file(ctx->snap, tool_host(ctx, i), SRC_PT_TRACE) != NULL)
            npt++;
    }
    if (npt == 0)
        return xp_err_set(ctx->err, -ENOENT, "no PyTorch trace in this run");
    if (has_uid && npt > 1)
        return xp_err_set(ctx->err, -EINVAL, "uid needs one worker: use hosts/<host>/modules.txt");
    for (i = 0; i < n; i++) {
        const char *host = tool_host(ctx, i);
        const struct pt_nodes *nd;
        if (snapshot_host_file(ctx->snap, host, SRC_PT_TRACE) == NULL)
            continue;
        rc = snapshot_pt_nodes(ctx->snap, host, 1, &nd, ctx->err);
        if (rc != 0)
            return rc;
        if (npt > 1)
            out_printf(o, "# host: %s\n", host);
        rc = print_host(ctx, o, nd, has_uid, uid, &nroots);
        if (rc != 0)
            return rc;
        total += nroots;
    }
    /* Nothing to print is said, not an empty file (several workers have
     * their "# host:" lines printed by now). */
    if (total == 0 && npt == 1)
        return xp_err_set(ctx->err, -ENOENT,
                          "no nn.Module calls in this trace (python_function events named "
                          "\"nn.Module: ...\", which the profiler writes with with_stack=True)");
    return 0;
}

const struct tool tool_modules_txt = {
    .file = "modules.txt",
    .scope = TOOL_RUN | TOOL_HOST,
    .keys = modules_keys,
    .listed = pt_run_listed,
    .produce = modules_txt,
};
