/*
 * hlo_read_util.c - the small field readers every part of the HloModuleProto
 * reader uses (hlo_module_int.h): repeated int64 fields into a growable
 * list, varint fields, and copies into the graph's arena.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "hlo_module_int.h"

/* Append v to x. 0 or -ENOMEM. */
static int vec_push(struct i64vec *x, int64_t v)
{
    if (x->n == x->cap) {
        uint32_t nc = x->cap ? x->cap * 2 : 8;
        int64_t *nv = realloc(x->v, nc * sizeof(*nv));
        if (nv == NULL)
            return -ENOMEM;
        x->v = nv;
        x->cap = nc;
    }
    x->v[x->n++] = v;
    return 0;
}

/* A repeated int64 field, packed (LEN) or not (VARINT), appended to x.
 * Returns 0, -1 (bad framing), -2 (bad packed values) or -ENOMEM. */
int hlo_read_i64s(struct wire *w, int type, struct i64vec *x)
{
    uint64_t v;

    if (type == WIRE_VARINT) {
        if (wire_varint(w, &v) != 0)
            return -1;
        return vec_push(x, (int64_t)v);
    }
    if (type == WIRE_LEN) {
        struct wire s;
        if (wire_bytes(w, &s) != 0)
            return -1;
        while (!wire_eof(&s)) {
            int rc;
            if (wire_varint(&s, &v) != 0)
                return -2;
            rc = vec_push(x, (int64_t)v);
            if (rc != 0)
                return rc;
        }
        return 0;
    }
    return wire_skip(w, type) != 0 ? -1 : 0;
}

/* A copy of x in the arena (NULL for an empty list); *ok cleared on OOM. */
const int64_t *hlo_vec_keep(struct arena *a, const struct i64vec *x, int *ok)
{
    int64_t *c;

    if (x->n == 0)
        return NULL;
    c = arena_alloc(a, x->n * sizeof(*c));
    if (c == NULL) {
        *ok = 0;
        return NULL;
    }
    memcpy(c, x->v, x->n * sizeof(*c));
    return c;
}

/* A varint field into *out; another wire type is skipped. 0 or -1. */
int hlo_read_varint(struct wire *w, int type, int64_t *out)
{
    uint64_t v;

    if (type != WIRE_VARINT)
        return wire_skip(w, type) != 0 ? -1 : 0;
    if (wire_varint(w, &v) != 0)
        return -1;
    *out = (int64_t)v;
    return 0;
}

/* A NUL-terminated copy of the bytes of s in the arena, NULL on OOM. */
const char *hlo_keep_str(struct arena *a, struct wire s)
{
    return arena_strndup(a, (const char *)s.p, (size_t)(s.end - s.p));
}
