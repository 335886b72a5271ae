/* SPDX-License-Identifier: Apache-2.0 */
/*
 * hlo_view_dot.c - the Graphviz DOT of an HLO neighbourhood or computation
 * as XLA's hlo_graph_dumper.cc writes it (HloDotDumper with
 * MakeNodeRadiusAroundFilter, RenderNeighborhoodAround and RenderGraph),
 * which XProf's graph viewer returns for type=graph (hlo_view.h).
 *
 * Ported: the radius filter (BFS over operands, users and called
 * computations' roots; bitcasts cost no depth; tuples' operands only from
 * the centre; constants' users and the users of nodes with more than 16
 * users left out; nodes with omitted operands or users drawn dashed;
 * async-collective-fusion parameters hidden; the centre a dark red
 * diamond), the dump order and numbering of nodes, clusters and edges, node
 * colours by opcode, shapes (while: ellipse), labels (name, opcode and
 * fusion kind, "Parameter N"), tooltips (op_name, op_type, source, stack
 * frames), extra-attribute lines (truncated replica groups, bold
 * feature_group_count), shapes with layouts past one dimension (cut at 64),
 * inlined constants and merged get-tuple-elements / tuple parameters /
 * constant-bound fusion parameters, trivial subcomputations ("add"),
 * fusion subgraphs as clusters (or merged when merge_fusion), other called
 * computations as clusters with a dashed edge, operand edges (hollow arrows
 * for small arrays, head labels for several operands, 64 at most between two
 * nodes), control edges, the ROOT tag, statistics colours, the cuDNN
 * convolution and cuBLAS GEMM backend-config properties and
 * backend_config= with show_metadata, the hover stylesheet.
 *
 * Not reproduced: node and cluster names (XLA prints the objects' memory
 * addresses, here node index + 1 and "cluster_" + computation index + 1);
 * the order of the stylesheet's rules (XLA's follows a hash map; here by
 * edge); an edge to a node that is never drawn is left out of the
 * stylesheet (XLA aborts); constants of more than one dimension show their
 * one-line literal where XLA shows the multi-line one; attribute lines are
 * hlo_instr_print's attributes split at top-level ", " (what that printer
 * leaves out is missing here too); sharding colours and addresses (debug
 * options off in XProf); the async wrapped instruction's colour is looked
 * up at most 8 levels deep; subcomputations nest at most
 * HLO_VIEW_MAX_NESTING levels, chains of fused roots and producers are
 * followed at most as many steps as the module has nodes, and the radius
 * search stops after RADIUS_PUSH_MAX queue entries (for hostile modules).
 */
#include "hlo_view.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* Queue entries of the radius search, at most. */
#define RADIUS_PUSH_MAX ((size_t)1 << 23)

/* XLA's NodeFilterResult; F_ABSENT: not in the radius map. */
enum { F_NORMAL, F_HIDE, F_HIGHLIGHT, F_SOME_OPERANDS, F_OMIT_OPERANDS, F_SOME_USERS, F_ABSENT };

/* XLA's ColorScheme. */
enum {
    C_BLUE,
    C_BROWN,
    C_DARK_BLUE,
    C_DARK_GREEN,
    C_DARK_ORANGE,
    C_DARK_RED,
    C_GRAY,
    C_GREEN,
    C_ORANGE,
    C_PURPLE,
    C_RED,
    C_WHITE,
    C_YELLOW,
    C_DASHED,
};

/* style, fill, stroke and font colour of each scheme. */
static const char *const schemes[][4] = {
    [C_BLUE] = {"filled", "#bbdefb", "#8aacc8", "black"},
    [C_BROWN] = {"filled", "#bcaaa4", "#8c7b75", "black"},
    [C_DARK_BLUE] = {"filled", "#1565c0", "#003c8f", "white"},
    [C_DARK_GREEN] = {"filled", "#2e7d32", "#005005", "white"},
    [C_DARK_ORANGE] = {"filled", "#ffb74d", "#c88719", "black"},
    [C_DARK_RED] = {"filled", "#b71c1c", "#7f0000", "white"},
    [C_GRAY] = {"filled", "#cfd8dc", "#9ea7aa", "black"},
    [C_GREEN] = {"filled", "#c8e6c9", "#97b498", "black"},
    [C_ORANGE] = {"filled", "#ffe0b2", "#cbae82", "black"},
    [C_PURPLE] = {"filled", "#e1bee7", "#af8eb5", "black"},
    [C_RED] = {"filled", "#ffcdd2", "#cb9ca1", "black"},
    [C_WHITE] = {"filled", "white", "#9e9e9e", "black"},
    [C_YELLOW] = {"filled", "#fff9c4", "#cbc693", "black"},
    [C_DASHED] = {"filled,dashed", "white", "#757575", "#757575"},
};

/* Opcodes by colour (GetInstructionColor), NULL-terminated lists. */
/* clang-format off */
static const char *const white_ops[] = {
    "abs", "asin", "asinh", "acos", "acosh", "add", "and", "atan2", "atanh", "bitcast-convert",
    "ceil", "clamp", "clz", "compare", "complex", "convert", "cosine", "cosh", "divide", "erf",
    "exponential", "exponential-minus-one", "floor", "imag", "iota", "is-finite", "log",
    "log-plus-one", "maximum", "minimum", "multiply", "negate", "not", "popcnt", "or", "xor",
    "power", "real", "reduce-precision", "remainder", "rng", "rng-get-and-update-state",
    "rng-bit-generator", "round-nearest-afz", "round-nearest-even", "rsqrt", "select", "shift-left",
    "shift-right-arithmetic", "shift-right-logical", "stochastic-convert", "logistic", "sign",
    "sine", "sinh", "slice", "sort", "topk", "sqrt", "cbrt", "subtract", "tan", "tanh",
    "add-dependency", "after-all", "get-tuple-element", "opt-barrier", "pad", "tuple", "constant",
    NULL
};
static const char *const yellow_ops[] = {
    "broadcast", "dynamic-update-slice", NULL
};
static const char *const green_ops[] = {
    "concatenate", "dynamic-slice", "reshape", "dynamic-reshape", "reverse", "transpose", "copy",
    "copy-start", "copy-done", NULL
};
static const char *const dark_blue_ops[] = {
    "convolution", "dot", "ragged-dot", "scaled-dot", "fft", "triangular-solve", "cholesky", NULL
};
static const char *const purple_ops[] = {
    "batch-norm-grad", "batch-norm-inference", "batch-norm-training", "reduce", "reduce-window",
    "scan", "scatter", "select-and-scatter", "gather", NULL
};
static const char *const gray_ops[] = {
    "domain", "fusion", "map", "get-dimension-size", "set-dimension-size", NULL
};
static const char *const brown_ops[] = {
    "all-gather", "all-gather-start", "all-gather-done", "all-reduce", "reduce-scatter",
    "all-reduce-start", "all-reduce-done", "all-to-all", "collective-broadcast",
    "collective-permute", "collective-permute-start", "collective-permute-done", "infeed",
    "outfeed", "partition-id", "ragged-all-to-all", "recv", "recv-done", "send", "send-done",
    "replica-id", NULL
};
static const char *const dark_green_ops[] = {
    "call", "conditional", "custom-call", "while", NULL
};
/* clang-format on */

/* Whether op is in the NULL-terminated list. */
static int in_list(const char *op, const char *const *list)
{
    for (; *list != NULL; list++) {
        if (strcmp(op, *list) == 0)
            return 1;
    }
    return 0;
}

/* One (from, to) pair of edge_ids_ (to HLO_VIEW_NONE: the root tag). */
struct edge {
    uint32_t from, to; /* nodes */
    int64_t id;        /* its number */
};

/* A module's stack frame index, as views into it. */
struct frames {
    struct wire *files, *functions; /* names */
    int32_t *locs;                  /* file, function, line, column per location */
    int32_t *frames;                /* location, parent per frame */
    uint32_t nfiles, nfunctions, nlocs, nframes;
    int read; /* 1 once read */
};

/* One HloDotDumper. */
struct dumper {
    const struct hlo_view *v;
    const struct hlo_dot_opts *opts;
    uint32_t comp;     /* the computation drawn */
    const char *label; /* overall name for the graph */
    uint8_t *filter;   /* per node: its filter result, F_ABSENT when not mapped */
    int8_t *merge;     /* per node: ShouldMergeIntoUsers, -1 until asked */
    int radius;        /* a radius filter (else every node is shown) */
    uint32_t centre;   /* its root */
    int64_t *node_id;  /* per node: its number, 0 when not drawn */
    int64_t next_node, next_edge, next_cluster, root_node;
    int64_t *cluster_id; /* per computation: its number, 0 when not drawn */
    struct edge *edges;  /* edge_ids_ in insertion order */
    size_t nedges, cap;
    uint64_t *pair_keys; /* (from, to) + 1 pairs counted, open addressing */
    uint32_t *pair_counts;
    size_t pair_cap, npairs;
    struct out body;    /* DumpComputation and DumpRootTag */
    struct out edgetxt; /* edges_ joined by "\n" */
    struct out scratch; /* printed instructions */
    struct out tmp;     /* one label at a time */
    struct out shape;   /* one shape inside a label */
    int module_stats;   /* some instruction has statistics */
    int depth;          /* subcomputations being drawn */
    int oom;            /* an allocation failed */
    struct frames fr;   /* the stack frame index, read on first use */
};

/* ---- small helpers ---- */

static const struct hlo_node *nd_of(const struct dumper *d, uint32_t n)
{
    return &d->v->g.nodes[n];
}

static int is_op(const struct dumper *d, uint32_t n, const char *op)
{
    return strcmp(nd_of(d, n)->opcode, op) == 0;
}

/* s[0..n) with <, > and " as &lt; &gt; &quot; (HtmlLikeStringSanitize). */
static void sanitize(struct out *o, const char *s, size_t n)
{
    size_t i;

    for (i = 0; i < n; i++) {
        if (s[i] == '<')
            out_puts(o, "&lt;");
        else if (s[i] == '>')
            out_puts(o, "&gt;");
        else if (s[i] == '"')
            out_puts(o, "&quot;");
        else
            out_putc(o, s[i]);
    }
}

static void sanitize_cstr(struct out *o, const char *s)
{
    sanitize(o, s, strlen(s));
}

/* The writer's bytes as a NUL-terminated malloc'ed string (NULL on OOM);
 * the writer is rewound. */
static char *take(struct dumper *d, struct out *o)
{
    size_t n = out_len(o), off = 0, c;
    char *s = malloc(n + 1);

    if (s == NULL || out_failed(o)) {
        free(s);
        d->oom = 1;
        out_rewind(o);
        return NULL;
    }
    for (c = 0; off < n; c++) {
        size_t k = n - off < OUT_CHUNK ? n - off : OUT_CHUNK;
        memcpy(s + off, o->chunks[c], k);
        off += k;
    }
    s[n] = '\0';
    out_rewind(o);
    return s;
}

/* Whether shape s holds an opaque or token anywhere. */
static int has_opaque(const struct hlo_shape *s, int depth)
{
    uint32_t i;

    if (s->type == HLO_OPAQUE || s->type == HLO_TOKEN)
        return 1;
    for (i = 0; i < s->ntuple && depth < 64; i++) {
        if (has_opaque(&s->tuple[i], depth + 1))
            return 1;
    }
    return 0;
}

/* IsSmall: opaque or token shapes, or fewer than 4096 elements. */
static int is_small(const struct dumper *d, uint32_t n)
{
    const struct hlo_shape *s = &nd_of(d, n)->shape;

    return has_opaque(s, 0) || hlo_shape_elements_recursive(s) < 4096;
}

/* Whether a (tuple) shape has an array subshape of more than one dimension. */
static int multidim(const struct hlo_shape *s, int depth)
{
    uint32_t i;

    if (s->type != HLO_TUPLE)
        return s->type != HLO_OPAQUE && s->type != HLO_TOKEN && s->ndims > 1;
    for (i = 0; i < s->ntuple && depth < 64; i++) {
        if (multidim(&s->tuple[i], depth + 1))
            return 1;
    }
    return 0;
}

/* Whether computation c is a fusion computation with its instruction. */
static int fusion_comp(const struct dumper *d, uint32_t c)
{
    return d->v->fusion_of[c] != HLO_VIEW_NONE;
}

/* IsFusedWithParentFusionInstNotNull. */
static int is_fused(const struct dumper *d, uint32_t n)
{
    return fusion_comp(d, nd_of(d, n)->comp);
}

/* The root of computation c. */
static uint32_t comp_root(const struct dumper *d, uint32_t c)
{
    return d->v->g.comps[c].root;
}

/* The node's statistic to visualize into *val: 1 when it has statistics. */
static int statistic(const struct dumper *d, uint32_t n, double *val)
{
    struct wire m, cur, st;
    int64_t index = 0, k = 0;
    int any = 0;

    *val = 0;
    if (!hlo_view_field(d->v, n, 82, &m, NULL))
        return 0;
    cur = m;
    while (!wire_eof(&cur)) {
        uint32_t f;
        int t;
        uint64_t x;
        if (wire_key(&cur, &f, &t) != 0)
            break;
        if (f == 1 && t == WIRE_VARINT) {
            if (wire_varint(&cur, &x) != 0)
                break;
            index = (int64_t)x;
        } else if (wire_skip(&cur, t) != 0) {
            break;
        }
    }
    cur = m;
    while (!wire_eof(&cur)) {
        uint32_t f;
        int t;
        if (wire_key(&cur, &f, &t) != 0)
            break;
        if (f != 2 || t != WIRE_LEN) {
            if (wire_skip(&cur, t) != 0)
                break;
            continue;
        }
        if (wire_bytes(&cur, &st) != 0)
            break;
        any = 1;
        if (k++ == index) {
            while (!wire_eof(&st)) {
                uint32_t sf;
                int stt;
                uint64_t bits;
                if (wire_key(&st, &sf, &stt) != 0)
                    break;
                if (sf == 2 && stt == WIRE_I64) {
                    if (wire_fixed64(&st, &bits) != 0)
                        break;
                    memcpy(val, &bits, sizeof(*val));
                } else if (wire_skip(&st, stt) != 0) {
                    break;
                }
            }
        }
    }
    return any;
}

/* NodeFillColorForStatistic. */
static const char *stat_fill(double v)
{
    static const char *const fills[] = {"#f7d4cc", "#f8b2a3", "#f9a28f", "#fa917b", "#fb8066",
                                        "#fc7052", "#fd5f3d", "#fd4e29", "#fe3e14"};
    int i;

    if (v == 0)
        return "#f5f5f5";
    for (i = 0; i < 9; i++) {
        if (v < 10.0 * (i + 1))
            return fills[i];
    }
    return "#ff2d00";
}

/* ---- the filter ---- */

/* IsAcfPrameter: a fused parameter that only passes an async collective
 * fusion's value through. */
static int acf_param(const struct dumper *d, uint32_t n)
{
    const struct hlo_view *v = d->v;
    const struct hlo_node *nd = nd_of(d, n), *fusion, *gte, *src;
    const struct hlo_comp *parent;
    uint32_t f, g, user, src_comp;

    if (strcmp(nd->opcode, "parameter") != 0 || !is_fused(d, n) || nd->nusers != 1)
        return 0;
    parent = &v->g.comps[nd->comp];
    f = v->fusion_of[nd->comp];
    fusion = nd_of(d, f);
    if (nd->parameter_number < 0 || (uint64_t)nd->parameter_number >= fusion->noperands)
        return 0;
    g = fusion->operands[nd->parameter_number];
    gte = nd_of(d, g);
    if (strcmp(gte->opcode, "get-tuple-element") != 0 || gte->noperands == 0 ||
        !is_op(d, gte->operands[0], "fusion") || nd_of(d, gte->operands[0])->ncalled == 0)
        return 0;
    src_comp = nd_of(d, gte->operands[0])->called[0];
    src = nd_of(d, comp_root(d, src_comp));
    user = nd->users[0];
    if (strncmp(d->v->comp_names[nd->comp], "async_collective_fusion", 23) == 0 &&
        strcmp(src->opcode, "custom-call") == 0 &&
        strcmp(src->custom_call_target, "AsyncCollectiveStart") == 0 && user == parent->root)
        return 1;
    return is_op(d, user, "custom-call") &&
           strcmp(nd_of(d, user)->custom_call_target, "AsyncCollectiveDone") == 0 &&
           strncmp(v->comp_names[src_comp], "async_collective_fusion", 23) == 0;
}

/* The filter result of node n. */
static int filter(const struct dumper *d, uint32_t n)
{
    if (!d->radius)
        return F_NORMAL;
    if (d->filter[n] != F_ABSENT)
        return d->filter[n];
    if (nd_of(d, n)->comp != nd_of(d, d->centre)->comp && !acf_param(d, n))
        return F_NORMAL;
    return F_HIDE;
}

static int show(const struct dumper *d, uint32_t n)
{
    return filter(d, n) != F_HIDE;
}

static int some_operands_omitted(const struct dumper *d, uint32_t n)
{
    int f = filter(d, n);

    return f == F_OMIT_OPERANDS || f == F_SOME_OPERANDS;
}

static int deemphasized(const struct dumper *d, uint32_t n)
{
    int f = filter(d, n);

    return f == F_OMIT_OPERANDS || f == F_SOME_OPERANDS || f == F_SOME_USERS;
}

/* Whether node x is displayed for the second pass of the radius filter. */
static int displayed(const struct dumper *d, uint32_t x)
{
    return d->filter[x] != F_ABSENT || is_op(d, x, "constant") ||
           nd_of(d, x)->comp != nd_of(d, d->centre)->comp;
}

/* One queue entry of the radius search. */
struct qent {
    uint32_t node, depth;
};

/* Append (node, depth) to the queue. 0, or -1 when it is full / OOM. */
static int qpush(struct qent **q, size_t *n, size_t *cap, uint32_t node, uint32_t depth)
{
    if (*n >= RADIUS_PUSH_MAX)
        return -1;
    if (*n == *cap) {
        size_t nc = *cap ? *cap * 2 : 256;
        struct qent *p = realloc(*q, nc * sizeof(*p));
        if (p == NULL)
            return -1;
        *q = p;
        *cap = nc;
    }
    (*q)[(*n)++] = (struct qent){node, depth};
    return 0;
}

/* MakeNodeRadiusAroundFilter with an empty boundary into d->filter.
 * 0 or -ENOMEM. */
static int radius_filter(struct dumper *d, uint32_t root, int64_t radius)
{
    const struct hlo_view *v = d->v;
    struct qent *q = NULL;
    size_t head = 0, n = 0, cap = 0;
    uint32_t i, j;
    int full = 0;

    memset(d->filter, F_ABSENT, v->g.nnodes);
    if (radius > (int64_t)UINT32_MAX - 1)
        radius = UINT32_MAX - 1;
    if (qpush(&q, &n, &cap, root, 0) != 0)
        return -ENOMEM;
    while (head < n) {
        struct qent e = q[head++];
        const struct hlo_node *nd = nd_of(d, e.node);
        d->filter[e.node] = acf_param(d, e.node) ? F_HIDE : F_NORMAL;
        if ((int64_t)e.depth == radius)
            continue;
        if (e.node == root || strcmp(nd->opcode, "tuple") != 0) {
            for (j = 0; j < nd->noperands && !full; j++) {
                uint32_t op = nd->operands[j];
                int same = is_op(d, op, "bitcast") || strcmp(nd->opcode, "bitcast") == 0;
                if (d->filter[op] == F_ABSENT)
                    full = qpush(&q, &n, &cap, op, same ? e.depth : e.depth + 1) != 0;
            }
        }
        for (j = 0; j < nd->ncalled && !full; j++)
            full = qpush(&q, &n, &cap, comp_root(d, nd->called[j]), e.depth + 1) != 0;
        if (strcmp(nd->opcode, "constant") == 0)
            continue;
        if (nd->nusers > 16) {
            d->filter[e.node] = F_SOME_USERS;
            continue;
        }
        for (j = 0; j < nd->nusers && !full; j++) {
            if (d->filter[nd->users[j]] == F_ABSENT)
                full = qpush(&q, &n, &cap, nd->users[j], e.depth + 1) != 0;
        }
    }
    free(q);
    for (i = 0; i < v->g.nnodes; i++) {
        const struct hlo_node *nd = nd_of(d, i);
        uint32_t shown = 0, users = 0;
        if (d->filter[i] == F_ABSENT)
            continue;
        for (j = 0; j < nd->noperands; j++)
            shown += displayed(d, nd->operands[j]) != 0;
        if (shown > 0 && shown < nd->noperands)
            d->filter[i] = F_SOME_OPERANDS;
        else if (nd->noperands > 0 && shown == 0)
            d->filter[i] = F_OMIT_OPERANDS;
        for (j = 0; j < nd->nusers; j++)
            users += displayed(d, nd->users[j]) != 0;
        if (d->filter[i] == F_SOME_USERS && users == nd->nusers)
            d->filter[i] = F_NORMAL;
    }
    d->filter[root] = F_HIGHLIGHT;
    return 0;
}

/* ---- what the dumper asks of instructions ---- */

/* TryGetFusionParameterConstant: the constant a fused parameter is bound
 * to, or HLO_VIEW_NONE. */
static uint32_t param_constant(const struct dumper *d, uint32_t n)
{
    const struct hlo_node *nd = nd_of(d, n), *fusion;

    if (strcmp(nd->opcode, "parameter") != 0 || !is_fused(d, n))
        return HLO_VIEW_NONE;
    fusion = nd_of(d, d->v->fusion_of[nd->comp]);
    if (nd->parameter_number < 0 || (uint64_t)nd->parameter_number >= fusion->noperands)
        return HLO_VIEW_NONE;
    n = fusion->operands[nd->parameter_number];
    return is_op(d, n, "constant") ? n : HLO_VIEW_NONE;
}

/* IsFusedBroadcastOfConstantEffectiveScalar. */
static int fused_scalar_broadcast(const struct dumper *d, uint32_t n)
{
    const struct hlo_node *nd = nd_of(d, n);

    return fusion_comp(d, nd->comp) && strcmp(nd->opcode, "broadcast") == 0 && nd->noperands >= 1 &&
           is_op(d, nd->operands[0], "constant") &&
           hlo_view_effective_scalar(&nd_of(d, nd->operands[0])->shape);
}

/* ShouldMergeIntoUsers (the filter does not change while drawing, so the
 * answer is kept: a tuple parameter's users are counted once). */
static int merge_into_users_once(const struct dumper *d, uint32_t n)
{
    const struct hlo_node *nd = nd_of(d, n);
    uint32_t j, shown = 0;

    if ((strcmp(nd->opcode, "get-tuple-element") == 0 && n != comp_root(d, nd->comp)) ||
        param_constant(d, n) != HLO_VIEW_NONE)
        return 1;
    if (strcmp(nd->opcode, "parameter") != 0 || nd->shape.type != HLO_TUPLE || is_fused(d, n))
        return 0;
    for (j = 0; j < nd->nusers; j++)
        shown += show(d, nd->users[j]) != 0;
    if (shown <= 3)
        return 0;
    for (j = 0; j < nd->nusers; j++) {
        if (show(d, nd->users[j]) && !is_op(d, nd->users[j], "get-tuple-element"))
            return 0;
    }
    return 1;
}

static int merge_into_users(const struct dumper *d, uint32_t n)
{
    if (d->merge[n] < 0)
        d->merge[n] = (int8_t)merge_into_users_once(d, n);
    return d->merge[n];
}

/* The comparison direction of a compare node ("LT" ...), "" when none. */
static void direction(const struct dumper *d, uint32_t n, char *buf, size_t cap)
{
    struct wire s;
    size_t k;

    buf[0] = '\0';
    if (!hlo_view_field(d->v, n, 63, &s, NULL))
        return;
    k = (size_t)(s.end - s.p);
    if (k >= cap)
        k = cap - 1;
    if (k > 0)
        memcpy(buf, s.p, k);
    buf[k] = '\0';
}

/* MatchTrivialComputation: "add", "less-than" ... or NULL. */
static const char *trivial(const struct dumper *d, uint32_t c)
{
    const struct hlo_comp *cp = &d->v->g.comps[c];
    const struct hlo_node *root, *a, *b;
    char dir[8];
    int ok;

    if (cp->n != 3)
        return NULL;
    root = nd_of(d, cp->root);
    if (root->noperands != 2 || !hlo_view_effective_scalar(&root->shape))
        return NULL;
    a = nd_of(d, root->operands[0]);
    b = nd_of(d, root->operands[1]);
    if (strcmp(a->opcode, "parameter") != 0 || strcmp(b->opcode, "parameter") != 0 ||
        !hlo_view_effective_scalar(&a->shape) || !hlo_view_effective_scalar(&b->shape))
        return NULL;
    ok = (a->parameter_number == 0 && b->parameter_number == 1) ||
         (a->parameter_number == 1 && b->parameter_number == 0);
    if (!ok)
        return NULL;
    if (strcmp(root->opcode, "add") == 0 || strcmp(root->opcode, "multiply") == 0 ||
        strcmp(root->opcode, "xor") == 0 || strcmp(root->opcode, "and") == 0 ||
        strcmp(root->opcode, "or") == 0)
        return root->opcode;
    if (strcmp(root->opcode, "minimum") == 0)
        return "min";
    if (strcmp(root->opcode, "maximum") == 0)
        return "max";
    if (strcmp(root->opcode, "compare") != 0)
        return NULL;
    direction(d, cp->root, dir, sizeof(dir));
    if (strcmp(dir, "LE") == 0)
        return "less-or-equal";
    if (strcmp(dir, "GE") == 0)
        return "greater-or-equal";
    if (strcmp(dir, "GT") == 0)
        return "greater-than";
    if (strcmp(dir, "LT") == 0)
        return "less-than";
    if (strcmp(dir, "EQ") == 0)
        return "equal-to";
    if (strcmp(dir, "NE") == 0)
        return "not-equal-to";
    return NULL;
}

/* ShouldShowSubcomputation. */
static int show_subcomp(const struct dumper *d, uint32_t c)
{
    const struct hlo_comp *cp = &d->v->g.comps[c];
    uint32_t i;

    if (fusion_comp(d, c)) {
        uint32_t f = d->v->fusion_of[c];
        if (!show(d, f) || some_operands_omitted(d, f) || !d->opts->show_fusion)
            return 0;
    } else if (trivial(d, c) != NULL) {
        return 0;
    }
    for (i = cp->first; i < cp->first + cp->n; i++) {
        if (show(d, i))
            return 1;
    }
    return 0;
}

/* ShouldShowFusionSubcomputation. */
static int show_fusion_subcomp(const struct dumper *d, uint32_t n)
{
    const struct hlo_node *nd = nd_of(d, n);

    return nd->ncalled > 0 && show_subcomp(d, nd->called[0]);
}

/* GetNodeForEdge: past a get-tuple-element, and down drawn fusions to
 * their fused roots. */
static uint32_t edge_node(const struct dumper *d, uint32_t n)
{
    uint32_t steps;

    if (is_op(d, n, "get-tuple-element") && nd_of(d, n)->noperands > 0)
        n = nd_of(d, n)->operands[0];
    for (steps = 0; steps <= d->v->g.nnodes && is_op(d, n, "fusion") && show_fusion_subcomp(d, n);
         steps++)
        n = comp_root(d, nd_of(d, n)->called[0]);
    return n;
}

/* ---- labels ---- */

/* The colour scheme of node n (GetInstructionColor); depth counts async
 * wrappers. */
static int color(const struct dumper *d, uint32_t n, int depth)
{
    const struct hlo_node *nd = nd_of(d, n);
    const char *op = nd->opcode;
    int param = is_small(d, n) ? C_ORANGE : C_DARK_ORANGE;
    uint32_t j;

    for (j = 0; j < nd->noperands; j++) {
        uint32_t o = nd->operands[j];
        if (is_op(d, o, "parameter") && merge_into_users(d, o) &&
            param_constant(d, o) == HLO_VIEW_NONE)
            return param;
    }
    if (in_list(op, white_ops))
        return C_WHITE;
    if (in_list(op, yellow_ops))
        return C_YELLOW;
    if (in_list(op, green_ops))
        return C_GREEN;
    if (strcmp(op, "bitcast") == 0)
        return is_fused(d, n) ? C_GREEN : C_WHITE;
    if (strncmp(op, "async-", 6) == 0) {
        if (nd->ncalled == 0 || depth >= 8)
            return C_WHITE;
        return color(d, comp_root(d, nd->called[0]), depth + 1);
    }
    if (in_list(op, dark_blue_ops))
        return C_DARK_BLUE;
    if (strcmp(op, "parameter") == 0)
        return param;
    if (in_list(op, purple_ops))
        return C_PURPLE;
    if (in_list(op, gray_ops))
        return C_GRAY;
    if (in_list(op, brown_ops))
        return C_BROWN;
    if (in_list(op, dark_green_ops))
        return C_DARK_GREEN;
    return C_WHITE;
}

/* GetInstructionNodeLabel. */
static void node_label(struct out *o, const struct dumper *d, uint32_t n)
{
    const struct hlo_node *nd = nd_of(d, n);
    const char *name = d->v->names[n];

    if (strcmp(nd->opcode, "parameter") == 0) {
        out_printf(o, "<b>Parameter %lld</b>", (long long)nd->parameter_number);
        return;
    }
    if (strncmp(name, nd->opcode, strlen(nd->opcode)) == 0) {
        out_puts(o, "<b>");
        sanitize_cstr(o, name);
        out_puts(o, "</b>");
        return;
    }
    out_puts(o, "<b>");
    sanitize_cstr(o, name);
    out_puts(o, "</b><br/>");
    sanitize_cstr(o, nd->opcode);
    if (strcmp(nd->opcode, "fusion") == 0) {
        out_putc(o, ':');
        sanitize_cstr(o, nd->fusion_kind);
    }
}

/* Read the stack frame index once. */
static void read_frames(struct dumper *d)
{
    struct frames *f = &d->fr;
    struct wire w = d->v->frames, s;
    uint32_t k[4] = {0, 0, 0, 0};

    f->read = 1;
    for (int pass = 0; pass < 2; pass++) {
        w = d->v->frames;
        while (!wire_eof(&w)) {
            uint32_t fld;
            int t;
            if (wire_key(&w, &fld, &t) != 0)
                break;
            if (t != WIRE_LEN || fld < 1 || fld > 4) {
                if (wire_skip(&w, t) != 0)
                    break;
                continue;
            }
            if (wire_bytes(&w, &s) != 0)
                break;
            if (pass == 0) {
                f->nfiles += fld == 1;
                f->nfunctions += fld == 2;
                f->nlocs += fld == 3;
                f->nframes += fld == 4;
                continue;
            }
            if (fld == 1) {
                f->files[k[0]++] = s;
            } else if (fld == 2) {
                f->functions[k[1]++] = s;
            } else {
                int32_t *dst = fld == 3 ? &f->locs[4 * k[2]++] : &f->frames[2 * k[3]++];
                uint32_t nf = fld == 3 ? 4 : 2;
                memset(dst, 0, nf * sizeof(*dst));
                while (!wire_eof(&s)) {
                    uint32_t sf;
                    int st;
                    uint64_t x;
                    if (wire_key(&s, &sf, &st) != 0)
                        break;
                    if (sf >= 1 && sf <= nf && st == WIRE_VARINT) {
                        if (wire_varint(&s, &x) != 0)
                            break;
                        dst[sf - 1] = (int32_t)(uint32_t)x;
                    } else if (wire_skip(&s, st) != 0) {
                        break;
                    }
                }
            }
        }
        if (pass == 0) {
            f->files = calloc(f->nfiles + 1, sizeof(*f->files));
            f->functions = calloc(f->nfunctions + 1, sizeof(*f->functions));
            f->locs = calloc(4 * (size_t)f->nlocs + 1, sizeof(*f->locs));
            f->frames = calloc(2 * (size_t)f->nframes + 1, sizeof(*f->frames));
            if (!f->files || !f->functions || !f->locs || !f->frames) {
                d->oom = 1;
                f->nfiles = f->nfunctions = f->nlocs = f->nframes = 0;
                return;
            }
        }
    }
}

/* The name id (1-based) of a name table, NULL view when out of range. */
static struct wire name_at(const struct wire *t, uint32_t n, int32_t id)
{
    struct wire none = {NULL, NULL};

    return id >= 1 && (uint32_t)id <= n ? t[id - 1] : none;
}

/* GetInstructionNodeMetadata: op_name, op_type, source and stack frames,
 * one a line. */
static void node_metadata(struct out *o, struct dumper *d, uint32_t n)
{
    const struct hlo_node *nd = nd_of(d, n);
    struct wire m;
    int64_t frame = 0;
    uint32_t steps;
    int lines = 0;

    if (nd->op_name_len > 0) {
        sanitize(o, nd->op_name, nd->op_name_len);
        lines++;
    }
    if (nd->op_type_len > 0) {
        out_puts(o, lines++ ? "\nop_type: " : "op_type: ");
        sanitize(o, nd->op_type, nd->op_type_len);
    }
    if (nd->source_file_len > 0 && nd->source_line != 0) {
        out_puts(o, lines++ ? "\nsource: " : "source: ");
        out_write(o, nd->source_file, nd->source_file_len);
        out_printf(o, ":%d", nd->source_line);
    }
    if (!hlo_view_field(d->v, n, 7, &m, NULL))
        return;
    while (!wire_eof(&m)) {
        uint32_t f;
        int t;
        uint64_t x;
        if (wire_key(&m, &f, &t) != 0)
            break;
        if (f == 15 && t == WIRE_VARINT) {
            if (wire_varint(&m, &x) != 0)
                break;
            frame = (int32_t)(uint32_t)x;
        } else if (wire_skip(&m, t) != 0) {
            break;
        }
    }
    if (frame == 0)
        return;
    if (!d->fr.read)
        read_frames(d);
    for (steps = 0; frame > 0 && (uint64_t)frame <= d->fr.nframes && steps < d->fr.nframes;
         steps++) {
        const int32_t *fr = &d->fr.frames[2 * (frame - 1)], *loc;
        struct wire file, func;
        if (fr[0] < 1 || (uint32_t)fr[0] > d->fr.nlocs)
            break;
        loc = &d->fr.locs[4 * (fr[0] - 1)];
        file = name_at(d->fr.files, d->fr.nfiles, loc[0]);
        func = name_at(d->fr.functions, d->fr.nfunctions, loc[1]);
        if (file.p == file.end && func.p == func.end && loc[2] == 0 && loc[3] == 0)
            break;
        if (lines++)
            out_putc(o, '\n');
        if (file.p != file.end)
            out_write(o, file.p, (size_t)(file.end - file.p));
        out_putc(o, ':');
        if (func.p != func.end)
            out_write(o, func.p, (size_t)(func.end - func.p));
        out_printf(o, ":%d", loc[2]);
        if (loc[3] != 0)
            out_printf(o, ":%d", loc[3]);
        frame = fr[1];
    }
}

/* A number as absl::StrCat prints a double. */
static void put_num(struct out *o, double v)
{
    out_printf(o, "%.6g", v);
}

/* The number of a JSON member (numbers or numeric strings), def when absent. */
static double jnum(const cJSON *obj, const char *key, double def)
{
    const cJSON *x = cJSON_GetObjectItemCaseSensitive(obj, key);

    if (cJSON_IsNumber(x))
        return x->valuedouble;
    if (cJSON_IsString(x) && x->valuestring != NULL)
        return strtod(x->valuestring, NULL);
    return def;
}

/* "{1,2}" of a JSON list of numbers. */
static void jlist(struct out *o, const cJSON *obj, const char *key)
{
    const cJSON *l = cJSON_GetObjectItemCaseSensitive(obj, key), *x;
    int n = 0;

    out_putc(o, '{');
    cJSON_ArrayForEach(x, l)
    {
        out_printf(o, "%s%lld", n++ ? "," : "",
                   (long long)(cJSON_IsString(x) ? strtoll(x->valuestring, NULL, 10)
                                                 : (long long)x->valuedouble));
    }
    out_putc(o, '}');
}

/* Whether JSON list key of obj has elements. */
static int jnonempty(const cJSON *obj, const char *key)
{
    return cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(obj, key)) > 0;
}

/* The next property of a backend-config list: "<br/>" between them. */
static void prop(struct out *o, int *n, const char *key)
{
    if ((*n)++ > 0)
        out_puts(o, "<br/>");
    if (key[0] != '\0') {
        out_puts(o, key);
        out_putc(o, '=');
    }
}

/* se::dnn::ActivationModeString of a JSON enum (name or number). */
static const char *activation(const cJSON *x, int *leaky)
{
    static const char *const names[] = {"kNone", "kSigmoid",  "kRelu", "kRelu6",     "kReluX",
                                        "kTanh", "kBandPass", "kElu",  "kLeakyRelu", "kGeluExact"};
    static const char *const out[] = {"none", "sigmoid",  "relu", "relu6",     "reluX",
                                      "tanh", "bandpass", "elu",  "leakyrelu", "geluexact"};
    int i = 0, k;

    if (cJSON_IsString(x)) {
        for (k = 0; k < 10; k++) {
            if (strcmp(x->valuestring, names[k]) == 0)
                i = k;
        }
    } else if (cJSON_IsNumber(x) && x->valuedouble >= 0 && x->valuedouble < 10) {
        i = (int)x->valuedouble;
    }
    *leaky = i == 8;
    return out[i];
}

/* The cuDNN convolution properties (ExtractCudnnConvBackendConfigProps). */
static int conv_props(struct out *o, const cJSON *cfg)
{
    const cJSON *algo = cJSON_GetObjectItemCaseSensitive(cfg, "algorithm"), *knobs, *k;
    const cJSON *math = cJSON_GetObjectItemCaseSensitive(algo, "math_type");
    double scale = jnum(cfg, "conv_result_scale", 0), side = jnum(cfg, "side_input_scale", 0);
    const char *mode;
    int n = 0, leaky, count = 0;

    mode = activation(cJSON_GetObjectItemCaseSensitive(cfg, "activation_mode"), &leaky);
    if (scale != 1)
        n++;
    if (side != 0 && side != 1)
        n++;
    n += leaky + 2;
    if (n > 1)
        out_puts(o, "<br/>");
    n = 0;
    if (scale != 1) {
        prop(o, &n, "conv_result_scale");
        put_num(o, scale);
    }
    if (side != 0 && side != 1) {
        prop(o, &n, "side_input_scale");
        put_num(o, side);
    }
    if (leaky) {
        prop(o, &n, "leakyrelu_alpha");
        put_num(o, jnum(cfg, "leakyrelu_alpha", 0));
    }
    prop(o, &n, "activation_mode");
    out_puts(o, mode);
    prop(o, &n, "algo");
    if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(algo, "is_cudnn_frontend"))) {
        out_printf(o, "eng%lld{", (long long)jnum(algo, "algo_id", 0));
        knobs = cJSON_GetObjectItemCaseSensitive(algo, "tuning_knobs");
        /* the knobs by key (a btree_map): JSON keeps the proto map's order,
         * which protobuf writes sorted by key for integer keys */
        cJSON_ArrayForEach(k, knobs)
        {
            out_printf(o, "%sk%lld=%lld", count++ ? "," : "", strtoll(k->string, NULL, 10),
                       (long long)jnum(knobs, k->string, 0));
        }
        out_putc(o, '}');
    } else {
        out_printf(o, "%lld", (long long)jnum(algo, "algo_id", 0));
        if ((cJSON_IsString(math) && strcmp(math->valuestring, "TENSOR_OP_MATH") == 0) ||
            (cJSON_IsNumber(math) && math->valuedouble == 1))
            out_puts(o, "#TC");
    }
    return 1;
}

/* The cuBLAS GEMM properties (ExtractGemmBackendConfigProps). */
static int gemm_props(struct out *o, const cJSON *cfg, const struct hlo_node *nd)
{
    const cJSON *dims = cJSON_GetObjectItemCaseSensitive(cfg, "dot_dimension_numbers");
    const cJSON *algo = cJSON_GetObjectItemCaseSensitive(cfg, "selected_algorithm");
    const cJSON *epi = cJSON_GetObjectItemCaseSensitive(cfg, "epilogue");
    double ar = jnum(cfg, "alpha_real", 0), ai = jnum(cfg, "alpha_imag", 0);
    double beta = jnum(cfg, "beta", 0);
    int complex = nd->shape.type == 15 || nd->shape.type == 18, n = 0, total = 1;
    int alpha = complex ? (ar != 1 || ai != 1) * 2 : ar != 1;
    int has_epi = (cJSON_IsString(epi) && strcmp(epi->valuestring, "DEFAULT") != 0) ||
                  (cJSON_IsNumber(epi) && epi->valuedouble != 0);

    total += alpha + (beta != 0 && beta != 1) + (algo != NULL) + has_epi;
    if (total > 1)
        out_puts(o, "<br/>");
    if (alpha && complex) {
        prop(o, &n, "alpha_real");
        put_num(o, ar);
        prop(o, &n, "alpha_imag");
        put_num(o, ar); /* sic: XLA prints alpha_real twice */
    } else if (alpha) {
        prop(o, &n, "alpha");
        put_num(o, ar);
    }
    if (beta != 0 && beta != 1) {
        prop(o, &n, "beta");
        put_num(o, beta);
    }
    prop(o, &n, "");
    if (jnonempty(dims, "lhs_batch_dimensions")) {
        out_puts(o, "lhs_batch_dims=");
        jlist(o, dims, "lhs_batch_dimensions");
        out_puts(o, "<br/>");
    }
    out_puts(o, "lhs_contracting_dims=");
    jlist(o, dims, "lhs_contracting_dimensions");
    out_puts(o, "<br/>");
    if (jnonempty(dims, "rhs_batch_dimensions")) {
        out_puts(o, "rhs_batch_dims=");
        jlist(o, dims, "rhs_batch_dimensions");
        out_puts(o, "<br/>");
    }
    out_puts(o, "rhs_contracting_dims=");
    jlist(o, dims, "rhs_contracting_dimensions");
    if (algo != NULL) {
        prop(o, &n, "algorithm");
        out_printf(o, "%lld", (long long)jnum(cfg, "selected_algorithm", 0));
    }
    if (has_epi) {
        prop(o, &n, "epilogue");
        if (cJSON_IsString(epi))
            out_puts(o, epi->valuestring);
        else
            out_printf(o, "%d", (int)epi->valuedouble);
    }
    return 1;
}

/* Whether custom-call target t is a DNN convolution / a cuBLAS GEMM. */
static int dnn_conv(const char *t)
{
    return strcmp(t, "__cudnn$convForward") == 0 || strcmp(t, "__cudnn$convBackwardInput") == 0 ||
           strcmp(t, "__cudnn$convBackwardFilter") == 0 ||
           strcmp(t, "__cudnn$convBiasActivationForward") == 0 ||
           strcmp(t, "__cudnn$convForwardGraph") == 0;
}

static int cublas_gemm(const char *t)
{
    return strcmp(t, "__cublas$gemm") == 0 || strcmp(t, "__cublas$lt$matmul") == 0 ||
           strcmp(t, "__cublas$lt$matmul$f8") == 0;
}

/* GetInstructionNodeBackendConfig. */
static void node_backend_config(struct out *o, const struct dumper *d, uint32_t n)
{
    const struct hlo_node *nd = nd_of(d, n);
    int conv = 0, gemm = 0;

    if (strcmp(nd->opcode, "custom-call") == 0 && nd->custom_call_target != NULL) {
        conv = dnn_conv(nd->custom_call_target);
        gemm = cublas_gemm(nd->custom_call_target);
    }
    if ((conv || gemm) && nd->backend_config != NULL && nd->backend_config_len > 0) {
        cJSON *root = cJSON_ParseWithLength(nd->backend_config, nd->backend_config_len);
        const cJSON *cfg = cJSON_GetObjectItemCaseSensitive(root, conv ? "cudnn_conv_backend_config"
                                                                       : "gemm_backend_config");
        int done = 0;
        if (cJSON_IsObject(root))
            done = conv ? conv_props(o, cJSON_IsObject(cfg) ? cfg : root)
                        : gemm_props(o, cJSON_IsObject(cfg) ? cfg : root, nd);
        cJSON_Delete(root);
        if (done)
            return;
    }
    if (!d->opts->show_backend_config || nd->backend_config == NULL || nd->backend_config_len == 0)
        return;
    out_puts(o, "backend_config=\"");
    out_write(o, nd->backend_config, nd->backend_config_len);
    out_putc(o, '"');
}

/* GetInterestingProducer: past bitcasts, copies, get-tuple-elements of
 * tuples and calls. */
static uint32_t producer(const struct dumper *d, uint32_t n)
{
    int64_t idx[64];
    int top = 0;
    uint32_t steps;

    for (steps = 0; steps <= d->v->g.nnodes; steps++) {
        const struct hlo_node *nd = nd_of(d, n);
        if ((strcmp(nd->opcode, "bitcast") == 0 || strcmp(nd->opcode, "copy") == 0) &&
            nd->noperands > 0) {
            n = nd->operands[0];
        } else if (strcmp(nd->opcode, "get-tuple-element") == 0 && nd->noperands > 0 && top < 64) {
            idx[top++] = nd->tuple_index;
            n = nd->operands[0];
        } else if (strcmp(nd->opcode, "tuple") == 0 && top > 0) {
            if (idx[top - 1] < 0 || (uint64_t)idx[top - 1] >= nd->noperands)
                return n;
            n = nd->operands[idx[--top]];
        } else if (strcmp(nd->opcode, "call") == 0 && nd->ncalled > 0) {
            n = comp_root(d, nd->called[0]);
        } else {
            return n;
        }
    }
    return n;
}

/* Whether attribute line s[0..n) names subcomputations (left out with
 * PrintSubcomputationMode::kOff). */
static int subcomp_attr(const char *s, size_t n)
{
    static const char *const keys[] = {"calls=",
                                       "to_apply=",
                                       "condition=",
                                       "body=",
                                       "true_computation=",
                                       "false_computation=",
                                       "branch_computations=",
                                       "called_computations=",
                                       "select=",
                                       "scatter="};
    size_t i, k;

    for (i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
        k = strlen(keys[i]);
        if (n >= k && memcmp(s, keys[i], k) == 0)
            return 1;
    }
    return 0;
}

/* Whether s[0..n) starts with prefix. */
static int starts(const char *s, size_t n, const char *prefix)
{
    size_t k = strlen(prefix);

    return n >= k && memcmp(s, prefix, k) == 0;
}

/* The extra attributes of node n, one a line (ExtraAttributesToString). */
static int attr_lines(struct out *o, struct dumper *d, uint32_t n, int lines)
{
    struct hlo_view_parts p;
    const char *s;
    size_t len, i;
    char *copy;

    if (hlo_view_instr_text(d->v, n, 0, &d->scratch, &s, &len, &copy) != 0) {
        d->oom = 1;
        return lines;
    }
    if (hlo_view_split(s, len, &p) == 0) {
        i = p.attrs;
        while (i + 2 <= len && s[i] == ',' && s[i + 1] == ' ') {
            size_t start = i + 2, end = hlo_view_scan(s, len, start, ','), k = end - start;
            const char *a = s + start;
            i = end;
            if (subcomp_attr(a, k))
                continue;
            if (lines++)
                out_puts(o, "<br/>");
            if ((starts(a, k, "replica_groups=") || starts(a, k, "source_target_pairs=") ||
                 starts(a, k, "control-predecessors=")) &&
                k > 128) {
                sanitize(o, a, 125);
                out_puts(o, "...");
            } else if (starts(a, k, "feature_group_count=")) {
                out_puts(o, "<b>");
                sanitize(o, a, k);
                out_puts(o, "</b>");
            } else {
                sanitize(o, a, k);
            }
        }
    }
    free(copy);
    return lines;
}

/* GetInstructionNodeExtraInfo. */
static void extra_info(struct out *o, struct dumper *d, uint32_t n)
{
    const struct hlo_view *v = d->v;
    const struct hlo_node *nd = nd_of(d, n);
    uint32_t caller, prod;
    int lines = 0;
    char *shape;

    caller = v->only_caller[nd->comp];
    if (strcmp(nd->opcode, "parameter") == 0 && caller != HLO_VIEW_NONE &&
        is_op(d, caller, "call") && nd->parameter_number >= 0 &&
        (uint64_t)nd->parameter_number < nd_of(d, caller)->noperands) {
        prod = producer(d, nd_of(d, caller)->operands[nd->parameter_number]);
        out_puts(o, "<i>from ");
        sanitize_cstr(o, v->names[prod]);
        out_puts(o, " in ");
        if (nd_of(d, prod)->comp == v->g.entry)
            out_puts(o, "the ENTRY computation");
        else
            sanitize_cstr(o, v->comp_names[nd_of(d, prod)->comp]);
        out_puts(o, "</i>");
        lines++;
    }
    lines = attr_lines(o, d, n, lines);
    if (strcmp(nd->opcode, "fusion") == 0 && show_fusion_subcomp(d, n))
        return;
    if (lines)
        out_puts(o, "<br/>");
    hlo_shape_print(&d->shape, &nd->shape,
                    strcmp(nd->opcode, "tuple") != 0 && multidim(&nd->shape, 0));
    shape = take(d, &d->shape);
    if (shape == NULL)
        return;
    if (strlen(shape) > 64) {
        sanitize(o, shape, 61);
        out_puts(o, "...");
    } else {
        sanitize_cstr(o, shape);
    }
    free(shape);
}

/* The constant's one-line literal from its printed text (malloc'ed), or
 * NULL when it has none, it was elided or it is longer than 64 bytes. */
static char *literal(struct dumper *d, uint32_t c)
{
    struct hlo_view_parts p;
    struct wire lit;
    const char *s;
    size_t n, k;
    char *copy, *r = NULL;

    if (!hlo_view_field(d->v, c, 8, &lit, NULL))
        return NULL;
    if (hlo_view_instr_text(d->v, c, 0, &d->scratch, &s, &n, &copy) != 0) {
        d->oom = 1;
        return NULL;
    }
    if (hlo_view_split(s, n, &p) == 0) {
        k = p.operands_end - p.operands;
        if (k <= 64 && !(k == 5 && memcmp(s + p.operands, "{...}", 5) == 0)) {
            r = malloc(k + 1);
            if (r != NULL) {
                memcpy(r, s + p.operands, k);
                r[k] = '\0';
            } else {
                d->oom = 1;
            }
        }
    }
    free(copy);
    return r;
}

/* Whether a shape is an array. */
static int is_array(const struct hlo_shape *s)
{
    return s->type > 0 && s->type != HLO_TUPLE && s->type != HLO_OPAQUE && s->type != HLO_TOKEN;
}

/* stringify_constant of GetInstructionNodeInlinedOperands. */
static void constant_str(struct out *o, struct dumper *d, uint32_t c, const struct hlo_shape *shape)
{
    const struct hlo_node *cn = nd_of(d, c);
    const char *name = d->v->names[c];
    uint32_t i;
    int zero = 0;
    char *lit;

    for (i = 0; is_array(shape) && i < shape->ndims; i++)
        zero |= shape->dims[i] == 0;
    if (zero) {
        out_puts(o, "{} (");
        hlo_shape_print(o, &cn->shape, 0);
        out_putc(o, ')');
        return;
    }
    if (is_array(shape) && hlo_shape_elements(&cn->shape) <= 8) {
        lit = literal(d, c);
        if (lit != NULL) {
            hlo_shape_print(o, shape, 0);
            out_putc(o, ' ');
            out_puts(o, lit);
            free(lit);
            return;
        }
    }
    if (strncmp(name, "constant", 8) != 0)
        out_puts(o, "constant ");
    out_puts(o, name);
    out_putc(o, ' ');
    hlo_shape_print(o, shape, 0);
}

/* "tuple-element N of NAME SHAPE" of get-tuple-element g. */
static void tuple_element(struct out *o, struct dumper *d, uint32_t g)
{
    const struct hlo_node *gn = nd_of(d, g);

    out_printf(o, "tuple-element %lld of %s ", (long long)gn->tuple_index,
               gn->noperands > 0 ? d->v->names[gn->operands[0]] : "");
    hlo_shape_print(o, &gn->shape, 1);
}

/* GetInstructionNodeInlinedOperands. */
static void inlined_operands(struct out *o, struct dumper *d, uint32_t n)
{
    const struct hlo_node *nd = nd_of(d, n);
    uint32_t i, lines = 0;

    for (i = 0; i < nd->noperands; i++) {
        uint32_t op = nd->operands[i], c;
        const struct hlo_node *on = nd_of(d, op);
        int konst = strcmp(on->opcode, "constant") == 0,
            bcast = !konst && fused_scalar_broadcast(d, op);
        if (!konst && !bcast && !merge_into_users(d, op))
            continue;
        if (lines)
            out_puts(o, "<br/>");
        if (nd->noperands > 1)
            out_printf(o, "<b>operand %u</b> = ", i);
        else
            out_puts(o, "<b>operand</b> = ");
        if (konst) {
            constant_str(o, d, op, &on->shape);
        } else if (bcast) {
            constant_str(o, d, on->operands[0], &on->shape);
        } else if (strcmp(on->opcode, "parameter") == 0) {
            c = param_constant(d, op);
            if (c != HLO_VIEW_NONE)
                constant_str(o, d, c, &nd_of(d, c)->shape);
            else
                out_printf(o, "Parameter %lld", (long long)on->parameter_number);
        } else if (strcmp(on->opcode, "get-tuple-element") == 0) {
            tuple_element(o, d, op);
        } else {
            out_puts(o, d->v->names[op]);
        }
        lines++;
        if (lines == 32 && i + 1 < nd->noperands) {
            out_puts(o, "<br/>...");
            lines++;
            break;
        }
    }
    if (strcmp(nd->opcode, "parameter") == 0 && is_fused(d, n)) {
        const struct hlo_node *fusion = nd_of(d, d->v->fusion_of[nd->comp]);
        if (nd->parameter_number >= 0 && (uint64_t)nd->parameter_number < fusion->noperands &&
            is_op(d, fusion->operands[nd->parameter_number], "get-tuple-element")) {
            if (lines)
                out_puts(o, "<br/>");
            tuple_element(o, d, fusion->operands[nd->parameter_number]);
        }
    }
}

/* GetInstructionTrivialComputationStr. */
static void trivial_str(struct out *o, const struct dumper *d, uint32_t n)
{
    const struct hlo_node *nd = nd_of(d, n);
    uint32_t i;
    int lines = 0;

    if (strcmp(nd->opcode, "fusion") == 0)
        return;
    for (i = 0; i < nd->ncalled; i++) {
        const char *t = trivial(d, nd->called[i]);
        if (t == NULL)
            continue;
        if (lines++)
            out_puts(o, "<br/>");
        if (nd->ncalled == 1)
            out_puts(o, "Subcomputation: <b>");
        else
            out_printf(o, "Subcomputation %u: <b>", i);
        sanitize_cstr(o, t);
        out_puts(o, "</b>");
    }
}

/* ---- edges ---- */

/* The slot of pair key in the count table (open addressing). */
static size_t pair_slot(const struct dumper *d, uint64_t key)
{
    size_t i = (size_t)((key * 0x9e3779b97f4a7c15ull) >> 20) & (d->pair_cap - 1);

    while (d->pair_keys[i] != 0 && d->pair_keys[i] != key)
        i = (i + 1) & (d->pair_cap - 1);
    return i;
}

/* The key of (from, to). */
static uint64_t pair_key(uint32_t from, uint32_t to)
{
    return ((uint64_t)from << 32 | (uint64_t)(to + 1u)) + 1;
}

/* How many edges (from, to) there are. */
static uint32_t pair_count(const struct dumper *d, uint32_t from, uint32_t to)
{
    size_t i;

    if (d->pair_cap == 0)
        return 0;
    i = pair_slot(d, pair_key(from, to));
    return d->pair_keys[i] != 0 ? d->pair_counts[i] : 0;
}

/* Record edge (from, to) as number next_edge (edge_ids_.insert). */
static void add_pair(struct dumper *d, uint32_t from, uint32_t to)
{
    uint64_t key = pair_key(from, to);
    size_t i;

    if (d->npairs * 2 >= d->pair_cap) {
        size_t cap = d->pair_cap ? d->pair_cap * 2 : 1024, old = d->pair_cap, j;
        uint64_t *keys = calloc(cap, sizeof(*keys)), *ok = d->pair_keys;
        uint32_t *counts = calloc(cap, sizeof(*counts)), *oc = d->pair_counts;
        if (keys == NULL || counts == NULL) {
            free(keys);
            free(counts);
            d->oom = 1;
            return;
        }
        d->pair_keys = keys;
        d->pair_counts = counts;
        d->pair_cap = cap;
        for (j = 0; j < old; j++) {
            if (ok[j] != 0) {
                size_t s = pair_slot(d, ok[j]);
                keys[s] = ok[j];
                counts[s] = oc[j];
            }
        }
        free(ok);
        free(oc);
    }
    i = pair_slot(d, key);
    if (d->pair_keys[i] == 0) {
        d->pair_keys[i] = key;
        d->npairs++;
    }
    d->pair_counts[i]++;
    if (d->nedges == d->cap) {
        size_t cap = d->cap ? d->cap * 2 : 256;
        struct edge *e = realloc(d->edges, cap * sizeof(*e));
        if (e == NULL) {
            d->oom = 1;
            return;
        }
        d->edges = e;
        d->cap = cap;
    }
    d->edges[d->nedges++] = (struct edge){from, to, d->next_edge++};
}

/* Start the next line of edges_. */
static void edge_line(struct dumper *d)
{
    if (out_len(&d->edgetxt) > 0)
        out_putc(&d->edgetxt, '\n');
}

/* add_edge of AddInstructionIncomingEdges. */
static void add_edge(struct dumper *d, uint32_t from, uint32_t to, uint32_t operand, int control)
{
    const struct hlo_view *v = d->v;
    struct out *o = &d->edgetxt;

    if (pair_count(d, from, to) > 64)
        return;
    from = edge_node(d, from);
    if (!show(d, from) || is_op(d, from, "constant") || fused_scalar_broadcast(d, from) ||
        merge_into_users(d, from))
        return;
    add_pair(d, from, to);
    edge_line(d);
    out_printf(o, "%u -> %u [arrowhead=%s tooltip=\"%s -> %s\" ", from + 1, to + 1,
               is_small(d, from) ? "empty" : "normal", v->names[from], v->names[to]);
    if (control)
        out_puts(o, "style=\"dotted\" color=\"gray\" label=\"ctrl\"");
    else if (nd_of(d, to)->noperands > 1)
        out_printf(o, " headlabel=\"%u\", labeldistance=2", operand);
    out_puts(o, "];");
}

/* AddInstructionIncomingEdges. */
static void incoming_edges(struct dumper *d, uint32_t n)
{
    const struct hlo_node *nd = nd_of(d, n);
    uint32_t i;

    if (strcmp(nd->opcode, "parameter") == 0 && is_fused(d, n)) {
        const struct hlo_node *fusion = nd_of(d, d->v->fusion_of[nd->comp]);
        if (nd->comp != d->comp && nd->parameter_number >= 0 &&
            (uint64_t)nd->parameter_number < fusion->noperands)
            add_edge(d, fusion->operands[nd->parameter_number], n, 0, 0);
        return;
    }
    for (i = 0; i < nd->noperands; i++)
        add_edge(d, nd->operands[i], n, i, 0);
    for (i = 0; i < d->v->nctrl[n]; i++)
        add_edge(d, d->v->ctrl[n][i], n, 0, 1);
}

/* ---- the dump ---- */

/* style="...", fontcolor=..., color=..., fillcolor=... */
static void style(struct out *o, const char *st, const char *font, const char *stroke,
                  const char *fill)
{
    out_printf(o, "style=\"%s\", fontcolor=\"%s\", color=\"%s\", fillcolor=\"%s\"", st, font,
               stroke, fill);
}

/* DumpInstruction. */
static void dump_instr(struct dumper *d, uint32_t n)
{
    const struct hlo_node *nd = nd_of(d, n);
    struct out *o = &d->body;
    char *label, *meta, *backend, *extra, *inl, *triv;
    const char *shape = strcmp(nd->opcode, "while") == 0 ? "ellipse" : "rect";
    const char *fill, *stroke, *font;
    double stat;
    int c;

    if ((strcmp(nd->opcode, "constant") == 0 || fused_scalar_broadcast(d, n)) &&
        n != comp_root(d, nd->comp))
        return;
    if (merge_into_users(d, n))
        return;
    if (strcmp(nd->opcode, "fusion") == 0 && show_fusion_subcomp(d, n))
        return;
    d->node_id[n] = d->next_node++;
    node_label(&d->tmp, d, n);
    label = take(d, &d->tmp);
    node_metadata(&d->tmp, d, n);
    meta = take(d, &d->tmp);
    node_backend_config(&d->tmp, d, n);
    backend = take(d, &d->tmp);
    extra_info(&d->tmp, d, n);
    extra = take(d, &d->tmp);
    inlined_operands(&d->tmp, d, n);
    inl = take(d, &d->tmp);
    trivial_str(&d->tmp, d, n);
    triv = take(d, &d->tmp);
    incoming_edges(d, n);
    c = color(d, n, 0);
    if (deemphasized(d, n))
        c = C_DASHED;
    if (filter(d, n) == F_HIGHLIGHT) {
        shape = "diamond";
        c = C_DARK_RED;
    }
    fill = schemes[c][1];
    stroke = schemes[c][2];
    font = schemes[c][3];
    if (statistic(d, n, &stat)) {
        fill = stat_fill(stat);
        stroke = "#c2c2c2";
        font = stat < 60 ? "black" : "white";
    } else if (d->module_stats) {
        fill = "#f5f5f5";
        stroke = "#c2c2c2";
        font = "black";
    }
    if (label && meta && backend && extra && inl && triv) {
        out_printf(o, "%u [label=<%s", n + 1, label);
        if (*triv)
            out_printf(o, "<br/>%s", triv);
        if (*extra)
            out_printf(o, "<br/>%s", extra);
        if (*inl)
            out_printf(o, "<br/>%s", inl);
        if (*backend)
            out_printf(o, "<br/>%s", backend);
        out_printf(o, ">, shape=%s, tooltip=\"%s\", ", shape, meta);
        style(o, schemes[c][0], font, stroke, fill);
        out_puts(o, "];\n");
    }
    free(label);
    free(meta);
    free(backend);
    free(extra);
    free(inl);
    free(triv);
}

static void dump_comp(struct dumper *d, uint32_t c);

/* DumpSubcomputation: the cluster of subcomputation c called by parent. */
static void dump_subcomp(struct dumper *d, uint32_t c, uint32_t parent)
{
    const struct hlo_view *v = d->v;
    struct out *o = &d->body;
    const struct hlo_node *pn = nd_of(d, parent);
    int fusion = strcmp(pn->opcode, "fusion") == 0;
    char *extra = NULL, *backend = NULL;

    if (!fusion) {
        uint32_t from = edge_node(d, comp_root(d, c));
        add_pair(d, from, parent);
        edge_line(d);
        out_printf(&d->edgetxt,
                   "%u -> %u [ltail=\"cluster_%u\", style=\"dashed\" tooltip=\"%s -> %s\"];",
                   from + 1, parent + 1, c + 1, v->comp_names[c], v->names[parent]);
    }
    if (d->cluster_id[c] != 0)
        return;
    d->cluster_id[c] = d->next_cluster++;
    out_printf(o, "subgraph cluster_%u {\n", c + 1);
    if (fusion) {
        int hi = filter(d, parent) == F_HIGHLIGHT;
        double stat;
        int has = statistic(d, parent, &stat);
        const char *fill = hi ? "#ffcdd2" : "#f5f5f5", *stroke = hi ? "#b71c1c" : "#c2c2c2";
        if (!hi && (d->module_stats || has)) {
            fill = has ? stat_fill(stat) : "#f5f5f5";
            stroke = "#c2c2c2";
        }
        extra_info(&d->tmp, d, parent);
        extra = take(d, &d->tmp);
        node_backend_config(&d->tmp, d, parent);
        backend = take(d, &d->tmp);
        out_printf(o, "style=\"rounded,filled,bold\"; fillcolor=\"%s\"; color=\"%s;\"\n", fill,
                   stroke);
        out_puts(o, "label = <Fused expression for <b>");
        sanitize_cstr(o, v->names[parent]);
        out_puts(o, "</b><br/>");
        sanitize_cstr(o, strcmp(pn->fusion_kind, "kLoop") == 0     ? "loop fusion"
                         : strcmp(pn->fusion_kind, "kInput") == 0  ? "input fusion"
                         : strcmp(pn->fusion_kind, "kOutput") == 0 ? "output fusion"
                         : strcmp(pn->fusion_kind, "kCustom") == 0 ? "custom fusion"
                                                                   : "fusion");
        if (extra && *extra)
            out_printf(o, "<br/>%s", extra);
        if (backend && *backend)
            out_printf(o, "<br/>%s", backend);
    } else {
        out_puts(o, "style=rounded; color=black;\nlabel = <Subcomputation for <b>");
        sanitize_cstr(o, v->names[parent]);
        out_puts(o, "</b><br/>");
        sanitize_cstr(o, v->comp_names[c]);
    }
    free(extra);
    free(backend);
    out_puts(o, ">;\nlabelloc = t;\ntooltip = \" \";\n");
    d->depth++;
    dump_comp(d, c);
    d->depth--;
    out_printf(o, "\n}  // cluster_%u\n\n", c + 1);
}

/* DumpComputation: computation c's shown instructions by id, each after
 * the subcomputations it calls. */
static void dump_comp(struct dumper *d, uint32_t c)
{
    const struct hlo_comp *cp = &d->v->g.comps[c];
    uint32_t i, j;

    for (i = 0; i < cp->n && !d->oom && !out_failed(&d->body); i++) {
        uint32_t n = d->v->by_id[cp->first + i].ix;
        const struct hlo_node *nd = nd_of(d, n);
        if (!show(d, n))
            continue;
        for (j = 0; j < nd->ncalled && d->depth < HLO_VIEW_MAX_NESTING; j++) {
            if (show_subcomp(d, nd->called[j]))
                dump_subcomp(d, nd->called[j], n);
        }
        dump_instr(d, n);
    }
}

/* DumpRootTag. */
static void dump_root_tag(struct dumper *d)
{
    uint32_t from = edge_node(d, comp_root(d, d->comp));

    if (!show(d, from) || is_op(d, from, "constant") || fused_scalar_broadcast(d, from))
        return;
    d->root_node = d->next_node++;
    add_pair(d, from, HLO_VIEW_NONE);
    edge_line(d);
    out_printf(&d->edgetxt, "%u -> cluster_%u [tooltip=\" \"];", from + 1, d->comp + 1);
    out_printf(&d->body, "cluster_%u [label=<ROOT>, shape=circle, tooltip=\" \", ", d->comp + 1);
    style(&d->body, schemes[C_BROWN][0], schemes[C_BROWN][3], schemes[C_BROWN][2],
          schemes[C_BROWN][1]);
    out_puts(&d->body, "];\n");
}

/* One hover rule of the stylesheet, '#' already written as %23. */
static void css_rule(struct out *o, int *n, const char *type, int64_t id, int64_t edge,
                     const char *color)
{
    if ((*n)++ > 0)
        out_putc(o, '\n');
    out_printf(o,
               "  %%23%s%lld:hover ~ %%23edge%lld text { fill: %%23%s; }\n"
               "  %%23%s%lld:hover ~ %%23edge%lld path { stroke: %%23%s; stroke-width: .2em; }\n"
               "  %%23%s%lld:hover ~ %%23edge%lld polygon { fill: %%23%s; stroke: %%23%s; "
               "stroke-width: .2em; }\n",
               type, (long long)id, (long long)edge, color, type, (long long)id, (long long)edge,
               color, type, (long long)id, (long long)edge, color, color);
}

/* Header: the graph's label and stylesheet. */
static void header(struct dumper *d, struct out *o)
{
    const struct hlo_view *v = d->v;
    uint32_t callers[64], nc, i;
    size_t k;
    int n = 0;

    out_puts(o, "digraph G {\nrankdir = TB;\ncompound = true;\nlabel = <<b>");
    out_puts(o, d->label);
    out_puts(o, "<br/>Computation ");
    out_puts(o, v->comp_names[d->comp]);
    if (fusion_comp(d, d->comp)) {
        out_printf(o, " (in fusion instruction %s)", v->names[v->fusion_of[d->comp]]);
    } else if (d->comp == v->g.entry) {
        out_puts(o, "<br/>ENTRY computation");
    } else {
        nc = hlo_view_callers(v, d->comp, callers, 64);
        for (i = 0; i < nc && i < 64; i++)
            out_printf(o, "%s%s", i == 0 ? "<br/>Caller instructions: " : ", ",
                       v->names[callers[i]]);
    }
    out_puts(o, "</b>>;\nlabelloc = t;\n"
                "// Disable the tooltip.  Interestingly, \"\" doesn't work!\n"
                "tooltip = \" \";\n"
                "// DOT graphs accept a stylesheet as a URI.  So naturally, an inline\n"
                "// stylesheet is a data URI!\n"
                "stylesheet=<\n"
                "  data:text/css,\n"
                "  @import url(https://fonts.googleapis.com/css?family=Roboto:400,700);\n"
                "  svg text {\n"
                "    font-family: 'Roboto';\n"
                "    font-size: 12px;\n"
                "  }\n\n  ");
    for (k = 0; k < d->nedges; k++) {
        const struct edge *e = &d->edges[k];
        int64_t from = d->node_id[e->from];
        int64_t to = e->to == HLO_VIEW_NONE ? d->root_node : d->node_id[e->to];
        if (from == 0 || to == 0)
            continue; /* an edge to a node never drawn: XLA aborts */
        css_rule(o, &n, "node", from, e->id, "1976d2");
        css_rule(o, &n, "node", to, e->id, "d32f2f");
        if (e->to == HLO_VIEW_NONE)
            continue;
        if (is_fused(d, e->from) && comp_root(d, nd_of(d, e->from)->comp) == e->from &&
            d->cluster_id[nd_of(d, e->from)->comp] != 0)
            css_rule(o, &n, "clust", d->cluster_id[nd_of(d, e->from)->comp], e->id, "1976d2");
        if (is_fused(d, e->to) && is_op(d, e->to, "parameter") &&
            d->cluster_id[nd_of(d, e->to)->comp] != 0)
            css_rule(o, &n, "clust", d->cluster_id[nd_of(d, e->to)->comp], e->id, "d32f2f");
    }
    out_puts(o, "\n>\n\n");
}

/* Set up d for computation c. 0 or -ENOMEM. */
static int dumper_init(struct dumper *d, const struct hlo_view *v, uint32_t c,
                       const struct hlo_dot_opts *opts)
{
    uint32_t nn = v->g.nnodes ? v->g.nnodes : 1, i;
    double stat;

    memset(d, 0, sizeof(*d));
    d->v = v;
    d->opts = opts;
    d->comp = c;
    d->label = "";
    d->next_node = d->next_edge = d->next_cluster = 1;
    d->filter = malloc(nn);
    d->merge = malloc(nn);
    if (d->merge != NULL)
        memset(d->merge, -1, nn);
    d->node_id = calloc(nn, sizeof(*d->node_id));
    d->cluster_id = calloc(v->g.ncomps ? v->g.ncomps : 1, sizeof(*d->cluster_id));
    out_init(&d->body);
    out_init(&d->edgetxt);
    out_init(&d->scratch);
    out_init(&d->tmp);
    out_init(&d->shape);
    for (i = 0; i < v->g.nnodes && !d->module_stats; i++)
        d->module_stats = statistic(d, i, &stat);
    return d->filter && d->merge && d->node_id && d->cluster_id ? 0 : -ENOMEM;
}

/* Free what d holds. */
static void dumper_free(struct dumper *d)
{
    free(d->filter);
    free(d->merge);
    free(d->node_id);
    free(d->cluster_id);
    free(d->edges);
    free(d->pair_keys);
    free(d->pair_counts);
    free(d->fr.files);
    free(d->fr.functions);
    free(d->fr.locs);
    free(d->fr.frames);
    out_discard(&d->body);
    out_discard(&d->edgetxt);
    out_discard(&d->scratch);
    out_discard(&d->tmp);
    out_discard(&d->shape);
}

/* Dump: header, body, edges. 0 or -ENOMEM. */
static int dump(struct dumper *d, struct out *o)
{
    dump_comp(d, d->comp);
    dump_root_tag(d);
    if (d->oom || out_failed(&d->body) || out_failed(&d->edgetxt) || out_failed(&d->tmp))
        return -ENOMEM;
    header(d, o);
    out_append(o, &d->body);
    out_append(o, &d->edgetxt);
    out_puts(o, "\n}");
    return out_failed(o) ? -ENOMEM : 0;
}

int hlo_view_dot_around(const struct hlo_view *v, uint32_t node, int64_t radius,
                        const struct hlo_dot_opts *opts, struct out *o)
{
    struct dumper d;
    struct out label;
    int rc;

    if (node >= v->g.nnodes)
        return -EINVAL;
    rc = dumper_init(&d, v, v->g.nodes[node].comp, opts);
    out_init(&label);
    out_printf(&label, "Neighborhood of %lld nodes around %s", (long long)radius, v->names[node]);
    d.label = rc == 0 ? take(&d, &label) : NULL;
    if (d.label == NULL)
        rc = -ENOMEM;
    if (rc == 0) {
        d.radius = 1;
        d.centre = node;
        rc = radius_filter(&d, node, radius);
    }
    if (rc == 0)
        rc = dump(&d, o);
    free((char *)(rc == 0 || d.label != NULL ? d.label : NULL));
    out_discard(&label);
    dumper_free(&d);
    return rc;
}

int hlo_view_dot_comp(const struct hlo_view *v, uint32_t c, const struct hlo_dot_opts *opts,
                      struct out *o)
{
    struct dumper d;
    int rc;

    if (c >= v->g.ncomps)
        return -EINVAL;
    rc = dumper_init(&d, v, c, opts);
    if (rc == 0)
        rc = dump(&d, o);
    dumper_free(&d);
    return rc;
}
