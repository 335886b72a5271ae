/*
 * ctrace_strtab.c - the Chrome-trace reader's interned strings (names,
 * categories, string pids and tids): open addressing over ids, the text in
 * an arena; and the string accessors of ctrace.h.
 */
#include "ctrace_int.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static uint32_t str_hash(const char *s, size_t n)
{
    uint32_t h = 2166136261u;
    size_t i;

    for (i = 0; i < n; i++)
        h = (h ^ (unsigned char)s[i]) * 16777619u;
    return h;
}

int ctr_strtab_init(struct ctrace_strtab *t)
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

void ctr_strtab_free(struct ctrace_strtab *t)
{
    if (t == NULL)
        return;
    arena_free(&t->arena);
    free(t->text);
    free(t->len);
    free(t->slots);
}

uint32_t ctr_strtab_lookup(const struct ctrace_strtab *t, const char *s, size_t n)
{
    uint32_t mask = t->nslots - 1, i = str_hash(s, n) & mask;

    while (t->slots[i] != 0) {
        uint32_t id = t->slots[i];
        if (t->len[id] == n && memcmp(t->text[id], s, n) == 0)
            return id;
        i = (i + 1) & mask;
    }
    return 0;
}

static int strtab_grow(struct ctrace_strtab *t)
{
    uint32_t nslots = t->nslots * 2, id, *slots;

    if (nslots < t->nslots)
        return -ENOMEM;
    slots = calloc(nslots, sizeof(*slots));
    if (slots == NULL)
        return -ENOMEM;
    for (id = 1; id < t->n; id++) {
        uint32_t i = str_hash(t->text[id], t->len[id]) & (nslots - 1);
        while (slots[i] != 0)
            i = (i + 1) & (nslots - 1);
        slots[i] = id;
    }
    free(t->slots);
    t->slots = slots;
    t->nslots = nslots;
    return 0;
}

/* Intern s[0..n); *id = its id (0 for ""). */
int ctr_strtab_add(struct ctrace_strtab *t, const char *s, size_t n, uint32_t *id)
{
    uint32_t mask, i;
    char *copy;

    if (n == 0) {
        *id = 0;
        return 0;
    }
    if (n > UINT32_MAX)
        return -EIO;
    *id = ctr_strtab_lookup(t, s, n);
    if (*id != 0)
        return 0;
    if ((uint64_t)(t->n + 1) * 2 > t->nslots && strtab_grow(t) != 0)
        return -ENOMEM;
    if (t->n == t->cap) {
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
    }
    copy = arena_strndup(&t->arena, s, n);
    if (copy == NULL)
        return -ENOMEM;
    t->text[t->n] = copy;
    t->len[t->n] = (uint32_t)n;
    mask = t->nslots - 1;
    i = str_hash(s, n) & mask;
    while (t->slots[i] != 0)
        i = (i + 1) & mask;
    t->slots[i] = t->n;
    *id = t->n++;
    return 0;
}

/* ---- accessors ----------------------------------------------------------- */

const char *ctrace_str(const struct ctrace *ct, uint32_t id)
{
    if (ct == NULL || id >= ct->strings->n)
        return "";
    return ct->strings->text[id];
}

uint32_t ctrace_str_find(const struct ctrace *ct, const char *s)
{
    return ctr_strtab_lookup(ct->strings, s, strlen(s));
}

uint32_t ctrace_str_count(const struct ctrace *ct)
{
    return ct->strings->n - 1;
}
