/*
 * intern.c - the interned-string table of intern.h.
 */
#include "intern.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "hash.h"

int intern_init(struct intern *t)
{
    memset(t, 0, sizeof(*t));
    arena_init(&t->arena);
    t->cap = 256;
    t->text = malloc(t->cap * sizeof(*t->text));
    t->len = malloc(t->cap * sizeof(*t->len));
    t->nslots = 512;
    t->slots = calloc(t->nslots, sizeof(*t->slots));
    if (t->text == NULL || t->len == NULL || t->slots == NULL)
        return -ENOMEM;
    t->text[0] = "";
    t->len[0] = 0;
    t->n = 1;
    return 0;
}

void intern_free(struct intern *t)
{
    if (t == NULL)
        return;
    arena_free(&t->arena);
    free(t->text);
    free(t->len);
    free(t->slots);
    memset(t, 0, sizeof(*t));
}

/* The slot of s[0..n): the one holding its id, or the free one it goes to. */
static uint32_t slot_of(const struct intern *t, const char *s, size_t n)
{
    uint32_t mask = t->nslots - 1, i = fnv32(s, n) & mask, id;

    while ((id = t->slots[i]) != 0) {
        if (t->len[id] == n && memcmp(t->text[id], s, n) == 0)
            break;
        i = (i + 1) & mask;
    }
    return i;
}

uint32_t intern_find(const struct intern *t, const char *s, size_t n)
{
    if (t->nslots == 0)
        return 0;
    return t->slots[slot_of(t, s, n)];
}

/* Twice the slots, every id placed again. */
static int grow_slots(struct intern *t)
{
    uint32_t nslots = t->nslots * 2, id, *slots;

    if (nslots < t->nslots)
        return -ENOMEM;
    slots = calloc(nslots, sizeof(*slots));
    if (slots == NULL)
        return -ENOMEM;
    for (id = 1; id < t->n; id++) {
        uint32_t i = fnv32(t->text[id], t->len[id]) & (nslots - 1);
        while (slots[i] != 0)
            i = (i + 1) & (nslots - 1);
        slots[i] = id;
    }
    free(t->slots);
    t->slots = slots;
    t->nslots = nslots;
    return 0;
}

/* Room for one more id in text and len. */
static int grow_ids(struct intern *t)
{
    uint32_t cap = t->cap * 2;
    const char **text;
    uint32_t *len;

    if (cap < t->cap)
        return -ENOMEM;
    text = realloc(t->text, cap * sizeof(*text));
    if (text == NULL)
        return -ENOMEM;
    t->text = text;
    len = realloc(t->len, cap * sizeof(*len));
    if (len == NULL)
        return -ENOMEM;
    t->len = len;
    t->cap = cap;
    return 0;
}

int intern_add(struct intern *t, const char *s, size_t n, uint32_t *id)
{
    uint32_t i;
    char *copy;

    *id = 0;
    if (n > UINT32_MAX - 1)
        return -EIO;
    if (t->nslots == 0)
        return -ENOMEM;
    i = slot_of(t, s, n);
    if (t->slots[i] != 0) {
        *id = t->slots[i];
        return 0;
    }
    if ((uint64_t)(t->n + 1) * 2 > t->nslots) {
        if (grow_slots(t) != 0)
            return -ENOMEM;
        i = slot_of(t, s, n);
    }
    if (t->n == t->cap && grow_ids(t) != 0)
        return -ENOMEM;
    copy = arena_strndup(&t->arena, n ? s : "", n);
    if (copy == NULL)
        return -ENOMEM;
    t->text[t->n] = copy;
    t->len[t->n] = (uint32_t)n;
    t->slots[i] = t->n;
    *id = t->n++;
    return 0;
}
