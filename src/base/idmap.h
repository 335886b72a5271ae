/*
 * idmap.h - a hash map from int64 ids to uint32 indexes.
 *
 * XPlane metadata ids are arbitrary and may be huge or sparse, so tables are
 * dense arrays and this map turns an id into the array index. Open addressing
 * with linear probing. A map is either sized once for a known number of keys
 * (idmap_init, then idmap_put) or grows as keys come (a zeroed struct, then
 * idmap_set); not both.
 */
#ifndef XPROFS_IDMAP_H
#define XPROFS_IDMAP_H

#include <stdint.h>

#define IDMAP_NONE UINT32_MAX

struct idmap {
    int64_t *keys;  /* key of each slot */
    uint32_t *vals; /* value of each slot, IDMAP_NONE when the slot is empty */
    uint32_t mask;  /* slots - 1; slots is a power of two */
    uint32_t n;     /* keys held (counted by idmap_set only) */
};

/* Size the map for up to n keys. Returns 0 or -ENOMEM. */
int idmap_init(struct idmap *m, uint32_t n);

/* Insert or overwrite key -> val. The map must have been sized for it. */
void idmap_put(struct idmap *m, int64_t key, uint32_t val);

/* Insert or overwrite key -> val (val != IDMAP_NONE) in a growing map,
 * doubling it when half full. Returns 0 or -ENOMEM (the map is then
 * unchanged). */
int idmap_set(struct idmap *m, int64_t key, uint32_t val);

/* The value of key, or IDMAP_NONE. */
static inline uint32_t idmap_get(const struct idmap *m, int64_t key)
{
    uint64_t h = (uint64_t)key * 0x9E3779B97F4A7C15ull;
    uint32_t i = (uint32_t)(h >> 32) & m->mask;

    if (m->vals == 0)
        return IDMAP_NONE;
    for (;;) {
        if (m->vals[i] == IDMAP_NONE)
            return IDMAP_NONE;
        if (m->keys[i] == key)
            return m->vals[i];
        i = (i + 1) & m->mask;
    }
}

/* Release the map's memory. */
void idmap_free(struct idmap *m);

#endif
