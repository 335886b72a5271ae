/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Protobuf wire encoders over a growable buffer (see wire.h). Appends never
 * return a status: the first failed allocation sets a sticky flag that the
 * owner reads once with wb_ok().
 */
#include "wire.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* Makes room for `extra` more bytes; returns 0, or -1 after setting failed. */
static int grow(struct wbuf *b, size_t extra)
{
    size_t need, cap;
    uint8_t *p;

    if (b->failed)
        return -1;
    if (b->cap - b->len >= extra)
        return 0;
    if (extra > SIZE_MAX / 2 - b->len) {
        b->failed = 1;
        return -1;
    }
    need = b->len + extra;
    cap = b->cap ? b->cap : 256;
    while (cap < need)
        cap *= 2;
    p = realloc(b->data, cap);
    if (p == NULL) {
        b->failed = 1;
        return -1;
    }
    b->data = p;
    b->cap = cap;
    return 0;
}

void wb_release(struct wbuf *b)
{
    free(b->data);
    b->data = NULL;
    b->len = 0;
    b->cap = 0;
    b->failed = 0;
}

void wb_reset(struct wbuf *b)
{
    b->len = 0;
    b->failed = 0;
}

int wb_ok(const struct wbuf *b)
{
    return b->failed ? -ENOMEM : 0;
}

void wb_put(struct wbuf *b, const void *p, size_t n)
{
    if (n == 0 || grow(b, n) != 0)
        return;
    memcpy(b->data + b->len, p, n);
    b->len += n;
}

void wb_varint(struct wbuf *b, uint64_t v)
{
    uint8_t *p;

    if (b->cap - b->len < 10 && grow(b, 10) != 0)
        return;
    p = b->data + b->len;
    while (v >= 0x80) {
        *p++ = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    *p++ = (uint8_t)v;
    b->len = (size_t)(p - b->data);
}

size_t pb_varint_size(uint64_t v)
{
    size_t n = 1;

    while (v >= 0x80) {
        v >>= 7;
        n++;
    }
    return n;
}

void pb_key(struct wbuf *b, unsigned field, enum pb_wire wire)
{
    wb_varint(b, ((uint64_t)field << 3) | (uint64_t)wire);
}

void pb_uint(struct wbuf *b, unsigned field, uint64_t v)
{
    pb_key(b, field, PB_VARINT);
    wb_varint(b, v);
}

void pb_int(struct wbuf *b, unsigned field, int64_t v)
{
    pb_uint(b, field, (uint64_t)v);
}

void pb_double(struct wbuf *b, unsigned field, double v)
{
    uint8_t le[8];
    uint64_t bits;
    int i;

    memcpy(&bits, &v, sizeof(bits));
    for (i = 0; i < 8; i++)
        le[i] = (uint8_t)(bits >> (8 * i));
    pb_key(b, field, PB_I64);
    wb_put(b, le, sizeof(le));
}

void pb_bytes(struct wbuf *b, unsigned field, const void *p, size_t n)
{
    pb_key(b, field, PB_LEN);
    wb_varint(b, n);
    wb_put(b, p, n);
}

void pb_str(struct wbuf *b, unsigned field, const char *s)
{
    pb_bytes(b, field, s, strlen(s));
}

void pb_msg(struct wbuf *b, unsigned field, const struct wbuf *child)
{
    if (child->failed) {
        b->failed = 1;
        return;
    }
    pb_bytes(b, field, child->data, child->len);
}

void pb_map_entry(struct wbuf *b, unsigned field, int64_t id, const struct wbuf *value)
{
    struct wbuf entry = WBUF_INIT;

    pb_int(&entry, 1, id);
    pb_msg(&entry, 2, value);
    pb_msg(b, field, &entry);
    wb_release(&entry);
}

void pb_named_entry(struct wbuf *b, unsigned field, int64_t id, const char *name)
{
    struct wbuf v = WBUF_INIT;

    pb_int(&v, 1, id);
    pb_str(&v, 2, name);
    pb_map_entry(b, field, id, &v);
    wb_release(&v);
}

void pb_packed(struct wbuf *b, unsigned field, const int64_t *v, size_t n)
{
    size_t i, len = 0;

    if (n == 0)
        return;
    for (i = 0; i < n; i++)
        len += pb_varint_size((uint64_t)v[i]);
    pb_key(b, field, PB_LEN);
    wb_varint(b, len);
    for (i = 0; i < n; i++)
        wb_varint(b, (uint64_t)v[i]);
}

void pb_stat_varint(struct wbuf *b, unsigned field, int64_t meta, enum pb_stat_value vfield,
                    uint64_t v)
{
    size_t len = 1 + pb_varint_size((uint64_t)meta) + 1 + pb_varint_size(v);

    pb_key(b, field, PB_LEN);
    wb_varint(b, len);
    pb_uint(b, 1, (uint64_t)meta);
    pb_uint(b, vfield, v);
}

void pb_stat_double(struct wbuf *b, unsigned field, int64_t meta, double v)
{
    size_t len = 1 + pb_varint_size((uint64_t)meta) + 1 + 8;

    pb_key(b, field, PB_LEN);
    wb_varint(b, len);
    pb_uint(b, 1, (uint64_t)meta);
    pb_double(b, PB_STAT_DOUBLE, v);
}

void pb_stat_bytes(struct wbuf *b, unsigned field, int64_t meta, enum pb_stat_value vfield,
                   const void *p, size_t n)
{
    size_t len = 1 + pb_varint_size((uint64_t)meta) + 1 + pb_varint_size(n) + n;

    pb_key(b, field, PB_LEN);
    wb_varint(b, len);
    pb_uint(b, 1, (uint64_t)meta);
    pb_bytes(b, vfield, p, n);
}
