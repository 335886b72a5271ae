/*
 * hlo_cost_fusion.c - fusions (HloCostAnalysis::HandleFusion with the GPU
 * utilization model): the fused instructions' utilization and the fusion's
 * flops, its output bytes and the bytes it reads of each parameter; and
 * HloInstruction::IsElementwise, which the utilization model follows.
 */
#include "hlo_cost_int.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* A fused computation whose instructions are all elementwise. */
static int comp_elementwise(struct analysis *an, uint32_t c)
{
    const struct hlo_comp *cp = &an->g->comps[c];
    uint32_t i;
    int r = 1;

    if (an->elementwise[c] >= 0)
        return an->elementwise[c];
    if (an->ew_depth >= HC_MAX_DEPTH)
        return 0;
    an->elementwise[c] = 0; /* a cycle reads as not elementwise */
    an->ew_depth++;
    for (i = 0; i < cp->n && r; i++) {
        uint32_t k = cp->first + i;
        if (!hc_op_is(&an->g->nodes[k], "parameter") && !hc_is_elementwise(an, k))
            r = 0;
    }
    an->ew_depth--;
    an->elementwise[c] = (int8_t)r;
    return r;
}

static int storage_bits(int32_t type)
{
    return type == HLO_PRED ? 8 : hlo_type_bits(type);
}

int hc_is_elementwise(struct analysis *an, uint32_t node)
{
    const struct hlo_node *nd = &an->g->nodes[node];
    uint32_t i;

    if (hc_op_is(nd, "bitcast-convert"))
        return nd->noperands > 0 && storage_bits(nd->shape.type) ==
                                        storage_bits(an->g->nodes[nd->operands[0]].shape.type);
    if (hc_op_is(nd, "map")) {
        if (nd->ndims == 0)
            return 1;
        if (nd->ndims != nd->shape.ndims)
            return 0;
        for (i = 0; i < nd->ndims; i++) {
            if (nd->dims[i] != (int64_t)i)
                return 0;
        }
        return 1;
    }
    if (hc_op_is(nd, "fusion"))
        return nd->ncalled > 0 && comp_elementwise(an, nd->called[0]);
    return hc_in_list(nd->opcode, hc_elementwise_ops);
}

/* MakeInstructionPostOrder of computation c into order (c->n entries). */
static int post_order(const struct analysis *an, uint32_t c, uint32_t *order)
{
    const struct hlo_comp *cp = &an->g->comps[c];
    uint8_t *seen = calloc(cp->n ? cp->n : 1, 1);
    uint32_t *stack = NULL, nstack = 0, cap = 0, n = 0, i;

    if (seen == NULL)
        return -ENOMEM;
    for (i = 0; i < cp->n; i++) {
        uint32_t start = cp->first + i;
        if (an->g->nodes[start].nusers != 0)
            continue;
        nstack = 0;
        if (cap == 0) {
            cap = 64;
            stack = malloc(cap * sizeof(*stack));
            if (stack == NULL) {
                free(seen);
                return -ENOMEM;
            }
        }
        stack[nstack++] = start;
        while (nstack > 0) {
            uint32_t cur = stack[nstack - 1], k;
            const struct hlo_node *nd = &an->g->nodes[cur];
            uint8_t *st = &seen[cur - cp->first];
            if (*st) {
                nstack--;
                if (*st == 1) {
                    order[n++] = cur;
                    *st = 2;
                }
                continue;
            }
            *st = 1;
            if (nstack + nd->noperands > cap) {
                uint32_t nc = (nstack + nd->noperands) * 2;
                uint32_t *v = realloc(stack, nc * sizeof(*v));
                if (v == NULL) {
                    free(stack);
                    free(seen);
                    return -ENOMEM;
                }
                stack = v;
                cap = nc;
            }
            for (k = nd->noperands; k > 0; k--) /* first operand on top */
                stack[nstack++] = nd->operands[k - 1];
        }
    }
    free(stack);
    free(seen);
    return n == cp->n ? 0 : -1;
}

static int set_has(const uint32_t *v, uint32_t n, uint32_t x)
{
    uint32_t i;

    for (i = 0; i < n; i++) {
        if (v[i] == x)
            return 1;
    }
    return 0;
}

/* Shapes equal but for the element type (ShapeUtil::EqualIgnoringElementType). */
static int equal_ignoring_type(const struct hlo_shape *a, const struct hlo_shape *b)
{
    if (hc_is_array(a) != hc_is_array(b) || a->ndims != b->ndims || a->has_layout != b->has_layout)
        return 0;
    if (a->ndims && memcmp(a->dims, b->dims, a->ndims * sizeof(*a->dims)) != 0)
        return 0;
    if (a->has_layout && (a->nminor != b->nminor || a->memory_space != b->memory_space ||
                          (a->nminor && memcmp(a->minor_to_major, b->minor_to_major,
                                               a->nminor * sizeof(*a->minor_to_major)) != 0)))
        return 0;
    return 1;
}

/* GpuHloCostAnalysis::FusionCalculateUtilizations over the fused
 * computation c: utilization and IR size of every fused instruction, and the
 * fusion's flops as the utilization-weighted sum. */
static int fusion_utilizations(struct analysis *an, uint32_t c)
{
    const struct hlo_comp *cp = &an->g->comps[c];
    uint32_t n = cp->n, i, j, k;
    uint32_t *order = malloc((n ? n : 1) * sizeof(*order));
    uint32_t **roots = calloc(n ? n : 1, sizeof(*roots)); /* elementwise use roots */
    uint32_t *nroots = calloc(n ? n : 1, sizeof(*nroots));
    float *root_util = calloc(n ? n : 1, sizeof(*root_util));
    int64_t *ir_sizes = calloc(n ? n : 1, sizeof(*ir_sizes));
    uint32_t root = cp->root - cp->first;
    int rc = -ENOMEM;

    if (order == NULL || roots == NULL || nroots == NULL || root_util == NULL || ir_sizes == NULL)
        goto out;
    rc = post_order(an, c, order);
    if (rc != 0)
        goto out;
    for (i = 0; i < n; i++) {
        an->node[cp->first + i].util = 0;
        an->node[cp->first + i].ir_size = 0;
    }
    root_util[root] = 1;
    ir_sizes[root] = 1;
    roots[root] = malloc(n * sizeof(uint32_t));
    if (roots[root] == NULL) {
        rc = -ENOMEM;
        goto out;
    }
    roots[root][nroots[root]++] = root;
    an->cur.flops = 0;
    an->cur.ir_size = 0;
    for (i = n; i > 0; i--) { /* reverse post order: users first */
        uint32_t node = order[i - 1], me = node - cp->first;
        const struct hlo_node *nd = &an->g->nodes[node];
        struct props *pp = &an->node[node];
        float util, emitted;
        int passes;
        for (j = 0; j < nroots[me]; j++) {
            pp->util += root_util[roots[me][j]];
            pp->ir_size += (float)ir_sizes[roots[me][j]];
        }
        util = pp->util;
        emitted = pp->ir_size;
        an->cur.flops += util * pp->flops;
        an->cur.ir_size += emitted;
        passes = hc_is_elementwise(an, node) ||
                 (hc_op_is(nd, "bitcast") && nd->noperands > 0 &&
                  equal_ignoring_type(hc_operand_shape(an, nd, 0), &nd->shape)) ||
                 hc_op_is(nd, "tuple") || hc_op_is(nd, "get-tuple-element");
        for (k = 0; k < nd->noperands; k++) {
            uint32_t op = nd->operands[k] - cp->first;
            if (roots[op] == NULL) {
                roots[op] = malloc(n * sizeof(uint32_t));
                if (roots[op] == NULL) {
                    rc = -ENOMEM;
                    goto out;
                }
            }
            if (passes) {
                for (j = 0; j < nroots[me]; j++) {
                    if (!set_has(roots[op], nroots[op], roots[me][j]))
                        roots[op][nroots[op]++] = roots[me][j];
                }
            } else {
                float ou;
                int64_t count = hlo_shape_elements_recursive(hc_operand_shape(an, nd, k));
                if (!set_has(roots[op], nroots[op], op))
                    roots[op][nroots[op]++] = op;
                ou = util * hc_kv_get(pp, KV_OPERAND_UTIL, (int32_t)k, 0);
                ou = count == 0 ? 0 : ceilf(ou * (float)count) / (float)count;
                root_util[op] += ou;
                ir_sizes[op] = (int64_t)((float)ir_sizes[op] + emitted);
            }
        }
    }
    rc = 0;
out:
    if (roots != NULL) {
        for (i = 0; i < n; i++)
            free(roots[i]);
    }
    free(order);
    free(roots);
    free(nroots);
    free(root_util);
    free(ir_sizes);
    return rc;
}

/* GpuHloCostAnalysis::FusionParameterReadBytes. */
static int64_t param_read_bytes(const struct analysis *an, uint32_t node)
{
    float util = an->node[node].util;

    if (util > 1.0f)
        util = 1.0f;
    return (int64_t)roundf((float)hc_shape_size(&an->g->nodes[node].shape) * util);
}

int hc_handle_fusion(struct analysis *an, uint32_t node)
{
    const struct hlo_node *nd = &an->g->nodes[node];
    const struct hlo_comp *cp;
    const struct props *sub;
    struct subs x;
    uint32_t c, i, p;
    int rc;

    if (nd->ncalled < 1)
        return -1;
    c = nd->called[0];
    cp = &an->g->comps[c];
    if (strcmp(nd->fusion_kind, "kCustom") == 0) {
        for (i = 0; i < cp->n; i++) {
            const struct hlo_node *child = &an->g->nodes[cp->first + i];
            if (hc_op_is(child, "gather"))
                return hc_handle_gather(an, child);
            if (hc_op_is(child, "scatter"))
                return hc_handle_scatter(an, child);
        }
    }
    sub = hc_subcomputation(an, c, &rc);
    if (sub == NULL)
        return rc;
    hc_props_copy(an, &an->cur, sub);
    an->cur.bytes = 0;
    x = hc_subshapes(an, &nd->shape);
    for (i = 0; i < x.n; i++) {
        const struct sub *s = &x.v[i];
        uint32_t root = cp->root;
        int64_t size;
        if (!hc_is_array(s->s))
            continue;
        if (s->depth == 1 && hc_op_is(&an->g->nodes[root], "tuple") &&
            (uint32_t)s->first < an->g->nodes[root].noperands)
            root = an->g->nodes[root].operands[s->first];
        if (hc_op_is(&an->g->nodes[root], "dynamic-update-slice") &&
            an->g->nodes[root].noperands > 1) {
            size = hc_shape_size(hc_operand_shape(an, &an->g->nodes[root], 1));
            an->cur.bytes += (float)size;
            hc_kv_set(an, &an->cur, KV_OUTPUT_BYTES, 0, s->ord, (float)size);
            hc_kv_set(an, &an->node[root], KV_OPERAND_UTIL, 0, 0, 0);
            continue;
        }
        size = hc_shape_size(s->s);
        an->cur.bytes += (float)size;
        hc_kv_set(an, &an->cur, KV_OUTPUT_BYTES, 0, s->ord, (float)size);
    }
    if (nd->shape.type == HLO_TUPLE) {
        /* output bytes of tuple indices: the sum of their elements, unless
         * already set; in reverse pre-order children come before parents */
        hc_kv_set(an, &an->cur, KV_OUTPUT_BYTES, 0, 0, 0);
        for (i = x.n; i > 0; i--) {
            const struct sub *s = &x.v[i - 1];
            float total = 0;
            uint32_t j;
            if (s->s->type != HLO_TUPLE || hc_kv_get(&an->cur, KV_OUTPUT_BYTES, 0, s->ord) != 0)
                continue;
            for (j = i; j < x.n; j++) {
                if (x.v[j].parent == s->ord)
                    total += hc_kv_get(&an->cur, KV_OUTPUT_BYTES, 0, x.v[j].ord);
            }
            hc_kv_set(an, &an->cur, KV_OUTPUT_BYTES, 0, s->ord, total);
        }
    }
    free(x.v);
    rc = fusion_utilizations(an, c);
    if (rc != 0)
        return rc;
    for (i = 0; i < cp->n; i++) {
        const struct hlo_node *child = &an->g->nodes[cp->first + i];
        if (hc_op_is(child, "constant") && hlo_shape_elements(&child->shape) > 8) {
            float util = an->node[cp->first + i].util;
            if (util > 1.0f)
                util = 1.0f;
            an->cur.bytes += (float)hc_shape_size(&child->shape) * util;
        }
    }
    for (p = 0; p < cp->nparams; p++) {
        uint32_t param = cp->params[p];
        const struct hlo_shape *ps = &an->g->nodes[param].shape;
        int64_t size = 0;
        if (ps->type != HLO_TUPLE) {
            size = param_read_bytes(an, param);
        } else {
            struct subs px = hc_subshapes(an, ps);
            /* leaves: follow get-tuple-element users down the index */
            for (i = 0; i < px.n; i++) {
                uint32_t cur = param, depth, at;
                int32_t path[64];
                int64_t read;
                if (px.v[i].s->type == HLO_TUPLE || px.v[i].depth > 64)
                    continue;
                /* the index of this leaf, from its parents */
                at = i;
                for (depth = (uint32_t)px.v[i].depth; depth > 0; depth--) {
                    uint32_t parent = (uint32_t)px.v[at].parent, pos = 0, q;
                    for (q = parent + 1; q < at; q++)
                        pos += px.v[q].parent == (int32_t)parent;
                    path[depth - 1] = (int32_t)pos;
                    at = parent;
                }
                for (depth = 0; depth < (uint32_t)px.v[i].depth; depth++) {
                    const struct hlo_node *cn = &an->g->nodes[cur];
                    uint32_t u;
                    for (u = 0; u < cn->nusers; u++) {
                        const struct hlo_node *un = &an->g->nodes[cn->users[u]];
                        if (hc_op_is(un, "get-tuple-element") && un->tuple_index == path[depth]) {
                            cur = cn->users[u];
                            break;
                        }
                    }
                }
                read = param_read_bytes(an, cur);
                size += read;
                hc_kv_set(an, &an->cur, KV_OPERAND_BYTES, (int32_t)p, px.v[i].ord, (float)read);
            }
            free(px.v);
        }
        an->cur.bytes += (float)size;
        hc_kv_set(an, &an->cur, KV_OPERAND_BYTES, (int32_t)p, 0, (float)size);
        hc_kv_set(an, &an->cur, KV_OPERAND_UTIL, (int32_t)p, 0, an->node[param].util);
    }
    return 0;
}
