/*
 * hlo_text.c - an HLO instruction as XLA's HloInstruction::ToString prints
 * it with XProf's options (hlo_text.h): "%name = shape opcode(operands),
 * attributes". This file prints the name, shape, opcode and operands and the
 * attributes every instruction may have (called computations by name,
 * sharding, frontend attributes, control predecessors, statistics, result
 * accuracy); hlo_text_attrs.c the attributes of each opcode, the other
 * hlo_text_*.c files the values (hlo_text_int.h).
 *
 * As XLA prints them: "%" names (sanitized as NameUniquer does), shapes with
 * layouts (tiles, element sizes, memory spaces, dynamic dimensions), operand
 * shapes, an index comment every fifth operand, constants up to ten elements
 * ("{...}" past that; with the source's large_constants up to
 * HLO_TEXT_LARGE_CONSTANT), parameter numbers, fusion kinds and calls=, to_apply=,
 * condition= / body=, branch computations, async ops under their wrapped
 * opcode ("all-gather-start" for an async-start of all-gather) with the
 * wrapped instruction's attributes, and the attributes of every HLO
 * instruction subclass of XLA but those below.
 *
 * Not printed: metadata, backend_config, infeed/outfeed configs and
 * print_large_constants (XProf's options turn them off); origin={...}
 * (original values); domain={...} of kDomain; dot sparsity descriptors; the
 * slice_sizes of dynamic collective-permutes; named shardings (Shardy's
 * NamedSharding inside OpSharding); sharding metadata; sparse layouts
 * (dim level types D(...) and physical shapes P(...)); the custom-call
 * literal= of tuples or of more than 65536 elements (a tuple constant prints
 * only with print_large_constants, as XLA does); result_accuracy
 * tolerances print with %g. Canonicalizations XLA applies while loading a
 * proto are done for names, partial / subgroup shardings (hlo_text_sharding.c)
 * and literals' layouts; iota tile assignments and device lists print as the
 * proto spells them. An async op whose chain is longer than 64 or whose
 * wrapped computation has more than 4096 instructions prints unsugared.
 */
#include <stdlib.h>
#include <string.h>

#include "hlo_text_int.h"

/* Async chains followed to their start, and wrapped computations checked
 * for the syntax sugar, at most. */
#define ASYNC_CHAIN_MAX 64
#define ASYNC_COMP_MAX 4096

/* Whether the bytes of message w parse as fields: an attribute whose
 * message does not is left out. */
static int wire_ok(struct wire w)
{
    while (!wire_eof(&w)) {
        uint32_t f;
        int t;
        if (wire_key(&w, &f, &t) != 0 || wire_skip(&w, t) != 0)
            return 0;
    }
    return 1;
}

/* A length-delimited field of the instruction into its place in in. */
static void read_len(struct txt_instr *in, uint32_t f, struct wire s)
{
    struct wire *dst = NULL;

    switch (f) {
    case 8:
        dst = &in->literal;
        break;
    case 15:
        dst = &in->window;
        break;
    case 16:
        dst = &in->conv_dims;
        break;
    case 21:
        dst = &in->padding;
        break;
    case 28:
        dst = &in->target;
        break;
    case 29:
        dst = &in->outfeed_shape;
        break;
    case 30:
        dst = &in->dot_dims;
        break;
    case 33:
        dst = &in->gather_dims;
        break;
    case 40:
        dst = &in->sharding;
        break;
    case 48:
        dst = &in->scatter_dims;
        break;
    case 51:
        dst = &in->precision;
        break;
    case 59:
        dst = &in->triangular;
        break;
    case 61:
        dst = &in->param_repl;
        break;
    case 62:
        dst = &in->cholesky;
        break;
    case 63:
        dst = &in->cmp_dir;
        break;
    case 68:
        dst = &in->frontend;
        break;
    case 72:
        dst = &in->cmp_type;
        break;
    case 79:
        dst = &in->async_thread;
        break;
    case 82:
        dst = &in->statistics;
        break;
    case 87:
        dst = &in->device_list;
        break;
    case 90:
        dst = &in->ragged_dims;
        break;
    case 91:
        dst = &in->accuracy;
        break;
    case 92:
        dst = &in->iota_list;
        break;
    case 93:
        dst = &in->mesh_list;
        break;
    default:
        break;
    }
    if (dst == NULL)
        return;
    if (f == 28 || f == 63 || f == 72 || f == 79 || wire_ok(s))
        *dst = s; /* strings as they are, messages when readable */
}

/* A varint field of the instruction into its place in in. */
static void read_varint(struct txt_instr *in, uint32_t f, uint64_t v)
{
    int64_t x = (int64_t)v;

    switch (f) {
    case 18:
        in->exponent_bits = x;
        break;
    case 19:
        in->mantissa_bits = x;
        break;
    case 23:
        in->distribution = x;
        break;
    case 25:
        in->feature_index = x;
        break;
    case 26:
        in->channel_id = x;
        break;
    case 31:
        in->fft_type = x;
        break;
    case 45:
        in->all_reduce_id = x;
        break;
    case 47:
        in->is_host_transfer = v != 0;
        break;
    case 50:
        in->feature_groups = x;
        break;
    case 56:
        in->constrain_layout = v != 0;
        break;
    case 58:
        in->batch_groups = x;
        break;
    case 60:
        in->is_stable = v != 0;
        break;
    case 65:
        in->side_effect = v != 0;
        break;
    case 66:
        in->delta = x;
        break;
    case 67:
        in->sorted_indices = v != 0;
        break;
    case 69:
        in->unique_indices = v != 0;
        break;
    case 70:
        in->rng_algorithm = x;
        break;
    case 71:
        in->use_global_ids = v != 0;
        break;
    case 73:
        in->cross_program = v != 0;
        break;
    case 75:
        in->padding_type = x;
        break;
    case 76:
        in->schedule = x;
        break;
    case 77:
        in->api_version = x;
        break;
    case 80:
        in->prefetch_index = x, in->has_prefetch_index = 1;
        break;
    case 81:
        in->k = x;
        break;
    case 85:
        in->largest = v != 0;
        break;
    case 89:
        in->is_composite = v != 0;
        break;
    default:
        break;
    }
}

int txt_instr_read(struct txt_instr *in, const struct hlo_graph *g, const struct hlo_text_src *src,
                   uint32_t node)
{
    const struct hlo_instr_span *sp;
    struct wire w;

    memset(in, 0, sizeof(*in));
    if (g == NULL || src == NULL || src->spans == NULL || node >= g->nnodes)
        return -1;
    sp = &src->spans[node];
    in->g = g;
    in->src = src;
    in->node = node;
    in->nd = &g->nodes[node];
    wire_init(&in->all, sp->p, sp->p != NULL ? sp->n : 0);
    w = in->all;
    while (!wire_eof(&w)) {
        uint32_t f;
        int t;
        uint64_t v;
        struct wire s;
        if (wire_key(&w, &f, &t) != 0)
            break;
        if (t == WIRE_LEN) {
            if (wire_bytes(&w, &s) != 0)
                break;
            read_len(in, f, s);
        } else if (t == WIRE_VARINT) {
            if (wire_varint(&w, &v) != 0)
                break;
            read_varint(in, f, v);
        } else if (t == WIRE_I32 && f == 24) {
            if (w.end - w.p < 4)
                break;
            memcpy(&in->epsilon, w.p, 4);
            in->has_epsilon = 1;
            w.p += 4;
        } else if (wire_skip(&w, t) != 0) {
            break;
        }
    }
    return 0;
}

uint32_t txt_async_start(const struct hlo_graph *g, uint32_t node)
{
    uint32_t cur = node;
    int steps;

    for (steps = 0; steps < ASYNC_CHAIN_MAX && cur < g->nnodes; steps++) {
        const struct hlo_node *nd = &g->nodes[cur];
        if (strcmp(nd->opcode, "async-start") == 0)
            return cur;
        if (strcmp(nd->opcode, "async-update") != 0 && strcmp(nd->opcode, "async-done") != 0)
            return UINT32_MAX;
        if (nd->noperands == 0 || nd->operands == NULL)
            return UINT32_MAX;
        cur = nd->operands[0];
    }
    return UINT32_MAX;
}

uint32_t txt_async_wrapped(const struct hlo_graph *g, uint32_t start)
{
    const struct hlo_node *nd;
    const struct hlo_comp *c;
    uint32_t i;

    if (start >= g->nnodes)
        return UINT32_MAX;
    nd = &g->nodes[start];
    if (nd->ncalled == 0 || nd->called == NULL || nd->called[0] >= g->ncomps)
        return UINT32_MAX;
    c = &g->comps[nd->called[0]];
    if (c->n == 0 || c->n > ASYNC_COMP_MAX || c->root >= g->nnodes)
        return UINT32_MAX;
    for (i = c->first; i < c->first + c->n; i++) {
        if (i != c->root && strcmp(g->nodes[i].opcode, "parameter") != 0)
            return UINT32_MAX;
    }
    return c->root;
}

/* ---- the instruction ---- */

/* The opcode, under the async syntax sugar for async ops. */
static void put_opcode(struct out *o, const struct txt_instr *in, enum txt_kind k, size_t limit)
{
    const char *op = in->nd->opcode;
    uint32_t start, root;

    if (k == K_ASYNC_START || k == K_ASYNC_OTHER) {
        start = txt_async_start(in->g, in->node);
        root = start == UINT32_MAX ? UINT32_MAX : txt_async_wrapped(in->g, start);
        if (root != UINT32_MAX) {
            out_puts(o, in->g->nodes[root].opcode);
            out_puts(o, k == K_ASYNC_START                ? "-start"
                        : strcmp(op, "async-update") == 0 ? "-update"
                                                          : "-done");
            return;
        }
    }
    if (k == K_COMPARE)
        op = "compare"; /* "less-than" ... were folded into compare */
    txt_bytes(o, op, strlen(op), limit);
}

/* A constant's literal in place of its operands. */
static void put_constant(struct out *o, const struct txt_instr *in, size_t limit)
{
    const struct hlo_shape *s = &in->nd->shape;
    uint64_t n, max = in->src->large_constants ? HLO_TEXT_LARGE_CONSTANT : 10;

    if (txt_is_array(s->type) && txt_elements(s, max, &n) == 0 && txt_has(in->literal) &&
        txt_literal_max(o, "", in->literal, 0, max, limit) == 0)
        return;
    /* tuples only with print_large_constants, as XLA prints them */
    if (in->src->large_constants && s->type == HLO_TUPLE && txt_has(in->literal) &&
        txt_tuple_literal(o, in->literal, max, limit) == 0)
        return;
    out_puts(o, "{...}");
}

/* The operands: "f32[2]{0} %a, f32[2]{0} %b". */
static void put_operands(struct out *o, const struct txt_instr *in, enum txt_kind k, size_t limit)
{
    const struct hlo_node *nd = in->nd;
    uint32_t i;

    if (k == K_CONSTANT) {
        put_constant(o, in, limit);
        return;
    }
    if (k == K_PARAMETER) {
        out_i64(o, nd->parameter_number);
        return;
    }
    for (i = 0; i < nd->noperands && nd->operands != NULL && !txt_full(o, limit); i++) {
        const struct hlo_node *op = &in->g->nodes[nd->operands[i]];
        if (i > 0 && i % 5 == 0)
            out_printf(o, ", /*index=%u*/", i);
        else if (i > 0)
            out_puts(o, ", ");
        txt_shape(o, &op->shape, 1, limit);
        out_putc(o, ' ');
        txt_name(o, op->name, op->name_len, limit);
    }
}

/* "%name" of computation c. */
static void put_comp(struct out *o, const struct hlo_graph *g, uint32_t c, size_t limit)
{
    const char *name = c < g->ncomps ? g->comps[c].name : "";

    txt_name(o, name, strlen(name), limit);
}

/* The called computations joined by ", " from index from. */
static void put_comps(struct out *o, const struct txt_instr *in, size_t limit)
{
    uint32_t i;

    for (i = 0; i < in->nd->ncalled && !txt_full(o, limit); i++) {
        if (i > 0)
            out_puts(o, ", ");
        put_comp(o, in->g, in->nd->called[i], limit);
    }
}

/* The called computations by name (PrintSubcomputationMode::kNameOnly). */
static void put_called(struct out *o, const struct txt_instr *in, enum txt_kind k, size_t limit)
{
    const struct hlo_node *nd = in->nd;
    const uint32_t *c = nd->called;
    uint32_t nc = c != NULL ? nd->ncalled : 0;
    int pred;

    switch (k) {
    case K_WHILE:
    case K_SELECT_AND_SCATTER:
        if (nc < 2)
            return;
        out_puts(o, k == K_WHILE ? ", condition=" : ", select=");
        put_comp(o, in->g, c[k == K_WHILE ? 1 : 0], limit);
        out_puts(o, k == K_WHILE ? ", body=" : ", scatter=");
        put_comp(o, in->g, c[k == K_WHILE ? 0 : 1], limit);
        return;
    case K_CONDITIONAL:
        pred = nd->noperands > 0 && nd->operands != NULL &&
               in->g->nodes[nd->operands[0]].shape.type == HLO_PRED;
        if (pred && nc >= 2) {
            out_puts(o, ", true_computation=");
            put_comp(o, in->g, c[0], limit);
            out_puts(o, ", false_computation=");
            put_comp(o, in->g, c[1], limit);
        } else if (!pred) {
            out_puts(o, ", branch_computations={");
            put_comps(o, in, limit);
            out_putc(o, '}');
        }
        return;
    case K_CALL:
    case K_MAP:
    case K_REDUCE_WINDOW:
    case K_REDUCE:
    case K_ALL_REDUCE:
    case K_REDUCE_SCATTER:
    case K_SCATTER:
    case K_SORT:
    case K_SCAN:
        if (nc > 0) {
            out_puts(o, ", to_apply=");
            put_comp(o, in->g, c[0], limit);
        }
        if (k == K_CALL && in->is_composite)
            out_puts(o, ", is_composite=true");
        return;
    case K_CUSTOM_CALL:
        if (nc > 0) {
            out_puts(o, ", called_computations={");
            put_comps(o, in, limit);
            out_putc(o, '}');
        }
        return;
    case K_ASYNC_START:
        if (nc > 0 && txt_async_wrapped(in->g, in->node) == UINT32_MAX) {
            out_puts(o, ", calls=");
            put_comp(o, in->g, c[0], limit);
        }
        return;
    case K_ASYNC_OTHER:
        return;
    default:
        if (nc > 0) {
            out_puts(o, ", calls=");
            put_comps(o, in, limit);
        }
        return;
    }
}

/* One entry of a FrontendAttributes map. */
struct attr {
    struct wire key, value; /* the strings */
    uint32_t pos;           /* its place in the message */
};

/* Order of map entries: by key, then by place. */
static int attr_cmp(const void *a, const void *b)
{
    const struct attr *x = a, *y = b;
    size_t nx = (size_t)(x->key.end - x->key.p), ny = (size_t)(y->key.end - y->key.p);
    int c = memcmp(x->key.p, y->key.p, nx < ny ? nx : ny);

    if (c != 0)
        return c;
    if (nx != ny)
        return nx < ny ? -1 : 1;
    return x->pos < y->pos ? -1 : x->pos > y->pos;
}

/* Whether two map entries have the same key. */
static int same_key(const struct attr *x, const struct attr *y)
{
    size_t n = (size_t)(x->key.end - x->key.p);

    return n == (size_t)(y->key.end - y->key.p) && memcmp(x->key.p, y->key.p, n) == 0;
}

/* Whether a string lexes as a JSON dict (LexesAsJsonDict): "{", balanced
 * braces outside strings, "}", blanks around. */
static int json_dict(const uint8_t *p, const uint8_t *end)
{
    int64_t depth = 0;

    while (p < end && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r'))
        p++;
    if (p == end || *p != '{')
        return 0;
    for (; p < end; p++) {
        if (*p == '"') {
            for (p++; p < end && *p != '"'; p++)
                p += *p == '\\' && p + 1 < end;
            if (p == end)
                return 0;
        } else if (*p == '{') {
            depth++;
        } else if (*p == '}' && --depth == 0) {
            break;
        }
    }
    if (p == end)
        return 0;
    for (p++; p < end; p++) {
        if (*p != ' ' && *p != '\t' && *p != '\n' && *p != '\r')
            return 0;
    }
    return 1;
}

/* ", frontend_attributes={a="1",b={...}}" (FrontendAttributesToString). */
static void put_frontend(struct out *o, const struct txt_instr *in, size_t limit)
{
    struct wire cur = in->frontend, e;
    struct attr *v;
    uint32_t n = 0, i, k = 0;
    int first = 1;

    while (txt_msg_next(&cur, 1, &e))
        n++;
    if (n == 0)
        return;
    if ((v = malloc(n * sizeof(*v))) == NULL) {
        txt_oom(o);
        return;
    }
    cur = in->frontend;
    while (k < n && txt_msg_next(&cur, 1, &e)) {
        v[k].key.p = v[k].key.end = v[k].value.p = v[k].value.end = e.p;
        txt_msg(e, 1, &v[k].key);
        txt_msg(e, 2, &v[k].value);
        v[k].pos = k;
        k++;
    }
    qsort(v, k, sizeof(*v), attr_cmp);
    out_puts(o, ", frontend_attributes={");
    for (i = 0; i < k && !txt_full(o, limit); i++) {
        size_t nv = (size_t)(v[i].value.end - v[i].value.p);
        if (i + 1 < k && same_key(&v[i], &v[i + 1]))
            continue; /* a map keeps the last value of a key */
        if (first == 0)
            out_putc(o, ',');
        first = 0;
        txt_bytes(o, v[i].key.p, (size_t)(v[i].key.end - v[i].key.p), limit);
        out_putc(o, '=');
        if (json_dict(v[i].value.p, v[i].value.end)) {
            txt_bytes(o, v[i].value.p, nv, limit);
        } else {
            out_putc(o, '"');
            txt_cescape(o, v[i].value.p, nv, limit);
            out_putc(o, '"');
        }
    }
    out_putc(o, '}');
    free(v);
}

/* Order of (node, place) pairs. */
static int pair_cmp(const void *a, const void *b)
{
    const uint32_t *x = a, *y = b;

    if (x[0] != y[0])
        return x[0] < y[0] ? -1 : 1;
    return x[1] < y[1] ? -1 : x[1] > y[1];
}

/* The node of instruction id in computation c, or UINT32_MAX. */
static uint32_t node_of_id(const struct txt_instr *in, uint32_t c, int64_t id)
{
    const struct hlo_comp *cp = &in->g->comps[c];
    const struct hlo_id_ix *v = in->src->by_id + cp->first;
    uint32_t lo = 0, hi = cp->n;

    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (v[mid].id < id)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < cp->n && v[lo].id == id ? v[lo].ix : UINT32_MAX;
}

/* ", control-predecessors={%a, %b}": the control_predecessor_ids found in
 * the computation, each once, in order. */
static void put_control(struct out *o, const struct txt_instr *in, size_t limit)
{
    struct txt_rep r;
    uint64_t v, n = txt_rep_count(in->all, 37), k = 0, i;
    uint32_t *pairs, *keep;
    int first = 1;

    if (n == 0 || in->src->by_id == NULL || in->nd->comp >= in->g->ncomps || n > UINT32_MAX)
        return;
    pairs = malloc(n * 2 * sizeof(*pairs));
    keep = malloc(n * 2 * sizeof(*keep));
    if (pairs == NULL || keep == NULL) {
        txt_oom(o);
        goto out;
    }
    txt_rep_init(&r, in->all, 37);
    while (k < n && txt_rep_next(&r, &v)) {
        uint32_t node = node_of_id(in, in->nd->comp, (int64_t)v);
        if (node == UINT32_MAX)
            continue;
        pairs[2 * k] = keep[2 * k] = node;
        pairs[2 * k + 1] = keep[2 * k + 1] = (uint32_t)k;
        k++;
    }
    if (k == 0)
        goto out;
    qsort(pairs, k, 2 * sizeof(*pairs), pair_cmp);
    for (i = 1; i < k; i++) {
        if (pairs[2 * i] == pairs[2 * i - 2])
            keep[2 * pairs[2 * i + 1]] = UINT32_MAX; /* a repeat */
    }
    out_puts(o, ", control-predecessors={");
    for (i = 0; i < k && !txt_full(o, limit); i++) {
        const struct hlo_node *p;
        if (keep[2 * i] == UINT32_MAX)
            continue;
        p = &in->g->nodes[keep[2 * i]];
        if (!first)
            out_puts(o, ", ");
        first = 0;
        txt_name(o, p->name, p->name_len, limit);
    }
    out_putc(o, '}');
out:
    free(pairs);
    free(keep);
}

/* The last double field f of message m, 0 when absent. */
static double double_field(struct wire m, uint32_t f)
{
    double d = 0;

    while (!wire_eof(&m)) {
        uint32_t ff;
        int t;
        uint64_t bits;
        if (wire_key(&m, &ff, &t) != 0)
            break;
        if (ff == f && t == WIRE_I64) {
            if (wire_fixed64(&m, &bits) != 0)
                break;
            memcpy(&d, &bits, sizeof(d));
        } else if (wire_skip(&m, t) != 0) {
            break;
        }
    }
    return d;
}

/* ", statistics={visualizing_index=0,a=1,b=2}" (StatisticsVizToString). */
static void put_statistics(struct out *o, const struct txt_instr *in, size_t limit)
{
    struct wire cur = in->statistics, st, name;
    int64_t index = 0;

    if (!txt_has(in->statistics) || !txt_msg(in->statistics, 2, &st))
        return;
    txt_varint(in->statistics, 1, &index);
    out_puts(o, ", statistics={visualizing_index=");
    out_i64(o, index);
    while (!txt_full(o, limit) && txt_msg_next(&cur, 2, &st)) {
        out_putc(o, ',');
        if (txt_msg(st, 1, &name))
            txt_bytes(o, name.p, (size_t)(name.end - name.p), limit);
        out_putc(o, '=');
        txt_g6(o, double_field(st, 2));
    }
    out_putc(o, '}');
}

/* ", result_accuracy={mode=highest}" or its tolerance, when not default. */
static void put_accuracy(struct out *o, const struct txt_instr *in)
{
    struct wire tol;
    int64_t mode = 0, ulps = 0;

    if (!txt_has(in->accuracy))
        return;
    txt_varint(in->accuracy, 1, &mode);
    if (mode == 1) {
        out_puts(o, ", result_accuracy={mode=highest}");
    } else if (mode == 0 && txt_msg(in->accuracy, 2, &tol)) {
        txt_varint(tol, 3, &ulps);
        out_printf(o, ", result_accuracy={tolerance={atol=%g,rtol=%g,ulps=%lld}}",
                   double_field(tol, 1), double_field(tol, 2), (long long)ulps);
    }
}

void txt_extra_attrs(struct out *o, const struct txt_instr *in, size_t limit, int depth)
{
    enum txt_kind k = txt_opcode_kind(in->nd->opcode);

    txt_opcode_attrs(o, in, limit, depth);
    put_called(o, in, k, limit);
    if (txt_has(in->sharding))
        txt_sharding(o, ", sharding=", in->sharding, &in->nd->shape, limit);
    if (txt_has(in->frontend))
        put_frontend(o, in, limit);
    put_control(o, in, limit);
    put_statistics(o, in, limit);
    if (k == K_UNARY_ACCURACY)
        put_accuracy(o, in);
}

void hlo_instr_print(struct out *o, const struct hlo_graph *g, const struct hlo_text_src *src,
                     uint32_t node, size_t limit)
{
    struct txt_instr in;
    enum txt_kind k;

    if (txt_instr_read(&in, g, src, node) != 0)
        return;
    k = txt_opcode_kind(in.nd->opcode);
    txt_name(o, in.nd->name, in.nd->name_len, limit);
    out_puts(o, " = ");
    txt_shape(o, &in.nd->shape, 1, limit);
    out_putc(o, ' ');
    put_opcode(o, &in, k, limit);
    out_putc(o, '(');
    put_operands(o, &in, k, limit);
    out_putc(o, ')');
    txt_extra_attrs(o, &in, limit, 0);
}
