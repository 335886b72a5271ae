/*
 * idmap.c - int64 -> uint32 open-addressing hash map; see idmap.h.
 */
#include "idmap.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

int idmap_init(struct idmap *m, uint32_t n)
{
    uint32_t slots = 16;

    while (slots < 2u * n + 1) {
        if (slots >= (1u << 30))
            return -ENOMEM;
        slots *= 2;
    }
    m->keys = malloc(slots * sizeof(*m->keys));
    m->vals = malloc(slots * sizeof(*m->vals));
    if (m->keys == NULL || m->vals == NULL) {
        free(m->keys);
        free(m->vals);
        m->keys = NULL;
        m->vals = NULL;
        return -ENOMEM;
    }
    memset(m->vals, 0xff, slots * sizeof(*m->vals));
    m->mask = slots - 1;
    return 0;
}

void idmap_put(struct idmap *m, int64_t key, uint32_t val)
{
    uint64_t h = (uint64_t)key * 0x9E3779B97F4A7C15ull;
    uint32_t i = (uint32_t)(h >> 32) & m->mask;

    while (m->vals[i] != IDMAP_NONE && m->keys[i] != key)
        i = (i + 1) & m->mask;
    m->keys[i] = key;
    m->vals[i] = val;
}

int idmap_set(struct idmap *m, int64_t key, uint32_t val)
{
    uint32_t slots = m->vals != NULL ? m->mask + 1 : 0, i;

    if (2 * (m->n + 1) > slots) {
        struct idmap big;
        memset(&big, 0, sizeof(big));
        if (idmap_init(&big, slots ? slots / 2 : 8) != 0)
            return -ENOMEM;
        for (i = 0; i < slots; i++) {
            if (m->vals[i] != IDMAP_NONE)
                idmap_put(&big, m->keys[i], m->vals[i]);
        }
        big.n = m->n;
        idmap_free(m);
        *m = big;
    }
    if (idmap_get(m, key) == IDMAP_NONE)
        m->n++;
    idmap_put(m, key, val);
    return 0;
}

void idmap_free(struct idmap *m)
{
    free(m->keys);
    free(m->vals);
    m->keys = NULL;
    m->vals = NULL;
    m->mask = 0;
    m->n = 0;
}
