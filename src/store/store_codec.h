/*
 * store_codec.h - the bytes of a persisted intermediate (store.h) and back:
 * the per-host summaries (HLO module names, step models, event fractions)
 * that the all-hosts files combine from the cache.
 *
 * Native byte order (little-endian machines). A payload starts with an
 * 8-byte magic naming the intermediate and its layout version, so bytes of
 * another layout are refused, not misread. A string is its u32 length and
 * bytes, 0xffffffff for NULL; an array its u32 count then its entries.
 * Reading checks every length against what remains: a short or garbled
 * payload sets the cursor's sticky bad flag, never reads past the end.
 */
#ifndef XPROFS_STORE_CODEC_H
#define XPROFS_STORE_CODEC_H

#include <stddef.h>
#include <stdint.h>

#include "base/arena.h"
#include "out/out.h"
#include "store.h"

#define SC_NULL_STR 0xffffffffu

void sc_put_u32(struct out *o, uint32_t v);
void sc_put_u64(struct out *o, uint64_t v);
void sc_put_f64(struct out *o, double v);
void sc_put_f32(struct out *o, float v);
void sc_put_str(struct out *o, const char *s); /* NULL kept as NULL */

/* A read cursor over a payload; strings and arrays go to arena. */
struct sc_cur {
    const char *p;       /* next byte */
    size_t left;         /* bytes after it */
    struct arena *arena; /* where strings and arrays go */
    int bad;             /* sticky: ran past the end, a wrong magic, out of memory */
};

void sc_init(struct sc_cur *c, const void *p, size_t n, struct arena *arena);
/* Consume the 8-byte magic; a different one makes c bad. */
void sc_magic(struct sc_cur *c, const char magic[8]);
uint32_t sc_u32(struct sc_cur *c);
uint64_t sc_u64(struct sc_cur *c);
double sc_f64(struct sc_cur *c);
float sc_f32(struct sc_cur *c);
const char *sc_str(struct sc_cur *c); /* in the arena; NULL for NULL or bad */
/* Room for n entries of size bytes in the arena (zeroed), n checked
 * against what remains (each entry takes at least min bytes); NULL when
 * bad. */
void *sc_array(struct sc_cur *c, uint32_t n, size_t size, size_t min);
/* 0 when the whole payload was read and nothing went wrong, else -EIO. */
int sc_done(const struct sc_cur *c);

/* Finish o and keep its bytes as key's entry of st (failures only cost a
 * recomputation later). */
void sc_persist(struct store *st, const char *key, struct out *o);

#endif
