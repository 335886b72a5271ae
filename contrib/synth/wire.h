/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Protobuf wire format, written by hand: a growable byte buffer with a sticky
 * error, and encoders for varint, fixed64 and length-delimited fields. The
 * XStat helpers encode one stat message in place, without a nested buffer.
 */
#ifndef SYNTH_WIRE_H
#define SYNTH_WIRE_H

#include <stddef.h>
#include <stdint.h>

/*
 * Invariant: data[0..len) holds the bytes written so far. After a failed
 * allocation `failed` is set, later appends do nothing, and the owner checks
 * once with wb_ok(). A zeroed struct (WBUF_INIT) is an empty buffer.
 */
struct wbuf {
    uint8_t *data; /* bytes, NULL until the first append */
    size_t len;    /* bytes used */
    size_t cap;    /* bytes allocated */
    int failed;    /* set when an allocation failed */
};

#define WBUF_INIT                                                                                  \
    {                                                                                              \
        NULL, 0, 0, 0                                                                              \
    }

enum pb_wire { PB_VARINT = 0, PB_I64 = 1, PB_LEN = 2 };

/* XStat value field numbers (tensorflow.profiler.XStat). */
enum pb_stat_value {
    PB_STAT_DOUBLE = 2,
    PB_STAT_UINT64 = 3,
    PB_STAT_INT64 = 4,
    PB_STAT_STR = 5,
    PB_STAT_BYTES = 6,
    PB_STAT_REF = 7
};

/* Frees the bytes and leaves an empty buffer; accepts an empty buffer. */
void wb_release(struct wbuf *b);

/* Forgets the contents but keeps the allocation. */
void wb_reset(struct wbuf *b);

/* Returns 0, or -ENOMEM if any append since the last reset failed. */
int wb_ok(const struct wbuf *b);

/* Appends n raw bytes. */
void wb_put(struct wbuf *b, const void *p, size_t n);

/* Appends v as a base-128 varint. */
void wb_varint(struct wbuf *b, uint64_t v);

/* Number of bytes wb_varint() writes for v (1 to 10). */
size_t pb_varint_size(uint64_t v);

/* Appends the key of field `field` with wire type `wire`. */
void pb_key(struct wbuf *b, unsigned field, enum pb_wire wire);

/* Varint field; written even when v is 0 (callers skip proto3 defaults). */
void pb_uint(struct wbuf *b, unsigned field, uint64_t v);

/* int64 field: negative values become 10-byte two's complement varints. */
void pb_int(struct wbuf *b, unsigned field, int64_t v);

/* double field (fixed 64-bit, little endian). */
void pb_double(struct wbuf *b, unsigned field, double v);

/* Length-delimited field holding n bytes at p. */
void pb_bytes(struct wbuf *b, unsigned field, const void *p, size_t n);

/* Length-delimited field holding the NUL-terminated string s. */
void pb_str(struct wbuf *b, unsigned field, const char *s);

/* Embedded message field whose encoded body is `child`. */
void pb_msg(struct wbuf *b, unsigned field, const struct wbuf *child);

/* One entry of an XPlane metadata map (event_metadata 4, stat_metadata 5):
 * key id, value the encoded metadata message. */
void pb_map_entry(struct wbuf *b, unsigned field, int64_t id, const struct wbuf *value);

/* The same for a metadata with only its id and name. */
void pb_named_entry(struct wbuf *b, unsigned field, int64_t id, const char *name);

/* Packed repeated int64 field; nothing is written when n is 0. */
void pb_packed(struct wbuf *b, unsigned field, const int64_t *v, size_t n);

/*
 * XStat as field `field` of the enclosing message: metadata_id = meta and a
 * varint value in field `vfield` (PB_STAT_UINT64, PB_STAT_INT64, PB_STAT_REF).
 */
void pb_stat_varint(struct wbuf *b, unsigned field, int64_t meta, enum pb_stat_value vfield,
                    uint64_t v);

/* XStat with a double_value. */
void pb_stat_double(struct wbuf *b, unsigned field, int64_t meta, double v);

/* XStat with str_value or bytes_value (vfield PB_STAT_STR or PB_STAT_BYTES). */
void pb_stat_bytes(struct wbuf *b, unsigned field, int64_t meta, enum pb_stat_value vfield,
                   const void *p, size_t n);

#endif
