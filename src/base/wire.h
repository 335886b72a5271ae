/*
 * wire.h - bounds-checked reading of the protobuf wire format.
 *
 * A struct wire is a cursor over [p, end). Every read checks the bytes that
 * remain and returns -1 instead of reading past the end, so hostile lengths
 * and endless varints are caught where they occur. The functions are inline:
 * they are the inner loop of the event decoder.
 */
#ifndef XPROFS_WIRE_H
#define XPROFS_WIRE_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

enum wire_type {
    WIRE_VARINT = 0,
    WIRE_I64 = 1,
    WIRE_LEN = 2,
    WIRE_SGROUP = 3,
    WIRE_EGROUP = 4,
    WIRE_I32 = 5,
};

struct wire {
    const uint8_t *p;   /* next byte */
    const uint8_t *end; /* one past the last byte */
};

/* The n bytes at p; an empty view may have p NULL (no pointer arithmetic on
 * it then: NULL + 0 is undefined in C). */
static inline void wire_init(struct wire *w, const void *p, size_t n)
{
    w->p = p;
    w->end = n > 0 ? (const uint8_t *)p + n : w->p;
}

static inline int wire_eof(const struct wire *w)
{
    return w->p >= w->end;
}

/* A varint of at most 10 bytes. Returns 0 or -1 (truncated or too long). */
static inline int wire_varint(struct wire *w, uint64_t *v)
{
    const uint8_t *p = w->p, *stop;
    uint64_t x = 0;
    int shift;

    if (p < w->end && *p < 0x80) {
        *v = *p;
        w->p = p + 1;
        return 0;
    }
    /* One bound for both limits: the end, or ten bytes on. */
    stop = w->end - p > 10 ? p + 10 : w->end;
    for (shift = 0; p < stop; shift += 7) {
        x |= (uint64_t)(*p & 0x7f) << shift;
        if (*p++ < 0x80) {
            *v = x;
            w->p = p;
            return 0;
        }
    }
    return -1;
}

/* A field key. Field 0 and wire types 6 and 7 are invalid. Returns 0 or -1. */
static inline int wire_key(struct wire *w, uint32_t *field, int *type)
{
    uint64_t k;

    if (wire_varint(w, &k) != 0)
        return -1;
    *type = (int)(k & 7);
    if ((k >> 3) == 0 || (k >> 3) > 0x1fffffff || *type > 5)
        return -1;
    *field = (uint32_t)(k >> 3);
    return 0;
}

/* The body of a length-delimited field: sub covers it, w moves past it. */
static inline int wire_bytes(struct wire *w, struct wire *sub)
{
    uint64_t n;

    if (wire_varint(w, &n) != 0 || n > (uint64_t)(w->end - w->p))
        return -1;
    sub->p = w->p;
    sub->end = w->p + n;
    w->p += n;
    return 0;
}

/* A fixed 64-bit field (double) in little-endian order. */
static inline int wire_fixed64(struct wire *w, uint64_t *v)
{
    if (w->end - w->p < 8)
        return -1;
    memcpy(v, w->p, 8); /* little-endian hosts only; checked at build time */
    w->p += 8;
    return 0;
}

/* Skip one field's value of the given wire type. Groups are refused. */
static inline int wire_skip(struct wire *w, int type)
{
    uint64_t v;
    struct wire sub;

    switch (type) {
    case WIRE_VARINT:
        return wire_varint(w, &v);
    case WIRE_I64:
        if (w->end - w->p < 8)
            return -1;
        w->p += 8;
        return 0;
    case WIRE_LEN:
        return wire_bytes(w, &sub);
    case WIRE_I32:
        if (w->end - w->p < 4)
            return -1;
        w->p += 4;
        return 0;
    default:
        return -1;
    }
}

#if __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "xprofs reads protobuf fixed64 fields with memcpy: little-endian hosts only"
#endif

#endif
