/*
 * xstat_usual.h - the usual shape of an XStat body, read inline: the stat
 * readers (xspace_stat.c) try it before their general parser, and the
 * decoder (xspace_decode.c) reads group ids with it as it passes stats.
 */
#ifndef XPROFS_XSTAT_USUAL_H
#define XPROFS_XSTAT_USUAL_H

#include <string.h>

#include "base/wire.h"
#include "xspace.h"

/* XStat field numbers. */
enum {
    F_STAT_META = 1,
    F_STAT_DOUBLE = 2,
    F_STAT_UINT = 3,
    F_STAT_INT = 4,
    F_STAT_STR = 5,
    F_STAT_BYTES = 6,
    F_STAT_REF = 7,
    F_STAT_COMPRESSED = 8,
};

/* The usual shape of an XStat body: metadata_id, then one value field, and
 * nothing else. Returns 1 with *st filled when body has that shape, else 0
 * (then the general parser reads it). Always inlined, as is the next one:
 * they are the inner loop of every stat walk, which GCC left as calls. */
static inline __attribute__((always_inline)) int xp_stat_parse_usual(const struct wire *body,
                                                                     struct xp_stat *st)
{
    struct wire w = *body;
    uint64_t id, v;
    uint8_t key;

    if (w.p >= w.end || w.p[0] != 0x08)
        return 0;
    w.p++;
    if (wire_varint(&w, &id) != 0)
        return 0;
    st->meta_id = (int64_t)id;
    st->kind = XP_STAT_NONE;
    st->v.u = 0;
    st->str = NULL;
    st->len = 0;
    if (w.p == w.end)
        return 1;
    key = *w.p++;
    switch (key) {
    case (F_STAT_UINT << 3) | WIRE_VARINT:
    case (F_STAT_INT << 3) | WIRE_VARINT:
    case (F_STAT_REF << 3) | WIRE_VARINT:
        if (wire_varint(&w, &v) != 0 || w.p != w.end)
            return 0;
        st->kind = key == ((F_STAT_UINT << 3) | WIRE_VARINT)  ? XP_STAT_UINT
                   : key == ((F_STAT_INT << 3) | WIRE_VARINT) ? XP_STAT_INT
                                                              : XP_STAT_REF;
        st->v.u = v;
        return 1;
    case (F_STAT_DOUBLE << 3) | WIRE_I64:
        if (wire_fixed64(&w, &v) != 0 || w.p != w.end)
            return 0;
        st->kind = XP_STAT_DOUBLE;
        memcpy(&st->v.d, &v, sizeof(v));
        return 1;
    case (F_STAT_STR << 3) | WIRE_LEN:
    case (F_STAT_BYTES << 3) | WIRE_LEN:
    case (F_STAT_COMPRESSED << 3) | WIRE_LEN: {
        struct wire sub;
        if (wire_bytes(&w, &sub) != 0 || w.p != w.end)
            return 0;
        st->kind = key == ((F_STAT_STR << 3) | WIRE_LEN) ? XP_STAT_STR : XP_STAT_BYTES;
        st->str = (const char *)sub.p;
        st->len = (size_t)(sub.end - sub.p);
        return 1;
    }
    default:
        return 0;
    }
}

/* The next stat (field 4) of an event's body at w: *sub covers its bytes
 * and w moves past it; other fields are skipped. The usual key and a
 * one-byte length, and one-byte keys of varint fields, are read without
 * the general parser. Returns 1, 0 at
 * the end, or -1 on corrupt bytes. */
static inline __attribute__((always_inline)) int xp_next_stat_body(struct wire *w, struct wire *sub)
{
    while (w->p < w->end) {
        uint32_t field;
        int type;

        if (w->end - w->p >= 2 && w->p[0] == 0x22 && w->p[1] < 0x80) {
            if (w->p[1] > w->end - w->p - 2)
                return -1;
            sub->p = w->p + 2;
            sub->end = sub->p + w->p[1];
            w->p = sub->end;
            return 1;
        }
        if (w->p[0] < 0x80 && (w->p[0] & 7) == WIRE_VARINT && w->p[0] >= 0x08) {
            /* a one-byte key of a varint field (metadata id, offset ...) */
            uint64_t v;
            w->p++;
            if (wire_varint(w, &v) != 0)
                return -1;
            continue;
        }
        if (wire_key(w, &field, &type) != 0)
            return -1;
        if (field == 4 && type == WIRE_LEN)
            return wire_bytes(w, sub) == 0 ? 1 : -1;
        if (wire_skip(w, type) != 0)
            return -1;
    }
    return 0;
}

#endif
