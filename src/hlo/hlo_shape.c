/*
 * hlo_shape.c - ShapeProto (with its LayoutProto and tuple elements) into a
 * struct hlo_shape, and the shape helpers of hlo_module.h: element counts
 * and PrimitiveType bit widths.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "hlo_module_int.h"

/* LayoutProto into s. */
static int read_layout(struct arena *a, struct wire w, struct hlo_shape *s)
{
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
    free(m2m.v);
    return rc;
}

/* ShapeProto into s (tuple elements allocated in the arena). */
int hlo_read_shape(struct arena *a, struct wire w, struct hlo_shape *s, int depth)
{
    struct wire scan = w;
    struct i64vec dims = {0};
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
    }
    free(dims.v);
    return rc;
}

/* Elements of an array shape (1 for scalars, 0 for tuples). */
int64_t hlo_shape_elements(const struct hlo_shape *s)
{
    int64_t n = 1;
    uint32_t i;

    if (s->type == HLO_TUPLE)
        return 0;
    for (i = 0; i < s->ndims; i++)
        n *= s->dims[i];
    return n;
}

/* Elements of every array inside a (tuple) shape; tokens and opaques count 0. */
int64_t hlo_shape_elements_recursive(const struct hlo_shape *s)
{
    int64_t n = 0;
    uint32_t i;

    if (s->type != HLO_TUPLE)
        return s->type == HLO_TOKEN || s->type == HLO_OPAQUE ? 0 : hlo_shape_elements(s);
    for (i = 0; i < s->ntuple; i++)
        n += hlo_shape_elements_recursive(&s->tuple[i]);
    return n;
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
