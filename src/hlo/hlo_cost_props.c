/*
 * hlo_cost_props.c - the properties of the cost analysis (XLA's
 * HloCostAnalysis::Properties: fixed floats plus keyed operand / output
 * bytes and operand utilizations) and the shape sizes it reads.
 */
#include "hlo_cost_int.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Keys are kept sorted by (kind, operand, sub): the position of the key,
 * or where it would go, in *at; 1 when found. */
static int kv_find(const struct props *p, int kind, int32_t operand, int32_t sub, uint32_t *at)
{
    uint32_t lo = 0, hi = p->nkv;

    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        const struct kv *e = &p->kv[mid];
        int less = e->kind != kind         ? e->kind < kind
                   : e->operand != operand ? e->operand < operand
                                           : e->sub < sub;
        if (less)
            lo = mid + 1;
        else
            hi = mid;
    }
    *at = lo;
    return lo < p->nkv && p->kv[lo].kind == kind && p->kv[lo].operand == operand &&
           p->kv[lo].sub == sub;
}

float hc_kv_get(const struct props *p, int kind, int32_t operand, int32_t sub)
{
    uint32_t at;

    return kv_find(p, kind, operand, sub, &at) ? p->kv[at].value : 0;
}

float *hc_kv_slot(struct analysis *an, struct props *p, int kind, int32_t operand, int32_t sub)
{
    uint32_t at;

    if (kv_find(p, kind, operand, sub, &at))
        return &p->kv[at].value;
    if (p->nkv == p->cap) {
        uint32_t nc = p->cap ? p->cap * 2 : 8;
        struct kv *v = realloc(p->kv, nc * sizeof(*v));
        if (v == NULL) {
            an->oom = 1;
            return NULL;
        }
        p->kv = v;
        p->cap = nc;
    }
    memmove(&p->kv[at + 1], &p->kv[at], (p->nkv - at) * sizeof(*p->kv));
    p->kv[at] = (struct kv){(uint8_t)kind, operand, sub, 0};
    p->nkv++;
    return &p->kv[at].value;
}

void hc_kv_set(struct analysis *an, struct props *p, int kind, int32_t operand, int32_t sub,
               float v)
{
    float *s = hc_kv_slot(an, p, kind, operand, sub);

    if (s != NULL)
        *s = v;
}

void hc_props_clear(struct props *p)
{
    free(p->kv);
    memset(p, 0, sizeof(*p));
}

/* dst = a copy of src. */
void hc_props_copy(struct analysis *an, struct props *dst, const struct props *src)
{
    hc_props_clear(dst);
    *dst = *src;
    dst->kv = NULL;
    dst->nkv = dst->cap = 0;
    if (src->nkv == 0)
        return;
    dst->kv = malloc(src->nkv * sizeof(*dst->kv));
    if (dst->kv == NULL) {
        an->oom = 1;
        return;
    }
    memcpy(dst->kv, src->kv, src->nkv * sizeof(*dst->kv));
    dst->nkv = dst->cap = src->nkv;
}

/* Every key of src combined into dst: summed, or the maximum. */
void hc_props_merge(struct analysis *an, struct props *dst, const struct props *src, int max)
{
    uint32_t i;

#define MERGE(f) dst->f = max ? fmaxf(dst->f, src->f) : dst->f + src->f
    if (src->flops != 0)
        MERGE(flops);
    if (src->transc != 0)
        MERGE(transc);
    if (src->bytes != 0)
        MERGE(bytes);
    if (src->adjust != 0)
        MERGE(adjust);
    if (src->util != 0)
        MERGE(util);
    if (src->ir_size != 0)
        MERGE(ir_size);
#undef MERGE
    for (i = 0; i < src->nkv; i++) {
        const struct kv *e = &src->kv[i];
        float *s;
        if (e->value == 0)
            continue;
        s = hc_kv_slot(an, dst, e->kind, e->operand, e->sub);
        if (s != NULL)
            *s = max ? fmaxf(*s, e->value) : *s + e->value;
    }
}

/* The keys a caller copies from a subcomputation, scaled by factor
 * (HloCostAnalysis::KeyToCopyFromSubcomputation of the GPU analysis). */
void hc_copy_scaled(struct props *cur, const struct props *sub, int64_t factor, int accumulate)
{
    float f = (float)factor;

    if (sub->flops != 0)
        cur->flops = (accumulate ? cur->flops : 0) + sub->flops * f;
    if (sub->transc != 0)
        cur->transc = (accumulate ? cur->transc : 0) + sub->transc * f;
    if (sub->adjust != 0)
        cur->adjust = (accumulate ? cur->adjust : 0) + sub->adjust * f;
}

static int shape_has_layout(const struct hlo_shape *s)
{
    uint32_t i;

    if (s->type == HLO_TUPLE) {
        for (i = 0; i < s->ntuple; i++) {
            if (!shape_has_layout(&s->tuple[i]))
                return 0;
        }
        return 1;
    }
    if (s->type == HLO_TOKEN || s->type == HLO_OPAQUE || s->type == 0)
        return 1;
    return s->has_layout;
}

int hc_is_array(const struct hlo_shape *s)
{
    return s->type != HLO_TUPLE && s->type != HLO_TOKEN && s->type != HLO_OPAQUE && s->type != 0;
}

/* ShapeUtil::ByteSizeOf with 8-byte pointers (a tuple's index table, an
 * opaque value one pointer), BUFFER and TOKEN counted as 0. */
int64_t hc_byte_size(const struct hlo_shape *s)
{
    int64_t n;
    int bits;

    if (s->type == HLO_TUPLE)
        return 8 * (int64_t)s->ntuple;
    if (s->type == HLO_OPAQUE)
        return 8;
    if (!hc_is_array(s) || s->type == HLO_BUFFER)
        return 0;
    n = hlo_shape_elements(s);
    if (s->has_layout && s->element_bits > 0)
        return (n * s->element_bits + 7) / 8;
    bits = hlo_type_bits(s->type);
    return n * (bits < 8 ? (bits > 0 ? 1 : 0) : bits / 8);
}

/* GetShapeSize: 0 without a layout. */
int64_t hc_shape_size(const struct hlo_shape *s)
{
    return shape_has_layout(s) ? hc_byte_size(s) : 0;
}

static int subs_walk(struct subs *x, const struct hlo_shape *s, int32_t depth, int32_t first,
                     int32_t parent)
{
    int32_t me = (int32_t)x->n;
    uint32_t i;

    if (x->n == x->cap) {
        uint32_t nc = x->cap ? x->cap * 2 : 8;
        struct sub *v = realloc(x->v, nc * sizeof(*v));
        if (v == NULL)
            return -ENOMEM;
        x->v = v;
        x->cap = nc;
    }
    x->v[x->n++] = (struct sub){s, me, depth, first, parent};
    if (s->type != HLO_TUPLE)
        return 0;
    for (i = 0; i < s->ntuple; i++) {
        int rc = subs_walk(x, &s->tuple[i], depth + 1, depth == 0 ? (int32_t)i : first, me);
        if (rc != 0)
            return rc;
    }
    return 0;
}

/* Every subshape of s (ForEachSubshape order); *ok cleared on OOM. */
struct subs hc_subshapes(struct analysis *an, const struct hlo_shape *s)
{
    struct subs x = {0};

    if (subs_walk(&x, s, 0, -1, -1) != 0) {
        an->oom = 1;
        x.n = 0;
    }
    return x;
}

int hc_op_is(const struct hlo_node *nd, const char *op)
{
    return strcmp(nd->opcode, op) == 0;
}

int hc_in_list(const char *op, const char *const *list)
{
    int i;

    for (i = 0; list[i] != NULL; i++) {
        if (strcmp(op, list[i]) == 0)
            return 1;
    }
    return 0;
}

const struct hlo_shape *hc_operand_shape(const struct analysis *an, const struct hlo_node *nd,
                                         uint32_t i)
{
    return &an->g->nodes[nd->operands[i]].shape;
}

/* Output, operand bytes and total bytes set at once. */
void hc_transfers(struct analysis *an, int64_t output, const int64_t *ops, uint32_t nops)
{
    int64_t total = output;
    uint32_t i;

    hc_kv_set(an, &an->cur, KV_OUTPUT_BYTES, 0, 0, (float)output);
    for (i = 0; i < nops; i++) {
        hc_kv_set(an, &an->cur, KV_OPERAND_BYTES, (int32_t)i, 0, (float)ops[i]);
        total += ops[i];
    }
    an->cur.bytes = (float)total;
}

int64_t hc_dim_of(const struct hlo_shape *s, int64_t d)
{
    return d >= 0 && (uint64_t)d < s->ndims ? s->dims[d] : 0;
}
