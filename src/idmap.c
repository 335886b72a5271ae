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

void idmap_free(struct idmap *m)
{
    free(m->keys);
    free(m->vals);
    m->keys = NULL;
    m->vals = NULL;
    m->mask = 0;
}
