/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Interned metadata names (FNV-1a hash, linear probing) and their encoding
 * as XPlane metadata maps: entry {key = id, value = {id, name}}.
 */
#include "strtab.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* FNV-1a of a NUL-terminated string. */
static uint64_t hash_str(const char *s)
{
    uint64_t h = 0xcbf29ce484222325ULL;

    while (*s != '\0') {
        h ^= (unsigned char)*s++;
        h *= 0x100000001b3ULL;
    }
    return h;
}

/* Rebuilds the hash with twice as many slots; 0 or -1. */
static int rehash(struct strtab *t)
{
    size_t n = t->n_slots ? t->n_slots * 2 : 64;
    uint32_t *slots = calloc(n, sizeof(*slots));
    size_t i;

    if (slots == NULL)
        return -1;
    for (i = 0; i < t->n_names; i++) {
        size_t j = hash_str(t->names[i]) & (n - 1);
        while (slots[j] != 0)
            j = (j + 1) & (n - 1);
        slots[j] = (uint32_t)(i + 1);
    }
    free(t->slots);
    t->slots = slots;
    t->n_slots = n;
    return 0;
}

/* Appends name (already copied) to names; 0 or -1. */
static int push_name(struct strtab *t, const char *copy)
{
    if (t->n_names == t->cap_names) {
        size_t cap = t->cap_names ? t->cap_names * 2 : 64;
        const char **names = realloc(t->names, cap * sizeof(*names));
        if (names == NULL)
            return -1;
        t->names = names;
        t->cap_names = cap;
    }
    t->names[t->n_names++] = copy;
    return 0;
}

int64_t strtab_id(struct strtab *t, const char *name)
{
    size_t j;
    char *copy;

    if (t->failed)
        return 0;
    if (2 * (t->n_names + 1) >= t->n_slots && rehash(t) != 0)
        goto oom;
    j = hash_str(name) & (t->n_slots - 1);
    while (t->slots[j] != 0) {
        if (strcmp(t->names[t->slots[j] - 1], name) == 0)
            return t->slots[j];
        j = (j + 1) & (t->n_slots - 1);
    }
    copy = pool_printf(&t->strings, "%s", name);
    if (copy == NULL || push_name(t, copy) != 0)
        goto oom;
    t->slots[j] = (uint32_t)t->n_names;
    return (int64_t)t->n_names;
oom:
    t->failed = 1;
    return 0;
}

int strtab_ok(const struct strtab *t)
{
    return t->failed ? -ENOMEM : 0;
}

const char *strtab_name(const struct strtab *t, int64_t id)
{
    if (id < 1 || (size_t)id > t->n_names)
        return "";
    return t->names[id - 1];
}

/* Writes one map entry {1: id, 2: {1: id, 2: name}} as field `field`. */
static void write_entry(struct wbuf *out, unsigned field, int64_t id, const char *name)
{
    size_t n = strlen(name);
    size_t inner = 1 + pb_varint_size((uint64_t)id) + 1 + pb_varint_size(n) + n;
    size_t entry = 1 + pb_varint_size((uint64_t)id) + 1 + pb_varint_size(inner) + inner;

    pb_key(out, field, PB_LEN);
    wb_varint(out, entry);
    pb_int(out, 1, id);
    pb_key(out, 2, PB_LEN);
    wb_varint(out, inner);
    pb_int(out, 1, id);
    pb_bytes(out, 2, name, n);
}

void strtab_write_stat_metadata(const struct strtab *t, struct wbuf *out)
{
    size_t i;

    for (i = 0; i < t->n_names; i++)
        write_entry(out, 5, (int64_t)i + 1, t->names[i]);
}

void strtab_write_event_metadata(const struct strtab *t, struct wbuf *out)
{
    size_t i;

    for (i = 0; i < t->n_names; i++)
        write_entry(out, 4, (int64_t)i + 1, t->names[i]);
}

void strtab_release(struct strtab *t)
{
    pool_release(&t->strings);
    free(t->names);
    free(t->slots);
    memset(t, 0, sizeof(*t));
}
