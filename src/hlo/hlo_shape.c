/*
 * hlo_shape.c - ShapeProto (with its LayoutProto and tuple elements) into a
 * struct hlo_shape, and the shape helpers of hlo_module.h: element counts
 * and PrimitiveType bit widths.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "hlo_module_int.h"

/* A repeated int64 field only the printer reads, appended to x: bad packed
 * values inside it are dropped. 0, -1 (bad framing) or -ENOMEM. */
static int lenient_i64s(struct wire *w, int type, struct i64vec *x)
{
    uint32_t n = x->n;
    int rc = hlo_read_i64s(w, type, x);

    if (rc != -2)
        return rc;
    x->n = n;
    return 0;
}

/* TileProto: its dimensions into t. 0 or -ENOMEM (bad bytes: no dims). */
static int read_tile(struct arena *a, struct wire w, struct hlo_tile *t)
{
    struct i64vec d = {0};
    int rc = 0, ok = 1;

    while (rc == 0 && !wire_eof(&w)) {
        uint32_t f;
        int ty;
        if (wire_key(&w, &f, &ty) != 0)
            break;
        if (f == 1)
            rc = hlo_read_i64s(&w, ty, &d);
        else if (wire_skip(&w, ty) != 0)
            rc = -1;
    }
    if (rc == 0) {
        t->ndims = d.n;
        t->dims = hlo_vec_keep(a, &d, &ok);
    }
    free(d.v);
    return ok && rc != -ENOMEM ? 0 : -ENOMEM;
}

/* SplitConfigProto into sp. 0 or -ENOMEM (bad bytes: what was read). */
static int read_split(struct arena *a, struct wire w, struct hlo_split *sp)
{
    struct i64vec idx = {0};
    int rc = 0, ok = 1;

    while (rc == 0 && !wire_eof(&w)) {
        uint32_t f;
        int t;
        if (wire_key(&w, &f, &t) != 0)
            break;
        if (f == 1)
            rc = hlo_read_varint(&w, t, &sp->dimension);
        else if (f == 2)
            rc = lenient_i64s(&w, t, &idx);
        else if (wire_skip(&w, t) != 0)
            rc = -1;
    }
    sp->nindices = idx.n;
    sp->indices = hlo_vec_keep(a, &idx, &ok);
    free(idx.v);
    return ok && rc != -ENOMEM ? 0 : -ENOMEM;
}

/* The layout fields only the printer reads (struct hlo_layout_more), read
 * leniently from the LayoutProto bytes w. 0 or -ENOMEM. */
static int read_layout_more(struct arena *a, struct wire w, struct hlo_shape *s)
{
    struct wire scan = w;
    struct hlo_layout_more *m;
    struct hlo_tile *tiles = NULL;
    struct hlo_split *splits = NULL;
    uint32_t ntiles = 0, nsplits = 0, others = 0;
    int rc = 0;

    while (!wire_eof(&scan)) {
        uint32_t f;
        int t;
        if (wire_key(&scan, &f, &t) != 0 || wire_skip(&scan, t) != 0)
            break;
        ntiles += f == 6 && t == WIRE_LEN;
        nsplits += f == 17 && t == WIRE_LEN;
        others += f == 11 || f == 12 || f == 15 || f == 16;
    }
    if (ntiles + nsplits + others == 0)
        return 0;
    m = arena_alloc(a, sizeof(*m));
    tiles = ntiles ? arena_alloc(a, ntiles * sizeof(*tiles)) : NULL;
    splits = nsplits ? arena_alloc(a, nsplits * sizeof(*splits)) : NULL;
    if (m == NULL || (ntiles && tiles == NULL) || (nsplits && splits == NULL))
        return -ENOMEM;
    memset(m, 0, sizeof(*m));
    m->tiles = tiles;
    m->splits = splits;
    while (rc == 0 && !wire_eof(&w)) {
        uint32_t f;
        int t;
        struct wire sub;
        if (wire_key(&w, &f, &t) != 0)
            break;
        if ((f == 6 || f == 17) && t == WIRE_LEN) {
            if (wire_bytes(&w, &sub) != 0)
                break;
            if (f == 6 && m->ntiles < ntiles) {
                memset(&tiles[m->ntiles], 0, sizeof(*tiles));
                rc = read_tile(a, sub, &tiles[m->ntiles++]);
            } else if (f == 17 && m->nsplits < nsplits) {
                memset(&splits[m->nsplits], 0, sizeof(*splits));
                rc = read_split(a, sub, &splits[m->nsplits++]);
            }
        } else if (f == 11 || f == 12 || f == 15 || f == 16) {
            int64_t *dst = f == 11   ? &m->index_type
                           : f == 12 ? &m->pointer_type
                           : f == 15 ? &m->dyn_prefix_bytes
                                     : &m->tail_padding;
            if (hlo_read_varint(&w, t, dst) != 0)
                break;
        } else if (wire_skip(&w, t) != 0) {
            break;
        }
    }
    s->more = m;
    return rc;
}

/* LayoutProto into s. */
static int read_layout(struct arena *a, struct wire w, struct hlo_shape *s)
{
    struct wire all = w;
    struct i64vec m2m = {0};
    int rc = 0, ok = 1;

    s->has_layout = 1;
    while (rc == 0 && !wire_eof(&w)) {
        uint32_t f;
        int t;
        if (wire_key(&w, &f, &t) != 0) {
            rc = -1;
            break;
        }
        if (f == 1)
            rc = hlo_read_i64s(&w, t, &m2m);
        else if (f == 7)
            rc = hlo_read_varint(&w, t, &s->element_bits);
        else if (f == 8)
            rc = hlo_read_varint(&w, t, &s->memory_space);
        else if (wire_skip(&w, t) != 0)
            rc = -1;
    }
    if (rc == 0) {
        s->nminor = m2m.n;
        s->minor_to_major = hlo_vec_keep(a, &m2m, &ok);
        if (!ok)
            rc = -ENOMEM;
    }
    if (rc == 0)
        rc = read_layout_more(a, all, s);
    free(m2m.v);
    return rc;
}

/* The is_dynamic_dimension flags dyn into s->dynamic (ndims entries, only
 * when some dimension is dynamic). 0 or -ENOMEM. */
static int keep_dynamic(struct arena *a, const struct i64vec *dyn, struct hlo_shape *s)
{
    uint8_t *d;
    uint32_t i, any = 0;

    for (i = 0; i < dyn->n && i < s->ndims; i++)
        any |= dyn->v[i] != 0;
    if (!any)
        return 0;
    d = arena_alloc(a, s->ndims);
    if (d == NULL)
        return -ENOMEM;
    for (i = 0; i < s->ndims; i++)
        d[i] = i < dyn->n && dyn->v[i] != 0;
    s->dynamic = d;
    return 0;
}

/* ShapeProto into s (tuple elements allocated in the arena). */
int hlo_read_shape(struct arena *a, struct wire w, struct hlo_shape *s, int depth)
{
    struct wire scan = w;
    struct i64vec dims = {0}, dyn = {0};
    struct hlo_shape *tuple = NULL;
    uint32_t ntuple = 0, k = 0;
    int rc = 0, ok = 1;

    memset(s, 0, sizeof(*s));
    if (depth > 64)
        return -1;
    while (!wire_eof(&scan)) { /* count the tuple elements first */
        uint32_t f;
        int t;
        if (wire_key(&scan, &f, &t) != 0 || wire_skip(&scan, t) != 0)
            return -1;
        if (f == 4 && t == WIRE_LEN)
            ntuple++;
    }
    if (ntuple > 0) {
        tuple = arena_alloc(a, ntuple * sizeof(*tuple));
        if (tuple == NULL)
            return -ENOMEM;
    }
    while (rc == 0 && !wire_eof(&w)) {
        uint32_t f;
        int t;
        int64_t v = 0;
        struct wire sub;
        if (wire_key(&w, &f, &t) != 0) {
            rc = -1;
            break;
        }
        if (f == 2) {
            rc = hlo_read_varint(&w, t, &v);
            s->type = (int32_t)v;
        } else if (f == 3) {
            rc = hlo_read_i64s(&w, t, &dims);
        } else if (f == 6) {
            rc = lenient_i64s(&w, t, &dyn);
        } else if ((f == 4 || f == 5) && t == WIRE_LEN) {
            if (wire_bytes(&w, &sub) != 0)
                rc = -1;
            else if (f == 4)
                rc = hlo_read_shape(a, sub, &tuple[k++], depth + 1);
            else
                rc = read_layout(a, sub, s);
        } else if (wire_skip(&w, t) != 0) {
            rc = -1;
        }
    }
    if (rc == 0) {
        s->ndims = dims.n;
        s->dims = hlo_vec_keep(a, &dims, &ok);
        s->ntuple = ntuple;
        s->tuple = tuple;
        if (!ok)
            rc = -ENOMEM;
        else
            rc = keep_dynamic(a, &dyn, s);
    }
    free(dims.v);
    free(dyn.v);
    return rc;
}

/* Elements of an array shape (1 for scalars, 0 for tuples). */
int64_t hlo_shape_elements(const struct hlo_shape *s)
{
    uint64_t n = 1; /* wraps on hostile dimensions instead of overflowing */
    uint32_t i;

    if (s->type == HLO_TUPLE)
        return 0;
    for (i = 0; i < s->ndims; i++)
        n *= (uint64_t)s->dims[i];
    return (int64_t)n;
}

/* Elements of every array inside a (tuple) shape; tokens and opaques count 0. */
int64_t hlo_shape_elements_recursive(const struct hlo_shape *s)
{
    uint64_t n = 0;
    uint32_t i;

    if (s->type != HLO_TUPLE)
        return s->type == HLO_TOKEN || s->type == HLO_OPAQUE ? 0 : hlo_shape_elements(s);
    for (i = 0; i < s->ntuple; i++)
        n += (uint64_t)hlo_shape_elements_recursive(&s->tuple[i]);
    return (int64_t)n;
}

/* PrimitiveType bit width (primitive_util::BitWidth), 0 when none. */
int hlo_type_bits(int32_t type)
{
    switch (type) {
    case 1:
    case 30:
    case 31:
        return 1;
    case 26:
    case 27:
        return 2;
    case 21:
    case 22:
    case 32:
        return 4;
    case 35:
    case 36:
        return 6;
    case 2:
    case 6:
    case 19:
    case 20:
    case 23:
    case 24:
    case 25:
    case 28:
    case 29:
    case 33:
        return 8;
    case 3:
    case 7:
    case 10:
    case 16:
        return 16;
    case 4:
    case 8:
    case 11:
        return 32;
    case 5:
    case 9:
    case 12:
    case 15:
        return 64;
    case 18:
        return 128;
    default:
        return 0;
    }
}
