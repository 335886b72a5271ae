/*
 * hlo_cost_visit.c - the handler of each opcode (the HandleXxx of
 * HloCostAnalysis / GpuHloCostAnalysis), dispatched by opcode name, with the
 * handlers that price called computations: reduce, reduce-window, map,
 * select-and-scatter, call, while, conditional and async-start. Opcodes
 * without a case keep the defaults, as XLA's no-op handlers do: among them
 * topk, all-to-all, ragged-all-to-all, collective-permute(-start/-done),
 * collective-broadcast, async-update/-done, send/recv, copy-start/-done,
 * pad, reshape, broadcast, iota, reverse and the batch-norm ops.
 */
#include "hlo_cost_int.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static int hc_handle_reduce(struct analysis *an, const struct hlo_node *nd)
{
    const struct hlo_shape *out;
    const struct props *sub;
    struct subs x;
    int64_t out_bytes = 0, bytes, out_elems;
    uint32_t i, inputs;
    int rc;

    if (nd->ncalled < 1 || nd->noperands < 1)
        return -1;
    sub = hc_subcomputation(an, nd->called[0], &rc);
    if (sub == NULL)
        return rc;
    out = nd->shape.type == HLO_TUPLE ? (nd->shape.ntuple ? &nd->shape.tuple[0] : &nd->shape)
                                      : &nd->shape;
    hc_copy_scaled(&an->cur, sub,
                   hlo_shape_elements(hc_operand_shape(an, nd, 0)) - hlo_shape_elements(out), 0);
    x = hc_subshapes(an, &nd->shape);
    for (i = 0; i < x.n; i++) {
        if (x.v[i].s->type != HLO_TUPLE)
            out_bytes += hc_shape_size(x.v[i].s);
    }
    free(x.v);
    hc_kv_set(an, &an->cur, KV_OUTPUT_BYTES, 0, 0, (float)out_bytes);
    inputs = nd->noperands / 2;
    bytes = out_bytes;
    for (i = 0; i < inputs; i++)
        bytes = (int64_t)((float)bytes + hc_kv_get(&an->cur, KV_OPERAND_BYTES, (int32_t)i, 0));
    out_elems = hlo_shape_elements(out);
    for (i = inputs; i < nd->noperands; i++) {
        int64_t size = out_elems * hc_shape_size(hc_operand_shape(an, nd, i));
        hc_kv_set(an, &an->cur, KV_OPERAND_BYTES, (int32_t)i, 0, (float)size);
        hc_kv_set(an, &an->cur, KV_OPERAND_UTIL, (int32_t)i, 0, (float)out_elems);
        bytes += size;
    }
    an->cur.bytes = (float)bytes;
    return 0;
}

static int hc_handle_reduce_window(struct analysis *an, const struct hlo_node *nd)
{
    const struct props *sub;
    const struct hlo_shape *out =
        nd->shape.type == HLO_TUPLE && nd->shape.ntuple ? &nd->shape.tuple[0] : &nd->shape;
    int64_t window = 1, out_elems = hlo_shape_elements(out), count;
    uint32_t i, reducing = 0, padded = 0;
    int rc;

    if (nd->ncalled < 1)
        return -1;
    sub = hc_subcomputation(an, nd->called[0], &rc);
    if (sub == NULL)
        return rc;
    for (i = 0; i < nd->nwindow; i++) {
        window *= nd->window[i].size;
        reducing += nd->window[i].size != 1;
        padded += nd->window[i].pad_low != 0 || nd->window[i].pad_high != 0;
    }
    count = (window - 1) * out_elems;
    if (reducing == 1 && padded == 1 && nd->shape.type != HLO_TUPLE) {
        for (i = 0; i < nd->nwindow; i++) {
            const struct hlo_window_dim *w = &nd->window[i];
            if (w->size != 1 && w->pad_low != 0 && w->pad_high != 0 && w->pad_low == w->pad_high &&
                w->size == 2 * w->pad_low + 1)
                break;
        }
        if (i < nd->nwindow && i < nd->shape.ndims && nd->shape.dims[i] != 0 &&
            nd->window[i].pad_low == nd->shape.dims[i] - 1) {
            window = nd->shape.dims[i];
            count = out_elems / window + (window - 1);
        }
    }
    hc_copy_scaled(&an->cur, sub, count, 0);
    return 0;
}

static int hc_handle_control_flow(struct analysis *an, const struct hlo_node *nd)
{
    const struct props *sub;
    uint32_t i;
    int rc;

    if (nd->ncalled < 1 || (hc_op_is(nd, "while") && nd->ncalled < 2))
        return -1;
    if (hc_op_is(nd, "while")) {
        const struct props *body, *cond;
        /* called computations of a while: body, then condition */
        body = hc_subcomputation(an, nd->called[0], &rc);
        if (body == NULL)
            return rc;
        cond = hc_subcomputation(an, nd->called[1], &rc);
        if (cond == NULL)
            return rc;
        hc_props_clear(&an->cur);
        hc_props_merge(an, &an->cur, body, 0);
        hc_props_merge(an, &an->cur, cond, 0);
        return 0;
    }
    sub = hc_subcomputation(an, nd->called[0], &rc);
    if (sub == NULL)
        return rc;
    hc_props_copy(an, &an->cur, sub);
    if (hc_op_is(nd, "call"))
        return 0;
    for (i = 1; i < nd->ncalled; i++) {
        sub = hc_subcomputation(an, nd->called[i], &rc);
        if (sub == NULL)
            return rc;
        hc_props_merge(an, &an->cur, sub, 1);
    }
    return 0;
}

/* GpuHloCostAnalysis::HandleAsyncStart: the wrapped instruction (the root
 * of the called computation) and its operands are visited in place with the
 * same visitor, so they get their own costs and add to this computation's
 * sum, and the async-start keeps what is left: nothing, except that a
 * wrapped reduce-scatter is priced again on it (a wrapped all-to-all only
 * records bytes transferred, which XProf does not read). */
static int hc_handle_async_start(struct analysis *an, uint32_t node)
{
    const struct hlo_node *nd = &an->g->nodes[node], *wrapped;
    uint32_t root;
    int rc;

    if (nd->ncalled < 1)
        return -1;
    root = an->g->comps[nd->called[0]].root;
    rc = hc_accept(an, root, nd->comp);
    if (rc != 0)
        return rc;
    wrapped = &an->g->nodes[root];
    if (hc_op_is(wrapped, "reduce-scatter"))
        return hc_handle_collective(an, wrapped);
    return 0;
}

/* ---- the opcodes priced in a few lines ------------------------------------ */

static int visit_zero_outputs(struct analysis *an, const struct hlo_node *nd)
{
    hc_zero_outputs(an, nd, 0);
    return 0;
}

static int visit_get_tuple_element(struct analysis *an, const struct hlo_node *nd)
{
    hc_zero_outputs(an, nd, 0);
    hc_kv_set(an, &an->cur, KV_OPERAND_BYTES, 0, 0, 0);
    return 0;
}

/* domain, after-all, add-dependency. */
static int visit_token(struct analysis *an, const struct hlo_node *nd)
{
    hc_zero_outputs(an, nd, 1);
    return 0;
}

static int visit_bitcast(struct analysis *an, const struct hlo_node *nd)
{
    (void)nd;
    hc_handle_bitcast(an);
    return 0;
}

/* A transpose that only relabels dimensions is priced as a bitcast; any
 * other keeps the defaults. */
static int visit_transpose(struct analysis *an, const struct hlo_node *nd)
{
    if (hc_transpose_is_bitcast(an, nd))
        hc_handle_bitcast(an);
    return 0;
}

static int visit_tuple(struct analysis *an, const struct hlo_node *nd)
{
    int64_t zeros[1] = {0};
    uint32_t i;

    hc_transfers(an, hc_shape_size(&nd->shape), zeros, 0);
    for (i = 0; i < nd->noperands; i++)
        hc_kv_set(an, &an->cur, KV_OPERAND_BYTES, (int32_t)i, 0, 0);
    return 0;
}

static int visit_concatenate(struct analysis *an, const struct hlo_node *nd)
{
    int64_t dim = nd->ndims ? nd->dims[0] : 0, per = 6, size;

    if (nd->noperands < 1)
        return -1;
    size = hc_dim_of(hc_operand_shape(an, nd, 0), dim);
    if (dim > 0 && (size & 31) != 0)
        per = 400;
    an->cur.flops = (float)(per * hlo_shape_elements_recursive(&nd->shape));
    return 0;
}

/* dot, scaled-dot. */
static int visit_dot(struct analysis *an, const struct hlo_node *nd)
{
    if (nd->noperands < 1)
        return -1;
    an->cur.flops = (float)hc_dot_flops(hc_operand_shape(an, nd, 0), &nd->shape, nd->contracting,
                                        nd->ncontracting);
    return 0;
}

static int visit_convolution(struct analysis *an, const struct hlo_node *nd)
{
    if (nd->noperands < 2)
        return -1;
    an->cur.flops = (float)hc_conv_flops(nd, hc_operand_shape(an, nd, 0),
                                         hc_operand_shape(an, nd, 1), &nd->shape);
    return 0;
}

static int visit_fft(struct analysis *an, const struct hlo_node *nd)
{
    const struct hlo_shape *s;
    int64_t factors = 1;
    uint32_t i;

    if (nd->noperands < 1)
        return -1;
    s = hc_operand_shape(an, nd, 0);
    if (s->type == HLO_TUPLE && s->ntuple)
        s = &s->tuple[0];
    for (i = 0; i < nd->nfft; i++) {
        uint64_t v = (uint64_t)nd->fft_length[i];
        factors *= v == 0 ? -1 : 63 - __builtin_clzll(v);
    }
    an->cur.flops = (float)(2 * 4 * factors * hlo_shape_elements(s));
    return 0;
}

static int visit_map(struct analysis *an, const struct hlo_node *nd)
{
    const struct props *sub;
    int rc;

    if (nd->ncalled < 1)
        return -1;
    sub = hc_subcomputation(an, nd->called[0], &rc);
    if (sub == NULL)
        return rc;
    hc_copy_scaled(&an->cur, sub, hlo_shape_elements(&nd->shape), 0);
    return 0;
}

static int visit_select_and_scatter(struct analysis *an, const struct hlo_node *nd)
{
    const struct props *sel, *sc;
    int64_t source, window = 1;
    uint32_t i;
    int rc;

    if (nd->ncalled < 2 || nd->noperands < 2)
        return -1;
    sel = hc_subcomputation(an, nd->called[0], &rc);
    if (sel == NULL)
        return rc;
    sc = hc_subcomputation(an, nd->called[1], &rc);
    if (sc == NULL)
        return rc;
    source = hlo_shape_elements(hc_operand_shape(an, nd, 1));
    for (i = 0; i < nd->nwindow; i++)
        window *= nd->window[i].size;
    hc_copy_scaled(&an->cur, sel, source * (window - 1), 1);
    hc_copy_scaled(&an->cur, sc, source, 1);
    return 0;
}

static int visit_cholesky(struct analysis *an, const struct hlo_node *nd)
{
    const struct hlo_shape *a;
    float half;

    if (nd->noperands < 1)
        return -1;
    a = hc_operand_shape(an, nd, 0);
    half = (float)hc_shape_size(a) / 2.0f;
    hc_kv_set(an, &an->cur, KV_OUTPUT_BYTES, 0, 0, half);
    hc_kv_set(an, &an->cur, KV_OPERAND_BYTES, 0, 0, half);
    an->cur.bytes = half + half;
    an->cur.flops = (float)(hc_dim_of(a, (int64_t)a->ndims - 1) * hlo_shape_elements(a) / 3);
    return 0;
}

static int visit_triangular_solve(struct analysis *an, const struct hlo_node *nd)
{
    const struct hlo_shape *a, *b;
    float bytes;

    if (nd->noperands < 2)
        return -1;
    a = hc_operand_shape(an, nd, 0);
    b = hc_operand_shape(an, nd, 1);
    bytes = (float)hc_shape_size(&nd->shape);
    hc_kv_set(an, &an->cur, KV_OUTPUT_BYTES, 0, 0, (float)hc_shape_size(&nd->shape));
    bytes += (float)hc_shape_size(a) / 2.0f;
    bytes += (float)hc_shape_size(b);
    hc_kv_set(an, &an->cur, KV_OPERAND_BYTES, 0, 0, (float)hc_shape_size(b));
    an->cur.bytes = bytes;
    an->cur.flops = (float)(2 * hc_dim_of(a, (int64_t)a->ndims - 1) * hlo_shape_elements(b));
    return 0;
}

static int visit_infeed(struct analysis *an, const struct hlo_node *nd)
{
    struct subs x = hc_subshapes(an, &nd->shape);
    int64_t size = 0;
    uint32_t i;

    for (i = 0; i < x.n; i++) {
        if (x.v[i].s->type == HLO_TUPLE)
            continue;
        size += hc_shape_size(x.v[i].s);
        hc_kv_set(an, &an->cur, KV_OUTPUT_BYTES, 0, x.v[i].ord, (float)hc_shape_size(x.v[i].s));
    }
    free(x.v);
    hc_kv_set(an, &an->cur, KV_OUTPUT_BYTES, 0, 0, (float)size);
    an->cur.bytes = (float)size;
    return 0;
}

static int visit_outfeed(struct analysis *an, const struct hlo_node *nd)
{
    uint32_t i, j;

    an->cur.bytes = 0;
    for (i = 0; i < nd->noperands; i++) {
        struct subs x = hc_subshapes(an, hc_operand_shape(an, nd, i));
        int64_t size = 0;
        for (j = 0; j < x.n; j++) {
            if (x.v[j].s->type == HLO_TUPLE)
                continue;
            size += hc_shape_size(x.v[j].s);
            hc_kv_set(an, &an->cur, KV_OPERAND_BYTES, (int32_t)i, x.v[j].ord,
                      (float)hc_shape_size(x.v[j].s));
        }
        free(x.v);
        hc_kv_set(an, &an->cur, KV_OPERAND_BYTES, (int32_t)i, 0, (float)size);
        an->cur.bytes += (float)size;
    }
    return 0;
}

static int visit_rng_bit_generator(struct analysis *an, const struct hlo_node *nd)
{
    an->cur.transc = (float)hlo_shape_elements_recursive(&nd->shape);
    return 0;
}

static int visit_rng(struct analysis *an, const struct hlo_node *nd)
{
    an->cur.transc = (float)hlo_shape_elements(&nd->shape);
    return 0;
}

static int visit_sort(struct analysis *an, const struct hlo_node *nd)
{
    int64_t count, lg;

    if (nd->noperands < 1)
        return -1;
    count = hlo_shape_elements(hc_operand_shape(an, nd, 0));
    lg = count <= 0 ? -1 : 63 - __builtin_clzll((uint64_t)count);
    if (count > 0 && (count & (count - 1)) != 0)
        lg++;
    an->cur.flops = (float)(count * lg);
    return 0;
}

/* ---- dispatch ------------------------------------------------------------------ */

/* The handler of an opcode: one of the two, by what it needs. */
struct opcode_handler {
    const char *opcode;
    int (*of_instr)(struct analysis *an, const struct hlo_node *nd);
    int (*of_node)(struct analysis *an, uint32_t node); /* needs the node's index */
};

static const struct opcode_handler handlers[] = {
    {"parameter", visit_zero_outputs, NULL},
    {"constant", visit_zero_outputs, NULL},
    {"get-tuple-element", visit_get_tuple_element, NULL},
    {"domain", visit_token, NULL},
    {"after-all", visit_token, NULL},
    {"add-dependency", visit_token, NULL},
    {"bitcast", visit_bitcast, NULL},
    {"transpose", visit_transpose, NULL},
    {"slice", hc_handle_slicing, NULL},
    {"dynamic-slice", hc_handle_slicing, NULL},
    {"dynamic-update-slice", hc_handle_slicing, NULL},
    {"tuple", visit_tuple, NULL},
    {"concatenate", visit_concatenate, NULL},
    {"dot", visit_dot, NULL},
    {"scaled-dot", visit_dot, NULL},
    {"ragged-dot", hc_handle_ragged_dot, NULL},
    {"async-start", NULL, hc_handle_async_start},
    {"convolution", visit_convolution, NULL},
    {"fft", visit_fft, NULL},
    {"map", visit_map, NULL},
    {"reduce", hc_handle_reduce, NULL},
    {"reduce-window", hc_handle_reduce_window, NULL},
    {"select-and-scatter", visit_select_and_scatter, NULL},
    {"triangular-solve", visit_triangular_solve, NULL},
    {"cholesky", visit_cholesky, NULL},
    {"infeed", visit_infeed, NULL},
    {"outfeed", visit_outfeed, NULL},
    {"all-gather", hc_handle_collective, NULL},
    {"all-gather-start", hc_handle_collective, NULL},
    {"all-reduce", hc_handle_collective, NULL},
    {"all-reduce-start", hc_handle_collective, NULL},
    {"reduce-scatter", hc_handle_collective, NULL},
    {"rng-bit-generator", visit_rng_bit_generator, NULL},
    {"rng", visit_rng, NULL},
    {"fusion", NULL, hc_handle_fusion},
    {"call", hc_handle_control_flow, NULL},
    {"while", hc_handle_control_flow, NULL},
    {"conditional", hc_handle_control_flow, NULL},
    {"custom-call", hc_handle_custom_call, NULL},
    {"sort", visit_sort, NULL},
    {"gather", hc_handle_gather, NULL},
    {"scatter", hc_handle_scatter, NULL},
};

int hc_visit(struct analysis *an, uint32_t node)
{
    const struct hlo_node *nd = &an->g->nodes[node];
    const char *op = nd->opcode;
    size_t i;

    /* HandleElementwiseOp: the elementwise opcodes but copy, constant and
     * rng, which have their own handlers; bitcast-convert reaches it through
     * DfsHloVisitor's default HandleBitcastConvert */
    if ((hc_in_list(op, hc_elementwise_ops) && strcmp(op, "copy") != 0 &&
         strcmp(op, "constant") != 0 && strcmp(op, "rng") != 0) ||
        strcmp(op, "bitcast-convert") == 0) {
        an->cur.flops = (float)(hc_flops_per_element(op, nd->shape.type) *
                                hlo_shape_elements_recursive(&nd->shape));
        return 0;
    }
    for (i = 0; i < sizeof(handlers) / sizeof(handlers[0]); i++) {
        if (hc_op_is(nd, handlers[i].opcode))
            return handlers[i].of_instr != NULL ? handlers[i].of_instr(an, nd)
                                                : handlers[i].of_node(an, node);
    }
    return 0;
}
