/*
 * hlo_cost.c - the cost analysis of hlo_cost.h.
 *
 * Each computation is analysed once, in XLA's visiting order (unreachable
 * roots, then the root; post-order, first operand first). Visiting an
 * instruction resets the current properties to the defaults (every operand
 * read, the output written), lets the opcode's handler overwrite them, sets
 * the device-flops adjustment and adds them to the computation's sum, which
 * is what a caller (fusion, reduce, call ...) reads. Properties live per
 * node; shape indices are numbered by their pre-order position in the
 * shape ("subshape ordinal", 0 = the whole shape).
 */
#include "hlo_cost_int.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* HloCostAnalysis::Preprocess. */
static void preprocess(struct analysis *an, const struct hlo_node *nd)
{
    struct props *cur = &an->cur;
    struct subs x = hc_subshapes(an, &nd->shape);
    float bytes = 0;
    uint32_t i;

    hc_props_clear(cur);
    for (i = 0; i < x.n; i++) {
        if (x.v[i].s->type != HLO_TUPLE)
            bytes += (float)hc_shape_size(x.v[i].s);
    }
    free(x.v);
    hc_kv_set(an, cur, KV_OUTPUT_BYTES, 0, 0, bytes);
    for (i = 0; i < nd->noperands; i++) {
        int64_t size = hc_shape_size(hc_operand_shape(an, nd, i));
        bytes += (float)size;
        hc_kv_set(an, cur, KV_OPERAND_BYTES, (int32_t)i, 0, (float)size);
        hc_kv_set(an, cur, KV_OPERAND_UTIL, (int32_t)i, 0, 1.0f);
    }
    cur->bytes = bytes;
    cur->ir_size = 1;
}

static int analyse_comp(struct analysis *an, uint32_t c);

/* The analysed sum of computation c, or NULL (error or OOM recorded). */
const struct props *hc_subcomputation(struct analysis *an, uint32_t c, int *rc)
{
    *rc = analyse_comp(an, c);
    return *rc == 0 ? &an->sum[c] : NULL;
}

/* XProfGpuCostAnalysis::Postprocess and HloCostAnalysis::Postprocess. */
static void postprocess(struct analysis *an, uint32_t node, uint32_t c)
{
    const struct hlo_node *nd = &an->g->nodes[node];
    uint32_t i;

    if (!hc_op_is(nd, "custom-call")) {
        int bits = 0;
        for (i = 0; i < nd->noperands; i++) {
            int32_t t = hc_operand_shape(an, nd, i)->type;
            int b;
            if (t == 0 || t == HLO_TUPLE || t == HLO_OPAQUE || t == HLO_TOKEN)
                continue;
            b = hlo_type_bits(t);
            if (b > bits)
                bits = b;
        }
        an->cur.adjust = hc_adjusted(an->cur.flops, bits);
    }
    hc_props_merge(an, &an->sum[c], &an->cur, 0);
    hc_props_clear(&an->node[node]);
    an->node[node] = an->cur;
    memset(&an->cur, 0, sizeof(an->cur));
}

/* Visit the graph under root in post-order (first operand first). */
static int dfs(struct analysis *an, uint32_t root, uint32_t c)
{
    uint32_t *stack, n = 0, cap = 64;
    int rc = 0;

    if (an->state[root] == 2)
        return 0;
    stack = malloc(cap * sizeof(*stack));
    if (stack == NULL)
        return -ENOMEM;
    stack[n++] = root;
    while (n > 0 && rc == 0) {
        uint32_t cur = stack[n - 1], k;
        const struct hlo_node *nd = &an->g->nodes[cur];
        if (an->state[cur] == 2) {
            n--;
            continue;
        }
        if (an->state[cur] == 1) {
            n--;
            preprocess(an, nd);
            rc = hc_visit(an, cur);
            if (rc == 0 && an->oom)
                rc = -ENOMEM;
            an->state[cur] = 2;
            if (rc == 0)
                postprocess(an, cur, c);
            continue;
        }
        an->state[cur] = 1;
        if (n + nd->noperands > cap) {
            uint32_t nc = (n + nd->noperands) * 2;
            uint32_t *v = realloc(stack, nc * sizeof(*v));
            if (v == NULL) {
                rc = -ENOMEM;
                break;
            }
            stack = v;
            cap = nc;
        }
        for (k = nd->noperands; k > 0; k--) {
            uint32_t op = nd->operands[k - 1];
            if (an->state[op] == 1) {
                rc = -1; /* a cycle */
                break;
            }
            if (an->state[op] == 0)
                stack[n++] = op;
        }
    }
    free(stack);
    return rc;
}

int hc_accept(struct analysis *an, uint32_t node, uint32_t c)
{
    int rc;

    if (an->state[node] == 2)
        return 0; /* visited: XLA's DFS returns at once */
    if (an->state[node] == 1 || an->depth >= HC_MAX_DEPTH)
        return -1;
    an->depth++;
    rc = dfs(an, node, c);
    an->depth--;
    return rc;
}

static int analyse_comp(struct analysis *an, uint32_t c)
{
    const struct hlo_comp *cp = &an->g->comps[c];
    struct props saved = an->cur;
    uint32_t i;
    int rc = 0;

    if (an->done[c] == 2)
        return 0;
    if (an->done[c] == 1 || an->depth >= HC_MAX_DEPTH)
        return -1; /* a computation calling itself, or too deep */
    an->done[c] = 1;
    an->depth++;
    memset(&an->cur, 0, sizeof(an->cur));
    for (i = 0; i < cp->n && rc == 0; i++) {
        uint32_t k = cp->first + i;
        if (an->g->nodes[k].nusers == 0 && k != cp->root)
            rc = dfs(an, k, c);
    }
    if (rc == 0)
        rc = dfs(an, cp->root, c);
    hc_props_clear(&an->cur);
    an->cur = saved;
    an->done[c] = 2;
    an->depth--;
    return rc;
}

static int64_t valid(int64_t v)
{
    return v == -1 ? 0 : v;
}

/* Bytes of node's operand leaves (or output leaves) in memory space 0, as
 * XLA's GetBytesRead / GetBytesWritten sum them (each value truncated to
 * int64 first). */
static int64_t space0_bytes(struct analysis *an, uint32_t node, int output)
{
    const struct hlo_node *nd = &an->g->nodes[node];
    const struct props *p = &an->node[node];
    int64_t total = 0;
    uint32_t i, j, nops = output ? 1 : nd->noperands;

    for (i = 0; i < nops; i++) {
        struct subs x = hc_subshapes(an, output ? &nd->shape : hc_operand_shape(an, nd, i));
        for (j = 0; j < x.n; j++) {
            const struct hlo_shape *s = x.v[j].s;
            float v;
            if (s->type == HLO_TUPLE || !s->has_layout || s->memory_space != 0)
                continue;
            v = output ? hc_kv_get(p, KV_OUTPUT_BYTES, 0, x.v[j].ord)
                       : hc_kv_get(p, KV_OPERAND_BYTES, (int32_t)i, x.v[j].ord);
            total += (int64_t)v;
        }
        free(x.v);
    }
    return total;
}

int hlo_cost_analyze(const struct hlo_graph *g, struct hlo_cost *out)
{
    struct analysis an;
    uint32_t i;
    int rc = -ENOMEM;

    memset(&an, 0, sizeof(an));
    memset(out, 0, g->nnodes * sizeof(*out));
    if (g->ncomps == 0)
        return 0;
    an.g = g;
    an.node = calloc(g->nnodes ? g->nnodes : 1, sizeof(*an.node));
    an.sum = calloc(g->ncomps, sizeof(*an.sum));
    an.done = calloc(g->ncomps, 1);
    an.state = calloc(g->nnodes ? g->nnodes : 1, 1);
    an.elementwise = malloc(g->ncomps);
    if (an.node == NULL || an.sum == NULL || an.done == NULL || an.state == NULL ||
        an.elementwise == NULL)
        goto out;
    memset(an.elementwise, -1, g->ncomps);
    rc = analyse_comp(&an, g->entry);
    if (rc == 0 && an.oom)
        rc = -ENOMEM;
    if (rc != 0)
        goto out;
    for (i = 0; i < g->nnodes; i++) {
        const struct props *p = &an.node[i];
        int64_t flops = (int64_t)p->flops, bytes = valid((int64_t)p->bytes);
        out[i].model_flops = valid(flops);
        out[i].device_flops = valid(flops - (int64_t)p->adjust);
        out[i].bytes_accessed = bytes;
        if (bytes > 0) {
            int64_t rd = valid(space0_bytes(&an, i, 0)), wr = valid(space0_bytes(&an, i, 1));
            out[i].hbm_read = rd > 0 ? rd : 0;
            out[i].hbm_write = wr > 0 ? wr : 0;
        }
    }
    if (an.oom) {
        rc = -ENOMEM;
        memset(out, 0, g->nnodes * sizeof(*out));
    }
out:
    if (an.node != NULL) {
        for (i = 0; i < g->nnodes; i++)
            hc_props_clear(&an.node[i]);
    }
    if (an.sum != NULL) {
        for (i = 0; i < g->ncomps; i++)
            hc_props_clear(&an.sum[i]);
    }
    hc_props_clear(&an.cur);
    free(an.node);
    free(an.sum);
    free(an.done);
    free(an.state);
    free(an.elementwise);
    return rc;
}
